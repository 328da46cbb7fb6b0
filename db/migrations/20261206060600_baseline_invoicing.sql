-- migrate:up

/** The baseline, 6 of 16. Invoicing: customers, currencies, invoices and their lines, payments, numbering, integration connections.
 * Laid out by table: each table, then its keys and indexes, row security and policies, triggers
 * and their functions, and grants; then the area's views and commands. db/README.md, "The
 * baseline", says how it was made and proved equal to the migrations it replaced. */
set local check_function_bodies = false;
set local client_min_messages = warning;
set local search_path = '';

-- While this file runs, the owners of its functions and views may create in the schemas (`alter … owner to`
-- a role needs it when the migrating role is not a superuser); taken back at its end.
grant create on schema api, app, app_private, control, reporting, skills to svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- function app_private.integration_visible(text)

create function app_private.integration_visible(p_category text) returns boolean
    language sql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$ select case when p_category = 'accounting' then app.has_role('finance') else app.has_role('manager') end $$;

alter function app_private.integration_visible(p_category text) owner to svc_owner;

revoke all on function app_private.integration_visible(p_category text) from public;
grant execute on function app_private.integration_visible(p_category text) to svc_runtime;
grant execute on function app_private.integration_visible(p_category text) to svc_api;
grant execute on function app_private.integration_visible(p_category text) to svc_reporting;
grant execute on function app_private.integration_visible(p_category text) to svc_worker;
grant execute on function app_private.integration_visible(p_category text) to svc_admin;
grant execute on function app_private.integration_visible(p_category text) to svc_gate;

-- function app_private.accounting_sync_load(text, text)

create function app_private.accounting_sync_load(p_organization_id text, p_invoice text) returns jsonb
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.accounting_sync_load(p_organization_id text, p_invoice text) owner to svc_owner;

revoke all on function app_private.accounting_sync_load(p_organization_id text, p_invoice text) from public;
grant execute on function app_private.accounting_sync_load(p_organization_id text, p_invoice text) to svc_worker;
grant execute on function app_private.accounting_sync_load(p_organization_id text, p_invoice text) to svc_admin;

-- function app_private.accounting_sync_record(text, text, boolean, text, text, boolean)

create function app_private.accounting_sync_record(p_organization_id text, p_invoice text, p_ok boolean, p_external_reference text, p_error text, p_definitive boolean default false) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_connection text;
  v_now timestamptz := now();
begin
  update app.invoices x
     set sync_status = case when p_ok then 'synced' else 'failed' end,
         sync_external_reference = coalesce(p_external_reference, x.sync_external_reference),
         sync_error = case when p_ok then null else left(p_error, 500) end,
         sync_failure_definitive = case when p_ok then null else p_definitive end,
         synced_at = case when p_ok then v_now else x.synced_at end
   where x.organization_id = p_organization_id and x.id = p_invoice and x.sync_status = 'pending'
  returning x.sync_connection_id into v_connection;
  if found and p_ok then
    update app.integration_connections c set last_success_at = now()
     where c.organization_id = p_organization_id and c.id = v_connection;
  end if;
end
$$;

alter function app_private.accounting_sync_record(p_organization_id text, p_invoice text, p_ok boolean, p_external_reference text, p_error text, p_definitive boolean) owner to svc_owner;

revoke all on function app_private.accounting_sync_record(p_organization_id text, p_invoice text, p_ok boolean, p_external_reference text, p_error text, p_definitive boolean) from public;
grant execute on function app_private.accounting_sync_record(p_organization_id text, p_invoice text, p_ok boolean, p_external_reference text, p_error text, p_definitive boolean) to svc_worker;
grant execute on function app_private.accounting_sync_record(p_organization_id text, p_invoice text, p_ok boolean, p_external_reference text, p_error text, p_definitive boolean) to svc_admin;

-- function app_private.invoice_lines_errors(jsonb, integer)

create function app_private.invoice_lines_errors(p_lines jsonb, p_scale integer) returns jsonb
    language plpgsql immutable
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
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
$_$;

alter function app_private.invoice_lines_errors(p_lines jsonb, p_scale integer) owner to svc_owner;

revoke all on function app_private.invoice_lines_errors(p_lines jsonb, p_scale integer) from public;
grant execute on function app_private.invoice_lines_errors(p_lines jsonb, p_scale integer) to svc_api;
grant execute on function app_private.invoice_lines_errors(p_lines jsonb, p_scale integer) to svc_worker;
grant execute on function app_private.invoice_lines_errors(p_lines jsonb, p_scale integer) to svc_admin;

-- function app_private.invoice_not_found(text)

create function app_private.invoice_not_found(p_id text) returns void
    language sql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$ select app_private.raise('SVN04', 'INVOICE_NOT_FOUND', format('no invoice %s in your organization', p_id)) $$;

alter function app_private.invoice_not_found(p_id text) owner to svc_owner;

revoke all on function app_private.invoice_not_found(p_id text) from public;
grant execute on function app_private.invoice_not_found(p_id text) to svc_api;
grant execute on function app_private.invoice_not_found(p_id text) to svc_worker;
grant execute on function app_private.invoice_not_found(p_id text) to svc_admin;

-- function app_private.invoice_recompute_totals(text[], text[])

create function app_private.invoice_recompute_totals(p_orgs text[], p_invoices text[]) returns void
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  -- One invoice at a time (a statement usually touches one): each is two index lookups, where a
  -- set-based join over unnest() is planned for 100 ids and scans every line.
  for n in 1 .. coalesce(cardinality(p_invoices), 0) loop
    update app.invoices i
       set subtotal = t.subtotal, tax_total = t.tax_total, total = t.subtotal + t.tax_total
      from (select coalesce(sum(l.amount), 0) as subtotal, coalesce(sum(l.tax_amount), 0) as tax_total
              from app.invoice_lines l where l.organization_id = p_orgs[n] and l.invoice_id = p_invoices[n]) t
     where i.organization_id = p_orgs[n] and i.id = p_invoices[n]
       and (i.subtotal, i.tax_total, i.total) is distinct from (t.subtotal, t.tax_total, t.subtotal + t.tax_total);
  end loop;
end
$$;

alter function app_private.invoice_recompute_totals(p_orgs text[], p_invoices text[]) owner to svc_owner;

comment on function app_private.invoice_recompute_totals(p_orgs text[], p_invoices text[]) is 'Sets each named invoice''s subtotal, tax_total and total to the sums of its lines'' rounded amounts and taxes (p_orgs[n] and p_invoices[n] name one invoice and its organization), writing only the invoices whose totals changed; called once per statement by the line triggers (tg_invoice_lines__totals_changed). It is a security definer of svc_owner because the writer of the lines (svc_api) may not write totals, which only the service calculates; every update names its organization, and svc_owner''s policy refuses any but the request''s outside an operator session.';

revoke all on function app_private.invoice_recompute_totals(p_orgs text[], p_invoices text[]) from public;
grant execute on function app_private.invoice_recompute_totals(p_orgs text[], p_invoices text[]) to svc_worker;
grant execute on function app_private.invoice_recompute_totals(p_orgs text[], p_invoices text[]) to svc_admin;

-- table app.integration_connections

create table app.integration_connections (
    organization_id text not null,
    id text default app_private.new_id('icn'::text) not null,
    provider text not null,
    category text not null,
    ownership text not null,
    owner_member_id text,
    status text not null,
    capabilities text[] default '{}'::text[] not null,
    action_required text,
    last_success_at timestamp with time zone,
    created_at timestamp with time zone default now() not null,
    updated_at timestamp with time zone default now() not null,
    version integer default 1 not null,
    constraint integration_connections_action_required_length check ((length(action_required) <= 500)),
    constraint integration_connections_category_format check ((category ~ '^[a-z_]{1,40}$'::text)),
    constraint integration_connections_ownership_valid check ((ownership = any (array['organization'::text, 'personal'::text]))),
    constraint integration_connections_personal_has_owner check (((ownership = 'personal'::text) = (owner_member_id is not null))),
    constraint integration_connections_provider_format check ((provider ~ '^[a-z0-9_.-]{1,50}$'::text)),
    constraint integration_connections_status_valid check ((status = any (array['connected'::text, 'action_required'::text, 'error'::text, 'disconnected'::text])))
);

alter table only app.integration_connections force row level security;

alter table only app.integration_connections
    add constraint integration_connections_pkey primary key (organization_id, id);

create index integration_connections_id on app.integration_connections using btree (id);

create index integration_connections_org on app.integration_connections using btree (organization_id, created_at, id);

alter table only app.integration_connections
    add constraint integration_connections_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table only app.integration_connections
    add constraint integration_connections_organization_id_owner_member_id_fkey foreign key (organization_id, owner_member_id) references app.members(organization_id, id) on delete cascade;

alter table app.integration_connections enable row level security;

