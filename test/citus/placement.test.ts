// Where every table is on a Citus cluster (docs/scaling.md): every tenant table
// distributed by organization_id and colocated with app.organizations (distributed by its id), the
// global tables as GLOBAL_TABLES says, graphile-worker's queue on the coordinator; every function
// of ours and every policy on the workers too; a statement that names its organization runs on one
// shard. Runs under `make test-citus`; elsewhere it skips.
import t from 'tap';
import postgres from 'postgres';
import { createTestDatabase, CITUS_WORKERS } from '../helpers/database.ts';
import { oneConnection } from '../helpers/sql.ts';
import { editDatabaseUrl } from '../../src/db/url.ts';
import { GLOBAL_TABLES } from '../helpers/placement.ts';

if (CITUS_WORKERS.length === 0) {
  t.plan(0, 'runs on a Citus cluster: make test-citus');
} else {
  t.test('every table is where docs/scaling.md says', async (t) => {
    const { adminUrl, name } = await createTestDatabase(t);
    const sql = postgres(adminUrl, oneConnection);
    t.teardown(() => sql.end());

    const tables = await sql<{ name: string; tenant: boolean }[]>`
      select format('%I.%I', n.nspname, c.relname) as name,
             exists (select from pg_attribute a where a.attrelid = c.oid and a.attname = 'organization_id' and not a.attisdropped) as tenant
        from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname in ('app', 'app_private', 'graphile_worker', 'graphile_worker_private') and c.relkind in ('r', 'p')
       order by 1`;
    const placed = new Map((await sql<{ name: string; type: string; column: string; colocation: number }[]>`
      select table_name::text as name, citus_table_type as type, distribution_column as column, colocation_id as colocation
        from citus_tables`).map((r) => [r.name, r]));
    const root = placed.get('app.organizations');
    t.match(root, { type: 'distributed', column: 'id' }, 'app.organizations is distributed by its id');
    let tenant = 0;
    for (const table of tables) {
      const p = placed.get(table.name);
      if (table.name.startsWith('graphile_worker')) {
        t.notOk(p, `${table.name} stays on the coordinator (the job queue)`);
      } else if (table.tenant && !GLOBAL_TABLES[table.name]) {
        tenant++;
        t.match(p, { type: 'distributed', column: 'organization_id', colocation: root?.colocation },
          `${table.name} is distributed by organization_id, colocated with app.organizations`);
      } else if (table.name !== 'app.organizations') {
        const where = GLOBAL_TABLES[table.name];
        if (where === 'reference') t.match(p, { type: 'reference' }, `${table.name} is a reference table`);
        else t.notOk(p, `${table.name} is not a Citus table (${where})`);
      }
    }
    t.ok(tenant >= 45, `${tenant} tenant tables distributed`);

    // A policy reads the context through scalar subqueries of its accessors, once per statement, in
    // the same text as on one server (Citus as scripts/citus/install.sh builds it takes them); no
    // policy reads a relation.
    const relations = await sql<{ name: string }[]>`
      select format('%s.%s "%s"', schemaname, tablename, policyname) as name from pg_policies
       where schemaname in ('app', 'app_private') and concat_ws(' ', qual, with_check) ~* ${'\\m(exists|from)\\M'}`;
    t.same(relations, [], 'no policy reads a relation');
    const [{ n: scalar }] = await sql<[{ n: number }]>`
      select count(*)::int as n from pg_policies p join citus_tables c on c.table_name = format('%I.%I', p.schemaname, p.tablename)::regclass
       where concat_ws(' ', p.qual, p.with_check) ~ ${'\\( SELECT app\\.current_organization_id\\(\\) AS'}`;
    t.ok(scalar >= 70, `${scalar} policies of distributed tables read the organization once per statement`);
    // The patch takes only a subquery over no relation: one that reads a table is refused as before.
    await sql`create table app_private.policy_probe (organization_id text primary key)`;
    await sql`select create_distributed_table('app_private.policy_probe', 'organization_id', colocate_with => 'app.organizations')`;
    await sql`create policy "scalar" on app_private.policy_probe using (organization_id = (select app.current_organization_id()))`;
    const refused = await sql`create policy "reads a table" on app_private.policy_probe
                                using (exists (select from app.organizations o where o.id = organization_id))`.then(() => null, (e: { message: string }) => e.message);
    t.equal(refused, 'cannot create policy', 'a policy whose subquery reads a table is refused');
    await sql`drop table app_private.policy_probe`;

    // What runs on a worker finds the same functions, views and policies there.
    for (const worker of CITUS_WORKERS) {
      const w = postgres(editDatabaseUrl(worker, { database: name }), oneConnection);
      try {
        const objects = `
          select (select array_agg(p.oid::regprocedure::text || ' ' || md5(p.prosrc) order by p.oid::regprocedure::text) from pg_proc p join pg_namespace n on n.oid = p.pronamespace
                   where n.nspname in ('app', 'app_private', 'api', 'control', 'skills', 'reporting')) as functions,
                 (select array_agg(format('%s.%s', schemaname, viewname) order by schemaname, viewname) from pg_views where schemaname in ('api', 'reporting')) as views,
                 (select array_agg(format('%s %s %s', regexp_replace(tablename, '_[0-9]+$', ''), policyname, md5(concat_ws(' ', qual, with_check))) order by regexp_replace(tablename, '_[0-9]+$', ''), policyname)
                    from (select distinct on (regexp_replace(tablename, '_[0-9]+$', ''), policyname) tablename, policyname, qual, with_check
                            from pg_policies where schemaname in ('app', 'app_private')
                             -- tables of the coordinator alone (the client directory, BI bindings) have no shards
                             and exists (select from pg_dist_partition d
                                          where d.logicalrelid = format('%I.%I', schemaname, regexp_replace(tablename, '_[0-9]+$', ''))::regclass)) x) as policies`;
        const mine = (await sql.unsafe(objects))[0]!;
        const theirs = (await w.unsafe(objects))[0]!;
        t.same(theirs.functions, mine.functions, `${worker}: every function of ours is on the worker, with the same body`);
        t.same(theirs.views, mine.views, `${worker}: every api and reporting view is on the worker`);
        t.same(theirs.policies, mine.policies, `${worker}: every policy is on the worker's shards, in the same text`);
        // Citus creates functions and views on the workers without the grants and revokes made
        // before they were distributed (app_private.citus_copy_privileges copies them): the same
        // privileges on every node, or a worker's copy could be run by PUBLIC, or a view read by no one.
        const privileges = `
          select array_agg(x order by x) as acl from (
            select format('%s %s %s %s', p.oid::regprocedure, pg_get_userbyid(p.proowner), coalesce(e.grantee::regrole::text, 'public'), e.privilege_type) as x
              from pg_proc p join pg_namespace n on n.oid = p.pronamespace
              cross join lateral aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) e
             where n.nspname in ('app', 'app_private', 'api', 'control', 'skills', 'reporting')
               and not exists (select from pg_depend d where d.objid = p.oid and d.deptype = 'e')
               and p.proname !~ '^test_' -- the test fixtures' (test/fixtures), not a migration's
            union all
            select format('%s %s %s %s', c.oid::regclass, pg_get_userbyid(c.relowner), coalesce(nullif(e.grantee, 0)::regrole::text, 'public'), e.privilege_type)
              from pg_class c join pg_namespace n on n.oid = c.relnamespace
              cross join lateral aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) e
             where n.nspname in ('api', 'reporting') and c.relkind = 'v') y`;
        const [mineAcl] = await sql.unsafe(privileges);
        const [theirAcl] = await w.unsafe(privileges);
        const missing = (mineAcl!.acl as string[]).filter((x) => !(theirAcl!.acl as string[]).includes(x));
        const extra = (theirAcl!.acl as string[]).filter((x) => !(mineAcl!.acl as string[]).includes(x));
        t.same({ missing, extra }, { missing: [], extra: [] }, `${worker}: every function and view grants on the worker what it grants on the coordinator`);
        const [keys] = await w`select count(*)::int as n, has_table_privilege('svc_api', 'app_private.context_keys', 'select') as api,
                                      has_table_privilege('svc_runtime', 'app_private.context_keys', 'select') as runtime
                                 from app_private.context_keys`;
        t.same(keys, { n: 1, api: false, runtime: false }, `${worker}: a context key of its own, which only the owner reads`);
      } finally {
        await w.end();
      }
    }
  });

  t.test('a statement that names its organization runs on one shard', async (t) => {
    const { adminUrl } = await createTestDatabase(t);
    const sql = postgres(adminUrl, oneConnection);
    t.teardown(() => sql.end());
    const tasks = async (q: string) => {
      const plan = (await sql.unsafe(`explain ${q}`)).map((r: any) => r['QUERY PLAN']).join('\n');
      return Number(/Task Count: (\d+)/.exec(plan)?.[1]);
    };
    t.equal(await tasks(`select * from app.tasks where organization_id = 'org_a' order by created_at limit 50`), 1, 'a list');
    t.equal(await tasks(`select * from app.tasks where organization_id = 'org_a' and id = 'tsk_1'`), 1, 'a get');
    t.equal(await tasks(`select * from app.tasks t join app.projects p on p.organization_id = t.organization_id and p.id = t.project_id
                          where t.organization_id = 'org_a'`), 1, 'a join of colocated tables');
    t.ok(await tasks(`select * from app.tasks where id = 'tsk_1'`) > 1, 'by id alone: every shard (what naming the organization avoids)');
  });
}
