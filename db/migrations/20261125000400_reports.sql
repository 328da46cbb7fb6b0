-- migrate:up

/** Reports (issue 16): SQL-defined reports in a catalogue, run as snapshots by the worker, acting
 * as the requesting client. Each report is a function in schema `reporting`, owned by svc_api, so
 * the row policies of every table it reads apply to the client's context at execution: Roles and
 * field policy are evaluated when the run executes (spec Reports). */
create schema reporting;
grant usage on schema reporting to svc_api;

/** 1. The catalogue (shipped with the service, the same for every organization). */
create table app_private.report_definitions (
  id text primary key constraint report_definitions_id_format check (id ~ '^rpt_[a-z_]+$'),
  name text not null,
  description text not null,
  required_roles text[] not null,
  parameters_schema jsonb not null,
  formats text[] not null,
  version integer not null,
  function_name text not null,
  columns text[] not null
);
grant select on app_private.report_definitions to svc_api;

/** 2. The reports. Each returns one jsonb object per row, its keys the definition's columns. */
create function reporting.time_by_project(p jsonb) returns setof jsonb
language sql stable security definer
set search_path = pg_catalog
as $$
  select jsonb_build_object('project_id', e.project_id, 'project_name', pr.name, 'member_id', e.member_id,
           'billable_minutes', sum(e.minutes) filter (where e.billable), 'non_billable_minutes', coalesce(sum(e.minutes) filter (where not e.billable), 0),
           'total_minutes', sum(e.minutes))
    from app.time_entries e
    join app.projects pr on pr.organization_id = e.organization_id and pr.id = e.project_id
   where e.deleted_at is null and e.work_date between (p ->> 'from')::date and (p ->> 'to')::date
     and (p ->> 'project_id' is null or e.project_id = p ->> 'project_id')
   group by e.project_id, pr.name, e.member_id
   order by pr.name, e.project_id, e.member_id
$$;

create function reporting.member_utilization(p jsonb) returns setof jsonb
language sql stable security definer
set search_path = pg_catalog
as $$
  with days as (
    select count(*)::integer as n from generate_series((p ->> 'from')::date, (p ->> 'to')::date, interval '1 day') d
     where extract(isodow from d) < 6),
  worked as (
    select e.member_id, sum(e.minutes) as minutes, coalesce(sum(e.minutes) filter (where e.billable), 0) as billable
      from app.time_entries e
     where e.deleted_at is null and e.work_date between (p ->> 'from')::date and (p ->> 'to')::date
     group by e.member_id)
  select jsonb_build_object('member_id', m.id, 'display_name', m.display_name,
           'worked_minutes', coalesce(w.minutes, 0), 'billable_minutes', coalesce(w.billable, 0),
           'capacity_minutes', days.n * coalesce((p ->> 'capacity_minutes_per_day')::integer, 480),
           'utilization', case when days.n = 0 then null
                               else round(coalesce(w.minutes, 0)::numeric / (days.n * coalesce((p ->> 'capacity_minutes_per_day')::integer, 480)), 4)::text end,
           'billable_utilization', case when days.n = 0 then null
                               else round(coalesce(w.billable, 0)::numeric / (days.n * coalesce((p ->> 'capacity_minutes_per_day')::integer, 480)), 4)::text end)
    from app.members m cross join days
    left join worked w on w.member_id = m.id
   where m.status = 'active'
   order by m.id
$$;

create function reporting.project_progress(p jsonb) returns setof jsonb
language sql stable security definer
set search_path = pg_catalog
as $$
  select jsonb_build_object('project_id', pr.id, 'project_name', pr.name, 'project_status', pr.status,
           'tasks_total', count(t.id), 'tasks_open', count(t.id) filter (where s.category = 'open'),
           'tasks_done', count(t.id) filter (where s.category = 'done'),
           'tasks_cancelled', count(t.id) filter (where s.category = 'cancelled'),
           'tasks_overdue', count(t.id) filter (where s.category = 'open' and t.due_at < now()),
           'completed_in_range', count(t.id) filter (where t.completed_at::date between coalesce((p ->> 'from')::date, '-infinity')
                                                                                   and coalesce((p ->> 'to')::date, 'infinity')))
    from app.projects pr
    left join app.tasks t on t.organization_id = pr.organization_id and t.project_id = pr.id and t.archived_at is null
    left join app.task_workflow_statuses s on s.organization_id = t.organization_id and s.workflow_id = t.workflow_id and s.status = t.status
   where coalesce((p ->> 'include_archived')::boolean, false) or pr.status = 'active'
   group by pr.id, pr.name, pr.status
   order by pr.name, pr.id
