// What the bench parts (tasks, time entries, invoices) share: their options and result shape, the
// autocannon request types, a logger, a timer and the control-plane call.
import type { Options } from 'autocannon';
import { readdirSync, readFileSync } from 'node:fs';
import postgres from 'postgres';
import { run as runWorker, Logger } from 'graphile-worker';
import { run as admin } from '../src/admin/cli.ts';

export interface BenchOptions {
  /** Owner (superuser) URL of the bench database. */
  url: string;
  /** Base URL of the running server. */
  base: string;
  token: string;
  clientId: string;
  connections: number;
  duration: number;
  warmup: number;
}

export interface BenchResult {
  markdown: string;
  /** Names of measurements that saw non-2xx responses or errors, or failed a check. */
  failed: string[];
}

export type RequestSpec = { method?: string; path?: string; headers?: Record<string, string>; body?: string;
  setupRequest?: (req: RequestSpec, context: unknown) => RequestSpec };
export type LoadOptions = Options & { requests?: RequestSpec[]; amount?: number };

export const logger = (part: string) => (msg: string) => process.stderr.write(`[bench:${part}] ${msg}\n`);
export const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

export async function cli(url: string, ...argv: string[]): Promise<Record<string, unknown>> {
  const r = await admin(argv, url);
  if (r.code !== 0) throw new Error(`svc-admin ${argv.join(' ')}: ${JSON.stringify(r.err)}`);
  return r.out as Record<string, unknown>;
}

export const basic = (c: { id: string; secret: string }) =>
  'Basic ' + Buffer.from(`${encodeURIComponent(c.id)}:${encodeURIComponent(c.secret)}`).toString('base64');
export const TOKEN_FORM = 'grant_type=client_credentials&scope=svc.api';

/** An access token of an API Client, from the running server's token endpoint. */
export async function clientToken(base: string, client: { id: string; secret: string }): Promise<string> {
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client) },
    body: TOKEN_FORM,
  });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`POST /oauth/token: ${res.status} ${body}`);
  return (JSON.parse(body) as { access_token: string }).access_token;
}

/** The largest resident set (VmRSS, KiB) among the live processes of a process group (the server's node process). */
export function serverRssKb(group: number): number {
  let best = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) !== group) continue;
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (rss) best = Math.max(best, Number(rss[1]));
    } catch { /* gone */ }
  }
  return best;
}

/** graphile-worker's own rate for `jobs` no-op jobs on a runner of `concurrency` in this process
 * (the server's settings: local queue, batched completion), against the bench database: the
 * yardstick the webhook and agent figures are set against. */
export async function graphileNoopJobsPerSecond(url: string, jobs: number, concurrency: number): Promise<number> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  let done = 0;
  let finished!: () => void;
  const allDone = new Promise<void>((r) => { finished = r; });
  const runner = await runWorker({ connectionString: url, concurrency, pollInterval: 2000, noHandleSignals: true,
    logger: new Logger(() => () => {}), taskList: { bench_noop: async () => { if (++done === jobs) finished(); } },
    preset: { worker: { localQueue: { size: concurrency * 2 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } } });
  try {
    const t0 = process.hrtime.bigint();
    await sql`select graphile_worker.add_job('bench_noop', '{}'::json) from generate_series(1, ${jobs}::int)`;
    await allDone;
    return jobs / (Number(process.hrtime.bigint() - t0) / 1e9);
  } finally {
    await runner.stop();
    await sql.end();
  }
}

/** The machine's CPU ticks so far, all cores: idle (with iowait) and in all (Linux /proc/stat; zeros
 * elsewhere). Two readings give the share of the cores a run left idle: a closed-loop load that
 * cannot keep every core busy shows it here, whatever each process's own CPU. */
export function machineTicks(): { idle: number; total: number } {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
    return { idle: f[3]! + f[4]!, total: f.slice(0, 8).reduce((a, b) => a + b, 0) };
  } catch {
    return { idle: 0, total: 0 };
  }
}

/** CPU time (ms, user + system) spent so far by: the live processes of a process group (the
 * server), all PostgreSQL processes on this machine with the backends that have exited, and this
 * process's waited-for children (a finished wrk or pgbench). Linux /proc; zeros elsewhere. For "where does a request's CPU go". */
export function cpuMs(group?: number): { server: number; postgres: number; children: number } {
  const hz = 100; // USER_HZ: 100 on Linux x86-64 and arm64
  let server = 0;
  let pg = 0;
  let children = 0;
  try {
    for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const ticks = Number(f[11]) + Number(f[12]); // utime, stime
        if (group !== undefined && Number(f[2]) === group) server += ticks;
        // With cutime and cstime: the postmaster's reaped backends (pgbench's, once it disconnects).
        else if (comm === 'postgres') pg += ticks + Number(f[13]) + Number(f[14]);
        if (Number(pid) === process.pid) children = Number(f[13]) + Number(f[14]); // cutime, cstime
      } catch { /* gone */ }
    }
  } catch { /* no /proc */ }
  return { server: server * 1000 / hz, postgres: pg * 1000 / hz, children: children * 1000 / hz };
}
