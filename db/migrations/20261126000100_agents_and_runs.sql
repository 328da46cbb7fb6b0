-- migrate:up

/** Agents and runs (issue 17). Agent definitions and their skills are a catalogue shipped with the
 * service; each organization publishes or unpublishes them (svc-admin agent publish|unpublish).
 * A run is a row whose states follow the spec's table for every writer; its events are a durable,
 * totally ordered log that the event stream replays; a skill is a SQL function that the worker
 * calls as svc_runtime under the run's client's signed context, so every tool call passes the same
 * row policies, triggers and api checks as the client's own request. */

/** 1. The catalogue. A skill's required_roles are all needed (the skill's and its operation's). */
create table app_private.agent_skills (
  name text primary key constraint agent_skills_name_format check (name ~ '^[a-z]+\.[a-z_]+$'),
  description text not null,
  required_roles text[] not null,
  license_level text not null constraint agent_skills_license_level_valid check (license_level in ('regular', 'manager')),
  capability text,
  subject_dependent boolean not null,
  supports_subject boolean not null,
  writes boolean not null,
  parameters_schema jsonb not null,
  function_name text not null
);

create table app_private.agent_definitions (
  id text primary key constraint agent_definitions_id_format check (id ~ '^agt_[a-z0-9_]+$'),
  name text not null,
  description text not null,
  accepted_principal_types text[] not null,
  required_roles text[] not null,
  supports_subject boolean not null,
  input_schema jsonb not null,
  output_schema jsonb not null,
  version text not null,
  engine text not null constraint agent_definitions_engine_valid check (engine in ('builtin', 'model')),
  /** Skills the agent cannot work without (blockers when unavailable) ... */
  skills text[] not null,
  /** ... and skills a model may be offered when the client can use them. */
  optional_skills text[] not null default '{}'
);
grant select on app_private.agent_skills, app_private.agent_definitions to svc_api;

create function app_private.tg_agent_definitions__skills_exist() returns trigger
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  if exists (select from unnest(new.skills || new.optional_skills) s where s not in (select k.name from app_private.agent_skills k)) then
    perform app_private.raise('SVC09', 'CONFLICT', 'an agent names only skills of the catalogue');
  end if;
  return new;
end
$$;
create trigger _100_skills_exist before insert or update on app_private.agent_definitions
  for each row execute function app_private.tg_agent_definitions__skills_exist();

/** Publication per organization: an agent is usable by an organization's clients while published. */
create table app.agent_publications (
  organization_id text not null references app.organizations on delete cascade,
  agent_id text not null references app_private.agent_definitions,
  status text not null constraint agent_publications_status_valid check (status in ('published', 'unpublished')),
  changed_at timestamptz not null default now(),
  primary key (organization_id, agent_id)
);
alter table app.agent_publications enable row level security;
alter table app.agent_publications force row level security;
create policy "Clients see their organization's publications" on app.agent_publications for select to svc_api
  using (organization_id = (select app.current_organization_id()));
grant select on app.agent_publications to svc_api;

/** New organizations start with every built-in agent published. */
create function app_private.tg_organizations__publish_agents() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  insert into app.agent_publications (organization_id, agent_id, status)
  select new.id, d.id, 'published' from app_private.agent_definitions d
  on conflict do nothing;
  return null;
end
$$;
create trigger _500_publish_agents after insert on app.organizations
  for each row execute function app_private.tg_organizations__publish_agents();

create function control.agent_set_published(p_org text, p_agent text, p_published boolean) returns text
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  if not exists (select from app.organizations o where o.id = p_org) then
    perform app_private.raise('SVN01', 'ORGANIZATION_NOT_FOUND', format('no organization %s', p_org));
  end if;
  if not exists (select from app_private.agent_definitions d where d.id = p_agent) then
    perform app_private.raise('SVN01', 'AGENT_NOT_FOUND', format('no agent %s in the catalogue', p_agent));
  end if;
  insert into app.agent_publications (organization_id, agent_id, status)
  values (p_org, p_agent, case when p_published then 'published' else 'unpublished' end)
  on conflict (organization_id, agent_id) do update set status = excluded.status, changed_at = now();
  return case when p_published then 'published' else 'unpublished' end;
end
$$;

/** 2. Skills: functions of schema `skills`, security invoker, called as svc_runtime under the
 * client's context. Each takes the tool arguments (validated against parameters_schema) and the
 * run's subject member, and returns {summary, resources, data}. */
