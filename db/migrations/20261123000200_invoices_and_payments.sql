-- migrate:up

/** ISO 4217 currencies and their minor units (the scale of every amount in that currency). */
create table app_private.currencies (
  code text primary key constraint currencies_code_format check (code ~ '^[A-Z]{3}$'),
  minor_units smallint not null constraint currencies_minor_units_range check (minor_units between 0 and 4)
);
insert into app_private.currencies (code, minor_units)
select c, 2 from unnest('{AED,AFN,ALL,AMD,ANG,AOA,ARS,AUD,AWG,AZN,BAM,BBD,BDT,BGN,BMD,BND,BOB,BRL,BSD,BTN,BWP,BYN,BZD,CAD,CDF,CHF,CNY,COP,CRC,CUP,CVE,CZK,DKK,DOP,DZD,EGP,ERN,ETB,EUR,FJD,FKP,GBP,GEL,GHS,GIP,GMD,GTQ,GYD,HKD,HNL,HTG,HUF,IDR,ILS,INR,IRR,JMD,KES,KGS,KHR,KPW,KYD,KZT,LAK,LBP,LKR,LRD,LSL,MAD,MDL,MGA,MKD,MMK,MNT,MOP,MRU,MUR,MVR,MWK,MXN,MYR,MZN,NAD,NGN,NIO,NOK,NPR,NZD,PAB,PEN,PGK,PHP,PKR,PLN,QAR,RON,RSD,RUB,SAR,SBD,SCR,SDG,SEK,SGD,SHP,SLE,SOS,SRD,SSP,STN,SVC,SYP,SZL,THB,TJS,TMT,TOP,TRY,TTD,TWD,TZS,UAH,USD,UYU,UZS,VES,WST,XCD,YER,ZAR,ZMW,ZWL}'::text[]) c
union all
select c, 0 from unnest('{BIF,CLP,DJF,GNF,ISK,JPY,KMF,KRW,PYG,RWF,UGX,VND,VUV,XAF,XOF,XPF}'::text[]) c
union all
select c, 3 from unnest('{BHD,IQD,JOD,KWD,LYD,OMR,TND}'::text[]) c;
grant select on app_private.currencies to svc_runtime;

/** Decimal string at exactly the currency's scale: 12.50 EUR, 1000 JPY, 1.250 KWD. */
create function app_private.money_text(p_amount numeric, p_scale integer) returns text
language sql immutable parallel safe
as $$ select pg_catalog.round(p_amount, p_scale)::text $$;
grant execute on function app_private.money_text(numeric, integer) to svc_runtime;

alter table app.customers add constraint customers_organization_id_id_unique unique (organization_id, id);

/** Invoices. Statuses: draft (editable) -> sent (issued; amount_due > 0) -> paid (issued; nothing
 * due); an issued invoice can be voided (void: issued, cancelled, nothing due). Issued invoices are
 * never deleted. Totals are kept by triggers from the lines: each line's amount and tax are rounded
 * half-up to the currency's minor units, then summed (Xero/Stripe "round per line"). */
create table app.invoices (
  organization_id text not null references app.organizations on delete cascade,
  id text primary key default app_private.new_id('inv'),
  number text,
  status text not null default 'draft'
    constraint invoices_status_valid check (status in ('draft', 'sent', 'paid', 'void')),
  customer_id text not null,
  currency text not null references app_private.currencies,
  scale smallint not null,
  issue_date date,
  due_date date,
  memo text constraint invoices_memo_length check (length(memo) <= 5000),
  subtotal numeric not null default 0,
  tax_total numeric not null default 0,
  total numeric not null default 0,
  amount_paid numeric not null default 0,
  created_by_client_id text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  version integer not null default 1,
  constraint invoices_dates_ordered check (due_date is null or issue_date is null or due_date >= issue_date),
  -- Credit notes are not invoices: lines may credit, but the total is never negative.
  constraint invoices_total_not_negative check (total >= 0),
  constraint invoices_paid_within_total check (amount_paid >= 0 and amount_paid <= greatest(total, 0)),
  constraint invoices_issued_has_number check ((status = 'draft') = (number is null)),
  foreign key (organization_id, customer_id) references app.customers (organization_id, id) on delete restrict,
  unique (organization_id, id)
);
create unique index invoices_number_unique on app.invoices (organization_id, number) where number is not null;
create index invoices_org_created on app.invoices (organization_id, created_at, id);
/** One version per command: updates made by other triggers (the line totals) do not count; a
 * payment bumps the version itself. */
