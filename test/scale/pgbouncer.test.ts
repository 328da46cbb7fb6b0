// Behind PgBouncer in transaction pooling mode: the server's connections go through a
// real PgBouncer (Debian's package) with fewer server connections than clients, named prepared
// statements off (SVC_DB_PREPARE=off; PgBouncer 1.18 cannot keep them across transactions). The
// request context is transaction-scoped, so connections shared between clients leak nothing.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startApp } from '../helpers/app.ts';
import { PGBOUNCER_BIN, startPgBouncer } from '../../scripts/pgbouncer.ts';
import { connect, type PoolRebuilt } from '../../src/db/database.ts';

t.test('the API behind PgBouncer in transaction pooling mode', { skip: PGBOUNCER_BIN ? false : 'pgbouncer not installed (Debian package pgbouncer)' }, async (t) => {
  const server = new URL(process.env.SVC_TEST_SERVER_URL!);
  const runtimePassword = process.env.SVC_RUNTIME_DB_PASSWORD ?? 'svc_runtime';
  // Two server connections for a pool of five client connections: every connection is shared.
  const pooler = await startPgBouncer(server.toString(), { svc_runtime: runtimePassword }, 2);
  t.teardown(pooler.stop);
  const { port } = pooler;
  const password = encodeURIComponent(runtimePassword);
  // startApp clones its own database; its runtime connection goes to that database through PgBouncer.
  const a = await startApp(t, { SVC_DB_PREPARE: 'off' }, undefined,
    { runtimeUrlFor: (db) => `postgres://svc_runtime:${password}@127.0.0.1:${port}/${db}` });
  t.match(a.config.runtimeDatabaseUrl, `:${port}/`, 'the runtime connection goes through PgBouncer');

  const [one, two] = [await a.principal('manager'), await a.principal('manager')];
  const post = (p: { token: string }, url: string, payload: unknown, key = randomUUID()) =>
    a.request({ method: 'POST', url, token: p.token, payload, headers: { 'idempotency-key': key } });

  t.test('a burst of statements not seen before, all at once', async (t) => {
    // On a Citus coordinator each new statement text is described first. A transaction's
    // description read on another connection waited for one of PgBouncer's two server
    // connections, which the transactions waiting for their descriptions held: every request
    // answered 503 after the statement timeout. It is read in the transaction.
    const lists = ['members', 'projects', 'tasks', 'time-entries', 'tickets', 'invoices', 'files', 'reports', 'approvals',
      'integration-connections', 'agents', 'runs', 'conversations', 'schemas', 'webhook-endpoints'];
    const three = await a.principal('manager');
    const answered = await Promise.all([
      ...lists.map((l) => a.request({ url: `/v1/${l}?limit=3`, token: three.token })),
      a.request({ url: '/v1/organization', token: three.token }),
      post(three, '/v1/projects', { code: 'BURST', name: 'Burst' }),
    ]);
    const failed = answered.filter((r) => r.statusCode >= 500);
    t.same(failed.map((r) => r.body), [], `${answered.length} requests, none failed`);
    t.equal(answered.at(-1)!.statusCode, 201, 'the create among them');
  });

  t.test('writes, replays, ETags and cursors', async (t) => {
    const key = randomUUID();
    const created = await post(one, '/v1/projects', { code: 'PGB', name: 'Pooled' }, key);
    t.equal(created.statusCode, 201, created.body);
    const replay = await post(one, '/v1/projects', { code: 'PGB', name: 'Pooled' }, key);
    t.equal(replay.headers['idempotent-replayed'], 'true', 'Idempotency-Key replay');
    const id = created.json.id;
    const got = await a.request({ url: `/v1/projects/${id}`, token: one.token });
    t.equal(got.headers.etag, '"1"');
    const patched = await a.request({ method: 'PATCH', url: `/v1/projects/${id}`, token: one.token, payload: { name: 'Pooled 2' },
      headers: { 'if-match': '"1"' } });
    t.equal(patched.statusCode, 200);
    const stale = await a.request({ method: 'PATCH', url: `/v1/projects/${id}`, token: one.token, payload: { name: 'x' },
      headers: { 'if-match': '"1"' } });
    t.equal(stale.statusCode, 412);
    const task = await post(one, '/v1/tasks', { project_id: id, name: 'Pooled task' });
    t.equal(task.statusCode, 201);
    const moved = await post(one, `/v1/tasks/${task.json.id}/transitions`, { transition: 'start' });
    t.equal(moved.json.status, 'in_progress');
    for (let i = 0; i < 5; i++) t.equal((await post(one, '/v1/projects', { code: `PGB${i}`, name: `P${i}` })).statusCode, 201);
    const first = await a.request({ url: '/v1/projects?limit=4', token: one.token });
    const second = await a.request({ url: `/v1/projects?limit=4&after=${first.json.next_cursor}`, token: one.token });
    t.equal(first.json.data.length + second.json.data.length, 6, 'two pages of six projects');
  });

  t.test('the pool watchdog cannot see sessions behind the pooler, so it rebuilds nothing', async (t) => {
    // PgBouncer hands out its own cancel keys: the driver's pids are not PostgreSQL's.
    const database = connect(a.config.runtimeDatabaseUrl, 2, { prepare: false, acquireTimeoutMs: 300, connectTimeoutMs: 1000, readPoolSize: 1 });
    t.teardown(() => database.close());
    const rebuilt: PoolRebuilt[] = [];
    database.onPoolRebuilt((e) => rebuilt.push(e));
    await database.query({ sql: 'select 1', parameters: [] });
    const slept = await database.query<{ slept: boolean }>({ sql: 'select pg_sleep(1.5) is null as slept', parameters: [] });
    t.same(slept, [{ slept: false }], 'a read three times longer than the deadline');
    t.same(rebuilt, [], 'nothing rebuilt');
  });

  t.test('connections shared between organizations leak no context', async (t) => {
    await post(two, '/v1/projects', { code: 'TWO', name: 'Org two' });
    const reads = await Promise.all(Array.from({ length: 40 }, (_, i) => a.request({ url: '/v1/projects?limit=200', token: (i % 2 ? two : one).token })
      .then((r) => ({ who: i % 2 ? 'two' : 'one', codes: r.json.data.map((p: { code: string }) => p.code) as string[] }))));
    t.ok(reads.filter((r) => r.who === 'one').every((r) => r.codes.length === 6 && !r.codes.includes('TWO')), 'org one sees its six projects only');
    t.ok(reads.filter((r) => r.who === 'two').every((r) => r.codes.length === 1 && r.codes[0] === 'TWO'), 'org two sees its one project only');
  });
});
