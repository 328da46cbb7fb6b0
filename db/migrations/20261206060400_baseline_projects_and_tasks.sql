-- migrate:up

/** The baseline, 4 of 16. Projects and tasks: projects, task workflows and their transitions, tasks, dependencies, notes and activity.
 * Laid out by table: each table, then its keys and indexes, row security and policies, triggers
 * and their functions, and grants; then the area's views and commands. db/README.md, "The
 * baseline", says how it was made and proved equal to the migrations it replaced. */
set local check_function_bodies = false;
set local client_min_messages = warning;
set local search_path = '';

-- While this file runs, the owners of its functions and views may create in the schemas (`alter … owner to`
-- a role needs it when the migrating role is not a superuser); taken back at its end.
grant create on schema api, app, app_private, control, reporting, skills to svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- function app_private.readable_custom_fields(text, text, jsonb)

create function app_private.readable_custom_fields(p_org text, p_object_type text, p_values jsonb) returns jsonb
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  return (select coalesce(jsonb_object_agg(d.api_name, p_values -> d.api_name), '{}'::jsonb)
            from app.custom_field_definitions d
           where d.organization_id = p_org and d.object_type = p_object_type and p_values ? d.api_name);
end
$$;

alter function app_private.readable_custom_fields(p_org text, p_object_type text, p_values jsonb) owner to svc_api;

comment on function app_private.readable_custom_fields(p_org text, p_object_type text, p_values jsonb) is 'The custom-field values a reader may see: of p_values, only the keys that are fields of p_object_type whose definitions svc_api''s "Clients see the custom fields their Roles may read" shows (the request''s organization, a readable Role held); api.projects and api.tasks call it for each row. It is svc_api''s definer so that whoever calls it (the views, svc_runtime) reads the definitions under that policy: a field hidden from the caller''s Roles never reaches the wire, and without a valid context nothing does.';

revoke all on function app_private.readable_custom_fields(p_org text, p_object_type text, p_values jsonb) from public;
grant execute on function app_private.readable_custom_fields(p_org text, p_object_type text, p_values jsonb) to svc_runtime;
grant execute on function app_private.readable_custom_fields(p_org text, p_object_type text, p_values jsonb) to svc_reporting;
grant execute on function app_private.readable_custom_fields(p_org text, p_object_type text, p_values jsonb) to svc_owner;
grant execute on function app_private.readable_custom_fields(p_org text, p_object_type text, p_values jsonb) to svc_worker;
grant execute on function app_private.readable_custom_fields(p_org text, p_object_type text, p_values jsonb) to svc_admin;
grant execute on function app_private.readable_custom_fields(p_org text, p_object_type text, p_values jsonb) to svc_gate;

-- function app_private.tg__check_custom_fields()

create function app_private.tg__check_custom_fields() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_old jsonb := case when tg_op = 'UPDATE' then old.custom_fields end;
  -- Roles are enforced for API requests (a request context) and for any session of the runtime role.
  v_enforce boolean := session_user = 'svc_runtime' or app.current_client_id() is not null;
begin
  if tg_op = 'UPDATE' and new.custom_fields is not distinct from old.custom_fields then
    return new;
  end if;
  perform app_private.raise_errors(app_private.custom_field_errors(
    new.organization_id, tg_argv[0], v_old, new.custom_fields,
    case when v_enforce then app.current_roles() end, tg_op = 'INSERT'));
  -- null clears: nothing stores a null value.
  new.custom_fields := jsonb_strip_nulls(new.custom_fields);
  return new;
end
$$;

alter function app_private.tg__check_custom_fields() owner to svc_owner;

comment on function app_private.tg__check_custom_fields() is 'BEFORE INSERT or UPDATE row trigger on app.projects and app.tasks (_300_check_custom_fields, its argument the object type): when custom_fields change, validates them with custom_field_errors and raises every problem at once (SVV22, or SVR04 when the first is CUSTOM_FIELD_FORBIDDEN), then strips nulls (a null clears a value). Roles apply to a request (a client in the signed context) and to any svc_runtime session, while other writers (svc-admin, migrations) are held to types and requirements; a definer as svc_owner because custom_field_errors reads the definitions the caller''s Roles hide.';

revoke all on function app_private.tg__check_custom_fields() from public;
grant execute on function app_private.tg__check_custom_fields() to svc_api;
grant execute on function app_private.tg__check_custom_fields() to svc_worker;
grant execute on function app_private.tg__check_custom_fields() to svc_admin;

-- function app_private.tg__emit_event()

create function app_private.tg__emit_event() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.tg__emit_event() owner to svc_owner;

comment on function app_private.tg__emit_event() is 'After insert or update on app.projects, app.tasks, app.time_entries and app.approvals (_950_emit_event, the argument naming the resource): emits <resource>.created or, when the version moved, <resource>.updated, or the more precise project.archived/restored, task.archived/restored/transitioned and time_entry.deleted/submitted/approved/rejected, through app_private.emit_event in the writer''s transaction. svc_owner''s definer because the writers may not write events; raises nothing.';

revoke all on function app_private.tg__emit_event() from public;
grant execute on function app_private.tg__emit_event() to svc_worker;
grant execute on function app_private.tg__emit_event() to svc_admin;

-- function app_private.custom_field_errors(text, text, jsonb, jsonb, text[], boolean)

create function app_private.custom_field_errors(p_org text, p_object_type text, p_old jsonb, p_new jsonb, p_roles text[], p_is_insert boolean) returns jsonb
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  v_errors jsonb := '[]';
  v_key text;
  v_value jsonb;
  d app.custom_field_definitions;
  v_pointer text;
  v_ok boolean;
  v_item jsonb;
