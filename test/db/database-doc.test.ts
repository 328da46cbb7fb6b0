// Guard: docs/database.md (policies, grants, triggers, functions for DBAs) matches the migrated
// database (`make dbdoc` fixes it); on a cluster, docs/database-citus.md (`make dbdoc-citus`). The
// test's clone of the template also holds the test fixtures (test/fixtures/*.sql, objects named
// test_*), which the committed document must not describe.
import t from 'tap';
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { createTestDatabase } from '../helpers/database.ts';
import { CITUS_DOC_PATH, databaseDoc, DOC_PATH } from '../../scripts/database-doc.ts';

/** The first line that differs, so a failure says where without dumping two 1,000-line files. */
function firstDifference(actual: string, expected: string): string {
  const a = actual.split('\n');
  const e = expected.split('\n');
  const i = a.findIndex((line, n) => line !== e[n]);
  const n = i === -1 ? a.length : i;
  return `line ${n + 1}:\n  generated: ${JSON.stringify(a[n] ?? '<end of file>')}\n  committed: ${JSON.stringify(e[n] ?? '<end of file>')}`;
}

t.test('docs/database.md (on a cluster, docs/database-citus.md) is fresh', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end());
  const [found] = await sql<{ citus: boolean }[]>`select exists (select from pg_extension where extname = 'citus') as citus`;
  const [path, make] = found?.citus ? [CITUS_DOC_PATH, 'make dbdoc-citus'] : [DOC_PATH, 'make dbdoc'];
  if (found?.citus) {
    // A fixture's grants on a cluster (test/fixtures/002_inside_checks.sql), taken back in this test's copy.
    await sql`revoke execute on function api.in_organization(text, text, text[]), api.in_organization_count(text, text, text[]) from svc_api`;
  }
  const generated = await databaseDoc(sql, { excludeTestFixtures: true });
  t.notMatch(generated, /\btest_widget/, 'test fixtures are left out');
  let committed = '';
  try {
    committed = readFileSync(path, 'utf8');
  } catch {
    // Missing file: compared as empty, so the message below says what to do.
  }
  t.ok(generated === committed, generated === committed ? `${path} is up to date`
    : `${path} is stale: run \`${make}\` (first difference at ${firstDifference(generated, committed)})`);
});
