-- migrate:up

/** Issue 37: every statement of a command names its organization, and on Citus every command
 * reads the api views through their functions.
 *
 * A lookup by id alone is planned for every shard (on Citus, inside the delegated call, it fails:
 * "cannot execute a distributed query from a query on a shard"). Each statement below now also
 * compares organization_id, with the organization of the row the command already holds (a
 * variable) or the request's (v__organization_id): the same rows, since ids are unique and the
 * policies already confine them to the organization; so do the lock helpers the commands call.
 * Two triggers that tell their tables apart by name strip a shard's suffix from it, and
 * linked_resource_visible became PL/pgSQL (Citus cannot plan a SQL function's parameters; it is
 * called once per upload, never inlined into a query). Four updates cast the dates they set
 * before the update (Citus takes no cast or call that is not immutable inside an update's CASE).
 * Three creates read what they insert from
 * other tables first (Citus takes no subquery in the values of an INSERT). The bodies are
 * otherwise those of the earlier migrations. */

create or replace function api.invoice_send(p_id text, p_email boolean)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
 SET lock_timeout TO '5s'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  i app.invoices;
  c app.customers;
  o app.organizations;
begin
  select * into i from app.invoices x
   where x.id = p_id and x.organization_id = v__organization_id and app.has_any_role('{manager,finance}')
   for update;
  if not found then
    perform app_private.invoice_not_found(p_id);
  end if;
  if i.status <> 'draft' then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', format('the invoice is already %s (%s); only a draft is sent', i.status, i.number));
  end if;
  select * into c from app.customers x where x.organization_id = i.organization_id and x.id = i.customer_id;
  if p_email and c.deleted_at is null and c.delivery_email is null then
    perform app_private.raise('SVV22', 'CUSTOMER_DELIVERY_DETAILS_MISSING',
      format('the customer %s has no delivery email; an administrator adds one, or send with delivery.email false and deliver the PDF yourself', c.id),
      '/delivery/email');
  end if;
  update app.invoices x set status = 'sent' where x.organization_id = i.organization_id and x.id = i.id returning * into i;
  select * into o from app.organizations x where x.id = i.organization_id;
  return jsonb_build_object(
    'invoice', (select v.doc from api.invoices v where v.id = i.id),
    'organization', jsonb_build_object('name', o.name, 'locale', o.locale),
    'customer', jsonb_build_object('id', c.id, 'name', c.name, 'email', c.delivery_email));
end
$function$;

create or replace function api.webhook_delivery_replay(p_endpoint text, p_delivery text)
 RETURNS TABLE(doc jsonb)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  w app.webhook_endpoints;
  d app.webhook_deliveries;
  e app.events;
  v_id text := app_private.new_id('whd');
begin
  -- Runs as definer (it writes a delivery): ownership is checked against the request context.
  select * into w from app.webhook_endpoints
   where id = p_endpoint and organization_id = v__organization_id and client_id = app.current_client_id();
  if not found then
    perform app_private.webhook_endpoint_not_found(p_endpoint);
  end if;
  select * into d from app.webhook_deliveries where organization_id = w.organization_id and id = p_delivery and endpoint_id = w.id;
  if not found then
    perform app_private.raise('SVN04', 'WEBHOOK_DELIVERY_NOT_FOUND', format('no delivery %s of endpoint %s', p_delivery, p_endpoint));
  end if;
  select * into e from app.events where organization_id = d.organization_id and id = d.event_id;
  if e.created_at < now() - interval '30 days' then
    perform app_private.raise('SVC09', 'WEBHOOK_REPLAY_EXPIRED',
      format('event %s is older than the 30-day retention window; fetch the resource instead', e.id));
  end if;
  if w.status <> 'enabled' then
    perform app_private.raise('SVC09', 'CONFLICT', 'the endpoint is disabled; enable it before replaying');
  end if;
  insert into app.webhook_deliveries (organization_id, id, client_id, endpoint_id, event_id, replay_of)
  values (w.organization_id, v_id, w.client_id, w.id, e.id, d.id);
  perform app_private.webhook_enqueue(v_id);
  return query select v.doc from api.webhook_deliveries v where v.id = v_id;
