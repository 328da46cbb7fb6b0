// One node next to the 3-node Citus cluster (scripts/citus.ts: a coordinator and
// two workers on this machine, 32 shards), each with a database of its own seeded alike and an
// API process of its own (bench/scale.ts' spawnApi). Part `citus` of `make bench`; without Citus
// here it says why and is skipped.
//
// - The list's latency as the data grows: GET /v1/tasks?limit=50 (the benchmarked organization's
//   first page), one request at a time, p50 and p95 of LATENCY_REQUESTS after a warm-up, at
//   1 organization with 10,000 tasks, 100 organizations (99 more with 1,000 tasks each), 1,000
//   organizations (900 more with 100 each), and the benchmarked one grown to 1,000,000 tasks.
//   On the cluster, once more at the first stage through the coordinator (an API process with
//   SVC_CLUSTER_DIRECT=off) and without the organization's shard views (the list through the view
//   function, as before them).
// - Throughput at 1,000 organizations (before the growth): GET /v1/tasks?limit=50, GET /v1/me and
//   POST /v1/tasks (a fresh Idempotency-Key per request) with autocannon (on the cluster, also
//   through the coordinator), then each next to pgbench replaying the SQL it sent (bench/ratio.ts;
//   on the cluster, the coordinator's calls).
//
// Env: BENCH_CITUS_TARGETS (one, cluster; default both), BENCH_CITUS_REQUESTS (200),
// BENCH_CITUS_GROWN (1,000,000), BENCH_CITUS_FIRST (1: the first stage alone).
//
// Rows of the big stages are loaded with triggers and foreign-key checks off (as bench/tasks.ts
// does for the other organizations): the benchmarked organization's first 10,000 pass every
// trigger. On the cluster the setting reaches the workers' sessions through SET LOCAL propagation,
// which only the bench's superuser session uses.
import autocannon, { type Options as LoadOptions, type Result } from 'autocannon';
import postgres from 'postgres';
import { randomUUID } from 'node:crypto';
import { citusMissing, startCluster, createClusterDatabase, dropClusterDatabase, type Cluster } from '../scripts/citus.ts';
import { migrate, withDatabase } from '../scripts/db.ts';
import { editDatabaseUrl } from '../src/db/url.ts';
import { cli, logger, ms, type BenchResult } from './common.ts';
import { spawnApi, stopApi, type Api } from './scale.ts';
import { runRatioBench } from './ratio.ts';

const log = logger('citus');
const DATABASE = 'svc_bench_scale';
const LATENCY_REQUESTS = Number(process.env.BENCH_CITUS_REQUESTS ?? 200);
const GROWN = Number(process.env.BENCH_CITUS_GROWN ?? 1_000_000);
const PATH = '/v1/tasks?limit=50';

interface Options { serverRoot: string; connections: number; duration: number; warmup: number }
interface Stage { name: string; p50: number; p95: number }
interface Throughput { name: string; result: Result }
interface Figures { target: string; stages: Stage[]; throughput: Throughput[]; seeding: string[]; ratio: BenchResult }

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))]!;
};

class Target {
  private readonly sql: postgres.Sql;
  private workflow = new Map<string, string>();
  constructor(readonly name: string, readonly url: string, readonly citus: boolean) {
    this.sql = postgres(url, { max: 1, onnotice: () => {} });
  }
  close() { return this.sql.end(); }

  async organizations(count: number): Promise<string[]> {
    for (let i = 0; i < count; i++) {
      await this.sql`select control.org_create(${`Scale Organization ${randomUUID().slice(0, 8)}`}, 'business', 'Europe/Berlin', 'EUR',
                                               'en-GB', 'https://app.svc.example')`;
    }
    const rows = await this.sql<{ id: string; workflow_id: string }[]>`
      select o.id, w.id as workflow_id from app.organizations o
        join app.task_workflows w on w.organization_id = o.id and w.is_default`;
    for (const r of rows) this.workflow.set(r.id, r.workflow_id);
    return rows.map((r) => r.id);
  }

  /** `count` tasks more in one project of `org` (made on first use), with triggers on or off. */
  async tasks(org: string, count: number, from: number, triggers: boolean): Promise<void> {
    await this.sql.begin(async (tx) => {
      if (!triggers) {
        if (this.citus) await tx`set local citus.propagate_set_commands = 'local'`;
        await tx`set local session_replication_role = replica`;
      }
      let [project] = await tx<{ id: string }[]>`select id from app.projects where organization_id = ${org} and code = 'SCALE'`;
      project ??= (await tx<{ id: string }[]>`
        insert into app.projects (organization_id, code, name, currency) values (${org}, 'SCALE', 'Scale project', 'EUR') returning id`)[0]!;
      // created_at one minute apart: the keyset index orders distinct values.
      await tx`
        insert into app.tasks (organization_id, project_id, workflow_id, name, status, priority, due_at, created_at, updated_at)
        select ${org}, ${project.id}, ${this.workflow.get(org)!}, format('Task %s', g), 'todo',
               (array['low', 'medium', 'high', 'urgent'])[1 + g % 4],
               now() + make_interval(days => g % 90), now() - make_interval(mins => g), now() - make_interval(mins => g)
          from generate_series(${from}::int, ${from + count - 1}::int) g`;
    });
  }

