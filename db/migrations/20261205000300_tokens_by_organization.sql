-- migrate:up

/** Issue 37, step 2: a token and a principal from the rows of one organization.
 *
 * The token endpoint knows the client id and secret, not the organization; it looked the client
 * up by id alone, which on Citus asks every shard (and connects to the workers as the function's
 * owner). Now it asks first which organization the client belongs to (app_private.client_directory,
 * a lookup by client id kept where requests arrive; a client never changes organization, so the
 * API may cache the answer), then authenticates and records the token within that organization:
 * both take the organization first, as api.begin_request does, so that on Citus each is delegated
 * to the worker that holds the organization's rows and runs there whole (the token check and the
 * signed context included). */

-- On Citus, this transaction later creates distributed functions, which must not follow a
-- multi-shard read over parallel connections (elsewhere the setting is an unused placeholder).
select set_config('citus.multi_shard_modify_mode', 'sequential', true);

/** 1. The client directory: written by the control plane with the client, never changed. */
create table app_private.client_directory (
  client_id text primary key,
  organization_id text not null
);
insert into app_private.client_directory (client_id, organization_id) select id, organization_id from app.api_clients;
grant select on app_private.client_directory to svc_api;

create function api.client_organization(p_client_id text) returns text
language sql stable security definer
set search_path = pg_catalog
as $$ select d.organization_id from app_private.client_directory d where d.client_id = p_client_id $$;
alter function api.client_organization(text) owner to svc_api;
revoke execute on function api.client_organization(text) from public;
grant execute on function api.client_organization(text) to svc_runtime;

create or replace function control.client_create(p_org text, p_name text, p_license_level text, p_roles text[], p_description text default null)
returns table (client_id text, client_secret text, secret_id text)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  v_source text := 'purchased';
begin
  -- Lock the organization: two concurrent creations must not both take the included licence.
  perform app_private.require_found(exists (select from app.organizations where id = p_org for update), 'ORGANIZATION_NOT_FOUND', p_org);
  -- The organization's included Manager-level licence goes to the first Manager client.
  if p_license_level = 'manager' and not exists (
       select from app.api_clients
        where organization_id = p_org and license_source = 'included'
          and license_status = 'active' and status <> 'deleted') then
    v_source := 'included';
  end if;
  insert into app.api_clients (organization_id, name, description, license_level, license_source, svc_roles)
  values (p_org, p_name, p_description, p_license_level, v_source, p_roles)
  returning id into client_id;
  insert into app_private.client_directory (client_id, organization_id) values (client_id, p_org);
  client_secret := app_private.random_secret('svcsk_');
  insert into app.client_secrets (organization_id, client_id, slot, secret_sha256)
  values (p_org, client_id, 1, sha256(convert_to(client_secret, 'UTF8')))
  returning id into secret_id;
  return next;
end
$$;

/** 2. Authentication and the token record, within the client's organization. */
drop function api.access_token_record(text, text, bytea, timestamptz);
drop function api.authenticate_client(text, text);

create function api.authenticate_client(p_organization_id text, p_client_id text, p_secret text)
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
    join app.api_clients cl on cl.organization_id = s.organization_id and cl.id = s.client_id
    join app.organizations o on o.id = cl.organization_id
   where s.organization_id = p_organization_id
     and s.secret_sha256 = sha256(convert_to(p_secret, 'UTF8'))
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
revoke execute on function api.authenticate_client(text, text, text) from public;
grant execute on function api.authenticate_client(text, text, text) to svc_runtime;

/** Records a token after checking the client secret again (the same checks as the token
 * endpoint's api.authenticate_client): only a holder of a live secret can make a token usable. */
create function api.access_token_record(p_organization_id text, p_client_id text, p_secret text, p_token_sha256 bytea,
  p_expires_at timestamptz) returns boolean
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  a record;
begin
  select * into a from api.authenticate_client(p_organization_id, p_client_id, p_secret);
  if a.outcome <> 'ok' or p_expires_at > now() + interval '1 day' then
    return false;
  end if;
  insert into app_private.access_tokens (organization_id, token_sha256, client_id, secret_id, expires_at)
  values (a.organization_id, p_token_sha256, p_client_id, a.secret_id, p_expires_at);
  return true;
end
$$;
revoke execute on function api.access_token_record(text, text, text, bytea, timestamptz) from public;
grant execute on function api.access_token_record(text, text, text, bytea, timestamptz) to svc_runtime;

/** 3. A PL/pgSQL body: Citus cannot plan a SQL function's statements with parameters, and an
 * organization's trigger runs this on its shard. */
create or replace function app_private.seed_ticket_workflow(p_org text) returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  insert into app.ticket_statuses (organization_id, status, category, is_initial) values
    (p_org, 'new', 'open', true), (p_org, 'open', 'open', false), (p_org, 'pending', 'pending', false),
    (p_org, 'on_hold', 'pending', false), (p_org, 'solved', 'solved', false), (p_org, 'closed', 'closed', false);
  insert into app.ticket_transitions (organization_id, name, from_status, to_status, requires_resolution)
  select p_org, t.name, t.from_status, t.to_status, t.name = 'resolve'
    from (values ('open', 'new', 'open'), ('open', 'pending', 'open'), ('open', 'on_hold', 'open'),
                 ('pend', 'new', 'pending'), ('pend', 'open', 'pending'), ('pend', 'on_hold', 'pending'),
                 ('hold', 'new', 'on_hold'), ('hold', 'open', 'on_hold'), ('hold', 'pending', 'on_hold'),
                 ('resolve', 'new', 'solved'), ('resolve', 'open', 'solved'), ('resolve', 'pending', 'solved'), ('resolve', 'on_hold', 'solved'),
                 ('reopen', 'solved', 'open'), ('close', 'solved', 'closed')) t (name, from_status, to_status);
end
$$;

/** A statement in a trigger names the organization: by id alone it would ask every shard, which
 * Citus refuses from a shard. */
create or replace function app_private.tg_client_secrets__bump_client_version() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  update app.api_clients set authorization_version = authorization_version + 1
   where organization_id = new.organization_id and id = new.client_id;
  return null;
end
$$;


/** 4. On Citus: the directory stays on the coordinator; the three calls that carry the
 * organization first run whole on its worker (force_delegation: also inside BEGIN … COMMIT), in a
 * backend where the context they sign is the one the shard policies check. Citus's functions that
 * run SQL on other nodes, or set a distributed transaction's id (which a caller could replay),
 * are not for the runtime role: they are revoked from PUBLIC here (the workers keep
 * assign_distributed_transaction_id for the coordinator's own connections). */
do $$
declare
  f text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  foreach f in array array['api.begin_request(text,text,text[],boolean)', 'api.authenticate_client(text,text,text)',
                           'api.access_token_record(text,text,text,bytea,timestamptz)'] loop
    perform create_distributed_function(f::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  end loop;
  for f in select p.oid::regprocedure::text from pg_proc p
            where p.pronamespace = 'pg_catalog'::regnamespace
              and p.proname in ('assign_distributed_transaction_id', 'run_command_on_workers', 'run_command_on_placements',
                                'run_command_on_shards', 'run_command_on_colocated_placements', 'run_command_on_all_nodes',
                                'run_command_on_coordinator', 'master_run_on_worker', 'citus_run_local_command')
              and has_function_privilege('public', p.oid, 'execute') loop
    execute format('revoke execute on function %s from public', f);
  end loop;
end
$$;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'restore a backup taken before 20261205000300'); end $$;
