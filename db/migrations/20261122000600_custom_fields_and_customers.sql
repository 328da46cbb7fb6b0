-- migrate:up

/** Errors with a list: validations collect every problem and raise once. The detail is the JSON
 * array of {pointer, detail, code}; the message is the first problem's code. */
create function app_private.raise_errors(p_errors jsonb) returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  v_code text := p_errors -> 0 ->> 'code';
begin
  if p_errors is null or jsonb_array_length(p_errors) = 0 then
    return;
  end if;
  raise exception using
    errcode = case when v_code like '%FORBIDDEN' then 'SVR04' else 'SVV22' end,
    message = v_code, detail = p_errors::text, hint = 'errors';
end
$$;
grant execute on function app_private.raise_errors(jsonb) to svc_runtime;

create function app_private.error(p_pointer text, p_code text, p_detail text) returns jsonb
language sql immutable parallel safe
set search_path = pg_catalog
as $$ select jsonb_build_array(jsonb_build_object('pointer', p_pointer, 'detail', p_detail, 'code', p_code)) $$;
grant execute on function app_private.error(text, text, text) to svc_runtime;

/** Customers: referenced by projects (`com_`, companies) and invoices (`cus_`, billing customers).
 * No API endpoint: managed through the control plane. */
create table app.customers (
  organization_id text not null references app.organizations on delete cascade,
  id text primary key,
  kind text not null constraint customers_kind_valid check (kind in ('company', 'billing')),
  name text not null constraint customers_name_length check (length(name) between 1 and 200),
  delivery_email text constraint customers_delivery_email_format check (delivery_email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'),
  currency text constraint customers_currency_iso4217 check (currency ~ '^[A-Z]{3}$'),
  created_at timestamptz not null default now(),
  deleted_at timestamptz,
  constraint customers_id_prefix_matches_kind check (id like case kind when 'company' then 'com\_%' else 'cus\_%' end)
);
alter table app.customers enable row level security;
alter table app.customers force row level security;
create policy "Clients see customers of their organization" on app.customers for select to svc_runtime
  using (organization_id = (select app.current_organization_id()));
grant select on app.customers to svc_runtime;

create function control.customer_create(p_org text, p_kind text, p_name text, p_delivery_email text default null,
                                        p_currency text default null)
returns text
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  v_id text := app_private.new_id(case p_kind when 'company' then 'com' else 'cus' end);
begin
  insert into app.customers (organization_id, id, kind, name, delivery_email, currency)
  values (p_org, v_id, p_kind, p_name, p_delivery_email, upper(p_currency));
  return v_id;
end
$$;

create function control.customer_delete(p_org text, p_id text) returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  update app.customers set deleted_at = now() where organization_id = p_org and id = p_id and deleted_at is null;
  perform app_private.require_found(found, 'CUSTOMER_NOT_FOUND', p_id);
end
$$;

/** Custom fields: definitions per organization and object type, managed only through the
 * control plane. Each change bumps the object type's schema_version. */
create table app.object_schemas (
  organization_id text not null references app.organizations on delete cascade,
  object_type text not null constraint object_schemas_type_valid check (object_type in ('project', 'task')),
  label text not null,
  schema_version integer not null default 1,
  primary key (organization_id, object_type)
);
alter table app.object_schemas enable row level security;
alter table app.object_schemas force row level security;
create policy "Clients see their organization's object schemas" on app.object_schemas for select to svc_runtime
  using (organization_id = (select app.current_organization_id()));
grant select on app.object_schemas to svc_runtime;

create table app.custom_field_definitions (
  organization_id text not null,
  object_type text not null,
  api_name text not null constraint custom_field_definitions_api_name_format check (api_name ~ '^[a-z][a-z0-9_]{0,62}$'),
  label text not null constraint custom_field_definitions_label_length check (length(label) between 1 and 200),
  field_type text not null constraint custom_field_definitions_type_valid
    check (field_type in ('text', 'number', 'date', 'boolean', 'select', 'multi_select', 'member')),
  required boolean not null default false,
  options jsonb not null default '[]' constraint custom_field_definitions_options_array check (jsonb_typeof(options) = 'array'),
  readable_roles text[] not null default '{member,manager,finance,hr}'
    constraint custom_field_definitions_readable_roles_valid check (readable_roles <@ array['member', 'manager', 'finance', 'hr']),
  writable_roles text[] not null default '{manager}'
    constraint custom_field_definitions_writable_roles_valid check (writable_roles <@ readable_roles),
  filterable boolean not null default false,
  sortable boolean not null default false,
  position integer not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, object_type, api_name),
  foreign key (organization_id, object_type) references app.object_schemas on delete cascade,
  constraint custom_field_definitions_select_has_options
    check (field_type not in ('select', 'multi_select') or jsonb_array_length(options) > 0)
);
alter table app.custom_field_definitions enable row level security;
alter table app.custom_field_definitions force row level security;
create policy "Clients see the custom fields their Roles may read" on app.custom_field_definitions for select to svc_runtime
  using (organization_id = (select app.current_organization_id()) and readable_roles && (select app.current_roles()));
