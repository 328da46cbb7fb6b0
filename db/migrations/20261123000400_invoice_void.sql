-- migrate:up

/** voidInvoice: an issued invoice without payments becomes void (never deleted); voiding a void
 * invoice again returns it unchanged. Security definer: the runtime role cannot write statuses. */
create function api.invoice_void(p_id text) returns table (doc jsonb, version integer)
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  i app.invoices;
begin
  select * into i from app.invoices x
   where x.id = p_id and x.organization_id = app.current_organization_id() and app.has_any_role('{manager,finance}')
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
    update app.invoices x set status = 'void' where x.id = i.id;
  end if;
  return query select v.doc, v.version from api.invoices v where v.id = i.id;
end
$$;
grant execute on function api.invoice_void(text) to svc_runtime;

-- migrate:down
drop function api.invoice_void(text);
