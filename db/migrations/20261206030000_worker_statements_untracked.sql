-- migrate:up

/** On a Citus worker, no session sees the text of another's statement: the runtime, worker and
 * admin logins' sessions there are Citus's connections for the coordinator's sessions, and a
 * delegated call reaches its worker as text with every argument written out (a client's secret to
 * api.authenticate_client and api.access_token_record, a token's SHA-256 to api.begin_request,
 * every organization's request arguments). pg_stat_activity shows a session's text to every
 * session of the same role, so a runtime login on a worker read them all and opened another
 * client's request. With track_activities off for these roles on the workers (set by
 * app_private.citus_node_grants, which a node's preparation runs), their text, state and start of
 * statement are not recorded there; wait events, locks and pg_stat_statements (whose texts are
 * normalized) still are. The coordinator keeps tracking them: there the API's statements carry
 * their values as bound parameters, and the pool watchdog reads their state. On one server nothing
 * changes. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

create or replace function app_private.citus_node_grants() returns void
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
$$;
comment on function app_private.citus_node_grants() is
  'On Citus: each worker''s own objects and settings (which Citus does not propagate): svc_gate''s read of its context key, its sequences for svc_owner, svc_worker and svc_admin, the api views'' copies'' generation for svc_relay, and the service logins'' statements untracked (track_activities off).';
revoke all on function app_private.citus_node_grants() from public;

-- migrate:down
set local lock_timeout = '3s';
set local statement_timeout = '60s';

create or replace function app_private.citus_node_grants() returns void
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
          execute format('grant usage on sequence %s to svc_owner, svc_worker, svc_admin', s);
        end loop;
        if to_regclass('app_private.shard_views_generation') is not null and to_regrole('svc_relay') is not null then
          grant select on sequence app_private.shard_views_generation to svc_relay;
        end if;
      end
      $g$ $w$)
   where not success;
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_PRIVILEGES_NOT_COPIED', format('granting the workers'' own objects failed: %s', v_failed));
  end if;
end
$$;
comment on function app_private.citus_node_grants() is
  'On Citus: each worker''s own objects (which Citus does not propagate): svc_gate''s read of its context key, its sequences for svc_owner, svc_worker and svc_admin, the api views'' copies'' generation for svc_relay.';
revoke all on function app_private.citus_node_grants() from public;
