-- migrate:up

-- Tenant-scoped references to clients (an endpoint's client is of the endpoint's organization).
alter table app.api_clients add constraint api_clients_organization_id_id_unique unique (organization_id, id);

/** The event catalogue: every event name a webhook endpoint may subscribe to, the resource it
 * references and the operations that emit it. src/events/catalog.ts publishes the same list in
 * the OpenAPI document (test/db/events.test.ts keeps the two equal). */
create table app_private.event_types (
  name text primary key constraint event_types_name_format check (name ~ '^[a-z_]+(\.[a-z_]+)+$'),
  resource_type text not null,
  emitted_by text[] not null,
  description text not null,
  subscribable boolean not null default true
);

insert into app_private.event_types (name, resource_type, emitted_by, description, subscribable) values
  ('project.created', 'project', '{createProject}', 'A project was created.', true),
  ('project.updated', 'project', '{updateProject}', 'Fields of a project changed.', true),
  ('project.archived', 'project', '{archiveProject}', 'A project was archived.', true),
  ('project.restored', 'project', '{restoreProject}', 'An archived project was restored.', true),
  ('task.created', 'task', '{createTask}', 'A task was created.', true),
  ('task.updated', 'task', '{updateTask}', 'Fields of a task changed.', true),
  ('task.transitioned', 'task', '{transitionTask}', 'A task moved to another workflow status.', true),
  ('task.archived', 'task', '{archiveTask}', 'A task was archived.', true),
  ('task.restored', 'task', '{restoreTask}', 'An archived task was restored.', true),
  ('time_entry.created', 'time_entry', '{createTimeEntry,createTimeEntryBatch}', 'A time entry was recorded.', true),
  ('time_entry.updated', 'time_entry', '{updateTimeEntry}', 'Fields of a time entry changed.', true),
  ('time_entry.submitted', 'time_entry', '{submitTimeEntry}', 'A time entry was submitted for approval.', true),
  ('time_entry.approved', 'time_entry', '{}', 'A named user approved a time entry (control plane).', true),
  ('time_entry.rejected', 'time_entry', '{}', 'A named user rejected a time entry (control plane).', true),
  ('time_entry.deleted', 'time_entry', '{deleteTimeEntry}', 'A time entry was deleted.', true),
  ('approval.created', 'approval', '{submitTimeEntry}', 'An approval was requested; fetch it before acting.', true),
  ('approval.updated', 'approval', '{submitTimeEntry}', 'An approval changed (resubmitted or decided); fetch it before acting.', true),
  ('webhook_endpoint.test', 'webhook_endpoint', '{testWebhookEndpoint}', 'A signed test event for one endpoint.', false);

/** Events: the transactional outbox. Written by triggers in the transaction of the change they
 * describe, so a rolled-back change emits nothing and a committed one is never lost. Kept 30
 * days (app_private.purge_webhook_history). The runtime role has no grant: it cannot forge,
 * read or erase events, only see them through its own deliveries. */
create table app.events (
  organization_id text not null references app.organizations on delete cascade,
  id text primary key default app_private.new_id('evt'),
  type text not null references app_private.event_types,
  resource_type text not null,
  resource_id text not null,
  resource_version integer not null,
  created_at timestamptz not null default now(),
  -- True until the worker has fanned the event out to the subscribed endpoints.
  fanout_pending boolean not null default false,
  -- A test event goes to this endpoint only.
  target_endpoint_id text,
  unique (organization_id, id)
);
create index events_created on app.events (created_at);
create index events_fanout_pending on app.events (created_at) where fanout_pending;

/** Webhook endpoints: a client's own. Secrets are sealed (AES-256-GCM) by the server with a key
 * derived from SVC_SECRET_KEY; during a rotation the previous secret signs too until it expires. */
create table app.webhook_endpoints (
  organization_id text not null references app.organizations on delete cascade,
  id text primary key default app_private.new_id('whe'),
  client_id text not null,
  url text not null
    constraint webhook_endpoints_url_https check (url ~ '^https://[^/?#@\s]+' and length(url) <= 2048),
  events text[] not null constraint webhook_endpoints_events_bounded check (cardinality(events) between 1 and 100),
  description text constraint webhook_endpoints_description_length check (length(description) <= 1000),
  status text not null default 'enabled' constraint webhook_endpoints_status_valid check (status in ('enabled', 'disabled')),
  disabled_reason text constraint webhook_endpoints_disabled_reason_valid
    check (disabled_reason in ('client', 'delivery_failures')),
  secret_sealed text not null,
  previous_secret_sealed text,
  previous_secret_expires_at timestamptz,
  consecutive_failures integer not null default 0,
  failing_since timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  version integer not null default 1,
  constraint webhook_endpoints_id_format check (id ~ '^whe_[0-9a-f]{28}$'),
  constraint webhook_endpoints_disabled_has_reason check ((status = 'disabled') = (disabled_reason is not null)),
  foreign key (organization_id, client_id) references app.api_clients (organization_id, id) on delete cascade,
  unique (organization_id, id),
  unique (client_id, id)
);
create index webhook_endpoints_org_enabled on app.webhook_endpoints (organization_id) where status = 'enabled';
create index webhook_endpoints_client on app.webhook_endpoints (client_id, created_at, id);
create trigger _100_touch_version before update on app.webhook_endpoints
  for each row execute function app_private.tg__touch_version();

