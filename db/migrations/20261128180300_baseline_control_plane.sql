-- migrate:up

/** Baseline (issue 38), area 3 of 15. The control plane: API clients and their secrets, access tokens and signing keys, rate limits, idempotency keys, service status, custom-field schemas.
 * The current definitions that migrations 20261122000100 to 20261205003400 built (git history before
 * the baseline), as pg_dump writes them; db/README.md says how they were made and compared. */
SET LOCAL check_function_bodies = false;
SET LOCAL client_min_messages = warning;
SELECT pg_catalog.set_config('search_path', '', true);

-- function api.access_token_record(text, text, text, bytea, timestamp with time zone)

CREATE FUNCTION api.access_token_record(p_organization_id text, p_client_id text, p_secret text, p_token_sha256 bytea, p_expires_at timestamp with time zone) RETURNS boolean
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

-- function api.authenticate_client(text, text, text)

CREATE FUNCTION api.authenticate_client(p_organization_id text, p_client_id text, p_secret text) RETURNS TABLE(outcome text, secret_id text, organization_id text)
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

-- function api.client_organization(text)

CREATE FUNCTION api.client_organization(p_client_id text) RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select d.organization_id from app_private.client_directory d where d.client_id = p_client_id $$;

ALTER FUNCTION api.client_organization(p_client_id text) OWNER TO svc_api;

-- function api.idempotency_claim(text, text, text, text)

CREATE FUNCTION api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text) RETURNS TABLE(state text, response_status integer, response_headers jsonb, response_body text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  k record;
  -- Read once: each call verifies the context's HMAC again (13 µs), and this ran eight of them.
  v_org text := app.current_organization_id();
  v_client text := app.current_client_id();
  v_now timestamptz := now();
  v_expires_at timestamptz := now() + interval '24 hours';
begin
  if v_client is null or v_org is null then
    perform app_private.raise('SV500', 'CONTEXT_MISSING', 'no request context');
  end if;
  if not pg_try_advisory_xact_lock(hashtextextended(
       concat_ws(chr(31), v_client, p_method, p_route, p_key), 0)) then
    state := 'in_flight';
    return next;
    return;
  end if;
  select * into k from app.idempotency_keys i
   where i.organization_id = v_org and i.client_id = v_client
     and i.method = p_method and i.route = p_route and i.key = p_key;
  if found and k.expires_at > now() then
    if k.fingerprint <> p_fingerprint then
      state := 'mismatch';
    else
      state := 'replay';
      response_status := k.response_status;
      response_headers := k.response_headers;
      response_body := k.response_body;
    end if;
    return next;
    return;
  end if;
  insert into app.idempotency_keys as i (organization_id, client_id, method, route, key, fingerprint)
  values (v_org, v_client, p_method, p_route, p_key, p_fingerprint)
  on conflict (organization_id, client_id, method, route, key) do update
    set fingerprint = excluded.fingerprint, response_status = null, response_headers = null,
        response_body = null, created_at = v_now, expires_at = v_expires_at;
  state := 'claimed';
  -- The command sent in the same round trip as this claim runs only under this mark (its
  -- statement's one-time filter): a replay, a mismatch or a key in flight runs nothing.
  perform set_config('svc.claimed', 'yes', true);
  return next;
end
$$;

ALTER FUNCTION api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text) OWNER TO svc_api;

-- function api.idempotency_complete(text, text, text, integer, jsonb, text)

CREATE FUNCTION api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  update app.idempotency_keys
     set response_status = p_status, response_headers = p_headers, response_body = p_body
   where organization_id = v__organization_id and client_id = app.current_client_id()
     and method = p_method and route = p_route and key = p_key;
end
$$;

ALTER FUNCTION api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) OWNER TO svc_api;

-- function api.idempotency_stored(text, text, text)

