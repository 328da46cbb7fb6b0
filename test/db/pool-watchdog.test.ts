// The pool watchdog (src/db/watchdog.ts, issue 35): whatever wedges a pool, a pool whose waits or
// statements make no progress past the acquire deadline while the database answers a fresh
// connection is replaced, and /ready says 503 until it is. Forced here with a proxy that stops
// forwarding on the connections it already has (a half-open TCP path: nothing is refused, nothing
// is answered) while new connections pass; without the watchdog every request sent on those
// connections waited forever.
import t from 'tap';
import { sql } from 'kysely';
import { createTestDatabase } from '../helpers/app.ts';
import { proxy } from '../helpers/proxy.ts';
import { spawnApi, orgWithClient, tokenFrom } from '../helpers/processes.ts';
import { connect, type PoolRebuilt } from '../../src/db/database.ts';
import { Progress } from '../../src/db/watchdog.ts';

const within = <T>(p: Promise<T>, ms: number, what: string) => Promise.race([p,
  new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: still waiting after ${ms} ms`)), ms).unref())]);
const one = (n: number) => ({ sql: `select ${n} as n`, parameters: [] });

t.test('each pool whose connections stop answering is rebuilt, and its requests are served again', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const link = await proxy(t, new URL(adminUrl));
  const database = connect(link.url, 2, { acquireTimeoutMs: 500, connectTimeoutMs: 1000, readPoolSize: 1 });
  t.teardown(() => database.close());
  const rebuilt: PoolRebuilt[] = [];
  database.onPoolRebuilt((e) => rebuilt.push(e));
  await database.ping();
  t.same(await database.query(one(1)), [{ n: 1 }], 'the read pool answers');

  // A transaction holds its connection across the freeze: its next statement is never answered.
  let holding!: () => void;
  const held = new Promise<void>((r) => { holding = r; });
  const stuck = database.db.transaction().execute(async (tx) => {
    await sql`select 1`.execute(tx);
    holding();
    await new Promise((r) => setTimeout(r, 100));
    return sql`select 2`.execute(tx);
  }).then(() => 'answered', (e) => (e as { code?: string }).code);
  await held;
  link.freeze();

  const started = Date.now();
  const read = await within(database.query(one(2)), 10_000, 'a read on the frozen pool');
  t.same(read, [{ n: 2 }], `a read sent on a frozen connection is answered (${Date.now() - started} ms: sent again on the rebuilt pool)`);
  await within(database.ping(), 10_000, 'ping');
  t.ok(true, `every pool answers again (${Date.now() - started} ms)`);
  t.equal(await within(stuck, 15_000, 'the transaction on the frozen pool'), 'CONNECTION_DESTROYED',
    'the transaction caught on the frozen connection fails (its request is answered 503) instead of waiting for good');
  t.same(rebuilt.map((e) => e.pool).sort(), ['points', 'reads', 'transactions'], 'each pool rebuilt once');
  t.ok(rebuilt.every((e) => e.stalled_ms >= 500 && e.driver.connections.length > 0), 'with how long it stalled and its driver state');
  t.same(await database.query(one(3), { point: true }), [{ n: 3 }]);
});

t.test('a pool whose connection never finishes starting is rebuilt', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  // The proxy's first connection (the read pool's) is accepted and never answered; the ones after
  // it (the watchdog's probe, the rebuilt pool) pass. The driver would give up only after its own
  // 30 s connect deadline: the watchdog acts first.
  const link = await proxy(t, new URL(adminUrl), 0, (n) => n === 1);
  const database = connect(link.url, 1, { acquireTimeoutMs: 500, connectTimeoutMs: 30_000, readPoolSize: 1 });
  t.teardown(() => database.close().catch(() => undefined));
  const rebuilt: PoolRebuilt[] = [];
  database.onPoolRebuilt((e) => rebuilt.push(e));
  const first = await database.query(one(1)).then(() => 'answered', (e) => e.code);
  t.equal(first, 'DB_POOL_TIMEOUT', 'the first read waits out its deadline');
  const started = Date.now();
  let answer: unknown;
  while (Date.now() - started < 10_000) {
    answer = await database.query(one(2)).catch((e) => e.code);
    if (Array.isArray(answer)) break;
  }
  t.same(answer, [{ n: 2 }], `served again ${Date.now() - started} ms later`);
  t.match(rebuilt, [{ pool: 'reads', reason: /^(stalled|timed-out)$/, driver: { connections: [{ starting: true }] } }], 'the read pool');
  t.equal(rebuilt.length, 1, 'rebuilt once');
});

t.test('a slow start-up is not a wedge', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  // Every new connection's first bytes wait 800 ms (a loaded server, TLS, a pooler): longer than
  // the 300 ms a read may wait, shorter than the connect deadline.
  const link = await proxy(t, new URL(adminUrl), 800);
  const database = connect(link.url, 1, { acquireTimeoutMs: 300, connectTimeoutMs: 3000, readPoolSize: 1 });
  t.teardown(() => database.close().catch(() => undefined));
  const rebuilt: PoolRebuilt[] = [];
  database.onPoolRebuilt((e) => rebuilt.push(e));
  t.equal(await database.query(one(1)).then(() => 'answered', (e) => e.code), 'DB_POOL_TIMEOUT', 'the first read waits out its deadline');
  await new Promise((r) => setTimeout(r, 2000));
  t.same(await database.query(one(2)), [{ n: 2 }], 'then the connection, once started, serves');
  t.same(rebuilt, [], 'nothing rebuilt');
});

t.test('a slow statement is not a wedge: the database is working on it', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const database = connect(adminUrl, 2, { acquireTimeoutMs: 300, connectTimeoutMs: 1000, readPoolSize: 1 });
  t.teardown(() => database.close());
  // Each pool's session is open first: on a loaded machine (a cluster's coordinator) starting one
  // may alone take longer than the 300 ms a statement may wait for a connection, which is another
  // case ('a slow start-up is not a wedge'). Here only the statements are slow.
  for (const until = Date.now() + 30_000; ;) {
    const warm = await Promise.all([
      database.query(one(0)),
      database.db.transaction().execute((tx) => sql`select 1`.execute(tx)),
    ]).then(() => true, (e) => { if (e.code !== 'DB_POOL_TIMEOUT' || Date.now() > until) throw e; return false; });
    if (warm) break;
  }
  const rebuilt: PoolRebuilt[] = [];
  database.onPoolRebuilt((e) => rebuilt.push(e));
  const [slowRead, slowTx] = await Promise.all([
    database.query({ sql: 'select pg_sleep(1.5) is null as slept', parameters: [] }),
    database.db.transaction().execute((tx) => sql<{ slept: boolean }>`select pg_sleep(1.5) is null as slept`.execute(tx)),
  ]);
  t.same(slowRead, [{ slept: false }]);
  t.same(slowTx.rows, [{ slept: false }]);
  t.same(rebuilt, [], 'nothing rebuilt');
});

t.test('over HTTP: /ready answers 503 while a pool hands out nothing, the rebuild is counted in /metrics and logged once', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const { client } = await orgWithClient(adminUrl, 'Watchdog');
  const link = await proxy(t, new URL(adminUrl));
  const api = await spawnApi(t, { DATABASE_URL: link.url, LOG_LEVEL: 'warn', SVC_DB_ACQUIRE_TIMEOUT_MS: '1000', SVC_DB_CONNECT_TIMEOUT_MS: '1000' });
  const token = await tokenFrom(api.url, client);
  const projects = () => fetch(`${api.url}/v1/projects`, { headers: { authorization: `Bearer ${token}` } });
  t.equal((await projects()).status, 200);
  link.freeze();

  const ready = await fetch(`${api.url}/ready`);
  t.equal(ready.status, 503, '/ready: 503 while the pools hand out nothing');
  t.equal(ready.headers.get('content-type'), 'application/problem+json');
  t.equal((await ready.json()).code, 'SERVICE_UNAVAILABLE');
  t.ok(Number(ready.headers.get('retry-after')) > 0, 'with Retry-After');

  const until = Date.now() + 15_000;
  let status = 0;
  while (Date.now() < until && (status = (await fetch(`${api.url}/ready`)).status) !== 200) await new Promise((r) => setTimeout(r, 250));
  t.equal(status, 200, '/ready: 200 once the pools are rebuilt');
  t.equal((await projects()).status, 200, 'requests are served again');
  const metrics = await (await fetch(`${api.url}/metrics`)).text();
  for (const pool of ['transactions', 'reads', 'points']) {
    t.match(metrics, new RegExp(`svc_db_pool_rebuilds_total\\{pool="${pool}"\\} 1\\b`), `/metrics counts the ${pool} pool's rebuild`);
  }
  const lines = api.stdout().split('\n').filter((l) => l.includes('rebuilt')).map((l) => JSON.parse(l));
  t.same(lines.map((l) => l.pool).sort(), ['points', 'reads', 'transactions'], 'one log line per rebuild');
  t.match(lines[0], { level: 'error', stalled_ms: Number, driver: { connections: Array } });
});

