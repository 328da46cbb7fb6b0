// Throughput as workers are added: part `scale-out` of `make bench`. Each PostgreSQL node of a Citus
// cluster (scripts/citus.ts: a coordinator and up to three workers on this machine) runs under a CPU
// quota of its own, the same for every node (a cgroup v1 `cpu` quota: QUOTA of one core), so that
// each is a small machine of its own; the API process and the load generator run outside the quotas,
// and their CPU is shown beside.
//
// Steps: the coordinator and one worker, ORGANIZATIONS organizations spread evenly over the shard
// groups (each an API Client, a project and TASKS tasks); then for 1, 2 and 3 workers (a worker
// added and rebalanced onto, as a DBA does:
// svc_bootstrap.add_node, then app_private.citus_add_worker as the deploy login; the quotas lifted
// while groups move) GET /v1/tasks?limit=50, GET /v1/me and POST /v1/tasks, every request from a
// random organization, with autocannon. Per step: requests/s, latency, the CPU each node spent per
// request (its cgroup's cpuacct.usage), the periods a quota held a node back (cpu.stat
// nr_throttled), and the CPU per request of the API process and of the load generator. Then a
// capacity model from the 3-worker step: the requests/s that 3, 10 and 30 workers of the same size
// would serve, and the resource that bounds each.
//
// Needs root (cgroups) and Citus; without either it says why and is skipped.
// Env: BENCH_SCALE_OUT_QUOTA (share of one core per node, default 0.2), BENCH_SCALE_OUT_ORGS (48),
// BENCH_SCALE_OUT_TASKS (200), BENCH_SCALE_OUT_CONNECTIONS (BENCH_CONNECTIONS), BENCH_DURATION,
// CITUS_SHARD_COUNT (24: 8 groups a worker at 3 workers).
import autocannon, { type Options as LoadOptions, type Result } from 'autocannon';
import postgres from 'postgres';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { citusMissing, citusPort, createClusterDatabase, prepareNewNode, startCitusNode } from '../scripts/citus.ts';
import { migrate, SUPERUSER_SESSION } from '../scripts/db.ts';
import type { EmbeddedHandle } from '../scripts/embedded-pg.ts';
import { editDatabaseUrl } from '../src/db/url.ts';
import { cli, clientToken, logger, machineTicks, type BenchResult } from './common.ts';
import { spawnApi, stopApi, type Api } from './scale.ts';

const log = logger('scale-out');
const DATABASE = 'svc_bench_scale_out';
const QUOTA = Number(process.env.BENCH_SCALE_OUT_QUOTA ?? 0.2);
const ORGANIZATIONS = Number(process.env.BENCH_SCALE_OUT_ORGS ?? 48);
const TASKS = Number(process.env.BENCH_SCALE_OUT_TASKS ?? 200);
const PERIOD_US = 20_000;
const CPU = '/sys/fs/cgroup/cpu';
const CPUACCT = '/sys/fs/cgroup/cpuacct';
const PATH = '/v1/tasks?limit=50';
/** Each case before the quotas, so that every session has seen every shard group (BENCH_SCALE_OUT_WARM). */
const WARM_SECONDS = Number(process.env.BENCH_SCALE_OUT_WARM ?? 10);

interface Options { connections: number; duration: number; warmup: number }
interface Tenant { org: string; token: string; project: string }
interface Node { name: string; handle: EmbeddedHandle; group: string }
/** What each node spends with no request (its background processes: autovacuum, Citus's
 * maintenance daemon), in µs of CPU per second. */
type Idle = Record<string, number>;

interface Measured {
  workers: number; request: string; rps: number; p50: number; p99: number; non2xx: number;
  /** Each node's CPU µs per request beyond its idle spending. */
  netUs: Record<string, number>;
  /** CPU µs per request: each node's, the API process's, the load generator's. */
  nodeUs: Record<string, number>; apiUs: number; loadUs: number;
  throttled: Record<string, number>; machineBusy: number;
}

/** Why cgroup quotas cannot be set here, or undefined. */
function cgroupsMissing(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root (a cgroup per node)';
  if (!existsSync(join(CPU, 'cpu.cfs_quota_us')) || !existsSync(join(CPUACCT, 'cpuacct.usage'))) return 'no cgroup v1 cpu and cpuacct hierarchies';
  return undefined;
}

