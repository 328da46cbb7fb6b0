-- migrate:up

/** Tickets and ticket messages (issue 15): a workflow as data, typed messages, replies emailed to
 * the requester by the worker, full-text search. Access: member and manager where the
 * organization's ticket module is on; finance and hr only where its policy grants them tickets;
 * writes: manager. Internal notes are for member and manager only. */

/** 1. The organization's ticket policy (svc-admin org set-ticket-policy). */
alter table app.organizations
  add column ticket_module_enabled boolean not null default true,
  add column finance_may_read_tickets boolean not null default false,
  add column hr_may_read_tickets boolean not null default false;

create function control.org_set_ticket_policy(p_org text, p_module_enabled boolean, p_finance_may_read boolean, p_hr_may_read boolean)
returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  update app.organizations
     set ticket_module_enabled = coalesce(p_module_enabled, ticket_module_enabled),
         finance_may_read_tickets = coalesce(p_finance_may_read, finance_may_read_tickets),
         hr_may_read_tickets = coalesce(p_hr_may_read, hr_may_read_tickets)
   where id = p_org;
  perform app_private.require_found(found, 'ORGANIZATION_NOT_FOUND', p_org);
end
$$;

/** Whether the caller reads tickets: the module on, and member or manager, or finance or hr where granted. */
create function app_private.may_read_tickets() returns boolean
language sql stable security definer
set search_path = pg_catalog
as $$
  select coalesce((select o.ticket_module_enabled
                      and (app.has_any_role('{member,manager}')
                           or (app.has_role('finance') and o.finance_may_read_tickets)
                           or (app.has_role('hr') and o.hr_may_read_tickets))
                     from app.organizations o where o.id = app.current_organization_id()), false)
$$;
/** Internal notes: member and manager (staff), never the Roles a policy lets read tickets. */
create function app_private.may_read_internal_notes() returns boolean
language sql stable security definer
set search_path = pg_catalog
as $$ select app_private.may_read_tickets() and app.has_any_role('{member,manager}') $$;
grant execute on function app_private.may_read_tickets(), app_private.may_read_internal_notes() to svc_api, svc_runtime;

/** The reason a ticket request is refused before anything is read (module off, Role). */
create function api.require_tickets(p_write boolean) returns boolean
language plpgsql stable security definer
set search_path = pg_catalog
as $$
begin
  if not coalesce((select o.ticket_module_enabled from app.organizations o where o.id = app.current_organization_id()), false) then
    perform app_private.raise('SVR04', 'TICKET_MODULE_DISABLED', 'the ticket module is not enabled for your organization');
  end if;
  if p_write then
    perform api.require_any_role('{manager}', 'writing tickets');
  elsif not app_private.may_read_tickets() then
    perform app_private.raise('SVR03', 'ROLE_REQUIRED',
      'reading tickets needs the member or manager Role (finance and hr only where the organization grants them ticket access)');
  end if;
  return true;
end
$$;

/** 2. The ticket workflow, as data, per organization. */
create table app.ticket_statuses (
  organization_id text not null references app.organizations on delete cascade,
  status text not null constraint ticket_statuses_format check (status ~ '^[a-z][a-z0-9_]{0,40}$'),
  category text not null constraint ticket_statuses_category_valid check (category in ('open', 'pending', 'solved', 'closed')),
  is_initial boolean not null default false,
  primary key (organization_id, status)
);
create unique index ticket_statuses_one_initial on app.ticket_statuses (organization_id) where is_initial;
create table app.ticket_transitions (
  organization_id text not null,
  name text not null constraint ticket_transitions_format check (name ~ '^[a-z][a-z0-9_]{0,40}$'),
  from_status text not null,
  to_status text not null,
  requires_resolution boolean not null default false,
  primary key (organization_id, name, from_status),
  foreign key (organization_id, from_status) references app.ticket_statuses (organization_id, status) on delete cascade,
  foreign key (organization_id, to_status) references app.ticket_statuses (organization_id, status) on delete cascade
);
create index ticket_transitions_pair on app.ticket_transitions (organization_id, from_status, to_status);