end
$function$;

create or replace function api.invoice_attach_pdf(p_id text, p_name text, p_content bytea)
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  i app.invoices;
  v_file text;
begin
  select * into i from app.invoices x
   where x.id = p_id and x.organization_id = v__organization_id and app.has_any_role('{manager,finance}')
   for update;
  if not found then
    perform app_private.invoice_not_found(p_id);
  end if;
  if i.status = 'draft' or i.pdf_file_id is not null then
    perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', 'the PDF is made once, when the invoice is issued');
  end if;
  if substring(p_content from 1 for 5) <> '\x255044462d'::bytea
     or position('\x2525454f46'::bytea in substring(p_content from greatest(1, length(p_content) - 1023))) = 0
     or p_name !~ '^[A-Za-z0-9._-]{1,120}\.pdf$' then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'an invoice PDF: a %PDF- document ending in %%EOF, with a plain .pdf name');
  end if;
  insert into app.files (organization_id, name, content_type, size_bytes, sha256, linked_resource_type, linked_resource_id,
                         retention, created_by_client_id)
  values (i.organization_id, p_name, 'application/pdf', length(p_content), encode(sha256(p_content), 'hex'), 'invoice', i.id,
          'financial_record', app.current_client_id())
  returning id into v_file;
  insert into app.file_contents (organization_id, file_id, content) values (i.organization_id, v_file, p_content);
  update app.invoices x set pdf_file_id = v_file where x.organization_id = i.organization_id and x.id = i.id;
  return v_file;
end
$function$;

create or replace function api.webhook_endpoint_update(p_id text, p_if_match integer[], p_patch jsonb, p_verified_url text DEFAULT NULL::text)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
declare
  w app.webhook_endpoints := app_private.webhook_endpoint_lock(p_id, p_if_match);
begin
  if p_patch ? 'url' and p_patch ->> 'url' is distinct from w.url and p_patch ->> 'url' is distinct from p_verified_url then
    perform app_private.raise('SVC09', 'CONFLICT', 'the endpoint changed while the new URL was being verified; retry the request');
  end if;
  update app.webhook_endpoints e
     set url = case when p_patch ? 'url' then p_patch ->> 'url' else e.url end,
         events = case when p_patch ? 'events' then array(select jsonb_array_elements_text(p_patch -> 'events')) else e.events end,
         description = case when p_patch ? 'description' then p_patch ->> 'description' else e.description end
   where e.organization_id = w.organization_id and e.id = w.id;
  return query select v.doc, v.version from api.webhook_endpoints v where v.id = w.id;
end
$function$;

create or replace function api.webhook_endpoint_rotate(p_id text, p_secret_sealed text, p_previous_expires_in_seconds integer)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
declare
  w app.webhook_endpoints := app_private.webhook_endpoint_lock(p_id);
begin
  update app.webhook_endpoints e
     set previous_secret_sealed = case when p_previous_expires_in_seconds > 0 then e.secret_sealed end,
         previous_secret_expires_at = case when p_previous_expires_in_seconds > 0
                                           then now() + make_interval(secs => p_previous_expires_in_seconds) end,
         secret_sealed = p_secret_sealed
   where e.organization_id = w.organization_id and e.id = w.id;
  return query select v.doc, v.version from api.webhook_endpoints v where v.id = w.id;
end
$function$;

create or replace function api.webhook_endpoint_set_status(p_id text, p_status text, p_verified boolean DEFAULT false)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
declare
  w app.webhook_endpoints := app_private.webhook_endpoint_lock(p_id);
