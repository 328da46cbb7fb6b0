// `make bench`: HTTP throughput and latency of the real server (a child process, so the load
// generator has its own event loop) against a seeded database `svc_bench`: 21 business
// organizations with 1,000 members each, one Manager-level API Client.
//
// Env: DATABASE_URL (a server to use; else an embedded PostgreSQL under .data/pg-bench),
// BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (default 20), BENCH_PORT (default 3999),
// BENCH_SERVER_NODE_ARGS (node flags for the server, before its script: e.g. "--cpu-prof --cpu-prof-dir=bench/results/prof";
// Node 20 refuses --cpu-prof in NODE_OPTIONS).
// BENCH_SERVER_LOG_LEVEL (default silent): the server's LOG_LEVEL; a failed run prints the server's last output.
// BENCH_ONLY (comma-separated parts to run: core, tasks, scale, citus, scale-out, time, invoices, files, tickets, reports, agents, streams, conversations, ratio, sql, webhooks, soak, faults, failover; default all; scale needs tasks;
// ratio measures what tasks, time and invoices seeded). BENCH_RATIO_CONNECTIONS/ROUNDS/DURATION: the ratio part's wrk and pgbench;
// BENCH_RATIO_CASES: the cases whose name contains one of these. Each case is also measured on its floor (bench/floor.ts).
// BENCH_SOAK_MINUTES (default 10): length of the soak part. BENCH_FAULT_RUNS (default 100): runs of the faults part; BENCH_FAILOVER_RUNS (default 5), of the failover part.
// BENCH_INVOICES_ANALYZE=0 skips the ANALYZE bench/invoices.ts runs after its createInvoice warm-up.
// Writes the table to bench/results/latest.md (git-ignored). Exits non-zero if any response was not 2xx.
import autocannon, { type Result } from 'autocannon';
import postgres from 'postgres';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import net from 'node:net';
import { serverUrl, migrate, withDatabase } from '../scripts/db.ts';
import type { EmbeddedHandle } from '../scripts/embedded-pg.ts';
import { run as admin } from '../src/admin/cli.ts';
import { runTaskBench } from './tasks.ts';
import { runTimeBench } from './time.ts';
import { runInvoiceBench } from './invoices.ts';
import { BENCH_WEBHOOK_ENV, runWebhookBench } from './webhooks.ts';
import { runScaleBench } from './scale.ts';
import { runCitusBench } from './citus.ts';
import { runScaleOutBench } from './scale-out.ts';
import { runSoakBench } from './soak.ts';
import { runFaultBench } from './faults.ts';
import { runFailoverBench } from './failover.ts';
import { runRatioBench, type Case } from './ratio.ts';
import { runSqlFloorBench } from './sql-floor.ts';
import { runFileBench } from './files.ts';
import { runTicketBench } from './tickets.ts';
import { runReportBench } from './reports.ts';
import { runAgentBench } from './agents.ts';
import { runStreamBench } from './streams.ts';
import { basic, clientToken, TOKEN_FORM } from './common.ts';
import { BENCH_MODEL_ENV, runConversationBench, startScriptedModel } from './conversations.ts';

const DATABASE = 'svc_bench';
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const WARMUP = 2;
const PORT = Number(process.env.BENCH_PORT ?? 3999);
const BASE = `http://127.0.0.1:${PORT}`;
const MEMBERS_PER_ORG = 1000;
const OTHER_ORGS = 20;

let embedded: EmbeddedHandle | undefined;
/** The server's URL (its `postgres` database): the faults part makes a database per run there. */
let serverRoot = '';
let server: ChildProcess | undefined;
let serverLog = '';

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

async function cli(url: string, ...argv: string[]): Promise<Record<string, string>> {
  const r = await admin(argv, url);
  if (r.code !== 0) throw new Error(`svc-admin ${argv.join(' ')}: ${JSON.stringify(r.err)}`);
  return r.out as Record<string, string>;
}

