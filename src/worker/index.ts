// The background worker: graphile-worker drains the outbox the database triggers fill.
//   webhook_fanout  (one per event with subscribers): deliveries for the endpoints whose client
//                   may read the resource, judged by the API's own views as svc_runtime;
//   webhook_deliver (one per attempt): re-checks the client's access, signs, POSTs, records;
//   webhook_purge   (daily, crontab): 30-day retention of events, deliveries and attempts.
// A timer re-queues attempts whose worker died mid-flight (their lease ran out).
import postgres from 'postgres';
import { Logger, run, type Runner, type TaskList } from 'graphile-worker';
import type { Config } from '../config.ts';
import { unseal } from '../auth/sealing.ts';
import { classify, createTransport, signedRequest, webhookSecretKey, type EventEnvelope, type Transport } from '../webhooks/transport.ts';

type Sql = postgres.Sql | postgres.TransactionSql;

interface EventRow { id: string; organization_id: string; type: string; resource_type: string; resource_id: string; resource_version: number; created_at: Date }

const quiet = new Logger(() => (level, message) => {
  if (level === 'error') console.error(JSON.stringify({ level: 'error', msg: message }));
});

/** May this client read the event's resource now? Same licence and Role checks as a request,
 * then the API's views under the runtime role's row policies. */
export async function clientMayRead(tx: postgres.TransactionSql, clientId: string, ev: Pick<EventRow, 'type' | 'resource_type' | 'resource_id'>) {
  const [ctx] = await tx<{ ok: boolean }[]>`select app_private.begin_delivery_context(${clientId}) as ok`;
  if (!ctx?.ok) return false;
  await tx`set local role svc_runtime`;
  try {
    const [r] = await tx<{ visible: boolean }[]>`
      select app_private.event_resource_visible(${ev.type}, ${ev.resource_type}, ${ev.resource_id}) as visible`;
    return r?.visible === true;
  } finally {
    await tx`reset role`;
  }
}

export function envelopeOf(ev: EventRow): EventEnvelope {
  return {
    id: ev.id, type: ev.type, api_version: 'v1', created_at: ev.created_at.toISOString(), organization_id: ev.organization_id,
    data: { object: { type: ev.resource_type, id: ev.resource_id, version: ev.resource_version } },
  };
}

export async function fanout(sql: postgres.Sql, eventId: string): Promise<number> {
  return sql.begin(async (tx) => {
    const [ev] = await tx<(EventRow & { target_endpoint_id: string | null })[]>`
      select id, organization_id, type, resource_type, resource_id, resource_version, created_at, target_endpoint_id
        from app.events where id = ${eventId} and fanout_pending for update skip locked`;
    if (!ev) return 0;
    const endpoints = await tx<{ id: string; client_id: string }[]>`
      select id, client_id from app.webhook_endpoints
       where organization_id = ${ev.organization_id} and status = 'enabled' and ${ev.type} = any (events)
         and (${ev.target_endpoint_id}::text is null or id = ${ev.target_endpoint_id})
       order by id`;
    const allowed = new Map<string, boolean>();
    let created = 0;
    for (const ep of endpoints) {
      if (!allowed.has(ep.client_id)) allowed.set(ep.client_id, await clientMayRead(tx, ep.client_id, ev));
      if (!allowed.get(ep.client_id)) continue;
      const rows = await tx`
        insert into app.webhook_deliveries (organization_id, client_id, endpoint_id, event_id)
        values (${ev.organization_id}, ${ep.client_id}, ${ep.id}, ${ev.id})
        on conflict (event_id, endpoint_id) where replay_of is null do nothing
        returning id`;
      for (const r of rows) {
        await tx`select app_private.webhook_enqueue(${r.id as string})`;
        created++;
      }
    }
    await tx`update app.events set fanout_pending = false where id = ${ev.id}`;
    return created;
  });
}

interface Claim {
  delivery_id: string; attempt: number; url: string; secrets: string[]; event: EventRow;
}

