// An Operation is one row of the spec's endpoint tables, as data: method, path, operationId,
// Roles, headers and joi schemas, plus a handler of a few lines that runs queries in the
// request's transaction. toRoute() supplies everything shared, in the spec's order:
// token, rate limit, current client and organization, licence and subscription, Roles
// (all decided in SQL by api.begin_request), then input validation, If-Match,
// Idempotency-Key, the handler, and the stored idempotent response.
import type { Request, ResponseObject, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type Joi from 'joi';
import { createHash, randomBytes } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import { pipelined, pipelinedRead, runAgainIfLostAtBegin, type Tx } from '../db/database.ts';
import { requestOrganization } from '../db/cluster.ts';
import { parseJsonBody } from './body-limits.ts';
import { header } from './headers.ts';
import { ApiError, PROBLEMS, type FieldError, type ProblemCode, fromDatabaseError, problemResponse } from './errors.ts';
import type { AppContext } from './context.ts';
import type { Semaphore } from './semaphore.ts';
import type { TokenClaims } from '../auth/tokens.ts';

export type Role = 'member' | 'manager' | 'finance' | 'hr';
export const ALL_ROLES: readonly Role[] = ['member', 'manager', 'finance', 'hr'];

export interface Principal {
  clientId: string;
  organizationId: string;
  roles: Role[];
  doc: Record<string, unknown>;
}

export interface OperationContext<P = any, Q = any, B = any> {
  tx: Tx;
  principal: Principal;
  params: P;
  query: Q;
  body: B;
  /** Versions named by If-Match (strong tags only); present when the operation requires it. */
  ifMatch: number[];
  requestId: string;
  /** Canonical path and query, used to scope cursors. */
  route: string;
  app: AppContext;
  request: Request;
  /** What the operation's preflight returned. */
  preflight?: any;
}

export interface PreflightContext<P = any, Q = any, B = any> {
  principal: Principal;
  params: P;
  query: Q;
  body: B;
  app: AppContext;
  request: Request;
  read: <T>(fn: (tx: Tx) => Promise<T>) => Promise<T>;
  /** Versions named by If-Match (operations that require it). */
  ifMatch: number[];
}

/** The context a one-statement write is planned in: validated input, no database yet. */
export interface CommandContext<P = any, Q = any, B = any> {
  params: P;
  query: Q;
  body: B;
  request: Request;
}

export interface Command {
  /** One statement whose row is the resource: its wire document (`doc`, jsonb) and `version`. */
  statement: RawBuilder<{ doc: unknown; version: number | null }>;
  /** A create's Location: this prefix and the new resource's id. */
  location?: string;
}

/** The context a one-statement read is planned in: validated input, no database yet. */
export interface StatementContext<P = any, Q = any> {
  params: P;
  query: Q;
  app: AppContext;
  request: Request;
  requestId: string;
  route: string;
}

/** A read answered by one SQL statement that also sets the request context (README "Adding an
 * endpoint"): `checks` (expressions, such as api.require_any_role calls) run after
 * api.begin_request and before `query`; `query` must gate its rows on READY, which holds only
 * once both have run. `respond` turns the statement's row (undefined when the query gave none)
 * into the response, whose body may be JSON text PostgreSQL built (RawJson). */
export interface ReadStatement {
  checks?: RawBuilder<unknown>[];
  query: RawBuilder<Record<string, unknown>>;
  respond: (row: Record<string, any> | undefined) => OperationResult;
  point?: boolean;
}

/** Evaluated once per statement (an InitPlan): true after begin_request succeeded and every check passed. */
export const READY = sql<boolean>`exists (select from request_checks)`;

/** A response body that is already JSON text (built by PostgreSQL); sent untouched. */
export class RawJson {
  constructor(readonly text: string) {}
}

export interface OperationResult {
  status?: number;
  body: unknown;
  /** Row version: sent as a strong ETag. */
  version?: number;
  headers?: Record<string, string>;
}

export interface Operation {
  operationId: string;
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  summary: string;
  tag: string;
  /** The caller must hold one of these Roles (checked in SQL); omitted: any Role. */
  roles?: readonly Role[];
  idempotencyKey?: boolean;
  ifMatch?: boolean;
  /** Served but left out of the OpenAPI document (explicit refusals). */
  hidden?: boolean;
  /** Accepts Svc-Schema-Version (custom-field writes): documented in the OpenAPI document. */
  schemaVersion?: boolean;
  /** The response is the principal itself (no handler): begin_request runs as one statement, no
   * transaction, and PostgreSQL builds the body. */
  principalOnly?: boolean;
  etag?: boolean;
  /** The response carries a secret shown once: the stored idempotent response omits it, and a
   * replay answers WEBHOOK_SECRET_NOT_AVAILABLE instead of showing it again. */
  oneTimeSecret?: boolean;
  /** What of the response must not rest in the database (a capability URL): the stored idempotent
   * response is `storedBody(body)`, and a replay passes it through `replayed`, which rebuilds it. */
  storedBody?: (body: Record<string, unknown>) => Record<string, unknown>;
  replayed?: (ctx: { tx: Tx; app: AppContext; request: Request }, stored: string) => Promise<string>;
  /** The body may be left out altogether (then it is validated as {}). */
  bodyOptional?: boolean;
  /** Slow outside work (network) before the write: it runs after the per-request checks and
   * validation, holding no database connection; its result reaches the handler as ctx.preflight.
   * `read` runs queries in a short transaction of its own with the request context set. */
  preflight?: (ctx: PreflightContext) => Promise<unknown>;
  /** Bounds how many of these requests hold a database transaction at once in this process
   * (the handler waits on a slow outside party, such as an SMTP server, inside its transaction). */
  concurrency?: (app: AppContext) => Semaphore;
  params?: Joi.ObjectSchema;
  query?: Joi.ObjectSchema;
  body?: Joi.ObjectSchema | Joi.AnySchema;
  /** The success response; `also` lists other success statuses with the same body; `mediaType`
   * is the body's type when it is not JSON (an event stream, a file's bytes). */
  response: { status: number; also?: number[]; description: string; schema?: Joi.Schema; mediaType?: string };
  /** The area's problem codes this operation can answer, beyond those its flags imply (see problemCodesOf). */
  errors?: ProblemCode[];
  /** Body fields whose rule the spec gives its own code (minutes: INVALID_DURATION): a problem with
   * the field, or inside it, carries that code, and it wins over VALIDATION_FAILED. Keyed by JSON
   * pointer, as in `errors[].pointer`; `/list/*` covers the list's items but not the list itself. */
  fieldCodes?: Record<string, ProblemCode>;
  handler?: (ctx: OperationContext) => Promise<OperationResult>;
  /** A write done by one statement, in place of `handler` (README "Adding an endpoint"). With an
   * Idempotency-Key and valid input the whole transaction is one round trip: the command goes out
   * behind the key's claim, gated in SQL on a fresh claim, and PostgreSQL builds the response and
   * stores it with the key in the same statement; the answer is the response status with that row. */
  command?: (ctx: CommandContext) => Command;
  /** A read in one statement and one round trip, in place of `handler` (GET operations). */
  statement?: (ctx: StatementContext) => ReadStatement;
  /** A streamed response (the run event stream), in place of `handler`: after the token and rate
   * limit, it answers with the response itself, holding no transaction; each `read` is a short
   * transaction of its own with the request context set again from the token, so a token that
   * stops being valid ends the stream at its next read. */
  stream?: (ctx: StreamContext) => Promise<ResponseObject>;
}

export interface StreamContext<P = any, Q = any> {
  clientId: string;
  params: P;
  query: Q;
  app: AppContext;
  request: Request;
  h: ResponseToolkit;
  /** Rate-limit headers, to be sent with the response. */
  headers: Record<string, string>;
  read: <T>(fn: (tx: Tx) => Promise<T>) => Promise<T>;
}

const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;

export function fieldErrors(error: Joi.ValidationError, prefix = ''): FieldError[] {
  return error.details.map((d) => ({
    pointer: prefix + '/' + d.path.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/'),
    detail: d.message.replace(/"/g, "'"),
    code: d.type,
  }));
}

/** The spec's own code for problems at (or inside) a field: each such problem carries it, and the
 * first one names the response (as in SQL's raise_errors: the top-level code is the first one's). */
export function withFieldCodes(errors: FieldError[], codes: Record<string, ProblemCode> | undefined, base = ''): { code: ProblemCode; errors: FieldError[] } {
  const mapped = errors.map((e) => {
    // A missing field is a missing field, whatever rule it would have broken.
    if (e.code === 'any.required') return e;
    // '/events/*' names the items of a list only (an empty or missing list is a plain validation problem).
    const field = Object.keys(codes ?? {}).filter((f) => (f.endsWith('/*')
      ? e.pointer.startsWith(base + f.slice(0, -1))
      : e.pointer === base + f || e.pointer.startsWith(base + f + '/'))).sort((x, y) => y.length - x.length)[0];
    return field ? { ...e, code: codes![field]! } : e;
  });
  const specific = mapped.find((e) => e.code in PROBLEMS);
  return { code: (specific?.code as ProblemCode | undefined) ?? 'VALIDATION_FAILED', errors: mapped };
}

function validate<T>(schema: Joi.ObjectSchema | Joi.AnySchema | undefined, value: unknown, where: 'params' | 'query' | 'body',
  fieldCodes?: Record<string, ProblemCode>): T {
  if (!schema) {
    // An empty JSON object is tolerated where an operation takes no body.
    if (where === 'body' && value !== null && value !== undefined
        && !(typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0)) {
      throw new ApiError('VALIDATION_FAILED', 'this operation takes no request body');
    }
    return (value ?? {}) as T;
  }
  if (where === 'body' && value === null && schema.type === 'object') {
    throw new ApiError('VALIDATION_FAILED', 'the request body must be a JSON object',
      { errors: [{ pointer: '', detail: 'the request body must be a JSON object, not null', code: 'object.base' }] });
  }
  const { error, value: out } = schema.validate(value ?? (where === 'body' ? undefined : {}), {
    abortEarly: false,
    convert: where !== 'body',
    errors: { wrap: { label: "'" } },
  });
  if (error) {
    if (where === 'body') {
      const { code, errors } = withFieldCodes(fieldErrors(error), fieldCodes);
      throw new ApiError(code, errors.length === 1 ? errors[0]!.detail : 'the request body is invalid; see errors', { errors });
    }
    throw new ApiError('INVALID_REQUEST', `invalid ${where === 'query' ? 'query parameter' : 'path parameter'}; see errors`,
      { errors: fieldErrors(error) });
  }
  return out as T;
}

/** Parses If-Match into row versions. Weak tags never match (RFC 9110 strong comparison). */
function parseIfMatch(header: string | undefined): number[] | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  if (header.trim() === '*') return undefined;
  const versions: number[] = [];
  for (const raw of header.split(',')) {
    const m = /^\s*"(\d{1,9})"\s*$/.exec(raw);
    versions.push(m ? Number(m[1]) : -1);
  }
  return versions;
}

export const etagOf = (version: number) => `"${version}"`;

/** jsonb sorts keys; put `object` and `id` first so documents read as the spec shows them. */
function wireOrder(v: unknown): unknown {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
  const o = v as Record<string, unknown>;
  if (o.object === 'list' && Array.isArray(o.data)) return { ...o, data: o.data.map(wireOrder) };
  if (typeof o.object !== 'string') return v;
  const { object, id, ...rest } = o;
  return id === undefined ? { object, ...rest } : { object, id, ...rest };
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return '[' + v.map(canonicalJson).join(',') + ']';
  if (v && typeof v === 'object') {
    return '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + canonicalJson((v as any)[k])).join(',') + '}';
  }
  return JSON.stringify(v ?? null);
}