create function app_private.tg_invoices__touch() returns trigger
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  new.updated_at := now();
  if pg_trigger_depth() = 1 then
    new.version := old.version + 1;
  end if;
  return new;
end
$$;
create trigger _100_touch_version before update on app.invoices
  for each row execute function app_private.tg_invoices__touch();

/** The scale follows the currency; an invoice's fields change only while it is a draft (amount_paid
 * and the status moves of payments and issuing excepted); issued invoices are never deleted. */
create function app_private.tg_invoices__guard() returns trigger
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
create trigger _050_guard before insert or update or delete on app.invoices
  for each row execute function app_private.tg_invoices__guard();

create table app.invoice_lines (
  organization_id text not null,
  id text primary key default app_private.new_id('invl'),
  invoice_id text not null,
  position integer not null,
  description text not null constraint invoice_lines_description_length check (length(description) between 1 and 1000),
  quantity numeric not null
    constraint invoice_lines_quantity_range check (quantity > 0 and quantity < 1000000000 and scale(quantity) <= 4),
  unit_price numeric not null constraint invoice_lines_unit_price_range check (abs(unit_price) < 1000000000000),
  tax_rate numeric not null default 0
    constraint invoice_lines_tax_rate_range check (tax_rate >= 0 and tax_rate <= 100 and scale(tax_rate) <= 4),
  amount numeric not null,
  tax_amount numeric not null,
  foreign key (organization_id, invoice_id) references app.invoices (organization_id, id) on delete cascade,
  unique (invoice_id, position)
);

/** Line amounts come from the database, never from the writer; lines change only on drafts. */
create function app_private.tg_invoice_lines__compute() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  i app.invoices;
begin
  select * into i from app.invoices where id = coalesce(new.invoice_id, old.invoice_id);
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
create trigger _100_compute before insert or update or delete on app.invoice_lines
  for each row execute function app_private.tg_invoice_lines__compute();

/** The invoice's totals: the sums of the rounded line amounts, in the same statement. */
create function app_private.tg_invoice_lines__totals() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_invoice text := coalesce(new.invoice_id, old.invoice_id);
begin
  update app.invoices i
     set subtotal = t.subtotal, tax_total = t.tax_total, total = t.subtotal + t.tax_total
    from (select coalesce(sum(l.amount), 0) as subtotal, coalesce(sum(l.tax_amount), 0) as tax_total
            from app.invoice_lines l where l.invoice_id = v_invoice) t
   where i.id = v_invoice
     and (i.subtotal, i.tax_total, i.total) is distinct from (t.subtotal, t.tax_total, t.subtotal + t.tax_total);
  return null;
end
$$;
create trigger _900_totals after insert or update or delete on app.invoice_lines
  for each row execute function app_private.tg_invoice_lines__totals();

/** Payments received outside the service (nothing is charged). */
create table app.payments (
  organization_id text not null,
  id text primary key default app_private.new_id('pay'),
  invoice_id text not null,
  amount numeric not null constraint payments_amount_positive check (amount > 0),
  currency text not null,
  received_date date not null,
  method text not null constraint payments_method_length check (length(method) between 1 and 50),
  external_reference text constraint payments_external_reference_length check (length(external_reference) <= 255),
  created_by_client_id text not null,
  created_at timestamptz not null default now(),
  foreign key (organization_id, invoice_id) references app.invoices (organization_id, id) on delete restrict
);
create index payments_invoice on app.payments (invoice_id);

/** A payment updates the invoice in the same transaction, under the invoice's row lock, so
 * concurrent payments can never take amount_due below zero. */
create function app_private.tg_payments__apply() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  i app.invoices;
begin
  new.created_by_client_id := coalesce(app.current_client_id(), new.created_by_client_id);
  select * into i from app.invoices where id = new.invoice_id for update;
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
     set version = version + 1,
         amount_paid = amount_paid + new.amount,
         status = case when amount_paid + new.amount = total then 'paid' else status end
   where id = i.id;
  return new;
end
$$;
create trigger _100_apply before insert on app.payments
  for each row execute function app_private.tg_payments__apply();

create function app_private.tg_payments__immutable() returns trigger
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  perform app_private.raise('SVC09', 'CONFLICT', 'payments are records: they are never changed or deleted');
end
$$;
create trigger _050_immutable before update or delete on app.payments
  for each row execute function app_private.tg_payments__immutable();

