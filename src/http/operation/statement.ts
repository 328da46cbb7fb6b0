// A read in one statement and one round trip (README "Adding an endpoint"): begin_request, the
// read's checks and its query in one statement, no BEGIN or COMMIT, the body built by PostgreSQL.
import type { Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import { sql, type RawBuilder } from 'kysely';
import { api } from '../../db/api.ts';
import type { ReadStatement, StatementOperation } from '../operation.ts';
import type { Caller, Endpoint, Runner } from './endpoint.ts';
import { begin, connectionsOf, inTransaction, outcomeError } from './begin.ts';
import { validate } from './input.ts';
import { etagOf, RawJson, sendAnswer } from './answer.ts';

/** Evaluated once per statement (an InitPlan): true after begin_request succeeded and every check passed. */
export const READY = sql<boolean>`exists (select from request_checks)`;

export function statementRunner(op: StatementOperation, endpoint: Endpoint): Runner {
  const { app, route } = endpoint;
  return async (request, h, caller, rateHeaders, requestId) => {
    let plan: ReadStatement;
    try {
      plan = op.statement({
        params: validate(op.params, request.params, 'params'), query: validate(op.query, request.query, 'query'),
        app, request, requestId, route,
      });
    } catch (e) {
      await answerInvalid(endpoint, caller, request);
      throw e;
    }
    return await answerStatement(endpoint, plan, h, caller, rateHeaders);
  };
}

/** Its input was invalid: who is asking is answered before what was asked, as in every other
 * operation, by begin_request in a transaction of its own (this throws its problem, if any). */
async function answerInvalid(endpoint: Endpoint, caller: Caller, request: Request) {
  await inTransaction(endpoint.app, caller, (tx) => begin(endpoint, tx, caller, request));
}

async function answerStatement(endpoint: Endpoint, plan: ReadStatement, h: ResponseToolkit, caller: Caller,
  rateHeaders: Record<string, string>): Promise<ResponseObject> {
  const { op } = endpoint;
  const { outcome, rows: [row] } = await rowsInContext(endpoint, caller, plan.query, plan.checks, plan.point);
  if (outcome !== 'ok') throw outcomeError(op, outcome);
  const out = plan.respond(row);
  const headers: Record<string, string> = { ...(out.headers ?? {}) };
  if (out.version != null) headers.ETag = etagOf(out.version);
  const body = out.body instanceof RawJson ? out.body.text : out.body === undefined ? '' : JSON.stringify(out.body);
  return sendAnswer(h, { replay: false, status: out.status ?? op.response.status, headers, body }, rateHeaders);
}

/** A query's rows in the caller's context, in one statement and one round trip: begin_request, the
 * checks, then the query. The context begin_request sets lives as long as the statement's own
 * transaction, and the query's rows wait for READY (an InitPlan over request_checks), so nothing
 * is read before the context and the checks exist. The query is gated here as well, so a route
 * that forgot READY still runs its checks first. `outcome` is begin_request's (undefined if the
 * answer was lost); `rows` are the query's, none unless the outcome is ok. */
export async function rowsInContext({ app, roles }: Endpoint, caller: Caller, query: RawBuilder<Record<string, unknown>>,
  checkList?: RawBuilder<unknown>[], point?: boolean): Promise<{ outcome: string | undefined; rows: Record<string, any>[] }> {
  const rows = await connectionsOf(app, caller).query<Record<string, any>>(
    inContext(roles, caller, query, checkList).compile(app.database.db), { point });
  return { outcome: rows[0]?.request_outcome, rows: rows[0]?.found ? rows : [] };
}

/** The statement rowsInContext sends: begin_request's outcome, then `found` and the query's columns. */
export function inContext(roles: readonly string[] | null, caller: Pick<Caller, 'organizationId' | 'tokenSha256'>,
  query: RawBuilder<Record<string, unknown>>, checkList?: RawBuilder<unknown>[]) {
  const checks = checkList?.length
    ? sql.join(checkList.map((c, i) => sql`${c} as ${sql.ref(`check_${i}`)}`))
    : sql`true as ready`;
  return sql<Record<string, any>>`
    with request as materialized (
           select * from ${api.table('begin_request', caller.organizationId, caller.tokenSha256, roles)}),
         request_checks as materialized (select ${checks} from request where request.outcome = 'ok')
    select request.outcome as request_outcome, r.*
      from request left join lateral (select true as found, q.* from (${query}) q where ${READY}) r on true`;
}
