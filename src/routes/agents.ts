// Agents and runs (spec "Agents and runs"): discovery, readiness, runs started as the client and
// executed by the worker (src/agents/engine.ts), actions, cancellation, and the run event stream.
import Joi from 'joi';
import { sql, type Expression, type SqlBool } from 'kysely';
import { PassThrough } from 'node:stream';
import type { Operation, StreamContext } from '../http/operation.ts';
import { header } from '../http/headers.ts';
import { ApiError, type FieldError } from '../http/errors.ts';
import { schemaErrors } from '../http/json-schema.ts';
import { api, type Declared } from '../db/api.ts';
import { schemas } from './schemas.ts';
import { freeJson, getStatement, idOf, listStatement, metadata, subject, timestamp } from './common.ts';
import { listQuery } from '../http/pagination.ts';

const agentParams = Joi.object({ agent_id: Joi.string().pattern(/^agt_[a-z0-9_]{1,64}$/).required() });
const runParams = Joi.object({ run_id: idOf('run').required() });
/** Events read per statement while a stream catches up. */
const STREAM_BATCH = 500;

const inputErrors = (agentId: string, schema: object, input: unknown): FieldError[] =>
  schemaErrors(`agent:${agentId}:${JSON.stringify(schema).length}`, schema, input, '/input', 'AGENT_INPUT_INVALID');

const modelAvailable = (ctx: { app: { config: { agents: { modelUrl?: string } } } }) => ctx.app.config.agents.modelUrl !== undefined;