create schema skills;
grant usage on schema skills to svc_runtime, svc_api;

/** Open tasks of a project that need attention: overdue, blocked with every predecessor done, or
 * waiting on an unfinished predecessor while not blocked. It reads workflow categories and
 * dependencies, which no api view shows, so it runs as svc_api: every row policy still applies. */
create function skills.tasks_find_attention(p_args jsonb, p_subject text) returns jsonb
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
    select t.id, t.doc, t.status, t.due_at,
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
           'overdue', o.due_at < now(), 'open_predecessors', o.open_predecessors) order by o.due_at nulls last, o.id), '[]')
    into v_tasks
    from open_tasks o
   where o.due_at < now() or o.open_predecessors > 0 or o.status = 'blocked';
  return jsonb_build_object('summary', format('%s task(s) of %s need attention', jsonb_array_length(v_tasks), v_project),
    'resources', coalesce((select jsonb_agg(jsonb_build_object('type', 'task', 'id', x ->> 'id')) from jsonb_array_elements(v_tasks) x), '[]'),
    'data', jsonb_build_object('project_id', v_project,
      'manager_member_id', (select p.manager_member_id from api.projects p where p.id = v_project), 'tasks', v_tasks));
end
$$;

create function skills.tasks_transition(p_args jsonb, p_subject text) returns jsonb
language plpgsql volatile
set search_path = pg_catalog
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

create function skills.tasks_assign(p_args jsonb, p_subject text) returns jsonb
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  v_doc jsonb;
begin
  -- The assignment replaces what is there now (the proposal was confirmed knowing it).
  select t.doc into v_doc from api.task_update(p_args ->> 'task_id', array[(select x.version from api.tasks x where x.id = p_args ->> 'task_id')],
    jsonb_build_object('assignee_member_ids', p_args -> 'assignee_member_ids'), null) t;
  return jsonb_build_object('summary', format('%s assigned to %s', p_args ->> 'task_id',
      (select string_agg(a, ', ') from jsonb_array_elements_text(v_doc -> 'assignee_member_ids') a)),
    'resources', jsonb_build_array(jsonb_build_object('type', 'task', 'id', p_args ->> 'task_id')),
    'data', jsonb_build_object('task_id', p_args ->> 'task_id', 'assignee_member_ids', v_doc -> 'assignee_member_ids'));
end
$$;

/** Working days (Monday to Friday) of a period on which active members recorded no time. */
create function skills.time_missing_days(p_args jsonb, p_subject text) returns jsonb
language plpgsql stable
set search_path = pg_catalog
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

/** Approved, billable time of a project in a period, as invoice lines (hours × rate per member). */
create function skills.invoices_billable_time(p_args jsonb, p_subject text) returns jsonb
language plpgsql stable
set search_path = pg_catalog
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

create function skills.invoices_create_draft(p_args jsonb, p_subject text) returns jsonb
language plpgsql volatile
set search_path = pg_catalog
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
alter function skills.tasks_find_attention(jsonb, text) owner to svc_api;
grant execute on all functions in schema skills to svc_runtime;

