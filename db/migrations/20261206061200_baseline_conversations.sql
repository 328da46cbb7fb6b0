-- migrate:up

/** The baseline, 12 of 16. Conversations: conversations and their messages, and the runs they start.
 * Laid out by table: each table, then its keys and indexes, row security and policies, triggers
 * and their functions, and grants; then the area's views and commands. db/README.md, "The
 * baseline", says how it was made and proved equal to the migrations it replaced. */
set local check_function_bodies = false;
set local client_min_messages = warning;
set local search_path = '';

-- While this file runs, the owners of its functions and views may create in the schemas (`alter … owner to`
-- a role needs it when the migrating role is not a superuser); taken back at its end.
grant create on schema api, app, app_private, control, reporting, skills to svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- function app_private.chat_context(text, text)

create function app_private.chat_context(p_organization_id text, p_run_id text) returns jsonb
    language plpgsql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.chat_context(p_organization_id text, p_run_id text) owner to svc_owner;

revoke all on function app_private.chat_context(p_organization_id text, p_run_id text) from public;
grant execute on function app_private.chat_context(p_organization_id text, p_run_id text) to svc_worker;
grant execute on function app_private.chat_context(p_organization_id text, p_run_id text) to svc_admin;

-- function app_private.context_budget()

create function app_private.context_budget() returns integer
    language sql immutable
    as $$ select 32000 $$;

alter function app_private.context_budget() owner to svc_owner;

revoke all on function app_private.context_budget() from public;
grant execute on function app_private.context_budget() to svc_api;
grant execute on function app_private.context_budget() to svc_worker;
grant execute on function app_private.context_budget() to svc_admin;

-- function app_private.conversation_compact(text, text)

create function app_private.conversation_compact(p_org text, p_id text) returns void
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  c app.conversations;
  m app.conversation_messages;
  v_total integer;
  v_line text;
begin
  select * into c from app.conversations x where x.organization_id = p_org and x.id = p_id for update;
  loop
    select coalesce(sum(length(x.content::text)), 0) into v_total from app.conversation_messages x
     where x.organization_id = p_org and x.conversation_id = p_id and x.seq > c.context_from_seq;
    exit when v_total <= app_private.context_budget();
    select * into m from app.conversation_messages x
     where x.organization_id = p_org and x.conversation_id = p_id and x.seq > c.context_from_seq order by x.seq limit 1;
    v_line := m.role || ': ' || left(regexp_replace(coalesce((select string_agg(coalesce(b ->> 'text', b ->> 'message', b ->> 'type'), ' ')
                                                              from jsonb_array_elements(m.content) b), ''), '\s+', ' ', 'g'), 200);
    c.context_summary := right(coalesce(c.context_summary || E'\n', '') || v_line, 4000);
    c.context_from_seq := m.seq;
  end loop;
  update app.conversations x set context_from_seq = c.context_from_seq, context_summary = c.context_summary
   where x.organization_id = p_org and x.id = p_id;
end
$$;

alter function app_private.conversation_compact(p_org text, p_id text) owner to svc_owner;

comment on function app_private.conversation_compact(p_org text, p_id text) is 'Keeps a conversation''s working context within app_private.context_budget() characters: while the messages after context_from_seq exceed it, the oldest one moves into context_summary (its role and the start of its text; the summary keeps its newest 4,000 characters) and context_from_seq moves past it, while the history stays. It belongs to svc_owner because it runs both in the client''s request (after a user message) and in the worker''s session when a chat run''s reply is appended (tg_runs__conversation_reply), where svc_api''s policies show nothing; its statements name p_org, and svc_owner''s policy keeps a request to its own organization.';

revoke all on function app_private.conversation_compact(p_org text, p_id text) from public;
grant execute on function app_private.conversation_compact(p_org text, p_id text) to svc_api;
grant execute on function app_private.conversation_compact(p_org text, p_id text) to svc_worker;
grant execute on function app_private.conversation_compact(p_org text, p_id text) to svc_admin;

-- function app_private.conversation_subject(jsonb)

