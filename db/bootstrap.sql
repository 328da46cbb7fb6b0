-- The bootstrap: what only a superuser may do, run once per PostgreSQL server (again at will: it
-- changes nothing the second time). scripts/db.ts runs it before the migrations when DATABASE_URL
-- is a superuser's, then migrates as svc_deploy; a DBA may run it by hand and give the deploy
-- pipeline svc_deploy's URL alone (db/README.md, "Schemas and roles").
--
-- The roles: each logs in for one job or owns one kind of object; none is a superuser, and one,
-- svc_mover, bypasses row security to copy rows (below). The baseline's roles file makes the same ones where missing, so that a database
-- migrated by a superuser without this file ends the same.
-- A superuser's session: a search_path that no role of the service can reach (the database, and with
-- it `public` and its settings, may be svc_schema's).
set search_path = pg_catalog, pg_temp;
do $$
declare
  r record;
begin
  for r in select * from (values
      -- name, login, inherit
      ('svc_runtime', true, false),   -- the API's login; owns nothing
      ('svc_api', false, false),      -- owns the surface: the api views and the functions that read them
      ('svc_reporting', false, true), -- what each organization's BI login inherits
      ('svc_directory', false, false),-- owns the one lookup from a client id to its organization
      ('svc_gate', false, false),     -- owns the token and secret checks that open a request
      ('svc_owner', false, false),    -- owns the commands, triggers and jobs that write
      ('svc_operator', false, false), -- a marker: its members' sessions act for every organization
      ('svc_worker', true, true),     -- the job worker's login
      ('svc_admin', true, true),      -- svc-admin's login
      ('svc_status', true, false),    -- the status page's login
      ('svc_schema', false, true),    -- owns the schemas, tables and sequences; hands functions and views to their owners
      ('svc_deploy', true, true)      -- the migrations' login: it acts as svc_schema
    ) as x(name, login, inherit) loop
    if not exists (select from pg_roles where rolname = r.name) then
      execute format('create role %I %s nosuperuser nobypassrls nocreatedb nocreaterole %s', r.name,
        case when r.login then 'login' else 'nologin' end, case when r.inherit then 'inherit' else 'noinherit' end);
    end if;
  end loop;
end
$$;
grant svc_operator to svc_worker, svc_admin, svc_deploy;
grant svc_runtime to svc_worker;
-- svc_schema makes each function and view and then gives it to its owner, which it may only as a
-- member of that owner (and, inheriting, it may then grant on it as the owner would).
grant svc_api, svc_owner, svc_gate, svc_directory, svc_status to svc_schema;
grant svc_schema to svc_deploy;
-- Every session of the deploy login is svc_schema's: what a migration makes belongs to the schema
-- owner, never to the login (dbmate's own table included).
alter role svc_deploy set role = 'svc_schema';
-- svc-admin's BI logins are made and dropped by two functions of db/bootstrap-database.sql that
-- belong to svc_bi_logins: it may create roles (CREATEROLE, which on PostgreSQL 15 could also grant
-- any role but a superuser, so it never logs in, has no member, and owns nothing else) and end a
-- dropped login's sessions (pg_signal_backend).
do $$
begin
  if not exists (select from pg_roles where rolname = 'svc_bi_logins') then
    create role svc_bi_logins;
  end if;
end
$$;
alter role svc_bi_logins nologin inherit createrole nosuperuser nobypassrls nocreatedb;
grant pg_signal_backend to svc_bi_logins;
-- PostgreSQL 16 and later let a CREATEROLE role grant only the roles it administers (and give it
-- the roles it creates to administer): svc_reporting, and the BI logins made before it made them.
grant svc_reporting to svc_bi_logins with admin option;
do $$
declare
  r record;
begin
  for r in select m.rolname from pg_roles m
            where m.rolname ~ '^svc_bi_[0-9a-f]{12}$' and pg_has_role(m.oid, 'svc_reporting', 'member')
              and not exists (select from pg_auth_members a where a.roleid = m.oid and a.member = 'svc_bi_logins'::regrole and a.admin_option) loop
    execute format('grant %I to svc_bi_logins with admin option', r.rolname);
  end loop;
end
$$;
-- Rows moved as they are, under no policy: a shard move or rebalance on a cluster (the rebalancer
-- copies an organization's rows as the role that starts it; a restore's rows load as a login made
-- like it, db/README.md). A superuser doing either would run the functions of the tables' checks,
-- which svc_schema may change; svc_mover runs them with no privilege svc_schema lacks: it is a member
-- of svc_schema, which owns the tables and could lift their row security itself. It has no member,
-- owns nothing (on a cluster, one function: svc_bootstrap.rebalance_start), and logs in only on a
-- cluster, node to node, where the rebalancer's connections are its own.
do $$
begin
  if not exists (select from pg_roles where rolname = 'svc_mover') then
    create role svc_mover;
  end if;
end
$$;
alter role svc_mover inherit bypassrls nosuperuser nocreatedb nocreaterole;
grant svc_schema to svc_mover;
-- A function's SET clause of a parameter of ours: PostgreSQL lets only a superuser, or a role
-- granted it, fix it on a function it gives away.
grant set on parameter "svc.gate_organization" to svc_schema;
