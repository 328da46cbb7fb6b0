-- migrate:up

/** Distribution-ready keys (issue 12). Citus distributes a table by one column and requires that
 * column in every primary key and unique constraint, and in every foreign key between distributed
 * tables. Every tenant table (one with organization_id) now has organization_id leading its
 * primary key and unique constraints, and every foreign key between tenant tables is composite
 * with it. Global tables stay as they are: app.organizations, app_private.currencies,
 * app_private.event_types and app_private.signing_keys (Citus reference tables), and the unlogged
 * app_private.rate_limit_buckets (kept on the coordinator). docs/scaling.md lists them;
 * test/db/distribution-keys.test.ts fails for any table, constraint or key that breaks the rule.
 *
 * Ids stay globally unique by construction (random); they are no longer a constraint on their
 * own. Main entities keep a plain index on id for lookups that arrive without the organization
 * (the worker's jobs, the control plane, a DBA at psql). */

/** 1. Foreign keys between tenant tables: dropped here, recreated composite in section 3. */
alter table app.client_secrets drop constraint client_secrets_client_id_fkey;
alter table app.idempotency_keys drop constraint idempotency_keys_client_id_fkey;
alter table app.projects drop constraint projects_created_by_client_id_fkey,
                         drop constraint projects_customer_id_fkey;
alter table app.task_workflow_statuses drop constraint task_workflow_statuses_organization_id_workflow_id_fkey;
alter table app.task_workflow_transitions drop constraint task_workflow_transitions_workflow_id_from_status_fkey,
                                          drop constraint task_workflow_transitions_workflow_id_to_status_fkey;
alter table app.tasks drop constraint tasks_created_by_client_id_fkey,
                      drop constraint tasks_organization_id_project_id_fkey,
                      drop constraint tasks_organization_id_workflow_id_fkey,
                      drop constraint tasks_project_id_fkey,
                      drop constraint tasks_workflow_id_status_fkey;
alter table app.task_dependencies drop constraint task_dependencies_organization_id_predecessor_task_id_fkey,
                                  drop constraint task_dependencies_organization_id_task_id_fkey;
alter table app.task_notes drop constraint task_notes_author_client_id_fkey,
                           drop constraint task_notes_organization_id_task_id_fkey;
alter table app.task_activity drop constraint task_activity_organization_id_task_id_fkey;
alter table app.time_entries drop constraint time_entries_created_by_client_id_fkey,
                             drop constraint time_entries_organization_id_project_id_fkey,
                             drop constraint time_entries_organization_id_task_id_fkey,
                             drop constraint time_entries_project_id_fkey,
                             drop constraint time_entries_task_id_fkey;
alter table app.time_entry_audit drop constraint time_entry_audit_organization_id_time_entry_id_fkey;
alter table app.webhook_endpoints drop constraint webhook_endpoints_organization_id_client_id_fkey;
alter table app.webhook_deliveries drop constraint webhook_deliveries_client_id_endpoint_id_fkey,
                                   drop constraint webhook_deliveries_organization_id_event_id_fkey,
                                   drop constraint webhook_deliveries_replay_of_fkey;
alter table app.webhook_delivery_attempts drop constraint webhook_delivery_attempts_delivery_id_fkey;
alter table app.invoices drop constraint invoices_organization_id_customer_id_fkey,
                         drop constraint invoices_organization_id_pdf_file_id_fkey,
                         drop constraint invoices_organization_id_sync_connection_id_fkey;
alter table app.invoice_lines drop constraint invoice_lines_organization_id_invoice_id_fkey;
alter table app.payments drop constraint payments_organization_id_invoice_id_fkey;
alter table app.file_contents drop constraint file_contents_organization_id_file_id_fkey;

/** 2. Primary keys and unique constraints led by organization_id. */
alter table app.api_clients drop constraint api_clients_pkey, drop constraint api_clients_organization_id_id_unique,
  add constraint api_clients_pkey primary key (organization_id, id);
alter table app.client_secrets drop constraint client_secrets_pkey,
  add constraint client_secrets_pkey primary key (organization_id, id);