create function app_private.conversation_subject(p_subject jsonb) returns text
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_keys text[];
  v_ids text[];
begin
  if p_subject is null or p_subject = 'null'::jsonb then
    return null;
  end if;
  select array_agg(k order by k) into v_keys from jsonb_object_keys(p_subject) k;
  if coalesce(p_subject ->> 'type', 'member') <> 'member' or not (v_keys <@ '{display_name,member_id,type}' and cardinality(array_remove(v_keys, 'type')) = 1) then
    perform app_private.raise('SVV22', 'SUBJECT_NOT_SUPPORTED',
      'a conversation''s subject is one member: {"member_id": "<email>"} or {"display_name": "<name>"}', '/subject');
  end if;
  if p_subject ? 'member_id' then
    select array_agg(m.id) into v_ids from api.members(lower(trim(p_subject ->> 'member_id'))) m where m.id = lower(trim(p_subject ->> 'member_id')) and m.status = 'active';
  else
    select array_agg(m.id order by m.id) into v_ids from api.members() m
     where lower(m.display_name) = lower(trim(p_subject ->> 'display_name')) and m.status = 'active';
  end if;
  if v_ids is null then
    perform app_private.raise('SVV22', 'SUBJECT_NOT_FOUND', 'no active member of your organization matches the subject', '/subject');
  end if;
  if cardinality(v_ids) > 1 then
    perform app_private.raise('SVV22', 'SUBJECT_AMBIGUOUS',
      format('%s active members have that display name; name the member by member_id', cardinality(v_ids)), '/subject');
  end if;
  return v_ids[1];
end
$$;

alter function app_private.conversation_subject(p_subject jsonb) owner to svc_api;

comment on function app_private.conversation_subject(p_subject jsonb) is 'Resolves a conversation''s subject to one active member id: {"member_id": email} exactly, or {"display_name": name} case-insensitively, read through api.members; any other shape is SVV22 SUBJECT_NOT_SUPPORTED, no match SUBJECT_NOT_FOUND, several active members with that name SUBJECT_AMBIGUOUS. It is svc_api''s so that whoever calls it reads members under svc_api''s policies: only members of the request''s organization that the client may see.';

revoke all on function app_private.conversation_subject(p_subject jsonb) from public;
grant execute on function app_private.conversation_subject(p_subject jsonb) to svc_owner;
grant execute on function app_private.conversation_subject(p_subject jsonb) to svc_worker;
grant execute on function app_private.conversation_subject(p_subject jsonb) to svc_admin;

-- function app_private.message_budget()

create function app_private.message_budget() returns integer
    language sql immutable
    as $$ select 16000 $$;

alter function app_private.message_budget() owner to svc_owner;

revoke all on function app_private.message_budget() from public;
grant execute on function app_private.message_budget() to svc_api;
grant execute on function app_private.message_budget() to svc_worker;
grant execute on function app_private.message_budget() to svc_admin;

-- table app.conversations

create table app.conversations (
    organization_id text not null,
    id text default app_private.new_id('cnv'::text) not null,
    client_id text not null,
    title text,
    subject_member_id text,
    metadata jsonb default '{}'::jsonb not null,
    status text default 'active'::text not null,
    message_count integer default 0 not null,
    context_from_seq integer default 0 not null,
    context_summary text,
    context_cleared_at timestamp with time zone,
    context_expired_at timestamp with time zone,
    last_activity_at timestamp with time zone default now() not null,
    created_at timestamp with time zone default now() not null,
    updated_at timestamp with time zone default now() not null,
    archived_at timestamp with time zone,
    constraint conversations_archived_at_iff_archived check (((status = 'archived'::text) = (archived_at is not null))),
    constraint conversations_status_valid check ((status = any (array['active'::text, 'archived'::text]))),
    constraint conversations_summary_bounded check ((length(context_summary) <= 4000)),
    constraint conversations_title_length check (((title is null) or ((length(title) >= 1) and (length(title) <= 200))))
);

alter table only app.conversations force row level security;

