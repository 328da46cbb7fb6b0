-- migrate:up

/** The baseline, 7 of 16. Webhooks and the outbox: events and their types, webhook endpoints, deliveries and attempts, the job outbox the worker drains.
 * Laid out by table: each table, then its keys and indexes, row security and policies, triggers
 * and their functions, and grants; then the area's views and commands. db/README.md, "The
 * baseline", says how it was made and proved equal to the migrations it replaced. */
set local check_function_bodies = false;
set local client_min_messages = warning;
set local search_path = '';

-- While this file runs, the owners of its functions and views may create in the schemas (`alter … owner to`
-- a role needs it when the migrating role is not a superuser); taken back at its end.
grant create on schema api, app, app_private, control, reporting, skills to svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- function app_private.tg__client_of_parent()

create function app_private.tg__client_of_parent() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
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

alter function app_private.tg__client_of_parent() owner to svc_owner;

comment on function app_private.tg__client_of_parent() is 'BEFORE INSERT OR UPDATE OF client_id on app.run_events and app.run_tool_calls (parent app.runs), app.report_results (app.report_runs), app.webhook_delivery_attempts (app.webhook_deliveries) and app.conversation_messages (app.conversations): sets the row''s client_id to its parent''s, whatever the writer said. The policies that show these rows "with their parent" can then judge the row alone (client_id is the request''s client), as Citus requires (it refuses a policy that reads another table), and since rows never change parent the copy stays true. It runs as svc_owner to read the parent past the writer''s policies, looked up by the new row''s own organization_id under svc_owner''s policy for the request''s organization.';

revoke all on function app_private.tg__client_of_parent() from public;
grant execute on function app_private.tg__client_of_parent() to svc_worker;
grant execute on function app_private.tg__client_of_parent() to svc_admin;

-- function app_private.begin_delivery_context(text, text)

create function app_private.begin_delivery_context(p_organization_id text, p_client_id text) returns boolean
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.begin_delivery_context(p_organization_id text, p_client_id text) owner to svc_owner;

revoke all on function app_private.begin_delivery_context(p_organization_id text, p_client_id text) from public;
grant execute on function app_private.begin_delivery_context(p_organization_id text, p_client_id text) to svc_worker;
grant execute on function app_private.begin_delivery_context(p_organization_id text, p_client_id text) to svc_admin;
grant execute on function app_private.begin_delivery_context(p_organization_id text, p_client_id text) to svc_gate;

-- function app_private.emit_event(text, text, text, text, integer, text)

create function app_private.emit_event(p_org text, p_type text, p_resource_type text, p_resource_id text, p_version integer, p_target_endpoint text default null::text) returns text
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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
  -- Delivered at commit, never for a rolled-back write; identical notifications of one
  -- transaction are folded into one. No payload: LISTEN needs no privilege, so any role of the
  -- database could read it (an organization id would tell who is active, and when). Not from an
  -- API request's transaction: the API wakes the fan-out after its commit (see above).
  if v_subscribed then
    if current_setting('svc.fanout_wake', true) in ('after_commit', 'due') then
      -- Read by the API before its COMMIT (in the same round trip): it wakes the fan-out only then.
      perform set_config('svc.fanout_wake', 'due', true);
    else
      perform pg_notify('svc_webhook_fanout', '');
    end if;
  end if;
  return v_id;
end
$$;

alter function app_private.emit_event(p_org text, p_type text, p_resource_type text, p_resource_id text, p_version integer, p_target_endpoint text) owner to svc_owner;

comment on function app_private.emit_event(p_org text, p_type text, p_resource_type text, p_resource_id text, p_version integer, p_target_endpoint text) is 'Writes one event into the outbox (app.events) in the writer''s transaction, so a rolled-back change emits nothing and a committed one is never lost; marks it fanout_pending when an enabled endpoint of the organization subscribes to it (or it targets one endpoint) and then wakes the fan-out: pg_notify on svc_webhook_fanout with no payload, delivered at commit and folded per transaction (LISTEN needs no privilege, so a payload would tell any role who is active), or, inside an API request (svc.fanout_wake), by setting it to due for the API to wake the fan-out after its commit. It is svc_owner''s definer because the triggers of svc_api''s writes call it and neither svc_api nor svc_runtime may write events; the organization is the changed row''s, and svc_owner''s policy refuses any other inside a request.';

revoke all on function app_private.emit_event(p_org text, p_type text, p_resource_type text, p_resource_id text, p_version integer, p_target_endpoint text) from public;
grant execute on function app_private.emit_event(p_org text, p_type text, p_resource_type text, p_resource_id text, p_version integer, p_target_endpoint text) to svc_worker;
grant execute on function app_private.emit_event(p_org text, p_type text, p_resource_type text, p_resource_id text, p_version integer, p_target_endpoint text) to svc_admin;

-- function app_private.event_resource_visible(text, text, text)

create function app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text) returns boolean
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  case p_resource_type
    when 'project' then return exists (select from api.projects(p_resource_id) v where v.id = p_resource_id);
    when 'task' then return exists (select from api.tasks(p_resource_id) v where v.id = p_resource_id);
    when 'time_entry' then
      if p_type = 'time_entry.deleted' then
        return app_private.may_read_time_entries();
      end if;
      return exists (select from api.time_entries(p_resource_id) v where v.id = p_resource_id and v.deleted_at is null);
    when 'approval' then return exists (select from api.approvals(p_resource_id) v where v.id = p_resource_id);
    when 'webhook_endpoint' then return exists (select from api.webhook_endpoints(p_resource_id) v where v.id = p_resource_id);
    when 'integration_connection' then return exists (select from api.integration_connections(p_resource_id) v where v.id = p_resource_id);
    when 'invoice' then return exists (select from api.invoices(p_resource_id) v where v.id = p_resource_id);
    when 'payment' then return exists (select from app.payments p where p.organization_id = v__organization_id and p.id = p_resource_id);
    when 'file' then return exists (select from api.files(p_resource_id) v where v.id = p_resource_id);
    when 'ticket' then return exists (select from api.tickets(p_resource_id) v where v.id = p_resource_id);
    when 'ticket_message' then
      return exists (select from app.ticket_messages m where m.organization_id = v__organization_id and m.id = p_resource_id);
    when 'report_run' then return exists (select from api.report_runs(p_resource_id) v where v.id = p_resource_id);
    when 'run' then return exists (select from api.runs(p_resource_id) v where v.id = p_resource_id);
    when 'conversation_message' then return exists (select from api.conversation_messages(p_resource_id) v where v.id = p_resource_id);
    else return false;
  end case;
end
$$;

alter function app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text) owner to svc_api;

comment on function app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text) is 'Whether the request context''s client may read an event''s resource now, read through the API''s own view functions (payments and ticket messages by their policies) under svc_api''s policies, so that a delivery never tells a client more than a GET would (spec: events are filtered through the same rules as reads); a time_entry.deleted event goes to whoever may read time entries, and an unknown resource type is never visible. The worker calls it through app_private.client_may_read, after setting that client''s signed delivery context and switching to svc_runtime; it runs as svc_api, the owner of the views, and sees only the organization the context names.';

revoke all on function app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text) from public;
grant execute on function app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text) to svc_runtime;
grant execute on function app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text) to svc_owner;
grant execute on function app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text) to svc_worker;
grant execute on function app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text) to svc_admin;
grant execute on function app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text) to svc_gate;

-- function app_private.job_outbox_drain()

create function app_private.job_outbox_drain() returns integer
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.job_outbox_drain() owner to svc_owner;

revoke all on function app_private.job_outbox_drain() from public;
grant execute on function app_private.job_outbox_drain() to svc_worker;
grant execute on function app_private.job_outbox_drain() to svc_admin;

-- function app_private.job_queue_privileges()

