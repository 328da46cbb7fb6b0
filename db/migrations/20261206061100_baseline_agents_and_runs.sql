-- migrate:up

/** The baseline, 11 of 16. Agents and runs: agent definitions and skills, publications, runs, their events and tool calls.
 * Laid out by table: each table, then its keys and indexes, row security and policies, triggers
 * and their functions, and grants; then the area's views and commands. db/README.md, "The
 * baseline", says how it was made and proved equal to the migrations it replaced. */
set local check_function_bodies = false;
set local client_min_messages = warning;
set local search_path = '';

-- While this file runs, the owners of its functions and views may create in the schemas (`alter … owner to`
-- a role needs it when the migrating role is not a superuser); taken back at its end.
grant create on schema api, app, app_private, control, reporting, skills to svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- function app_private.chat_skills()

create function app_private.chat_skills() returns text[]
    language sql immutable
    as $$ select '{tasks.find_attention,tasks.transition,time.missing_days}'::text[] $$;

alter function app_private.chat_skills() owner to svc_owner;

revoke all on function app_private.chat_skills() from public;
grant execute on function app_private.chat_skills() to svc_api;
grant execute on function app_private.chat_skills() to svc_worker;
grant execute on function app_private.chat_skills() to svc_admin;

-- function app_private.queue_agent_run(text)

create function app_private.queue_agent_run(p_run_id text) returns void
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  perform app_private.queue_job(v__organization_id, 'agent_run', json_build_object('run_id', p_run_id), null, 3);
end
$$;

alter function app_private.queue_agent_run(p_run_id text) owner to svc_owner;

comment on function app_private.queue_agent_run(p_run_id text) is 'Queues the agent_run job (at most 3 attempts) of run p_run_id for the request''s organization through app_private.queue_job: graphile-worker on one server, the organization''s job outbox on Citus, in the same transaction as the run''s write. It runs as svc_owner because the queue and app_private.queue_job are not svc_api''s to use; the organization is the signed context''s, and queue_job refuses a job without one (SV500 JOB_WITHOUT_ORGANIZATION).';

revoke all on function app_private.queue_agent_run(p_run_id text) from public;
grant execute on function app_private.queue_agent_run(p_run_id text) to svc_api;
grant execute on function app_private.queue_agent_run(p_run_id text) to svc_worker;
grant execute on function app_private.queue_agent_run(p_run_id text) to svc_admin;

-- function app_private.run_available_skills(text, text)

create function app_private.run_available_skills(p_organization_id text, p_run_id text) returns jsonb
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.run_available_skills(p_organization_id text, p_run_id text) owner to svc_owner;

revoke all on function app_private.run_available_skills(p_organization_id text, p_run_id text) from public;
grant execute on function app_private.run_available_skills(p_organization_id text, p_run_id text) to svc_worker;
grant execute on function app_private.run_available_skills(p_organization_id text, p_run_id text) to svc_admin;

-- function app_private.run_event(text, text, text, jsonb)

create function app_private.run_event(p_org text, p_run_id text, p_type text, p_data jsonb) returns integer
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.run_event(p_org text, p_run_id text, p_type text, p_data jsonb) owner to svc_owner;

comment on function app_private.run_event(p_org text, p_run_id text, p_type text, p_data jsonb) is 'Appends one event to run p_run_id''s log with the next sequence number (its callers hold the run''s row lock, so the log is totally ordered) and wakes that run''s streams by its opaque name: NOTIFY svc_run_events at commit, or, inside an API request''s transaction (svc.fanout_wake), in svc.run_wake for the API to notify after its commit, since NOTIFY serializes committing transactions. It runs as svc_owner because svc_api may only read app.run_events and may not read the wake key; its insert passes svc_owner''s policy only in the request''s organization or in the worker''s operator session, and the event takes the run''s client (tg__client_of_parent).';

revoke all on function app_private.run_event(p_org text, p_run_id text, p_type text, p_data jsonb) from public;
grant execute on function app_private.run_event(p_org text, p_run_id text, p_type text, p_data jsonb) to svc_worker;
grant execute on function app_private.run_event(p_org text, p_run_id text, p_type text, p_data jsonb) to svc_admin;

-- function app_private.run_note(text, text, text, jsonb)

create function app_private.run_note(p_organization_id text, p_run_id text, p_type text, p_data jsonb) returns boolean
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.run_note(p_organization_id text, p_run_id text, p_type text, p_data jsonb) owner to svc_owner;

revoke all on function app_private.run_note(p_organization_id text, p_run_id text, p_type text, p_data jsonb) from public;
grant execute on function app_private.run_note(p_organization_id text, p_run_id text, p_type text, p_data jsonb) to svc_worker;
grant execute on function app_private.run_note(p_organization_id text, p_run_id text, p_type text, p_data jsonb) to svc_admin;

-- function app_private.run_settle(text, text, text, jsonb, jsonb)

create function app_private.run_settle(p_organization_id text, p_run_id text, p_outcome text, p_payload jsonb, p_state jsonb) returns text
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.run_settle(p_organization_id text, p_run_id text, p_outcome text, p_payload jsonb, p_state jsonb) owner to svc_owner;

revoke all on function app_private.run_settle(p_organization_id text, p_run_id text, p_outcome text, p_payload jsonb, p_state jsonb) from public;
grant execute on function app_private.run_settle(p_organization_id text, p_run_id text, p_outcome text, p_payload jsonb, p_state jsonb) to svc_worker;
grant execute on function app_private.run_settle(p_organization_id text, p_run_id text, p_outcome text, p_payload jsonb, p_state jsonb) to svc_admin;

-- function app_private.run_start(text, text)

create function app_private.run_start(p_organization_id text, p_run_id text) returns jsonb
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.run_start(p_organization_id text, p_run_id text) owner to svc_owner;

revoke all on function app_private.run_start(p_organization_id text, p_run_id text) from public;
grant execute on function app_private.run_start(p_organization_id text, p_run_id text) to svc_worker;
grant execute on function app_private.run_start(p_organization_id text, p_run_id text) to svc_admin;

-- function app_private.run_tool(text, text, text, jsonb, jsonb)

create function app_private.run_tool(p_organization_id text, p_run_id text, p_skill text, p_args jsonb, p_rejection jsonb default null::jsonb) returns jsonb
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
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

alter function app_private.run_tool(p_organization_id text, p_run_id text, p_skill text, p_args jsonb, p_rejection jsonb) owner to svc_owner;

revoke all on function app_private.run_tool(p_organization_id text, p_run_id text, p_skill text, p_args jsonb, p_rejection jsonb) from public;
grant execute on function app_private.run_tool(p_organization_id text, p_run_id text, p_skill text, p_args jsonb, p_rejection jsonb) to svc_worker;
grant execute on function app_private.run_tool(p_organization_id text, p_run_id text, p_skill text, p_args jsonb, p_rejection jsonb) to svc_admin;

-- function app_private.run_wake_name(text)

create function app_private.run_wake_name(p_run_id text) returns text
    language sql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
  select left(encode(sha256(k.key || convert_to(p_run_id, 'UTF8')), 'hex'), 32) from app_private.run_wake_key k
$$;

alter function app_private.run_wake_name(p_run_id text) owner to svc_owner;

revoke all on function app_private.run_wake_name(p_run_id text) from public;
grant execute on function app_private.run_wake_name(p_run_id text) to svc_worker;
grant execute on function app_private.run_wake_name(p_run_id text) to svc_admin;

