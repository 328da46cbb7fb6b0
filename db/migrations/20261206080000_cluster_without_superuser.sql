-- migrate:up

/** A Citus cluster migrated without a superuser. What only a superuser may do on a cluster is
 * db/citus/bootstrap.sql, run before the migrations: the service logins' settings on the workers,
 * dblink's privileges, and the event triggers that mark the api views' copies stale, whose function
 * is the bootstrap's (an event trigger runs it for a superuser's DDL too, so no role of the service
 * may change it). The helpers that prepare the workers no longer make those, the event trigger's
 * function and its definer go, and the job that prepares a moved shard group calls its helper as
 * svc_worker: the helper runs as the schema's owner. A worker is added by a superuser with the
 * bootstrap's svc_bootstrap.add_node, then prepared and rebalanced onto by the deploy login
 * (citus_add_worker), and the copies of the api views are given to
 * svc_api by a role that is not a superuser (shard_views_create lets svc_api create in the copies'
 * schema while it makes them). On one server these helpers do nothing. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

create or replace procedure app_private.citus_add_worker(in p_host text, in p_port integer, in p_shard_transfer_mode text default 'auto'::text)
    language plpgsql
    as $$
begin
  if not exists (select from pg_catalog.pg_extension where extname = 'citus') then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', 'this database has no citus extension: there is no cluster to grow');
  end if;
  -- Citus adds a node only for a superuser, who runs no code of ours: the cluster's bootstrap does it.
  if not exists (select from pg_catalog.pg_dist_node where nodename = p_host and nodeport = p_port and isactive) then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', format('%s:%s is not an active node of the cluster: a superuser adds it first (call svc_bootstrap.add_node(%L, %s))', p_host, p_port, p_host, p_port));
  end if;
  call app_private.citus_prepare_workers();
  commit;
  -- A rebalance still running (this call run again after its wait was cut short) is waited for,
  -- not started twice (Citus refuses that).
  if not exists (select from pg_catalog.pg_dist_background_job where state in ('scheduled', 'running', 'cancelling', 'failing')) then
    -- Started by the cluster bootstrap's function: the rebalancer moves rows as the role that starts
    -- it, and under forced row security the deploy login's would move none.
    perform svc_bootstrap.rebalance_start(p_shard_transfer_mode);
  end if;
  commit;
  perform pg_catalog.citus_rebalance_wait();
  commit;
  -- The moved shard groups: copies on the nodes that now hold them, none where they left.
  call app_private.citus_prepare_workers();
end
$$;

comment on procedure app_private.citus_add_worker(in p_host text, in p_port integer, in p_shard_transfer_mode text) is 'On Citus: prepares a worker a superuser added (call svc_bootstrap.add_node(host, port), db/citus/bootstrap.sql), rebalances the shard groups onto it and prepares the nodes that now hold them. The deploy login calls it: a superuser runs no code that a role of the service may change.';

create or replace function app_private.citus_node_grants() returns void
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
        -- The event triggers advance the generation as the role that changes the api views: a
        -- member of svc_api, their owner (db/citus/bootstrap.sql).
        if to_regclass('app_private.shard_views_generation') is not null then
          grant usage on sequence app_private.shard_views_generation to svc_api;
        end if;
      end
      $g$ $w$)
   where not success;
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_PRIVILEGES_NOT_COPIED', format('granting the workers'' own objects failed: %s', v_failed));
  end if;
end
$_$;

comment on function app_private.citus_node_grants() is 'On Citus: each worker''s own objects (which Citus does not propagate): svc_gate''s read of its context key, its sequences for svc_owner, svc_worker and svc_admin, and the api views'' copies'' generation for svc_relay to read and for svc_api to advance. The service logins'' settings there are the cluster bootstrap''s (db/citus/bootstrap.sql).';

create or replace function app_private.citus_relay_privileges() returns void
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

create or replace function app_private.citus_refresh_shard_views() returns void
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
        -- The event triggers that mark the copies stale are the cluster bootstrap's (a superuser's).
        if (select count(*) from pg_event_trigger t join pg_proc p on p.oid = t.evtfoid
             where t.evtname in ('shard_views_stale', 'shard_views_dropped')
               and p.pronamespace = to_regnamespace('svc_bootstrap') and p.proname = 'shard_views_stale') <> 2 then
          perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', 'this worker has not been prepared by db/citus/bootstrap.sql (run it as a superuser on the coordinator''s database)');
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

create or replace function app_private.citus_prepare_if_needed() returns integer
    language plpgsql security definer
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

create or replace function app_private.shard_views_create(p_organizations_shard text) returns void
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
  -- Each copy is given to svc_api, the api views' owner, which PostgreSQL allows a role that is not a
  -- superuser only when the new owner may create in the schema: while the copies are made.
  execute format('grant create on schema %I to svc_api', v_schema);
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
  execute format('revoke create on schema %I from svc_api', v_schema);
  perform set_config('svc.making_shard_views', 'off', true);
end
$_$;

comment on function app_private.citus_prepare_if_needed() is 'On Citus: prepares the shard groups a worker holds without their copies of the api views or their shards'' grants (moved by hand), for the job citus_prepare (svc_worker); answers how many, or -1 while a rebalance runs. A definer of the schema''s owner, because it makes objects on the workers as that owner; it takes no argument and reads no organization''s rows.';
alter function app_private.citus_prepare_if_needed() owner to svc_schema;
revoke all on function app_private.citus_prepare_if_needed() from public;
grant execute on function app_private.citus_prepare_if_needed() to svc_worker;

-- The helpers that make objects on the workers make them as the schema's owner, whoever calls them (a
-- superuser after a rebalance by hand), so that it may change them later.
alter function app_private.citus_context_keys() security definer;
comment on function app_private.citus_context_keys() is 'On Citus: each worker''s own key for the request context (app_private.context_keys), made where it has none. A definer of the schema''s owner, so that the table belongs to svc_schema whoever calls it; it takes no argument and reads no organization''s rows.';
alter function app_private.citus_refresh_shard_views() security definer;
comment on function app_private.citus_refresh_shard_views() is 'On Citus: makes each worker''s copies of the api views over each shard group it holds again (app_private.shard_views_create on every placement of app.organizations), at the node''s current generation. A definer of the schema''s owner, so that the copies belong to svc_schema and svc_api whoever calls it; it takes no argument and reads no organization''s rows.';
alter function app_private.citus_drop_shard_views() security definer;
comment on function app_private.citus_drop_shard_views() is 'On Citus: drops each worker''s copies of the api views (before a migration that drops or retypes a column a view reads). A definer of the schema''s owner, which owns the copies; it takes no argument.';

-- The event triggers on the workers now call the bootstrap's function (db/citus/bootstrap.sql).
do $$
begin
  if exists (select from pg_extension where extname = 'citus') then
    if exists (select from run_command_on_workers($w$select count(*) from pg_event_trigger
                where evtfoid = to_regprocedure('app_private.tg_shard_views_stale()')$w$) r where not r.success or r.result <> '0') then
      perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', 'a worker''s event triggers still call app_private.tg_shard_views_stale: run db/citus/bootstrap.sql as a superuser on the coordinator''s database first');
    end if;
  end if;
end
$$;
drop function app_private.tg_shard_views_stale();
drop function app_private.shard_views_advance();

-- The grant above on a cluster's workers now (a new cluster's baseline runs it again).
do $$
begin
  if exists (select from pg_extension where extname = 'citus') and to_regclass('pg_catalog.pg_dist_partition') is not null then
    if exists (select from pg_dist_partition where logicalrelid = 'app.organizations'::regclass) then
      perform app_private.citus_node_grants();
    end if;
  end if;
end
$$;

-- migrate:down
set local lock_timeout = '3s';
set local statement_timeout = '60s';
do $$
begin
  if exists (select from pg_extension where extname = 'citus') then
    perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'on a cluster the helpers that needed a superuser are not put back: restore a backup');
  end if;
end
$$;

create or replace procedure app_private.citus_add_worker(in p_host text, in p_port integer, in p_shard_transfer_mode text default 'auto'::text)
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

comment on procedure app_private.citus_add_worker(in p_host text, in p_port integer, in p_shard_transfer_mode text) is null;
alter function app_private.citus_context_keys() security invoker;
comment on function app_private.citus_context_keys() is null;
alter function app_private.citus_refresh_shard_views() security invoker;
comment on function app_private.citus_refresh_shard_views() is null;
alter function app_private.citus_drop_shard_views() security invoker;
comment on function app_private.citus_drop_shard_views() is null;

create or replace function app_private.citus_node_grants() returns void
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

create or replace function app_private.citus_prepare_if_needed() returns integer
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

comment on function app_private.citus_prepare_if_needed() is null;
revoke all on function app_private.citus_prepare_if_needed() from svc_worker;

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

create or replace function app_private.citus_refresh_shard_views() returns void
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

create or replace function app_private.citus_relay_privileges() returns void
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

create or replace function app_private.shard_views_create(p_organizations_shard text) returns void
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
