// One organization, client, project and task in a database migrated by a given migrations folder,
// and pgbench scripts of what requests ask of PostgreSQL, for bench/policy-cost.ts and
// bench/sql-profile.ts: pgbench -M prepared (4 clients unless told), as svc_runtime; the CPU of the backends it
// used is read from the postmaster's reaped children (/proc/<postmaster>/stat, fields 14-17).
//
// Cases: `me`, the token check alone (api.begin_request, what GET /v1/me asks of the database);
// `create`, a transaction with the token check and api.task_create (its triggers and outbox row);
// `create-keyed`, the same as POST /v1/tasks sends it, under a fresh Idempotency-Key;
// `get`, a transaction with the token check and api.task_get of one task (GET /v1/tasks/{id});
// `list`, a transaction with the token check and the first page of 50 of api.tasks as GET /v1/tasks
// reads it (src/routes/common.ts listStatement, without its cursor), over `tasks` tasks;
// `list-floor` and `create-floor`, what the list and the create cost PostgreSQL at the least
// (floorScripts; its parts, floorTables and the *FloorScript functions, give the ratio part's
// SQL floors of the other lists, gets and creates).
import { execFileSync, execSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { migrate, withDatabase } from '../scripts/db.ts';
import { run as admin } from '../src/admin/cli.ts';
import { editDatabaseUrl } from '../src/db/url.ts';

export const server = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const pgbench = '/usr/lib/postgresql/15/bin/pgbench';

export type Case = 'me' | 'create' | 'create-keyed' | 'get' | 'list' | 'list-floor' | 'create-floor';

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
    // A row of app.idempotency_keys for the create's floor to copy.
    await tx`select state from api.idempotency_claim('POST', '/v1/tasks', 'floor-sample', ${'0'.repeat(64)})`;
    await tx`select api.idempotency_complete('POST', '/v1/tasks', 'floor-sample', ${'0'.repeat(64)}, 201, '{}'::jsonb, '{}')`;
    for (let i = 1; i < tasks; i++) await tx`select api.task_create(${JSON.stringify({ project_id: p, name: `T${i}`, priority: 'medium' })}::text::jsonb, null)`;
    return [p, t];
  });
  if (tasks > 1) {
    const root = postgres(url, { max: 1, onnotice: () => {} });
    await root.unsafe('analyze');
    await root.end();
  }
  await rt.end();
  const floors = await floorScripts(url, org, task);
  const files: Record<string, string> = { data };
  const scripts = {
    me: `select outcome from api.begin_request('${org}', '${digest}', null);`,
    create: `begin;\nselect outcome from api.begin_request('${org}', '${digest}', null);\n`
      + `select version from api.task_create('{"project_id":"${project}","name":"T","priority":"medium"}'::jsonb, null);\ncommit;`,
    // As POST /v1/tasks sends it (src/http/operation/command.ts): the key claimed with begin_request,
    // the command with its response stored under the key, the wake-up read; a fresh key each time.
    'create-keyed': `\\set k random(1, 1000000000000000)\nbegin;\n`
      + `with request as materialized (select * from api.begin_request('${org}', '${digest}', null, true)), `
      + `claim as materialized (select c.* from api.idempotency_claim('POST', '/v1/tasks', 'k-' || :k, '${'0'.repeat(64)}') c `
      + `where exists (select from request where request.outcome = 'ok')) select request.outcome, claim.state from request left join claim on true;\n`
      + `with c as materialized (select c.doc, c.version from api.task_create('{"project_id":"${project}","name":"T","priority":"medium"}'::jsonb, null) c `
      + `where current_setting('svc.claimed', true) = 'yes'), r as materialized (select app_private.wire_json(c.doc) as body, `
      + `jsonb_strip_nulls(jsonb_build_object('Location', '/v1/tasks/' || (c.doc ->> 'id'), 'ETag', '"' || c.version || '"')) as headers from c) `
      + `select r.body, api.idempotency_complete('POST', '/v1/tasks', 'k-' || :k, '${'0'.repeat(64)}', 201, r.headers, r.body) from r;\n`
      + `select current_setting('svc.fanout_wake', true) = 'due' as due, nullif(current_setting('svc.run_wake', true), '') as runs;\ncommit;`,
    get: `begin;\nselect outcome from api.begin_request('${org}', '${digest}', null);\nselect version from api.task_get('${task}');\ncommit;`,
    list: `begin;\nselect outcome from api.begin_request('${org}', '${digest}', null);\n`
      + `select coalesce(string_agg(app_private.wire_json(p.doc), ',' order by p.n) filter (where p.n <= 50), '') as data, count(*) > 50 as has_more `
      + `from (select row_number() over () as n, s.* from (select id, doc, (created_at)::text as sort_key from api.tasks order by created_at desc, id desc limit 51) s) p;\ncommit;`,
    ...floors,
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


/** The floors of a list and a create: the same work on tables shaped as the app's, with nothing of the
 * service's own (no request context, policy, view, function or trigger). Tables `bench_floor.tasks`,
 * `.events` and `.idempotency_keys` are made `like` app's (columns, defaults, checks, indexes) with
 * app's foreign keys, and filled with the organization's tasks. `list-floor`: the first 51 tasks by
 * creation, each built into a JSON object of its columns (jsonb_build_object), aggregated into one
 * text, as the list's page is. `create-floor`: one transaction inserting an idempotency record, a
 * task and an event, each a copy of a row the service wrote with its keys made new (`:k`), then a
 * NOTIFY. */
async function floorScripts(url: string, org: string, task: string): Promise<Record<'list-floor' | 'create-floor', string>> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe('drop schema if exists bench_floor cascade');
    await floorTables(sql, org, { tasks: true, events: false, idempotency_keys: false });
    return {
      'list-floor': await listFloorScript(sql, 'tasks', org, { order: 'created_at desc, id desc' }),
      'create-floor': await createFloorScript(sql, 'tasks', org, `id = '${task}'`),
    };
  } finally {
    await sql.end();
  }
}