insert into app_private.agent_skills (name, description, required_roles, license_level, capability, subject_dependent, supports_subject, writes, parameters_schema, function_name) values
  ('tasks.find_attention', 'Open tasks of a project that are overdue or blocked, with the transitions each offers.',
   '{member}', 'regular', null, false, false, false,
   '{"type":"object","additionalProperties":false,"required":["project_id"],"properties":{"project_id":{"type":"string","pattern":"^prj_[A-Za-z0-9]{1,64}$"}}}',
   'skills.tasks_find_attention'),
  ('tasks.transition', 'Applies a transition the task''s workflow offers (transitionTask).',
   '{manager}', 'manager', null, true, true, true,
   '{"type":"object","additionalProperties":false,"required":["task_id","transition"],"properties":{"task_id":{"type":"string","pattern":"^tsk_[A-Za-z0-9]{1,64}$"},"transition":{"type":"string","minLength":1,"maxLength":100}}}',
   'skills.tasks_transition'),
  ('tasks.assign', 'Replaces a task''s assignees (updateTask).',
   '{manager}', 'manager', null, false, false, true,
   '{"type":"object","additionalProperties":false,"required":["task_id","assignee_member_ids"],"properties":{"task_id":{"type":"string","pattern":"^tsk_[A-Za-z0-9]{1,64}$"},"assignee_member_ids":{"type":"array","maxItems":20,"items":{"type":"string","maxLength":320}}}}',
   'skills.tasks_assign'),
  ('time.missing_days', 'Working days of a period on which active members (or the subject member) recorded no time.',
   '{manager}', 'regular', null, true, true, false,
   '{"type":"object","additionalProperties":false,"required":["from","to"],"properties":{"from":{"type":"string","format":"date"},"to":{"type":"string","format":"date"}}}',
   'skills.time_missing_days'),
  ('invoices.billable_time', 'Approved billable minutes per member of a project in a period.',
   '{finance}', 'manager', null, false, false, false,
   '{"type":"object","additionalProperties":false,"required":["project_id","from","to"],"properties":{"project_id":{"type":"string","pattern":"^prj_[A-Za-z0-9]{1,64}$"},"from":{"type":"string","format":"date"},"to":{"type":"string","format":"date"}}}',
   'skills.invoices_billable_time'),
  ('invoices.create_draft', 'Creates a draft invoice (createInvoice) for export to the organization''s accounting system.',
   '{finance}', 'manager', 'invoice.export', false, false, true,
   '{"type":"object","required":["customer_id","lines"],"properties":{"customer_id":{"type":"string"},"currency":{"type":"string"},"lines":{"type":"array","minItems":1,"maxItems":100}}}',
   'skills.invoices_create_draft');

insert into app_private.agent_definitions (id, name, description, accepted_principal_types, required_roles, supports_subject, input_schema, output_schema, version, engine, skills, optional_skills) values
  ('agt_echo', 'Echo', 'Returns its input as its output, with one progress event: a check of your run, stream and webhook handling. Performs nothing.',
   '{api_client,member}', '{}', false,
   '{"type":"object","additionalProperties":false,"properties":{"message":{"type":"string","maxLength":1000}}}',
   '{"type":"object","additionalProperties":false,"required":["echo"],"properties":{"echo":{"type":"object"}}}',
   '1.0.0', 'builtin', '{}', '{}'),
  ('agt_task_triage', 'Task triage', 'Finds a project''s overdue and blocked tasks and proposes transitions (block, unblock) and reassignments to the project''s manager; applies the ones you confirm through requires_action.',
   '{api_client,member}', '{manager}', false,
   '{"type":"object","additionalProperties":false,"required":["project_id"],"properties":{"project_id":{"type":"string","pattern":"^prj_[A-Za-z0-9]{1,64}$"}}}',
   '{"type":"object","additionalProperties":false,"required":["project_id","proposals","applied","failed","dismissed"],"properties":{"project_id":{"type":"string"},"proposals":{"type":"array"},"applied":{"type":"array"},"failed":{"type":"array"},"dismissed":{"type":"boolean"}}}',
   '1.0.0', 'builtin', '{tasks.find_attention,tasks.transition,tasks.assign}', '{}'),
  ('agt_missing_time', 'Missing time', 'Reports the working days (Monday to Friday) of a period on which active members, or the subject member, recorded no time.',
   '{api_client,member}', '{manager}', true,
   '{"type":"object","additionalProperties":false,"required":["from","to"],"properties":{"from":{"type":"string","format":"date"},"to":{"type":"string","format":"date"}}}',
   '{"type":"object","additionalProperties":false,"required":["from","to","members"],"properties":{"from":{"type":"string"},"to":{"type":"string"},"members":{"type":"array","items":{"type":"object","required":["member_id","missing_dates"]}}}}',
   '1.0.0', 'builtin', '{time.missing_days}', '{}'),
  ('agt_invoice_draft', 'Invoice draft', 'Drafts an invoice for a customer from a project''s approved billable time in a period at an hourly rate; creates it only after you confirm the lines through requires_action.',
   '{api_client,member}', '{finance}', false,
   '{"type":"object","additionalProperties":false,"required":["customer_id","project_id","from","to","hourly_rate"],"properties":{"customer_id":{"type":"string","pattern":"^cus_[A-Za-z0-9]{1,64}$"},"project_id":{"type":"string","pattern":"^prj_[A-Za-z0-9]{1,64}$"},"from":{"type":"string","format":"date"},"to":{"type":"string","format":"date"},"hourly_rate":{"type":"string","pattern":"^[0-9]{1,12}(\\.[0-9]{1,4})?$"},"currency":{"type":"string","pattern":"^[A-Z]{3}$"}}}',
   '{"type":"object","additionalProperties":false,"required":["lines","invoice_id"],"properties":{"lines":{"type":"array"},"invoice_id":{"type":["string","null"]},"total":{"type":["string","null"]},"currency":{"type":["string","null"]}}}',
   '1.0.0', 'builtin', '{invoices.billable_time,invoices.create_draft}', '{}'),
  ('agt_assistant', 'Assistant', 'A model-backed assistant that answers a prompt and may use the task and time skills your Roles allow. Needs a model provider (SVC_MODEL_URL).',
   '{api_client,member}', '{}', false,
   '{"type":"object","additionalProperties":false,"required":["prompt"],"properties":{"prompt":{"type":"string","minLength":1,"maxLength":8000}}}',
   '{"type":"object","additionalProperties":false,"required":["text"],"properties":{"text":{"type":"string"}}}',
   '1.0.0', 'model', '{}', '{tasks.find_attention,tasks.transition,time.missing_days}'),
  ('agt_timesheet_coach', 'Timesheet coach', 'Helps a named member complete their own timesheet; for members in the web app, not for API Clients.',
   '{member}', '{member}', true,
   '{"type":"object","properties":{}}', '{"type":"object"}',
   '1.0.0', 'builtin', '{}', '{}');

