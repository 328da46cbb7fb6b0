// A DBA reads the rules where PostgreSQL keeps them: every row policy, every trigger function and
// every security-definer function carries a COMMENT that says the rule it enforces and why
// (`\d+` shows a table's policies with theirs, `\df+` a function's). A new one without fails here.
import t from 'tap';
import postgres from 'postgres';
import { createTestDatabase } from '../helpers/database.ts';
import { oneConnection } from '../helpers/sql.ts';

const OURS = `('api', 'app', 'app_private', 'control', 'reporting', 'reporting_private', 'skills')`;

t.test('every policy, trigger function and definer says its reason', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const sql = postgres(adminUrl, oneConnection);
  t.teardown(() => sql.end());
  const policies = await sql<{ name: string; reason: string | null }[]>`
    select format('%I on %s', p.polname, p.polrelid::regclass) as name, obj_description(p.oid, 'pg_policy') as reason
      from pg_policy p`;
  const functions = await sql<{ name: string; reason: string | null }[]>`
    select p.oid::regprocedure::text as name, obj_description(p.oid, 'pg_proc') as reason
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname in ${sql.unsafe(OURS)} and (p.prosecdef or p.prorettype = 'trigger'::regtype)`;
  t.ok(policies.length > 140, `${policies.length} policies`);
  t.ok(functions.length > 200, `${functions.length} trigger functions and definers`);
  t.same(policies.filter((p) => !p.reason?.trim()).map((p) => p.name), [], 'every policy has a reason');
  t.same(functions.filter((f) => !f.reason?.trim()).map((f) => f.name), [], 'every trigger function and definer has a reason');
  // A reason says how things are, not where they came from.
  const dated = [...policies, ...functions].filter((o) => /\bissue \d+|\b20\d\d-\d\d-\d\d\b|\b20\d{12}\b/i.test(o.reason ?? ''));
  t.same(dated.map((o) => o.name), [], 'no reason cites an issue, a date or a migration');
});
