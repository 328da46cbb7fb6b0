// Compares the catalogs of two databases: what a chain of migrations made, object by object, in
// an order-independent form (a squashed chain must make the same database as the old).
//
//   npx tsx scripts/catalog-diff.ts <side A> <side B>
//
// A side is a database URL (compared as it is), or `rev:<git revision>` / `rev:WORKTREE`: a new
// database on the server (DATABASE_URL; with --citus a local Citus cluster, scripts/citus.ts)
// migrated by scripts/db.ts migrate with that revision's db/migrations and db/citus/migrations (`git show`, into a
// temporary directory), then dropped. Prints each difference and exits 1 when there is one, 0 when
// the catalogs are equal. On Citus (the extension in the database) the coordinator's distribution
// metadata is compared too, and each worker's database (from pg_dist_node, in port order) with the
// worker of the same rank, shard ids replaced by the shard's table and rank.
//
// What it compares: schemas, relations (kind, owner, RLS enabled and forced, options, persistence,
// replica identity), columns (position, type, default, not null, identity, generated, collation,
// options), constraints, indexes, policies, ACLs of every object and column, functions
// (pg_get_functiondef, owner), views and their definitions, triggers (definition, enabled state),
// event triggers, sequences, types, domains and enums, extensions, comments, default privileges,
// the roles the database names that are not PostgreSQL's own nor BI logins (attributes, memberships, settings), the
// database's own settings, and each table's row count (the rows a migration inserts).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { migrate, withDatabase } from './db.ts';
import { startCluster, createClusterDatabase, dropClusterDatabase, type Cluster } from './citus.ts';
import { isMain } from '../src/is-main.ts';

export type Catalog = Map<string, string>;

type Sql = postgres.Sql;

/** Schemas of PostgreSQL and of Citus itself, and extension members: not what the migrations made. */
/** An array in a stable order: the order an ACL or option list is stored in says nothing. */
const sorted = (expr: string) => `(select array_agg(e order by e) from unnest(${expr}) e)`;
/** An object's privileges in effect: a NULL ACL is its kind's default for its owner, the same as
 * that default written out (as a grant and its revoke leave it). */
const effective = (acl: string, kind: string, owner: string) => sorted(`coalesce(${acl}, acldefault(${kind}, ${owner}))::text[]`);
const SYSTEM_SCHEMAS = `n.nspname not in ('pg_catalog', 'information_schema', 'pg_toast', 'citus', 'citus_internal', 'columnar', 'columnar_internal')
  and n.nspname !~ '^pg_(toast_)?temp_'`;
const notExtensionMember = (classid: string, oid: string) =>
  `not exists (select from pg_depend d where d.classid = '${classid}'::regclass and d.objid = ${oid} and d.deptype = 'e')`;

