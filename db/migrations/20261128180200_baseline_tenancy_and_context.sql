-- migrate:up

/** Baseline (issue 38), area 2 of 15. Tenancy and the request context: organizations, members, the signed per-request context the row policies read, identifiers and errors.
 * The current definitions that migrations 20261122000100 to 20261205003400 built (git history before
 * the baseline), as pg_dump writes them; db/README.md says how they were made and compared. */
SET LOCAL check_function_bodies = false;
SET LOCAL client_min_messages = warning;
SELECT pg_catalog.set_config('search_path', '', true);

-- function app.current_organization_id()

CREATE FUNCTION app.current_organization_id() RETURNS text
    LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if app_private.context_ok() then
    return nullif(current_setting('svc.organization_id', true), '');
  end if;
  return (app_private.bi_context()).organization_id;
end
$$;

-- function app.current_roles()

CREATE FUNCTION app.current_roles() RETURNS text[]
    LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if app_private.context_ok() then
    return coalesce(string_to_array(nullif(current_setting('svc.roles', true), ''), ','), '{}'::text[]);
  end if;
  return coalesce((app_private.bi_context()).svc_roles, '{}'::text[]);
end
$$;

-- function app_private.iso_timestamp(timestamp with time zone)

CREATE FUNCTION app_private.iso_timestamp(ts timestamp with time zone) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
begin
  return pg_catalog.to_char(ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
end
$$;

-- function app_private.new_id(text)

CREATE FUNCTION app_private.new_id(prefix text) RETURNS text
    LANGUAGE plpgsql PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return prefix || '_' || lpad(to_hex((extract(epoch from clock_timestamp()) * 1000)::bigint), 12, '0')
         || substr(replace(gen_random_uuid()::text, '-', ''), 1, 16);
end
$$;

SET LOCAL default_tablespace = '';

SET LOCAL default_table_access_method = heap;

-- table app.organizations

CREATE TABLE app.organizations (
    id text DEFAULT app_private.new_id('org'::text) NOT NULL,
    name text NOT NULL,
    status text DEFAULT 'active'::text NOT NULL,
    plan text NOT NULL,
    timezone text NOT NULL,
    currency text NOT NULL,
    locale text NOT NULL,
    web_url text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    show_approver_identities boolean DEFAULT false NOT NULL,
    hr_may_read_time_entries boolean DEFAULT false NOT NULL,
    time_entry_future_days integer DEFAULT 0 NOT NULL,
    invoices_require_accounting_connection boolean DEFAULT false NOT NULL,
    invoice_number_prefix text DEFAULT 'INV-'::text NOT NULL,
    invoice_payment_terms_days integer DEFAULT 30 NOT NULL,
    ticket_module_enabled boolean DEFAULT true NOT NULL,
    finance_may_read_tickets boolean DEFAULT false NOT NULL,
    hr_may_read_tickets boolean DEFAULT false NOT NULL,
    CONSTRAINT organizations_currency_iso4217 CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT organizations_invoice_number_prefix_format CHECK ((invoice_number_prefix ~ '^[A-Za-z0-9/_-]{0,12}$'::text)),
    CONSTRAINT organizations_invoice_payment_terms_range CHECK (((invoice_payment_terms_days >= 0) AND (invoice_payment_terms_days <= 365))),
    CONSTRAINT organizations_locale_bcp47 CHECK ((locale ~ '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$'::text)),
    CONSTRAINT organizations_name_length CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT organizations_plan_valid CHECK ((plan = ANY (ARRAY['trial'::text, 'team'::text, 'business'::text, 'enterprise'::text]))),
    CONSTRAINT organizations_status_valid CHECK ((status = ANY (ARRAY['active'::text, 'restricted'::text, 'suspended'::text]))),
    CONSTRAINT organizations_time_entry_future_days_range CHECK (((time_entry_future_days >= 0) AND (time_entry_future_days <= 31)))
);

ALTER TABLE ONLY app.organizations FORCE ROW LEVEL SECURITY;

-- comment app.COLUMN organizations.plan

COMMENT ON COLUMN app.organizations.plan IS 'Trial and Team plans do not support API Clients.';

-- function api.begin_request(text, text, text[], boolean)

CREATE FUNCTION api.begin_request(p_organization_id text, p_token_sha256 text, p_required_roles text[] DEFAULT NULL::text[], p_context boolean DEFAULT true) RETURNS TABLE(outcome text, organization_id text, svc_roles text[], principal jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  c record;
begin
  if p_token_sha256 is null or p_token_sha256 !~ '^[0-9a-f]{64}$' then
    outcome := 'invalid_token';
    return next;
    return;
  end if;
  -- Joins only (no correlated subquery): Citus plans it for the one shard the organization names.
  select cl.id, cl.organization_id, cl.name, cl.license_level, cl.license_source, cl.license_status,
         cl.status, cl.svc_roles, o.status as org_status, o.plan as org_plan, s.id is not null as secret_active,
         app_private.read_flags(cl.svc_roles, o.ticket_module_enabled, o.finance_may_read_tickets, o.hr_may_read_tickets,
                                o.hr_may_read_time_entries) as read_flags
    into c
    from app_private.access_tokens t
    join app.api_clients cl on cl.organization_id = t.organization_id and cl.id = t.client_id
    join app.organizations o on o.id = cl.organization_id
    left join app.client_secrets s on s.organization_id = t.organization_id and s.id = t.secret_id and s.revoked_at is null
   where t.organization_id = p_organization_id and t.token_sha256 = decode(p_token_sha256, 'hex')
     and t.expires_at > now();
  if not found or c.status = 'deleted' or not c.secret_active then
    outcome := 'invalid_token';
  elsif c.status = 'disabled' then
    outcome := 'client_disabled';
  elsif c.org_status = 'suspended' then
    outcome := 'org_subscription_inactive';
  elsif c.license_status <> 'active' or c.org_plan in ('trial', 'team') then
    outcome := 'license_inactive';
  elsif p_required_roles is not null and not (p_required_roles && c.svc_roles) then
    outcome := 'role_required';
    svc_roles := c.svc_roles;
  else
    if p_context then
      perform app_private.set_context(c.organization_id, c.id, c.svc_roles, c.read_flags);
      -- The API wakes the fan-out itself once this transaction has committed, if an event of it
      -- needs one (emit_event then sets 'due').
      perform set_config('svc.fanout_wake', 'after_commit', true);
    end if;
    outcome := 'ok';
    organization_id := c.organization_id;
    svc_roles := c.svc_roles;
    principal := jsonb_build_object(
      'object', 'api_client_principal',
      'id', c.id,
      'name', c.name,
      'organization_id', c.organization_id,
      'license', jsonb_build_object('level', c.license_level, 'source', c.license_source, 'status', 'active'),
      'svc_roles', to_jsonb(c.svc_roles),
      'record_access', 'organization_wide_by_role',
      'scope', 'svc.api');
  end if;
  return next;
end
$_$;

-- comment api.FUNCTION begin_request(p_organization_id text, p_token_sha256 text, p_required_roles text[], p_context boolean)

COMMENT ON FUNCTION api.begin_request(p_organization_id text, p_token_sha256 text, p_required_roles text[], p_context boolean) IS 'A request''s first statement: the client of the access token whose SHA-256 (hex) is p_token_sha256, in organization p_organization_id; on ok, the signed request context (unless p_context is false).';

-- function api.command_answered(bigint)

CREATE FUNCTION api.command_answered(p_rows bigint) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if p_rows is distinct from 1 then
    perform app_private.raise('SV500', 'COMMAND_ROW_COUNT', format('the command answered %s rows instead of one', p_rows));
  end if;
end
$$;

ALTER FUNCTION api.command_answered(p_rows bigint) OWNER TO svc_api;

-- function api.in_organization(text, text, text[])

CREATE FUNCTION api.in_organization(p_organization_id text, p_statement text, p_arguments text[]) RETURNS SETOF record
    LANGUAGE plpgsql
    AS $$
declare
  v_statement text := app_private.statement_on_shards(p_organization_id, p_statement);
begin
  if v_statement = p_statement then
    return query execute p_statement using p_arguments;
    return;
  end if;
  begin
    return query execute v_statement using p_arguments;
  exception
    when undefined_table then
      return query execute p_statement using p_arguments;
    when sqlstate 'SV500' then
      if sqlerrm <> 'SHARD_VIEWS_STALE' then
        raise;
      end if;
      return query execute p_statement using p_arguments;
  end;
end
$$;

-- comment api.FUNCTION in_organization(p_organization_id text, p_statement text, p_arguments text[])

COMMENT ON FUNCTION api.in_organization(p_organization_id text, p_statement text, p_arguments text[]) IS 'Runs one statement of a request (its parameters are $1[n]) where its organization''s rows are: on Citus, delegated to that worker. Returns the statement''s rows.';

-- function api.in_organization_count(text, text, text[])

CREATE FUNCTION api.in_organization_count(p_organization_id text, p_statement text, p_arguments text[]) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
declare
  v_statement text := app_private.statement_on_shards(p_organization_id, p_statement);
  v_count bigint;
begin
  if v_statement = p_statement then
    execute p_statement using p_arguments;
    get diagnostics v_count = row_count;
    return v_count;
  end if;
  begin
    execute v_statement using p_arguments;
    get diagnostics v_count = row_count;
  exception
    when undefined_table then
      execute p_statement using p_arguments;
      get diagnostics v_count = row_count;
    when sqlstate 'SV500' then
      if sqlerrm <> 'SHARD_VIEWS_STALE' then
        raise;
      end if;
      execute p_statement using p_arguments;
      get diagnostics v_count = row_count;
  end;
  return v_count;
end
$$;

-- comment api.FUNCTION in_organization_count(p_organization_id text, p_statement text, p_arguments text[])

COMMENT ON FUNCTION api.in_organization_count(p_organization_id text, p_statement text, p_arguments text[]) IS 'Runs one statement of a request that returns no rows (its parameters are $1[n]), where its organization''s rows are; returns its row count.';

-- function app_private.money_text(numeric, integer)

CREATE FUNCTION app_private.money_text(p_amount numeric, p_scale integer) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ select pg_catalog.round(p_amount, p_scale)::text $$;

-- function app.has_any_role(text[])

CREATE FUNCTION app.has_any_role(roles text[]) RETURNS boolean
    LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return roles && app.current_roles();
end
$$;

-- function app.has_role(text)

CREATE FUNCTION app.has_role(role text) RETURNS boolean
    LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return role = any (app.current_roles());
end
$$;

-- function app_private.normalize_email(text)

CREATE FUNCTION app_private.normalize_email(email text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return lower(btrim(email));
end
$$;

-- table app.members

CREATE TABLE app.members (
    organization_id text NOT NULL,
    id text NOT NULL,
    display_name text NOT NULL,
    status text DEFAULT 'active'::text NOT NULL,
    svc_roles text[] DEFAULT '{member}'::text[] NOT NULL,
    job_title text,
    timezone text,
    employee_number text,
    hire_date date,
    employment_type text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    CONSTRAINT members_display_name_length CHECK (((length(display_name) >= 1) AND (length(display_name) <= 200))),
    CONSTRAINT members_employment_type_valid CHECK ((employment_type = ANY (ARRAY['employee'::text, 'contractor'::text, 'intern'::text]))),
    CONSTRAINT members_id_is_normalized_email CHECK (((id = app_private.normalize_email(id)) AND (id ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'::text))),
    CONSTRAINT members_roles_valid CHECK ((svc_roles <@ ARRAY['member'::text, 'manager'::text, 'finance'::text, 'hr'::text])),
    CONSTRAINT members_status_valid CHECK ((status = ANY (ARRAY['active'::text, 'inactive'::text])))
);

ALTER TABLE ONLY app.members FORCE ROW LEVEL SECURITY;

-- view api.organization

CREATE VIEW api.organization WITH (security_invoker='false') AS
 SELECT o.id,
    o.version,
    jsonb_build_object('object', 'organization', 'id', o.id, 'name', o.name, 'status', o.status, 'timezone', o.timezone, 'currency', o.currency, 'locale', o.locale, 'created_at', app_private.iso_timestamp(o.created_at), 'links', jsonb_build_object('web', o.web_url)) AS doc
   FROM app.organizations o;

ALTER TABLE api.organization OWNER TO svc_api;

-- function api.organization(text)

CREATE FUNCTION api.organization(p_id text DEFAULT NULL::text) RETURNS SETOF api.organization
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

ALTER FUNCTION api.organization(p_id text) OWNER TO svc_api;

-- comment api.FUNCTION organization(p_id text)

COMMENT ON FUNCTION api.organization(p_id text) IS 'The rows of view api.organization for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

-- function api.require_any_role(text[], text)

CREATE FUNCTION api.require_any_role(p_roles text[], p_what text) RETURNS void
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if not app.has_any_role(p_roles) then
    perform app_private.raise('SVR03', 'ROLE_REQUIRED',
      format('%s requires one of the Roles: %s', p_what, array_to_string(p_roles, ', ')));
  end if;
end
$$;

ALTER FUNCTION api.require_any_role(p_roles text[], p_what text) OWNER TO svc_api;

-- function api.service_schema_version()

CREATE FUNCTION api.service_schema_version() RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select max(version)::text from public.schema_migrations $$;

-- function app_private.accounting_sync_load(text, text)

CREATE FUNCTION app_private.accounting_sync_load(p_organization_id text, p_invoice text) RETURNS jsonb
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

-- function app_private.accounting_sync_record(text, text, boolean, text, text, boolean)

CREATE FUNCTION app_private.accounting_sync_record(p_organization_id text, p_invoice text, p_ok boolean, p_external_reference text, p_error text, p_definitive boolean DEFAULT false) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.assert_timezone(text)

CREATE FUNCTION app_private.assert_timezone(p_timezone text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if p_timezone is not null and not exists (select from pg_timezone_names where name = p_timezone) then
    perform app_private.raise('SVV01', 'INVALID_TIMEZONE', format('%s is not an IANA time-zone identifier', p_timezone));
  end if;
end
$$;

-- function app_private.capability_mac(text, text)

CREATE FUNCTION app_private.capability_mac(p_purpose text, p_message text) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL RESTRICTED
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  k record;
begin
  select inner_key, outer_key into k from app_private.context_keys;
  return encode(sha256(k.outer_key || sha256(k.inner_key || convert_to('capability' || chr(31) || p_purpose || chr(31) || p_message, 'UTF8'))), 'hex');
end
$$;

-- function app_private.chat_context(text, text)

CREATE FUNCTION app_private.chat_context(p_organization_id text, p_run_id text) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  r app.runs;
  c app.conversations;
  v_seq integer;
begin
  select * into r from app.runs x where x.organization_id = p_organization_id and x.id = p_run_id;
  select * into c from app.conversations x where x.organization_id = p_organization_id and x.id = r.conversation_id;
  select m.seq into v_seq from app.conversation_messages m where m.organization_id = p_organization_id and m.id = r.input ->> 'message_id';
  return jsonb_build_object('summary', c.context_summary,
    'messages', coalesce((select jsonb_agg(jsonb_build_object('role', m.role, 'content', m.content) order by m.seq)
                            from app.conversation_messages m
                           where m.organization_id = p_organization_id and m.conversation_id = c.id
                             and m.seq > c.context_from_seq and m.seq <= v_seq), '[]'));
end
$$;

-- function app_private.check_if_match(integer, integer[])

CREATE FUNCTION app_private.check_if_match(p_current_version integer, p_if_match integer[]) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if p_if_match is null or not (p_current_version = any (p_if_match)) then
    perform app_private.raise('SVS12', 'STALE_RESOURCE', format('"%s"', p_current_version));
  end if;
end
$$;

-- function app_private.check_schema_version(text, integer)

CREATE FUNCTION app_private.check_schema_version(p_object_type text, p_schema_version integer) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  v_current integer;
begin
  if p_schema_version is null then
    return;
  end if;
  select schema_version into v_current from app.object_schemas
   where organization_id = v__organization_id and object_type = p_object_type;
  if v_current is distinct from p_schema_version then
    perform app_private.raise('SVC14', 'OBJECT_SCHEMA_CHANGED',
      format('the %s schema is at version %s; fetch GET /v1/schemas/%s and retry', p_object_type, v_current, p_object_type));
  end if;
end
$$;

-- function app_private.check_subject(text)

CREATE FUNCTION app_private.check_subject(p_subject_member_id text) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  if p_subject_member_id is null then
    return null;
  end if;
  if not exists (select from app.members m where m.organization_id = v__organization_id
                  and m.id = p_subject_member_id and m.status = 'active') then
    perform app_private.raise_errors(app_private.error('/subject/member_id', 'INVALID_SUBJECT_MEMBER',
      'subject.member_id must be the exact normalized email of an active member of your organization'));
  end if;
  return p_subject_member_id;
end
$$;

-- function app_private.context_budget()

CREATE FUNCTION app_private.context_budget() RETURNS integer
    LANGUAGE sql IMMUTABLE
    AS $$ select 32000 $$;

-- function app_private.context_mac(text, text, text, text)

CREATE FUNCTION app_private.context_mac(p_org text, p_client text, p_roles text, p_flags text) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL RESTRICTED
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  k record;
begin
  select inner_key, outer_key into k from app_private.context_keys;
  return encode(sha256(k.outer_key || sha256(k.inner_key || convert_to(concat_ws(chr(31), p_org, p_client, p_roles, p_flags,
    pg_backend_pid()::text, (extract(epoch from now()) * 1000000)::bigint::text), 'UTF8'))), 'hex');
end
$$;

-- function app_private.context_ok()

CREATE FUNCTION app_private.context_ok() RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL RESTRICTED
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_mac text := current_setting('svc.context_mac', true);
  k record;
begin
  if v_mac is null or v_mac = '' then
    return false;
  end if;
  -- context_mac's formula, inline: this runs once per policy or view check of every statement.
  select inner_key, outer_key into k from app_private.context_keys;
  return v_mac = encode(sha256(k.outer_key || sha256(k.inner_key || convert_to(concat_ws(chr(31),
    current_setting('svc.organization_id', true), current_setting('svc.client_id', true), current_setting('svc.roles', true),
    current_setting('svc.read_flags', true), pg_backend_pid()::text, (extract(epoch from now()) * 1000000)::bigint::text), 'UTF8'))), 'hex');
end
$$;

-- function app_private.error(text, text, text)

CREATE FUNCTION app_private.error(p_pointer text, p_code text, p_detail text) RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select jsonb_build_array(jsonb_build_object('pointer', p_pointer, 'detail', p_detail, 'code', p_code)) $$;

-- function app_private.is_valid_date(text)

CREATE FUNCTION app_private.is_valid_date(p text) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform p::date;
  return true;
exception when others then
  return false;
end
$$;

-- function app_private.linked_resource_visible(text, text, text)

CREATE FUNCTION app_private.linked_resource_visible(p_org text, p_type text, p_id text) RETURNS boolean
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  -- PL/pgSQL: Citus cannot plan the parameters of a SQL function.
  return case p_type
    when 'project' then exists (select from app.projects p where p.organization_id = p_org and p.id = p_id)
    when 'task' then exists (select from app.tasks t where t.organization_id = p_org and t.id = p_id)
    when 'invoice' then exists (select from app.invoices i where i.organization_id = p_org and i.id = p_id)
    when 'ticket' then exists (select from app.tickets k where k.organization_id = p_org and k.id = p_id)
    else false end;
end
$$;

ALTER FUNCTION app_private.linked_resource_visible(p_org text, p_type text, p_id text) OWNER TO svc_api;

-- function app_private.may_read_internal_notes()

CREATE FUNCTION app_private.may_read_internal_notes() RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select app_private.may_read_tickets() and app.has_any_role('{member,manager}') $$;

-- function app_private.message_budget()

CREATE FUNCTION app_private.message_budget() RETURNS integer
    LANGUAGE sql IMMUTABLE
    AS $$ select 16000 $$;

-- function app_private.normalize_emails(jsonb)

CREATE FUNCTION app_private.normalize_emails(p jsonb) RETURNS text[]
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return (select coalesce(array_agg(app_private.normalize_email(e)), '{}') from jsonb_array_elements_text(p) e);
end
$$;

-- function app_private.policy_expression(text)

CREATE FUNCTION app_private.policy_expression(p_expression text) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_sublink constant text := '\(\s*select\s+((?:app|app_private)\.\w+\((?:[^()]|\([^()]*\))*\))(?:\s+as\s+\w+)?\s*\)';
  v_out text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return p_expression;
  end if;
  v_out := regexp_replace(p_expression, v_sublink, '\1', 'gi');
  if v_out ~* '\m(select|exists)\M' then
    perform app_private.raise('SV500', 'CITUS_POLICY_SUBLINK', format('a policy keeps a sublink: %s', v_out));
  end if;
  return v_out;
end
$$;

-- function app_private.raise(text, text, text, text)

CREATE FUNCTION app_private.raise(sqlstate text, code text, detail text DEFAULT NULL::text, pointer text DEFAULT NULL::text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  raise exception using errcode = sqlstate, message = code, detail = coalesce(detail, ''), hint = coalesce(pointer, '');
end
$$;

-- function app_private.raise_errors(jsonb)

CREATE FUNCTION app_private.raise_errors(p_errors jsonb) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_code text := p_errors -> 0 ->> 'code';
begin
  if p_errors is null or jsonb_array_length(p_errors) = 0 then
    return;
  end if;
  raise exception using
    errcode = case when v_code like '%FORBIDDEN' then 'SVR04' else 'SVV22' end,
    message = v_code, detail = p_errors::text, hint = 'errors';
end
$$;

-- function app_private.read_flags(text[], boolean, boolean, boolean, boolean)

CREATE FUNCTION app_private.read_flags(p_roles text[], p_ticket_module boolean, p_finance_tickets boolean, p_hr_tickets boolean, p_hr_time_entries boolean) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select concat_ws(',',
    case when v_tickets then 'tickets' end,
    case when v_tickets and p_roles && '{member,manager}'::text[] then 'internal_notes' end,
    case when p_roles && '{manager,finance}'::text[] or ('hr' = any (p_roles) and p_hr_time_entries) then 'time_entries' end)
    from (select coalesce(p_ticket_module and (p_roles && '{member,manager}'::text[]
                                              or ('finance' = any (p_roles) and p_finance_tickets)
                                              or ('hr' = any (p_roles) and p_hr_tickets)), false) as v_tickets) x
$$;

-- function app_private.require_found(boolean, text, text)

CREATE FUNCTION app_private.require_found(p_found boolean, p_code text, p_detail text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if not p_found then
    perform app_private.raise('SVN01', p_code, p_detail);
  end if;
end
$$;

-- function app_private.set_context(text, text, text[], text)

CREATE FUNCTION app_private.set_context(p_org text, p_client text, p_roles text[], p_flags text DEFAULT NULL::text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER PARALLEL RESTRICTED
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_client text := coalesce(p_client, '');
  v_roles text := coalesce(array_to_string(p_roles, ','), '');
  v_flags text := p_flags;
begin
  if p_org is not null and v_flags is null then
    select app_private.read_flags(p_roles, o.ticket_module_enabled, o.finance_may_read_tickets, o.hr_may_read_tickets,
                                  o.hr_may_read_time_entries)
      into v_flags from app.organizations o where o.id = p_org;
  end if;
  v_flags := coalesce(v_flags, '');
  perform set_config('svc.organization_id', coalesce(p_org, ''), true),
          set_config('svc.client_id', v_client, true),
          set_config('svc.roles', v_roles, true),
          set_config('svc.read_flags', v_flags, true),
          -- The signature covers exactly the strings stored, as context_ok() reads them back.
          set_config('svc.context_mac', case when p_org is null then '' else app_private.context_mac(p_org, v_client, v_roles, v_flags) end, true);
end
$$;

-- function app_private.shard_groups_unprepared()

CREATE FUNCTION app_private.shard_groups_unprepared() RETURNS integer
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    return 0;
  end if;
  if not exists (select from pg_dist_partition where logicalrelid = 'app.organizations'::regclass) then
    return 0;
  end if;
  return (select count(*)::integer
            from pg_dist_shard s join pg_dist_placement p using (shardid)
           where s.logicalrelid = 'app.organizations'::regclass
             and p.groupid = (select groupid from pg_dist_local_group)
             and app_private.current_shard_views(s.shardid) is null);
end
$$;

-- function app_private.tg__touch_version()

CREATE FUNCTION app_private.tg__touch_version() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  new.updated_at := now();
  new.version := old.version + 1;
  return new;
end
$$;

-- function app_private.tg_organizations__seed_schemas()

CREATE FUNCTION app_private.tg_organizations__seed_schemas() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  insert into app.object_schemas (organization_id, object_type, label)
  values (new.id, 'project', 'Project'), (new.id, 'task', 'Task');
  return null;
end
$$;

-- function app_private.view_on_shard_group(regclass, bigint)

CREATE FUNCTION app_private.view_on_shard_group(p_view regclass, p_shard bigint) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_sql text := rtrim(pg_get_viewdef(p_view), '; ');
  r record;
begin
  for r in
    execute $q$
      select distinct c.oid::regclass::text as name, shard_name(c.oid, s.shardid) as shard
        from pg_depend d
        join pg_rewrite rw on rw.oid = d.objid
        join pg_class c on c.oid = d.refobjid
        join pg_dist_partition p on p.logicalrelid = c.oid
        join pg_dist_shard s on s.logicalrelid = c.oid
       where d.classid = 'pg_rewrite'::regclass and d.refclassid = 'pg_class'::regclass and rw.ev_class = $2
         and ((p.partmethod = 'n' and p.repmodel = 't')
              or (p.colocationid = (select o.colocationid from pg_dist_partition o where o.logicalrelid = 'app.organizations'::regclass)
                  and s.shardminvalue = (select g.shardminvalue from pg_dist_shard g where g.shardid = $1)))$q$
    using p_shard, p_view
  loop
    v_sql := regexp_replace(v_sql, '(^|[^\w."])' || replace(r.name, '.', '\.') || '(?![\w"])', '\1' || r.shard, 'g');
  end loop;
  return v_sql;
end
$_$;

-- function app_private.view_on_shards(regclass, text)

CREATE FUNCTION app_private.view_on_shards(p_view regclass, p_organization_id text) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if not exists (select from pg_dist_partition where logicalrelid = 'app.organizations'::regclass) then
    return rtrim(pg_get_viewdef(p_view), '; ');
  end if;
  return app_private.view_on_shard_group(p_view,
    get_shard_id_for_distribution_column('app.organizations', p_organization_id));
end
$$;

-- function app_private.wire_json(jsonb)

CREATE FUNCTION app_private.wire_json(d jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select case when d ? 'object'
              then '{"object":' || (d -> 'object')::text || coalesce(',"id":' || (d -> 'id')::text, '')
                   || coalesce(',' || nullif(substr((d - 'object' - 'id')::text, 2), '}'), '}')
              else d::text end
$$;

-- function control.field_define(text, text, text, text, text, boolean, jsonb, text[], text[], boolean, boolean, integer)

CREATE FUNCTION control.field_define(p_org text, p_object_type text, p_api_name text, p_label text, p_field_type text, p_required boolean DEFAULT false, p_options jsonb DEFAULT '[]'::jsonb, p_readable_roles text[] DEFAULT '{member,manager,finance,hr}'::text[], p_writable_roles text[] DEFAULT '{manager}'::text[], p_filterable boolean DEFAULT false, p_sortable boolean DEFAULT false, p_position integer DEFAULT 0) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
$$;

-- function control.field_delete(text, text, text)

CREATE FUNCTION control.field_delete(p_org text, p_object_type text, p_api_name text) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  delete from app.custom_field_definitions where organization_id = p_org and object_type = p_object_type and api_name = p_api_name;
  perform app_private.require_found(found, 'CUSTOM_FIELD_NOT_FOUND', p_api_name);
  return (select schema_version from app.object_schemas where organization_id = p_org and object_type = p_object_type);
end
$$;

-- function control.member_add(text, text, text, text[], text, text, text, text, date, text)

CREATE FUNCTION control.member_add(p_org text, p_email text, p_display_name text, p_roles text[] DEFAULT '{member}'::text[], p_job_title text DEFAULT NULL::text, p_timezone text DEFAULT NULL::text, p_status text DEFAULT 'active'::text, p_employee_number text DEFAULT NULL::text, p_hire_date date DEFAULT NULL::date, p_employment_type text DEFAULT NULL::text) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_id text := app_private.normalize_email(p_email);
begin
  perform app_private.assert_timezone(p_timezone);
  insert into app.members (organization_id, id, display_name, svc_roles, job_title, timezone, status,
                           employee_number, hire_date, employment_type)
  values (p_org, v_id, p_display_name, coalesce(p_roles, '{member}'), p_job_title, p_timezone, coalesce(p_status, 'active'),
          p_employee_number, p_hire_date, p_employment_type);
  return v_id;
end
$$;

-- function control.member_set_status(text, text, text)

CREATE FUNCTION control.member_set_status(p_org text, p_email text, p_status text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  update app.members set status = p_status where organization_id = p_org and id = app_private.normalize_email(p_email);
  perform app_private.require_found(found, 'MEMBER_NOT_FOUND', p_email);
end
$$;

-- function control.org_create(text, text, text, text, text, text)

CREATE FUNCTION control.org_create(p_name text, p_plan text, p_timezone text, p_currency text, p_locale text, p_web_base_url text DEFAULT 'https://app.svc.example'::text) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_id text := app_private.new_id('org');
begin
  perform app_private.assert_timezone(p_timezone);
  insert into app.organizations (id, name, plan, timezone, currency, locale, web_url)
  values (v_id, p_name, p_plan, p_timezone, upper(p_currency), p_locale, rtrim(p_web_base_url, '/') || '/o/' || v_id);
  return v_id;
end
$$;

-- function control.org_set_plan(text, text)

CREATE FUNCTION control.org_set_plan(p_org text, p_plan text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  update app.organizations set plan = p_plan where id = p_org;
  perform app_private.require_found(found, 'ORGANIZATION_NOT_FOUND', p_org);
end
$$;

-- function control.org_set_policy(text, boolean, boolean, integer)

CREATE FUNCTION control.org_set_policy(p_org text, p_show_approver_identities boolean DEFAULT NULL::boolean, p_hr_may_read_time_entries boolean DEFAULT NULL::boolean, p_time_entry_future_days integer DEFAULT NULL::integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  update app.organizations
     set show_approver_identities = coalesce(p_show_approver_identities, show_approver_identities),
         hr_may_read_time_entries = coalesce(p_hr_may_read_time_entries, hr_may_read_time_entries),
         time_entry_future_days = coalesce(p_time_entry_future_days, time_entry_future_days)
   where id = p_org;
  perform app_private.require_found(found, 'ORGANIZATION_NOT_FOUND', p_org);
end
$$;

-- function control.org_set_status(text, text)

CREATE FUNCTION control.org_set_status(p_org text, p_status text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  update app.organizations set status = p_status where id = p_org;
  perform app_private.require_found(found, 'ORGANIZATION_NOT_FOUND', p_org);
end
$$;

-- table app_private.context_keys

CREATE TABLE app_private.context_keys (
    id boolean DEFAULT true NOT NULL,
    inner_key bytea NOT NULL,
    outer_key bytea NOT NULL,
    CONSTRAINT context_keys_one_row CHECK (id)
);

-- constraint app.members members_pkey

ALTER TABLE ONLY app.members
    ADD CONSTRAINT members_pkey PRIMARY KEY (organization_id, id);

-- constraint app.organizations organizations_pkey

ALTER TABLE ONLY app.organizations
    ADD CONSTRAINT organizations_pkey PRIMARY KEY (id);

-- constraint app_private.context_keys context_keys_pkey

ALTER TABLE ONLY app_private.context_keys
    ADD CONSTRAINT context_keys_pkey PRIMARY KEY (id);

-- index app.members_display_name_search

CREATE INDEX members_display_name_search ON app.members USING btree (organization_id, lower(display_name) text_pattern_ops);

-- trigger app.members _100_touch_version

CREATE TRIGGER _100_touch_version BEFORE UPDATE ON app.members FOR EACH ROW EXECUTE FUNCTION app_private.tg__touch_version();

-- trigger app.organizations _100_touch_version

CREATE TRIGGER _100_touch_version BEFORE UPDATE ON app.organizations FOR EACH ROW EXECUTE FUNCTION app_private.tg__touch_version();

-- trigger app.organizations _800_seed_schemas

CREATE TRIGGER _800_seed_schemas AFTER INSERT ON app.organizations FOR EACH ROW EXECUTE FUNCTION app_private.tg_organizations__seed_schemas();

-- fk constraint app.members members_organization_id_fkey

ALTER TABLE ONLY app.members
    ADD CONSTRAINT members_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- policy app.organizations Clients see their own organization

CREATE POLICY "Clients see their own organization" ON app.organizations FOR SELECT TO svc_api USING ((id = ( SELECT app.current_organization_id() AS current_organization_id)));

-- policy app.members Clients with any Role see members of their organization

CREATE POLICY "Clients with any Role see members of their organization" ON app.members FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{member,manager,finance,hr}'::text[]) AS has_any_role)));

-- row security app.members

ALTER TABLE app.members ENABLE ROW LEVEL SECURITY;

-- row security app.organizations

ALTER TABLE app.organizations ENABLE ROW LEVEL SECURITY;

-- acl app.FUNCTION current_organization_id()

REVOKE ALL ON FUNCTION app.current_organization_id() FROM PUBLIC;
GRANT ALL ON FUNCTION app.current_organization_id() TO svc_runtime;
GRANT ALL ON FUNCTION app.current_organization_id() TO svc_api;
GRANT ALL ON FUNCTION app.current_organization_id() TO svc_reporting;

-- acl app.FUNCTION current_roles()

REVOKE ALL ON FUNCTION app.current_roles() FROM PUBLIC;
GRANT ALL ON FUNCTION app.current_roles() TO svc_runtime;
GRANT ALL ON FUNCTION app.current_roles() TO svc_api;
GRANT ALL ON FUNCTION app.current_roles() TO svc_reporting;

-- acl app_private.FUNCTION iso_timestamp(ts timestamp with time zone)

REVOKE ALL ON FUNCTION app_private.iso_timestamp(ts timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.iso_timestamp(ts timestamp with time zone) TO svc_runtime;
GRANT ALL ON FUNCTION app_private.iso_timestamp(ts timestamp with time zone) TO svc_api;
GRANT ALL ON FUNCTION app_private.iso_timestamp(ts timestamp with time zone) TO svc_reporting;

-- acl app_private.FUNCTION new_id(prefix text)

REVOKE ALL ON FUNCTION app_private.new_id(prefix text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.new_id(prefix text) TO svc_runtime;
GRANT ALL ON FUNCTION app_private.new_id(prefix text) TO svc_api;

-- acl app.TABLE organizations

GRANT SELECT ON TABLE app.organizations TO svc_api;

-- acl api.FUNCTION begin_request(p_organization_id text, p_token_sha256 text, p_required_roles text[], p_context boolean)

REVOKE ALL ON FUNCTION api.begin_request(p_organization_id text, p_token_sha256 text, p_required_roles text[], p_context boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.begin_request(p_organization_id text, p_token_sha256 text, p_required_roles text[], p_context boolean) TO svc_runtime;

-- acl api.FUNCTION command_answered(p_rows bigint)

REVOKE ALL ON FUNCTION api.command_answered(p_rows bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION api.command_answered(p_rows bigint) TO svc_runtime;

-- acl api.FUNCTION in_organization(p_organization_id text, p_statement text, p_arguments text[])

REVOKE ALL ON FUNCTION api.in_organization(p_organization_id text, p_statement text, p_arguments text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION api.in_organization(p_organization_id text, p_statement text, p_arguments text[]) TO svc_runtime;

-- acl api.FUNCTION in_organization_count(p_organization_id text, p_statement text, p_arguments text[])

REVOKE ALL ON FUNCTION api.in_organization_count(p_organization_id text, p_statement text, p_arguments text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION api.in_organization_count(p_organization_id text, p_statement text, p_arguments text[]) TO svc_runtime;

-- acl app_private.FUNCTION money_text(p_amount numeric, p_scale integer)

REVOKE ALL ON FUNCTION app_private.money_text(p_amount numeric, p_scale integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.money_text(p_amount numeric, p_scale integer) TO svc_runtime;
GRANT ALL ON FUNCTION app_private.money_text(p_amount numeric, p_scale integer) TO svc_api;
GRANT ALL ON FUNCTION app_private.money_text(p_amount numeric, p_scale integer) TO svc_reporting;

-- acl app.FUNCTION has_any_role(roles text[])

REVOKE ALL ON FUNCTION app.has_any_role(roles text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app.has_any_role(roles text[]) TO svc_runtime;
GRANT ALL ON FUNCTION app.has_any_role(roles text[]) TO svc_api;
GRANT ALL ON FUNCTION app.has_any_role(roles text[]) TO svc_reporting;

-- acl app.FUNCTION has_role(role text)

REVOKE ALL ON FUNCTION app.has_role(role text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.has_role(role text) TO svc_runtime;
GRANT ALL ON FUNCTION app.has_role(role text) TO svc_api;
GRANT ALL ON FUNCTION app.has_role(role text) TO svc_reporting;

-- acl app_private.FUNCTION normalize_email(email text)

REVOKE ALL ON FUNCTION app_private.normalize_email(email text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.normalize_email(email text) TO svc_runtime;
GRANT ALL ON FUNCTION app_private.normalize_email(email text) TO svc_api;

-- acl app.COLUMN members.organization_id

GRANT SELECT(organization_id) ON TABLE app.members TO svc_api;

-- acl app.COLUMN members.id

GRANT SELECT(id) ON TABLE app.members TO svc_api;

-- acl app.COLUMN members.display_name

GRANT SELECT(display_name) ON TABLE app.members TO svc_api;

-- acl app.COLUMN members.status

GRANT SELECT(status) ON TABLE app.members TO svc_api;

-- acl app.COLUMN members.svc_roles

GRANT SELECT(svc_roles) ON TABLE app.members TO svc_api;

-- acl app.COLUMN members.job_title

GRANT SELECT(job_title) ON TABLE app.members TO svc_api;

-- acl app.COLUMN members.timezone

GRANT SELECT(timezone) ON TABLE app.members TO svc_api;

-- acl app.COLUMN members.created_at

GRANT SELECT(created_at) ON TABLE app.members TO svc_api;

-- acl app.COLUMN members.updated_at

GRANT SELECT(updated_at) ON TABLE app.members TO svc_api;

-- acl app.COLUMN members.version

GRANT SELECT(version) ON TABLE app.members TO svc_api;

-- acl api.TABLE organization

GRANT SELECT ON TABLE api.organization TO svc_runtime;

-- acl api.FUNCTION organization(p_id text)

REVOKE ALL ON FUNCTION api.organization(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.organization(p_id text) TO svc_runtime;

-- acl api.FUNCTION require_any_role(p_roles text[], p_what text)

REVOKE ALL ON FUNCTION api.require_any_role(p_roles text[], p_what text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.require_any_role(p_roles text[], p_what text) TO svc_runtime;

-- acl api.FUNCTION service_schema_version()

REVOKE ALL ON FUNCTION api.service_schema_version() FROM PUBLIC;
GRANT ALL ON FUNCTION api.service_schema_version() TO svc_runtime;
GRANT ALL ON FUNCTION api.service_schema_version() TO svc_api;

-- acl app_private.FUNCTION accounting_sync_load(p_organization_id text, p_invoice text)

REVOKE ALL ON FUNCTION app_private.accounting_sync_load(p_organization_id text, p_invoice text) FROM PUBLIC;

-- acl app_private.FUNCTION accounting_sync_record(p_organization_id text, p_invoice text, p_ok boolean, p_external_reference text, p_error text, p_definitive boolean)

REVOKE ALL ON FUNCTION app_private.accounting_sync_record(p_organization_id text, p_invoice text, p_ok boolean, p_external_reference text, p_error text, p_definitive boolean) FROM PUBLIC;

-- acl app_private.FUNCTION assert_timezone(p_timezone text)

REVOKE ALL ON FUNCTION app_private.assert_timezone(p_timezone text) FROM PUBLIC;

-- acl app_private.FUNCTION capability_mac(p_purpose text, p_message text)

REVOKE ALL ON FUNCTION app_private.capability_mac(p_purpose text, p_message text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.capability_mac(p_purpose text, p_message text) TO svc_api;

-- acl app_private.FUNCTION chat_context(p_organization_id text, p_run_id text)

REVOKE ALL ON FUNCTION app_private.chat_context(p_organization_id text, p_run_id text) FROM PUBLIC;

-- acl app_private.FUNCTION check_if_match(p_current_version integer, p_if_match integer[])

REVOKE ALL ON FUNCTION app_private.check_if_match(p_current_version integer, p_if_match integer[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.check_if_match(p_current_version integer, p_if_match integer[]) TO svc_api;

-- acl app_private.FUNCTION check_schema_version(p_object_type text, p_schema_version integer)

REVOKE ALL ON FUNCTION app_private.check_schema_version(p_object_type text, p_schema_version integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.check_schema_version(p_object_type text, p_schema_version integer) TO svc_api;

-- acl app_private.FUNCTION check_subject(p_subject_member_id text)

REVOKE ALL ON FUNCTION app_private.check_subject(p_subject_member_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.check_subject(p_subject_member_id text) TO svc_api;

-- acl app_private.FUNCTION context_budget()

REVOKE ALL ON FUNCTION app_private.context_budget() FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.context_budget() TO svc_api;

-- acl app_private.FUNCTION context_mac(p_org text, p_client text, p_roles text, p_flags text)

REVOKE ALL ON FUNCTION app_private.context_mac(p_org text, p_client text, p_roles text, p_flags text) FROM PUBLIC;

-- acl app_private.FUNCTION context_ok()

REVOKE ALL ON FUNCTION app_private.context_ok() FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.context_ok() TO svc_runtime;
GRANT ALL ON FUNCTION app_private.context_ok() TO svc_api;
GRANT ALL ON FUNCTION app_private.context_ok() TO svc_reporting;

-- acl app_private.FUNCTION error(p_pointer text, p_code text, p_detail text)

REVOKE ALL ON FUNCTION app_private.error(p_pointer text, p_code text, p_detail text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.error(p_pointer text, p_code text, p_detail text) TO svc_api;

-- acl app_private.FUNCTION is_valid_date(p text)

REVOKE ALL ON FUNCTION app_private.is_valid_date(p text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.is_valid_date(p text) TO svc_api;

-- acl app_private.FUNCTION linked_resource_visible(p_org text, p_type text, p_id text)

REVOKE ALL ON FUNCTION app_private.linked_resource_visible(p_org text, p_type text, p_id text) FROM PUBLIC;

-- acl app_private.FUNCTION may_read_internal_notes()

REVOKE ALL ON FUNCTION app_private.may_read_internal_notes() FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.may_read_internal_notes() TO svc_api;
GRANT ALL ON FUNCTION app_private.may_read_internal_notes() TO svc_runtime;
GRANT ALL ON FUNCTION app_private.may_read_internal_notes() TO svc_reporting;

-- acl app_private.FUNCTION message_budget()

REVOKE ALL ON FUNCTION app_private.message_budget() FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.message_budget() TO svc_api;

-- acl app_private.FUNCTION normalize_emails(p jsonb)

REVOKE ALL ON FUNCTION app_private.normalize_emails(p jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.normalize_emails(p jsonb) TO svc_api;

-- acl app_private.FUNCTION policy_expression(p_expression text)

REVOKE ALL ON FUNCTION app_private.policy_expression(p_expression text) FROM PUBLIC;

-- acl app_private.FUNCTION raise(sqlstate text, code text, detail text, pointer text)

REVOKE ALL ON FUNCTION app_private.raise(sqlstate text, code text, detail text, pointer text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.raise(sqlstate text, code text, detail text, pointer text) TO svc_api;

-- acl app_private.FUNCTION raise_errors(p_errors jsonb)

REVOKE ALL ON FUNCTION app_private.raise_errors(p_errors jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.raise_errors(p_errors jsonb) TO svc_api;

-- acl app_private.FUNCTION read_flags(p_roles text[], p_ticket_module boolean, p_finance_tickets boolean, p_hr_tickets boolean, p_hr_time_entries boolean)

REVOKE ALL ON FUNCTION app_private.read_flags(p_roles text[], p_ticket_module boolean, p_finance_tickets boolean, p_hr_tickets boolean, p_hr_time_entries boolean) FROM PUBLIC;

-- acl app_private.FUNCTION require_found(p_found boolean, p_code text, p_detail text)

REVOKE ALL ON FUNCTION app_private.require_found(p_found boolean, p_code text, p_detail text) FROM PUBLIC;

-- acl app_private.FUNCTION set_context(p_org text, p_client text, p_roles text[], p_flags text)

REVOKE ALL ON FUNCTION app_private.set_context(p_org text, p_client text, p_roles text[], p_flags text) FROM PUBLIC;

-- acl app_private.FUNCTION shard_groups_unprepared()

REVOKE ALL ON FUNCTION app_private.shard_groups_unprepared() FROM PUBLIC;

-- acl app_private.FUNCTION tg__touch_version()

REVOKE ALL ON FUNCTION app_private.tg__touch_version() FROM PUBLIC;

-- acl app_private.FUNCTION tg_organizations__seed_schemas()

REVOKE ALL ON FUNCTION app_private.tg_organizations__seed_schemas() FROM PUBLIC;

-- acl app_private.FUNCTION view_on_shard_group(p_view regclass, p_shard bigint)

REVOKE ALL ON FUNCTION app_private.view_on_shard_group(p_view regclass, p_shard bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.view_on_shard_group(p_view regclass, p_shard bigint) TO svc_api;

-- acl app_private.FUNCTION view_on_shards(p_view regclass, p_organization_id text)

REVOKE ALL ON FUNCTION app_private.view_on_shards(p_view regclass, p_organization_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.view_on_shards(p_view regclass, p_organization_id text) TO svc_api;

-- acl app_private.FUNCTION wire_json(d jsonb)

REVOKE ALL ON FUNCTION app_private.wire_json(d jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.wire_json(d jsonb) TO svc_runtime;
GRANT ALL ON FUNCTION app_private.wire_json(d jsonb) TO svc_api;
GRANT ALL ON FUNCTION app_private.wire_json(d jsonb) TO svc_reporting;

-- acl control.FUNCTION field_define(p_org text, p_object_type text, p_api_name text, p_label text, p_field_type text, p_required boolean, p_options jsonb, p_readable_roles text[], p_writable_roles text[], p_filterable boolean, p_sortable boolean, p_position integer)

REVOKE ALL ON FUNCTION control.field_define(p_org text, p_object_type text, p_api_name text, p_label text, p_field_type text, p_required boolean, p_options jsonb, p_readable_roles text[], p_writable_roles text[], p_filterable boolean, p_sortable boolean, p_position integer) FROM PUBLIC;

-- acl control.FUNCTION field_delete(p_org text, p_object_type text, p_api_name text)

REVOKE ALL ON FUNCTION control.field_delete(p_org text, p_object_type text, p_api_name text) FROM PUBLIC;

-- acl control.FUNCTION member_add(p_org text, p_email text, p_display_name text, p_roles text[], p_job_title text, p_timezone text, p_status text, p_employee_number text, p_hire_date date, p_employment_type text)

REVOKE ALL ON FUNCTION control.member_add(p_org text, p_email text, p_display_name text, p_roles text[], p_job_title text, p_timezone text, p_status text, p_employee_number text, p_hire_date date, p_employment_type text) FROM PUBLIC;

-- acl control.FUNCTION member_set_status(p_org text, p_email text, p_status text)

REVOKE ALL ON FUNCTION control.member_set_status(p_org text, p_email text, p_status text) FROM PUBLIC;

-- acl control.FUNCTION org_create(p_name text, p_plan text, p_timezone text, p_currency text, p_locale text, p_web_base_url text)

REVOKE ALL ON FUNCTION control.org_create(p_name text, p_plan text, p_timezone text, p_currency text, p_locale text, p_web_base_url text) FROM PUBLIC;

-- acl control.FUNCTION org_set_plan(p_org text, p_plan text)

REVOKE ALL ON FUNCTION control.org_set_plan(p_org text, p_plan text) FROM PUBLIC;

-- acl control.FUNCTION org_set_policy(p_org text, p_show_approver_identities boolean, p_hr_may_read_time_entries boolean, p_time_entry_future_days integer)

REVOKE ALL ON FUNCTION control.org_set_policy(p_org text, p_show_approver_identities boolean, p_hr_may_read_time_entries boolean, p_time_entry_future_days integer) FROM PUBLIC;

-- acl control.FUNCTION org_set_status(p_org text, p_status text)

REVOKE ALL ON FUNCTION control.org_set_status(p_org text, p_status text) FROM PUBLIC;

-- The context signature's key: 64 random bytes (the SHA-256 block size), HMAC-SHA256 (RFC 2104)
-- pads precomputed; gen_random_uuid() draws from pg_strong_random.
do $$
declare
  k bytea := sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8'))
          || sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8'));
  i bytea := k;
  o bytea := k;
begin
  for n in 0..63 loop
    i := set_byte(i, n, get_byte(k, n) # 54);  -- 0x36
    o := set_byte(o, n, get_byte(k, n) # 92);  -- 0x5c
  end loop;
  insert into app_private.context_keys (inner_key, outer_key) values (i, o);
end
$$;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