begin
  if jsonb_typeof(p_new) is distinct from 'object' then
    return app_private.error('/custom_fields', 'INVALID_CUSTOM_FIELD', 'custom_fields must be an object');
  end if;
  for v_key in
    select k from jsonb_object_keys(p_new) k where p_old is null or not (p_old ? k) or p_old -> k <> p_new -> k
    union
    select k from jsonb_object_keys(coalesce(p_old, '{}')) k where not (p_new ? k)
    order by 1
  loop
    v_pointer := '/custom_fields/' || replace(replace(v_key, '~', '~0'), '/', '~1');
    v_value := p_new -> v_key;
    select * into d from app.custom_field_definitions
     where organization_id = p_org and object_type = p_object_type and api_name = v_key;
    if not found or (p_roles is not null and not (d.readable_roles && p_roles)) then
      v_errors := v_errors || app_private.error(v_pointer, 'CUSTOM_FIELD_NOT_FOUND',
        format('no custom field %s on %s; see GET /v1/schemas/%s', v_key, p_object_type, p_object_type));
      continue;
    end if;
    if p_roles is not null and cardinality(d.writable_roles) = 0 then
      v_errors := v_errors || app_private.error(v_pointer, 'CUSTOM_FIELD_READ_ONLY', format('%s is read-only', v_key));
      continue;
    end if;
    if p_roles is not null and not (d.writable_roles && p_roles) then
      v_errors := v_errors || app_private.error(v_pointer, 'CUSTOM_FIELD_FORBIDDEN',
        format('writing %s requires one of the Roles: %s', v_key, array_to_string(d.writable_roles, ', ')));
      continue;
    end if;
    if v_value is null or jsonb_typeof(v_value) = 'null' then
      if d.required then
        v_errors := v_errors || app_private.error(v_pointer, 'CUSTOM_FIELD_REQUIRED', format('%s is required', v_key));
      end if;
      continue;
    end if;
    v_ok := case d.field_type
      when 'text' then jsonb_typeof(v_value) = 'string' and length(v_value #>> '{}') <= 10000
      when 'number' then jsonb_typeof(v_value) = 'number'
      when 'boolean' then jsonb_typeof(v_value) = 'boolean'
      when 'date' then jsonb_typeof(v_value) = 'string' and (v_value #>> '{}') ~ '^\d{4}-\d{2}-\d{2}$'
                       and app_private.is_valid_date(v_value #>> '{}')
      when 'select' then jsonb_typeof(v_value) = 'string'
                       and exists (select from jsonb_array_elements(d.options) o where o -> 'value' = v_value)
      when 'multi_select' then jsonb_typeof(v_value) = 'array'
                       and not exists (select from jsonb_array_elements(v_value) e
                                        where not exists (select from jsonb_array_elements(d.options) o where o -> 'value' = e))
                       and (select count(*) = count(distinct e) from jsonb_array_elements(v_value) e)
      when 'member' then jsonb_typeof(v_value) = 'string'
                       and exists (select from app.members m where m.organization_id = p_org and m.id = v_value #>> '{}'
                                    and m.status = 'active')
      else false end;
    if not v_ok then
      v_errors := v_errors || app_private.error(v_pointer, 'CUSTOM_FIELD_VALUE_INVALID',
        format('%s must be a valid %s%s', v_key, replace(d.field_type, '_', ' '),
               case when d.field_type in ('select', 'multi_select')
                    then ' (' || (select string_agg(o ->> 'value', ', ') from jsonb_array_elements(d.options) o) || ')'
                    when d.field_type = 'member' then ' (the email of an active member)' else '' end));
    end if;
  end loop;
  if p_is_insert then
    for d in select * from app.custom_field_definitions
              where organization_id = p_org and object_type = p_object_type and required and not (p_new ? api_name)
                and (p_roles is null or writable_roles && p_roles)
              order by api_name
    loop
      v_errors := v_errors || app_private.error('/custom_fields/' || d.api_name, 'CUSTOM_FIELD_REQUIRED',
        format('%s is required', d.api_name));
    end loop;
  end if;
  return v_errors;
end
$_$;

alter function app_private.custom_field_errors(p_org text, p_object_type text, p_old jsonb, p_new jsonb, p_roles text[], p_is_insert boolean) owner to svc_owner;

comment on function app_private.custom_field_errors(p_org text, p_object_type text, p_old jsonb, p_new jsonb, p_roles text[], p_is_insert boolean) is 'Lists every problem of a custom-field change from p_old to p_new on p_org''s p_object_type: unknown fields, or with p_roles fields those Roles may not read (CUSTOM_FIELD_NOT_FOUND), read-only or Role-forbidden fields (CUSTOM_FIELD_READ_ONLY, CUSTOM_FIELD_FORBIDDEN), values of the wrong type or option (CUSTOM_FIELD_VALUE_INVALID), required fields missing or cleared (CUSTOM_FIELD_REQUIRED); with p_roles null (the control plane) only types and requirements apply. It is svc_owner''s definer because it must read every definition, those svc_api''s policy hides from the caller''s Roles included; it trusts p_org, so neither svc_api nor svc_runtime may execute it, and svc_owner''s policy keeps a request to its own organization.';

revoke all on function app_private.custom_field_errors(p_org text, p_object_type text, p_old jsonb, p_new jsonb, p_roles text[], p_is_insert boolean) from public;
grant execute on function app_private.custom_field_errors(p_org text, p_object_type text, p_old jsonb, p_new jsonb, p_roles text[], p_is_insert boolean) to svc_worker;
grant execute on function app_private.custom_field_errors(p_org text, p_object_type text, p_old jsonb, p_new jsonb, p_roles text[], p_is_insert boolean) to svc_admin;

-- function app_private.custom_field_patch_errors(text, jsonb, jsonb)

create function app_private.custom_field_patch_errors(p_object_type text, p_current jsonb, p_patch jsonb) returns jsonb
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  v_errors jsonb := '[]';
  v_key text;
  d app.custom_field_definitions;
  v_pointer text;
  v_roles text[] := app.current_roles();
begin
  if p_patch is null or jsonb_typeof(p_patch) <> 'object' then
    return v_errors;
  end if;
  for v_key in select k from jsonb_object_keys(p_patch) k order by 1 loop
    v_pointer := '/custom_fields/' || replace(replace(v_key, '~', '~0'), '/', '~1');
    select * into d from app.custom_field_definitions
     where organization_id = v__organization_id and object_type = p_object_type and api_name = v_key;
    if not found or not (d.readable_roles && v_roles) then
      v_errors := v_errors || app_private.error(v_pointer, 'CUSTOM_FIELD_NOT_FOUND',
        format('no custom field %s on %s; see GET /v1/schemas/%s', v_key, p_object_type, p_object_type));
    elsif cardinality(d.writable_roles) = 0 then
      v_errors := v_errors || app_private.error(v_pointer, 'CUSTOM_FIELD_READ_ONLY', format('%s is read-only', v_key));
    elsif not (d.writable_roles && v_roles) then
      v_errors := v_errors || app_private.error(v_pointer, 'CUSTOM_FIELD_FORBIDDEN',
        format('writing %s requires one of the Roles: %s', v_key, array_to_string(d.writable_roles, ', ')));
    end if;
  end loop;
  -- Value problems too, in the same list (every problem at once), except for keys already refused.
  return coalesce((
    select jsonb_agg(e order by e ->> 'pointer')
      from (select e from jsonb_array_elements(v_errors) e
            union all
            select e from jsonb_array_elements(app_private.custom_field_errors(v__organization_id, p_object_type,
                                                 p_current, coalesce(p_current, '{}') || p_patch, null, false)) e
             where not exists (select from jsonb_array_elements(v_errors) r where r ->> 'pointer' = e ->> 'pointer')) x), '[]');
end
$$;

alter function app_private.custom_field_patch_errors(p_object_type text, p_current jsonb, p_patch jsonb) owner to svc_owner;

comment on function app_private.custom_field_patch_errors(p_object_type text, p_current jsonb, p_patch jsonb) is 'Checks the custom_fields of an updateProject or updateTask patch key by key, changed or not: each key must be a field the request''s Roles may read (else CUSTOM_FIELD_NOT_FOUND, so a hidden value cannot be probed by sending guesses) and write (CUSTOM_FIELD_READ_ONLY, CUSTOM_FIELD_FORBIDDEN), then adds the value problems custom_field_errors finds for the other keys, every problem at once. A definer as svc_owner so it sees the definitions the caller''s Roles hide and may call custom_field_errors; it takes the organization and Roles from the request''s signed context.';

revoke all on function app_private.custom_field_patch_errors(p_object_type text, p_current jsonb, p_patch jsonb) from public;
grant execute on function app_private.custom_field_patch_errors(p_object_type text, p_current jsonb, p_patch jsonb) to svc_api;
grant execute on function app_private.custom_field_patch_errors(p_object_type text, p_current jsonb, p_patch jsonb) to svc_worker;
grant execute on function app_private.custom_field_patch_errors(p_object_type text, p_current jsonb, p_patch jsonb) to svc_admin;

-- function app_private.merge_custom_fields(jsonb, jsonb)

create function app_private.merge_custom_fields(p_current jsonb, p_patch jsonb) returns jsonb
    language sql immutable parallel safe
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
  -- Nulls stay in the merged value so the check trigger sees (and validates) every key sent;
  -- the trigger strips them once the change is accepted.
  select case when p_patch is null or jsonb_typeof(p_patch) <> 'object' then coalesce(p_patch, p_current)
              else coalesce(p_current, '{}') || p_patch end
$$;

alter function app_private.merge_custom_fields(p_current jsonb, p_patch jsonb) owner to svc_owner;

revoke all on function app_private.merge_custom_fields(p_current jsonb, p_patch jsonb) from public;
grant execute on function app_private.merge_custom_fields(p_current jsonb, p_patch jsonb) to svc_api;
grant execute on function app_private.merge_custom_fields(p_current jsonb, p_patch jsonb) to svc_worker;
grant execute on function app_private.merge_custom_fields(p_current jsonb, p_patch jsonb) to svc_admin;

-- function app_private.project_archive_blockers(text, text)

create function app_private.project_archive_blockers(p_org text, p_project_id text) returns text[]
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_open integer;
  v_pending integer;
  v_blockers text[] := array[]::text[];
begin
  select count(*) into v_open
    from app.tasks t
    join app.task_workflow_statuses s on s.organization_id = t.organization_id and s.workflow_id = t.workflow_id and s.status = t.status
   where t.organization_id = p_org and t.project_id = p_project_id and t.archived_at is null and s.category = 'open';
  if v_open > 0 then
    v_blockers := v_blockers || format('%s open task(s): complete, cancel or archive them first', v_open);
  end if;
  select count(*) into v_pending from app.time_entries e
   where e.organization_id = p_org and e.project_id = p_project_id and e.status = 'submitted' and e.deleted_at is null;
  if v_pending > 0 then
    v_blockers := v_blockers || format('%s time entr(ies) awaiting approval', v_pending);
  end if;
  return v_blockers;
end
$$;

alter function app_private.project_archive_blockers(p_org text, p_project_id text) owner to svc_owner;

comment on function app_private.project_archive_blockers(p_org text, p_project_id text) is 'Why project p_project_id of p_org cannot be archived yet: its unarchived tasks in an open status, and its undeleted time entries submitted and awaiting approval; an empty array when there are none. A definer as svc_owner because tg_projects__status_change runs as the writer (svc_api in a request) and must count all such work, whatever the caller''s Roles let it read; each statement names p_org, and svc_owner''s policy keeps a request to its own organization.';

revoke all on function app_private.project_archive_blockers(p_org text, p_project_id text) from public;
grant execute on function app_private.project_archive_blockers(p_org text, p_project_id text) to svc_api;
grant execute on function app_private.project_archive_blockers(p_org text, p_project_id text) to svc_worker;
grant execute on function app_private.project_archive_blockers(p_org text, p_project_id text) to svc_admin;

-- function app_private.project_not_found(text)

create function app_private.project_not_found(p_id text) returns void
    language sql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$ select app_private.raise('SVN04', 'PROJECT_NOT_FOUND', format('no project %s in your organization', p_id)) $$;

alter function app_private.project_not_found(p_id text) owner to svc_owner;

revoke all on function app_private.project_not_found(p_id text) from public;
grant execute on function app_private.project_not_found(p_id text) to svc_api;
grant execute on function app_private.project_not_found(p_id text) to svc_worker;
grant execute on function app_private.project_not_found(p_id text) to svc_admin;

-- function app_private.seed_default_task_workflow(text)

create function app_private.seed_default_task_workflow(p_org text) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.seed_default_task_workflow(p_org text) owner to svc_owner;

revoke all on function app_private.seed_default_task_workflow(p_org text) from public;
grant execute on function app_private.seed_default_task_workflow(p_org text) to svc_worker;
grant execute on function app_private.seed_default_task_workflow(p_org text) to svc_admin;

-- function app_private.task_archive_blockers(text, text)

create function app_private.task_archive_blockers(p_org text, p_task_id text) returns text[]
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  return (select coalesce(array_agg(t.id order by t.id), array[]::text[])
            from app.task_dependencies d
            join app.tasks t on t.organization_id = d.organization_id and t.id = d.task_id
            join app.task_workflow_statuses s on s.organization_id = t.organization_id and s.workflow_id = t.workflow_id and s.status = t.status
           where d.organization_id = p_org and d.predecessor_task_id = p_task_id and t.archived_at is null and s.category = 'open');
end
$$;

alter function app_private.task_archive_blockers(p_org text, p_task_id text) owner to svc_owner;

comment on function app_private.task_archive_blockers(p_org text, p_task_id text) is 'The ids of unarchived tasks in an open status that have task p_task_id of p_org as a predecessor: open work still waiting on it, which blocks archiving it. A definer as svc_owner so that tg_tasks__archive_rules sees every dependent task of the organization whoever writes; each statement names p_org, and svc_owner''s policy keeps a request to its own organization.';

revoke all on function app_private.task_archive_blockers(p_org text, p_task_id text) from public;
grant execute on function app_private.task_archive_blockers(p_org text, p_task_id text) to svc_api;
grant execute on function app_private.task_archive_blockers(p_org text, p_task_id text) to svc_worker;
grant execute on function app_private.task_archive_blockers(p_org text, p_task_id text) to svc_admin;

-- function app_private.task_not_found(text)

create function app_private.task_not_found(p_id text) returns void
    language sql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$ select app_private.raise('SVN04', 'TASK_NOT_FOUND', format('no task %s in your organization', p_id)) $$;

alter function app_private.task_not_found(p_id text) owner to svc_owner;

revoke all on function app_private.task_not_found(p_id text) from public;
grant execute on function app_private.task_not_found(p_id text) to svc_api;
grant execute on function app_private.task_not_found(p_id text) to svc_worker;
grant execute on function app_private.task_not_found(p_id text) to svc_admin;

-- table app.object_schemas

create table app.object_schemas (
    organization_id text not null,
    object_type text not null,
    label text not null,
    schema_version integer default 1 not null,
    constraint object_schemas_type_valid check ((object_type = any (array['project'::text, 'task'::text])))
);

alter table only app.object_schemas force row level security;

alter table only app.object_schemas
    add constraint object_schemas_pkey primary key (organization_id, object_type);

alter table only app.object_schemas
    add constraint object_schemas_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table app.object_schemas enable row level security;

create policy "Clients see their organization's object schemas" on app.object_schemas for select to svc_api using (organization_id = (select app.current_organization_id()));

comment on policy "Clients see their organization's object schemas" on app.object_schemas is 'svc_api reads the object schemas (project, task) and their schema_version of the request''s organization only; which fields a schema lists is decided by the custom-field definitions'' own policy.';

create policy "Commands act in the request's organization" on app.object_schemas to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.object_schemas is 'svc_owner, svc_worker and svc_admin read and write object schemas of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). Under it svc-admin''s sessions seed a new organization''s schemas and bump schema_version when a field changes, while a request reaches its own organization''s alone.';

grant select on table app.object_schemas to svc_api;
grant select,insert,delete,update on table app.object_schemas to svc_owner;
grant select,insert,delete,update on table app.object_schemas to svc_worker;
grant select,insert,delete,update on table app.object_schemas to svc_admin;

-- table app.custom_field_definitions

create table app.custom_field_definitions (
    organization_id text not null,
    object_type text not null,
    api_name text not null,
    label text not null,
    field_type text not null,
    required boolean default false not null,
    options jsonb default '[]'::jsonb not null,
    readable_roles text[] default '{member,manager,finance,hr}'::text[] not null,
    writable_roles text[] default '{manager}'::text[] not null,
    filterable boolean default false not null,
    sortable boolean default false not null,
    "position" integer default 0 not null,
    created_at timestamp with time zone default now() not null,
    updated_at timestamp with time zone default now() not null,
    constraint custom_field_definitions_api_name_format check ((api_name ~ '^[a-z][a-z0-9_]{0,62}$'::text)),
    constraint custom_field_definitions_label_length check (((length(label) >= 1) and (length(label) <= 200))),
    constraint custom_field_definitions_options_array check ((jsonb_typeof(options) = 'array'::text)),
    constraint custom_field_definitions_readable_roles_valid check ((readable_roles <@ array['member'::text, 'manager'::text, 'finance'::text, 'hr'::text])),
    constraint custom_field_definitions_select_has_options check (((field_type <> all (array['select'::text, 'multi_select'::text])) or (jsonb_array_length(options) > 0))),
    constraint custom_field_definitions_type_valid check ((field_type = any (array['text'::text, 'number'::text, 'date'::text, 'boolean'::text, 'select'::text, 'multi_select'::text, 'member'::text]))),
    constraint custom_field_definitions_writable_roles_valid check ((writable_roles <@ readable_roles))
);

alter table only app.custom_field_definitions force row level security;

alter table only app.custom_field_definitions
    add constraint custom_field_definitions_pkey primary key (organization_id, object_type, api_name);

alter table only app.custom_field_definitions
    add constraint custom_field_definitions_organization_id_object_type_fkey foreign key (organization_id, object_type) references app.object_schemas(organization_id, object_type) on delete cascade;

alter table app.custom_field_definitions enable row level security;

create policy "Clients see the custom fields their Roles may read" on app.custom_field_definitions for select to svc_api using ((organization_id = (select app.current_organization_id())) and (readable_roles && (select app.current_roles())));

comment on policy "Clients see the custom fields their Roles may read" on app.custom_field_definitions is 'svc_api reads a custom-field definition only in the request''s organization and when its readable_roles share a Role with the request''s Roles (app.current_roles()). A field the caller may not read is thus absent from its schemas and its values are dropped by readable_custom_fields, indistinguishable from a field that does not exist.';

create policy "Commands act in the request's organization" on app.custom_field_definitions to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.custom_field_definitions is 'svc_owner, svc_worker and svc_admin read and write custom-field definitions of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). custom_field_errors and custom_field_patch_errors read every definition here, those the caller''s Roles hide included, yet never another organization''s in a request; svc-admin defines and deletes fields for any organization.';

create function app_private.tg_custom_field_definitions__bump_schema_version() returns trigger
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  r record := coalesce(new, old);
begin
  update app.object_schemas set schema_version = schema_version + 1
   where organization_id = r.organization_id and object_type = r.object_type;
  return null;
end
$$;

alter function app_private.tg_custom_field_definitions__bump_schema_version() owner to svc_owner;

comment on function app_private.tg_custom_field_definitions__bump_schema_version() is 'AFTER INSERT, UPDATE or DELETE row trigger on app.custom_field_definitions (_900_bump_schema_version): every change of a field definition increments its object type''s schema_version in app.object_schemas, so a client that sends an older Svc-Schema-Version learns that its schema copy is stale (SVC14 OBJECT_SCHEMA_CHANGED, from app_private.check_schema_version). It runs as the writer, svc-admin''s field commands.';

create trigger _900_bump_schema_version after insert or delete or update on app.custom_field_definitions for each row execute function app_private.tg_custom_field_definitions__bump_schema_version();

grant select on table app.custom_field_definitions to svc_api;
grant select,insert,delete,update on table app.custom_field_definitions to svc_owner;
grant select,insert,delete,update on table app.custom_field_definitions to svc_worker;
grant select,insert,delete,update on table app.custom_field_definitions to svc_admin;

revoke all on function app_private.tg_custom_field_definitions__bump_schema_version() from public;
grant execute on function app_private.tg_custom_field_definitions__bump_schema_version() to svc_worker;
grant execute on function app_private.tg_custom_field_definitions__bump_schema_version() to svc_admin;

-- table app.projects

create table app.projects (
    organization_id text not null,
    id text default app_private.new_id('prj'::text) not null,
    code text not null,
    name text not null,
    description text,
    status text default 'active'::text not null,
    start_date date,
    end_date date,
    customer_id text,
    manager_member_id text,
    currency text not null,
    custom_fields jsonb default '{}'::jsonb not null,
    created_by_client_id text,
    created_at timestamp with time zone default now() not null,
    updated_at timestamp with time zone default now() not null,
    archived_at timestamp with time zone,
    version integer default 1 not null,
    constraint projects_archived_at_iff_archived check (((status = 'archived'::text) = (archived_at is not null))),
    constraint projects_code_format check ((code ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$'::text)),
    constraint projects_currency_iso4217 check ((currency ~ '^[A-Z]{3}$'::text)),
    constraint projects_dates_ordered check (((start_date is null) or (end_date is null) or (end_date >= start_date))),
    constraint projects_description_length check ((length(description) <= 10000)),
    constraint projects_name_length check (((length(name) >= 1) and (length(name) <= 200))),
    constraint projects_status_valid check ((status = any (array['active'::text, 'archived'::text])))
);

alter table only app.projects force row level security;

alter table only app.projects
    add constraint projects_pkey primary key (organization_id, id);

create unique index projects_code_unique on app.projects using btree (organization_id, lower(code));

create index projects_id on app.projects using btree (id);

create index projects_org_created on app.projects using btree (organization_id, created_at, id);

create index projects_org_name on app.projects using btree (organization_id, lower(name), id);

alter table only app.projects
    add constraint projects_created_by_client_fkey foreign key (organization_id, created_by_client_id) references app.api_clients(organization_id, id) on delete restrict;

alter table only app.projects
    add constraint projects_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table only app.projects
    add constraint projects_organization_id_manager_member_id_fkey foreign key (organization_id, manager_member_id) references app.members(organization_id, id) on delete restrict;

alter table app.projects enable row level security;

create policy "Clients with any Role see projects of their organization" on app.projects for select to svc_api using ((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{member,manager,finance,hr}'::text[])));

comment on policy "Clients with any Role see projects of their organization" on app.projects is 'svc_api reads projects of the request''s organization for a client holding any of member, manager, finance or hr, as the spec''s Role matrix lets every Role read projects. Which fields each Role sees is the api.projects view''s projection (finance financial fields, hr staffing fields).';

create policy "Commands act in the request's organization" on app.projects to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.projects is 'svc_owner, svc_worker and svc_admin read and write projects of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The triggers of tasks, time entries and tickets read a row''s project under it, so a definer''s wrong WHERE still reaches no other organization in a request, while jobs and the control plane reach them all.';

create policy "Managers create projects" on app.projects for insert to svc_api with check ((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text)));

comment on policy "Managers create projects" on app.projects is 'svc_api may insert a project only into the request''s organization and only for a client holding manager, since createProject is a manager''s operation; column grants leave id, status, version and audit fields to the service.';

create policy "Managers update projects" on app.projects for update to svc_api using (((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text)))) with check (((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text))));

comment on policy "Managers update projects" on app.projects is 'svc_api may update only projects of the request''s organization, for a client holding manager, checked before and after the change so no project moves to another organization: updateProject, archiveProject and restoreProject are manager operations. Column grants keep id, organization, currency and audit fields fixed.';

create function app_private.tg_projects__check_references() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_errors jsonb := '[]';
  v_restoring boolean := tg_op = 'UPDATE' and old.status = 'archived' and new.status = 'active';
begin
  if new.customer_id is not null
     and (tg_op = 'INSERT' or v_restoring or new.customer_id is distinct from old.customer_id)
     and not exists (select from app.customers c where c.id = new.customer_id and c.organization_id = new.organization_id
                      and c.kind = 'company' and c.deleted_at is null) then
    v_errors := v_errors || app_private.error('/customer_id', 'VALIDATION_FAILED',
      'customer_id must be a company (com_) of your organization that is not deleted');
  end if;
  if new.manager_member_id is not null
     and (tg_op = 'INSERT' or v_restoring or new.manager_member_id is distinct from old.manager_member_id)
     and not exists (select from app.members m where m.organization_id = new.organization_id and m.id = new.manager_member_id
                      and m.status = 'active' and 'manager' = any (m.svc_roles)) then
    v_errors := v_errors || app_private.error('/manager_member_id', 'INVALID_MANAGER',
      'manager_member_id must be the email of an active member who holds the manager Role');
  end if;
  perform app_private.raise_errors(v_errors);
  return new;
end
$$;

alter function app_private.tg_projects__check_references() owner to svc_owner;

comment on function app_private.tg_projects__check_references() is 'BEFORE INSERT or UPDATE row trigger on app.projects (_200_check_references): on insert, on a change of the field, and on restore (archived to active), customer_id must be an undeleted company (com_) of the project''s organization (VALIDATION_FAILED) and manager_member_id an active member of it holding the manager Role (INVALID_MANAGER), raised together as SVV22. A definer as svc_owner so that every writer is held to the spec''s rule that references belong to the same organization and are not deleted, although svc_api cannot read customers.';

create function app_private.tg_projects__status_change() returns trigger
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_blockers text[];
begin
  if new.status = old.status then
    return new;
  end if;
  if new.status = 'archived' then
    v_blockers := app_private.project_archive_blockers(new.organization_id, new.id);
    if cardinality(v_blockers) > 0 then
      perform app_private.raise('SVC15', 'PROJECT_ARCHIVE_BLOCKED',
        'the project has active work: ' || array_to_string(v_blockers, '; '));
    end if;
    new.archived_at := now();
  else
    new.archived_at := null;
  end if;
  return new;
end
$$;

alter function app_private.tg_projects__status_change() owner to svc_owner;

comment on function app_private.tg_projects__status_change() is 'BEFORE UPDATE OF status row trigger on app.projects (_150_status_change): archiving is refused while app_private.project_archive_blockers reports open tasks or time awaiting approval (SVC15 PROJECT_ARCHIVE_BLOCKED), the spec''s "no active workflow blocks it"; it sets archived_at on archiving and clears it on restore. It runs as the writer, and the blockers helper counts past the caller''s Roles.';

create trigger _100_touch_version before update on app.projects for each row execute function app_private.tg__touch_version();

create trigger _150_status_change before update of status on app.projects for each row execute function app_private.tg_projects__status_change();

create trigger _200_check_references before insert or update on app.projects for each row execute function app_private.tg_projects__check_references();

create trigger _300_check_custom_fields before insert or update on app.projects for each row execute function app_private.tg__check_custom_fields('project');

create trigger _950_emit_event after insert or update on app.projects for each row execute function app_private.tg__emit_event('project');

grant select on table app.projects to svc_api;
grant select,insert,delete,update on table app.projects to svc_owner;
grant select,insert,delete,update on table app.projects to svc_worker;
grant select,insert,delete,update on table app.projects to svc_admin;

grant insert(organization_id) on table app.projects to svc_api;

grant insert(code),update(code) on table app.projects to svc_api;

grant insert(name),update(name) on table app.projects to svc_api;

grant insert(description),update(description) on table app.projects to svc_api;

grant update(status) on table app.projects to svc_api;

grant insert(start_date),update(start_date) on table app.projects to svc_api;

grant insert(end_date),update(end_date) on table app.projects to svc_api;

grant insert(customer_id),update(customer_id) on table app.projects to svc_api;

grant insert(manager_member_id),update(manager_member_id) on table app.projects to svc_api;

grant insert(currency) on table app.projects to svc_api;

grant insert(custom_fields),update(custom_fields) on table app.projects to svc_api;

grant insert(created_by_client_id) on table app.projects to svc_api;

revoke all on function app_private.tg_projects__check_references() from public;
grant execute on function app_private.tg_projects__check_references() to svc_worker;
grant execute on function app_private.tg_projects__check_references() to svc_admin;

revoke all on function app_private.tg_projects__status_change() from public;
grant execute on function app_private.tg_projects__status_change() to svc_api;
grant execute on function app_private.tg_projects__status_change() to svc_worker;
grant execute on function app_private.tg_projects__status_change() to svc_admin;

-- table app.task_workflows

create table app.task_workflows (
    organization_id text not null,
    id text default app_private.new_id('twf'::text) not null,
    name text not null,
    is_default boolean default false not null,
    allow_cross_project_dependencies boolean default false not null,
    members_may_add_notes boolean default false not null
);

alter table only app.task_workflows force row level security;

alter table only app.task_workflows
    add constraint task_workflows_pkey primary key (organization_id, id);

create index task_workflows_id on app.task_workflows using btree (id);

create unique index task_workflows_one_default on app.task_workflows using btree (organization_id) where is_default;

alter table only app.task_workflows
    add constraint task_workflows_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table app.task_workflows enable row level security;

create policy "Clients see their organization's workflows" on app.task_workflows for select to svc_api using (organization_id = (select app.current_organization_id()));

comment on policy "Clients see their organization's workflows" on app.task_workflows is 'svc_api reads the task workflows of the request''s organization only, with the organization''s task policy (members_may_add_notes, allow_cross_project_dependencies). svc_api may not write them: the workflow is seeded with the organization and its policy set by svc-admin.';

create policy "Commands act in the request's organization" on app.task_workflows to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.task_workflows is 'svc_owner, svc_worker and svc_admin read and write task workflows of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The dependency and note triggers read the task policy under it in a request, and svc-admin seeds the default workflow and sets the task policy for any organization.';

grant select on table app.task_workflows to svc_api;
grant select,insert,delete,update on table app.task_workflows to svc_owner;
grant select,insert,delete,update on table app.task_workflows to svc_worker;
grant select,insert,delete,update on table app.task_workflows to svc_admin;

-- table app.task_workflow_statuses

create table app.task_workflow_statuses (
    organization_id text not null,
    workflow_id text not null,
    status text not null,
    category text not null,
    is_initial boolean default false not null,
    constraint task_workflow_statuses_category_valid check ((category = any (array['open'::text, 'done'::text, 'cancelled'::text]))),
    constraint task_workflow_statuses_format check ((status ~ '^[a-z][a-z0-9_]{0,40}$'::text))
);

alter table only app.task_workflow_statuses force row level security;

alter table only app.task_workflow_statuses
    add constraint task_workflow_statuses_pkey primary key (organization_id, workflow_id, status);

create unique index task_workflow_statuses_one_initial on app.task_workflow_statuses using btree (organization_id, workflow_id) where is_initial;

alter table only app.task_workflow_statuses
    add constraint task_workflow_statuses_workflow_fkey foreign key (organization_id, workflow_id) references app.task_workflows(organization_id, id) on delete cascade;

alter table app.task_workflow_statuses enable row level security;

create policy "Clients see their organization's workflows" on app.task_workflow_statuses for select to svc_api using (organization_id = (select app.current_organization_id()));

comment on policy "Clients see their organization's workflows" on app.task_workflow_statuses is 'svc_api reads the task workflow statuses (each with its category open, done or cancelled, and the initial one) of the request''s organization only, as the task commands and api.tasks need; svc_api may not write them: they are seeded with the organization.';

create policy "Commands act in the request's organization" on app.task_workflow_statuses to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.task_workflow_statuses is 'svc_owner, svc_worker and svc_admin read and write task workflow statuses of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The task triggers and archive blockers read statuses under it in a request, and svc-admin''s session seeds a new organization''s default workflow.';

grant select on table app.task_workflow_statuses to svc_api;
grant select,insert,delete,update on table app.task_workflow_statuses to svc_owner;
grant select,insert,delete,update on table app.task_workflow_statuses to svc_worker;
grant select,insert,delete,update on table app.task_workflow_statuses to svc_admin;

-- table app.task_workflow_transitions

create table app.task_workflow_transitions (
    organization_id text not null,
    workflow_id text not null,
    name text not null,
    from_status text not null,
    to_status text not null,
    constraint task_workflow_transitions_format check ((name ~ '^[a-z][a-z0-9_]{0,40}$'::text))
);

alter table only app.task_workflow_transitions force row level security;

alter table only app.task_workflow_transitions
    add constraint task_workflow_transitions_pkey primary key (organization_id, workflow_id, name, from_status);

create index task_workflow_transitions_pair on app.task_workflow_transitions using btree (workflow_id, from_status, to_status);

alter table only app.task_workflow_transitions
    add constraint task_workflow_transitions_from_status_fkey foreign key (organization_id, workflow_id, from_status) references app.task_workflow_statuses(organization_id, workflow_id, status) on delete cascade;

alter table only app.task_workflow_transitions
    add constraint task_workflow_transitions_to_status_fkey foreign key (organization_id, workflow_id, to_status) references app.task_workflow_statuses(organization_id, workflow_id, status) on delete cascade;

alter table app.task_workflow_transitions enable row level security;

create policy "Clients see their organization's workflows" on app.task_workflow_transitions for select to svc_api using (organization_id = (select app.current_organization_id()));

comment on policy "Clients see their organization's workflows" on app.task_workflow_transitions is 'svc_api reads the named task workflow transitions of the request''s organization only: what transitionTask accepts and what api.tasks offers on each task. svc_api may not write them: they are seeded with the organization.';

create policy "Commands act in the request's organization" on app.task_workflow_transitions to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.task_workflow_transitions is 'svc_owner, svc_worker and svc_admin read and write task workflow transitions of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). tg_tasks__legal_transition reads transitions under it in a request, and svc-admin''s session seeds a new organization''s default workflow.';

grant select on table app.task_workflow_transitions to svc_api;
grant select,insert,delete,update on table app.task_workflow_transitions to svc_owner;
grant select,insert,delete,update on table app.task_workflow_transitions to svc_worker;
grant select,insert,delete,update on table app.task_workflow_transitions to svc_admin;

-- table app.tasks

create table app.tasks (
    organization_id text not null,
    id text default app_private.new_id('tsk'::text) not null,
    project_id text not null,
    workflow_id text not null,
    code text,
    name text not null,
    description text,
    status text not null,
    priority text default 'medium'::text not null,
    start_at timestamp with time zone,
    due_at timestamp with time zone,
    completed_at timestamp with time zone,
    assignee_member_ids text[] default '{}'::text[] not null,
    custom_fields jsonb default '{}'::jsonb not null,
    archived_at timestamp with time zone,
    created_by_client_id text,
    created_at timestamp with time zone default now() not null,
    updated_at timestamp with time zone default now() not null,
    version integer default 1 not null,
    constraint tasks_assignees_bounded check ((cardinality(assignee_member_ids) <= 50)),
    constraint tasks_code_format check ((code ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$'::text)),
    constraint tasks_dates_ordered check (((start_at is null) or (due_at is null) or (due_at >= start_at))),
    constraint tasks_description_length check ((length(description) <= 20000)),
    constraint tasks_name_length check (((length(name) >= 1) and (length(name) <= 500))),
    constraint tasks_priority_valid check ((priority = any (array['low'::text, 'medium'::text, 'high'::text, 'urgent'::text])))
);

alter table only app.tasks force row level security;

alter table only app.tasks
    add constraint tasks_pkey primary key (organization_id, id);

create index tasks_assignees on app.tasks using gin (assignee_member_ids);

create unique index tasks_code_unique on app.tasks using btree (organization_id, project_id, lower(code)) where (code is not null);

create index tasks_id on app.tasks using btree (id);

create index tasks_org_created on app.tasks using btree (organization_id, created_at, id);

create index tasks_org_due on app.tasks using btree (organization_id, due_at, id);

create index tasks_org_project on app.tasks using btree (organization_id, project_id, created_at, id);

alter table only app.tasks
    add constraint tasks_created_by_client_fkey foreign key (organization_id, created_by_client_id) references app.api_clients(organization_id, id) on delete restrict;

alter table only app.tasks
    add constraint tasks_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table only app.tasks
    add constraint tasks_project_fkey foreign key (organization_id, project_id) references app.projects(organization_id, id) on delete restrict;

alter table only app.tasks
    add constraint tasks_status_fkey foreign key (organization_id, workflow_id, status) references app.task_workflow_statuses(organization_id, workflow_id, status) on delete restrict;

alter table only app.tasks
    add constraint tasks_workflow_fkey foreign key (organization_id, workflow_id) references app.task_workflows(organization_id, id) on delete restrict;

alter table app.tasks enable row level security;

create policy "Clients with any Role see tasks of their organization" on app.tasks for select to svc_api using ((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{member,manager,finance,hr}'::text[])));

comment on policy "Clients with any Role see tasks of their organization" on app.tasks is 'svc_api reads tasks of the request''s organization for a client holding any of member, manager, finance or hr, as the spec''s Role matrix lets every Role read tasks. Which fields each Role sees is the api.tasks view''s projection (finance project-financial context, hr staffing context).';

create policy "Commands act in the request's organization" on app.tasks to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.tasks is 'svc_owner, svc_worker and svc_admin read and write tasks of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The dependency, note and time-entry triggers and the archive blockers read tasks under it whatever the caller''s Roles, so a definer''s wrong WHERE still reaches no other organization in a request.';

create policy "Managers create tasks" on app.tasks for insert to svc_api with check ((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text)));

comment on policy "Managers create tasks" on app.tasks is 'svc_api may insert a task only into the request''s organization and only for a client holding manager, since createTask is a manager''s operation; column grants leave id, version, completion, archiving and audit fields to the service.';

create policy "Managers update tasks" on app.tasks for update to svc_api using (((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text)))) with check (((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text))));

comment on policy "Managers update tasks" on app.tasks is 'svc_api may update only tasks of the request''s organization, for a client holding manager, checked before and after the change so no task moves to another organization: updating, transitioning, archiving a task and replacing its dependencies are manager operations. Column grants keep id, organization, project and workflow fixed.';

create function app_private.tg_tasks__check_references() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.tg_tasks__check_references() owner to svc_owner;

comment on function app_private.tg_tasks__check_references() is 'BEFORE INSERT or UPDATE row trigger on app.tasks (_200_check_references): on insert or a change of project, the project must be an active project of the task''s organization (SVN04 PROJECT_NOT_FOUND); on insert or a change of assignees, they must be distinct active members of the organization (SVV22 INVALID_ASSIGNEE). A definer as svc_owner so every writer is held to references within its own organization, whatever the caller''s Roles let it read.';

create function app_private.tg_tasks__legal_transition() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_category text;
begin
  if tg_op = 'INSERT' then
    if not exists (select from app.task_workflow_statuses s
                    where s.organization_id = new.organization_id and s.workflow_id = new.workflow_id and s.status = new.status
                    and s.is_initial) then
      perform app_private.raise('SVV23', 'INVALID_TRANSITION', format('a new task starts in its workflow''s initial status, not %s', new.status));
    end if;
    new.completed_at := null;
  elsif new.status <> old.status then
    if not exists (select from app.task_workflow_transitions t
                    where t.organization_id = new.organization_id and t.workflow_id = new.workflow_id
                      and t.from_status = old.status and t.to_status = new.status) then
      perform app_private.raise('SVV23', 'INVALID_TRANSITION', format('no transition leads from %s to %s', old.status, new.status));
    end if;
    -- completed_at belongs to done statuses: set on completion (now unless given), cleared otherwise.
    select s.category into v_category from app.task_workflow_statuses s
     where s.organization_id = new.organization_id and s.workflow_id = new.workflow_id and s.status = new.status;
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

alter function app_private.tg_tasks__legal_transition() owner to svc_owner;

comment on function app_private.tg_tasks__legal_transition() is 'BEFORE INSERT or UPDATE row trigger on app.tasks (_150_legal_transition): a new task starts in its workflow''s initial status, a status changes only along a transition of the task''s workflow, completed_at is set on entering a done status (now unless given), cleared on leaving it and never changed otherwise, and a task never changes workflow; each refusal is SVV23 INVALID_TRANSITION. A definer as svc_owner so that every writer, not only transitionTask, follows the organization''s workflow as the spec''s state machine requires.';

create function app_private.tg_tasks__archive_rules() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_blockers text[];
  v_project_active boolean;
begin
  select p.status = 'active' into v_project_active from app.projects p where p.organization_id = new.organization_id and p.id = new.project_id;
  if new.archived_at is not null and old.archived_at is null then
    new.archived_at := now();
    v_blockers := app_private.task_archive_blockers(new.organization_id, new.id);
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

alter function app_private.tg_tasks__archive_rules() owner to svc_owner;

comment on function app_private.tg_tasks__archive_rules() is 'BEFORE UPDATE row trigger on app.tasks (_120_archive_rules): archiving stamps archived_at with now and is refused while unarchived open tasks depend on the task; any other change to a task of an archived project, restoring included, is refused (restore the project first), and an archived task changes only by being restored; each refusal is SVC16 TASK_ARCHIVE_BLOCKED. A definer as svc_owner so the project and every dependent task are seen whoever writes.';

create trigger _100_touch_version before update on app.tasks for each row execute function app_private.tg__touch_version();

create trigger _120_archive_rules before update on app.tasks for each row execute function app_private.tg_tasks__archive_rules();

create trigger _150_legal_transition before insert or update on app.tasks for each row execute function app_private.tg_tasks__legal_transition();

create trigger _200_check_references before insert or update on app.tasks for each row execute function app_private.tg_tasks__check_references();

create trigger _300_check_custom_fields before insert or update on app.tasks for each row execute function app_private.tg__check_custom_fields('task');

create trigger _950_emit_event after insert or update on app.tasks for each row execute function app_private.tg__emit_event('task');

grant select on table app.tasks to svc_api;
grant select,insert,delete,update on table app.tasks to svc_owner;
grant select,insert,delete,update on table app.tasks to svc_worker;
grant select,insert,delete,update on table app.tasks to svc_admin;

grant insert(organization_id) on table app.tasks to svc_api;

grant insert(project_id) on table app.tasks to svc_api;

grant insert(workflow_id) on table app.tasks to svc_api;

grant insert(code),update(code) on table app.tasks to svc_api;

grant insert(name),update(name) on table app.tasks to svc_api;

grant insert(description),update(description) on table app.tasks to svc_api;

grant insert(status),update(status) on table app.tasks to svc_api;

grant insert(priority),update(priority) on table app.tasks to svc_api;

grant insert(start_at),update(start_at) on table app.tasks to svc_api;

grant insert(due_at),update(due_at) on table app.tasks to svc_api;

grant update(completed_at) on table app.tasks to svc_api;

grant insert(assignee_member_ids),update(assignee_member_ids) on table app.tasks to svc_api;

grant insert(custom_fields),update(custom_fields) on table app.tasks to svc_api;

grant update(archived_at) on table app.tasks to svc_api;

grant insert(created_by_client_id) on table app.tasks to svc_api;

grant update(updated_at) on table app.tasks to svc_api;

revoke all on function app_private.tg_tasks__archive_rules() from public;
grant execute on function app_private.tg_tasks__archive_rules() to svc_worker;
grant execute on function app_private.tg_tasks__archive_rules() to svc_admin;

revoke all on function app_private.tg_tasks__check_references() from public;
grant execute on function app_private.tg_tasks__check_references() to svc_worker;
grant execute on function app_private.tg_tasks__check_references() to svc_admin;

revoke all on function app_private.tg_tasks__legal_transition() from public;
grant execute on function app_private.tg_tasks__legal_transition() to svc_worker;
grant execute on function app_private.tg_tasks__legal_transition() to svc_admin;

-- function app_private.lock_task(text)

create function app_private.lock_task(p_id text) returns app.tasks
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  t app.tasks;
begin
  select * into t from app.tasks where organization_id = v__organization_id and id = p_id for update;
  if not found then
    perform app_private.task_not_found(p_id);
  end if;
  return t;
end
$$;

alter function app_private.lock_task(p_id text) owner to svc_owner;

revoke all on function app_private.lock_task(p_id text) from public;
grant execute on function app_private.lock_task(p_id text) to svc_api;
grant execute on function app_private.lock_task(p_id text) to svc_worker;
grant execute on function app_private.lock_task(p_id text) to svc_admin;

-- table app.task_dependencies

create table app.task_dependencies (
    organization_id text not null,
    task_id text not null,
    predecessor_task_id text not null,
    constraint task_dependencies_not_self check ((task_id <> predecessor_task_id))
);

alter table only app.task_dependencies force row level security;

alter table only app.task_dependencies
    add constraint task_dependencies_pkey primary key (organization_id, task_id, predecessor_task_id);

create index task_dependencies_predecessor on app.task_dependencies using btree (predecessor_task_id);

alter table only app.task_dependencies
    add constraint task_dependencies_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table only app.task_dependencies
    add constraint task_dependencies_predecessor_fkey foreign key (organization_id, predecessor_task_id) references app.tasks(organization_id, id) on delete cascade;

alter table only app.task_dependencies
    add constraint task_dependencies_task_fkey foreign key (organization_id, task_id) references app.tasks(organization_id, id) on delete cascade;

alter table app.task_dependencies enable row level security;

create policy "Clients see dependencies in their organization" on app.task_dependencies for select to svc_api using (organization_id = (select app.current_organization_id()));

comment on policy "Clients see dependencies in their organization" on app.task_dependencies is 'svc_api reads every task dependency of the request''s organization, with no Role condition: the API shows a dependency as a task''s predecessor_task_ids, which api.tasks projects for member and manager only. Another organization''s dependencies, and all of them without a valid signed context, are invisible.';

create policy "Commands act in the request's organization" on app.task_dependencies to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.task_dependencies is 'svc_owner, svc_worker and svc_admin read and write task dependencies of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). tg_task_dependencies__no_cycle and task_archive_blockers walk the organization''s dependency graph under it, past svc_api''s Role checks but never into another organization in a request.';

create policy "Managers change dependencies" on app.task_dependencies to svc_api using (((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text)))) with check (((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text))));

comment on policy "Managers change dependencies" on app.task_dependencies is 'svc_api may insert and delete (and read) task dependencies only in the request''s organization and only for a client holding manager, checked before and after the change: replaceTaskDependencies is a manager''s operation. Cycles and cross-project links are tg_task_dependencies__no_cycle''s to refuse.';

create function app_private.tg_task_dependencies__no_cycle() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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
  select * into v_task from app.tasks where organization_id = new.organization_id and id = new.task_id;
  select * into v_pred from app.tasks where organization_id = new.organization_id and id = new.predecessor_task_id;
  if v_pred.id is null or v_pred.organization_id <> new.organization_id or v_task.organization_id <> new.organization_id then
    perform app_private.raise('SVN04', 'TASK_NOT_FOUND', format('no task %s in your organization', new.predecessor_task_id));
  end if;
  if v_pred.project_id <> v_task.project_id and not (select allow_cross_project_dependencies from app.task_workflows w
                                                       where w.organization_id = new.organization_id and w.id = v_task.workflow_id) then
    perform app_private.raise('SVV24', 'DEPENDENCY_CYCLE',
      format('%s is in another project and the workflow does not allow cross-project dependencies', v_pred.id));
  end if;
  if exists (
    with recursive upstream(id) as (
      select d.predecessor_task_id from app.task_dependencies d
       where d.organization_id = new.organization_id and d.task_id = new.predecessor_task_id
      union
      select d.predecessor_task_id from app.task_dependencies d join upstream u on d.task_id = u.id
       where d.organization_id = new.organization_id
    )
    select from upstream where id = new.task_id
  ) then
    perform app_private.raise('SVV24', 'DEPENDENCY_CYCLE',
      format('%s already depends, directly or indirectly, on %s', new.predecessor_task_id, new.task_id));
  end if;
  return new;
end
$$;

alter function app_private.tg_task_dependencies__no_cycle() owner to svc_owner;

comment on function app_private.tg_task_dependencies__no_cycle() is 'BEFORE INSERT or UPDATE row trigger on app.task_dependencies (_100_no_cycle): serializes dependency changes per organization with an advisory transaction lock and requires read committed (else SVC09 CONFLICT), so two concurrent inserts cannot each pass the check and close a cycle together; both tasks must be of the row''s organization (SVN04 TASK_NOT_FOUND), a predecessor in another project needs the workflow''s allow_cross_project_dependencies, and a predecessor that already depends on the task, directly or not, is refused (both SVV24 DEPENDENCY_CYCLE). A definer as svc_owner so it walks the organization''s whole dependency graph for every writer.';

create trigger _100_no_cycle before insert or update on app.task_dependencies for each row execute function app_private.tg_task_dependencies__no_cycle();

grant select,insert,delete on table app.task_dependencies to svc_api;
grant select,insert,delete,update on table app.task_dependencies to svc_owner;
grant select,insert,delete,update on table app.task_dependencies to svc_worker;
grant select,insert,delete,update on table app.task_dependencies to svc_admin;

revoke all on function app_private.tg_task_dependencies__no_cycle() from public;
grant execute on function app_private.tg_task_dependencies__no_cycle() to svc_worker;
grant execute on function app_private.tg_task_dependencies__no_cycle() to svc_admin;

-- table app.task_notes

create table app.task_notes (
    organization_id text not null,
    id text default app_private.new_id('tnote'::text) not null,
    task_id text not null,
    text text not null,
    subject_member_id text,
    author_client_id text not null,
    created_at timestamp with time zone default now() not null,
    constraint task_notes_text_length check (((length(text) >= 1) and (length(text) <= 20000)))
);

alter table only app.task_notes force row level security;

alter table only app.task_notes
    add constraint task_notes_pkey primary key (organization_id, id);

create index task_notes_task on app.task_notes using btree (task_id, created_at);

alter table only app.task_notes
    add constraint task_notes_author_client_fkey foreign key (organization_id, author_client_id) references app.api_clients(organization_id, id) on delete restrict;

alter table only app.task_notes
    add constraint task_notes_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table only app.task_notes
    add constraint task_notes_organization_id_subject_member_id_fkey foreign key (organization_id, subject_member_id) references app.members(organization_id, id) on delete restrict;

alter table only app.task_notes
    add constraint task_notes_task_fkey foreign key (organization_id, task_id) references app.tasks(organization_id, id) on delete cascade;

alter table app.task_notes enable row level security;

create policy "Clients see notes in their organization" on app.task_notes for select to svc_api using ((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{member,manager}'::text[])));

comment on policy "Clients see notes in their organization" on app.task_notes is 'svc_api reads task notes of the request''s organization only for a client holding member or manager: notes belong to a task''s work context, which finance and hr (limited to the project-financial and staffing context) do not see.';

create policy "Commands act in the request's organization" on app.task_notes to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.task_notes is 'svc_owner, svc_worker and svc_admin read and write task notes of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). It is every tenant table''s policy for the owner, worker and admin roles; requests themselves add notes only through svc_api''s "Managers, or members where the task policy permits, add notes".';

create policy "Managers, or members where the task policy permits, add notes" on app.task_notes for insert to svc_api with check ((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{manager,member}'::text[])) and (author_client_id = (select app.current_client_id())));

comment on policy "Managers, or members where the task policy permits, add notes" on app.task_notes is 'svc_api may insert a note only in the request''s organization, with author_client_id the calling client, for a client holding manager or member; whether a member-only client may (the workflow''s members_may_add_notes) is checked by tg_task_notes__members_may_add, because a policy that reads another table is refused on Citus. Notes are append-only: svc_api may neither update nor delete them.';

create function app_private.tg_task_notes__members_may_add() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  -- Only requests answer to Roles; the owner (migrations, admin) is not a request.
  if app.current_organization_id() is not null and not app.has_role('manager') and not coalesce((
       select w.members_may_add_notes from app.tasks t join app.task_workflows w
           on w.organization_id = t.organization_id and w.id = t.workflow_id
        where t.organization_id = new.organization_id and t.id = new.task_id), false) then
    perform app_private.raise('SVR03', 'ROLE_REQUIRED',
      'adding a note requires the manager Role, or member where the organization''s task policy permits');
  end if;
  return new;
end
$$;

alter function app_private.tg_task_notes__members_may_add() owner to svc_owner;

comment on function app_private.tg_task_notes__members_may_add() is 'BEFORE INSERT row trigger on app.task_notes (_010_members_may_add): in a request (a signed context naming an organization), a client without manager may add a note only when the task''s workflow has members_may_add_notes, else SVR03 ROLE_REQUIRED, the spec''s "member where the task policy permits"; writers outside a request (svc-admin, migrations) answer to no Role. A definer as svc_owner to read the task and its workflow; the rule lives here because a row policy that reads another table is refused on Citus.';

create trigger _010_members_may_add before insert on app.task_notes for each row execute function app_private.tg_task_notes__members_may_add();

revoke all on function app_private.tg_task_notes__members_may_add() from public;
grant execute on function app_private.tg_task_notes__members_may_add() to svc_worker;
grant execute on function app_private.tg_task_notes__members_may_add() to svc_admin;

grant select on table app.task_notes to svc_api;
grant select,insert,delete,update on table app.task_notes to svc_owner;
grant select,insert,delete,update on table app.task_notes to svc_worker;
grant select,insert,delete,update on table app.task_notes to svc_admin;

grant insert(organization_id) on table app.task_notes to svc_api;

grant insert(task_id) on table app.task_notes to svc_api;

grant insert(text) on table app.task_notes to svc_api;

grant insert(subject_member_id) on table app.task_notes to svc_api;

grant insert(author_client_id) on table app.task_notes to svc_api;

-- table app.task_activity

create table app.task_activity (
    organization_id text not null,
    id text default app_private.new_id('tact'::text) not null,
    task_id text not null,
    kind text not null,
    transition text,
    from_status text,
    to_status text,
    actor_client_id text not null,
    subject_member_id text,
    created_at timestamp with time zone default now() not null
);

alter table only app.task_activity force row level security;

alter table only app.task_activity
    add constraint task_activity_pkey primary key (organization_id, id);

alter table only app.task_activity
    add constraint task_activity_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table only app.task_activity
    add constraint task_activity_task_fkey foreign key (organization_id, task_id) references app.tasks(organization_id, id) on delete cascade;

alter table app.task_activity enable row level security;

create policy "Clients see task activity of their organization" on app.task_activity for select to svc_api using ((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{member,manager}'::text[])));

comment on policy "Clients see task activity of their organization" on app.task_activity is 'svc_api reads task activity (transitions with their actor and subject) of the request''s organization only for a client holding member or manager, the Roles that see a task''s whole work context; finance and hr do not.';

create policy "Commands act in the request's organization" on app.task_activity to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.task_activity is 'svc_owner, svc_worker and svc_admin read and write task activity of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). It is every tenant table''s policy for the owner, worker and admin roles; requests themselves write task history only through svc_api''s "Managers record task activity".';

create policy "Managers record task activity" on app.task_activity for insert to svc_api with check ((organization_id = (select app.current_organization_id())) and (actor_client_id = (select app.current_client_id())) and (select app.has_role('manager'::text)));

comment on policy "Managers record task activity" on app.task_activity is 'svc_api may insert task activity only in the request''s organization, for a client holding manager, and with actor_client_id the calling client: transitions are a manager''s, and the client is always the recorded actor (a subject only says whom the work concerns). svc_api may neither update nor delete it: task history is append-only.';

grant select on table app.task_activity to svc_api;
grant select,insert,delete,update on table app.task_activity to svc_owner;
grant select,insert,delete,update on table app.task_activity to svc_worker;
grant select,insert,delete,update on table app.task_activity to svc_admin;

grant insert(organization_id) on table app.task_activity to svc_api;

grant insert(task_id) on table app.task_activity to svc_api;

grant insert(kind) on table app.task_activity to svc_api;

grant insert(transition) on table app.task_activity to svc_api;

grant insert(from_status) on table app.task_activity to svc_api;

grant insert(to_status) on table app.task_activity to svc_api;

grant insert(actor_client_id) on table app.task_activity to svc_api;

grant insert(subject_member_id) on table app.task_activity to svc_api;

-- view api.object_schemas

create view api.object_schemas with (security_invoker='false') as
 select s.organization_id,
    s.object_type,
    s.schema_version,
    jsonb_build_object('object', 'object_schema_summary', 'object_type', s.object_type, 'label', s.label, 'schema_version', s.schema_version, 'custom_field_count', ( select count(*) as count
           from app.custom_field_definitions d
          where ((d.organization_id = s.organization_id) and (d.object_type = s.object_type)))) as summary,
    jsonb_build_object('object', 'object_schema', 'object_type', s.object_type, 'label', s.label, 'schema_version', s.schema_version, 'fields', coalesce(( select jsonb_agg(jsonb_build_object('api_name', d.api_name, 'label', d.label, 'field_type', d.field_type, 'custom_field', true, 'required', d.required, 'readable', true, 'writable', (d.writable_roles && (select app.current_roles())), 'filterable', d.filterable, 'sortable', d.sortable, 'groupable', (d.field_type = any (array['select'::text, 'boolean'::text, 'member'::text])), 'options', d.options, 'validation',
                case d.field_type
                    when 'text'::text then jsonb_build_object('max_length', 10000)
                    when 'date'::text then jsonb_build_object('format', 'date')
                    else '{}'::jsonb
                end, 'relationship_target',
                case
                    when (d.field_type = 'member'::text) then 'member'::text
                    else null::text
                end) order by d."position", d.api_name) as jsonb_agg
           from app.custom_field_definitions d
          where ((d.organization_id = s.organization_id) and (d.object_type = s.object_type))), '[]'::jsonb)) as doc
   from app.object_schemas s;

alter view api.object_schemas owner to svc_api;

grant select on table api.object_schemas to svc_runtime;
grant select on table api.object_schemas to svc_owner;

-- view api.projects

create view api.projects with (security_invoker='false') as
 select p.organization_id,
    p.id,
    p.code,
    p.name,
    p.status,
    p.customer_id,
    p.manager_member_id,
    p.start_date,
    p.end_date,
    p.created_at,
    p.updated_at,
    p.version,
    (((jsonb_build_object('object', 'project', 'id', p.id, 'code', p.code, 'name', p.name, 'status', p.status, 'start_date', p.start_date, 'end_date', p.end_date, 'created_at', app_private.iso_timestamp(p.created_at), 'updated_at', app_private.iso_timestamp(p.updated_at), 'custom_fields',
        case
            when (p.custom_fields = '{}'::jsonb) then '{}'::jsonb
            else app_private.readable_custom_fields(p.organization_id, 'project'::text, p.custom_fields)
        end) ||
        case
            when (select app.has_any_role('{member,manager}'::text[])) then jsonb_build_object('description', p.description, 'customer_id', p.customer_id, 'manager_member_id', p.manager_member_id, 'currency', p.currency)
            else '{}'::jsonb
        end) ||
        case
            when (select app.has_role('finance'::text)) then jsonb_build_object('customer_id', p.customer_id, 'currency', p.currency)
            else '{}'::jsonb
        end) ||
        case
            when (select app.has_role('hr'::text)) then jsonb_build_object('manager_member_id', p.manager_member_id)
            else '{}'::jsonb
        end) as doc
   from app.projects p;

alter view api.projects owner to svc_api;

grant select on table api.projects to svc_runtime;
grant select on table api.projects to svc_owner;

-- view api.tasks

create view api.tasks with (security_invoker='false') as
 select t.organization_id,
    t.id,
    t.project_id,
    t.status,
    t.priority,
    t.due_at,
    t.created_at,
    t.updated_at,
    t.name,
    t.code,
    t.assignee_member_ids,
    t.archived_at,
    t.version,
    (((jsonb_build_object('object', 'task', 'id', t.id, 'project_id', t.project_id, 'code', t.code, 'name', t.name, 'status', t.status, 'archived', (t.archived_at is not null), 'created_at', app_private.iso_timestamp(t.created_at), 'updated_at', app_private.iso_timestamp(t.updated_at), 'custom_fields',
        case
            when (t.custom_fields = '{}'::jsonb) then '{}'::jsonb
            else app_private.readable_custom_fields(t.organization_id, 'task'::text, t.custom_fields)
        end) ||
        case
            when (select app.has_any_role('{member,manager}'::text[])) then jsonb_build_object('description', t.description, 'priority', t.priority, 'start_at', app_private.iso_timestamp(t.start_at), 'due_at', app_private.iso_timestamp(t.due_at), 'completed_at', app_private.iso_timestamp(t.completed_at), 'assignee_member_ids', to_jsonb(t.assignee_member_ids), 'predecessor_task_ids', coalesce(( select jsonb_agg(d.predecessor_task_id order by d.predecessor_task_id) as jsonb_agg
               from app.task_dependencies d
              where (d.task_id = t.id)), '[]'::jsonb), 'transitions', coalesce(( select jsonb_agg(jsonb_build_object('name', tr.name, 'to_status', tr.to_status) order by tr.name) as jsonb_agg
               from app.task_workflow_transitions tr
              where ((tr.workflow_id = t.workflow_id) and (tr.from_status = t.status) and (t.archived_at is null))), '[]'::jsonb))
            else '{}'::jsonb
        end) ||
        case
            when (select app.has_role('finance'::text)) then jsonb_build_object('completed_at', app_private.iso_timestamp(t.completed_at))
            else '{}'::jsonb
        end) ||
        case
            when (select app.has_role('hr'::text)) then jsonb_build_object('assignee_member_ids', to_jsonb(t.assignee_member_ids), 'start_at', app_private.iso_timestamp(t.start_at), 'due_at', app_private.iso_timestamp(t.due_at))
            else '{}'::jsonb
        end) as doc
   from app.tasks t;

alter view api.tasks owner to svc_api;

grant select on table api.tasks to svc_runtime;
grant select on table api.tasks to svc_owner;

-- function api.object_schemas()

create function api.object_schemas() returns setof api.object_schemas
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.object_schemas where organization_id = $1' using v_organization_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.object_schemas', v_organization_id) || ') v where organization_id = $1'
            using v_organization_id;
        end if;
      end
      $_$;

alter function api.object_schemas() owner to svc_api;

comment on function api.object_schemas() is 'The rows of view api.object_schemas for the request''s organization (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

revoke all on function api.object_schemas() from public;
grant execute on function api.object_schemas() to svc_runtime;
grant execute on function api.object_schemas() to svc_owner;
grant execute on function api.object_schemas() to svc_worker;

-- function api.project_create(jsonb, integer)

create function api.project_create(p_body jsonb, p_schema_version integer) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  v_id text;
  v_currency text;
begin
  perform api.require_any_role('{manager}', 'createProject');
  perform app_private.check_schema_version('project', p_schema_version);
  -- Read first: Citus takes no subquery in the values of an INSERT.
  select o.currency into v_currency from app.organizations o where o.id = v__organization_id;
  insert into app.projects (organization_id, code, name, description, start_date, end_date, customer_id, manager_member_id,
                            currency, custom_fields, created_by_client_id)
  values (v__organization_id, p_body ->> 'code', p_body ->> 'name', p_body ->> 'description',
          (p_body ->> 'start_date')::date, (p_body ->> 'end_date')::date, p_body ->> 'customer_id',
          app_private.normalize_email(p_body ->> 'manager_member_id'),
          v_currency,
          coalesce(p_body -> 'custom_fields', '{}'), app.current_client_id())
  returning id into v_id;
  return query select * from api.project_get(v_id);
end
$$;

alter function api.project_create(p_body jsonb, p_schema_version integer) owner to svc_api;

comment on function api.project_create(p_body jsonb, p_schema_version integer) is 'createProject (manager, else SVR03 ROLE_REQUIRED): checks the client''s schema version (SVC14 OBJECT_SCHEMA_CHANGED), then inserts the project into the request''s organization with the organization''s currency, a normalized manager email and the calling client as creator; the service assigns id, status (active) and audit fields, and the project triggers check references and custom fields. It runs as svc_api because svc_runtime holds no table privilege: "Managers create projects" and svc_api''s column grants admit only the request''s organization and the columns a client may set.';

revoke all on function api.project_create(p_body jsonb, p_schema_version integer) from public;
grant execute on function api.project_create(p_body jsonb, p_schema_version integer) to svc_runtime;
grant execute on function api.project_create(p_body jsonb, p_schema_version integer) to svc_owner;
grant execute on function api.project_create(p_body jsonb, p_schema_version integer) to svc_worker;

-- function api.project_get(text)

create function api.project_get(p_id text) returns table(doc jsonb, version integer)
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
#variable_conflict use_column
begin
  return query select p.doc, p.version from api.projects(p_id) p where p.id = p_id;
end
$$;

alter function api.project_get(p_id text) owner to svc_api;

comment on function api.project_get(p_id text) is 'The project p_id as its wire document and version (its ETag), from api.projects, or no row when it is not visible there. It runs as svc_api because svc_runtime reads no table itself: svc_api''s policies show projects of the request''s organization to a client holding any Role, and the view projects the fields per Role (finance financial, hr staffing fields).';

revoke all on function api.project_get(p_id text) from public;
grant execute on function api.project_get(p_id text) to svc_runtime;
grant execute on function api.project_get(p_id text) to svc_owner;
grant execute on function api.project_get(p_id text) to svc_worker;

-- function api.project_set_status(text, text)

create function api.project_set_status(p_id text, p_status text) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  v_status text;
begin
  perform api.require_any_role('{manager}', case p_status when 'archived' then 'archiveProject' else 'restoreProject' end);
  select status into v_status from app.projects where organization_id = v__organization_id and id = p_id for update;
  if not found then
    perform app_private.project_not_found(p_id);
  end if;
  -- Archiving an archived project (or restoring an active one) changes nothing and succeeds.
  if v_status <> p_status then
    update app.projects set status = p_status where organization_id = v__organization_id and id = p_id;
  end if;
  return query select * from api.project_get(p_id);
end
$$;

alter function api.project_set_status(p_id text, p_status text) owner to svc_api;

comment on function api.project_set_status(p_id text, p_status text) is 'archiveProject and restoreProject (manager, else SVR03 ROLE_REQUIRED): locks the project of the request''s organization (SVN04 PROJECT_NOT_FOUND), changes nothing when it already has p_status, and otherwise sets the status, which tg_projects__status_change refuses while work is still active (SVC15 PROJECT_ARCHIVE_BLOCKED) and tg_projects__check_references rechecks on restore. It runs as svc_api under "Managers update projects", so only a manager''s request in its own organization changes a status, and only here (updateProject refuses status).';

revoke all on function api.project_set_status(p_id text, p_status text) from public;
grant execute on function api.project_set_status(p_id text, p_status text) to svc_runtime;
grant execute on function api.project_set_status(p_id text, p_status text) to svc_owner;
grant execute on function api.project_set_status(p_id text, p_status text) to svc_worker;

-- function api.project_update(text, integer[], jsonb, integer)

create function api.project_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  p app.projects;
  v_start_date date;
  v_end_date date;
  v_errors jsonb := '[]';
  k text;
begin
  perform api.require_any_role('{manager}', 'updateProject');
  select * into p from app.projects where organization_id = v__organization_id and id = p_id for update;
  if not found then
    perform app_private.project_not_found(p_id);
  end if;
  perform app_private.check_if_match(p.version, p_if_match);
  for k in select jsonb_object_keys(p_patch) order by 1 loop
    if k in ('id', 'object', 'organization_id', 'status', 'currency', 'created_at', 'updated_at', 'version') then
      v_errors := v_errors || app_private.error('/' || k, 'IMMUTABLE_FIELD',
        format('%s cannot be changed%s', k, case k when 'status' then ' here: use archive and restore' else '' end));
    end if;
  end loop;
  perform app_private.raise_errors(v_errors);
  perform app_private.check_schema_version('project', p_schema_version);
  perform app_private.raise_errors(app_private.custom_field_patch_errors('project', p.custom_fields, p_patch -> 'custom_fields'));
  -- Cast before the update: Citus takes no cast that is not immutable inside its CASE.
  v_start_date := (p_patch ->> 'start_date')::date;
  v_end_date := (p_patch ->> 'end_date')::date;
  update app.projects set
    code = case when p_patch ? 'code' then p_patch ->> 'code' else p.code end,
    name = case when p_patch ? 'name' then p_patch ->> 'name' else p.name end,
    description = case when p_patch ? 'description' then p_patch ->> 'description' else p.description end,
    start_date = case when p_patch ? 'start_date' then v_start_date else p.start_date end,
    end_date = case when p_patch ? 'end_date' then v_end_date else p.end_date end,
    customer_id = case when p_patch ? 'customer_id' then p_patch ->> 'customer_id' else p.customer_id end,
    manager_member_id = case when p_patch ? 'manager_member_id'
                             then app_private.normalize_email(p_patch ->> 'manager_member_id') else p.manager_member_id end,
    custom_fields = case when p_patch ? 'custom_fields'
                         then app_private.merge_custom_fields(p.custom_fields, p_patch -> 'custom_fields') else p.custom_fields end
  where organization_id = p.organization_id and id = p_id;
  return query select * from api.project_get(p_id);
end
$$;

alter function api.project_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) owner to svc_api;

comment on function api.project_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) is 'updateProject (manager, else SVR03 ROLE_REQUIRED): locks the project of the request''s organization (SVN04 PROJECT_NOT_FOUND), requires its current version in If-Match (SVS12 STALE_RESOURCE), refuses id, organization, status, currency, audit fields and version (SVV22 IMMUTABLE_FIELD), checks the schema version and every custom-field key against the caller''s Roles, then sets only the fields sent (custom fields merged, a null clears). It runs as svc_api under "Managers update projects" and column grants that keep id, organization, currency and audit fields out of a client''s reach.';

revoke all on function api.project_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) from public;
grant execute on function api.project_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) to svc_runtime;
grant execute on function api.project_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) to svc_owner;
grant execute on function api.project_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) to svc_worker;

-- function api.projects(text)

create function api.projects(p_id text default null::text) returns setof api.projects
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.projects v;
    else
      return query select * from api.projects v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.projects', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;

alter function api.projects(p_id text) owner to svc_api;

comment on function api.projects(p_id text) is 'The rows of view api.projects for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

revoke all on function api.projects(p_id text) from public;
grant execute on function api.projects(p_id text) to svc_runtime;
grant execute on function api.projects(p_id text) to svc_owner;
grant execute on function api.projects(p_id text) to svc_worker;

-- function api.task_add_note(text, text, text)

create function api.task_add_note(p_id text, p_text text, p_subject_member_id text) returns jsonb
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  t app.tasks;
  n app.task_notes;
begin
  select * into t from app.tasks where organization_id = v__organization_id and id = p_id;
  if not found then
    perform app_private.task_not_found(p_id);
  end if;
  if not app.has_role('manager') and not (app.has_role('member')
       and (select w.members_may_add_notes from app.task_workflows w where w.organization_id = t.organization_id and w.id = t.workflow_id)) then
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

alter function api.task_add_note(p_id text, p_text text, p_subject_member_id text) owner to svc_api;

comment on function api.task_add_note(p_id text, p_text text, p_subject_member_id text) is 'addTaskNote: a manager, or a member where the task''s workflow lets members add notes (members_may_add_notes; else SVR03 ROLE_REQUIRED), adds a note to a task of the request''s organization (SVN04 TASK_NOT_FOUND), with an optional subject that must be an active member (INVALID_SUBJECT_MEMBER) and the calling client as author; notes are append-only. It runs as svc_api under "Managers, or members where the task policy permits, add notes", and tg_task_notes__members_may_add holds the insert to the same rule.';

revoke all on function api.task_add_note(p_id text, p_text text, p_subject_member_id text) from public;
grant execute on function api.task_add_note(p_id text, p_text text, p_subject_member_id text) to svc_runtime;
grant execute on function api.task_add_note(p_id text, p_text text, p_subject_member_id text) to svc_owner;
grant execute on function api.task_add_note(p_id text, p_text text, p_subject_member_id text) to svc_worker;

-- function api.task_create(jsonb, integer)

create function api.task_create(p_body jsonb, p_schema_version integer) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  v_id text;
  v_workflow text;
  v_initial text;
begin
  perform api.require_any_role('{manager}', 'createTask');
  perform app_private.check_schema_version('task', p_schema_version);
  select w.id, s.status into v_workflow, v_initial
    from app.task_workflows w join app.task_workflow_statuses s on s.organization_id = w.organization_id and s.workflow_id = w.id and s.is_initial
   where w.organization_id = v__organization_id and w.is_default;
  insert into app.tasks (organization_id, project_id, workflow_id, code, name, description, status, priority, start_at, due_at,
                         assignee_member_ids, custom_fields, created_by_client_id)
  values (v__organization_id, p_body ->> 'project_id', v_workflow, p_body ->> 'code', p_body ->> 'name',
          p_body ->> 'description', v_initial, coalesce(p_body ->> 'priority', 'medium'),
          (p_body ->> 'start_at')::timestamptz, (p_body ->> 'due_at')::timestamptz,
          app_private.normalize_emails(coalesce(p_body -> 'assignee_member_ids', '[]')),
          coalesce(p_body -> 'custom_fields', '{}'), app.current_client_id())
  returning id into v_id;
  return query select * from api.task_get(v_id);
end
$$;

alter function api.task_create(p_body jsonb, p_schema_version integer) owner to svc_api;

comment on function api.task_create(p_body jsonb, p_schema_version integer) is 'createTask (manager, else SVR03 ROLE_REQUIRED): checks the schema version (SVC14 OBJECT_SCHEMA_CHANGED), then inserts the task into the request''s organization in its default workflow''s initial status, priority medium unless given, with normalized assignee emails and the calling client as creator; the task triggers require an active project of the organization, distinct active assignees, the initial status and valid custom fields. It runs as svc_api under "Managers create tasks" and svc_api''s column grants, since svc_runtime holds no table privilege.';

revoke all on function api.task_create(p_body jsonb, p_schema_version integer) from public;
grant execute on function api.task_create(p_body jsonb, p_schema_version integer) to svc_runtime;
grant execute on function api.task_create(p_body jsonb, p_schema_version integer) to svc_owner;
grant execute on function api.task_create(p_body jsonb, p_schema_version integer) to svc_worker;

-- function api.task_get(text)

create function api.task_get(p_id text) returns table(doc jsonb, version integer)
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
#variable_conflict use_column
begin
  return query select t.doc, t.version from api.tasks(p_id) t where t.id = p_id;
end
$$;

alter function api.task_get(p_id text) owner to svc_api;

comment on function api.task_get(p_id text) is 'The task p_id as its wire document and version (its ETag), from api.tasks, or no row when it is not visible there. It runs as svc_api because svc_runtime reads no table itself: svc_api''s policies show tasks of the request''s organization to a client holding any Role, and the view projects the fields per Role (finance project-financial, hr staffing context).';

revoke all on function api.task_get(p_id text) from public;
grant execute on function api.task_get(p_id text) to svc_runtime;
grant execute on function api.task_get(p_id text) to svc_owner;
grant execute on function api.task_get(p_id text) to svc_worker;

-- function api.task_replace_dependencies(text, integer[], text[])

create function api.task_replace_dependencies(p_id text, p_if_match integer[], p_predecessors text[]) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  t app.tasks;
  v_missing text[];
begin
  perform api.require_any_role('{manager}', 'replaceTaskDependencies');
  t := app_private.lock_task(p_id);
  perform app_private.check_if_match(t.version, p_if_match);
  select array_agg(x order by x) into v_missing from unnest(p_predecessors) x
   where not exists (select from app.tasks o where o.organization_id = t.organization_id and o.id = x);
  if v_missing is not null then
    perform app_private.raise_errors(app_private.error('/predecessor_task_ids', 'TASK_NOT_FOUND',
      'no such tasks in your organization: ' || array_to_string(v_missing, ', ')));
  end if;
  delete from app.task_dependencies where organization_id = t.organization_id and task_id = p_id and predecessor_task_id <> all (p_predecessors);
  insert into app.task_dependencies (organization_id, task_id, predecessor_task_id)
  select t.organization_id, p_id, x from unnest(p_predecessors) x
  on conflict do nothing;
  -- The dependency set is part of the task: its ETag changes.
  update app.tasks set updated_at = now() where organization_id = t.organization_id and id = p_id;
  return query select * from api.task_get(p_id);
end
$$;

alter function api.task_replace_dependencies(p_id text, p_if_match integer[], p_predecessors text[]) owner to svc_api;

comment on function api.task_replace_dependencies(p_id text, p_if_match integer[], p_predecessors text[]) is 'replaceTaskDependencies (manager, else SVR03 ROLE_REQUIRED): locks the task of the request''s organization (SVN04 TASK_NOT_FOUND), requires its current version in If-Match (SVS12 STALE_RESOURCE), refuses predecessors that are not tasks of the organization (SVV22 TASK_NOT_FOUND), and replaces the whole predecessor set, which tg_task_dependencies__no_cycle checks for cycles and cross-project links (SVV24 DEPENDENCY_CYCLE); the task''s updated_at moves so that its ETag changes. It runs as svc_api under "Managers change dependencies" and "Managers update tasks".';

revoke all on function api.task_replace_dependencies(p_id text, p_if_match integer[], p_predecessors text[]) from public;
grant execute on function api.task_replace_dependencies(p_id text, p_if_match integer[], p_predecessors text[]) to svc_runtime;
grant execute on function api.task_replace_dependencies(p_id text, p_if_match integer[], p_predecessors text[]) to svc_owner;
grant execute on function api.task_replace_dependencies(p_id text, p_if_match integer[], p_predecessors text[]) to svc_worker;

-- function api.task_set_archived(text, boolean)

create function api.task_set_archived(p_id text, p_archived boolean) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  t app.tasks;
begin
  perform api.require_any_role('{manager}', case when p_archived then 'archiveTask' else 'restoreTask' end);
  t := app_private.lock_task(p_id);
  -- The rules (blocking dependents, archived project) live in tg_tasks__archive_rules.
  if p_archived and t.archived_at is null then
    update app.tasks set archived_at = now() where organization_id = t.organization_id and id = p_id;
  elsif not p_archived and t.archived_at is not null then
    update app.tasks set archived_at = null where organization_id = t.organization_id and id = p_id;
  end if;
  return query select * from api.task_get(p_id);
end
$$;

alter function api.task_set_archived(p_id text, p_archived boolean) owner to svc_api;

comment on function api.task_set_archived(p_id text, p_archived boolean) is 'archiveTask and restoreTask (manager, else SVR03 ROLE_REQUIRED): locks the task of the request''s organization (SVN04 TASK_NOT_FOUND) and sets or clears archived_at, changing nothing when the task is already so; tg_tasks__archive_rules refuses archiving while open tasks depend on it and restoring while its project is archived (SVC16 TASK_ARCHIVE_BLOCKED). It runs as svc_api under "Managers update tasks", so only a manager''s request in its own organization archives or restores.';

revoke all on function api.task_set_archived(p_id text, p_archived boolean) from public;
grant execute on function api.task_set_archived(p_id text, p_archived boolean) to svc_runtime;
grant execute on function api.task_set_archived(p_id text, p_archived boolean) to svc_owner;
grant execute on function api.task_set_archived(p_id text, p_archived boolean) to svc_worker;

-- function api.task_transition(text, text, timestamp with time zone, text)

create function api.task_transition(p_id text, p_transition text, p_completed_at timestamp with time zone, p_subject_member_id text) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  t app.tasks;
  v_to text;
  v_category text;
  v_subject text;
  v_now timestamptz := now();  -- Citus takes no function call that is not immutable inside an update's CASE
begin
  perform api.require_any_role('{manager}', 'transitionTask');
  t := app_private.lock_task(p_id);
  v_subject := app_private.check_subject(p_subject_member_id);
  select tr.to_status, s.category into v_to, v_category
    from app.task_workflow_transitions tr
    join app.task_workflow_statuses s on s.organization_id = tr.organization_id and s.workflow_id = tr.workflow_id and s.status = tr.to_status
   where tr.organization_id = t.organization_id and tr.workflow_id = t.workflow_id and tr.name = p_transition and tr.from_status = t.status;
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
         completed_at = case when v_category = 'done' then coalesce(p_completed_at, v_now) end
   where organization_id = t.organization_id and id = p_id;
  insert into app.task_activity (organization_id, task_id, kind, transition, from_status, to_status, actor_client_id, subject_member_id)
  values (t.organization_id, p_id, 'transition', p_transition, t.status, v_to, app.current_client_id(), v_subject);
  return query select * from api.task_get(p_id);
end
$$;

alter function api.task_transition(p_id text, p_transition text, p_completed_at timestamp with time zone, p_subject_member_id text) owner to svc_api;

comment on function api.task_transition(p_id text, p_transition text, p_completed_at timestamp with time zone, p_subject_member_id text) is 'transitionTask (manager, else SVR03 ROLE_REQUIRED): locks the task of the request''s organization, checks the subject (an active member, INVALID_SUBJECT_MEMBER), and moves the task along the named transition only if its workflow offers it from the current status and the task is not archived (SVV23 INVALID_TRANSITION); completed_at is accepted only into a done status and not in the future (SVV22 VALIDATION_FAILED). It records the transition in app.task_activity with the calling client as actor and the subject as whom the work concerns, running as svc_api under "Managers update tasks" and "Managers record task activity".';

revoke all on function api.task_transition(p_id text, p_transition text, p_completed_at timestamp with time zone, p_subject_member_id text) from public;
grant execute on function api.task_transition(p_id text, p_transition text, p_completed_at timestamp with time zone, p_subject_member_id text) to svc_runtime;
grant execute on function api.task_transition(p_id text, p_transition text, p_completed_at timestamp with time zone, p_subject_member_id text) to svc_owner;
grant execute on function api.task_transition(p_id text, p_transition text, p_completed_at timestamp with time zone, p_subject_member_id text) to svc_worker;

-- function api.task_update(text, integer[], jsonb, integer)

create function api.task_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  t app.tasks;
  v_start_at timestamptz;
  v_due_at timestamptz;
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
  -- Cast before the update: Citus takes no cast that is not immutable inside its CASE.
  v_start_at := (p_patch ->> 'start_at')::timestamptz;
  v_due_at := (p_patch ->> 'due_at')::timestamptz;
  update app.tasks set
    code = case when p_patch ? 'code' then p_patch ->> 'code' else t.code end,
    name = case when p_patch ? 'name' then p_patch ->> 'name' else t.name end,
    description = case when p_patch ? 'description' then p_patch ->> 'description' else t.description end,
    priority = case when p_patch ? 'priority' then p_patch ->> 'priority' else t.priority end,
    start_at = case when p_patch ? 'start_at' then v_start_at else t.start_at end,
    due_at = case when p_patch ? 'due_at' then v_due_at else t.due_at end,
    assignee_member_ids = case when p_patch ? 'assignee_member_ids'
                               then app_private.normalize_emails(p_patch -> 'assignee_member_ids') else t.assignee_member_ids end,
    custom_fields = case when p_patch ? 'custom_fields'
                         then app_private.merge_custom_fields(t.custom_fields, p_patch -> 'custom_fields') else t.custom_fields end
  where organization_id = t.organization_id and id = p_id;
  return query select * from api.task_get(p_id);
end
$$;

alter function api.task_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) owner to svc_api;

comment on function api.task_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) is 'updateTask (manager, else SVR03 ROLE_REQUIRED): locks the task of the request''s organization (SVN04 TASK_NOT_FOUND), requires its current version in If-Match (SVS12 STALE_RESOURCE), refuses what changes only elsewhere or never (project, status, completed_at, dependencies, transitions, archived, identity and audit fields: SVV22 IMMUTABLE_FIELD, naming the endpoint to use), checks the schema version and each custom-field key against the caller''s Roles, then sets only the fields sent. It runs as svc_api under "Managers update tasks" and svc_api''s column grants, with the task triggers holding references, archive rules and custom fields.';

