// The rate limit while its buckets cannot be reached (on Citus they are the coordinator's, and a
// request's own statements run on its organization's worker): the instance counts a key's
// admissions alone against the same limit, from the shared count it last saw, asks the buckets
// again a second later, and adds those admissions to the shared count. The database is reached through a TCP proxy that, once "down", resets its
// connections and leaves new ones unanswered.
import t from 'tap';
import postgres from 'postgres';
import { createTestDatabase } from '../helpers/database.ts';
import { proxy } from '../helpers/proxy.ts';
import { connect } from '../../src/db/database.ts';
import { RateLimiter, STORE_RECHECK_MS } from '../../src/http/rate-limit.ts';

t.test('a key is limited by this instance alone while the buckets are away, and by the buckets again after', async (t) => {
  const { runtimeUrl, adminUrl } = await createTestDatabase(t);
  let down = false;
  const link = await proxy(t, new URL(runtimeUrl), 0, () => down);
  const database = connect(link.url, 2, { connectTimeoutMs: 1000, acquireTimeoutMs: 2000 });
  t.teardown(() => database.close());
  // Windows are aligned to the epoch (every 600 s here): the test, about 2 s long, starts in a
  // window with at least 10 s left, so that its admissions all count in one.
  const left = 600_000 - (Date.now() % 600_000);
  if (left < 10_000) await new Promise((r) => setTimeout(r, left + 100));
  const limiter = new RateLimiter(database.db, 3, 600);
  const key = `client:apic_${Date.now()}`;

  t.match(await limiter.take(key), { allowed: true, remaining: 2 }, 'the first admission leased from the buckets');
  down = true;
  link.reset();
  const alone = [await limiter.take(key), await limiter.take(key), await limiter.take(key)];
  t.same(alone.map((d) => [d.allowed, d.remaining]), [[true, 1], [true, 0], [false, 0]],
    'the buckets away: two more admitted (the limit less the shared count last seen), the next refused');

  down = false;
  await new Promise((r) => setTimeout(r, STORE_RECHECK_MS + 100));
  // The buckets held 1; the next lease adds the 2 admitted alone: the window's limit is reached.
  t.match(await limiter.take(key), { allowed: false, remaining: 0 },
    'the buckets asked again a second later: the admissions made alone counted there, the limit reached');
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end());
  const [bucket] = await sql`select hits from app_private.rate_limit_buckets where key = ${key}`;
  t.equal(bucket!.hits, 3, 'the shared count holds every admission of the window');
});
