// Run event streams at scale, part `streams` of `make bench`, on the same server process.
//  - STREAMS_OPEN (1,000) streams of queued runs (no job: only this part appends their events),
//    across STREAMS_CLIENTS (40) API Clients of the bench organization, 25 each (the server's
//    per-client limit, SVC_STREAMS_PER_CLIENT), each client streaming its own runs;
//  - memory: the server's RSS before the streams opened and with all of them open, per stream;
//  - load: events appended by the owner through app_private.run_event (as the worker does), one per
//    transaction, spread over the runs in turn, offered open-loop at STREAMS_EVENT_RATE (200) per
//    second for STREAMS_SECONDS (15) after STREAMS_WARMUP_SECONDS (3) not measured;
//  - latency: the client's receipt minus the event's created_at (clock_timestamp() at its insert,
//    before the commit), so it is at least commit → receipt; p50/p99/max; every event must arrive.
import http from 'node:http';
import postgres from 'postgres';
import { cli, clientToken, logger, serverRssKb, type BenchOptions, type BenchResult } from './common.ts';

const log = logger('streams');
const OPEN = Number(process.env.STREAMS_OPEN ?? 1000);
const CLIENTS = Number(process.env.STREAMS_CLIENTS ?? 40);
const RATE = Number(process.env.STREAMS_EVENT_RATE ?? 200);
const SECONDS = Number(process.env.STREAMS_SECONDS ?? 15);
const WARMUP_SECONDS = Number(process.env.STREAMS_WARMUP_SECONDS ?? 3);
const APPENDERS = 8;

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;

