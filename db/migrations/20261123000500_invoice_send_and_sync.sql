-- migrate:up

/** Organization invoicing policy (control plane only). */
alter table app.organizations
  add column invoices_require_accounting_connection boolean not null default false,
  add column invoice_number_prefix text not null default 'INV-'
    constraint organizations_invoice_number_prefix_format check (invoice_number_prefix ~ '^[A-Za-z0-9/_-]{0,12}$'),
  add column invoice_payment_terms_days integer not null default 30
    constraint organizations_invoice_payment_terms_range check (invoice_payment_terms_days between 0 and 365);

create function control.org_set_invoice_policy(p_org text, p_require_accounting_connection boolean default null,
                                               p_number_prefix text default null, p_payment_terms_days integer default null)
returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  update app.organizations
     set invoices_require_accounting_connection = coalesce(p_require_accounting_connection, invoices_require_accounting_connection),
         invoice_number_prefix = coalesce(p_number_prefix, invoice_number_prefix),
         invoice_payment_terms_days = coalesce(p_payment_terms_days, invoice_payment_terms_days)
   where id = p_org;
  perform app_private.require_found(found, 'ORGANIZATION_NOT_FOUND', p_org);
end
$$;

/** Totals once per statement, not once per line: a 50-line invoice was 50 updates of its row.
 * Statement triggers with transition tables see every changed line at once. */
drop trigger _900_totals on app.invoice_lines;
create function app_private.invoice_recompute_totals(p_invoices text[]) returns void
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_invoice text;
begin
  -- One invoice at a time (a statement usually touches one): each is two index lookups, where a
  -- set-based join over unnest() is planned for 100 ids and scans every line.
  foreach v_invoice in array p_invoices loop
    update app.invoices i
       set subtotal = t.subtotal, tax_total = t.tax_total, total = t.subtotal + t.tax_total
      from (select coalesce(sum(l.amount), 0) as subtotal, coalesce(sum(l.tax_amount), 0) as tax_total
              from app.invoice_lines l where l.invoice_id = v_invoice) t
     where i.id = v_invoice
       and (i.subtotal, i.tax_total, i.total) is distinct from (t.subtotal, t.tax_total, t.subtotal + t.tax_total);
  end loop;
end
$$;
create function app_private.tg_invoice_lines__totals_changed() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  -- Each branch names its own trigger's transition tables (a branch is planned only when it runs).
  if tg_op = 'INSERT' then
    perform app_private.invoice_recompute_totals(array(select distinct n.invoice_id from inserted_lines n));
  elsif tg_op = 'DELETE' then
    perform app_private.invoice_recompute_totals(array(select distinct o.invoice_id from deleted_lines o));
  else
    perform app_private.invoice_recompute_totals(array(select o.invoice_id from old_lines o union select n.invoice_id from new_lines n));
  end if;
  return null;
end
$$;
create trigger _900_totals_inserted after insert on app.invoice_lines referencing new table as inserted_lines
  for each statement execute function app_private.tg_invoice_lines__totals_changed();
create trigger _900_totals_deleted after delete on app.invoice_lines referencing old table as deleted_lines
  for each statement execute function app_private.tg_invoice_lines__totals_changed();
create trigger _900_totals_updated after update on app.invoice_lines referencing old table as old_lines new table as new_lines
  for each statement execute function app_private.tg_invoice_lines__totals_changed();

/** Lines: the invoice is looked up within the line's organization; a line never moves to another
 * invoice (it would leave an issued one). */
