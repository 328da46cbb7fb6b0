-- migrate:up

/** Issue 37: the worker's jobs name their organization, and on Citus each runs in its worker.
 *
 * Every job's payload carries the organization it was queued for (app_private.queue_job adds it),
 * and each job function takes it first and names it in every statement: webhook fan-out, claim and
 * attempts, accounting sync, file scans, ticket emails and report runs. On Citus the functions are
 * delegated by it (force_delegation, so also inside the report's REPEATABLE READ transaction): the
 * whole job runs in one worker backend, where the client's signed context (begin_delivery_context)
 * and the organization's shards meet, as a request's statements do (migration 20261205000700).
 * On one server nothing moves: the same statements, with the organization named.
 *
 * Two jobs stay cross-organization by design, on the coordinator: finding the organizations with
 * pending events (the worker asks, then claims each one's events in its worker) and the recovery of
 * deliveries whose worker died (it reads graphile-worker's queue, which only the coordinator has). */

/** Every job names its organization, in its payload too: the job runs where that organization's rows are. */
create or replace function app_private.queue_job(p_organization_id text, p_task text, p_payload json, p_job_key text,
                                                 p_max_attempts integer, p_run_at timestamptz default null)
returns void
language plpgsql security definer
set search_path = pg_catalog
as $$
declare
  v_payload json;
begin
  if p_organization_id is null then
    perform app_private.raise('SV500', 'JOB_WITHOUT_ORGANIZATION', format('a %s job names no organization', p_task));
  end if;
  v_payload := (p_payload::jsonb || jsonb_build_object('organization_id', p_organization_id))::json;
  if not exists (select from pg_extension where extname = 'citus') then
    perform graphile_worker.add_job(p_task, v_payload, run_at => p_run_at, job_key => p_job_key, max_attempts => p_max_attempts);
  else
    insert into app_private.job_outbox (organization_id, task, payload, job_key, max_attempts, run_at)
    values (p_organization_id, p_task, v_payload, p_job_key, p_max_attempts, p_run_at);
  end if;
end
$$;

-- Queued in a request: its organization.
create or replace function app_private.queue_file_scan(p_file_id text)
returns void
language plpgsql security definer
set search_path = pg_catalog
as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  perform app_private.queue_job(v__organization_id, 'file_scan', json_build_object('file_id', p_file_id),
                                'file_scan:' || p_file_id, 10);
end
$$;

create or replace function app_private.queue_report_run(p_run_id text)
returns void
language plpgsql security definer
set search_path = pg_catalog
as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  perform app_private.queue_job(v__organization_id, 'report_run', json_build_object('run_id', p_run_id),
                                'report_run:' || p_run_id, 3);
end
$$;

create or replace function app_private.queue_agent_run(p_run_id text)
returns void
language plpgsql security definer
set search_path = pg_catalog
as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  perform app_private.queue_job(v__organization_id, 'agent_run', json_build_object('run_id', p_run_id), null, 3);
end
$$;

-- A retry or a replay: queued by a request (its organization) or by the worker (the delivery's).
drop function app_private.webhook_enqueue(text, timestamptz);
create function app_private.webhook_enqueue(p_organization_id text, p_delivery text, p_run_at timestamptz default null)
returns void
language plpgsql security definer
set search_path = pg_catalog
as $$
begin
  perform app_private.queue_job(p_organization_id, 'webhook_deliver', json_build_object('delivery_id', p_delivery),
                                'deliver:' || p_delivery, 25, p_run_at);
end
$$;
revoke execute on function app_private.webhook_enqueue(text, text, timestamptz) from public;

-- The two commands that queue a delivery name their organization.
do $$
declare
  f record;
begin
  for f in select p.oid, pg_get_functiondef(p.oid) as def from pg_proc p
            where p.oid in ('api.webhook_endpoint_test(text)'::regprocedure, 'api.webhook_delivery_replay(text, text)'::regprocedure) loop
    execute replace(f.def, 'app_private.webhook_enqueue(v_id)', 'app_private.webhook_enqueue(v__organization_id, v_id)');
  end loop;
end
$$;

/** The client's context for a delivery, a report or a run: the client of that organization, active,
 * in an organization whose plan includes the API. */
create function app_private.begin_delivery_context(p_organization_id text, p_client_id text)
returns boolean
language plpgsql
set search_path = pg_catalog
as $$
declare
  c record;
begin
  select cl.status, cl.license_status, cl.svc_roles, o.status as org_status, o.plan as org_plan
    into c
    from app.api_clients cl join app.organizations o on o.id = cl.organization_id
   where cl.organization_id = p_organization_id and cl.id = p_client_id and o.id = p_organization_id;
  perform app_private.set_context(null, null, null);
  if not found or c.status <> 'active' or c.org_status = 'suspended' or c.license_status <> 'active'
     or c.org_plan in ('trial', 'team') then
    return false;
  end if;
  perform app_private.set_context(p_organization_id, p_client_id, c.svc_roles);
  return true;
end
$$;
revoke execute on function app_private.begin_delivery_context(text, text) from public;

-- The capability links and the agent runs (not yet by organization): the client's organization first.
create or replace function app_private.begin_delivery_context(p_client_id text)
returns boolean
language plpgsql
set search_path = pg_catalog
as $$
declare
  v_org text;
begin
  select cl.organization_id into v_org from app.api_clients cl where cl.id = p_client_id;
  if not found then
    perform app_private.set_context(null, null, null);
    return false;
  end if;
  return app_private.begin_delivery_context(v_org, p_client_id);
end
$$;

/** Whether the request context's client may read an event's resource: read through the API's own
 * views (on Citus, their functions), so a delivery never tells a client more than a GET would. */
create or replace function app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text)
returns boolean
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  case p_resource_type
    when 'project' then return exists (select from api.projects v where v.id = p_resource_id);
    when 'task' then return exists (select from api.tasks v where v.id = p_resource_id);
    when 'time_entry' then
      if p_type = 'time_entry.deleted' then
        return app_private.may_read_time_entries();
      end if;
      return exists (select from api.time_entries v where v.id = p_resource_id and v.deleted_at is null);
    when 'approval' then return exists (select from api.approvals v where v.id = p_resource_id);
    when 'webhook_endpoint' then return exists (select from api.webhook_endpoints v where v.id = p_resource_id);
    when 'integration_connection' then return exists (select from api.integration_connections v where v.id = p_resource_id);
    when 'invoice' then return exists (select from api.invoices v where v.id = p_resource_id);
    when 'payment' then return exists (select from app.payments p where p.organization_id = v__organization_id and p.id = p_resource_id);
    when 'file' then return exists (select from api.files v where v.id = p_resource_id);
    when 'ticket' then return exists (select from api.tickets v where v.id = p_resource_id);
    when 'ticket_message' then
      return exists (select from app.ticket_messages m where m.organization_id = v__organization_id and m.id = p_resource_id);
    when 'report_run' then return exists (select from api.report_runs v where v.id = p_resource_id);
    when 'run' then return exists (select from api.runs v where v.id = p_resource_id);
    when 'conversation_message' then return exists (select from api.conversation_messages v where v.id = p_resource_id);
    else return false;
  end case;
