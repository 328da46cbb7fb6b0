-- migrate:up

/** What a page of tasks costs PostgreSQL, cut where it went (bench/sql-profile.ts; docs/benchmarks.md
 * "PostgreSQL's CPU against its floor"):
 * - app_private.wire_json renders a document as jsonb's own text. It moved `object` and `id` to the
 *   front, which took two copies of every document (jsonb's `-` rebuilds it): 220 µs of a 50-task
 *   page's 960. jsonb's order puts `id` first (keys by length, then bytes); the order of an object's
 *   members carries no meaning (RFC 8259, section 4).
 * - api.tasks builds a task's document in one jsonb_build_object, rather than four objects joined with
 *   || (each join copies the document). The keys a caller's Roles do not show are deleted from it by
 *   one array computed once per statement, empty for member and manager (deleting nothing copies
 *   nothing). The transitions offered from a task's status are read by a lateral join, which the
 *   planner memoizes by (workflow, status), so a page aggregates each set once rather than once per
 *   task. Each Role sees the fields it saw: member and manager all, finance the common ones and
 *   completed_at, hr the common ones and assignee_member_ids, start_at and due_at
 *   (test/http/tasks.test.ts "Role projections"). */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

create or replace view api.tasks with (security_invoker='false') as
 select t.organization_id,
    t.id,
    t.project_id,
    t.status,
    t.priority,
    t.due_at,
    t.created_at,
    t.updated_at,
    t.name,
    t.code,
    t.assignee_member_ids,
    t.archived_at,
    t.version,
    jsonb_build_object('object', 'task', 'id', t.id, 'project_id', t.project_id, 'code', t.code, 'name', t.name, 'status', t.status,
        'archived', (t.archived_at is not null), 'created_at', app_private.iso_timestamp(t.created_at),
        'updated_at', app_private.iso_timestamp(t.updated_at),
        'custom_fields', case when t.custom_fields = '{}'::jsonb then '{}'::jsonb
                              else app_private.readable_custom_fields(t.organization_id, 'task'::text, t.custom_fields) end,
        'description', t.description, 'priority', t.priority, 'start_at', app_private.iso_timestamp(t.start_at),
        'due_at', app_private.iso_timestamp(t.due_at), 'completed_at', app_private.iso_timestamp(t.completed_at),
        'assignee_member_ids', to_jsonb(t.assignee_member_ids),
        'predecessor_task_ids', case when (select app.has_any_role('{member,manager}'::text[]))
                                     then coalesce((select jsonb_agg(d.predecessor_task_id order by d.predecessor_task_id)
                                                      from app.task_dependencies d
                                                     where d.organization_id = t.organization_id and d.task_id = t.id), '[]'::jsonb) end,
        'transitions', case when t.archived_at is null then coalesce(w.transitions, '[]'::jsonb) else '[]'::jsonb end)
      - (select case when app.has_any_role('{member,manager}'::text[]) then '{}'::text[]
                     else '{description,priority,predecessor_task_ids,transitions}'::text[]
                          || case when app.has_role('finance'::text) then '{}'::text[] else '{completed_at}'::text[] end
                          || case when app.has_role('hr'::text) then '{}'::text[] else '{assignee_member_ids,start_at,due_at}'::text[] end
                end) as doc
   from app.tasks t
   left join lateral (select jsonb_agg(jsonb_build_object('name', tr.name, 'to_status', tr.to_status) order by tr.name) as transitions
                        from app.task_workflow_transitions tr
                       where tr.organization_id = t.organization_id and tr.workflow_id = t.workflow_id and tr.from_status = t.status) w on true;

create or replace function app_private.wire_json(d jsonb) returns text
    language sql immutable parallel safe
    as $$ select d::pg_catalog.text $$;

comment on function app_private.wire_json(d jsonb) is 'A document as the API sends it: jsonb''s own text, keys in jsonb''s order (by length, then bytes, so `id` first). A SQL expression, inlined into the statement that renders the document.';

-- migrate:down

create or replace view api.tasks with (security_invoker='false') as
 select t.organization_id,
    t.id,
    t.project_id,
    t.status,
    t.priority,
    t.due_at,
    t.created_at,
    t.updated_at,
    t.name,
    t.code,
    t.assignee_member_ids,
    t.archived_at,
    t.version,
    (((jsonb_build_object('object', 'task', 'id', t.id, 'project_id', t.project_id, 'code', t.code, 'name', t.name, 'status', t.status, 'archived', (t.archived_at is not null), 'created_at', app_private.iso_timestamp(t.created_at), 'updated_at', app_private.iso_timestamp(t.updated_at), 'custom_fields',
        case
            when (t.custom_fields = '{}'::jsonb) then '{}'::jsonb
            else app_private.readable_custom_fields(t.organization_id, 'task'::text, t.custom_fields)
        end) ||
        case
            when (select app.has_any_role('{member,manager}'::text[])) then jsonb_build_object('description', t.description, 'priority', t.priority, 'start_at', app_private.iso_timestamp(t.start_at), 'due_at', app_private.iso_timestamp(t.due_at), 'completed_at', app_private.iso_timestamp(t.completed_at), 'assignee_member_ids', to_jsonb(t.assignee_member_ids), 'predecessor_task_ids', coalesce(( select jsonb_agg(d.predecessor_task_id order by d.predecessor_task_id) as jsonb_agg
               from app.task_dependencies d
              where (d.task_id = t.id)), '[]'::jsonb), 'transitions', coalesce(( select jsonb_agg(jsonb_build_object('name', tr.name, 'to_status', tr.to_status) order by tr.name) as jsonb_agg
               from app.task_workflow_transitions tr
              where ((tr.workflow_id = t.workflow_id) and (tr.from_status = t.status) and (t.archived_at is null))), '[]'::jsonb))
            else '{}'::jsonb
        end) ||
        case
            when (select app.has_role('finance'::text)) then jsonb_build_object('completed_at', app_private.iso_timestamp(t.completed_at))
            else '{}'::jsonb
        end) ||
        case
            when (select app.has_role('hr'::text)) then jsonb_build_object('assignee_member_ids', to_jsonb(t.assignee_member_ids), 'start_at', app_private.iso_timestamp(t.start_at), 'due_at', app_private.iso_timestamp(t.due_at))
            else '{}'::jsonb
        end) as doc
   from app.tasks t;

create or replace function app_private.wire_json(d jsonb) returns text
    language sql immutable parallel safe
    as $$
  select case when d ? 'object'
              then '{"object":' || (d -> 'object')::text || coalesce(',"id":' || (d -> 'id')::text, '')
                   || coalesce(',' || nullif(substr((d - 'object' - 'id')::text, 2), '}'), '}')
              else d::text end
$$;

comment on function app_private.wire_json(d jsonb) is null;
