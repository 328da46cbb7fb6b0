-- The cluster's bootstrap: what only a superuser may do on a Citus cluster, run once per database on
-- its coordinator (again at will: it changes nothing the second time), after db/bootstrap.sql ran on
-- every node, the database got the citus extension and its workers, and before the migrations.
-- scripts/db.ts migrate runs both when DATABASE_URL is a superuser's on a coordinator, then migrates
-- as svc_deploy (db/README.md, "Schemas and roles"). A worker added later gets db/bootstrap.sql, then
-- this file's worker part from svc_bootstrap.add_node (below), which a superuser calls.

-- A superuser's session: a search_path that no role of the service can reach (the database, and with
-- it `public` and its settings, may be svc_schema's).
set search_path = pg_catalog, pg_temp;
-- One transaction on the coordinator (Citus makes its changes on the workers as part of it), then the
-- workers' own part, over connections of their own that see it committed.
begin;
set local lock_timeout = '10s';

-- Citus opens its connections to the workers as the role of the statement, and a migration's role
-- is svc_schema: on a cluster it logs in, node to node only, authenticated as the cluster
-- authenticates its nodes (a certificate, pg_dist_authinfo); it has no password. (The workers' part
-- below makes the same change there.)
alter role svc_schema login password null;
-- The rebalancer's tasks log in as the role that started them, svc_mover (db/bootstrap.sql), on the
-- coordinator and on every node a shard group leaves or reaches: node to node, as svc_schema.
alter role svc_mover login password null;

-- The BI relay (docs/scaling.md, "BI on a cluster"): svc_reporting_relay is the login the
-- coordinator opens on a worker for a BI read, and it only reads, for as long as a BI statement
-- may run; svc_relay owns the relay's functions and may open that connection. svc_schema makes the
-- relay's functions and gives them to svc_relay.
do $$
begin
  if not exists (select from pg_roles where rolname = 'svc_reporting_relay') then
    create role svc_reporting_relay login nosuperuser nobypassrls nocreatedb nocreaterole noinherit;
  end if;
  if not exists (select from pg_roles where rolname = 'svc_relay') then
    create role svc_relay nologin nosuperuser nobypassrls nocreatedb nocreaterole inherit;
  end if;
