-- migrate:up

/** Baseline (issue 38), area 13 of 15. Distribution on Citus: the helpers that place and prepare shards (run on one server too, where they do nothing).
 * The current definitions that migrations 20261122000100 to 20261205003400 built (git history before
 * the baseline), as pg_dump writes them; db/README.md says how they were made and compared. */
SET LOCAL check_function_bodies = false;
SET LOCAL client_min_messages = warning;
SELECT pg_catalog.set_config('search_path', '', true);

-- procedure app_private.citus_add_worker(text, integer, text)

CREATE PROCEDURE app_private.citus_add_worker(IN p_host text, IN p_port integer, IN p_shard_transfer_mode text DEFAULT 'auto'::text)
    LANGUAGE plpgsql
    AS $$
begin
  if not exists (select from pg_catalog.pg_extension where extname = 'citus') then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', 'this database has no citus extension: there is no cluster to grow');
  end if;
  if not exists (select from pg_catalog.pg_dist_node where nodename = p_host and nodeport = p_port) then
    perform pg_catalog.citus_add_node(p_host, p_port);
  elsif not exists (select from pg_catalog.pg_dist_node where nodename = p_host and nodeport = p_port and isactive) then
    perform pg_catalog.citus_activate_node(p_host, p_port);
  end if;
  commit;
  call app_private.citus_prepare_workers();
  commit;
  -- A rebalance still running (this call run again after its wait was cut short) is waited for,
  -- not started twice (Citus refuses that).
  if not exists (select from pg_catalog.pg_dist_background_job where state in ('scheduled', 'running', 'cancelling', 'failing')) then
    perform pg_catalog.citus_rebalance_start(shard_transfer_mode => p_shard_transfer_mode::citus.shard_transfer_mode);
  end if;
  commit;
  perform pg_catalog.citus_rebalance_wait();
  commit;
  -- The moved shard groups: copies on the nodes that now hold them, none where they left.
  call app_private.citus_prepare_workers();
end
$$;

-- function app_private.citus_context_keys()

