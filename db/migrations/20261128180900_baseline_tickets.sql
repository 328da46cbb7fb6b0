-- migrate:up

/** Baseline (issue 38), area 9 of 15. Tickets: ticket workflows, tickets, messages and search.
 * The current definitions that migrations 20261122000100 to 20261205003400 built (git history before
 * the baseline), as pg_dump writes them; db/README.md says how they were made and compared. */
SET LOCAL check_function_bodies = false;
SET LOCAL client_min_messages = warning;
SELECT pg_catalog.set_config('search_path', '', true);

-- function api.require_tickets(boolean)

CREATE FUNCTION api.require_tickets(p_write boolean) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION api.require_tickets(p_write boolean) OWNER TO svc_api;

-- function api.ticket_create(jsonb)

CREATE FUNCTION api.ticket_create(p_body jsonb) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
  return query select v.doc, v.version from api.tickets v where v.id = v_id;
end
$$;

ALTER FUNCTION api.ticket_create(p_body jsonb) OWNER TO svc_api;

-- function api.ticket_get(text)

CREATE FUNCTION api.ticket_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform api.require_tickets(false);
  return query select v.doc, v.version from api.tickets v where v.id = p_id;
end
$$;

ALTER FUNCTION api.ticket_get(p_id text) OWNER TO svc_api;

-- function api.ticket_message_create(text, jsonb)

