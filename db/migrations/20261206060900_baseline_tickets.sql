-- migrate:up

/** The baseline, 9 of 16. Tickets: ticket workflows, tickets, messages and search.
 * Laid out by table: each table, then its keys and indexes, row security and policies, triggers
 * and their functions, and grants; then the area's views and commands. db/README.md, "The
 * baseline", says how it was made and proved equal to the migrations it replaced. */
set local check_function_bodies = false;
set local client_min_messages = warning;
set local search_path = '';

-- While this file runs, the owners of its functions and views may create in the schemas (`alter … owner to`
-- a role needs it when the migrating role is not a superuser); taken back at its end.
grant create on schema api, app, app_private, control, reporting, skills to svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- function app_private.may_read_internal_notes()

create function app_private.may_read_internal_notes() returns boolean
    language sql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$ select app_private.may_read_tickets() and app.has_any_role('{member,manager}') $$;

alter function app_private.may_read_internal_notes() owner to svc_owner;

comment on function app_private.may_read_internal_notes() is 'Whether the caller may read tickets'' internal notes: it may read tickets (app_private.may_read_tickets()) and holds member or manager, so finance and hr never see internal notes, even where their organization lets them read tickets. It reads no table itself; it is an svc_owner definer like the other policy helpers that policies and views call, may_read_tickets reading the organization''s ticket settings where no signed context carries them.';

revoke all on function app_private.may_read_internal_notes() from public;
grant execute on function app_private.may_read_internal_notes() to svc_api;
grant execute on function app_private.may_read_internal_notes() to svc_runtime;
grant execute on function app_private.may_read_internal_notes() to svc_reporting;
grant execute on function app_private.may_read_internal_notes() to svc_worker;
grant execute on function app_private.may_read_internal_notes() to svc_admin;
grant execute on function app_private.may_read_internal_notes() to svc_gate;

-- function app_private.seed_ticket_workflow(text)

create function app_private.seed_ticket_workflow(p_org text) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  insert into app.ticket_statuses (organization_id, status, category, is_initial) values
    (p_org, 'new', 'open', true), (p_org, 'open', 'open', false), (p_org, 'pending', 'pending', false),
    (p_org, 'on_hold', 'pending', false), (p_org, 'solved', 'solved', false), (p_org, 'closed', 'closed', false);
  insert into app.ticket_transitions (organization_id, name, from_status, to_status, requires_resolution)
  select p_org, t.name, t.from_status, t.to_status, t.name = 'resolve'
    from (values ('open', 'new', 'open'), ('open', 'pending', 'open'), ('open', 'on_hold', 'open'),
                 ('pend', 'new', 'pending'), ('pend', 'open', 'pending'), ('pend', 'on_hold', 'pending'),
                 ('hold', 'new', 'on_hold'), ('hold', 'open', 'on_hold'), ('hold', 'pending', 'on_hold'),
                 ('resolve', 'new', 'solved'), ('resolve', 'open', 'solved'), ('resolve', 'pending', 'solved'), ('resolve', 'on_hold', 'solved'),
                 ('reopen', 'solved', 'open'), ('close', 'solved', 'closed')) t (name, from_status, to_status);
end
$$;

alter function app_private.seed_ticket_workflow(p_org text) owner to svc_owner;

revoke all on function app_private.seed_ticket_workflow(p_org text) from public;
grant execute on function app_private.seed_ticket_workflow(p_org text) to svc_worker;
grant execute on function app_private.seed_ticket_workflow(p_org text) to svc_admin;

-- function app_private.ticket_not_found(text)

create function app_private.ticket_not_found(p_id text) returns void
    language sql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$ select app_private.raise('SVN04', 'TICKET_NOT_FOUND', format('no ticket %s in your organization', p_id)) $$;

alter function app_private.ticket_not_found(p_id text) owner to svc_owner;

revoke all on function app_private.ticket_not_found(p_id text) from public;
grant execute on function app_private.ticket_not_found(p_id text) to svc_api;
grant execute on function app_private.ticket_not_found(p_id text) to svc_worker;
grant execute on function app_private.ticket_not_found(p_id text) to svc_admin;

-- function app_private.ticket_reply_load(text, text)

create function app_private.ticket_reply_load(p_organization_id text, p_message_id text) returns jsonb
    language plpgsql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_out jsonb;
begin
  select jsonb_build_object('status', m.delivery_status, 'body', m.body, 'organization_id', m.organization_id, 'ticket_id', t.id,
           'number', t.number, 'subject', t.subject, 'to', t.requester_email, 'to_name', t.requester_name, 'organization', o.name,
           'attachments', coalesce((select jsonb_agg(jsonb_build_object('file_id', f.id, 'name', f.name, 'content_type', f.content_type,
                                                                        'upload_id', f.upload_id, 'status', f.status) order by a.n)
                                      from unnest(m.attachment_file_ids) with ordinality a (id, n)
                                      join app.files f on f.organization_id = p_organization_id and f.id = a.id), '[]'::jsonb))
    into v_out
    from app.ticket_messages m
    join app.tickets t on t.organization_id = p_organization_id and t.id = m.ticket_id
    join app.organizations o on o.id = p_organization_id
   where m.organization_id = p_organization_id and m.id = p_message_id and m.type = 'reply';
  return v_out;
end
$$;

alter function app_private.ticket_reply_load(p_organization_id text, p_message_id text) owner to svc_owner;