insert into app.agent_publications (organization_id, agent_id, status)
select o.id, d.id, 'published' from app.organizations o cross join app_private.agent_definitions d;

/** The skills of chat runs (conversations, issue 18) (the client's usable ones among them are offered to the model). */
create function app_private.chat_skills() returns text[] language sql immutable as $$ select '{tasks.find_attention,tasks.transition,time.missing_days}'::text[] $$;
grant execute on function app_private.chat_skills() to svc_api;

/** 3. Runs, their events and their tool calls. */
create table app.runs (
  organization_id text not null references app.organizations on delete cascade,
  id text not null default app_private.new_id('run'),
  kind text not null constraint runs_kind_valid check (kind = 'agent'),
  agent_id text references app_private.agent_definitions,
  agent_version text,
  conversation_id text,
  client_id text not null,
  subject jsonb,
  input jsonb not null,
  metadata jsonb not null default '{}',
  status text not null default 'queued'
    constraint runs_status_valid check (status in ('queued', 'running', 'requires_action', 'succeeded', 'failed', 'cancelled')),
  output jsonb,
  required_action jsonb,
  error jsonb,
  /** The agent's own checkpoint between steps (never returned). */
  state jsonb not null default '{}',
  output_purged boolean not null default false,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  completed_at timestamptz,
  primary key (organization_id, id),
  foreign key (organization_id, client_id) references app.api_clients (organization_id, id),
  constraint runs_action_iff_requires_action check ((status = 'requires_action') = (required_action is not null)),
  constraint runs_error_iff_failed check ((status = 'failed') = (error is not null)),
  constraint runs_output_only_when_succeeded check (output is null or status = 'succeeded'),
  constraint runs_completed_iff_terminal check ((status in ('succeeded', 'failed', 'cancelled')) = (completed_at is not null))
);
create index runs_id on app.runs (id);
create index runs_client_created on app.runs (organization_id, client_id, created_at desc, id desc);
create index runs_retention on app.runs (completed_at) where not output_purged;

create table app.run_events (
  organization_id text not null,
  run_id text not null,
  seq integer not null,
  type text not null constraint run_events_type_valid check (type in ('run.started', 'run.progress', 'run.tool.started',
    'run.tool.completed', 'run.output.delta', 'run.requires_action', 'run.completed', 'run.failed', 'run.cancelled')),
  data jsonb not null,
  created_at timestamptz not null default clock_timestamp(),
  primary key (organization_id, run_id, seq),
  foreign key (organization_id, run_id) references app.runs (organization_id, id) on delete cascade
);

/** The audit of tool operations: which skill, with which arguments, on which resources, how it ended. */
create table app.run_tool_calls (
  organization_id text not null,
  run_id text not null,
  n integer not null,
  skill text not null,
  arguments jsonb not null,
  status text not null constraint run_tool_calls_status_valid check (status in ('started', 'completed', 'failed')),
  summary text,
  resources jsonb not null default '[]',
  error_code text,
  conversation_id text,
  started_at timestamptz not null default clock_timestamp(),
  completed_at timestamptz,
  primary key (organization_id, run_id, n),
  foreign key (organization_id, run_id) references app.runs (organization_id, id) on delete cascade
);