revoke all on function api.task_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) from public;
grant execute on function api.task_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) to svc_runtime;
grant execute on function api.task_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) to svc_owner;
grant execute on function api.task_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) to svc_worker;

-- function api.tasks(text)

create function api.tasks(p_id text default null::text) returns setof api.tasks
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.tasks v;
    else
      return query select * from api.tasks v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.tasks', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;

alter function api.tasks(p_id text) owner to svc_api;

comment on function api.tasks(p_id text) is 'The rows of view api.tasks for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

revoke all on function api.tasks(p_id text) from public;
grant execute on function api.tasks(p_id text) to svc_runtime;
grant execute on function api.tasks(p_id text) to svc_owner;
grant execute on function api.tasks(p_id text) to svc_worker;

-- function control.field_define(text, text, text, text, text, boolean, jsonb, text[], text[], boolean, boolean, integer)

create function control.field_define(p_org text, p_object_type text, p_api_name text, p_label text, p_field_type text, p_required boolean default false, p_options jsonb default '[]'::jsonb, p_readable_roles text[] default '{member,manager,finance,hr}'::text[], p_writable_roles text[] default '{manager}'::text[], p_filterable boolean default false, p_sortable boolean default false, p_position integer default 0) returns integer
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_now timestamptz := now();  -- Citus takes no function call in ON CONFLICT DO UPDATE
begin
  insert into app.custom_field_definitions as d (organization_id, object_type, api_name, label, field_type, required, options,
                                           readable_roles, writable_roles, filterable, sortable, position)
  values (p_org, p_object_type, p_api_name, p_label, p_field_type, coalesce(p_required, false), coalesce(p_options, '[]'),
          coalesce(p_readable_roles, '{member,manager,finance,hr}'), coalesce(p_writable_roles, '{manager}'),
          coalesce(p_filterable, false), coalesce(p_sortable, false), coalesce(p_position, 0))
  on conflict (organization_id, object_type, api_name) do update
    set label = excluded.label, field_type = excluded.field_type, required = excluded.required, options = excluded.options,
        readable_roles = excluded.readable_roles, writable_roles = excluded.writable_roles,
        filterable = excluded.filterable, sortable = excluded.sortable, position = excluded.position, updated_at = v_now;
  return (select schema_version from app.object_schemas where organization_id = p_org and object_type = p_object_type);
