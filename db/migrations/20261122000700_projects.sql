-- migrate:up

/** Projects. Status is assigned by the service: `active` on creation, `archived` by archiveProject. */
create table app.projects (
  organization_id text not null references app.organizations on delete cascade,
  id text primary key default app_private.new_id('prj'),
  code text not null constraint projects_code_format check (code ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$'),
  name text not null constraint projects_name_length check (length(name) between 1 and 200),
  description text constraint projects_description_length check (length(description) <= 10000),
  status text not null default 'active' constraint projects_status_valid check (status in ('active', 'archived')),
  start_date date,
  end_date date,
  customer_id text references app.customers on delete restrict,
  manager_member_id text,
  currency text not null constraint projects_currency_iso4217 check (currency ~ '^[A-Z]{3}$'),
  custom_fields jsonb not null default '{}',
  created_by_client_id text references app.api_clients on delete restrict,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  archived_at timestamptz,
  version integer not null default 1,
  constraint projects_dates_ordered check (start_date is null or end_date is null or end_date >= start_date),
  constraint projects_archived_at_iff_archived check ((status = 'archived') = (archived_at is not null)),
  foreign key (organization_id, manager_member_id) references app.members (organization_id, id) on delete restrict,
  unique (organization_id, id)
);
create unique index projects_code_unique on app.projects (organization_id, lower(code));
create index projects_org_created on app.projects (organization_id, created_at, id);
create index projects_org_name on app.projects (organization_id, lower(name), id);

create trigger _100_touch_version before update on app.projects
  for each row execute function app_private.tg__touch_version();

/** References must belong to the organization and be live; checked on create, on change and on
 * restore, so a DBA's insert is held to the same rules as the API. */
create function app_private.tg_projects__check_references() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
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
create trigger _200_check_references before insert or update on app.projects
  for each row execute function app_private.tg_projects__check_references();

create trigger _300_check_custom_fields before insert or update on app.projects
  for each row execute function app_private.tg__check_custom_fields('project');

/** What keeps a project from being archived: work still in progress. Tasks join below;
 * later areas (pending approvals, draft invoices) extend this function. */
create function app_private.project_archive_blockers(p_project_id text) returns text[]
language plpgsql stable security definer
set search_path = pg_catalog
as $$
begin
  return array[]::text[];
end
$$;
grant execute on function app_private.project_archive_blockers(text) to svc_runtime;

create function app_private.tg_projects__status_change() returns trigger
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  v_blockers text[];
begin
  if new.status = old.status then
    return new;
  end if;
  if new.status = 'archived' then
    v_blockers := app_private.project_archive_blockers(new.id);
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
grant execute on function app_private.tg_projects__status_change() to svc_runtime;
create trigger _150_status_change before update of status on app.projects
  for each row execute function app_private.tg_projects__status_change();

alter table app.projects enable row level security;
alter table app.projects force row level security;
create policy "Clients with any Role see projects of their organization" on app.projects for select to svc_runtime
  using (organization_id = (select app.current_organization_id())
         and (select app.has_any_role('{member,manager,finance,hr}')));
create policy "Managers create projects" on app.projects for insert to svc_runtime
  with check (organization_id = (select app.current_organization_id()) and (select app.has_role('manager')));
create policy "Managers update projects" on app.projects for update to svc_runtime
  using (organization_id = (select app.current_organization_id()) and (select app.has_role('manager')))
  with check (organization_id = (select app.current_organization_id()) and (select app.has_role('manager')));
-- Column grants make ids, organization and audit fields immutable for the runtime role.
grant select on app.projects to svc_runtime;
grant insert (organization_id, code, name, description, start_date, end_date, customer_id, manager_member_id, currency,
              custom_fields, created_by_client_id) on app.projects to svc_runtime;
grant update (code, name, description, start_date, end_date, customer_id, manager_member_id, custom_fields, status)
  on app.projects to svc_runtime;

/** Projection per Role: member and manager see the project; finance only financial fields;
 * hr only staffing fields. Custom fields: those the caller's Roles may read. */
create view api.projects with (security_invoker = true) as
select p.organization_id, p.id, p.code, p.name, p.status, p.customer_id, p.manager_member_id, p.start_date, p.end_date,
       p.created_at, p.updated_at, p.version,
       jsonb_build_object('object', 'project', 'id', p.id, 'code', p.code, 'name', p.name, 'status', p.status,
         'start_date', p.start_date, 'end_date', p.end_date,
         'created_at', app_private.iso_timestamp(p.created_at), 'updated_at', app_private.iso_timestamp(p.updated_at),
         'custom_fields', case when p.custom_fields = '{}'::jsonb then '{}'::jsonb
                               else app_private.readable_custom_fields(p.organization_id, 'project', p.custom_fields) end)
       || case when (select app.has_any_role('{member,manager}'))
               then jsonb_build_object('description', p.description, 'customer_id', p.customer_id,
                                       'manager_member_id', p.manager_member_id, 'currency', p.currency)
               else '{}'::jsonb end
       || case when (select app.has_role('finance')) then jsonb_build_object('customer_id', p.customer_id, 'currency', p.currency)
               else '{}'::jsonb end
       || case when (select app.has_role('hr')) then jsonb_build_object('manager_member_id', p.manager_member_id)
               else '{}'::jsonb end as doc
  from app.projects p;
grant select on api.projects to svc_runtime;

/** Commands. Each returns the resulting document and version. */
create function api.project_get(p_id text) returns table (doc jsonb, version integer)
language sql stable
set search_path = pg_catalog
as $$ select doc, version from api.projects where id = p_id $$;
grant execute on function api.project_get(text) to svc_runtime;

create function app_private.project_not_found(p_id text) returns void
language sql volatile
set search_path = pg_catalog
as $$ select app_private.raise('SVN04', 'PROJECT_NOT_FOUND', format('no project %s in your organization', p_id)) $$;
grant execute on function app_private.project_not_found(text) to svc_runtime;

create function api.project_create(p_body jsonb, p_schema_version integer) returns table (doc jsonb, version integer)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  v_id text;
begin
  perform api.require_any_role('{manager}', 'createProject');
  perform app_private.check_schema_version('project', p_schema_version);
  insert into app.projects (organization_id, code, name, description, start_date, end_date, customer_id, manager_member_id,
                            currency, custom_fields, created_by_client_id)
  values (app.current_organization_id(), p_body ->> 'code', p_body ->> 'name', p_body ->> 'description',
          (p_body ->> 'start_date')::date, (p_body ->> 'end_date')::date, p_body ->> 'customer_id',
          app_private.normalize_email(p_body ->> 'manager_member_id'),
          (select o.currency from app.organizations o where o.id = app.current_organization_id()),
          coalesce(p_body -> 'custom_fields', '{}'), app.current_client_id())
  returning id into v_id;
  return query select * from api.project_get(v_id);
end
$$;
grant execute on function api.project_create(jsonb, integer) to svc_runtime;

create function api.project_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer)
returns table (doc jsonb, version integer)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  p app.projects;
  v_errors jsonb := '[]';
  k text;