end
$$;

drop function app_private.client_may_read(text, text, text, text);
create function app_private.client_may_read(p_organization_id text, p_client text, p_type text, p_resource_type text, p_resource_id text)
returns boolean
language plpgsql
set search_path = pg_catalog
as $$
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
revoke execute on function app_private.client_may_read(text, text, text, text, text) from public;

create or replace function app_private.webhook_fanout_event(e app.events, p_lease_seconds integer)
returns table(delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text,
              organization_id text, type text, resource_type text, resource_id text, resource_version integer, created_at timestamptz)
language plpgsql
set search_path = pg_catalog
as $$
#variable_conflict use_column
declare
  w record;
  v_client text;
  v_allowed boolean;
  v_delivered text[] := '{}';
begin
  for w in select ep.id, ep.client_id, ep.url, ep.secret_sealed,
                  case when ep.previous_secret_expires_at > now() then ep.previous_secret_sealed end as previous_secret_sealed
             from app.webhook_endpoints ep
            where ep.organization_id = e.organization_id and ep.status = 'enabled' and e.type = any (ep.events)
              and (e.target_endpoint_id is null or ep.id = e.target_endpoint_id)
            order by ep.client_id, ep.id loop
    if v_client is distinct from w.client_id then
      v_client := w.client_id;
      v_allowed := app_private.client_may_read(e.organization_id, w.client_id, e.type, e.resource_type, e.resource_id);
    end if;
    continue when not v_allowed;
    delivery_id := null;
    insert into app.webhook_deliveries as d (organization_id, client_id, endpoint_id, event_id, attempt_count, lease_until)
    values (e.organization_id, w.client_id, w.id, e.id, 1, now() + make_interval(secs => p_lease_seconds))
    on conflict (organization_id, event_id, endpoint_id) where replay_of is null do nothing
    returning d.id into delivery_id;
    continue when delivery_id is null;
    if not (w.client_id = any (v_delivered)) then
      v_delivered := v_delivered || w.client_id;
    end if;
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
  -- The clients it was delivered to may read the event (its policy), set in the update the fan-out
  -- makes anyway. (An event is fanned out once, its deliveries made here: the clients are new to it.)
  update app.events x set fanout_pending = false, client_ids = x.client_ids || v_delivered
   where x.organization_id = e.organization_id and x.id = e.id;
end
$$;

drop function app_private.webhook_fanout(text, integer);
create function app_private.webhook_fanout(p_organization_id text, p_event text, p_lease_seconds integer)
returns table(delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text,
              organization_id text, type text, resource_type text, resource_id text, resource_version integer, created_at timestamptz)
language plpgsql
set search_path = pg_catalog
as $$
declare
  e app.events;
begin
  select * into e from app.events x
   where x.organization_id = p_organization_id and x.id = p_event and x.fanout_pending for update skip locked;
  if found then
    return query select * from app_private.webhook_fanout_event(e, p_lease_seconds);
  end if;
end
$$;
revoke execute on function app_private.webhook_fanout(text, text, integer) from public;

/** Claims up to p_limit pending events of one organization (on one server, p_organization_id null
 * claims any organization's), fans each out and returns the first attempts to send; an event with
 * no receiver is one row without a delivery. */
drop function app_private.webhook_fanout_batch(integer, integer);
create function app_private.webhook_fanout_batch(p_organization_id text, p_limit integer, p_lease_seconds integer)
returns table(delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text,
              organization_id text, type text, resource_type text, resource_id text, resource_version integer, created_at timestamptz)
language plpgsql
set search_path = pg_catalog
as $$
#variable_conflict use_column
declare
  e app.events;
  v_events refcursor;