/** The queries: each row is one object, its key (unique in its kind) and its description. */
const QUERIES: Record<string, string> = {
  schema: `select n.nspname as key, json_build_object('owner', pg_get_userbyid(n.nspowner), 'acl', ${effective('n.nspacl', `'n'`, 'n.nspowner')}) as v
    from pg_namespace n where ${SYSTEM_SCHEMAS} and ${notExtensionMember('pg_namespace', 'n.oid')}`,
  relation: `select format('%s.%s', n.nspname, c.relname) as key, json_build_object(
      'kind', c.relkind, 'owner', pg_get_userbyid(c.relowner), 'rls', c.relrowsecurity, 'forced', c.relforcerowsecurity,
      'options', ${sorted('c.reloptions')}, 'persistence', c.relpersistence, 'replident', c.relreplident,
      'partition', pg_get_expr(c.relpartbound, c.oid), 'partkey', case when c.relkind = 'p' then pg_get_partkeydef(c.oid) end,
      'acl', ${effective('c.relacl', `case c.relkind when 'S' then 's' else 'r' end::"char"`, 'c.relowner')}, 'access_method', (select amname from pg_am where oid = c.relam),
      'view', case when c.relkind in ('v', 'm') then pg_get_viewdef(c.oid) end) as v
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where c.relkind in ('r', 'p', 'v', 'm', 'S', 'f', 'c') and ${SYSTEM_SCHEMAS} and ${notExtensionMember('pg_class', 'c.oid')}
      and not exists (select from pg_type t join pg_depend d on d.classid = 'pg_type'::regclass and d.objid = t.oid and d.deptype = 'e' where t.typrelid = c.oid)`,
  column: `select format('%s.%s.%s', n.nspname, c.relname, a.attname) as key, json_build_object(
      'position', row_number() over (partition by c.oid order by a.attnum), 'type', format_type(a.atttypid, a.atttypmod),
      'not_null', a.attnotnull, 'default', pg_get_expr(ad.adbin, ad.adrelid), 'identity', a.attidentity,
      'generated', a.attgenerated, 'collation', case when a.attcollation <> t.typcollation then (select collname from pg_collation where oid = a.attcollation) end,
      -- pg_attver: an option this machine's PostgreSQL 15 puts on every view column, its value per database.
      'options', (select array_agg(o order by o) from unnest(a.attoptions) o where o !~ '^pg_attver='), 'acl', ${sorted('a.attacl::text[]')}, 'storage', nullif(a.attstorage, t.typstorage)) as v
    from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
      join pg_type t on t.oid = a.atttypid left join pg_attrdef ad on ad.adrelid = a.attrelid and ad.adnum = a.attnum
    where a.attnum > 0 and not a.attisdropped and c.relkind in ('r', 'p', 'v', 'm', 'f', 'c')
      and ${SYSTEM_SCHEMAS} and ${notExtensionMember('pg_class', 'c.oid')}`,
  constraint: `select format('%s.%s.%s', n.nspname, coalesce(c.relname, t.typname), co.conname) as key, json_build_object(
      'type', co.contype, 'def', pg_get_constraintdef(co.oid), 'deferrable', co.condeferrable, 'deferred', co.condeferred,
      'validated', co.convalidated, 'inherited', co.conislocal) as v
    from pg_constraint co join pg_namespace n on n.oid = co.connamespace
      left join pg_class c on c.oid = co.conrelid left join pg_type t on t.oid = co.contypid
    where ${SYSTEM_SCHEMAS} and ${notExtensionMember('pg_class', 'coalesce(c.oid, 0)')} and ${notExtensionMember('pg_type', 'coalesce(t.oid, 0)')}`,
  index: `select format('%s.%s', n.nspname, c.relname) as key, json_build_object('def', pg_get_indexdef(c.oid),
      'table', i.indrelid::regclass::text, 'clustered', i.indisclustered, 'valid', i.indisvalid, 'replident', i.indisreplident) as v
    from pg_index i join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace
    where ${SYSTEM_SCHEMAS} and ${notExtensionMember('pg_class', 'i.indrelid')}`,
  policy: `select format('%s.%s.%s', schemaname, tablename, policyname) as key, json_build_object('permissive', permissive,
      'roles', (select array_agg(r order by r) from unnest(roles) r), 'cmd', cmd, 'qual', qual, 'with_check', with_check) as v
    from pg_policies where schemaname not in ('pg_catalog', 'information_schema')`,
  function: `select format('%s.%s(%s)', n.nspname, p.proname, pg_get_function_identity_arguments(p.oid)) as key, json_build_object(
      'kind', p.prokind, 'owner', pg_get_userbyid(p.proowner), 'acl', ${effective('p.proacl', `'f'`, 'p.proowner')}, 'config', ${sorted('p.proconfig')},
      'def', case when p.prokind <> 'a' then pg_get_functiondef(p.oid) end) as v
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where ${SYSTEM_SCHEMAS} and ${notExtensionMember('pg_proc', 'p.oid')}`,
  trigger: `select format('%s.%s.%s', n.nspname, c.relname, tg.tgname) as key, json_build_object(
      'def', pg_get_triggerdef(tg.oid), 'enabled', tg.tgenabled) as v
    from pg_trigger tg join pg_class c on c.oid = tg.tgrelid join pg_namespace n on n.oid = c.relnamespace
    where not tg.tgisinternal and ${SYSTEM_SCHEMAS}`,
  event_trigger: `select e.evtname as key, json_build_object('event', e.evtevent, 'owner', pg_get_userbyid(e.evtowner),
      'function', e.evtfoid::regprocedure::text, 'enabled', e.evtenabled, 'tags', e.evttags) as v
    from pg_event_trigger e where ${notExtensionMember('pg_event_trigger', 'e.oid')}`,
  sequence: `select format('%s.%s', n.nspname, c.relname) as key, json_build_object('type', format_type(s.seqtypid, null),
      'start', s.seqstart, 'increment', s.seqincrement, 'max', s.seqmax, 'min', s.seqmin, 'cache', s.seqcache, 'cycle', s.seqcycle,
      'owned_by', (select format('%s.%s', d.refobjid::regclass, d.refobjsubid) from pg_depend d
                    where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.refclassid = 'pg_class'::regclass and d.deptype in ('a', 'i'))) as v
    from pg_sequence s join pg_class c on c.oid = s.seqrelid join pg_namespace n on n.oid = c.relnamespace
    where ${SYSTEM_SCHEMAS} and ${notExtensionMember('pg_class', 'c.oid')}`,
  type: `select format('%s.%s', n.nspname, t.typname) as key, json_build_object('kind', t.typtype, 'owner', pg_get_userbyid(t.typowner),
      'acl', ${effective('t.typacl', `'T'`, 't.typowner')}, 'base', case when t.typtype = 'd' then format_type(t.typbasetype, t.typtypmod) end,
      'not_null', t.typnotnull, 'default', t.typdefault,
      'labels', case when t.typtype = 'e' then (select array_agg(enumlabel order by enumsortorder) from pg_enum where enumtypid = t.oid) end,
      'range', case when t.typtype = 'r' then (select format_type(rngsubtype, null) from pg_range where rngtypid = t.oid) end) as v
    from pg_type t join pg_namespace n on n.oid = t.typnamespace
    where t.typtype in ('d', 'e', 'r', 'm', 'b', 'p') and not (t.typelem <> 0 and t.typlen = -1 and t.typcategory = 'A')
      and ${SYSTEM_SCHEMAS} and ${notExtensionMember('pg_type', 't.oid')}`,
  extension: `select e.extname as key, json_build_object('version', e.extversion, 'schema', e.extnamespace::regnamespace::text,
      'owner', pg_get_userbyid(e.extowner)) as v from pg_extension e`,
  comment: `select pg_describe_object(d.classoid, d.objoid, d.objsubid) as key, to_json(d.description) as v
    from pg_description d where d.objoid >= 16384
      and not exists (select from pg_depend x where x.classid = d.classoid and x.objid = d.objoid and x.deptype = 'e')`,
  // PostgreSQL's and the extensions' own objects whose privileges a migration changed (Citus's
  // functions that run SQL on other nodes are revoked from PUBLIC): their ACL against initdb's or
  // the extension script's.
  system_acl: `select format('%s %s', k.kind, k.name) as key, to_json(${sorted('k.acl::text[]')}) as v from (
      select 'function' as kind, p.oid::regprocedure::text as name, p.proacl as acl, p.oid, 'pg_proc'::regclass as cls,
             p.pronamespace = 'pg_catalog'::regnamespace or not ${notExtensionMember('pg_proc', 'p.oid')} as system
        from pg_proc p
      union all
      select 'relation', c.oid::regclass::text, c.relacl, c.oid, 'pg_class'::regclass,
             c.relnamespace = 'pg_catalog'::regnamespace or not ${notExtensionMember('pg_class', 'c.oid')}
        from pg_class c) k
      left join pg_init_privs i on i.classoid = k.cls and i.objoid = k.oid and i.objsubid = 0
    where k.system and k.acl is distinct from i.initprivs`,
  default_acl: `select format('%s %s %s', pg_get_userbyid(a.defaclrole), coalesce(a.defaclnamespace::regnamespace::text, '*'), a.defaclobjtype) as key,
      to_json(${sorted('a.defaclacl::text[]')}) as v from pg_default_acl a`,
  role: `select r.rolname as key, json_build_object('superuser', r.rolsuper, 'inherit', r.rolinherit, 'createrole', r.rolcreaterole,
      'createdb', r.rolcreatedb, 'login', r.rolcanlogin, 'replication', r.rolreplication, 'bypassrls', r.rolbypassrls,
      'connlimit', r.rolconnlimit, 'valid_until', r.rolvaliduntil,
      'member_of', (select array_agg(format('%s admin=%s', g.rolname, m.admin_option) order by g.rolname)
                    from pg_auth_members m join pg_roles g on g.oid = m.roleid where m.member = r.oid),
      'settings', (select array_agg(x order by x) from pg_db_role_setting s, unnest(s.setconfig) x
                   where s.setrole = r.oid and s.setdatabase in (0, (select oid from pg_database where datname = current_database())))) as v
    from pg_roles r where r.oid >= 16384 and r.rolname !~ '^pg_'
      -- BI logins: made by svc-admin reporting grant, not by migrations.
      and r.rolname !~ '^svc_bi_'`,
  database: `select 'settings' as key, to_json((select array_agg(x order by x) from pg_db_role_setting s, unnest(s.setconfig) x
      where s.setrole = 0 and s.setdatabase = (select oid from pg_database where datname = current_database()))) as v`,
};

