// Lists and gets at scale on a Citus cluster: in its
// organization's worker a request reads each api view as that worker's copy over the
// organization's shard group, so a list's filters, order and page size reach the indexes; the
// copies are current, read nothing without a context, go when a view changes, and a request
// without them reads the api.<view>() function instead. Runs under `make test-citus`.
import t, { type Test } from 'tap';
import postgres from 'postgres';
import { randomUUID } from 'node:crypto';
import { startApp, CITUS_WORKERS, type TestApp } from '../helpers/app.ts';
import { beginRequest, inRequest, oneConnection, type Tagged } from '../helpers/sql.ts';
import { editDatabaseUrl } from '../../src/db/url.ts';

if (CITUS_WORKERS.length === 0) {
  t.plan(0, 'runs on a Citus cluster: make test-citus');
} else {
  /** Each worker of the test database, as the superuser. */
  const workers = (t: Test, a: TestApp) => CITUS_WORKERS.map((w) => {
    const sql = postgres(editDatabaseUrl(w, { database: new URL(a.adminUrl).pathname.slice(1) }), { ...oneConnection, onnotice: () => {} });
    t.teardown(() => sql.end());
    return sql;
  });

  /** The organization's shard group (its app.organizations shard) and the worker that holds it. */
  async function groupOf(a: TestApp, org: string, nodes: postgres.Sql[]) {
    const [g] = await a.admin`
      select s.shardid::text as shard, n.nodeport as port
        from pg_dist_shard s join pg_dist_placement p using (shardid) join pg_dist_node n using (groupid)
       where s.shardid = get_shard_id_for_distribution_column('app.organizations', ${org}::text)`;
    const node = nodes[CITUS_WORKERS.findIndex((w) => new URL(w).port === String(g!.port))]!;
    return { schema: `api_shard_${g!.shard}`, shard: g!.shard as string, node };
  }

  /** The plan of a statement read in the organization's worker, as a request reads it. */
  async function plan(t: Test, a: TestApp, client: { id: string; secret: string; orgId: string }, query: string) {
    const rt = postgres(a.runtimeUrl, oneConnection);
    t.teardown(() => rt.end());
    return rt.begin(async (tx) => {
      await beginRequest(tx as never, client);
      const q = await inRequest(t, a.runtimeUrl, tx as never, client.orgId) as Tagged;
      const rows = await q(Object.assign([query], { raw: [query] }) as unknown as TemplateStringsArray);
      return rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
    });
  }

  t.test('each worker holds a current copy of every api view for each shard group it holds', async (t) => {
    const a = await startApp(t);
    const nodes = workers(t, a);
    const views = (await a.admin<{ name: string }[]>`
      select c.relname::text as name from pg_class c where c.relnamespace = 'api'::regnamespace and c.relkind = 'v' order by 1`)
      .map((r) => r.name);
    t.ok(views.length >= 18, `${views.length} api views`);
    let groups = 0;
    for (const [i, node] of nodes.entries()) {
      const placed = await node<{ shard: string }[]>`
        select s.shardid::text as shard from pg_dist_shard s join pg_dist_placement p using (shardid)
         where s.logicalrelid = 'app.organizations'::regclass and p.groupid = (select groupid from pg_dist_local_group)
         order by 1`;
      const schemas = await node<{ name: string }[]>`select nspname::text as name from pg_namespace where nspname like 'api\_shard\_%' order by 1`;
      t.same(schemas.map((s) => s.name), placed.map((p) => `api_shard_${p.shard}`), `worker ${i + 1}: one schema per shard group it holds`);
      for (const { shard } of placed) {
        groups++;
        const stale = await node<{ name: string }[]>`
          select c.relname::text as name
            from pg_class c join pg_class v on v.relname = c.relname and v.relnamespace = 'api'::regnamespace
           where c.relnamespace = ${`api_shard_${shard}`}::regnamespace and c.relkind = 'v'
             and (array(select distinct m[1] from regexp_matches(pg_get_viewdef(c.oid), '((?:app|app_private)\.\w+_\d+)\M', 'g') m order by 1)
                    <> array(select distinct m[1] from regexp_matches(app_private.view_on_shard_group(v.oid, ${shard}::bigint),
                                                                      '((?:app|app_private)\.\w+_\d+)\M', 'g') m order by 1)
                  or pg_get_viewdef(c.oid) not like '%app_private.shard_views_current(%'
                  or array(select format('%s %s', a.attname, a.atttypid) from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 order by a.attnum)
                     <> array(select format('%s %s', a.attname, a.atttypid) from pg_attribute a where a.attrelid = v.oid and a.attnum > 0 order by a.attnum)
                  or pg_get_userbyid(c.relowner) <> 'svc_api' or c.reloptions is distinct from v.reloptions
                  or not has_table_privilege('svc_runtime', c.oid, 'select'))`;
        t.same(stale, [], `api_shard_${shard}: each copy reads the group's shards behind its gate, with its api view's columns and options, svc_api's, read by the runtime role`);
        const [marker] = await node`select obj_description(${`api_shard_${shard}."?views"`}::regclass, 'pg_class') as names`;
        const [generation, names] = (marker!.names as string).split(':');
        t.same(names!.split('|').sort(), views, `api_shard_${shard} holds every api view`);
        const [now] = await node`select pg_sequence_last_value('app_private.shard_views_generation') as g`;
        t.equal(generation, String(now!.g), `api_shard_${shard} was made at the node's current generation`);
      }
    }
    t.equal(groups, Number((await a.admin`select count(*) from pg_dist_shard where logicalrelid = 'app.organizations'::regclass`)[0]!.count),
      'every shard group has its copies');
  });

  t.test('a list reads the copy: its order and page size reach the index; without a copy, the function', async (t) => {
    const a = await startApp(t);
    const nodes = workers(t, a);
    const p = await a.principal('member,manager');
    const project = await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: { 'idempotency-key': randomUUID() }, payload: { name: 'Scale', code: 'SCL' } });
    t.equal(project.statusCode, 201);
    for (let i = 0; i < 5; i++) {
      t.equal((await a.request({ method: 'POST', url: '/v1/tasks', token: p.token, headers: { 'idempotency-key': randomUUID() }, payload: { project_id: project.json.id, name: `T${i}` } })).statusCode, 201);
    }
    const list = async () => (await a.request({ url: '/v1/tasks?limit=2', token: p.token })).json;
    const before = await list();
    t.equal(before.data.length, 2);
    t.equal(before.has_more, true);

    const query = `explain (costs off) select id from api.tasks where archived_at is null order by created_at desc, id desc limit 3`;
    const { schema, node } = await groupOf(a, p.orgId, nodes);
    const withCopy = await plan(t, a, p, query);
    t.match(withCopy, /Limit/, 'the page size is in the plan');
    t.notMatch(withCopy, /Function Scan/, 'no function computes the organization\'s rows');
    t.match(withCopy, /tasks_\d+/, 'the organization\'s shard is read directly');

    // Without the copies (a shard moved here, not yet refreshed), or with one gone (a cascade
    // takes the marker too), the function answers the same.
    await node.unsafe(`set citus.enable_ddl_propagation = off; drop view ${schema}.tasks cascade`);
    t.match(await plan(t, a, p, query), /Function Scan on tasks/, 'one copy gone: the function');
    await node.unsafe(`set citus.enable_ddl_propagation = off; drop schema ${schema} cascade`);
    t.match(await plan(t, a, p, query), /Function Scan on tasks/, 'no copies: the function');
    t.same((await list()).data, before.data, 'the same page without them');
    await a.admin`select app_private.citus_refresh_shard_views()`;
    t.notMatch(await plan(t, a, p, query), /Function Scan/, 'the refresh makes them again');

    // The organization's shard group moved to the other worker (Citus drops the old shards with
    // CASCADE, their copies with them): the function there until the refresh.
    const [group] = await a.admin`select get_shard_id_for_distribution_column('app.organizations', ${p.orgId}::text) as shard`;
    const from = new URL(CITUS_WORKERS[nodes.indexOf(node)]!);
    const to = new URL(CITUS_WORKERS[1 - nodes.indexOf(node)]!);
    await a.admin`select citus_move_shard_placement(${group!.shard}, ${from.hostname}, ${Number(from.port)}, ${to.hostname}, ${Number(to.port)},
      shard_transfer_mode => 'block_writes')`;
    t.match(await plan(t, a, p, query), /Function Scan on tasks/, 'moved: the function');
    t.same((await list()).data, before.data, 'the same page on the other worker');
    // What the worker process's citus_prepare task runs once a minute.
    const [prepared] = await a.admin`select app_private.citus_prepare_if_needed() as n`;
    t.ok(prepared!.n >= 1, `the check found ${prepared!.n} shard group(s) without copies, and prepared the workers`);
    t.notMatch(await plan(t, a, p, query), /Function Scan/, 'prepared: the copies there');
    t.same((await list()).data, before.data, 'and the same page');
    const write = await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: { 'idempotency-key': randomUUID() },
      payload: { code: 'MOVED', name: 'after the move' } });
    t.equal(write.statusCode, 201, 'a write of the moved organization: its shards have their column grants again');
    const [again] = await a.admin`select app_private.citus_prepare_if_needed() as n`;
    t.equal(again!.n, 0, 'the next check finds nothing to do');
  });

  t.test('two organizations of one shard group: each reads its own rows through the copies', async (t) => {
    const a = await startApp(t);
    const byGroup = new Map<string, Awaited<ReturnType<typeof a.principal>>>();
    let pair: Awaited<ReturnType<typeof a.principal>>[] = [];
    for (let i = 0; i < 20 && !pair.length; i++) {
      const p = await a.principal('member,manager');
      const [g] = await a.admin`select get_shard_id_for_distribution_column('app.organizations', ${p.orgId}::text)::text as shard`;
      const other = byGroup.get(g!.shard);
      if (other) pair = [other, p];
      byGroup.set(g!.shard, p);
    }
    t.equal(pair.length, 2, 'two organizations in one shard group');
    for (const p of pair) {
      const project = (await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: { 'idempotency-key': randomUUID() },
        payload: { name: p.orgId, code: 'OWN' } })).json.id;
      t.equal((await a.request({ method: 'POST', url: '/v1/tasks', token: p.token, headers: { 'idempotency-key': randomUUID() },
        payload: { project_id: project, name: p.orgId } })).statusCode, 201);
    }
    for (const p of pair) {
      const q = `explain (costs off) select id from api.tasks order by created_at desc limit 5`;
      t.notMatch(await plan(t, a, p, q), /Function Scan/, 'read through the copy');
      const tasks = (await a.request({ url: '/v1/tasks', token: p.token })).json.data;
      t.same(tasks.map((x: { name: string }) => x.name), [p.orgId], 'only its own task');
      const projects = (await a.request({ url: '/v1/projects', token: p.token })).json.data;
      t.same(projects.map((x: { name: string }) => x.name), [p.orgId], 'only its own project');
    }
  });

  t.test('the copies read nothing without a context, and are not read once an api view changes', async (t) => {
    const a = await startApp(t);
    const nodes = workers(t, a);
    const p = await a.principal('member,manager');
    t.equal((await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: { 'idempotency-key': randomUUID() }, payload: { name: 'Seen', code: 'SEEN' } })).statusCode, 201);
    const { schema, node } = await groupOf(a, p.orgId, nodes);
    const [su] = await node.unsafe(`select count(*)::int as n from ${schema}.projects`);
    t.equal(su!.n, 0, 'read as their owner, under the policies: without a context, no row (even for the superuser)');

    const rt = postgres(editDatabaseUrl(a.runtimeUrl, { hosts: new URL(CITUS_WORKERS[nodes.indexOf(node)]!).host }), oneConnection);
    t.teardown(() => rt.end());
    const [seen] = await rt.unsafe(`select count(*)::int as n from ${schema}.projects`);
    t.equal(seen!.n, 0, 'the runtime role on the worker without a context sees no row');
    await t.rejects(rt.unsafe(`select * from app_private.shard_views_create('app.organizations_1')`), { code: '42501' },
      'nor may it make copies');
    const [create] = await rt.unsafe(`select has_schema_privilege('${schema}', 'create') as ok`);
    t.equal(create!.ok, false, 'nor write into their schema');

    // A view replaced on the coordinator (Citus sends the DDL to the workers), a grant, a view
    // dropped: each advances every worker's generation at once, and no copy made before is read.
    const generations = () => Promise.all(nodes.map(async (w) =>
      Number((await w`select pg_sequence_last_value('app_private.shard_views_generation') as g`)[0]!.g)));
    const query = `explain (costs off) select id from api.projects order by created_at desc limit 5`;
    t.notMatch(await plan(t, a, p, query), /Function Scan/, 'current copies are read');
    let before = await generations();
    const [def] = await a.admin`select pg_get_viewdef('api.projects'::regclass) as sql`;
    await a.admin.begin(async (tx) => {
      await tx.unsafe(`create or replace view api.projects as ${def!.sql}`);
      const during = await generations();
      t.ok(during.every((g, i) => g > before[i]!), 'create or replace view: every worker\'s generation advanced before it commits');
    });
    let after = await generations();
    t.equal((await a.request({ url: '/v1/projects', token: p.token })).json.data.length, 1, 'lists still answer (the function)');
    await a.admin`select app_private.citus_refresh_shard_views()`;
    t.notMatch(await plan(t, a, p, query), /Function Scan/, 'the refresh makes them current');
    before = after;
    await a.admin`revoke select on api.projects from svc_runtime`;
    await a.admin`grant select on api.projects to svc_runtime`;
    after = await generations();
    t.ok(after.every((g, i) => g > before[i]!), 'a grant or revoke: advanced');
    // Named directly, a copy made before refuses to be read.
    t.match(await rt.unsafe(`select count(*) from ${schema}.projects`).then(() => 'read', (e) => `${e.code} ${e.message}`),
      'SV500 SHARD_VIEWS_STALE', 'a stale copy named directly: refused');
    // A view dropped (seen at sql_drop). Like every api view, it names each table it reads with an
    // alias (view_on_shard_group renames the tables, not columns).
    await a.admin`create view api.zz_probe as select o.id from app.organizations o`;
    await a.admin`select app_private.citus_refresh_shard_views()`;
    before = await generations();
    await a.admin`drop view api.zz_probe`;
    after = await generations();
    t.ok(after.every((g, i) => g > before[i]!), 'drop view: advanced');
    t.match(await plan(t, a, p, query), /Function Scan on projects/, 'and the copies are not read');

    // A DBA who is no superuser but a member of svc_api, the views' owner, revokes what the
    // copies would keep: advanced as well. (Replacing a view needs CREATE on schema api, which
    // only a superuser has.) The runtime role's own DDL advances nothing.
    await a.admin`select app_private.citus_refresh_shard_views()`;
    const dba = `svc_test_dba_${process.pid}`;
    await a.admin.unsafe(`create role ${dba} login inherit in role svc_api`);
    t.teardown(() => a.admin.unsafe(`drop role if exists ${dba}`).then(() => undefined));
    const asDba = postgres(editDatabaseUrl(a.adminUrl, { username: dba, password: '' }), oneConnection);
    before = await generations();
    await asDba.unsafe('revoke select on api.projects from svc_runtime').finally(() => asDba.end());
    after = await generations();
    await a.admin`grant select on api.projects to svc_runtime`;
    t.ok(after.every((g, i) => g > before[i]!), 'a revoke by a member of svc_api: advanced');
    await a.admin`select app_private.citus_refresh_shard_views()`;
    before = await generations();
    // (Citus refuses a function made on a worker; a temporary table it lets through.)
    await rt.unsafe('create temporary table mine (i int)');
    after = await generations();
    t.same(after, before, 'the runtime role\'s own DDL: not advanced');
  });

  t.test('a copy is read only on the node that holds its shard group', async (t) => {
    const a = await startApp(t);
    const nodes = workers(t, a);
    const org = await a.createOrg();
    const { shard, node } = await groupOf(a, org, nodes);
    const other = nodes.find((n) => n !== node)!;
    const database = new URL(a.adminUrl).pathname.slice(1);
    // As the runtime role, which reads the copies, on each worker.
    const gate = async (sql: postgres.Sql, at: string) => {
      const [g] = await sql`select pg_sequence_last_value('app_private.shard_views_generation') as generation`;
      const rt = postgres(editDatabaseUrl(a.runtimeUrl, { hosts: new URL(at).host, database }), oneConnection);
      t.teardown(() => rt.end());
      return rt`select app_private.shard_views_current(${g!.generation}::bigint, ${shard}::bigint) as ok`
        .then((r) => String(r[0]!.ok), (e: { code?: string; message?: string }) => `${e.code} ${e.message}`);
    };
    const at = (sql: postgres.Sql) => CITUS_WORKERS[nodes.indexOf(sql)]!;
    t.equal(await gate(node, at(node)), 'true', 'the node that holds the group reads its copy');
    t.equal(await gate(other, at(other)), 'SV500 SHARD_VIEWS_ELSEWHERE',
      'another node refuses (a group moved away leaves its copies there until they are made again)');
  });
}