create or replace function app_private.tg_invoice_lines__compute() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  i app.invoices;
begin
  if tg_op = 'UPDATE' and (new.invoice_id, new.organization_id) is distinct from (old.invoice_id, old.organization_id) then
    perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', 'a line stays on its invoice');
  end if;
  select * into i from app.invoices
   where id = coalesce(new.invoice_id, old.invoice_id) and organization_id = coalesce(new.organization_id, old.organization_id);
  if not found then
    perform app_private.invoice_not_found(coalesce(new.invoice_id, old.invoice_id));
  end if;
  if i.status <> 'draft' then
    perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', format('a %s invoice''s lines cannot change', i.status));
  end if;
  if tg_op = 'DELETE' then
    return old;
  end if;
  if scale(new.unit_price) > i.scale then
    perform app_private.raise('SVV22', 'INVALID_INVOICE_LINE',
      format('unit_price has more decimals than %s has minor units (%s)', i.currency, i.scale),
      format('/lines/%s/unit_price', new.position));
  end if;
  new.amount := round(new.quantity * new.unit_price, i.scale);
  new.tax_amount := round(new.amount * new.tax_rate / 100, i.scale);
  return new;
end
$$;

/** Files: the service's own records of stored content. Issue 5 stores invoice PDFs here; the
 * upload and download operations arrive with the Files area. The content lives apart from the
 * record so listings never read it. */
create table app.files (
  organization_id text not null references app.organizations on delete cascade,
  id text primary key default app_private.new_id('fil'),
  name text not null constraint files_name_length check (length(name) between 1 and 255),
  content_type text not null constraint files_content_type_format check (content_type ~ '^[a-z]+/[a-z0-9.+-]+$'),
  size_bytes bigint not null constraint files_size_positive check (size_bytes > 0),
  sha256 text not null constraint files_sha256_format check (sha256 ~ '^[0-9a-f]{64}$'),
  status text not null default 'ready' constraint files_status_valid check (status in ('processing', 'ready', 'archived')),
  linked_resource_type text not null constraint files_linked_resource_type_valid check (linked_resource_type in ('invoice')),
  linked_resource_id text not null,
  -- Posted financial records (an issued invoice's PDF) are kept: no archive, no delete, no change.
  retention text constraint files_retention_valid check (retention in ('financial_record')),
  created_by_client_id text,
  created_at timestamptz not null default now(),
  unique (organization_id, id)
);
create index files_linked on app.files (organization_id, linked_resource_type, linked_resource_id);
create table app.file_contents (
  organization_id text not null,
  file_id text primary key,
  content bytea not null,
  foreign key (organization_id, file_id) references app.files (organization_id, id) on delete cascade
);

/** Size and checksum come from the content itself; retained files never change or go. */
create function app_private.tg_file_contents__check() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  f app.files;
begin
  if tg_op <> 'INSERT' then
    perform app_private.raise('SVC09', 'CONFLICT', 'stored file content never changes');
  end if;
  select * into f from app.files x where x.id = new.file_id;
  if f.size_bytes <> length(new.content) or f.sha256 <> encode(sha256(new.content), 'hex') then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'the content does not match the file''s size and checksum');
  end if;
  return new;
end
$$;
create trigger _050_check before insert or update or delete on app.file_contents
  for each row execute function app_private.tg_file_contents__check();

create function app_private.tg_files__retention() returns trigger
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  if old.retention is not null then
    perform app_private.raise('SVC09', 'CONFLICT', format('%s is a posted financial record: it is kept unchanged', old.id));
  end if;
  return case when tg_op = 'DELETE' then old else new end;
end
$$;
create trigger _040_retention before update or delete on app.files
  for each row execute function app_private.tg_files__retention();

-- Files inherit access from the resource they are linked to (spec Role matrix: Files).
alter table app.files enable row level security;
alter table app.files force row level security;
alter table app.file_contents enable row level security;
alter table app.file_contents force row level security;
create policy "Files are readable where the linked resource is" on app.files for select to svc_runtime
  using (organization_id = (select app.current_organization_id())
         and case linked_resource_type when 'invoice' then (select app.has_any_role('{manager,finance}')) else false end);
create policy "File content is readable where the file is" on app.file_contents for select to svc_runtime
  using (organization_id = (select app.current_organization_id())
         and exists (select from app.files f where f.id = file_id));
grant select on app.files, app.file_contents to svc_runtime;

/** Invoice numbers: one counter per organization, advanced only inside the transaction that issues
 * an invoice. The row lock serializes issuing per organization and a rollback returns the number,
 * so numbers are unique and gapless (issued invoices are never deleted). */
