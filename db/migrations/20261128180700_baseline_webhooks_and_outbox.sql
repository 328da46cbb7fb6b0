-- migrate:up

/** Baseline (issue 38), area 7 of 15. Webhooks and the outbox: events and their types, webhook endpoints, deliveries and attempts, the job outbox the worker drains.
 * The current definitions that migrations 20261122000100 to 20261205003400 built (git history before
 * the baseline), as pg_dump writes them; db/README.md says how they were made and compared. */
SET LOCAL check_function_bodies = false;
SET LOCAL client_min_messages = warning;
SELECT pg_catalog.set_config('search_path', '', true);

-- function api.service_outbox_status()

CREATE FUNCTION api.service_outbox_status(OUT oldest_pending_event_seconds double precision, OUT deliveries_pending bigint, OUT oldest_due_delivery_seconds double precision) RETURNS record
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  select coalesce(extract(epoch from now() - (select min(e.created_at) from app.events e where e.fanout_pending)), 0)::float8,
         (select count(*) from app.webhook_deliveries d where d.status = 'pending'),
         coalesce(extract(epoch from now() - (select min(d.next_attempt_at) from app.webhook_deliveries d
                                              where d.status = 'pending' and d.next_attempt_at <= now())), 0)::float8
$$;

SET LOCAL default_tablespace = '';

SET LOCAL default_table_access_method = heap;

-- table app.events

CREATE TABLE app.events (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('evt'::text) NOT NULL,
    type text NOT NULL,
    resource_type text NOT NULL,
    resource_id text NOT NULL,
    resource_version integer NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    fanout_pending boolean DEFAULT false NOT NULL,
    target_endpoint_id text,
    client_ids text[] DEFAULT '{}'::text[] NOT NULL
);

ALTER TABLE ONLY app.events FORCE ROW LEVEL SECURITY;

-- table app.webhook_deliveries

CREATE TABLE app.webhook_deliveries (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('whd'::text) NOT NULL,
    client_id text NOT NULL,
    endpoint_id text NOT NULL,
    event_id text NOT NULL,
    replay_of text,
    status text DEFAULT 'pending'::text NOT NULL,
    status_reason text,
    attempt_count integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone DEFAULT now(),
    lease_until timestamp with time zone,
    retry_until timestamp with time zone DEFAULT (now() + '72:00:00'::interval) NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    completed_at timestamp with time zone,
    CONSTRAINT webhook_deliveries_pending_consistent CHECK (((status = 'pending'::text) = (completed_at IS NULL))),
    CONSTRAINT webhook_deliveries_status_valid CHECK ((status = ANY (ARRAY['pending'::text, 'succeeded'::text, 'failed'::text, 'cancelled'::text])))
);

ALTER TABLE ONLY app.webhook_deliveries FORCE ROW LEVEL SECURITY;

-- table app.webhook_delivery_attempts

CREATE TABLE app.webhook_delivery_attempts (
    organization_id text NOT NULL,
    delivery_id text NOT NULL,
    attempt integer NOT NULL,
    started_at timestamp with time zone NOT NULL,
    duration_ms integer NOT NULL,
    response_status integer,
    error text,
    client_id text NOT NULL
);

ALTER TABLE ONLY app.webhook_delivery_attempts FORCE ROW LEVEL SECURITY;

-- view api.webhook_deliveries

CREATE VIEW api.webhook_deliveries WITH (security_invoker='false') AS
 SELECT d.organization_id,
    d.id,
    d.endpoint_id,
    d.event_id,
    d.status,
    d.created_at,
    e.type AS event_type,
    e.created_at AS event_created_at,
    jsonb_build_object('object', 'webhook_delivery', 'id', d.id, 'endpoint_id', d.endpoint_id, 'event', jsonb_build_object('id', e.id, 'type', e.type, 'created_at', app_private.iso_timestamp(e.created_at), 'data', jsonb_build_object('object', jsonb_build_object('type', e.resource_type, 'id', e.resource_id, 'version', e.resource_version))), 'status', d.status, 'status_reason', d.status_reason, 'attempt_count', d.attempt_count, 'next_attempt_at',
        CASE
            WHEN (d.status = 'pending'::text) THEN app_private.iso_timestamp(d.next_attempt_at)
            ELSE NULL::text
        END, 'replay_of', d.replay_of, 'last_attempt', ( SELECT jsonb_build_object('attempt', a.attempt, 'started_at', app_private.iso_timestamp(a.started_at), 'duration_ms', a.duration_ms, 'response_status', a.response_status, 'error', a.error) AS jsonb_build_object
           FROM app.webhook_delivery_attempts a
          WHERE (a.delivery_id = d.id)
          ORDER BY a.attempt DESC
         LIMIT 1), 'created_at', app_private.iso_timestamp(d.created_at), 'completed_at', app_private.iso_timestamp(d.completed_at)) AS doc
   FROM (app.webhook_deliveries d
     JOIN app.events e ON ((e.id = d.event_id)));

ALTER TABLE api.webhook_deliveries OWNER TO svc_api;

-- function api.webhook_deliveries(text)

CREATE FUNCTION api.webhook_deliveries(p_id text DEFAULT NULL::text) RETURNS SETOF api.webhook_deliveries
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.webhook_deliveries where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.webhook_deliveries', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