const OUTCOME_ERRORS: Record<string, () => ApiError> = {
  invalid_token: () => new ApiError('INVALID_TOKEN', 'the access token is no longer valid',
    { headers: { 'WWW-Authenticate': 'Bearer realm="svc", error="invalid_token"' } }),
  client_disabled: () => new ApiError('CLIENT_DISABLED', 'the API Client is disabled',
    { headers: { 'WWW-Authenticate': 'Bearer realm="svc", error="invalid_token"' } }),
  license_inactive: () => new ApiError('LICENSE_INACTIVE', 'the API Client has no active eligible license'),
  org_subscription_inactive: () => new ApiError('ORG_SUBSCRIPTION_INACTIVE', 'the organization\'s access is suspended or expired'),
};

function outcomeError(op: Operation, outcome: string | undefined): ApiError {
  // begin_request always answers one row: none means the statement's answer was lost on its way
  // (seen once, as a 401 in the middle of a failover), not that the token is bad. A client told
  // 401 would throw a good token away.
  if (outcome === undefined) {
    return Object.assign(new ApiError('SERVICE_UNAVAILABLE', 'the database answered without the request\'s outcome; retry the request',
      { headers: { 'Retry-After': '1' } }), { outcomeLost: true });
  }
  if (outcome === 'role_required') return new ApiError('ROLE_REQUIRED', `${op.operationId} requires one of the Roles: ${op.roles!.join(', ')}`);
  return (OUTCOME_ERRORS[outcome] ?? OUTCOME_ERRORS.invalid_token!)();
}

