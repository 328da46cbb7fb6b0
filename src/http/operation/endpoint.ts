// An operation as its kind's runner sees it: what its requests share, worked out once when its
// route is built, and what a runner is given per request.
import type { Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import type { VerifiedToken } from '../../auth/tokens.ts';
import type { AppContext } from '../context.ts';
import type { Operation } from '../operation.ts';
import type { InputSchemas } from './input.ts';

/** Who is asking, as the token said (its SHA-256 names it to the database). */
export type Caller = VerifiedToken;

export interface Endpoint {
  op: Operation;
  app: AppContext;
  /** The Roles the operation requires, begin_request's argument (null: any Role). */
  roles: readonly string[] | null;
  input: InputSchemas;
  /** `METHOD /template`: scopes cursors. */
  route: string;
}

export function endpointOf(op: Operation, app: AppContext): Endpoint {
  const write = op.kind === 'command' || op.kind === 'handler' ? op : undefined;
  return {
    op,
    app,
    roles: op.roles ?? null,
    input: { params: op.params, query: op.query, body: write?.body, bodyOptional: write?.bodyOptional, fieldCodes: write?.fieldCodes },
    route: `${op.method} ${op.path}`,
  };
}

/** How one kind answers a request whose token and rate limit passed: it throws ApiError (or a
 * database error) for a problem, which the route answers (route.ts). */
export type Runner = (request: Request, h: ResponseToolkit, caller: Caller, rateHeaders: Record<string, string>,
  requestId: string) => Promise<ResponseObject>;
