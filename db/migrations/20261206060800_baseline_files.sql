-- migrate:up

/** The baseline, 8 of 16. Files: uploads in chunks, contents, scanning, links and download tokens.
 * Laid out by table: each table, then its keys and indexes, row security and policies, triggers
 * and their functions, and grants; then the area's views and commands. db/README.md, "The
 * baseline", says how it was made and proved equal to the migrations it replaced. */
set local check_function_bodies = false;
set local client_min_messages = warning;
set local search_path = '';

-- While this file runs, the owners of its functions and views may create in the schemas (`alter … owner to`
-- a role needs it when the migrating role is not a superuser); taken back at its end.
grant create on schema api, app, app_private, control, reporting, skills to svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- function app_private.file_write_roles(text)

create function app_private.file_write_roles(p_type text) returns text[]
    language sql immutable parallel safe
    set search_path to 'pg_catalog', 'pg_temp'
    as $$ select case p_type when 'invoice' then '{manager,finance}'::text[] else '{manager}'::text[] end $$;

alter function app_private.file_write_roles(p_type text) owner to svc_owner;

revoke all on function app_private.file_write_roles(p_type text) from public;
grant execute on function app_private.file_write_roles(p_type text) to svc_api;
grant execute on function app_private.file_write_roles(p_type text) to svc_worker;
grant execute on function app_private.file_write_roles(p_type text) to svc_admin;

-- function app_private.may_read_tickets()

create function app_private.may_read_tickets() returns boolean
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_org text;
begin
  if app_private.context_ok() then
    return 'tickets' = any (string_to_array(current_setting('svc.read_flags', true), ','));
  end if;
  v_org := app.current_organization_id();
  if v_org is null then
    return false;
  end if;
  perform app_private.refuse_on_coordinator('app_private.may_read_tickets()');
  return coalesce((select o.ticket_module_enabled
                      and (app.has_any_role('{member,manager}')
                           or (app.has_role('finance') and o.finance_may_read_tickets)
                           or (app.has_role('hr') and o.hr_may_read_tickets))
                     from app.organizations o where o.id = v_org), false);
end
$$;

alter function app_private.may_read_tickets() owner to svc_owner;

comment on function app_private.may_read_tickets() is 'Whether the caller may read tickets: the ticket module on, and the member or manager Role, or finance or hr where the organization grants them tickets (the spec''s Role matrix). In a request it is the tickets read flag signed into the context by begin_request; without one (a BI session) it reads the organization''s ticket settings (refused on a Citus coordinator, SV500 NOT_IN_ITS_WORKER), and without an organization it is false. It runs as svc_owner, the owner of the policy helpers, whose policy shows only the context''s organization, and it reads no other.';

revoke all on function app_private.may_read_tickets() from public;
grant execute on function app_private.may_read_tickets() to svc_api;
grant execute on function app_private.may_read_tickets() to svc_runtime;
grant execute on function app_private.may_read_tickets() to svc_reporting;
grant execute on function app_private.may_read_tickets() to svc_worker;
grant execute on function app_private.may_read_tickets() to svc_admin;
grant execute on function app_private.may_read_tickets() to svc_gate;

-- function app_private.default_file_content_types()

create function app_private.default_file_content_types() returns text[]
    language sql immutable parallel safe
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
  select '{application/pdf,image/png,image/jpeg,image/gif,image/webp,text/plain,text/csv,application/json,application/zip,application/vnd.openxmlformats-officedocument.wordprocessingml.document,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet,application/vnd.openxmlformats-officedocument.presentationml.presentation}'::text[]
$$;

alter function app_private.default_file_content_types() owner to svc_owner;

revoke all on function app_private.default_file_content_types() from public;
grant execute on function app_private.default_file_content_types() to svc_worker;
grant execute on function app_private.default_file_content_types() to svc_admin;

-- function app_private.download_link(text, text, text)

create function app_private.download_link(p_token text, p_prefix text, p_purpose text, out id text, out organization_id text, out client_id text, out expires bigint) returns record
    language plpgsql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
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
$_$;

alter function app_private.download_link(p_token text, p_prefix text, p_purpose text, out id text, out organization_id text, out client_id text, out expires bigint) owner to svc_owner;

comment on function app_private.download_link(p_token text, p_prefix text, p_purpose text, out id text, out organization_id text, out client_id text, out expires bigint) is 'A download link''s parts once its signature holds (nulls otherwise); sets svc.gate_organization to the organization it names, for the beginning that called it.';

revoke all on function app_private.download_link(p_token text, p_prefix text, p_purpose text, out id text, out organization_id text, out client_id text, out expires bigint) from public;
grant execute on function app_private.download_link(p_token text, p_prefix text, p_purpose text, out id text, out organization_id text, out client_id text, out expires bigint) to svc_worker;
grant execute on function app_private.download_link(p_token text, p_prefix text, p_purpose text, out id text, out organization_id text, out client_id text, out expires bigint) to svc_admin;
grant execute on function app_private.download_link(p_token text, p_prefix text, p_purpose text, out id text, out organization_id text, out client_id text, out expires bigint) to svc_gate;

-- function app_private.file_link(text)

create function app_private.file_link(p_id text, out linked_resource_type text, out linked_resource_id text) returns record
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_org text := app.current_organization_id();
begin
  select f.linked_resource_type, f.linked_resource_id into linked_resource_type, linked_resource_id
    from app.files f where f.organization_id = v_org and f.id = p_id;
end
$$;

alter function app_private.file_link(p_id text, out linked_resource_type text, out linked_resource_id text) owner to svc_owner;

comment on function app_private.file_link(p_id text, out linked_resource_type text, out linked_resource_id text) is 'The resource (type and id) that a file of the request''s organization is linked to, whatever the caller''s Roles: svc_api''s policy hides a file whose linked resource''s files the caller may not read, and app_private.file_for uses this link to answer SVR04 FILE_ACCESS_DENIED (the caller sees the resource but not its files) instead of SVN04 FILE_NOT_FOUND. It runs as svc_owner, whose policy shows the request''s organization without the Role filter; it reads only that organization and returns only the link, never the file.';

revoke all on function app_private.file_link(p_id text, out linked_resource_type text, out linked_resource_id text) from public;
grant execute on function app_private.file_link(p_id text, out linked_resource_type text, out linked_resource_id text) to svc_api;
grant execute on function app_private.file_link(p_id text, out linked_resource_type text, out linked_resource_id text) to svc_worker;
grant execute on function app_private.file_link(p_id text, out linked_resource_type text, out linked_resource_id text) to svc_admin;

-- function app_private.file_policy(text)

create function app_private.file_policy(p_org text, out max_size_bytes bigint, out allowed_content_types text[], out require_scan boolean) returns record
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  select coalesce(p.max_size_bytes, 104857600), coalesce(p.allowed_content_types, app_private.default_file_content_types()),
         coalesce(p.require_scan, false)
    into max_size_bytes, allowed_content_types, require_scan
    from (select 1) one left join app.file_policies p on p.organization_id = p_org;
end
$$;