/** Subscriptions name catalogue events only (any writer, not only the API). */
create function app_private.tg_webhook_endpoints__check_events() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_errors jsonb := '[]';
  i integer;
begin
  for i in 1 .. coalesce(cardinality(new.events), 0) loop
    if not exists (select from app_private.event_types t where t.name = new.events[i] and t.subscribable) then
      v_errors := v_errors || app_private.error(format('/events/%s', i - 1), 'WEBHOOK_EVENT_NOT_SUPPORTED',
        format('%s is not an event name of the catalogue (see the OpenAPI document''s webhooks)', left(new.events[i], 100)));
    end if;
  end loop;
  perform app_private.raise_errors(v_errors);
  new.events := array(select distinct e from unnest(new.events) e order by e);
  return new;
end
$$;
create trigger _200_check_events before insert or update of events on app.webhook_endpoints
  for each row execute function app_private.tg_webhook_endpoints__check_events();

/** At most 20 endpoints per client (Stripe allows 16): fan-out cost per event stays bounded. */
create function app_private.tg_webhook_endpoints__limit() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  -- Serialize creations per client so two concurrent ones cannot both pass the count.
  perform pg_advisory_xact_lock(hashtextextended('webhook_endpoints:' || new.client_id, 0));
  if (select count(*) from app.webhook_endpoints w where w.client_id = new.client_id) >= 20 then
    perform app_private.raise('SVC09', 'CONFLICT', 'a client can have at most 20 webhook endpoints; disable and reuse one');
  end if;
  return new;
end
$$;
create trigger _300_limit before insert on app.webhook_endpoints
  for each row execute function app_private.tg_webhook_endpoints__limit();

alter table app.webhook_endpoints enable row level security;
alter table app.webhook_endpoints force row level security;
create policy "Clients see their own endpoints" on app.webhook_endpoints for select to svc_runtime
  using (organization_id = (select app.current_organization_id()) and client_id = (select app.current_client_id()));
create policy "Clients create their own endpoints" on app.webhook_endpoints for insert to svc_runtime
  with check (organization_id = (select app.current_organization_id()) and client_id = (select app.current_client_id()));
create policy "Clients change their own endpoints" on app.webhook_endpoints for update to svc_runtime
  using (organization_id = (select app.current_organization_id()) and client_id = (select app.current_client_id()))
  with check (organization_id = (select app.current_organization_id()) and client_id = (select app.current_client_id()));
-- No delete grant: endpoints are disabled, never removed, by clients (their deliveries are history).
grant select, insert, update (url, events, description, status, disabled_reason, secret_sealed, previous_secret_sealed,
                              previous_secret_expires_at, consecutive_failures, failing_since)
  on app.webhook_endpoints to svc_runtime;

/** Deliveries: one per (event, endpoint), plus one per replay. Attempts are written by the worker. */
create table app.webhook_deliveries (
  organization_id text not null references app.organizations on delete cascade,
  id text primary key default app_private.new_id('whd'),
  client_id text not null,
  endpoint_id text not null,
  event_id text not null,
  replay_of text references app.webhook_deliveries on delete set null,
  status text not null default 'pending'
    constraint webhook_deliveries_status_valid check (status in ('pending', 'succeeded', 'failed', 'cancelled')),
  status_reason text,
  attempt_count integer not null default 0,
  next_attempt_at timestamptz default now(),
  -- Set while a worker is sending; a lease that runs out means the worker died mid-attempt.
  lease_until timestamptz,
  retry_until timestamptz not null default now() + interval '72 hours',
  created_at timestamptz not null default now(),
  completed_at timestamptz,
  foreign key (organization_id, event_id) references app.events (organization_id, id) on delete cascade,
  foreign key (client_id, endpoint_id) references app.webhook_endpoints (client_id, id) on delete cascade,
  constraint webhook_deliveries_pending_consistent check ((status = 'pending') = (completed_at is null))
);
create unique index webhook_deliveries_once on app.webhook_deliveries (event_id, endpoint_id) where replay_of is null;
create index webhook_deliveries_endpoint on app.webhook_deliveries (endpoint_id, created_at, id);
create index webhook_deliveries_lease on app.webhook_deliveries (lease_until) where status = 'pending' and lease_until is not null;

create table app.webhook_delivery_attempts (
  organization_id text not null,
  delivery_id text not null references app.webhook_deliveries on delete cascade,
  attempt integer not null,
  started_at timestamptz not null,
  duration_ms integer not null,
  response_status integer,
  error text,
  primary key (delivery_id, attempt)
);