end
$$;

revoke all on function control.field_define(p_org text, p_object_type text, p_api_name text, p_label text, p_field_type text, p_required boolean, p_options jsonb, p_readable_roles text[], p_writable_roles text[], p_filterable boolean, p_sortable boolean, p_position integer) from public;
grant execute on function control.field_define(p_org text, p_object_type text, p_api_name text, p_label text, p_field_type text, p_required boolean, p_options jsonb, p_readable_roles text[], p_writable_roles text[], p_filterable boolean, p_sortable boolean, p_position integer) to svc_admin;

-- function control.field_delete(text, text, text)

create function control.field_delete(p_org text, p_object_type text, p_api_name text) returns integer
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  delete from app.custom_field_definitions where organization_id = p_org and object_type = p_object_type and api_name = p_api_name;
  perform app_private.require_found(found, 'CUSTOM_FIELD_NOT_FOUND', p_api_name);
  return (select schema_version from app.object_schemas where organization_id = p_org and object_type = p_object_type);
end
$$;

revoke all on function control.field_delete(p_org text, p_object_type text, p_api_name text) from public;
grant execute on function control.field_delete(p_org text, p_object_type text, p_api_name text) to svc_admin;

-- function control.task_policy_set(text, boolean, boolean)

create function control.task_policy_set(p_org text, p_members_may_add_notes boolean default null::boolean, p_allow_cross_project_dependencies boolean default null::boolean) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  update app.task_workflows
     set members_may_add_notes = coalesce(p_members_may_add_notes, members_may_add_notes),
         allow_cross_project_dependencies = coalesce(p_allow_cross_project_dependencies, allow_cross_project_dependencies)
   where organization_id = p_org and is_default;
  perform app_private.require_found(found, 'ORGANIZATION_NOT_FOUND', p_org);
end
$$;

revoke all on function control.task_policy_set(p_org text, p_members_may_add_notes boolean, p_allow_cross_project_dependencies boolean) from public;
grant execute on function control.task_policy_set(p_org text, p_members_may_add_notes boolean, p_allow_cross_project_dependencies boolean) to svc_admin;

revoke create on schema api, app, app_private, control, reporting, skills from svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