  async analyze() { await this.sql`analyze`; }

  /** bench/ratio.ts finds a request's statements in the server's log by `user@database`, with its
   * parameters in a DETAIL line (the test cluster's nodes log tersely: scripts/citus.ts). */
  async logUsersAndDatabases() {
    const [settings] = await this.sql<{ prefix: string; verbosity: string }[]>`
      select current_setting('log_line_prefix') as prefix, current_setting('log_error_verbosity') as verbosity`;
    if (settings!.prefix.includes('%u@%d') && settings!.verbosity !== 'terse') return;
    log(`${this.name}: log_line_prefix '%m [%p] %q%u@%d ' and log_error_verbosity default (ALTER SYSTEM)`);
    await this.sql`alter system set log_line_prefix = '%m [%p] %q%u@%d '`;
    await this.sql`alter system set log_error_verbosity = 'default'`;
    await this.sql`select pg_reload_conf()`;
    await new Promise((r) => setTimeout(r, 500));
  }

  async project(org: string): Promise<string> {
    return (await this.sql<{ id: string }[]>`select id from app.projects where organization_id = ${org} and code = 'SCALE'`)[0]!.id;
  }

  /** The organization's shard views dropped on its worker (the list reads the view function). */
  async withoutShardViews(org: string, workers: string[]): Promise<() => Promise<void>> {
    const [g] = await this.sql<{ shard: string }[]>`select get_shard_id_for_distribution_column('app.organizations', ${org}::text)::text as shard`;
    const database = new URL(this.url).pathname.slice(1);
    for (const w of workers) {
      const node = postgres(editDatabaseUrl(w, { database }), { max: 1, onnotice: () => {} });
      try {
        await node.unsafe(`set citus.enable_ddl_propagation = off; drop schema if exists api_shard_${g!.shard} cascade`);
      } finally {
        await node.end();
      }
    }
    return async () => { await this.sql`select app_private.citus_refresh_shard_views()`; };
  }
}

const basic = (c: { id: string; secret: string }) =>
  'Basic ' + Buffer.from(`${encodeURIComponent(c.id)}:${encodeURIComponent(c.secret)}`).toString('base64');

