// The outbox and webhooks benchmarks, run by bench/run.ts on the same server (which runs the
// worker in-process, as `make start` does) and database:
//  - one endpoint of the benchmarked client, subscribed to project.created, pointing at a fast HTTPS
//    receiver in this process (loopback, the test CA; the server allow-lists `localhost`);
//  - history: WEBHOOK_HISTORY (20,000) projects with their events, deliveries and attempts written
//    before the measured phases, then ANALYZE (a server's tables are not empty; see below);
//  - steady load: projects committed one per transaction by the owner at WEBHOOK_RATE (500) per second
//    for WEBHOOK_STEADY_SECONDS, after WEBHOOK_WARMUP_SECONDS (3) at the same rate, not measured; end-to-end latency = receipt time - the event's created_at (the
//    transaction's start, so it includes the commit itself), p50/p99/max;
//  - through the API: createProject offered at WEBHOOK_RATE per second for WEBHOOK_API_SECONDS (10), after
//    WEBHOOK_WARMUP_SECONDS of the same through the API, not measured; open
//    loop; the rate served, and the time from each 201 answer to the receipt of its event;
//  - burst: WEBHOOK_BURST projects committed in one transaction; sustained deliveries per second =
//    events / (last receipt - first receipt), and the time from commit to the last receipt.
// Every delivery's signature is checked, and each event must arrive (at least once). Each steady
// event's receipt time, latency and id go to bench/results/webhooks-steady.txt (for finding stalls).
// Last, graphile-worker's own rate for as many no-op jobs as the burst has events, in the same run.
import https from 'node:https';
import { cpus } from 'node:os';
import http from 'node:http';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHmac, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import postgres from 'postgres';
import { cpuMs, graphileNoopJobsPerSecond } from './common.ts';

const TLS = new URL('../test/fixtures/tls/', import.meta.url);
export const BENCH_WEBHOOK_ENV = {
  SVC_WEBHOOK_ALLOWED_HOSTS: 'localhost',
  SVC_WEBHOOK_CA_FILE: new URL('ca.pem', TLS).pathname,
};
const RATE = Number(process.env.WEBHOOK_RATE ?? 500);
const STEADY_SECONDS = Number(process.env.WEBHOOK_STEADY_SECONDS ?? 15);
const WARMUP_SECONDS = Number(process.env.WEBHOOK_WARMUP_SECONDS ?? 3);
const API_SECONDS = Number(process.env.WEBHOOK_API_SECONDS ?? 10);
const BURST = Number(process.env.WEBHOOK_BURST ?? 10_000);
/** Delivered events already in the database before the measured phases (see the history step). */
const HISTORY = Number(process.env.WEBHOOK_HISTORY ?? 20_000);
const NOOP_JOBS = BURST;
const WORKER_CONCURRENCY = Number(process.env.SVC_WORKER_CONCURRENCY ?? 16);

export interface WebhookBenchOptions { url: string; base: string; token: string; clientId: string; serverGroup?: number }

/** The creates' client: node:http on kept-alive sockets (Node's fetch cost the bench ~1.4 ms of CPU
 * per request, on the two cores the API and PostgreSQL share; under overload it also opened new
 * connections and timed some out). */
const createsAgent = new http.Agent({ keepAlive: true, maxSockets: 512 });
function post(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }> {
  if (process.env.WEBHOOK_CLIENT === 'fetch') {
    return fetch(url, { method: 'POST', headers, body }).then(async (res) => ({ status: res.status, body: await res.text() }));
  }
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent: createsAgent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.setTimeout(30_000, () => req.destroy(new Error('no answer within 30 s')));
    req.on('error', reject);
    req.end(body);
  });
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;

