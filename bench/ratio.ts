// Each benchmarked request next to PostgreSQL running that request's own SQL, in the
// same run, from the same kind of load generator (C on both sides: wrk for HTTP, pgbench for SQL),
// with the same connections, as svc_runtime over TCP. Part `ratio` of `make bench`, after the parts
// that seed tasks, time entries and invoices in the benchmarked client's organization.
//
// For each request: one request through a fresh in-process server with log_statement = 'all' on
// the bench database gives its statements (as PostgreSQL received them, parameters substituted);
// pgbench replays them (-M prepared); wrk loads the running server. ROUNDS rounds of DURATION s
// after a WARMUP s warm-up, each round wrk then pgbench; medians reported, and the ratio is the
// median of the rounds' own ratios: this machine drifts by ±25 % within minutes, and a round's two
// halves, seconds apart, drift together. A case with a SQL floor (a list, a get, a create) runs its
// pgbench in the same rounds too, and PostgreSQL's CPU per transaction of the replay is printed
// beside the floor's.
import postgres from 'postgres';
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpuMs, logger, machineTicks, type BenchOptions, type BenchResult } from './common.ts';
import { PIPELINED, PIPELINED_READ } from '../src/db/database.ts';
import { logFile, parseLog, readFrom, requestFromLog, requestThroughFreshInstance, runPgbench, pgbenchScript } from './tasks.ts';
import { createFloorScript, floorTables, listFloorScript, rowFloorScript } from './pgbench-cases.ts';

const log = logger('ratio');
const RESULTS = 'bench/results';
const CONNECTIONS = Number(process.env.BENCH_RATIO_CONNECTIONS ?? 10);
const ROUNDS = Number(process.env.BENCH_RATIO_ROUNDS ?? 6);
const DURATION = Number(process.env.BENCH_RATIO_DURATION ?? 5);
const WARMUP = 3;
const RUNTIME = { user: 'svc_runtime', password: 'svc_runtime' };
/** The Idempotency-Key of the captured POST: replaced by a fresh one per replayed transaction. */
const KEY_MARK = 'ratio-capture-key';

/** `sqlFloor`: what the request costs PostgreSQL at the least (bench/pgbench-cases.ts, on a copy of
 * `table` in schema bench_floor with the organization's rows): a list page (`order`, `where`), one
 * row (`id`) or a create (`create`: which row of the table to copy). */
export interface Case {
  name: string; method: 'GET' | 'POST'; path: string; body?: string; status: number;
  sqlFloor?: { table: string } & ({ order: string; where?: string } | { id: string } | { create: string });
}
interface Figures { rps: number; p50: number; p99: number; errors: number }
/** CPU per request or transaction (µs): the server, PostgreSQL, the load generator (wrk or pgbench);
 * and the share of the machine's cores left idle during the run (%). */
interface Cpu { server: number; postgres: number; client: number; idle: number }

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length === 0 ? NaN : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

