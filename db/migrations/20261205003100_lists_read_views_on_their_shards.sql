-- migrate:up

/** Issue 37, lists and gets at scale on a cluster.
 *
 * On a cluster a request's statement reads `api.tasks()` where one server reads `api.tasks`
 * (20261205000700): the function computes every row of the organization's view, and the list's
 * filters, order and page size apply after it. Correct, but a list of 50 computed all of an
 * organization's tasks. Now each worker holds, for each shard group it holds (the shard of
 * app.organizations and its colocated shards), a schema `api_shard_<shard id>` with every api view
 * as a view of the same name over that group's shards (reference tables: the node's copy), with
 * the view's options and grants, owned by svc_api: the same query and the same policies (Citus
 * puts them on every shard), planned as plain PostgreSQL, so a list's WHERE, ORDER BY and LIMIT
 * reach the indexes. In the organization's worker, api.in_organization reads
 * `api_shard_<n>.tasks` in place of `api.tasks()` when that group's copies are current, and the
 * function otherwise: slower, never wrong.
 *
 * Current means: made after the last change to any api view on that node. An event trigger on
 * each worker advances the node's generation (a sequence: not transactional, so it takes no lock
 * and is seen at once, before the change commits) on any DDL in schema api, which Citus sends
 * there; the copies record the generation they were made at. app_private.citus_refresh_shard_views()
 * makes them again, and app_private.citus_copy_privileges() calls it, which a migration that
 * changes a view calls in the migration after it (db/README.md). A shard moved away takes its
 * copies with it (Citus drops a shard with CASCADE), and a copy dropped under a request that had
 * chosen it sends that request to the function. A migration that drops or retypes a column a view
 * reads calls app_private.citus_drop_shard_views() in the migration before it (the copies depend
 * on the shard's columns). */

/** The SQL of api view p_view on one shard group: each table it reads that is distributed and
 * colocated with app.organizations becomes its shard with the hash range of app.organizations'
 * shard p_shard, each reference table its local copy. Every api view names its tables with an alias
 * (tables are renamed, not column references). */
create function app_private.view_on_shard_group(p_view regclass, p_shard bigint) returns text
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_sql text := rtrim(pg_get_viewdef(p_view), '; ');
  r record;
begin
  for r in
    execute $q$
      select distinct c.oid::regclass::text as name, shard_name(c.oid, s.shardid) as shard
        from pg_depend d
        join pg_rewrite rw on rw.oid = d.objid
        join pg_class c on c.oid = d.refobjid
        join pg_dist_partition p on p.logicalrelid = c.oid
        join pg_dist_shard s on s.logicalrelid = c.oid
       where d.classid = 'pg_rewrite'::regclass and d.refclassid = 'pg_class'::regclass and rw.ev_class = $2
         and ((p.partmethod = 'n' and p.repmodel = 't')
              or (p.colocationid = (select o.colocationid from pg_dist_partition o where o.logicalrelid = 'app.organizations'::regclass)
                  and s.shardminvalue = (select g.shardminvalue from pg_dist_shard g where g.shardid = $1)))$q$
    using p_shard, p_view
  loop
    v_sql := regexp_replace(v_sql, '(^|[^\w."])' || replace(r.name, '.', '\.') || '(?![\w"])', '\1' || r.shard, 'g');
  end loop;
  return v_sql;
end
$$;
revoke execute on function app_private.view_on_shard_group(regclass, bigint) from public;
grant execute on function app_private.view_on_shard_group(regclass, bigint) to svc_api;

/** The api.<view>() functions read the same SQL for their organization's group. A coordinator's
 * dump restored as one database has the extension and no distributed table: the view as it is. */
create or replace function app_private.view_on_shards(p_view regclass, p_organization_id text) returns text
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
begin
  if not exists (select from pg_dist_partition where logicalrelid = 'app.organizations'::regclass) then
    return rtrim(pg_get_viewdef(p_view), '; ');
  end if;
  return app_private.view_on_shard_group(p_view,
    get_shard_id_for_distribution_column('app.organizations', p_organization_id));
end
$$;

/** The gate in every copy (a condition without columns: evaluated once per statement): a copy made
 * before the node's current generation refuses to be read, whoever names it, and the statement
 * goes to the view function (api.in_organization). */
create function app_private.shard_views_current(p_generation bigint) returns boolean
language plpgsql stable security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  if pg_sequence_last_value('app_private.shard_views_generation'::regclass) is distinct from p_generation then
    perform app_private.raise('SV500', 'SHARD_VIEWS_STALE', 'this copy of an api view is older than the view');
  end if;
  return true;
