-- migrate:up

/** The baseline, 1 of 16. Roles and schemas: the roles the service, its jobs and BI logins act as, the schemas and who may use them, and who may connect to this database.
 * db/README.md, "The baseline", says how it was made and proved equal to the migrations it replaced. */
set local check_function_bodies = false;
set local client_min_messages = warning;
set local search_path = '';

/** The roles, created once per PostgreSQL server (a second database on it finds them made). Each
 * logs in for one job or owns one kind of object; none is a superuser or bypasses row security.
 * db/README.md ("Schemas and roles") says what each may do and why. */
do $$
begin
  -- svc_runtime: the role the HTTP service logs in as; it owns nothing.
  if not exists (select from pg_roles where rolname = 'svc_runtime') then
    create role svc_runtime login nosuperuser nobypassrls nocreatedb nocreaterole noinherit;
  end if;
  -- svc_api: owner of the surface (the api views and the functions that read them).
  if not exists (select from pg_roles where rolname = 'svc_api') then
    create role svc_api nologin nosuperuser nobypassrls nocreatedb nocreaterole noinherit;
  end if;
  -- svc_reporting: what each organization's BI login inherits (the reporting views only).
  if not exists (select from pg_roles where rolname = 'svc_reporting') then
    create role svc_reporting nologin nosuperuser nobypassrls nocreatedb nocreaterole;
  end if;
  -- svc_directory: owner of the one lookup from a client id to its organization.
  if not exists (select from pg_roles where rolname = 'svc_directory') then
    create role svc_directory nologin nosuperuser nobypassrls nocreatedb nocreaterole noinherit;
  end if;
  -- svc_gate: owner of the token and secret checks that open a request.
  if not exists (select from pg_roles where rolname = 'svc_gate') then
    create role svc_gate nologin nosuperuser nobypassrls nocreatedb nocreaterole noinherit;
  end if;
  -- svc_owner: owner of the commands, triggers and jobs that write, under the row policies.
  if not exists (select from pg_roles where rolname = 'svc_owner') then
    create role svc_owner nologin nosuperuser nobypassrls nocreatedb nocreaterole noinherit;
  end if;
  -- svc_operator: what the worker and svc-admin share (the control plane's commands).
  if not exists (select from pg_roles where rolname = 'svc_operator') then
    create role svc_operator nologin nosuperuser nobypassrls nocreatedb nocreaterole noinherit;
  end if;
  -- svc_worker: the job worker's login.
  if not exists (select from pg_roles where rolname = 'svc_worker') then
    create role svc_worker login nosuperuser nobypassrls nocreatedb nocreaterole inherit;
  end if;
  -- svc_admin: svc-admin's login.
  if not exists (select from pg_roles where rolname = 'svc_admin') then
    create role svc_admin login nosuperuser nobypassrls nocreatedb nocreaterole inherit;
  end if;
  -- svc_status: the status page's login (the service status, nothing of any organization).
  if not exists (select from pg_roles where rolname = 'svc_status') then
    create role svc_status login nosuperuser nobypassrls nocreatedb nocreaterole noinherit;
  end if;
end
$$;
-- Memberships, granted where missing (a login that is not a superuser may migrate a database of a
-- server whose roles were made before, and cannot grant them again).
do $$
begin
  if not pg_has_role('svc_worker', 'svc_operator', 'member') then
    grant svc_operator to svc_worker;
  end if;
  if not pg_has_role('svc_worker', 'svc_runtime', 'member') then
    grant svc_runtime to svc_worker;
  end if;
  if not pg_has_role('svc_admin', 'svc_operator', 'member') then
    grant svc_operator to svc_admin;
  end if;
end
$$;

/** This database: only the service's logins and the BI logins connect, and nobody makes temporary
 * tables (a temporary table would shadow ours for a session that puts pg_temp first). */
do $$
begin
  execute format('revoke connect, temporary on database %I from public', current_database());
  execute format('grant connect on database %I to svc_runtime, svc_reporting, svc_worker, svc_admin, svc_status', current_database());
end
$$;

-- schema api

create schema api;

grant usage on schema api to svc_runtime;
grant usage on schema api to svc_api;
grant usage on schema api to svc_directory;
grant usage on schema api to svc_gate;
grant usage on schema api to svc_owner;
grant usage on schema api to svc_worker;
grant usage on schema api to svc_admin;
grant usage on schema api to svc_status;

-- schema app

create schema app;

grant usage on schema app to svc_runtime;
grant usage on schema app to svc_api;
grant usage on schema app to svc_reporting;
grant usage on schema app to svc_gate;
grant usage on schema app to svc_owner;
grant usage on schema app to svc_worker;
grant usage on schema app to svc_admin;
grant usage on schema app to svc_status;

-- schema app_private

create schema app_private;

grant usage on schema app_private to svc_runtime;
grant usage on schema app_private to svc_api;
grant usage on schema app_private to svc_reporting;
grant usage on schema app_private to svc_directory;
grant usage on schema app_private to svc_gate;
grant usage on schema app_private to svc_owner;
grant usage on schema app_private to svc_worker;
grant usage on schema app_private to svc_admin;

-- schema control

create schema control;

grant usage on schema control to svc_worker;
grant usage on schema control to svc_owner;
grant usage on schema control to svc_admin;

-- schema reporting

create schema reporting;

grant usage on schema reporting to svc_api;
grant usage on schema reporting to svc_reporting;
grant usage on schema reporting to svc_worker;

-- schema skills

create schema skills;

grant usage on schema skills to svc_runtime;
grant usage on schema skills to svc_api;
grant usage on schema skills to svc_owner;
grant usage on schema skills to svc_worker;

-- privileges SCHEMA public

revoke usage on schema public from public;
grant usage on schema public to svc_gate;

-- privileges DEFAULT PRIVILEGES FOR FUNCTIONS

alter default privileges revoke all on functions  from public;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
