// The background worker: graphile-worker drains the outbox the database triggers fill.
//   fan-out (not a job: startFanout, woken by NOTIFY svc_webhook_fanout at an event's commit and by a
//                   poll): pending events claimed in batches, deliveries for the endpoints whose client
//                   may read the resource, judged by the API's own views as svc_runtime, and their
//                   first attempts, sent at once;
//   webhook_fanout  (one per event, only jobs queued before the batched fan-out): the same, per event;
//   webhook_deliver (one per retry or replay): re-checks the client's access, signs, POSTs, records;
//   webhook_purge   (daily, crontab): 30-day retention of events, deliveries and attempts;
//   token_purge     (hourly, crontab): expired access-token records;
//   accounting_sync (one per issued or voided synchronized invoice): the provider adapter's call,
//                   and the provider-neutral outcome on the invoice.
//   file_scan       (one per completed upload): clamd scans the bytes; the file becomes ready or rejected;
//   upload_purge    (hourly, crontab): uploads that never completed, with their bytes;
//   report_run      (one per createReportRun): the report in one snapshot, as the requesting client;
//   report_purge    (hourly, crontab): results past their run's expires_at;
//   agent_run       (one per queued run: created, or answered through submitRunAction): the agent,
//                   every tool call checked and audited in SQL as the run's client (src/agents/engine.ts);
//   run_purge       (hourly, crontab): output and events of runs finished longer ago than the retention;
//   conversation_expire (daily, crontab): working contexts idle for 30 days start afresh (history kept);
//   citus_prepare   (every minute, crontab, on Citus only): shard groups moved by hand made ready;
//   ticket_reply_email (one per reply): the reply and its attachments to the requester, by SMTP;
//                   the outcome on the message (sent, or failed when refused or out of attempts).
// A timer re-queues attempts whose worker died mid-flight (their lease ran out).
// Every job runs as svc_worker (config.workerDatabaseUrl: owner of nothing, no credential, db/README.md
// "Schemas and roles").
import postgres from 'postgres';
import pg from 'pg';
import { nodePostgresConfig } from '../db/url.ts';
import { Logger, run, type JobHelpers, type Runner, type Task, type TaskList } from 'graphile-worker';
import type { Config } from '../config.ts';
import { unseal } from '../auth/sealing.ts';
import { accountingProvider, ProviderError, type AccountingCustomer, type AccountingInvoice } from '../accounting/providers.ts';
import { classify, createTransport, signedRequest, webhookSecretKey, type EventEnvelope, type Transport } from '../webhooks/transport.ts';
import type { Logger as Pino } from 'pino';
import { createLogger } from '../observability/logger.ts';
import { createMetrics, type Metrics } from '../observability/metrics.ts';
import { isConnectionFailure, reconnectBackoff } from '../db/faults.ts';
import { scan, ScannerUnavailable } from '../files/clamd.ts';
import { createMailer, type Mailer } from '../invoices/mailer.ts';
import { ApiError } from '../http/errors.ts';
import { executeRun } from '../agents/engine.ts';
import { wakeable } from './wake.ts';

interface EventRow { id: string; organization_id: string; type: string; resource_type: string; resource_id: string; resource_version: number; created_at: Date }

/** graphile-worker's log lines through pino (its debug chatter stays at debug). */
const graphileLogger = (log: Pino) => new Logger((scope) => {
  const child = log.child({ component: 'graphile-worker', ...(scope.taskIdentifier ? { task: scope.taskIdentifier } : {}),
    ...(scope.jobId ? { job_id: scope.jobId } : {}) });
  return (level, message) => {
    const pinoLevel = level === 'warning' ? 'warn' : level;
    child[pinoLevel as 'error' | 'warn' | 'info' | 'debug'](message);
  };
});

export function envelopeOf(ev: EventRow): EventEnvelope {
  return {
    id: ev.id, type: ev.type, api_version: 'v1', created_at: ev.created_at.toISOString(), organization_id: ev.organization_id,
    data: { object: { type: ev.resource_type, id: ev.resource_id, version: ev.resource_version } },
  };
}

interface ClaimRow {
  attempt: number; url: string; secret_sealed: string; previous_secret_sealed: string | null; event_id: string;
  organization_id: string; type: string; resource_type: string; resource_id: string; resource_version: number; created_at: Date;
}

