// What a schema change costs PostgreSQL per request: a database migrated by an earlier revision's
// migrations against one migrated by the working tree's, on the PostgreSQL of DATABASE_URL (the
// service, whose postmaster this reads), each seeded with one organization, client and project.
// pgbench -M prepared, 4 clients, as svc_runtime, runs each case on both in alternating rounds
// (fresh databases, so a create's table grows alike on both); the CPU of the backends pgbench used
// is read from the postmaster's reaped children (/proc/<postmaster>/stat, fields 14-17).
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/policy-cost.ts [revision] [rounds] [seconds]
//   (BENCH_POLICY_CASES=create,get: only those cases)
//
// Cases (bench/pgbench-cases.ts): me, create, get.
import { execSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import postgres from 'postgres';
import { measure, prepare, server, type Case } from './pgbench-cases.ts';

const [revision = 'HEAD~1', rounds = '4', seconds = '10'] = process.argv.slice(2);

const old = mkdtempSync('/tmp/policy-cost-rev-');
execSync(`git archive ${revision} db/migrations | tar -x -C ${old}`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`| case | ${revision}: µs of PostgreSQL CPU | working tree | change (median of ${rounds} rounds) |`);
console.log('|---|---:|---:|---:|');
const cases = (process.env.BENCH_POLICY_CASES ?? 'me,create,get').split(',') as Case[];
for (const kase of cases) {
  const a = await prepare('policy_cost_a', `${old}/db/migrations`);
  const b = await prepare('policy_cost_b', 'db/migrations');
  const before: number[] = [];
  const after: number[] = [];
  for (let r = 0; r < Number(rounds); r++) {
    before.push(measure('policy_cost_a', a[kase]!, a.data!, seconds).cpuUs);
    after.push(measure('policy_cost_b', b[kase]!, b.data!, seconds).cpuUs);
  }
  const deltas = after.map((x, i) => x - before[i]!);
  console.log(`| ${kase} | ${before.map(Math.round).join(', ')} | ${after.map(Math.round).join(', ')} | ${Math.round(median(deltas))} µs (${Math.round((median(deltas) / median(before)) * 100)} %) |`);
}
const root = postgres(server, { max: 1, onnotice: () => {} });
for (const d of ['policy_cost_a', 'policy_cost_b']) await root.unsafe(`drop database if exists ${d} with (force)`);
await root.end();