drop index app.client_secrets_digest_unique;
drop index app.client_secrets_two_active;
create unique index client_secrets_two_active on app.client_secrets (organization_id, client_id, slot) where revoked_at is null;
alter table app.idempotency_keys drop constraint idempotency_keys_pkey,
  add constraint idempotency_keys_pkey primary key (organization_id, client_id, method, route, key);
alter table app.customers drop constraint customers_pkey, drop constraint customers_organization_id_id_unique,
  add constraint customers_pkey primary key (organization_id, id);
alter table app.projects drop constraint projects_pkey, drop constraint projects_organization_id_id_key,
  add constraint projects_pkey primary key (organization_id, id);
alter table app.task_workflows drop constraint task_workflows_pkey, drop constraint task_workflows_organization_id_id_key,
  add constraint task_workflows_pkey primary key (organization_id, id);
alter table app.task_workflow_statuses drop constraint task_workflow_statuses_pkey,
  add constraint task_workflow_statuses_pkey primary key (organization_id, workflow_id, status);
drop index app.task_workflow_statuses_one_initial;
create unique index task_workflow_statuses_one_initial on app.task_workflow_statuses (organization_id, workflow_id) where is_initial;
alter table app.task_workflow_transitions drop constraint task_workflow_transitions_pkey,
  add constraint task_workflow_transitions_pkey primary key (organization_id, workflow_id, name, from_status);
alter table app.tasks drop constraint tasks_pkey, drop constraint tasks_organization_id_id_key,
  add constraint tasks_pkey primary key (organization_id, id);
drop index app.tasks_code_unique;
create unique index tasks_code_unique on app.tasks (organization_id, project_id, lower(code)) where code is not null;
alter table app.task_dependencies drop constraint task_dependencies_pkey,
  add constraint task_dependencies_pkey primary key (organization_id, task_id, predecessor_task_id);
alter table app.task_notes drop constraint task_notes_pkey,
  add constraint task_notes_pkey primary key (organization_id, id);
alter table app.task_activity drop constraint task_activity_pkey,
  add constraint task_activity_pkey primary key (organization_id, id);
alter table app.time_entries drop constraint time_entries_pkey, drop constraint time_entries_organization_id_id_key,
  add constraint time_entries_pkey primary key (organization_id, id);
drop index app.time_entries_external_id_unique;
create unique index time_entries_external_id_unique on app.time_entries (organization_id, created_by_client_id, external_id)
  where external_id is not null and deleted_at is null;
alter table app.time_entry_audit drop constraint time_entry_audit_pkey,
  add constraint time_entry_audit_pkey primary key (organization_id, id);
alter table app.approvals drop constraint approvals_pkey,
  add constraint approvals_pkey primary key (organization_id, id);
alter table app.events drop constraint events_pkey, drop constraint events_organization_id_id_key,
  add constraint events_pkey primary key (organization_id, id);
alter table app.webhook_endpoints drop constraint webhook_endpoints_pkey, drop constraint webhook_endpoints_client_id_id_key,
  drop constraint webhook_endpoints_organization_id_id_key,
  add constraint webhook_endpoints_pkey primary key (organization_id, id),
  add constraint webhook_endpoints_client_id_key unique (organization_id, client_id, id);
alter table app.webhook_deliveries drop constraint webhook_deliveries_pkey,
  add constraint webhook_deliveries_pkey primary key (organization_id, id);
drop index app.webhook_deliveries_once;
create unique index webhook_deliveries_once on app.webhook_deliveries (organization_id, event_id, endpoint_id) where replay_of is null;
alter table app.webhook_delivery_attempts drop constraint webhook_delivery_attempts_pkey,
  add constraint webhook_delivery_attempts_pkey primary key (organization_id, delivery_id, attempt);
alter table app_private.admin_notifications drop constraint admin_notifications_pkey,
  add constraint admin_notifications_pkey primary key (organization_id, id);
alter table app.invoices drop constraint invoices_pkey, drop constraint invoices_organization_id_id_key,
  add constraint invoices_pkey primary key (organization_id, id);
