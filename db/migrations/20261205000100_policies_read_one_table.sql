-- migrate:up

/** Issue 37, step 1: row policies that judge the row alone, the same rules.
 *
 * Citus refuses a sublink in a policy on a distributed table. Two kinds are in our policies:
 *  - `(select app.fn())`, the request context read once per statement (an InitPlan). On one server
 *    it stays: called directly, a context accessor would run again at every rescan of a subquery
 *    (it checks the context's signature each time), which made the month listing of time entries
 *    twelve times slower. On Citus, migration 20261205000200 rewrites each policy without them;
 *  - EXISTS over another table (twelve policies). These change here, on every server: a row that
 *    was visible "with its parent" carries what the parent's policy judged (the client, the linked
 *    resource type), copied from the parent when it is inserted by a trigger that reads the parent
 *    past its policies (rows never change parent, so the copy stays true); an event is visible to
 *    the clients it was delivered to (the fan-out's closing update of the event sets them); a
 *    member's note needs the task's workflow to allow it, which a trigger checks with the
 *    command's own error (ROLE_REQUIRED); a chunk's pending upload was already its guard's to check.
 * test/db/distribution-keys.test.ts checks that no policy reads another table. */

/** 2. Rows visible with their parent carry the parent's client. */
alter table app.run_events add column client_id text;
alter table app.run_tool_calls add column client_id text;
alter table app.report_results add column client_id text;
alter table app.webhook_delivery_attempts add column client_id text;
alter table app.conversation_messages add column client_id text;
update app.run_events c set client_id = p.client_id from app.runs p where p.organization_id = c.organization_id and p.id = c.run_id;
update app.run_tool_calls c set client_id = p.client_id from app.runs p where p.organization_id = c.organization_id and p.id = c.run_id;
update app.report_results c set client_id = p.client_id from app.report_runs p where p.organization_id = c.organization_id and p.id = c.run_id;
update app.webhook_delivery_attempts c set client_id = p.client_id from app.webhook_deliveries p where p.organization_id = c.organization_id and p.id = c.delivery_id;
update app.conversation_messages c set client_id = p.client_id from app.conversations p where p.organization_id = c.organization_id and p.id = c.conversation_id;
alter table app.run_events alter column client_id set not null;
alter table app.run_tool_calls alter column client_id set not null;
alter table app.report_results alter column client_id set not null;
alter table app.webhook_delivery_attempts alter column client_id set not null;
alter table app.conversation_messages alter column client_id set not null;

/** Sets the row's client from its parent (whatever the insert said), past the parent's policy. */
create function app_private.tg__client_of_parent() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  case tg_table_name
    when 'run_events', 'run_tool_calls' then
      select p.client_id into new.client_id from app.runs p where p.organization_id = new.organization_id and p.id = new.run_id;
    when 'report_results' then
      select p.client_id into new.client_id from app.report_runs p where p.organization_id = new.organization_id and p.id = new.run_id;
    when 'webhook_delivery_attempts' then
      select p.client_id into new.client_id from app.webhook_deliveries p where p.organization_id = new.organization_id and p.id = new.delivery_id;
    when 'conversation_messages' then
      select p.client_id into new.client_id from app.conversations p where p.organization_id = new.organization_id and p.id = new.conversation_id;
  end case;
  return new;
end
$$;
create trigger _010_client_of_parent before insert or update of client_id on app.run_events
  for each row execute function app_private.tg__client_of_parent();
create trigger _010_client_of_parent before insert or update of client_id on app.run_tool_calls
  for each row execute function app_private.tg__client_of_parent();
create trigger _010_client_of_parent before insert or update of client_id on app.report_results
  for each row execute function app_private.tg__client_of_parent();
create trigger _010_client_of_parent before insert or update of client_id on app.webhook_delivery_attempts
  for each row execute function app_private.tg__client_of_parent();
create trigger _010_client_of_parent before insert or update of client_id on app.conversation_messages
  for each row execute function app_private.tg__client_of_parent();

alter policy "Events are readable with their run" on app.run_events
  using ((organization_id = (select app.current_organization_id())) AND (client_id = (select app.current_client_id())));
alter policy "Tool calls are readable with their run" on app.run_tool_calls
  using ((organization_id = (select app.current_organization_id())) AND (client_id = (select app.current_client_id())));
alter policy "Results are readable with their run" on app.report_results
  using ((organization_id = (select app.current_organization_id())) AND (client_id = (select app.current_client_id())));
alter policy "Clients see attempts of their own deliveries" on app.webhook_delivery_attempts
  using ((organization_id = (select app.current_organization_id())) AND (client_id = (select app.current_client_id())));
alter policy "Messages are readable with their conversation" on app.conversation_messages
  using ((organization_id = (select app.current_organization_id())) AND (client_id = (select app.current_client_id())));
alter policy "Clients write to their own conversations" on app.conversation_messages
  with check ((organization_id = (select app.current_organization_id())) AND (role = 'user'::text) AND (client_id = (select app.current_client_id())));