begin
  if p_organization_id is null then
    -- Every organization's: one server only (Citus locks rows of one shard at a time).
    open v_events for select * from app.events x where x.fanout_pending order by x.created_at
                       limit greatest(1, least(p_limit, 500)) for update skip locked;
  else
    open v_events for select * from app.events x where x.organization_id = p_organization_id and x.fanout_pending
                       order by x.created_at limit greatest(1, least(p_limit, 500)) for update skip locked;
  end if;
  loop
    fetch v_events into e;
    exit when not found;
    return query select * from app_private.webhook_fanout_event(e, p_lease_seconds);
    if not found then
      delivery_id := null; attempt := null; url := null; secret_sealed := null; previous_secret_sealed := null;
      event_id := e.id; organization_id := e.organization_id; type := e.type; resource_type := e.resource_type;
      resource_id := e.resource_id; resource_version := e.resource_version; created_at := e.created_at;
      return next;
    end if;
  end loop;
  close v_events;
end
$$;
revoke execute on function app_private.webhook_fanout_batch(text, integer, integer) from public;

/** The organizations with events waiting for their fan-out, oldest first (on Citus, read on every
 * shard without locking; each organization's events are then claimed in its worker). */
create function app_private.webhook_fanout_organizations(p_limit integer)
returns setof text
language plpgsql stable
set search_path = pg_catalog
as $$
begin
  return query select x.organization_id from app.events x where x.fanout_pending
                group by x.organization_id order by min(x.created_at) limit greatest(1, p_limit);
end
$$;
revoke execute on function app_private.webhook_fanout_organizations(integer) from public;

drop function app_private.webhook_cancel(text, text);
create function app_private.webhook_cancel(p_organization_id text, p_delivery text, p_reason text)
returns void
language plpgsql
set search_path = pg_catalog
as $$
begin
  update app.webhook_deliveries x
     set status = 'cancelled', status_reason = p_reason, completed_at = now(), lease_until = null, next_attempt_at = null
   where x.organization_id = p_organization_id and x.id = p_delivery and x.status = 'pending';
end
$$;
revoke execute on function app_private.webhook_cancel(text, text, text) from public;

drop function app_private.webhook_claim(text, integer);
create function app_private.webhook_claim(p_organization_id text, p_delivery text, p_lease_seconds integer)
returns table(attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text, organization_id text,
              type text, resource_type text, resource_id text, resource_version integer, created_at timestamptz)
language plpgsql
set search_path = pg_catalog
as $$
declare
  d app.webhook_deliveries;
  w app.webhook_endpoints;
  e app.events;
  v_reason text;
begin
  select * into d from app.webhook_deliveries x
   where x.organization_id = p_organization_id and x.id = p_delivery for update skip locked;
  if not found or d.status <> 'pending' or d.lease_until > now() or d.next_attempt_at > now() + interval '1 second' then
    return;
  end if;
  select * into w from app.webhook_endpoints x where x.organization_id = p_organization_id and x.id = d.endpoint_id;
  select * into e from app.events x where x.organization_id = p_organization_id and x.id = d.event_id;
  v_reason := case
    -- A test event goes to a disabled endpoint too: testing is how a client checks a fix.
    when w.status <> 'enabled' and e.type <> 'webhook_endpoint.test' then 'endpoint_disabled'
    when e.created_at < now() - interval '30 days' then 'retention_expired'
    -- The last retry is scheduled at retry_until; a job that runs much later (workers down) is not sent.
    when now() > d.retry_until + interval '15 minutes' then 'retry_period_exhausted'
    when not app_private.client_may_read(p_organization_id, d.client_id, e.type, e.resource_type, e.resource_id) then 'not_authorized'
  end;
  if v_reason is not null then
    perform app_private.webhook_cancel(p_organization_id, d.id, v_reason);
    return;
  end if;
  update app.webhook_deliveries x
     set attempt_count = x.attempt_count + 1, lease_until = now() + make_interval(secs => p_lease_seconds)
   where x.organization_id = p_organization_id and x.id = d.id
  returning x.attempt_count into attempt;
  url := w.url;
  secret_sealed := w.secret_sealed;
  previous_secret_sealed := case when w.previous_secret_expires_at > now() then w.previous_secret_sealed end;
  event_id := e.id;
  organization_id := e.organization_id;
  type := e.type;
  resource_type := e.resource_type;
  resource_id := e.resource_id;
  resource_version := e.resource_version;
  created_at := e.created_at;
  return next;
end
$$;
revoke execute on function app_private.webhook_claim(text, text, integer) from public;

drop function app_private.webhook_record_attempt(text, integer, timestamptz, integer, integer, text, boolean, integer, double precision, integer, integer);
create function app_private.webhook_record_attempt(p_organization_id text, p_delivery text, p_attempt integer, p_started_at timestamptz,
  p_duration_ms integer, p_response_status integer, p_error text, p_retryable boolean, p_retry_after_seconds integer,
  p_scale double precision, p_disable_after integer, p_disable_after_seconds integer)
returns text
language plpgsql
set search_path = pg_catalog
as $$
declare
  d app.webhook_deliveries;
  w app.webhook_endpoints;
  v_ok boolean := p_response_status between 200 and 299 and p_error is null;
  v_next timestamptz;
  v_outcome text;
  -- A value, not now(): Citus takes no volatile function inside CASE or COALESCE of a write.
  v_now timestamptz := now();
