// The OpenAPI 3.1 document, generated from the same Operation definitions that serve requests.
import type Joi from 'joi';
import { BODY_LIMITS } from './body-limits.ts';
import { MAX_URI_LENGTH } from './operation/route.ts';
import joiToJson from 'joi-to-json';
import type { CommandOperation, HandlerOperation, Operation } from './operation.ts';
import { PROBLEMS, type ProblemCode } from './errors.ts';
import { TOKEN_ERRORS } from '../routes/oauth.ts';
import { schemas } from '../routes/schemas.ts';
import { EVENT_TYPES } from '../events/catalog.ts';

/** What each area of the API is for, shown in the reference. */
const TAGS: Record<string, string> = {
  'Authentication and identity': 'Access tokens (OAuth 2.0 client credentials), the calling API Client and its organization.',
  Members: 'The organization\'s people, read-only; fields per the caller\'s Roles.',
  Projects: 'Projects with custom fields; archived rather than deleted.',
  Tasks: 'Tasks with workflows as data: transitions, notes, dependencies.',
  'Custom-field schemas': 'The custom fields of each object type that the caller may read.',
  'Time entries': 'Time worked per member, project and task; submitted for approval by named users.',
  Approvals: 'Approval requests, read-only: only named users decide.',
  Invoicing: 'Invoices with calculated totals, sending, voiding and recorded payments.',
  'Integration connections': 'Provider connections the organization configured, read-only, with readiness checks.',
  'Webhook endpoints': 'HTTPS endpoints that receive signed events, their deliveries and replays.',
  Reports: 'SQL-defined reports the caller\'s Roles may use, run as snapshots by the worker; results paged as JSON or downloaded as CSV or JSON.',
  Tickets: 'Support tickets with a workflow as data, replies emailed to the requester, internal notes, full-text search.',
  Files: 'Files linked to a project, task or invoice: uploaded through a short-lived capability URL (PUT), verified, virus-scanned, downloaded through another (GET, with Range).',
};

/** The kinds that take a body and the headers that guard a write. */
const writeOf = (op: Operation): CommandOperation | HandlerOperation | undefined =>
  (op.kind === 'command' || op.kind === 'handler' ? op : undefined);
const requiresIfMatch = (op: Operation) => op.kind === 'handler' && op.ifMatch === true;

const toSchema = (s: Joi.Schema) => (joiToJson as unknown as (s: Joi.Schema, type: string) => unknown)(s, 'open-api-3.1') as Record<string, unknown>;
const openApiPath = (p: string) => p.replace(/\{(\w+)\??\}/g, '{$1}');

function parameters(op: Operation) {
  const write = writeOf(op);
  const out: Record<string, unknown>[] = [];
  for (const [where, schema] of [['path', op.params], ['query', op.query]] as const) {
    if (!schema) continue;
    const json = toSchema(schema) as { properties?: Record<string, any>; required?: string[] };
    for (const [name, prop] of Object.entries(json.properties ?? {})) {
      const { description, ...rest } = prop;
      out.push({ name, in: where, required: where === 'path' || (json.required ?? []).includes(name), description, schema: rest });
    }
  }
  if (write?.idempotencyKey) {
    out.push({ name: 'Idempotency-Key', in: 'header', required: true, schema: { type: 'string', minLength: 1, maxLength: 255 },
      description: 'Unique per intended effect; replays return the stored response for 24 hours' });
  }
  if (requiresIfMatch(op)) {
    out.push({ name: 'If-Match', in: 'header', required: true, schema: { type: 'string' }, description: 'The ETag from the last read' });
  }
  if (write?.schemaVersion) {
    out.push({ name: 'Svc-Schema-Version', in: 'header', required: false, schema: { type: 'integer', minimum: 1 },
      description: 'The schema_version of the object type you read; a mismatch answers 409 OBJECT_SCHEMA_CHANGED' });
  }
  out.push({ name: 'X-Client-Request-Id', in: 'header', required: false, schema: { type: 'string', maxLength: 200 },
    description: 'Echoed back and logged' });
  return out;
}

/** Every problem code an operation can answer, by HTTP status: the pipeline's own codes (from
 * the operation's flags) and the operation's area codes. The contract check in the test suite
 * fails on any problem whose code is not listed here for its operation and status. */