create policy "Clients see organization connections relevant to their Roles" on app.integration_connections for select to svc_api using ((organization_id = (select app.current_organization_id())) and (ownership = 'organization'::text) and app_private.integration_visible(category));

comment on policy "Clients see organization connections relevant to their Roles" on app.integration_connections is 'svc_api reads the integration connections of the request''s organization that are organization-owned and relevant to a held Role: accounting connections with finance, every other category with manager (app_private.integration_visible), as the spec''s Role matrix says. Personal connections belong to a named user and are never shown to an API Client (only named as a blocker by api.integration_readiness and api.integration_connection_hidden_reason); the API only reads connections, which the control plane manages.';

create policy "Commands act in the request's organization" on app.integration_connections to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.integration_connections is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only integration connections of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So the readiness check, the hidden-reason lookup, issuing and voiding, which read connections as svc_owner (the ones svc_api''s policy hides too), stay in the caller''s organization, while the control plane and the worker''s accounting sync write them.';

create function app_private.tg_integration_connections__emit() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if new.version <> old.version and new.ownership = 'organization' then
    perform app_private.emit_event(new.organization_id, 'integration_connection.updated', 'integration_connection', new.id, new.version);
  end if;
  return null;
end
$$;

alter function app_private.tg_integration_connections__emit() owner to svc_owner;

comment on function app_private.tg_integration_connections__emit() is 'After update on app.integration_connections (_950_emit_event): emits integration_connection.updated into the outbox, in the writer''s transaction, when the version moved and the connection is organization-owned; a personal connection is never visible to API Clients, so its changes emit nothing. Raises nothing.';

create trigger _100_touch_version before update on app.integration_connections for each row execute function app_private.tg__touch_version();

create trigger _950_emit_event after update on app.integration_connections for each row execute function app_private.tg_integration_connections__emit();

grant select on table app.integration_connections to svc_api;
grant select,insert,delete,update on table app.integration_connections to svc_owner;
grant select,insert,delete,update on table app.integration_connections to svc_worker;
grant select,insert,delete,update on table app.integration_connections to svc_admin;

revoke all on function app_private.tg_integration_connections__emit() from public;
grant execute on function app_private.tg_integration_connections__emit() to svc_worker;
grant execute on function app_private.tg_integration_connections__emit() to svc_admin;

-- function app_private.accounting_connection(text)

create function app_private.accounting_connection(p_org text) returns app.integration_connections
    language plpgsql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  c app.integration_connections;
begin
  select x.* into c from app.integration_connections x
   where x.organization_id = p_org and x.ownership = 'organization' and x.category = 'accounting'
     and 'invoice.export' = any (x.capabilities)
   order by (x.status = 'connected' and x.action_required is null) desc, x.last_success_at desc nulls last, x.id
   limit 1;
  return c;
end
$$;

alter function app_private.accounting_connection(p_org text) owner to svc_owner;

revoke all on function app_private.accounting_connection(p_org text) from public;
grant execute on function app_private.accounting_connection(p_org text) to svc_worker;
grant execute on function app_private.accounting_connection(p_org text) to svc_admin;

-- function app_private.accounting_not_ready(app.integration_connections, text)

create function app_private.accounting_not_ready(c app.integration_connections, p_doing text) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  perform app_private.raise('SVC09', 'ACCOUNTING_CONNECTION_NOT_READY',
    case when c.id is null
      then format('your organization requires an accounting connection to %s, and none offers invoice.export; an administrator connects one in the web settings', p_doing)
      else format('the %s accounting connection %s is %s: %s', c.provider, c.id, c.status,
                  coalesce(c.action_required, 'an administrator must reconnect it in the web settings')) end);
end
$$;

alter function app_private.accounting_not_ready(c app.integration_connections, p_doing text) owner to svc_owner;

revoke all on function app_private.accounting_not_ready(c app.integration_connections, p_doing text) from public;
grant execute on function app_private.accounting_not_ready(c app.integration_connections, p_doing text) to svc_worker;
grant execute on function app_private.accounting_not_ready(c app.integration_connections, p_doing text) to svc_admin;

-- function app_private.accounting_ready(app.integration_connections)

create function app_private.accounting_ready(c app.integration_connections) returns boolean
    language sql immutable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$ select c.id is not null and c.status = 'connected' and c.action_required is null $$;

alter function app_private.accounting_ready(c app.integration_connections) owner to svc_owner;

revoke all on function app_private.accounting_ready(c app.integration_connections) from public;
grant execute on function app_private.accounting_ready(c app.integration_connections) to svc_worker;
grant execute on function app_private.accounting_ready(c app.integration_connections) to svc_admin;

-- table app.customers