alter table app.webhook_deliveries enable row level security;
alter table app.webhook_deliveries force row level security;
create policy "Clients see deliveries to their own endpoints" on app.webhook_deliveries for select to svc_runtime
  using (organization_id = (select app.current_organization_id()) and client_id = (select app.current_client_id()));
grant select on app.webhook_deliveries to svc_runtime;
alter table app.webhook_delivery_attempts enable row level security;
alter table app.webhook_delivery_attempts force row level security;
create policy "Clients see attempts of their own deliveries" on app.webhook_delivery_attempts for select to svc_runtime
  using (organization_id = (select app.current_organization_id())
         and exists (select from app.webhook_deliveries d where d.id = webhook_delivery_attempts.delivery_id));
grant select on app.webhook_delivery_attempts to svc_runtime;

/** Administrator notifications (control plane): automatic endpoint disabling, for now. */
create table app_private.admin_notifications (
  id bigint generated always as identity primary key,
  organization_id text not null references app.organizations on delete cascade,
  kind text not null,
  subject_id text not null,
  detail text not null,
  created_at timestamptz not null default now()
);

create function control.notifications_list(p_org text) returns setof app_private.admin_notifications
language sql stable
set search_path = pg_catalog
as $$ select * from app_private.admin_notifications where organization_id = p_org order by id $$;

/** Emits an event for a changed row, from a trigger, in the writer's transaction. A fan-out job
 * is queued only when an enabled endpoint of the organization subscribes to the event. */
