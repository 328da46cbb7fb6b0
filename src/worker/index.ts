// The background worker: graphile-worker drains the outbox the database triggers fill. What runs:
//   the fan-out loop (fanout-loop.ts, not a job): pending events claimed in batches, the deliveries
//     for the endpoints whose client may read the resource, their first attempts sent at once;
//   the jobs (tasks.ts, one module each in jobs/): webhook_fanout, webhook_deliver, accounting_sync,
//     file_scan, report_run, agent_run, ticket_reply_email, and the periodic purges;
//   the runner's supervision (runner.ts): a runner that stops or stalls is started again;
//   a timer that re-queues webhook attempts whose worker died mid-flight (their lease ran out);
//   on Citus, the drain of the workers' job outboxes into the queue (job-outbox.ts).
// Every job runs as svc_worker (config.workerDatabaseUrl: owner of nothing, no credential, db/README.md
// "Schemas and roles"); on a Citus cluster an organization's jobs run on its worker node (nodes.ts).
import { postgresFor } from '../db/hosts.ts';
import type { Logger as Pino } from 'pino';
import type { Config } from '../config.ts';
import { createTransport } from '../webhooks/transport.ts';
import { createLogger } from '../observability/logger.ts';
import { createMetrics, type Metrics } from '../observability/metrics.ts';
import { reconnectBackoff } from '../db/faults.ts';
import { createMailer } from '../invoices/mailer.ts';
import { startFanout } from './fanout-loop.ts';
import { recoverLeases } from './jobs/webhooks.ts';
import { crontab, taskList } from './tasks.ts';
import { superviseRunner } from './runner.ts';
import { startJobOutboxDrain } from './job-outbox.ts';
import { jobConnections } from './nodes.ts';

export interface Worker {
  metrics: Metrics;
  stop: () => Promise<void>;
  /** Re-queues the webhook attempts whose lease ran out; the count. */
  recover: () => Promise<number>;
  /** Claims pending events now (an API write in this process has committed some). */
  wakeFanout: () => void;
}

export async function startWorker(config: Config,
  opts: { pollInterval?: number; logger?: Pino; metrics?: Metrics } = {}): Promise<Worker> {
  const log = (opts.logger ?? createLogger(config.logLevel)).child({ component: 'worker' });
  const metrics = opts.metrics ?? createMetrics();
  const pollInterval = opts.pollInterval ?? 2000;
  const sql = postgresFor(config.workerDatabaseUrl, { max: Math.min(config.worker.concurrency + 2, 20), backoff: reconnectBackoff, onnotice: () => {} });
  const transport = createTransport(config.webhooks);
  // A Citus coordinator (known once the database has answered: a worker may start during an outage).
  let onCitus: boolean | undefined;
  const detectCitus = async () => {
    onCitus ??= (await sql<{ on: boolean }[]>`select exists (select from pg_extension where extname = 'citus') as on`)[0]!.on;
    return onCitus;
  };
  await detectCitus().catch(() => undefined);
  const connections = jobConnections(sql, {
    url: config.workerDatabaseUrl, max: Math.min(config.worker.concurrency + 2, 20), connectTimeoutMs: config.dbTimeouts.connectMs,
    direct: config.clusterDirect, onCitus: () => onCitus,
    log: (message, node, error) => log.warn({ node, err: (error as Error).message }, message),
  });
  const fanoutLoop = startFanout(sql, config, transport, {
    log, metrics, pollInterval, byOrganization: () => onCitus !== false, connections,
    maxInFlight: config.worker.concurrency * 4, batch: Math.min(50, config.worker.concurrency * 4),
  });
  const runner = await superviseRunner({
    config, sql, log, metrics, pollInterval,
    taskList: taskList({ sql, connections, config, transport, mailer: createMailer(config.mail), metrics, wakeFanout: fanoutLoop.wake, onCitus: () => onCitus }),
    crontab: () => crontab(onCitus === true),
  });
  const recover = () => recoverLeases(sql, config);
  await recover().catch(() => undefined);
  const recoverTimer = setInterval(() => { recover().catch(() => undefined); }, config.worker.recoverIntervalMs);
  recoverTimer.unref();
  const stopDrain = startJobOutboxDrain(sql, detectCitus, log);
  let stopping: Promise<void> | undefined;
  return {
    metrics,
    recover,
    wakeFanout: fanoutLoop.wake,
    // Idempotent: a shutdown path and a test teardown may both ask.
    stop: () => (stopping ??= (async () => {
      clearInterval(recoverTimer);
      stopDrain();
      await runner.stop();
      await fanoutLoop.stop();
      await connections.close();
      await sql.end({ timeout: 5 });
    })()),
  };
}