$$;

create function reporting.invoice_aging(p jsonb) returns setof jsonb
language sql stable security definer
set search_path = pg_catalog
as $$
  with open_invoices as (
    select i.customer_id, i.currency, i.scale, i.total - i.amount_paid as due,
           coalesce((p ->> 'as_of')::date, current_date) - coalesce(i.due_date, i.issue_date, i.created_at::date) as age
      from app.invoices i
     where i.status = 'sent' and i.total > i.amount_paid)
  select jsonb_build_object('customer_id', o.customer_id, 'customer_name', c.name, 'currency', o.currency,
           'due_0_30', app_private.money_text(coalesce(sum(o.due) filter (where o.age <= 30), 0), max(o.scale)),
           'due_31_60', app_private.money_text(coalesce(sum(o.due) filter (where o.age between 31 and 60), 0), max(o.scale)),
           'due_61_90', app_private.money_text(coalesce(sum(o.due) filter (where o.age between 61 and 90), 0), max(o.scale)),
           'due_over_90', app_private.money_text(coalesce(sum(o.due) filter (where o.age > 90), 0), max(o.scale)),
           'total_due', app_private.money_text(sum(o.due), max(o.scale)), 'invoices', count(*))
    from open_invoices o
    join app.customers c on c.id = o.customer_id
   group by o.customer_id, c.name, o.currency
   order by c.name, o.customer_id, o.currency
$$;

create function reporting.payments_received(p jsonb) returns setof jsonb
language sql stable security definer
set search_path = pg_catalog
as $$
  select jsonb_build_object('period_start', date_trunc(coalesce(p ->> 'period', 'month'), y.received_date)::date, 'currency', y.currency,
           'payments', count(*), 'amount', app_private.money_text(sum(y.amount), max(i.scale)))
    from app.payments y
    join app.invoices i on i.organization_id = y.organization_id and i.id = y.invoice_id
   where y.received_date between (p ->> 'from')::date and (p ->> 'to')::date
   group by date_trunc(coalesce(p ->> 'period', 'month'), y.received_date), y.currency
   order by date_trunc(coalesce(p ->> 'period', 'month'), y.received_date), y.currency
$$;

create function reporting.ticket_volume(p jsonb) returns setof jsonb
language sql stable security definer
set search_path = pg_catalog
as $$
  select jsonb_build_object('week_start', w.week::date, 'created', count(t.id),
           'solved', count(t.id) filter (where t.resolved_at is not null),
           'median_hours_to_resolution', round((percentile_cont(0.5) within group (order by extract(epoch from t.resolved_at - t.created_at) / 3600)
                                                filter (where t.resolved_at is not null))::numeric, 1)::text)
    from generate_series(date_trunc('week', (p ->> 'from')::date), (p ->> 'to')::date, interval '1 week') w (week)
    left join app.tickets t on t.created_at >= w.week and t.created_at < w.week + interval '1 week'
                           and t.created_at::date between (p ->> 'from')::date and (p ->> 'to')::date
   group by w.week
   order by w.week
$$;

do $$
declare
  r record;
begin
  for r in select p.oid::regprocedure as fn from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'reporting' loop
    execute format('alter function %s owner to svc_api', r.fn);
  end loop;
end
$$;