grant select on app.custom_field_definitions to svc_runtime;

create function app_private.tg_custom_field_definitions__bump_schema_version() returns trigger
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  r record := coalesce(new, old);
begin
  update app.object_schemas set schema_version = schema_version + 1
   where organization_id = r.organization_id and object_type = r.object_type;
  return null;
end
$$;
create trigger _900_bump_schema_version after insert or update or delete on app.custom_field_definitions
  for each row execute function app_private.tg_custom_field_definitions__bump_schema_version();

/** Every organization gets its object schemas (and, below, its default task workflow). */
create function app_private.tg_organizations__seed_schemas() returns trigger
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  insert into app.object_schemas (organization_id, object_type, label)
  values (new.id, 'project', 'Project'), (new.id, 'task', 'Task');
  return null;
end
$$;
create trigger _800_seed_schemas after insert on app.organizations
  for each row execute function app_private.tg_organizations__seed_schemas();
insert into app.object_schemas (organization_id, object_type, label)
select id, t.object_type, t.label from app.organizations, (values ('project', 'Project'), ('task', 'Task')) t(object_type, label);

create function control.field_define(p_org text, p_object_type text, p_api_name text, p_label text, p_field_type text,
                                     p_required boolean default false, p_options jsonb default '[]',
                                     p_readable_roles text[] default '{member,manager,finance,hr}',
                                     p_writable_roles text[] default '{manager}',
                                     p_filterable boolean default false, p_sortable boolean default false,
                                     p_position integer default 0)
returns integer
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  insert into app.custom_field_definitions as d (organization_id, object_type, api_name, label, field_type, required, options,
                                           readable_roles, writable_roles, filterable, sortable, position)
  values (p_org, p_object_type, p_api_name, p_label, p_field_type, coalesce(p_required, false), coalesce(p_options, '[]'),
          coalesce(p_readable_roles, '{member,manager,finance,hr}'), coalesce(p_writable_roles, '{manager}'),
          coalesce(p_filterable, false), coalesce(p_sortable, false), coalesce(p_position, 0))
  on conflict (organization_id, object_type, api_name) do update
    set label = excluded.label, field_type = excluded.field_type, required = excluded.required, options = excluded.options,
        readable_roles = excluded.readable_roles, writable_roles = excluded.writable_roles,
        filterable = excluded.filterable, sortable = excluded.sortable, position = excluded.position, updated_at = now();
  return (select schema_version from app.object_schemas where organization_id = p_org and object_type = p_object_type);
end
$$;

create function control.field_delete(p_org text, p_object_type text, p_api_name text) returns integer
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  delete from app.custom_field_definitions where organization_id = p_org and object_type = p_object_type and api_name = p_api_name;
  perform app_private.require_found(found, 'CUSTOM_FIELD_NOT_FOUND', p_api_name);
  return (select schema_version from app.object_schemas where organization_id = p_org and object_type = p_object_type);
end
$$;

/** The custom fields the caller may read, from a stored value object. */
create function app_private.readable_custom_fields(p_org text, p_object_type text, p_values jsonb) returns jsonb
language sql stable
set search_path = pg_catalog
as $$
  select coalesce(jsonb_object_agg(d.api_name, p_values -> d.api_name), '{}'::jsonb)
    from app.custom_field_definitions d
   where d.organization_id = p_org and d.object_type = p_object_type and p_values ? d.api_name
$$;
grant execute on function app_private.readable_custom_fields(text, text, jsonb) to svc_runtime;

/** A client that sends Svc-Schema-Version learns at once that its schema copy is stale. */
create function app_private.check_schema_version(p_object_type text, p_schema_version integer) returns void
language plpgsql stable
set search_path = pg_catalog
as $$
declare
  v_current integer;
begin
  if p_schema_version is null then
    return;
  end if;
  select schema_version into v_current from app.object_schemas
   where organization_id = app.current_organization_id() and object_type = p_object_type;
  if v_current is distinct from p_schema_version then
    perform app_private.raise('SVC14', 'OBJECT_SCHEMA_CHANGED',
      format('the %s schema is at version %s; fetch GET /v1/schemas/%s and retry', p_object_type, v_current, p_object_type));
  end if;
end
$$;
grant execute on function app_private.check_schema_version(text, integer) to svc_runtime;

/** Validates a custom-field change (old -> new values) against the definitions: unknown or hidden
 * fields, read-only and Role-forbidden fields (when p_roles is not null), value types, required
 * fields. Returns every problem. Security definer: it must see definitions the caller cannot. */
create function app_private.custom_field_errors(p_org text, p_object_type text, p_old jsonb, p_new jsonb,
                                                p_roles text[], p_is_insert boolean)
