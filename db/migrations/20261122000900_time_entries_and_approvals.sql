-- migrate:up

/** Organization policies the time and approval rules read (control plane only). */
alter table app.organizations
  add column show_approver_identities boolean not null default false,
  add column hr_may_read_time_entries boolean not null default false,
  add column time_entry_future_days integer not null default 0
    constraint organizations_time_entry_future_days_range check (time_entry_future_days between 0 and 31);

create function control.org_set_policy(p_org text, p_show_approver_identities boolean default null,
                                       p_hr_may_read_time_entries boolean default null,
                                       p_time_entry_future_days integer default null) returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  update app.organizations
     set show_approver_identities = coalesce(p_show_approver_identities, show_approver_identities),
         hr_may_read_time_entries = coalesce(p_hr_may_read_time_entries, hr_may_read_time_entries),
         time_entry_future_days = coalesce(p_time_entry_future_days, time_entry_future_days)
   where id = p_org;
  perform app_private.require_found(found, 'ORGANIZATION_NOT_FOUND', p_org);
end
$$;

/** Who may read time entries: manager, finance, and hr where the organization permits.
 * A member-only client reads time only through reporting views (not time entry endpoints). */
create function app_private.may_read_time_entries() returns boolean
language sql stable security definer
set search_path = pg_catalog
as $$
  select app.has_any_role('{manager,finance}')
      or (app.has_role('hr') and coalesce((select o.hr_may_read_time_entries from app.organizations o
                                             where o.id = app.current_organization_id()), false))
$$;
grant execute on function app_private.may_read_time_entries() to svc_runtime;

/** Time entries. Lifecycle: draft -> submitted -> approved | rejected; rejected -> submitted again.
 * Only draft and rejected entries can change or be deleted. */
create table app.time_entries (
  organization_id text not null references app.organizations on delete cascade,
  id text primary key default app_private.new_id('tim'),
  member_id text not null,
  project_id text not null references app.projects on delete restrict,
  task_id text references app.tasks on delete restrict,
  work_date date not null,
  minutes integer not null constraint time_entries_minutes_range check (minutes between 1 and 1440),
  billable boolean not null default true,
  notes text constraint time_entries_notes_length check (length(notes) <= 5000),
  status text not null default 'draft'
    constraint time_entries_status_valid check (status in ('draft', 'submitted', 'approved', 'rejected')),
  external_id text constraint time_entries_external_id_length check (length(external_id) between 1 and 255),
  created_by_client_id text not null references app.api_clients on delete restrict,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  deleted_at timestamptz,
  version integer not null default 1,
  foreign key (organization_id, member_id) references app.members (organization_id, id) on delete restrict,
  foreign key (organization_id, project_id) references app.projects (organization_id, id) on delete restrict,
  foreign key (organization_id, task_id) references app.tasks (organization_id, id) on delete restrict,
  unique (organization_id, id)
);
create unique index time_entries_external_id_unique on app.time_entries (created_by_client_id, external_id)
  where external_id is not null and deleted_at is null;
create index time_entries_org_date on app.time_entries (organization_id, work_date, id) where deleted_at is null;
create index time_entries_member_date on app.time_entries (organization_id, member_id, work_date) where deleted_at is null;
create index time_entries_project on app.time_entries (project_id, work_date) where deleted_at is null;

create trigger _100_touch_version before update on app.time_entries
  for each row execute function app_private.tg__touch_version();

/** Locked unless draft or rejected: any change other than the workflow's own status moves. */
create function app_private.tg_time_entries__lock() returns trigger
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  if old.deleted_at is not null then
    perform app_private.raise('SVN04', 'TIME_ENTRY_NOT_FOUND', 'the time entry was deleted');
  end if;
  if old.status in ('draft', 'rejected') then
    if new.status not in (old.status, 'submitted') and new.status <> old.status then
      perform app_private.raise('SVR05', 'APPROVAL_REQUIRED', 'only a named user can approve or reject time');
    end if;
    return new;
  end if;
  -- submitted: only the approval decision moves it; approved: final.
  if old.status = 'submitted' and new.status in ('approved', 'rejected')
     and (new.member_id, new.project_id, new.task_id, new.work_date, new.minutes, new.billable, new.notes,
          new.external_id, new.deleted_at)
         is not distinct from (old.member_id, old.project_id, old.task_id, old.work_date, old.minutes, old.billable,
                               old.notes, old.external_id, old.deleted_at)
     -- Decisions come from the control plane (control.approval_decide, run by the owner), never the runtime role.
     and current_user <> 'svc_runtime' then
    return new;
  end if;
  perform app_private.raise('SVC17', 'TIME_ENTRY_LOCKED',
    format('a %s time entry cannot be changed or deleted', old.status));
