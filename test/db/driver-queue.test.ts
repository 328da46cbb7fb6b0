// postgres.js's connection queues (patch 5 in patches/postgres+3.4.9.patch): the patched Queue is
// the one installed, keeps its order and removal semantics, and a pool under pipelined load (four
// connections, every query sent to a busy one) still answers every query in order.
import t from 'tap';
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { createTestDatabase } from '../helpers/database.ts';
// The driver's own module, not part of its public API: this test is about the installed copy.
// @ts-expect-error no declaration file for the driver's internal module
import Queue from '../../node_modules/postgres/src/queue.js';

t.test('the patched queue is installed, in both builds', async (t) => {
  for (const build of ['src', 'cjs/src']) {
    const text = readFileSync(new URL(`../../node_modules/postgres/${build}/queue.js`, import.meta.url), 'utf8');
    t.match(text, 'xs.indexOf(x, index)', `${build}/queue.js searches the live part only (run npm install: patch-package)`);
  }
});

t.test('order and removal', async (t) => {
  const q = Queue();
  for (const x of ['a', 'b', 'c', 'd']) q.push(x);
  t.equal(q.shift(), 'a');
  t.equal(q.remove('a'), null, 'a shifted-out item is not there');
  t.equal(q.remove('c'), 'c');
  t.equal(q.length, 2);
  t.equal(q.shift(), 'b');
  t.equal(q.shift(), 'd');
  t.equal(q.length, 0);
  // The pattern of a busy pool: shift, remove (not found), push; many times over.
  const conns = [{ i: 1 }, { i: 2 }, { i: 3 }, { i: 4 }];
  for (const c of conns) q.push(c);
  let stillQueued = 0;
  for (let n = 0; n < 100_000; n++) {
    const c = q.shift();
    if (q.remove(c) !== null) stillQueued++;
    q.push(c);
  }
  t.equal(stillQueued, 0, 'a shifted connection is never found again');
  t.equal(q.length, 4, 'still the four connections');
  t.same([q.shift(), q.shift(), q.shift(), q.shift()], conns, 'in their order');
});

t.test('a pipelined pool answers every query, in order', async (t) => {
  const db = await createTestDatabase(t);
  const sql = postgres(db.adminUrl, { max: 4, onnotice: () => {} });
  t.teardown(() => sql.end());
  const answers = await Promise.all(Array.from({ length: 5_000 }, (_, i) => sql<{ n: number }[]>`select ${i}::int as n`));
  t.same(answers.map((r) => r[0]!.n), Array.from({ length: 5_000 }, (_, i) => i));
});
