-- migrate:up

/** Baseline (issue 38), area 6 of 15. Invoicing: customers, currencies, invoices and their lines, payments, numbering, integration connections.
 * The current definitions that migrations 20261122000100 to 20261205003400 built (git history before
 * the baseline), as pg_dump writes them; db/README.md says how they were made and compared. */
SET LOCAL check_function_bodies = false;
SET LOCAL client_min_messages = warning;
SELECT pg_catalog.set_config('search_path', '', true);

-- function api.integration_connection_hidden_reason(text)

CREATE FUNCTION api.integration_connection_hidden_reason(p_id text) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

SET LOCAL default_tablespace = '';

SET LOCAL default_table_access_method = heap;

-- table app.integration_connections

CREATE TABLE app.integration_connections (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('icn'::text) NOT NULL,
    provider text NOT NULL,
    category text NOT NULL,
    ownership text NOT NULL,
    owner_member_id text,
    status text NOT NULL,
    capabilities text[] DEFAULT '{}'::text[] NOT NULL,
    action_required text,
    last_success_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    CONSTRAINT integration_connections_action_required_length CHECK ((length(action_required) <= 500)),
    CONSTRAINT integration_connections_category_format CHECK ((category ~ '^[a-z_]{1,40}$'::text)),
    CONSTRAINT integration_connections_ownership_valid CHECK ((ownership = ANY (ARRAY['organization'::text, 'personal'::text]))),
    CONSTRAINT integration_connections_personal_has_owner CHECK (((ownership = 'personal'::text) = (owner_member_id IS NOT NULL))),
    CONSTRAINT integration_connections_provider_format CHECK ((provider ~ '^[a-z0-9_.-]{1,50}$'::text)),
    CONSTRAINT integration_connections_status_valid CHECK ((status = ANY (ARRAY['connected'::text, 'action_required'::text, 'error'::text, 'disconnected'::text])))
);

ALTER TABLE ONLY app.integration_connections FORCE ROW LEVEL SECURITY;

-- view api.integration_connections

CREATE VIEW api.integration_connections WITH (security_invoker='false') AS
 SELECT c.organization_id,
    c.id,
    c.category,
    c.status,
    c.created_at,
    c.version,
    jsonb_build_object('object', 'integration_connection', 'id', c.id, 'provider', c.provider, 'category', c.category, 'ownership', c.ownership, 'status', c.status, 'capabilities', to_jsonb(c.capabilities), 'last_success_at', app_private.iso_timestamp(c.last_success_at), 'action_required', c.action_required, 'version', c.version, 'created_at', app_private.iso_timestamp(c.created_at), 'updated_at', app_private.iso_timestamp(c.updated_at)) AS doc
   FROM app.integration_connections c;

ALTER TABLE api.integration_connections OWNER TO svc_api;

-- function api.integration_connections(text)

CREATE FUNCTION api.integration_connections(p_id text DEFAULT NULL::text) RETURNS SETOF api.integration_connections
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

ALTER FUNCTION api.integration_connections(p_id text) OWNER TO svc_api;

-- comment api.FUNCTION integration_connections(p_id text)

COMMENT ON FUNCTION api.integration_connections(p_id text) IS 'The rows of view api.integration_connections for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

-- function api.integration_readiness(text)

CREATE FUNCTION api.integration_readiness(p_capability text) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function api.invoice_attach_pdf(text, text, bytea)

CREATE FUNCTION api.invoice_attach_pdf(p_id text, p_name text, p_content bytea) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
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

-- function api.invoice_create(jsonb)

CREATE FUNCTION api.invoice_create(p_body jsonb) RETURNS TABLE(doc jsonb, version integer)
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

ALTER FUNCTION api.invoice_create(p_body jsonb) OWNER TO svc_api;

-- function api.invoice_replace_lines(text, integer[], jsonb)

CREATE FUNCTION api.invoice_replace_lines(p_id text, p_if_match integer[], p_lines jsonb) RETURNS TABLE(doc jsonb, version integer)
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

ALTER FUNCTION api.invoice_replace_lines(p_id text, p_if_match integer[], p_lines jsonb) OWNER TO svc_api;

-- function api.invoice_send(text, boolean)

CREATE FUNCTION api.invoice_send(p_id text, p_email boolean) RETURNS jsonb
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

-- function api.invoice_update(text, integer[], jsonb)

CREATE FUNCTION api.invoice_update(p_id text, p_if_match integer[], p_patch jsonb) RETURNS TABLE(doc jsonb, version integer)
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

ALTER FUNCTION api.invoice_update(p_id text, p_if_match integer[], p_patch jsonb) OWNER TO svc_api;

-- function api.invoice_void(text)

CREATE FUNCTION api.invoice_void(p_id text) RETURNS TABLE(doc jsonb, version integer)
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

-- table app.invoice_lines

CREATE TABLE app.invoice_lines (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('invl'::text) NOT NULL,
    invoice_id text NOT NULL,
    "position" integer NOT NULL,
    description text NOT NULL,
    quantity numeric NOT NULL,
    unit_price numeric NOT NULL,
    tax_rate numeric DEFAULT 0 NOT NULL,
    amount numeric NOT NULL,
    tax_amount numeric NOT NULL,
    CONSTRAINT invoice_lines_description_length CHECK (((length(description) >= 1) AND (length(description) <= 1000))),
    CONSTRAINT invoice_lines_quantity_range CHECK (((quantity > (0)::numeric) AND (quantity < (1000000000)::numeric) AND (scale(quantity) <= 4))),
    CONSTRAINT invoice_lines_tax_rate_range CHECK (((tax_rate >= (0)::numeric) AND (tax_rate <= (100)::numeric) AND (scale(tax_rate) <= 4))),
    CONSTRAINT invoice_lines_unit_price_range CHECK ((abs(unit_price) < ('1000000000000'::bigint)::numeric))
);

