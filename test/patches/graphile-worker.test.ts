// The two changes of patches/graphile-worker+0.17.3.patch, on graphile-worker's LocalQueue (the
// batch of jobs a worker pool fetches ahead) over this test's database: its jobs cannot be returned
// because the database has gone away while the pool shuts down. Each test fails with its change
// taken out of node_modules/graphile-worker/dist/localQueue.js (an unhandled rejection: in the
// service, the end of the process) and passes with it.
import t, { type Test } from 'tap';
import { createRequire } from 'node:module';
import pg from 'pg';
import { createTestDatabase } from '../helpers/database.ts';

// graphile-worker's internals (dist/*.js, no exports map): the LocalQueue is what the patch changes.
const require = createRequire(import.meta.url);
const { getUtilsAndReleasersFromOptions } = require('graphile-worker/dist/lib.js');
const { LocalQueue } = require('graphile-worker/dist/localQueue.js');
const { getTaskDetails } = require('graphile-worker/dist/taskIdentifiers.js');
const { Logger } = require('graphile-worker');

type WithPgClient = ((cb: (client: unknown) => Promise<unknown>) => Promise<unknown>) & { withRetries: WithPgClient };
interface Queue { mode: string; backgroundCount: number; release(): Promise<void> }

const silent = new Logger(() => () => {});
const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const drain = async () => {
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 50));
};

async function setup(t: Test) {
  const { adminUrl } = await createTestDatabase(t);
  // The test's own pool: graphile-worker's release() ends a pool it made without waiting and takes
  // its error listeners off, so a connection the database's drop then terminates would throw.
  const pool = new pg.Pool({ connectionString: adminUrl });
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const [utils, release] = await getUtilsAndReleasersFromOptions({
    pgPool: pool, logger: silent,
    preset: { worker: { localQueue: { size: 5, ttl: 600_000 }, pollInterval: 600_000 } },
  });
  t.teardown(async () => {
    await release();
    await pool.end();
  });
  // Unhandled rejections while the test runs (Node's default ends the process on the first one).
  const unhandled: unknown[] = [];
  const h = (e: unknown) => { unhandled.push(e); };
  process.on('unhandledRejection', h);
  t.teardown(() => { process.off('unhandledRejection', h); });

  /** A connection to the database that can be made to refuse (`down`) or wait (`hold`). */
  const link = { down: false, held: null as Promise<void> | null };
  const through = (real: WithPgClient) => async (cb: (client: unknown) => Promise<unknown>) => {
    if (link.down) throw refused();
    if (link.held) await link.held;
    return real(cb);
  };
  const withPgClient = Object.assign(through(utils.withPgClient), { withRetries: through(utils.withPgClient.withRetries) });
  const tasks = { hold: async () => {} };
  // The task ids, looked up once: a fetch is then one call to the database, the jobs' query.
  await getTaskDetails(utils, withPgClient, tasks);
  const queue = (id: string): Queue => new LocalQueue(utils, tasks, withPgClient, { id }, 5, true, () => {});
  const until = async (what: () => boolean) => {
    for (let i = 0; i < 500 && !what(); i++) await new Promise((r) => setTimeout(r, 10));
    return what();
  };
  return { utils, link, queue, until, unhandled };
}

t.test('change 1: the jobs a released queue could not take back fail without an unhandled rejection', async (t) => {
  const { utils, link, queue, until, unhandled } = await setup(t);
  for (let i = 0; i < 3; i++) await utils.addJob('hold', { i });
  const q = queue('patch-1');
  // The queue fetched the three jobs and holds them for workers that have not asked yet.
  t.ok(await until(() => q.mode === 'WAITING' && q.backgroundCount === 0), `the queue waits with its jobs (${q.mode})`);
  link.down = true;
  // Released in WAITING with nothing in the background, it hands the return of its jobs to
  // background(), which refuses it (unchanged: release() throws): the return still runs, and fails.
  t.throws(() => q.release(), /Cannot background something when the queue is already released/);
  await drain();
  t.same(unhandled.map(String), [], 'no unhandled rejection (before: "Error occurred whilst returning jobs from local queue to database queue")');
});

t.test('change 2: a release nobody awaits fails without an unhandled rejection; one awaited still fails', async (t) => {
  const { utils, link, queue, until, unhandled } = await setup(t);
  for (let i = 0; i < 3; i++) await utils.addJob('hold', { i });
  let open!: () => void;
  link.held = new Promise<void>((r) => { open = r; });
  const q = queue('patch-2');
  t.ok(await until(() => q.backgroundCount === 1), 'the queue\'s first fetch is under way');
  // Released while it fetches: the caller (as when release() threw) does not await the outcome.
  void q.release();
  t.equal(q.mode, 'RELEASED');
  // The fetch (past the link already) brings three jobs; the database then goes away, and they
  // cannot be returned.
  link.down = true;
  link.held = null;
  open();
  await drain();
  t.same(unhandled.map(String), [], 'no unhandled rejection (before: "Error occurred whilst returning jobs …" from fin())');
  t.equal(q.backgroundCount, 0, 'the queue is finished');
  const seen = await q.release().then(() => 'resolved', (e: Error) => e.message);
  t.match(seen, /^Error occurred whilst returning jobs from local queue to database queue: connect ECONNREFUSED/,
    'a caller that awaits release() still sees the failure');
});