alter function app_private.file_policy(p_org text, out max_size_bytes bigint, out allowed_content_types text[], out require_scan boolean) owner to svc_owner;

comment on function app_private.file_policy(p_org text, out max_size_bytes bigint, out allowed_content_types text[], out require_scan boolean) is 'An organization''s file policy in force: its row of app.file_policies, or the defaults (100 MiB, the default content types, no scan required). It runs as svc_owner, the owner of the policy helpers, so that createFileUpload, the file lifecycle trigger and the worker''s scan job read the settings under one policy: the request''s organization (every organization only in an operator session), so within a request another organization''s settings are never read.';

revoke all on function app_private.file_policy(p_org text, out max_size_bytes bigint, out allowed_content_types text[], out require_scan boolean) from public;
grant execute on function app_private.file_policy(p_org text, out max_size_bytes bigint, out allowed_content_types text[], out require_scan boolean) to svc_api;
grant execute on function app_private.file_policy(p_org text, out max_size_bytes bigint, out allowed_content_types text[], out require_scan boolean) to svc_worker;
grant execute on function app_private.file_policy(p_org text, out max_size_bytes bigint, out allowed_content_types text[], out require_scan boolean) to svc_admin;

-- function app_private.file_read_roles(text)

create function app_private.file_read_roles(p_type text) returns text[]
    language sql immutable parallel safe
    set search_path to 'pg_catalog', 'pg_temp'
    as $$ select case p_type when 'invoice' then '{manager,finance}'::text[] when 'ticket' then '{member,manager,finance,hr}'::text[]
                         else '{member,manager}'::text[] end $$;

alter function app_private.file_read_roles(p_type text) owner to svc_owner;

revoke all on function app_private.file_read_roles(p_type text) from public;
grant execute on function app_private.file_read_roles(p_type text) to svc_api;
grant execute on function app_private.file_read_roles(p_type text) to svc_worker;
grant execute on function app_private.file_read_roles(p_type text) to svc_admin;

-- function app_private.file_scan_load(text, text)

create function app_private.file_scan_load(p_organization_id text, p_file_id text) returns table(status text, organization_id text, upload_id text, size_bytes bigint, require_scan boolean)
    language plpgsql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  return query
    select f.status, f.organization_id, f.upload_id, f.size_bytes, (app_private.file_policy(f.organization_id)).require_scan
      from app.files f where f.organization_id = p_organization_id and f.id = p_file_id;
end
$$;

alter function app_private.file_scan_load(p_organization_id text, p_file_id text) owner to svc_owner;

revoke all on function app_private.file_scan_load(p_organization_id text, p_file_id text) from public;
grant execute on function app_private.file_scan_load(p_organization_id text, p_file_id text) to svc_worker;
grant execute on function app_private.file_scan_load(p_organization_id text, p_file_id text) to svc_admin;

-- function app_private.file_scan_record(text, text, text, text, boolean)

create function app_private.file_scan_record(p_organization_id text, p_file_id text, p_outcome text, p_detail text, p_required boolean) returns text
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.file_scan_record(p_organization_id text, p_file_id text, p_outcome text, p_detail text, p_required boolean) owner to svc_owner;

revoke all on function app_private.file_scan_record(p_organization_id text, p_file_id text, p_outcome text, p_detail text, p_required boolean) from public;
grant execute on function app_private.file_scan_record(p_organization_id text, p_file_id text, p_outcome text, p_detail text, p_required boolean) to svc_worker;
grant execute on function app_private.file_scan_record(p_organization_id text, p_file_id text, p_outcome text, p_detail text, p_required boolean) to svc_admin;

-- function app_private.linked_resource_visible(text, text, text)

create function app_private.linked_resource_visible(p_org text, p_type text, p_id text) returns boolean
    language plpgsql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.linked_resource_visible(p_org text, p_type text, p_id text) owner to svc_api;

revoke all on function app_private.linked_resource_visible(p_org text, p_type text, p_id text) from public;
grant execute on function app_private.linked_resource_visible(p_org text, p_type text, p_id text) to svc_owner;
grant execute on function app_private.linked_resource_visible(p_org text, p_type text, p_id text) to svc_worker;
grant execute on function app_private.linked_resource_visible(p_org text, p_type text, p_id text) to svc_admin;

-- function app_private.queue_file_scan(text)

create function app_private.queue_file_scan(p_file_id text) returns void
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  perform app_private.queue_job(v__organization_id, 'file_scan', json_build_object('file_id', p_file_id),
                                'file_scan:' || p_file_id, 10);
end
$$;

alter function app_private.queue_file_scan(p_file_id text) owner to svc_owner;

comment on function app_private.queue_file_scan(p_file_id text) is 'Queues the file_scan job of a newly completed upload (job key file_scan:<file id>, 10 attempts), through app_private.queue_job, in the writer''s transaction, so the scan is queued only if the file commits. It runs as svc_owner because svc_api may not write graphile-worker''s queue (on Citus the organization''s job outbox); the job names the request''s organization, which the queue''s policy requires (SV500 JOB_WITHOUT_ORGANIZATION without one).';

revoke all on function app_private.queue_file_scan(p_file_id text) from public;
grant execute on function app_private.queue_file_scan(p_file_id text) to svc_api;
grant execute on function app_private.queue_file_scan(p_file_id text) to svc_worker;
grant execute on function app_private.queue_file_scan(p_file_id text) to svc_admin;

-- function app_private.tg_file_bytes__of_parent()

create function app_private.tg_file_bytes__of_parent() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
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

alter function app_private.tg_file_bytes__of_parent() owner to svc_owner;

comment on function app_private.tg_file_bytes__of_parent() is 'BEFORE INSERT trigger on app.file_chunks and app.file_contents: copies from the parent row, whatever the insert said, the linked resource type (of the chunk''s upload, or of the content''s file) and, for a chunk, the upload''s creating client. The row policies on the bytes then judge the row alone (on Citus a policy may not read another table), and the copy stays true because bytes never change parent; it runs as svc_owner to read the parent past the caller''s policies, by the row''s own organization.';

revoke all on function app_private.tg_file_bytes__of_parent() from public;
grant execute on function app_private.tg_file_bytes__of_parent() to svc_worker;
grant execute on function app_private.tg_file_bytes__of_parent() to svc_admin;

-- table app.file_uploads

create table app.file_uploads (
    organization_id text not null,
    id text default app_private.new_id('upl'::text) not null,
    name text not null,
    content_type text not null,
    size_bytes bigint not null,
    sha256 text not null,
    linked_resource_type text not null,
    linked_resource_id text not null,
    status text default 'pending'::text not null,
    chunk_size integer default 32768 not null,
    received_size_bytes bigint,
    received_sha256 text,
    detected_content_type text,
    content_type_verified boolean,
    file_id text,
    created_by_client_id text not null,
    expires_at timestamp with time zone not null,
    created_at timestamp with time zone default now() not null,
    uploaded_at timestamp with time zone,
    constraint file_uploads_chunk_size_range check (((chunk_size >= 1024) and (chunk_size <= 8388608))),
    constraint file_uploads_content_type_format check ((content_type ~ '^[a-z]+/[a-z0-9.+-]+$'::text)),
    constraint file_uploads_linked_resource_type_valid check ((linked_resource_type = any (array['project'::text, 'task'::text, 'invoice'::text, 'ticket'::text]))),
    constraint file_uploads_name_valid check (((length(name) between 1 and 255) and (name !~ '[[:cntrl:]]'::text))),
    constraint file_uploads_received check (((status = 'pending'::text) = (received_size_bytes is null))),
    constraint file_uploads_sha256_format check ((sha256 ~ '^[0-9a-f]{64}$'::text)),
    constraint file_uploads_size_positive check ((size_bytes > 0)),
    constraint file_uploads_status_valid check ((status = any (array['pending'::text, 'uploaded'::text, 'completed'::text])))
);