-- function app_private.skill_blocker(text, text)

create function app_private.skill_blocker(p_skill text, p_subject_member_id text) returns jsonb
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.skill_blocker(p_skill text, p_subject_member_id text) owner to svc_api;

comment on function app_private.skill_blocker(p_skill text, p_subject_member_id text) is 'Whether the calling client may use skill p_skill now: null, or the first blocker of LICENSE_LEVEL_REQUIRED (a manager-level skill needs a Manager-level licence), ROLE_REQUIRED (any one of the skill''s Roles, as for an operation), SUBJECT_NOT_SUPPORTED and INTEGRATION_CONNECTION_NOT_READY (api.integration_readiness for the skill''s capability). It runs as svc_api, for the api commands and for the worker''s tool calls made under the run''s client''s signed context, because svc_runtime may not read the skill catalogue or the client''s licence level; the client row is read in the request''s organization under svc_api''s policies.';

revoke all on function app_private.skill_blocker(p_skill text, p_subject_member_id text) from public;
grant execute on function app_private.skill_blocker(p_skill text, p_subject_member_id text) to svc_owner;
grant execute on function app_private.skill_blocker(p_skill text, p_subject_member_id text) to svc_worker;
grant execute on function app_private.skill_blocker(p_skill text, p_subject_member_id text) to svc_admin;

-- table app_private.agent_definitions

create table app_private.agent_definitions (
    id text not null,
    name text not null,
    description text not null,
    accepted_principal_types text[] not null,
    required_roles text[] not null,
    supports_subject boolean not null,
    input_schema jsonb not null,
    output_schema jsonb not null,
    version text not null,
    engine text not null,
    skills text[] not null,
    optional_skills text[] default '{}'::text[] not null,
    constraint agent_definitions_engine_valid check ((engine = any (array['builtin'::text, 'model'::text]))),
    constraint agent_definitions_id_format check ((id ~ '^agt_[a-z0-9_]+$'::text))
);

alter table only app_private.agent_definitions
    add constraint agent_definitions_pkey primary key (id);

create function app_private.tg_agent_definitions__skills_exist() returns trigger
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if exists (select from unnest(new.skills || new.optional_skills) s where s not in (select k.name from app_private.agent_skills k)) then
    perform app_private.raise('SVC09', 'CONFLICT', 'an agent names only skills of the catalogue');
  end if;
  return new;
end
$$;

alter function app_private.tg_agent_definitions__skills_exist() owner to svc_owner;

comment on function app_private.tg_agent_definitions__skills_exist() is 'BEFORE INSERT OR UPDATE trigger on app_private.agent_definitions: every skill an agent names, required or optional, must be in the skill catalogue (app_private.agent_skills), which no foreign key can check on an array; otherwise SVC09 CONFLICT. So every skill a run may be offered has a function to execute and the Roles, licence level and capability that app_private.skill_blocker checks.';

create trigger _100_skills_exist before insert or update on app_private.agent_definitions for each row execute function app_private.tg_agent_definitions__skills_exist();

grant select on table app_private.agent_definitions to svc_api;
grant select,insert,delete,update on table app_private.agent_definitions to svc_owner;
grant select,insert,delete,update on table app_private.agent_definitions to svc_worker;
grant select,insert,delete,update on table app_private.agent_definitions to svc_admin;

revoke all on function app_private.tg_agent_definitions__skills_exist() from public;
grant execute on function app_private.tg_agent_definitions__skills_exist() to svc_worker;
grant execute on function app_private.tg_agent_definitions__skills_exist() to svc_admin;

-- function app_private.agent_lookup(text)

create function app_private.agent_lookup(p_id text) returns app_private.agent_definitions
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.agent_lookup(p_id text) owner to svc_api;

comment on function app_private.agent_lookup(p_id text) is 'The catalogue definition of agent p_id as the request''s organization has it: SVN04 AGENT_NOT_FOUND when there is no such agent or publication row, AGENT_NOT_PUBLISHED when the organization unpublished it, so a client holding the id learns why it went. It runs as svc_api, which may read the catalogue (svc_runtime may not), and reads the publication under "Clients see their organization''s publications": only the request''s signed organization''s, never another''s.';

revoke all on function app_private.agent_lookup(p_id text) from public;
grant execute on function app_private.agent_lookup(p_id text) to svc_owner;
grant execute on function app_private.agent_lookup(p_id text) to svc_worker;
grant execute on function app_private.agent_lookup(p_id text) to svc_admin;

-- table app.agent_publications

create table app.agent_publications (
    organization_id text not null,
    agent_id text not null,
    status text not null,
    changed_at timestamp with time zone default now() not null,
    constraint agent_publications_status_valid check ((status = any (array['published'::text, 'unpublished'::text])))
);

alter table only app.agent_publications force row level security;

alter table only app.agent_publications
    add constraint agent_publications_pkey primary key (organization_id, agent_id);

alter table only app.agent_publications
    add constraint agent_publications_agent_id_fkey foreign key (agent_id) references app_private.agent_definitions(id);

alter table only app.agent_publications
    add constraint agent_publications_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table app.agent_publications enable row level security;

create policy "Clients see their organization's publications" on app.agent_publications for select to svc_api using (organization_id = (select app.current_organization_id()));

comment on policy "Clients see their organization's publications" on app.agent_publications is 'svc_api may read the publication status of each agent for the request''s signed organization only, so a client sees and starts only the agents its organization publishes (api.agents, app_private.agent_lookup) and learns AGENT_NOT_PUBLISHED for one it unpublished. Publishing is the control plane''s (svc-admin): svc_api has no write on the table.';

create policy "Commands act in the request's organization" on app.agent_publications to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.agent_publications is 'svc_owner, svc_worker and svc_admin, every command: the publications of the request''s signed organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). So tg_organizations__publish_agents publishes the catalogue for a new organization and svc-admin publishes or unpublishes an agent, while a definer running in a request cannot reach another organization''s publications even with a wrong WHERE.';

grant select on table app.agent_publications to svc_api;
grant select,insert,delete,update on table app.agent_publications to svc_owner;
grant select,insert,delete,update on table app.agent_publications to svc_worker;
grant select,insert,delete,update on table app.agent_publications to svc_admin;

-- table app.runs

create table app.runs (
    organization_id text not null,
    id text default app_private.new_id('run'::text) not null,
    kind text not null,
    agent_id text,
    agent_version text,
    conversation_id text,
    client_id text not null,
    subject jsonb,
    input jsonb not null,
    metadata jsonb default '{}'::jsonb not null,
    status text default 'queued'::text not null,
    output jsonb,
    required_action jsonb,
    error jsonb,
    state jsonb default '{}'::jsonb not null,
    output_purged boolean default false not null,
    created_at timestamp with time zone default now() not null,
    started_at timestamp with time zone,
    completed_at timestamp with time zone,
    constraint runs_action_iff_requires_action check (((status = 'requires_action'::text) = (required_action is not null))),
    constraint runs_agent_or_conversation check (((agent_id is null) <> (conversation_id is null))),
    constraint runs_completed_iff_terminal check (((status = any (array['succeeded'::text, 'failed'::text, 'cancelled'::text])) = (completed_at is not null))),
    constraint runs_error_iff_failed check (((status = 'failed'::text) = (error is not null))),
    constraint runs_kind_valid check ((kind = 'agent'::text)),
    constraint runs_output_only_when_succeeded check (((output is null) or (status = 'succeeded'::text))),
    constraint runs_status_valid check ((status = any (array['queued'::text, 'running'::text, 'requires_action'::text, 'succeeded'::text, 'failed'::text, 'cancelled'::text])))
);