alter table only app.conversations
    add constraint conversations_pkey primary key (organization_id, id);

create index conversations_client_updated on app.conversations using btree (organization_id, client_id, updated_at desc, id desc);

create index conversations_id on app.conversations using btree (id);

create index conversations_idle on app.conversations using btree (last_activity_at) where (context_from_seq < message_count);

alter table only app.conversations
    add constraint conversations_organization_id_client_id_fkey foreign key (organization_id, client_id) references app.api_clients(organization_id, id);

alter table only app.conversations
    add constraint conversations_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table only app.conversations
    add constraint conversations_organization_id_subject_member_id_fkey foreign key (organization_id, subject_member_id) references app.members(organization_id, id);

alter table app.conversations enable row level security;

create policy "Clients change their own conversations" on app.conversations for update to svc_api using (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id())))) with check (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));

comment on policy "Clients change their own conversations" on app.conversations is 'svc_api may update only conversations of the request''s organization created by the calling client (client_id = app.current_client_id()), checked before and after the change, so no command touches or hands over another client''s conversation: the spec gives a conversation to the client that created it alone. Column grants limit svc_api to the status, archiving, message-count and working-context columns, and tg_conversations__lifecycle keeps client, subject and history fixed.';

create policy "Clients see their own conversations" on app.conversations for select to svc_api using ((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id())));

comment on policy "Clients see their own conversations" on app.conversations is 'svc_api reads only conversations of the request''s organization whose client_id is the calling client: a conversation is visible to the client that created it, not to the rest of its organization (spec Role matrix: runs, conversations). Without a valid signed context nothing is visible.';

create policy "Clients start conversations" on app.conversations for insert to svc_api with check ((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id())));

comment on policy "Clients start conversations" on app.conversations is 'svc_api may insert a conversation only into the request''s organization and with client_id the calling client, so a client cannot start a conversation in another client''s name or organization.';

create policy "Commands act in the request's organization" on app.conversations to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.conversations is 'svc_owner, svc_worker and svc_admin read and write conversations of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). Compaction, the chat reply trigger, tg__client_of_parent and the worker''s context expiry run under it, so a definer''s wrong WHERE still reaches no other organization in a request, while jobs that span organizations reach them all.';

create function app_private.tg_conversations__lifecycle() returns trigger
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if tg_op = 'INSERT' then
    if new.status <> 'active' then
      perform app_private.raise('SVC09', 'CONFLICT', 'a conversation starts active');
    end if;
    return new;
  end if;
  if (new.organization_id, new.id, new.client_id, new.subject_member_id, new.created_at)
     is distinct from (old.organization_id, old.id, old.client_id, old.subject_member_id, old.created_at) then
    perform app_private.raise('SVC09', 'CONFLICT', 'a conversation''s client and subject are fixed for its life');
  end if;
  if old.status = 'archived' and new.status <> 'archived' then
    perform app_private.raise('SVC09', 'CONVERSATION_ARCHIVED', 'an archived conversation stays archived');
  end if;
  if new.message_count < old.message_count or new.context_from_seq < old.context_from_seq or new.context_from_seq > new.message_count then
    perform app_private.raise('SVC09', 'CONFLICT', 'history only grows, and the working context only moves forward');
  end if;
  new.updated_at := now();
  return new;
end
$$;

alter function app_private.tg_conversations__lifecycle() owner to svc_owner;

comment on function app_private.tg_conversations__lifecycle() is 'BEFORE INSERT or UPDATE row trigger on app.conversations (_100_lifecycle): a conversation starts active; its organization, id, client, subject and created_at never change (the spec fixes the subject for the conversation); history only grows and the working context only moves forward, never past the last message (each SVC09 CONFLICT); an archived conversation stays archived (SVC09 CONVERSATION_ARCHIVED). It also stamps updated_at, for every writer.';

create trigger _100_lifecycle before insert or update on app.conversations for each row execute function app_private.tg_conversations__lifecycle();