create function app_private.seed_ticket_workflow(p_org text) returns void
language sql volatile
set search_path = pg_catalog
as $$
  insert into app.ticket_statuses (organization_id, status, category, is_initial) values
    (p_org, 'new', 'open', true), (p_org, 'open', 'open', false), (p_org, 'pending', 'pending', false),
    (p_org, 'on_hold', 'pending', false), (p_org, 'solved', 'solved', false), (p_org, 'closed', 'closed', false);
  insert into app.ticket_transitions (organization_id, name, from_status, to_status, requires_resolution)
  select p_org, t.name, t.from_status, t.to_status, t.name = 'resolve'
    from (values ('open', 'new', 'open'), ('open', 'pending', 'open'), ('open', 'on_hold', 'open'),
                 ('pend', 'new', 'pending'), ('pend', 'open', 'pending'), ('pend', 'on_hold', 'pending'),
                 ('hold', 'new', 'on_hold'), ('hold', 'open', 'on_hold'), ('hold', 'pending', 'on_hold'),
                 ('resolve', 'new', 'solved'), ('resolve', 'open', 'solved'), ('resolve', 'pending', 'solved'), ('resolve', 'on_hold', 'solved'),
                 ('reopen', 'solved', 'open'), ('close', 'solved', 'closed')) t (name, from_status, to_status)
$$;
create function app_private.tg_organizations__seed_ticket_workflow() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  perform app_private.seed_ticket_workflow(new.id);
  return null;
end
$$;
create trigger _820_seed_ticket_workflow after insert on app.organizations
  for each row execute function app_private.tg_organizations__seed_ticket_workflow();
select app_private.seed_ticket_workflow(id) from app.organizations;

/** 3. Tickets, with a display number per organization. */
create table app_private.ticket_number_counters (
  organization_id text primary key references app.organizations on delete cascade,
  last_number bigint not null default 0
);

create table app.tickets (
  organization_id text not null references app.organizations on delete cascade,
  id text not null default app_private.new_id('tkt'),
  number text not null,
  subject text not null constraint tickets_subject_length check (length(subject) between 1 and 500 and subject ~ '\S'),
  description text constraint tickets_description_length check (length(description) <= 50000),
  status text not null,
  priority text not null default 'normal' constraint tickets_priority_valid check (priority in ('low', 'normal', 'high', 'urgent')),
  requester_name text constraint tickets_requester_name_length check (length(requester_name) <= 200),
  requester_email text not null constraint tickets_requester_email_format check (requester_email ~ '^[^@\s]+@[^@\s]+$' and length(requester_email) <= 320),
  assignee_member_id text,
  project_id text,
  tags text[] not null default '{}' constraint tickets_tags_bounded check (cardinality(tags) <= 50),
  external_id text constraint tickets_external_id_length check (length(external_id) between 1 and 255),
  resolution text constraint tickets_resolution_length check (length(resolution) <= 10000),
  resolved_at timestamptz,
  created_by_client_id text not null,
  version integer not null default 1,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id),
  constraint tickets_number_unique unique (organization_id, number),
  constraint tickets_external_id_unique unique (organization_id, created_by_client_id, external_id),
  foreign key (organization_id, status) references app.ticket_statuses (organization_id, status),
  foreign key (organization_id, project_id) references app.projects (organization_id, id),
  foreign key (organization_id, created_by_client_id) references app.api_clients (organization_id, id)
);
create index tickets_id on app.tickets (id);
create index tickets_org_created on app.tickets (organization_id, created_at desc, id desc);
create index tickets_org_updated on app.tickets (organization_id, updated_at desc, id desc);
create index tickets_tags on app.tickets using gin (tags);

create trigger _100_touch_version before update on app.tickets
  for each row execute function app_private.tg__touch_version();

/** Number, workflow, references: for every writer. */
create function app_private.tg_tickets__rules() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_next bigint;
  v_category text;
