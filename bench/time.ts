// The time entries benchmarks, run by bench/run.ts after bench/tasks.ts, on the same server and database:
//  - seed: one project and 500,000 draft time entries in the benchmarked client's organization
//    (owner SQL, one statement, triggers off; validity checked afterwards), then ANALYZE;
//  - GET /v1/time-entries for one calendar month (organization-wide, limit=200): the first page and a
//    page 21 deep (following next_cursor 20 times), under autocannon; the list statement's plan
//    (EXPLAIN ANALYZE as svc_runtime inside api.begin_request's context) for both;
//  - POST /v1/time-entries/batches, 100 valid entries each (atomic), a fresh Idempotency-Key per
//    request, concurrently and one at a time (a fixed number of batches, not a duration).
// Returns a markdown section that run.ts appends to its output and to bench/results/latest.md.
import autocannon, { type Result } from 'autocannon';
import postgres from 'postgres';
import { randomUUID, createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, logger, ms, type BenchOptions, type BenchResult, type LoadOptions, type RequestSpec } from './common.ts';
import { loadConfig } from '../src/config.ts';

const ENTRIES = 500_000;
const SEED_DAYS = 365; // work dates: yesterday and the 364 days before it (all within the 366-day window)
const SEED_MINUTES = 60; // at most 2 seeded entries per member and day (500 per member over 365 days)
const PAGE = 200;
const DEEP_FOLLOWS = 20;
const BATCH = 100;
const BATCH_MINUTES = 30;
const BATCH_DAYS = 300; // a (member, day) pair recurs only every members x 300 batch entries
const BATCHES_CONCURRENT = 300;
const BATCHES_SEQUENTIAL = 200;
const BATCHES_WARMUP = 20;
const RESULTS = 'bench/results';

export type TimeBenchOptions = BenchOptions;

export type TimeBenchResult = BenchResult;

const log = logger('time');



// ---------------------------------------------------------------------------------------------
// Seed

interface Seeded {
  organizationId: string;
  projectId: string;
  secretId: string;
  members: string[];
  today: string;
  month: { first: string; last: string; entries: number };
  seconds: number;
}