alter table only app.file_uploads force row level security;

alter table only app.file_uploads
    add constraint file_uploads_pkey primary key (organization_id, id);

create index file_uploads_expiry on app.file_uploads using btree (expires_at) where (status <> 'completed'::text);

create index file_uploads_id on app.file_uploads using btree (id);

alter table only app.file_uploads
    add constraint file_uploads_organization_id_created_by_client_id_fkey foreign key (organization_id, created_by_client_id) references app.api_clients(organization_id, id);

alter table only app.file_uploads
    add constraint file_uploads_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table app.file_uploads enable row level security;

create policy "The gate locks uploads a link names" on app.file_uploads for update to svc_gate using (organization_id = current_setting('svc.gate_organization'::text, true));

comment on policy "The gate locks uploads a link names" on app.file_uploads is 'svc_gate may lock (UPDATE, which FOR UPDATE requires) only uploads of the organization that a verified upload link names, set in svc.gate_organization by api.file_upload_begin once the link''s signature holds: so the gate serializes PUTs to one upload without a request context and with nothing of another organization in reach. The gate is granted UPDATE of status alone and changes nothing.';

create policy "Clients move their own uploads on" on app.file_uploads for update to svc_api using (((organization_id = (select app.current_organization_id())) and (created_by_client_id = (select app.current_client_id())))) with check (((organization_id = (select app.current_organization_id())) and (created_by_client_id = (select app.current_client_id()))));

comment on policy "Clients move their own uploads on" on app.file_uploads is 'svc_api may UPDATE only uploads of the request''s organization that the request''s client created, and cannot hand one to another client or organization: an upload is its client''s own until it becomes a file. Which moves are legal (pending to uploaded to completed, the declaration fixed) is the lifecycle trigger''s to decide.';

create policy "Clients see their own uploads" on app.file_uploads for select to svc_api using ((organization_id = (select app.current_organization_id())) and (created_by_client_id = (select app.current_client_id())));

comment on policy "Clients see their own uploads" on app.file_uploads is 'svc_api may SELECT only uploads of the request''s organization that the request''s client created: an upload, its capability token and its progress are private to the client that started it until it completes into a file, which then follows its linked resource''s access.';

create policy "Commands act in the request's organization" on app.file_uploads to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.file_uploads is 'svc_owner, svc_worker and svc_admin may read and write uploads of the request''s organization, or of every organization in an operator session (the worker, svc-admin, migrations): the triggers that check uploads against their files and chunks, and the purge of expired uploads. A command with a wrong WHERE inside a request still reaches no other organization''s uploads.';

create policy "The gate reads uploads a link names" on app.file_uploads for select to svc_gate using ((organization_id = current_setting('svc.gate_organization'::text, true)) or (organization_id = (select app.current_organization_id())));

comment on policy "The gate reads uploads a link names" on app.file_uploads is 'svc_gate may SELECT uploads only of the organization that a verified link names (svc.gate_organization, set once the link''s signature holds) or of the signed client context the link opened: api.file_upload_begin finds the upload and its client before any request context exists, and api.file_download_begin the chunk size of a file''s upload. Nothing of another organization is in reach.';

create policy "Writers of the linked resource start uploads" on app.file_uploads for insert to svc_api with check ((organization_id = (select app.current_organization_id())) and (created_by_client_id = (select app.current_client_id())) and app.has_any_role(app_private.file_write_roles(linked_resource_type)));

comment on policy "Writers of the linked resource start uploads" on app.file_uploads is 'svc_api may INSERT an upload only in the request''s organization, recorded as the request''s client''s, and only when the context holds the write Roles of the linked resource type (invoice: manager or finance; project, task, ticket: manager): the spec lets only writers of the linked resource upload to it.';

create function app_private.tg_file_uploads__lifecycle() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.tg_file_uploads__lifecycle() owner to svc_owner;

comment on function app_private.tg_file_uploads__lifecycle() is 'BEFORE INSERT, UPDATE or DELETE trigger on app.file_uploads: an upload starts pending and moves only pending, uploaded, completed; its declaration (name, type, size, checksum, linked resource, chunk size, client, expiry) never changes, what was received is recorded once and must equal the bytes its chunks hold, it completes only with a file and verified bytes matching the declaration, and once it made a file it is never deleted. Every refusal is SVC09 CONFLICT, for every writer.';

create trigger _100_lifecycle before insert or delete or update on app.file_uploads for each row execute function app_private.tg_file_uploads__lifecycle();

grant select,insert,update on table app.file_uploads to svc_api;
grant select,insert,delete,update on table app.file_uploads to svc_owner;
grant select,insert,delete,update on table app.file_uploads to svc_worker;
grant select,insert,delete,update on table app.file_uploads to svc_admin;
grant select on table app.file_uploads to svc_gate;

grant update(status) on table app.file_uploads to svc_gate;

revoke all on function app_private.tg_file_uploads__lifecycle() from public;
grant execute on function app_private.tg_file_uploads__lifecycle() to svc_worker;
grant execute on function app_private.tg_file_uploads__lifecycle() to svc_admin;

-- function app_private.file_upload_doc(app.file_uploads)

create function app_private.file_upload_doc(u app.file_uploads) returns jsonb
    language sql stable
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.file_upload_doc(u app.file_uploads) owner to svc_api;

revoke all on function app_private.file_upload_doc(u app.file_uploads) from public;
grant execute on function app_private.file_upload_doc(u app.file_uploads) to svc_owner;
grant execute on function app_private.file_upload_doc(u app.file_uploads) to svc_worker;
grant execute on function app_private.file_upload_doc(u app.file_uploads) to svc_admin;

-- table app.files

