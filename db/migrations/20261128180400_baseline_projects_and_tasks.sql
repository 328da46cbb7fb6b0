-- migrate:up

/** Baseline (issue 38), area 4 of 15. Projects and tasks: projects, task workflows and their transitions, tasks, dependencies, notes and activity.
 * The current definitions that migrations 20261122000100 to 20261205003400 built (git history before
 * the baseline), as pg_dump writes them; db/README.md says how they were made and compared. */
SET LOCAL check_function_bodies = false;
SET LOCAL client_min_messages = warning;
SELECT pg_catalog.set_config('search_path', '', true);

SET LOCAL default_tablespace = '';

SET LOCAL default_table_access_method = heap;

-- table app.custom_field_definitions

CREATE TABLE app.custom_field_definitions (
    organization_id text NOT NULL,
    object_type text NOT NULL,
    api_name text NOT NULL,
    label text NOT NULL,
    field_type text NOT NULL,
    required boolean DEFAULT false NOT NULL,
    options jsonb DEFAULT '[]'::jsonb NOT NULL,
    readable_roles text[] DEFAULT '{member,manager,finance,hr}'::text[] NOT NULL,
    writable_roles text[] DEFAULT '{manager}'::text[] NOT NULL,
    filterable boolean DEFAULT false NOT NULL,
    sortable boolean DEFAULT false NOT NULL,
    "position" integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT custom_field_definitions_api_name_format CHECK ((api_name ~ '^[a-z][a-z0-9_]{0,62}$'::text)),
    CONSTRAINT custom_field_definitions_label_length CHECK (((length(label) >= 1) AND (length(label) <= 200))),
    CONSTRAINT custom_field_definitions_options_array CHECK ((jsonb_typeof(options) = 'array'::text)),
    CONSTRAINT custom_field_definitions_readable_roles_valid CHECK ((readable_roles <@ ARRAY['member'::text, 'manager'::text, 'finance'::text, 'hr'::text])),
    CONSTRAINT custom_field_definitions_select_has_options CHECK (((field_type <> ALL (ARRAY['select'::text, 'multi_select'::text])) OR (jsonb_array_length(options) > 0))),
    CONSTRAINT custom_field_definitions_type_valid CHECK ((field_type = ANY (ARRAY['text'::text, 'number'::text, 'date'::text, 'boolean'::text, 'select'::text, 'multi_select'::text, 'member'::text]))),
    CONSTRAINT custom_field_definitions_writable_roles_valid CHECK ((writable_roles <@ readable_roles))
);

ALTER TABLE ONLY app.custom_field_definitions FORCE ROW LEVEL SECURITY;

-- table app.object_schemas

CREATE TABLE app.object_schemas (
    organization_id text NOT NULL,
    object_type text NOT NULL,
    label text NOT NULL,
    schema_version integer DEFAULT 1 NOT NULL,
    CONSTRAINT object_schemas_type_valid CHECK ((object_type = ANY (ARRAY['project'::text, 'task'::text])))
);

ALTER TABLE ONLY app.object_schemas FORCE ROW LEVEL SECURITY;

-- view api.object_schemas

CREATE VIEW api.object_schemas WITH (security_invoker='false') AS
 SELECT s.organization_id,
    s.object_type,
    s.schema_version,
    jsonb_build_object('object', 'object_schema_summary', 'object_type', s.object_type, 'label', s.label, 'schema_version', s.schema_version, 'custom_field_count', ( SELECT count(*) AS count
           FROM app.custom_field_definitions d
          WHERE ((d.organization_id = s.organization_id) AND (d.object_type = s.object_type)))) AS summary,
    jsonb_build_object('object', 'object_schema', 'object_type', s.object_type, 'label', s.label, 'schema_version', s.schema_version, 'fields', COALESCE(( SELECT jsonb_agg(jsonb_build_object('api_name', d.api_name, 'label', d.label, 'field_type', d.field_type, 'custom_field', true, 'required', d.required, 'readable', true, 'writable', (d.writable_roles && ( SELECT app.current_roles() AS current_roles)), 'filterable', d.filterable, 'sortable', d.sortable, 'groupable', (d.field_type = ANY (ARRAY['select'::text, 'boolean'::text, 'member'::text])), 'options', d.options, 'validation',
                CASE d.field_type
                    WHEN 'text'::text THEN jsonb_build_object('max_length', 10000)
                    WHEN 'date'::text THEN jsonb_build_object('format', 'date')
                    ELSE '{}'::jsonb
                END, 'relationship_target',
                CASE
                    WHEN (d.field_type = 'member'::text) THEN 'member'::text
                    ELSE NULL::text
                END) ORDER BY d."position", d.api_name) AS jsonb_agg
           FROM app.custom_field_definitions d
          WHERE ((d.organization_id = s.organization_id) AND (d.object_type = s.object_type))), '[]'::jsonb)) AS doc
   FROM app.object_schemas s;

ALTER TABLE api.object_schemas OWNER TO svc_api;

-- function api.object_schemas()

CREATE FUNCTION api.object_schemas() RETURNS SETOF api.object_schemas
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
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

ALTER FUNCTION api.object_schemas() OWNER TO svc_api;

-- comment api.FUNCTION object_schemas()

COMMENT ON FUNCTION api.object_schemas() IS 'The rows of view api.object_schemas for the request''s organization (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

-- function api.project_create(jsonb, integer)

CREATE FUNCTION api.project_create(p_body jsonb, p_schema_version integer) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION api.project_create(p_body jsonb, p_schema_version integer) OWNER TO svc_api;

-- function api.project_get(text)

CREATE FUNCTION api.project_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
begin
  return query select p.doc, p.version from api.projects p where p.id = p_id;
end
$$;

ALTER FUNCTION api.project_get(p_id text) OWNER TO svc_api;

-- function api.project_set_status(text, text)

CREATE FUNCTION api.project_set_status(p_id text, p_status text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION api.project_set_status(p_id text, p_status text) OWNER TO svc_api;

-- function api.project_update(text, integer[], jsonb, integer)

CREATE FUNCTION api.project_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION api.project_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) OWNER TO svc_api;

-- function app_private.readable_custom_fields(text, text, jsonb)

CREATE FUNCTION app_private.readable_custom_fields(p_org text, p_object_type text, p_values jsonb) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return (select coalesce(jsonb_object_agg(d.api_name, p_values -> d.api_name), '{}'::jsonb)
            from app.custom_field_definitions d
           where d.organization_id = p_org and d.object_type = p_object_type and p_values ? d.api_name);
end
$$;

ALTER FUNCTION app_private.readable_custom_fields(p_org text, p_object_type text, p_values jsonb) OWNER TO svc_api;

-- table app.projects