/** A date range: both ends, from before to, at most 3 years (guards the work a run may do). */
insert into app_private.report_definitions (id, name, description, required_roles, parameters_schema, formats, version, function_name, columns) values
  ('rpt_time_by_project', 'Time by project and member',
   'Billable and non-billable minutes per project and member over a date range (time entries that are not deleted, any status).',
   '{manager,finance}',
   '{"type":"object","additionalProperties":false,"required":["from","to"],"properties":{"from":{"type":"string","format":"date"},"to":{"type":"string","format":"date"},"project_id":{"type":"string","pattern":"^prj_[A-Za-z0-9]{1,64}$"}}}',
   '{json,csv}', 1, 'reporting.time_by_project',
   '{project_id,project_name,member_id,billable_minutes,non_billable_minutes,total_minutes}'),
  ('rpt_member_utilization', 'Member utilization',
   'Worked and billable minutes per active member against a capacity of working days (Monday to Friday) times minutes per day (default 480); utilization as a decimal string.',
   '{manager}',
   '{"type":"object","additionalProperties":false,"required":["from","to"],"properties":{"from":{"type":"string","format":"date"},"to":{"type":"string","format":"date"},"capacity_minutes_per_day":{"type":"integer","minimum":1,"maximum":1440}}}',
   '{json,csv}', 1, 'reporting.member_utilization',
   '{member_id,display_name,worked_minutes,billable_minutes,capacity_minutes,utilization,billable_utilization}'),
  ('rpt_project_progress', 'Project progress',
   'Tasks per project by status category, overdue open tasks, and tasks completed in an optional date range.',
   '{member,manager}',
   '{"type":"object","additionalProperties":false,"properties":{"from":{"type":"string","format":"date"},"to":{"type":"string","format":"date"},"include_archived":{"type":"boolean"}}}',
   '{json,csv}', 1, 'reporting.project_progress',
   '{project_id,project_name,project_status,tasks_total,tasks_open,tasks_done,tasks_cancelled,tasks_overdue,completed_in_range}'),
  ('rpt_invoice_aging', 'Invoice aging',
   'Amounts due on issued invoices per customer and currency, by days past the due date: 0–30 (including not yet due), 31–60, 61–90, over 90.',
   '{finance}',
   '{"type":"object","additionalProperties":false,"properties":{"as_of":{"type":"string","format":"date"}}}',
   '{json,csv}', 1, 'reporting.invoice_aging',
   '{customer_id,customer_name,currency,due_0_30,due_31_60,due_61_90,due_over_90,total_due,invoices}'),
  ('rpt_payments_received', 'Payments received',
   'Recorded payments per period (day, week or month) and currency over a date range of received dates.',
   '{finance}',
   '{"type":"object","additionalProperties":false,"required":["from","to"],"properties":{"from":{"type":"string","format":"date"},"to":{"type":"string","format":"date"},"period":{"enum":["day","week","month"]}}}',
   '{json,csv}', 1, 'reporting.payments_received',
   '{period_start,currency,payments,amount}'),
  ('rpt_ticket_volume', 'Ticket volume and time to resolution',
   'Tickets created per week over a date range, how many of them are solved, and the median hours from creation to resolution.',
   '{manager}',
   '{"type":"object","additionalProperties":false,"required":["from","to"],"properties":{"from":{"type":"string","format":"date"},"to":{"type":"string","format":"date"}}}',
   '{json,csv}', 1, 'reporting.ticket_volume',
   '{week_start,created,solved,median_hours_to_resolution}');

/** 3. Runs and their results (kept until expires_at, then purged: REPORT_RUN_EXPIRED). */
create table app.report_runs (
  organization_id text not null references app.organizations on delete cascade,
  id text not null default app_private.new_id('rrun'),
  report_id text not null references app_private.report_definitions,
  definition_version integer not null,
  client_id text not null,
  parameters jsonb not null,
  format text not null constraint report_runs_format_valid check (format in ('json', 'csv')),
  status text not null default 'queued' constraint report_runs_status_valid check (status in ('queued', 'running', 'succeeded', 'failed')),
  timezone text not null,
  data_as_of timestamptz,
  row_count integer,
  error jsonb,
  results_purged boolean not null default false,
  expires_at timestamptz,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz,
  primary key (organization_id, id),
  foreign key (organization_id, client_id) references app.api_clients (organization_id, id),
  constraint report_runs_failed_has_error check ((status = 'failed') = (error is not null))
);
create index report_runs_id on app.report_runs (id);
create index report_runs_expiry on app.report_runs (expires_at) where not results_purged;

