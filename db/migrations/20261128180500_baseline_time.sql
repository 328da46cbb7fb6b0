-- migrate:up

/** Baseline (issue 38), area 5 of 15. Time: time entries, their audit and approvals.
 * The current definitions that migrations 20261122000100 to 20261205003400 built (git history before
 * the baseline), as pg_dump writes them; db/README.md says how they were made and compared. */
SET LOCAL check_function_bodies = false;
SET LOCAL client_min_messages = warning;
SELECT pg_catalog.set_config('search_path', '', true);

-- function api.approval_exists(text)

CREATE FUNCTION api.approval_exists(p_id text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
begin
  perform app_private.refuse_on_coordinator('api.approval_exists(text)');
  return (select exists (select from app.approvals a where a.id = p_id and a.organization_id = v__organization_id));
end
$$;

SET LOCAL default_tablespace = '';

SET LOCAL default_table_access_method = heap;

-- table app.approvals

CREATE TABLE app.approvals (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('apr'::text) NOT NULL,
    type text NOT NULL,
    category text NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    resource_type text NOT NULL,
    resource_id text NOT NULL,
    requested_by_client_id text NOT NULL,
    approver_member_id text,
    decision text,
    requested_at timestamp with time zone DEFAULT now() NOT NULL,
    decided_at timestamp with time zone,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    CONSTRAINT approvals_category_valid CHECK ((category = ANY (ARRAY['project'::text, 'financial'::text, 'hr'::text]))),
    CONSTRAINT approvals_decided_consistently CHECK ((((status = 'pending'::text) = (decision IS NULL)) AND ((decision IS NULL) = (decided_at IS NULL)))),
    CONSTRAINT approvals_decision_valid CHECK ((decision = ANY (ARRAY['approved'::text, 'rejected'::text]))),
    CONSTRAINT approvals_status_valid CHECK ((status = ANY (ARRAY['pending'::text, 'approved'::text, 'rejected'::text]))),
    CONSTRAINT approvals_type_valid CHECK ((type = 'time_entry'::text))
);

ALTER TABLE ONLY app.approvals FORCE ROW LEVEL SECURITY;

-- view api.approvals

CREATE VIEW api.approvals WITH (security_invoker='false') AS
 SELECT a.organization_id,
    a.id,
    a.type,
    a.status,
    a.resource_type,
    a.resource_id,
    a.requested_at,
    a.updated_at,
    a.version,
    (jsonb_build_object('object', 'approval', 'id', a.id, 'type', a.type, 'status', a.status, 'resource', jsonb_build_object('type', a.resource_type, 'id', a.resource_id), 'requested_at', app_private.iso_timestamp(a.requested_at), 'decided_at', app_private.iso_timestamp(a.decided_at), 'decision', a.decision, 'version', a.version, 'updated_at', app_private.iso_timestamp(a.updated_at)) ||
        CASE
            WHEN ( SELECT o.show_approver_identities
               FROM app.organizations o
              WHERE (o.id = a.organization_id)) THEN jsonb_build_object('approver',
            CASE
                WHEN (a.approver_member_id IS NOT NULL) THEN jsonb_build_object('member_id', a.approver_member_id)
                ELSE NULL::jsonb
            END)
            ELSE '{}'::jsonb
        END) AS doc
   FROM app.approvals a;

ALTER TABLE api.approvals OWNER TO svc_api;

-- function api.approvals(text)

CREATE FUNCTION api.approvals(p_id text DEFAULT NULL::text) RETURNS SETOF api.approvals
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.approvals where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.approvals', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

ALTER FUNCTION api.approvals(p_id text) OWNER TO svc_api;

-- comment api.FUNCTION approvals(p_id text)

COMMENT ON FUNCTION api.approvals(p_id text) IS 'The rows of view api.approvals for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

-- function api.require_time_entry_read()

CREATE FUNCTION api.require_time_entry_read() RETURNS void
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if not app_private.may_read_time_entries() then
    perform app_private.raise('SVR03', 'ROLE_REQUIRED',
      'time entries are readable with manager or finance (hr where the organization permits); members use reporting views');
  end if;
end
$$;

ALTER FUNCTION api.require_time_entry_read() OWNER TO svc_api;

-- table app.time_entries

CREATE TABLE app.time_entries (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('tim'::text) NOT NULL,
    member_id text NOT NULL,
    project_id text NOT NULL,
    task_id text,
    work_date date NOT NULL,
    minutes integer NOT NULL,
    billable boolean DEFAULT true NOT NULL,
    notes text,
    status text DEFAULT 'draft'::text NOT NULL,
    external_id text,
    created_by_client_id text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    deleted_at timestamp with time zone,
    version integer DEFAULT 1 NOT NULL,
    CONSTRAINT time_entries_external_id_length CHECK (((length(external_id) >= 1) AND (length(external_id) <= 255))),
    CONSTRAINT time_entries_minutes_range CHECK (((minutes >= 1) AND (minutes <= 1440))),
    CONSTRAINT time_entries_notes_length CHECK ((length(notes) <= 5000)),
    CONSTRAINT time_entries_status_valid CHECK ((status = ANY (ARRAY['draft'::text, 'submitted'::text, 'approved'::text, 'rejected'::text])))
);

ALTER TABLE ONLY app.time_entries FORCE ROW LEVEL SECURITY;

-- view api.time_entries

CREATE VIEW api.time_entries WITH (security_invoker='false') AS
 SELECT e.organization_id,
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
        CASE
            WHEN (e.created_by_client_id = ( SELECT app.current_client_id() AS current_client_id)) THEN e.external_id
            ELSE NULL::text
        END, 'approval_id', ( SELECT a.id
           FROM app.approvals a
          WHERE ((a.resource_type = 'time_entry'::text) AND (a.resource_id = e.id))), 'created_at', app_private.iso_timestamp(e.created_at), 'updated_at', app_private.iso_timestamp(e.updated_at)) AS doc
   FROM app.time_entries e;