create table app_private.invoice_number_counters (
  organization_id text primary key references app.organizations on delete cascade,
  last_number bigint not null constraint invoice_number_counters_positive check (last_number > 0)
);

alter table app.invoices
  add column sent_at timestamptz,
  add column pdf_file_id text,
  add column sync_connection_id text,
  add column sync_status text constraint invoices_sync_status_valid check (sync_status in ('pending', 'synced', 'failed')),
  add column sync_external_reference text constraint invoices_sync_external_reference_length check (length(sync_external_reference) <= 255),
  add column sync_error text constraint invoices_sync_error_length check (length(sync_error) <= 500),
  add column synced_at timestamptz,
  -- A failed sync whose adapter said the provider does not hold the invoice (versus retries that
  -- ran out with the outcome unknown).
  add column sync_failure_definitive boolean,
  add constraint invoices_paid_means_settled check (status <> 'paid' or amount_paid = total),
  add constraint invoices_sync_has_connection check ((sync_status is null) = (sync_connection_id is null)),
  add foreign key (organization_id, pdf_file_id) references app.files (organization_id, id) on delete restrict,
  add foreign key (organization_id, sync_connection_id) references app.integration_connections (organization_id, id) on delete restrict;

/** One version per transaction: whatever a command writes (fields, lines, totals, a payment) is one
 * new version; a second write of the row in the same transaction keeps it. */
create or replace function app_private.tg_invoices__touch() returns trigger
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  new.updated_at := now();
  new.version := case when old.xmin = pg_current_xact_id()::xid then old.version else old.version + 1 end;
  return new;
end
$$;

/** The accounting connection an organization's invoices synchronize to: organization-owned,
 * accounting, offering invoice.export; the ready one first. */
create function app_private.accounting_connection(p_org text) returns app.integration_connections
language sql stable security definer
set search_path = pg_catalog
as $$
  select c.* from app.integration_connections c
   where c.organization_id = p_org and c.ownership = 'organization' and c.category = 'accounting'
     and 'invoice.export' = any (c.capabilities)
   order by (c.status = 'connected' and c.action_required is null) desc, c.last_success_at desc nulls last, c.id
   limit 1
$$;

create function app_private.accounting_ready(c app.integration_connections) returns boolean
language sql immutable
set search_path = pg_catalog
as $$ select c.id is not null and c.status = 'connected' and c.action_required is null $$;

create function app_private.accounting_not_ready(c app.integration_connections, p_doing text) returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  perform app_private.raise('SVC09', 'ACCOUNTING_CONNECTION_NOT_READY',
    case when c.id is null
      then format('your organization requires an accounting connection to %s, and none offers invoice.export; an administrator connects one in the web settings', p_doing)
      else format('the %s accounting connection %s is %s: %s', c.provider, c.id, c.status,
                  coalesce(c.action_required, 'an administrator must reconnect it in the web settings')) end);
end
$$;

/** Issuing (draft -> sent) and every later status move, for every writer: issuing takes the next
 * number, fixes the dates and starts the accounting sync; a paid invoice is settled; a void one had
 * no payments; nothing goes back to draft. */
create function app_private.tg_invoices__lifecycle() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  o app.organizations;
  c app.integration_connections;
  v_number bigint;
