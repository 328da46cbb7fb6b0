-- migrate:up

/** Conversations (issue 18): a client's chat with the assistant about its organization's work.
 * A message from the client starts a chat run (a run with kind `agent`, no agent_id, the
 * conversation's id), executed like every run: its tool calls are the client's own, checked and
 * audited with the conversation and run ids. When the run ends, a trigger appends the assistant's
 * reply (or an `error` block) as a message. The working context the model sees is bounded: older
 * turns are compacted into a projection, clear-context and a 30-day expiry start it afresh, and the
 * history stays. */

/** Budgets of the working context, in characters of the messages' JSON (db and docs agree). */
create function app_private.context_budget() returns integer language sql immutable as $$ select 32000 $$;
create function app_private.message_budget() returns integer language sql immutable as $$ select 16000 $$;
grant execute on function app_private.context_budget(), app_private.message_budget() to svc_api;

create table app.conversations (
  organization_id text not null references app.organizations on delete cascade,
  id text not null default app_private.new_id('cnv'),
  client_id text not null,
  title text constraint conversations_title_length check (title is null or length(title) between 1 and 200),
  subject_member_id text,
  metadata jsonb not null default '{}',
  status text not null default 'active' constraint conversations_status_valid check (status in ('active', 'archived')),
  message_count integer not null default 0,
  /** Messages with seq above this form the working context. */
  context_from_seq integer not null default 0,
  /** The compact projection of turns compacted out of the working context (bounded). */
  context_summary text constraint conversations_summary_bounded check (length(context_summary) <= 4000),
  context_cleared_at timestamptz,
  context_expired_at timestamptz,
  last_activity_at timestamptz not null default now(),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  archived_at timestamptz,
  primary key (organization_id, id),
  foreign key (organization_id, client_id) references app.api_clients (organization_id, id),
  foreign key (organization_id, subject_member_id) references app.members (organization_id, id),
  constraint conversations_archived_at_iff_archived check ((status = 'archived') = (archived_at is not null))
);
create index conversations_id on app.conversations (id);
create index conversations_client_updated on app.conversations (organization_id, client_id, updated_at desc, id desc);
create index conversations_idle on app.conversations (last_activity_at) where context_from_seq < message_count;

create table app.conversation_messages (
  organization_id text not null,
  id text not null default app_private.new_id('msg'),
  conversation_id text not null,
  seq integer not null,
  role text not null constraint conversation_messages_role_valid check (role in ('user', 'assistant')),
  content jsonb not null constraint conversation_messages_content_blocks check (
    jsonb_typeof(content) = 'array' and jsonb_array_length(content) between 1 and 50
    and jsonb_path_query_first(content, '$[*] ? (!(@.type == "text" || @.type == "data" || @.type == "file_reference" || @.type == "citation" || @.type == "error"))') is null),
  run_id text,
  created_at timestamptz not null default clock_timestamp(),
  primary key (organization_id, id),
  unique (organization_id, conversation_id, seq),
  foreign key (organization_id, conversation_id) references app.conversations (organization_id, id) on delete cascade
);
create index conversation_messages_id on app.conversation_messages (id);

alter table app.runs add constraint runs_conversation_fkey foreign key (organization_id, conversation_id)
  references app.conversations (organization_id, id);
alter table app.runs add constraint runs_agent_or_conversation check ((agent_id is null) <> (conversation_id is null));
create index runs_conversation on app.runs (organization_id, conversation_id) where conversation_id is not null;

/** The conversation's identity never changes; archived stays archived. */
create function app_private.tg_conversations__lifecycle() returns trigger
language plpgsql volatile
set search_path = pg_catalog
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
create trigger _100_lifecycle before insert or update on app.conversations
  for each row execute function app_private.tg_conversations__lifecycle();

/** Messages are appended in order and never change; the client writes only to an active conversation. */
create function app_private.tg_conversation_messages__append() returns trigger
language plpgsql volatile
set search_path = pg_catalog
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
create trigger _100_append before insert or update or delete on app.conversation_messages
  for each row execute function app_private.tg_conversation_messages__append();

/** Every message, the client's and the assistant's, is an event for the client's subscriptions. */
create function app_private.tg_conversation_messages__emit() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  perform app_private.emit_event(new.organization_id, 'conversation.message.created', 'conversation_message', new.id, new.seq);
  return null;
end
$$;
create trigger _950_emit_event after insert on app.conversation_messages
  for each row execute function app_private.tg_conversation_messages__emit();

/** Keeps the working context within its budget: the oldest turns move into a compact projection
 * (role and the start of their text), which keeps its newest 4,000 characters. */
create function app_private.conversation_compact(p_org text, p_id text) returns void
language plpgsql volatile security definer
set search_path = pg_catalog
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
grant execute on function app_private.conversation_compact(text, text) to svc_api;

alter table app.conversations enable row level security;
alter table app.conversations force row level security;
create policy "Clients see their own conversations" on app.conversations for select to svc_api
  using (organization_id = (select app.current_organization_id()) and client_id = (select app.current_client_id()));
