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
-- What the schema holds is dblink's alone (a schema the service owned before may hold a function of
-- its own under dblink's name).
do $$
begin
  if (select e.extnamespace <> 'svc_dblink'::regnamespace from pg_extension e where e.extname = 'dblink') then
    raise exception 'the dblink extension is not in schema svc_dblink: drop it, then run the bootstrap again';
  end if;
  if exists (select from pg_proc p where p.pronamespace = 'svc_dblink'::regnamespace
               and not exists (select from pg_depend d join pg_extension e on e.oid = d.refobjid
                                where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e' and e.extname = 'dblink')) then
    raise exception 'schema svc_dblink holds a function that is not dblink''s: drop it, then run the bootstrap again';
  end if;
end
$$;
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
        -- Roles and a parameter's grants are the server's, shared by its databases: each changed
        -- only when it differs, so that two databases prepared at once do not collide on them
        -- ("tuple concurrently updated").
        -- As db/bootstrap.sql on every node: a node Citus added carries the roles, not this grant.
        if not has_parameter_privilege('svc_schema', 'svc.gate_organization', 'set') then
          grant set on parameter "svc.gate_organization" to svc_schema;
        end if;
        -- Citus's connections to this node log in as svc_schema for a migration's statements, and
        -- as svc_mover for a rebalance's (the coordinator's change of a role made outside its
        -- database does not reach the workers).
        if exists (select from pg_authid where rolname = 'svc_schema' and (not rolcanlogin or rolpassword is not null)) then
          alter role svc_schema login password null;
        end if;
        if exists (select from pg_authid where rolname = 'svc_mover' and (not rolcanlogin or rolpassword is not null)) then
          alter role svc_mover login password null;
        end if;
        -- A worker's sessions of these roles are Citus's, for the coordinator's sessions, and their
        -- statements are text with every argument written out: a client's secret, a token's
        -- digest, every organization's data. Untracked, pg_stat_activity shows no session of
        -- another its statement; only a superuser may turn it on again (PGC_SUSET).
        if not exists (select from pg_db_role_setting s where s.setrole = 'svc_runtime'::regrole and s.setdatabase = 0 and 'track_activities=off' = any (s.setconfig)) then
          alter role svc_runtime set track_activities = off;
        end if;
        if not exists (select from pg_db_role_setting s where s.setrole = 'svc_worker'::regrole and s.setdatabase = 0 and 'track_activities=off' = any (s.setconfig)) then
          alter role svc_worker set track_activities = off;
        end if;
        if not exists (select from pg_db_role_setting s where s.setrole = 'svc_admin'::regrole and s.setdatabase = 0 and 'track_activities=off' = any (s.setconfig)) then
          alter role svc_admin set track_activities = off;
        end if;
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
        -- A shard made on this node (a move's, a copy's) gets at once what its table's grants do not
        -- carry: the statements Citus sends a shard name the columns that have defaults, so svc_api
        -- inserts into those on the shard (app_private.citus_shard_privileges grants the same on
        -- every shard). Without it a moved organization's creates were refused ("permission denied
        -- for table projects_102195") until the workers were prepared again.
        create or replace function svc_bootstrap.shard_privileges() returns event_trigger
            language plpgsql
            set search_path to 'pg_catalog', 'pg_temp'
            as $f$
        declare
          c record;
          v_columns text;
          v_making text := current_setting('svc.making_shard_views', true);
        begin
          for c in
            select d.objid::regclass as shard, s.logicalrelid as rel
              from pg_event_trigger_ddl_commands() d
              join pg_dist_shard s on s.shardid = (regexp_match(d.object_identity, '_(\d{1,18})$'))[1]::bigint
              join pg_dist_partition p on p.logicalrelid = s.logicalrelid and p.partmethod = 'h'
             where d.command_tag = 'CREATE TABLE' and d.object_type = 'table'
               and d.object_identity = shard_name(s.logicalrelid, s.shardid)
          loop
            select string_agg(quote_ident(a.attname), ', ' order by a.attnum) into v_columns
              from pg_attribute a
             where a.attrelid = c.rel and a.attnum > 0 and not a.attisdropped and (a.atthasdef or a.attidentity <> '')
               and has_table_privilege('svc_api', c.rel, 'insert') is false
               and exists (select from pg_attribute x where x.attrelid = c.rel and has_column_privilege('svc_api', c.rel, x.attnum, 'insert'))
               and not has_column_privilege('svc_api', c.rel, a.attnum, 'insert');
            if v_columns is not null then
              -- A shard's own grant leaves the api views' copies current (svc_bootstrap.shard_views_stale).
              perform set_config('svc.making_shard_views', 'on', true);
              execute format('grant insert (%s) on %s to svc_api', v_columns, c.shard);
              perform set_config('svc.making_shard_views', coalesce(v_making, ''), true);
            end if;
          end loop;
        end
        $f$;
        revoke all on function svc_bootstrap.shard_privileges() from public;
        drop event trigger if exists shard_privileges;
        create event trigger shard_privileges on ddl_command_end when tag in ('CREATE TABLE') execute function svc_bootstrap.shard_privileges();
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
-- whoever asks (a rebalance's first task, create_distributed_table, a shard's copy; it lets no other
-- role write the placement's metadata), and the copy runs, for each row, the table's checks, its
-- generated columns and its columns' domains' constraints (its indexes and triggers come after the
-- rows). So the reference tables are copied once, when a superuser adds a node (add_node, below),
-- after this check, with every reference table locked against DDL: what those run may call only
-- immutable functions built into PostgreSQL (a superuser's function such as Citus's
-- alter_role_if_exists would run any statement it is given). A rebalance starts only where every
-- node has them, so that it copies none.
create or replace function svc_bootstrap.reference_tables_trusted() returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $f$
declare
  v_untrusted text;
begin
  -- Everything a copied row is checked by, followed to the end: the tables' checks and generated
  -- columns, their columns' types, and from each check and type what it names (a type a check
  -- casts to, a domain's base type and its own checks, an array's element, a composite's
  -- attributes, a range's subtype), until nothing new is found.
  with recursive ref as (
    select p.logicalrelid as rel from pg_dist_partition p where p.partmethod = 'n' and p.repmodel = 't'
  ), reach(classid, objid, what) as (
    select 'pg_constraint'::regclass, c.oid, format('%s, check %s', r.rel::regclass, c.conname)
      from ref r join pg_constraint c on c.conrelid = r.rel where c.contype = 'c'
    union
    select 'pg_attrdef'::regclass, d.oid, format('%s, generated column %s', r.rel::regclass, a.attname)
      from ref r join pg_attrdef d on d.adrelid = r.rel
      join pg_attribute a on a.attrelid = r.rel and a.attnum = d.adnum where a.attgenerated <> ''
    union
    select 'pg_type'::regclass, a.atttypid, format('%s.%s', r.rel::regclass, a.attname)
      from ref r join pg_attribute a on a.attrelid = r.rel and a.attnum > 0 and not a.attisdropped
    union
    select x.classid, x.objid, x.what from reach h
      cross join lateral (
        -- what a check or a generated column names
        select 'pg_type'::regclass, d.refobjid, h.what from pg_depend d
         where h.classid <> 'pg_type'::regclass and d.classid = h.classid and d.objid = h.objid and d.refclassid = 'pg_type'::regclass
        -- what a type is made of
        union all
        select 'pg_constraint'::regclass, c.oid, format('domain %s, check %s', c.contypid::regtype, c.conname)
          from pg_constraint c where h.classid = 'pg_type'::regclass and c.contypid = h.objid
        union all
        select 'pg_type'::regclass, t.typbasetype, h.what from pg_type t where h.classid = 'pg_type'::regclass and t.oid = h.objid and t.typbasetype <> 0
        union all
        select 'pg_type'::regclass, t.typelem, h.what from pg_type t where h.classid = 'pg_type'::regclass and t.oid = h.objid and t.typelem <> 0
        union all
        select 'pg_type'::regclass, a.atttypid, h.what from pg_type t join pg_attribute a on a.attrelid = t.typrelid and a.attnum > 0
         where h.classid = 'pg_type'::regclass and t.oid = h.objid and t.typrelid <> 0
        union all
        select 'pg_type'::regclass, g.rngsubtype, h.what from pg_range g where h.classid = 'pg_type'::regclass and g.rngtypid = h.objid
      ) x(classid, objid, what)
  ), called as (
    select h.what, d.refobjid as fn from reach h
      join pg_depend d on d.classid = h.classid and d.objid = h.objid and d.refclassid = 'pg_proc'::regclass
     where h.classid <> 'pg_type'::regclass
    union all
    select h.what, o.oprcode::oid from reach h
      join pg_depend d on d.classid = h.classid and d.objid = h.objid and d.refclassid = 'pg_operator'::regclass
      join pg_operator o on o.oid = d.refobjid
     where h.classid <> 'pg_type'::regclass
    union all
    -- a range's canonical function runs on each value
    select h.what, g.rngcanonical::oid from reach h join pg_range g on g.rngtypid = h.objid
     where h.classid = 'pg_type'::regclass and g.rngcanonical <> 0
  )
  select string_agg(distinct format('%s calls %s', c.what, c.fn::regprocedure), '; ') into v_untrusted
    from called c join pg_proc p on p.oid = c.fn
   where not (p.pronamespace = 'pg_catalog'::regnamespace and p.prolang = (select l.oid from pg_language l where l.lanname = 'internal')
              and p.provolatile = 'i'
              and not exists (select from pg_depend x where x.classid = 'pg_proc'::regclass and x.objid = p.oid and x.deptype = 'e'));
  if v_untrusted is not null then
    raise exception 'a reference table runs a function not built into PostgreSQL, or not immutable, when Citus copies it as a superuser: %', v_untrusted
      using errcode = '42501', hint = 'a reference table''s checks, generated columns and domains call only immutable functions built into PostgreSQL';
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
declare
  v_table regclass;
  v_failed text;
begin
  -- (A procedure that commits takes no SET clause: the search_path is set for each transaction.)
  perform pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
  -- Refused before the node is added, and checked again below under the lock.
  perform svc_bootstrap.reference_tables_trusted();
  if not exists (select from pg_dist_node where nodename = p_host and nodeport = p_port) then
    perform citus_add_node(p_host, p_port);
  elsif not exists (select from pg_dist_node where nodename = p_host and nodeport = p_port and isactive) then
    perform citus_activate_node(p_host, p_port);
  end if;
  commit;
  perform pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
  perform svc_bootstrap.prepare_workers();
  commit;
  perform pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
  -- Its reference tables now, checked and locked against DDL (above), before anything else asks
  -- Citus to copy them. If that fails, the node goes again: a node without them would have them
  -- copied by the next call of Citus's that wants them, as a superuser.
  begin
    for v_table in select p.logicalrelid::regclass from pg_dist_partition p where p.partmethod = 'n' and p.repmodel = 't' order by 1 loop
      execute format('lock table %s in share mode', v_table);
    end loop;
    perform svc_bootstrap.reference_tables_trusted();
    perform replicate_reference_tables('block_writes');
  exception when others then
    v_failed := sqlerrm;
  end;
  if v_failed is not null then
    perform citus_remove_node(p_host, p_port);
    commit;
    raise exception '%:% was not added: its reference tables were not copied: %', p_host, p_port, v_failed using errcode = '55000';
  end if;
end
$p$;
revoke all on procedure svc_bootstrap.add_node(text, integer) from public;

-- Shrinking the cluster, in three calls so that a superuser runs no code of ours: a superuser marks
-- the node to hold no shard group (the first call of this procedure), the deploy login moves its
-- groups off (call app_private.citus_drain_worker(host, port): a rebalance by svc_mover), and the
-- superuser calls this again, which removes it once it holds none.
-- As a superuser, outside a transaction block: call svc_bootstrap.remove_node('host', 5432);
create or replace procedure svc_bootstrap.remove_node(in p_host text, in p_port integer)
    language plpgsql
    as $p$
declare
  v_groups integer;
begin
  perform pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
  if not exists (select from pg_dist_node where nodename = p_host and nodeport = p_port and groupid <> 0) then
    raise exception '%:% is not a worker of this cluster', p_host, p_port using errcode = '22023';
  end if;
  select count(distinct s.shardid) into v_groups
    from pg_dist_node n join pg_dist_placement pl on pl.groupid = n.groupid
    join pg_dist_shard s on s.shardid = pl.shardid join pg_dist_partition d on d.logicalrelid = s.logicalrelid
   where n.nodename = p_host and n.nodeport = p_port and d.partmethod = 'h'
     and s.logicalrelid = 'app.organizations'::regclass;
  if v_groups > 0 then
    if (select shouldhaveshards from pg_dist_node where nodename = p_host and nodeport = p_port) then
      perform citus_set_node_property(p_host, p_port, 'shouldhaveshards', false);
    end if;
    commit;
    raise exception '%:% holds % shard group(s), and gets no new one: the deploy login moves them off (call app_private.citus_drain_worker(%L, %s)), then call this again',
      p_host, p_port, v_groups, p_host, p_port using errcode = '55000';
  end if;
  -- The shards the moves left behind (Citus drops them later), then the node.
  call citus_cleanup_orphaned_resources();
  commit;
  perform pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
  perform citus_remove_node(p_host, p_port);
end
$p$;
revoke all on procedure svc_bootstrap.remove_node(text, integer) from public;

-- The rebalancer moves an organization's rows as the role that starts it: the schema's owner, under
-- forced row security, would move none, and a superuser would run the tables' checks and triggers,
-- which a role of the service may change. svc_mover (db/bootstrap.sql) starts it, in a function the
-- deploy login may call (app_private.citus_add_worker, citus_drain_worker), after placing the
-- reference tables where they are missing. It does nothing else.
create or replace function svc_bootstrap.rebalance_start(p_shard_transfer_mode text) returns void
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $p$
begin
  -- Started by another role, the moved groups would arrive empty (row security): refuse instead.
  if current_user <> 'svc_mover' then
    raise exception 'svc_bootstrap.rebalance_start runs as svc_mover, not %', current_user using errcode = '42501';
  end if;
  -- The one transfer that works under forced row security (app_private.citus_add_worker says why).
  if p_shard_transfer_mode is distinct from 'block_writes' then
    raise exception 'shard transfer mode %: only block_writes moves tables that force row security', p_shard_transfer_mode using errcode = '22023';
  end if;
  -- The reference tables are on every node already (svc_bootstrap.add_node copies them): a
  -- rebalance would copy them as a superuser.
  if exists (select from pg_dist_node n where n.isactive and n.noderole = 'primary'
               and exists (select from pg_dist_partition d join pg_dist_shard s on s.logicalrelid = d.logicalrelid
                            where d.partmethod = 'n' and d.repmodel = 't'
                              and not exists (select from pg_dist_placement p where p.shardid = s.shardid and p.groupid = n.groupid))) then
    raise exception 'a node lacks the reference tables: a superuser copies them (call svc_bootstrap.add_node(host, port) again)' using errcode = '55000';
  end if;
  execute format('select citus_rebalance_start(shard_transfer_mode => %L)', p_shard_transfer_mode);
end
$p$;
alter function svc_bootstrap.rebalance_start(text) owner to svc_mover;
revoke all on function svc_bootstrap.rebalance_start(text) from public;
grant usage on schema svc_bootstrap to svc_schema, svc_mover;
grant execute on function svc_bootstrap.rebalance_start(text) to svc_schema;