begin
  select * into d from app.webhook_deliveries x where x.organization_id = p_organization_id and x.id = p_delivery for update;
  if not found or d.status <> 'pending' or d.attempt_count <> p_attempt then
    return 'stale';
  end if;
  insert into app.webhook_delivery_attempts (organization_id, delivery_id, attempt, started_at, duration_ms, response_status, error)
  values (p_organization_id, d.id, p_attempt, p_started_at, p_duration_ms, p_response_status, left(p_error, 500));
  if v_ok then
    update app.webhook_deliveries x set status = 'succeeded', status_reason = null, completed_at = now(), lease_until = null,
                                        next_attempt_at = null
     where x.organization_id = p_organization_id and x.id = d.id;
    update app.webhook_endpoints x set consecutive_failures = 0, failing_since = null
     where x.organization_id = p_organization_id and x.id = d.endpoint_id
       and (x.consecutive_failures <> 0 or x.failing_since is not null);
    return 'succeeded';
  end if;
  if p_retryable then
    v_next := now() + greatest(app_private.webhook_retry_delay(p_attempt, p_scale),
                               make_interval(secs => least(coalesce(p_retry_after_seconds, 0), 86400) * p_scale));
  end if;
  -- The schedule's next step may overshoot the 72 hours: the last attempt is then at retry_until.
  if p_retryable and now() < d.retry_until then
    v_next := least(v_next, d.retry_until);
    update app.webhook_deliveries x set next_attempt_at = v_next, lease_until = null, status_reason = null
     where x.organization_id = p_organization_id and x.id = d.id;
    perform app_private.webhook_enqueue(p_organization_id, d.id, v_next);
    v_outcome := 'retrying';
  else
    update app.webhook_deliveries x
       set status = 'failed', completed_at = now(), lease_until = null, next_attempt_at = null,
           status_reason = case when p_retryable then 'retry_period_exhausted' else 'permanent_failure' end
     where x.organization_id = p_organization_id and x.id = d.id;
    v_outcome := 'failed';
  end if;
  update app.webhook_endpoints x
     set consecutive_failures = x.consecutive_failures + 1, failing_since = coalesce(x.failing_since, v_now)
   where x.organization_id = p_organization_id and x.id = d.endpoint_id
  returning * into w;
  if w.status = 'enabled' and w.consecutive_failures >= p_disable_after
     and w.failing_since <= now() - make_interval(secs => p_disable_after_seconds) then
    update app.webhook_endpoints x set status = 'disabled', disabled_reason = 'delivery_failures'
     where x.organization_id = p_organization_id and x.id = w.id;
    insert into app_private.admin_notifications (organization_id, kind, subject_id, detail)
    values (p_organization_id, 'webhook_endpoint_disabled', w.id,
            format('webhook endpoint %s of client %s was disabled after %s consecutive failed deliveries since %s',
                   w.id, w.client_id, w.consecutive_failures, w.failing_since));
    v_outcome := v_outcome || ',endpoint_disabled';
  end if;
  return v_outcome;
end
$$;
revoke execute on function app_private.webhook_record_attempt(text, text, integer, timestamptz, integer, integer, text, boolean, integer, double precision, integer, integer) from public;

/** Deliveries whose worker died mid-attempt (lease run out), or whose job is gone: queued again.
 * Cross-organization by design, where graphile-worker's queue is (one server, or the coordinator):
 * the candidates are read first, then each is locked and queued again by its organization. */
create or replace function app_private.webhook_recover(p_stale interval default interval '30 seconds')
returns integer
language plpgsql
set search_path = pg_catalog
as $$
declare
  v_count integer := 0;
  r record;
begin
  -- graphile-worker 0.17 keeps jobs in _private_jobs (unique key): a job that is available, or locked
  -- recently, is alive; a missing job, one out of attempts, or one locked longer than p_stale by a
  -- silent worker is replaced (a backlog of queued jobs is left alone).
  for r in
    select c.organization_id, c.id
      from jsonb_to_recordset((select coalesce(jsonb_agg(jsonb_build_object('organization_id', d.organization_id, 'id', d.id,
                                                                             'leased', d.lease_until is not null)), '[]')
                                 from app.webhook_deliveries d
                                where d.status = 'pending'
                                  and (d.lease_until < now() or (d.lease_until is null and d.next_attempt_at < now() - p_stale))))
             as c (organization_id text, id text, leased boolean)
     -- A lease that ran out is queued again whatever its job; a delivery without one only when its job is gone.
     where c.leased
        or not exists (select from graphile_worker._private_jobs j
                        where j.key = 'deliver:' || c.id and (j.is_available or j.locked_at > now() - p_stale))
  loop
    -- A delivery being claimed or recorded right now is left to that worker.
    perform from app.webhook_deliveries x
     where x.organization_id = r.organization_id and x.id = r.id and x.status = 'pending'
       and (x.lease_until < now() or (x.lease_until is null and x.next_attempt_at < now() - p_stale))
       for update skip locked;
    continue when not found;
    update app.webhook_deliveries x set lease_until = null, next_attempt_at = now()
     where x.organization_id = r.organization_id and x.id = r.id;
    perform app_private.webhook_enqueue(r.organization_id, r.id);
    v_count := v_count + 1;
  end loop;
  return v_count;
end
$$;

drop function app_private.accounting_sync_load(text);
create function app_private.accounting_sync_load(p_organization_id text, p_invoice text)
returns jsonb
language plpgsql
set search_path = pg_catalog
as $$
declare
  v_doc jsonb;
  v_out jsonb;
