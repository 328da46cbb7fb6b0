-- migrate:up

/** Baseline (issue 38), area 11 of 15. Agents and runs: agent definitions and skills, publications, runs, their events and tool calls.
 * The current definitions that migrations 20261122000100 to 20261205003400 built (git history before
 * the baseline), as pg_dump writes them; db/README.md says how they were made and compared. */
SET LOCAL check_function_bodies = false;
SET LOCAL client_min_messages = warning;
SELECT pg_catalog.set_config('search_path', '', true);

-- function api.agent_blockers(text, text, boolean)

CREATE FUNCTION api.agent_blockers(p_id text, p_subject_member_id text, p_model_available boolean) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  d app_private.agent_definitions;
  v_blockers jsonb := '[]';
  v_skill text;
  v_b jsonb;
begin
  d := app_private.agent_lookup(p_id);
  if not 'api_client' = any (d.accepted_principal_types) then
    v_blockers := v_blockers || jsonb_build_object('code', 'API_PRINCIPAL_NOT_SUPPORTED',
      'message', format('%s accepts %s, not API Clients', p_id, array_to_string(d.accepted_principal_types, ', ')));
  end if;
  if not d.required_roles <@ app.current_roles() then
    v_blockers := v_blockers || jsonb_build_object('code', 'ROLE_REQUIRED',
      'message', format('%s needs the Roles %s', p_id, array_to_string(d.required_roles, ', ')));
  end if;
  if p_subject_member_id is not null and not d.supports_subject then
    v_blockers := v_blockers || jsonb_build_object('code', 'SUBJECT_NOT_SUPPORTED', 'message', format('%s does not act for a subject', p_id));
  end if;
  foreach v_skill in array d.skills loop
    v_b := app_private.skill_blocker(v_skill, p_subject_member_id);
    if v_b is not null then
      v_blockers := v_blockers || v_b;
    end if;
  end loop;
  if d.engine = 'model' and not p_model_available then
    v_blockers := v_blockers || jsonb_build_object('code', 'AGENT_UNAVAILABLE',
      'message', format('%s needs a model provider, and none is configured for this service', p_id));
  end if;
  -- In the order of the spec's checks: principal type, licence level, Roles, subject, connection.
  return coalesce((select jsonb_agg(x.b order by array_position(array['API_PRINCIPAL_NOT_SUPPORTED', 'LICENSE_LEVEL_REQUIRED', 'ROLE_REQUIRED',
                                      'SUBJECT_NOT_SUPPORTED', 'INTEGRATION_CONNECTION_NOT_READY', 'AGENT_UNAVAILABLE'], x.b ->> 'code'), x.ord)
                     from jsonb_array_elements(v_blockers) with ordinality x (b, ord)), '[]');
end
$$;

ALTER FUNCTION api.agent_blockers(p_id text, p_subject_member_id text, p_model_available boolean) OWNER TO svc_api;

-- function api.agent_get(text)

CREATE FUNCTION api.agent_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  d app_private.agent_definitions := app_private.agent_lookup(p_id);
begin
  if not 'api_client' = any (d.accepted_principal_types) then
    perform app_private.raise('SVR04', 'API_PRINCIPAL_NOT_SUPPORTED',
      format('%s accepts %s, not API Clients', p_id, array_to_string(d.accepted_principal_types, ', ')));
  end if;
  if not d.required_roles <@ app.current_roles() then
    perform app_private.raise('SVR03', 'ROLE_REQUIRED', format('%s needs the Roles %s', p_id, array_to_string(d.required_roles, ', ')));
  end if;
  return query select v.doc, v.version from api.agents v where v.id = p_id;
end
$$;

ALTER FUNCTION api.agent_get(p_id text) OWNER TO svc_api;

-- function api.agent_input_schema(text)

CREATE FUNCTION api.agent_input_schema(p_id text) RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select (app_private.agent_lookup(p_id)).input_schema $$;

ALTER FUNCTION api.agent_input_schema(p_id text) OWNER TO svc_api;

-- function api.agent_readiness(text, jsonb, jsonb, boolean)

CREATE FUNCTION api.agent_readiness(p_id text, p_subject jsonb, p_input_blockers jsonb, p_model_available boolean) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  v_subject text := p_subject ->> 'member_id';
  v_blockers jsonb;
  d app_private.agent_definitions;
begin
  v_blockers := api.agent_blockers(p_id, null, p_model_available);
  select * into d from app_private.agent_definitions x where x.id = p_id;
  if v_subject is not null then
    if not d.supports_subject or exists (select from app_private.agent_skills k where k.name = any (d.skills) and k.subject_dependent and not k.supports_subject) then
      v_blockers := v_blockers || jsonb_build_object('code', 'SUBJECT_NOT_SUPPORTED', 'message', format('%s does not act for a subject', p_id));
    elsif not exists (select from app.members m where m.organization_id = v__organization_id and m.id = v_subject and m.status = 'active') then
      v_blockers := v_blockers || jsonb_build_object('code', 'INVALID_SUBJECT_MEMBER', 'pointer', '/subject/member_id',
        'message', 'subject.member_id must be the exact normalized email of an active member of your organization');
    end if;
  end if;
  v_blockers := v_blockers || coalesce(p_input_blockers, '[]');
  return jsonb_build_object('object', 'agent_readiness', 'agent_id', p_id, 'agent_version', d.version,
    'ready', jsonb_array_length(v_blockers) = 0, 'blockers', v_blockers,
    'skills', coalesce((select jsonb_agg(jsonb_build_object('name', s.name, 'required', s.name = any (d.skills),
                 'available', app_private.skill_blocker(s.name, null) is null) order by s.ord)
              from unnest(d.skills || d.optional_skills) with ordinality s (name, ord)), '[]'));
end
$$;

ALTER FUNCTION api.agent_readiness(p_id text, p_subject jsonb, p_input_blockers jsonb, p_model_available boolean) OWNER TO svc_api;

-- function api.agent_run_create(text, jsonb, jsonb, jsonb, boolean)

CREATE FUNCTION api.agent_run_create(p_id text, p_input jsonb, p_subject jsonb, p_metadata jsonb, p_model_available boolean) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  d app_private.agent_definitions;
  v_subject text := p_subject ->> 'member_id';
  v_blockers jsonb;
  v_first jsonb;
  v_id text;
begin
  select * into d from app_private.agent_definitions x where x.id = p_id;
  v_blockers := api.agent_blockers(p_id, v_subject, p_model_available);
  v_first := v_blockers -> 0;
  if v_first is not null then
    perform app_private.raise(case v_first ->> 'code' when 'SUBJECT_NOT_SUPPORTED' then 'SVV22' when 'LICENSE_LEVEL_REQUIRED' then 'SVR04'
                                                      when 'ROLE_REQUIRED' then 'SVR03' else 'SVC09' end,
                              v_first ->> 'code', v_first ->> 'message', case when v_first ->> 'code' = 'SUBJECT_NOT_SUPPORTED' then '/subject' end);
  end if;
  perform app_private.check_subject(v_subject);
  insert into app.runs (organization_id, kind, agent_id, agent_version, client_id, subject, input, metadata)
  values (v__organization_id, 'agent', d.id, d.version, app.current_client_id(), p_subject, p_input, coalesce(p_metadata, '{}'))
  returning id into v_id;
  perform app_private.queue_agent_run(v_id);
  return (select v.doc from api.runs v where v.id = v_id);
end
$$;

ALTER FUNCTION api.agent_run_create(p_id text, p_input jsonb, p_subject jsonb, p_metadata jsonb, p_model_available boolean) OWNER TO svc_api;

SET LOCAL default_tablespace = '';

SET LOCAL default_table_access_method = heap;

-- table app.agent_publications

CREATE TABLE app.agent_publications (
    organization_id text NOT NULL,
    agent_id text NOT NULL,
    status text NOT NULL,
    changed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT agent_publications_status_valid CHECK ((status = ANY (ARRAY['published'::text, 'unpublished'::text])))
);

ALTER TABLE ONLY app.agent_publications FORCE ROW LEVEL SECURITY;

-- table app_private.agent_definitions

CREATE TABLE app_private.agent_definitions (
    id text NOT NULL,
    name text NOT NULL,
    description text NOT NULL,
    accepted_principal_types text[] NOT NULL,
    required_roles text[] NOT NULL,
    supports_subject boolean NOT NULL,
    input_schema jsonb NOT NULL,
    output_schema jsonb NOT NULL,
    version text NOT NULL,
    engine text NOT NULL,
    skills text[] NOT NULL,
    optional_skills text[] DEFAULT '{}'::text[] NOT NULL,
    CONSTRAINT agent_definitions_engine_valid CHECK ((engine = ANY (ARRAY['builtin'::text, 'model'::text]))),
    CONSTRAINT agent_definitions_id_format CHECK ((id ~ '^agt_[a-z0-9_]+$'::text))
);

-- view api.agents