export { header } from './headers.ts';

// Request ids: a random per-process prefix and a counter (unique, and no entropy drawn per request),
// given on first use (no onRequest extension, which every request would pay a lifecycle step for).
const REQUEST_ID_PREFIX = 'req_' + randomBytes(8).toString('hex');
let requestCounter = 0;

export const newRequestId = () => REQUEST_ID_PREFIX + (++requestCounter).toString(36).padStart(6, '0');

export function requestIdOf(request: Request): string {
  const app = request.app as { requestId?: string };
  return (app.requestId ??= newRequestId());
}

/** The longest request target (path and query string) an operation reads: ours are far shorter. */
export const MAX_URI_LENGTH = 4096;

type Begun = { outcome: string; organization_id: string; svc_roles: Role[]; principal: Record<string, unknown> };
type Claim = { claim_state?: string | null; claim_response_status?: number | null; claim_response_headers?: Record<string, string> | null;
  claim_response_body?: string | null };

/** The handler of an operation that declares a `command`, when it is not sent with the claim. */
async function runCommand(op: Operation, ctx: OperationContext): Promise<OperationResult> {
  const command = op.command!({ params: ctx.params, query: ctx.query, body: ctx.body, request: ctx.request });
  const { rows: [row] } = await command.statement.execute(ctx.tx);
  if (!row) throw new Error(`${op.operationId}: the command gave no row`);
  const id = (row.doc as { id?: string }).id;
  return { body: row.doc, version: row.version ?? undefined,
    headers: command.location !== undefined && id !== undefined ? { Location: command.location + id } : undefined };
}