grant select,insert on table app.conversations to svc_api;
grant select,insert,delete,update on table app.conversations to svc_owner;
grant select,insert,delete,update on table app.conversations to svc_worker;
grant select,insert,delete,update on table app.conversations to svc_admin;

grant update(status) on table app.conversations to svc_api;

grant update(message_count) on table app.conversations to svc_api;

grant update(context_from_seq) on table app.conversations to svc_api;

grant update(context_summary) on table app.conversations to svc_api;

grant update(context_cleared_at) on table app.conversations to svc_api;

grant update(last_activity_at) on table app.conversations to svc_api;

grant update(updated_at) on table app.conversations to svc_api;

grant update(archived_at) on table app.conversations to svc_api;

revoke all on function app_private.tg_conversations__lifecycle() from public;
grant execute on function app_private.tg_conversations__lifecycle() to svc_worker;
grant execute on function app_private.tg_conversations__lifecycle() to svc_admin;

-- foreign key app.runs runs_conversation_fkey

alter table only app.runs
    add constraint runs_conversation_fkey foreign key (organization_id, conversation_id) references app.conversations(organization_id, id);

-- table app.conversation_messages

create table app.conversation_messages (
    organization_id text not null,
    id text default app_private.new_id('msg'::text) not null,
    conversation_id text not null,
    seq integer not null,
    role text not null,
    content jsonb not null,
    run_id text,
    created_at timestamp with time zone default clock_timestamp() not null,
    client_id text not null,
    constraint conversation_messages_content_blocks check (((jsonb_typeof(content) = 'array'::text) and ((jsonb_array_length(content) >= 1) and (jsonb_array_length(content) <= 50)) and (jsonb_path_query_first(content, '$[*]?(!((((@."type" == "text" || @."type" == "data") || @."type" == "file_reference") || @."type" == "citation") || @."type" == "error"))'::jsonpath) is null))),
    constraint conversation_messages_role_valid check ((role = any (array['user'::text, 'assistant'::text])))
);

alter table only app.conversation_messages force row level security;

alter table only app.conversation_messages
    add constraint conversation_messages_organization_id_conversation_id_seq_key unique (organization_id, conversation_id, seq);

alter table only app.conversation_messages
    add constraint conversation_messages_pkey primary key (organization_id, id);

create index conversation_messages_id on app.conversation_messages using btree (id);

alter table only app.conversation_messages
    add constraint conversation_messages_organization_id_conversation_id_fkey foreign key (organization_id, conversation_id) references app.conversations(organization_id, id) on delete cascade;

alter table app.conversation_messages enable row level security;

create policy "Clients write to their own conversations" on app.conversation_messages for insert to svc_api with check ((organization_id = (select app.current_organization_id())) and (role = 'user'::text) and (client_id = (select app.current_client_id())));

comment on policy "Clients write to their own conversations" on app.conversation_messages is 'svc_api may insert only messages of role user, in the request''s organization, whose client_id is the calling client; tg__client_of_parent copies client_id from the conversation before the check, so this admits a message only to one of the client''s own conversations. The assistant''s replies are appended by tg_runs__conversation_reply as svc_owner, never by a request.';

create policy "Commands act in the request's organization" on app.conversation_messages to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.conversation_messages is 'svc_owner, svc_worker and svc_admin read and write messages of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The assistant''s replies (tg_runs__conversation_reply), compaction and the worker''s chat context run under it, so a definer''s wrong WHERE still reaches no other organization in a request, while jobs that span organizations reach them all.';

create policy "Messages are readable with their conversation" on app.conversation_messages for select to svc_api using ((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id())));

comment on policy "Messages are readable with their conversation" on app.conversation_messages is 'svc_api reads a message only in the request''s organization and when its client_id is the calling client. client_id is copied from the conversation when the message is inserted (tg__client_of_parent) and a message never changes conversation, so a message is visible exactly when its conversation is, without the policy reading another table (Citus refuses such a policy).';

create function app_private.tg_conversation_messages__emit() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  perform app_private.emit_event(new.organization_id, 'conversation.message.created', 'conversation_message', new.id, new.seq);
  return null;
