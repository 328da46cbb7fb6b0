-- The bootstrap's part in the service's database, as a superuser, after db/bootstrap.sql and before
-- the migrations (again at will: it changes nothing the second time). scripts/db.ts migrate runs
-- it when DATABASE_URL is a superuser's (db/README.md, "Schemas and roles").
--
-- svc-admin's BI logins (control.reporting_grant, control.reporting_revoke): what needs CREATEROLE,
-- in two functions of svc_bi_logins that only a superuser may change, which svc_admin alone may call
-- and which make nothing but a BI login: a role named svc_bi_<12 hex digits>, a member of
-- svc_reporting and of nothing else, whose password arrives as a SCRAM verifier.
-- A superuser's session: a search_path that no role of the service can reach (the database, and with
-- it `public` and its settings, may be svc_schema's).
set search_path = pg_catalog, pg_temp;
create schema if not exists svc_bootstrap;
-- Only a superuser may have made it: what is in it runs with svc_bi_logins' CREATEROLE.
do $$
begin
  if not (select r.rolsuper from pg_namespace n join pg_roles r on r.oid = n.nspowner where n.nspname = 'svc_bootstrap') then
    raise exception 'schema svc_bootstrap belongs to a role that is not a superuser: drop it, then run the bootstrap again';
  end if;
end
$$;
revoke all on schema svc_bootstrap from public;
grant usage on schema svc_bootstrap to svc_admin, svc_bi_logins;

create or replace function svc_bootstrap.bi_login_create(p_role text, p_password_verifier text) returns void
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    -- On a Citus coordinator a BI login stays there (its reads reach the workers through the relay).
    set citus.enable_ddl_propagation to 'off'
    set citus.enable_create_role_propagation to 'off'
    as $$
begin
  if p_role is null or p_role !~ '^svc_bi_[0-9a-f]{12}$' then
    raise exception 'not a BI login''s name: %', p_role using errcode = '22023';
  end if;
  -- PostgreSQL's own form (RFC 5803): SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>.
  if p_password_verifier is null
     or p_password_verifier !~ '^SCRAM-SHA-256\$[1-9][0-9]{3,6}:[A-Za-z0-9+/]+=*\$[A-Za-z0-9+/]{43}=:[A-Za-z0-9+/]{43}=$' then
    raise exception 'a BI login''s password is a SCRAM-SHA-256 verifier' using errcode = '22023';
  end if;
  execute format('create role %I login password %L inherit nosuperuser nobypassrls nocreatedb nocreaterole connection limit 5 in role svc_reporting',
                 p_role, p_password_verifier);
  execute format('alter role %I set default_transaction_read_only = on', p_role);
  execute format('alter role %I set statement_timeout = %L', p_role, '30s');
  execute format('alter role %I set search_path = reporting', p_role);
end
$$;
alter function svc_bootstrap.bi_login_create(text, text) owner to svc_bi_logins;
revoke all on function svc_bootstrap.bi_login_create(text, text) from public;
grant execute on function svc_bootstrap.bi_login_create(text, text) to svc_admin;

create or replace function svc_bootstrap.bi_login_drop(p_role text) returns void
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    -- On a Citus coordinator a BI login stays there (its reads reach the workers through the relay).
    set citus.enable_ddl_propagation to 'off'
    set citus.enable_create_role_propagation to 'off'
    as $$
begin
  if p_role is null or p_role !~ '^svc_bi_[0-9a-f]{12}$' then
    raise exception 'not a BI login''s name: %', p_role using errcode = '22023';
  end if;
  if not exists (select from pg_roles where rolname = p_role) then
    return;
  end if;
  if not pg_has_role(p_role, 'svc_reporting', 'member') then
    raise exception 'not a BI login: %', p_role using errcode = '22023';
  end if;
  perform pg_terminate_backend(a.pid) from pg_stat_activity a where a.usename = p_role;
  execute format('drop role %I', p_role);
end
$$;
alter function svc_bootstrap.bi_login_drop(text) owner to svc_bi_logins;
revoke all on function svc_bootstrap.bi_login_drop(text) from public;
grant execute on function svc_bootstrap.bi_login_drop(text) to svc_admin;