CREATE FUNCTION api.ticket_message_create(p_ticket_id text, p_body jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION api.ticket_message_create(p_ticket_id text, p_body jsonb) OWNER TO svc_api;

SET LOCAL default_tablespace = '';

SET LOCAL default_table_access_method = heap;

-- table app.ticket_messages

CREATE TABLE app.ticket_messages (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('tmsg'::text) NOT NULL,
    ticket_id text NOT NULL,
    type text NOT NULL,
    body text NOT NULL,
    attachment_file_ids text[] DEFAULT '{}'::text[] NOT NULL,
    author_client_id text NOT NULL,
    delivery_status text,
    delivery_detail text,
    delivered_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT ticket_messages_attachments_bounded CHECK ((cardinality(attachment_file_ids) <= 20)),
    CONSTRAINT ticket_messages_body_length CHECK ((((length(body) BETWEEN 1 AND 50000)) AND (body ~ '\S'::text))),
    CONSTRAINT ticket_messages_delivery_for_replies CHECK (((type = 'reply'::text) = (delivery_status IS NOT NULL))),
    CONSTRAINT ticket_messages_delivery_valid CHECK ((delivery_status = ANY (ARRAY['queued'::text, 'sent'::text, 'failed'::text]))),
    CONSTRAINT ticket_messages_type_valid CHECK ((type = ANY (ARRAY['reply'::text, 'internal_note'::text])))
);

ALTER TABLE ONLY app.ticket_messages FORCE ROW LEVEL SECURITY;

-- view api.ticket_messages

CREATE VIEW api.ticket_messages AS
 SELECT m.organization_id,
    m.id,
    m.ticket_id,
    m.type,
    m.created_at,
    jsonb_build_object('object', 'ticket_message', 'id', m.id, 'ticket_id', m.ticket_id, 'type', m.type, 'body', m.body, 'attachments', to_jsonb(m.attachment_file_ids), 'author', jsonb_build_object('type', 'api_client', 'id', m.author_client_id), 'delivery',
        CASE
            WHEN (m.type = 'reply'::text) THEN jsonb_build_object('status', m.delivery_status, 'detail', m.delivery_detail, 'delivered_at', app_private.iso_timestamp(m.delivered_at))
            ELSE NULL::jsonb
        END, 'created_at', app_private.iso_timestamp(m.created_at)) AS doc
   FROM app.ticket_messages m;

ALTER TABLE api.ticket_messages OWNER TO svc_api;

-- function api.ticket_messages(text)

CREATE FUNCTION api.ticket_messages(p_id text DEFAULT NULL::text) RETURNS SETOF api.ticket_messages
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.ticket_messages where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.ticket_messages', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

ALTER FUNCTION api.ticket_messages(p_id text) OWNER TO svc_api;

-- comment api.FUNCTION ticket_messages(p_id text)

COMMENT ON FUNCTION api.ticket_messages(p_id text) IS 'The rows of view api.ticket_messages for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

-- function api.ticket_require(text)

CREATE FUNCTION api.ticket_require(p_id text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  if not exists (select from app.tickets t where t.organization_id = v__organization_id and t.id = p_id) then
    perform app_private.ticket_not_found(p_id);
  end if;
  return true;
end
$$;

ALTER FUNCTION api.ticket_require(p_id text) OWNER TO svc_api;

-- function api.ticket_search_ids(text)

CREATE FUNCTION api.ticket_search_ids(p_query text) RETURNS SETOF text
    LANGUAGE plpgsql STABLE SECURITY DEFINER ROWS 100
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function api.ticket_transition(text, text, text)

CREATE FUNCTION api.ticket_transition(p_id text, p_transition text, p_resolution text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION api.ticket_transition(p_id text, p_transition text, p_resolution text) OWNER TO svc_api;

-- function api.ticket_update(text, integer[], jsonb)

CREATE FUNCTION api.ticket_update(p_id text, p_if_match integer[], p_patch jsonb) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION api.ticket_update(p_id text, p_if_match integer[], p_patch jsonb) OWNER TO svc_api;

-- table app.ticket_transitions

CREATE TABLE app.ticket_transitions (
    organization_id text NOT NULL,
    name text NOT NULL,
    from_status text NOT NULL,
    to_status text NOT NULL,
    requires_resolution boolean DEFAULT false NOT NULL,
    CONSTRAINT ticket_transitions_format CHECK ((name ~ '^[a-z][a-z0-9_]{0,40}$'::text))
);

ALTER TABLE ONLY app.ticket_transitions FORCE ROW LEVEL SECURITY;

-- table app.tickets

CREATE TABLE app.tickets (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('tkt'::text) NOT NULL,
    number text NOT NULL,
    subject text NOT NULL,
    description text,
    status text NOT NULL,
    priority text DEFAULT 'normal'::text NOT NULL,
    requester_name text,
    requester_email text NOT NULL,
    assignee_member_id text,
    project_id text,
    tags text[] DEFAULT '{}'::text[] NOT NULL,
    external_id text,
    resolution text,
    resolved_at timestamp with time zone,
    created_by_client_id text NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT tickets_description_length CHECK ((length(description) <= 50000)),
    CONSTRAINT tickets_external_id_length CHECK (((length(external_id) >= 1) AND (length(external_id) <= 255))),
    CONSTRAINT tickets_priority_valid CHECK ((priority = ANY (ARRAY['low'::text, 'normal'::text, 'high'::text, 'urgent'::text]))),
    CONSTRAINT tickets_requester_email_format CHECK (((requester_email ~ '^[^@\s]+@[^@\s]+$'::text) AND (length(requester_email) <= 320))),
    CONSTRAINT tickets_requester_name_length CHECK ((length(requester_name) <= 200)),
    CONSTRAINT tickets_resolution_length CHECK ((length(resolution) <= 10000)),
    CONSTRAINT tickets_subject_length CHECK ((((length(subject) BETWEEN 1 AND 500)) AND (subject ~ '\S'::text))),
    CONSTRAINT tickets_tags_bounded CHECK ((cardinality(tags) <= 50))
);

ALTER TABLE ONLY app.tickets FORCE ROW LEVEL SECURITY;

-- view api.tickets

CREATE VIEW api.tickets AS
 SELECT t.organization_id,
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
        CASE
            WHEN ( SELECT app.has_any_role('{member,manager}'::text[]) AS has_any_role) THEN t.requester_email
            ELSE NULL::text
        END), 'assignee_member_id', t.assignee_member_id, 'project_id', t.project_id, 'tags', to_jsonb(t.tags), 'external_id', t.external_id, 'resolution', t.resolution, 'resolved_at', app_private.iso_timestamp(t.resolved_at), 'transitions', COALESCE(( SELECT jsonb_agg(jsonb_build_object('name', tr.name, 'to_status', tr.to_status, 'requires_resolution', tr.requires_resolution) ORDER BY tr.name) AS jsonb_agg
           FROM app.ticket_transitions tr
          WHERE ((tr.organization_id = t.organization_id) AND (tr.from_status = t.status))), '[]'::jsonb), 'version', t.version, 'created_at', app_private.iso_timestamp(t.created_at), 'updated_at', app_private.iso_timestamp(t.updated_at)) AS doc
   FROM app.tickets t;

ALTER TABLE api.tickets OWNER TO svc_api;

-- function api.tickets(text)

CREATE FUNCTION api.tickets(p_id text DEFAULT NULL::text) RETURNS SETOF api.tickets
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.tickets where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.tickets', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

ALTER FUNCTION api.tickets(p_id text) OWNER TO svc_api;

-- comment api.FUNCTION tickets(p_id text)

COMMENT ON FUNCTION api.tickets(p_id text) IS 'The rows of view api.tickets for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

-- function app_private.lock_ticket(text)

CREATE FUNCTION app_private.lock_ticket(p_id text) RETURNS app.tickets
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION app_private.lock_ticket(p_id text) OWNER TO svc_api;

-- function app_private.may_read_tickets()

CREATE FUNCTION app_private.may_read_tickets() RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.seed_ticket_workflow(text)

CREATE FUNCTION app_private.seed_ticket_workflow(p_org text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_organizations__seed_ticket_workflow()

CREATE FUNCTION app_private.tg_organizations__seed_ticket_workflow() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.seed_ticket_workflow(new.id);
  return null;
end
$$;

-- function app_private.tg_ticket_messages__emit()

CREATE FUNCTION app_private.tg_ticket_messages__emit() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.emit_event(new.organization_id, 'ticket.message.created', 'ticket_message', new.id, 1);
  if new.type = 'reply' then
    perform app_private.queue_job(new.organization_id, 'ticket_reply_email', json_build_object('message_id', new.id),
                                  'ticket_reply:' || new.id, 10);
  end if;
  return null;
end
$$;

-- function app_private.tg_ticket_messages__index()

CREATE FUNCTION app_private.tg_ticket_messages__index() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_ticket_messages__rules()

CREATE FUNCTION app_private.tg_ticket_messages__rules() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_tickets__emit()

CREATE FUNCTION app_private.tg_tickets__emit() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_tickets__index()

CREATE FUNCTION app_private.tg_tickets__index() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.tg_tickets__rules()

CREATE FUNCTION app_private.tg_tickets__rules() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.ticket_not_found(text)

CREATE FUNCTION app_private.ticket_not_found(p_id text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select app_private.raise('SVN04', 'TICKET_NOT_FOUND', format('no ticket %s in your organization', p_id)) $$;

-- function app_private.ticket_reply_load(text, text)

CREATE FUNCTION app_private.ticket_reply_load(p_organization_id text, p_message_id text) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- function app_private.ticket_reply_record(text, text, boolean, text)

CREATE FUNCTION app_private.ticket_reply_record(p_organization_id text, p_message_id text, p_sent boolean, p_detail text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_now timestamptz := now();
begin
  update app.ticket_messages m
     set delivery_status = case when p_sent then 'sent' else 'failed' end, delivery_detail = left(p_detail, 500),
         delivered_at = case when p_sent then v_now end
   where m.organization_id = p_organization_id and m.id = p_message_id and m.delivery_status = 'queued';
end
$$;

-- function control.org_set_ticket_policy(text, boolean, boolean, boolean)

CREATE FUNCTION control.org_set_ticket_policy(p_org text, p_module_enabled boolean, p_finance_may_read boolean, p_hr_may_read boolean) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  update app.organizations
     set ticket_module_enabled = coalesce(p_module_enabled, ticket_module_enabled),
         finance_may_read_tickets = coalesce(p_finance_may_read, finance_may_read_tickets),
         hr_may_read_tickets = coalesce(p_hr_may_read, hr_may_read_tickets)
   where id = p_org;
  perform app_private.require_found(found, 'ORGANIZATION_NOT_FOUND', p_org);
end
$$;

-- table app.ticket_search

CREATE TABLE app.ticket_search (
    organization_id text NOT NULL,
    ticket_id text NOT NULL,
    public_doc tsvector NOT NULL,
    internal_doc tsvector DEFAULT ''::tsvector NOT NULL
);

ALTER TABLE ONLY app.ticket_search FORCE ROW LEVEL SECURITY;

-- table app.ticket_statuses

CREATE TABLE app.ticket_statuses (
    organization_id text NOT NULL,
    status text NOT NULL,
    category text NOT NULL,
    is_initial boolean DEFAULT false NOT NULL,
    CONSTRAINT ticket_statuses_category_valid CHECK ((category = ANY (ARRAY['open'::text, 'pending'::text, 'solved'::text, 'closed'::text]))),
    CONSTRAINT ticket_statuses_format CHECK ((status ~ '^[a-z][a-z0-9_]{0,40}$'::text))
);

ALTER TABLE ONLY app.ticket_statuses FORCE ROW LEVEL SECURITY;

-- table app_private.ticket_number_counters

CREATE TABLE app_private.ticket_number_counters (
    organization_id text NOT NULL,
    last_number bigint DEFAULT 0 NOT NULL
);

-- constraint app.ticket_messages ticket_messages_pkey

ALTER TABLE ONLY app.ticket_messages
    ADD CONSTRAINT ticket_messages_pkey PRIMARY KEY (organization_id, id);

-- constraint app.ticket_search ticket_search_pkey

ALTER TABLE ONLY app.ticket_search
    ADD CONSTRAINT ticket_search_pkey PRIMARY KEY (organization_id, ticket_id);

-- constraint app.ticket_statuses ticket_statuses_pkey

ALTER TABLE ONLY app.ticket_statuses
    ADD CONSTRAINT ticket_statuses_pkey PRIMARY KEY (organization_id, status);

-- constraint app.ticket_transitions ticket_transitions_pkey

ALTER TABLE ONLY app.ticket_transitions
    ADD CONSTRAINT ticket_transitions_pkey PRIMARY KEY (organization_id, name, from_status);

-- constraint app.tickets tickets_external_id_unique

ALTER TABLE ONLY app.tickets
    ADD CONSTRAINT tickets_external_id_unique UNIQUE (organization_id, created_by_client_id, external_id);

-- constraint app.tickets tickets_number_unique

ALTER TABLE ONLY app.tickets
    ADD CONSTRAINT tickets_number_unique UNIQUE (organization_id, number);

-- constraint app.tickets tickets_pkey

ALTER TABLE ONLY app.tickets
    ADD CONSTRAINT tickets_pkey PRIMARY KEY (organization_id, id);

-- constraint app_private.ticket_number_counters ticket_number_counters_pkey

ALTER TABLE ONLY app_private.ticket_number_counters
    ADD CONSTRAINT ticket_number_counters_pkey PRIMARY KEY (organization_id);

-- index app.ticket_messages_id

CREATE INDEX ticket_messages_id ON app.ticket_messages USING btree (id);

-- index app.ticket_messages_ticket

CREATE INDEX ticket_messages_ticket ON app.ticket_messages USING btree (organization_id, ticket_id, created_at, id);

-- index app.ticket_search_internal

CREATE INDEX ticket_search_internal ON app.ticket_search USING gin (internal_doc);

-- index app.ticket_search_public

CREATE INDEX ticket_search_public ON app.ticket_search USING gin (public_doc);

-- index app.ticket_statuses_one_initial

CREATE UNIQUE INDEX ticket_statuses_one_initial ON app.ticket_statuses USING btree (organization_id) WHERE is_initial;

-- index app.ticket_transitions_pair

CREATE INDEX ticket_transitions_pair ON app.ticket_transitions USING btree (organization_id, from_status, to_status);

-- index app.tickets_id

CREATE INDEX tickets_id ON app.tickets USING btree (id);

-- index app.tickets_org_created

CREATE INDEX tickets_org_created ON app.tickets USING btree (organization_id, created_at DESC, id DESC);

-- index app.tickets_org_updated

CREATE INDEX tickets_org_updated ON app.tickets USING btree (organization_id, updated_at DESC, id DESC);

-- index app.tickets_tags

CREATE INDEX tickets_tags ON app.tickets USING gin (tags);

-- trigger app.tickets _100_touch_version

CREATE TRIGGER _100_touch_version BEFORE UPDATE ON app.tickets FOR EACH ROW EXECUTE FUNCTION app_private.tg__touch_version();

-- trigger app.ticket_messages _150_rules

CREATE TRIGGER _150_rules BEFORE INSERT OR DELETE OR UPDATE ON app.ticket_messages FOR EACH ROW EXECUTE FUNCTION app_private.tg_ticket_messages__rules();

-- trigger app.tickets _150_rules

CREATE TRIGGER _150_rules BEFORE INSERT OR UPDATE ON app.tickets FOR EACH ROW EXECUTE FUNCTION app_private.tg_tickets__rules();

-- trigger app.organizations _820_seed_ticket_workflow

CREATE TRIGGER _820_seed_ticket_workflow AFTER INSERT ON app.organizations FOR EACH ROW EXECUTE FUNCTION app_private.tg_organizations__seed_ticket_workflow();

-- trigger app.ticket_messages _900_index

CREATE TRIGGER _900_index AFTER INSERT ON app.ticket_messages FOR EACH ROW EXECUTE FUNCTION app_private.tg_ticket_messages__index();

-- trigger app.tickets _900_index

CREATE TRIGGER _900_index AFTER INSERT OR UPDATE ON app.tickets FOR EACH ROW EXECUTE FUNCTION app_private.tg_tickets__index();

-- trigger app.ticket_messages _950_emit_event

CREATE TRIGGER _950_emit_event AFTER INSERT ON app.ticket_messages FOR EACH ROW EXECUTE FUNCTION app_private.tg_ticket_messages__emit();

-- trigger app.tickets _950_emit_event

CREATE TRIGGER _950_emit_event AFTER INSERT OR UPDATE ON app.tickets FOR EACH ROW EXECUTE FUNCTION app_private.tg_tickets__emit();

-- fk constraint app.ticket_messages ticket_messages_organization_id_author_client_id_fkey

ALTER TABLE ONLY app.ticket_messages
    ADD CONSTRAINT ticket_messages_organization_id_author_client_id_fkey FOREIGN KEY (organization_id, author_client_id) REFERENCES app.api_clients(organization_id, id);

-- fk constraint app.ticket_messages ticket_messages_organization_id_ticket_id_fkey

ALTER TABLE ONLY app.ticket_messages
    ADD CONSTRAINT ticket_messages_organization_id_ticket_id_fkey FOREIGN KEY (organization_id, ticket_id) REFERENCES app.tickets(organization_id, id);

-- fk constraint app.ticket_search ticket_search_organization_id_ticket_id_fkey

ALTER TABLE ONLY app.ticket_search
    ADD CONSTRAINT ticket_search_organization_id_ticket_id_fkey FOREIGN KEY (organization_id, ticket_id) REFERENCES app.tickets(organization_id, id) ON DELETE CASCADE;

-- fk constraint app.ticket_statuses ticket_statuses_organization_id_fkey

ALTER TABLE ONLY app.ticket_statuses
    ADD CONSTRAINT ticket_statuses_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.ticket_transitions ticket_transitions_organization_id_from_status_fkey

ALTER TABLE ONLY app.ticket_transitions
    ADD CONSTRAINT ticket_transitions_organization_id_from_status_fkey FOREIGN KEY (organization_id, from_status) REFERENCES app.ticket_statuses(organization_id, status) ON DELETE CASCADE;

-- fk constraint app.ticket_transitions ticket_transitions_organization_id_to_status_fkey

ALTER TABLE ONLY app.ticket_transitions
    ADD CONSTRAINT ticket_transitions_organization_id_to_status_fkey FOREIGN KEY (organization_id, to_status) REFERENCES app.ticket_statuses(organization_id, status) ON DELETE CASCADE;

-- fk constraint app.tickets tickets_organization_id_created_by_client_id_fkey

ALTER TABLE ONLY app.tickets
    ADD CONSTRAINT tickets_organization_id_created_by_client_id_fkey FOREIGN KEY (organization_id, created_by_client_id) REFERENCES app.api_clients(organization_id, id);

-- fk constraint app.tickets tickets_organization_id_fkey

ALTER TABLE ONLY app.tickets
    ADD CONSTRAINT tickets_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.tickets tickets_organization_id_project_id_fkey

ALTER TABLE ONLY app.tickets
    ADD CONSTRAINT tickets_organization_id_project_id_fkey FOREIGN KEY (organization_id, project_id) REFERENCES app.projects(organization_id, id);

-- fk constraint app.tickets tickets_organization_id_status_fkey

ALTER TABLE ONLY app.tickets
    ADD CONSTRAINT tickets_organization_id_status_fkey FOREIGN KEY (organization_id, status) REFERENCES app.ticket_statuses(organization_id, status);

-- fk constraint app_private.ticket_number_counters ticket_number_counters_organization_id_fkey

ALTER TABLE ONLY app_private.ticket_number_counters
    ADD CONSTRAINT ticket_number_counters_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- policy app.file_chunks Chunks are readable where their file is

CREATE POLICY "Chunks are readable where their file is" ON app.file_chunks FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND
CASE linked_resource_type
    WHEN 'invoice'::text THEN ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role)
    WHEN 'ticket'::text THEN ( SELECT app_private.may_read_tickets() AS may_read_tickets)
    ELSE ( SELECT app.has_any_role('{member,manager}'::text[]) AS has_any_role)
END));

-- policy app.ticket_transitions Clients see their organization's ticket transitions

CREATE POLICY "Clients see their organization's ticket transitions" ON app.ticket_transitions FOR SELECT TO svc_api USING ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));

