// A worker process that starts while the database goes away (as in a restart): node-postgres
// reports a connection closed under it with no code, only "Connection terminated unexpectedly",
// which counts as a connection failure, so the first job runner's failed start is retried like
// any later one rather than ending the process.
import t from 'tap';
import postgres from 'postgres';
import { createTestDatabase } from '../helpers/database.ts';
import { spawnWorker } from '../helpers/processes.ts';
import { proxy } from '../helpers/proxy.ts';
import { isConnectionFailure } from '../../src/db/faults.ts';

t.test('node-postgres\'s codeless connection errors are connection failures', async (t) => {
  for (const m of ['Connection terminated unexpectedly', 'Connection terminated', 'Connection terminated due to connection timeout',
    'Client has encountered a connection error and is not queryable']) t.ok(isConnectionFailure(new Error(m)), m);
  t.notOk(isConnectionFailure(new Error('Connection terminated unexpectedly, or so it says')));
  t.notOk(isConnectionFailure(Object.assign(new Error('Connection terminated'), { code: '42501' })), 'a code decides when there is one');
});

t.test('a worker whose connections are closed while it starts keeps trying, then runs jobs', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  let open = false;
  // Until `open`, connections are accepted and never answered; then they are closed cleanly.
  const link = await proxy(t, new URL(adminUrl), 0, () => !open);
  const worker = spawnWorker(t, { DATABASE_URL: link.url, LOG_LEVEL: 'warn', SVC_DB_CONNECT_TIMEOUT_MS: '10000' });
  await new Promise((r) => setTimeout(r, 2500));
  open = true;
  link.close();
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end());
  const [job] = await sql`select (graphile_worker.add_job('token_purge')).id`;
  let left = 1;
  for (const until = Date.now() + 30_000; left && Date.now() < until && worker.child.exitCode === null; await new Promise((r) => setTimeout(r, 200))) {
    [{ left }] = await sql`select count(*)::int as left from graphile_worker.jobs where id = ${job!.id}` as any;
  }
  if (worker.child.exitCode !== null) t.comment(worker.stderr().slice(0, 2000));
  t.equal(worker.child.exitCode, null, 'the worker process is alive');
  t.equal(left, 0, 'and ran a job once the database answered');
});