alter table app.invoice_lines drop constraint invoice_lines_pkey, drop constraint invoice_lines_invoice_id_position_key,
  add constraint invoice_lines_pkey primary key (organization_id, id),
  add constraint invoice_lines_position_key unique (organization_id, invoice_id, position);
alter table app.payments drop constraint payments_pkey,
  add constraint payments_pkey primary key (organization_id, id);
alter table app.integration_connections drop constraint integration_connections_pkey,
  drop constraint integration_connections_organization_id_id_key,
  add constraint integration_connections_pkey primary key (organization_id, id);
alter table app.files drop constraint files_pkey, drop constraint files_organization_id_id_key,
  add constraint files_pkey primary key (organization_id, id);
alter table app.file_contents drop constraint file_contents_pkey,
  add constraint file_contents_pkey primary key (organization_id, file_id);

/** 3. Foreign keys between tenant tables, composite with organization_id (same delete rules). */
alter table app.client_secrets add constraint client_secrets_client_fkey
  foreign key (organization_id, client_id) references app.api_clients (organization_id, id) on delete restrict;
alter table app.idempotency_keys add constraint idempotency_keys_client_fkey
  foreign key (organization_id, client_id) references app.api_clients (organization_id, id) on delete cascade;
alter table app.projects
  add constraint projects_created_by_client_fkey
    foreign key (organization_id, created_by_client_id) references app.api_clients (organization_id, id) on delete restrict,
  add constraint projects_customer_fkey
    foreign key (organization_id, customer_id) references app.customers (organization_id, id) on delete restrict;
alter table app.task_workflow_statuses add constraint task_workflow_statuses_workflow_fkey
  foreign key (organization_id, workflow_id) references app.task_workflows (organization_id, id) on delete cascade;
alter table app.task_workflow_transitions
  add constraint task_workflow_transitions_from_status_fkey foreign key (organization_id, workflow_id, from_status)
    references app.task_workflow_statuses (organization_id, workflow_id, status) on delete cascade,
  add constraint task_workflow_transitions_to_status_fkey foreign key (organization_id, workflow_id, to_status)
    references app.task_workflow_statuses (organization_id, workflow_id, status) on delete cascade;
alter table app.tasks
  add constraint tasks_created_by_client_fkey
    foreign key (organization_id, created_by_client_id) references app.api_clients (organization_id, id) on delete restrict,
  add constraint tasks_project_fkey
    foreign key (organization_id, project_id) references app.projects (organization_id, id) on delete restrict,
  add constraint tasks_workflow_fkey
    foreign key (organization_id, workflow_id) references app.task_workflows (organization_id, id) on delete restrict,
  add constraint tasks_status_fkey foreign key (organization_id, workflow_id, status)
    references app.task_workflow_statuses (organization_id, workflow_id, status) on delete restrict;
alter table app.task_dependencies
  add constraint task_dependencies_task_fkey
    foreign key (organization_id, task_id) references app.tasks (organization_id, id) on delete cascade,
  add constraint task_dependencies_predecessor_fkey
    foreign key (organization_id, predecessor_task_id) references app.tasks (organization_id, id) on delete cascade;
alter table app.task_notes
  add constraint task_notes_author_client_fkey
    foreign key (organization_id, author_client_id) references app.api_clients (organization_id, id) on delete restrict,
  add constraint task_notes_task_fkey
    foreign key (organization_id, task_id) references app.tasks (organization_id, id) on delete cascade;
alter table app.task_activity add constraint task_activity_task_fkey
  foreign key (organization_id, task_id) references app.tasks (organization_id, id) on delete cascade;
alter table app.time_entries
  add constraint time_entries_created_by_client_fkey
    foreign key (organization_id, created_by_client_id) references app.api_clients (organization_id, id) on delete restrict,
  add constraint time_entries_project_fkey
    foreign key (organization_id, project_id) references app.projects (organization_id, id) on delete restrict,
  add constraint time_entries_task_fkey
    foreign key (organization_id, task_id) references app.tasks (organization_id, id) on delete restrict;