export async function runWebhookBench(o: WebhookBenchOptions): Promise<{ markdown: string; failed: string[] }> {
  const log = (m: string) => process.stderr.write(`[bench:webhooks] ${m}\n`);
  let secret = '';
  const seen = new Map<string, number>(); // event id -> first receipt (ms)
  let requests = 0;
  let badSignatures = 0;
  const latencies: number[] = [];
  const steadyReceipts = new Map<string, number>();
  /** receipt time, latency and event id of each steady event, written to bench/results/webhooks-steady.txt. */
  const trace: string[] = [];
  /** Resource id -> first receipt, for the events of projects created through the API. */
  const receivedByResource = new Map<string, number>();
  const apiReceipts = new Map<string, number>();
  let phase: 'warmup' | 'steady' | 'api-warmup' | 'api' | 'burst' | 'idle' = 'idle';
  const burstTimes: number[] = [];
  const server = https.createServer({
    key: readFileSync(new URL('localhost.key', TLS)), cert: readFileSync(new URL('localhost.pem', TLS)), keepAlive: true,
  }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      const raw = Buffer.concat(chunks).toString('utf8');
      const body = JSON.parse(raw);
      if (body.type === 'webhook_endpoint.verification') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ challenge: body.data.challenge }));
        return;
      }
      requests++;
      const ts = String(req.headers['svc-webhook-timestamp']);
      const sig = String(req.headers['svc-webhook-signature']);
      const expected = 'v1=' + createHmac('sha256', secret).update(`${ts}.${raw}`).digest('hex');
      if (!sig.split(',').includes(expected)) badSignatures++;
      if (!seen.has(body.id)) {
        seen.set(body.id, now);
        if (phase === 'api') { receivedByResource.set(body.data.object.id, now); apiReceipts.set(body.id, now); }
        if (phase === 'steady') {
          latencies.push(now - Date.parse(body.created_at));
          steadyReceipts.set(body.id, now);
          trace.push(`${now} ${now - Date.parse(body.created_at)} ${body.id}`);
        }
        if (phase === 'burst') burstTimes.push(now);
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const sql = postgres(o.url, { max: 4, onnotice: () => {} });
  const failed: string[] = [];
  try {
    const [{ org }] = await sql`select organization_id as org from app.api_clients where id = ${o.clientId}` as any;
    // History first: a running server's tables are not empty, and its sessions' cached generic
    // plans were made for tables of their size. Planned against a fresh database's near-empty
    // tables, the key lookups of the fan-out and of recording attempts stay sequential scans until
    // autovacuum's next ANALYZE (up to a minute), which made the burst measure that race rather
    // than the fan-out (docs/benchmarks.md). Events written before the endpoint exists wait for no
    // fan-out; their deliveries and attempts are written directly, as delivered.
    if (HISTORY > 0) {
      log(`history: ${HISTORY} projects, events, delivered deliveries and attempts`);
      await sql`insert into app.projects (organization_id, code, name, currency)
        select ${org}, 'WHH' || g, 'webhook history', 'EUR' from generate_series(1, ${HISTORY}::int) g`;
    }
    const res = await fetch(`${o.base}/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${o.token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ url: `https://localhost:${port}/bench`, events: ['project.created'], description: 'bench' }),
    });
    const ep = await res.json() as { id: string; secret: string };
    if (res.status !== 201) throw new Error(`createWebhookEndpoint: ${res.status} ${JSON.stringify(ep)}`);
    secret = ep.secret;
    if (HISTORY > 0) {
      await sql`with ins as (
          insert into app.webhook_deliveries (organization_id, client_id, endpoint_id, event_id, attempt_count, status, completed_at)
          select e.organization_id, ${o.clientId}, ${ep.id}, e.id, 1, 'succeeded', e.created_at
            from app.events e where e.organization_id = ${org} and e.type = 'project.created'
          returning organization_id, id, completed_at)
        insert into app.webhook_delivery_attempts (organization_id, delivery_id, attempt, started_at, duration_ms, response_status)
        select organization_id, id, 1, completed_at, 3, 204 from ins`;
      await sql`analyze app.projects, app.events, app.webhook_deliveries, app.webhook_delivery_attempts`;
    }
    let n = 0;
    const insertOne = () => sql`insert into app.projects (organization_id, code, name, currency)
      values (${org}, ${'WH' + (++n)}, 'webhook bench', 'EUR')`;

    // Four producers, each committing one project at a time (as independent API requests would),
    // together on a fixed schedule of RATE per second.
    const produce = async (total: number) => {
      const t0 = Date.now();
      let next = 0;
      const producer = async () => {
        for (;;) {
          const i = next++;
          if (i >= total) return;
          const wait = t0 + (i * 1000) / RATE - Date.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          await insertOne();
        }
      };
      await Promise.all([producer(), producer(), producer(), producer()]);
      return (Date.now() - t0) / 1000;
    };
    // Warm-up at the same rate, not measured: the worker's first statements on new sessions plan
    // their functions, and its first requests open TLS connections (about a second, once).
    const warmTotal = Math.round(RATE * WARMUP_SECONDS);
    log(`warm-up: ${warmTotal} events at ${RATE}/s`);
    phase = 'warmup';
    await produce(warmTotal);
    const warmUntil = Date.now() + 30_000;
    while (seen.size < warmTotal && Date.now() < warmUntil) await new Promise((r) => setTimeout(r, 20));
    const warmReceived = seen.size;

    // Steady: one committed project every 1000/RATE ms.
    phase = 'steady';
    const steadyTotal = RATE * STEADY_SECONDS;
    log(`steady: ${steadyTotal} events at ${RATE}/s`);
    const produced = await produce(steadyTotal);
    const until = Date.now() + 60_000;
    while (seen.size < warmReceived + steadyTotal && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    const steadyReceived = seen.size - warmReceived;
    const sorted = [...latencies].sort((a, b) => a - b);
    mkdirSync('bench/results', { recursive: true }); // a fresh clone has none until run.ts writes its table
    writeFileSync('bench/results/webhooks-steady.txt', trace.join('\n') + '\n');
    const stages = await webhookStages(sql, ep.id, steadyReceipts);

    // Through the API: createProject offered at RATE per second on a fixed schedule (open loop: a
    // request is sent on time whether or not the earlier ones have answered), for API_SECONDS;
    // served rate = 201 answers / (last answer - first request); latency = 201 answer → receipt.
    // A warm-up through the API first, at the same rate and not measured: each of the server's
    // sessions plans the create's statements and PL/pgSQL functions on its first create (the
    // events' warm-up above went through SQL), and those first creates were the measured p99.
    phase = 'api-warmup';
    const apiWarmTotal = Math.round(RATE * WARMUP_SECONDS);
    log(`through the API, warm-up (not measured): ${apiWarmTotal} createProject at ${RATE}/s`);
    const w0 = Date.now();
    const warmSent: Promise<unknown>[] = [];
    let apiWarmAnswered = 0;
    for (let i = 0; i < apiWarmTotal; i++) {
      const wait = w0 + (i * 1000) / RATE - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      warmSent.push(post(`${o.base}/v1/projects`, {
        authorization: `Bearer ${o.token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID(),
      }, JSON.stringify({ code: `WAW${i}`, name: 'webhook bench via the API, warm-up' }))
        .then(({ status }) => { if (status === 201) apiWarmAnswered++; }, () => undefined));
    }
    await Promise.all(warmSent);
    await new Promise((r) => setTimeout(r, 2000)); // its deliveries arrive before the measured phase

    phase = 'api';
    const apiTotal = RATE * API_SECONDS;
    log(`through the API: ${apiTotal} createProject at ${RATE}/s, open loop`);
    const answeredAt = new Map<string, number>();
    /** Each create's own time, scheduled send → answer (open loop: the API's queueing shows here). */
    const createMs: number[] = [];
    let apiFailures = 0;
    const failureKinds = new Map<string, number>();
    const fail = (kind: string) => { apiFailures++; failureKinds.set(kind, (failureKinds.get(kind) ?? 0) + 1); };
    // CPU over the phase, each create with its delivery: what bounds the rate served on this machine.
    const cpu0 = cpuMs(o.serverGroup);
    const bench0 = process.cpuUsage();
    const a0 = Date.now();
    let lastAnswer = a0;
    const sent: Promise<void>[] = [];
    for (let i = 0; i < apiTotal; i++) {
      const wait = a0 + (i * 1000) / RATE - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const scheduled = a0 + (i * 1000) / RATE;
      const code = `WA${i}`;
      sent.push(post(`${o.base}/v1/projects`, {
        authorization: `Bearer ${o.token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID(),
      }, JSON.stringify({ code, name: 'webhook bench via the API' })).then(({ status, body: text }) => {
        const body = JSON.parse(text || '{}') as { id?: string; code?: string };
        lastAnswer = Date.now();
        createMs.push(lastAnswer - scheduled);
        if (status === 201 && body.id) answeredAt.set(body.id, lastAnswer);
        else fail(`${status} ${body.code ?? ''}`);
      }, (err) => fail(String((err as Error).message ?? err))));
    }
    await Promise.all(sent);
    createsAgent.destroy();
    const servedPerSecond = answeredAt.size / Math.max(0.001, (lastAnswer - a0) / 1000);
    const createSorted = [...createMs].sort((x, y) => x - y);
    const apiUntil = Date.now() + 60_000;
    const arrived = () => [...answeredAt.keys()].filter((id) => receivedByResource.has(id)).length;
    while (arrived() < answeredAt.size && Date.now() < apiUntil) await new Promise((r) => setTimeout(r, 50));
    const cpu1 = cpuMs(o.serverGroup);
    const benchCpu = process.cpuUsage(bench0);
    const perCreate = (ms: number) => (answeredAt.size ? (ms * 1000) / answeredAt.size : NaN); // µs
    const apiCpu = { server: perCreate(cpu1.server - cpu0.server), postgres: perCreate(cpu1.postgres - cpu0.postgres),
      bench: perCreate((benchCpu.user + benchCpu.system) / 1000) };
    const apiCpuTotal = apiCpu.server + apiCpu.postgres + apiCpu.bench;
    const apiLatencies = [...answeredAt].filter(([id]) => receivedByResource.has(id))
      .map(([id, at]) => receivedByResource.get(id)! - at).sort((x, y) => x - y);
    const apiStages = await webhookStages(sql, ep.id, apiReceipts);

    // Burst: one transaction, then drain.
    phase = 'burst';
    log(`burst: ${BURST} events in one transaction`);
    const before = seen.size;
    await sql`insert into app.projects (organization_id, code, name, currency)
      select ${org}, 'WHB' || g, 'webhook burst', 'EUR' from generate_series(1, ${BURST}::int) g`;
    const committed = Date.now();
    const until2 = Date.now() + 300_000;
    while (seen.size < before + BURST && Date.now() < until2) await new Promise((r) => setTimeout(r, 50));
    const burstReceived = seen.size - before;
    const first = Math.min(...burstTimes);
    const last = Math.max(...burstTimes);
    phase = 'idle';
    log(`graphile-worker no-op: ${NOOP_JOBS} jobs, concurrency ${WORKER_CONCURRENCY}`);
    const noopPerS = await graphileNoopJobsPerSecond(o.url, NOOP_JOBS, WORKER_CONCURRENCY);

    if (warmReceived < warmTotal) failed.push(`webhooks warm-up: ${warmTotal - warmReceived} events not delivered`);
    if (apiFailures) failed.push(`webhooks through the API: ${apiFailures} createProject not answered 201 (${[...failureKinds].map(([k, n]) => `${k}: ${n}`).join(', ')})`);
    if (apiLatencies.length < answeredAt.size) failed.push(`webhooks through the API: ${answeredAt.size - apiLatencies.length} events not delivered`);
    if (steadyReceived < steadyTotal) failed.push(`webhooks steady: ${steadyTotal - steadyReceived} events not delivered`);
    if (burstReceived < BURST) failed.push(`webhooks burst: ${BURST - burstReceived} events not delivered`);
    if (badSignatures) failed.push(`webhooks: ${badSignatures} bad signatures`);
    const [st] = await sql`select count(*) filter (where status = 'succeeded')::int as ok, count(*)::int as total
      from app.webhook_deliveries where endpoint_id = ${ep.id}`;
    return {
      failed,
      markdown: [
        '### Webhooks (outbox to receipt)',
        '',
        `One endpoint, a fast HTTPS receiver on loopback (answers 204 at once), worker in the server process (default settings: fan-out claims up to 50 events per statement, at most 64 first attempts open).`,
        '',
        '| Measure | Value |',
        '|---|---|',
        `| warm-up (not measured): ${warmTotal} events at ${RATE}/s: delivered | ${warmReceived} / ${warmTotal} |`,
        `| steady ${RATE} events/s for ${STEADY_SECONDS} s (produced in ${produced.toFixed(1)} s): delivered | ${steadyReceived} / ${steadyTotal} |`,
        `| commit → receipt p50 | ${pct(sorted, 0.5)} ms |`,
        `| commit → receipt p99 | ${pct(sorted, 0.99)} ms |`,
        `| commit → receipt max | ${sorted[sorted.length - 1]} ms |`,
        `| through the API: warm-up (not measured), ${apiWarmTotal} creates at ${RATE}/s | ${apiWarmAnswered} answered 201 |`,
        `| through the API: createProject offered at ${RATE}/s for ${API_SECONDS} s (open loop): served | ${answeredAt.size} / ${apiTotal}, **${servedPerSecond.toFixed(0)}/s** |`,
        `| through the API: 201 answer → receipt p50 / p99 / max | ${pct(apiLatencies, 0.5)} / **${pct(apiLatencies, 0.99)}** / ${apiLatencies[apiLatencies.length - 1]} ms |`,
        `| through the API: the create itself, scheduled send → answer, p50 / p99 | ${pct(createSorted, 0.5)} / ${pct(createSorted, 0.99)} ms |`,
        `| through the API: CPU per create with its delivery: server / PostgreSQL / this process (load and receiver) | ${apiCpu.server.toFixed(0)} / ${apiCpu.postgres.toFixed(0)} / ${apiCpu.bench.toFixed(0)} µs |`,
        `| through the API: the machine's ceiling, ${cpus().length} cores ÷ that CPU | ${(cpus().length * 1e6 / apiCpuTotal).toFixed(0)} creates/s |`,
        `| burst of ${BURST} events (one transaction): delivered | ${burstReceived} / ${BURST} |`,
        `| burst: sustained deliveries per second (first → last receipt) | ${Math.round(burstReceived / Math.max(0.001, (last - first) / 1000))} |`,
        `| graphile-worker's own no-op jobs per second (${NOOP_JOBS} jobs, concurrency ${WORKER_CONCURRENCY}, same database, same run) | ${noopPerS.toFixed(0)} |`,
        `| burst deliveries per second ÷ no-op jobs per second | **${(burstReceived / Math.max(0.001, (last - first) / 1000) / noopPerS).toFixed(2)}** |`,
        `| burst: commit → last receipt | ${((last - committed) / 1000).toFixed(1)} s |`,
        `| requests received / distinct events | ${requests} / ${seen.size} |`,
        `| deliveries succeeded / recorded | ${st!.ok} / ${st!.total} |`,
        `| bad signatures | ${badSignatures} |`,
        '',
        'Where the steady phase\'s time goes, per event (first attempt; database timestamps and the receipt time, one clock):',
        '',
        '| stage | p50 ms | p99 ms | max ms | mean over the slowest 1 % of events, ms |',
        '|---|---:|---:|---:|---:|',
        ...stages,
        '',
        'The same split for the events of the projects created through the API (the event\'s time is its create transaction\'s start):',
        '',
        '| stage | p50 ms | p99 ms | max ms | mean over the slowest 1 % of events, ms |',
        '|---|---:|---:|---:|---:|',
        ...apiStages,
        '',
      ].join('\n'),
    };
  } finally {
    await sql.end();
    server.closeAllConnections();
    server.close();
  }
}

/** The steady events' latency split into stages: the event's transaction start → the fan-out
 * (the delivery row's created_at: the fan-out transaction's start), → the first attempt's start,
 * → the receipt; and how the slowest 1 % of events (by total) split. */
async function webhookStages(sql: postgres.Sql, endpointId: string, receipts: Map<string, number>): Promise<string[]> {
  const rows = await sql<{ id: string; created: number; fanout: number; sent: number }[]>`
    select e.id, extract(epoch from e.created_at)::float8 * 1000 as created, extract(epoch from d.created_at)::float8 * 1000 as fanout,
           extract(epoch from a.started_at)::float8 * 1000 as sent
      from app.webhook_deliveries d
      join app.events e on e.organization_id = d.organization_id and e.id = d.event_id
      join app.webhook_delivery_attempts a on a.delivery_id = d.id and a.attempt = 1
     where d.endpoint_id = ${endpointId}`;
  const split = rows.filter((r) => receipts.has(r.id)).map((r) => {
    const receipt = receipts.get(r.id)!;
    return { fanout: r.fanout - r.created, send: r.sent - r.fanout, receipt: receipt - r.sent, total: receipt - r.created };
  });
  if (split.length === 0) return ['| (no attempts recorded) | | | | |'];
  const slowest = [...split].sort((a, b) => b.total - a.total).slice(0, Math.max(1, Math.ceil(split.length / 100)));
  const line = (name: string, k: 'fanout' | 'send' | 'receipt' | 'total') => {
    const v = split.map((x) => x[k]).sort((a, b) => a - b);
    const mean = slowest.reduce((n, x) => n + x[k], 0) / slowest.length;
    return `| ${name} | ${Math.round(pct(v, 0.5))} | ${Math.round(pct(v, 0.99))} | ${Math.round(v[v.length - 1]!)} | ${Math.round(mean)} |`;
  };
  return [line('event → fan-out (claimed)', 'fanout'), line('fan-out → first attempt starts', 'send'),
    line('attempt start → receipt', 'receipt'), line('total', 'total')];
}

