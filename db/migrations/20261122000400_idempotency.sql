-- migrate:up

/** Idempotency keys, scoped to (client, method, route template, key). A claim is written in
 * the same transaction as the write it guards, so the effect and the stored response commit
 * or roll back together. A transaction-scoped advisory lock tells a concurrent duplicate
 * that the first request is still in flight. Kept 24 hours. */
create table app.idempotency_keys (
  organization_id text not null references app.organizations on delete cascade,
  client_id text not null references app.api_clients on delete cascade,
  method text not null,
  route text not null,
  key text not null constraint idempotency_keys_key_format check (key ~ '^[\x20-\x7e]{1,255}$'),
  fingerprint text not null,
  response_status integer,
  response_headers jsonb,
  response_body text,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null default now() + interval '24 hours',
  primary key (client_id, method, route, key)
);
create index idempotency_keys_expiry on app.idempotency_keys (expires_at);

alter table app.idempotency_keys enable row level security;
alter table app.idempotency_keys force row level security;
create policy "Clients use only their own idempotency keys" on app.idempotency_keys for all to svc_runtime
  using (organization_id = (select app.current_organization_id()) and client_id = (select app.current_client_id()))
  with check (organization_id = (select app.current_organization_id()) and client_id = (select app.current_client_id()));
grant select, insert, update, delete on app.idempotency_keys to svc_runtime;

create function api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text)
returns table (state text, response_status integer, response_headers jsonb, response_body text)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  k record;
begin
  if app.current_client_id() is null then
    perform app_private.raise('SV500', 'CONTEXT_MISSING', 'no request context');
  end if;
  if not pg_try_advisory_xact_lock(hashtextextended(
       concat_ws(chr(31), app.current_client_id(), p_method, p_route, p_key), 0)) then
    state := 'in_flight';
    return next;
    return;
  end if;
  select * into k from app.idempotency_keys i
   where i.client_id = app.current_client_id() and i.method = p_method and i.route = p_route and i.key = p_key;
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
  values (app.current_organization_id(), app.current_client_id(), p_method, p_route, p_key, p_fingerprint)
  on conflict (client_id, method, route, key) do update
    set fingerprint = excluded.fingerprint, response_status = null, response_headers = null,
        response_body = null, created_at = now(), expires_at = now() + interval '24 hours';
  state := 'claimed';
  return next;
end
$$;
grant execute on function api.idempotency_claim(text, text, text, text) to svc_runtime;

create function api.idempotency_complete(p_method text, p_route text, p_key text,
                                         p_status integer, p_headers jsonb, p_body text)
returns void
language sql volatile
set search_path = pg_catalog
as $$
  update app.idempotency_keys
     set response_status = p_status, response_headers = p_headers, response_body = p_body
   where client_id = app.current_client_id() and method = p_method and route = p_route and key = p_key
$$;
grant execute on function api.idempotency_complete(text, text, text, integer, jsonb, text) to svc_runtime;

/** Housekeeping: run by the scheduled purge (and callable by a DBA). */
create function control.purge_expired_idempotency_keys() returns integer
language sql volatile
set search_path = pg_catalog
as $$
  with gone as (delete from app.idempotency_keys where expires_at < now() returning 1)
  select count(*)::integer from gone
$$;

-- migrate:down
drop function control.purge_expired_idempotency_keys();
drop function api.idempotency_complete(text, text, text, integer, jsonb, text);
drop function api.idempotency_claim(text, text, text, text);
drop table app.idempotency_keys;
