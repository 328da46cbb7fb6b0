-- migrate:up

/** Issue 13: a request context the runtime role cannot forge, and base tables it cannot read.
 *
 * Before: api.begin_request(client id, secret id) set svc.organization_id, svc.client_id and
 * svc.roles from two ids that are not secrets, and the policies trusted those settings, which any
 * session can set with set_config. Now:
 *  - the token endpoint records each access token it issues (a SHA-256 of it, with its client,
 *    secret and expiry) after checking the client secret (api.access_token_record), and
 *    api.begin_request takes the presented token and finds that record: a request context needs a
 *    live token of a live client;
 *  - begin_request also signs the context it sets (HMAC-SHA256 over the organization, client,
 *    Roles, the backend pid and the transaction's start time, keyed with app_private.context_keys,
 *    which no runtime role can read), and every accessor the policies use checks that signature:
 *    settings copied with set_config, into this or any other transaction, show nothing;
 *  - the runtime role reads and writes only through the api surface. Tables, views and commands
 *    belong to svc_api (NOLOGIN, no BYPASSRLS): views run with its privileges (security_invoker
 *    off) and commands are security definer functions owned by it, so row policies (now for
 *    svc_api) still apply to every read and write, while svc_runtime has no privilege on any base
 *    table: the Role-restricted columns (custom fields, task priority, …) are out of its reach, and
 *    the field projections of the api views are the only way to them. */

/** 1. The context signature: a key only the owner reads, HMAC-SHA256 (RFC 2104) precomputed pads. */
create table app_private.context_keys (
  id boolean primary key default true constraint context_keys_one_row check (id),
  inner_key bytea not null,
  outer_key bytea not null
);
do $$
declare
  -- 64 random bytes (the SHA-256 block size); gen_random_uuid() draws from pg_strong_random.
  k bytea := sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8'))
          || sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8'));
  i bytea := k;
  o bytea := k;
