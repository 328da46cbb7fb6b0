// GET /v1/me: the principal's own document, from begin_request alone.
import type { PrincipalOperation } from '../operation.ts';
import type { Endpoint, Runner } from './endpoint.ts';
import { outcomeError } from './begin.ts';
import { validate } from './input.ts';
import { sendAnswer } from './answer.ts';

/** begin_request as one autocommit statement on the point connection (the context it sets ends
 * with it, so nothing else could read under it), the body built by PostgreSQL. The text is the
 * same for every request, so it is not compiled per request. */
const PRINCIPAL_SQL = 'select outcome, app_private.wire_json(principal) as body from api.begin_request($1, $2, $3::text[], false)';

export function principalRunner(op: PrincipalOperation, { app, roles }: Endpoint): Runner {
  return async (request, h, caller, rateHeaders) => {
    const [row] = await app.database.of(caller.organizationId).query<{ outcome: string; body: string | null }>(
      { sql: PRINCIPAL_SQL, parameters: [caller.organizationId, caller.tokenSha256, roles] }, { point: true });
    if (row?.outcome !== 'ok') throw outcomeError(op, row?.outcome);
    validate(op.params, request.params, 'params');
    validate(op.query, request.query, 'query');
    return sendAnswer(h, { replay: false, status: op.response.status, headers: {}, body: row.body! }, rateHeaders);
  };
}
