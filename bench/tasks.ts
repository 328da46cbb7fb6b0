// Projects and tasks benchmarks, run by bench/run.ts after its own endpoints, on the same server and database:
// 100 organizations with 1,000 tasks each (the benchmarked client's organization is one of them), then
//  - GET /v1/tasks?limit=50 (first page) and a page ~15 pages deep (following next_cursor);
//  - pgbench replaying the exact transaction the list endpoint issues (captured from the PostgreSQL
//    log), as svc_runtime, with the same concurrency: the ceiling the HTTP layer is compared with;
//  - the same transaction as a superuser (row-level security bypassed, the organization filtered
//    explicitly): the cost of the RLS predicates;
//  - POST /v1/tasks with a fresh Idempotency-Key per request.
// Returns a markdown section that run.ts appends to its output and to bench/results/latest.md.
import autocannon, { type Result } from 'autocannon';
import postgres from 'postgres';
import { spawn } from 'node:child_process';
import { randomUUID, createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, logger, ms, type BenchOptions, type BenchResult, type LoadOptions } from './common.ts';
import { loadConfig } from '../src/config.ts';
import { connect } from '../src/db/database.ts';
import { createAppContext } from '../src/http/context.ts';
import { createServer } from '../src/http/server.ts';

const ORGS = 100;
const TASKS_PER_ORG = 1000;
const DEEP_PAGES = 15;
const PAGE = 50;
const RUNTIME_ROLE = 'svc_runtime';
const RUNTIME_PASSWORD = 'svc_runtime';
const RESULTS = 'bench/results';

export type TaskBenchOptions = BenchOptions;

export type TaskBenchResult = BenchResult;

const log = logger('tasks');



// ---------------------------------------------------------------------------------------------
// Seed

interface Seeded { organizationId: string; projectId: string; secretId: string; seconds: number }