type Answer = { replay: boolean; status: number; headers: Record<string, string>; body: string };
type Caller = TokenClaims & { tokenSha256: string };

const rolesOf = (op: Operation) => (op.roles ? `{${op.roles.join(',')}}` : null);

/** A response whose body is JSON text (or empty), with its headers and the rate-limit headers. */
function sendAnswer(h: ResponseToolkit, result: Answer, rateHeaders: Record<string, string>): ResponseObject {
  const res = h.response(result.body).code(result.status);
  if (result.body !== '') res.type('application/json');
  for (const k in result.headers) res.header(k, result.headers[k]!);
  for (const k in rateHeaders) res.header(k, rateHeaders[k]!);
  if (result.replay) res.header('Idempotent-Replayed', 'true');
  return res;
}

/** The principal's own document: begin_request as one autocommit statement on the point
 * connection (the context it sets ends with it, so nothing else could read under it), the body
 * built by PostgreSQL. The text is the same for every request, so it is not compiled per request. */
const PRINCIPAL_SQL = 'select outcome, app_private.wire_json(principal) as body from api.begin_request($1, $2, $3::text[], false)';

async function answerPrincipal(op: Operation, app: AppContext, request: Request, h: ResponseToolkit, caller: Caller,
  rateHeaders: Record<string, string>): Promise<ResponseObject> {
  const [row] = await app.database.query<{ outcome: string; body: string | null }>(
    { sql: PRINCIPAL_SQL, parameters: [caller.organizationId, caller.tokenSha256, rolesOf(op)] }, { point: true });
  if (row?.outcome !== 'ok') throw outcomeError(op, row?.outcome);
  validate(op.params, request.params, 'params');
  validate(op.query, request.query, 'query');
  return sendAnswer(h, { replay: false, status: op.response.status, headers: {}, body: row.body! }, rateHeaders);
}

/** A read in one statement (README "Adding an endpoint"): the context begin_request sets lives as
 * long as the statement's own transaction, and the query's rows wait for READY (an InitPlan over
 * request_checks), so nothing is read before the context and the checks exist. The query is gated
 * here as well, so a route that forgot READY still runs its checks first. */