end
$$;

alter function app_private.tg_conversation_messages__emit() owner to svc_owner;

comment on function app_private.tg_conversation_messages__emit() is 'AFTER INSERT row trigger on app.conversation_messages (_950_emit_event): records a conversation.message.created event for every message, the client''s and the assistant''s, in the writer''s transaction (the outbox the webhooks are fanned out from). A definer as svc_owner because svc_api may neither execute app_private.emit_event nor write app.events; the event names the message''s own organization.';

create function app_private.tg_conversation_messages__append() returns trigger
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  c app.conversations;
begin
  if tg_op <> 'INSERT' then
    perform app_private.raise('SVC09', 'CONFLICT', 'conversation messages are kept as written, for audit');
  end if;
  select * into c from app.conversations x where x.organization_id = new.organization_id and x.id = new.conversation_id for update;
  if new.role = 'user' and c.status = 'archived' then
    perform app_private.raise('SVC09', 'CONVERSATION_ARCHIVED', 'the conversation is archived; start a new one');
  end if;
  if new.seq <> c.message_count + 1 then
    perform app_private.raise('SVC09', 'CONFLICT', 'messages are appended in order');
  end if;
  update app.conversations x set message_count = new.seq, last_activity_at = now()
   where x.organization_id = new.organization_id and x.id = new.conversation_id;
  return new;
end
$$;

alter function app_private.tg_conversation_messages__append() owner to svc_owner;

comment on function app_private.tg_conversation_messages__append() is 'BEFORE INSERT, UPDATE or DELETE row trigger on app.conversation_messages (_100_append): messages are kept as written, for audit (an update or delete is SVC09 CONFLICT); an insert locks its conversation, is refused as a user message to an archived conversation (SVC09 CONVERSATION_ARCHIVED; a run''s reply still lands), must take seq message_count + 1 (SVC09 CONFLICT: messages are appended in order), and advances the conversation''s message_count and last_activity_at. It runs as the writer (svc_api in a request, svc_owner for a reply), so every writer is held to it.';

create trigger _010_client_of_parent before insert or update of client_id on app.conversation_messages for each row execute function app_private.tg__client_of_parent();

create trigger _100_append before insert or delete or update on app.conversation_messages for each row execute function app_private.tg_conversation_messages__append();

create trigger _950_emit_event after insert on app.conversation_messages for each row execute function app_private.tg_conversation_messages__emit();

grant select on table app.conversation_messages to svc_api;
grant select,insert,delete,update on table app.conversation_messages to svc_owner;
grant select,insert,delete,update on table app.conversation_messages to svc_worker;
grant select,insert,delete,update on table app.conversation_messages to svc_admin;

grant insert(organization_id) on table app.conversation_messages to svc_api;

grant insert(conversation_id) on table app.conversation_messages to svc_api;

grant insert(seq) on table app.conversation_messages to svc_api;

grant insert(role) on table app.conversation_messages to svc_api;

grant insert(content) on table app.conversation_messages to svc_api;

grant insert(run_id) on table app.conversation_messages to svc_api;

revoke all on function app_private.tg_conversation_messages__append() from public;
grant execute on function app_private.tg_conversation_messages__append() to svc_worker;
grant execute on function app_private.tg_conversation_messages__append() to svc_admin;

revoke all on function app_private.tg_conversation_messages__emit() from public;
grant execute on function app_private.tg_conversation_messages__emit() to svc_worker;
grant execute on function app_private.tg_conversation_messages__emit() to svc_admin;

-- view api.conversation_messages

create view api.conversation_messages as
 select m.organization_id,
    m.id,
    m.conversation_id,
    m.seq,
    jsonb_build_object('object', 'conversation_message', 'id', m.id, 'conversation_id', m.conversation_id, 'role', m.role, 'content', m.content, 'run_id', m.run_id, 'created_at', app_private.iso_timestamp(m.created_at)) as doc
   from app.conversation_messages m;

alter view api.conversation_messages owner to svc_api;

