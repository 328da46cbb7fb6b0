-- migrate:up

/** The baseline, 5 of 16. Time: time entries, their audit and approvals.
 * Laid out by table: each table, then its keys and indexes, row security and policies, triggers
 * and their functions, and grants; then the area's views and commands. db/README.md, "The
 * baseline", says how it was made and proved equal to the migrations it replaced. */
set local check_function_bodies = false;
set local client_min_messages = warning;
set local search_path = '';

-- While this file runs, the owners of its functions and views may create in the schemas (`alter … owner to`
-- a role needs it when the migrating role is not a superuser); taken back at its end.
grant create on schema api, app, app_private, control, reporting, skills to svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- function app_private.may_read_time_entries()

create function app_private.may_read_time_entries() returns boolean
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_org text;
begin
  if app_private.context_ok() then
    return 'time_entries' = any (string_to_array(current_setting('svc.read_flags', true), ','));
  end if;
  if app.has_any_role('{manager,finance}') then
    return true;
  end if;
  v_org := app.current_organization_id();
  if v_org is null or not app.has_role('hr') then
    return false;
  end if;
  perform app_private.refuse_on_coordinator('app_private.may_read_time_entries()');
  return coalesce((select o.hr_may_read_time_entries from app.organizations o where o.id = v_org), false);
end
$$;

alter function app_private.may_read_time_entries() owner to svc_owner;

comment on function app_private.may_read_time_entries() is 'Whether the caller may read time entries: manager or finance, or hr where the organization permits it (hr_may_read_time_entries). In a request the answer is the signed context''s time_entries read flag, computed by api.begin_request from the client''s Roles and that setting; without a signed context (a BI session) it reads the setting from the organization, and refuses on a Citus coordinator (SV500 NOT_IN_ITS_WORKER). It runs as svc_owner so this read of app.organizations works for callers that may not read it (svc_runtime, BI logins), and only for the caller''s own organization (app.current_organization_id()).';

revoke all on function app_private.may_read_time_entries() from public;
grant execute on function app_private.may_read_time_entries() to svc_runtime;
grant execute on function app_private.may_read_time_entries() to svc_api;
grant execute on function app_private.may_read_time_entries() to svc_reporting;
grant execute on function app_private.may_read_time_entries() to svc_worker;
grant execute on function app_private.may_read_time_entries() to svc_admin;
grant execute on function app_private.may_read_time_entries() to svc_gate;

-- function app_private.request_time_entry_approval(text)

create function app_private.request_time_entry_approval(p_entry_id text) returns void
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  e app.time_entries;
  v_org text := app.current_organization_id();
  v_now timestamptz := now();
begin
  select * into e from app.time_entries
   where organization_id = v_org and id = p_entry_id and deleted_at is null;
  if not found or not app.has_role('manager') or e.status not in ('draft', 'rejected') then
    perform app_private.raise('SVR05', 'APPROVAL_REQUIRED', 'an approval is requested only by submitting a draft or rejected entry');
  end if;
  insert into app.approvals (organization_id, type, category, resource_type, resource_id, requested_by_client_id)
  values (e.organization_id, 'time_entry', 'project', 'time_entry', p_entry_id, app.current_client_id())
  on conflict (organization_id, resource_type, resource_id) do update
    set status = 'pending', decision = null, decided_at = null, approver_member_id = null,
        requested_at = v_now, requested_by_client_id = excluded.requested_by_client_id;
  -- Requesting approval and submitting are one step: a pending request always has a submitted entry.
  update app.time_entries set status = 'submitted' where organization_id = v_org and id = p_entry_id;
end
$$;

alter function app_private.request_time_entry_approval(p_entry_id text) owner to svc_owner;

comment on function app_private.request_time_entry_approval(p_entry_id text) is 'Opens, or reopens after a rejection, the pending named-user approval request (category project) for a draft or rejected, not deleted entry of the signed request''s organization, and marks the entry submitted in the same step, so a pending request always has a submitted entry; without a manager''s context, or for any other entry, it raises SVR05 APPROVAL_REQUIRED. It runs as svc_owner because svc_api may not write app.approvals (API clients neither write nor decide approvals); it reads and writes only by the request''s organization, under svc_owner''s policy.';

revoke all on function app_private.request_time_entry_approval(p_entry_id text) from public;
grant execute on function app_private.request_time_entry_approval(p_entry_id text) to svc_api;
grant execute on function app_private.request_time_entry_approval(p_entry_id text) to svc_worker;
grant execute on function app_private.request_time_entry_approval(p_entry_id text) to svc_admin;

-- function app_private.time_entry_insert(jsonb)