begin
  if tg_op = 'INSERT' then
    insert into app_private.ticket_number_counters (organization_id, last_number) values (new.organization_id, 1)
    on conflict (organization_id) do update set last_number = ticket_number_counters.last_number + 1
    returning last_number into v_next;
    new.number := 'TKT-' || lpad(v_next::text, 6, '0');
    if not exists (select from app.ticket_statuses s where s.organization_id = new.organization_id and s.status = new.status and s.is_initial) then
      perform app_private.raise('SVV23', 'INVALID_TRANSITION', format('a new ticket starts in the workflow''s initial status, not %s', new.status));
    end if;
    new.resolution := null;
    new.resolved_at := null;
  else
    if (new.number, new.organization_id, new.id, new.created_by_client_id, new.created_at, new.external_id)
       is distinct from (old.number, old.organization_id, old.id, old.created_by_client_id, old.created_at, old.external_id) then
      perform app_private.raise('SVC09', 'CONFLICT', 'a ticket''s number, origin and external_id never change');
    end if;
    if new.status <> old.status then
      if not exists (select from app.ticket_transitions t
                      where t.organization_id = new.organization_id and t.from_status = old.status and t.to_status = new.status) then
        perform app_private.raise('SVV23', 'INVALID_TRANSITION', format('no transition leads from %s to %s', old.status, new.status));
      end if;
      select s.category into v_category from app.ticket_statuses s where s.organization_id = new.organization_id and s.status = new.status;
      if v_category = 'solved' then
        if new.resolution is null or new.resolution !~ '\S' then
          perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'resolving a ticket takes a resolution', '/resolution');
        end if;
        new.resolved_at := now();
      elsif v_category <> 'closed' then
        new.resolution := null;
        new.resolved_at := null;
      end if;
    elsif (new.resolution, new.resolved_at) is distinct from (old.resolution, old.resolved_at) then
      perform app_private.raise('SVV23', 'INVALID_TRANSITION', 'the resolution changes only with a transition');
    end if;
  end if;
  if new.assignee_member_id is not null and (tg_op = 'INSERT' or new.assignee_member_id is distinct from old.assignee_member_id)
     and not exists (select from app.members m where m.organization_id = new.organization_id and m.id = new.assignee_member_id
                                                and m.status = 'active') then
    perform app_private.raise_errors(app_private.error('/assignee_member_id', 'INVALID_ASSIGNEE',
      format('%s is not an active member of your organization', new.assignee_member_id)));
  end if;
  if new.project_id is not null and (tg_op = 'INSERT' or new.project_id is distinct from old.project_id)
     and not exists (select from app.projects p where p.organization_id = new.organization_id and p.id = new.project_id) then
    perform app_private.raise('SVN04', 'PROJECT_NOT_FOUND', format('no project %s in your organization', new.project_id), '/project_id');
  end if;
  return new;
end
$$;
create trigger _150_rules before insert or update on app.tickets
  for each row execute function app_private.tg_tickets__rules();

/** 4. Messages: replies (emailed to the requester by the worker) and internal notes (never leave). */
create table app.ticket_messages (
  organization_id text not null,
  id text not null default app_private.new_id('tmsg'),
  ticket_id text not null,
  type text not null constraint ticket_messages_type_valid check (type in ('reply', 'internal_note')),
  body text not null constraint ticket_messages_body_length check (length(body) between 1 and 50000 and body ~ '\S'),
  attachment_file_ids text[] not null default '{}' constraint ticket_messages_attachments_bounded check (cardinality(attachment_file_ids) <= 20),
  author_client_id text not null,
  delivery_status text constraint ticket_messages_delivery_valid check (delivery_status in ('queued', 'sent', 'failed')),
  delivery_detail text,
  delivered_at timestamptz,
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, ticket_id) references app.tickets (organization_id, id),
  foreign key (organization_id, author_client_id) references app.api_clients (organization_id, id),
  -- A reply has a delivery; a note never has one.
  constraint ticket_messages_delivery_for_replies check ((type = 'reply') = (delivery_status is not null))
);
create index ticket_messages_id on app.ticket_messages (id);
create index ticket_messages_ticket on app.ticket_messages (organization_id, ticket_id, created_at, id);

/** A message never changes (its delivery is recorded once) and is never deleted; its attachments
 * are ready files linked to its ticket. */
create function app_private.tg_ticket_messages__rules() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_bad text[];
begin
  if tg_op = 'DELETE' then
    perform app_private.raise('SVC09', 'CONFLICT', 'ticket messages are kept');
  end if;
  if tg_op = 'UPDATE' then
    if (to_jsonb(new) - '{delivery_status,delivery_detail,delivered_at}'::text[]) <> (to_jsonb(old) - '{delivery_status,delivery_detail,delivered_at}'::text[])
       or old.delivery_status <> 'queued' then
      perform app_private.raise('SVC09', 'CONFLICT', 'a message never changes; a reply''s delivery is recorded once');
    end if;
    return new;
  end if;
  select array_agg(a order by a) into v_bad from unnest(new.attachment_file_ids) a
   where not exists (select from app.files f where f.organization_id = new.organization_id and f.id = a and f.status = 'ready'
                                             and f.linked_resource_type = 'ticket' and f.linked_resource_id = new.ticket_id);
  if v_bad is not null then
    perform app_private.raise_errors(app_private.error('/attachments', 'ATTACHMENT_NOT_AVAILABLE',
      'not ready files of this ticket: ' || array_to_string(v_bad, ', ')));
  end if;
  new.delivery_status := case when new.type = 'reply' then 'queued' end;
  new.delivery_detail := null;
  new.delivered_at := null;
  return new;
end
$$;
create trigger _150_rules before insert or update or delete on app.ticket_messages
  for each row execute function app_private.tg_ticket_messages__rules();

