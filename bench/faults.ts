// The termination test, repeated until it fails: a fresh database and API process per
// run, 8 readers and 2 writers on GET/POST /v1/projects, three waves of pg_terminate_backend on
// every session of the database 700 ms apart, then every request must succeed again within 3 s.
// A run that does not recover prints the server's warnings (each acquire timeout carries the
// driver's pool state) and counts as a wedge.
//
//   npx tsx bench/faults.ts                       # BENCH_FAULT_RUNS (default 100) runs, embedded PostgreSQL
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/faults.ts
//
// Also `make bench` with BENCH_ONLY=faults (runFaultBench).
import postgres from 'postgres';
import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import { serverUrl, migrate, withDatabase } from '../scripts/db.ts';
import { spawnApi, tokenFrom, orgWithClient } from '../test/helpers/processes.ts';
import { isMain } from '../src/is-main.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (msg: string) => process.stderr.write(`[bench:faults] ${msg}\n`);

interface Answer { at: number; ms: number; method: string; status: number; code?: string }

/** A stand-in for tap's Test: the test helpers used here only register teardowns. */
export function scope() {
  const teardowns: (() => unknown)[] = [];
  return { t: { teardown: (f: () => unknown) => { teardowns.push(f); } } as unknown as Test,
    close: async () => { for (const f of teardowns.reverse()) await f(); } };
}

function load(base: string, token: string, readers: number, writers: number) {
  const answers: Answer[] = [];
  let running = true;
  let n = 0;
  const one = async (method: 'GET' | 'POST') => {
    const at = Date.now();
    try {
      const res = await fetch(`${base}/v1/projects${method === 'GET' ? '?limit=20' : ''}`, {
        method, signal: AbortSignal.timeout(20_000),
        headers: { authorization: `Bearer ${token}`, ...(method === 'POST' ? { 'content-type': 'application/json', 'idempotency-key': randomUUID() } : {}) },
        body: method === 'POST' ? JSON.stringify({ code: `F${++n}`, name: `Fault ${n}` }) : undefined,
      });
      const text = await res.text();
      answers.push({ at, ms: Date.now() - at, method, status: res.status, code: res.status >= 400 ? JSON.parse(text || '{}').code : undefined });
    } catch (e) {
      answers.push({ at, ms: Date.now() - at, method, status: 0, code: String(e) });
    }
  };
  const loops = [...Array(readers).fill('GET'), ...Array(writers).fill('POST')].map(async (m: 'GET' | 'POST') => {
    while (running) await one(m);
  });
  return { answers, stop: async () => { running = false; await Promise.all(loops); } };
}

export interface FaultRun { ok: boolean; answers: number; outage: number; failedAfter: number; recoveredMs: number | null; log: string[] }

/** One run on database `url` (owner). */
export async function terminateOnce(url: string, opts: { waves?: number; gapMs?: number; recoverMs?: number } = {}): Promise<FaultRun> {
  const { t, close } = scope();
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const { client } = await orgWithClient(url, 'Faults', 'load');
    const api = await spawnApi(t, { DATABASE_URL: url, SVC_WORKER: 'on', RATE_LIMIT_REQUESTS: '1000000', LOG_LEVEL: 'warn' });
    const token = await tokenFrom(api.url, client);
    const l = load(api.url, token, 8, 2);
    await sleep(1000);
    for (let w = 0; w < (opts.waves ?? 3); w++) {
      if (w > 0) await sleep(opts.gapMs ?? 700);
      await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`;
    }
    const lastFault = Date.now();
    await sleep(opts.recoverMs ?? 6000);
    await l.stop();
    const since = lastFault + 3000;
    const after = l.answers.filter((a) => a.at >= since);
    const failedAfter = after.filter((a) => a.status < 200 || a.status >= 300).length;
    const firstOk = l.answers.filter((a) => a.at >= lastFault && a.status >= 200 && a.status < 300)
      .filter((a, i, all) => all.slice(i).every((b) => b.status >= 200 && b.status < 300))[0];
    const lines = api.stdout().split('\n').filter((line) => line && !line.includes('"msg":"request"'));
    const alive = api.child.exitCode === null;
    return { ok: alive && failedAfter === 0 && after.length > 10, answers: l.answers.length, outage: l.answers.filter((a) => a.status === 503).length,
      failedAfter, recoveredMs: firstOk ? firstOk.at - lastFault : null, log: lines };
  } finally {
    await admin.end();
    await close();
  }
}

export async function runFaultBench(serverRoot: string, runs: number): Promise<{ markdown: string; wedges: number }> {
  const template = `svc_fault_tpl_${process.pid}`;
  const root = postgres(serverRoot, { max: 1, onnotice: () => {} });
  await root.unsafe(`drop database if exists ${template} with (force)`);
  await migrate(withDatabase(serverRoot, template));
  let wedges = 0;
  const recovered: number[] = [];
  try {
    for (let i = 1; i <= runs; i++) {
      const name = `svc_fault_${process.pid}_${i}`;
      await root.unsafe(`create database ${name} template ${template}`);
      try {
        const r = await terminateOnce(withDatabase(serverRoot, name));
        if (r.recoveredMs !== null) recovered.push(r.recoveredMs);
        log(`run ${i}/${runs}: ${r.ok ? 'recovered' : 'WEDGED'} (${r.answers} answers, ${r.outage} × 503, ${r.failedAfter} failed after 3 s, all 2xx from +${r.recoveredMs ?? '-'} ms)`);
        if (!r.ok) {
          wedges++;
          log(r.log.slice(-30).join('\n'));
        }
      } finally {
        await root.unsafe(`drop database if exists ${name} with (force)`);
      }
    }
  } finally {
    await root.unsafe(`drop database if exists ${template} with (force)`);
    await root.end();
  }
  recovered.sort((a, b) => a - b);
  const q = (p: number) => recovered[Math.min(recovered.length - 1, Math.floor(p * recovered.length))] ?? NaN;
  const markdown = `### Every session terminated under load, repeated (bench/faults.ts)\n\n`
    + `8 readers and 2 writers on GET/POST /v1/projects, three waves of pg_terminate_backend 700 ms apart; a run is wedged when any answer 3 s after the last wave fails.\n\n`
    + `| runs | wedged | last wave → every answer 2xx, median | p90 | max |\n|---|---|---|---|---|\n`
    + `| ${runs} | ${wedges} | ${q(0.5)} ms | ${q(0.9)} ms | ${recovered[recovered.length - 1] ?? NaN} ms |\n`;
  return { markdown, wedges };
}

if (isMain(import.meta.url)) {
  const { url, embedded } = await serverUrl('pg-bench', 54331);
  try {
    const { markdown, wedges } = await runFaultBench(url, Number(process.env.BENCH_FAULT_RUNS ?? 100));
    process.stdout.write(markdown);
    process.exitCode = wedges ? 1 : 0;
  } finally {
    await embedded?.stop();
  }
}
