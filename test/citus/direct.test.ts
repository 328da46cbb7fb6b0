// On a cluster, a request's statements run on the worker that holds its organization's shard group,
// over the API's own connections to that worker (docs/scaling.md, "Requests on their organization's
// node"). A group that moves is still served, first through the node the API still names (Citus
// forwards a transaction's calls; a read refused there runs again through api.in_organization),
// then, once the API has read the placements again, on the group's new node. The worker's jobs and
// webhook fan-out of that organization run on the same node, and follow the group when it moves.
import t from 'tap';
import postgres from 'postgres';
import { startApp, CITUS_WORKERS } from '../helpers/app.ts';
import { oneConnection } from '../helpers/sql.ts';
import { editDatabaseUrl } from '../../src/db/url.ts';
import { PLACEMENTS_REFRESH_MS } from '../../src/db/cluster.ts';
import { startWorker } from '../../src/worker/index.ts';
import { startReceiver, WEBHOOK_TEST_ENV } from '../helpers/receiver.ts';
import { getRun, key, startRun } from '../helpers/agents.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

if (CITUS_WORKERS.length < 2) {
  t.plan(0, 'runs on a Citus cluster of two workers: make test-citus');
} else {
  t.test('a request and a job run on their organization\'s worker, before and after its group moves', async (t) => {
    const a = await startApp(t, WEBHOOK_TEST_ENV);
    const worker = await startWorker(a.config, { pollInterval: 50 });
    t.teardown(() => worker.stop());
    const p = await a.principal('member,manager');
    const rx = await startReceiver(t);
    t.equal((await a.request({ method: 'POST', url: '/v1/webhook-endpoints', token: p.token, headers: key(),
      payload: { url: rx.url, events: ['project.created'] } })).statusCode, 201, 'a webhook endpoint for project.created');
    const database = new URL(a.adminUrl).pathname.slice(1);
    const workers = CITUS_WORKERS.map((w) => {
      const sql = postgres(editDatabaseUrl(w, { database }), oneConnection);
      t.teardown(() => sql.end());
      return { port: Number(new URL(w).port), sql };
    });
    /** The API's own sessions on each worker (Citus's are named citus_internal). */
    const apiSessions = async () => Promise.all(workers.map(async (w) =>
      (await w.sql`select count(*)::int as n from pg_stat_activity where datname = current_database()
        and usename = 'svc_runtime' and application_name like 'svc-api%'`)[0]!.n as number));
    /** The worker's own sessions on each worker node (not Citus's, which a delegated call opens). */
    const jobSessions = async () => Promise.all(workers.map(async (w) =>
      (await w.sql`select count(*)::int as n from pg_stat_activity where datname = current_database()
        and usename = 'svc_worker' and application_name = 'svc-worker-node'`)[0]!.n as number));
    /** Every project created delivered once, and an echo run carried out by the worker. */
    const jobsDone = async (when: string) => {
      const delivered = await rx.waitFor((e) => e.filter((r) => r.body?.type === 'project.created').length >= titles.length);
      t.equal(delivered.filter((r) => r.body?.type === 'project.created').length, titles.length, `${when}: every project.created delivered once`);
      const run = await startRun(a, p.token, 'agt_echo', { input: { message: when } });
      t.equal(run.statusCode, 202, `${when}: an echo run started`);
      let status = '';
      for (let i = 0; i < 200 && !['succeeded', 'failed'].includes(status); i++) {
        await sleep(50);
        status = (await getRun(a, p.token, run.json.id)).status;
      }
      t.equal(status, 'succeeded', `${when}: and carried out`);
    };
    const holder = async () => (await a.admin`select n.nodeport as port, s.shardid::text as shard
      from pg_dist_shard s join pg_dist_placement pl using (shardid) join pg_dist_node n on n.groupid = pl.groupid
     where s.logicalrelid = 'app.organizations'::regclass
       and s.shardid = get_shard_id_for_distribution_column('app.organizations', ${p.orgId}::text)`)[0]! as { port: number; shard: string };

    const titles: string[] = [];
    const create = async () => {
      const title = `P${titles.length + 1}`;
      const res = await a.request({ method: 'POST', url: '/v1/projects', token: p.token, payload: { code: title, name: `Project ${title}` },
        headers: { 'idempotency-key': `k-${titles.length + 1}` } });
      t.equal(res.statusCode, 201, `POST /v1/projects (${title})`);
      titles.push(title);
    };
    const listed = async () => {
      const res = await a.request({ url: '/v1/projects?limit=100', token: p.token });
      t.equal(res.statusCode, 200, 'GET /v1/projects');
      return (res.json.data as { code: string }[]).map((x) => x.code).sort();
    };

    // The first request of an organization looks its shard up; its later ones go to the worker.
    await create();
    await sleep(200);
    for (let i = 0; i < 3; i++) await create();
    t.same(await listed(), [...titles].sort(), 'every project created is listed');
    const before = await holder();
    const at = workers.findIndex((w) => w.port === before.port);
    t.ok(at >= 0, `the organization's group is on a worker (${before.port})`);
    const sessions = await apiSessions();
    t.ok(sessions[at]! > 0, `the API has sessions on that worker (${sessions.join(', ')})`);
    t.equal(sessions[1 - at], 0, 'and none on the other');
    await jobsDone('before the move');
    const jobs = await jobSessions();
    t.ok(jobs[at]! > 0, `the worker has sessions on the organization's worker (${jobs.join(', ')})`);
    t.equal(jobs[1 - at], 0, 'and none on the other');

    // The group moves to the other worker; the API still names the old one until it reads the
    // placements again: answered all the same.
    const other = workers[1 - at]!;
    await a.admin.unsafe(`select citus_move_shard_placement(${before.shard}, '127.0.0.1', ${before.port}, '127.0.0.1', ${other.port}, 'block_writes')`);
    t.equal((await holder()).port, other.port, 'the group moved');
    await create();
    t.same(await listed(), [...titles].sort(), 'right after the move: every project listed, the new one too');
    await jobsDone('right after the move');
    // A read of one row, then a transaction whose begin_request is a statement of its own (a PATCH
    // has no Idempotency-Key), which the node the group left forwards to the group's node.
    const id = (await a.request({ url: '/v1/projects?limit=1', token: p.token })).json.data[0].id as string;
    const got = await a.request({ url: `/v1/projects/${id}`, token: p.token });
    t.equal(got.statusCode, 200, 'right after the move: GET /v1/projects/{id}');
    const patched = await a.request({ method: 'PATCH', url: `/v1/projects/${id}`, token: p.token,
      headers: { 'if-match': got.headers.etag }, payload: { name: 'Renamed' } });
    t.equal(patched.statusCode, 200, `and PATCH /v1/projects/{id} (${patched.body.slice(0, 200)})`);
    t.equal(patched.json.name, 'Renamed');
    t.equal((await a.request({ url: '/v1/me', token: p.token })).statusCode, 200, 'and GET /v1/me');
    await sleep(PLACEMENTS_REFRESH_MS * 2);
    await create();
    t.same(await listed(), [...titles].sort(), 'once the placements are read again: every project listed');
    t.ok((await apiSessions())[1 - at]! > 0, 'the API now has sessions on the group\'s new worker');
    await jobsDone('once the placements are read again');
    t.ok((await jobSessions())[1 - at]! > 0, 'and so has the worker');
  });

  t.test('the runtime and worker roles log in to every worker with the passwords the migrations set on the coordinator', async (t) => {
    const a = await startApp(t);
    for (const role of ['svc_runtime', 'svc_worker']) {
      const verifier = async (sql: postgres.Sql) => (await sql`select rolpassword from pg_authid where rolname = ${role}`)[0]!.rolpassword as string;
      const coordinator = await verifier(a.admin);
      t.match(coordinator, /^SCRAM-SHA-256\$/, `${role}: a SCRAM verifier on the coordinator`);
      for (const w of CITUS_WORKERS) {
        const sql = postgres(w, oneConnection);
        t.equal(await verifier(sql).finally(() => sql.end()), coordinator, `${role}: the same on ${new URL(w).port}`);
      }
    }
  });

  t.test('SVC_CLUSTER_DIRECT=off: every statement through the coordinator', async (t) => {
    const a = await startApp(t, { SVC_CLUSTER_DIRECT: 'off' });
    const p = await a.principal('member');
    for (let i = 0; i < 5; i++) {
      t.equal((await a.request({ url: '/v1/tasks', token: p.token })).statusCode, 200, 'GET /v1/tasks');
      await sleep(50);
    }
    const database = new URL(a.adminUrl).pathname.slice(1);
    for (const w of CITUS_WORKERS) {
      const sql = postgres(editDatabaseUrl(w, { database }), oneConnection);
      const [{ n }] = await sql`select count(*)::int as n from pg_stat_activity where datname = current_database()
        and usename = 'svc_runtime' and application_name like 'svc-api%'` as [{ n: number }];
      await sql.end();
      t.equal(n, 0, `no session of the API on ${new URL(w).port}`);
    }
  });
}