CREATE TABLE app.projects (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('prj'::text) NOT NULL,
    code text NOT NULL,
    name text NOT NULL,
    description text,
    status text DEFAULT 'active'::text NOT NULL,
    start_date date,
    end_date date,
    customer_id text,
    manager_member_id text,
    currency text NOT NULL,
    custom_fields jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_by_client_id text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    archived_at timestamp with time zone,
    version integer DEFAULT 1 NOT NULL,
    CONSTRAINT projects_archived_at_iff_archived CHECK (((status = 'archived'::text) = (archived_at IS NOT NULL))),
    CONSTRAINT projects_code_format CHECK ((code ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$'::text)),
    CONSTRAINT projects_currency_iso4217 CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT projects_dates_ordered CHECK (((start_date IS NULL) OR (end_date IS NULL) OR (end_date >= start_date))),
    CONSTRAINT projects_description_length CHECK ((length(description) <= 10000)),
    CONSTRAINT projects_name_length CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT projects_status_valid CHECK ((status = ANY (ARRAY['active'::text, 'archived'::text])))
);

ALTER TABLE ONLY app.projects FORCE ROW LEVEL SECURITY;

-- view api.projects

CREATE VIEW api.projects WITH (security_invoker='false') AS
 SELECT p.organization_id,
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
        CASE
            WHEN (p.custom_fields = '{}'::jsonb) THEN '{}'::jsonb
            ELSE app_private.readable_custom_fields(p.organization_id, 'project'::text, p.custom_fields)
        END) ||
        CASE
            WHEN ( SELECT app.has_any_role('{member,manager}'::text[]) AS has_any_role) THEN jsonb_build_object('description', p.description, 'customer_id', p.customer_id, 'manager_member_id', p.manager_member_id, 'currency', p.currency)
            ELSE '{}'::jsonb
        END) ||
        CASE
            WHEN ( SELECT app.has_role('finance'::text) AS has_role) THEN jsonb_build_object('customer_id', p.customer_id, 'currency', p.currency)
            ELSE '{}'::jsonb
        END) ||
        CASE
            WHEN ( SELECT app.has_role('hr'::text) AS has_role) THEN jsonb_build_object('manager_member_id', p.manager_member_id)
            ELSE '{}'::jsonb
        END) AS doc
   FROM app.projects p;

ALTER TABLE api.projects OWNER TO svc_api;

-- function api.projects(text)

CREATE FUNCTION api.projects(p_id text DEFAULT NULL::text) RETURNS SETOF api.projects
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.projects where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.projects', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

ALTER FUNCTION api.projects(p_id text) OWNER TO svc_api;

-- comment api.FUNCTION projects(p_id text)

COMMENT ON FUNCTION api.projects(p_id text) IS 'The rows of view api.projects for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

-- function api.task_add_note(text, text, text)

