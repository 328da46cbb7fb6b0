// The agents and runs benchmark, run by bench/run.ts on the same server and database:
//   1. latency: createAgentRun of agt_echo (a no-op agent) → run.completed read on its event
//      stream, 10 at a time, 300 runs, p50/p99 (the server's in-process worker executes them);
//   2. throughput: 2,000 queued echo runs drained by the server's worker (runs completed per
//      second), next to graphile-worker's own rate for 2,000 no-op jobs on a runner of the same
//      concurrency, in this process, on the same database;
//   3. 500 concurrent idle streams: database connections of the server's login and its RSS,
//      before and with the streams open.
import postgres from 'postgres';
import { graphileNoopJobsPerSecond, serverRssKb, logger, type BenchOptions, type BenchResult } from './common.ts';

const log = logger('agents');
const LATENCY_RUNS = 300;
const LATENCY_CONCURRENCY = 10;
const DRAIN_RUNS = 2000;
const IDLE_STREAMS = 500;
const WORKER_CONCURRENCY = Number(process.env.SVC_WORKER_CONCURRENCY ?? 16);

const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]!; };

export async function runAgentBench(o: BenchOptions & { serverGroup?: number }): Promise<BenchResult> {
  const failed: string[] = [];
  const auth = { authorization: `Bearer ${o.token}` };
  const sql = postgres(o.url, { max: 4, onnotice: () => {} });
  try {
    // 1. Latency: create → run.completed on the stream.
    log(`latency: ${LATENCY_RUNS} echo runs, ${LATENCY_CONCURRENCY} at a time`);
    const latencies: number[] = [];
    let next = 0;
    const one = async () => {
      const t0 = process.hrtime.bigint();
      const created = await fetch(`${o.base}/v1/agents/agt_echo/runs`, { method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': `agents-bench-${Date.now()}-${Math.random()}` },
        body: JSON.stringify({ input: { message: 'bench' } }) });
      if (created.status !== 202) throw new Error(`createAgentRun: ${created.status} ${await created.text()}`);
      const { id } = await created.json() as { id: string };
      const res = await fetch(`${o.base}/v1/runs/${id}/events`, { headers: auth });
      const text = await res.text(); // the stream ends after the terminal event
      if (!text.includes('event: run.completed')) throw new Error(`no run.completed for ${id}: ${text.slice(0, 200)}`);
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
    };
    await Promise.all(Array.from({ length: LATENCY_CONCURRENCY }, async () => {
      while (next++ < LATENCY_RUNS) await one().catch((e) => { failed.push('run latency'); log(String(e)); });
    }));

    // 2. Throughput: queued echo runs drained by the server's worker, then graphile-worker's own no-op rate.
    log(`throughput: ${DRAIN_RUNS} queued echo runs`);
    const org = (await sql<{ org: string }[]>`select organization_id as org from app.api_clients where id = ${o.clientId}`)[0]!.org;
    const t1 = process.hrtime.bigint();
    await sql.begin(async (tx) => {
      const ids = await tx<{ id: string }[]>`
        insert into app.runs (organization_id, kind, agent_id, agent_version, client_id, input)
        select ${org}, 'agent', 'agt_echo', '1.0.0', ${o.clientId}, '{"message":"drain"}' from generate_series(1, ${DRAIN_RUNS}::int)
        returning id`;
      // As the owner, outside a request: queue_agent_run reads the request's organization, so the job is
      // queued as it does, naming the organization itself.
      await tx`select app_private.queue_job(${org}, 'agent_run', json_build_object('run_id', id), null, 3)
                 from unnest(${ids.map((r) => r.id)}::text[]) id`;
    });
    for (;;) {
      const [left] = await sql<{ n: number }[]>`select count(*)::int as n from app.runs where organization_id = ${org} and input = '{"message":"drain"}' and status <> 'succeeded'`;
      if (left!.n === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const drainS = Number(process.hrtime.bigint() - t1) / 1e9;
    const runsPerS = DRAIN_RUNS / drainS;

    log(`graphile-worker no-op: ${DRAIN_RUNS} jobs, concurrency ${WORKER_CONCURRENCY}`);
    const noopPerS = await graphileNoopJobsPerSecond(o.url, DRAIN_RUNS, WORKER_CONCURRENCY);

    // 3. Idle streams: runs that stay queued (no job), one stream each.
    log(`${IDLE_STREAMS} idle streams`);
    const idle = await sql<{ id: string }[]>`
      insert into app.runs (organization_id, kind, agent_id, agent_version, client_id, input)
      select ${org}, 'agent', 'agt_echo', '1.0.0', ${o.clientId}, '{"message":"idle"}' from generate_series(1, ${IDLE_STREAMS}::int) returning id`;
    const connections = async () => (await sql<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity where usename = 'svc_runtime' and datname = current_database()`)[0]!.n;
    const connBefore = await connections();
    const rssBefore = o.serverGroup ? serverRssKb(o.serverGroup) : 0;
    const ctrl = new AbortController();
    const streams = await Promise.all(idle.map(async ({ id }) => {
      const res = await fetch(`${o.base}/v1/runs/${id}/events`, { headers: auth, signal: ctrl.signal });
      const reader = res.body!.getReader();
      await reader.read(); // retry: line
      return reader;
    }));
    await new Promise((r) => setTimeout(r, 2000));
    const connOpen = await connections();
    const rssOpen = o.serverGroup ? serverRssKb(o.serverGroup) : 0;
    ctrl.abort();
    await Promise.allSettled(streams.map((r) => r.cancel()));
    await sql`delete from app.runs where organization_id = ${org} and input in ('{"message":"idle"}', '{"message":"drain"}')`;

    const markdown = [
      '### Agents and runs (issue 17)', '',
      `agt_echo (a no-op agent) on the server's in-process worker (concurrency ${WORKER_CONCURRENCY}); ${LATENCY_RUNS} runs, ${LATENCY_CONCURRENCY} at a time.`, '',
      '| measure | value |', '|---|---|',
      `| createAgentRun → run.completed on the stream, p50 | ${pct(latencies, 0.5).toFixed(1)} ms |`,
      `| createAgentRun → run.completed on the stream, p99 | ${pct(latencies, 0.99).toFixed(1)} ms |`,
      `| runs completed per second (${DRAIN_RUNS} queued echo runs) | ${runsPerS.toFixed(0)} |`,
      `| graphile-worker no-op jobs per second (same concurrency, same database) | ${noopPerS.toFixed(0)} |`,
      `| ratio runs / no-op jobs | ${(runsPerS / noopPerS).toFixed(2)} |`,
      `| svc_runtime connections: before / with ${IDLE_STREAMS} idle streams | ${connBefore} / ${connOpen} |`,
      `| server RSS: before / with ${IDLE_STREAMS} idle streams | ${(rssBefore / 1024).toFixed(0)} / ${(rssOpen / 1024).toFixed(0)} MiB |`,
      '',
    ].join('\n');
    return { markdown, failed };
  } finally {
    await sql.end();
  }
}
