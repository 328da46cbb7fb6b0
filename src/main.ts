// Production entry point: serve with the configuration from the environment.
import { loadConfig, type Config } from './config.ts';
import { connectRuntime } from './db/database.ts';
import { createAppContext } from './http/context.ts';
import { createServer } from './http/server.ts';
import { startWorker } from './worker/index.ts';
import { survivePoolRejections } from './db/faults.ts';
import { isMain } from './is-main.ts';

export async function serve(config: Config = loadConfig(), opts: { onStopped?: () => Promise<void> } = {}) {
  const database = connectRuntime(config);
  const app = await createAppContext(config, database);
  survivePoolRejections((e) => app.logger.error({ err: e }, 'a connection failure nobody awaited (logged, not fatal)'));
  const server = await createServer(app);
  let starting: Promise<Awaited<ReturnType<typeof startWorker>> | undefined> = Promise.resolve(undefined);
  let stopping: Promise<void> | undefined;
  const wakeByNotify = app.wakeFanout;
  // What container platforms send on every deploy: stop accepting at once, let in-flight requests
  // and jobs finish, then close the pool. hapi stops listening before it waits. A worker still
  // starting is stopped once started (it may already be sending).
  const stop = () => (stopping ??= (async () => {
    // The worker here stops with the server: writes still finishing wake a worker elsewhere.
    app.wakeFanout = wakeByNotify;
    await Promise.all([server.stop({ timeout: config.shutdownTimeoutMs }), starting.then((w) => w?.stop())]);
    await database.close();
    await opts.onStopped?.();
  })());
  const shutdown = (signal: string) => {
    app.logger.info({ signal, deadline_ms: config.shutdownTimeoutMs }, 'shutting down');
    const deadline = setTimeout(() => {
      app.logger.error({ deadline_ms: config.shutdownTimeoutMs }, 'shutdown deadline passed; exiting with work unfinished');
      process.exit(1);
    }, config.shutdownTimeoutMs + 2000);
    deadline.unref();
    stop().then(() => {
      app.logger.info('stopped');
      process.exit(0);
    }, (e) => {
      app.logger.error({ err: e }, 'shutdown failed');
      process.exit(1);
    });
  };
  // Before anything starts: a signal during start-up (a deploy, a test) is a graceful stop, not the
  // default action that kills the process with a delivery in flight.
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  await server.start();
  // The outbox worker runs in the same process unless SVC_WORKER=off (then run src/worker/main.ts).
  if (config.worker.enabled) starting = startWorker(config, { logger: app.logger, metrics: app.metrics });
  const worker = await starting;
  // API writes in this process wake its own fan-out directly (until then, and without a worker
  // here, by a NOTIFY that a worker elsewhere hears).
  if (worker && !stopping) app.wakeFanout = worker.wakeFanout;
  app.logger.info({ uri: server.info.uri, worker: !!worker }, 'listening');
  return { server, app, stop };
}

if (isMain(import.meta.url)) {
  await serve();
}
