-- migrate:up

/** Task workflows are data: statuses and named transitions per organization. Every organization
 * gets the default workflow: todo -start-> in_progress -complete-> done, with block/unblock,
 * cancel and reopen. */
create table app.task_workflows (
  organization_id text not null references app.organizations on delete cascade,
  id text primary key default app_private.new_id('twf'),
  name text not null,
  is_default boolean not null default false,
  allow_cross_project_dependencies boolean not null default false,
  -- The organization's task policy: may a member-only client add notes?
  members_may_add_notes boolean not null default false,
  unique (organization_id, id)
);
create unique index task_workflows_one_default on app.task_workflows (organization_id) where is_default;

create table app.task_workflow_statuses (
  organization_id text not null,
  workflow_id text not null,
  status text not null constraint task_workflow_statuses_format check (status ~ '^[a-z][a-z0-9_]{0,40}$'),
  category text not null constraint task_workflow_statuses_category_valid check (category in ('open', 'done', 'cancelled')),
  is_initial boolean not null default false,
  primary key (workflow_id, status),
  foreign key (organization_id, workflow_id) references app.task_workflows (organization_id, id) on delete cascade
);
create unique index task_workflow_statuses_one_initial on app.task_workflow_statuses (workflow_id) where is_initial;

create table app.task_workflow_transitions (
  organization_id text not null,
  workflow_id text not null,
  name text not null constraint task_workflow_transitions_format check (name ~ '^[a-z][a-z0-9_]{0,40}$'),
  from_status text not null,
  to_status text not null,
  primary key (workflow_id, name, from_status),
  foreign key (workflow_id, from_status) references app.task_workflow_statuses (workflow_id, status) on delete cascade,
  foreign key (workflow_id, to_status) references app.task_workflow_statuses (workflow_id, status) on delete cascade
);
create index task_workflow_transitions_pair on app.task_workflow_transitions (workflow_id, from_status, to_status);

do $$
declare
  t text;
