-- migrate:up

/** The security-definer functions a request reaches directly, under row policies.
 *
 * Until now 28 of the functions svc_runtime may execute belonged to the migrating role, a
 * superuser: inside them no row policy applied, and tenant isolation rested on each hand-written
 * WHERE. They now belong to two roles that do not bypass row security and never log in:
 *
 * - svc_gate: the credential path, which runs before a request has a context (the token check,
 *   the token endpoint's client check and token record, the context's signature, signing keys,
 *   rate-limit buckets, the wake key, a BI session's binding). Its policies show it the
 *   organization the caller named (`svc.gate_organization`, set by each gate function for the
 *   length of its read) and a BI session its own binding (`session_user`): a gate function with a
 *   wrong WHERE still reads nothing of another organization than the one asked about.
 * - svc_owner: the commands and policy helpers that run inside a request's signed context and
 *   write what svc_api may not (statuses, totals, numbers, capabilities). Its one policy per tenant
 *   table shows the request's organization, or every organization to an operator session (a login
 *   that is a member of svc_operator: the worker, svc-admin, migrations; superusers count), whose
 *   jobs span organizations.
 *
 * Not yet moved: the three beginnings of capability links (a file's upload and download, a report's
 * download), which read their row by the link's organization before they set that client's context,
 * and the outbox metric, which reads every organization across a cluster's shards.
 *
 * The credential tables (tokens, client secrets, BI bindings, keys, buckets) are granted to
 * svc_gate alone; svc_owner gets every other table of app and app_private. The two tenant counters
 * and the administrators' notifications, which name organizations, are now under row security too.
 * What is left to the migrating role is listed by test/db/least-privilege.test.ts. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';
-- On Citus, each table's grants run shard by shard over one connection per worker: a grant that
-- ran over several would refuse a later one on a reference table in the same transaction (as
-- when the role already exists on the cluster: a second database migrated there).
select set_config('citus.multi_shard_modify_mode', 'sequential', true) where exists (select from pg_extension where extname = 'citus');

do $$
begin
  if not exists (select from pg_roles where rolname = 'svc_gate') then
    create role svc_gate nologin nosuperuser nobypassrls nocreatedb nocreaterole noinherit;
  end if;
  if not exists (select from pg_roles where rolname = 'svc_owner') then
    create role svc_owner nologin nosuperuser nobypassrls nocreatedb nocreaterole noinherit;
  end if;
  -- A marker: sessions of its members act for every organization (superusers are members).
  if not exists (select from pg_roles where rolname = 'svc_operator') then
    create role svc_operator nologin nosuperuser nobypassrls nocreatedb nocreaterole noinherit;
  end if;
end
$$;

create function app_private.operator_session() returns boolean
  language sql stable parallel safe
  as $$ select pg_catalog.pg_has_role(session_user, 'svc_operator', 'USAGE') $$;
comment on function app_private.operator_session() is
  'Whether the session''s login acts for every organization (a member of svc_operator, or a superuser): the worker, svc-admin, migrations. Never svc_runtime or a BI login.';
revoke all on function app_private.operator_session() from public;

/** svc_gate: the credential tables, each under a policy of its purpose. */
grant usage on schema app, app_private, api to svc_gate;
grant usage on schema public to svc_gate;
grant select on table public.schema_migrations to svc_gate;
grant select, insert on table app_private.access_tokens to svc_gate;
grant select on table app.client_secrets, app.api_clients, app.organizations to svc_gate;
grant select on table app_private.bi_logins to svc_gate;
grant select on table app_private.context_keys, app_private.run_wake_key to svc_gate;
grant select, insert on table app_private.signing_keys to svc_gate;
grant select, insert, update on table app_private.rate_limit_buckets to svc_gate;
grant execute on function app_private.read_flags(text[], boolean, boolean, boolean, boolean) to svc_gate;

create policy "The gate reads tokens of the organization it was asked about" on app_private.access_tokens
  for select to svc_gate using (organization_id = current_setting('svc.gate_organization', true));
create policy "The gate records tokens of the organization it was asked about" on app_private.access_tokens
  for insert to svc_gate with check (organization_id = current_setting('svc.gate_organization', true));
create policy "The gate reads secrets of the organization it was asked about" on app.client_secrets
  for select to svc_gate using (organization_id = current_setting('svc.gate_organization', true));
create policy "The gate reads clients of the organization it was asked about" on app.api_clients
  for select to svc_gate using (organization_id = current_setting('svc.gate_organization', true));
create policy "The gate reads the organization it was asked about" on app.organizations
  for select to svc_gate using (id = current_setting('svc.gate_organization', true));