CREATE FUNCTION api.task_add_note(p_id text, p_text text, p_subject_member_id text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION api.task_add_note(p_id text, p_text text, p_subject_member_id text) OWNER TO svc_api;

-- function api.task_create(jsonb, integer)

CREATE FUNCTION api.task_create(p_body jsonb, p_schema_version integer) RETURNS TABLE(doc jsonb, version integer)
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
    from app.task_workflows w join app.task_workflow_statuses s on s.workflow_id = w.id and s.is_initial
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

ALTER FUNCTION api.task_create(p_body jsonb, p_schema_version integer) OWNER TO svc_api;

-- function api.task_get(text)

CREATE FUNCTION api.task_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
begin
  return query select t.doc, t.version from api.tasks t where t.id = p_id;
end
$$;

ALTER FUNCTION api.task_get(p_id text) OWNER TO svc_api;

-- function api.task_replace_dependencies(text, integer[], text[])

CREATE FUNCTION api.task_replace_dependencies(p_id text, p_if_match integer[], p_predecessors text[]) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION api.task_replace_dependencies(p_id text, p_if_match integer[], p_predecessors text[]) OWNER TO svc_api;

-- function api.task_set_archived(text, boolean)

CREATE FUNCTION api.task_set_archived(p_id text, p_archived boolean) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION api.task_set_archived(p_id text, p_archived boolean) OWNER TO svc_api;

-- function api.task_transition(text, text, timestamp with time zone, text)

CREATE FUNCTION api.task_transition(p_id text, p_transition text, p_completed_at timestamp with time zone, p_subject_member_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
    join app.task_workflow_statuses s on s.workflow_id = tr.workflow_id and s.status = tr.to_status
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

ALTER FUNCTION api.task_transition(p_id text, p_transition text, p_completed_at timestamp with time zone, p_subject_member_id text) OWNER TO svc_api;

-- function api.task_update(text, integer[], jsonb, integer)

CREATE FUNCTION api.task_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION api.task_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) OWNER TO svc_api;

-- table app.task_dependencies

CREATE TABLE app.task_dependencies (
    organization_id text NOT NULL,
    task_id text NOT NULL,
    predecessor_task_id text NOT NULL,
    CONSTRAINT task_dependencies_not_self CHECK ((task_id <> predecessor_task_id))
);

ALTER TABLE ONLY app.task_dependencies FORCE ROW LEVEL SECURITY;

-- table app.task_workflow_transitions

CREATE TABLE app.task_workflow_transitions (
    organization_id text NOT NULL,
    workflow_id text NOT NULL,
    name text NOT NULL,
    from_status text NOT NULL,
    to_status text NOT NULL,
    CONSTRAINT task_workflow_transitions_format CHECK ((name ~ '^[a-z][a-z0-9_]{0,40}$'::text))
);

ALTER TABLE ONLY app.task_workflow_transitions FORCE ROW LEVEL SECURITY;

-- table app.tasks

CREATE TABLE app.tasks (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('tsk'::text) NOT NULL,
    project_id text NOT NULL,
    workflow_id text NOT NULL,
    code text,
    name text NOT NULL,
    description text,
    status text NOT NULL,
    priority text DEFAULT 'medium'::text NOT NULL,
    start_at timestamp with time zone,
    due_at timestamp with time zone,
    completed_at timestamp with time zone,
    assignee_member_ids text[] DEFAULT '{}'::text[] NOT NULL,
    custom_fields jsonb DEFAULT '{}'::jsonb NOT NULL,
    archived_at timestamp with time zone,
    created_by_client_id text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    CONSTRAINT tasks_assignees_bounded CHECK ((cardinality(assignee_member_ids) <= 50)),
    CONSTRAINT tasks_code_format CHECK ((code ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$'::text)),
    CONSTRAINT tasks_dates_ordered CHECK (((start_at IS NULL) OR (due_at IS NULL) OR (due_at >= start_at))),
    CONSTRAINT tasks_description_length CHECK ((length(description) <= 20000)),
    CONSTRAINT tasks_name_length CHECK (((length(name) >= 1) AND (length(name) <= 500))),
    CONSTRAINT tasks_priority_valid CHECK ((priority = ANY (ARRAY['low'::text, 'medium'::text, 'high'::text, 'urgent'::text])))
);

ALTER TABLE ONLY app.tasks FORCE ROW LEVEL SECURITY;

-- view api.tasks

CREATE VIEW api.tasks WITH (security_invoker='false') AS
 SELECT t.organization_id,
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
    (((jsonb_build_object('object', 'task', 'id', t.id, 'project_id', t.project_id, 'code', t.code, 'name', t.name, 'status', t.status, 'archived', (t.archived_at IS NOT NULL), 'created_at', app_private.iso_timestamp(t.created_at), 'updated_at', app_private.iso_timestamp(t.updated_at), 'custom_fields',
        CASE
            WHEN (t.custom_fields = '{}'::jsonb) THEN '{}'::jsonb
            ELSE app_private.readable_custom_fields(t.organization_id, 'task'::text, t.custom_fields)
        END) ||
        CASE
            WHEN ( SELECT app.has_any_role('{member,manager}'::text[]) AS has_any_role) THEN jsonb_build_object('description', t.description, 'priority', t.priority, 'start_at', app_private.iso_timestamp(t.start_at), 'due_at', app_private.iso_timestamp(t.due_at), 'completed_at', app_private.iso_timestamp(t.completed_at), 'assignee_member_ids', to_jsonb(t.assignee_member_ids), 'predecessor_task_ids', COALESCE(( SELECT jsonb_agg(d.predecessor_task_id ORDER BY d.predecessor_task_id) AS jsonb_agg
               FROM app.task_dependencies d
              WHERE (d.task_id = t.id)), '[]'::jsonb), 'transitions', COALESCE(( SELECT jsonb_agg(jsonb_build_object('name', tr.name, 'to_status', tr.to_status) ORDER BY tr.name) AS jsonb_agg
               FROM app.task_workflow_transitions tr
              WHERE ((tr.workflow_id = t.workflow_id) AND (tr.from_status = t.status) AND (t.archived_at IS NULL))), '[]'::jsonb))
            ELSE '{}'::jsonb
        END) ||
        CASE
            WHEN ( SELECT app.has_role('finance'::text) AS has_role) THEN jsonb_build_object('completed_at', app_private.iso_timestamp(t.completed_at))
            ELSE '{}'::jsonb
        END) ||
        CASE
            WHEN ( SELECT app.has_role('hr'::text) AS has_role) THEN jsonb_build_object('assignee_member_ids', to_jsonb(t.assignee_member_ids), 'start_at', app_private.iso_timestamp(t.start_at), 'due_at', app_private.iso_timestamp(t.due_at))
            ELSE '{}'::jsonb
        END) AS doc
   FROM app.tasks t;

ALTER TABLE api.tasks OWNER TO svc_api;

-- function api.tasks(text)

CREATE FUNCTION api.tasks(p_id text DEFAULT NULL::text) RETURNS SETOF api.tasks
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.tasks where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.tasks', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

ALTER FUNCTION api.tasks(p_id text) OWNER TO svc_api;

-- comment api.FUNCTION tasks(p_id text)

COMMENT ON FUNCTION api.tasks(p_id text) IS 'The rows of view api.tasks for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

-- function app_private.custom_field_errors(text, text, jsonb, jsonb, text[], boolean)

CREATE FUNCTION app_private.custom_field_errors(p_org text, p_object_type text, p_old jsonb, p_new jsonb, p_roles text[], p_is_insert boolean) RETURNS jsonb
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

-- function app_private.custom_field_patch_errors(text, jsonb, jsonb)

CREATE FUNCTION app_private.custom_field_patch_errors(p_object_type text, p_current jsonb, p_patch jsonb) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.lock_task(text)

CREATE FUNCTION app_private.lock_task(p_id text) RETURNS app.tasks
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.merge_custom_fields(jsonb, jsonb)

CREATE FUNCTION app_private.merge_custom_fields(p_current jsonb, p_patch jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  -- Nulls stay in the merged value so the check trigger sees (and validates) every key sent;
  -- the trigger strips them once the change is accepted.
  select case when p_patch is null or jsonb_typeof(p_patch) <> 'object' then coalesce(p_patch, p_current)
              else coalesce(p_current, '{}') || p_patch end
$$;

-- function app_private.project_archive_blockers(text, text)

CREATE FUNCTION app_private.project_archive_blockers(p_org text, p_project_id text) RETURNS text[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.project_not_found(text)

CREATE FUNCTION app_private.project_not_found(p_id text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select app_private.raise('SVN04', 'PROJECT_NOT_FOUND', format('no project %s in your organization', p_id)) $$;

-- function app_private.seed_default_task_workflow(text)

CREATE FUNCTION app_private.seed_default_task_workflow(p_org text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.task_archive_blockers(text, text)

CREATE FUNCTION app_private.task_archive_blockers(p_org text, p_task_id text) RETURNS text[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return (select coalesce(array_agg(t.id order by t.id), array[]::text[])
            from app.task_dependencies d
            join app.tasks t on t.organization_id = d.organization_id and t.id = d.task_id
            join app.task_workflow_statuses s on s.organization_id = t.organization_id and s.workflow_id = t.workflow_id and s.status = t.status
           where d.organization_id = p_org and d.predecessor_task_id = p_task_id and t.archived_at is null and s.category = 'open');
end
$$;

-- function app_private.task_not_found(text)

CREATE FUNCTION app_private.task_not_found(p_id text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select app_private.raise('SVN04', 'TASK_NOT_FOUND', format('no task %s in your organization', p_id)) $$;

-- function app_private.tg__check_custom_fields()

CREATE FUNCTION app_private.tg__check_custom_fields() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_custom_field_definitions__bump_schema_version()

CREATE FUNCTION app_private.tg_custom_field_definitions__bump_schema_version() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  r record := coalesce(new, old);
begin
  update app.object_schemas set schema_version = schema_version + 1
   where organization_id = r.organization_id and object_type = r.object_type;
  return null;
end
$$;

-- function app_private.tg_organizations__seed_task_workflow()

CREATE FUNCTION app_private.tg_organizations__seed_task_workflow() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.seed_default_task_workflow(new.id);
  return null;
end
$$;

-- function app_private.tg_projects__check_references()

CREATE FUNCTION app_private.tg_projects__check_references() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_projects__status_change()

CREATE FUNCTION app_private.tg_projects__status_change() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_task_dependencies__no_cycle()

CREATE FUNCTION app_private.tg_task_dependencies__no_cycle() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_task_notes__members_may_add()

CREATE FUNCTION app_private.tg_task_notes__members_may_add() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_tasks__archive_rules()

CREATE FUNCTION app_private.tg_tasks__archive_rules() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_tasks__check_references()

CREATE FUNCTION app_private.tg_tasks__check_references() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_tasks__legal_transition()

CREATE FUNCTION app_private.tg_tasks__legal_transition() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function control.task_policy_set(text, boolean, boolean)

CREATE FUNCTION control.task_policy_set(p_org text, p_members_may_add_notes boolean DEFAULT NULL::boolean, p_allow_cross_project_dependencies boolean DEFAULT NULL::boolean) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  update app.task_workflows
     set members_may_add_notes = coalesce(p_members_may_add_notes, members_may_add_notes),
         allow_cross_project_dependencies = coalesce(p_allow_cross_project_dependencies, allow_cross_project_dependencies)
   where organization_id = p_org and is_default;
  perform app_private.require_found(found, 'ORGANIZATION_NOT_FOUND', p_org);
end
$$;

-- table app.task_activity

CREATE TABLE app.task_activity (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('tact'::text) NOT NULL,
    task_id text NOT NULL,
    kind text NOT NULL,
    transition text,
    from_status text,
    to_status text,
    actor_client_id text NOT NULL,
    subject_member_id text,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE ONLY app.task_activity FORCE ROW LEVEL SECURITY;

-- table app.task_notes

CREATE TABLE app.task_notes (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('tnote'::text) NOT NULL,
    task_id text NOT NULL,
    text text NOT NULL,
    subject_member_id text,
    author_client_id text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT task_notes_text_length CHECK (((length(text) >= 1) AND (length(text) <= 20000)))
);

ALTER TABLE ONLY app.task_notes FORCE ROW LEVEL SECURITY;

-- table app.task_workflow_statuses

CREATE TABLE app.task_workflow_statuses (
    organization_id text NOT NULL,
    workflow_id text NOT NULL,
    status text NOT NULL,
    category text NOT NULL,
    is_initial boolean DEFAULT false NOT NULL,
    CONSTRAINT task_workflow_statuses_category_valid CHECK ((category = ANY (ARRAY['open'::text, 'done'::text, 'cancelled'::text]))),
    CONSTRAINT task_workflow_statuses_format CHECK ((status ~ '^[a-z][a-z0-9_]{0,40}$'::text))
);

ALTER TABLE ONLY app.task_workflow_statuses FORCE ROW LEVEL SECURITY;

-- table app.task_workflows

CREATE TABLE app.task_workflows (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('twf'::text) NOT NULL,
    name text NOT NULL,
    is_default boolean DEFAULT false NOT NULL,
    allow_cross_project_dependencies boolean DEFAULT false NOT NULL,
    members_may_add_notes boolean DEFAULT false NOT NULL
);

ALTER TABLE ONLY app.task_workflows FORCE ROW LEVEL SECURITY;

-- constraint app.custom_field_definitions custom_field_definitions_pkey

ALTER TABLE ONLY app.custom_field_definitions
    ADD CONSTRAINT custom_field_definitions_pkey PRIMARY KEY (organization_id, object_type, api_name);

-- constraint app.object_schemas object_schemas_pkey

ALTER TABLE ONLY app.object_schemas
    ADD CONSTRAINT object_schemas_pkey PRIMARY KEY (organization_id, object_type);

-- constraint app.projects projects_pkey

ALTER TABLE ONLY app.projects
    ADD CONSTRAINT projects_pkey PRIMARY KEY (organization_id, id);

-- constraint app.task_activity task_activity_pkey

ALTER TABLE ONLY app.task_activity
    ADD CONSTRAINT task_activity_pkey PRIMARY KEY (organization_id, id);

-- constraint app.task_dependencies task_dependencies_pkey

ALTER TABLE ONLY app.task_dependencies
    ADD CONSTRAINT task_dependencies_pkey PRIMARY KEY (organization_id, task_id, predecessor_task_id);

-- constraint app.task_notes task_notes_pkey

ALTER TABLE ONLY app.task_notes
    ADD CONSTRAINT task_notes_pkey PRIMARY KEY (organization_id, id);

-- constraint app.task_workflow_statuses task_workflow_statuses_pkey

ALTER TABLE ONLY app.task_workflow_statuses
    ADD CONSTRAINT task_workflow_statuses_pkey PRIMARY KEY (organization_id, workflow_id, status);

-- constraint app.task_workflow_transitions task_workflow_transitions_pkey

ALTER TABLE ONLY app.task_workflow_transitions
    ADD CONSTRAINT task_workflow_transitions_pkey PRIMARY KEY (organization_id, workflow_id, name, from_status);

-- constraint app.task_workflows task_workflows_pkey

ALTER TABLE ONLY app.task_workflows
    ADD CONSTRAINT task_workflows_pkey PRIMARY KEY (organization_id, id);

-- constraint app.tasks tasks_pkey

ALTER TABLE ONLY app.tasks
    ADD CONSTRAINT tasks_pkey PRIMARY KEY (organization_id, id);

-- index app.projects_code_unique

CREATE UNIQUE INDEX projects_code_unique ON app.projects USING btree (organization_id, lower(code));

-- index app.projects_id

CREATE INDEX projects_id ON app.projects USING btree (id);

-- index app.projects_org_created

CREATE INDEX projects_org_created ON app.projects USING btree (organization_id, created_at, id);

-- index app.projects_org_name

CREATE INDEX projects_org_name ON app.projects USING btree (organization_id, lower(name), id);

-- index app.task_dependencies_predecessor

CREATE INDEX task_dependencies_predecessor ON app.task_dependencies USING btree (predecessor_task_id);

-- index app.task_notes_task

CREATE INDEX task_notes_task ON app.task_notes USING btree (task_id, created_at);

-- index app.task_workflow_statuses_one_initial

CREATE UNIQUE INDEX task_workflow_statuses_one_initial ON app.task_workflow_statuses USING btree (organization_id, workflow_id) WHERE is_initial;

-- index app.task_workflow_transitions_pair

CREATE INDEX task_workflow_transitions_pair ON app.task_workflow_transitions USING btree (workflow_id, from_status, to_status);

-- index app.task_workflows_id

CREATE INDEX task_workflows_id ON app.task_workflows USING btree (id);

-- index app.task_workflows_one_default

CREATE UNIQUE INDEX task_workflows_one_default ON app.task_workflows USING btree (organization_id) WHERE is_default;

-- index app.tasks_assignees

CREATE INDEX tasks_assignees ON app.tasks USING gin (assignee_member_ids);

-- index app.tasks_code_unique

CREATE UNIQUE INDEX tasks_code_unique ON app.tasks USING btree (organization_id, project_id, lower(code)) WHERE (code IS NOT NULL);

-- index app.tasks_id

CREATE INDEX tasks_id ON app.tasks USING btree (id);

-- index app.tasks_org_created

CREATE INDEX tasks_org_created ON app.tasks USING btree (organization_id, created_at, id);

-- index app.tasks_org_due

CREATE INDEX tasks_org_due ON app.tasks USING btree (organization_id, due_at, id);

-- index app.tasks_org_project

CREATE INDEX tasks_org_project ON app.tasks USING btree (organization_id, project_id, created_at, id);

-- trigger app.task_notes _010_members_may_add

CREATE TRIGGER _010_members_may_add BEFORE INSERT ON app.task_notes FOR EACH ROW EXECUTE FUNCTION app_private.tg_task_notes__members_may_add();

-- trigger app.task_dependencies _100_no_cycle

CREATE TRIGGER _100_no_cycle BEFORE INSERT OR UPDATE ON app.task_dependencies FOR EACH ROW EXECUTE FUNCTION app_private.tg_task_dependencies__no_cycle();

-- trigger app.projects _100_touch_version

CREATE TRIGGER _100_touch_version BEFORE UPDATE ON app.projects FOR EACH ROW EXECUTE FUNCTION app_private.tg__touch_version();

-- trigger app.tasks _100_touch_version

CREATE TRIGGER _100_touch_version BEFORE UPDATE ON app.tasks FOR EACH ROW EXECUTE FUNCTION app_private.tg__touch_version();

-- trigger app.tasks _120_archive_rules

CREATE TRIGGER _120_archive_rules BEFORE UPDATE ON app.tasks FOR EACH ROW EXECUTE FUNCTION app_private.tg_tasks__archive_rules();

-- trigger app.tasks _150_legal_transition

CREATE TRIGGER _150_legal_transition BEFORE INSERT OR UPDATE ON app.tasks FOR EACH ROW EXECUTE FUNCTION app_private.tg_tasks__legal_transition();

-- trigger app.projects _150_status_change

CREATE TRIGGER _150_status_change BEFORE UPDATE OF status ON app.projects FOR EACH ROW EXECUTE FUNCTION app_private.tg_projects__status_change();

-- trigger app.projects _200_check_references

CREATE TRIGGER _200_check_references BEFORE INSERT OR UPDATE ON app.projects FOR EACH ROW EXECUTE FUNCTION app_private.tg_projects__check_references();

-- trigger app.tasks _200_check_references

CREATE TRIGGER _200_check_references BEFORE INSERT OR UPDATE ON app.tasks FOR EACH ROW EXECUTE FUNCTION app_private.tg_tasks__check_references();

-- trigger app.projects _300_check_custom_fields

CREATE TRIGGER _300_check_custom_fields BEFORE INSERT OR UPDATE ON app.projects FOR EACH ROW EXECUTE FUNCTION app_private.tg__check_custom_fields('project');

-- trigger app.tasks _300_check_custom_fields

CREATE TRIGGER _300_check_custom_fields BEFORE INSERT OR UPDATE ON app.tasks FOR EACH ROW EXECUTE FUNCTION app_private.tg__check_custom_fields('task');

-- trigger app.organizations _810_seed_task_workflow

CREATE TRIGGER _810_seed_task_workflow AFTER INSERT ON app.organizations FOR EACH ROW EXECUTE FUNCTION app_private.tg_organizations__seed_task_workflow();

-- trigger app.custom_field_definitions _900_bump_schema_version

CREATE TRIGGER _900_bump_schema_version AFTER INSERT OR DELETE OR UPDATE ON app.custom_field_definitions FOR EACH ROW EXECUTE FUNCTION app_private.tg_custom_field_definitions__bump_schema_version();

-- fk constraint app.custom_field_definitions custom_field_definitions_organization_id_object_type_fkey

ALTER TABLE ONLY app.custom_field_definitions
    ADD CONSTRAINT custom_field_definitions_organization_id_object_type_fkey FOREIGN KEY (organization_id, object_type) REFERENCES app.object_schemas(organization_id, object_type) ON DELETE CASCADE;

-- fk constraint app.object_schemas object_schemas_organization_id_fkey

ALTER TABLE ONLY app.object_schemas
    ADD CONSTRAINT object_schemas_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.projects projects_created_by_client_fkey

ALTER TABLE ONLY app.projects
    ADD CONSTRAINT projects_created_by_client_fkey FOREIGN KEY (organization_id, created_by_client_id) REFERENCES app.api_clients(organization_id, id) ON DELETE RESTRICT;

-- fk constraint app.projects projects_organization_id_fkey

ALTER TABLE ONLY app.projects
    ADD CONSTRAINT projects_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.projects projects_organization_id_manager_member_id_fkey

ALTER TABLE ONLY app.projects
    ADD CONSTRAINT projects_organization_id_manager_member_id_fkey FOREIGN KEY (organization_id, manager_member_id) REFERENCES app.members(organization_id, id) ON DELETE RESTRICT;

-- fk constraint app.task_activity task_activity_organization_id_fkey

ALTER TABLE ONLY app.task_activity
    ADD CONSTRAINT task_activity_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.task_activity task_activity_task_fkey

ALTER TABLE ONLY app.task_activity
    ADD CONSTRAINT task_activity_task_fkey FOREIGN KEY (organization_id, task_id) REFERENCES app.tasks(organization_id, id) ON DELETE CASCADE;

-- fk constraint app.task_dependencies task_dependencies_organization_id_fkey

ALTER TABLE ONLY app.task_dependencies
    ADD CONSTRAINT task_dependencies_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.task_dependencies task_dependencies_predecessor_fkey

ALTER TABLE ONLY app.task_dependencies
    ADD CONSTRAINT task_dependencies_predecessor_fkey FOREIGN KEY (organization_id, predecessor_task_id) REFERENCES app.tasks(organization_id, id) ON DELETE CASCADE;

-- fk constraint app.task_dependencies task_dependencies_task_fkey

ALTER TABLE ONLY app.task_dependencies
    ADD CONSTRAINT task_dependencies_task_fkey FOREIGN KEY (organization_id, task_id) REFERENCES app.tasks(organization_id, id) ON DELETE CASCADE;

-- fk constraint app.task_notes task_notes_author_client_fkey

ALTER TABLE ONLY app.task_notes
    ADD CONSTRAINT task_notes_author_client_fkey FOREIGN KEY (organization_id, author_client_id) REFERENCES app.api_clients(organization_id, id) ON DELETE RESTRICT;

-- fk constraint app.task_notes task_notes_organization_id_fkey

ALTER TABLE ONLY app.task_notes
    ADD CONSTRAINT task_notes_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.task_notes task_notes_organization_id_subject_member_id_fkey

ALTER TABLE ONLY app.task_notes
    ADD CONSTRAINT task_notes_organization_id_subject_member_id_fkey FOREIGN KEY (organization_id, subject_member_id) REFERENCES app.members(organization_id, id) ON DELETE RESTRICT;

-- fk constraint app.task_notes task_notes_task_fkey

ALTER TABLE ONLY app.task_notes
    ADD CONSTRAINT task_notes_task_fkey FOREIGN KEY (organization_id, task_id) REFERENCES app.tasks(organization_id, id) ON DELETE CASCADE;

-- fk constraint app.task_workflow_statuses task_workflow_statuses_workflow_fkey

ALTER TABLE ONLY app.task_workflow_statuses
    ADD CONSTRAINT task_workflow_statuses_workflow_fkey FOREIGN KEY (organization_id, workflow_id) REFERENCES app.task_workflows(organization_id, id) ON DELETE CASCADE;

-- fk constraint app.task_workflow_transitions task_workflow_transitions_from_status_fkey

ALTER TABLE ONLY app.task_workflow_transitions
    ADD CONSTRAINT task_workflow_transitions_from_status_fkey FOREIGN KEY (organization_id, workflow_id, from_status) REFERENCES app.task_workflow_statuses(organization_id, workflow_id, status) ON DELETE CASCADE;

-- fk constraint app.task_workflow_transitions task_workflow_transitions_to_status_fkey

ALTER TABLE ONLY app.task_workflow_transitions
    ADD CONSTRAINT task_workflow_transitions_to_status_fkey FOREIGN KEY (organization_id, workflow_id, to_status) REFERENCES app.task_workflow_statuses(organization_id, workflow_id, status) ON DELETE CASCADE;

-- fk constraint app.task_workflows task_workflows_organization_id_fkey

ALTER TABLE ONLY app.task_workflows
    ADD CONSTRAINT task_workflows_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.tasks tasks_created_by_client_fkey

ALTER TABLE ONLY app.tasks
    ADD CONSTRAINT tasks_created_by_client_fkey FOREIGN KEY (organization_id, created_by_client_id) REFERENCES app.api_clients(organization_id, id) ON DELETE RESTRICT;

-- fk constraint app.tasks tasks_organization_id_fkey

ALTER TABLE ONLY app.tasks
    ADD CONSTRAINT tasks_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.tasks tasks_project_fkey

ALTER TABLE ONLY app.tasks
    ADD CONSTRAINT tasks_project_fkey FOREIGN KEY (organization_id, project_id) REFERENCES app.projects(organization_id, id) ON DELETE RESTRICT;

-- fk constraint app.tasks tasks_status_fkey

ALTER TABLE ONLY app.tasks
    ADD CONSTRAINT tasks_status_fkey FOREIGN KEY (organization_id, workflow_id, status) REFERENCES app.task_workflow_statuses(organization_id, workflow_id, status) ON DELETE RESTRICT;

-- fk constraint app.tasks tasks_workflow_fkey

ALTER TABLE ONLY app.tasks
    ADD CONSTRAINT tasks_workflow_fkey FOREIGN KEY (organization_id, workflow_id) REFERENCES app.task_workflows(organization_id, id) ON DELETE RESTRICT;

-- policy app.task_dependencies Clients see dependencies in their organization

CREATE POLICY "Clients see dependencies in their organization" ON app.task_dependencies FOR SELECT TO svc_api USING ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));

-- policy app.task_notes Clients see notes in their organization

CREATE POLICY "Clients see notes in their organization" ON app.task_notes FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{member,manager}'::text[]) AS has_any_role)));

-- policy app.task_activity Clients see task activity of their organization

CREATE POLICY "Clients see task activity of their organization" ON app.task_activity FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{member,manager}'::text[]) AS has_any_role)));

-- policy app.custom_field_definitions Clients see the custom fields their Roles may read

CREATE POLICY "Clients see the custom fields their Roles may read" ON app.custom_field_definitions FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (readable_roles && ( SELECT app.current_roles() AS current_roles))));

-- policy app.object_schemas Clients see their organization's object schemas

CREATE POLICY "Clients see their organization's object schemas" ON app.object_schemas FOR SELECT TO svc_api USING ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));

-- policy app.task_workflow_statuses Clients see their organization's workflows

CREATE POLICY "Clients see their organization's workflows" ON app.task_workflow_statuses FOR SELECT TO svc_api USING ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));

-- policy app.task_workflow_transitions Clients see their organization's workflows

CREATE POLICY "Clients see their organization's workflows" ON app.task_workflow_transitions FOR SELECT TO svc_api USING ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));

