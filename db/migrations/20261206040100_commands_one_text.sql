-- migrate:up

/** One text for the commands that read an api view, on one server and on a Citus cluster.
 *
 * On a worker, a statement over the api views' distributed tables cannot be planned (Citus joins
 * only colocated tables on their distribution columns, and a view's correlated subqueries are
 * neither); each api view has a function of its name that returns its rows for the request's
 * organization, or its row p_id (on a cluster the view's query on that organization's own shards,
 * app_private.view_on_shards). The baseline gave the cluster copies of 46 commands that read the
 * functions where one server's read the views. Now the 43 below read the function with the row's id
 * on both targets, and the functions read the view on one server with a plan PostgreSQL keeps for
 * the session (in place of a statement planned at every call). Three skills that read a view across
 * the organization (billable time of a project, tasks that need attention, days without time) keep
 * their cluster copies until the cluster reads views without copying them. */
set local lock_timeout = '3s';
set local statement_timeout = '120s';
select set_config('citus.multi_shard_modify_mode', 'sequential', true) where exists (select from pg_extension where extname = 'citus');

create or replace function api.agents(p_id text default null) returns setof api.agents
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $function$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.agents v;
    else
      return query select * from api.agents v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.agents', v_organization_id) || ') v where true and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$function$;

create or replace function api.approvals(p_id text default null) returns setof api.approvals
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $function$
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
$function$;

create or replace function api.conversation_messages(p_id text default null) returns setof api.conversation_messages
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $function$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.conversation_messages v;
    else
      return query select * from api.conversation_messages v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.conversation_messages', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$function$;

create or replace function api.conversations(p_id text default null) returns setof api.conversations
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $function$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.conversations v;
    else
      return query select * from api.conversations v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.conversations', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$function$;

create or replace function api.files(p_id text default null) returns setof api.files
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $function$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.files v;
    else
      return query select * from api.files v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.files', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$function$;

create or replace function api.integration_connections(p_id text default null) returns setof api.integration_connections
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $function$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.integration_connections v;
    else
      return query select * from api.integration_connections v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.integration_connections', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$function$;

create or replace function api.invoices(p_id text default null) returns setof api.invoices
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $function$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.invoices v;
    else
      return query select * from api.invoices v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.invoices', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$function$;

create or replace function api.members(p_id text default null) returns setof api.members
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $function$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.members v;
    else
      return query select * from api.members v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.members', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$function$;

create or replace function api.organization(p_id text default null) returns setof api.organization
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $function$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.organization v;
    else
      return query select * from api.organization v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.organization', v_organization_id) || ') v where id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$function$;

create or replace function api.projects(p_id text default null) returns setof api.projects
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $function$
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
$function$;

create or replace function api.report_results(p_id text default null) returns setof api.report_results
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $function$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.report_results v;
    else
      return query select * from api.report_results v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.report_results', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$function$;

create or replace function api.report_runs(p_id text default null) returns setof api.report_runs
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $function$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.report_runs v;
    else
      return query select * from api.report_runs v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.report_runs', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$function$;

create or replace function api.reports(p_id text default null) returns setof api.reports
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $function$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.reports v;
    else
      return query select * from api.reports v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.reports', v_organization_id) || ') v where true and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$function$;

create or replace function api.runs(p_id text default null) returns setof api.runs
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $function$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.runs v;
    else
      return query select * from api.runs v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.runs', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$function$;

create or replace function api.tasks(p_id text default null) returns setof api.tasks
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $function$
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
$function$;

create or replace function api.ticket_messages(p_id text default null) returns setof api.ticket_messages
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $function$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.ticket_messages v;
    else
      return query select * from api.ticket_messages v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.ticket_messages', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$function$;

create or replace function api.tickets(p_id text default null) returns setof api.tickets
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $function$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.tickets v;
    else
      return query select * from api.tickets v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.tickets', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$function$;

create or replace function api.time_entries(p_id text default null) returns setof api.time_entries
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $function$
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
$function$;

create or replace function api.webhook_deliveries(p_id text default null) returns setof api.webhook_deliveries
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $function$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.webhook_deliveries v;
    else
      return query select * from api.webhook_deliveries v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.webhook_deliveries', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$function$;

create or replace function api.webhook_endpoints(p_id text default null) returns setof api.webhook_endpoints
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $function$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.webhook_endpoints v;
    else
      return query select * from api.webhook_endpoints v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.webhook_endpoints', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$function$;