/** The spec's transition table, for every writer; terminal states never change (only the output
 * retention may clear a terminal run's output). */
create function app_private.tg_runs__lifecycle() returns trigger
language plpgsql volatile
set search_path = pg_catalog
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
create trigger _100_lifecycle before insert or update on app.runs
  for each row execute function app_private.tg_runs__lifecycle();

/** Appends one event to a run's log (the caller holds the run's row lock, so events are totally
 * ordered) and wakes the streams of every process. */
create function app_private.run_event(p_org text, p_run_id text, p_type text, p_data jsonb) returns integer
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_seq integer;
begin
  -- Callers hold the run's row lock, so this max is not raced.
  v_seq := coalesce((select max(e.seq) from app.run_events e where e.organization_id = p_org and e.run_id = p_run_id), 0) + 1;
  insert into app.run_events (organization_id, run_id, seq, type, data) values (p_org, p_run_id, v_seq, p_type, p_data);
  perform pg_notify('svc_run_events', p_run_id);
  return v_seq;
end
$$;

/** Status changes become stream events and, where the catalogue has one, webhook events. */
create function app_private.tg_runs__events() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
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
create trigger _900_events after update of status on app.runs
  for each row execute function app_private.tg_runs__events();

insert into app_private.event_types (name, resource_type, emitted_by, description, subscribable) values
  ('run.completed', 'run', '{createAgentRun,submitRunAction}', 'A run succeeded; its output is on the run (GET /v1/runs/{id}).', true),
  ('run.failed', 'run', '{createAgentRun,submitRunAction}', 'A run failed; the run''s error says why.', true),
  ('run.requires_action', 'run', '{createAgentRun,submitRunAction}', 'A run waits for your choice (submitRunAction).', true),
  ('run.cancelled', 'run', '{cancelRun}', 'A run was cancelled; it lists the tool operations that completed.', true);

alter table app.runs enable row level security;
alter table app.runs force row level security;
create policy "Clients see their own runs" on app.runs for select to svc_api
  using (organization_id = (select app.current_organization_id()) and client_id = (select app.current_client_id()));
create policy "Clients start runs" on app.runs for insert to svc_api
  with check (organization_id = (select app.current_organization_id()) and client_id = (select app.current_client_id()));
create policy "Clients answer and cancel their own runs" on app.runs for update to svc_api
  using (organization_id = (select app.current_organization_id()) and client_id = (select app.current_client_id()))
  with check (organization_id = (select app.current_organization_id()) and client_id = (select app.current_client_id()));
grant select, insert, update (status, required_action, state, completed_at) on app.runs to svc_api;

alter table app.run_events enable row level security;
alter table app.run_events force row level security;
create policy "Events are readable with their run" on app.run_events for select to svc_api
  using (organization_id = (select app.current_organization_id())
         and exists (select from app.runs r where r.organization_id = run_events.organization_id and r.id = run_events.run_id));
grant select on app.run_events to svc_api;

alter table app.run_tool_calls enable row level security;
alter table app.run_tool_calls force row level security;
create policy "Tool calls are readable with their run" on app.run_tool_calls for select to svc_api
  using (organization_id = (select app.current_organization_id())
         and exists (select from app.runs r where r.organization_id = run_tool_calls.organization_id and r.id = run_tool_calls.run_id));
grant select on app.run_tool_calls to svc_api;

/** 4. The api surface. */
create view api.agents as
select d.id, d.required_roles, d.accepted_principal_types, p.status as publication,
       jsonb_build_object('object', 'agent', 'id', d.id, 'name', d.name, 'description', d.description, 'status', 'published',
         'accepted_principal_types', to_jsonb(d.accepted_principal_types), 'required_roles', to_jsonb(d.required_roles),
         'supports_subject', d.supports_subject, 'input_schema', d.input_schema, 'output_schema', d.output_schema,
         'version', d.version, 'skills', to_jsonb(d.skills || d.optional_skills)) as doc,
       null::integer as version, d.id as sort_id
  from app_private.agent_definitions d
  join app.agent_publications p on p.organization_id = (select app.current_organization_id()) and p.agent_id = d.id
 where p.status = 'published' and 'api_client' = any (d.accepted_principal_types)
   and d.required_roles <@ (select app.current_roles());
alter view api.agents owner to svc_api;
grant select on api.agents to svc_runtime;

