// The OpenAPI 3.1 document, generated from the same Operation definitions that serve requests.
import type Joi from 'joi';
import joiToJson from 'joi-to-json';
import type { Operation } from './operation.ts';
import { PROBLEMS } from './errors.ts';
import { TOKEN_ERRORS } from '../routes/oauth.ts';
import { schemas } from '../routes/schemas.ts';
import { EVENT_TYPES } from '../events/catalog.ts';

const toSchema = (s: Joi.Schema) => (joiToJson as unknown as (s: Joi.Schema, type: string) => unknown)(s, 'open-api-3.1') as Record<string, unknown>;
const openApiPath = (p: string) => p.replace(/\{(\w+)\??\}/g, '{$1}');

function parameters(op: Operation) {
  const out: Record<string, unknown>[] = [];
  for (const [where, schema] of [['path', op.params], ['query', op.query]] as const) {
    if (!schema) continue;
    const json = toSchema(schema) as { properties?: Record<string, any>; required?: string[] };
    for (const [name, prop] of Object.entries(json.properties ?? {})) {
      const { description, ...rest } = prop;
      out.push({ name, in: where, required: where === 'path' || (json.required ?? []).includes(name), description, schema: rest });
    }
  }
  if (op.idempotencyKey) {
    out.push({ name: 'Idempotency-Key', in: 'header', required: true, schema: { type: 'string', minLength: 1, maxLength: 255 },
      description: 'Unique per intended effect; replays return the stored response for 24 hours' });
  }
  if (op.ifMatch) {
    out.push({ name: 'If-Match', in: 'header', required: true, schema: { type: 'string' }, description: 'The ETag from the last read' });
  }
  if (op.schemaVersion) {
    out.push({ name: 'Svc-Schema-Version', in: 'header', required: false, schema: { type: 'integer', minimum: 1 },
      description: 'The schema_version of the object type you read; a mismatch answers 409 OBJECT_SCHEMA_CHANGED' });
  }
  out.push({ name: 'X-Client-Request-Id', in: 'header', required: false, schema: { type: 'string', maxLength: 200 },
    description: 'Echoed back and logged' });
  return out;
}

const problemRef = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };

function errorResponses(op: Operation) {
  const statuses = new Set([400, 401, 403, 404, 409, 422, 429, 500]);
  if (op.ifMatch) { statuses.add(412); statuses.add(428); }
  return Object.fromEntries([...statuses].sort().map((s) => [String(s), {
    description: Object.entries(PROBLEMS).filter(([, p]) => p.status === s).map(([c]) => c).join(', ') || 'Error',
    content: problemRef,
  }]));
}

export function buildOpenApi(ops: Operation[], info: { serverUrl?: string } = {}) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of ops.filter((o) => !o.hidden)) {
    const path = (paths[openApiPath(op.path)] ??= {});
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
      ...(op.body ? { requestBody: { required: true, content: { 'application/json': { schema: toSchema(op.body) } } } } : {}),
      responses: {
        [String(op.response.status)]: {
          description: op.response.description,
          headers: responseHeaders,
          ...(op.response.schema ? { content: { 'application/json': { schema: toSchema(op.response.schema) } } } : {}),
        },
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
        ...Object.fromEntries([400, 401, 429].map((s) => [String(s), {
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
      description: 'A private JSON-over-HTTPS API for the non-human API Clients of one organization.',
    },
    servers: [{ url: info.serverUrl ?? '/' }],
    tags: [...new Set(ops.filter((o) => !o.hidden).map((o) => o.tag))].map((name) => ({ name })),
    paths,
    webhooks,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        basic: { type: 'http', scheme: 'basic' },
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