alter table only app.runs force row level security;

alter table only app.runs
    add constraint runs_pkey primary key (organization_id, id);

create index runs_client_created on app.runs using btree (organization_id, client_id, created_at desc, id desc);

create index runs_conversation on app.runs using btree (organization_id, conversation_id) where (conversation_id is not null);

create index runs_id on app.runs using btree (id);

create index runs_retention on app.runs using btree (completed_at) where (not output_purged);

alter table only app.runs
    add constraint runs_agent_id_fkey foreign key (agent_id) references app_private.agent_definitions(id);

alter table only app.runs
    add constraint runs_organization_id_client_id_fkey foreign key (organization_id, client_id) references app.api_clients(organization_id, id);

alter table only app.runs
    add constraint runs_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table app.runs enable row level security;

create policy "Clients answer and cancel their own runs" on app.runs for update to svc_api using (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id())))) with check (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));

comment on policy "Clients answer and cancel their own runs" on app.runs is 'svc_api may update only runs of the request''s signed organization that its API Client started, before and after the update, and only the status, required_action, state and completed_at columns granted to it: what submitRunAction and cancelRun change. tg_runs__lifecycle still holds every update to the spec''s run states.';

create policy "Clients see their own runs" on app.runs for select to svc_api using ((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id())));

comment on policy "Clients see their own runs" on app.runs is 'svc_api may read only the runs of the request''s signed organization that its API Client started: a run belongs to the client that created it, so another client of the same organization gets RUN_NOT_FOUND. With no valid context it sees nothing.';

create policy "Clients start runs" on app.runs for insert to svc_api with check ((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id())));

comment on policy "Clients start runs" on app.runs is 'svc_api may insert a run only for the request''s signed organization and with the calling API Client as its actor (client_id): a client cannot start a run in another organization or on another client''s behalf. tg_runs__lifecycle requires the new run to be queued.';

create policy "Commands act in the request's organization" on app.runs to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.runs is 'svc_owner, svc_worker and svc_admin, every command: the runs of the request''s signed organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The worker''s engine (starting, settling and tool calls) and the output retention purge span organizations; svc_owner''s triggers and helpers inside a request stay in its organization even with a wrong WHERE.';

create function app_private.tg_runs__lifecycle() returns trigger
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.tg_runs__lifecycle() owner to svc_owner;

comment on function app_private.tg_runs__lifecycle() is 'BEFORE INSERT OR UPDATE trigger on app.runs, for every writer: a run starts queued; its request (organization, id, kind, agent and version, conversation, client, subject, input, metadata, created_at) never changes; its status moves only as the spec''s table allows (queued to running or cancelled, running to succeeded, failed, requires_action or cancelled, requires_action to queued or cancelled). Terminal runs never change (SVC09 RUN_ALREADY_TERMINAL) except the retention purge clearing their output, and only a finished run''s output expires; other violations raise SVC09 CONFLICT.';

create function app_private.tg_runs__conversation_reply() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_seq integer;
  v_id text;
  v_content jsonb;
begin
  if new.conversation_id is null or new.status = old.status or new.status not in ('succeeded', 'failed', 'cancelled') then
    return null;
  end if;
  select c.message_count + 1 into v_seq from app.conversations c where c.organization_id = new.organization_id and c.id = new.conversation_id for update;
  v_content := case new.status
    when 'succeeded' then jsonb_build_array(jsonb_build_object('type', 'text', 'text', coalesce(new.output ->> 'text', '')))
    when 'failed' then jsonb_build_array(jsonb_build_object('type', 'error', 'code', new.error ->> 'code', 'message', new.error ->> 'detail'))
    else jsonb_build_array(jsonb_build_object('type', 'error', 'code', 'RUN_CANCELLED', 'message', 'the run was cancelled before it answered')) end;
  insert into app.conversation_messages (organization_id, conversation_id, seq, role, content, run_id)
  values (new.organization_id, new.conversation_id, v_seq, 'assistant', v_content, new.id)
  returning id into v_id;
  perform app_private.conversation_compact(new.organization_id, new.conversation_id);
  return null;
end
$$;

alter function app_private.tg_runs__conversation_reply() owner to svc_owner;

comment on function app_private.tg_runs__conversation_reply() is 'AFTER UPDATE OF status row trigger on app.runs (_910_conversation_reply): when a conversation''s run reaches succeeded, failed or cancelled, it appends the assistant''s message at the conversation''s next seq (the run''s output text, or an error block with the run''s error code or RUN_CANCELLED, with run_id) and compacts the working context, as the spec turns a chat run''s answer into a conversation message. A definer as svc_owner because the run usually ends in the worker''s session, where svc_api''s policies show nothing, and svc_api may write only user messages; it names the run''s own organization.';

create function app_private.tg_runs__events() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.tg_runs__events() owner to svc_owner;

comment on function app_private.tg_runs__events() is 'AFTER UPDATE OF status trigger on app.runs: each change to running, requires_action, succeeded, failed or cancelled appends the matching stream event (run.started, run.requires_action with the action, run.completed with the output, run.failed with the error, run.cancelled) through app_private.run_event, and all but run.started also become webhook events (app_private.emit_event, the event''s sequence number as version). It runs as svc_owner because a status change made by svc_api (cancelRun) may not itself write the run log or the outbox; the rows it writes are in the run''s own organization, within svc_owner''s policy.';

create trigger _100_lifecycle before insert or update on app.runs for each row execute function app_private.tg_runs__lifecycle();

create trigger _900_events after update of status on app.runs for each row execute function app_private.tg_runs__events();

create trigger _910_conversation_reply after update of status on app.runs for each row execute function app_private.tg_runs__conversation_reply();

grant select,insert on table app.runs to svc_api;
grant select,insert,delete,update on table app.runs to svc_owner;
grant select,insert,delete,update on table app.runs to svc_worker;
grant select,insert,delete,update on table app.runs to svc_admin;

grant update(status) on table app.runs to svc_api;

grant update(required_action) on table app.runs to svc_api;

grant update(state) on table app.runs to svc_api;

grant update(completed_at) on table app.runs to svc_api;

revoke all on function app_private.tg_runs__conversation_reply() from public;
grant execute on function app_private.tg_runs__conversation_reply() to svc_worker;
grant execute on function app_private.tg_runs__conversation_reply() to svc_admin;

revoke all on function app_private.tg_runs__events() from public;
grant execute on function app_private.tg_runs__events() to svc_worker;
grant execute on function app_private.tg_runs__events() to svc_admin;

revoke all on function app_private.tg_runs__lifecycle() from public;
grant execute on function app_private.tg_runs__lifecycle() to svc_worker;
grant execute on function app_private.tg_runs__lifecycle() to svc_admin;

-- function app_private.run_lock(text)

create function app_private.run_lock(p_id text) returns app.runs
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.run_lock(p_id text) owner to svc_api;

comment on function app_private.run_lock(p_id text) is 'Locks (FOR UPDATE) and returns the calling client''s run p_id in the request''s organization, SVN04 RUN_NOT_FOUND otherwise; cancelRun and submitRunAction take it, so they wait for a tool operation the worker is applying under the same lock. It runs as svc_api, whose policies show only the runs of the request''s signed organization and client, so no other client''s run can be locked or read.';

