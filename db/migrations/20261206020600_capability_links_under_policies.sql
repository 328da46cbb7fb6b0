-- migrate:up

/** The beginnings of capability links under the gate's policies: no superuser behind an upload or
 * download link.
 *
 * A link (upload, file download, report download) is a credential: it names its organization
 * under its signature, and it is checked before any request context exists, as a token is. Its
 * three beginnings (api.file_upload_begin, api.file_download_begin, api.report_download_begin)
 * belonged to the migrating role, a superuser, so no policy applied inside them. They now belong
 * to svc_gate, the credential path's owner, and read under the gate's policies: once a link's
 * signature holds, the organization it names is the one the gate may read
 * (`svc.gate_organization`, set by app_private.download_link or by file_upload_begin after the
 * check, and restored when the beginning returns: each has that setting as its own); once the link
 * has opened its client's context, the gate reads that context's organization. So a beginning with
 * a wrong WHERE reads nothing of another organization. New here for svc_gate: files, uploads and
 * report runs of that organization, and the report catalogue.
 *
 * Links of the older shape, which do not name their organization, are no longer read: their branch
 * looked the organization up by id across every tenant, which no policy can scope. They answer not
 * found; they lived five minutes or an hour by default, and this release makes none of them. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

-- The report catalogue, a reference table on Citus, first: Citus refuses DDL on a reference table
-- after parallel DDL on a distributed one in the same transaction.
grant select on table app_private.report_definitions to svc_gate;
grant select on table app.files, app.report_runs to svc_gate;
grant select, update (status) on table app.file_uploads to svc_gate;
-- A download link's file or report run is read once the link has opened its client's context (the
-- signed context, as every policy reads it); an upload link's upload before, to find that client.
create policy "The gate reads files a link opened" on app.files
  for select to svc_gate using (organization_id = app.current_organization_id());
create policy "The gate reads uploads a link names" on app.file_uploads
  for select to svc_gate
  using (organization_id = current_setting('svc.gate_organization', true) or organization_id = app.current_organization_id());
-- An upload link takes its upload's row lock (FOR UPDATE applies the update policy too).
create policy "The gate locks uploads a link names" on app.file_uploads
  for update to svc_gate using (organization_id = current_setting('svc.gate_organization', true));
create policy "The gate reads report runs a link opened" on app.report_runs
  for select to svc_gate using (organization_id = app.current_organization_id());
grant select on api.files, api.report_runs to svc_gate;
do $$
begin
  -- On Citus a beginning reads the shard group's copies through these functions.
  if to_regprocedure('api.files(text)') is not null then
    grant execute on function api.files(text) to svc_gate;
  end if;
  if to_regprocedure('api.report_runs(text)') is not null then
    grant execute on function api.report_runs(text) to svc_gate;
  end if;
end
$$;
grant execute on function app_private.download_link(text, text, text), app_private.begin_delivery_context(text, text),
  app_private.refuse_on_coordinator(text), app_private.raise(text, text, text, text) to svc_gate;
-- A view's functions, its policies' included, run with the privileges of the one reading it: what
-- svc_runtime may call to read an api view, the gate may call to read api.files and api.report_runs.
do $$
declare
  f regprocedure;
begin
  for f in select p.oid::regprocedure from pg_proc p join pg_namespace n on n.oid = p.pronamespace
            where n.nspname in ('app', 'app_private') and has_function_privilege('svc_runtime', p.oid, 'execute')
              and not has_function_privilege('svc_gate', p.oid, 'execute') loop
    execute format('grant execute on function %s to svc_gate', f);
  end loop;
end
$$;

-- A link's signature checked: the gate may read the organization it names.
create or replace function app_private.download_link(p_token text, p_prefix text, p_purpose text,
  out id text, out organization_id text, out client_id text, out expires bigint) returns record
  language plpgsql stable
  set search_path = pg_catalog, pg_temp
as $$
declare
  v_parts text[] := string_to_array(p_token, '.');
  v_scope text;
begin
  if p_token ~ ('^' || p_prefix || '_[A-Za-z0-9]{1,64}\.org_[A-Za-z0-9]{1,64}\.apic_[A-Za-z0-9]{1,64}\.[0-9]{1,12}\.[0-9a-f]{64}$')
     and v_parts[5] = encode(sha256(convert_to(app_private.capability_mac(p_purpose, array_to_string(v_parts[1:4], '.')), 'UTF8')), 'hex') then
    id := v_parts[1];
    organization_id := v_parts[2];
    client_id := v_parts[3];
    expires := v_parts[4]::bigint;
    -- Its caller, a beginning owned by svc_gate, has this setting as its own: restored when it returns.
    v_scope := set_config('svc.gate_organization', organization_id, true);
  end if;
end
$$;
comment on function app_private.download_link(text, text, text) is
  'A download link''s parts once its signature holds (nulls otherwise); sets svc.gate_organization to the organization it names, for the beginning that called it.';

create or replace function api.file_upload_begin(p_token text)
  returns table(outcome text, upload_id text, size_bytes bigint, content_type text, chunk_size integer, expires_at timestamp with time zone)
  language plpgsql security definer
  set search_path = pg_catalog, pg_temp
as $$
declare
  v_parts text[] := string_to_array(p_token, '.');
  v_id text := v_parts[1];
  v_org text := v_parts[2];
  v_scope text;
  u app.file_uploads;
begin
  perform app_private.refuse_on_coordinator('api.file_upload_begin(text)');
  outcome := 'not_found';
  if p_token !~ '^upl_[A-Za-z0-9]{1,64}\.org_[A-Za-z0-9]{1,64}\.[0-9a-f]{64}$'
     or v_parts[3] <> encode(sha256(convert_to(app_private.capability_mac('upload', v_id || '.' || v_org), 'UTF8')), 'hex') then
    return next;
    return;
  end if;
  -- The signature holds: the gate may read the organization it names (restored on return).
  v_scope := set_config('svc.gate_organization', v_org, true);
  select * into u from app.file_uploads x where x.organization_id = v_org and x.id = v_id for update nowait;
  if not found then
    outcome := 'not_found';
  elsif u.status <> 'pending' then
    outcome := 'used';
  elsif u.expires_at <= now() then
    outcome := 'expired';
  elsif not app_private.begin_delivery_context(v_org, u.created_by_client_id) then
    outcome := 'client_inactive';
  else
    outcome := 'ok';
    upload_id := u.id;
    size_bytes := u.size_bytes;
    content_type := u.content_type;
    chunk_size := u.chunk_size;
    expires_at := u.expires_at;
  end if;
  return next;
end
$$;

do $$
declare
  f regprocedure;
begin
  foreach f in array array['api.file_upload_begin(text)', 'api.file_download_begin(text)', 'api.report_download_begin(text)']::regprocedure[] loop
    execute format('alter function %s owner to svc_gate', f);
    execute format('alter function %s set svc.gate_organization = %L', f, '');
  end loop;
end
$$;

-- migrate:down
set local lock_timeout = '3s';
set local statement_timeout = '60s';
do $$
declare
  f regprocedure;
begin
  foreach f in array array['api.file_upload_begin(text)', 'api.file_download_begin(text)', 'api.report_download_begin(text)']::regprocedure[] loop
    execute format('alter function %s owner to %I', f, current_user);
    execute format('alter function %s reset svc.gate_organization', f);
  end loop;
end
$$;
drop policy "The gate reads files a link opened" on app.files;
drop policy "The gate reads uploads a link names" on app.file_uploads;
drop policy "The gate locks uploads a link names" on app.file_uploads;
drop policy "The gate reads report runs a link opened" on app.report_runs;
revoke select on table app.files, app.report_runs, app_private.report_definitions from svc_gate;
revoke select, update (status) on table app.file_uploads from svc_gate;
revoke select on api.files, api.report_runs from svc_gate;
do $$
begin
  if to_regprocedure('api.files(text)') is not null then
    revoke execute on function api.files(text) from svc_gate;
  end if;
  if to_regprocedure('api.report_runs(text)') is not null then
    revoke execute on function api.report_runs(text) from svc_gate;
  end if;
end
$$;
revoke execute on function app_private.download_link(text, text, text), app_private.begin_delivery_context(text, text),
  app_private.refuse_on_coordinator(text), app_private.raise(text, text, text, text) from svc_gate;
do $$
declare
  f regprocedure;
begin
  foreach f in array array['app.current_organization_id()', 'app.current_client_id()', 'app.current_roles()', 'app.has_role(text)',
    'app.has_any_role(text[])', 'app_private.money_text(numeric,integer)', 'app_private.normalize_email(text)',
    'app_private.may_read_internal_notes()', 'app_private.wire_json(jsonb)', 'app_private.readable_custom_fields(text,text,jsonb)',
    'app_private.may_read_time_entries()', 'app_private.integration_visible(text)', 'app_private.event_resource_visible(text,text,text)',
    'app_private.iso_timestamp(timestamp with time zone)', 'app_private.new_id(text)', 'app_private.may_read_tickets()',
    'app_private.member_hr_profile(text,text)']::text[] loop
    execute format('revoke execute on function %s from svc_gate', f);
  end loop;
  for f in select p.oid::regprocedure from pg_proc p
            where p.oid in (to_regprocedure('app_private.shard_views_current(bigint)'), to_regprocedure('app_private.statement_on_shards(text,text)')) loop
    execute format('revoke execute on function %s from svc_gate', f);
  end loop;
end
$$;
-- The bodies of the previous release (the links of the old shape read again on one server).
CREATE OR REPLACE FUNCTION app_private.download_link(p_token text, p_prefix text, p_purpose text, OUT id text, OUT organization_id text, OUT client_id text, OUT expires bigint) RETURNS record
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_parts text[] := string_to_array(p_token, '.');
begin
  if p_token ~ ('^' || p_prefix || '_[A-Za-z0-9]{1,64}\.org_[A-Za-z0-9]{1,64}\.apic_[A-Za-z0-9]{1,64}\.[0-9]{1,12}\.[0-9a-f]{64}$') then
    if v_parts[5] = encode(sha256(convert_to(app_private.capability_mac(p_purpose, array_to_string(v_parts[1:4], '.')), 'UTF8')), 'hex') then
      id := v_parts[1];
      organization_id := v_parts[2];
      client_id := v_parts[3];
      expires := v_parts[4]::bigint;
    end if;
  elsif p_token ~ ('^' || p_prefix || '_[A-Za-z0-9]{1,64}\.apic_[A-Za-z0-9]{1,64}\.[0-9]{1,12}\.[0-9a-f]{64}$')
        and not exists (select from pg_extension where extname = 'citus') then
    if v_parts[4] = encode(sha256(convert_to(app_private.capability_mac(p_purpose, array_to_string(v_parts[1:3], '.')), 'UTF8')), 'hex') then
      id := v_parts[1];
      client_id := v_parts[2];
      expires := v_parts[3]::bigint;
      select c.organization_id into organization_id from app.api_clients c where c.id = v_parts[2];
    end if;
  end if;
end
$_$;
CREATE OR REPLACE FUNCTION api.file_upload_begin(p_token text) RETURNS TABLE(outcome text, upload_id text, size_bytes bigint, content_type text, chunk_size integer, expires_at timestamp with time zone)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_parts text[] := string_to_array(p_token, '.');
  v_id text := v_parts[1];
  v_org text;
  u app.file_uploads;
begin
  perform app_private.refuse_on_coordinator('api.file_upload_begin(text)');
  outcome := 'not_found';
  if p_token ~ '^upl_[A-Za-z0-9]{1,64}\.org_[A-Za-z0-9]{1,64}\.[0-9a-f]{64}$' then
    if v_parts[3] <> encode(sha256(convert_to(app_private.capability_mac('upload', v_id || '.' || v_parts[2]), 'UTF8')), 'hex') then
      return next;
      return;
    end if;
    v_org := v_parts[2];
  elsif p_token ~ '^upl_[A-Za-z0-9]{1,64}\.[0-9a-f]{64}$'
        and not exists (select from pg_extension where extname = 'citus') then
    -- A link made before links named their organization (one server).
    if v_parts[2] <> encode(sha256(convert_to(app_private.capability_mac('upload', v_id), 'UTF8')), 'hex') then
      return next;
      return;
    end if;
    select x.organization_id into v_org from app.file_uploads x where x.id = v_id;
  else
    return next;
    return;
  end if;
  select * into u from app.file_uploads x where x.organization_id = v_org and x.id = v_id for update nowait;
  if not found then
    outcome := 'not_found';
  elsif u.status <> 'pending' then
    outcome := 'used';
  elsif u.expires_at <= now() then
    outcome := 'expired';
  elsif not app_private.begin_delivery_context(v_org, u.created_by_client_id) then
    outcome := 'client_inactive';
  else
    outcome := 'ok';
    upload_id := u.id;
    size_bytes := u.size_bytes;
    content_type := u.content_type;
    chunk_size := u.chunk_size;
    expires_at := u.expires_at;
  end if;
  return next;
end
$_$;
comment on function app_private.download_link(text, text, text) is null;