end
$$;
alter function app_private.shard_views_current(bigint) owner to svc_api;
revoke execute on function app_private.shard_views_current(bigint) from public;
grant execute on function app_private.shard_views_current(bigint) to svc_runtime;

/** On this node: the schema api_shard_<shard> with every api view over shard group p_shard, given
 * as the name of its app.organizations shard (what run_command_on_placements passes). The marker
 * view `?views` reads every copy, so that it goes with any of them, and its comment holds the
 * node's generation when they were made and their names. */
create function app_private.shard_views_create(p_organizations_shard text) returns void
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
  v_shard bigint := substring(p_organizations_shard from '_(\d+)$')::bigint;
  v_schema text := 'api_shard_' || v_shard;
  v_generation bigint;
  v record;
  g record;
  v_names text[] := '{}';
begin
  -- Local objects of this node: Citus is not to send them anywhere.
  perform set_config('citus.enable_ddl_propagation', 'off', true);
  perform set_config('svc.making_shard_views', 'on', true);
  -- After every change in flight (each holds the lock shared until it ends; a change committed
  -- meanwhile leaves these copies behind its generation), and not forever: a refresh in the same
  -- migration as a change would wait for itself.
  perform set_config('lock_timeout', '10s', true);
  perform pg_advisory_xact_lock(2026, 37);
  v_generation := pg_sequence_last_value('app_private.shard_views_generation'::regclass);
  execute format('drop schema if exists %I cascade', v_schema);
  execute format('create schema %I', v_schema);
  execute format('grant usage on schema %I to svc_api', v_schema);
  for v in
    select c.oid, c.relname, c.reloptions, c.relacl, c.relowner
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = 'api' and c.relkind = 'v'
     order by c.relname
  loop
    execute format('create view %I.%I%s as select * from (%s) v where app_private.shard_views_current(%s)', v_schema, v.relname,
      case when v.reloptions is null then '' else format(' with (%s)', array_to_string(v.reloptions, ', ')) end,
      app_private.view_on_shard_group(v.oid, v_shard), v_generation);
    execute format('alter view %I.%I owner to svc_api', v_schema, v.relname);
    -- The api view's grants, and the schema to whoever has one.
    execute format('revoke all on %I.%I from public', v_schema, v.relname);
    for g in
      select case e.grantee when 0 then 'public' else quote_ident(pg_get_userbyid(e.grantee)) end as grantee,
             string_agg(e.privilege_type, ', ') as privileges
        from aclexplode(v.relacl) e where e.grantee <> v.relowner group by e.grantee
    loop
      execute format('grant %s on %I.%I to %s', g.privileges, v_schema, v.relname, g.grantee);
      execute format('grant usage on schema %I to %s', v_schema, g.grantee);
    end loop;
    v_names := v_names || v.relname::text;
  end loop;
  execute format('create view %I.%I as select from %s where false', v_schema, '?views',
    (select string_agg(format('%I.%I', v_schema, x), ', ') from unnest(v_names) x));
  execute format('comment on view %I.%I is %L', v_schema, '?views', v_generation || ':' || array_to_string(v_names, '|'));
  perform set_config('svc.making_shard_views', 'off', true);
end
$$;
revoke execute on function app_private.shard_views_create(text) from public;

/** On this node: every copy dropped. */
create function app_private.shard_views_drop() returns void
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
  s record;
begin
  perform set_config('citus.enable_ddl_propagation', 'off', true);
  for s in select nspname from pg_namespace where nspname like 'api\_shard\_%' loop
    execute format('drop schema %I cascade', s.nspname);
  end loop;
end
$$;
revoke execute on function app_private.shard_views_drop() from public;

/** Event triggers on each worker: any DDL on an object in schema api there (Citus sends the
 * coordinator's), or any GRANT or REVOKE, advances the node's generation, so that no copy made
 * before it is read. It drops nothing: the migration that changes a view holds no lock on the
 * copies, and requests go on, through the functions, until the refresh. */