create function app_private.time_entry_insert(p_body jsonb) returns text
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  v_id text;
begin
  insert into app.time_entries (organization_id, member_id, project_id, task_id, work_date, minutes, billable, notes,
                                external_id, created_by_client_id)
  values (v__organization_id, p_body #>> '{subject,member_id}', p_body ->> 'project_id', p_body ->> 'task_id',
          (p_body ->> 'work_date')::date, (p_body ->> 'minutes')::integer, coalesce((p_body ->> 'billable')::boolean, true),
          p_body ->> 'notes', p_body ->> 'external_id', app.current_client_id())
  returning id into v_id;
  return v_id;
end
$$;

alter function app_private.time_entry_insert(p_body jsonb) owner to svc_owner;

revoke all on function app_private.time_entry_insert(p_body jsonb) from public;
grant execute on function app_private.time_entry_insert(p_body jsonb) to svc_api;
grant execute on function app_private.time_entry_insert(p_body jsonb) to svc_worker;
grant execute on function app_private.time_entry_insert(p_body jsonb) to svc_admin;

-- function app_private.time_entry_not_found(text)

create function app_private.time_entry_not_found(p_id text) returns void
    language sql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$ select app_private.raise('SVN04', 'TIME_ENTRY_NOT_FOUND', format('no time entry %s in your organization', p_id)) $$;

alter function app_private.time_entry_not_found(p_id text) owner to svc_owner;

revoke all on function app_private.time_entry_not_found(p_id text) from public;
grant execute on function app_private.time_entry_not_found(p_id text) to svc_api;
grant execute on function app_private.time_entry_not_found(p_id text) to svc_worker;
grant execute on function app_private.time_entry_not_found(p_id text) to svc_admin;

-- table app.approvals

create table app.approvals (
    organization_id text not null,
    id text default app_private.new_id('apr'::text) not null,
    type text not null,
    category text not null,
    status text default 'pending'::text not null,
    resource_type text not null,
    resource_id text not null,
    requested_by_client_id text not null,
    approver_member_id text,
    decision text,
    requested_at timestamp with time zone default now() not null,
    decided_at timestamp with time zone,
    updated_at timestamp with time zone default now() not null,
    version integer default 1 not null,
    constraint approvals_category_valid check ((category = any (array['project'::text, 'financial'::text, 'hr'::text]))),
    constraint approvals_decided_consistently check ((((status = 'pending'::text) = (decision is null)) and ((decision is null) = (decided_at is null)))),
    constraint approvals_decision_valid check ((decision = any (array['approved'::text, 'rejected'::text]))),
    constraint approvals_status_valid check ((status = any (array['pending'::text, 'approved'::text, 'rejected'::text]))),
    constraint approvals_type_valid check ((type = 'time_entry'::text))
);

alter table only app.approvals force row level security;

alter table only app.approvals
    add constraint approvals_pkey primary key (organization_id, id);

create index approvals_id on app.approvals using btree (id);

create unique index approvals_one_per_resource on app.approvals using btree (organization_id, resource_type, resource_id);

create index approvals_org_requested on app.approvals using btree (organization_id, requested_at, id);

alter table only app.approvals
    add constraint approvals_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table app.approvals enable row level security;

create policy "Clients see approvals of resources their Roles cover" on app.approvals for select to svc_api using ((organization_id = (select app.current_organization_id())) and
case category
    when 'project'::text then (select app.has_role('manager'::text))
    when 'financial'::text then (select app.has_role('finance'::text))
    else (select app.has_role('hr'::text))
end);

comment on policy "Clients see approvals of resources their Roles cover" on app.approvals is 'svc_api reads approvals only of the signed request''s organization, and of those only the ones whose resource the client''s Roles cover: category project needs manager, financial needs finance, any other (hr) needs hr (the spec''s Role matrix). svc_api has no policy to write approvals: they are requested by app_private.request_time_entry_approval and decided only by named users, through the control plane.';

create policy "Commands act in the request's organization" on app.approvals to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.approvals is 'For svc_owner, svc_worker and svc_admin, every command: the approvals of the signed request''s organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations), in USING and WITH CHECK. The svc_owner helpers that request and check approvals (request_time_entry_approval, approval_exists, tg_time_entries__submitted_has_approval) stay in the request''s organization, while the control plane''s decisions (control.approval_decide) reach any organization.';

create trigger _100_touch_version before update on app.approvals for each row execute function app_private.tg__touch_version();

create trigger _950_emit_event after insert or update on app.approvals for each row execute function app_private.tg__emit_event('approval');

grant select on table app.approvals to svc_api;
grant select,insert,delete,update on table app.approvals to svc_owner;
grant select,insert,delete,update on table app.approvals to svc_worker;
grant select,insert,delete,update on table app.approvals to svc_admin;

-- table app.time_entries