returns jsonb
language plpgsql stable security definer
set search_path = pg_catalog
as $$
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
$$;
-- Not granted to svc_runtime: it trusts p_org; only the (security definer) trigger calls it.

create function app_private.is_valid_date(p text) returns boolean
language plpgsql immutable
set search_path = pg_catalog
as $$
begin
  perform p::date;
  return true;
exception when others then
  return false;
end
$$;
grant execute on function app_private.is_valid_date(text) to svc_runtime;

/** Every key a client sends must be a field its Roles may read and write, whether or not the
 * value changes (so a hidden value cannot be probed by writing guesses). Called by the commands. */
create function app_private.custom_field_patch_errors(p_object_type text, p_current jsonb, p_patch jsonb) returns jsonb
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
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
     where organization_id = app.current_organization_id() and object_type = p_object_type and api_name = v_key;
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
            select e from jsonb_array_elements(app_private.custom_field_errors(app.current_organization_id(), p_object_type,
                                                 p_current, coalesce(p_current, '{}') || p_patch, null, false)) e
             where not exists (select from jsonb_array_elements(v_errors) r where r ->> 'pointer' = e ->> 'pointer')) x), '[]');
end
$$;
grant execute on function app_private.custom_field_patch_errors(text, jsonb, jsonb) to svc_runtime;

/** Merges a PATCH of custom fields: supplied keys replace, null clears, omitted keys stay. */
create function app_private.merge_custom_fields(p_current jsonb, p_patch jsonb) returns jsonb
language sql immutable parallel safe
set search_path = pg_catalog
as $$
  -- Nulls stay in the merged value so the check trigger sees (and validates) every key sent;
  -- the trigger strips them once the change is accepted.
  select case when p_patch is null or jsonb_typeof(p_patch) <> 'object' then coalesce(p_patch, p_current)
              else coalesce(p_current, '{}') || p_patch end
$$;
grant execute on function app_private.merge_custom_fields(jsonb, jsonb) to svc_runtime;

/** Trigger shared by tables with custom_fields: the rules hold for any writer. Roles are enforced
 * for the runtime role (the API); the control plane (owner) is held to types and requirements. */
create function app_private.tg__check_custom_fields() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
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
grant execute on function app_private.tg__check_custom_fields() to svc_runtime;

/** Schemas surface: only fields the caller may read. */
create view api.object_schemas with (security_invoker = true) as
select s.organization_id,
       s.object_type,
       s.schema_version,
       jsonb_build_object('object', 'object_schema_summary', 'object_type', s.object_type, 'label', s.label,
         'schema_version', s.schema_version,
         'custom_field_count', (select count(*) from app.custom_field_definitions d
                                 where d.organization_id = s.organization_id and d.object_type = s.object_type)) as summary,
       jsonb_build_object('object', 'object_schema', 'object_type', s.object_type, 'label', s.label,
         'schema_version', s.schema_version,
         'fields', coalesce((select jsonb_agg(jsonb_build_object(
             'api_name', d.api_name, 'label', d.label, 'field_type', d.field_type, 'custom_field', true,
             'required', d.required, 'readable', true,
             'writable', d.writable_roles && (select app.current_roles()),
             'filterable', d.filterable, 'sortable', d.sortable, 'groupable', d.field_type in ('select', 'boolean', 'member'),
             'options', d.options,
             'validation', case d.field_type when 'text' then jsonb_build_object('max_length', 10000)
                                             when 'date' then jsonb_build_object('format', 'date') else '{}'::jsonb end,
             'relationship_target', case when d.field_type = 'member' then 'member' end)
             order by d.position, d.api_name)
           from app.custom_field_definitions d
          where d.organization_id = s.organization_id and d.object_type = s.object_type), '[]'::jsonb)) as doc
  from app.object_schemas s;
grant select on api.object_schemas to svc_runtime;

-- migrate:down
drop view api.object_schemas;
drop function app_private.tg__check_custom_fields();
drop function app_private.merge_custom_fields(jsonb, jsonb);
drop function app_private.custom_field_patch_errors(text, jsonb, jsonb);
drop function app_private.is_valid_date(text);
drop function app_private.custom_field_errors(text, text, jsonb, jsonb, text[], boolean);
drop function app_private.check_schema_version(text, integer);
drop function app_private.readable_custom_fields(text, text, jsonb);
drop function control.field_delete(text, text, text);
drop function control.field_define(text, text, text, text, text, boolean, jsonb, text[], text[], boolean, boolean, integer);
drop trigger _800_seed_schemas on app.organizations;
drop function app_private.tg_organizations__seed_schemas();
drop table app.custom_field_definitions;
drop function app_private.tg_custom_field_definitions__bump_schema_version();
drop table app.object_schemas;
drop function control.customer_delete(text, text);
drop function control.customer_create(text, text, text, text, text);
drop table app.customers;
drop function app_private.error(text, text, text);
drop function app_private.raise_errors(jsonb);