end
$$;
create trigger _050_lock before update on app.time_entries
  for each row execute function app_private.tg_time_entries__lock();

create function app_private.tg_time_entries__no_delete() returns trigger
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  perform app_private.raise('SVC17', 'TIME_ENTRY_LOCKED', 'time entries are deleted by marking them, never removed');
end
$$;
create trigger _050_no_delete before delete on app.time_entries
  for each row execute function app_private.tg_time_entries__no_delete();

/** Validity for the work date: subject, project, task, date policy and the member's daily total. */
create function app_private.tg_time_entries__validate() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_errors jsonb := '[]';
  p app.projects;
  t app.tasks;
  o app.organizations;
  v_today date;
  v_total integer;
begin
  if new.deleted_at is not null or (tg_op = 'UPDATE' and new.status <> old.status and old.status not in ('draft', 'rejected')) then
    return new;
  end if;
  select * into o from app.organizations where id = new.organization_id;
  v_today := (now() at time zone o.timezone)::date;
  if not exists (select from app.members m where m.organization_id = new.organization_id and m.id = new.member_id
                  and m.status = 'active') then
    v_errors := v_errors || app_private.error('/subject/member_id', 'INVALID_SUBJECT_MEMBER',
      'subject.member_id must be the exact normalized email of an active member of your organization');
  end if;
  select * into p from app.projects where id = new.project_id and organization_id = new.organization_id;
  if not found or p.status <> 'active' then
    v_errors := v_errors || app_private.error('/project_id', 'INVALID_WORK_DATE',
      'project_id must be an active project of your organization');
  elsif (p.start_date is not null and new.work_date < p.start_date) or (p.end_date is not null and new.work_date > p.end_date) then
    v_errors := v_errors || app_private.error('/work_date', 'INVALID_WORK_DATE',
      format('work_date must be within the project''s dates (%s to %s)', coalesce(p.start_date::text, '…'), coalesce(p.end_date::text, '…')));
  end if;
  if new.task_id is not null then
    select * into t from app.tasks where id = new.task_id and organization_id = new.organization_id;
    if not found or t.project_id <> new.project_id or t.archived_at is not null then
      v_errors := v_errors || app_private.error('/task_id', 'INVALID_WORK_DATE',
        'task_id must be a non-archived task of the project');
    end if;
  end if;
  if new.work_date > v_today + o.time_entry_future_days then
    v_errors := v_errors || app_private.error('/work_date', 'INVALID_WORK_DATE',
      format('work_date is in the future (today is %s in %s)', v_today, o.timezone));
  elsif new.work_date < v_today - 366 then
    v_errors := v_errors || app_private.error('/work_date', 'INVALID_WORK_DATE', 'work_date is more than a year ago');
  end if;
  -- Serialize a member's day: two concurrent entries cannot both squeeze under the daily limit.
  perform pg_advisory_xact_lock(hashtextextended('svc.time:' || new.organization_id || ':' || new.member_id || ':' || new.work_date, 0));
  select coalesce(sum(minutes), 0) into v_total from app.time_entries e
   where e.organization_id = new.organization_id and e.member_id = new.member_id and e.work_date = new.work_date
     and e.deleted_at is null and e.id <> new.id;
  if v_total + new.minutes > 1440 then
    v_errors := v_errors || app_private.error('/minutes', 'INVALID_DURATION',
      format('the member would have %s minutes on %s; a day has 1440', v_total + new.minutes, new.work_date));
  end if;
  perform app_private.raise_errors(v_errors);
  return new;
