// A database the old chain of migrations made keeps working after the squash:
// scripts/db.ts migrate records the baseline's versions as applied when the database ran the whole
// old chain (nothing of the baseline runs, the catalog is what it was), refuses one that ran part
// of it, and leaves a new database to run the baseline.
// The proof that the squash changed nothing is scripts/catalog-diff.ts (db/README.md); here, a
// database the old chain (from git history) made, adopted, compares equal to one the baseline made.
// On a cluster, a coordinator the previous release migrated (the cluster's first baseline, run as a
// superuser) records the replacement's versions and, after the bootstrap, equals a new database.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import postgres from 'postgres';
import { CITUS_WORKERS, createTestDatabase, oneServer } from '../helpers/database.ts';
import { createClusterDatabase, dropClusterDatabase } from '../../scripts/citus.ts';
import { REPOSITORY } from '../helpers/repository.ts';
import { adoptBaseline, baselineVersions, migrate, MIGRATIONS_DIR, OLD_CHAIN_LAST, REPLACED_CLUSTER_BASELINE, withDatabase } from '../../scripts/db.ts';
import { compareDatabases, migrationsOf } from '../../scripts/catalog-diff.ts';

const versions = async (url: string) => {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return (await sql<{ version: string }[]>`select version::text from public.schema_migrations order by 1`).map((r) => r.version);
  } finally {
    await sql.end();
  }
};
const contextKey = async (url: string) => {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return (await sql<{ k: string }[]>`select encode(inner_key, 'hex') as k from app_private.context_keys`)[0]!.k;
  } finally {
    await sql.end();
  }
};
const probeMade = async (url: string) => {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return (await sql`select to_regclass('public.baseline_probe') as r`)[0]!.r !== null;
  } finally {
    await sql.end();
  }
};

/** The old chain as it was in the last commit that held its last file (the one before the commit
 * that replaced it by the baseline). */
function oldChainRevision(): string {
  const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8', cwd: REPOSITORY }).trim();
  const last = git('log', '-1', '--format=%H', '--', `db/migrations/${OLD_CHAIN_LAST}_*`);
  const holds = (rev: string) => git('ls-tree', '--name-only', rev, 'db/migrations/').split('\n')
    .some((f) => f.startsWith(`db/migrations/${OLD_CHAIN_LAST}_`));
  return holds(last) ? last : `${last}^`;
}

t.test('db/migrations holds the baseline, first of all', async (t) => {
  const files = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql')).sort();
  t.equal(baselineVersions().length, 13, 'thirteen baseline files for every database');
  t.equal(baselineVersions(MIGRATIONS_DIR, true).length, 16, 'and three more for a Citus coordinator');
  t.match(files[0], /_baseline_roles_and_schemas\.sql$/, 'roles and schemas first');
  t.ok(files.slice(0, 13).every((f) => f.includes('_baseline_')), 'no other migration before the baseline\'s last');
});

t.test('a database the whole old chain made: the baseline recorded, nothing re-run, the catalog equal', oneServer('builds a database of its own on the server'), async (t) => {
  const server = process.env.SVC_TEST_SERVER_URL!;
  const rev = oldChainRevision();
  t.ok(rev, `the old chain is in git history (${rev})`);
  const oldDir = migrationsOf(rev);
  const name = `svc_t_${process.env.SVC_TEST_RUN}_oldchain`;
  const root = postgres(server, { max: 1, onnotice: () => {} });
  t.teardown(async () => {
    await root.unsafe(`drop database if exists ${name} with (force)`);
    await root.end();
    rmSync(dirname(dirname(oldDir)), { recursive: true, force: true });
  });
  await root.unsafe(`drop database if exists ${name} with (force)`);
  const url = withDatabase(server, name);
  await migrate(url, oldDir, { asGiven: true });
  const old = await versions(url);
  t.ok(old.includes(OLD_CHAIN_LAST), 'the old chain ran');
  const key = await contextKey(url);
  const reference = await createTestDatabase(t);
  await migrate(url);
  // The migrations after the baseline then run as on any database.
  const after = readdirSync(MIGRATIONS_DIR).map((f) => /^(\d+)_.*\.sql$/.exec(f)?.[1]).filter((v): v is string => !!v)
    .filter((v) => !baselineVersions().includes(v));
  t.same(await versions(url), [...new Set([...old, ...baselineVersions(), ...after])].sort(),
    'the baseline\'s versions recorded beside the old chain\'s, then the migrations after it');
  t.equal(await contextKey(url), key, 'no baseline file ran (the context key is the one the old chain made)');
  t.same(await adoptBaseline(url), [], 'a second migrate records nothing more');
  // The template has the test fixtures besides the migrations: compare what the migrations made.
  const lines = (await compareDatabases(url, reference.adminUrl)).lines
    .filter((l) => !/^coordinator \+ \w+ (app_private|api|app)\.test_|fixture/.test(l));
  t.same(lines.filter((l) => !l.startsWith('coordinator +')), [], 'the catalog the old chain made is the baseline\'s: nothing differs but what the fixtures add');
});