create policy "A BI session reads its own binding" on app_private.bi_logins
  for select to svc_gate using (role_name = session_user);

create or replace function api.begin_request(p_organization_id text, p_token_sha256 text, p_required_roles text[] default null, p_context boolean default true)
  returns table(outcome text, organization_id text, svc_roles text[], principal jsonb)
  language plpgsql security definer
  set search_path = pg_catalog, pg_temp
as $$
declare
  c record;
  v_found boolean;
  -- An assignment, not PERFORM: PL/pgSQL evaluates it without running a query.
  v_scope text;
begin
  if p_token_sha256 is null or p_token_sha256 !~ '^[0-9a-f]{64}$' then
    outcome := 'invalid_token';
    return next;
    return;
  end if;
  -- svc_gate's policies show this organization's tokens, clients and secrets, for this read.
  v_scope := set_config('svc.gate_organization', coalesce(p_organization_id, ''), true);
  -- Joins only (no correlated subquery): Citus plans it for the one shard the organization names.
  select cl.id, cl.organization_id, cl.name, cl.license_level, cl.license_source, cl.license_status,
         cl.status, cl.svc_roles, o.status as org_status, o.plan as org_plan, s.id is not null as secret_active,
         app_private.read_flags(cl.svc_roles, o.ticket_module_enabled, o.finance_may_read_tickets, o.hr_may_read_tickets,
                                o.hr_may_read_time_entries) as read_flags
    into c
    from app_private.access_tokens t
    join app.api_clients cl on cl.organization_id = t.organization_id and cl.id = t.client_id
    join app.organizations o on o.id = cl.organization_id
    left join app.client_secrets s on s.organization_id = t.organization_id and s.id = t.secret_id and s.revoked_at is null
   where t.organization_id = p_organization_id and t.token_sha256 = decode(p_token_sha256, 'hex')
     and t.expires_at > now();
  v_found := found;
  v_scope := set_config('svc.gate_organization', '', true);
  if not v_found or c.status = 'deleted' or not c.secret_active then
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
      perform app_private.set_context(c.organization_id, c.id, c.svc_roles, c.read_flags);
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

create or replace function api.authenticate_client(p_organization_id text, p_client_id text, p_secret text)
  returns table(outcome text, secret_id text, organization_id text)
  language plpgsql volatile security definer
  set search_path = pg_catalog, pg_temp
as $$
declare
  c record;
  v_found boolean;
  -- An assignment, not PERFORM: PL/pgSQL evaluates it without running a query.
  v_scope text;
begin
  -- svc_gate's policies show this organization's clients and secrets, for this read.
  v_scope := set_config('svc.gate_organization', coalesce(p_organization_id, ''), true);
  select cl.id, cl.organization_id, cl.status, cl.license_status, o.status as org_status, o.plan as org_plan, s.id as secret_id
    into c
    from app.client_secrets s
    join app.api_clients cl on cl.organization_id = s.organization_id and cl.id = s.client_id
    join app.organizations o on o.id = cl.organization_id
   where s.organization_id = p_organization_id
     and s.secret_sha256 = sha256(convert_to(p_secret, 'UTF8'))
     and s.client_id = p_client_id
     and s.revoked_at is null;
  v_found := found;
  v_scope := set_config('svc.gate_organization', '', true);
  if not v_found or c.status = 'deleted' then
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

create or replace function api.access_token_record(p_organization_id text, p_client_id text, p_secret text, p_token_sha256 bytea, p_expires_at timestamp with time zone)
  returns boolean
  language plpgsql security definer
  set search_path = pg_catalog, pg_temp
as $$
declare
  a record;
  v_scope text;
begin
  select * into a from api.authenticate_client(p_organization_id, p_client_id, p_secret);
  if a.outcome <> 'ok' or p_expires_at > now() + interval '1 day' then
    return false;
  end if;
  v_scope := set_config('svc.gate_organization', a.organization_id, true);
  insert into app_private.access_tokens (organization_id, token_sha256, client_id, secret_id, expires_at)
  values (a.organization_id, p_token_sha256, p_client_id, a.secret_id, p_expires_at);
  v_scope := set_config('svc.gate_organization', '', true);
  return true;
end
$$;

create or replace function app_private.set_context(p_org text, p_client text, p_roles text[], p_flags text default null)
  returns void
  language plpgsql parallel restricted security definer
  set search_path = pg_catalog, pg_temp
as $$
declare
  v_client text := coalesce(p_client, '');
  v_roles text := coalesce(array_to_string(p_roles, ','), '');
  v_flags text := p_flags;
  v_scope text;
