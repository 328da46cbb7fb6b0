-- migrate:up

/** What a create costs PostgreSQL, cut where it went (bench/sql-profile.ts; docs/benchmarks.md
 * "Where PostgreSQL's time goes"):
 * - An Idempotency-Key is written once, with its response. api.idempotency_claim takes the key's
 *   transaction lock and reads it (replay, mismatch, or claimed), and writes nothing;
 *   api.idempotency_complete inserts the key with the request's fingerprint and the response.
 *   Before, the claim inserted the key and the completion updated it in the same transaction: two
 *   writes of one row (80 µs of a create's 1,000). Nothing else can tell the difference: the claim
 *   and its response commit together or not at all, and a concurrent request with the key meets
 *   its lock, as before. The completion's former form stays for the processes of the previous
 *   release, which run until the new ones replace them (db/README.md, "Deploy"): it writes the key
 *   with the fingerprint the claim recorded in this transaction; the release after this drops it.
 * - The context accessors (app.current_organization_id, current_client_id, current_roles,
 *   has_role, has_any_role) are SQL expressions, inlined into the policy or statement that calls
 *   them; each was a PL/pgSQL call with its own search_path, 1.5–2.4 µs, 38 of them a create. They
 *   are not definers (app_private.context_ok, which they call, is); they name every function and
 *   operator with its schema, so no search_path changes what they mean. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

create or replace function app.current_organization_id() returns text
    language sql stable parallel restricted
    as $$
  select case when app_private.context_ok()
              then case when pg_catalog.current_setting('svc.organization_id', true) operator(pg_catalog.=) '' then null
                        else pg_catalog.current_setting('svc.organization_id', true) end
              else (app_private.bi_context()).organization_id end
$$;

create or replace function app.current_client_id() returns text
    language sql stable parallel restricted
    as $$
  select case when app_private.context_ok()
              then case when pg_catalog.current_setting('svc.client_id', true) operator(pg_catalog.=) '' then null
                        else pg_catalog.current_setting('svc.client_id', true) end end
$$;

create or replace function app.current_roles() returns text[]
    language sql stable parallel restricted
    as $$
  select case when app_private.context_ok()
              then coalesce(pg_catalog.string_to_array(case when pg_catalog.current_setting('svc.roles', true) operator(pg_catalog.=) '' then null
                                                            else pg_catalog.current_setting('svc.roles', true) end, ','), '{}'::pg_catalog.text[])
              else coalesce((app_private.bi_context()).svc_roles, '{}'::pg_catalog.text[]) end
$$;

create or replace function app.has_any_role(roles text[]) returns boolean
    language sql stable parallel restricted
    as $$ select roles operator(pg_catalog.&&) app.current_roles() $$;

create or replace function app.has_role(role text) returns boolean
    language sql stable parallel restricted
    as $$ select role operator(pg_catalog.=) any (app.current_roles()) $$;

create or replace function api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text) returns table(state text, response_status integer, response_headers jsonb, response_body text)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  k record;
  -- Read once: each call verifies the context's HMAC again.
  v_org text := app.current_organization_id();
  v_client text := app.current_client_id();
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
  state := 'claimed';
  -- The command sent in the same round trip as this claim runs only under this mark (its
  -- statement's one-time filter): a replay, a mismatch or a key in flight runs nothing.
  perform set_config('svc.claimed', 'yes', true);
  -- For the previous release's completion, which is not given the fingerprint.
  perform set_config('svc.claimed_fingerprint', p_fingerprint, true);
  return next;
end
$$;

comment on function api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text) is 'Claims an Idempotency-Key for the calling client (organization, client, method, route template, key) in the transaction of the write it guards: a key held by a concurrent request answers in_flight (a transaction-scoped advisory lock, held until that transaction ends), a live key with another request fingerprint mismatch, one with the same fingerprint replay with its stored response, and otherwise the key is claimed and svc.claimed is set, the one mark under which the command sent in the same round trip runs. It writes nothing: api.idempotency_complete writes the key with its response, in the same transaction, so the effect and the stored response commit or roll back together. Without a signed request context it raises SV500 CONTEXT_MISSING. It runs as svc_api because svc_runtime holds no privilege on app.idempotency_keys, and the policy "Clients use only their own idempotency keys" keeps every read to the request''s organization and client.';

create function api.idempotency_complete(p_method text, p_route text, p_key text, p_fingerprint text, p_status integer, p_headers jsonb, p_body text) returns void
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_org text := app.current_organization_id();
  v_client text := app.current_client_id();
  -- Values, not now() (nor timestamptz + interval, which is stable): Citus runs an upsert's DO
  -- UPDATE only with immutable expressions.
  v_now timestamptz := now();
  v_expires_at timestamptz := now() + interval '24 hours';
  v_rows bigint;
begin
  -- A live row of the key cannot exist (the claim found none, and holds the key's lock until
  -- this transaction ends); an expired one is replaced.
  insert into app.idempotency_keys as i (organization_id, client_id, method, route, key, fingerprint,
                                         response_status, response_headers, response_body)
  values (v_org, v_client, p_method, p_route, p_key, p_fingerprint,
          p_status, p_headers, p_body)
  on conflict (organization_id, client_id, method, route, key) do update
    set fingerprint = excluded.fingerprint, response_status = excluded.response_status,
        response_headers = excluded.response_headers, response_body = excluded.response_body,
        created_at = v_now, expires_at = v_expires_at
    where i.organization_id = v_org and i.expires_at <= v_now;
  get diagnostics v_rows = row_count;
  if v_rows <> 1 then
    -- Only a request that holds the key on another node can have written it since the claim (the
    -- claim's lock is a node's own: a shard group's move runs the two on two nodes); the client
    -- retries and gets the stored response.
    perform app_private.raise('SVC09', 'IDEMPOTENCY_KEY_IN_USE', 'another request with this key completed first');
  end if;
end
$$;

grant create on schema api to svc_api;
alter function api.idempotency_complete(p_method text, p_route text, p_key text, p_fingerprint text, p_status integer, p_headers jsonb, p_body text) owner to svc_api;
revoke create on schema api from svc_api;

comment on function api.idempotency_complete(p_method text, p_route text, p_key text, p_fingerprint text, p_status integer, p_headers jsonb, p_body text) is 'Writes the Idempotency-Key the calling client claimed in this transaction, with the request''s fingerprint and the response (status, headers, body), in the same transaction as the command, so a retry with that key replays exactly what was sent; it lives 24 hours. An expired row of the key is replaced; a live one, which only a request holding the key on another node during a shard move can have written, raises SVC09 IDEMPOTENCY_KEY_IN_USE (409). It runs as svc_api because svc_runtime holds no privilege on app.idempotency_keys; the row names the signed context''s organization and client, and the policy "Clients use only their own idempotency keys" admits no other.';

revoke all on function api.idempotency_complete(p_method text, p_route text, p_key text, p_fingerprint text, p_status integer, p_headers jsonb, p_body text) from public;
grant execute on function api.idempotency_complete(p_method text, p_route text, p_key text, p_fingerprint text, p_status integer, p_headers jsonb, p_body text) to svc_runtime;
grant execute on function api.idempotency_complete(p_method text, p_route text, p_key text, p_fingerprint text, p_status integer, p_headers jsonb, p_body text) to svc_owner;
grant execute on function api.idempotency_complete(p_method text, p_route text, p_key text, p_fingerprint text, p_status integer, p_headers jsonb, p_body text) to svc_worker;

create or replace function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) returns void
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  perform api.idempotency_complete(p_method, p_route, p_key, current_setting('svc.claimed_fingerprint', true),
                                   p_status, p_headers, p_body);
end
$$;

comment on function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) is 'The previous release''s form of the completion, for its processes while they still run: the key written with the fingerprint api.idempotency_claim recorded in this transaction (svc.claimed_fingerprint; a session that sets it itself changes only its own key''s record). The release after this drops it.';

-- migrate:down

drop function api.idempotency_complete(p_method text, p_route text, p_key text, p_fingerprint text, p_status integer, p_headers jsonb, p_body text);

create or replace function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) returns void
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  update app.idempotency_keys
     set response_status = p_status, response_headers = p_headers, response_body = p_body
   where organization_id = v__organization_id and client_id = app.current_client_id()
     and method = p_method and route = p_route and key = p_key;
end
$$;

grant create on schema api to svc_api;
alter function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) owner to svc_api;
revoke create on schema api from svc_api;

comment on function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) is 'Stores the response (status, headers, body) on the Idempotency-Key the calling client claimed, in the same transaction as the command, so a retry with that key replays exactly what was sent. It runs as svc_api because svc_runtime holds no privilege on app.idempotency_keys; the update names the signed context''s organization and client, and the policy "Clients use only their own idempotency keys" admits no other key.';

revoke all on function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) from public;
grant execute on function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) to svc_runtime;
grant execute on function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) to svc_owner;
grant execute on function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) to svc_worker;

create or replace function api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text) returns table(state text, response_status integer, response_headers jsonb, response_body text)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

comment on function api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text) is 'Claims an Idempotency-Key for the calling client (organization, client, method, route template, key) in the transaction of the write it guards, so the effect and the stored response commit or roll back together: a key held by a concurrent request answers in_flight (a transaction-scoped advisory lock), a live key with another request fingerprint mismatch, one with the same fingerprint replay with its stored response, and otherwise the key is claimed for 24 hours and svc.claimed is set, the one mark under which the command sent in the same round trip runs. Without a signed request context it raises SV500 CONTEXT_MISSING. It runs as svc_api because svc_runtime holds no privilege on app.idempotency_keys, and the policy "Clients use only their own idempotency keys" keeps every read and write to the request''s organization and client.';

create or replace function app.current_organization_id() RETURNS text
    language plpgsql STABLE PARALLEL RESTRICTED
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if app_private.context_ok() then
    return nullif(current_setting('svc.organization_id', true), '');
  end if;
  return (app_private.bi_context()).organization_id;
end
$$;

create or replace function app.current_client_id() RETURNS text
    language plpgsql STABLE PARALLEL RESTRICTED
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  return case when app_private.context_ok() then nullif(current_setting('svc.client_id', true), '') end;
end
$$;

create or replace function app.current_roles() RETURNS text[]
    language plpgsql STABLE PARALLEL RESTRICTED
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if app_private.context_ok() then
    return coalesce(string_to_array(nullif(current_setting('svc.roles', true), ''), ','), '{}'::text[]);
  end if;
  return coalesce((app_private.bi_context()).svc_roles, '{}'::text[]);
end
$$;

create or replace function app.has_any_role(roles text[]) RETURNS boolean
    language plpgsql STABLE PARALLEL RESTRICTED
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  return roles && app.current_roles();
end
$$;

create or replace function app.has_role(role text) RETURNS boolean
    language plpgsql STABLE PARALLEL RESTRICTED
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  return role = any (app.current_roles());
end
$$;
