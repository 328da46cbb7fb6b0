// The background worker: graphile-worker drains the outbox the database triggers fill.
//   webhook_fanout  (one per event with subscribers): deliveries for the endpoints whose client
//                   may read the resource, judged by the API's own views as svc_runtime, and
//                   their first attempts;
//   webhook_deliver (one per retry or replay): re-checks the client's access, signs, POSTs, records;
//   webhook_purge   (daily, crontab): 30-day retention of events, deliveries and attempts;
//   accounting_sync (one per issued or voided synchronized invoice): the provider adapter's call,
//                   and the provider-neutral outcome on the invoice.
// A timer re-queues attempts whose worker died mid-flight (their lease ran out).
import postgres from 'postgres';
import { Logger, run, type Runner, type TaskList } from 'graphile-worker';
import type { Config } from '../config.ts';
import { unseal } from '../auth/sealing.ts';
import { accountingProvider, ProviderError, type AccountingCustomer, type AccountingInvoice } from '../accounting/providers.ts';
import { classify, createTransport, signedRequest, webhookSecretKey, type EventEnvelope, type Transport } from '../webhooks/transport.ts';

interface EventRow { id: string; organization_id: string; type: string; resource_type: string; resource_id: string; resource_version: number; created_at: Date }

const quiet = new Logger(() => (level, message) => {
  if (level === 'error') console.error(JSON.stringify({ level: 'error', msg: message }));
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
export async function fanout(sql: postgres.Sql, config: Config, transport: Transport, eventId: string): Promise<string[]> {
  const rows = await sql<(ClaimRow & { delivery_id: string })[]>`
    select * from app_private.webhook_fanout(${eventId}, ${leaseSecondsOf(config)})`;
  return Promise.all(rows.map((c) => send(sql, config, transport, c.delivery_id, c)));
}

/** A retry or replay: claim (the client's access is re-checked in SQL), then send. */
export async function deliver(sql: postgres.Sql, config: Config, transport: Transport, deliveryId: string): Promise<string> {
  const [c] = await sql<ClaimRow[]>`select * from app_private.webhook_claim(${deliveryId}, ${leaseSecondsOf(config)})`;
  return c ? send(sql, config, transport, deliveryId, c) : 'skipped';
}

/** Sign, POST, record: one request and one statement. */
async function send(sql: postgres.Sql, config: Config, transport: Transport, deliveryId: string, c: ClaimRow): Promise<string> {
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
    select app_private.webhook_record_attempt(${deliveryId}, ${c.attempt}, ${started}, ${result.durationMs},
      ${result.status ?? null}, ${verdict.ok ? null : verdict.error ?? 'failed'}, ${verdict.retryable},
      ${result.retryAfterSeconds ?? null}, ${config.webhooks.retryScale}, ${config.webhooks.disableAfterFailures},
      ${Math.round(config.webhooks.disableAfterSeconds)}) as outcome`;
  return r!.outcome;
}

interface SyncLoad {
  invoice: AccountingInvoice; provider: string; sync_status: string | null; external_reference: string | null; customer: AccountingCustomer;
}

/** One sync: export or void at the provider, then record the outcome. Failures the adapter calls
 * retryable (and anything unexpected) are retried by graphile-worker until the last attempt. */
export async function accountingSync(sql: postgres.Sql, invoiceId: string, action: 'export' | 'void',
  attempt: { attempts: number; maxAttempts: number }): Promise<string> {
  const [row] = await sql<{ data: SyncLoad | null }[]>`select app_private.accounting_sync_load(${invoiceId}) as data`;
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
    await sql`select app_private.accounting_sync_record(${invoiceId}, false, null, ${reason}, ${definitive})`;
    return 'failed';
  }
  await sql`select app_private.accounting_sync_record(${invoiceId}, true, ${reference}, null)`;
  return 'synced';
}

export interface Worker { runner: Runner; stop: () => Promise<void>; recover: () => Promise<number> }

export async function startWorker(config: Config, opts: { pollInterval?: number } = {}): Promise<Worker> {
  const sql = postgres(config.databaseUrl, { max: Math.min(config.worker.concurrency + 2, 20), onnotice: () => {} });
  const transport = createTransport(config.webhooks);
  const taskList: TaskList = {
    webhook_fanout: async (payload) => { await fanout(sql, config, transport, (payload as { event_id: string }).event_id); },
    webhook_deliver: async (payload) => { await deliver(sql, config, transport, (payload as { delivery_id: string }).delivery_id); },
    accounting_sync: async (payload, helpers) => {
      const { invoice_id, action } = payload as { invoice_id: string; action: 'export' | 'void' };
      await accountingSync(sql, invoice_id, action, { attempts: helpers.job.attempts, maxAttempts: helpers.job.max_attempts });
    },
    webhook_purge: async () => {
      await sql`select app_private.purge_webhook_history()`;
      await sql`select control.purge_expired_idempotency_keys()`;
    },
  };
  const runner = await run({
    connectionString: config.databaseUrl,
    concurrency: config.worker.concurrency,
    noHandleSignals: true,
    pollInterval: opts.pollInterval ?? 2000,
    logger: quiet,
    taskList,
    crontab: '17 3 * * * webhook_purge ?max=3\n',
    // Fetch jobs in batches and complete them in batches: far fewer round trips per event.
    // (Measured in bench/webhooks.ts: steady p50 21 ms with the local queue, 543 ms without.)
    preset: { worker: { localQueue: { size: config.worker.concurrency * 2 }, completeJobBatchDelay: 0, failJobBatchDelay: 0,
      maxPoolSize: config.worker.concurrency + 2 } },
  });
  const recover = async () => {
    const [r] = await sql<{ n: number }[]>`select app_private.webhook_recover(make_interval(secs => ${config.worker.staleSeconds})) as n`;
    return r?.n ?? 0;
  };
  await recover().catch(() => undefined);
  const timer = setInterval(() => { recover().catch(() => undefined); }, config.worker.recoverIntervalMs);
  timer.unref();
  let stopping: Promise<void> | undefined;
  return {
    runner,
    recover,
    // Idempotent: a shutdown path and a test teardown may both ask.
    stop: () => (stopping ??= (async () => {
      clearInterval(timer);
      await runner.stop();
      await sql.end({ timeout: 5 });
    })()),
  };
}
