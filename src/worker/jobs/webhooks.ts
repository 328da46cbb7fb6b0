// webhook_fanout (one per event queued before the batched fan-out of fanout-loop.ts) and
// webhook_deliver (one per retry or replay): who receives an event and whether its client may still
// read the resource are decided in SQL (app_private.webhook_fanout, webhook_claim); here each
// attempt is signed, POSTed and recorded.
import type postgres from 'postgres';
import type { Config } from '../../config.ts';
import { unseal } from '../../auth/sealing.ts';
import { classify, signedRequest, webhookSecretKey, type EventEnvelope, type Transport } from '../../webhooks/transport.ts';
import type { Metrics } from '../../observability/metrics.ts';

interface EventRow { id: string; organization_id: string; type: string; resource_type: string; resource_id: string; resource_version: number; created_at: Date }

export function envelopeOf(ev: EventRow): EventEnvelope {
  return {
    id: ev.id, type: ev.type, api_version: 'v1', created_at: ev.created_at.toISOString(), organization_id: ev.organization_id,
    data: { object: { type: ev.resource_type, id: ev.resource_id, version: ev.resource_version } },
  };
}

export interface ClaimRow {
  attempt: number; url: string; secret_sealed: string; previous_secret_sealed: string | null; event_id: string;
  organization_id: string; type: string; resource_type: string; resource_id: string; resource_version: number; created_at: Date;
}

export const leaseSecondsOf = (config: Config) => Math.ceil(config.webhooks.timeoutMs / 1000) + 5;

/** A statement run on the connections of the delivery's organization (src/worker/nodes.ts). */
export type On = <T>(statement: (sql: postgres.Sql) => Promise<T>) => Promise<T>;
const onSql = (sql: postgres.Sql): On => (statement) => statement(sql);

/** One statement decides who receives the event and claims the first attempts
 * (app_private.webhook_fanout); they are sent at once, in this job. */
export async function fanout(sql: postgres.Sql, config: Config, transport: Transport, organizationId: string, eventId: string,
  metrics?: Metrics): Promise<string[]> {
  const rows = await sql<(ClaimRow & { delivery_id: string })[]>`
    select * from app_private.webhook_fanout(${organizationId}, ${eventId}, ${leaseSecondsOf(config)})`;
  return Promise.all(rows.map((c) => send(onSql(sql), config, transport, c.delivery_id, c, metrics)));
}

/** A retry or replay: claim (the client's access is re-checked in SQL), then send. */
export async function deliver(sql: postgres.Sql, config: Config, transport: Transport, organizationId: string, deliveryId: string,
  metrics?: Metrics): Promise<string> {
  const [c] = await sql<ClaimRow[]>`select * from app_private.webhook_claim(${organizationId}, ${deliveryId}, ${leaseSecondsOf(config)})`;
  return c ? send(onSql(sql), config, transport, deliveryId, c, metrics) : 'skipped';
}

/** Sign, POST, record: one request and one statement, on the connection `on` gives after the POST. */
export async function send(on: On, config: Config, transport: Transport, deliveryId: string, c: ClaimRow, metrics?: Metrics): Promise<string> {
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
  const [r] = await on((sql) => sql<{ outcome: string }[]>`
    select app_private.webhook_record_attempt(${c.organization_id}, ${deliveryId}, ${c.attempt}, ${started}, ${result.durationMs},
      ${result.status ?? null}, ${verdict.ok ? null : verdict.error ?? 'failed'}, ${verdict.retryable},
      ${result.retryAfterSeconds ?? null}, ${config.webhooks.retryScale}, ${config.webhooks.disableAfterFailures},
      ${Math.round(config.webhooks.disableAfterSeconds)}) as outcome`);
  metrics?.webhookAttempts.inc({ outcome: verdict.ok ? 'succeeded' : verdict.retryable ? 'retryable_failure' : 'permanent_failure' });
  return r!.outcome;
}

/** Deliveries whose attempt's lease ran out (their worker died mid-flight) are queued again; the count. */
export async function recoverLeases(sql: postgres.Sql, config: Config): Promise<number> {
  const [r] = await sql<{ n: number }[]>`select app_private.webhook_recover(make_interval(secs => ${config.worker.staleSeconds})) as n`;
  return r?.n ?? 0;
}
