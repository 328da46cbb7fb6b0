// A self-contained API reference page rendered from the OpenAPI document (no external assets).
const esc = (s: unknown) => String(s ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function renderDocsPage(doc: any): string {
  const sections: string[] = [];
  for (const tag of doc.tags as { name: string }[]) {
    const ops: string[] = [];
    for (const [path, methods] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(methods)) {
        if (!(op.tags ?? []).includes(tag.name)) continue;
        const params = (op.parameters ?? []).map((p: any) =>
          `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.in)}</td><td>${p.required ? 'yes' : ''}</td><td>${esc(p.description)}</td></tr>`).join('');
        const responses = Object.entries<any>(op.responses).map(([s, r]) => `<li><b>${esc(s)}</b> ${esc(r.description)}</li>`).join('');
        ops.push(`<section id="${esc(op.operationId)}"><h3><span class="m">${esc(method.toUpperCase())}</span> <code>${esc(path)}</code></h3>
<p><b>${esc(op.operationId)}</b>: ${esc(op.summary)} ${esc(op.description ?? '')}</p>
${params ? `<table><tr><th>Parameter</th><th>In</th><th>Required</th><th>Description</th></tr>${params}</table>` : ''}
${op.requestBody ? `<details><summary>Request body</summary><pre>${esc(JSON.stringify(op.requestBody.content, null, 2))}</pre></details>` : ''}
<ul>${responses}</ul></section>`);
      }
    }
    sections.push(`<h2>${esc(tag.name)}</h2>${ops.join('\n')}`);
  }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(doc.info.title)} reference</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}code,pre{background:#f4f4f4;padding:0 .2em}
pre{padding:.5em;overflow:auto}table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.2em .5em;text-align:left}
.m{background:#224;color:#fff;padding:0 .4em;border-radius:3px;font-size:80%}</style></head><body>
<h1>${esc(doc.info.title)} ${esc(doc.info.version)}</h1><p>${esc(doc.info.description)}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a>. Errors are <code>application/problem+json</code> with a <code>code</code>; token errors use the OAuth format.</p>
${sections.join('\n')}</body></html>`;
}
