// Database bootstrap shared by `make start`, `make test` and the benchmarks: choose
// DATABASE_URL or an embedded PostgreSQL, apply dbmate migrations, set the passwords of svc_runtime, svc_worker and svc_admin.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import postgres from 'postgres';
import { Logger, runMigrations } from 'graphile-worker';
import { EmbeddedPgError, startEmbedded, throwawayDataRoot, type EmbeddedHandle } from './embedded-pg.ts';
import { editDatabaseUrl } from '../src/db/url.ts';
import { scramVerifier } from '../src/db/scram.ts';
import { isMain } from '../src/is-main.ts';

const quietLogger = new Logger(() => () => {});

/** A connection of this module's: one session, quiet, with a search_path that no role of the
 * service can reach (it may own the database, and with it `public` and the database's settings),
 * since most of these sessions are a superuser's. */
/** A superuser's connection: a search_path that no role of the service can reach (the database, and
 * with it `public`, may be svc_schema's). Every statement on it names its schema. */
export const SUPERUSER_SESSION = { max: 1, onnotice: () => {}, connection: { search_path: 'pg_catalog, pg_temp' } };
const SESSION = SUPERUSER_SESSION;

export const MIGRATIONS_DIR = 'db/migrations';

/** The migrations that run on a Citus coordinator only (the tables' placement, the BI relay, the
 * workers' preparation), beside a chain's db/migrations: db/citus/migrations. dbmate runs both
 * folders there as one chain, in version order; one server never runs this one. */
export const clusterMigrationsDir = (dir = MIGRATIONS_DIR): string => join(dirname(dir), 'citus', 'migrations');

/** The folders of the chain a database runs: db/migrations, and on a Citus coordinator (the
 * extension in the database) db/citus/migrations too. */
async function chainOf(url: string, dir: string): Promise<string[]> {
  const cluster = clusterMigrationsDir(dir);
  const sql = postgres(url, SESSION);
  try {
    const [r] = await sql<{ citus: boolean }[]>`select exists (select from pg_extension where extname = 'citus') as citus`;
    // A chain from before the folder (another revision's) holds its cluster steps in db/migrations.
    return r?.citus && existsSync(cluster) ? [dir, cluster] : [dir];
  } catch (e) {
    // No such database yet: dbmate creates it, without Citus.
    if ((e as { code?: string }).code === '3D000') return [dir];
    throw e;
  } finally {
    await sql.end();
  }
}

const versionsIn = (dirs: string[], pattern = /^(\d+)_.*\.sql$/): string[] =>
  dirs.flatMap((d) => (existsSync(d) ? readdirSync(d) : []).map((f) => pattern.exec(f)?.[1]).filter((v): v is string => !!v)).sort();

export function withDatabase(url: string, database: string): string {
  return editDatabaseUrl(url, { database });
}

/** The embedded servers' ports (EMBEDDED_PG_PORT overrides), below Linux's ephemeral range
 * (32768-60999): a port in it can be held for a moment by any outgoing connection, and PostgreSQL
 * then fails to listen ("Address already in use"). */
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

/** The newest migration of the chain the baseline replaced (in git history before the baseline:
 * git log -- db/migrations/<this>_*): a database that ran it has what the baseline makes. */
export const OLD_CHAIN_LAST = '20261206050000';

/** The cluster's first baseline and the privileges' copy after 20261206070000 (db/citus/migrations in
 * git history: git log -- 'db/citus/migrations/20261206061400_*'), which ran as a superuser;
 * db/citus/migrations' baseline replaced them, to run as svc_deploy after db/citus/bootstrap.sql. */
export const REPLACED_CLUSTER_BASELINE = ['20261206061400', '20261206061500', '20261206061600', '20261206070100'];

/** The baseline's versions (files named `<version>_baseline_<area>.sql`), oldest first: db/migrations'
 * and, for a Citus coordinator, db/citus/migrations' too. */
export function baselineVersions(dir = MIGRATIONS_DIR, cluster = false): string[] {
  return versionsIn(cluster ? [dir, clusterMigrationsDir(dir)] : [dir], /^(\d+)_baseline_.*\.sql$/);
}