async function prepareDatabase(): Promise<string> {
  const started = await serverUrl('pg-bench', 54331);
  embedded = started.embedded;
  serverRoot = started.url;
  const root = postgres(started.url, { max: 1, onnotice: () => {} });
  try {
    await root.unsafe(`drop database if exists ${DATABASE} with (force)`);
    await root.unsafe(`create database ${DATABASE}`);
  } finally {
    await root.end();
  }
  const url = withDatabase(started.url, DATABASE);
  await migrate(url);
  return url;
}

async function createOrg(url: string, name: string, index: number): Promise<string> {
  const { organization_id: org } = await cli(url, 'org', 'create', '--name', name, '--plan', 'business',
    '--timezone', 'Europe/Berlin', '--currency', 'EUR', '--locale', 'en-GB');
  // As the owner (a superuser bypasses RLS), in one statement: the control plane adds one member per call.
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql`insert into app.members (organization_id, id, display_name, job_title)
      select ${org!}, format('member%s@org%s.bench.example', lpad(g::text, 4, '0'), ${index}::int),
             format('Member %s of %s', g, ${name}::text), (array['Engineer', 'Designer', 'Analyst', 'Manager'])[1 + g % 4]
        from generate_series(1, ${MEMBERS_PER_ORG}::int) g`;
  } finally {
    await sql.end();
  }
  return org!;
}

async function seed(url: string): Promise<{ id: string; secret: string }> {
  const org = await createOrg(url, 'Bench Organization', 0);
  for (let i = 1; i <= OTHER_ORGS; i++) await createOrg(url, `Other Organization ${i}`, i);
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql`analyze`;
  } finally {
    await sql.end();
  }
  const client = await cli(url, 'client', 'create', '--org', org, '--name', 'Bench client', '--license', 'manager',
    '--roles', 'member,manager,finance');
  return { id: client.client_id!, secret: client.client_secret! };
}

function portInUse(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => { socket.destroy(); done(true); });
    socket.once('error', () => done(false));
  });
}