begin
  -- The invoice as finance reads it through the API.
  perform app_private.set_context(p_organization_id, null, '{finance}');
  select v.doc into v_doc from api.invoices v where v.id = p_invoice;
  perform app_private.set_context(null, null, null);
  if v_doc is null then
    return null;
  end if;
  select jsonb_build_object('invoice', v_doc, 'provider', c.provider, 'connection_id', c.id, 'connection_status', c.status,
                            'sync_status', i.sync_status, 'external_reference', i.sync_external_reference,
                            'customer', jsonb_build_object('id', cu.id, 'name', cu.name, 'email', cu.delivery_email))
    into v_out
    from app.invoices i
    join app.integration_connections c on c.organization_id = i.organization_id and c.id = i.sync_connection_id
    join app.customers cu on cu.organization_id = i.organization_id and cu.id = i.customer_id
   where i.organization_id = p_organization_id and i.id = p_invoice;
  return v_out;
end
$$;
revoke execute on function app_private.accounting_sync_load(text, text) from public;

drop function app_private.accounting_sync_record(text, boolean, text, text, boolean);
create function app_private.accounting_sync_record(p_organization_id text, p_invoice text, p_ok boolean, p_external_reference text,
                                                   p_error text, p_definitive boolean default false)
returns void
language plpgsql
set search_path = pg_catalog
as $$
declare
  v_connection text;
  v_now timestamptz := now();
begin
  update app.invoices x
     set sync_status = case when p_ok then 'synced' else 'failed' end,
         sync_external_reference = coalesce(p_external_reference, x.sync_external_reference),
         sync_error = case when p_ok then null else left(p_error, 500) end,
         sync_failure_definitive = case when p_ok then null else p_definitive end,
         synced_at = case when p_ok then v_now else x.synced_at end
   where x.organization_id = p_organization_id and x.id = p_invoice and x.sync_status = 'pending'
  returning x.sync_connection_id into v_connection;
  if found and p_ok then
    update app.integration_connections c set last_success_at = now()
     where c.organization_id = p_organization_id and c.id = v_connection;
  end if;
end
$$;
revoke execute on function app_private.accounting_sync_record(text, text, boolean, text, text, boolean) from public;

drop function app_private.file_scan_load(text);
create function app_private.file_scan_load(p_organization_id text, p_file_id text)
returns table(status text, organization_id text, upload_id text, size_bytes bigint, require_scan boolean)
language plpgsql stable
set search_path = pg_catalog
as $$
begin
  return query
    select f.status, f.organization_id, f.upload_id, f.size_bytes, (app_private.file_policy(f.organization_id)).require_scan
      from app.files f where f.organization_id = p_organization_id and f.id = p_file_id;
end
$$;
revoke execute on function app_private.file_scan_load(text, text) from public;

drop function app_private.file_scan_record(text, text, text, boolean);
create function app_private.file_scan_record(p_organization_id text, p_file_id text, p_outcome text, p_detail text, p_required boolean)
returns text
language plpgsql
set search_path = pg_catalog
as $$
declare
  f app.files;
  v_reason text;
begin
  select * into f from app.files x where x.organization_id = p_organization_id and x.id = p_file_id for update;
  if not found or f.status <> 'processing' then
    return coalesce(f.status, 'missing');
  end if;
  if p_outcome = 'clean' or (p_outcome = 'not_scanned' and not p_required and not (app_private.file_policy(p_organization_id)).require_scan) then
    update app.files x set status = 'ready', scan_status = p_outcome, scan_detail = null
     where x.organization_id = p_organization_id and x.id = f.id;
    return 'ready';
  end if;
  -- The reason as a value: Citus takes no function but an immutable one inside CASE in a write.
  v_reason := case p_outcome
    when 'infected' then format('the virus scanner found %s', left(p_detail, 200))
    when 'failed' then 'the file could not be scanned'
    else 'a virus scan is required and no scanner is available' end;
  update app.files x
     set status = 'rejected', scan_status = case when p_outcome = 'not_scanned' then 'not_scanned' else p_outcome end,
         scan_detail = left(p_detail, 200), rejection_code = 'FILE_SCAN_FAILED', rejection_detail = v_reason
   where x.organization_id = p_organization_id and x.id = f.id;
  -- Infected or unscannable content is not kept.
  delete from app.file_chunks c where c.organization_id = p_organization_id and c.upload_id = f.upload_id;
  return 'rejected';
end
$$;
revoke execute on function app_private.file_scan_record(text, text, text, text, boolean) from public;

drop function app_private.ticket_reply_load(text);
create function app_private.ticket_reply_load(p_organization_id text, p_message_id text)
returns jsonb
language plpgsql stable
set search_path = pg_catalog
as $$
declare
  v_out jsonb;
begin
  select jsonb_build_object('status', m.delivery_status, 'body', m.body, 'organization_id', m.organization_id, 'ticket_id', t.id,
           'number', t.number, 'subject', t.subject, 'to', t.requester_email, 'to_name', t.requester_name, 'organization', o.name,
           'attachments', coalesce((select jsonb_agg(jsonb_build_object('file_id', f.id, 'name', f.name, 'content_type', f.content_type,
                                                                        'upload_id', f.upload_id, 'status', f.status) order by a.n)
                                      from unnest(m.attachment_file_ids) with ordinality a (id, n)
                                      join app.files f on f.organization_id = p_organization_id and f.id = a.id), '[]'::jsonb))
    into v_out
    from app.ticket_messages m
    join app.tickets t on t.organization_id = p_organization_id and t.id = m.ticket_id
    join app.organizations o on o.id = p_organization_id
   where m.organization_id = p_organization_id and m.id = p_message_id and m.type = 'reply';
  return v_out;