end
$$;
create trigger _200_validate before insert or update on app.time_entries
  for each row execute function app_private.tg_time_entries__validate();

/** A submitted entry always has a pending approval request: submitting is asking a named user. */
create function app_private.tg_time_entries__submitted_has_approval() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  if new.status = 'submitted' and not exists (
       select from app.approvals a where a.resource_type = 'time_entry' and a.resource_id = new.id and a.status = 'pending') then
    perform app_private.raise('SVR05', 'APPROVAL_REQUIRED', 'submit the time entry through submitTimeEntry, which requests approval');
  end if;
  return null;
end
$$;
create trigger _900_submitted_has_approval after insert or update of status on app.time_entries
  for each row execute function app_private.tg_time_entries__submitted_has_approval();

alter table app.time_entries enable row level security;
alter table app.time_entries force row level security;
create policy "Managers, finance, and hr where permitted read time entries" on app.time_entries for select to svc_runtime
  using (organization_id = (select app.current_organization_id()) and (select app_private.may_read_time_entries()));
create policy "Managers record time" on app.time_entries for insert to svc_runtime
  with check (organization_id = (select app.current_organization_id()) and (select app.has_role('manager'))
              and created_by_client_id = (select app.current_client_id()));
create policy "Managers change time" on app.time_entries for update to svc_runtime
  using (organization_id = (select app.current_organization_id()) and (select app.has_role('manager')))
  with check (organization_id = (select app.current_organization_id()) and (select app.has_role('manager')));
grant select on app.time_entries to svc_runtime;
grant insert (organization_id, member_id, project_id, task_id, work_date, minutes, billable, notes, external_id,
              created_by_client_id) on app.time_entries to svc_runtime;
grant update (project_id, task_id, work_date, minutes, billable, notes, status, deleted_at) on app.time_entries to svc_runtime;

/** Audit of deletions (and other client actions on time). */
create table app.time_entry_audit (
  organization_id text not null references app.organizations on delete cascade,
  id bigint generated always as identity primary key,
  time_entry_id text not null,
  action text not null,
  actor_client_id text not null,
  at timestamptz not null default now(),
  foreign key (organization_id, time_entry_id) references app.time_entries (organization_id, id) on delete restrict
);
alter table app.time_entry_audit enable row level security;
alter table app.time_entry_audit force row level security;
create policy "Managers write the time audit" on app.time_entry_audit for insert to svc_runtime
  with check (organization_id = (select app.current_organization_id()) and actor_client_id = (select app.current_client_id())
              and (select app.has_role('manager')));
grant insert (organization_id, time_entry_id, action, actor_client_id) on app.time_entry_audit to svc_runtime;

/** Approvals: requests to named users. Read-only over the API; decided through the control plane. */
create table app.approvals (
  organization_id text not null references app.organizations on delete cascade,
  id text primary key default app_private.new_id('apr'),
  type text not null constraint approvals_type_valid check (type in ('time_entry')),
  category text not null constraint approvals_category_valid check (category in ('project', 'financial', 'hr')),
  status text not null default 'pending' constraint approvals_status_valid check (status in ('pending', 'approved', 'rejected')),
  resource_type text not null,
  resource_id text not null,
  requested_by_client_id text not null,
  approver_member_id text,
  decision text constraint approvals_decision_valid check (decision in ('approved', 'rejected')),
  requested_at timestamptz not null default now(),
  decided_at timestamptz,
  updated_at timestamptz not null default now(),
  version integer not null default 1,
  constraint approvals_decided_consistently check ((status = 'pending') = (decision is null) and (decision is null) = (decided_at is null))
);
create unique index approvals_one_per_resource on app.approvals (organization_id, resource_type, resource_id);
create index approvals_org_requested on app.approvals (organization_id, requested_at, id);
create trigger _100_touch_version before update on app.approvals
  for each row execute function app_private.tg__touch_version();

