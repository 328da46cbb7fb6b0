-- migrate:up

/** A create's statements, each doing only what its case needs (bench/sql-profile.ts):
 * - app_private.check_schema_version reads the request's organization only when a schema version
 *   is given (each read verifies the context's signature, about 5 µs);
 * - app_private.custom_field_errors looks up no key when the custom fields are unchanged (a new row
 *   without any still has its required fields checked);
 * - app_private.new_id is one SQL expression, inlined where it is called (a column's default, an
 *   event's id), naming every function and operator with its schema;
 * - api.task_create reads its answer from api.tasks(id) itself, not through api.task_get. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

create or replace function app_private.check_schema_version(p_object_type text, p_schema_version integer) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text;
  v_current integer;
begin
  if p_schema_version is null then
    return;
  end if;
  -- Read only when a version is given: each read verifies the context's signature.
  v__organization_id := app.current_organization_id();
  select schema_version into v_current from app.object_schemas
   where organization_id = v__organization_id and object_type = p_object_type;
  if v_current is distinct from p_schema_version then
    perform app_private.raise('SVC14', 'OBJECT_SCHEMA_CHANGED',
      format('the %s schema is at version %s; fetch GET /v1/schemas/%s and retry', p_object_type, v_current, p_object_type));
  end if;
end
$$;
create or replace function app_private.custom_field_errors(p_org text, p_object_type text, p_old jsonb, p_new jsonb, p_roles text[], p_is_insert boolean) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
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
  -- The keys written or removed; none when the document is unchanged (a new row without custom fields).
  if p_new is distinct from coalesce(p_old, '{}'::jsonb) then
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
  end if;
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
create or replace function app_private.new_id(prefix text) returns text
    language sql parallel safe
    as $$
  select prefix operator(pg_catalog.||) '_'
         operator(pg_catalog.||) pg_catalog.lpad(pg_catalog.to_hex((extract(epoch from pg_catalog.clock_timestamp()) operator(pg_catalog.*) 1000)::pg_catalog.int8), 12, '0')
         operator(pg_catalog.||) pg_catalog.substr(pg_catalog.replace(pg_catalog.gen_random_uuid()::pg_catalog.text, '-', ''), 1, 16)
$$;

create or replace function api.task_create(p_body jsonb, p_schema_version integer) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
  return query select t.doc, t.version from api.tasks(v_id) t where t.id = v_id;
end
$$;

-- migrate:down

create or replace function app_private.check_schema_version(p_object_type text, p_schema_version integer) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  v_current integer;
begin
  if p_schema_version is null then
    return;
  end if;
  select schema_version into v_current from app.object_schemas
   where organization_id = v__organization_id and object_type = p_object_type;
  if v_current is distinct from p_schema_version then
    perform app_private.raise('SVC14', 'OBJECT_SCHEMA_CHANGED',
      format('the %s schema is at version %s; fetch GET /v1/schemas/%s and retry', p_object_type, v_current, p_object_type));
  end if;
end
$$;
create or replace function app_private.custom_field_errors(p_org text, p_object_type text, p_old jsonb, p_new jsonb, p_roles text[], p_is_insert boolean) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
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
create or replace function app_private.new_id(prefix text) RETURNS text
    LANGUAGE plpgsql PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return prefix || '_' || lpad(to_hex((extract(epoch from clock_timestamp()) * 1000)::bigint), 12, '0')
         || substr(replace(gen_random_uuid()::text, '-', ''), 1, 16);
end
$$;
create or replace function api.task_create(p_body jsonb, p_schema_version integer) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