alter table app.time_entry_audit add constraint time_entry_audit_time_entry_fkey
  foreign key (organization_id, time_entry_id) references app.time_entries (organization_id, id) on delete restrict;
alter table app.webhook_endpoints add constraint webhook_endpoints_client_fkey
  foreign key (organization_id, client_id) references app.api_clients (organization_id, id) on delete cascade;
alter table app.webhook_deliveries
  add constraint webhook_deliveries_endpoint_fkey foreign key (organization_id, client_id, endpoint_id)
    references app.webhook_endpoints (organization_id, client_id, id) on delete cascade,
  add constraint webhook_deliveries_event_fkey
    foreign key (organization_id, event_id) references app.events (organization_id, id) on delete cascade,
  -- Only replay_of is cleared (PostgreSQL 15's column list): organization_id is not null.
  add constraint webhook_deliveries_replay_of_fkey
    foreign key (organization_id, replay_of) references app.webhook_deliveries (organization_id, id) on delete set null (replay_of);
alter table app.webhook_delivery_attempts add constraint webhook_delivery_attempts_delivery_fkey
  foreign key (organization_id, delivery_id) references app.webhook_deliveries (organization_id, id) on delete cascade;
alter table app.invoices
  add constraint invoices_customer_fkey
    foreign key (organization_id, customer_id) references app.customers (organization_id, id) on delete restrict,
  add constraint invoices_pdf_file_fkey
    foreign key (organization_id, pdf_file_id) references app.files (organization_id, id) on delete restrict,
  add constraint invoices_sync_connection_fkey
    foreign key (organization_id, sync_connection_id) references app.integration_connections (organization_id, id) on delete restrict;
alter table app.invoice_lines add constraint invoice_lines_invoice_fkey
  foreign key (organization_id, invoice_id) references app.invoices (organization_id, id) on delete cascade;
alter table app.payments add constraint payments_invoice_fkey
  foreign key (organization_id, invoice_id) references app.invoices (organization_id, id) on delete restrict;
alter table app.file_contents add constraint file_contents_file_fkey
  foreign key (organization_id, file_id) references app.files (organization_id, id) on delete cascade;

/** 4. Lookups by id alone (worker jobs, the control plane, psql): a plain index, not a constraint. */
create index api_clients_id on app.api_clients (id);
create index client_secrets_id on app.client_secrets (id);
create index client_secrets_client on app.client_secrets (client_id);
create index customers_id on app.customers (id);
create index projects_id on app.projects (id);
create index task_workflows_id on app.task_workflows (id);
create index tasks_id on app.tasks (id);
create index time_entries_id on app.time_entries (id);
create index approvals_id on app.approvals (id);
create index events_id on app.events (id);
create index webhook_endpoints_id on app.webhook_endpoints (id);
create index webhook_deliveries_id on app.webhook_deliveries (id);
create index invoices_id on app.invoices (id);
create index integration_connections_id on app.integration_connections (id);
create index files_id on app.files (id);

/** 5. Upserts name the new unique keys. */
create or replace function api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text)
returns table (state text, response_status integer, response_headers jsonb, response_body text)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  k record;
begin
  if app.current_client_id() is null then
    perform app_private.raise('SV500', 'CONTEXT_MISSING', 'no request context');
  end if;
  if not pg_try_advisory_xact_lock(hashtextextended(
       concat_ws(chr(31), app.current_client_id(), p_method, p_route, p_key), 0)) then
    state := 'in_flight';
    return next;
    return;
  end if;
  select * into k from app.idempotency_keys i
   where i.organization_id = app.current_organization_id() and i.client_id = app.current_client_id()
     and i.method = p_method and i.route = p_route and i.key = p_key;
  if found and k.expires_at > now() then
    if k.fingerprint <> p_fingerprint then
      state := 'mismatch';
    else
      state := 'replay';
      response_status := k.response_status;
      response_headers := k.response_headers;
      response_body := k.response_body;
    end if;
    return next;
    return;
  end if;
  insert into app.idempotency_keys as i (organization_id, client_id, method, route, key, fingerprint)
  values (app.current_organization_id(), app.current_client_id(), p_method, p_route, p_key, p_fingerprint)
  on conflict (organization_id, client_id, method, route, key) do update
    set fingerprint = excluded.fingerprint, response_status = null, response_headers = null,
        response_body = null, created_at = now(), expires_at = now() + interval '24 hours';
  state := 'claimed';
  return next;