create function app_private.tg_shard_views_stale() returns event_trigger
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  -- Only a superuser changes the api views here (their owner cannot log in), and the copies' own
  -- DDL (shard_views_create) changes none.
  if not exists (select from pg_roles where rolname = current_user and rolsuper)
     or current_setting('svc.making_shard_views', true) = 'on' then
    return;
  end if;
  if tg_event = 'sql_drop' then
    if not exists (select from pg_event_trigger_dropped_objects() o where o.schema_name = 'api') then
      return;
    end if;
  elsif tg_tag not in ('GRANT', 'REVOKE')
        and not exists (select from pg_event_trigger_ddl_commands() c where c.schema_name = 'api') then
    return;
  end if;
  if to_regclass('app_private.shard_views_generation') is not null then
    -- Held until this change ends: a refresh waits for it (shard_views_create).
    perform pg_advisory_xact_lock_shared(2026, 37);
    perform nextval('app_private.shard_views_generation');
  end if;
end
$$;
revoke execute on function app_private.tg_shard_views_stale() from public;

/** On the coordinator: every worker's copies made again from the current api views, for the shard
 * groups it holds now (its generation sequence and event triggers put in place first). Without
 * Citus it does nothing. */
create function app_private.citus_refresh_shard_views() returns void
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
  v_failed text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  -- run_command_on_* report a failure instead of raising it.
  select string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') into v_failed
    from run_command_on_workers($c$
      do $d$
      begin
        set local citus.enable_ddl_propagation = off;
        perform app_private.shard_views_drop();
        if to_regclass('app_private.shard_views_generation') is null then
          create sequence app_private.shard_views_generation;
          perform nextval('app_private.shard_views_generation');
          grant select on sequence app_private.shard_views_generation to svc_api;
        end if;
        if not exists (select from pg_event_trigger where evtname = 'shard_views_stale') then
          create event trigger shard_views_stale on ddl_command_end
            execute function app_private.tg_shard_views_stale();
        end if;
        if not exists (select from pg_event_trigger where evtname = 'shard_views_dropped') then
          create event trigger shard_views_dropped on sql_drop
            execute function app_private.tg_shard_views_stale();
        end if;
      end
      $d$ $c$)
   where not success;
  if v_failed is null then
    select string_agg(format('%s:%s %s: %s', nodename, nodeport, shardid, result), '; ') into v_failed
      from run_command_on_placements('app.organizations', 'select app_private.shard_views_create(''%s'')')
     where not success;
  end if;
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_SHARD_VIEWS_NOT_MADE', format('making the shard views failed: %s', v_failed));
  end if;
end
$$;
revoke execute on function app_private.citus_refresh_shard_views() from public;

/** On the coordinator: every worker's copies dropped, committed at once (a connection of its own
 * per worker). A migration that drops or retypes a column an api view reads calls it in the
 * migration before: the copies depend on the shards' columns. */
create function app_private.citus_drop_shard_views() returns void
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
  v_failed text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  select string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') into v_failed
    from run_command_on_workers('select app_private.shard_views_drop()') where not success;
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_SHARD_VIEWS_NOT_MADE', format('dropping the shard views failed: %s', v_failed));
  end if;
end
$$;
revoke execute on function app_private.citus_drop_shard_views() from public;

/** In the organization's worker: the statement with each `api.<view>()` read from that
 * organization's shard group's copy of the view, when this node has them at its current
 * generation (see above). Text only: either form reads the same rows under the same policies, as
 * the caller. As svc_api only because Citus answers which shard holds an organization to those who
 * may read app.organizations. */
create function app_private.statement_on_shards(p_organization_id text, p_statement text) returns text
language plpgsql stable security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_schema text;
  v_marker text;
  v_generation regclass;
begin
  -- Separate tests: an expression that names pg_dist_partition cannot be planned without Citus.
  if strpos(p_statement, '()') = 0 or to_regclass('pg_catalog.pg_dist_partition') is null then
    return p_statement;
  end if;
  v_generation := to_regclass('app_private.shard_views_generation');
  if v_generation is null
     or not exists (select from pg_dist_partition where logicalrelid = 'app.organizations'::regclass) then
    return p_statement;
  end if;
  v_schema := 'api_shard_' || get_shard_id_for_distribution_column('app.organizations', p_organization_id);
  select d.description into v_marker
    from pg_class c
    join pg_description d on d.objoid = c.oid and d.classoid = 'pg_class'::regclass and d.objsubid = 0
   where c.relname = '?views' and c.relnamespace = to_regnamespace(v_schema);
  if v_marker is null or split_part(v_marker, ':', 1)::bigint is distinct from pg_sequence_last_value(v_generation) then
    return p_statement;
  end if;
  return regexp_replace(p_statement, '(^|[^\w."])api\.(' || split_part(v_marker, ':', 2) || ')\(\)', '\1' || v_schema || '.\2', 'g');
