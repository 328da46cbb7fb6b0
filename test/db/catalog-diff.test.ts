// scripts/catalog-diff.ts finds what differs between two databases' catalogs, and
// nothing when there is nothing: two copies of the migrated template compare equal (on Citus,
// coordinator and every worker), and one function body, grant (of ours, or on PostgreSQL's or an
// extension's own object), policy, trigger state or comment changed in one of them is each reported.
import t from 'tap';
import postgres from 'postgres';
import { createTestDatabase } from '../helpers/database.ts';
import { compareDatabases, diffCatalogs } from '../../scripts/catalog-diff.ts';

t.test('two databases the same migrations made compare equal', async (t) => {
  const a = await createTestDatabase(t);
  const b = await createTestDatabase(t);
  const { lines, objects } = await compareDatabases(a.adminUrl, b.adminUrl);
  t.same(lines, [], 'no difference');
  t.ok(objects > 1000, `${objects} catalog entries read`);
});

t.test('each kind of change is found', async (t) => {
  const a = await createTestDatabase(t);
  const b = await createTestDatabase(t);
  const sql = postgres(b.adminUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end());
  await sql.unsafe(`
    create or replace function app_private.citus_drop_shard_views() returns void language sql as 'select';
    grant select on app.organizations to svc_runtime;
    comment on table app.tasks is 'changed';
    alter policy "Clients with any Role see tasks of their organization" on app.tasks to svc_api, svc_runtime;
    revoke execute on function pg_catalog.pg_sleep(double precision) from public`);
  // Citus refuses to disable a trigger of a distributed table.
  const citus = (await sql`select from pg_extension where extname = 'citus'`).length > 0;
  if (!citus) await sql`alter table app.tasks disable trigger _100_touch_version`;
  const { lines } = await compareDatabases(a.adminUrl, b.adminUrl);
  const found = (re: RegExp) => lines.some((l) => re.test(l.split('\n')[0]!));
  t.ok(found(/^coordinator ~ function app_private\.citus_drop_shard_views\(\)$/), 'a function body');
  t.ok(found(/^coordinator ~ relation app\.organizations$/), 'a grant');
  if (!citus) t.ok(found(/^coordinator ~ trigger app\.tasks\._100_touch_version$/), 'a trigger disabled');
  t.ok(found(/^coordinator \+ comment table app\.tasks/), 'a comment');
  t.ok(found(/^coordinator ~ policy app\.tasks\.Clients with any Role see tasks of their organization$/), 'a policy');
  t.ok(found(/^coordinator \+ system_acl function pg_sleep\(double precision\)/), 'a privilege of PostgreSQL\'s own function');
  // On Citus the workers are read too: the changed function is there as well (Citus propagates it).
  if (citus) t.ok(found(/^worker 1 ~ function app_private\.citus_drop_shard_views\(\)$/), 'a worker\'s function');
});

t.test('the diff is order-independent and says which side holds what', async (t) => {
  const a = new Map([['x 1', 'a'], ['x 2', 'b']]);
  const b = new Map([['x 2', 'c'], ['x 3', 'd']]);
  t.same(diffCatalogs(a, b), ['- x 1: a', '~ x 2\n    A: b\n    B: c', '+ x 3: d']);
  t.same(diffCatalogs(new Map([...a].reverse()), a), []);
});