create table app.time_entries (
    organization_id text not null,
    id text default app_private.new_id('tim'::text) not null,
    member_id text not null,
    project_id text not null,
    task_id text,
    work_date date not null,
    minutes integer not null,
    billable boolean default true not null,
    notes text,
    status text default 'draft'::text not null,
    external_id text,
    created_by_client_id text not null,
    created_at timestamp with time zone default now() not null,
    updated_at timestamp with time zone default now() not null,
    deleted_at timestamp with time zone,
    version integer default 1 not null,
    constraint time_entries_external_id_length check (((length(external_id) >= 1) and (length(external_id) <= 255))),
    constraint time_entries_minutes_range check (((minutes >= 1) and (minutes <= 1440))),
    constraint time_entries_notes_length check ((length(notes) <= 5000)),
    constraint time_entries_status_valid check ((status = any (array['draft'::text, 'submitted'::text, 'approved'::text, 'rejected'::text])))
);

alter table only app.time_entries force row level security;

alter table only app.time_entries
    add constraint time_entries_pkey primary key (organization_id, id);

create unique index time_entries_external_id_unique on app.time_entries using btree (organization_id, created_by_client_id, external_id) where ((external_id is not null) and (deleted_at is null));

create index time_entries_id on app.time_entries using btree (id);

create index time_entries_member_date on app.time_entries using btree (organization_id, member_id, work_date) where (deleted_at is null);

create index time_entries_org_date on app.time_entries using btree (organization_id, work_date, id) where (deleted_at is null);

create index time_entries_project on app.time_entries using btree (project_id, work_date) where (deleted_at is null);

alter table only app.time_entries
    add constraint time_entries_created_by_client_fkey foreign key (organization_id, created_by_client_id) references app.api_clients(organization_id, id) on delete restrict;

alter table only app.time_entries
    add constraint time_entries_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table only app.time_entries
    add constraint time_entries_organization_id_member_id_fkey foreign key (organization_id, member_id) references app.members(organization_id, id) on delete restrict;

alter table only app.time_entries
    add constraint time_entries_project_fkey foreign key (organization_id, project_id) references app.projects(organization_id, id) on delete restrict;

alter table only app.time_entries
    add constraint time_entries_task_fkey foreign key (organization_id, task_id) references app.tasks(organization_id, id) on delete restrict;

alter table app.time_entries enable row level security;

create policy "Commands act in the request's organization" on app.time_entries to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.time_entries is 'For svc_owner, svc_worker and svc_admin, every command: the time entries of the signed request''s organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations), in USING and WITH CHECK. The svc_owner triggers and helpers (the validation, the approval request) stay in the request''s organization, while the control plane''s approval decision moves an entry of any organization to approved or rejected.';

create policy "Managers change time" on app.time_entries for update to svc_api using (((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text)))) with check (((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text))));

comment on policy "Managers change time" on app.time_entries is 'svc_api may update time entries only of the signed request''s organization and only when the client holds manager, before and after the change (USING and WITH CHECK), since only managers write time (spec). Which columns may change is for its column grants, and whether the entry may change at all for the triggers (tg_time_entries__lock: draft or rejected only).';

create policy "Managers record time" on app.time_entries for insert to svc_api with check ((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text)) and (created_by_client_id = (select app.current_client_id())));

comment on policy "Managers record time" on app.time_entries is 'svc_api may insert a time entry only into the signed request''s organization, only when the client holds manager, and only with created_by_client_id set to the calling client, so the creator, which scopes external_id, cannot be forged. The table''s triggers then validate the entry.';

create policy "Managers, finance, and hr where permitted read time entries" on app.time_entries for select to svc_api using ((organization_id = (select app.current_organization_id())) and (select app_private.may_read_time_entries()));

comment on policy "Managers, finance, and hr where permitted read time entries" on app.time_entries is 'svc_api reads time entries only of the signed request''s organization, and only when app_private.may_read_time_entries() allows it: manager or finance, or hr where the organization permits (the spec''s Role matrix). A member-only client reads time only through the reporting views.';

create function app_private.tg_time_entries__submitted_has_approval() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if new.status = 'submitted' and not exists (
       select from app.approvals a where a.organization_id = new.organization_id and a.resource_type = 'time_entry'
                                      and a.resource_id = new.id and a.status = 'pending') then
    perform app_private.raise('SVR05', 'APPROVAL_REQUIRED', 'submit the time entry through submitTimeEntry, which requests approval');
  end if;
  return null;
end
$$;

alter function app_private.tg_time_entries__submitted_has_approval() owner to svc_owner;

comment on function app_private.tg_time_entries__submitted_has_approval() is 'AFTER INSERT OR UPDATE OF status on app.time_entries: a submitted entry must have a pending approval request for it in its organization, else SVR05 APPROVAL_REQUIRED, because submitting is asking a named user: the only way to submitted is submitTimeEntry (app_private.request_time_entry_approval), which writes both. It runs as svc_owner so the check sees the approval whatever the writer''s own approval policy shows, within the row''s organization.';

create function app_private.tg_time_entries__no_delete() returns trigger
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  perform app_private.raise('SVC17', 'TIME_ENTRY_LOCKED', 'time entries are deleted by marking them, never removed');
end
$$;