CREATE FUNCTION app_private.citus_context_keys() RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_failed text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  select string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') into v_failed
    from run_command_on_workers($w$
      do $k$
      declare
        k bytea := sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8'))
                || sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8'));
        i bytea := k;
        o bytea := k;
      begin
        set local citus.enable_ddl_propagation = off;
        create table if not exists app_private.context_keys (
          id boolean primary key default true constraint context_keys_one_row check (id),
          inner_key bytea not null,
          outer_key bytea not null);
        revoke all on app_private.context_keys from public;
        for n in 0..63 loop
          i := set_byte(i, n, get_byte(k, n) # 54);
          o := set_byte(o, n, get_byte(k, n) # 92);
        end loop;
        insert into app_private.context_keys (inner_key, outer_key) values (i, o) on conflict do nothing;
      end
      $k$ $w$)
   where not success;
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', format('making the workers'' context keys failed: %s', v_failed));
  end if;
end
$_$;

-- procedure app_private.citus_copy_privileges()

CREATE PROCEDURE app_private.citus_copy_privileges()
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
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
$_$;

-- function app_private.citus_drop_shard_views()

CREATE FUNCTION app_private.citus_drop_shard_views() RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.citus_prepare_if_needed()

CREATE FUNCTION app_private.citus_prepare_if_needed() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_failed text;
  v_unprepared integer;
begin
  -- Separate tests: an expression that names pg_dist_partition cannot be planned without Citus.
  if not exists (select from pg_extension where extname = 'citus') then
    return 0;
  end if;
  if not exists (select from pg_dist_partition where logicalrelid = 'app.organizations'::regclass) then
    return 0;
  end if;
  if exists (select from pg_dist_background_job where state in ('scheduled', 'running', 'cancelling', 'failing')) then
    return -1;
  end if;
  select string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') filter (where not success),
         coalesce(sum(result::integer) filter (where success), 0)
    into v_failed, v_unprepared
    from run_command_on_workers('select app_private.shard_groups_unprepared()');
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', format('checking the workers failed: %s', v_failed));
  end if;
  if v_unprepared > 0 then
    call app_private.citus_prepare_workers();
  end if;
  return v_unprepared;
end
$$;

-- procedure app_private.citus_prepare_workers()

CREATE PROCEDURE app_private.citus_prepare_workers()
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.citus_context_keys();
  -- A moved shard is made anew without the column grants of 20261205000600: svc_api's inserts there
  -- were refused (measured).
  call app_private.citus_shard_privileges();
  -- Before the copies are made: a grant on a worker advances its generation (20261205003100).
  perform app_private.citus_relay_privileges();
  call app_private.citus_copy_privileges();
end
$$;

-- function app_private.citus_read_view_functions(regprocedure[])

CREATE FUNCTION app_private.citus_read_view_functions(p_functions regprocedure[]) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_views text;
  v_old text;
  v_def text;
  f regprocedure;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  select string_agg(c.relname, '|') into v_views from pg_class c where c.relnamespace = 'api'::regnamespace and c.relkind = 'v';
  foreach f in array coalesce(p_functions, '{}') loop
    v_old := pg_get_functiondef(f);
    v_def := regexp_replace(v_old, '(from|join)(\s+)api\.(' || v_views || ')(\s+)([a-z_]+)(\s+where\s+)\5\.id(\s*=\s*)([lpv]_?[a-z_.]+)(?![\w(])(?!\s*-)',
                            '\1\2api.\3(\8)\4\5\6\5.id\7\8', 'g');
    v_def := regexp_replace(v_def, '(from|join)(\s+)api\.(' || v_views || ')\M(?!\()', '\1\2api.\3()', 'g');
    if v_def <> v_old then
      execute v_def;
    end if;
  end loop;
end
$$;

-- function app_private.citus_refresh_shard_views()

CREATE FUNCTION app_private.citus_refresh_shard_views() RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
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
$_$;

-- function app_private.citus_relay_privileges()

CREATE FUNCTION app_private.citus_relay_privileges() RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_failed text;
begin
  if to_regnamespace('reporting_private') is null then
    return;
  end if;
  select string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') into v_failed
    from run_command_on_workers($w$do $r$ begin set local citus.enable_ddl_propagation = off;
      revoke execute on all functions in schema svc_dblink from public;
      revoke all on schema svc_dblink, reporting_private from public;
      grant usage on schema reporting_private to svc_reporting_relay;
      revoke all on function reporting_private.bi_rows_of(text, text, text[]) from public;
      grant execute on function reporting_private.bi_rows_of(text, text, text[]) to svc_reporting_relay;
      end $r$$w$)
   where not success;
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_PRIVILEGES_NOT_COPIED', format('the relay''s privileges on the workers: %s', v_failed));
  end if;
end
$_$;

-- procedure app_private.citus_shard_privileges()

CREATE PROCEDURE app_private.citus_shard_privileges()
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  t record;
  v_failed text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  for t in
    select p.logicalrelid as rel,
           string_agg(quote_ident(a.attname), ', ' order by a.attnum) as columns
      from pg_dist_partition p
      join pg_attribute a on a.attrelid = p.logicalrelid and a.attnum > 0 and not a.attisdropped
                         and (a.atthasdef or a.attidentity <> '')
     where p.partmethod = 'h'
       and has_table_privilege('svc_api', p.logicalrelid, 'insert') is false
       and exists (select from pg_attribute x where x.attrelid = p.logicalrelid and has_column_privilege('svc_api', p.logicalrelid, x.attnum, 'insert'))
       and not has_column_privilege('svc_api', p.logicalrelid, a.attnum, 'insert')
     group by p.logicalrelid
  loop
    select string_agg(format('%s: %s', shardid, result), '; ') into v_failed
      from run_command_on_shards(t.rel, format('grant insert (%s) on %%s to svc_api', t.columns))
     where not success;
    if v_failed is not null then
      perform app_private.raise('SV500', 'CITUS_PRIVILEGES_NOT_COPIED', format('granting the defaults of %s on its shards failed: %s', t.rel, v_failed));
    end if;
  end loop;
end
$$;

-- function app_private.current_shard_views(bigint)

CREATE FUNCTION app_private.current_shard_views(p_shard bigint) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_generation regclass := to_regclass('app_private.shard_views_generation');
  v_marker text;
begin
  if v_generation is null then
    return null;
  end if;
  select d.description into v_marker
    from pg_class c
    join pg_description d on d.objoid = c.oid and d.classoid = 'pg_class'::regclass and d.objsubid = 0
   where c.relname = '?views' and c.relnamespace = to_regnamespace('api_shard_' || p_shard);
  if v_marker is null or split_part(v_marker, ':', 1)::bigint is distinct from pg_sequence_last_value(v_generation) then
    return null;
  end if;
  return split_part(v_marker, ':', 2);
end
$$;

-- function app_private.refuse_on_coordinator(text)

CREATE FUNCTION app_private.refuse_on_coordinator(p_function text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if to_regproc('pg_catalog.citus_is_coordinator') is null then
    return;
  end if;
  -- A statement of its own: citus_is_coordinator exists only where Citus is installed.
  if citus_is_coordinator() then
    perform app_private.raise('SV500', 'NOT_IN_ITS_WORKER',
      format('%s runs only in its organization''s worker, in a call delegated to it', p_function));
  end if;
end
$$;

-- function app_private.shard_views_advance()

CREATE FUNCTION app_private.shard_views_advance() RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if to_regclass('app_private.shard_views_generation') is not null then
    -- Held until this change ends: a refresh waits for it (shard_views_create).
    perform pg_advisory_xact_lock_shared(2026, 37);
    perform nextval('app_private.shard_views_generation');
  end if;
end
$$;

-- function app_private.shard_views_create(text)

CREATE FUNCTION app_private.shard_views_create(p_organizations_shard text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
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
$_$;

-- function app_private.shard_views_current(bigint)

CREATE FUNCTION app_private.shard_views_current(p_generation bigint) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if pg_sequence_last_value('app_private.shard_views_generation'::regclass) is distinct from p_generation then
    perform app_private.raise('SV500', 'SHARD_VIEWS_STALE', 'this copy of an api view is older than the view');
  end if;
  return true;
end
$$;

ALTER FUNCTION app_private.shard_views_current(p_generation bigint) OWNER TO svc_api;

-- function app_private.shard_views_drop()

CREATE FUNCTION app_private.shard_views_drop() RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  s record;
begin
  perform set_config('citus.enable_ddl_propagation', 'off', true);
  for s in select nspname from pg_namespace where nspname like 'api\_shard\_%' loop
    execute format('drop schema %I cascade', s.nspname);
  end loop;
end
$$;

-- function app_private.statement_on_shards(text, text)

CREATE FUNCTION app_private.statement_on_shards(p_organization_id text, p_statement text) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_private.statement_on_shards(p_organization_id text, p_statement text) OWNER TO svc_api;

-- function app_private.tg_shard_views_stale()

CREATE FUNCTION app_private.tg_shard_views_stale() RETURNS event_trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  -- Whoever may change the api views (a superuser, a member of their owner svc_api); the copies'
  -- own DDL (shard_views_create) changes none.
  if not (exists (select from pg_roles where rolname = current_user and rolsuper)
          or pg_has_role(current_user, 'svc_api', 'MEMBER'))
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
  perform app_private.shard_views_advance();
end
$$;

-- acl app_private.PROCEDURE citus_add_worker(IN p_host text, IN p_port integer, IN p_shard_transfer_mode text)

REVOKE ALL ON PROCEDURE app_private.citus_add_worker(IN p_host text, IN p_port integer, IN p_shard_transfer_mode text) FROM PUBLIC;

-- acl app_private.FUNCTION citus_context_keys()

REVOKE ALL ON FUNCTION app_private.citus_context_keys() FROM PUBLIC;

-- acl app_private.PROCEDURE citus_copy_privileges()

REVOKE ALL ON PROCEDURE app_private.citus_copy_privileges() FROM PUBLIC;

-- acl app_private.FUNCTION citus_drop_shard_views()

REVOKE ALL ON FUNCTION app_private.citus_drop_shard_views() FROM PUBLIC;

-- acl app_private.FUNCTION citus_prepare_if_needed()

REVOKE ALL ON FUNCTION app_private.citus_prepare_if_needed() FROM PUBLIC;

-- acl app_private.PROCEDURE citus_prepare_workers()

REVOKE ALL ON PROCEDURE app_private.citus_prepare_workers() FROM PUBLIC;

-- acl app_private.FUNCTION citus_read_view_functions(p_functions regprocedure[])

REVOKE ALL ON FUNCTION app_private.citus_read_view_functions(p_functions regprocedure[]) FROM PUBLIC;

-- acl app_private.FUNCTION citus_refresh_shard_views()

REVOKE ALL ON FUNCTION app_private.citus_refresh_shard_views() FROM PUBLIC;

-- acl app_private.FUNCTION citus_relay_privileges()

REVOKE ALL ON FUNCTION app_private.citus_relay_privileges() FROM PUBLIC;

-- acl app_private.PROCEDURE citus_shard_privileges()

REVOKE ALL ON PROCEDURE app_private.citus_shard_privileges() FROM PUBLIC;

-- acl app_private.FUNCTION current_shard_views(p_shard bigint)

REVOKE ALL ON FUNCTION app_private.current_shard_views(p_shard bigint) FROM PUBLIC;

-- acl app_private.FUNCTION refuse_on_coordinator(p_function text)

REVOKE ALL ON FUNCTION app_private.refuse_on_coordinator(p_function text) FROM PUBLIC;

-- acl app_private.FUNCTION shard_views_advance()

REVOKE ALL ON FUNCTION app_private.shard_views_advance() FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.shard_views_advance() TO svc_api;

-- acl app_private.FUNCTION shard_views_create(p_organizations_shard text)

REVOKE ALL ON FUNCTION app_private.shard_views_create(p_organizations_shard text) FROM PUBLIC;

-- acl app_private.FUNCTION shard_views_current(p_generation bigint)

REVOKE ALL ON FUNCTION app_private.shard_views_current(p_generation bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.shard_views_current(p_generation bigint) TO svc_runtime;

-- acl app_private.FUNCTION shard_views_drop()

REVOKE ALL ON FUNCTION app_private.shard_views_drop() FROM PUBLIC;

-- acl app_private.FUNCTION statement_on_shards(p_organization_id text, p_statement text)

REVOKE ALL ON FUNCTION app_private.statement_on_shards(p_organization_id text, p_statement text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.statement_on_shards(p_organization_id text, p_statement text) TO svc_runtime;

-- acl app_private.FUNCTION tg_shard_views_stale()

REVOKE ALL ON FUNCTION app_private.tg_shard_views_stale() FROM PUBLIC;

/** On a Citus coordinator with its workers added (on one server this block does nothing), the
 * schema above is distributed as the old chain's Citus steps left it:
 * 1. policies without sublinks (Citus refuses them): each `(select app.fn() as fn)` is the call itself;
 * 2. the functions that read a list through the organization's shards (`api.<view>(id)`), refuse to
 *    run on the coordinator, or name their organization, in the form they run in there;
 * 3. every tenant table distributed by organization_id, colocated with app.organizations (by its
 *    id), the global tables as reference tables, and app_private.rate_limit_buckets, signing_keys
 *    and bi_logins kept on the coordinator (bi_logins without its key to organizations, which Citus
 *    cannot check there); every foreign key taken off while the tables are placed, and put back;
 * 4. every function a distributed object (it exists on every node), and the ones a request calls
 *    first delegated to the worker that holds the organization (argument $1);
 * 5. Citus's functions that run SQL on other nodes not executable by PUBLIC.
 * docs/scaling.md says what runs where; test/citus/placement.test.ts checks it. */
do $citus$
declare
  v_keys text[] := '{}';
  v_key text;
  r record;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  if not (select count(*) > 0 from pg_dist_node where noderole = 'primary' and groupid <> 0) then
    perform app_private.raise('SV500', 'CITUS_WITHOUT_WORKERS', 'the citus extension is installed but no worker is added: add the workers (citus_add_node) before migrating');
  end if;
  -- Triggers on distributed tables (ours write only their own organization's colocated rows).
  perform set_config('citus.enable_unsafe_triggers', 'on', true);
  -- Each table's shards over one connection per worker: a transaction that wrote through several
  -- connections could not then create shards that reference those rows.
  perform set_config('citus.multi_shard_modify_mode', 'sequential', true);

  -- 1. Policies.
  execute $p$alter policy "Clients see their organization's publications" on app.agent_publications using ((organization_id = app.current_organization_id()))$p$;
  execute $p$alter policy "Clients see only themselves" on app.api_clients using (((id = app.current_client_id()) AND (organization_id = app.current_organization_id())))$p$;
  execute $p$alter policy "Clients see approvals of resources their Roles cover" on app.approvals using (((organization_id = app.current_organization_id()) AND
CASE category
    WHEN 'project'::text THEN app.has_role('manager'::text)
    WHEN 'financial'::text THEN app.has_role('finance'::text)
    ELSE app.has_role('hr'::text)
END))$p$;
  execute $p$alter policy "Clients write to their own conversations" on app.conversation_messages with check (((organization_id = app.current_organization_id()) AND (role = 'user'::text) AND (client_id = app.current_client_id())))$p$;
  execute $p$alter policy "Messages are readable with their conversation" on app.conversation_messages using (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id())))$p$;
  execute $p$alter policy "Clients change their own conversations" on app.conversations using (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id()))) with check (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id())))$p$;
  execute $p$alter policy "Clients see their own conversations" on app.conversations using (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id())))$p$;
  execute $p$alter policy "Clients start conversations" on app.conversations with check (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id())))$p$;
  execute $p$alter policy "Clients see the custom fields their Roles may read" on app.custom_field_definitions using (((organization_id = app.current_organization_id()) AND (readable_roles && app.current_roles())))$p$;
  execute $p$alter policy "Clients see customers of their organization" on app.customers using ((organization_id = app.current_organization_id()))$p$;
  execute $p$alter policy "Events are visible through the client's deliveries" on app.events using (((organization_id = app.current_organization_id()) AND (app.current_client_id() = ANY (client_ids))))$p$;
  execute $p$alter policy "Chunks are readable where their file is" on app.file_chunks using (((organization_id = app.current_organization_id()) AND
CASE linked_resource_type
    WHEN 'invoice'::text THEN app.has_any_role('{manager,finance}'::text[])
    WHEN 'ticket'::text THEN app_private.may_read_tickets()
    ELSE app.has_any_role('{member,manager}'::text[])
END))$p$;
  execute $p$alter policy "Clients write the bytes of their own pending uploads" on app.file_chunks with check (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id())))$p$;
  execute $p$alter policy "File content is readable where the file is" on app.file_contents using (((organization_id = app.current_organization_id()) AND
CASE linked_resource_type
    WHEN 'invoice'::text THEN app.has_any_role('{manager,finance}'::text[])
    WHEN 'ticket'::text THEN app_private.may_read_tickets()
    ELSE app.has_any_role('{member,manager}'::text[])
END))$p$;
  execute $p$alter policy "Clients read their organization's file policy" on app.file_policies using ((organization_id = app.current_organization_id()))$p$;
  execute $p$alter policy "Clients move their own uploads on" on app.file_uploads using (((organization_id = app.current_organization_id()) AND (created_by_client_id = app.current_client_id()))) with check (((organization_id = app.current_organization_id()) AND (created_by_client_id = app.current_client_id())))$p$;
  execute $p$alter policy "Clients see their own uploads" on app.file_uploads using (((organization_id = app.current_organization_id()) AND (created_by_client_id = app.current_client_id())))$p$;
  execute $p$alter policy "Writers of the linked resource start uploads" on app.file_uploads with check (((organization_id = app.current_organization_id()) AND (created_by_client_id = app.current_client_id()) AND app.has_any_role(app_private.file_write_roles(linked_resource_type))))$p$;
  execute $p$alter policy "Files are visible where the linked resource is" on app.files using (((organization_id = app.current_organization_id()) AND
CASE linked_resource_type
    WHEN 'invoice'::text THEN app.has_any_role('{manager,finance}'::text[])
    WHEN 'ticket'::text THEN app_private.may_read_tickets()
    ELSE app.has_any_role('{member,manager}'::text[])
END))$p$;
  execute $p$alter policy "Writers of the linked resource add uploaded files" on app.files with check (((organization_id = app.current_organization_id()) AND (upload_id IS NOT NULL) AND app.has_any_role(app_private.file_write_roles(linked_resource_type))))$p$;
  execute $p$alter policy "Writers of the linked resource change files" on app.files using (((organization_id = app.current_organization_id()) AND app.has_any_role(app_private.file_write_roles(linked_resource_type)))) with check ((organization_id = app.current_organization_id()))$p$;
  execute $p$alter policy "Clients use only their own idempotency keys" on app.idempotency_keys using (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id()))) with check (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id())))$p$;
  execute $p$alter policy "Clients see organization connections relevant to their Roles" on app.integration_connections using (((organization_id = app.current_organization_id()) AND (ownership = 'organization'::text) AND app_private.integration_visible(category)))$p$;
  execute $p$alter policy "Managers and finance delete draft lines" on app.invoice_lines using (((organization_id = app.current_organization_id()) AND app.has_any_role('{manager,finance}'::text[])))$p$;
  execute $p$alter policy "Managers and finance read lines" on app.invoice_lines using (((organization_id = app.current_organization_id()) AND app.has_any_role('{manager,finance}'::text[])))$p$;
  execute $p$alter policy "Managers and finance write lines" on app.invoice_lines with check (((organization_id = app.current_organization_id()) AND app.has_any_role('{manager,finance}'::text[])))$p$;
  execute $p$alter policy "Managers and finance change invoices" on app.invoices using (((organization_id = app.current_organization_id()) AND app.has_any_role('{manager,finance}'::text[]))) with check (((organization_id = app.current_organization_id()) AND app.has_any_role('{manager,finance}'::text[])))$p$;
  execute $p$alter policy "Managers and finance read invoices" on app.invoices using (((organization_id = app.current_organization_id()) AND app.has_any_role('{manager,finance}'::text[])))$p$;
  execute $p$alter policy "Managers and finance write invoices" on app.invoices with check (((organization_id = app.current_organization_id()) AND app.has_any_role('{manager,finance}'::text[])))$p$;
  execute $p$alter policy "Clients with any Role see members of their organization" on app.members using (((organization_id = app.current_organization_id()) AND app.has_any_role('{member,manager,finance,hr}'::text[])))$p$;
  execute $p$alter policy "Clients see their organization's object schemas" on app.object_schemas using ((organization_id = app.current_organization_id()))$p$;
  execute $p$alter policy "Clients see their own organization" on app.organizations using ((id = app.current_organization_id()))$p$;
  execute $p$alter policy "Managers and finance read payments" on app.payments using (((organization_id = app.current_organization_id()) AND app.has_any_role('{manager,finance}'::text[])))$p$;
  execute $p$alter policy "Managers and finance record payments" on app.payments with check (((organization_id = app.current_organization_id()) AND app.has_any_role('{manager,finance}'::text[])))$p$;
  execute $p$alter policy "Clients with any Role see projects of their organization" on app.projects using (((organization_id = app.current_organization_id()) AND app.has_any_role('{member,manager,finance,hr}'::text[])))$p$;
  execute $p$alter policy "Managers create projects" on app.projects with check (((organization_id = app.current_organization_id()) AND app.has_role('manager'::text)))$p$;
  execute $p$alter policy "Managers update projects" on app.projects using (((organization_id = app.current_organization_id()) AND app.has_role('manager'::text))) with check (((organization_id = app.current_organization_id()) AND app.has_role('manager'::text)))$p$;
  execute $p$alter policy "Results are readable with their run" on app.report_results using (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id())))$p$;
  execute $p$alter policy "Clients request report runs" on app.report_runs with check (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id())))$p$;
  execute $p$alter policy "Clients see their own report runs" on app.report_runs using (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id())))$p$;
  execute $p$alter policy "Events are readable with their run" on app.run_events using (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id())))$p$;
  execute $p$alter policy "Tool calls are readable with their run" on app.run_tool_calls using (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id())))$p$;
  execute $p$alter policy "Clients answer and cancel their own runs" on app.runs using (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id()))) with check (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id())))$p$;
  execute $p$alter policy "Clients see their own runs" on app.runs using (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id())))$p$;
  execute $p$alter policy "Clients start runs" on app.runs with check (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id())))$p$;
  execute $p$alter policy "Clients see task activity of their organization" on app.task_activity using (((organization_id = app.current_organization_id()) AND app.has_any_role('{member,manager}'::text[])))$p$;
  execute $p$alter policy "Managers record task activity" on app.task_activity with check (((organization_id = app.current_organization_id()) AND (actor_client_id = app.current_client_id()) AND app.has_role('manager'::text)))$p$;
  execute $p$alter policy "Clients see dependencies in their organization" on app.task_dependencies using ((organization_id = app.current_organization_id()))$p$;
  execute $p$alter policy "Managers change dependencies" on app.task_dependencies using (((organization_id = app.current_organization_id()) AND app.has_role('manager'::text))) with check (((organization_id = app.current_organization_id()) AND app.has_role('manager'::text)))$p$;
  execute $p$alter policy "Clients see notes in their organization" on app.task_notes using (((organization_id = app.current_organization_id()) AND app.has_any_role('{member,manager}'::text[])))$p$;
  execute $p$alter policy "Managers, or members where the task policy permits, add notes" on app.task_notes with check (((organization_id = app.current_organization_id()) AND app.has_any_role('{manager,member}'::text[]) AND (author_client_id = app.current_client_id())))$p$;
  execute $p$alter policy "Clients see their organization's workflows" on app.task_workflow_statuses using ((organization_id = app.current_organization_id()))$p$;
  execute $p$alter policy "Clients see their organization's workflows" on app.task_workflow_transitions using ((organization_id = app.current_organization_id()))$p$;
  execute $p$alter policy "Clients see their organization's workflows" on app.task_workflows using ((organization_id = app.current_organization_id()))$p$;
  execute $p$alter policy "Clients with any Role see tasks of their organization" on app.tasks using (((organization_id = app.current_organization_id()) AND app.has_any_role('{member,manager,finance,hr}'::text[])))$p$;
  execute $p$alter policy "Managers create tasks" on app.tasks with check (((organization_id = app.current_organization_id()) AND app.has_role('manager'::text)))$p$;
  execute $p$alter policy "Managers update tasks" on app.tasks using (((organization_id = app.current_organization_id()) AND app.has_role('manager'::text))) with check (((organization_id = app.current_organization_id()) AND app.has_role('manager'::text)))$p$;
  execute $p$alter policy "Managers add messages" on app.ticket_messages with check (((organization_id = app.current_organization_id()) AND (author_client_id = app.current_client_id()) AND app.has_role('manager'::text) AND app_private.may_read_tickets()))$p$;
  execute $p$alter policy "Ticket readers see replies, staff also internal notes" on app.ticket_messages using (((organization_id = app.current_organization_id()) AND app_private.may_read_tickets() AND ((type = 'reply'::text) OR app_private.may_read_internal_notes())))$p$;
  execute $p$alter policy "Search follows the tickets" on app.ticket_search using (((organization_id = app.current_organization_id()) AND app_private.may_read_tickets()))$p$;
  execute $p$alter policy "Clients see their organization's ticket workflow" on app.ticket_statuses using ((organization_id = app.current_organization_id()))$p$;
  execute $p$alter policy "Clients see their organization's ticket transitions" on app.ticket_transitions using ((organization_id = app.current_organization_id()))$p$;
  execute $p$alter policy "Managers change tickets" on app.tickets using (((organization_id = app.current_organization_id()) AND app.has_role('manager'::text) AND app_private.may_read_tickets())) with check ((organization_id = app.current_organization_id()))$p$;
  execute $p$alter policy "Managers create tickets" on app.tickets with check (((organization_id = app.current_organization_id()) AND (created_by_client_id = app.current_client_id()) AND app.has_role('manager'::text) AND app_private.may_read_tickets()))$p$;
  execute $p$alter policy "Ticket readers see their organization's tickets" on app.tickets using (((organization_id = app.current_organization_id()) AND app_private.may_read_tickets()))$p$;
  execute $p$alter policy "Managers change time" on app.time_entries using (((organization_id = app.current_organization_id()) AND app.has_role('manager'::text))) with check (((organization_id = app.current_organization_id()) AND app.has_role('manager'::text)))$p$;
  execute $p$alter policy "Managers record time" on app.time_entries with check (((organization_id = app.current_organization_id()) AND app.has_role('manager'::text) AND (created_by_client_id = app.current_client_id())))$p$;
  execute $p$alter policy "Managers, finance, and hr where permitted read time entries" on app.time_entries using (((organization_id = app.current_organization_id()) AND app_private.may_read_time_entries()))$p$;
  execute $p$alter policy "Managers write the time audit" on app.time_entry_audit with check (((organization_id = app.current_organization_id()) AND (actor_client_id = app.current_client_id()) AND app.has_role('manager'::text)))$p$;
  execute $p$alter policy "Clients see deliveries to their own endpoints" on app.webhook_deliveries using (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id())))$p$;
  execute $p$alter policy "Clients see attempts of their own deliveries" on app.webhook_delivery_attempts using (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id())))$p$;
  execute $p$alter policy "Clients change their own endpoints" on app.webhook_endpoints using (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id()))) with check (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id())))$p$;
  execute $p$alter policy "Clients create their own endpoints" on app.webhook_endpoints with check (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id())))$p$;
  execute $p$alter policy "Clients see their own endpoints" on app.webhook_endpoints using (((organization_id = app.current_organization_id()) AND (client_id = app.current_client_id())))$p$;
  -- 2. Functions.
  execute $fn$CREATE OR REPLACE FUNCTION api.agent_get(p_id text)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  d app_private.agent_definitions := app_private.agent_lookup(p_id);