create function app_private.emit_event(p_org text, p_type text, p_resource_type text, p_resource_id text,
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
    perform graphile_worker.add_job('webhook_fanout', json_build_object('event_id', v_id), job_key => 'fanout:' || v_id,
                                    max_attempts => 25);
  end if;
  return v_id;
end
$$;

create function app_private.tg__emit_event() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_resource text := tg_argv[0];
  v_type text := v_resource || '.created';
begin
  -- Each IF branch is parsed only when it runs: the record fields differ per table.
  if tg_op = 'UPDATE' then
    if new.version = old.version then
      return null;
    end if;
    v_type := v_resource || '.updated';
    if v_resource = 'project' then
      if new.status is distinct from old.status and new.status = 'archived' then
        v_type := 'project.archived';
      elsif new.status is distinct from old.status and old.status = 'archived' then
        v_type := 'project.restored';
      end if;
    elsif v_resource = 'task' then
      if new.archived_at is not null and old.archived_at is null then
        v_type := 'task.archived';
      elsif new.archived_at is null and old.archived_at is not null then
        v_type := 'task.restored';
      elsif new.status is distinct from old.status then
        v_type := 'task.transitioned';
      end if;
    elsif v_resource = 'time_entry' then
      if new.deleted_at is not null and old.deleted_at is null then
        v_type := 'time_entry.deleted';
      elsif new.status is distinct from old.status and new.status in ('submitted', 'approved', 'rejected') then
        v_type := 'time_entry.' || new.status;
      end if;
    end if;
  end if;
  perform app_private.emit_event(new.organization_id, v_type, v_resource, new.id, new.version);
  return null;
end
$$;

create trigger _950_emit_event after insert or update on app.projects
  for each row execute function app_private.tg__emit_event('project');
create trigger _950_emit_event after insert or update on app.tasks
  for each row execute function app_private.tg__emit_event('task');
create trigger _950_emit_event after insert or update on app.time_entries
  for each row execute function app_private.tg__emit_event('time_entry');
create trigger _950_emit_event after insert or update on app.approvals
  for each row execute function app_private.tg__emit_event('approval');

/** Views the API reads. */
create view api.webhook_endpoints with (security_invoker = true) as
select w.organization_id, w.id, w.client_id, w.status, w.created_at, w.version, w.secret_sealed,
       w.previous_secret_sealed, w.previous_secret_expires_at,
       jsonb_build_object('object', 'webhook_endpoint', 'id', w.id, 'url', w.url, 'events', to_jsonb(w.events),
         'description', w.description, 'status', w.status, 'disabled_reason', w.disabled_reason,
         'previous_secret_expires_at', case when w.previous_secret_expires_at > now()
                                            then app_private.iso_timestamp(w.previous_secret_expires_at) end,
         'created_at', app_private.iso_timestamp(w.created_at), 'updated_at', app_private.iso_timestamp(w.updated_at),
         'version', w.version) as doc
  from app.webhook_endpoints w;
grant select on api.webhook_endpoints to svc_runtime;

create view api.webhook_deliveries with (security_invoker = true) as
select d.organization_id, d.id, d.endpoint_id, d.event_id, d.status, d.created_at, e.type as event_type, e.created_at as event_created_at,
       jsonb_build_object('object', 'webhook_delivery', 'id', d.id, 'endpoint_id', d.endpoint_id,
         'event', jsonb_build_object('id', e.id, 'type', e.type, 'created_at', app_private.iso_timestamp(e.created_at),
                                     'data', jsonb_build_object('object', jsonb_build_object(
                                       'type', e.resource_type, 'id', e.resource_id, 'version', e.resource_version))),
         'status', d.status, 'status_reason', d.status_reason, 'attempt_count', d.attempt_count,
         'next_attempt_at', case when d.status = 'pending' then app_private.iso_timestamp(d.next_attempt_at) end,
         'replay_of', d.replay_of,
         'last_attempt', (select jsonb_build_object('attempt', a.attempt, 'started_at', app_private.iso_timestamp(a.started_at),
                                   'duration_ms', a.duration_ms, 'response_status', a.response_status, 'error', a.error)
                            from app.webhook_delivery_attempts a where a.delivery_id = d.id order by a.attempt desc limit 1),
         'created_at', app_private.iso_timestamp(d.created_at), 'completed_at', app_private.iso_timestamp(d.completed_at)) as doc
  from app.webhook_deliveries d
  join app.events e on e.id = d.event_id;
grant select on api.webhook_deliveries to svc_runtime;
-- Deliveries reference events the client was allowed to read when they were fanned out: the view
-- may show them, the runtime role still cannot read app.events itself.
create policy "Events are visible through the client's deliveries" on app.events for select to svc_runtime
  using (organization_id = (select app.current_organization_id())
         and exists (select from app.webhook_deliveries d where d.event_id = events.id));
alter table app.events enable row level security;
alter table app.events force row level security;
grant select on app.events to svc_runtime;

create function app_private.webhook_endpoint_not_found(p_id text) returns void
language sql volatile
set search_path = pg_catalog
as $$ select app_private.raise('SVN04', 'WEBHOOK_ENDPOINT_NOT_FOUND', format('no webhook endpoint %s of your client', p_id)) $$;
grant execute on function app_private.webhook_endpoint_not_found(text) to svc_runtime;

/** Commands. The server seals secrets and checks URL safety (DNS) before calling these. */
/** The id is chosen by the server before the verification challenge (which names it). */
create function api.webhook_endpoint_create(p_id text, p_url text, p_events text[], p_description text, p_secret_sealed text)
returns table (doc jsonb, version integer)
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  insert into app.webhook_endpoints (organization_id, id, client_id, url, events, description, secret_sealed)
  values (app.current_organization_id(), p_id, app.current_client_id(), p_url, p_events, p_description, p_secret_sealed);
  return query select w.doc, w.version from api.webhook_endpoints w where w.id = p_id;
end
$$;
grant execute on function api.webhook_endpoint_create(text, text, text[], text, text) to svc_runtime;

/** Locks the caller's endpoint (404 for anyone else's) and checks If-Match when given. */
create function app_private.webhook_endpoint_lock(p_id text, p_if_match integer[] default null) returns app.webhook_endpoints
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  w app.webhook_endpoints;
begin
  select * into w from app.webhook_endpoints where id = p_id for update;
  if not found then
    perform app_private.webhook_endpoint_not_found(p_id);
  end if;
  if p_if_match is not null then
    perform app_private.check_if_match(w.version, p_if_match);
  end if;
  return w;
end
$$;
grant execute on function app_private.webhook_endpoint_lock(text, integer[]) to svc_runtime;

/** p_verified_url: the URL whose verification challenge the server ran before this transaction; a
 * new URL other than that one (the endpoint changed meanwhile) is refused, retryable. */
create function api.webhook_endpoint_update(p_id text, p_if_match integer[], p_patch jsonb, p_verified_url text default null)
returns table (doc jsonb, version integer)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  w app.webhook_endpoints := app_private.webhook_endpoint_lock(p_id, p_if_match);
begin
  if p_patch ? 'url' and p_patch ->> 'url' is distinct from w.url and p_patch ->> 'url' is distinct from p_verified_url then
    perform app_private.raise('SVC09', 'CONFLICT', 'the endpoint changed while the new URL was being verified; retry the request');
  end if;
  update app.webhook_endpoints e
     set url = case when p_patch ? 'url' then p_patch ->> 'url' else e.url end,
         events = case when p_patch ? 'events' then array(select jsonb_array_elements_text(p_patch -> 'events')) else e.events end,
         description = case when p_patch ? 'description' then p_patch ->> 'description' else e.description end
   where e.id = w.id;
  return query select v.doc, v.version from api.webhook_endpoints v where v.id = w.id;
end
$$;
grant execute on function api.webhook_endpoint_update(text, integer[], jsonb, text) to svc_runtime;

create function api.webhook_endpoint_rotate(p_id text, p_secret_sealed text, p_previous_expires_in_seconds integer)
returns table (doc jsonb, version integer)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  w app.webhook_endpoints := app_private.webhook_endpoint_lock(p_id);
begin
  update app.webhook_endpoints e
     set previous_secret_sealed = case when p_previous_expires_in_seconds > 0 then e.secret_sealed end,
         previous_secret_expires_at = case when p_previous_expires_in_seconds > 0
                                           then now() + make_interval(secs => p_previous_expires_in_seconds) end,
         secret_sealed = p_secret_sealed
   where e.id = w.id;
  return query select v.doc, v.version from api.webhook_endpoints v where v.id = w.id;
end
$$;
grant execute on function api.webhook_endpoint_rotate(text, text, integer) to svc_runtime;

/** Enable or disable; enabling clears the failure streak. Idempotent (no new version when unchanged).
 * Enabling a disabled endpoint needs p_verified (the server ran the challenge before this
 * transaction); an endpoint disabled meanwhile is refused, retryable. */
create function api.webhook_endpoint_set_status(p_id text, p_status text, p_verified boolean default false)
returns table (doc jsonb, version integer)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  w app.webhook_endpoints := app_private.webhook_endpoint_lock(p_id);
begin
  if p_status = 'enabled' and w.status <> 'enabled' and not p_verified then
    perform app_private.raise('SVC09', 'CONFLICT', 'the endpoint was disabled while the request was under way; retry the request');
  end if;
  if w.status <> p_status then
    update app.webhook_endpoints e
       set status = p_status,
           disabled_reason = case when p_status = 'disabled' then 'client' end,
           consecutive_failures = 0, failing_since = null
     where e.id = w.id;
  end if;
  return query select v.doc, v.version from api.webhook_endpoints v where v.id = w.id;
end
$$;
grant execute on function api.webhook_endpoint_set_status(text, text, boolean) to svc_runtime;

/** One delivery with all its attempts. */
create function api.webhook_delivery_get(p_endpoint text, p_delivery text) returns table (doc jsonb)
language sql stable
set search_path = pg_catalog
as $$
  select v.doc || jsonb_build_object('attempts', coalesce((
           select jsonb_agg(jsonb_build_object('attempt', a.attempt, 'started_at', app_private.iso_timestamp(a.started_at),
                                               'duration_ms', a.duration_ms, 'response_status', a.response_status,
                                               'error', a.error) order by a.attempt)
             from app.webhook_delivery_attempts a where a.delivery_id = v.id), '[]'::jsonb))
    from api.webhook_deliveries v
   where v.id = p_delivery and v.endpoint_id = p_endpoint
$$;
grant execute on function api.webhook_delivery_get(text, text) to svc_runtime;

/** Queues a delivery job (in the caller's transaction). */
-- plpgsql: graphile-worker's schema is installed after the dbmate migrations (scripts/db.ts).
create function app_private.webhook_enqueue(p_delivery text, p_run_at timestamptz default null) returns void
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  perform graphile_worker.add_job('webhook_deliver', json_build_object('delivery_id', p_delivery),
                                  run_at => p_run_at, job_key => 'deliver:' || p_delivery, max_attempts => 25);
end
$$;

/** Replay: a new delivery of the same event to the same endpoint, inside the retention window. */
create function api.webhook_delivery_replay(p_endpoint text, p_delivery text) returns table (doc jsonb)
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  w app.webhook_endpoints;
  d app.webhook_deliveries;
  e app.events;
  v_id text := app_private.new_id('whd');
begin
  -- Runs as definer (it writes a delivery): ownership is checked against the request context.
  select * into w from app.webhook_endpoints
   where id = p_endpoint and organization_id = app.current_organization_id() and client_id = app.current_client_id();
  if not found then
    perform app_private.webhook_endpoint_not_found(p_endpoint);
  end if;
  select * into d from app.webhook_deliveries where id = p_delivery and endpoint_id = w.id;
  if not found then
    perform app_private.raise('SVN04', 'WEBHOOK_DELIVERY_NOT_FOUND', format('no delivery %s of endpoint %s', p_delivery, p_endpoint));
  end if;
  select * into e from app.events where id = d.event_id;
  if e.created_at < now() - interval '30 days' then
    perform app_private.raise('SVC09', 'WEBHOOK_REPLAY_EXPIRED',
      format('event %s is older than the 30-day retention window; fetch the resource instead', e.id));
  end if;
  if w.status <> 'enabled' then
    perform app_private.raise('SVC09', 'CONFLICT', 'the endpoint is disabled; enable it before replaying');
  end if;
  insert into app.webhook_deliveries (organization_id, id, client_id, endpoint_id, event_id, replay_of)
  values (w.organization_id, v_id, w.client_id, w.id, e.id, d.id);
  perform app_private.webhook_enqueue(v_id);
  return query select v.doc from api.webhook_deliveries v where v.id = v_id;
end
$$;
grant execute on function api.webhook_delivery_replay(text, text) to svc_runtime;

/** A signed test event to one endpoint (enabled or not: testing is how a client checks a fix). */
create function api.webhook_endpoint_test(p_endpoint text) returns table (doc jsonb)
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  w app.webhook_endpoints;
  v_event text;
  v_id text := app_private.new_id('whd');
begin
  select * into w from app.webhook_endpoints
   where id = p_endpoint and organization_id = app.current_organization_id() and client_id = app.current_client_id();
  if not found then
    perform app_private.webhook_endpoint_not_found(p_endpoint);
  end if;
  insert into app.events (organization_id, type, resource_type, resource_id, resource_version, target_endpoint_id)
  values (w.organization_id, 'webhook_endpoint.test', 'webhook_endpoint', w.id, w.version, w.id)
  returning id into v_event;
  insert into app.webhook_deliveries (organization_id, id, client_id, endpoint_id, event_id)
  values (w.organization_id, v_id, w.client_id, w.id, v_event);
  perform app_private.webhook_enqueue(v_id);
  return query select v.doc from api.webhook_deliveries v where v.id = v_id;
end
$$;
grant execute on function api.webhook_endpoint_test(text) to svc_runtime;

/* ---- Worker side (run by the worker's owner connection; nothing here is granted to svc_runtime) ---- */

/** Sets the request context of a client for a delivery decision, after the same standing checks
 * as api.begin_request. Returns false (and sets nothing) when the client may not read at all. */
create function app_private.begin_delivery_context(p_client_id text) returns boolean
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
  perform set_config('svc.organization_id', '', true), set_config('svc.client_id', '', true), set_config('svc.roles', '', true);
  if not found or c.status <> 'active' or c.org_status = 'suspended' or c.license_status <> 'active'
     or c.org_plan in ('trial', 'team') then
    return false;
  end if;
  perform set_config('svc.organization_id', c.organization_id, true),
          set_config('svc.client_id', p_client_id, true),
          set_config('svc.roles', array_to_string(c.svc_roles, ','), true);
  return true;
end
$$;

/** Whether the current request context may read the event's resource: the API's own views under
 * the runtime role's policies (the caller switches to svc_runtime first). Deleted time entries
 * are no longer readable rows; their deletion event goes to whoever may read time entries. */
create function app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text) returns boolean
language sql stable
set search_path = pg_catalog
as $$
  select case p_resource_type
    when 'project' then exists (select from api.projects v where v.id = p_resource_id)
    when 'task' then exists (select from api.tasks v where v.id = p_resource_id)
    when 'time_entry' then case when p_type = 'time_entry.deleted' then app_private.may_read_time_entries()
                                else exists (select from api.time_entries v where v.id = p_resource_id and v.deleted_at is null) end
    when 'approval' then exists (select from api.approvals v where v.id = p_resource_id)
    when 'webhook_endpoint' then exists (select from api.webhook_endpoints v where v.id = p_resource_id)
    else false end
