// The API reference page: Redoc's standalone bundle (from the redoc package, served by this
// server, no CDN) rendering /openapi.json.
import type { ServerRoute } from '@hapi/hapi';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';

const require = createRequire(import.meta.url);
const BUNDLE_PATH = require.resolve('redoc/bundles/redoc.standalone.js');

const esc = (s: unknown) => String(s ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

let redoc: Buffer | undefined;
let redocHash: string | undefined;

export function docsRoutes(doc: { info: { title: string; version: string } }): ServerRoute[] {
  const bundle = (redoc ??= readFileSync(BUNDLE_PATH));
  // The asset URL carries its hash, so it can be cached for good and a new release is fetched anew.
  const hash = (redocHash ??= createHash('sha256').update(bundle).digest('hex').slice(0, 12));
  const asset = `/docs/assets/redoc.${hash}.js`;
  const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(doc.info.title)} ${esc(doc.info.version)}: reference</title>
<style>body{margin:0}</style></head>
<body><div id="redoc"></div>
<noscript>The reference needs JavaScript; the machine-readable document is at <a href="/openapi.json">/openapi.json</a>.</noscript>
<script src="${asset}"></script>
<script>Redoc.init('/openapi.json', { hideDownloadButton: false, expandResponses: '200,201,202', jsonSampleExpandLevel: 3 }, document.getElementById('redoc'));</script>
</body></html>`;
  return [
    { method: 'GET', path: '/docs', options: { handler: (_r, h) => h.response(page).type('text/html; charset=utf-8') } },
    {
      method: 'GET', path: `/docs/assets/redoc.${hash}.js`,
      options: {
        handler: (_r, h) => h.response(bundle).type('application/javascript; charset=utf-8')
          .header('Cache-Control', 'public, max-age=31536000, immutable'),
      },
    },
  ];
}
