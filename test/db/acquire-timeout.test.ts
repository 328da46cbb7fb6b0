// A wait for a database connection that passes its deadline fails the request (DB_POOL_TIMEOUT,
// answered 503) and is reported with the pool's state, so that a log tells a full pool (slow or
// leaked transactions) from a free one whose connection never came.
import t from 'tap';
import net from 'node:net';
import { sql } from 'kysely';
import { randomUUID } from 'node:crypto';
import { assertProblem, createTestDatabase, startApp } from '../helpers/app.ts';
import { connect, type AcquireTimeout } from '../../src/db/database.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('transactions: a full pool times the next one out and reports in_use = size', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const database = connect(adminUrl, 1, { acquireTimeoutMs: 200, readPoolSize: 1 });
  t.teardown(() => database.close());
  const heard: AcquireTimeout[] = [];
  database.onAcquireTimeout((s) => heard.push(s));
  // The pool's one connection is opened first (a loaded machine may take longer than the
  // deadline to open it: a connection that comes late stays in the pool), then held.
  while (await database.db.transaction().execute(async (tx) => sql`select 1`.execute(tx)).then(() => false, () => true));
  heard.length = 0;
  let release!: () => void;
  const released = new Promise<void>((r) => { release = r; });
  let holding!: Promise<void>;
  await new Promise<void>((held) => {
    holding = database.db.transaction().execute(async (tx) => {
      await sql`select 1`.execute(tx);
      held();
      await released;
    });
  });
  const waited = await database.db.transaction().execute(async (tx) => sql`select 1`.execute(tx)).then(() => 'served', (e) => e.code);
  release();
  await holding;
  t.equal(waited, 'DB_POOL_TIMEOUT');
  t.match(heard, [{ pool: 'transactions', deadline_ms: 200, in_use: 1, waiting: 1, size: 1, breaker_open: false,
    driver: { waiting: 1, connections: [{ queue: 'reserved', active: false }] } }]);
  t.equal(heard.length, 1);
  t.equal(await database.db.transaction().execute(async (tx) => (await sql<{ n: number }>`select 2 as n`.execute(tx)).rows[0]!.n), 2,
    'served once the connection is free');
  t.equal(heard.length, 1);
});

t.test('reads: a connection that never comes (a server that accepts and stays silent) times the read out', async (t) => {
  const silent = net.createServer((socket) => { socket.on('error', () => {}); });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  t.teardown(() => { silent.close(); });
  const url = `postgres://nobody@127.0.0.1:${(silent.address() as net.AddressInfo).port}/nothing`;
  const database = connect(url, 1, { acquireTimeoutMs: 200, connectTimeoutMs: 1000, readPoolSize: 1 });
  t.teardown(() => database.close().catch(() => undefined));
  const heard: AcquireTimeout[] = [];
  database.onAcquireTimeout((s) => heard.push(s));
  const code = await database.query(sql`select 1`.compile(database.db)).then(() => 'served', (e) => e.code);
  t.equal(code, 'DB_POOL_TIMEOUT');
  // The driver's state says why: its one connection is still starting.
  t.match(heard, [{ pool: 'reads', deadline_ms: 200, in_use: 1, waiting: 0, size: 1, breaker_open: false,
    driver: { connections: [{ queue: 'connecting', starting: true }] } }]);
  t.equal(heard.length, 1);
});

t.test('over HTTP: the 503 is logged with its cause, and the pool wait with the pool\'s state', async (t) => {
  const lines: string[] = [];
  // 1 s, not the 200 ms of the tests above: the app's start (its signing keys) goes through the
  // same deadline untried again, and on a loaded 2-core machine a cluster coordinator's start-ups
  // pass 200 ms (with CPU held to half a core, which a slow CI machine is like).
  // On a cluster every statement through the coordinator's pools, the ones held below (a request's
  // statements otherwise run on its organization's worker).
  const a = await startApp(t, { LOG_LEVEL: 'warn', SVC_DB_ACQUIRE_TIMEOUT_MS: '1000', SVC_CLUSTER_DIRECT: 'off' }, undefined,
    { logDestination: { write: (s: string) => { lines.push(s); } } });
  // Setting up goes through the same deadline, which opening a connection can pass on a loaded
  // machine (four test runs side by side, for one): try again until it is done.
  const p = await (async () => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await a.principal('manager');
      } catch (e) {
        if (attempt === 20 || !/DB_POOL_TIMEOUT|no database connection became free|\b503\b|SERVICE_UNAVAILABLE/.test(String((e as Error)?.message ?? e))) throw e;
      }
    }
  })();
  // The test app's pool has 5 connections: hold them all. Opening them counts against the
  // deadline, which a loaded machine can pass, so each holder tries until it holds one; the
  // request goes out only once all five are held, and they are let go after its answer.
  let release!: () => void;
  const released = new Promise<void>((r) => { release = r; });
  const hold = async (holding: () => void): Promise<void> => {
    for (;;) {
      try {
        await a.database.db.transaction().execute(async (tx) => {
          await sql`select 1`.execute(tx);
          holding();
          await released;
        });
        return;
      } catch (e) {
        if ((e as { code?: string }).code !== 'DB_POOL_TIMEOUT') throw e;
      }
    }
  };
  const holds: Promise<void>[] = [];
  await Promise.all(Array.from({ length: 5 }, () => new Promise<void>((holding) => { holds.push(hold(holding)); })));
  // From here every pool wait times out with the pool full. The line is written at most once a
  // second: a holder's own timeout, or the rate limiter's background release of the token
  // endpoint's lease (it also waits for this pool), may have been written just before; a second
  // later the next one is written, whichever wait it is.
  lines.length = 0;
  await sleep(1100);
  const res = await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: { 'idempotency-key': randomUUID() },
    payload: { code: 'T1', name: 'waits' } });
  release();
  await Promise.all(holds);
  assertProblem(t, res, 503, 'SERVICE_UNAVAILABLE');
  const logged = lines.map((l) => JSON.parse(l));
  t.match(logged.find((l) => l.pool === 'transactions'), { level: 'warn', deadline_ms: 1000, in_use: 5, size: 5, waiting: Number, timeouts: Number,
    msg: /waited out the deadline for a database connection/ });
  t.match(logged.find((l) => l.answered_503), { level: 'warn', route: 'POST /v1/projects', cause_code: 'DB_POOL_TIMEOUT',
    cause: /no database connection became free within 1000 ms/, msg: /answered 503/ });
  t.notMatch(lines.join('\n'), p.token, 'no token in the log');
});