/** A node's processes: its postmaster (postmaster.pid) and the postmaster's children. */
function processesOf(dataDir: string): number[] {
  const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n', 1)[0]);
  const children = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
    } catch { return false; }
  }).map(Number);
  return [postmaster, ...children];
}

/** The node's processes in a cgroup of its own in both hierarchies; backends it forks later follow. */
function confine(node: Node) {
  for (const root of [CPU, CPUACCT]) {
    const dir = join(root, node.group);
    if (!existsSync(dir)) mkdirSync(dir);
    for (const pid of processesOf(node.handle.dataDir)) {
      try { writeFileSync(join(dir, 'cgroup.procs'), String(pid)); } catch { /* exited */ }
    }
  }
  writeFileSync(join(CPU, node.group, 'cpu.cfs_period_us'), String(PERIOD_US));
}
const setQuota = (node: Node, share: number | undefined) =>
  writeFileSync(join(CPU, node.group, 'cpu.cfs_quota_us'), share === undefined ? '-1' : String(Math.round(share * PERIOD_US)));
const usageUs = (node: Node) => Number(readFileSync(join(CPUACCT, node.group, 'cpuacct.usage'), 'utf8')) / 1000;
const throttledPeriods = (node: Node) =>
  Number(/nr_throttled (\d+)/.exec(readFileSync(join(CPU, node.group, 'cpu.stat'), 'utf8'))?.[1] ?? 0);
function release(node: Node) {
  for (const root of [CPU, CPUACCT]) {
    const dir = join(root, node.group);
    if (!existsSync(dir)) continue;
    for (const pid of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
      try { writeFileSync(join(root, 'cgroup.procs'), pid); } catch { /* exited */ }
    }
    try { rmdirSync(dir); } catch { /* still busy: left for the next run */ }
  }
}

/** CPU µs (user + system) of a live process so far. */
function processUs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

async function seed(url: string, base: string): Promise<Tenant[]> {
  const sql = postgres(url, SUPERUSER_SESSION);
  const tenants: Tenant[] = [];
  try {
    // As many organizations in every shard group: an organization's requests all go to the node
    // that holds its group, and groups move whole, so lumps of organizations would make one node
    // the bound (a rebalance counts groups, not organizations). Organizations of a full group are
    // made and left unused.
    const groups = (await sql<{ n: number }[]>`select count(*)::int as n from pg_dist_shard where logicalrelid = 'app.organizations'::regclass`)[0]!.n;
    const perGroup = Math.max(1, Math.round(ORGANIZATIONS / groups));
    const inGroup = new Map<string, number>();
    for (let i = 0; tenants.length < perGroup * groups && i < 50 * ORGANIZATIONS; i++) {
      const { organization_id: org } = await cli(url, 'org', 'create', '--name', `Scale-out ${i}`, '--plan', 'business',
        '--timezone', 'Europe/Berlin', '--currency', 'EUR', '--locale', 'en-GB') as { organization_id: string };
      const shard = (await sql<{ shard: string }[]>`select get_shard_id_for_distribution_column('app.organizations', ${org}::text)::text as shard`)[0]!.shard;
      if ((inGroup.get(shard) ?? 0) >= perGroup) continue;
      inGroup.set(shard, (inGroup.get(shard) ?? 0) + 1);
      const client = await cli(url, 'client', 'create', '--org', org, '--name', 'Scale-out client', '--license', 'manager',
        '--roles', 'member,manager') as { client_id: string; client_secret: string };
      const project = await sql.begin(async (tx) => {
        const [workflow] = await tx<{ id: string }[]>`select id from app.task_workflows where organization_id = ${org} and is_default`;
        const [p] = await tx<{ id: string }[]>`
          insert into app.projects (organization_id, code, name, currency) values (${org}, 'SCALE', 'Scale-out project', 'EUR') returning id`;
        await tx`
          insert into app.tasks (organization_id, project_id, workflow_id, name, status, priority, created_at, updated_at)
          select ${org}, ${p!.id}, ${workflow!.id}, format('Task %s', g), 'todo', (array['low', 'medium', 'high', 'urgent'])[1 + g % 4],
                 now() - make_interval(mins => g), now() - make_interval(mins => g)
            from generate_series(1, ${TASKS}::int) g`;
        return p!.id;
      });
      tenants.push({ org, project, token: await clientToken(base, { id: client.client_id, secret: client.client_secret }) });
    }
    await sql`analyze`;
  } finally {
    await sql.end();
  }
  return tenants;
}

