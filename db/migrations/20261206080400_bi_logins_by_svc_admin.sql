-- migrate:up

/** svc-admin makes and drops BI logins as svc_admin, not on a superuser's connection: the binding
 * through policies of svc_admin's own, the login through the bootstrap's two functions
 * (db/bootstrap-database.sql), which alone may CREATE ROLE and which svc_admin alone may call. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

create or replace function control.reporting_grant(p_org text, p_roles text[], p_password_verifier text) returns table(role_name text)
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
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
  -- The login itself: CREATE ROLE, which only the bootstrap's function may (db/bootstrap-database.sql).
  perform svc_bootstrap.bi_login_create(v_role, p_password_verifier);
  role_name := v_role;
  return next;
end
$_$;

grant execute on function control.reporting_grant(p_org text, p_roles text[], p_password_verifier text) to svc_admin;

create or replace function control.reporting_revoke(p_role text) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  delete from app_private.bi_logins b where b.role_name = p_role;
  perform app_private.require_found(found, 'BI_LOGIN_NOT_FOUND', p_role);
  -- Its sessions ended and the login dropped, by the bootstrap's function (db/bootstrap-database.sql).
  perform svc_bootstrap.bi_login_drop(p_role);
end
$$;

comment on function control.reporting_revoke(p_role text) is 'Drops a BI login: its binding, its open sessions and the login itself (svc-admin reporting revoke).';

grant execute on function control.reporting_revoke(p_role text) to svc_admin;

grant select (role_name), insert (organization_id, role_name, svc_roles), delete on table app_private.bi_logins to svc_admin;

create policy "svc-admin records a BI login's binding" on app_private.bi_logins for insert to svc_admin with check (true);

comment on policy "svc-admin records a BI login's binding" on app_private.bi_logins is 'svc_admin (svc-admin reporting grant, through control.reporting_grant) binds a new BI login to an organization and Roles; an operator acts for every organization, and the table''s checks bound the login''s name and the Roles.';

create policy "svc-admin finds a BI login's binding" on app_private.bi_logins for select to svc_admin using (true);

comment on policy "svc-admin finds a BI login's binding" on app_private.bi_logins is 'svc_admin finds the binding it removes by the login''s name (svc-admin reporting revoke); it is granted that column alone, not the organization or the Roles.';

create policy "svc-admin removes a BI login's binding" on app_private.bi_logins for delete to svc_admin using (true);

comment on policy "svc-admin removes a BI login's binding" on app_private.bi_logins is 'svc_admin removes a BI login''s binding (svc-admin reporting revoke, through control.reporting_revoke) before the login itself is dropped.';

-- migrate:down
set local lock_timeout = '3s';
set local statement_timeout = '60s';

drop policy "svc-admin removes a BI login's binding" on app_private.bi_logins;
drop policy "svc-admin finds a BI login's binding" on app_private.bi_logins;
drop policy "svc-admin records a BI login's binding" on app_private.bi_logins;
revoke select (role_name), insert (organization_id, role_name, svc_roles), delete on table app_private.bi_logins from svc_admin;
revoke execute on function control.reporting_revoke(p_role text) from svc_admin;
revoke execute on function control.reporting_grant(p_org text, p_roles text[], p_password_verifier text) from svc_admin;
comment on function control.reporting_revoke(p_role text) is null;

create or replace function control.reporting_revoke(p_role text) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  delete from app_private.bi_logins b where b.role_name = p_role;
  perform app_private.require_found(found, 'BI_LOGIN_NOT_FOUND', p_role);
  perform pg_terminate_backend(a.pid) from pg_stat_activity a where a.usename = p_role;
  execute format('drop role if exists %I', p_role);
end
$$;

create or replace function control.reporting_grant(p_org text, p_roles text[], p_password_verifier text) returns table(role_name text)
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
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
$_$;
