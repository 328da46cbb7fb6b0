-- migrate:up

/** Files (issue 14): uploads through a capability URL, verification, scanning, downloads and
 * retention. The service already stored invoice PDFs as files (app.files, app.file_contents);
 * now clients upload their own, linked to a project, task or invoice:
 *  - createFileUpload records an upload (app.file_uploads) and answers a capability URL whose
 *    token is an HMAC over the upload id (app_private.capability_mac, keyed with a key no
 *    runtime role reads), so nothing secret is stored and a replay can show the same URL;
 *  - the PUT to that URL starts with api.file_upload_begin (the token is the credential: it
 *    sets the signed request context of the client that made the upload), streams the bytes into
 *    app.file_chunks, and ends with api.file_upload_finish, all in one transaction;
 *  - completeFileUpload verifies size, checksum and content type and creates the file in
 *    `processing`, with a graphile-worker job (file_scan) that scans it and moves it to `ready`
 *    or `rejected`;
 *  - createFileDownload answers a capability URL bound to the file, the client and an expiry.
 * Access is the linked resource's (spec Role matrix: Files). States, immutability and retention
 * are triggers, so they hold for every writer. */

/** 1. Per-organization file policy (svc-admin org set-file-policy); defaults when absent. */
create table app.file_policies (
  organization_id text primary key references app.organizations on delete cascade,
  max_size_bytes bigint not null constraint file_policies_max_size_range check (max_size_bytes between 1 and 5368709120),
  allowed_content_types text[] not null constraint file_policies_types_bounded
    check (cardinality(allowed_content_types) between 1 and 100),
  -- No file becomes ready unless a scanner found it clean.
  require_scan boolean not null default false
);
alter table app.file_policies enable row level security;
alter table app.file_policies force row level security;
create policy "Clients read their organization's file policy" on app.file_policies for select to svc_api
  using (organization_id = (select app.current_organization_id()));
grant select on app.file_policies to svc_api;

create function app_private.default_file_content_types() returns text[]
language sql immutable parallel safe
set search_path = pg_catalog
as $$
  select '{application/pdf,image/png,image/jpeg,image/gif,image/webp,text/plain,text/csv,application/json,application/zip,application/vnd.openxmlformats-officedocument.wordprocessingml.document,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet,application/vnd.openxmlformats-officedocument.presentationml.presentation}'::text[]
$$;

/** The policy in force for an organization: its own row, else 100 MiB, the default types, no scan required. */
create function app_private.file_policy(p_org text, out max_size_bytes bigint, out allowed_content_types text[], out require_scan boolean)
language sql stable security definer
set search_path = pg_catalog
as $$
  select coalesce(p.max_size_bytes, 104857600), coalesce(p.allowed_content_types, app_private.default_file_content_types()),
         coalesce(p.require_scan, false)
    from (select 1) one left join app.file_policies p on p.organization_id = p_org
$$;
grant execute on function app_private.file_policy(text) to svc_api;

create function control.file_policy_set(p_org text, p_max_size_bytes bigint, p_content_types text[], p_require_scan boolean)
returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
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

/** 2. Capability tokens: an HMAC (RFC 2104) with the context key, apart from context signatures
 * by a purpose label. Owner-only but for the commands that mint or check tokens. */
create function app_private.capability_mac(p_purpose text, p_message text) returns text
language plpgsql stable security definer parallel restricted
set search_path = pg_catalog
as $$
declare
  k record;
begin
  select inner_key, outer_key into k from app_private.context_keys;
  return encode(sha256(k.outer_key || sha256(k.inner_key || convert_to('capability' || chr(31) || p_purpose || chr(31) || p_message, 'UTF8'))), 'hex');
end
$$;
grant execute on function app_private.capability_mac(text, text) to svc_api;

/** Who reads and who writes a file: the linked resource's Roles (spec Role matrix: Files).
 * Finance and hr see projects and tasks only in part (their fields), so project and task files
 * are for member and manager; invoice files for manager and finance. */