begin
  -- What issuing fixes stays fixed, whatever else the statement changes (a void or a payment too).
  if old.status <> 'draft' then
    if new.number is distinct from old.number or new.sent_at is distinct from old.sent_at then
      perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', 'an issued invoice keeps its number and date');
    end if;
    if old.pdf_file_id is not null and new.pdf_file_id is distinct from old.pdf_file_id then
      perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', 'an issued invoice keeps its PDF');
    end if;
  elsif new.status = 'draft' and (new.number, new.sent_at, new.pdf_file_id, new.sync_status) is distinct from (null, null, null, null) then
    perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', 'a draft has no number, PDF or sync; sending it makes them');
  end if;
  if new.status = old.status then
    return new;
  end if;
  if (old.status, new.status) not in (('draft', 'sent'), ('sent', 'paid'), ('sent', 'void')) then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', format('an invoice does not go from %s to %s', old.status, new.status));
  end if;
  if new.status = 'void' and new.amount_paid > 0 then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', 'an invoice with recorded payments cannot be voided');
  end if;
  if new.status = 'void' and old.sync_status = 'pending' then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED',
      'the invoice is being synchronized to the accounting provider; void it once the sync has finished');
  end if;
  if new.status <> 'sent' then
    return new;
  end if;

  -- Issuing.
  if exists (select from app.customers x where x.id = new.customer_id and x.deleted_at is not null) then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', format('the customer %s was deleted; choose another customer', new.customer_id));
  end if;
  if not exists (select from app.invoice_lines l where l.invoice_id = new.id) then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', 'an invoice without lines has nothing to bill; add lines first');
  end if;
  if new.total <= 0 then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', 'an invoice whose total is zero has nothing to bill');
  end if;
  select * into o from app.organizations x where x.id = new.organization_id;
  c := app_private.accounting_connection(new.organization_id);
  if o.invoices_require_accounting_connection and not app_private.accounting_ready(c) then
    perform app_private.accounting_not_ready(c, 'send invoices');
  end if;
  new.issue_date := coalesce(new.issue_date, (now() at time zone o.timezone)::date);
  new.due_date := coalesce(new.due_date, new.issue_date + o.invoice_payment_terms_days);
  if new.due_date < new.issue_date then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED',
      format('the due date %s is before the issue date %s; update the draft first', new.due_date, new.issue_date));
  end if;
  insert into app_private.invoice_number_counters as n (organization_id, last_number) values (new.organization_id, 1)
  on conflict (organization_id) do update set last_number = n.last_number + 1
  returning n.last_number into v_number;
  new.number := o.invoice_number_prefix || lpad(v_number::text, greatest(6, length(v_number::text)), '0');
  new.sent_at := now();
  if app_private.accounting_ready(c) then
    new.sync_connection_id := c.id;
    new.sync_status := 'pending';
  end if;
  return new;
end
$$;
create trigger _060_lifecycle before update on app.invoices
  for each row execute function app_private.tg_invoices__lifecycle();

/** "PDF generated" is part of issuing: an invoice leaves draft only in a transaction that also
 * stores its PDF (checked at commit, so the PDF can be made after the number is known). */
create function app_private.tg_invoices__pdf_required() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  if exists (select from app.invoices x where x.id = new.id and x.status <> 'draft' and x.pdf_file_id is null) then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', format('%s cannot be issued without its PDF; sendInvoice makes it', new.id));
  end if;
  return null;
end
$$;
create constraint trigger _990_pdf_required after update on app.invoices deferrable initially deferred
  for each row when (old.status = 'draft' and new.status <> 'draft')
  execute function app_private.tg_invoices__pdf_required();

/** The guard no longer lets a supplied number through: issuing assigns it. */
create or replace function app_private.tg_invoices__guard() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  if tg_op = 'DELETE' then
    if old.status <> 'draft' then
      perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', 'issued invoices are never deleted');
    end if;
    return old;
  end if;
  new.scale := (select c.minor_units from app_private.currencies c where c.code = new.currency);
  if tg_op = 'INSERT' then
    -- Every invoice starts as a draft with nothing on it, whoever writes it; the API Client that
    -- creates it is the one in the request context, never a value it supplies.
    if new.status <> 'draft' or new.number is not null then
      perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'invoices are created as drafts', '/status');
    end if;
    new.subtotal := 0;
    new.tax_total := 0;
    new.total := 0;
    new.amount_paid := 0;
    new.sent_at := null;
    new.pdf_file_id := null;
    new.sync_connection_id := null;
    new.sync_status := null;
    new.sync_external_reference := null;
    new.sync_error := null;
    new.synced_at := null;
    new.created_by_client_id := coalesce(app.current_client_id(), new.created_by_client_id);
  end if;
  if (tg_op = 'INSERT' or new.customer_id is distinct from old.customer_id)
     and not exists (select from app.customers c where c.id = new.customer_id and c.kind = 'billing') then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'customer_id must name a billing customer (cus_) of your organization', '/customer_id');
  end if;
  if tg_op = 'UPDATE' and old.status <> 'draft'
     and (new.customer_id, new.currency, new.issue_date, new.due_date, new.memo, new.subtotal, new.tax_total, new.total)
         is distinct from (old.customer_id, old.currency, old.issue_date, old.due_date, old.memo, old.subtotal, old.tax_total, old.total) then
    perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', format('a %s invoice cannot be changed', old.status));
  end if;
  if tg_op = 'UPDATE' and new.currency <> old.currency and exists (select from app.invoice_lines l where l.invoice_id = new.id) then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'the currency of an invoice with lines cannot change', '/currency');
  end if;
  return new;