create function app_private.job_queue_privileges() returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  t regclass;
begin
  if to_regnamespace('graphile_worker') is null then
    return;
  end if;
  grant usage on schema graphile_worker to svc_owner, svc_worker;
  grant select, insert, update on graphile_worker._private_jobs, graphile_worker._private_tasks, graphile_worker._private_job_queues to svc_owner;
  grant usage on all sequences in schema graphile_worker to svc_owner, svc_worker;
  grant execute on function graphile_worker.add_job(text, json, text, timestamptz, integer, text, integer, text[], text),
    graphile_worker.add_jobs(graphile_worker.job_spec[], boolean) to svc_owner;
  grant select, insert, update, delete on all tables in schema graphile_worker to svc_worker;
  grant execute on all functions in schema graphile_worker to svc_worker;
  for t in select c.oid::regclass from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where n.nspname = 'graphile_worker' and c.relkind in ('r', 'p') and c.relrowsecurity loop
    if t::text in ('graphile_worker._private_jobs', 'graphile_worker._private_tasks', 'graphile_worker._private_job_queues')
       and not exists (select from pg_policy where polrelid = t and polname = 'Commands queue jobs') then
      execute format('create policy "Commands queue jobs" on %s for all to svc_owner using (%s) with check (%2$s)', t,
        case t::text when 'graphile_worker._private_jobs'
          then $e$app_private.operator_session() or (payload ->> 'organization_id') = app.current_organization_id()$e$
          else 'true' end);
    end if;
    if t::text in ('graphile_worker._private_jobs', 'graphile_worker._private_tasks', 'graphile_worker._private_job_queues') then
      execute format('comment on policy "Commands queue jobs" on %s is %L', t, case t::text when 'graphile_worker._private_jobs'
        then 'svc_owner may read and write only the jobs whose payload names the signed request''s organization (app_private.queue_job adds organization_id to every payload), or any job in an operator session (the worker, svc-admin, migrations): on one server a command queues and sees only its own organization''s jobs (on Citus jobs go through app_private.job_outbox).'
        else 'svc_owner may read, add and update graphile-worker''s task and queue names, which add_job upserts for every job it queues: they carry no tenant data, so every row is allowed; which jobs a command reaches is fenced by the policy on graphile_worker._private_jobs.' end);
    end if;
    if not exists (select from pg_policy where polrelid = t and polname = 'The worker runs every job') then
      execute format('create policy "The worker runs every job" on %s for all to svc_worker using (true) with check (true)', t);
    end if;
    execute format('comment on policy "The worker runs every job" on %s is %L', t,
      'svc_worker reads and writes every row of graphile-worker''s tables, of every organization, because it runs the queue for all of them (an operator). graphile-worker keeps row security on its tables with no policy of its own, so without this one the worker''s login would see no job.');
  end loop;
end
$_$;

alter function app_private.job_queue_privileges() owner to svc_owner;

comment on function app_private.job_queue_privileges() is 'What svc_owner needs of graphile-worker''s schema to queue jobs, and svc_worker to run them; scripts/db.ts calls it after graphile-worker''s migrations.';

revoke all on function app_private.job_queue_privileges() from public;

-- function app_private.purge_webhook_history(interval)

create function app_private.purge_webhook_history(p_older_than interval default '30 days'::interval) returns bigint
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_count bigint;
begin
  delete from app.events e where e.created_at < now() - p_older_than;
  get diagnostics v_count = row_count;
  return v_count;
end
$$;

alter function app_private.purge_webhook_history(p_older_than interval) owner to svc_owner;

revoke all on function app_private.purge_webhook_history(p_older_than interval) from public;
grant execute on function app_private.purge_webhook_history(p_older_than interval) to svc_worker;
grant execute on function app_private.purge_webhook_history(p_older_than interval) to svc_admin;

-- function app_private.queue_job(text, text, json, text, integer, timestamp with time zone)

create function app_private.queue_job(p_organization_id text, p_task text, p_payload json, p_job_key text, p_max_attempts integer, p_run_at timestamp with time zone default null::timestamp with time zone) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.queue_job(p_organization_id text, p_task text, p_payload json, p_job_key text, p_max_attempts integer, p_run_at timestamp with time zone) owner to svc_owner;

revoke all on function app_private.queue_job(p_organization_id text, p_task text, p_payload json, p_job_key text, p_max_attempts integer, p_run_at timestamp with time zone) from public;
grant execute on function app_private.queue_job(p_organization_id text, p_task text, p_payload json, p_job_key text, p_max_attempts integer, p_run_at timestamp with time zone) to svc_worker;
grant execute on function app_private.queue_job(p_organization_id text, p_task text, p_payload json, p_job_key text, p_max_attempts integer, p_run_at timestamp with time zone) to svc_admin;

-- function app_private.webhook_cancel(text, text, text)

create function app_private.webhook_cancel(p_organization_id text, p_delivery text, p_reason text) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  update app.webhook_deliveries x
     set status = 'cancelled', status_reason = p_reason, completed_at = now(), lease_until = null, next_attempt_at = null
   where x.organization_id = p_organization_id and x.id = p_delivery and x.status = 'pending';
end
$$;

alter function app_private.webhook_cancel(p_organization_id text, p_delivery text, p_reason text) owner to svc_owner;

revoke all on function app_private.webhook_cancel(p_organization_id text, p_delivery text, p_reason text) from public;
grant execute on function app_private.webhook_cancel(p_organization_id text, p_delivery text, p_reason text) to svc_worker;
grant execute on function app_private.webhook_cancel(p_organization_id text, p_delivery text, p_reason text) to svc_admin;

-- function app_private.webhook_claim(text, text, integer)

create function app_private.webhook_claim(p_organization_id text, p_delivery text, p_lease_seconds integer) returns table(attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text, organization_id text, type text, resource_type text, resource_id text, resource_version integer, created_at timestamp with time zone)
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.webhook_claim(p_organization_id text, p_delivery text, p_lease_seconds integer) owner to svc_owner;

revoke all on function app_private.webhook_claim(p_organization_id text, p_delivery text, p_lease_seconds integer) from public;
grant execute on function app_private.webhook_claim(p_organization_id text, p_delivery text, p_lease_seconds integer) to svc_worker;
grant execute on function app_private.webhook_claim(p_organization_id text, p_delivery text, p_lease_seconds integer) to svc_admin;

-- function app_private.webhook_endpoint_not_found(text)

create function app_private.webhook_endpoint_not_found(p_id text) returns void
    language sql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$ select app_private.raise('SVN04', 'WEBHOOK_ENDPOINT_NOT_FOUND', format('no webhook endpoint %s of your client', p_id)) $$;

alter function app_private.webhook_endpoint_not_found(p_id text) owner to svc_owner;

revoke all on function app_private.webhook_endpoint_not_found(p_id text) from public;
grant execute on function app_private.webhook_endpoint_not_found(p_id text) to svc_api;
grant execute on function app_private.webhook_endpoint_not_found(p_id text) to svc_worker;
grant execute on function app_private.webhook_endpoint_not_found(p_id text) to svc_admin;

-- function app_private.webhook_enqueue(text, text, timestamp with time zone)

create function app_private.webhook_enqueue(p_organization_id text, p_delivery text, p_run_at timestamp with time zone default null::timestamp with time zone) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  perform app_private.queue_job(p_organization_id, 'webhook_deliver', json_build_object('delivery_id', p_delivery),
                                'deliver:' || p_delivery, 25, p_run_at);
end
$$;

alter function app_private.webhook_enqueue(p_organization_id text, p_delivery text, p_run_at timestamp with time zone) owner to svc_owner;

revoke all on function app_private.webhook_enqueue(p_organization_id text, p_delivery text, p_run_at timestamp with time zone) from public;
grant execute on function app_private.webhook_enqueue(p_organization_id text, p_delivery text, p_run_at timestamp with time zone) to svc_worker;
grant execute on function app_private.webhook_enqueue(p_organization_id text, p_delivery text, p_run_at timestamp with time zone) to svc_admin;

-- function app_private.webhook_fanout(text, text, integer)

create function app_private.webhook_fanout(p_organization_id text, p_event text, p_lease_seconds integer) returns table(delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text, organization_id text, type text, resource_type text, resource_id text, resource_version integer, created_at timestamp with time zone)
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.webhook_fanout(p_organization_id text, p_event text, p_lease_seconds integer) owner to svc_owner;

revoke all on function app_private.webhook_fanout(p_organization_id text, p_event text, p_lease_seconds integer) from public;
grant execute on function app_private.webhook_fanout(p_organization_id text, p_event text, p_lease_seconds integer) to svc_worker;
grant execute on function app_private.webhook_fanout(p_organization_id text, p_event text, p_lease_seconds integer) to svc_admin;

-- function app_private.webhook_fanout_any(integer, integer)

