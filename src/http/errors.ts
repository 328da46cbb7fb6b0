// One path for every error: a thrown ApiError, a registered SQLSTATE from the database,
// or a hapi/Boom error all become one RFC 9457 problem document here.
import type { ResponseToolkit, ResponseObject } from '@hapi/hapi';
import { isConnectionFailure, isReadOnlySession, isTimeout } from '../db/faults.ts';

export interface FieldError { pointer: string; detail: string; code: string }

/** Every problem code the service can answer with: status and fixed title. */
export const PROBLEMS = {
  INVALID_REQUEST: { status: 400, title: 'Invalid request' },
  INVALID_JSON: { status: 400, title: 'Malformed JSON body' },
  BODY_TOO_DEEP: { status: 400, title: 'JSON body nested too deeply' },
  BODY_OBJECT_TOO_LARGE: { status: 400, title: 'A JSON object in the body has too many members' },
  BODY_ARRAY_TOO_LONG: { status: 400, title: 'A JSON array in the body has too many items' },
  BODY_TOO_MANY_VALUES: { status: 400, title: 'The JSON body has too many values' },
  REQUEST_TIMEOUT: { status: 408, title: 'Request not received in time' },
  URI_TOO_LONG: { status: 414, title: 'Request target too long' },
  HEADERS_TOO_LARGE: { status: 431, title: 'Request header fields too large' },
  INVALID_CURSOR: { status: 400, title: 'Invalid pagination cursor' },
  IDEMPOTENCY_KEY_REQUIRED: { status: 400, title: 'Idempotency-Key header required' },
  IDEMPOTENCY_KEY_INVALID: { status: 400, title: 'Idempotency-Key header invalid' },
  INVALID_SCHEMA_VERSION: { status: 400, title: 'Svc-Schema-Version header invalid' },
  INVALID_TOKEN: { status: 401, title: 'Access token missing, invalid or expired' },
  CLIENT_DISABLED: { status: 401, title: 'API Client disabled' },
  LICENSE_INACTIVE: { status: 403, title: 'No active eligible license' },
  ORG_SUBSCRIPTION_INACTIVE: { status: 403, title: 'Organization access suspended or expired' },
  ROLE_REQUIRED: { status: 403, title: 'Role required' },
  API_PRINCIPAL_NOT_ALLOWED: { status: 403, title: 'Not allowed for API Clients' },
  FORBIDDEN: { status: 403, title: 'Not permitted' },
  CUSTOM_FIELD_FORBIDDEN: { status: 403, title: 'Custom field not writable with your Roles' },
  APPROVAL_REQUIRED: { status: 403, title: 'Only a named user can approve' },
  APPROVAL_ACCESS_DENIED: { status: 403, title: 'Approval not covered by your Roles' },
  PERSONAL_CONNECTION_NOT_ALLOWED: { status: 403, title: 'Personal connections are not for API Clients' },
  TICKET_MODULE_DISABLED: { status: 403, title: 'The ticket module is not enabled for the organization' },
  REPORT_ROLE_REQUIRED: { status: 403, title: 'The report needs a Role the client does not hold' },
  API_PRINCIPAL_NOT_SUPPORTED: { status: 403, title: 'The agent does not accept API Clients' },
  LICENSE_LEVEL_REQUIRED: { status: 403, title: 'A higher license level is required' },
  FILE_ACCESS_DENIED: { status: 403, title: 'The linked resource\'s files are not yours to read or change' },
  ROUTE_NOT_FOUND: { status: 404, title: 'No such endpoint' },
  MEMBER_NOT_FOUND: { status: 404, title: 'Member not found' },
  RESOURCE_NOT_FOUND: { status: 404, title: 'Resource not found' },
  PROJECT_NOT_FOUND: { status: 404, title: 'Project not found' },
  TASK_NOT_FOUND: { status: 404, title: 'Task not found' },
  OBJECT_SCHEMA_NOT_FOUND: { status: 404, title: 'Object schema not found' },
  TIME_ENTRY_NOT_FOUND: { status: 404, title: 'Time entry not found' },
  APPROVAL_NOT_FOUND: { status: 404, title: 'Approval not found' },
  INVOICE_NOT_FOUND: { status: 404, title: 'Invoice not found' },
  INTEGRATION_CONNECTION_NOT_FOUND: { status: 404, title: 'Integration connection not found' },
  WEBHOOK_ENDPOINT_NOT_FOUND: { status: 404, title: 'Webhook endpoint not found' },
  WEBHOOK_DELIVERY_NOT_FOUND: { status: 404, title: 'Webhook delivery not found' },
  FILE_NOT_FOUND: { status: 404, title: 'File not found' },
  TICKET_NOT_FOUND: { status: 404, title: 'Ticket not found' },
  REPORT_NOT_FOUND: { status: 404, title: 'Report not found' },
  REPORT_RUN_NOT_FOUND: { status: 404, title: 'Report run not found' },
  AGENT_NOT_FOUND: { status: 404, title: 'Agent not found' },
  AGENT_NOT_PUBLISHED: { status: 404, title: 'Agent not published in the organization' },
  RUN_NOT_FOUND: { status: 404, title: 'Run not found' },
  CONVERSATION_NOT_FOUND: { status: 404, title: 'Conversation not found' },
  LINKED_RESOURCE_NOT_FOUND: { status: 404, title: 'Linked resource not found' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed' },
  NOT_ACCEPTABLE: { status: 406, title: 'Not acceptable' },
  IDEMPOTENCY_KEY_IN_USE: { status: 409, title: 'A request with this Idempotency-Key is still in progress' },
  CONFLICT: { status: 409, title: 'State conflict' },
  PROJECT_CODE_CONFLICT: { status: 409, title: 'Project code already in use' },
  PROJECT_ARCHIVE_BLOCKED: { status: 409, title: 'Project archive blocked by active work' },
  TASK_ARCHIVE_BLOCKED: { status: 409, title: 'Task archive or restore blocked' },
  INVALID_TRANSITION: { status: 409, title: 'Transition not offered in the current state' },
  OBJECT_SCHEMA_CHANGED: { status: 409, title: 'The object schema has changed' },
  EXTERNAL_ID_CONFLICT: { status: 409, title: 'external_id already used by this client' },
  TIME_ENTRY_LOCKED: { status: 409, title: 'Time entry not editable in its status' },
  INVOICE_NOT_EDITABLE: { status: 409, title: 'Invoice not editable in its status' },
  ACCOUNTING_CONNECTION_NOT_READY: { status: 409, title: 'The accounting connection is not ready' },
  WORKFLOW_BLOCKED: { status: 409, title: 'The organization\'s workflow does not allow this now' },
  WEBHOOK_SECRET_NOT_AVAILABLE: { status: 409, title: 'The signing secret is shown only once' },
  WEBHOOK_REPLAY_EXPIRED: { status: 409, title: 'The event is outside the 30-day replay window' },
  REPORT_FAILED: { status: 409, title: 'The report run failed' },
  FILE_SCAN_FAILED: { status: 409, title: 'The file failed its checks' },
  RETENTION_BLOCKED: { status: 409, title: 'The file is kept by a retention rule or a legal hold' },
  INTEGRATION_CONNECTION_NOT_READY: { status: 409, title: 'The integration connection is not ready' },
  AGENT_UNAVAILABLE: { status: 409, title: 'The agent cannot run on this service now' },
  RUN_NOT_ACTIONABLE: { status: 409, title: 'The run is not waiting for an action' },
  RUN_ALREADY_TERMINAL: { status: 409, title: 'The run has already finished' },
  RUN_CANCEL_NOT_AVAILABLE: { status: 409, title: 'The run cannot be cancelled now' },
  RUN_OUTPUT_EXPIRED: { status: 410, title: 'The run\'s output and events have expired' },
  CONVERSATION_ARCHIVED: { status: 409, title: 'The conversation is archived' },
  REPORT_RUN_EXPIRED: { status: 410, title: 'The report run\'s results have expired' },
  UPLOAD_EXPIRED: { status: 410, title: 'The upload has expired' },
  DOWNLOAD_URL_EXPIRED: { status: 410, title: 'The download URL has expired' },
  STALE_RESOURCE: { status: 412, title: 'The If-Match ETag is stale' },
  FILE_TOO_LARGE: { status: 413, title: 'File too large' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Request body too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type' },
  RANGE_NOT_SATISFIABLE: { status: 416, title: 'Range not satisfiable' },
  VALIDATION_FAILED: { status: 422, title: 'The request is semantically invalid' },
  CONTENT_TYPE_NOT_ALLOWED: { status: 422, title: 'Content type not permitted, or not what the bytes are' },
  INVALID_REPORT_PARAMETERS: { status: 422, title: 'Invalid report parameters' },
  EXPORT_FORMAT_NOT_SUPPORTED: { status: 422, title: 'Export format not offered by the report' },
  AGENT_INPUT_INVALID: { status: 422, title: 'The input does not match the agent\'s input_schema' },
  SUBJECT_NOT_SUPPORTED: { status: 422, title: 'The subject is not supported here' },
  RUN_ACTION_INVALID: { status: 422, title: 'Not an action or choice the run offers' },
  SUBJECT_NOT_FOUND: { status: 422, title: 'No member matches the subject' },
  SUBJECT_AMBIGUOUS: { status: 422, title: 'Several members match the subject' },
  MESSAGE_CONTENT_INVALID: { status: 422, title: 'Invalid message content' },
  CONTEXT_LIMIT_EXCEEDED: { status: 422, title: 'The message exceeds the working context\'s budget' },
  ATTACHMENT_NOT_AVAILABLE: { status: 422, title: 'Attachment not available' },
  CHECKSUM_MISMATCH: { status: 422, title: 'The uploaded bytes do not match the declared size and SHA-256' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, title: 'Idempotency-Key reused with a different request' },
  IMMUTABLE_FIELD: { status: 422, title: 'Field cannot be changed' },
  INVALID_MANAGER: { status: 422, title: 'Invalid project manager' },
  INVALID_ASSIGNEE: { status: 422, title: 'Invalid assignee' },
  INVALID_SUBJECT_MEMBER: { status: 422, title: 'Invalid subject member' },
  DEPENDENCY_CYCLE: { status: 422, title: 'Dependency not allowed' },
  INVALID_CUSTOM_FIELD: { status: 422, title: 'Invalid custom fields' },
  CUSTOM_FIELD_NOT_FOUND: { status: 422, title: 'Unknown custom field' },
  CUSTOM_FIELD_READ_ONLY: { status: 422, title: 'Custom field is read-only' },
  CUSTOM_FIELD_VALUE_INVALID: { status: 422, title: 'Invalid custom field value' },
  CUSTOM_FIELD_REQUIRED: { status: 422, title: 'Custom field required' },
  INVALID_WORK_DATE: { status: 422, title: 'Invalid work date or reference' },
  INVALID_DURATION: { status: 422, title: 'Invalid duration' },
  INVALID_INVOICE_LINE: { status: 422, title: 'Invalid invoice line' },
  CURRENCY_MISMATCH: { status: 422, title: 'Currency does not match the invoice' },
  PAYMENT_EXCEEDS_AMOUNT_DUE: { status: 422, title: 'Payment exceeds the amount due' },
  CUSTOMER_DELIVERY_DETAILS_MISSING: { status: 422, title: 'The customer has no delivery details' },
  EMAIL_DELIVERY_REFUSED: { status: 422, title: 'The mail provider refused the email' },
  WEBHOOK_EVENT_NOT_SUPPORTED: { status: 422, title: 'Unknown event name' },
  WEBHOOK_URL_UNSAFE: { status: 422, title: 'Webhook URL not allowed' },
  WEBHOOK_VERIFICATION_FAILED: { status: 422, title: 'Webhook endpoint verification failed' },
  PRECONDITION_REQUIRED: { status: 428, title: 'If-Match header required' },
  RATE_LIMITED: { status: 429, title: 'Too many requests' },
  INTERNAL_ERROR: { status: 500, title: 'Internal server error' },
  SERVICE_UNAVAILABLE: { status: 503, title: 'Service temporarily unavailable' },
  EMAIL_DELIVERY_UNAVAILABLE: { status: 503, title: 'The mail provider is unavailable' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemCode = keyof typeof PROBLEMS;

/** Our own SQLSTATEs (db/README.md): the database raises them with the problem code as the
 * message. Each maps to the code used when the message is not itself a registered code. */
export const SQLSTATES: Record<string, ProblemCode> = {
  SVR03: 'ROLE_REQUIRED',
  SVR04: 'FORBIDDEN',
  SVV23: 'INVALID_TRANSITION',
  SVV24: 'DEPENDENCY_CYCLE',
  SVC14: 'OBJECT_SCHEMA_CHANGED',
  SVC15: 'PROJECT_ARCHIVE_BLOCKED',
  SVC16: 'TASK_ARCHIVE_BLOCKED',
  SVC17: 'TIME_ENTRY_LOCKED',
  SVR05: 'APPROVAL_REQUIRED',
  SVS12: 'STALE_RESOURCE',
  SVN04: 'RESOURCE_NOT_FOUND',
  SVV22: 'VALIDATION_FAILED',
  SVC09: 'CONFLICT',
};

/** SQLSTATEs raised only by the control plane (svc-admin); an HTTP request meeting one is a bug. */
export const CONTROL_SQLSTATES = ['SVC18', 'SVC10', 'SVC11', 'SVC12', 'SVC13', 'SVL01', 'SVN01', 'SVV01', 'SV500'] as const;

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

/** Constraints whose violation is the client's doing: the problem code and the field at fault. */
const CONSTRAINTS: Record<string, { code: ProblemCode; pointer: string; detail: string }> = {
  projects_code_unique: { code: 'PROJECT_CODE_CONFLICT', pointer: '/code', detail: 'another project of your organization has this code' },
  projects_dates_ordered: { code: 'VALIDATION_FAILED', pointer: '/end_date', detail: 'end_date must not be before start_date' },
  projects_code_format: { code: 'VALIDATION_FAILED', pointer: '/code', detail: 'code: 1 to 32 letters, digits, dot, dash or underscore' },
  tasks_code_unique: { code: 'CONFLICT', pointer: '/code', detail: 'another task of this project has this code' },
  tasks_code_format: { code: 'VALIDATION_FAILED', pointer: '/code', detail: 'code: 1 to 32 letters, digits, dot, dash or underscore' },
  tasks_dates_ordered: { code: 'VALIDATION_FAILED', pointer: '/due_at', detail: 'due_at must not be before start_at' },
  tasks_assignees_bounded: { code: 'INVALID_ASSIGNEE', pointer: '/assignee_member_ids', detail: 'at most 50 assignees' },
  time_entries_external_id_unique: { code: 'EXTERNAL_ID_CONFLICT', pointer: '/external_id', detail: 'this external_id is already used by your client' },
  tickets_external_id_unique: { code: 'EXTERNAL_ID_CONFLICT', pointer: '/external_id', detail: 'this external_id is already used by your client' },
  tickets_requester_email_format: { code: 'VALIDATION_FAILED', pointer: '/requester/email', detail: 'requester.email must be an email address' },
  time_entries_minutes_range: { code: 'INVALID_DURATION', pointer: '/minutes', detail: 'minutes must be a whole number from 1 to 1440' },
  payments_amount_positive: { code: 'VALIDATION_FAILED', pointer: '/amount', detail: 'amount must be greater than zero' },
  invoices_total_not_negative: { code: 'INVALID_INVOICE_LINE', pointer: '/lines', detail: 'the lines must not add up to a negative total' },
  invoices_dates_ordered: { code: 'VALIDATION_FAILED', pointer: '/due_date', detail: 'due_date must not be before issue_date' },
  webhook_endpoints_url_https: { code: 'WEBHOOK_URL_UNSAFE', pointer: '/url', detail: 'only https URLs of at most 2048 characters are accepted' },
  webhook_endpoints_description_length: { code: 'VALIDATION_FAILED', pointer: '/description', detail: 'description: at most 1000 characters' },
  webhook_endpoints_events_bounded: { code: 'VALIDATION_FAILED', pointer: '/events', detail: 'events: 1 to 100 event names' },
  task_dependencies_not_self: { code: 'DEPENDENCY_CYCLE', pointer: '/predecessor_task_ids', detail: 'a task cannot depend on itself' },
};

/** The database cannot be reached (src/db/faults.ts), did not answer in time (a statement or
 * idle-transaction timeout, no free pooled connection), or takes no writes on the session we have
 * (a failover under way). None is the client's doing: 503. */
export function isDatabaseUnavailable(e: unknown): boolean {
  return isConnectionFailure(e) || isTimeout(e) || isReadOnlySession(e);
}

export function databaseUnavailable(e: unknown): ApiError {
  const timeout = isTimeout(e);
  return new ApiError('SERVICE_UNAVAILABLE', timeout
    ? 'the database did not answer in time; retry the request'
    : isReadOnlySession(e)
      ? 'the database is not taking writes right now (a failover); retry the request'
      : 'the database is not reachable right now; retry the request', { headers: { 'Retry-After': timeout ? '2' : '5' } });
}

/** A Citus worker's error reaches the coordinator without its constraint field, and names the
 * constraint in its message: a shard's index by the table's name and the shard id
 * (`projects_code_unique_102008`), a check constraint by its own name. */
function constraintOfShard(message: string | undefined): string {
  return ofTable(/constraint "([a-z0-9_]+)"/.exec(message ?? '')?.[1] ?? '');
}

/** A constraint by its table's name: on a Citus worker, where a statement runs on a shard, the
 * error's own field names the shard's (`projects_code_unique_102008`). */
const ofTable = (name: string): string => (name in CONSTRAINTS ? name : name.replace(/_\d+$/, ''));

/** The constraint a database error names: its own field, or on Citus the one its message names
 * (integrity violations only: another error's message may echo input). */
export function constraintNamed(pg: { code?: string; message?: string; constraint_name?: string }): string | undefined {
  if (pg.constraint_name) return ofTable(pg.constraint_name);
  return pg.code?.startsWith('23') ? constraintOfShard(pg.message) || undefined : undefined;
}

/** Maps a database error to an ApiError, or returns undefined (an unexpected error: 500). */
export function fromDatabaseError(e: unknown): ApiError | undefined {
  const pg = e as PgError;
  if (!pg || typeof pg.code !== 'string') return undefined;
  if (isDatabaseUnavailable(pg)) return databaseUnavailable(pg);
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
    if (code === 'IDEMPOTENCY_KEY_IN_USE') {
      // Another request with the key completed first (api.idempotency_complete): a retry replays it.
      return new ApiError(code, pg.detail || undefined, { headers: { 'Retry-After': '1' } });
    }
    if (pg.hint === 'errors') {
      // A list of problems (app_private.raise_errors): the first one names the code.
      let errors: FieldError[] = [];
      try { errors = JSON.parse(pg.detail ?? '[]'); } catch { return undefined; }
      return new ApiError(code, errors.length === 1 ? errors[0]!.detail : `${errors.length} problems; see errors`, { errors });
    }
    const pointer = pg.hint || undefined;
    const detail = pg.detail || undefined;
    return new ApiError(code, detail, pointer
      ? { errors: [{ pointer, detail: detail ?? code, code }] }
      : {});
  }
  // Integrity violations (class 23) only: another error's message may echo the client's input.
  const named = pg.constraint_name ?? pg.constraint;
  const constraint = CONSTRAINTS[named ? ofTable(named) : pg.code.startsWith('23') ? constraintOfShard(pg.message) : ''];
  if (constraint) {
    return new ApiError(constraint.code, constraint.detail,
      { errors: [{ pointer: constraint.pointer, detail: constraint.detail, code: constraint.code }] });
  }
  switch (pg.code) {
    // 22P05/22021: a NUL character or invalid encoding PostgreSQL cannot store in text.
    case '22007': case '22008': case '22P02': case '22003': case '22P05': case '22021':
      return new ApiError('VALIDATION_FAILED', 'a value is out of range or malformed');
    // 42501 (a missing grant, or a row-level-security WITH CHECK refusal) is never expected: the
    // commands check Roles first and raise ROLE_REQUIRED. Reaching it is our bug: a 500.
    case '40001': case '40P01': case '55P03':
      return new ApiError('CONFLICT', 'a concurrent request changed the same data; retry the request', { headers: { 'Retry-After': '1' } });
    default: return undefined;
  }
}