function cases(base: string, tenants: Tenant[]): [string, LoadOptions][] {
  const any = () => tenants[Math.floor(Math.random() * tenants.length)]!;
  const as = (path: string) => ({ url: base + path, requests: [{ setupRequest: (req: Record<string, unknown>) =>
    ({ ...req, headers: { ...(req.headers as object), authorization: `Bearer ${any().token}` } }) }] });
  return [
    [`GET ${PATH}`, as(PATH) as LoadOptions],
    ['GET /v1/me', as('/v1/me') as LoadOptions],
    ['POST /v1/tasks', {
      url: `${base}/v1/tasks`, method: 'POST',
      requests: [{ setupRequest: (req: Record<string, unknown>) => {
        const t = any();
        return { ...req, headers: { ...(req.headers as object), authorization: `Bearer ${t.token}`, 'content-type': 'application/json',
          'idempotency-key': randomUUID() }, body: JSON.stringify({ project_id: t.project, name: 'Scale-out task' }) };
      } }],
    } as LoadOptions],
  ];
}

async function idle(nodes: Node[], seconds: number): Promise<Idle> {
  const before = Object.fromEntries(nodes.map((n) => [n.name, usageUs(n)]));
  await new Promise((r) => setTimeout(r, seconds * 1000));
  return Object.fromEntries(nodes.map((n) => [n.name, (usageUs(n) - before[n.name]!) / seconds]));
}

async function measure(o: Options, api: Api, nodes: Node[], workers: number, tenants: Tenant[], quiet: Idle): Promise<Measured[]> {
  const out: Measured[] = [];
  for (const [request, opts] of cases(api.base, tenants)) {
    await autocannon({ ...opts, connections: o.connections, duration: o.warmup });
    const nodeBefore = Object.fromEntries(nodes.map((n) => [n.name, usageUs(n)]));
    const throttledBefore = Object.fromEntries(nodes.map((n) => [n.name, throttledPeriods(n)]));
    const apiBefore = processUs(api.child.pid!);
    const loadBefore = process.cpuUsage();
    const ticks = machineTicks();
    const started = process.hrtime.bigint();
    const result: Result = await autocannon({ ...opts, connections: o.connections, duration: o.duration });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const load = process.cpuUsage(loadBefore);
    const after = machineTicks();
    const n = Math.max(1, result.requests.total);
    const m: Measured = {
      workers, request, rps: result.requests.mean, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx + result.errors,
      nodeUs: Object.fromEntries(nodes.map((x) => [x.name, (usageUs(x) - nodeBefore[x.name]!) / n])),
      netUs: Object.fromEntries(nodes.map((x) => [x.name, Math.max(0, usageUs(x) - nodeBefore[x.name]! - (quiet[x.name] ?? 0) * seconds) / n])),
      throttled: Object.fromEntries(nodes.map((x) => [x.name, throttledPeriods(x) - throttledBefore[x.name]!])),
      apiUs: (processUs(api.child.pid!) - apiBefore) / n,
      loadUs: (load.user + load.system) / n,
      machineBusy: 1 - (after.idle - ticks.idle) / Math.max(1, after.total - ticks.total),
    };
    log(`${workers} worker(s), ${request}: ${Math.round(m.rps)} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms; µs/request (net of idle) ${
      Object.entries(m.nodeUs).map(([k, v]) => `${k} ${Math.round(v)} (${Math.round(m.netUs[k]!)})`).join(', ')}, API ${Math.round(m.apiUs)}, load ${Math.round(m.loadUs)}; machine ${(m.machineBusy * 100).toFixed(0)} % busy`);
    out.push(m);
  }
  return out;
}