create function app_private.webhook_fanout_any(p_limit integer, p_lease_seconds integer) returns table(delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text, organization_id text, type text, resource_type text, resource_id text, resource_version integer, created_at timestamp with time zone)
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.webhook_fanout_any(p_limit integer, p_lease_seconds integer) owner to svc_owner;

revoke all on function app_private.webhook_fanout_any(p_limit integer, p_lease_seconds integer) from public;
grant execute on function app_private.webhook_fanout_any(p_limit integer, p_lease_seconds integer) to svc_worker;
grant execute on function app_private.webhook_fanout_any(p_limit integer, p_lease_seconds integer) to svc_admin;

-- function app_private.webhook_fanout_batch(text, integer, integer)

create function app_private.webhook_fanout_batch(p_organization_id text, p_limit integer, p_lease_seconds integer) returns table(delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text, organization_id text, type text, resource_type text, resource_id text, resource_version integer, created_at timestamp with time zone)
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.webhook_fanout_batch(p_organization_id text, p_limit integer, p_lease_seconds integer) owner to svc_owner;

revoke all on function app_private.webhook_fanout_batch(p_organization_id text, p_limit integer, p_lease_seconds integer) from public;
grant execute on function app_private.webhook_fanout_batch(p_organization_id text, p_limit integer, p_lease_seconds integer) to svc_worker;
grant execute on function app_private.webhook_fanout_batch(p_organization_id text, p_limit integer, p_lease_seconds integer) to svc_admin;

-- function app_private.webhook_fanout_organizations(integer)

create function app_private.webhook_fanout_organizations(p_limit integer) returns setof text
    language plpgsql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  return query select x.organization_id from app.events x where x.fanout_pending
                group by x.organization_id order by min(x.created_at) limit greatest(1, p_limit);
end
$$;

alter function app_private.webhook_fanout_organizations(p_limit integer) owner to svc_owner;

revoke all on function app_private.webhook_fanout_organizations(p_limit integer) from public;
grant execute on function app_private.webhook_fanout_organizations(p_limit integer) to svc_worker;
grant execute on function app_private.webhook_fanout_organizations(p_limit integer) to svc_admin;

-- function app_private.webhook_record_attempt(text, text, integer, timestamp with time zone, integer, integer, text, boolean, integer, double precision, integer, integer)

create function app_private.webhook_record_attempt(p_organization_id text, p_delivery text, p_attempt integer, p_started_at timestamp with time zone, p_duration_ms integer, p_response_status integer, p_error text, p_retryable boolean, p_retry_after_seconds integer, p_scale double precision, p_disable_after integer, p_disable_after_seconds integer) returns text
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
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
  -- The clock, not now(): a transaction that began before the one that started the streak waited
  -- for the endpoint's row, and its now() is earlier than that failing_since.
  if w.status = 'enabled' and w.consecutive_failures >= p_disable_after
     and w.failing_since <= clock_timestamp() - make_interval(secs => p_disable_after_seconds) then
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

alter function app_private.webhook_record_attempt(p_organization_id text, p_delivery text, p_attempt integer, p_started_at timestamp with time zone, p_duration_ms integer, p_response_status integer, p_error text, p_retryable boolean, p_retry_after_seconds integer, p_scale double precision, p_disable_after integer, p_disable_after_seconds integer) owner to svc_owner;

revoke all on function app_private.webhook_record_attempt(p_organization_id text, p_delivery text, p_attempt integer, p_started_at timestamp with time zone, p_duration_ms integer, p_response_status integer, p_error text, p_retryable boolean, p_retry_after_seconds integer, p_scale double precision, p_disable_after integer, p_disable_after_seconds integer) from public;
grant execute on function app_private.webhook_record_attempt(p_organization_id text, p_delivery text, p_attempt integer, p_started_at timestamp with time zone, p_duration_ms integer, p_response_status integer, p_error text, p_retryable boolean, p_retry_after_seconds integer, p_scale double precision, p_disable_after integer, p_disable_after_seconds integer) to svc_worker;
grant execute on function app_private.webhook_record_attempt(p_organization_id text, p_delivery text, p_attempt integer, p_started_at timestamp with time zone, p_duration_ms integer, p_response_status integer, p_error text, p_retryable boolean, p_retry_after_seconds integer, p_scale double precision, p_disable_after integer, p_disable_after_seconds integer) to svc_admin;

-- function app_private.webhook_recover(interval)

create function app_private.webhook_recover(p_stale interval default '00:00:30'::interval) returns integer
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.webhook_recover(p_stale interval) owner to svc_owner;

revoke all on function app_private.webhook_recover(p_stale interval) from public;
grant execute on function app_private.webhook_recover(p_stale interval) to svc_worker;
grant execute on function app_private.webhook_recover(p_stale interval) to svc_admin;

-- function app_private.webhook_retry_delay(integer, double precision)

create function app_private.webhook_retry_delay(p_attempt integer, p_scale double precision default 1) returns interval
    language sql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
  select make_interval(secs => coalesce((array[5, 300, 1800, 7200, 18000, 36000, 50400, 72000]::integer[])[p_attempt], 86400)
                               * (0.8 + random() * 0.4) * p_scale)
$$;

alter function app_private.webhook_retry_delay(p_attempt integer, p_scale double precision) owner to svc_owner;

revoke all on function app_private.webhook_retry_delay(p_attempt integer, p_scale double precision) from public;
grant execute on function app_private.webhook_retry_delay(p_attempt integer, p_scale double precision) to svc_worker;
grant execute on function app_private.webhook_retry_delay(p_attempt integer, p_scale double precision) to svc_admin;

-- table app.webhook_endpoints

create table app.webhook_endpoints (
    organization_id text not null,
    id text default app_private.new_id('whe'::text) not null,
    client_id text not null,
    url text not null,
    events text[] not null,
    description text,
    status text default 'enabled'::text not null,
    disabled_reason text,
    secret_sealed text not null,
    previous_secret_sealed text,
    previous_secret_expires_at timestamp with time zone,
    consecutive_failures integer default 0 not null,
    failing_since timestamp with time zone,
    created_at timestamp with time zone default now() not null,
    updated_at timestamp with time zone default now() not null,
    version integer default 1 not null,
    constraint webhook_endpoints_description_length check ((length(description) <= 1000)),
    constraint webhook_endpoints_disabled_has_reason check (((status = 'disabled'::text) = (disabled_reason is not null))),
    constraint webhook_endpoints_disabled_reason_valid check ((disabled_reason = any (array['client'::text, 'delivery_failures'::text]))),
    constraint webhook_endpoints_events_bounded check (((cardinality(events) >= 1) and (cardinality(events) <= 100))),
    constraint webhook_endpoints_id_format check ((id ~ '^whe_[0-9a-f]{28}$'::text)),
    constraint webhook_endpoints_status_valid check ((status = any (array['enabled'::text, 'disabled'::text]))),
    constraint webhook_endpoints_url_https check (((url ~ '^https://[^/?#@\s]+'::text) and (length(url) <= 2048)))
);

alter table only app.webhook_endpoints force row level security;

alter table only app.webhook_endpoints
    add constraint webhook_endpoints_client_id_key unique (organization_id, client_id, id);

alter table only app.webhook_endpoints
    add constraint webhook_endpoints_pkey primary key (organization_id, id);

create index webhook_endpoints_client on app.webhook_endpoints using btree (client_id, created_at, id);

create index webhook_endpoints_id on app.webhook_endpoints using btree (id);

create index webhook_endpoints_org_enabled on app.webhook_endpoints using btree (organization_id) where (status = 'enabled'::text);

alter table only app.webhook_endpoints
    add constraint webhook_endpoints_client_fkey foreign key (organization_id, client_id) references app.api_clients(organization_id, id) on delete cascade;

alter table only app.webhook_endpoints
    add constraint webhook_endpoints_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table app.webhook_endpoints enable row level security;

create policy "Clients change their own endpoints" on app.webhook_endpoints for update to svc_api using (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id())))) with check (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));

comment on policy "Clients change their own endpoints" on app.webhook_endpoints is 'svc_api updates only endpoints of the request''s organization whose client is the request''s client, and cannot hand one to another client or organization (the same check on the new row): a client manages only its own endpoints (spec). Its column grants leave out id, client and organization, and there is no delete policy: endpoints are disabled, never removed, since their deliveries are history.';

create policy "Clients create their own endpoints" on app.webhook_endpoints for insert to svc_api with check ((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id())));