begin
  if p_status = 'enabled' and w.status <> 'enabled' and not p_verified then
    perform app_private.raise('SVC09', 'CONFLICT', 'the endpoint was disabled while the request was under way; retry the request');
  end if;
  if w.status <> p_status then
    update app.webhook_endpoints e
       set status = p_status,
           disabled_reason = case when p_status = 'disabled' then 'client' end,
           consecutive_failures = 0, failing_since = null
     where e.organization_id = w.organization_id and e.id = w.id;
  end if;
  return query select v.doc, v.version from api.webhook_endpoints v where v.id = w.id;
end
$function$;

create or replace function api.webhook_delivery_get(p_endpoint text, p_delivery text)
 RETURNS TABLE(doc jsonb)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
begin
  return query select v.doc || jsonb_build_object('attempts', coalesce((
           select jsonb_agg(jsonb_build_object('attempt', a.attempt, 'started_at', app_private.iso_timestamp(a.started_at),
                                               'duration_ms', a.duration_ms, 'response_status', a.response_status,
                                               'error', a.error) order by a.attempt)
             from app.webhook_delivery_attempts a where a.organization_id = v.organization_id and a.delivery_id = v.id), '[]'::jsonb))
    from api.webhook_deliveries v
   where v.organization_id = v__organization_id and v.id = p_delivery and v.endpoint_id = p_endpoint;
end
$function$;

create or replace function api.project_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
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
$function$;

create or replace function api.payment_create(p_body jsonb)
 RETURNS TABLE(doc jsonb)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  p app.payments;
begin
  if not exists (select from app.invoices x where x.organization_id = v__organization_id and x.id = p_body ->> 'invoice_id') then
    perform app_private.invoice_not_found(p_body ->> 'invoice_id');
  end if;
  insert into app.payments (organization_id, invoice_id, amount, currency, received_date, method, external_reference, created_by_client_id)
  values (v__organization_id, p_body ->> 'invoice_id', (p_body ->> 'amount')::numeric, p_body ->> 'currency',
          (p_body ->> 'received_date')::date, p_body ->> 'method', p_body ->> 'external_reference', app.current_client_id())
  returning * into p;
  return query select jsonb_build_object('object', 'payment', 'id', p.id, 'invoice_id', p.invoice_id,
    'amount', app_private.money_text(p.amount, i.scale), 'currency', p.currency, 'received_date', p.received_date,
    'method', p.method, 'external_reference', p.external_reference, 'created_at', app_private.iso_timestamp(p.created_at),
    'invoice', v.doc)
    from app.invoices i join api.invoices v on v.organization_id = i.organization_id and v.id = i.id
   where i.organization_id = p.organization_id and i.id = p.invoice_id;
end
$function$;

create or replace function api.project_set_status(p_id text, p_status text)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
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
$function$;

create or replace function api.task_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
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
$function$;

create or replace function api.invoice_replace_lines(p_id text, p_if_match integer[], p_lines jsonb)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
declare
  i app.invoices := app_private.invoice_lock(p_id, p_if_match);
begin
  perform app_private.invoice_set_lines(i, p_lines);
  -- The lines are part of the invoice: replacing them is a new version even when the totals stay.
  update app.invoices x set memo = x.memo where x.organization_id = i.organization_id and x.id = i.id;
  return query select v.doc, v.version from api.invoices v where v.id = i.id;
end
$function$;

create or replace function api.task_transition(p_id text, p_transition text, p_completed_at timestamp with time zone, p_subject_member_id text)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
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
$function$;

create or replace function api.task_add_note(p_id text, p_text text, p_subject_member_id text)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
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
$function$;

create or replace function api.time_entry_delete(p_id text)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
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
$function$;

create or replace function api.task_replace_dependencies(p_id text, p_if_match integer[], p_predecessors text[])
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
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
$function$;

create or replace function api.task_set_archived(p_id text, p_archived boolean)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
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
$function$;

create or replace function api.time_entry_update(p_id text, p_if_match integer[], p_patch jsonb)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
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
$function$;