ALTER FUNCTION api.webhook_deliveries(p_id text) OWNER TO svc_api;

-- comment api.FUNCTION webhook_deliveries(p_id text)

COMMENT ON FUNCTION api.webhook_deliveries(p_id text) IS 'The rows of view api.webhook_deliveries for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

-- function api.webhook_delivery_get(text, text)

CREATE FUNCTION api.webhook_delivery_get(p_endpoint text, p_delivery text) RETURNS TABLE(doc jsonb)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION api.webhook_delivery_get(p_endpoint text, p_delivery text) OWNER TO svc_api;

-- function api.webhook_delivery_replay(text, text)

CREATE FUNCTION api.webhook_delivery_replay(p_endpoint text, p_delivery text) RETURNS TABLE(doc jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
  return query select v.doc from api.webhook_deliveries v where v.id = v_id;
end
$$;

-- function api.webhook_endpoint_create(text, text, text[], text, text)

CREATE FUNCTION api.webhook_endpoint_create(p_id text, p_url text, p_events text[], p_description text, p_secret_sealed text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  insert into app.webhook_endpoints (organization_id, id, client_id, url, events, description, secret_sealed)
  values (v__organization_id, p_id, app.current_client_id(), p_url, p_events, p_description, p_secret_sealed);
  return query select w.doc, w.version from api.webhook_endpoints w where w.id = p_id;
end
$$;

ALTER FUNCTION api.webhook_endpoint_create(p_id text, p_url text, p_events text[], p_description text, p_secret_sealed text) OWNER TO svc_api;

-- function api.webhook_endpoint_rotate(text, text, integer)

CREATE FUNCTION api.webhook_endpoint_rotate(p_id text, p_secret_sealed text, p_previous_expires_in_seconds integer) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION api.webhook_endpoint_rotate(p_id text, p_secret_sealed text, p_previous_expires_in_seconds integer) OWNER TO svc_api;

-- function api.webhook_endpoint_set_status(text, text, boolean)

CREATE FUNCTION api.webhook_endpoint_set_status(p_id text, p_status text, p_verified boolean DEFAULT false) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
  return query select v.doc, v.version from api.webhook_endpoints v where v.id = w.id;
end
$$;

ALTER FUNCTION api.webhook_endpoint_set_status(p_id text, p_status text, p_verified boolean) OWNER TO svc_api;

-- function api.webhook_endpoint_test(text)

CREATE FUNCTION api.webhook_endpoint_test(p_endpoint text) RETURNS TABLE(doc jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
  return query select v.doc from api.webhook_deliveries v where v.id = v_id;
end
$$;

-- function api.webhook_endpoint_update(text, integer[], jsonb, text)

CREATE FUNCTION api.webhook_endpoint_update(p_id text, p_if_match integer[], p_patch jsonb, p_verified_url text DEFAULT NULL::text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
  return query select v.doc, v.version from api.webhook_endpoints v where v.id = w.id;
end
$$;

ALTER FUNCTION api.webhook_endpoint_update(p_id text, p_if_match integer[], p_patch jsonb, p_verified_url text) OWNER TO svc_api;

-- table app.webhook_endpoints

CREATE TABLE app.webhook_endpoints (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('whe'::text) NOT NULL,
    client_id text NOT NULL,
    url text NOT NULL,
    events text[] NOT NULL,
    description text,
    status text DEFAULT 'enabled'::text NOT NULL,
    disabled_reason text,
    secret_sealed text NOT NULL,
    previous_secret_sealed text,
    previous_secret_expires_at timestamp with time zone,
    consecutive_failures integer DEFAULT 0 NOT NULL,
    failing_since timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    CONSTRAINT webhook_endpoints_description_length CHECK ((length(description) <= 1000)),
    CONSTRAINT webhook_endpoints_disabled_has_reason CHECK (((status = 'disabled'::text) = (disabled_reason IS NOT NULL))),
    CONSTRAINT webhook_endpoints_disabled_reason_valid CHECK ((disabled_reason = ANY (ARRAY['client'::text, 'delivery_failures'::text]))),
    CONSTRAINT webhook_endpoints_events_bounded CHECK (((cardinality(events) >= 1) AND (cardinality(events) <= 100))),
    CONSTRAINT webhook_endpoints_id_format CHECK ((id ~ '^whe_[0-9a-f]{28}$'::text)),
    CONSTRAINT webhook_endpoints_status_valid CHECK ((status = ANY (ARRAY['enabled'::text, 'disabled'::text]))),
    CONSTRAINT webhook_endpoints_url_https CHECK (((url ~ '^https://[^/?#@\s]+'::text) AND (length(url) <= 2048)))
);

ALTER TABLE ONLY app.webhook_endpoints FORCE ROW LEVEL SECURITY;

-- view api.webhook_endpoints

CREATE VIEW api.webhook_endpoints WITH (security_invoker='false') AS
 SELECT w.organization_id,
    w.id,
    w.client_id,
    w.status,
    w.created_at,
    w.version,
    w.secret_sealed,
    w.previous_secret_sealed,
    w.previous_secret_expires_at,
    jsonb_build_object('object', 'webhook_endpoint', 'id', w.id, 'url', w.url, 'events', to_jsonb(w.events), 'description', w.description, 'status', w.status, 'disabled_reason', w.disabled_reason, 'previous_secret_expires_at',
        CASE
            WHEN (w.previous_secret_expires_at > now()) THEN app_private.iso_timestamp(w.previous_secret_expires_at)
            ELSE NULL::text
        END, 'created_at', app_private.iso_timestamp(w.created_at), 'updated_at', app_private.iso_timestamp(w.updated_at), 'version', w.version) AS doc
   FROM app.webhook_endpoints w;

ALTER TABLE api.webhook_endpoints OWNER TO svc_api;

-- function api.webhook_endpoints(text)

CREATE FUNCTION api.webhook_endpoints(p_id text DEFAULT NULL::text) RETURNS SETOF api.webhook_endpoints
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.webhook_endpoints where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.webhook_endpoints', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

ALTER FUNCTION api.webhook_endpoints(p_id text) OWNER TO svc_api;

-- comment api.FUNCTION webhook_endpoints(p_id text)

COMMENT ON FUNCTION api.webhook_endpoints(p_id text) IS 'The rows of view api.webhook_endpoints for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

-- function app_private.begin_delivery_context(text, text)

CREATE FUNCTION app_private.begin_delivery_context(p_organization_id text, p_client_id text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.emit_event(text, text, text, text, integer, text)

CREATE FUNCTION app_private.emit_event(p_org text, p_type text, p_resource_type text, p_resource_id text, p_version integer, p_target_endpoint text DEFAULT NULL::text) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.event_resource_visible(text, text, text)

CREATE FUNCTION app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text) OWNER TO svc_api;

-- function app_private.job_outbox_drain()

CREATE FUNCTION app_private.job_outbox_drain() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.purge_webhook_history(interval)

CREATE FUNCTION app_private.purge_webhook_history(p_older_than interval DEFAULT '30 days'::interval) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_count bigint;
begin
  delete from app.events e where e.created_at < now() - p_older_than;
  get diagnostics v_count = row_count;
  return v_count;
end
$$;

-- function app_private.queue_job(text, text, json, text, integer, timestamp with time zone)

CREATE FUNCTION app_private.queue_job(p_organization_id text, p_task text, p_payload json, p_job_key text, p_max_attempts integer, p_run_at timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg__emit_event()

CREATE FUNCTION app_private.tg__emit_event() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_webhook_deliveries__replay_of()

CREATE FUNCTION app_private.tg_webhook_deliveries__replay_of() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_webhook_endpoints__check_events()

CREATE FUNCTION app_private.tg_webhook_endpoints__check_events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_webhook_endpoints__limit()

CREATE FUNCTION app_private.tg_webhook_endpoints__limit() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  -- Serialize creations per client so two concurrent ones cannot both pass the count.
  perform pg_advisory_xact_lock(hashtextextended('webhook_endpoints:' || new.client_id, 0));
  if (select count(*) from app.webhook_endpoints w where w.organization_id = new.organization_id and w.client_id = new.client_id) >= 20 then
    perform app_private.raise('SVC09', 'CONFLICT', 'a client can have at most 20 webhook endpoints; disable and reuse one');
  end if;
  return new;
end
$$;

-- function app_private.webhook_cancel(text, text, text)

CREATE FUNCTION app_private.webhook_cancel(p_organization_id text, p_delivery text, p_reason text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  update app.webhook_deliveries x
     set status = 'cancelled', status_reason = p_reason, completed_at = now(), lease_until = null, next_attempt_at = null
   where x.organization_id = p_organization_id and x.id = p_delivery and x.status = 'pending';
end
$$;

-- function app_private.webhook_claim(text, text, integer)

CREATE FUNCTION app_private.webhook_claim(p_organization_id text, p_delivery text, p_lease_seconds integer) RETURNS TABLE(attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text, organization_id text, type text, resource_type text, resource_id text, resource_version integer, created_at timestamp with time zone)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.webhook_endpoint_lock(text, integer[])

CREATE FUNCTION app_private.webhook_endpoint_lock(p_id text, p_if_match integer[] DEFAULT NULL::integer[]) RETURNS app.webhook_endpoints
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.webhook_endpoint_not_found(text)

CREATE FUNCTION app_private.webhook_endpoint_not_found(p_id text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select app_private.raise('SVN04', 'WEBHOOK_ENDPOINT_NOT_FOUND', format('no webhook endpoint %s of your client', p_id)) $$;

-- function app_private.webhook_enqueue(text, text, timestamp with time zone)

CREATE FUNCTION app_private.webhook_enqueue(p_organization_id text, p_delivery text, p_run_at timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.queue_job(p_organization_id, 'webhook_deliver', json_build_object('delivery_id', p_delivery),
                                'deliver:' || p_delivery, 25, p_run_at);
end
$$;

-- function app_private.webhook_fanout(text, text, integer)

CREATE FUNCTION app_private.webhook_fanout(p_organization_id text, p_event text, p_lease_seconds integer) RETURNS TABLE(delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text, organization_id text, type text, resource_type text, resource_id text, resource_version integer, created_at timestamp with time zone)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.webhook_fanout_any(integer, integer)

CREATE FUNCTION app_private.webhook_fanout_any(p_limit integer, p_lease_seconds integer) RETURNS TABLE(delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text, organization_id text, type text, resource_type text, resource_id text, resource_version integer, created_at timestamp with time zone)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.webhook_fanout_batch(text, integer, integer)

CREATE FUNCTION app_private.webhook_fanout_batch(p_organization_id text, p_limit integer, p_lease_seconds integer) RETURNS TABLE(delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text, organization_id text, type text, resource_type text, resource_id text, resource_version integer, created_at timestamp with time zone)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.webhook_fanout_event(app.events, integer)

CREATE FUNCTION app_private.webhook_fanout_event(e app.events, p_lease_seconds integer) RETURNS TABLE(delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text, organization_id text, type text, resource_type text, resource_id text, resource_version integer, created_at timestamp with time zone)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.webhook_fanout_organizations(integer)

CREATE FUNCTION app_private.webhook_fanout_organizations(p_limit integer) RETURNS SETOF text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return query select x.organization_id from app.events x where x.fanout_pending
                group by x.organization_id order by min(x.created_at) limit greatest(1, p_limit);
end
$$;

-- function app_private.webhook_record_attempt(text, text, integer, timestamp with time zone, integer, integer, text, boolean, integer, double precision, integer, integer)

CREATE FUNCTION app_private.webhook_record_attempt(p_organization_id text, p_delivery text, p_attempt integer, p_started_at timestamp with time zone, p_duration_ms integer, p_response_status integer, p_error text, p_retryable boolean, p_retry_after_seconds integer, p_scale double precision, p_disable_after integer, p_disable_after_seconds integer) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.webhook_recover(interval)

CREATE FUNCTION app_private.webhook_recover(p_stale interval DEFAULT '00:00:30'::interval) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.webhook_retry_delay(integer, double precision)

CREATE FUNCTION app_private.webhook_retry_delay(p_attempt integer, p_scale double precision DEFAULT 1) RETURNS interval
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  select make_interval(secs => coalesce((array[5, 300, 1800, 7200, 18000, 36000, 50400, 72000]::integer[])[p_attempt], 86400)
                               * (0.8 + random() * 0.4) * p_scale)
$$;

-- table app_private.admin_notifications

CREATE TABLE app_private.admin_notifications (
    id bigint NOT NULL,
    organization_id text NOT NULL,
    kind text NOT NULL,
    subject_id text NOT NULL,
    detail text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

-- function control.notifications_list(text)

CREATE FUNCTION control.notifications_list(p_org text) RETURNS SETOF app_private.admin_notifications
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select * from app_private.admin_notifications where organization_id = p_org order by id $$;

-- sequence app_private.admin_notifications_id_seq

ALTER TABLE app_private.admin_notifications ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_private.admin_notifications_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- table app_private.event_types

CREATE TABLE app_private.event_types (
    name text NOT NULL,
    resource_type text NOT NULL,
    emitted_by text[] NOT NULL,
    description text NOT NULL,
    subscribable boolean DEFAULT true NOT NULL,
    CONSTRAINT event_types_name_format CHECK ((name ~ '^[a-z_]+(\.[a-z_]+)+$'::text))
);

-- table app_private.job_outbox

CREATE TABLE app_private.job_outbox (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('job'::text) NOT NULL,
    task text NOT NULL,
    payload json NOT NULL,
    job_key text,
    max_attempts integer NOT NULL,
    run_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE ONLY app_private.job_outbox FORCE ROW LEVEL SECURITY;

-- comment app_private.TABLE job_outbox

COMMENT ON TABLE app_private.job_outbox IS 'On Citus: jobs queued on a worker, moved into graphile-worker''s queue on the coordinator by app_private.job_outbox_drain. Empty on one server.';

-- sequence set app_private.admin_notifications_id_seq

SELECT pg_catalog.setval('app_private.admin_notifications_id_seq', 1, false);

-- constraint app.events events_pkey

ALTER TABLE ONLY app.events
    ADD CONSTRAINT events_pkey PRIMARY KEY (organization_id, id);

-- constraint app.webhook_deliveries webhook_deliveries_pkey

ALTER TABLE ONLY app.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (organization_id, id);

-- constraint app.webhook_delivery_attempts webhook_delivery_attempts_pkey

ALTER TABLE ONLY app.webhook_delivery_attempts
    ADD CONSTRAINT webhook_delivery_attempts_pkey PRIMARY KEY (organization_id, delivery_id, attempt);

-- constraint app.webhook_endpoints webhook_endpoints_client_id_key

ALTER TABLE ONLY app.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_client_id_key UNIQUE (organization_id, client_id, id);

-- constraint app.webhook_endpoints webhook_endpoints_pkey

ALTER TABLE ONLY app.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_pkey PRIMARY KEY (organization_id, id);

-- constraint app_private.admin_notifications admin_notifications_pkey

ALTER TABLE ONLY app_private.admin_notifications
    ADD CONSTRAINT admin_notifications_pkey PRIMARY KEY (organization_id, id);

-- constraint app_private.event_types event_types_pkey

ALTER TABLE ONLY app_private.event_types
    ADD CONSTRAINT event_types_pkey PRIMARY KEY (name);

-- constraint app_private.job_outbox job_outbox_pkey

ALTER TABLE ONLY app_private.job_outbox
    ADD CONSTRAINT job_outbox_pkey PRIMARY KEY (organization_id, id);

-- index app.events_created

CREATE INDEX events_created ON app.events USING btree (created_at);

-- index app.events_fanout_pending

CREATE INDEX events_fanout_pending ON app.events USING btree (created_at) WHERE fanout_pending;

-- index app.events_id

CREATE INDEX events_id ON app.events USING btree (id);

-- index app.webhook_deliveries_endpoint

CREATE INDEX webhook_deliveries_endpoint ON app.webhook_deliveries USING btree (endpoint_id, created_at, id);

-- index app.webhook_deliveries_id

CREATE INDEX webhook_deliveries_id ON app.webhook_deliveries USING btree (id);

-- index app.webhook_deliveries_lease

CREATE INDEX webhook_deliveries_lease ON app.webhook_deliveries USING btree (lease_until) WHERE ((status = 'pending'::text) AND (lease_until IS NOT NULL));

-- index app.webhook_deliveries_once

CREATE UNIQUE INDEX webhook_deliveries_once ON app.webhook_deliveries USING btree (organization_id, event_id, endpoint_id) WHERE (replay_of IS NULL);

-- index app.webhook_deliveries_pending_due

CREATE INDEX webhook_deliveries_pending_due ON app.webhook_deliveries USING btree (next_attempt_at) WHERE (status = 'pending'::text);

-- index app.webhook_deliveries_replay_of

CREATE INDEX webhook_deliveries_replay_of ON app.webhook_deliveries USING btree (organization_id, replay_of) WHERE (replay_of IS NOT NULL);

-- index app.webhook_endpoints_client

CREATE INDEX webhook_endpoints_client ON app.webhook_endpoints USING btree (client_id, created_at, id);

-- index app.webhook_endpoints_id

CREATE INDEX webhook_endpoints_id ON app.webhook_endpoints USING btree (id);

-- index app.webhook_endpoints_org_enabled

CREATE INDEX webhook_endpoints_org_enabled ON app.webhook_endpoints USING btree (organization_id) WHERE (status = 'enabled'::text);

-- trigger app.webhook_delivery_attempts _010_client_of_parent

CREATE TRIGGER _010_client_of_parent BEFORE INSERT OR UPDATE OF client_id ON app.webhook_delivery_attempts FOR EACH ROW EXECUTE FUNCTION app_private.tg__client_of_parent();

-- trigger app.webhook_deliveries _010_replay_of

CREATE TRIGGER _010_replay_of BEFORE INSERT OR UPDATE OF replay_of ON app.webhook_deliveries FOR EACH ROW WHEN ((new.replay_of IS NOT NULL)) EXECUTE FUNCTION app_private.tg_webhook_deliveries__replay_of();

-- trigger app.webhook_endpoints _100_touch_version

CREATE TRIGGER _100_touch_version BEFORE UPDATE ON app.webhook_endpoints FOR EACH ROW EXECUTE FUNCTION app_private.tg__touch_version();

-- trigger app.webhook_endpoints _200_check_events

CREATE TRIGGER _200_check_events BEFORE INSERT OR UPDATE OF events ON app.webhook_endpoints FOR EACH ROW EXECUTE FUNCTION app_private.tg_webhook_endpoints__check_events();

-- trigger app.webhook_endpoints _300_limit

CREATE TRIGGER _300_limit BEFORE INSERT ON app.webhook_endpoints FOR EACH ROW EXECUTE FUNCTION app_private.tg_webhook_endpoints__limit();

-- trigger app.approvals _950_emit_event

CREATE TRIGGER _950_emit_event AFTER INSERT OR UPDATE ON app.approvals FOR EACH ROW EXECUTE FUNCTION app_private.tg__emit_event('approval');

-- trigger app.projects _950_emit_event

CREATE TRIGGER _950_emit_event AFTER INSERT OR UPDATE ON app.projects FOR EACH ROW EXECUTE FUNCTION app_private.tg__emit_event('project');

-- trigger app.tasks _950_emit_event

CREATE TRIGGER _950_emit_event AFTER INSERT OR UPDATE ON app.tasks FOR EACH ROW EXECUTE FUNCTION app_private.tg__emit_event('task');

-- trigger app.time_entries _950_emit_event

CREATE TRIGGER _950_emit_event AFTER INSERT OR UPDATE ON app.time_entries FOR EACH ROW EXECUTE FUNCTION app_private.tg__emit_event('time_entry');

-- trigger app.webhook_deliveries _990_replay_of

CREATE TRIGGER _990_replay_of AFTER DELETE ON app.webhook_deliveries FOR EACH ROW EXECUTE FUNCTION app_private.tg_webhook_deliveries__replay_of();

-- fk constraint app.events events_organization_id_fkey

ALTER TABLE ONLY app.events
    ADD CONSTRAINT events_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.events events_type_fkey

ALTER TABLE ONLY app.events
    ADD CONSTRAINT events_type_fkey FOREIGN KEY (type) REFERENCES app_private.event_types(name);

-- fk constraint app.webhook_deliveries webhook_deliveries_endpoint_fkey

ALTER TABLE ONLY app.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_endpoint_fkey FOREIGN KEY (organization_id, client_id, endpoint_id) REFERENCES app.webhook_endpoints(organization_id, client_id, id) ON DELETE CASCADE;

-- fk constraint app.webhook_deliveries webhook_deliveries_event_fkey

ALTER TABLE ONLY app.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_event_fkey FOREIGN KEY (organization_id, event_id) REFERENCES app.events(organization_id, id) ON DELETE CASCADE;

-- fk constraint app.webhook_deliveries webhook_deliveries_organization_id_fkey

ALTER TABLE ONLY app.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.webhook_delivery_attempts webhook_delivery_attempts_delivery_fkey

ALTER TABLE ONLY app.webhook_delivery_attempts
    ADD CONSTRAINT webhook_delivery_attempts_delivery_fkey FOREIGN KEY (organization_id, delivery_id) REFERENCES app.webhook_deliveries(organization_id, id) ON DELETE CASCADE;

-- fk constraint app.webhook_endpoints webhook_endpoints_client_fkey

ALTER TABLE ONLY app.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_client_fkey FOREIGN KEY (organization_id, client_id) REFERENCES app.api_clients(organization_id, id) ON DELETE CASCADE;

-- fk constraint app.webhook_endpoints webhook_endpoints_organization_id_fkey

ALTER TABLE ONLY app.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app_private.admin_notifications admin_notifications_organization_id_fkey

ALTER TABLE ONLY app_private.admin_notifications
    ADD CONSTRAINT admin_notifications_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app_private.job_outbox job_outbox_organization_id_fkey

ALTER TABLE ONLY app_private.job_outbox
    ADD CONSTRAINT job_outbox_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- policy app.webhook_endpoints Clients change their own endpoints

CREATE POLICY "Clients change their own endpoints" ON app.webhook_endpoints FOR UPDATE TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id)))) WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- policy app.webhook_endpoints Clients create their own endpoints

CREATE POLICY "Clients create their own endpoints" ON app.webhook_endpoints FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- policy app.webhook_delivery_attempts Clients see attempts of their own deliveries

CREATE POLICY "Clients see attempts of their own deliveries" ON app.webhook_delivery_attempts FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- policy app.webhook_deliveries Clients see deliveries to their own endpoints

CREATE POLICY "Clients see deliveries to their own endpoints" ON app.webhook_deliveries FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- policy app.webhook_endpoints Clients see their own endpoints

CREATE POLICY "Clients see their own endpoints" ON app.webhook_endpoints FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- policy app.events Events are visible through the client's deliveries

CREATE POLICY "Events are visible through the client's deliveries" ON app.events FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (( SELECT app.current_client_id() AS current_client_id) = ANY (client_ids))));

-- row security app.events

ALTER TABLE app.events ENABLE ROW LEVEL SECURITY;

-- row security app.webhook_deliveries

ALTER TABLE app.webhook_deliveries ENABLE ROW LEVEL SECURITY;

-- row security app.webhook_delivery_attempts

ALTER TABLE app.webhook_delivery_attempts ENABLE ROW LEVEL SECURITY;

-- row security app.webhook_endpoints

ALTER TABLE app.webhook_endpoints ENABLE ROW LEVEL SECURITY;

-- row security app_private.job_outbox

ALTER TABLE app_private.job_outbox ENABLE ROW LEVEL SECURITY;

-- acl api.FUNCTION service_outbox_status(OUT oldest_pending_event_seconds double precision, OUT deliveries_pending bigint, OUT oldest_due_delivery_seconds double precision)

REVOKE ALL ON FUNCTION api.service_outbox_status(OUT oldest_pending_event_seconds double precision, OUT deliveries_pending bigint, OUT oldest_due_delivery_seconds double precision) FROM PUBLIC;
GRANT ALL ON FUNCTION api.service_outbox_status(OUT oldest_pending_event_seconds double precision, OUT deliveries_pending bigint, OUT oldest_due_delivery_seconds double precision) TO svc_runtime;
GRANT ALL ON FUNCTION api.service_outbox_status(OUT oldest_pending_event_seconds double precision, OUT deliveries_pending bigint, OUT oldest_due_delivery_seconds double precision) TO svc_api;

-- acl app.TABLE events

GRANT SELECT ON TABLE app.events TO svc_api;

-- acl app.TABLE webhook_deliveries

GRANT SELECT ON TABLE app.webhook_deliveries TO svc_api;

-- acl app.TABLE webhook_delivery_attempts

GRANT SELECT ON TABLE app.webhook_delivery_attempts TO svc_api;

-- acl api.TABLE webhook_deliveries

GRANT SELECT ON TABLE api.webhook_deliveries TO svc_runtime;

-- acl api.FUNCTION webhook_deliveries(p_id text)

REVOKE ALL ON FUNCTION api.webhook_deliveries(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.webhook_deliveries(p_id text) TO svc_runtime;

-- acl api.FUNCTION webhook_delivery_get(p_endpoint text, p_delivery text)

REVOKE ALL ON FUNCTION api.webhook_delivery_get(p_endpoint text, p_delivery text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.webhook_delivery_get(p_endpoint text, p_delivery text) TO svc_runtime;

-- acl api.FUNCTION webhook_delivery_replay(p_endpoint text, p_delivery text)

REVOKE ALL ON FUNCTION api.webhook_delivery_replay(p_endpoint text, p_delivery text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.webhook_delivery_replay(p_endpoint text, p_delivery text) TO svc_runtime;
GRANT ALL ON FUNCTION api.webhook_delivery_replay(p_endpoint text, p_delivery text) TO svc_api;

-- acl api.FUNCTION webhook_endpoint_create(p_id text, p_url text, p_events text[], p_description text, p_secret_sealed text)

REVOKE ALL ON FUNCTION api.webhook_endpoint_create(p_id text, p_url text, p_events text[], p_description text, p_secret_sealed text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.webhook_endpoint_create(p_id text, p_url text, p_events text[], p_description text, p_secret_sealed text) TO svc_runtime;

-- acl api.FUNCTION webhook_endpoint_rotate(p_id text, p_secret_sealed text, p_previous_expires_in_seconds integer)

REVOKE ALL ON FUNCTION api.webhook_endpoint_rotate(p_id text, p_secret_sealed text, p_previous_expires_in_seconds integer) FROM PUBLIC;
GRANT ALL ON FUNCTION api.webhook_endpoint_rotate(p_id text, p_secret_sealed text, p_previous_expires_in_seconds integer) TO svc_runtime;

-- acl api.FUNCTION webhook_endpoint_set_status(p_id text, p_status text, p_verified boolean)

REVOKE ALL ON FUNCTION api.webhook_endpoint_set_status(p_id text, p_status text, p_verified boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.webhook_endpoint_set_status(p_id text, p_status text, p_verified boolean) TO svc_runtime;

-- acl api.FUNCTION webhook_endpoint_test(p_endpoint text)

REVOKE ALL ON FUNCTION api.webhook_endpoint_test(p_endpoint text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.webhook_endpoint_test(p_endpoint text) TO svc_runtime;
GRANT ALL ON FUNCTION api.webhook_endpoint_test(p_endpoint text) TO svc_api;

-- acl api.FUNCTION webhook_endpoint_update(p_id text, p_if_match integer[], p_patch jsonb, p_verified_url text)

REVOKE ALL ON FUNCTION api.webhook_endpoint_update(p_id text, p_if_match integer[], p_patch jsonb, p_verified_url text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.webhook_endpoint_update(p_id text, p_if_match integer[], p_patch jsonb, p_verified_url text) TO svc_runtime;

-- acl app.TABLE webhook_endpoints

GRANT SELECT,INSERT ON TABLE app.webhook_endpoints TO svc_api;

-- acl app.COLUMN webhook_endpoints.url

GRANT UPDATE(url) ON TABLE app.webhook_endpoints TO svc_api;

-- acl app.COLUMN webhook_endpoints.events

GRANT UPDATE(events) ON TABLE app.webhook_endpoints TO svc_api;

-- acl app.COLUMN webhook_endpoints.description

GRANT UPDATE(description) ON TABLE app.webhook_endpoints TO svc_api;

-- acl app.COLUMN webhook_endpoints.status

GRANT UPDATE(status) ON TABLE app.webhook_endpoints TO svc_api;

-- acl app.COLUMN webhook_endpoints.disabled_reason

GRANT UPDATE(disabled_reason) ON TABLE app.webhook_endpoints TO svc_api;

-- acl app.COLUMN webhook_endpoints.secret_sealed

GRANT UPDATE(secret_sealed) ON TABLE app.webhook_endpoints TO svc_api;

-- acl app.COLUMN webhook_endpoints.previous_secret_sealed

GRANT UPDATE(previous_secret_sealed) ON TABLE app.webhook_endpoints TO svc_api;

-- acl app.COLUMN webhook_endpoints.previous_secret_expires_at

GRANT UPDATE(previous_secret_expires_at) ON TABLE app.webhook_endpoints TO svc_api;

-- acl app.COLUMN webhook_endpoints.consecutive_failures

GRANT UPDATE(consecutive_failures) ON TABLE app.webhook_endpoints TO svc_api;

-- acl app.COLUMN webhook_endpoints.failing_since

GRANT UPDATE(failing_since) ON TABLE app.webhook_endpoints TO svc_api;

-- acl api.TABLE webhook_endpoints

GRANT SELECT ON TABLE api.webhook_endpoints TO svc_runtime;

-- acl api.FUNCTION webhook_endpoints(p_id text)

REVOKE ALL ON FUNCTION api.webhook_endpoints(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.webhook_endpoints(p_id text) TO svc_runtime;

-- acl app_private.FUNCTION begin_delivery_context(p_organization_id text, p_client_id text)

REVOKE ALL ON FUNCTION app_private.begin_delivery_context(p_organization_id text, p_client_id text) FROM PUBLIC;

-- acl app_private.FUNCTION emit_event(p_org text, p_type text, p_resource_type text, p_resource_id text, p_version integer, p_target_endpoint text)

REVOKE ALL ON FUNCTION app_private.emit_event(p_org text, p_type text, p_resource_type text, p_resource_id text, p_version integer, p_target_endpoint text) FROM PUBLIC;

-- acl app_private.FUNCTION event_resource_visible(p_type text, p_resource_type text, p_resource_id text)

REVOKE ALL ON FUNCTION app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text) TO svc_runtime;

-- acl app_private.FUNCTION job_outbox_drain()

REVOKE ALL ON FUNCTION app_private.job_outbox_drain() FROM PUBLIC;

-- acl app_private.FUNCTION purge_webhook_history(p_older_than interval)

REVOKE ALL ON FUNCTION app_private.purge_webhook_history(p_older_than interval) FROM PUBLIC;

-- acl app_private.FUNCTION queue_job(p_organization_id text, p_task text, p_payload json, p_job_key text, p_max_attempts integer, p_run_at timestamp with time zone)

REVOKE ALL ON FUNCTION app_private.queue_job(p_organization_id text, p_task text, p_payload json, p_job_key text, p_max_attempts integer, p_run_at timestamp with time zone) FROM PUBLIC;

-- acl app_private.FUNCTION tg__emit_event()

REVOKE ALL ON FUNCTION app_private.tg__emit_event() FROM PUBLIC;

-- acl app_private.FUNCTION tg_webhook_deliveries__replay_of()

REVOKE ALL ON FUNCTION app_private.tg_webhook_deliveries__replay_of() FROM PUBLIC;

-- acl app_private.FUNCTION tg_webhook_endpoints__check_events()

REVOKE ALL ON FUNCTION app_private.tg_webhook_endpoints__check_events() FROM PUBLIC;

-- acl app_private.FUNCTION tg_webhook_endpoints__limit()

REVOKE ALL ON FUNCTION app_private.tg_webhook_endpoints__limit() FROM PUBLIC;

-- acl app_private.FUNCTION webhook_cancel(p_organization_id text, p_delivery text, p_reason text)

REVOKE ALL ON FUNCTION app_private.webhook_cancel(p_organization_id text, p_delivery text, p_reason text) FROM PUBLIC;

-- acl app_private.FUNCTION webhook_claim(p_organization_id text, p_delivery text, p_lease_seconds integer)

REVOKE ALL ON FUNCTION app_private.webhook_claim(p_organization_id text, p_delivery text, p_lease_seconds integer) FROM PUBLIC;

-- acl app_private.FUNCTION webhook_endpoint_lock(p_id text, p_if_match integer[])

REVOKE ALL ON FUNCTION app_private.webhook_endpoint_lock(p_id text, p_if_match integer[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.webhook_endpoint_lock(p_id text, p_if_match integer[]) TO svc_api;

-- acl app_private.FUNCTION webhook_endpoint_not_found(p_id text)

REVOKE ALL ON FUNCTION app_private.webhook_endpoint_not_found(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.webhook_endpoint_not_found(p_id text) TO svc_api;

-- acl app_private.FUNCTION webhook_enqueue(p_organization_id text, p_delivery text, p_run_at timestamp with time zone)

REVOKE ALL ON FUNCTION app_private.webhook_enqueue(p_organization_id text, p_delivery text, p_run_at timestamp with time zone) FROM PUBLIC;

-- acl app_private.FUNCTION webhook_fanout(p_organization_id text, p_event text, p_lease_seconds integer)

REVOKE ALL ON FUNCTION app_private.webhook_fanout(p_organization_id text, p_event text, p_lease_seconds integer) FROM PUBLIC;

-- acl app_private.FUNCTION webhook_fanout_any(p_limit integer, p_lease_seconds integer)

REVOKE ALL ON FUNCTION app_private.webhook_fanout_any(p_limit integer, p_lease_seconds integer) FROM PUBLIC;

-- acl app_private.FUNCTION webhook_fanout_batch(p_organization_id text, p_limit integer, p_lease_seconds integer)

REVOKE ALL ON FUNCTION app_private.webhook_fanout_batch(p_organization_id text, p_limit integer, p_lease_seconds integer) FROM PUBLIC;

-- acl app_private.FUNCTION webhook_fanout_event(e app.events, p_lease_seconds integer)

REVOKE ALL ON FUNCTION app_private.webhook_fanout_event(e app.events, p_lease_seconds integer) FROM PUBLIC;

-- acl app_private.FUNCTION webhook_fanout_organizations(p_limit integer)

REVOKE ALL ON FUNCTION app_private.webhook_fanout_organizations(p_limit integer) FROM PUBLIC;

-- acl app_private.FUNCTION webhook_record_attempt(p_organization_id text, p_delivery text, p_attempt integer, p_started_at timestamp with time zone, p_duration_ms integer, p_response_status integer, p_error text, p_retryable boolean, p_retry_after_seconds integer, p_scale double precision, p_disable_after integer, p_disable_after_seconds integer)

REVOKE ALL ON FUNCTION app_private.webhook_record_attempt(p_organization_id text, p_delivery text, p_attempt integer, p_started_at timestamp with time zone, p_duration_ms integer, p_response_status integer, p_error text, p_retryable boolean, p_retry_after_seconds integer, p_scale double precision, p_disable_after integer, p_disable_after_seconds integer) FROM PUBLIC;

-- acl app_private.FUNCTION webhook_recover(p_stale interval)

REVOKE ALL ON FUNCTION app_private.webhook_recover(p_stale interval) FROM PUBLIC;

-- acl app_private.FUNCTION webhook_retry_delay(p_attempt integer, p_scale double precision)

REVOKE ALL ON FUNCTION app_private.webhook_retry_delay(p_attempt integer, p_scale double precision) FROM PUBLIC;

-- acl control.FUNCTION notifications_list(p_org text)

REVOKE ALL ON FUNCTION control.notifications_list(p_org text) FROM PUBLIC;

INSERT INTO app_private.event_types (name, resource_type, emitted_by, description, subscribable) VALUES
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

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
