// Idle keep-alive connections: the server keeps them past the usual client and proxy idle timeouts,
// so that a client reusing one late (a busy event loop, a proxy's pool) does not write its request
// into a connection the server is closing. With Node's 5 s default, 1 or 2 of 8 concurrent 100 MiB
// uploads of bench/files.ts failed with EPIPE and nothing logged (docs/benchmarks.md).
import t from 'tap';
import net from 'node:net';
import { startApp } from '../helpers/app.ts';
import { createServer } from '../../src/http/server.ts';

/** One request on a new connection, left open: its response head and the socket. */
function exchange(base: string, token: string): Promise<{ head: string; socket: net.Socket }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () =>
      socket.write(`GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`));
    let data = '';
    socket.on('error', reject).on('data', (c) => {
      data += c;
      const end = data.indexOf('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(data)?.[1] ?? NaN);
      if (end >= 0 && Buffer.byteLength(data) >= end + 4 + length) resolve({ head: data.slice(0, end), socket });
    });
  });
}

t.test('an idle connection stays open 65 s by default, as its Keep-Alive header says', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member');
  t.equal(a.app.config.httpKeepAliveTimeoutMs, 65_000);
  const live = await createServer({ ...a.app, config: { ...a.app.config, port: 0, host: '127.0.0.1' } });
  await live.start();
  t.teardown(() => live.stop({ timeout: 1000 }));
  const { head, socket } = await exchange(live.info.uri, p.token);
  t.match(head, /^HTTP\/1\.1 200/);
  t.match(head, /\r\nconnection: keep-alive\r?$/im);
  t.match(head, /\r\nkeep-alive: timeout=65$/im, 'clients learn when the server would close it');
  socket.destroy();
});

t.test('HTTP_KEEP_ALIVE_TIMEOUT_MS sets it: the server closes a connection idle that long', async (t) => {
  const a = await startApp(t, { HTTP_KEEP_ALIVE_TIMEOUT_MS: '300' });
  const p = await a.principal('member');
  const live = await createServer({ ...a.app, config: { ...a.app.config, port: 0, host: '127.0.0.1' } });
  await live.start();
  t.teardown(() => live.stop({ timeout: 1000 }));
  const { head, socket } = await exchange(live.info.uri, p.token);
  t.match(head, /\r\nkeep-alive: timeout=0$/im, 'under a second: timeout=0');
  const closed = await new Promise<boolean>((resolve) => {
    const guard = setTimeout(() => resolve(false), 10_000);
    socket.once('close', () => { clearTimeout(guard); resolve(true); });
  });
  t.ok(closed, 'the server closed the idle connection');
});