ALTER TABLE ONLY app.invoice_lines FORCE ROW LEVEL SECURITY;

-- table app.invoices

CREATE TABLE app.invoices (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('inv'::text) NOT NULL,
    number text,
    status text DEFAULT 'draft'::text NOT NULL,
    customer_id text NOT NULL,
    currency text NOT NULL,
    scale smallint NOT NULL,
    issue_date date,
    due_date date,
    memo text,
    subtotal numeric DEFAULT 0 NOT NULL,
    tax_total numeric DEFAULT 0 NOT NULL,
    total numeric DEFAULT 0 NOT NULL,
    amount_paid numeric DEFAULT 0 NOT NULL,
    created_by_client_id text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    sent_at timestamp with time zone,
    pdf_file_id text,
    sync_connection_id text,
    sync_status text,
    sync_external_reference text,
    sync_error text,
    synced_at timestamp with time zone,
    sync_failure_definitive boolean,
    CONSTRAINT invoices_dates_ordered CHECK (((due_date IS NULL) OR (issue_date IS NULL) OR (due_date >= issue_date))),
    CONSTRAINT invoices_issued_has_number CHECK (((status = 'draft'::text) = (number IS NULL))),
    CONSTRAINT invoices_memo_length CHECK ((length(memo) <= 5000)),
    CONSTRAINT invoices_paid_means_settled CHECK (((status <> 'paid'::text) OR (amount_paid = total))),
    CONSTRAINT invoices_paid_within_total CHECK (((amount_paid >= (0)::numeric) AND (amount_paid <= GREATEST(total, (0)::numeric)))),
    CONSTRAINT invoices_status_valid CHECK ((status = ANY (ARRAY['draft'::text, 'sent'::text, 'paid'::text, 'void'::text]))),
    CONSTRAINT invoices_sync_error_length CHECK ((length(sync_error) <= 500)),
    CONSTRAINT invoices_sync_external_reference_length CHECK ((length(sync_external_reference) <= 255)),
    CONSTRAINT invoices_sync_has_connection CHECK (((sync_status IS NULL) = (sync_connection_id IS NULL))),
    CONSTRAINT invoices_sync_status_valid CHECK ((sync_status = ANY (ARRAY['pending'::text, 'synced'::text, 'failed'::text]))),
    CONSTRAINT invoices_total_not_negative CHECK ((total >= (0)::numeric))
);

ALTER TABLE ONLY app.invoices FORCE ROW LEVEL SECURITY;

-- view api.invoices

CREATE VIEW api.invoices WITH (security_invoker='false') AS
 SELECT i.organization_id,
    i.id,
    i.status,
    i.customer_id,
    i.currency,
    i.issue_date,
    i.due_date,
    i.created_at,
    i.version,
    i.number,
    jsonb_build_object('object', 'invoice', 'id', i.id, 'number', i.number, 'status', i.status, 'customer_id', i.customer_id, 'issue_date', i.issue_date, 'due_date', i.due_date, 'currency', i.currency, 'memo', i.memo, 'lines', COALESCE(( SELECT jsonb_agg(jsonb_build_object('id', l.id, 'description', l.description, 'quantity', (l.quantity)::text, 'unit_price', app_private.money_text(l.unit_price, (i.scale)::integer), 'tax_rate', (l.tax_rate)::text, 'amount', app_private.money_text(l.amount, (i.scale)::integer), 'tax_amount', app_private.money_text(l.tax_amount, (i.scale)::integer)) ORDER BY l."position") AS jsonb_agg
           FROM app.invoice_lines l
          WHERE (l.invoice_id = i.id)), '[]'::jsonb), 'subtotal', app_private.money_text(i.subtotal, (i.scale)::integer), 'tax_total', app_private.money_text(i.tax_total, (i.scale)::integer), 'total', app_private.money_text(i.total, (i.scale)::integer), 'amount_paid', app_private.money_text(i.amount_paid, (i.scale)::integer), 'amount_due', app_private.money_text(
        CASE
            WHEN (i.status = 'void'::text) THEN (0)::numeric
            ELSE (i.total - i.amount_paid)
        END, (i.scale)::integer), 'sent_at', app_private.iso_timestamp(i.sent_at), 'pdf_file_id', i.pdf_file_id, 'accounting_sync',
        CASE
            WHEN (i.sync_status IS NOT NULL) THEN jsonb_build_object('status', i.sync_status, 'connection_id', i.sync_connection_id, 'external_reference', i.sync_external_reference, 'synced_at', app_private.iso_timestamp(i.synced_at), 'error', i.sync_error)
            ELSE NULL::jsonb
        END, 'version', i.version, 'created_at', app_private.iso_timestamp(i.created_at), 'updated_at', app_private.iso_timestamp(i.updated_at)) AS doc
   FROM app.invoices i;

ALTER TABLE api.invoices OWNER TO svc_api;

-- function api.invoices(text)

CREATE FUNCTION api.invoices(p_id text DEFAULT NULL::text) RETURNS SETOF api.invoices
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

ALTER FUNCTION api.invoices(p_id text) OWNER TO svc_api;

-- comment api.FUNCTION invoices(p_id text)

COMMENT ON FUNCTION api.invoices(p_id text) IS 'The rows of view api.invoices for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

-- function api.payment_create(jsonb)

CREATE FUNCTION api.payment_create(p_body jsonb) RETURNS TABLE(doc jsonb)
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

ALTER FUNCTION api.payment_create(p_body jsonb) OWNER TO svc_api;

-- function app_private.accounting_connection(text)

