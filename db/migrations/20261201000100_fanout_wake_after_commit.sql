-- migrate:up

/** Issue 21 (creates through the API at 200/s). NOTIFY serializes commits: a notifying transaction
 * takes one lock for the whole database in its pre-commit step (async.c, so that notifications are
 * queued in commit order) and holds it until its commit record is flushed. Every API write that
 * emitted a subscribed event waited there for the previous one's fsync: in the bench, 5.5 backends
 * on average waited on "Lock: object" at COMMIT while creates were served at 110-145/s of 200.
 * An API request's transaction (begin_request with a context) now sets svc.fanout_wake, and its
 * subscribed events set it to 'due' instead of notifying. The API reads it with its COMMIT (same
 * round trip) and then wakes the fan-out itself: in process when the worker runs there, else with a
 * NOTIFY of its own, one at a time (a transaction that writes no WAL commits without a flush, so it
 * holds the lock for microseconds; a lost wake-up costs one poll). Every other writer (the worker,
 * psql, the owner's scripts) still notifies at commit. */
create or replace function api.begin_request(p_organization_id text, p_token text, p_required_roles text[] default null,
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
      -- The API wakes the fan-out itself once this transaction has committed, if an event of it
      -- needs one (emit_event then sets 'due').
      perform set_config('svc.fanout_wake', 'after_commit', true);
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

create or replace function app_private.emit_event(p_org text, p_type text, p_resource_type text, p_resource_id text,
                                                  p_version integer, p_target_endpoint text default null) returns text
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_id text := app_private.new_id('evt');
  v_subscribed boolean;
begin
  v_subscribed := case when p_target_endpoint is not null then true
    else exists (select from app.webhook_endpoints e
                  where e.organization_id = p_org and e.status = 'enabled' and p_type = any (e.events)) end;
  insert into app.events (organization_id, id, type, resource_type, resource_id, resource_version, fanout_pending, target_endpoint_id)
  values (p_org, v_id, p_type, p_resource_type, p_resource_id, p_version, v_subscribed, p_target_endpoint);
  -- Delivered at commit, never for a rolled-back write; identical notifications of one
  -- transaction are folded into one. No payload: LISTEN needs no privilege, so any role of the
  -- database could read it (an organization id would tell who is active, and when). Not from an
  -- API request's transaction: the API wakes the fan-out after its commit (see above).
  if v_subscribed then
    if current_setting('svc.fanout_wake', true) in ('after_commit', 'due') then
      -- Read by the API before its COMMIT (in the same round trip): it wakes the fan-out only then.
      perform set_config('svc.fanout_wake', 'due', true);
    else
      perform pg_notify('svc_webhook_fanout', '');
    end if;
  end if;
  return v_id;
end
$$;


-- migrate:down

create or replace function api.begin_request(p_organization_id text, p_token text, p_required_roles text[] default null,
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

create or replace function app_private.emit_event(p_org text, p_type text, p_resource_type text, p_resource_id text,
                                                  p_version integer, p_target_endpoint text default null) returns text
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_id text := app_private.new_id('evt');
  v_subscribed boolean;
begin
  v_subscribed := case when p_target_endpoint is not null then true
    else exists (select from app.webhook_endpoints e
                  where e.organization_id = p_org and e.status = 'enabled' and p_type = any (e.events)) end;
  insert into app.events (organization_id, id, type, resource_type, resource_id, resource_version, fanout_pending, target_endpoint_id)
  values (p_org, v_id, p_type, p_resource_type, p_resource_id, p_version, v_subscribed, p_target_endpoint);
  if v_subscribed then
    -- Delivered at commit, never for a rolled-back write; identical notifications of one
    -- transaction are folded into one. No payload: LISTEN needs no privilege, so any role of the
    -- database could read it (an organization id would tell who is active, and when).
    perform pg_notify('svc_webhook_fanout', '');
  end if;
  return v_id;
end
$$;