begin
  if not 'api_client' = any (d.accepted_principal_types) then
    perform app_private.raise('SVR04', 'API_PRINCIPAL_NOT_SUPPORTED',
      format('%s accepts %s, not API Clients', p_id, array_to_string(d.accepted_principal_types, ', ')));
  end if;
  if not d.required_roles <@ app.current_roles() then
    perform app_private.raise('SVR03', 'ROLE_REQUIRED', format('%s needs the Roles %s', p_id, array_to_string(d.required_roles, ', ')));
  end if;
  return query select v.doc, v.version from api.agents(p_id) v where v.id = p_id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.agent_run_create(p_id text, p_input jsonb, p_subject jsonb, p_metadata jsonb, p_model_available boolean)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  d app_private.agent_definitions;
  v_subject text := p_subject ->> 'member_id';
  v_blockers jsonb;
  v_first jsonb;
  v_id text;
begin
  select * into d from app_private.agent_definitions x where x.id = p_id;
  v_blockers := api.agent_blockers(p_id, v_subject, p_model_available);
  v_first := v_blockers -> 0;
  if v_first is not null then
    perform app_private.raise(case v_first ->> 'code' when 'SUBJECT_NOT_SUPPORTED' then 'SVV22' when 'LICENSE_LEVEL_REQUIRED' then 'SVR04'
                                                      when 'ROLE_REQUIRED' then 'SVR03' else 'SVC09' end,
                              v_first ->> 'code', v_first ->> 'message', case when v_first ->> 'code' = 'SUBJECT_NOT_SUPPORTED' then '/subject' end);
  end if;
  perform app_private.check_subject(v_subject);
  insert into app.runs (organization_id, kind, agent_id, agent_version, client_id, subject, input, metadata)
  values (v__organization_id, 'agent', d.id, d.version, app.current_client_id(), p_subject, p_input, coalesce(p_metadata, '{}'))
  returning id into v_id;
  perform app_private.queue_agent_run(v_id);
  return (select v.doc from api.runs(v_id) v where v.id = v_id);
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.conversation_create(p_title text, p_subject jsonb, p_metadata jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  v_id text;
begin
  insert into app.conversations (organization_id, client_id, title, subject_member_id, metadata)
  values (v__organization_id, app.current_client_id(), nullif(p_title, ''), app_private.conversation_subject(p_subject),
          coalesce(p_metadata, '{}'))
  returning id into v_id;
  return (select v.doc from api.conversations(v_id) v where v.id = v_id);
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.conversation_get(p_id text)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
begin
  if not exists (select from api.conversations(p_id) v where v.id = p_id) then
    perform app_private.raise('SVN04', 'CONVERSATION_NOT_FOUND', format('no conversation %s of your client', p_id));
  end if;
  return query select v.doc, v.version from api.conversations(p_id) v where v.id = p_id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.conversation_message_create(p_id text, p_content jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  c app.conversations;
  v_msg text;
  v_run text;
  v_bad integer;
begin
  select * into c from app.conversations x where x.organization_id = v__organization_id and x.id = p_id for update;
  if not found then
    perform app_private.raise('SVN04', 'CONVERSATION_NOT_FOUND', format('no conversation %s of your client', p_id));
  end if;
  if c.status = 'archived' then
    perform app_private.raise('SVC09', 'CONVERSATION_ARCHIVED', 'the conversation is archived; start a new one');
  end if;
  if length(p_content::text) > app_private.message_budget() then
    perform app_private.raise('SVV22', 'CONTEXT_LIMIT_EXCEEDED',
      format('one message holds at most %s characters of content (this one: %s); send it in parts or as a file reference',
             app_private.message_budget(), length(p_content::text)), '/content');
  end if;
  select min(b.i) - 1 into v_bad from jsonb_array_elements(p_content) with ordinality b (block, i)
   where b.block ->> 'type' = 'file_reference' and not exists (select from api.files() f where f.id = b.block ->> 'file_id' and f.status = 'ready');
  if v_bad is not null then
    perform app_private.raise('SVV22', 'MESSAGE_CONTENT_INVALID',
      'file_id must name a ready file you may read', format('/content/%s/file_id', v_bad));
  end if;
  insert into app.conversation_messages (organization_id, conversation_id, seq, role, content)
  values (c.organization_id, c.id, c.message_count + 1, 'user', p_content)
  returning id into v_msg;
  perform app_private.conversation_compact(c.organization_id, c.id);
  insert into app.runs (organization_id, kind, agent_id, conversation_id, client_id, subject, input)
  values (c.organization_id, 'agent', null, c.id, c.client_id,
          case when c.subject_member_id is null then null else jsonb_build_object('member_id', c.subject_member_id) end,
          jsonb_build_object('message_id', v_msg))
  returning id into v_run;
  perform app_private.queue_agent_run(v_run);
  return jsonb_build_object('object', 'conversation_message_accepted',
    'message', (select v.doc from api.conversation_messages(v_msg) v where v.id = v_msg),
    'run', (select v.doc from api.runs(v_run) v where v.id = v_run));
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.file_archive(p_id text)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  f app.files := app_private.file_for(p_id, true);
begin
  if f.status = 'processing' or f.status = 'rejected' then
    perform app_private.raise('SVC09', 'CONFLICT', format('%s is %s: only a ready file is archived', f.id, f.status));
  end if;
  if f.status = 'ready' then
    update app.files x set status = 'archived' where x.organization_id = f.organization_id and x.id = f.id;
  end if;
  return query select v.doc, v.version from api.files(p_id) v where v.id = p_id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.file_chunks(p_file_id text, p_from integer, p_to integer)
 RETURNS TABLE(seq integer, data bytea)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
begin
  perform from api.files(p_file_id) v where v.id = p_file_id and v.status = 'ready';
  if not found then
    return;
  end if;
  return query select c.seq, c.data
    from app.files f
    join app.file_chunks c on c.organization_id = v__organization_id and c.upload_id = f.upload_id
   where f.organization_id = v__organization_id and f.id = p_file_id and c.seq between p_from and p_to
  union all
  select 0, fc.content
    from app.file_contents fc
   where fc.organization_id = v__organization_id and fc.file_id = p_file_id and p_from = 0
  order by 1;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.file_download_begin(p_token text)
 RETURNS TABLE(outcome text, file_id text, name text, content_type text, size_bytes bigint, sha256 text, upload_id text, chunk_size integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  l record;
  f app.files;
begin
  perform app_private.refuse_on_coordinator('api.file_download_begin(text)');
  outcome := 'not_found';
  select * into l from app_private.download_link(p_token, 'fil', 'download');
  if l.id is null or l.organization_id is null then
    return next;
    return;
  end if;
  if l.expires <= extract(epoch from now()) then
    outcome := 'expired';
  elsif not app_private.begin_delivery_context(l.organization_id, l.client_id) then
    outcome := 'client_inactive';
  else
    -- Only a file the client may read now (api.files: its Roles, the resource it is linked to).
    perform from api.files(l.id) v where v.id = l.id;
    if found then
      select x.* into f from app.files x where x.organization_id = l.organization_id and x.id = l.id;
    end if;
    if f.id is null or f.status <> 'ready' then
      outcome := 'not_found';
    else
      outcome := 'ok';
      file_id := f.id;
      name := f.name;
      content_type := f.content_type;
      size_bytes := f.size_bytes;
      sha256 := f.sha256;
      upload_id := f.upload_id;
      chunk_size := coalesce((select u.chunk_size from app.file_uploads u where u.organization_id = l.organization_id and u.id = f.upload_id),
                             greatest(f.size_bytes, 1)::integer);
    end if;
  end if;
  return next;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.file_get(p_id text)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
begin
  perform app_private.file_for(p_id, false);
  return query select v.doc, v.version from api.files(p_id) v where v.id = p_id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.file_upload_complete(p_upload_id text)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  u app.file_uploads;
  v_file text;
begin
  select * into u from app.file_uploads x
   where x.organization_id = v__organization_id and x.id = p_upload_id for update;
  if not found then
    perform app_private.raise('SVN04', 'FILE_NOT_FOUND', format('no upload %s of your client', p_upload_id));
  end if;
  if u.status = 'completed' then
    return query select v.doc, v.version from api.files() v where v.id = u.file_id;
    return;
  end if;
  if u.expires_at <= now() then
    perform app_private.raise('SVC09', 'UPLOAD_EXPIRED', format('upload %s expired at %s; start a new upload', u.id, app_private.iso_timestamp(u.expires_at)));
  end if;
  if u.status = 'pending' then
    perform app_private.raise('SVC09', 'CONFLICT', 'nothing has been uploaded yet: PUT the bytes to the upload URL first');
  end if;
  if u.received_size_bytes <> u.size_bytes or u.received_sha256 <> u.sha256 then
    perform app_private.raise('SVV22', 'CHECKSUM_MISMATCH',
      format('the stored bytes (%s bytes, SHA-256 %s) are not the declared ones (%s bytes, SHA-256 %s); start a new upload',
             u.received_size_bytes, u.received_sha256, u.size_bytes, u.sha256));
  end if;
  if not u.content_type_verified then
    perform app_private.raise('SVV22', 'CONTENT_TYPE_NOT_ALLOWED',
      format('the bytes are %s, not the declared %s; start a new upload', coalesce(u.detected_content_type, 'of an unknown type'), u.content_type));
  end if;
  insert into app.files (organization_id, name, content_type, size_bytes, sha256, status, linked_resource_type, linked_resource_id,
                         upload_id, scan_status, created_by_client_id)
  values (u.organization_id, u.name, u.content_type, u.size_bytes, u.sha256, 'processing', u.linked_resource_type, u.linked_resource_id,
          u.id, 'pending', app.current_client_id())
  returning id into v_file;
  update app.file_uploads x set status = 'completed', file_id = v_file where x.organization_id = u.organization_id and x.id = u.id;
  perform app_private.queue_file_scan(v_file);
  return query select v.doc, v.version from api.files(v_file) v where v.id = v_file;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.invoice_create(p_body jsonb)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  c app.customers;
  i app.invoices;
  v_currency text;
begin
  select * into c from app.customers x where x.organization_id = v__organization_id and x.id = p_body ->> 'customer_id' and x.kind = 'billing' and x.deleted_at is null;
  if not found then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'customer_id must name a billing customer (cus_) of your organization', '/customer_id');
  end if;
  v_currency := coalesce(p_body ->> 'currency', c.currency,
                         (select o.currency from app.organizations o where o.id = v__organization_id));
  if not exists (select from app_private.currencies x where x.code = v_currency) then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', format('%s is not an ISO 4217 currency code', v_currency), '/currency');
  end if;
  insert into app.invoices (organization_id, customer_id, currency, issue_date, due_date, memo, created_by_client_id)
  values (v__organization_id, c.id, v_currency, (p_body ->> 'issue_date')::date, (p_body ->> 'due_date')::date,
          p_body ->> 'memo', app.current_client_id())
  returning * into i;
  perform app_private.invoice_set_lines(i, coalesce(p_body -> 'lines', '[]'));
  return query select v.doc, v.version from api.invoices() v where v.id = i.id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.invoice_replace_lines(p_id text, p_if_match integer[], p_lines jsonb)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  i app.invoices := app_private.invoice_lock(p_id, p_if_match);
begin
  perform app_private.invoice_set_lines(i, p_lines);
  -- The lines are part of the invoice: replacing them is a new version even when the totals stay.
  update app.invoices x set memo = x.memo where x.organization_id = i.organization_id and x.id = i.id;
  return query select v.doc, v.version from api.invoices() v where v.id = i.id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.invoice_send(p_id text, p_email boolean)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET lock_timeout TO '5s'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  i app.invoices;
  c app.customers;
  o app.organizations;
begin
  perform app_private.refuse_on_coordinator('api.invoice_send(text,boolean)');
  select * into i from app.invoices x
   where x.id = p_id and x.organization_id = v__organization_id and app.has_any_role('{manager,finance}')
   for update;
  if not found then
    perform app_private.invoice_not_found(p_id);
  end if;
  if i.status <> 'draft' then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', format('the invoice is already %s (%s); only a draft is sent', i.status, i.number));
  end if;
  select * into c from app.customers x where x.organization_id = i.organization_id and x.id = i.customer_id;
  if p_email and c.deleted_at is null and c.delivery_email is null then
    perform app_private.raise('SVV22', 'CUSTOMER_DELIVERY_DETAILS_MISSING',
      format('the customer %s has no delivery email; an administrator adds one, or send with delivery.email false and deliver the PDF yourself', c.id),
      '/delivery/email');
  end if;
  update app.invoices x set status = 'sent' where x.organization_id = i.organization_id and x.id = i.id returning * into i;
  select * into o from app.organizations x where x.id = i.organization_id;
  return jsonb_build_object(
    'invoice', (select v.doc from api.invoices() v where v.id = i.id),
    'organization', jsonb_build_object('name', o.name, 'locale', o.locale),
    'customer', jsonb_build_object('id', c.id, 'name', c.name, 'email', c.delivery_email));
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.invoice_update(p_id text, p_if_match integer[], p_patch jsonb)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  i app.invoices := app_private.invoice_lock(p_id, p_if_match);
  v_issue_date date;
  v_due_date date;
begin
  if p_patch ? 'customer_id' and not exists (select from app.customers x where x.organization_id = v__organization_id and x.id = p_patch ->> 'customer_id'
                                               and x.kind = 'billing' and x.deleted_at is null) then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'customer_id must name a billing customer (cus_) of your organization', '/customer_id');
  end if;
  if p_patch ? 'currency' and not exists (select from app_private.currencies x where x.code = p_patch ->> 'currency') then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', format('%s is not an ISO 4217 currency code', p_patch ->> 'currency'), '/currency');
  end if;
  -- Cast before the update: Citus takes no cast that is not immutable inside its CASE.
  v_issue_date := (p_patch ->> 'issue_date')::date;
  v_due_date := (p_patch ->> 'due_date')::date;
  update app.invoices x
     set customer_id = case when p_patch ? 'customer_id' then p_patch ->> 'customer_id' else x.customer_id end,
         currency = case when p_patch ? 'currency' then p_patch ->> 'currency' else x.currency end,
         issue_date = case when p_patch ? 'issue_date' then v_issue_date else x.issue_date end,
         due_date = case when p_patch ? 'due_date' then v_due_date else x.due_date end,
         memo = case when p_patch ? 'memo' then p_patch ->> 'memo' else x.memo end
   where x.organization_id = i.organization_id and x.id = i.id;
  if p_patch ? 'lines' then
    select * into i from app.invoices x where x.organization_id = v__organization_id and x.id = p_id;
    perform app_private.invoice_set_lines(i, p_patch -> 'lines');
  end if;
  return query select v.doc, v.version from api.invoices() v where v.id = i.id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.invoice_void(p_id text)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  i app.invoices;
  c app.integration_connections;
begin
  perform app_private.refuse_on_coordinator('api.invoice_void(text)');
  select * into i from app.invoices x
   where x.id = p_id and x.organization_id = v__organization_id and app.has_any_role('{manager,finance}')
   for update;
  if not found then
    perform app_private.invoice_not_found(p_id);
  end if;
  if i.status = 'draft' then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', 'only an issued invoice is voided; a draft is simply never sent');
  elsif i.status <> 'void' and i.amount_paid > 0 then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED',
      format('payments of %s %s are recorded against this invoice; it cannot be voided', app_private.money_text(i.amount_paid, i.scale), i.currency));
  elsif i.status = 'sent' then
    if i.sync_status = 'pending' then
      perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED',
        'the invoice is being synchronized to the accounting provider; void it once the sync has finished');
    end if;
    if i.sync_status = 'failed' and not coalesce(i.sync_failure_definitive, false) then
      perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED',
        'the last accounting sync ended without a definite answer, so the provider may hold this invoice; an administrator synchronizes it again first');
    end if;
    if i.sync_status = 'synced' then
      select * into c from app.integration_connections x where x.organization_id = i.organization_id and x.id = i.sync_connection_id;
      if not app_private.accounting_ready(c) then
        perform app_private.accounting_not_ready(c, 'void a synchronized invoice');
      end if;
      if not 'invoice.void' = any (c.capabilities) then
        perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED',
          format('the %s connection cannot void invoices (no invoice.void capability); an administrator enables voiding on the connection', c.provider));
      end if;
      update app.invoices x set status = 'void', sync_status = 'pending', sync_error = null where x.organization_id = i.organization_id and x.id = i.id;
    else
      update app.invoices x set status = 'void' where x.organization_id = i.organization_id and x.id = i.id;
    end if;
  end if;
  return query select v.doc, v.version from api.invoices() v where v.id = i.id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.payment_create(p_body jsonb)
 RETURNS TABLE(doc jsonb)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  p app.payments;