ALTER TABLE api.time_entries OWNER TO svc_api;

-- function api.time_entries(text)

CREATE FUNCTION api.time_entries(p_id text DEFAULT NULL::text) RETURNS SETOF api.time_entries
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.time_entries where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.time_entries', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

ALTER FUNCTION api.time_entries(p_id text) OWNER TO svc_api;

-- comment api.FUNCTION time_entries(p_id text)

COMMENT ON FUNCTION api.time_entries(p_id text) IS 'The rows of view api.time_entries for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

-- function api.time_entry_batch(jsonb, boolean)

CREATE FUNCTION api.time_entry_batch(p_entries jsonb, p_atomic boolean) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION api.time_entry_batch(p_entries jsonb, p_atomic boolean) OWNER TO svc_api;

-- function api.time_entry_create(jsonb)

CREATE FUNCTION api.time_entry_create(p_body jsonb) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_id text;
begin
  perform api.require_any_role('{manager}', 'createTimeEntry');
  v_id := app_private.time_entry_insert(p_body);
  return query select * from api.time_entry_get(v_id);
end
$$;

ALTER FUNCTION api.time_entry_create(p_body jsonb) OWNER TO svc_api;

-- function api.time_entry_delete(text)

CREATE FUNCTION api.time_entry_delete(p_id text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION api.time_entry_delete(p_id text) OWNER TO svc_api;

-- function api.time_entry_get(text)

CREATE FUNCTION api.time_entry_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform api.require_time_entry_read();
  return query select t.doc, t.version from api.time_entries t where t.id = p_id and t.deleted_at is null;
end
$$;

ALTER FUNCTION api.time_entry_get(p_id text) OWNER TO svc_api;

-- function api.time_entry_submit(text)

CREATE FUNCTION api.time_entry_submit(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION api.time_entry_submit(p_id text) OWNER TO svc_api;

-- function api.time_entry_update(text, integer[], jsonb)

CREATE FUNCTION api.time_entry_update(p_id text, p_if_match integer[], p_patch jsonb) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION api.time_entry_update(p_id text, p_if_match integer[], p_patch jsonb) OWNER TO svc_api;

-- function app_private.lock_time_entry(text)

CREATE FUNCTION app_private.lock_time_entry(p_id text) RETURNS app.time_entries
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.may_read_time_entries()

CREATE FUNCTION app_private.may_read_time_entries() RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.request_time_entry_approval(text)

CREATE FUNCTION app_private.request_time_entry_approval(p_entry_id text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_time_entries__lock()

CREATE FUNCTION app_private.tg_time_entries__lock() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_time_entries__no_delete()

CREATE FUNCTION app_private.tg_time_entries__no_delete() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.raise('SVC17', 'TIME_ENTRY_LOCKED', 'time entries are deleted by marking them, never removed');
end
$$;

-- function app_private.tg_time_entries__submitted_has_approval()

CREATE FUNCTION app_private.tg_time_entries__submitted_has_approval() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if new.status = 'submitted' and not exists (
       select from app.approvals a where a.organization_id = new.organization_id and a.resource_type = 'time_entry'
                                      and a.resource_id = new.id and a.status = 'pending') then
    perform app_private.raise('SVR05', 'APPROVAL_REQUIRED', 'submit the time entry through submitTimeEntry, which requests approval');
  end if;
  return null;
end
$$;

-- function app_private.tg_time_entries__validate()

CREATE FUNCTION app_private.tg_time_entries__validate() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.time_entry_insert(jsonb)

CREATE FUNCTION app_private.time_entry_insert(p_body jsonb) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.time_entry_not_found(text)

CREATE FUNCTION app_private.time_entry_not_found(p_id text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select app_private.raise('SVN04', 'TIME_ENTRY_NOT_FOUND', format('no time entry %s in your organization', p_id)) $$;

-- function control.approval_decide(text, text, text)

CREATE FUNCTION control.approval_decide(p_approval text, p_decision text, p_by text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- table app.time_entry_audit

CREATE TABLE app.time_entry_audit (
    organization_id text NOT NULL,
    id bigint NOT NULL,
    time_entry_id text NOT NULL,
    action text NOT NULL,
    actor_client_id text NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE ONLY app.time_entry_audit FORCE ROW LEVEL SECURITY;

-- sequence app.time_entry_audit_id_seq

ALTER TABLE app.time_entry_audit ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.time_entry_audit_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- sequence set app.time_entry_audit_id_seq

SELECT pg_catalog.setval('app.time_entry_audit_id_seq', 1, false);

-- constraint app.approvals approvals_pkey

ALTER TABLE ONLY app.approvals
    ADD CONSTRAINT approvals_pkey PRIMARY KEY (organization_id, id);

-- constraint app.time_entries time_entries_pkey

ALTER TABLE ONLY app.time_entries
    ADD CONSTRAINT time_entries_pkey PRIMARY KEY (organization_id, id);

-- constraint app.time_entry_audit time_entry_audit_pkey

ALTER TABLE ONLY app.time_entry_audit
    ADD CONSTRAINT time_entry_audit_pkey PRIMARY KEY (organization_id, id);

-- index app.approvals_id

CREATE INDEX approvals_id ON app.approvals USING btree (id);

-- index app.approvals_one_per_resource

CREATE UNIQUE INDEX approvals_one_per_resource ON app.approvals USING btree (organization_id, resource_type, resource_id);

-- index app.approvals_org_requested

CREATE INDEX approvals_org_requested ON app.approvals USING btree (organization_id, requested_at, id);

-- index app.time_entries_external_id_unique

CREATE UNIQUE INDEX time_entries_external_id_unique ON app.time_entries USING btree (organization_id, created_by_client_id, external_id) WHERE ((external_id IS NOT NULL) AND (deleted_at IS NULL));

-- index app.time_entries_id

CREATE INDEX time_entries_id ON app.time_entries USING btree (id);

-- index app.time_entries_member_date

CREATE INDEX time_entries_member_date ON app.time_entries USING btree (organization_id, member_id, work_date) WHERE (deleted_at IS NULL);

-- index app.time_entries_org_date

CREATE INDEX time_entries_org_date ON app.time_entries USING btree (organization_id, work_date, id) WHERE (deleted_at IS NULL);

-- index app.time_entries_project

CREATE INDEX time_entries_project ON app.time_entries USING btree (project_id, work_date) WHERE (deleted_at IS NULL);

-- trigger app.time_entries _050_lock

CREATE TRIGGER _050_lock BEFORE UPDATE ON app.time_entries FOR EACH ROW EXECUTE FUNCTION app_private.tg_time_entries__lock();

-- trigger app.time_entries _050_no_delete

CREATE TRIGGER _050_no_delete BEFORE DELETE ON app.time_entries FOR EACH ROW EXECUTE FUNCTION app_private.tg_time_entries__no_delete();

-- trigger app.approvals _100_touch_version

CREATE TRIGGER _100_touch_version BEFORE UPDATE ON app.approvals FOR EACH ROW EXECUTE FUNCTION app_private.tg__touch_version();

-- trigger app.time_entries _100_touch_version

CREATE TRIGGER _100_touch_version BEFORE UPDATE ON app.time_entries FOR EACH ROW EXECUTE FUNCTION app_private.tg__touch_version();

-- trigger app.time_entries _200_validate

CREATE TRIGGER _200_validate BEFORE INSERT OR UPDATE ON app.time_entries FOR EACH ROW EXECUTE FUNCTION app_private.tg_time_entries__validate();

-- trigger app.time_entries _900_submitted_has_approval

CREATE TRIGGER _900_submitted_has_approval AFTER INSERT OR UPDATE OF status ON app.time_entries FOR EACH ROW EXECUTE FUNCTION app_private.tg_time_entries__submitted_has_approval();

-- fk constraint app.approvals approvals_organization_id_fkey

ALTER TABLE ONLY app.approvals
    ADD CONSTRAINT approvals_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.time_entries time_entries_created_by_client_fkey

ALTER TABLE ONLY app.time_entries
    ADD CONSTRAINT time_entries_created_by_client_fkey FOREIGN KEY (organization_id, created_by_client_id) REFERENCES app.api_clients(organization_id, id) ON DELETE RESTRICT;

-- fk constraint app.time_entries time_entries_organization_id_fkey

ALTER TABLE ONLY app.time_entries
    ADD CONSTRAINT time_entries_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.time_entries time_entries_organization_id_member_id_fkey

ALTER TABLE ONLY app.time_entries
    ADD CONSTRAINT time_entries_organization_id_member_id_fkey FOREIGN KEY (organization_id, member_id) REFERENCES app.members(organization_id, id) ON DELETE RESTRICT;

-- fk constraint app.time_entries time_entries_project_fkey

ALTER TABLE ONLY app.time_entries
    ADD CONSTRAINT time_entries_project_fkey FOREIGN KEY (organization_id, project_id) REFERENCES app.projects(organization_id, id) ON DELETE RESTRICT;

-- fk constraint app.time_entries time_entries_task_fkey

ALTER TABLE ONLY app.time_entries
    ADD CONSTRAINT time_entries_task_fkey FOREIGN KEY (organization_id, task_id) REFERENCES app.tasks(organization_id, id) ON DELETE RESTRICT;

-- fk constraint app.time_entry_audit time_entry_audit_organization_id_fkey

ALTER TABLE ONLY app.time_entry_audit
    ADD CONSTRAINT time_entry_audit_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.time_entry_audit time_entry_audit_time_entry_fkey

ALTER TABLE ONLY app.time_entry_audit
    ADD CONSTRAINT time_entry_audit_time_entry_fkey FOREIGN KEY (organization_id, time_entry_id) REFERENCES app.time_entries(organization_id, id) ON DELETE RESTRICT;

-- policy app.approvals Clients see approvals of resources their Roles cover

CREATE POLICY "Clients see approvals of resources their Roles cover" ON app.approvals FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND
CASE category
    WHEN 'project'::text THEN ( SELECT app.has_role('manager'::text) AS has_role)
    WHEN 'financial'::text THEN ( SELECT app.has_role('finance'::text) AS has_role)
    ELSE ( SELECT app.has_role('hr'::text) AS has_role)
END));

-- policy app.time_entries Managers change time

CREATE POLICY "Managers change time" ON app.time_entries FOR UPDATE TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role))) WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role)));

