// The route of an operation: what every kind shares before its runner (the request target's
// bounds, the body's shape, the token, the rate limit) and the answer to any problem, with the
// kind's runner chosen once, when the route is built.
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import { randomBytes } from 'node:crypto';
import { parseJsonBody } from '../body-limits.ts';
import { ApiError, fromDatabaseError, problemResponse } from '../errors.ts';
import type { AppContext } from '../context.ts';
import type { Operation } from '../operation.ts';
import { endpointOf, type Runner } from './endpoint.ts';
import { principalRunner } from './principal.ts';
import { statementRunner } from './statement.ts';
import { streamRunner } from './stream.ts';
import { commandRunner } from './command.ts';
import { handlerRunner } from './handler.ts';

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

/** The kind's runner, chosen once when the route is built, never per request. */
function runnerOf(op: Operation, app: AppContext): Runner {
  const endpoint = endpointOf(op, app);
  switch (op.kind) {
    case 'principal': return principalRunner(op, endpoint);
    case 'statement': return statementRunner(op, endpoint);
    case 'stream': return streamRunner(op, endpoint);
    case 'command': return commandRunner(op, endpoint);
    case 'handler': return handlerRunner(op, endpoint);
    default: {
      const unknown: never = op;
      throw new Error(`${(unknown as { operationId?: string }).operationId}: no kind of operation named ${(unknown as { kind?: string }).kind}`);
    }
  }
}

export function toRoute(op: Operation, app: AppContext): ServerRoute {
  const routeTemplate = op.path;
  const answer = runnerOf(op, app);
  return {
    method: op.method,
    path: op.path,
    options: {
      id: op.operationId,
      payload: op.method === 'GET' || op.method === 'DELETE'
        ? undefined
        // Bytes, not parsed: the body's shape is measured before anything recursive reads it (body-limits.ts).
        : { allow: 'application/json', maxBytes: 1024 * 1024, failAction: 'error', parse: 'gunzip', output: 'data' },
      handler: handle,
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
      return await answer(request, h, claims, rateHeaders, requestId);
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