-- Row policies: manager or finance, in the caller's organization; nobody else.
alter table app.invoices enable row level security;
alter table app.invoices force row level security;
alter table app.invoice_lines enable row level security;
alter table app.invoice_lines force row level security;
alter table app.payments enable row level security;
alter table app.payments force row level security;
create policy "Managers and finance read invoices" on app.invoices for select to svc_runtime
  using (organization_id = (select app.current_organization_id()) and (select app.has_any_role('{manager,finance}')));
create policy "Managers and finance write invoices" on app.invoices for insert to svc_runtime
  with check (organization_id = (select app.current_organization_id()) and (select app.has_any_role('{manager,finance}')));
create policy "Managers and finance change invoices" on app.invoices for update to svc_runtime
  using (organization_id = (select app.current_organization_id()) and (select app.has_any_role('{manager,finance}')))
  with check (organization_id = (select app.current_organization_id()) and (select app.has_any_role('{manager,finance}')));
create policy "Managers and finance read lines" on app.invoice_lines for select to svc_runtime
  using (organization_id = (select app.current_organization_id()) and (select app.has_any_role('{manager,finance}')));
create policy "Managers and finance write lines" on app.invoice_lines for insert to svc_runtime
  with check (organization_id = (select app.current_organization_id()) and (select app.has_any_role('{manager,finance}')));
create policy "Managers and finance delete draft lines" on app.invoice_lines for delete to svc_runtime
  using (organization_id = (select app.current_organization_id()) and (select app.has_any_role('{manager,finance}')));
create policy "Managers and finance read payments" on app.payments for select to svc_runtime
  using (organization_id = (select app.current_organization_id()) and (select app.has_any_role('{manager,finance}')));
create policy "Managers and finance record payments" on app.payments for insert to svc_runtime
  with check (organization_id = (select app.current_organization_id()) and (select app.has_any_role('{manager,finance}')));
-- No delete on invoices, no update on lines or payments; totals and amount_paid are not writable.
grant select on app.invoices to svc_runtime;
grant update (customer_id, currency, issue_date, due_date, memo) on app.invoices to svc_runtime;
grant select, insert (organization_id, invoice_id, position, description, quantity, unit_price, tax_rate), delete
  on app.invoice_lines to svc_runtime;
grant select, insert (organization_id, invoice_id, amount, currency, received_date, method, external_reference, created_by_client_id)
  on app.payments to svc_runtime;
grant insert (organization_id, customer_id, currency, issue_date, due_date, memo, created_by_client_id) on app.invoices to svc_runtime;

create view api.invoices with (security_invoker = true) as
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
         'version', i.version,
         'created_at', app_private.iso_timestamp(i.created_at), 'updated_at', app_private.iso_timestamp(i.updated_at)) as doc
  from app.invoices i;
grant select on api.invoices to svc_runtime;

create function app_private.invoice_not_found(p_id text) returns void
language sql volatile
set search_path = pg_catalog
as $$ select app_private.raise('SVN04', 'INVOICE_NOT_FOUND', format('no invoice %s in your organization', p_id)) $$;
grant execute on function app_private.invoice_not_found(text) to svc_runtime;

/** Lines of a body, validated together: every problem reported with its pointer. */
create function app_private.invoice_lines_errors(p_lines jsonb, p_scale integer) returns jsonb
language plpgsql immutable
set search_path = pg_catalog
as $$
declare
  v_errors jsonb := '[]';
  l jsonb;
  i integer := 0;
  k text;