begin
  if not exists (select from app.invoices x where x.organization_id = v__organization_id and x.id = p_body ->> 'invoice_id') then
    perform app_private.invoice_not_found(p_body ->> 'invoice_id');
  end if;
  insert into app.payments (organization_id, invoice_id, amount, currency, received_date, method, external_reference, created_by_client_id)
  values (v__organization_id, p_body ->> 'invoice_id', (p_body ->> 'amount')::numeric, p_body ->> 'currency',
          (p_body ->> 'received_date')::date, p_body ->> 'method', p_body ->> 'external_reference', app.current_client_id())
  returning * into p;
  return query select jsonb_build_object('object', 'payment', 'id', p.id, 'invoice_id', p.invoice_id,
    'amount', app_private.money_text(p.amount, i.scale), 'currency', p.currency, 'received_date', p.received_date,
    'method', p.method, 'external_reference', p.external_reference, 'created_at', app_private.iso_timestamp(p.created_at),
    'invoice', v.doc)
    from app.invoices i join api.invoices() v on v.organization_id = i.organization_id and v.id = i.id
   where i.organization_id = p.organization_id and i.id = p.invoice_id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.project_get(p_id text)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_column
begin
  return query select p.doc, p.version from api.projects(p_id) p where p.id = p_id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.report_download_begin(p_token text)
 RETURNS TABLE(outcome text, run_id text, report_id text, format text, row_count integer, columns text[], numeric_columns text[])
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  l record;
  r app.report_runs;
