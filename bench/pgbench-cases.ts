// One organization, client, project and task in a database migrated by a given migrations folder,
// and pgbench scripts of what requests ask of PostgreSQL, for bench/policy-cost.ts and
// bench/sql-profile.ts: pgbench -M prepared (4 clients unless told), as svc_runtime; the CPU of the backends it
// used is read from the postmaster's reaped children (/proc/<postmaster>/stat, fields 14-17).
//
// Cases: `me`, the token check alone (api.begin_request, what GET /v1/me asks of the database);
// `create`, a transaction with the token check and api.task_create (its triggers and outbox row);
// `get`, a transaction with the token check and api.task_get of one task (GET /v1/tasks/{id});
// `list`, a transaction with the token check and the first page of 50 of api.tasks as GET /v1/tasks
// reads it (src/routes/common.ts listStatement, without its cursor), over `tasks` tasks.
import { execFileSync, execSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { migrate, withDatabase } from '../scripts/db.ts';
import { run as admin } from '../src/admin/cli.ts';
import { editDatabaseUrl } from '../src/db/url.ts';

export const server = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const pgbench = '/usr/lib/postgresql/15/bin/pgbench';

export type Case = 'me' | 'create' | 'get' | 'list';

export async function prepare(name: string, dir: string, tasks = 1): Promise<Record<string, string>> {
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
    for (let i = 1; i < tasks; i++) await tx`select api.task_create(${JSON.stringify({ project_id: p, name: `T${i}`, priority: 'medium' })}::text::jsonb, null)`;
    return [p, t];
  });
  if (tasks > 1) {
    const root = postgres(url, { max: 1, onnotice: () => {} });
    await root.unsafe('analyze');
    await root.end();
  }
  await rt.end();
  const files: Record<string, string> = { data };
  const scripts = {
    me: `select outcome from api.begin_request('${org}', '${digest}', null);`,
    create: `begin;\nselect outcome from api.begin_request('${org}', '${digest}', null);\n`
      + `select version from api.task_create('{"project_id":"${project}","name":"T","priority":"medium"}'::jsonb, null);\ncommit;`,
    get: `begin;\nselect outcome from api.begin_request('${org}', '${digest}', null);\nselect version from api.task_get('${task}');\ncommit;`,
    list: `begin;\nselect outcome from api.begin_request('${org}', '${digest}', null);\n`
      + `select coalesce(string_agg(app_private.wire_json(p.doc), ',' order by p.n) filter (where p.n <= 50), '') as data, count(*) > 50 as has_more `
      + `from (select row_number() over () as n, s.* from (select id, doc, (created_at)::text as sort_key from api.tasks order by created_at desc, id desc limit 51) s) p;\ncommit;`,
  };
  for (const [k, text] of Object.entries(scripts)) writeFileSync(files[k] = `${mkdtempSync('/tmp/policy-cost-')}/${k}.sql`, `${text}\n`);
  return files;
}

/** Transactions and the backends' CPU (µs per transaction) of one pgbench run of `seconds`, `clients` at once. */
export function measure(database: string, script: string, data: string, seconds: string, clients = 4): { tx: number; tps: number; cpuUs: number } {
  const postmaster = readFileSync(`${data}/postmaster.pid`, 'utf8').split('\n')[0]!;
  const ticks = () => readFileSync(`/proc/${postmaster}/stat`, 'utf8').split(') ')[1]!.split(' ').slice(11, 15).reduce((s, x) => s + Number(x), 0);
  const before = ticks();
  const u = new URL(server);
  const out = execFileSync(pgbench, ['-h', u.hostname, '-p', u.port || '5432', '-U', 'svc_runtime', '-n', '-M', 'prepared', '-c', String(clients), '-j', String(Math.min(clients, 2)),
    '-T', seconds, '-f', script, database], { encoding: 'utf8', env: { ...process.env, PGPASSWORD: process.env.SVC_RUNTIME_DB_PASSWORD ?? 'svc_runtime' } });
  execSync('sleep 0.5');
  const tx = Number(/actually processed: (\d+)/.exec(out)![1]);
  return { tx, tps: tx / Number(seconds), cpuUs: ((ticks() - before) * 10_000) / tx };
}

