-- migrate:up

/** Baseline (issue 38), area 8 of 15. Files: uploads in chunks, contents, scanning, links and download tokens.
 * The current definitions that migrations 20261122000100 to 20261205003400 built (git history before
 * the baseline), as pg_dump writes them; db/README.md says how they were made and compared. */
SET LOCAL check_function_bodies = false;
SET LOCAL client_min_messages = warning;
SELECT pg_catalog.set_config('search_path', '', true);

-- function api.file_archive(text)

CREATE FUNCTION api.file_archive(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  f app.files := app_private.file_for(p_id, true);
begin
  if f.status = 'processing' or f.status = 'rejected' then
    perform app_private.raise('SVC09', 'CONFLICT', format('%s is %s: only a ready file is archived', f.id, f.status));
  end if;
  if f.status = 'ready' then
    update app.files x set status = 'archived' where x.organization_id = f.organization_id and x.id = f.id;
  end if;
  return query select v.doc, v.version from api.files v where v.id = p_id;
end
$$;

ALTER FUNCTION api.file_archive(p_id text) OWNER TO svc_api;

-- function api.file_chunks(text, integer, integer)

CREATE FUNCTION api.file_chunks(p_file_id text, p_from integer, p_to integer) RETURNS TABLE(seq integer, data bytea)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION api.file_chunks(p_file_id text, p_from integer, p_to integer) OWNER TO svc_api;

-- function api.file_download_begin(text)

CREATE FUNCTION api.file_download_begin(p_token text) RETURNS TABLE(outcome text, file_id text, name text, content_type text, size_bytes bigint, sha256 text, upload_id text, chunk_size integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  l record;
  f app.files;
begin
  perform app_private.refuse_on_coordinator('api.file_download_begin(text)');
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

-- function api.file_download_create(text, integer)

CREATE FUNCTION api.file_download_create(p_id text, p_lifetime_seconds integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION api.file_download_create(p_id text, p_lifetime_seconds integer) OWNER TO svc_api;

-- function api.file_get(text)

CREATE FUNCTION api.file_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.file_for(p_id, false);
  return query select v.doc, v.version from api.files v where v.id = p_id;
end
$$;

ALTER FUNCTION api.file_get(p_id text) OWNER TO svc_api;

-- function api.file_upload_begin(text)

CREATE FUNCTION api.file_upload_begin(p_token text) RETURNS TABLE(outcome text, upload_id text, size_bytes bigint, content_type text, chunk_size integer, expires_at timestamp with time zone)
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

-- function api.file_upload_chunks(text, integer, text[])

CREATE FUNCTION api.file_upload_chunks(p_upload_id text, p_first_seq integer, VARIADIC p_base64 text[]) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
begin
  insert into app.file_chunks (organization_id, upload_id, seq, data)
  select v__organization_id, p_upload_id, p_first_seq + (d.n - 1)::integer, decode(d.data, 'base64')
    from unnest(p_base64) with ordinality d (data, n);
end
$$;

ALTER FUNCTION api.file_upload_chunks(p_upload_id text, p_first_seq integer, VARIADIC p_base64 text[]) OWNER TO svc_api;

-- function api.file_upload_complete(text)

CREATE FUNCTION api.file_upload_complete(p_upload_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  u app.file_uploads;
  v_file text;
begin
  select * into u from app.file_uploads x
   where x.organization_id = v__organization_id and x.id = p_upload_id for update;
  if not found then
    perform app_private.raise('SVN04', 'FILE_NOT_FOUND', format('no upload %s of your client', p_upload_id));
  end if;
  if u.status = 'completed' then
    return query select v.doc, v.version from api.files v where v.id = u.file_id;
    return;
  end if;
  if u.expires_at <= now() then
    perform app_private.raise('SVC09', 'UPLOAD_EXPIRED', format('upload %s expired at %s; start a new upload', u.id, app_private.iso_timestamp(u.expires_at)));
  end if;
  if u.status = 'pending' then
    perform app_private.raise('SVC09', 'CONFLICT', 'nothing has been uploaded yet: PUT the bytes to the upload URL first');
  end if;
  if u.received_size_bytes <> u.size_bytes or u.received_sha256 <> u.sha256 then
    perform app_private.raise('SVV22', 'CHECKSUM_MISMATCH',
      format('the stored bytes (%s bytes, SHA-256 %s) are not the declared ones (%s bytes, SHA-256 %s); start a new upload',
             u.received_size_bytes, u.received_sha256, u.size_bytes, u.sha256));
  end if;
  if not u.content_type_verified then
    perform app_private.raise('SVV22', 'CONTENT_TYPE_NOT_ALLOWED',
      format('the bytes are %s, not the declared %s; start a new upload', coalesce(u.detected_content_type, 'of an unknown type'), u.content_type));
  end if;
  insert into app.files (organization_id, name, content_type, size_bytes, sha256, status, linked_resource_type, linked_resource_id,
                         upload_id, scan_status, created_by_client_id)
  values (u.organization_id, u.name, u.content_type, u.size_bytes, u.sha256, 'processing', u.linked_resource_type, u.linked_resource_id,
          u.id, 'pending', app.current_client_id())
  returning id into v_file;
  update app.file_uploads x set status = 'completed', file_id = v_file where x.organization_id = u.organization_id and x.id = u.id;
  perform app_private.queue_file_scan(v_file);
  return query select v.doc, v.version from api.files v where v.id = v_file;
end
$$;

ALTER FUNCTION api.file_upload_complete(p_upload_id text) OWNER TO svc_api;

-- function api.file_upload_create(jsonb, integer)

CREATE FUNCTION api.file_upload_create(p_body jsonb, p_lifetime_seconds integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := app.current_organization_id();
  v_type text := p_body #>> '{linked_resource,type}';
  v_rid text := p_body #>> '{linked_resource,id}';
  v_policy record;
  u app.file_uploads;
begin
  if v_org is null or not app_private.linked_resource_visible(v_org, v_type, v_rid) then
    perform app_private.raise('SVN04', 'LINKED_RESOURCE_NOT_FOUND', format('no %s %s in your organization', coalesce(v_type, 'resource'), v_rid), '/linked_resource/id');
  end if;
  if not app.has_any_role(app_private.file_write_roles(v_type)) then
    perform app_private.raise('SVR04', 'FILE_ACCESS_DENIED',
      format('uploading to a %s needs one of the Roles %s', v_type, array_to_string(app_private.file_write_roles(v_type), ', ')));
  end if;
  select * into v_policy from app_private.file_policy(v_org);
  if not (p_body ->> 'content_type') = any (v_policy.allowed_content_types) then
    perform app_private.raise('SVV22', 'CONTENT_TYPE_NOT_ALLOWED',
      format('%s is not permitted here; permitted: %s', p_body ->> 'content_type', array_to_string(v_policy.allowed_content_types, ', ')), '/content_type');
  end if;
  if (p_body ->> 'size_bytes')::bigint > v_policy.max_size_bytes then
    perform app_private.raise('SVV22', 'FILE_TOO_LARGE',
      format('%s bytes is over the limit of %s bytes', p_body ->> 'size_bytes', v_policy.max_size_bytes), '/size_bytes');
  end if;
  insert into app.file_uploads (organization_id, name, content_type, size_bytes, sha256, linked_resource_type, linked_resource_id,
                                created_by_client_id, expires_at)
  values (v_org, p_body ->> 'name', p_body ->> 'content_type', (p_body ->> 'size_bytes')::bigint, lower(p_body ->> 'sha256'),
          v_type, v_rid, app.current_client_id(), now() + make_interval(secs => p_lifetime_seconds))
  returning * into u;
  return app_private.file_upload_doc(u);
end
$$;

ALTER FUNCTION api.file_upload_create(p_body jsonb, p_lifetime_seconds integer) OWNER TO svc_api;

-- function api.file_upload_finish(text, bigint, text, text, boolean)

CREATE FUNCTION api.file_upload_finish(p_upload_id text, p_size bigint, p_sha256 text, p_detected text, p_verified boolean) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  update app.file_uploads u
     set status = 'uploaded', received_size_bytes = p_size, received_sha256 = p_sha256,
         detected_content_type = p_detected, content_type_verified = p_verified
   where u.organization_id = v__organization_id and u.id = p_upload_id and u.status = 'pending';
  if not found then
    perform app_private.raise('SVC09', 'CONFLICT', 'the upload is no longer pending');
  end if;
end
$$;

ALTER FUNCTION api.file_upload_finish(p_upload_id text, p_size bigint, p_sha256 text, p_detected text, p_verified boolean) OWNER TO svc_api;

-- function api.file_upload_get(text)

CREATE FUNCTION api.file_upload_get(p_id text) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  u app.file_uploads;
begin
  -- The row into a variable first: on Citus a row passed whole inside the query is the shard's type.
  select * into u from app.file_uploads x where x.organization_id = v__organization_id and x.id = p_id;
  if not found then
    return null;
  end if;
  return app_private.file_upload_doc(u);
end
$$;

ALTER FUNCTION api.file_upload_get(p_id text) OWNER TO svc_api;

SET LOCAL default_tablespace = '';

SET LOCAL default_table_access_method = heap;

-- table app.files

CREATE TABLE app.files (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('fil'::text) NOT NULL,
    name text NOT NULL,
    content_type text NOT NULL,
    size_bytes bigint NOT NULL,
    sha256 text NOT NULL,
    status text DEFAULT 'ready'::text NOT NULL,
    linked_resource_type text NOT NULL,
    linked_resource_id text NOT NULL,
    retention text,
    created_by_client_id text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    upload_id text,
    scan_status text DEFAULT 'not_scanned'::text NOT NULL,
    scan_detail text,
    rejection_code text,
    rejection_detail text,
    legal_hold boolean DEFAULT false NOT NULL,
    archived_at timestamp with time zone,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT files_content_type_format CHECK ((content_type ~ '^[a-z]+/[a-z0-9.+-]+$'::text)),
    CONSTRAINT files_linked_resource_type_valid CHECK ((linked_resource_type = ANY (ARRAY['project'::text, 'task'::text, 'invoice'::text, 'ticket'::text]))),
    CONSTRAINT files_name_length CHECK (((length(name) >= 1) AND (length(name) <= 255))),
    CONSTRAINT files_rejected_has_code CHECK (((status = 'rejected'::text) = (rejection_code IS NOT NULL))),
    CONSTRAINT files_rejection_code_valid CHECK ((rejection_code = 'FILE_SCAN_FAILED'::text)),
    CONSTRAINT files_retention_valid CHECK ((retention = 'financial_record'::text)),
    CONSTRAINT files_scan_status_valid CHECK ((scan_status = ANY (ARRAY['pending'::text, 'clean'::text, 'infected'::text, 'failed'::text, 'not_scanned'::text]))),
    CONSTRAINT files_sha256_format CHECK ((sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT files_size_positive CHECK ((size_bytes > 0)),
    CONSTRAINT files_status_valid CHECK ((status = ANY (ARRAY['processing'::text, 'ready'::text, 'rejected'::text, 'archived'::text])))
);

ALTER TABLE ONLY app.files FORCE ROW LEVEL SECURITY;

-- view api.files

CREATE VIEW api.files AS
 SELECT f.organization_id,
    f.id,
    f.status,
    f.linked_resource_type,
    f.linked_resource_id,
    f.content_type,
    f.created_at,
    jsonb_build_object('object', 'file', 'id', f.id, 'name', f.name, 'content_type', f.content_type, 'size_bytes', f.size_bytes, 'sha256', f.sha256, 'status', f.status, 'linked_resource', jsonb_build_object('type', f.linked_resource_type, 'id', f.linked_resource_id), 'scan', jsonb_build_object('status', f.scan_status, 'signature',
        CASE
            WHEN (f.scan_status = 'infected'::text) THEN f.scan_detail
            ELSE NULL::text
        END), 'rejection',
        CASE
            WHEN (f.status = 'rejected'::text) THEN jsonb_build_object('code', f.rejection_code, 'detail', f.rejection_detail)
            ELSE NULL::jsonb
        END, 'retention', jsonb_build_object('financial_record', (f.retention IS NOT NULL), 'legal_hold', f.legal_hold), 'archived_at', app_private.iso_timestamp(f.archived_at), 'created_at', app_private.iso_timestamp(f.created_at), 'updated_at', app_private.iso_timestamp(f.updated_at)) AS doc,
    NULL::integer AS version
   FROM app.files f;

ALTER TABLE api.files OWNER TO svc_api;

-- function api.files(text)

CREATE FUNCTION api.files(p_id text DEFAULT NULL::text) RETURNS SETOF api.files
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.files where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.files', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

ALTER FUNCTION api.files(p_id text) OWNER TO svc_api;

-- comment api.FUNCTION files(p_id text)

COMMENT ON FUNCTION api.files(p_id text) IS 'The rows of view api.files for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

-- function app_private.member_hr_profile(text, text)

CREATE FUNCTION app_private.member_hr_profile(p_org text, p_member_id text) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- view api.members

CREATE VIEW api.members WITH (security_invoker='false') AS
 SELECT m.organization_id,
    m.id,
    m.display_name,
    m.status,
    m.svc_roles,
    m.version,
    ((jsonb_build_object('object', 'member', 'id', m.id, 'display_name', m.display_name, 'email', m.id, 'status', m.status) ||
        CASE
            WHEN ( SELECT app.has_any_role('{member,manager,hr}'::text[]) AS has_any_role) THEN jsonb_build_object('svc_roles', to_jsonb(m.svc_roles), 'job_title', m.job_title, 'timezone', m.timezone)
            ELSE '{}'::jsonb
        END) ||
        CASE
            WHEN ( SELECT app.has_role('hr'::text) AS has_role) THEN app_private.member_hr_profile(m.organization_id, m.id)
            ELSE '{}'::jsonb
        END) AS doc
   FROM app.members m;

ALTER TABLE api.members OWNER TO svc_api;

-- function api.members(text)

CREATE FUNCTION api.members(p_id text DEFAULT NULL::text) RETURNS SETOF api.members
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.members where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.members', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

ALTER FUNCTION api.members(p_id text) OWNER TO svc_api;

-- comment api.FUNCTION members(p_id text)

COMMENT ON FUNCTION api.members(p_id text) IS 'The rows of view api.members for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

-- function app_private.default_file_content_types()

CREATE FUNCTION app_private.default_file_content_types() RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  select '{application/pdf,image/png,image/jpeg,image/gif,image/webp,text/plain,text/csv,application/json,application/zip,application/vnd.openxmlformats-officedocument.wordprocessingml.document,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet,application/vnd.openxmlformats-officedocument.presentationml.presentation}'::text[]
$$;

-- function app_private.download_link(text, text, text)

CREATE FUNCTION app_private.download_link(p_token text, p_prefix text, p_purpose text, OUT id text, OUT organization_id text, OUT client_id text, OUT expires bigint) RETURNS record
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

-- function app_private.file_for(text, boolean)

CREATE FUNCTION app_private.file_for(p_id text, p_write boolean) RETURNS app.files
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  f app.files;
  l record;
begin
  select * into f from app.files x where x.organization_id = v__organization_id and x.id = p_id;
  if not found then
    l := app_private.file_link(p_id);
    if l.linked_resource_type is null
       or not app_private.linked_resource_visible(v__organization_id, l.linked_resource_type, l.linked_resource_id) then
      perform app_private.raise('SVN04', 'FILE_NOT_FOUND', format('no file %s in your organization', p_id));
    end if;
    perform app_private.raise('SVR04', 'FILE_ACCESS_DENIED',
      format('the files of this %s are for the Roles %s', l.linked_resource_type,
             array_to_string(case when p_write then app_private.file_write_roles(l.linked_resource_type)
                                  else app_private.file_read_roles(l.linked_resource_type) end, ', ')));
  end if;
  if p_write and not app.has_any_role(app_private.file_write_roles(f.linked_resource_type)) then
    perform app_private.raise('SVR04', 'FILE_ACCESS_DENIED',
      format('the files of this %s are for the Roles %s', f.linked_resource_type,
             array_to_string(app_private.file_write_roles(f.linked_resource_type), ', ')));
  end if;
  return f;
end
$$;

ALTER FUNCTION app_private.file_for(p_id text, p_write boolean) OWNER TO svc_api;

-- function app_private.file_link(text)

CREATE FUNCTION app_private.file_link(p_id text, OUT linked_resource_type text, OUT linked_resource_id text) RETURNS record
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := app.current_organization_id();
begin
  select f.linked_resource_type, f.linked_resource_id into linked_resource_type, linked_resource_id
    from app.files f where f.organization_id = v_org and f.id = p_id;
end
$$;

-- function app_private.file_policy(text)

CREATE FUNCTION app_private.file_policy(p_org text, OUT max_size_bytes bigint, OUT allowed_content_types text[], OUT require_scan boolean) RETURNS record
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  select coalesce(p.max_size_bytes, 104857600), coalesce(p.allowed_content_types, app_private.default_file_content_types()),
         coalesce(p.require_scan, false)
    into max_size_bytes, allowed_content_types, require_scan
    from (select 1) one left join app.file_policies p on p.organization_id = p_org;
end
$$;

-- function app_private.file_read_roles(text)

CREATE FUNCTION app_private.file_read_roles(p_type text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select case p_type when 'invoice' then '{manager,finance}'::text[] when 'ticket' then '{member,manager,finance,hr}'::text[]
                         else '{member,manager}'::text[] end $$;

-- function app_private.file_readable(text)

CREATE FUNCTION app_private.file_readable(p_type text) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select case p_type when 'ticket' then app_private.may_read_tickets() else app.has_any_role(app_private.file_read_roles(p_type)) end $$;

-- function app_private.file_scan_load(text, text)

CREATE FUNCTION app_private.file_scan_load(p_organization_id text, p_file_id text) RETURNS TABLE(status text, organization_id text, upload_id text, size_bytes bigint, require_scan boolean)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return query
    select f.status, f.organization_id, f.upload_id, f.size_bytes, (app_private.file_policy(f.organization_id)).require_scan
      from app.files f where f.organization_id = p_organization_id and f.id = p_file_id;
end
$$;

-- function app_private.file_scan_record(text, text, text, text, boolean)

CREATE FUNCTION app_private.file_scan_record(p_organization_id text, p_file_id text, p_outcome text, p_detail text, p_required boolean) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  f app.files;
  v_reason text;
begin
  select * into f from app.files x where x.organization_id = p_organization_id and x.id = p_file_id for update;
  if not found or f.status <> 'processing' then
    return coalesce(f.status, 'missing');
  end if;
  if p_outcome = 'clean' or (p_outcome = 'not_scanned' and not p_required and not (app_private.file_policy(p_organization_id)).require_scan) then
    update app.files x set status = 'ready', scan_status = p_outcome, scan_detail = null
     where x.organization_id = p_organization_id and x.id = f.id;
    return 'ready';
  end if;
  -- The reason as a value: Citus takes no function but an immutable one inside CASE in a write.
  v_reason := case p_outcome
    when 'infected' then format('the virus scanner found %s', left(p_detail, 200))
    when 'failed' then 'the file could not be scanned'
    else 'a virus scan is required and no scanner is available' end;
  update app.files x
     set status = 'rejected', scan_status = case when p_outcome = 'not_scanned' then 'not_scanned' else p_outcome end,
         scan_detail = left(p_detail, 200), rejection_code = 'FILE_SCAN_FAILED', rejection_detail = v_reason
   where x.organization_id = p_organization_id and x.id = f.id;
  -- Infected or unscannable content is not kept.
  delete from app.file_chunks c where c.organization_id = p_organization_id and c.upload_id = f.upload_id;
  return 'rejected';
end
$$;

-- table app.file_uploads

CREATE TABLE app.file_uploads (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('upl'::text) NOT NULL,
    name text NOT NULL,
    content_type text NOT NULL,
    size_bytes bigint NOT NULL,
    sha256 text NOT NULL,
    linked_resource_type text NOT NULL,
    linked_resource_id text NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    chunk_size integer DEFAULT 32768 NOT NULL,
    received_size_bytes bigint,
    received_sha256 text,
    detected_content_type text,
    content_type_verified boolean,
    file_id text,
    created_by_client_id text NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    uploaded_at timestamp with time zone,
    CONSTRAINT file_uploads_chunk_size_range CHECK (((chunk_size >= 1024) AND (chunk_size <= 8388608))),
    CONSTRAINT file_uploads_content_type_format CHECK ((content_type ~ '^[a-z]+/[a-z0-9.+-]+$'::text)),
    CONSTRAINT file_uploads_linked_resource_type_valid CHECK ((linked_resource_type = ANY (ARRAY['project'::text, 'task'::text, 'invoice'::text, 'ticket'::text]))),
    CONSTRAINT file_uploads_name_valid CHECK ((((length(name) BETWEEN 1 AND 255)) AND (name !~ '[[:cntrl:]]'::text))),
    CONSTRAINT file_uploads_received CHECK (((status = 'pending'::text) = (received_size_bytes IS NULL))),
    CONSTRAINT file_uploads_sha256_format CHECK ((sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT file_uploads_size_positive CHECK ((size_bytes > 0)),
    CONSTRAINT file_uploads_status_valid CHECK ((status = ANY (ARRAY['pending'::text, 'uploaded'::text, 'completed'::text])))
);

ALTER TABLE ONLY app.file_uploads FORCE ROW LEVEL SECURITY;

-- function app_private.file_upload_doc(app.file_uploads)

CREATE FUNCTION app_private.file_upload_doc(u app.file_uploads) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  select jsonb_build_object('object', 'file_upload', 'id', u.id, 'status', u.status,
    'upload_token', u.id || '.' || u.organization_id || '.' || app_private.capability_mac('upload', u.id || '.' || u.organization_id),
    'expires_at', app_private.iso_timestamp(u.expires_at),
    'name', u.name, 'content_type', u.content_type, 'size_bytes', u.size_bytes, 'sha256', u.sha256,
    'linked_resource', jsonb_build_object('type', u.linked_resource_type, 'id', u.linked_resource_id),
    'limits', (select jsonb_build_object('max_size_bytes', p.max_size_bytes, 'allowed_content_types', to_jsonb(p.allowed_content_types))
                 from app_private.file_policy(u.organization_id) p),
    'file_id', u.file_id)
$$;

ALTER FUNCTION app_private.file_upload_doc(u app.file_uploads) OWNER TO svc_api;

-- function app_private.file_write_roles(text)

CREATE FUNCTION app_private.file_write_roles(p_type text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select case p_type when 'invoice' then '{manager,finance}'::text[] else '{manager}'::text[] end $$;

-- function app_private.queue_file_scan(text)

CREATE FUNCTION app_private.queue_file_scan(p_file_id text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  perform app_private.queue_job(v__organization_id, 'file_scan', json_build_object('file_id', p_file_id),
                                'file_scan:' || p_file_id, 10);
end
$$;

-- function app_private.tg_file_bytes__of_parent()

CREATE FUNCTION app_private.tg_file_bytes__of_parent() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
begin
  -- On Citus the trigger fires on a shard, whose name ends in its shard id.
  if regexp_replace(tg_table_name, '_[0-9]+$', '') = 'file_contents' then
    select f.linked_resource_type into new.linked_resource_type
      from app.files f where f.organization_id = new.organization_id and f.id = new.file_id;
  else
    select u.linked_resource_type, u.created_by_client_id into new.linked_resource_type, new.client_id
      from app.file_uploads u where u.organization_id = new.organization_id and u.id = new.upload_id;
  end if;
  return new;
end
$_$;

-- function app_private.tg_file_chunks__guard()

CREATE FUNCTION app_private.tg_file_chunks__guard() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_status text;
  v_chunk_size integer;
  v_file_status text;
begin
  if tg_op = 'UPDATE' then
    perform app_private.raise('SVC09', 'CONFLICT', 'stored file content never changes');
  end if;
  if tg_op = 'INSERT' then
    select u.status, u.chunk_size into v_status, v_chunk_size from app.file_uploads u where u.organization_id = new.organization_id and u.id = new.upload_id;
    if v_status is distinct from 'pending' then
      perform app_private.raise('SVC09', 'CONFLICT', 'bytes are accepted only while the upload is pending');
    end if;
    if length(new.data) > v_chunk_size then
      perform app_private.raise('SVC09', 'CONFLICT', 'a chunk is at most the upload''s chunk size');
    end if;
    return new;
  end if;
  select f.status into v_file_status from app.files f where f.organization_id = old.organization_id and f.upload_id = old.upload_id;
  if v_file_status is not null and v_file_status <> 'rejected' then
    perform app_private.raise('SVC09', 'CONFLICT', 'the bytes of a file are kept as long as the file');
  end if;
  return old;
end
$$;

-- function app_private.tg_file_contents__check()

CREATE FUNCTION app_private.tg_file_contents__check() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  f app.files;
begin
  if tg_op <> 'INSERT' then
    perform app_private.raise('SVC09', 'CONFLICT', 'stored file content never changes');
  end if;
  select * into f from app.files x where x.organization_id = new.organization_id and x.id = new.file_id;
  if f.size_bytes <> length(new.content) or f.sha256 <> encode(sha256(new.content), 'hex') then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'the content does not match the file''s size and checksum');
  end if;
  return new;
end
$$;

-- function app_private.tg_file_uploads__lifecycle()

CREATE FUNCTION app_private.tg_file_uploads__lifecycle() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if tg_op = 'INSERT' then
    if new.status <> 'pending' then
      perform app_private.raise('SVC09', 'CONFLICT', 'an upload starts pending');
    end if;
    return new;
  end if;
  if tg_op = 'DELETE' then
    if old.status = 'completed' then
      perform app_private.raise('SVC09', 'CONFLICT', format('upload %s made a file; it is kept', old.id));
    end if;
    return old;
  end if;
  if (new.organization_id, new.id, new.name, new.content_type, new.size_bytes, new.sha256, new.linked_resource_type,
      new.linked_resource_id, new.chunk_size, new.created_by_client_id, new.expires_at, new.created_at)
     is distinct from
     (old.organization_id, old.id, old.name, old.content_type, old.size_bytes, old.sha256, old.linked_resource_type,
      old.linked_resource_id, old.chunk_size, old.created_by_client_id, old.expires_at, old.created_at) then
    perform app_private.raise('SVC09', 'CONFLICT', 'an upload''s declaration never changes');
  end if;
  if new.status = old.status and new.status <> 'pending' and (new.received_size_bytes, new.received_sha256, new.file_id)
     is distinct from (old.received_size_bytes, old.received_sha256, old.file_id) then
    perform app_private.raise('SVC09', 'CONFLICT', 'what was received is recorded once');
  end if;
  if new.status <> old.status and not ((old.status, new.status) in (('pending', 'uploaded'), ('uploaded', 'completed'))) then
    perform app_private.raise('SVC09', 'CONFLICT', format('an upload moves pending → uploaded → completed, not %s → %s', old.status, new.status));
  end if;
  if new.status = 'uploaded' and old.status = 'pending' then
    if new.received_size_bytes is distinct from
       (select coalesce(sum(length(c.data)), 0) from app.file_chunks c where c.organization_id = new.organization_id and c.upload_id = new.id) then
      perform app_private.raise('SVC09', 'CONFLICT', 'the received size must be what the chunks hold');
    end if;
    new.uploaded_at := now();
  end if;
  if new.status = 'completed' and (new.file_id is null or new.received_size_bytes <> new.size_bytes
       or new.received_sha256 <> new.sha256 or not new.content_type_verified) then
    perform app_private.raise('SVC09', 'CONFLICT', 'only verified bytes complete an upload');
  end if;
  return new;
end
$$;

-- function app_private.tg_files__emit()

CREATE FUNCTION app_private.tg_files__emit() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if new.status is distinct from old.status and new.status in ('ready', 'rejected', 'archived') then
    perform app_private.emit_event(new.organization_id, 'file.' || new.status, 'file', new.id, 1);
  end if;
  return null;
end
$$;

-- function app_private.tg_files__lifecycle()

CREATE FUNCTION app_private.tg_files__lifecycle() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_policy record;
begin
  if tg_op = 'DELETE' then
    if old.status <> 'rejected' then
      perform app_private.raise('SVC09', 'CONFLICT', format('%s: files are archived, not deleted', old.id));
    end if;
    return old;
  end if;
  if tg_op = 'INSERT' then
    -- Uploaded files start in processing (checks run); the service's own files (invoice PDFs) are ready.
    if (new.upload_id is not null and new.status <> 'processing') or (new.upload_id is null and new.status <> 'ready') then
      perform app_private.raise('SVC09', 'CONFLICT', 'an uploaded file starts processing; a file the service made starts ready');
    end if;
    if new.upload_id is not null and not exists (
         select from app.file_uploads u
          where u.organization_id = new.organization_id and u.id = new.upload_id and u.status = 'uploaded'
            and u.content_type_verified and u.received_size_bytes = new.size_bytes and u.received_sha256 = new.sha256
            and (u.name, u.content_type, u.size_bytes, u.sha256, u.linked_resource_type, u.linked_resource_id)
                = (new.name, new.content_type, new.size_bytes, new.sha256, new.linked_resource_type, new.linked_resource_id)) then
      perform app_private.raise('SVC09', 'CONFLICT', 'a file is made from an upload whose bytes were verified against its declaration');
    end if;
    new.updated_at := now();
    return new;
  end if;
  if (new.organization_id, new.id, new.name, new.content_type, new.size_bytes, new.sha256, new.linked_resource_type,
      new.linked_resource_id, new.upload_id, new.retention, new.created_by_client_id, new.created_at)
     is distinct from
     (old.organization_id, old.id, old.name, old.content_type, old.size_bytes, old.sha256, old.linked_resource_type,
      old.linked_resource_id, old.upload_id, old.retention, old.created_by_client_id, old.created_at) then
    perform app_private.raise('SVC09', 'CONFLICT', format('%s: a file''s content and identity never change', old.id));
  end if;
  if new.status is distinct from old.status then
    if old.status = 'processing' and new.status = 'ready' then
      select * into v_policy from app_private.file_policy(new.organization_id);
      if new.scan_status = 'clean' or (new.scan_status = 'not_scanned' and not v_policy.require_scan) then
        null;
      else
        perform app_private.raise('SVC09', 'CONFLICT', format('%s: a file is ready only when scanned clean (or, where no scan is required, not scanned)', old.id));
      end if;
    elsif old.status = 'processing' and new.status = 'rejected' then
      null;  -- files_rejected_has_code: a rejection says why
    elsif old.status = 'ready' and new.status = 'archived' then
      if old.retention is not null then
        perform app_private.raise('SVC09', 'RETENTION_BLOCKED', format('%s is a posted financial record: it is kept', old.id));
      elsif old.legal_hold then
        perform app_private.raise('SVC09', 'RETENTION_BLOCKED', format('%s is under a legal hold', old.id));
      elsif old.linked_resource_type = 'invoice' and exists (
              select from app.invoices i where i.organization_id = old.organization_id and i.id = old.linked_resource_id and i.status <> 'draft') then
        perform app_private.raise('SVC09', 'RETENTION_BLOCKED', format('%s is attached to a posted invoice', old.id));
      end if;
      new.archived_at := now();
    else
      perform app_private.raise('SVC09', 'CONFLICT',
        format('a file moves processing → ready or rejected, and ready → archived; not %s → %s', old.status, new.status));
    end if;
  elsif (new.scan_status, new.scan_detail, new.rejection_code, new.rejection_detail, new.archived_at)
        is distinct from (old.scan_status, old.scan_detail, old.rejection_code, old.rejection_detail, old.archived_at)
        and old.status <> 'processing' then
    perform app_private.raise('SVC09', 'CONFLICT', format('%s: the checks of a file are recorded once', old.id));
  end if;
  new.updated_at := now();
  return new;
end
$$;

-- function app_private.tg_files__retention()

CREATE FUNCTION app_private.tg_files__retention() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if old.retention is not null then
    if tg_op = 'UPDATE' and new.status = 'archived' and old.status <> 'archived' then
      perform app_private.raise('SVC09', 'RETENTION_BLOCKED', format('%s is a posted financial record: it is kept', old.id));
    end if;
    if tg_op = 'DELETE' or (to_jsonb(new) - '{legal_hold,updated_at}'::text[]) <> (to_jsonb(old) - '{legal_hold,updated_at}'::text[]) then
      perform app_private.raise('SVC09', 'CONFLICT', format('%s is a posted financial record: it is kept unchanged', old.id));
    end if;
  end if;
  return case when tg_op = 'DELETE' then old else new end;
end
$$;

-- function control.file_policy_set(text, bigint, text[], boolean)

CREATE FUNCTION control.file_policy_set(p_org text, p_max_size_bytes bigint, p_content_types text[], p_require_scan boolean) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.require_found(exists (select from app.organizations o where o.id = p_org), 'ORGANIZATION_NOT_FOUND', p_org);
  insert into app.file_policies (organization_id, max_size_bytes, allowed_content_types, require_scan)
  values (p_org, coalesce(p_max_size_bytes, 104857600), coalesce(p_content_types, app_private.default_file_content_types()),
          coalesce(p_require_scan, false))
  on conflict (organization_id) do update
    set max_size_bytes = coalesce(p_max_size_bytes, file_policies.max_size_bytes),
        allowed_content_types = coalesce(p_content_types, file_policies.allowed_content_types),
        require_scan = coalesce(p_require_scan, file_policies.require_scan);
end
$$;

-- function control.file_set_legal_hold(text, boolean)

CREATE FUNCTION control.file_set_legal_hold(p_file_id text, p_hold boolean) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := (select x.organization_id from app.files x where x.id = p_file_id);
begin
  update app.files f set legal_hold = p_hold where f.organization_id = v_org and f.id = p_file_id;
  perform app_private.require_found(found, 'FILE_NOT_FOUND', p_file_id);
end
$$;

-- function control.purge_expired_uploads()

CREATE FUNCTION control.purge_expired_uploads() RETURNS integer
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  with gone as (delete from app.file_uploads u where u.status <> 'completed' and u.expires_at < now() - interval '1 minute' returning 1)
  select count(*)::integer from gone
$$;

-- table app.file_chunks

CREATE TABLE app.file_chunks (
    organization_id text NOT NULL,
    upload_id text NOT NULL,
    seq integer NOT NULL,
    data bytea NOT NULL,
    linked_resource_type text NOT NULL,
    client_id text NOT NULL,
    CONSTRAINT file_chunks_seq_not_negative CHECK ((seq >= 0))
);

ALTER TABLE ONLY app.file_chunks FORCE ROW LEVEL SECURITY;

-- table app.file_contents

CREATE TABLE app.file_contents (
    organization_id text NOT NULL,
    file_id text NOT NULL,
    content bytea NOT NULL,
    linked_resource_type text NOT NULL
);

ALTER TABLE ONLY app.file_contents FORCE ROW LEVEL SECURITY;

-- table app.file_policies

CREATE TABLE app.file_policies (
    organization_id text NOT NULL,
    max_size_bytes bigint NOT NULL,
    allowed_content_types text[] NOT NULL,
    require_scan boolean DEFAULT false NOT NULL,
    CONSTRAINT file_policies_max_size_range CHECK (((max_size_bytes >= 1) AND (max_size_bytes <= '5368709120'::bigint))),
    CONSTRAINT file_policies_types_bounded CHECK (((cardinality(allowed_content_types) >= 1) AND (cardinality(allowed_content_types) <= 100)))
);

ALTER TABLE ONLY app.file_policies FORCE ROW LEVEL SECURITY;

-- constraint app.file_chunks file_chunks_pkey

ALTER TABLE ONLY app.file_chunks
    ADD CONSTRAINT file_chunks_pkey PRIMARY KEY (organization_id, upload_id, seq);

-- constraint app.file_contents file_contents_pkey

ALTER TABLE ONLY app.file_contents
    ADD CONSTRAINT file_contents_pkey PRIMARY KEY (organization_id, file_id);

-- constraint app.file_policies file_policies_pkey

ALTER TABLE ONLY app.file_policies
    ADD CONSTRAINT file_policies_pkey PRIMARY KEY (organization_id);

-- constraint app.file_uploads file_uploads_pkey

ALTER TABLE ONLY app.file_uploads
    ADD CONSTRAINT file_uploads_pkey PRIMARY KEY (organization_id, id);

-- constraint app.files files_pkey

ALTER TABLE ONLY app.files
    ADD CONSTRAINT files_pkey PRIMARY KEY (organization_id, id);

-- constraint app.files files_upload_unique

ALTER TABLE ONLY app.files
    ADD CONSTRAINT files_upload_unique UNIQUE (organization_id, upload_id);

-- index app.file_uploads_expiry

CREATE INDEX file_uploads_expiry ON app.file_uploads USING btree (expires_at) WHERE (status <> 'completed'::text);

-- index app.file_uploads_id

CREATE INDEX file_uploads_id ON app.file_uploads USING btree (id);

-- index app.files_id

CREATE INDEX files_id ON app.files USING btree (id);

-- index app.files_linked

CREATE INDEX files_linked ON app.files USING btree (organization_id, linked_resource_type, linked_resource_id);

-- index app.files_list

CREATE INDEX files_list ON app.files USING btree (organization_id, created_at DESC, id DESC);

-- trigger app.file_chunks _010_of_parent

CREATE TRIGGER _010_of_parent BEFORE INSERT ON app.file_chunks FOR EACH ROW EXECUTE FUNCTION app_private.tg_file_bytes__of_parent();

-- trigger app.file_contents _010_of_parent

CREATE TRIGGER _010_of_parent BEFORE INSERT ON app.file_contents FOR EACH ROW EXECUTE FUNCTION app_private.tg_file_bytes__of_parent();

-- trigger app.files _040_retention

CREATE TRIGGER _040_retention BEFORE DELETE OR UPDATE ON app.files FOR EACH ROW EXECUTE FUNCTION app_private.tg_files__retention();

-- trigger app.file_contents _050_check

CREATE TRIGGER _050_check BEFORE INSERT OR DELETE OR UPDATE ON app.file_contents FOR EACH ROW EXECUTE FUNCTION app_private.tg_file_contents__check();

-- trigger app.file_chunks _050_guard

CREATE TRIGGER _050_guard BEFORE INSERT OR DELETE OR UPDATE ON app.file_chunks FOR EACH ROW EXECUTE FUNCTION app_private.tg_file_chunks__guard();

-- trigger app.file_uploads _100_lifecycle

CREATE TRIGGER _100_lifecycle BEFORE INSERT OR DELETE OR UPDATE ON app.file_uploads FOR EACH ROW EXECUTE FUNCTION app_private.tg_file_uploads__lifecycle();

-- trigger app.files _100_lifecycle

CREATE TRIGGER _100_lifecycle BEFORE INSERT OR DELETE OR UPDATE ON app.files FOR EACH ROW EXECUTE FUNCTION app_private.tg_files__lifecycle();

-- trigger app.files _950_emit_event

CREATE TRIGGER _950_emit_event AFTER UPDATE ON app.files FOR EACH ROW EXECUTE FUNCTION app_private.tg_files__emit();

-- fk constraint app.file_chunks file_chunks_organization_id_upload_id_fkey

ALTER TABLE ONLY app.file_chunks
    ADD CONSTRAINT file_chunks_organization_id_upload_id_fkey FOREIGN KEY (organization_id, upload_id) REFERENCES app.file_uploads(organization_id, id) ON DELETE CASCADE;

-- fk constraint app.file_contents file_contents_file_fkey

ALTER TABLE ONLY app.file_contents
    ADD CONSTRAINT file_contents_file_fkey FOREIGN KEY (organization_id, file_id) REFERENCES app.files(organization_id, id) ON DELETE CASCADE;

-- fk constraint app.file_policies file_policies_organization_id_fkey

ALTER TABLE ONLY app.file_policies
    ADD CONSTRAINT file_policies_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.file_uploads file_uploads_organization_id_created_by_client_id_fkey

ALTER TABLE ONLY app.file_uploads
    ADD CONSTRAINT file_uploads_organization_id_created_by_client_id_fkey FOREIGN KEY (organization_id, created_by_client_id) REFERENCES app.api_clients(organization_id, id);

-- fk constraint app.file_uploads file_uploads_organization_id_fkey

ALTER TABLE ONLY app.file_uploads
    ADD CONSTRAINT file_uploads_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.files files_organization_id_fkey

ALTER TABLE ONLY app.files
    ADD CONSTRAINT files_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.files files_organization_id_upload_id_fkey

ALTER TABLE ONLY app.files
    ADD CONSTRAINT files_organization_id_upload_id_fkey FOREIGN KEY (organization_id, upload_id) REFERENCES app.file_uploads(organization_id, id);

-- fk constraint app.invoices invoices_pdf_file_fkey

ALTER TABLE ONLY app.invoices
    ADD CONSTRAINT invoices_pdf_file_fkey FOREIGN KEY (organization_id, pdf_file_id) REFERENCES app.files(organization_id, id) ON DELETE RESTRICT;

-- policy app.file_uploads Clients move their own uploads on

CREATE POLICY "Clients move their own uploads on" ON app.file_uploads FOR UPDATE TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (created_by_client_id = ( SELECT app.current_client_id() AS current_client_id)))) WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (created_by_client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- policy app.file_policies Clients read their organization's file policy

CREATE POLICY "Clients read their organization's file policy" ON app.file_policies FOR SELECT TO svc_api USING ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));

-- policy app.file_uploads Clients see their own uploads

CREATE POLICY "Clients see their own uploads" ON app.file_uploads FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (created_by_client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- policy app.file_chunks Clients write the bytes of their own pending uploads

CREATE POLICY "Clients write the bytes of their own pending uploads" ON app.file_chunks FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- policy app.files Writers of the linked resource add uploaded files

CREATE POLICY "Writers of the linked resource add uploaded files" ON app.files FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (upload_id IS NOT NULL) AND app.has_any_role(app_private.file_write_roles(linked_resource_type))));

-- policy app.files Writers of the linked resource change files

CREATE POLICY "Writers of the linked resource change files" ON app.files FOR UPDATE TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND app.has_any_role(app_private.file_write_roles(linked_resource_type)))) WITH CHECK ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));

-- policy app.file_uploads Writers of the linked resource start uploads

CREATE POLICY "Writers of the linked resource start uploads" ON app.file_uploads FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (created_by_client_id = ( SELECT app.current_client_id() AS current_client_id)) AND app.has_any_role(app_private.file_write_roles(linked_resource_type))));

-- row security app.file_chunks

ALTER TABLE app.file_chunks ENABLE ROW LEVEL SECURITY;

-- row security app.file_contents

ALTER TABLE app.file_contents ENABLE ROW LEVEL SECURITY;

-- row security app.file_policies

ALTER TABLE app.file_policies ENABLE ROW LEVEL SECURITY;

-- row security app.file_uploads

ALTER TABLE app.file_uploads ENABLE ROW LEVEL SECURITY;

-- row security app.files

ALTER TABLE app.files ENABLE ROW LEVEL SECURITY;

-- acl api.FUNCTION file_archive(p_id text)

REVOKE ALL ON FUNCTION api.file_archive(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.file_archive(p_id text) TO svc_runtime;

-- acl api.FUNCTION file_chunks(p_file_id text, p_from integer, p_to integer)

REVOKE ALL ON FUNCTION api.file_chunks(p_file_id text, p_from integer, p_to integer) FROM PUBLIC;
GRANT ALL ON FUNCTION api.file_chunks(p_file_id text, p_from integer, p_to integer) TO svc_runtime;

-- acl api.FUNCTION file_download_begin(p_token text)

REVOKE ALL ON FUNCTION api.file_download_begin(p_token text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.file_download_begin(p_token text) TO svc_runtime;

-- acl api.FUNCTION file_download_create(p_id text, p_lifetime_seconds integer)

REVOKE ALL ON FUNCTION api.file_download_create(p_id text, p_lifetime_seconds integer) FROM PUBLIC;
GRANT ALL ON FUNCTION api.file_download_create(p_id text, p_lifetime_seconds integer) TO svc_runtime;

-- acl api.FUNCTION file_get(p_id text)

REVOKE ALL ON FUNCTION api.file_get(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.file_get(p_id text) TO svc_runtime;

-- acl api.FUNCTION file_upload_begin(p_token text)

REVOKE ALL ON FUNCTION api.file_upload_begin(p_token text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.file_upload_begin(p_token text) TO svc_runtime;

-- acl api.FUNCTION file_upload_chunks(p_upload_id text, p_first_seq integer, VARIADIC p_base64 text[])

REVOKE ALL ON FUNCTION api.file_upload_chunks(p_upload_id text, p_first_seq integer, VARIADIC p_base64 text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION api.file_upload_chunks(p_upload_id text, p_first_seq integer, VARIADIC p_base64 text[]) TO svc_runtime;

-- acl api.FUNCTION file_upload_complete(p_upload_id text)

REVOKE ALL ON FUNCTION api.file_upload_complete(p_upload_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.file_upload_complete(p_upload_id text) TO svc_runtime;

-- acl api.FUNCTION file_upload_create(p_body jsonb, p_lifetime_seconds integer)

REVOKE ALL ON FUNCTION api.file_upload_create(p_body jsonb, p_lifetime_seconds integer) FROM PUBLIC;
GRANT ALL ON FUNCTION api.file_upload_create(p_body jsonb, p_lifetime_seconds integer) TO svc_runtime;

-- acl api.FUNCTION file_upload_finish(p_upload_id text, p_size bigint, p_sha256 text, p_detected text, p_verified boolean)

REVOKE ALL ON FUNCTION api.file_upload_finish(p_upload_id text, p_size bigint, p_sha256 text, p_detected text, p_verified boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.file_upload_finish(p_upload_id text, p_size bigint, p_sha256 text, p_detected text, p_verified boolean) TO svc_runtime;

-- acl api.FUNCTION file_upload_get(p_id text)

REVOKE ALL ON FUNCTION api.file_upload_get(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.file_upload_get(p_id text) TO svc_runtime;

-- acl app.TABLE files

GRANT SELECT,INSERT,UPDATE ON TABLE app.files TO svc_api;

-- acl api.TABLE files

GRANT SELECT ON TABLE api.files TO svc_runtime;

-- acl api.FUNCTION files(p_id text)

REVOKE ALL ON FUNCTION api.files(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.files(p_id text) TO svc_runtime;

-- acl app_private.FUNCTION member_hr_profile(p_org text, p_member_id text)

REVOKE ALL ON FUNCTION app_private.member_hr_profile(p_org text, p_member_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.member_hr_profile(p_org text, p_member_id text) TO svc_runtime;
GRANT ALL ON FUNCTION app_private.member_hr_profile(p_org text, p_member_id text) TO svc_api;
GRANT ALL ON FUNCTION app_private.member_hr_profile(p_org text, p_member_id text) TO svc_reporting;

-- acl api.TABLE members

GRANT SELECT ON TABLE api.members TO svc_runtime;

-- acl api.FUNCTION members(p_id text)

REVOKE ALL ON FUNCTION api.members(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.members(p_id text) TO svc_runtime;

-- acl app_private.FUNCTION default_file_content_types()

REVOKE ALL ON FUNCTION app_private.default_file_content_types() FROM PUBLIC;

-- acl app_private.FUNCTION download_link(p_token text, p_prefix text, p_purpose text, OUT id text, OUT organization_id text, OUT client_id text, OUT expires bigint)

REVOKE ALL ON FUNCTION app_private.download_link(p_token text, p_prefix text, p_purpose text, OUT id text, OUT organization_id text, OUT client_id text, OUT expires bigint) FROM PUBLIC;

-- acl app_private.FUNCTION file_for(p_id text, p_write boolean)

REVOKE ALL ON FUNCTION app_private.file_for(p_id text, p_write boolean) FROM PUBLIC;

-- acl app_private.FUNCTION file_link(p_id text, OUT linked_resource_type text, OUT linked_resource_id text)

REVOKE ALL ON FUNCTION app_private.file_link(p_id text, OUT linked_resource_type text, OUT linked_resource_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.file_link(p_id text, OUT linked_resource_type text, OUT linked_resource_id text) TO svc_api;

-- acl app_private.FUNCTION file_policy(p_org text, OUT max_size_bytes bigint, OUT allowed_content_types text[], OUT require_scan boolean)

REVOKE ALL ON FUNCTION app_private.file_policy(p_org text, OUT max_size_bytes bigint, OUT allowed_content_types text[], OUT require_scan boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.file_policy(p_org text, OUT max_size_bytes bigint, OUT allowed_content_types text[], OUT require_scan boolean) TO svc_api;

-- acl app_private.FUNCTION file_read_roles(p_type text)

REVOKE ALL ON FUNCTION app_private.file_read_roles(p_type text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.file_read_roles(p_type text) TO svc_api;

-- acl app_private.FUNCTION file_readable(p_type text)

REVOKE ALL ON FUNCTION app_private.file_readable(p_type text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.file_readable(p_type text) TO svc_api;

-- acl app_private.FUNCTION file_scan_load(p_organization_id text, p_file_id text)

REVOKE ALL ON FUNCTION app_private.file_scan_load(p_organization_id text, p_file_id text) FROM PUBLIC;

-- acl app_private.FUNCTION file_scan_record(p_organization_id text, p_file_id text, p_outcome text, p_detail text, p_required boolean)

REVOKE ALL ON FUNCTION app_private.file_scan_record(p_organization_id text, p_file_id text, p_outcome text, p_detail text, p_required boolean) FROM PUBLIC;

-- acl app.TABLE file_uploads

GRANT SELECT,INSERT,UPDATE ON TABLE app.file_uploads TO svc_api;

-- acl app_private.FUNCTION file_upload_doc(u app.file_uploads)

REVOKE ALL ON FUNCTION app_private.file_upload_doc(u app.file_uploads) FROM PUBLIC;

-- acl app_private.FUNCTION file_write_roles(p_type text)

REVOKE ALL ON FUNCTION app_private.file_write_roles(p_type text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.file_write_roles(p_type text) TO svc_api;

-- acl app_private.FUNCTION queue_file_scan(p_file_id text)

REVOKE ALL ON FUNCTION app_private.queue_file_scan(p_file_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.queue_file_scan(p_file_id text) TO svc_api;

-- acl app_private.FUNCTION tg_file_bytes__of_parent()

REVOKE ALL ON FUNCTION app_private.tg_file_bytes__of_parent() FROM PUBLIC;

-- acl app_private.FUNCTION tg_file_chunks__guard()

REVOKE ALL ON FUNCTION app_private.tg_file_chunks__guard() FROM PUBLIC;

-- acl app_private.FUNCTION tg_file_contents__check()

REVOKE ALL ON FUNCTION app_private.tg_file_contents__check() FROM PUBLIC;

-- acl app_private.FUNCTION tg_file_uploads__lifecycle()

REVOKE ALL ON FUNCTION app_private.tg_file_uploads__lifecycle() FROM PUBLIC;

-- acl app_private.FUNCTION tg_files__emit()

REVOKE ALL ON FUNCTION app_private.tg_files__emit() FROM PUBLIC;

-- acl app_private.FUNCTION tg_files__lifecycle()

REVOKE ALL ON FUNCTION app_private.tg_files__lifecycle() FROM PUBLIC;

-- acl app_private.FUNCTION tg_files__retention()

REVOKE ALL ON FUNCTION app_private.tg_files__retention() FROM PUBLIC;

-- acl control.FUNCTION file_policy_set(p_org text, p_max_size_bytes bigint, p_content_types text[], p_require_scan boolean)

REVOKE ALL ON FUNCTION control.file_policy_set(p_org text, p_max_size_bytes bigint, p_content_types text[], p_require_scan boolean) FROM PUBLIC;

-- acl control.FUNCTION file_set_legal_hold(p_file_id text, p_hold boolean)

REVOKE ALL ON FUNCTION control.file_set_legal_hold(p_file_id text, p_hold boolean) FROM PUBLIC;

-- acl control.FUNCTION purge_expired_uploads()

REVOKE ALL ON FUNCTION control.purge_expired_uploads() FROM PUBLIC;

-- acl app.TABLE file_chunks

GRANT SELECT,INSERT ON TABLE app.file_chunks TO svc_api;

-- acl app.TABLE file_contents

GRANT SELECT ON TABLE app.file_contents TO svc_api;

-- acl app.TABLE file_policies

GRANT SELECT ON TABLE app.file_policies TO svc_api;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