function ensureWrk(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' }).stdout.trim();
  if (found) return found;
  if (process.getuid?.() === 0) {
    log('installing wrk (Debian)');
    spawnSync('sh', ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk'], { stdio: 'ignore' });
    return spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' }).stdout.trim() || undefined;
  }
  return undefined;
}

async function capture(o: BenchOptions, database: string, c: Case): Promise<string[]> {
  const sql = postgres(o.url, { max: 1, onnotice: () => {} });
  try {
    const [s] = await sql<{ current: string | null; data_directory: string }[]>`
      select pg_current_logfile() as current, current_setting('data_directory') as data_directory`;
    const file = logFile(s!.current, s!.data_directory);
    if (!file) throw new Error('the PostgreSQL log file is not known');
    const offset = statSync(file).size;
    try {
      await sql.unsafe(`alter database ${database} set log_statement = 'all'`);
      await requestThroughFreshInstance(o, c.path, {
        method: c.method, payload: c.body, status: c.status,
        headers: c.method === 'POST' ? { 'content-type': 'application/json', 'idempotency-key': KEY_MARK } : {},
      });
    } finally {
      await sql.unsafe(`alter database ${database} reset log_statement`);
    }
    await new Promise((r) => setTimeout(r, 300)); // the log is written asynchronously
    const statements = requestFromLog(parseLog(readFrom(file, offset)), `${RUNTIME.user}@${database}`, 'api.begin_request');
    if (!statements) throw new Error(`no statements of ${c.method} ${c.path} found in ${file}`);
    // A replayed POST must do the work again: a fresh key per transaction (pgbench's :k). pgbench
    // reads ":name" as a variable, so the JSON the statements carry gets a space after its colons.
    // The pipelining marker is a note to the server's driver (src/db/database.ts), not SQL to replay.
    // On a cluster the key is an element of the statement's text-array argument ('{…,ratio-capture-key,…}')
    // and stays as captured: pgbench -M prepared makes a :k there a bind parameter inside a literal.
    // The cluster's POST replay therefore meets one key and answers the stored response (docs/benchmarks.md).
    return statements.map((x) => x.replace(PIPELINED, '').replace(PIPELINED_READ, '').replace(/":(?=\S)/g, '": ')
      .replaceAll(`'${KEY_MARK}'`, `('ratio-' || :k)`));
  } finally {
    await sql.end();
  }
}

/** ANALYZE after the warm-ups, as autovacuum would once the tables have grown. This machine's
 * PostgreSQL runs with autovacuum off, and a pooled session keeps the generic plan it made while
 * a table was near empty: the API's sessions that had planned the key's claim early read
 * app.idempotency_keys sequentially, and PostgreSQL's CPU per create was 2.0-2.4 ms in some runs
 * against 1.5 ms in the others (the history of docs/benchmarks.md, "Stale plans"). The
 * ANALYZE invalidates those plans for the server and pgbench alike. */
async function analyze(url: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const t0 = Date.now();
    await sql`analyze`;
    log(`ANALYZE after the warm-ups: ${Date.now() - t0} ms`);
  } finally {
    await sql.end();
  }
}

function runWrk(wrk: string, o: BenchOptions, c: Case, seconds: number, base = o.base): Promise<Figures> {
  const script = join(RESULTS, `wrk-${c.name.replace(/\W+/g, '-')}.lua`);
  const headers = [`wrk.headers["Authorization"] = "Bearer ${o.token}"`];
  let body = '';
  if (c.method === 'POST') {
    headers.push('wrk.headers["Content-Type"] = "application/json"');
    // Each thread numbers its own keys (setup() gives each thread its number): a fresh
    // Idempotency-Key per request.
    body = `wrk.method = "POST"\nwrk.body = ${JSON.stringify(c.body)}\nlocal threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("thread_no", threads)
end
local n = 0
request = function()
  n = n + 1
  wrk.headers["Idempotency-Key"] = "${randomUUID()}-" .. thread_no .. "-" .. n
  return wrk.format()
end\n`;
  }
  writeFileSync(script, `${headers.join('\n')}\n${body}`);
  return new Promise((resolve, reject) => {
    const child = spawn(wrk, ['-t', '2', '-c', String(CONNECTIONS), '-d', `${seconds}s`, '--latency', '-s', script, base + c.path],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => { out += b.toString(); });
    child.stderr.on('data', (b: Buffer) => { out += b.toString(); });
    child.once('error', reject);
    child.once('exit', () => {
      const ms = (s: string | undefined) => (!s ? NaN : s.endsWith('us') ? parseFloat(s) / 1000 : s.endsWith('ms') ? parseFloat(s) : parseFloat(s) * 1000);
      resolve({
        rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN),
        p50: ms(/^\s+50%\s+(\S+)/m.exec(out)?.[1]),
        p99: ms(/^\s+99%\s+(\S+)/m.exec(out)?.[1]),
        errors: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0)
          + [...out.matchAll(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/g)].reduce((n, m) => n + Number(m[1]) + Number(m[2]) + Number(m[3]) + Number(m[4]), 0),
      });
    });
  });
}

async function runReplay(o: BenchOptions, database: string, c: Case, statements: string[], seconds: number): Promise<Figures> {
  return runScript(o, database, `pgbench-ratio-${c.name.replace(/\W+/g, '-')}.sql`,
    (c.method === 'POST' ? '\\set k random(1, 2000000000)\n' : '') + pgbenchScript(statements), seconds);
}