comment on policy "Clients create their own endpoints" on app.webhook_endpoints is 'svc_api inserts an endpoint only in the request''s organization and for the request''s client: a client creates endpoints for itself alone (spec), whatever client_id an insert names. The table''s triggers check the event names and the limit of 20 endpoints per client.';

create policy "Clients see their own endpoints" on app.webhook_endpoints for select to svc_api using ((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id())));

comment on policy "Clients see their own endpoints" on app.webhook_endpoints is 'svc_api reads only the endpoints of the request''s organization that belong to the request''s client (spec: a client sees and manages only its own endpoints); another client''s endpoint is WEBHOOK_ENDPOINT_NOT_FOUND.';

create policy "Commands act in the request's organization" on app.webhook_endpoints to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.webhook_endpoints is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only webhook endpoints of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So svc_owner''s reads of endpoints inside a request (replay, test, the limit''s count, emit_event''s subscription check) stay in the caller''s organization, while the worker''s fan-out and automatic disabling span organizations.';

create function app_private.tg_webhook_endpoints__limit() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  -- Serialize creations per client so two concurrent ones cannot both pass the count.
  perform pg_advisory_xact_lock(hashtextextended('webhook_endpoints:' || new.client_id, 0));
  if (select count(*) from app.webhook_endpoints w where w.organization_id = new.organization_id and w.client_id = new.client_id) >= 20 then
    perform app_private.raise('SVC09', 'CONFLICT', 'a client can have at most 20 webhook endpoints; disable and reuse one');
  end if;
  return new;
end
$$;

alter function app_private.tg_webhook_endpoints__limit() owner to svc_owner;

comment on function app_private.tg_webhook_endpoints__limit() is 'Before insert on app.webhook_endpoints (_300_limit): a client has at most 20 endpoints, disabled ones included, so the fan-out cost of an event stays bounded; a 21st is refused with SVC09 CONFLICT. Creations are serialized per client by a transaction-scoped advisory lock, so two concurrent ones cannot both pass the count.';

create function app_private.tg_webhook_endpoints__check_events() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.tg_webhook_endpoints__check_events() owner to svc_owner;

comment on function app_private.tg_webhook_endpoints__check_events() is 'Before insert or an update of events on app.webhook_endpoints (_200_check_events), for every writer: each subscribed name must be a subscribable event of the catalogue (app_private.event_types), else SVV22 WEBHOOK_EVENT_NOT_SUPPORTED with a pointer to each bad entry (the spec rejects unknown event names); the list is then stored sorted without duplicates.';

create trigger _100_touch_version before update on app.webhook_endpoints for each row execute function app_private.tg__touch_version();

create trigger _200_check_events before insert or update of events on app.webhook_endpoints for each row execute function app_private.tg_webhook_endpoints__check_events();

create trigger _300_limit before insert on app.webhook_endpoints for each row execute function app_private.tg_webhook_endpoints__limit();

grant select,insert on table app.webhook_endpoints to svc_api;
grant select,insert,delete,update on table app.webhook_endpoints to svc_owner;
grant select,insert,delete,update on table app.webhook_endpoints to svc_worker;
grant select,insert,delete,update on table app.webhook_endpoints to svc_admin;

grant update(url) on table app.webhook_endpoints to svc_api;

grant update(events) on table app.webhook_endpoints to svc_api;

grant update(description) on table app.webhook_endpoints to svc_api;

grant update(status) on table app.webhook_endpoints to svc_api;

grant update(disabled_reason) on table app.webhook_endpoints to svc_api;

grant update(secret_sealed) on table app.webhook_endpoints to svc_api;

grant update(previous_secret_sealed) on table app.webhook_endpoints to svc_api;

grant update(previous_secret_expires_at) on table app.webhook_endpoints to svc_api;

grant update(consecutive_failures) on table app.webhook_endpoints to svc_api;

grant update(failing_since) on table app.webhook_endpoints to svc_api;

revoke all on function app_private.tg_webhook_endpoints__check_events() from public;
grant execute on function app_private.tg_webhook_endpoints__check_events() to svc_worker;
grant execute on function app_private.tg_webhook_endpoints__check_events() to svc_admin;

revoke all on function app_private.tg_webhook_endpoints__limit() from public;
grant execute on function app_private.tg_webhook_endpoints__limit() to svc_worker;
grant execute on function app_private.tg_webhook_endpoints__limit() to svc_admin;

-- function app_private.webhook_endpoint_lock(text, integer[])

create function app_private.webhook_endpoint_lock(p_id text, p_if_match integer[] default null::integer[]) returns app.webhook_endpoints
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  w app.webhook_endpoints;
begin
  select * into w from app.webhook_endpoints where organization_id = v__organization_id and id = p_id for update;
  if not found then
    perform app_private.webhook_endpoint_not_found(p_id);
  end if;
  if p_if_match is not null then
    perform app_private.check_if_match(w.version, p_if_match);
  end if;
  return w;
end
$$;

alter function app_private.webhook_endpoint_lock(p_id text, p_if_match integer[]) owner to svc_owner;

revoke all on function app_private.webhook_endpoint_lock(p_id text, p_if_match integer[]) from public;
grant execute on function app_private.webhook_endpoint_lock(p_id text, p_if_match integer[]) to svc_api;
grant execute on function app_private.webhook_endpoint_lock(p_id text, p_if_match integer[]) to svc_worker;
grant execute on function app_private.webhook_endpoint_lock(p_id text, p_if_match integer[]) to svc_admin;

-- table app_private.admin_notifications

create table app_private.admin_notifications (
    id bigint not null,
    organization_id text not null,
    kind text not null,
    subject_id text not null,
    detail text not null,
    created_at timestamp with time zone default now() not null
);

alter table only app_private.admin_notifications force row level security;

alter table app_private.admin_notifications alter column id add generated always as identity (
    sequence name app_private.admin_notifications_id_seq
    start with 1
    increment by 1
    no minvalue
    no maxvalue
    cache 1
);

alter table only app_private.admin_notifications
    add constraint admin_notifications_pkey primary key (organization_id, id);

alter table only app_private.admin_notifications
    add constraint admin_notifications_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table app_private.admin_notifications enable row level security;

create policy "Commands act in the request's organization" on app_private.admin_notifications to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app_private.admin_notifications is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only administrators'' notifications of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. The worker writes one when it disables an endpoint after repeated failed deliveries (webhook_record_attempt) and svc-admin lists them (control.notifications_list), both operator sessions; svc_owner inside a request sees only its own organization''s.';

grant select,insert,delete,update on table app_private.admin_notifications to svc_owner;
grant select,insert,delete,update on table app_private.admin_notifications to svc_worker;
grant select,insert,delete,update on table app_private.admin_notifications to svc_admin;

grant usage on sequence app_private.admin_notifications_id_seq to svc_owner;
grant usage on sequence app_private.admin_notifications_id_seq to svc_worker;
grant usage on sequence app_private.admin_notifications_id_seq to svc_admin;

-- table app_private.event_types

create table app_private.event_types (
    name text not null,
    resource_type text not null,
    emitted_by text[] not null,
    description text not null,
    subscribable boolean default true not null,
    constraint event_types_name_format check ((name ~ '^[a-z_]+(\.[a-z_]+)+$'::text))
);

alter table only app_private.event_types
    add constraint event_types_pkey primary key (name);

grant select,insert,delete,update on table app_private.event_types to svc_owner;
grant select,insert,delete,update on table app_private.event_types to svc_worker;
grant select,insert,delete,update on table app_private.event_types to svc_admin;

-- table app.events

create table app.events (
    organization_id text not null,
    id text default app_private.new_id('evt'::text) not null,
    type text not null,
    resource_type text not null,
    resource_id text not null,
    resource_version integer not null,
    created_at timestamp with time zone default now() not null,
    fanout_pending boolean default false not null,
    target_endpoint_id text,
    client_ids text[] default '{}'::text[] not null
);

alter table only app.events force row level security;

alter table only app.events
    add constraint events_pkey primary key (organization_id, id);

create index events_created on app.events using btree (created_at);

create index events_fanout_pending on app.events using btree (created_at) where fanout_pending;

create index events_id on app.events using btree (id);

alter table only app.events
    add constraint events_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table only app.events
    add constraint events_type_fkey foreign key (type) references app_private.event_types(name);

alter table app.events enable row level security;

