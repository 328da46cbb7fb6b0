// The host that takes writes, among those a URL names (libpq's form for a primary and its
// standbys: `postgres://u:p@db1:5432,db2:5432/svc?target_session_attrs=read-write`), chosen here
// once for both drivers: postgres.js (the API, the worker's own statements) connects through
// `postgresFor`, node-postgres (graphile-worker) through `nodePostgresConfig`. The choice is the
// first host that answers, is not in recovery and whose sessions are not read-only (what
// target_session_attrs=read-write asks of libpq), found with a short probe and kept for a second,
// so that pools filling up after a failover probe once, not per connection; a session that ends,
// or fails to start, forgets it.
import net from 'node:net';
import pg from 'pg';
import postgres from 'postgres';
import { editDatabaseUrl, hostsOf, type HostPort } from './url.ts';

const KEPT_MS = 1000;

interface Chooser { hosts: HostPort[]; choose: () => Promise<HostPort>; forget: () => void }

/** `url` naming `host` only (node-postgres takes one host per connection string). */
const onlyHost = (url: string, h: HostPort) => editDatabaseUrl(url, { hosts: `${h.host.includes(':') ? `[${h.host}]` : h.host}:${h.port}` });

function chooserFor(url: string, connectTimeoutMs: number): Chooser {
  const hosts = hostsOf(url);
  let known: { at: number; target: Promise<HostPort> } | undefined;
  const choose = (): Promise<HostPort> => {
    if (known && Date.now() - known.at < KEPT_MS) return known.target;
    const target = (async () => {
      let last: unknown;
      for (const h of hosts) {
        const probe = new pg.Client({ connectionString: onlyHost(url, h), connectionTimeoutMillis: connectTimeoutMs });
        probe.on('error', () => {});
        try {
          await probe.connect();
          const { rows } = await probe.query<{ read_only: boolean }>(
            "select pg_is_in_recovery() or current_setting('default_transaction_read_only')::boolean as read_only");
          if (!rows[0]!.read_only) return h;
          last = Object.assign(new Error(`${h.host}:${h.port} takes no writes (a standby, or read-only sessions)`),
            { code: 'TARGET_SESSION_ATTRS' });
        } catch (e) {
          // node-postgres reports a timed-out connect by its message only.
          last = typeof (e as { code?: unknown }).code === 'string' ? e
            : Object.assign(new Error(`${h.host}:${h.port}: ${(e as Error).message}`), { code: 'CONNECT_TIMEOUT' });
        } finally {
          void probe.end().catch(() => undefined);
        }
      }
      throw last;
    })();
    const entry = known = { at: Date.now(), target };
    target.catch(() => { if (known === entry) known = undefined; });
    return target;
  };
  return { hosts, choose, forget: () => { known = undefined; } };
}

/** One chooser per list of hosts and credentials in this process: every pool shares its probe. */
const choosers = new Map<string, Chooser>();
const chooserOf = (url: string, connectTimeoutMs: number): Chooser => {
  let c = choosers.get(url);
  if (!c) choosers.set(url, c = chooserFor(url, connectTimeoutMs));
  return c;
};

/** A socket to the host that takes writes, for postgres.js's `socket` option. postgres.js treats a
 * given socket as connected and writes its start-up message at once, which a socket still
 * connecting buffers; a failure, to choose or to connect, reaches it as a refused connection's
 * does, an 'error' then a 'close' (a rejected promise would leave its connection starting for good). */
async function socketTo(chooser: Chooser): Promise<net.Socket> {
  let target: HostPort;
  try {
    target = await chooser.choose();
  } catch (e) {
    const socket = new net.Socket();
    socket.write = ((_chunk: unknown, _encoding?: unknown, done?: unknown) => {
      if (typeof _encoding === 'function') _encoding();
      else if (typeof done === 'function') done();
      return true;
    }) as typeof socket.write;
    setImmediate(() => socket.destroy(e as Error));
    return socket;
  }
  const socket = net.connect(target.port, target.host);
  // A session that ends or fails to start (a failover, a switchover's demotion, a restart) chooses again.
  socket.once('close', () => chooser.forget());
  // What postgres.js reads of a socket it made itself: TLS's server name, its errors' address.
  return Object.assign(socket, { host: target.host, port: target.port });
}

/** A postgres.js pool for `url`; with several hosts, its sessions start on the one that takes writes. */
export function postgresFor(url: string, options: postgres.Options<Record<string, never>> = {}): postgres.Sql {
  const hosts = hostsOf(url);
  if (hosts.length === 1) return postgres(url, options);
  const chooser = chooserOf(url, Number(options.connect_timeout ?? 30) * 1000);
  // `socket` is a documented option that postgres.js's types leave out.
  // The URL of the first host, for what postgres.js reads of it besides the host; without
  // target_session_attrs, which the choice has answered (and which postgres.js, given one host,
  // answers with a start-up that never ends when it turns the host away).
  const first = onlyHost(url, hosts[0]!).replace(/([?&])target_session_attrs=[^&]*&?/, '$1').replace(/[?&]$/, '');
  return postgres(first, { ...options, socket: () => socketTo(chooser) } as typeof options);
}

/** node-postgres settings for `url`: with several hosts, a Client whose sessions start on the one that takes writes. */
export function nodePostgresConfig(url: string, connectTimeoutMs = 5000): pg.PoolConfig {
  const hosts = hostsOf(url);
  if (hosts.length === 1) return { connectionString: url };
  const chooser = chooserOf(url, connectTimeoutMs);
  class WritableHostClient extends pg.Client {
    // Both of node-postgres's forms: a promise, or a callback (what its Pool uses).
    override connect(callback?: any): any {
      const connected = chooser.choose().then((target) => {
        const self = this as unknown as { host: string; port: number; connectionParameters: { host: string; port: number } };
        self.host = self.connectionParameters.host = target.host;
        self.port = self.connectionParameters.port = target.port;
        return super.connect().catch((e: unknown) => { chooser.forget(); throw e; });
      });
      if (!callback) return connected;
      connected.then(() => callback(null, this), (e: Error) => callback(e));
      return undefined;
    }
  }
  return { connectionString: onlyHost(url, hosts[0]!), Client: WritableHostClient as unknown as typeof pg.Client };
}