grant select on table api.conversation_messages to svc_runtime;
grant select on table api.conversation_messages to svc_owner;

-- view api.conversations

create view api.conversations as
 select c.organization_id,
    c.id,
    c.status,
    c.subject_member_id,
    c.updated_at,
    c.created_at,
    jsonb_build_object('object', 'conversation', 'id', c.id, 'title', c.title, 'status', c.status, 'subject',
        case
            when (c.subject_member_id is null) then null::jsonb
            else jsonb_build_object('member_id', c.subject_member_id)
        end, 'metadata', c.metadata, 'message_count', c.message_count, 'working_context', jsonb_build_object('from_message', (c.context_from_seq + 1), 'messages', (c.message_count - c.context_from_seq), 'compacted', (c.context_summary is not null), 'cleared_at', app_private.iso_timestamp(c.context_cleared_at), 'expired_at', app_private.iso_timestamp(c.context_expired_at), 'expires_at', app_private.iso_timestamp((c.last_activity_at + '30 days'::interval))), 'last_activity_at', app_private.iso_timestamp(c.last_activity_at), 'created_at', app_private.iso_timestamp(c.created_at), 'updated_at', app_private.iso_timestamp(c.updated_at), 'archived_at', app_private.iso_timestamp(c.archived_at)) as doc,
    null::integer as version
   from app.conversations c;

alter view api.conversations owner to svc_api;

grant select on table api.conversations to svc_runtime;
grant select on table api.conversations to svc_owner;

-- function api.conversation_archive(text)

create function api.conversation_archive(p_id text) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  perform api.conversation_get(p_id);
  update app.conversations x set status = 'archived', archived_at = now()
   where x.organization_id = v__organization_id and x.id = p_id and x.status = 'active';
  return query select * from api.conversation_get(p_id);
end
$$;

alter function api.conversation_archive(p_id text) owner to svc_api;

comment on function api.conversation_archive(p_id text) is 'archiveConversation: sets the calling client''s active conversation to archived (archived_at now); a conversation already archived is returned unchanged, and its messages are kept as audit records. It runs as svc_api because svc_runtime holds no table privilege: the lookup (api.conversation_get, SVN04 CONVERSATION_NOT_FOUND) and the update pass svc_api''s policies, which show only conversations of the request''s organization created by the calling client, and tg_conversations__lifecycle keeps the conversation archived for good.';

revoke all on function api.conversation_archive(p_id text) from public;
grant execute on function api.conversation_archive(p_id text) to svc_runtime;
grant execute on function api.conversation_archive(p_id text) to svc_owner;
grant execute on function api.conversation_archive(p_id text) to svc_worker;

-- function api.conversation_clear_context(text)

create function api.conversation_clear_context(p_id text) returns table(doc jsonb, version integer)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  perform api.conversation_get(p_id);
  update app.conversations x set context_from_seq = x.message_count, context_summary = null, context_cleared_at = now()
   where x.organization_id = v__organization_id and x.id = p_id;
  return query select * from api.conversation_get(p_id);
end
$$;

alter function api.conversation_clear_context(p_id text) owner to svc_api;

comment on function api.conversation_clear_context(p_id text) is 'clearConversationContext: starts the working context afresh in any status (context_from_seq moves to the last message, the compacted summary is dropped, context_cleared_at is set); the history and the status stay. It runs as svc_api so that the lookup (SVN04 CONVERSATION_NOT_FOUND) and the update pass svc_api''s policies, which admit only a conversation of the request''s organization created by the calling client; the update touches only the working-context columns.';

revoke all on function api.conversation_clear_context(p_id text) from public;
grant execute on function api.conversation_clear_context(p_id text) to svc_runtime;
grant execute on function api.conversation_clear_context(p_id text) to svc_owner;
grant execute on function api.conversation_clear_context(p_id text) to svc_worker;

-- function api.conversation_create(text, jsonb, jsonb)