-- policy app.task_workflows Clients see their organization's workflows

CREATE POLICY "Clients see their organization's workflows" ON app.task_workflows FOR SELECT TO svc_api USING ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));

-- policy app.projects Clients with any Role see projects of their organization

CREATE POLICY "Clients with any Role see projects of their organization" ON app.projects FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{member,manager,finance,hr}'::text[]) AS has_any_role)));

-- policy app.tasks Clients with any Role see tasks of their organization

CREATE POLICY "Clients with any Role see tasks of their organization" ON app.tasks FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{member,manager,finance,hr}'::text[]) AS has_any_role)));

-- policy app.task_dependencies Managers change dependencies

CREATE POLICY "Managers change dependencies" ON app.task_dependencies TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role))) WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role)));

-- policy app.projects Managers create projects

CREATE POLICY "Managers create projects" ON app.projects FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role)));

-- policy app.tasks Managers create tasks

CREATE POLICY "Managers create tasks" ON app.tasks FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role)));

-- policy app.task_activity Managers record task activity

CREATE POLICY "Managers record task activity" ON app.task_activity FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (actor_client_id = ( SELECT app.current_client_id() AS current_client_id)) AND ( SELECT app.has_role('manager'::text) AS has_role)));

-- policy app.projects Managers update projects

CREATE POLICY "Managers update projects" ON app.projects FOR UPDATE TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role))) WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role)));