create table app.customers (
    organization_id text not null,
    id text not null,
    kind text not null,
    name text not null,
    delivery_email text,
    currency text,
    created_at timestamp with time zone default now() not null,
    deleted_at timestamp with time zone,
    constraint customers_currency_iso4217 check ((currency ~ '^[A-Z]{3}$'::text)),
    constraint customers_delivery_email_format check ((delivery_email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'::text)),
    constraint customers_id_prefix_matches_kind check ((id ~~
case kind
    when 'company'::text then 'com\_%'::text
    else 'cus\_%'::text
end)),
    constraint customers_kind_valid check ((kind = any (array['company'::text, 'billing'::text]))),
    constraint customers_name_length check (((length(name) >= 1) and (length(name) <= 200)))
);

alter table only app.customers force row level security;

alter table only app.customers
    add constraint customers_pkey primary key (organization_id, id);

create index customers_id on app.customers using btree (id);

alter table only app.customers
    add constraint customers_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table app.customers enable row level security;

create policy "Clients see customers of their organization" on app.customers for select to svc_api using (organization_id = (select app.current_organization_id()));

comment on policy "Clients see customers of their organization" on app.customers is 'svc_api reads, whatever the caller''s Roles, the customers of the request''s organization (from the signed context; nothing without one): the API has no customer endpoint, but its invoice commands check that a customer_id names a billing customer (cus_) of the caller''s organization that is not deleted. Customers are managed through the control plane only, so svc_api has no write policy.';

create policy "Commands act in the request's organization" on app.customers to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.customers is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only customers of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So the invoicing commands and triggers that read customers as svc_owner (issuing, the billing and company customer checks) stay in the caller''s organization even with a wrong WHERE, while svc-admin manages every organization''s customers.';

grant select on table app.customers to svc_api;
grant select,insert,delete,update on table app.customers to svc_owner;
grant select,insert,delete,update on table app.customers to svc_worker;
grant select,insert,delete,update on table app.customers to svc_admin;

-- foreign key app.projects projects_customer_fkey

alter table only app.projects
    add constraint projects_customer_fkey foreign key (organization_id, customer_id) references app.customers(organization_id, id) on delete restrict;

-- table app_private.currencies

create table app_private.currencies (
    code text not null,
    minor_units smallint not null,
    constraint currencies_code_format check ((code ~ '^[A-Z]{3}$'::text)),
    constraint currencies_minor_units_range check (((minor_units >= 0) and (minor_units <= 4)))
);

alter table only app_private.currencies
    add constraint currencies_pkey primary key (code);

grant select on table app_private.currencies to svc_api;
grant select,insert,delete,update on table app_private.currencies to svc_owner;
grant select,insert,delete,update on table app_private.currencies to svc_worker;
grant select,insert,delete,update on table app_private.currencies to svc_admin;

-- table app.invoices

create table app.invoices (
    organization_id text not null,
    id text default app_private.new_id('inv'::text) not null,
    number text,
    status text default 'draft'::text not null,
    customer_id text not null,
    currency text not null,
    scale smallint not null,
    issue_date date,
    due_date date,
    memo text,
    subtotal numeric default 0 not null,
    tax_total numeric default 0 not null,
    total numeric default 0 not null,
    amount_paid numeric default 0 not null,
    created_by_client_id text not null,
    created_at timestamp with time zone default now() not null,
    updated_at timestamp with time zone default now() not null,
    version integer default 1 not null,
    sent_at timestamp with time zone,
    pdf_file_id text,
    sync_connection_id text,
    sync_status text,
    sync_external_reference text,
    sync_error text,
    synced_at timestamp with time zone,
    sync_failure_definitive boolean,
    constraint invoices_dates_ordered check (((due_date is null) or (issue_date is null) or (due_date >= issue_date))),
    constraint invoices_issued_has_number check (((status = 'draft'::text) = (number is null))),
    constraint invoices_memo_length check ((length(memo) <= 5000)),
    constraint invoices_paid_means_settled check (((status <> 'paid'::text) or (amount_paid = total))),
    constraint invoices_paid_within_total check (((amount_paid >= (0)::numeric) and (amount_paid <= greatest(total, (0)::numeric)))),
    constraint invoices_status_valid check ((status = any (array['draft'::text, 'sent'::text, 'paid'::text, 'void'::text]))),
    constraint invoices_sync_error_length check ((length(sync_error) <= 500)),
    constraint invoices_sync_external_reference_length check ((length(sync_external_reference) <= 255)),
    constraint invoices_sync_has_connection check (((sync_status is null) = (sync_connection_id is null))),
    constraint invoices_sync_status_valid check ((sync_status = any (array['pending'::text, 'synced'::text, 'failed'::text]))),
    constraint invoices_total_not_negative check ((total >= (0)::numeric))
);

alter table only app.invoices force row level security;

alter table only app.invoices
    add constraint invoices_pkey primary key (organization_id, id);

create index invoices_id on app.invoices using btree (id);

create unique index invoices_number_unique on app.invoices using btree (organization_id, number) where (number is not null);

create index invoices_org_created on app.invoices using btree (organization_id, created_at, id);

alter table only app.invoices
    add constraint invoices_currency_fkey foreign key (currency) references app_private.currencies(code);

alter table only app.invoices
    add constraint invoices_customer_fkey foreign key (organization_id, customer_id) references app.customers(organization_id, id) on delete restrict;

alter table only app.invoices
    add constraint invoices_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table only app.invoices
    add constraint invoices_sync_connection_fkey foreign key (organization_id, sync_connection_id) references app.integration_connections(organization_id, id) on delete restrict;

alter table app.invoices enable row level security;

create policy "Commands act in the request's organization" on app.invoices to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.invoices is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only invoices of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So issuing, voiding, the PDF, the totals and the payments'' updates, written as svc_owner because svc_api may not write statuses, numbers, totals or amount_paid, stay in the caller''s organization even with a wrong WHERE, while the worker''s accounting sync and svc-admin''s sync retry span organizations.';

create policy "Managers and finance change invoices" on app.invoices for update to svc_api using (((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{manager,finance}'::text[])))) with check (((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{manager,finance}'::text[]))));

comment on policy "Managers and finance change invoices" on app.invoices is 'svc_api updates an invoice only in the request''s organization and only when the caller holds manager or finance (the spec''s Role matrix for invoices), and cannot move it to another organization (the same check on the new row). Its column grants allow only the draft fields customer_id, currency, issue_date, due_date and memo; tg_invoices__guard refuses any change of an issued invoice (INVOICE_NOT_EDITABLE), and statuses, numbers and totals are written by svc_owner''s commands and triggers.';

create policy "Managers and finance read invoices" on app.invoices for select to svc_api using ((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{manager,finance}'::text[])));

comment on policy "Managers and finance read invoices" on app.invoices is 'svc_api reads invoices, and api.invoices shows them, only in the request''s organization and only when the caller holds manager or finance: member and hr have no access to invoices (spec Role matrix), and the policy keeps that fence in the database whatever a command forgets to check.';

create policy "Managers and finance write invoices" on app.invoices for insert to svc_api with check ((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{manager,finance}'::text[])));

comment on policy "Managers and finance write invoices" on app.invoices is 'svc_api creates invoices only in the request''s organization and only when the caller holds manager or finance (api.invoice_create). Its column grants take only the customer, currency, dates, memo and creating client, and tg_invoices__guard makes every new invoice an empty draft without a number, whatever the insert says: totals and numbers are the service''s.';

create function app_private.tg_invoices__queue_sync() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if new.sync_status = 'pending' and old.sync_status is distinct from 'pending' then
    perform app_private.queue_job(new.organization_id, 'accounting_sync',
      json_build_object('invoice_id', new.id, 'action', case when new.status = 'void' then 'void' else 'export' end),
      'accounting_sync:' || new.id, 8);
  end if;
  return null;
end
$$;

alter function app_private.tg_invoices__queue_sync() owner to svc_owner;

comment on function app_private.tg_invoices__queue_sync() is 'After update on app.invoices (_900_queue_sync): when sync_status becomes pending (issuing with a ready accounting connection, or voiding a synchronized invoice), queues the accounting_sync job (export, or void for a void invoice; one job key per invoice) through app_private.queue_job in the same transaction, so the job exists exactly when the write commits. Raises nothing itself.';

create function app_private.tg_invoices__touch() returns trigger
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  new.updated_at := now();
  new.version := case when old.xmin = pg_current_xact_id()::xid then old.version else old.version + 1 end;
  return new;
end
$$;

alter function app_private.tg_invoices__touch() owner to svc_owner;

comment on function app_private.tg_invoices__touch() is 'Before update on app.invoices (_100_touch_version): sets updated_at and moves the version once per transaction, so whatever one command writes (fields, lines, totals, a payment, a status) is one new version (ETag), and a second write of the row in the same transaction keeps it. Raises nothing; runs as the writer (it touches only the row).';

create function app_private.tg_invoices__emit() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.tg_invoices__emit() owner to svc_owner;

comment on function app_private.tg_invoices__emit() is 'After insert or update on app.invoices (_950_emit_event): emits into the outbox, in the writer''s transaction, invoice.created for a new invoice and, when the version or status moved, invoice.sent, invoice.paid or invoice.voided for those status changes, else invoice.updated. Raises nothing.';

create function app_private.tg_invoices__guard() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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
     and not exists (select from app.customers c where c.organization_id = new.organization_id and c.id = new.customer_id and c.kind = 'billing') then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'customer_id must name a billing customer (cus_) of your organization', '/customer_id');
  end if;
  if tg_op = 'UPDATE' and old.status <> 'draft'
     and (new.customer_id, new.currency, new.issue_date, new.due_date, new.memo, new.subtotal, new.tax_total, new.total)
         is distinct from (old.customer_id, old.currency, old.issue_date, old.due_date, old.memo, old.subtotal, old.tax_total, old.total) then
    perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', format('a %s invoice cannot be changed', old.status));
  end if;
  if tg_op = 'UPDATE' and new.currency <> old.currency and exists (select from app.invoice_lines l where l.organization_id = new.organization_id and l.invoice_id = new.id) then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'the currency of an invoice with lines cannot change', '/currency');
  end if;
  return new;
end
$$;

alter function app_private.tg_invoices__guard() owner to svc_owner;

comment on function app_private.tg_invoices__guard() is 'Before insert, update or delete on app.invoices (_050_guard), for every writer: only a draft is deleted and an issued invoice''s customer, currency, dates, memo and totals never change (SVC09 INVOICE_NOT_EDITABLE); a new invoice is an empty draft without a number (SVV22 VALIDATION_FAILED otherwise) whose totals, payments, sending, PDF and sync fields are reset and whose creating client is the request''s when there is one. It also sets the scale from the currency''s minor units, requires a billing customer of the invoice''s organization, and refuses a currency change once the invoice has lines (SVV22 VALIDATION_FAILED), since their amounts are rounded to the old currency.';

create function app_private.tg_invoices__lifecycle() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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
  if exists (select from app.customers x where x.organization_id = new.organization_id and x.id = new.customer_id and x.deleted_at is not null) then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', format('the customer %s was deleted; choose another customer', new.customer_id));
  end if;
  if not exists (select from app.invoice_lines l where l.organization_id = new.organization_id and l.invoice_id = new.id) then
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

alter function app_private.tg_invoices__lifecycle() owner to svc_owner;

comment on function app_private.tg_invoices__lifecycle() is 'Before update on app.invoices (_060_lifecycle), for every writer: the only status moves are draft to sent, sent to paid and sent to void (never back to draft); a void has no payments and no sync in flight, and issuing needs a customer that is not deleted, lines, a positive total and a due date not before the issue date (SVC09 WORKFLOW_BLOCKED), and a ready accounting connection when the organization requires one (SVC09 ACCOUNTING_CONNECTION_NOT_READY). Issuing takes the organization''s next gapless number from app_private.invoice_number_counters, sets sent_at, the issue date (today in the organization''s time zone) and due date (payment terms) when missing, and marks the accounting sync pending when a connection is ready; what issuing fixed (number, sent_at, PDF) never changes, and a draft has no number, PDF or sync (SVC09 INVOICE_NOT_EDITABLE).';

create function app_private.tg_invoices__pdf_required() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if exists (select from app.invoices x where x.organization_id = new.organization_id and x.id = new.id and x.status <> 'draft' and x.pdf_file_id is null) then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', format('%s cannot be issued without its PDF; sendInvoice makes it', new.id));
  end if;
  return null;
end
$$;

alter function app_private.tg_invoices__pdf_required() owner to svc_owner;

comment on function app_private.tg_invoices__pdf_required() is 'Deferred constraint trigger after update on app.invoices (_990_pdf_required), when an invoice leaves draft: at commit the invoice must have its PDF (pdf_file_id), else SVC09 WORKFLOW_BLOCKED. "PDF generated" is part of issuing in the spec, and checking at commit lets the PDF be made after the number is known, in the same transaction.';

create trigger _050_guard before insert or delete or update on app.invoices for each row execute function app_private.tg_invoices__guard();

create trigger _060_lifecycle before update on app.invoices for each row execute function app_private.tg_invoices__lifecycle();

create trigger _100_touch_version before update on app.invoices for each row execute function app_private.tg_invoices__touch();

create trigger _900_queue_sync after update on app.invoices for each row execute function app_private.tg_invoices__queue_sync();

create trigger _950_emit_event after insert or update on app.invoices for each row execute function app_private.tg_invoices__emit();

create constraint trigger _990_pdf_required after update on app.invoices deferrable initially deferred for each row when (((old.status = 'draft'::text) and (new.status <> 'draft'::text))) execute function app_private.tg_invoices__pdf_required();

grant select on table app.invoices to svc_api;
grant select,insert,delete,update on table app.invoices to svc_owner;
grant select,insert,delete,update on table app.invoices to svc_worker;
grant select,insert,delete,update on table app.invoices to svc_admin;

grant insert(organization_id) on table app.invoices to svc_api;

grant insert(customer_id),update(customer_id) on table app.invoices to svc_api;

grant insert(currency),update(currency) on table app.invoices to svc_api;

grant insert(issue_date),update(issue_date) on table app.invoices to svc_api;

grant insert(due_date),update(due_date) on table app.invoices to svc_api;

grant insert(memo),update(memo) on table app.invoices to svc_api;

grant insert(created_by_client_id) on table app.invoices to svc_api;

revoke all on function app_private.tg_invoices__emit() from public;
grant execute on function app_private.tg_invoices__emit() to svc_worker;
grant execute on function app_private.tg_invoices__emit() to svc_admin;

revoke all on function app_private.tg_invoices__guard() from public;
grant execute on function app_private.tg_invoices__guard() to svc_worker;
grant execute on function app_private.tg_invoices__guard() to svc_admin;

revoke all on function app_private.tg_invoices__lifecycle() from public;
grant execute on function app_private.tg_invoices__lifecycle() to svc_worker;
grant execute on function app_private.tg_invoices__lifecycle() to svc_admin;

revoke all on function app_private.tg_invoices__pdf_required() from public;
grant execute on function app_private.tg_invoices__pdf_required() to svc_worker;
grant execute on function app_private.tg_invoices__pdf_required() to svc_admin;

revoke all on function app_private.tg_invoices__queue_sync() from public;
grant execute on function app_private.tg_invoices__queue_sync() to svc_worker;
grant execute on function app_private.tg_invoices__queue_sync() to svc_admin;

revoke all on function app_private.tg_invoices__touch() from public;
grant execute on function app_private.tg_invoices__touch() to svc_worker;
grant execute on function app_private.tg_invoices__touch() to svc_admin;

-- function app_private.invoice_lock(text, integer[])

create function app_private.invoice_lock(p_id text, p_if_match integer[]) returns app.invoices
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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
$$;

alter function app_private.invoice_lock(p_id text, p_if_match integer[]) owner to svc_owner;

revoke all on function app_private.invoice_lock(p_id text, p_if_match integer[]) from public;
grant execute on function app_private.invoice_lock(p_id text, p_if_match integer[]) to svc_api;
grant execute on function app_private.invoice_lock(p_id text, p_if_match integer[]) to svc_worker;
grant execute on function app_private.invoice_lock(p_id text, p_if_match integer[]) to svc_admin;

-- function app_private.invoice_set_lines(app.invoices, jsonb)

create function app_private.invoice_set_lines(p_invoice app.invoices, p_lines jsonb) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  perform app_private.raise_errors(app_private.invoice_lines_errors(p_lines, p_invoice.scale));
  delete from app.invoice_lines where organization_id = p_invoice.organization_id and invoice_id = p_invoice.id;
  insert into app.invoice_lines (organization_id, invoice_id, position, description, quantity, unit_price, tax_rate)
  select p_invoice.organization_id, p_invoice.id, (o - 1)::integer, l ->> 'description', (l ->> 'quantity')::numeric,
         (l ->> 'unit_price')::numeric, coalesce((l ->> 'tax_rate')::numeric, 0)
    from jsonb_array_elements(p_lines) with ordinality as x(l, o);
end
$$;

alter function app_private.invoice_set_lines(p_invoice app.invoices, p_lines jsonb) owner to svc_owner;

revoke all on function app_private.invoice_set_lines(p_invoice app.invoices, p_lines jsonb) from public;
grant execute on function app_private.invoice_set_lines(p_invoice app.invoices, p_lines jsonb) to svc_api;
grant execute on function app_private.invoice_set_lines(p_invoice app.invoices, p_lines jsonb) to svc_worker;
grant execute on function app_private.invoice_set_lines(p_invoice app.invoices, p_lines jsonb) to svc_admin;

-- table app.invoice_lines

create table app.invoice_lines (
    organization_id text not null,
    id text default app_private.new_id('invl'::text) not null,
    invoice_id text not null,
    "position" integer not null,
    description text not null,
    quantity numeric not null,
    unit_price numeric not null,
    tax_rate numeric default 0 not null,
    amount numeric not null,
    tax_amount numeric not null,
    constraint invoice_lines_description_length check (((length(description) >= 1) and (length(description) <= 1000))),
    constraint invoice_lines_quantity_range check (((quantity > (0)::numeric) and (quantity < (1000000000)::numeric) and (scale(quantity) <= 4))),
    constraint invoice_lines_tax_rate_range check (((tax_rate >= (0)::numeric) and (tax_rate <= (100)::numeric) and (scale(tax_rate) <= 4))),
    constraint invoice_lines_unit_price_range check ((abs(unit_price) < ('1000000000000'::bigint)::numeric))
);

alter table only app.invoice_lines force row level security;

alter table only app.invoice_lines
    add constraint invoice_lines_pkey primary key (organization_id, id);

alter table only app.invoice_lines
    add constraint invoice_lines_position_key unique (organization_id, invoice_id, "position");

alter table only app.invoice_lines
    add constraint invoice_lines_invoice_fkey foreign key (organization_id, invoice_id) references app.invoices(organization_id, id) on delete cascade;

alter table app.invoice_lines enable row level security;

create policy "Commands act in the request's organization" on app.invoice_lines to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.invoice_lines is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only invoice lines of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So svc_owner''s reads of lines inside a request (issuing''s check that lines exist, the totals'' sums, the currency guard) stay in the caller''s organization even with a wrong WHERE.';

create policy "Managers and finance delete draft lines" on app.invoice_lines for delete to svc_api using ((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{manager,finance}'::text[])));

comment on policy "Managers and finance delete draft lines" on app.invoice_lines is 'svc_api deletes invoice lines only in the request''s organization and only when the caller holds manager or finance: this is how app_private.invoice_set_lines replaces a draft''s lines, since svc_api may not update a line. The draft condition of the name is enforced by the _100_compute trigger (tg_invoice_lines__compute), which refuses a line change on an issued invoice with INVOICE_NOT_EDITABLE.';

create policy "Managers and finance read lines" on app.invoice_lines for select to svc_api using ((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{manager,finance}'::text[])));

comment on policy "Managers and finance read lines" on app.invoice_lines is 'svc_api reads invoice lines, shown with their invoice in api.invoices, only in the request''s organization and only when the caller holds manager or finance, the Roles that may read invoices (spec Role matrix).';

create policy "Managers and finance write lines" on app.invoice_lines for insert to svc_api with check ((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{manager,finance}'::text[])));

comment on policy "Managers and finance write lines" on app.invoice_lines is 'svc_api inserts invoice lines only in the request''s organization and only when the caller holds manager or finance (app_private.invoice_set_lines). Its column grants leave out amount and tax_amount, which tg_invoice_lines__compute calculates, and that trigger accepts lines on drafts only (INVOICE_NOT_EDITABLE).';

create function app_private.tg_invoice_lines__compute() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.tg_invoice_lines__compute() owner to svc_owner;

comment on function app_private.tg_invoice_lines__compute() is 'Before insert, update or delete on app.invoice_lines (_100_compute): a line''s amount is round(quantity * unit_price) and its tax_amount round(amount * tax_rate / 100), both at the currency''s minor units, computed by the database and never taken from the writer, and a unit_price with more decimals than the currency has is refused (SVV22 INVALID_INVOICE_LINE). Lines change only on a draft and never move to another invoice (SVC09 INVOICE_NOT_EDITABLE), the invoice being looked up within the line''s organization (SVN04 INVOICE_NOT_FOUND).';

create function app_private.tg_invoice_lines__totals_changed() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_orgs text[];
  v_invoices text[];
begin
  -- Each branch names its own trigger's transition tables (a branch is planned only when it runs).
  if tg_op = 'INSERT' then
    select array_agg(x.organization_id), array_agg(x.invoice_id) into v_orgs, v_invoices
      from (select distinct n.organization_id, n.invoice_id from inserted_lines n) x;
  elsif tg_op = 'DELETE' then
    select array_agg(x.organization_id), array_agg(x.invoice_id) into v_orgs, v_invoices
      from (select distinct o.organization_id, o.invoice_id from deleted_lines o) x;
  else
    select array_agg(x.organization_id), array_agg(x.invoice_id) into v_orgs, v_invoices
      from (select o.organization_id, o.invoice_id from old_lines o union select n.organization_id, n.invoice_id from new_lines n) x;
  end if;
  perform app_private.invoice_recompute_totals(v_orgs, v_invoices);
  return null;
end
$$;

alter function app_private.tg_invoice_lines__totals_changed() owner to svc_owner;

comment on function app_private.tg_invoice_lines__totals_changed() is 'After each insert, update or delete statement on app.invoice_lines (_900_totals_inserted, _900_totals_updated, _900_totals_deleted): collects the (organization, invoice) pairs of the changed lines from the transition tables and has app_private.invoice_recompute_totals set their totals, once per statement rather than once per line. Raises nothing itself.';

create trigger _100_compute before insert or delete or update on app.invoice_lines for each row execute function app_private.tg_invoice_lines__compute();

create trigger _900_totals_deleted after delete on app.invoice_lines referencing old table as deleted_lines for each statement execute function app_private.tg_invoice_lines__totals_changed();

create trigger _900_totals_inserted after insert on app.invoice_lines referencing new table as inserted_lines for each statement execute function app_private.tg_invoice_lines__totals_changed();

create trigger _900_totals_updated after update on app.invoice_lines referencing old table as old_lines new table as new_lines for each statement execute function app_private.tg_invoice_lines__totals_changed();

grant select,delete on table app.invoice_lines to svc_api;
grant select,insert,delete,update on table app.invoice_lines to svc_owner;
grant select,insert,delete,update on table app.invoice_lines to svc_worker;
grant select,insert,delete,update on table app.invoice_lines to svc_admin;

grant insert(organization_id) on table app.invoice_lines to svc_api;

grant insert(invoice_id) on table app.invoice_lines to svc_api;

grant insert("position") on table app.invoice_lines to svc_api;

grant insert(description) on table app.invoice_lines to svc_api;

grant insert(quantity) on table app.invoice_lines to svc_api;

grant insert(unit_price) on table app.invoice_lines to svc_api;

grant insert(tax_rate) on table app.invoice_lines to svc_api;

revoke all on function app_private.tg_invoice_lines__compute() from public;
grant execute on function app_private.tg_invoice_lines__compute() to svc_worker;
grant execute on function app_private.tg_invoice_lines__compute() to svc_admin;

revoke all on function app_private.tg_invoice_lines__totals_changed() from public;
grant execute on function app_private.tg_invoice_lines__totals_changed() to svc_worker;
grant execute on function app_private.tg_invoice_lines__totals_changed() to svc_admin;

-- table app.payments

create table app.payments (
    organization_id text not null,
    id text default app_private.new_id('pay'::text) not null,
    invoice_id text not null,
    amount numeric not null,
    currency text not null,
    received_date date not null,
    method text not null,
    external_reference text,
    created_by_client_id text not null,
    created_at timestamp with time zone default now() not null,
    constraint payments_amount_positive check ((amount > (0)::numeric)),
    constraint payments_external_reference_length check ((length(external_reference) <= 255)),
    constraint payments_method_length check (((length(method) >= 1) and (length(method) <= 50)))
);

alter table only app.payments force row level security;

alter table only app.payments
    add constraint payments_pkey primary key (organization_id, id);

create index payments_invoice on app.payments using btree (invoice_id);

alter table only app.payments
    add constraint payments_invoice_fkey foreign key (organization_id, invoice_id) references app.invoices(organization_id, id) on delete restrict;

alter table app.payments enable row level security;

create policy "Commands act in the request's organization" on app.payments to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.payments is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only payments of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So whatever svc_owner reads of payments inside a request stays in the caller''s organization even with a wrong WHERE; a payment itself is never changed or deleted (tg_payments__immutable).';

create policy "Managers and finance read payments" on app.payments for select to svc_api using ((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{manager,finance}'::text[])));

comment on policy "Managers and finance read payments" on app.payments is 'svc_api reads payments only in the request''s organization and only when the caller holds manager or finance: payments share the invoices'' Role fence (spec Role matrix; member and hr have no access).';

create policy "Managers and finance record payments" on app.payments for insert to svc_api with check ((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{manager,finance}'::text[])));

comment on policy "Managers and finance record payments" on app.payments is 'svc_api inserts a payment only in the request''s organization and only when the caller holds manager or finance (api.payment_create). Payments are records: there is no update or delete policy, tg_payments__immutable refuses both, and the _100_apply trigger checks each payment against its invoice.';

create function app_private.tg_payments__emit() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  perform app_private.emit_event(new.organization_id, 'payment.created', 'payment', new.id, 1);
  return null;
end
$$;

alter function app_private.tg_payments__emit() owner to svc_owner;

comment on function app_private.tg_payments__emit() is 'After insert on app.payments (_950_emit_event): emits payment.created into the outbox in the writer''s transaction, with version 1, since a payment never changes. Raises nothing.';

create function app_private.tg_payments__immutable() returns trigger
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  perform app_private.raise('SVC09', 'CONFLICT', 'payments are records: they are never changed or deleted');
end
$$;

alter function app_private.tg_payments__immutable() owner to svc_owner;

comment on function app_private.tg_payments__immutable() is 'Before update or delete on app.payments (_050_immutable): always refuses with SVC09 CONFLICT, whoever writes: payments are financial records of money received and are never changed or deleted.';

create function app_private.tg_payments__apply() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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
   where organization_id = i.organization_id and id = i.id;
  return new;
end
$$;

alter function app_private.tg_payments__apply() owner to svc_owner;

comment on function app_private.tg_payments__apply() is 'Before insert on app.payments (_100_apply): locks the invoice by id and the payment''s organization (another organization''s invoice is simply SVN04 INVOICE_NOT_FOUND, leaking nothing), requires it to be issued and unvoided (SVC09 INVOICE_NOT_EDITABLE), in the same currency (SVV22 CURRENCY_MISMATCH), with no more decimals than the currency has (SVV22 VALIDATION_FAILED) and not above the amount due (SVV22 PAYMENT_EXCEEDS_AMOUNT_DUE), then adds it to amount_paid and marks the invoice paid when nothing is due. The row lock means concurrent payments can never take the amount due below zero; it is svc_owner''s definer because the payment''s writer (svc_api) may not write amount_paid or status, and it records the request''s client as the payment''s creator.';

create trigger _050_immutable before delete or update on app.payments for each row execute function app_private.tg_payments__immutable();

create trigger _100_apply before insert on app.payments for each row execute function app_private.tg_payments__apply();

create trigger _950_emit_event after insert on app.payments for each row execute function app_private.tg_payments__emit();

revoke all on function app_private.tg_payments__apply() from public;
grant execute on function app_private.tg_payments__apply() to svc_worker;
grant execute on function app_private.tg_payments__apply() to svc_admin;

revoke all on function app_private.tg_payments__emit() from public;
grant execute on function app_private.tg_payments__emit() to svc_worker;
grant execute on function app_private.tg_payments__emit() to svc_admin;

revoke all on function app_private.tg_payments__immutable() from public;
grant execute on function app_private.tg_payments__immutable() to svc_worker;
grant execute on function app_private.tg_payments__immutable() to svc_admin;

grant select on table app.payments to svc_api;
grant select,insert,delete,update on table app.payments to svc_owner;
grant select,insert,delete,update on table app.payments to svc_worker;
grant select,insert,delete,update on table app.payments to svc_admin;

grant insert(organization_id) on table app.payments to svc_api;

grant insert(invoice_id) on table app.payments to svc_api;

grant insert(amount) on table app.payments to svc_api;

grant insert(currency) on table app.payments to svc_api;

grant insert(received_date) on table app.payments to svc_api;

grant insert(method) on table app.payments to svc_api;

grant insert(external_reference) on table app.payments to svc_api;

grant insert(created_by_client_id) on table app.payments to svc_api;

-- table app_private.invoice_number_counters

create table app_private.invoice_number_counters (
    organization_id text not null,
    last_number bigint not null,
    constraint invoice_number_counters_positive check ((last_number > 0))
);

alter table only app_private.invoice_number_counters force row level security;

alter table only app_private.invoice_number_counters
    add constraint invoice_number_counters_pkey primary key (organization_id);

alter table only app_private.invoice_number_counters
    add constraint invoice_number_counters_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table app_private.invoice_number_counters enable row level security;

create policy "Commands act in the request's organization" on app_private.invoice_number_counters to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app_private.invoice_number_counters is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only invoice number counters of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. tg_invoices__lifecycle advances the counter as svc_owner when an invoice is issued, so a request locks and advances only its own organization''s counter; the row lock serializes issuing per organization and a rollback returns the number, so invoice numbers stay unique and gapless.';

grant select,insert,delete,update on table app_private.invoice_number_counters to svc_owner;
grant select,insert,delete,update on table app_private.invoice_number_counters to svc_worker;
grant select,insert,delete,update on table app_private.invoice_number_counters to svc_admin;

-- view api.integration_connections

create view api.integration_connections with (security_invoker='false') as
 select c.organization_id,
    c.id,
    c.category,
    c.status,
    c.created_at,
    c.version,
    jsonb_build_object('object', 'integration_connection', 'id', c.id, 'provider', c.provider, 'category', c.category, 'ownership', c.ownership, 'status', c.status, 'capabilities', to_jsonb(c.capabilities), 'last_success_at', app_private.iso_timestamp(c.last_success_at), 'action_required', c.action_required, 'version', c.version, 'created_at', app_private.iso_timestamp(c.created_at), 'updated_at', app_private.iso_timestamp(c.updated_at)) as doc
   from app.integration_connections c;

alter view api.integration_connections owner to svc_api;

grant select on table api.integration_connections to svc_runtime;
grant select on table api.integration_connections to svc_owner;

-- view api.invoices

create view api.invoices with (security_invoker='false') as
 select i.organization_id,
    i.id,
    i.status,
    i.customer_id,
    i.currency,
    i.issue_date,
    i.due_date,
    i.created_at,
    i.version,
    i.number,
    jsonb_build_object('object', 'invoice', 'id', i.id, 'number', i.number, 'status', i.status, 'customer_id', i.customer_id, 'issue_date', i.issue_date, 'due_date', i.due_date, 'currency', i.currency, 'memo', i.memo, 'lines', coalesce(( select jsonb_agg(jsonb_build_object('id', l.id, 'description', l.description, 'quantity', (l.quantity)::text, 'unit_price', app_private.money_text(l.unit_price, (i.scale)::integer), 'tax_rate', (l.tax_rate)::text, 'amount', app_private.money_text(l.amount, (i.scale)::integer), 'tax_amount', app_private.money_text(l.tax_amount, (i.scale)::integer)) order by l."position") as jsonb_agg
           from app.invoice_lines l
          where (l.invoice_id = i.id)), '[]'::jsonb), 'subtotal', app_private.money_text(i.subtotal, (i.scale)::integer), 'tax_total', app_private.money_text(i.tax_total, (i.scale)::integer), 'total', app_private.money_text(i.total, (i.scale)::integer), 'amount_paid', app_private.money_text(i.amount_paid, (i.scale)::integer), 'amount_due', app_private.money_text(
        case
            when (i.status = 'void'::text) then (0)::numeric
            else (i.total - i.amount_paid)
        end, (i.scale)::integer), 'sent_at', app_private.iso_timestamp(i.sent_at), 'pdf_file_id', i.pdf_file_id, 'accounting_sync',
        case
            when (i.sync_status is not null) then jsonb_build_object('status', i.sync_status, 'connection_id', i.sync_connection_id, 'external_reference', i.sync_external_reference, 'synced_at', app_private.iso_timestamp(i.synced_at), 'error', i.sync_error)
            else null::jsonb
        end, 'version', i.version, 'created_at', app_private.iso_timestamp(i.created_at), 'updated_at', app_private.iso_timestamp(i.updated_at)) as doc
   from app.invoices i;

alter view api.invoices owner to svc_api;

grant select on table api.invoices to svc_runtime;
grant select on table api.invoices to svc_owner;

-- function api.integration_connection_hidden_reason(text)

create function api.integration_connection_hidden_reason(p_id text) returns text
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
begin
  perform app_private.refuse_on_coordinator('api.integration_connection_hidden_reason(text)');
  return (select case when c.ownership = 'personal' then 'personal'
              when c.category = 'accounting' then 'finance' else 'manager' end
    from app.integration_connections c
   where c.id = p_id and c.organization_id = v__organization_id);
end
$$;

alter function api.integration_connection_hidden_reason(p_id text) owner to svc_owner;

comment on function api.integration_connection_hidden_reason(p_id text) is 'Why getIntegrationConnection, having found no row p_id in api.integration_connections, may not show it: ''personal'' (a named user''s connection, which API Clients never use: PERSONAL_CONNECTION_NOT_ALLOWED), or the Role it is relevant to (''finance'' for accounting, ''manager'' for any other category: ROLE_REQUIRED); null when the request''s organization has no such connection (INTEGRATION_CONNECTION_NOT_FOUND). It runs as svc_owner because svc_api''s policy hides exactly those rows, and it returns the reason word alone, never the row; its WHERE and svc_owner''s policy keep it to the request''s organization.';

revoke all on function api.integration_connection_hidden_reason(p_id text) from public;
grant execute on function api.integration_connection_hidden_reason(p_id text) to svc_runtime;
grant execute on function api.integration_connection_hidden_reason(p_id text) to svc_api;
grant execute on function api.integration_connection_hidden_reason(p_id text) to svc_worker;

-- function api.integration_connections(text)

create function api.integration_connections(p_id text default null::text) returns setof api.integration_connections
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
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
$_$;

alter function api.integration_connections(p_id text) owner to svc_api;

comment on function api.integration_connections(p_id text) is 'The rows of view api.integration_connections for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

revoke all on function api.integration_connections(p_id text) from public;
grant execute on function api.integration_connections(p_id text) to svc_runtime;
grant execute on function api.integration_connections(p_id text) to svc_owner;
grant execute on function api.integration_connections(p_id text) to svc_worker;

-- function api.integration_readiness(text)

create function api.integration_readiness(p_capability text) returns jsonb
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_org text := app.current_organization_id();
  c app.integration_connections;
  v_blockers jsonb := '[]';
begin
  perform app_private.refuse_on_coordinator('api.integration_readiness(text)');
  if v_org is null then
    perform app_private.raise('SV500', 'CONTEXT_MISSING', 'no request context');
  end if;
  -- The best eligible candidate: visible organization connections first, connected ones first.
  select * into c from app.integration_connections x
   where x.organization_id = v_org and x.ownership = 'organization' and p_capability = any (x.capabilities)
     and app_private.integration_visible(x.category)
   order by (x.status = 'connected' and x.action_required is null) desc, x.last_success_at desc nulls last, x.id
   limit 1;
  if found then
    if c.status <> 'connected' or c.action_required is not null then
      v_blockers := jsonb_build_array(jsonb_build_object('code', 'INTEGRATION_CONNECTION_NOT_READY',
        'message', coalesce(c.action_required, format('the %s connection is %s; an administrator must reconnect it in the web settings',
                                                      c.provider, c.status))));
    end if;
    return jsonb_build_object('object', 'integration_readiness', 'capability', p_capability,
      'ready', jsonb_array_length(v_blockers) = 0, 'connection_id', c.id, 'blockers', v_blockers);
  end if;
  if exists (select from app.integration_connections x where x.organization_id = v_org and x.ownership = 'organization'
              and p_capability = any (x.capabilities)) then
    v_blockers := jsonb_build_array(jsonb_build_object('code', 'ROLE_REQUIRED', 'message',
      'a connection offers this capability, but it is not relevant to your Roles (accounting needs finance, others manager)'));
  elsif exists (select from app.integration_connections x where x.organization_id = v_org and x.ownership = 'personal'
                 and p_capability = any (x.capabilities)) then
    v_blockers := jsonb_build_array(jsonb_build_object('code', 'PERSONAL_CONNECTION_NOT_ALLOWED', 'message',
      'only a personal connection of a named user offers this capability; an administrator must connect it for the organization'));
  else
    v_blockers := jsonb_build_array(jsonb_build_object('code', 'CAPABILITY_NOT_AVAILABLE', 'message',
      'no connection of your organization offers this capability; an administrator can connect a provider in the web settings'));
  end if;
  return jsonb_build_object('object', 'integration_readiness', 'capability', p_capability, 'ready', false,
    'connection_id', null, 'blockers', v_blockers);
end
$$;

alter function api.integration_readiness(p_capability text) owner to svc_owner;

comment on function api.integration_readiness(p_capability text) is 'checkIntegrationConnectionReadiness, performing nothing: whether an organization-owned connection relevant to the caller''s Roles (accounting to finance, every other category to manager) offers p_capability and is connected with no action required, with machine-readable blockers and safe remediation text (INTEGRATION_CONNECTION_NOT_READY, ROLE_REQUIRED, PERSONAL_CONNECTION_NOT_ALLOWED, CAPABILITY_NOT_AVAILABLE). It runs as svc_owner so that it can see the personal and Role-hidden connections svc_api''s policy hides, only to name the blocker (it returns the id of a visible connection alone); it reads the request''s organization only, and raises SV500 CONTEXT_MISSING without a request context.';

revoke all on function api.integration_readiness(p_capability text) from public;
grant execute on function api.integration_readiness(p_capability text) to svc_runtime;
grant execute on function api.integration_readiness(p_capability text) to svc_api;
grant execute on function api.integration_readiness(p_capability text) to svc_worker;

-- function api.invoice_attach_pdf(text, text, bytea)

create function api.invoice_attach_pdf(p_id text, p_name text, p_content bytea) returns text
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  v__organization_id text := app.current_organization_id();
  i app.invoices;
  v_file text;
begin
  perform app_private.refuse_on_coordinator('api.invoice_attach_pdf(text,text,bytea)');
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
$_$;

alter function api.invoice_attach_pdf(p_id text, p_name text, p_content bytea) owner to svc_owner;

comment on function api.invoice_attach_pdf(p_id text, p_name text, p_content bytea) is 'sendInvoice''s second step, in the transaction of api.invoice_send: stores the issued invoice''s PDF as a retained financial-record file linked to the invoice (size and SHA-256 computed here from the bytes) and sets its pdf_file_id, once per invoice; a draft or an invoice that already has its PDF is refused (SVC09 INVOICE_NOT_EDITABLE), and so is anything but a %PDF- document ending in %%EOF with a plain .pdf name (SVV22 VALIDATION_FAILED). It runs as svc_owner because svc_api may write neither file contents nor pdf_file_id; it takes the invoice only in the request''s organization and only when the caller holds manager or finance, which it checks itself since svc_owner''s policy does not (INVOICE_NOT_FOUND otherwise).';

revoke all on function api.invoice_attach_pdf(p_id text, p_name text, p_content bytea) from public;
grant execute on function api.invoice_attach_pdf(p_id text, p_name text, p_content bytea) to svc_runtime;
grant execute on function api.invoice_attach_pdf(p_id text, p_name text, p_content bytea) to svc_api;
grant execute on function api.invoice_attach_pdf(p_id text, p_name text, p_content bytea) to svc_worker;

-- function api.invoice_create(jsonb)

create function api.invoice_create(p_body jsonb) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function api.invoice_create(p_body jsonb) owner to svc_api;

comment on function api.invoice_create(p_body jsonb) is 'createInvoice: a draft in the request''s organization for a billing customer (cus_) of that organization that is not deleted (else SVV22 VALIDATION_FAILED), in the body''s currency, else the customer''s, else the organization''s, which must be an ISO 4217 code; its lines are validated and written by app_private.invoice_set_lines, and the triggers compute every amount and total (a client never supplies totals). It runs as svc_api, so svc_runtime, which holds no table privilege, writes only under svc_api''s column grants and policies: the request''s organization and the manager or finance Role ("Managers and finance write invoices").';

revoke all on function api.invoice_create(p_body jsonb) from public;
grant execute on function api.invoice_create(p_body jsonb) to svc_runtime;
grant execute on function api.invoice_create(p_body jsonb) to svc_owner;
grant execute on function api.invoice_create(p_body jsonb) to svc_worker;

-- function api.invoice_replace_lines(text, integer[], jsonb)

create function api.invoice_replace_lines(p_id text, p_if_match integer[], p_lines jsonb) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  i app.invoices := app_private.invoice_lock(p_id, p_if_match);
begin
  perform app_private.invoice_set_lines(i, p_lines);
  -- The lines are part of the invoice: replacing them is a new version even when the totals stay.
  update app.invoices x set memo = x.memo where x.organization_id = i.organization_id and x.id = i.id;
  return query select v.doc, v.version from api.invoices(i.id) v where v.id = i.id;
end
$$;

alter function api.invoice_replace_lines(p_id text, p_if_match integer[], p_lines jsonb) owner to svc_api;

comment on function api.invoice_replace_lines(p_id text, p_if_match integer[], p_lines jsonb) is 'replaceInvoiceLines: replaces every line of a draft at once, the new set validated as a whole so that it is accepted entirely or nothing changes, after app_private.invoice_lock has checked If-Match (SVS12 STALE_RESOURCE) and that the invoice is a draft (SVC09 INVOICE_NOT_EDITABLE, since only a draft is editable). It always writes the invoice row, so new lines are a new version even when the totals stay. It runs as svc_api: only the request''s organization and the manager or finance Role, through svc_api''s policies on invoices and lines (INVOICE_NOT_FOUND otherwise).';

revoke all on function api.invoice_replace_lines(p_id text, p_if_match integer[], p_lines jsonb) from public;
grant execute on function api.invoice_replace_lines(p_id text, p_if_match integer[], p_lines jsonb) to svc_runtime;
grant execute on function api.invoice_replace_lines(p_id text, p_if_match integer[], p_lines jsonb) to svc_owner;
grant execute on function api.invoice_replace_lines(p_id text, p_if_match integer[], p_lines jsonb) to svc_worker;

-- function api.invoice_send(text, boolean)

create function api.invoice_send(p_id text, p_email boolean) returns jsonb
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    set lock_timeout to '5s'
    as $$
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

alter function api.invoice_send(p_id text, p_email boolean) owner to svc_owner;

comment on function api.invoice_send(p_id text, p_email boolean) is 'sendInvoice, the database half: issues a draft of the request''s organization (status sent: the lifecycle trigger numbers it, fixes its dates and starts the accounting sync) and returns what the PDF and the email need; a non-draft is refused (SVC09 WORKFLOW_BLOCKED), and so is an email to a customer without a delivery email (SVV22 CUSTOMER_DELIVERY_DETAILS_MISSING). The server then attaches the PDF (api.invoice_attach_pdf) and hands the email over before committing, so a refused email rolls back the number, the PDF and the status together, and lock_timeout 5s bounds the wait for the organization''s number counter (55P03, answered 409 with Retry-After). It runs as svc_owner because svc_api may not write statuses or numbers; it takes the invoice only in the request''s organization and checks the manager or finance Role itself (INVOICE_NOT_FOUND otherwise).';

revoke all on function api.invoice_send(p_id text, p_email boolean) from public;
grant execute on function api.invoice_send(p_id text, p_email boolean) to svc_runtime;
grant execute on function api.invoice_send(p_id text, p_email boolean) to svc_api;
grant execute on function api.invoice_send(p_id text, p_email boolean) to svc_worker;

-- function api.invoice_update(text, integer[], jsonb)

create function api.invoice_update(p_id text, p_if_match integer[], p_patch jsonb) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function api.invoice_update(p_id text, p_if_match integer[], p_patch jsonb) owner to svc_api;

comment on function api.invoice_update(p_id text, p_if_match integer[], p_patch jsonb) is 'updateInvoice: changes the keys present in p_patch (customer_id, currency, issue_date, due_date, memo, lines) of a draft, after app_private.invoice_lock has checked If-Match (SVS12 STALE_RESOURCE) and the draft status (SVC09 INVOICE_NOT_EDITABLE); a new customer must be a billing customer of the organization that is not deleted, and a new currency an ISO 4217 code (SVV22 VALIDATION_FAILED). It runs as svc_api, so it writes only the draft fields svc_api''s column grants allow, in the request''s organization and with the manager or finance Role ("Managers and finance change invoices").';

revoke all on function api.invoice_update(p_id text, p_if_match integer[], p_patch jsonb) from public;
grant execute on function api.invoice_update(p_id text, p_if_match integer[], p_patch jsonb) to svc_runtime;
grant execute on function api.invoice_update(p_id text, p_if_match integer[], p_patch jsonb) to svc_owner;
grant execute on function api.invoice_update(p_id text, p_if_match integer[], p_patch jsonb) to svc_worker;

-- function api.invoice_void(text)

create function api.invoice_void(p_id text) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function api.invoice_void(p_id text) owner to svc_owner;

comment on function api.invoice_void(p_id text) is 'voidInvoice: an issued invoice without recorded payments becomes void and stays (issued invoices are never deleted; a void one is returned unchanged); a draft, an invoice with payments, one whose accounting sync is in flight, or one whose last sync failed without a definite answer (the provider may hold it) is refused with SVC09 WORKFLOW_BLOCKED. A synchronized invoice is voided only through a ready accounting connection (else ACCOUNTING_CONNECTION_NOT_READY) that offers invoice.void, and the void is queued for synchronization too. It runs as svc_owner because svc_api may not write statuses or sync fields; it takes the invoice only in the request''s organization and checks the manager or finance Role itself (INVOICE_NOT_FOUND otherwise).';

revoke all on function api.invoice_void(p_id text) from public;
grant execute on function api.invoice_void(p_id text) to svc_runtime;
grant execute on function api.invoice_void(p_id text) to svc_api;
grant execute on function api.invoice_void(p_id text) to svc_worker;

-- function api.invoices(text)

create function api.invoices(p_id text default null::text) returns setof api.invoices
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
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
$_$;

alter function api.invoices(p_id text) owner to svc_api;

comment on function api.invoices(p_id text) is 'The rows of view api.invoices for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

revoke all on function api.invoices(p_id text) from public;
grant execute on function api.invoices(p_id text) to svc_runtime;
grant execute on function api.invoices(p_id text) to svc_owner;
grant execute on function api.invoices(p_id text) to svc_worker;

-- function api.payment_create(jsonb)

create function api.payment_create(p_body jsonb) returns table(doc jsonb)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function api.payment_create(p_body jsonb) owner to svc_api;

comment on function api.payment_create(p_body jsonb) is 'createPayment: records an externally received payment (it charges nothing) of an invoice of the request''s organization and returns it with the updated invoice; the _100_apply trigger checks it against the invoice (issued, same currency, no more decimals than the currency has, not above the amount due) and adds it to amount_paid. It runs as svc_api, so the invoice must be readable with the manager or finance Role (else INVOICE_NOT_FOUND) and the insert passes "Managers and finance record payments"; the invoice''s amount_paid and status, which svc_api may not write, are written by that trigger as svc_owner.';

revoke all on function api.payment_create(p_body jsonb) from public;
grant execute on function api.payment_create(p_body jsonb) to svc_runtime;
grant execute on function api.payment_create(p_body jsonb) to svc_owner;
grant execute on function api.payment_create(p_body jsonb) to svc_worker;

-- function control.customer_create(text, text, text, text, text)

create function control.customer_create(p_org text, p_kind text, p_name text, p_delivery_email text default null::text, p_currency text default null::text) returns text
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_id text := app_private.new_id(case p_kind when 'company' then 'com' else 'cus' end);
begin
  insert into app.customers (organization_id, id, kind, name, delivery_email, currency)
  values (p_org, v_id, p_kind, p_name, p_delivery_email, upper(p_currency));
  return v_id;
end
$$;

revoke all on function control.customer_create(p_org text, p_kind text, p_name text, p_delivery_email text, p_currency text) from public;
grant execute on function control.customer_create(p_org text, p_kind text, p_name text, p_delivery_email text, p_currency text) to svc_admin;

-- function control.customer_delete(text, text)

create function control.customer_delete(p_org text, p_id text) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  update app.customers set deleted_at = now() where organization_id = p_org and id = p_id and deleted_at is null;
  perform app_private.require_found(found, 'CUSTOMER_NOT_FOUND', p_id);
end
$$;

revoke all on function control.customer_delete(p_org text, p_id text) from public;
grant execute on function control.customer_delete(p_org text, p_id text) to svc_admin;

-- function control.integration_add(text, text, text, text, text, text[], text, text)

create function control.integration_add(p_org text, p_provider text, p_category text, p_ownership text, p_status text, p_capabilities text[], p_action_required text default null::text, p_owner_member text default null::text) returns text
    language sql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
  insert into app.integration_connections (organization_id, provider, category, ownership, owner_member_id, status, capabilities,
                                           action_required, last_success_at)
  values (p_org, p_provider, p_category, p_ownership, app_private.normalize_email(p_owner_member), p_status,
          coalesce(p_capabilities, '{}'), p_action_required, case when p_status = 'connected' then now() end)
  returning id
$$;

revoke all on function control.integration_add(p_org text, p_provider text, p_category text, p_ownership text, p_status text, p_capabilities text[], p_action_required text, p_owner_member text) from public;
grant execute on function control.integration_add(p_org text, p_provider text, p_category text, p_ownership text, p_status text, p_capabilities text[], p_action_required text, p_owner_member text) to svc_admin;

-- function control.integration_update(text, text, text[], text, boolean)

create function control.integration_update(p_id text, p_status text default null::text, p_capabilities text[] default null::text[], p_action_required text default null::text, p_clear_action_required boolean default false) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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
$$;

revoke all on function control.integration_update(p_id text, p_status text, p_capabilities text[], p_action_required text, p_clear_action_required boolean) from public;
grant execute on function control.integration_update(p_id text, p_status text, p_capabilities text[], p_action_required text, p_clear_action_required boolean) to svc_admin;

-- function control.invoice_sync_retry(text)

create function control.invoice_sync_retry(p_invoice text) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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
$$;

revoke all on function control.invoice_sync_retry(p_invoice text) from public;
grant execute on function control.invoice_sync_retry(p_invoice text) to svc_admin;

-- function control.org_set_invoice_policy(text, boolean, text, integer)

create function control.org_set_invoice_policy(p_org text, p_require_accounting_connection boolean default null::boolean, p_number_prefix text default null::text, p_payment_terms_days integer default null::integer) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
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

revoke all on function control.org_set_invoice_policy(p_org text, p_require_accounting_connection boolean, p_number_prefix text, p_payment_terms_days integer) from public;
grant execute on function control.org_set_invoice_policy(p_org text, p_require_accounting_connection boolean, p_number_prefix text, p_payment_terms_days integer) to svc_admin;

-- rows of app_private.currencies

insert into app_private.currencies (code, minor_units) values
	('AED', 2),
	('AFN', 2),
	('ALL', 2),
	('AMD', 2),
	('ANG', 2),
	('AOA', 2),
	('ARS', 2),
	('AUD', 2),
	('AWG', 2),
	('AZN', 2),
	('BAM', 2),
	('BBD', 2),
	('BDT', 2),
	('BGN', 2),
	('BMD', 2),
	('BND', 2),
	('BOB', 2),
	('BRL', 2),
	('BSD', 2),
	('BTN', 2),
	('BWP', 2),
	('BYN', 2),
	('BZD', 2),
	('CAD', 2),
	('CDF', 2),
	('CHF', 2),
	('CNY', 2),
	('COP', 2),
	('CRC', 2),
	('CUP', 2),
	('CVE', 2),
	('CZK', 2),
	('DKK', 2),
	('DOP', 2),
	('DZD', 2),
	('EGP', 2),
	('ERN', 2),
	('ETB', 2),
	('EUR', 2),
	('FJD', 2),
	('FKP', 2),
	('GBP', 2),
	('GEL', 2),
	('GHS', 2),
	('GIP', 2),
	('GMD', 2),
	('GTQ', 2),
	('GYD', 2),
	('HKD', 2),
	('HNL', 2),
	('HTG', 2),
	('HUF', 2),
	('IDR', 2),
	('ILS', 2),
	('INR', 2),
	('IRR', 2),
	('JMD', 2),
	('KES', 2),
	('KGS', 2),
	('KHR', 2),
	('KPW', 2),
	('KYD', 2),
	('KZT', 2),
	('LAK', 2),
	('LBP', 2),
	('LKR', 2),
	('LRD', 2),
	('LSL', 2),
	('MAD', 2),
	('MDL', 2),
	('MGA', 2),
	('MKD', 2),
	('MMK', 2),
	('MNT', 2),
	('MOP', 2),
	('MRU', 2),
	('MUR', 2),
	('MVR', 2),
	('MWK', 2),
	('MXN', 2),
	('MYR', 2),
	('MZN', 2),
	('NAD', 2),
	('NGN', 2),
	('NIO', 2),
	('NOK', 2),
	('NPR', 2),
	('NZD', 2),
	('PAB', 2),
	('PEN', 2),
	('PGK', 2),
	('PHP', 2),
	('PKR', 2),
	('PLN', 2),
	('QAR', 2),
	('RON', 2),
	('RSD', 2),
	('RUB', 2),
	('SAR', 2),
	('SBD', 2),
	('SCR', 2),
	('SDG', 2),
	('SEK', 2),
	('SGD', 2),
	('SHP', 2),
	('SLE', 2),
	('SOS', 2),
	('SRD', 2),
	('SSP', 2),
	('STN', 2),
	('SVC', 2),
	('SYP', 2),
	('SZL', 2),
	('THB', 2),
	('TJS', 2),
	('TMT', 2),
	('TOP', 2),
	('TRY', 2),
	('TTD', 2),
	('TWD', 2),
	('TZS', 2),
	('UAH', 2),
	('USD', 2),
	('UYU', 2),
	('UZS', 2),
	('VES', 2),
	('WST', 2),
	('XCD', 2),
	('YER', 2),
	('ZAR', 2),
	('ZMW', 2),
	('ZWL', 2),
	('BIF', 0),
	('CLP', 0),
	('DJF', 0),
	('GNF', 0),
	('ISK', 0),
	('JPY', 0),
	('KMF', 0),
	('KRW', 0),
	('PYG', 0),
	('RWF', 0),
	('UGX', 0),
	('VND', 0),
	('VUV', 0),
	('XAF', 0),
	('XOF', 0),
	('XPF', 0),
	('BHD', 3),
	('IQD', 3),
	('JOD', 3),
	('KWD', 3),
	('LYD', 3),
	('OMR', 3),
	('TND', 3);

revoke create on schema api, app, app_private, control, reporting, skills from svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