$$;
grant execute on function app_private.event_resource_visible(text, text, text) to svc_runtime;

/** Whether a client may read an event's resource now: its standing (as api.begin_request), then
 * the API's views under the runtime role's row policies, by switching to svc_runtime for that
 * one check (allowed here: this function is not security definer). The worker's owner
 * connection calls it; svc_runtime cannot (no grant). */
create function app_private.client_may_read(p_client text, p_type text, p_resource_type text, p_resource_id text)
returns boolean
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  v_visible boolean;
begin
  if not app_private.begin_delivery_context(p_client) then
    return false;
  end if;
  perform set_config('role', 'svc_runtime', true);
  v_visible := app_private.event_resource_visible(p_type, p_resource_type, p_resource_id);
  perform set_config('role', 'none', true);
  return v_visible;
end
$$;

/** Fan-out of one event (the webhook_fanout job): a delivery for each enabled endpoint that
 * subscribes to it and whose client may read the resource, each already claimed for its first
 * attempt (lease set), which the same job makes at once: no second job hop, no second check. If
 * the job dies first, the leases run out and webhook_recover queues the deliveries. Idempotent. */
create function app_private.webhook_fanout(p_event text, p_lease_seconds integer)
returns table (delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text,
               organization_id text, type text, resource_type text, resource_id text, resource_version integer,
               created_at timestamptz)