alter table app.approvals enable row level security;
alter table app.approvals force row level security;
create policy "Clients see approvals of resources their Roles cover" on app.approvals for select to svc_runtime
  using (organization_id = (select app.current_organization_id())
         and case category when 'project' then (select app.has_role('manager'))
                           when 'financial' then (select app.has_role('finance'))
                           else (select app.has_role('hr')) end);
-- svc_runtime only reads approvals: requests are made by app_private.request_time_entry_approval,
-- decisions only by the control plane, so no API path can write a decision or erase one.
grant select on app.approvals to svc_runtime;

create view api.approvals with (security_invoker = true) as
select a.organization_id, a.id, a.type, a.status, a.resource_type, a.resource_id, a.requested_at, a.updated_at, a.version,
       jsonb_build_object('object', 'approval', 'id', a.id, 'type', a.type, 'status', a.status,
         'resource', jsonb_build_object('type', a.resource_type, 'id', a.resource_id),
         'requested_at', app_private.iso_timestamp(a.requested_at), 'decided_at', app_private.iso_timestamp(a.decided_at),
         'decision', a.decision, 'version', a.version, 'updated_at', app_private.iso_timestamp(a.updated_at))
       || case when (select o.show_approver_identities from app.organizations o where o.id = a.organization_id)
               then jsonb_build_object('approver', case when a.approver_member_id is not null
                                                        then jsonb_build_object('member_id', a.approver_member_id) end)
               else '{}'::jsonb end as doc
  from app.approvals a;
grant select on api.approvals to svc_runtime;

/** A decision moves the time entry in the same transaction. Only the control plane decides. */
create function control.approval_decide(p_approval text, p_decision text, p_by text) returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  a app.approvals;
  v_by text := app_private.normalize_email(p_by);
begin
  select * into a from app.approvals where id = p_approval for update;
  perform app_private.require_found(found, 'APPROVAL_NOT_FOUND', p_approval);
  if a.status <> 'pending' then
    perform app_private.raise('SVC18', 'APPROVAL_ALREADY_DECIDED', format('the approval is already %s', a.status));
  end if;
  if not exists (select from app.members m where m.organization_id = a.organization_id and m.id = v_by and m.status = 'active'
                  and (case a.category when 'project' then 'manager' when 'financial' then 'finance' else 'hr' end) = any (m.svc_roles)) then
    perform app_private.raise('SVC18', 'APPROVER_NOT_ELIGIBLE', format('%s is not an active member who may decide this approval', v_by));
  end if;
  update app.approvals set status = p_decision, decision = p_decision, decided_at = now(), approver_member_id = v_by
   where id = p_approval;
  if a.resource_type = 'time_entry' then
    update app.time_entries set status = p_decision where id = a.resource_id;
  end if;
end
$$;

create function api.approval_exists(p_id text) returns boolean
language sql stable security definer
set search_path = pg_catalog
as $$ select exists (select from app.approvals a where a.id = p_id and a.organization_id = app.current_organization_id()) $$;
grant execute on function api.approval_exists(text) to svc_runtime;

/** Opens (or re-opens after a rejection) the approval request for a draft or rejected entry of
 * the caller's organization; a manager's request context is required. */
create function app_private.request_time_entry_approval(p_entry_id text) returns void
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  e app.time_entries;
begin
  select * into e from app.time_entries
   where id = p_entry_id and organization_id = app.current_organization_id() and deleted_at is null;
  if not found or not app.has_role('manager') or e.status not in ('draft', 'rejected') then
    perform app_private.raise('SVR05', 'APPROVAL_REQUIRED', 'an approval is requested only by submitting a draft or rejected entry');
  end if;
  insert into app.approvals (organization_id, type, category, resource_type, resource_id, requested_by_client_id)
  values (e.organization_id, 'time_entry', 'project', 'time_entry', p_entry_id, app.current_client_id())
  on conflict (organization_id, resource_type, resource_id) do update
    set status = 'pending', decision = null, decided_at = null, approver_member_id = null,
        requested_at = now(), requested_by_client_id = excluded.requested_by_client_id;
  -- Requesting approval and submitting are one step: a pending request always has a submitted entry.
  update app.time_entries set status = 'submitted' where id = p_entry_id;
