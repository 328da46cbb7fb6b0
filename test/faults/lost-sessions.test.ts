// Sessions the server ended while they sat idle in the pool, found only when next used (what a
// DBA's pg_terminate_backend or a pooler's reload leaves behind when the process was busy): a
// one-statement read is sent again on a new connection, a transaction found dead at `begin` runs
// again (nothing of it ran), and neither opens the breaker, since the database is reachable.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { sql } from 'kysely';
import { createTestDatabase } from '../helpers/database.ts';
import { connect, runAgainIfLostAtBegin } from '../../src/db/database.ts';

/** Ends every session of the pools from another process while this thread is blocked (no I/O
 * is read meanwhile): the pools still hold the sockets as open. */
function terminateUnnoticed(adminUrl: string) {
  const script = `import postgres from 'postgres';
    const sql = postgres(process.env.URL, { max: 1, onnotice: () => {} });
    await sql\`select pg_terminate_backend(pid) from pg_stat_activity
                where datname = current_database() and application_name like 'svc-api%'\`;
    for (let i = 0; i < 100; i++) {
      const [{ n }] = await sql\`select count(*)::int as n from pg_stat_activity
                                 where datname = current_database() and application_name like 'svc-api%'\`;
      if (n === 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await sql.end();`;
  const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, URL: adminUrl }, encoding: 'utf8' });
  if (out.status !== 0) throw new Error(out.stderr);
}

t.test('a read and a transaction on sessions ended while idle', async (t) => {
  const { adminUrl, runtimeUrl } = await createTestDatabase(t);
  const database = connect(runtimeUrl, 1, { readPoolSize: 1 });
  t.teardown(() => database.close());
  const read = () => database.query<{ one: number }>(sql<{ one: number }>`select 1 as one`.compile(database.db));
  const write = () => database.db.transaction().execute(async (tx) => (await sql<{ two: number }>`select 2 as two`.execute(tx)).rows);
  const point = () => database.query<{ three: number }>(sql<{ three: number }>`select 3 as three`.compile(database.db), { point: true });
  t.same(await read(), [{ one: 1 }]);
  t.same(await point(), [{ three: 3 }]);
  t.same(await write(), [{ two: 2 }]);

  terminateUnnoticed(adminUrl);
  t.same(await read(), [{ one: 1 }], 'the read is answered, sent again on a new session');
  t.same(await point(), [{ three: 3 }], 'so is a point read, on the point connection');
  t.notOk(database.unreachable(), 'the breaker stays closed: the database is reachable');

  terminateUnnoticed(adminUrl);
  const bare = await write().then(() => 'ok', (e) => e);
  t.comment(`without running again: ${bare === 'ok' ? 'the pool noticed first' : `${bare.code} (lostAtBegin: ${bare.lostAtBegin})`}`);
  if (bare !== 'ok') {
    t.ok(bare.lostAtBegin, 'a session found dead at begin is marked, and the rollback did not replace the error');
    t.match(bare.code, /CONNECTION_CLOSED|57P01|ECONNRESET|EPIPE/);
  }
  terminateUnnoticed(adminUrl);
  t.same(await runAgainIfLostAtBegin(write), [{ two: 2 }], 'the transaction runs again on a new session');
  t.notOk(database.unreachable());

  // Database.batch (a command's transaction, written at once) runs again by itself.
  const batch = () => database.batch([sql`select 4 as four`.compile(database.db), sql`select 5 as five`.compile(database.db)]);
  t.same(await batch(), [[{ four: 4 }], [{ five: 5 }]]);
  terminateUnnoticed(adminUrl);
  t.same(await batch(), [[{ four: 4 }], [{ five: 5 }]], 'a batch whose session was found dead at begin runs again on a new session');
  t.notOk(database.unreachable());
});

t.test('a batch whose statement fails: that error, and nothing of the others stays', async (t) => {
  const { adminUrl, runtimeUrl } = await createTestDatabase(t);
  const database = connect(runtimeUrl, 1, { readPoolSize: 1 });
  t.teardown(() => database.close());
  const { default: postgres } = await import('postgres');
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => admin.end());
  await admin`create schema probe`;
  await admin`create table probe.batch_probe (n integer)`;
  await admin`grant usage on schema probe to public`;
  await admin`grant insert, select on probe.batch_probe to public`;
  const failed = await database.batch([
    sql`insert into probe.batch_probe values (1) returning n`.compile(database.db),
    sql`select 1 / (select count(*) - 1 from probe.batch_probe)::integer as boom`.compile(database.db),
    sql`insert into probe.batch_probe values (3) returning n`.compile(database.db),
  ]).then(() => undefined, (e: { code?: string }) => e);
  t.equal(failed?.code, '22012', 'the failing statement\'s own error (division by zero), not the abort of the one after it');
  t.same(await admin`select n from probe.batch_probe`, [], 'the first statement\'s row was rolled back');
  t.same(await database.batch([sql`select 6 as six`.compile(database.db)]), [[{ six: 6 }]], 'the connection serves the next batch');
});
