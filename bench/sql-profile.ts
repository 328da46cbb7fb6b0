// Where PostgreSQL's time goes in what a request asks of it, function by function: each case of
// bench/pgbench-cases.ts (me, get, list, create-keyed: POST /v1/tasks as the API sends it) run by
// pgbench, one client, on a database of the working tree's migrations with track_functions = all,
// then pg_stat_user_functions read per transaction. A function's self time excludes the functions it
// calls, and is time, not CPU: with one client on an idle machine the two are close. The rest of a transaction (the statements pgbench
// sends themselves, planning, COMMIT) is the backend's CPU less the functions' self time.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/sql-profile.ts [seconds] [tasks]
//   (BENCH_PROFILE_CASES=list,create-keyed: only those cases; a superuser's URL: it sets track_functions)
import postgres from 'postgres';
import { measure, prepare, server, type Case } from './pgbench-cases.ts';
import { withDatabase } from '../scripts/db.ts';

const [seconds = '10', tasks = '5000'] = process.argv.slice(2);
const database = 'sql_profile';
const cases = (process.env.BENCH_PROFILE_CASES ?? 'me,get,list,create-keyed').split(',') as Case[];
const files = await prepare(database, 'db/migrations', Number(tasks));
const root = postgres(server, { max: 1, onnotice: () => {} });
await root.unsafe(`alter database ${database} set track_functions = 'all'`);
const db = postgres(withDatabase(server, database), { max: 1, onnotice: () => {} });
for (const kase of cases) {
  // A warm-up run (plans cached, pages read), then the measured one from reset statistics.
  measure(database, files[kase]!, files.data!, '2', 1);
  await db`select pg_stat_reset()`;
  const { tx, tps, cpuUs } = measure(database, files[kase]!, files.data!, seconds, 1);
  // The backends that ran the case have ended: their statistics are flushed.
  await db`select pg_stat_clear_snapshot()`;
  const rows = await db<{ fn: string; calls: number; total: number; self: number }[]>`
    select format('%s.%s', schemaname, funcname) as fn, calls::float8 / ${tx} as calls,
           total_time * 1000 / ${tx} as total, self_time * 1000 / ${tx} as self
      from pg_stat_user_functions where calls > 0 order by self_time desc`;
  const top = rows.filter((r) => r.calls >= 0.99 || r.self >= 5);
  const inFunctions = rows.reduce((s, r) => s + r.self, 0);
  console.log(`\n### ${kase}: ${Math.round(tps)} transactions/s, ${Math.round(cpuUs)} µs of PostgreSQL CPU per transaction, ${Math.round(inFunctions)} µs of it in functions\n`);
  console.log('| function | calls per transaction | self µs | total µs |');
  console.log('|---|---:|---:|---:|');
  for (const r of top) console.log(`| \`${r.fn}\` | ${r.calls.toFixed(2)} | ${r.self.toFixed(0)} | ${r.total.toFixed(0)} |`);
  console.log(`| the statements themselves, planning and COMMIT (CPU less the functions' self time) | | ${Math.round(cpuUs - inFunctions)} | |`);
}
await db.end();
await root.unsafe(`drop database if exists ${database} with (force)`);
await root.end();
