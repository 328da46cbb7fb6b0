-- migrate:up

-- The previous release completes an Idempotency-Key with the fingerprint (api.idempotency_complete's
-- seven arguments): the six-argument form kept for the release before it goes, and with it the
-- fingerprint the claim recorded for that form.
set local lock_timeout = '3s';
set local statement_timeout = '60s';

drop function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text);

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
  return next;
end
$$;

-- migrate:down

set local lock_timeout = '3s';
set local statement_timeout = '60s';

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

create function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) returns void
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  perform api.idempotency_complete(p_method, p_route, p_key, current_setting('svc.claimed_fingerprint', true),
                                   p_status, p_headers, p_body);
end
$$;

grant create on schema api to svc_api;
alter function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) owner to svc_api;
revoke create on schema api from svc_api;

comment on function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) is 'The previous release''s form of the completion, for its processes while they still run: the key written with the fingerprint api.idempotency_claim recorded in this transaction (svc.claimed_fingerprint; a session that sets it itself changes only its own key''s record). The release after this drops it.';

revoke all on function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) from public;
grant execute on function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) to svc_runtime;
grant execute on function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) to svc_owner;
grant execute on function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) to svc_worker;