revoke all on function app_private.ticket_reply_load(p_organization_id text, p_message_id text) from public;
grant execute on function app_private.ticket_reply_load(p_organization_id text, p_message_id text) to svc_worker;
grant execute on function app_private.ticket_reply_load(p_organization_id text, p_message_id text) to svc_admin;

-- function app_private.ticket_reply_record(text, text, boolean, text)

create function app_private.ticket_reply_record(p_organization_id text, p_message_id text, p_sent boolean, p_detail text) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_now timestamptz := now();
begin
  update app.ticket_messages m
     set delivery_status = case when p_sent then 'sent' else 'failed' end, delivery_detail = left(p_detail, 500),
         delivered_at = case when p_sent then v_now end
   where m.organization_id = p_organization_id and m.id = p_message_id and m.delivery_status = 'queued';
end
$$;

alter function app_private.ticket_reply_record(p_organization_id text, p_message_id text, p_sent boolean, p_detail text) owner to svc_owner;

revoke all on function app_private.ticket_reply_record(p_organization_id text, p_message_id text, p_sent boolean, p_detail text) from public;
grant execute on function app_private.ticket_reply_record(p_organization_id text, p_message_id text, p_sent boolean, p_detail text) to svc_worker;
grant execute on function app_private.ticket_reply_record(p_organization_id text, p_message_id text, p_sent boolean, p_detail text) to svc_admin;

-- table app.ticket_statuses

create table app.ticket_statuses (
    organization_id text not null,
    status text not null,
    category text not null,
    is_initial boolean default false not null,
    constraint ticket_statuses_category_valid check ((category = any (array['open'::text, 'pending'::text, 'solved'::text, 'closed'::text]))),
    constraint ticket_statuses_format check ((status ~ '^[a-z][a-z0-9_]{0,40}$'::text))
);

alter table only app.ticket_statuses force row level security;

alter table only app.ticket_statuses
    add constraint ticket_statuses_pkey primary key (organization_id, status);

create unique index ticket_statuses_one_initial on app.ticket_statuses using btree (organization_id) where is_initial;

alter table only app.ticket_statuses
    add constraint ticket_statuses_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table app.ticket_statuses enable row level security;

create policy "Clients see their organization's ticket workflow" on app.ticket_statuses for select to svc_api using (organization_id = (select app.current_organization_id()));

comment on policy "Clients see their organization's ticket workflow" on app.ticket_statuses is 'svc_api may SELECT only the ticket statuses of the request''s organization (its workflow: categories and the initial status), which createTicket and the ticket documents use. Each organization has its own workflow; no client writes it.';

create policy "Commands act in the request's organization" on app.ticket_statuses to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.ticket_statuses is 'svc_owner, svc_worker and svc_admin may read and write ticket statuses of the request''s organization, or of every organization in an operator session: the default workflow seeded when svc-admin creates an organization, and the rules trigger that checks a ticket''s status. A command with a wrong WHERE inside a request still reaches no other organization''s workflow.';

grant select on table app.ticket_statuses to svc_api;
grant select,insert,delete,update on table app.ticket_statuses to svc_owner;
grant select,insert,delete,update on table app.ticket_statuses to svc_worker;
grant select,insert,delete,update on table app.ticket_statuses to svc_admin;

-- table app.ticket_transitions

create table app.ticket_transitions (
    organization_id text not null,
    name text not null,
    from_status text not null,
    to_status text not null,
    requires_resolution boolean default false not null,
    constraint ticket_transitions_format check ((name ~ '^[a-z][a-z0-9_]{0,40}$'::text))
);

alter table only app.ticket_transitions force row level security;

alter table only app.ticket_transitions
    add constraint ticket_transitions_pkey primary key (organization_id, name, from_status);

create index ticket_transitions_pair on app.ticket_transitions using btree (organization_id, from_status, to_status);

alter table only app.ticket_transitions
    add constraint ticket_transitions_organization_id_from_status_fkey foreign key (organization_id, from_status) references app.ticket_statuses(organization_id, status) on delete cascade;

alter table only app.ticket_transitions
    add constraint ticket_transitions_organization_id_to_status_fkey foreign key (organization_id, to_status) references app.ticket_statuses(organization_id, status) on delete cascade;

alter table app.ticket_transitions enable row level security;

create policy "Clients see their organization's ticket transitions" on app.ticket_transitions for select to svc_api using (organization_id = (select app.current_organization_id()));

comment on policy "Clients see their organization's ticket transitions" on app.ticket_transitions is 'svc_api may SELECT only the ticket workflow transitions of the request''s organization, which each ticket lists as the transitions offered from its status and transitionTicket applies. Each organization has its own workflow; no client writes it.';

create policy "Commands act in the request's organization" on app.ticket_transitions to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.ticket_transitions is 'svc_owner, svc_worker and svc_admin may read and write ticket transitions of the request''s organization, or of every organization in an operator session: the default workflow seeded when svc-admin creates an organization, and the rules trigger that checks a status change. A command with a wrong WHERE inside a request still reaches no other organization''s workflow.';

grant select on table app.ticket_transitions to svc_api;
grant select,insert,delete,update on table app.ticket_transitions to svc_owner;
grant select,insert,delete,update on table app.ticket_transitions to svc_worker;
grant select,insert,delete,update on table app.ticket_transitions to svc_admin;

-- table app.tickets