/** 3. An event is visible to the clients it was delivered to. */
alter table app.events add column client_ids text[] not null default '{}';
update app.events e set client_ids = d.client_ids
  from (select organization_id, event_id, array_agg(distinct client_id order by client_id) as client_ids
          from app.webhook_deliveries group by organization_id, event_id) d
 where d.organization_id = e.organization_id and d.event_id = e.id;

-- Set where deliveries are made: the fan-out's closing update of the event, and the test event
-- of an endpoint. A replay goes to the client its original went to, which is already there.
create or replace function app_private.webhook_fanout_event(e app.events, p_lease_seconds integer)
 RETURNS TABLE(delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text, organization_id text, type text, resource_type text, resource_id text, resource_version integer, created_at timestamp with time zone)
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
#variable_conflict use_column
declare
  w record;
  v_client text;
  v_allowed boolean;
  v_delivered text[] := '{}';
begin
  for w in select ep.id, ep.client_id, ep.url, ep.secret_sealed,
                  case when ep.previous_secret_expires_at > now() then ep.previous_secret_sealed end as previous_secret_sealed
             from app.webhook_endpoints ep
            where ep.organization_id = e.organization_id and ep.status = 'enabled' and e.type = any (ep.events)
              and (e.target_endpoint_id is null or ep.id = e.target_endpoint_id)
            order by ep.client_id, ep.id loop
    if v_client is distinct from w.client_id then
      v_client := w.client_id;
      v_allowed := app_private.client_may_read(w.client_id, e.type, e.resource_type, e.resource_id);
    end if;
    continue when not v_allowed;
    delivery_id := null;
    insert into app.webhook_deliveries as d (organization_id, client_id, endpoint_id, event_id, attempt_count, lease_until)
    values (e.organization_id, w.client_id, w.id, e.id, 1, now() + make_interval(secs => p_lease_seconds))
    on conflict (organization_id, event_id, endpoint_id) where replay_of is null do nothing
    returning d.id into delivery_id;
    continue when delivery_id is null;
    if not (w.client_id = any (v_delivered)) then
      v_delivered := v_delivered || w.client_id;
    end if;
    attempt := 1;
    url := w.url;
    secret_sealed := w.secret_sealed;
    previous_secret_sealed := w.previous_secret_sealed;
    event_id := e.id;
    organization_id := e.organization_id;
    type := e.type;
    resource_type := e.resource_type;
    resource_id := e.resource_id;
    resource_version := e.resource_version;
    created_at := e.created_at;
    return next;
  end loop;
  -- The clients it was delivered to may read the event (its policy), set in the update the fan-out
  -- makes anyway.
  -- (An event is fanned out once, its deliveries made here: the clients are new to it.)
  update app.events x set fanout_pending = false, client_ids = x.client_ids || v_delivered
   where x.organization_id = e.organization_id and x.id = e.id;
end
$function$;

create or replace function api.webhook_endpoint_test(p_endpoint text)
 RETURNS TABLE(doc jsonb)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
declare
  w app.webhook_endpoints;
  v_event text;
  v_id text := app_private.new_id('whd');
begin
  select * into w from app.webhook_endpoints
   where id = p_endpoint and organization_id = app.current_organization_id() and client_id = app.current_client_id();
  if not found then
    perform app_private.webhook_endpoint_not_found(p_endpoint);
  end if;
  insert into app.events (organization_id, type, resource_type, resource_id, resource_version, target_endpoint_id, client_ids)
  values (w.organization_id, 'webhook_endpoint.test', 'webhook_endpoint', w.id, w.version, w.id, array[w.client_id])
  returning id into v_event;
  insert into app.webhook_deliveries (organization_id, id, client_id, endpoint_id, event_id)
  values (w.organization_id, v_id, w.client_id, w.id, v_event);
  perform app_private.webhook_enqueue(v_id);
  return query select v.doc from api.webhook_deliveries v where v.id = v_id;
end
$function$;

alter policy "Events are visible through the client's deliveries" on app.events
  using ((organization_id = (select app.current_organization_id())) AND ((select app.current_client_id()) = ANY (client_ids)));

/** 4. Files: the linked resources are never deleted, so a file is visible where its resource's
 * policy would show the resource (projects and tasks: any Role; invoices: manager, finance;
 * tickets: app_private.may_read_tickets()); its content and chunks carry the resource type (and a
 * chunk its uploader), readable where the file is, by app_private.file_read_roles. One difference:
 * a chunk's upload may still be pending (no file yet); no read path reaches such chunks. */
alter policy "Files are visible where the linked resource is" on app.files
  using ((organization_id = (select app.current_organization_id())) AND CASE linked_resource_type
           WHEN 'invoice'::text THEN (select app.has_any_role('{manager,finance}'::text[]))
           WHEN 'ticket'::text THEN (select app_private.may_read_tickets())
           ELSE (select app.has_any_role('{member,manager,finance,hr}'::text[])) END);