const leaseSecondsOf = (config: Config) => Math.ceil(config.webhooks.timeoutMs / 1000) + 5;

/** One statement decides who receives the event and claims the first attempts
 * (app_private.webhook_fanout); they are sent at once, in this job. */
export async function fanout(sql: postgres.Sql, config: Config, transport: Transport, organizationId: string, eventId: string,
  metrics?: Metrics): Promise<string[]> {
  const rows = await sql<(ClaimRow & { delivery_id: string })[]>`
    select * from app_private.webhook_fanout(${organizationId}, ${eventId}, ${leaseSecondsOf(config)})`;
  return Promise.all(rows.map((c) => send(sql, config, transport, c.delivery_id, c, metrics)));
}

type FanoutRow = Omit<ClaimRow, 'attempt' | 'url' | 'secret_sealed'> & { delivery_id: string | null; attempt: number | null;
  url: string | null; secret_sealed: string | null };

export interface FanoutOptions {
  log: Pino; metrics?: Metrics; pollInterval: number; batch: number; maxInFlight: number;
  /** Claims at once (default 2): a claim is CPU-bound in one PostgreSQL backend, `skip locked` keeps them apart. */
  parallelClaims?: number;
  /** On Citus: events are claimed one organization at a time, each in its worker (a claim that
   * locks rows of every shard is refused there). */
  byOrganization?: () => boolean;
}

/** The fan-out loop: claims up to `batch` pending events per statement (app_private.webhook_fanout_any on one
 * server, webhook_fanout_batch organization by organization on Citus;
 * `skip locked`, so any number of workers share the queue) and sends their first attempts at once,
 * with at most `maxInFlight` attempts open. Woken by the events' commits (NOTIFY svc_webhook_fanout)
 * and every `pollInterval` (a notification lost while the listener reconnects costs one poll). Under
 * load, events pile up while a claim runs and the next claim takes them together: one statement and
 * one commit for many events instead of a job fetch, a fan-out and a job completion for each. */