end
$$;

create or replace function api.idempotency_complete(p_method text, p_route text, p_key text,
                                                    p_status integer, p_headers jsonb, p_body text)
returns void
language sql volatile
set search_path = pg_catalog
as $$
  update app.idempotency_keys
     set response_status = p_status, response_headers = p_headers, response_body = p_body
   where organization_id = app.current_organization_id() and client_id = app.current_client_id()
     and method = p_method and route = p_route and key = p_key
$$;

create or replace function app_private.webhook_fanout(p_event text, p_lease_seconds integer)
returns table (delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text,
               organization_id text, type text, resource_type text, resource_id text, resource_version integer,
               created_at timestamptz)
language plpgsql volatile
set search_path = pg_catalog
as $$
#variable_conflict use_column
declare
  e app.events;
  w record;
  v_client text;
  v_allowed boolean;
begin
  select * into e from app.events x where x.id = p_event and x.fanout_pending for update skip locked;
  if not found then
    return;
  end if;
  for w in select ep.id, ep.client_id, ep.url, ep.secret_sealed,
                  case when ep.previous_secret_expires_at > now() then ep.previous_secret_sealed end as previous_secret_sealed
             from app.webhook_endpoints ep
            where ep.organization_id = e.organization_id and ep.status = 'enabled' and e.type = any (ep.events)
              and (e.target_endpoint_id is null or ep.id = e.target_endpoint_id)
            order by ep.client_id, ep.id loop
    if v_client is distinct from w.client_id then
      v_client := w.client_id;
      v_allowed := app_private.client_may_read(w.client_id, e.type, e.resource_type, e.resource_id);
    end if;
    continue when not v_allowed;
    delivery_id := null;
    insert into app.webhook_deliveries as d (organization_id, client_id, endpoint_id, event_id, attempt_count, lease_until)
    values (e.organization_id, w.client_id, w.id, e.id, 1, now() + make_interval(secs => p_lease_seconds))
    on conflict (organization_id, event_id, endpoint_id) where replay_of is null do nothing
    returning d.id into delivery_id;
    continue when delivery_id is null;
    attempt := 1;
    url := w.url;
    secret_sealed := w.secret_sealed;
    previous_secret_sealed := w.previous_secret_sealed;
    event_id := e.id;
    organization_id := e.organization_id;
    type := e.type;
    resource_type := e.resource_type;
    resource_id := e.resource_id;
    resource_version := e.resource_version;
    created_at := e.created_at;
    return next;
  end loop;
  update app.events x set fanout_pending = false where x.organization_id = e.organization_id and x.id = e.id;
end
$$;

-- migrate:down
-- The old keys, for a rollback in development (ids are unique by construction, so PK (id) holds).
create or replace function app_private.webhook_fanout(p_event text, p_lease_seconds integer)
returns table (delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text,
               organization_id text, type text, resource_type text, resource_id text, resource_version integer,
               created_at timestamptz)
language plpgsql volatile
set search_path = pg_catalog
as $$
#variable_conflict use_column
declare
  e app.events;
  w record;
  v_client text;
  v_allowed boolean;