create policy "The service status sees events waiting for their fan-out" on app.events for select to svc_status using (fanout_pending);

comment on policy "The service status sees events waiting for their fan-out" on app.events is 'svc_status, the owner of api.service_outbox_status, reads of every organization only the events still waiting for their fan-out (fanout_pending), and of them only fanout_pending and created_at (its column grants): the age of the outbox''s backlog for /metrics, with no request context.';

create policy "Commands act in the request's organization" on app.events to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.events is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only events of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So emit_event and the test event, which write the outbox as svc_owner inside a request, stay in the caller''s organization, while the worker''s fan-out, claims, recovery and purge span organizations.';

create policy "Events are visible through the client's deliveries" on app.events for select to svc_api using ((organization_id = (select app.current_organization_id())) and ((select app.current_client_id()) = any (client_ids)));

comment on policy "Events are visible through the client's deliveries" on app.events is 'svc_api reads an event of the request''s organization only when the request''s client is in its client_ids, the clients it was delivered to (set by the fan-out''s closing update and by a test event), so a delivery shows its event while a client cannot read the organization''s outbox. Events are written only by svc_owner''s triggers and commands and by the worker.';

grant select on table app.events to svc_api;
grant select,insert,delete,update on table app.events to svc_owner;
grant select,insert,delete,update on table app.events to svc_worker;
grant select,insert,delete,update on table app.events to svc_admin;

grant select(created_at) on table app.events to svc_status;

grant select(fanout_pending) on table app.events to svc_status;

-- function app_private.webhook_fanout_event(app.events, integer)

create function app_private.webhook_fanout_event(e app.events, p_lease_seconds integer) returns table(delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text, organization_id text, type text, resource_type text, resource_id text, resource_version integer, created_at timestamp with time zone)
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.webhook_fanout_event(e app.events, p_lease_seconds integer) owner to svc_owner;

revoke all on function app_private.webhook_fanout_event(e app.events, p_lease_seconds integer) from public;
grant execute on function app_private.webhook_fanout_event(e app.events, p_lease_seconds integer) to svc_worker;
grant execute on function app_private.webhook_fanout_event(e app.events, p_lease_seconds integer) to svc_admin;

-- table app.webhook_deliveries

create table app.webhook_deliveries (
    organization_id text not null,
    id text default app_private.new_id('whd'::text) not null,
    client_id text not null,
    endpoint_id text not null,
    event_id text not null,
    replay_of text,
    status text default 'pending'::text not null,
    status_reason text,
    attempt_count integer default 0 not null,
    next_attempt_at timestamp with time zone default now(),
    lease_until timestamp with time zone,
    retry_until timestamp with time zone default (now() + '72:00:00'::interval) not null,
    created_at timestamp with time zone default now() not null,
    completed_at timestamp with time zone,
    constraint webhook_deliveries_pending_consistent check (((status = 'pending'::text) = (completed_at is null))),
    constraint webhook_deliveries_status_valid check ((status = any (array['pending'::text, 'succeeded'::text, 'failed'::text, 'cancelled'::text])))
);

alter table only app.webhook_deliveries force row level security;

alter table only app.webhook_deliveries
    add constraint webhook_deliveries_pkey primary key (organization_id, id);

create index webhook_deliveries_endpoint on app.webhook_deliveries using btree (endpoint_id, created_at, id);

create index webhook_deliveries_id on app.webhook_deliveries using btree (id);

create index webhook_deliveries_lease on app.webhook_deliveries using btree (lease_until) where ((status = 'pending'::text) and (lease_until is not null));

create unique index webhook_deliveries_once on app.webhook_deliveries using btree (organization_id, event_id, endpoint_id) where (replay_of is null);

create index webhook_deliveries_pending_due on app.webhook_deliveries using btree (next_attempt_at) where (status = 'pending'::text);

create index webhook_deliveries_replay_of on app.webhook_deliveries using btree (organization_id, replay_of) where (replay_of is not null);

alter table only app.webhook_deliveries
    add constraint webhook_deliveries_endpoint_fkey foreign key (organization_id, client_id, endpoint_id) references app.webhook_endpoints(organization_id, client_id, id) on delete cascade;

alter table only app.webhook_deliveries
    add constraint webhook_deliveries_event_fkey foreign key (organization_id, event_id) references app.events(organization_id, id) on delete cascade;

alter table only app.webhook_deliveries
    add constraint webhook_deliveries_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table app.webhook_deliveries enable row level security;

create policy "The service status sees deliveries waiting" on app.webhook_deliveries for select to svc_status using (status = 'pending'::text);

comment on policy "The service status sees deliveries waiting" on app.webhook_deliveries is 'svc_status, the owner of api.service_outbox_status, reads of every organization only the deliveries whose status is pending, and of them only status and next_attempt_at (its column grants): what the /metrics gauges count, with no request context.';

create policy "Clients see deliveries to their own endpoints" on app.webhook_deliveries for select to svc_api using ((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id())));

comment on policy "Clients see deliveries to their own endpoints" on app.webhook_deliveries is 'svc_api reads deliveries of the request''s organization whose client is the request''s client: each delivery carries its endpoint''s client (set by the fan-out, a replay and a test), so a client sees only deliveries to its own endpoints. svc_api never writes deliveries: svc_owner''s commands and the worker do.';

create policy "Commands act in the request's organization" on app.webhook_deliveries to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.webhook_deliveries is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only webhook deliveries of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So a replay or a test delivery, written as svc_owner inside a request, stays in the caller''s organization, while the worker''s fan-out, claims, retries, recovery and purge span organizations.';

create function app_private.tg_webhook_deliveries__replay_of() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if tg_op = 'DELETE' then
    update app.webhook_deliveries d set replay_of = null
     where d.organization_id = old.organization_id and d.replay_of = old.id;
    return null;
  end if;
  if new.replay_of is not null and not exists (
       select from app.webhook_deliveries d where d.organization_id = new.organization_id and d.id = new.replay_of) then
    perform app_private.raise('SVN04', 'WEBHOOK_DELIVERY_NOT_FOUND', format('no delivery %s to replay', new.replay_of));
  end if;
  return new;
end
$$;

alter function app_private.tg_webhook_deliveries__replay_of() owner to svc_owner;

comment on function app_private.tg_webhook_deliveries__replay_of() is 'On app.webhook_deliveries, in place of a self-referencing foreign key Citus cannot keep: before an insert or an update of replay_of that names one (_010_replay_of), the replayed delivery must exist in the same organization (SVN04 WEBHOOK_DELIVERY_NOT_FOUND); after a delete (_990_replay_of), the purged delivery''s replays forget it (replay_of set to null).';

create trigger _010_replay_of before insert or update of replay_of on app.webhook_deliveries for each row when ((new.replay_of is not null)) execute function app_private.tg_webhook_deliveries__replay_of();

create trigger _990_replay_of after delete on app.webhook_deliveries for each row execute function app_private.tg_webhook_deliveries__replay_of();

grant select on table app.webhook_deliveries to svc_api;
grant select,insert,delete,update on table app.webhook_deliveries to svc_owner;
grant select,insert,delete,update on table app.webhook_deliveries to svc_worker;
grant select,insert,delete,update on table app.webhook_deliveries to svc_admin;

grant select(status) on table app.webhook_deliveries to svc_status;

grant select(next_attempt_at) on table app.webhook_deliveries to svc_status;

revoke all on function app_private.tg_webhook_deliveries__replay_of() from public;
grant execute on function app_private.tg_webhook_deliveries__replay_of() to svc_worker;
grant execute on function app_private.tg_webhook_deliveries__replay_of() to svc_admin;

-- table app.webhook_delivery_attempts

create table app.webhook_delivery_attempts (
    organization_id text not null,
    delivery_id text not null,
    attempt integer not null,
    started_at timestamp with time zone not null,
    duration_ms integer not null,
    response_status integer,
    error text,
    client_id text not null
);

alter table only app.webhook_delivery_attempts force row level security;

alter table only app.webhook_delivery_attempts
    add constraint webhook_delivery_attempts_pkey primary key (organization_id, delivery_id, attempt);

alter table only app.webhook_delivery_attempts
    add constraint webhook_delivery_attempts_delivery_fkey foreign key (organization_id, delivery_id) references app.webhook_deliveries(organization_id, id) on delete cascade;

alter table app.webhook_delivery_attempts enable row level security;