-- policy app.ticket_statuses Clients see their organization's ticket workflow

CREATE POLICY "Clients see their organization's ticket workflow" ON app.ticket_statuses FOR SELECT TO svc_api USING ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));

-- policy app.file_contents File content is readable where the file is

CREATE POLICY "File content is readable where the file is" ON app.file_contents FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND
CASE linked_resource_type
    WHEN 'invoice'::text THEN ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role)
    WHEN 'ticket'::text THEN ( SELECT app_private.may_read_tickets() AS may_read_tickets)
    ELSE ( SELECT app.has_any_role('{member,manager}'::text[]) AS has_any_role)
END));

-- policy app.files Files are visible where the linked resource is

CREATE POLICY "Files are visible where the linked resource is" ON app.files FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND
CASE linked_resource_type
    WHEN 'invoice'::text THEN ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role)
    WHEN 'ticket'::text THEN ( SELECT app_private.may_read_tickets() AS may_read_tickets)
    ELSE ( SELECT app.has_any_role('{member,manager}'::text[]) AS has_any_role)
END));

-- policy app.ticket_messages Managers add messages

CREATE POLICY "Managers add messages" ON app.ticket_messages FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (author_client_id = ( SELECT app.current_client_id() AS current_client_id)) AND ( SELECT app.has_role('manager'::text) AS has_role) AND ( SELECT app_private.may_read_tickets() AS may_read_tickets)));