begin
  foreach t in array array['task_workflows', 'task_workflow_statuses', 'task_workflow_transitions'] loop
    execute format('alter table app.%I enable row level security', t);
    execute format('alter table app.%I force row level security', t);
    execute format('create policy "Clients see their organization''s workflows" on app.%I for select to svc_runtime
                      using (organization_id = (select app.current_organization_id()))', t);
    execute format('grant select on app.%I to svc_runtime', t);
  end loop;
end
$$;

create function app_private.seed_default_task_workflow(p_org text) returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  v_wf text := app_private.new_id('twf');
begin
  insert into app.task_workflows (organization_id, id, name, is_default) values (p_org, v_wf, 'Default', true);
  insert into app.task_workflow_statuses (organization_id, workflow_id, status, category, is_initial)
  values (p_org, v_wf, 'todo', 'open', true), (p_org, v_wf, 'in_progress', 'open', false),
         (p_org, v_wf, 'blocked', 'open', false), (p_org, v_wf, 'done', 'done', false),
         (p_org, v_wf, 'cancelled', 'cancelled', false);
  insert into app.task_workflow_transitions (organization_id, workflow_id, name, from_status, to_status)
  values (p_org, v_wf, 'start', 'todo', 'in_progress'),
         (p_org, v_wf, 'block', 'todo', 'blocked'), (p_org, v_wf, 'block', 'in_progress', 'blocked'),
         (p_org, v_wf, 'unblock', 'blocked', 'in_progress'),
         (p_org, v_wf, 'complete', 'todo', 'done'), (p_org, v_wf, 'complete', 'in_progress', 'done'),
         (p_org, v_wf, 'cancel', 'todo', 'cancelled'), (p_org, v_wf, 'cancel', 'in_progress', 'cancelled'),
         (p_org, v_wf, 'cancel', 'blocked', 'cancelled'),
         (p_org, v_wf, 'reopen', 'done', 'todo'), (p_org, v_wf, 'reopen', 'cancelled', 'todo');
end
$$;

create function app_private.tg_organizations__seed_task_workflow() returns trigger
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  perform app_private.seed_default_task_workflow(new.id);
  return null;
end
$$;
create trigger _810_seed_task_workflow after insert on app.organizations
  for each row execute function app_private.tg_organizations__seed_task_workflow();
select app_private.seed_default_task_workflow(id) from app.organizations;

/** Control plane: the organization's task policy. */
create function control.task_policy_set(p_org text, p_members_may_add_notes boolean default null,
                                        p_allow_cross_project_dependencies boolean default null) returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  update app.task_workflows
     set members_may_add_notes = coalesce(p_members_may_add_notes, members_may_add_notes),
         allow_cross_project_dependencies = coalesce(p_allow_cross_project_dependencies, allow_cross_project_dependencies)
   where organization_id = p_org and is_default;
  perform app_private.require_found(found, 'ORGANIZATION_NOT_FOUND', p_org);
end
$$;

/** Tasks */
create table app.tasks (
  organization_id text not null references app.organizations on delete cascade,
  id text primary key default app_private.new_id('tsk'),
  project_id text not null references app.projects on delete restrict,
  workflow_id text not null,
  code text constraint tasks_code_format check (code ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$'),
  name text not null constraint tasks_name_length check (length(name) between 1 and 500),
  description text constraint tasks_description_length check (length(description) <= 20000),
  status text not null,
  priority text not null default 'medium' constraint tasks_priority_valid check (priority in ('low', 'medium', 'high', 'urgent')),
  start_at timestamptz,
  due_at timestamptz,
  completed_at timestamptz,
  assignee_member_ids text[] not null default '{}'
    constraint tasks_assignees_bounded check (cardinality(assignee_member_ids) <= 50),
  custom_fields jsonb not null default '{}',
  archived_at timestamptz,
  created_by_client_id text references app.api_clients on delete restrict,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  version integer not null default 1,
  constraint tasks_dates_ordered check (start_at is null or due_at is null or due_at >= start_at),
  foreign key (workflow_id, status) references app.task_workflow_statuses (workflow_id, status) on delete restrict,
  -- Tenant-scoped references: a task can only use its own organization's workflow.
  foreign key (organization_id, workflow_id) references app.task_workflows (organization_id, id) on delete restrict,
  foreign key (organization_id, project_id) references app.projects (organization_id, id) on delete restrict,
  unique (organization_id, id)
);
create unique index tasks_code_unique on app.tasks (project_id, lower(code)) where code is not null;
create index tasks_org_created on app.tasks (organization_id, created_at, id);
create index tasks_org_due on app.tasks (organization_id, due_at, id);
create index tasks_org_project on app.tasks (organization_id, project_id, created_at, id);
create index tasks_assignees on app.tasks using gin (assignee_member_ids);

create trigger _100_touch_version before update on app.tasks
  for each row execute function app_private.tg__touch_version();

/** A task's status changes only along a transition of its workflow, whoever issues the UPDATE. */
create function app_private.tg_tasks__legal_transition() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_category text;
begin
  if tg_op = 'INSERT' then
    if not exists (select from app.task_workflow_statuses s where s.workflow_id = new.workflow_id and s.status = new.status
                    and s.is_initial) then
      perform app_private.raise('SVV23', 'INVALID_TRANSITION', format('a new task starts in its workflow''s initial status, not %s', new.status));
    end if;
    new.completed_at := null;
  elsif new.status <> old.status then
    if not exists (select from app.task_workflow_transitions t
                    where t.workflow_id = new.workflow_id and t.from_status = old.status and t.to_status = new.status) then
      perform app_private.raise('SVV23', 'INVALID_TRANSITION', format('no transition leads from %s to %s', old.status, new.status));
    end if;
    -- completed_at belongs to done statuses: set on completion (now unless given), cleared otherwise.
    select s.category into v_category from app.task_workflow_statuses s where s.workflow_id = new.workflow_id and s.status = new.status;
    new.completed_at := case when v_category = 'done' then coalesce(new.completed_at, now()) end;
  elsif new.completed_at is distinct from old.completed_at then
    perform app_private.raise('SVV23', 'INVALID_TRANSITION', 'completed_at changes only with a transition into a done status');
  end if;
  if tg_op = 'UPDATE' and new.workflow_id <> old.workflow_id then
    perform app_private.raise('SVV23', 'INVALID_TRANSITION', 'a task cannot change workflow');
  end if;
  return new;
end
$$;
create trigger _150_legal_transition before insert or update on app.tasks
  for each row execute function app_private.tg_tasks__legal_transition();

create function app_private.tg_tasks__check_references() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_errors jsonb := '[]';
  v_bad text[];
begin
  if (tg_op = 'INSERT' or new.project_id <> old.project_id)
     and not exists (select from app.projects p where p.id = new.project_id and p.organization_id = new.organization_id
                      and p.status = 'active') then
    perform app_private.raise('SVN04', 'PROJECT_NOT_FOUND', format('no active project %s in your organization', new.project_id));
  end if;
  if tg_op = 'INSERT' or new.assignee_member_ids is distinct from old.assignee_member_ids then
    select array_agg(a order by a) into v_bad from unnest(new.assignee_member_ids) a
     where not exists (select from app.members m where m.organization_id = new.organization_id and m.id = a and m.status = 'active');
    if v_bad is not null then
      v_errors := v_errors || app_private.error('/assignee_member_ids', 'INVALID_ASSIGNEE',
        'not active members of your organization: ' || array_to_string(v_bad, ', '));
    end if;
    if cardinality(new.assignee_member_ids) <> (select count(distinct a) from unnest(new.assignee_member_ids) a) then
      v_errors := v_errors || app_private.error('/assignee_member_ids', 'INVALID_ASSIGNEE', 'assignees must be distinct');
    end if;
  end if;
  perform app_private.raise_errors(v_errors);
  return new;
end
$$;
create trigger _200_check_references before insert or update on app.tasks
  for each row execute function app_private.tg_tasks__check_references();

/** Archiving: not while an open task depends on this one; restoring: not while the project is
 * archived; and a task of an archived project changes only by being archived. For every writer. */
create function app_private.tg_tasks__archive_rules() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_blockers text[];
  v_project_active boolean;
begin
  select p.status = 'active' into v_project_active from app.projects p where p.id = new.project_id;
  if new.archived_at is not null and old.archived_at is null then
    new.archived_at := now();
    v_blockers := app_private.task_archive_blockers(new.id);
    if cardinality(v_blockers) > 0 then
      perform app_private.raise('SVC16', 'TASK_ARCHIVE_BLOCKED', 'open tasks depend on this task: ' || array_to_string(v_blockers, ', '));
    end if;
    return new;
  end if;
  if not v_project_active then
    perform app_private.raise('SVC16', 'TASK_ARCHIVE_BLOCKED',
      case when new.archived_at is null and old.archived_at is not null
           then 'the task''s project is archived: restore the project first'
           else 'the task''s project is archived: restore the project before changing its tasks' end);
  end if;
  if old.archived_at is not null and new.archived_at is not null then
    perform app_private.raise('SVC16', 'TASK_ARCHIVE_BLOCKED', 'the task is archived: restore it before changing it');
  end if;
  return new;
end
$$;
create trigger _120_archive_rules before update on app.tasks
  for each row execute function app_private.tg_tasks__archive_rules();

create trigger _300_check_custom_fields before insert or update on app.tasks
  for each row execute function app_private.tg__check_custom_fields('task');

alter table app.tasks enable row level security;
alter table app.tasks force row level security;
create policy "Clients with any Role see tasks of their organization" on app.tasks for select to svc_runtime
  using (organization_id = (select app.current_organization_id())
         and (select app.has_any_role('{member,manager,finance,hr}')));
create policy "Managers create tasks" on app.tasks for insert to svc_runtime
  with check (organization_id = (select app.current_organization_id()) and (select app.has_role('manager')));
create policy "Managers update tasks" on app.tasks for update to svc_runtime
  using (organization_id = (select app.current_organization_id()) and (select app.has_role('manager')))
  with check (organization_id = (select app.current_organization_id()) and (select app.has_role('manager')));
grant select on app.tasks to svc_runtime;
grant insert (organization_id, project_id, workflow_id, code, name, description, status, priority, start_at, due_at,
              assignee_member_ids, custom_fields, created_by_client_id) on app.tasks to svc_runtime;
-- updated_at is settable only to bump the version (tg__touch_version overwrites it with now()).
grant update (code, name, description, status, priority, start_at, due_at, completed_at, assignee_member_ids,
              custom_fields, archived_at, updated_at) on app.tasks to svc_runtime;

/** Dependencies: a task's predecessors. No cycles, whoever inserts; cross-project only where
 * the workflow allows it. */
create table app.task_dependencies (
  organization_id text not null references app.organizations on delete cascade,
  task_id text not null,
  predecessor_task_id text not null,
  primary key (task_id, predecessor_task_id),
  foreign key (organization_id, task_id) references app.tasks (organization_id, id) on delete cascade,
  foreign key (organization_id, predecessor_task_id) references app.tasks (organization_id, id) on delete cascade,
  constraint task_dependencies_not_self check (task_id <> predecessor_task_id)
);
create index task_dependencies_predecessor on app.task_dependencies (predecessor_task_id);

create function app_private.tg_task_dependencies__no_cycle() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_task app.tasks;
  v_pred app.tasks;
begin
  -- Serialize dependency changes per organization: two concurrent inserts could otherwise
  -- each pass the check and close a cycle together.
  perform pg_advisory_xact_lock(hashtextextended('svc.task_dependencies:' || new.organization_id, 0));
  -- The check below must see dependencies committed while we waited for the lock: only a
  -- statement snapshot (read committed) does.
  if current_setting('transaction_isolation') <> 'read committed' then
    perform app_private.raise('SVC09', 'CONFLICT', 'dependencies change only in read committed transactions');
  end if;
  select * into v_task from app.tasks where id = new.task_id;
  select * into v_pred from app.tasks where id = new.predecessor_task_id;
  if v_pred.id is null or v_pred.organization_id <> new.organization_id or v_task.organization_id <> new.organization_id then
    perform app_private.raise('SVN04', 'TASK_NOT_FOUND', format('no task %s in your organization', new.predecessor_task_id));
  end if;
  if v_pred.project_id <> v_task.project_id and not (select allow_cross_project_dependencies from app.task_workflows w
                                                       where w.id = v_task.workflow_id) then
    perform app_private.raise('SVV24', 'DEPENDENCY_CYCLE',
      format('%s is in another project and the workflow does not allow cross-project dependencies', v_pred.id));
  end if;
  if exists (
    with recursive upstream(id) as (
      select d.predecessor_task_id from app.task_dependencies d where d.task_id = new.predecessor_task_id
      union
      select d.predecessor_task_id from app.task_dependencies d join upstream u on d.task_id = u.id
    )
    select from upstream where id = new.task_id
  ) then
    perform app_private.raise('SVV24', 'DEPENDENCY_CYCLE',
      format('%s already depends, directly or indirectly, on %s', new.predecessor_task_id, new.task_id));
  end if;
  return new;
end
$$;
create trigger _100_no_cycle before insert or update on app.task_dependencies
  for each row execute function app_private.tg_task_dependencies__no_cycle();

alter table app.task_dependencies enable row level security;
alter table app.task_dependencies force row level security;
create policy "Clients see dependencies in their organization" on app.task_dependencies for select to svc_runtime
  using (organization_id = (select app.current_organization_id()));
create policy "Managers change dependencies" on app.task_dependencies for all to svc_runtime
  using (organization_id = (select app.current_organization_id()) and (select app.has_role('manager')))
  with check (organization_id = (select app.current_organization_id()) and (select app.has_role('manager')));
grant select, insert, delete on app.task_dependencies to svc_runtime;

/** Notes: appended, never edited. The client is the author; the subject records whom it concerns. */
create table app.task_notes (
  organization_id text not null references app.organizations on delete cascade,
  id text primary key default app_private.new_id('tnote'),
  task_id text not null,
  text text not null constraint task_notes_text_length check (length(text) between 1 and 20000),
  subject_member_id text,
  author_client_id text not null references app.api_clients on delete restrict,
  created_at timestamptz not null default now(),
  foreign key (organization_id, subject_member_id) references app.members (organization_id, id) on delete restrict,
  foreign key (organization_id, task_id) references app.tasks (organization_id, id) on delete cascade
);
create index task_notes_task on app.task_notes (task_id, created_at);
alter table app.task_notes enable row level security;
alter table app.task_notes force row level security;
create policy "Clients see notes in their organization" on app.task_notes for select to svc_runtime
  using (organization_id = (select app.current_organization_id()) and (select app.has_any_role('{member,manager}')));
create policy "Managers, or members where the task policy permits, add notes" on app.task_notes for insert to svc_runtime
  with check (organization_id = (select app.current_organization_id())
              and author_client_id = (select app.current_client_id())
              and ((select app.has_role('manager'))
                   or ((select app.has_role('member')) and exists (
                         select from app.tasks t join app.task_workflows w on w.id = t.workflow_id
                          where t.id = task_id and w.members_may_add_notes))));
grant select, insert (organization_id, task_id, text, subject_member_id, author_client_id) on app.task_notes to svc_runtime;

/** Work in progress blocks archiving: a project with open tasks; a task that an open task waits on. */
create or replace function app_private.project_archive_blockers(p_project_id text) returns text[]
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  v_open integer;
begin
  select count(*) into v_open
    from app.tasks t join app.task_workflow_statuses s on s.workflow_id = t.workflow_id and s.status = t.status
   where t.project_id = p_project_id and (t.organization_id = app.current_organization_id() or app.current_organization_id() is null)
     and t.archived_at is null and s.category = 'open';
  return case when v_open > 0 then array[format('%s open task(s): complete, cancel or archive them first', v_open)]
              else array[]::text[] end;
end
$$;

create function app_private.task_archive_blockers(p_task_id text) returns text[]
language sql stable security definer
set search_path = pg_catalog
as $$
  select coalesce(array_agg(t.id order by t.id), array[]::text[])
    from app.task_dependencies d
    join app.tasks t on t.id = d.task_id
    join app.task_workflow_statuses s on s.workflow_id = t.workflow_id and s.status = t.status
   where d.predecessor_task_id = p_task_id and t.archived_at is null and s.category = 'open'
     and (t.organization_id = app.current_organization_id() or app.current_organization_id() is null)
$$;
grant execute on function app_private.task_archive_blockers(text) to svc_runtime;

/** Surface: projection per Role. Finance: project-financial context; hr: staffing context. */
create view api.tasks with (security_invoker = true) as
select t.organization_id, t.id, t.project_id, t.status, t.priority, t.due_at, t.created_at, t.updated_at, t.name, t.code,
       t.assignee_member_ids, t.archived_at, t.version,
       jsonb_build_object('object', 'task', 'id', t.id, 'project_id', t.project_id, 'code', t.code, 'name', t.name,
         'status', t.status, 'archived', t.archived_at is not null,
         'created_at', app_private.iso_timestamp(t.created_at), 'updated_at', app_private.iso_timestamp(t.updated_at),
         'custom_fields', case when t.custom_fields = '{}'::jsonb then '{}'::jsonb
                               else app_private.readable_custom_fields(t.organization_id, 'task', t.custom_fields) end)
       || case when (select app.has_any_role('{member,manager}')) then jsonb_build_object(
            'description', t.description, 'priority', t.priority,
            'start_at', app_private.iso_timestamp(t.start_at), 'due_at', app_private.iso_timestamp(t.due_at),
            'completed_at', app_private.iso_timestamp(t.completed_at),
            'assignee_member_ids', to_jsonb(t.assignee_member_ids),
            'predecessor_task_ids', coalesce((select jsonb_agg(d.predecessor_task_id order by d.predecessor_task_id)
                                                from app.task_dependencies d where d.task_id = t.id), '[]'::jsonb),
            'transitions', coalesce((select jsonb_agg(jsonb_build_object('name', tr.name, 'to_status', tr.to_status)
                                                      order by tr.name)
                                       from app.task_workflow_transitions tr
                                      where tr.workflow_id = t.workflow_id and tr.from_status = t.status
                                        and t.archived_at is null), '[]'::jsonb))
          else '{}'::jsonb end
       || case when (select app.has_role('finance')) then jsonb_build_object('completed_at', app_private.iso_timestamp(t.completed_at))
          else '{}'::jsonb end
       || case when (select app.has_role('hr')) then jsonb_build_object(
            'assignee_member_ids', to_jsonb(t.assignee_member_ids),
            'start_at', app_private.iso_timestamp(t.start_at), 'due_at', app_private.iso_timestamp(t.due_at))
          else '{}'::jsonb end as doc
  from app.tasks t;
grant select on api.tasks to svc_runtime;

create function api.task_get(p_id text) returns table (doc jsonb, version integer)
language sql stable
set search_path = pg_catalog
as $$ select doc, version from api.tasks where id = p_id $$;
grant execute on function api.task_get(text) to svc_runtime;

create function app_private.task_not_found(p_id text) returns void
language sql volatile
set search_path = pg_catalog
as $$ select app_private.raise('SVN04', 'TASK_NOT_FOUND', format('no task %s in your organization', p_id)) $$;
grant execute on function app_private.task_not_found(text) to svc_runtime;

create function app_private.normalize_emails(p jsonb) returns text[]
language sql immutable
set search_path = pg_catalog
as $$ select coalesce(array_agg(app_private.normalize_email(e)), '{}') from jsonb_array_elements_text(p) e $$;
grant execute on function app_private.normalize_emails(jsonb) to svc_runtime;

create function api.task_create(p_body jsonb, p_schema_version integer) returns table (doc jsonb, version integer)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  v_id text;
  v_workflow text;
  v_initial text;
begin
  perform api.require_any_role('{manager}', 'createTask');
  perform app_private.check_schema_version('task', p_schema_version);
  select w.id, s.status into v_workflow, v_initial
    from app.task_workflows w join app.task_workflow_statuses s on s.workflow_id = w.id and s.is_initial
   where w.organization_id = app.current_organization_id() and w.is_default;
  insert into app.tasks (organization_id, project_id, workflow_id, code, name, description, status, priority, start_at, due_at,
                         assignee_member_ids, custom_fields, created_by_client_id)
  values (app.current_organization_id(), p_body ->> 'project_id', v_workflow, p_body ->> 'code', p_body ->> 'name',
          p_body ->> 'description', v_initial, coalesce(p_body ->> 'priority', 'medium'),
          (p_body ->> 'start_at')::timestamptz, (p_body ->> 'due_at')::timestamptz,
          app_private.normalize_emails(coalesce(p_body -> 'assignee_member_ids', '[]')),
          coalesce(p_body -> 'custom_fields', '{}'), app.current_client_id())
  returning id into v_id;
  return query select * from api.task_get(v_id);
end
$$;
grant execute on function api.task_create(jsonb, integer) to svc_runtime;

create function app_private.lock_task(p_id text) returns app.tasks
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  t app.tasks;
begin
  select * into t from app.tasks where id = p_id for update;
  if not found then
    perform app_private.task_not_found(p_id);
  end if;
  return t;
end
$$;
grant execute on function app_private.lock_task(text) to svc_runtime;

create function api.task_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer)
returns table (doc jsonb, version integer)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  t app.tasks;
  v_errors jsonb := '[]';
  k text;
begin
  perform api.require_any_role('{manager}', 'updateTask');
  t := app_private.lock_task(p_id);
  perform app_private.check_if_match(t.version, p_if_match);
  for k in select jsonb_object_keys(p_patch) order by 1 loop
    if k in ('id', 'object', 'organization_id', 'project_id', 'status', 'created_at', 'updated_at', 'version',
             'predecessor_task_ids', 'transitions', 'completed_at', 'archived') then
      v_errors := v_errors || app_private.error('/' || k, 'IMMUTABLE_FIELD',
        format('%s cannot be changed here%s', k, case k
          when 'status' then ': use POST /v1/tasks/{task_id}/transitions'
          when 'predecessor_task_ids' then ': use PUT /v1/tasks/{task_id}/dependencies'
          when 'archived' then ': use archive and restore' else '' end));
    end if;
  end loop;
  perform app_private.raise_errors(v_errors);
  perform app_private.check_schema_version('task', p_schema_version);
  perform app_private.raise_errors(app_private.custom_field_patch_errors('task', t.custom_fields, p_patch -> 'custom_fields'));
  update app.tasks set
    code = case when p_patch ? 'code' then p_patch ->> 'code' else t.code end,
    name = case when p_patch ? 'name' then p_patch ->> 'name' else t.name end,
    description = case when p_patch ? 'description' then p_patch ->> 'description' else t.description end,
    priority = case when p_patch ? 'priority' then p_patch ->> 'priority' else t.priority end,
    start_at = case when p_patch ? 'start_at' then (p_patch ->> 'start_at')::timestamptz else t.start_at end,
    due_at = case when p_patch ? 'due_at' then (p_patch ->> 'due_at')::timestamptz else t.due_at end,
    assignee_member_ids = case when p_patch ? 'assignee_member_ids'
                               then app_private.normalize_emails(p_patch -> 'assignee_member_ids') else t.assignee_member_ids end,
    custom_fields = case when p_patch ? 'custom_fields'
                         then app_private.merge_custom_fields(t.custom_fields, p_patch -> 'custom_fields') else t.custom_fields end
  where id = p_id;
  return query select * from api.task_get(p_id);
end
$$;
grant execute on function api.task_update(text, integer[], jsonb, integer) to svc_runtime;

create function app_private.check_subject(p_subject_member_id text) returns text
language plpgsql stable security definer
set search_path = pg_catalog
as $$
begin
  if p_subject_member_id is null then
    return null;
  end if;
  if not exists (select from app.members m where m.organization_id = app.current_organization_id()
                  and m.id = p_subject_member_id and m.status = 'active') then
    perform app_private.raise_errors(app_private.error('/subject/member_id', 'INVALID_SUBJECT_MEMBER',
      'subject.member_id must be the exact normalized email of an active member of your organization'));
  end if;
  return p_subject_member_id;
end
$$;
grant execute on function app_private.check_subject(text) to svc_runtime;

/** Task events the API records: transitions with their subject (the client stays the actor). */
create table app.task_activity (
  organization_id text not null references app.organizations on delete cascade,
  id text primary key default app_private.new_id('tact'),
  task_id text not null,
  kind text not null,
  transition text,
  from_status text,
  to_status text,
  actor_client_id text not null,
  subject_member_id text,
  created_at timestamptz not null default now(),
  foreign key (organization_id, task_id) references app.tasks (organization_id, id) on delete cascade
);
alter table app.task_activity enable row level security;
alter table app.task_activity force row level security;
create policy "Managers record task activity" on app.task_activity for insert to svc_runtime
  with check (organization_id = (select app.current_organization_id()) and actor_client_id = (select app.current_client_id())
              and (select app.has_role('manager')));
create policy "Clients see task activity of their organization" on app.task_activity for select to svc_runtime
  using (organization_id = (select app.current_organization_id()) and (select app.has_any_role('{member,manager}')));
grant select, insert (organization_id, task_id, kind, transition, from_status, to_status, actor_client_id, subject_member_id)
  on app.task_activity to svc_runtime;

create function api.task_transition(p_id text, p_transition text, p_completed_at timestamptz, p_subject_member_id text)
returns table (doc jsonb, version integer)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  t app.tasks;
  v_to text;
  v_category text;
  v_subject text;
begin
  perform api.require_any_role('{manager}', 'transitionTask');
  t := app_private.lock_task(p_id);
  v_subject := app_private.check_subject(p_subject_member_id);
  select tr.to_status, s.category into v_to, v_category
    from app.task_workflow_transitions tr
    join app.task_workflow_statuses s on s.workflow_id = tr.workflow_id and s.status = tr.to_status
   where tr.workflow_id = t.workflow_id and tr.name = p_transition and tr.from_status = t.status;
  if v_to is null or t.archived_at is not null then
    perform app_private.raise('SVV23', 'INVALID_TRANSITION',
      format('%s is not offered from status %s%s; see the task''s transitions', p_transition, t.status,
             case when t.archived_at is not null then ' (the task is archived)' else '' end));
  end if;
  if p_completed_at is not null and v_category <> 'done' then
    perform app_private.raise_errors(app_private.error('/completed_at', 'VALIDATION_FAILED',
      'completed_at is accepted only by a transition that completes the task'));
  end if;
  if p_completed_at > now() + interval '5 minutes' then
    perform app_private.raise_errors(app_private.error('/completed_at', 'VALIDATION_FAILED', 'completed_at cannot be in the future'));
  end if;
  update app.tasks set status = v_to,
         completed_at = case when v_category = 'done' then coalesce(p_completed_at, now()) end
   where id = p_id;
  insert into app.task_activity (organization_id, task_id, kind, transition, from_status, to_status, actor_client_id, subject_member_id)
  values (t.organization_id, p_id, 'transition', p_transition, t.status, v_to, app.current_client_id(), v_subject);
  return query select * from api.task_get(p_id);
end
$$;
grant execute on function api.task_transition(text, text, timestamptz, text) to svc_runtime;

create function api.task_add_note(p_id text, p_text text, p_subject_member_id text) returns jsonb
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  t app.tasks;
  n app.task_notes;
begin
  select * into t from app.tasks where id = p_id;
  if not found then
    perform app_private.task_not_found(p_id);
  end if;
  if not app.has_role('manager') and not (app.has_role('member')
       and (select w.members_may_add_notes from app.task_workflows w where w.id = t.workflow_id)) then
    perform app_private.raise('SVR03', 'ROLE_REQUIRED',
      'adding a note requires the manager Role, or member where the organization''s task policy permits');
  end if;
  insert into app.task_notes (organization_id, task_id, text, subject_member_id, author_client_id)
  values (t.organization_id, p_id, p_text, app_private.check_subject(p_subject_member_id), app.current_client_id())
  returning * into n;
  return jsonb_build_object('object', 'task_note', 'id', n.id, 'task_id', n.task_id, 'text', n.text,
    'subject', case when n.subject_member_id is not null then jsonb_build_object('member_id', n.subject_member_id) end,
    'author', jsonb_build_object('type', 'api_client', 'id', n.author_client_id),
    'created_at', app_private.iso_timestamp(n.created_at));
end
$$;
grant execute on function api.task_add_note(text, text, text) to svc_runtime;

create function api.task_replace_dependencies(p_id text, p_if_match integer[], p_predecessors text[])
returns table (doc jsonb, version integer)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  t app.tasks;
  v_missing text[];
begin
  perform api.require_any_role('{manager}', 'replaceTaskDependencies');
  t := app_private.lock_task(p_id);
  perform app_private.check_if_match(t.version, p_if_match);
  select array_agg(x order by x) into v_missing from unnest(p_predecessors) x
   where not exists (select from app.tasks o where o.id = x);
  if v_missing is not null then
    perform app_private.raise_errors(app_private.error('/predecessor_task_ids', 'TASK_NOT_FOUND',
      'no such tasks in your organization: ' || array_to_string(v_missing, ', ')));
  end if;
  delete from app.task_dependencies where task_id = p_id and predecessor_task_id <> all (p_predecessors);
  insert into app.task_dependencies (organization_id, task_id, predecessor_task_id)
  select t.organization_id, p_id, x from unnest(p_predecessors) x
  on conflict do nothing;
  -- The dependency set is part of the task: its ETag changes.
  update app.tasks set updated_at = now() where id = p_id;
  return query select * from api.task_get(p_id);
end
$$;
grant execute on function api.task_replace_dependencies(text, integer[], text[]) to svc_runtime;

create function api.task_set_archived(p_id text, p_archived boolean) returns table (doc jsonb, version integer)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  t app.tasks;
begin
  perform api.require_any_role('{manager}', case when p_archived then 'archiveTask' else 'restoreTask' end);
  t := app_private.lock_task(p_id);
  -- The rules (blocking dependents, archived project) live in tg_tasks__archive_rules.
  if p_archived and t.archived_at is null then
    update app.tasks set archived_at = now() where id = p_id;
  elsif not p_archived and t.archived_at is not null then
    update app.tasks set archived_at = null where id = p_id;
  end if;
  return query select * from api.task_get(p_id);
end
$$;
grant execute on function api.task_set_archived(text, boolean) to svc_runtime;

-- migrate:down
drop function api.task_set_archived(text, boolean);
drop function api.task_replace_dependencies(text, integer[], text[]);
drop function api.task_add_note(text, text, text);
drop function api.task_transition(text, text, timestamptz, text);
drop table app.task_activity;
drop function app_private.check_subject(text);
drop function api.task_update(text, integer[], jsonb, integer);
drop function app_private.lock_task(text);
drop function api.task_create(jsonb, integer);
drop function app_private.normalize_emails(jsonb);
drop function app_private.task_not_found(text);
drop function api.task_get(text);
drop view api.tasks;
drop function app_private.task_archive_blockers(text);
drop table app.task_notes;
drop table app.task_dependencies;
drop function app_private.tg_task_dependencies__no_cycle();
drop table app.tasks;
drop function app_private.tg_tasks__archive_rules();
drop function app_private.tg_tasks__check_references();
drop function app_private.tg_tasks__legal_transition();
drop function control.task_policy_set(text, boolean, boolean);
drop trigger _810_seed_task_workflow on app.organizations;
drop function app_private.tg_organizations__seed_task_workflow();
drop function app_private.seed_default_task_workflow(text);
drop table app.task_workflow_transitions;
drop table app.task_workflow_statuses;
drop table app.task_workflows;
