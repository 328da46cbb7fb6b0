// Shared by the in-database tests.
import { randomBytes, createHash } from 'node:crypto';

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