export function startFanout(sql: postgres.Sql, config: Config, transport: Transport, o: FanoutOptions): { stop: () => Promise<void>; wake: () => void } {
  const lease = leaseSecondsOf(config);
  const sending = new Set<Promise<unknown>>();
  /** Room promised to the claims in flight, so that parallel claims stay within maxInFlight together. */
  let claiming = 0;
  /** A pass stopped for want of room (taken by sends, or promised to a claim in flight whose
   * snapshot may predate the events it was woken for): the next claim or send to end wakes the
   * claims again. Set only by such a pass and cleared only by that wake-up, so a claim that ends
   * with room to spare cannot hide it (an event would then wait for the poll). */
  let starved = false;
  const roomFreed = () => {
    if (starved) { starved = false; pump(); }
  };
  let stopped = false;

  const claim = async (limit: number): Promise<{ rows: FanoutRow[]; events: number }> => {
    try {
      if (!o.byOrganization?.()) {
        const rows = await sql<FanoutRow[]>`select * from app_private.webhook_fanout_any(${limit}, ${lease})`;
        return { rows, events: new Set(rows.map((r) => r.event_id)).size };
      }
      const rows: FanoutRow[] = [];
      for (const { organization_id } of await sql<{ organization_id: string }[]>`
        select organization_id from app_private.webhook_fanout_organizations(${limit}) as organization_id`) {
        const left = limit - new Set(rows.map((r) => r.event_id)).size;
        if (left <= 0) break;
        rows.push(...await sql<FanoutRow[]>`select * from app_private.webhook_fanout_batch(${organization_id}, ${left}, ${lease})`);
      }
      return { rows, events: new Set(rows.map((r) => r.event_id)).size };
    } catch (e) {
      if (isConnectionFailure(e)) throw e;
      // One event that cannot be fanned out must not hold up the others: one at a time, each logged.
      o.log.error({ err: e }, 'a batched fan-out failed; fanning out these events one at a time');
      const ids = await sql<{ organization_id: string; id: string }[]>`
        select organization_id, id from app.events where fanout_pending order by created_at limit ${limit}`;
      const rows: FanoutRow[] = [];
      for (const { organization_id, id } of ids) {
        try {
          rows.push(...await sql<FanoutRow[]>`select * from app_private.webhook_fanout(${organization_id}, ${id}, ${lease})`);
        } catch (err) {
          o.log.error({ err, event_id: id }, 'an event could not be fanned out');
        }
      }
      return { rows, events: ids.length };
    }
  };

  const start = (row: FanoutRow) => {
    const p = send(sql, config, transport, row.delivery_id!, row as ClaimRow, o.metrics)
      // A send that could not record its outcome leaves the delivery leased: webhook_recover retries it.
      .catch((err) => o.log.warn({ err, delivery_id: row.delivery_id }, 'a first attempt could not be recorded'))
      .finally(() => {
        sending.delete(p);
        if (sending.size <= o.maxInFlight / 2) roomFreed();
      });
    sending.add(p);
  };

  /** Claims while its claims come back full and there is room. Under a backlog the claim is the bottleneck, one
   * PostgreSQL backend on CPU the whole time while the other core idles (docs/benchmarks.md): up to
   * `parallelClaims` of these run at once. */
  const claimWhileFull = async () => {
    let claimed = false;
    try {
      for (;;) {
        const room = o.maxInFlight - sending.size - claiming;
        if (room <= 0) { starved = true; break; }
        const limit = Math.min(o.batch, room);
        claiming += limit;
        claimed = true;
        const { rows, events } = await claim(limit).finally(() => { claiming -= limit; });
        if (events) o.metrics?.workerJobs.inc({ task: 'webhook_fanout', outcome: 'success' }, events);
        for (const row of rows) if (row.delivery_id) start(row);
        // A full claim: more events may be waiting.
        if (events < limit || stopped) break;
      }
    } catch (err) {
      o.log.warn({ err }, 'the fan-out could not claim events; the next wake-up or poll tries again');
    } finally {
      // After its rows are started, so that the room counted next is the room there is. Only after
      // a claim: a pass that found no room must not wake itself again at once.
      if (claimed) roomFreed();
    }
  };
  const claims = wakeable(o.parallelClaims ?? 2, claimWhileFull);
  const pump = claims.wake;

  /** A listener of its own, made again after a failed start (postgres.js keeps a LISTEN that failed
   * to start failed for good; one that started re-listens by itself after a reconnect). */
  let listener: postgres.Sql | undefined;
  const listen = () => {
    if (listener || stopped) return;
    const l = listener = postgres(config.workerDatabaseUrl, { max: 1, backoff: reconnectBackoff, onnotice: () => {} });
    l.listen('svc_webhook_fanout', pump, pump).catch((err) => {
      o.log.warn({ err: (err as Error).message }, 'the fan-out listener could not start; polling until it does');
      if (listener === l) listener = undefined;
      void l.end({ timeout: 1 }).catch(() => undefined);
    });
  };
  listen();
  const timer = setInterval(() => { listen(); pump(); }, o.pollInterval);
  timer.unref();
  return {
    wake: pump,
    stop: async () => {
      stopped = true;
      claims.stop();
      clearInterval(timer);
      await listener?.end({ timeout: 1 }).catch(() => undefined);
      await Promise.all(claims.running());
      await Promise.race([Promise.allSettled([...sending]), new Promise((r) => setTimeout(r, Math.min(config.webhooks.timeoutMs, 5000)).unref())]);
    },
  };
}

/** A retry or replay: claim (the client's access is re-checked in SQL), then send. */
export async function deliver(sql: postgres.Sql, config: Config, transport: Transport, organizationId: string, deliveryId: string,
  metrics?: Metrics): Promise<string> {
  const [c] = await sql<ClaimRow[]>`select * from app_private.webhook_claim(${organizationId}, ${deliveryId}, ${leaseSecondsOf(config)})`;
  return c ? send(sql, config, transport, deliveryId, c, metrics) : 'skipped';
}

