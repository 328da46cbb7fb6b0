// PostgreSQL stopped for 5 s and started again under load (a restart or a failover that takes a
// moment), with an API process and a worker process: both live, requests answer 503 only while
// the server is down, service resumes by itself, retried creates happen once, every event is
// delivered. The server is a private embedded PostgreSQL of this test (stopping the shared one
// would take every other test file down with it).
import t from 'tap';
import postgres from 'postgres';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startEmbedded } from '../../scripts/embedded-pg.ts';
import { migrate, withDatabase } from '../../scripts/db.ts';
import { freePort, spawnApi, spawnWorker, tokenFrom, orgWithClient } from '../helpers/processes.ts';
import { WEBHOOK_TEST_ENV } from '../helpers/receiver.ts';
import { assertOnlyOutages, assertRecovered, projectEvents, retryAndCount, startLoad } from '../helpers/load.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('PostgreSQL stopped for 5 s and started again, under load', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'svc-restart-'));
  const port = await freePort();
  let pg = await startEmbedded('pg-restart', port, { root: join(root, '.data') });
  t.teardown(async () => {
    await pg.stop();
    rmSync(root, { recursive: true, force: true });
    if (!pg.dataDir.startsWith(root)) rmSync(dirname(pg.dataDir), { recursive: true, force: true });
  });
  const url = withDatabase(pg.url, 'svc_restart');
  await migrate(url);
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end());
  const { org, client } = await orgWithClient(url, 'Restart', 'load');
  const env = { ...WEBHOOK_TEST_ENV, DATABASE_URL: url, RATE_LIMIT_REQUESTS: '1000000', LOG_LEVEL: 'error' };
  const api = await spawnApi(t, env);
  const worker = spawnWorker(t, env);
  const token = await tokenFrom(api.url, client);
  const rx = await projectEvents(t, api.url, token);

  const load = startLoad(api.url, token);
  await sleep(1500);
  await pg.stop();
  const down = Date.now();
  t.pass('PostgreSQL stopped');
  await sleep(5000);
  // A request sent once the start is under way may wait for it (PostgreSQL listens, answers
  // "starting up", then serves, before pg_ctl's next look says it is up): the outage ends here.
  const starting = Date.now();
  pg = await startEmbedded('pg-restart', port, { root: join(root, '.data') });
  const up = Date.now();
  t.pass(`PostgreSQL started again after ${((up - down) / 1000).toFixed(1)} s`);
  await sleep(6000);
  await load.stop();

  for (const [name, proc] of [['API', api], ['worker', worker]] as const) {
    if (proc.child.exitCode !== null) t.comment(`${name} exited ${proc.child.exitCode}: ${proc.stderr().slice(0, 3000)}`);
    t.equal(proc.child.exitCode, null, `the ${name} process is alive`);
  }
  assertOnlyOutages(t, load.answers);
  if (process.env.SVC_FAULT_LOG) {
    for (const a of load.answers.filter((x) => x.at > down - 300 && x.at < up + 1500)) t.comment(`${a.at - down} ${a.ms} ${a.method} ${a.status} ${a.problem ?? ''}`);
  }
  const during = load.answers.filter((a) => a.at > down + 500 && a.at < starting);
  t.ok(during.length > 0 && during.every((a) => a.status === 503), `${during.length} requests while it was down: all 503, none hung`);
  // New sessions are opened at the next request: service is back within seconds of the restart.
  assertRecovered(t, load.answers, up + 3000, api.stdout);
  const back = load.answers.find((a) => a.at > up && a.status >= 200 && a.status < 300);
  t.comment(`first success ${back ? ((back.at - up) / 1000).toFixed(1) : '?'} s after the restart`);
  await retryAndCount(t, api.url, token, load, load.answers, async (code) =>
    (await sql`select count(*)::int as n from app.projects where organization_id = ${org} and code = ${code}`)[0]!.n);

  const [{ n: projects }] = await sql`select count(*)::int as n from app.projects where organization_id = ${org}` as any;
  const events = await rx.waitFor((e) => new Set(e.map((x) => x.body?.data?.object?.id)).size >= projects, 60_000);
  t.equal(new Set(events.map((x) => x.body.data.object.id)).size, projects, `all ${projects} events delivered at least once`);
  const [{ n: doubled }] = await sql`select count(*)::int as n from (select event_id from app.webhook_deliveries
    where organization_id = ${org} and replay_of is null group by event_id having count(*) > 1) x` as any;
  t.equal(doubled, 0, 'no event fanned out twice');
});