export const agentOperations: Operation[] = [
  {
    kind: 'statement',
    operationId: 'listAgents', method: 'GET', path: '/v1/agents', tag: 'Agents',
    summary: 'Published agents that accept API Clients and whose required_roles the caller holds',
    query: Joi.object({ ...listQuery }),
    response: { status: 200, description: 'A page of agents', schema: schemas.list(schemas.agent) },
    statement: (ctx) => listStatement(ctx, 'api.agents', { expr: (eb) => eb.ref('sort_id'), type: 'text' }, 'asc', () => []),
  },
  {
    kind: 'statement',
    operationId: 'getAgent', method: 'GET', path: '/v1/agents/{agent_id}', tag: 'Agents', params: agentParams,
    summary: 'One agent: AGENT_NOT_PUBLISHED when the organization unpublished it',
    errors: ['AGENT_NOT_FOUND', 'AGENT_NOT_PUBLISHED', 'API_PRINCIPAL_NOT_SUPPORTED'],
    response: { status: 200, description: 'The agent', schema: schemas.agent },
    statement: ({ params }) => getStatement(api.rows('agent_get', params.agent_id),
      () => new ApiError('AGENT_NOT_FOUND', `no agent ${params.agent_id}`)),
  },
  {
    kind: 'handler',
    operationId: 'checkAgentReadiness', method: 'POST', path: '/v1/agents/{agent_id}/readiness', tag: 'Agents', params: agentParams,
    summary: 'Whether this client can start the agent with this input now, and every blocker (Role, principal type, license level, an unavailable skill, a connection that is not ready, the input); performs nothing',
    body: Joi.object({
      input: freeJson(Joi.object().unknown(true), { bytes: 65_536, depth: 8 }).default({}),
      subject: subject.allow(null).default(null),
    }),
    bodyOptional: true,
    errors: ['AGENT_NOT_FOUND', 'AGENT_NOT_PUBLISHED'],
    response: { status: 200, description: 'The readiness', schema: schemas.agentReadiness },
    handler: async (ctx) => {
      const { rows: [s] } = await api.value('agent_input_schema', ctx.params.agent_id).execute(ctx.tx);
      const problems = inputErrors(ctx.params.agent_id, s!.value as object, ctx.body.input)
        .map((e) => ({ code: 'AGENT_INPUT_INVALID', message: e.detail, pointer: e.pointer }));
      const { rows: [r] } = await api.value('agent_readiness', ctx.params.agent_id, ctx.body.subject, problems, modelAvailable(ctx))
        .execute(ctx.tx);
      return { body: r!.value };
    },
  },
  {
    kind: 'handler',
    operationId: 'createAgentRun', method: 'POST', path: '/v1/agents/{agent_id}/runs', tag: 'Agents', idempotencyKey: true,
    params: agentParams,
    summary: 'Start a run: 202 with the run, queued; the worker executes it as this client (every tool call checked as the client), and its events stream from GET /v1/runs/{run_id}/events',
    body: Joi.object({
      input: freeJson(Joi.object().unknown(true).description('valid against the agent\'s input_schema'), { bytes: 65_536, depth: 8 }).default({}),
      subject: subject.allow(null).default(null).description('a member the run acts for; only where the agent and its skills support one'),
      metadata: metadata.default({})
        .description('up to 20 keys of your own (at most 40 characters each) with string values of at most 500 characters, returned with the run'),
    }),
    errors: ['AGENT_NOT_FOUND', 'AGENT_NOT_PUBLISHED', 'API_PRINCIPAL_NOT_SUPPORTED', 'LICENSE_LEVEL_REQUIRED', 'SUBJECT_NOT_SUPPORTED',
      'AGENT_INPUT_INVALID', 'INTEGRATION_CONNECTION_NOT_READY', 'AGENT_UNAVAILABLE', 'INVALID_SUBJECT_MEMBER'],
    response: { status: 202, description: 'The run, queued', schema: schemas.run },
    handler: async (ctx) => {
      const id = ctx.params.agent_id;
      const metadataErrors = Object.entries(ctx.body.metadata as Record<string, unknown>)
        .filter(([k, v]) => k.length > 40 || typeof v !== 'string' || v.length > 500)
        .map(([k]) => ({ pointer: `/metadata/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, detail: 'metadata keys have at most 40 characters and values are strings of at most 500', code: 'VALIDATION_FAILED' }));
      if (metadataErrors.length) throw new ApiError('VALIDATION_FAILED', metadataErrors[0]!.detail, { errors: metadataErrors });
      const { rows: [s] } = await api.value('agent_input_schema', id).execute(ctx.tx);
      // Who may start it comes before what it was given: the first blocker answers.
      const { rows: [b] } = await api.value('agent_blockers', id, ctx.body.subject?.member_id ?? null, modelAvailable(ctx)).execute(ctx.tx);
      const first = (b!.value as { code: string; message: string }[])[0];
      if (first) {
        throw new ApiError(first.code as 'ROLE_REQUIRED', first.message,
          first.code === 'SUBJECT_NOT_SUPPORTED' ? { errors: [{ pointer: '/subject', detail: first.message, code: first.code }] } : {});
      }
      const errors = inputErrors(id, s!.value as object, ctx.body.input);
      if (errors.length) {
        throw new ApiError('AGENT_INPUT_INVALID', errors.length === 1 ? errors[0]!.detail : `${errors.length} problems; see errors`, { errors });
      }
      const { rows: [r] } = await api.value('agent_run_create', id, ctx.body.input, ctx.body.subject, ctx.body.metadata,
        modelAvailable(ctx)).execute(ctx.tx);
      const doc = r!.value as { id: string };
      return { status: 202, body: doc, headers: { Location: `/v1/runs/${doc.id}` } };
    },
  },
  {
    kind: 'statement',
    operationId: 'listRuns', method: 'GET', path: '/v1/runs', tag: 'Runs',
    summary: 'The calling client\'s runs, newest first',
    query: Joi.object({
      kind: Joi.string().valid('agent'),
      status: Joi.string().valid('queued', 'running', 'requires_action', 'succeeded', 'failed', 'cancelled'),
      agent_id: Joi.string().pattern(/^agt_[a-z0-9_]{1,64}$/),
      conversation_id: idOf('cnv'),
      created_after: timestamp,
      created_before: timestamp,
      ...listQuery,
    }),
    response: { status: 200, description: 'A page of runs', schema: schemas.list(schemas.run) },
    statement: (ctx) => {
      const q = ctx.query;
      return listStatement(ctx, 'api.runs', { expr: (eb) => eb.ref('created_at'), type: 'timestamptz' }, 'desc', (eb): Expression<SqlBool>[] => [
        ...(q.kind ? [eb('kind', '=', q.kind)] : []),
        ...(q.status ? [eb('status', '=', q.status)] : []),
        ...(q.agent_id ? [eb('agent_id', '=', q.agent_id)] : []),
        ...(q.conversation_id ? [eb('conversation_id', '=', q.conversation_id)] : []),
        ...(q.created_after ? [eb('created_at', '>', sql<Date>`${q.created_after}::timestamptz`)] : []),
        ...(q.created_before ? [eb('created_at', '<', sql<Date>`${q.created_before}::timestamptz`)] : []),
      ]);
    },
  },
  {
    kind: 'statement',
    operationId: 'getRun', method: 'GET', path: '/v1/runs/{run_id}', tag: 'Runs', params: runParams,
    summary: 'One of the calling client\'s runs (others: RUN_NOT_FOUND)',
    errors: ['RUN_NOT_FOUND'],
    response: { status: 200, description: 'The run', schema: schemas.run },
    statement: ({ params }) => getStatement(api.rows('run_get', params.run_id),
      () => new ApiError('RUN_NOT_FOUND', `no run ${params.run_id} of your client`)),
  },
  {
    kind: 'stream',
    operationId: 'streamRunEvents', method: 'GET', path: '/v1/runs/{run_id}/events', tag: 'Runs', params: runParams,
    summary: 'The run\'s events as text/event-stream (WHATWG): each with `id` (the run\'s sequence), `event` (its type) and `data` (JSON: id, type, created_at, data); `Last-Event-ID` resumes after that event; `: ping` comments keep an idle stream open; the stream ends after run.completed, run.failed or run.cancelled; resuming after the last event of a finished run answers 204 (an EventSource then stops reconnecting)',
    errors: ['RUN_NOT_FOUND', 'RUN_OUTPUT_EXPIRED'],
    response: { status: 200, also: [204], description: 'The event stream (204: nothing after Last-Event-ID, and the run has finished)', mediaType: 'text/event-stream', schema: Joi.string() },
    stream: streamRunEvents,
  },
  {
    kind: 'handler',
    operationId: 'submitRunAction', method: 'POST', path: '/v1/runs/{run_id}/actions', tag: 'Runs', idempotencyKey: true,
    params: runParams,
    summary: 'Answer a run that requires_action with one of the offered choices; the run is queued again. Never an approval, an identity assertion or a grant of permission',
    body: Joi.object({
      action_id: Joi.string().max(100).required(),
      response: Joi.object().unknown(true).required().description('valid against required_action.schema'),
    }),
    errors: ['RUN_NOT_FOUND', 'RUN_NOT_ACTIONABLE', 'RUN_ACTION_INVALID'],
    response: { status: 202, description: 'The run, queued again', schema: schemas.run },
    handler: async (ctx) => {
      const { rows: [r] } = await api.rows('run_get', ctx.params.run_id).execute(ctx.tx);
      if (!r) throw new ApiError('RUN_NOT_FOUND', `no run ${ctx.params.run_id} of your client`);
      const doc = r.doc as { status: string; required_action: { id: string; schema: object } | null };
      const action = doc.required_action;
      if (doc.status !== 'requires_action' || !action) {
        throw new ApiError('RUN_NOT_ACTIONABLE', `the run is ${doc.status}; actions are accepted only while it requires_action`);
      }
      if (ctx.body.action_id !== action.id) {
        throw new ApiError('RUN_ACTION_INVALID', `the run waits for action ${action.id}`,
          { errors: [{ pointer: '/action_id', detail: `the run waits for action ${action.id}`, code: 'RUN_ACTION_INVALID' }] });
      }
      const errors = schemaErrors(`action:${ctx.params.run_id}:${action.id}`, action.schema, ctx.body.response, '/response', 'RUN_ACTION_INVALID');
      if (errors.length) {
        throw new ApiError('RUN_ACTION_INVALID', errors.length === 1 ? errors[0]!.detail : `${errors.length} problems; see errors`, { errors });
      }
      const { rows: [done] } = await api.value('run_submit_action', ctx.params.run_id, ctx.body.action_id, ctx.body.response).execute(ctx.tx);
      return { status: 202, body: done!.value };
    },
  },
  {
    kind: 'handler',
    operationId: 'cancelRun', method: 'POST', path: '/v1/runs/{run_id}/cancel', tag: 'Runs', idempotencyKey: true, params: runParams,
    summary: 'Cancel a run (best effort): the effects of tool operations that completed stay, and the run lists them; RUN_CANCEL_NOT_AVAILABLE while it is applying one',
    errors: ['RUN_NOT_FOUND', 'RUN_ALREADY_TERMINAL', 'RUN_CANCEL_NOT_AVAILABLE'],
    response: { status: 200, description: 'The cancelled run', schema: schemas.run },
    handler: async (ctx) => {
      const { rows: [r] } = await api.value('run_cancel', ctx.params.run_id).execute(ctx.tx);
      return { body: r!.value };
    },
  },
];

interface EventRow { seq: number; type: string; data: unknown; created_at: string; terminal: boolean }

/** WHATWG server-sent events from the run's durable log: replay after Last-Event-ID, then wake-ups
 * from the process's one listener; no connection is held while the stream is idle. */
async function streamRunEvents(ctx: StreamContext): Promise<import('@hapi/hapi').ResponseObject> {
  const { app, request, params } = ctx;
  const runId: string = params.run_id;
  const raw = header(request, 'last-event-id')?.trim();
  if (raw && !/^\d{1,9}$/.test(raw)) {
    throw new ApiError('INVALID_REQUEST', 'Last-Event-ID must be the id of an event of this stream',
      { errors: [{ pointer: '/headers/last-event-id', detail: 'not an event id of this stream', code: 'INVALID_REQUEST' }] });
  }
  const after = raw ? Number(raw) : 0;
  // One statement a read (the token checked in it), pipelined with other point reads: a wake-up
  // reaches every stream of the run at once.
  const read = async (from: number) => await ctx.rows(api.rows('run_events_after', runId, from, STREAM_BATCH)) as EventRow[];

  const leave = app.runEvents.admit(ctx.clientId, app.config.agents.streamsPerClient);
  if (!leave) {
    throw new ApiError('RATE_LIMITED', `at most ${app.config.agents.streamsPerClient} event streams of one client may be open at once; close one first`,
      { headers: { 'Retry-After': '5' } });
  }
  try {
    return await openRunEventStream(ctx, read, after, leave);
  } catch (e) {
    leave();
    throw e;
  }
}

async function openRunEventStream(ctx: StreamContext, read: (from: number) => Promise<EventRow[]>, after: number,
  leave: () => void): Promise<import('@hapi/hapi').ResponseObject> {
  const { app, request, h } = ctx;
  const runId: string = ctx.params.run_id;
  const out = new PassThrough();
  let ended = false;
  let busy = false;
  let dirty = false;
  let heartbeat: NodeJS.Timeout | undefined;
  let unsubscribe = () => {};
  const finish = () => {
    if (ended) return;
    ended = true;
    clearTimeout(heartbeat);
    unsubscribe();
    leave();
    out.end();
  };
  const write = (rows: EventRow[]) => {
    for (const e of rows) {
      const data = JSON.stringify({ id: String(e.seq), type: e.type, created_at: e.created_at, data: e.data });
      out.write(`id: ${e.seq}\nevent: ${e.type}\ndata: ${data}\n\n`);
      after = e.seq;
      if (e.terminal) return true;
    }
    return false;
  };
  const pump = async () => {
    if (busy || ended) return;
    busy = true;
    try {
      while (dirty && !ended) {
        dirty = false;
        const rows = await read(after);
        if (ended) return;
        if (write(rows)) return finish();
        if (rows.length === STREAM_BATCH) dirty = true;
      }
    } catch (e) {
      // The token expired or was revoked, the run went, or the database is away: the stream ends,
      // and the client reconnects with Last-Event-ID (and a new token).
      app.logger.debug({ err: (e as Error).message, route: '/v1/runs/{run_id}/events' }, 'run event stream ended');
      finish();
    } finally {
      busy = false;
    }
  };
  // Subscribe, then read: an event appended in between is read now or wakes the stream. Until
  // that first read is written, wake-ups only mark the stream dirty (busy), so nothing is sent twice.
  busy = true;
  unsubscribe = await app.runEvents.subscribe(runId, { wake: () => { dirty = true; void pump(); }, close: finish });
  let first: EventRow[];
  try {
    first = await read(after);
  } catch (e) {
    unsubscribe();
    throw e;
  }
  busy = false;
  if (first.length === 0 && after > 0 && await ctx.read(async (tx) => (await runFinished(runId).execute(tx)).rows[0]?.finished)) {
    // Resumed after the last event of a finished run: 204 tells an EventSource not to reconnect
    // (WHATWG HTML, server-sent events); a 200 that ends at once would be reconnected to forever.
    unsubscribe();
    leave();
    const done = h.response().code(204);
    for (const [k, v] of Object.entries(ctx.headers)) done.header(k, v);
    return done;
  }
  // A client gone before the first write ends the stream too (no heartbeat left behind).
  request.raw.res.once('close', finish);
  out.write(`retry: 2000\n\n`);
  if (write(first)) {
    finish();
  } else {
    if (first.length === STREAM_BATCH) dirty = true;
    // Each heartbeat also reads (with the token checked again), so an idle stream of a revoked
    // client or an expired token ends within one heartbeat.
    // The first beat comes at a random point of the first interval, so that streams opened
    // together (a reconnecting fleet) do not all read in the same instant ever after.
    const beat = () => {
      if (ended) return;
      out.write(': ping\n\n');
      dirty = true;
      void pump();
    };
    const every = app.config.agents.streamHeartbeatMs;
    heartbeat = setTimeout(() => {
      beat();
      if (!ended) heartbeat = setInterval(beat, every);
    }, Math.ceil(every * Math.random()));
    if (request.raw.res.destroyed || request.raw.req.destroyed) finish();
    else void pump();
  }
  // No compression: a gzip stream would hold events back until its buffer fills.
  (request.info as { acceptEncoding: string | null }).acceptEncoding = 'identity';
  const res = h.response(out).code(200).type('text/event-stream')
    .header('Cache-Control', 'no-cache, no-store')
    .header('X-Accel-Buffering', 'no');
  for (const [k, v] of Object.entries(ctx.headers)) res.header(k, v);
  return res;
}

/** Whether a run has ended: one row, `finished`. */
export const FINISHED_COLUMNS = { finished: 'bool' } as const;
export const runFinished = (runId: string) => sql<Declared<typeof FINISHED_COLUMNS>>`
  select r.doc->>'status' in ('succeeded', 'failed', 'cancelled') as finished from (${api.rows('run_get', runId)}) r`;
