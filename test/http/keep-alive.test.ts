// Idle keep-alive connections: the server keeps them past the usual client and proxy idle timeouts,
// so that a client reusing one late (a busy event loop, a proxy's pool) does not write its request
// into a connection the server is closing. With Node's 5 s default, 1 or 2 of 8 concurrent 100 MiB
// uploads of bench/files.ts failed with EPIPE and nothing logged (docs/benchmarks.md).
import t from 'tap';
import net from 'node:net';
import { startApp } from '../helpers/app.ts';
import { liveServer } from '../helpers/agents.ts';

/** One request on `socket` (a new connection when none): its response head, and the socket, left open. */
function exchange(base: string, token: string, open?: net.Socket): Promise<{ head: string; socket: net.Socket }> {
  const { hostname, port } = new URL(base);
  const request = `GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`;
  return new Promise((resolve, reject) => {
    if (open?.destroyed) { reject(new Error('the server closed the connection')); return; }
    const socket = open ?? net.connect(Number(port), hostname);
    let data = '';
    const onData = (c: Buffer) => {
      data += c;
      const end = data.indexOf('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(data)?.[1] ?? NaN);
      if (end >= 0 && Buffer.byteLength(data) >= end + 4 + length) {
        socket.off('data', onData).off('error', reject).off('close', closed);
        resolve({ head: data.slice(0, end), socket });
      }
    };
    const closed = () => reject(new Error('the server closed the connection'));
    socket.on('data', onData).once('error', reject).once('close', closed);
    if (open) socket.write(request);
    else socket.once('connect', () => socket.write(request));
  });
}

t.test('an idle connection stays open 65 s by default, as its Keep-Alive header says', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member');
  t.equal(a.app.config.httpKeepAliveTimeoutMs, 65_000);
  const base = await liveServer(t, a);
  const { head, socket } = await exchange(base, p.token);
  t.teardown(() => socket.destroy());
  t.match(head, /^HTTP\/1\.1 200/);
  t.match(head, /\r\nconnection: keep-alive\r?$/im);
  t.match(head, /\r\nkeep-alive: timeout=65$/im, 'clients learn when the server would close it');
  // Past Node's own 5 s default (which closes at 5-6.5 s), the connection still takes the next request.
  await new Promise((r) => setTimeout(r, 7_000));
  const again = await exchange(base, p.token, socket);
  t.match(again.head, /^HTTP\/1\.1 200/, 'a request on the connection idle for 7 s is answered');
});

t.test('HTTP_KEEP_ALIVE_TIMEOUT_MS sets it: the server closes a connection idle that long', async (t) => {
  const a = await startApp(t, { HTTP_KEEP_ALIVE_TIMEOUT_MS: '300' });
  const p = await a.principal('member');
  const { head, socket } = await exchange(await liveServer(t, a), p.token);
  t.match(head, /\r\nkeep-alive: timeout=0$/im, 'under a second: timeout=0');
  const closed = await new Promise<boolean>((resolve) => {
    const guard = setTimeout(() => resolve(false), 10_000);
    socket.once('close', () => { clearTimeout(guard); resolve(true); });
  });
  t.ok(closed, 'the server closed the idle connection');
});