/** pgbench of one script (written to bench/results/`file`) as svc_runtime, CONNECTIONS clients. */
async function runScript(o: BenchOptions, database: string, file: string, text: string, seconds: number): Promise<Figures> {
  const target = new URL(o.url);
  const script = join(RESULTS, file);
  writeFileSync(script, text);
  const env = { PGHOST: target.hostname, PGPORT: target.port || '5432', PGUSER: RUNTIME.user, PGPASSWORD: RUNTIME.password, PGDATABASE: database };
  const { code, out } = await runPgbench(env, ['-n', '-M', 'prepared', '-c', String(CONNECTIONS), '-j', '2', '-T', String(seconds), '-P', String(seconds), '--latency-limit=100000', '-f', script]);
  if (code !== 0) throw new Error(`pgbench ${file} exited ${code}:\n${out.slice(-2000)}`);
  const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(out)?.[1] ?? NaN);
  const avg = Number(/latency average = ([\d.]+) ms/.exec(out)?.[1] ?? NaN);
  return { rps: tps, p50: avg, p99: NaN, errors: Number(/number of failed transactions: (\d+)/.exec(out)?.[1] ?? 0) };
}

/** The request's SQL floor as a pgbench script, its bench_floor tables made first. */
async function sqlFloorScript(o: BenchOptions, c: Case): Promise<string | undefined> {
  const f = c.sqlFloor;
  if (!f) return undefined;
  const sql = postgres(o.url, { max: 1, onnotice: () => {} });
  try {
    const [{ org }] = await sql`select organization_id as org from app.api_clients where id = ${o.clientId}` as [{ org: string }];
    if ('create' in f) {
      await floorTables(sql, org, { [f.table]: true, idempotency_keys: false, events: false });
      return await createFloorScript(sql, f.table, org, f.create);
    }
    await floorTables(sql, org, { [f.table]: true });
    return await ('id' in f ? rowFloorScript(sql, f.table, org, f.id) : listFloorScript(sql, f.table, org, f));
  } finally {
    await sql.end();
  }
}

async function dropSqlFloors(o: BenchOptions): Promise<void> {
  const sql = postgres(o.url, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe('drop schema if exists bench_floor cascade');
  } finally {
    await sql.end();
  }
}

/** The design's floor for the request (bench/floor.ts), serving the captured statements. */
async function startFloor(o: BenchOptions, database: string, c: Case, statements: string[]): Promise<{ base: string; stop: () => Promise<void> }> {
  const file = join(RESULTS, `floor-${c.name.replace(/\W+/g, '-')}.json`);
  writeFileSync(file, JSON.stringify(statements));
  const target = new URL(o.url);
  target.username = RUNTIME.user;
  target.password = RUNTIME.password;
  target.pathname = `/${database}`;
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/floor.ts'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    // A GET: 4 connections, as the API's read pool; for the bare route they beat one pipelined
    // connection on the gets as well (0.72 against 0.49 of the replay for a ticket, 0.55 against 0.46
    // for /v1/me). A POST holds one for its transaction: as many as wrk's connections, as pgbench has.
    env: { ...process.env, FLOOR_STATEMENTS_FILE: file, FLOOR_DATABASE_URL: target.href,
      FLOOR_CONNECTIONS: c.method === 'GET' ? '4' : String(CONNECTIONS) },
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`bench/floor.ts exited ${code} before serving`)));
  });
  const base = `http://127.0.0.1:${port}`;
  const check = await fetch(base + c.path, { method: c.method, body: c.body, headers: c.body ? { 'content-type': 'application/json' } : {} });
  if (check.status !== c.status) throw new Error(`bench/floor.ts answered ${check.status}: ${(await check.text()).slice(0, 300)}`);
  return {
    base,
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}

/** One measured run with the CPU each side spent on it, per request (µs). */
async function measured(group: number | undefined, run: () => Promise<Figures>, seconds: number): Promise<Figures & { cpu: Cpu }> {
  const a = cpuMs(group);
  const ta = machineTicks();
  const f = await run();
  const tb = machineTicks();
  // pgbench's backends exit with it, and their CPU reaches the postmaster's cutime only once it
  // has reaped them: read after a pause, or a run's figure can miss part of them.
  await new Promise((r) => setTimeout(r, 500));
  const b = cpuMs(group);
  const n = f.rps * seconds;
  const per = (x: number) => (n > 0 ? (x * 1000) / n : NaN);
  return { ...f, cpu: { server: per(b.server - a.server), postgres: per(b.postgres - a.postgres), client: per(b.children - a.children),
    idle: tb.total > ta.total ? (100 * (tb.idle - ta.idle)) / (tb.total - ta.total) : NaN } };
}