/** The organization's agent: AGENT_NOT_FOUND when the organization has no such agent,
 * AGENT_NOT_PUBLISHED when it unpublished it (so a client holding its id learns why it went). */
create function app_private.agent_lookup(p_id text) returns app_private.agent_definitions
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  d app_private.agent_definitions;
  v_status text;
begin
  select x.* into d from app_private.agent_definitions x where x.id = p_id;
  select p.status into v_status from app.agent_publications p where p.organization_id = app.current_organization_id() and p.agent_id = p_id;
  if d.id is null or v_status is null then
    perform app_private.raise('SVN04', 'AGENT_NOT_FOUND', format('no agent %s', p_id));
  end if;
  if v_status <> 'published' then
    perform app_private.raise('SVN04', 'AGENT_NOT_PUBLISHED', format('%s is not published in your organization', p_id));
  end if;
  return d;
end
$$;

/** getAgent: also API_PRINCIPAL_NOT_SUPPORTED and ROLE_REQUIRED (the agent's required_roles, all of them). */
create function api.agent_get(p_id text) returns table (doc jsonb, version integer)
language plpgsql stable security definer
set search_path = pg_catalog
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
  return query select v.doc, v.version from api.agents v where v.id = p_id;
end
$$;

create function api.agent_input_schema(p_id text) returns jsonb
language sql stable security definer
set search_path = pg_catalog
as $$ select (app_private.agent_lookup(p_id)).input_schema $$;

/** Whether the calling client may use one skill now, as a blocker (null when it may). */
create function app_private.skill_blocker(p_skill text, p_subject_member_id text) returns jsonb
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  k app_private.agent_skills;
  v_level text;
  v_ready jsonb;
begin
  select * into k from app_private.agent_skills x where x.name = p_skill;
  select c.license_level into v_level from app.api_clients c where c.id = app.current_client_id();
  if k.license_level = 'manager' and v_level is distinct from 'manager' then
    return jsonb_build_object('code', 'LICENSE_LEVEL_REQUIRED', 'skill', p_skill,
      'message', format('the skill %s needs a Manager-level license', p_skill));
  end if;
  if not k.required_roles <@ app.current_roles() then
    return jsonb_build_object('code', 'ROLE_REQUIRED', 'skill', p_skill,
      'message', format('the skill %s needs the Roles %s', p_skill, array_to_string(k.required_roles, ', ')));
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

/** Every blocker of starting an agent, in the order the checks run (readiness lists them all,
 * createAgentRun answers the first). */
create function api.agent_blockers(p_id text, p_subject_member_id text, p_model_available boolean) returns jsonb
language plpgsql stable security definer
set search_path = pg_catalog
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

/** checkAgentReadiness: performs nothing. Input problems (found by the caller with ajv) come in as blockers. */
create function api.agent_readiness(p_id text, p_subject jsonb, p_input_blockers jsonb, p_model_available boolean) returns jsonb
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  v_subject text := p_subject ->> 'member_id';
  v_blockers jsonb;
  d app_private.agent_definitions;
begin
  v_blockers := api.agent_blockers(p_id, null, p_model_available);
  select * into d from app_private.agent_definitions x where x.id = p_id;
  if v_subject is not null then
    if not d.supports_subject or exists (select from app_private.agent_skills k where k.name = any (d.skills) and k.subject_dependent and not k.supports_subject) then
      v_blockers := v_blockers || jsonb_build_object('code', 'SUBJECT_NOT_SUPPORTED', 'message', format('%s does not act for a subject', p_id));
    elsif not exists (select from app.members m where m.organization_id = app.current_organization_id() and m.id = v_subject and m.status = 'active') then
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

create view api.runs as
select r.organization_id, r.id, r.kind, r.status, r.agent_id, r.conversation_id, r.created_at, r.output_purged,
       jsonb_build_object('object', 'run', 'id', r.id, 'kind', r.kind, 'status', r.status, 'agent_id', r.agent_id,
         'agent_version', r.agent_version, 'conversation_id', r.conversation_id,
         'actor', jsonb_build_object('type', 'api_client', 'id', r.client_id),
         'subject', r.subject, 'input', r.input, 'metadata', r.metadata, 'output', r.output,
         'output_expired', r.output_purged, 'required_action', r.required_action, 'error', r.error,
         'tool_operations', coalesce((select jsonb_agg(jsonb_build_object('skill', c.skill, 'status', c.status, 'summary', c.summary,
                                                'resources', c.resources, 'error_code', c.error_code,
                                                'started_at', app_private.iso_timestamp(c.started_at),
                                                'completed_at', app_private.iso_timestamp(c.completed_at)) order by c.n)
                                        from app.run_tool_calls c where c.organization_id = r.organization_id and c.run_id = r.id), '[]'),
         'created_at', app_private.iso_timestamp(r.created_at), 'started_at', app_private.iso_timestamp(r.started_at),
         'completed_at', app_private.iso_timestamp(r.completed_at)) as doc,
       null::integer as version
  from app.runs r;