/** The first item of a list through the API, when the parts that seed it ran. */
async function firstOf(token: string, path: string): Promise<{ id: string } | undefined> {
  const res = await fetch(`${BASE}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return res.ok ? ((await res.json()) as { data: { id: string }[] }).data[0] : undefined;
}

/** The requests compared with their own SQL: a list, the principal, a month of time entries,
 * invoices, a task creation, and every other list and get the parts seeded. */
async function ratioCases(token: string, url: string, clientId: string) {
  const project = await firstOf(token, '/v1/projects?limit=1');
  const ticket = await firstOf(token, '/v1/tickets?limit=1');
  const file = await firstOf(token, '/v1/files?limit=1');
  const run = await firstOf(token, '/v1/runs?limit=1');
  const conversation = await firstOf(token, '/v1/conversations?limit=1');
  // The reports part's run, its rows kept (no list operation names runs; it is a CSV run, whose
  // results page as JSON too, as that part measures them).
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const [report] = await sql<{ id: string; report_id: string }[]>`select r.id, r.report_id from app.report_runs r
    join app.api_clients c on c.organization_id = r.organization_id and c.id = ${clientId}
   where r.status = 'succeeded' and not r.results_purged order by r.row_count desc nulls last limit 1`;
  await sql.end();
  const get = (name: string, path: string, sqlFloor?: Case['sqlFloor']): Case => ({ name, method: 'GET', path, status: 200, sqlFloor });
  const now = new Date();
  const first = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)).toISOString().slice(0, 10);
  const last = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 0)).toISOString().slice(0, 10);
  const newestFirst = (table: string, where?: string) => ({ table, order: 'created_at desc, id desc', where });
  return [
    get('GET /v1/tasks?limit=50', '/v1/tasks?limit=50', newestFirst('tasks', 'archived_at is null')),
    get('GET /v1/me', '/v1/me'),
    get('GET /v1/time-entries (a month, limit=50)', `/v1/time-entries?work_date_gte=${first}&work_date_lte=${last}&limit=50`,
      { table: 'time_entries', order: 'work_date, id', where: `deleted_at is null and work_date >= '${first}' and work_date <= '${last}'` }),
    get('GET /v1/invoices?limit=50', '/v1/invoices?limit=50', newestFirst('invoices')),
    ...(project ? [{ name: 'POST /v1/tasks', method: 'POST' as const, path: '/v1/tasks', status: 201,
      body: JSON.stringify({ project_id: project.id, name: 'Ratio bench task', priority: 'high' }),
      sqlFloor: { table: 'tasks', create: `project_id = '${project.id}'` } }] : []),
    // Every other list and get the parts seeded.
    ...(ticket ? [get('GET /v1/tickets?limit=50', '/v1/tickets?limit=50', newestFirst('tickets')),
      get('GET /v1/tickets/{id}', `/v1/tickets/${ticket.id}`, { table: 'tickets', id: ticket.id })] : []),
    ...(file ? [get('GET /v1/files?limit=50', '/v1/files?limit=50', newestFirst('files', "status <> 'archived'")),
      get('GET /v1/files/{id}', `/v1/files/${file.id}`, { table: 'files', id: file.id })] : []),
    ...(run ? [get('GET /v1/runs?limit=50', '/v1/runs?limit=50', newestFirst('runs')),
      get('GET /v1/runs/{id}', `/v1/runs/${run.id}`, { table: 'runs', id: run.id })] : []),
    ...(conversation ? [get('GET /v1/conversations?limit=50', '/v1/conversations?limit=50', { table: 'conversations', order: 'updated_at desc, id desc' }),
      get('GET /v1/conversations/{id}/messages?limit=50', `/v1/conversations/${conversation.id}/messages?limit=50`,
        { table: 'conversation_messages', order: 'seq, id', where: `conversation_id = '${conversation.id}'` })] : []),
    ...(report ? [get('GET report results (limit=100)', `/v1/reports/${report.report_id}/runs/${report.id}/results?limit=100`)] : []),
  ];
}

async function startServer(url: string): Promise<void> {
  if (await portInUse(PORT)) throw new Error(`port ${PORT} is already in use; set BENCH_PORT`);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: url,
    PORT: String(PORT),
    LOG_LEVEL: process.env.BENCH_SERVER_LOG_LEVEL ?? 'silent',
    RATE_LIMIT_REQUESTS: '1000000000',
    DB_POOL_SIZE: '20',
    ...BENCH_WEBHOOK_ENV,
    ...BENCH_MODEL_ENV,
  };
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  // Its own process group, so stopping it reaches npx, tsx and the node process that serves.
  server = spawn('npx', ['tsx', ...nodeArgs, 'src/main.ts'], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = (chunk: Buffer) => { serverLog = (serverLog + chunk.toString()).slice(-8000); };
  server.stdout!.on('data', keep);
  server.stderr!.on('data', keep);
  let exited: number | null | undefined;
  server.once('exit', (code) => { exited = code; });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited !== undefined) throw new Error(`the server exited (${exited}) before answering /health:\n${serverLog}`);
    try {
      const res = await fetch(`${BASE}/health`);
      if (res.ok) return;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) throw new Error(`the server did not answer /health within 60 s:\n${serverLog}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Live (non-zombie) processes of a process group; Linux /proc, else a signal-0 probe. */
function groupAlive(pgid: number): boolean {
  try {
    const procs = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
    return procs.some((pid) => {
      try {
        // /proc/<pid>/stat: "pid (comm) state ppid pgrp ..."; comm may contain spaces.
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return Number(pgrp) === pgid && state !== 'Z';
      } catch { return false; }
    });
  } catch {
    try { process.kill(-pgid, 0); return true; } catch { return false; }
  }
}

/** SIGTERM to the server's process group (npx, tsx, node), then SIGKILL if any of it is left after 10 s. */
async function stopServer(): Promise<void> {
  const pgid = server?.pid;
  server = undefined;
  if (!pgid) return;
  try { process.kill(-pgid, 'SIGTERM'); } catch { return; }
  const deadline = Date.now() + 10_000;
  while (groupAlive(pgid)) {
    if (Date.now() > deadline) {
      log('the server did not exit within 10 s of SIGTERM; sending SIGKILL');
      try { process.kill(-pgid, 'SIGKILL'); } catch { /* gone */ }
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await stopServer().catch((e) => log(`stopping the server: ${e}`));
    if (embedded) await embedded.stop().catch((e) => log(`stopping embedded PostgreSQL: ${e}`));
  })();
  return cleaning;
}
process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
process.once('SIGTERM', () => void cleanup().then(() => process.exit(143)));
// Last resort (e.g. an uncaught exception): never leave the server running.
process.once('exit', () => { if (server?.pid) try { process.kill(-server.pid, 'SIGKILL'); } catch { /* gone */ } });

interface Target { name: string; path: string; method?: string; headers?: Record<string, string>; body?: string }

/** One request before the load, so a misconfiguration fails with its response instead of a column of non-2xx. */
async function check(t: Target): Promise<void> {
  const res = await fetch(BASE + t.path, { method: t.method ?? 'GET', headers: t.headers, body: t.body });
  const body = await res.text();
  if (res.status < 200 || res.status > 299) throw new Error(`${t.name}: ${res.status} ${body}`);
  if (t.path.startsWith('/v1/members')) {
    const n = (JSON.parse(body) as { data?: unknown[] }).data?.length;
    if (n !== 50) throw new Error(`${t.name}: expected 50 members, got ${n}: ${body.slice(0, 300)}`);
  }
}

async function load(t: Target, duration: number): Promise<Result> {
  return autocannon({
    url: BASE + t.path,
    method: t.method ?? 'GET',
    headers: t.headers,
    body: t.body,
    connections: CONNECTIONS,
    duration,
  });
}

interface Row { name: string; result: Result }

function table(rows: Row[]): string {
  const out = [
    '| endpoint | req/s (mean) | p50 ms | p99 ms | non-2xx |',
    '|---|---:|---:|---:|---:|',
  ];
  for (const { name, result: r } of rows) {
    out.push(`| ${name} | ${Math.round(r.requests.mean)} | ${r.latency.p50} | ${r.latency.p99} | ${r.non2xx} |`);
  }
  const rate = (name: string) => rows.find((r) => r.name.includes(name))?.result.requests.mean ?? NaN;
  const ratio = rate('/v1/me') / rate('/health');
  out.push('', `/v1/me ÷ /health req/s: **${ratio.toFixed(2)}** (goal: at least 0.5)`);
  for (const { name, result: r } of rows) {
    if (r.errors || r.timeouts) out.push(`${name}: ${r.errors} connection errors, ${r.timeouts} timeouts`);
    if (r.non2xx) out.push(`${name}: status codes ${JSON.stringify(r.statusCodeStats)}`);
  }
  return out.join('\n') + '\n';
}

async function main(): Promise<number> {
  log('preparing the database');
  const url = await prepareDatabase();
  log(`seeding ${OTHER_ORGS + 1} organizations x ${MEMBERS_PER_ORG} members`);
  const client = await seed(url);
  log(`starting the server on ${BASE}`);
  const model = await startScriptedModel();
  model.unref();
  await startServer(url);
  const token = await clientToken(BASE, client);
  const bearer = { authorization: `Bearer ${token}` };

  const targets: Target[] = [
    { name: 'GET /health', path: '/health' },
    { name: 'GET /v1/me', path: '/v1/me', headers: bearer },
    { name: 'GET /v1/members?limit=50', path: '/v1/members?limit=50', headers: bearer },
    { name: 'POST /oauth/token', path: '/oauth/token', method: 'POST', body: TOKEN_FORM,
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client) } },
  ];
  const only = new Set((process.env.BENCH_ONLY ?? 'core,tasks,scale,citus,scale-out,time,invoices,files,tickets,reports,agents,streams,conversations,ratio,sql,webhooks,soak,faults,failover').split(',').map((x) => x.trim()));
  const rows: Row[] = [];
  for (const t of only.has('core') ? targets : []) {
    await check(t);
    log(`${t.name}: warm-up ${WARMUP} s, then ${DURATION} s with ${CONNECTIONS} connections`);
    await load(t, WARMUP);
    const result = await load(t, DURATION);
    rows.push({ name: t.name, result });
  }
  const skipped = { markdown: '', failed: [] as string[] };
  // Projects and tasks: bench/tasks.ts, on the same server and database.
  const tasks = only.has('tasks')
    ? await runTaskBench({ url, base: BASE, token, clientId: client.id, connections: CONNECTIONS, duration: DURATION, warmup: WARMUP })
    : skipped;
  // Scale-out: bench/scale.ts, its own API processes over the tasks just seeded.
  const scale = only.has('scale') && only.has('tasks')
    ? await runScaleBench({ url, base: BASE, token, clientId: client.id, connections: CONNECTIONS, duration: DURATION, warmup: WARMUP })
    : skipped;
  // One node next to a 3-node Citus cluster (bench/citus.ts), each on a database and API process of its own.
  const citus = only.has('citus')
    ? await runCitusBench({ serverRoot, connections: CONNECTIONS, duration: DURATION, warmup: WARMUP })
    : skipped;
  // Time entries: bench/time.ts, likewise.
  // Throughput with 1, 2 and 3 workers, each node under a CPU quota of its own (bench/scale-out.ts).
  const scaleOut = only.has('scale-out')
    ? await runScaleOutBench({ connections: CONNECTIONS, duration: DURATION, warmup: WARMUP })
    : skipped;
  const time = only.has('time')
    ? await runTimeBench({ url, base: BASE, token, clientId: client.id, connections: CONNECTIONS, duration: DURATION, warmup: WARMUP })
    : skipped;
  // Invoices and payments: bench/invoices.ts, likewise.
  const invoices = only.has('invoices')
    ? await runInvoiceBench({ url, base: BASE, token, clientId: client.id, connections: CONNECTIONS, duration: DURATION, warmup: WARMUP })
    : skipped;
  // Files: bench/files.ts, 25 MiB through the capability URLs, next to psql's \copy.
  const files = only.has('files')
    ? await runFileBench({ url, base: BASE, token, clientId: client.id, connections: CONNECTIONS, duration: DURATION, warmup: WARMUP,
      serverGroup: server?.pid })
    : skipped;
  // Tickets: bench/tickets.ts, 100,000 tickets, search next to pgbench of its own SQL.
  const tickets = only.has('tickets')
    ? await runTicketBench({ url, base: BASE, token, clientId: client.id, connections: CONNECTIONS, duration: DURATION, warmup: WARMUP })
    : skipped;
  // Reports: bench/reports.ts, a report over 500,000 time entries: run, pages, CSV download.
  const reports = only.has('reports')
    ? await runReportBench({ url, base: BASE, token, clientId: client.id, connections: CONNECTIONS, duration: DURATION, warmup: WARMUP,
      serverGroup: server?.pid })
    : skipped;
  // Agents and runs: bench/agents.ts, run latency over the stream, drain rate, idle streams.
  const agents = only.has('agents')
    ? await runAgentBench({ url, base: BASE, token, clientId: client.id, connections: CONNECTIONS, duration: DURATION, warmup: WARMUP,
      serverGroup: server?.pid })
    : skipped;
  // 1,000 open run event streams of 40 clients under 200 events/s (bench/streams.ts).
  const streams = only.has('streams')
    ? await runStreamBench({ url, base: BASE, token, clientId: client.id, connections: CONNECTIONS, duration: DURATION, warmup: WARMUP,
      serverGroup: server?.pid })
    : skipped;
  // Conversations: bench/conversations.ts, message → reply stored with a scripted model on loopback.
  const conversations = only.has('conversations')
    ? await runConversationBench({ url, base: BASE, token, clientId: client.id, connections: CONNECTIONS, duration: DURATION, warmup: WARMUP })
    : skipped;
  // Each request next to pgbench replaying its own SQL (bench/ratio.ts), over what the parts above seeded.
  const ratio = only.has('ratio') ? await runRatioBench({ url, base: BASE, token, clientId: client.id, connections: CONNECTIONS, duration: DURATION, warmup: WARMUP,
    serverGroup: server?.pid },
    await ratioCases(token, url, client.id)) : skipped;
  // PostgreSQL's CPU per list and create against their floors: bench/sql-floor.ts, a database of its own.
  const sqlFloor = only.has('sql') ? await runSqlFloorBench() : skipped;
  // Outbox and webhooks: bench/webhooks.ts, last (its endpoint would receive the others' events).
  const webhooks = only.has('webhooks') ? await runWebhookBench({ url, base: BASE, token, clientId: client.id, serverGroup: server?.pid }) : skipped;
  // Soak: bench/soak.ts, minutes of mixed load on the same server, last.
  const soak = only.has('soak')
    ? await runSoakBench({ url, base: BASE, token, clientId: client.id, connections: CONNECTIONS, duration: DURATION, warmup: WARMUP })
    : skipped;
  // The termination fault repeated (bench/faults.ts), each run on a database and API process of its own.
  const faults = only.has('faults')
    ? await runFaultBench(serverRoot, Number(process.env.BENCH_FAULT_RUNS ?? 100)).then((r) => ({ markdown: r.markdown, failed: r.wedges ? ['faults'] : [] }))
    : skipped;
  // A primary stopped hard and its standby promoted (bench/failover.ts), on servers of its own.
  const failover = only.has('failover') ? await runFailoverBench(Number(process.env.BENCH_FAILOVER_RUNS ?? 5)) : skipped;

  const header = [
    `Run ${new Date().toISOString()}: ${DURATION} s per endpoint after a ${WARMUP} s warm-up, ${CONNECTIONS} connections, ` +
      `Node ${process.version}, ${cpus().length} CPUs, ${Math.round(totalmem() / 2 ** 30)} GiB.`,
    '',
  ].join('\n');
  const text = header + table(rows) + '\n' + tasks.markdown + '\n' + scale.markdown + '\n' + citus.markdown + '\n' + scaleOut.markdown + '\n' + time.markdown + '\n' + invoices.markdown + '\n' + files.markdown + '\n' + tickets.markdown + '\n' + reports.markdown + '\n' + agents.markdown + '\n' + streams.markdown + '\n' + conversations.markdown + '\n' + ratio.markdown + '\n' + sqlFloor.markdown + '\n' + webhooks.markdown + '\n' + soak.markdown + '\n' + faults.markdown + '\n' + failover.markdown;
  process.stdout.write('\n' + text);
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/latest.md', text);
  log('table written to bench/results/latest.md');

  const bad = rows.filter((r) => r.result.non2xx > 0 || r.result.errors > 0 || r.result.timeouts > 0);
  const failed = [...bad.map((r) => r.name), ...tasks.failed, ...scale.failed, ...citus.failed, ...scaleOut.failed, ...time.failed, ...invoices.failed, ...files.failed, ...tickets.failed, ...reports.failed, ...agents.failed, ...streams.failed, ...conversations.failed, ...ratio.failed, ...sqlFloor.failed, ...webhooks.failed, ...soak.failed, ...faults.failed, ...failover.failed];
  if (failed.length) {
    log(`FAILED: non-2xx responses or errors for ${failed.join(', ')}`);
    return 1;
  }
  return 0;
}

let code = 1;
try {
  code = await main();
} catch (e) {
  log(`failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
  // undici's "fetch failed" says why only in its cause (a reset, a closed socket, a timeout).
  const cause = (e as { cause?: unknown } | undefined)?.cause;
  if (cause) log(`cause: ${cause instanceof Error ? `${(cause as { code?: string }).code ?? ''} ${cause.message}` : String(cause)}`);
  if (serverLog) log(`the server's last output:\n${serverLog}`);
} finally {
  await cleanup();
}
process.exit(code);