-- policy app.tickets Managers change tickets

CREATE POLICY "Managers change tickets" ON app.tickets FOR UPDATE TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role) AND ( SELECT app_private.may_read_tickets() AS may_read_tickets))) WITH CHECK ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));

-- policy app.tickets Managers create tickets

CREATE POLICY "Managers create tickets" ON app.tickets FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (created_by_client_id = ( SELECT app.current_client_id() AS current_client_id)) AND ( SELECT app.has_role('manager'::text) AS has_role) AND ( SELECT app_private.may_read_tickets() AS may_read_tickets)));

-- policy app.ticket_search Search follows the tickets

CREATE POLICY "Search follows the tickets" ON app.ticket_search FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app_private.may_read_tickets() AS may_read_tickets)));

-- policy app.ticket_messages Ticket readers see replies, staff also internal notes

CREATE POLICY "Ticket readers see replies, staff also internal notes" ON app.ticket_messages FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app_private.may_read_tickets() AS may_read_tickets) AND ((type = 'reply'::text) OR ( SELECT app_private.may_read_internal_notes() AS may_read_internal_notes))));

-- policy app.tickets Ticket readers see their organization's tickets

CREATE POLICY "Ticket readers see their organization's tickets" ON app.tickets FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app_private.may_read_tickets() AS may_read_tickets)));