end
$$;

/** Payments: the version moves with the touch trigger (one per transaction). */
create or replace function app_private.tg_payments__apply() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  i app.invoices;
begin
  new.created_by_client_id := coalesce(app.current_client_id(), new.created_by_client_id);
  -- By id and organization: another organization's invoice is simply not there (no amount, currency
  -- or status leaks through the errors below).
  select * into i from app.invoices where id = new.invoice_id and organization_id = new.organization_id for update;
  if not found then
    perform app_private.invoice_not_found(new.invoice_id);
  end if;
  if i.status not in ('sent', 'paid') then
    perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', format('a %s invoice takes no payments', i.status));
  end if;
  if new.currency <> i.currency then
    perform app_private.raise('SVV22', 'CURRENCY_MISMATCH', format('the invoice is in %s', i.currency), '/currency');
  end if;
  if scale(new.amount) > i.scale then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', format('amount has more decimals than %s has minor units (%s)', i.currency, i.scale), '/amount');
  end if;
  if new.amount > i.total - i.amount_paid then
    perform app_private.raise('SVV22', 'PAYMENT_EXCEEDS_AMOUNT_DUE',
      format('the amount due is %s %s', app_private.money_text(i.total - i.amount_paid, i.scale), i.currency), '/amount');
  end if;
  update app.invoices
     set amount_paid = amount_paid + new.amount,
         status = case when amount_paid + new.amount = total then 'paid' else status end
   where id = i.id;
  return new;
end
$$;

/** The accounting sync is a background job (graphile-worker), queued in the transaction that
 * issues or voids a synchronized invoice. */
create function app_private.tg_invoices__queue_sync() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  if new.sync_status = 'pending' and old.sync_status is distinct from 'pending' then
    perform graphile_worker.add_job('accounting_sync',
      json_build_object('invoice_id', new.id, 'action', case when new.status = 'void' then 'void' else 'export' end),
      job_key => 'accounting_sync:' || new.id, max_attempts => 8);
  end if;
  return null;
end
$$;
create trigger _900_queue_sync after update on app.invoices
  for each row execute function app_private.tg_invoices__queue_sync();

/** The view adds number, sending, PDF and the provider-neutral accounting sync (no provider
 * tokens exist here to leak). */