create policy "Clients start conversations" on app.conversations for insert to svc_api
  with check (organization_id = (select app.current_organization_id()) and client_id = (select app.current_client_id()));
create policy "Clients change their own conversations" on app.conversations for update to svc_api
  using (organization_id = (select app.current_organization_id()) and client_id = (select app.current_client_id()))
  with check (organization_id = (select app.current_organization_id()) and client_id = (select app.current_client_id()));
grant select, insert, update (status, archived_at, context_from_seq, context_summary, context_cleared_at, message_count, last_activity_at, updated_at)
  on app.conversations to svc_api;

alter table app.conversation_messages enable row level security;
alter table app.conversation_messages force row level security;
create policy "Messages are readable with their conversation" on app.conversation_messages for select to svc_api
  using (organization_id = (select app.current_organization_id())
         and exists (select from app.conversations c where c.organization_id = conversation_messages.organization_id and c.id = conversation_messages.conversation_id));
create policy "Clients write to their own conversations" on app.conversation_messages for insert to svc_api
  with check (organization_id = (select app.current_organization_id()) and role = 'user'
              and exists (select from app.conversations c where c.organization_id = conversation_messages.organization_id and c.id = conversation_messages.conversation_id));
grant select, insert (organization_id, conversation_id, seq, role, content, run_id) on app.conversation_messages to svc_api;

/** A run of a conversation ends: its reply becomes the next message (an error block when it did not succeed). */
create function app_private.tg_runs__conversation_reply() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_seq integer;
  v_id text;
begin
  if new.conversation_id is null or new.status = old.status or new.status not in ('succeeded', 'failed', 'cancelled') then
    return null;
  end if;
  select c.message_count + 1 into v_seq from app.conversations c where c.organization_id = new.organization_id and c.id = new.conversation_id for update;
  insert into app.conversation_messages (organization_id, conversation_id, seq, role, content, run_id)
  values (new.organization_id, new.conversation_id, v_seq, 'assistant',
          case new.status when 'succeeded' then jsonb_build_array(jsonb_build_object('type', 'text', 'text', coalesce(new.output ->> 'text', '')))
                          when 'failed' then jsonb_build_array(jsonb_build_object('type', 'error', 'code', new.error ->> 'code', 'message', new.error ->> 'detail'))
                          else jsonb_build_array(jsonb_build_object('type', 'error', 'code', 'RUN_CANCELLED', 'message', 'the run was cancelled before it answered')) end,
          new.id)
  returning id into v_id;
  perform app_private.conversation_compact(new.organization_id, new.conversation_id);
  return null;
end
$$;
create trigger _910_conversation_reply after update of status on app.runs
  for each row execute function app_private.tg_runs__conversation_reply();

insert into app_private.event_types (name, resource_type, emitted_by, description, subscribable) values
  ('conversation.message.created', 'conversation_message', '{createConversationMessage}',
   'A message was added to one of your conversations: yours, or the assistant''s reply when its run ended.', true);

/** The api surface. */
create view api.conversations as
select c.organization_id, c.id, c.status, c.subject_member_id, c.updated_at, c.created_at,
       jsonb_build_object('object', 'conversation', 'id', c.id, 'title', c.title, 'status', c.status,
         'subject', case when c.subject_member_id is null then null else jsonb_build_object('member_id', c.subject_member_id) end,
         'metadata', c.metadata, 'message_count', c.message_count,
         'working_context', jsonb_build_object('from_message', c.context_from_seq + 1, 'messages', c.message_count - c.context_from_seq,
           'compacted', c.context_summary is not null, 'cleared_at', app_private.iso_timestamp(c.context_cleared_at),
           'expired_at', app_private.iso_timestamp(c.context_expired_at),
           'expires_at', app_private.iso_timestamp(c.last_activity_at + interval '30 days')),
         'last_activity_at', app_private.iso_timestamp(c.last_activity_at),
         'created_at', app_private.iso_timestamp(c.created_at), 'updated_at', app_private.iso_timestamp(c.updated_at),
         'archived_at', app_private.iso_timestamp(c.archived_at)) as doc,
       null::integer as version
  from app.conversations c;
alter view api.conversations owner to svc_api;
grant select on api.conversations to svc_runtime;

create view api.conversation_messages as
select m.organization_id, m.id, m.conversation_id, m.seq,
       jsonb_build_object('object', 'conversation_message', 'id', m.id, 'conversation_id', m.conversation_id, 'role', m.role,
         'content', m.content, 'run_id', m.run_id, 'created_at', app_private.iso_timestamp(m.created_at)) as doc
  from app.conversation_messages m;
alter view api.conversation_messages owner to svc_api;
grant select on api.conversation_messages to svc_runtime;

