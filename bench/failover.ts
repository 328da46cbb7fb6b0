// A real failover, timed: a primary with a synchronous streaming standby (PostgreSQL 15
// from Debian, test/helpers/replica.ts), the API with its in-process worker given both hosts with
// target_session_attrs=read-write, 4 readers and 4 writers; the primary is stopped hard
// (immediate), the standby promoted 2 s later. Measured: promotion → the first 2xx answer, and →
// the point after which every answer was 2xx; the 503s during the switch; acknowledged writes lost.
//
//   npx tsx bench/failover.ts        # BENCH_FAILOVER_RUNS (default 5)
//   make bench BENCH_ONLY=failover
import postgres from 'postgres';
import { migrate } from '../scripts/db.ts';
import { spawnApi, tokenFrom, orgWithClient } from '../test/helpers/processes.ts';
import { startLoad } from '../test/helpers/load.ts';
import { primaryAndStandby, replicaMissing } from '../test/helpers/replica.ts';
import { scope } from './faults.ts';
import { isMain } from '../src/is-main.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (msg: string) => process.stderr.write(`[bench:failover] ${msg}\n`);

interface FailoverRun { firstOkMs: number; allOkMs: number; outage: number; acknowledged: number; lost: number }

async function failoverOnce(): Promise<FailoverRun> {
  const { t, close } = scope();
  try {
    const pair = await primaryAndStandby(t, 'svc_failover');
    await migrate(pair.primaryUrl);
    const { org, client } = await orgWithClient(pair.primaryUrl, 'Failover', 'load');
    const api = await spawnApi(t, { DATABASE_URL: pair.bothUrl, SVC_WORKER: 'on', RATE_LIMIT_REQUESTS: '1000000', LOG_LEVEL: 'error' });
    const token = await tokenFrom(api.url, client);
    const load = startLoad(api.url, token, 8);
    await sleep(2000);
    pair.killPrimary();
    await sleep(2000);
    pair.promote();
    const promoted = Date.now();
    await sleep(6000);
    await load.stop();
    const done = (a: { at: number; ms?: number }) => a.at + (a.ms ?? 0);
    const ok = (a: { status: number }) => a.status >= 200 && a.status < 300;
    const after = load.answers.filter((a) => done(a) >= promoted).sort((a, b) => done(a) - done(b));
    const firstOk = after.find(ok);
    const lastBad = [...after].reverse().find((a) => !ok(a));
    const sql = postgres(pair.standbyUrl, { max: 1, onnotice: () => {} });
    try {
      const acked = load.answers.filter((a) => a.method === 'POST' && a.status === 201).map((a) => (a.body as { code: string }).code);
      const present = new Set((await sql`select code from app.projects where organization_id = ${org}`).map((r) => r.code as string));
      return { firstOkMs: firstOk ? done(firstOk) - promoted : NaN, allOkMs: lastBad ? done(lastBad) - promoted : 0,
        outage: load.answers.filter((a) => a.status === 503).length, acknowledged: acked.length, lost: acked.filter((c) => !present.has(c)).length };
    } finally {
      await sql.end();
    }
  } finally {
    await close();
  }
}

export async function runFailoverBench(runs: number): Promise<{ markdown: string; failed: string[] }> {
  const missing = replicaMissing();
  if (missing) {
    log(`skipped: needs ${missing}`);
    return { markdown: `Failover: skipped (needs ${missing}).\n`, failed: [] };
  }
  const rows: FailoverRun[] = [];
  for (let i = 1; i <= runs; i++) {
    const r = await failoverOnce();
    rows.push(r);
    log(`run ${i}/${runs}: promotion → first 2xx ${r.firstOkMs} ms, → all 2xx ${r.allOkMs} ms, ${r.outage} × 503, ${r.lost} of ${r.acknowledged} acknowledged writes lost`);
  }
  const markdown = `### Failover: primary stopped hard, standby promoted 2 s later (bench/failover.ts)\n\n`
    + `| run | promotion → first 2xx | → every answer 2xx | 503s | acknowledged writes | lost |\n|---|---|---|---|---|---|\n`
    + rows.map((r, i) => `| ${i + 1} | ${r.firstOkMs} ms | ${r.allOkMs} ms | ${r.outage} | ${r.acknowledged} | ${r.lost} |`).join('\n') + '\n';
  return { markdown, failed: rows.some((r) => r.lost > 0 || !(r.firstOkMs >= 0)) ? ['failover'] : [] };
}

if (isMain(import.meta.url)) {
  const { markdown, failed } = await runFailoverBench(Number(process.env.BENCH_FAILOVER_RUNS ?? 5));
  process.stdout.write(markdown);
  process.exitCode = failed.length ? 1 : 0;
}
