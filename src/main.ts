// Production entry point: serve with the configuration from the environment.
import { loadConfig, type Config } from './config.ts';
import { connect } from './db/database.ts';
import { createAppContext } from './http/context.ts';
import { createServer } from './http/server.ts';
import { startWorker } from './worker/index.ts';

export async function serve(config: Config = loadConfig()) {
  const database = connect(config.runtimeDatabaseUrl, config.dbPoolSize);
  const app = await createAppContext(config, database);
  const server = await createServer(app);
  await server.start();
  // The outbox worker runs in the same process unless SVC_WORKER=off (then run src/worker/main.ts).
  const worker = config.worker.enabled ? await startWorker(config) : undefined;
  const stop = async () => {
    await server.stop({ timeout: 5000 });
    await worker?.stop();
    await database.close();
  };
  process.once('SIGINT', () => void stop().then(() => process.exit(0)));
  process.once('SIGTERM', () => void stop().then(() => process.exit(0)));
  return { server, stop };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { server } = await serve();
  console.log(JSON.stringify({ level: 'info', msg: 'listening', uri: server.info.uri }));
}
