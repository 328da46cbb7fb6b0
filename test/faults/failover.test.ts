// A real failover under load: a primary with a synchronous streaming standby, the API
// and its in-process worker given both hosts with target_session_attrs=read-write; the primary is
// stopped hard and the standby promoted. The service answers 503 with Retry-After during the
// switch and then serves from the new primary by itself; every write it acknowledged is there;
// every event is delivered; the worker resumes. bench/failover.ts times the switch.
import t from 'tap';
import postgres from 'postgres';
import { migrate } from '../../scripts/db.ts';
import { spawnApi, tokenFrom, orgWithClient } from '../helpers/processes.ts';
import { WEBHOOK_TEST_ENV } from '../helpers/receiver.ts';
import { assertOnlyOutages, assertRecovered, projectEvents, retryAndCount, startLoad } from '../helpers/load.ts';
import { primaryAndStandby, replicaMissing } from '../helpers/replica.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const missing = replicaMissing();

t.test('the primary stopped hard under load, the standby promoted', { skip: missing && `needs ${missing}` }, async (t) => {
  const pair = await primaryAndStandby(t, 'svc_failover');
  await migrate(pair.primaryUrl);
  const { org, client } = await orgWithClient(pair.primaryUrl, 'Failover', 'load');
  const api = await spawnApi(t, { ...WEBHOOK_TEST_ENV, DATABASE_URL: pair.bothUrl, SVC_WORKER: 'on', RATE_LIMIT_REQUESTS: '1000000',
    LOG_LEVEL: process.env.SVC_FAULT_LOG ?? 'warn' });
  const token = await tokenFrom(api.url, client);
  const rx = await projectEvents(t, api.url, token);

  const load = startLoad(api.url, token);
  await sleep(1500);
  pair.killPrimary();
  const killed = Date.now();
  t.pass('the primary is stopped (immediate)');
  // Longer than the 5 s a request may wait for a connection: requests in the switch are answered 503.
  await sleep(6000);
  pair.promote();
  const promoted = Date.now();
  t.pass(`the standby is promoted ${promoted - killed} ms later`);
  await sleep(8000);
  await load.stop();

  t.equal(api.child.exitCode, null, 'the API process is alive');
  t.notMatch(api.stderr(), /TypeError|Unhandled|uncaught/i, 'no crash in its output');
  assertOnlyOutages(t, load.answers);
  const during = load.answers.filter((a) => a.at > killed + 500 && a.at + (a.ms ?? 0) < promoted);
  t.ok(during.length > 0 && during.every((a) => a.status === 503), `${during.length} answers while no host took writes: all 503, none hung`);
  const first = load.answers.filter((a) => a.at >= killed && a.status >= 200 && a.status < 300).sort((a, b) => a.at + (a.ms ?? 0) - b.at - (b.ms ?? 0))[0];
  t.ok(first, 'served again after the switch');
  t.comment(`promotion → first 2xx answered: ${first ? first.at + (first.ms ?? 0) - promoted : '?'} ms`);
  assertRecovered(t, load.answers, promoted + 5000, api.stdout);

  const sql = postgres(pair.standbyUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end());
  const acknowledged = load.answers.filter((a) => a.method === 'POST' && a.status === 201);
  let lost = 0;
  for (const a of acknowledged) {
    const [{ n }] = await sql`select count(*)::int as n from app.projects where organization_id = ${org} and code = ${(a.body as { code: string }).code}` as any;
    if (n !== 1) lost++;
  }
  t.equal(lost, 0, `every one of the ${acknowledged.length} creates answered 201 is on the new primary`);
  await retryAndCount(t, api.url, token, load, load.answers, async (code) =>
    (await sql`select count(*)::int as n from app.projects where organization_id = ${org} and code = ${code}`)[0]!.n);

  // The worker's job runner (node-postgres, its own choice of host) runs a job queued on the new primary.
  const [job] = await sql`select (graphile_worker.add_job('token_purge')).id` as any;
  let left = 1;
  for (const until = Date.now() + 20_000; left && Date.now() < until; await sleep(200)) {
    [{ left }] = await sql`select count(*)::int as left from graphile_worker.jobs where id = ${job.id}` as any;
  }
  t.equal(left, 0, 'the worker resumed: a job queued on the new primary ran');

  // The worker lost its database too: every project's event still arrives, from the new primary.
  const [{ n: projects }] = await sql`select count(*)::int as n from app.projects where organization_id = ${org}` as any;
  const events = await rx.waitFor((e) => new Set(e.map((x) => x.body?.data?.object?.id)).size >= projects, 60_000).catch((e) => {
    console.error(api.stdout().split('\n').filter((l) => !l.includes('"msg":"request"')).slice(-40).join('\n'));
    throw e;
  });
  t.equal(new Set(events.map((x) => x.body.data.object.id)).size, projects, `all ${projects} events delivered at least once`);
});