create function api.conversation_create(p_title text, p_subject jsonb, p_metadata jsonb) returns jsonb
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  v_id text;
begin
  insert into app.conversations (organization_id, client_id, title, subject_member_id, metadata)
  values (v__organization_id, app.current_client_id(), nullif(p_title, ''), app_private.conversation_subject(p_subject),
          coalesce(p_metadata, '{}'))
  returning id into v_id;
  return (select v.doc from api.conversations(v_id) v where v.id = v_id);
end
$$;

alter function api.conversation_create(p_title text, p_subject jsonb, p_metadata jsonb) owner to svc_api;

comment on function api.conversation_create(p_title text, p_subject jsonb, p_metadata jsonb) is 'createConversation: inserts an active conversation for the request''s organization and the calling client, with its title (an empty title means none), metadata and a subject resolved to one active member by app_private.conversation_subject, fixed for the conversation''s life. It runs as svc_api because svc_runtime holds no table privilege; svc_api''s "Clients start conversations" policy admits only the request''s organization and client, so no caller starts a conversation in another client''s name.';

revoke all on function api.conversation_create(p_title text, p_subject jsonb, p_metadata jsonb) from public;
grant execute on function api.conversation_create(p_title text, p_subject jsonb, p_metadata jsonb) to svc_runtime;
grant execute on function api.conversation_create(p_title text, p_subject jsonb, p_metadata jsonb) to svc_owner;
grant execute on function api.conversation_create(p_title text, p_subject jsonb, p_metadata jsonb) to svc_worker;

-- function api.conversation_get(text)

create function api.conversation_get(p_id text) returns table(doc jsonb, version integer)
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if not exists (select from api.conversations(p_id) v where v.id = p_id) then
    perform app_private.raise('SVN04', 'CONVERSATION_NOT_FOUND', format('no conversation %s of your client', p_id));
  end if;
  return query select v.doc, v.version from api.conversations(p_id) v where v.id = p_id;
end
$$;

alter function api.conversation_get(p_id text) owner to svc_api;

comment on function api.conversation_get(p_id text) is 'The calling client''s conversation p_id as its wire document (version null: conversations carry no ETag), or SVN04 CONVERSATION_NOT_FOUND when api.conversations does not show it. It runs as svc_api, whose policies show only conversations of the request''s organization created by the calling client, so another client''s conversation answers as missing.';

revoke all on function api.conversation_get(p_id text) from public;
grant execute on function api.conversation_get(p_id text) to svc_runtime;
grant execute on function api.conversation_get(p_id text) to svc_owner;
grant execute on function api.conversation_get(p_id text) to svc_worker;

-- function api.conversation_message_create(text, jsonb)

create function api.conversation_message_create(p_id text, p_content jsonb) returns jsonb
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  c app.conversations;
  v_msg text;
  v_run text;
  v_bad integer;
begin
  select * into c from app.conversations x where x.organization_id = v__organization_id and x.id = p_id for update;
  if not found then
    perform app_private.raise('SVN04', 'CONVERSATION_NOT_FOUND', format('no conversation %s of your client', p_id));
  end if;
  if c.status = 'archived' then
    perform app_private.raise('SVC09', 'CONVERSATION_ARCHIVED', 'the conversation is archived; start a new one');
  end if;
  if length(p_content::text) > app_private.message_budget() then
    perform app_private.raise('SVV22', 'CONTEXT_LIMIT_EXCEEDED',
      format('one message holds at most %s characters of content (this one: %s); send it in parts or as a file reference',
             app_private.message_budget(), length(p_content::text)), '/content');
  end if;
  select min(b.i) - 1 into v_bad from jsonb_array_elements(p_content) with ordinality b (block, i)
   where b.block ->> 'type' = 'file_reference' and not exists (select from api.files(b.block ->> 'file_id') f where f.id = b.block ->> 'file_id' and f.status = 'ready');
  if v_bad is not null then
    perform app_private.raise('SVV22', 'MESSAGE_CONTENT_INVALID',
      'file_id must name a ready file you may read', format('/content/%s/file_id', v_bad));
  end if;
  insert into app.conversation_messages (organization_id, conversation_id, seq, role, content)
  values (c.organization_id, c.id, c.message_count + 1, 'user', p_content)
  returning id into v_msg;
  perform app_private.conversation_compact(c.organization_id, c.id);
  insert into app.runs (organization_id, kind, agent_id, conversation_id, client_id, subject, input)
  values (c.organization_id, 'agent', null, c.id, c.client_id,
          case when c.subject_member_id is null then null else jsonb_build_object('member_id', c.subject_member_id) end,
          jsonb_build_object('message_id', v_msg))
  returning id into v_run;
  perform app_private.queue_agent_run(v_run);
  return jsonb_build_object('object', 'conversation_message_accepted',
    'message', (select v.doc from api.conversation_messages(v_msg) v where v.id = v_msg),
    'run', (select v.doc from api.runs(v_run) v where v.id = v_run));
