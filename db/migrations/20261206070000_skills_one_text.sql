-- migrate:up

/** One text for the three skills that read an api view across an organization (billable time of a
 * project, tasks that need attention, days without time), on one server and on a Citus cluster. A
 * coordinator cannot plan those views, so the cluster ran copies of the three that read the views'
 * functions instead; on one server a view's function returns every row of the organization before
 * the skill filters them (45 ms against 1.3 ms for an organization of 5,000 time entries), so each
 * skill reads the view on one server and the view's function on a cluster, in one text. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

create or replace function skills.invoices_billable_time(p_args jsonb, p_subject text) returns jsonb
    language plpgsql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_lines jsonb;
  v_entries jsonb;
begin
  if not exists (select from api.projects(p_args ->> 'project_id') p where p.id = p_args ->> 'project_id') then
    perform app_private.raise('SVN04', 'PROJECT_NOT_FOUND', format('no project %s in your organization', p_args ->> 'project_id'));
  end if;
  -- The project's approved billable entries: on one server through the view, which the planner
  -- filters by project and dates; on a cluster through the view's function (the organization's rows
  -- on its shards), as a coordinator cannot plan the view.
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    select coalesce(jsonb_agg(jsonb_build_object('member_id', g.member_id, 'minutes', g.minutes) order by g.member_id), '[]'),
           coalesce(jsonb_agg(to_jsonb(g.ids)), '[]')
      into v_lines, v_entries
      from (select e.member_id, sum((e.doc ->> 'minutes')::integer)::integer as minutes, array_agg(e.id order by e.id) as ids
              from api.time_entries e
             where e.project_id = p_args ->> 'project_id' and e.work_date between (p_args ->> 'from')::date and (p_args ->> 'to')::date
               and e.deleted_at is null and e.billable and e.status = 'approved'
             group by e.member_id) g;
  else
    select coalesce(jsonb_agg(jsonb_build_object('member_id', g.member_id, 'minutes', g.minutes) order by g.member_id), '[]'),
           coalesce(jsonb_agg(to_jsonb(g.ids)), '[]')
      into v_lines, v_entries
      from (select e.member_id, sum((e.doc ->> 'minutes')::integer)::integer as minutes, array_agg(e.id order by e.id) as ids
              from api.time_entries() e
             where e.project_id = p_args ->> 'project_id' and e.work_date between (p_args ->> 'from')::date and (p_args ->> 'to')::date
               and e.deleted_at is null and e.billable and e.status = 'approved'
             group by e.member_id) g;
  end if;
  return jsonb_build_object('summary', format('%s member(s) with approved billable time', jsonb_array_length(v_lines)),
    'resources', jsonb_build_array(jsonb_build_object('type', 'project', 'id', p_args ->> 'project_id')),
    'data', jsonb_build_object('members', v_lines));
end
$$;

create or replace function skills.tasks_find_attention(p_args jsonb, p_subject text) returns jsonb
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  v_project text := p_args ->> 'project_id';
  v_docs jsonb;
  v_tasks jsonb;
begin
  if not exists (select from api.projects(v_project) p where p.id = v_project) then
    perform app_private.raise('SVN04', 'PROJECT_NOT_FOUND', format('no project %s in your organization', v_project));
  end if;
  -- The project's tasks: on one server through the view, which the planner filters by project; on
  -- a cluster through the view's function (the organization's rows on its shards).
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    select coalesce(jsonb_object_agg(t.id, t.doc), '{}') into v_docs from api.tasks t where t.project_id = v_project and t.archived_at is null;
  else
    select coalesce(jsonb_object_agg(t.id, t.doc), '{}') into v_docs from api.tasks() t where t.project_id = v_project and t.archived_at is null;
  end if;
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
      'manager_member_id', (select p.manager_member_id from api.projects(v_project) p where p.id = v_project), 'tasks', v_tasks));
end
$$;


create or replace function skills.time_missing_days(p_args jsonb, p_subject text) returns jsonb
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
  -- Who worked which day: on one server through the view, which the planner filters by dates; on
  -- a cluster through the view's function (the organization's rows on its shards).
  if to_regclass('pg_catalog.pg_dist_partition') is null then
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
  else
    with days as (
      select d::date as day from generate_series(v_from, v_to, interval '1 day') d where extract(isodow from d) < 6),
    members as (
      select m.id, m.display_name from api.members() m
       where m.status = 'active' and (p_subject is null or m.id = p_subject)),
    worked as (
      select distinct e.member_id, e.work_date from api.time_entries() e
       where e.work_date between v_from and v_to and e.deleted_at is null)
    select coalesce(jsonb_agg(jsonb_build_object('member_id', x.id, 'display_name', x.display_name, 'missing_dates', x.missing)
                              order by x.id), '[]')
      into v_members
      from (select m.id, m.display_name, jsonb_agg(to_char(d.day, 'YYYY-MM-DD') order by d.day) as missing
              from members m cross join days d
             where not exists (select from worked w where w.member_id = m.id and w.work_date = d.day)
             group by m.id, m.display_name) x;
  end if;
  return jsonb_build_object('summary', format('%s member(s) with missing time from %s to %s', jsonb_array_length(v_members), v_from, v_to),
    'resources', coalesce((select jsonb_agg(jsonb_build_object('type', 'member', 'id', x ->> 'member_id')) from jsonb_array_elements(v_members) x), '[]'),
    'data', jsonb_build_object('from', v_from, 'to', v_to, 'members', v_members));
end
$$;

-- migrate:down
set local lock_timeout = '3s';
set local statement_timeout = '60s';
do $$
begin
  if exists (select from pg_extension where extname = 'citus') then
    perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'on a cluster the skills'' earlier copies are not put back: restore a backup');
  end if;
end
$$;

create or replace function skills.invoices_billable_time(p_args jsonb, p_subject text) RETURNS jsonb
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

create or replace function skills.tasks_find_attention(p_args jsonb, p_subject text) RETURNS jsonb
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

create or replace function skills.time_missing_days(p_args jsonb, p_subject text) RETURNS jsonb
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
