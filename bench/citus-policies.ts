// What the policies' form costs on a Citus cluster: a database migrated by an earlier revision's
// migrations and one by the working tree's, side by side on the local cluster (scripts/citus.ts),
// each seeded alike and served by an API process of its own (bench/scale.ts' spawnApi). One
// organization with 10,000 tasks and, in the month before this one, 2,000 time entries of 100
// members; then, one request at a time, in alternating rounds, p50 of (the working tree's API on
// both, which the schema change leaves as it was):
//   - GET /v1/time-entries for that month (200 per page), the listing whose view reads each entry's
//     approval in a subquery (a policy's accessors run again at each rescan when called directly);
//   - GET /v1/tasks?limit=50, the first page of tasks.
//
//   npx tsx bench/citus-policies.ts [revision] [rounds] [requests per round]
import { execSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import postgres from 'postgres';
import { citusMissing, startCluster, createClusterDatabase, dropClusterDatabase } from '../scripts/citus.ts';
import { migrate } from '../scripts/db.ts';
import { cli, clientToken, ms } from './common.ts';
import { spawnApi, stopApi, type Api } from './scale.ts';

const [revision = 'HEAD~1', rounds = '5', requests = '100'] = process.argv.slice(2);
const missing = citusMissing();
if (missing) {
  console.log(`skipped: ${missing}`);
  process.exit(0);
}

interface Side { name: string; url: string; api: Api; token: string; month: string }

async function prepare(cluster: Awaited<ReturnType<typeof startCluster>>, name: string, dir: string): Promise<Side> {
  const url = await createClusterDatabase(cluster, name);
  await migrate(url, dir);
  // The API of the working tree serves both (its code did not change with the schema): the earlier
  // revision's database records the working tree's versions too, or /ready would refuse it.
  const versions = readdirSync('db/migrations').map((f) => f.split('_')[0]!);
  const owner = postgres(url, { max: 1, onnotice: () => {} });
  await owner`insert into public.schema_migrations (version) select unnest(${versions}::text[]) on conflict do nothing`;
  await owner.end();
  const { organization_id: org } = await cli(url, 'org', 'create', '--name', 'Policies', '--plan', 'business',
    '--timezone', 'UTC', '--currency', 'EUR', '--locale', 'en-GB') as { organization_id: string };
  const client = await cli(url, 'client', 'create', '--org', org, '--name', 'bench', '--license', 'manager',
    '--roles', 'member,manager,finance,hr') as { client_id: string; client_secret: string };
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  let month = '';
  try {
    // The tasks through their triggers, as bench/citus.ts loads the benchmarked organization's.
    const [w] = await sql<{ id: string }[]>`select id from app.task_workflows where organization_id = ${org} and is_default`;
    const [p] = await sql<{ id: string }[]>`
      insert into app.projects (organization_id, code, name, currency) values (${org}, 'P', 'Policies', 'EUR') returning id`;
    await sql`
      insert into app.tasks (organization_id, project_id, workflow_id, name, status, priority, created_at, updated_at)
      select ${org}, ${p!.id}, ${w!.id}, format('Task %s', g), 'todo', 'medium', now() - make_interval(mins => g), now() - make_interval(mins => g)
        from generate_series(1, 10000) g`;
    await sql.begin(async (tx) => {
      // Members and time entries with triggers and foreign-key checks off on every node (valid rows).
      await tx`set local citus.propagate_set_commands = 'local'`;
      await tx`set local session_replication_role = replica`;
      await tx`
        insert into app.members (organization_id, id, display_name, status)
        select ${org}, format('m%s@bench.example', g), format('Member %s', g), 'active' from generate_series(1, 100) g`;
      const [m] = await tx<{ first: string }[]>`select (date_trunc('month', now()) - interval '1 month')::date::text as first`;
      month = m!.first;
      await tx`
        insert into app.time_entries (organization_id, member_id, project_id, work_date, minutes, billable, status, created_by_client_id)
        select ${org}, format('m%s@bench.example', 1 + g % 100), ${p!.id}, ${month}::date + (g / 100) % 28, 60, true, 'draft', ${client.client_id}
          from generate_series(0, 1999) g`;
    });
    await sql`analyze`;
  } finally {
    await sql.end();
  }
  const api = await spawnApi(url, { DB_POOL_SIZE: '4' });
  const token = await clientToken(api.base, { id: client.client_id, secret: client.client_secret });
  return { name, url, api, token, month };
}

async function p50(side: Side, path: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < Number(requests) + 10; i++) {
    const t0 = process.hrtime.bigint();
    const res = await fetch(side.api.base + path, { headers: { authorization: `Bearer ${side.token}` } });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`${side.name}: GET ${path}: ${res.status} ${body.slice(0, 300)}`);
    if (i >= 10) times.push(ms(t0));
  }
  return [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
}

const cluster = await startCluster();
const old = mkdtempSync('/tmp/citus-policies-rev-');
execSync(`git archive ${revision} db/migrations | tar -x -C ${old}`);
const sides: Side[] = [];
try {
  sides.push(await prepare(cluster, 'citus_policies_a', `${old}/db/migrations`));
  sides.push(await prepare(cluster, 'citus_policies_b', 'db/migrations'));
  const last = (s: Side) => new Date(Date.parse(s.month) + 27 * 86_400_000).toISOString().slice(0, 10);
  const cases = [
    ['GET /v1/time-entries, one month', (s: Side) => `/v1/time-entries?work_date_gte=${s.month}&work_date_lte=${last(s)}&limit=200`],
    ['GET /v1/tasks?limit=50', () => '/v1/tasks?limit=50'],
  ] as const;
  const figures = cases.map(() => sides.map(() => [] as number[]));
  for (let r = 0; r < Number(rounds); r++) {
    for (const [c, [, path]] of cases.entries()) {
      for (const [i, s] of sides.entries()) figures[c]![i]!.push(await p50(s, path(s)));
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(`| request (p50 ms, one at a time, ${rounds} rounds of ${requests}) | ${revision} | working tree |`);
  console.log('|---|---:|---:|');
  cases.forEach(([name], c) => console.log(`| ${name} | ${median(figures[c]![0]!).toFixed(2)} (${figures[c]![0]!.map((x) => x.toFixed(1)).join(', ')}) | ${median(figures[c]![1]!).toFixed(2)} (${figures[c]![1]!.map((x) => x.toFixed(1)).join(', ')}) |`));
} finally {
  for (const s of sides) await stopApi(s.api);
  for (const s of sides) await dropClusterDatabase(cluster, s.name).catch(() => {});
  await cluster.stop();
}