create table app.tickets (
    organization_id text not null,
    id text default app_private.new_id('tkt'::text) not null,
    number text not null,
    subject text not null,
    description text,
    status text not null,
    priority text default 'normal'::text not null,
    requester_name text,
    requester_email text not null,
    assignee_member_id text,
    project_id text,
    tags text[] default '{}'::text[] not null,
    external_id text,
    resolution text,
    resolved_at timestamp with time zone,
    created_by_client_id text not null,
    version integer default 1 not null,
    created_at timestamp with time zone default now() not null,
    updated_at timestamp with time zone default now() not null,
    constraint tickets_description_length check ((length(description) <= 50000)),
    constraint tickets_external_id_length check (((length(external_id) >= 1) and (length(external_id) <= 255))),
    constraint tickets_priority_valid check ((priority = any (array['low'::text, 'normal'::text, 'high'::text, 'urgent'::text]))),
    constraint tickets_requester_email_format check (((requester_email ~ '^[^@\s]+@[^@\s]+$'::text) and (length(requester_email) <= 320))),
    constraint tickets_requester_name_length check ((length(requester_name) <= 200)),
    constraint tickets_resolution_length check ((length(resolution) <= 10000)),
    constraint tickets_subject_length check (((length(subject) between 1 and 500) and (subject ~ '\S'::text))),
    constraint tickets_tags_bounded check ((cardinality(tags) <= 50))
);

alter table only app.tickets force row level security;

alter table only app.tickets
    add constraint tickets_external_id_unique unique (organization_id, created_by_client_id, external_id);

alter table only app.tickets
    add constraint tickets_number_unique unique (organization_id, number);

alter table only app.tickets
    add constraint tickets_pkey primary key (organization_id, id);

create index tickets_id on app.tickets using btree (id);

create index tickets_org_created on app.tickets using btree (organization_id, created_at desc, id desc);

create index tickets_org_updated on app.tickets using btree (organization_id, updated_at desc, id desc);

create index tickets_tags on app.tickets using gin (tags);

alter table only app.tickets
    add constraint tickets_organization_id_created_by_client_id_fkey foreign key (organization_id, created_by_client_id) references app.api_clients(organization_id, id);

alter table only app.tickets
    add constraint tickets_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table only app.tickets
    add constraint tickets_organization_id_project_id_fkey foreign key (organization_id, project_id) references app.projects(organization_id, id);

alter table only app.tickets
    add constraint tickets_organization_id_status_fkey foreign key (organization_id, status) references app.ticket_statuses(organization_id, status);

alter table app.tickets enable row level security;

create policy "Commands act in the request's organization" on app.tickets to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.tickets is 'svc_owner, svc_worker and svc_admin may read and write tickets of the request''s organization, or of every organization in an operator session (the worker, svc-admin, migrations): the triggers and helpers that check, index and emit tickets, and the worker''s reply email, which reads the ticket it answers. A command with a wrong WHERE inside a request still reaches no other organization''s tickets.';

create policy "Managers change tickets" on app.tickets for update to svc_api using (((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text)) and (select app_private.may_read_tickets()))) with check ((organization_id = (select app.current_organization_id())));

comment on policy "Managers change tickets" on app.tickets is 'svc_api may UPDATE tickets of the request''s organization only when the context holds the manager Role and may read tickets (the module on), and a ticket cannot leave the organization: the spec gives updates, assignment and transitions to managers. Which changes are legal is the rules trigger''s to decide.';

create policy "Managers create tickets" on app.tickets for insert to svc_api with check ((organization_id = (select app.current_organization_id())) and (created_by_client_id = (select app.current_client_id())) and (select app.has_role('manager'::text)) and (select app_private.may_read_tickets()));

comment on policy "Managers create tickets" on app.tickets is 'svc_api may INSERT a ticket only in the request''s organization, recorded as the request''s client''s, when the context holds the manager Role and may read tickets (the module on): the spec gives createTicket to managers.';

create policy "Ticket readers see their organization's tickets" on app.tickets for select to svc_api using ((organization_id = (select app.current_organization_id())) and (select app_private.may_read_tickets()));

comment on policy "Ticket readers see their organization's tickets" on app.tickets is 'svc_api may SELECT tickets of the request''s organization only when the context may read tickets (app_private.may_read_tickets): the module on, and member or manager, or finance or hr where the organization grants them tickets, as the spec''s Role matrix sets.';

create function app_private.tg_tickets__emit() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.tg_tickets__emit() owner to svc_owner;

comment on function app_private.tg_tickets__emit() is 'AFTER INSERT or UPDATE trigger on app.tickets: writes ticket.created, or on an update that advanced the version ticket.transitioned when the status changed and ticket.updated otherwise, to the outbox in the writer''s transaction, so subscribers hear of a change only if it commits. It runs as svc_owner because svc_api may not write app.events.';

create function app_private.tg_tickets__index() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.tg_tickets__index() owner to svc_owner;

comment on function app_private.tg_tickets__index() is 'AFTER INSERT or UPDATE trigger on app.tickets: creates the ticket''s search row (subject weighted above description), and when the subject or description changes rebuilds its public document from them and the ticket''s replies, leaving internal notes in their own document. It runs as svc_owner because svc_api may only read app.ticket_search.';

create function app_private.tg_tickets__rules() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.tg_tickets__rules() owner to svc_owner;