alter function app_private.tg_time_entries__no_delete() owner to svc_owner;

comment on function app_private.tg_time_entries__no_delete() is 'BEFORE DELETE on app.time_entries: refuses every delete, by any role, with SVC17 TIME_ENTRY_LOCKED. Time entries are deleted by marking them (deleted_at, through deleteTimeEntry, audited) and are never removed, so their history and audit stay whole.';

create function app_private.tg_time_entries__lock() returns trigger
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
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
     and current_user not in ('svc_runtime', 'svc_api') then
    return new;
  end if;
  perform app_private.raise('SVC17', 'TIME_ENTRY_LOCKED',
    format('a %s time entry cannot be changed or deleted', old.status));
end
$$;

alter function app_private.tg_time_entries__lock() owner to svc_owner;

comment on function app_private.tg_time_entries__lock() is 'BEFORE UPDATE on app.time_entries, the spec''s time-entry state machine: a deleted entry cannot change (SVN04 TIME_ENTRY_NOT_FOUND); a draft or rejected entry may change, and its status may move only to submitted (any other move raises SVR05 APPROVAL_REQUIRED: only a named user approves or rejects); a submitted entry moves only to approved or rejected with no other field changed, and never by svc_runtime or svc_api, since the decision comes from the control plane; every other change, to an approved entry included, raises SVC17 TIME_ENTRY_LOCKED. It runs as the updating role, because it judges current_user.';

create function app_private.tg_time_entries__validate() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.tg_time_entries__validate() owner to svc_owner;

comment on function app_private.tg_time_entries__validate() is 'BEFORE INSERT OR UPDATE on app.time_entries (not for deleted rows, nor for a status move out of submitted or approved): the subject must be an active member of the organization (INVALID_SUBJECT_MEMBER), the project active with the work date within its dates and the task a non-archived task of that project (INVALID_WORK_DATE), the work date no later than the organization''s today (in its timezone) plus time_entry_future_days and no more than 366 days ago (INVALID_WORK_DATE), and the member''s day at most 1440 minutes in all (INVALID_DURATION), serialized per member and day by an advisory lock so that two concurrent entries cannot both fit. Every problem is raised together (app_private.raise_errors, SVV22). It runs as svc_owner so it reads the members, projects, tasks, organization and the member''s other entries whatever the writer may read, within the row''s organization under svc_owner''s policy.';

create trigger _050_lock before update on app.time_entries for each row execute function app_private.tg_time_entries__lock();

create trigger _050_no_delete before delete on app.time_entries for each row execute function app_private.tg_time_entries__no_delete();

create trigger _100_touch_version before update on app.time_entries for each row execute function app_private.tg__touch_version();

create trigger _200_validate before insert or update on app.time_entries for each row execute function app_private.tg_time_entries__validate();

create trigger _900_submitted_has_approval after insert or update of status on app.time_entries for each row execute function app_private.tg_time_entries__submitted_has_approval();

create trigger _950_emit_event after insert or update on app.time_entries for each row execute function app_private.tg__emit_event('time_entry');

grant select on table app.time_entries to svc_api;
grant select,insert,delete,update on table app.time_entries to svc_owner;
grant select,insert,delete,update on table app.time_entries to svc_worker;
grant select,insert,delete,update on table app.time_entries to svc_admin;

grant insert(organization_id) on table app.time_entries to svc_api;

grant insert(member_id) on table app.time_entries to svc_api;

grant insert(project_id),update(project_id) on table app.time_entries to svc_api;

grant insert(task_id),update(task_id) on table app.time_entries to svc_api;

grant insert(work_date),update(work_date) on table app.time_entries to svc_api;

grant insert(minutes),update(minutes) on table app.time_entries to svc_api;

grant insert(billable),update(billable) on table app.time_entries to svc_api;

grant insert(notes),update(notes) on table app.time_entries to svc_api;

grant update(status) on table app.time_entries to svc_api;

grant insert(external_id) on table app.time_entries to svc_api;

grant insert(created_by_client_id) on table app.time_entries to svc_api;

grant update(deleted_at) on table app.time_entries to svc_api;

revoke all on function app_private.tg_time_entries__lock() from public;
grant execute on function app_private.tg_time_entries__lock() to svc_worker;
grant execute on function app_private.tg_time_entries__lock() to svc_admin;

revoke all on function app_private.tg_time_entries__no_delete() from public;
grant execute on function app_private.tg_time_entries__no_delete() to svc_worker;
grant execute on function app_private.tg_time_entries__no_delete() to svc_admin;

revoke all on function app_private.tg_time_entries__submitted_has_approval() from public;
grant execute on function app_private.tg_time_entries__submitted_has_approval() to svc_worker;
grant execute on function app_private.tg_time_entries__submitted_has_approval() to svc_admin;