CREATE FUNCTION app_private.accounting_connection(p_org text) RETURNS app.integration_connections
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.accounting_not_ready(app.integration_connections, text)

CREATE FUNCTION app_private.accounting_not_ready(c app.integration_connections, p_doing text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.raise('SVC09', 'ACCOUNTING_CONNECTION_NOT_READY',
    case when c.id is null
      then format('your organization requires an accounting connection to %s, and none offers invoice.export; an administrator connects one in the web settings', p_doing)
      else format('the %s accounting connection %s is %s: %s', c.provider, c.id, c.status,
                  coalesce(c.action_required, 'an administrator must reconnect it in the web settings')) end);
end
$$;

-- function app_private.accounting_ready(app.integration_connections)

CREATE FUNCTION app_private.accounting_ready(c app.integration_connections) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select c.id is not null and c.status = 'connected' and c.action_required is null $$;

-- function app_private.integration_visible(text)

CREATE FUNCTION app_private.integration_visible(p_category text) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select case when p_category = 'accounting' then app.has_role('finance') else app.has_role('manager') end $$;

-- function app_private.invoice_lines_errors(jsonb, integer)

CREATE FUNCTION app_private.invoice_lines_errors(p_lines jsonb, p_scale integer) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
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

-- function app_private.invoice_lock(text, integer[])

CREATE FUNCTION app_private.invoice_lock(p_id text, p_if_match integer[]) RETURNS app.invoices
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.invoice_not_found(text)

CREATE FUNCTION app_private.invoice_not_found(p_id text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select app_private.raise('SVN04', 'INVOICE_NOT_FOUND', format('no invoice %s in your organization', p_id)) $$;

-- function app_private.invoice_recompute_totals(text[], text[])

CREATE FUNCTION app_private.invoice_recompute_totals(p_orgs text[], p_invoices text[]) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.invoice_set_lines(app.invoices, jsonb)

CREATE FUNCTION app_private.invoice_set_lines(p_invoice app.invoices, p_lines jsonb) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.raise_errors(app_private.invoice_lines_errors(p_lines, p_invoice.scale));
  delete from app.invoice_lines where organization_id = p_invoice.organization_id and invoice_id = p_invoice.id;
  insert into app.invoice_lines (organization_id, invoice_id, position, description, quantity, unit_price, tax_rate)
  select p_invoice.organization_id, p_invoice.id, (o - 1)::integer, l ->> 'description', (l ->> 'quantity')::numeric,
         (l ->> 'unit_price')::numeric, coalesce((l ->> 'tax_rate')::numeric, 0)
    from jsonb_array_elements(p_lines) with ordinality as x(l, o);
end
$$;

-- function app_private.tg_integration_connections__emit()

CREATE FUNCTION app_private.tg_integration_connections__emit() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if new.version <> old.version and new.ownership = 'organization' then
    perform app_private.emit_event(new.organization_id, 'integration_connection.updated', 'integration_connection', new.id, new.version);
  end if;
  return null;
end
$$;

-- function app_private.tg_invoice_lines__compute()

CREATE FUNCTION app_private.tg_invoice_lines__compute() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_invoice_lines__totals()

CREATE FUNCTION app_private.tg_invoice_lines__totals() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_invoice_lines__totals_changed()

CREATE FUNCTION app_private.tg_invoice_lines__totals_changed() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_invoices__emit()

CREATE FUNCTION app_private.tg_invoices__emit() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_invoices__guard()

CREATE FUNCTION app_private.tg_invoices__guard() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_invoices__lifecycle()

CREATE FUNCTION app_private.tg_invoices__lifecycle() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_invoices__pdf_required()

CREATE FUNCTION app_private.tg_invoices__pdf_required() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if exists (select from app.invoices x where x.organization_id = new.organization_id and x.id = new.id and x.status <> 'draft' and x.pdf_file_id is null) then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', format('%s cannot be issued without its PDF; sendInvoice makes it', new.id));
  end if;
  return null;
end
$$;

-- function app_private.tg_invoices__queue_sync()

CREATE FUNCTION app_private.tg_invoices__queue_sync() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if new.sync_status = 'pending' and old.sync_status is distinct from 'pending' then
    perform app_private.queue_job(new.organization_id, 'accounting_sync',
      json_build_object('invoice_id', new.id, 'action', case when new.status = 'void' then 'void' else 'export' end),
      'accounting_sync:' || new.id, 8);
  end if;
  return null;
end
$$;

-- function app_private.tg_invoices__touch()

CREATE FUNCTION app_private.tg_invoices__touch() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  new.updated_at := now();
  new.version := case when old.xmin = pg_current_xact_id()::xid then old.version else old.version + 1 end;
  return new;
end
$$;

-- function app_private.tg_payments__apply()

CREATE FUNCTION app_private.tg_payments__apply() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_payments__emit()

CREATE FUNCTION app_private.tg_payments__emit() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.emit_event(new.organization_id, 'payment.created', 'payment', new.id, 1);
  return null;
end
$$;

-- function app_private.tg_payments__immutable()

CREATE FUNCTION app_private.tg_payments__immutable() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.raise('SVC09', 'CONFLICT', 'payments are records: they are never changed or deleted');
end
$$;

-- function control.customer_create(text, text, text, text, text)

CREATE FUNCTION control.customer_create(p_org text, p_kind text, p_name text, p_delivery_email text DEFAULT NULL::text, p_currency text DEFAULT NULL::text) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_id text := app_private.new_id(case p_kind when 'company' then 'com' else 'cus' end);
begin
  insert into app.customers (organization_id, id, kind, name, delivery_email, currency)
  values (p_org, v_id, p_kind, p_name, p_delivery_email, upper(p_currency));
  return v_id;
end
$$;

-- function control.customer_delete(text, text)

CREATE FUNCTION control.customer_delete(p_org text, p_id text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  update app.customers set deleted_at = now() where organization_id = p_org and id = p_id and deleted_at is null;
  perform app_private.require_found(found, 'CUSTOMER_NOT_FOUND', p_id);
end
$$;

-- function control.integration_add(text, text, text, text, text, text[], text, text)

CREATE FUNCTION control.integration_add(p_org text, p_provider text, p_category text, p_ownership text, p_status text, p_capabilities text[], p_action_required text DEFAULT NULL::text, p_owner_member text DEFAULT NULL::text) RETURNS text
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  insert into app.integration_connections (organization_id, provider, category, ownership, owner_member_id, status, capabilities,
                                           action_required, last_success_at)
  values (p_org, p_provider, p_category, p_ownership, app_private.normalize_email(p_owner_member), p_status,
          coalesce(p_capabilities, '{}'), p_action_required, case when p_status = 'connected' then now() end)
  returning id
$$;

-- function control.integration_update(text, text, text[], text, boolean)

CREATE FUNCTION control.integration_update(p_id text, p_status text DEFAULT NULL::text, p_capabilities text[] DEFAULT NULL::text[], p_action_required text DEFAULT NULL::text, p_clear_action_required boolean DEFAULT false) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function control.invoice_sync_retry(text)

CREATE FUNCTION control.invoice_sync_retry(p_invoice text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function control.org_set_invoice_policy(text, boolean, text, integer)

CREATE FUNCTION control.org_set_invoice_policy(p_org text, p_require_accounting_connection boolean DEFAULT NULL::boolean, p_number_prefix text DEFAULT NULL::text, p_payment_terms_days integer DEFAULT NULL::integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  update app.organizations
     set invoices_require_accounting_connection = coalesce(p_require_accounting_connection, invoices_require_accounting_connection),
         invoice_number_prefix = coalesce(p_number_prefix, invoice_number_prefix),
         invoice_payment_terms_days = coalesce(p_payment_terms_days, invoice_payment_terms_days)
   where id = p_org;
  perform app_private.require_found(found, 'ORGANIZATION_NOT_FOUND', p_org);
end
$$;

-- table app.customers

CREATE TABLE app.customers (
    organization_id text NOT NULL,
    id text NOT NULL,
    kind text NOT NULL,
    name text NOT NULL,
    delivery_email text,
    currency text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    deleted_at timestamp with time zone,
    CONSTRAINT customers_currency_iso4217 CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT customers_delivery_email_format CHECK ((delivery_email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'::text)),
    CONSTRAINT customers_id_prefix_matches_kind CHECK ((id ~~
CASE kind
    WHEN 'company'::text THEN 'com\_%'::text
    ELSE 'cus\_%'::text
END)),
    CONSTRAINT customers_kind_valid CHECK ((kind = ANY (ARRAY['company'::text, 'billing'::text]))),
    CONSTRAINT customers_name_length CHECK (((length(name) >= 1) AND (length(name) <= 200)))
);

ALTER TABLE ONLY app.customers FORCE ROW LEVEL SECURITY;

-- table app.payments

CREATE TABLE app.payments (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('pay'::text) NOT NULL,
    invoice_id text NOT NULL,
    amount numeric NOT NULL,
    currency text NOT NULL,
    received_date date NOT NULL,
    method text NOT NULL,
    external_reference text,
    created_by_client_id text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT payments_amount_positive CHECK ((amount > (0)::numeric)),
    CONSTRAINT payments_external_reference_length CHECK ((length(external_reference) <= 255)),
    CONSTRAINT payments_method_length CHECK (((length(method) >= 1) AND (length(method) <= 50)))
);

ALTER TABLE ONLY app.payments FORCE ROW LEVEL SECURITY;

-- table app_private.currencies

CREATE TABLE app_private.currencies (
    code text NOT NULL,
    minor_units smallint NOT NULL,
    CONSTRAINT currencies_code_format CHECK ((code ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT currencies_minor_units_range CHECK (((minor_units >= 0) AND (minor_units <= 4)))
);

-- table app_private.invoice_number_counters

CREATE TABLE app_private.invoice_number_counters (
    organization_id text NOT NULL,
    last_number bigint NOT NULL,
    CONSTRAINT invoice_number_counters_positive CHECK ((last_number > 0))
);

-- constraint app.customers customers_pkey

ALTER TABLE ONLY app.customers
    ADD CONSTRAINT customers_pkey PRIMARY KEY (organization_id, id);

-- constraint app.integration_connections integration_connections_pkey

ALTER TABLE ONLY app.integration_connections
    ADD CONSTRAINT integration_connections_pkey PRIMARY KEY (organization_id, id);

-- constraint app.invoice_lines invoice_lines_pkey

ALTER TABLE ONLY app.invoice_lines
    ADD CONSTRAINT invoice_lines_pkey PRIMARY KEY (organization_id, id);

-- constraint app.invoice_lines invoice_lines_position_key

ALTER TABLE ONLY app.invoice_lines
    ADD CONSTRAINT invoice_lines_position_key UNIQUE (organization_id, invoice_id, "position");

-- constraint app.invoices invoices_pkey

ALTER TABLE ONLY app.invoices
    ADD CONSTRAINT invoices_pkey PRIMARY KEY (organization_id, id);

-- constraint app.payments payments_pkey

ALTER TABLE ONLY app.payments
    ADD CONSTRAINT payments_pkey PRIMARY KEY (organization_id, id);

-- constraint app_private.currencies currencies_pkey

ALTER TABLE ONLY app_private.currencies
    ADD CONSTRAINT currencies_pkey PRIMARY KEY (code);

-- constraint app_private.invoice_number_counters invoice_number_counters_pkey

ALTER TABLE ONLY app_private.invoice_number_counters
    ADD CONSTRAINT invoice_number_counters_pkey PRIMARY KEY (organization_id);

-- index app.customers_id

CREATE INDEX customers_id ON app.customers USING btree (id);

-- index app.integration_connections_id

CREATE INDEX integration_connections_id ON app.integration_connections USING btree (id);

-- index app.integration_connections_org

CREATE INDEX integration_connections_org ON app.integration_connections USING btree (organization_id, created_at, id);

-- index app.invoices_id

CREATE INDEX invoices_id ON app.invoices USING btree (id);

-- index app.invoices_number_unique

CREATE UNIQUE INDEX invoices_number_unique ON app.invoices USING btree (organization_id, number) WHERE (number IS NOT NULL);

-- index app.invoices_org_created

CREATE INDEX invoices_org_created ON app.invoices USING btree (organization_id, created_at, id);

-- index app.payments_invoice

CREATE INDEX payments_invoice ON app.payments USING btree (invoice_id);

-- trigger app.invoices _050_guard

CREATE TRIGGER _050_guard BEFORE INSERT OR DELETE OR UPDATE ON app.invoices FOR EACH ROW EXECUTE FUNCTION app_private.tg_invoices__guard();

-- trigger app.payments _050_immutable

CREATE TRIGGER _050_immutable BEFORE DELETE OR UPDATE ON app.payments FOR EACH ROW EXECUTE FUNCTION app_private.tg_payments__immutable();

-- trigger app.invoices _060_lifecycle

CREATE TRIGGER _060_lifecycle BEFORE UPDATE ON app.invoices FOR EACH ROW EXECUTE FUNCTION app_private.tg_invoices__lifecycle();

-- trigger app.payments _100_apply

CREATE TRIGGER _100_apply BEFORE INSERT ON app.payments FOR EACH ROW EXECUTE FUNCTION app_private.tg_payments__apply();

-- trigger app.invoice_lines _100_compute

CREATE TRIGGER _100_compute BEFORE INSERT OR DELETE OR UPDATE ON app.invoice_lines FOR EACH ROW EXECUTE FUNCTION app_private.tg_invoice_lines__compute();

-- trigger app.integration_connections _100_touch_version

CREATE TRIGGER _100_touch_version BEFORE UPDATE ON app.integration_connections FOR EACH ROW EXECUTE FUNCTION app_private.tg__touch_version();

-- trigger app.invoices _100_touch_version

CREATE TRIGGER _100_touch_version BEFORE UPDATE ON app.invoices FOR EACH ROW EXECUTE FUNCTION app_private.tg_invoices__touch();

-- trigger app.invoices _900_queue_sync

CREATE TRIGGER _900_queue_sync AFTER UPDATE ON app.invoices FOR EACH ROW EXECUTE FUNCTION app_private.tg_invoices__queue_sync();

-- trigger app.invoice_lines _900_totals_deleted

CREATE TRIGGER _900_totals_deleted AFTER DELETE ON app.invoice_lines REFERENCING OLD TABLE AS deleted_lines FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg_invoice_lines__totals_changed();

-- trigger app.invoice_lines _900_totals_inserted

CREATE TRIGGER _900_totals_inserted AFTER INSERT ON app.invoice_lines REFERENCING NEW TABLE AS inserted_lines FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg_invoice_lines__totals_changed();

-- trigger app.invoice_lines _900_totals_updated

CREATE TRIGGER _900_totals_updated AFTER UPDATE ON app.invoice_lines REFERENCING OLD TABLE AS old_lines NEW TABLE AS new_lines FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg_invoice_lines__totals_changed();

-- trigger app.integration_connections _950_emit_event

CREATE TRIGGER _950_emit_event AFTER UPDATE ON app.integration_connections FOR EACH ROW EXECUTE FUNCTION app_private.tg_integration_connections__emit();

-- trigger app.invoices _950_emit_event

CREATE TRIGGER _950_emit_event AFTER INSERT OR UPDATE ON app.invoices FOR EACH ROW EXECUTE FUNCTION app_private.tg_invoices__emit();

-- trigger app.payments _950_emit_event

CREATE TRIGGER _950_emit_event AFTER INSERT ON app.payments FOR EACH ROW EXECUTE FUNCTION app_private.tg_payments__emit();

-- trigger app.invoices _990_pdf_required

CREATE CONSTRAINT TRIGGER _990_pdf_required AFTER UPDATE ON app.invoices DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (((old.status = 'draft'::text) AND (new.status <> 'draft'::text))) EXECUTE FUNCTION app_private.tg_invoices__pdf_required();

-- fk constraint app.customers customers_organization_id_fkey

ALTER TABLE ONLY app.customers
    ADD CONSTRAINT customers_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.integration_connections integration_connections_organization_id_fkey

ALTER TABLE ONLY app.integration_connections
    ADD CONSTRAINT integration_connections_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.integration_connections integration_connections_organization_id_owner_member_id_fkey

ALTER TABLE ONLY app.integration_connections
    ADD CONSTRAINT integration_connections_organization_id_owner_member_id_fkey FOREIGN KEY (organization_id, owner_member_id) REFERENCES app.members(organization_id, id) ON DELETE CASCADE;

-- fk constraint app.invoice_lines invoice_lines_invoice_fkey

ALTER TABLE ONLY app.invoice_lines
    ADD CONSTRAINT invoice_lines_invoice_fkey FOREIGN KEY (organization_id, invoice_id) REFERENCES app.invoices(organization_id, id) ON DELETE CASCADE;

-- fk constraint app.invoices invoices_currency_fkey

ALTER TABLE ONLY app.invoices
    ADD CONSTRAINT invoices_currency_fkey FOREIGN KEY (currency) REFERENCES app_private.currencies(code);

-- fk constraint app.invoices invoices_customer_fkey

ALTER TABLE ONLY app.invoices
    ADD CONSTRAINT invoices_customer_fkey FOREIGN KEY (organization_id, customer_id) REFERENCES app.customers(organization_id, id) ON DELETE RESTRICT;

-- fk constraint app.invoices invoices_organization_id_fkey

ALTER TABLE ONLY app.invoices
    ADD CONSTRAINT invoices_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.invoices invoices_sync_connection_fkey

ALTER TABLE ONLY app.invoices
    ADD CONSTRAINT invoices_sync_connection_fkey FOREIGN KEY (organization_id, sync_connection_id) REFERENCES app.integration_connections(organization_id, id) ON DELETE RESTRICT;

-- fk constraint app.payments payments_invoice_fkey

ALTER TABLE ONLY app.payments
    ADD CONSTRAINT payments_invoice_fkey FOREIGN KEY (organization_id, invoice_id) REFERENCES app.invoices(organization_id, id) ON DELETE RESTRICT;

-- fk constraint app.projects projects_customer_fkey

ALTER TABLE ONLY app.projects
    ADD CONSTRAINT projects_customer_fkey FOREIGN KEY (organization_id, customer_id) REFERENCES app.customers(organization_id, id) ON DELETE RESTRICT;

-- fk constraint app_private.invoice_number_counters invoice_number_counters_organization_id_fkey

ALTER TABLE ONLY app_private.invoice_number_counters
    ADD CONSTRAINT invoice_number_counters_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- policy app.customers Clients see customers of their organization

CREATE POLICY "Clients see customers of their organization" ON app.customers FOR SELECT TO svc_api USING ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));

-- policy app.integration_connections Clients see organization connections relevant to their Roles

CREATE POLICY "Clients see organization connections relevant to their Roles" ON app.integration_connections FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (ownership = 'organization'::text) AND app_private.integration_visible(category)));

-- policy app.invoices Managers and finance change invoices

CREATE POLICY "Managers and finance change invoices" ON app.invoices FOR UPDATE TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role))) WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role)));