create or replace function api.invoice_update(p_id text, p_if_match integer[], p_patch jsonb)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  i app.invoices := app_private.invoice_lock(p_id, p_if_match);
  v_issue_date date;
  v_due_date date;
begin
  if p_patch ? 'customer_id' and not exists (select from app.customers x where x.organization_id = v__organization_id and x.id = p_patch ->> 'customer_id'
                                               and x.kind = 'billing' and x.deleted_at is null) then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'customer_id must name a billing customer (cus_) of your organization', '/customer_id');
  end if;
  if p_patch ? 'currency' and not exists (select from app_private.currencies x where x.code = p_patch ->> 'currency') then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', format('%s is not an ISO 4217 currency code', p_patch ->> 'currency'), '/currency');
  end if;
  -- Cast before the update: Citus takes no cast that is not immutable inside its CASE.
  v_issue_date := (p_patch ->> 'issue_date')::date;
  v_due_date := (p_patch ->> 'due_date')::date;
  update app.invoices x
     set customer_id = case when p_patch ? 'customer_id' then p_patch ->> 'customer_id' else x.customer_id end,
         currency = case when p_patch ? 'currency' then p_patch ->> 'currency' else x.currency end,
         issue_date = case when p_patch ? 'issue_date' then v_issue_date else x.issue_date end,
         due_date = case when p_patch ? 'due_date' then v_due_date else x.due_date end,
         memo = case when p_patch ? 'memo' then p_patch ->> 'memo' else x.memo end
   where x.organization_id = i.organization_id and x.id = i.id;
  if p_patch ? 'lines' then
    select * into i from app.invoices x where x.organization_id = v__organization_id and x.id = p_id;
    perform app_private.invoice_set_lines(i, p_patch -> 'lines');
  end if;
  return query select v.doc, v.version from api.invoices v where v.id = i.id;
end
$function$;

create or replace function api.invoice_create(p_body jsonb)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  c app.customers;
  i app.invoices;
  v_currency text;
begin
  select * into c from app.customers x where x.organization_id = v__organization_id and x.id = p_body ->> 'customer_id' and x.kind = 'billing' and x.deleted_at is null;
  if not found then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'customer_id must name a billing customer (cus_) of your organization', '/customer_id');
  end if;
  v_currency := coalesce(p_body ->> 'currency', c.currency,
                         (select o.currency from app.organizations o where o.id = v__organization_id));
  if not exists (select from app_private.currencies x where x.code = v_currency) then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', format('%s is not an ISO 4217 currency code', v_currency), '/currency');
  end if;
  insert into app.invoices (organization_id, customer_id, currency, issue_date, due_date, memo, created_by_client_id)
  values (v__organization_id, c.id, v_currency, (p_body ->> 'issue_date')::date, (p_body ->> 'due_date')::date,
          p_body ->> 'memo', app.current_client_id())
  returning * into i;
  perform app_private.invoice_set_lines(i, coalesce(p_body -> 'lines', '[]'));
  return query select v.doc, v.version from api.invoices v where v.id = i.id;
end
$function$;

create or replace function app_private.skill_blocker(p_skill text, p_subject_member_id text)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  k app_private.agent_skills;
  v_level text;
  v_ready jsonb;
begin
  select * into k from app_private.agent_skills x where x.name = p_skill;
  select c.license_level into v_level from app.api_clients c where c.organization_id = v__organization_id and c.id = app.current_client_id();
  if k.license_level = 'manager' and v_level is distinct from 'manager' then
    return jsonb_build_object('code', 'LICENSE_LEVEL_REQUIRED', 'skill', p_skill,
      'message', format('the skill %s needs a Manager-level license', p_skill));
  end if;
  if not (k.required_roles && app.current_roles()) then
    return jsonb_build_object('code', 'ROLE_REQUIRED', 'skill', p_skill,
      'message', format('the skill %s needs one of the Roles %s', p_skill, array_to_string(k.required_roles, ', ')));
  end if;
  if p_subject_member_id is not null and k.subject_dependent and not k.supports_subject then
    return jsonb_build_object('code', 'SUBJECT_NOT_SUPPORTED', 'skill', p_skill,
      'message', format('the skill %s does not act for a subject', p_skill));
  end if;
  if k.capability is not null then
    v_ready := api.integration_readiness(k.capability);
    if not (v_ready ->> 'ready')::boolean then
      return jsonb_build_object('code', 'INTEGRATION_CONNECTION_NOT_READY', 'skill', p_skill,
        'message', format('the skill %s needs a ready organization connection offering %s: %s', p_skill, k.capability,
                          v_ready -> 'blockers' -> 0 ->> 'message'));
    end if;
  end if;
  return null;