create function app_private.file_read_roles(p_type text) returns text[]
language sql immutable parallel safe
set search_path = pg_catalog
as $$ select case p_type when 'invoice' then '{manager,finance}'::text[] else '{member,manager}'::text[] end $$;
create function app_private.file_write_roles(p_type text) returns text[]
language sql immutable parallel safe
set search_path = pg_catalog
as $$ select case p_type when 'invoice' then '{manager,finance}'::text[] else '{manager}'::text[] end $$;
grant execute on function app_private.file_read_roles(text), app_private.file_write_roles(text) to svc_api;

/** 3. Uploads and their bytes. */
create table app.file_uploads (
  organization_id text not null references app.organizations on delete cascade,
  id text not null default app_private.new_id('upl'),
  name text not null constraint file_uploads_name_valid check (length(name) between 1 and 255 and name !~ '[[:cntrl:]]'),
  content_type text not null constraint file_uploads_content_type_format check (content_type ~ '^[a-z]+/[a-z0-9.+-]+$'),
  size_bytes bigint not null constraint file_uploads_size_positive check (size_bytes > 0),
  sha256 text not null constraint file_uploads_sha256_format check (sha256 ~ '^[0-9a-f]{64}$'),
  linked_resource_type text not null constraint file_uploads_linked_resource_type_valid check (linked_resource_type in ('project', 'task', 'invoice')),
  linked_resource_id text not null,
  status text not null default 'pending' constraint file_uploads_status_valid check (status in ('pending', 'uploaded', 'completed')),
  chunk_size integer not null default 32768 constraint file_uploads_chunk_size_range check (chunk_size between 1024 and 8388608),
  received_size_bytes bigint,
  received_sha256 text,
  -- What the bytes are, as the upload endpoint sniffed them, and whether that fits the declared type.
  detected_content_type text,
  content_type_verified boolean,
  file_id text,
  created_by_client_id text not null,
  expires_at timestamptz not null,
  created_at timestamptz not null default now(),
  uploaded_at timestamptz,
  primary key (organization_id, id),
  foreign key (organization_id, created_by_client_id) references app.api_clients (organization_id, id),
  constraint file_uploads_received check ((status = 'pending') = (received_size_bytes is null))
);
create index file_uploads_id on app.file_uploads (id);
create index file_uploads_expiry on app.file_uploads (expires_at) where status <> 'completed';

create table app.file_chunks (
  organization_id text not null,
  upload_id text not null,
  seq integer not null constraint file_chunks_seq_not_negative check (seq >= 0),
  data bytea not null,
  primary key (organization_id, upload_id, seq),
  foreign key (organization_id, upload_id) references app.file_uploads (organization_id, id) on delete cascade
);

alter table app.files
  drop constraint files_status_valid,
  add constraint files_status_valid check (status in ('processing', 'ready', 'rejected', 'archived')),
  drop constraint files_linked_resource_type_valid,
  add constraint files_linked_resource_type_valid check (linked_resource_type in ('project', 'task', 'invoice')),
  add column upload_id text,
  add column scan_status text not null default 'not_scanned'
    constraint files_scan_status_valid check (scan_status in ('pending', 'clean', 'infected', 'failed', 'not_scanned')),
  add column scan_detail text,
  add column rejection_code text constraint files_rejection_code_valid check (rejection_code in ('FILE_SCAN_FAILED')),
  add column rejection_detail text,
  add column legal_hold boolean not null default false,
  add column archived_at timestamptz,
  add column updated_at timestamptz not null default now(),
  add constraint files_rejected_has_code check ((status = 'rejected') = (rejection_code is not null)),
  add constraint files_upload_unique unique (organization_id, upload_id),
  add foreign key (organization_id, upload_id) references app.file_uploads (organization_id, id);
create index files_list on app.files (organization_id, created_at desc, id desc);

/** 4. Rules for every writer. */

