-- migrate:up

/** Baseline (issue 38), area 12 of 15. Conversations: conversations and their messages, and the runs they start.
 * The current definitions that migrations 20261122000100 to 20261205003400 built (git history before
 * the baseline), as pg_dump writes them; db/README.md says how they were made and compared. */
SET LOCAL check_function_bodies = false;
SET LOCAL client_min_messages = warning;
SELECT pg_catalog.set_config('search_path', '', true);

-- function api.conversation_archive(text)

CREATE FUNCTION api.conversation_archive(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  perform api.conversation_get(p_id);
  update app.conversations x set status = 'archived', archived_at = now()
   where x.organization_id = v__organization_id and x.id = p_id and x.status = 'active';
  return query select * from api.conversation_get(p_id);
end
$$;

ALTER FUNCTION api.conversation_archive(p_id text) OWNER TO svc_api;

-- function api.conversation_clear_context(text)

CREATE FUNCTION api.conversation_clear_context(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  perform api.conversation_get(p_id);
  update app.conversations x set context_from_seq = x.message_count, context_summary = null, context_cleared_at = now()
   where x.organization_id = v__organization_id and x.id = p_id;
  return query select * from api.conversation_get(p_id);
end
$$;

ALTER FUNCTION api.conversation_clear_context(p_id text) OWNER TO svc_api;

-- function api.conversation_create(text, jsonb, jsonb)

CREATE FUNCTION api.conversation_create(p_title text, p_subject jsonb, p_metadata jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  v_id text;
begin
  insert into app.conversations (organization_id, client_id, title, subject_member_id, metadata)
  values (v__organization_id, app.current_client_id(), nullif(p_title, ''), app_private.conversation_subject(p_subject),
          coalesce(p_metadata, '{}'))
  returning id into v_id;
  return (select v.doc from api.conversations v where v.id = v_id);
end
$$;

ALTER FUNCTION api.conversation_create(p_title text, p_subject jsonb, p_metadata jsonb) OWNER TO svc_api;

-- function api.conversation_get(text)

CREATE FUNCTION api.conversation_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if not exists (select from api.conversations v where v.id = p_id) then
    perform app_private.raise('SVN04', 'CONVERSATION_NOT_FOUND', format('no conversation %s of your client', p_id));
  end if;
  return query select v.doc, v.version from api.conversations v where v.id = p_id;
end
$$;

ALTER FUNCTION api.conversation_get(p_id text) OWNER TO svc_api;

-- function api.conversation_message_create(text, jsonb)

CREATE FUNCTION api.conversation_message_create(p_id text, p_content jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION api.conversation_message_create(p_id text, p_content jsonb) OWNER TO svc_api;

SET LOCAL default_tablespace = '';

SET LOCAL default_table_access_method = heap;

-- table app.conversation_messages

CREATE TABLE app.conversation_messages (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('msg'::text) NOT NULL,
    conversation_id text NOT NULL,
    seq integer NOT NULL,
    role text NOT NULL,
    content jsonb NOT NULL,
    run_id text,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    client_id text NOT NULL,
    CONSTRAINT conversation_messages_content_blocks CHECK (((jsonb_typeof(content) = 'array'::text) AND ((jsonb_array_length(content) >= 1) AND (jsonb_array_length(content) <= 50)) AND (jsonb_path_query_first(content, '$[*]?(!((((@."type" == "text" || @."type" == "data") || @."type" == "file_reference") || @."type" == "citation") || @."type" == "error"))'::jsonpath) IS NULL))),
    CONSTRAINT conversation_messages_role_valid CHECK ((role = ANY (ARRAY['user'::text, 'assistant'::text])))
);

ALTER TABLE ONLY app.conversation_messages FORCE ROW LEVEL SECURITY;

-- view api.conversation_messages

CREATE VIEW api.conversation_messages AS
 SELECT m.organization_id,
    m.id,
    m.conversation_id,
    m.seq,
    jsonb_build_object('object', 'conversation_message', 'id', m.id, 'conversation_id', m.conversation_id, 'role', m.role, 'content', m.content, 'run_id', m.run_id, 'created_at', app_private.iso_timestamp(m.created_at)) AS doc
   FROM app.conversation_messages m;

ALTER TABLE api.conversation_messages OWNER TO svc_api;

-- function api.conversation_messages(text)

CREATE FUNCTION api.conversation_messages(p_id text DEFAULT NULL::text) RETURNS SETOF api.conversation_messages
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.conversation_messages where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.conversation_messages', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

ALTER FUNCTION api.conversation_messages(p_id text) OWNER TO svc_api;

-- comment api.FUNCTION conversation_messages(p_id text)

COMMENT ON FUNCTION api.conversation_messages(p_id text) IS 'The rows of view api.conversation_messages for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

-- table app.conversations

CREATE TABLE app.conversations (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('cnv'::text) NOT NULL,
    client_id text NOT NULL,
    title text,
    subject_member_id text,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    status text DEFAULT 'active'::text NOT NULL,
    message_count integer DEFAULT 0 NOT NULL,
    context_from_seq integer DEFAULT 0 NOT NULL,
    context_summary text,
    context_cleared_at timestamp with time zone,
    context_expired_at timestamp with time zone,
    last_activity_at timestamp with time zone DEFAULT now() NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    archived_at timestamp with time zone,
    CONSTRAINT conversations_archived_at_iff_archived CHECK (((status = 'archived'::text) = (archived_at IS NOT NULL))),
    CONSTRAINT conversations_status_valid CHECK ((status = ANY (ARRAY['active'::text, 'archived'::text]))),
    CONSTRAINT conversations_summary_bounded CHECK ((length(context_summary) <= 4000)),
    CONSTRAINT conversations_title_length CHECK (((title IS NULL) OR ((length(title) >= 1) AND (length(title) <= 200))))
);

ALTER TABLE ONLY app.conversations FORCE ROW LEVEL SECURITY;

-- view api.conversations

CREATE VIEW api.conversations AS
 SELECT c.organization_id,
    c.id,
    c.status,
    c.subject_member_id,
    c.updated_at,
    c.created_at,
    jsonb_build_object('object', 'conversation', 'id', c.id, 'title', c.title, 'status', c.status, 'subject',
        CASE
            WHEN (c.subject_member_id IS NULL) THEN NULL::jsonb
            ELSE jsonb_build_object('member_id', c.subject_member_id)
        END, 'metadata', c.metadata, 'message_count', c.message_count, 'working_context', jsonb_build_object('from_message', (c.context_from_seq + 1), 'messages', (c.message_count - c.context_from_seq), 'compacted', (c.context_summary IS NOT NULL), 'cleared_at', app_private.iso_timestamp(c.context_cleared_at), 'expired_at', app_private.iso_timestamp(c.context_expired_at), 'expires_at', app_private.iso_timestamp((c.last_activity_at + '30 days'::interval))), 'last_activity_at', app_private.iso_timestamp(c.last_activity_at), 'created_at', app_private.iso_timestamp(c.created_at), 'updated_at', app_private.iso_timestamp(c.updated_at), 'archived_at', app_private.iso_timestamp(c.archived_at)) AS doc,
    NULL::integer AS version
   FROM app.conversations c;

ALTER TABLE api.conversations OWNER TO svc_api;

-- function api.conversations(text)

CREATE FUNCTION api.conversations(p_id text DEFAULT NULL::text) RETURNS SETOF api.conversations
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.conversations where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.conversations', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

ALTER FUNCTION api.conversations(p_id text) OWNER TO svc_api;

-- comment api.FUNCTION conversations(p_id text)

COMMENT ON FUNCTION api.conversations(p_id text) IS 'The rows of view api.conversations for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

-- function app_private.conversation_compact(text, text)

CREATE FUNCTION app_private.conversation_compact(p_org text, p_id text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.conversation_subject(jsonb)

CREATE FUNCTION app_private.conversation_subject(p_subject jsonb) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_private.conversation_subject(p_subject jsonb) OWNER TO svc_api;

-- function app_private.tg_conversation_messages__append()

CREATE FUNCTION app_private.tg_conversation_messages__append() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_conversation_messages__emit()

CREATE FUNCTION app_private.tg_conversation_messages__emit() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.emit_event(new.organization_id, 'conversation.message.created', 'conversation_message', new.id, new.seq);
  return null;
end
$$;

-- function app_private.tg_conversations__lifecycle()

CREATE FUNCTION app_private.tg_conversations__lifecycle() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_runs__conversation_reply()

CREATE FUNCTION app_private.tg_runs__conversation_reply() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_seq integer;
  v_id text;
  v_content jsonb;
begin
  if new.conversation_id is null or new.status = old.status or new.status not in ('succeeded', 'failed', 'cancelled') then
    return null;
  end if;
  select c.message_count + 1 into v_seq from app.conversations c where c.organization_id = new.organization_id and c.id = new.conversation_id for update;
  v_content := case new.status
    when 'succeeded' then jsonb_build_array(jsonb_build_object('type', 'text', 'text', coalesce(new.output ->> 'text', '')))
    when 'failed' then jsonb_build_array(jsonb_build_object('type', 'error', 'code', new.error ->> 'code', 'message', new.error ->> 'detail'))
    else jsonb_build_array(jsonb_build_object('type', 'error', 'code', 'RUN_CANCELLED', 'message', 'the run was cancelled before it answered')) end;
  insert into app.conversation_messages (organization_id, conversation_id, seq, role, content, run_id)
  values (new.organization_id, new.conversation_id, v_seq, 'assistant', v_content, new.id)
  returning id into v_id;
  perform app_private.conversation_compact(new.organization_id, new.conversation_id);
  return null;
end
$$;

-- function control.expire_conversation_contexts(interval)

CREATE FUNCTION control.expire_conversation_contexts(p_idle interval) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_n integer;
begin
  update app.conversations x set context_from_seq = x.message_count, context_summary = null, context_expired_at = now()
   where x.last_activity_at < now() - p_idle and x.context_from_seq < x.message_count;
  get diagnostics v_n = row_count;
  return v_n;
end
$$;

-- constraint app.conversation_messages conversation_messages_organization_id_conversation_id_seq_key

ALTER TABLE ONLY app.conversation_messages
    ADD CONSTRAINT conversation_messages_organization_id_conversation_id_seq_key UNIQUE (organization_id, conversation_id, seq);

-- constraint app.conversation_messages conversation_messages_pkey

ALTER TABLE ONLY app.conversation_messages
    ADD CONSTRAINT conversation_messages_pkey PRIMARY KEY (organization_id, id);

-- constraint app.conversations conversations_pkey

ALTER TABLE ONLY app.conversations
    ADD CONSTRAINT conversations_pkey PRIMARY KEY (organization_id, id);

-- index app.conversation_messages_id

CREATE INDEX conversation_messages_id ON app.conversation_messages USING btree (id);

-- index app.conversations_client_updated

CREATE INDEX conversations_client_updated ON app.conversations USING btree (organization_id, client_id, updated_at DESC, id DESC);

-- index app.conversations_id

CREATE INDEX conversations_id ON app.conversations USING btree (id);

-- index app.conversations_idle

CREATE INDEX conversations_idle ON app.conversations USING btree (last_activity_at) WHERE (context_from_seq < message_count);

-- index app.runs_conversation

CREATE INDEX runs_conversation ON app.runs USING btree (organization_id, conversation_id) WHERE (conversation_id IS NOT NULL);

-- trigger app.conversation_messages _010_client_of_parent

CREATE TRIGGER _010_client_of_parent BEFORE INSERT OR UPDATE OF client_id ON app.conversation_messages FOR EACH ROW EXECUTE FUNCTION app_private.tg__client_of_parent();

-- trigger app.conversation_messages _100_append

CREATE TRIGGER _100_append BEFORE INSERT OR DELETE OR UPDATE ON app.conversation_messages FOR EACH ROW EXECUTE FUNCTION app_private.tg_conversation_messages__append();

-- trigger app.conversations _100_lifecycle

CREATE TRIGGER _100_lifecycle BEFORE INSERT OR UPDATE ON app.conversations FOR EACH ROW EXECUTE FUNCTION app_private.tg_conversations__lifecycle();

-- trigger app.runs _910_conversation_reply

CREATE TRIGGER _910_conversation_reply AFTER UPDATE OF status ON app.runs FOR EACH ROW EXECUTE FUNCTION app_private.tg_runs__conversation_reply();

-- trigger app.conversation_messages _950_emit_event

CREATE TRIGGER _950_emit_event AFTER INSERT ON app.conversation_messages FOR EACH ROW EXECUTE FUNCTION app_private.tg_conversation_messages__emit();

-- fk constraint app.conversation_messages conversation_messages_organization_id_conversation_id_fkey

ALTER TABLE ONLY app.conversation_messages
    ADD CONSTRAINT conversation_messages_organization_id_conversation_id_fkey FOREIGN KEY (organization_id, conversation_id) REFERENCES app.conversations(organization_id, id) ON DELETE CASCADE;

-- fk constraint app.conversations conversations_organization_id_client_id_fkey

ALTER TABLE ONLY app.conversations
    ADD CONSTRAINT conversations_organization_id_client_id_fkey FOREIGN KEY (organization_id, client_id) REFERENCES app.api_clients(organization_id, id);

-- fk constraint app.conversations conversations_organization_id_fkey

ALTER TABLE ONLY app.conversations
    ADD CONSTRAINT conversations_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.conversations conversations_organization_id_subject_member_id_fkey

ALTER TABLE ONLY app.conversations
    ADD CONSTRAINT conversations_organization_id_subject_member_id_fkey FOREIGN KEY (organization_id, subject_member_id) REFERENCES app.members(organization_id, id);

-- fk constraint app.runs runs_conversation_fkey

ALTER TABLE ONLY app.runs
    ADD CONSTRAINT runs_conversation_fkey FOREIGN KEY (organization_id, conversation_id) REFERENCES app.conversations(organization_id, id);

-- policy app.conversations Clients change their own conversations

CREATE POLICY "Clients change their own conversations" ON app.conversations FOR UPDATE TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id)))) WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- policy app.conversations Clients see their own conversations

CREATE POLICY "Clients see their own conversations" ON app.conversations FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- policy app.conversations Clients start conversations

CREATE POLICY "Clients start conversations" ON app.conversations FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- policy app.conversation_messages Clients write to their own conversations

CREATE POLICY "Clients write to their own conversations" ON app.conversation_messages FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (role = 'user'::text) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- policy app.conversation_messages Messages are readable with their conversation

CREATE POLICY "Messages are readable with their conversation" ON app.conversation_messages FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- row security app.conversation_messages

ALTER TABLE app.conversation_messages ENABLE ROW LEVEL SECURITY;

-- row security app.conversations

ALTER TABLE app.conversations ENABLE ROW LEVEL SECURITY;

-- acl api.FUNCTION conversation_archive(p_id text)

REVOKE ALL ON FUNCTION api.conversation_archive(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.conversation_archive(p_id text) TO svc_runtime;

-- acl api.FUNCTION conversation_clear_context(p_id text)

REVOKE ALL ON FUNCTION api.conversation_clear_context(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.conversation_clear_context(p_id text) TO svc_runtime;

-- acl api.FUNCTION conversation_create(p_title text, p_subject jsonb, p_metadata jsonb)

REVOKE ALL ON FUNCTION api.conversation_create(p_title text, p_subject jsonb, p_metadata jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION api.conversation_create(p_title text, p_subject jsonb, p_metadata jsonb) TO svc_runtime;

-- acl api.FUNCTION conversation_get(p_id text)

REVOKE ALL ON FUNCTION api.conversation_get(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.conversation_get(p_id text) TO svc_runtime;

-- acl api.FUNCTION conversation_message_create(p_id text, p_content jsonb)

REVOKE ALL ON FUNCTION api.conversation_message_create(p_id text, p_content jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION api.conversation_message_create(p_id text, p_content jsonb) TO svc_runtime;

-- acl app.TABLE conversation_messages

GRANT SELECT ON TABLE app.conversation_messages TO svc_api;

-- acl app.COLUMN conversation_messages.organization_id

GRANT INSERT(organization_id) ON TABLE app.conversation_messages TO svc_api;

-- acl app.COLUMN conversation_messages.conversation_id

GRANT INSERT(conversation_id) ON TABLE app.conversation_messages TO svc_api;

-- acl app.COLUMN conversation_messages.seq

GRANT INSERT(seq) ON TABLE app.conversation_messages TO svc_api;

-- acl app.COLUMN conversation_messages.role

GRANT INSERT(role) ON TABLE app.conversation_messages TO svc_api;

-- acl app.COLUMN conversation_messages.content

GRANT INSERT(content) ON TABLE app.conversation_messages TO svc_api;

-- acl app.COLUMN conversation_messages.run_id

GRANT INSERT(run_id) ON TABLE app.conversation_messages TO svc_api;

-- acl api.TABLE conversation_messages

GRANT SELECT ON TABLE api.conversation_messages TO svc_runtime;

-- acl api.FUNCTION conversation_messages(p_id text)

REVOKE ALL ON FUNCTION api.conversation_messages(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.conversation_messages(p_id text) TO svc_runtime;

-- acl app.TABLE conversations

GRANT SELECT,INSERT ON TABLE app.conversations TO svc_api;

-- acl app.COLUMN conversations.status

GRANT UPDATE(status) ON TABLE app.conversations TO svc_api;

-- acl app.COLUMN conversations.message_count

GRANT UPDATE(message_count) ON TABLE app.conversations TO svc_api;

-- acl app.COLUMN conversations.context_from_seq

GRANT UPDATE(context_from_seq) ON TABLE app.conversations TO svc_api;

-- acl app.COLUMN conversations.context_summary

GRANT UPDATE(context_summary) ON TABLE app.conversations TO svc_api;

-- acl app.COLUMN conversations.context_cleared_at

GRANT UPDATE(context_cleared_at) ON TABLE app.conversations TO svc_api;

-- acl app.COLUMN conversations.last_activity_at

GRANT UPDATE(last_activity_at) ON TABLE app.conversations TO svc_api;

-- acl app.COLUMN conversations.updated_at

GRANT UPDATE(updated_at) ON TABLE app.conversations TO svc_api;

-- acl app.COLUMN conversations.archived_at

GRANT UPDATE(archived_at) ON TABLE app.conversations TO svc_api;

-- acl api.TABLE conversations

GRANT SELECT ON TABLE api.conversations TO svc_runtime;

-- acl api.FUNCTION conversations(p_id text)

REVOKE ALL ON FUNCTION api.conversations(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.conversations(p_id text) TO svc_runtime;

-- acl app_private.FUNCTION conversation_compact(p_org text, p_id text)

REVOKE ALL ON FUNCTION app_private.conversation_compact(p_org text, p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.conversation_compact(p_org text, p_id text) TO svc_api;

-- acl app_private.FUNCTION conversation_subject(p_subject jsonb)

REVOKE ALL ON FUNCTION app_private.conversation_subject(p_subject jsonb) FROM PUBLIC;

-- acl app_private.FUNCTION tg_conversation_messages__append()

REVOKE ALL ON FUNCTION app_private.tg_conversation_messages__append() FROM PUBLIC;

-- acl app_private.FUNCTION tg_conversation_messages__emit()

REVOKE ALL ON FUNCTION app_private.tg_conversation_messages__emit() FROM PUBLIC;

-- acl app_private.FUNCTION tg_conversations__lifecycle()

REVOKE ALL ON FUNCTION app_private.tg_conversations__lifecycle() FROM PUBLIC;

-- acl app_private.FUNCTION tg_runs__conversation_reply()

REVOKE ALL ON FUNCTION app_private.tg_runs__conversation_reply() FROM PUBLIC;

-- acl control.FUNCTION expire_conversation_contexts(p_idle interval)

REVOKE ALL ON FUNCTION control.expire_conversation_contexts(p_idle interval) FROM PUBLIC;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