create table app.files (
    organization_id text not null,
    id text default app_private.new_id('fil'::text) not null,
    name text not null,
    content_type text not null,
    size_bytes bigint not null,
    sha256 text not null,
    status text default 'ready'::text not null,
    linked_resource_type text not null,
    linked_resource_id text not null,
    retention text,
    created_by_client_id text,
    created_at timestamp with time zone default now() not null,
    upload_id text,
    scan_status text default 'not_scanned'::text not null,
    scan_detail text,
    rejection_code text,
    rejection_detail text,
    legal_hold boolean default false not null,
    archived_at timestamp with time zone,
    updated_at timestamp with time zone default now() not null,
    constraint files_content_type_format check ((content_type ~ '^[a-z]+/[a-z0-9.+-]+$'::text)),
    constraint files_linked_resource_type_valid check ((linked_resource_type = any (array['project'::text, 'task'::text, 'invoice'::text, 'ticket'::text]))),
    constraint files_name_length check (((length(name) >= 1) and (length(name) <= 255))),
    constraint files_rejected_has_code check (((status = 'rejected'::text) = (rejection_code is not null))),
    constraint files_rejection_code_valid check ((rejection_code = 'FILE_SCAN_FAILED'::text)),
    constraint files_retention_valid check ((retention = 'financial_record'::text)),
    constraint files_scan_status_valid check ((scan_status = any (array['pending'::text, 'clean'::text, 'infected'::text, 'failed'::text, 'not_scanned'::text]))),
    constraint files_sha256_format check ((sha256 ~ '^[0-9a-f]{64}$'::text)),
    constraint files_size_positive check ((size_bytes > 0)),
    constraint files_status_valid check ((status = any (array['processing'::text, 'ready'::text, 'rejected'::text, 'archived'::text])))
);

alter table only app.files force row level security;

alter table only app.files
    add constraint files_pkey primary key (organization_id, id);

alter table only app.files
    add constraint files_upload_unique unique (organization_id, upload_id);

create index files_id on app.files using btree (id);

create index files_linked on app.files using btree (organization_id, linked_resource_type, linked_resource_id);

create index files_list on app.files using btree (organization_id, created_at desc, id desc);

alter table only app.files
    add constraint files_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table only app.files
    add constraint files_organization_id_upload_id_fkey foreign key (organization_id, upload_id) references app.file_uploads(organization_id, id);

alter table app.files enable row level security;

create policy "Commands act in the request's organization" on app.files to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.files is 'svc_owner, svc_worker and svc_admin may read and write files of the request''s organization, or of every organization in an operator session (the worker, svc-admin, migrations): the service''s own files (invoice PDFs), the scan job''s ready or rejected outcome, legal holds set by svc-admin, and the triggers and helpers that read files. A command with a wrong WHERE inside a request still reaches no other organization''s files.';

create policy "Files are visible where the linked resource is" on app.files for select to svc_api using ((organization_id = (select app.current_organization_id())) and
case linked_resource_type
    when 'invoice'::text then (select app.has_any_role('{manager,finance}'::text[]))
    when 'ticket'::text then (select app_private.may_read_tickets())
    else (select app.has_any_role('{member,manager}'::text[]))
end);

comment on policy "Files are visible where the linked resource is" on app.files is 'svc_api may SELECT files of the request''s organization only where the context''s Roles read the linked resource''s files (the spec: files inherit access from the linked resource): invoice files manager or finance, ticket files whoever may read tickets (app_private.may_read_tickets), project and task files member or manager. A file hidden here answers 404 or 403 through app_private.file_link, by whether the caller sees the resource itself.';

create policy "The gate reads files a link opened" on app.files for select to svc_gate using (organization_id = (select app.current_organization_id()));

comment on policy "The gate reads files a link opened" on app.files is 'svc_gate may SELECT files only of the organization of the signed client context that a download link opened (api.file_download_begin, after the link''s signature, expiry and client standing are checked): the gate reads a download''s file without a request context of its own and nothing of another organization.';

create policy "Writers of the linked resource add uploaded files" on app.files for insert to svc_api with check ((organization_id = (select app.current_organization_id())) and (upload_id is not null) and app.has_any_role(app_private.file_write_roles(linked_resource_type)));

comment on policy "Writers of the linked resource add uploaded files" on app.files is 'svc_api may INSERT a file only in the request''s organization, only from an upload (upload_id set), and only when the context holds the write Roles of the linked resource type (invoice: manager or finance; project, task, ticket: manager), as the spec gives files the linked resource''s write permission. Files the service makes itself (invoice PDFs) come from svc_owner, and the lifecycle trigger checks that the upload''s bytes were verified against its declaration.';

create policy "Writers of the linked resource change files" on app.files for update to svc_api using (((organization_id = (select app.current_organization_id())) and app.has_any_role(app_private.file_write_roles(linked_resource_type)))) with check ((organization_id = (select app.current_organization_id())));

comment on policy "Writers of the linked resource change files" on app.files is 'svc_api may UPDATE files of the request''s organization only when the context holds the write Roles of the file''s linked resource type (invoice: manager or finance; project, task, ticket: manager), and a file cannot leave the organization. Which changes are legal (ready to archived only; content and identity never change; retained files kept) is decided by the lifecycle and retention triggers.';

create function app_private.tg_files__retention() returns trigger
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.tg_files__retention() owner to svc_owner;

comment on function app_private.tg_files__retention() is 'BEFORE UPDATE or DELETE trigger on app.files, first of its triggers: a file under retention (a posted financial record, such as an issued invoice''s PDF) is never archived (SVC09 RETENTION_BLOCKED), deleted, or changed in anything but its legal hold (SVC09 CONFLICT). It reads only the row, so it runs as the writer.';

create function app_private.tg_files__emit() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if new.status is distinct from old.status and new.status in ('ready', 'rejected', 'archived') then
    perform app_private.emit_event(new.organization_id, 'file.' || new.status, 'file', new.id, 1);
  end if;
  return null;
end
$$;

alter function app_private.tg_files__emit() owner to svc_owner;

comment on function app_private.tg_files__emit() is 'AFTER UPDATE trigger on app.files: when a file''s status changes to ready, rejected or archived it writes the file.ready, file.rejected or file.archived event to the outbox (app_private.emit_event) in the writer''s transaction, so subscribers hear of it only if the change commits. It runs as svc_owner because svc_api, which archives files within a request, may only read app.events.';

create function app_private.tg_files__lifecycle() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.tg_files__lifecycle() owner to svc_owner;

comment on function app_private.tg_files__lifecycle() is 'BEFORE INSERT, UPDATE or DELETE trigger on app.files: an uploaded file starts processing and only from an uploaded upload whose verified bytes match its declaration, a file the service made starts ready; a file moves processing to ready (scanned clean, or not scanned where the organization''s file policy requires no scan) or rejected, and ready to archived; files are archived, not deleted (only rejected ones go), their content and identity never change and their checks are recorded once (SVC09 CONFLICT). Archiving is refused for a posted financial record, a file under legal hold or one attached to a posted invoice (SVC09 RETENTION_BLOCKED).';

create trigger _040_retention before delete or update on app.files for each row execute function app_private.tg_files__retention();

create trigger _100_lifecycle before insert or delete or update on app.files for each row execute function app_private.tg_files__lifecycle();

create trigger _950_emit_event after update on app.files for each row execute function app_private.tg_files__emit();

grant select,insert,update on table app.files to svc_api;
grant select,insert,delete,update on table app.files to svc_owner;
grant select,insert,delete,update on table app.files to svc_worker;
grant select,insert,delete,update on table app.files to svc_admin;
grant select on table app.files to svc_gate;

revoke all on function app_private.tg_files__emit() from public;
grant execute on function app_private.tg_files__emit() to svc_worker;
grant execute on function app_private.tg_files__emit() to svc_admin;