t.test('a rebuilt pool reports how long its longest wait waited, whatever made it suspect', async (t) => {
  // What made this test flaky on a loaded machine: the transactions pool was suspected for its
  // stuck statement ('slow') after another of its connections had answered, and the time since
  // that progress, then reported, was under the deadline.
  const now = Date.now();
  const slow = new Progress();
  const stuck = slow.start();
  stuck.at = now - 800;
  slow.finish(slow.start());
  t.equal(slow.suspect(500, now), 'slow', 'a statement outstanding past the deadline, another answered since');
  t.ok(slow.stalledMs(now) >= 800, `its wait is reported (${slow.stalledMs(now)} ms)`);

  const timedOut = new Progress();
  const wait = timedOut.start();
  wait.at = Date.now() - 600;
  timedOut.finish(wait, false);
  t.equal(timedOut.suspect(500), 'timed-out', 'a wait that passed its deadline, nothing outstanding');
  t.ok(timedOut.stalledMs() >= 600, `its wait is reported (${timedOut.stalledMs()} ms)`);
  timedOut.restart();
  t.equal(timedOut.stalledMs(), 0, 'and forgotten once the watchdog looked');

  const stalled = new Progress();
  stalled.start().at = now - 700;
  t.equal(stalled.suspect(500, now + 600), 'stalled');
  t.ok(stalled.stalledMs(now + 600) >= 500, 'no progress at all');
});
