// Worker-only entry point (`npm run worker`): scale deliveries apart from the API servers.
// SVC_WORKER_METRICS_PORT serves its Prometheus metrics (the API's /metrics covers only its own process).
import http from 'node:http';
import { loadConfig } from '../config.ts';
import { createLogger } from '../observability/logger.ts';
import { startWorker } from './index.ts';
import { survivePoolRejections } from '../db/faults.ts';

const config = loadConfig();
const logger = createLogger(config.logLevel);
survivePoolRejections((e) => logger.error({ err: e }, 'a connection failure nobody awaited (logged, not fatal)'));
// Registered before the worker starts: its fan-out may be sending before startWorker resolves, and a
// SIGTERM then (a deploy, a test) must stop it gracefully, not kill it with a delivery in flight.
let metricsServer: http.Server | undefined;
const starting = startWorker(config, { logger });
// SIGTERM: take no new jobs, let running ones finish (graphile-worker's graceful stop), then exit.
const stop = (signal: string) => {
  logger.info({ signal, deadline_ms: config.shutdownTimeoutMs }, 'worker shutting down');
  setTimeout(() => {
    logger.error('shutdown deadline passed; exiting with jobs unfinished (they are retried elsewhere)');
    process.exit(1);
  }, config.shutdownTimeoutMs).unref();
  void starting.then((worker) => worker.stop()).then(() => { metricsServer?.close(); process.exit(0); }, () => process.exit(1));
};
process.once('SIGINT', () => stop('SIGINT'));
process.once('SIGTERM', () => stop('SIGTERM'));
const worker = await starting;
const metricsPort = Number(process.env.SVC_WORKER_METRICS_PORT ?? 0);
metricsServer = metricsPort
  ? http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') { res.writeHead(404).end(); return; }
    void worker.metrics.registry.metrics().then((text) => {
      res.writeHead(200, { 'content-type': worker.metrics.registry.contentType }).end(text);
    });
  }).listen(metricsPort, process.env.HOST ?? '127.0.0.1')
  : undefined;
logger.info({ metrics_port: metricsPort || undefined }, 'worker started');
