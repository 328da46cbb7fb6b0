// PostgreSQL URLs that name several hosts, libpq's form for a primary and its standbys
// (`postgres://u:p@db1:5432,db2:5432/svc?target_session_attrs=read-write`): postgres.js connects
// to the first that takes writes; WHATWG URL refuses them, and node-postgres (graphile-worker's
// driver) knows one host. These helpers edit such a URL and give node-postgres the same choice.
import pg from 'pg';

const FORM = /^(postgres(?:ql)?:\/\/)([^@/?#]*@)?([^/?#]*)(.*)$/;
const PLACEHOLDER = 'svc-hosts.invalid';

export interface HostPort { host: string; port: number }

/** The hosts of a postgres:// URL, in order (default port 5432). */
export function hostsOf(url: string): HostPort[] {
  const m = FORM.exec(url);
  if (!m) throw new Error('a database URL starts with postgres:// or postgresql://');
  return m[3]!.split(',').map((h) => {
    const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(h);
    if (bracket) return { host: bracket[1]!, port: Number(bracket[2] ?? 5432) };
    const [host, port] = h.split(':');
    return { host: host!, port: Number(port || 5432) };
  });
}

/** `url` with another user, password, database or hosts; the rest (every host, the query) as it was. */
export function editDatabaseUrl(url: string, change: { username?: string; password?: string; database?: string; hosts?: string }): string {
  const m = FORM.exec(url);
  if (!m) throw new Error('a database URL starts with postgres:// or postgresql://');
  const u = new URL(`${m[1]}${m[2] ?? ''}${PLACEHOLDER}${m[4]}`);
  if (change.username !== undefined) u.username = encodeURIComponent(change.username);
  if (change.password !== undefined) u.password = encodeURIComponent(change.password);
  if (change.database !== undefined) u.pathname = '/' + change.database;
  return u.toString().replace(PLACEHOLDER, change.hosts ?? m[3]!);
}

/**
 * node-postgres settings for `url`: with one host, the URL itself; with several, a Client that
 * connects to the first host that is not in recovery (what target_session_attrs=read-write asks of
 * libpq and postgres.js), found with a short probe and remembered for a second, so that a pool
 * filling up after a failover probes once, not per connection.
 */
export function nodePostgresConfig(url: string, connectTimeoutMs = 5000): pg.PoolConfig {
  const hosts = hostsOf(url);
  if (hosts.length === 1) return { connectionString: url };
  // node-postgres takes the host from its connection string over `host`: one string per host.
  const only = (h: HostPort) => editDatabaseUrl(url, { hosts: `${h.host.includes(':') ? `[${h.host}]` : h.host}:${h.port}` });
  const connectionString = only(hosts[0]!);
  let known: { at: number; target: Promise<HostPort> } | undefined;
  const writable = (): Promise<HostPort> => {
    if (known && Date.now() - known.at < 1000) return known.target;
    const target = (async () => {
      let last: unknown;
      for (const target of hosts) {
        const probe = new pg.Client({ connectionString: only(target), connectionTimeoutMillis: connectTimeoutMs });
        probe.on('error', () => {});
        try {
          await probe.connect();
          const { rows } = await probe.query<{ standby: boolean }>('select pg_is_in_recovery() as standby');
          if (!rows[0]!.standby) return target;
          last = Object.assign(new Error(`${target.host}:${target.port} is a standby`), { code: '57P03' });
        } catch (e) {
          last = e;
        } finally {
          void probe.end().catch(() => undefined);
        }
      }
      throw last;
    })();
    known = { at: Date.now(), target };
    target.catch(() => { known = undefined; });
    return target;
  };
  class WritableHostClient extends pg.Client {
    // Both of node-postgres's forms: a promise, or a callback (what its Pool uses).
    override connect(callback?: any): any {
      const connected = writable().then((target) => {
        const self = this as unknown as { host: string; port: number; connectionParameters: { host: string; port: number } };
        self.host = self.connectionParameters.host = target.host;
        self.port = self.connectionParameters.port = target.port;
        return super.connect();
      });
      if (!callback) return connected;
      connected.then(() => callback(null, this), (e: Error) => callback(e));
      return undefined;
    }
  }
  return { connectionString, Client: WritableHostClient as unknown as typeof pg.Client };
}
