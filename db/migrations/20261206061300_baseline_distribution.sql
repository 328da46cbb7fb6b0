-- migrate:up

/** The baseline, 13 of 16. Distribution on Citus: the helpers that place and prepare shards (on one server they exist and do nothing).
 * Laid out by table: each table, then its keys and indexes, row security and policies, triggers
 * and their functions, and grants; then the area's views and commands. db/README.md, "The
 * baseline", says how it was made and proved equal to the migrations it replaced. */
set local check_function_bodies = false;
set local client_min_messages = warning;
set local search_path = '';

-- While this file runs, the owners of its functions and views may create in the schemas (`alter … owner to`
-- a role needs it when the migrating role is not a superuser); taken back at its end.
grant create on schema api, app, app_private, control, reporting, skills to svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- procedure app_private.citus_add_worker(text, integer, text)

create procedure app_private.citus_add_worker(in p_host text, in p_port integer, in p_shard_transfer_mode text default 'auto'::text)
    language plpgsql
    as $$
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

revoke all on procedure app_private.citus_add_worker(in p_host text, in p_port integer, in p_shard_transfer_mode text) from public;

-- function app_private.citus_context_keys()

create function app_private.citus_context_keys() returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
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

revoke all on function app_private.citus_context_keys() from public;

-- procedure app_private.citus_copy_privileges()

create procedure app_private.citus_copy_privileges()
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
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

revoke all on procedure app_private.citus_copy_privileges() from public;

-- function app_private.citus_drop_shard_views()

create function app_private.citus_drop_shard_views() returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
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

revoke all on function app_private.citus_drop_shard_views() from public;

-- function app_private.citus_node_grants()

create function app_private.citus_node_grants() returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  v_failed text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  select string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') into v_failed
    from run_command_on_workers($w$
      do $g$
      declare
        s regclass;
      begin
        set local citus.enable_ddl_propagation = off;
        if to_regclass('app_private.context_keys') is not null then
          grant select on app_private.context_keys to svc_gate;
        end if;
        for s in select c.oid::regclass from pg_class c join pg_namespace n on n.oid = c.relnamespace
                  where n.nspname in ('app', 'app_private') and c.relkind = 'S' and c.relname <> 'shard_views_generation' loop
          execute format('grant usage on sequence %s to svc_owner, svc_worker, svc_admin', s);
        end loop;
        if to_regclass('app_private.shard_views_generation') is not null and to_regrole('svc_relay') is not null then
          grant select on sequence app_private.shard_views_generation to svc_relay;
        end if;
        -- A worker's sessions of these roles are Citus's, for the coordinator's sessions, and their
        -- statements are text with every argument written out: a client's secret, a token's
        -- digest, every organization's data. Untracked, pg_stat_activity shows no session of
        -- another its statement; only a superuser may turn it on again (PGC_SUSET).
        alter role svc_runtime set track_activities = off;
        alter role svc_worker set track_activities = off;
        alter role svc_admin set track_activities = off;
      end
      $g$ $w$)
   where not success;
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_PRIVILEGES_NOT_COPIED', format('granting the workers'' own objects failed: %s', v_failed));
  end if;
end
$_$;

comment on function app_private.citus_node_grants() is 'On Citus: each worker''s own objects and settings (which Citus does not propagate): svc_gate''s read of its context key, its sequences for svc_owner, svc_worker and svc_admin, the api views'' copies'' generation for svc_relay, and the service logins'' statements untracked (track_activities off).';

revoke all on function app_private.citus_node_grants() from public;

-- function app_private.citus_prepare_if_needed()

create function app_private.citus_prepare_if_needed() returns integer
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

revoke all on function app_private.citus_prepare_if_needed() from public;

-- procedure app_private.citus_prepare_workers()

create procedure app_private.citus_prepare_workers()
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  perform app_private.citus_context_keys();
  perform app_private.citus_node_grants();
  -- A moved shard is made anew without the column grants of 20261205000600: svc_api's inserts there
  -- were refused (measured).
  call app_private.citus_shard_privileges();
  -- Before the copies are made: a grant on a worker advances its generation (20261205003100).
  perform app_private.citus_relay_privileges();
  call app_private.citus_copy_privileges();
end
$$;

revoke all on procedure app_private.citus_prepare_workers() from public;

-- function app_private.citus_refresh_shard_views()

create function app_private.citus_refresh_shard_views() returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
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

revoke all on function app_private.citus_refresh_shard_views() from public;

-- function app_private.citus_relay_privileges()

create function app_private.citus_relay_privileges() returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
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
      revoke all on function reporting_private.bi_rows_of(text, text, text[], text) from public;
      grant execute on function reporting_private.bi_rows_of(text, text, text[], text) to svc_reporting_relay;
      end $r$$w$)
   where not success;
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_PRIVILEGES_NOT_COPIED', format('the relay''s privileges on the workers: %s', v_failed));
  end if;
end
$_$;

revoke all on function app_private.citus_relay_privileges() from public;

-- procedure app_private.citus_shard_privileges()

create procedure app_private.citus_shard_privileges()
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

revoke all on procedure app_private.citus_shard_privileges() from public;

-- function app_private.current_shard_views(bigint)

create function app_private.current_shard_views(p_shard bigint) returns text
    language plpgsql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.current_shard_views(p_shard bigint) owner to svc_owner;

revoke all on function app_private.current_shard_views(p_shard bigint) from public;
grant execute on function app_private.current_shard_views(p_shard bigint) to svc_worker;
grant execute on function app_private.current_shard_views(p_shard bigint) to svc_admin;

-- function app_private.refuse_on_coordinator(text)