end
$$;
revoke execute on function app_private.ticket_reply_load(text, text) from public;

drop function app_private.ticket_reply_record(text, boolean, text);
create function app_private.ticket_reply_record(p_organization_id text, p_message_id text, p_sent boolean, p_detail text)
returns void
language plpgsql
set search_path = pg_catalog
as $$
declare
  v_now timestamptz := now();
begin
  update app.ticket_messages m
     set delivery_status = case when p_sent then 'sent' else 'failed' end, delivery_detail = left(p_detail, 500),
         delivered_at = case when p_sent then v_now end
   where m.organization_id = p_organization_id and m.id = p_message_id and m.delivery_status = 'queued';
end
$$;
revoke execute on function app_private.ticket_reply_record(text, text, boolean, text) from public;

drop function app_private.report_run_start(text);
create function app_private.report_run_start(p_organization_id text, p_run_id text)
returns boolean
language plpgsql
set search_path = pg_catalog
as $$
begin
  update app.report_runs r set status = 'running', started_at = now()
   where r.organization_id = p_organization_id and r.id = p_run_id and r.status = 'queued';
  return found;
end
$$;
revoke execute on function app_private.report_run_start(text, text) from public;

drop function app_private.report_run_execute(text, interval);
create function app_private.report_run_execute(p_organization_id text, p_run_id text, p_retention interval)
returns text
language plpgsql
set search_path = pg_catalog
as $$
declare
  r app.report_runs;
  d app_private.report_definitions;
  v_count integer;
  v_finished timestamptz;