export function problemCodesOf(op: Operation): Map<number, ProblemCode[]> {
  const write = writeOf(op);
  const codes = new Set<ProblemCode>(['INVALID_TOKEN', 'CLIENT_DISABLED', 'LICENSE_INACTIVE', 'ORG_SUBSCRIPTION_INACTIVE',
    'ROLE_REQUIRED', 'RATE_LIMITED', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE', 'URI_TOO_LONG', 'HEADERS_TOO_LARGE', 'REQUEST_TIMEOUT', 'INVALID_REQUEST']);
  if (op.query && 'after' in (op.query.describe().keys ?? {})) codes.add('INVALID_CURSOR');
  if (op.method !== 'GET' && op.method !== 'DELETE') {
    for (const c of ['INVALID_JSON', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'VALIDATION_FAILED',
      'BODY_TOO_DEEP', 'BODY_OBJECT_TOO_LARGE', 'BODY_ARRAY_TOO_LONG', 'BODY_TOO_MANY_VALUES'] as const) codes.add(c);
  }
  if (op.method !== 'GET') codes.add('CONFLICT');
  if (write?.idempotencyKey) {
    for (const c of ['IDEMPOTENCY_KEY_REQUIRED', 'IDEMPOTENCY_KEY_INVALID', 'IDEMPOTENCY_KEY_IN_USE', 'IDEMPOTENCY_KEY_REUSED'] as const) codes.add(c);
  }
  if (requiresIfMatch(op)) { codes.add('PRECONDITION_REQUIRED'); codes.add('STALE_RESOURCE'); }
  if (write?.schemaVersion) { codes.add('INVALID_SCHEMA_VERSION'); codes.add('OBJECT_SCHEMA_CHANGED'); }
  for (const c of op.errors ?? []) codes.add(c);
  for (const c of Object.values(write?.fieldCodes ?? {})) codes.add(c);
  const byStatus = new Map<number, ProblemCode[]>();
  for (const c of [...codes].sort()) {
    const status = PROBLEMS[c].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), c]);
  }
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}

function errorResponses(op: Operation) {
  return Object.fromEntries([...problemCodesOf(op)].map(([status, codes]) => [String(status), {
    description: codes.join(', '),
    content: { 'application/problem+json': { schema: {
      allOf: [{ $ref: '#/components/schemas/Problem' }, { type: 'object', properties: { code: { enum: codes } } }],
    } } },
  }]));
}

/** Built once per set of operations: converting every joi schema costs ~200 ms, and a process
 * (tests above all) may create many servers from the same operations. */
const built = new Map<string, ReturnType<typeof generate>>();
const opIds = new WeakMap<Operation, number>();
let lastOpId = 0;
const opId = (op: Operation) => { let id = opIds.get(op); if (id === undefined) opIds.set(op, id = ++lastOpId); return id; };
export function buildOpenApi(ops: Operation[], info: { serverUrl?: string } = {}) {
  const key = `${info.serverUrl ?? ''} ${ops.map(opId).join(',')}`;
  let doc = built.get(key);
  if (!doc) built.set(key, doc = generate(ops, info));
  return doc;
}