async function seed(url: string, clientId: string): Promise<Seeded> {
  const started = process.hrtime.bigint();
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [client] = await sql<{ organization_id: string; svc_roles: string[] }[]>`
      select organization_id, svc_roles from app.api_clients where id = ${clientId}`;
    if (!client) throw new Error(`no API client ${clientId}`);
    // Reads need manager or finance, writes manager.
    if (!client.svc_roles.includes('manager')) {
      await cli(url, 'client', 'set-roles', '--client', clientId, '--roles', [...client.svc_roles, 'manager'].join(','));
    }
    const org = client.organization_id;
    const [o] = await sql<{ currency: string; today: string; first: string; last: string }[]>`
      select currency, (now() at time zone timezone)::date::text as today,
             (date_trunc('month', (now() at time zone timezone)::date) - interval '1 month')::date::text as first,
             (date_trunc('month', (now() at time zone timezone)::date) - interval '1 day')::date::text as last
        from app.organizations where id = ${org}`;
    const members = (await sql<{ id: string }[]>`
      select id from app.members where organization_id = ${org} and status = 'active' order by id`).map((m) => m.id);
    if (members.length < 100) throw new Error(`the benchmarked organization has only ${members.length} active members`);
    // An active project with no dates (its triggers run: this row goes through the normal checks).
    let [project] = await sql<{ id: string }[]>`select id from app.projects where organization_id = ${org} and code = 'TIME'`;
    project ??= (await sql<{ id: string }[]>`
      insert into app.projects (organization_id, code, name, currency)
      values (${org}, 'TIME', 'Time bench project', ${o!.currency}) returning id`)[0];
    const [existing] = await sql<{ n: number }[]>`
      select count(*)::int as n from app.time_entries where organization_id = ${org} and project_id = ${project!.id}`;
    if (existing!.n < ENTRIES) {
      // Entry g: member g mod n, work date yesterday - ((g div n) mod 365), 60 minutes, draft, created by
      // the benchmarked client. With triggers and foreign-key checks off (session_replication_role =
      // replica) for speed; the rows are checked below against what the triggers would enforce.
      await sql.begin(async (tx) => {
        await tx`set local session_replication_role = replica`;
        await tx`
          insert into app.time_entries (organization_id, member_id, project_id, work_date, minutes, billable, notes,
                                        status, created_by_client_id, created_at, updated_at)
          select ${org}, m.ids[1 + g % m.n], ${project!.id},
                 ${o!.today}::date - 1 - ((g / m.n) % ${SEED_DAYS}::int), ${SEED_MINUTES}::int, g % 4 <> 0,
                 case when g % 10 = 0 then format('Seeded entry %s', g) end, 'draft', ${clientId},
                 now() - make_interval(secs => g), now() - make_interval(secs => g)
            from (select array_agg(id order by id) as ids, count(*)::int as n
                    from app.members where organization_id = ${org} and status = 'active') m,
                 generate_series(${existing!.n}::int, ${ENTRIES - 1}::int) g`;
      });
    }
    // What the triggers would have checked: active member of the organization, active project of the
    // organization with no end date, minutes 1..1440, draft, a member's day at most 1440 minutes,
    // work dates within today - 366 .. today.
    const [bad] = await sql<{ invalid: number; over: number }[]>`
      select (select count(*)::int from app.time_entries e
               where e.organization_id = ${org} and e.project_id = ${project!.id}
                 and (e.minutes not between 1 and 1440 or e.status <> 'draft' or e.created_by_client_id <> ${clientId}
                      or e.work_date > ${o!.today}::date or e.work_date < ${o!.today}::date - 366
                      or not exists (select from app.members m where m.organization_id = e.organization_id
                                       and m.id = e.member_id and m.status = 'active')
                      or not exists (select from app.projects p where p.id = e.project_id and p.organization_id = e.organization_id
                                       and p.status = 'active' and p.end_date is null))) as invalid,
             (select count(*)::int from (select from app.time_entries e where e.organization_id = ${org} and e.deleted_at is null
                                          group by e.member_id, e.work_date having sum(e.minutes) > 1440) d) as over`;
    if (bad!.invalid || bad!.over) throw new Error(`seeded time entries are invalid: ${JSON.stringify(bad)}`);
    await sql`analyze app.time_entries`;
    await sql`analyze app.approvals`;
    const [month] = await sql<{ n: number }[]>`
      select count(*)::int as n from app.time_entries
       where organization_id = ${org} and work_date between ${o!.first}::date and ${o!.last}::date and deleted_at is null`;
    const [secret] = await sql<{ id: string }[]>`
      select id from app.client_secrets where client_id = ${clientId} and revoked_at is null order by created_at desc limit 1`;
    return { organizationId: org, projectId: project!.id, secretId: secret!.id, members, today: o!.today,
      month: { first: o!.first, last: o!.last, entries: month!.n }, seconds: ms(started) / 1000 };
  } finally {
    await sql.end();
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP

async function get(base: string, path: string, token: string): Promise<{ data: unknown[]; next_cursor: string | null }> {
  const res = await fetch(base + path, { headers: { authorization: `Bearer ${token}` } });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${body.slice(0, 500)}`);
  return JSON.parse(body) as { data: unknown[]; next_cursor: string | null };
}

async function load(o: TimeBenchOptions, opts: Omit<LoadOptions, 'url'> & { path: string }): Promise<Result> {
  const { path, ...rest } = opts;
  return autocannon({ url: o.base + path, connections: o.connections, ...rest } as LoadOptions);
}

const ok2xx = (r: Result) => Object.entries(r.statusCodeStats ?? {})
  .filter(([code]) => code.startsWith('2')).reduce((n, [, s]) => n + s.count, 0);

// ---------------------------------------------------------------------------------------------
// The list statement's plan, as the server runs it (svc_runtime, inside api.begin_request's context)

async function explainList(o: TimeBenchOptions, seeded: Seeded, after?: [string, string], alias = 'work_date_key'): Promise<string> {
  const runtimeUrl = loadConfig({ ...process.env, DATABASE_URL: o.url }).runtimeDatabaseUrl;
  const sql = postgres(runtimeUrl, { max: 1, onnotice: () => {} });
  try {
    return await sql.begin(async (tx) => {
      const [r] = await tx<{ outcome: string }[]>`select outcome from api.begin_request(${seeded.organizationId}, ${createHash('sha256').update(o.token).digest('hex')}, null::text[])`;
      if (r?.outcome !== 'ok') throw new Error(`api.begin_request: ${r?.outcome}`);
      // The statement of src/routes/time-entries.ts (listTimeEntries), values inlined.
      const keyset = after ? `\n   and (work_date, id) > (('${after[0]}'::text)::date, '${after[1]}'::text)` : '';
      // The alias the server uses (src/routes/time-entries.ts): ORDER BY work_date names the date column.
      const statement = `select id, work_date::text as ${alias}, doc from api.time_entries
 where deleted_at is null and work_date >= '${seeded.month.first}'::date and work_date <= '${seeded.month.last}'::date${keyset}
 order by work_date, id limit ${PAGE + 1}`;
      const plan = await tx.unsafe<{ 'QUERY PLAN': string }[]>(`explain (analyze, buffers, costs off) ${statement}`);
      return statement + ';\n\n' + plan.map((p) => p['QUERY PLAN']).join('\n');
    });
  } finally {
    await sql.end();
  }
}

/** The plan's scan, sort and limit nodes with their keys and index conditions (no timings, no init plans). */
function planShape(plan: string): string[] {
  return plan.split('\n\n')[1]!.split('\n')
    .filter((l) => /^Limit|->  (?!Result)|Sort Key:|Index Cond:/.test(l))
    .map((l) => l.replace(/\s*\(actual[^)]*\)/, '').trimEnd());
}

// ---------------------------------------------------------------------------------------------

export async function runTimeBench(o: TimeBenchOptions): Promise<TimeBenchResult> {
  const started = process.hrtime.bigint();
  const failed: string[] = [];
  log(`seeding ${ENTRIES.toLocaleString('en')} time entries in the benchmarked organization (owner SQL), then ANALYZE`);
  const seeded = await seed(o.url, o.clientId);
  log(`seeded in ${seeded.seconds.toFixed(1)} s; ${seeded.month.first}..${seeded.month.last} holds ${seeded.month.entries} entries`);
  const bearer = { authorization: `Bearer ${o.token}` };

  // --- The month listing -------------------------------------------------------------------
  const first = `/v1/time-entries?work_date_gte=${seeded.month.first}&work_date_lte=${seeded.month.last}&limit=${PAGE}`;
  const page1 = await get(o.base, first, o.token);
  if (page1.data.length !== PAGE || !page1.next_cursor) throw new Error(`${first}: expected ${PAGE} entries and a next_cursor`);
  log(`GET ${first}: warm-up ${o.warmup} s, then ${o.duration} s with ${o.connections} connections`);
  await load(o, { path: first, headers: bearer, duration: o.warmup });
  const listFirst = await load(o, { path: first, headers: bearer, duration: o.duration });

  let cursor: string | null = page1.next_cursor;
  let deepPath = first;
  let lastOfPrevious: [string, string] | undefined;
  for (let i = 0; i < DEEP_FOLLOWS; i++) {
    if (!cursor) throw new Error(`the month listing ended after ${i + 1} pages`);
    deepPath = `${first}&after=${encodeURIComponent(cursor)}`;
    const page = await get(o.base, deepPath, o.token);
    if (i === DEEP_FOLLOWS - 2) {
      const last = page.data[page.data.length - 1] as { work_date: string; id: string };
      lastOfPrevious = [last.work_date, last.id];
    }
    cursor = page.next_cursor;
  }
  const deep = await get(o.base, deepPath, o.token);
  if (deep.data.length !== PAGE) throw new Error(`page ${DEEP_FOLLOWS + 1}: expected ${PAGE} entries, got ${deep.data.length}`);
  log(`GET page ${DEEP_FOLLOWS + 1}: warm-up ${o.warmup} s, then ${o.duration} s with ${o.connections} connections`);
  await load(o, { path: deepPath, headers: bearer, duration: o.warmup });
  const listDeep = await load(o, { path: deepPath, headers: bearer, duration: o.duration });

  log('EXPLAIN ANALYZE of the list statement (first page and page 21) as svc_runtime');
  const planFirst = await explainList(o, seeded);
  const planDeep = await explainList(o, seeded, lastOfPrevious);
  // For comparison only: the same statement with the text column under another alias, so that
  // ORDER BY work_date names the date column (and the index order) instead of the text output column.
  const planVariant = await explainList(o, seeded, lastOfPrevious, 'work_date_text');
  mkdirSync(RESULTS, { recursive: true });
  const planFile = join(RESULTS, 'time-list-explain.txt');
  writeFileSync(planFile, `-- first page\n${planFirst}\n\n-- page ${DEEP_FOLLOWS + 1}\n${planDeep}\n\n` +
    `-- page ${DEEP_FOLLOWS + 1}, variant (not what the server runs): output column aliased work_date_text\n${planVariant}\n`);

  // --- Batches -------------------------------------------------------------------------------
  // Entry number k (over the whole run): member k mod n, work date yesterday - ((k div n) mod 300),
  // 30 minutes. A batch's 100 entries are 100 different members on one day; a (member, day) pair
  // recurs only every n x 300 entries, so no day nears 1,440 minutes (seeded: at most 120 a day).
  const n = seeded.members.length;
  const yesterday = Date.parse(seeded.today + 'T00:00:00Z') - 86_400_000;
  let k = 0;
  const batchBody = () => {
    const entries = [];
    for (let i = 0; i < BATCH; i++, k++) {
      const day = new Date(yesterday - (Math.floor(k / n) % BATCH_DAYS) * 86_400_000).toISOString().slice(0, 10);
      entries.push({ subject: { member_id: seeded.members[k % n] }, project_id: seeded.projectId, work_date: day,
        minutes: BATCH_MINUTES, billable: k % 2 === 0, notes: `Batch entry ${k}` });
    }
    return JSON.stringify({ entries, atomic: true });
  };
  const postHeaders = { ...bearer, 'content-type': 'application/json' };
  const keyPrefix = randomUUID();
  let key = 0;
  const check = await fetch(o.base + '/v1/time-entries/batches', { method: 'POST',
    headers: { ...postHeaders, 'idempotency-key': `${keyPrefix}-${++key}` }, body: batchBody() });
  const checkBody = await check.text();
  if (check.status !== 201 || (JSON.parse(checkBody) as { created: number }).created !== BATCH) {
    throw new Error(`POST /v1/time-entries/batches: ${check.status} ${checkBody.slice(0, 500)}`);
  }
  const batchRequests: RequestSpec[] = [{
    method: 'POST', path: '/v1/time-entries/batches', headers: postHeaders,
    setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'idempotency-key': `${keyPrefix}-${++key}` }, body: batchBody() }),
  }];
  const countEntries = async () => {
    const sql = postgres(o.url, { max: 1, onnotice: () => {} });
    try {
      const [r] = await sql<{ n: number }[]>`select count(*)::int as n from app.time_entries where organization_id = ${seeded.organizationId}`;
      return r!.n;
    } finally {
      await sql.end();
    }
  };
  const batchRun = async (label: string, connections: number, amount: number) => {
    log(`${label}: ${BATCHES_WARMUP} warm-up batches, then ${amount} batches of ${BATCH} with ${connections} connection(s)`);
    await load(o, { path: '/v1/time-entries/batches', connections, amount: BATCHES_WARMUP, requests: batchRequests });
    const before = await countEntries();
    const started = process.hrtime.bigint();
    const r = await load(o, { path: '/v1/time-entries/batches', connections, amount, requests: batchRequests, timeout: 60 });
    const seconds = ms(started) / 1000;
    const created = (await countEntries()) - before;
    const expected = ok2xx(r) * BATCH;
    if (created !== expected) throw new Error(`${label}: ${created} entries created for ${ok2xx(r)} 2xx batches (expected ${expected})`);
    return { r, seconds, created };
  };
  const concurrent = await batchRun('POST /v1/time-entries/batches (concurrent)', o.connections, BATCHES_CONCURRENT);
  const sequential = await batchRun('POST /v1/time-entries/batches (sequential)', 1, BATCHES_SEQUENTIAL);

  // --- Report --------------------------------------------------------------------------------
  const lists: [string, Result][] = [
    [`GET month listing, first page (limit=${PAGE})`, listFirst],
    [`GET month listing, page ${DEEP_FOLLOWS + 1} (after next_cursor x${DEEP_FOLLOWS})`, listDeep],
  ];
  const batches: [string, { r: Result; seconds: number; created: number }, number][] = [
    [`POST /v1/time-entries/batches, ${BATCH} entries, atomic, ${o.connections} connections`, concurrent, o.connections],
    [`POST /v1/time-entries/batches, ${BATCH} entries, atomic, 1 connection`, sequential, 1],
  ];
  for (const [name, r] of lists) if (r.non2xx || r.errors || r.timeouts) failed.push(name);
  for (const [name, b] of batches) if (b.r.non2xx || b.r.errors || b.r.timeouts) failed.push(name);

  const execTime = (plan: string) => /Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? '?';
  const lines = [
    `### Time entries (issue 4): ${ENTRIES.toLocaleString('en')} entries in the benchmarked organization, seeded in ${seeded.seconds.toFixed(1)} s`,
    '',
    `The whole section took ${(ms(started) / 1000).toFixed(0)} s. Month listed: ${seeded.month.first} to ${seeded.month.last} (${seeded.month.entries.toLocaleString('en')} entries, ` +
      `${Math.ceil(seeded.month.entries / PAGE)} pages of ${PAGE}).`,
    '',
    '| measurement | req/s (mean) | p50 ms | p99 ms | requests | non-2xx |',
    '|---|---:|---:|---:|---:|---:|',
    ...lists.map(([name, r]) => `| ${name} | ${Math.round(r.requests.mean)} | ${r.latency.p50} | ${r.latency.p99} | ${r.requests.total} | ${r.non2xx} |`),
    ...batches.map(([name, b]) => `| ${name} | ${(b.r.requests.total / b.seconds).toFixed(1)} | ${b.r.latency.p50} | ${b.r.latency.p99} | ` +
      `${b.r.requests.total} | ${b.r.non2xx} |`),
    '',
    `- Lists: ${o.warmup} s warm-up, then ${o.duration} s with ${o.connections} connections. Batches: ${BATCHES_WARMUP} warm-up batches, ` +
      `then a fixed number (req/s = batches ÷ wall time); ${concurrent.created + sequential.created} entries created and counted in the database ` +
      `(= 100 × 2xx batches).`,
    `- Per entry in a batch: ${(concurrent.r.latency.p50 / BATCH).toFixed(2)} ms (p50, ${o.connections} connections), ` +
      `${(sequential.r.latency.p50 / BATCH).toFixed(2)} ms (p50, one at a time); ${Math.round(concurrent.created / concurrent.seconds)} entries/s concurrently.`,
    `- Page ${DEEP_FOLLOWS + 1} ÷ first page req/s: **${(listDeep.requests.mean / listFirst.requests.mean).toFixed(2)}**.`,
    `- List statement, EXPLAIN ANALYZE as svc_runtime in the client's context (${planFile}): first page ${execTime(planFirst)} ms, ` +
      `page ${DEEP_FOLLOWS + 1} ${execTime(planDeep)} ms. Plan of page ${DEEP_FOLLOWS + 1}:`,
    '',
    '```',
    ...planShape(planDeep),
    '```',
    '',
    `- For comparison (not what the server runs): the same page-${DEEP_FOLLOWS + 1} statement with the output column aliased ` +
      `\`work_date_text\` instead of \`work_date\`, so that \`order by work_date, id\` names the date column: ${execTime(planVariant)} ms, plan:`,
    '',
    '```',
    ...planShape(planVariant),
    '```',
  ];
  for (const [name, r] of [...lists, ...batches.map(([nm, b]) => [nm, b.r] as [string, Result])]) {
    if (r.errors || r.timeouts) lines.push(`${name}: ${r.errors} connection errors, ${r.timeouts} timeouts`);
    if (r.non2xx) lines.push(`${name}: status codes ${JSON.stringify(r.statusCodeStats)}`);
  }
  return { markdown: lines.join('\n') + '\n', failed };
}
