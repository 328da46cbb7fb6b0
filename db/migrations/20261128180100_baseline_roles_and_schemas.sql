-- migrate:up

/** Baseline (issue 38), area 1 of 15. Roles and schemas: the roles the service, the surface and BI logins act as, the schemas and who may use them.
 * The current definitions that migrations 20261122000100 to 20261205003400 built (git history before
 * the baseline), as pg_dump writes them; db/README.md says how they were made and compared. */
SET LOCAL check_function_bodies = false;
SET LOCAL client_min_messages = warning;
SELECT pg_catalog.set_config('search_path', '', true);

do $$
begin
  -- svc_runtime: the only role the HTTP service logs in as; it owns nothing and cannot bypass row-level security.
  if not exists (select from pg_roles where rolname = 'svc_runtime') then
    create role svc_runtime login nosuperuser nobypassrls nocreatedb nocreaterole noinherit;
  end if;
  -- svc_api: owner of the surface (api views and command functions), subject to every row policy; never logs in.
  if not exists (select from pg_roles where rolname = 'svc_api') then
    create role svc_api nologin nosuperuser nobypassrls nocreatedb nocreaterole noinherit;
  end if;
  -- svc_reporting: what each organization's BI login inherits (reporting views only).
  if not exists (select from pg_roles where rolname = 'svc_reporting') then
    create role svc_reporting nologin nosuperuser nobypassrls nocreatedb nocreaterole;
  end if;
  -- The worker checks visibility as svc_runtime: the owner connection must be able to SET ROLE.
  if not pg_has_role(current_user, 'svc_runtime', 'member') then
    execute format('grant svc_runtime to %I', current_user);
  end if;
end
$$;

-- schema api

CREATE SCHEMA api;

-- schema app

CREATE SCHEMA app;

-- schema app_private

CREATE SCHEMA app_private;

-- schema control

CREATE SCHEMA control;

-- schema reporting

CREATE SCHEMA reporting;

-- schema skills

CREATE SCHEMA skills;

-- acl SCHEMA api

GRANT USAGE ON SCHEMA api TO svc_runtime;
GRANT USAGE ON SCHEMA api TO svc_api;

-- acl SCHEMA app

GRANT USAGE ON SCHEMA app TO svc_runtime;
GRANT USAGE ON SCHEMA app TO svc_api;
GRANT USAGE ON SCHEMA app TO svc_reporting;

-- acl SCHEMA app_private

GRANT USAGE ON SCHEMA app_private TO svc_runtime;
GRANT USAGE ON SCHEMA app_private TO svc_api;
GRANT USAGE ON SCHEMA app_private TO svc_reporting;

-- acl SCHEMA public

REVOKE USAGE ON SCHEMA public FROM PUBLIC;

-- acl SCHEMA reporting

GRANT USAGE ON SCHEMA reporting TO svc_api;
GRANT USAGE ON SCHEMA reporting TO svc_reporting;

-- acl SCHEMA skills

GRANT USAGE ON SCHEMA skills TO svc_runtime;
GRANT USAGE ON SCHEMA skills TO svc_api;

-- default acl DEFAULT PRIVILEGES FOR FUNCTIONS

ALTER DEFAULT PRIVILEGES REVOKE ALL ON FUNCTIONS  FROM PUBLIC;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