revoke all on function app_private.tg_time_entries__validate() from public;
grant execute on function app_private.tg_time_entries__validate() to svc_worker;
grant execute on function app_private.tg_time_entries__validate() to svc_admin;

-- function app_private.lock_time_entry(text)

create function app_private.lock_time_entry(p_id text) returns app.time_entries
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  e app.time_entries;
begin
  select * into e from app.time_entries where organization_id = v__organization_id and id = p_id for update;
  if not found or e.deleted_at is not null then
    perform app_private.time_entry_not_found(p_id);
  end if;
  return e;
end
$$;

alter function app_private.lock_time_entry(p_id text) owner to svc_owner;

revoke all on function app_private.lock_time_entry(p_id text) from public;
grant execute on function app_private.lock_time_entry(p_id text) to svc_api;
grant execute on function app_private.lock_time_entry(p_id text) to svc_worker;
grant execute on function app_private.lock_time_entry(p_id text) to svc_admin;

-- table app.time_entry_audit

create table app.time_entry_audit (
    organization_id text not null,
    id bigint not null,
    time_entry_id text not null,
    action text not null,
    actor_client_id text not null,
    at timestamp with time zone default now() not null
);

alter table only app.time_entry_audit force row level security;

alter table app.time_entry_audit alter column id add generated always as identity (
    sequence name app.time_entry_audit_id_seq
    start with 1
    increment by 1
    no minvalue
    no maxvalue
    cache 1
);

alter table only app.time_entry_audit
    add constraint time_entry_audit_pkey primary key (organization_id, id);

alter table only app.time_entry_audit
    add constraint time_entry_audit_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table only app.time_entry_audit
    add constraint time_entry_audit_time_entry_fkey foreign key (organization_id, time_entry_id) references app.time_entries(organization_id, id) on delete restrict;

alter table app.time_entry_audit enable row level security;

create policy "Commands act in the request's organization" on app.time_entry_audit to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.time_entry_audit is 'For svc_owner, svc_worker and svc_admin, every command: the time audit rows of the signed request''s organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations), in USING and WITH CHECK. A definer run in a request reaches only its own organization''s audit, while jobs and the control plane, whose work spans organizations, reach all of it.';

create policy "Managers write the time audit" on app.time_entry_audit for insert to svc_api with check ((organization_id = (select app.current_organization_id())) and (actor_client_id = (select app.current_client_id())) and (select app.has_role('manager'::text)));

comment on policy "Managers write the time audit" on app.time_entry_audit is 'svc_api may insert into app.time_entry_audit only rows of the signed request''s organization whose actor_client_id is the calling client, and only when it holds manager (the Role that deletes time entries), so the audit names the real actor. svc_api has no policy to read, change or remove audit rows.';

grant select,insert,delete,update on table app.time_entry_audit to svc_owner;
grant select,insert,delete,update on table app.time_entry_audit to svc_worker;
grant select,insert,delete,update on table app.time_entry_audit to svc_admin;

grant insert(organization_id) on table app.time_entry_audit to svc_api;

grant insert(time_entry_id) on table app.time_entry_audit to svc_api;

grant insert(action) on table app.time_entry_audit to svc_api;

grant insert(actor_client_id) on table app.time_entry_audit to svc_api;

grant usage on sequence app.time_entry_audit_id_seq to svc_owner;
grant usage on sequence app.time_entry_audit_id_seq to svc_worker;
grant usage on sequence app.time_entry_audit_id_seq to svc_admin;

-- view api.approvals

create view api.approvals with (security_invoker='false') as
 select a.organization_id,
    a.id,
    a.type,
    a.status,
    a.resource_type,
    a.resource_id,
    a.requested_at,
    a.updated_at,
    a.version,
    (jsonb_build_object('object', 'approval', 'id', a.id, 'type', a.type, 'status', a.status, 'resource', jsonb_build_object('type', a.resource_type, 'id', a.resource_id), 'requested_at', app_private.iso_timestamp(a.requested_at), 'decided_at', app_private.iso_timestamp(a.decided_at), 'decision', a.decision, 'version', a.version, 'updated_at', app_private.iso_timestamp(a.updated_at)) ||
        case
            when ( select o.show_approver_identities
               from app.organizations o
              where (o.id = a.organization_id)) then jsonb_build_object('approver',
            case
                when (a.approver_member_id is not null) then jsonb_build_object('member_id', a.approver_member_id)
                else null::jsonb
            end)
            else '{}'::jsonb
        end) as doc
   from app.approvals a;

alter view api.approvals owner to svc_api;

grant select on table api.approvals to svc_runtime;
grant select on table api.approvals to svc_owner;

-- view api.time_entries

