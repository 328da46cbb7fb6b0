-- migrate:up

/** Wire formats shared by every view. */
-- No `set search_path` (it only names pg_catalog functions): a SET clause would stop Postgres
-- inlining it, and it runs several times per row of every list.
create function app_private.iso_timestamp(ts timestamptz) returns text
language sql immutable parallel safe
as $$ select pg_catalog.to_char(ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;
grant execute on function app_private.iso_timestamp(timestamptz) to svc_runtime;

/** Token endpoint: checks a client id and secret and the client's standing, in the spec's order. */
create function api.authenticate_client(p_client_id text, p_secret text)
returns table (outcome text, secret_id text, organization_id text)
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  c record;
begin
  select cl.id, cl.organization_id, cl.status, cl.license_status, o.status as org_status, o.plan as org_plan, s.id as secret_id
    into c
    from app.client_secrets s
    join app.api_clients cl on cl.id = s.client_id
    join app.organizations o on o.id = cl.organization_id
   where s.secret_sha256 = sha256(convert_to(p_secret, 'UTF8'))
     and s.client_id = p_client_id
     and s.revoked_at is null;
  if not found or c.status = 'deleted' then
    outcome := 'invalid_client';
  elsif c.status = 'disabled' then
    outcome := 'client_disabled';
  elsif c.org_status = 'suspended' then
    outcome := 'org_subscription_inactive';
  elsif c.license_status <> 'active' or c.org_plan in ('trial', 'team') then
    outcome := 'license_inactive';
  else
    outcome := 'ok';
    secret_id := c.secret_id;
    organization_id := c.organization_id;
  end if;
  return next;
end
$$;
grant execute on function api.authenticate_client(text, text) to svc_runtime;

/** Every /v1 request starts here, inside its transaction: loads the current client and
 * organization, applies the per-request checks in the spec's order and, when they pass,
 * sets the request context that every policy reads. Roles come from the database, never
 * from the token or the request. */
create function api.begin_request(p_client_id text, p_secret_id text, p_required_roles text[] default null)
returns table (outcome text, organization_id text, svc_roles text[], principal jsonb)
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  c record;
begin
  select cl.id, cl.organization_id, cl.name, cl.license_level, cl.license_source, cl.license_status,
         cl.status, cl.svc_roles, o.status as org_status, o.plan as org_plan,
         exists (select from app.client_secrets s
                  where s.id = p_secret_id and s.client_id = cl.id and s.revoked_at is null) as secret_active
    into c
    from app.api_clients cl
    join app.organizations o on o.id = cl.organization_id
   where cl.id = p_client_id;
  if not found or c.status = 'deleted' or not c.secret_active then
    outcome := 'invalid_token';
  elsif c.status = 'disabled' then
    outcome := 'client_disabled';
  elsif c.org_status = 'suspended' then
    outcome := 'org_subscription_inactive';
  elsif c.license_status <> 'active' or c.org_plan in ('trial', 'team') then
    outcome := 'license_inactive';
  elsif p_required_roles is not null and not (p_required_roles && c.svc_roles) then
    outcome := 'role_required';
    svc_roles := c.svc_roles;
  else
    perform set_config('svc.organization_id', c.organization_id, true),
            set_config('svc.client_id', c.id, true),
            set_config('svc.roles', array_to_string(c.svc_roles, ','), true);
    outcome := 'ok';
    organization_id := c.organization_id;
    svc_roles := c.svc_roles;
    principal := jsonb_build_object(
      'object', 'api_client_principal',
      'id', c.id,
      'name', c.name,
      'organization_id', c.organization_id,
      'license', jsonb_build_object('level', c.license_level, 'source', c.license_source, 'status', 'active'),
      'svc_roles', to_jsonb(c.svc_roles),
      'record_access', 'organization_wide_by_role',
      'scope', 'svc.api');
  end if;
  return next;
end
$$;
grant execute on function api.begin_request(text, text, text[]) to svc_runtime;

/** Raises ROLE_REQUIRED unless the caller holds one of the Roles. */
create function api.require_any_role(p_roles text[], p_what text) returns void
language plpgsql stable
set search_path = pg_catalog
as $$
begin
  if not app.has_any_role(p_roles) then
    perform app_private.raise('SVR03', 'ROLE_REQUIRED',
      format('%s requires one of the Roles: %s', p_what, array_to_string(p_roles, ', ')));
  end if;
end
$$;
grant execute on function api.require_any_role(text[], text) to svc_runtime;

/** Optimistic concurrency: every command that takes If-Match calls this with the row's
 * current version (locked) and the versions named by If-Match. */
create function app_private.check_if_match(p_current_version integer, p_if_match integer[]) returns void
language plpgsql immutable
set search_path = pg_catalog
as $$
begin
  if p_if_match is null or not (p_current_version = any (p_if_match)) then
    perform app_private.raise('SVS12', 'STALE_RESOURCE', format('"%s"', p_current_version));
  end if;
end
$$;
grant execute on function app_private.check_if_match(integer, integer[]) to svc_runtime;

/** Rate limiting: fixed windows per key, shared by every instance. Each instance counts
 * locally and adds its counts here in one batched statement (every 100 ms, and at once when
 * a key nears its limit), reading back the total of all instances. Unlogged: a crash forgets
 * the counters, which only resets a window early. */
create unlogged table app_private.rate_limit_buckets (
  key text primary key,
  window_start bigint not null,
  hits integer not null
);

create function api.rate_limit_add(p_keys text[], p_windows bigint[], p_hits integer[])
returns table (key text, window_start bigint, hits integer)
language sql volatile security definer
set search_path = pg_catalog
as $$
  insert into app_private.rate_limit_buckets as b (key, window_start, hits)
  select k, w, h from unnest(p_keys, p_windows, p_hits) as u(k, w, h) order by k
  on conflict (key) do update
    set window_start = greatest(b.window_start, excluded.window_start),
        hits = case when b.window_start = excluded.window_start then b.hits + excluded.hits
                    when b.window_start > excluded.window_start then b.hits
                    else excluded.hits end
  returning b.key, b.window_start, b.hits
$$;
grant execute on function api.rate_limit_add(text[], bigint[], integer[]) to svc_runtime;

/** Token signing keys: shared by every instance, survive restarts. The private JWK is
 * sealed (AES-256-GCM) by the server with SVC_SECRET_KEY before it reaches the database. */
create table app_private.signing_keys (
  kid text primary key,
  alg text not null,
  public_jwk jsonb not null,
  private_jwk_sealed text not null,
  created_at timestamptz not null default now(),
  retired_at timestamptz
);

create function api.signing_keys_current()
returns table (kid text, alg text, public_jwk jsonb, private_jwk_sealed text, created_at timestamptz)
language sql stable security definer
set search_path = pg_catalog
as $$
  select k.kid, k.alg, k.public_jwk, k.private_jwk_sealed, k.created_at
    from app_private.signing_keys k
   where k.retired_at is null
   order by k.created_at desc, k.kid desc
$$;
grant execute on function api.signing_keys_current() to svc_runtime;

/** First boot: the first instance to arrive stores its key; the others read it. */
create function api.signing_key_bootstrap(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text)
returns void
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  perform pg_advisory_xact_lock(hashtext('svc.signing_key_bootstrap'));
  if not exists (select from app_private.signing_keys where retired_at is null) then
    insert into app_private.signing_keys (kid, alg, public_jwk, private_jwk_sealed)
    values (p_kid, p_alg, p_public_jwk, p_private_jwk_sealed);
  end if;
end
$$;
grant execute on function api.signing_key_bootstrap(text, text, jsonb, text) to svc_runtime;

/** Organization and member surfaces. Field policy per Role is decided here, not in the server. */
create view api.organization with (security_invoker = true) as
select o.id,
       o.version,
       jsonb_build_object(
         'object', 'organization',
         'id', o.id,
         'name', o.name,
         'status', o.status,
         'timezone', o.timezone,
         'currency', o.currency,
         'locale', o.locale,
         'created_at', app_private.iso_timestamp(o.created_at),
         'links', jsonb_build_object('web', o.web_url)) as doc
  from app.organizations o;
grant select on api.organization to svc_runtime;

/** HR-restricted member fields, for the hr Role only (the columns are not granted to svc_runtime). */
create function app_private.member_hr_profile(p_org text, p_member_id text) returns jsonb
language sql stable security definer
set search_path = pg_catalog
as $$
  select jsonb_build_object('employee_number', m.employee_number, 'hire_date', m.hire_date, 'employment_type', m.employment_type)
    from app.members m
   where m.organization_id = p_org and m.id = p_member_id
     and p_org = app.current_organization_id() and app.has_role('hr')
$$;
grant execute on function app_private.member_hr_profile(text, text) to svc_runtime;

-- Work-profile fields: member, manager, hr. Finance: identity and status only.
-- HR-restricted fields: hr only.
create view api.members with (security_invoker = true) as
select m.organization_id,
       m.id,
       m.display_name,
       m.status,
       m.svc_roles,
       m.version,
       jsonb_build_object(
         'object', 'member',
         'id', m.id,
         'display_name', m.display_name,
         'email', m.id,
         'status', m.status)
       || case when (select app.has_any_role('{member,manager,hr}'))
               then jsonb_build_object('svc_roles', to_jsonb(m.svc_roles), 'job_title', m.job_title, 'timezone', m.timezone)
               else '{}'::jsonb end
       || case when (select app.has_role('hr')) then app_private.member_hr_profile(m.organization_id, m.id)
               else '{}'::jsonb end as doc
  from app.members m;
grant select on api.members to svc_runtime;

-- migrate:down
drop view api.members;
drop function app_private.member_hr_profile(text, text);
drop view api.organization;
drop function api.signing_key_bootstrap(text, text, jsonb, text);
drop function api.signing_keys_current();
drop table app_private.signing_keys;
drop function api.rate_limit_add(text[], bigint[], integer[]);
drop table app_private.rate_limit_buckets;
drop function api.require_any_role(text[], text);
drop function app_private.check_if_match(integer, integer[]);
drop function api.begin_request(text, text, text[]);
drop function api.authenticate_client(text, text);
drop function app_private.iso_timestamp(timestamptz);