-- policy app.tasks Managers update tasks

CREATE POLICY "Managers update tasks" ON app.tasks FOR UPDATE TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role))) WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role)));

-- policy app.task_notes Managers, or members where the task policy permits, add notes

CREATE POLICY "Managers, or members where the task policy permits, add notes" ON app.task_notes FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{manager,member}'::text[]) AS has_any_role) AND (author_client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- row security app.custom_field_definitions

ALTER TABLE app.custom_field_definitions ENABLE ROW LEVEL SECURITY;

-- row security app.object_schemas

ALTER TABLE app.object_schemas ENABLE ROW LEVEL SECURITY;

-- row security app.projects

ALTER TABLE app.projects ENABLE ROW LEVEL SECURITY;

-- row security app.task_activity

ALTER TABLE app.task_activity ENABLE ROW LEVEL SECURITY;

-- row security app.task_dependencies

ALTER TABLE app.task_dependencies ENABLE ROW LEVEL SECURITY;

-- row security app.task_notes

ALTER TABLE app.task_notes ENABLE ROW LEVEL SECURITY;

-- row security app.task_workflow_statuses

ALTER TABLE app.task_workflow_statuses ENABLE ROW LEVEL SECURITY;

-- row security app.task_workflow_transitions

ALTER TABLE app.task_workflow_transitions ENABLE ROW LEVEL SECURITY;