revoke all on function app_private.run_lock(p_id text) from public;
grant execute on function app_private.run_lock(p_id text) to svc_owner;
grant execute on function app_private.run_lock(p_id text) to svc_worker;
grant execute on function app_private.run_lock(p_id text) to svc_admin;

-- table app.run_tool_calls

create table app.run_tool_calls (
    organization_id text not null,
    run_id text not null,
    n integer not null,
    skill text not null,
    arguments jsonb not null,
    status text not null,
    summary text,
    resources jsonb default '[]'::jsonb not null,
    error_code text,
    conversation_id text,
    started_at timestamp with time zone default clock_timestamp() not null,
    completed_at timestamp with time zone,
    result jsonb,
    client_id text not null,
    constraint run_tool_calls_status_valid check ((status = any (array['started'::text, 'completed'::text, 'failed'::text])))
);

alter table only app.run_tool_calls force row level security;

comment on column app.run_tool_calls.result is 'what a writing skill returned (a repeated call in the run answers it)';

alter table only app.run_tool_calls
    add constraint run_tool_calls_pkey primary key (organization_id, run_id, n);

alter table only app.run_tool_calls
    add constraint run_tool_calls_organization_id_run_id_fkey foreign key (organization_id, run_id) references app.runs(organization_id, id) on delete cascade;

alter table app.run_tool_calls enable row level security;

create policy "Commands act in the request's organization" on app.run_tool_calls to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.run_tool_calls is 'svc_owner, svc_worker and svc_admin, every command: the tool calls of the request''s signed organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The worker''s app_private.run_tool records each call for audit in the run''s organization; a definer running in a request cannot reach another organization''s calls even with a wrong WHERE.';

create policy "Tool calls are readable with their run" on app.run_tool_calls for select to svc_api using ((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id())));

comment on policy "Tool calls are readable with their run" on app.run_tool_calls is 'svc_api may read a tool call (the audit of a run''s tool operations) only in the request''s signed organization and only when its client_id is the calling API Client''s: the calls of the client''s own runs, as "Clients see their own runs" shows the runs. client_id is copied from the run by tg__client_of_parent when the call is inserted, so the policy judges the row alone, without reading app.runs.';

create trigger _010_client_of_parent before insert or update of client_id on app.run_tool_calls for each row execute function app_private.tg__client_of_parent();

grant select on table app.run_tool_calls to svc_api;
grant select,insert,delete,update on table app.run_tool_calls to svc_owner;
grant select,insert,delete,update on table app.run_tool_calls to svc_worker;
grant select,insert,delete,update on table app.run_tool_calls to svc_admin;

-- table app.run_events

create table app.run_events (
    organization_id text not null,
    run_id text not null,
    seq integer not null,
    type text not null,
    data jsonb not null,
    created_at timestamp with time zone default clock_timestamp() not null,
    client_id text not null,
    constraint run_events_type_valid check ((type = any (array['run.started'::text, 'run.progress'::text, 'run.tool.started'::text, 'run.tool.completed'::text, 'run.output.delta'::text, 'run.requires_action'::text, 'run.completed'::text, 'run.failed'::text, 'run.cancelled'::text])))
);

alter table only app.run_events force row level security;

alter table only app.run_events
    add constraint run_events_pkey primary key (organization_id, run_id, seq);

alter table only app.run_events
    add constraint run_events_organization_id_run_id_fkey foreign key (organization_id, run_id) references app.runs(organization_id, id) on delete cascade;

alter table app.run_events enable row level security;

create policy "Commands act in the request's organization" on app.run_events to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.run_events is 'svc_owner, svc_worker and svc_admin, every command: the run events of the request''s signed organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). So app_private.run_event appends to a run''s log from a request (a status change by cancelRun) only in its organization, while the worker''s engine and the retention purge, whose jobs span organizations, reach every run''s log.';

create policy "Events are readable with their run" on app.run_events for select to svc_api using ((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id())));

comment on policy "Events are readable with their run" on app.run_events is 'svc_api may read a run event only in the request''s signed organization and only when its client_id is the calling API Client''s: the events of the client''s own runs, as "Clients see their own runs" shows the runs. client_id is copied from the run by tg__client_of_parent when the event is inserted and never changes, so the policy judges the row alone, without reading app.runs.';

create trigger _010_client_of_parent before insert or update of client_id on app.run_events for each row execute function app_private.tg__client_of_parent();

grant select on table app.run_events to svc_api;
grant select,insert,delete,update on table app.run_events to svc_owner;
grant select,insert,delete,update on table app.run_events to svc_worker;
grant select,insert,delete,update on table app.run_events to svc_admin;

-- table app_private.agent_skills

create table app_private.agent_skills (
    name text not null,
    description text not null,
    required_roles text[] not null,
    license_level text not null,
    capability text,
    subject_dependent boolean not null,
    supports_subject boolean not null,
    writes boolean not null,
    parameters_schema jsonb not null,
    function_name text not null,
    constraint agent_skills_license_level_valid check ((license_level = any (array['regular'::text, 'manager'::text]))),
    constraint agent_skills_name_format check ((name ~ '^[a-z]+\.[a-z_]+$'::text))
);

comment on column app_private.agent_skills.required_roles is 'one of these Roles is needed (as for an operation)';

alter table only app_private.agent_skills
    add constraint agent_skills_pkey primary key (name);

grant select on table app_private.agent_skills to svc_api;
grant select,insert,delete,update on table app_private.agent_skills to svc_owner;
grant select,insert,delete,update on table app_private.agent_skills to svc_worker;
grant select,insert,delete,update on table app_private.agent_skills to svc_admin;

-- table app_private.run_wake_key

create table app_private.run_wake_key (
    singleton boolean default true not null,
    key bytea default decode(replace(((gen_random_uuid())::text || (gen_random_uuid())::text), '-'::text, ''::text), 'hex'::text) not null,
    constraint run_wake_key_singleton_check check (singleton)
);

comment on table app_private.run_wake_key is 'The key of svc_run_events payloads (244 random bits); one row.';

alter table only app_private.run_wake_key
    add constraint run_wake_key_pkey primary key (singleton);

grant select on table app_private.run_wake_key to svc_gate;
grant select on table app_private.run_wake_key to svc_owner;
grant select on table app_private.run_wake_key to svc_worker;
grant select on table app_private.run_wake_key to svc_admin;

-- view api.agents

create view api.agents with (security_barrier='true') as
 select d.id,
    d.required_roles,
    d.accepted_principal_types,
    p.status as publication,
    jsonb_build_object('object', 'agent', 'id', d.id, 'name', d.name, 'description', d.description, 'status', 'published', 'accepted_principal_types', to_jsonb(d.accepted_principal_types), 'required_roles', to_jsonb(d.required_roles), 'supports_subject', d.supports_subject, 'input_schema', d.input_schema, 'output_schema', d.output_schema, 'version', d.version, 'skills', to_jsonb((d.skills || d.optional_skills))) as doc,
    null::integer as version,
    d.id as sort_id
   from (app_private.agent_definitions d
     join app.agent_publications p on (((p.organization_id = (select app.current_organization_id())) and (p.agent_id = d.id))))
  where ((p.status = 'published'::text) and ('api_client'::text = any (d.accepted_principal_types)) and (d.required_roles <@ (select app.current_roles())));