create or replace view api.invoices with (security_invoker = true) as
select i.organization_id, i.id, i.status, i.customer_id, i.currency, i.issue_date, i.due_date, i.created_at, i.version, i.number,
       jsonb_build_object('object', 'invoice', 'id', i.id, 'number', i.number, 'status', i.status, 'customer_id', i.customer_id,
         'issue_date', i.issue_date, 'due_date', i.due_date, 'currency', i.currency, 'memo', i.memo,
         'lines', coalesce((select jsonb_agg(jsonb_build_object('id', l.id, 'description', l.description,
                                    'quantity', l.quantity::text, 'unit_price', app_private.money_text(l.unit_price, i.scale),
                                    'tax_rate', l.tax_rate::text, 'amount', app_private.money_text(l.amount, i.scale),
                                    'tax_amount', app_private.money_text(l.tax_amount, i.scale)) order by l.position)
                              from app.invoice_lines l where l.invoice_id = i.id), '[]'::jsonb),
         'subtotal', app_private.money_text(i.subtotal, i.scale), 'tax_total', app_private.money_text(i.tax_total, i.scale),
         'total', app_private.money_text(i.total, i.scale),
         'amount_paid', app_private.money_text(i.amount_paid, i.scale),
         'amount_due', app_private.money_text(case when i.status = 'void' then 0 else i.total - i.amount_paid end, i.scale),
         'sent_at', app_private.iso_timestamp(i.sent_at),
         'pdf_file_id', i.pdf_file_id,
         'accounting_sync', case when i.sync_status is not null then jsonb_build_object(
           'status', i.sync_status, 'connection_id', i.sync_connection_id, 'external_reference', i.sync_external_reference,
           'synced_at', app_private.iso_timestamp(i.synced_at), 'error', i.sync_error) end,
         'version', i.version,
         'created_at', app_private.iso_timestamp(i.created_at), 'updated_at', app_private.iso_timestamp(i.updated_at)) as doc
  from app.invoices i;

/** sendInvoice, the database half: checks, then issues (the lifecycle trigger numbers it). Returns
 * what the PDF and the email need. The caller renders the PDF, attaches it with
 * api.invoice_attach_pdf and hands the email over before committing; a refused email rolls all
 * of it back, number included. */
create function api.invoice_send(p_id text, p_email boolean) returns jsonb
language plpgsql volatile security definer
set search_path = pg_catalog
-- Another send of the same organization holds the number counter until its SMTP server answers:
-- wait a little, then answer 409 CONFLICT with Retry-After rather than hold a connection longer.
set lock_timeout = '5s'
as $$
declare
  i app.invoices;
  c app.customers;
  o app.organizations;
begin
  select * into i from app.invoices x
   where x.id = p_id and x.organization_id = app.current_organization_id() and app.has_any_role('{manager,finance}')
   for update;
  if not found then
    perform app_private.invoice_not_found(p_id);
  end if;
  if i.status <> 'draft' then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', format('the invoice is already %s (%s); only a draft is sent', i.status, i.number));
  end if;
  select * into c from app.customers x where x.id = i.customer_id;
  if p_email and c.deleted_at is null and c.delivery_email is null then
    perform app_private.raise('SVV22', 'CUSTOMER_DELIVERY_DETAILS_MISSING',
      format('the customer %s has no delivery email; an administrator adds one, or send with delivery.email false and deliver the PDF yourself', c.id),
      '/delivery/email');
  end if;
  update app.invoices x set status = 'sent' where x.id = i.id returning * into i;
  select * into o from app.organizations x where x.id = i.organization_id;
  return jsonb_build_object(
    'invoice', (select v.doc from api.invoices v where v.id = i.id),
    'organization', jsonb_build_object('name', o.name, 'locale', o.locale),
    'customer', jsonb_build_object('id', c.id, 'name', c.name, 'email', c.delivery_email));
end
$$;
grant execute on function api.invoice_send(text, boolean) to svc_runtime;

/** The issued invoice's PDF: stored as a retained file linked to the invoice (size and checksum
 * computed here from the bytes). Once per invoice. */
create function api.invoice_attach_pdf(p_id text, p_name text, p_content bytea) returns text
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  i app.invoices;
  v_file text;
begin
  select * into i from app.invoices x
   where x.id = p_id and x.organization_id = app.current_organization_id() and app.has_any_role('{manager,finance}')
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
  update app.invoices x set pdf_file_id = v_file where x.id = i.id;
  return v_file;
end
$$;
grant execute on function api.invoice_attach_pdf(text, text, bytea) to svc_runtime;

/** voidInvoice with the accounting provider's constraints: not while a sync is in flight; a
 * synchronized invoice needs a ready connection that can void, and the void is synchronized too. */
