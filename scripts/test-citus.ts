// `make test-citus`: the tests against a local Citus cluster (scripts/citus.ts: a coordinator and
// two workers). One template database is made on every node and migrated on the coordinator (the
// migrations distribute the schema there); each test file clones it on every node. Without Citus
// here, one line says why and nothing runs.
//
// Which files: the whole suite (test/**/*.test.ts), less the files about one server (ONE_SERVER),
// those that do not pass whole on a cluster yet (NOT_YET) and two directories about what happens
// beside the database (BESIDE_THE_DATABASE, for CI's time), each named with its reason when the run
// starts. Name files or directories to run those instead.
import postgres from 'postgres';
import { citusMissing, citusUnpatched, startCluster, createClusterDatabase, dropClusterDatabase, dropDatabase } from './citus.ts';
import { migrate, loadTestFixtures } from './db.ts';
import { runTap, testFiles } from './tap.ts';

/** Files about one server: the same run on a cluster would test nothing more (docs/scaling.md). */
const ONE_SERVER: Record<string, string> = {
  'test/faults/failover.test.ts': 'a primary and a streaming standby of its own, the primary stopped and the standby promoted',
  'test/faults/restart.test.ts': 'an embedded PostgreSQL of its own, stopped and started again',
  'test/db/migrations-down.test.ts': 'an embedded PostgreSQL of its own, where the migrations are rolled back and applied again',
  'test/scripts/embedded-pg.test.ts': 'the embedded PostgreSQL of `make start`',
  'test/db/cluster-routing.test.ts': 'runs a routed statement next to the same statement sent directly, which a coordinator cannot run (a view\'s correlated subqueries)',
};

/** Directories that pass on a cluster when named, left out of the default run to keep CI within 25
 * minutes: what they test happens before and after the database, the same on any (measured: the
 * whole suite on the cluster took 10 min 22 s in CI's third pass, these 2 min 55 s of file time). */
const BESIDE_THE_DATABASE: Record<string, string> = {
  'test/hostile/': 'input the HTTP layer refuses and values leaving the service (CSV, downloads, emails, streams)',
  'test/client/': 'the published OpenAPI document and the typed client',
  'test/scripts/': 'the build, the lockfile and the import graph (dist.test.ts serves from dist/ as src/ does)',
};

/** Files that do not pass whole on a cluster yet, with what is left (docs/scaling.md): the list only shrinks. */
const NOT_YET: Record<string, string> = {};

const missing = citusMissing();
if (missing) {
  console.log(`# make test-citus: skipped, ${missing}`);
  process.exit(0);
}
// Unpatched, a delegated call with a NULL organization crashes a node: least-privilege.test.ts fails.
const unpatched = citusUnpatched();
if (unpatched) console.log(`# make test-citus: ${unpatched}`);
const cluster = await startCluster();
const nodes = [cluster.coordinator, ...cluster.workers];
const template = `svc_tpl_${process.pid}`;
let code = 1;
try {
  const url = await createClusterDatabase(cluster, template);
  await migrate(url);
  await loadTestFixtures(url);
  // The fixtures' table gets its shards' privileges as the migrations' tables did
  // (app_private.citus_shard_privileges). Their functions' privileges are not copied:
  // test/citus/placement.test.ts compares ours, and copying here would hide a migration that forgot to.
  {
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    await sql`call app_private.citus_shard_privileges()`;
    // The fixtures' DDL in schema api advanced each worker's generation: the copies of the api
    // views are made again, as the migration after a change does.
    await sql`select app_private.citus_refresh_shard_views()`;
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
  // A file gets 600 s here, not 240: three servers on one machine, and a request is several
  // delegated calls (measured: files.test.ts 84 s alone in make test-citus, 121 s beside 40 other files;
  // on a slower 2-core machine webhooks.test.ts took 108 s alone and 308 s beside the others).
  // There a loaded coordinator's start-ups are slow, which the pool watchdog does not take for a
  // wedge (docs/decisions.md, "A start-up within the driver's connect deadline"). With this pass's
  // CPU held to 0.8 and 0.5 of a core (a cgroup quota; the slow machine is between), it took
  // 1,038 and 2,131 s; the timing windows allow for half a core (docs/benchmarks.md, "The cluster
  // pass on a slow machine").
  let files = process.argv.slice(2);
  if (!files.length) {
    const left = { ...ONE_SERVER, ...NOT_YET };
    for (const [file, why] of Object.entries({ ...left, ...BESIDE_THE_DATABASE })) console.log(`# not on the cluster: ${file} (${why})`);
    const beside = Object.keys(BESIDE_THE_DATABASE);
    const all = testFiles('test');
    const gone = Object.keys(left).filter((f) => !all.includes(f));
    if (!all.length || gone.length) throw new Error(`test-citus: ${all.length ? `listed but not found: ${gone.join(', ')}` : 'no test file found'}`);
    files = all.filter((f) => !left[f] && !beside.some((dir) => f.startsWith(dir)));
  }
  code = await runTap(['--timeout=600', ...files], {
    SVC_TEST_SERVER_URL: cluster.coordinator, SVC_TEST_TEMPLATE: template, SVC_TEST_RUN: String(process.pid),
    SVC_TEST_CITUS_WORKERS: JSON.stringify(cluster.workers),
  });
} finally {
  for (const node of nodes) {
    const sql = postgres(node, { max: 1, onnotice: () => {} });
    const leftovers = await sql`select datname from pg_database where datname like ${`svc_t_${process.pid}_%`}`;
    await sql.end();
    for (const { datname } of leftovers) await dropDatabase(node, datname);
  }
  await dropClusterDatabase(cluster, template);
  await cluster.stop();
}
process.exit(code);
