// Worker-only entry point (`npm run worker`): scale deliveries apart from the API servers.
import { loadConfig } from '../config.ts';
import { startWorker } from './index.ts';

const worker = await startWorker(loadConfig());
console.log(JSON.stringify({ level: 'info', msg: 'worker started' }));
const stop = () => void worker.stop().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
