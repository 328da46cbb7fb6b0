import Joi from 'joi';
import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import { randomBytes } from 'node:crypto';
import type { Operation, OperationContext, PreflightContext } from '../http/operation.ts';
import { READY } from '../http/operation/statement.ts';
import { ApiError } from '../http/errors.ts';
import { api, build, type Declared } from '../db/api.ts';
import type { Tx } from '../db/database.ts';
import { seal, unseal } from '../auth/sealing.ts';
import { assertSafeUrl, newWebhookSecret, verifyEndpoint, webhookSecretKey } from '../webhooks/transport.ts';
import { schemas } from './schemas.ts';
import { idOf, listStatement, sortQuery, type SortSpec } from './common.ts';

const endpointId = Joi.object({ endpoint_id: idOf('whe').required() });
const deliveryParams = Joi.object({ endpoint_id: idOf('whe').required(), delivery_id: idOf('whd').required() });
const url = Joi.string().max(2048).description('an https URL on the public internet');
const events = Joi.array().items(Joi.string().max(100)).min(1).max(100).description('event names of the catalogue (OpenAPI `webhooks`)');
const description = Joi.string().max(1000).allow('', null);

const SORTS: Record<string, SortSpec<'api.webhook_endpoints'>> = { created_at: { expr: (eb) => eb.ref('created_at'), type: 'timestamptz' } };
const DELIVERY_SORTS: Record<string, SortSpec<'api.webhook_deliveries'>> = { created_at: { expr: (eb) => eb.ref('created_at'), type: 'timestamptz' } };

interface EndpointRow { doc: Record<string, unknown>; version: number; secret_sealed: string; organization_id: string; status: string }

async function endpointRow(tx: Tx, id: string): Promise<EndpointRow> {
  const row = await tx.selectFrom('api.webhook_endpoints')
    .select(['doc', 'version', 'secret_sealed', 'organization_id', 'status']).where('id', '=', id).executeTakeFirst();
  if (!row) throw new ApiError('WEBHOOK_ENDPOINT_NOT_FOUND', `no webhook endpoint ${id} of your client`);
  return {
    doc: row.doc as Record<string, unknown>, version: row.version!, secret_sealed: row.secret_sealed!,
    organization_id: row.organization_id!, status: row.status!,
  };
}

const endpoint = (ctx: OperationContext, id: string) => endpointRow(ctx.tx, id);

async function one(ctx: OperationContext, q: RawBuilder<{ doc: unknown; version: number | null }>) {
  const { rows: [row] } = await q.execute(ctx.tx);
  return { body: row!.doc as Record<string, unknown>, version: row!.version ?? undefined };
}

// Challenges run before the write's transaction (no connection is held while a receiver
// thinks), one at a time per client and at most MAX_CHALLENGES at once per process.
const MAX_CHALLENGES = 16;
const challenging = new Set<string>();

async function challenge(ctx: PreflightContext, row: { id: string; url: string; version: number }, secret: string) {
  const client = ctx.principal.clientId;
  if (challenging.has(client) || challenging.size >= MAX_CHALLENGES) {
    throw new ApiError('RATE_LIMITED', 'a verification challenge of this client is already in progress; retry when it ends',
      { headers: { 'Retry-After': String(Math.ceil(ctx.app.config.webhooks.timeoutMs / 1000)) } });
  }
  challenging.add(client);
  try {
    await verifyEndpoint(ctx.app.webhooks, {
      url: row.url, secret, endpointId: row.id, organizationId: ctx.principal.organizationId, version: row.version,
      eventId: 'evt_' + randomBytes(8).toString('hex'),
    });
  } finally {
    challenging.delete(client);
  }
}

async function endpointForPreflight(ctx: PreflightContext): Promise<EndpointRow> {
  return ctx.read((tx) => endpointRow(tx, ctx.params.endpoint_id));
}

const sealKey = (ctx: OperationContext) => webhookSecretKey(ctx.app.config.secretKey);