CREATE VIEW api.agents WITH (security_barrier='true') AS
 SELECT d.id,
    d.required_roles,
    d.accepted_principal_types,
    p.status AS publication,
    jsonb_build_object('object', 'agent', 'id', d.id, 'name', d.name, 'description', d.description, 'status', 'published', 'accepted_principal_types', to_jsonb(d.accepted_principal_types), 'required_roles', to_jsonb(d.required_roles), 'supports_subject', d.supports_subject, 'input_schema', d.input_schema, 'output_schema', d.output_schema, 'version', d.version, 'skills', to_jsonb((d.skills || d.optional_skills))) AS doc,
    NULL::integer AS version,
    d.id AS sort_id
   FROM (app_private.agent_definitions d
     JOIN app.agent_publications p ON (((p.organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (p.agent_id = d.id))))
  WHERE ((p.status = 'published'::text) AND ('api_client'::text = ANY (d.accepted_principal_types)) AND (d.required_roles <@ ( SELECT app.current_roles() AS current_roles)));

ALTER TABLE api.agents OWNER TO svc_api;

-- function api.agents(text)

CREATE FUNCTION api.agents(p_id text DEFAULT NULL::text) RETURNS SETOF api.agents
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.agents where true and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.agents', v_organization_id) || ') v where true and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

ALTER FUNCTION api.agents(p_id text) OWNER TO svc_api;

-- comment api.FUNCTION agents(p_id text)

COMMENT ON FUNCTION api.agents(p_id text) IS 'The rows of view api.agents for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

-- function api.run_cancel(text)