begin
  perform app_private.refuse_on_coordinator('api.report_download_begin(text)');
  outcome := 'not_found';
  select * into l from app_private.download_link(p_token, 'rrun', 'report-download');
  if l.id is null or l.organization_id is null then
    return next;
    return;
  end if;
  if l.expires <= extract(epoch from now()) then
    outcome := 'expired';
  elsif not app_private.begin_delivery_context(l.organization_id, l.client_id) then
    outcome := 'client_inactive';
  else
    -- Only a run the client may read now (api.report_runs: its own, with the report's Roles).
    perform from api.report_runs(l.id) v where v.id = l.id;
    if found then
      select x.* into r from app.report_runs x where x.organization_id = l.organization_id and x.id = l.id;
    end if;
    if r.id is not null and r.status = 'succeeded' and not r.results_purged and r.expires_at > now() then
      outcome := 'ok';
      run_id := r.id;
      report_id := r.report_id;
      format := r.format;
      row_count := r.row_count;
      select d.columns, d.numeric_columns into columns, numeric_columns
        from app_private.report_definitions d where d.id = r.report_id;
    end if;
  end if;
  return next;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.report_get(p_id text)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  d app_private.report_definitions;
begin
  select * into d from app_private.report_definitions x where x.id = p_id;
  if not found or v__organization_id is null then
    perform app_private.raise('SVN04', 'REPORT_NOT_FOUND', format('no report %s', p_id));
  end if;
  if not (d.required_roles && app.current_roles()) then
    perform app_private.raise('SVR04', 'REPORT_ROLE_REQUIRED',
      format('%s needs one of the Roles %s', p_id, array_to_string(d.required_roles, ', ')));
  end if;
  return query select v.doc, v.version from api.reports(p_id) v where v.id = p_id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.report_run_create(p_report_id text, p_parameters jsonb, p_format text)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  d app_private.report_definitions;
  v_id text;
  v_timezone text;
begin
  perform api.report_get(p_report_id);
  select * into d from app_private.report_definitions x where x.id = p_report_id;
  if not p_format = any (d.formats) then
    perform app_private.raise('SVV22', 'EXPORT_FORMAT_NOT_SUPPORTED',
      format('%s offers %s', p_report_id, array_to_string(d.formats, ', ')), '/format');
  end if;
  if p_parameters ? 'from' and p_parameters ? 'to'
     and ((p_parameters ->> 'to')::date < (p_parameters ->> 'from')::date or (p_parameters ->> 'to')::date > (p_parameters ->> 'from')::date + 1096) then
    perform app_private.raise('SVV22', 'INVALID_REPORT_PARAMETERS', 'to must be on or after from, and at most three years later', '/parameters/to');
  end if;
  -- Read first: Citus takes no subquery in the values of an INSERT.
  select o.timezone into v_timezone from app.organizations o where o.id = v__organization_id;
  insert into app.report_runs (organization_id, report_id, definition_version, client_id, parameters, format, timezone)
  values (v__organization_id, d.id, d.version, app.current_client_id(), p_parameters, p_format,
          v_timezone)
  returning id into v_id;
  perform app_private.queue_report_run(v_id);
  return (select v.doc from api.report_runs(v_id) v where v.id = v_id);
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.report_run_get(p_report_id text, p_run_id text)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
begin
  perform api.report_get(p_report_id);
  if not exists (select from api.report_runs(p_run_id) v where v.id = p_run_id and v.report_id = p_report_id) then
    perform app_private.raise('SVN04', 'REPORT_RUN_NOT_FOUND', format('no run %s of %s by your client', p_run_id, p_report_id));
  end if;
  return query select v.doc, v.version from api.report_runs(p_run_id) v where v.id = p_run_id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.run_cancel(p_id text)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  r app.runs;
  v_lock_timeout text := current_setting('lock_timeout');
begin
  if not exists (select from api.runs(p_id) v where v.id = p_id) then
    perform app_private.raise('SVN04', 'RUN_NOT_FOUND', format('no run %s of your client', p_id));
  end if;
  perform set_config('lock_timeout', '1s', true);
  begin
    r := app_private.run_lock(p_id);
  exception when lock_not_available then
    perform app_private.raise('SVC09', 'RUN_CANCEL_NOT_AVAILABLE', 'the run is applying a tool operation; retry the cancel in a moment');
  end;
  perform set_config('lock_timeout', v_lock_timeout, true);
  if r.status in ('succeeded', 'failed', 'cancelled') then
    perform app_private.raise('SVC09', 'RUN_ALREADY_TERMINAL', format('the run is already %s', r.status));
  end if;
  update app.runs x set status = 'cancelled', required_action = null, completed_at = now()
   where x.organization_id = r.organization_id and x.id = p_id;
  return (select v.doc from api.runs(p_id) v where v.id = p_id);
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.run_get(p_id text)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_column
begin
  return query select v.doc, v.version from api.runs(p_id) v where v.id = p_id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.run_submit_action(p_id text, p_action_id text, p_response jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  r app.runs;
begin
  r := app_private.run_lock(p_id);
  if r.status <> 'requires_action' then
    perform app_private.raise('SVC09', 'RUN_NOT_ACTIONABLE', format('the run is %s; actions are accepted only while it requires_action', r.status));
  end if;
  if p_action_id is distinct from r.required_action ->> 'id' then
    perform app_private.raise('SVV22', 'RUN_ACTION_INVALID', format('the run waits for action %s', r.required_action ->> 'id'), '/action_id');
  end if;
  if not coalesce(r.required_action -> 'schema' -> 'properties' -> 'choice' -> 'enum' ? (p_response ->> 'choice'), false) then
    perform app_private.raise('SVV22', 'RUN_ACTION_INVALID', 'response.choice must be one of the choices the action offers', '/response/choice');
  end if;
  update app.runs x set status = 'queued', required_action = null,
         state = x.state || jsonb_build_object('action', jsonb_build_object('id', p_action_id, 'response', p_response))
   where x.organization_id = r.organization_id and x.id = p_id;
  perform app_private.queue_agent_run(p_id);
  return (select v.doc from api.runs(p_id) v where v.id = p_id);
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.task_get(p_id text)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_column
begin
  return query select t.doc, t.version from api.tasks(p_id) t where t.id = p_id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.ticket_create(p_body jsonb)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  v_id text;
  v_status text;
  v_tags text[];
begin
  perform api.require_tickets(true);
  -- Read first: Citus takes no subquery in the values of an INSERT.
  select s.status into v_status from app.ticket_statuses s where s.organization_id = v__organization_id and s.is_initial;
  v_tags := coalesce((select array_agg(distinct lower(btrim(x))) from jsonb_array_elements_text(coalesce(p_body -> 'tags', '[]')) x), '{}');
  insert into app.tickets (organization_id, subject, description, status, priority, requester_name, requester_email, tags,
                           external_id, created_by_client_id)
  values (v__organization_id, p_body ->> 'subject', p_body ->> 'description',
          v_status,
          coalesce(p_body ->> 'priority', 'normal'), p_body #>> '{requester,name}', lower(btrim(p_body #>> '{requester,email}')),
          v_tags,
          p_body ->> 'external_id', app.current_client_id())
  returning id into v_id;
  return query select v.doc, v.version from api.tickets(v_id) v where v.id = v_id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.ticket_get(p_id text)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
begin
  perform api.require_tickets(false);
  return query select v.doc, v.version from api.tickets(p_id) v where v.id = p_id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.ticket_message_create(p_ticket_id text, p_body jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  t app.tickets;
  v_id text;
  v_files text[] := coalesce((select array_agg(x) from jsonb_array_elements_text(coalesce(p_body -> 'attachments', '[]')) x), '{}');
  v_bad text[];
begin
  perform api.require_tickets(true);
  t := app_private.lock_ticket(p_ticket_id);
  select array_agg(a order by a) into v_bad from unnest(v_files) a
   where not exists (select from api.files() f where f.id = a and f.status = 'ready'
                                             and f.linked_resource_type = 'ticket' and f.linked_resource_id = t.id);
  if v_bad is not null then
    perform app_private.raise_errors(app_private.error('/attachments', 'ATTACHMENT_NOT_AVAILABLE',
      format('not ready files of ticket %s that you may read: %s; upload attachments with linked_resource {type: ticket, id: %s}',
             t.id, array_to_string(v_bad, ', '), t.id)));
  end if;
  insert into app.ticket_messages (organization_id, ticket_id, type, body, attachment_file_ids, author_client_id)
  values (t.organization_id, t.id, p_body ->> 'type', p_body ->> 'body', v_files, app.current_client_id())
  returning id into v_id;
  return (select v.doc from api.ticket_messages(v_id) v where v.id = v_id);
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.ticket_transition(p_id text, p_transition text, p_resolution text)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  t app.tickets;
  tr app.ticket_transitions;
begin
  perform api.require_tickets(true);
  t := app_private.lock_ticket(p_id);
  select * into tr from app.ticket_transitions x
   where x.organization_id = t.organization_id and x.name = p_transition and x.from_status = t.status;
  if not found then
    perform app_private.raise('SVV23', 'INVALID_TRANSITION',
      format('%s is not offered from status %s; see the ticket''s transitions', p_transition, t.status), '/transition');
  end if;
  if tr.requires_resolution and (p_resolution is null or p_resolution !~ '\S') then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', format('%s needs a resolution', p_transition), '/resolution');
  end if;
  if not tr.requires_resolution and p_resolution is not null then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', format('%s takes no resolution', p_transition), '/resolution');
  end if;
  update app.tickets x set status = tr.to_status, resolution = coalesce(p_resolution, case when tr.to_status = 'closed' then t.resolution end)
   where x.organization_id = t.organization_id and x.id = p_id;
  return query select v.doc, v.version from api.tickets(p_id) v where v.id = p_id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.ticket_update(p_id text, p_if_match integer[], p_patch jsonb)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  t app.tickets;
  v_errors jsonb := '[]';
  k text;
begin
  perform api.require_tickets(true);
  t := app_private.lock_ticket(p_id);
  -- The spec's tie: a status sent here is an attempt at a transition that is not offered this way.
  if p_patch ? 'status' then
    perform app_private.raise('SVV23', 'INVALID_TRANSITION', 'status changes only through POST /v1/tickets/{ticket_id}/transitions', '/status');
  end if;
  perform app_private.check_if_match(t.version, p_if_match);
  for k in select jsonb_object_keys(p_patch) order by 1 loop
    if k not in ('subject', 'description', 'priority', 'tags', 'assignee_member_id', 'project_id') then
      v_errors := v_errors || app_private.error('/' || k, 'IMMUTABLE_FIELD', format('%s cannot be changed here', k));
    end if;
  end loop;
  perform app_private.raise_errors(v_errors);
  update app.tickets x set
    subject = case when p_patch ? 'subject' then p_patch ->> 'subject' else t.subject end,
    description = case when p_patch ? 'description' then p_patch ->> 'description' else t.description end,
    priority = case when p_patch ? 'priority' then p_patch ->> 'priority' else t.priority end,
    tags = case when p_patch ? 'tags'
                then coalesce((select array_agg(distinct lower(btrim(e))) from jsonb_array_elements_text(p_patch -> 'tags') e), '{}')
                else t.tags end,
    assignee_member_id = case when p_patch ? 'assignee_member_id' then app_private.normalize_email(p_patch ->> 'assignee_member_id')
                              else t.assignee_member_id end,
    project_id = case when p_patch ? 'project_id' then p_patch ->> 'project_id' else t.project_id end
   where x.organization_id = t.organization_id and x.id = p_id;
  return query select v.doc, v.version from api.tickets(p_id) v where v.id = p_id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.time_entry_batch(p_entries jsonb, p_atomic boolean)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  v_item jsonb;
  v_index integer := 0;
  v_results jsonb := '[]';
  v_errors jsonb := '[]';
  v_id text;
  v_state text;
  v_message text;
  v_detail text;
  v_hint text;
  v_item_errors jsonb;
begin
  perform api.require_any_role('{manager}', 'createTimeEntryBatch');
  for v_item in select e from jsonb_array_elements(p_entries) e loop
    begin
      v_id := app_private.time_entry_insert(v_item);
      v_results := v_results || jsonb_build_array(jsonb_build_object('index', v_index, 'status', 'created',
        'time_entry', (select t.doc from api.time_entries(v_id) t where t.id = v_id)));
    exception when others then
      get stacked diagnostics v_state = returned_sqlstate, v_message = message_text, v_detail = pg_exception_detail,
                              v_hint = pg_exception_hint;
      if v_state not like 'SV%' and v_state not in ('23505', '22007', '22008', '22P02', '22003', '23514') then
        raise;
      end if;
      if v_state = '23505' then
        v_message := 'EXTERNAL_ID_CONFLICT';
        v_item_errors := app_private.error('/external_id', 'EXTERNAL_ID_CONFLICT', 'this external_id is already used by your client');
      elsif v_state like '22%' or v_state = '23514' then
        v_message := 'VALIDATION_FAILED';
        v_item_errors := app_private.error('', 'VALIDATION_FAILED', 'a value is out of range or malformed');
      elsif v_hint = 'errors' then
        v_item_errors := v_detail::jsonb;
      else
        v_item_errors := app_private.error('', v_message, v_detail);
      end if;
      v_results := v_results || jsonb_build_array(jsonb_build_object('index', v_index, 'status', 'failed',
        'error', jsonb_build_object('code', v_message, 'errors', v_item_errors)));
      v_errors := v_errors || (select jsonb_agg(jsonb_set(e, '{pointer}', to_jsonb('/entries/' || v_index || coalesce(e ->> 'pointer', ''))))
                                 from jsonb_array_elements(v_item_errors) e);
    end;
    v_index := v_index + 1;
  end loop;
  if p_atomic and jsonb_array_length(v_errors) > 0 then
    perform app_private.raise_errors(v_errors);
  end if;
  return jsonb_build_object('object', 'time_entry_batch', 'atomic', p_atomic,
    'created', (select count(*) from jsonb_array_elements(v_results) r where r ->> 'status' = 'created'),
    'failed', (select count(*) from jsonb_array_elements(v_results) r where r ->> 'status' = 'failed'),
    'results', v_results);
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.time_entry_get(p_id text)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
begin
  perform api.require_time_entry_read();
  return query select t.doc, t.version from api.time_entries(p_id) t where t.id = p_id and t.deleted_at is null;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.webhook_delivery_get(p_endpoint text, p_delivery text)
 RETURNS TABLE(doc jsonb)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
  v_doc jsonb;
begin
  select v.doc into v_doc from api.webhook_deliveries(p_delivery) v where v.id = p_delivery and v.endpoint_id = p_endpoint;
  if v_doc is null then
    return;
  end if;
  return query select v_doc || jsonb_build_object('attempts', coalesce((
           select jsonb_agg(jsonb_build_object('attempt', a.attempt, 'started_at', app_private.iso_timestamp(a.started_at),
                                               'duration_ms', a.duration_ms, 'response_status', a.response_status,
                                               'error', a.error) order by a.attempt)
             from app.webhook_delivery_attempts a where a.organization_id = v__organization_id and a.delivery_id = p_delivery), '[]'::jsonb));
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.webhook_delivery_replay(p_endpoint text, p_delivery text)
 RETURNS TABLE(doc jsonb)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  w app.webhook_endpoints;
  d app.webhook_deliveries;
  e app.events;
  v_id text := app_private.new_id('whd');
begin
  perform app_private.refuse_on_coordinator('api.webhook_delivery_replay(text,text)');
  -- Runs as definer (it writes a delivery): ownership is checked against the request context.
  select * into w from app.webhook_endpoints
   where id = p_endpoint and organization_id = v__organization_id and client_id = app.current_client_id();
  if not found then
    perform app_private.webhook_endpoint_not_found(p_endpoint);
  end if;
  select * into d from app.webhook_deliveries where organization_id = w.organization_id and id = p_delivery and endpoint_id = w.id;
  if not found then
    perform app_private.raise('SVN04', 'WEBHOOK_DELIVERY_NOT_FOUND', format('no delivery %s of endpoint %s', p_delivery, p_endpoint));
  end if;
  select * into e from app.events where organization_id = d.organization_id and id = d.event_id;
  if e.created_at < now() - interval '30 days' then
    perform app_private.raise('SVC09', 'WEBHOOK_REPLAY_EXPIRED',
      format('event %s is older than the 30-day retention window; fetch the resource instead', e.id));
  end if;
  if w.status <> 'enabled' then
    perform app_private.raise('SVC09', 'CONFLICT', 'the endpoint is disabled; enable it before replaying');
  end if;
  insert into app.webhook_deliveries (organization_id, id, client_id, endpoint_id, event_id, replay_of)
  values (w.organization_id, v_id, w.client_id, w.id, e.id, d.id);
  perform app_private.webhook_enqueue(v__organization_id, v_id);
  return query select v.doc from api.webhook_deliveries(v_id) v where v.id = v_id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.webhook_endpoint_create(p_id text, p_url text, p_events text[], p_description text, p_secret_sealed text)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
begin
  insert into app.webhook_endpoints (organization_id, id, client_id, url, events, description, secret_sealed)
  values (v__organization_id, p_id, app.current_client_id(), p_url, p_events, p_description, p_secret_sealed);
  return query select w.doc, w.version from api.webhook_endpoints(p_id) w where w.id = p_id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.webhook_endpoint_rotate(p_id text, p_secret_sealed text, p_previous_expires_in_seconds integer)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  w app.webhook_endpoints := app_private.webhook_endpoint_lock(p_id);
  v_previous_expires_at timestamptz := case when p_previous_expires_in_seconds > 0
                                            then now() + make_interval(secs => p_previous_expires_in_seconds) end;
begin
  update app.webhook_endpoints e
     set previous_secret_sealed = case when p_previous_expires_in_seconds > 0 then e.secret_sealed end,
         previous_secret_expires_at = v_previous_expires_at,
         secret_sealed = p_secret_sealed
   where e.organization_id = w.organization_id and e.id = w.id;
  return query select v.doc, v.version from api.webhook_endpoints() v where v.id = w.id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.webhook_endpoint_set_status(p_id text, p_status text, p_verified boolean DEFAULT false)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  w app.webhook_endpoints := app_private.webhook_endpoint_lock(p_id);
begin
  if p_status = 'enabled' and w.status <> 'enabled' and not p_verified then
    perform app_private.raise('SVC09', 'CONFLICT', 'the endpoint was disabled while the request was under way; retry the request');
  end if;
  if w.status <> p_status then
    update app.webhook_endpoints e
       set status = p_status,
           disabled_reason = case when p_status = 'disabled' then 'client' end,
           consecutive_failures = 0, failing_since = null
     where e.organization_id = w.organization_id and e.id = w.id;
  end if;
  return query select v.doc, v.version from api.webhook_endpoints() v where v.id = w.id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.webhook_endpoint_test(p_endpoint text)
 RETURNS TABLE(doc jsonb)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  w app.webhook_endpoints;
  v_event text;
  v_id text := app_private.new_id('whd');
begin
  perform app_private.refuse_on_coordinator('api.webhook_endpoint_test(text)');
  select * into w from app.webhook_endpoints
   where id = p_endpoint and organization_id = v__organization_id and client_id = app.current_client_id();
  if not found then
    perform app_private.webhook_endpoint_not_found(p_endpoint);
  end if;
  insert into app.events (organization_id, type, resource_type, resource_id, resource_version, target_endpoint_id, client_ids)
  values (w.organization_id, 'webhook_endpoint.test', 'webhook_endpoint', w.id, w.version, w.id, array[w.client_id])
  returning id into v_event;
  insert into app.webhook_deliveries (organization_id, id, client_id, endpoint_id, event_id)
  values (w.organization_id, v_id, w.client_id, w.id, v_event);
  perform app_private.webhook_enqueue(v__organization_id, v_id);
  return query select v.doc from api.webhook_deliveries(v_id) v where v.id = v_id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION api.webhook_endpoint_update(p_id text, p_if_match integer[], p_patch jsonb, p_verified_url text DEFAULT NULL::text)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  w app.webhook_endpoints := app_private.webhook_endpoint_lock(p_id, p_if_match);
begin
  if p_patch ? 'url' and p_patch ->> 'url' is distinct from w.url and p_patch ->> 'url' is distinct from p_verified_url then
    perform app_private.raise('SVC09', 'CONFLICT', 'the endpoint changed while the new URL was being verified; retry the request');
  end if;
  update app.webhook_endpoints e
     set url = case when p_patch ? 'url' then p_patch ->> 'url' else e.url end,
         events = case when p_patch ? 'events' then array(select jsonb_array_elements_text(p_patch -> 'events')) else e.events end,
         description = case when p_patch ? 'description' then p_patch ->> 'description' else e.description end
   where e.organization_id = w.organization_id and e.id = w.id;
  return query select v.doc, v.version from api.webhook_endpoints() v where v.id = w.id;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION app_private.accounting_sync_load(p_organization_id text, p_invoice text)
 RETURNS jsonb
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  v_doc jsonb;
  v_out jsonb;
begin
  -- The invoice as finance reads it through the API.
  perform app_private.set_context(p_organization_id, null, '{finance}');
  select v.doc into v_doc from api.invoices(p_invoice) v where v.id = p_invoice;
  perform app_private.set_context(null, null, null);
  if v_doc is null then
    return null;
  end if;
  select jsonb_build_object('invoice', v_doc, 'provider', c.provider, 'connection_id', c.id, 'connection_status', c.status,
                            'sync_status', i.sync_status, 'external_reference', i.sync_external_reference,
                            'customer', jsonb_build_object('id', cu.id, 'name', cu.name, 'email', cu.delivery_email))
    into v_out
    from app.invoices i
    join app.integration_connections c on c.organization_id = i.organization_id and c.id = i.sync_connection_id
    join app.customers cu on cu.organization_id = i.organization_id and cu.id = i.customer_id
   where i.organization_id = p_organization_id and i.id = p_invoice;
  return v_out;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION app_private.conversation_subject(p_subject jsonb)
 RETURNS text
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  v_keys text[];
  v_ids text[];
begin
  if p_subject is null or p_subject = 'null'::jsonb then
    return null;
  end if;
  select array_agg(k order by k) into v_keys from jsonb_object_keys(p_subject) k;
  if coalesce(p_subject ->> 'type', 'member') <> 'member' or not (v_keys <@ '{display_name,member_id,type}' and cardinality(array_remove(v_keys, 'type')) = 1) then
    perform app_private.raise('SVV22', 'SUBJECT_NOT_SUPPORTED',
      'a conversation''s subject is one member: {"member_id": "<email>"} or {"display_name": "<name>"}', '/subject');
  end if;
  if p_subject ? 'member_id' then
    select array_agg(m.id) into v_ids from api.members() m where m.id = lower(trim(p_subject ->> 'member_id')) and m.status = 'active';
  else
    select array_agg(m.id order by m.id) into v_ids from api.members() m
     where lower(m.display_name) = lower(trim(p_subject ->> 'display_name')) and m.status = 'active';
  end if;
  if v_ids is null then
    perform app_private.raise('SVV22', 'SUBJECT_NOT_FOUND', 'no active member of your organization matches the subject', '/subject');
  end if;
  if cardinality(v_ids) > 1 then
    perform app_private.raise('SVV22', 'SUBJECT_AMBIGUOUS',
      format('%s active members have that display name; name the member by member_id', cardinality(v_ids)), '/subject');
  end if;
  return v_ids[1];
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text)
 RETURNS boolean
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
begin
  case p_resource_type
    when 'project' then return exists (select from api.projects(p_resource_id) v where v.id = p_resource_id);
    when 'task' then return exists (select from api.tasks(p_resource_id) v where v.id = p_resource_id);
    when 'time_entry' then
      if p_type = 'time_entry.deleted' then
        return app_private.may_read_time_entries();
      end if;
      return exists (select from api.time_entries(p_resource_id) v where v.id = p_resource_id and v.deleted_at is null);
    when 'approval' then return exists (select from api.approvals(p_resource_id) v where v.id = p_resource_id);
    when 'webhook_endpoint' then return exists (select from api.webhook_endpoints(p_resource_id) v where v.id = p_resource_id);
    when 'integration_connection' then return exists (select from api.integration_connections(p_resource_id) v where v.id = p_resource_id);
    when 'invoice' then return exists (select from api.invoices(p_resource_id) v where v.id = p_resource_id);
    when 'payment' then return exists (select from app.payments p where p.organization_id = v__organization_id and p.id = p_resource_id);
    when 'file' then return exists (select from api.files(p_resource_id) v where v.id = p_resource_id);
    when 'ticket' then return exists (select from api.tickets(p_resource_id) v where v.id = p_resource_id);
    when 'ticket_message' then
      return exists (select from app.ticket_messages m where m.organization_id = v__organization_id and m.id = p_resource_id);
    when 'report_run' then return exists (select from api.report_runs(p_resource_id) v where v.id = p_resource_id);
    when 'run' then return exists (select from api.runs(p_resource_id) v where v.id = p_resource_id);
    when 'conversation_message' then return exists (select from api.conversation_messages(p_resource_id) v where v.id = p_resource_id);
    else return false;
  end case;
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION skills.invoices_billable_time(p_args jsonb, p_subject text)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  v_lines jsonb;
  v_entries jsonb;
begin
  if not exists (select from api.projects() p where p.id = p_args ->> 'project_id') then
    perform app_private.raise('SVN04', 'PROJECT_NOT_FOUND', format('no project %s in your organization', p_args ->> 'project_id'));
  end if;
  select coalesce(jsonb_agg(jsonb_build_object('member_id', g.member_id, 'minutes', g.minutes) order by g.member_id), '[]'),
         coalesce(jsonb_agg(to_jsonb(g.ids)), '[]')
    into v_lines, v_entries
    from (select e.member_id, sum((e.doc ->> 'minutes')::integer)::integer as minutes, array_agg(e.id order by e.id) as ids
            from api.time_entries() e
           where e.project_id = p_args ->> 'project_id' and e.work_date between (p_args ->> 'from')::date and (p_args ->> 'to')::date
             and e.deleted_at is null and e.billable and e.status = 'approved'
           group by e.member_id) g;
  return jsonb_build_object('summary', format('%s member(s) with approved billable time', jsonb_array_length(v_lines)),
    'resources', jsonb_build_array(jsonb_build_object('type', 'project', 'id', p_args ->> 'project_id')),
    'data', jsonb_build_object('members', v_lines));
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION skills.tasks_assign(p_args jsonb, p_subject text)
 RETURNS jsonb
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  v_doc jsonb;
begin
  -- expected_version is the If-Match of a confirmed proposal: a task changed since it was read is
  -- refused as updateTask refuses a stale ETag. Without it the assignment replaces what is there now.
  select t.doc into v_doc from api.task_update(p_args ->> 'task_id',
    array[coalesce((p_args ->> 'expected_version')::integer, (select x.version from api.tasks() x where x.id = p_args ->> 'task_id'))],
    jsonb_build_object('assignee_member_ids', p_args -> 'assignee_member_ids'), null) t;
  return jsonb_build_object('summary', format('%s assigned to %s', p_args ->> 'task_id',
      (select string_agg(a, ', ') from jsonb_array_elements_text(v_doc -> 'assignee_member_ids') a)),
    'resources', jsonb_build_array(jsonb_build_object('type', 'task', 'id', p_args ->> 'task_id')),
    'data', jsonb_build_object('task_id', p_args ->> 'task_id', 'assignee_member_ids', v_doc -> 'assignee_member_ids'));
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION skills.tasks_find_attention(p_args jsonb, p_subject text)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  v_project text := p_args ->> 'project_id';
  v_docs jsonb;
  v_tasks jsonb;
begin
  if not exists (select from api.projects(v_project) p where p.id = v_project) then
    perform app_private.raise('SVN04', 'PROJECT_NOT_FOUND', format('no project %s in your organization', v_project));
  end if;
  select coalesce(jsonb_object_agg(t.id, t.doc), '{}') into v_docs from api.tasks() t where t.project_id = v_project and t.archived_at is null;
  with open_tasks as (
    select x.id, v_docs -> x.id as doc, x.status, x.due_at, x.version,
           (select count(*) from app.task_dependencies d
              join app.tasks p on p.organization_id = v__organization_id and p.id = d.predecessor_task_id
              join app.task_workflow_statuses s on s.organization_id = v__organization_id and s.workflow_id = p.workflow_id and s.status = p.status
             where d.organization_id = v__organization_id and d.task_id = x.id and s.category = 'open') as open_predecessors
      from app.tasks x
      join app.task_workflow_statuses s on s.organization_id = v__organization_id and s.workflow_id = x.workflow_id and s.status = x.status
     where x.organization_id = v__organization_id and x.project_id = v_project and v_docs ? x.id and s.category = 'open')
  select coalesce(jsonb_agg(jsonb_build_object('id', o.id, 'name', o.doc ->> 'name', 'status', o.status,
           'due_at', o.doc -> 'due_at', 'assignee_member_ids', coalesce(o.doc -> 'assignee_member_ids', '[]'),
           'transitions', coalesce((select jsonb_agg(tr ->> 'name') from jsonb_array_elements(o.doc -> 'transitions') tr), '[]'),
           'overdue', o.due_at < now(), 'open_predecessors', o.open_predecessors, 'version', o.version) order by o.due_at nulls last, o.id), '[]')
    into v_tasks
    from open_tasks o
   where o.due_at < now() or o.open_predecessors > 0 or o.status = 'blocked';
  return jsonb_build_object('summary', format('%s task(s) of %s need attention', jsonb_array_length(v_tasks), v_project),
    'resources', coalesce((select jsonb_agg(jsonb_build_object('type', 'task', 'id', x ->> 'id')) from jsonb_array_elements(v_tasks) x), '[]'),
    'data', jsonb_build_object('project_id', v_project,
      'manager_member_id', (select p.manager_member_id from api.projects(v_project) p where p.id = v_project), 'tasks', v_tasks));
end
$function$
$fn$;
  execute $fn$CREATE OR REPLACE FUNCTION skills.time_missing_days(p_args jsonb, p_subject text)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  v_from date := (p_args ->> 'from')::date;
  v_to date := (p_args ->> 'to')::date;
  v_members jsonb;
begin
  if v_to < v_from or v_to > v_from + 92 then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'to must be on or after from, and at most 92 days later', '/to');
  end if;
  with days as (
    select d::date as day from generate_series(v_from, v_to, interval '1 day') d where extract(isodow from d) < 6),
  members as (
    select m.id, m.display_name from api.members() m
     where m.status = 'active' and (p_subject is null or m.id = p_subject)),
  worked as (
    select distinct e.member_id, e.work_date from api.time_entries() e
     where e.work_date between v_from and v_to and e.deleted_at is null)
  select coalesce(jsonb_agg(jsonb_build_object('member_id', x.id, 'display_name', x.display_name, 'missing_dates', x.missing)
                            order by x.id), '[]')
    into v_members
    from (select m.id, m.display_name, jsonb_agg(to_char(d.day, 'YYYY-MM-DD') order by d.day) as missing
            from members m cross join days d
           where not exists (select from worked w where w.member_id = m.id and w.work_date = d.day)
           group by m.id, m.display_name) x;
  return jsonb_build_object('summary', format('%s member(s) with missing time from %s to %s', jsonb_array_length(v_members), v_from, v_to),
    'resources', coalesce((select jsonb_agg(jsonb_build_object('type', 'member', 'id', x ->> 'member_id')) from jsonb_array_elements(v_members) x), '[]'),
    'data', jsonb_build_object('from', v_from, 'to', v_to, 'members', v_members));
end
$function$
$fn$;
  -- 3. Tables: the keys off, the tables placed, the keys back (checked again, shard by shard).
  for r in select k.conrelid::regclass::text as tbl, k.conname, pg_get_constraintdef(k.oid) as def
             from pg_constraint k join pg_class c on c.oid = k.conrelid join pg_namespace n on n.oid = c.relnamespace
            where k.contype = 'f' and n.nspname in ('app', 'app_private')
            order by 1, 2 loop
    if r.tbl <> 'app_private.bi_logins' then
      v_keys := v_keys || format('alter table %s add constraint %I %s', r.tbl, r.conname, r.def);
    end if;
    execute format('alter table %s drop constraint %I', r.tbl, r.conname);
  end loop;
  perform create_reference_table('app_private.currencies');
  perform create_reference_table('app_private.event_types');
  perform create_reference_table('app_private.report_definitions');
  perform create_reference_table('app_private.agent_skills');
  perform create_reference_table('app_private.agent_definitions');
  perform create_reference_table('app_private.run_wake_key');
  perform create_distributed_table('app.organizations', 'id');
  perform create_distributed_table('app.agent_publications', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.api_clients', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.approvals', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.client_secrets', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.conversation_messages', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.conversations', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.custom_field_definitions', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.customers', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.events', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.file_chunks', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.file_contents', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.file_policies', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.file_uploads', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.files', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.idempotency_keys', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.integration_connections', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.invoice_lines', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.invoices', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.members', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.object_schemas', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.payments', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.projects', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.report_results', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.report_runs', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.run_events', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.run_tool_calls', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.runs', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.task_activity', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.task_dependencies', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.task_notes', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.task_workflow_statuses', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.task_workflow_transitions', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.task_workflows', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.tasks', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.ticket_messages', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.ticket_search', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.ticket_statuses', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.ticket_transitions', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.tickets', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.time_entries', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.time_entry_audit', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.webhook_deliveries', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.webhook_delivery_attempts', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.webhook_endpoints', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app_private.access_tokens', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app_private.admin_notifications', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app_private.invoice_number_counters', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app_private.job_outbox', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app_private.ticket_number_counters', 'organization_id', colocate_with => 'app.organizations');
  foreach v_key in array v_keys loop
    execute v_key;
  end loop;
  -- 4. Functions on every node, and the ones delegated to the organization's worker.
  for r in select p.oid::regprocedure::text as fn
             from pg_proc p join pg_namespace n on n.oid = p.pronamespace
            where n.nspname in ('app', 'app_private', 'api', 'control', 'skills', 'reporting') and p.prokind in ('f', 'p')
              and not exists (select from pg_dist_object o where o.classid = 'pg_proc'::regclass and o.objid = p.oid) loop
    perform create_distributed_function(r.fn::regprocedure);
  end loop;
  perform create_distributed_function('api.access_token_record(text,text,text,bytea,timestamp with time zone)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('api.authenticate_client(text,text,text)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('api.begin_request(text,text,text[],boolean)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('api.in_organization(text,text,text[])'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('api.in_organization_count(text,text,text[])'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.accounting_sync_load(text,text)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.accounting_sync_record(text,text,boolean,text,text,boolean)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.chat_context(text,text)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.client_may_read(text,text,text,text,text)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.file_scan_load(text,text)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.file_scan_record(text,text,text,text,boolean)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.report_run_execute(text,text,interval)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.report_run_start(text,text)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.run_available_skills(text,text)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.run_note(text,text,text,jsonb)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.run_settle(text,text,text,jsonb,jsonb)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.run_start(text,text)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.run_tool(text,text,text,jsonb,jsonb)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.ticket_reply_load(text,text)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.ticket_reply_record(text,text,boolean,text)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.webhook_claim(text,text,integer)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.webhook_fanout(text,text,integer)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.webhook_fanout_batch(text,integer,integer)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.webhook_record_attempt(text,text,integer,timestamp with time zone,integer,integer,text,boolean,integer,double precision,integer,integer)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  -- 5. Citus's functions that run SQL on other nodes, or set a distributed transaction's id (which
  -- a caller could replay), are not the runtime role's: revoked from PUBLIC here (the workers keep
  -- assign_distributed_transaction_id for the coordinator's own connections).
  for r in select p.oid::regprocedure::text as fn from pg_proc p
            where p.pronamespace = 'pg_catalog'::regnamespace
              and p.proname in ('assign_distributed_transaction_id', 'run_command_on_workers', 'run_command_on_placements',
                                'run_command_on_shards', 'run_command_on_colocated_placements', 'run_command_on_all_nodes',
                                'run_command_on_coordinator', 'master_run_on_worker', 'citus_run_local_command')
              and has_function_privilege('public', p.oid, 'execute') loop
    execute format('revoke execute on function %s from public', r.fn);
  end loop;
end
$citus$;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