begin
  if p_org is not null and v_flags is null then
    v_scope := set_config('svc.gate_organization', p_org, true);
    select app_private.read_flags(p_roles, o.ticket_module_enabled, o.finance_may_read_tickets, o.hr_may_read_tickets,
                                  o.hr_may_read_time_entries)
      into v_flags from app.organizations o where o.id = p_org;
    v_scope := set_config('svc.gate_organization', '', true);
  end if;
  v_flags := coalesce(v_flags, '');
  perform set_config('svc.organization_id', coalesce(p_org, ''), true),
          set_config('svc.client_id', v_client, true),
          set_config('svc.roles', v_roles, true),
          set_config('svc.read_flags', v_flags, true),
          -- The signature covers exactly the strings stored, as context_ok() reads them back.
          set_config('svc.context_mac', case when p_org is null then '' else app_private.context_mac(p_org, v_client, v_roles, v_flags) end, true);
end
$$;

do $$
declare
  f regprocedure;
begin
  foreach f in array array[
    'api.begin_request(text,text,text[],boolean)', 'api.authenticate_client(text,text,text)',
    'api.access_token_record(text,text,text,bytea,timestamp with time zone)',
    'app_private.context_ok()', 'app_private.context_mac(text,text,text,text)', 'app_private.set_context(text,text,text[],text)',
    'app_private.capability_mac(text,text)', 'app_private.bi_context()',
    'api.rate_limit_lease(text,bigint,integer,integer)', 'api.rate_limit_release(text[],bigint[],integer[])',
    'api.signing_key_bootstrap(text,text,jsonb,text)', 'api.signing_keys_current()',
    'api.run_wake_key()', 'api.service_schema_version()']::regprocedure[] loop
    execute format('alter function %s owner to svc_gate', f);
  end loop;
end
$$;

/** svc_owner: every other table, under one policy per tenant table. */
grant usage on schema app, app_private, api to svc_owner;
do $$
declare
  t regclass;
  v_key text;
begin
  for t in select c.oid::regclass from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where n.nspname in ('app', 'app_private') and c.relkind in ('r', 'p')
              and c.oid not in ('app_private.access_tokens'::regclass, 'app.client_secrets'::regclass, 'app_private.bi_logins'::regclass,
                                'app_private.context_keys'::regclass, 'app_private.signing_keys'::regclass,
                                'app_private.rate_limit_buckets'::regclass, 'app_private.run_wake_key'::regclass,
                                'app_private.client_directory'::regclass)
            order by 1 loop
    execute format('grant select, insert, update, delete on table %s to svc_owner', t);
    v_key := case when t = 'app.organizations'::regclass then 'id'
                  when exists (select from pg_attribute a where a.attrelid = t and a.attname = 'organization_id' and not a.attisdropped) then 'organization_id' end;
    if v_key is not null then
      execute format('alter table %s enable row level security', t);
      execute format('alter table %s force row level security', t);
      execute format($p$create policy "Commands act in the request's organization" on %s for all to svc_owner
                          using (app_private.operator_session() or %2$I = app.current_organization_id())
                          with check (app_private.operator_session() or %2$I = app.current_organization_id())$p$, t, v_key);
    end if;
  end loop;
end
$$;
grant usage on all sequences in schema app, app_private to svc_owner;
grant select on all tables in schema api to svc_owner;
grant execute on all functions in schema app, app_private, api to svc_owner;
-- Not the cluster's administration (Citus sends the grant above to its workers for procedures too).
do $$
declare
  f regprocedure;
begin
  for f in select p.oid::regprocedure from pg_proc p
            where p.pronamespace = 'app_private'::regnamespace and (p.prokind = 'p' or p.proname ~ '^citus_') loop
    execute format('revoke all on routine %s from svc_owner', f);
  end loop;
end
$$;

do $$
declare
  f regprocedure;
begin
  foreach f in array array[
    'app_private.may_read_internal_notes()', 'app_private.may_read_time_entries()', 'app_private.may_read_tickets()',
    'app_private.member_hr_profile(text,text)', 'api.approval_exists(text)',
    'api.integration_connection_hidden_reason(text)', 'api.integration_readiness(text)',
    'api.invoice_attach_pdf(text,text,bytea)', 'api.invoice_send(text,boolean)', 'api.invoice_void(text)',
    'api.webhook_delivery_replay(text,text)', 'api.webhook_endpoint_test(text)', 'api.ticket_search_ids(text)']::regprocedure[] loop
    execute format('alter function %s owner to svc_owner', f);
  end loop;
end
$$;