create function api.conversation_get(p_id text) returns table (doc jsonb, version integer)
language plpgsql stable security definer
set search_path = pg_catalog
as $$
begin
  if not exists (select from api.conversations v where v.id = p_id) then
    perform app_private.raise('SVN04', 'CONVERSATION_NOT_FOUND', format('no conversation %s of your client', p_id));
  end if;
  return query select v.doc, v.version from api.conversations v where v.id = p_id;
end
$$;

/** The subject, resolved to one active member the client can see: {member_id} exactly, or
 * {display_name} case-insensitively (SUBJECT_AMBIGUOUS when several share it); nothing else. */
create function app_private.conversation_subject(p_subject jsonb) returns text
language plpgsql stable security definer
set search_path = pg_catalog
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
    select array_agg(m.id) into v_ids from api.members m where m.id = lower(trim(p_subject ->> 'member_id')) and m.status = 'active';
  else
    select array_agg(m.id order by m.id) into v_ids from api.members m
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

create function api.conversation_create(p_title text, p_subject jsonb, p_metadata jsonb) returns jsonb
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_id text;
begin
  insert into app.conversations (organization_id, client_id, title, subject_member_id, metadata)
  values (app.current_organization_id(), app.current_client_id(), nullif(p_title, ''), app_private.conversation_subject(p_subject),
          coalesce(p_metadata, '{}'))
  returning id into v_id;
  return (select v.doc from api.conversations v where v.id = v_id);
end
$$;

/** createConversationMessage: the client's message (blocks validated by the caller against their
 * JSON Schema; here: the conversation, its state, the budgets, the files), then the chat run. */
create function api.conversation_message_create(p_id text, p_content jsonb) returns jsonb
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  c app.conversations;
  v_msg text;
  v_run text;
  v_bad integer;
begin
  select * into c from app.conversations x where x.organization_id = app.current_organization_id() and x.id = p_id for update;
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
   where b.block ->> 'type' = 'file_reference' and not exists (select from api.files f where f.id = b.block ->> 'file_id' and f.status = 'ready');
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
    'message', (select v.doc from api.conversation_messages v where v.id = v_msg),
    'run', (select v.doc from api.runs v where v.id = v_run));
end
$$;

create function api.conversation_archive(p_id text) returns table (doc jsonb, version integer)
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  perform api.conversation_get(p_id);
  update app.conversations x set status = 'archived', archived_at = now()
   where x.organization_id = app.current_organization_id() and x.id = p_id and x.status = 'active';
  return query select * from api.conversation_get(p_id);
end
$$;

create function api.conversation_clear_context(p_id text) returns table (doc jsonb, version integer)
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  perform api.conversation_get(p_id);
  update app.conversations x set context_from_seq = x.message_count, context_summary = null, context_cleared_at = now()
   where x.organization_id = app.current_organization_id() and x.id = p_id;
  return query select * from api.conversation_get(p_id);
end
$$;

do $$
declare
  r record;
begin
  for r in select p.oid::regprocedure as fn from pg_proc p join pg_namespace n on n.oid = p.pronamespace
            where (n.nspname = 'api' and p.proname in ('conversation_get', 'conversation_create', 'conversation_message_create',
                                                       'conversation_archive', 'conversation_clear_context'))
               or (n.nspname = 'app_private' and p.proname in ('conversation_subject')) loop
    execute format('alter function %s owner to svc_api', r.fn);
    if r.fn::text like 'api.%' then
      execute format('grant execute on function %s to svc_runtime', r.fn);
    end if;
  end loop;
end
$$;

/** Working contexts idle for 30 days expire (the history stays). */
create function control.expire_conversation_contexts(p_idle interval) returns integer
language plpgsql volatile
set search_path = pg_catalog
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

/** What the model of a chat run sees: the compact projection and the messages of the working
 * context up to the run's own message. */
create function app_private.chat_context(p_run_id text) returns jsonb
language plpgsql stable
set search_path = pg_catalog
as $$
declare
  r app.runs;
  c app.conversations;
  v_seq integer;
begin
  select * into r from app.runs x where x.id = p_run_id;
  select * into c from app.conversations x where x.organization_id = r.organization_id and x.id = r.conversation_id;
  select m.seq into v_seq from app.conversation_messages m where m.organization_id = r.organization_id and m.id = r.input ->> 'message_id';
  return jsonb_build_object('summary', c.context_summary,
    'messages', coalesce((select jsonb_agg(jsonb_build_object('role', m.role, 'content', m.content) order by m.seq)
                            from app.conversation_messages m
                           where m.organization_id = r.organization_id and m.conversation_id = c.id
                             and m.seq > c.context_from_seq and m.seq <= v_seq), '[]'));
end
$$;



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
    when 'report_run' then exists (select from api.report_runs v where v.id = p_resource_id)
    when 'run' then exists (select from api.runs v where v.id = p_resource_id)
    when 'conversation_message' then exists (select from api.conversation_messages v where v.id = p_resource_id)
    else false end
$$;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'restore a backup taken before 20261126000200'); end $$;