create or replace function app_private.accounting_sync_load(p_organization_id text, p_invoice text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_doc jsonb;
  v_out jsonb;
begin
  -- The invoice as finance reads it through the API.
  perform app_private.set_context(p_organization_id, null, '{finance}');
  select v.doc into v_doc from api.invoices(p_invoice) v where v.id = p_invoice;
  perform app_private.set_context(null, null, null);
  if v_doc is null then
    return null;
  end if;
  select jsonb_build_object('invoice', v_doc, 'provider', c.provider, 'connection_id', c.id, 'connection_status', c.status,
                            'sync_status', i.sync_status, 'external_reference', i.sync_external_reference,
                            'customer', jsonb_build_object('id', cu.id, 'name', cu.name, 'email', cu.delivery_email))
    into v_out
    from app.invoices i
    join app.integration_connections c on c.organization_id = i.organization_id and c.id = i.sync_connection_id
    join app.customers cu on cu.organization_id = i.organization_id and cu.id = i.customer_id
   where i.organization_id = p_organization_id and i.id = p_invoice;
  return v_out;
end
$$;

create or replace function api.agent_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  d app_private.agent_definitions := app_private.agent_lookup(p_id);
begin
  if not 'api_client' = any (d.accepted_principal_types) then
    perform app_private.raise('SVR04', 'API_PRINCIPAL_NOT_SUPPORTED',
      format('%s accepts %s, not API Clients', p_id, array_to_string(d.accepted_principal_types, ', ')));
  end if;
  if not d.required_roles <@ app.current_roles() then
    perform app_private.raise('SVR03', 'ROLE_REQUIRED', format('%s needs the Roles %s', p_id, array_to_string(d.required_roles, ', ')));
  end if;
  return query select v.doc, v.version from api.agents(p_id) v where v.id = p_id;
end
$$;

create or replace function api.agent_run_create(p_id text, p_input jsonb, p_subject jsonb, p_metadata jsonb, p_model_available boolean) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  d app_private.agent_definitions;
  v_subject text := p_subject ->> 'member_id';
  v_blockers jsonb;
  v_first jsonb;
  v_id text;
begin
  select * into d from app_private.agent_definitions x where x.id = p_id;
  v_blockers := api.agent_blockers(p_id, v_subject, p_model_available);
  v_first := v_blockers -> 0;
  if v_first is not null then
    perform app_private.raise(case v_first ->> 'code' when 'SUBJECT_NOT_SUPPORTED' then 'SVV22' when 'LICENSE_LEVEL_REQUIRED' then 'SVR04'
                                                      when 'ROLE_REQUIRED' then 'SVR03' else 'SVC09' end,
                              v_first ->> 'code', v_first ->> 'message', case when v_first ->> 'code' = 'SUBJECT_NOT_SUPPORTED' then '/subject' end);
  end if;
  perform app_private.check_subject(v_subject);
  insert into app.runs (organization_id, kind, agent_id, agent_version, client_id, subject, input, metadata)
  values (v__organization_id, 'agent', d.id, d.version, app.current_client_id(), p_subject, p_input, coalesce(p_metadata, '{}'))
  returning id into v_id;
  perform app_private.queue_agent_run(v_id);
  return (select v.doc from api.runs(v_id) v where v.id = v_id);
end
$$;

create or replace function api.conversation_create(p_title text, p_subject jsonb, p_metadata jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  v_id text;
begin
  insert into app.conversations (organization_id, client_id, title, subject_member_id, metadata)
  values (v__organization_id, app.current_client_id(), nullif(p_title, ''), app_private.conversation_subject(p_subject),
          coalesce(p_metadata, '{}'))
  returning id into v_id;
  return (select v.doc from api.conversations(v_id) v where v.id = v_id);
end
$$;

create or replace function api.conversation_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if not exists (select from api.conversations(p_id) v where v.id = p_id) then
    perform app_private.raise('SVN04', 'CONVERSATION_NOT_FOUND', format('no conversation %s of your client', p_id));
  end if;
  return query select v.doc, v.version from api.conversations(p_id) v where v.id = p_id;
end
$$;

create or replace function api.conversation_message_create(p_id text, p_content jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  c app.conversations;
  v_msg text;
  v_run text;
  v_bad integer;
begin
  select * into c from app.conversations x where x.organization_id = v__organization_id and x.id = p_id for update;
  if not found then
    perform app_private.raise('SVN04', 'CONVERSATION_NOT_FOUND', format('no conversation %s of your client', p_id));
  end if;
  if c.status = 'archived' then
    perform app_private.raise('SVC09', 'CONVERSATION_ARCHIVED', 'the conversation is archived; start a new one');
  end if;
  if length(p_content::text) > app_private.message_budget() then
    perform app_private.raise('SVV22', 'CONTEXT_LIMIT_EXCEEDED',
      format('one message holds at most %s characters of content (this one: %s); send it in parts or as a file reference',
             app_private.message_budget(), length(p_content::text)), '/content');
  end if;
  select min(b.i) - 1 into v_bad from jsonb_array_elements(p_content) with ordinality b (block, i)
   where b.block ->> 'type' = 'file_reference' and not exists (select from api.files(b.block ->> 'file_id') f where f.id = b.block ->> 'file_id' and f.status = 'ready');
  if v_bad is not null then
    perform app_private.raise('SVV22', 'MESSAGE_CONTENT_INVALID',
      'file_id must name a ready file you may read', format('/content/%s/file_id', v_bad));
  end if;
  insert into app.conversation_messages (organization_id, conversation_id, seq, role, content)
  values (c.organization_id, c.id, c.message_count + 1, 'user', p_content)
  returning id into v_msg;
  perform app_private.conversation_compact(c.organization_id, c.id);
  insert into app.runs (organization_id, kind, agent_id, conversation_id, client_id, subject, input)
  values (c.organization_id, 'agent', null, c.id, c.client_id,
          case when c.subject_member_id is null then null else jsonb_build_object('member_id', c.subject_member_id) end,
          jsonb_build_object('message_id', v_msg))
  returning id into v_run;
  perform app_private.queue_agent_run(v_run);
  return jsonb_build_object('object', 'conversation_message_accepted',
    'message', (select v.doc from api.conversation_messages(v_msg) v where v.id = v_msg),
    'run', (select v.doc from api.runs(v_run) v where v.id = v_run));
end
$$;

create or replace function app_private.conversation_subject(p_subject jsonb) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_keys text[];
  v_ids text[];
begin
  if p_subject is null or p_subject = 'null'::jsonb then
    return null;
  end if;
  select array_agg(k order by k) into v_keys from jsonb_object_keys(p_subject) k;
  if coalesce(p_subject ->> 'type', 'member') <> 'member' or not (v_keys <@ '{display_name,member_id,type}' and cardinality(array_remove(v_keys, 'type')) = 1) then
    perform app_private.raise('SVV22', 'SUBJECT_NOT_SUPPORTED',
      'a conversation''s subject is one member: {"member_id": "<email>"} or {"display_name": "<name>"}', '/subject');
  end if;
  if p_subject ? 'member_id' then
    select array_agg(m.id) into v_ids from api.members(lower(trim(p_subject ->> 'member_id'))) m where m.id = lower(trim(p_subject ->> 'member_id')) and m.status = 'active';
  else
    select array_agg(m.id order by m.id) into v_ids from api.members() m
     where lower(m.display_name) = lower(trim(p_subject ->> 'display_name')) and m.status = 'active';
  end if;
  if v_ids is null then
    perform app_private.raise('SVV22', 'SUBJECT_NOT_FOUND', 'no active member of your organization matches the subject', '/subject');
  end if;
  if cardinality(v_ids) > 1 then
    perform app_private.raise('SVV22', 'SUBJECT_AMBIGUOUS',
      format('%s active members have that display name; name the member by member_id', cardinality(v_ids)), '/subject');
  end if;
  return v_ids[1];
end
$$;

create or replace function app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  case p_resource_type
    when 'project' then return exists (select from api.projects(p_resource_id) v where v.id = p_resource_id);
    when 'task' then return exists (select from api.tasks(p_resource_id) v where v.id = p_resource_id);
    when 'time_entry' then
      if p_type = 'time_entry.deleted' then
        return app_private.may_read_time_entries();
      end if;
      return exists (select from api.time_entries(p_resource_id) v where v.id = p_resource_id and v.deleted_at is null);
    when 'approval' then return exists (select from api.approvals(p_resource_id) v where v.id = p_resource_id);
    when 'webhook_endpoint' then return exists (select from api.webhook_endpoints(p_resource_id) v where v.id = p_resource_id);
    when 'integration_connection' then return exists (select from api.integration_connections(p_resource_id) v where v.id = p_resource_id);
    when 'invoice' then return exists (select from api.invoices(p_resource_id) v where v.id = p_resource_id);
    when 'payment' then return exists (select from app.payments p where p.organization_id = v__organization_id and p.id = p_resource_id);
    when 'file' then return exists (select from api.files(p_resource_id) v where v.id = p_resource_id);
    when 'ticket' then return exists (select from api.tickets(p_resource_id) v where v.id = p_resource_id);
    when 'ticket_message' then
      return exists (select from app.ticket_messages m where m.organization_id = v__organization_id and m.id = p_resource_id);
    when 'report_run' then return exists (select from api.report_runs(p_resource_id) v where v.id = p_resource_id);
    when 'run' then return exists (select from api.runs(p_resource_id) v where v.id = p_resource_id);
    when 'conversation_message' then return exists (select from api.conversation_messages(p_resource_id) v where v.id = p_resource_id);
    else return false;
  end case;
end
$$;

create or replace function api.file_archive(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  f app.files := app_private.file_for(p_id, true);
begin
  if f.status = 'processing' or f.status = 'rejected' then
    perform app_private.raise('SVC09', 'CONFLICT', format('%s is %s: only a ready file is archived', f.id, f.status));
  end if;
  if f.status = 'ready' then
    update app.files x set status = 'archived' where x.organization_id = f.organization_id and x.id = f.id;
  end if;
  return query select v.doc, v.version from api.files(p_id) v where v.id = p_id;
end
$$;

create or replace function api.file_chunks(p_file_id text, p_from integer, p_to integer) RETURNS TABLE(seq integer, data bytea)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
begin
  perform from api.files(p_file_id) v where v.id = p_file_id and v.status = 'ready';
  if not found then
    return;
  end if;
  return query select c.seq, c.data
    from app.files f
    join app.file_chunks c on c.organization_id = v__organization_id and c.upload_id = f.upload_id
   where f.organization_id = v__organization_id and f.id = p_file_id and c.seq between p_from and p_to
  union all
  select 0, fc.content
    from app.file_contents fc
   where fc.organization_id = v__organization_id and fc.file_id = p_file_id and p_from = 0
  order by 1;
end
$$;

create or replace function api.file_download_begin(p_token text) RETURNS TABLE(outcome text, file_id text, name text, content_type text, size_bytes bigint, sha256 text, upload_id text, chunk_size integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET "svc.gate_organization" TO ''
    AS $$
declare
  l record;
  f app.files;
begin
  perform app_private.refuse_on_coordinator('api.file_download_begin(text)');
  outcome := 'not_found';
  select * into l from app_private.download_link(p_token, 'fil', 'download');
  if l.id is null or l.organization_id is null then
    return next;
    return;
  end if;
  if l.expires <= extract(epoch from now()) then
    outcome := 'expired';
  elsif not app_private.begin_delivery_context(l.organization_id, l.client_id) then
    outcome := 'client_inactive';
  else
    -- Only a file the client may read now (api.files: its Roles, the resource it is linked to).
    perform from api.files(l.id) v where v.id = l.id;
    if found then
      select x.* into f from app.files x where x.organization_id = l.organization_id and x.id = l.id;
    end if;
    if f.id is null or f.status <> 'ready' then
      outcome := 'not_found';
    else
      outcome := 'ok';
      file_id := f.id;
      name := f.name;
      content_type := f.content_type;
      size_bytes := f.size_bytes;
      sha256 := f.sha256;
      upload_id := f.upload_id;
      chunk_size := coalesce((select u.chunk_size from app.file_uploads u where u.organization_id = l.organization_id and u.id = f.upload_id),
                             greatest(f.size_bytes, 1)::integer);
    end if;
  end if;
  return next;
end
$$;

create or replace function api.file_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.file_for(p_id, false);
  return query select v.doc, v.version from api.files(p_id) v where v.id = p_id;
end
$$;

create or replace function api.file_upload_complete(p_upload_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  u app.file_uploads;
  v_file text;
begin
  select * into u from app.file_uploads x
   where x.organization_id = v__organization_id and x.id = p_upload_id for update;
  if not found then
    perform app_private.raise('SVN04', 'FILE_NOT_FOUND', format('no upload %s of your client', p_upload_id));
  end if;
  if u.status = 'completed' then
    return query select v.doc, v.version from api.files(u.file_id) v where v.id = u.file_id;
    return;
  end if;
  if u.expires_at <= now() then
    perform app_private.raise('SVC09', 'UPLOAD_EXPIRED', format('upload %s expired at %s; start a new upload', u.id, app_private.iso_timestamp(u.expires_at)));
  end if;
  if u.status = 'pending' then
    perform app_private.raise('SVC09', 'CONFLICT', 'nothing has been uploaded yet: PUT the bytes to the upload URL first');
  end if;
  if u.received_size_bytes <> u.size_bytes or u.received_sha256 <> u.sha256 then
    perform app_private.raise('SVV22', 'CHECKSUM_MISMATCH',
      format('the stored bytes (%s bytes, SHA-256 %s) are not the declared ones (%s bytes, SHA-256 %s); start a new upload',
             u.received_size_bytes, u.received_sha256, u.size_bytes, u.sha256));
  end if;
  if not u.content_type_verified then
    perform app_private.raise('SVV22', 'CONTENT_TYPE_NOT_ALLOWED',
      format('the bytes are %s, not the declared %s; start a new upload', coalesce(u.detected_content_type, 'of an unknown type'), u.content_type));
  end if;
  insert into app.files (organization_id, name, content_type, size_bytes, sha256, status, linked_resource_type, linked_resource_id,
                         upload_id, scan_status, created_by_client_id)
  values (u.organization_id, u.name, u.content_type, u.size_bytes, u.sha256, 'processing', u.linked_resource_type, u.linked_resource_id,
          u.id, 'pending', app.current_client_id())
  returning id into v_file;
  update app.file_uploads x set status = 'completed', file_id = v_file where x.organization_id = u.organization_id and x.id = u.id;
  perform app_private.queue_file_scan(v_file);
  return query select v.doc, v.version from api.files(v_file) v where v.id = v_file;
end
$$;

create or replace function api.invoice_create(p_body jsonb) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
  return query select v.doc, v.version from api.invoices(i.id) v where v.id = i.id;
end
$$;

create or replace function api.invoice_replace_lines(p_id text, p_if_match integer[], p_lines jsonb) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  i app.invoices := app_private.invoice_lock(p_id, p_if_match);
begin
  perform app_private.invoice_set_lines(i, p_lines);
  -- The lines are part of the invoice: replacing them is a new version even when the totals stay.
  update app.invoices x set memo = x.memo where x.organization_id = i.organization_id and x.id = i.id;
  return query select v.doc, v.version from api.invoices(i.id) v where v.id = i.id;
end
$$;

create or replace function api.invoice_send(p_id text, p_email boolean) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET lock_timeout TO '5s'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  i app.invoices;
  c app.customers;
  o app.organizations;
begin
  perform app_private.refuse_on_coordinator('api.invoice_send(text,boolean)');
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
    'invoice', (select v.doc from api.invoices(i.id) v where v.id = i.id),
    'organization', jsonb_build_object('name', o.name, 'locale', o.locale),
    'customer', jsonb_build_object('id', c.id, 'name', c.name, 'email', c.delivery_email));
end
$$;

create or replace function api.invoice_update(p_id text, p_if_match integer[], p_patch jsonb) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
  return query select v.doc, v.version from api.invoices(i.id) v where v.id = i.id;
end
$$;

create or replace function api.invoice_void(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  i app.invoices;
  c app.integration_connections;
begin
  perform app_private.refuse_on_coordinator('api.invoice_void(text)');
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
  return query select v.doc, v.version from api.invoices(i.id) v where v.id = i.id;
end
$$;

create or replace function api.payment_create(p_body jsonb) RETURNS TABLE(doc jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
    from app.invoices i cross join lateral api.invoices(i.id) v
   where i.organization_id = p.organization_id and i.id = p.invoice_id;
end
$$;

create or replace function api.project_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
begin
  return query select p.doc, p.version from api.projects(p_id) p where p.id = p_id;
end
$$;

create or replace function api.report_download_begin(p_token text) RETURNS TABLE(outcome text, run_id text, report_id text, format text, row_count integer, columns text[], numeric_columns text[])
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET "svc.gate_organization" TO ''
    AS $$
declare
  l record;
  r app.report_runs;
begin
  perform app_private.refuse_on_coordinator('api.report_download_begin(text)');
  outcome := 'not_found';
  select * into l from app_private.download_link(p_token, 'rrun', 'report-download');
  if l.id is null or l.organization_id is null then
    return next;
    return;
  end if;
  if l.expires <= extract(epoch from now()) then
    outcome := 'expired';
  elsif not app_private.begin_delivery_context(l.organization_id, l.client_id) then
    outcome := 'client_inactive';
  else
    -- Only a run the client may read now (api.report_runs: its own, with the report's Roles).
    perform from api.report_runs(l.id) v where v.id = l.id;
    if found then
      select x.* into r from app.report_runs x where x.organization_id = l.organization_id and x.id = l.id;
    end if;
    if r.id is not null and r.status = 'succeeded' and not r.results_purged and r.expires_at > now() then
      outcome := 'ok';
      run_id := r.id;
      report_id := r.report_id;
      format := r.format;
      row_count := r.row_count;
      select d.columns, d.numeric_columns into columns, numeric_columns
        from app_private.report_definitions d where d.id = r.report_id;
    end if;
  end if;
  return next;
end
$$;

create or replace function api.report_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  d app_private.report_definitions;
begin
  select * into d from app_private.report_definitions x where x.id = p_id;
  if not found or v__organization_id is null then
    perform app_private.raise('SVN04', 'REPORT_NOT_FOUND', format('no report %s', p_id));
  end if;
  if not (d.required_roles && app.current_roles()) then
    perform app_private.raise('SVR04', 'REPORT_ROLE_REQUIRED',
      format('%s needs one of the Roles %s', p_id, array_to_string(d.required_roles, ', ')));
  end if;
  return query select v.doc, v.version from api.reports(p_id) v where v.id = p_id;
end
$$;

create or replace function api.report_run_create(p_report_id text, p_parameters jsonb, p_format text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
  return (select v.doc from api.report_runs(v_id) v where v.id = v_id);
end
$$;

create or replace function api.report_run_get(p_report_id text, p_run_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform api.report_get(p_report_id);
  if not exists (select from api.report_runs(p_run_id) v where v.id = p_run_id and v.report_id = p_report_id) then
    perform app_private.raise('SVN04', 'REPORT_RUN_NOT_FOUND', format('no run %s of %s by your client', p_run_id, p_report_id));
  end if;
  return query select v.doc, v.version from api.report_runs(p_run_id) v where v.id = p_run_id;
end
$$;

create or replace function api.run_cancel(p_id text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  r app.runs;
  v_lock_timeout text := current_setting('lock_timeout');
begin
  if not exists (select from api.runs(p_id) v where v.id = p_id) then
    perform app_private.raise('SVN04', 'RUN_NOT_FOUND', format('no run %s of your client', p_id));
  end if;
  perform set_config('lock_timeout', '1s', true);
  begin
    r := app_private.run_lock(p_id);
  exception when lock_not_available then
    perform app_private.raise('SVC09', 'RUN_CANCEL_NOT_AVAILABLE', 'the run is applying a tool operation; retry the cancel in a moment');
  end;
  perform set_config('lock_timeout', v_lock_timeout, true);
  if r.status in ('succeeded', 'failed', 'cancelled') then
    perform app_private.raise('SVC09', 'RUN_ALREADY_TERMINAL', format('the run is already %s', r.status));
  end if;
  update app.runs x set status = 'cancelled', required_action = null, completed_at = now()
   where x.organization_id = r.organization_id and x.id = p_id;
  return (select v.doc from api.runs(p_id) v where v.id = p_id);
end
$$;

create or replace function api.run_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
begin
  return query select v.doc, v.version from api.runs(p_id) v where v.id = p_id;
end
$$;

create or replace function api.run_submit_action(p_id text, p_action_id text, p_response jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  r app.runs;
begin
  r := app_private.run_lock(p_id);
  if r.status <> 'requires_action' then
    perform app_private.raise('SVC09', 'RUN_NOT_ACTIONABLE', format('the run is %s; actions are accepted only while it requires_action', r.status));
  end if;
  if p_action_id is distinct from r.required_action ->> 'id' then
    perform app_private.raise('SVV22', 'RUN_ACTION_INVALID', format('the run waits for action %s', r.required_action ->> 'id'), '/action_id');
  end if;
  if not coalesce(r.required_action -> 'schema' -> 'properties' -> 'choice' -> 'enum' ? (p_response ->> 'choice'), false) then
    perform app_private.raise('SVV22', 'RUN_ACTION_INVALID', 'response.choice must be one of the choices the action offers', '/response/choice');
  end if;
  update app.runs x set status = 'queued', required_action = null,
         state = x.state || jsonb_build_object('action', jsonb_build_object('id', p_action_id, 'response', p_response))
   where x.organization_id = r.organization_id and x.id = p_id;
  perform app_private.queue_agent_run(p_id);
  return (select v.doc from api.runs(p_id) v where v.id = p_id);
end
$$;

create or replace function api.task_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
begin
  return query select t.doc, t.version from api.tasks(p_id) t where t.id = p_id;
end
$$;

create or replace function skills.tasks_assign(p_args jsonb, p_subject text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_doc jsonb;
begin
  -- expected_version is the If-Match of a confirmed proposal: a task changed since it was read is
  -- refused as updateTask refuses a stale ETag. Without it the assignment replaces what is there now.
  select t.doc into v_doc from api.task_update(p_args ->> 'task_id',
    array[coalesce((p_args ->> 'expected_version')::integer, (select x.version from api.tasks(p_args ->> 'task_id') x where x.id = p_args ->> 'task_id'))],
    jsonb_build_object('assignee_member_ids', p_args -> 'assignee_member_ids'), null) t;
  return jsonb_build_object('summary', format('%s assigned to %s', p_args ->> 'task_id',
      (select string_agg(a, ', ') from jsonb_array_elements_text(v_doc -> 'assignee_member_ids') a)),
    'resources', jsonb_build_array(jsonb_build_object('type', 'task', 'id', p_args ->> 'task_id')),
    'data', jsonb_build_object('task_id', p_args ->> 'task_id', 'assignee_member_ids', v_doc -> 'assignee_member_ids'));
end
$$;

create or replace function api.ticket_create(p_body jsonb) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
  return query select v.doc, v.version from api.tickets(v_id) v where v.id = v_id;
end
$$;

create or replace function api.ticket_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform api.require_tickets(false);
  return query select v.doc, v.version from api.tickets(p_id) v where v.id = p_id;
end
$$;

create or replace function api.ticket_message_create(p_ticket_id text, p_body jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  t app.tickets;
  v_id text;
  v_files text[] := coalesce((select array_agg(x) from jsonb_array_elements_text(coalesce(p_body -> 'attachments', '[]')) x), '{}');
  v_bad text[];
begin
  perform api.require_tickets(true);
  t := app_private.lock_ticket(p_ticket_id);
  select array_agg(a order by a) into v_bad from unnest(v_files) a
   where not exists (select from api.files(a) f where f.id = a and f.status = 'ready'
                                             and f.linked_resource_type = 'ticket' and f.linked_resource_id = t.id);
  if v_bad is not null then
    perform app_private.raise_errors(app_private.error('/attachments', 'ATTACHMENT_NOT_AVAILABLE',
      format('not ready files of ticket %s that you may read: %s; upload attachments with linked_resource {type: ticket, id: %s}',
             t.id, array_to_string(v_bad, ', '), t.id)));
  end if;
  insert into app.ticket_messages (organization_id, ticket_id, type, body, attachment_file_ids, author_client_id)
  values (t.organization_id, t.id, p_body ->> 'type', p_body ->> 'body', v_files, app.current_client_id())
  returning id into v_id;
  return (select v.doc from api.ticket_messages(v_id) v where v.id = v_id);
end
$$;

create or replace function api.ticket_transition(p_id text, p_transition text, p_resolution text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  t app.tickets;
  tr app.ticket_transitions;
begin
  perform api.require_tickets(true);
  t := app_private.lock_ticket(p_id);
  select * into tr from app.ticket_transitions x
   where x.organization_id = t.organization_id and x.name = p_transition and x.from_status = t.status;
  if not found then
    perform app_private.raise('SVV23', 'INVALID_TRANSITION',
      format('%s is not offered from status %s; see the ticket''s transitions', p_transition, t.status), '/transition');
  end if;
  if tr.requires_resolution and (p_resolution is null or p_resolution !~ '\S') then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', format('%s needs a resolution', p_transition), '/resolution');
  end if;
  if not tr.requires_resolution and p_resolution is not null then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', format('%s takes no resolution', p_transition), '/resolution');
  end if;
  update app.tickets x set status = tr.to_status, resolution = coalesce(p_resolution, case when tr.to_status = 'closed' then t.resolution end)
   where x.organization_id = t.organization_id and x.id = p_id;
  return query select v.doc, v.version from api.tickets(p_id) v where v.id = p_id;
end
$$;

create or replace function api.ticket_update(p_id text, p_if_match integer[], p_patch jsonb) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  t app.tickets;
  v_errors jsonb := '[]';
  k text;
begin
  perform api.require_tickets(true);
  t := app_private.lock_ticket(p_id);
  -- The spec's tie: a status sent here is an attempt at a transition that is not offered this way.
  if p_patch ? 'status' then
    perform app_private.raise('SVV23', 'INVALID_TRANSITION', 'status changes only through POST /v1/tickets/{ticket_id}/transitions', '/status');
  end if;
  perform app_private.check_if_match(t.version, p_if_match);
  for k in select jsonb_object_keys(p_patch) order by 1 loop
    if k not in ('subject', 'description', 'priority', 'tags', 'assignee_member_id', 'project_id') then
      v_errors := v_errors || app_private.error('/' || k, 'IMMUTABLE_FIELD', format('%s cannot be changed here', k));
    end if;
  end loop;
  perform app_private.raise_errors(v_errors);
  update app.tickets x set
    subject = case when p_patch ? 'subject' then p_patch ->> 'subject' else t.subject end,
    description = case when p_patch ? 'description' then p_patch ->> 'description' else t.description end,
    priority = case when p_patch ? 'priority' then p_patch ->> 'priority' else t.priority end,
    tags = case when p_patch ? 'tags'
                then coalesce((select array_agg(distinct lower(btrim(e))) from jsonb_array_elements_text(p_patch -> 'tags') e), '{}')
                else t.tags end,
    assignee_member_id = case when p_patch ? 'assignee_member_id' then app_private.normalize_email(p_patch ->> 'assignee_member_id')
                              else t.assignee_member_id end,
    project_id = case when p_patch ? 'project_id' then p_patch ->> 'project_id' else t.project_id end
   where x.organization_id = t.organization_id and x.id = p_id;
  return query select v.doc, v.version from api.tickets(p_id) v where v.id = p_id;
end
$$;

create or replace function api.time_entry_batch(p_entries jsonb, p_atomic boolean) RETURNS jsonb
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

create or replace function api.time_entry_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform api.require_time_entry_read();
  return query select t.doc, t.version from api.time_entries(p_id) t where t.id = p_id and t.deleted_at is null;
end
$$;

create or replace function api.webhook_delivery_get(p_endpoint text, p_delivery text) RETURNS TABLE(doc jsonb)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
  v_doc jsonb;
begin
  select v.doc into v_doc from api.webhook_deliveries(p_delivery) v where v.id = p_delivery and v.endpoint_id = p_endpoint;
  if v_doc is null then
    return;
  end if;
  return query select v_doc || jsonb_build_object('attempts', coalesce((
           select jsonb_agg(jsonb_build_object('attempt', a.attempt, 'started_at', app_private.iso_timestamp(a.started_at),
                                               'duration_ms', a.duration_ms, 'response_status', a.response_status,
                                               'error', a.error) order by a.attempt)
             from app.webhook_delivery_attempts a where a.organization_id = v__organization_id and a.delivery_id = p_delivery), '[]'::jsonb));
end
$$;

create or replace function api.webhook_delivery_replay(p_endpoint text, p_delivery text) RETURNS TABLE(doc jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  w app.webhook_endpoints;
  d app.webhook_deliveries;
  e app.events;
  v_id text := app_private.new_id('whd');
begin
  perform app_private.refuse_on_coordinator('api.webhook_delivery_replay(text,text)');
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
  perform app_private.webhook_enqueue(v__organization_id, v_id);
  return query select v.doc from api.webhook_deliveries(v_id) v where v.id = v_id;
end
$$;

create or replace function api.webhook_endpoint_create(p_id text, p_url text, p_events text[], p_description text, p_secret_sealed text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  insert into app.webhook_endpoints (organization_id, id, client_id, url, events, description, secret_sealed)
  values (v__organization_id, p_id, app.current_client_id(), p_url, p_events, p_description, p_secret_sealed);
  return query select w.doc, w.version from api.webhook_endpoints(p_id) w where w.id = p_id;
end
$$;

create or replace function api.webhook_endpoint_rotate(p_id text, p_secret_sealed text, p_previous_expires_in_seconds integer) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  w app.webhook_endpoints := app_private.webhook_endpoint_lock(p_id);
  v_previous_expires_at timestamptz := case when p_previous_expires_in_seconds > 0
                                            then now() + make_interval(secs => p_previous_expires_in_seconds) end;
begin
  update app.webhook_endpoints e
     set previous_secret_sealed = case when p_previous_expires_in_seconds > 0 then e.secret_sealed end,
         previous_secret_expires_at = v_previous_expires_at,
         secret_sealed = p_secret_sealed
   where e.organization_id = w.organization_id and e.id = w.id;
  return query select v.doc, v.version from api.webhook_endpoints(w.id) v where v.id = w.id;
end
$$;

create or replace function api.webhook_endpoint_set_status(p_id text, p_status text, p_verified boolean DEFAULT false) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
  return query select v.doc, v.version from api.webhook_endpoints(w.id) v where v.id = w.id;
end
$$;

create or replace function api.webhook_endpoint_test(p_endpoint text) RETURNS TABLE(doc jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  w app.webhook_endpoints;
  v_event text;
  v_id text := app_private.new_id('whd');
begin
  perform app_private.refuse_on_coordinator('api.webhook_endpoint_test(text)');
  select * into w from app.webhook_endpoints
   where id = p_endpoint and organization_id = v__organization_id and client_id = app.current_client_id();
  if not found then
    perform app_private.webhook_endpoint_not_found(p_endpoint);
  end if;
  insert into app.events (organization_id, type, resource_type, resource_id, resource_version, target_endpoint_id, client_ids)
  values (w.organization_id, 'webhook_endpoint.test', 'webhook_endpoint', w.id, w.version, w.id, array[w.client_id])
  returning id into v_event;
  insert into app.webhook_deliveries (organization_id, id, client_id, endpoint_id, event_id)
  values (w.organization_id, v_id, w.client_id, w.id, v_event);
  perform app_private.webhook_enqueue(v__organization_id, v_id);
  return query select v.doc from api.webhook_deliveries(v_id) v where v.id = v_id;
end
$$;

create or replace function api.webhook_endpoint_update(p_id text, p_if_match integer[], p_patch jsonb, p_verified_url text DEFAULT NULL::text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
  return query select v.doc, v.version from api.webhook_endpoints(w.id) v where v.id = w.id;
end
$$;

-- The two commands whose join named the organization of one table only: with the policies' context
-- read once per statement, a join's tables are shown colocated by their own condition.
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

create or replace function api.task_transition(p_id text, p_transition text, p_completed_at timestamp with time zone, p_subject_member_id text) RETURNS TABLE(doc jsonb, version integer)
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

-- migrate:down
set local lock_timeout = '3s';
set local statement_timeout = '120s';
do $$
begin
  if exists (select from pg_extension where extname = 'citus') then
    perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION',
      'on a cluster the commands before this migration were copies rewritten for Citus: restore a backup to go back');
  end if;
end
$$;

create or replace function api.agents(p_id text DEFAULT NULL::text) RETURNS SETOF api.agents
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.agents where true and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.agents', v_organization_id) || ') v where true and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

create or replace function api.approvals(p_id text DEFAULT NULL::text) RETURNS SETOF api.approvals
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

create or replace function api.conversation_messages(p_id text DEFAULT NULL::text) RETURNS SETOF api.conversation_messages
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.conversation_messages where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.conversation_messages', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

create or replace function api.conversations(p_id text DEFAULT NULL::text) RETURNS SETOF api.conversations
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.conversations where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.conversations', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

create or replace function api.files(p_id text DEFAULT NULL::text) RETURNS SETOF api.files
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.files where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.files', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

create or replace function api.integration_connections(p_id text DEFAULT NULL::text) RETURNS SETOF api.integration_connections
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.integration_connections where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.integration_connections', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

create or replace function api.invoices(p_id text DEFAULT NULL::text) RETURNS SETOF api.invoices
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.invoices where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.invoices', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

create or replace function api.members(p_id text DEFAULT NULL::text) RETURNS SETOF api.members
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.members where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.members', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

create or replace function api.organization(p_id text DEFAULT NULL::text) RETURNS SETOF api.organization
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.organization where id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.organization', v_organization_id) || ') v where id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

create or replace function api.projects(p_id text DEFAULT NULL::text) RETURNS SETOF api.projects
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

create or replace function api.report_results(p_id text DEFAULT NULL::text) RETURNS SETOF api.report_results
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.report_results where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.report_results', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

create or replace function api.report_runs(p_id text DEFAULT NULL::text) RETURNS SETOF api.report_runs
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.report_runs where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.report_runs', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

create or replace function api.reports(p_id text DEFAULT NULL::text) RETURNS SETOF api.reports
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.reports where true and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.reports', v_organization_id) || ') v where true and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

create or replace function api.runs(p_id text DEFAULT NULL::text) RETURNS SETOF api.runs
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.runs where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.runs', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

create or replace function api.tasks(p_id text DEFAULT NULL::text) RETURNS SETOF api.tasks
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

create or replace function api.ticket_messages(p_id text DEFAULT NULL::text) RETURNS SETOF api.ticket_messages
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.ticket_messages where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.ticket_messages', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

create or replace function api.tickets(p_id text DEFAULT NULL::text) RETURNS SETOF api.tickets
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.tickets where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.tickets', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

create or replace function api.time_entries(p_id text DEFAULT NULL::text) RETURNS SETOF api.time_entries
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

create or replace function api.webhook_deliveries(p_id text DEFAULT NULL::text) RETURNS SETOF api.webhook_deliveries
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.webhook_deliveries where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.webhook_deliveries', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

create or replace function api.webhook_endpoints(p_id text DEFAULT NULL::text) RETURNS SETOF api.webhook_endpoints
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.webhook_endpoints where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.webhook_endpoints', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

create or replace function app_private.accounting_sync_load(p_organization_id text, p_invoice text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_doc jsonb;
  v_out jsonb;
begin
  -- The invoice as finance reads it through the API.
  perform app_private.set_context(p_organization_id, null, '{finance}');
  select v.doc into v_doc from api.invoices v where v.id = p_invoice;
  perform app_private.set_context(null, null, null);
  if v_doc is null then
    return null;
  end if;
  select jsonb_build_object('invoice', v_doc, 'provider', c.provider, 'connection_id', c.id, 'connection_status', c.status,
                            'sync_status', i.sync_status, 'external_reference', i.sync_external_reference,
                            'customer', jsonb_build_object('id', cu.id, 'name', cu.name, 'email', cu.delivery_email))
    into v_out
    from app.invoices i
    join app.integration_connections c on c.organization_id = i.organization_id and c.id = i.sync_connection_id
    join app.customers cu on cu.organization_id = i.organization_id and cu.id = i.customer_id
   where i.organization_id = p_organization_id and i.id = p_invoice;
  return v_out;
end
$$;

create or replace function api.agent_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  d app_private.agent_definitions := app_private.agent_lookup(p_id);
begin
  if not 'api_client' = any (d.accepted_principal_types) then
    perform app_private.raise('SVR04', 'API_PRINCIPAL_NOT_SUPPORTED',
      format('%s accepts %s, not API Clients', p_id, array_to_string(d.accepted_principal_types, ', ')));
  end if;
  if not d.required_roles <@ app.current_roles() then
    perform app_private.raise('SVR03', 'ROLE_REQUIRED', format('%s needs the Roles %s', p_id, array_to_string(d.required_roles, ', ')));
  end if;
  return query select v.doc, v.version from api.agents v where v.id = p_id;
end
$$;

create or replace function api.agent_run_create(p_id text, p_input jsonb, p_subject jsonb, p_metadata jsonb, p_model_available boolean) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  d app_private.agent_definitions;
  v_subject text := p_subject ->> 'member_id';
  v_blockers jsonb;
  v_first jsonb;
  v_id text;
begin
  select * into d from app_private.agent_definitions x where x.id = p_id;
  v_blockers := api.agent_blockers(p_id, v_subject, p_model_available);
  v_first := v_blockers -> 0;
  if v_first is not null then
    perform app_private.raise(case v_first ->> 'code' when 'SUBJECT_NOT_SUPPORTED' then 'SVV22' when 'LICENSE_LEVEL_REQUIRED' then 'SVR04'
                                                      when 'ROLE_REQUIRED' then 'SVR03' else 'SVC09' end,
                              v_first ->> 'code', v_first ->> 'message', case when v_first ->> 'code' = 'SUBJECT_NOT_SUPPORTED' then '/subject' end);
  end if;
  perform app_private.check_subject(v_subject);
  insert into app.runs (organization_id, kind, agent_id, agent_version, client_id, subject, input, metadata)
  values (v__organization_id, 'agent', d.id, d.version, app.current_client_id(), p_subject, p_input, coalesce(p_metadata, '{}'))
  returning id into v_id;
  perform app_private.queue_agent_run(v_id);
  return (select v.doc from api.runs v where v.id = v_id);
end
$$;

create or replace function api.conversation_create(p_title text, p_subject jsonb, p_metadata jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  v_id text;
begin
  insert into app.conversations (organization_id, client_id, title, subject_member_id, metadata)
  values (v__organization_id, app.current_client_id(), nullif(p_title, ''), app_private.conversation_subject(p_subject),
          coalesce(p_metadata, '{}'))
  returning id into v_id;
  return (select v.doc from api.conversations v where v.id = v_id);
end
$$;

create or replace function api.conversation_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if not exists (select from api.conversations v where v.id = p_id) then
    perform app_private.raise('SVN04', 'CONVERSATION_NOT_FOUND', format('no conversation %s of your client', p_id));
  end if;
  return query select v.doc, v.version from api.conversations v where v.id = p_id;
end
$$;

create or replace function api.conversation_message_create(p_id text, p_content jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  c app.conversations;
  v_msg text;
  v_run text;
  v_bad integer;
begin
  select * into c from app.conversations x where x.organization_id = v__organization_id and x.id = p_id for update;
  if not found then
    perform app_private.raise('SVN04', 'CONVERSATION_NOT_FOUND', format('no conversation %s of your client', p_id));
  end if;
  if c.status = 'archived' then
    perform app_private.raise('SVC09', 'CONVERSATION_ARCHIVED', 'the conversation is archived; start a new one');
  end if;
  if length(p_content::text) > app_private.message_budget() then
    perform app_private.raise('SVV22', 'CONTEXT_LIMIT_EXCEEDED',
      format('one message holds at most %s characters of content (this one: %s); send it in parts or as a file reference',
             app_private.message_budget(), length(p_content::text)), '/content');
  end if;
  select min(b.i) - 1 into v_bad from jsonb_array_elements(p_content) with ordinality b (block, i)
   where b.block ->> 'type' = 'file_reference' and not exists (select from api.files f where f.id = b.block ->> 'file_id' and f.status = 'ready');
  if v_bad is not null then
    perform app_private.raise('SVV22', 'MESSAGE_CONTENT_INVALID',
      'file_id must name a ready file you may read', format('/content/%s/file_id', v_bad));
  end if;
  insert into app.conversation_messages (organization_id, conversation_id, seq, role, content)
  values (c.organization_id, c.id, c.message_count + 1, 'user', p_content)
  returning id into v_msg;
  perform app_private.conversation_compact(c.organization_id, c.id);
  insert into app.runs (organization_id, kind, agent_id, conversation_id, client_id, subject, input)
  values (c.organization_id, 'agent', null, c.id, c.client_id,
          case when c.subject_member_id is null then null else jsonb_build_object('member_id', c.subject_member_id) end,
          jsonb_build_object('message_id', v_msg))
  returning id into v_run;
  perform app_private.queue_agent_run(v_run);
  return jsonb_build_object('object', 'conversation_message_accepted',
    'message', (select v.doc from api.conversation_messages v where v.id = v_msg),
    'run', (select v.doc from api.runs v where v.id = v_run));
end
$$;

create or replace function app_private.conversation_subject(p_subject jsonb) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_keys text[];
  v_ids text[];
begin
  if p_subject is null or p_subject = 'null'::jsonb then
    return null;
  end if;
  select array_agg(k order by k) into v_keys from jsonb_object_keys(p_subject) k;
  if coalesce(p_subject ->> 'type', 'member') <> 'member' or not (v_keys <@ '{display_name,member_id,type}' and cardinality(array_remove(v_keys, 'type')) = 1) then
    perform app_private.raise('SVV22', 'SUBJECT_NOT_SUPPORTED',
      'a conversation''s subject is one member: {"member_id": "<email>"} or {"display_name": "<name>"}', '/subject');
  end if;
  if p_subject ? 'member_id' then
    select array_agg(m.id) into v_ids from api.members m where m.id = lower(trim(p_subject ->> 'member_id')) and m.status = 'active';
  else
    select array_agg(m.id order by m.id) into v_ids from api.members m
     where lower(m.display_name) = lower(trim(p_subject ->> 'display_name')) and m.status = 'active';
  end if;
  if v_ids is null then
    perform app_private.raise('SVV22', 'SUBJECT_NOT_FOUND', 'no active member of your organization matches the subject', '/subject');
  end if;
  if cardinality(v_ids) > 1 then
    perform app_private.raise('SVV22', 'SUBJECT_AMBIGUOUS',
      format('%s active members have that display name; name the member by member_id', cardinality(v_ids)), '/subject');
  end if;
  return v_ids[1];
end
$$;

create or replace function app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  case p_resource_type
    when 'project' then return exists (select from api.projects v where v.id = p_resource_id);
    when 'task' then return exists (select from api.tasks v where v.id = p_resource_id);
    when 'time_entry' then
      if p_type = 'time_entry.deleted' then
        return app_private.may_read_time_entries();
      end if;
      return exists (select from api.time_entries v where v.id = p_resource_id and v.deleted_at is null);
    when 'approval' then return exists (select from api.approvals v where v.id = p_resource_id);
    when 'webhook_endpoint' then return exists (select from api.webhook_endpoints v where v.id = p_resource_id);
    when 'integration_connection' then return exists (select from api.integration_connections v where v.id = p_resource_id);
    when 'invoice' then return exists (select from api.invoices v where v.id = p_resource_id);
    when 'payment' then return exists (select from app.payments p where p.organization_id = v__organization_id and p.id = p_resource_id);
    when 'file' then return exists (select from api.files v where v.id = p_resource_id);
    when 'ticket' then return exists (select from api.tickets v where v.id = p_resource_id);
    when 'ticket_message' then
      return exists (select from app.ticket_messages m where m.organization_id = v__organization_id and m.id = p_resource_id);
    when 'report_run' then return exists (select from api.report_runs v where v.id = p_resource_id);
    when 'run' then return exists (select from api.runs v where v.id = p_resource_id);
    when 'conversation_message' then return exists (select from api.conversation_messages v where v.id = p_resource_id);
    else return false;
  end case;
end
$$;

create or replace function api.file_archive(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  f app.files := app_private.file_for(p_id, true);
begin
  if f.status = 'processing' or f.status = 'rejected' then
    perform app_private.raise('SVC09', 'CONFLICT', format('%s is %s: only a ready file is archived', f.id, f.status));
  end if;
  if f.status = 'ready' then
    update app.files x set status = 'archived' where x.organization_id = f.organization_id and x.id = f.id;
  end if;
  return query select v.doc, v.version from api.files v where v.id = p_id;
end
$$;

create or replace function api.file_chunks(p_file_id text, p_from integer, p_to integer) RETURNS TABLE(seq integer, data bytea)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
begin
  perform from api.files v where v.id = p_file_id and v.status = 'ready';
  if not found then
    return;
  end if;
  return query select c.seq, c.data
    from app.files f
    join app.file_chunks c on c.organization_id = v__organization_id and c.upload_id = f.upload_id
   where f.organization_id = v__organization_id and f.id = p_file_id and c.seq between p_from and p_to
  union all
  select 0, fc.content
    from app.file_contents fc
   where fc.organization_id = v__organization_id and fc.file_id = p_file_id and p_from = 0
  order by 1;
end
$$;

create or replace function api.file_download_begin(p_token text) RETURNS TABLE(outcome text, file_id text, name text, content_type text, size_bytes bigint, sha256 text, upload_id text, chunk_size integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET "svc.gate_organization" TO ''
    AS $$
declare
  l record;
  f app.files;
begin
  perform app_private.refuse_on_coordinator('api.file_download_begin(text)');
  outcome := 'not_found';
  select * into l from app_private.download_link(p_token, 'fil', 'download');
  if l.id is null or l.organization_id is null then
    return next;
    return;
  end if;
  if l.expires <= extract(epoch from now()) then
    outcome := 'expired';
  elsif not app_private.begin_delivery_context(l.organization_id, l.client_id) then
    outcome := 'client_inactive';
  else
    -- Only a file the client may read now (api.files: its Roles, the resource it is linked to).
    perform from api.files v where v.id = l.id;
    if found then
      select x.* into f from app.files x where x.organization_id = l.organization_id and x.id = l.id;
    end if;
    if f.id is null or f.status <> 'ready' then
      outcome := 'not_found';
    else
      outcome := 'ok';
      file_id := f.id;
      name := f.name;
      content_type := f.content_type;
      size_bytes := f.size_bytes;
      sha256 := f.sha256;
      upload_id := f.upload_id;
      chunk_size := coalesce((select u.chunk_size from app.file_uploads u where u.organization_id = l.organization_id and u.id = f.upload_id),
                             greatest(f.size_bytes, 1)::integer);
    end if;
  end if;
  return next;
end
$$;

create or replace function api.file_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.file_for(p_id, false);
  return query select v.doc, v.version from api.files v where v.id = p_id;
end
$$;

create or replace function api.file_upload_complete(p_upload_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  u app.file_uploads;
  v_file text;
begin
  select * into u from app.file_uploads x
   where x.organization_id = v__organization_id and x.id = p_upload_id for update;
  if not found then
    perform app_private.raise('SVN04', 'FILE_NOT_FOUND', format('no upload %s of your client', p_upload_id));
  end if;
  if u.status = 'completed' then
    return query select v.doc, v.version from api.files v where v.id = u.file_id;
    return;
  end if;
  if u.expires_at <= now() then
    perform app_private.raise('SVC09', 'UPLOAD_EXPIRED', format('upload %s expired at %s; start a new upload', u.id, app_private.iso_timestamp(u.expires_at)));
  end if;
  if u.status = 'pending' then
    perform app_private.raise('SVC09', 'CONFLICT', 'nothing has been uploaded yet: PUT the bytes to the upload URL first');
  end if;
  if u.received_size_bytes <> u.size_bytes or u.received_sha256 <> u.sha256 then
    perform app_private.raise('SVV22', 'CHECKSUM_MISMATCH',
      format('the stored bytes (%s bytes, SHA-256 %s) are not the declared ones (%s bytes, SHA-256 %s); start a new upload',
             u.received_size_bytes, u.received_sha256, u.size_bytes, u.sha256));
  end if;
  if not u.content_type_verified then
    perform app_private.raise('SVV22', 'CONTENT_TYPE_NOT_ALLOWED',
      format('the bytes are %s, not the declared %s; start a new upload', coalesce(u.detected_content_type, 'of an unknown type'), u.content_type));
  end if;
  insert into app.files (organization_id, name, content_type, size_bytes, sha256, status, linked_resource_type, linked_resource_id,
                         upload_id, scan_status, created_by_client_id)
  values (u.organization_id, u.name, u.content_type, u.size_bytes, u.sha256, 'processing', u.linked_resource_type, u.linked_resource_id,
          u.id, 'pending', app.current_client_id())
  returning id into v_file;
  update app.file_uploads x set status = 'completed', file_id = v_file where x.organization_id = u.organization_id and x.id = u.id;
  perform app_private.queue_file_scan(v_file);
  return query select v.doc, v.version from api.files v where v.id = v_file;
end
$$;

create or replace function api.invoice_create(p_body jsonb) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
$$;

create or replace function api.invoice_replace_lines(p_id text, p_if_match integer[], p_lines jsonb) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  i app.invoices := app_private.invoice_lock(p_id, p_if_match);
begin
  perform app_private.invoice_set_lines(i, p_lines);
  -- The lines are part of the invoice: replacing them is a new version even when the totals stay.
  update app.invoices x set memo = x.memo where x.organization_id = i.organization_id and x.id = i.id;
  return query select v.doc, v.version from api.invoices v where v.id = i.id;
end
$$;

create or replace function api.invoice_send(p_id text, p_email boolean) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET lock_timeout TO '5s'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  i app.invoices;
  c app.customers;
  o app.organizations;
begin
  perform app_private.refuse_on_coordinator('api.invoice_send(text,boolean)');
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
$$;

create or replace function api.invoice_update(p_id text, p_if_match integer[], p_patch jsonb) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
$$;

create or replace function api.invoice_void(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  i app.invoices;
  c app.integration_connections;
begin
  perform app_private.refuse_on_coordinator('api.invoice_void(text)');
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
$$;

create or replace function api.payment_create(p_body jsonb) RETURNS TABLE(doc jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
$$;

create or replace function api.project_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
begin
  return query select p.doc, p.version from api.projects p where p.id = p_id;
end
$$;

create or replace function api.report_download_begin(p_token text) RETURNS TABLE(outcome text, run_id text, report_id text, format text, row_count integer, columns text[], numeric_columns text[])
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET "svc.gate_organization" TO ''
    AS $$
declare
  l record;
  r app.report_runs;
begin
  perform app_private.refuse_on_coordinator('api.report_download_begin(text)');
  outcome := 'not_found';
  select * into l from app_private.download_link(p_token, 'rrun', 'report-download');
  if l.id is null or l.organization_id is null then
    return next;
    return;
  end if;
  if l.expires <= extract(epoch from now()) then
    outcome := 'expired';
  elsif not app_private.begin_delivery_context(l.organization_id, l.client_id) then
    outcome := 'client_inactive';
  else
    -- Only a run the client may read now (api.report_runs: its own, with the report's Roles).
    perform from api.report_runs v where v.id = l.id;
    if found then
      select x.* into r from app.report_runs x where x.organization_id = l.organization_id and x.id = l.id;
    end if;
    if r.id is not null and r.status = 'succeeded' and not r.results_purged and r.expires_at > now() then
      outcome := 'ok';
      run_id := r.id;
      report_id := r.report_id;
      format := r.format;
      row_count := r.row_count;
      select d.columns, d.numeric_columns into columns, numeric_columns
        from app_private.report_definitions d where d.id = r.report_id;
    end if;
  end if;
  return next;
end
$$;

create or replace function api.report_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  d app_private.report_definitions;
begin
  select * into d from app_private.report_definitions x where x.id = p_id;
  if not found or v__organization_id is null then
    perform app_private.raise('SVN04', 'REPORT_NOT_FOUND', format('no report %s', p_id));
  end if;
  if not (d.required_roles && app.current_roles()) then
    perform app_private.raise('SVR04', 'REPORT_ROLE_REQUIRED',
      format('%s needs one of the Roles %s', p_id, array_to_string(d.required_roles, ', ')));
  end if;
  return query select v.doc, v.version from api.reports v where v.id = p_id;
end
$$;

create or replace function api.report_run_create(p_report_id text, p_parameters jsonb, p_format text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
$$;

create or replace function api.report_run_get(p_report_id text, p_run_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform api.report_get(p_report_id);
  if not exists (select from api.report_runs v where v.id = p_run_id and v.report_id = p_report_id) then
    perform app_private.raise('SVN04', 'REPORT_RUN_NOT_FOUND', format('no run %s of %s by your client', p_run_id, p_report_id));
  end if;
  return query select v.doc, v.version from api.report_runs v where v.id = p_run_id;
end
$$;

create or replace function api.run_cancel(p_id text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  r app.runs;
  v_lock_timeout text := current_setting('lock_timeout');
begin
  if not exists (select from api.runs v where v.id = p_id) then
    perform app_private.raise('SVN04', 'RUN_NOT_FOUND', format('no run %s of your client', p_id));
  end if;
  perform set_config('lock_timeout', '1s', true);
  begin
    r := app_private.run_lock(p_id);
  exception when lock_not_available then
    perform app_private.raise('SVC09', 'RUN_CANCEL_NOT_AVAILABLE', 'the run is applying a tool operation; retry the cancel in a moment');
  end;
  perform set_config('lock_timeout', v_lock_timeout, true);
  if r.status in ('succeeded', 'failed', 'cancelled') then
    perform app_private.raise('SVC09', 'RUN_ALREADY_TERMINAL', format('the run is already %s', r.status));
  end if;
  update app.runs x set status = 'cancelled', required_action = null, completed_at = now()
   where x.organization_id = r.organization_id and x.id = p_id;
  return (select v.doc from api.runs v where v.id = p_id);
end
$$;

create or replace function api.run_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
begin
  return query select v.doc, v.version from api.runs v where v.id = p_id;
end
$$;

create or replace function api.run_submit_action(p_id text, p_action_id text, p_response jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  r app.runs;
begin
  r := app_private.run_lock(p_id);
  if r.status <> 'requires_action' then
    perform app_private.raise('SVC09', 'RUN_NOT_ACTIONABLE', format('the run is %s; actions are accepted only while it requires_action', r.status));
  end if;
  if p_action_id is distinct from r.required_action ->> 'id' then
    perform app_private.raise('SVV22', 'RUN_ACTION_INVALID', format('the run waits for action %s', r.required_action ->> 'id'), '/action_id');
  end if;
  if not coalesce(r.required_action -> 'schema' -> 'properties' -> 'choice' -> 'enum' ? (p_response ->> 'choice'), false) then
    perform app_private.raise('SVV22', 'RUN_ACTION_INVALID', 'response.choice must be one of the choices the action offers', '/response/choice');
  end if;
  update app.runs x set status = 'queued', required_action = null,
         state = x.state || jsonb_build_object('action', jsonb_build_object('id', p_action_id, 'response', p_response))
   where x.organization_id = r.organization_id and x.id = p_id;
  perform app_private.queue_agent_run(p_id);
  return (select v.doc from api.runs v where v.id = p_id);
end
$$;

create or replace function api.task_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
begin
  return query select t.doc, t.version from api.tasks t where t.id = p_id;
end
$$;

create or replace function skills.tasks_assign(p_args jsonb, p_subject text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_doc jsonb;
begin
  -- expected_version is the If-Match of a confirmed proposal: a task changed since it was read is
  -- refused as updateTask refuses a stale ETag. Without it the assignment replaces what is there now.
  select t.doc into v_doc from api.task_update(p_args ->> 'task_id',
    array[coalesce((p_args ->> 'expected_version')::integer, (select x.version from api.tasks x where x.id = p_args ->> 'task_id'))],
    jsonb_build_object('assignee_member_ids', p_args -> 'assignee_member_ids'), null) t;
  return jsonb_build_object('summary', format('%s assigned to %s', p_args ->> 'task_id',
      (select string_agg(a, ', ') from jsonb_array_elements_text(v_doc -> 'assignee_member_ids') a)),
    'resources', jsonb_build_array(jsonb_build_object('type', 'task', 'id', p_args ->> 'task_id')),
    'data', jsonb_build_object('task_id', p_args ->> 'task_id', 'assignee_member_ids', v_doc -> 'assignee_member_ids'));
end
$$;

create or replace function api.ticket_create(p_body jsonb) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
$$;

create or replace function api.ticket_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform api.require_tickets(false);
  return query select v.doc, v.version from api.tickets v where v.id = p_id;
end
$$;

create or replace function api.ticket_message_create(p_ticket_id text, p_body jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  t app.tickets;
  v_id text;
  v_files text[] := coalesce((select array_agg(x) from jsonb_array_elements_text(coalesce(p_body -> 'attachments', '[]')) x), '{}');
  v_bad text[];
begin
  perform api.require_tickets(true);
  t := app_private.lock_ticket(p_ticket_id);
  select array_agg(a order by a) into v_bad from unnest(v_files) a
   where not exists (select from api.files f where f.id = a and f.status = 'ready'
                                             and f.linked_resource_type = 'ticket' and f.linked_resource_id = t.id);
  if v_bad is not null then
    perform app_private.raise_errors(app_private.error('/attachments', 'ATTACHMENT_NOT_AVAILABLE',
      format('not ready files of ticket %s that you may read: %s; upload attachments with linked_resource {type: ticket, id: %s}',
             t.id, array_to_string(v_bad, ', '), t.id)));
  end if;
  insert into app.ticket_messages (organization_id, ticket_id, type, body, attachment_file_ids, author_client_id)
  values (t.organization_id, t.id, p_body ->> 'type', p_body ->> 'body', v_files, app.current_client_id())
  returning id into v_id;
  return (select v.doc from api.ticket_messages v where v.id = v_id);
end
$$;

create or replace function api.ticket_transition(p_id text, p_transition text, p_resolution text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  t app.tickets;
  tr app.ticket_transitions;
begin
  perform api.require_tickets(true);
  t := app_private.lock_ticket(p_id);
  select * into tr from app.ticket_transitions x
   where x.organization_id = t.organization_id and x.name = p_transition and x.from_status = t.status;
  if not found then
    perform app_private.raise('SVV23', 'INVALID_TRANSITION',
      format('%s is not offered from status %s; see the ticket''s transitions', p_transition, t.status), '/transition');
  end if;
  if tr.requires_resolution and (p_resolution is null or p_resolution !~ '\S') then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', format('%s needs a resolution', p_transition), '/resolution');
  end if;
  if not tr.requires_resolution and p_resolution is not null then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', format('%s takes no resolution', p_transition), '/resolution');
  end if;
  update app.tickets x set status = tr.to_status, resolution = coalesce(p_resolution, case when tr.to_status = 'closed' then t.resolution end)
   where x.organization_id = t.organization_id and x.id = p_id;
  return query select v.doc, v.version from api.tickets v where v.id = p_id;
end
$$;

create or replace function api.ticket_update(p_id text, p_if_match integer[], p_patch jsonb) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  t app.tickets;
  v_errors jsonb := '[]';
  k text;
begin
  perform api.require_tickets(true);
  t := app_private.lock_ticket(p_id);
  -- The spec's tie: a status sent here is an attempt at a transition that is not offered this way.
  if p_patch ? 'status' then
    perform app_private.raise('SVV23', 'INVALID_TRANSITION', 'status changes only through POST /v1/tickets/{ticket_id}/transitions', '/status');
  end if;
  perform app_private.check_if_match(t.version, p_if_match);
  for k in select jsonb_object_keys(p_patch) order by 1 loop
    if k not in ('subject', 'description', 'priority', 'tags', 'assignee_member_id', 'project_id') then
      v_errors := v_errors || app_private.error('/' || k, 'IMMUTABLE_FIELD', format('%s cannot be changed here', k));
    end if;
  end loop;
  perform app_private.raise_errors(v_errors);
  update app.tickets x set
    subject = case when p_patch ? 'subject' then p_patch ->> 'subject' else t.subject end,
    description = case when p_patch ? 'description' then p_patch ->> 'description' else t.description end,
    priority = case when p_patch ? 'priority' then p_patch ->> 'priority' else t.priority end,
    tags = case when p_patch ? 'tags'
                then coalesce((select array_agg(distinct lower(btrim(e))) from jsonb_array_elements_text(p_patch -> 'tags') e), '{}')
                else t.tags end,
    assignee_member_id = case when p_patch ? 'assignee_member_id' then app_private.normalize_email(p_patch ->> 'assignee_member_id')
                              else t.assignee_member_id end,
    project_id = case when p_patch ? 'project_id' then p_patch ->> 'project_id' else t.project_id end
   where x.organization_id = t.organization_id and x.id = p_id;
  return query select v.doc, v.version from api.tickets v where v.id = p_id;
end
$$;

create or replace function api.time_entry_batch(p_entries jsonb, p_atomic boolean) RETURNS jsonb
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

create or replace function api.time_entry_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform api.require_time_entry_read();
  return query select t.doc, t.version from api.time_entries t where t.id = p_id and t.deleted_at is null;
end
$$;

create or replace function api.webhook_delivery_get(p_endpoint text, p_delivery text) RETURNS TABLE(doc jsonb)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
  v_doc jsonb;
begin
  select v.doc into v_doc from api.webhook_deliveries v where v.id = p_delivery and v.endpoint_id = p_endpoint;
  if v_doc is null then
    return;
  end if;
  return query select v_doc || jsonb_build_object('attempts', coalesce((
           select jsonb_agg(jsonb_build_object('attempt', a.attempt, 'started_at', app_private.iso_timestamp(a.started_at),
                                               'duration_ms', a.duration_ms, 'response_status', a.response_status,
                                               'error', a.error) order by a.attempt)
             from app.webhook_delivery_attempts a where a.organization_id = v__organization_id and a.delivery_id = p_delivery), '[]'::jsonb));
end
$$;

create or replace function api.webhook_delivery_replay(p_endpoint text, p_delivery text) RETURNS TABLE(doc jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  w app.webhook_endpoints;
  d app.webhook_deliveries;
  e app.events;
  v_id text := app_private.new_id('whd');
begin
  perform app_private.refuse_on_coordinator('api.webhook_delivery_replay(text,text)');
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
  perform app_private.webhook_enqueue(v__organization_id, v_id);
  return query select v.doc from api.webhook_deliveries v where v.id = v_id;
end
$$;

create or replace function api.webhook_endpoint_create(p_id text, p_url text, p_events text[], p_description text, p_secret_sealed text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  insert into app.webhook_endpoints (organization_id, id, client_id, url, events, description, secret_sealed)
  values (v__organization_id, p_id, app.current_client_id(), p_url, p_events, p_description, p_secret_sealed);
  return query select w.doc, w.version from api.webhook_endpoints w where w.id = p_id;
end
$$;

create or replace function api.webhook_endpoint_rotate(p_id text, p_secret_sealed text, p_previous_expires_in_seconds integer) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  w app.webhook_endpoints := app_private.webhook_endpoint_lock(p_id);
  v_previous_expires_at timestamptz := case when p_previous_expires_in_seconds > 0
                                            then now() + make_interval(secs => p_previous_expires_in_seconds) end;
begin
  update app.webhook_endpoints e
     set previous_secret_sealed = case when p_previous_expires_in_seconds > 0 then e.secret_sealed end,
         previous_secret_expires_at = v_previous_expires_at,
         secret_sealed = p_secret_sealed
   where e.organization_id = w.organization_id and e.id = w.id;
  return query select v.doc, v.version from api.webhook_endpoints v where v.id = w.id;
end
$$;

create or replace function api.webhook_endpoint_set_status(p_id text, p_status text, p_verified boolean DEFAULT false) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
$$;

create or replace function api.webhook_endpoint_test(p_endpoint text) RETURNS TABLE(doc jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  w app.webhook_endpoints;
  v_event text;
  v_id text := app_private.new_id('whd');
begin
  perform app_private.refuse_on_coordinator('api.webhook_endpoint_test(text)');
  select * into w from app.webhook_endpoints
   where id = p_endpoint and organization_id = v__organization_id and client_id = app.current_client_id();
  if not found then
    perform app_private.webhook_endpoint_not_found(p_endpoint);
  end if;
  insert into app.events (organization_id, type, resource_type, resource_id, resource_version, target_endpoint_id, client_ids)
  values (w.organization_id, 'webhook_endpoint.test', 'webhook_endpoint', w.id, w.version, w.id, array[w.client_id])
  returning id into v_event;
  insert into app.webhook_deliveries (organization_id, id, client_id, endpoint_id, event_id)
  values (w.organization_id, v_id, w.client_id, w.id, v_event);
  perform app_private.webhook_enqueue(v__organization_id, v_id);
  return query select v.doc from api.webhook_deliveries v where v.id = v_id;
end
$$;

create or replace function api.webhook_endpoint_update(p_id text, p_if_match integer[], p_patch jsonb, p_verified_url text DEFAULT NULL::text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

create or replace function api.task_transition(p_id text, p_transition text, p_completed_at timestamp with time zone, p_subject_member_id text) RETURNS TABLE(doc jsonb, version integer)
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