-- row security app.task_workflows

ALTER TABLE app.task_workflows ENABLE ROW LEVEL SECURITY;

-- row security app.tasks

ALTER TABLE app.tasks ENABLE ROW LEVEL SECURITY;

-- acl app.TABLE custom_field_definitions

GRANT SELECT ON TABLE app.custom_field_definitions TO svc_api;

-- acl app.TABLE object_schemas

GRANT SELECT ON TABLE app.object_schemas TO svc_api;

-- acl api.TABLE object_schemas

GRANT SELECT ON TABLE api.object_schemas TO svc_runtime;

-- acl api.FUNCTION object_schemas()

REVOKE ALL ON FUNCTION api.object_schemas() FROM PUBLIC;
GRANT ALL ON FUNCTION api.object_schemas() TO svc_runtime;

-- acl api.FUNCTION project_create(p_body jsonb, p_schema_version integer)

REVOKE ALL ON FUNCTION api.project_create(p_body jsonb, p_schema_version integer) FROM PUBLIC;
GRANT ALL ON FUNCTION api.project_create(p_body jsonb, p_schema_version integer) TO svc_runtime;

-- acl api.FUNCTION project_get(p_id text)

REVOKE ALL ON FUNCTION api.project_get(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.project_get(p_id text) TO svc_runtime;

-- acl api.FUNCTION project_set_status(p_id text, p_status text)

REVOKE ALL ON FUNCTION api.project_set_status(p_id text, p_status text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.project_set_status(p_id text, p_status text) TO svc_runtime;

-- acl api.FUNCTION project_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer)

REVOKE ALL ON FUNCTION api.project_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) FROM PUBLIC;
GRANT ALL ON FUNCTION api.project_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) TO svc_runtime;

