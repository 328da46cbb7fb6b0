-- migrate:up

/** Issue 13's cost: GET /v1/me reads nothing under a request context, so it need not pay for
 * signing one (the HMAC and four settings: about a fifth of the statement). begin_request takes
 * p_context (default true); the principal-only operations pass false. Same checks, same order. */
drop function api.begin_request(text, text, text[]);
/** Every /v1 request starts here: the presented access token (its organization from the verified
 * JWT, so the lookup is one primary-key probe) must be a live record; then the client and
 * organization standing, licence and Roles, in the spec's order; then the signed context. */
create function api.begin_request(p_organization_id text, p_token text, p_required_roles text[] default null,
                                  p_context boolean default true)
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
                  where s.organization_id = t.organization_id and s.id = t.secret_id and s.revoked_at is null) as secret_active
    into c
    from app_private.access_tokens t
    join app.api_clients cl on cl.organization_id = t.organization_id and cl.id = t.client_id
    join app.organizations o on o.id = cl.organization_id
   where t.organization_id = p_organization_id and t.token_sha256 = sha256(convert_to(p_token, 'UTF8'))
     and t.expires_at > now();
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
    if p_context then
      perform app_private.set_context(c.organization_id, c.id, c.svc_roles);
    end if;
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
grant execute on function api.begin_request(text, text, text[], boolean) to svc_runtime;


-- migrate:down
drop function api.begin_request(text, text, text[], boolean);
/** Every /v1 request starts here: the presented access token (its organization from the verified
 * JWT, so the lookup is one primary-key probe) must be a live record; then the client and
 * organization standing, licence and Roles, in the spec's order; then the signed context. */
create function api.begin_request(p_organization_id text, p_token text, p_required_roles text[] default null)
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
                  where s.organization_id = t.organization_id and s.id = t.secret_id and s.revoked_at is null) as secret_active
    into c
    from app_private.access_tokens t
    join app.api_clients cl on cl.organization_id = t.organization_id and cl.id = t.client_id
    join app.organizations o on o.id = cl.organization_id
   where t.organization_id = p_organization_id and t.token_sha256 = sha256(convert_to(p_token, 'UTF8'))
     and t.expires_at > now();
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
    perform app_private.set_context(c.organization_id, c.id, c.svc_roles);
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
