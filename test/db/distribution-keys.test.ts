// Citus-ready keys: every tenant table can be distributed by organization_id. Citus
// requires the distribution column in every primary key and unique constraint (or unique index)
// of a distributed table, and in every foreign key between distributed tables. This test reads
// the catalog, so a table added later that breaks the rule fails here (docs/scaling.md).
import t, { type Test } from 'tap';
import postgres from 'postgres';
import { createTestDatabase } from '../helpers/database.ts';
import { oneConnection } from '../helpers/sql.ts';
import { GLOBAL_TABLES } from '../helpers/placement.ts';

/** Where a statement reads several tenant tables, each names its organization by its own alias: a
 * policy's context is a value of its own per table (read once per statement), so Citus sees two
 * tables colocated only by the statement's own conditions. */
function eachTableNamesItsOrganization(t: Test, fn: string, statement: string, tenant: Set<string>): void {
  const words = 'where|on|join|left|inner|cross|group|order|limit|for|using|natural|full|right|set|returning|union|except|having|window';
  const tables = [...statement.replace(/--[^\n]*/g, '').matchAll(new RegExp(`\\b(?:from|join)\\s+(app(?:_private)?\\.[a-z_]+)(?:\\s+(?:as\\s+)?(?!(?:${words})\\b)([a-z_][a-z0-9_]*))?`, 'gi'))]
    .map((m) => ({ table: m[1]!.toLowerCase(), alias: m[2] ?? m[1]!.split('.')[1]! })).filter((r) => tenant.has(r.table));
  if (tables.length < 2) return;
  for (const { table, alias } of tables) {
    t.match(statement, new RegExp(`\\b${alias}\\.organization_id\\s*=|=\\s*${alias}\\.organization_id\\b`, 'i'),
      `${fn}: ${table} ${alias} names its organization (${statement.replace(/\s+/g, ' ').trim().slice(0, 100)})`);
  }
}

t.test('every tenant table is keyed by organization_id', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const sql = postgres(adminUrl, oneConnection);
  t.teardown(() => sql.end());

  const tables = await sql<{ name: string; oid: number; org_attnum: number | null }[]>`
    select format('%I.%I', n.nspname, c.relname) as name, c.oid::int as oid,
           (select a.attnum from pg_attribute a where a.attrelid = c.oid and a.attname = 'organization_id' and not a.attisdropped)::int as org_attnum
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname in ('app', 'app_private') and c.relkind in ('r', 'p')
     order by 1`;
  const tenant = tables.filter((r) => r.org_attnum !== null && !GLOBAL_TABLES[r.name]);
  t.ok(tenant.length >= 28, `${tenant.length} tenant tables`);
  for (const r of tables.filter((r) => !tenant.includes(r))) {
    t.ok(GLOBAL_TABLES[r.name], `${r.name} has no organization_id: it must be named a global table (reference or coordinator)`);
  }
  const orgAttnum = new Map(tenant.map((r) => [r.oid, r.org_attnum!]));
  const nameOf = new Map(tables.map((r) => [r.oid, r.name]));

  // Primary keys and every unique index (constraints and plain unique indexes alike) lead with organization_id.
  const keys = await sql<{ table_oid: number; index: string; is_primary: boolean; first_attnum: number }[]>`
    select i.indrelid::int as table_oid, ic.relname as index, i.indisprimary as is_primary, i.indkey[0]::int as first_attnum
      from pg_index i join pg_class ic on ic.oid = i.indexrelid
     where i.indisunique and i.indrelid = any (${tenant.map((r) => r.oid)}::oid[])`;
  for (const r of tenant) {
    const mine = keys.filter((k) => k.table_oid === r.oid);
    t.ok(mine.some((k) => k.is_primary), `${r.name} has a primary key`);
    for (const k of mine) {
      t.equal(k.first_attnum, r.org_attnum, `${r.name}: ${k.is_primary ? 'primary key' : 'unique'} ${k.index} leads with organization_id`);
    }
  }

  // Foreign keys between tenant tables pair organization_id with organization_id; others point at reference tables.
  const fks = await sql<{ name: string; table_oid: number; ref_oid: number; conkey: number[]; confkey: number[] }[]>`
    select c.conname as name, c.conrelid::int as table_oid, c.confrelid::int as ref_oid,
           c.conkey::int[] as conkey, c.confkey::int[] as confkey
      from pg_constraint c
     where c.contype = 'f' and c.conrelid = any (${tenant.map((r) => r.oid)}::oid[])`;
  t.ok(fks.length > 30, `${fks.length} foreign keys checked`);
  for (const fk of fks) {
    const from = nameOf.get(fk.table_oid)!;
    const to = nameOf.get(fk.ref_oid) ?? String(fk.ref_oid);
    if (orgAttnum.has(fk.ref_oid)) {
      const i = fk.conkey.indexOf(orgAttnum.get(fk.table_oid)!);
      t.ok(i >= 0 && fk.confkey[i] === orgAttnum.get(fk.ref_oid),
        `${from} → ${to} (${fk.name}) is composite with organization_id on both sides`);
    } else if (GLOBAL_TABLES[to] === 'root') {
      const i = fk.conkey.indexOf(orgAttnum.get(fk.table_oid)!);
      t.ok(i >= 0 && fk.confkey[i] === 1 && fk.conkey.length === 1,
        `${from} → ${to} (${fk.name}) pairs organization_id with the organization's id`);
    } else {
      t.equal(GLOBAL_TABLES[to], 'reference', `${from} → ${to} (${fk.name}) points at a reference table`);
    }
  }
});