/** Citus's metadata on the coordinator (and on workers, which hold a copy): which tables are
 * distributed how, with which colocation (named by the group's tables), which objects it propagates. */
const CITUS_QUERIES: Record<string, string> = {
  dist_table: `select p.logicalrelid::regclass::text as key, json_build_object('method', p.partmethod,
      'column', case when p.partkey is not null then column_to_column_name(p.logicalrelid, p.partkey) end,
      'colocated_with', (select array_agg(q.logicalrelid::regclass::text order by q.logicalrelid::regclass::text)
                         from pg_dist_partition q where q.colocationid = p.colocationid and p.colocationid <> 0),
      'repmodel', p.repmodel, 'autoconverted', p.autoconverted,
      'shards', (select count(*) from pg_dist_shard s where s.logicalrelid = p.logicalrelid),
      'placements', (select array_agg(format('%s..%s@%s', s.shardminvalue, s.shardmaxvalue, dn.nodeport) order by s.shardminvalue::bigint nulls first, dn.nodeport)
                     from pg_dist_shard s join pg_dist_placement pl using (shardid) join pg_dist_node dn on dn.groupid = pl.groupid
                     where s.logicalrelid = p.logicalrelid)) as v
    from pg_dist_partition p`,
  dist_object: `select format('%s %s %s', a.type, case when a.type = 'database' and a.object_names = array[current_database()::text]
      then '{<this database>}' else a.object_names::text end, a.object_args) as key, json_build_object(
      'argument', o.distribution_argument_index, 'force_delegation', o.force_delegation,
      'colocated_with', (select array_agg(q.logicalrelid::regclass::text order by q.logicalrelid::regclass::text)
                         from pg_dist_partition q where q.colocationid = o.colocationid)) as v
    from pg_dist_object o, pg_identify_object_as_address(o.classid, o.objid, o.objsubid) a
    -- BI logins, as in role above: svc-admin makes them, and the bootstrap records on a cluster those
    -- that exist when it runs (another database's test may have made one since the other side's).
    where not (a.type = 'role' and a.object_names[1] ~ '^svc_bi_')`,
};