/** 5. Search: PostgreSQL full-text search, the public document (subject, description, replies)
 * apart from internal notes, so a reader who may not see notes cannot find tickets by them. */
create table app.ticket_search (
  organization_id text not null,
  ticket_id text not null,
  public_doc tsvector not null,
  internal_doc tsvector not null default ''::tsvector,
  primary key (organization_id, ticket_id),
  foreign key (organization_id, ticket_id) references app.tickets (organization_id, id) on delete cascade
);
create index ticket_search_public on app.ticket_search using gin (public_doc);
create index ticket_search_internal on app.ticket_search using gin (internal_doc);

create function app_private.tg_tickets__index() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  if tg_op = 'INSERT' then
    insert into app.ticket_search (organization_id, ticket_id, public_doc)
    values (new.organization_id, new.id, setweight(to_tsvector('simple', new.subject), 'A') || to_tsvector('simple', coalesce(new.description, '')));
  elsif (new.subject, new.description) is distinct from (old.subject, old.description) then
    update app.ticket_search s
       set public_doc = setweight(to_tsvector('simple', new.subject), 'A') || to_tsvector('simple', coalesce(new.description, ''))
                        || coalesce((select to_tsvector('simple', string_agg(m.body, ' ')) from app.ticket_messages m
                                      where m.organization_id = new.organization_id and m.ticket_id = new.id and m.type = 'reply'), ''::tsvector)
     where s.organization_id = new.organization_id and s.ticket_id = new.id;
  end if;
  return null;
end
$$;
create trigger _900_index after insert or update on app.tickets
  for each row execute function app_private.tg_tickets__index();

create function app_private.tg_ticket_messages__index() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  if new.type = 'reply' then
    update app.ticket_search s set public_doc = s.public_doc || to_tsvector('simple', new.body)
     where s.organization_id = new.organization_id and s.ticket_id = new.ticket_id;
  else
    update app.ticket_search s set internal_doc = s.internal_doc || to_tsvector('simple', new.body)
     where s.organization_id = new.organization_id and s.ticket_id = new.ticket_id;
  end if;
  return null;
end
$$;
create trigger _900_index after insert on app.ticket_messages
  for each row execute function app_private.tg_ticket_messages__index();

/** 6. Events: ticket.created, ticket.updated, ticket.transitioned, ticket.message.created. */
insert into app_private.event_types (name, resource_type, emitted_by, description, subscribable) values
  ('ticket.created', 'ticket', '{createTicket}', 'A ticket was created.', true),
  ('ticket.updated', 'ticket', '{updateTicket}', 'Fields of a ticket changed (subject, description, priority, tags, assignee, project).', true),
  ('ticket.transitioned', 'ticket', '{transitionTicket}', 'A ticket moved to another workflow status.', true),
  ('ticket.message.created', 'ticket_message', '{createTicketMessage}', 'A reply or an internal note was added to a ticket (internal notes reach only subscribers whose Roles read them).', true);

create function app_private.tg_tickets__emit() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  if tg_op = 'INSERT' then
    perform app_private.emit_event(new.organization_id, 'ticket.created', 'ticket', new.id, new.version);
  elsif new.version <> old.version then
    perform app_private.emit_event(new.organization_id,
      case when new.status <> old.status then 'ticket.transitioned' else 'ticket.updated' end, 'ticket', new.id, new.version);
  end if;
  return null;
end
$$;
create trigger _950_emit_event after insert or update on app.tickets
  for each row execute function app_private.tg_tickets__emit();

create function app_private.tg_ticket_messages__emit() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  perform app_private.emit_event(new.organization_id, 'ticket.message.created', 'ticket_message', new.id, 1);
  if new.type = 'reply' then
    perform graphile_worker.add_job('ticket_reply_email', json_build_object('message_id', new.id), job_key => 'ticket_reply:' || new.id,
                                    max_attempts => 10);
  end if;
  return null;
end
$$;
create trigger _950_emit_event after insert on app.ticket_messages
  for each row execute function app_private.tg_ticket_messages__emit();

/** 7. Row policies (for svc_api, the owner of the surface). */
alter table app.ticket_statuses enable row level security;
alter table app.ticket_statuses force row level security;
alter table app.ticket_transitions enable row level security;
alter table app.ticket_transitions force row level security;
create policy "Clients see their organization's ticket workflow" on app.ticket_statuses for select to svc_api
  using (organization_id = (select app.current_organization_id()));
create policy "Clients see their organization's ticket transitions" on app.ticket_transitions for select to svc_api
  using (organization_id = (select app.current_organization_id()));
grant select on app.ticket_statuses, app.ticket_transitions to svc_api;

