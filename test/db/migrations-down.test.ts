// Every migration after the baseline rolls back: a database migrated up, rolled back to the
// baseline (dbmate rollback, newest first) has the catalog of one the baseline alone made, and
// migrated up again the catalog of one migrated once (scripts/catalog-diff.ts compares them). On a
// PostgreSQL of this test's own: a down section changes roles and their settings, which every
// database of a server shares.
import t from 'tap';
import postgres from 'postgres';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startEmbedded } from '../../scripts/embedded-pg.ts';
import { MIGRATIONS_DIR, baselineVersions, migrate, rollback, withDatabase } from '../../scripts/db.ts';
import { compareDatabases } from '../../scripts/catalog-diff.ts';
import { freePort } from '../helpers/processes.ts';

t.test('each migration after the baseline rolls back, and migrates up again to the same catalog', async (t) => {
  const lastBaseline = baselineVersions().at(-1)!;
  const after = readdirSync(MIGRATIONS_DIR).map((f) => /^(\d+)_.*\.sql$/.exec(f)?.[1])
    .filter((v): v is string => !!v && v > lastBaseline).sort();
  if (!after.length) {
    t.pass('no migration after the baseline yet: nothing to roll back');
    return;
  }
  const root = mkdtempSync(join(tmpdir(), 'svc-down-'));
  const port = await freePort();
  const pg = await startEmbedded('pg-down', port, { root: join(root, '.data') });
  t.teardown(async () => {
    await pg.stop();
    rmSync(root, { recursive: true, force: true });
    if (!pg.dataDir.startsWith(root)) rmSync(dirname(pg.dataDir), { recursive: true, force: true });
  });

  // The baseline alone, from a folder holding its files only.
  const baselineDir = join(root, 'baseline');
  mkdirSync(baselineDir);
  for (const f of readdirSync(MIGRATIONS_DIR).filter((f) => /_baseline_.*\.sql$/.test(f))) cpSync(join(MIGRATIONS_DIR, f), join(baselineDir, f));
  const baseline = withDatabase(pg.url, 'svc_baseline');
  await migrate(baseline, baselineDir);

  const once = withDatabase(pg.url, 'svc_once');
  await migrate(once);
  const redone = withDatabase(pg.url, 'svc_redone');
  await migrate(redone);

  // Another database of the server, which the service's logins may connect to: a rollback here
  // leaves it as it was.
  const server = postgres(pg.url, { max: 1, onnotice: () => {} });
  t.teardown(() => server.end());
  await server.unsafe('create database svc_other');
  await server.unsafe('grant connect on database svc_other to svc_worker, svc_admin, svc_status');
  const otherAcl = async () => (await server<{ acl: string[] }[]>`
    select array(select a::text from unnest(datacl) a order by 1) as acl from pg_database where datname = 'svc_other'`)[0]!.acl;
  const before = await otherAcl();

  for (const version of [...after].reverse()) {
    t.match(await rollback(redone), new RegExp(`Rolled back: ${version}_`), `${version} rolled back`);
  }
  const sql = postgres(redone, { max: 1, onnotice: () => {} });
  const applied = (await sql<{ version: string }[]>`select version from public.schema_migrations order by 1`).map((r) => r.version);
  await sql.end();
  t.same(applied, baselineVersions(), 'the baseline\'s versions are left');
  t.same((await compareDatabases(baseline, redone)).lines, [], 'rolled back, the catalog is the baseline\'s');
  t.same(await otherAcl(), before, 'the other database\'s privileges are untouched');

  await migrate(redone);
  t.same((await compareDatabases(once, redone)).lines, [], 'migrated up again, the catalog is that of a database migrated once');
});
