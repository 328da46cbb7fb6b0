-- migrate:up

/** Tool operations at most once per run (review of issue 17): a writing skill's result is kept with
 * its call, and the same call (skill and arguments) in the same run answers that result instead of
 * writing again. The built-in agents re-run their steps when a job is retried after a worker died
 * (between a tool call's commit and the run's end): the invoice draft agent would otherwise create a
 * second draft, and triage re-apply its transitions. */
alter table app.run_tool_calls add column result jsonb;
comment on column app.run_tool_calls.result is 'what a writing skill returned (a repeated call in the run answers it)';

create or replace function app_private.run_tool(p_run_id text, p_skill text, p_args jsonb, p_rejection jsonb default null) returns jsonb
language plpgsql volatile
set search_path = pg_catalog
as $$
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
begin
  select x.* into r from app.runs x where x.id = p_run_id for update;
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
     where c.organization_id = r.organization_id and c.run_id = r.id and c.skill = p_skill and c.arguments = p_args
       and c.status = 'completed' and c.result is not null
     order by c.n limit 1;
    if v_done is not null then
      return jsonb_build_object('ok', true, 'result', v_done, 'replayed', true);
    end if;
  end if;
  v_n := coalesce((select max(c.n) from app.run_tool_calls c where c.organization_id = r.organization_id and c.run_id = r.id), 0) + 1;
  insert into app.run_tool_calls (organization_id, run_id, n, skill, arguments, status, conversation_id)
  values (r.organization_id, r.id, v_n, p_skill, p_args, 'started', r.conversation_id);
  perform app_private.run_event(r.organization_id, r.id, 'run.tool.started', jsonb_build_object('tool_call', v_n, 'skill', p_skill));
  select p.status into v_pub from app.agent_publications p where p.organization_id = r.organization_id and p.agent_id = r.agent_id;
  if p_rejection is not null then
    v_blocker := p_rejection;
  elsif k.name is null or not (p_skill = any (case when r.agent_id is null then app_private.chat_skills() else d.skills || d.optional_skills end)) then
    v_blocker := jsonb_build_object('code', 'SKILL_NOT_AVAILABLE', 'message', format('%s is not a skill of this run', p_skill));
  elsif r.agent_id is null then
    -- A chat run has no agent: its checks start with the client's standing.
    if not app_private.begin_delivery_context(r.client_id) then
      v_blocker := jsonb_build_object('code', 'CLIENT_DISABLED', 'message', 'the API Client can no longer make requests');
    else
      v_blocker := app_private.skill_blocker(p_skill, r.subject ->> 'member_id');
    end if;
  elsif v_pub is distinct from 'published' then
    v_blocker := jsonb_build_object('code', 'AGENT_NOT_PUBLISHED', 'message', format('%s is no longer published in the organization', r.agent_id));
  elsif not 'api_client' = any (d.accepted_principal_types) then
    v_blocker := jsonb_build_object('code', 'API_PRINCIPAL_NOT_SUPPORTED', 'message', format('%s does not accept API Clients', r.agent_id));
  elsif not app_private.begin_delivery_context(r.client_id) then
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
  if v_blocker is not null then
    update app.run_tool_calls c set status = 'failed', error_code = v_blocker ->> 'code', summary = v_blocker ->> 'message', completed_at = clock_timestamp()
     where c.organization_id = r.organization_id and c.run_id = r.id and c.n = v_n;
    perform app_private.run_event(r.organization_id, r.id, 'run.tool.completed',
      jsonb_build_object('tool_call', v_n, 'skill', p_skill, 'status', 'failed', 'error', jsonb_build_object('code', v_blocker ->> 'code', 'detail', v_blocker ->> 'message')));
    return jsonb_build_object('ok', false, 'error', jsonb_build_object('code', v_blocker ->> 'code', 'detail', v_blocker ->> 'message'));
  end if;
  update app.run_tool_calls c set status = 'completed', summary = v_result ->> 'summary', resources = coalesce(v_result -> 'resources', '[]'),
         result = case when k.writes then v_result end, completed_at = clock_timestamp()
   where c.organization_id = r.organization_id and c.run_id = r.id and c.n = v_n;
  perform app_private.run_event(r.organization_id, r.id, 'run.tool.completed',
    jsonb_build_object('tool_call', v_n, 'skill', p_skill, 'status', 'completed', 'summary', v_result ->> 'summary',
                       'resources', coalesce(v_result -> 'resources', '[]')));
  return jsonb_build_object('ok', true, 'result', v_result);
end
$$;

/** tasks.assign takes the task's version as read (expected_version, as If-Match): the triage agent
 * proposes from what it read, and a task reassigned by someone else before the confirmation is
 * refused (listed under `failed`) rather than overwritten. find_attention reports each version. */
update app_private.agent_skills
   set parameters_schema = jsonb_set(parameters_schema, '{properties,expected_version}', '{"type":"integer","minimum":1}')
 where name = 'tasks.assign';

create or replace function skills.tasks_find_attention(p_args jsonb, p_subject text) returns jsonb
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  v_project text := p_args ->> 'project_id';
  v_tasks jsonb;
begin
  if not exists (select from api.projects p where p.id = v_project) then
    perform app_private.raise('SVN04', 'PROJECT_NOT_FOUND', format('no project %s in your organization', v_project));
  end if;
  with open_tasks as (
    select t.id, t.doc, t.status, t.due_at, t.version,
           (select count(*) from app.task_dependencies d
              join app.tasks p on p.organization_id = d.organization_id and p.id = d.predecessor_task_id
              join app.task_workflow_statuses s on s.organization_id = p.organization_id and s.workflow_id = p.workflow_id and s.status = p.status
             where d.organization_id = t.organization_id and d.task_id = t.id and s.category = 'open') as open_predecessors
      from api.tasks t
      join app.tasks x on x.organization_id = t.organization_id and x.id = t.id
      join app.task_workflow_statuses s on s.organization_id = x.organization_id and s.workflow_id = x.workflow_id and s.status = x.status
     where t.project_id = v_project and t.archived_at is null and s.category = 'open')
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

create or replace function skills.tasks_assign(p_args jsonb, p_subject text) returns jsonb
language plpgsql volatile
set search_path = pg_catalog
as $$
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

-- migrate:down

alter table app.run_tool_calls drop column result;
update app_private.agent_skills set parameters_schema = parameters_schema #- '{properties,expected_version}' where name = 'tasks.assign';
