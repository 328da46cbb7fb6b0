-- migrate:up

/** The baseline, 2 of 16. Tenancy and the request context: organizations, members, the signed per-request context the row policies read, identifiers and errors.
 * Laid out by table: each table, then its keys and indexes, row security and policies, triggers
 * and their functions, and grants; then the area's views and commands. db/README.md, "The
 * baseline", says how it was made and proved equal to the migrations it replaced. */
set local check_function_bodies = false;
set local client_min_messages = warning;
set local search_path = '';

-- While this file runs, the owners of its functions and views may create in the schemas (`alter … owner to`
-- a role needs it when the migrating role is not a superuser); taken back at its end.
grant create on schema api, app, app_private, control, reporting, skills to svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- function app.current_organization_id()

create function app.current_organization_id() returns text
    language plpgsql stable parallel restricted
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if app_private.context_ok() then
    return nullif(current_setting('svc.organization_id', true), '');
  end if;
  return (app_private.bi_context()).organization_id;
end
$$;

alter function app.current_organization_id() owner to svc_owner;

revoke all on function app.current_organization_id() from public;
grant execute on function app.current_organization_id() to svc_runtime;
grant execute on function app.current_organization_id() to svc_api;
grant execute on function app.current_organization_id() to svc_reporting;
grant execute on function app.current_organization_id() to svc_worker;
grant execute on function app.current_organization_id() to svc_admin;
grant execute on function app.current_organization_id() to svc_gate;

-- function app.current_roles()

create function app.current_roles() returns text[]
    language plpgsql stable parallel restricted
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if app_private.context_ok() then
    return coalesce(string_to_array(nullif(current_setting('svc.roles', true), ''), ','), '{}'::text[]);
  end if;
  return coalesce((app_private.bi_context()).svc_roles, '{}'::text[]);
end
$$;

alter function app.current_roles() owner to svc_owner;

set default_tablespace = '';

set default_table_access_method = heap;

revoke all on function app.current_roles() from public;
grant execute on function app.current_roles() to svc_runtime;
grant execute on function app.current_roles() to svc_api;
grant execute on function app.current_roles() to svc_reporting;
grant execute on function app.current_roles() to svc_worker;
grant execute on function app.current_roles() to svc_admin;
grant execute on function app.current_roles() to svc_gate;

-- function app_private.iso_timestamp(timestamp with time zone)

create function app_private.iso_timestamp(ts timestamp with time zone) returns text
    language plpgsql immutable parallel safe
    as $$