comment on function app_private.tg_tickets__rules() is 'BEFORE INSERT or UPDATE trigger on app.tickets: a new ticket takes its organization''s next number (TKT-000001…, from app_private.ticket_number_counters, which svc_api may not touch) and must start in the workflow''s initial status (SVV23 INVALID_TRANSITION); number, origin and external_id never change (SVC09 CONFLICT), a status changes only along a transition of the workflow and the resolution only with one (SVV23), and a move to a solved status needs a resolution (SVV22 VALIDATION_FAILED) and stamps resolved_at. An assignee must be an active member (SVV22 INVALID_ASSIGNEE) and a project must exist in the organization (SVN04 PROJECT_NOT_FOUND), checked by the row''s own organization.';

create trigger _100_touch_version before update on app.tickets for each row execute function app_private.tg__touch_version();

create trigger _150_rules before insert or update on app.tickets for each row execute function app_private.tg_tickets__rules();

create trigger _900_index after insert or update on app.tickets for each row execute function app_private.tg_tickets__index();

create trigger _950_emit_event after insert or update on app.tickets for each row execute function app_private.tg_tickets__emit();

grant select,insert,update on table app.tickets to svc_api;
grant select,insert,delete,update on table app.tickets to svc_owner;
grant select,insert,delete,update on table app.tickets to svc_worker;
grant select,insert,delete,update on table app.tickets to svc_admin;

revoke all on function app_private.tg_tickets__emit() from public;
grant execute on function app_private.tg_tickets__emit() to svc_worker;
grant execute on function app_private.tg_tickets__emit() to svc_admin;

revoke all on function app_private.tg_tickets__index() from public;
grant execute on function app_private.tg_tickets__index() to svc_worker;
grant execute on function app_private.tg_tickets__index() to svc_admin;

revoke all on function app_private.tg_tickets__rules() from public;
grant execute on function app_private.tg_tickets__rules() to svc_worker;
grant execute on function app_private.tg_tickets__rules() to svc_admin;

-- function app_private.lock_ticket(text)

create function app_private.lock_ticket(p_id text) returns app.tickets
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  t app.tickets;
begin
  select * into t from app.tickets x where x.organization_id = v__organization_id and x.id = p_id for update;
  if not found then
    perform app_private.ticket_not_found(p_id);
  end if;
  return t;
end
$$;

alter function app_private.lock_ticket(p_id text) owner to svc_api;

revoke all on function app_private.lock_ticket(p_id text) from public;
grant execute on function app_private.lock_ticket(p_id text) to svc_owner;
grant execute on function app_private.lock_ticket(p_id text) to svc_worker;
grant execute on function app_private.lock_ticket(p_id text) to svc_admin;

-- table app.ticket_messages

create table app.ticket_messages (
    organization_id text not null,
    id text default app_private.new_id('tmsg'::text) not null,
    ticket_id text not null,
    type text not null,
    body text not null,
    attachment_file_ids text[] default '{}'::text[] not null,
    author_client_id text not null,
    delivery_status text,
    delivery_detail text,
    delivered_at timestamp with time zone,
    created_at timestamp with time zone default now() not null,
    constraint ticket_messages_attachments_bounded check ((cardinality(attachment_file_ids) <= 20)),
    constraint ticket_messages_body_length check (((length(body) between 1 and 50000) and (body ~ '\S'::text))),
    constraint ticket_messages_delivery_for_replies check (((type = 'reply'::text) = (delivery_status is not null))),
    constraint ticket_messages_delivery_valid check ((delivery_status = any (array['queued'::text, 'sent'::text, 'failed'::text]))),
    constraint ticket_messages_type_valid check ((type = any (array['reply'::text, 'internal_note'::text])))
);

alter table only app.ticket_messages force row level security;

alter table only app.ticket_messages
    add constraint ticket_messages_pkey primary key (organization_id, id);

create index ticket_messages_id on app.ticket_messages using btree (id);

create index ticket_messages_ticket on app.ticket_messages using btree (organization_id, ticket_id, created_at, id);

alter table only app.ticket_messages
    add constraint ticket_messages_organization_id_author_client_id_fkey foreign key (organization_id, author_client_id) references app.api_clients(organization_id, id);

alter table only app.ticket_messages
    add constraint ticket_messages_organization_id_ticket_id_fkey foreign key (organization_id, ticket_id) references app.tickets(organization_id, id);

alter table app.ticket_messages enable row level security;

create policy "Commands act in the request's organization" on app.ticket_messages to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.ticket_messages is 'svc_owner, svc_worker and svc_admin may read and write ticket messages of the request''s organization, or of every organization in an operator session (the worker, svc-admin, migrations): the triggers that index and emit messages and the worker''s reply email, which records a reply''s delivery. A command with a wrong WHERE inside a request still reaches no other organization''s messages.';

create policy "Managers add messages" on app.ticket_messages for insert to svc_api with check ((organization_id = (select app.current_organization_id())) and (author_client_id = (select app.current_client_id())) and (select app.has_role('manager'::text)) and (select app_private.may_read_tickets()));

comment on policy "Managers add messages" on app.ticket_messages is 'svc_api may INSERT a ticket message only in the request''s organization, authored by the request''s client, when the context holds the manager Role and may read tickets (the module on): the spec gives replies and notes to managers and records the client as author.';

create policy "Ticket readers see replies, staff also internal notes" on app.ticket_messages for select to svc_api using ((organization_id = (select app.current_organization_id())) and (select app_private.may_read_tickets()) and ((type = 'reply'::text) or (select app_private.may_read_internal_notes())));

