// Growing the cluster: a node given the roles (db/bootstrap.sql) and its database, added by a
// superuser with `call svc_bootstrap.add_node(host, port)` (what the cluster's bootstrap makes on a
// worker) and prepared by the deploy login with `call app_private.citus_add_worker(host, port)`, gets
// its own context key, our privileges and the copies of the api views, made as the schema's owner; the shard groups the rebalance moved onto it serve their organizations'
// requests as before, through the copies. Runs under `make test-citus`: it starts a node of its own.
import t from 'tap';
import postgres from 'postgres';
import { randomUUID } from 'node:crypto';
import { startApp, CITUS_WORKERS } from '../helpers/app.ts';
import { beginRequest, inRequest, oneConnection, type Tagged } from '../helpers/sql.ts';
import { newClusterNode, deployLogin } from '../helpers/citus-node.ts';

t.test('a worker added, rebalanced onto and serving the organizations that moved', {
  skip: CITUS_WORKERS.length === 0 && 'runs on a Citus cluster: make test-citus' }, async (t) => {
  const a = await startApp(t);
  const key = () => ({ 'idempotency-key': randomUUID() });

  // One organization, with a task, in each shard group: whichever groups move, one of them moved.
  const groups = (await a.admin<{ shard: string }[]>`
    select shardid::text as shard from pg_dist_shard where logicalrelid = 'app.organizations'::regclass`).map((g) => g.shard);
  const byGroup = new Map<string, Awaited<ReturnType<typeof a.principal>>>();
  for (let i = 0; i < 300 && byGroup.size < groups.length; i++) {
    const p = await a.principal('member,manager');
    const [g] = await a.admin`select get_shard_id_for_distribution_column('app.organizations', ${p.orgId}::text)::text as shard`;
    if (!byGroup.has(g!.shard)) byGroup.set(g!.shard, p);
  }
  t.equal(byGroup.size, groups.length, `an organization in each of the ${groups.length} shard groups`);
  for (const p of byGroup.values()) {
    const project = (await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: key(), payload: { code: 'G', name: 'G' } })).json.id;
    await a.request({ method: 'POST', url: '/v1/tasks', token: p.token, headers: key(), payload: { project_id: project, name: `before ${p.orgId}` } });
  }

  const node = await newClusterNode(t, a.adminUrl, 1);
  const { port, database: added } = node;
  // A superuser adds the node (the bootstrap's procedure); the deploy login prepares it and rebalances.
  const deploy = deployLogin(a.adminUrl);
  t.teardown(() => deploy.end());
  t.match(await deploy.unsafe(`call app_private.citus_add_worker('127.0.0.1', ${port})`).then(() => 'ok', (e) => `${e.code} ${e.detail}`),
    /^SV500 .*a superuser adds it first/, 'the deploy login cannot add a node itself');
  await node.add();
  // A logical move's subscription would write as a role under the tables' forced row security, which
  // PostgreSQL refuses: refused before anything starts, not retried without end.
  t.match(await deploy.unsafe(`call app_private.citus_add_worker('127.0.0.1', ${port}, 'auto')`).then(() => 'ok', (e) => `${e.code} ${e.detail}`),
    /^SV500 shard transfer mode auto: .*block_writes/, 'a logical move is refused');
  await deploy.unsafe(`call app_private.citus_add_worker('127.0.0.1', ${port})`);
  // Every task ran as svc_mover: the reference tables were on the node before (svc_bootstrap.add_node
  // copied them as svc_mover), so the rebalance had none to copy as Citus's superuser.
  const [job] = await a.admin`select j.state::text as state, (select array_agg(distinct k.owner::regrole::text) from pg_dist_background_task k
      where k.job_id = j.job_id) as owners
    from pg_dist_background_job j order by j.job_id desc limit 1`;
  t.same(job, { state: 'finished', owners: ['svc_mover'] }, 'the rebalance ran as svc_mover, neither a superuser nor the schema\'s owner');

  const [{ workers }] = await a.admin`select count(*)::int as workers from pg_dist_node where groupid <> 0 and isactive` as [{ workers: number }];
  t.equal(workers, CITUS_WORKERS.length + 1, 'the node is a worker of the cluster');
  const moved = (await added<{ shard: string }[]>`
    select s.shardid::text as shard from pg_dist_shard s join pg_dist_placement p using (shardid)
     where s.logicalrelid = 'app.organizations'::regclass and p.groupid = (select groupid from pg_dist_local_group)`).map((r) => r.shard);
  t.ok(moved.length > 0, `the rebalance moved ${moved.length} shard group(s) onto it`);
  const [{ keys }] = await added`select count(*)::int as keys from app_private.context_keys` as [{ keys: number }];
  t.equal(keys, 1, 'it has a request-context key of its own');
  const schemas = (await added<{ name: string }[]>`select nspname::text as name from pg_namespace where nspname like 'api\_shard\_%' order by 1`).map((r) => r.name);
  t.same(schemas, moved.map((s) => `api_shard_${s}`).sort(), 'and the copies of the api views for each group it holds');
  const untracked = (await added<{ role: string }[]>`
    select r.rolname::text as role from pg_db_role_setting s join pg_roles r on r.oid = s.setrole
     where s.setdatabase = 0 and 'track_activities=off' = any(s.setconfig) order by 1`).map((r) => r.role);
  t.same(untracked, ['svc_admin', 'svc_runtime', 'svc_worker'], 'and the service logins\' statements untracked there');
  const superusers = (await added<{ object: string }[]>`
    select format('%s %s', c.relkind, c.oid::regclass) as object from pg_class c join pg_namespace n on n.oid = c.relnamespace
      join pg_roles r on r.oid = c.relowner
     where r.rolsuper and (n.nspname in ('api', 'app', 'app_private', 'reporting', 'reporting_private') or n.nspname like 'api\_shard\_%')
       and c.relname !~ '^test_'
    union all
    select format('schema %s', n.nspname) from pg_namespace n join pg_roles r on r.oid = n.nspowner
     where r.rolsuper and n.nspname like 'api\_shard\_%'`).map((r) => r.object);
  t.same(superusers, [], 'what the preparation made there belongs to the schema\'s owner, not to the superuser who added the node');

  for (const shard of moved) {
    const p = byGroup.get(shard)!;
    const tasks = await a.request({ url: '/v1/tasks', token: p.token });
    t.same(tasks.json.data?.map((x: { name: string }) => x.name), [`before ${p.orgId}`], `${p.orgId}: its task, read on the new worker`);
    const project = (await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: key(), payload: { code: 'H', name: 'H' } }));
    t.equal(project.statusCode, 201, 'a write there', { body: project.json });
    const task = await a.request({ method: 'POST', url: '/v1/tasks', token: p.token, headers: key(), payload: { project_id: project.json.id, name: 'after' } });
    t.equal(task.statusCode, 201, 'and one with its triggers and outbox', { body: task.json });
    t.equal((await a.request({ url: '/v1/me', token: p.token })).statusCode, 200, 'its token checked there');
    const rt = postgres(a.runtimeUrl, oneConnection);
    const plan = await rt.begin(async (tx) => {
      await beginRequest(tx as never, p);
      const q = await inRequest(t, a.runtimeUrl, tx as never, p.orgId) as Tagged;
      const text = 'explain (costs off) select id from api.tasks order by created_at desc limit 5';
      return (await q(Object.assign([text], { raw: [text] }) as unknown as TemplateStringsArray)).map((r) => r['QUERY PLAN']).join('\n');
    }).finally(() => rt.end());
    t.notMatch(plan, /Function Scan/, 'the list reads the copy of api.tasks');
  }
  // A BI login of a moved organization reads there through the relay (its grants on the new node).
  const movedOrg = byGroup.get(moved[0]!)!;
  const g = await a.cli('reporting', 'grant', '--org', movedOrg.orgId, '--roles', 'manager');
  t.teardown(() => a.cli('reporting', 'revoke', '--role', g.role).catch(() => undefined));
  const bi = postgres(g.connection_string, { max: 1, onnotice: () => {} });
  t.teardown(() => bi.end({ timeout: 1 }));
  t.same((await bi`select name from tasks order by name`).map((r) => r.name), ['after', `before ${movedOrg.orgId}`],
    'a BI login of a moved organization reads its tasks on the new worker');
  // The organizations that stayed are served as before.
  const stayed = [...byGroup].filter(([g]) => !moved.includes(g)).map(([, p]) => p)[0]!;
  t.equal((await a.request({ url: '/v1/tasks', token: stayed.token })).json.data?.length, 1, 'an organization that did not move');
});