async function tokenFor(api: Api, client: { id: string; secret: string }): Promise<string> {
  const res = await fetch(`${api.base}/oauth/token`, {
    method: 'POST', body: 'grant_type=client_credentials&scope=svc.api',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client) },
  });
  if (res.status !== 200) throw new Error(`POST /oauth/token: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** p50 and p95 of the list, one request at a time (after a tenth as many to warm up). */
async function latency(api: Api, token: string, name: string): Promise<Stage> {
  const times: number[] = [];
  for (let i = 0; i < LATENCY_REQUESTS + LATENCY_REQUESTS / 10; i++) {
    const t0 = process.hrtime.bigint();
    const res = await fetch(api.base + PATH, { headers: { authorization: `Bearer ${token}` } });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`${name}: GET ${PATH}: ${res.status} ${body.slice(0, 300)}`);
    if (i >= LATENCY_REQUESTS / 10) times.push(ms(t0));
  }
  const stage = { name, p50: percentile(times, 50), p95: percentile(times, 95) };
  log(`${name}: p50 ${stage.p50.toFixed(1)} ms, p95 ${stage.p95.toFixed(1)} ms`);
  return stage;
}

async function throughput(o: Options, api: Api, token: string, project: string): Promise<Throughput[]> {
  const auth = { authorization: `Bearer ${token}` };
  const cases: [string, LoadOptions][] = [
    [`GET ${PATH}`, { url: api.base + PATH, headers: auth }],
    ['GET /v1/me', { url: `${api.base}/v1/me`, headers: auth }],
    ['POST /v1/tasks', {
      url: `${api.base}/v1/tasks`, method: 'POST', headers: { ...auth, 'content-type': 'application/json' },
      requests: [{ setupRequest: (req: Record<string, unknown>) => ({ ...req,
        headers: { ...(req.headers as object), 'idempotency-key': randomUUID() },
        body: JSON.stringify({ project_id: project, name: 'Bench task' }) }) }],
    } as LoadOptions],
  ];
  const out: Throughput[] = [];
  for (const [name, opts] of cases) {
    await autocannon({ ...opts, connections: o.connections, duration: o.warmup });
    const result = await autocannon({ ...opts, connections: o.connections, duration: o.duration });
    log(`${name}: ${Math.round(result.requests.mean)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ${result.non2xx} non-2xx`);
    out.push({ name, result });
  }
  return out;
}

async function runOn(o: Options, target: Target, cluster?: Cluster): Promise<Figures> {
  const seeding: string[] = [];
  const timed = async (what: string, fn: () => Promise<unknown>) => {
    const t0 = process.hrtime.bigint();
    await fn();
    seeding.push(`${what}: ${(ms(t0) / 1000).toFixed(1)} s`);
    log(`${target.name}: ${what} in ${(ms(t0) / 1000).toFixed(1)} s`);
  };
  const { organization_id: org } = await cli(target.url, 'org', 'create', '--name', 'Scale Bench', '--plan', 'business',
    '--timezone', 'Europe/Berlin', '--currency', 'EUR', '--locale', 'en-GB') as { organization_id: string };
  const client = await cli(target.url, 'client', 'create', '--org', org, '--name', 'Scale bench client', '--license', 'manager',
    '--roles', 'member,manager') as { client_id: string; client_secret: string };
  await target.organizations(0);
  await timed('the benchmarked organization\'s 10,000 tasks (triggers on)', () => target.tasks(org, 10_000, 1, true));
  await target.analyze();
  const api = await spawnApi(target.url, { DB_POOL_SIZE: '10' });
  // On the cluster, a second API process sends every statement through the coordinator, as the
  // API did before it took each request to its organization's worker (SVC_CLUSTER_DIRECT=off).
  const viaCoordinator = cluster ? await spawnApi(target.url, { DB_POOL_SIZE: '10', SVC_CLUSTER_DIRECT: 'off' }) : undefined;
  try {
    const token = await tokenFor(api, { id: client.client_id, secret: client.client_secret });
    const stages: Stage[] = [];
    stages.push(await latency(api, token, '1 organization, 10,000 tasks'));
    if (viaCoordinator) stages.push(await latency(viaCoordinator, token, '1 organization, 10,000 tasks, through the coordinator (SVC_CLUSTER_DIRECT=off)'));
    if (cluster) {
      const restore = await target.withoutShardViews(org, cluster.workers);
      stages.push(await latency(api, token, '1 organization, 10,000 tasks, without its shard views (the view function)'));
      await restore();
    }
    // BENCH_CITUS_FIRST=1: the first stage's latencies alone (one node, the cluster directly and
    // through the coordinator), in minutes rather than the whole part's hour.
    if (process.env.BENCH_CITUS_FIRST === '1') return { target: target.name, stages, throughput: [], seeding, ratio: { markdown: '', failed: [] } };
    let others: string[] = [];
    await timed('99 organizations more, 1,000 tasks each (triggers off)', async () => {
      others = (await target.organizations(99)).filter((x) => x !== org);
      for (const other of others) await target.tasks(other, 1_000, 1, false);
    });
    await target.analyze();
    stages.push(await latency(api, token, '100 organizations'));
    await timed('900 organizations more, 100 tasks each (triggers off)', async () => {
      const all = (await target.organizations(900)).filter((x) => x !== org && !others.includes(x));
      for (const other of all) await target.tasks(other, 100, 1, false);
    });
    await target.analyze();
    stages.push(await latency(api, token, '1,000 organizations'));
    const project = await target.project(org);
    const through = await throughput(o, api, token, project);
    if (viaCoordinator) {
      through.push(...(await throughput(o, viaCoordinator, token, project))
        .map((x) => ({ ...x, name: `${x.name}, through the coordinator` })));
    }
    // Each request next to pgbench replaying the SQL it sent (on the cluster: the coordinator's
    // calls, so the API that sends them there). Only on the cluster this bench started: a server of
    // the user's keeps its settings.
    if (target.citus) await target.logUsersAndDatabases();
    const ratio = await runRatioBench({ url: target.url, base: (viaCoordinator ?? api).base, token, clientId: client.client_id,
      connections: o.connections, duration: o.duration, warmup: o.warmup }, [
      { name: `GET ${PATH}`, method: 'GET', path: PATH, status: 200 },
      { name: 'GET /v1/me', method: 'GET', path: '/v1/me', status: 200 },
      { name: 'POST /v1/tasks', method: 'POST', path: '/v1/tasks', status: 201,
        body: JSON.stringify({ project_id: project, name: 'Ratio bench task', priority: 'high' }) },
    ]);
    await timed(`the benchmarked organization grown to ${GROWN.toLocaleString('en')} tasks (triggers off)`, async () => {
      for (let from = 10_001; from <= GROWN; from += 100_000) await target.tasks(org, Math.min(100_000, GROWN - from + 1), from, false);
    });
    await target.analyze();
    stages.push(await latency(api, token, `1,000 organizations, ${GROWN.toLocaleString('en')} tasks in the benchmarked one`));
    return { target: target.name, stages, throughput: through, seeding, ratio };
  } finally {
    await stopApi(api);
    if (viaCoordinator) await stopApi(viaCoordinator);
  }
}

export async function runCitusBench(o: Options): Promise<BenchResult> {
  const missing = citusMissing();
  if (missing) {
    log(`skipped: ${missing}`);
    return { markdown: `### One node and a Citus cluster (issue 37): skipped, ${missing}\n`, failed: [] };
  }
  const figures: Figures[] = [];
  const failed: string[] = [];
  // BENCH_CITUS_TARGETS: one, cluster or both (default).
  const targets = (process.env.BENCH_CITUS_TARGETS ?? 'one,cluster').split(',').map((x) => x.trim());
  // One node: a database of its own on the bench's server.
  if (targets.includes('one')) {
    const root = postgres(o.serverRoot, { max: 1, onnotice: () => {} });
    await root.unsafe(`drop database if exists ${DATABASE} with (force)`);
    await root.unsafe(`create database ${DATABASE}`);
    await root.end();
    const url = withDatabase(o.serverRoot, DATABASE);
    await migrate(url);
    const target = new Target('one node', url, false);
    try {
      figures.push(await runOn(o, target));
    } catch (e) {
      log(`one node: ${e instanceof Error ? e.stack : String(e)}`);
      failed.push('citus: one node');
    } finally {
      await target.close();
    }
  }
  // The cluster: 32 shards (Citus's default; the tests use 8), its nodes logging statements and
  // their parameters (scripts/citus.ts; bench/ratio.ts reads them from the coordinator's log).
  process.env.CITUS_LOG_STATEMENTS ??= '1';
  const cluster = targets.includes('cluster') ? await startCluster() : undefined;
  if (cluster) try {
    process.env.CITUS_SHARD_COUNT ??= '32';
    const url = await createClusterDatabase(cluster, DATABASE);
    await migrate(url);
    const target = new Target('Citus, 3 nodes', url, true);
    try {
      figures.push(await runOn(o, target, cluster));
    } catch (e) {
      log(`cluster: ${e instanceof Error ? e.stack : String(e)}`);
      failed.push('citus: cluster');
    } finally {
      await target.close();
    }
    await dropClusterDatabase(cluster, DATABASE);
  } finally {
    await cluster.stop();
  }
  const stageNames = [...new Set(figures.flatMap((f) => f.stages.map((s) => s.name)))];
  const cell = (f: Figures, name: string) => {
    const s = f.stages.find((x) => x.name === name);
    return s ? `${s.p50.toFixed(1)} / ${s.p95.toFixed(1)}` : '—';
  };
  const opNames = [...new Set(figures.flatMap((f) => f.throughput.map((x) => x.name)))];
  const op = (f: Figures, name: string) => {
    const r = f.throughput.find((x) => x.name === name)?.result;
    return r ? `${Math.round(r.requests.mean)} (p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms${r.non2xx ? `, ${r.non2xx} non-2xx` : ''})` : '—';
  };
  for (const f of figures) {
    for (const t of f.throughput) if (t.result.non2xx || t.result.errors) failed.push(`citus: ${f.target} ${t.name}`);
    failed.push(...f.ratio.failed.map((x) => `citus: ${f.target} ${x}`));
  }
  return {
    failed,
    markdown: [
      '### One node and a Citus cluster (issue 37)',
      '',
      `GET ${PATH}, one request at a time: p50 / p95 ms of ${LATENCY_REQUESTS} after ${LATENCY_REQUESTS / 10} to warm up.`,
      '',
      `| data | ${figures.map((f) => f.target).join(' | ')} |`,
      `|---|${figures.map(() => '---:').join('|')}|`,
      ...stageNames.map((n) => `| ${n} | ${figures.map((f) => cell(f, n)).join(' | ')} |`),
      '',
      `At 1,000 organizations, ${o.connections} connections, ${o.duration} s after ${o.warmup} s (autocannon), req/s:`,
      '',
      `| request | ${figures.map((f) => f.target).join(' | ')} |`,
      `|---|${figures.map(() => '---:').join('|')}|`,
      ...opNames.map((n) => `| ${n} | ${figures.map((f) => op(f, n)).join(' | ')} |`),
      '',
      ...figures.map((f) => `- Seeding, ${f.target}: ${f.seeding.join('; ')}.`),
      '',
      ...figures.flatMap((f) => [`#### ${f.target}: each request next to its own SQL`, '', f.ratio.markdown.replace(/^### .*\n/, ''), '']),
    ].join('\n'),
  };
}