create view api.time_entries with (security_invoker='false') as
 select e.organization_id,
    e.id,
    e.member_id,
    e.project_id,
    e.task_id,
    e.work_date,
    e.status,
    e.billable,
    e.external_id,
    e.created_by_client_id,
    e.deleted_at,
    e.version,
    jsonb_build_object('object', 'time_entry', 'id', e.id, 'member_id', e.member_id, 'project_id', e.project_id, 'task_id', e.task_id, 'work_date', e.work_date, 'minutes', e.minutes, 'billable', e.billable, 'notes', e.notes, 'status', e.status, 'external_id',
        case
            when (e.created_by_client_id = (select app.current_client_id())) then e.external_id
            else null::text
        end, 'approval_id', ( select a.id
           from app.approvals a
          where ((a.resource_type = 'time_entry'::text) and (a.resource_id = e.id))), 'created_at', app_private.iso_timestamp(e.created_at), 'updated_at', app_private.iso_timestamp(e.updated_at)) as doc
   from app.time_entries e;

alter view api.time_entries owner to svc_api;

grant select on table api.time_entries to svc_runtime;
grant select on table api.time_entries to svc_owner;

-- function api.approval_exists(text)

create function api.approval_exists(p_id text) returns boolean
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
begin
  perform app_private.refuse_on_coordinator('api.approval_exists(text)');
  return (select exists (select from app.approvals a where a.id = p_id and a.organization_id = v__organization_id));
end
$$;

alter function api.approval_exists(p_id text) owner to svc_owner;

comment on function api.approval_exists(p_id text) is 'Whether an approval with this id exists in the signed request''s organization, whatever its category: getApproval asks it when api.approvals shows nothing, to answer APPROVAL_ACCESS_DENIED (the caller''s Roles do not cover its resource) rather than APPROVAL_NOT_FOUND. It runs as svc_owner because svc_api''s policy shows only the approvals whose category the client''s Roles cover; it reads only the request''s organization (its WHERE and svc_owner''s policy) and answers a boolean, and on a Citus coordinator it refuses with SV500 NOT_IN_ITS_WORKER.';

revoke all on function api.approval_exists(p_id text) from public;
grant execute on function api.approval_exists(p_id text) to svc_runtime;
grant execute on function api.approval_exists(p_id text) to svc_api;
grant execute on function api.approval_exists(p_id text) to svc_worker;

-- function api.approvals(text)

create function api.approvals(p_id text default null::text) returns setof api.approvals
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.approvals v;
    else
      return query select * from api.approvals v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.approvals', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;

alter function api.approvals(p_id text) owner to svc_api;

comment on function api.approvals(p_id text) is 'The rows of view api.approvals for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

revoke all on function api.approvals(p_id text) from public;
grant execute on function api.approvals(p_id text) to svc_runtime;
grant execute on function api.approvals(p_id text) to svc_owner;
grant execute on function api.approvals(p_id text) to svc_worker;

-- function api.require_time_entry_read()

create function api.require_time_entry_read() returns void
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if not app_private.may_read_time_entries() then
    perform app_private.raise('SVR03', 'ROLE_REQUIRED',
      'time entries are readable with manager or finance (hr where the organization permits); members use reporting views');
  end if;
end
$$;

alter function api.require_time_entry_read() owner to svc_api;

comment on function api.require_time_entry_read() is 'Raises SVR03 ROLE_REQUIRED unless the caller may read time entries (app_private.may_read_time_entries(): manager, finance, or hr where the organization permits); a member-only client reads time only through the reporting views, as the spec''s Role matrix says. It reads no table; it runs as svc_api like every api command and raises through app_private.raise, which svc_runtime may not execute.';

revoke all on function api.require_time_entry_read() from public;
grant execute on function api.require_time_entry_read() to svc_runtime;
grant execute on function api.require_time_entry_read() to svc_owner;
grant execute on function api.require_time_entry_read() to svc_worker;

-- function api.time_entries(text)

create function api.time_entries(p_id text default null::text) returns setof api.time_entries
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.time_entries v;
    else
      return query select * from api.time_entries v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.time_entries', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;

alter function api.time_entries(p_id text) owner to svc_api;

comment on function api.time_entries(p_id text) is 'The rows of view api.time_entries for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

revoke all on function api.time_entries(p_id text) from public;
grant execute on function api.time_entries(p_id text) to svc_runtime;
grant execute on function api.time_entries(p_id text) to svc_owner;
grant execute on function api.time_entries(p_id text) to svc_worker;

-- function api.time_entry_batch(jsonb, boolean)

create function api.time_entry_batch(p_entries jsonb, p_atomic boolean) returns jsonb
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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
        'time_entry', (select t.doc from api.time_entries(v_id) t where t.id = v_id)));
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

alter function api.time_entry_batch(p_entries jsonb, p_atomic boolean) owner to svc_api;