end
$function$;

create or replace function api.invoice_void(p_id text)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  i app.invoices;
  c app.integration_connections;
begin
  select * into i from app.invoices x
   where x.id = p_id and x.organization_id = v__organization_id and app.has_any_role('{manager,finance}')
   for update;
  if not found then
    perform app_private.invoice_not_found(p_id);
  end if;
  if i.status = 'draft' then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', 'only an issued invoice is voided; a draft is simply never sent');
  elsif i.status <> 'void' and i.amount_paid > 0 then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED',
      format('payments of %s %s are recorded against this invoice; it cannot be voided', app_private.money_text(i.amount_paid, i.scale), i.currency));
  elsif i.status = 'sent' then
    if i.sync_status = 'pending' then
      perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED',
        'the invoice is being synchronized to the accounting provider; void it once the sync has finished');
    end if;
    if i.sync_status = 'failed' and not coalesce(i.sync_failure_definitive, false) then
      perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED',
        'the last accounting sync ended without a definite answer, so the provider may hold this invoice; an administrator synchronizes it again first');
    end if;
    if i.sync_status = 'synced' then
      select * into c from app.integration_connections x where x.organization_id = i.organization_id and x.id = i.sync_connection_id;
      if not app_private.accounting_ready(c) then
        perform app_private.accounting_not_ready(c, 'void a synchronized invoice');
      end if;
      if not 'invoice.void' = any (c.capabilities) then
        perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED',
          format('the %s connection cannot void invoices (no invoice.void capability); an administrator enables voiding on the connection', c.provider));
      end if;
      update app.invoices x set status = 'void', sync_status = 'pending', sync_error = null where x.organization_id = i.organization_id and x.id = i.id;
    else
      update app.invoices x set status = 'void' where x.organization_id = i.organization_id and x.id = i.id;
    end if;
  end if;
  return query select v.doc, v.version from api.invoices v where v.id = i.id;
end
$function$;

create or replace function api.project_create(p_body jsonb, p_schema_version integer)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
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
$function$;

