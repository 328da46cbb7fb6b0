// Several hosts (src/db/hosts.ts, both drivers): a host that refuses is skipped for the next; when
// every host fails, the failure is reported instead of a query that waits for good, and the
// breaker counts it as unreachable; a host whose sessions take no writes is turned away for
// read-write with TARGET_SESSION_ATTRS. The standby case itself is test/faults/failover.test.ts.
import t from 'tap';
import postgres from 'postgres';
import pg from 'pg';
import { createTestDatabase } from '../helpers/database.ts';
import { freePort } from '../helpers/processes.ts';
import { editDatabaseUrl, hostsOf } from '../../src/db/url.ts';
import { nodePostgresConfig, postgresFor } from '../../src/db/hosts.ts';
import { isUnreachable } from '../../src/db/faults.ts';

const settle = (p: Promise<unknown>, ms: number) => Promise.race([
  p.then(() => 'answered', (e: { code?: string }) => e.code ?? String(e)),
  new Promise((r) => setTimeout(() => r(`still waiting after ${ms} ms`), ms).unref()),
]);

t.test('several hosts, postgres.js', async (t) => {
  const { adminUrl, name } = await createTestDatabase(t);
  const [db] = hostsOf(adminUrl);
  const live = `${db!.host}:${db!.port}`;
  const dead = `127.0.0.1:${await freePort()}`;
  const pool = (hosts: string, options: postgres.Options<Record<string, never>> = {}) => {
    const sql = postgresFor(editDatabaseUrl(adminUrl, { hosts }) + '?target_session_attrs=read-write',
      { max: 1, onnotice: () => {}, connect_timeout: 2, ...options });
    t.teardown(() => sql.end({ timeout: 1 }));
    return sql;
  };

  t.equal(await settle(pool(`${dead},${live}`)`select 1`, 3000), 'answered', 'a refusing host is skipped for the next one');
  let refused: unknown;
  t.equal(await settle(pool(`${dead},${dead}`)`select 1`.catch((e) => { refused = e; throw e; }), 3000), 'ECONNREFUSED',
    'every host refusing: the failure is reported');
  t.ok(isUnreachable(refused), 'which the breaker counts as unreachable');
  // Sessions that take no writes, as a hot standby's: the database's sessions read-only.
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => admin.end());
  await admin.unsafe(`alter database ${name} set default_transaction_read_only = on`);
  const readOnly = pool(`${live},${live}`);
  let turnedAway: unknown;
  t.equal(await settle(readOnly`select 1`.catch((e) => { turnedAway = e; throw e; }), 3000), 'TARGET_SESSION_ATTRS',
    'every host read-only: turned away for read-write, reported');
  t.ok(isUnreachable(turnedAway), 'which the breaker counts as unreachable');
});

t.test('the worker\'s node-postgres pool takes the first host that takes writes', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const [db] = hostsOf(adminUrl);
  const both = editDatabaseUrl(adminUrl, { hosts: `127.0.0.1:${await freePort()},${db!.host}:${db!.port}` }) + '?target_session_attrs=read-write';
  const pool = new pg.Pool({ ...nodePostgresConfig(both, 2000), max: 2 });
  // An idle client whose session the server ends emits 'error' on the pool, which throws without a
  // listener (node-postgres asks every pool for one): on a loaded cluster a session of this pool
  // can be ended (57P01) after its answer, which would fail the file. The pool also ends here, not at teardown.
  pool.on('error', () => {});
  const { rows } = await pool.query<{ standby: boolean }>('select pg_is_in_recovery() as standby');
  t.same(rows, [{ standby: false }]);
  await pool.end();
});

t.test('database URLs with several hosts are edited without losing any', async (t) => {
  const url = 'postgres://owner:s%40cret@db1:5432,db2:6432,[::1]/svc?target_session_attrs=read-write&sslmode=require';
  t.same(hostsOf(url), [{ host: 'db1', port: 5432 }, { host: 'db2', port: 6432 }, { host: '::1', port: 5432 }]);
  t.equal(editDatabaseUrl(url, { username: 'svc_runtime', password: 'p@ss:w/rd' }),
    'postgres://svc_runtime:p%40ss%3Aw%2Frd@db1:5432,db2:6432,[::1]/svc?target_session_attrs=read-write&sslmode=require');
  t.equal(editDatabaseUrl(url, { database: 'other' }),
    'postgres://owner:s%40cret@db1:5432,db2:6432,[::1]/other?target_session_attrs=read-write&sslmode=require');
  t.equal(editDatabaseUrl('postgres://u@h:1/d', { hosts: 'a:2,b:3' }), 'postgres://u@a:2,b:3/d');
});