comment on function api.time_entry_batch(p_entries jsonb, p_atomic boolean) is 'createTimeEntryBatch, manager only (else SVR03 ROLE_REQUIRED): inserts each entry as createTimeEntry does, each in its own subtransaction, and reports each item as created (with its document) or failed (its codes, with pointers under /entries/<index>; a unique violation becomes EXTERNAL_ID_CONFLICT, a malformed or out-of-range value VALIDATION_FAILED). In atomic mode any failure raises every item''s problems together and keeps nothing; otherwise the valid entries stay. It runs as svc_api because svc_runtime has no privilege on app.time_entries: each insert takes the organization and creator from the signed context, and the policy "Managers record time" and the table''s triggers hold for every item.';

revoke all on function api.time_entry_batch(p_entries jsonb, p_atomic boolean) from public;
grant execute on function api.time_entry_batch(p_entries jsonb, p_atomic boolean) to svc_runtime;
grant execute on function api.time_entry_batch(p_entries jsonb, p_atomic boolean) to svc_owner;
grant execute on function api.time_entry_batch(p_entries jsonb, p_atomic boolean) to svc_worker;

-- function api.time_entry_create(jsonb)

create function api.time_entry_create(p_body jsonb) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_id text;
begin
  perform api.require_any_role('{manager}', 'createTimeEntry');
  v_id := app_private.time_entry_insert(p_body);
  return query select * from api.time_entry_get(v_id);
end
$$;

alter function api.time_entry_create(p_body jsonb) owner to svc_api;

comment on function api.time_entry_create(p_body jsonb) is 'createTimeEntry, manager only (else SVR03 ROLE_REQUIRED): inserts a draft entry from the body with the signed context''s organization and the calling client as its creator, and answers it as getTimeEntry does. It runs as svc_api because svc_runtime has no privilege on app.time_entries; the policy "Managers record time" refuses any other organization or creator, and the table''s triggers validate the subject, project, task, work date and the member''s daily total.';

revoke all on function api.time_entry_create(p_body jsonb) from public;
grant execute on function api.time_entry_create(p_body jsonb) to svc_runtime;
grant execute on function api.time_entry_create(p_body jsonb) to svc_owner;
grant execute on function api.time_entry_create(p_body jsonb) to svc_worker;

-- function api.time_entry_delete(text)

create function api.time_entry_delete(p_id text) returns void
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  e app.time_entries;
begin
  perform api.require_any_role('{manager}', 'deleteTimeEntry');
  select * into e from app.time_entries where organization_id = v__organization_id and id = p_id for update;
  if not found then
    perform app_private.time_entry_not_found(p_id);
  end if;
  if e.deleted_at is not null then
    return;
  end if;
  update app.time_entries set deleted_at = now() where organization_id = e.organization_id and id = p_id;
  insert into app.time_entry_audit (organization_id, time_entry_id, action, actor_client_id)
  values (e.organization_id, p_id, 'deleted', app.current_client_id());
end
$$;

alter function api.time_entry_delete(p_id text) owner to svc_api;

comment on function api.time_entry_delete(p_id text) is 'deleteTimeEntry, manager only (else SVR03 ROLE_REQUIRED): marks the entry deleted (deleted_at) and writes a deleted row naming the calling client to app.time_entry_audit; an entry already deleted answers with no change (idempotent), an unknown one SVN04 TIME_ENTRY_NOT_FOUND, and one that is not draft or rejected is refused by tg_time_entries__lock (SVC17 TIME_ENTRY_LOCKED). It runs as svc_api because svc_runtime has no privilege on these tables; it reads and marks the entry by the signed context''s organization, under svc_api''s policies for managers.';

revoke all on function api.time_entry_delete(p_id text) from public;
grant execute on function api.time_entry_delete(p_id text) to svc_runtime;
grant execute on function api.time_entry_delete(p_id text) to svc_owner;
grant execute on function api.time_entry_delete(p_id text) to svc_worker;

-- function api.time_entry_get(text)

create function api.time_entry_get(p_id text) returns table(doc jsonb, version integer)
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  perform api.require_time_entry_read();
  return query select t.doc, t.version from api.time_entries(p_id) t where t.id = p_id and t.deleted_at is null;
end
$$;

alter function api.time_entry_get(p_id text) owner to svc_api;

comment on function api.time_entry_get(p_id text) is 'getTimeEntry: the entry''s document and version (its ETag) from api.time_entries, deleted entries excluded, after api.require_time_entry_read() (SVR03 ROLE_REQUIRED for a caller who may not read time entries). It runs as svc_api, under its policy "Managers, finance, and hr where permitted read time entries", which shows only the signed request''s organization.';

revoke all on function api.time_entry_get(p_id text) from public;
grant execute on function api.time_entry_get(p_id text) to svc_runtime;
grant execute on function api.time_entry_get(p_id text) to svc_owner;
grant execute on function api.time_entry_get(p_id text) to svc_worker;

-- function api.time_entry_submit(text)

create function api.time_entry_submit(p_id text) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function api.time_entry_submit(p_id text) owner to svc_api;