alter table app.tickets enable row level security;
alter table app.tickets force row level security;
create policy "Ticket readers see their organization's tickets" on app.tickets for select to svc_api
  using (organization_id = (select app.current_organization_id()) and (select app_private.may_read_tickets()));
create policy "Managers create tickets" on app.tickets for insert to svc_api
  with check (organization_id = (select app.current_organization_id()) and created_by_client_id = (select app.current_client_id())
              and (select app.has_role('manager')) and (select app_private.may_read_tickets()));
create policy "Managers change tickets" on app.tickets for update to svc_api
  using (organization_id = (select app.current_organization_id()) and (select app.has_role('manager')) and (select app_private.may_read_tickets()))
  with check (organization_id = (select app.current_organization_id()));
grant select, insert, update on app.tickets to svc_api;

alter table app.ticket_messages enable row level security;
alter table app.ticket_messages force row level security;
create policy "Ticket readers see replies, staff also internal notes" on app.ticket_messages for select to svc_api
  using (organization_id = (select app.current_organization_id()) and (select app_private.may_read_tickets())
         and (type = 'reply' or (select app_private.may_read_internal_notes())));
create policy "Managers add messages" on app.ticket_messages for insert to svc_api
  with check (organization_id = (select app.current_organization_id()) and author_client_id = (select app.current_client_id())
              and (select app.has_role('manager')) and (select app_private.may_read_tickets()));
grant select, insert on app.ticket_messages to svc_api;

alter table app.ticket_search enable row level security;
alter table app.ticket_search force row level security;
create policy "Search follows the tickets" on app.ticket_search for select to svc_api
  using (organization_id = (select app.current_organization_id()) and (select app_private.may_read_tickets()));
grant select on app.ticket_search to svc_api;

/** 8. Files linked to tickets (attachments): readable by ticket readers, written by managers. */
alter table app.files drop constraint files_linked_resource_type_valid,
  add constraint files_linked_resource_type_valid check (linked_resource_type in ('project', 'task', 'invoice', 'ticket'));
alter table app.file_uploads drop constraint file_uploads_linked_resource_type_valid,
  add constraint file_uploads_linked_resource_type_valid check (linked_resource_type in ('project', 'task', 'invoice', 'ticket'));
drop policy "Files are visible where the linked resource is" on app.files;
create policy "Files are visible where the linked resource is" on app.files for select to svc_api
  using (organization_id = (select app.current_organization_id())
         and case linked_resource_type
               when 'project' then exists (select from app.projects p where p.organization_id = files.organization_id and p.id = files.linked_resource_id)
               when 'task' then exists (select from app.tasks t where t.organization_id = files.organization_id and t.id = files.linked_resource_id)
               when 'invoice' then exists (select from app.invoices i where i.organization_id = files.organization_id and i.id = files.linked_resource_id)
               when 'ticket' then exists (select from app.tickets k where k.organization_id = files.organization_id and k.id = files.linked_resource_id)
               else false end);

/** Whether the caller reads the files of a resource type (tickets: whoever reads tickets). */
create function app_private.file_readable(p_type text) returns boolean
language sql stable security definer
set search_path = pg_catalog
as $$ select case p_type when 'ticket' then app_private.may_read_tickets() else app.has_any_role(app_private.file_read_roles(p_type)) end $$;
grant execute on function app_private.file_readable(text) to svc_api;

create or replace function app_private.file_read_roles(p_type text) returns text[]
language sql immutable parallel safe
set search_path = pg_catalog
as $$ select case p_type when 'invoice' then '{manager,finance}'::text[] when 'ticket' then '{member,manager,finance,hr}'::text[]
                         else '{member,manager}'::text[] end $$;
create or replace function app_private.file_write_roles(p_type text) returns text[]
language sql immutable parallel safe
set search_path = pg_catalog
as $$ select case p_type when 'invoice' then '{manager,finance}'::text[] else '{manager}'::text[] end $$;

create or replace view api.files as
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
    or (f.linked_resource_type in ('project', 'task') and (select app.has_any_role('{member,manager}')))
    or (f.linked_resource_type = 'ticket' and (select app_private.may_read_tickets()));

create or replace function app_private.file_for(p_id text, p_write boolean) returns app.files
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
  if not app_private.file_readable(f.linked_resource_type)
     or (p_write and not app.has_any_role(app_private.file_write_roles(f.linked_resource_type))) then
    perform app_private.raise('SVR04', 'FILE_ACCESS_DENIED',
      format('the files of this %s are for the Roles %s', f.linked_resource_type,
             array_to_string(case when p_write then app_private.file_write_roles(f.linked_resource_type) else app_private.file_read_roles(f.linked_resource_type) end, ', ')));
  end if;
  return f;
