// The fan-out loop (not a job): pending events claimed in batches, woken by NOTIFY svc_webhook_fanout
// at an event's commit and by a poll; the deliveries for the endpoints whose client may read the
// resource are judged in SQL, and their first attempts sent at once (jobs/webhooks.ts).
import type postgres from 'postgres';
import { postgresFor } from '../db/hosts.ts';
import type { Logger as Pino } from 'pino';
import type { Config } from '../config.ts';
import type { Transport } from '../webhooks/transport.ts';
import type { Metrics } from '../observability/metrics.ts';
import { isConnectionFailure, reconnectBackoff } from '../db/faults.ts';
import { leaseSecondsOf, send, type ClaimRow } from './jobs/webhooks.ts';
import { wakeable } from './wake.ts';
import type { JobConnections } from './nodes.ts';

type FanoutRow = Omit<ClaimRow, 'attempt' | 'url' | 'secret_sealed'> & { delivery_id: string | null; attempt: number | null;
  url: string | null; secret_sealed: string | null };

export interface FanoutOptions {
  log: Pino; metrics?: Metrics; pollInterval: number; batch: number; maxInFlight: number;
  /** Claims at once (default 2): a claim is CPU-bound in one PostgreSQL backend, `skip locked` keeps them apart. */
  parallelClaims?: number;
  /** On Citus: events are claimed one organization at a time, each in its worker (a claim that
   * locks rows of every shard is refused there). */
  byOrganization?: () => boolean;
  /** Where an organization's claims and records run (nodes.ts); default: `sql`. */
  connections?: Pick<JobConnections, 'run'>;
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
  const connections = o.connections ?? { run: (_organization, statement) => statement(sql) };
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
        rows.push(...await connections.run(organization_id, (s) =>
          s<FanoutRow[]>`select * from app_private.webhook_fanout_batch(${organization_id}, ${left}, ${lease})`));
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
          rows.push(...await connections.run(organization_id, (s) =>
            s<FanoutRow[]>`select * from app_private.webhook_fanout(${organization_id}, ${id}, ${lease})`));
        } catch (err) {
          o.log.error({ err, event_id: id }, 'an event could not be fanned out');
        }
      }
      return { rows, events: ids.length };
    }
  };

  const start = (row: FanoutRow) => {
    const p = send((statement) => connections.run(row.organization_id, statement), config, transport, row.delivery_id!, row as ClaimRow, o.metrics)
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
    const l = listener = postgresFor(config.workerDatabaseUrl, { max: 1, backoff: reconnectBackoff, onnotice: () => {} });
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