/** One open event stream, parsed as it arrives: each event's id and created_at to `onEvent`. */
function openStream(base: string, token: string, runId: string, agent: http.Agent,
  onEvent: (runId: string, seq: number, createdAt: string) => void): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}/v1/runs/${runId}/events`, { agent, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`streamRunEvents ${runId}: ${res.statusCode}`));
        res.resume();
        return;
      }
      res.setEncoding('utf8');
      let buffer = '';
      let opened = false;
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!opened && block.startsWith('retry:')) { opened = true; resolve(req); continue; }
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (!data) continue; // a ping
          const e = JSON.parse(data) as { id: string; created_at: string };
          onEvent(runId, Number(e.id), e.created_at);
        }
      });
      res.on('error', () => {});
    });
    req.on('error', reject);
  });
}

export async function runStreamBench(o: BenchOptions & { serverGroup?: number }): Promise<BenchResult> {
  const failed: string[] = [];
  const sql = postgres(o.url, { max: APPENDERS + 1, onnotice: () => {} });
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const requests: http.ClientRequest[] = [];
  try {
    const org = (await sql<{ org: string }[]>`select organization_id as org from app.api_clients where id = ${o.clientId}`)[0]!.org;
    log(`${CLIENTS} clients, ${OPEN} queued runs`);
    const clients: { id: string; token: string }[] = [];
    for (let i = 0; i < CLIENTS; i++) {
      const c = await cli(o.url, 'client', 'create', '--org', org, '--name', `Stream bench client ${i}`, '--license', 'regular',
        '--roles', 'member') as { client_id: string; client_secret: string };
      clients.push({ id: c.client_id, token: await clientToken(o.base, { id: c.client_id, secret: c.client_secret }) });
    }
    const perClient = Math.ceil(OPEN / CLIENTS);
    const runs = await sql<{ id: string; client: number }[]>`
      insert into app.runs (organization_id, kind, agent_id, agent_version, client_id, input)
      select ${org}, 'agent', 'agt_echo', '1.0.0', (${clients.map((c) => c.id)}::text[])[1 + (g - 1) / ${perClient}::int], '{"message":"stream"}'
        from generate_series(1, ${OPEN}::int) g
      returning id, array_position(${clients.map((c) => c.id)}::text[], client_id) - 1 as client`;

    const received = new Map<string, number>(); // run:seq -> latency (ms)
    let phase: 'warmup' | 'measured' = 'warmup';
    const latencies: number[] = [];
    const onEvent = (runId: string, seq: number, createdAt: string) => {
      const latency = Date.now() - Date.parse(createdAt);
      const key = `${runId}:${seq}`;
      if (received.has(key)) return;
      received.set(key, latency);
      if (phase === 'measured') latencies.push(latency);
    };

    const rssBefore = o.serverGroup ? serverRssKb(o.serverGroup) : 0;
    log(`opening ${runs.length} streams`);
    const t0 = Date.now();
    // 50 at a time: a thousand handshakes at once would measure the listen backlog, not the streams.
    for (let i = 0; i < runs.length; i += 50) {
      requests.push(...await Promise.all(runs.slice(i, i + 50).map((r) => openStream(o.base, clients[r.client]!.token, r.id, agent, onEvent))));
    }
    const openMs = Date.now() - t0;
    await new Promise((r) => setTimeout(r, 2000));
    const rssOpen = o.serverGroup ? serverRssKb(o.serverGroup) : 0;
    const conns = (await sql<{ conns: number }[]>`
      select count(*)::int as conns from pg_stat_activity where usename = 'svc_runtime' and datname = current_database()`)[0]!.conns;

    // Open loop: an appender per tick, never waiting for the previous one.
    const sent = new Set<string>();
    let appendErrors = 0;
    let next = 0;
    const appendAt = async (measured: boolean) => {
      const run = runs[next++ % runs.length]!;
      try {
        const [row] = await sql<{ seq: number }[]>`select app_private.run_event(${org}, ${run.id}, 'run.progress', '{"bench":true}') as seq`;
        if (measured) sent.add(`${run.id}:${row!.seq}`);
      } catch (e) {
        appendErrors++;
        log(`append: ${(e as Error).message}`);
      }
    };
    const offer = async (seconds: number, measured: boolean) => {
      const pending: Promise<void>[] = [];
      const start = Date.now();
      const total = Math.round(seconds * RATE);
      for (let i = 0; i < total; i++) {
        const due = start + (i * 1000) / RATE;
        const wait = due - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        pending.push(appendAt(measured));
      }
      await Promise.all(pending);
    };
    log(`events: ${WARMUP_SECONDS} s warm-up, then ${SECONDS} s at ${RATE}/s over ${runs.length} streams`);
    await offer(WARMUP_SECONDS, false);
    await new Promise((r) => setTimeout(r, 1000));
    phase = 'measured';
    await offer(SECONDS, true);
    const deadline = Date.now() + 10_000;
    while ([...sent].some((k) => !received.has(k)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const lost = [...sent].filter((k) => !received.has(k)).length;
    if (lost || appendErrors) failed.push('streams');

    latencies.sort((a, b) => a - b);
    const perStreamKb = (rssOpen - rssBefore) / runs.length;
    const markdown = [
      `### Run event streams (issue 39): ${runs.length} open streams, ${CLIENTS} clients, ${RATE} events/s`, '',
      '| measure | value |', '|---|---|',
      `| streams opened (50 at a time) | ${runs.length} in ${openMs} ms |`,
      `| server RSS: before / with the streams open | ${(rssBefore / 1024).toFixed(0)} / ${(rssOpen / 1024).toFixed(0)} MiB |`,
      `| RSS per open stream | ${perStreamKb.toFixed(1)} KiB |`,
      `| svc_runtime connections with the streams open | ${conns} |`,
      `| events appended in ${SECONDS} s (one per transaction) / received / lost | ${sent.size} / ${sent.size - lost} / ${lost} |`,
      `| append errors | ${appendErrors} |`,
      `| event created_at → client receipt, p50 / p99 / max | ${pct(latencies, 0.5)} / ${pct(latencies, 0.99)} / ${latencies.at(-1) ?? NaN} ms (aim: p99 ≤ 50 ms) |`,
      '',
    ].join('\n');
    return { markdown, failed };
  } finally {
    for (const r of requests) r.destroy();
    agent.destroy();
    await sql`delete from app.runs where input = '{"message":"stream"}'`.catch(() => {});
    await sql.end();
  }
}