create table app.report_results (
  organization_id text not null,
  run_id text not null,
  n integer not null,
  data jsonb not null,
  primary key (organization_id, run_id, n),
  foreign key (organization_id, run_id) references app.report_runs (organization_id, id) on delete cascade
);

/** States: queued → running → succeeded | failed, queued → failed; nothing else, for every writer. */
create function app_private.tg_report_runs__lifecycle() returns trigger
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  if tg_op = 'INSERT' then
    if new.status <> 'queued' then
      perform app_private.raise('SVC09', 'CONFLICT', 'a report run starts queued');
    end if;
    return new;
  end if;
  if (new.organization_id, new.id, new.report_id, new.definition_version, new.client_id, new.parameters, new.format, new.created_at)
     is distinct from (old.organization_id, old.id, old.report_id, old.definition_version, old.client_id, old.parameters, old.format, old.created_at) then
    perform app_private.raise('SVC09', 'CONFLICT', 'a report run''s request never changes');
  end if;
  if new.status <> old.status and not ((old.status, new.status) in (('queued', 'running'), ('running', 'succeeded'), ('running', 'failed'), ('queued', 'failed'))) then
    perform app_private.raise('SVC09', 'CONFLICT', format('a report run moves queued → running → succeeded or failed, not %s → %s', old.status, new.status));
  end if;
  if old.results_purged and not new.results_purged then
    perform app_private.raise('SVC09', 'CONFLICT', 'purged results do not come back');
  end if;
  return new;
end
$$;
create trigger _100_lifecycle before insert or update on app.report_runs
  for each row execute function app_private.tg_report_runs__lifecycle();

alter table app.report_runs enable row level security;
alter table app.report_runs force row level security;
create policy "Clients see their own report runs" on app.report_runs for select to svc_api
  using (organization_id = (select app.current_organization_id()) and client_id = (select app.current_client_id()));
create policy "Clients request report runs" on app.report_runs for insert to svc_api
  with check (organization_id = (select app.current_organization_id()) and client_id = (select app.current_client_id()));
grant select, insert on app.report_runs to svc_api;
alter table app.report_results enable row level security;
alter table app.report_results force row level security;
create policy "Results are readable with their run" on app.report_results for select to svc_api
  using (organization_id = (select app.current_organization_id())
         and exists (select from app.report_runs r where r.organization_id = report_results.organization_id and r.id = report_results.run_id));
grant select on app.report_results to svc_api;

/** Events: report_run.succeeded and report_run.failed, for the client that asked (only its own runs are visible). */
insert into app_private.event_types (name, resource_type, emitted_by, description, subscribable) values
  ('report_run.succeeded', 'report_run', '{createReportRun}', 'A report run finished; its results can be read until expires_at.', true),
  ('report_run.failed', 'report_run', '{createReportRun}', 'A report run failed (the run shows why).', true);
create function app_private.tg_report_runs__emit() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  if new.status <> old.status and new.status in ('succeeded', 'failed') then
    perform app_private.emit_event(new.organization_id, 'report_run.' || new.status, 'report_run', new.id, 1);
  end if;
  return null;
end
$$;
create trigger _950_emit_event after update on app.report_runs
  for each row execute function app_private.tg_report_runs__emit();

/** Report rows have no `object`: the wire form is the row as it is. */
create or replace function app_private.wire_json(d jsonb) returns text
language sql immutable parallel safe
as $$
  select case when d ? 'object'
              then '{"object":' || (d -> 'object')::text || coalesce(',"id":' || (d -> 'id')::text, '')
                   || coalesce(',' || nullif(substr((d - 'object' - 'id')::text, 2), '}'), '}')
              else d::text end
$$;

