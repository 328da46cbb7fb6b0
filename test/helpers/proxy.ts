// A TCP proxy in front of the test database, for the driver and pool fault tests: it can hold each
// new connection's first bytes, or the nth's (a slow start-up: DNS, TLS, a pooler, a loaded server), stall chosen connections for
// good, drop every connection with a reset (a network fault), or freeze the connections it has (a
// half-open path: nothing refused, nothing answered) while new ones pass.
import type { Test } from 'tap';
import net from 'node:net';

export async function proxy(t: Test, target: URL, holdMs: number | ((n: number) => number) = 0,
  stall: (n: number) => boolean = () => false) {
  let accepted = 0;
  const sockets = new Set<net.Socket>();
  const pairs: [net.Socket, net.Socket][] = [];
  const server = net.createServer((client) => {
    const n = ++accepted;
    sockets.add(client);
    if (stall(n)) return;
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(upstream);
    pairs.push([client, upstream]);
    client.pause();
    setTimeout(() => { client.pipe(upstream); upstream.pipe(client); client.resume(); }, typeof holdMs === 'number' ? holdMs : holdMs(n));
    const end = () => { client.destroy(); upstream.destroy(); };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => { for (const s of sockets) s.destroy(); server.close(); });
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    /** Closes every connection cleanly (a server that stops: node-postgres sees "Connection terminated unexpectedly"). */
    close: () => { for (const s of sockets) s.destroy(); sockets.clear(); },
    /** Drops every connection with a TCP reset (the client sees ECONNRESET: a network fault). */
    reset: () => { for (const s of sockets) if (!s.destroyed) s.resetAndDestroy(); sockets.clear(); },
    /** Every connection open now stops carrying bytes either way; later ones are not affected. */
    freeze: () => {
      for (const [client, upstream] of pairs.splice(0)) {
        client.unpipe(upstream); upstream.unpipe(client);
        client.pause(); upstream.pause();
      }
    },
  };
}