export const webhookOperations: Operation[] = [
  {
    kind: 'handler',
    operationId: 'createWebhookEndpoint', method: 'POST', path: '/v1/webhook-endpoints', tag: 'Webhook endpoints',
    summary: 'Register an HTTPS endpoint; it must answer the verification challenge. Returns the signing secret once.',
    idempotencyKey: true, oneTimeSecret: true,
    body: Joi.object({ url: url.required(), events: events.required(), description }),
    fieldCodes: { '/url': 'WEBHOOK_URL_UNSAFE', '/events/*': 'WEBHOOK_EVENT_NOT_SUPPORTED' },
    errors: ['WEBHOOK_EVENT_NOT_SUPPORTED', 'WEBHOOK_URL_UNSAFE', 'WEBHOOK_VERIFICATION_FAILED', 'WEBHOOK_SECRET_NOT_AVAILABLE'],
    response: { status: 201, description: 'The endpoint, enabled, with its secret', schema: schemas.webhookEndpoint },
    preflight: async (ctx) => {
      const safe = await assertSafeUrl(ctx.body.url, ctx.app.config.webhooks);
      const id = await ctx.read(async (tx) => (await NEW_ENDPOINT_ID.execute(tx)).rows[0]!.id!);
      const secret = newWebhookSecret();
      await challenge(ctx, { id, url: safe.href, version: 1 }, secret);
      return { id, url: safe.href, secret };
    },
    handler: async (ctx) => {
      const { body } = ctx;
      if (!ctx.preflight) throw new ApiError('CONFLICT', 'the request changed state while it was under way; retry it');
      const { id, url: safeUrl, secret } = ctx.preflight as { id: string; url: string; secret: string };
      const r = await one(ctx, api.rows('webhook_endpoint_create', id, safeUrl, body.events, body.description ?? null,
        seal(sealKey(ctx), secret)));
      return { ...r, status: 201, body: { ...r.body, secret }, headers: { Location: `/v1/webhook-endpoints/${id}` } };
    },
  },
  {
    kind: 'statement',
    operationId: 'listWebhookEndpoints', method: 'GET', path: '/v1/webhook-endpoints', tag: 'Webhook endpoints',
    summary: "The calling client's endpoints",
    query: Joi.object({ status: Joi.string().valid('enabled', 'disabled'), ...sortQuery(SORTS, 'created_at', 'desc') }),
    response: { status: 200, description: 'A page of endpoints', schema: schemas.list(schemas.webhookEndpoint) },
    statement: (ctx) => listStatement(ctx, 'api.webhook_endpoints', SORTS.created_at!, ctx.query.order, (eb) => {
      const where: Expression<SqlBool>[] = [];
      if (ctx.query.status) where.push(eb('status', '=', ctx.query.status));
      return where;
    }),
  },
  {
    kind: 'handler',
    operationId: 'getWebhookEndpoint', method: 'GET', path: '/v1/webhook-endpoints/{endpoint_id}', tag: 'Webhook endpoints',
    summary: 'One endpoint (never its secret)', etag: true, params: endpointId,
    errors: ['WEBHOOK_ENDPOINT_NOT_FOUND'],
    response: { status: 200, description: 'The endpoint', schema: schemas.webhookEndpoint },
    handler: async (ctx) => {
      const row = await endpoint(ctx, ctx.params.endpoint_id);
      return { body: row.doc, version: row.version };
    },
  },
  {
    kind: 'handler',
    operationId: 'updateWebhookEndpoint', method: 'PATCH', path: '/v1/webhook-endpoints/{endpoint_id}', tag: 'Webhook endpoints',
    summary: 'Change url, events or description; a new url must answer the verification challenge',
    ifMatch: true, etag: true, params: endpointId,
    body: Joi.object({ url, events, description }).min(1),
    fieldCodes: { '/url': 'WEBHOOK_URL_UNSAFE', '/events/*': 'WEBHOOK_EVENT_NOT_SUPPORTED' },
    errors: ['WEBHOOK_ENDPOINT_NOT_FOUND', 'WEBHOOK_EVENT_NOT_SUPPORTED', 'WEBHOOK_URL_UNSAFE', 'WEBHOOK_VERIFICATION_FAILED', 'IMMUTABLE_FIELD'],
    response: { status: 200, description: 'The endpoint', schema: schemas.webhookEndpoint },
    preflight: async (ctx) => {
      if (ctx.body.url === undefined) return {};
      const before = await endpointForPreflight(ctx);
      const safe = await assertSafeUrl(ctx.body.url, ctx.app.config.webhooks);
      // Unchanged, or a stale If-Match (the write will answer 412): nothing to verify.
      if (safe.href === before.doc.url || !ctx.ifMatch.includes(before.version)) return { url: safe.href };
      await challenge(ctx, { id: ctx.params.endpoint_id, url: safe.href, version: before.version + 1 },
        unseal(webhookSecretKey(ctx.app.config.secretKey), before.secret_sealed));
      return { url: safe.href, verifiedUrl: safe.href };
    },
    handler: async (ctx) => {
      const patch = { ...ctx.body, ...(ctx.preflight?.url ? { url: ctx.preflight.url } : {}) };
      return one(ctx, api.rows('webhook_endpoint_update', ctx.params.endpoint_id, ctx.ifMatch, patch, ctx.preflight?.verifiedUrl ?? null));
    },
  },
  {
    kind: 'handler',
    operationId: 'rotateWebhookEndpointSecret', method: 'POST', path: '/v1/webhook-endpoints/{endpoint_id}/rotate-secret',
    tag: 'Webhook endpoints', idempotencyKey: true, oneTimeSecret: true, bodyOptional: true, params: endpointId, etag: true,
    summary: 'A new signing secret, shown once; the previous one keeps signing for previous_secret_expires_in seconds (default 86400)',
    body: Joi.object({ previous_secret_expires_in: Joi.number().integer().min(0).max(604800).default(86400) }),
    errors: ['WEBHOOK_ENDPOINT_NOT_FOUND', 'WEBHOOK_SECRET_NOT_AVAILABLE'],
    response: { status: 200, description: 'The endpoint with its new secret', schema: schemas.webhookEndpoint },
    handler: async (ctx) => {
      const secret = newWebhookSecret();
      const r = await one(ctx, api.rows('webhook_endpoint_rotate', ctx.params.endpoint_id,
        seal(sealKey(ctx), secret), ctx.body.previous_secret_expires_in ?? 86400));
      return { ...r, body: { ...r.body, secret } };
    },
  },
  {
    kind: 'handler',
    operationId: 'disableWebhookEndpoint', method: 'POST', path: '/v1/webhook-endpoints/{endpoint_id}/disable',
    tag: 'Webhook endpoints', idempotencyKey: true, params: endpointId, etag: true,
    summary: 'Stop deliveries; pending ones are cancelled when their turn comes',
    errors: ['WEBHOOK_ENDPOINT_NOT_FOUND'],
    response: { status: 200, description: 'The disabled endpoint', schema: schemas.webhookEndpoint },
    handler: (ctx) => one(ctx, api.rows('webhook_endpoint_set_status', ctx.params.endpoint_id, 'disabled')),
  },
  {
    kind: 'handler',
    operationId: 'enableWebhookEndpoint', method: 'POST', path: '/v1/webhook-endpoints/{endpoint_id}/enable',
    tag: 'Webhook endpoints', idempotencyKey: true, params: endpointId, etag: true,
    summary: 'Resume deliveries; the endpoint must answer the verification challenge again',
    errors: ['WEBHOOK_ENDPOINT_NOT_FOUND', 'WEBHOOK_VERIFICATION_FAILED'],
    response: { status: 200, description: 'The enabled endpoint', schema: schemas.webhookEndpoint },
    preflight: async (ctx) => {
      const before = await endpointForPreflight(ctx);
      if (before.status === 'enabled') return { verified: false };
      await challenge(ctx, { id: ctx.params.endpoint_id, url: before.doc.url as string, version: before.version + 1 },
        unseal(webhookSecretKey(ctx.app.config.secretKey), before.secret_sealed));
      return { verified: true };
    },
    handler: (ctx) => one(ctx, api.rows('webhook_endpoint_set_status', ctx.params.endpoint_id, 'enabled',
      ctx.preflight?.verified === true)),
  },
  {
    kind: 'statement',
    operationId: 'listWebhookDeliveries', method: 'GET', path: '/v1/webhook-endpoints/{endpoint_id}/deliveries',
    tag: 'Webhook endpoints', params: endpointId,
    summary: 'Deliveries to one endpoint (kept 30 days), newest first',
    query: Joi.object({
      status: Joi.string().valid('pending', 'succeeded', 'failed', 'cancelled'),
      event_type: Joi.string().max(100),
      event_id: idOf('evt'),
      ...sortQuery(DELIVERY_SORTS, 'created_at', 'desc'),
    }),
    errors: ['WEBHOOK_ENDPOINT_NOT_FOUND'],
    response: { status: 200, description: 'A page of deliveries', schema: schemas.list(schemas.webhookDelivery) },
    statement: (ctx) => {
      const id: string = ctx.params.endpoint_id;
      const page = listStatement(ctx, 'api.webhook_deliveries', DELIVERY_SORTS.created_at!, ctx.query.order, (eb) => {
        const where: Expression<SqlBool>[] = [eb('endpoint_id', '=', id)];
        if (ctx.query.status) where.push(eb('status', '=', ctx.query.status));
        if (ctx.query.event_type) where.push(eb('event_type', '=', ctx.query.event_type));
        if (ctx.query.event_id) where.push(eb('event_id', '=', ctx.query.event_id));
        return where;
      });
      // `exists (select from api.webhook_endpoints where id = … and READY)`: the builder's subquery brings its parentheses.
      const found = build.selectFrom('api.webhook_endpoints').where('id', '=', id).where(READY);
      return {
        query: sql`select exists ${found} as endpoint_found, l.*
                     from (${page.query}) l`,
        respond: (row) => {
          if (!row?.endpoint_found) throw new ApiError('WEBHOOK_ENDPOINT_NOT_FOUND', `no webhook endpoint ${id} of your client`);
          return page.respond(row);
        },
      };
    },
  },
  {
    kind: 'handler',
    operationId: 'getWebhookDelivery', method: 'GET', path: '/v1/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}',
    tag: 'Webhook endpoints', params: deliveryParams,
    summary: 'One delivery with every attempt (status, duration, error category)',
    errors: ['WEBHOOK_ENDPOINT_NOT_FOUND', 'WEBHOOK_DELIVERY_NOT_FOUND'],
    response: { status: 200, description: 'The delivery', schema: schemas.webhookDelivery },
    handler: async (ctx) => {
      await endpoint(ctx, ctx.params.endpoint_id);
      const { rows: [row] } = await api.rows('webhook_delivery_get', ctx.params.endpoint_id, ctx.params.delivery_id)
        .execute(ctx.tx);
      if (!row) throw new ApiError('WEBHOOK_DELIVERY_NOT_FOUND', `no delivery ${ctx.params.delivery_id} of endpoint ${ctx.params.endpoint_id}`);
      return { body: row.doc };
    },
  },
  {
    kind: 'handler',
    operationId: 'replayWebhookDelivery', method: 'POST',
    path: '/v1/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/replay', tag: 'Webhook endpoints',
    idempotencyKey: true, params: deliveryParams,
    summary: 'A new delivery of the same event (same event id) inside the 30-day window',
    errors: ['WEBHOOK_ENDPOINT_NOT_FOUND', 'WEBHOOK_DELIVERY_NOT_FOUND', 'WEBHOOK_REPLAY_EXPIRED'],
    response: { status: 202, description: 'The new delivery, queued', schema: schemas.webhookDelivery },
    handler: async (ctx) => {
      const { rows: [row] } = await api.rows('webhook_delivery_replay', ctx.params.endpoint_id, ctx.params.delivery_id)
        .execute(ctx.tx);
      return { status: 202, body: row!.doc };
    },
  },
  {
    kind: 'handler',
    operationId: 'testWebhookEndpoint', method: 'POST', path: '/v1/webhook-endpoints/{endpoint_id}/test', tag: 'Webhook endpoints',
    idempotencyKey: true, params: endpointId,
    summary: 'Send a signed webhook_endpoint.test event to this endpoint',
    errors: ['WEBHOOK_ENDPOINT_NOT_FOUND'],
    response: { status: 202, description: 'The test delivery, queued', schema: schemas.webhookDelivery },
    handler: async (ctx) => {
      const { rows: [row] } = await api.rows('webhook_endpoint_test', ctx.params.endpoint_id).execute(ctx.tx);
      return { status: 202, body: row!.doc };
    },
  },
];

/** A new endpoint's id, made before its challenge. */
export const ID_COLUMNS = { id: 'text' } as const;
export const NEW_ENDPOINT_ID = sql<Declared<typeof ID_COLUMNS>>`select app_private.new_id('whe') as id`;
