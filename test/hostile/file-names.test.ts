// Sink: the Content-Disposition of a download. A file name the API accepts (any text
// without control characters) is downloaded under a name with no path, no control or bidi
// character, no quote and no parameter of its own, in both forms (RFC 6266 filename, RFC 8187
// filename*); the file keeps its name as given everywhere else.
import t from 'tap';
import { createHash, randomUUID } from 'node:crypto';
import { contentDisposition, downloadName } from '../../src/http/content-disposition.ts';
import { startApp } from '../helpers/app.ts';
import { startWorker } from '../../src/worker/index.ts';

/** What a browser would save: filename* decoded (RFC 8187), else the quoted filename. */
function saved(header: string): { quoted: string; exact: string } {
  const quoted = /filename="([^"]*)"/.exec(header)![1]!;
  const exact = decodeURIComponent(/filename\*=UTF-8''([^;\s]*)/.exec(header)![1]!);
  return { quoted, exact };
}

const CASES: [string, string][] = [
  ['..\\..\\report.png', 'report.png'],
  ['../../etc/passwd', 'passwd'],
  ['C:\\Windows\\System32\\evil.dll', 'evil.dll'],
  ['.htaccess', 'htaccess'],
  ['report.txt. . ', 'report.txt'],
  ['a"; filename="evil.exe', 'a"; filename="evil.exe'],
  ['gnp.\u202eexe', 'gnp.exe'],
  ['na\u0085me.txt', 'name.txt'],
  ['..', 'download'],
  ['résumé 2026 (final)*.pdf', 'résumé 2026 (final)*.pdf'],
];

t.test('the rule', async (t) => {
  for (const [given, name] of CASES) {
    t.equal(downloadName(given), name, JSON.stringify(given));
    const header = contentDisposition(given);
    t.notMatch(header, /[\u0000-\u001f\u007f-\uffff]/, 'the header is printable ASCII');
    const { quoted, exact } = saved(header);
    t.equal(exact, name, 'filename* is the cleaned name exactly');
    t.notMatch(quoted, /["\\/;%]/, 'the quoted fallback holds no quote, separator or parameter');
    t.same(header.split(';').map((x) => x.trim().split('=')[0]), ['attachment', 'filename', 'filename*'], 'exactly the two parameters');
  }
});

t.test('a download of a file named with a path', async (t) => {
  const a = await startApp(t, { LOG_LEVEL: 'error' });
  const p = await a.principal('member,manager');
  const worker = await startWorker(a.config, { pollInterval: 50 });
  t.teardown(() => worker.stop());
  const project = (await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: { 'idempotency-key': randomUUID() },
    payload: { code: 'F', name: 'Files' } })).json.id;
  const bytes = Buffer.from('hostile names\n');
  const name = '..\\..\\report.txt';
  const u = (await a.request({ method: 'POST', url: '/v1/files/uploads', token: p.token, headers: { 'idempotency-key': randomUUID() },
    payload: { name, content_type: 'text/plain', size_bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'),
      linked_resource: { type: 'project', id: project } } })).json;
  await a.request({ method: 'PUT', url: new URL(u.upload_url).pathname, payload: bytes, headers: { 'content-type': 'text/plain' } });
  const file = (await a.request({ method: 'POST', url: `/v1/files/uploads/${u.id}/complete`, token: p.token, headers: { 'idempotency-key': randomUUID() } })).json;
  t.equal(file.name, name, 'the file keeps its name as given');
  for (let i = 0; i < 200 && (await a.request({ url: `/v1/files/${file.id}`, token: p.token })).json.status !== 'ready'; i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const d = await a.request({ method: 'POST', url: `/v1/files/${file.id}/download`, token: p.token });
  const res = await a.server.inject({ url: new URL(d.json.download_url).pathname });
  t.equal(res.statusCode, 200);
  t.equal(res.headers['content-disposition'], `attachment; filename="report.txt"; filename*=UTF-8''report.txt`);
});
