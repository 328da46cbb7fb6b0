-- migrate:up

/** Issue 21 (webhook latency). As a SQL function (security definer, so never inlined), the whole CASE
 * with its fifteen api views was planned again at every call: 7.5 ms per event in the fan-out, the
 * largest cost of a delivery (docs/benchmarks.md, "Webhooks: where the tail came from"). In plpgsql
 * each branch's query is planned once per session and only the event's own branch runs. Same rules. */
create or replace function app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text) returns boolean
language plpgsql stable security definer
set search_path = pg_catalog
as $$
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
    when 'payment' then return exists (select from app.payments p where p.id = p_resource_id);
    when 'file' then return exists (select from api.files v where v.id = p_resource_id);
    when 'ticket' then return exists (select from api.tickets v where v.id = p_resource_id);
    when 'ticket_message' then return exists (select from app.ticket_messages m where m.id = p_resource_id);
    when 'report_run' then return exists (select from api.report_runs v where v.id = p_resource_id);
    when 'run' then return exists (select from api.runs v where v.id = p_resource_id);
    when 'conversation_message' then return exists (select from api.conversation_messages v where v.id = p_resource_id);
    else return false;
  end case;
end
$$;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'restore a backup taken before 20261127000300'); end $$;
