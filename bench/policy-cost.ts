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
// Cases: `me`, the token check alone (api.begin_request, what GET /v1/me asks of the database);
// `create`, a transaction with the token check and api.task_create (its triggers and outbox row);
// `get`, a transaction with the token check and api.task_get of one task (GET /v1/tasks/{id}).
import { execFileSync, execSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { migrate, withDatabase } from '../scripts/db.ts';
import { run as admin } from '../src/admin/cli.ts';
import { editDatabaseUrl } from '../src/db/url.ts';

const server = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const [revision = 'HEAD~1', rounds = '4', seconds = '10'] = process.argv.slice(2);
const pgbench = '/usr/lib/postgresql/15/bin/pgbench';

async function prepare(name: string, dir: string): Promise<Record<string, string>> {
  const root = postgres(server, { max: 1, onnotice: () => {} });
  await root.unsafe(`drop database if exists ${name} with (force)`);
  const [{ dir: data }] = await root`select current_setting('data_directory') as dir` as [{ dir: string }];
  await root.end();
  const url = withDatabase(server, name);
  await migrate(url, dir, { asGiven: dir !== 'db/migrations' });
  const cli = async (...argv: string[]) => {
    const r = await admin(argv, url);
    if (r.code) throw new Error(JSON.stringify(r.err));
    return r.out as Record<string, string>;
  };
  const org = (await cli('org', 'create', '--name', 'Bench', '--plan', 'business', '--timezone', 'UTC', '--currency', 'EUR', '--locale', 'en-GB')).organization_id!;
  const c = await cli('client', 'create', '--org', org, '--name', 'bench', '--license', 'manager', '--roles', 'member,manager,finance,hr');
  const rt = postgres(editDatabaseUrl(url, { username: 'svc_runtime', password: process.env.SVC_RUNTIME_DB_PASSWORD ?? 'svc_runtime' }), { max: 1, onnotice: () => {} });
  const token = randomBytes(24).toString('base64url');
  await rt`select api.access_token_record(${org}, ${c.client_id!}, ${c.client_secret!}, sha256(convert_to(${token}, 'UTF8')), now() + interval '1 day')`;
  const digest = createHash('sha256').update(token).digest('hex');
  const [project, task] = await rt.begin(async (tx) => {
    await tx`select * from api.begin_request(${org}, ${digest}, null)`;
    const p = (await tx`select doc->>'id' as id from api.project_create(${JSON.stringify({ code: 'B', name: 'Bench' })}::text::jsonb, null)`)[0]!.id as string;
    const t = (await tx`select doc->>'id' as id from api.task_create(${JSON.stringify({ project_id: p, name: 'T', priority: 'medium' })}::text::jsonb, null)`)[0]!.id as string;
    return [p, t];
  });
  await rt.end();
  const files: Record<string, string> = { data };
  const scripts = {
    me: `select outcome from api.begin_request('${org}', '${digest}', null);`,
    create: `begin;\nselect outcome from api.begin_request('${org}', '${digest}', null);\n`
      + `select version from api.task_create('{"project_id":"${project}","name":"T","priority":"medium"}'::jsonb, null);\ncommit;`,
    get: `begin;\nselect outcome from api.begin_request('${org}', '${digest}', null);\nselect version from api.task_get('${task}');\ncommit;`,
  };
  for (const [k, text] of Object.entries(scripts)) writeFileSync(files[k] = `${mkdtempSync('/tmp/policy-cost-')}/${k}.sql`, `${text}\n`);
  return files;
}

/** Transactions and the backends' CPU (µs) of one pgbench run. */
function measure(database: string, script: string, data: string): { tps: number; cpuUs: number } {
  const postmaster = readFileSync(`${data}/postmaster.pid`, 'utf8').split('\n')[0]!;
  const ticks = () => readFileSync(`/proc/${postmaster}/stat`, 'utf8').split(') ')[1]!.split(' ').slice(11, 15).reduce((s, x) => s + Number(x), 0);
  const before = ticks();
  const u = new URL(server);
  const out = execFileSync(pgbench, ['-h', u.hostname, '-p', u.port || '5432', '-U', 'svc_runtime', '-n', '-M', 'prepared', '-c', '4', '-j', '2',
    '-T', seconds, '-f', script, database], { encoding: 'utf8', env: { ...process.env, PGPASSWORD: process.env.SVC_RUNTIME_DB_PASSWORD ?? 'svc_runtime' } });
  execSync('sleep 0.5');
  const tx = Number(/actually processed: (\d+)/.exec(out)![1]);
  return { tps: tx / Number(seconds), cpuUs: ((ticks() - before) * 10_000) / tx };
}

const old = mkdtempSync('/tmp/policy-cost-rev-');
execSync(`git archive ${revision} db/migrations | tar -x -C ${old}`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`| case | ${revision}: µs of PostgreSQL CPU | working tree | change (median of ${rounds} rounds) |`);
console.log('|---|---:|---:|---:|');
const cases = (process.env.BENCH_POLICY_CASES ?? 'me,create,get').split(',') as ('me' | 'create' | 'get')[];
for (const kase of cases) {
  const a = await prepare('policy_cost_a', `${old}/db/migrations`);
  const b = await prepare('policy_cost_b', 'db/migrations');
  const before: number[] = [];
  const after: number[] = [];
  for (let r = 0; r < Number(rounds); r++) {
    before.push(measure('policy_cost_a', a[kase]!, a.data!).cpuUs);
    after.push(measure('policy_cost_b', b[kase]!, b.data!).cpuUs);
  }
  const deltas = after.map((x, i) => x - before[i]!);
  console.log(`| ${kase} | ${before.map(Math.round).join(', ')} | ${after.map(Math.round).join(', ')} | ${Math.round(median(deltas))} µs (${Math.round((median(deltas) / median(before)) * 100)} %) |`);
}
const root = postgres(server, { max: 1, onnotice: () => {} });
for (const d of ['policy_cost_a', 'policy_cost_b']) await root.unsafe(`drop database if exists ${d} with (force)`);
await root.end();