end
$$;
alter role svc_reporting_relay set default_transaction_read_only = on;
alter role svc_reporting_relay set statement_timeout = '30s';
grant svc_reporting_relay to svc_relay;
grant svc_relay to svc_schema;
-- The relay's connection is opened by one function of this bootstrap's, with a connection string it
-- makes itself: the relay's login on the node that holds an organization, the nodes' connection
-- settings (citus.node_conninfo, a superuser's setting to read) and the relay's password or
-- certificate where Citus keeps them (pg_dist_authinfo, which may hold any role's password). It
-- belongs to svc_relay_secrets, which may read both and open a connection without a password
-- (dblink_connect_u, which could log in as any role the server's own credentials let it), never logs
-- in, has no member, owns nothing else, and calls no function a role of the service may change;
-- svc_relay (the BI relay's functions) may call it, and use the connection it opened.
do $$
begin
  if not exists (select from pg_roles where rolname = 'svc_relay_secrets') then
    create role svc_relay_secrets nologin inherit nosuperuser nobypassrls nocreatedb nocreaterole;
  end if;
end
$$;
grant pg_read_all_settings to svc_relay_secrets;
grant select on table pg_catalog.pg_dist_authinfo to svc_relay_secrets;
revoke pg_read_all_settings from svc_relay;
revoke select on table pg_catalog.pg_dist_authinfo from svc_relay;
create schema if not exists svc_bootstrap;
revoke all on schema svc_bootstrap from public;
-- Only a superuser may have made it: what is in it runs for superusers, or with their grants.
do $$
begin
  if not (select r.rolsuper from pg_namespace n join pg_roles r on r.oid = n.nspowner where n.nspname = 'svc_bootstrap') then
    raise exception 'schema svc_bootstrap belongs to a role that is not a superuser: drop it, then run the bootstrap again';
  end if;
end
$$;
grant usage on schema svc_bootstrap to svc_relay, svc_relay_secrets;
create or replace function svc_bootstrap.relay_connect(p_nodeid integer) returns text
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $f$
declare
  n record;
  v_name text := 'svc_bi_relay_' || pg_backend_pid();
begin
  select d.nodename, d.nodeport into n from pg_dist_node d where d.nodeid = p_nodeid and d.isactive and d.noderole = 'primary';
  if n.nodename is null then
    raise exception 'no active primary node %', p_nodeid using errcode = '22023';
  end if;
  if v_name = any (coalesce(svc_dblink.dblink_get_connections(), '{}')) then
    perform svc_dblink.dblink_disconnect(v_name);
  end if;
  -- Values quoted as libpq reads them: in single quotes, a backslash and a quote escaped.
  perform svc_dblink.dblink_connect_u(v_name, concat_ws(' ',
    format('host=%s port=%s dbname=%s user=svc_reporting_relay',
           '''' || replace(replace(n.nodename, '\', '\\'), '''', '\''') || '''', n.nodeport,
           '''' || replace(replace(current_database(), '\', '\\'), '''', '\''') || ''''),
    nullif(current_setting('citus.node_conninfo', true), ''),
    (select a.authinfo from pg_dist_authinfo a
      where a.rolename = 'svc_reporting_relay' and a.nodeid in (p_nodeid, 0) order by a.nodeid desc limit 1)));
  return v_name;
end
$f$;
alter function svc_bootstrap.relay_connect(integer) owner to svc_relay_secrets;
revoke all on function svc_bootstrap.relay_connect(integer) from public;
grant execute on function svc_bootstrap.relay_connect(integer) to svc_relay;

-- dblink, for the relay alone: in a schema of its own, every function revoked from PUBLIC, the three
-- the relay calls granted to svc_relay, the connection without a password to svc_relay_secrets. The
-- schema is a superuser's: its owner could rename it and put a function of its own in its place,
-- which svc_bootstrap.relay_connect would run with svc_relay_secrets' privileges.
create schema if not exists svc_dblink;
do $$
begin
  if not (select r.rolsuper from pg_namespace n join pg_roles r on r.oid = n.nspowner where n.nspname = 'svc_dblink') then
    execute format('alter schema svc_dblink owner to %I', current_user);
  end if;
end
$$;
revoke all on schema svc_dblink from public;
grant usage on schema svc_dblink to svc_relay;
create extension if not exists dblink schema svc_dblink;
revoke execute on all functions in schema svc_dblink from public;
grant execute on function svc_dblink.dblink(text, text), svc_dblink.dblink_disconnect(text),
  svc_dblink.dblink_get_connections() to svc_relay;
revoke execute on function svc_dblink.dblink_connect_u(text, text) from svc_relay;
grant usage on schema svc_dblink to svc_relay_secrets;
grant execute on function svc_dblink.dblink_connect_u(text, text), svc_dblink.dblink_disconnect(text),
  svc_dblink.dblink_get_connections() to svc_relay_secrets;

-- Citus's functions that run SQL on other nodes, or set a distributed transaction's id (which a
-- caller could replay), are not the runtime role's: revoked from PUBLIC (the workers keep
-- assign_distributed_transaction_id for the coordinator's own connections). The schema's owner
-- prepares the workers with three of them (and the one they call).
do $$
declare
  r record;
begin
  for r in select p.oid::regprocedure::text as fn from pg_proc p
            where p.pronamespace = 'pg_catalog'::regnamespace
              and p.proname in ('assign_distributed_transaction_id', 'run_command_on_workers', 'run_command_on_placements',
                                'run_command_on_shards', 'run_command_on_colocated_placements', 'run_command_on_all_nodes',
                                'run_command_on_coordinator', 'master_run_on_worker', 'citus_run_local_command')
              and has_function_privilege('public', p.oid, 'execute') loop
    execute format('revoke execute on function %s from public', r.fn);
  end loop;
  for r in select p.oid::regprocedure::text as fn from pg_proc p
            where p.pronamespace = 'pg_catalog'::regnamespace
              and p.proname in ('run_command_on_workers', 'run_command_on_placements', 'run_command_on_shards', 'master_run_on_worker') loop
    execute format('grant execute on function %s to svc_schema', r.fn);
  end loop;
end
$$;

-- What a worker keeps of its own (Citus does not carry it), in a function of this bootstrap's
-- schema, which only a superuser may change or call: run here, and by svc_bootstrap.add_node for a
-- node added later.
create or replace function svc_bootstrap.prepare_workers() returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $p$
declare
  v_failed text;
begin
  select string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') into v_failed
    from run_command_on_workers($w$
      do $b$
      begin
        set local search_path = pg_catalog, pg_temp;
        set local citus.enable_ddl_propagation = off;
        -- As db/bootstrap.sql on every node: a node Citus added carries the roles, not this grant.
        grant set on parameter "svc.gate_organization" to svc_schema;
        -- Citus's connections to this node log in as svc_schema for a migration's statements (the
        -- coordinator's change of a role made outside its database does not reach the workers).
        alter role svc_schema login password null;
        alter role svc_mover login password null;
        -- A worker's sessions of these roles are Citus's, for the coordinator's sessions, and their
        -- statements are text with every argument written out: a client's secret, a token's
        -- digest, every organization's data. Untracked, pg_stat_activity shows no session of
        -- another its statement; only a superuser may turn it on again (PGC_SUSET).
        alter role svc_runtime set track_activities = off;
        alter role svc_worker set track_activities = off;
        alter role svc_admin set track_activities = off;
        if to_regnamespace('svc_dblink') is not null then
          if not (select r.rolsuper from pg_namespace n join pg_roles r on r.oid = n.nspowner where n.nspname = 'svc_dblink') then
            execute format('alter schema svc_dblink owner to %I', current_user);
          end if;
          revoke all on schema svc_dblink from public;
          grant usage on schema svc_dblink to svc_relay;
          revoke execute on all functions in schema svc_dblink from public;
        end if;
        -- After DDL on the api schema, or a GRANT or REVOKE, by a superuser or a member of svc_api
        -- (the schema's owner), every copy of an api view on this node refuses to be read until it
        -- is made again (app_private.current_shard_views): the generation advances, holding the
        -- shard views' advisory lock shared until the change ends, so that a refresh
        -- (app_private.shard_views_create) waits for it. The copies' own DDL changes nothing. An
        -- event trigger runs its function as whoever makes the change, a superuser included: the
        -- function is this bootstrap's, which no role of the service may change, and it runs no
        -- function of theirs.
        create schema if not exists svc_bootstrap;
        revoke all on schema svc_bootstrap from public;
        if not (select r.rolsuper from pg_namespace n join pg_roles r on r.oid = n.nspowner where n.nspname = 'svc_bootstrap') then
          raise exception 'schema svc_bootstrap belongs to a role that is not a superuser: drop it, then run the bootstrap again';
        end if;
        create or replace function svc_bootstrap.shard_views_stale() returns event_trigger
            language plpgsql
            set search_path to 'pg_catalog', 'pg_temp'
            as $f$
        begin
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
          if to_regclass('app_private.shard_views_generation') is not null then
            perform pg_advisory_xact_lock_shared(2026, 37);
            perform nextval('app_private.shard_views_generation');
          end if;
        end
        $f$;
        revoke all on function svc_bootstrap.shard_views_stale() from public;
        drop event trigger if exists shard_views_stale;
        drop event trigger if exists shard_views_dropped;
        create event trigger shard_views_stale on ddl_command_end execute function svc_bootstrap.shard_views_stale();
        create event trigger shard_views_dropped on sql_drop execute function svc_bootstrap.shard_views_stale();
      end
      $b$ $w$)
   where not success;
  if v_failed is not null then
    raise exception 'preparing the workers failed: %', v_failed;
  end if;
end
$p$;
revoke all on function svc_bootstrap.prepare_workers() from public;
commit;

select svc_bootstrap.prepare_workers();

-- Citus copies a reference table to a node that lacks it as its own extension's owner, a superuser,
-- whoever asks (the rebalance's first task, or a later create_distributed_table), and the copy runs,
-- for each row, the table's check constraints, its generated columns and its columns' domains'
-- constraints (its triggers and indexes come after the rows). So these may call only functions a
-- superuser owns: checked when a node is added and when a rebalance starts.
create or replace function svc_bootstrap.reference_tables_trusted() returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $f$
declare
  v_untrusted text;
begin
  with ref as (
    select p.logicalrelid as rel from pg_dist_partition p where p.partmethod = 'n' and p.repmodel = 't'
  ), evaluated as (
    select 'pg_constraint'::regclass as classid, c.oid as objid, format('%s, check %s', r.rel::regclass, c.conname) as what
      from ref r join pg_constraint c on c.conrelid = r.rel where c.contype = 'c'
    union all
    select 'pg_attrdef'::regclass, d.oid, format('%s, generated column %s', r.rel::regclass, a.attname)
      from ref r join pg_attrdef d on d.adrelid = r.rel
      join pg_attribute a on a.attrelid = r.rel and a.attnum = d.adnum where a.attgenerated <> ''
    union all
    select 'pg_constraint'::regclass, c.oid, format('%s, column %s, domain %s, check %s', r.rel::regclass, a.attname, a.atttypid::regtype, c.conname)
      from ref r join pg_attribute a on a.attrelid = r.rel and a.attnum > 0 and not a.attisdropped
      join pg_constraint c on c.contypid = a.atttypid
  ), called as (
    select e.what, d.refobjid as fn from evaluated e
      join pg_depend d on d.classid = e.classid and d.objid = e.objid and d.refclassid = 'pg_proc'::regclass
    union all
    select e.what, o.oprcode::oid from evaluated e
      join pg_depend d on d.classid = e.classid and d.objid = e.objid and d.refclassid = 'pg_operator'::regclass
      join pg_operator o on o.oid = d.refobjid
  )
  select string_agg(distinct format('%s calls %s', c.what, c.fn::regprocedure), '; ') into v_untrusted
    from called c join pg_proc p on p.oid = c.fn join pg_roles o on o.oid = p.proowner
   where not o.rolsuper;
  if v_untrusted is not null then
    raise exception 'a reference table runs a function no superuser owns when Citus copies it, as a superuser: %', v_untrusted
      using errcode = '42501', hint = 'a reference table''s checks, generated columns and domains call only functions a superuser owns';
  end if;
end
$f$;
revoke all on function svc_bootstrap.reference_tables_trusted() from public;

-- Growing the cluster: the node (whose server ran db/bootstrap.sql and holds this database, owned by
-- svc_schema, with the citus extension) added and given what only a superuser may make there. Then
-- the deploy login prepares it and rebalances onto it: call app_private.citus_add_worker(host, port).
-- As a superuser, outside a transaction block: call svc_bootstrap.add_node('host', 5432);
create or replace procedure svc_bootstrap.add_node(in p_host text, in p_port integer)
    language plpgsql
    as $p$
begin
  -- (A procedure that commits takes no SET clause: the search_path is set for each transaction.)
  perform pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
  perform svc_bootstrap.reference_tables_trusted();
  if not exists (select from pg_dist_node where nodename = p_host and nodeport = p_port) then
    perform citus_add_node(p_host, p_port);
  elsif not exists (select from pg_dist_node where nodename = p_host and nodeport = p_port and isactive) then
    perform citus_activate_node(p_host, p_port);
  end if;
  commit;
  perform pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
  perform svc_bootstrap.prepare_workers();
end
$p$;
revoke all on procedure svc_bootstrap.add_node(text, integer) from public;

-- The rebalancer moves an organization's rows as the role that starts it: the schema's owner, under
-- forced row security, would move none, and a superuser would run the tables' checks and triggers,
-- which a role of the service may change. svc_mover (db/bootstrap.sql) starts it, in a function the
-- deploy login may call (app_private.citus_add_worker). It does nothing else.
create or replace function svc_bootstrap.rebalance_start(p_shard_transfer_mode text) returns void
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $p$
begin
  perform svc_bootstrap.reference_tables_trusted();
  execute format('select citus_rebalance_start(shard_transfer_mode => %L)', p_shard_transfer_mode);
end
$p$;
alter function svc_bootstrap.rebalance_start(text) owner to svc_mover;
revoke all on function svc_bootstrap.rebalance_start(text) from public;
grant usage on schema svc_bootstrap to svc_schema, svc_mover;
grant execute on function svc_bootstrap.reference_tables_trusted() to svc_mover;
grant execute on function svc_bootstrap.rebalance_start(text) to svc_schema;