end
$$;

alter function api.conversation_message_create(p_id text, p_content jsonb) owner to svc_api;

comment on function api.conversation_message_create(p_id text, p_content jsonb) is 'createConversationMessage: locks the calling client''s conversation (SVN04 CONVERSATION_NOT_FOUND) and refuses an archived one (SVC09 CONVERSATION_ARCHIVED), content longer than app_private.message_budget() characters (SVV22 CONTEXT_LIMIT_EXCEEDED) and a file_reference block naming no ready file the client may read (SVV22 MESSAGE_CONTENT_INVALID); it then appends the user message, compacts the working context and queues a chat run (kind agent, no agent, the conversation''s client and subject) whose answer becomes the next message. It runs as svc_api so every read and write is under svc_api''s policies: the request''s organization, the client''s own conversation and run, and messages of role user only.';

revoke all on function api.conversation_message_create(p_id text, p_content jsonb) from public;
grant execute on function api.conversation_message_create(p_id text, p_content jsonb) to svc_runtime;
grant execute on function api.conversation_message_create(p_id text, p_content jsonb) to svc_owner;
grant execute on function api.conversation_message_create(p_id text, p_content jsonb) to svc_worker;

-- function api.conversation_messages(text)

create function api.conversation_messages(p_id text default null::text) returns setof api.conversation_messages
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.conversation_messages v;
    else
      return query select * from api.conversation_messages v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.conversation_messages', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;

alter function api.conversation_messages(p_id text) owner to svc_api;

comment on function api.conversation_messages(p_id text) is 'The rows of view api.conversation_messages for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

revoke all on function api.conversation_messages(p_id text) from public;
grant execute on function api.conversation_messages(p_id text) to svc_runtime;
grant execute on function api.conversation_messages(p_id text) to svc_owner;
grant execute on function api.conversation_messages(p_id text) to svc_worker;

-- function api.conversations(text)

create function api.conversations(p_id text default null::text) returns setof api.conversations
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.conversations v;
    else
      return query select * from api.conversations v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.conversations', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;

alter function api.conversations(p_id text) owner to svc_api;

comment on function api.conversations(p_id text) is 'The rows of view api.conversations for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

revoke all on function api.conversations(p_id text) from public;
grant execute on function api.conversations(p_id text) to svc_runtime;
grant execute on function api.conversations(p_id text) to svc_owner;
grant execute on function api.conversations(p_id text) to svc_worker;

-- function control.expire_conversation_contexts(interval)

create function control.expire_conversation_contexts(p_idle interval) returns integer
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_n integer;
begin
  update app.conversations x set context_from_seq = x.message_count, context_summary = null, context_expired_at = now()
   where x.last_activity_at < now() - p_idle and x.context_from_seq < x.message_count;
  get diagnostics v_n = row_count;
  return v_n;
end
$$;

alter function control.expire_conversation_contexts(p_idle interval) owner to svc_owner;

revoke all on function control.expire_conversation_contexts(p_idle interval) from public;
grant execute on function control.expire_conversation_contexts(p_idle interval) to svc_worker;

revoke create on schema api, app, app_private, control, reporting, skills from svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
