// The worker process is killed (SIGKILL) mid-delivery and a new one started: every event is
// still delivered at least once.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { startApp } from '../helpers/app.ts';
import { startReceiver, WEBHOOK_TEST_ENV } from '../helpers/receiver.ts';
import { REPOSITORY } from '../helpers/repository.ts';

const ROOT = REPOSITORY;

function spawnWorker(env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/worker/main.ts'], {
    cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'],
  });
  return child;
}

t.test('SIGKILL mid-delivery, restart: every event arrives at least once', async (t) => {
  const a = await startApp(t, WEBHOOK_TEST_ENV);
  const p = await a.principal('manager');
  const rx = await startReceiver(t);
  const ep = await a.request({ method: 'POST', url: '/v1/webhook-endpoints', token: p.token, headers: { 'idempotency-key': randomUUID() },
    payload: { url: rx.url, events: ['project.created'] } });
  t.equal(ep.statusCode, 201, 'endpoint created');

  // The receiver holds the first requests open: the worker dies while they are in flight.
  let killed = false;
  rx.behave(() => (killed ? { status: 200 } : { hang: true }));
  const env = { ...WEBHOOK_TEST_ENV, DATABASE_URL: a.adminUrl, LOG_LEVEL: 'silent' };
  const first = spawnWorker(env);
  t.teardown(() => { first.kill('SIGKILL'); });

  const projects: string[] = [];
  for (let i = 0; i < 20; i++) {
    const res = await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: { 'idempotency-key': randomUUID() },
      payload: { code: `CRASH${i}`, name: `Crash ${i}` } });
    t.equal(res.statusCode, 201);
    projects.push(res.json.id);
  }
  await rx.waitFor((e) => e.length >= 1, 20_000);
  first.kill('SIGKILL');
  killed = true;
  await new Promise((r) => first.once('exit', r));
  const [inFlight] = await a.admin`select count(*)::int as n from app.webhook_deliveries where status = 'pending' and lease_until is not null`;
  t.ok(inFlight!.n >= 1, `${inFlight!.n} deliveries were in flight when the worker died`);

  const second = spawnWorker(env);
  t.teardown(() => { second.kill('SIGKILL'); });
  const events = await rx.waitFor((e) => new Set(e.filter((x) => x.body?.type === 'project.created' && x.headers && true)
    .map((x) => x.body.data.object.id)).size >= 20 && e.length > 0, 40_000);
  const delivered = new Set(events.map((x) => x.body.data.object.id));
  t.same([...delivered].sort(), [...projects].sort(), 'all 20 events delivered');
  // Held requests count as received but not as delivered: every delivery must end succeeded.
  let left = -1;
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    [{ n: left }] = await a.admin`select count(*)::int as n from app.webhook_deliveries where status <> 'succeeded'` as any;
    if (left === 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  t.equal(left, 0, 'every delivery succeeded after the restart');
  const [{ n: total }] = await a.admin`select count(*)::int as n from app.webhook_deliveries` as any;
  t.equal(total, 20, 'one delivery per event');
  const dup = events.length - delivered.size;
  t.comment(`${events.length} requests for ${delivered.size} events (${dup} repeated: at least once, not exactly once)`);
});