-- migrate:down
-- The functions back to the role that runs this (the migrating role) with their bodies as before,
-- the policies and grants of svc_gate and svc_owner gone. The roles stay: other databases of the
-- cluster may use them (drop them by hand once none does).
set local lock_timeout = '3s';
set local statement_timeout = '60s';
do $$
declare
  f regprocedure;
  p record;
begin
  for f in select o.oid::regprocedure from pg_proc o where o.proowner in ('svc_gate'::regrole, 'svc_owner'::regrole) loop
    execute format('alter function %s owner to %I', f, current_user);
  end loop;
  for p in select polname, polrelid::regclass as rel from pg_policy
            where polroles && array['svc_gate'::regrole::oid, 'svc_owner'::regrole::oid] loop
    execute format('drop policy %I on %s', p.polname, p.rel);
  end loop;
end
$$;
alter table app_private.invoice_number_counters no force row level security;
alter table app_private.invoice_number_counters disable row level security;
alter table app_private.ticket_number_counters no force row level security;
alter table app_private.ticket_number_counters disable row level security;
alter table app_private.admin_notifications no force row level security;
alter table app_private.admin_notifications disable row level security;
revoke all on all tables in schema app, app_private, api from svc_gate, svc_owner;
revoke all on all sequences in schema app, app_private from svc_owner;
revoke all on all functions in schema app, app_private, api from svc_gate, svc_owner;
revoke all on table public.schema_migrations from svc_gate;
revoke usage on schema app, app_private, api, public from svc_gate;
revoke usage on schema app, app_private, api from svc_owner;
drop function app_private.operator_session();

CREATE OR REPLACE FUNCTION api.begin_request(p_organization_id text, p_token_sha256 text, p_required_roles text[] DEFAULT NULL::text[], p_context boolean DEFAULT true) RETURNS TABLE(outcome text, organization_id text, svc_roles text[], principal jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  c record;
begin
  if p_token_sha256 is null or p_token_sha256 !~ '^[0-9a-f]{64}$' then
    outcome := 'invalid_token';
    return next;
    return;
  end if;
  -- Joins only (no correlated subquery): Citus plans it for the one shard the organization names.
  select cl.id, cl.organization_id, cl.name, cl.license_level, cl.license_source, cl.license_status,
         cl.status, cl.svc_roles, o.status as org_status, o.plan as org_plan, s.id is not null as secret_active,
         app_private.read_flags(cl.svc_roles, o.ticket_module_enabled, o.finance_may_read_tickets, o.hr_may_read_tickets,
                                o.hr_may_read_time_entries) as read_flags
    into c
    from app_private.access_tokens t
    join app.api_clients cl on cl.organization_id = t.organization_id and cl.id = t.client_id
    join app.organizations o on o.id = cl.organization_id
    left join app.client_secrets s on s.organization_id = t.organization_id and s.id = t.secret_id and s.revoked_at is null
   where t.organization_id = p_organization_id and t.token_sha256 = decode(p_token_sha256, 'hex')
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
      perform app_private.set_context(c.organization_id, c.id, c.svc_roles, c.read_flags);
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
$_$;

CREATE OR REPLACE FUNCTION api.authenticate_client(p_organization_id text, p_client_id text, p_secret text) RETURNS TABLE(outcome text, secret_id text, organization_id text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

CREATE OR REPLACE FUNCTION api.access_token_record(p_organization_id text, p_client_id text, p_secret text, p_token_sha256 bytea, p_expires_at timestamp with time zone) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

CREATE OR REPLACE FUNCTION app_private.set_context(p_org text, p_client text, p_roles text[], p_flags text DEFAULT NULL::text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER PARALLEL RESTRICTED
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_client text := coalesce(p_client, '');
  v_roles text := coalesce(array_to_string(p_roles, ','), '');
  v_flags text := p_flags;
begin
  if p_org is not null and v_flags is null then
    select app_private.read_flags(p_roles, o.ticket_module_enabled, o.finance_may_read_tickets, o.hr_may_read_tickets,
                                  o.hr_may_read_time_entries)
      into v_flags from app.organizations o where o.id = p_org;
  end if;
  v_flags := coalesce(v_flags, '');
  perform set_config('svc.organization_id', coalesce(p_org, ''), true),
          set_config('svc.client_id', v_client, true),
          set_config('svc.roles', v_roles, true),
          set_config('svc.read_flags', v_flags, true),
          -- The signature covers exactly the strings stored, as context_ok() reads them back.
          set_config('svc.context_mac', case when p_org is null then '' else app_private.context_mac(p_org, v_client, v_roles, v_flags) end, true);
end
$$;
