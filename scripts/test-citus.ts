// `make test-citus`: the tests against a local Citus cluster (scripts/citus.ts: a coordinator and
// two workers). One template database is made on every node and migrated on the coordinator (the
// migrations distribute the schema there); each test file clones it on every node. Without Citus
// here, one line says why and nothing runs.
//
// Which files: test/citus/ (where the schema is placed, one shard per organization) and the HTTP
// files that pass whole on a cluster (ON_THE_CLUSTER). The rest of the suite does not run on a
// cluster yet: docs/scaling.md ("Citus: where it stands") says why. Name files to run others.
import postgres from 'postgres';
import { citusMissing, startCluster, createClusterDatabase, dropClusterDatabase } from './citus.ts';
import { migrate, loadTestFixtures } from './db.ts';
import { runTap } from './tap.ts';

/** HTTP test files every assertion of which passes on the cluster: the list only grows. */
const ON_THE_CLUSTER = [
  'agents', 'agents-stream', 'agents-triage', 'approvals-batches', 'auth', 'body-limits', 'conversations', 'custom-fields',
  'files', 'files-scan', 'integrations', 'invoice-accounting', 'invoice-send', 'invoice-send-edges', 'invoices',
  'keys', 'members', 'pipeline', 'projects-smoke', 'projects', 'reports', 'smoke', 'spec-codes', 'tasks', 'tickets',
  'time-entries', 'time-smoke', 'webhook-transport', 'webhook-wake', 'webhooks', 'webhooks-crash',
].map((name) => `test/http/${name}.test.ts`);

const missing = citusMissing();
if (missing) {
  console.log(`# make test-citus: skipped, ${missing}`);
  process.exit(0);
}
const cluster = await startCluster();
const nodes = [cluster.coordinator, ...cluster.workers];
const template = `svc_tpl_${process.pid}`;
let code = 1;
try {
  const url = await createClusterDatabase(cluster, template);
  await migrate(url);
  await loadTestFixtures(url);
  // The fixtures' table gets its shards' privileges as the migrations' tables did (migration
  // 20261205000600). Their functions' privileges are not copied: test/citus/placement.test.ts
  // compares ours, and copying here would hide a migration that forgot to.
  {
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    await sql`call app_private.citus_shard_privileges()`;
    await sql.end();
  }
  // CREATE DATABASE … TEMPLATE needs a template nobody is connected to; Citus keeps sessions open
  // in it (its maintenance daemon, cached connections between nodes) unless it refuses them.
  for (const node of nodes) {
    const sql = postgres(node, { max: 1, onnotice: () => {} });
    await sql.unsafe(`alter database ${template} allow_connections false`);
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${template}`;
    await sql.end();
  }
  // A file gets 300 s here, not 120: three servers on one machine, and a request is several
  // delegated calls (measured: files.test.ts 84 s alone in make test-citus, 121 s beside 40 other files).
  // (test/hostile/ passes on the cluster too, named: `npx tsx scripts/test-citus.ts test/hostile/`; it is
  // about input the HTTP layer refuses, the same on any database, and left out to keep CI under 25 min.)
  const files = process.argv.slice(2).length ? process.argv.slice(2) : ['test/citus/', ...ON_THE_CLUSTER];
  code = await runTap(['--timeout=300', ...files], {
    SVC_TEST_SERVER_URL: cluster.coordinator, SVC_TEST_TEMPLATE: template, SVC_TEST_RUN: String(process.pid),
    SVC_TEST_CITUS_WORKERS: JSON.stringify(cluster.workers),
  });
} finally {
  for (const node of nodes) {
    const sql = postgres(node, { max: 1, onnotice: () => {} });
    const leftovers = await sql`select datname from pg_database where datname like ${`svc_t_${process.pid}_%`}`;
    for (const { datname } of leftovers) await sql.unsafe(`drop database if exists ${datname} with (force)`);
    await sql.end();
  }
  await dropClusterDatabase(cluster, template);
  await cluster.stop();
}
process.exit(code);
