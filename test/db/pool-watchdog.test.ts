// The pool watchdog (src/db/watchdog.ts): whatever wedges a pool, a pool whose waits or
// statements make no progress past the acquire deadline while the database answers a fresh
// connection is replaced, and /ready says 503 until it is. Forced here with a proxy that stops
// forwarding on the connections it already has (a half-open TCP path: nothing is refused, nothing
// is answered) while new connections pass; without the watchdog every request sent on those
// connections would wait forever.
import t from 'tap';
import { sql } from 'kysely';
import { createTestDatabase } from '../helpers/app.ts';
import { proxy } from '../helpers/proxy.ts';
import { spawnApi, orgWithClient, tokenFrom } from '../helpers/processes.ts';
import { connect, type PoolRebuilt } from '../../src/db/database.ts';
import { verify } from '../../src/db/watchdog.ts';
import { Progress } from '../../src/db/progress.ts';

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

t.test('a connection that never finishes starting is given up at the connect deadline, by the driver', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  // The proxy's first connection (the read pool's) is accepted and never answered; the ones after
  // it pass. The driver gives up at its connect deadline and connects anew: the database was
  // never idle for the pool, so the watchdog leaves it to the driver.
  const link = await proxy(t, new URL(adminUrl), 0, (n) => n === 1);
  const database = connect(link.url, 1, { acquireTimeoutMs: 300, connectTimeoutMs: 1000, readPoolSize: 1 });
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
  t.same(rebuilt, [], 'nothing rebuilt');
});

t.test('a start-up past the connect deadline is a wedge; one within it is the database at work', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const starting = (ms: number) => ({ waiting: 1, connections: [
    { queue: 'connecting', pid: null, socket: 'open', starting: true, starting_ms: ms, active: false, pipelined: 0 }] });
  // verify() with a driver state as the driver would report it: the driver gives up at its own
  // connect deadline (1000 ms here), so one still starting a deadline (300 ms) past it is a
  // driver that will not, whatever the database answers a fresh connection.
  t.equal(await verify(adminUrl, starting(1301), 300, 1000, true), 'wedged');
  t.equal(await verify(adminUrl, starting(1300), 300, 1000, true), 'busy', 'within the connect deadline and its grace');
  t.equal(await verify(adminUrl, starting(50), 300, 1000, true), 'busy', 'waits that timed out meanwhile do not make it idle');
  t.equal(await verify(adminUrl, { waiting: 1, connections: [
    { queue: 'connecting', pid: null, socket: null, starting: false, starting_ms: null, active: false, pipelined: 0 }] }, 300, 1000, true),
  'idle', 'a connection in no start-up, while the pool failed to serve: idle (twice in a row, a wedge)');
});

t.test('slow start-ups while every connection is taken: nothing rebuilt, the next wait times out', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  // The pool's five start-ups take 1.5 s each (a loaded server: seen on a cluster's coordinator in
  // CI); the watchdog's own probe, the sixth connection, is quick. Each holder's wait passes the
  // 200 ms deadline several times over, and it tries again, as test/db/acquire-timeout.test.ts
  // does. The pool was rebuilt for it, and a sixth transaction was served beside the five.
  const link = await proxy(t, new URL(adminUrl), (n) => (n <= 5 ? 1500 : 0));
  const database = connect(link.url, 5, { acquireTimeoutMs: 200, connectTimeoutMs: 5000, readPoolSize: 1 });
  t.teardown(() => database.close().catch(() => undefined));
  const rebuilt: PoolRebuilt[] = [];
  database.onPoolRebuilt((e) => rebuilt.push(e));
  let release!: () => void;
  const released = new Promise<void>((r) => { release = r; });
  let timeouts = 0;
  const hold = async (holding: () => void): Promise<void> => {
    for (;;) {
      try {
        await database.db.transaction().execute(async (tx) => { await sql`select 1`.execute(tx); holding(); await released; });
        return;
      } catch (e) {
        if ((e as { code?: string }).code !== 'DB_POOL_TIMEOUT') throw e;
        timeouts++;
      }
    }
  };
  const holds: Promise<void>[] = [];
  await within(Promise.all(Array.from({ length: 5 }, () => new Promise<void>((h) => { holds.push(hold(h)); }))), 20_000, 'five holders');
  t.ok(timeouts >= 5, `the holders' waits timed out ${timeouts} times`);
  await new Promise((r) => setTimeout(r, 600));
  const sixth = await database.db.transaction().execute(async (tx) => sql`select 1`.execute(tx)).then(() => 'served', (e) => e.code);
  release();
  await Promise.all(holds);
  t.equal(sixth, 'DB_POOL_TIMEOUT', 'a sixth transaction waits out its deadline: the pool is full');
  t.same(rebuilt, [], 'nothing rebuilt');
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
  // On a cluster every statement through the coordinator, behind the proxy: a process that also
  // reaches its organizations' workers is still ready while they answer (operator-routes.ts).
  const api = await spawnApi(t, { DATABASE_URL: link.url, LOG_LEVEL: 'warn', SVC_DB_ACQUIRE_TIMEOUT_MS: '1000', SVC_DB_CONNECT_TIMEOUT_MS: '1000',
    SVC_CLUSTER_DIRECT: 'off' });
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
  // On a loaded machine the transactions pool can be suspected for its stuck statement ('slow')
  // after another of its connections has answered, and the time since that progress is then under
  // the deadline: the report gives the longest wait instead.
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
