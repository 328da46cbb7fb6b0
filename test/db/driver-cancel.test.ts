// postgres.js: a query cancelled while it waited as the first query of a connection that was still
// starting (our acquire deadline cancels a read that has not been sent) left that connection in
// the pool's `connecting` queue once it had started, handed to nobody, for good (patch 13 in
// patches/postgres+3.4.9.patch). A slow start-up (a failover, a busy server) took a read pool's
// connections one by one, and every read then waited out its deadline.
import t from 'tap';
import postgres from 'postgres';
import { createTestDatabase } from '../helpers/database.ts';
import { proxy } from '../helpers/proxy.ts';

t.test('a connection whose first query was cancelled while it started serves the next one', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  // Every new connection's start-up takes 400 ms.
  const link = await proxy(t, new URL(adminUrl), 400);
  const pool = postgres(link.url, { max: 1, onnotice: () => {} });
  t.teardown(() => pool.end({ timeout: 1 }));
  const first = pool`select 1 as one`;
  const settled = first.then(() => 'answered', (e: { code?: string }) => e.code);
  await new Promise((r) => setTimeout(r, 100));
  await first.cancel();
  t.equal(await settled, '57014', 'the first query is cancelled before its connection started');
  await new Promise((r) => setTimeout(r, 600));
  const next = await Promise.race([pool`select 2 as two`.then((rows) => rows),
    new Promise((r) => setTimeout(() => r('still waiting after 3 s'), 3000).unref())]);
  t.same(next, [{ two: 2 }], 'the next query is served by that connection once it has started');
});
