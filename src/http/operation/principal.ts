// GET /v1/me: the principal's own document, from begin_request alone.
import { sql } from 'kysely';
import { api, build, type Declared } from '../../db/api.ts';
import type { PrincipalOperation } from '../operation.ts';
import type { Endpoint, Runner } from './endpoint.ts';
import { outcomeError } from './begin.ts';
import { validate } from './input.ts';
import { sendAnswer } from './answer.ts';

/** begin_request as one autocommit statement on the point connection (the context it sets ends
 * with it, so nothing else could read under it), the body built by PostgreSQL. The text is the
 * same for every request: compiled once here, sent with each request's four arguments in order. */
export const PRINCIPAL_COLUMNS = { outcome: 'text', body: 'text' } as const;
export const PRINCIPAL = sql<Declared<typeof PRINCIPAL_COLUMNS>>`
  select outcome, app_private.wire_json(principal) as body from ${api.table('begin_request', '', '', [], false)}`.compile(build);

export function principalRunner(op: PrincipalOperation, { app, roles }: Endpoint): Runner {
  return async (request, h, caller, rateHeaders) => {
    const [row] = await app.database.of(caller.organizationId).query<Declared<typeof PRINCIPAL_COLUMNS>>(
      { sql: PRINCIPAL.sql, parameters: [caller.organizationId, caller.tokenSha256, roles, false] }, { point: true });
    if (row?.outcome !== 'ok') throw outcomeError(op, row?.outcome ?? undefined);
    validate(op.params, request.params, 'params');
    validate(op.query, request.query, 'query');
    return sendAnswer(h, { replay: false, status: op.response.status, headers: {}, body: row.body! }, rateHeaders);
  };
}