/** Before dbmate runs: a database the whole old chain migrated gets the baseline's versions
 * recorded as applied, in one transaction (the baseline would make what it has; dbmate then runs
 * only what came after). A database with part of the old chain is refused: the baseline holds the
 * definitions of the chain's end, not its steps. A coordinator that ran the cluster's first
 * baseline gets its replacement's versions recorded likewise. A new database, or one already past
 * the baseline, is left to dbmate. Answers the versions recorded. */
export async function adoptBaseline(url: string, dir = MIGRATIONS_DIR): Promise<string[]> {
  const chain = await chainOf(url, dir);
  const baseline = baselineVersions(dir, chain.length > 1);
  if (!baseline.length) return [];
  const sql = postgres(url, SESSION);
  try {
    return await sql.begin(async (tx) => {
      const [found] = await tx<{ table: string | null }[]>`select to_regclass('public.schema_migrations')::text as table`;
      if (!found?.table) return [];
      // One adopter at a time: a second one waits here, then finds the versions recorded (dbmate's
      // own runs that follow are not serialized by this lock).
      await tx`lock table public.schema_migrations in share row exclusive mode`;
      const applied = new Set((await tx<{ version: string }[]>`select version::text from public.schema_migrations`).map((r) => r.version));
      const missing = baseline.filter((v) => !applied.has(v));
      // A coordinator that ran the cluster's first baseline (as a superuser) has what its
      // replacement makes, once the bootstrap ran: the replacement's versions are recorded.
      const cluster = chain.length > 1 ? versionsIn([clusterMigrationsDir(dir)], /^(\d+)_baseline_.*\.sql$/) : [];
      if (cluster.length && REPLACED_CLUSTER_BASELINE.every((v) => applied.has(v)) && cluster.every((v) => !applied.has(v))) {
        await tx`insert into public.schema_migrations (version) select unnest(${cluster}::text[])`;
        return cluster;
      }
      // Versions no file here has: the old chain's.
      const files = new Set(versionsIn([dir, clusterMigrationsDir(dir)]));
      const old = [...applied].filter((v) => !files.has(v));
      // Only a database that ran none of the baseline adopts it: one that ran part of it is dbmate's.
      if (missing.length !== baseline.length || !old.length) return [];
      if (!applied.has(OLD_CHAIN_LAST)) {
        throw new Error(`this database ran part of the migrations the baseline replaced (its newest: ${old.sort().pop()}, the chain's last: ${OLD_CHAIN_LAST}): `
          + `migrate it with the release before the baseline first (the chain is in git history: git log -- db/migrations/${OLD_CHAIN_LAST}_*), then with this one`);
      }
      await tx`insert into public.schema_migrations (version) select unnest(${missing}::text[])`;
      return missing;
    });
  } catch (e) {
    // No such database yet: dbmate creates it, and the baseline runs.
    if ((e as { code?: string }).code === '3D000') return [];
    throw e;
  } finally {
    await sql.end();
  }
}

/** dbmate's command against `url` (sslmode=disable unless the URL names one). */
function dbmate(url: string, dirs: string[], command: 'up' | 'rollback'): string {
  const u = new URL(url);
  if (!u.searchParams.has('sslmode')) u.searchParams.set('sslmode', 'disable');
  const out = spawnSync(dbmateBin(), ['--url', u.toString(), ...dirs.flatMap((d) => ['--migrations-dir', d]), '--no-dump-schema', command],
    { encoding: 'utf8' });
  if (out.status !== 0) {
    const at = out.stdout.match(/^Applying: (.*)$/gm)?.at(-1)?.slice('Applying: '.length);
    throw new Error(`dbmate failed${at ? ` at ${at}` : ''}: ${out.stderr || out.stdout}`);
  }
  return out.stdout;
}

/** The deploy login's URL beside `url` (same server and database; SVC_DEPLOY_DB_PASSWORD). */
export const deployUrl = (url: string): string =>
  editDatabaseUrl(url, { username: 'svc_deploy', password: process.env.SVC_DEPLOY_DB_PASSWORD ?? 'svc_deploy' });

/** Whether `url` logs in as a superuser (who can run the bootstrap), and whether its database is a
 * Citus coordinator; both false for a database that does not exist yet (its server is asked). */
