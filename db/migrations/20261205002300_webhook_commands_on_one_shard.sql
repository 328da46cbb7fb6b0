-- migrate:up

/** Issue 37: three webhook functions in forms Citus takes (webhooks.test.ts on the cluster found them). */

-- A delivery and its attempts: the delivery as the client reads it, then its attempts by the
-- organization (on Citus a correlated subquery beside a set-returning function is refused).
create or replace function api.webhook_delivery_get(p_endpoint text, p_delivery text)
returns table(doc jsonb)
language plpgsql stable security definer
set search_path = pg_catalog
as $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
  v_doc jsonb;
begin
  select v.doc into v_doc from api.webhook_deliveries v where v.id = p_delivery and v.endpoint_id = p_endpoint;
  if v_doc is null then
    return;
  end if;
  return query select v_doc || jsonb_build_object('attempts', coalesce((
           select jsonb_agg(jsonb_build_object('attempt', a.attempt, 'started_at', app_private.iso_timestamp(a.started_at),
                                               'duration_ms', a.duration_ms, 'response_status', a.response_status,
                                               'error', a.error) order by a.attempt)
             from app.webhook_delivery_attempts a where a.organization_id = v__organization_id and a.delivery_id = p_delivery), '[]'::jsonb));
end
$$;

-- The previous secret's expiry as a value: Citus takes no function but an immutable one inside CASE in a write.
create or replace function api.webhook_endpoint_rotate(p_id text, p_secret_sealed text, p_previous_expires_in_seconds integer)
returns table(doc jsonb, version integer)
language plpgsql security definer
set search_path = pg_catalog
as $$
declare
  w app.webhook_endpoints := app_private.webhook_endpoint_lock(p_id);
  v_previous_expires_at timestamptz := case when p_previous_expires_in_seconds > 0
                                            then now() + make_interval(secs => p_previous_expires_in_seconds) end;
begin
  update app.webhook_endpoints e
     set previous_secret_sealed = case when p_previous_expires_in_seconds > 0 then e.secret_sealed end,
         previous_secret_expires_at = v_previous_expires_at,
         secret_sealed = p_secret_sealed
   where e.organization_id = w.organization_id and e.id = w.id;
  return query select v.doc, v.version from api.webhook_endpoints v where v.id = w.id;
end
$$;

-- The 30-day retention of every organization's events (their deliveries and attempts follow them):
-- PL/pgSQL, since Citus cannot plan a SQL function's parameters.
create or replace function app_private.purge_webhook_history(p_older_than interval default interval '30 days')
returns bigint
language plpgsql
set search_path = pg_catalog
as $$
declare
  v_count bigint;
begin
  delete from app.events e where e.created_at < now() - p_older_than;
  get diagnostics v_count = row_count;
  return v_count;
end
$$;

-- On Citus, the delivery's read goes through the view's function for its id.
select app_private.citus_read_view_functions(array['api.webhook_delivery_get(text, text)',
  'api.webhook_endpoint_rotate(text, text, integer)']::regprocedure[]);

-- migrate:down
