-- migrate:up

/** Every function of ours with its own search_path searches the session's temporary schema last.
 *
 * PostgreSQL searches the temporary schema first for relations and types unless the search_path
 * names it: in a function with `search_path = pg_catalog`, a variable declared `text` took the type
 * of a session's `pg_temp.text`. A login with TEMPORARY on the database (PUBLIC has it) made a
 * domain of that name whose check calls a function of its own, and that function then ran as the
 * owner of any SECURITY DEFINER function it called (measured on PostgreSQL 15: "ran as postgres";
 * test/db/definer-search-path.test.ts). PostgreSQL's advice for SECURITY DEFINER functions: name
 * pg_temp last. A function added later sets `search_path = pg_catalog, pg_temp` (db/README.md). */
do $$
declare
  f record;
begin
  for f in
    select p.oid::regprocedure as fn, case p.prokind when 'p' then 'procedure' else 'function' end as kind,
           substr(c, length('search_path=') + 1) as path
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace, unnest(p.proconfig) c
     where n.nspname in ('api', 'app', 'app_private', 'control', 'skills', 'reporting')
       and c like 'search_path=%' and c !~ '\mpg_temp\M'
       and not exists (select from pg_depend d where d.objid = p.oid and d.deptype = 'e')
  loop
    execute format('alter %s %s set search_path = %s, pg_temp', f.kind, f.fn, f.path);
  end loop;
end
$$;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'restore a backup taken before 20261205003000'); end $$;
