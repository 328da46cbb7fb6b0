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