create or replace function api.invoice_void(p_id text) returns table (doc jsonb, version integer)
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  i app.invoices;
  c app.integration_connections;
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
    if i.sync_status = 'pending' then
      perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED',
        'the invoice is being synchronized to the accounting provider; void it once the sync has finished');
    end if;
    if i.sync_status = 'failed' and not coalesce(i.sync_failure_definitive, false) then
      perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED',
        'the last accounting sync ended without a definite answer, so the provider may hold this invoice; an administrator synchronizes it again first');
    end if;
    if i.sync_status = 'synced' then
      select * into c from app.integration_connections x where x.id = i.sync_connection_id;
      if not app_private.accounting_ready(c) then
        perform app_private.accounting_not_ready(c, 'void a synchronized invoice');
      end if;
      if not 'invoice.void' = any (c.capabilities) then
        perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED',
          format('the %s connection cannot void invoices (no invoice.void capability); an administrator enables voiding on the connection', c.provider));
      end if;
      update app.invoices x set status = 'void', sync_status = 'pending', sync_error = null where x.id = i.id;
    else
      update app.invoices x set status = 'void' where x.id = i.id;
    end if;
  end if;
  return query select v.doc, v.version from api.invoices v where v.id = i.id;
end
$$;

/** The worker's side of the sync (owner connection): what to send, and the outcome. */
create function app_private.accounting_sync_load(p_invoice text) returns jsonb
language sql stable
set search_path = pg_catalog
as $$
  select jsonb_build_object('invoice', v.doc, 'provider', c.provider, 'connection_id', c.id, 'connection_status', c.status,
                            'sync_status', i.sync_status, 'external_reference', i.sync_external_reference,
                            'customer', jsonb_build_object('id', cu.id, 'name', cu.name, 'email', cu.delivery_email))
    from app.invoices i
    join api.invoices v on v.id = i.id
    join app.integration_connections c on c.id = i.sync_connection_id
    join app.customers cu on cu.id = i.customer_id
   where i.id = p_invoice
$$;

create function app_private.accounting_sync_record(p_invoice text, p_ok boolean, p_external_reference text, p_error text,
                                                   p_definitive boolean default false)
returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  update app.invoices
     set sync_status = case when p_ok then 'synced' else 'failed' end,
         sync_external_reference = coalesce(p_external_reference, sync_external_reference),
         sync_error = case when p_ok then null else left(p_error, 500) end,
         sync_failure_definitive = case when p_ok then null else p_definitive end,
         synced_at = case when p_ok then now() else synced_at end
   where id = p_invoice and sync_status = 'pending';
  if p_ok then
    update app.integration_connections c set last_success_at = now()
      from app.invoices i where i.id = p_invoice and c.id = i.sync_connection_id;
  end if;
end
$$;

/** Control plane: queue a failed accounting sync again (after the provider problem is fixed). */
create function control.invoice_sync_retry(p_invoice text) returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  i app.invoices;
  c app.integration_connections;
begin
  select * into i from app.invoices where id = p_invoice for update;
  if i.sync_status = 'failed' then
    update app.invoices set sync_status = 'pending', sync_error = null, sync_failure_definitive = null where id = p_invoice;
    return;
  end if;
  -- Issued while no accounting connection was ready: export it now that one is.
  if i.sync_status is null and i.status in ('sent', 'paid') then
    c := app_private.accounting_connection(i.organization_id);
    if app_private.accounting_ready(c) then
      update app.invoices set sync_connection_id = c.id, sync_status = 'pending' where id = p_invoice;
      return;
    end if;
  end if;
  perform app_private.raise('SVC18', 'INVOICE_SYNC_NOT_FAILED',
    format('%s has no failed accounting sync (and is not an issued invoice waiting for a ready accounting connection)', p_invoice));
end
$$;