create policy "Clients see attempts of their own deliveries" on app.webhook_delivery_attempts for select to svc_api using ((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id())));

comment on policy "Clients see attempts of their own deliveries" on app.webhook_delivery_attempts is 'svc_api reads delivery attempts of the request''s organization made for the request''s client: each attempt carries its delivery''s client, copied by the _010_client_of_parent trigger, so the policy judges the row alone (Citus refuses a policy that reads another table). Only the worker writes attempts.';

create policy "Commands act in the request's organization" on app.webhook_delivery_attempts to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.webhook_delivery_attempts is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only webhook delivery attempts of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. The worker records the attempts of every organization''s deliveries; svc_owner inside a request sees only its own organization''s.';

create trigger _010_client_of_parent before insert or update of client_id on app.webhook_delivery_attempts for each row execute function app_private.tg__client_of_parent();

grant select on table app.webhook_delivery_attempts to svc_api;
grant select,insert,delete,update on table app.webhook_delivery_attempts to svc_owner;
grant select,insert,delete,update on table app.webhook_delivery_attempts to svc_worker;
grant select,insert,delete,update on table app.webhook_delivery_attempts to svc_admin;

-- table app_private.job_outbox

create table app_private.job_outbox (
    organization_id text not null,
    id text default app_private.new_id('job'::text) not null,
    task text not null,
    payload json not null,
    job_key text,
    max_attempts integer not null,
    run_at timestamp with time zone,
    created_at timestamp with time zone default now() not null
);

alter table only app_private.job_outbox force row level security;

comment on table app_private.job_outbox is 'On Citus: jobs queued on a worker, moved into graphile-worker''s queue on the coordinator by app_private.job_outbox_drain. Empty on one server.';

alter table only app_private.job_outbox
    add constraint job_outbox_pkey primary key (organization_id, id);

alter table only app_private.job_outbox
    add constraint job_outbox_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table app_private.job_outbox enable row level security;

create policy "Commands act in the request's organization" on app_private.job_outbox to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app_private.job_outbox is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only queued jobs of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. On Citus app_private.queue_job writes a job into its organization''s outbox in the transaction of the write that caused it, and the worker''s app_private.job_outbox_drain moves every organization''s into graphile-worker''s queue; empty on one server.';

grant select,insert,delete,update on table app_private.job_outbox to svc_owner;
grant select,insert,delete,update on table app_private.job_outbox to svc_worker;
grant select,insert,delete,update on table app_private.job_outbox to svc_admin;

-- view api.webhook_deliveries

create view api.webhook_deliveries with (security_invoker='false') as
 select d.organization_id,
    d.id,
    d.endpoint_id,
    d.event_id,
    d.status,
    d.created_at,
    e.type as event_type,
    e.created_at as event_created_at,
    jsonb_build_object('object', 'webhook_delivery', 'id', d.id, 'endpoint_id', d.endpoint_id, 'event', jsonb_build_object('id', e.id, 'type', e.type, 'created_at', app_private.iso_timestamp(e.created_at), 'data', jsonb_build_object('object', jsonb_build_object('type', e.resource_type, 'id', e.resource_id, 'version', e.resource_version))), 'status', d.status, 'status_reason', d.status_reason, 'attempt_count', d.attempt_count, 'next_attempt_at',
        case
            when (d.status = 'pending'::text) then app_private.iso_timestamp(d.next_attempt_at)
            else null::text
        end, 'replay_of', d.replay_of, 'last_attempt', ( select jsonb_build_object('attempt', a.attempt, 'started_at', app_private.iso_timestamp(a.started_at), 'duration_ms', a.duration_ms, 'response_status', a.response_status, 'error', a.error) as jsonb_build_object
           from app.webhook_delivery_attempts a
          where (a.delivery_id = d.id)
          order by a.attempt desc
         limit 1), 'created_at', app_private.iso_timestamp(d.created_at), 'completed_at', app_private.iso_timestamp(d.completed_at)) as doc
   from (app.webhook_deliveries d
     join app.events e on ((e.id = d.event_id)));

alter view api.webhook_deliveries owner to svc_api;

grant select on table api.webhook_deliveries to svc_runtime;
grant select on table api.webhook_deliveries to svc_owner;

-- view api.webhook_endpoints

create view api.webhook_endpoints with (security_invoker='false') as
 select w.organization_id,
    w.id,
    w.client_id,
    w.status,
    w.created_at,
    w.version,
    w.secret_sealed,
    w.previous_secret_sealed,
    w.previous_secret_expires_at,
    jsonb_build_object('object', 'webhook_endpoint', 'id', w.id, 'url', w.url, 'events', to_jsonb(w.events), 'description', w.description, 'status', w.status, 'disabled_reason', w.disabled_reason, 'previous_secret_expires_at',
        case
            when (w.previous_secret_expires_at > now()) then app_private.iso_timestamp(w.previous_secret_expires_at)
            else null::text
        end, 'created_at', app_private.iso_timestamp(w.created_at), 'updated_at', app_private.iso_timestamp(w.updated_at), 'version', w.version) as doc
   from app.webhook_endpoints w;

alter view api.webhook_endpoints owner to svc_api;

grant select on table api.webhook_endpoints to svc_runtime;
grant select on table api.webhook_endpoints to svc_owner;

-- function api.service_outbox_status()

create function api.service_outbox_status(out oldest_pending_event_seconds double precision, out deliveries_pending bigint, out oldest_due_delivery_seconds double precision) returns record
    language sql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
  select coalesce(extract(epoch from now() - (select min(e.created_at) from app.events e where e.fanout_pending)), 0)::float8,
         (select count(*) from app.webhook_deliveries d where d.status = 'pending'),
         coalesce(extract(epoch from now() - (select min(d.next_attempt_at) from app.webhook_deliveries d
                                              where d.status = 'pending' and d.next_attempt_at <= now())), 0)::float8
$$;

alter function api.service_outbox_status(out oldest_pending_event_seconds double precision, out deliveries_pending bigint, out oldest_due_delivery_seconds double precision) owner to svc_status;

comment on function api.service_outbox_status(out oldest_pending_event_seconds double precision, out deliveries_pending bigint, out oldest_due_delivery_seconds double precision) is 'The outbox gauges of /metrics over every organization: the age in seconds of the oldest event waiting for its fan-out, the number of deliveries waiting, and how long the most overdue due delivery has waited (a retry scheduled for later is not lag). It runs as svc_status, which owns nothing else and by its two policies and column grants sees, of every organization, only the waiting events'' creation times and the waiting deliveries'' status and due time; svc_runtime calls it without a request context and gets these three numbers alone.';

revoke all on function api.service_outbox_status(out oldest_pending_event_seconds double precision, out deliveries_pending bigint, out oldest_due_delivery_seconds double precision) from public;
grant execute on function api.service_outbox_status(out oldest_pending_event_seconds double precision, out deliveries_pending bigint, out oldest_due_delivery_seconds double precision) to svc_runtime;
grant execute on function api.service_outbox_status(out oldest_pending_event_seconds double precision, out deliveries_pending bigint, out oldest_due_delivery_seconds double precision) to svc_api;
grant execute on function api.service_outbox_status(out oldest_pending_event_seconds double precision, out deliveries_pending bigint, out oldest_due_delivery_seconds double precision) to svc_owner;

-- function api.webhook_deliveries(text)

create function api.webhook_deliveries(p_id text default null::text) returns setof api.webhook_deliveries
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.webhook_deliveries v;
    else
      return query select * from api.webhook_deliveries v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.webhook_deliveries', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;

alter function api.webhook_deliveries(p_id text) owner to svc_api;

comment on function api.webhook_deliveries(p_id text) is 'The rows of view api.webhook_deliveries for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

revoke all on function api.webhook_deliveries(p_id text) from public;
grant execute on function api.webhook_deliveries(p_id text) to svc_runtime;
grant execute on function api.webhook_deliveries(p_id text) to svc_owner;
grant execute on function api.webhook_deliveries(p_id text) to svc_worker;

-- function api.webhook_delivery_get(text, text)

create function api.webhook_delivery_get(p_endpoint text, p_delivery text) returns table(doc jsonb)
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
  v_doc jsonb;
begin
  select v.doc into v_doc from api.webhook_deliveries(p_delivery) v where v.id = p_delivery and v.endpoint_id = p_endpoint;
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