alter view api.agents owner to svc_api;

grant select on table api.agents to svc_runtime;
grant select on table api.agents to svc_owner;

-- view api.runs

create view api.runs as
 select r.organization_id,
    r.id,
    r.kind,
    r.status,
    r.agent_id,
    r.conversation_id,
    r.created_at,
    r.output_purged,
    jsonb_build_object('object', 'run', 'id', r.id, 'kind', r.kind, 'status', r.status, 'agent_id', r.agent_id, 'agent_version', r.agent_version, 'conversation_id', r.conversation_id, 'actor', jsonb_build_object('type', 'api_client', 'id', r.client_id), 'subject', r.subject, 'input', r.input, 'metadata', r.metadata, 'output', r.output, 'output_expired', r.output_purged, 'required_action', r.required_action, 'error', r.error, 'tool_operations', coalesce(( select jsonb_agg(jsonb_build_object('skill', c.skill, 'status', c.status, 'summary', c.summary, 'resources', c.resources, 'error_code', c.error_code, 'started_at', app_private.iso_timestamp(c.started_at), 'completed_at', app_private.iso_timestamp(c.completed_at)) order by c.n) as jsonb_agg
           from app.run_tool_calls c
          where ((c.organization_id = r.organization_id) and (c.run_id = r.id))), '[]'::jsonb), 'created_at', app_private.iso_timestamp(r.created_at), 'started_at', app_private.iso_timestamp(r.started_at), 'completed_at', app_private.iso_timestamp(r.completed_at)) as doc,
    null::integer as version
   from app.runs r;

alter view api.runs owner to svc_api;

grant select on table api.runs to svc_runtime;
grant select on table api.runs to svc_owner;

-- function api.agent_blockers(text, text, boolean)

create function api.agent_blockers(p_id text, p_subject_member_id text, p_model_available boolean) returns jsonb
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function api.agent_blockers(p_id text, p_subject_member_id text, p_model_available boolean) owner to svc_api;

comment on function api.agent_blockers(p_id text, p_subject_member_id text, p_model_available boolean) is 'Every blocker to the calling API Client starting agent p_id now, sorted in the spec''s order of checks: the agent''s principal type and Roles (all of them), the subject, each required skill''s blockers (app_private.skill_blocker: licence level, Roles, subject, integration connection), and AGENT_UNAVAILABLE for a model agent when no model provider is configured (p_model_available false); an agent the request''s organization does not publish raises SVN04 AGENT_NOT_FOUND or AGENT_NOT_PUBLISHED (app_private.agent_lookup). It writes nothing: checkAgentReadiness lists the blockers and createAgentRun refuses with the first. It runs as svc_api because svc_runtime may not read the agent and skill catalogue, the publications or the client''s licence level, and svc_api''s policies confine those reads to the request''s signed organization and client.';

revoke all on function api.agent_blockers(p_id text, p_subject_member_id text, p_model_available boolean) from public;
grant execute on function api.agent_blockers(p_id text, p_subject_member_id text, p_model_available boolean) to svc_runtime;
grant execute on function api.agent_blockers(p_id text, p_subject_member_id text, p_model_available boolean) to svc_owner;
grant execute on function api.agent_blockers(p_id text, p_subject_member_id text, p_model_available boolean) to svc_worker;

-- function api.agent_get(text)

create function api.agent_get(p_id text) returns table(doc jsonb, version integer)
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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
  return query select v.doc, v.version from api.agents(p_id) v where v.id = p_id;
end
$$;

alter function api.agent_get(p_id text) owner to svc_api;

comment on function api.agent_get(p_id text) is 'getAgent: the agent as the calling client sees it (api.agents), once app_private.agent_lookup found it published in the request''s organization (SVN04 AGENT_NOT_FOUND, AGENT_NOT_PUBLISHED); SVR04 API_PRINCIPAL_NOT_SUPPORTED when the agent does not accept API Clients, SVR03 ROLE_REQUIRED when the client lacks any of the agent''s required_roles (all are needed). It runs as svc_api because svc_runtime may not read the catalogue or the publications, and svc_api reads them under its policies for the request''s signed organization.';

revoke all on function api.agent_get(p_id text) from public;
grant execute on function api.agent_get(p_id text) to svc_runtime;
grant execute on function api.agent_get(p_id text) to svc_owner;
grant execute on function api.agent_get(p_id text) to svc_worker;

-- function api.agent_input_schema(text)

create function api.agent_input_schema(p_id text) returns jsonb
    language sql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$ select (app_private.agent_lookup(p_id)).input_schema $$;

alter function api.agent_input_schema(p_id text) owner to svc_api;

comment on function api.agent_input_schema(p_id text) is 'The input JSON Schema of agent p_id, which the API validates a run''s input against before checkAgentReadiness and createAgentRun; only for an agent the request''s organization publishes (app_private.agent_lookup: SVN04 AGENT_NOT_FOUND or AGENT_NOT_PUBLISHED), the principal and Role checks following in those commands. It runs as svc_api because the agent catalogue in app_private is not granted to svc_runtime; the publication is read under svc_api''s policy for the request''s signed organization.';

revoke all on function api.agent_input_schema(p_id text) from public;
grant execute on function api.agent_input_schema(p_id text) to svc_runtime;
grant execute on function api.agent_input_schema(p_id text) to svc_owner;
grant execute on function api.agent_input_schema(p_id text) to svc_worker;

-- function api.agent_readiness(text, jsonb, jsonb, boolean)

create function api.agent_readiness(p_id text, p_subject jsonb, p_input_blockers jsonb, p_model_available boolean) returns jsonb
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function api.agent_readiness(p_id text, p_subject jsonb, p_input_blockers jsonb, p_model_available boolean) owner to svc_api;

comment on function api.agent_readiness(p_id text, p_subject jsonb, p_input_blockers jsonb, p_model_available boolean) is 'checkAgentReadiness, advisory and writing nothing: whether the calling client could start agent p_id, with the blockers of api.agent_blockers, SUBJECT_NOT_SUPPORTED when a subject is named and the agent or one of its subject-dependent skills does not act for one, INVALID_SUBJECT_MEMBER unless the subject is an active member of the request''s organization, the input problems the API found (p_input_blockers), and each skill''s availability. It runs as svc_api because svc_runtime may not read the agent and skill catalogue or the members table; every read names the request''s signed organization and svc_api''s policies confine it there.';

revoke all on function api.agent_readiness(p_id text, p_subject jsonb, p_input_blockers jsonb, p_model_available boolean) from public;
grant execute on function api.agent_readiness(p_id text, p_subject jsonb, p_input_blockers jsonb, p_model_available boolean) to svc_runtime;
grant execute on function api.agent_readiness(p_id text, p_subject jsonb, p_input_blockers jsonb, p_model_available boolean) to svc_owner;
grant execute on function api.agent_readiness(p_id text, p_subject jsonb, p_input_blockers jsonb, p_model_available boolean) to svc_worker;

-- function api.agent_run_create(text, jsonb, jsonb, jsonb, boolean)

create function api.agent_run_create(p_id text, p_input jsonb, p_subject jsonb, p_metadata jsonb, p_model_available boolean) returns jsonb
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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
  return (select v.doc from api.runs(v_id) v where v.id = v_id);
end
$$;

alter function api.agent_run_create(p_id text, p_input jsonb, p_subject jsonb, p_metadata jsonb, p_model_available boolean) owner to svc_api;

