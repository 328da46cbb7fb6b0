// Shared by the in-database tests.
import { randomBytes, createHash } from 'node:crypto';
import { clusterRoutingFor, requestOrganization } from '../../src/db/cluster.ts';

/** Runs a query and returns `${SQLSTATE} ${message}` (the message is the problem code), or 'ok'. */
export async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e: any) {
    return `${e?.code} ${e?.message}`;
  }
}

export const oneConnection = { max: 1, onnotice: () => {} } as const;

/** How a request names its access token to the database (api.begin_request): its SHA-256, in hex. */
export const tokenSha256 = (token: string): string => createHash('sha256').update(token).digest('hex');

/** What a request does first, in SQL: record an access token with the client's secret (as the
 * token endpoint does after signing one), then api.begin_request with it. Returns its row. */
export async function beginRequest(tx: (strings: TemplateStringsArray, ...values: any[]) => Promise<any[]>,
  client: { id: string; secret: string; orgId: string }, roles: string[] | null = null) {
  const token = randomBytes(24).toString('base64url');
  const [recorded] = await tx`select api.access_token_record(${client.orgId}, ${client.id}, ${client.secret},
    sha256(convert_to(${token}, 'UTF8')), now() + interval '1 hour') as ok`;
  if (!recorded.ok) throw new Error(`access_token_record refused the client ${client.id}`);
  const [row] = await tx`select * from api.begin_request(${client.orgId}, ${tokenSha256(token)}, ${roles}::text[])`;
  return row as { outcome: string; organization_id: string; svc_roles: string[]; principal: unknown };
}

/** Rows the role sees in a relation: 0 when it is refused outright (42501; the runtime role
 * reaches no base table, only the api surface). Either way it sees nothing. */
export async function visibleRows(sql: { unsafe: (q: string) => Promise<any[]> }, rel: string): Promise<number> {
  try {
    return (await sql.unsafe(`select count(*)::int as n from ${rel}`))[0].n;
  } catch (e: any) {
    if (e?.code === '42501') return 0;
    throw e;
  }
}

/** Rows a write touched: 0 when it is refused outright (42501). */
export async function touchedRows(p: PromiseLike<readonly unknown[]>): Promise<number> {
  try {
    return (await p).length;
  } catch (e: any) {
    if (e?.code === '42501') return 0;
    throw e;
  }
}

type Tagged = (strings: TemplateStringsArray, ...values: any[]) => Promise<any[]>;

/** A request's statements after api.begin_request, as the API sends them. On one server, each runs
 * as it is. On Citus, begin_request signed its context in the organization's worker (a delegated
 * call), so each later statement goes there too, inside api.in_organization, with the same rewrite
 * the API makes (src/db/cluster.ts): an inside check reads what a request would, where it would. */
export async function inRequest(t: { teardown: (fn: () => unknown) => void }, url: string, tx: Tagged,
  organizationId: string, opts: { role?: 'svc_api' } = {}): Promise<Tagged> {
  const unsafe = (tx as unknown as { unsafe: (q: string, p?: unknown[]) => Promise<any[]> }).unsafe;
  const routing = await clusterRoutingFor(url);
  if (!routing) {
    // As the role that owns the api surface, as its commands write (the runtime role reaches no table).
    if (opts.role) await unsafe(`set local role ${opts.role}`);
    return tx;
  }
  t.teardown(() => routing.close?.());
  const q: Tagged = async (strings, ...all) => {
    // The organization is written into the statement, not sent as a parameter: inside a delegated
    // call Citus takes a write into a distributed table only when its organization is a constant
    // it can compare with the call's ("queries must filter by the distribution argument"). The
    // API's writes are commands, which compare a variable; a DBA's INSERT names it as here.
    const values: unknown[] = [];
    const text = strings.reduce((text, s, i) => {
      if (i === 0) return s;
      const v = all[i - 1];
      if (v === organizationId && /^[a-z0-9_]+$/.test(organizationId)) return `${text}'${organizationId}'::text${s}`;
      values.push(v);
      return `${text}$${values.length}${s}`;
    }, '');
    const routed = await requestOrganization.run({ organizationId }, () => routing.route(text, values));
    if (!routed) return unsafe(text, values);
    const rows = await unsafe(routed.sql, routed.parameters);
    return routed.count ? Object.assign([], { count: Number(rows[0]?.count ?? 0) }) : rows;
  };
  // In the worker's backend, for the rest of the transaction (test/fixtures/002_inside_checks.sql).
  if (opts.role) await q`select set_config('role', ${opts.role}, true)`;
  return q;
}
