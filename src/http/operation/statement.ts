// A read in one statement and one round trip (README "Adding an endpoint"): begin_request, the
// read's checks and its query in one statement, no BEGIN or COMMIT, the body built by PostgreSQL.
import type { Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import { sql } from 'kysely';
import type { ReadStatement, StatementOperation } from '../operation.ts';
import type { Caller, Endpoint, Runner } from './endpoint.ts';
import { begin, inTransaction, outcomeError } from './begin.ts';
import { validate } from './input.ts';
import { etagOf, RawJson, sendAnswer, wireOrder } from './answer.ts';

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
  await inTransaction(endpoint.app, (tx) => begin(endpoint, tx, caller, request));
}

/** The context begin_request sets lives as long as the statement's own transaction, and the
 * query's rows wait for READY (an InitPlan over request_checks), so nothing is read before the
 * context and the checks exist. The query is gated here as well, so a route that forgot READY
 * still runs its checks first. */
async function answerStatement({ op, app, roles }: Endpoint, plan: ReadStatement, h: ResponseToolkit, caller: Caller,
  rateHeaders: Record<string, string>): Promise<ResponseObject> {
  const checks = plan.checks?.length
    ? sql.join(plan.checks.map((c, i) => sql`${c} as ${sql.ref(`check_${i}`)}`))
    : sql`true as ready`;
  const [row] = await app.database.query(sql<Record<string, any>>`
    with request as materialized (
           select * from api.begin_request(${caller.organizationId}, ${caller.tokenSha256}, ${roles}::text[])),
         request_checks as materialized (select ${checks} from request where request.outcome = 'ok')
    select request.outcome as request_outcome, r.*
      from request left join lateral (select true as found, q.* from (${plan.query}) q where ${READY}) r on true`
    .compile(app.database.db), { point: plan.point });
  if (row?.request_outcome !== 'ok') throw outcomeError(op, row?.request_outcome);
  const out = plan.respond(row.found ? row : undefined);
  const headers: Record<string, string> = { ...(out.headers ?? {}) };
  if (out.version !== undefined) headers.ETag = etagOf(out.version);
  const body = out.body instanceof RawJson ? out.body.text : out.body === undefined ? '' : JSON.stringify(wireOrder(out.body));
  return sendAnswer(h, { replay: false, status: out.status ?? op.response.status, headers, body }, rateHeaders);
}