comment on function api.agent_run_create(p_id text, p_input jsonb, p_subject jsonb, p_metadata jsonb, p_model_available boolean) is 'createAgentRun: refuses with the first blocker of api.agent_blockers (SVV22 SUBJECT_NOT_SUPPORTED, SVR04 LICENSE_LEVEL_REQUIRED, SVR03 ROLE_REQUIRED, otherwise SVC09 with the blocker''s code) or a subject that is not an active member (INVALID_SUBJECT_MEMBER), then inserts a queued run of the agent''s current version for the request''s organization and client and queues its agent_run job. It runs as svc_api because svc_runtime may neither read the catalogue nor insert runs; the policy "Clients start runs" admits only a row of the signed context''s organization and client, and tg_runs__lifecycle only a queued one.';

revoke all on function api.agent_run_create(p_id text, p_input jsonb, p_subject jsonb, p_metadata jsonb, p_model_available boolean) from public;
grant execute on function api.agent_run_create(p_id text, p_input jsonb, p_subject jsonb, p_metadata jsonb, p_model_available boolean) to svc_runtime;
grant execute on function api.agent_run_create(p_id text, p_input jsonb, p_subject jsonb, p_metadata jsonb, p_model_available boolean) to svc_owner;
grant execute on function api.agent_run_create(p_id text, p_input jsonb, p_subject jsonb, p_metadata jsonb, p_model_available boolean) to svc_worker;

-- function api.agents(text)

create function api.agents(p_id text default null::text) returns setof api.agents
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.agents v;
    else
      return query select * from api.agents v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.agents', v_organization_id) || ') v where true and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;

alter function api.agents(p_id text) owner to svc_api;

comment on function api.agents(p_id text) is 'The rows of view api.agents for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

revoke all on function api.agents(p_id text) from public;
grant execute on function api.agents(p_id text) to svc_runtime;
grant execute on function api.agents(p_id text) to svc_owner;
grant execute on function api.agents(p_id text) to svc_worker;

-- function api.run_cancel(text)

create function api.run_cancel(p_id text) returns jsonb
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  r app.runs;
  v_lock_timeout text := current_setting('lock_timeout');
begin
  if not exists (select from api.runs(p_id) v where v.id = p_id) then
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
  return (select v.doc from api.runs(p_id) v where v.id = p_id);
end
$$;

alter function api.run_cancel(p_id text) owner to svc_api;

comment on function api.run_cancel(p_id text) is 'cancelRun, best effort: SVN04 RUN_NOT_FOUND unless the run is the calling client''s; it waits at most 1 s for the run''s row lock, which the worker holds while it applies a tool operation, and answers SVC09 RUN_CANCEL_NOT_AVAILABLE (retry) rather than interrupt an operation half-way, then restores the transaction''s lock_timeout; a finished run answers SVC09 RUN_ALREADY_TERMINAL, any other becomes cancelled, and completed tool operations are not rolled back. It runs as svc_api because svc_runtime may not update runs; the policy "Clients answer and cancel their own runs" and svc_api''s column grants (status, required_action, state, completed_at) confine the update to the client''s own run in the request''s organization.';

revoke all on function api.run_cancel(p_id text) from public;
grant execute on function api.run_cancel(p_id text) to svc_runtime;
grant execute on function api.run_cancel(p_id text) to svc_owner;
grant execute on function api.run_cancel(p_id text) to svc_worker;

-- function api.run_events_after(text, integer, integer)

create function api.run_events_after(p_id text, p_after integer, p_limit integer) returns table(seq integer, type text, data jsonb, created_at text, terminal boolean)
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function api.run_events_after(p_id text, p_after integer, p_limit integer) owner to svc_api;

comment on function api.run_events_after(p_id text, p_after integer, p_limit integer) is 'For streamRunEvents: a run''s events after sequence number p_after, at most p_limit, in order, each flagged when it ends the run (run.completed, run.failed, run.cancelled); SVN04 RUN_NOT_FOUND unless the run is the calling client''s, SVC09 RUN_OUTPUT_EXPIRED once its events are past retention (the run itself remains). It runs as svc_api because svc_runtime may not read app.runs or app.run_events; every read names the request''s organization, and svc_api''s policies show only that organization''s runs and events of the calling client.';

revoke all on function api.run_events_after(p_id text, p_after integer, p_limit integer) from public;
grant execute on function api.run_events_after(p_id text, p_after integer, p_limit integer) to svc_runtime;
grant execute on function api.run_events_after(p_id text, p_after integer, p_limit integer) to svc_owner;
grant execute on function api.run_events_after(p_id text, p_after integer, p_limit integer) to svc_worker;

-- function api.run_get(text)

create function api.run_get(p_id text) returns table(doc jsonb, version integer)
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
#variable_conflict use_column
begin
  return query select v.doc, v.version from api.runs(p_id) v where v.id = p_id;
end
$$;

alter function api.run_get(p_id text) owner to svc_api;

comment on function api.run_get(p_id text) is 'getRun: the run p_id as its client sees it (api.runs), no row for a run of another client or organization. It runs as svc_api, which reads runs and their tool calls under the policies "Clients see their own runs" and "Tool calls are readable with their run", so only the request''s signed organization and client are shown.';

revoke all on function api.run_get(p_id text) from public;
grant execute on function api.run_get(p_id text) to svc_runtime;
grant execute on function api.run_get(p_id text) to svc_owner;
grant execute on function api.run_get(p_id text) to svc_worker;

-- function api.run_submit_action(text, text, jsonb)

create function api.run_submit_action(p_id text, p_action_id text, p_response jsonb) returns jsonb
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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
  return (select v.doc from api.runs(p_id) v where v.id = p_id);
end
$$;

alter function api.run_submit_action(p_id text, p_action_id text, p_response jsonb) owner to svc_api;

comment on function api.run_submit_action(p_id text, p_action_id text, p_response jsonb) is 'submitRunAction: locks the calling client''s run (app_private.run_lock, SVN04 RUN_NOT_FOUND), accepts only while it is requires_action (SVC09 RUN_NOT_ACTIONABLE) and only the offered action id with one of the choices its required_action.schema offers (SVV22 RUN_ACTION_INVALID; the API checked the rest of the response), then records the response in the run''s state and queues the run and its job again. As the spec requires, nothing else changes: a response is never a formal approval, an identity assertion or a permission elevation. It runs as svc_api because svc_runtime may not update runs; "Clients answer and cancel their own runs" and svc_api''s column grants confine the update to the client''s own run in the request''s organization.';

revoke all on function api.run_submit_action(p_id text, p_action_id text, p_response jsonb) from public;
grant execute on function api.run_submit_action(p_id text, p_action_id text, p_response jsonb) to svc_runtime;
grant execute on function api.run_submit_action(p_id text, p_action_id text, p_response jsonb) to svc_owner;
grant execute on function api.run_submit_action(p_id text, p_action_id text, p_response jsonb) to svc_worker;

-- function api.run_wake_key()

create function api.run_wake_key() returns text
    language sql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$ select encode(k.key, 'hex') from app_private.run_wake_key k $$;

alter function api.run_wake_key() owner to svc_gate;