/** Sign, POST, record: one request and one statement. */
async function send(sql: postgres.Sql, config: Config, transport: Transport, deliveryId: string, c: ClaimRow, metrics?: Metrics): Promise<string> {
  const key = webhookSecretKey(config.secretKey);
  const secrets = [unseal(key, c.secret_sealed)];
  if (c.previous_secret_sealed) secrets.push(unseal(key, c.previous_secret_sealed));
  const started = new Date();
  const { body, headers } = signedRequest(envelopeOf({
    id: c.event_id, organization_id: c.organization_id, type: c.type, resource_type: c.resource_type,
    resource_id: c.resource_id, resource_version: c.resource_version, created_at: c.created_at,
  }), secrets);
  const result = await transport.post(c.url, headers, body);
  const verdict = classify(result);
  const [r] = await sql<{ outcome: string }[]>`
    select app_private.webhook_record_attempt(${c.organization_id}, ${deliveryId}, ${c.attempt}, ${started}, ${result.durationMs},
      ${result.status ?? null}, ${verdict.ok ? null : verdict.error ?? 'failed'}, ${verdict.retryable},
      ${result.retryAfterSeconds ?? null}, ${config.webhooks.retryScale}, ${config.webhooks.disableAfterFailures},
      ${Math.round(config.webhooks.disableAfterSeconds)}) as outcome`;
  metrics?.webhookAttempts.inc({ outcome: verdict.ok ? 'succeeded' : verdict.retryable ? 'retryable_failure' : 'permanent_failure' });
  return r!.outcome;
}

interface SyncLoad {
  invoice: AccountingInvoice; provider: string; sync_status: string | null; external_reference: string | null; customer: AccountingCustomer;
}

/** One sync: export or void at the provider, then record the outcome. Failures the adapter calls
 * retryable (and anything unexpected) are retried by graphile-worker until the last attempt. */
export async function accountingSync(sql: postgres.Sql, organizationId: string, invoiceId: string, action: 'export' | 'void',
  attempt: { attempts: number; maxAttempts: number }): Promise<string> {
  const [row] = await sql<{ data: SyncLoad | null }[]>`select app_private.accounting_sync_load(${organizationId}, ${invoiceId}) as data`;
  const data = row?.data;
  if (!data || data.sync_status !== 'pending') return 'skipped';
  let reference: string | null = data.external_reference;
  try {
    const adapter = accountingProvider(data.provider);
    if (action === 'void') {
      if (reference) await adapter.voidInvoice(reference, data.invoice);
    } else {
      reference = (await adapter.exportInvoice(data.invoice, data.customer)).externalReference;
    }
  } catch (e) {
    const retryable = !(e instanceof ProviderError) || e.retryable;
    if (retryable && attempt.attempts < attempt.maxAttempts) throw e;
    // Only an adapter's own words reach the invoice; anything else could carry provider internals.
    const reason = e instanceof ProviderError ? e.message : 'the accounting provider did not answer';
    // Definitive only when the adapter said so (the provider does not hold the invoice); retries
    // that ran out leave the outcome unknown, which blocks a void until the sync is repeated.
    const definitive = e instanceof ProviderError && !e.retryable;
    await sql`select app_private.accounting_sync_record(${organizationId}, ${invoiceId}, false, null, ${reason}, ${definitive})`;
    return 'failed';
  }
  await sql`select app_private.accounting_sync_record(${organizationId}, ${invoiceId}, true, ${reference}, null)`;
  return 'synced';
}

/** Scans a processing file's bytes with clamd (streamed from the database in chunks) and records
 * the outcome; without a scanner the file is ready unscanned, unless a scan is required. A scanner
 * that does not answer is retried by the job; after the last attempt the file is rejected. */
export async function scanFile(sql: postgres.Sql, config: Config, organizationId: string, fileId: string,
  attempt: { attempts: number; maxAttempts: number }): Promise<string> {
  const [f] = await sql<{ status: string; organization_id: string; upload_id: string | null }[]>`
    select * from app_private.file_scan_load(${organizationId}, ${fileId})`;
  if (!f || f.status !== 'processing') return 'skipped';
  const record = async (outcome: string, detail: string | null) => {
    const [r] = await sql<{ state: string }[]>`
      select app_private.file_scan_record(${organizationId}, ${fileId}, ${outcome}, ${detail}, ${config.files.requireScan}) as state`;
    return r!.state;
  };
  if (!config.files.clamd) return record('not_scanned', null);
  const chunks = async function* () {
    for await (const rows of sql<{ data: Buffer }[]>`
      select data from app.file_chunks where organization_id = ${f.organization_id} and upload_id = ${f.upload_id} order by seq`.cursor(4)) {
      for (const r of rows) yield r.data;
    }
  };
  try {
    const result = await scan(config.files.clamd, chunks(), config.files.scanTimeoutMs);
    return record(result.clean ? 'clean' : 'infected', result.clean ? null : result.signature);
  } catch (e) {
    if (!(e instanceof ScannerUnavailable) || attempt.attempts < attempt.maxAttempts) throw e;
    return record('failed', e.message);
  }
}