async function claim(sql: postgres.Sql, config: Config, deliveryId: string): Promise<Claim | undefined> {
  return sql.begin(async (tx) => {
    const [d] = await tx`
      select d.id, d.status, d.client_id, d.attempt_count, w.url, w.status as endpoint_status, w.secret_sealed,
             case when w.previous_secret_expires_at > now() then w.previous_secret_sealed end as previous_secret_sealed,
             e.id as event_id, e.organization_id, e.type, e.resource_type, e.resource_id, e.resource_version, e.created_at,
             coalesce(d.lease_until > now(), false) as leased,
             coalesce(d.next_attempt_at > now() + interval '1 second', false) as early,
             e.created_at < now() - interval '30 days' as expired,
             now() > d.retry_until as exhausted
        from app.webhook_deliveries d
        join app.webhook_endpoints w on w.id = d.endpoint_id
        join app.events e on e.id = d.event_id
       where d.id = ${deliveryId}
       for update of d skip locked`;
    if (!d || d.status !== 'pending' || d.leased || d.early) return undefined;
    const event: EventRow = {
      id: d.event_id, organization_id: d.organization_id, type: d.type, resource_type: d.resource_type,
      resource_id: d.resource_id, resource_version: d.resource_version, created_at: d.created_at,
    };
    const cancel = async (reason: string) => { await tx`select app_private.webhook_cancel(${deliveryId}, ${reason})`; };
    if (d.endpoint_status !== 'enabled') return void await cancel('endpoint_disabled');
    if (d.expired) return void await cancel('retention_expired');
    if (d.exhausted) return void await cancel('retry_period_exhausted');
    if (!(await clientMayRead(tx, d.client_id, event))) return void await cancel('not_authorized');
    const leaseSeconds = Math.ceil(config.webhooks.timeoutMs / 1000) + 5;
    const [c] = await tx<{ attempt_count: number }[]>`
      update app.webhook_deliveries
         set attempt_count = attempt_count + 1, lease_until = now() + make_interval(secs => ${leaseSeconds})
       where id = ${deliveryId} returning attempt_count`;
    const key = webhookSecretKey(config.secretKey);
    const secrets = [unseal(key, d.secret_sealed)];
    if (d.previous_secret_sealed) secrets.push(unseal(key, d.previous_secret_sealed));
    return { delivery_id: deliveryId, attempt: c!.attempt_count, url: d.url, secrets, event };
  });
}

export async function deliver(sql: postgres.Sql, config: Config, transport: Transport, deliveryId: string): Promise<string> {
  const c = await claim(sql, config, deliveryId);
  if (!c) return 'skipped';
  const started = new Date();
  const { body, headers } = signedRequest(envelopeOf(c.event), c.secrets);
  const result = await transport.post(c.url, headers, body);
  const verdict = classify(result);
  const [r] = await sql<{ outcome: string }[]>`
    select app_private.webhook_record_attempt(${c.delivery_id}, ${c.attempt}, ${started}, ${result.durationMs},
      ${result.status ?? null}, ${verdict.ok ? null : verdict.error ?? 'failed'}, ${verdict.retryable},
      ${result.retryAfterSeconds ?? null}, ${config.webhooks.retryScale}, ${config.webhooks.disableAfterFailures},
      ${Math.round(config.webhooks.disableAfterSeconds)}) as outcome`;
  return r!.outcome;
}

export interface Worker { runner: Runner; stop: () => Promise<void>; recover: () => Promise<number> }

export async function startWorker(config: Config, opts: { pollInterval?: number } = {}): Promise<Worker> {
  const sql = postgres(config.databaseUrl, { max: Math.min(config.worker.concurrency + 2, 20), onnotice: () => {} });
  const transport = createTransport(config.webhooks);
  const taskList: TaskList = {
    webhook_fanout: async (payload) => { await fanout(sql, (payload as { event_id: string }).event_id); },
    webhook_deliver: async (payload) => { await deliver(sql, config, transport, (payload as { delivery_id: string }).delivery_id); },
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
  });
  const recover = async () => {
    const [r] = await sql<{ n: number }[]>`select app_private.webhook_recover(make_interval(secs => ${config.worker.staleSeconds})) as n`;
    return r?.n ?? 0;
  };
  await recover().catch(() => undefined);
  const timer = setInterval(() => { recover().catch(() => undefined); }, config.worker.recoverIntervalMs);
  timer.unref();
  return {
    runner,
    recover,
    stop: async () => {
      clearInterval(timer);
      await runner.stop();
      await sql.end({ timeout: 5 });
    },
  };
}