-- policy app.invoice_lines Managers and finance delete draft lines

CREATE POLICY "Managers and finance delete draft lines" ON app.invoice_lines FOR DELETE TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role)));

-- policy app.invoices Managers and finance read invoices

CREATE POLICY "Managers and finance read invoices" ON app.invoices FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role)));

-- policy app.invoice_lines Managers and finance read lines

CREATE POLICY "Managers and finance read lines" ON app.invoice_lines FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role)));

-- policy app.payments Managers and finance read payments

CREATE POLICY "Managers and finance read payments" ON app.payments FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role)));

-- policy app.payments Managers and finance record payments

CREATE POLICY "Managers and finance record payments" ON app.payments FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role)));

-- policy app.invoices Managers and finance write invoices

CREATE POLICY "Managers and finance write invoices" ON app.invoices FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role)));

-- policy app.invoice_lines Managers and finance write lines

CREATE POLICY "Managers and finance write lines" ON app.invoice_lines FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role)));

-- row security app.customers

ALTER TABLE app.customers ENABLE ROW LEVEL SECURITY;

-- row security app.integration_connections

ALTER TABLE app.integration_connections ENABLE ROW LEVEL SECURITY;

-- row security app.invoice_lines

ALTER TABLE app.invoice_lines ENABLE ROW LEVEL SECURITY;