/** Runs a report: running (its own statement, so clients see it), then the results in one
 * REPEATABLE READ transaction under the requesting client's context (app_private.report_run_execute). */
export async function runReport(sql: postgres.Sql, config: Config, organizationId: string, runId: string): Promise<string> {
  await sql`select app_private.report_run_start(${organizationId}, ${runId})`;
  const [r] = await sql.begin('isolation level repeatable read', (tx) =>
    tx<{ outcome: string }[]>`select app_private.report_run_execute(${organizationId}, ${runId},
      make_interval(secs => ${config.reportRetentionSeconds})) as outcome`);
  return r!.outcome;
}

/** Email attachments are read whole (SMTP carries them whole); past this, the reply fails instead. */
const MAX_EMAIL_ATTACHMENTS_BYTES = 25 * 1024 * 1024;

interface ReplyLoad {
  status: string; body: string; organization_id: string; number: string; subject: string; to: string; organization: string;
  attachments: { file_id: string; name: string; content_type: string; upload_id: string | null; status: string }[];
}

/** Emails a ticket reply to the requester: the reply's own body and attachments only, never an
 * internal note. A refusal (SMTP 5xx) is final; anything else is retried, and fails after the last attempt. */
export async function sendTicketReply(sql: postgres.Sql, mailer: Mailer, organizationId: string, messageId: string,
  attempt: { attempts: number; maxAttempts: number }): Promise<string> {
  const [row] = await sql<{ m: ReplyLoad | null }[]>`select app_private.ticket_reply_load(${organizationId}, ${messageId}) as m`;
  const m = row?.m;
  if (!m || m.status !== 'queued') return 'skipped';
  const record = async (sent: boolean, detail: string | null) => {
    await sql`select app_private.ticket_reply_record(${organizationId}, ${messageId}, ${sent}, ${detail})`;
    return sent ? 'sent' : 'failed';
  };
  const attachments: { filename: string; content: Buffer; contentType: string }[] = [];
  let total = 0;
  for (const a of m.attachments) {
    const parts = a.upload_id
      ? await sql<{ data: Buffer }[]>`select data from app.file_chunks where organization_id = ${m.organization_id} and upload_id = ${a.upload_id} order by seq`
      : await sql<{ data: Buffer }[]>`select content as data from app.file_contents where organization_id = ${m.organization_id} and file_id = ${a.file_id}`;
    const content = Buffer.concat(parts.map((p) => p.data));
    total += content.length;
    if (total > MAX_EMAIL_ATTACHMENTS_BYTES) return record(false, 'the attachments exceed 25 MiB, more than email carries');
    attachments.push({ filename: a.name, content, contentType: a.content_type });
  }
  try {
    await mailer.send({ to: m.to, fromName: m.organization, subject: `[${m.number}] ${m.subject}`, text: m.body, attachments });
  } catch (e) {
    const refused = e instanceof ApiError && e.code === 'EMAIL_DELIVERY_REFUSED';
    if (!refused && attempt.attempts < attempt.maxAttempts) throw e;
    const smtp = e instanceof ApiError ? /\(SMTP [^)]*\)/.exec(e.detail ?? '')?.[0] : undefined;
    return record(false, `${refused ? 'the mail provider refused the email' : 'the mail provider could not take the email'}${smtp ? ` ${smtp}` : ''}`);
  }
  return record(true, null);
}

/** A job of one organization (app_private.queue_job puts it in every payload): one whose
 * organization is gone (its rows deleted before app_private.queue_job named it) has nothing to do. */
