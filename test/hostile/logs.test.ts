// Sink: log lines. A client's value that reaches a log line (an error quoting it, the
// X-Client-Request-Id, a route's refusal) cannot start a line of its own or make one line huge;
// secrets stay redacted.
import t from 'tap';
import { createLogger, LOG_VALUE_MAX } from '../../src/observability/logger.ts';
import { startApp } from '../helpers/app.ts';

t.test('the logger', async (t) => {
  const lines: string[] = [];
  const log = createLogger('info', { write: (s: string) => { lines.push(s); } });
  log.warn({ value: 'one\r\n{"level":"fatal","msg":"forged"}\r\n', huge: 'x'.repeat(1_000_000), nested: { deeper: { text: 'y'.repeat(5000) } },
    err: new Error('z'.repeat(10_000)), secret: 's3cr3t' }, 'hostile');
  t.equal(lines.length, 1);
  t.equal(lines[0]!.trimEnd().split('\n').length, 1, 'one line, whatever the values hold');
  const o = JSON.parse(lines[0]!);
  t.equal(o.value, 'one\r\n{"level":"fatal","msg":"forged"}\r\n', 'the value is kept, escaped by JSON');
  t.ok(lines[0]!.length < 4 * LOG_VALUE_MAX + 20_000, `the line is ${lines[0]!.length} characters`);
  t.match(o.huge, /…\[998000 more characters\]$/);
  t.equal(o.nested.deeper.text.length, LOG_VALUE_MAX + '…[3000 more characters]'.length);
  t.match(o.err.message, /^z{2000}…/);
  t.equal(o.secret, '[redacted]');
  lines.length = 0;
  log.info({ buf: Buffer.alloc(1_000_000, 65), when: new Date(0), url: new URL('https://x.example/' + 'p'.repeat(5000)) }, 'not plain data');
  const p = JSON.parse(lines[0]!);
  t.same([p.buf, p.when], ['<1000000 bytes>', '1970-01-01T00:00:00.000Z'], 'a Buffer by its size, a Date as ISO');
  t.ok(p.url.length < LOG_VALUE_MAX + 40, 'other objects as their string, cut');
});

t.test('over HTTP: a hostile X-Client-Request-Id', async (t) => {
  const lines: string[] = [];
  const a = await startApp(t, { LOG_LEVEL: 'info' }, undefined, { logDestination: { write: (s: string) => { lines.push(s); } } });
  const p = await a.principal('member');
  const res = await a.request({ url: '/v1/projects', token: p.token, headers: { 'x-client-request-id': 'abc\u2028{"forged":1}'.padEnd(300, 'q') } });
  t.equal(res.statusCode, 200);
  const line = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.route === '/v1/projects');
  t.equal(line.client_request_id.length, 200, 'cut to 200 characters');
  t.ok(lines.every((l) => l.trimEnd().split('\n').length === 1));
  t.notMatch(lines.join(''), p.token, 'no token in any line');
});