async function seed(url: string, clientId: string): Promise<Seeded> {
  const started = process.hrtime.bigint();
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [client] = await sql<{ organization_id: string; svc_roles: string[] }[]>`
      select organization_id, svc_roles from app.api_clients where id = ${clientId}`;
    if (!client) throw new Error(`no API client ${clientId}`);
    const missing = ['member', 'manager'].filter((r) => !client.svc_roles.includes(r));
    if (missing.length) {
      await cli(url, 'client', 'set-roles', '--client', clientId, '--roles', [...client.svc_roles, ...missing].join(','));
    }
    const [{ count } = { count: 0 }] = await sql<{ count: number }[]>`select count(*)::int as count from app.organizations`;
    if (count < ORGS) {
      // The control-plane function `svc-admin org create` calls, once per organization, in one statement.
      await sql`select control.org_create(format('Task Organization %s', g), 'business', 'Europe/Berlin', 'EUR', 'en-GB',
                                          'https://app.svc.example')
                  from generate_series(${count}::int, ${ORGS - 1}::int) g`;
    }
    const orgs = await sql<{ id: string; currency: string; workflow_id: string }[]>`
      select o.id, o.currency, w.id as workflow_id
        from app.organizations o join app.task_workflows w on w.organization_id = o.id and w.is_default
       order by o.id limit ${ORGS}`;
    if (!orgs.some((o) => o.id === client.organization_id)) throw new Error('the client\'s organization is not among the seeded ones');
    let projectId = '';
    for (const org of orgs) {
      const [project] = await sql<{ id: string }[]>`
        insert into app.projects (organization_id, code, name, currency)
        values (${org.id}, 'BENCH', 'Bench project', ${org.currency}) returning id`;
      // created_at spread over the last 1,000 minutes, so the keyset index (organization_id,
      // created_at, id) orders distinct values rather than one transaction timestamp.
      // The benchmarked organization's tasks pass every trigger (initial status, active project,
      // custom fields); the other organizations' identical rows are loaded with triggers and
      // foreign-key checks off (session_replication_role = replica): about 0.4 ms a row less, which
      // keeps the seed of 100,000 tasks to seconds instead of most of a minute.
      const bulk = org.id !== client.organization_id;
      await sql.begin(async (tx) => {
        if (bulk) await tx`set local session_replication_role = replica`;
        await tx`
        insert into app.tasks (organization_id, project_id, workflow_id, name, status, priority, due_at, created_at, updated_at)
        select ${org.id}, ${project!.id}, ${org.workflow_id}, format('Task %s', g), 'todo',
               (array['low', 'medium', 'high', 'urgent'])[1 + g % 4],
               now() + make_interval(days => g % 90), now() - make_interval(mins => g), now() - make_interval(mins => g)
          from generate_series(1, ${TASKS_PER_ORG}::int) g`;
      });
      if (org.id === client.organization_id) projectId = project!.id;
    }
    await sql`analyze`;
    const [secret] = await sql<{ id: string }[]>`
      select id from app.client_secrets where client_id = ${clientId} and revoked_at is null order by created_at desc limit 1`;
    return { organizationId: client.organization_id, projectId, secretId: secret!.id, seconds: ms(started) / 1000 };
  } finally {
    await sql.end();
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP

async function get(base: string, path: string, token: string): Promise<{ data: unknown[]; next_cursor: string | null }> {
  const res = await fetch(base + path, { headers: { authorization: `Bearer ${token}` } });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${body.slice(0, 500)}`);
  return JSON.parse(body) as { data: unknown[]; next_cursor: string | null };
}

type LoadSpec = Omit<LoadOptions, 'url' | 'connections' | 'duration'> & { path: string };

async function load(o: TaskBenchOptions, { path, ...opts }: LoadSpec, duration: number) {
  return autocannon({ url: o.base + path, connections: o.connections, duration, ...opts } as LoadOptions);
}

async function measure(o: TaskBenchOptions, name: string, opts: LoadSpec) {
  log(`${name}: warm-up ${o.warmup} s, then ${o.duration} s with ${o.connections} connections`);
  await load(o, opts, o.warmup);
  return load(o, opts, o.duration);
}

// ---------------------------------------------------------------------------------------------
// Capturing the endpoint's SQL from the PostgreSQL log

/** The tasks view as the list statement names it (Kysely quotes identifiers: src/routes/common.ts). */
const VIEW = '"api"."tasks"';

export interface LogEntry { pid: string; userDb: string; level: string; text: string }

export function parseLog(text: string): LogEntry[] {
  const entries: LogEntry[] = [];
  // Debian's default log_line_prefix '%m [%p] %q%u@%d ': "2026-11-23 00:46:46.857 UTC [2186] user@db LOG:  ..."
  const head = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \S+ \[(\d+)\] (?:(\S+@\S+) )?([A-Z]+):  (.*)$/;
  for (const line of text.split('\n')) {
    const m = head.exec(line);
    if (m) entries.push({ pid: m[1]!, userDb: m[2] ?? '', level: m[3]!, text: m[4]! });
    else if (entries.length) entries[entries.length - 1]!.text += '\n' + line;
  }
  return entries;
}

/** `$1 = 'a', $2 = NULL` (values quoted as SQL literals, quotes doubled) -> ['\'a\'', 'NULL']. */
function parseParameters(detail: string): Map<number, string> {
  const out = new Map<number, string>();
  const re = /\$(\d+) = ('(?:[^']|'')*'|NULL)/g;
  for (let m = re.exec(detail); m; m = re.exec(detail)) out.set(Number(m[1]), m[2]!);
  return out;
}

const substitute = (statement: string, params: Map<number, string>) =>
  statement.replace(/\$(\d+)\b/g, (all, n: string) => params.get(Number(n)) ?? all);

/** The statements (parameter values substituted) of the first request whose SQL mentions `marker`:
 * its transaction, or its one statement when it ran as one (a read, src/http/operation/statement.ts). */
export function requestFromLog(entries: LogEntry[], userDb: string, marker: string): string[] | undefined {
  const byPid = new Map<string, string[]>();
  const stmt = /^(?:statement|execute [^:]*): ([\s\S]*)$/;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (e.userDb !== userDb || e.level !== 'LOG') continue;
    const m = stmt.exec(e.text);
    if (!m) continue;
    let statement = m[1]!.trim();
    const next = entries[i + 1];
    if (next && next.pid === e.pid && next.level === 'DETAIL' && next.text.startsWith('parameters:')) {
      statement = substitute(statement, parseParameters(next.text));
    }
    const tx = byPid.get(e.pid);
    if (/^begin\b/i.test(statement)) { byPid.set(e.pid, [statement]); continue; }
    if (!tx) {
      if (statement.includes('api.begin_request') && statement.includes(marker)) return [statement];
      continue;
    }
    tx.push(statement);
    if (/^commit\b/i.test(statement)) {
      if (tx.some((s) => s.includes(marker))) return tx;
      byPid.delete(e.pid);
    }
  }
  return undefined;
}

export function logFile(current: string | null, dataDirectory: string): string | undefined {
  if (current) return current.startsWith('/') ? current : join(dataDirectory, current);
  // An embedded server (scripts/embedded-pg.ts, the Citus nodes too) logs through pg_ctl -l.
  if (existsSync(join(dataDirectory, 'server.log'))) return join(dataDirectory, 'server.log');
  try {
    const dir = '/var/log/postgresql';
    const files = readdirSync(dir).filter((f) => f.endsWith('.log'))
      .map((f) => ({ f: join(dir, f), t: statSync(join(dir, f)).mtimeMs })).sort((a, b) => b.t - a.t);
    return files[0]?.f;
  } catch {
    return undefined;
  }
}

export function readFrom(file: string, offset: number): string {
  const fd = openSync(file, 'r');
  try {
    const size = statSync(file).size;
    const buf = Buffer.alloc(Math.max(0, size - offset));
    readSync(fd, buf, 0, buf.length, offset);
    return buf.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** One request through a fresh, in-process instance of the same server code, against the same
 * database, so that its new sessions pick up the database's log_statement setting. (The running
 * server's pooled sessions keep the setting they started with.) */
export async function requestThroughFreshInstance(o: TaskBenchOptions, path: string,
  request: { method?: 'GET' | 'POST'; payload?: string; headers?: Record<string, string>; status?: number } = {}): Promise<number> {
  const config = loadConfig({ ...process.env, DATABASE_URL: o.url, LOG_LEVEL: 'silent', RATE_LIMIT_REQUESTS: '1000000000' });
  const database = connect(config.runtimeDatabaseUrl, 1);
  try {
    const server = await createServer(await createAppContext(config, database));
    await server.initialize();
    try {
      const method = request.method ?? 'GET';
      const res = await server.inject({ method, url: path, payload: request.payload,
        headers: { authorization: `Bearer ${o.token}`, ...(request.headers ?? {}) } });
      if (res.statusCode !== (request.status ?? 200)) throw new Error(`${method} ${path} (capture instance): ${res.statusCode} ${res.payload.slice(0, 500)}`);
      return res.statusCode;
    } finally {
      await server.stop();
    }
  } finally {
    await database.close();
  }
}

interface Captured { statements: string[]; source: 'log' | 'reconstructed'; note: string }

async function captureListTransaction(o: TaskBenchOptions, database: string, path: string, seeded: Seeded): Promise<Captured> {
  const sql = postgres(o.url, { max: 1, onnotice: () => {} });
  let note = '';
  try {
    const [settings] = await sql<{ current: string | null; data_directory: string }[]>`
      select pg_current_logfile() as current, current_setting('data_directory') as data_directory`;
    const file = logFile(settings!.current, settings!.data_directory);
    let readable = false;
    if (file) try { closeSync(openSync(file, 'r')); readable = true; } catch { /* not readable */ }
    if (file && readable) {
      const offset = statSync(file).size;
      try {
        await sql.unsafe(`alter database ${database} set log_statement = 'all'`);
        await requestThroughFreshInstance(o, path);
      } finally {
        await sql.unsafe(`alter database ${database} reset log_statement`);
      }
      await new Promise((r) => setTimeout(r, 300)); // the log is written asynchronously
      const statements = requestFromLog(parseLog(readFrom(file, offset)), `${RUNTIME_ROLE}@${database}`, VIEW);
      if (statements) return { statements, source: 'log', note: `captured from ${file} (log_statement = 'all' on ${database} for one request through a fresh in-process instance of the server)` };
      note = `no complete transaction reading api.tasks found in ${file}; `;
    } else {
      note = `the PostgreSQL log (${file ?? 'unknown'}) is not readable; `;
    }
  } finally {
    await sql.end();
  }
  // Fallback: the statement src/http/operation/statement.ts and src/routes/common.ts issue for
  // GET /v1/tasks?limit=50 (no filters: archived=false, sort created_at desc), values inlined.
  // A context needs a live token: the benchmarked token itself.
  return {
    source: 'reconstructed',
    note: note + 'statement reconstructed from src/http/operation/statement.ts and src/routes/common.ts',
    statements: [
      `with request as materialized (select * from api.begin_request('${seeded.organizationId}', '${createHash('sha256').update(o.token).digest('hex')}', NULL::text[])),
     request_checks as materialized (select true as ready from request where request.outcome = 'ok')
select request.outcome as request_outcome, r.*
  from request left join lateral (select true as found, q.* from (
    select coalesce(string_agg(app_private.wire_json(p.doc), ',' order by p.n) filter (where p.n <= ${PAGE}), '') as data,
           count(*) > ${PAGE} as has_more,
           max(p.sort_key) filter (where p.n = ${PAGE}) as last_key,
           max(p.id) filter (where p.n = ${PAGE}) as last_id
      from (select row_number() over () as n, s.* from (
              select "id" as id, "doc" as doc, ("created_at")::text as sort_key from "api"."tasks"
               where exists (select from request_checks) and "archived_at" is null
               order by "created_at" desc, "id" desc
               limit ${PAGE + 1}) s) p) q) r on true`,
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// pgbench

interface PgbenchResult { tps: number; latencyAvg: number; p50: number; p99: number; statementMs: number[]; failed: number; output: string }

export function pgbenchScript(statements: string[]): string {
  return statements.map((s) => s.replace(/;\s*$/, '') + ';').join('\n') + '\n';
}

export function runPgbench(env: NodeJS.ProcessEnv, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('pgbench', args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { out += c.toString(); });
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, out }));
  });
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

type PgConn = { user: string; password?: string; host: string; port: string; database: string };

async function pgbench(name: string, o: TaskBenchOptions, conn: PgConn, statements: string[],
  run: { warmup: number; duration: number } = o): Promise<PgbenchResult> {
  mkdirSync(RESULTS, { recursive: true });
  const script = join(RESULTS, `pgbench-${name}.sql`);
  writeFileSync(script, pgbenchScript(statements));
  const env: NodeJS.ProcessEnv = { PGHOST: conn.host, PGPORT: conn.port, PGUSER: conn.user, PGDATABASE: conn.database };
  if (conn.password !== undefined) env.PGPASSWORD = conn.password;
  const jobs = String(Math.max(1, Math.min(2, o.connections)));
  const base = ['-n', '-M', 'prepared', '-c', String(o.connections), '-j', jobs, '-f', script];
  log(`pgbench ${name}: ${run.warmup ? `warm-up ${run.warmup} s, then ` : ''}${run.duration} s with ${o.connections} connections`);
  if (run.warmup) await runPgbench(env, [...base, '-T', String(run.warmup)]);
  const logDir = join(RESULTS, `pgbench-${name}-log`);
  rmSync(logDir, { recursive: true, force: true });
  mkdirSync(logDir, { recursive: true });
  const { code, out } = await runPgbench(env, [...base, '-T', String(run.duration), '-r', '--log', `--log-prefix=${join(logDir, 'tx')}`]);
  if (code !== 0) throw new Error(`pgbench ${name} exited ${code}:\n${out}`);
  const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(out)?.[1] ?? NaN);
  const latencyAvg = Number(/latency average = ([\d.]+) ms/.exec(out)?.[1] ?? NaN);
  const failed = Number(/number of failed transactions: (\d+)/.exec(out)?.[1] ?? 0);
  // Per-statement latencies (-r): lines "   0.123  0  select ..." after "statement latencies in milliseconds".
  const statementMs = [...(out.split(/statement latencies in milliseconds[^\n]*\n/)[1] ?? '').matchAll(/^\s+([\d.]+)\s/gm)]
    .map((m) => Number(m[1]));
  // Per-transaction log: "client_id transaction_no time_us script_no time_epoch time_us".
  const latencies: number[] = [];
  for (const f of readdirSync(logDir)) {
    for (const line of readFileSync(join(logDir, f), 'utf8').split('\n')) {
      const us = Number(line.split(' ')[2]);
      if (line && Number.isFinite(us)) latencies.push(us / 1000);
    }
  }
  rmSync(logDir, { recursive: true, force: true });
  latencies.sort((a, b) => a - b);
  return { tps, latencyAvg, p50: percentile(latencies, 50), p99: percentile(latencies, 99), statementMs, failed, output: out };
}

// ---------------------------------------------------------------------------------------------

export async function runTaskBench(o: TaskBenchOptions): Promise<TaskBenchResult> {
  const failed: string[] = [];
  const target = new URL(o.url);
  const database = decodeURIComponent(target.pathname.slice(1));

  log(`seeding ${ORGS} organizations x ${TASKS_PER_ORG} tasks (owner SQL), then ANALYZE`);
  const seeded = await seed(o.url, o.clientId);
  log(`seeded in ${seeded.seconds.toFixed(1)} s`);

  const first = `/v1/tasks?limit=${PAGE}`;
  const page1 = await get(o.base, first, o.token);
  if (page1.data.length !== PAGE) throw new Error(`${first}: expected ${PAGE} tasks, got ${page1.data.length}`);

  log('capturing the list transaction from the PostgreSQL log');
  const captured = await captureListTransaction(o, database, first, seeded);
  log(captured.note);

  const bearer = { authorization: `Bearer ${o.token}` };
  const listFirst = await measure(o, `GET ${first}`, { path: first, headers: bearer });

  const runtimeConn = { user: RUNTIME_ROLE, password: RUNTIME_PASSWORD, host: target.hostname, port: target.port || '5432', database };
  const runtime = await pgbench('list-runtime', o, runtimeConn, captured.statements);
  if (runtime.failed) failed.push('pgbench list-runtime');

  // Follow next_cursor DEEP_PAGES times: the page after that is the deep one.
  let cursor = page1.next_cursor;
  for (let i = 1; i < DEEP_PAGES; i++) {
    if (!cursor) throw new Error(`the list ended after ${i} pages`);
    cursor = (await get(o.base, `${first}&after=${encodeURIComponent(cursor)}`, o.token)).next_cursor;
  }
  if (!cursor) throw new Error(`the list ended after ${DEEP_PAGES} pages`);
  const deepPath = `${first}&after=${encodeURIComponent(cursor)}`;
  const deepPage = await get(o.base, deepPath, o.token);
  if (deepPage.data.length !== PAGE) throw new Error(`deep page: expected ${PAGE} tasks, got ${deepPage.data.length}`);
  const listDeep = await measure(o, `GET page ${DEEP_PAGES + 1}`, { path: deepPath, headers: bearer });

  // RLS bypassed: the same transaction as the owner (a superuser), the organization filtered explicitly.
  // begin_request still runs, so the Role-dependent document is the same one the runtime role builds.
  const ownerConn = { user: decodeURIComponent(target.username) || 'postgres',
    password: target.password ? decodeURIComponent(target.password) : undefined,
    host: target.hostname, port: target.port || '5432', database };
  const orgLiteral = `'${seeded.organizationId.replace(/'/g, "''")}'`;
  // api.tasks runs as its owner svc_api, to whom the policies apply whoever queries it:
  // the same view owned by the superuser is the one that bypasses them.
  const owner = postgres(o.url, { max: 1, onnotice: () => {} });
  try {
    const [v] = await owner<{ def: string }[]>`select pg_get_viewdef('api.tasks'::regclass) as def`;
    await owner.unsafe(`create schema if not exists bench_bypass; create or replace view bench_bypass.tasks as ${v!.def}`);
  } finally {
    await owner.end();
  }
  const bypassStatements = captured.statements.map((s) => (s.includes(VIEW)
    ? s.replace(/from "api"\."tasks"\s+where\b/i, `from bench_bypass.tasks where organization_id = ${orgLiteral} and`) : s));
  if (!bypassStatements.some((s) => s.includes(`organization_id = ${orgLiteral}`))) {
    throw new Error(`could not add the organization filter to the list statement:\n${captured.statements.join('\n')}`);
  }
  // Interleaved: RLS_ROUNDS pairs, the order alternating, so that drift on a shared machine falls on
  // both sides; the overhead is the median of the pairs' ratios (sequential single runs gave −4 % to 21 %).
  const rounds = Number(process.env.BENCH_RLS_ROUNDS ?? 7);
  const roundSeconds = Number(process.env.BENCH_RLS_SECONDS ?? 4);
  const pairs: { runtime: PgbenchResult; bypass: PgbenchResult }[] = [];
  await pgbench('list-superuser', o, ownerConn, bypassStatements, { warmup: o.warmup, duration: 1 });
  for (let i = 0; i < rounds; i++) {
    const run = { warmup: 0, duration: roundSeconds };
    if (i % 2 === 0) {
      const r = await pgbench('list-runtime', o, runtimeConn, captured.statements, run);
      pairs.push({ runtime: r, bypass: await pgbench('list-superuser', o, ownerConn, bypassStatements, run) });
    } else {
      const b = await pgbench('list-superuser', o, ownerConn, bypassStatements, run);
      pairs.push({ bypass: b, runtime: await pgbench('list-runtime', o, runtimeConn, captured.statements, run) });
    }
  }
  const overheads = pairs.map((p) => 100 * (p.bypass.tps / p.runtime.tps - 1)).sort((x, y) => x - y);
  const rlsOverhead = overheads[Math.floor(overheads.length / 2)]!;
  const medianPair = pairs.find((p) => 100 * (p.bypass.tps / p.runtime.tps - 1) === rlsOverhead)!;
  const bypass = medianPair.bypass;
  if (pairs.some((p) => p.bypass.failed || p.runtime.failed)) failed.push('pgbench list-superuser / list-runtime rounds');

  // POST /v1/tasks, a fresh Idempotency-Key per request.
  const postHeaders = { ...bearer, 'content-type': 'application/json' };
  const postBody = JSON.stringify({ project_id: seeded.projectId, name: 'Bench task', priority: 'high' });
  const checkPost = await fetch(o.base + '/v1/tasks', { method: 'POST', headers: { ...postHeaders, 'idempotency-key': randomUUID() }, body: postBody });
  if (checkPost.status !== 201) throw new Error(`POST /v1/tasks: ${checkPost.status} ${await checkPost.text()}`);
  let n = 0;
  const keyPrefix = randomUUID();
  const create = await measure(o, 'POST /v1/tasks', {
    path: '/v1/tasks',
    requests: [{
      method: 'POST', path: '/v1/tasks', headers: postHeaders, body: postBody,
      setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'idempotency-key': `${keyPrefix}-${++n}` } }),
    }],
  });

  const http: [string, Result][] = [
    [`GET ${first} (first page)`, listFirst],
    [`GET ${first}&after=… (page ${DEEP_PAGES + 1})`, listDeep],
    ['POST /v1/tasks (fresh Idempotency-Key each)', create],
  ];
  for (const [name, r] of http) if (r.non2xx || r.errors || r.timeouts) failed.push(name);

  const listIndex = captured.statements.findIndex((s) => s.includes(VIEW));
  const stmt = (r: PgbenchResult) => r.statementMs[listIndex];
  const lines = [
    `### Tasks (issue 3): ${ORGS} organizations x ${TASKS_PER_ORG} tasks, seeded in ${seeded.seconds.toFixed(1)} s`,
    '',
    '| measurement | req/s or tps | p50 ms | p99 ms | non-2xx / failed |',
    '|---|---:|---:|---:|---:|',
    ...http.map(([name, r]) => `| ${name} | ${Math.round(r.requests.mean)} | ${r.latency.p50} | ${r.latency.p99} | ${r.non2xx} |`),
    ...([['pgbench: list transaction as svc_runtime (RLS)', runtime], ['pgbench: same, superuser (RLS bypassed), median pair', bypass]] as const)
      .map(([name, r]) => `| ${name} | ${Math.round(r.tps)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.failed} |`),
    '',
    `- API ÷ pgbench (GET ${first} req/s ÷ svc_runtime tps): **${(listFirst.requests.mean / runtime.tps).toFixed(2)}** (aim: at least 0.6)`,
    `- page ${DEEP_PAGES + 1} ÷ first page req/s: **${(listDeep.requests.mean / listFirst.requests.mean).toFixed(2)}**`,
    `- RLS overhead: transaction **${rlsOverhead.toFixed(1)} %** (aim < 10 %): the median of ${rounds} interleaved pairs of ` +
      `${roundSeconds} s runs (superuser tps ÷ svc_runtime tps − 1; the pairs: ${overheads.map((x) => x.toFixed(1)).join(', ')} %); ` +
      `in the median pair, list statement ${stmt(medianPair.runtime)?.toFixed(3)} ms vs ${stmt(bypass)?.toFixed(3)} ms mean ` +
      `(${(100 * ((stmt(medianPair.runtime) ?? NaN) / (stmt(bypass) ?? NaN) - 1)).toFixed(1)} %)`,
    `- pgbench: -M prepared -c ${o.connections} -j ${Math.max(1, Math.min(2, o.connections))} -T ${o.duration} after a ${o.warmup} s warm-up; ` +
      `statement means (ms, -r): svc_runtime ${runtime.statementMs.map((x) => x.toFixed(3)).join(' / ')}, ` +
      `superuser ${bypass.statementMs.map((x) => x.toFixed(3)).join(' / ')}`,
    `- SQL ${captured.note}; the pgbench scripts are in ${RESULTS}/pgbench-list-runtime.sql and pgbench-list-superuser.sql:`,
    '',
    '```sql',
    pgbenchScript(captured.statements).trimEnd(),
    '```',
  ];
  for (const [name, r] of http) {
    if (r.errors || r.timeouts) lines.push(`${name}: ${r.errors} connection errors, ${r.timeouts} timeouts`);
    if (r.non2xx) lines.push(`${name}: status codes ${JSON.stringify(r.statusCodeStats)}`);
  }
  return { markdown: lines.join('\n') + '\n', failed };
}
