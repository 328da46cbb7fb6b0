// postgres.js's batched write after a lost socket (patch 11 in patches/postgres+3.4.9.patch): a
// query written in the same turn as its socket closes leaves the write scheduled in name only, and
// every later session of that connection slot appended its StartupMessage to the dead bytes
// without ever sending them. The slot then timed out and reconnected at every connect_timeout, for
// good: the read pool that held connections it never handed out (bench/faults.ts).
import t from 'tap';
import net from 'node:net';
import postgres from 'postgres';
import { createTestDatabase } from '../helpers/database.ts';

t.test('a query written as its socket closes does not stop the connection from starting again', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const target = new URL(adminUrl);
  const sockets: net.Socket[] = [];
  // Our own sockets (postgres.js's `socket` option), so that the test can close one at the moment
  // it chooses: between a query's write being scheduled and that write running.
  // (`socket` is documented, not typed.)
  const pool = postgres(adminUrl, {
    max: 1, onnotice: () => {}, connect_timeout: 2,
    ...{ socket: () => new Promise<net.Socket>((resolve, reject) => {
      const s = net.connect(Number(target.port || 5432), target.hostname, () => resolve(s)).once('error', reject);
      sockets.push(s);
    }) },
  });
  t.teardown(() => pool.end({ timeout: 1 }));
  t.same(await pool`select 1 as one`, [{ one: 1 }], 'the first session answers');

  // The order of the pool's read retry (src/db/reads.ts): a query sent from a setImmediate
  // callback schedules its write for the next loop iteration, and a socket closing in this one
  // runs its close callback first, which cancelled that write.
  const failed = await new Promise<unknown>((resolve) => setImmediate(async () => {
    const lost = pool`select 2 as two`;
    const settled = lost.then(() => 'answered', (e: { code?: string }) => e.code);
    // The query reaches the connection a microtask later; its bytes wait for the next setImmediate.
    for (let i = 0; i < 5; i++) await Promise.resolve();
    sockets[0]!.destroy();
    resolve(settled);
  }));
  t.equal(failed, 'CONNECTION_CLOSED', 'the query on the closed socket fails');

  const started = Date.now();
  const next = await pool`select 3 as three`.then((rows) => rows, (e: { code?: string }) => e.code);
  t.same(next, [{ three: 3 }], `the next query starts a new session and answers (${Date.now() - started} ms)`);
  t.equal(sockets.length, 2, 'on a second socket');
});