-- Events: invoice.* and payment.*.
insert into app_private.event_types (name, resource_type, emitted_by, description, subscribable) values
  ('invoice.created', 'invoice', '{createInvoice}', 'A draft invoice was created.', true),
  ('invoice.updated', 'invoice', '{updateInvoice,replaceInvoiceLines,createPayment}', 'A draft changed, a partial payment lowered the amount due, or the accounting sync status changed.', true),
  ('invoice.sent', 'invoice', '{sendInvoice}', 'An invoice was issued: numbered, its PDF stored and (when asked) emailed.', true),
  ('invoice.paid', 'invoice', '{createPayment}', 'Recorded payments settled an invoice.', true),
  ('invoice.voided', 'invoice', '{voidInvoice}', 'An issued invoice was voided (it is kept).', true),
  ('payment.created', 'payment', '{createPayment}', 'A payment received outside the service was recorded.', true);

create function app_private.tg_invoices__emit() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  if tg_op = 'INSERT' then
    perform app_private.emit_event(new.organization_id, 'invoice.created', 'invoice', new.id, new.version);
  elsif new.version <> old.version or new.status <> old.status then
    perform app_private.emit_event(new.organization_id,
      case when new.status = old.status then 'invoice.updated'
           when new.status = 'sent' then 'invoice.sent'
           when new.status = 'paid' then 'invoice.paid'
           when new.status = 'void' then 'invoice.voided'
           else 'invoice.updated' end,
      'invoice', new.id, new.version);
  end if;
  return null;
end
$$;
create trigger _950_emit_event after insert or update on app.invoices
  for each row execute function app_private.tg_invoices__emit();

create function app_private.tg_payments__emit() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  perform app_private.emit_event(new.organization_id, 'payment.created', 'payment', new.id, 1);
  return null;
end
$$;
create trigger _950_emit_event after insert on app.payments
  for each row execute function app_private.tg_payments__emit();

create or replace function app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text) returns boolean
language sql stable
set search_path = pg_catalog
as $$
  select case p_resource_type
    when 'project' then exists (select from api.projects v where v.id = p_resource_id)
    when 'task' then exists (select from api.tasks v where v.id = p_resource_id)
    when 'time_entry' then case when p_type = 'time_entry.deleted' then app_private.may_read_time_entries()
                                else exists (select from api.time_entries v where v.id = p_resource_id and v.deleted_at is null) end
    when 'approval' then exists (select from api.approvals v where v.id = p_resource_id)
    when 'webhook_endpoint' then exists (select from api.webhook_endpoints v where v.id = p_resource_id)
    when 'integration_connection' then exists (select from api.integration_connections v where v.id = p_resource_id)
    when 'invoice' then exists (select from api.invoices v where v.id = p_resource_id)
    when 'payment' then exists (select from app.payments p where p.id = p_resource_id)
    else false end
$$;

-- migrate:down
drop trigger _900_totals_updated on app.invoice_lines;
drop trigger _900_totals_deleted on app.invoice_lines;
drop trigger _900_totals_inserted on app.invoice_lines;
drop function app_private.tg_invoice_lines__totals_changed();
drop function app_private.invoice_recompute_totals(text[]);
create trigger _900_totals after insert or update or delete on app.invoice_lines
  for each row execute function app_private.tg_invoice_lines__totals();
drop function control.invoice_sync_retry(text);
drop trigger _990_pdf_required on app.invoices;
drop function app_private.tg_invoices__pdf_required();
drop trigger _950_emit_event on app.payments;
drop function app_private.tg_payments__emit();
drop trigger _950_emit_event on app.invoices;
drop function app_private.tg_invoices__emit();
delete from app_private.event_types where resource_type in ('invoice', 'payment');
drop function app_private.accounting_sync_record(text, boolean, text, text, boolean);
drop function app_private.accounting_sync_load(text);
drop function api.invoice_attach_pdf(text, text, bytea);
drop function api.invoice_send(text, boolean);
drop trigger _900_queue_sync on app.invoices;
drop function app_private.tg_invoices__queue_sync();
drop trigger _060_lifecycle on app.invoices;
drop function app_private.tg_invoices__lifecycle();
drop function app_private.accounting_not_ready(app.integration_connections, text);
drop function app_private.accounting_ready(app.integration_connections);
drop function app_private.accounting_connection(text);