/** `bench_floor.<table>` for each table named, made `like` app's (columns, defaults, checks, indexes)
 * with app's foreign keys, holding the organization's rows where the table maps to true (else
 * empty), readable and writable by svc_runtime, analyzed. Tables that exist already are kept. */
export async function floorTables(sql: postgres.Sql, org: string, tables: Record<string, boolean>): Promise<void> {
  await sql.unsafe('create schema if not exists bench_floor; grant usage on schema bench_floor to svc_runtime');
  for (const [table, rows] of Object.entries(tables)) {
    if ((await sql`select to_regclass(${`bench_floor.${table}`}) as t`)[0]!.t) continue;
    await sql.unsafe(`create table bench_floor.${table} (like app.${table} including defaults including constraints including indexes including generated)`);
    for (const { def } of await sql<{ def: string }[]>`
      select pg_get_constraintdef(oid) as def from pg_constraint where conrelid = ${`app.${table}`}::regclass and contype = 'f'`) {
      await sql.unsafe(`alter table bench_floor.${table} add ${def}`);
    }
    if (rows) await sql.unsafe(`insert into bench_floor.${table} select * from app.${table} where organization_id = '${org}'`);
    await sql.unsafe(`grant select, insert on bench_floor.${table} to svc_runtime; analyze bench_floor.${table}`);
  }
}

async function floorColumns(sql: postgres.Sql, table: string) {
  return sql<{ name: string; type: string; keyed: boolean }[]>`
    select a.attname as name, format_type(a.atttypid, a.atttypmod) as type,
           exists (select from pg_index i where i.indrelid = a.attrelid and i.indisunique and a.attnum = any(i.indkey))
             and not exists (select from pg_constraint f where f.conrelid = a.attrelid and f.contype = 'f' and a.attnum = any(f.conkey)) as keyed
      from pg_attribute a where a.attrelid = ${`bench_floor.${table}`}::regclass and a.attnum > 0 and not a.attisdropped
     order by a.attnum`;
}

/** A JSON object of a row's columns but the organization, as text (jsonb_build_object takes at most
 * 50 pairs: a wider row is built in parts joined with ||). */
async function documentOf(sql: postgres.Sql, table: string, alias: string): Promise<string> {
  const pairs = (await floorColumns(sql, table)).filter((c) => c.name !== 'organization_id').map((c) => `'${c.name}', ${alias}.${c.name}`);
  const parts: string[] = [];
  for (let i = 0; i < pairs.length; i += 50) parts.push(`jsonb_build_object(${pairs.slice(i, i + 50).join(', ')})`);
  return parts.join(' || ');
}

/** A list page's floor over bench_floor.`table`: the organization's first `limit` + 1 rows in
 * `order` (where `where`), each built into a JSON object of its columns, the first `limit`
 * aggregated into one text, as listStatement's page is. */
export async function listFloorScript(sql: postgres.Sql, table: string, org: string, { where = 'true', order, limit = 50 }: { where?: string; order: string; limit?: number }): Promise<string> {
  return `select coalesce(string_agg(p.doc::text, ',' order by p.n) filter (where p.n <= ${limit}), '') as data, count(*) > ${limit} as has_more `
    + `from (select row_number() over () as n, ${await documentOf(sql, table, 't')} as doc `
    + `from (select * from bench_floor.${table} where organization_id = '${org}' and (${where}) order by ${order} limit ${limit + 1}) t) p;`;
}

/** One resource's floor: its row of bench_floor.`table` built into a JSON object, as text. */
export async function rowFloorScript(sql: postgres.Sql, table: string, org: string, id: string): Promise<string> {
  return `select ${await documentOf(sql, table, 't')}::text as doc from bench_floor.${table} t where t.organization_id = '${org}' and t.id = '${id.replace(/'/g, "''")}';`;
}

/** A create's floor: one transaction inserting an idempotency record, a row of `table` and an event
 * into the bench_floor copies (floorTables: idempotency_keys, `table`, events), each a copy of a row
 * the service wrote (`table`'s where `where`) with its text keys that no foreign key names made new
 * by pgbench's :k, then a NOTIFY. */
export async function createFloorScript(sql: postgres.Sql, table: string, org: string, where: string): Promise<string> {
  /** An insert of a copy of `where`'s row of app.`t`: its text key columns that no foreign key names made new by :k. */
  const copy = async (t: string, where: string) => {
    const cols = await floorColumns(sql, t);
    const [row] = await sql.unsafe<Record<string, string | null>[]>(
      `select ${cols.map((c) => `quote_nullable(${c.name}::text) as ${c.name}`).join(', ')} from app.${t} where ${where} limit 1`);
    if (!row) throw new Error(`no row of app.${t} to copy`);
    const values = cols.map((c) => (c.keyed && c.name !== 'organization_id' && row[c.name] !== 'NULL' && c.type === 'text'
      ? `${row[c.name]} || :k` : `${row[c.name]}::${c.type}`));
    return `insert into bench_floor.${t} (${cols.map((c) => c.name).join(', ')}) values (${values.join(', ')});`;
  };
  return `\\set k random(1, 1000000000000000)\nbegin;\n${await copy('idempotency_keys', `organization_id = '${org}'`)}\n`
    + `${await copy(table, `organization_id = '${org}' and ${where}`)}\n`
    + `${await copy('events', `organization_id = '${org}'`)}\nselect pg_notify('bench_floor', '');\ncommit;`;
}