/** Upload rows: the declaration never changes; pending → uploaded → completed, nothing else. */
create function app_private.tg_file_uploads__lifecycle() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
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
create trigger _100_lifecycle before insert or update or delete on app.file_uploads
  for each row execute function app_private.tg_file_uploads__lifecycle();

/** Bytes arrive only while their upload is pending, never change, and go only with an upload that
 * made no file, or from a rejected file (the purge of infected content). */
create function app_private.tg_file_chunks__guard() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
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
create trigger _050_guard before insert or update or delete on app.file_chunks
  for each row execute function app_private.tg_file_chunks__guard();

/** File states: processing → ready | rejected; ready → archived (not under retention, a legal
 * hold, or linked to a posted financial record). The file's content and identity never change. */
create function app_private.tg_files__lifecycle() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
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
create trigger _100_lifecycle before insert or update or delete on app.files
  for each row execute function app_private.tg_files__lifecycle();

/** Retained files (posted financial records) change in nothing but their legal hold. */
create or replace function app_private.tg_files__retention() returns trigger
language plpgsql volatile
set search_path = pg_catalog
as $$
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

/** Events for subscribers: file.ready, file.rejected, file.archived (data: the object reference). */
insert into app_private.event_types (name, resource_type, emitted_by, description, subscribable) values
  ('file.ready', 'file', '{completeFileUpload}', 'An uploaded file passed its checks and can be downloaded.', true),
  ('file.rejected', 'file', '{completeFileUpload}', 'An uploaded file failed its checks (the file shows why); it cannot be downloaded.', true),
  ('file.archived', 'file', '{archiveFile}', 'A file was archived.', true);

create function app_private.tg_files__emit() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  if new.status is distinct from old.status and new.status in ('ready', 'rejected', 'archived') then
    perform app_private.emit_event(new.organization_id, 'file.' || new.status, 'file', new.id, 1);
  end if;
  return null;
end
$$;
create trigger _950_emit_event after update on app.files
  for each row execute function app_private.tg_files__emit();

/** 5. Access: a file row is there for whoever sees its linked resource (the resource's own
 * policies decide, inside this one); the api surface then lets only the resource's full readers
 * read it and its writers change it. */
drop policy "Files are readable where the linked resource is" on app.files;
create policy "Files are visible where the linked resource is" on app.files for select to svc_api
  using (organization_id = (select app.current_organization_id())
         and case linked_resource_type
               when 'project' then exists (select from app.projects p where p.organization_id = files.organization_id and p.id = files.linked_resource_id)
               when 'task' then exists (select from app.tasks t where t.organization_id = files.organization_id and t.id = files.linked_resource_id)
               when 'invoice' then exists (select from app.invoices i where i.organization_id = files.organization_id and i.id = files.linked_resource_id)
               else false end);
-- Only from an upload (the lifecycle trigger checks it was verified); the service's own files come from the owner.
create policy "Writers of the linked resource add uploaded files" on app.files for insert to svc_api
  with check (organization_id = (select app.current_organization_id()) and upload_id is not null
              and app.has_any_role(app_private.file_write_roles(linked_resource_type)));
create policy "Writers of the linked resource change files" on app.files for update to svc_api
  using (organization_id = (select app.current_organization_id()) and app.has_any_role(app_private.file_write_roles(linked_resource_type)))
  with check (organization_id = (select app.current_organization_id()));
grant insert, update on app.files to svc_api;

alter table app.file_uploads enable row level security;
alter table app.file_uploads force row level security;
create policy "Clients see their own uploads" on app.file_uploads for select to svc_api
  using (organization_id = (select app.current_organization_id()) and created_by_client_id = (select app.current_client_id()));
create policy "Writers of the linked resource start uploads" on app.file_uploads for insert to svc_api
  with check (organization_id = (select app.current_organization_id()) and created_by_client_id = (select app.current_client_id())
              and app.has_any_role(app_private.file_write_roles(linked_resource_type)));
create policy "Clients move their own uploads on" on app.file_uploads for update to svc_api
  using (organization_id = (select app.current_organization_id()) and created_by_client_id = (select app.current_client_id()))
  with check (organization_id = (select app.current_organization_id()) and created_by_client_id = (select app.current_client_id()));