alter function api.webhook_delivery_get(p_endpoint text, p_delivery text) owner to svc_api;

comment on function api.webhook_delivery_get(p_endpoint text, p_delivery text) is 'getWebhookDelivery: one delivery of endpoint p_endpoint with all its attempts, read through api.webhook_deliveries and app.webhook_delivery_attempts under svc_api''s policies, which show only the request''s client''s own deliveries and attempts in its organization; no row when the delivery is not the caller''s or not that endpoint''s (the server answers WEBHOOK_DELIVERY_NOT_FOUND). It runs as svc_api because svc_runtime holds no privilege on the tables.';

revoke all on function api.webhook_delivery_get(p_endpoint text, p_delivery text) from public;
grant execute on function api.webhook_delivery_get(p_endpoint text, p_delivery text) to svc_runtime;
grant execute on function api.webhook_delivery_get(p_endpoint text, p_delivery text) to svc_owner;
grant execute on function api.webhook_delivery_get(p_endpoint text, p_delivery text) to svc_worker;

-- function api.webhook_delivery_replay(text, text)

create function api.webhook_delivery_replay(p_endpoint text, p_delivery text) returns table(doc jsonb)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  w app.webhook_endpoints;
  d app.webhook_deliveries;
  e app.events;
  v_id text := app_private.new_id('whd');
begin
  perform app_private.refuse_on_coordinator('api.webhook_delivery_replay(text,text)');
  -- Runs as definer (it writes a delivery): ownership is checked against the request context.
  select * into w from app.webhook_endpoints
   where id = p_endpoint and organization_id = v__organization_id and client_id = app.current_client_id();
  if not found then
    perform app_private.webhook_endpoint_not_found(p_endpoint);
  end if;
  select * into d from app.webhook_deliveries where organization_id = w.organization_id and id = p_delivery and endpoint_id = w.id;
  if not found then
    perform app_private.raise('SVN04', 'WEBHOOK_DELIVERY_NOT_FOUND', format('no delivery %s of endpoint %s', p_delivery, p_endpoint));
  end if;
  select * into e from app.events where organization_id = d.organization_id and id = d.event_id;
  if e.created_at < now() - interval '30 days' then
    perform app_private.raise('SVC09', 'WEBHOOK_REPLAY_EXPIRED',
      format('event %s is older than the 30-day retention window; fetch the resource instead', e.id));
  end if;
  if w.status <> 'enabled' then
    perform app_private.raise('SVC09', 'CONFLICT', 'the endpoint is disabled; enable it before replaying');
  end if;
  insert into app.webhook_deliveries (organization_id, id, client_id, endpoint_id, event_id, replay_of)
  values (w.organization_id, v_id, w.client_id, w.id, e.id, d.id);
  perform app_private.webhook_enqueue(v__organization_id, v_id);
  return query select v.doc from api.webhook_deliveries(v_id) v where v.id = v_id;
end
$$;

alter function api.webhook_delivery_replay(p_endpoint text, p_delivery text) owner to svc_owner;

comment on function api.webhook_delivery_replay(p_endpoint text, p_delivery text) is 'replayWebhookDelivery: a new delivery of the same event to the same endpoint (replay_of names the original), its webhook_deliver job queued, for the caller''s own endpoint (else WEBHOOK_ENDPOINT_NOT_FOUND) and a delivery of it (else WEBHOOK_DELIVERY_NOT_FOUND), only inside the 30-day event retention (SVC09 WEBHOOK_REPLAY_EXPIRED) and while the endpoint is enabled (SVC09 CONFLICT). It runs as svc_owner because svc_api may not write deliveries or queue jobs, so it checks the endpoint''s organization and client against the request context itself, and svc_owner''s policy keeps it in the request''s organization.';

revoke all on function api.webhook_delivery_replay(p_endpoint text, p_delivery text) from public;
grant execute on function api.webhook_delivery_replay(p_endpoint text, p_delivery text) to svc_runtime;
grant execute on function api.webhook_delivery_replay(p_endpoint text, p_delivery text) to svc_api;
grant execute on function api.webhook_delivery_replay(p_endpoint text, p_delivery text) to svc_worker;

-- function api.webhook_endpoint_create(text, text, text[], text, text)

create function api.webhook_endpoint_create(p_id text, p_url text, p_events text[], p_description text, p_secret_sealed text) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  insert into app.webhook_endpoints (organization_id, id, client_id, url, events, description, secret_sealed)
  values (v__organization_id, p_id, app.current_client_id(), p_url, p_events, p_description, p_secret_sealed);
  return query select w.doc, w.version from api.webhook_endpoints(p_id) w where w.id = p_id;
end
$$;

alter function api.webhook_endpoint_create(p_id text, p_url text, p_events text[], p_description text, p_secret_sealed text) owner to svc_api;

comment on function api.webhook_endpoint_create(p_id text, p_url text, p_events text[], p_description text, p_secret_sealed text) is 'createWebhookEndpoint: inserts the endpoint for the request''s client with the id the server chose before the verification challenge (which names it), a secret the server sealed and a URL it checked as safe; the table''s triggers check the event names (WEBHOOK_EVENT_NOT_SUPPORTED) and the limit of 20 endpoints per client. It runs as svc_api under "Clients create their own endpoints": the organization and client come from the request context, never from the caller.';

revoke all on function api.webhook_endpoint_create(p_id text, p_url text, p_events text[], p_description text, p_secret_sealed text) from public;
grant execute on function api.webhook_endpoint_create(p_id text, p_url text, p_events text[], p_description text, p_secret_sealed text) to svc_runtime;
grant execute on function api.webhook_endpoint_create(p_id text, p_url text, p_events text[], p_description text, p_secret_sealed text) to svc_owner;
grant execute on function api.webhook_endpoint_create(p_id text, p_url text, p_events text[], p_description text, p_secret_sealed text) to svc_worker;

-- function api.webhook_endpoint_rotate(text, text, integer)

create function api.webhook_endpoint_rotate(p_id text, p_secret_sealed text, p_previous_expires_in_seconds integer) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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
  return query select v.doc, v.version from api.webhook_endpoints(w.id) v where v.id = w.id;
end
$$;

alter function api.webhook_endpoint_rotate(p_id text, p_secret_sealed text, p_previous_expires_in_seconds integer) owner to svc_api;

comment on function api.webhook_endpoint_rotate(p_id text, p_secret_sealed text, p_previous_expires_in_seconds integer) is 'rotateWebhookEndpointSecret: stores the new sealed secret; with p_previous_expires_in_seconds > 0 the previous secret keeps signing deliveries until then, so receivers can switch without a gap, otherwise it is dropped at once. It runs as svc_api: app_private.webhook_endpoint_lock finds only the request''s client''s own endpoints (else WEBHOOK_ENDPOINT_NOT_FOUND), and the update passes "Clients change their own endpoints".';

revoke all on function api.webhook_endpoint_rotate(p_id text, p_secret_sealed text, p_previous_expires_in_seconds integer) from public;
grant execute on function api.webhook_endpoint_rotate(p_id text, p_secret_sealed text, p_previous_expires_in_seconds integer) to svc_runtime;
grant execute on function api.webhook_endpoint_rotate(p_id text, p_secret_sealed text, p_previous_expires_in_seconds integer) to svc_owner;
grant execute on function api.webhook_endpoint_rotate(p_id text, p_secret_sealed text, p_previous_expires_in_seconds integer) to svc_worker;

-- function api.webhook_endpoint_set_status(text, text, boolean)

create function api.webhook_endpoint_set_status(p_id text, p_status text, p_verified boolean default false) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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
     where e.organization_id = w.organization_id and e.id = w.id;
  end if;
  return query select v.doc, v.version from api.webhook_endpoints(w.id) v where v.id = w.id;
end
$$;

alter function api.webhook_endpoint_set_status(p_id text, p_status text, p_verified boolean) owner to svc_api;

comment on function api.webhook_endpoint_set_status(p_id text, p_status text, p_verified boolean) is 'disableWebhookEndpoint and enableWebhookEndpoint: sets the status, clears the failure streak and records a client''s disabling (disabled_reason client); an unchanged status writes nothing (no new version). Enabling a disabled endpoint needs p_verified (the server ran the verification challenge before this transaction), and one disabled meanwhile is refused as a retryable SVC09 CONFLICT. It runs as svc_api, on the request''s client''s own endpoint only (webhook_endpoint_lock and "Clients change their own endpoints"; WEBHOOK_ENDPOINT_NOT_FOUND otherwise).';