comment on policy "Ticket readers see replies, staff also internal notes" on app.ticket_messages is 'svc_api may SELECT messages of the request''s organization only when the context may read tickets, and internal notes only when it also holds the member or manager Role (app_private.may_read_internal_notes): finance and hr, where the organization lets them read tickets, see replies alone.';

create function app_private.tg_ticket_messages__emit() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  perform app_private.emit_event(new.organization_id, 'ticket.message.created', 'ticket_message', new.id, 1);
  if new.type = 'reply' then
    perform app_private.queue_job(new.organization_id, 'ticket_reply_email', json_build_object('message_id', new.id),
                                  'ticket_reply:' || new.id, 10);
  end if;
  return null;
end
$$;

alter function app_private.tg_ticket_messages__emit() owner to svc_owner;

comment on function app_private.tg_ticket_messages__emit() is 'AFTER INSERT trigger on app.ticket_messages: writes the ticket.message.created event to the outbox and, for a reply, queues the ticket_reply_email job (job key ticket_reply:<message id>, 10 attempts) in the writer''s transaction, so a reply is emailed only if it commits; internal notes never leave. It runs as svc_owner because svc_api may not write app.events or the job queue; both name the message''s organization.';

create function app_private.tg_ticket_messages__index() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.tg_ticket_messages__index() owner to svc_owner;

comment on function app_private.tg_ticket_messages__index() is 'AFTER INSERT trigger on app.ticket_messages: adds the message''s text to its ticket''s search document, a reply to the public document and an internal note to the internal-note document, kept apart so that a reader who may not see notes cannot find tickets by them. It runs as svc_owner because svc_api may only read app.ticket_search.';

create function app_private.tg_ticket_messages__rules() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.tg_ticket_messages__rules() owner to svc_owner;

comment on function app_private.tg_ticket_messages__rules() is 'BEFORE INSERT, UPDATE or DELETE trigger on app.ticket_messages: a message is never deleted and never changes, except that a queued reply''s delivery is recorded once (SVC09 CONFLICT); its attachments must be ready files linked to its ticket (SVV22 ATTACHMENT_NOT_AVAILABLE), and a new reply starts with its delivery queued, a note with none. It holds for every writer; it runs as svc_owner so that the attachment check reads the ticket''s files past the writer''s Role policies, in the message''s own organization.';

create trigger _150_rules before insert or delete or update on app.ticket_messages for each row execute function app_private.tg_ticket_messages__rules();

create trigger _900_index after insert on app.ticket_messages for each row execute function app_private.tg_ticket_messages__index();

create trigger _950_emit_event after insert on app.ticket_messages for each row execute function app_private.tg_ticket_messages__emit();

grant select,insert on table app.ticket_messages to svc_api;
grant select,insert,delete,update on table app.ticket_messages to svc_owner;
grant select,insert,delete,update on table app.ticket_messages to svc_worker;
grant select,insert,delete,update on table app.ticket_messages to svc_admin;

revoke all on function app_private.tg_ticket_messages__emit() from public;
grant execute on function app_private.tg_ticket_messages__emit() to svc_worker;
grant execute on function app_private.tg_ticket_messages__emit() to svc_admin;

revoke all on function app_private.tg_ticket_messages__index() from public;
grant execute on function app_private.tg_ticket_messages__index() to svc_worker;
grant execute on function app_private.tg_ticket_messages__index() to svc_admin;

revoke all on function app_private.tg_ticket_messages__rules() from public;
grant execute on function app_private.tg_ticket_messages__rules() to svc_worker;
grant execute on function app_private.tg_ticket_messages__rules() to svc_admin;

-- table app.ticket_search

create table app.ticket_search (
    organization_id text not null,
    ticket_id text not null,
    public_doc tsvector not null,
    internal_doc tsvector default ''::tsvector not null
);

alter table only app.ticket_search force row level security;

alter table only app.ticket_search
    add constraint ticket_search_pkey primary key (organization_id, ticket_id);

create index ticket_search_internal on app.ticket_search using gin (internal_doc);

create index ticket_search_public on app.ticket_search using gin (public_doc);

alter table only app.ticket_search
    add constraint ticket_search_organization_id_ticket_id_fkey foreign key (organization_id, ticket_id) references app.tickets(organization_id, id) on delete cascade;

alter table app.ticket_search enable row level security;

create policy "Commands act in the request's organization" on app.ticket_search to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.ticket_search is 'svc_owner, svc_worker and svc_admin may read and write ticket search documents of the request''s organization, or of every organization in an operator session: the triggers that keep the public and internal-note documents and api.ticket_search_ids, which searches them. A command with a wrong WHERE inside a request still reaches no other organization''s documents.';

create policy "Search follows the tickets" on app.ticket_search for select to svc_api using ((organization_id = (select app.current_organization_id())) and (select app_private.may_read_tickets()));

comment on policy "Search follows the tickets" on app.ticket_search is 'svc_api may SELECT search documents of the request''s organization only when the context may read tickets, as for the tickets themselves: the search documents hold ticket text, and no one who cannot read tickets may query it.';

grant select on table app.ticket_search to svc_api;
grant select,insert,delete,update on table app.ticket_search to svc_owner;
grant select,insert,delete,update on table app.ticket_search to svc_worker;
grant select,insert,delete,update on table app.ticket_search to svc_admin;

-- table app_private.ticket_number_counters

create table app_private.ticket_number_counters (
    organization_id text not null,
    last_number bigint default 0 not null
);

alter table only app_private.ticket_number_counters force row level security;

