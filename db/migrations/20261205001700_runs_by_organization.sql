-- migrate:up

/** Issue 37: agent and chat runs name their organization.
 *
 * The last of the worker's jobs (migration 20261205001300 did the others): a run's job carries its
 * organization, and each function the engine calls (src/agents/engine.ts) takes it first and names it
 * in every statement. On Citus each is delegated by it, so a run's tool calls execute in the
 * organization's worker, under the client's signed context, as a request's statements do. */

drop function app_private.run_start(text);
create function app_private.run_start(p_organization_id text, p_run_id text)
 RETURNS jsonb
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
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
$function$;

drop function app_private.run_available_skills(text);
create function app_private.run_available_skills(p_organization_id text, p_run_id text)
 RETURNS jsonb
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
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
$function$;

drop function app_private.run_note(text,text,jsonb);
create function app_private.run_note(p_organization_id text, p_run_id text, p_type text, p_data jsonb)
 RETURNS boolean
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
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
$function$;

drop function app_private.run_settle(text,text,jsonb,jsonb);
create function app_private.run_settle(p_organization_id text, p_run_id text, p_outcome text, p_payload jsonb, p_state jsonb)
 RETURNS text
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
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
$function$;

drop function app_private.chat_context(text);
create function app_private.chat_context(p_organization_id text, p_run_id text)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog'
AS $function$
declare
  r app.runs;
  c app.conversations;
  v_seq integer;
begin
  select * into r from app.runs x where x.organization_id = p_organization_id and x.id = p_run_id;
  select * into c from app.conversations x where x.organization_id = p_organization_id and x.id = r.conversation_id;
  select m.seq into v_seq from app.conversation_messages m where m.organization_id = p_organization_id and m.id = r.input ->> 'message_id';
  return jsonb_build_object('summary', c.context_summary,
    'messages', coalesce((select jsonb_agg(jsonb_build_object('role', m.role, 'content', m.content) order by m.seq)
                            from app.conversation_messages m
                           where m.organization_id = p_organization_id and m.conversation_id = c.id
                             and m.seq > c.context_from_seq and m.seq <= v_seq), '[]'));
end
$function$;

drop function app_private.run_tool(text,text,jsonb,jsonb);
create function app_private.run_tool(p_organization_id text, p_run_id text, p_skill text, p_args jsonb, p_rejection jsonb DEFAULT NULL::jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
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
$function$;

/** A chat run's answer: its content a value before the insert (Citus deparses a simple CASE in an
 * INSERT's values into a comparison it then cannot type). */
create or replace function app_private.tg_runs__conversation_reply()
returns trigger
language plpgsql security definer
set search_path = pg_catalog
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

/** The open tasks of a project that need attention: the tasks as the client reads them (api.tasks),
 * then their state and open predecessors from the tables, each read naming the organization (on
 * Citus a join on a column of the view's rows would ask every shard). */
create or replace function skills.tasks_find_attention(p_args jsonb, p_subject text)
returns jsonb
language plpgsql stable security definer
set search_path = pg_catalog
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

-- Every caller now names the organization: the lookup of a client by its id alone goes.
drop function app_private.begin_delivery_context(text);

revoke execute on function app_private.run_start(text, text) from public;
revoke execute on function app_private.run_available_skills(text, text) from public;
revoke execute on function app_private.run_note(text, text, text, jsonb) from public;
revoke execute on function app_private.run_settle(text, text, text, jsonb, jsonb) from public;
revoke execute on function app_private.chat_context(text, text) from public;
revoke execute on function app_private.run_tool(text, text, text, jsonb, jsonb) from public;

do $$
declare
  f text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  foreach f in array array[
    'app_private.run_start(text, text)', 'app_private.run_available_skills(text, text)', 'app_private.run_note(text, text, text, jsonb)',
    'app_private.run_settle(text, text, text, jsonb, jsonb)', 'app_private.chat_context(text, text)',
    'app_private.run_tool(text, text, text, jsonb, jsonb)'] loop
    perform create_distributed_function(f::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  end loop;
  -- The skills a run's tools call read the views' functions, as commands do (migration 20261205000900).
  perform app_private.citus_read_view_functions(
    (select array_agg(x.oid::regprocedure) from pg_proc x where x.pronamespace = 'skills'::regnamespace));
end
$$;

-- migrate:down