grant select, insert, update on app.file_uploads to svc_api;

alter table app.file_chunks enable row level security;
alter table app.file_chunks force row level security;
create policy "Chunks are readable where their file is" on app.file_chunks for select to svc_api
  using (organization_id = (select app.current_organization_id())
         and exists (select from app.files f where f.organization_id = file_chunks.organization_id and f.upload_id = file_chunks.upload_id
                                               and app.has_any_role(app_private.file_read_roles(f.linked_resource_type))));
create policy "Clients write the bytes of their own pending uploads" on app.file_chunks for insert to svc_api
  with check (organization_id = (select app.current_organization_id())
              and exists (select from app.file_uploads u where u.organization_id = file_chunks.organization_id and u.id = file_chunks.upload_id
                                                           and u.status = 'pending'));
grant select, insert on app.file_chunks to svc_api;

/** 6. The api surface. */
create view api.files as
select f.organization_id, f.id, f.status, f.linked_resource_type, f.linked_resource_id, f.content_type, f.created_at,
       jsonb_build_object('object', 'file', 'id', f.id, 'name', f.name, 'content_type', f.content_type, 'size_bytes', f.size_bytes,
         'sha256', f.sha256, 'status', f.status,
         'linked_resource', jsonb_build_object('type', f.linked_resource_type, 'id', f.linked_resource_id),
         'scan', jsonb_build_object('status', f.scan_status, 'signature', case when f.scan_status = 'infected' then f.scan_detail end),
         'rejection', case when f.status = 'rejected' then jsonb_build_object('code', f.rejection_code, 'detail', f.rejection_detail) end,
         'retention', jsonb_build_object('financial_record', f.retention is not null, 'legal_hold', f.legal_hold),
         'archived_at', app_private.iso_timestamp(f.archived_at),
         'created_at', app_private.iso_timestamp(f.created_at), 'updated_at', app_private.iso_timestamp(f.updated_at)) as doc,
       null::integer as version
  from app.files f
 where (f.linked_resource_type = 'invoice' and (select app.has_any_role('{manager,finance}')))
    or (f.linked_resource_type in ('project', 'task') and (select app.has_any_role('{member,manager}')));
alter view api.files owner to svc_api;
grant select on api.files to svc_runtime;

/** The file for one caller: FILE_NOT_FOUND when its linked resource is invisible to the caller
 * (or it does not exist), FILE_ACCESS_DENIED when the resource is visible but its files are not
 * the caller's to read, or (p_write) to change. */
create function app_private.file_for(p_id text, p_write boolean) returns app.files
language plpgsql stable
set search_path = pg_catalog
as $$
declare
  f app.files;
begin
  select * into f from app.files x where x.organization_id = app.current_organization_id() and x.id = p_id;
  if not found then
    perform app_private.raise('SVN04', 'FILE_NOT_FOUND', format('no file %s in your organization', p_id));
  end if;
  if not app.has_any_role(app_private.file_read_roles(f.linked_resource_type))
     or (p_write and not app.has_any_role(app_private.file_write_roles(f.linked_resource_type))) then
    perform app_private.raise('SVR04', 'FILE_ACCESS_DENIED',
      format('the files of this %s are for the Roles %s', f.linked_resource_type,
             array_to_string(case when p_write then app_private.file_write_roles(f.linked_resource_type) else app_private.file_read_roles(f.linked_resource_type) end, ', ')));
  end if;
  return f;
end
$$;
alter function app_private.file_for(text, boolean) owner to svc_api;

create function api.file_get(p_id text) returns table (doc jsonb, version integer)
language plpgsql stable security definer
set search_path = pg_catalog
as $$
begin
  perform app_private.file_for(p_id, false);
  return query select v.doc, v.version from api.files v where v.id = p_id;
end
$$;