language plpgsql volatile
set search_path = pg_catalog
as $$
#variable_conflict use_column
declare
  e app.events;
  w record;
  v_client text;
  v_allowed boolean;
begin
  select * into e from app.events x where x.id = p_event and x.fanout_pending for update skip locked;
  if not found then
    return;
  end if;
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
    on conflict (event_id, endpoint_id) where replay_of is null do nothing
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
  update app.events x set fanout_pending = false where x.id = e.id;
end
$$;

/** Claims the next attempt of a delivery (the webhook_deliver job): nothing when it is not due,
 * already in flight or finished; cancelled (with the reason) when the endpoint is disabled, the
 * retention or retry window is over, or the client may no longer read the resource. Otherwise a
 * lease covers the attempt, and the row carries what the worker needs to sign and send. */
create function app_private.webhook_claim(p_delivery text, p_lease_seconds integer)
returns table (attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text,
               organization_id text, type text, resource_type text, resource_id text, resource_version integer,
               created_at timestamptz)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  d app.webhook_deliveries;
  w app.webhook_endpoints;
  e app.events;
  v_reason text;
begin
  select * into d from app.webhook_deliveries x where x.id = p_delivery for update skip locked;
  if not found or d.status <> 'pending' or d.lease_until > now() or d.next_attempt_at > now() + interval '1 second' then
    return;
  end if;
  select * into w from app.webhook_endpoints x where x.id = d.endpoint_id;
  select * into e from app.events x where x.id = d.event_id;
  v_reason := case
    -- A test event goes to a disabled endpoint too: testing is how a client checks a fix.
    when w.status <> 'enabled' and e.type <> 'webhook_endpoint.test' then 'endpoint_disabled'
    when e.created_at < now() - interval '30 days' then 'retention_expired'
    -- The last retry is scheduled at retry_until; a job that runs much later (workers down) is not sent.
    when now() > d.retry_until + interval '15 minutes' then 'retry_period_exhausted'
    when not app_private.client_may_read(d.client_id, e.type, e.resource_type, e.resource_id) then 'not_authorized'
  end;
  if v_reason is not null then
    perform app_private.webhook_cancel(d.id, v_reason);
    return;
  end if;
  update app.webhook_deliveries x
     set attempt_count = x.attempt_count + 1, lease_until = now() + make_interval(secs => p_lease_seconds)
   where x.id = d.id
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

