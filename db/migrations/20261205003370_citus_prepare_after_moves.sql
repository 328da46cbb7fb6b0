-- migrate:up

/** Issue 37: a shard group moved by hand (citus_move_shard_placement, a rebalance started without
 * app_private.citus_add_worker) arrives on its worker without the copies of the api views and
 * without the column grants of its shards: its organizations read the view functions (correct,
 * slower) and every insert of theirs is refused, until app_private.citus_prepare_workers() runs.
 * The worker process now checks once a minute (the `citus_prepare` cron task, src/worker/index.ts)
 * and prepares the workers when a node holds a shard group without current copies, once no
 * rebalance is running. Without Citus the check answers 0 at once. */

/** On a worker: the names of the api views whose copies over shard group p_shard (its
 * app.organizations shard) are here and current (made at the node's generation), or null. */
create function app_private.current_shard_views(p_shard bigint) returns text
language plpgsql stable
set search_path = pg_catalog, pg_temp
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
revoke execute on function app_private.current_shard_views(bigint) from public;

/** On a worker: how many of the shard groups it holds have no current copies of the api views
 * (none made, or made before the node's generation moved). */
create function app_private.shard_groups_unprepared() returns integer
language plpgsql stable
set search_path = pg_catalog, pg_temp
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
revoke execute on function app_private.shard_groups_unprepared() from public;

/** On the coordinator: the shard groups without current copies, summed over the workers, and when
 * there are any and no rebalance is running, app_private.citus_prepare_workers(). Answers that
 * number (0: nothing to do; -1: a rebalance is running, the next check will see). */
create function app_private.citus_prepare_if_needed() returns integer
language plpgsql volatile
set search_path = pg_catalog, pg_temp
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
revoke execute on function app_private.citus_prepare_if_needed() from public;

-- migrate:down
drop function app_private.citus_prepare_if_needed();
drop function app_private.shard_groups_unprepared();
drop function app_private.current_shard_views(bigint);