async function answerStatement(op: Operation, plan: ReadStatement, app: AppContext, h: ResponseToolkit, caller: Caller,
  rateHeaders: Record<string, string>): Promise<ResponseObject> {
  const checks = plan.checks?.length
    ? sql.join(plan.checks.map((c, i) => sql`${c} as ${sql.ref(`check_${i}`)}`))
    : sql`true as ready`;
  const [row] = await app.database.query(sql<Record<string, any>>`
    with request as materialized (
           select * from api.begin_request(${caller.organizationId}, ${caller.tokenSha256}, ${rolesOf(op)}::text[])),
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

export function toRoute(op: Operation, app: AppContext): ServerRoute {
  const routeTemplate = op.path;
  if (op.handler && op.command) throw new Error(`${op.operationId}: a handler or a command, not both`);
  if (op.principalOnly && (op.handler || op.command || op.statement || op.stream)) {
    throw new Error(`${op.operationId}: a principalOnly operation answers with the principal; it has no handler`);
  }
  const handler = op.handler ?? (op.command ? (ctx: OperationContext) => runCommand(op, ctx) : undefined);
  return {
    method: op.method,
    path: op.path,
    options: {
      id: op.operationId,
      payload: op.method === 'GET' || op.method === 'DELETE'
        ? undefined
        // Bytes, not parsed: the body's shape is measured before anything recursive reads it (body-limits.ts).
        : { allow: 'application/json', maxBytes: 1024 * 1024, failAction: 'error', parse: 'gunzip', output: 'data' },
      handler: (request: Request, h: ResponseToolkit) => (app.database.routed
        ? requestOrganization.run({ organizationId: undefined }, () => handle(request, h))
        : handle(request, h)),
    },
  };
  async function handle(request: Request, h: ResponseToolkit) {
    const requestId = requestIdOf(request);
    const rateHeaders: Record<string, string> = {};
    try {
      // The raw request target: `request.url` would build a URL object hapi's fast path avoids (~20 µs).
      const target = request.raw.req.url ?? '';
      if (target.length > MAX_URI_LENGTH) {
        throw new ApiError('URI_TOO_LONG', `the path and query string exceed ${MAX_URI_LENGTH} characters`);
      }
      // PostgreSQL text cannot hold U+0000 (22021): a parameter holding it is malformed, not a 500 or a 422.
      if (target.includes('%00')) {
        throw new ApiError('INVALID_REQUEST', 'a path or query parameter holds U+0000 (%00)');
      }
      // As hapi parsed it before: ahead of authentication, so that a malformed body is answered alike.
      if (Buffer.isBuffer(request.payload)) (request as { payload: unknown }).payload = parseJsonBody(request.payload);
      const claims = await app.authenticate(request);
      const rl = await app.rateLimit(`client:${claims.clientId}`);
      Object.assign(rateHeaders, rl.headers);
      if (!rl.allowed) {
        throw new ApiError('RATE_LIMITED', `rate limit exceeded; retry after ${rl.resetSeconds} s`,
          { headers: { 'Retry-After': String(rl.resetSeconds) } });
      }
      // On a Citus coordinator, every statement from here on goes to the organization's worker
      // (src/db/cluster.ts): the handler runs in a scope that names it (see toRoute).
      const scope = requestOrganization.getStore();
      if (scope) scope.organizationId = claims.organizationId;
      // The one-statement reads come first, before the closures the other paths share are made:
      // a read is the most frequent request, and each closure costs it an allocation (and, under
      // tsx, a name defined on it).
      if (op.principalOnly) return await answerPrincipal(op, app, request, h, claims, rateHeaders);
      let plan: ReadStatement | undefined;
      let planError: unknown;
      if (op.statement) {
        try {
          plan = op.statement({
            params: validate(op.params, request.params, 'params'), query: validate(op.query, request.query, 'query'),
            app, request, requestId, route: `${op.method} ${routeTemplate}`,
          });
        } catch (e) {
          planError = e;
        }
        if (plan) return await answerStatement(op, plan, app, h, claims, rateHeaders);
      }
      const run = <T>(fn: (tx: Tx) => Promise<T>): Promise<T> => runAgainIfLostAtBegin(() => app.database.db.transaction().execute(fn));
      const validateInput = () => ({
        params: validate(op.params, request.params, 'params'),
        query: validate(op.query, request.query, 'query'),
        body: validate(op.body, op.bodyOptional && request.payload === null ? {} : request.payload, 'body', op.fieldCodes),
      });
      const beginStatement = (idempotency?: { key: string; fingerprint: string }) => {
        const beginRequest = sql`api.begin_request(${claims.organizationId}, ${claims.tokenSha256}, ${rolesOf(op)}::text[], true)`;
        // With an Idempotency-Key, the key is claimed in the same statement (one round trip less
        // per create): the claim runs only after begin_request succeeded, gated by an InitPlan
        // as the one-statement reads are. A request that then fails validation rolls it back.
        const statement = idempotency
          ? sql<Begun & Claim>`
              with request as materialized (select * from ${beginRequest}),
                   claim as materialized (
                     select c.* from api.idempotency_claim(${op.method}, ${routeTemplate}, ${idempotency.key}, ${idempotency.fingerprint}) c
                      where exists (select from request where request.outcome = 'ok'))
              select request.*, claim.state as claim_state, claim.response_status as claim_response_status,
                     claim.response_headers as claim_response_headers, claim.response_body as claim_response_body
                from request left join claim on true`
          : sql<Begun & Claim>`select * from ${beginRequest}`;
        return statement;
      };
      const claimOf = (begun: Begun & Claim) => begun.claim_state === undefined || begun.claim_state === null ? undefined : {
        state: begun.claim_state, response_status: begun.claim_response_status!,
        response_headers: begun.claim_response_headers!, response_body: begun.claim_response_body!,
      };
      const begin = async (tx: Tx, idempotency?: { key: string; fingerprint: string }) => {
        const statement = beginStatement(idempotency);
        const [begun] = (await statement.execute(tx)).rows;
        if (!begun || begun.outcome !== 'ok') throw outcomeError(op, begun?.outcome);
        const principal: Principal = {
          clientId: claims.clientId, organizationId: begun.organization_id, roles: begun.svc_roles, doc: begun.principal,
        };
        const { params, query, body } = validateInput();
        return { principal, params, query, body, claim: claimOf(begun) };
      };
      const headerChecks = () => {
        let ifMatch: number[] = [];
        if (op.ifMatch) {
          const parsed = parseIfMatch(header(request, 'if-match'));
          if (!parsed) throw new ApiError('PRECONDITION_REQUIRED', 'send If-Match with the ETag from your last read of this resource');
          ifMatch = parsed;
        }
        let key: string | undefined;
        if (op.idempotencyKey) {
          key = header(request, 'idempotency-key');
          if (key === undefined) throw new ApiError('IDEMPOTENCY_KEY_REQUIRED', 'send a unique Idempotency-Key header with this request');
          if (!IDEMPOTENCY_KEY.test(key)) throw new ApiError('IDEMPOTENCY_KEY_INVALID', 'Idempotency-Key must be 1 to 255 printable ASCII characters');
        }
        return { ifMatch, key };
      };
      const send = (result: Answer) => sendAnswer(h, result, rateHeaders);
      if (op.stream) {
        const read = <T>(fn: (tx: Tx) => Promise<T>) => app.database.db.transaction().execute(async (tx) => {
          await begin(tx);
          return fn(tx);
        });
        const { params, query } = await read(async () => ({
          params: validate(op.params, request.params, 'params'), query: validate(op.query, request.query, 'query'),
        }));
        return await op.stream({ clientId: claims.clientId, params, query, app, request, h, headers: rateHeaders, read });
      }
      if (op.statement) {
        // Its input was invalid: who is asking is answered before what was asked, as in every other operation.
        await run(begin);
        throw planError;
      }
      let preflight: unknown;
      if (op.preflight) {
        const read = <T>(fn: (tx: Tx) => Promise<T>) => app.database.db.transaction().execute(async (tx) => {
          await begin(tx);
          return fn(tx);
        });
        // Every check that needs no network comes first; a request whose key already has a
        // stored response goes straight to the replay below, with nothing sent anywhere.
        const checked = await app.database.db.transaction().execute(async (tx) => {
          const c = await begin(tx);
          const h = headerChecks();
          const stored = h.key !== undefined && (await sql<{ stored: boolean }>`
            select api.idempotency_stored(${op.method}, ${routeTemplate}, ${h.key}) as stored`.execute(tx)).rows[0]?.stored === true;
          return { ...c, ifMatch: h.ifMatch, stored };
        });
        if (!checked.stored) preflight = await op.preflight({ ...checked, app, request, read });
      }
      // Whether an event of this transaction waits for a fan-out wake-up (emit_event sets it
      // instead of a NOTIFY, whose lock would serialize the commits), and the wake names of runs
      // whose logs it appended to (app_private.run_event), for the same reason: read with COMMIT.
      // (An object, not the promise itself: awaiting the read before COMMIT would cost a round trip.)
      const wakeAfter = async (tx: Tx) => (await pipelinedRead(sql<{ due: boolean; runs: string | null }>`
        select current_setting('svc.fanout_wake', true) = 'due' as due,
               nullif(current_setting('svc.run_wake', true), '') as runs`).execute(tx)).rows[0]!;
      /** A stored response to replay, or the error for a key in flight or reused. */
      const claimAnswer = (claim: NonNullable<ReturnType<typeof claimOf>>) => {
        if (claim.state === 'in_flight') {
          throw new ApiError('IDEMPOTENCY_KEY_IN_USE', 'the first request with this key is still being processed',
            { headers: { 'Retry-After': '1' } });
        }
        if (claim.state === 'mismatch') {
          throw new ApiError('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used with a different request');
        }
        if (claim.state === 'replay' && op.oneTimeSecret) {
          const id = (JSON.parse(claim.response_body || '{}') as { id?: string }).id;
          throw new ApiError('WEBHOOK_SECRET_NOT_AVAILABLE',
            `the secret was shown once, in the first response to this request${id ? ` (${id})` : ''}; rotate the secret to get a new one`,
            { members: id ? { resource_id: id } : {} });
        }
        return claim.state === 'replay'
          ? { replay: true as const, status: claim.response_status, headers: claim.response_headers, body: claim.response_body }
          : undefined;
      };
      /** The claim, the command with its response stored under the key, and the wake-up read, all
       * sent behind BEGIN without waiting: they answer with COMMIT, in one round trip. The command
       * runs only under a fresh claim (a one-time filter on the mark idempotency_claim sets), so a
       * replay, a reuse, a key in flight or a refused caller runs nothing; PostgreSQL builds the
       * response (body text, Location, ETag), stores it with the key and returns it. */
      const sendTogether = async (tx: Tx, idempotency: { key: string; fingerprint: string }, command: Command) => {
        const claimed = (await pipelinedRead(beginStatement(idempotency)).execute(tx)).rows[0]!.later;
        const done = (await pipelinedRead(sql<{ body: string; headers: Record<string, string> }>`
          with c as materialized (
                 select c.doc, c.version from (${command.statement}) c where current_setting('svc.claimed', true) = 'yes'),
               r as materialized (
                 select app_private.wire_json(c.doc) as body,
                        jsonb_strip_nulls(jsonb_build_object('Location', ${command.location ?? null}::text || (c.doc ->> 'id'),
                          'ETag', '"' || c.version || '"')) as headers
                   from c),
               -- Under a fresh claim exactly one row is stored and sent: any other count fails the
               -- transaction (a 500, our bug), so the key is not left claimed with no response.
               not_one as materialized (
                 select api.command_answered(count(*)) from r
                 having count(*) <> 1 and current_setting('svc.claimed', true) = 'yes')
          select r.body, r.headers,
                 api.idempotency_complete(${op.method}, ${routeTemplate}, ${idempotency.key}, ${op.response.status}::integer, r.headers, r.body) as stored
            from r
           where not exists (select from not_one)`).execute(tx)).rows[0]!.later;
        return { claimed, done, wake: (await wakeAfter(tx)).later };
      };
      const release = op.concurrency ? await op.concurrency(app).acquire() : undefined;
      const result = await run(async (tx) => {
        // The headers are read first (the key is claimed with begin_request), but their errors
        // are answered after who is asking and what was asked, as before.
        let checkedHeaders: ReturnType<typeof headerChecks> | undefined;
        let headerError: unknown;
        try { checkedHeaders = headerChecks(); } catch (e) { headerError = e; }
        const idempotency = checkedHeaders?.key === undefined ? undefined : {
          key: checkedHeaders.key,
          fingerprint: createHash('sha256')
            .update(request.path).update('\n').update(canonicalJson(request.payload ?? null)).digest('hex'),
        };
        // A command whose input is valid goes out with the claim, the whole transaction in one
        // round trip; otherwise the errors are answered in their usual order (who is asking,
        // then what was asked) below.
        if (op.command && idempotency && !op.ifMatch && !op.preflight && !op.concurrency && !op.replayed && !op.oneTimeSecret && !op.storedBody) {
          let command: Command | undefined;
          try {
            command = op.command({ ...validateInput(), request });
          } catch {
            command = undefined;
          }
          if (command) return { together: await sendTogether(tx, idempotency, command) };
        }
        const { principal, params, query, body, claim } = await begin(tx, idempotency);
        if (headerError !== undefined || !checkedHeaders) throw headerError;
        const { ifMatch, key } = checkedHeaders;

        if (key !== undefined) {
          if (!claim) throw new Error('the Idempotency-Key was not claimed');
          const replay = claimAnswer(claim);
          if (replay) {
            const body = op.replayed ? await op.replayed({ tx, app, request }, replay.body) : replay.body;
            return { ...replay, body };
          }
        }

        const out = await handler!({
          tx, principal, params, query, body, ifMatch, requestId, app, request, preflight,
          route: `${op.method} ${routeTemplate}`,
        });
        const status = out.status ?? op.response.status;
        const headers: Record<string, string> = { ...(out.headers ?? {}) };
        if (out.version !== undefined) headers.ETag = etagOf(out.version);
        const payload = out.body === undefined ? '' : JSON.stringify(wireOrder(out.body));
        if (key !== undefined) {
          const stored = op.oneTimeSecret && out.body && typeof out.body === 'object'
            ? JSON.stringify(wireOrder({ ...(out.body as Record<string, unknown>), secret: undefined }))
            : op.storedBody && out.body && typeof out.body === 'object'
              ? JSON.stringify(wireOrder(op.storedBody(out.body as Record<string, unknown>)))
              : payload;
          // Sent with COMMIT in one round trip; a failure here fails the commit with this error.
          await pipelined(sql`select api.idempotency_complete(${op.method}, ${routeTemplate}, ${key}, ${status}, ${headers as any}::jsonb, ${stored})`).execute(tx);
        }
        // Also with COMMIT: whether an event of this transaction waits for a fan-out wake-up
        // (emit_event sets it instead of a NOTIFY, whose lock would serialize the commits).
        // And the wake names of runs whose logs it appended to (app_private.run_event), for the same reason.
        const wake = op.method === 'GET' ? undefined : (await wakeAfter(tx)).later;
        return { replay: false as const, status, headers, body: payload, wake };
      }).finally(() => release?.());
      if ('together' in result && result.together) {
        // Committed: every statement answered, and an error of any of them was thrown by COMMIT.
        const { claimed, done, wake } = result.together;
        const [begun] = await claimed;
        if (!begun || begun.outcome !== 'ok') throw outcomeError(op, begun?.outcome);
        const claim = claimOf(begun);
        if (!claim) throw new Error('the Idempotency-Key was not claimed');
        const replay = claimAnswer(claim);
        if (replay) return send(replay);
        const [row] = await done;
        if (!row) throw new Error(`${op.operationId}: the command gave no row`);
        const [woken] = await wake;
        if (woken?.due) app.wakeFanout();
        if (woken?.runs) app.runEvents.wakeAfterCommit(woken.runs.split(','));
        return send({ replay: false, status: op.response.status, headers: row.headers, body: row.body });
      }
      // Committed (so the read above has answered): its events wait for this wake-up, not for a NOTIFY.
      const woken = !result.replay && result.wake ? (await result.wake)[0] : undefined;
      if (woken?.due) app.wakeFanout();
      if (woken?.runs) app.runEvents.wakeAfterCommit(woken.runs.split(','));
      return send(result);
    } catch (e) {
      const err = e instanceof ApiError ? e : fromDatabaseError(e);
      if (!err) throw e;
      if (err.code === 'SERVICE_UNAVAILABLE' && !(e instanceof ApiError)) app.reportUnavailable(e, `${op.method} ${routeTemplate}`);
      // Logged as its own cause: nothing of the database's says why the row was missing.
      if ((e as { outcomeLost?: boolean }).outcomeLost) {
        app.reportUnavailable(new Error('begin_request\'s statement answered no row'), `${op.method} ${routeTemplate}`);
      }
      const res = problemResponse(h, err, requestId, request.path);
      for (const [k, v] of Object.entries(rateHeaders)) res.header(k, v);
      return res;
    }
  }
}
