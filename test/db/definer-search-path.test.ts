// A session's temporary schema cannot hijack a SECURITY DEFINER function (each searches pg_temp
// last): unnamed in a function's search_path, pg_temp is searched first for types, and a
// domain `pg_temp.text` whose check calls the session's own function ran that function as the
// definer's owner wherever the definer declared a `text` variable.
import t from 'tap';
import postgres from 'postgres';
import { createTestDatabase } from '../helpers/database.ts';
import { oneConnection } from '../helpers/sql.ts';

t.test('every definer function searches pg_temp last, and a temporary text domain runs nothing as its owner', async (t) => {
  const { adminUrl, runtimeUrl } = await createTestDatabase(t);
  const admin = postgres(adminUrl, oneConnection);
  t.teardown(() => admin.end());
  const open = await admin<{ fn: string }[]>`
    select p.oid::regprocedure::text as fn
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname in ('api', 'app', 'app_private', 'control', 'skills', 'reporting')
       and not exists (select from pg_depend d where d.objid = p.oid and d.deptype = 'e')
       and (p.prosecdef or p.proconfig is not null)
       and not exists (select from unnest(p.proconfig) c where c like 'search_path=%' and c ~ '\\mpg_temp$')
     order by 1`;
  t.same(open.map((r) => r.fn), [], 'every function with a role or a search_path of its own names pg_temp last');

  const rt = postgres(runtimeUrl, oneConnection);
  t.teardown(() => rt.end());
  await rt.unsafe(`create function pg_temp.hijack(pg_catalog.text) returns boolean language plpgsql as $$
      begin raise exception 'ran as %', current_user; end $$`);
  await rt.unsafe('create domain pg_temp.text as pg_catalog.text check (pg_temp.hijack(value))');
  // may_read_tickets() is a definer the runtime role may call, with a `text` variable.
  const outcome = await rt`select app_private.may_read_tickets() as ok`.then((r) => String(r[0]!.ok), (e) => String(e.message));
  t.equal(outcome, 'false', 'the definer declared pg_catalog.text: nothing ran as its owner');
});