begin
  for n in 0..63 loop
    i := set_byte(i, n, get_byte(k, n) # 54);  -- 0x36
    o := set_byte(o, n, get_byte(k, n) # 92);  -- 0x5c
  end loop;
  insert into app_private.context_keys (inner_key, outer_key) values (i, o);
end
$$;

/** The signature of a context, bound to this backend and this transaction (pid and start time):
 * copied into another session or a later transaction it no longer matches. Owner-only.
 * PL/pgSQL throughout: its statements' plans are cached per session, where a SQL function with a
 * SET clause is planned again at every call (measured: 41 µs per accessor call against 7 µs). */
create function app_private.context_mac(p_org text, p_client text, p_roles text) returns text
language plpgsql stable security definer parallel restricted
set search_path = pg_catalog
as $$
declare
  k record;
begin
  select inner_key, outer_key into k from app_private.context_keys;
  return encode(sha256(k.outer_key || sha256(k.inner_key || convert_to(concat_ws(chr(31), p_org, p_client, p_roles,
    pg_backend_pid()::text, (extract(epoch from now()) * 1000000)::bigint::text), 'UTF8'))), 'hex');
end
$$;

/** Sets a signed request context (transaction-scoped). Owner-only: callers are begin_request and
 * the worker's delivery checks, after their own standing checks. */
create function app_private.set_context(p_org text, p_client text, p_roles text[]) returns void
language plpgsql volatile security definer parallel restricted
set search_path = pg_catalog
as $$
declare
  v_client text := coalesce(p_client, '');
  v_roles text := coalesce(array_to_string(p_roles, ','), '');
begin
  perform set_config('svc.organization_id', coalesce(p_org, ''), true),
          set_config('svc.client_id', v_client, true),
          set_config('svc.roles', v_roles, true),
          -- The signature covers exactly the strings stored, as context_ok() reads them back.
          set_config('svc.context_mac', case when p_org is null then '' else app_private.context_mac(p_org, v_client, v_roles) end, true);
end
$$;

/** Whether the settings of this transaction are a context begin_request signed. */
create function app_private.context_ok() returns boolean
language plpgsql stable security definer parallel restricted
set search_path = pg_catalog
as $$
declare
  v_mac text := current_setting('svc.context_mac', true);
  k record;
begin
  if v_mac is null or v_mac = '' then
    return false;
  end if;
  -- context_mac's formula, inline: this runs once per policy or view check of every statement.
  select inner_key, outer_key into k from app_private.context_keys;
  return v_mac = encode(sha256(k.outer_key || sha256(k.inner_key || convert_to(concat_ws(chr(31),
    current_setting('svc.organization_id', true), current_setting('svc.client_id', true), current_setting('svc.roles', true),
    pg_backend_pid()::text, (extract(epoch from now()) * 1000000)::bigint::text), 'UTF8'))), 'hex');
end
$$;

/** The accessors every policy reads: nothing unless the context is signed. Parallel restricted: a
 * parallel worker has another pid, so the signature is checked in the leader. */
create or replace function app.current_organization_id() returns text
language plpgsql stable parallel restricted
set search_path = pg_catalog
as $$
begin
  return case when app_private.context_ok() then nullif(current_setting('svc.organization_id', true), '') end;
end
$$;

create or replace function app.current_client_id() returns text
language plpgsql stable parallel restricted
set search_path = pg_catalog
as $$
begin
  return case when app_private.context_ok() then nullif(current_setting('svc.client_id', true), '') end;
end
$$;

create or replace function app.current_roles() returns text[]
language plpgsql stable parallel restricted
set search_path = pg_catalog
as $$
begin
  return case when app_private.context_ok()
              then coalesce(string_to_array(nullif(current_setting('svc.roles', true), ''), ','), '{}'::text[])
              else '{}'::text[] end;
end
$$;

create or replace function app.has_role(role text) returns boolean
language plpgsql stable parallel restricted
set search_path = pg_catalog
as $$
begin
  return role = any (app.current_roles());
end
$$;

create or replace function app.has_any_role(roles text[]) returns boolean
language plpgsql stable parallel restricted
set search_path = pg_catalog
as $$
begin
  return roles && app.current_roles();
end
$$;

/** 2. Access tokens the token endpoint issued: the credential a request context needs. */
create table app_private.access_tokens (
  organization_id text not null,
  token_sha256 bytea not null,
  client_id text not null,
  secret_id text not null,
  expires_at timestamptz not null,
  created_at timestamptz not null default now(),
  primary key (organization_id, token_sha256),
  foreign key (organization_id, client_id) references app.api_clients (organization_id, id) on delete cascade,
  foreign key (organization_id, secret_id) references app.client_secrets (organization_id, id) on delete cascade,
  constraint access_tokens_digest_length check (length(token_sha256) = 32)
);
create index access_tokens_expiry on app_private.access_tokens (expires_at);
alter table app_private.access_tokens enable row level security;
alter table app_private.access_tokens force row level security;

/** Records a token after checking the client secret again (the same checks as the token
 * endpoint's api.authenticate_client): only a holder of a live secret can make a token usable. */
create function api.access_token_record(p_client_id text, p_secret text, p_token_sha256 bytea, p_expires_at timestamptz)
returns boolean
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  a record;
begin
  select * into a from api.authenticate_client(p_client_id, p_secret);
  if a.outcome <> 'ok' or p_expires_at > now() + interval '1 day' then
    return false;
  end if;
  insert into app_private.access_tokens (organization_id, token_sha256, client_id, secret_id, expires_at)
  values (a.organization_id, p_token_sha256, p_client_id, a.secret_id, p_expires_at);
  return true;
end
$$;
grant execute on function api.access_token_record(text, text, bytea, timestamptz) to svc_runtime;

/** Expired token records go (hourly, from the worker's crontab; a DBA may call it). */
create function control.purge_expired_access_tokens() returns integer
language sql volatile
set search_path = pg_catalog
as $$
  with gone as (delete from app_private.access_tokens where expires_at < now() - interval '1 minute' returning 1)
  select count(*)::integer from gone
$$;

/** Every /v1 request starts here: the presented access token (its organization from the verified
 * JWT, so the lookup is one primary-key probe) must be a live record; then the client and
 * organization standing, licence and Roles, in the spec's order; then the signed context. */
drop function api.begin_request(text, text, text[]);
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

/** The worker's delivery checks set a signed context too (after the same standing checks). */
create or replace function app_private.begin_delivery_context(p_client_id text) returns boolean
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  c record;
begin
  select cl.organization_id, cl.status, cl.license_status, cl.svc_roles, o.status as org_status, o.plan as org_plan
    into c
    from app.api_clients cl join app.organizations o on o.id = cl.organization_id
   where cl.id = p_client_id;
  perform app_private.set_context(null, null, null);
  if not found or c.status <> 'active' or c.org_status = 'suspended' or c.license_status <> 'active'
     or c.org_plan in ('trial', 'team') then
    return false;
  end if;
  perform app_private.set_context(c.organization_id, p_client_id, c.svc_roles);
  return true;
end
$$;

/** The preflight of slow writes asks whether a key already has a stored response. */
create function api.idempotency_stored(p_method text, p_route text, p_key text) returns boolean
language sql stable
set search_path = pg_catalog
as $$
  select exists (select from app.idempotency_keys i
                  where i.organization_id = app.current_organization_id() and i.client_id = app.current_client_id()
                    and i.method = p_method and i.route = p_route and i.key = p_key and i.expires_at > now())
$$;
grant execute on function api.idempotency_stored(text, text, text) to svc_runtime;

/** 3. svc_api: owner of the surface, subject to every row policy; never logs in. */
do $$
begin
  if not exists (select from pg_roles where rolname = 'svc_api') then
    create role svc_api nologin nosuperuser nobypassrls nocreatedb nocreaterole noinherit;
  end if;
end
$$;
grant usage on schema app, app_private, api to svc_api;

do $$
declare
  r record;
begin
  -- What svc_runtime could do to tables and columns, svc_api now does (and svc_runtime no longer).
  for r in select format('%I.%I', n.nspname, c.relname) as rel, a.privilege_type as priv
             from pg_class c join pg_namespace n on n.oid = c.relnamespace, aclexplode(c.relacl) a
            where n.nspname in ('app', 'app_private') and c.relkind in ('r', 'p')
              and a.grantee = 'svc_runtime'::regrole loop
    execute format('grant %s on %s to svc_api', r.priv, r.rel);
    execute format('revoke %s on %s from svc_runtime', r.priv, r.rel);
  end loop;
  for r in select format('%I.%I', n.nspname, c.relname) as rel, a.privilege_type as priv, format('%I', att.attname) as col
             from pg_attribute att join pg_class c on c.oid = att.attrelid join pg_namespace n on n.oid = c.relnamespace,
                  aclexplode(att.attacl) a
            where n.nspname in ('app', 'app_private') and att.attnum > 0 and not att.attisdropped
              and a.grantee = 'svc_runtime'::regrole loop
    execute format('grant %s (%s) on %s to svc_api', r.priv, r.col, r.rel);
    execute format('revoke %s (%s) on %s from svc_runtime', r.priv, r.col, r.rel);
  end loop;
  -- Every function svc_runtime could execute, svc_api can.
  for r in select p.oid::regprocedure as fn
             from pg_proc p join pg_namespace n on n.oid = p.pronamespace, aclexplode(p.proacl) a
            where n.nspname in ('app', 'app_private', 'api') and a.grantee = 'svc_runtime'::regrole loop
    execute format('grant execute on function %s to svc_api', r.fn);
  end loop;
  -- Row policies now name the role that reads and writes the tables.
  for r in select format('%I', p.polname) as pol, format('%I.%I', n.nspname, c.relname) as rel
             from pg_policy p join pg_class c on c.oid = p.polrelid join pg_namespace n on n.oid = c.relnamespace
            where n.nspname in ('app', 'app_private') and 'svc_runtime'::regrole = any (p.polroles) loop
    execute format('alter policy %s on %s to svc_api', r.pol, r.rel);
  end loop;
  -- Views run with svc_api's privileges (and its row policies); svc_runtime keeps SELECT on them.
  for r in select format('%I.%I', n.nspname, c.relname) as rel
             from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where n.nspname = 'api' and c.relkind = 'v' loop
    execute format('alter view %s owner to svc_api', r.rel);
    execute format('alter view %s set (security_invoker = false)', r.rel);
    execute format('grant select on %s to svc_runtime', r.rel);
  end loop;
  -- Commands run as svc_api: security definer, owned by it. (Those already security definer stay
  -- the owner's: they are the ones that must see across policies, such as begin_request.)
  for r in select p.oid::regprocedure as fn
             from pg_proc p join pg_namespace n on n.oid = p.pronamespace
            where n.nspname = 'api' and not p.prosecdef loop
    execute format('alter function %s owner to svc_api', r.fn);
    execute format('alter function %s security definer', r.fn);
  end loop;
end
$$;

/** Functions views call per row run as the caller (svc_runtime): the one that reads a table
 * becomes svc_api's. The rest of what svc_runtime executed served the invoker commands; it keeps
 * only the accessors, the wire-format helpers the views call and the two the server's own
 * queries use (normalize_email, new_id). */
alter function app_private.readable_custom_fields(text, text, jsonb) owner to svc_api;
alter function app_private.readable_custom_fields(text, text, jsonb) security definer;
-- The worker's read check (run as svc_runtime inside client_may_read) reads a payment's table too.
alter function app_private.event_resource_visible(text, text, text) owner to svc_api;
alter function app_private.event_resource_visible(text, text, text) security definer;
do $$
declare
  r record;
begin
  for r in select p.oid::regprocedure as fn
             from pg_proc p join pg_namespace n on n.oid = p.pronamespace, aclexplode(p.proacl) a
            where n.nspname = 'app_private' and a.grantee = 'svc_runtime'::regrole
              and p.proname not in ('iso_timestamp', 'money_text', 'readable_custom_fields', 'member_hr_profile',
                                    'context_ok', 'may_read_time_entries', 'event_resource_visible',
                                    -- row policies call it, with the querying user's EXECUTE privilege
                                    'integration_visible',
                                    -- called by the server's own queries
                                    'normalize_email', 'new_id') loop
    execute format('revoke execute on function %s from svc_runtime', r.fn);
  end loop;
end
$$;
grant execute on function app_private.context_ok() to svc_runtime, svc_api;

/** The accounting export reads the invoice document as finance would: the api views apply
 * policies for svc_api, so it sets the organization's context (no client) first. */
create or replace function app_private.accounting_sync_load(p_invoice text) returns jsonb
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  v_org text;
  v_out jsonb;
begin
  select i.organization_id into v_org from app.invoices i where i.id = p_invoice;
  if not found then
    return null;
  end if;
  perform app_private.set_context(v_org, null, '{finance}');
  select jsonb_build_object('invoice', v.doc, 'provider', c.provider, 'connection_id', c.id, 'connection_status', c.status,
                            'sync_status', i.sync_status, 'external_reference', i.sync_external_reference,
                            'customer', jsonb_build_object('id', cu.id, 'name', cu.name, 'email', cu.delivery_email))
    into v_out
    from app.invoices i
    join api.invoices v on v.id = i.id
    join app.integration_connections c on c.organization_id = i.organization_id and c.id = i.sync_connection_id
    join app.customers cu on cu.organization_id = i.organization_id and cu.id = i.customer_id
   where i.organization_id = v_org and i.id = p_invoice;
  perform app_private.set_context(null, null, null);
  return v_out;
end
$$;

/** Approval decisions come from the control plane (the owner), never from a command: the runtime
 * role reaches tables only as svc_api now, so both are refused. */
create or replace function app_private.tg_time_entries__lock() returns trigger
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  if old.deleted_at is not null then
    perform app_private.raise('SVN04', 'TIME_ENTRY_NOT_FOUND', 'the time entry was deleted');
  end if;
  if old.status in ('draft', 'rejected') then
    if new.status not in (old.status, 'submitted') and new.status <> old.status then
      perform app_private.raise('SVR05', 'APPROVAL_REQUIRED', 'only a named user can approve or reject time');
    end if;
    return new;
  end if;
  -- submitted: only the approval decision moves it; approved: final.
  if old.status = 'submitted' and new.status in ('approved', 'rejected')
     and (new.member_id, new.project_id, new.task_id, new.work_date, new.minutes, new.billable, new.notes,
          new.external_id, new.deleted_at)
         is not distinct from (old.member_id, old.project_id, old.task_id, old.work_date, old.minutes, old.billable,
                               old.notes, old.external_id, old.deleted_at)
     and current_user not in ('svc_runtime', 'svc_api') then
    return new;
  end if;
  perform app_private.raise('SVC17', 'TIME_ENTRY_LOCKED',
    format('a %s time entry cannot be changed or deleted', old.status));
end
$$;

-- migrate:down
-- Reverting would hand the base tables back to a role whose context can be forged.
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'restore a backup taken before 20261124000300'); end $$;