end
$$;
grant execute on function app_private.request_time_entry_approval(text) to svc_runtime;

/** Work waiting for a named user blocks archiving its project. */
create or replace function app_private.project_archive_blockers(p_project_id text) returns text[]
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  v_open integer;
  v_pending integer;
  v_blockers text[] := array[]::text[];
begin
  select count(*) into v_open
    from app.tasks t join app.task_workflow_statuses s on s.workflow_id = t.workflow_id and s.status = t.status
   where t.project_id = p_project_id and (t.organization_id = app.current_organization_id() or app.current_organization_id() is null)
     and t.archived_at is null and s.category = 'open';
  if v_open > 0 then
    v_blockers := v_blockers || format('%s open task(s): complete, cancel or archive them first', v_open);
  end if;
  select count(*) into v_pending from app.time_entries e
   where e.project_id = p_project_id and (e.organization_id = app.current_organization_id() or app.current_organization_id() is null)
     and e.status = 'submitted' and e.deleted_at is null;
  if v_pending > 0 then
    v_blockers := v_blockers || format('%s time entr(ies) awaiting approval', v_pending);
  end if;
  return v_blockers;
end
$$;

/** Surface. */
create view api.time_entries with (security_invoker = true) as
select e.organization_id, e.id, e.member_id, e.project_id, e.task_id, e.work_date, e.status, e.billable, e.external_id,
       e.created_by_client_id, e.deleted_at, e.version,
       jsonb_build_object('object', 'time_entry', 'id', e.id, 'member_id', e.member_id, 'project_id', e.project_id,
         'task_id', e.task_id, 'work_date', e.work_date, 'minutes', e.minutes, 'billable', e.billable, 'notes', e.notes,
         'status', e.status,
         'external_id', case when e.created_by_client_id = (select app.current_client_id()) then e.external_id end,
         'approval_id', (select a.id from app.approvals a where a.resource_type = 'time_entry' and a.resource_id = e.id),
         'created_at', app_private.iso_timestamp(e.created_at), 'updated_at', app_private.iso_timestamp(e.updated_at)) as doc
  from app.time_entries e;
grant select on api.time_entries to svc_runtime;

create function app_private.time_entry_not_found(p_id text) returns void
language sql volatile
set search_path = pg_catalog
as $$ select app_private.raise('SVN04', 'TIME_ENTRY_NOT_FOUND', format('no time entry %s in your organization', p_id)) $$;
grant execute on function app_private.time_entry_not_found(text) to svc_runtime;

create function api.time_entry_get(p_id text) returns table (doc jsonb, version integer)
language plpgsql stable
set search_path = pg_catalog
as $$
begin
  perform api.require_time_entry_read();
  return query select t.doc, t.version from api.time_entries t where t.id = p_id and t.deleted_at is null;
end
$$;
grant execute on function api.time_entry_get(text) to svc_runtime;

/** One entry from a request body; returns the new row's id. Used alone and by batches. */
create function app_private.time_entry_insert(p_body jsonb) returns text
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  v_id text;
begin
  insert into app.time_entries (organization_id, member_id, project_id, task_id, work_date, minutes, billable, notes,
                                external_id, created_by_client_id)
  values (app.current_organization_id(), p_body #>> '{subject,member_id}', p_body ->> 'project_id', p_body ->> 'task_id',
          (p_body ->> 'work_date')::date, (p_body ->> 'minutes')::integer, coalesce((p_body ->> 'billable')::boolean, true),
          p_body ->> 'notes', p_body ->> 'external_id', app.current_client_id())
  returning id into v_id;
  return v_id;
end
$$;
grant execute on function app_private.time_entry_insert(jsonb) to svc_runtime;

create function api.time_entry_create(p_body jsonb) returns table (doc jsonb, version integer)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  v_id text;
begin
  perform api.require_any_role('{manager}', 'createTimeEntry');
  v_id := app_private.time_entry_insert(p_body);
  return query select * from api.time_entry_get(v_id);
end
$$;
grant execute on function api.time_entry_create(jsonb) to svc_runtime;

