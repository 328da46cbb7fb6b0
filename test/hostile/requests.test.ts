// Bodies built to exhaust the server, and the rest of a request: the URI, the headers
// (through a real socket: Node's parser refuses them before hapi sees anything), the
// Idempotency-Key, Last-Event-ID, cursors, and every free-form JSON field, each bounded with a
// problem that names the limit.
import t from 'tap';
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { assertProblem, startApp } from '../helpers/app.ts';
import { liveServer } from '../helpers/agents.ts';

/** One raw HTTP/1.1 exchange: what came back, status line and body. */
function raw(base: string, request: string): Promise<{ status: number; headers: string; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(port), hostname, () => s.end(request));
    let data = '';
    s.on('data', (c) => { data += c; }).on('error', reject).on('close', () => {
      const [head, ...rest] = data.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head ?? '')?.[1]), headers: head ?? '', body: rest.join('\r\n\r\n') });
    });
  });
}

t.test('the request line, the headers, the query string', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  const base = await liveServer(t, a);
  const huge = await raw(base, `GET /v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${p.token}\r\nX-Filler: ${'a'.repeat(20_000)}\r\n\r\n`);
  t.equal(huge.status, 431, 'headers past 16 KiB: 431');
  t.match(huge.headers, /content-type: application\/problem\+json/i);
  t.match(JSON.parse(huge.body), { status: 431, code: 'HEADERS_TOO_LARGE', request_id: /^req_/ });
  const garbage = await raw(base, 'NOT HTTP AT ALL\r\n\r\n');
  t.equal(garbage.status, 400);
  t.match(JSON.parse(garbage.body), { code: 'INVALID_REQUEST' });

  const long = await a.request({ url: `/v1/projects?search=${'x'.repeat(5000)}`, token: p.token });
  assertProblem(t, long, 414, 'URI_TOO_LONG');
  const many = await a.request({ url: `/v1/projects?${Array.from({ length: 300 }, (_, i) => `p${i}=1`).join('&')}`, token: p.token });
  assertProblem(t, many, 400, 'INVALID_REQUEST');
  const cursor = await a.request({ url: `/v1/projects?after=${'a'.repeat(3000)}`, token: p.token });
  assertProblem(t, cursor, 400, 'INVALID_REQUEST');
  t.match(cursor.json.errors, [{ pointer: '/after' }], 'a cursor longer than any the service issues');
  // U+0000 cannot be stored: in a path or query parameter it is refused before any statement (22021 answered 422 or 500).
  for (const url of ['/v1/projects?search=%00', '/v1/projects/prj_%00', '/v1/tasks?search=a%00b', '/v1/tickets?search=%00', '/v1/members?search=%00']) {
    assertProblem(t, await a.request({ url, token: p.token }), 400, 'INVALID_REQUEST');
  }
  assertProblem(t, await a.request({ method: 'POST', url: '/v1/projects?x=%00', token: p.token, headers: { 'idempotency-key': randomUUID() },
    payload: { code: 'N', name: 'n' } }), 400, 'INVALID_REQUEST');
  const key = await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: { 'idempotency-key': 'k'.repeat(256) }, payload: { code: 'K', name: 'k' } });
  assertProblem(t, key, 400, 'IDEMPOTENCY_KEY_INVALID');
});

t.test('free-form JSON fields', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager,finance');
  const post = (url: string, payload: unknown) => a.request({ method: 'POST', url, token: p.token, headers: { 'idempotency-key': randomUUID() }, payload });
  const deep = (n: number): unknown => (n === 0 ? 'x' : { a: deep(n - 1) });

  const meta = await post('/v1/conversations', { title: 't', metadata: { a: deep(4) } });
  assertProblem(t, meta, 422, 'VALIDATION_FAILED');
  t.match(meta.json.errors, [{ pointer: '/metadata', detail: /nested more than 4 levels/ }]);
  assertProblem(t, await post('/v1/conversations', { title: 't', metadata: { ['k'.repeat(41)]: 1 } }), 422, 'VALIDATION_FAILED');
  assertProblem(t, await post('/v1/conversations', { title: 't', metadata: { big: 'x'.repeat(9000) } }), 422, 'VALIDATION_FAILED');
  t.equal((await post('/v1/conversations', { title: 't', metadata: { a: deep(3), b: 'x'.repeat(7000) } })).statusCode, 201, 'within the bounds: created');

  const params = await post('/v1/reports/rpt_project_progress/runs', { parameters: { x: deep(9) }, format: 'json' });
  assertProblem(t, params, 422, 'VALIDATION_FAILED');
  t.match(params.json.errors, [{ pointer: '/parameters' }]);
  const input = await post('/v1/agents/agt_task_triage/runs', { input: { blob: 'x'.repeat(70_000) } });
  assertProblem(t, input, 422, 'VALIDATION_FAILED');
  t.match(input.json.errors, [{ pointer: '/input', detail: /bytes as JSON/ }]);

  const conversation = (await post('/v1/conversations', { title: 'c' })).json.id;
  const content = await post(`/v1/conversations/${conversation}/messages`, { content: [{ type: 'data', data: deep(9) }] });
  assertProblem(t, content, 422, 'MESSAGE_CONTENT_INVALID');
});
