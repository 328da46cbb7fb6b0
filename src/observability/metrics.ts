// Prometheus metrics (prom-client) for operators: one registry per process (tests build many
// apps in one process, so nothing goes to prom-client's global registry).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface PoolStats { size: number; inUse: number; waiting: number; unreachable: boolean }

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  workerJobs: Counter<'task' | 'outcome'>;
  workerRestarts: Counter;
  webhookAttempts: Counter<'outcome'>;
  /** Database pools the watchdog found wedged and replaced (src/db/watchdog.ts). */
  dbPoolRebuilds: Counter<'pool'>;
  /** Read at scrape time. */
  watchPool(stats: () => PoolStats): void;
  /** Read at scrape time; when the read fails, the gauges keep their last values. */
  watchOutbox(read: () => Promise<{ oldestPendingEventSeconds: number; deliveriesPending: number; oldestDueDeliverySeconds: number }>): void;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'svc_' });
  const pools: (() => PoolStats)[] = [];
  let outbox: Parameters<Metrics['watchOutbox']>[0] | undefined;
  const poolGauge = (name: string, help: string, pick: (s: PoolStats) => number) => new Gauge({
    name, help, registers: [registry],
    collect() { this.set(pools.reduce((n, p) => n + pick(p()), 0)); },
  });
  poolGauge('svc_db_pool_size', 'Database connections the API may open', (s) => s.size);
  poolGauge('svc_db_pool_in_use', 'Database connections held by a request or job', (s) => s.inUse);
  poolGauge('svc_db_pool_waiting', 'Requests waiting for a database connection', (s) => s.waiting);
  poolGauge('svc_db_unreachable', '1 while the database is known to be unreachable (requests fail fast with 503)', (s) => (s.unreachable ? 1 : 0));

  // prom-client collects gauges concurrently: the three outbox gauges share one query per scrape.
  type Outbox = Awaited<ReturnType<Parameters<Metrics['watchOutbox']>[0]>>;
  let scrape: { at: number; result: Promise<Outbox | undefined> } | undefined;
  const readOutbox = () => {
    if (!outbox) return Promise.resolve(undefined);
    if (!scrape || Date.now() - scrape.at > 1000) scrape = { at: Date.now(), result: outbox().catch(() => undefined) };
    return scrape.result;
  };
  const outboxGauge = (name: string, help: string, key: keyof Outbox) => new Gauge({
    name, help, registers: [registry],
    async collect() {
      const o = await readOutbox();
      if (o) this.set(o[key]);
    },
  });
  outboxGauge('svc_outbox_oldest_pending_event_seconds', 'Age of the oldest event not yet fanned out to webhook endpoints', 'oldestPendingEventSeconds');
  outboxGauge('svc_webhook_deliveries_pending', 'Webhook deliveries not yet succeeded, failed or cancelled', 'deliveriesPending');
  outboxGauge('svc_webhook_oldest_due_delivery_seconds', 'How long the most overdue webhook attempt has been due', 'oldestDueDeliverySeconds');

  return {
    registry,
    httpRequests: new Counter({ name: 'svc_http_requests_total', help: 'HTTP requests by route template and status',
      labelNames: ['method', 'route', 'status'], registers: [registry] }),
    httpDuration: new Histogram({ name: 'svc_http_request_duration_seconds', help: 'HTTP request latency by route template',
      labelNames: ['method', 'route', 'status'], registers: [registry],
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] }),
    workerJobs: new Counter({ name: 'svc_worker_jobs_total', help: 'Background job attempts by task and outcome: success; error (any failed attempt); failed (the last attempt failed)',
      labelNames: ['task', 'outcome'], registers: [registry] }),
    workerRestarts: new Counter({ name: 'svc_worker_runner_restarts_total', help: 'Job runners started again after stopping by themselves (database faults)',
      registers: [registry] }),
    webhookAttempts: new Counter({ name: 'svc_webhook_attempts_total', help: 'Webhook delivery attempts by outcome',
      labelNames: ['outcome'], registers: [registry] }),
    dbPoolRebuilds: new Counter({ name: 'svc_db_pool_rebuilds_total', help: 'Database connection pools replaced because they handed out no connection, or had no statement answered, past the acquire deadline while the database answered a fresh connection',
      labelNames: ['pool'], registers: [registry] }),
    watchPool: (stats) => { pools.push(stats); },
    watchOutbox: (read) => { outbox = read; },
  };
}