end
$$;

/** createFileUpload learns tickets as linked resources. */
create or replace function app_private.linked_resource_visible(p_org text, p_type text, p_id text) returns boolean
language sql stable
set search_path = pg_catalog
as $$
  select case p_type
    when 'project' then exists (select from app.projects p where p.organization_id = p_org and p.id = p_id)
    when 'task' then exists (select from app.tasks t where t.organization_id = p_org and t.id = p_id)
    when 'invoice' then exists (select from app.invoices i where i.organization_id = p_org and i.id = p_id)
    when 'ticket' then exists (select from app.tickets k where k.organization_id = p_org and k.id = p_id)
    else false end
$$;
alter function app_private.linked_resource_visible(text, text, text) owner to svc_api;

create or replace function api.file_upload_create(p_body jsonb, p_lifetime_seconds integer) returns jsonb
language plpgsql volatile security definer
set search_path = pg_catalog
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

/** Tickets matching a web-search query, for listTickets (`id in (select api.ticket_search_ids(…))`):
 * each document through its own GIN index, internal notes only for those who read them. The
 * owner's, not svc_api's: under row-level security PostgreSQL does not use an index for a
 * non-leakproof operator such as @@ (measured: a sequential scan of every document, 26 ms at
 * 100,000 tickets, against 8 ms), so this function applies the organization and the reader
 * checks itself, and returns only ids, which the api.tickets view then filters by its policies. */
create function api.ticket_search_ids(p_query text) returns setof text
language sql stable security definer
set search_path = pg_catalog
rows 100
as $$
  select s.ticket_id from app.ticket_search s
   where (select app_private.may_read_tickets())
     and s.organization_id = (select app.current_organization_id()) and s.public_doc @@ websearch_to_tsquery('simple', p_query)
  union
  select s.ticket_id from app.ticket_search s
   where (select app_private.may_read_internal_notes())
     and s.organization_id = (select app.current_organization_id()) and s.internal_doc @@ websearch_to_tsquery('simple', p_query)
$$;
grant execute on function api.ticket_search_ids(text) to svc_runtime;

/** 9. The api surface. */
create view api.tickets as
select t.organization_id, t.id, t.status, t.priority, t.assignee_member_id, t.project_id, t.requester_email, t.tags,
       t.created_at, t.updated_at, t.version,
       jsonb_build_object('object', 'ticket', 'id', t.id, 'number', t.number, 'subject', t.subject, 'description', t.description,
         'status', t.status, 'priority', t.priority,
         -- The requester's address is for the staff who answer; finance and hr see the name.
         'requester', jsonb_build_object('name', t.requester_name,
                                         'email', case when (select app.has_any_role('{member,manager}')) then t.requester_email end),
         'assignee_member_id', t.assignee_member_id, 'project_id', t.project_id, 'tags', to_jsonb(t.tags),
         'external_id', t.external_id, 'resolution', t.resolution, 'resolved_at', app_private.iso_timestamp(t.resolved_at),
         'transitions', coalesce((select jsonb_agg(jsonb_build_object('name', tr.name, 'to_status', tr.to_status,
                                                                      'requires_resolution', tr.requires_resolution) order by tr.name)
                                    from app.ticket_transitions tr
                                   where tr.organization_id = t.organization_id and tr.from_status = t.status), '[]'::jsonb),
         'version', t.version,
         'created_at', app_private.iso_timestamp(t.created_at), 'updated_at', app_private.iso_timestamp(t.updated_at)) as doc
  from app.tickets t;
alter view api.tickets owner to svc_api;
grant select on api.tickets to svc_runtime;

create view api.ticket_messages as
select m.organization_id, m.id, m.ticket_id, m.type, m.created_at,
       jsonb_build_object('object', 'ticket_message', 'id', m.id, 'ticket_id', m.ticket_id, 'type', m.type, 'body', m.body,
         'attachments', to_jsonb(m.attachment_file_ids), 'author', jsonb_build_object('type', 'api_client', 'id', m.author_client_id),
         'delivery', case when m.type = 'reply' then jsonb_build_object('status', m.delivery_status, 'detail', m.delivery_detail,
                                                                       'delivered_at', app_private.iso_timestamp(m.delivered_at)) end,
         'created_at', app_private.iso_timestamp(m.created_at)) as doc
  from app.ticket_messages m;
alter view api.ticket_messages owner to svc_api;
grant select on api.ticket_messages to svc_runtime;

