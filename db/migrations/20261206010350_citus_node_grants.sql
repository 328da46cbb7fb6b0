-- migrate:up

/** On Citus, what svc_gate and svc_owner need of each node's own objects, which Citus does not
 * propagate: the node's context key (a table of each node's own, read by app_private.context_ok as
 * svc_gate inside every delegated call) and the sequences of the distributed tables' serial columns
 * (each worker has its own, read by svc_owner's triggers when they insert there). Granted on every
 * worker by app_private.citus_node_grants(), which app_private.citus_prepare_workers now calls after
 * making a worker's context key, so a worker added later gets them too. On one server it does nothing. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

create function app_private.citus_node_grants() returns void
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
          execute format('grant usage on sequence %s to svc_owner', s);
        end loop;
      end
      $g$ $w$)
   where not success;
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_PRIVILEGES_NOT_COPIED', format('granting the workers'' own objects failed: %s', v_failed));
  end if;
end
$$;
comment on function app_private.citus_node_grants() is
  'On Citus: svc_gate''s read of each worker''s context key, and svc_owner''s use of each worker''s sequences (objects of each node''s own, which Citus does not propagate).';
revoke all on function app_private.citus_node_grants() from public;

create or replace procedure app_private.citus_prepare_workers()
  language plpgsql
  set search_path = pg_catalog, pg_temp
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

-- migrate:down
set local lock_timeout = '3s';
set local statement_timeout = '60s';
create or replace procedure app_private.citus_prepare_workers()
  language plpgsql
  set search_path = pg_catalog, pg_temp
as $$
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
drop function app_private.citus_node_grants();