begin
  select * into e from app.events x where x.id = p_event and x.fanout_pending for update skip locked;
  if not found then
    return;
  end if;
  for w in select ep.id, ep.client_id, ep.url, ep.secret_sealed,
                  case when ep.previous_secret_expires_at > now() then ep.previous_secret_sealed end as previous_secret_sealed
             from app.webhook_endpoints ep
            where ep.organization_id = e.organization_id and ep.status = 'enabled' and e.type = any (ep.events)
              and (e.target_endpoint_id is null or ep.id = e.target_endpoint_id)
            order by ep.client_id, ep.id loop
    if v_client is distinct from w.client_id then
      v_client := w.client_id;
      v_allowed := app_private.client_may_read(w.client_id, e.type, e.resource_type, e.resource_id);
    end if;
    continue when not v_allowed;
    delivery_id := null;
    insert into app.webhook_deliveries as d (organization_id, client_id, endpoint_id, event_id, attempt_count, lease_until)
    values (e.organization_id, w.client_id, w.id, e.id, 1, now() + make_interval(secs => p_lease_seconds))
    on conflict (event_id, endpoint_id) where replay_of is null do nothing
    returning d.id into delivery_id;
    continue when delivery_id is null;
    attempt := 1;
    url := w.url;
    secret_sealed := w.secret_sealed;
    previous_secret_sealed := w.previous_secret_sealed;
    event_id := e.id;
    organization_id := e.organization_id;
    type := e.type;
    resource_type := e.resource_type;
    resource_id := e.resource_id;
    resource_version := e.resource_version;
    created_at := e.created_at;
    return next;
  end loop;
  update app.events x set fanout_pending = false where x.id = e.id;
end
$$;

create or replace function api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text)
returns table (state text, response_status integer, response_headers jsonb, response_body text)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  k record;
begin
  if app.current_client_id() is null then
    perform app_private.raise('SV500', 'CONTEXT_MISSING', 'no request context');
  end if;
  if not pg_try_advisory_xact_lock(hashtextextended(
       concat_ws(chr(31), app.current_client_id(), p_method, p_route, p_key), 0)) then
    state := 'in_flight';
    return next;
    return;
  end if;
  select * into k from app.idempotency_keys i
   where i.client_id = app.current_client_id() and i.method = p_method and i.route = p_route and i.key = p_key;
  if found and k.expires_at > now() then
    if k.fingerprint <> p_fingerprint then
      state := 'mismatch';
    else
      state := 'replay';
      response_status := k.response_status;
      response_headers := k.response_headers;
      response_body := k.response_body;
    end if;
    return next;
    return;
  end if;
  insert into app.idempotency_keys as i (organization_id, client_id, method, route, key, fingerprint)
  values (app.current_organization_id(), app.current_client_id(), p_method, p_route, p_key, p_fingerprint)
  on conflict (client_id, method, route, key) do update
    set fingerprint = excluded.fingerprint, response_status = null, response_headers = null,
        response_body = null, created_at = now(), expires_at = now() + interval '24 hours';
  state := 'claimed';
  return next;
end
$$;

drop index app.api_clients_id, app.client_secrets_id, app.client_secrets_client, app.customers_id, app.projects_id,
  app.task_workflows_id, app.tasks_id, app.time_entries_id, app.approvals_id, app.events_id, app.webhook_endpoints_id,
  app.webhook_deliveries_id, app.invoices_id, app.integration_connections_id, app.files_id;

alter table app.client_secrets drop constraint client_secrets_client_fkey;
alter table app.idempotency_keys drop constraint idempotency_keys_client_fkey;
alter table app.projects drop constraint projects_created_by_client_fkey, drop constraint projects_customer_fkey;
alter table app.task_workflow_statuses drop constraint task_workflow_statuses_workflow_fkey;
alter table app.task_workflow_transitions drop constraint task_workflow_transitions_from_status_fkey,
                                          drop constraint task_workflow_transitions_to_status_fkey;
alter table app.tasks drop constraint tasks_created_by_client_fkey, drop constraint tasks_project_fkey,
                      drop constraint tasks_workflow_fkey, drop constraint tasks_status_fkey;
alter table app.task_dependencies drop constraint task_dependencies_task_fkey, drop constraint task_dependencies_predecessor_fkey;
alter table app.task_notes drop constraint task_notes_author_client_fkey, drop constraint task_notes_task_fkey;
alter table app.task_activity drop constraint task_activity_task_fkey;
alter table app.time_entries drop constraint time_entries_created_by_client_fkey, drop constraint time_entries_project_fkey,
                             drop constraint time_entries_task_fkey;