async function whoIs(url: string): Promise<{ superuser: boolean; citus: boolean }> {
  const ask = async (u: string, citus: boolean) => {
    const sql = postgres(u, SESSION);
    try {
      const [r] = await sql.unsafe<{ superuser: boolean; citus: boolean }[]>(`select rolsuper as superuser, ${citus
        ? `exists (select from pg_extension where extname = 'citus')` : 'false'} as citus from pg_roles where rolname = current_user`);
      return { superuser: !!r?.superuser, citus: !!r?.citus };
    } finally {
      await sql.end();
    }
  };
  try {
    return await ask(url, true);
  } catch (e) {
    if ((e as { code?: string }).code !== '3D000') throw e;
    return ask(withDatabase(url, 'postgres'), false);
  }
}

/** Our schemas, and on a cluster each worker's copies of the api views (the relay's dblink schema is
 * the cluster bootstrap's, a superuser's). */
const OUR_SCHEMAS = `n.nspname in ('api', 'app', 'app_private', 'control', 'reporting', 'skills', 'graphile_worker', 'reporting_private')
  or n.nspname ~ '^api_shard_\\d+$'`;

/** Hands what a superuser's migrations made in this database (an earlier release's) to svc_schema:
 * schemas, tables, views and sequences, functions, types, and the default privileges. An
 * extension's members stay its owner's. One DO block, run on the coordinator and, for what a
 * worker keeps of its own (its context key, its copies of the api views), on each worker. */
const HANDOVER = `do $handover$
  declare
    r record;
  begin
    for r in select n.nspname from pg_namespace n join pg_roles o on o.oid = n.nspowner
              where (${OUR_SCHEMAS}) and o.rolsuper
                and not exists (select from pg_depend d where d.classid = 'pg_namespace'::regclass and d.objid = n.oid and d.deptype = 'e') loop
      execute format('alter schema %I owner to svc_schema', r.nspname);
    end loop;
    -- Tables, views and sequences of their own (a table takes its identity sequences with it).
    for r in select c.oid::regclass as rel, c.relkind from pg_class c join pg_namespace n on n.oid = c.relnamespace
               join pg_roles o on o.oid = c.relowner
              where ((${OUR_SCHEMAS}) or c.oid = to_regclass('public.schema_migrations')) and o.rolsuper
                and c.relkind in ('r', 'p', 'v', 'm', 'S', 'f', 'c')
                and not exists (select from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid
                                  and (d.deptype = 'e' or c.relkind = 'S' and d.deptype in ('a', 'i'))) loop
      execute format('alter %s %s owner to svc_schema',
        case r.relkind when 'v' then 'view' when 'm' then 'materialized view' when 'S' then 'sequence' when 'f' then 'foreign table'
          when 'c' then 'type' else 'table' end, r.rel);
    end loop;
    for r in select p.oid::regprocedure as fn from pg_proc p join pg_namespace n on n.oid = p.pronamespace
               join pg_roles o on o.oid = p.proowner
              where (${OUR_SCHEMAS}) and o.rolsuper
                and not exists (select from pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e') loop
      execute format('alter routine %s owner to svc_schema', r.fn);
    end loop;
    for r in select t.oid::regtype as ty from pg_type t join pg_namespace n on n.oid = t.typnamespace
               join pg_roles o on o.oid = t.typowner
              where (${OUR_SCHEMAS}) and o.rolsuper and t.typtype in ('c', 'd', 'e') and t.typrelid = 0
                and not exists (select from pg_depend d where d.classid = 'pg_type'::regclass and d.objid = t.oid and d.deptype = 'e') loop
      execute format('alter type %s owner to svc_schema', r.ty);
    end loop;
    -- The baseline's default privileges were the migrating role's: they become svc_schema's.
    for r in select d.defaclrole::regrole as who from pg_default_acl d join pg_roles o on o.oid = d.defaclrole
              where o.rolsuper and d.defaclobjtype = 'f' and d.defaclnamespace = 0 loop
      alter default privileges for role svc_schema revoke all on functions from public;
      execute format('alter default privileges for role %s grant all on functions to public', r.who);
    end loop;
  end $handover$`;

/** The bootstrap, as a superuser: db/bootstrap.sql (the roles, their memberships, a parameter's
 * grant) on the server, and on a Citus cluster on every node; the database, made if missing and
 * owned by svc_schema on every node; what a superuser's migrations made there handed to svc_schema
 * (a database an earlier release migrated as a superuser), after db/citus/bootstrap.sql on a
 * cluster's coordinator; and db/bootstrap-database.sql in it (svc-admin's BI logins). */
