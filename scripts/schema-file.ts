// db/schema.sql: the whole current schema in one file, as dbmate's own dump writes it (pg_dump
// --schema-only, then the applied versions) after migrating a new database. Written with
// PostgreSQL 15 (the oldest server supported: its pg_dump reads no newer one), compared by
// test/db/schema-file.test.ts. `make schema` (DATABASE_URL: a PostgreSQL 15 server) rewrites it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { MIGRATIONS_DIR, migrate, withDatabase } from './db.ts';
import { citusMissing, createClusterDatabase, dropClusterDatabase, startCluster, type Cluster } from './citus.ts';
import { editDatabaseUrl } from '../src/db/url.ts';
import { isMain } from '../src/is-main.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const SCHEMA_FILE = join(ROOT, 'db/schema.sql');
export const SCHEMA_MAJOR = 15;

/** Why this server cannot write or check db/schema.sql, or false when it can. */
export async function schemaDumpUnavailable(server: string): Promise<string | false> {
  const sql = postgres(server, { max: 1, onnotice: () => {} });
  try {
    const [{ major, citus }] = await sql`select current_setting('server_version_num')::int / 10000 as major,
      exists (select from pg_extension where extname = 'citus') as citus` as any;
    if (major !== SCHEMA_MAJOR) return `db/schema.sql is PostgreSQL ${SCHEMA_MAJOR}'s dump; this server is ${major}`;
    if (citus) return 'db/schema.sql is one server\'s schema; this is a Citus node';
  } finally {
    await sql.end();
  }
  if (!existsSync(pgDumpDir())) return `pg_dump ${SCHEMA_MAJOR} is not installed (Debian package postgresql-client-${SCHEMA_MAJOR})`;
  return false;
}

const pgDumpDir = () => `/usr/lib/postgresql/${SCHEMA_MAJOR}/bin`;

function dbmateBin(): string {
  const arch = process.arch === 'x64' ? 'x64' : process.arch;
  return join(ROOT, `node_modules/@dbmate/${process.platform}-${arch}/bin/dbmate`);
}

/** A policy's roles in name order: pg_dump lists them in the order it finds them in pg_authid,
 * which moves as a role's row is updated (the migrate step sets the logins' passwords every run). */
export const rolesInOrder = (dump: string) => dump.replace(/^(CREATE POLICY .*? TO )([\w$]+(?:, [\w$]+)+)(?= USING| WITH CHECK|;)/gm,
  (_, head: string, roles: string) => head + roles.split(', ').sort().join(', '));

