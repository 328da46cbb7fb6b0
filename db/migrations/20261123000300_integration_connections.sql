-- migrate:up

/** Integration connections: managed only by the control plane (an administrator connects a
 * provider in the web settings); API Clients read them. No credentials or provider tokens are
 * stored here: the provider adapters keep theirs elsewhere, and nothing here is secret. */
create table app.integration_connections (
  organization_id text not null references app.organizations on delete cascade,
  id text primary key default app_private.new_id('icn'),
  provider text not null constraint integration_connections_provider_format check (provider ~ '^[a-z0-9_.-]{1,50}$'),
  category text not null constraint integration_connections_category_format check (category ~ '^[a-z_]{1,40}$'),
  ownership text not null constraint integration_connections_ownership_valid check (ownership in ('organization', 'personal')),
  owner_member_id text,
  status text not null constraint integration_connections_status_valid
    check (status in ('connected', 'action_required', 'error', 'disconnected')),
  capabilities text[] not null default '{}',
  action_required text constraint integration_connections_action_required_length check (length(action_required) <= 500),
  last_success_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  version integer not null default 1,
  constraint integration_connections_personal_has_owner check ((ownership = 'personal') = (owner_member_id is not null)),
  foreign key (organization_id, owner_member_id) references app.members (organization_id, id) on delete cascade,
  unique (organization_id, id)
);
create index integration_connections_org on app.integration_connections (organization_id, created_at, id);
create trigger _100_touch_version before update on app.integration_connections
  for each row execute function app_private.tg__touch_version();

/** Relevant to a held Role: accounting connections to finance, every other category to manager. */
create function app_private.integration_visible(p_category text) returns boolean
language sql stable
set search_path = pg_catalog
as $$ select case when p_category = 'accounting' then app.has_role('finance') else app.has_role('manager') end $$;
grant execute on function app_private.integration_visible(text) to svc_runtime;