/** Retry schedule (Standard Webhooks): after attempt n, wait 5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
 * 14 h, 20 h, then 24 h, each with +-20 % jitter, never beyond retry_until. p_scale shrinks the
 * schedule for tests (SVC_WEBHOOK_RETRY_SCALE). */
create function app_private.webhook_retry_delay(p_attempt integer, p_scale double precision default 1) returns interval
language sql volatile
set search_path = pg_catalog
as $$
  select make_interval(secs => coalesce((array[5, 300, 1800, 7200, 18000, 36000, 50400, 72000]::integer[])[p_attempt], 86400)
                               * (0.8 + random() * 0.4) * p_scale)
$$;

/** Records one attempt and decides what follows: success, a scheduled retry, or failure. Keeps the
 * endpoint's failure streak; a streak of p_disable_after failed attempts lasting at least
 * p_disable_after_seconds disables the endpoint and notifies the administrator. */
create function app_private.webhook_record_attempt(
  p_delivery text, p_attempt integer, p_started_at timestamptz, p_duration_ms integer, p_response_status integer,
  p_error text, p_retryable boolean, p_retry_after_seconds integer, p_scale double precision,
  p_disable_after integer, p_disable_after_seconds integer) returns text
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  d app.webhook_deliveries;
  w app.webhook_endpoints;
  v_ok boolean := p_response_status between 200 and 299 and p_error is null;
  v_next timestamptz;
  v_outcome text;
begin
  select * into d from app.webhook_deliveries where id = p_delivery for update;
  if not found or d.status <> 'pending' or d.attempt_count <> p_attempt then
    return 'stale';
  end if;
  insert into app.webhook_delivery_attempts (organization_id, delivery_id, attempt, started_at, duration_ms, response_status, error)
  values (d.organization_id, d.id, p_attempt, p_started_at, p_duration_ms, p_response_status, left(p_error, 500));
  if v_ok then
    update app.webhook_deliveries set status = 'succeeded', status_reason = null, completed_at = now(), lease_until = null,
                                      next_attempt_at = null
     where id = d.id;
    update app.webhook_endpoints set consecutive_failures = 0, failing_since = null
     where id = d.endpoint_id and (consecutive_failures <> 0 or failing_since is not null);
    return 'succeeded';
  end if;
  if p_retryable then
    v_next := now() + greatest(app_private.webhook_retry_delay(p_attempt, p_scale),
                               make_interval(secs => least(coalesce(p_retry_after_seconds, 0), 86400) * p_scale));
  end if;
  -- The schedule's next step may overshoot the 72 hours: the last attempt is then at retry_until.
  if p_retryable and now() < d.retry_until then
    v_next := least(v_next, d.retry_until);
    update app.webhook_deliveries set next_attempt_at = v_next, lease_until = null, status_reason = null where id = d.id;
    perform app_private.webhook_enqueue(d.id, v_next);
    v_outcome := 'retrying';
  else
    update app.webhook_deliveries
       set status = 'failed', completed_at = now(), lease_until = null, next_attempt_at = null,
           status_reason = case when p_retryable then 'retry_period_exhausted' else 'permanent_failure' end
     where id = d.id;
    v_outcome := 'failed';
  end if;
  update app.webhook_endpoints
     set consecutive_failures = consecutive_failures + 1, failing_since = coalesce(failing_since, now())
   where id = d.endpoint_id
  returning * into w;
  if w.status = 'enabled' and w.consecutive_failures >= p_disable_after
     and w.failing_since <= now() - make_interval(secs => p_disable_after_seconds) then
    update app.webhook_endpoints set status = 'disabled', disabled_reason = 'delivery_failures' where id = w.id;
    insert into app_private.admin_notifications (organization_id, kind, subject_id, detail)
    values (w.organization_id, 'webhook_endpoint_disabled', w.id,
            format('webhook endpoint %s of client %s was disabled after %s consecutive failed deliveries since %s',
                   w.id, w.client_id, w.consecutive_failures, w.failing_since));
    v_outcome := v_outcome || ',endpoint_disabled';
  end if;
  return v_outcome;