function generate(ops: Operation[], info: { serverUrl?: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of ops.filter((o) => !o.hidden)) {
    const path = (paths[openApiPath(op.path)] ??= {});
    const body = writeOf(op)?.body;
    const responseHeaders: Record<string, unknown> = {
      RateLimit: { schema: { type: 'string' } }, 'RateLimit-Policy': { schema: { type: 'string' } },
    };
    if (op.etag) responseHeaders.ETag = { schema: { type: 'string' }, description: 'Strong entity tag for If-Match' };
    path[op.method.toLowerCase()] = {
      operationId: op.operationId,
      summary: op.summary,
      tags: [op.tag],
      security: [{ bearer: [] }],
      ...(op.roles ? { 'x-svc-roles': op.roles, description: `Requires one of the Roles: ${op.roles.join(', ')}.` } : {}),
      parameters: parameters(op),
      ...(body ? { requestBody: { required: true, content: { 'application/json': { schema: toSchema(body) } } } } : {}),
      responses: {
        ...Object.fromEntries([op.response.status, ...(op.response.also ?? [])].map((status) => [String(status), {
          description: op.response.description,
          headers: responseHeaders,
          ...(status !== 204 && (op.response.schema || op.response.mediaType)
            ? { content: { [op.response.mediaType ?? 'application/json']: { schema: op.response.schema ? toSchema(op.response.schema) : {} } } }
            : {}),
        }])),
        ...errorResponses(op),
      },
    };
  }
  paths['/oauth/token'] = {
    post: {
      operationId: 'createAccessToken',
      summary: 'Exchange client credentials for an access token (OAuth 2.0 client credentials)',
      tags: ['Authentication and identity'],
      security: [{ basic: [] }],
      requestBody: {
        required: true,
        content: { 'application/x-www-form-urlencoded': { schema: {
          type: 'object', required: ['grant_type', 'scope'],
          properties: { grant_type: { const: 'client_credentials' }, scope: { const: 'svc.api' } },
        } } },
      },
      responses: {
        200: { description: 'An access token', content: { 'application/json': { schema: {
          type: 'object', required: ['access_token', 'token_type', 'expires_in', 'scope'],
          properties: { access_token: { type: 'string' }, token_type: { const: 'Bearer' }, expires_in: { type: 'integer' }, scope: { const: 'svc.api' } },
        } } } },
        ...Object.fromEntries([400, 401, 429, 503].map((s) => [String(s), {
          description: Object.entries(TOKEN_ERRORS).filter(([, e]) => e.status === s).map(([c]) => c).join(', '),
          content: { 'application/json': { schema: { $ref: '#/components/schemas/OAuthError' } } },
        }])),
      },
    },
  };
  // The event catalogue: one entry per event name a webhook endpoint may subscribe to.
  const webhookHeaders = [
    { name: 'Svc-Webhook-Id', in: 'header', required: true, schema: { type: 'string' }, description: 'the event id (evt_…); deduplicate on it' },
    { name: 'Svc-Webhook-Timestamp', in: 'header', required: true, schema: { type: 'string' }, description: 'Unix seconds; reject more than 5 minutes from your clock' },
    { name: 'Svc-Webhook-Signature', in: 'header', required: true, schema: { type: 'string' },
      description: 'comma-separated v1=<lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the endpoint secret>; two values during a secret rotation' },
  ];
  const webhooks = Object.fromEntries(EVENT_TYPES.map((e) => [e.name, {
    post: {
      summary: e.description,
      description: `${e.subscribable ? 'Subscribable.' : 'Not subscribable: sent only by testWebhookEndpoint.'} Emitted by: ${
        e.emittedBy.length ? e.emittedBy.join(', ') : 'the control plane'}. \`data.object\` references a ${e.resourceType}; fetch it for its current state.`,
      tags: ['Webhook endpoints'],
      security: [{ webhookSignature: [] }],
      parameters: webhookHeaders,
      requestBody: { required: true, content: { 'application/json': { schema: {
        type: 'object', required: ['id', 'type', 'api_version', 'created_at', 'organization_id', 'data'],
        properties: {
          id: { type: 'string', pattern: '^evt_' }, type: { const: e.name }, api_version: { const: 'v1' },
          created_at: { type: 'string', format: 'date-time' }, organization_id: { type: 'string' },
          data: { type: 'object', required: ['object'], properties: { object: { type: 'object', required: ['type', 'id', 'version'],
            properties: { type: { const: e.resourceType }, id: { type: 'string' }, version: { type: 'integer' } } } } },
        },
      } } } },
      responses: { '2XX': { description: 'Accepted within 10 seconds; anything else is retried (429, 5xx, timeouts) or a permanent failure (other 4xx)' } },
    },
  }]));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Work-Management Service API',
      version: 'v1',
      description: 'A private JSON-over-HTTPS API for the non-human API Clients of one organization.\n\n'
        + `**Limits on every request** (checked before any other work): a JSON body of at most 1 MiB (413 PAYLOAD_TOO_LARGE), UTF-8, `
        + `at most ${BODY_LIMITS.depth} levels of nested arrays and objects (400 BODY_TOO_DEEP), ${BODY_LIMITS.members} members in one object `
        + `(400 BODY_OBJECT_TOO_LARGE), ${BODY_LIMITS.items} items in one array (400 BODY_ARRAY_TOO_LONG) and ${BODY_LIMITS.values} values in all `
        + `(400 BODY_TOO_MANY_VALUES), each naming the container in \`errors[0].pointer\`; no string may hold U+0000 or a lone surrogate `
        + `(422 VALIDATION_FAILED). The path and query string: at most ${MAX_URI_LENGTH} characters (414 URI_TOO_LONG), no %00 (400 INVALID_REQUEST). The request line and `
        + 'headers: at most 16 KiB (431 HEADERS_TOO_LARGE); `Idempotency-Key` 1 to 255 printable ASCII characters; `Last-Event-ID` an event '
        + 'id; a cursor at most 2048 characters. Free-form JSON fields state their own bounds (levels, bytes, key length) in their descriptions.',
      license: { name: 'Proprietary', url: 'https://svc.example/terms' },
    },
    servers: [{ url: info.serverUrl ?? '/' }],
    tags: [...new Set(ops.filter((o) => !o.hidden).map((o) => o.tag))].map((name) => ({ name, description: TAGS[name] ?? name })),
    paths,
    webhooks,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        basic: { type: 'http', scheme: 'basic' },
        webhookSignature: { type: 'apiKey', in: 'header', name: 'Svc-Webhook-Signature',
          description: 'How receivers authenticate our webhook requests: v1=<hex HMAC-SHA256 of "<Svc-Webhook-Timestamp>.<raw body>"> keyed with the endpoint secret' },
      },
      schemas: {
        Problem: toSchema(schemas.problem),
        OAuthError: {
          type: 'object', required: ['error', 'code'],
          properties: { error: { type: 'string' }, error_description: { type: 'string' }, code: { enum: Object.keys(TOKEN_ERRORS) } },
        },
      },
    },
  };
}