create function app_private.ticket_not_found(p_id text) returns void
language sql volatile
set search_path = pg_catalog
as $$ select app_private.raise('SVN04', 'TICKET_NOT_FOUND', format('no ticket %s in your organization', p_id)) $$;
grant execute on function app_private.ticket_not_found(text) to svc_api;

/** The ticket must be there for the caller (listTicketMessages checks it before listing). */
create function api.ticket_require(p_id text) returns boolean
language plpgsql stable security definer
set search_path = pg_catalog
as $$
begin
  if not exists (select from app.tickets t where t.organization_id = app.current_organization_id() and t.id = p_id) then
    perform app_private.ticket_not_found(p_id);
  end if;
  return true;
end
$$;

create function api.ticket_get(p_id text) returns table (doc jsonb, version integer)
language plpgsql stable security definer
set search_path = pg_catalog
as $$
begin
  perform api.require_tickets(false);
  return query select v.doc, v.version from api.tickets v where v.id = p_id;
end
$$;

create function app_private.lock_ticket(p_id text) returns app.tickets
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  t app.tickets;
begin
  select * into t from app.tickets x where x.organization_id = app.current_organization_id() and x.id = p_id for update;
  if not found then
    perform app_private.ticket_not_found(p_id);
  end if;
  return t;
end
$$;
alter function app_private.lock_ticket(text) owner to svc_api;

create function api.ticket_create(p_body jsonb) returns table (doc jsonb, version integer)
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_id text;
begin
  perform api.require_tickets(true);
  insert into app.tickets (organization_id, subject, description, status, priority, requester_name, requester_email, tags,
                           external_id, created_by_client_id)
  values (app.current_organization_id(), p_body ->> 'subject', p_body ->> 'description',
          (select s.status from app.ticket_statuses s where s.organization_id = app.current_organization_id() and s.is_initial),
          coalesce(p_body ->> 'priority', 'normal'), p_body #>> '{requester,name}', lower(btrim(p_body #>> '{requester,email}')),
          coalesce((select array_agg(distinct lower(btrim(x))) from jsonb_array_elements_text(coalesce(p_body -> 'tags', '[]')) x), '{}'),
          p_body ->> 'external_id', app.current_client_id())
  returning id into v_id;
  return query select v.doc, v.version from api.tickets v where v.id = v_id;
end
$$;

create function api.ticket_update(p_id text, p_if_match integer[], p_patch jsonb) returns table (doc jsonb, version integer)
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  t app.tickets;
  v_errors jsonb := '[]';
  k text;
begin
  perform api.require_tickets(true);
  t := app_private.lock_ticket(p_id);
  -- The spec's tie: a status sent here is an attempt at a transition that is not offered this way.
  if p_patch ? 'status' then
    perform app_private.raise('SVV23', 'INVALID_TRANSITION', 'status changes only through POST /v1/tickets/{ticket_id}/transitions', '/status');
  end if;
  perform app_private.check_if_match(t.version, p_if_match);
  for k in select jsonb_object_keys(p_patch) order by 1 loop
    if k not in ('subject', 'description', 'priority', 'tags', 'assignee_member_id', 'project_id') then
      v_errors := v_errors || app_private.error('/' || k, 'IMMUTABLE_FIELD', format('%s cannot be changed here', k));
    end if;
  end loop;
  perform app_private.raise_errors(v_errors);
  update app.tickets x set
    subject = case when p_patch ? 'subject' then p_patch ->> 'subject' else t.subject end,
    description = case when p_patch ? 'description' then p_patch ->> 'description' else t.description end,
    priority = case when p_patch ? 'priority' then p_patch ->> 'priority' else t.priority end,
    tags = case when p_patch ? 'tags'
                then coalesce((select array_agg(distinct lower(btrim(e))) from jsonb_array_elements_text(p_patch -> 'tags') e), '{}')
                else t.tags end,
    assignee_member_id = case when p_patch ? 'assignee_member_id' then app_private.normalize_email(p_patch ->> 'assignee_member_id')
                              else t.assignee_member_id end,
    project_id = case when p_patch ? 'project_id' then p_patch ->> 'project_id' else t.project_id end
   where x.organization_id = t.organization_id and x.id = p_id;
  return query select v.doc, v.version from api.tickets v where v.id = p_id;
end
$$;

create function api.ticket_transition(p_id text, p_transition text, p_resolution text) returns table (doc jsonb, version integer)
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  t app.tickets;
  tr app.ticket_transitions;
