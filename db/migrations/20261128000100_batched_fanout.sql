-- migrate:up

/** Issue 21 (webhooks at 200 events/s). The fan-out was one graphile-worker job per event: its
 * `add_job` ran in the producing transaction (1.1 ms of wall time under load) and every event paid a
 * job fetch and a job completion. Now the event's commit notifies `svc_webhook_fanout` (one
 * notification per transaction, however many events it wrote; nothing when no endpoint subscribes)
 * and the worker claims pending events in batches (app_private.webhook_fanout_batch), woken by the
 * notification and by a poll, so nothing is lost when a notification is. Retries and replays stay
 * graphile-worker jobs (webhook_deliver). */
create or replace function app_private.emit_event(p_org text, p_type text, p_resource_type text, p_resource_id text,
                                                  p_version integer, p_target_endpoint text default null) returns text
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_id text := app_private.new_id('evt');
  v_subscribed boolean;
begin
  v_subscribed := case when p_target_endpoint is not null then true
    else exists (select from app.webhook_endpoints e
                  where e.organization_id = p_org and e.status = 'enabled' and p_type = any (e.events)) end;
  insert into app.events (organization_id, id, type, resource_type, resource_id, resource_version, fanout_pending, target_endpoint_id)
  values (p_org, v_id, p_type, p_resource_type, p_resource_id, p_version, v_subscribed, p_target_endpoint);
  if v_subscribed then
    -- Delivered at commit, never for a rolled-back write; identical notifications of one
    -- transaction are folded into one. No payload: LISTEN needs no privilege, so any role of the
    -- database could read it (an organization id would tell who is active, and when).
    perform pg_notify('svc_webhook_fanout', '');
  end if;
  return v_id;
end
$$;

/** The fan-out of one claimed (locked, pending) event: a delivery for each enabled endpoint that
 * subscribes to it and whose client may read the resource, with its first attempt claimed; the
 * event is then no longer pending. */
create function app_private.webhook_fanout_event(e app.events, p_lease_seconds integer)
returns table (delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text,
               organization_id text, type text, resource_type text, resource_id text, resource_version integer,
               created_at timestamptz)
language plpgsql volatile
set search_path = pg_catalog
as $$
#variable_conflict use_column
declare
  w record;
  v_client text;
  v_allowed boolean;
begin
  for w in select ep.id, ep.client_id, ep.url, ep.secret_sealed,
                  case when ep.previous_secret_expires_at > now() then ep.previous_secret_sealed end as previous_secret_sealed
             from app.webhook_endpoints ep
            where ep.organization_id = e.organization_id and ep.status = 'enabled' and e.type = any (ep.events)
              and (e.target_endpoint_id is null or ep.id = e.target_endpoint_id)
            order by ep.client_id, ep.id loop
    if v_client is distinct from w.client_id then
      v_client := w.client_id;
      v_allowed := app_private.client_may_read(w.client_id, e.type, e.resource_type, e.resource_id);
    end if;
    continue when not v_allowed;
    delivery_id := null;
    insert into app.webhook_deliveries as d (organization_id, client_id, endpoint_id, event_id, attempt_count, lease_until)
    values (e.organization_id, w.client_id, w.id, e.id, 1, now() + make_interval(secs => p_lease_seconds))
    on conflict (organization_id, event_id, endpoint_id) where replay_of is null do nothing
    returning d.id into delivery_id;
    continue when delivery_id is null;
    attempt := 1;
    url := w.url;
    secret_sealed := w.secret_sealed;
    previous_secret_sealed := w.previous_secret_sealed;
    event_id := e.id;
    organization_id := e.organization_id;
    type := e.type;
    resource_type := e.resource_type;
    resource_id := e.resource_id;
    resource_version := e.resource_version;
    created_at := e.created_at;
    return next;
  end loop;
  update app.events x set fanout_pending = false where x.organization_id = e.organization_id and x.id = e.id;
end
$$;

/** One event (a webhook_fanout job queued before this migration). */
create or replace function app_private.webhook_fanout(p_event text, p_lease_seconds integer)
returns table (delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text,
               organization_id text, type text, resource_type text, resource_id text, resource_version integer,
               created_at timestamptz)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  e app.events;
begin
  select * into e from app.events x where x.id = p_event and x.fanout_pending for update skip locked;
  if found then
    return query select * from app_private.webhook_fanout_event(e, p_lease_seconds);
  end if;
end
$$;

/** Up to p_limit pending events, oldest first, that no other worker holds (skip locked), fanned out
 * in one transaction: one row per first attempt to send, and for an event that has none (no
 * subscriber left, or no client may read it) one row whose delivery_id is null, so that the caller
 * knows how many events it claimed. */
create function app_private.webhook_fanout_batch(p_limit integer, p_lease_seconds integer)
returns table (delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text,
               organization_id text, type text, resource_type text, resource_id text, resource_version integer,
               created_at timestamptz)
language plpgsql volatile
set search_path = pg_catalog
as $$
#variable_conflict use_column
declare
  e app.events;
begin
  for e in select * from app.events x where x.fanout_pending order by x.created_at
            limit greatest(1, least(p_limit, 500)) for update skip locked loop
    return query select * from app_private.webhook_fanout_event(e, p_lease_seconds);
    if not found then
      delivery_id := null; attempt := null; url := null; secret_sealed := null; previous_secret_sealed := null;
      event_id := e.id; organization_id := e.organization_id; type := e.type; resource_type := e.resource_type;
      resource_id := e.resource_id; resource_version := e.resource_version; created_at := e.created_at;
      return next;
    end if;
  end loop;
end
$$;

revoke all on function app_private.webhook_fanout_event(app.events, integer) from public;
revoke all on function app_private.webhook_fanout_batch(integer, integer) from public;

/** Crash recovery, as before, less the fan-out part: pending events are claimed by every worker's
 * poll, so an event whose fan-out died with its worker (rolled back, still pending) is simply
 * claimed again. */
create or replace function app_private.webhook_recover(p_stale interval default interval '30 seconds') returns integer
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  v_count integer := 0;
  r record;
begin
  -- graphile-worker 0.17 keeps jobs in _private_jobs (unique key): a job that is available, or locked
  -- recently, is alive; a missing job, one out of attempts, or one locked longer than p_stale by a
  -- silent worker is replaced (a backlog of queued jobs is left alone).
  for r in select d.id from app.webhook_deliveries d
            where d.status = 'pending'
              and (d.lease_until < now()
                   or (d.lease_until is null and d.next_attempt_at < now() - p_stale
                       and not exists (select from graphile_worker._private_jobs j
                                        where j.key = 'deliver:' || d.id
                                          and (j.is_available or j.locked_at > now() - p_stale))))
            for update of d skip locked loop
    update app.webhook_deliveries set lease_until = null, next_attempt_at = now() where id = r.id;
    perform app_private.webhook_enqueue(r.id);
    v_count := v_count + 1;
  end loop;
  return v_count;
end
$$;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'restore a backup taken before 20261128000100'); end $$;