export async function runRatioBench(o: BenchOptions & { serverGroup?: number }, cases: Case[]): Promise<BenchResult> {
  const wrk = ensureWrk();
  if (!wrk) {
    log('wrk is not installed (Debian package wrk): part skipped');
    return { markdown: '### Ratio (issue 21): skipped, wrk is not installed (Debian package `wrk`)\n', failed: [] };
  }
  mkdirSync(RESULTS, { recursive: true });
  const database = decodeURIComponent(new URL(o.url).pathname.slice(1));
  const failed: string[] = [];
  const rows: string[] = [];
  const cpuRows: string[] = [];
  const floorRows: string[] = [];
  const sqlFloorRows: { name: string; replay: number; floor: number; ratios: number[] }[] = [];
  const scripts: string[] = [];
  // BENCH_RATIO_CASES: only the cases whose name contains one of these (comma-separated), e.g. "POST".
  const only = (process.env.BENCH_RATIO_CASES ?? '').split(',').map((x) => x.trim()).filter(Boolean);
  await dropSqlFloors(o);
  for (const c of cases.filter((x) => !only.length || only.some((o) => x.name.includes(o)))) {
    log(`${c.name}: capturing its SQL`);
    const statements = await capture(o, database, c);
    scripts.push(`${c.name}:\n\n\`\`\`sql\n${pgbenchScript(statements).trimEnd()}\n\`\`\``);
    const api: (Figures & { cpu: Cpu })[] = [];
    const db: (Figures & { cpu: Cpu })[] = [];
    const bare: Figures[] = [];
    const sqlFloor = await sqlFloorScript(o, c);
    const sqlFile = `pgbench-sql-floor-${c.name.replace(/\W+/g, '-')}.sql`;
    const bareSql: (Figures & { cpu: Cpu })[] = [];
    const floor = await startFloor(o, database, c, statements);
    try {
      log(`${c.name}: ${ROUNDS} rounds of ${DURATION} s (wrk, wrk on the floor, then pgbench) after ${WARMUP} s warm-ups, ${CONNECTIONS} connections`);
      await runWrk(wrk, o, c, WARMUP);
      await runWrk(wrk, o, c, WARMUP, floor.base);
      await runReplay(o, database, c, statements, WARMUP);
      if (sqlFloor) await runScript(o, database, sqlFile, sqlFloor, WARMUP);
      await analyze(o.url);
      for (let r = 0; r < ROUNDS; r++) {
        api.push(await measured(o.serverGroup, () => runWrk(wrk, o, c, DURATION), DURATION));
        bare.push(await runWrk(wrk, o, c, DURATION, floor.base));
        db.push(await measured(o.serverGroup, () => runReplay(o, database, c, statements, DURATION), DURATION));
        if (sqlFloor) bareSql.push(await measured(o.serverGroup, () => runScript(o, database, sqlFile, sqlFloor, DURATION), DURATION));
      }
    } finally {
      await floor.stop();
    }
    if (sqlFloor) {
      if (bareSql.some((f) => f.errors)) failed.push(`ratio ${c.name}: the SQL floor`);
      sqlFloorRows.push({ name: c.name, replay: median(db.map((f) => f.cpu.postgres)), floor: median(bareSql.map((f) => f.cpu.postgres)),
        ratios: db.map((f, i) => f.cpu.postgres / bareSql[i]!.cpu.postgres) });
    }
    const floorErrors = bare.reduce((n, f) => n + f.errors, 0);
    if (floorErrors) failed.push(`ratio ${c.name}: the floor server`);
    const ofReplay = bare.map((x, i) => x.rps / db[i]!.rps);
    const apiOfFloor = bare.map((x, i) => api[i]!.rps / x.rps);
    floorRows.push(`| ${c.name} | ${median(bare.map((x) => x.rps)).toFixed(0)} | `
      + `**${median(ofReplay).toFixed(2)}** (${Math.min(...ofReplay).toFixed(2)}–${Math.max(...ofReplay).toFixed(2)}) | `
      + `**${median(apiOfFloor).toFixed(2)}** (${Math.min(...apiOfFloor).toFixed(2)}–${Math.max(...apiOfFloor).toFixed(2)}) | ${floorErrors} |`);
    const errors = api.reduce((n, f) => n + f.errors, 0) + db.reduce((n, f) => n + f.errors, 0);
    if (errors) failed.push(`ratio ${c.name}`);
    const a = median(api.map((f) => f.rps));
    const d = median(db.map((f) => f.rps));
    const ratios = api.map((f, i) => f.rps / db[i]!.rps);
    rows.push(`| ${c.name} | ${a.toFixed(0)} | ${median(api.map((f) => f.p50)).toFixed(1)} | ${median(api.map((f) => f.p99)).toFixed(1)} | `
      + `${d.toFixed(0)} | ${median(db.map((f) => f.p50)).toFixed(2)} | **${median(ratios).toFixed(2)}** | `
      + `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)} | ${errors} |`);
    const us = (xs: number[]) => median(xs).toFixed(0);
    cpuRows.push(`| ${c.name} | ${us(api.map((f) => f.cpu.server))} | ${us(api.map((f) => f.cpu.postgres))} | ${us(api.map((f) => f.cpu.client))} | `
      + `${us(db.map((f) => f.cpu.postgres))} | ${us(db.map((f) => f.cpu.client))} | ${us(db.map((f) => f.cpu.server))} | `
      + `${us(api.map((f) => f.cpu.idle))} / ${us(db.map((f) => f.cpu.idle))} |`);
  }
  await dropSqlFloors(o);
  const furthest = [...sqlFloorRows].sort((x, y) => median(y.ratios) - median(x.ratios))[0];
  const range = (xs: number[]) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;
  return {
    failed,
    markdown: [
      `### Ratio (issue 21): API (wrk) next to pgbench replaying each request's own SQL, ${CONNECTIONS} connections, median of ${ROUNDS} × ${DURATION} s`,
      '',
      '| request | API req/s | p50 ms | p99 ms | pgbench tps | pgbench latency avg ms | API ÷ pgbench (median of the rounds) | rounds\' range | errors |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...rows,
      '',
      '',
      'CPU per request (API) and per transaction (pgbench), µs, medians of the rounds (/proc: the server\'s process group, every `postgres` process, the finished load generator):',
      '',
      '| request | API: server | API: PostgreSQL | API: wrk | pgbench: PostgreSQL | pgbench: pgbench | pgbench: server (idle work) | cores idle %: API / pgbench |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...cpuRows,
      '',
      '',
      `The design's floor (bench/floor.ts: a bare hapi route sending the same statements through postgres.js, a transaction's written at once; 4 connections for a GET, its best shape on this machine, and ${CONNECTIONS} for a POST; no token, rate limit, validation, metrics or log), loaded by wrk in the same rounds; medians of the rounds' own ratios (range):`,
      '',
      '| request | floor req/s | floor ÷ pgbench | API ÷ floor | floor errors |',
      '|---|---:|---:|---:|---:|',
      ...floorRows,
      '',
      ...(sqlFloorRows.length === 0 ? [] : [
        'PostgreSQL\'s CPU per transaction of the replay (the request\'s own SQL) next to its SQL floor (bench/pgbench-cases.ts: the same rows read or written on copies of the tables in schema bench_floor, with no context, policy, view, function or trigger: a list page built as JSON objects of the rows\' columns, one row so, or a create\'s idempotency record, row and event, then a NOTIFY), pgbench in the same rounds; medians of the rounds\' own ratios (range):',
        '',
        '| request | replay: PostgreSQL µs | SQL floor µs | ÷ SQL floor |',
        '|---|---:|---:|---:|',
        ...sqlFloorRows.map((r) => `| ${r.name} | ${r.replay.toFixed(0)} | ${r.floor.toFixed(0)} | **${median(r.ratios).toFixed(2)}** (${range(r.ratios)}) |`),
        '',
        ...(furthest ? [`The furthest from its SQL floor: ${furthest.name} (${median(furthest.ratios).toFixed(2)}).`, ''] : []),
        '',
      ]),
      `- wrk -t 2 -c ${CONNECTIONS} --latency; pgbench -M prepared -c ${CONNECTIONS} -j 2 as ${RUNTIME.user} over TCP; both after a ${WARMUP} s warm-up.`,
      '- The SQL, as PostgreSQL logged it for one request (a POST\'s Idempotency-Key replaced by a fresh one per transaction):',
      '',
      ...scripts,
      '',
    ].join('\n'),
  };
}