/** Replaces every shard id by its table and rank (`tasks_102008` → `tasks_#3`), and the generation
 * numbers the copies of the api views record, which count DDL, not what it made. */
async function shardNormalizer(sql: Sql): Promise<(s: string) => string> {
  const rows = await sql.unsafe<{ shardid: string; rank: string }[]>(`select shardid::text, row_number() over (
      partition by logicalrelid order by shardminvalue::bigint nulls first)::text as rank from pg_dist_shard`);
  const rank = new Map(rows.map((r) => [r.shardid, r.rank]));
  return (s) => s
    .replace(/_(\d{5,})\b/g, (m, id: string) => (rank.has(id) ? `_#${rank.get(id)}` : m))
    .replace(/shard_views_current\((?:\\"|'|\()?\d+(?:'::bigint|\)::bigint)?(?:, (?:\\"|'|\()?\d+(?:'::bigint|\)::bigint)?)?/g, 'shard_views_current(<generation>, <shard>')
    .replace(/^"\d+:/, '"<generation>:');
}

export async function readCatalog(url: string): Promise<{ catalog: Catalog; workers: string[] }> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const citus = (await sql`select 1 from pg_extension where extname = 'citus'`).length > 0;
    const normalize = citus ? await shardNormalizer(sql) : (s: string) => s;
    const catalog: Catalog = new Map();
    const queries = { ...QUERIES, ...(citus ? CITUS_QUERIES : {}) };
    const roles = new Map<string, string>();
    for (const [kind, q] of Object.entries(queries)) {
      for (const row of await sql.unsafe<{ key: string; v: unknown }[]>(q)) {
        if (kind === 'role') roles.set(row.key, JSON.stringify(row.v));
        else catalog.set(`${kind} ${normalize(row.key)}`, normalize(JSON.stringify(row.v)));
      }
    }
    // Roles belong to the cluster, which other databases share (tests beside make and drop theirs):
    // the ones this database names (owners, grantees, policies' roles, default privileges), and
    // those these are members of.
    const named = new Set<string>();
    for (const v of catalog.values()) {
      for (const m of v.matchAll(/"owner":"([^"]+)"/g)) named.add(m[1]!);
      for (const m of v.matchAll(/"([a-z_][a-z0-9_]*)=[a-zA-Z*]*\/([a-z_][a-z0-9_]*)"/g)) { named.add(m[1]!); named.add(m[2]!); }
      for (const m of v.matchAll(/"roles":\[([^\]]*)\]/g)) for (const r of m[1]!.matchAll(/"([^"]+)"/g)) named.add(r[1]!);
    }
    for (let grew = true; grew;) {
      grew = false;
      for (const r of [...named]) {
        for (const m of (roles.get(r) ?? '').matchAll(/"([a-z_][a-z0-9_]*) admin=[tf]"/g)) {
          if (!named.has(m[1]!)) { named.add(m[1]!); grew = true; }
        }
      }
    }
    for (const [r, v] of roles) if (named.has(r)) catalog.set(`role ${r}`, v);
    // Rows: what a migration inserts (counted, as the owner: a superuser reads past the policies);
    // not dbmate's own record of the files that ran.
    const tables = await sql.unsafe<{ t: string }[]>(`select format('%I.%I', n.nspname, c.relname) as t
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind in ('r', 'p') and ${SYSTEM_SCHEMAS} and ${notExtensionMember('pg_class', 'c.oid')}
        and c.oid <> to_regclass('public.schema_migrations')
        ${citus ? `and not exists (select from pg_dist_shard s where c.relname ~ ('_' || s.shardid || '$') and s.logicalrelid::regclass::text <> c.oid::regclass::text)` : ''}`);
    for (const { t } of tables) {
      const [r] = await sql.unsafe<{ n: string }[]>(`select count(*)::text as n from ${t}`);
      catalog.set(`rows ${normalize(t)}`, r!.n);
    }
    let workers: string[] = [];
    if (citus) {
      const nodes = await sql<{ nodename: string; nodeport: number }[]>`select nodename, nodeport from pg_dist_node
        where groupid <> 0 and noderole = 'primary' order by nodeport`;
      workers = nodes.map((n) => {
        const u = new URL(url);
        u.hostname = n.nodename;
        u.port = String(n.nodeport);
        return u.toString();
      });
    }
    return { catalog, workers };
  } finally {
    await sql.end();
  }
}