begin
  if jsonb_typeof(p_lines) <> 'array' or jsonb_array_length(p_lines) > 200 then
    return app_private.error('/lines', 'INVALID_INVOICE_LINE', 'lines: an array of at most 200 lines');
  end if;
  for l in select * from jsonb_array_elements(p_lines) loop
    for k in select jsonb_object_keys(l) loop
      if k not in ('description', 'quantity', 'unit_price', 'tax_rate') then
        v_errors := v_errors || app_private.error(format('/lines/%s/%s', i, k), 'INVALID_INVOICE_LINE',
          case when k in ('amount', 'tax_amount', 'subtotal', 'tax_total', 'total', 'amount_due', 'id')
               then format('%s is calculated by the service and cannot be supplied', k)
               else format('unknown line field %s', k) end);
      end if;
    end loop;
    if coalesce(jsonb_typeof(l -> 'description'), '') <> 'string' or length(l ->> 'description') not between 1 and 1000 then
      v_errors := v_errors || app_private.error(format('/lines/%s/description', i), 'INVALID_INVOICE_LINE', 'description: 1 to 1000 characters');
    end if;
    if coalesce(jsonb_typeof(l -> 'quantity'), '') <> 'string' or (l ->> 'quantity') !~ '^\d{1,9}(\.\d{1,4})?$' or (l ->> 'quantity')::numeric = 0 then
      v_errors := v_errors || app_private.error(format('/lines/%s/quantity', i), 'INVALID_INVOICE_LINE',
        'quantity: a positive decimal string with at most 4 decimals');
    end if;
    if coalesce(jsonb_typeof(l -> 'unit_price'), '') <> 'string' or (l ->> 'unit_price') !~ '^-?\d{1,12}(\.\d+)?$'
       or scale((l ->> 'unit_price')::numeric) > p_scale then
      v_errors := v_errors || app_private.error(format('/lines/%s/unit_price', i), 'INVALID_INVOICE_LINE',
        format('unit_price: a decimal string with at most %s decimals (the currency''s minor units)', p_scale));
    end if;
    if l ? 'tax_rate' and (coalesce(jsonb_typeof(l -> 'tax_rate'), '') <> 'string' or (l ->> 'tax_rate') !~ '^\d{1,3}(\.\d{1,4})?$'
                           or (l ->> 'tax_rate')::numeric > 100) then
      v_errors := v_errors || app_private.error(format('/lines/%s/tax_rate', i), 'INVALID_INVOICE_LINE',
        'tax_rate: a percentage from "0" to "100" with at most 4 decimals');
    end if;
    i := i + 1;
  end loop;
  return v_errors;
end
$$;

create function app_private.invoice_set_lines(p_invoice app.invoices, p_lines jsonb) returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  perform app_private.raise_errors(app_private.invoice_lines_errors(p_lines, p_invoice.scale));
  delete from app.invoice_lines where invoice_id = p_invoice.id;
  insert into app.invoice_lines (organization_id, invoice_id, position, description, quantity, unit_price, tax_rate)
  select p_invoice.organization_id, p_invoice.id, (o - 1)::integer, l ->> 'description', (l ->> 'quantity')::numeric,
         (l ->> 'unit_price')::numeric, coalesce((l ->> 'tax_rate')::numeric, 0)
    from jsonb_array_elements(p_lines) with ordinality as x(l, o);
end
$$;
grant execute on function app_private.invoice_set_lines(app.invoices, jsonb) to svc_runtime;
grant execute on function app_private.invoice_lines_errors(jsonb, integer) to svc_runtime;

create function api.invoice_create(p_body jsonb) returns table (doc jsonb, version integer)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  c app.customers;
  i app.invoices;
  v_currency text;
begin
  select * into c from app.customers x where x.id = p_body ->> 'customer_id' and x.kind = 'billing' and x.deleted_at is null;
  if not found then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'customer_id must name a billing customer (cus_) of your organization', '/customer_id');
  end if;
  v_currency := coalesce(p_body ->> 'currency', c.currency,
                         (select o.currency from app.organizations o where o.id = app.current_organization_id()));
  if not exists (select from app_private.currencies x where x.code = v_currency) then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', format('%s is not an ISO 4217 currency code', v_currency), '/currency');
  end if;
  insert into app.invoices (organization_id, customer_id, currency, issue_date, due_date, memo, created_by_client_id)
  values (app.current_organization_id(), c.id, v_currency, (p_body ->> 'issue_date')::date, (p_body ->> 'due_date')::date,
          p_body ->> 'memo', app.current_client_id())
  returning * into i;
  perform app_private.invoice_set_lines(i, coalesce(p_body -> 'lines', '[]'));
  return query select v.doc, v.version from api.invoices v where v.id = i.id;
end
$$;
grant execute on function api.invoice_create(jsonb) to svc_runtime;

create function app_private.invoice_lock(p_id text, p_if_match integer[]) returns app.invoices
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  i app.invoices;
begin
  select * into i from app.invoices where id = p_id for update;
  if not found then
    perform app_private.invoice_not_found(p_id);
  end if;
  perform app_private.check_if_match(i.version, p_if_match);
  if i.status <> 'draft' then
    perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', format('a %s invoice cannot be changed', i.status));
  end if;
  return i;
end
$$;
grant execute on function app_private.invoice_lock(text, integer[]) to svc_runtime;

