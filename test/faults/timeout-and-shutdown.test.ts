// A statement past its timeout answers 503, not 500 or a hang; SIGTERM drains a process:
// it stops accepting, lets in-flight requests and jobs finish, then exits 0.
import t, { type Test } from 'tap';
import net from 'node:net';
import postgres from 'postgres';
import { randomUUID } from 'node:crypto';
import { startApp, assertProblem, createTestDatabase } from '../helpers/app.ts';
import { spawnApi, spawnWorker, tokenFrom, orgWithClient } from '../helpers/processes.ts';
import { startReceiver, WEBHOOK_TEST_ENV } from '../helpers/receiver.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('a statement that exceeds the statement timeout', async (t) => {
  // 3 s, not less: every statement of the server has it, the token's and the next requests' among
  // them, and on a loaded 2-core machine a cluster's delegated statement can take over a second.
  // The slow statement is cancelled at 3 s whatever it asked for.
  const a = await startApp(t, { SVC_DB_STATEMENT_TIMEOUT_MS: '3000' });
  const p = await a.principal('manager');
  const slow = await a.request({ url: '/v1/_test/sleep?ms=30000', token: p.token });
  assertProblem(t, slow, 503, 'SERVICE_UNAVAILABLE');
  t.ok(Number(slow.headers['retry-after']) > 0, 'Retry-After');
  t.match(slow.json.detail, 'in time');
  const quick = await a.request({ url: '/v1/_test/sleep?ms=10', token: p.token });
  t.equal(quick.statusCode, 200, 'the next request is served (the session was not lost)');
  t.equal((await a.request({ url: '/v1/me', token: p.token })).statusCode, 200);
});

async function world(t: Test) {
  const { adminUrl } = await createTestDatabase(t);
  const { client } = await orgWithClient(adminUrl, 'Drain', 'drain');
  return { adminUrl, client };
}

t.test('SIGTERM: in-flight requests finish, new ones are refused, exit 0', async (t) => {
  const w = await world(t);
  const api = await spawnApi(t, { ...WEBHOOK_TEST_ENV, DATABASE_URL: w.adminUrl, SVC_WORKER: 'on', SVC_WEBHOOK_TIMEOUT_MS: '5000' });
  const token = await tokenFrom(api.url, w.client);
  // The endpoint's verification challenge is answered after 1.5 s: the create is in flight that long.
  const rx = await startReceiver(t, { challengeDelayMs: 3000 });
  let finished = false;
  const inFlight = fetch(`${api.url}/v1/webhook-endpoints`, {
    method: 'POST', body: JSON.stringify({ url: rx.url, events: ['project.created'] }),
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
  }).finally(() => { finished = true; });
  await sleep(400);
  const signalled = Date.now();
  api.child.kill('SIGTERM');
  // A new TCP connection is refused once the process has handled the signal (polled: under a loaded
  // machine the child may take a while to run its handler), while the create is still in flight.
  const { port } = new URL(api.url);
  let refused = false;
  for (const until = Date.now() + 2500; !refused && Date.now() < until;) {
    refused = await new Promise<boolean>((done) => {
      const socket = net.connect({ host: '127.0.0.1', port: Number(port) });
      socket.once('connect', () => { socket.destroy(); done(false); });
      socket.once('error', () => done(true));
    });
    if (!refused) await sleep(50);
  }
  t.ok(refused, 'a new connection after SIGTERM is refused');
  t.notOk(finished, 'while the in-flight request is still running');
  const res = await inFlight;
  t.equal(res.status, 201, 'the in-flight request completed');
  const code = await api.exited;
  t.equal(code, 0, 'the process exited 0');
  t.ok(Date.now() - signalled < 10_000, `drained in ${Date.now() - signalled} ms`);
});

t.test('SIGTERM to a worker: the delivery in flight finishes and is recorded, exit 0', async (t) => {
  const w = await world(t);
  const env = { ...WEBHOOK_TEST_ENV, DATABASE_URL: w.adminUrl, SVC_WEBHOOK_TIMEOUT_MS: '5000' };
  const api = await spawnApi(t, env);
  const worker = spawnWorker(t, env);
  const token = await tokenFrom(api.url, w.client);
  const rx = await startReceiver(t);
  rx.behave(() => ({ status: 200, delayMs: 1500 }));
  const ep = await fetch(`${api.url}/v1/webhook-endpoints`, {
    method: 'POST', body: JSON.stringify({ url: rx.url, events: ['project.created'] }),
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
  });
  t.equal(ep.status, 201);
  const created = await fetch(`${api.url}/v1/projects`, {
    method: 'POST', body: JSON.stringify({ code: 'DRAIN', name: 'Drain' }),
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
  });
  t.equal(created.status, 201);
  await rx.waitFor((e) => e.length >= 1, 20_000);
  worker.child.kill('SIGTERM');
  const code = await worker.exited;
  t.equal(code, 0, 'the worker exited 0');
  const sql = postgres(w.adminUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end());
  const [d] = await sql`select status, attempt_count, lease_until from app.webhook_deliveries` as any;
  t.equal(d.status, 'succeeded', 'the delivery in flight finished and was recorded before the exit');
  t.equal(d.attempt_count, 1);
});
