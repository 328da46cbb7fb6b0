// A PIPELINED statement (the Idempotency-Key's completion) is sent without waiting for its answer
// and shares a round trip with COMMIT: its failure must still fail the transaction, with its own
// error, and a COMMIT that PostgreSQL answers with ROLLBACK must never pass for a write.
import t from 'tap';
import { sql } from 'kysely';
import postgres from 'postgres';
import { createTestDatabase } from '../helpers/database.ts';
import { connect, pipelined } from '../../src/db/database.ts';

t.test('pipelined statements and COMMIT', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const database = connect(adminUrl, 1, { readPoolSize: 1 });
  const other = postgres(adminUrl, { max: 1, onnotice: () => {} });
  t.teardown(async () => { await database.close(); await other.end(); });
  await database.sql`create table pipelined_probe (n int primary key)`;
  const count = async () => (await other<{ n: number }[]>`select count(*)::int as n from pipelined_probe`)[0]!.n;

  t.test('sent without waiting, committed with COMMIT', async (t) => {
    // Another session holds the lock the statement waits for: awaiting it here returns anyway,
    // so it did not wait for the answer; COMMIT then waits for both.
    await other`select pg_advisory_lock(4242)`;
    let sentBack = false;
    const done = database.db.transaction().execute(async (tx) => {
      await sql`insert into pipelined_probe values (1)`.execute(tx);
      await pipelined(sql`select pg_advisory_xact_lock(4242)`).execute(tx);
      sentBack = true;
    });
    while (!sentBack) await new Promise((r) => setTimeout(r, 5));
    t.equal(await count(), 0, 'not committed while the pipelined statement waits');
    await other`select pg_advisory_unlock(4242)`;
    await done;
    t.equal(await count(), 1, 'committed once it was answered');
  });

  t.test('a pipelined failure fails the commit with its own error', async (t) => {
    const e = await database.db.transaction().execute(async (tx) => {
      await sql`insert into pipelined_probe values (2)`.execute(tx);
      await pipelined(sql`select 1 / 0`).execute(tx);
    }).then(() => undefined, (e) => e);
    t.equal(e?.code, '22012', 'division_by_zero, not a generic commit failure');
    t.equal(await count(), 1, 'the insert before it was rolled back');
  });

  t.test('a COMMIT answered with ROLLBACK is an error', async (t) => {
    const e = await database.db.transaction().execute(async (tx) => {
      await sql`insert into pipelined_probe values (3)`.execute(tx);
      // A failure caught and not rethrown leaves the transaction aborted.
      await sql`select 1 / 0`.execute(tx).catch(() => {});
    }).then(() => undefined, (e) => e);
    t.equal(e?.code, 'TRANSACTION_ROLLED_BACK');
    t.equal(await count(), 1, 'nothing was written');
  });

  t.test('an error after a failed pipelined statement stays the one reported', async (t) => {
    const e = await database.db.transaction().execute(async (tx) => {
      await pipelined(sql`select 1 / 0`).execute(tx);
      throw Object.assign(new Error('the caller failed'), { code: 'CALLER' });
    }).then(() => undefined, (e) => e);
    t.equal(e?.code, 'CALLER', 'the rollback does not replace it with the pipelined failure');
    t.equal(await count(), 1, 'nothing was written');
  });

  t.test('the connection serves the next transaction', async (t) => {
    await database.db.transaction().execute(async (tx) => {
      await sql`insert into pipelined_probe values (4)`.execute(tx);
      await pipelined(sql`insert into pipelined_probe values (5)`).execute(tx);
    });
    t.equal(await count(), 3);
  });
});