alter table app.time_entry_audit drop constraint time_entry_audit_time_entry_fkey;
alter table app.webhook_endpoints drop constraint webhook_endpoints_client_fkey;
alter table app.webhook_deliveries drop constraint webhook_deliveries_endpoint_fkey, drop constraint webhook_deliveries_event_fkey,
                                   drop constraint webhook_deliveries_replay_of_fkey;
alter table app.webhook_delivery_attempts drop constraint webhook_delivery_attempts_delivery_fkey;
alter table app.invoices drop constraint invoices_customer_fkey, drop constraint invoices_pdf_file_fkey,
                         drop constraint invoices_sync_connection_fkey;
alter table app.invoice_lines drop constraint invoice_lines_invoice_fkey;
alter table app.payments drop constraint payments_invoice_fkey;
alter table app.file_contents drop constraint file_contents_file_fkey;

alter table app.api_clients drop constraint api_clients_pkey, add primary key (id),
  add constraint api_clients_organization_id_id_unique unique (organization_id, id);
alter table app.client_secrets drop constraint client_secrets_pkey, add primary key (id);
drop index app.client_secrets_two_active;
create unique index client_secrets_two_active on app.client_secrets (client_id, slot) where revoked_at is null;
create unique index client_secrets_digest_unique on app.client_secrets (secret_sha256);
alter table app.idempotency_keys drop constraint idempotency_keys_pkey, add primary key (client_id, method, route, key);
alter table app.customers drop constraint customers_pkey, add primary key (id),
  add constraint customers_organization_id_id_unique unique (organization_id, id);
alter table app.projects drop constraint projects_pkey, add primary key (id), add unique (organization_id, id);
alter table app.task_workflows drop constraint task_workflows_pkey, add primary key (id), add unique (organization_id, id);
alter table app.task_workflow_statuses drop constraint task_workflow_statuses_pkey, add primary key (workflow_id, status);
drop index app.task_workflow_statuses_one_initial;
create unique index task_workflow_statuses_one_initial on app.task_workflow_statuses (workflow_id) where is_initial;
alter table app.task_workflow_transitions drop constraint task_workflow_transitions_pkey, add primary key (workflow_id, name, from_status);
alter table app.tasks drop constraint tasks_pkey, add primary key (id), add unique (organization_id, id);
drop index app.tasks_code_unique;
create unique index tasks_code_unique on app.tasks (project_id, lower(code)) where code is not null;
alter table app.task_dependencies drop constraint task_dependencies_pkey, add primary key (task_id, predecessor_task_id);
alter table app.task_notes drop constraint task_notes_pkey, add primary key (id);
alter table app.task_activity drop constraint task_activity_pkey, add primary key (id);
alter table app.time_entries drop constraint time_entries_pkey, add primary key (id), add unique (organization_id, id);
drop index app.time_entries_external_id_unique;
create unique index time_entries_external_id_unique on app.time_entries (created_by_client_id, external_id)
  where external_id is not null and deleted_at is null;
alter table app.time_entry_audit drop constraint time_entry_audit_pkey, add primary key (id);
alter table app.approvals drop constraint approvals_pkey, add primary key (id);
alter table app.events drop constraint events_pkey, add primary key (id), add unique (organization_id, id);
alter table app.webhook_endpoints drop constraint webhook_endpoints_pkey, drop constraint webhook_endpoints_client_id_key,
  add primary key (id), add unique (client_id, id), add unique (organization_id, id);
alter table app.webhook_deliveries drop constraint webhook_deliveries_pkey, add primary key (id);
drop index app.webhook_deliveries_once;
create unique index webhook_deliveries_once on app.webhook_deliveries (event_id, endpoint_id) where replay_of is null;
alter table app.webhook_delivery_attempts drop constraint webhook_delivery_attempts_pkey, add primary key (delivery_id, attempt);
alter table app_private.admin_notifications drop constraint admin_notifications_pkey, add primary key (id);
alter table app.invoices drop constraint invoices_pkey, add primary key (id), add unique (organization_id, id);
alter table app.invoice_lines drop constraint invoice_lines_pkey, drop constraint invoice_lines_position_key,
  add primary key (id), add unique (invoice_id, position);