/** createFileUpload: the linked resource, the caller's write access, the policy's type and size. */
create function api.file_upload_create(p_body jsonb, p_lifetime_seconds integer) returns jsonb
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_org text := app.current_organization_id();
  v_type text := p_body #>> '{linked_resource,type}';
  v_rid text := p_body #>> '{linked_resource,id}';
  v_visible boolean;
  v_policy record;
  u app.file_uploads;
begin
  v_visible := case v_type
    when 'project' then exists (select from app.projects p where p.organization_id = v_org and p.id = v_rid)
    when 'task' then exists (select from app.tasks t where t.organization_id = v_org and t.id = v_rid)
    when 'invoice' then exists (select from app.invoices i where i.organization_id = v_org and i.id = v_rid)
    else false end;
  if v_org is null or not v_visible then
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

/** The upload as the client sees it, with its capability token (the server turns it into the URL). */
create function app_private.file_upload_doc(u app.file_uploads) returns jsonb
language sql stable
set search_path = pg_catalog
as $$
  select jsonb_build_object('object', 'file_upload', 'id', u.id, 'status', u.status,
    'upload_token', u.id || '.' || app_private.capability_mac('upload', u.id),
    'expires_at', app_private.iso_timestamp(u.expires_at),
    'name', u.name, 'content_type', u.content_type, 'size_bytes', u.size_bytes, 'sha256', u.sha256,
    'linked_resource', jsonb_build_object('type', u.linked_resource_type, 'id', u.linked_resource_id),
    'limits', (select jsonb_build_object('max_size_bytes', p.max_size_bytes, 'allowed_content_types', to_jsonb(p.allowed_content_types))
                 from app_private.file_policy(u.organization_id) p),
    'file_id', u.file_id)
$$;
alter function app_private.file_upload_doc(app.file_uploads) owner to svc_api;

/** The same upload again (an idempotent replay shows the same URL; the stored response has no token). */
create function api.file_upload_get(p_id text) returns jsonb
language sql stable security definer
set search_path = pg_catalog
as $$
  select app_private.file_upload_doc(u) from app.file_uploads u
   where u.organization_id = app.current_organization_id() and u.id = p_id
$$;

/** The PUT to an upload URL starts here: the token is the credential. It checks the MAC, the
 * upload's state and expiry, and its client's standing, then sets that client's signed context
 * and locks the upload (a second PUT at once gets 55P03, 409 CONFLICT). */
create function api.file_upload_begin(p_token text)
returns table (outcome text, upload_id text, size_bytes bigint, content_type text, chunk_size integer, expires_at timestamptz)
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_id text := split_part(p_token, '.', 1);
  u app.file_uploads;
begin
  if p_token !~ '^upl_[A-Za-z0-9]{1,64}\.[0-9a-f]{64}$'
     or sha256(convert_to(split_part(p_token, '.', 2), 'UTF8')) <> sha256(convert_to(app_private.capability_mac('upload', v_id), 'UTF8')) then
    outcome := 'not_found';
    return next;
    return;
  end if;
  select * into u from app.file_uploads x where x.id = v_id for update nowait;
  if not found then
    outcome := 'not_found';
  elsif u.status <> 'pending' then
    outcome := 'used';
  elsif u.expires_at <= now() then
    outcome := 'expired';
  elsif not app_private.begin_delivery_context(u.created_by_client_id) then
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

/** Chunks p_first_seq, p_first_seq + 1, … of the upload the transaction holds, several per call
 * (one round trip), in base64: two thirds of hex's size on the wire and in the server's memory. */
create function api.file_upload_chunks(p_upload_id text, p_first_seq integer, variadic p_base64 text[]) returns void
language sql volatile security definer
set search_path = pg_catalog
as $$
  insert into app.file_chunks (organization_id, upload_id, seq, data)
  select app.current_organization_id(), p_upload_id, p_first_seq + (d.n - 1)::integer, decode(d.data, 'base64')
    from unnest(p_base64) with ordinality d (data, n)
$$;