revoke all on function app_private.tg_files__lifecycle() from public;
grant execute on function app_private.tg_files__lifecycle() to svc_worker;
grant execute on function app_private.tg_files__lifecycle() to svc_admin;

revoke all on function app_private.tg_files__retention() from public;
grant execute on function app_private.tg_files__retention() to svc_worker;
grant execute on function app_private.tg_files__retention() to svc_admin;

-- foreign key app.invoices invoices_pdf_file_fkey

alter table only app.invoices
    add constraint invoices_pdf_file_fkey foreign key (organization_id, pdf_file_id) references app.files(organization_id, id) on delete restrict;

-- function app_private.file_for(text, boolean)

create function app_private.file_for(p_id text, p_write boolean) returns app.files
    language plpgsql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.file_for(p_id text, p_write boolean) owner to svc_api;

revoke all on function app_private.file_for(p_id text, p_write boolean) from public;
grant execute on function app_private.file_for(p_id text, p_write boolean) to svc_owner;
grant execute on function app_private.file_for(p_id text, p_write boolean) to svc_worker;
grant execute on function app_private.file_for(p_id text, p_write boolean) to svc_admin;

-- table app.file_chunks

create table app.file_chunks (
    organization_id text not null,
    upload_id text not null,
    seq integer not null,
    data bytea not null,
    linked_resource_type text not null,
    client_id text not null,
    constraint file_chunks_seq_not_negative check ((seq >= 0))
);

alter table only app.file_chunks force row level security;

alter table only app.file_chunks
    add constraint file_chunks_pkey primary key (organization_id, upload_id, seq);

alter table only app.file_chunks
    add constraint file_chunks_organization_id_upload_id_fkey foreign key (organization_id, upload_id) references app.file_uploads(organization_id, id) on delete cascade;

alter table app.file_chunks enable row level security;

create policy "Chunks are readable where their file is" on app.file_chunks for select to svc_api using ((organization_id = (select app.current_organization_id())) and
case linked_resource_type
    when 'invoice'::text then (select app.has_any_role('{manager,finance}'::text[]))
    when 'ticket'::text then (select app_private.may_read_tickets())
    else (select app.has_any_role('{member,manager}'::text[]))
end);

comment on policy "Chunks are readable where their file is" on app.file_chunks is 'svc_api may SELECT upload chunks of the request''s organization whose linked resource type the context''s Roles read: invoice files manager or finance, ticket files whoever may read tickets, project and task files member or manager (the spec: files inherit access from the linked resource). The chunk carries its upload''s linked_resource_type (copied by a trigger), so the policy judges the row alone; downloads read chunks only of a ready file that api.files shows.';

create policy "Clients write the bytes of their own pending uploads" on app.file_chunks for insert to svc_api with check ((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id())));

comment on policy "Clients write the bytes of their own pending uploads" on app.file_chunks is 'svc_api may INSERT chunks only in the request''s organization and only for the request''s client, the upload''s creator that a trigger copies into the row whatever the insert says: a client writes bytes into its own uploads alone. That the upload is still pending and the chunk within its chunk size is the chunk guard trigger''s check.';

create policy "Commands act in the request's organization" on app.file_chunks to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.file_chunks is 'svc_owner, svc_worker and svc_admin may read and write upload chunks of the request''s organization, or of every organization in an operator session (the worker, svc-admin, migrations): the triggers that guard chunks and check an upload''s received size, and the scan job that reads them and deletes a rejected file''s bytes. A command with a wrong WHERE inside a request still reaches no other organization''s bytes.';

create function app_private.tg_file_chunks__guard() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.tg_file_chunks__guard() owner to svc_owner;

comment on function app_private.tg_file_chunks__guard() is 'BEFORE INSERT, UPDATE or DELETE trigger on app.file_chunks: bytes are accepted only while their upload is pending and each chunk is at most the upload''s chunk size, never change, and are deleted only with an upload that made no file or from a rejected file (the purge of infected content); each refusal is SVC09 CONFLICT. It holds for every writer, so a file''s bytes are exactly those that were verified.';

create trigger _010_of_parent before insert on app.file_chunks for each row execute function app_private.tg_file_bytes__of_parent();

create trigger _050_guard before insert or delete or update on app.file_chunks for each row execute function app_private.tg_file_chunks__guard();

revoke all on function app_private.tg_file_chunks__guard() from public;
grant execute on function app_private.tg_file_chunks__guard() to svc_worker;
grant execute on function app_private.tg_file_chunks__guard() to svc_admin;

grant select,insert on table app.file_chunks to svc_api;
grant select,insert,delete,update on table app.file_chunks to svc_owner;
grant select,insert,delete,update on table app.file_chunks to svc_worker;
grant select,insert,delete,update on table app.file_chunks to svc_admin;

-- table app.file_contents

create table app.file_contents (
    organization_id text not null,
    file_id text not null,
    content bytea not null,
    linked_resource_type text not null
);

alter table only app.file_contents force row level security;

alter table only app.file_contents
    add constraint file_contents_pkey primary key (organization_id, file_id);

alter table only app.file_contents
    add constraint file_contents_file_fkey foreign key (organization_id, file_id) references app.files(organization_id, id) on delete cascade;

alter table app.file_contents enable row level security;

create policy "Commands act in the request's organization" on app.file_contents to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.file_contents is 'svc_owner, svc_worker and svc_admin may read and write stored file content of the request''s organization, or of every organization in an operator session (the worker, svc-admin, migrations): the invoice PDF that api.invoice_attach_pdf stores, and the worker''s reply email, which attaches a stored file. A command with a wrong WHERE inside a request still reaches no other organization''s content.';

create policy "File content is readable where the file is" on app.file_contents for select to svc_api using ((organization_id = (select app.current_organization_id())) and
case linked_resource_type
    when 'invoice'::text then (select app.has_any_role('{manager,finance}'::text[]))
    when 'ticket'::text then (select app_private.may_read_tickets())
    else (select app.has_any_role('{member,manager}'::text[]))
end);

comment on policy "File content is readable where the file is" on app.file_contents is 'svc_api may SELECT stored content (files the service made, such as invoice PDFs) of the request''s organization only where the context''s Roles read the file''s linked resource type: invoice files manager or finance, ticket files whoever may read tickets, project and task files member or manager. The content row carries its file''s linked_resource_type (copied by a trigger), so the policy judges the row alone.';

create function app_private.tg_file_contents__check() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.tg_file_contents__check() owner to svc_owner;

comment on function app_private.tg_file_contents__check() is 'BEFORE INSERT, UPDATE or DELETE trigger on app.file_contents: stored content is only inserted, never changed or deleted (SVC09 CONFLICT), and must match its file''s recorded size and SHA-256 (SVV22 VALIDATION_FAILED), so a file''s record always describes its content. It runs as svc_owner to read the file row by the content''s own organization.';

create trigger _010_of_parent before insert on app.file_contents for each row execute function app_private.tg_file_bytes__of_parent();

create trigger _050_check before insert or delete or update on app.file_contents for each row execute function app_private.tg_file_contents__check();