/** A batch is one statement: each entry is validated by the same triggers; in atomic mode the
 * first failure collects every item's problems and rolls everything back; otherwise each item
 * runs in its own subtransaction and the valid ones stay. */
create function api.time_entry_batch(p_entries jsonb, p_atomic boolean) returns jsonb
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  v_item jsonb;
  v_index integer := 0;
  v_results jsonb := '[]';
  v_errors jsonb := '[]';
  v_id text;
  v_state text;
  v_message text;
  v_detail text;
  v_hint text;
  v_item_errors jsonb;
begin
  perform api.require_any_role('{manager}', 'createTimeEntryBatch');
  for v_item in select e from jsonb_array_elements(p_entries) e loop
    begin
      v_id := app_private.time_entry_insert(v_item);
      v_results := v_results || jsonb_build_array(jsonb_build_object('index', v_index, 'status', 'created',
        'time_entry', (select t.doc from api.time_entries t where t.id = v_id)));
    exception when others then
      get stacked diagnostics v_state = returned_sqlstate, v_message = message_text, v_detail = pg_exception_detail,
                              v_hint = pg_exception_hint;
      if v_state not like 'SV%' and v_state not in ('23505', '22007', '22008', '22P02', '22003', '23514') then
        raise;
      end if;
      if v_state = '23505' then
        v_message := 'EXTERNAL_ID_CONFLICT';
        v_item_errors := app_private.error('/external_id', 'EXTERNAL_ID_CONFLICT', 'this external_id is already used by your client');
      elsif v_state like '22%' or v_state = '23514' then
        v_message := 'VALIDATION_FAILED';
        v_item_errors := app_private.error('', 'VALIDATION_FAILED', 'a value is out of range or malformed');
      elsif v_hint = 'errors' then
        v_item_errors := v_detail::jsonb;
      else
        v_item_errors := app_private.error('', v_message, v_detail);
      end if;
      v_results := v_results || jsonb_build_array(jsonb_build_object('index', v_index, 'status', 'failed',
        'error', jsonb_build_object('code', v_message, 'errors', v_item_errors)));
      v_errors := v_errors || (select jsonb_agg(jsonb_set(e, '{pointer}', to_jsonb('/entries/' || v_index || coalesce(e ->> 'pointer', ''))))
                                 from jsonb_array_elements(v_item_errors) e);
    end;
    v_index := v_index + 1;
  end loop;
  if p_atomic and jsonb_array_length(v_errors) > 0 then
    perform app_private.raise_errors(v_errors);
  end if;
  return jsonb_build_object('object', 'time_entry_batch', 'atomic', p_atomic,
    'created', (select count(*) from jsonb_array_elements(v_results) r where r ->> 'status' = 'created'),
    'failed', (select count(*) from jsonb_array_elements(v_results) r where r ->> 'status' = 'failed'),
    'results', v_results);
end
$$;
grant execute on function api.time_entry_batch(jsonb, boolean) to svc_runtime;

create function app_private.lock_time_entry(p_id text) returns app.time_entries
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  e app.time_entries;
begin
  select * into e from app.time_entries where id = p_id for update;
  if not found or e.deleted_at is not null then
    perform app_private.time_entry_not_found(p_id);
  end if;
  return e;
end
$$;
grant execute on function app_private.lock_time_entry(text) to svc_runtime;

create function api.time_entry_update(p_id text, p_if_match integer[], p_patch jsonb) returns table (doc jsonb, version integer)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  e app.time_entries;
  v_errors jsonb := '[]';
  k text;