create function api.file_upload_finish(p_upload_id text, p_size bigint, p_sha256 text, p_detected text, p_verified boolean) returns void
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  update app.file_uploads u
     set status = 'uploaded', received_size_bytes = p_size, received_sha256 = p_sha256,
         detected_content_type = p_detected, content_type_verified = p_verified
   where u.organization_id = app.current_organization_id() and u.id = p_upload_id and u.status = 'pending';
  if not found then
    perform app_private.raise('SVC09', 'CONFLICT', 'the upload is no longer pending');
  end if;
end
$$;

/** The scan job (graphile-worker's schema is the owner's). */
create function app_private.queue_file_scan(p_file_id text) returns void
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  perform graphile_worker.add_job('file_scan', json_build_object('file_id', p_file_id), job_key => 'file_scan:' || p_file_id,
                                  max_attempts => 10);
end
$$;
grant execute on function app_private.queue_file_scan(text) to svc_api;

/** completeFileUpload: what was stored must be what was declared; then the file, processing,
 * with its scan job. A completed upload answers its file again. */
create function api.file_upload_complete(p_upload_id text) returns table (doc jsonb, version integer)
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  u app.file_uploads;
  v_file text;
begin
  select * into u from app.file_uploads x
   where x.organization_id = app.current_organization_id() and x.id = p_upload_id for update;
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

/** createFileDownload: a token bound to the file, the client and an expiry. */
create function api.file_download_create(p_id text, p_lifetime_seconds integer) returns jsonb
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  f app.files := app_private.file_for(p_id, false);
  v_expires bigint := extract(epoch from now())::bigint + p_lifetime_seconds;
  v_message text := f.id || '.' || app.current_client_id() || '.' || v_expires;
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

/** A GET of a download URL: the token's MAC and expiry, the client's standing and its access to
 * the file now (a revoked Role or a disabled client stops the download). */
create function api.file_download_begin(p_token text)
returns table (outcome text, file_id text, name text, content_type text, size_bytes bigint, sha256 text, upload_id text, chunk_size integer)
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_parts text[] := string_to_array(p_token, '.');
  v_message text;
  f app.files;
begin
  outcome := 'not_found';
  if p_token !~ '^fil_[A-Za-z0-9]{1,64}\.apic_[A-Za-z0-9]{1,64}\.[0-9]{1,12}\.[0-9a-f]{64}$' then
    return next;
    return;
  end if;
  v_message := array_to_string(v_parts[1:3], '.');
  if sha256(convert_to(v_parts[4], 'UTF8')) <> sha256(convert_to(app_private.capability_mac('download', v_message), 'UTF8')) then
    return next;
    return;
  end if;
  if v_parts[3]::bigint <= extract(epoch from now()) then
    outcome := 'expired';
  elsif not app_private.begin_delivery_context(v_parts[2]) then
    outcome := 'client_inactive';
  else
    select x.* into f from app.files x join api.files v on v.id = x.id where x.id = v_parts[1];
    if not found or f.status <> 'ready' then
      outcome := 'not_found';
    else
      outcome := 'ok';
      file_id := f.id;
      name := f.name;
      content_type := f.content_type;
      size_bytes := f.size_bytes;
      sha256 := f.sha256;
      upload_id := f.upload_id;
      chunk_size := coalesce((select u.chunk_size from app.file_uploads u where u.organization_id = f.organization_id and u.id = f.upload_id),
                             greatest(f.size_bytes, 1)::integer);
    end if;
  end if;
  return next;
end
$$;

/** Chunks p_from..p_to of a readable file (a service-made file is one chunk: its content). */
create function api.file_chunks(p_file_id text, p_from integer, p_to integer) returns table (seq integer, data bytea)
language sql stable security definer
set search_path = pg_catalog
as $$
  select c.seq, c.data
    from api.files v join app.files f on f.organization_id = v.organization_id and f.id = v.id
    join app.file_chunks c on c.organization_id = f.organization_id and c.upload_id = f.upload_id
   where v.id = p_file_id and v.status = 'ready' and c.seq between p_from and p_to
  union all
  select 0, fc.content
    from api.files v join app.file_contents fc on fc.organization_id = v.organization_id and fc.file_id = v.id
   where v.id = p_file_id and v.status = 'ready' and p_from = 0
  order by 1
