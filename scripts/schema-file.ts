// db/schema.sql: the whole current schema in one file, as dbmate's own dump writes it (pg_dump
// --schema-only, then the applied versions) after migrating a new database. Written with
// PostgreSQL 15 (the oldest server supported: its pg_dump reads no newer one), compared by
// test/db/schema-file.test.ts. `make schema` (DATABASE_URL: a PostgreSQL 15 server) rewrites it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { MIGRATIONS_DIR, migrate, withDatabase } from './db.ts';
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

if (isMain(import.meta.url)) {
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