begin
  perform api.require_any_role('{manager}', 'updateTimeEntry');
  e := app_private.lock_time_entry(p_id);
  perform app_private.check_if_match(e.version, p_if_match);
  for k in select jsonb_object_keys(p_patch) order by 1 loop
    if k = 'status' then
      v_errors := v_errors || app_private.error('/status', case when p_patch ->> 'status' in ('approved', 'rejected')
        then 'APPROVAL_REQUIRED' else 'IMMUTABLE_FIELD' end,
        'status changes through submit; only a named user approves or rejects');
    elsif k in ('id', 'object', 'member_id', 'subject', 'external_id', 'approval_id', 'created_at', 'updated_at') then
      v_errors := v_errors || app_private.error('/' || k, 'IMMUTABLE_FIELD', format('%s cannot be changed', k));
    end if;
  end loop;
  perform app_private.raise_errors(v_errors);
  update app.time_entries set
    project_id = case when p_patch ? 'project_id' then p_patch ->> 'project_id' else e.project_id end,
    task_id = case when p_patch ? 'task_id' then p_patch ->> 'task_id' else e.task_id end,
    work_date = case when p_patch ? 'work_date' then (p_patch ->> 'work_date')::date else e.work_date end,
    minutes = case when p_patch ? 'minutes' then (p_patch ->> 'minutes')::integer else e.minutes end,
    billable = case when p_patch ? 'billable' then (p_patch ->> 'billable')::boolean else e.billable end,
    notes = case when p_patch ? 'notes' then p_patch ->> 'notes' else e.notes end
  where id = p_id;
  return query select * from api.time_entry_get(p_id);
end
$$;
grant execute on function api.time_entry_update(text, integer[], jsonb) to svc_runtime;

create function api.time_entry_submit(p_id text) returns table (doc jsonb, version integer)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  e app.time_entries;
begin
  perform api.require_any_role('{manager}', 'submitTimeEntry');
  e := app_private.lock_time_entry(p_id);
  if e.status in ('draft', 'rejected') then
    perform app_private.request_time_entry_approval(p_id);
  elsif e.status = 'approved' then
    perform app_private.raise('SVC17', 'TIME_ENTRY_LOCKED', 'the time entry is already approved');
  end if;
  -- Submitting a submitted entry changes nothing: the pending request stands.
  return query select * from api.time_entry_get(p_id);
end
$$;
grant execute on function api.time_entry_submit(text) to svc_runtime;

create function api.time_entry_delete(p_id text) returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  e app.time_entries;
begin
  perform api.require_any_role('{manager}', 'deleteTimeEntry');
  select * into e from app.time_entries where id = p_id for update;
  if not found then
    perform app_private.time_entry_not_found(p_id);
  end if;
  if e.deleted_at is not null then
    return;
  end if;
  update app.time_entries set deleted_at = now() where id = p_id;
  insert into app.time_entry_audit (organization_id, time_entry_id, action, actor_client_id)
  values (e.organization_id, p_id, 'deleted', app.current_client_id());
end
$$;
grant execute on function api.time_entry_delete(text) to svc_runtime;

create function api.require_time_entry_read() returns void
language plpgsql stable
set search_path = pg_catalog
as $$
begin
  if not app_private.may_read_time_entries() then
    perform app_private.raise('SVR03', 'ROLE_REQUIRED',
      'time entries are readable with manager or finance (hr where the organization permits); members use reporting views');
  end if;
end
$$;
grant execute on function api.require_time_entry_read() to svc_runtime;

-- migrate:down
drop function api.require_time_entry_read();
drop function api.time_entry_delete(text);
drop function api.time_entry_submit(text);
drop function api.time_entry_update(text, integer[], jsonb);
drop function app_private.lock_time_entry(text);
drop function api.time_entry_batch(jsonb, boolean);
drop function api.time_entry_create(jsonb);
drop function app_private.time_entry_insert(jsonb);
drop function api.time_entry_get(text);
drop function app_private.time_entry_not_found(text);
drop view api.time_entries;
drop function control.approval_decide(text, text, text);
drop function app_private.request_time_entry_approval(text);
drop view api.approvals;
drop function api.approval_exists(text);
drop table app.approvals;
drop table app.time_entry_audit;
drop table app.time_entries;
drop function app_private.tg_time_entries__validate();
drop function app_private.tg_time_entries__submitted_has_approval();
drop function app_private.tg_time_entries__no_delete();
drop function app_private.tg_time_entries__lock();
drop function app_private.may_read_time_entries();
drop function control.org_set_policy(text, boolean, boolean, integer);
alter table app.organizations drop column show_approver_identities, drop column hr_may_read_time_entries,
  drop column time_entry_future_days;