/** 4. The api surface. */
create view api.reports as
select d.id, d.required_roles,
       jsonb_build_object('object', 'report_definition', 'id', d.id, 'name', d.name, 'description', d.description,
         'required_roles', to_jsonb(d.required_roles), 'parameters_schema', d.parameters_schema, 'formats', to_jsonb(d.formats),
         'columns', to_jsonb(d.columns), 'version', d.version) as doc,
       d.version, d.id as sort_id
  from app_private.report_definitions d
 where d.required_roles && (select app.current_roles());
alter view api.reports owner to svc_api;
grant select on api.reports to svc_runtime;

create view api.report_runs as
select r.organization_id, r.id, r.report_id, r.status, r.created_at, r.expires_at, r.results_purged, r.error,
       jsonb_build_object('object', 'report_run', 'id', r.id, 'report_id', r.report_id, 'definition_version', r.definition_version,
         'status', r.status, 'parameters', r.parameters, 'format', r.format, 'timezone', r.timezone,
         'data_as_of', app_private.iso_timestamp(r.data_as_of), 'row_count', r.row_count, 'error', r.error,
         'expires_at', app_private.iso_timestamp(r.expires_at),
         'created_at', app_private.iso_timestamp(r.created_at), 'started_at', app_private.iso_timestamp(r.started_at),
         'finished_at', app_private.iso_timestamp(r.finished_at)) as doc,
       null::integer as version
  from app.report_runs r;
alter view api.report_runs owner to svc_api;
grant select on api.report_runs to svc_runtime;

create view api.report_results as
select x.organization_id, x.run_id, x.n, x.n::text as id, x.data as doc
  from app.report_results x;
alter view api.report_results owner to svc_api;
grant select on api.report_results to svc_runtime;

/** The definition for the caller: REPORT_NOT_FOUND when there is none, REPORT_ROLE_REQUIRED when its Roles are not held. */
create function api.report_get(p_id text) returns table (doc jsonb, version integer)
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  d app_private.report_definitions;
begin
  select * into d from app_private.report_definitions x where x.id = p_id;
  if not found or app.current_organization_id() is null then
    perform app_private.raise('SVN04', 'REPORT_NOT_FOUND', format('no report %s', p_id));
  end if;
  if not (d.required_roles && app.current_roles()) then
    perform app_private.raise('SVR04', 'REPORT_ROLE_REQUIRED',
      format('%s needs one of the Roles %s', p_id, array_to_string(d.required_roles, ', ')));
  end if;
  return query select v.doc, v.version from api.reports v where v.id = p_id;
end
$$;

/** createReportRun: the definition and Roles, the format; the parameters were validated against
 * parameters_schema (ajv) by the caller, and the date range is checked here too. */
create function api.report_run_create(p_report_id text, p_parameters jsonb, p_format text) returns jsonb
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  d app_private.report_definitions;
  v_id text;
begin
  perform api.report_get(p_report_id);
  select * into d from app_private.report_definitions x where x.id = p_report_id;
  if not p_format = any (d.formats) then
    perform app_private.raise('SVV22', 'EXPORT_FORMAT_NOT_SUPPORTED',
      format('%s offers %s', p_report_id, array_to_string(d.formats, ', ')), '/format');
  end if;
  if p_parameters ? 'from' and p_parameters ? 'to'
     and ((p_parameters ->> 'to')::date < (p_parameters ->> 'from')::date or (p_parameters ->> 'to')::date > (p_parameters ->> 'from')::date + 1096) then
    perform app_private.raise('SVV22', 'INVALID_REPORT_PARAMETERS', 'to must be on or after from, and at most three years later', '/parameters/to');
  end if;
  insert into app.report_runs (organization_id, report_id, definition_version, client_id, parameters, format, timezone)
  values (app.current_organization_id(), d.id, d.version, app.current_client_id(), p_parameters, p_format,
          (select o.timezone from app.organizations o where o.id = app.current_organization_id()))
  returning id into v_id;
  perform app_private.queue_report_run(v_id);
  return (select v.doc from api.report_runs v where v.id = v_id);
end
$$;

create function app_private.queue_report_run(p_run_id text) returns void
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  perform graphile_worker.add_job('report_run', json_build_object('run_id', p_run_id), job_key => 'report_run:' || p_run_id, max_attempts => 3);
end
$$;
grant execute on function app_private.queue_report_run(text) to svc_api;