revoke all on function app_private.tg_file_contents__check() from public;
grant execute on function app_private.tg_file_contents__check() to svc_worker;
grant execute on function app_private.tg_file_contents__check() to svc_admin;

grant select on table app.file_contents to svc_api;
grant select,insert,delete,update on table app.file_contents to svc_owner;
grant select,insert,delete,update on table app.file_contents to svc_worker;
grant select,insert,delete,update on table app.file_contents to svc_admin;

-- table app.file_policies

create table app.file_policies (
    organization_id text not null,
    max_size_bytes bigint not null,
    allowed_content_types text[] not null,
    require_scan boolean default false not null,
    constraint file_policies_max_size_range check (((max_size_bytes >= 1) and (max_size_bytes <= '5368709120'::bigint))),
    constraint file_policies_types_bounded check (((cardinality(allowed_content_types) >= 1) and (cardinality(allowed_content_types) <= 100)))
);

alter table only app.file_policies force row level security;

alter table only app.file_policies
    add constraint file_policies_pkey primary key (organization_id);

alter table only app.file_policies
    add constraint file_policies_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table app.file_policies enable row level security;

create policy "Clients read their organization's file policy" on app.file_policies for select to svc_api using (organization_id = (select app.current_organization_id()));

comment on policy "Clients read their organization's file policy" on app.file_policies is 'svc_api may SELECT only the file policy of the request''s organization (size limit, permitted content types, whether a scan is required), which createFileUpload applies and returns with each upload. Any Role may read it; only the control plane writes it.';

create policy "Commands act in the request's organization" on app.file_policies to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.file_policies is 'svc_owner, svc_worker and svc_admin may read and write file policies of the request''s organization, or of every organization in an operator session: svc-admin sets an organization''s policy (control.file_policy_set), the scan job reads whether a scan is required, and app_private.file_policy reads it inside a request. A command with a wrong WHERE inside a request still reaches no other organization''s row.';

grant select on table app.file_policies to svc_api;
grant select,insert,delete,update on table app.file_policies to svc_owner;
grant select,insert,delete,update on table app.file_policies to svc_worker;
grant select,insert,delete,update on table app.file_policies to svc_admin;

-- view api.files

create view api.files as
 select f.organization_id,
    f.id,
    f.status,
    f.linked_resource_type,
    f.linked_resource_id,
    f.content_type,
    f.created_at,
    jsonb_build_object('object', 'file', 'id', f.id, 'name', f.name, 'content_type', f.content_type, 'size_bytes', f.size_bytes, 'sha256', f.sha256, 'status', f.status, 'linked_resource', jsonb_build_object('type', f.linked_resource_type, 'id', f.linked_resource_id), 'scan', jsonb_build_object('status', f.scan_status, 'signature',
        case
            when (f.scan_status = 'infected'::text) then f.scan_detail
            else null::text
        end), 'rejection',
        case
            when (f.status = 'rejected'::text) then jsonb_build_object('code', f.rejection_code, 'detail', f.rejection_detail)
            else null::jsonb
        end, 'retention', jsonb_build_object('financial_record', (f.retention is not null), 'legal_hold', f.legal_hold), 'archived_at', app_private.iso_timestamp(f.archived_at), 'created_at', app_private.iso_timestamp(f.created_at), 'updated_at', app_private.iso_timestamp(f.updated_at)) as doc,
    null::integer as version
   from app.files f;

alter view api.files owner to svc_api;

grant select on table api.files to svc_runtime;
grant select on table api.files to svc_owner;
grant select on table api.files to svc_gate;

-- function api.file_archive(text)

create function api.file_archive(p_id text) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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
  return query select v.doc, v.version from api.files(p_id) v where v.id = p_id;
end
$$;

alter function api.file_archive(p_id text) owner to svc_api;

comment on function api.file_archive(p_id text) is 'archiveFile: archives a ready file for a writer of its linked resource (invoice: manager or finance; project, task, ticket: manager), through app_private.file_for (SVN04 FILE_NOT_FOUND, SVR04 FILE_ACCESS_DENIED); a processing or rejected file is refused (SVC09 CONFLICT), an archived one is answered as it is, and retention, legal holds and posted invoices are the triggers'' to refuse (RETENTION_BLOCKED). It runs as svc_api because svc_runtime holds no privilege on app.files; its update names the request''s organization and passes svc_api''s policy "Writers of the linked resource change files".';

revoke all on function api.file_archive(p_id text) from public;
grant execute on function api.file_archive(p_id text) to svc_runtime;
grant execute on function api.file_archive(p_id text) to svc_owner;
grant execute on function api.file_archive(p_id text) to svc_worker;

-- function api.file_chunks(text, integer, integer)

create function api.file_chunks(p_file_id text, p_from integer, p_to integer) returns table(seq integer, data bytea)
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
begin
  perform from api.files(p_file_id) v where v.id = p_file_id and v.status = 'ready';
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

alter function api.file_chunks(p_file_id text, p_from integer, p_to integer) owner to svc_api;

comment on function api.file_chunks(p_file_id text, p_from integer, p_to integer) is 'The bytes of a download: chunks p_from..p_to of a file, only when api.files shows it ready to the caller (its Roles for the linked resource); an uploaded file''s chunks come from its upload, a file the service made (an invoice PDF) is one chunk 0, its stored content. It runs as svc_api because svc_runtime may not read app.file_chunks or app.file_contents; every statement names the context''s organization (a download link''s client context, opened by api.file_download_begin), and the chunk and content policies apply inside it.';

revoke all on function api.file_chunks(p_file_id text, p_from integer, p_to integer) from public;
grant execute on function api.file_chunks(p_file_id text, p_from integer, p_to integer) to svc_runtime;
grant execute on function api.file_chunks(p_file_id text, p_from integer, p_to integer) to svc_owner;
grant execute on function api.file_chunks(p_file_id text, p_from integer, p_to integer) to svc_worker;

-- function api.file_download_begin(text)