alter table app.file_contents add column linked_resource_type text;
alter table app.file_chunks add column linked_resource_type text, add column client_id text;
update app.file_contents c set linked_resource_type = f.linked_resource_type
  from app.files f where f.organization_id = c.organization_id and f.id = c.file_id;
update app.file_chunks c set linked_resource_type = u.linked_resource_type, client_id = u.created_by_client_id
  from app.file_uploads u where u.organization_id = c.organization_id and u.id = c.upload_id;
alter table app.file_contents alter column linked_resource_type set not null;
alter table app.file_chunks alter column linked_resource_type set not null, alter column client_id set not null;

create function app_private.tg_file_bytes__of_parent() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  if tg_table_name = 'file_contents' then
    select f.linked_resource_type into new.linked_resource_type
      from app.files f where f.organization_id = new.organization_id and f.id = new.file_id;
  else
    select u.linked_resource_type, u.created_by_client_id into new.linked_resource_type, new.client_id
      from app.file_uploads u where u.organization_id = new.organization_id and u.id = new.upload_id;
  end if;
  return new;
end
$$;
create trigger _010_of_parent before insert on app.file_contents
  for each row execute function app_private.tg_file_bytes__of_parent();
create trigger _010_of_parent before insert on app.file_chunks
  for each row execute function app_private.tg_file_bytes__of_parent();

-- The file's visibility and app_private.file_read_roles, each checked once per statement.
alter policy "File content is readable where the file is" on app.file_contents
  using ((organization_id = (select app.current_organization_id())) AND CASE linked_resource_type
           WHEN 'invoice'::text THEN (select app.has_any_role('{manager,finance}'::text[]))
           WHEN 'ticket'::text THEN (select app_private.may_read_tickets())
           ELSE (select app.has_any_role('{member,manager}'::text[])) END);
alter policy "Chunks are readable where their file is" on app.file_chunks
  using ((organization_id = (select app.current_organization_id())) AND CASE linked_resource_type
           WHEN 'invoice'::text THEN (select app.has_any_role('{manager,finance}'::text[]))
           WHEN 'ticket'::text THEN (select app_private.may_read_tickets())
           ELSE (select app.has_any_role('{member,manager}'::text[])) END);
-- The upload's pending status is the chunk guard's (_050_guard) to check, as before.
alter policy "Clients write the bytes of their own pending uploads" on app.file_chunks
  with check ((organization_id = (select app.current_organization_id())) AND (client_id = (select app.current_client_id())));

/** 5. A member adds a note only where the task's workflow allows it: checked by a trigger. */
alter policy "Managers, or members where the task policy permits, add notes" on app.task_notes
  with check ((organization_id = (select app.current_organization_id())) AND (select app.has_any_role('{manager,member}'::text[]))
              AND (author_client_id = (select app.current_client_id())));

create function app_private.tg_task_notes__members_may_add() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  -- Only requests answer to Roles; the owner (migrations, admin) is not a request.
  if app.current_organization_id() is not null and not app.has_role('manager') and not coalesce((
       select w.members_may_add_notes from app.tasks t join app.task_workflows w
           on w.organization_id = t.organization_id and w.id = t.workflow_id
        where t.organization_id = new.organization_id and t.id = new.task_id), false) then
    perform app_private.raise('SVR03', 'ROLE_REQUIRED',
      'adding a note requires the manager Role, or member where the organization''s task policy permits');
  end if;
  return new;
end
$$;
create trigger _010_members_may_add before insert on app.task_notes
  for each row execute function app_private.tg_task_notes__members_may_add();

/** 6. A self-reference Citus cannot keep (it would set the distribution column to null too):
 * a purged delivery's replays forget it, by trigger. */
alter table app.webhook_deliveries drop constraint webhook_deliveries_replay_of_fkey;
create index webhook_deliveries_replay_of on app.webhook_deliveries (organization_id, replay_of) where replay_of is not null;
create function app_private.tg_webhook_deliveries__replay_of() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  if tg_op = 'DELETE' then
    update app.webhook_deliveries d set replay_of = null
     where d.organization_id = old.organization_id and d.replay_of = old.id;
    return null;
  end if;
  if new.replay_of is not null and not exists (
       select from app.webhook_deliveries d where d.organization_id = new.organization_id and d.id = new.replay_of) then
    perform app_private.raise('SVN04', 'WEBHOOK_DELIVERY_NOT_FOUND', format('no delivery %s to replay', new.replay_of));
  end if;
  return new;
end
$$;
-- Only a replay is checked (a WHEN clause: the fan-out's inserts call no function for it).
create trigger _010_replay_of before insert or update of replay_of on app.webhook_deliveries
  for each row when (new.replay_of is not null) execute function app_private.tg_webhook_deliveries__replay_of();
create trigger _990_replay_of after delete on app.webhook_deliveries
  for each row execute function app_private.tg_webhook_deliveries__replay_of();

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'restore a backup taken before 20261205000100'); end $$;