alter table only app_private.ticket_number_counters
    add constraint ticket_number_counters_pkey primary key (organization_id);

alter table only app_private.ticket_number_counters
    add constraint ticket_number_counters_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table app_private.ticket_number_counters enable row level security;

create policy "Commands act in the request's organization" on app_private.ticket_number_counters to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app_private.ticket_number_counters is 'svc_owner, svc_worker and svc_admin may read and advance the ticket number counter of the request''s organization, or of every organization in an operator session: the rules trigger takes each new ticket''s number from its organization''s row, which also serializes numbering per organization. A trigger with a wrong WHERE inside a request still advances no other organization''s counter.';

grant select,insert,delete,update on table app_private.ticket_number_counters to svc_owner;
grant select,insert,delete,update on table app_private.ticket_number_counters to svc_worker;
grant select,insert,delete,update on table app_private.ticket_number_counters to svc_admin;

-- view api.ticket_messages

create view api.ticket_messages as
 select m.organization_id,
    m.id,
    m.ticket_id,
    m.type,
    m.created_at,
    jsonb_build_object('object', 'ticket_message', 'id', m.id, 'ticket_id', m.ticket_id, 'type', m.type, 'body', m.body, 'attachments', to_jsonb(m.attachment_file_ids), 'author', jsonb_build_object('type', 'api_client', 'id', m.author_client_id), 'delivery',
        case
            when (m.type = 'reply'::text) then jsonb_build_object('status', m.delivery_status, 'detail', m.delivery_detail, 'delivered_at', app_private.iso_timestamp(m.delivered_at))
            else null::jsonb
        end, 'created_at', app_private.iso_timestamp(m.created_at)) as doc
   from app.ticket_messages m;

alter view api.ticket_messages owner to svc_api;

grant select on table api.ticket_messages to svc_runtime;
grant select on table api.ticket_messages to svc_owner;

-- view api.tickets

create view api.tickets as
 select t.organization_id,
    t.id,
    t.status,
    t.priority,
    t.assignee_member_id,
    t.project_id,
    t.requester_email,
    t.tags,
    t.created_at,
    t.updated_at,
    t.version,
    jsonb_build_object('object', 'ticket', 'id', t.id, 'number', t.number, 'subject', t.subject, 'description', t.description, 'status', t.status, 'priority', t.priority, 'requester', jsonb_build_object('name', t.requester_name, 'email',
        case
            when (select app.has_any_role('{member,manager}'::text[])) then t.requester_email
            else null::text
        end), 'assignee_member_id', t.assignee_member_id, 'project_id', t.project_id, 'tags', to_jsonb(t.tags), 'external_id', t.external_id, 'resolution', t.resolution, 'resolved_at', app_private.iso_timestamp(t.resolved_at), 'transitions', coalesce(( select jsonb_agg(jsonb_build_object('name', tr.name, 'to_status', tr.to_status, 'requires_resolution', tr.requires_resolution) order by tr.name) as jsonb_agg
           from app.ticket_transitions tr
          where ((tr.organization_id = t.organization_id) and (tr.from_status = t.status))), '[]'::jsonb), 'version', t.version, 'created_at', app_private.iso_timestamp(t.created_at), 'updated_at', app_private.iso_timestamp(t.updated_at)) as doc
   from app.tickets t;

alter view api.tickets owner to svc_api;

grant select on table api.tickets to svc_runtime;
grant select on table api.tickets to svc_owner;

-- function api.require_tickets(boolean)

create function api.require_tickets(p_write boolean) returns boolean
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  if not coalesce((select o.ticket_module_enabled from app.organizations o where o.id = v__organization_id), false) then
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

alter function api.require_tickets(p_write boolean) owner to svc_api;

comment on function api.require_tickets(p_write boolean) is 'The reason a ticket request is refused before anything is read: the organization''s ticket module is off (SVR04 TICKET_MODULE_DISABLED); a write without the manager Role (SVR03 ROLE_REQUIRED); a read without the right to read tickets (member or manager, finance or hr only where the organization grants them tickets; SVR03 ROLE_REQUIRED), as the spec''s Role matrix sets. It runs as svc_api because svc_runtime may not read app.organizations; it reads only the request''s organization.';

revoke all on function api.require_tickets(p_write boolean) from public;
grant execute on function api.require_tickets(p_write boolean) to svc_runtime;
grant execute on function api.require_tickets(p_write boolean) to svc_owner;
grant execute on function api.require_tickets(p_write boolean) to svc_worker;

-- function api.ticket_create(jsonb)

create function api.ticket_create(p_body jsonb) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  v_id text;
  v_status text;
  v_tags text[];
begin
  perform api.require_tickets(true);
  -- Read first: Citus takes no subquery in the values of an INSERT.
  select s.status into v_status from app.ticket_statuses s where s.organization_id = v__organization_id and s.is_initial;
  v_tags := coalesce((select array_agg(distinct lower(btrim(x))) from jsonb_array_elements_text(coalesce(p_body -> 'tags', '[]')) x), '{}');
  insert into app.tickets (organization_id, subject, description, status, priority, requester_name, requester_email, tags,
                           external_id, created_by_client_id)
  values (v__organization_id, p_body ->> 'subject', p_body ->> 'description',
          v_status,
          coalesce(p_body ->> 'priority', 'normal'), p_body #>> '{requester,name}', lower(btrim(p_body #>> '{requester,email}')),
          v_tags,
          p_body ->> 'external_id', app.current_client_id())
  returning id into v_id;
  return query select v.doc, v.version from api.tickets(v_id) v where v.id = v_id;