begin
  select * into r from app.report_runs x where x.organization_id = p_organization_id and x.id = p_run_id for update;
  if not found or r.status <> 'running' then
    return coalesce(r.status, 'missing');
  end if;
  select * into d from app_private.report_definitions x where x.id = r.report_id;
  if not app_private.begin_delivery_context(p_organization_id, r.client_id) then
    update app.report_runs x set status = 'failed', finished_at = now(),
           error = jsonb_build_object('code', 'REPORT_FAILED', 'detail', 'the API Client can no longer make requests')
     where x.organization_id = p_organization_id and x.id = p_run_id;
    return 'failed';
  end if;
  if not (d.required_roles && app.current_roles()) then
    perform app_private.set_context(null, null, null);
    update app.report_runs x set status = 'failed', finished_at = now(),
           error = jsonb_build_object('code', 'REPORT_FAILED', 'detail',
             format('the API Client no longer holds one of the Roles %s', array_to_string(d.required_roles, ', ')))
     where x.organization_id = p_organization_id and x.id = p_run_id;
    return 'failed';
  end if;
  begin
    execute format('insert into app.report_results (organization_id, run_id, n, data)
                    select $1, $2, (row_number() over ())::integer, x from %s($3) x', d.function_name)
      using p_organization_id, r.id, r.parameters;
    get diagnostics v_count = row_count;
  exception when others then
    perform app_private.set_context(null, null, null);
    update app.report_runs x set status = 'failed', finished_at = now(),
           error = jsonb_build_object('code', 'REPORT_FAILED', 'detail', 'the report could not be computed')
     where x.organization_id = p_organization_id and x.id = p_run_id;
    return 'failed';
  end;
  perform app_private.set_context(null, null, null);
  -- Values, not clock_timestamp(): Citus takes no volatile function in a write.
  v_finished := clock_timestamp();
  update app.report_runs x set status = 'succeeded', data_as_of = now(), finished_at = v_finished, row_count = v_count,
         expires_at = v_finished + p_retention
   where x.organization_id = p_organization_id and x.id = p_run_id;
  return 'succeeded';
end
$$;
revoke execute on function app_private.report_run_execute(text, text, interval) from public;

/** The reports name the organization of the requesting client's context on every table they read
 * (its policies say the same): on Citus a report runs in that organization's worker, inside the
 * delegated report_run_execute, where a query must stay on the organization's shards. PL/pgSQL:
 * Citus cannot plan a SQL function's statements with parameters there. */
create or replace function reporting.time_by_project(p jsonb)
returns setof jsonb
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  return query
  select jsonb_build_object('project_id', e.project_id, 'project_name', pr.name, 'member_id', e.member_id,
           'billable_minutes', sum(e.minutes) filter (where e.billable), 'non_billable_minutes', coalesce(sum(e.minutes) filter (where not e.billable), 0),
           'total_minutes', sum(e.minutes))
    from app.time_entries e
    join app.projects pr on pr.organization_id = v__organization_id and pr.id = e.project_id
   where e.organization_id = v__organization_id
     and e.deleted_at is null and e.work_date between (p ->> 'from')::date and (p ->> 'to')::date
     and (p ->> 'project_id' is null or e.project_id = p ->> 'project_id')
   group by e.project_id, pr.name, e.member_id
   order by pr.name, e.project_id, e.member_id;
end
$$;

create or replace function reporting.project_progress(p jsonb)
returns setof jsonb
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  return query
  select jsonb_build_object('project_id', pr.id, 'project_name', pr.name, 'project_status', pr.status,
           'tasks_total', count(t.id), 'tasks_open', count(t.id) filter (where s.category = 'open'),
           'tasks_done', count(t.id) filter (where s.category = 'done'),
           'tasks_cancelled', count(t.id) filter (where s.category = 'cancelled'),
           'tasks_overdue', count(t.id) filter (where s.category = 'open' and t.due_at < now()),
           'completed_in_range', count(t.id) filter (where t.completed_at::date between coalesce((p ->> 'from')::date, '-infinity')
                                                                                   and coalesce((p ->> 'to')::date, 'infinity')))
    from app.projects pr
    left join (select x.* from app.tasks x where x.organization_id = v__organization_id and x.archived_at is null) t
           on t.project_id = pr.id
    left join (select x.* from app.task_workflow_statuses x where x.organization_id = v__organization_id) s
           on s.workflow_id = t.workflow_id and s.status = t.status
   where pr.organization_id = v__organization_id
     and (coalesce((p ->> 'include_archived')::boolean, false) or pr.status = 'active')
   group by pr.id, pr.name, pr.status
   order by pr.name, pr.id;
end
$$;

create or replace function reporting.member_utilization(p jsonb)
returns setof jsonb
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  v__organization_id text := app.current_organization_id();
  v_days integer;
begin
  select count(*)::integer into v_days from generate_series((p ->> 'from')::date, (p ->> 'to')::date, interval '1 day') d
   where extract(isodow from d) < 6;
  return query
  select jsonb_build_object('member_id', m.id, 'display_name', m.display_name,
           'worked_minutes', coalesce(w.minutes, 0), 'billable_minutes', coalesce(w.billable, 0),
           'capacity_minutes', v_days * coalesce((p ->> 'capacity_minutes_per_day')::integer, 480),
           'utilization', case when v_days = 0 then null
                               else round(coalesce(w.minutes, 0)::numeric / (v_days * coalesce((p ->> 'capacity_minutes_per_day')::integer, 480)), 4)::text end,
           'billable_utilization', case when v_days = 0 then null
                               else round(coalesce(w.billable, 0)::numeric / (v_days * coalesce((p ->> 'capacity_minutes_per_day')::integer, 480)), 4)::text end)
    from app.members m
    left join (select e.member_id, sum(e.minutes) as minutes, coalesce(sum(e.minutes) filter (where e.billable), 0) as billable
                 from app.time_entries e
                where e.organization_id = v__organization_id
                  and e.deleted_at is null and e.work_date between (p ->> 'from')::date and (p ->> 'to')::date
                group by e.member_id) w on w.member_id = m.id
   where m.organization_id = v__organization_id and m.status = 'active'
   order by m.id;
end
$$;

create or replace function reporting.invoice_aging(p jsonb)
returns setof jsonb
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  return query
  select jsonb_build_object('customer_id', o.customer_id, 'customer_name', c.name, 'currency', o.currency,
           'due_0_30', app_private.money_text(coalesce(sum(o.due) filter (where o.age <= 30), 0), max(o.scale)),
           'due_31_60', app_private.money_text(coalesce(sum(o.due) filter (where o.age between 31 and 60), 0), max(o.scale)),
           'due_61_90', app_private.money_text(coalesce(sum(o.due) filter (where o.age between 61 and 90), 0), max(o.scale)),
           'due_over_90', app_private.money_text(coalesce(sum(o.due) filter (where o.age > 90), 0), max(o.scale)),
           'total_due', app_private.money_text(sum(o.due), max(o.scale)), 'invoices', count(*))
    from (select i.customer_id, i.currency, i.scale, i.total - i.amount_paid as due,
                 coalesce((p ->> 'as_of')::date, current_date) - coalesce(i.due_date, i.issue_date, i.created_at::date) as age
            from app.invoices i
           where i.organization_id = v__organization_id and i.status = 'sent' and i.total > i.amount_paid) o
    join app.customers c on c.organization_id = v__organization_id and c.id = o.customer_id
   group by o.customer_id, c.name, o.currency
   order by c.name, o.customer_id, o.currency;
end
$$;

create or replace function reporting.payments_received(p jsonb)
returns setof jsonb
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  return query
  select jsonb_build_object('period_start', date_trunc(coalesce(p ->> 'period', 'month'), y.received_date)::date, 'currency', y.currency,
           'payments', count(*), 'amount', app_private.money_text(sum(y.amount), max(i.scale)))
    from app.payments y
    join app.invoices i on i.organization_id = v__organization_id and i.id = y.invoice_id
   where y.organization_id = v__organization_id and y.received_date between (p ->> 'from')::date and (p ->> 'to')::date
   group by date_trunc(coalesce(p ->> 'period', 'month'), y.received_date), y.currency
   order by date_trunc(coalesce(p ->> 'period', 'month'), y.received_date), y.currency;
end
$$;

create or replace function reporting.ticket_volume(p jsonb)
returns setof jsonb
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  return query
  select jsonb_build_object('week_start', w.week::date, 'created', count(t.id),
           'solved', count(t.id) filter (where t.resolved_at is not null),
           'median_hours_to_resolution', round((percentile_cont(0.5) within group (order by extract(epoch from t.resolved_at - t.created_at) / 3600)
                                                filter (where t.resolved_at is not null))::numeric, 1)::text)
    from generate_series(date_trunc('week', (p ->> 'from')::date), (p ->> 'to')::date, interval '1 week') w (week)
    left join (select x.* from app.tickets x
                where x.organization_id = v__organization_id
                  and x.created_at::date between (p ->> 'from')::date and (p ->> 'to')::date) t
           on t.created_at >= w.week and t.created_at < w.week + interval '1 week'
   group by w.week
   order by w.week;
end
$$;

/** On Citus, a job waiting in the outbox since before this migration names its organization by its
 * row: the drain puts it in the payload too. */
create or replace function app_private.job_outbox_drain() returns integer
language plpgsql
set search_path = pg_catalog
as $$
declare
  j record;
  v_count integer := 0;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return 0;
  end if;
  for j in delete from app_private.job_outbox returning * loop
    perform graphile_worker.add_job(j.task, (j.payload::jsonb || jsonb_build_object('organization_id', j.organization_id))::json,
                                    run_at => j.run_at, job_key => j.job_key, max_attempts => j.max_attempts);
    v_count := v_count + 1;
  end loop;
  return v_count;
end
$$;

/** Existing queued jobs get their organization in their payload (one server: a cluster's queue
 * starts with these migrations). */
do $$
begin
  if to_regclass('graphile_worker._private_jobs') is null or exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  -- (An organization not found leaves the job's organization null: its row is gone, the job is skipped.)
  update graphile_worker._private_jobs j
     set payload = (j.payload::jsonb || jsonb_build_object('organization_id', case t.identifier
           when 'webhook_deliver' then (select d.organization_id from app.webhook_deliveries d where d.id = j.payload ->> 'delivery_id')
           when 'webhook_fanout' then (select e.organization_id from app.events e where e.id = j.payload ->> 'event_id')
           when 'accounting_sync' then (select i.organization_id from app.invoices i where i.id = j.payload ->> 'invoice_id')
           when 'file_scan' then (select f.organization_id from app.files f where f.id = j.payload ->> 'file_id')
           when 'ticket_reply_email' then (select m.organization_id from app.ticket_messages m where m.id = j.payload ->> 'message_id')
           when 'report_run' then (select r.organization_id from app.report_runs r where r.id = j.payload ->> 'run_id')
           when 'agent_run' then (select r.organization_id from app.runs r where r.id = j.payload ->> 'run_id')
         end))::json
    from graphile_worker._private_tasks t
   where t.id = j.task_id and j.payload ->> 'organization_id' is null
     and t.identifier in ('webhook_deliver', 'webhook_fanout', 'accounting_sync', 'file_scan', 'ticket_reply_email', 'report_run', 'agent_run');
end
$$;

/** On Citus: the functions given read each api view's function where they read the view (as
 * migration 20261205000900 did for the commands then): `api.tasks(v_id)` where they read one row by
 * an id they hold (a parameter or variable, `p_…`, `v_…`, `l.…`, not an expression such as
 * `p_args ->> …`), `api.tasks()` otherwise. A view's query planned by Citus would ask every shard,
 * as its reader. Nothing on one server. */
create function app_private.citus_read_view_functions(p_functions regprocedure[]) returns void
language plpgsql
set search_path = pg_catalog
as $$
declare
  v_views text;
  v_old text;
  v_def text;
  f regprocedure;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  select string_agg(c.relname, '|') into v_views from pg_class c where c.relnamespace = 'api'::regnamespace and c.relkind = 'v';
  foreach f in array coalesce(p_functions, '{}') loop
    v_old := pg_get_functiondef(f);
    v_def := regexp_replace(v_old, '(from|join)(\s+)api\.(' || v_views || ')(\s+)([a-z_]+)(\s+where\s+)\5\.id(\s*=\s*)([lpv]_?[a-z_.]+)(?![\w(])(?!\s*-)',
                            '\1\2api.\3(\8)\4\5\6\5.id\7\8', 'g');
    v_def := regexp_replace(v_def, '(from|join)(\s+)api\.(' || v_views || ')\M(?!\()', '\1\2api.\3()', 'g');
    if v_def <> v_old then
      execute v_def;
    end if;
  end loop;
end
$$;
revoke execute on function app_private.citus_read_view_functions(regprocedure[]) from public;

/** On Citus: each job function is delegated by its organization (first argument), in autocommit
 * and inside a transaction block alike; the helpers they call run there too. Commands read the
 * views' functions there (as migration 20261205000900 did for the others). */
do $$
declare
  f text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  foreach f in array array[
    'app_private.webhook_fanout(text, text, integer)', 'app_private.webhook_fanout_batch(text, integer, integer)',
    'app_private.webhook_claim(text, text, integer)',
    'app_private.webhook_record_attempt(text, text, integer, timestamptz, integer, integer, text, boolean, integer, double precision, integer, integer)',
    -- (Called directly, as tests do; inside a job it runs in the job's own delegated call.)
    'app_private.client_may_read(text, text, text, text, text)',
    'app_private.accounting_sync_load(text, text)', 'app_private.accounting_sync_record(text, text, boolean, text, text, boolean)',
    'app_private.file_scan_load(text, text)', 'app_private.file_scan_record(text, text, text, text, boolean)',
    'app_private.ticket_reply_load(text, text)', 'app_private.ticket_reply_record(text, text, boolean, text)',
    'app_private.report_run_start(text, text)', 'app_private.report_run_execute(text, text, interval)'] loop
    perform create_distributed_function(f::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  end loop;
  foreach f in array array[
    'app_private.webhook_enqueue(text, text, timestamptz)', 'app_private.webhook_cancel(text, text, text)',
    'app_private.begin_delivery_context(text, text)',
    'app_private.webhook_fanout_organizations(integer)'] loop
    perform create_distributed_function(f::regprocedure);
  end loop;
  perform app_private.citus_read_view_functions(array['app_private.event_resource_visible(text, text, text)',
    'app_private.accounting_sync_load(text, text)']::regprocedure[]);
end
$$;

-- migrate:down