/** Requests/s that `workers` workers of the quota's size would serve, from the measured CPU per
 * request: the coordinator's share is spent once per request, the workers' shares add up. */
function predict(m: Measured, workers: number): { rps: number; bound: string } {
  const coordinatorUs = m.netUs.coordinator ?? 0;
  const workerUs = Object.entries(m.netUs).filter(([k]) => k !== 'coordinator').reduce((a, [, v]) => a + v, 0);
  const capacity = QUOTA * 1e6;
  const byCoordinator = coordinatorUs > 0 ? capacity / coordinatorUs : Infinity;
  const byWorkers = workerUs > 0 ? (workers * capacity) / workerUs : Infinity;
  return byCoordinator < byWorkers
    ? { rps: byCoordinator, bound: `the coordinator (${Math.round(coordinatorUs)} µs a request)` }
    : { rps: byWorkers, bound: `the workers (${Math.round(workerUs)} µs a request in all)` };
}

export async function runScaleOutBench(o: Options): Promise<BenchResult> {
  const missing = citusMissing() ?? cgroupsMissing();
  if (missing) {
    log(`skipped: ${missing}`);
    return { markdown: `### Throughput as workers are added: skipped, ${missing}\n`, failed: [] };
  }
  process.env.CITUS_SHARD_COUNT ??= '24';
  const port = citusPort() + 10;
  const nodes: Node[] = [];
  const failed: string[] = [];
  let api: Api | undefined;
  const results: Measured[] = [];
  const idles: { workers: number; quiet: Idle }[] = [];
  try {
    for (const [i, name] of ['coordinator', 'worker1', 'worker2', 'worker3'].entries()) {
      const handle = await startCitusNode(`scale-out-${name}`, port + i);
      const node = { name, handle, group: `svc-bench-${name}` };
      confine(node);
      nodes.push(node);
    }
    const [coordinator, first, ...later] = nodes as [Node, Node, ...Node[]];
    const url = await createClusterDatabase({ coordinator: coordinator.handle.url, workers: [first.handle.url] }, DATABASE);
    await migrate(url);
    api = await spawnApi(url, { DB_POOL_SIZE: '20' });
    log(`seeding ${ORGANIZATIONS} organizations with ${TASKS} tasks each`);
    const tenants = await seed(url, api.base);
    const active = [coordinator, first];
    const deploy = postgres(editDatabaseUrl(url, { username: 'svc_deploy', password: process.env.SVC_DEPLOY_DB_PASSWORD ?? 'svc_deploy' }), { max: 1, onnotice: () => {} });
    try {
      for (let workers = 1; workers <= 3; workers++) {
        if (workers > 1) {
          const node = later[workers - 2]!;
          for (const n of nodes) setQuota(n, undefined);
          const t0 = Date.now();
          await prepareNewNode(node.handle.url, [DATABASE]);
          const admin = postgres(url, SUPERUSER_SESSION);
          await admin.unsafe(`call svc_bootstrap.add_node('127.0.0.1', ${new URL(node.handle.url).port})`).finally(() => admin.end());
          await deploy.unsafe(`call app_private.citus_add_worker('127.0.0.1', ${new URL(node.handle.url).port})`);
          // A moved shard has no statistics until autovacuum analyzes it (a minute or more):
          // a DBA's ANALYZE after the rebalance (docs/scaling.md, "Growing and shrinking the cluster").
          const analyze = postgres(url, SUPERUSER_SESSION);
          await analyze`analyze`.finally(() => analyze.end());
          confine(node);
          active.push(node);
          log(`${node.name} added and rebalanced onto in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
        }
        // The API reads the placements again within 2 s (src/db/cluster.ts). Each of its new
        // sessions on a node loads Citus's metadata and the catalog of the shards it reads, many
        // milliseconds each: they warm up before the quotas, which would make that the figure.
        await new Promise((r) => setTimeout(r, 3000));
        for (const [, opts] of cases(api.base, tenants)) await autocannon({ ...opts, connections: o.connections, duration: WARM_SECONDS });
        for (const n of nodes) setQuota(n, QUOTA);
        const quiet = await idle(active, 5);
        idles.push({ workers, quiet });
        log(`${workers} worker(s), idle: ${Object.entries(quiet).map(([k, v]) => `${k} ${Math.round(v / 1000)} ms/s`).join(', ')}`);
        results.push(...await measure(o, api, active, workers, tenants, quiet));
      }
    } finally {
      await deploy.end();
    }
  } catch (e) {
    log(e instanceof Error ? e.stack ?? e.message : String(e));
    failed.push('scale-out');
  } finally {
    if (api) await stopApi(api);
    for (const n of nodes) { setQuota(n, undefined); release(n); }
    if (!process.env.BENCH_SCALE_OUT_KEEP) for (const n of nodes.reverse()) await n.handle.stop();
  }
  for (const m of results) if (m.non2xx > 0) failed.push(`scale-out: ${m.workers} worker(s) ${m.request}`);
  const requests = [...new Set(results.map((m) => m.request))];
  const at = (w: number, r: string) => results.find((m) => m.workers === w && m.request === r);
  const us = (x: number | undefined) => (x === undefined ? '—' : Math.round(x).toLocaleString('en'));
  const lines = [
    '### Throughput as workers are added (bench/scale-out.ts)',
    '',
    `Each PostgreSQL node under a CPU quota of ${QUOTA} core (cgroup v1, period ${PERIOD_US / 1000} ms); ${ORGANIZATIONS} organizations of ${TASKS} tasks, as many in every shard group, each request from a random one; ${o.connections} connections, ${o.duration} s after ${o.warmup} s (autocannon); ${process.env.CITUS_SHARD_COUNT} shards.`,
    '',
    '| request | 1 worker | 2 workers | 3 workers | 3 ÷ 1 |',
    '|---|---:|---:|---:|---:|',
    ...requests.map((r) => {
      const one = at(1, r)?.rps;
      const three = at(3, r)?.rps;
      return `| ${r} | ${[1, 2, 3].map((w) => { const m = at(w, r); return m ? `${Math.round(m.rps)} (p50 ${m.p50} ms)` : '—'; }).join(' | ')} | ${
        one && three ? (three / one).toFixed(2) : '—'} |`;
    }),
    '',
    `Each node's CPU with no request, ms a second (of the quota's ${QUOTA * 1000}): ${idles.map((i) => `${i.workers} worker(s): ${
      Object.entries(i.quiet).map(([k, v]) => `${k} ${(v / 1000).toFixed(1)}`).join(', ')}`).join('; ')}.`,
    '',
    'CPU µs per request, net of the idle spending (each node from its cgroup; the API process and the load generator, outside the quotas), and the quota periods in which a node was held back:',
    '',
    '| workers | request | coordinator | worker1 | worker2 | worker3 | API | load generator | throttled periods | machine busy |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---|---:|',
    ...results.map((m) => `| ${m.workers} | ${m.request} | ${['coordinator', 'worker1', 'worker2', 'worker3'].map((k) => us(m.netUs[k])).join(' | ')} | ${
      us(m.apiUs)} | ${us(m.loadUs)} | ${Object.entries(m.throttled).map(([k, v]) => `${k} ${v}`).join(', ')} | ${(m.machineBusy * 100).toFixed(0)} % |`),
    '',
    `Capacity model from the 3-worker step: workers of ${QUOTA} core each, a coordinator of the same size, API processes added as needed (one per core):`,
    '',
    '| request | 3 workers | 10 workers | 30 workers |',
    '|---|---:|---:|---:|',
    ...requests.map((r) => {
      const m = at(3, r);
      return `| ${r} | ${m ? [3, 10, 30].map((w) => { const p = predict(m, w); return `${Math.round(p.rps).toLocaleString('en')} (${p.bound})`; }).join(' | ') : '— | — | —'} |`;
    }),
    '',
  ];
  return { markdown: lines.join('\n'), failed };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await runScaleOutBench({ connections: Number(process.env.BENCH_SCALE_OUT_CONNECTIONS ?? process.env.BENCH_CONNECTIONS ?? 20),
    duration: Number(process.env.BENCH_DURATION ?? 10), warmup: 2 });
  console.log(r.markdown);
  if (r.failed.length) { console.error(`failed: ${r.failed.join(', ')}`); process.exit(1); }
}
