// Every function of ours is called by something: a trigger or event trigger, a view, policy,
// default or constraint, another function's body, a row of a reference table that names it (a
// report's or a skill's function), the server's or the tools' code (src/, scripts/, bench/, and the
// test fixtures' routes in test/helpers/), or a
// procedure db/README.md or docs/scaling.md gives a DBA or a migration's author. A function
// nothing calls is dead code a reviewer still has to read, and a grant still to keep right.
import t from 'tap';
import postgres from 'postgres';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createTestDatabase } from '../helpers/database.ts';
import { oneConnection } from '../helpers/sql.ts';

/** Every file's text under the folders, for a word search. */
function textOf(paths: string[]): string {
  const out: string[] = [];
  const walk = (p: string) => {
    if (statSync(p).isDirectory()) {
      for (const f of readdirSync(p)) if (f !== 'node_modules') walk(join(p, f));
    } else if (/\.(ts|md|sql)$/.test(p)) {
      out.push(readFileSync(p, 'utf8'));
    }
  };
  for (const p of paths) walk(p);
  return out.join('\n');
}

t.test('no function of ours is left uncalled', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const sql = postgres(adminUrl, oneConnection);
  t.teardown(() => sql.end());
  const uncalled = await sql<{ schema: string; name: string; fn: string }[]>`
    with f as (
      select p.oid, n.nspname, p.proname
        from pg_proc p join pg_namespace n on n.oid = p.pronamespace
       where n.nspname in ('api', 'app', 'app_private', 'control', 'reporting', 'reporting_private', 'skills')
         and not exists (select from pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e'))
    select f.nspname as schema, f.proname as name, f.oid::regprocedure::text as fn from f
     where not exists (select from pg_trigger tg where tg.tgfoid = f.oid)
       and not exists (select from pg_event_trigger e where e.evtfoid = f.oid)
       and not exists (select from pg_depend d where d.refclassid = 'pg_proc'::regclass and d.refobjid = f.oid
                          and d.classid <> 'pg_proc'::regclass)
       and not exists (select from pg_proc q where q.oid <> f.oid and q.prosrc ~ ('\\m' || f.proname || '\\M'))
     order by 3`;
  // Reference tables that name functions in their rows (a report's function, a skill's).
  const named = (await sql<{ row: string }[]>`
    select to_jsonb(d)::text as row from app_private.report_definitions d
    union all select to_jsonb(s)::text from app_private.agent_skills s`).map((r) => r.row).join('\n');
  const code = textOf(['src', 'scripts', 'bench', 'test/helpers']);
  const procedures = textOf(['db/README.md', 'docs/scaling.md']);
  const word = (name: string) => new RegExp(`\\b${name}\\b`);
  const dead = uncalled.filter((f) => !word(f.name).test(code) && !word(f.name).test(procedures)
    && !named.includes(`${f.schema}.${f.name}`) && !word(f.name).test(named));
  t.ok(uncalled.length > 0, `${uncalled.length} functions no SQL object calls, each named where it is called`);
  t.same(dead.map((f) => f.fn), [], 'no function is called by nothing');
});
