-- migrate:up

/** Issue 37: a worker's generation advanced only on a superuser's DDL (nextval needs the sequence's
 * privilege), so a DBA who changes an api view as a member of svc_api, without being a superuser,
 * left the old copies readable until a refresh. The generation now advances for whoever may change
 * the api views (a superuser, or a member of svc_api) through a definer that does only that. Other
 * roles' DDL (the runtime role's temporary functions, a BI login's) still advances nothing: they
 * cannot change an api view, and letting them would let them send every list to the view functions.
 * Runs on the workers, where the event triggers are (20261205003100). */
create function app_private.shard_views_advance() returns void
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  if to_regclass('app_private.shard_views_generation') is not null then
    -- Held until this change ends: a refresh waits for it (shard_views_create).
    perform pg_advisory_xact_lock_shared(2026, 37);
    perform nextval('app_private.shard_views_generation');
  end if;
end
$$;
revoke execute on function app_private.shard_views_advance() from public;
grant execute on function app_private.shard_views_advance() to svc_api;

create or replace function app_private.tg_shard_views_stale() returns event_trigger
language plpgsql
set search_path = pg_catalog, pg_temp
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

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'restore a backup taken before 20261205003380'); end $$;