comment on function api.run_wake_key() is 'The key (hex) of the svc_run_events notification payloads, read once by each API process''s listener (src/agents/hub.ts) to compute the opaque wake name of the runs it streams: LISTEN needs no privilege, so a payload is the first 128 bits of SHA-256(key || run id), never the run''s id, and no other role of the database learns which runs are active and when. It runs as svc_gate, one of the few roles that may read app_private.run_wake_key (svc_runtime may not); the key is one for the service and names no organization.';

revoke all on function api.run_wake_key() from public;
grant execute on function api.run_wake_key() to svc_runtime;
grant execute on function api.run_wake_key() to svc_owner;
grant execute on function api.run_wake_key() to svc_worker;

-- function api.runs(text)

create function api.runs(p_id text default null::text) returns setof api.runs
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.runs v;
    else
      return query select * from api.runs v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.runs', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;

alter function api.runs(p_id text) owner to svc_api;

comment on function api.runs(p_id text) is 'The rows of view api.runs for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

revoke all on function api.runs(p_id text) from public;
grant execute on function api.runs(p_id text) to svc_runtime;
grant execute on function api.runs(p_id text) to svc_owner;
grant execute on function api.runs(p_id text) to svc_worker;

-- function control.agent_set_published(text, text, boolean)

create function control.agent_set_published(p_org text, p_agent text, p_published boolean) returns text
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

revoke all on function control.agent_set_published(p_org text, p_agent text, p_published boolean) from public;
grant execute on function control.agent_set_published(p_org text, p_agent text, p_published boolean) to svc_admin;

-- function control.purge_expired_runs(interval)

create function control.purge_expired_runs(p_retention interval) returns integer
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function control.purge_expired_runs(p_retention interval) owner to svc_owner;

revoke all on function control.purge_expired_runs(p_retention interval) from public;
grant execute on function control.purge_expired_runs(p_retention interval) to svc_worker;

-- function skills.invoices_billable_time(jsonb, text)

create function skills.invoices_billable_time(p_args jsonb, p_subject text) returns jsonb
    language plpgsql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function skills.invoices_billable_time(p_args jsonb, p_subject text) owner to svc_owner;

revoke all on function skills.invoices_billable_time(p_args jsonb, p_subject text) from public;
grant execute on function skills.invoices_billable_time(p_args jsonb, p_subject text) to svc_runtime;
grant execute on function skills.invoices_billable_time(p_args jsonb, p_subject text) to svc_worker;

-- function skills.invoices_create_draft(jsonb, text)

create function skills.invoices_create_draft(p_args jsonb, p_subject text) returns jsonb
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_doc jsonb;
begin
  select i.doc into v_doc from api.invoice_create(p_args) i;
  return jsonb_build_object('summary', format('draft invoice %s, total %s %s', v_doc ->> 'id', v_doc ->> 'total', v_doc ->> 'currency'),
    'resources', jsonb_build_array(jsonb_build_object('type', 'invoice', 'id', v_doc ->> 'id')),
    'data', jsonb_build_object('invoice_id', v_doc ->> 'id', 'total', v_doc -> 'total', 'currency', v_doc -> 'currency'));
end
$$;

alter function skills.invoices_create_draft(p_args jsonb, p_subject text) owner to svc_owner;

revoke all on function skills.invoices_create_draft(p_args jsonb, p_subject text) from public;
grant execute on function skills.invoices_create_draft(p_args jsonb, p_subject text) to svc_runtime;
grant execute on function skills.invoices_create_draft(p_args jsonb, p_subject text) to svc_worker;

-- function skills.tasks_assign(jsonb, text)

create function skills.tasks_assign(p_args jsonb, p_subject text) returns jsonb
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_doc jsonb;
begin
  -- expected_version is the If-Match of a confirmed proposal: a task changed since it was read is
  -- refused as updateTask refuses a stale ETag. Without it the assignment replaces what is there now.
  select t.doc into v_doc from api.task_update(p_args ->> 'task_id',
    array[coalesce((p_args ->> 'expected_version')::integer, (select x.version from api.tasks(p_args ->> 'task_id') x where x.id = p_args ->> 'task_id'))],
    jsonb_build_object('assignee_member_ids', p_args -> 'assignee_member_ids'), null) t;
  return jsonb_build_object('summary', format('%s assigned to %s', p_args ->> 'task_id',
      (select string_agg(a, ', ') from jsonb_array_elements_text(v_doc -> 'assignee_member_ids') a)),
    'resources', jsonb_build_array(jsonb_build_object('type', 'task', 'id', p_args ->> 'task_id')),
    'data', jsonb_build_object('task_id', p_args ->> 'task_id', 'assignee_member_ids', v_doc -> 'assignee_member_ids'));
end
$$;

alter function skills.tasks_assign(p_args jsonb, p_subject text) owner to svc_owner;

revoke all on function skills.tasks_assign(p_args jsonb, p_subject text) from public;
grant execute on function skills.tasks_assign(p_args jsonb, p_subject text) to svc_runtime;
grant execute on function skills.tasks_assign(p_args jsonb, p_subject text) to svc_worker;

-- function skills.tasks_find_attention(jsonb, text)

create function skills.tasks_find_attention(p_args jsonb, p_subject text) returns jsonb
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function skills.tasks_find_attention(p_args jsonb, p_subject text) owner to svc_api;

comment on function skills.tasks_find_attention(p_args jsonb, p_subject text) is 'The tasks.find_attention skill: the open tasks of project p_args.project_id that need attention (overdue, blocked, or waiting on an open predecessor) among the tasks the client may read (api.tasks), with their transitions and versions; SVN04 PROJECT_NOT_FOUND for a project the client cannot see. It runs as svc_api because it reads workflow categories and task dependencies, which no api view shows and svc_runtime may not read; the worker calls it as svc_runtime under the run''s client''s signed context, and every read names that organization under svc_api''s policies.';

revoke all on function skills.tasks_find_attention(p_args jsonb, p_subject text) from public;
grant execute on function skills.tasks_find_attention(p_args jsonb, p_subject text) to svc_runtime;
grant execute on function skills.tasks_find_attention(p_args jsonb, p_subject text) to svc_worker;

-- function skills.tasks_transition(jsonb, text)

create function skills.tasks_transition(p_args jsonb, p_subject text) returns jsonb
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_doc jsonb;
begin
  select t.doc into v_doc from api.task_transition(p_args ->> 'task_id', p_args ->> 'transition', null, p_subject) t;
  return jsonb_build_object('summary', format('%s: %s → %s', p_args ->> 'task_id', p_args ->> 'transition', v_doc ->> 'status'),
    'resources', jsonb_build_array(jsonb_build_object('type', 'task', 'id', p_args ->> 'task_id')),
    'data', jsonb_build_object('task_id', p_args ->> 'task_id', 'status', v_doc ->> 'status'));
end
$$;

alter function skills.tasks_transition(p_args jsonb, p_subject text) owner to svc_owner;

revoke all on function skills.tasks_transition(p_args jsonb, p_subject text) from public;
grant execute on function skills.tasks_transition(p_args jsonb, p_subject text) to svc_runtime;
grant execute on function skills.tasks_transition(p_args jsonb, p_subject text) to svc_worker;

-- function skills.time_missing_days(jsonb, text)

create function skills.time_missing_days(p_args jsonb, p_subject text) returns jsonb
    language plpgsql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function skills.time_missing_days(p_args jsonb, p_subject text) owner to svc_owner;

revoke all on function skills.time_missing_days(p_args jsonb, p_subject text) from public;
grant execute on function skills.time_missing_days(p_args jsonb, p_subject text) to svc_runtime;
grant execute on function skills.time_missing_days(p_args jsonb, p_subject text) to svc_worker;

