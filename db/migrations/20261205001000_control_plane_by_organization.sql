-- migrate:up

/** Issue 37: the control plane's commands (svc-admin) in forms a Citus coordinator runs.
 *
 * svc-admin calls these on the coordinator as the migrations' owner. Citus refuses, across
 * shards, a row lock (`for update`), a function that is not immutable inside CASE, and any
 * function call in ON CONFLICT DO UPDATE. Each command now first finds the organization of what
 * it was given (a client's in app_private.client_directory, which the coordinator holds; another
 * resource's by one read across shards), then names it in every statement, which Citus routes to
 * that organization's shard; the times it writes are computed first, as values. On one server the
 * same statements read the same rows. */

create or replace function control.client_set_roles(p_client text, p_roles text[])
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v_org text := (select d.organization_id from app_private.client_directory d where d.client_id = p_client);
begin
  update app.api_clients set svc_roles = p_roles where organization_id = v_org and id = p_client and status <> 'deleted';
  perform app_private.require_found(found, 'CLIENT_NOT_FOUND', p_client);
end
$function$;

create or replace function control.client_rotate_secret(p_client text)
 RETURNS TABLE(client_secret text, secret_id text)
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v_org text := (select d.organization_id from app_private.client_directory d where d.client_id = p_client);
  c record;
  v_slot smallint;
begin
  select id, organization_id into c from app.api_clients where organization_id = v_org and id = p_client and status <> 'deleted' for update;
  perform app_private.require_found(found, 'CLIENT_NOT_FOUND', p_client);
  select s into v_slot from unnest(array[1, 2]::smallint[]) s
   where not exists (select from app.client_secrets cs where cs.organization_id = v_org and cs.client_id = p_client and cs.slot = s and cs.revoked_at is null)
   order by s limit 1;
  if v_slot is null then
    perform app_private.raise('SVC10', 'TOO_MANY_ACTIVE_SECRETS',
      'a client has at most two active secrets: revoke one before rotating');
  end if;
  client_secret := app_private.random_secret('svcsk_');
  insert into app.client_secrets (organization_id, client_id, slot, secret_sha256)
  values (c.organization_id, p_client, v_slot, sha256(convert_to(client_secret, 'UTF8')))
  returning id into secret_id;
  return next;
end
$function$;

create or replace function control.client_revoke_secret(p_client text, p_secret_id text)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v_org text := (select d.organization_id from app_private.client_directory d where d.client_id = p_client);
begin
  update app.client_secrets set revoked_at = now()
   where organization_id = v_org and id = p_secret_id and client_id = p_client and revoked_at is null;
  perform app_private.require_found(found, 'SECRET_NOT_FOUND', p_secret_id);
end
$function$;

create or replace function control.client_set_status(p_client text, p_from text[], p_to text)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v_org text := (select d.organization_id from app_private.client_directory d where d.client_id = p_client);
  v_now timestamptz := now();
begin
  update app.api_clients
     set status = p_to, deleted_at = case when p_to = 'deleted' then v_now end
   where organization_id = v_org and id = p_client and status = any (p_from);
  if not found then
    perform app_private.require_found(exists (select from app.api_clients where organization_id = v_org and id = p_client and status <> 'deleted'),
                                      'CLIENT_NOT_FOUND', p_client);
    perform app_private.raise('SVC11', 'CLIENT_STATE_CONFLICT', format('the client cannot become %s from its current state', p_to));
  end if;
end
$function$;

create or replace function control.client_release_license(p_client text)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v_org text := (select d.organization_id from app_private.client_directory d where d.client_id = p_client);
begin
  update app.api_clients set license_status = 'released' where organization_id = v_org and id = p_client and status <> 'deleted';
  perform app_private.require_found(found, 'CLIENT_NOT_FOUND', p_client);
end
$function$;

create or replace function control.approval_decide(p_approval text, p_decision text, p_by text)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
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
$function$;

create or replace function control.invoice_sync_retry(p_invoice text)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v_org text := (select x.organization_id from app.invoices x where x.id = p_invoice);
  i app.invoices;
  c app.integration_connections;