alter view api.runs owner to svc_api;
grant select on api.runs to svc_runtime;

/** createAgentRun: the agent, every check of its start (the first blocker answers), then a queued run and its job. */
create function api.agent_run_create(p_id text, p_input jsonb, p_subject jsonb, p_metadata jsonb, p_model_available boolean) returns jsonb
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
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
  values (app.current_organization_id(), 'agent', d.id, d.version, app.current_client_id(), p_subject, p_input, coalesce(p_metadata, '{}'))
  returning id into v_id;
  perform app_private.queue_agent_run(v_id);
  return (select v.doc from api.runs v where v.id = v_id);
end
$$;

create function app_private.queue_agent_run(p_run_id text) returns void
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  perform graphile_worker.add_job('agent_run', json_build_object('run_id', p_run_id), max_attempts => 3);
end
$$;
grant execute on function app_private.queue_agent_run(text) to svc_api;

create function api.run_get(p_id text) returns table (doc jsonb, version integer)
language sql stable security definer
set search_path = pg_catalog
as $$ select v.doc, v.version from api.runs v where v.id = p_id $$;

create function app_private.run_lock(p_id text) returns app.runs
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  r app.runs;
begin
  select x.* into r from app.runs x where x.organization_id = app.current_organization_id() and x.id = p_id for update;
  if not found then
    perform app_private.raise('SVN04', 'RUN_NOT_FOUND', format('no run %s of your client', p_id));
  end if;
  return r;
end
$$;

/** submitRunAction: only while requires_action, only the offered action and one of its choices
 * (the rest of the response was checked against required_action.schema by the caller). The run is
 * queued again; nothing else changes (no approval, no identity, no permission). */
create function api.run_submit_action(p_id text, p_action_id text, p_response jsonb) returns jsonb
language plpgsql volatile security definer
set search_path = pg_catalog
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
  return (select v.doc from api.runs v where v.id = p_id);
end
$$;

/** cancelRun: best effort. A run applying a tool operation holds its row; when that does not end
 * within a second, the cancel is not available now (RUN_CANCEL_NOT_AVAILABLE: retry), so a cancel
 * never interrupts an operation half-way. Effects of completed tool operations stay. */
create function api.run_cancel(p_id text) returns jsonb
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  r app.runs;
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
  perform set_config('lock_timeout', '0', true);
  if r.status in ('succeeded', 'failed', 'cancelled') then
    perform app_private.raise('SVC09', 'RUN_ALREADY_TERMINAL', format('the run is already %s', r.status));
  end if;
  update app.runs x set status = 'cancelled', required_action = null, completed_at = now()
   where x.organization_id = r.organization_id and x.id = p_id;
  return (select v.doc from api.runs v where v.id = p_id);
end
$$;

/** Events of a run after a sequence number, for the stream: RUN_NOT_FOUND, RUN_OUTPUT_EXPIRED. */
create function api.run_events_after(p_id text, p_after integer, p_limit integer)
returns table (seq integer, type text, data jsonb, created_at text, terminal boolean)
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  r app.runs;
begin
  select x.* into r from app.runs x where x.organization_id = app.current_organization_id() and x.id = p_id;
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

do $$
declare
  r record;
begin
  for r in select p.oid::regprocedure as fn from pg_proc p join pg_namespace n on n.oid = p.pronamespace
            where (n.nspname = 'api' and p.proname in ('agent_get', 'agent_input_schema', 'agent_blockers', 'agent_readiness', 'agent_run_create', 'run_get', 'run_submit_action',
                                                       'run_cancel', 'run_events_after'))
               or (n.nspname = 'app_private' and p.proname in ('agent_lookup', 'skill_blocker', 'run_lock')) loop
    execute format('alter function %s owner to svc_api', r.fn);
    if r.fn::text like 'api.%' then
      execute format('grant execute on function %s to svc_runtime', r.fn);
    end if;
  end loop;
