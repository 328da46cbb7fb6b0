// An Operation is one row of the spec's endpoint tables, as data: method, path, operationId,
// Roles, headers and joi schemas, and how it runs, named by `kind` (README "Adding an endpoint"):
//   principal  the caller's own document, from begin_request alone (GET /v1/me)
//   statement  a read in one statement and one round trip
//   stream     a streamed response; each read a short transaction of its own
//   command    a write done by one statement (with an Idempotency-Key, one round trip in all)
//   handler    a few lines of queries in the request's transaction
// Each kind carries only its own fields, and runs in its own module under operation/.
// operation/route.ts makes a route of each: what every kind shares (the token and the rate
// limit), then the kind's runner, chosen once per route, which goes on in the spec's order:
// current client and organization, licence and subscription, Roles (all decided in SQL by
// api.begin_request), then input validation, If-Match, Idempotency-Key, its own work and the
// stored idempotent response.
import type { Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import type Joi from 'joi';
import type { RawBuilder } from 'kysely';
import type { Tx } from '../db/database.ts';
import type { ProblemCode } from './errors.ts';
import type { AppContext } from './context.ts';
import type { Semaphore } from './semaphore.ts';

export type Role = 'member' | 'manager' | 'finance' | 'hr';
export const ALL_ROLES: readonly Role[] = ['member', 'manager', 'finance', 'hr'];

export interface Principal {
  clientId: string;
  organizationId: string;
  roles: Role[];
  doc: Record<string, unknown>;
}

/** What every operation declares, however it runs: its row in the contract. */
interface OperationBase {
  operationId: string;
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  summary: string;
  tag: string;
  /** The caller must hold one of these Roles (checked in SQL); omitted: any Role. */
  roles?: readonly Role[];
  /** Served but left out of the OpenAPI document (explicit refusals). */
  hidden?: boolean;
  /** The response carries a strong ETag (documented in the OpenAPI document). */
  etag?: boolean;
  params?: Joi.ObjectSchema;
  query?: Joi.ObjectSchema;
  /** The success response; `also` lists other success statuses with the same body; `mediaType`
   * is the body's type when it is not JSON (an event stream, a file's bytes). */
  response: { status: number; also?: number[]; description: string; schema?: Joi.Schema; mediaType?: string };
  /** The area's problem codes this operation can answer, beyond those its flags imply (see problemCodesOf). */
  errors?: ProblemCode[];
}

/** What a write declares of its body and of the headers that guard it (commands and handlers). */
interface WriteInput {
  body?: Joi.ObjectSchema | Joi.AnySchema;
  /** The body may be left out altogether (then it is validated as {}). */
  bodyOptional?: boolean;
  /** Body fields whose rule the spec gives its own code (minutes: INVALID_DURATION): a problem with
   * the field, or inside it, carries that code, and it wins over VALIDATION_FAILED. Keyed by JSON
   * pointer, as in `errors[].pointer`; `/list/*` covers the list's items but not the list itself. */
  fieldCodes?: Record<string, ProblemCode>;
  idempotencyKey?: boolean;
  /** Accepts Svc-Schema-Version (custom-field writes): documented in the OpenAPI document. */
  schemaVersion?: boolean;
}

/** The response is the principal itself: begin_request runs as one statement, no transaction,
 * and PostgreSQL builds the body (operation/principal.ts). */
export interface PrincipalOperation extends OperationBase {
  kind: 'principal';
  method: 'GET';
}

/** A read in one statement and one round trip (operation/statement.ts). */
export interface StatementOperation extends OperationBase {
  kind: 'statement';
  method: 'GET';
  statement: (ctx: StatementContext) => ReadStatement;
}

/** A streamed response (the run event stream; operation/stream.ts): after the token and rate
 * limit, it answers with the response itself, holding no transaction; each `read` is a short
 * transaction of its own with the request context set again from the token, so a token that
 * stops being valid ends the stream at its next read. */
export interface StreamOperation extends OperationBase {
  kind: 'stream';
  method: 'GET';
  stream: (ctx: StreamContext) => Promise<ResponseObject>;
}

/** A write done by one statement (operation/command.ts). With an Idempotency-Key and valid input
 * the whole transaction is one round trip: the command goes out behind the key's claim, gated in
 * SQL on a fresh claim, and PostgreSQL builds the response and stores it with the key in the same
 * statement; the answer is the response status with that row. Otherwise it runs as a handler would. */
export interface CommandOperation extends OperationBase, WriteInput {
  kind: 'command';
  command: (ctx: CommandContext) => Command;
}

/** A handler of a few lines that runs queries in the request's transaction (operation/handler.ts). */
export interface HandlerOperation extends OperationBase, WriteInput {
  kind: 'handler';
  ifMatch?: boolean;
  /** The response carries a secret shown once: the stored idempotent response omits it, and a
   * replay answers WEBHOOK_SECRET_NOT_AVAILABLE instead of showing it again. */
  oneTimeSecret?: boolean;
  /** What of the response must not rest in the database (a capability URL): the stored idempotent
   * response is `storedBody(body)`, and a replay passes it through `replayed`, which rebuilds it. */
  storedBody?: (body: Record<string, unknown>) => Record<string, unknown>;
  replayed?: (ctx: { tx: Tx; app: AppContext; request: Request }, stored: string) => Promise<string>;
  /** Slow outside work (network) before the write: it runs after the per-request checks and
   * validation, holding no database connection; its result reaches the handler as ctx.preflight.
   * `read` runs queries in a short transaction of its own with the request context set. */
  preflight?: (ctx: PreflightContext) => Promise<unknown>;
  /** Bounds how many of these requests hold a database transaction at once in this process
   * (the handler waits on a slow outside party, such as an SMTP server, inside its transaction). */
  concurrency?: (app: AppContext) => Semaphore;
  handler: (ctx: OperationContext) => Promise<OperationResult>;
}

export type Operation = PrincipalOperation | StatementOperation | StreamOperation | CommandOperation | HandlerOperation;

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
  /** A point read's rows in one statement with the request context set again from the token (no
   * transaction): what a stream reads on every wake-up. */
  rows: (query: RawBuilder<Record<string, unknown>>) => Promise<Record<string, any>[]>;
}

export interface OperationResult {
  status?: number;
  body: unknown;
  /** Row version: sent as a strong ETag. A resource without versions (a file) has none: null. */
  version?: number | null;
  headers?: Record<string, string>;
}