-- rows of app_private.agent_skills

insert into app_private.agent_skills (name, description, required_roles, license_level, capability, subject_dependent, supports_subject, writes, parameters_schema, function_name) values
	('tasks.transition', 'Applies a transition the task''s workflow offers (transitionTask).', '{manager}', 'manager', NULL, true, true, true, '{"type": "object", "required": ["task_id", "transition"], "properties": {"task_id": {"type": "string", "pattern": "^tsk_[A-Za-z0-9]{1,64}$"}, "transition": {"type": "string", "maxLength": 100, "minLength": 1}}, "additionalProperties": false}', 'skills.tasks_transition'),
	('time.missing_days', 'Working days of a period on which active members (or the subject member) recorded no time.', '{manager}', 'regular', NULL, true, true, false, '{"type": "object", "required": ["from", "to"], "properties": {"to": {"type": "string", "format": "date"}, "from": {"type": "string", "format": "date"}}, "additionalProperties": false}', 'skills.time_missing_days'),
	('invoices.billable_time', 'Approved billable minutes per member of a project in a period.', '{finance}', 'manager', NULL, false, false, false, '{"type": "object", "required": ["project_id", "from", "to"], "properties": {"to": {"type": "string", "format": "date"}, "from": {"type": "string", "format": "date"}, "project_id": {"type": "string", "pattern": "^prj_[A-Za-z0-9]{1,64}$"}}, "additionalProperties": false}', 'skills.invoices_billable_time'),
	('invoices.create_draft', 'Creates a draft invoice (createInvoice) for export to the organization''s accounting system.', '{finance}', 'manager', 'invoice.export', false, false, true, '{"type": "object", "required": ["customer_id", "lines"], "properties": {"lines": {"type": "array", "maxItems": 100, "minItems": 1}, "currency": {"type": "string"}, "customer_id": {"type": "string"}}}', 'skills.invoices_create_draft'),
	('tasks.find_attention', 'Open tasks of a project that are overdue or blocked, with the transitions each offers.', '{member,manager}', 'regular', NULL, false, false, false, '{"type": "object", "required": ["project_id"], "properties": {"project_id": {"type": "string", "pattern": "^prj_[A-Za-z0-9]{1,64}$"}}, "additionalProperties": false}', 'skills.tasks_find_attention'),
	('tasks.assign', 'Replaces a task''s assignees (updateTask).', '{manager}', 'manager', NULL, false, false, true, '{"type": "object", "required": ["task_id", "assignee_member_ids"], "properties": {"task_id": {"type": "string", "pattern": "^tsk_[A-Za-z0-9]{1,64}$"}, "expected_version": {"type": "integer", "minimum": 1}, "assignee_member_ids": {"type": "array", "items": {"type": "string", "maxLength": 320}, "maxItems": 20}}, "additionalProperties": false}', 'skills.tasks_assign');

-- rows of app_private.agent_definitions

insert into app_private.agent_definitions (id, name, description, accepted_principal_types, required_roles, supports_subject, input_schema, output_schema, version, engine, skills, optional_skills) values
	('agt_echo', 'Echo', 'Returns its input as its output, with one progress event: a check of your run, stream and webhook handling. Performs nothing.', '{api_client,member}', '{}', false, '{"type": "object", "properties": {"message": {"type": "string", "maxLength": 1000}}, "additionalProperties": false}', '{"type": "object", "required": ["echo"], "properties": {"echo": {"type": "object"}}, "additionalProperties": false}', '1.0.0', 'builtin', '{}', '{}'),
	('agt_task_triage', 'Task triage', 'Finds a project''s overdue and blocked tasks and proposes transitions (block, unblock) and reassignments to the project''s manager; applies the ones you confirm through requires_action.', '{api_client,member}', '{manager}', false, '{"type": "object", "required": ["project_id"], "properties": {"project_id": {"type": "string", "pattern": "^prj_[A-Za-z0-9]{1,64}$"}}, "additionalProperties": false}', '{"type": "object", "required": ["project_id", "proposals", "applied", "failed", "dismissed"], "properties": {"failed": {"type": "array"}, "applied": {"type": "array"}, "dismissed": {"type": "boolean"}, "proposals": {"type": "array"}, "project_id": {"type": "string"}}, "additionalProperties": false}', '1.0.0', 'builtin', '{tasks.find_attention,tasks.transition,tasks.assign}', '{}'),
	('agt_missing_time', 'Missing time', 'Reports the working days (Monday to Friday) of a period on which active members, or the subject member, recorded no time.', '{api_client,member}', '{manager}', true, '{"type": "object", "required": ["from", "to"], "properties": {"to": {"type": "string", "format": "date"}, "from": {"type": "string", "format": "date"}}, "additionalProperties": false}', '{"type": "object", "required": ["from", "to", "members"], "properties": {"to": {"type": "string"}, "from": {"type": "string"}, "members": {"type": "array", "items": {"type": "object", "required": ["member_id", "missing_dates"]}}}, "additionalProperties": false}', '1.0.0', 'builtin', '{time.missing_days}', '{}'),
	('agt_invoice_draft', 'Invoice draft', 'Drafts an invoice for a customer from a project''s approved billable time in a period at an hourly rate; creates it only after you confirm the lines through requires_action.', '{api_client,member}', '{finance}', false, '{"type": "object", "required": ["customer_id", "project_id", "from", "to", "hourly_rate"], "properties": {"to": {"type": "string", "format": "date"}, "from": {"type": "string", "format": "date"}, "currency": {"type": "string", "pattern": "^[A-Z]{3}$"}, "project_id": {"type": "string", "pattern": "^prj_[A-Za-z0-9]{1,64}$"}, "customer_id": {"type": "string", "pattern": "^cus_[A-Za-z0-9]{1,64}$"}, "hourly_rate": {"type": "string", "pattern": "^[0-9]{1,12}(\\.[0-9]{1,4})?$"}}, "additionalProperties": false}', '{"type": "object", "required": ["lines", "invoice_id"], "properties": {"lines": {"type": "array"}, "total": {"type": ["string", "null"]}, "currency": {"type": ["string", "null"]}, "invoice_id": {"type": ["string", "null"]}}, "additionalProperties": false}', '1.0.0', 'builtin', '{invoices.billable_time,invoices.create_draft}', '{}'),
	('agt_assistant', 'Assistant', 'A model-backed assistant that answers a prompt and may use the task and time skills your Roles allow. Needs a model provider (SVC_MODEL_URL).', '{api_client,member}', '{}', false, '{"type": "object", "required": ["prompt"], "properties": {"prompt": {"type": "string", "maxLength": 8000, "minLength": 1}}, "additionalProperties": false}', '{"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}, "additionalProperties": false}', '1.0.0', 'model', '{}', '{tasks.find_attention,tasks.transition,time.missing_days}'),
	('agt_timesheet_coach', 'Timesheet coach', 'Helps a named member complete their own timesheet; for members in the web app, not for API Clients.', '{member}', '{member}', true, '{"type": "object", "properties": {}}', '{"type": "object"}', '1.0.0', 'builtin', '{}', '{}');

-- rows of app_private.run_wake_key

-- The key of svc_run_events payloads (random, one row).
insert into app_private.run_wake_key default values;

revoke create on schema api, app, app_private, control, reporting, skills from svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