export async function bootstrap(url: string): Promise<void> {
  const database = new URL(url).pathname.slice(1);
  const { citus } = await whoIs(url);
  let workers: string[] = [];
  if (citus) {
    const sql = postgres(url, SESSION);
    try {
      workers = (await sql<{ node: string }[]>`select format('%s:%s', case when nodename ~ ':' then '[' || nodename || ']' else nodename end, nodeport) as node
        from pg_dist_node where noderole = 'primary' and groupid <> 0 order by nodeport`).map((r) => r.node);
    } finally {
      await sql.end();
    }
  }
  // Each node: the roles (a role is a server's, not a database's), then the database given to
  // svc_schema, from a database without Citus (a worker refuses ALTER DATABASE in its own).
  for (const node of [url, ...workers.map((hosts) => editDatabaseUrl(url, { hosts }))]) {
    const server = postgres(withDatabase(node, 'postgres'), SESSION);
    try {
      await server.unsafe(readFileSync('db/bootstrap.sql', 'utf8'));
      // The deploy login's password before it logs in (a SCRAM verifier: statement texts reach logs).
      await server.unsafe(`alter role svc_deploy password '${scramVerifier(process.env.SVC_DEPLOY_DB_PASSWORD ?? 'svc_deploy')}'`);
      const [found] = await server<{ owner: string }[]>`select pg_get_userbyid(datdba) as owner from pg_database where datname = ${database}`;
      if (!found) await server.unsafe(`create database "${database}" owner svc_schema`);
      else if (found.owner !== 'svc_schema') await server.unsafe(`alter database "${database}" owner to svc_schema`);
    } finally {
      await server.end();
    }
  }
  const sql = postgres(url, SESSION);
  try {
    // The cluster's part first: its event triggers then run the bootstrap's function during the
    // handover below, not one the handover gives to svc_schema.
    if (citus) await sql.unsafe(readFileSync('db/citus/bootstrap.sql', 'utf8'));
    await sql.unsafe(HANDOVER);
    if (citus) {
      // Then each worker's own objects, over connections that see the coordinator's change committed.
      const failed = await sql<{ node: string; result: string }[]>`select format('%s:%s', nodename, nodeport) as node, result
        from run_command_on_workers(${`set search_path = pg_catalog, pg_temp; set citus.enable_ddl_propagation = off; ${HANDOVER}`}) where not success`;
      if (failed.length) throw new Error(`handing the workers' objects to svc_schema failed: ${failed.map((f) => `${f.node}: ${f.result}`).join('; ')}`);
    }
    await sql.unsafe(readFileSync('db/bootstrap-database.sql', 'utf8'));
  } finally {
    await sql.end();
  }
}

/** Rolls the newest applied migration back (its down section), as `dbmate rollback` does; the
 * baseline's refuse. Answers dbmate's line naming it. As the deploy login where `url` is a
 * superuser's (as migrate). */
export async function rollback(url: string, dir = MIGRATIONS_DIR): Promise<string> {
  const who = await whoIs(url);
  const as = who.superuser ? deployUrl(url) : url;
  return dbmate(as, await chainOf(url, dir), 'rollback').trim();
}

export interface MigrateOptions {
  /** Run the chain as the URL's own role, not as svc_deploy: another revision's chain, written for
   * a superuser (scripts/catalog-diff.ts, the benchmarks against a revision). */
  asGiven?: boolean;
}

/** Applies every pending migration (of `dir`: another chain, e.g. one taken from git history by
 * scripts/catalog-diff.ts). Where `url` is a superuser's, on one server or a Citus coordinator: the
 * bootstrap first, then the migrations as svc_deploy. With any other login, the migrations as that
 * login (a deploy pipeline's svc_deploy URL, once a DBA ran the bootstrap). */
export async function migrate(url: string, dir = MIGRATIONS_DIR, options: MigrateOptions = {}): Promise<void> {
  const unlock = await serverLock(url);
  try {
    await migrateLocked(url, dir, options);
  } finally {
    await unlock();
  }
}

/** One migration at a time on a server (a cluster: its coordinator), whichever database: the
 * bootstrap's roles and Citus's propagation of each object's owner to the workers write shared
 * catalogs, and two at once fail ("tuple concurrently updated"). A session advisory lock in the
 * server's postgres database (advisory locks are per database); none where that cannot be reached. */