CREATE FUNCTION api.idempotency_stored(p_method text, p_route text, p_key text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  return exists (select from app.idempotency_keys i
                  where i.organization_id = v__organization_id and i.client_id = app.current_client_id()
                    and i.method = p_method and i.route = p_route and i.key = p_key and i.expires_at > now());
end
$$;

ALTER FUNCTION api.idempotency_stored(p_method text, p_route text, p_key text) OWNER TO svc_api;

-- function api.rate_limit_lease(text, bigint, integer, integer)

CREATE FUNCTION api.rate_limit_lease(p_key text, p_window bigint, p_want integer, p_limit integer) RETURNS TABLE(granted integer, hits integer, window_start bigint)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  b record;
begin
  loop
    select r.window_start, r.hits into b from app_private.rate_limit_buckets r where r.key = p_key for update;
    if found then
      exit;
    end if;
    insert into app_private.rate_limit_buckets as r (key, window_start, hits) values (p_key, p_window, 0)
    on conflict (key) do nothing;
  end loop;
  window_start := greatest(b.window_start, p_window);
  hits := case when b.window_start = window_start then b.hits else 0 end;
  -- What the callers wait for, or an eighth of what is left (at most 100), whichever is more.
  granted := greatest(0, least(greatest(p_want, least(100, (p_limit - hits) / 8)), p_limit - hits));
  hits := hits + granted;
  update app_private.rate_limit_buckets r set window_start = rate_limit_lease.window_start, hits = rate_limit_lease.hits
   where r.key = p_key;
  return next;
end
$$;

-- function api.rate_limit_release(text[], bigint[], integer[])

CREATE FUNCTION api.rate_limit_release(p_keys text[], p_windows bigint[], p_unused integer[]) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  update app_private.rate_limit_buckets b
     set hits = greatest(0, b.hits - u.n)
    from unnest(p_keys, p_windows, p_unused) as u(k, w, n)
   where b.key = u.k and b.window_start = u.w
$$;

-- function api.signing_key_bootstrap(text, text, jsonb, text)

CREATE FUNCTION api.signing_key_bootstrap(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform pg_advisory_xact_lock(hashtext('svc.signing_key_bootstrap'));
  if not exists (select from app_private.signing_keys where retired_at is null) then
    insert into app_private.signing_keys (kid, alg, public_jwk, private_jwk_sealed)
    values (p_kid, p_alg, p_public_jwk, p_private_jwk_sealed);
  end if;
end
$$;

-- function api.signing_keys_current()

CREATE FUNCTION api.signing_keys_current() RETURNS TABLE(kid text, alg text, public_jwk jsonb, private_jwk_sealed text, created_at timestamp with time zone)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  select k.kid, k.alg, k.public_jwk, k.private_jwk_sealed, k.created_at
    from app_private.signing_keys k
   where k.retired_at is null
   order by k.created_at desc, k.kid desc
$$;

-- function app.current_client_id()

CREATE FUNCTION app.current_client_id() RETURNS text
    LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return case when app_private.context_ok() then nullif(current_setting('svc.client_id', true), '') end;
end
$$;

-- function app_private.client_may_read(text, text, text, text, text)

CREATE FUNCTION app_private.client_may_read(p_organization_id text, p_client text, p_type text, p_resource_type text, p_resource_id text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_visible boolean;
begin
  if current_setting('svc.delivery_client', true) is distinct from p_client
     or current_setting('svc.client_id', true) is distinct from p_client
     or current_setting('svc.organization_id', true) is distinct from p_organization_id
     or not app_private.context_ok() then
    perform set_config('svc.delivery_client', '', true);
    if not app_private.begin_delivery_context(p_organization_id, p_client) then
      return false;
    end if;
    perform set_config('svc.delivery_client', p_client, true);
  end if;
  perform set_config('role', 'svc_runtime', true);
  v_visible := app_private.event_resource_visible(p_type, p_resource_type, p_resource_id);
  perform set_config('role', 'none', true);
  return v_visible;
end
$$;

-- function app_private.random_secret(text)

CREATE FUNCTION app_private.random_secret(prefix text) RETURNS text
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  -- Two v4 UUIDs from the server's strong random source: 244 random bits.
  select prefix || translate(rtrim(encode(decode(
           replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''), 'hex'),
           'base64'), '='), '+/', '-_')
$$;

-- function app_private.tg__client_of_parent()

CREATE FUNCTION app_private.tg__client_of_parent() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
begin
  -- On Citus the trigger fires on a shard, whose name ends in its shard id.
  case regexp_replace(tg_table_name, '_[0-9]+$', '')
    when 'run_events', 'run_tool_calls' then
      select p.client_id into new.client_id from app.runs p where p.organization_id = new.organization_id and p.id = new.run_id;
    when 'report_results' then
      select p.client_id into new.client_id from app.report_runs p where p.organization_id = new.organization_id and p.id = new.run_id;
    when 'webhook_delivery_attempts' then
      select p.client_id into new.client_id from app.webhook_deliveries p where p.organization_id = new.organization_id and p.id = new.delivery_id;
    when 'conversation_messages' then
      select p.client_id into new.client_id from app.conversations p where p.organization_id = new.organization_id and p.id = new.conversation_id;
  end case;
  return new;
end
$_$;

-- function app_private.tg_api_clients__plan_allows_clients()

CREATE FUNCTION app_private.tg_api_clients__plan_allows_clients() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_plan text;
begin
  select plan into v_plan from app.organizations where id = new.organization_id;
  if v_plan in ('trial', 'team') and new.status <> 'deleted' and new.license_status = 'active' then
    perform app_private.raise('SVL01', 'PLAN_DOES_NOT_SUPPORT_API_CLIENTS',
      format('%s plans do not support API Clients', initcap(v_plan)));
  end if;
  return new;
end
$$;

-- function app_private.tg_api_clients__touch()

CREATE FUNCTION app_private.tg_api_clients__touch() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  new.updated_at := now();
  if (new.svc_roles, new.status, new.license_status, new.license_level)
     is distinct from (old.svc_roles, old.status, old.license_status, old.license_level) then
    new.authorization_version := old.authorization_version + 1;
  end if;
  if old.status = 'deleted' and new.status <> 'deleted' then
    perform app_private.raise('SVC13', 'CLIENT_DELETED', 'a deleted client cannot be changed');
  end if;
  return new;
end
$$;

-- function app_private.tg_client_secrets__bump_client_version()

CREATE FUNCTION app_private.tg_client_secrets__bump_client_version() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  update app.api_clients set authorization_version = authorization_version + 1
   where organization_id = new.organization_id and id = new.client_id;
  return null;
end
$$;

-- function control.client_create(text, text, text, text[], text)

CREATE FUNCTION control.client_create(p_org text, p_name text, p_license_level text, p_roles text[], p_description text DEFAULT NULL::text) RETURNS TABLE(client_id text, client_secret text, secret_id text)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function control.client_delete(text)

CREATE FUNCTION control.client_delete(p_client text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := (select d.organization_id from app_private.client_directory d where d.client_id = p_client);
  v_now timestamptz := now();
begin
  perform control.client_set_status(p_client, '{active,disabled}', 'deleted');
  update app.api_clients set license_status = 'released' where organization_id = v_org and id = p_client;
  update app.client_secrets set revoked_at = v_now where organization_id = v_org and client_id = p_client and revoked_at is null;
end
$$;

-- function control.client_disable(text)

CREATE FUNCTION control.client_disable(p_client text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select control.client_set_status(p_client, '{active}', 'disabled') $$;

-- function control.client_enable(text)

CREATE FUNCTION control.client_enable(p_client text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select control.client_set_status(p_client, '{disabled}', 'active') $$;

-- function control.client_release_license(text)

CREATE FUNCTION control.client_release_license(p_client text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := (select d.organization_id from app_private.client_directory d where d.client_id = p_client);
begin
  update app.api_clients set license_status = 'released' where organization_id = v_org and id = p_client and status <> 'deleted';
  perform app_private.require_found(found, 'CLIENT_NOT_FOUND', p_client);
end
$$;

-- function control.client_revoke_secret(text, text)

CREATE FUNCTION control.client_revoke_secret(p_client text, p_secret_id text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := (select d.organization_id from app_private.client_directory d where d.client_id = p_client);
begin
  update app.client_secrets set revoked_at = now()
   where organization_id = v_org and id = p_secret_id and client_id = p_client and revoked_at is null;
  perform app_private.require_found(found, 'SECRET_NOT_FOUND', p_secret_id);
end
$$;

-- function control.client_rotate_secret(text)

CREATE FUNCTION control.client_rotate_secret(p_client text) RETURNS TABLE(client_secret text, secret_id text)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := (select d.organization_id from app_private.client_directory d where d.client_id = p_client);
  c record;
  v_slot smallint;
begin
  select id, organization_id into c from app.api_clients where organization_id = v_org and id = p_client and status <> 'deleted' for update;
  perform app_private.require_found(found, 'CLIENT_NOT_FOUND', p_client);
  select s into v_slot from unnest(array[1, 2]::smallint[]) s
   where not exists (select from app.client_secrets cs where cs.organization_id = v_org and cs.client_id = p_client and cs.slot = s and cs.revoked_at is null)
   order by s limit 1;
  if v_slot is null then
    perform app_private.raise('SVC10', 'TOO_MANY_ACTIVE_SECRETS',
      'a client has at most two active secrets: revoke one before rotating');
  end if;
  client_secret := app_private.random_secret('svcsk_');
  insert into app.client_secrets (organization_id, client_id, slot, secret_sha256)
  values (c.organization_id, p_client, v_slot, sha256(convert_to(client_secret, 'UTF8')))
  returning id into secret_id;
  return next;
end
$$;

-- function control.client_set_roles(text, text[])

CREATE FUNCTION control.client_set_roles(p_client text, p_roles text[]) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := (select d.organization_id from app_private.client_directory d where d.client_id = p_client);
begin
  update app.api_clients set svc_roles = p_roles where organization_id = v_org and id = p_client and status <> 'deleted';
  perform app_private.require_found(found, 'CLIENT_NOT_FOUND', p_client);
end
$$;

-- function control.client_set_status(text, text[], text)

CREATE FUNCTION control.client_set_status(p_client text, p_from text[], p_to text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := (select d.organization_id from app_private.client_directory d where d.client_id = p_client);
  v_now timestamptz := now();
begin
  update app.api_clients
     set status = p_to, deleted_at = case when p_to = 'deleted' then v_now end
   where organization_id = v_org and id = p_client and status = any (p_from);
  if not found then
    perform app_private.require_found(exists (select from app.api_clients where organization_id = v_org and id = p_client and status <> 'deleted'),
                                      'CLIENT_NOT_FOUND', p_client);
    perform app_private.raise('SVC11', 'CLIENT_STATE_CONFLICT', format('the client cannot become %s from its current state', p_to));
  end if;
end
$$;

-- function control.purge_expired_access_tokens()

CREATE FUNCTION control.purge_expired_access_tokens() RETURNS integer
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  with gone as (delete from app_private.access_tokens where expires_at < now() - interval '1 minute' returning 1)
  select count(*)::integer from gone
$$;

-- function control.purge_expired_idempotency_keys()

CREATE FUNCTION control.purge_expired_idempotency_keys() RETURNS integer
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  with gone as (delete from app.idempotency_keys where expires_at < now() returning 1)
  select count(*)::integer from gone
$$;

-- function control.signing_key_add(text, text, jsonb, text)

CREATE FUNCTION control.signing_key_add(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  insert into app_private.signing_keys (kid, alg, public_jwk, private_jwk_sealed)
  values (p_kid, p_alg, p_public_jwk, p_private_jwk_sealed)
$$;

-- function control.signing_key_retire(text)

CREATE FUNCTION control.signing_key_retire(p_kid text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if (select count(*) from app_private.signing_keys where retired_at is null and kid <> p_kid) = 0 then
    perform app_private.raise('SVC12', 'LAST_SIGNING_KEY', 'add a new signing key before retiring the last one');
  end if;
  update app_private.signing_keys set retired_at = now() where kid = p_kid and retired_at is null;
  perform app_private.require_found(found, 'SIGNING_KEY_NOT_FOUND', p_kid);
end
$$;

SET LOCAL default_tablespace = '';

SET LOCAL default_table_access_method = heap;

-- table app.api_clients

CREATE TABLE app.api_clients (
    id text DEFAULT app_private.new_id('apic'::text) NOT NULL,
    organization_id text NOT NULL,
    name text NOT NULL,
    description text,
    license_level text NOT NULL,
    license_source text NOT NULL,
    license_status text DEFAULT 'active'::text NOT NULL,
    status text DEFAULT 'active'::text NOT NULL,
    svc_roles text[] NOT NULL,
    authorization_version integer DEFAULT 1 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    deleted_at timestamp with time zone,
    CONSTRAINT api_clients_deleted_at_iff_deleted CHECK (((status = 'deleted'::text) = (deleted_at IS NOT NULL))),
    CONSTRAINT api_clients_included_license_is_manager CHECK (((license_source <> 'included'::text) OR (license_level = 'manager'::text))),
    CONSTRAINT api_clients_license_level_valid CHECK ((license_level = ANY (ARRAY['regular'::text, 'manager'::text]))),
    CONSTRAINT api_clients_license_source_valid CHECK ((license_source = ANY (ARRAY['included'::text, 'purchased'::text]))),
    CONSTRAINT api_clients_license_status_valid CHECK ((license_status = ANY (ARRAY['active'::text, 'released'::text]))),
    CONSTRAINT api_clients_name_length CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT api_clients_roles_allowed_by_license CHECK (((cardinality(svc_roles) >= 1) AND
CASE license_level
    WHEN 'regular'::text THEN (svc_roles <@ ARRAY['member'::text])
    ELSE (svc_roles <@ ARRAY['member'::text, 'manager'::text, 'finance'::text, 'hr'::text])
END)),
    CONSTRAINT api_clients_status_valid CHECK ((status = ANY (ARRAY['active'::text, 'disabled'::text, 'deleted'::text])))
);

ALTER TABLE ONLY app.api_clients FORCE ROW LEVEL SECURITY;

-- table app.client_secrets

CREATE TABLE app.client_secrets (
    id text DEFAULT app_private.new_id('csec'::text) NOT NULL,
    organization_id text NOT NULL,
    client_id text NOT NULL,
    slot smallint NOT NULL,
    secret_sha256 bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    revoked_at timestamp with time zone,
    CONSTRAINT client_secrets_digest_length CHECK ((length(secret_sha256) = 32)),
    CONSTRAINT client_secrets_slot_valid CHECK ((slot = ANY (ARRAY[1, 2])))
);

ALTER TABLE ONLY app.client_secrets FORCE ROW LEVEL SECURITY;

-- table app.idempotency_keys

CREATE TABLE app.idempotency_keys (
    organization_id text NOT NULL,
    client_id text NOT NULL,
    method text NOT NULL,
    route text NOT NULL,
    key text NOT NULL,
    fingerprint text NOT NULL,
    response_status integer,
    response_headers jsonb,
    response_body text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone DEFAULT (now() + '24:00:00'::interval) NOT NULL,
    CONSTRAINT idempotency_keys_key_format CHECK ((key ~ '^[\x20-\x7e]{1,255}$'::text))
);

ALTER TABLE ONLY app.idempotency_keys FORCE ROW LEVEL SECURITY;

-- table app_private.access_tokens

CREATE TABLE app_private.access_tokens (
    organization_id text NOT NULL,
    token_sha256 bytea NOT NULL,
    client_id text NOT NULL,
    secret_id text NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT access_tokens_digest_length CHECK ((length(token_sha256) = 32))
);

ALTER TABLE ONLY app_private.access_tokens FORCE ROW LEVEL SECURITY;

-- table app_private.client_directory

CREATE TABLE app_private.client_directory (
    client_id text NOT NULL,
    organization_id text NOT NULL
);

-- table app_private.rate_limit_buckets

CREATE UNLOGGED TABLE app_private.rate_limit_buckets (
    key text NOT NULL,
    window_start bigint NOT NULL,
    hits integer NOT NULL
);

-- table app_private.signing_keys

CREATE TABLE app_private.signing_keys (
    kid text NOT NULL,
    alg text NOT NULL,
    public_jwk jsonb NOT NULL,
    private_jwk_sealed text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    retired_at timestamp with time zone
);

-- constraint app.api_clients api_clients_pkey

ALTER TABLE ONLY app.api_clients
    ADD CONSTRAINT api_clients_pkey PRIMARY KEY (organization_id, id);

-- constraint app.client_secrets client_secrets_pkey

ALTER TABLE ONLY app.client_secrets
    ADD CONSTRAINT client_secrets_pkey PRIMARY KEY (organization_id, id);

-- constraint app.idempotency_keys idempotency_keys_pkey

ALTER TABLE ONLY app.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (organization_id, client_id, method, route, key);

-- constraint app_private.access_tokens access_tokens_pkey

ALTER TABLE ONLY app_private.access_tokens
    ADD CONSTRAINT access_tokens_pkey PRIMARY KEY (organization_id, token_sha256);

-- constraint app_private.client_directory client_directory_pkey

ALTER TABLE ONLY app_private.client_directory
    ADD CONSTRAINT client_directory_pkey PRIMARY KEY (client_id);

-- constraint app_private.rate_limit_buckets rate_limit_buckets_pkey

ALTER TABLE ONLY app_private.rate_limit_buckets
    ADD CONSTRAINT rate_limit_buckets_pkey PRIMARY KEY (key);

-- constraint app_private.signing_keys signing_keys_pkey

ALTER TABLE ONLY app_private.signing_keys
    ADD CONSTRAINT signing_keys_pkey PRIMARY KEY (kid);

-- index app.api_clients_id

CREATE INDEX api_clients_id ON app.api_clients USING btree (id);

-- index app.api_clients_name_unique

CREATE UNIQUE INDEX api_clients_name_unique ON app.api_clients USING btree (organization_id, lower(name)) WHERE (status <> 'deleted'::text);

-- index app.api_clients_one_included_license

CREATE UNIQUE INDEX api_clients_one_included_license ON app.api_clients USING btree (organization_id) WHERE ((license_source = 'included'::text) AND (license_status = 'active'::text) AND (status <> 'deleted'::text));

-- index app.client_secrets_client

CREATE INDEX client_secrets_client ON app.client_secrets USING btree (client_id);

-- index app.client_secrets_id

CREATE INDEX client_secrets_id ON app.client_secrets USING btree (id);

-- index app.client_secrets_two_active

CREATE UNIQUE INDEX client_secrets_two_active ON app.client_secrets USING btree (organization_id, client_id, slot) WHERE (revoked_at IS NULL);

-- index app.idempotency_keys_expiry

CREATE INDEX idempotency_keys_expiry ON app.idempotency_keys USING btree (expires_at);

-- index app_private.access_tokens_expiry

CREATE INDEX access_tokens_expiry ON app_private.access_tokens USING btree (expires_at);

-- trigger app.api_clients _100_plan_allows_clients

CREATE TRIGGER _100_plan_allows_clients BEFORE INSERT ON app.api_clients FOR EACH ROW EXECUTE FUNCTION app_private.tg_api_clients__plan_allows_clients();

-- trigger app.api_clients _100_touch

CREATE TRIGGER _100_touch BEFORE UPDATE ON app.api_clients FOR EACH ROW EXECUTE FUNCTION app_private.tg_api_clients__touch();

-- trigger app.client_secrets _900_bump_client_version

CREATE TRIGGER _900_bump_client_version AFTER INSERT OR UPDATE ON app.client_secrets FOR EACH ROW EXECUTE FUNCTION app_private.tg_client_secrets__bump_client_version();

-- fk constraint app.api_clients api_clients_organization_id_fkey

ALTER TABLE ONLY app.api_clients
    ADD CONSTRAINT api_clients_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE RESTRICT;

-- fk constraint app.client_secrets client_secrets_client_fkey

ALTER TABLE ONLY app.client_secrets
    ADD CONSTRAINT client_secrets_client_fkey FOREIGN KEY (organization_id, client_id) REFERENCES app.api_clients(organization_id, id) ON DELETE RESTRICT;

-- fk constraint app.client_secrets client_secrets_organization_id_fkey

ALTER TABLE ONLY app.client_secrets
    ADD CONSTRAINT client_secrets_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE RESTRICT;

-- fk constraint app.idempotency_keys idempotency_keys_client_fkey

ALTER TABLE ONLY app.idempotency_keys
    ADD CONSTRAINT idempotency_keys_client_fkey FOREIGN KEY (organization_id, client_id) REFERENCES app.api_clients(organization_id, id) ON DELETE CASCADE;

-- fk constraint app.idempotency_keys idempotency_keys_organization_id_fkey

ALTER TABLE ONLY app.idempotency_keys
    ADD CONSTRAINT idempotency_keys_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app_private.access_tokens access_tokens_organization_id_client_id_fkey

ALTER TABLE ONLY app_private.access_tokens
    ADD CONSTRAINT access_tokens_organization_id_client_id_fkey FOREIGN KEY (organization_id, client_id) REFERENCES app.api_clients(organization_id, id) ON DELETE CASCADE;

-- fk constraint app_private.access_tokens access_tokens_organization_id_secret_id_fkey

ALTER TABLE ONLY app_private.access_tokens
    ADD CONSTRAINT access_tokens_organization_id_secret_id_fkey FOREIGN KEY (organization_id, secret_id) REFERENCES app.client_secrets(organization_id, id) ON DELETE CASCADE;

-- policy app.api_clients Clients see only themselves

CREATE POLICY "Clients see only themselves" ON app.api_clients FOR SELECT TO svc_api USING (((id = ( SELECT app.current_client_id() AS current_client_id)) AND (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));

-- policy app.idempotency_keys Clients use only their own idempotency keys

CREATE POLICY "Clients use only their own idempotency keys" ON app.idempotency_keys TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id)))) WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- row security app.api_clients

ALTER TABLE app.api_clients ENABLE ROW LEVEL SECURITY;

-- row security app.client_secrets

ALTER TABLE app.client_secrets ENABLE ROW LEVEL SECURITY;

-- row security app.idempotency_keys

ALTER TABLE app.idempotency_keys ENABLE ROW LEVEL SECURITY;

-- row security app_private.access_tokens

ALTER TABLE app_private.access_tokens ENABLE ROW LEVEL SECURITY;

-- acl api.FUNCTION access_token_record(p_organization_id text, p_client_id text, p_secret text, p_token_sha256 bytea, p_expires_at timestamp with time zone)

REVOKE ALL ON FUNCTION api.access_token_record(p_organization_id text, p_client_id text, p_secret text, p_token_sha256 bytea, p_expires_at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION api.access_token_record(p_organization_id text, p_client_id text, p_secret text, p_token_sha256 bytea, p_expires_at timestamp with time zone) TO svc_runtime;

-- acl api.FUNCTION authenticate_client(p_organization_id text, p_client_id text, p_secret text)

REVOKE ALL ON FUNCTION api.authenticate_client(p_organization_id text, p_client_id text, p_secret text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.authenticate_client(p_organization_id text, p_client_id text, p_secret text) TO svc_runtime;

-- acl api.FUNCTION client_organization(p_client_id text)

REVOKE ALL ON FUNCTION api.client_organization(p_client_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.client_organization(p_client_id text) TO svc_runtime;

-- acl api.FUNCTION idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text)

REVOKE ALL ON FUNCTION api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text) TO svc_runtime;

-- acl api.FUNCTION idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text)

REVOKE ALL ON FUNCTION api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) TO svc_runtime;

-- acl api.FUNCTION idempotency_stored(p_method text, p_route text, p_key text)

REVOKE ALL ON FUNCTION api.idempotency_stored(p_method text, p_route text, p_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.idempotency_stored(p_method text, p_route text, p_key text) TO svc_runtime;

-- acl api.FUNCTION rate_limit_lease(p_key text, p_window bigint, p_want integer, p_limit integer)

REVOKE ALL ON FUNCTION api.rate_limit_lease(p_key text, p_window bigint, p_want integer, p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION api.rate_limit_lease(p_key text, p_window bigint, p_want integer, p_limit integer) TO svc_runtime;

-- acl api.FUNCTION rate_limit_release(p_keys text[], p_windows bigint[], p_unused integer[])

REVOKE ALL ON FUNCTION api.rate_limit_release(p_keys text[], p_windows bigint[], p_unused integer[]) FROM PUBLIC;
GRANT ALL ON FUNCTION api.rate_limit_release(p_keys text[], p_windows bigint[], p_unused integer[]) TO svc_runtime;

-- acl api.FUNCTION signing_key_bootstrap(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text)

REVOKE ALL ON FUNCTION api.signing_key_bootstrap(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.signing_key_bootstrap(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text) TO svc_runtime;
GRANT ALL ON FUNCTION api.signing_key_bootstrap(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text) TO svc_api;

-- acl api.FUNCTION signing_keys_current()

REVOKE ALL ON FUNCTION api.signing_keys_current() FROM PUBLIC;
GRANT ALL ON FUNCTION api.signing_keys_current() TO svc_runtime;
GRANT ALL ON FUNCTION api.signing_keys_current() TO svc_api;

-- acl app.FUNCTION current_client_id()

REVOKE ALL ON FUNCTION app.current_client_id() FROM PUBLIC;
GRANT ALL ON FUNCTION app.current_client_id() TO svc_runtime;
GRANT ALL ON FUNCTION app.current_client_id() TO svc_api;
GRANT ALL ON FUNCTION app.current_client_id() TO svc_reporting;

-- acl app_private.FUNCTION client_may_read(p_organization_id text, p_client text, p_type text, p_resource_type text, p_resource_id text)

REVOKE ALL ON FUNCTION app_private.client_may_read(p_organization_id text, p_client text, p_type text, p_resource_type text, p_resource_id text) FROM PUBLIC;

-- acl app_private.FUNCTION random_secret(prefix text)

REVOKE ALL ON FUNCTION app_private.random_secret(prefix text) FROM PUBLIC;

-- acl app_private.FUNCTION tg__client_of_parent()

REVOKE ALL ON FUNCTION app_private.tg__client_of_parent() FROM PUBLIC;

-- acl app_private.FUNCTION tg_api_clients__plan_allows_clients()

REVOKE ALL ON FUNCTION app_private.tg_api_clients__plan_allows_clients() FROM PUBLIC;

-- acl app_private.FUNCTION tg_api_clients__touch()

REVOKE ALL ON FUNCTION app_private.tg_api_clients__touch() FROM PUBLIC;

-- acl app_private.FUNCTION tg_client_secrets__bump_client_version()

REVOKE ALL ON FUNCTION app_private.tg_client_secrets__bump_client_version() FROM PUBLIC;

-- acl control.FUNCTION client_create(p_org text, p_name text, p_license_level text, p_roles text[], p_description text)

REVOKE ALL ON FUNCTION control.client_create(p_org text, p_name text, p_license_level text, p_roles text[], p_description text) FROM PUBLIC;

-- acl control.FUNCTION client_delete(p_client text)

REVOKE ALL ON FUNCTION control.client_delete(p_client text) FROM PUBLIC;

-- acl control.FUNCTION client_disable(p_client text)

REVOKE ALL ON FUNCTION control.client_disable(p_client text) FROM PUBLIC;

-- acl control.FUNCTION client_enable(p_client text)

REVOKE ALL ON FUNCTION control.client_enable(p_client text) FROM PUBLIC;

-- acl control.FUNCTION client_release_license(p_client text)

REVOKE ALL ON FUNCTION control.client_release_license(p_client text) FROM PUBLIC;

-- acl control.FUNCTION client_revoke_secret(p_client text, p_secret_id text)

REVOKE ALL ON FUNCTION control.client_revoke_secret(p_client text, p_secret_id text) FROM PUBLIC;

-- acl control.FUNCTION client_rotate_secret(p_client text)

REVOKE ALL ON FUNCTION control.client_rotate_secret(p_client text) FROM PUBLIC;

-- acl control.FUNCTION client_set_roles(p_client text, p_roles text[])

REVOKE ALL ON FUNCTION control.client_set_roles(p_client text, p_roles text[]) FROM PUBLIC;

-- acl control.FUNCTION client_set_status(p_client text, p_from text[], p_to text)

REVOKE ALL ON FUNCTION control.client_set_status(p_client text, p_from text[], p_to text) FROM PUBLIC;

-- acl control.FUNCTION purge_expired_access_tokens()

REVOKE ALL ON FUNCTION control.purge_expired_access_tokens() FROM PUBLIC;

-- acl control.FUNCTION purge_expired_idempotency_keys()

REVOKE ALL ON FUNCTION control.purge_expired_idempotency_keys() FROM PUBLIC;

-- acl control.FUNCTION signing_key_add(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text)

REVOKE ALL ON FUNCTION control.signing_key_add(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text) FROM PUBLIC;

-- acl control.FUNCTION signing_key_retire(p_kid text)

REVOKE ALL ON FUNCTION control.signing_key_retire(p_kid text) FROM PUBLIC;

-- acl app.TABLE api_clients

GRANT SELECT ON TABLE app.api_clients TO svc_api;

-- acl app.TABLE idempotency_keys

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE app.idempotency_keys TO svc_api;

-- acl app_private.TABLE client_directory

GRANT SELECT ON TABLE app_private.client_directory TO svc_api;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