/** The run for the caller (its own runs only): REPORT_RUN_NOT_FOUND otherwise. */
create function api.report_run_get(p_report_id text, p_run_id text) returns table (doc jsonb, version integer)
language plpgsql stable security definer
set search_path = pg_catalog
as $$
begin
  perform api.report_get(p_report_id);
  if not exists (select from api.report_runs v where v.id = p_run_id and v.report_id = p_report_id) then
    perform app_private.raise('SVN04', 'REPORT_RUN_NOT_FOUND', format('no run %s of %s by your client', p_run_id, p_report_id));
  end if;
  return query select v.doc, v.version from api.report_runs v where v.id = p_run_id;
end
$$;

/** Results are readable when the run succeeded and has not expired. */
create function api.report_results_ready(p_report_id text, p_run_id text) returns boolean
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  r app.report_runs;
begin
  perform api.report_run_get(p_report_id, p_run_id);
  select * into r from app.report_runs x where x.organization_id = app.current_organization_id() and x.id = p_run_id;
  if r.status = 'failed' then
    perform app_private.raise('SVC09', 'REPORT_FAILED', coalesce(r.error ->> 'detail', 'the run failed'));
  elsif r.status <> 'succeeded' then
    perform app_private.raise('SVC09', 'CONFLICT', format('the run is %s; read its results once it succeeded (report_run.succeeded)', r.status));
  elsif r.results_purged or r.expires_at <= now() then
    perform app_private.raise('SVC09', 'REPORT_RUN_EXPIRED', format('the results expired at %s; run the report again', app_private.iso_timestamp(r.expires_at)));
  end if;
  return true;
end
$$;


/** createReportDownload: a token bound to the run, the client and an expiry (as file downloads). */
create function api.report_download_create(p_report_id text, p_run_id text, p_lifetime_seconds integer) returns jsonb
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  v_expires bigint := extract(epoch from now())::bigint + p_lifetime_seconds;
  v_message text := p_run_id || '.' || app.current_client_id() || '.' || v_expires;
begin
  perform api.report_results_ready(p_report_id, p_run_id);
  return jsonb_build_object('object', 'report_download', 'report_id', p_report_id, 'run_id', p_run_id,
    'format', (select r.format from app.report_runs r where r.organization_id = app.current_organization_id() and r.id = p_run_id),
    'download_token', v_message || '.' || app_private.capability_mac('report-download', v_message),
    'expires_at', app_private.iso_timestamp(to_timestamp(v_expires)));
end
$$;

/** A GET of a report download URL: the MAC, the expiry, the client's standing; then the run as that client sees it. */
create function api.report_download_begin(p_token text)
returns table (outcome text, run_id text, report_id text, format text, row_count integer, columns text[])
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_parts text[] := string_to_array(p_token, '.');
  v_message text;
  r app.report_runs;
begin
  outcome := 'not_found';
  if p_token !~ '^rrun_[A-Za-z0-9]{1,64}\.apic_[A-Za-z0-9]{1,64}\.[0-9]{1,12}\.[0-9a-f]{64}$' then
    return next;
    return;
  end if;
  v_message := array_to_string(v_parts[1:3], '.');
  if sha256(convert_to(v_parts[4], 'UTF8')) <> sha256(convert_to(app_private.capability_mac('report-download', v_message), 'UTF8')) then
    return next;
    return;
  end if;
  if v_parts[3]::bigint <= extract(epoch from now()) then
    outcome := 'expired';
  elsif not app_private.begin_delivery_context(v_parts[2]) then
    outcome := 'client_inactive';
  else
    select x.* into r from app.report_runs x join api.report_runs v on v.id = x.id where x.id = v_parts[1];
    if found and r.status = 'succeeded' and not r.results_purged and r.expires_at > now() then
      outcome := 'ok';
      run_id := r.id;
      report_id := r.report_id;
      format := r.format;
      row_count := r.row_count;
      columns := (select d.columns from app_private.report_definitions d where d.id = r.report_id);
    end if;
  end if;
  return next;
