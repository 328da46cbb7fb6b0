// PostgreSQL URLs that name several hosts, libpq's form for a primary and its standbys
// (`postgres://u:p@db1:5432,db2:5432/svc?target_session_attrs=read-write`), which WHATWG URL
// refuses: these helpers read and edit such a URL. src/db/hosts.ts connects to the one that takes writes.

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
