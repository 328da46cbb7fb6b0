-- migrate:up

/** Roles
 * svc_runtime: the only role the HTTP service logs in as. It owns nothing, cannot bypass
 * row-level security and is granted each surface object explicitly.
 * Roles are cluster-wide, so a second database in the same cluster (tests) reuses it.
 */
do $$
begin
  if not exists (select from pg_roles where rolname = 'svc_runtime') then
    create role svc_runtime login nosuperuser nobypassrls nocreatedb nocreaterole noinherit;
  end if;
end
$$;

/** Schemas
 * app          tenant tables, RLS enabled and forced; never granted wholesale.
 * app_private  helpers and non-tenant state (signing keys, rate-limit buckets); security definer.
 * api          the surface the server calls: security_invoker views and command functions.
 * control      the control plane (svc-admin, or a DBA at psql); not granted to svc_runtime.
 */
create schema app;
create schema app_private;
create schema api;
create schema control;

revoke all on schema public from public;
grant usage on schema app, api to svc_runtime;
grant usage on schema app_private to svc_runtime;

-- Functions are not executable by PUBLIC unless granted: every grant below is explicit.
alter default privileges revoke execute on functions from public;

/** Identifiers: `<prefix>_<12 hex ms timestamp><16 hex random>`; time-ordered, so id order is creation order. */
create function app_private.new_id(prefix text) returns text
language sql volatile parallel safe
set search_path = pg_catalog
as $$
  select prefix || '_' || lpad(to_hex((extract(epoch from clock_timestamp()) * 1000)::bigint), 12, '0')
         || substr(replace(gen_random_uuid()::text, '-', ''), 1, 16)
$$;
grant execute on function app_private.new_id(text) to svc_runtime;

/** Request context: set once per transaction by api.begin_request, read by every policy. */
create function app.current_organization_id() returns text
language sql stable parallel safe
set search_path = pg_catalog
as $$ select nullif(current_setting('svc.organization_id', true), '') $$;

create function app.current_client_id() returns text
language sql stable parallel safe
set search_path = pg_catalog
as $$ select nullif(current_setting('svc.client_id', true), '') $$;

create function app.current_roles() returns text[]
language sql stable parallel safe
set search_path = pg_catalog
as $$ select coalesce(string_to_array(nullif(current_setting('svc.roles', true), ''), ','), '{}'::text[]) $$;

create function app.has_role(role text) returns boolean
language sql stable parallel safe
set search_path = pg_catalog
as $$ select role = any (app.current_roles()) $$;

create function app.has_any_role(roles text[]) returns boolean
language sql stable parallel safe
set search_path = pg_catalog
as $$ select roles && app.current_roles() $$;

grant execute on function app.current_organization_id(), app.current_client_id(), app.current_roles(),
  app.has_role(text), app.has_any_role(text[]) to svc_runtime;

/** Raises a registered error (see db/README.md); the server maps the SQLSTATE to problem+json. */
create function app_private.raise(sqlstate text, code text, detail text default null, pointer text default null)
returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  raise exception using errcode = sqlstate, message = code, detail = coalesce(detail, ''), hint = coalesce(pointer, '');
end
$$;
grant execute on function app_private.raise(text, text, text, text) to svc_runtime;

/** Trigger helpers shared by every table with updated_at and version. */
create function app_private.tg__touch_version() returns trigger
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  new.updated_at := now();
  new.version := old.version + 1;
  return new;
end
$$;

-- migrate:down
drop schema control cascade;
drop schema api cascade;
drop schema app_private cascade;
drop schema app cascade;