alter table app.payments drop constraint payments_pkey, add primary key (id);
alter table app.integration_connections drop constraint integration_connections_pkey, add primary key (id),
  add unique (organization_id, id);
alter table app.files drop constraint files_pkey, add primary key (id), add unique (organization_id, id);
alter table app.file_contents drop constraint file_contents_pkey, add primary key (file_id);

alter table app.client_secrets add foreign key (client_id) references app.api_clients (id) on delete restrict;
alter table app.idempotency_keys add foreign key (client_id) references app.api_clients (id) on delete cascade;
alter table app.projects add foreign key (created_by_client_id) references app.api_clients (id) on delete restrict,
  add foreign key (customer_id) references app.customers (id) on delete restrict;
alter table app.task_workflow_statuses add foreign key (organization_id, workflow_id)
  references app.task_workflows (organization_id, id) on delete cascade;
alter table app.task_workflow_transitions
  add foreign key (workflow_id, from_status) references app.task_workflow_statuses (workflow_id, status) on delete cascade,
  add foreign key (workflow_id, to_status) references app.task_workflow_statuses (workflow_id, status) on delete cascade;
alter table app.tasks add foreign key (created_by_client_id) references app.api_clients (id) on delete restrict,
  add foreign key (organization_id, project_id) references app.projects (organization_id, id) on delete restrict,
  add foreign key (organization_id, workflow_id) references app.task_workflows (organization_id, id) on delete restrict,
  add foreign key (project_id) references app.projects (id) on delete restrict,
  add foreign key (workflow_id, status) references app.task_workflow_statuses (workflow_id, status) on delete restrict;
alter table app.task_dependencies
  add foreign key (organization_id, predecessor_task_id) references app.tasks (organization_id, id) on delete cascade,
  add foreign key (organization_id, task_id) references app.tasks (organization_id, id) on delete cascade;
alter table app.task_notes add foreign key (author_client_id) references app.api_clients (id) on delete restrict,
  add foreign key (organization_id, task_id) references app.tasks (organization_id, id) on delete cascade;
alter table app.task_activity add foreign key (organization_id, task_id) references app.tasks (organization_id, id) on delete cascade;
alter table app.time_entries add foreign key (created_by_client_id) references app.api_clients (id) on delete restrict,
  add foreign key (organization_id, project_id) references app.projects (organization_id, id) on delete restrict,
  add foreign key (organization_id, task_id) references app.tasks (organization_id, id) on delete restrict,
  add foreign key (project_id) references app.projects (id) on delete restrict,
  add foreign key (task_id) references app.tasks (id) on delete restrict;
alter table app.time_entry_audit add foreign key (organization_id, time_entry_id)
  references app.time_entries (organization_id, id) on delete restrict;
alter table app.webhook_endpoints add foreign key (organization_id, client_id)
  references app.api_clients (organization_id, id) on delete cascade;
alter table app.webhook_deliveries
  add foreign key (client_id, endpoint_id) references app.webhook_endpoints (client_id, id) on delete cascade,
  add foreign key (organization_id, event_id) references app.events (organization_id, id) on delete cascade,
  add foreign key (replay_of) references app.webhook_deliveries (id) on delete set null;
alter table app.webhook_delivery_attempts add foreign key (delivery_id) references app.webhook_deliveries (id) on delete cascade;
alter table app.invoices
  add foreign key (organization_id, customer_id) references app.customers (organization_id, id) on delete restrict,
  add foreign key (organization_id, pdf_file_id) references app.files (organization_id, id) on delete restrict,
  add foreign key (organization_id, sync_connection_id) references app.integration_connections (organization_id, id) on delete restrict;
alter table app.invoice_lines add foreign key (organization_id, invoice_id) references app.invoices (organization_id, id) on delete cascade;
alter table app.payments add foreign key (organization_id, invoice_id) references app.invoices (organization_id, id) on delete restrict;
alter table app.file_contents add foreign key (organization_id, file_id) references app.files (organization_id, id) on delete cascade;
