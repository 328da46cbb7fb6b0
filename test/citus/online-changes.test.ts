// Growing and shrinking the cluster while the API serves: a mixed load of reads and creates from an
// organization in every shard group, against the server's real process with its in-process worker;
// a worker added and rebalanced onto, then drained and removed (a superuser's call, the deploy
// login's, a superuser's again: db/README.md). Every answer is a 2xx, every create exists exactly
// once, every event is delivered once; the latency while the groups move is printed beside the
// latency before (the last run's figures: docs/benchmarks.md, "Adding and removing a worker under load").
// A write to a group being moved waits until its copy is done (block_writes), so the API's statement
// timeout must outlast the longest copy; under make test-citus's parallel files on a slow machine a
// copy took more than the default 15 s, so this API waits up to 90 s (docs/scaling.md says how to
// size it in a deployment).
import t from 'tap';
import postgres from 'postgres';
import { createTestDatabase, CITUS_WORKERS } from '../helpers/app.ts';
import { spawnApi, tokenFrom, orgWithClient } from '../helpers/processes.ts';
import { WEBHOOK_TEST_ENV } from '../helpers/receiver.ts';
import { percentiles, projectEvents, retryAndCount, startLoad, type Load } from '../helpers/load.ts';
import { failure, oneConnection } from '../helpers/sql.ts';
import { newClusterNode, deployLogin } from '../helpers/citus-node.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('a worker added and removed under load', { skip: CITUS_WORKERS.length === 0 && 'runs on a Citus cluster: make test-citus' }, async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const sql = postgres(adminUrl, oneConnection);
  t.teardown(() => sql.end());
  const groups = (await sql`select count(*)::int as n from pg_dist_shard where logicalrelid = 'app.organizations'::regclass`)[0]!.n as number;
  const orgs = new Map<string, { org: string; client: { id: string; secret: string } }>();
  for (let i = 0; i < 200 && orgs.size < groups; i++) {
    const o = await orgWithClient(adminUrl, `Online ${i}`, 'load');
    const [g] = await sql`select get_shard_id_for_distribution_column('app.organizations', ${o.org}::text)::text as shard`;
    if (!orgs.has(g!.shard)) orgs.set(g!.shard, o);
  }
  t.equal(orgs.size, groups, `an organization in each of the ${groups} shard groups`);

  const api = await spawnApi(t, { ...WEBHOOK_TEST_ENV, DATABASE_URL: adminUrl, SVC_WORKER: 'on', RATE_LIMIT_REQUESTS: '1000000', SVC_DB_STATEMENT_TIMEOUT_MS: '90000', LOG_LEVEL: process.env.SVC_FAULT_LOG ?? 'warn' });
  const loads: { org: string; token: string; load: Load; rx: Awaited<ReturnType<typeof projectEvents>> }[] = [];
  for (const { org, client } of orgs.values()) {
    const token = await tokenFrom(api.url, client);
    loads.push({ org, token, rx: await projectEvents(t, api.url, token), load: startLoad(api.url, token, 1, { timeoutMs: 120_000 }) });
  }
  const answers = () => loads.flatMap((l) => l.load.answers);
  await sleep(2000);

  const node = await newClusterNode(t, adminUrl, 2);
  const deploy = deployLogin(adminUrl);
  t.teardown(() => deploy.end());
  const growing = Date.now();
  await node.add();
  await deploy.unsafe(`call app_private.citus_add_worker('${node.host}', ${node.port})`);
  const grown = Date.now();
  const held = async () => (await node.database`select count(*)::int as n from pg_dist_placement p join pg_dist_shard s using (shardid)
    where s.logicalrelid = 'app.organizations'::regclass and p.groupid = (select groupid from pg_dist_local_group)`)[0]!.n as number;
  const onIt = await held();
  t.ok(onIt > 0, `${onIt} shard group(s) moved onto the new worker`);
  await sleep(2000);
  const apiSessions = async () => (await node.database`select count(*)::int as n from pg_stat_activity
    where datname = current_database() and application_name like 'svc-api%'`)[0]!.n as number;
  t.ok(await apiSessions() > 0, 'the API serves the groups on the new worker from connections to it');

  // Shrinking: the superuser's first call marks the node and says what is left to do.
  const shrinking = Date.now();
  t.match(await failure(sql.unsafe(`call svc_bootstrap.remove_node('${node.host}', ${node.port})`)), /^55000 .*holds \d+ shard group\(s\).*citus_drain_worker/,
    'a node that holds shard groups is marked to hold none, not removed');
  await deploy.unsafe(`call app_private.citus_drain_worker('${node.host}', ${node.port})`);
  t.equal(await held(), 0, 'the deploy login moved every group off it');
  await sql.unsafe(`call svc_bootstrap.remove_node('${node.host}', ${node.port})`);
  const shrunk = Date.now();
  const [{ n: workers }] = await sql`select count(*)::int as n from pg_dist_node where groupid <> 0` as [{ n: number }];
  t.equal(workers, CITUS_WORKERS.length, 'and the superuser removed it');
  await sleep(2000);
  for (const l of loads) await l.load.stop();
  // The removed node's pools close once no request was handed them for 10 s (src/db/database.ts).
  const closed = Date.now();
  while (await apiSessions() > 0 && Date.now() - closed < 40_000) await sleep(500);
  t.equal(await apiSessions(), 0, `the API's connections to the removed worker closed (${Date.now() - closed} ms after the load stopped)`);

  const all = answers();
  const bad = all.filter((a) => !(a.status >= 200 && a.status < 300));
  t.same(bad.slice(0, 5).map((a) => ({ method: a.method, status: a.status, problem: a.problem, error: a.error, ms: a.ms })), [],
    `${all.length} answers while the cluster grew and shrank: every one a 2xx`);
  if (bad.length > 0) {
    t.comment(`the API's errors:\n${api.stdout().split('\n').filter((l) => /"level":"(warn|error|fatal)"|"level":(40|50|60)|INTERNAL/.test(l)).slice(0, 8).join('\n')}`);
  }
  const between = (from: number, to: number) => all.filter((a) => a.at >= from && a.at < to);
  t.comment(`before: ${percentiles(between(0, growing))}`);
  t.comment(`adding and rebalancing onto a worker (${grown - growing} ms): ${percentiles(between(growing, grown))}`);
  t.comment(`draining and removing it (${shrunk - shrinking} ms): ${percentiles(between(shrinking, shrunk))}`);
  t.ok(between(growing, grown).length > 0 && between(shrinking, shrunk).length > 0, 'requests were served while the groups moved');

  for (const { org, token, load, rx } of loads) {
    await retryAndCount(t, api.url, token, load, load.answers, async (code) =>
      (await sql`select count(*)::int as n from app.projects where organization_id = ${org} and code = ${code}`)[0]!.n);
    const [{ n: projects }] = await sql`select count(*)::int as n from app.projects where organization_id = ${org}` as [{ n: number }];
    const events = await rx.waitFor((e) => new Set(e.map((x) => x.body?.data?.object?.id)).size >= projects, 60_000);
    t.equal(new Set(events.map((x) => x.body.data.object.id)).size, projects, `${org}: all ${projects} events delivered`);
    const [{ n: doubled }] = await sql`select count(*)::int as n from (select event_id from app.webhook_deliveries
      where organization_id = ${org} and replay_of is null group by event_id having count(*) > 1) x` as [{ n: number }];
    t.equal(doubled, 0, `${org}: no event fanned out twice`);
  }
});