create function api.invoice_update(p_id text, p_if_match integer[], p_patch jsonb) returns table (doc jsonb, version integer)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  i app.invoices := app_private.invoice_lock(p_id, p_if_match);
begin
  if p_patch ? 'customer_id' and not exists (select from app.customers x where x.id = p_patch ->> 'customer_id'
                                               and x.kind = 'billing' and x.deleted_at is null) then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'customer_id must name a billing customer (cus_) of your organization', '/customer_id');
  end if;
  if p_patch ? 'currency' and not exists (select from app_private.currencies x where x.code = p_patch ->> 'currency') then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', format('%s is not an ISO 4217 currency code', p_patch ->> 'currency'), '/currency');
  end if;
  update app.invoices x
     set customer_id = case when p_patch ? 'customer_id' then p_patch ->> 'customer_id' else x.customer_id end,
         currency = case when p_patch ? 'currency' then p_patch ->> 'currency' else x.currency end,
         issue_date = case when p_patch ? 'issue_date' then (p_patch ->> 'issue_date')::date else x.issue_date end,
         due_date = case when p_patch ? 'due_date' then (p_patch ->> 'due_date')::date else x.due_date end,
         memo = case when p_patch ? 'memo' then p_patch ->> 'memo' else x.memo end
   where x.id = i.id;
  if p_patch ? 'lines' then
    select * into i from app.invoices x where x.id = p_id;
    perform app_private.invoice_set_lines(i, p_patch -> 'lines');
  end if;
  return query select v.doc, v.version from api.invoices v where v.id = i.id;
end
$$;
grant execute on function api.invoice_update(text, integer[], jsonb) to svc_runtime;

create function api.invoice_replace_lines(p_id text, p_if_match integer[], p_lines jsonb) returns table (doc jsonb, version integer)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  i app.invoices := app_private.invoice_lock(p_id, p_if_match);
begin
  perform app_private.invoice_set_lines(i, p_lines);
  -- The lines are part of the invoice: replacing them is a new version even when the totals stay.
  update app.invoices x set memo = x.memo where x.id = i.id;
  return query select v.doc, v.version from api.invoices v where v.id = i.id;
end
$$;
grant execute on function api.invoice_replace_lines(text, integer[], jsonb) to svc_runtime;

create function api.payment_create(p_body jsonb) returns table (doc jsonb)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  p app.payments;
begin
  if not exists (select from app.invoices x where x.id = p_body ->> 'invoice_id') then
    perform app_private.invoice_not_found(p_body ->> 'invoice_id');
  end if;
  insert into app.payments (organization_id, invoice_id, amount, currency, received_date, method, external_reference, created_by_client_id)
  values (app.current_organization_id(), p_body ->> 'invoice_id', (p_body ->> 'amount')::numeric, p_body ->> 'currency',
          (p_body ->> 'received_date')::date, p_body ->> 'method', p_body ->> 'external_reference', app.current_client_id())
  returning * into p;
  return query select jsonb_build_object('object', 'payment', 'id', p.id, 'invoice_id', p.invoice_id,
    'amount', app_private.money_text(p.amount, i.scale), 'currency', p.currency, 'received_date', p.received_date,
    'method', p.method, 'external_reference', p.external_reference, 'created_at', app_private.iso_timestamp(p.created_at),
    'invoice', v.doc)
    from app.invoices i join api.invoices v on v.id = i.id where i.id = p.invoice_id;
end
$$;
grant execute on function api.payment_create(jsonb) to svc_runtime;

-- migrate:down
drop function api.payment_create(jsonb);
drop function api.invoice_replace_lines(text, integer[], jsonb);
drop function api.invoice_update(text, integer[], jsonb);
drop function app_private.invoice_lock(text, integer[]);
drop function api.invoice_create(jsonb);
drop function app_private.invoice_set_lines(app.invoices, jsonb);
drop function app_private.invoice_lines_errors(jsonb, integer);
drop function app_private.invoice_not_found(text);
drop view api.invoices;
drop table app.payments;
drop function app_private.tg_payments__immutable();
drop function app_private.tg_payments__apply();
drop table app.invoice_lines;
drop function app_private.tg_invoice_lines__totals();
drop function app_private.tg_invoice_lines__compute();
drop table app.invoices;
drop function app_private.tg_invoices__guard();
drop function app_private.tg_invoices__touch();
alter table app.customers drop constraint customers_organization_id_id_unique;
drop function app_private.money_text(numeric, integer);
drop table app_private.currencies;
