// Database bootstrap shared by `make start`, `make test` and the benchmarks: choose
// DATABASE_URL or an embedded PostgreSQL, apply dbmate migrations, set the runtime role's password.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import postgres from 'postgres';
import { Logger, runMigrations } from 'graphile-worker';
import { EmbeddedPgError, startEmbedded, throwawayDataRoot, type EmbeddedHandle } from './embedded-pg.ts';
import { editDatabaseUrl } from '../src/db/url.ts';

const quietLogger = new Logger(() => () => {});

export const MIGRATIONS_DIR = 'db/migrations';

export function withDatabase(url: string, database: string): string {
  return editDatabaseUrl(url, { database });
}

/** The embedded servers' ports (EMBEDDED_PG_PORT overrides), below Linux's ephemeral range
 * (32768-60999): a port in it can be held for a moment by any outgoing connection, and PostgreSQL
 * then fails to listen ("Address already in use"; seen in CI with 54330). */
export const embeddedPort = (kind: 'dev' | 'test'): number =>
  Number(process.env.EMBEDDED_PG_PORT ?? (kind === 'dev' ? 25432 : 25433));

/** DATABASE_URL when set; otherwise an embedded server (its postgres database). When the
 * embedded server cannot start, prints the one sentence that says what to do and exits. */
export async function serverUrl(embeddedName: string, embeddedPort: number,
  opts: { throwaway?: boolean } = {}): Promise<{ url: string; embedded?: EmbeddedHandle }> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL };
  try {
    const embedded = await startEmbedded(embeddedName, embeddedPort, opts.throwaway ? { root: throwawayDataRoot('test'), removeOnStop: true } : {});
    return { url: embedded.url, embedded };
  } catch (e) {
    if (!(e instanceof EmbeddedPgError)) throw e;
    console.error(e.message);
    process.exit(1);
  }
}

function dbmateBin(): string {
  const require = createRequire(import.meta.url);
  return require.resolve(`@dbmate/${process.platform}-${process.arch === 'x64' ? 'x64' : process.arch}/bin/dbmate`);
}

/** Creates the database if needed and applies every pending migration (of `dir`: another chain,
 * e.g. one taken from git history by scripts/catalog-diff.ts). */
export async function migrate(url: string, dir = MIGRATIONS_DIR): Promise<void> {
  const u = new URL(url);
  if (!u.searchParams.has('sslmode')) u.searchParams.set('sslmode', 'disable');
  const out = spawnSync(dbmateBin(), ['--url', u.toString(), '--migrations-dir', dir, '--no-dump-schema', 'up'],
    { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`dbmate failed: ${out.stderr || out.stdout}`);
  // graphile-worker's own schema (the job queue the outbox triggers write to), at its pinned version.
  await runMigrations({ connectionString: url, logger: quietLogger });
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const password = process.env.SVC_RUNTIME_DB_PASSWORD ?? 'svc_runtime';
    await sql.unsafe(`alter role svc_runtime password '${password.replace(/'/g, "''")}'`);
  } finally {
    await sql.end();
  }
}

/** The test-only fixtures (test/fixtures/*.sql), applied to a migrated template database. */
export async function loadTestFixtures(url: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    for (const f of readdirSync('test/fixtures').filter((n) => n.endsWith('.sql')).sort()) {
      await sql.unsafe(readFileSync(`test/fixtures/${f}`, 'utf8'));
    }
  } finally {
    await sql.end();
  }
}

// `npx tsx scripts/db.ts migrate` (`make migrate`): the deploy step, against DATABASE_URL.
if (import.meta.url === `file://${process.argv[1]}` && process.argv[2] === 'migrate') {
  if (!process.env.DATABASE_URL) {
    console.error('DATABASE_URL is required: the owner connection the migrations run as');
    process.exit(2);
  }
  await migrate(process.env.DATABASE_URL);
  console.log('migrated');
}
