// postgres.js reservations while sessions end (patches 6 and 7 in patches/postgres+3.4.9.patch): a
// transaction waiting for a connection is served once one is up, even when a reserved session
// ends meanwhile, and a reservation that failed never swallows a connection offered to it later.
// Both lost a connection wait for good before: the terminate fault test's requests that waited
// out the whole 5 s acquire deadline after the database was back.
import t from 'tap';
import postgres from 'postgres';
import { createTestDatabase } from '../helpers/database.ts';
import { proxy } from '../helpers/proxy.ts';
import { reconnectBackoff } from '../../src/db/faults.ts';

const within = <T>(p: Promise<T>, ms: number) => Promise.race([p,
  new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms).unref())]);

t.test('a reserved session ends while another reservation waits for its connection to start', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => admin.end({ timeout: 1 }));
  const pool = postgres((await proxy(t, new URL(adminUrl), 300)).url, { max: 2, onnotice: () => {} });
  t.teardown(() => pool.end({ timeout: 1 }));

  const first = await pool.reserve();
  const [row] = await first<{ pid: number }[]>`select pg_backend_pid() as pid`;
  const pid = row!.pid;
  const waiting = pool.reserve();
  // The first session's close is seen while the second connection is still starting: the pool
  // reconnects it for the waiting reservation, which took it out of the queue it is served from.
  await admin`select pg_terminate_backend(${pid}::int)`;
  const second = await within(waiting, 5000);
  t.same(await second`select 1 as one`, [{ one: 1 }], 'the waiting reservation is served');
  second.release();
  first.release();
  const both = await within(Promise.all([pool.reserve(), pool.reserve()]), 5000);
  t.equal(both.length, 2, 'both connections of the pool can be reserved again');
  both.forEach((r) => r.release());
});

t.test('a reservation whose connection could not start takes nothing offered later', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  // The second connection never answers: its start-up times out (connect_timeout 1 s).
  const pool = postgres((await proxy(t, new URL(adminUrl), 0, (n) => n === 2)).url, { max: 2, connect_timeout: 1, onnotice: () => {} });
  t.teardown(() => pool.end({ timeout: 1 }));

  const first = await pool.reserve();
  // Released as soon as the other reservation fails: before its connection's close is handled,
  // while the failed reservation would still be first in the queue.
  const failed = await pool.reserve().then(() => null, (e) => { first.release(); return e; });
  t.equal(failed?.code, 'CONNECT_TIMEOUT', `the reservation fails with the start-up deadline (${failed?.message})`);
  const both = await within(Promise.all([pool.reserve(), pool.reserve()]), 5000);
  t.equal(both.length, 2, 'the released connection went back to the pool, not to the failed reservation');
  for (const r of both) t.same(await r`select 1 as one`, [{ one: 1 }]);
  both.forEach((r) => r.release());
});

t.test('the reconnection backoff starts over once a reserved session has started', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const link = await proxy(t, new URL(adminUrl), 0);
  const pool = postgres(link.url, { max: 1, onnotice: () => {} });
  t.teardown(() => pool.end({ timeout: 1 }));
  // Each network fault adds one to the pool's retry count (backoff 3^n / 100 s, up to 20 s); the
  // session that started after it must clear it, or the seventh reconnection waits 3.6-7.3 s.
  for (let fault = 1; fault <= 7; fault++) {
    const started = Date.now();
    const r = await within(pool.reserve(), 2000).catch((e) => e);
    if (r instanceof Error) { t.fail(`reservation after ${fault - 1} network faults: ${r.message}`); return; }
    await r`select 1`;
    link.reset();
    await r`select 1`.catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 50)); // the socket's close handled: the session is lost, not pooled
    r.release();
    t.ok(Date.now() - started < 2000, `reserved within 2 s after ${fault - 1} faults`);
  }
});

// Patch 9: the pool hands out the connection released last. With FIFO, a load below the pool size
// spread over every session the pool ever opened (20 after one burst), each one's caches colder:
// PostgreSQL's CPU per POST /v1/tasks was 1.7-1.8 ms against 1.5 ms (docs/benchmarks.md).
t.test('an idle connection is handed out last in, first out', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const pool = postgres(adminUrl, { max: 3, onnotice: () => {} });
  t.teardown(() => pool.end({ timeout: 1 }));
  const pidOf = async (s: postgres.Sql) => (await s<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid;
  const [a, b, c] = await Promise.all([pool.reserve(), pool.reserve(), pool.reserve()]);
  const pids = [await pidOf(a), await pidOf(b), await pidOf(c)];
  t.equal(new Set(pids).size, 3, 'three sessions');
  a.release();
  b.release();
  c.release();
  const next = await pool.reserve();
  t.equal(await pidOf(next), pids[2], 'a reservation gets the session released last');
  next.release();
  t.equal(await pidOf(pool), pids[2], 'so does a query outside a reservation');
  const [x, y] = await Promise.all([pool.reserve(), pool.reserve()]);
  t.same([await pidOf(x), await pidOf(y)].sort(), [pids[1], pids[2]].sort(), 'then the one released before it');
  x.release();
  y.release();
});

// Every session of a pool lost at once (a restart, a failover, terminated sessions): each close
// added one to the pool's retry count, and a closed connection keeps the delay it got then, so with
// postgres.js's default backoff (3^n / 100 s, up to 20 s) the sixth waited 3.6-7.3 s to connect
// again, past a request's 5 s acquire deadline when more closed (the terminate fault test's rare
// 503 after recovery). The server's pools use reconnectBackoff, at most 0.5 s.
t.test('every session lost at once: each connects again within a second', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const link = await proxy(t, new URL(adminUrl), 0);
  // SVC_TEST_DEFAULT_BACKOFF=1 runs it with postgres.js's default, which fails it.
  const backoff = process.env.SVC_TEST_DEFAULT_BACKOFF === '1' ? undefined : reconnectBackoff;
  const pool = postgres(link.url, { max: 6, ...(backoff ? { backoff } : {}), onnotice: () => {} });
  t.teardown(() => pool.end({ timeout: 1 }));
  const six = (seconds: number) => Promise.all(Array.from({ length: 6 }, () => pool`select pg_sleep(${seconds})`));
  await six(0.05);
  link.reset();
  await new Promise((resolve) => setTimeout(resolve, 100)); // every close handled: six sessions lost
  const started = Date.now();
  const r = await within(six(0.01), 2000).catch((e) => e);
  t.notOk(r instanceof Error, `six statements on six lost sessions answered within 2 s${r instanceof Error ? `: ${r.message}` : ''}`);
  t.comment(`answered in ${Date.now() - started} ms`);
});