/** The differences, one line each (`-` only in A, `+` only in B, `~` described differently). */
export function diffCatalogs(a: Catalog, b: Catalog): string[] {
  const out: string[] = [];
  for (const key of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const va = a.get(key);
    const vb = b.get(key);
    if (va === vb) continue;
    if (vb === undefined) out.push(`- ${key}: ${va}`);
    else if (va === undefined) out.push(`+ ${key}: ${vb}`);
    else out.push(`~ ${key}\n    A: ${va}\n    B: ${vb}`);
  }
  return out;
}

/** Both databases, and on Citus each pair of workers: the differences, each headed by where. */
export async function compareDatabases(urlA: string, urlB: string): Promise<{ lines: string[]; objects: number; nodes: number }> {
  const a = await readCatalog(urlA);
  const b = await readCatalog(urlB);
  const lines = diffCatalogs(a.catalog, b.catalog).map((l) => `coordinator ${l}`);
  let objects = a.catalog.size;
  if (a.workers.length !== b.workers.length) lines.push(`workers: ${a.workers.length} in A, ${b.workers.length} in B`);
  for (const [i, wa] of a.workers.entries()) {
    const wb = b.workers[i];
    if (!wb) break;
    const ca = await readCatalog(wa);
    const cb = await readCatalog(wb);
    objects += ca.catalog.size;
    lines.push(...diffCatalogs(ca.catalog, cb.catalog).map((l) => `worker ${i + 1} ${l}`));
  }
  return { lines, objects, nodes: 1 + a.workers.length };
}

/** This repository's root, wherever the command runs: through a link of the tests' mirror
 * (scripts/tap.ts) too, where git would list nothing. */
const ROOT = dirname(realpathSync(fileURLToPath(new URL('../package-lock.json', import.meta.url))));

/** A revision's db/migrations (and db/citus/migrations and its bootstrap files, where it has them)
 * in a new temporary directory, as `<dir>/db/migrations`; answers that path (WORKTREE: the files as
 * they are). */