function byOrganization<P>(task: (organizationId: string, payload: P, helpers: JobHelpers) => Promise<void>): Task {
  return async (payload, helpers) => {
    const org = (payload as { organization_id?: unknown } | null)?.organization_id;
    if (typeof org !== 'string') {
      helpers.logger.warn(`a ${helpers.job.task_identifier} job names no organization; nothing to do`);
      return;
    }
    await task(org, payload as P, helpers);
  };
}

export interface Worker {
  metrics: Metrics; stop: () => Promise<void>; recover: () => Promise<number>;
  /** Claims pending events now (an API write in this process has committed some). */
  wakeFanout: () => void;
}

export async function startWorker(config: Config,
  opts: { pollInterval?: number; logger?: Pino; metrics?: Metrics } = {}): Promise<Worker> {
  const log = (opts.logger ?? createLogger(config.logLevel)).child({ component: 'worker' });
  const metrics = opts.metrics ?? createMetrics();
  const sql = postgres(config.workerDatabaseUrl, { max: Math.min(config.worker.concurrency + 2, 20), backoff: reconnectBackoff, onnotice: () => {} });
  const transport = createTransport(config.webhooks);
  const mailer = createMailer(config.mail);
  // A Citus coordinator (known once the database has answered: a worker may start during an outage).
  let onCitus: boolean | undefined;
  const detectCitus = async () => {
    onCitus ??= (await sql<{ on: boolean }[]>`select exists (select from pg_extension where extname = 'citus') as on`)[0]!.on;
    return onCitus;
  };
  await detectCitus().catch(() => undefined);
  const fanoutLoop = startFanout(sql, config, transport, {
    log, metrics, pollInterval: opts.pollInterval ?? 2000, byOrganization: () => onCitus !== false,
    maxInFlight: config.worker.concurrency * 4, batch: Math.min(50, config.worker.concurrency * 4),
  });
  /** An organization's job writes its events in that organization's worker on Citus, and their
   * NOTIFY stays there, where no fan-out listens: after each such job the fan-out of this process is
   * woken, as the API wakes it after its own writes. On one server the commit's NOTIFY does it. The
   * webhook jobs write no events (a delivery emits none): they are not woken after. */
  const inOrganization = <P>(task: (organizationId: string, payload: P, helpers: JobHelpers) => Promise<void>): Task => {
    const job = byOrganization(task);
    return async (payload, helpers) => {
      try {
        await job(payload, helpers);
      } finally {
        if (onCitus !== false) fanoutLoop.wake();
      }
    };
  };
  const taskList: TaskList = {
    webhook_fanout: byOrganization<{ event_id: string }>(async (org, p) => { await fanout(sql, config, transport, org, p.event_id, metrics); }),
    webhook_deliver: byOrganization<{ delivery_id: string }>(async (org, p) => {
      await deliver(sql, config, transport, org, p.delivery_id, metrics);
    }),
    accounting_sync: inOrganization<{ invoice_id: string; action: 'export' | 'void' }>(async (org, p, helpers) => {
      await accountingSync(sql, org, p.invoice_id, p.action, { attempts: helpers.job.attempts, maxAttempts: helpers.job.max_attempts });
    }),
    webhook_purge: async () => {
      await sql`select app_private.purge_webhook_history()`;
      await sql`select control.purge_expired_idempotency_keys()`;
    },
    // Access token records live an hour; the expired ones go every hour.
    token_purge: async () => { await sql`select control.purge_expired_access_tokens()`; },
    file_scan: inOrganization<{ file_id: string }>(async (org, p, helpers) => {
      await scanFile(sql, config, org, p.file_id, { attempts: helpers.job.attempts, maxAttempts: helpers.job.max_attempts });
    }),
    upload_purge: async () => { await sql`select control.purge_expired_uploads()`; },
    report_run: inOrganization<{ run_id: string }>(async (org, p) => { await runReport(sql, config, org, p.run_id); }),
    report_purge: async () => { await sql`select control.purge_expired_report_results()`; },
    agent_run: inOrganization<{ run_id: string }>(async (org, p, helpers) => {
      await executeRun(sql, config, org, p.run_id, { attempts: helpers.job.attempts, maxAttempts: helpers.job.max_attempts });
    }),
    conversation_expire: async () => { await sql`select control.expire_conversation_contexts(interval '30 days')`; },
    // On Citus: shard groups moved by hand get their copies of the api views and their shards'
    // grants; registered only there. That is DDL on the shards, which the helper makes as the
    // schema's owner (a definer that takes no argument).
    citus_prepare: async () => { await sql`select app_private.citus_prepare_if_needed()`; },
    run_purge: async () => { await sql`select control.purge_expired_runs(make_interval(secs => ${config.agents.runRetentionSeconds}))`; },
    ticket_reply_email: inOrganization<{ message_id: string }>(async (org, p, helpers) => {
      await sendTicketReply(sql, mailer, org, p.message_id, { attempts: helpers.job.attempts, maxAttempts: helpers.job.max_attempts });
    }),
  };
  /** Each runner gets a pool of its own whose error listeners stay for the pool's whole life:
   * graphile-worker removes the listeners of a pool it made before that pool has ended, and an
   * idle connection the database ends in that gap ('terminating connection due to administrator
   * command') is then an unhandled 'error' event, which ends the process. */
  const newPool = () => {
    const pool = new pg.Pool({ ...nodePostgresConfig(config.workerDatabaseUrl, config.dbTimeouts.connectMs), max: config.worker.concurrency + 2 });
    pool.on('error', (err) => log.warn({ err: err.message }, 'a job runner connection failed while idle'));
    pool.on('connect', (client) => client.on('error', (err) => log.warn({ err: err.message }, 'a job runner connection failed')));
    return pool;
  };
  const startRunner = async (): Promise<Runner> => {
    const pgPool = newPool();
    let r: Runner;
    try {
      r = await run({
        pgPool,
        concurrency: config.worker.concurrency,
        noHandleSignals: true,
        pollInterval: opts.pollInterval ?? 2000,
        logger: graphileLogger(log),
        taskList,
        crontab: '17 3 * * * webhook_purge ?max=3\n7 * * * * token_purge ?max=3\n37 * * * * upload_purge ?max=3\n47 * * * * report_purge ?max=3\n27 * * * * run_purge ?max=3\n57 4 * * * conversation_expire ?max=3\n'
          + (onCitus ? '* * * * * citus_prepare ?max=1\n' : ''),
        // Fetch jobs in batches and complete them in batches: far fewer round trips per event.
        // (Measured in bench/webhooks.ts: steady p50 21 ms with the local queue, 543 ms without.)
        preset: { worker: { localQueue: { size: config.worker.concurrency * 2 }, completeJobBatchDelay: 0, failJobBatchDelay: 0,
          maxPoolSize: config.worker.concurrency + 2 } },
      });
    } catch (e) {
      void pgPool.end().catch(() => undefined);
      throw e;
    }
    // The pool ends after its runner, however the runner ends (stop, kill, or by itself), and at
    // the latest 10 s after a kill: a runner that hangs in its shutdown must not keep connections.
    let ended = false;
    const endPool = () => { if (!ended) { ended = true; void pgPool.end().catch(() => undefined); } };
    r.promise.then(endPool, endPool);
    poolEnders.set(r, endPool);
    r.events.on('pool:create', ({ workerPool }) => { poolIds.add(workerPool.id); });
    r.events.on('job:start', () => { lastActivity = Date.now(); });
    r.events.on('job:success', ({ job }) => { lastActivity = Date.now(); metrics.workerJobs.inc({ task: job.task_identifier, outcome: 'success' }); });
    r.events.on('job:error', ({ job }) => { lastActivity = Date.now(); metrics.workerJobs.inc({ task: job.task_identifier, outcome: 'error' }); });
    r.events.on('job:failed', ({ job }) => metrics.workerJobs.inc({ task: job.task_identifier, outcome: 'failed' }));
    // graphile-worker stops its pool when it cannot record a job's outcome (the database went away
    // at that moment: "the queue is in an inconsistent state"), and that stop can itself hang.
    r.events.on('pool:gracefulShutdown', ({ message }) => { if (!stopRequested) restart(`the job runner is stopping by itself: ${message}`); });
    r.promise.then(() => undefined, () => undefined).then(() => { if (!stopRequested && runner === r) restart('the job runner stopped by itself'); });
    return r;
  };
  const poolIds = new Set<string>();
  const poolEnders = new WeakMap<Runner, () => void>();
  let runner: Runner | undefined;
  let stopping: Promise<void> | undefined;
  /** Set before the runner is asked to stop: its own shutdown events must not look like a fault. */
  let stopRequested = false;
  let restarting = false;
  let failures = 0;
  let lastActivity = Date.now();
  /** A new runner in place of one that stopped or stalled: the old one is killed (not waited for),
   * the jobs its pools hold are unlocked, and a new one starts once the database answers; until
   * then, attempts back off up to 30 s. Jobs are idempotent, so one that ran half-way runs again. */
  const restart = (reason: string) => {
    if (restarting || stopRequested) return;
    restarting = true;
    metrics.workerRestarts.inc();
    const old = runner;
    runner = undefined;
    log.error({ reason }, 'restarting the job runner');
    void old?.kill(reason).catch(() => undefined);
    const endOld = old && poolEnders.get(old);
    if (endOld) setTimeout(endOld, 10_000).unref();
    const attempt = () => {
      const delay = Math.min(30_000, 500 * 2 ** Math.min(failures, 6));
      setTimeout(() => {
        if (stopRequested) { restarting = false; return; }
        void (async () => {
          const stale = [...poolIds];
          if (stale.length) await sql`select graphile_worker.force_unlock_workers(${stale}::text[])`;
          for (const id of stale) poolIds.delete(id);
          lastActivity = Date.now();
          runner = await startRunner();
          failures = 0;
          restarting = false;
          log.info('job runner started again');
        })().catch((e) => {
          failures++;
          log.error({ err: e }, 'the job runner could not start; trying again');
          attempt();
        });
        // Not unref'd: a worker process with no runner must stay up to start the next one.
      }, delay);
    };
    attempt();
  };
  try {
    runner = await startRunner();
  } catch (e) {
    // The database is not there yet (a worker started during an outage): keep trying in the background.
    if (!isConnectionFailure(e)) throw e;
    restart(`the job runner could not start: ${(e as Error).message}`);
  }
  const recover = async () => {
    const [r] = await sql<{ n: number }[]>`select app_private.webhook_recover(make_interval(secs => ${config.worker.staleSeconds})) as n`;
    return r?.n ?? 0;
  };
  /** A runner that takes no job while jobs are overdue has stalled (a stop that hangs, a fetch
   * loop that died with its connection): restart it. A busy runner keeps taking jobs, however
   * long its backlog, so it is left alone. */
  const watchdog = async () => {
    if (restarting || stopRequested || Date.now() - lastActivity < config.worker.staleSeconds * 1000) return;
    const [o] = await sql<{ overdue: boolean }[]>`
      select exists (select from graphile_worker._private_jobs j
                      where j.is_available and j.run_at < now() - make_interval(secs => ${config.worker.staleSeconds})) as overdue`;
    if (o?.overdue && Date.now() - lastActivity >= config.worker.staleSeconds * 1000) {
      restart(`no job taken for ${Math.round((Date.now() - lastActivity) / 1000)} s while jobs are overdue`);
    }
  };
  await recover().catch(() => undefined);
  const timer = setInterval(() => {
    recover().catch(() => undefined);
    watchdog().catch(() => undefined);
  }, config.worker.recoverIntervalMs);
  timer.unref();
  // On a Citus coordinator, jobs queued on the workers wait in their organizations' outboxes
  // (app_private.job_outbox): moved into the queue here, about every second.
  let draining = false;
  const drainTimer = setInterval(() => {
    if (draining || onCitus === false) return;
    draining = true;
    detectCitus().then((on) => on ? sql`select app_private.job_outbox_drain()` : undefined).then(() => undefined,
      (err) => log.warn({ err: (err as Error).message }, 'moving the job outbox into the queue failed; trying again'))
      .finally(() => { draining = false; });
  }, 1000);
  drainTimer.unref();
  return {
    metrics,
    recover,
    wakeFanout: fanoutLoop.wake,
    // Idempotent: a shutdown path and a test teardown may both ask.
    stop: () => (stopping ??= (async () => {
      stopRequested = true;
      clearInterval(timer);
      clearInterval(drainTimer);
      await runner?.stop().catch(() => undefined);
      await fanoutLoop.stop();
      await sql.end({ timeout: 5 });
    })()),
  };
}