-- acl app_private.FUNCTION readable_custom_fields(p_org text, p_object_type text, p_values jsonb)

REVOKE ALL ON FUNCTION app_private.readable_custom_fields(p_org text, p_object_type text, p_values jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.readable_custom_fields(p_org text, p_object_type text, p_values jsonb) TO svc_runtime;
GRANT ALL ON FUNCTION app_private.readable_custom_fields(p_org text, p_object_type text, p_values jsonb) TO svc_reporting;

-- acl app.TABLE projects

GRANT SELECT ON TABLE app.projects TO svc_api;

-- acl app.COLUMN projects.organization_id

GRANT INSERT(organization_id) ON TABLE app.projects TO svc_api;

-- acl app.COLUMN projects.code

GRANT INSERT(code),UPDATE(code) ON TABLE app.projects TO svc_api;

-- acl app.COLUMN projects.name

GRANT INSERT(name),UPDATE(name) ON TABLE app.projects TO svc_api;

-- acl app.COLUMN projects.description

GRANT INSERT(description),UPDATE(description) ON TABLE app.projects TO svc_api;

-- acl app.COLUMN projects.status

GRANT UPDATE(status) ON TABLE app.projects TO svc_api;

-- acl app.COLUMN projects.start_date

GRANT INSERT(start_date),UPDATE(start_date) ON TABLE app.projects TO svc_api;

-- acl app.COLUMN projects.end_date

GRANT INSERT(end_date),UPDATE(end_date) ON TABLE app.projects TO svc_api;

-- acl app.COLUMN projects.customer_id

GRANT INSERT(customer_id),UPDATE(customer_id) ON TABLE app.projects TO svc_api;

-- acl app.COLUMN projects.manager_member_id

GRANT INSERT(manager_member_id),UPDATE(manager_member_id) ON TABLE app.projects TO svc_api;

-- acl app.COLUMN projects.currency

GRANT INSERT(currency) ON TABLE app.projects TO svc_api;

-- acl app.COLUMN projects.custom_fields

GRANT INSERT(custom_fields),UPDATE(custom_fields) ON TABLE app.projects TO svc_api;

-- acl app.COLUMN projects.created_by_client_id

GRANT INSERT(created_by_client_id) ON TABLE app.projects TO svc_api;

-- acl api.TABLE projects

GRANT SELECT ON TABLE api.projects TO svc_runtime;

-- acl api.FUNCTION projects(p_id text)

REVOKE ALL ON FUNCTION api.projects(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.projects(p_id text) TO svc_runtime;

-- acl api.FUNCTION task_add_note(p_id text, p_text text, p_subject_member_id text)

REVOKE ALL ON FUNCTION api.task_add_note(p_id text, p_text text, p_subject_member_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.task_add_note(p_id text, p_text text, p_subject_member_id text) TO svc_runtime;

-- acl api.FUNCTION task_create(p_body jsonb, p_schema_version integer)

REVOKE ALL ON FUNCTION api.task_create(p_body jsonb, p_schema_version integer) FROM PUBLIC;
GRANT ALL ON FUNCTION api.task_create(p_body jsonb, p_schema_version integer) TO svc_runtime;

-- acl api.FUNCTION task_get(p_id text)

REVOKE ALL ON FUNCTION api.task_get(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.task_get(p_id text) TO svc_runtime;

-- acl api.FUNCTION task_replace_dependencies(p_id text, p_if_match integer[], p_predecessors text[])

REVOKE ALL ON FUNCTION api.task_replace_dependencies(p_id text, p_if_match integer[], p_predecessors text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION api.task_replace_dependencies(p_id text, p_if_match integer[], p_predecessors text[]) TO svc_runtime;

-- acl api.FUNCTION task_set_archived(p_id text, p_archived boolean)

REVOKE ALL ON FUNCTION api.task_set_archived(p_id text, p_archived boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.task_set_archived(p_id text, p_archived boolean) TO svc_runtime;

-- acl api.FUNCTION task_transition(p_id text, p_transition text, p_completed_at timestamp with time zone, p_subject_member_id text)

REVOKE ALL ON FUNCTION api.task_transition(p_id text, p_transition text, p_completed_at timestamp with time zone, p_subject_member_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.task_transition(p_id text, p_transition text, p_completed_at timestamp with time zone, p_subject_member_id text) TO svc_runtime;

-- acl api.FUNCTION task_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer)

REVOKE ALL ON FUNCTION api.task_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) FROM PUBLIC;
GRANT ALL ON FUNCTION api.task_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) TO svc_runtime;

-- acl app.TABLE task_dependencies

GRANT SELECT,INSERT,DELETE ON TABLE app.task_dependencies TO svc_api;

-- acl app.TABLE task_workflow_transitions

GRANT SELECT ON TABLE app.task_workflow_transitions TO svc_api;

-- acl app.TABLE tasks

GRANT SELECT ON TABLE app.tasks TO svc_api;

-- acl app.COLUMN tasks.organization_id

GRANT INSERT(organization_id) ON TABLE app.tasks TO svc_api;

-- acl app.COLUMN tasks.project_id

GRANT INSERT(project_id) ON TABLE app.tasks TO svc_api;

-- acl app.COLUMN tasks.workflow_id

GRANT INSERT(workflow_id) ON TABLE app.tasks TO svc_api;

-- acl app.COLUMN tasks.code

GRANT INSERT(code),UPDATE(code) ON TABLE app.tasks TO svc_api;

-- acl app.COLUMN tasks.name

GRANT INSERT(name),UPDATE(name) ON TABLE app.tasks TO svc_api;

-- acl app.COLUMN tasks.description

GRANT INSERT(description),UPDATE(description) ON TABLE app.tasks TO svc_api;

-- acl app.COLUMN tasks.status

GRANT INSERT(status),UPDATE(status) ON TABLE app.tasks TO svc_api;

-- acl app.COLUMN tasks.priority

GRANT INSERT(priority),UPDATE(priority) ON TABLE app.tasks TO svc_api;

-- acl app.COLUMN tasks.start_at

GRANT INSERT(start_at),UPDATE(start_at) ON TABLE app.tasks TO svc_api;

-- acl app.COLUMN tasks.due_at

GRANT INSERT(due_at),UPDATE(due_at) ON TABLE app.tasks TO svc_api;

-- acl app.COLUMN tasks.completed_at

GRANT UPDATE(completed_at) ON TABLE app.tasks TO svc_api;

-- acl app.COLUMN tasks.assignee_member_ids

GRANT INSERT(assignee_member_ids),UPDATE(assignee_member_ids) ON TABLE app.tasks TO svc_api;

-- acl app.COLUMN tasks.custom_fields

GRANT INSERT(custom_fields),UPDATE(custom_fields) ON TABLE app.tasks TO svc_api;

-- acl app.COLUMN tasks.archived_at

GRANT UPDATE(archived_at) ON TABLE app.tasks TO svc_api;

-- acl app.COLUMN tasks.created_by_client_id

GRANT INSERT(created_by_client_id) ON TABLE app.tasks TO svc_api;

-- acl app.COLUMN tasks.updated_at

GRANT UPDATE(updated_at) ON TABLE app.tasks TO svc_api;

-- acl api.TABLE tasks

GRANT SELECT ON TABLE api.tasks TO svc_runtime;

-- acl api.FUNCTION tasks(p_id text)

REVOKE ALL ON FUNCTION api.tasks(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.tasks(p_id text) TO svc_runtime;

-- acl app_private.FUNCTION custom_field_errors(p_org text, p_object_type text, p_old jsonb, p_new jsonb, p_roles text[], p_is_insert boolean)

REVOKE ALL ON FUNCTION app_private.custom_field_errors(p_org text, p_object_type text, p_old jsonb, p_new jsonb, p_roles text[], p_is_insert boolean) FROM PUBLIC;

-- acl app_private.FUNCTION custom_field_patch_errors(p_object_type text, p_current jsonb, p_patch jsonb)

REVOKE ALL ON FUNCTION app_private.custom_field_patch_errors(p_object_type text, p_current jsonb, p_patch jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.custom_field_patch_errors(p_object_type text, p_current jsonb, p_patch jsonb) TO svc_api;

-- acl app_private.FUNCTION lock_task(p_id text)

REVOKE ALL ON FUNCTION app_private.lock_task(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.lock_task(p_id text) TO svc_api;

-- acl app_private.FUNCTION merge_custom_fields(p_current jsonb, p_patch jsonb)

REVOKE ALL ON FUNCTION app_private.merge_custom_fields(p_current jsonb, p_patch jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.merge_custom_fields(p_current jsonb, p_patch jsonb) TO svc_api;

-- acl app_private.FUNCTION project_archive_blockers(p_org text, p_project_id text)

REVOKE ALL ON FUNCTION app_private.project_archive_blockers(p_org text, p_project_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.project_archive_blockers(p_org text, p_project_id text) TO svc_api;

-- acl app_private.FUNCTION project_not_found(p_id text)

REVOKE ALL ON FUNCTION app_private.project_not_found(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.project_not_found(p_id text) TO svc_api;

-- acl app_private.FUNCTION seed_default_task_workflow(p_org text)

REVOKE ALL ON FUNCTION app_private.seed_default_task_workflow(p_org text) FROM PUBLIC;

-- acl app_private.FUNCTION task_archive_blockers(p_org text, p_task_id text)

REVOKE ALL ON FUNCTION app_private.task_archive_blockers(p_org text, p_task_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.task_archive_blockers(p_org text, p_task_id text) TO svc_api;

-- acl app_private.FUNCTION task_not_found(p_id text)

REVOKE ALL ON FUNCTION app_private.task_not_found(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.task_not_found(p_id text) TO svc_api;

-- acl app_private.FUNCTION tg__check_custom_fields()

REVOKE ALL ON FUNCTION app_private.tg__check_custom_fields() FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.tg__check_custom_fields() TO svc_api;

-- acl app_private.FUNCTION tg_custom_field_definitions__bump_schema_version()

REVOKE ALL ON FUNCTION app_private.tg_custom_field_definitions__bump_schema_version() FROM PUBLIC;

-- acl app_private.FUNCTION tg_organizations__seed_task_workflow()

REVOKE ALL ON FUNCTION app_private.tg_organizations__seed_task_workflow() FROM PUBLIC;

-- acl app_private.FUNCTION tg_projects__check_references()

REVOKE ALL ON FUNCTION app_private.tg_projects__check_references() FROM PUBLIC;

-- acl app_private.FUNCTION tg_projects__status_change()

REVOKE ALL ON FUNCTION app_private.tg_projects__status_change() FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.tg_projects__status_change() TO svc_api;

-- acl app_private.FUNCTION tg_task_dependencies__no_cycle()

REVOKE ALL ON FUNCTION app_private.tg_task_dependencies__no_cycle() FROM PUBLIC;

-- acl app_private.FUNCTION tg_task_notes__members_may_add()

REVOKE ALL ON FUNCTION app_private.tg_task_notes__members_may_add() FROM PUBLIC;

-- acl app_private.FUNCTION tg_tasks__archive_rules()

REVOKE ALL ON FUNCTION app_private.tg_tasks__archive_rules() FROM PUBLIC;

-- acl app_private.FUNCTION tg_tasks__check_references()

REVOKE ALL ON FUNCTION app_private.tg_tasks__check_references() FROM PUBLIC;

-- acl app_private.FUNCTION tg_tasks__legal_transition()

REVOKE ALL ON FUNCTION app_private.tg_tasks__legal_transition() FROM PUBLIC;

-- acl control.FUNCTION task_policy_set(p_org text, p_members_may_add_notes boolean, p_allow_cross_project_dependencies boolean)

REVOKE ALL ON FUNCTION control.task_policy_set(p_org text, p_members_may_add_notes boolean, p_allow_cross_project_dependencies boolean) FROM PUBLIC;

-- acl app.TABLE task_activity

GRANT SELECT ON TABLE app.task_activity TO svc_api;

-- acl app.COLUMN task_activity.organization_id

GRANT INSERT(organization_id) ON TABLE app.task_activity TO svc_api;

-- acl app.COLUMN task_activity.task_id

GRANT INSERT(task_id) ON TABLE app.task_activity TO svc_api;

-- acl app.COLUMN task_activity.kind

GRANT INSERT(kind) ON TABLE app.task_activity TO svc_api;

-- acl app.COLUMN task_activity.transition

GRANT INSERT(transition) ON TABLE app.task_activity TO svc_api;

-- acl app.COLUMN task_activity.from_status

GRANT INSERT(from_status) ON TABLE app.task_activity TO svc_api;

-- acl app.COLUMN task_activity.to_status

GRANT INSERT(to_status) ON TABLE app.task_activity TO svc_api;

-- acl app.COLUMN task_activity.actor_client_id

GRANT INSERT(actor_client_id) ON TABLE app.task_activity TO svc_api;

-- acl app.COLUMN task_activity.subject_member_id

GRANT INSERT(subject_member_id) ON TABLE app.task_activity TO svc_api;

-- acl app.TABLE task_notes

GRANT SELECT ON TABLE app.task_notes TO svc_api;

-- acl app.COLUMN task_notes.organization_id

GRANT INSERT(organization_id) ON TABLE app.task_notes TO svc_api;

-- acl app.COLUMN task_notes.task_id

GRANT INSERT(task_id) ON TABLE app.task_notes TO svc_api;

-- acl app.COLUMN task_notes.text

GRANT INSERT(text) ON TABLE app.task_notes TO svc_api;

-- acl app.COLUMN task_notes.subject_member_id

GRANT INSERT(subject_member_id) ON TABLE app.task_notes TO svc_api;

-- acl app.COLUMN task_notes.author_client_id

GRANT INSERT(author_client_id) ON TABLE app.task_notes TO svc_api;

-- acl app.TABLE task_workflow_statuses

GRANT SELECT ON TABLE app.task_workflow_statuses TO svc_api;

-- acl app.TABLE task_workflows

GRANT SELECT ON TABLE app.task_workflows TO svc_api;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
