// One path for every error: a thrown ApiError, a registered SQLSTATE from the database,
// or a hapi/Boom error all become one RFC 9457 problem document here.
import type { ResponseToolkit, ResponseObject } from '@hapi/hapi';

export interface FieldError { pointer: string; detail: string; code: string }

/** Every problem code the service can answer with: status and fixed title. */
export const PROBLEMS = {
  INVALID_REQUEST: { status: 400, title: 'Invalid request' },
  INVALID_JSON: { status: 400, title: 'Malformed JSON body' },
  INVALID_CURSOR: { status: 400, title: 'Invalid pagination cursor' },
  IDEMPOTENCY_KEY_REQUIRED: { status: 400, title: 'Idempotency-Key header required' },
  IDEMPOTENCY_KEY_INVALID: { status: 400, title: 'Idempotency-Key header invalid' },
  INVALID_TOKEN: { status: 401, title: 'Access token missing, invalid or expired' },
  CLIENT_DISABLED: { status: 401, title: 'API Client disabled' },
  LICENSE_INACTIVE: { status: 403, title: 'No active eligible license' },
  ORG_SUBSCRIPTION_INACTIVE: { status: 403, title: 'Organization access suspended or expired' },
  ROLE_REQUIRED: { status: 403, title: 'Role required' },
  API_PRINCIPAL_NOT_ALLOWED: { status: 403, title: 'Not allowed for API Clients' },
  FORBIDDEN: { status: 403, title: 'Not permitted' },
  ROUTE_NOT_FOUND: { status: 404, title: 'No such endpoint' },
  MEMBER_NOT_FOUND: { status: 404, title: 'Member not found' },
  RESOURCE_NOT_FOUND: { status: 404, title: 'Resource not found' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed' },
  NOT_ACCEPTABLE: { status: 406, title: 'Not acceptable' },
  IDEMPOTENCY_KEY_IN_USE: { status: 409, title: 'A request with this Idempotency-Key is still in progress' },
  CONFLICT: { status: 409, title: 'State conflict' },
  STALE_RESOURCE: { status: 412, title: 'The If-Match ETag is stale' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Request body too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type' },
  VALIDATION_FAILED: { status: 422, title: 'The request is semantically invalid' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, title: 'Idempotency-Key reused with a different request' },
  PRECONDITION_REQUIRED: { status: 428, title: 'If-Match header required' },
  RATE_LIMITED: { status: 429, title: 'Too many requests' },
  INTERNAL_ERROR: { status: 500, title: 'Internal server error' },
  SERVICE_UNAVAILABLE: { status: 503, title: 'Service temporarily unavailable' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemCode = keyof typeof PROBLEMS;

/** Our own SQLSTATEs (db/README.md): the database raises them with the problem code as the
 * message. Each maps to the code used when the message is not itself a registered code. */
export const SQLSTATES: Record<string, ProblemCode> = {
  SVR03: 'ROLE_REQUIRED',
  SVS12: 'STALE_RESOURCE',
  SVN04: 'RESOURCE_NOT_FOUND',
  SVV22: 'VALIDATION_FAILED',
  SVC09: 'CONFLICT',
};

/** SQLSTATEs raised only by the control plane (svc-admin); an HTTP request meeting one is a bug. */
export const CONTROL_SQLSTATES = ['SVC10', 'SVC11', 'SVC12', 'SVC13', 'SVL01', 'SVN01', 'SVV01', 'SV500'] as const;

export class ApiError extends Error {
  constructor(
    readonly code: ProblemCode,
    readonly detail?: string,
    readonly extra: { errors?: FieldError[]; headers?: Record<string, string>; members?: Record<string, unknown> } = {},
  ) {
    super(detail ?? code);
  }
}

export const PROBLEM_TYPE_BASE = 'https://docs.svc.example/problems/';

export function problemBody(code: ProblemCode, detail: string | undefined, requestId: string, instance?: string,
  extra: ApiError['extra'] = {}) {
  const { status, title } = PROBLEMS[code];
  return {
    type: PROBLEM_TYPE_BASE + code.toLowerCase().replace(/_/g, '-'),
    title,
    status,
    ...(detail ? { detail } : {}),
    ...(instance ? { instance } : {}),
    code,
    request_id: requestId,
    ...(extra.errors ? { errors: extra.errors } : {}),
    ...(extra.members ?? {}),
  };
}

export function problemResponse(h: ResponseToolkit, err: ApiError, requestId: string, instance?: string): ResponseObject {
  const res = h.response(problemBody(err.code, err.detail, requestId, instance, err.extra))
    .code(PROBLEMS[err.code].status)
    .type('application/problem+json');
  for (const [k, v] of Object.entries(err.extra.headers ?? {})) res.header(k, v);
  return res;
}

interface PgError { code?: string; message?: string; detail?: string; hint?: string; constraint_name?: string; constraint?: string }

/** Maps a database error to an ApiError, or returns undefined (an unexpected error: 500). */
export function fromDatabaseError(e: unknown): ApiError | undefined {
  const pg = e as PgError;
  if (!pg || typeof pg.code !== 'string') return undefined;
  const registered = SQLSTATES[pg.code];
  if (registered) {
    // The message carries the spec's code; it must be one we know, else it is our bug.
    const code = (pg.message && pg.message in PROBLEMS ? pg.message : registered) as ProblemCode;
    if (code === 'STALE_RESOURCE') {
      // The database reports the current ETag as the detail (app_private.check_if_match).
      const current = pg.detail ?? '';
      return new ApiError(code, `the resource has changed; its current ETag is ${current}`,
        { headers: { ETag: current }, members: { current_etag: current } });
    }
    const pointer = pg.hint || undefined;
    const detail = pg.detail || undefined;
    return new ApiError(code, detail, pointer
      ? { errors: [{ pointer, detail: detail ?? code, code }] }
      : {});
  }
  switch (pg.code) {
    case '42501': return new ApiError('FORBIDDEN', 'not permitted by Role or resource policy');
    case '40001': case '40P01': case '55P03':
      return new ApiError('SERVICE_UNAVAILABLE', 'concurrent update; retry the request', { headers: { 'Retry-After': '1' } });
    default: return undefined;
  }
}