end
$$;

alter function api.ticket_create(p_body jsonb) owner to svc_api;

comment on function api.ticket_create(p_body jsonb) is 'createTicket (manager, checked by api.require_tickets): a ticket of the request''s organization in its workflow''s initial status, priority normal unless given, the requester''s email and the tags trimmed and lower-cased (tags once each), recorded as the calling client''s; its number and the workflow are the rules trigger''s. It runs as svc_api because svc_runtime may not write app.tickets; the row takes the context''s organization and client, which the policy "Managers create tickets" checks again.';

revoke all on function api.ticket_create(p_body jsonb) from public;
grant execute on function api.ticket_create(p_body jsonb) to svc_runtime;
grant execute on function api.ticket_create(p_body jsonb) to svc_owner;
grant execute on function api.ticket_create(p_body jsonb) to svc_worker;

-- function api.ticket_get(text)

create function api.ticket_get(p_id text) returns table(doc jsonb, version integer)
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  perform api.require_tickets(false);
  return query select v.doc, v.version from api.tickets(p_id) v where v.id = p_id;
end
$$;

alter function api.ticket_get(p_id text) owner to svc_api;

comment on function api.ticket_get(p_id text) is 'getTicket: the ticket''s document and version (its ETag) from api.tickets, after api.require_tickets(false) has refused a disabled module or a caller who may not read tickets; no row when the ticket is not visible. It runs as svc_api because svc_runtime may not read the ticket tables; svc_api''s policies show only the request''s organization''s tickets, and only to ticket readers.';

revoke all on function api.ticket_get(p_id text) from public;
grant execute on function api.ticket_get(p_id text) to svc_runtime;
grant execute on function api.ticket_get(p_id text) to svc_owner;
grant execute on function api.ticket_get(p_id text) to svc_worker;

-- function api.ticket_message_create(text, jsonb)

create function api.ticket_message_create(p_ticket_id text, p_body jsonb) returns jsonb
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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
   where not exists (select from api.files(a) f where f.id = a and f.status = 'ready'
                                             and f.linked_resource_type = 'ticket' and f.linked_resource_id = t.id);
  if v_bad is not null then
    perform app_private.raise_errors(app_private.error('/attachments', 'ATTACHMENT_NOT_AVAILABLE',
      format('not ready files of ticket %s that you may read: %s; upload attachments with linked_resource {type: ticket, id: %s}',
             t.id, array_to_string(v_bad, ', '), t.id)));
  end if;
  insert into app.ticket_messages (organization_id, ticket_id, type, body, attachment_file_ids, author_client_id)
  values (t.organization_id, t.id, p_body ->> 'type', p_body ->> 'body', v_files, app.current_client_id())
  returning id into v_id;
  return (select v.doc from api.ticket_messages(v_id) v where v.id = v_id);
end
$$;

alter function api.ticket_message_create(p_ticket_id text, p_body jsonb) owner to svc_api;

comment on function api.ticket_message_create(p_ticket_id text, p_body jsonb) is 'createTicketMessage (manager): locks the ticket (SVN04 TICKET_NOT_FOUND), requires every attachment to be a ready file linked to this ticket that the caller may read (SVV22 ATTACHMENT_NOT_AVAILABLE), and records the reply or internal note with the calling client as its author, as the spec asks; a reply is then emailed to the requester by the worker. It runs as svc_api because svc_runtime may not write app.ticket_messages; the message takes the locked ticket''s organization and passes the policy "Managers add messages".';

revoke all on function api.ticket_message_create(p_ticket_id text, p_body jsonb) from public;
grant execute on function api.ticket_message_create(p_ticket_id text, p_body jsonb) to svc_runtime;
grant execute on function api.ticket_message_create(p_ticket_id text, p_body jsonb) to svc_owner;
grant execute on function api.ticket_message_create(p_ticket_id text, p_body jsonb) to svc_worker;

-- function api.ticket_messages(text)

create function api.ticket_messages(p_id text default null::text) returns setof api.ticket_messages
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.ticket_messages v;
    else
      return query select * from api.ticket_messages v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.ticket_messages', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;

alter function api.ticket_messages(p_id text) owner to svc_api;

comment on function api.ticket_messages(p_id text) is 'The rows of view api.ticket_messages for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

revoke all on function api.ticket_messages(p_id text) from public;
grant execute on function api.ticket_messages(p_id text) to svc_runtime;
grant execute on function api.ticket_messages(p_id text) to svc_owner;
grant execute on function api.ticket_messages(p_id text) to svc_worker;

-- function api.ticket_require(text)

create function api.ticket_require(p_id text) returns boolean
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  if not exists (select from app.tickets t where t.organization_id = v__organization_id and t.id = p_id) then
    perform app_private.ticket_not_found(p_id);
  end if;
  return true;
end
$$;

alter function api.ticket_require(p_id text) owner to svc_api;

comment on function api.ticket_require(p_id text) is 'Answers SVN04 TICKET_NOT_FOUND unless the ticket exists in the request''s organization and the caller may see it, so that listTicketMessages tells a missing ticket from one without messages. It runs as svc_api because svc_runtime may not read app.tickets; the read names the request''s organization and the ticket readers'' policy applies.';

revoke all on function api.ticket_require(p_id text) from public;
grant execute on function api.ticket_require(p_id text) to svc_runtime;
grant execute on function api.ticket_require(p_id text) to svc_owner;
grant execute on function api.ticket_require(p_id text) to svc_worker;