t.test('a database with part of the old chain is refused', oneServer('builds a database of its own on the server'), async (t) => {
  const server = process.env.SVC_TEST_SERVER_URL!;
  const name = `svc_t_${process.env.SVC_TEST_RUN}_partchain`;
  const root = postgres(server, { max: 1, onnotice: () => {} });
  t.teardown(async () => {
    await root.unsafe(`drop database if exists ${name} with (force)`);
    await root.end();
  });
  await root.unsafe(`drop database if exists ${name} with (force)`);
  await root.unsafe(`create database ${name}`);
  const url = withDatabase(server, name);
  // What dbmate leaves after the old chain's first two files (their tables are beside the point).
  const db = postgres(url, { max: 1, onnotice: () => {} });
  await db`create table public.schema_migrations (version varchar(128) primary key)`;
  await db`insert into public.schema_migrations values ('20261122000100'), ('20261122000200')`;
  await db.end();
  await t.rejects(migrate(url), /ran part of the migrations the baseline replaced \(its newest: 20261122000200, the chain's last: 20261206050000\): migrate it with the release before the baseline first/);
  t.same(await versions(url), ['20261122000100', '20261122000200'], 'nothing recorded');
});

t.test('a new database runs the baseline', oneServer('a database of its own on the server, no cluster'), async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-baseline-'));
  writeFileSync(join(dir, '20261128000100_baseline_probe.sql'), '-- migrate:up\ncreate table public.baseline_probe ();\n-- migrate:down\n');
  const server = process.env.SVC_TEST_SERVER_URL!;
  const name = `svc_t_${process.env.SVC_TEST_RUN}_newdb`;
  const root = postgres(server, { max: 1, onnotice: () => {} });
  t.teardown(async () => {
    await root.unsafe(`drop database if exists ${name} with (force)`);
    await root.end();
    rmSync(dir, { recursive: true, force: true });
  });
  await root.unsafe(`drop database if exists ${name} with (force)`);
  t.same(await adoptBaseline(withDatabase(server, name), dir), [], 'no database yet: nothing to adopt');
  await migrate(withDatabase(server, name), dir);
  t.ok(await probeMade(withDatabase(server, name)), 'the baseline ran');
  t.same(await versions(withDatabase(server, name)), ['20261128000100'], 'dbmate ran it');
});

t.test('a coordinator that ran the cluster\'s first baseline records its replacement: nothing re-run, the catalog equal',
  { skip: CITUS_WORKERS.length === 0 && 'a Citus cluster only: make test-citus' }, async (t) => {
    const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8', cwd: REPOSITORY }).trim();
    // The last revision that holds the first baseline's placement file.
    const first = `db/citus/migrations/${REPLACED_CLUSTER_BASELINE[0]}_baseline_citus_placement.sql`;
    const last = git('log', '-1', '--format=%H', '--', first);
    const rev = git('ls-tree', '--name-only', last, first) ? last : `${last}^`;
    const oldDir = migrationsOf(rev);
    const cluster = { coordinator: process.env.SVC_TEST_SERVER_URL!, workers: CITUS_WORKERS };
    const [older, newer] = [`svc_t_${process.env.SVC_TEST_RUN}_oldcluster`, `svc_t_${process.env.SVC_TEST_RUN}_newcluster`];
    t.teardown(async () => {
      for (const name of [older, newer]) await dropClusterDatabase(cluster, name);
      rmSync(dirname(dirname(oldDir)), { recursive: true, force: true });
    });
    const url = await createClusterDatabase(cluster, older);
    await migrate(url, oldDir, { asGiven: true });
    t.ok((await versions(url)).includes(REPLACED_CLUSTER_BASELINE.at(-1)!), `the first baseline ran, as a superuser (${git('rev-parse', '--short', rev)})`);
    const relayKey = async () => {
      const sql = postgres(url, { max: 1, onnotice: () => {} });
      try {
        return (await sql<{ k: string }[]>`select encode(inner_key, 'hex') as k from app_private.relay_keys`)[0]!.k;
      } finally {
        await sql.end();
      }
    };
    const key = await relayKey();
    await migrate(url);
    const replacement = baselineVersions(MIGRATIONS_DIR, true).filter((v) => !baselineVersions().includes(v));
    const applied = await versions(url);
    t.same(replacement.filter((v) => !applied.includes(v)), [], `the replacement's versions recorded (${replacement.join(', ')})`);
    t.equal(await relayKey(), key, 'none of it ran (the relay\'s key is the one the first baseline made)');
    const fresh = await createClusterDatabase(cluster, newer);
    await migrate(fresh);
    const { lines, nodes } = await compareDatabases(url, fresh);
    // Roles are the servers', the same for both databases: a difference there is another test's
    // change between the two reads (least-privilege.test.ts turns a role's tracking on for a moment).
    t.same(lines.filter((l) => !/ role svc_/.test(l)), [], `after the bootstrap, the catalog on ${nodes} nodes is a new database's`);
  });
