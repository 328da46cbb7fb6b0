// The job runner under supervision: graphile-worker's runner, each with a node-postgres pool of its
// own, started again when it stops by itself or stalls (takes no job while jobs are overdue), with
// backoff while the database is away.
import pg from 'pg';
import { Logger, run, type Runner, type TaskList } from 'graphile-worker';
import type postgres from 'postgres';
import type { Logger as Pino } from 'pino';
import type { Config } from '../config.ts';
import type { Metrics } from '../observability/metrics.ts';
import { isConnectionFailure } from '../db/faults.ts';
import { nodePostgresConfig } from '../db/hosts.ts';

/** graphile-worker's log lines through pino (its debug chatter stays at debug). */
const graphileLogger = (log: Pino) => new Logger((scope) => {
  const child = log.child({ component: 'graphile-worker', ...(scope.taskIdentifier ? { task: scope.taskIdentifier } : {}),
    ...(scope.jobId ? { job_id: scope.jobId } : {}) });
  return (level, message) => {
    const pinoLevel = level === 'warning' ? 'warn' : level;
    child[pinoLevel as 'error' | 'warn' | 'info' | 'debug'](message);
  };
});

export interface SupervisorOptions {
  config: Config;
  /** svc_worker's postgres.js pool: unlocks a dead runner's jobs and looks for overdue ones. */
  sql: postgres.Sql;
  log: Pino;
  metrics: Metrics;
  taskList: TaskList;
  /** The crontab, read at each start (whether the database is a Citus coordinator may be known only later). */
  crontab: () => string;
  pollInterval: number;
}

export interface SupervisedRunner {
  /** Stops the runner (its jobs in flight finish) and the supervision; idempotent. */
  stop: () => Promise<void>;
}

export async function superviseRunner(o: SupervisorOptions): Promise<SupervisedRunner> {
  const { config, sql, log, metrics, taskList } = o;
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
        pollInterval: o.pollInterval,
        logger: graphileLogger(log),
        taskList,
        crontab: o.crontab(),
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
  const timer = setInterval(() => { watchdog().catch(() => undefined); }, config.worker.recoverIntervalMs);
  timer.unref();
  let stopping: Promise<void> | undefined;
  return {
    stop: () => (stopping ??= (async () => {
      stopRequested = true;
      clearInterval(timer);
      await runner?.stop().catch(() => undefined);
    })()),
  };
}