$$;

/** archiveFile: the writers of the linked resource; retention rules in the lifecycle trigger. */
create function api.file_archive(p_id text) returns table (doc jsonb, version integer)
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
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

do $$
declare
  r record;
begin
  for r in select p.oid::regprocedure as fn from pg_proc p join pg_namespace n on n.oid = p.pronamespace
            where n.nspname = 'api' and p.proname in ('file_get', 'file_upload_create', 'file_upload_get', 'file_upload_chunks',
                                                      'file_upload_finish', 'file_upload_complete', 'file_download_create',
                                                      'file_chunks', 'file_archive') loop
    execute format('alter function %s owner to svc_api', r.fn);
    execute format('grant execute on function %s to svc_runtime', r.fn);
  end loop;
end
$$;
-- They set a context, so they stay the owner's (as api.begin_request).
grant execute on function api.file_upload_begin(text), api.file_download_begin(text) to svc_runtime;

/** 7. The worker's side (run as the owner): a file's scan input, the outcome, the purge. */
create function app_private.file_scan_load(p_file_id text)
returns table (status text, organization_id text, upload_id text, size_bytes bigint, require_scan boolean)
language sql stable
set search_path = pg_catalog
as $$
  select f.status, f.organization_id, f.upload_id, f.size_bytes, (app_private.file_policy(f.organization_id)).require_scan
    from app.files f where f.id = p_file_id
$$;

/** p_outcome: clean, infected (p_detail: the signature), failed (the scanner could not scan it),
 * not_scanned (no scanner configured; p_required: the service insists on a scan anyway). */
create function app_private.file_scan_record(p_file_id text, p_outcome text, p_detail text, p_required boolean) returns text
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  f app.files;
begin
  select * into f from app.files x where x.id = p_file_id for update;
  if not found or f.status <> 'processing' then
    return coalesce(f.status, 'missing');
  end if;
  if p_outcome = 'clean' or (p_outcome = 'not_scanned' and not p_required and not (app_private.file_policy(f.organization_id)).require_scan) then
    update app.files x set status = 'ready', scan_status = p_outcome, scan_detail = null where x.id = f.id;
    return 'ready';
  end if;
  update app.files x
     set status = 'rejected', scan_status = case when p_outcome = 'not_scanned' then 'not_scanned' else p_outcome end,
         scan_detail = left(p_detail, 200), rejection_code = 'FILE_SCAN_FAILED',
         rejection_detail = case p_outcome
           when 'infected' then format('the virus scanner found %s', left(p_detail, 200))
           when 'failed' then 'the file could not be scanned'
           else 'a virus scan is required and no scanner is available' end
   where x.id = f.id;
  -- Infected or unscannable content is not kept.
  delete from app.file_chunks c where c.organization_id = f.organization_id and c.upload_id = f.upload_id;
  return 'rejected';
end
$$;

/** Uploads that never completed, past their expiry: they go with their bytes. */
create function control.purge_expired_uploads() returns integer
language sql volatile
set search_path = pg_catalog
as $$
  with gone as (delete from app.file_uploads u where u.status <> 'completed' and u.expires_at < now() - interval '1 minute' returning 1)
  select count(*)::integer from gone
$$;

/** Legal holds from the control plane (svc-admin file hold|release). */
create function control.file_set_legal_hold(p_file_id text, p_hold boolean) returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  update app.files f set legal_hold = p_hold where f.id = p_file_id;
  perform app_private.require_found(found, 'FILE_NOT_FOUND', p_file_id);
end
$$;

/** The worker asks whether a client may read an event's resource: files too. */
create or replace function app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text) returns boolean
language sql stable security definer
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
    when 'file' then exists (select from api.files v where v.id = p_resource_id)
    else false end
$$;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'files hold client content: restore a backup taken before 20261125000100'); end $$;