create function app_private.refuse_on_coordinator(p_function text) returns void
    language plpgsql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.refuse_on_coordinator(p_function text) owner to svc_owner;

revoke all on function app_private.refuse_on_coordinator(p_function text) from public;
grant execute on function app_private.refuse_on_coordinator(p_function text) to svc_worker;
grant execute on function app_private.refuse_on_coordinator(p_function text) to svc_admin;
grant execute on function app_private.refuse_on_coordinator(p_function text) to svc_gate;

-- function app_private.shard_groups_unprepared()

create function app_private.shard_groups_unprepared() returns integer
    language plpgsql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    return 0;
  end if;
  if not exists (select from pg_dist_partition where logicalrelid = 'app.organizations'::regclass) then
    return 0;
  end if;
  return (select count(*)::integer
            from pg_dist_shard s join pg_dist_placement p using (shardid)
           where s.logicalrelid = 'app.organizations'::regclass
             and p.groupid = (select groupid from pg_dist_local_group)
             and app_private.current_shard_views(s.shardid) is null);
end
$$;

revoke all on function app_private.shard_groups_unprepared() from public;
grant execute on function app_private.shard_groups_unprepared() to svc_owner;

-- function app_private.shard_views_advance()

create function app_private.shard_views_advance() returns void
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if to_regclass('app_private.shard_views_generation') is not null then
    -- Held until this change ends: a refresh waits for it (shard_views_create).
    perform pg_advisory_xact_lock_shared(2026, 37);
    perform nextval('app_private.shard_views_generation');
  end if;
end
$$;

comment on function app_private.shard_views_advance() is 'On a Citus worker, advances the node''s shard-view generation (the sequence app_private.shard_views_generation; nothing when it is absent, as on one server) for the event trigger app_private.tg_shard_views_stale, after DDL on the api schema or a GRANT or REVOKE by a superuser or a member of svc_api, holding the shard views'' advisory lock shared until that change ends so that a refresh (shard_views_create) waits for it; every copy of an api view made before then refuses to be read. It is a definer because nextval needs a privilege on that sequence which the role making the change need not hold, and it does nothing else and reads no table; it stays with the migrating role because only DDL reaches it.';

revoke all on function app_private.shard_views_advance() from public;
grant execute on function app_private.shard_views_advance() to svc_api;
grant execute on function app_private.shard_views_advance() to svc_owner;

-- function app_private.shard_views_create(text)

create function app_private.shard_views_create(p_organizations_shard text) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
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

revoke all on function app_private.shard_views_create(p_organizations_shard text) from public;
grant execute on function app_private.shard_views_create(p_organizations_shard text) to svc_owner;

-- function app_private.shard_views_current(bigint)

create function app_private.shard_views_current(p_generation bigint) returns boolean
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if pg_sequence_last_value('app_private.shard_views_generation'::regclass) is distinct from p_generation then
    perform app_private.raise('SV500', 'SHARD_VIEWS_STALE', 'this copy of an api view is older than the view');
  end if;
  return true;
end
$$;

alter function app_private.shard_views_current(p_generation bigint) owner to svc_api;

comment on function app_private.shard_views_current(p_generation bigint) is 'The gate in every copy of an api view on a Citus worker (schema api_shard_<shard>), evaluated once per statement: it raises SV500 SHARD_VIEWS_STALE unless the node''s shard-view generation is still the one the copy was made at, so a copy older than its view is never read, whoever names it; api.in_organization then reads the view function instead. It runs as svc_api, which is granted the generation sequence and svc_runtime is not; it reads no tenant row.';

revoke all on function app_private.shard_views_current(p_generation bigint) from public;
grant execute on function app_private.shard_views_current(p_generation bigint) to svc_runtime;
grant execute on function app_private.shard_views_current(p_generation bigint) to svc_owner;
grant execute on function app_private.shard_views_current(p_generation bigint) to svc_gate;

-- function app_private.shard_views_drop()

create function app_private.shard_views_drop() returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
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

revoke all on function app_private.shard_views_drop() from public;
grant execute on function app_private.shard_views_drop() to svc_owner;

-- function app_private.statement_on_shards(text, text)

create function app_private.statement_on_shards(p_organization_id text, p_statement text) returns text
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.statement_on_shards(p_organization_id text, p_statement text) owner to svc_api;

comment on function app_private.statement_on_shards(p_organization_id text, p_statement text) is 'On a Citus worker, rewrites a request''s statement so that each api.<view>() it reads becomes the organization''s shard group''s copy api_shard_<shard>.<view> when this node''s copies are at its current generation, so a list''s filters, order and limit reach the shard''s indexes; otherwise, and always without Citus, it returns the statement unchanged. It is text only: both forms read the same rows under the same policies, as the caller. It runs as svc_api only because Citus tells which shard holds an organization only to a role that may read app.organizations.';

revoke all on function app_private.statement_on_shards(p_organization_id text, p_statement text) from public;
grant execute on function app_private.statement_on_shards(p_organization_id text, p_statement text) to svc_runtime;
grant execute on function app_private.statement_on_shards(p_organization_id text, p_statement text) to svc_owner;
grant execute on function app_private.statement_on_shards(p_organization_id text, p_statement text) to svc_worker;
grant execute on function app_private.statement_on_shards(p_organization_id text, p_statement text) to svc_admin;
grant execute on function app_private.statement_on_shards(p_organization_id text, p_statement text) to svc_gate;

-- function app_private.tg_shard_views_stale()

create function app_private.tg_shard_views_stale() returns event_trigger
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

revoke all on function app_private.tg_shard_views_stale() from public;
grant execute on function app_private.tg_shard_views_stale() to svc_owner;

revoke create on schema api, app, app_private, control, reporting, skills from svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