begin
  perform api.require_tickets(true);
  t := app_private.lock_ticket(p_id);
  select * into tr from app.ticket_transitions x
   where x.organization_id = t.organization_id and x.name = p_transition and x.from_status = t.status;
  if not found then
    perform app_private.raise('SVV23', 'INVALID_TRANSITION',
      format('%s is not offered from status %s; see the ticket''s transitions', p_transition, t.status), '/transition');
  end if;
  if tr.requires_resolution and (p_resolution is null or p_resolution !~ '\S') then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', format('%s needs a resolution', p_transition), '/resolution');
  end if;
  if not tr.requires_resolution and p_resolution is not null then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', format('%s takes no resolution', p_transition), '/resolution');
  end if;
  update app.tickets x set status = tr.to_status, resolution = coalesce(p_resolution, case when tr.to_status = 'closed' then t.resolution end)
   where x.organization_id = t.organization_id and x.id = p_id;
  return query select v.doc, v.version from api.tickets v where v.id = p_id;
end
$$;

/** createTicketMessage: attachments must be ready files of this ticket that the caller reads. */
create function api.ticket_message_create(p_ticket_id text, p_body jsonb) returns jsonb
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  t app.tickets;
  v_id text;
  v_files text[] := coalesce((select array_agg(x) from jsonb_array_elements_text(coalesce(p_body -> 'attachments', '[]')) x), '{}');
  v_bad text[];
begin
  perform api.require_tickets(true);
  t := app_private.lock_ticket(p_ticket_id);
  select array_agg(a order by a) into v_bad from unnest(v_files) a
   where not exists (select from api.files f where f.id = a and f.status = 'ready'
                                             and f.linked_resource_type = 'ticket' and f.linked_resource_id = t.id);
  if v_bad is not null then
    perform app_private.raise_errors(app_private.error('/attachments', 'ATTACHMENT_NOT_AVAILABLE',
      format('not ready files of ticket %s that you may read: %s; upload attachments with linked_resource {type: ticket, id: %s}',
             t.id, array_to_string(v_bad, ', '), t.id)));
  end if;
  insert into app.ticket_messages (organization_id, ticket_id, type, body, attachment_file_ids, author_client_id)
  values (t.organization_id, t.id, p_body ->> 'type', p_body ->> 'body', v_files, app.current_client_id())
  returning id into v_id;
  return (select v.doc from api.ticket_messages v where v.id = v_id);
end
$$;

do $$
declare
  r record;
begin
  for r in select p.oid::regprocedure as fn from pg_proc p join pg_namespace n on n.oid = p.pronamespace
            where n.nspname = 'api' and p.proname in ('ticket_get', 'ticket_create', 'ticket_update', 'ticket_transition',
                                                      'ticket_message_create', 'require_tickets', 'ticket_require') loop
    execute format('alter function %s owner to svc_api', r.fn);
    execute format('grant execute on function %s to svc_runtime', r.fn);
  end loop;
end
$$;

/** 10. The worker's reply email (run as the owner): what to send, and the outcome. */
create function app_private.ticket_reply_load(p_message_id text) returns jsonb
language sql stable
set search_path = pg_catalog
as $$
  select jsonb_build_object('status', m.delivery_status, 'body', m.body, 'organization_id', m.organization_id, 'ticket_id', t.id, 'number', t.number, 'subject', t.subject,
           'to', t.requester_email, 'to_name', t.requester_name, 'organization', o.name,
           'attachments', coalesce((select jsonb_agg(jsonb_build_object('file_id', f.id, 'name', f.name, 'content_type', f.content_type,
                                                                        'upload_id', f.upload_id, 'status', f.status) order by a.n)
                                      from unnest(m.attachment_file_ids) with ordinality a (id, n)
                                      join app.files f on f.organization_id = m.organization_id and f.id = a.id), '[]'::jsonb))
    from app.ticket_messages m
    join app.tickets t on t.organization_id = m.organization_id and t.id = m.ticket_id
    join app.organizations o on o.id = m.organization_id
   where m.id = p_message_id and m.type = 'reply'
$$;

create function app_private.ticket_reply_record(p_message_id text, p_sent boolean, p_detail text) returns void
language sql volatile
set search_path = pg_catalog
as $$
  update app.ticket_messages m
     set delivery_status = case when p_sent then 'sent' else 'failed' end, delivery_detail = left(p_detail, 500),
         delivered_at = case when p_sent then now() end
   where m.id = p_message_id and m.delivery_status = 'queued'
$$;

/** The worker's read check: tickets and their messages (internal notes only for those who read them). */
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
    when 'ticket' then exists (select from api.tickets v where v.id = p_resource_id)
    when 'ticket_message' then exists (select from app.ticket_messages m where m.id = p_resource_id)
    else false end
$$;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'tickets hold client content: restore a backup taken before 20261125000200'); end $$;