export function migrationsOf(rev: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-migrations-'));
  const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    copyMigrations(rev, dir, git);
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return join(dir, 'db/migrations');
}

function copyMigrations(rev: string, dir: string, git: (...args: string[]) => string): void {
  for (const folder of ['db/migrations', 'db/citus/migrations']) {
    const files = rev === 'WORKTREE'
      ? (existsSync(join(ROOT, folder)) ? readdirSync(join(ROOT, folder)) : [])
      : git('ls-tree', '--name-only', `${rev}:db`).split('\n').some((f) => f === folder.split('/')[1])
        ? (() => { try { return git('ls-tree', '--name-only', `${rev}:${folder}`).split('\n').filter(Boolean); } catch { return []; } })()
        : [];
    mkdirSync(join(dir, folder), { recursive: true });
    for (const f of files.filter((f) => f.endsWith('.sql'))) {
      const text = rev === 'WORKTREE' ? readFileSync(join(ROOT, folder, f), 'utf8') : git('show', `${rev}:${folder}/${f}`);
      writeFileSync(join(dir, folder, f), text);
    }
  }
  // The revision's bootstrap files, where it has them: whether its migrations run as svc_deploy.
  for (const file of ['db/bootstrap.sql', 'db/citus/bootstrap.sql']) {
    const text = rev === 'WORKTREE'
      ? (existsSync(join(ROOT, file)) ? readFileSync(join(ROOT, file), 'utf8') : undefined)
      : (() => { try { return git('show', `${rev}:${file}`); } catch { return undefined; } })();
    if (text !== undefined) writeFileSync(join(dir, file), text);
  }
}

// `npx tsx scripts/catalog-diff.ts [--citus] <A> <B>`
if (isMain(import.meta.url)) {
  const args = process.argv.slice(2);
  const citus = args.includes('--citus');
  const sides = args.filter((a) => a !== '--citus');
  if (sides.length !== 2) {
    console.error('usage: npx tsx scripts/catalog-diff.ts [--citus] <database URL | rev:<git revision> | rev:WORKTREE> <same>');
    process.exit(2);
  }
  let cluster: Cluster | undefined;
  const made: { name: string; url: string }[] = [];
  const dirs: string[] = [];
  let code = 2;
  const server = process.env.DATABASE_URL;
  try {
    if (citus) cluster = await startCluster();
    else if (sides.some((s) => s.startsWith('rev:')) && !server) throw new Error('DATABASE_URL (a server to make the databases on) or --citus is required for rev: sides');
    const urls: string[] = [];
    for (const [i, side] of sides.entries()) {
      if (!side.startsWith('rev:')) { urls.push(side); continue; }
      const dir = migrationsOf(side.slice(4));
      dirs.push(dir);
      const name = `svc_catdiff_${process.pid}_${i}`;
      const url = cluster ? await createClusterDatabase(cluster, name) : withDatabase(server!, name);
      if (!cluster) {
        const admin = postgres(server!, { max: 1, onnotice: () => {} });
        await admin.unsafe(`drop database if exists ${name} with (force)`);
        await admin.end();
      }
      made.push({ name, url });
      const t0 = Date.now();
      // A revision from before the bootstrap (db/bootstrap.sql, on a cluster db/citus/bootstrap.sql)
      // wrote its migrations for a superuser: they run as one; a later one's run as svc_deploy.
      await migrate(url, dir, { asGiven: !existsSync(join(dirname(dirname(dir)), cluster ? 'db/citus/bootstrap.sql' : 'db/bootstrap.sql')) });
      console.log(`# ${side}: migrated ${name} in ${Math.round((Date.now() - t0) / 1000)} s`);
      urls.push(url);
    }
    const { lines, objects, nodes } = await compareDatabases(urls[0]!, urls[1]!);
    for (const l of lines) console.log(l);
    console.log(lines.length ? `# ${lines.length} difference(s)` : `# equal: ${objects} catalog entries on ${nodes} node(s)`);
    code = lines.length ? 1 : 0;
  } catch (e) {
    console.error(e);
  } finally {
    for (const { name } of made) {
      if (cluster) await dropClusterDatabase(cluster, name);
      else {
        const admin = postgres(server!, { max: 1, onnotice: () => {} });
        await admin.unsafe(`drop database if exists ${name} with (force)`);
        await admin.end();
      }
    }
    for (const d of dirs) rmSync(dirname(dirname(d)), { recursive: true, force: true });
    await cluster?.stop();
  }
  process.exit(code);
}