alter table app.integration_connections enable row level security;
alter table app.integration_connections force row level security;
-- Personal connections belong to a named user: an API Client never sees them (only that they exist,
-- through the readiness check's PERSONAL_CONNECTION_NOT_ALLOWED blocker).
create policy "Clients see organization connections relevant to their Roles" on app.integration_connections
  for select to svc_runtime
  using (organization_id = (select app.current_organization_id()) and ownership = 'organization'
         and app_private.integration_visible(category));
grant select on app.integration_connections to svc_runtime;

create view api.integration_connections with (security_invoker = true) as
select c.organization_id, c.id, c.category, c.status, c.created_at, c.version,
       jsonb_build_object('object', 'integration_connection', 'id', c.id, 'provider', c.provider, 'category', c.category,
         'ownership', c.ownership, 'status', c.status, 'capabilities', to_jsonb(c.capabilities),
         'last_success_at', app_private.iso_timestamp(c.last_success_at), 'action_required', c.action_required,
         'version', c.version, 'created_at', app_private.iso_timestamp(c.created_at),
         'updated_at', app_private.iso_timestamp(c.updated_at)) as doc
  from app.integration_connections c;
grant select on api.integration_connections to svc_runtime;

/** Why a connection the caller cannot read is hidden: 'personal' (a named user's), or the Role it
 * needs; null when there is no such connection in the caller's organization. */
create function api.integration_connection_hidden_reason(p_id text) returns text
language sql stable security definer
set search_path = pg_catalog
as $$
  select case when c.ownership = 'personal' then 'personal'
              when c.category = 'accounting' then 'finance' else 'manager' end
    from app.integration_connections c
   where c.id = p_id and c.organization_id = app.current_organization_id()
$$;
grant execute on function api.integration_connection_hidden_reason(text) to svc_runtime;

/** Readiness for one capability, performing nothing. Blockers are machine-readable codes with safe
 * remediation text; the check sees personal and Role-hidden connections only to name the blocker. */
create function api.integration_readiness(p_capability text) returns jsonb
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  v_org text := app.current_organization_id();
  c app.integration_connections;
  v_blockers jsonb := '[]';
begin
  if v_org is null then
    perform app_private.raise('SV500', 'CONTEXT_MISSING', 'no request context');
  end if;
  -- The best eligible candidate: visible organization connections first, connected ones first.
  select * into c from app.integration_connections x
   where x.organization_id = v_org and x.ownership = 'organization' and p_capability = any (x.capabilities)
     and app_private.integration_visible(x.category)
   order by (x.status = 'connected' and x.action_required is null) desc, x.last_success_at desc nulls last, x.id
   limit 1;
  if found then
    if c.status <> 'connected' or c.action_required is not null then
      v_blockers := jsonb_build_array(jsonb_build_object('code', 'INTEGRATION_CONNECTION_NOT_READY',
        'message', coalesce(c.action_required, format('the %s connection is %s; an administrator must reconnect it in the web settings',
                                                      c.provider, c.status))));
    end if;
    return jsonb_build_object('object', 'integration_readiness', 'capability', p_capability,
      'ready', jsonb_array_length(v_blockers) = 0, 'connection_id', c.id, 'blockers', v_blockers);
  end if;
  if exists (select from app.integration_connections x where x.organization_id = v_org and x.ownership = 'organization'
              and p_capability = any (x.capabilities)) then
    v_blockers := jsonb_build_array(jsonb_build_object('code', 'ROLE_REQUIRED', 'message',
      'a connection offers this capability, but it is not relevant to your Roles (accounting needs finance, others manager)'));
  elsif exists (select from app.integration_connections x where x.organization_id = v_org and x.ownership = 'personal'
                 and p_capability = any (x.capabilities)) then
    v_blockers := jsonb_build_array(jsonb_build_object('code', 'PERSONAL_CONNECTION_NOT_ALLOWED', 'message',
      'only a personal connection of a named user offers this capability; an administrator must connect it for the organization'));
  else
    v_blockers := jsonb_build_array(jsonb_build_object('code', 'CAPABILITY_NOT_AVAILABLE', 'message',
      'no connection of your organization offers this capability; an administrator can connect a provider in the web settings'));
  end if;
  return jsonb_build_object('object', 'integration_readiness', 'capability', p_capability, 'ready', false,
    'connection_id', null, 'blockers', v_blockers);
end
$$;
grant execute on function api.integration_readiness(text) to svc_runtime;

/** Control plane. */
create function control.integration_add(p_org text, p_provider text, p_category text, p_ownership text, p_status text,
                                        p_capabilities text[], p_action_required text default null,
                                        p_owner_member text default null) returns text
language sql volatile
set search_path = pg_catalog
as $$
  insert into app.integration_connections (organization_id, provider, category, ownership, owner_member_id, status, capabilities,
                                           action_required, last_success_at)
  values (p_org, p_provider, p_category, p_ownership, app_private.normalize_email(p_owner_member), p_status,
          coalesce(p_capabilities, '{}'), p_action_required, case when p_status = 'connected' then now() end)
  returning id
$$;

create function control.integration_update(p_id text, p_status text default null, p_capabilities text[] default null,
                                           p_action_required text default null, p_clear_action_required boolean default false)
returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  update app.integration_connections
     set status = coalesce(p_status, status),
         capabilities = coalesce(p_capabilities, capabilities),
         action_required = case when p_clear_action_required then null else coalesce(p_action_required, action_required) end,
         last_success_at = case when coalesce(p_status, status) = 'connected' then now() else last_success_at end
   where id = p_id;
  perform app_private.require_found(found, 'INTEGRATION_CONNECTION_NOT_FOUND', p_id);
end
$$;

-- Events: integration_connection.updated, to the Roles that may read the connection.
insert into app_private.event_types (name, resource_type, emitted_by, description, subscribable) values
  ('integration_connection.updated', 'integration_connection', '{}',
   'A connection changed (status, capabilities, action required) through the control plane.', true);
create function app_private.tg_integration_connections__emit() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  if new.version <> old.version and new.ownership = 'organization' then
    perform app_private.emit_event(new.organization_id, 'integration_connection.updated', 'integration_connection', new.id, new.version);
  end if;
  return null;
end
$$;
create trigger _950_emit_event after update on app.integration_connections
  for each row execute function app_private.tg_integration_connections__emit();

create or replace function app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text) returns boolean
language sql stable
set search_path = pg_catalog
as $$
  select case p_resource_type
    when 'project' then exists (select from api.projects v where v.id = p_resource_id)
    when 'task' then exists (select from api.tasks v where v.id = p_resource_id)
    when 'time_entry' then case when p_type = 'time_entry.deleted' then app_private.may_read_time_entries()
                                else exists (select from api.time_entries v where v.id = p_resource_id and v.deleted_at is null) end
    when 'approval' then exists (select from api.approvals v where v.id = p_resource_id)
    when 'webhook_endpoint' then exists (select from api.webhook_endpoints v where v.id = p_resource_id)
    when 'integration_connection' then exists (select from api.integration_connections v where v.id = p_resource_id)
    else false end
$$;

-- migrate:down
drop trigger _950_emit_event on app.integration_connections;
drop function app_private.tg_integration_connections__emit();
delete from app_private.event_types where name = 'integration_connection.updated';
drop function control.integration_update(text, text, text[], text, boolean);
drop function control.integration_add(text, text, text, text, text, text[], text, text);
drop function api.integration_readiness(text);
drop function api.integration_connection_hidden_reason(text);
drop view api.integration_connections;
drop table app.integration_connections;
drop function app_private.integration_visible(text);