create function api.file_download_begin(p_token text) returns table(outcome text, file_id text, name text, content_type text, size_bytes bigint, sha256 text, upload_id text, chunk_size integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    set "svc.gate_organization" to ''
    as $$
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
    perform from api.files(l.id) v where v.id = l.id;
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

alter function api.file_download_begin(p_token text) owner to svc_gate;

comment on function api.file_download_begin(p_token text) is 'The start of a GET of a download link, which is its own credential: it checks the link''s signature (app_private.download_link, which takes the signature''s SHA-256, never the signature), its expiry and its client''s standing (app_private.begin_delivery_context, which then sets that client''s signed context), and answers the file''s metadata only if that client may still read it (api.files) and it is ready; otherwise not_found, expired or client_inactive. It runs as svc_gate because no request context exists yet: the gate''s policies show only the organization the verified link names (svc.gate_organization, this function''s own setting, restored on return) and then the files of the context the link opened, so a wrong WHERE reads nothing of another organization; it is refused on a Citus coordinator (SV500 NOT_IN_ITS_WORKER).';

revoke all on function api.file_download_begin(p_token text) from public;
grant execute on function api.file_download_begin(p_token text) to svc_runtime;
grant execute on function api.file_download_begin(p_token text) to svc_owner;

-- function api.file_download_create(text, integer)

create function api.file_download_create(p_id text, p_lifetime_seconds integer) returns jsonb
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function api.file_download_create(p_id text, p_lifetime_seconds integer) owner to svc_api;

comment on function api.file_download_create(p_id text, p_lifetime_seconds integer) is 'createFileDownload: for a file the caller may read (app_private.file_for), a short-lived bearer token binding the file, its organization, the calling client and the expiry under an HMAC (app_private.capability_mac, purpose download), stored nowhere; a rejected file is refused with SVC09 FILE_SCAN_FAILED, a processing or archived one with SVC09 CONFLICT. It runs as svc_api, whose policies confine the read to the request''s organization and the Roles that read the linked resource; svc_runtime can neither read app.files nor the key the token is signed with.';

revoke all on function api.file_download_create(p_id text, p_lifetime_seconds integer) from public;
grant execute on function api.file_download_create(p_id text, p_lifetime_seconds integer) to svc_runtime;
grant execute on function api.file_download_create(p_id text, p_lifetime_seconds integer) to svc_owner;
grant execute on function api.file_download_create(p_id text, p_lifetime_seconds integer) to svc_worker;

-- function api.file_get(text)

create function api.file_get(p_id text) returns table(doc jsonb, version integer)
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  perform app_private.file_for(p_id, false);
  return query select v.doc, v.version from api.files(p_id) v where v.id = p_id;
end
$$;

alter function api.file_get(p_id text) owner to svc_api;

comment on function api.file_get(p_id text) is 'getFile: the file''s document from api.files, after app_private.file_for has answered SVN04 FILE_NOT_FOUND when neither the file nor its linked resource is visible to the caller, and SVR04 FILE_ACCESS_DENIED when the resource is visible but its files are not for the caller''s Roles (the spec: files inherit access from the linked resource). It runs as svc_api because svc_runtime holds no privilege on app.files; svc_api''s policies show only the request''s organization.';

revoke all on function api.file_get(p_id text) from public;
grant execute on function api.file_get(p_id text) to svc_runtime;
grant execute on function api.file_get(p_id text) to svc_owner;
grant execute on function api.file_get(p_id text) to svc_worker;

-- function api.file_upload_begin(text)

create function api.file_upload_begin(p_token text) returns table(outcome text, upload_id text, size_bytes bigint, content_type text, chunk_size integer, expires_at timestamp with time zone)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    set "svc.gate_organization" to ''
    as $_$
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
$_$;

alter function api.file_upload_begin(p_token text) owner to svc_gate;

comment on function api.file_upload_begin(p_token text) is 'The start of the PUT to an upload link, which is its own credential: the token must carry the upload id and organization with a valid HMAC (compared by the signature''s SHA-256, so the statement never carries the credential); the upload is locked FOR UPDATE NOWAIT (a concurrent PUT gets 55P03, 409 CONFLICT) and answers used unless pending, expired once past expires_at, client_inactive unless its creating client is in good standing, and otherwise sets that client''s signed context for the chunks that follow. It runs as svc_gate because no request context exists yet: only after the signature holds does it set svc.gate_organization (its own setting, restored on return), and the gate''s policies show and lock only that organization''s uploads; it is refused on a Citus coordinator (SV500 NOT_IN_ITS_WORKER).';

revoke all on function api.file_upload_begin(p_token text) from public;
grant execute on function api.file_upload_begin(p_token text) to svc_runtime;
grant execute on function api.file_upload_begin(p_token text) to svc_owner;

-- function api.file_upload_chunks(text, integer, bytea[])

create function api.file_upload_chunks(p_upload_id text, p_first_seq integer, variadic p_data bytea[]) returns void
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
begin
  insert into app.file_chunks (organization_id, upload_id, seq, data)
  select v__organization_id, p_upload_id, p_first_seq + (d.n - 1)::integer, d.data
    from unnest(p_data) with ordinality d (data, n);
end
$$;

alter function api.file_upload_chunks(p_upload_id text, p_first_seq integer, variadic p_data bytea[]) owner to svc_api;

comment on function api.file_upload_chunks(p_upload_id text, p_first_seq integer, variadic p_data bytea[]) is 'Stores chunks p_first_seq, p_first_seq + 1, … of an upload, several per call and as binary parameters (bytea), in the transaction that api.file_upload_begin opened for the upload''s client. It runs as svc_api because svc_runtime may not write app.file_chunks; the rows take the context''s organization, the policy "Clients write the bytes of their own pending uploads" admits only the uploading client''s rows, and the chunk guard trigger accepts bytes only while the upload is pending and no larger than its chunk size (SVC09 CONFLICT).';

revoke all on function api.file_upload_chunks(p_upload_id text, p_first_seq integer, variadic p_data bytea[]) from public;
grant execute on function api.file_upload_chunks(p_upload_id text, p_first_seq integer, variadic p_data bytea[]) to svc_runtime;
grant execute on function api.file_upload_chunks(p_upload_id text, p_first_seq integer, variadic p_data bytea[]) to svc_owner;
grant execute on function api.file_upload_chunks(p_upload_id text, p_first_seq integer, variadic p_data bytea[]) to svc_worker;

-- function api.file_upload_chunks(text, integer, text[])

create function api.file_upload_chunks(p_upload_id text, p_first_seq integer, variadic p_base64 text[]) returns void
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
begin
  insert into app.file_chunks (organization_id, upload_id, seq, data)
  select v__organization_id, p_upload_id, p_first_seq + (d.n - 1)::integer, decode(d.data, 'base64')
    from unnest(p_base64) with ordinality d (data, n);
end
$$;

alter function api.file_upload_chunks(p_upload_id text, p_first_seq integer, variadic p_base64 text[]) owner to svc_api;

comment on function api.file_upload_chunks(p_upload_id text, p_first_seq integer, variadic p_base64 text[]) is 'The base64 form of api.file_upload_chunks(text,integer,bytea[]), with the same rules (the context''s organization, the uploading client''s pending upload, its chunk size), kept only for the servers of the previous release during a rolling deploy: base64 text costs a third more memory in the server than the bytes, and a later release drops it. It runs as svc_api because svc_runtime may not write app.file_chunks.';

revoke all on function api.file_upload_chunks(p_upload_id text, p_first_seq integer, variadic p_base64 text[]) from public;
grant execute on function api.file_upload_chunks(p_upload_id text, p_first_seq integer, variadic p_base64 text[]) to svc_runtime;
grant execute on function api.file_upload_chunks(p_upload_id text, p_first_seq integer, variadic p_base64 text[]) to svc_owner;
grant execute on function api.file_upload_chunks(p_upload_id text, p_first_seq integer, variadic p_base64 text[]) to svc_worker;

-- function api.file_upload_complete(text)

create function api.file_upload_complete(p_upload_id text) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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
    return query select v.doc, v.version from api.files(u.file_id) v where v.id = u.file_id;
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
  return query select v.doc, v.version from api.files(v_file) v where v.id = v_file;
end
$$;

alter function api.file_upload_complete(p_upload_id text) owner to svc_api;

comment on function api.file_upload_complete(p_upload_id text) is 'completeFileUpload: the calling client''s upload (SVN04 FILE_NOT_FOUND otherwise) becomes a file only if its bytes arrived before expiry (SVC09 UPLOAD_EXPIRED, 410), were uploaded at all (SVC09 CONFLICT), match the declared size and SHA-256 (SVV22 CHECKSUM_MISMATCH) and sniff as the declared content type (SVV22 CONTENT_TYPE_NOT_ALLOWED); the file starts processing with its scan queued (app_private.queue_file_scan), and completing a completed upload answers its file again. It runs as svc_api because svc_runtime may not touch uploads or files; it locks the upload by the request''s organization and svc_api''s policies show only the calling client''s uploads and let only writers of the linked resource add the file.';

revoke all on function api.file_upload_complete(p_upload_id text) from public;
grant execute on function api.file_upload_complete(p_upload_id text) to svc_runtime;
grant execute on function api.file_upload_complete(p_upload_id text) to svc_owner;
grant execute on function api.file_upload_complete(p_upload_id text) to svc_worker;

-- function api.file_upload_create(jsonb, integer)

create function api.file_upload_create(p_body jsonb, p_lifetime_seconds integer) returns jsonb
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function api.file_upload_create(p_body jsonb, p_lifetime_seconds integer) owner to svc_api;

comment on function api.file_upload_create(p_body jsonb, p_lifetime_seconds integer) is 'createFileUpload: the linked resource must exist in the request''s organization (SVN04 LINKED_RESOURCE_NOT_FOUND), the caller must hold its write Roles (SVR04 FILE_ACCESS_DENIED), and the declared content type and size must fit the organization''s file policy (SVV22 CONTENT_TYPE_NOT_ALLOWED, FILE_TOO_LARGE answering 413); it records a pending upload of the calling client with its expiry and answers it with a capability token (an HMAC over the upload id and organization; nothing secret is stored). It runs as svc_api because svc_runtime may not write app.file_uploads; the row takes the context''s organization and client, which the policy "Writers of the linked resource start uploads" checks again.';

revoke all on function api.file_upload_create(p_body jsonb, p_lifetime_seconds integer) from public;
grant execute on function api.file_upload_create(p_body jsonb, p_lifetime_seconds integer) to svc_runtime;
grant execute on function api.file_upload_create(p_body jsonb, p_lifetime_seconds integer) to svc_owner;
grant execute on function api.file_upload_create(p_body jsonb, p_lifetime_seconds integer) to svc_worker;

-- function api.file_upload_finish(text, bigint, text, text, boolean)

create function api.file_upload_finish(p_upload_id text, p_size bigint, p_sha256 text, p_detected text, p_verified boolean) returns void
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function api.file_upload_finish(p_upload_id text, p_size bigint, p_sha256 text, p_detected text, p_verified boolean) owner to svc_api;

comment on function api.file_upload_finish(p_upload_id text, p_size bigint, p_sha256 text, p_detected text, p_verified boolean) is 'The end of the PUT to an upload link: records what arrived (size, SHA-256, the content type sniffed from the bytes and whether it fits the declared one) and moves the upload from pending to uploaded, or refuses with SVC09 CONFLICT when it is no longer pending; the lifecycle trigger checks the recorded size against the stored chunks. It runs as svc_api because svc_runtime may not update uploads; the update names the context''s organization and the policy "Clients move their own uploads on" limits it to the link''s client.';

revoke all on function api.file_upload_finish(p_upload_id text, p_size bigint, p_sha256 text, p_detected text, p_verified boolean) from public;
grant execute on function api.file_upload_finish(p_upload_id text, p_size bigint, p_sha256 text, p_detected text, p_verified boolean) to svc_runtime;
grant execute on function api.file_upload_finish(p_upload_id text, p_size bigint, p_sha256 text, p_detected text, p_verified boolean) to svc_owner;
grant execute on function api.file_upload_finish(p_upload_id text, p_size bigint, p_sha256 text, p_detected text, p_verified boolean) to svc_worker;

-- function api.file_upload_get(text)

create function api.file_upload_get(p_id text) returns jsonb
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function api.file_upload_get(p_id text) owner to svc_api;

comment on function api.file_upload_get(p_id text) is 'The calling client''s upload as createFileUpload answered it, its capability token derived again (an idempotent replay shows the same URL, which the stored response leaves out); null when there is no such upload of that client. It runs as svc_api because svc_runtime may not read app.file_uploads; the read names the request''s organization and the policy "Clients see their own uploads" shows only that client''s rows.';

revoke all on function api.file_upload_get(p_id text) from public;
grant execute on function api.file_upload_get(p_id text) to svc_runtime;
grant execute on function api.file_upload_get(p_id text) to svc_owner;
grant execute on function api.file_upload_get(p_id text) to svc_worker;

-- function api.files(text)

create function api.files(p_id text default null::text) returns setof api.files
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.files v;
    else
      return query select * from api.files v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.files', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;

alter function api.files(p_id text) owner to svc_api;

comment on function api.files(p_id text) is 'The rows of view api.files for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

revoke all on function api.files(p_id text) from public;
grant execute on function api.files(p_id text) to svc_runtime;
grant execute on function api.files(p_id text) to svc_owner;
grant execute on function api.files(p_id text) to svc_worker;
grant execute on function api.files(p_id text) to svc_gate;

-- function control.file_policy_set(text, bigint, text[], boolean)

create function control.file_policy_set(p_org text, p_max_size_bytes bigint, p_content_types text[], p_require_scan boolean) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
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

revoke all on function control.file_policy_set(p_org text, p_max_size_bytes bigint, p_content_types text[], p_require_scan boolean) from public;
grant execute on function control.file_policy_set(p_org text, p_max_size_bytes bigint, p_content_types text[], p_require_scan boolean) to svc_admin;

-- function control.file_set_legal_hold(text, boolean)

create function control.file_set_legal_hold(p_file_id text, p_hold boolean) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_org text := (select x.organization_id from app.files x where x.id = p_file_id);
begin
  update app.files f set legal_hold = p_hold where f.organization_id = v_org and f.id = p_file_id;
  perform app_private.require_found(found, 'FILE_NOT_FOUND', p_file_id);
end
$$;

revoke all on function control.file_set_legal_hold(p_file_id text, p_hold boolean) from public;
grant execute on function control.file_set_legal_hold(p_file_id text, p_hold boolean) to svc_admin;

-- function control.purge_expired_uploads()

create function control.purge_expired_uploads() returns integer
    language sql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
  with gone as (delete from app.file_uploads u where u.status <> 'completed' and u.expires_at < now() - interval '1 minute' returning 1)
  select count(*)::integer from gone
$$;

alter function control.purge_expired_uploads() owner to svc_owner;

revoke all on function control.purge_expired_uploads() from public;
grant execute on function control.purge_expired_uploads() to svc_worker;

revoke create on schema api, app, app_private, control, reporting, skills from svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
