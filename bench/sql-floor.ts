// Part `sql` of `make bench`: what a list page and a create cost PostgreSQL, next to their floors
// (bench/pgbench-cases.ts: `list` and `create` as the service asks them, `list-floor` and
// `create-floor` the same work on bare tables shaped as the app's). pgbench -M prepared, 4 clients,
// as svc_runtime, on a database of its own with 5,000 tasks; PostgreSQL's CPU per transaction from
// the postmaster's reaped children. ROUNDS rounds, each case then its floor; the ratio is the median
// of the rounds' own ratios (the machine drifts within minutes, and a round's halves drift together).
import postgres from 'postgres';
import { measure, prepare, server, type Case } from './pgbench-cases.ts';
import { logger, type BenchResult } from './common.ts';
import { withDatabase } from '../scripts/db.ts';

const log = logger('sql');
const ROUNDS = Number(process.env.BENCH_SQL_ROUNDS ?? 3);
const SECONDS = process.env.BENCH_SQL_SECONDS ?? '5';
const DATABASE = 'bench_sql_floor';
const PAIRS: { name: string; service: Case; floor: Case }[] = [
  { name: 'GET /v1/tasks?limit=50 (the page of 51 rows, as listStatement reads it)', service: 'list', floor: 'list-floor' },
  { name: 'POST /v1/tasks (under a fresh Idempotency-Key, as command.ts sends it)', service: 'create-keyed', floor: 'create-floor' },
];

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export async function runSqlFloorBench(): Promise<BenchResult> {
  log(`preparing ${DATABASE} (5,000 tasks)`);
  const files = await prepare(DATABASE, 'db/migrations', 5000);
  const rows: string[] = [];
  const failed: string[] = [];
  try {
    for (const pair of PAIRS) {
      // Warm-ups: plans cached, pages read.
      let transactions = measure(DATABASE, files[pair.service]!, files.data!, '2').tx;
      measure(DATABASE, files[pair.floor]!, files.data!, '2');
      const service: number[] = [];
      const floor: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const s = measure(DATABASE, files[pair.service]!, files.data!, SECONDS);
        transactions += s.tx;
        service.push(s.cpuUs);
        floor.push(measure(DATABASE, files[pair.floor]!, files.data!, SECONDS).cpuUs);
        log(`${pair.service}: round ${r + 1}: ${Math.round(service[r]!)} µs against ${Math.round(floor[r]!)} µs`);
      }
      // The create's transactions did create: one task each (the key claimed fresh every time).
      if (pair.service === 'create-keyed') {
        const db = postgres(withDatabase(server, DATABASE), { max: 1, onnotice: () => {} });
        const [{ n }] = await db`select count(*)::int as n from app.tasks` as [{ n: number }];
        await db.end();
        if (n !== 5000 + transactions) failed.push(`sql ${pair.service}: ${n - 5000} tasks made by ${transactions} transactions`);
      }
      const ratios = service.map((s, i) => s / floor[i]!);
      rows.push(`| ${pair.name} | ${Math.round(median(service))} | ${Math.round(median(floor))} | **${median(ratios).toFixed(2)}** `
        + `(${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}) |`);
    }
  } finally {
    const root = postgres(server, { max: 1, onnotice: () => {} });
    await root.unsafe(`drop database if exists ${DATABASE} with (force)`);
    await root.end();
  }
  return {
    failed,
    markdown: [
      `### PostgreSQL's CPU against the floor: pgbench -M prepared, 4 clients, ${ROUNDS} rounds of ${SECONDS} s, median of the rounds' ratios (range)`,
      '',
      '| request | PostgreSQL µs per transaction | floor µs | ÷ floor (aim: 2 or less) |',
      '|---|---:|---:|---:|',
      ...rows,
      '',
    ].join('\n'),
  };
}