-- row security app.ticket_messages

ALTER TABLE app.ticket_messages ENABLE ROW LEVEL SECURITY;

-- row security app.ticket_search

ALTER TABLE app.ticket_search ENABLE ROW LEVEL SECURITY;

-- row security app.ticket_statuses

ALTER TABLE app.ticket_statuses ENABLE ROW LEVEL SECURITY;

-- row security app.ticket_transitions

ALTER TABLE app.ticket_transitions ENABLE ROW LEVEL SECURITY;

-- row security app.tickets

ALTER TABLE app.tickets ENABLE ROW LEVEL SECURITY;

-- acl api.FUNCTION require_tickets(p_write boolean)

REVOKE ALL ON FUNCTION api.require_tickets(p_write boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.require_tickets(p_write boolean) TO svc_runtime;

-- acl api.FUNCTION ticket_create(p_body jsonb)

REVOKE ALL ON FUNCTION api.ticket_create(p_body jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION api.ticket_create(p_body jsonb) TO svc_runtime;

-- acl api.FUNCTION ticket_get(p_id text)

REVOKE ALL ON FUNCTION api.ticket_get(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.ticket_get(p_id text) TO svc_runtime;

-- acl api.FUNCTION ticket_message_create(p_ticket_id text, p_body jsonb)

REVOKE ALL ON FUNCTION api.ticket_message_create(p_ticket_id text, p_body jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION api.ticket_message_create(p_ticket_id text, p_body jsonb) TO svc_runtime;

-- acl app.TABLE ticket_messages

GRANT SELECT,INSERT ON TABLE app.ticket_messages TO svc_api;

-- acl api.TABLE ticket_messages

GRANT SELECT ON TABLE api.ticket_messages TO svc_runtime;

-- acl api.FUNCTION ticket_messages(p_id text)

REVOKE ALL ON FUNCTION api.ticket_messages(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.ticket_messages(p_id text) TO svc_runtime;

-- acl api.FUNCTION ticket_require(p_id text)

REVOKE ALL ON FUNCTION api.ticket_require(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.ticket_require(p_id text) TO svc_runtime;

-- acl api.FUNCTION ticket_search_ids(p_query text)

REVOKE ALL ON FUNCTION api.ticket_search_ids(p_query text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.ticket_search_ids(p_query text) TO svc_runtime;

-- acl api.FUNCTION ticket_transition(p_id text, p_transition text, p_resolution text)

REVOKE ALL ON FUNCTION api.ticket_transition(p_id text, p_transition text, p_resolution text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.ticket_transition(p_id text, p_transition text, p_resolution text) TO svc_runtime;

-- acl api.FUNCTION ticket_update(p_id text, p_if_match integer[], p_patch jsonb)

REVOKE ALL ON FUNCTION api.ticket_update(p_id text, p_if_match integer[], p_patch jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION api.ticket_update(p_id text, p_if_match integer[], p_patch jsonb) TO svc_runtime;

-- acl app.TABLE ticket_transitions

GRANT SELECT ON TABLE app.ticket_transitions TO svc_api;

-- acl app.TABLE tickets

GRANT SELECT,INSERT,UPDATE ON TABLE app.tickets TO svc_api;

-- acl api.TABLE tickets

GRANT SELECT ON TABLE api.tickets TO svc_runtime;

-- acl api.FUNCTION tickets(p_id text)

REVOKE ALL ON FUNCTION api.tickets(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.tickets(p_id text) TO svc_runtime;

-- acl app_private.FUNCTION lock_ticket(p_id text)

REVOKE ALL ON FUNCTION app_private.lock_ticket(p_id text) FROM PUBLIC;

-- acl app_private.FUNCTION may_read_tickets()

REVOKE ALL ON FUNCTION app_private.may_read_tickets() FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.may_read_tickets() TO svc_api;
GRANT ALL ON FUNCTION app_private.may_read_tickets() TO svc_runtime;
GRANT ALL ON FUNCTION app_private.may_read_tickets() TO svc_reporting;

-- acl app_private.FUNCTION seed_ticket_workflow(p_org text)

REVOKE ALL ON FUNCTION app_private.seed_ticket_workflow(p_org text) FROM PUBLIC;

-- acl app_private.FUNCTION tg_organizations__seed_ticket_workflow()

REVOKE ALL ON FUNCTION app_private.tg_organizations__seed_ticket_workflow() FROM PUBLIC;

-- acl app_private.FUNCTION tg_ticket_messages__emit()

REVOKE ALL ON FUNCTION app_private.tg_ticket_messages__emit() FROM PUBLIC;

-- acl app_private.FUNCTION tg_ticket_messages__index()

REVOKE ALL ON FUNCTION app_private.tg_ticket_messages__index() FROM PUBLIC;

-- acl app_private.FUNCTION tg_ticket_messages__rules()

REVOKE ALL ON FUNCTION app_private.tg_ticket_messages__rules() FROM PUBLIC;

-- acl app_private.FUNCTION tg_tickets__emit()

REVOKE ALL ON FUNCTION app_private.tg_tickets__emit() FROM PUBLIC;

-- acl app_private.FUNCTION tg_tickets__index()

REVOKE ALL ON FUNCTION app_private.tg_tickets__index() FROM PUBLIC;

-- acl app_private.FUNCTION tg_tickets__rules()

REVOKE ALL ON FUNCTION app_private.tg_tickets__rules() FROM PUBLIC;

-- acl app_private.FUNCTION ticket_not_found(p_id text)

REVOKE ALL ON FUNCTION app_private.ticket_not_found(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.ticket_not_found(p_id text) TO svc_api;

-- acl app_private.FUNCTION ticket_reply_load(p_organization_id text, p_message_id text)

REVOKE ALL ON FUNCTION app_private.ticket_reply_load(p_organization_id text, p_message_id text) FROM PUBLIC;

-- acl app_private.FUNCTION ticket_reply_record(p_organization_id text, p_message_id text, p_sent boolean, p_detail text)

REVOKE ALL ON FUNCTION app_private.ticket_reply_record(p_organization_id text, p_message_id text, p_sent boolean, p_detail text) FROM PUBLIC;

-- acl control.FUNCTION org_set_ticket_policy(p_org text, p_module_enabled boolean, p_finance_may_read boolean, p_hr_may_read boolean)

REVOKE ALL ON FUNCTION control.org_set_ticket_policy(p_org text, p_module_enabled boolean, p_finance_may_read boolean, p_hr_may_read boolean) FROM PUBLIC;

-- acl app.TABLE ticket_search

GRANT SELECT ON TABLE app.ticket_search TO svc_api;

-- acl app.TABLE ticket_statuses

GRANT SELECT ON TABLE app.ticket_statuses TO svc_api;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