end
$$;
alter function app_private.statement_on_shards(text, text) owner to svc_api;
revoke execute on function app_private.statement_on_shards(text, text) from public;
grant execute on function app_private.statement_on_shards(text, text) to svc_runtime;

/** A copy dropped between its choice and its use (a refresh, a shard moved away), or one whose
 * gate finds it stale (a view changed since): the function. Both errors come before any row (while
 * the statement is planned, or at its one-time filter). */
create or replace function api.in_organization(p_organization_id text, p_statement text, p_arguments text[])
returns setof record
language plpgsql security invoker
as $$
declare
  v_statement text := app_private.statement_on_shards(p_organization_id, p_statement);
begin
  if v_statement = p_statement then
    return query execute p_statement using p_arguments;
    return;
  end if;
  begin
    return query execute v_statement using p_arguments;
  exception
    when undefined_table then
      return query execute p_statement using p_arguments;
    when sqlstate 'SV500' then
      if sqlerrm <> 'SHARD_VIEWS_STALE' then
        raise;
      end if;
      return query execute p_statement using p_arguments;
  end;
end
$$;

create or replace function api.in_organization_count(p_organization_id text, p_statement text, p_arguments text[])
returns bigint
language plpgsql security invoker
as $$
declare
  v_statement text := app_private.statement_on_shards(p_organization_id, p_statement);
  v_count bigint;
begin
  if v_statement = p_statement then
    execute p_statement using p_arguments;
    get diagnostics v_count = row_count;
    return v_count;
  end if;
  begin
    execute v_statement using p_arguments;
    get diagnostics v_count = row_count;
  exception
    when undefined_table then
      execute p_statement using p_arguments;
      get diagnostics v_count = row_count;
    when sqlstate 'SV500' then
      if sqlerrm <> 'SHARD_VIEWS_STALE' then
        raise;
      end if;
      execute p_statement using p_arguments;
      get diagnostics v_count = row_count;
  end;
  return v_count;
end
$$;

/** citus_copy_privileges (which a migration calls after the one that creates or changes a function
 * or view) also makes the shard views again. */
create or replace procedure app_private.citus_copy_privileges()
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
  o record;
  v_commands text[] := '{}';
  v_failed text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  -- Objects whose ACL is still the default (null) are created alike on every node: nothing to copy.
  for o in
    select 'function' as kind, p.oid::regprocedure::text as name, p.proowner as owner, p.proacl as acl
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname in ('api', 'app', 'app_private', 'control', 'skills', 'reporting') and p.proacl is not null and p.prokind = 'f'
       and not exists (select from pg_depend d where d.objid = p.oid and d.deptype = 'e')
    union all
    select 'table', c.oid::regclass::text, c.relowner, c.relacl
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname in ('api', 'reporting') and c.relkind = 'v' and c.relacl is not null
  loop
    -- The owner keeps its own privileges: revoked from everyone else, then granted as here.
    v_commands := v_commands || format('revoke all on %s %s from %s', o.kind, o.name,
      (select string_agg(r, ', ') from unnest(array['public', 'svc_api', 'svc_runtime', 'svc_reporting']) r
        where r <> pg_get_userbyid(o.owner)));
    v_commands := v_commands || array(
      select format('grant %s on %s %s to %s', string_agg(e.privilege_type, ', '), o.kind, o.name,
               case e.grantee when 0 then 'public' else quote_ident(pg_get_userbyid(e.grantee)) end)
        from aclexplode(o.acl) e where e.grantee <> o.owner group by e.grantee);
  end loop;
  if cardinality(v_commands) > 0 then
    -- A worker refuses DDL on a distributed object unless its propagation is off (it is the
    -- coordinator's to propagate); run_command_on_workers reports a failure instead of raising it.
    select string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') into v_failed
      from run_command_on_workers(format('do %s begin set local citus.enable_ddl_propagation = off; %s end %s', '$copy$',
             (select string_agg(format('execute %L;', c), ' ') from unnest(v_commands) c), '$copy$'))
     where not success;
    if v_failed is not null then
      perform app_private.raise('SV500', 'CITUS_PRIVILEGES_NOT_COPIED', format('copying privileges to the workers failed: %s', v_failed));
    end if;
  end if;
  perform app_private.citus_refresh_shard_views();
end
$$;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'restore a backup taken before 20261205003100'); end $$;