-- policy app.time_entries Managers record time

CREATE POLICY "Managers record time" ON app.time_entries FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role) AND (created_by_client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- policy app.time_entry_audit Managers write the time audit

CREATE POLICY "Managers write the time audit" ON app.time_entry_audit FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (actor_client_id = ( SELECT app.current_client_id() AS current_client_id)) AND ( SELECT app.has_role('manager'::text) AS has_role)));

-- policy app.time_entries Managers, finance, and hr where permitted read time entries

CREATE POLICY "Managers, finance, and hr where permitted read time entries" ON app.time_entries FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app_private.may_read_time_entries() AS may_read_time_entries)));

-- row security app.approvals

ALTER TABLE app.approvals ENABLE ROW LEVEL SECURITY;

-- row security app.time_entries

ALTER TABLE app.time_entries ENABLE ROW LEVEL SECURITY;

-- row security app.time_entry_audit

ALTER TABLE app.time_entry_audit ENABLE ROW LEVEL SECURITY;

-- acl api.FUNCTION approval_exists(p_id text)

REVOKE ALL ON FUNCTION api.approval_exists(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.approval_exists(p_id text) TO svc_runtime;
GRANT ALL ON FUNCTION api.approval_exists(p_id text) TO svc_api;

-- acl app.TABLE approvals

GRANT SELECT ON TABLE app.approvals TO svc_api;

-- acl api.TABLE approvals

GRANT SELECT ON TABLE api.approvals TO svc_runtime;

-- acl api.FUNCTION approvals(p_id text)

REVOKE ALL ON FUNCTION api.approvals(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.approvals(p_id text) TO svc_runtime;

-- acl api.FUNCTION require_time_entry_read()

REVOKE ALL ON FUNCTION api.require_time_entry_read() FROM PUBLIC;
GRANT ALL ON FUNCTION api.require_time_entry_read() TO svc_runtime;

-- acl app.TABLE time_entries

GRANT SELECT ON TABLE app.time_entries TO svc_api;

-- acl app.COLUMN time_entries.organization_id

GRANT INSERT(organization_id) ON TABLE app.time_entries TO svc_api;

-- acl app.COLUMN time_entries.member_id

GRANT INSERT(member_id) ON TABLE app.time_entries TO svc_api;

-- acl app.COLUMN time_entries.project_id

GRANT INSERT(project_id),UPDATE(project_id) ON TABLE app.time_entries TO svc_api;

-- acl app.COLUMN time_entries.task_id

GRANT INSERT(task_id),UPDATE(task_id) ON TABLE app.time_entries TO svc_api;

-- acl app.COLUMN time_entries.work_date

GRANT INSERT(work_date),UPDATE(work_date) ON TABLE app.time_entries TO svc_api;

-- acl app.COLUMN time_entries.minutes

GRANT INSERT(minutes),UPDATE(minutes) ON TABLE app.time_entries TO svc_api;

-- acl app.COLUMN time_entries.billable

GRANT INSERT(billable),UPDATE(billable) ON TABLE app.time_entries TO svc_api;

-- acl app.COLUMN time_entries.notes

GRANT INSERT(notes),UPDATE(notes) ON TABLE app.time_entries TO svc_api;

-- acl app.COLUMN time_entries.status

GRANT UPDATE(status) ON TABLE app.time_entries TO svc_api;

-- acl app.COLUMN time_entries.external_id

GRANT INSERT(external_id) ON TABLE app.time_entries TO svc_api;

-- acl app.COLUMN time_entries.created_by_client_id

GRANT INSERT(created_by_client_id) ON TABLE app.time_entries TO svc_api;

-- acl app.COLUMN time_entries.deleted_at

GRANT UPDATE(deleted_at) ON TABLE app.time_entries TO svc_api;

-- acl api.TABLE time_entries

GRANT SELECT ON TABLE api.time_entries TO svc_runtime;

-- acl api.FUNCTION time_entries(p_id text)

REVOKE ALL ON FUNCTION api.time_entries(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.time_entries(p_id text) TO svc_runtime;

-- acl api.FUNCTION time_entry_batch(p_entries jsonb, p_atomic boolean)

REVOKE ALL ON FUNCTION api.time_entry_batch(p_entries jsonb, p_atomic boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.time_entry_batch(p_entries jsonb, p_atomic boolean) TO svc_runtime;

-- acl api.FUNCTION time_entry_create(p_body jsonb)

REVOKE ALL ON FUNCTION api.time_entry_create(p_body jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION api.time_entry_create(p_body jsonb) TO svc_runtime;

-- acl api.FUNCTION time_entry_delete(p_id text)

REVOKE ALL ON FUNCTION api.time_entry_delete(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.time_entry_delete(p_id text) TO svc_runtime;

-- acl api.FUNCTION time_entry_get(p_id text)

REVOKE ALL ON FUNCTION api.time_entry_get(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.time_entry_get(p_id text) TO svc_runtime;

-- acl api.FUNCTION time_entry_submit(p_id text)

REVOKE ALL ON FUNCTION api.time_entry_submit(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.time_entry_submit(p_id text) TO svc_runtime;

-- acl api.FUNCTION time_entry_update(p_id text, p_if_match integer[], p_patch jsonb)

REVOKE ALL ON FUNCTION api.time_entry_update(p_id text, p_if_match integer[], p_patch jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION api.time_entry_update(p_id text, p_if_match integer[], p_patch jsonb) TO svc_runtime;

-- acl app_private.FUNCTION lock_time_entry(p_id text)

REVOKE ALL ON FUNCTION app_private.lock_time_entry(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.lock_time_entry(p_id text) TO svc_api;

-- acl app_private.FUNCTION may_read_time_entries()

REVOKE ALL ON FUNCTION app_private.may_read_time_entries() FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.may_read_time_entries() TO svc_runtime;
GRANT ALL ON FUNCTION app_private.may_read_time_entries() TO svc_api;
GRANT ALL ON FUNCTION app_private.may_read_time_entries() TO svc_reporting;

-- acl app_private.FUNCTION request_time_entry_approval(p_entry_id text)

REVOKE ALL ON FUNCTION app_private.request_time_entry_approval(p_entry_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.request_time_entry_approval(p_entry_id text) TO svc_api;

-- acl app_private.FUNCTION tg_time_entries__lock()

REVOKE ALL ON FUNCTION app_private.tg_time_entries__lock() FROM PUBLIC;

-- acl app_private.FUNCTION tg_time_entries__no_delete()

REVOKE ALL ON FUNCTION app_private.tg_time_entries__no_delete() FROM PUBLIC;

-- acl app_private.FUNCTION tg_time_entries__submitted_has_approval()

REVOKE ALL ON FUNCTION app_private.tg_time_entries__submitted_has_approval() FROM PUBLIC;

-- acl app_private.FUNCTION tg_time_entries__validate()

REVOKE ALL ON FUNCTION app_private.tg_time_entries__validate() FROM PUBLIC;

-- acl app_private.FUNCTION time_entry_insert(p_body jsonb)

REVOKE ALL ON FUNCTION app_private.time_entry_insert(p_body jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.time_entry_insert(p_body jsonb) TO svc_api;

-- acl app_private.FUNCTION time_entry_not_found(p_id text)

REVOKE ALL ON FUNCTION app_private.time_entry_not_found(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.time_entry_not_found(p_id text) TO svc_api;

-- acl control.FUNCTION approval_decide(p_approval text, p_decision text, p_by text)

REVOKE ALL ON FUNCTION control.approval_decide(p_approval text, p_decision text, p_by text) FROM PUBLIC;

-- acl app.COLUMN time_entry_audit.organization_id

GRANT INSERT(organization_id) ON TABLE app.time_entry_audit TO svc_api;

-- acl app.COLUMN time_entry_audit.time_entry_id

GRANT INSERT(time_entry_id) ON TABLE app.time_entry_audit TO svc_api;

-- acl app.COLUMN time_entry_audit.action

GRANT INSERT(action) ON TABLE app.time_entry_audit TO svc_api;

-- acl app.COLUMN time_entry_audit.actor_client_id

GRANT INSERT(actor_client_id) ON TABLE app.time_entry_audit TO svc_api;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
