-- migrate:up

/** One preparation of the workers at a time: the worker process's citus_prepare job and a deploy
 * login's citus_add_worker prepared the same nodes at once while a node was added under load, and
 * their grants collided on the workers' catalogs ("tuple concurrently updated"). A second waits for
 * the first, then finds its work done. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

create or replace procedure app_private.citus_prepare_workers()
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  perform pg_advisory_xact_lock(hashtextextended('svc.citus_prepare_workers', 0));
  perform app_private.citus_context_keys();
  perform app_private.citus_node_grants();
  -- The column grants a shard needs beyond its table's (the defaults' columns, for svc_api's inserts),
  -- which a shard made anew lacks.
  call app_private.citus_shard_privileges();
  -- Before the copies are made: a grant on a worker advances its generation (the bootstrap's event
  -- triggers).
  perform app_private.citus_relay_privileges();
  call app_private.citus_copy_privileges();
end
$$;

create or replace function app_private.citus_prepare_if_needed() RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
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
  -- After a preparation under way (citus_add_worker's, before its rebalance): then the rebalance
  -- it started is seen below.
  perform pg_advisory_xact_lock(hashtextextended('svc.citus_prepare_workers', 0));
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


-- migrate:down

create or replace procedure app_private.citus_prepare_workers()
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

create or replace function app_private.citus_prepare_if_needed() RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
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

