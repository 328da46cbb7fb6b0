// The soak run, part `soak` of `make bench` (last: it runs for minutes): BENCH_SOAK_MINUTES
// (default 10) of mixed reads and writes from several organizations against the bench server
// (worker in-process, as `make start` runs it), every organization with a webhook endpoint
// subscribed to what it writes, delivering to an HTTPS receiver on loopback. Per minute: requests,
// 5xx, p50/p99 latency, the server's resident memory (its own /metrics), database connections in
// use (pg_stat_activity), webhook requests received. Flat memory and zero 5xx are the aims.
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import postgres from 'postgres';
import { cli, logger, type BenchOptions, type BenchResult } from './common.ts';

const log = logger('soak');
const MINUTES = Number(process.env.BENCH_SOAK_MINUTES ?? 10);
const ORGS = 5;
const LOOPS_PER_ORG = 2;
const TLS = new URL('../test/fixtures/tls/', import.meta.url);

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;

interface Minute { requests: number; errors5xx: number; other: number; latencies: number[]; webhooks: number }

export async function runSoakBench(o: BenchOptions): Promise<BenchResult> {
  let received = 0;
  const receiver = https.createServer({ key: readFileSync(new URL('localhost.key', TLS)), cert: readFileSync(new URL('localhost.pem', TLS)) },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (body.type === 'webhook_endpoint.verification') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ challenge: body.data.challenge }));
          return;
        }
        received++;
        res.writeHead(204).end();
      });
    });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const hook = `https://localhost:${(receiver.address() as AddressInfo).port}/soak`;
  const sql = postgres(o.url, { max: 1, onnotice: () => {} });
  try {
    // Organizations of their own, each with a Manager client and a webhook endpoint.
    const clients: { token: string }[] = [];
    for (let i = 0; i < ORGS; i++) {
      const org = String((await cli(o.url, 'org', 'create', '--name', `Soak ${i}`, '--plan', 'business', '--timezone', 'UTC',
        '--currency', 'EUR', '--locale', 'en-GB')).organization_id);
      const c = await cli(o.url, 'client', 'create', '--org', org, '--name', 'soak', '--license', 'manager', '--roles', 'member,manager');
      const basic = Buffer.from(`${encodeURIComponent(String(c.client_id))}:${encodeURIComponent(String(c.client_secret))}`).toString('base64');
      const tok = await fetch(`${o.base}/oauth/token`, { method: 'POST', body: 'grant_type=client_credentials&scope=svc.api',
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' } });
      const token = ((await tok.json()) as { access_token: string }).access_token;
      const ep = await fetch(`${o.base}/v1/webhook-endpoints`, { method: 'POST',
        body: JSON.stringify({ url: hook, events: ['project.created', 'task.created', 'task.transitioned'] }),
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() } });
      if (ep.status !== 201) throw new Error(`webhook endpoint: ${ep.status} ${await ep.text()}`);
      clients.push({ token });
    }

    const minutes: Minute[] = [];
    const samples: { rssMb: number; dbConnections: number; poolInUse: number }[] = [];
    const current = () => minutes[minutes.length - 1]!;
    let running = true;
    const call = async (token: string, method: string, path: string, body?: unknown) => {
      const started = performance.now();
      let status = 0;
      let json: any;
      try {
        const res = await fetch(o.base + path, { method, body: body === undefined ? undefined : JSON.stringify(body),
          headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json', 'idempotency-key': randomUUID() }) } });
        status = res.status;
        const text = await res.text();
        json = text ? JSON.parse(text) : undefined;
      } catch { /* status 0: counted below */ }
      const m = current();
      m.requests++;
      m.latencies.push(performance.now() - started);
      if (status >= 500 || status === 0) m.errors5xx++;
      else if (status >= 300) m.other++;
      return json;
    };
    // One loop: read projects, create a project and a task, move the task along, read tasks.
    const loop = async (token: string, n: number) => {
      let i = 0;
      while (running) {
        await call(token, 'GET', '/v1/projects?limit=20');
        const project = await call(token, 'POST', '/v1/projects', { code: `S${n}-${++i}`, name: `Soak ${n}.${i}` });
        if (project?.id) {
          const task = await call(token, 'POST', '/v1/tasks', { project_id: project.id, name: 'Soak task', priority: 'high' });
          if (task?.id) {
            await call(token, 'POST', `/v1/tasks/${task.id}/transitions`, { transition: 'start' });
            await call(token, 'POST', `/v1/tasks/${task.id}/transitions`, { transition: 'complete' });
          }
        }
        await call(token, 'GET', `/v1/tasks?limit=50${project?.id ? `&project_id=${project.id}` : ''}`);
      }
    };
    const sample = async () => {
      const text = await (await fetch(`${o.base}/metrics`)).text();
      const metric = (name: string) => Number(new RegExp(`^${name} ([0-9.e+]+)$`, 'm').exec(text)?.[1] ?? NaN);
      const [{ n }] = await sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()` as any;
      samples.push({ rssMb: metric('svc_process_resident_memory_bytes') / 2 ** 20, dbConnections: n, poolInUse: metric('svc_db_pool_in_use') });
    };
    log(`${MINUTES} minutes: ${ORGS} organizations × ${LOOPS_PER_ORG} loops of reads and writes, webhooks delivering`);
    minutes.push({ requests: 0, errors5xx: 0, other: 0, latencies: [], webhooks: 0 });
    await sample();
    let lastReceived = 0;
    const loops = clients.flatMap((c, i) => Array.from({ length: LOOPS_PER_ORG }, (_, k) => loop(c.token, i * 10 + k)));
    for (let m = 1; m <= MINUTES; m++) {
      await new Promise((r) => setTimeout(r, 60_000));
      current().webhooks = received - lastReceived;
      lastReceived = received;
      await sample();
      const cur = current();
      log(`minute ${m}: ${cur.requests} requests, ${cur.errors5xx} 5xx, rss ${samples[samples.length - 1]!.rssMb.toFixed(0)} MB`);
      if (m < MINUTES) minutes.push({ requests: 0, errors5xx: 0, other: 0, latencies: [], webhooks: 0 });
    }
    running = false;
    await Promise.all(loops);
    const lines = [
      `### Soak (issue 20): ${MINUTES} min, ${ORGS} organizations × ${LOOPS_PER_ORG} loops (list projects, create project, create task, start, complete, list tasks), webhooks delivering`,
      '',
      '| minute | requests | 5xx | other non-2xx | p50 ms | p99 ms | server RSS MB | DB connections | pool in use | webhook requests |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...minutes.map((m, i) => {
        const sorted = [...m.latencies].sort((a, b) => a - b);
        const s = samples[i + 1]!;
        return `| ${i + 1} | ${m.requests} | ${m.errors5xx} | ${m.other} | ${pct(sorted, 0.5).toFixed(1)} | ${pct(sorted, 0.99).toFixed(1)} | `
          + `${s.rssMb.toFixed(0)} | ${s.dbConnections} | ${s.poolInUse} | ${m.webhooks} |`;
      }),
      '',
      `- server RSS at the start ${samples[0]!.rssMb.toFixed(0)} MB; first minute ${samples[1]!.rssMb.toFixed(0)} MB, last ${samples[samples.length - 1]!.rssMb.toFixed(0)} MB`,
    ];
    const failed = minutes.some((m) => m.errors5xx > 0 || m.other > 0) ? ['soak: non-2xx responses'] : [];
    return { markdown: lines.join('\n') + '\n', failed };
  } finally {
    await sql.end();
    receiver.closeAllConnections();
    receiver.close();
  }
}
