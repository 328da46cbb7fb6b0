-- migrate:up

/** Issue 21: a create in two round trips instead of three. The API sends the operation's command
 * right behind the key's claim, without waiting for the claim's answer; the command's statement is
 * gated by a one-time filter on `svc.claimed`, which only a fresh claim sets (transaction-local).
 * The mark is not a permission: the command's own function still checks the context and the Role. */
create or replace function api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text)
returns table (state text, response_status integer, response_headers jsonb, response_body text)
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  k record;
  -- Read once: each call verifies the context's HMAC again (13 µs), and this ran eight of them.
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
  insert into app.idempotency_keys as i (organization_id, client_id, method, route, key, fingerprint)
  values (v_org, v_client, p_method, p_route, p_key, p_fingerprint)
  on conflict (organization_id, client_id, method, route, key) do update
    set fingerprint = excluded.fingerprint, response_status = null, response_headers = null,
        response_body = null, created_at = now(), expires_at = now() + interval '24 hours';
  state := 'claimed';
  -- The command sent in the same round trip as this claim runs only under this mark (its
  -- statement's one-time filter): a replay, a mismatch or a key in flight runs nothing.
  perform set_config('svc.claimed', 'yes', true);
  return next;
end
$$;


-- migrate:down

create or replace function api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text)
returns table (state text, response_status integer, response_headers jsonb, response_body text)
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  k record;
  -- Read once: each call verifies the context's HMAC again (13 µs), and this ran eight of them.
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
  insert into app.idempotency_keys as i (organization_id, client_id, method, route, key, fingerprint)
  values (v_org, v_client, p_method, p_route, p_key, p_fingerprint)
  on conflict (organization_id, client_id, method, route, key) do update
    set fingerprint = excluded.fingerprint, response_status = null, response_headers = null,
        response_body = null, created_at = now(), expires_at = now() + interval '24 hours';
  state := 'claimed';
  return next;
end
$$;
