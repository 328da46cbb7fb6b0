// The request context in SQL: api.begin_request decides whether the caller's token, client,
// organization, licence and Roles allow the call and signs the context every row policy reads.
// The kinds that run in transactions begin here; the one-statement reads and the principal call
// begin_request inside their own statement.
import type { Request } from '@hapi/hapi';
import { sql } from 'kysely';
import { api, type RowOf, type SetRow } from '../../db/api.ts';
import { runAgainIfLostAtBegin, type Connections, type Tx } from '../../db/database.ts';
import { ApiError } from '../errors.ts';
import type { AppContext } from '../context.ts';
import type { Operation, Principal, Role } from '../operation.ts';
import type { Caller, Endpoint } from './endpoint.ts';
import { validateInput } from './input.ts';

const OUTCOME_ERRORS: Record<string, () => ApiError> = {
  invalid_token: () => new ApiError('INVALID_TOKEN', 'the access token is no longer valid',
    { headers: { 'WWW-Authenticate': 'Bearer realm="svc", error="invalid_token"' } }),
  client_disabled: () => new ApiError('CLIENT_DISABLED', 'the API Client is disabled',
    { headers: { 'WWW-Authenticate': 'Bearer realm="svc", error="invalid_token"' } }),
  license_inactive: () => new ApiError('LICENSE_INACTIVE', 'the API Client has no active eligible license'),
  org_subscription_inactive: () => new ApiError('ORG_SUBSCRIPTION_INACTIVE', 'the organization\'s access is suspended or expired'),
};

export function outcomeError(op: Operation, outcome: string | undefined): ApiError {
  // begin_request always answers one row: none means the statement's answer was lost on its way
  // (as can happen in the middle of a failover), not that the token is bad. A client told
  // 401 would throw a good token away.
  if (outcome === undefined) {
    return Object.assign(new ApiError('SERVICE_UNAVAILABLE', 'the database answered without the request\'s outcome; retry the request',
      { headers: { 'Retry-After': '1' } }), { outcomeLost: true });
  }
  if (outcome === 'role_required') return new ApiError('ROLE_REQUIRED', `${op.operationId} requires one of the Roles: ${op.roles!.join(', ')}`);
  return (OUTCOME_ERRORS[outcome] ?? OUTCOME_ERRORS.invalid_token!)();
}

/** begin_request's row: an outcome always; the rest when it is ok. */
export type Begun = Omit<SetRow<'begin_request'>, 'svc_roles' | 'principal'> & { svc_roles: Role[]; principal: Record<string, unknown> };
/** idempotency_claim's row, its columns prefixed with `claim_`; absent without a key. */
export type Claim = { [C in keyof RowOf<'idempotency_claim'> as `claim_${C}`]?: RowOf<'idempotency_claim'>[C] };
/** An Idempotency-Key and the request it was sent with (method, path and canonical body, hashed). */
export interface Idempotency { key: string; fingerprint: string }

/** begin_request in a transaction; with an Idempotency-Key, the key is claimed in the same
 * statement (one round trip less per create): the claim runs only after begin_request succeeded,
 * gated by an InitPlan as the one-statement reads are. A request that then fails validation
 * rolls it back. */
export function beginStatement({ op, roles }: Endpoint, caller: Caller, idempotency?: Idempotency) {
  const beginRequest = api.table('begin_request', caller.organizationId, caller.tokenSha256, roles, true);
  return idempotency
    ? sql<Begun & Claim>`
              with request as materialized (select * from ${beginRequest}),
                   claim as materialized (
                     select c.* from ${api.table('idempotency_claim', op.method, op.path, idempotency.key, idempotency.fingerprint)} c
                      where exists (select from request where request.outcome = 'ok'))
              select request.*, claim.state as claim_state, claim.response_status as claim_response_status,
                     claim.response_headers as claim_response_headers, claim.response_body as claim_response_body
                from request left join claim on true`
    : sql<Begun & Claim>`select * from ${beginRequest}`;
}

/** The claim's state; a response with `replay` only. */
export type ClaimState = Omit<SetRow<'idempotency_claim', 'state'>, 'response_headers'> & { response_headers: Record<string, string> | null };

export const claimOf = (begun: Begun & Claim): ClaimState | undefined => (begun.claim_state === undefined || begun.claim_state === null ? undefined : {
  state: begun.claim_state, response_status: begun.claim_response_status ?? null,
  response_headers: (begun.claim_response_headers ?? null) as Record<string, string> | null, response_body: begun.claim_response_body ?? null,
});

/** The request context set in `tx` (and the key claimed), then the input validated: who is
 * asking is answered before what was asked. */
export async function begin(endpoint: Endpoint, tx: Tx, caller: Caller, request: Request, idempotency?: Idempotency) {
  const [begun] = (await beginStatement(endpoint, caller, idempotency).execute(tx)).rows;
  if (!begun || begun.outcome !== 'ok') throw outcomeError(endpoint.op, begun?.outcome);
  const principal: Principal = {
    clientId: caller.clientId, organizationId: begun.organization_id, roles: begun.svc_roles, doc: begun.principal,
  };
  const { params, query, body } = validateInput(endpoint.input, request);
  return { principal, params, query, body, claim: claimOf(begun) };
}

/** The connections of the caller's organization (on a Citus coordinator, its worker's). */
export const connectionsOf = (app: AppContext, caller: Caller): Connections => app.database.of(caller.organizationId);

/** A transaction of the caller's organization, run again once on a new connection if its BEGIN's connection was lost. */
export const inTransaction = <T>(app: AppContext, caller: Caller, fn: (tx: Tx) => Promise<T>): Promise<T> =>
  runAgainIfLostAtBegin(() => connectionsOf(app, caller).db.transaction().execute(fn));

/** Reads in a short transaction of their own with the request context set again from the token
 * (a stream's reads, a preflight's), so a token that stops being valid stops them. */
export const readInContext = (endpoint: Endpoint, caller: Caller, request: Request) =>
  <T>(fn: (tx: Tx) => Promise<T>): Promise<T> => connectionsOf(endpoint.app, caller).db.transaction().execute(async (tx) => {
    await begin(endpoint, tx, caller, request);
    return fn(tx);
  });
