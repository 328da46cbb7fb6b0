// A worker that fails over: a Citus formation of its own (scripts/citus-ha.ts: a coordinator and two
// worker groups, each a primary with a streaming standby kept by pg_auto_failover), the API's real
// process with its in-process worker serving a mixed load from an organization on each worker group.
// The first worker group's primary is killed (its PostgreSQL and its keeper, as a machine failure);
// the monitor promotes its standby and points the coordinator at it. The organization on the other
// group is answered 2xx throughout; the one on the failed group only 2xx or 503 with Retry-After, and
// 2xx again once the standby is promoted; no acknowledged write is lost, none doubled, every event
// delivered. `make test-failover` runs it: its formation takes minutes to start, more than CI's
// time allows, so `make test` and `make test-citus` skip it with one line.
import t from 'tap';
import postgres from 'postgres';
import { haMissing, migrateHaFormation, startHaFormation } from '../../scripts/citus-ha.ts';
import { spawnApi, tokenFrom, orgWithClient } from '../helpers/processes.ts';
import { WEBHOOK_TEST_ENV } from '../helpers/receiver.ts';
import { assertOnlyOutages, assertRecovered, percentiles, projectEvents, retryAndCount, startLoad, type Answer } from '../helpers/load.ts';
import { oneConnection } from '../helpers/sql.ts';

// Its formation starts in minutes: more than tap's default for a file.
t.setTimeout(900_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const missing = haMissing();

const skip = missing ? `needs ${missing}` : !process.env.SVC_TEST_FAILOVER && 'a formation of its own takes minutes to start: make test-failover';

t.test('a worker primary killed under load, its standby promoted', { skip }, async (t) => {
  const started = Date.now();
  const f = await startHaFormation({ workers: 2 });
  t.teardown(f.stop);
  const url = await migrateHaFormation(f);
  t.comment(`the formation started and migrated in ${Date.now() - started} ms`);
  const sql = postgres(url, oneConnection);
  t.teardown(() => sql.end());

  // An organization on each worker group.
  const orgs = new Map<number, { org: string; client: { id: string; secret: string } }>();
  for (let i = 0; i < 100 && orgs.size < 2; i++) {
    const o = await orgWithClient(url, `HA ${i}`, 'load');
    const [g] = await sql`select p.groupid::int as "group" from pg_dist_placement p
      where p.shardid = get_shard_id_for_distribution_column('app.organizations', ${o.org}::text)`;
    if (!orgs.has(g!.group)) orgs.set(g!.group, o);
  }
  t.same([...orgs.keys()].sort(), [1, 2], 'an organization on each worker group');

  const api = await spawnApi(t, { ...WEBHOOK_TEST_ENV, DATABASE_URL: url, SVC_WORKER: 'on', RATE_LIMIT_REQUESTS: '1000000',
    LOG_LEVEL: process.env.SVC_FAULT_LOG ?? 'warn' });
  const loads = new Map<number, { org: string; token: string; load: ReturnType<typeof startLoad>; rx: Awaited<ReturnType<typeof projectEvents>> }>();
  for (const [group, { org, client }] of orgs) {
    const token = await tokenFrom(api.url, client);
    loads.set(group, { org, token, rx: await projectEvents(t, api.url, token), load: startLoad(api.url, token, 2) });
  }
  await sleep(3000);

  const failed = await f.primary(1);
  const killed = Date.now();
  f.kill(failed);
  t.pass(`${failed.name}, group 1's primary, killed`);
  // Promoted: the coordinator's pg_dist_node names the standby for the group (citus_update_node).
  let promoted = 0;
  while (Date.now() - killed < 120_000) {
    const [n] = await sql`select nodeport::int as port from pg_dist_node where groupid = 1 and noderole = 'primary'`;
    if (n && n.port !== failed.port) { promoted = Date.now(); break; }
    await sleep(100);
  }
  t.ok(promoted, `group 1's standby promoted and named on the coordinator ${promoted - killed} ms after its primary was killed`);
  await sleep(10_000);
  for (const l of loads.values()) await l.load.stop();
  t.equal(api.child.exitCode, null, 'the API process is alive');

  const other = loads.get(2)!.load.answers;
  const bad = other.filter((a) => !(a.status >= 200 && a.status < 300));
  t.same(bad.slice(0, 5).map((a) => ({ method: a.method, status: a.status, problem: a.problem, error: a.error, ms: a.ms })), [],
    `group 2's organization: ${other.length} answers, every one a 2xx`);
  const hit = loads.get(1)!.load.answers;
  assertOnlyOutages(t, hit);
  assertRecovered(t, hit, promoted + 3000, api.stdout);
  const during = (as: Answer[]) => as.filter((a) => a.at >= killed && a.at < promoted);
  t.comment(`group 1 before the kill: ${percentiles(hit.filter((a) => a.at < killed))}`);
  t.comment(`group 1 from the kill to the promotion (${promoted - killed} ms): ${percentiles(during(hit))}`);
  t.comment(`group 2 meanwhile: ${percentiles(during(other))}`);

  for (const { org, token, load, rx } of loads.values()) {
    const acknowledged = load.answers.filter((a) => a.method === 'POST' && a.status === 201);
    let lost = 0;
    for (const a of acknowledged) {
      const [{ n }] = await sql`select count(*)::int as n from app.projects where organization_id = ${org}
        and code = ${(a.body as { code: string }).code}` as [{ n: number }];
      if (n !== 1) lost++;
    }
    t.equal(lost, 0, `${org}: every one of the ${acknowledged.length} creates answered 201 is there once`);
    await retryAndCount(t, api.url, token, load, load.answers, async (code) =>
      (await sql`select count(*)::int as n from app.projects where organization_id = ${org} and code = ${code}`)[0]!.n);
    const [{ n: projects }] = await sql`select count(*)::int as n from app.projects where organization_id = ${org}` as [{ n: number }];
    const events = await rx.waitFor((e) => new Set(e.map((x) => x.body?.data?.object?.id)).size >= projects, 60_000);
    t.equal(new Set(events.map((x) => x.body.data.object.id)).size, projects, `${org}: all ${projects} events delivered`);
  }
});