end
$$;

/** Ends a delivery without sending (endpoint disabled, Role lost, client inactive, window over). */
create function app_private.webhook_cancel(p_delivery text, p_reason text) returns void
language sql volatile
set search_path = pg_catalog
as $$
  update app.webhook_deliveries set status = 'cancelled', status_reason = p_reason, completed_at = now(),
                                    lease_until = null, next_attempt_at = null
   where id = p_delivery and status = 'pending'
$$;

/** Crash recovery. A worker that dies loses the jobs it had locked (graphile-worker frees them
 * only after hours), so: deliveries whose lease ran out (died mid-attempt), deliveries overdue by
 * p_stale without a lease (their job was locked by a dead worker), and events whose fan-out is
 * overdue are queued again. The job keys let a live queued job absorb the copy; a duplicate run
 * is harmless because each attempt is claimed under a row lock and a lease. */
create function app_private.webhook_recover(p_stale interval default interval '30 seconds') returns integer
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
  for r in select e.id from app.events e
            where e.fanout_pending and e.created_at < now() - p_stale
              and not exists (select from graphile_worker._private_jobs j
                               where j.key = 'fanout:' || e.id and (j.is_available or j.locked_at > now() - p_stale))
            for update of e skip locked loop
    perform graphile_worker.add_job('webhook_fanout', json_build_object('event_id', r.id), job_key => 'fanout:' || r.id,
                                    max_attempts => 25);
    v_count := v_count + 1;
  end loop;
  return v_count;
end
$$;

/** Retention: events and delivery diagnostics older than 30 days (deliveries and attempts go with
 * their event), and expired idempotency keys. Scheduled daily by the worker. */
create function app_private.purge_webhook_history(p_older_than interval default interval '30 days') returns bigint
language sql volatile
set search_path = pg_catalog
as $$
  with gone as (delete from app.events where created_at < now() - p_older_than returning 1)
  select count(*) from gone
$$;

-- The worker checks visibility as svc_runtime: its owner connection must be able to SET ROLE.
do $$
begin
  if not pg_has_role(current_user, 'svc_runtime', 'member') then
    execute format('grant svc_runtime to %I', current_user);
  end if;
end
$$;

-- migrate:down
drop function app_private.purge_webhook_history(interval);
drop function app_private.webhook_recover(interval);
drop function app_private.webhook_cancel(text, text);
drop function app_private.webhook_record_attempt(text, integer, timestamptz, integer, integer, text, boolean, integer,
  double precision, integer, integer);
drop function app_private.webhook_retry_delay(integer, double precision);
drop function app_private.event_resource_visible(text, text, text);
drop function app_private.webhook_claim(text, integer);
drop function app_private.webhook_fanout(text, integer);
drop function app_private.client_may_read(text, text, text, text);
drop function app_private.begin_delivery_context(text);
drop function api.webhook_endpoint_test(text);
drop function api.webhook_delivery_get(text, text);
drop function api.webhook_delivery_replay(text, text);
drop function app_private.webhook_enqueue(text, timestamptz);
drop function api.webhook_endpoint_set_status(text, text, boolean);
drop function api.webhook_endpoint_rotate(text, text, integer);
drop function api.webhook_endpoint_update(text, integer[], jsonb, text);
drop function app_private.webhook_endpoint_lock(text, integer[]);
drop function api.webhook_endpoint_create(text, text, text[], text, text);
drop function app_private.webhook_endpoint_not_found(text);
drop view api.webhook_deliveries;
drop view api.webhook_endpoints;
drop trigger _950_emit_event on app.approvals;
drop trigger _950_emit_event on app.time_entries;
drop trigger _950_emit_event on app.tasks;
drop trigger _950_emit_event on app.projects;
drop function app_private.tg__emit_event();
drop function app_private.emit_event(text, text, text, text, integer, text);
drop function control.notifications_list(text);
drop table app_private.admin_notifications;
drop table app.webhook_delivery_attempts;
drop table app.webhook_deliveries;
drop table app.webhook_endpoints;
drop function app_private.tg_webhook_endpoints__check_events();
drop function app_private.tg_webhook_endpoints__limit();
drop table app.events;
drop table app_private.event_types;
alter table app.api_clients drop constraint api_clients_organization_id_id_unique;
