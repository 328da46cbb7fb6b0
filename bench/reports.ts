// The reports benchmark, run by bench/run.ts on the same server and database: 500,000 time
// entries (50 projects × the organization's 1,000 members, over a year), seeded by the owner in one
// statement; then rpt_time_by_project over the year: the run's duration (createReportRun to
// succeeded, the in-process worker), getReportResults pages (autocannon, p99), and the CSV
// download (MB/s) next to COPY … TO STDOUT WITH CSV of the same rows in BENCH_REPORT_DOWNLOAD_ROUNDS
// (7) rounds, with the server's peak RSS during the first download sampled every 20 ms.
import autocannon from 'autocannon';
import postgres from 'postgres';
import { serverRssKb, logger, type BenchOptions, type BenchResult } from './common.ts';

const log = logger('reports');
const ENTRIES = Number(process.env.BENCH_REPORT_ENTRIES ?? 500_000);
const PROJECTS = 50;
const MIB = 1024 * 1024;
const DOWNLOAD_ROUNDS = Number(process.env.BENCH_REPORT_DOWNLOAD_ROUNDS ?? 7);

/** The run's stored rows as PostgreSQL's CSV, columns in the run's order: bytes and milliseconds. */
async function copyCsv(url: string, runId: string, columns: string[]): Promise<{ bytes: number; ms: number }> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const cols = columns.map((c) => `x.data->>'${c.replaceAll("'", "''")}' as "${c.replaceAll('"', '""')}"`).join(', ');
    const t0 = process.hrtime.bigint();
    const stream = await sql.unsafe(`copy (select ${cols} from app.report_results x where x.run_id = '${runId}' order by x.organization_id, x.run_id, x.n)
      to stdout with (format csv, header)`).readable();
    let bytes = 0;
    let lines = 0;
    for await (const part of stream as AsyncIterable<Buffer>) {
      bytes += part.length;
      for (let i = part.indexOf(10); i >= 0; i = part.indexOf(10, i + 1)) lines++; // as the download is read
    }
    if (lines < 1) throw new Error('COPY gave no rows');
    return { bytes, ms: Number(process.hrtime.bigint() - t0) / 1e6 };
  } finally {
    await sql.end();
  }
}