-- row security app.invoices

ALTER TABLE app.invoices ENABLE ROW LEVEL SECURITY;

-- row security app.payments

ALTER TABLE app.payments ENABLE ROW LEVEL SECURITY;

-- acl api.FUNCTION integration_connection_hidden_reason(p_id text)

REVOKE ALL ON FUNCTION api.integration_connection_hidden_reason(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.integration_connection_hidden_reason(p_id text) TO svc_runtime;
GRANT ALL ON FUNCTION api.integration_connection_hidden_reason(p_id text) TO svc_api;

-- acl app.TABLE integration_connections

GRANT SELECT ON TABLE app.integration_connections TO svc_api;

-- acl api.TABLE integration_connections

GRANT SELECT ON TABLE api.integration_connections TO svc_runtime;

-- acl api.FUNCTION integration_connections(p_id text)

REVOKE ALL ON FUNCTION api.integration_connections(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.integration_connections(p_id text) TO svc_runtime;

-- acl api.FUNCTION integration_readiness(p_capability text)

REVOKE ALL ON FUNCTION api.integration_readiness(p_capability text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.integration_readiness(p_capability text) TO svc_runtime;
GRANT ALL ON FUNCTION api.integration_readiness(p_capability text) TO svc_api;

-- acl api.FUNCTION invoice_attach_pdf(p_id text, p_name text, p_content bytea)

REVOKE ALL ON FUNCTION api.invoice_attach_pdf(p_id text, p_name text, p_content bytea) FROM PUBLIC;
GRANT ALL ON FUNCTION api.invoice_attach_pdf(p_id text, p_name text, p_content bytea) TO svc_runtime;
GRANT ALL ON FUNCTION api.invoice_attach_pdf(p_id text, p_name text, p_content bytea) TO svc_api;

-- acl api.FUNCTION invoice_create(p_body jsonb)

REVOKE ALL ON FUNCTION api.invoice_create(p_body jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION api.invoice_create(p_body jsonb) TO svc_runtime;

-- acl api.FUNCTION invoice_replace_lines(p_id text, p_if_match integer[], p_lines jsonb)

REVOKE ALL ON FUNCTION api.invoice_replace_lines(p_id text, p_if_match integer[], p_lines jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION api.invoice_replace_lines(p_id text, p_if_match integer[], p_lines jsonb) TO svc_runtime;

-- acl api.FUNCTION invoice_send(p_id text, p_email boolean)

REVOKE ALL ON FUNCTION api.invoice_send(p_id text, p_email boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.invoice_send(p_id text, p_email boolean) TO svc_runtime;
GRANT ALL ON FUNCTION api.invoice_send(p_id text, p_email boolean) TO svc_api;

-- acl api.FUNCTION invoice_update(p_id text, p_if_match integer[], p_patch jsonb)

REVOKE ALL ON FUNCTION api.invoice_update(p_id text, p_if_match integer[], p_patch jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION api.invoice_update(p_id text, p_if_match integer[], p_patch jsonb) TO svc_runtime;

-- acl api.FUNCTION invoice_void(p_id text)

REVOKE ALL ON FUNCTION api.invoice_void(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.invoice_void(p_id text) TO svc_runtime;
GRANT ALL ON FUNCTION api.invoice_void(p_id text) TO svc_api;

-- acl app.TABLE invoice_lines

GRANT SELECT,DELETE ON TABLE app.invoice_lines TO svc_api;

-- acl app.COLUMN invoice_lines.organization_id

GRANT INSERT(organization_id) ON TABLE app.invoice_lines TO svc_api;

-- acl app.COLUMN invoice_lines.invoice_id

GRANT INSERT(invoice_id) ON TABLE app.invoice_lines TO svc_api;

-- acl app.COLUMN invoice_lines."position"

GRANT INSERT("position") ON TABLE app.invoice_lines TO svc_api;

-- acl app.COLUMN invoice_lines.description

GRANT INSERT(description) ON TABLE app.invoice_lines TO svc_api;

-- acl app.COLUMN invoice_lines.quantity

GRANT INSERT(quantity) ON TABLE app.invoice_lines TO svc_api;

-- acl app.COLUMN invoice_lines.unit_price

GRANT INSERT(unit_price) ON TABLE app.invoice_lines TO svc_api;

-- acl app.COLUMN invoice_lines.tax_rate

GRANT INSERT(tax_rate) ON TABLE app.invoice_lines TO svc_api;

-- acl app.TABLE invoices

GRANT SELECT ON TABLE app.invoices TO svc_api;

-- acl app.COLUMN invoices.organization_id

GRANT INSERT(organization_id) ON TABLE app.invoices TO svc_api;

-- acl app.COLUMN invoices.customer_id

GRANT INSERT(customer_id),UPDATE(customer_id) ON TABLE app.invoices TO svc_api;

-- acl app.COLUMN invoices.currency

GRANT INSERT(currency),UPDATE(currency) ON TABLE app.invoices TO svc_api;

-- acl app.COLUMN invoices.issue_date

GRANT INSERT(issue_date),UPDATE(issue_date) ON TABLE app.invoices TO svc_api;

-- acl app.COLUMN invoices.due_date

GRANT INSERT(due_date),UPDATE(due_date) ON TABLE app.invoices TO svc_api;

-- acl app.COLUMN invoices.memo

GRANT INSERT(memo),UPDATE(memo) ON TABLE app.invoices TO svc_api;

-- acl app.COLUMN invoices.created_by_client_id

GRANT INSERT(created_by_client_id) ON TABLE app.invoices TO svc_api;

-- acl api.TABLE invoices

GRANT SELECT ON TABLE api.invoices TO svc_runtime;

-- acl api.FUNCTION invoices(p_id text)

REVOKE ALL ON FUNCTION api.invoices(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.invoices(p_id text) TO svc_runtime;

-- acl api.FUNCTION payment_create(p_body jsonb)

REVOKE ALL ON FUNCTION api.payment_create(p_body jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION api.payment_create(p_body jsonb) TO svc_runtime;

-- acl app_private.FUNCTION accounting_connection(p_org text)

REVOKE ALL ON FUNCTION app_private.accounting_connection(p_org text) FROM PUBLIC;

-- acl app_private.FUNCTION accounting_not_ready(c app.integration_connections, p_doing text)

REVOKE ALL ON FUNCTION app_private.accounting_not_ready(c app.integration_connections, p_doing text) FROM PUBLIC;

-- acl app_private.FUNCTION accounting_ready(c app.integration_connections)

REVOKE ALL ON FUNCTION app_private.accounting_ready(c app.integration_connections) FROM PUBLIC;

-- acl app_private.FUNCTION integration_visible(p_category text)

REVOKE ALL ON FUNCTION app_private.integration_visible(p_category text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.integration_visible(p_category text) TO svc_runtime;
GRANT ALL ON FUNCTION app_private.integration_visible(p_category text) TO svc_api;
GRANT ALL ON FUNCTION app_private.integration_visible(p_category text) TO svc_reporting;

-- acl app_private.FUNCTION invoice_lines_errors(p_lines jsonb, p_scale integer)

REVOKE ALL ON FUNCTION app_private.invoice_lines_errors(p_lines jsonb, p_scale integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.invoice_lines_errors(p_lines jsonb, p_scale integer) TO svc_api;

-- acl app_private.FUNCTION invoice_lock(p_id text, p_if_match integer[])

REVOKE ALL ON FUNCTION app_private.invoice_lock(p_id text, p_if_match integer[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.invoice_lock(p_id text, p_if_match integer[]) TO svc_api;

-- acl app_private.FUNCTION invoice_not_found(p_id text)

REVOKE ALL ON FUNCTION app_private.invoice_not_found(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.invoice_not_found(p_id text) TO svc_api;

-- acl app_private.FUNCTION invoice_recompute_totals(p_orgs text[], p_invoices text[])

REVOKE ALL ON FUNCTION app_private.invoice_recompute_totals(p_orgs text[], p_invoices text[]) FROM PUBLIC;

-- acl app_private.FUNCTION invoice_set_lines(p_invoice app.invoices, p_lines jsonb)

REVOKE ALL ON FUNCTION app_private.invoice_set_lines(p_invoice app.invoices, p_lines jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.invoice_set_lines(p_invoice app.invoices, p_lines jsonb) TO svc_api;

-- acl app_private.FUNCTION tg_integration_connections__emit()

REVOKE ALL ON FUNCTION app_private.tg_integration_connections__emit() FROM PUBLIC;

-- acl app_private.FUNCTION tg_invoice_lines__compute()

REVOKE ALL ON FUNCTION app_private.tg_invoice_lines__compute() FROM PUBLIC;

-- acl app_private.FUNCTION tg_invoice_lines__totals()

REVOKE ALL ON FUNCTION app_private.tg_invoice_lines__totals() FROM PUBLIC;

-- acl app_private.FUNCTION tg_invoice_lines__totals_changed()

REVOKE ALL ON FUNCTION app_private.tg_invoice_lines__totals_changed() FROM PUBLIC;

-- acl app_private.FUNCTION tg_invoices__emit()

REVOKE ALL ON FUNCTION app_private.tg_invoices__emit() FROM PUBLIC;

-- acl app_private.FUNCTION tg_invoices__guard()

REVOKE ALL ON FUNCTION app_private.tg_invoices__guard() FROM PUBLIC;

-- acl app_private.FUNCTION tg_invoices__lifecycle()

REVOKE ALL ON FUNCTION app_private.tg_invoices__lifecycle() FROM PUBLIC;

-- acl app_private.FUNCTION tg_invoices__pdf_required()

REVOKE ALL ON FUNCTION app_private.tg_invoices__pdf_required() FROM PUBLIC;

-- acl app_private.FUNCTION tg_invoices__queue_sync()

REVOKE ALL ON FUNCTION app_private.tg_invoices__queue_sync() FROM PUBLIC;

-- acl app_private.FUNCTION tg_invoices__touch()

REVOKE ALL ON FUNCTION app_private.tg_invoices__touch() FROM PUBLIC;

-- acl app_private.FUNCTION tg_payments__apply()

REVOKE ALL ON FUNCTION app_private.tg_payments__apply() FROM PUBLIC;

-- acl app_private.FUNCTION tg_payments__emit()

REVOKE ALL ON FUNCTION app_private.tg_payments__emit() FROM PUBLIC;

-- acl app_private.FUNCTION tg_payments__immutable()

REVOKE ALL ON FUNCTION app_private.tg_payments__immutable() FROM PUBLIC;

-- acl control.FUNCTION customer_create(p_org text, p_kind text, p_name text, p_delivery_email text, p_currency text)

REVOKE ALL ON FUNCTION control.customer_create(p_org text, p_kind text, p_name text, p_delivery_email text, p_currency text) FROM PUBLIC;

-- acl control.FUNCTION customer_delete(p_org text, p_id text)

REVOKE ALL ON FUNCTION control.customer_delete(p_org text, p_id text) FROM PUBLIC;

-- acl control.FUNCTION integration_add(p_org text, p_provider text, p_category text, p_ownership text, p_status text, p_capabilities text[], p_action_required text, p_owner_member text)

REVOKE ALL ON FUNCTION control.integration_add(p_org text, p_provider text, p_category text, p_ownership text, p_status text, p_capabilities text[], p_action_required text, p_owner_member text) FROM PUBLIC;

-- acl control.FUNCTION integration_update(p_id text, p_status text, p_capabilities text[], p_action_required text, p_clear_action_required boolean)

REVOKE ALL ON FUNCTION control.integration_update(p_id text, p_status text, p_capabilities text[], p_action_required text, p_clear_action_required boolean) FROM PUBLIC;

-- acl control.FUNCTION invoice_sync_retry(p_invoice text)

REVOKE ALL ON FUNCTION control.invoice_sync_retry(p_invoice text) FROM PUBLIC;

-- acl control.FUNCTION org_set_invoice_policy(p_org text, p_require_accounting_connection boolean, p_number_prefix text, p_payment_terms_days integer)

REVOKE ALL ON FUNCTION control.org_set_invoice_policy(p_org text, p_require_accounting_connection boolean, p_number_prefix text, p_payment_terms_days integer) FROM PUBLIC;

-- acl app.TABLE customers

GRANT SELECT ON TABLE app.customers TO svc_api;

-- acl app.TABLE payments

GRANT SELECT ON TABLE app.payments TO svc_api;

-- acl app.COLUMN payments.organization_id

GRANT INSERT(organization_id) ON TABLE app.payments TO svc_api;

-- acl app.COLUMN payments.invoice_id

GRANT INSERT(invoice_id) ON TABLE app.payments TO svc_api;

-- acl app.COLUMN payments.amount

GRANT INSERT(amount) ON TABLE app.payments TO svc_api;

-- acl app.COLUMN payments.currency

GRANT INSERT(currency) ON TABLE app.payments TO svc_api;

-- acl app.COLUMN payments.received_date

GRANT INSERT(received_date) ON TABLE app.payments TO svc_api;

-- acl app.COLUMN payments.method

GRANT INSERT(method) ON TABLE app.payments TO svc_api;

-- acl app.COLUMN payments.external_reference

GRANT INSERT(external_reference) ON TABLE app.payments TO svc_api;

-- acl app.COLUMN payments.created_by_client_id

GRANT INSERT(created_by_client_id) ON TABLE app.payments TO svc_api;

-- acl app_private.TABLE currencies

GRANT SELECT ON TABLE app_private.currencies TO svc_api;

INSERT INTO app_private.currencies (code, minor_units) VALUES
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

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