begin
  select * into i from app.invoices where organization_id = v_org and id = p_invoice for update;
  if i.sync_status = 'failed' then
    update app.invoices set sync_status = 'pending', sync_error = null, sync_failure_definitive = null where organization_id = i.organization_id and id = p_invoice;
    return;
  end if;
  -- Issued while no accounting connection was ready: export it now that one is.
  if i.sync_status is null and i.status in ('sent', 'paid') then
    c := app_private.accounting_connection(i.organization_id);
    if app_private.accounting_ready(c) then
      update app.invoices set sync_connection_id = c.id, sync_status = 'pending' where organization_id = i.organization_id and id = p_invoice;
      return;
    end if;
  end if;
  perform app_private.raise('SVC18', 'INVOICE_SYNC_NOT_FAILED',
    format('%s has no failed accounting sync (and is not an issued invoice waiting for a ready accounting connection)', p_invoice));
end
$function$;

create or replace function control.integration_update(p_id text, p_status text DEFAULT NULL::text, p_capabilities text[] DEFAULT NULL::text[], p_action_required text DEFAULT NULL::text, p_clear_action_required boolean DEFAULT false)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v_org text := (select x.organization_id from app.integration_connections x where x.id = p_id);
  v_now timestamptz := now();
begin
  update app.integration_connections
     set status = coalesce(p_status, status),
         capabilities = coalesce(p_capabilities, capabilities),
         action_required = case when p_clear_action_required then null else coalesce(p_action_required, action_required) end,
         last_success_at = case when coalesce(p_status, status) = 'connected' then v_now else last_success_at end
   where organization_id = v_org and id = p_id;
  perform app_private.require_found(found, 'INTEGRATION_CONNECTION_NOT_FOUND', p_id);
end
$function$;

create or replace function control.file_set_legal_hold(p_file_id text, p_hold boolean)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v_org text := (select x.organization_id from app.files x where x.id = p_file_id);
begin
  update app.files f set legal_hold = p_hold where f.organization_id = v_org and f.id = p_file_id;
  perform app_private.require_found(found, 'FILE_NOT_FOUND', p_file_id);
end
$function$;

create or replace function control.client_delete(p_client text)
 returns void
 language plpgsql
 set search_path to 'pg_catalog'
as $function$
declare
  v_org text := (select d.organization_id from app_private.client_directory d where d.client_id = p_client);
  v_now timestamptz := now();
begin
  perform control.client_set_status(p_client, '{active,disabled}', 'deleted');
  update app.api_clients set license_status = 'released' where organization_id = v_org and id = p_client;
  update app.client_secrets set revoked_at = v_now where organization_id = v_org and client_id = p_client and revoked_at is null;
end
$function$;


create or replace function control.field_define(p_org text, p_object_type text, p_api_name text, p_label text, p_field_type text, p_required boolean DEFAULT false, p_options jsonb DEFAULT '[]'::jsonb, p_readable_roles text[] DEFAULT '{member,manager,finance,hr}'::text[], p_writable_roles text[] DEFAULT '{manager}'::text[], p_filterable boolean DEFAULT false, p_sortable boolean DEFAULT false, p_position integer DEFAULT 0)
 RETURNS integer
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
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
$function$;

create or replace function control.agent_set_published(p_org text, p_agent text, p_published boolean)
 RETURNS text
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v_now timestamptz := now();  -- Citus takes no function call in ON CONFLICT DO UPDATE
begin
  if not exists (select from app.organizations o where o.id = p_org) then
    perform app_private.raise('SVN01', 'ORGANIZATION_NOT_FOUND', format('no organization %s', p_org));
  end if;
  if not exists (select from app_private.agent_definitions d where d.id = p_agent) then
    perform app_private.raise('SVN01', 'AGENT_NOT_FOUND', format('no agent %s in the catalogue', p_agent));
  end if;
  insert into app.agent_publications (organization_id, agent_id, status)
  values (p_org, p_agent, case when p_published then 'published' else 'unpublished' end)
  on conflict (organization_id, agent_id) do update set status = excluded.status, changed_at = v_now;
  return case when p_published then 'published' else 'unpublished' end;
end
$function$;

-- migrate:down
