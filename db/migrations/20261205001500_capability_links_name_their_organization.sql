-- migrate:up

/** Issue 37: upload and download links name their organization.
 *
 * A capability URL is its own credential: no access token says whose it is. Its token now names
 * the organization after the resource's id (`upl_….org_….<mac>`, `fil_….org_….apic_….<expiry>.<mac>`,
 * `rrun_….org_….apic_….<expiry>.<mac>`), covered by the signature like the rest: the API routes
 * the link's statements to that organization's worker on Citus, and every lookup names it.
 *
 * The begin functions take the link's token with its signature replaced by the signature's SHA-256
 * (hex), never the signature: a statement's text, arguments included, is what pg_stat_activity shows
 * and what a delegated call carries to its worker, and a link is a bearer credential for its hour. Links
 * made before this migration (the old shape, without the organization) keep working on one server
 * until they expire (minutes to an hour); a cluster starts with these migrations and never made one. */

create or replace function app_private.file_upload_doc(u app.file_uploads)
returns jsonb
language sql stable
set search_path = pg_catalog
as $$
  select jsonb_build_object('object', 'file_upload', 'id', u.id, 'status', u.status,
    'upload_token', u.id || '.' || u.organization_id || '.' || app_private.capability_mac('upload', u.id || '.' || u.organization_id),
    'expires_at', app_private.iso_timestamp(u.expires_at),
    'name', u.name, 'content_type', u.content_type, 'size_bytes', u.size_bytes, 'sha256', u.sha256,
    'linked_resource', jsonb_build_object('type', u.linked_resource_type, 'id', u.linked_resource_id),
    'limits', (select jsonb_build_object('max_size_bytes', p.max_size_bytes, 'allowed_content_types', to_jsonb(p.allowed_content_types))
                 from app_private.file_policy(u.organization_id) p),
    'file_id', u.file_id)
$$;

create or replace function api.file_upload_begin(p_token text)
returns table(outcome text, upload_id text, size_bytes bigint, content_type text, chunk_size integer, expires_at timestamptz)
language plpgsql security definer
set search_path = pg_catalog
as $$
declare
  v_parts text[] := string_to_array(p_token, '.');
  v_id text := v_parts[1];
  v_org text;
  u app.file_uploads;
begin
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
$$;

create or replace function api.file_download_create(p_id text, p_lifetime_seconds integer)
returns jsonb
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  f app.files := app_private.file_for(p_id, false);
  v_expires bigint := extract(epoch from now())::bigint + p_lifetime_seconds;
  v_message text := f.id || '.' || f.organization_id || '.' || app.current_client_id() || '.' || v_expires;
begin
  if f.status = 'rejected' then
    perform app_private.raise('SVC09', 'FILE_SCAN_FAILED', format('%s was rejected: %s', f.id, f.rejection_detail));
  elsif f.status = 'processing' then
    perform app_private.raise('SVC09', 'CONFLICT', format('%s is still being checked; download it once it is ready', f.id));
  elsif f.status = 'archived' then
    perform app_private.raise('SVC09', 'CONFLICT', format('%s is archived', f.id));
  end if;
  return jsonb_build_object('object', 'file_download', 'file_id', f.id,
    'download_token', v_message || '.' || app_private.capability_mac('download', v_message),
    'expires_at', app_private.iso_timestamp(to_timestamp(v_expires)));
end
$$;

/** A download link's parts: the resource's id, its organization, the client and the expiry, once
 * the signature over them (with p_purpose) holds; nothing otherwise. The old shape (no organization)
 * is read on one server only, its organization the client's. */
create function app_private.download_link(p_token text, p_prefix text, p_purpose text,
  out id text, out organization_id text, out client_id text, out expires bigint)
returns record
language plpgsql stable
set search_path = pg_catalog
as $$
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
$$;
revoke execute on function app_private.download_link(text, text, text) from public;

create or replace function api.file_download_begin(p_token text)
returns table(outcome text, file_id text, name text, content_type text, size_bytes bigint, sha256 text, upload_id text, chunk_size integer)
language plpgsql security definer
set search_path = pg_catalog
as $$
declare
  l record;
  f app.files;
begin
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

create or replace function api.report_download_create(p_report_id text, p_run_id text, p_lifetime_seconds integer)
returns jsonb
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  v__organization_id text := app.current_organization_id();
  v_expires bigint := extract(epoch from now())::bigint + p_lifetime_seconds;
  v_message text := p_run_id || '.' || v__organization_id || '.' || app.current_client_id() || '.' || v_expires;
begin
  perform api.report_results_ready(p_report_id, p_run_id);
  return jsonb_build_object('object', 'report_download', 'report_id', p_report_id, 'run_id', p_run_id,
    'format', (select r.format from app.report_runs r where r.organization_id = v__organization_id and r.id = p_run_id),
    'download_token', v_message || '.' || app_private.capability_mac('report-download', v_message),
    'expires_at', app_private.iso_timestamp(to_timestamp(v_expires)));
end
$$;

create or replace function api.report_download_begin(p_token text)
returns table(outcome text, run_id text, report_id text, format text, row_count integer, columns text[], numeric_columns text[])
language plpgsql security definer
set search_path = pg_catalog
as $$
declare
  l record;
  r app.report_runs;
begin
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

/** A ready file's chunks, for a download: the file as the client may read it (api.files), then
 * its bytes, each read naming the organization (on Citus a join on a column reads every shard). */
create or replace function api.file_chunks(p_file_id text, p_from integer, p_to integer)
returns table(seq integer, data bytea)
language plpgsql stable security definer
set search_path = pg_catalog
as $$
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

/** On Citus: the helper exists on every worker, and the begin functions read the views' functions
 * (app_private.citus_read_view_functions, migration 20261205001300). */
do $$
begin
  if exists (select from pg_extension where extname = 'citus') then
    perform create_distributed_function('app_private.download_link(text, text, text)'::regprocedure);
  end if;
end
$$;
select app_private.citus_read_view_functions(array['api.file_download_begin(text)', 'api.report_download_begin(text)',
  'api.file_chunks(text, integer, integer)']::regprocedure[]);

-- migrate:down