revoke all on function api.webhook_endpoint_set_status(p_id text, p_status text, p_verified boolean) from public;
grant execute on function api.webhook_endpoint_set_status(p_id text, p_status text, p_verified boolean) to svc_runtime;
grant execute on function api.webhook_endpoint_set_status(p_id text, p_status text, p_verified boolean) to svc_owner;
grant execute on function api.webhook_endpoint_set_status(p_id text, p_status text, p_verified boolean) to svc_worker;

-- function api.webhook_endpoint_test(text)

create function api.webhook_endpoint_test(p_endpoint text) returns table(doc jsonb)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  w app.webhook_endpoints;
  v_event text;
  v_id text := app_private.new_id('whd');
begin
  perform app_private.refuse_on_coordinator('api.webhook_endpoint_test(text)');
  select * into w from app.webhook_endpoints
   where id = p_endpoint and organization_id = v__organization_id and client_id = app.current_client_id();
  if not found then
    perform app_private.webhook_endpoint_not_found(p_endpoint);
  end if;
  insert into app.events (organization_id, type, resource_type, resource_id, resource_version, target_endpoint_id, client_ids)
  values (w.organization_id, 'webhook_endpoint.test', 'webhook_endpoint', w.id, w.version, w.id, array[w.client_id])
  returning id into v_event;
  insert into app.webhook_deliveries (organization_id, id, client_id, endpoint_id, event_id)
  values (w.organization_id, v_id, w.client_id, w.id, v_event);
  perform app_private.webhook_enqueue(v__organization_id, v_id);
  return query select v.doc from api.webhook_deliveries(v_id) v where v.id = v_id;
end
$$;

alter function api.webhook_endpoint_test(p_endpoint text) owner to svc_owner;

comment on function api.webhook_endpoint_test(p_endpoint text) is 'testWebhookEndpoint: a webhook_endpoint.test event aimed at this endpoint alone (its client in client_ids, so that the client may read it) and a delivery of it, its job queued; it goes to a disabled endpoint too, since testing is how a client checks a fix. It runs as svc_owner because svc_api may write neither events nor deliveries, and takes only the request''s client''s own endpoint in the request''s organization (else WEBHOOK_ENDPOINT_NOT_FOUND).';

revoke all on function api.webhook_endpoint_test(p_endpoint text) from public;
grant execute on function api.webhook_endpoint_test(p_endpoint text) to svc_runtime;
grant execute on function api.webhook_endpoint_test(p_endpoint text) to svc_api;
grant execute on function api.webhook_endpoint_test(p_endpoint text) to svc_worker;

-- function api.webhook_endpoint_update(text, integer[], jsonb, text)

create function api.webhook_endpoint_update(p_id text, p_if_match integer[], p_patch jsonb, p_verified_url text default null::text) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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
   where e.organization_id = w.organization_id and e.id = w.id;
  return query select v.doc, v.version from api.webhook_endpoints(w.id) v where v.id = w.id;
end
$$;

alter function api.webhook_endpoint_update(p_id text, p_if_match integer[], p_patch jsonb, p_verified_url text) owner to svc_api;

comment on function api.webhook_endpoint_update(p_id text, p_if_match integer[], p_patch jsonb, p_verified_url text) is 'updateWebhookEndpoint: changes url, events and description as p_patch gives them, after If-Match (SVS12 STALE_RESOURCE); p_verified_url is the URL whose verification challenge the server ran before this transaction, and a new URL other than it (the endpoint changed meanwhile) is refused as a retryable SVC09 CONFLICT. It runs as svc_api, on the request''s client''s own endpoint only (webhook_endpoint_lock and "Clients change their own endpoints"; WEBHOOK_ENDPOINT_NOT_FOUND otherwise); the event names are checked by tg_webhook_endpoints__check_events.';

revoke all on function api.webhook_endpoint_update(p_id text, p_if_match integer[], p_patch jsonb, p_verified_url text) from public;
grant execute on function api.webhook_endpoint_update(p_id text, p_if_match integer[], p_patch jsonb, p_verified_url text) to svc_runtime;
grant execute on function api.webhook_endpoint_update(p_id text, p_if_match integer[], p_patch jsonb, p_verified_url text) to svc_owner;
grant execute on function api.webhook_endpoint_update(p_id text, p_if_match integer[], p_patch jsonb, p_verified_url text) to svc_worker;

-- function api.webhook_endpoints(text)

create function api.webhook_endpoints(p_id text default null::text) returns setof api.webhook_endpoints
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.webhook_endpoints v;
    else
      return query select * from api.webhook_endpoints v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.webhook_endpoints', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;

alter function api.webhook_endpoints(p_id text) owner to svc_api;

comment on function api.webhook_endpoints(p_id text) is 'The rows of view api.webhook_endpoints for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

revoke all on function api.webhook_endpoints(p_id text) from public;
grant execute on function api.webhook_endpoints(p_id text) to svc_runtime;
grant execute on function api.webhook_endpoints(p_id text) to svc_owner;
grant execute on function api.webhook_endpoints(p_id text) to svc_worker;

-- function control.notifications_list(text)

create function control.notifications_list(p_org text) returns setof app_private.admin_notifications
    language sql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$ select * from app_private.admin_notifications where organization_id = p_org order by id $$;

revoke all on function control.notifications_list(p_org text) from public;
grant execute on function control.notifications_list(p_org text) to svc_admin;

-- rows of app_private.event_types

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
	('webhook_endpoint.test', 'webhook_endpoint', '{testWebhookEndpoint}', 'A signed test event for one endpoint.', false),
	('integration_connection.updated', 'integration_connection', '{}', 'A connection changed (status, capabilities, action required) through the control plane.', true),
	('invoice.created', 'invoice', '{createInvoice}', 'A draft invoice was created.', true),
	('invoice.updated', 'invoice', '{updateInvoice,replaceInvoiceLines,createPayment}', 'A draft changed, a partial payment lowered the amount due, or the accounting sync status changed.', true),
	('invoice.sent', 'invoice', '{sendInvoice}', 'An invoice was issued: numbered, its PDF stored and (when asked) emailed.', true),
	('invoice.paid', 'invoice', '{createPayment}', 'Recorded payments settled an invoice.', true),
	('invoice.voided', 'invoice', '{voidInvoice}', 'An issued invoice was voided (it is kept).', true),
	('payment.created', 'payment', '{createPayment}', 'A payment received outside the service was recorded.', true),
	('file.ready', 'file', '{completeFileUpload}', 'An uploaded file passed its checks and can be downloaded.', true),
	('file.rejected', 'file', '{completeFileUpload}', 'An uploaded file failed its checks (the file shows why); it cannot be downloaded.', true),
	('file.archived', 'file', '{archiveFile}', 'A file was archived.', true),
	('ticket.created', 'ticket', '{createTicket}', 'A ticket was created.', true),
	('ticket.updated', 'ticket', '{updateTicket}', 'Fields of a ticket changed (subject, description, priority, tags, assignee, project).', true),
	('ticket.transitioned', 'ticket', '{transitionTicket}', 'A ticket moved to another workflow status.', true),
	('ticket.message.created', 'ticket_message', '{createTicketMessage}', 'A reply or an internal note was added to a ticket (internal notes reach only subscribers whose Roles read them).', true),
	('report_run.succeeded', 'report_run', '{createReportRun}', 'A report run finished; its results can be read until expires_at.', true),
	('report_run.failed', 'report_run', '{createReportRun}', 'A report run failed (the run shows why).', true),
	('run.completed', 'run', '{createAgentRun,submitRunAction}', 'A run succeeded; its output is on the run (GET /v1/runs/{id}).', true),
	('run.failed', 'run', '{createAgentRun,submitRunAction}', 'A run failed; the run''s error says why.', true),
	('run.requires_action', 'run', '{createAgentRun,submitRunAction}', 'A run waits for your choice (submitRunAction).', true),
	('run.cancelled', 'run', '{cancelRun}', 'A run was cancelled; it lists the tool operations that completed.', true),
	('conversation.message.created', 'conversation_message', '{createConversationMessage}', 'A message was added to one of your conversations: yours, or the assistant''s reply when its run ended.', true);

revoke create on schema api, app, app_private, control, reporting, skills from svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