create or replace function api.ticket_create(p_body jsonb)
 RETURNS TABLE(doc jsonb, version integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  v_id text;
  v_status text;
  v_tags text[];
begin
  perform api.require_tickets(true);
  -- Read first: Citus takes no subquery in the values of an INSERT.
  select s.status into v_status from app.ticket_statuses s where s.organization_id = v__organization_id and s.is_initial;
  v_tags := coalesce((select array_agg(distinct lower(btrim(x))) from jsonb_array_elements_text(coalesce(p_body -> 'tags', '[]')) x), '{}');
  insert into app.tickets (organization_id, subject, description, status, priority, requester_name, requester_email, tags,
                           external_id, created_by_client_id)
  values (v__organization_id, p_body ->> 'subject', p_body ->> 'description',
          v_status,
          coalesce(p_body ->> 'priority', 'normal'), p_body #>> '{requester,name}', lower(btrim(p_body #>> '{requester,email}')),
          v_tags,
          p_body ->> 'external_id', app.current_client_id())
  returning id into v_id;
  return query select v.doc, v.version from api.tickets v where v.id = v_id;
end
$function$;

create or replace function api.report_run_create(p_report_id text, p_parameters jsonb, p_format text)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  d app_private.report_definitions;
  v_id text;
  v_timezone text;
begin
  perform api.report_get(p_report_id);
  select * into d from app_private.report_definitions x where x.id = p_report_id;
  if not p_format = any (d.formats) then
    perform app_private.raise('SVV22', 'EXPORT_FORMAT_NOT_SUPPORTED',
      format('%s offers %s', p_report_id, array_to_string(d.formats, ', ')), '/format');
  end if;
  if p_parameters ? 'from' and p_parameters ? 'to'
     and ((p_parameters ->> 'to')::date < (p_parameters ->> 'from')::date or (p_parameters ->> 'to')::date > (p_parameters ->> 'from')::date + 1096) then
    perform app_private.raise('SVV22', 'INVALID_REPORT_PARAMETERS', 'to must be on or after from, and at most three years later', '/parameters/to');
  end if;
  -- Read first: Citus takes no subquery in the values of an INSERT.
  select o.timezone into v_timezone from app.organizations o where o.id = v__organization_id;
  insert into app.report_runs (organization_id, report_id, definition_version, client_id, parameters, format, timezone)
  values (v__organization_id, d.id, d.version, app.current_client_id(), p_parameters, p_format,
          v_timezone)
  returning id into v_id;
  perform app_private.queue_report_run(v_id);
  return (select v.doc from api.report_runs v where v.id = v_id);
end
$function$;

create or replace function app_private.lock_task(p_id text)
 RETURNS app.tasks
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
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
$function$;

create or replace function app_private.lock_time_entry(p_id text)
 RETURNS app.time_entries
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
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
$function$;

create or replace function app_private.webhook_endpoint_lock(p_id text, p_if_match integer[] DEFAULT NULL::integer[])
 RETURNS app.webhook_endpoints
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  w app.webhook_endpoints;
begin
  select * into w from app.webhook_endpoints where organization_id = v__organization_id and id = p_id for update;
  if not found then
    perform app_private.webhook_endpoint_not_found(p_id);
  end if;
  if p_if_match is not null then
    perform app_private.check_if_match(w.version, p_if_match);
  end if;
  return w;
end
$function$;

create or replace function app_private.invoice_lock(p_id text, p_if_match integer[])
 RETURNS app.invoices
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v__organization_id text := app.current_organization_id();
  i app.invoices;
begin
  select * into i from app.invoices where organization_id = v__organization_id and id = p_id for update;
  if not found then
    perform app_private.invoice_not_found(p_id);
  end if;
  perform app_private.check_if_match(i.version, p_if_match);
  if i.status <> 'draft' then
    perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', format('a %s invoice cannot be changed', i.status));
  end if;
  return i;
end
$function$;

create or replace function app_private.invoice_set_lines(p_invoice app.invoices, p_lines jsonb)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
begin
  perform app_private.raise_errors(app_private.invoice_lines_errors(p_lines, p_invoice.scale));
  delete from app.invoice_lines where organization_id = p_invoice.organization_id and invoice_id = p_invoice.id;
  insert into app.invoice_lines (organization_id, invoice_id, position, description, quantity, unit_price, tax_rate)
  select p_invoice.organization_id, p_invoice.id, (o - 1)::integer, l ->> 'description', (l ->> 'quantity')::numeric,
         (l ->> 'unit_price')::numeric, coalesce((l ->> 'tax_rate')::numeric, 0)
    from jsonb_array_elements(p_lines) with ordinality as x(l, o);
end
$function$;

create or replace function app_private.tg__client_of_parent()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
begin
  -- On Citus the trigger fires on a shard, whose name ends in its shard id.
  case regexp_replace(tg_table_name, '_[0-9]+$', '')
    when 'run_events', 'run_tool_calls' then
      select p.client_id into new.client_id from app.runs p where p.organization_id = new.organization_id and p.id = new.run_id;
    when 'report_results' then
      select p.client_id into new.client_id from app.report_runs p where p.organization_id = new.organization_id and p.id = new.run_id;
    when 'webhook_delivery_attempts' then
      select p.client_id into new.client_id from app.webhook_deliveries p where p.organization_id = new.organization_id and p.id = new.delivery_id;
    when 'conversation_messages' then
      select p.client_id into new.client_id from app.conversations p where p.organization_id = new.organization_id and p.id = new.conversation_id;
  end case;
  return new;
end
$function$;

create or replace function app_private.tg_file_bytes__of_parent()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
begin
  -- On Citus the trigger fires on a shard, whose name ends in its shard id.
  if regexp_replace(tg_table_name, '_[0-9]+$', '') = 'file_contents' then
    select f.linked_resource_type into new.linked_resource_type
      from app.files f where f.organization_id = new.organization_id and f.id = new.file_id;
  else
    select u.linked_resource_type, u.created_by_client_id into new.linked_resource_type, new.client_id
      from app.file_uploads u where u.organization_id = new.organization_id and u.id = new.upload_id;
  end if;
  return new;
end
$function$;

create or replace function app_private.linked_resource_visible(p_org text, p_type text, p_id text)
 RETURNS boolean
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog'
AS $function$
begin
  -- PL/pgSQL: Citus cannot plan the parameters of a SQL function.
  return case p_type
    when 'project' then exists (select from app.projects p where p.organization_id = p_org and p.id = p_id)
    when 'task' then exists (select from app.tasks t where t.organization_id = p_org and t.id = p_id)
    when 'invoice' then exists (select from app.invoices i where i.organization_id = p_org and i.id = p_id)
    when 'ticket' then exists (select from app.tickets k where k.organization_id = p_org and k.id = p_id)
    else false end;
end
$function$;


create or replace function api.file_upload_get(p_id text)
 returns jsonb
 language plpgsql
 stable security definer
 set search_path to 'pg_catalog'
as $function$
declare
  v__organization_id text := app.current_organization_id();
  u app.file_uploads;
begin
  -- The row into a variable first: on Citus a row passed whole inside the query is the shard's type.
  select * into u from app.file_uploads x where x.organization_id = v__organization_id and x.id = p_id;
  if not found then
    return null;
  end if;
  return app_private.file_upload_doc(u);
end
$function$;


/** On Citus only: a command that reads an api view reads its function instead (migration
 * 20261205000700), `api.tasks(p_id)` where it reads one row by its id: a view's correlated
 * subqueries, planned by Citus, ask every shard. One server keeps the views, whose plans are
 * cached with the commands'. */
do $$
declare
  f record;
  v_views text;
  v_def text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  select string_agg(c.relname, '|') into v_views from pg_class c where c.relnamespace = 'api'::regnamespace and c.relkind = 'v';
  for f in
    select p.oid, pg_get_functiondef(p.oid) as def
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname in ('api', 'app_private', 'control')
       and p.prosrc ~ ('(from|join)\s+api\.(' || v_views || ')\M(?!\()')
       -- The view functions themselves read their views.
       and not (n.nspname = 'api' and p.proname ~ ('^(' || v_views || ')$'))
  loop
    -- `from api.tasks v where v.id = p_id` reads the one row; any other read, the organization's rows.
    -- (The id a parameter or a variable of the command, `p_…` or `v_…`: text, as the function takes.)
    v_def := regexp_replace(f.def, '(from|join)(\s+)api\.(' || v_views || ')(\s+)([a-z_]+)(\s+where\s+)\5\.id(\s*=\s*)([pv]_[a-z_]+)(?![\w.(])',
                            '\1\2api.\3(\8)\4\5\6\5.id\7\8', 'g');
    v_def := regexp_replace(v_def, '(from|join)(\s+)api\.(' || v_views || ')\M(?!\()', '\1\2api.\3()', 'g');
    execute v_def;
  end loop;
end
$$;

-- migrate:down