t.test('no row policy reads another table (Citus cannot evaluate one where the rows are)', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const sql = postgres(adminUrl, oneConnection);
  t.teardown(() => sql.end());
  const policies = await sql<{ name: string; expr: string }[]>`
    select format('%s.%s "%s"', schemaname, tablename, policyname) as name, concat_ws(' ', qual, with_check) as expr
      from pg_policies where schemaname in ('app', 'app_private')`;
  t.ok(policies.length >= 70, `${policies.length} policies`);
  // `(select app.fn())` (the context, once per statement) is the one sublink allowed: on Citus the
  // distribution migration turns it into the call (test/citus/placement.test.ts checks there).
  for (const p of policies) t.notMatch(p.expr, /\b(exists|from)\b/i, `${p.name} reads no other table`);
});

t.test('every statement of a trigger, and of the functions it calls, names the organization of the tenant rows it reads', async (t) => {
  // A trigger runs in its row's shard on Citus, where a lookup by id alone would ask every shard
  // (refused from a shard). Read from the function bodies (a statement ends at its semicolon): a
  // statement that filters or joins a tenant table (WHERE, JOIN) needs an `organization_id =` condition.
  const { adminUrl } = await createTestDatabase(t);
  const sql = postgres(adminUrl, oneConnection);
  t.teardown(() => sql.end());
  const tenant = new Set((await sql<{ name: string }[]>`
    select format('%s.%s', n.nspname, c.relname) as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname in ('app', 'app_private') and c.relkind = 'r'
       and exists (select from pg_attribute a where a.attrelid = c.oid and a.attname = 'organization_id')`).map((r) => r.name)
    .filter((name) => !GLOBAL_TABLES[name]));
  const fns = await sql<{ fn: string; name: string; src: string; trigger: boolean }[]>`
    select p.oid::regprocedure::text as fn, format('%s.%s', n.nspname, p.proname) as name, p.prosrc as src,
           exists (select from pg_trigger g where g.tgfoid = p.oid and not g.tgisinternal) as trigger
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname in ('app', 'app_private')`;
  const triggers = fns.filter((f) => f.trigger);
  t.ok(triggers.length > 40, `${triggers.length} trigger functions`);
  const called = new Set(triggers.flatMap((f) => [...f.src.matchAll(/\b(app(?:_private)?\.[a-z_]+)\s*\(/g)].map((m) => m[1]!)));
  for (const { fn, src } of fns.filter((f) => f.trigger || called.has(f.name))) {
    // (An upsert's arbiter predicate, `on conflict (…) where …`, is not a lookup.)
    for (const statement of src.split(';').map((x) => x.replace(/\bon\s+conflict\b[\s\S]*?\bdo\b/i, ''))) {
      const tables = [...statement.matchAll(/\b(?:from|join|update|into)\s+(app(?:_private)?\.[a-z_]+)/gi)].map((m) => m[1]!.toLowerCase());
      if (tables.some((x) => tenant.has(x)) && /\b(where|join)\b/i.test(statement)) {
        t.match(statement, /organization_id\s*=|=\s*[a-z_.]*organization_id\b/i, `${fn}: ${statement.replace(/\s+/g, ' ').trim().slice(0, 120)}`);
      }
      eachTableNamesItsOrganization(t, fn, statement, tenant);
    }
  }
});

t.test('the commands name their organization by a value Citus can route with', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const sql = postgres(adminUrl, oneConnection);
  t.teardown(() => sql.end());
  // A PL/pgSQL command reads app.current_organization_id() once, into
  // v__organization_id (or a variable of its own), and its statements compare with that. A call
  // inside a statement is evaluated for every shard (Citus cannot prune with it): on a cluster,
  // inside the delegated call, that statement fails.
  const calls = await sql<{ name: string; line: string }[]>`
    select p.oid::regprocedure::text as name, trim(m[1]) as line
      from pg_proc p
      join pg_namespace n on n.oid = p.pronamespace
      join pg_language l on l.oid = p.prolang
      cross join lateral regexp_matches(p.prosrc, ${String.raw`([^\n]*app\.current_organization_id\(\)[^\n]*)`}, 'g') m
     where n.nspname in ('api', 'app_private', 'control') and l.lanname = 'plpgsql'
       and p.prorettype <> 'trigger'::regtype
       and p.proname not in ('begin_request', 'may_read_tickets', 'may_read_internal_notes', 'may_read_time_entries',
                             'job_queue_privileges') -- a policy's text it creates, not a statement it runs
       and m[1] !~ ${String.raw`:= app\.current_organization_id\(\);`}
     order by 1`;
  t.same(calls, [], 'no statement of a command calls app.current_organization_id() (read it into a variable first)');
});

