// Scale-out benchmarks, run by bench/run.ts after the tasks part (it lists those tasks): GET
// /v1/tasks?limit=50 served by one API process, by two API processes at once (the load split
// between them), and by one API process whose connections go through PgBouncer in transaction
// pooling mode (named prepared statements off), with the same process direct and prepared
// statements off, so the pooler's cost and the statements' cost are told apart.
import autocannon, { type Result } from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { logger, type BenchOptions, type BenchResult } from './common.ts';
import { PGBOUNCER_BIN, startPgBouncer } from '../scripts/pgbouncer.ts';

const log = logger('scale');
const PATH = '/v1/tasks?limit=50';

const freePort = () => new Promise<number>((done) => {
  const srv = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = srv.address() as net.AddressInfo;
    srv.close(() => done(port));
  });
});

export interface Api { base: string; child: ChildProcess }

export async function spawnApi(url: string, env: Record<string, string>): Promise<Api> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, DATABASE_URL: url, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'silent', SVC_WORKER: 'off',
      RATE_LIMIT_REQUESTS: '1000000000', DB_POOL_SIZE: '20', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  const until = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error('an API process exited during start-up');
    try {
      if ((await fetch(`${base}/ready`)).ok) return { base, child };
    } catch { /* not yet */ }
    if (Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error('an API process did not become ready within 60 s');
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

export const stopApi = (api: Api) => new Promise<void>((done) => {
  if (api.child.exitCode !== null) { done(); return; }
  api.child.once('exit', () => done());
  api.child.kill('SIGTERM');
});

function load(base: string, token: string, connections: number, duration: number): Promise<Result> {
  return autocannon({ url: base + PATH, headers: { authorization: `Bearer ${token}` }, connections, duration });
}

/** Warm-up, then the measured run; several bases share the connections and run at once. */
async function measure(o: BenchOptions, name: string, bases: string[]) {
  const per = Math.max(1, Math.round(o.connections / bases.length));
  log(`${name}: warm-up ${o.warmup} s, then ${o.duration} s with ${per * bases.length} connections over ${bases.length} process(es)`);
  await Promise.all(bases.map((b) => load(b, o.token, per, o.warmup)));
  const results = await Promise.all(bases.map((b) => load(b, o.token, per, o.duration)));
  return {
    name,
    rps: results.reduce((n, r) => n + r.requests.mean, 0),
    p50: Math.max(...results.map((r) => r.latency.p50)),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    bad: results.reduce((n, r) => n + r.non2xx + r.errors + r.timeouts, 0),
  };
}

export async function runScaleBench(o: BenchOptions): Promise<BenchResult> {
  const rows: Awaited<ReturnType<typeof measure>>[] = [];
  const started: Api[] = [];
  try {
    const one = await spawnApi(o.url, {});
    started.push(one);
    rows.push(await measure(o, '1 API process', [one.base]));
    const two = await spawnApi(o.url, {});
    started.push(two);
    rows.push(await measure(o, '2 API processes', [one.base, two.base]));
    await Promise.all(started.splice(0).map(stopApi));

    const unprepared = await spawnApi(o.url, { SVC_DB_PREPARE: 'off' });
    started.push(unprepared);
    rows.push(await measure(o, '1 API process, direct, SVC_DB_PREPARE=off', [unprepared.base]));
    await Promise.all(started.splice(0).map(stopApi));
    if (PGBOUNCER_BIN) {
      const target = new URL(o.url);
      const pooler = await startPgBouncer(o.url, { svc_runtime: process.env.SVC_RUNTIME_DB_PASSWORD ?? 'svc_runtime' }, 20);
      try {
        const runtime = new URL(o.url);
        runtime.username = 'svc_runtime';
        runtime.password = process.env.SVC_RUNTIME_DB_PASSWORD ?? 'svc_runtime';
        runtime.host = `127.0.0.1:${pooler.port}`;
        runtime.pathname = target.pathname;
        const pooled = await spawnApi(o.url, { SVC_DB_PREPARE: 'off', RUNTIME_DATABASE_URL: runtime.toString() });
        started.push(pooled);
        rows.push(await measure(o, '1 API process through PgBouncer (transaction pooling, 20 server connections)', [pooled.base]));
      } finally {
        await Promise.all(started.splice(0).map(stopApi));
        pooler.stop();
      }
    } else {
      log('pgbouncer not installed (Debian package pgbouncer): skipping the pooled measurement');
    }
  } finally {
    await Promise.all(started.map(stopApi));
  }
  const base = rows[0]!.rps;
  const lines = [
    `### Scale-out (issue 12): GET ${PATH}, API processes without the in-process worker, ${o.connections} connections in all`,
    '',
    '| serving | req/s | × 1 process | p50 ms | p99 ms | non-2xx / errors |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.name} | ${Math.round(r.rps)} | ${(r.rps / base).toFixed(2)} | ${r.p50} | ${r.p99} | ${r.bad} |`),
  ];
  return { markdown: lines.join('\n') + '\n', failed: rows.filter((r) => r.bad > 0).map((r) => r.name) };
}