end
$$;

/** 5. The worker (as the owner). */

/** Starts (queued → running) or resumes (a job retried after its worker died) a run. */
create function app_private.run_start(p_run_id text) returns jsonb
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  r app.runs;
  d app_private.agent_definitions;
begin
  select x.* into r from app.runs x where x.id = p_run_id for update;
  if not found or r.status not in ('queued', 'running') then
    return null;
  end if;
  if r.status = 'queued' then
    update app.runs x set status = 'running', started_at = coalesce(x.started_at, now()) where x.organization_id = r.organization_id and x.id = r.id;
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

/** Skills the run's client can use now (a model is offered only these). */
create function app_private.run_available_skills(p_run_id text) returns jsonb
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  r app.runs;
  v jsonb;
begin
  select x.* into r from app.runs x where x.id = p_run_id;
  if not app_private.begin_delivery_context(r.client_id) then
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

/** One tool call, with every check of the spec, as the run's client: the agent still published
 * and accepting API Clients, the client's standing, licence level and Roles for the skill, the
 * subject, the integration connection; then the skill runs as svc_runtime under the client's signed
 * context (row policies, triggers, api checks), and the call is recorded for audit with its events.
 * Returns {ok, result} or {ok: false, error: {code, detail}}; {stopped: status} when the run is no
 * longer running (cancelled meanwhile). */
create function app_private.run_tool(p_run_id text, p_skill text, p_args jsonb, p_rejection jsonb default null) returns jsonb
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
begin
  select x.* into r from app.runs x where x.id = p_run_id for update;
  if not found or r.status <> 'running' then
    return jsonb_build_object('stopped', coalesce(r.status, 'missing'));
  end if;
  select * into d from app_private.agent_definitions x where x.id = r.agent_id;
  select * into k from app_private.agent_skills x where x.name = p_skill;
  p_skill := left(p_skill, 100);
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
         completed_at = clock_timestamp()
   where c.organization_id = r.organization_id and c.run_id = r.id and c.n = v_n;
  perform app_private.run_event(r.organization_id, r.id, 'run.tool.completed',
    jsonb_build_object('tool_call', v_n, 'skill', p_skill, 'status', 'completed', 'summary', v_result ->> 'summary',
                       'resources', coalesce(v_result -> 'resources', '[]')));
  return jsonb_build_object('ok', true, 'result', v_result);
end
$$;

/** run.progress and run.output.delta (safe text only), while the run is running. */
create function app_private.run_note(p_run_id text, p_type text, p_data jsonb) returns boolean
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  r app.runs;
begin
  select x.* into r from app.runs x where x.id = p_run_id for update;
  if not found or r.status <> 'running' or p_type not in ('run.progress', 'run.output.delta') then
    return false;
  end if;
  perform app_private.run_event(r.organization_id, r.id, p_type, p_data);
  return true;
end
$$;

/** The end of one execution: requires_action (with the agent's checkpoint), succeeded or failed.
 * Returns the run's status afterwards (a run cancelled meanwhile stays cancelled). */
create function app_private.run_settle(p_run_id text, p_outcome text, p_payload jsonb, p_state jsonb) returns text
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  r app.runs;
begin
  select x.* into r from app.runs x where x.id = p_run_id for update;
  if not found or r.status <> 'running' then
    return coalesce(r.status, 'missing');
  end if;
  if p_outcome = 'requires_action' then
    update app.runs x set status = 'requires_action', required_action = p_payload, state = coalesce(p_state, x.state)
     where x.organization_id = r.organization_id and x.id = r.id;
  elsif p_outcome = 'succeeded' then
    update app.runs x set status = 'succeeded', output = p_payload, completed_at = now()
     where x.organization_id = r.organization_id and x.id = r.id;
  else
    update app.runs x set status = 'failed', error = p_payload, completed_at = now()
     where x.organization_id = r.organization_id and x.id = r.id;
  end if;
  return p_outcome;
end
$$;

/** Retention: a finished run's output and events go after the retention period (the run stays,
 * and its stream answers RUN_OUTPUT_EXPIRED). */
create function control.purge_expired_runs(p_retention interval) returns integer
language plpgsql volatile
set search_path = pg_catalog
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

/* Runs are visible to webhook subscriptions of their client: app_private.event_resource_visible ('run'), in 20261126000200. */

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'restore a backup taken before 20261126000100'); end $$;