export async function runReportBench(o: BenchOptions & { serverGroup?: number }): Promise<BenchResult> {
  const auth = { authorization: `Bearer ${o.token}` };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${o.base}${path}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json',
      'idempotency-key': `reports-bench-${Date.now()}-${Math.random()}` }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<any>;
  };
  const projects: string[] = [];
  for (let i = 0; i < PROJECTS; i++) projects.push((await post('/v1/projects', { code: `RPT${i}-${Date.now() % 100000}`, name: `Report project ${i}` })).id);
  const sql = postgres(o.url, { max: 1, onnotice: () => {} });
  try {
    log(`seeding ${ENTRIES} time entries`);
    const t0 = Date.now();
    await sql.begin(async (tx) => {
      await tx`set local session_replication_role = replica`;
      await tx`insert into app.time_entries (organization_id, member_id, project_id, work_date, minutes, billable, status, created_by_client_id)
        select c.organization_id, m.ids[1 + g % cardinality(m.ids)], (${projects}::text[])[1 + (g / 1000) % ${PROJECTS}::int],
               date '2025-11-24' + (g % 365), 15 + (g % 8) * 15, g % 3 <> 0, 'draft', c.id
          from app.api_clients c,
               (select array_agg(id order by id) as ids from app.members where organization_id = (select organization_id from app.api_clients where id = ${o.clientId})) m,
               generate_series(1, ${ENTRIES}::int) g
         where c.id = ${o.clientId}`;
    });
    await sql`analyze app.time_entries`;
    log(`seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  } finally {
    await sql.end();
  }

  const failed: string[] = [];
  log('rpt_time_by_project over the year');
  const t0 = process.hrtime.bigint();
  const created = await post('/v1/reports/rpt_time_by_project/runs', { parameters: { from: '2025-11-24', to: '2026-11-23' }, format: 'csv' });
  let runDoc: any;
  for (;;) {
    runDoc = await (await fetch(`${o.base}/v1/reports/rpt_time_by_project/runs/${created.id}`, { headers: auth })).json();
    if (runDoc.status === 'succeeded' || runDoc.status === 'failed') break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const runMs = Number(process.hrtime.bigint() - t0) / 1e6;
  if (runDoc.status !== 'succeeded') { failed.push('report run'); return { failed, markdown: `### Reports: the run failed: ${JSON.stringify(runDoc.error)}\n` }; }

  log('getReportResults pages (autocannon)');
  const pages = await autocannon({ url: `${o.base}/v1/reports/rpt_time_by_project/runs/${created.id}/results?limit=100`, headers: auth,
    connections: o.connections, duration: o.duration });
  if (pages.non2xx || pages.errors) failed.push('report results');

  log(`CSV download next to COPY of the same rows, ${DOWNLOAD_ROUNDS} rounds`);
  const d = await post(`/v1/reports/rpt_time_by_project/runs/${created.id}/download`, {});
  const before = o.serverGroup ? serverRssKb(o.serverGroup) : 0;
  let peak = before;
  const download = async () => {
    const t1 = process.hrtime.bigint();
    const res = await fetch(d.download_url);
    let bytes = 0;
    let lines = 0;
    let header = '';
    for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) {
      if (!header.includes('\r\n')) header += Buffer.from(part).toString('utf8');
      bytes += part.length;
      // Native search: a byte-by-byte loop here cost the bench more CPU than the server spent.
      for (let i = part.indexOf(10); i >= 0; i = part.indexOf(10, i + 1)) lines++;
    }
    if (lines !== runDoc.row_count + 1) failed.push('report download');
    return { bytes, ms: Number(process.hrtime.bigint() - t1) / 1e6, columns: header.split('\r\n')[0]!.split(',') };
  };
  // Rounds of the download then PostgreSQL's own CSV of the same stored rows (the yardstick: COPY
  // as the owner over TCP, read to the end by this process as the download is); the ratio is the
  // median of the rounds' own (this machine drifts, and a round's two halves drift together).
  const rounds: { api: { bytes: number; ms: number }; copy: { bytes: number; ms: number } }[] = [];
  for (let r = 0; r < DOWNLOAD_ROUNDS; r++) {
    const sampler = o.serverGroup && r === 0 ? setInterval(() => { peak = Math.max(peak, serverRssKb(o.serverGroup!)); }, 20) : undefined;
    const api = await download();
    if (sampler) clearInterval(sampler);
    rounds.push({ api, copy: await copyCsv(o.url, created.id, api.columns) });
  }
  const mbps = (x: { bytes: number; ms: number }) => x.bytes / MIB / (x.ms / 1000);
  const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); const m = Math.floor(s.length / 2); return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2; };
  const ratios = rounds.map((x) => mbps(x.api) / mbps(x.copy));
  const apiMBps = median(rounds.map((x) => mbps(x.api)));
  const copyMBps = median(rounds.map((x) => mbps(x.copy)));
  const bytes = rounds[0]!.api.bytes;
  const copyBytes = rounds[0]!.copy.bytes;

  const markdown = [
    `### Reports (issue 16): rpt_time_by_project over ${ENTRIES.toLocaleString('en')} time entries (a year, ${PROJECTS} projects × 1,000 members)`,
    '',
    '| measure | figure |',
    '|---|---|',
    `| run: createReportRun → succeeded (worker in the server process) | ${(runMs / 1000).toFixed(2)} s, ${runDoc.row_count.toLocaleString('en')} rows |`,
    `| getReportResults?limit=100, ${o.connections} connections, ${o.duration} s | ${Math.round(pages.requests.average)} req/s, p50 ${pages.latency.p50} ms, p99 ${pages.latency.p99} ms |`,
    `| CSV download (median of ${DOWNLOAD_ROUNDS}) | ${(bytes / MIB).toFixed(1)} MiB at ${apiMBps.toFixed(1)} MB/s |`,
    `| \`COPY (…) TO STDOUT WITH (FORMAT csv, HEADER)\` of the same rows (median of ${DOWNLOAD_ROUNDS}) | ${(copyBytes / MIB).toFixed(1)} MiB at ${copyMBps.toFixed(1)} MB/s |`,
    `| CSV download ÷ COPY (median of the rounds' ratios; range) | **${median(ratios).toFixed(2)}** (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}; aim ≥ 0.5) |`,
    `| server RSS during the first download | ${o.serverGroup ? `${Math.round(before / 1024)} MiB before, peak ${Math.round(peak / 1024)} MiB (+${Math.round((peak - before) / 1024)} MiB)` : 'not measured'} |`,
    '',
  ].join('\n');
  return { failed, markdown };
}