begin
  return pg_catalog.to_char(ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
end
$$;

alter function app_private.iso_timestamp(ts timestamp with time zone) owner to svc_owner;

revoke all on function app_private.iso_timestamp(ts timestamp with time zone) from public;
grant execute on function app_private.iso_timestamp(ts timestamp with time zone) to svc_runtime;
grant execute on function app_private.iso_timestamp(ts timestamp with time zone) to svc_api;
grant execute on function app_private.iso_timestamp(ts timestamp with time zone) to svc_reporting;
grant execute on function app_private.iso_timestamp(ts timestamp with time zone) to svc_worker;
grant execute on function app_private.iso_timestamp(ts timestamp with time zone) to svc_admin;
grant execute on function app_private.iso_timestamp(ts timestamp with time zone) to svc_gate;

-- function app_private.new_id(text)

create function app_private.new_id(prefix text) returns text
    language plpgsql parallel safe
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  return prefix || '_' || lpad(to_hex((extract(epoch from clock_timestamp()) * 1000)::bigint), 12, '0')
         || substr(replace(gen_random_uuid()::text, '-', ''), 1, 16);
end
$$;

alter function app_private.new_id(prefix text) owner to svc_owner;

revoke all on function app_private.new_id(prefix text) from public;
grant execute on function app_private.new_id(prefix text) to svc_runtime;
grant execute on function app_private.new_id(prefix text) to svc_api;
grant execute on function app_private.new_id(prefix text) to svc_worker;
grant execute on function app_private.new_id(prefix text) to svc_admin;
grant execute on function app_private.new_id(prefix text) to svc_gate;

-- function app_private.tg__touch_version()

create function app_private.tg__touch_version() returns trigger
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  new.updated_at := now();
  new.version := old.version + 1;
  return new;
end
$$;

alter function app_private.tg__touch_version() owner to svc_owner;

comment on function app_private.tg__touch_version() is 'BEFORE UPDATE on app.organizations, members, projects, tasks, time_entries, approvals, integration_connections, webhook_endpoints and tickets: sets updated_at to now() and version to the old version plus one, whatever the update said. The version is the resource''s ETag, so every change, by any writer, makes an If-Match on the old version fail with 412 STALE_RESOURCE, and no writer can keep or choose a version.';

revoke all on function app_private.tg__touch_version() from public;
grant execute on function app_private.tg__touch_version() to svc_worker;
grant execute on function app_private.tg__touch_version() to svc_admin;

-- function app_private.operator_session()

create function app_private.operator_session() returns boolean
    language sql stable parallel safe
    as $$ select pg_catalog.pg_has_role(session_user, 'svc_operator', 'USAGE') $$;

alter function app_private.operator_session() owner to svc_owner;

comment on function app_private.operator_session() is 'Whether the session''s login acts for every organization (a member of svc_operator, or a superuser): the worker, svc-admin, migrations. Never svc_runtime or a BI login.';

revoke all on function app_private.operator_session() from public;
grant execute on function app_private.operator_session() to svc_worker;
grant execute on function app_private.operator_session() to svc_admin;

-- function app_private.money_text(numeric, integer)

create function app_private.money_text(p_amount numeric, p_scale integer) returns text
    language sql immutable parallel safe
    as $$ select pg_catalog.round(p_amount, p_scale)::text $$;

alter function app_private.money_text(p_amount numeric, p_scale integer) owner to svc_owner;

revoke all on function app_private.money_text(p_amount numeric, p_scale integer) from public;
grant execute on function app_private.money_text(p_amount numeric, p_scale integer) to svc_runtime;
grant execute on function app_private.money_text(p_amount numeric, p_scale integer) to svc_api;
grant execute on function app_private.money_text(p_amount numeric, p_scale integer) to svc_reporting;
grant execute on function app_private.money_text(p_amount numeric, p_scale integer) to svc_worker;
grant execute on function app_private.money_text(p_amount numeric, p_scale integer) to svc_admin;
grant execute on function app_private.money_text(p_amount numeric, p_scale integer) to svc_gate;

-- function app.has_any_role(text[])

create function app.has_any_role(roles text[]) returns boolean
    language plpgsql stable parallel restricted
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  return roles && app.current_roles();
end
$$;

alter function app.has_any_role(roles text[]) owner to svc_owner;

revoke all on function app.has_any_role(roles text[]) from public;
grant execute on function app.has_any_role(roles text[]) to svc_runtime;
grant execute on function app.has_any_role(roles text[]) to svc_api;
grant execute on function app.has_any_role(roles text[]) to svc_reporting;
grant execute on function app.has_any_role(roles text[]) to svc_worker;
grant execute on function app.has_any_role(roles text[]) to svc_admin;
grant execute on function app.has_any_role(roles text[]) to svc_gate;

-- function app.has_role(text)

create function app.has_role(role text) returns boolean
    language plpgsql stable parallel restricted
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  return role = any (app.current_roles());
end
$$;

alter function app.has_role(role text) owner to svc_owner;

revoke all on function app.has_role(role text) from public;
grant execute on function app.has_role(role text) to svc_runtime;
grant execute on function app.has_role(role text) to svc_api;
grant execute on function app.has_role(role text) to svc_reporting;
grant execute on function app.has_role(role text) to svc_worker;
grant execute on function app.has_role(role text) to svc_admin;
grant execute on function app.has_role(role text) to svc_gate;

-- function app_private.member_hr_profile(text, text)

create function app_private.member_hr_profile(p_org text, p_member_id text) returns jsonb
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_org text;
begin
  v_org := app.current_organization_id();
  if v_org is null or p_org is distinct from v_org or not coalesce(app.has_role('hr'), false) then
    return null;
  end if;
  -- Per row of an hr reader's members: a catalog lookup (and on Citus one call), not another check
  -- of the context's signature.
  perform app_private.refuse_on_coordinator('app_private.member_hr_profile(text,text)');
  return (select jsonb_build_object('employee_number', m.employee_number, 'hire_date', m.hire_date, 'employment_type', m.employment_type)
            from app.members m
           where m.organization_id = p_org and m.id = p_member_id);
end
$$;

alter function app_private.member_hr_profile(p_org text, p_member_id text) owner to svc_owner;

comment on function app_private.member_hr_profile(p_org text, p_member_id text) is 'The HR-restricted fields of a member (employee number, hire date, employment type) for api.members: only when the caller holds the hr Role and the member is of the context''s organization, null otherwise (spec: HR-restricted fields only for hr). It runs as svc_owner because svc_api is not granted these columns; its own checks come first, then it reads the one member of that organization, and it is refused on a Citus coordinator (SV500 NOT_IN_ITS_WORKER).';

revoke all on function app_private.member_hr_profile(p_org text, p_member_id text) from public;
grant execute on function app_private.member_hr_profile(p_org text, p_member_id text) to svc_runtime;
grant execute on function app_private.member_hr_profile(p_org text, p_member_id text) to svc_api;
grant execute on function app_private.member_hr_profile(p_org text, p_member_id text) to svc_reporting;
grant execute on function app_private.member_hr_profile(p_org text, p_member_id text) to svc_worker;
grant execute on function app_private.member_hr_profile(p_org text, p_member_id text) to svc_admin;
grant execute on function app_private.member_hr_profile(p_org text, p_member_id text) to svc_gate;

-- function app_private.normalize_email(text)

create function app_private.normalize_email(email text) returns text
    language plpgsql immutable strict parallel safe
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  return lower(btrim(email));
end
$$;

alter function app_private.normalize_email(email text) owner to svc_owner;

revoke all on function app_private.normalize_email(email text) from public;
grant execute on function app_private.normalize_email(email text) to svc_runtime;
grant execute on function app_private.normalize_email(email text) to svc_api;
grant execute on function app_private.normalize_email(email text) to svc_worker;
grant execute on function app_private.normalize_email(email text) to svc_admin;
grant execute on function app_private.normalize_email(email text) to svc_gate;

-- function app_private.assert_timezone(text)

create function app_private.assert_timezone(p_timezone text) returns void
    language plpgsql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if p_timezone is not null and not exists (select from pg_timezone_names where name = p_timezone) then
    perform app_private.raise('SVV01', 'INVALID_TIMEZONE', format('%s is not an IANA time-zone identifier', p_timezone));
  end if;
end
$$;

alter function app_private.assert_timezone(p_timezone text) owner to svc_owner;

revoke all on function app_private.assert_timezone(p_timezone text) from public;
grant execute on function app_private.assert_timezone(p_timezone text) to svc_worker;
grant execute on function app_private.assert_timezone(p_timezone text) to svc_admin;

-- function app_private.capability_mac(text, text)

create function app_private.capability_mac(p_purpose text, p_message text) returns text
    language plpgsql stable security definer parallel restricted
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  k record;
begin
  select inner_key, outer_key into k from app_private.context_keys;
  return encode(sha256(k.outer_key || sha256(k.inner_key || convert_to('capability' || chr(31) || p_purpose || chr(31) || p_message, 'UTF8'))), 'hex');
end
$$;

alter function app_private.capability_mac(p_purpose text, p_message text) owner to svc_gate;

comment on function app_private.capability_mac(p_purpose text, p_message text) is 'The HMAC-SHA256 (RFC 2104) of a capability link''s message (upload, file download, report download), keyed with app_private.context_keys and kept apart from context signatures by the label ''capability'' and a purpose label: a link''s token is this signature, so nothing secret is stored and a link cannot be forged or reused for another purpose or organization (its message names the organization). It runs as svc_gate, the only role that may read the key: the commands that mint and check links get the signature, never the key, and svc_runtime may not execute it.';

revoke all on function app_private.capability_mac(p_purpose text, p_message text) from public;
grant execute on function app_private.capability_mac(p_purpose text, p_message text) to svc_api;
grant execute on function app_private.capability_mac(p_purpose text, p_message text) to svc_owner;
grant execute on function app_private.capability_mac(p_purpose text, p_message text) to svc_worker;
grant execute on function app_private.capability_mac(p_purpose text, p_message text) to svc_admin;

-- function app_private.check_if_match(integer, integer[])

create function app_private.check_if_match(p_current_version integer, p_if_match integer[]) returns void
    language plpgsql immutable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if p_if_match is null or not (p_current_version = any (p_if_match)) then
    perform app_private.raise('SVS12', 'STALE_RESOURCE', format('"%s"', p_current_version));
  end if;
end
$$;

alter function app_private.check_if_match(p_current_version integer, p_if_match integer[]) owner to svc_owner;

revoke all on function app_private.check_if_match(p_current_version integer, p_if_match integer[]) from public;
grant execute on function app_private.check_if_match(p_current_version integer, p_if_match integer[]) to svc_api;
grant execute on function app_private.check_if_match(p_current_version integer, p_if_match integer[]) to svc_worker;
grant execute on function app_private.check_if_match(p_current_version integer, p_if_match integer[]) to svc_admin;

-- function app_private.check_schema_version(text, integer)

create function app_private.check_schema_version(p_object_type text, p_schema_version integer) returns void
    language plpgsql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.check_schema_version(p_object_type text, p_schema_version integer) owner to svc_owner;

revoke all on function app_private.check_schema_version(p_object_type text, p_schema_version integer) from public;
grant execute on function app_private.check_schema_version(p_object_type text, p_schema_version integer) to svc_api;
grant execute on function app_private.check_schema_version(p_object_type text, p_schema_version integer) to svc_worker;
grant execute on function app_private.check_schema_version(p_object_type text, p_schema_version integer) to svc_admin;

-- function app_private.check_subject(text)

create function app_private.check_subject(p_subject_member_id text) returns text
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.check_subject(p_subject_member_id text) owner to svc_owner;

comment on function app_private.check_subject(p_subject_member_id text) is 'Checks a request''s subject.member_id: null passes as null; otherwise it must be the exact normalized email of an active member of the signed request''s organization, else SVV22 INVALID_SUBJECT_MEMBER at /subject/member_id, because possession of an email is not authorization and a subject adds no Roles (spec). It runs as svc_owner so it reads members the same way for every caller (api commands, the worker''s runs), and only those of app.current_organization_id() (none without a signed context), under svc_owner''s policy.';

revoke all on function app_private.check_subject(p_subject_member_id text) from public;
grant execute on function app_private.check_subject(p_subject_member_id text) to svc_api;
grant execute on function app_private.check_subject(p_subject_member_id text) to svc_worker;
grant execute on function app_private.check_subject(p_subject_member_id text) to svc_admin;

-- function app_private.context_mac(text, text, text, text)

create function app_private.context_mac(p_org text, p_client text, p_roles text, p_flags text) returns text
    language plpgsql stable security definer parallel restricted
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  k record;
begin
  select inner_key, outer_key into k from app_private.context_keys;
  return encode(sha256(k.outer_key || sha256(k.inner_key || convert_to(concat_ws(chr(31), p_org, p_client, p_roles, p_flags,
    pg_backend_pid()::text, (extract(epoch from now()) * 1000000)::bigint::text), 'UTF8'))), 'hex');
end
$$;

alter function app_private.context_mac(p_org text, p_client text, p_roles text, p_flags text) owner to svc_gate;

comment on function app_private.context_mac(p_org text, p_client text, p_roles text, p_flags text) is 'The signature of a request context: HMAC-SHA256 keyed with app_private.context_keys over the organization, client, Roles and read flags, the backend pid and the transaction''s start time, so it matches only in this backend and this transaction. It runs as svc_gate, the only role that may read the key; app_private.set_context calls it, and svc_runtime may not execute it, so no runtime session can sign settings of its own choosing.';

revoke all on function app_private.context_mac(p_org text, p_client text, p_roles text, p_flags text) from public;
grant execute on function app_private.context_mac(p_org text, p_client text, p_roles text, p_flags text) to svc_owner;
grant execute on function app_private.context_mac(p_org text, p_client text, p_roles text, p_flags text) to svc_worker;
grant execute on function app_private.context_mac(p_org text, p_client text, p_roles text, p_flags text) to svc_admin;

-- function app_private.context_ok()

create function app_private.context_ok() returns boolean
    language plpgsql stable security definer parallel restricted
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.context_ok() owner to svc_gate;

comment on function app_private.context_ok() is 'Whether the transaction''s svc.* settings (organization, client, Roles, read flags) carry the signature app_private.set_context made for them, in this backend and this transaction; false when there is none. Every context accessor, and so every row policy and api view, reads through it, so settings written with set_config, or copied into another session or a later transaction, show nothing. It runs as svc_gate, the only role that may read app_private.context_keys, and computes context_mac''s formula inline because it runs at every policy check of every statement.';

revoke all on function app_private.context_ok() from public;
grant execute on function app_private.context_ok() to svc_runtime;
grant execute on function app_private.context_ok() to svc_api;
grant execute on function app_private.context_ok() to svc_reporting;
grant execute on function app_private.context_ok() to svc_owner;
grant execute on function app_private.context_ok() to svc_worker;
grant execute on function app_private.context_ok() to svc_admin;

-- function app_private.error(text, text, text)

create function app_private.error(p_pointer text, p_code text, p_detail text) returns jsonb
    language sql immutable parallel safe
    set search_path to 'pg_catalog', 'pg_temp'
    as $$ select jsonb_build_array(jsonb_build_object('pointer', p_pointer, 'detail', p_detail, 'code', p_code)) $$;

alter function app_private.error(p_pointer text, p_code text, p_detail text) owner to svc_owner;

revoke all on function app_private.error(p_pointer text, p_code text, p_detail text) from public;
grant execute on function app_private.error(p_pointer text, p_code text, p_detail text) to svc_api;
grant execute on function app_private.error(p_pointer text, p_code text, p_detail text) to svc_worker;
grant execute on function app_private.error(p_pointer text, p_code text, p_detail text) to svc_admin;

-- function app_private.is_valid_date(text)

create function app_private.is_valid_date(p text) returns boolean
    language plpgsql immutable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  perform p::date;
  return true;
exception when others then
  return false;
end
$$;

alter function app_private.is_valid_date(p text) owner to svc_owner;

revoke all on function app_private.is_valid_date(p text) from public;
grant execute on function app_private.is_valid_date(p text) to svc_api;
grant execute on function app_private.is_valid_date(p text) to svc_worker;
grant execute on function app_private.is_valid_date(p text) to svc_admin;

-- function app_private.normalize_emails(jsonb)

create function app_private.normalize_emails(p jsonb) returns text[]
    language plpgsql immutable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  return (select coalesce(array_agg(app_private.normalize_email(e)), '{}') from jsonb_array_elements_text(p) e);
end
$$;

alter function app_private.normalize_emails(p jsonb) owner to svc_owner;

revoke all on function app_private.normalize_emails(p jsonb) from public;
grant execute on function app_private.normalize_emails(p jsonb) to svc_api;
grant execute on function app_private.normalize_emails(p jsonb) to svc_worker;
grant execute on function app_private.normalize_emails(p jsonb) to svc_admin;

-- function app_private.raise(text, text, text, text)

create function app_private.raise(sqlstate text, code text, detail text default null::text, pointer text default null::text) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  raise exception using errcode = sqlstate, message = code, detail = coalesce(detail, ''), hint = coalesce(pointer, '');
end
$$;

alter function app_private.raise(sqlstate text, code text, detail text, pointer text) owner to svc_owner;

revoke all on function app_private.raise(sqlstate text, code text, detail text, pointer text) from public;
grant execute on function app_private.raise(sqlstate text, code text, detail text, pointer text) to svc_api;
grant execute on function app_private.raise(sqlstate text, code text, detail text, pointer text) to svc_worker;
grant execute on function app_private.raise(sqlstate text, code text, detail text, pointer text) to svc_admin;
grant execute on function app_private.raise(sqlstate text, code text, detail text, pointer text) to svc_gate;

-- function app_private.raise_errors(jsonb)

create function app_private.raise_errors(p_errors jsonb) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.raise_errors(p_errors jsonb) owner to svc_owner;

revoke all on function app_private.raise_errors(p_errors jsonb) from public;
grant execute on function app_private.raise_errors(p_errors jsonb) to svc_api;
grant execute on function app_private.raise_errors(p_errors jsonb) to svc_worker;
grant execute on function app_private.raise_errors(p_errors jsonb) to svc_admin;

-- function app_private.read_flags(text[], boolean, boolean, boolean, boolean)

create function app_private.read_flags(p_roles text[], p_ticket_module boolean, p_finance_tickets boolean, p_hr_tickets boolean, p_hr_time_entries boolean) returns text
    language sql immutable parallel safe
    as $$
  select concat_ws(',',
    case when v_tickets then 'tickets' end,
    case when v_tickets and p_roles && '{member,manager}'::text[] then 'internal_notes' end,
    case when p_roles && '{manager,finance}'::text[] or ('hr' = any (p_roles) and p_hr_time_entries) then 'time_entries' end)
    from (select coalesce(p_ticket_module and (p_roles && '{member,manager}'::text[]
                                              or ('finance' = any (p_roles) and p_finance_tickets)
                                              or ('hr' = any (p_roles) and p_hr_tickets)), false) as v_tickets) x
$$;

alter function app_private.read_flags(p_roles text[], p_ticket_module boolean, p_finance_tickets boolean, p_hr_tickets boolean, p_hr_time_entries boolean) owner to svc_owner;

revoke all on function app_private.read_flags(p_roles text[], p_ticket_module boolean, p_finance_tickets boolean, p_hr_tickets boolean, p_hr_time_entries boolean) from public;
grant execute on function app_private.read_flags(p_roles text[], p_ticket_module boolean, p_finance_tickets boolean, p_hr_tickets boolean, p_hr_time_entries boolean) to svc_gate;
grant execute on function app_private.read_flags(p_roles text[], p_ticket_module boolean, p_finance_tickets boolean, p_hr_tickets boolean, p_hr_time_entries boolean) to svc_worker;
grant execute on function app_private.read_flags(p_roles text[], p_ticket_module boolean, p_finance_tickets boolean, p_hr_tickets boolean, p_hr_time_entries boolean) to svc_admin;

-- function app_private.require_found(boolean, text, text)

create function app_private.require_found(p_found boolean, p_code text, p_detail text) returns void
    language plpgsql immutable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if not p_found then
    perform app_private.raise('SVN01', p_code, p_detail);
  end if;
end
$$;

alter function app_private.require_found(p_found boolean, p_code text, p_detail text) owner to svc_owner;

revoke all on function app_private.require_found(p_found boolean, p_code text, p_detail text) from public;
grant execute on function app_private.require_found(p_found boolean, p_code text, p_detail text) to svc_worker;
grant execute on function app_private.require_found(p_found boolean, p_code text, p_detail text) to svc_admin;

-- function app_private.set_context(text, text, text[], text)

create function app_private.set_context(p_org text, p_client text, p_roles text[], p_flags text default null::text) returns void
    language plpgsql security definer parallel restricted
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_client text := coalesce(p_client, '');
  v_roles text := coalesce(array_to_string(p_roles, ','), '');
  v_flags text := p_flags;
  v_scope text;
begin
  if p_org is not null and v_flags is null then
    v_scope := set_config('svc.gate_organization', p_org, true);
    select app_private.read_flags(p_roles, o.ticket_module_enabled, o.finance_may_read_tickets, o.hr_may_read_tickets,
                                  o.hr_may_read_time_entries)
      into v_flags from app.organizations o where o.id = p_org;
    v_scope := set_config('svc.gate_organization', '', true);
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

alter function app_private.set_context(p_org text, p_client text, p_roles text[], p_flags text) owner to svc_gate;

comment on function app_private.set_context(p_org text, p_client text, p_roles text[], p_flags text) is 'Sets the transaction-local request context (svc.organization_id, svc.client_id, svc.roles, svc.read_flags) with its signature svc.context_mac, or clears it when the organization is null; without read flags given, it computes them from that organization''s ticket and time-entry settings for those Roles. Its callers run their standing checks first: api.begin_request, the worker''s delivery and job contexts, the beginnings of capability links. It runs as svc_gate because only svc_gate reads the signing key and, scoped by svc.gate_organization to the organization being set, its settings; svc_runtime may not execute it, so a runtime session gets a context only through api.begin_request.';

revoke all on function app_private.set_context(p_org text, p_client text, p_roles text[], p_flags text) from public;
grant execute on function app_private.set_context(p_org text, p_client text, p_roles text[], p_flags text) to svc_owner;
grant execute on function app_private.set_context(p_org text, p_client text, p_roles text[], p_flags text) to svc_worker;
grant execute on function app_private.set_context(p_org text, p_client text, p_roles text[], p_flags text) to svc_admin;

-- function app_private.view_on_shard_group(regclass, bigint)

create function app_private.view_on_shard_group(p_view regclass, p_shard bigint) returns text
    language plpgsql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
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

alter function app_private.view_on_shard_group(p_view regclass, p_shard bigint) owner to svc_owner;

revoke all on function app_private.view_on_shard_group(p_view regclass, p_shard bigint) from public;
grant execute on function app_private.view_on_shard_group(p_view regclass, p_shard bigint) to svc_api;
grant execute on function app_private.view_on_shard_group(p_view regclass, p_shard bigint) to svc_worker;
grant execute on function app_private.view_on_shard_group(p_view regclass, p_shard bigint) to svc_admin;

-- function app_private.view_on_shards(regclass, text)

create function app_private.view_on_shards(p_view regclass, p_organization_id text) returns text
    language plpgsql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if not exists (select from pg_dist_partition where logicalrelid = 'app.organizations'::regclass) then
    return rtrim(pg_get_viewdef(p_view), '; ');
  end if;
  return app_private.view_on_shard_group(p_view,
    get_shard_id_for_distribution_column('app.organizations', p_organization_id));
end
$$;

alter function app_private.view_on_shards(p_view regclass, p_organization_id text) owner to svc_owner;

revoke all on function app_private.view_on_shards(p_view regclass, p_organization_id text) from public;
grant execute on function app_private.view_on_shards(p_view regclass, p_organization_id text) to svc_api;
grant execute on function app_private.view_on_shards(p_view regclass, p_organization_id text) to svc_worker;
grant execute on function app_private.view_on_shards(p_view regclass, p_organization_id text) to svc_admin;

-- function app_private.wire_json(jsonb)

create function app_private.wire_json(d jsonb) returns text
    language sql immutable parallel safe
    as $$
  select case when d ? 'object'
              then '{"object":' || (d -> 'object')::text || coalesce(',"id":' || (d -> 'id')::text, '')
                   || coalesce(',' || nullif(substr((d - 'object' - 'id')::text, 2), '}'), '}')
              else d::text end
$$;

alter function app_private.wire_json(d jsonb) owner to svc_owner;

revoke all on function app_private.wire_json(d jsonb) from public;
grant execute on function app_private.wire_json(d jsonb) to svc_runtime;
grant execute on function app_private.wire_json(d jsonb) to svc_api;
grant execute on function app_private.wire_json(d jsonb) to svc_reporting;
grant execute on function app_private.wire_json(d jsonb) to svc_worker;
grant execute on function app_private.wire_json(d jsonb) to svc_admin;
grant execute on function app_private.wire_json(d jsonb) to svc_gate;

-- table app.organizations

create table app.organizations (
    id text default app_private.new_id('org'::text) not null,
    name text not null,
    status text default 'active'::text not null,
    plan text not null,
    timezone text not null,
    currency text not null,
    locale text not null,
    web_url text not null,
    created_at timestamp with time zone default now() not null,
    updated_at timestamp with time zone default now() not null,
    version integer default 1 not null,
    show_approver_identities boolean default false not null,
    hr_may_read_time_entries boolean default false not null,
    time_entry_future_days integer default 0 not null,
    invoices_require_accounting_connection boolean default false not null,
    invoice_number_prefix text default 'INV-'::text not null,
    invoice_payment_terms_days integer default 30 not null,
    ticket_module_enabled boolean default true not null,
    finance_may_read_tickets boolean default false not null,
    hr_may_read_tickets boolean default false not null,
    constraint organizations_currency_iso4217 check ((currency ~ '^[A-Z]{3}$'::text)),
    constraint organizations_invoice_number_prefix_format check ((invoice_number_prefix ~ '^[A-Za-z0-9/_-]{0,12}$'::text)),
    constraint organizations_invoice_payment_terms_range check (((invoice_payment_terms_days >= 0) and (invoice_payment_terms_days <= 365))),
    constraint organizations_locale_bcp47 check ((locale ~ '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$'::text)),
    constraint organizations_name_length check (((length(name) >= 1) and (length(name) <= 200))),
    constraint organizations_plan_valid check ((plan = any (array['trial'::text, 'team'::text, 'business'::text, 'enterprise'::text]))),
    constraint organizations_status_valid check ((status = any (array['active'::text, 'restricted'::text, 'suspended'::text]))),
    constraint organizations_time_entry_future_days_range check (((time_entry_future_days >= 0) and (time_entry_future_days <= 31)))
);

alter table only app.organizations force row level security;

comment on column app.organizations.plan is 'Trial and Team plans do not support API Clients.';

alter table only app.organizations
    add constraint organizations_pkey primary key (id);

alter table app.organizations enable row level security;

create policy "The gate reads the organization it was asked about" on app.organizations for select to svc_gate using (id = current_setting('svc.gate_organization'::text, true));

comment on policy "The gate reads the organization it was asked about" on app.organizations is 'svc_gate reads only the organization named in svc.gate_organization, which each gate function (api.begin_request, api.authenticate_client, app_private.set_context) sets to the organization its caller named for the length of its read and then clears. The credential path reads an organization''s status, plan and read settings before any request context exists, and this keeps a wrong WHERE from reading any other.';

create policy "Commands act in the request's organization" on app.organizations to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.organizations is 'For svc_owner, svc_worker and svc_admin, every command: the signed request''s organization (id = app.current_organization_id()), or every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations), in USING and WITH CHECK. A definer or trigger run in a request reads only its own organization''s settings (plan, timezone, policies), while the control plane creates and configures any organization and the worker''s jobs span them.';

create policy "Clients see their own organization" on app.organizations for select to svc_api using (id = (select app.current_organization_id()));

comment on policy "Clients see their own organization" on app.organizations is 'svc_api reads only the row of the signed request context''s organization in app.organizations. A client reads its own organization and never another; with no context, or a forged or copied one, it reads none.';

create function app_private.tg_organizations__seed_ticket_workflow() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  perform app_private.seed_ticket_workflow(new.id);
  return null;
end
$$;

alter function app_private.tg_organizations__seed_ticket_workflow() owner to svc_owner;

comment on function app_private.tg_organizations__seed_ticket_workflow() is 'AFTER INSERT trigger on app.organizations: seeds the new organization''s default ticket workflow (statuses new, open, pending, on_hold, solved, closed, new the initial one; the transitions between them, resolve requiring a resolution), so that every organization can create tickets from the start. It runs as svc_owner, which writes the workflow tables of the organization being created.';

create function app_private.tg_organizations__seed_task_workflow() returns trigger
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  perform app_private.seed_default_task_workflow(new.id);
  return null;
end
$$;

alter function app_private.tg_organizations__seed_task_workflow() owner to svc_owner;

comment on function app_private.tg_organizations__seed_task_workflow() is 'AFTER INSERT row trigger on app.organizations (_810_seed_task_workflow): gives every new organization its default task workflow (app_private.seed_default_task_workflow): todo (initial), in_progress, blocked, done and cancelled, with the transitions start, block, unblock, complete, cancel and reopen, so createTask always finds a default workflow and its initial status. It runs as the writer, the control plane creating the organization.';

create function app_private.tg_organizations__publish_agents() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  insert into app.agent_publications (organization_id, agent_id, status)
  select new.id, d.id, 'published' from app_private.agent_definitions d
  on conflict do nothing;
  return null;
end
$$;

alter function app_private.tg_organizations__publish_agents() owner to svc_owner;

comment on function app_private.tg_organizations__publish_agents() is 'AFTER INSERT trigger on app.organizations: a new organization starts with every agent of the catalogue published (app.agent_publications; rows already there are kept). It runs as svc_owner, the owner of every trigger, under its policy: organizations are created in an operator session (svc-admin, migrations), where that policy admits the new organization''s rows.';

create function app_private.tg_organizations__seed_schemas() returns trigger
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  insert into app.object_schemas (organization_id, object_type, label)
  values (new.id, 'project', 'Project'), (new.id, 'task', 'Task');
  return null;
end
$$;

alter function app_private.tg_organizations__seed_schemas() owner to svc_owner;

comment on function app_private.tg_organizations__seed_schemas() is 'AFTER INSERT on app.organizations: creates the new organization''s object schemas for project and task in app.object_schemas, which its custom-field definitions belong to and the schema endpoints list. It runs as the inserting role (the control plane), under the policy "Commands act in the request''s organization" on app.object_schemas.';

create trigger _100_touch_version before update on app.organizations for each row execute function app_private.tg__touch_version();

create trigger _500_publish_agents after insert on app.organizations for each row execute function app_private.tg_organizations__publish_agents();

create trigger _800_seed_schemas after insert on app.organizations for each row execute function app_private.tg_organizations__seed_schemas();

create trigger _810_seed_task_workflow after insert on app.organizations for each row execute function app_private.tg_organizations__seed_task_workflow();

create trigger _820_seed_ticket_workflow after insert on app.organizations for each row execute function app_private.tg_organizations__seed_ticket_workflow();

grant select on table app.organizations to svc_api;
grant select on table app.organizations to svc_gate;
grant select,insert,delete,update on table app.organizations to svc_owner;
grant select,insert,delete,update on table app.organizations to svc_worker;
grant select,insert,delete,update on table app.organizations to svc_admin;

revoke all on function app_private.tg_organizations__publish_agents() from public;
grant execute on function app_private.tg_organizations__publish_agents() to svc_worker;
grant execute on function app_private.tg_organizations__publish_agents() to svc_admin;

revoke all on function app_private.tg_organizations__seed_schemas() from public;
grant execute on function app_private.tg_organizations__seed_schemas() to svc_worker;
grant execute on function app_private.tg_organizations__seed_schemas() to svc_admin;

revoke all on function app_private.tg_organizations__seed_task_workflow() from public;
grant execute on function app_private.tg_organizations__seed_task_workflow() to svc_worker;
grant execute on function app_private.tg_organizations__seed_task_workflow() to svc_admin;

revoke all on function app_private.tg_organizations__seed_ticket_workflow() from public;
grant execute on function app_private.tg_organizations__seed_ticket_workflow() to svc_worker;
grant execute on function app_private.tg_organizations__seed_ticket_workflow() to svc_admin;

-- table app.members

create table app.members (
    organization_id text not null,
    id text not null,
    display_name text not null,
    status text default 'active'::text not null,
    svc_roles text[] default '{member}'::text[] not null,
    job_title text,
    timezone text,
    employee_number text,
    hire_date date,
    employment_type text,
    created_at timestamp with time zone default now() not null,
    updated_at timestamp with time zone default now() not null,
    version integer default 1 not null,
    constraint members_display_name_length check (((length(display_name) >= 1) and (length(display_name) <= 200))),
    constraint members_employment_type_valid check ((employment_type = any (array['employee'::text, 'contractor'::text, 'intern'::text]))),
    constraint members_id_is_normalized_email check (((id = app_private.normalize_email(id)) and (id ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'::text))),
    constraint members_roles_valid check ((svc_roles <@ array['member'::text, 'manager'::text, 'finance'::text, 'hr'::text])),
    constraint members_status_valid check ((status = any (array['active'::text, 'inactive'::text])))
);

alter table only app.members force row level security;

alter table only app.members
    add constraint members_pkey primary key (organization_id, id);

create index members_display_name_search on app.members using btree (organization_id, lower(display_name) text_pattern_ops);

alter table only app.members
    add constraint members_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table app.members enable row level security;

create policy "Commands act in the request's organization" on app.members to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.members is 'For svc_owner, svc_worker and svc_admin, every command: the members of the signed request''s organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations), in USING and WITH CHECK. Definers and triggers run inside a request (such as check_subject and the time-entry validation) thus read only that organization''s members, while the control plane manages the members of any organization.';

create policy "Clients with any Role see members of their organization" on app.members for select to svc_api using ((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{member,manager,finance,hr}'::text[])));

comment on policy "Clients with any Role see members of their organization" on app.members is 'svc_api reads members only of the signed request''s organization, and only when the client holds one of member, manager, finance or hr (the spec''s Role matrix for members). Column grants keep the HR-restricted fields out of this read; only app_private.member_hr_profile shows them, to hr.';

create trigger _100_touch_version before update on app.members for each row execute function app_private.tg__touch_version();

grant select,insert,delete,update on table app.members to svc_owner;
grant select,insert,delete,update on table app.members to svc_worker;
grant select,insert,delete,update on table app.members to svc_admin;

grant select(organization_id) on table app.members to svc_api;

grant select(id) on table app.members to svc_api;

grant select(display_name) on table app.members to svc_api;

grant select(status) on table app.members to svc_api;

grant select(svc_roles) on table app.members to svc_api;

grant select(job_title) on table app.members to svc_api;

grant select(timezone) on table app.members to svc_api;

grant select(created_at) on table app.members to svc_api;

grant select(updated_at) on table app.members to svc_api;

grant select(version) on table app.members to svc_api;

-- table app_private.context_keys

create table app_private.context_keys (
    id boolean default true not null,
    inner_key bytea not null,
    outer_key bytea not null,
    constraint context_keys_one_row check (id)
);

alter table only app_private.context_keys
    add constraint context_keys_pkey primary key (id);

grant select on table app_private.context_keys to svc_gate;

-- view api.members

create view api.members with (security_invoker='false') as
 select m.organization_id,
    m.id,
    m.display_name,
    m.status,
    m.svc_roles,
    m.version,
    ((jsonb_build_object('object', 'member', 'id', m.id, 'display_name', m.display_name, 'email', m.id, 'status', m.status) ||
        case
            when (select app.has_any_role('{member,manager,hr}'::text[])) then jsonb_build_object('svc_roles', to_jsonb(m.svc_roles), 'job_title', m.job_title, 'timezone', m.timezone)
            else '{}'::jsonb
        end) ||
        case
            when (select app.has_role('hr'::text)) then app_private.member_hr_profile(m.organization_id, m.id)
            else '{}'::jsonb
        end) as doc
   from app.members m;

alter view api.members owner to svc_api;

grant select on table api.members to svc_runtime;
grant select on table api.members to svc_owner;

-- view api.organization

create view api.organization with (security_invoker='false') as
 select o.id,
    o.version,
    jsonb_build_object('object', 'organization', 'id', o.id, 'name', o.name, 'status', o.status, 'timezone', o.timezone, 'currency', o.currency, 'locale', o.locale, 'created_at', app_private.iso_timestamp(o.created_at), 'links', jsonb_build_object('web', o.web_url)) as doc
   from app.organizations o;

alter view api.organization owner to svc_api;

grant select on table api.organization to svc_runtime;
grant select on table api.organization to svc_owner;

-- function api.begin_request(text, text, text[], boolean)

create function api.begin_request(p_organization_id text, p_token_sha256 text, p_required_roles text[] default null::text[], p_context boolean default true) returns table(outcome text, organization_id text, svc_roles text[], principal jsonb)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  c record;
  v_found boolean;
  -- An assignment, not PERFORM: PL/pgSQL evaluates it without running a query.
  v_scope text;
begin
  if p_token_sha256 is null or p_token_sha256 !~ '^[0-9a-f]{64}$' then
    outcome := 'invalid_token';
    return next;
    return;
  end if;
  -- svc_gate's policies show this organization's tokens, clients and secrets, for this read.
  v_scope := set_config('svc.gate_organization', coalesce(p_organization_id, ''), true);
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
  v_found := found;
  v_scope := set_config('svc.gate_organization', '', true);
  if not v_found or c.status = 'deleted' or not c.secret_active then
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

alter function api.begin_request(p_organization_id text, p_token_sha256 text, p_required_roles text[], p_context boolean) owner to svc_gate;

comment on function api.begin_request(p_organization_id text, p_token_sha256 text, p_required_roles text[], p_context boolean) is 'A request''s first statement: the client of the access token whose SHA-256 (hex) is p_token_sha256, in organization p_organization_id; on ok, the signed request context (unless p_context is false).';

revoke all on function api.begin_request(p_organization_id text, p_token_sha256 text, p_required_roles text[], p_context boolean) from public;
grant execute on function api.begin_request(p_organization_id text, p_token_sha256 text, p_required_roles text[], p_context boolean) to svc_runtime;
grant execute on function api.begin_request(p_organization_id text, p_token_sha256 text, p_required_roles text[], p_context boolean) to svc_owner;
grant execute on function api.begin_request(p_organization_id text, p_token_sha256 text, p_required_roles text[], p_context boolean) to svc_worker;

-- function api.command_answered(bigint)

create function api.command_answered(p_rows bigint) returns void
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if p_rows is distinct from 1 then
    perform app_private.raise('SV500', 'COMMAND_ROW_COUNT', format('the command answered %s rows instead of one', p_rows));
  end if;
end
$$;

alter function api.command_answered(p_rows bigint) owner to svc_api;

comment on function api.command_answered(p_rows bigint) is 'Raises SV500 COMMAND_ROW_COUNT (a 500: our bug) unless a command run under a fresh Idempotency-Key claim answered exactly one row, checked in the statement that stores that row as the key''s response; otherwise the transaction would commit the key claimed with no response, or with one other than the response sent. It reads and writes nothing; it is an svc_api definer like every api command, through which svc_runtime reaches app_private.raise, which it may not execute.';

revoke all on function api.command_answered(p_rows bigint) from public;
grant execute on function api.command_answered(p_rows bigint) to svc_runtime;
grant execute on function api.command_answered(p_rows bigint) to svc_owner;
grant execute on function api.command_answered(p_rows bigint) to svc_worker;

-- function api.in_organization(text, text, text[])

create function api.in_organization(p_organization_id text, p_statement text, p_arguments text[]) returns setof record
    language plpgsql
    as $$
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

alter function api.in_organization(p_organization_id text, p_statement text, p_arguments text[]) owner to svc_owner;

comment on function api.in_organization(p_organization_id text, p_statement text, p_arguments text[]) is 'Runs one statement of a request (its parameters are $1[n]) where its organization''s rows are: on Citus, delegated to that worker. Returns the statement''s rows.';

revoke all on function api.in_organization(p_organization_id text, p_statement text, p_arguments text[]) from public;
grant execute on function api.in_organization(p_organization_id text, p_statement text, p_arguments text[]) to svc_runtime;
grant execute on function api.in_organization(p_organization_id text, p_statement text, p_arguments text[]) to svc_worker;

-- function api.in_organization_count(text, text, text[])

create function api.in_organization_count(p_organization_id text, p_statement text, p_arguments text[]) returns bigint
    language plpgsql
    as $$
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

alter function api.in_organization_count(p_organization_id text, p_statement text, p_arguments text[]) owner to svc_owner;

comment on function api.in_organization_count(p_organization_id text, p_statement text, p_arguments text[]) is 'Runs one statement of a request that returns no rows (its parameters are $1[n]), where its organization''s rows are; returns its row count.';

revoke all on function api.in_organization_count(p_organization_id text, p_statement text, p_arguments text[]) from public;
grant execute on function api.in_organization_count(p_organization_id text, p_statement text, p_arguments text[]) to svc_runtime;
grant execute on function api.in_organization_count(p_organization_id text, p_statement text, p_arguments text[]) to svc_worker;

-- function api.members(text)

create function api.members(p_id text default null::text) returns setof api.members
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
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
$_$;

alter function api.members(p_id text) owner to svc_api;

comment on function api.members(p_id text) is 'The rows of view api.members for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

revoke all on function api.members(p_id text) from public;
grant execute on function api.members(p_id text) to svc_runtime;
grant execute on function api.members(p_id text) to svc_owner;
grant execute on function api.members(p_id text) to svc_worker;

-- function api.organization(text)

create function api.organization(p_id text default null::text) returns setof api.organization
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
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
$_$;

alter function api.organization(p_id text) owner to svc_api;

comment on function api.organization(p_id text) is 'The rows of view api.organization for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

revoke all on function api.organization(p_id text) from public;
grant execute on function api.organization(p_id text) to svc_runtime;
grant execute on function api.organization(p_id text) to svc_owner;
grant execute on function api.organization(p_id text) to svc_worker;

-- function api.require_any_role(text[], text)

create function api.require_any_role(p_roles text[], p_what text) returns void
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if not app.has_any_role(p_roles) then
    perform app_private.raise('SVR03', 'ROLE_REQUIRED',
      format('%s requires one of the Roles: %s', p_what, array_to_string(p_roles, ', ')));
  end if;
end
$$;

alter function api.require_any_role(p_roles text[], p_what text) owner to svc_api;

comment on function api.require_any_role(p_roles text[], p_what text) is 'Raises SVR03 ROLE_REQUIRED (403), naming the operation and the Roles it needs, unless the signed request context''s Roles include one of p_roles: commands call it first to enforce the spec''s Role matrix before they read or write anything. It reads no tenant row and judges only the context, which app.has_any_role checks through app_private.context_ok(), so a forged or copied context holds no Role; it runs as svc_api, like every api command, and raises through app_private.raise, which svc_runtime may not execute.';

revoke all on function api.require_any_role(p_roles text[], p_what text) from public;
grant execute on function api.require_any_role(p_roles text[], p_what text) to svc_runtime;
grant execute on function api.require_any_role(p_roles text[], p_what text) to svc_owner;
grant execute on function api.require_any_role(p_roles text[], p_what text) to svc_worker;

-- function api.service_schema_version()

create function api.service_schema_version() returns text
    language sql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$ select max(version)::text from public.schema_migrations $$;

alter function api.service_schema_version() owner to svc_gate;

comment on function api.service_schema_version() is 'The newest applied migration version (the greatest in public.schema_migrations), which /ready compares with the code''s: the service answers 503 while they differ. It runs as svc_gate because svc_runtime has no privilege on public.schema_migrations; it answers a version and no tenant data, so it needs no request context.';

revoke all on function api.service_schema_version() from public;
grant execute on function api.service_schema_version() to svc_runtime;
grant execute on function api.service_schema_version() to svc_api;
grant execute on function api.service_schema_version() to svc_owner;
grant execute on function api.service_schema_version() to svc_worker;

-- dbmate's record of the migrations, made before the first one runs.
grant select on table public.schema_migrations to svc_gate;

-- function control.member_add(text, text, text, text[], text, text, text, text, date, text)

create function control.member_add(p_org text, p_email text, p_display_name text, p_roles text[] default '{member}'::text[], p_job_title text default null::text, p_timezone text default null::text, p_status text default 'active'::text, p_employee_number text default null::text, p_hire_date date default null::date, p_employment_type text default null::text) returns text
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

revoke all on function control.member_add(p_org text, p_email text, p_display_name text, p_roles text[], p_job_title text, p_timezone text, p_status text, p_employee_number text, p_hire_date date, p_employment_type text) from public;
grant execute on function control.member_add(p_org text, p_email text, p_display_name text, p_roles text[], p_job_title text, p_timezone text, p_status text, p_employee_number text, p_hire_date date, p_employment_type text) to svc_admin;

-- function control.member_set_status(text, text, text)

create function control.member_set_status(p_org text, p_email text, p_status text) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  update app.members set status = p_status where organization_id = p_org and id = app_private.normalize_email(p_email);
  perform app_private.require_found(found, 'MEMBER_NOT_FOUND', p_email);
end
$$;

revoke all on function control.member_set_status(p_org text, p_email text, p_status text) from public;
grant execute on function control.member_set_status(p_org text, p_email text, p_status text) to svc_admin;

-- function control.org_create(text, text, text, text, text, text)

create function control.org_create(p_name text, p_plan text, p_timezone text, p_currency text, p_locale text, p_web_base_url text default 'https://app.svc.example'::text) returns text
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_id text := app_private.new_id('org');
begin
  perform app_private.assert_timezone(p_timezone);
  insert into app.organizations (id, name, plan, timezone, currency, locale, web_url)
  values (v_id, p_name, p_plan, p_timezone, upper(p_currency), p_locale, rtrim(p_web_base_url, '/') || '/o/' || v_id);
  return v_id;
end
$$;

revoke all on function control.org_create(p_name text, p_plan text, p_timezone text, p_currency text, p_locale text, p_web_base_url text) from public;
grant execute on function control.org_create(p_name text, p_plan text, p_timezone text, p_currency text, p_locale text, p_web_base_url text) to svc_admin;

-- function control.org_set_plan(text, text)

create function control.org_set_plan(p_org text, p_plan text) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  update app.organizations set plan = p_plan where id = p_org;
  perform app_private.require_found(found, 'ORGANIZATION_NOT_FOUND', p_org);
end
$$;

revoke all on function control.org_set_plan(p_org text, p_plan text) from public;
grant execute on function control.org_set_plan(p_org text, p_plan text) to svc_admin;

-- function control.org_set_policy(text, boolean, boolean, integer)

create function control.org_set_policy(p_org text, p_show_approver_identities boolean default null::boolean, p_hr_may_read_time_entries boolean default null::boolean, p_time_entry_future_days integer default null::integer) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  update app.organizations
     set show_approver_identities = coalesce(p_show_approver_identities, show_approver_identities),
         hr_may_read_time_entries = coalesce(p_hr_may_read_time_entries, hr_may_read_time_entries),
         time_entry_future_days = coalesce(p_time_entry_future_days, time_entry_future_days)
   where id = p_org;
  perform app_private.require_found(found, 'ORGANIZATION_NOT_FOUND', p_org);
end
$$;

revoke all on function control.org_set_policy(p_org text, p_show_approver_identities boolean, p_hr_may_read_time_entries boolean, p_time_entry_future_days integer) from public;
grant execute on function control.org_set_policy(p_org text, p_show_approver_identities boolean, p_hr_may_read_time_entries boolean, p_time_entry_future_days integer) to svc_admin;

-- function control.org_set_status(text, text)

create function control.org_set_status(p_org text, p_status text) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  update app.organizations set status = p_status where id = p_org;
  perform app_private.require_found(found, 'ORGANIZATION_NOT_FOUND', p_org);
end
$$;

revoke all on function control.org_set_status(p_org text, p_status text) from public;
grant execute on function control.org_set_status(p_org text, p_status text) to svc_admin;

-- rows of app_private.context_keys

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

revoke create on schema api, app, app_private, control, reporting, skills from svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