t.test('every statement of a command names the organization of the tenant rows it reads', async (t) => {
  // On Citus a command runs inside the call delegated to its
  // organization's worker, where a lookup by id alone would ask every shard (refused there).
  const { adminUrl } = await createTestDatabase(t);
  const sql = postgres(adminUrl, oneConnection);
  t.teardown(() => sql.end());
  /** Not run inside a request's delegated call (docs/scaling.md, "What does not run on the cluster yet"). */
  const NOT_IN_A_REQUEST: Record<string, string> = {
    'api.service_outbox_status()': 'the service status: every organization\'s outbox, on the coordinator',
    'app_private.bi_context()': 'a BI login: app_private.bi_logins, on the coordinator',
    'api.client_organization(text)': 'the client directory, on the coordinator',
    'app_private.webhook_fanout_organizations(integer)': 'the organizations with events to fan out: every shard, read without locks',
    'app_private.webhook_recover(interval)': 'stranded deliveries of every organization, beside graphile-worker\'s queue on the coordinator',
    'app_private.purge_webhook_history(interval)': 'the retention of every organization\'s events',
    'app_private.webhook_fanout_batch(text,integer,integer)': 'without an organization, a worker of the previous release claims any organization\'s events (one server)',
    'app_private.webhook_fanout_any(integer,integer)': 'one server\'s claim of any organization\'s events (Citus refuses it: rows of several shards locked at once)',
  };
  const tenant = new Set((await sql<{ name: string }[]>`
    select format('%s.%s', n.nspname, c.relname) as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname in ('app', 'app_private') and c.relkind = 'r' and c.relname <> 'organizations'
       and exists (select from pg_attribute a where a.attrelid = c.oid and a.attname = 'organization_id')`).map((r) => r.name)
    .filter((name) => !GLOBAL_TABLES[name]));
  const fns = await sql<{ fn: string; src: string }[]>`
    select p.oid::regprocedure::text as fn, p.prosrc as src from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where p.prorettype <> 'trigger'::regtype and n.nspname in ('api', 'app_private', 'skills')`;
  t.ok(fns.length > 100, `${fns.length} commands and helpers`);
  for (const { fn, src } of fns.filter((f) => !NOT_IN_A_REQUEST[f.fn])) {
    // (An upsert's arbiter predicate, `on conflict (…) where …`, is not a lookup.)
    for (const statement of src.split(';').map((x) => x.replace(/\bon\s+conflict\b[\s\S]*?\bdo\b/i, ''))) {
      const tables = [...statement.matchAll(/\b(?:from|join|update|into)\s+(app(?:_private)?\.[a-z_]+)/gi)].map((m) => m[1]!.toLowerCase());
      if (tables.some((x) => tenant.has(x)) && /\b(where|join)\b/i.test(statement)) {
        t.match(statement, /organization_id\s*=|=\s*[a-z_.]*organization_id\b/i, `${fn}: ${statement.replace(/\s+/g, ' ').trim().slice(0, 120)}`);
      }
      eachTableNamesItsOrganization(t, fn, statement, tenant);
    }
  }
  for (const fn of Object.keys(NOT_IN_A_REQUEST)) t.ok(fns.some((f) => f.fn === fn), `${fn} exists (the list may only shrink)`);
});