-- function api.ticket_search_ids(text)

create function api.ticket_search_ids(p_query text) returns setof text
    language plpgsql stable security definer rows 100
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
begin
  perform app_private.refuse_on_coordinator('api.ticket_search_ids(text)');
  return query select s.ticket_id from app.ticket_search s
   where (select app_private.may_read_tickets())
     and s.organization_id = v__organization_id and s.public_doc @@ websearch_to_tsquery('simple', p_query)
  union
  select s.ticket_id from app.ticket_search s
   where (select app_private.may_read_internal_notes())
     and s.organization_id = v__organization_id and s.internal_doc @@ websearch_to_tsquery('simple', p_query);
end
$$;

alter function api.ticket_search_ids(p_query text) owner to svc_owner;

comment on function api.ticket_search_ids(p_query text) is 'The ids of the request''s organization''s tickets that match a web-search query, for listTickets'' search: the public document (subject, description, replies) for whoever may read tickets, the internal-note document only for those who may read internal notes (member, manager), so a reader who may not see notes cannot find a ticket by them. It runs as svc_owner, whose policy on app.ticket_search shows only the request''s organization; it names that organization and applies the reader checks itself, and returns only ids, which api.tickets filters again by its policies (refused on a Citus coordinator, SV500 NOT_IN_ITS_WORKER).';

revoke all on function api.ticket_search_ids(p_query text) from public;
grant execute on function api.ticket_search_ids(p_query text) to svc_runtime;
grant execute on function api.ticket_search_ids(p_query text) to svc_worker;

-- function api.ticket_transition(text, text, text)

create function api.ticket_transition(p_id text, p_transition text, p_resolution text) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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
  return query select v.doc, v.version from api.tickets(p_id) v where v.id = p_id;
end
$$;

alter function api.ticket_transition(p_id text, p_transition text, p_resolution text) owner to svc_api;

comment on function api.ticket_transition(p_id text, p_transition text, p_resolution text) is 'transitionTicket (manager): locks the ticket and applies the named transition only where the organization''s workflow offers it from the current status (SVV23 INVALID_TRANSITION); a transition that requires a resolution needs a non-blank one and the others take none (SVV22 VALIDATION_FAILED); closing keeps the resolution, other transitions without one clear it. It runs as svc_api because svc_runtime may not write app.tickets; the update names the ticket''s organization, passes "Managers change tickets", and the rules trigger checks the move again.';

revoke all on function api.ticket_transition(p_id text, p_transition text, p_resolution text) from public;
grant execute on function api.ticket_transition(p_id text, p_transition text, p_resolution text) to svc_runtime;
grant execute on function api.ticket_transition(p_id text, p_transition text, p_resolution text) to svc_owner;
grant execute on function api.ticket_transition(p_id text, p_transition text, p_resolution text) to svc_worker;

-- function api.ticket_update(text, integer[], jsonb)

create function api.ticket_update(p_id text, p_if_match integer[], p_patch jsonb) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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
  return query select v.doc, v.version from api.tickets(p_id) v where v.id = p_id;
end
$$;

alter function api.ticket_update(p_id text, p_if_match integer[], p_patch jsonb) owner to svc_api;

comment on function api.ticket_update(p_id text, p_if_match integer[], p_patch jsonb) is 'updateTicket (manager): a status in the patch is refused (SVV23 INVALID_TRANSITION: status changes only through transitions), If-Match must name the current version (SVS12 STALE_RESOURCE), and only subject, description, priority, tags, assignee and project change (SVV22 IMMUTABLE_FIELD); the assignee and project are checked by the rules trigger. It runs as svc_api because svc_runtime may not write app.tickets; the locked ticket and the update name the request''s organization and pass "Managers change tickets".';

revoke all on function api.ticket_update(p_id text, p_if_match integer[], p_patch jsonb) from public;
grant execute on function api.ticket_update(p_id text, p_if_match integer[], p_patch jsonb) to svc_runtime;
grant execute on function api.ticket_update(p_id text, p_if_match integer[], p_patch jsonb) to svc_owner;
grant execute on function api.ticket_update(p_id text, p_if_match integer[], p_patch jsonb) to svc_worker;

-- function api.tickets(text)

create function api.tickets(p_id text default null::text) returns setof api.tickets
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.tickets v;
    else
      return query select * from api.tickets v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.tickets', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;

alter function api.tickets(p_id text) owner to svc_api;

comment on function api.tickets(p_id text) is 'The rows of view api.tickets for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

revoke all on function api.tickets(p_id text) from public;
grant execute on function api.tickets(p_id text) to svc_runtime;
grant execute on function api.tickets(p_id text) to svc_owner;
grant execute on function api.tickets(p_id text) to svc_worker;

-- function control.org_set_ticket_policy(text, boolean, boolean, boolean)

create function control.org_set_ticket_policy(p_org text, p_module_enabled boolean, p_finance_may_read boolean, p_hr_may_read boolean) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
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

revoke all on function control.org_set_ticket_policy(p_org text, p_module_enabled boolean, p_finance_may_read boolean, p_hr_may_read boolean) from public;
grant execute on function control.org_set_ticket_policy(p_org text, p_module_enabled boolean, p_finance_may_read boolean, p_hr_may_read boolean) to svc_admin;

revoke create on schema api, app, app_private, control, reporting, skills from svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
