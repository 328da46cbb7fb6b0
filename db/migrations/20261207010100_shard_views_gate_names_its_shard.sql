-- migrate:up

/** A copy of an api view on a Citus worker (schema api_shard_<shard>) reads its group's shards as
 * local tables, so it may be read only on the node that holds the group: after a move the old node
 * keeps its copies, and its shards until Citus drops them, and a read sent there before the API has
 * read the new placement would see rows the group's node has changed since. The API sends a
 * request's one-statement reads as they are to its organization's worker, reading these copies
 * (src/db/cluster.ts, shardStatements), so the gate in each copy now names its shard and refuses
 * (SV500 SHARD_VIEWS_ELSEWHERE) on a node that does not hold it, as it refuses a stale copy; the API
 * then sends the read again through api.in_organization, which Citus delegates to the group's node.
 * On one server no copy exists: only the functions change. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

-- The copies go first (each calls the old gate), with the workers' preparation held off until this
-- commits (the worker's citus_prepare job takes this lock, then makes them again with the new gate;
-- so does citus/migrations 20261207010200).
select pg_advisory_xact_lock(hashtextextended('svc.citus_prepare_workers', 0));
select app_private.citus_drop_shard_views();
drop function app_private.shard_views_current(bigint);

create function app_private.shard_views_current(p_generation bigint, p_shard bigint) returns boolean
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if pg_sequence_last_value('app_private.shard_views_generation'::regclass) is distinct from p_generation then
    perform app_private.raise('SV500', 'SHARD_VIEWS_STALE', 'this copy of an api view is older than the view');
  end if;
  if not exists (select from pg_dist_placement p join pg_dist_local_group l on l.groupid = p.groupid where p.shardid = p_shard) then
    perform app_private.raise('SV500', 'SHARD_VIEWS_ELSEWHERE', 'this copy of an api view reads a shard group that this node does not hold');
  end if;
  return true;
end
$$;

grant create on schema app_private to svc_api;
alter function app_private.shard_views_current(p_generation bigint, p_shard bigint) owner to svc_api;
revoke create on schema app_private from svc_api;

comment on function app_private.shard_views_current(p_generation bigint, p_shard bigint) is 'The gate in every copy of an api view on a Citus worker (schema api_shard_<shard>), evaluated once per statement: it raises SV500 SHARD_VIEWS_STALE unless the node''s shard-view generation is still the one the copy was made at, and SV500 SHARD_VIEWS_ELSEWHERE unless the node holds the copy''s shard group, so a copy older than its view, or one left on a node its group moved from, is never read, whoever names it; the API then sends its statement through api.in_organization, which reads the view function where the group is. It runs as svc_api, which is granted the generation sequence and svc_runtime is not; it reads no tenant row.';

revoke all on function app_private.shard_views_current(p_generation bigint, p_shard bigint) from public;
grant execute on function app_private.shard_views_current(p_generation bigint, p_shard bigint) to svc_runtime;
grant execute on function app_private.shard_views_current(p_generation bigint, p_shard bigint) to svc_owner;
grant execute on function app_private.shard_views_current(p_generation bigint, p_shard bigint) to svc_gate;

create or replace function app_private.shard_views_create(p_organizations_shard text) RETURNS void
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
  -- Each copy is given to svc_api, the api views' owner, which PostgreSQL allows a role that is not a
  -- superuser only when the new owner may create in the schema: while the copies are made.
  execute format('grant create on schema %I to svc_api', v_schema);
  for v in
    select c.oid, c.relname, c.reloptions, c.relacl, c.relowner
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = 'api' and c.relkind = 'v'
     order by c.relname
  loop
    execute format('create view %I.%I%s as select * from (%s) v where app_private.shard_views_current(%s, %s)', v_schema, v.relname,
      case when v.reloptions is null then '' else format(' with (%s)', array_to_string(v.reloptions, ', ')) end,
      app_private.view_on_shard_group(v.oid, v_shard), v_generation, v_shard);
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

-- migrate:down

select pg_advisory_xact_lock(hashtextextended('svc.citus_prepare_workers', 0));
select app_private.citus_drop_shard_views();
drop function app_private.shard_views_current(bigint, bigint);

create function app_private.shard_views_current(p_generation bigint) RETURNS boolean
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

grant create on schema app_private to svc_api;
alter function app_private.shard_views_current(p_generation bigint) owner to svc_api;
revoke create on schema app_private from svc_api;

comment on function app_private.shard_views_current(p_generation bigint) is 'The gate in every copy of an api view on a Citus worker (schema api_shard_<shard>), evaluated once per statement: it raises SV500 SHARD_VIEWS_STALE unless the node''s shard-view generation is still the one the copy was made at, so a copy older than its view is never read, whoever names it; api.in_organization then reads the view function instead. It runs as svc_api, which is granted the generation sequence and svc_runtime is not; it reads no tenant row.';

revoke all on function app_private.shard_views_current(p_generation bigint) from public;
grant execute on function app_private.shard_views_current(p_generation bigint) to svc_runtime;
grant execute on function app_private.shard_views_current(p_generation bigint) to svc_owner;
grant execute on function app_private.shard_views_current(p_generation bigint) to svc_gate;

create or replace function app_private.shard_views_create(p_organizations_shard text) RETURNS void
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