CREATE FUNCTION api.run_cancel(p_id text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  r app.runs;
  v_lock_timeout text := current_setting('lock_timeout');
begin
  if not exists (select from api.runs v where v.id = p_id) then
    perform app_private.raise('SVN04', 'RUN_NOT_FOUND', format('no run %s of your client', p_id));
  end if;
  perform set_config('lock_timeout', '1s', true);
  begin
    r := app_private.run_lock(p_id);
  exception when lock_not_available then
    perform app_private.raise('SVC09', 'RUN_CANCEL_NOT_AVAILABLE', 'the run is applying a tool operation; retry the cancel in a moment');
  end;
  perform set_config('lock_timeout', v_lock_timeout, true);
  if r.status in ('succeeded', 'failed', 'cancelled') then
    perform app_private.raise('SVC09', 'RUN_ALREADY_TERMINAL', format('the run is already %s', r.status));
  end if;
  update app.runs x set status = 'cancelled', required_action = null, completed_at = now()
   where x.organization_id = r.organization_id and x.id = p_id;
  return (select v.doc from api.runs v where v.id = p_id);
end
$$;

ALTER FUNCTION api.run_cancel(p_id text) OWNER TO svc_api;

-- function api.run_events_after(text, integer, integer)

CREATE FUNCTION api.run_events_after(p_id text, p_after integer, p_limit integer) RETURNS TABLE(seq integer, type text, data jsonb, created_at text, terminal boolean)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  r app.runs;
begin
  select x.* into r from app.runs x where x.organization_id = v__organization_id and x.id = p_id;
  if not found then
    perform app_private.raise('SVN04', 'RUN_NOT_FOUND', format('no run %s of your client', p_id));
  end if;
  if r.output_purged then
    perform app_private.raise('SVC09', 'RUN_OUTPUT_EXPIRED', 'the run''s events and output are past their retention; the run itself remains');
  end if;
  return query
    select e.seq, e.type, e.data, app_private.iso_timestamp(e.created_at), e.type in ('run.completed', 'run.failed', 'run.cancelled')
      from app.run_events e
     where e.organization_id = r.organization_id and e.run_id = p_id and e.seq > p_after
     order by e.seq limit p_limit;
end
$$;

ALTER FUNCTION api.run_events_after(p_id text, p_after integer, p_limit integer) OWNER TO svc_api;

-- function api.run_get(text)

CREATE FUNCTION api.run_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
begin
  return query select v.doc, v.version from api.runs v where v.id = p_id;
end
$$;

ALTER FUNCTION api.run_get(p_id text) OWNER TO svc_api;

-- function api.run_submit_action(text, text, jsonb)

CREATE FUNCTION api.run_submit_action(p_id text, p_action_id text, p_response jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  r app.runs;
begin
  r := app_private.run_lock(p_id);
  if r.status <> 'requires_action' then
    perform app_private.raise('SVC09', 'RUN_NOT_ACTIONABLE', format('the run is %s; actions are accepted only while it requires_action', r.status));
  end if;
  if p_action_id is distinct from r.required_action ->> 'id' then
    perform app_private.raise('SVV22', 'RUN_ACTION_INVALID', format('the run waits for action %s', r.required_action ->> 'id'), '/action_id');
  end if;
  if not coalesce(r.required_action -> 'schema' -> 'properties' -> 'choice' -> 'enum' ? (p_response ->> 'choice'), false) then
    perform app_private.raise('SVV22', 'RUN_ACTION_INVALID', 'response.choice must be one of the choices the action offers', '/response/choice');
  end if;
  update app.runs x set status = 'queued', required_action = null,
         state = x.state || jsonb_build_object('action', jsonb_build_object('id', p_action_id, 'response', p_response))
   where x.organization_id = r.organization_id and x.id = p_id;
  perform app_private.queue_agent_run(p_id);
  return (select v.doc from api.runs v where v.id = p_id);
end
$$;

ALTER FUNCTION api.run_submit_action(p_id text, p_action_id text, p_response jsonb) OWNER TO svc_api;

-- function api.run_wake_key()

CREATE FUNCTION api.run_wake_key() RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select encode(k.key, 'hex') from app_private.run_wake_key k $$;

-- table app.run_tool_calls

CREATE TABLE app.run_tool_calls (
    organization_id text NOT NULL,
    run_id text NOT NULL,
    n integer NOT NULL,
    skill text NOT NULL,
    arguments jsonb NOT NULL,
    status text NOT NULL,
    summary text,
    resources jsonb DEFAULT '[]'::jsonb NOT NULL,
    error_code text,
    conversation_id text,
    started_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    completed_at timestamp with time zone,
    result jsonb,
    client_id text NOT NULL,
    CONSTRAINT run_tool_calls_status_valid CHECK ((status = ANY (ARRAY['started'::text, 'completed'::text, 'failed'::text])))
);

ALTER TABLE ONLY app.run_tool_calls FORCE ROW LEVEL SECURITY;

-- comment app.COLUMN run_tool_calls.result

COMMENT ON COLUMN app.run_tool_calls.result IS 'what a writing skill returned (a repeated call in the run answers it)';

-- table app.runs

CREATE TABLE app.runs (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('run'::text) NOT NULL,
    kind text NOT NULL,
    agent_id text,
    agent_version text,
    conversation_id text,
    client_id text NOT NULL,
    subject jsonb,
    input jsonb NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    status text DEFAULT 'queued'::text NOT NULL,
    output jsonb,
    required_action jsonb,
    error jsonb,
    state jsonb DEFAULT '{}'::jsonb NOT NULL,
    output_purged boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    completed_at timestamp with time zone,
    CONSTRAINT runs_action_iff_requires_action CHECK (((status = 'requires_action'::text) = (required_action IS NOT NULL))),
    CONSTRAINT runs_agent_or_conversation CHECK (((agent_id IS NULL) <> (conversation_id IS NULL))),
    CONSTRAINT runs_completed_iff_terminal CHECK (((status = ANY (ARRAY['succeeded'::text, 'failed'::text, 'cancelled'::text])) = (completed_at IS NOT NULL))),
    CONSTRAINT runs_error_iff_failed CHECK (((status = 'failed'::text) = (error IS NOT NULL))),
    CONSTRAINT runs_kind_valid CHECK ((kind = 'agent'::text)),
    CONSTRAINT runs_output_only_when_succeeded CHECK (((output IS NULL) OR (status = 'succeeded'::text))),
    CONSTRAINT runs_status_valid CHECK ((status = ANY (ARRAY['queued'::text, 'running'::text, 'requires_action'::text, 'succeeded'::text, 'failed'::text, 'cancelled'::text])))
);

ALTER TABLE ONLY app.runs FORCE ROW LEVEL SECURITY;

-- view api.runs

CREATE VIEW api.runs AS
 SELECT r.organization_id,
    r.id,
    r.kind,
    r.status,
    r.agent_id,
    r.conversation_id,
    r.created_at,
    r.output_purged,
    jsonb_build_object('object', 'run', 'id', r.id, 'kind', r.kind, 'status', r.status, 'agent_id', r.agent_id, 'agent_version', r.agent_version, 'conversation_id', r.conversation_id, 'actor', jsonb_build_object('type', 'api_client', 'id', r.client_id), 'subject', r.subject, 'input', r.input, 'metadata', r.metadata, 'output', r.output, 'output_expired', r.output_purged, 'required_action', r.required_action, 'error', r.error, 'tool_operations', COALESCE(( SELECT jsonb_agg(jsonb_build_object('skill', c.skill, 'status', c.status, 'summary', c.summary, 'resources', c.resources, 'error_code', c.error_code, 'started_at', app_private.iso_timestamp(c.started_at), 'completed_at', app_private.iso_timestamp(c.completed_at)) ORDER BY c.n) AS jsonb_agg
           FROM app.run_tool_calls c
          WHERE ((c.organization_id = r.organization_id) AND (c.run_id = r.id))), '[]'::jsonb), 'created_at', app_private.iso_timestamp(r.created_at), 'started_at', app_private.iso_timestamp(r.started_at), 'completed_at', app_private.iso_timestamp(r.completed_at)) AS doc,
    NULL::integer AS version
   FROM app.runs r;

ALTER TABLE api.runs OWNER TO svc_api;

-- function api.runs(text)

CREATE FUNCTION api.runs(p_id text DEFAULT NULL::text) RETURNS SETOF api.runs
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.runs where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.runs', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

ALTER FUNCTION api.runs(p_id text) OWNER TO svc_api;

-- comment api.FUNCTION runs(p_id text)

COMMENT ON FUNCTION api.runs(p_id text) IS 'The rows of view api.runs for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

-- function app_private.agent_lookup(text)

CREATE FUNCTION app_private.agent_lookup(p_id text) RETURNS app_private.agent_definitions
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  d app_private.agent_definitions;
  v_status text;
begin
  select x.* into d from app_private.agent_definitions x where x.id = p_id;
  select p.status into v_status from app.agent_publications p where p.organization_id = v__organization_id and p.agent_id = p_id;
  if d.id is null or v_status is null then
    perform app_private.raise('SVN04', 'AGENT_NOT_FOUND', format('no agent %s', p_id));
  end if;
  if v_status <> 'published' then
    perform app_private.raise('SVN04', 'AGENT_NOT_PUBLISHED', format('%s is not published in your organization', p_id));
  end if;
  return d;
end
$$;

ALTER FUNCTION app_private.agent_lookup(p_id text) OWNER TO svc_api;

-- function app_private.chat_skills()

CREATE FUNCTION app_private.chat_skills() RETURNS text[]
    LANGUAGE sql IMMUTABLE
    AS $$ select '{tasks.find_attention,tasks.transition,time.missing_days}'::text[] $$;

-- function app_private.queue_agent_run(text)

CREATE FUNCTION app_private.queue_agent_run(p_run_id text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  perform app_private.queue_job(v__organization_id, 'agent_run', json_build_object('run_id', p_run_id), null, 3);
end
$$;

-- function app_private.run_available_skills(text, text)

CREATE FUNCTION app_private.run_available_skills(p_organization_id text, p_run_id text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  r app.runs;
  v jsonb;
begin
  select x.* into r from app.runs x where x.organization_id = p_organization_id and x.id = p_run_id;
  if not app_private.begin_delivery_context(p_organization_id, r.client_id) then
    return '[]';
  end if;
  select coalesce(jsonb_agg(jsonb_build_object('name', k.name, 'description', k.description, 'parameters', k.parameters_schema) order by k.name), '[]')
    into v
    from app_private.agent_skills k
   where k.name = any (case when r.conversation_id is not null then app_private.chat_skills()
                            else (select d.skills || d.optional_skills from app_private.agent_definitions d where d.id = r.agent_id) end)
     and app_private.skill_blocker(k.name, r.subject ->> 'member_id') is null;
  perform app_private.set_context(null, null, null);
  return v;
end
$$;

-- function app_private.run_event(text, text, text, jsonb)

CREATE FUNCTION app_private.run_event(p_org text, p_run_id text, p_type text, p_data jsonb) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_seq integer;
  v_name text;
  v_pending text;
begin
  -- Callers hold the run's row lock, so this max is not raced.
  v_seq := coalesce((select max(e.seq) from app.run_events e where e.organization_id = p_org and e.run_id = p_run_id), 0) + 1;
  insert into app.run_events (organization_id, run_id, seq, type, data) values (p_org, p_run_id, v_seq, p_type, p_data);
  v_name := app_private.run_wake_name(p_run_id);
  if current_setting('svc.fanout_wake', true) in ('after_commit', 'due') then
    v_pending := nullif(current_setting('svc.run_wake', true), '');
    if v_pending is null then
      perform set_config('svc.run_wake', v_name, true);
    elsif position(v_name in v_pending) = 0 then
      perform set_config('svc.run_wake', v_pending || ',' || v_name, true);
    end if;
  else
    perform pg_notify('svc_run_events', v_name);
  end if;
  return v_seq;
end
$$;

-- function app_private.run_lock(text)

CREATE FUNCTION app_private.run_lock(p_id text) RETURNS app.runs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  r app.runs;
begin
  select x.* into r from app.runs x where x.organization_id = v__organization_id and x.id = p_id for update;
  if not found then
    perform app_private.raise('SVN04', 'RUN_NOT_FOUND', format('no run %s of your client', p_id));
  end if;
  return r;
end
$$;

ALTER FUNCTION app_private.run_lock(p_id text) OWNER TO svc_api;

-- function app_private.run_note(text, text, text, jsonb)

CREATE FUNCTION app_private.run_note(p_organization_id text, p_run_id text, p_type text, p_data jsonb) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  r app.runs;
begin
  select x.* into r from app.runs x where x.organization_id = p_organization_id and x.id = p_run_id for update;
  if not found or r.status <> 'running' or p_type not in ('run.progress', 'run.output.delta') then
    return false;
  end if;
  perform app_private.run_event(p_organization_id, r.id, p_type, p_data);
  return true;
end
$$;

-- function app_private.run_settle(text, text, text, jsonb, jsonb)

CREATE FUNCTION app_private.run_settle(p_organization_id text, p_run_id text, p_outcome text, p_payload jsonb, p_state jsonb) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  r app.runs;
begin
  select x.* into r from app.runs x where x.organization_id = p_organization_id and x.id = p_run_id for update;
  if not found or r.status <> 'running' then
    return coalesce(r.status, 'missing');
  end if;
  if p_outcome = 'requires_action' then
    update app.runs x set status = 'requires_action', required_action = p_payload, state = coalesce(p_state, x.state)
     where x.organization_id = p_organization_id and x.id = r.id;
  elsif p_outcome = 'succeeded' then
    update app.runs x set status = 'succeeded', output = p_payload, completed_at = now()
     where x.organization_id = p_organization_id and x.id = r.id;
  else
    update app.runs x set status = 'failed', error = p_payload, completed_at = now()
     where x.organization_id = p_organization_id and x.id = r.id;
  end if;
  return p_outcome;
end
$$;

-- function app_private.run_start(text, text)

CREATE FUNCTION app_private.run_start(p_organization_id text, p_run_id text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  r app.runs;
  d app_private.agent_definitions;
  -- A value: Citus takes no volatile function inside COALESCE in a write.
  v_now timestamptz := now();
begin
  select x.* into r from app.runs x where x.organization_id = p_organization_id and x.id = p_run_id for update;
  if not found or r.status not in ('queued', 'running') then
    return null;
  end if;
  if r.status = 'queued' then
    update app.runs x set status = 'running', started_at = coalesce(x.started_at, v_now) where x.organization_id = p_organization_id and x.id = r.id;
  end if;
  select * into d from app_private.agent_definitions x where x.id = r.agent_id;
  return jsonb_build_object('id', r.id, 'organization_id', r.organization_id, 'client_id', r.client_id, 'kind', r.kind,
    'agent_id', r.agent_id, 'engine', case when r.conversation_id is not null then 'chat' else d.engine end,
    'input', r.input, 'subject', r.subject, 'state', r.state,
    'output_schema', coalesce(d.output_schema, '{"type":"object","additionalProperties":false,"required":["text"],"properties":{"text":{"type":"string"}}}'),
    'conversation_id', r.conversation_id,
    'tools', coalesce((select jsonb_agg(jsonb_build_object('name', k.name, 'description', k.description, 'parameters', k.parameters_schema) order by k.name)
                         from app_private.agent_skills k
                        where k.name = any (case when r.conversation_id is not null then app_private.chat_skills() else d.skills || d.optional_skills end)), '[]'));
end
$$;

-- function app_private.run_tool(text, text, text, jsonb, jsonb)

CREATE FUNCTION app_private.run_tool(p_organization_id text, p_run_id text, p_skill text, p_args jsonb, p_rejection jsonb DEFAULT NULL::jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  r app.runs;
  d app_private.agent_definitions;
  k app_private.agent_skills;
  v_n integer;
  v_result jsonb;
  v_blocker jsonb;
  v_code text;
  v_detail text;
  v_pub text;
  v_done jsonb;
  v_completed timestamptz;
begin
  select x.* into r from app.runs x where x.organization_id = p_organization_id and x.id = p_run_id for update;
  if not found or r.status <> 'running' then
    return jsonb_build_object('stopped', coalesce(r.status, 'missing'));
  end if;
  select * into d from app_private.agent_definitions x where x.id = r.agent_id;
  select * into k from app_private.agent_skills x where x.name = p_skill;
  p_skill := left(p_skill, 100);
  -- A write already applied in this run with the same arguments is not applied again (a job
  -- retried after its worker died between the tool call's commit and the run's end).
  if k.writes then
    select c.result into v_done from app.run_tool_calls c
     where c.organization_id = p_organization_id and c.run_id = r.id and c.skill = p_skill and c.arguments = p_args
       and c.status = 'completed' and c.result is not null
     order by c.n limit 1;
    if v_done is not null then
      return jsonb_build_object('ok', true, 'result', v_done, 'replayed', true);
    end if;
  end if;
  v_n := coalesce((select max(c.n) from app.run_tool_calls c where c.organization_id = p_organization_id and c.run_id = r.id), 0) + 1;
  insert into app.run_tool_calls (organization_id, run_id, n, skill, arguments, status, conversation_id)
  values (p_organization_id, r.id, v_n, p_skill, p_args, 'started', r.conversation_id);
  perform app_private.run_event(p_organization_id, r.id, 'run.tool.started', jsonb_build_object('tool_call', v_n, 'skill', p_skill));
  select p.status into v_pub from app.agent_publications p where p.organization_id = p_organization_id and p.agent_id = r.agent_id;
  if p_rejection is not null then
    v_blocker := p_rejection;
  elsif k.name is null or not (p_skill = any (case when r.agent_id is null then app_private.chat_skills() else d.skills || d.optional_skills end)) then
    v_blocker := jsonb_build_object('code', 'SKILL_NOT_AVAILABLE', 'message', format('%s is not a skill of this run', p_skill));
  elsif r.agent_id is null then
    -- A chat run has no agent: its checks start with the client's standing.
    if not app_private.begin_delivery_context(p_organization_id, r.client_id) then
      v_blocker := jsonb_build_object('code', 'CLIENT_DISABLED', 'message', 'the API Client can no longer make requests');
    else
      v_blocker := app_private.skill_blocker(p_skill, r.subject ->> 'member_id');
    end if;
  elsif v_pub is distinct from 'published' then
    v_blocker := jsonb_build_object('code', 'AGENT_NOT_PUBLISHED', 'message', format('%s is no longer published in the organization', r.agent_id));
  elsif not 'api_client' = any (d.accepted_principal_types) then
    v_blocker := jsonb_build_object('code', 'API_PRINCIPAL_NOT_SUPPORTED', 'message', format('%s does not accept API Clients', r.agent_id));
  elsif not app_private.begin_delivery_context(p_organization_id, r.client_id) then
    v_blocker := jsonb_build_object('code', 'CLIENT_DISABLED', 'message', 'the API Client can no longer make requests');
  else
    v_blocker := app_private.skill_blocker(p_skill, r.subject ->> 'member_id');
  end if;
  if v_blocker is null then
    begin
      execute 'set local role svc_runtime';
      execute format('select %s($1, $2)', k.function_name) into v_result using p_args, r.subject ->> 'member_id';
      execute 'reset role';
    exception when others then
      get stacked diagnostics v_code = message_text, v_detail = pg_exception_detail;
      -- Our own errors carry a problem code as their message; anything else is summarized, never echoed.
      if v_code !~ '^[A-Z][A-Z_]+$' then
        v_code := 'TOOL_OPERATION_FAILED';
        v_detail := 'the operation could not be completed';
      end if;
      v_blocker := jsonb_build_object('code', v_code, 'message', coalesce(nullif(v_detail, ''), v_code));
    end;
  end if;
  perform app_private.set_context(null, null, null);
  -- A value: Citus takes no volatile function in a write.
  v_completed := clock_timestamp();
  if v_blocker is not null then
    update app.run_tool_calls c set status = 'failed', error_code = v_blocker ->> 'code', summary = v_blocker ->> 'message', completed_at = v_completed
     where c.organization_id = p_organization_id and c.run_id = r.id and c.n = v_n;
    perform app_private.run_event(p_organization_id, r.id, 'run.tool.completed',
      jsonb_build_object('tool_call', v_n, 'skill', p_skill, 'status', 'failed', 'error', jsonb_build_object('code', v_blocker ->> 'code', 'detail', v_blocker ->> 'message')));
    return jsonb_build_object('ok', false, 'error', jsonb_build_object('code', v_blocker ->> 'code', 'detail', v_blocker ->> 'message'));
  end if;
  update app.run_tool_calls c set status = 'completed', summary = v_result ->> 'summary', resources = coalesce(v_result -> 'resources', '[]'),
         result = case when k.writes then v_result end, completed_at = v_completed
   where c.organization_id = p_organization_id and c.run_id = r.id and c.n = v_n;
  perform app_private.run_event(p_organization_id, r.id, 'run.tool.completed',
    jsonb_build_object('tool_call', v_n, 'skill', p_skill, 'status', 'completed', 'summary', v_result ->> 'summary',
                       'resources', coalesce(v_result -> 'resources', '[]')));
  return jsonb_build_object('ok', true, 'result', v_result);
end
$_$;

-- function app_private.run_wake_name(text)

CREATE FUNCTION app_private.run_wake_name(p_run_id text) RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  select left(encode(sha256(k.key || convert_to(p_run_id, 'UTF8')), 'hex'), 32) from app_private.run_wake_key k
$$;

-- function app_private.skill_blocker(text, text)

CREATE FUNCTION app_private.skill_blocker(p_skill text, p_subject_member_id text) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  k app_private.agent_skills;
  v_level text;
  v_ready jsonb;
begin
  select * into k from app_private.agent_skills x where x.name = p_skill;
  select c.license_level into v_level from app.api_clients c where c.organization_id = v__organization_id and c.id = app.current_client_id();
  if k.license_level = 'manager' and v_level is distinct from 'manager' then
    return jsonb_build_object('code', 'LICENSE_LEVEL_REQUIRED', 'skill', p_skill,
      'message', format('the skill %s needs a Manager-level license', p_skill));
  end if;
  if not (k.required_roles && app.current_roles()) then
    return jsonb_build_object('code', 'ROLE_REQUIRED', 'skill', p_skill,
      'message', format('the skill %s needs one of the Roles %s', p_skill, array_to_string(k.required_roles, ', ')));
  end if;
  if p_subject_member_id is not null and k.subject_dependent and not k.supports_subject then
    return jsonb_build_object('code', 'SUBJECT_NOT_SUPPORTED', 'skill', p_skill,
      'message', format('the skill %s does not act for a subject', p_skill));
  end if;
  if k.capability is not null then
    v_ready := api.integration_readiness(k.capability);
    if not (v_ready ->> 'ready')::boolean then
      return jsonb_build_object('code', 'INTEGRATION_CONNECTION_NOT_READY', 'skill', p_skill,
        'message', format('the skill %s needs a ready organization connection offering %s: %s', p_skill, k.capability,
                          v_ready -> 'blockers' -> 0 ->> 'message'));
    end if;
  end if;
  return null;
end
$$;

ALTER FUNCTION app_private.skill_blocker(p_skill text, p_subject_member_id text) OWNER TO svc_api;

-- function app_private.tg_agent_definitions__skills_exist()

CREATE FUNCTION app_private.tg_agent_definitions__skills_exist() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if exists (select from unnest(new.skills || new.optional_skills) s where s not in (select k.name from app_private.agent_skills k)) then
    perform app_private.raise('SVC09', 'CONFLICT', 'an agent names only skills of the catalogue');
  end if;
  return new;
end
$$;

-- function app_private.tg_organizations__publish_agents()

CREATE FUNCTION app_private.tg_organizations__publish_agents() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  insert into app.agent_publications (organization_id, agent_id, status)
  select new.id, d.id, 'published' from app_private.agent_definitions d
  on conflict do nothing;
  return null;
end
$$;

-- function app_private.tg_runs__events()

CREATE FUNCTION app_private.tg_runs__events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_type text;
  v_data jsonb := jsonb_build_object('status', new.status);
  v_seq integer;
begin
  if new.status = old.status then
    return null;
  end if;
  v_type := case new.status when 'running' then 'run.started' when 'succeeded' then 'run.completed' when 'failed' then 'run.failed'
                            when 'requires_action' then 'run.requires_action' when 'cancelled' then 'run.cancelled' end;
  if v_type is null then
    return null;
  end if;
  if new.status = 'requires_action' then
    v_data := v_data || jsonb_build_object('required_action', new.required_action);
  elsif new.status = 'failed' then
    v_data := v_data || jsonb_build_object('error', new.error);
  elsif new.status = 'succeeded' then
    v_data := v_data || jsonb_build_object('output', new.output);
  end if;
  v_seq := app_private.run_event(new.organization_id, new.id, v_type, v_data);
  if v_type in ('run.completed', 'run.failed', 'run.requires_action', 'run.cancelled') then
    perform app_private.emit_event(new.organization_id, v_type, 'run', new.id, v_seq);
  end if;
  return null;
end
$$;

-- function app_private.tg_runs__lifecycle()

CREATE FUNCTION app_private.tg_runs__lifecycle() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if tg_op = 'INSERT' then
    if new.status <> 'queued' then
      perform app_private.raise('SVC09', 'CONFLICT', 'a run starts queued');
    end if;
    return new;
  end if;
  if (new.organization_id, new.id, new.kind, new.agent_id, new.agent_version, new.conversation_id, new.client_id, new.subject, new.input,
      new.metadata, new.created_at)
     is distinct from (old.organization_id, old.id, old.kind, old.agent_id, old.agent_version, old.conversation_id, old.client_id, old.subject,
      old.input, old.metadata, old.created_at) then
    perform app_private.raise('SVC09', 'CONFLICT', 'a run''s request never changes');
  end if;
  if old.status in ('succeeded', 'failed', 'cancelled') then
    if new.status = old.status and new.output_purged and not old.output_purged and new.output is null
       and (new.required_action, new.error, new.state, new.started_at, new.completed_at)
           is not distinct from (old.required_action, old.error, old.state, old.started_at, old.completed_at) then
      return new;
    end if;
    if (new.*) is not distinct from (old.*) then
      return new;
    end if;
    perform app_private.raise('SVC09', 'RUN_ALREADY_TERMINAL', format('the run is %s; a finished run never changes', old.status));
  end if;
  if new.status <> old.status and not ((old.status, new.status) in (
       ('queued', 'running'), ('running', 'succeeded'), ('running', 'failed'), ('running', 'requires_action'),
       ('requires_action', 'queued'), ('queued', 'cancelled'), ('running', 'cancelled'), ('requires_action', 'cancelled'))) then
    perform app_private.raise('SVC09', 'CONFLICT', format('a run does not move from %s to %s', old.status, new.status));
  end if;
  if new.output_purged then
    perform app_private.raise('SVC09', 'CONFLICT', 'only a finished run''s output expires');
  end if;
  return new;
end
$$;

-- function control.agent_set_published(text, text, boolean)

CREATE FUNCTION control.agent_set_published(p_org text, p_agent text, p_published boolean) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_now timestamptz := now();  -- Citus takes no function call in ON CONFLICT DO UPDATE
begin
  if not exists (select from app.organizations o where o.id = p_org) then
    perform app_private.raise('SVN01', 'ORGANIZATION_NOT_FOUND', format('no organization %s', p_org));
  end if;
  if not exists (select from app_private.agent_definitions d where d.id = p_agent) then
    perform app_private.raise('SVN01', 'AGENT_NOT_FOUND', format('no agent %s in the catalogue', p_agent));
  end if;
  insert into app.agent_publications (organization_id, agent_id, status)
  values (p_org, p_agent, case when p_published then 'published' else 'unpublished' end)
  on conflict (organization_id, agent_id) do update set status = excluded.status, changed_at = v_now;
  return case when p_published then 'published' else 'unpublished' end;
end
$$;

-- function control.purge_expired_runs(interval)

CREATE FUNCTION control.purge_expired_runs(p_retention interval) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_runs text[];
begin
  with gone as (update app.runs r set output = null, output_purged = true
                 where not r.output_purged and r.completed_at < now() - p_retention returning r.organization_id, r.id)
  select array_agg(id) into v_runs from gone;
  delete from app.run_events e where e.run_id = any (coalesce(v_runs, '{}'));
  return coalesce(cardinality(v_runs), 0);
end
$$;

-- function skills.invoices_billable_time(jsonb, text)

CREATE FUNCTION skills.invoices_billable_time(p_args jsonb, p_subject text) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_lines jsonb;
  v_entries jsonb;
begin
  if not exists (select from api.projects p where p.id = p_args ->> 'project_id') then
    perform app_private.raise('SVN04', 'PROJECT_NOT_FOUND', format('no project %s in your organization', p_args ->> 'project_id'));
  end if;
  select coalesce(jsonb_agg(jsonb_build_object('member_id', g.member_id, 'minutes', g.minutes) order by g.member_id), '[]'),
         coalesce(jsonb_agg(to_jsonb(g.ids)), '[]')
    into v_lines, v_entries
    from (select e.member_id, sum((e.doc ->> 'minutes')::integer)::integer as minutes, array_agg(e.id order by e.id) as ids
            from api.time_entries e
           where e.project_id = p_args ->> 'project_id' and e.work_date between (p_args ->> 'from')::date and (p_args ->> 'to')::date
             and e.deleted_at is null and e.billable and e.status = 'approved'
           group by e.member_id) g;
  return jsonb_build_object('summary', format('%s member(s) with approved billable time', jsonb_array_length(v_lines)),
    'resources', jsonb_build_array(jsonb_build_object('type', 'project', 'id', p_args ->> 'project_id')),
    'data', jsonb_build_object('members', v_lines));
end
$$;

-- function skills.invoices_create_draft(jsonb, text)

CREATE FUNCTION skills.invoices_create_draft(p_args jsonb, p_subject text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_doc jsonb;
begin
  select i.doc into v_doc from api.invoice_create(p_args) i;
  return jsonb_build_object('summary', format('draft invoice %s, total %s %s', v_doc ->> 'id', v_doc ->> 'total', v_doc ->> 'currency'),
    'resources', jsonb_build_array(jsonb_build_object('type', 'invoice', 'id', v_doc ->> 'id')),
    'data', jsonb_build_object('invoice_id', v_doc ->> 'id', 'total', v_doc -> 'total', 'currency', v_doc -> 'currency'));
end
$$;

-- function skills.tasks_assign(jsonb, text)

CREATE FUNCTION skills.tasks_assign(p_args jsonb, p_subject text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_doc jsonb;
begin
  -- expected_version is the If-Match of a confirmed proposal: a task changed since it was read is
  -- refused as updateTask refuses a stale ETag. Without it the assignment replaces what is there now.
  select t.doc into v_doc from api.task_update(p_args ->> 'task_id',
    array[coalesce((p_args ->> 'expected_version')::integer, (select x.version from api.tasks x where x.id = p_args ->> 'task_id'))],
    jsonb_build_object('assignee_member_ids', p_args -> 'assignee_member_ids'), null) t;
  return jsonb_build_object('summary', format('%s assigned to %s', p_args ->> 'task_id',
      (select string_agg(a, ', ') from jsonb_array_elements_text(v_doc -> 'assignee_member_ids') a)),
    'resources', jsonb_build_array(jsonb_build_object('type', 'task', 'id', p_args ->> 'task_id')),
    'data', jsonb_build_object('task_id', p_args ->> 'task_id', 'assignee_member_ids', v_doc -> 'assignee_member_ids'));
end
$$;

-- function skills.tasks_find_attention(jsonb, text)

CREATE FUNCTION skills.tasks_find_attention(p_args jsonb, p_subject text) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  v_project text := p_args ->> 'project_id';
  v_docs jsonb;
  v_tasks jsonb;
begin
  if not exists (select from api.projects p where p.id = v_project) then
    perform app_private.raise('SVN04', 'PROJECT_NOT_FOUND', format('no project %s in your organization', v_project));
  end if;
  select coalesce(jsonb_object_agg(t.id, t.doc), '{}') into v_docs from api.tasks t where t.project_id = v_project and t.archived_at is null;
  with open_tasks as (
    select x.id, v_docs -> x.id as doc, x.status, x.due_at, x.version,
           (select count(*) from app.task_dependencies d
              join app.tasks p on p.organization_id = v__organization_id and p.id = d.predecessor_task_id
              join app.task_workflow_statuses s on s.organization_id = v__organization_id and s.workflow_id = p.workflow_id and s.status = p.status
             where d.organization_id = v__organization_id and d.task_id = x.id and s.category = 'open') as open_predecessors
      from app.tasks x
      join app.task_workflow_statuses s on s.organization_id = v__organization_id and s.workflow_id = x.workflow_id and s.status = x.status
     where x.organization_id = v__organization_id and x.project_id = v_project and v_docs ? x.id and s.category = 'open')
  select coalesce(jsonb_agg(jsonb_build_object('id', o.id, 'name', o.doc ->> 'name', 'status', o.status,
           'due_at', o.doc -> 'due_at', 'assignee_member_ids', coalesce(o.doc -> 'assignee_member_ids', '[]'),
           'transitions', coalesce((select jsonb_agg(tr ->> 'name') from jsonb_array_elements(o.doc -> 'transitions') tr), '[]'),
           'overdue', o.due_at < now(), 'open_predecessors', o.open_predecessors, 'version', o.version) order by o.due_at nulls last, o.id), '[]')
    into v_tasks
    from open_tasks o
   where o.due_at < now() or o.open_predecessors > 0 or o.status = 'blocked';
  return jsonb_build_object('summary', format('%s task(s) of %s need attention', jsonb_array_length(v_tasks), v_project),
    'resources', coalesce((select jsonb_agg(jsonb_build_object('type', 'task', 'id', x ->> 'id')) from jsonb_array_elements(v_tasks) x), '[]'),
    'data', jsonb_build_object('project_id', v_project,
      'manager_member_id', (select p.manager_member_id from api.projects p where p.id = v_project), 'tasks', v_tasks));
end
$$;

ALTER FUNCTION skills.tasks_find_attention(p_args jsonb, p_subject text) OWNER TO svc_api;

-- function skills.tasks_transition(jsonb, text)

CREATE FUNCTION skills.tasks_transition(p_args jsonb, p_subject text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_doc jsonb;
begin
  select t.doc into v_doc from api.task_transition(p_args ->> 'task_id', p_args ->> 'transition', null, p_subject) t;
  return jsonb_build_object('summary', format('%s: %s → %s', p_args ->> 'task_id', p_args ->> 'transition', v_doc ->> 'status'),
    'resources', jsonb_build_array(jsonb_build_object('type', 'task', 'id', p_args ->> 'task_id')),
    'data', jsonb_build_object('task_id', p_args ->> 'task_id', 'status', v_doc ->> 'status'));
end
$$;

-- function skills.time_missing_days(jsonb, text)

CREATE FUNCTION skills.time_missing_days(p_args jsonb, p_subject text) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_from date := (p_args ->> 'from')::date;
  v_to date := (p_args ->> 'to')::date;
  v_members jsonb;
begin
  if v_to < v_from or v_to > v_from + 92 then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'to must be on or after from, and at most 92 days later', '/to');
  end if;
  with days as (
    select d::date as day from generate_series(v_from, v_to, interval '1 day') d where extract(isodow from d) < 6),
  members as (
    select m.id, m.display_name from api.members m
     where m.status = 'active' and (p_subject is null or m.id = p_subject)),
  worked as (
    select distinct e.member_id, e.work_date from api.time_entries e
     where e.work_date between v_from and v_to and e.deleted_at is null)
  select coalesce(jsonb_agg(jsonb_build_object('member_id', x.id, 'display_name', x.display_name, 'missing_dates', x.missing)
                            order by x.id), '[]')
    into v_members
    from (select m.id, m.display_name, jsonb_agg(to_char(d.day, 'YYYY-MM-DD') order by d.day) as missing
            from members m cross join days d
           where not exists (select from worked w where w.member_id = m.id and w.work_date = d.day)
           group by m.id, m.display_name) x;
  return jsonb_build_object('summary', format('%s member(s) with missing time from %s to %s', jsonb_array_length(v_members), v_from, v_to),
    'resources', coalesce((select jsonb_agg(jsonb_build_object('type', 'member', 'id', x ->> 'member_id')) from jsonb_array_elements(v_members) x), '[]'),
    'data', jsonb_build_object('from', v_from, 'to', v_to, 'members', v_members));
end
$$;

-- table app.run_events

CREATE TABLE app.run_events (
    organization_id text NOT NULL,
    run_id text NOT NULL,
    seq integer NOT NULL,
    type text NOT NULL,
    data jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    client_id text NOT NULL,
    CONSTRAINT run_events_type_valid CHECK ((type = ANY (ARRAY['run.started'::text, 'run.progress'::text, 'run.tool.started'::text, 'run.tool.completed'::text, 'run.output.delta'::text, 'run.requires_action'::text, 'run.completed'::text, 'run.failed'::text, 'run.cancelled'::text])))
);

ALTER TABLE ONLY app.run_events FORCE ROW LEVEL SECURITY;

-- table app_private.agent_skills

CREATE TABLE app_private.agent_skills (
    name text NOT NULL,
    description text NOT NULL,
    required_roles text[] NOT NULL,
    license_level text NOT NULL,
    capability text,
    subject_dependent boolean NOT NULL,
    supports_subject boolean NOT NULL,
    writes boolean NOT NULL,
    parameters_schema jsonb NOT NULL,
    function_name text NOT NULL,
    CONSTRAINT agent_skills_license_level_valid CHECK ((license_level = ANY (ARRAY['regular'::text, 'manager'::text]))),
    CONSTRAINT agent_skills_name_format CHECK ((name ~ '^[a-z]+\.[a-z_]+$'::text))
);

-- comment app_private.COLUMN agent_skills.required_roles

COMMENT ON COLUMN app_private.agent_skills.required_roles IS 'one of these Roles is needed (as for an operation)';

-- table app_private.run_wake_key

CREATE TABLE app_private.run_wake_key (
    singleton boolean DEFAULT true NOT NULL,
    key bytea DEFAULT decode(replace(((gen_random_uuid())::text || (gen_random_uuid())::text), '-'::text, ''::text), 'hex'::text) NOT NULL,
    CONSTRAINT run_wake_key_singleton_check CHECK (singleton)
);

-- comment app_private.TABLE run_wake_key

COMMENT ON TABLE app_private.run_wake_key IS 'The key of svc_run_events payloads (244 random bits); one row.';

-- constraint app.agent_publications agent_publications_pkey

ALTER TABLE ONLY app.agent_publications
    ADD CONSTRAINT agent_publications_pkey PRIMARY KEY (organization_id, agent_id);

-- constraint app.run_events run_events_pkey

ALTER TABLE ONLY app.run_events
    ADD CONSTRAINT run_events_pkey PRIMARY KEY (organization_id, run_id, seq);

-- constraint app.run_tool_calls run_tool_calls_pkey

ALTER TABLE ONLY app.run_tool_calls
    ADD CONSTRAINT run_tool_calls_pkey PRIMARY KEY (organization_id, run_id, n);

-- constraint app.runs runs_pkey

ALTER TABLE ONLY app.runs
    ADD CONSTRAINT runs_pkey PRIMARY KEY (organization_id, id);

-- constraint app_private.agent_definitions agent_definitions_pkey

ALTER TABLE ONLY app_private.agent_definitions
    ADD CONSTRAINT agent_definitions_pkey PRIMARY KEY (id);

-- constraint app_private.agent_skills agent_skills_pkey

ALTER TABLE ONLY app_private.agent_skills
    ADD CONSTRAINT agent_skills_pkey PRIMARY KEY (name);

-- constraint app_private.run_wake_key run_wake_key_pkey

ALTER TABLE ONLY app_private.run_wake_key
    ADD CONSTRAINT run_wake_key_pkey PRIMARY KEY (singleton);

-- index app.runs_client_created

CREATE INDEX runs_client_created ON app.runs USING btree (organization_id, client_id, created_at DESC, id DESC);

-- index app.runs_id

CREATE INDEX runs_id ON app.runs USING btree (id);

-- index app.runs_retention

CREATE INDEX runs_retention ON app.runs USING btree (completed_at) WHERE (NOT output_purged);

-- trigger app.run_events _010_client_of_parent

CREATE TRIGGER _010_client_of_parent BEFORE INSERT OR UPDATE OF client_id ON app.run_events FOR EACH ROW EXECUTE FUNCTION app_private.tg__client_of_parent();

-- trigger app.run_tool_calls _010_client_of_parent

CREATE TRIGGER _010_client_of_parent BEFORE INSERT OR UPDATE OF client_id ON app.run_tool_calls FOR EACH ROW EXECUTE FUNCTION app_private.tg__client_of_parent();

-- trigger app.runs _100_lifecycle

CREATE TRIGGER _100_lifecycle BEFORE INSERT OR UPDATE ON app.runs FOR EACH ROW EXECUTE FUNCTION app_private.tg_runs__lifecycle();

-- trigger app.organizations _500_publish_agents

CREATE TRIGGER _500_publish_agents AFTER INSERT ON app.organizations FOR EACH ROW EXECUTE FUNCTION app_private.tg_organizations__publish_agents();

-- trigger app.runs _900_events

CREATE TRIGGER _900_events AFTER UPDATE OF status ON app.runs FOR EACH ROW EXECUTE FUNCTION app_private.tg_runs__events();

-- trigger app_private.agent_definitions _100_skills_exist

CREATE TRIGGER _100_skills_exist BEFORE INSERT OR UPDATE ON app_private.agent_definitions FOR EACH ROW EXECUTE FUNCTION app_private.tg_agent_definitions__skills_exist();

-- fk constraint app.agent_publications agent_publications_agent_id_fkey

ALTER TABLE ONLY app.agent_publications
    ADD CONSTRAINT agent_publications_agent_id_fkey FOREIGN KEY (agent_id) REFERENCES app_private.agent_definitions(id);

-- fk constraint app.agent_publications agent_publications_organization_id_fkey

ALTER TABLE ONLY app.agent_publications
    ADD CONSTRAINT agent_publications_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.run_events run_events_organization_id_run_id_fkey

ALTER TABLE ONLY app.run_events
    ADD CONSTRAINT run_events_organization_id_run_id_fkey FOREIGN KEY (organization_id, run_id) REFERENCES app.runs(organization_id, id) ON DELETE CASCADE;

-- fk constraint app.run_tool_calls run_tool_calls_organization_id_run_id_fkey

ALTER TABLE ONLY app.run_tool_calls
    ADD CONSTRAINT run_tool_calls_organization_id_run_id_fkey FOREIGN KEY (organization_id, run_id) REFERENCES app.runs(organization_id, id) ON DELETE CASCADE;

-- fk constraint app.runs runs_agent_id_fkey

ALTER TABLE ONLY app.runs
    ADD CONSTRAINT runs_agent_id_fkey FOREIGN KEY (agent_id) REFERENCES app_private.agent_definitions(id);

-- fk constraint app.runs runs_organization_id_client_id_fkey

ALTER TABLE ONLY app.runs
    ADD CONSTRAINT runs_organization_id_client_id_fkey FOREIGN KEY (organization_id, client_id) REFERENCES app.api_clients(organization_id, id);

-- fk constraint app.runs runs_organization_id_fkey

ALTER TABLE ONLY app.runs
    ADD CONSTRAINT runs_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- policy app.runs Clients answer and cancel their own runs

CREATE POLICY "Clients answer and cancel their own runs" ON app.runs FOR UPDATE TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id)))) WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- policy app.agent_publications Clients see their organization's publications

CREATE POLICY "Clients see their organization's publications" ON app.agent_publications FOR SELECT TO svc_api USING ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));

-- policy app.runs Clients see their own runs

CREATE POLICY "Clients see their own runs" ON app.runs FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- policy app.runs Clients start runs

CREATE POLICY "Clients start runs" ON app.runs FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- policy app.run_events Events are readable with their run

CREATE POLICY "Events are readable with their run" ON app.run_events FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- policy app.run_tool_calls Tool calls are readable with their run

CREATE POLICY "Tool calls are readable with their run" ON app.run_tool_calls FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- row security app.agent_publications

ALTER TABLE app.agent_publications ENABLE ROW LEVEL SECURITY;

-- row security app.run_events

ALTER TABLE app.run_events ENABLE ROW LEVEL SECURITY;

-- row security app.run_tool_calls

ALTER TABLE app.run_tool_calls ENABLE ROW LEVEL SECURITY;

-- row security app.runs

ALTER TABLE app.runs ENABLE ROW LEVEL SECURITY;

-- acl api.FUNCTION agent_blockers(p_id text, p_subject_member_id text, p_model_available boolean)

REVOKE ALL ON FUNCTION api.agent_blockers(p_id text, p_subject_member_id text, p_model_available boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.agent_blockers(p_id text, p_subject_member_id text, p_model_available boolean) TO svc_runtime;

-- acl api.FUNCTION agent_get(p_id text)

REVOKE ALL ON FUNCTION api.agent_get(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.agent_get(p_id text) TO svc_runtime;

-- acl api.FUNCTION agent_input_schema(p_id text)

REVOKE ALL ON FUNCTION api.agent_input_schema(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.agent_input_schema(p_id text) TO svc_runtime;

-- acl api.FUNCTION agent_readiness(p_id text, p_subject jsonb, p_input_blockers jsonb, p_model_available boolean)

REVOKE ALL ON FUNCTION api.agent_readiness(p_id text, p_subject jsonb, p_input_blockers jsonb, p_model_available boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.agent_readiness(p_id text, p_subject jsonb, p_input_blockers jsonb, p_model_available boolean) TO svc_runtime;

-- acl api.FUNCTION agent_run_create(p_id text, p_input jsonb, p_subject jsonb, p_metadata jsonb, p_model_available boolean)

REVOKE ALL ON FUNCTION api.agent_run_create(p_id text, p_input jsonb, p_subject jsonb, p_metadata jsonb, p_model_available boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.agent_run_create(p_id text, p_input jsonb, p_subject jsonb, p_metadata jsonb, p_model_available boolean) TO svc_runtime;

-- acl app.TABLE agent_publications

GRANT SELECT ON TABLE app.agent_publications TO svc_api;

-- acl app_private.TABLE agent_definitions

GRANT SELECT ON TABLE app_private.agent_definitions TO svc_api;

-- acl api.TABLE agents

GRANT SELECT ON TABLE api.agents TO svc_runtime;

-- acl api.FUNCTION agents(p_id text)

REVOKE ALL ON FUNCTION api.agents(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.agents(p_id text) TO svc_runtime;

-- acl api.FUNCTION run_cancel(p_id text)

REVOKE ALL ON FUNCTION api.run_cancel(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.run_cancel(p_id text) TO svc_runtime;

-- acl api.FUNCTION run_events_after(p_id text, p_after integer, p_limit integer)

REVOKE ALL ON FUNCTION api.run_events_after(p_id text, p_after integer, p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION api.run_events_after(p_id text, p_after integer, p_limit integer) TO svc_runtime;

-- acl api.FUNCTION run_get(p_id text)

REVOKE ALL ON FUNCTION api.run_get(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.run_get(p_id text) TO svc_runtime;

-- acl api.FUNCTION run_submit_action(p_id text, p_action_id text, p_response jsonb)

REVOKE ALL ON FUNCTION api.run_submit_action(p_id text, p_action_id text, p_response jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION api.run_submit_action(p_id text, p_action_id text, p_response jsonb) TO svc_runtime;

-- acl api.FUNCTION run_wake_key()

REVOKE ALL ON FUNCTION api.run_wake_key() FROM PUBLIC;
GRANT ALL ON FUNCTION api.run_wake_key() TO svc_runtime;

-- acl app.TABLE run_tool_calls

GRANT SELECT ON TABLE app.run_tool_calls TO svc_api;

-- acl app.TABLE runs

GRANT SELECT,INSERT ON TABLE app.runs TO svc_api;

-- acl app.COLUMN runs.status

GRANT UPDATE(status) ON TABLE app.runs TO svc_api;

-- acl app.COLUMN runs.required_action

GRANT UPDATE(required_action) ON TABLE app.runs TO svc_api;

-- acl app.COLUMN runs.state

GRANT UPDATE(state) ON TABLE app.runs TO svc_api;

-- acl app.COLUMN runs.completed_at

GRANT UPDATE(completed_at) ON TABLE app.runs TO svc_api;

-- acl api.TABLE runs

GRANT SELECT ON TABLE api.runs TO svc_runtime;

-- acl api.FUNCTION runs(p_id text)

REVOKE ALL ON FUNCTION api.runs(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.runs(p_id text) TO svc_runtime;

-- acl app_private.FUNCTION agent_lookup(p_id text)

REVOKE ALL ON FUNCTION app_private.agent_lookup(p_id text) FROM PUBLIC;

-- acl app_private.FUNCTION chat_skills()

REVOKE ALL ON FUNCTION app_private.chat_skills() FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.chat_skills() TO svc_api;

-- acl app_private.FUNCTION queue_agent_run(p_run_id text)

REVOKE ALL ON FUNCTION app_private.queue_agent_run(p_run_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.queue_agent_run(p_run_id text) TO svc_api;

-- acl app_private.FUNCTION run_available_skills(p_organization_id text, p_run_id text)

REVOKE ALL ON FUNCTION app_private.run_available_skills(p_organization_id text, p_run_id text) FROM PUBLIC;

-- acl app_private.FUNCTION run_event(p_org text, p_run_id text, p_type text, p_data jsonb)

REVOKE ALL ON FUNCTION app_private.run_event(p_org text, p_run_id text, p_type text, p_data jsonb) FROM PUBLIC;

-- acl app_private.FUNCTION run_lock(p_id text)

REVOKE ALL ON FUNCTION app_private.run_lock(p_id text) FROM PUBLIC;

-- acl app_private.FUNCTION run_note(p_organization_id text, p_run_id text, p_type text, p_data jsonb)

REVOKE ALL ON FUNCTION app_private.run_note(p_organization_id text, p_run_id text, p_type text, p_data jsonb) FROM PUBLIC;

-- acl app_private.FUNCTION run_settle(p_organization_id text, p_run_id text, p_outcome text, p_payload jsonb, p_state jsonb)

REVOKE ALL ON FUNCTION app_private.run_settle(p_organization_id text, p_run_id text, p_outcome text, p_payload jsonb, p_state jsonb) FROM PUBLIC;

-- acl app_private.FUNCTION run_start(p_organization_id text, p_run_id text)

REVOKE ALL ON FUNCTION app_private.run_start(p_organization_id text, p_run_id text) FROM PUBLIC;

-- acl app_private.FUNCTION run_tool(p_organization_id text, p_run_id text, p_skill text, p_args jsonb, p_rejection jsonb)

REVOKE ALL ON FUNCTION app_private.run_tool(p_organization_id text, p_run_id text, p_skill text, p_args jsonb, p_rejection jsonb) FROM PUBLIC;

-- acl app_private.FUNCTION run_wake_name(p_run_id text)

REVOKE ALL ON FUNCTION app_private.run_wake_name(p_run_id text) FROM PUBLIC;

-- acl app_private.FUNCTION skill_blocker(p_skill text, p_subject_member_id text)

REVOKE ALL ON FUNCTION app_private.skill_blocker(p_skill text, p_subject_member_id text) FROM PUBLIC;

-- acl app_private.FUNCTION tg_agent_definitions__skills_exist()

REVOKE ALL ON FUNCTION app_private.tg_agent_definitions__skills_exist() FROM PUBLIC;

-- acl app_private.FUNCTION tg_organizations__publish_agents()

REVOKE ALL ON FUNCTION app_private.tg_organizations__publish_agents() FROM PUBLIC;

-- acl app_private.FUNCTION tg_runs__events()

REVOKE ALL ON FUNCTION app_private.tg_runs__events() FROM PUBLIC;

-- acl app_private.FUNCTION tg_runs__lifecycle()

REVOKE ALL ON FUNCTION app_private.tg_runs__lifecycle() FROM PUBLIC;

-- acl control.FUNCTION agent_set_published(p_org text, p_agent text, p_published boolean)

REVOKE ALL ON FUNCTION control.agent_set_published(p_org text, p_agent text, p_published boolean) FROM PUBLIC;

-- acl control.FUNCTION purge_expired_runs(p_retention interval)

REVOKE ALL ON FUNCTION control.purge_expired_runs(p_retention interval) FROM PUBLIC;

-- acl skills.FUNCTION invoices_billable_time(p_args jsonb, p_subject text)

REVOKE ALL ON FUNCTION skills.invoices_billable_time(p_args jsonb, p_subject text) FROM PUBLIC;
GRANT ALL ON FUNCTION skills.invoices_billable_time(p_args jsonb, p_subject text) TO svc_runtime;

-- acl skills.FUNCTION invoices_create_draft(p_args jsonb, p_subject text)

REVOKE ALL ON FUNCTION skills.invoices_create_draft(p_args jsonb, p_subject text) FROM PUBLIC;
GRANT ALL ON FUNCTION skills.invoices_create_draft(p_args jsonb, p_subject text) TO svc_runtime;

-- acl skills.FUNCTION tasks_assign(p_args jsonb, p_subject text)

REVOKE ALL ON FUNCTION skills.tasks_assign(p_args jsonb, p_subject text) FROM PUBLIC;
GRANT ALL ON FUNCTION skills.tasks_assign(p_args jsonb, p_subject text) TO svc_runtime;

-- acl skills.FUNCTION tasks_find_attention(p_args jsonb, p_subject text)

REVOKE ALL ON FUNCTION skills.tasks_find_attention(p_args jsonb, p_subject text) FROM PUBLIC;
GRANT ALL ON FUNCTION skills.tasks_find_attention(p_args jsonb, p_subject text) TO svc_runtime;

-- acl skills.FUNCTION tasks_transition(p_args jsonb, p_subject text)

REVOKE ALL ON FUNCTION skills.tasks_transition(p_args jsonb, p_subject text) FROM PUBLIC;
GRANT ALL ON FUNCTION skills.tasks_transition(p_args jsonb, p_subject text) TO svc_runtime;

-- acl skills.FUNCTION time_missing_days(p_args jsonb, p_subject text)

REVOKE ALL ON FUNCTION skills.time_missing_days(p_args jsonb, p_subject text) FROM PUBLIC;
GRANT ALL ON FUNCTION skills.time_missing_days(p_args jsonb, p_subject text) TO svc_runtime;

-- acl app.TABLE run_events

GRANT SELECT ON TABLE app.run_events TO svc_api;

-- acl app_private.TABLE agent_skills

GRANT SELECT ON TABLE app_private.agent_skills TO svc_api;

INSERT INTO app_private.agent_skills (name, description, required_roles, license_level, capability, subject_dependent, supports_subject, writes, parameters_schema, function_name) VALUES
	('tasks.transition', 'Applies a transition the task''s workflow offers (transitionTask).', '{manager}', 'manager', NULL, true, true, true, '{"type": "object", "required": ["task_id", "transition"], "properties": {"task_id": {"type": "string", "pattern": "^tsk_[A-Za-z0-9]{1,64}$"}, "transition": {"type": "string", "maxLength": 100, "minLength": 1}}, "additionalProperties": false}', 'skills.tasks_transition'),
	('time.missing_days', 'Working days of a period on which active members (or the subject member) recorded no time.', '{manager}', 'regular', NULL, true, true, false, '{"type": "object", "required": ["from", "to"], "properties": {"to": {"type": "string", "format": "date"}, "from": {"type": "string", "format": "date"}}, "additionalProperties": false}', 'skills.time_missing_days'),
	('invoices.billable_time', 'Approved billable minutes per member of a project in a period.', '{finance}', 'manager', NULL, false, false, false, '{"type": "object", "required": ["project_id", "from", "to"], "properties": {"to": {"type": "string", "format": "date"}, "from": {"type": "string", "format": "date"}, "project_id": {"type": "string", "pattern": "^prj_[A-Za-z0-9]{1,64}$"}}, "additionalProperties": false}', 'skills.invoices_billable_time'),
	('invoices.create_draft', 'Creates a draft invoice (createInvoice) for export to the organization''s accounting system.', '{finance}', 'manager', 'invoice.export', false, false, true, '{"type": "object", "required": ["customer_id", "lines"], "properties": {"lines": {"type": "array", "maxItems": 100, "minItems": 1}, "currency": {"type": "string"}, "customer_id": {"type": "string"}}}', 'skills.invoices_create_draft'),
	('tasks.find_attention', 'Open tasks of a project that are overdue or blocked, with the transitions each offers.', '{member,manager}', 'regular', NULL, false, false, false, '{"type": "object", "required": ["project_id"], "properties": {"project_id": {"type": "string", "pattern": "^prj_[A-Za-z0-9]{1,64}$"}}, "additionalProperties": false}', 'skills.tasks_find_attention'),
	('tasks.assign', 'Replaces a task''s assignees (updateTask).', '{manager}', 'manager', NULL, false, false, true, '{"type": "object", "required": ["task_id", "assignee_member_ids"], "properties": {"task_id": {"type": "string", "pattern": "^tsk_[A-Za-z0-9]{1,64}$"}, "expected_version": {"type": "integer", "minimum": 1}, "assignee_member_ids": {"type": "array", "items": {"type": "string", "maxLength": 320}, "maxItems": 20}}, "additionalProperties": false}', 'skills.tasks_assign');

INSERT INTO app_private.agent_definitions (id, name, description, accepted_principal_types, required_roles, supports_subject, input_schema, output_schema, version, engine, skills, optional_skills) VALUES
	('agt_echo', 'Echo', 'Returns its input as its output, with one progress event: a check of your run, stream and webhook handling. Performs nothing.', '{api_client,member}', '{}', false, '{"type": "object", "properties": {"message": {"type": "string", "maxLength": 1000}}, "additionalProperties": false}', '{"type": "object", "required": ["echo"], "properties": {"echo": {"type": "object"}}, "additionalProperties": false}', '1.0.0', 'builtin', '{}', '{}'),
	('agt_task_triage', 'Task triage', 'Finds a project''s overdue and blocked tasks and proposes transitions (block, unblock) and reassignments to the project''s manager; applies the ones you confirm through requires_action.', '{api_client,member}', '{manager}', false, '{"type": "object", "required": ["project_id"], "properties": {"project_id": {"type": "string", "pattern": "^prj_[A-Za-z0-9]{1,64}$"}}, "additionalProperties": false}', '{"type": "object", "required": ["project_id", "proposals", "applied", "failed", "dismissed"], "properties": {"failed": {"type": "array"}, "applied": {"type": "array"}, "dismissed": {"type": "boolean"}, "proposals": {"type": "array"}, "project_id": {"type": "string"}}, "additionalProperties": false}', '1.0.0', 'builtin', '{tasks.find_attention,tasks.transition,tasks.assign}', '{}'),
	('agt_missing_time', 'Missing time', 'Reports the working days (Monday to Friday) of a period on which active members, or the subject member, recorded no time.', '{api_client,member}', '{manager}', true, '{"type": "object", "required": ["from", "to"], "properties": {"to": {"type": "string", "format": "date"}, "from": {"type": "string", "format": "date"}}, "additionalProperties": false}', '{"type": "object", "required": ["from", "to", "members"], "properties": {"to": {"type": "string"}, "from": {"type": "string"}, "members": {"type": "array", "items": {"type": "object", "required": ["member_id", "missing_dates"]}}}, "additionalProperties": false}', '1.0.0', 'builtin', '{time.missing_days}', '{}'),
	('agt_invoice_draft', 'Invoice draft', 'Drafts an invoice for a customer from a project''s approved billable time in a period at an hourly rate; creates it only after you confirm the lines through requires_action.', '{api_client,member}', '{finance}', false, '{"type": "object", "required": ["customer_id", "project_id", "from", "to", "hourly_rate"], "properties": {"to": {"type": "string", "format": "date"}, "from": {"type": "string", "format": "date"}, "currency": {"type": "string", "pattern": "^[A-Z]{3}$"}, "project_id": {"type": "string", "pattern": "^prj_[A-Za-z0-9]{1,64}$"}, "customer_id": {"type": "string", "pattern": "^cus_[A-Za-z0-9]{1,64}$"}, "hourly_rate": {"type": "string", "pattern": "^[0-9]{1,12}(\\.[0-9]{1,4})?$"}}, "additionalProperties": false}', '{"type": "object", "required": ["lines", "invoice_id"], "properties": {"lines": {"type": "array"}, "total": {"type": ["string", "null"]}, "currency": {"type": ["string", "null"]}, "invoice_id": {"type": ["string", "null"]}}, "additionalProperties": false}', '1.0.0', 'builtin', '{invoices.billable_time,invoices.create_draft}', '{}'),
	('agt_assistant', 'Assistant', 'A model-backed assistant that answers a prompt and may use the task and time skills your Roles allow. Needs a model provider (SVC_MODEL_URL).', '{api_client,member}', '{}', false, '{"type": "object", "required": ["prompt"], "properties": {"prompt": {"type": "string", "maxLength": 8000, "minLength": 1}}, "additionalProperties": false}', '{"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}, "additionalProperties": false}', '1.0.0', 'model', '{}', '{tasks.find_attention,tasks.transition,time.missing_days}'),
	('agt_timesheet_coach', 'Timesheet coach', 'Helps a named member complete their own timesheet; for members in the web app, not for API Clients.', '{member}', '{member}', true, '{"type": "object", "properties": {}}', '{"type": "object"}', '1.0.0', 'builtin', '{}', '{}');

-- The key of svc_run_events payloads (random, one row).
insert into app_private.run_wake_key default values;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