comment on function api.time_entry_submit(p_id text) is 'submitTimeEntry, manager only (else SVR03 ROLE_REQUIRED): a draft or rejected entry gets a pending named-user approval request and becomes submitted (app_private.request_time_entry_approval); a submitted one stays as it is (its request stands), an approved one raises SVC17 TIME_ENTRY_LOCKED, a missing or deleted one SVN04 TIME_ENTRY_NOT_FOUND. Submitting never approves: only a named user decides, through the control plane. It runs as svc_api and locks the entry by the signed context''s organization; the approval request is written by the svc_owner helper, because svc_api may not write approvals.';

revoke all on function api.time_entry_submit(p_id text) from public;
grant execute on function api.time_entry_submit(p_id text) to svc_runtime;
grant execute on function api.time_entry_submit(p_id text) to svc_owner;
grant execute on function api.time_entry_submit(p_id text) to svc_worker;

-- function api.time_entry_update(text, integer[], jsonb)

create function api.time_entry_update(p_id text, p_if_match integer[], p_patch jsonb) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  e app.time_entries;
  v_work_date date;
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
  -- Cast before the update: Citus takes no cast that is not immutable inside its CASE.
  v_work_date := (p_patch ->> 'work_date')::date;
  update app.time_entries set
    project_id = case when p_patch ? 'project_id' then p_patch ->> 'project_id' else e.project_id end,
    task_id = case when p_patch ? 'task_id' then p_patch ->> 'task_id' else e.task_id end,
    work_date = case when p_patch ? 'work_date' then v_work_date else e.work_date end,
    minutes = case when p_patch ? 'minutes' then (p_patch ->> 'minutes')::integer else e.minutes end,
    billable = case when p_patch ? 'billable' then (p_patch ->> 'billable')::boolean else e.billable end,
    notes = case when p_patch ? 'notes' then p_patch ->> 'notes' else e.notes end
  where organization_id = e.organization_id and id = p_id;
  return query select * from api.time_entry_get(p_id);
end
$$;

alter function api.time_entry_update(p_id text, p_if_match integer[], p_patch jsonb) owner to svc_api;

comment on function api.time_entry_update(p_id text, p_if_match integer[], p_patch jsonb) is 'updateTimeEntry, manager only (else SVR03 ROLE_REQUIRED): with a matching If-Match (else 412 STALE_RESOURCE) it changes only project_id, task_id, work_date, minutes, billable and notes, refusing status (APPROVAL_REQUIRED when asked to approve or reject, else IMMUTABLE_FIELD) and the fixed fields (id, object, member_id, subject, external_id, approval_id, created_at, updated_at: IMMUTABLE_FIELD) all together; tg_time_entries__lock refuses any change unless the entry is draft or rejected (SVC17 TIME_ENTRY_LOCKED), and the validation trigger checks the result. It runs as svc_api because svc_runtime has no privilege on app.time_entries; the row is locked and updated by the signed context''s organization, under the policy "Managers change time".';

revoke all on function api.time_entry_update(p_id text, p_if_match integer[], p_patch jsonb) from public;
grant execute on function api.time_entry_update(p_id text, p_if_match integer[], p_patch jsonb) to svc_runtime;
grant execute on function api.time_entry_update(p_id text, p_if_match integer[], p_patch jsonb) to svc_owner;
grant execute on function api.time_entry_update(p_id text, p_if_match integer[], p_patch jsonb) to svc_worker;

-- function control.approval_decide(text, text, text)

create function control.approval_decide(p_approval text, p_decision text, p_by text) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_org text := (select x.organization_id from app.approvals x where x.id = p_approval);
  a app.approvals;
  v_by text := app_private.normalize_email(p_by);
begin
  select * into a from app.approvals where organization_id = v_org and id = p_approval for update;
  perform app_private.require_found(found, 'APPROVAL_NOT_FOUND', p_approval);
  if a.status <> 'pending' then
    perform app_private.raise('SVC18', 'APPROVAL_ALREADY_DECIDED', format('the approval is already %s', a.status));
  end if;
  if not exists (select from app.members m where m.organization_id = a.organization_id and m.id = v_by and m.status = 'active'
                  and (case a.category when 'project' then 'manager' when 'financial' then 'finance' else 'hr' end) = any (m.svc_roles)) then
    perform app_private.raise('SVC18', 'APPROVER_NOT_ELIGIBLE', format('%s is not an active member who may decide this approval', v_by));
  end if;
  update app.approvals set status = p_decision, decision = p_decision, decided_at = now(), approver_member_id = v_by
   where organization_id = a.organization_id and id = p_approval;
  if a.resource_type = 'time_entry' then
    update app.time_entries set status = p_decision where organization_id = a.organization_id and id = a.resource_id;
  end if;
end
$$;

revoke all on function control.approval_decide(p_approval text, p_decision text, p_by text) from public;
grant execute on function control.approval_decide(p_approval text, p_decision text, p_by text) to svc_admin;

revoke create on schema api, app, app_private, control, reporting, skills from svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
