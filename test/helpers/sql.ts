// Shared by the in-database tests.
import { randomBytes, createHash } from 'node:crypto';
import { clusterRoutingFor } from '../../src/db/cluster.ts';

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
 * reaches no base table, only the api surface). Either way it sees nothing. On a Citus
 * coordinator, a view that joins tables by a column rather than a value is refused before that
 * (0A000): outside a request's delegated call there is no organization to read, and no row either. */
export async function visibleRows(sql: { unsafe: (q: string) => Promise<any[]> }, rel: string): Promise<number> {
  try {
    return (await sql.unsafe(`select count(*)::int as n from ${rel}`))[0].n;
  } catch (e: any) {
    if (e?.code === '42501' || (ON_CITUS && refusedByCitusPlanner(e))) return 0;
    throw e;
  }
}

/** Whether the tests run on a Citus cluster (make test-citus). */
export const ON_CITUS: boolean = JSON.parse(process.env.SVC_TEST_CITUS_WORKERS ?? '[]').length > 0;

/** On a cluster only: the coordinator's refusal of a read outside any request (a view read there
 * is refused by the planner or on the shard), which ends its transaction and shows no row. On one
 * server the same read must run and show nothing, so this accepts nothing there. */
export const refusedOnTheCoordinator = (e: any): boolean => ON_CITUS && (e?.code === '42501' || refusedByCitusPlanner(e));

/** Citus's refusal, inside a request's delegated call, of a statement that names another
 * organization than the call's: on a cluster a request reaches no other organization's shard. */
export const refusedOutsideItsOrganization = (e: any): boolean =>
  e?.code === '0A000' && /^queries must filter by the distribution argument/.test(e?.message ?? '');

/** Citus's refusal of a join it cannot plan on a coordinator (a read, refused whole), in either form. */
export const refusedByCitusPlanner = (e: any): boolean =>
  (e?.code === '0A000' && /^complex joins are only supported when all distributed tables are co-located/.test(e?.message ?? ''))
  || (e?.code === 'XX000' && /^the query contains a join that requires repartitioning/.test(e?.message ?? ''));

/** Rows a write touched: 0 when it is refused outright (42501). */
export async function touchedRows(p: PromiseLike<readonly unknown[]>): Promise<number> {
  try {
    return (await p).length;
  } catch (e: any) {
    if (e?.code === '42501') return 0;
    throw e;
  }
}

export type Tagged = (strings: TemplateStringsArray, ...values: any[]) => Promise<any[]>;

/** A request's statements after api.begin_request, as the API sends them. On one server, each runs
 * as it is. On Citus, begin_request signed its context in the organization's worker (a delegated
 * call), so each later statement goes there too, inside api.in_organization, with the same rewrite
 * the API makes (src/db/cluster.ts): an inside check reads what a request would, where it would. */
export async function inRequest(t: { teardown: (fn: () => unknown) => void }, url: string, tx: Tagged,
  organizationId: string, opts: { role?: 'svc_api' } = {}): Promise<Tagged> {
  const unsafe = (tx as unknown as { unsafe: (q: string, p?: unknown[]) => Promise<any[]> }).unsafe;
  const routing = await routingFor(t, url);
  if (!routing) {
    // As the role that owns the api surface, as its commands write (the runtime role reaches no table).
    if (opts.role) await unsafe(`set local role ${opts.role}`);
    return tx;
  }
  const q: Tagged = async (strings, ...all) => {
    // The organization is written into the statement, not sent as a parameter: inside a delegated
    // call Citus takes a write into a distributed table only when its organization is a constant
    // it can compare with the call's ("queries must filter by the distribution argument"). The
    // API's writes are commands, which compare a variable; a DBA's INSERT names it as here.
    //
    // A write's other values are written in too, as a DBA's would be: Citus 13.2.2 crashes the
    // worker (signal 11 in its deparser, get_update_query_targetlist_def) on a delegated UPDATE
    // that assigns a text parameter, as a role that may update the table (docs/scaling.md). The
    // API sends no such statement: its writes are commands, and the runtime role gets 42501 first.
    const write = /^(?:\s+|--[^\n]*\n|\/\*[^]*?\*\/)*(update|insert|delete|merge|with)\b/i.test(strings[0]!);
    const values: unknown[] = [];
    const text = strings.reduce((text, s, i) => {
      if (i === 0) return s;
      const v = all[i - 1];
      if (v === organizationId && /^[a-z0-9_]+$/.test(organizationId)) return `${text}'${organizationId}'::text${s}`;
      if (write) return `${text}${literal(v)}${s}`;
      // tx.json(x): the routed statement's arguments are one text array, so a document goes as text.
      if (isJson(v)) {
        values.push(JSON.stringify(v.value));
        return `${text}$${values.length}::text::jsonb${s}`;
      }
      values.push(v);
      return `${text}$${values.length}${s}`;
    }, '');
    const routed = await routing.route(text, values, organizationId);
    if (!routed) return unsafe(text, values);
    const rows = await unsafe(routed.sql, routed.parameters);
    return routed.count ? Object.assign([], { count: Number(rows[0]?.count ?? 0) }) : rows;
  };
  Object.assign(q, { json: (x: unknown) => (tx as unknown as { json: (x: unknown) => unknown }).json(x) });
  // In the worker's backend, for the rest of the transaction (test/fixtures/002_inside_checks.sql).
  if (opts.role) await q`select set_config('role', ${opts.role}, true)`;
  return q;
}

/** What postgres.js' tx.json(x) makes (its Parameter class is not exported). */
const isJson = (v: unknown): v is { value: unknown } =>
  typeof v === 'object' && v !== null && v.constructor?.name === 'Parameter' && [3802, 114].includes((v as { type?: number }).type!);

/** A value written into a write's text: a string, number, boolean, null or document (tx.json). */
function literal(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean' || typeof v === 'number' || typeof v === 'bigint') return String(v);
  const quote = (x: string) => `'${x.replace(/'/g, "''")}'`;
  if (typeof v === 'string') return quote(v);
  if (isJson(v)) return `${quote(JSON.stringify(v.value ?? null))}::jsonb`;
  throw new Error(`inRequest: a write on a cluster takes strings, numbers, booleans, null and tx.json values, not ${Object.prototype.toString.call(v)}`);
}

/** One routing per test database (its plans are kept), closed when the test that made it ends. */
const routings = new Map<string, ReturnType<typeof clusterRoutingFor>>();
function routingFor(t: { teardown: (fn: () => unknown) => void }, url: string): ReturnType<typeof clusterRoutingFor> {
  let routing = routings.get(url);
  if (!routing) {
    const made = clusterRoutingFor(url, { direct: false });
    routing = made;
    routings.set(url, made);
    made.catch(() => routings.delete(url));
    t.teardown(async () => {
      routings.delete(url);
      (await made.catch(() => undefined))?.close?.();
    });
  }
  return routing;
}