async function serverLock(url: string): Promise<() => Promise<void>> {
  const sql = postgres(withDatabase(url, 'postgres'), SESSION);
  try {
    await sql`select pg_advisory_lock(hashtext('svc migrate'))`;
  } catch {
    await sql.end();
    return async () => {};
  }
  return async () => { await sql.end(); };
}

async function migrateLocked(url: string, dir: string, options: MigrateOptions): Promise<void> {
  const who = await whoIs(url);
  const deploy = who.superuser && !options.asGiven;
  if (deploy) await bootstrap(url);
  const as = deploy ? deployUrl(url) : url;
  await adoptBaseline(as, dir);
  dbmate(as, await chainOf(as, dir), 'up');
  // graphile-worker's own schema (the job queue the outbox triggers write to), at its pinned version.
  await runMigrations({ connectionString: as, logger: quietLogger });
  const sql = postgres(as, SESSION);
  try {
    // graphile-worker's schema is made above, after the migrations: what svc_owner needs of it to
    // queue jobs is granted now, on every run (app_private.job_queue_privileges).
    await sql.unsafe(`do $$ begin
      if to_regprocedure('app_private.job_queue_privileges()') is not null then perform app_private.job_queue_privileges(); end if;
    end $$`);
    // On a cluster, the workers' copies of the api views are made again for what the chain changed
    // (else lists read through the view functions until the worker's citus_prepare job runs).
    await sql.unsafe(`do $$ begin
      if to_regprocedure('app_private.citus_prepare_if_needed()') is not null then perform app_private.citus_prepare_if_needed(); end if;
    end $$`);
  } finally {
    await sql.end();
  }
  if (who.superuser) await setPasswords(url);
}

/** The logins' passwords, as SCRAM verifiers (the statement text reaches logs and
 * pg_stat_statements): SVC_<ROLE>_DB_PASSWORD, else the role's name (development and tests). */
async function setPasswords(url: string): Promise<void> {
  const sql = postgres(url, SESSION);
  try {
    for (const name of ['SVC_RUNTIME_DB_PASSWORD', 'SVC_WORKER_DB_PASSWORD', 'SVC_ADMIN_DB_PASSWORD', 'SVC_DEPLOY_DB_PASSWORD']) {
      if (process.env.NODE_ENV === 'production' && !process.env[name]) {
        throw new Error(`${name} is required when NODE_ENV=production (the migrate step sets it on ${name.replace(/^SVC_(\w+)_DB_PASSWORD$/, (_, r: string) => `svc_${r.toLowerCase()}`)})`);
      }
    }
    // A chain from before a login (scripts/catalog-diff.ts) has not made it.
    for (const [role, password] of [['svc_runtime', process.env.SVC_RUNTIME_DB_PASSWORD], ['svc_worker', process.env.SVC_WORKER_DB_PASSWORD],
      ['svc_admin', process.env.SVC_ADMIN_DB_PASSWORD], ['svc_deploy', process.env.SVC_DEPLOY_DB_PASSWORD]] as const) {
      await sql.unsafe(`do $$ begin
        if exists (select from pg_roles where rolname = '${role}') then
          alter role ${role} password '${scramVerifier(password ?? role)}';
        end if;
      end $$`);
    }
  } finally {
    await sql.end();
  }
}

/** The test-only fixtures (test/fixtures/*.sql), applied to a migrated template database. */
export async function loadTestFixtures(url: string): Promise<void> {
  const sql = postgres(url, SESSION);
  try {
    for (const f of readdirSync('test/fixtures').filter((n) => n.endsWith('.sql')).sort()) {
      await sql.unsafe(readFileSync(`test/fixtures/${f}`, 'utf8'));
    }
  } finally {
    await sql.end();
  }
}

// `npx tsx scripts/db.ts migrate` (`make migrate`): the deploy step, against DATABASE_URL;
// `npx tsx scripts/db.ts rollback`: the newest migration's down section (db/README.md, "Migrations on a live database").
if (isMain(import.meta.url) && (process.argv[2] === 'migrate' || process.argv[2] === 'rollback')) {
  if (!process.env.DATABASE_URL) {
    console.error('DATABASE_URL is required: the owner connection the migrations run as');
    process.exit(2);
  }
  if (process.argv[2] === 'rollback') {
    console.log(await rollback(process.env.DATABASE_URL));
  } else {
    await migrate(process.env.DATABASE_URL);
    console.log('migrated');
  }
}
