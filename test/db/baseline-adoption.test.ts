// A database the old chain of migrations made keeps working after the squash (issue 38):
// scripts/db.ts migrate records the baseline's versions as applied when the database ran the whole
// old chain (nothing of the baseline runs, the catalog is what it was), refuses one that ran part
// of it, and leaves a new database to run the baseline.
//
// Until the baseline is in db/migrations the "new code" is two baseline files of its own (probes:
// were one run, it would create public.baseline_probe).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { createTestDatabase, oneServer } from '../helpers/app.ts';
import { adoptBaseline, baselineVersions, migrate, MIGRATIONS_DIR, OLD_CHAIN_LAST, withDatabase } from '../../scripts/db.ts';
import { compareDatabases, migrationsOf } from '../../scripts/catalog-diff.ts';

/** The new chain: db/migrations once it holds the baseline; until then two probe files in its
 * place, dated as the baseline is (the first shares its version with the old chain's
 * 20261128000100_batched_fanout, as the baseline's first does). */
function newChain(t: { teardown: (f: () => void) => void }): string {
  if (baselineVersions(MIGRATIONS_DIR).length) return MIGRATIONS_DIR;
  const dir = mkdtempSync(join(tmpdir(), 'svc-baseline-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const v of ['20261128000100', '20261128000200']) {
    writeFileSync(join(dir, `${v}_baseline_probe.sql`), '-- migrate:up\ncreate table if not exists public.baseline_probe ();\n-- migrate:down\n');
  }
  return dir;
}

const versions = async (url: string) => {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return (await sql<{ version: string }[]>`select version::text from public.schema_migrations order by 1`).map((r) => r.version);
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

t.test('a database the whole old chain made: the baseline recorded, nothing re-run, the catalog equal', async (t) => {
  const dir = newChain(t);
  const before = await createTestDatabase(t);
  const after = await createTestDatabase(t);
  const old = await versions(after.adminUrl);
  t.ok(old.includes(OLD_CHAIN_LAST), 'the template ran the old chain');
  await migrate(after.adminUrl, dir);
  const now = await versions(after.adminUrl);
  t.same(now, [...new Set([...old, ...baselineVersions(dir)])].sort(), 'the baseline\'s versions recorded beside the old chain\'s');
  t.notOk(await probeMade(after.adminUrl), 'no baseline file ran');
  t.same((await compareDatabases(before.adminUrl, after.adminUrl)).lines, [], 'catalog as before');
  t.same(await adoptBaseline(after.adminUrl, dir), [], 'a second migrate records nothing more');
});

t.test('the old chain from git history, then the new code', oneServer('builds a database of its own on the server'), async (t) => {
  const dir = newChain(t);
  const server = process.env.SVC_TEST_SERVER_URL!;
  const rev = execFileSync('git', ['log', '-1', '--format=%H', '--', `db/migrations/${OLD_CHAIN_LAST}_*`], { encoding: 'utf8' }).trim();
  t.ok(rev, `the old chain's last file is in git history (${rev})`);
  const oldDir = migrationsOf(rev);
  const name = `svc_t_${process.env.SVC_TEST_RUN}_oldchain`;
  const root = postgres(server, { max: 1, onnotice: () => {} });
  t.teardown(async () => {
    await root.unsafe(`drop database if exists ${name} with (force)`);
    await root.end();
    rmSync(oldDir, { recursive: true, force: true });
  });
  await root.unsafe(`drop database if exists ${name} with (force)`);
  const url = withDatabase(server, name);
  await migrate(url, oldDir);
  const reference = await createTestDatabase(t);
  await migrate(url, dir);
  const now = await versions(url);
  t.notOk(await probeMade(url), 'no baseline file ran');
  t.same(baselineVersions(dir).filter((v) => !now.includes(v)), [], 'the baseline recorded');
  // The template has the test fixtures besides the migrations: compare what the migrations made.
  const lines = (await compareDatabases(url, reference.adminUrl)).lines
    .filter((l) => !/^coordinator \+ \w+ (app_private|api|app)\.test_|fixture/.test(l));
  t.same(lines.filter((l) => !l.startsWith('coordinator +')), [], 'nothing differs but what the fixtures add');
});

t.test('a database with part of the old chain is refused', async (t) => {
  const dir = newChain(t);
  const db = await createTestDatabase(t);
  const sql = postgres(db.adminUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end());
  await sql`delete from public.schema_migrations where version = ${OLD_CHAIN_LAST}`;
  const before = await versions(db.adminUrl);
  await t.rejects(migrate(db.adminUrl, dir), /ran part of the migrations the baseline replaced \(its newest: \d+, the chain's last: 20261205003400\): migrate it with the release before the baseline first/);
  t.same(await versions(db.adminUrl), before, 'nothing recorded');
  t.notOk(await probeMade(db.adminUrl), 'nothing ran');
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
