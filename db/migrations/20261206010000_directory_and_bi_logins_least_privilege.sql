-- migrate:up

/** Least privilege for three things every tenant shares: the client directory, BI logins'
 * passwords, and the database itself.
 *
 * The client directory (client id -> organization, every tenant) is read before any request
 * context exists: by the token endpoint, to find the organization of the client that asks. It is
 * now under row security like every table that names organizations, and read only through its one
 * lookup, `api.client_organization`, owned by `svc_directory`, a role that owns nothing else and
 * holds no other privilege. Its policy shows the one client the lookup was asked for (the lookup
 * names it in a transaction-local setting before it reads), so the function's own WHERE is not
 * what keeps the other tenants out. The control plane writes the directory as the migrating role.
 *
 * A BI login's password reaches the server only as a SCRAM-SHA-256 verifier computed outside it
 * (svc-admin, as psql's \password does): `create role … password` with a verifier stores it as
 * it is, and statement tracking (pg_stat_statements with track = all) and logs then hold nothing
 * that logs in.
 *
 * Nobody connects to the database or makes temporary objects in it by being PUBLIC: the logins
 * of the service and the BI role are granted CONNECT by name (BI logins inherit it from
 * svc_reporting). The reporting views are security barriers, so a BI tool's own conditions run
 * after the view's rows are chosen, never inside them. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

do $$
begin
  -- svc_directory: owns api.client_organization and nothing else; never logs in.
  if not exists (select from pg_roles where rolname = 'svc_directory') then
    create role svc_directory nologin nosuperuser nobypassrls nocreatedb nocreaterole noinherit;
  end if;
end
$$;
-- USAGE on the schema of the function it owns too: a Citus node being added refuses the function otherwise.
grant usage on schema app_private, api to svc_directory;

revoke all on table app_private.client_directory from svc_api;
grant select on table app_private.client_directory to svc_directory;
alter table app_private.client_directory enable row level security;
alter table app_private.client_directory force row level security;
create policy "The lookup sees the one client it was asked for" on app_private.client_directory
  for select to svc_directory
  using (client_id = current_setting('svc.directory_client', true));

create or replace function api.client_organization(p_client_id text) returns text
  language plpgsql volatile security definer
  set search_path = pg_catalog, pg_temp
as $$
declare
  v_organization_id text;
  v_scope text;
begin
  -- The policy shows the row of this client alone, for as long as the lookup runs.
  v_scope := set_config('svc.directory_client', coalesce(p_client_id, ''), true);
  select d.organization_id into v_organization_id from app_private.client_directory d where d.client_id = p_client_id;
  v_scope := set_config('svc.directory_client', '', true);
  return v_organization_id;
end
$$;
comment on function api.client_organization(text) is
  'The organization of an API client, before any request context exists (the token endpoint); the only reader of app_private.client_directory.';
alter function api.client_organization(text) owner to svc_directory;

-- BI logins: the verifier, never the password.
drop function control.reporting_grant(text, text[]);
create function control.reporting_grant(p_org text, p_roles text[], p_password_verifier text) returns table(role_name text)
  language plpgsql
  set search_path = pg_catalog, pg_temp
as $$
declare
  v_role text := 'svc_bi_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12);
begin
  perform app_private.require_found(exists (select from app.organizations o where o.id = p_org), 'ORGANIZATION_NOT_FOUND', p_org);
  -- PostgreSQL's own form (RFC 5803): SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>.
  if p_password_verifier is null
     or p_password_verifier !~ '^SCRAM-SHA-256\$[1-9][0-9]{3,6}:[A-Za-z0-9+/]+=*\$[A-Za-z0-9+/]{43}=:[A-Za-z0-9+/]{43}=$' then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'the BI login''s password is given as a SCRAM-SHA-256 verifier, never as text');
  end if;
  insert into app_private.bi_logins (organization_id, role_name, svc_roles) values (p_org, v_role, p_roles);
  execute format('create role %I login password %L inherit nosuperuser nobypassrls nocreatedb nocreaterole connection limit 5 in role svc_reporting',
                 v_role, p_password_verifier);
  execute format('alter role %I set default_transaction_read_only = on', v_role);
  execute format('alter role %I set statement_timeout = %L', v_role, '30s');
  execute format('alter role %I set search_path = reporting', v_role);
  role_name := v_role;
  return next;
end
$$;
comment on function control.reporting_grant(text, text[], text) is
  'A read-only login for a BI tool, bound to one organization and Roles; its password arrives as a SCRAM-SHA-256 verifier computed by svc-admin.';
revoke all on function control.reporting_grant(text, text[], text) from public;

-- The database: CONNECT by name, TEMPORARY for nobody but its owner.
do $$
begin
  execute format('revoke connect, temporary on database %I from public', current_database());
  execute format('grant connect on database %I to svc_runtime, svc_reporting', current_database());
  if exists (select from pg_roles where rolname = 'svc_reporting_relay') then
    execute format('grant connect on database %I to svc_reporting_relay', current_database());
  end if;
end
$$;

-- The reporting views (and, on a cluster, their originals that the relay reads on a worker).
do $$
declare
  v regclass;
begin
  for v in select c.oid::regclass from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where n.nspname in ('reporting', 'reporting_private') and c.relkind = 'v' order by 1 loop
    execute format('alter view %s set (security_barrier = true)', v);
  end loop;
end
$$;

-- migrate:down
set local lock_timeout = '3s';
set local statement_timeout = '60s';
do $$
declare
  v regclass;
begin
  for v in select c.oid::regclass from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where n.nspname in ('reporting', 'reporting_private') and c.relkind = 'v' order by 1 loop
    execute format('alter view %s reset (security_barrier)', v);
  end loop;
  execute format('grant connect, temporary on database %I to public', current_database());
end
$$;
drop function control.reporting_grant(text, text[], text);
create function control.reporting_grant(p_org text, p_roles text[]) returns table(role_name text, password text)
  language plpgsql
  set search_path = pg_catalog, pg_temp
as $$
declare
  v_role text := 'svc_bi_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12);
  v_password text := encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex');
begin
  perform app_private.require_found(exists (select from app.organizations o where o.id = p_org), 'ORGANIZATION_NOT_FOUND', p_org);
  insert into app_private.bi_logins (organization_id, role_name, svc_roles) values (p_org, v_role, p_roles);
  execute format('create role %I login password %L inherit nosuperuser nobypassrls nocreatedb nocreaterole connection limit 5 in role svc_reporting',
                 v_role, v_password);
  execute format('alter role %I set default_transaction_read_only = on', v_role);
  execute format('alter role %I set statement_timeout = %L', v_role, '30s');
  execute format('alter role %I set search_path = reporting', v_role);
  role_name := v_role;
  password := v_password;
  return next;
end
$$;
revoke all on function control.reporting_grant(text, text[]) from public;
alter function api.client_organization(text) owner to svc_api;
create or replace function api.client_organization(p_client_id text) returns text
  language sql stable security definer
  set search_path = pg_catalog, pg_temp
as $$ select d.organization_id from app_private.client_directory d where d.client_id = p_client_id $$;
comment on function api.client_organization(text) is null;
drop policy "The lookup sees the one client it was asked for" on app_private.client_directory;
alter table app_private.client_directory no force row level security;
alter table app_private.client_directory disable row level security;
revoke all on table app_private.client_directory from svc_directory;
grant select on table app_private.client_directory to svc_api;
revoke usage on schema app_private, api from svc_directory;