/** dbmate's dump of a database, as text (policies' roles in name order). */
export function dumpSchema(url: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-schema-'));
  try {
    const u = new URL(url);
    if (!u.searchParams.has('sslmode')) u.searchParams.set('sslmode', 'disable');
    const file = join(dir, 'schema.sql');
    const out = spawnSync(dbmateBin(), ['--url', u.toString(), '--migrations-dir', join(ROOT, MIGRATIONS_DIR), '--schema-file', file, 'dump'],
      { encoding: 'utf8', env: { ...process.env, PATH: `${pgDumpDir()}:${process.env.PATH}` } });
    if (out.status !== 0) throw new Error(`dbmate dump failed: ${out.stderr || out.stdout}`);
    return rolesInOrder(readFileSync(file, 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The dump less what differs between minor releases of the same server and pg_dump (lines kept,
 * so a difference is reported at the file's own line). */
export const comparable = (dump: string) => dump.replace(/^-- Dumped (from database|by pg_dump) version .*$/gm, '-- Dumped $1 version')
  // pg_dump 15.14 and later fence the file with \restrict/\unrestrict; earlier releases do not.
  .replace(/^\\(un)?restrict .*$/gm, '');

/** Migrates a new database on `server`, dumps it, drops it. */
export async function freshSchema(server: string, name = `svc_schema_${process.pid}`): Promise<string> {
  const root = postgres(server, { max: 1, onnotice: () => {} });
  try {
    await root.unsafe(`drop database if exists ${name} with (force)`);
    await migrate(withDatabase(server, name));
    return dumpSchema(withDatabase(server, name));
  } finally {
    await root.unsafe(`drop database if exists ${name} with (force)`);
    await root.end();
  }
}

/** What runs on a Citus cluster, dumped as db/schema.sql is (schema only, no owners or privileges):
 * the coordinator's database, and a worker's less its shards and its copies of the api views
 * (named by shard id, which a cluster of other size or history numbers otherwise). */
export const CITUS_SCHEMA_FILES = {
  coordinator: join(ROOT, 'db/citus/schema-coordinator.sql'),
  worker: join(ROOT, 'db/citus/schema-worker.sql'),
} as const;

export function dumpCitusNode(url: string): string {
  const u = new URL(url);
  if (!u.searchParams.has('sslmode')) u.searchParams.set('sslmode', 'disable');
  const out = spawnSync(join(pgDumpDir(), 'pg_dump'), ['--format=plain', '--encoding=UTF8', '--schema-only', '--no-privileges',
    '--no-owner', '--exclude-schema=api_shard_*', '--exclude-table=*.*_[0-9][0-9][0-9][0-9][0-9][0-9]', '--dbname', u.toString()],
  { encoding: 'utf8', maxBuffer: 256 * 2 ** 20 });
  if (out.status !== 0) throw new Error(`pg_dump failed: ${out.stderr}`);
  return rolesInOrder(out.stdout);
}

/** Migrates a new database on the cluster, dumps its coordinator and first worker, drops it. */
export async function freshCitusSchemas(cluster: Pick<Cluster, 'coordinator' | 'workers'>, name = `svc_schema_${process.pid}`) {
  const url = await createClusterDatabase(cluster, name);
  try {
    await migrate(url);
    return { coordinator: dumpCitusNode(url), worker: dumpCitusNode(editDatabaseUrl(cluster.workers[0]!, { database: name })) };
  } finally {
    await dropClusterDatabase(cluster, name);
  }
}

/** The first line where `committed` and `fresh` differ (after `comparable`), or undefined when equal. */
export function firstDifference(committed: string, fresh: string): { line: number; committed: string; fresh: string } | undefined {
  const a = comparable(committed).split('\n'), b = comparable(fresh).split('\n');
  const at = a.findIndex((line, i) => line !== b[i]);
  if (at < 0 && a.length === b.length) return undefined;
  const i = at < 0 ? Math.min(a.length, b.length) : at;
  return { line: i + 1, committed: a.slice(i, i + 8).join('\n'), fresh: b.slice(i, i + 8).join('\n') };
}

if (isMain(import.meta.url) && process.argv[2] === '--citus') {
  // `make schema-citus`: a local cluster (scripts/citus.ts), a database migrated there, its dumps.
  const missing = citusMissing();
  if (missing) {
    console.error(missing);
    process.exit(2);
  }
  const cluster = await startCluster();
  try {
    const dumps = await freshCitusSchemas(cluster);
    mkdirSync(dirname(CITUS_SCHEMA_FILES.coordinator), { recursive: true });
    for (const node of ['coordinator', 'worker'] as const) {
      writeFileSync(CITUS_SCHEMA_FILES[node], dumps[node]);
      console.log(`wrote ${CITUS_SCHEMA_FILES[node]}`);
    }
  } finally {
    await cluster.stop();
  }
} else if (isMain(import.meta.url)) {
  const server = process.env.DATABASE_URL;
  if (!server) {
    console.error(`DATABASE_URL is required: a PostgreSQL ${SCHEMA_MAJOR} server to migrate a scratch database on`);
    process.exit(2);
  }
  const why = await schemaDumpUnavailable(server);
  if (why) {
    console.error(why);
    process.exit(2);
  }
  writeFileSync(SCHEMA_FILE, await freshSchema(server));
  console.log(`wrote ${SCHEMA_FILE}`);
}