end
$$;
grant execute on function api.report_download_begin(text) to svc_runtime;

/** Rows a..b of a run the caller may read. */
create function api.report_rows(p_run_id text, p_from integer, p_to integer) returns table (n integer, data jsonb)
language sql stable security definer
set search_path = pg_catalog
as $$
  select x.n, x.data from app.report_results x
   where x.organization_id = (select app.current_organization_id()) and x.run_id = p_run_id and x.n between p_from and p_to
   order by x.n
$$;

do $$
declare
  r record;
begin
  for r in select p.oid::regprocedure as fn from pg_proc p join pg_namespace n on n.oid = p.pronamespace
            where n.nspname = 'api' and p.proname in ('report_get', 'report_run_create', 'report_run_get', 'report_results_ready',
                                                      'report_download_create', 'report_rows') loop
    execute format('alter function %s owner to svc_api', r.fn);
    execute format('grant execute on function %s to svc_runtime', r.fn);
  end loop;
end
$$;

/** 5. The worker (as the owner). The run executes in one transaction at REPEATABLE READ (one
 * snapshot, its start is data_as_of), under the requesting client's signed context, with the
 * client's standing and the definition's Roles checked then: a client that lost the Role gets a
 * failed run, not data. */
create function app_private.report_run_start(p_run_id text) returns boolean
language sql volatile
set search_path = pg_catalog
as $$
  with started as (update app.report_runs r set status = 'running', started_at = now() where r.id = p_run_id and r.status = 'queued' returning 1)
  select exists (select from started)
$$;

create function app_private.report_run_execute(p_run_id text, p_retention interval) returns text
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  r app.report_runs;
  d app_private.report_definitions;
  v_count integer;
begin
  select * into r from app.report_runs x where x.id = p_run_id for update;
  if not found or r.status <> 'running' then
    return coalesce(r.status, 'missing');
  end if;
  select * into d from app_private.report_definitions x where x.id = r.report_id;
  if not app_private.begin_delivery_context(r.client_id) then
    update app.report_runs x set status = 'failed', finished_at = now(),
           error = jsonb_build_object('code', 'REPORT_FAILED', 'detail', 'the API Client can no longer make requests')
     where x.id = p_run_id;
    return 'failed';
  end if;
  if not (d.required_roles && app.current_roles()) then
    perform app_private.set_context(null, null, null);
    update app.report_runs x set status = 'failed', finished_at = now(),
           error = jsonb_build_object('code', 'REPORT_FAILED', 'detail',
             format('the API Client no longer holds one of the Roles %s', array_to_string(d.required_roles, ', ')))
     where x.id = p_run_id;
    return 'failed';
  end if;
  begin
    execute format('insert into app.report_results (organization_id, run_id, n, data)
                    select $1, $2, (row_number() over ())::integer, x from %s($3) x', d.function_name)
      using r.organization_id, r.id, r.parameters;
    get diagnostics v_count = row_count;
  exception when others then
    perform app_private.set_context(null, null, null);
    update app.report_runs x set status = 'failed', finished_at = now(),
           error = jsonb_build_object('code', 'REPORT_FAILED', 'detail', 'the report could not be computed')
     where x.id = p_run_id;
    return 'failed';
  end;
  perform app_private.set_context(null, null, null);
  update app.report_runs x set status = 'succeeded', data_as_of = now(), finished_at = clock_timestamp(), row_count = v_count,
         expires_at = clock_timestamp() + p_retention
   where x.id = p_run_id;
  return 'succeeded';
end
$$;

/** Results past expires_at go (the run stays, answering REPORT_RUN_EXPIRED). */
create function control.purge_expired_report_results() returns integer
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  v_runs text[];
begin
  with gone as (update app.report_runs r set results_purged = true
                 where not r.results_purged and r.expires_at < now() returning r.organization_id, r.id)
  select array_agg(id) into v_runs from gone;
  delete from app.report_results x where x.run_id = any (coalesce(v_runs, '{}'));
  return coalesce(cardinality(v_runs), 0);
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
    else false end
$$;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'restore a backup taken before 20261125000400'); end $$;