begin
  perform api.require_any_role('{manager}', 'updateProject');
  select * into p from app.projects where id = p_id for update;
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
  update app.projects set
    code = case when p_patch ? 'code' then p_patch ->> 'code' else p.code end,
    name = case when p_patch ? 'name' then p_patch ->> 'name' else p.name end,
    description = case when p_patch ? 'description' then p_patch ->> 'description' else p.description end,
    start_date = case when p_patch ? 'start_date' then (p_patch ->> 'start_date')::date else p.start_date end,
    end_date = case when p_patch ? 'end_date' then (p_patch ->> 'end_date')::date else p.end_date end,
    customer_id = case when p_patch ? 'customer_id' then p_patch ->> 'customer_id' else p.customer_id end,
    manager_member_id = case when p_patch ? 'manager_member_id'
                             then app_private.normalize_email(p_patch ->> 'manager_member_id') else p.manager_member_id end,
    custom_fields = case when p_patch ? 'custom_fields'
                         then app_private.merge_custom_fields(p.custom_fields, p_patch -> 'custom_fields') else p.custom_fields end
  where id = p_id;
  return query select * from api.project_get(p_id);
end
$$;
grant execute on function api.project_update(text, integer[], jsonb, integer) to svc_runtime;

create function api.project_set_status(p_id text, p_status text) returns table (doc jsonb, version integer)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  v_status text;
begin
  perform api.require_any_role('{manager}', case p_status when 'archived' then 'archiveProject' else 'restoreProject' end);
  select status into v_status from app.projects where id = p_id for update;
  if not found then
    perform app_private.project_not_found(p_id);
  end if;
  -- Archiving an archived project (or restoring an active one) changes nothing and succeeds.
  if v_status <> p_status then
    update app.projects set status = p_status where id = p_id;
  end if;
  return query select * from api.project_get(p_id);
end
$$;
grant execute on function api.project_set_status(text, text) to svc_runtime;

-- migrate:down
drop function api.project_set_status(text, text);
drop function api.project_update(text, integer[], jsonb, integer);
drop function api.project_create(jsonb, integer);
drop function app_private.project_not_found(text);
drop function api.project_get(text);
drop view api.projects;
drop table app.projects;
drop function app_private.tg_projects__status_change();
drop function app_private.project_archive_blockers(text);
drop function app_private.tg_projects__check_references();
