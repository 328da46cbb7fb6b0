-- migrate:up

/** The baseline, 10 of 16. Reports and BI access: report definitions, runs and results, the reporting views and BI logins.
 * Laid out by table: each table, then its keys and indexes, row security and policies, triggers
 * and their functions, and grants; then the area's views and commands. db/README.md, "The
 * baseline", says how it was made and proved equal to the migrations it replaced. */
set local check_function_bodies = false;
set local client_min_messages = warning;
set local search_path = '';

-- While this file runs, the owners of its functions and views may create in the schemas (`alter … owner to`
-- a role needs it when the migrating role is not a superuser); taken back at its end.
grant create on schema api, app, app_private, control, reporting, skills to svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- function app_private.bi_context()

create function app_private.bi_context(out organization_id text, out svc_roles text[]) returns record
    language plpgsql stable security definer parallel restricted
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if to_regclass('app_private.bi_logins') is null then
    return;
  end if;
  select b.organization_id, b.svc_roles into organization_id, svc_roles
    from app_private.bi_logins b where b.role_name = session_user;
end
$$;

alter function app_private.bi_context(out organization_id text, out svc_roles text[]) owner to svc_gate;

comment on function app_private.bi_context(out organization_id text, out svc_roles text[]) is 'The organization and Roles bound to the session''s BI login (app_private.bi_logins, by session_user); nothing for any other login, and nothing on a Citus worker, which has no BI logins. The context accessors (app.current_organization_id, app.current_roles) fall back to it when a session has no signed request context, so a BI login reads the reporting views of its one organization with its Roles. It runs as svc_gate because the bindings are a credential table granted to svc_gate alone, whose policy shows only the session''s own binding; a BI login cannot change its session_user, so it cannot borrow another binding.';

revoke all on function app_private.bi_context(out organization_id text, out svc_roles text[]) from public;
grant execute on function app_private.bi_context(out organization_id text, out svc_roles text[]) to svc_reporting;
grant execute on function app_private.bi_context(out organization_id text, out svc_roles text[]) to svc_runtime;
grant execute on function app_private.bi_context(out organization_id text, out svc_roles text[]) to svc_api;
grant execute on function app_private.bi_context(out organization_id text, out svc_roles text[]) to svc_owner;
grant execute on function app_private.bi_context(out organization_id text, out svc_roles text[]) to svc_worker;
grant execute on function app_private.bi_context(out organization_id text, out svc_roles text[]) to svc_admin;

-- function app_private.queue_report_run(text)

create function app_private.queue_report_run(p_run_id text) returns void
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  perform app_private.queue_job(v__organization_id, 'report_run', json_build_object('run_id', p_run_id),
                                'report_run:' || p_run_id, 3);
end
$$;

alter function app_private.queue_report_run(p_run_id text) owner to svc_owner;

comment on function app_private.queue_report_run(p_run_id text) is 'Queues the report_run job of run p_run_id (at most 3 attempts, job key report_run:<id>, so one job per run) for the request''s organization through app_private.queue_job: graphile-worker on one server, the organization''s job outbox on Citus, in the same transaction as the run''s insert. It runs as svc_owner because the queue and app_private.queue_job are not svc_api''s to use; the organization is the signed context''s, and queue_job refuses a job without one (SV500 JOB_WITHOUT_ORGANIZATION).';

revoke all on function app_private.queue_report_run(p_run_id text) from public;
grant execute on function app_private.queue_report_run(p_run_id text) to svc_api;
grant execute on function app_private.queue_report_run(p_run_id text) to svc_worker;
grant execute on function app_private.queue_report_run(p_run_id text) to svc_admin;

-- function app_private.report_run_execute(text, text, interval)

create function app_private.report_run_execute(p_organization_id text, p_run_id text, p_retention interval) returns text
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  r app.report_runs;
  d app_private.report_definitions;
  v_count integer;
  v_finished timestamptz;
begin
  select * into r from app.report_runs x where x.organization_id = p_organization_id and x.id = p_run_id for update;
  if not found or r.status <> 'running' then
    return coalesce(r.status, 'missing');
  end if;
  select * into d from app_private.report_definitions x where x.id = r.report_id;
  if not app_private.begin_delivery_context(p_organization_id, r.client_id) then
    update app.report_runs x set status = 'failed', finished_at = now(),
           error = jsonb_build_object('code', 'REPORT_FAILED', 'detail', 'the API Client can no longer make requests')
     where x.organization_id = p_organization_id and x.id = p_run_id;
    return 'failed';
  end if;
  if not (d.required_roles && app.current_roles()) then
    perform app_private.set_context(null, null, null);
    update app.report_runs x set status = 'failed', finished_at = now(),
           error = jsonb_build_object('code', 'REPORT_FAILED', 'detail',
             format('the API Client no longer holds one of the Roles %s', array_to_string(d.required_roles, ', ')))
     where x.organization_id = p_organization_id and x.id = p_run_id;
    return 'failed';
  end if;
  begin
    execute format('insert into app.report_results (organization_id, run_id, n, data)
                    select $1, $2, (row_number() over ())::integer, x from %s($3) x', d.function_name)
      using p_organization_id, r.id, r.parameters;
    get diagnostics v_count = row_count;
  exception when others then
    perform app_private.set_context(null, null, null);
    update app.report_runs x set status = 'failed', finished_at = now(),
           error = jsonb_build_object('code', 'REPORT_FAILED', 'detail', 'the report could not be computed')
     where x.organization_id = p_organization_id and x.id = p_run_id;
    return 'failed';
  end;
  perform app_private.set_context(null, null, null);
  -- Values, not clock_timestamp(): Citus takes no volatile function in a write.
  v_finished := clock_timestamp();
  update app.report_runs x set status = 'succeeded', data_as_of = now(), finished_at = v_finished, row_count = v_count,
         expires_at = v_finished + p_retention
   where x.organization_id = p_organization_id and x.id = p_run_id;
  return 'succeeded';
end
$_$;

alter function app_private.report_run_execute(p_organization_id text, p_run_id text, p_retention interval) owner to svc_owner;

revoke all on function app_private.report_run_execute(p_organization_id text, p_run_id text, p_retention interval) from public;
grant execute on function app_private.report_run_execute(p_organization_id text, p_run_id text, p_retention interval) to svc_worker;
grant execute on function app_private.report_run_execute(p_organization_id text, p_run_id text, p_retention interval) to svc_admin;

-- function app_private.report_run_start(text, text)

create function app_private.report_run_start(p_organization_id text, p_run_id text) returns boolean
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  update app.report_runs r set status = 'running', started_at = now()
   where r.organization_id = p_organization_id and r.id = p_run_id and r.status = 'queued';
  return found;
end
$$;

alter function app_private.report_run_start(p_organization_id text, p_run_id text) owner to svc_owner;

revoke all on function app_private.report_run_start(p_organization_id text, p_run_id text) from public;
grant execute on function app_private.report_run_start(p_organization_id text, p_run_id text) to svc_worker;
grant execute on function app_private.report_run_start(p_organization_id text, p_run_id text) to svc_admin;

-- table app_private.report_definitions

create table app_private.report_definitions (
    id text not null,
    name text not null,
    description text not null,
    required_roles text[] not null,
    parameters_schema jsonb not null,
    formats text[] not null,
    version integer not null,
    function_name text not null,
    columns text[] not null,
    numeric_columns text[] default '{}'::text[] not null,
    constraint report_definitions_id_format check ((id ~ '^rpt_[a-z_]+$'::text)),
    constraint report_definitions_numeric_columns_are_columns check ((numeric_columns <@ columns))
);

alter table only app_private.report_definitions
    add constraint report_definitions_pkey primary key (id);

grant select on table app_private.report_definitions to svc_api;
grant select,insert,delete,update on table app_private.report_definitions to svc_owner;
grant select,insert,delete,update on table app_private.report_definitions to svc_worker;
grant select,insert,delete,update on table app_private.report_definitions to svc_admin;
grant select on table app_private.report_definitions to svc_gate;

-- table app.report_runs

create table app.report_runs (
    organization_id text not null,
    id text default app_private.new_id('rrun'::text) not null,
    report_id text not null,
    definition_version integer not null,
    client_id text not null,
    parameters jsonb not null,
    format text not null,
    status text default 'queued'::text not null,
    timezone text not null,
    data_as_of timestamp with time zone,
    row_count integer,
    error jsonb,
    results_purged boolean default false not null,
    expires_at timestamp with time zone,
    created_at timestamp with time zone default now() not null,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    constraint report_runs_failed_has_error check (((status = 'failed'::text) = (error is not null))),
    constraint report_runs_format_valid check ((format = any (array['json'::text, 'csv'::text]))),
    constraint report_runs_status_valid check ((status = any (array['queued'::text, 'running'::text, 'succeeded'::text, 'failed'::text])))
);

alter table only app.report_runs force row level security;

alter table only app.report_runs
    add constraint report_runs_pkey primary key (organization_id, id);

create index report_runs_expiry on app.report_runs using btree (expires_at) where (not results_purged);

create index report_runs_id on app.report_runs using btree (id);

alter table only app.report_runs
    add constraint report_runs_organization_id_client_id_fkey foreign key (organization_id, client_id) references app.api_clients(organization_id, id);

alter table only app.report_runs
    add constraint report_runs_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table only app.report_runs
    add constraint report_runs_report_id_fkey foreign key (report_id) references app_private.report_definitions(id);

alter table app.report_runs enable row level security;

create policy "Clients request report runs" on app.report_runs for insert to svc_api with check ((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id())));

comment on policy "Clients request report runs" on app.report_runs is 'svc_api may insert a report run only for the request''s signed organization and with the calling API Client as its requester (client_id): a client cannot run a report in another organization or for another client. tg_report_runs__lifecycle requires the new run to be queued.';

create policy "Clients see their own report runs" on app.report_runs for select to svc_api using ((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id())));

comment on policy "Clients see their own report runs" on app.report_runs is 'svc_api may read only the report runs of the request''s signed organization that its API Client requested: a run and its results belong to the client that asked (REPORT_RUN_NOT_FOUND for any other). With no valid context it sees nothing.';

create policy "Commands act in the request's organization" on app.report_runs to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.report_runs is 'svc_owner, svc_worker and svc_admin, every command: the report runs of the request''s signed organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The worker starts, completes or fails runs and the retention purge marks results purged, across organizations; a definer running in a request cannot reach another organization''s runs even with a wrong WHERE.';

create policy "The gate reads report runs a link opened" on app.report_runs for select to svc_gate using (organization_id = (select app.current_organization_id()));

comment on policy "The gate reads report runs a link opened" on app.report_runs is 'svc_gate may read report runs only of the organization of the signed request context: in api.report_download_begin, once the link''s signature held and app_private.begin_delivery_context opened its client''s context. Before that, or with a forged or copied context, the gate sees no report run.';

create function app_private.tg_report_runs__emit() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if new.status <> old.status and new.status in ('succeeded', 'failed') then
    perform app_private.emit_event(new.organization_id, 'report_run.' || new.status, 'report_run', new.id, 1);
  end if;
  return null;
end
$$;

alter function app_private.tg_report_runs__emit() owner to svc_owner;

comment on function app_private.tg_report_runs__emit() is 'AFTER UPDATE trigger on app.report_runs: when a run''s status becomes succeeded or failed, it writes the webhook event report_run.succeeded or report_run.failed (app_private.emit_event), delivered only to the client that requested the run, the only one that can see it. It runs as svc_owner, which owns the outbox writer, and the event names the run''s own organization, within svc_owner''s policy.';

create function app_private.tg_report_runs__lifecycle() returns trigger
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.tg_report_runs__lifecycle() owner to svc_owner;

comment on function app_private.tg_report_runs__lifecycle() is 'BEFORE INSERT OR UPDATE trigger on app.report_runs, for every writer: a run starts queued; its request (organization, id, report, definition version, client, parameters, format, created_at) never changes; its status moves only queued to running, running to succeeded or failed, or queued to failed; purged results never come back. Any violation raises SVC09 CONFLICT.';

create trigger _100_lifecycle before insert or update on app.report_runs for each row execute function app_private.tg_report_runs__lifecycle();

create trigger _950_emit_event after update on app.report_runs for each row execute function app_private.tg_report_runs__emit();

grant select,insert on table app.report_runs to svc_api;
grant select,insert,delete,update on table app.report_runs to svc_owner;
grant select,insert,delete,update on table app.report_runs to svc_worker;
grant select,insert,delete,update on table app.report_runs to svc_admin;
grant select on table app.report_runs to svc_gate;

revoke all on function app_private.tg_report_runs__emit() from public;
grant execute on function app_private.tg_report_runs__emit() to svc_worker;
grant execute on function app_private.tg_report_runs__emit() to svc_admin;

revoke all on function app_private.tg_report_runs__lifecycle() from public;
grant execute on function app_private.tg_report_runs__lifecycle() to svc_worker;
grant execute on function app_private.tg_report_runs__lifecycle() to svc_admin;

-- table app.report_results

create table app.report_results (
    organization_id text not null,
    run_id text not null,
    n integer not null,
    data jsonb not null,
    client_id text not null
);

alter table only app.report_results force row level security;

alter table only app.report_results
    add constraint report_results_pkey primary key (organization_id, run_id, n);

alter table only app.report_results
    add constraint report_results_organization_id_run_id_fkey foreign key (organization_id, run_id) references app.report_runs(organization_id, id) on delete cascade;

alter table app.report_results enable row level security;

create policy "Commands act in the request's organization" on app.report_results to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.report_results is 'svc_owner, svc_worker and svc_admin, every command: the report results of the request''s signed organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The worker writes a run''s rows (app_private.report_run_execute) and the retention purge deletes expired ones, across organizations; a definer running in a request cannot reach another organization''s results even with a wrong WHERE.';

create policy "Results are readable with their run" on app.report_results for select to svc_api using ((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id())));

comment on policy "Results are readable with their run" on app.report_results is 'svc_api may read result rows only in the request''s signed organization and only when their client_id is the calling API Client''s: the results of the client''s own report runs, as "Clients see their own report runs" shows the runs. client_id is copied from the run by tg__client_of_parent when a row is inserted, so the policy judges the row alone, without reading app.report_runs.';

create trigger _010_client_of_parent before insert or update of client_id on app.report_results for each row execute function app_private.tg__client_of_parent();

grant select on table app.report_results to svc_api;
grant select,insert,delete,update on table app.report_results to svc_owner;
grant select,insert,delete,update on table app.report_results to svc_worker;
grant select,insert,delete,update on table app.report_results to svc_admin;

-- table app_private.bi_logins

create table app_private.bi_logins (
    organization_id text not null,
    role_name text not null,
    svc_roles text[] not null,
    created_at timestamp with time zone default now() not null,
    constraint bi_logins_role_name_format check ((role_name ~ '^svc_bi_[a-z0-9]{12}$'::text)),
    constraint bi_logins_roles_valid check (((svc_roles <@ '{member,manager,finance,hr}'::text[]) and (cardinality(svc_roles) > 0)))
);

alter table only app_private.bi_logins force row level security;

alter table only app_private.bi_logins
    add constraint bi_logins_pkey primary key (organization_id, role_name);

create index bi_logins_role on app_private.bi_logins using btree (role_name);

alter table only app_private.bi_logins
    add constraint bi_logins_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table app_private.bi_logins enable row level security;

create policy "A BI session reads its own binding" on app_private.bi_logins for select to svc_gate using (role_name = session_user);

comment on policy "A BI session reads its own binding" on app_private.bi_logins is 'svc_gate may read only the binding whose role_name is the session''s login (session_user): app_private.bi_context learns a BI session''s organization and Roles and nothing of any other login''s. A BI login cannot change its session_user, so the binding cannot be forged, and a session of any other login finds no row.';

grant select on table app_private.bi_logins to svc_gate;

-- view api.report_results

create view api.report_results as
 select x.organization_id,
    x.run_id,
    x.n,
    (x.n)::text as id,
    x.data as doc
   from app.report_results x;

alter view api.report_results owner to svc_api;

grant select on table api.report_results to svc_runtime;
grant select on table api.report_results to svc_owner;

-- view api.report_runs

create view api.report_runs as
 select r.organization_id,
    r.id,
    r.report_id,
    r.status,
    r.created_at,
    r.expires_at,
    r.results_purged,
    r.error,
    jsonb_build_object('object', 'report_run', 'id', r.id, 'report_id', r.report_id, 'definition_version', r.definition_version, 'status', r.status, 'parameters', r.parameters, 'format', r.format, 'timezone', r.timezone, 'data_as_of', app_private.iso_timestamp(r.data_as_of), 'row_count', r.row_count, 'error', r.error, 'expires_at', app_private.iso_timestamp(r.expires_at), 'created_at', app_private.iso_timestamp(r.created_at), 'started_at', app_private.iso_timestamp(r.started_at), 'finished_at', app_private.iso_timestamp(r.finished_at)) as doc,
    null::integer as version
   from app.report_runs r;

alter view api.report_runs owner to svc_api;

grant select on table api.report_runs to svc_runtime;
grant select on table api.report_runs to svc_owner;
grant select on table api.report_runs to svc_gate;

-- view api.reports

create view api.reports with (security_barrier='true') as
 select d.id,
    d.required_roles,
    jsonb_build_object('object', 'report_definition', 'id', d.id, 'name', d.name, 'description', d.description, 'required_roles', to_jsonb(d.required_roles), 'parameters_schema', d.parameters_schema, 'formats', to_jsonb(d.formats), 'columns', to_jsonb(d.columns), 'version', d.version) as doc,
    d.version,
    d.id as sort_id
   from app_private.report_definitions d
  where (d.required_roles && (select app.current_roles()));

alter view api.reports owner to svc_api;

grant select on table api.reports to svc_runtime;
grant select on table api.reports to svc_owner;

-- view reporting.approvals

create view reporting.approvals with (security_invoker='false', security_barrier='true') as
 select v.id as approval_id,
    (v.doc ->> 'type'::text) as type,
    (v.doc ->> 'status'::text) as status,
    (v.doc #>> '{resource,type}'::text[]) as resource_type,
    (v.doc #>> '{resource,id}'::text[]) as resource_id,
    ((v.doc ->> 'requested_at'::text))::timestamp with time zone as requested_at,
    ((v.doc ->> 'decided_at'::text))::timestamp with time zone as decided_at,
    (v.doc ->> 'decision'::text) as decision
   from api.approvals v;

alter view reporting.approvals owner to svc_api;

grant select on table reporting.approvals to svc_reporting;

-- view reporting.invoices

create view reporting.invoices with (security_invoker='false', security_barrier='true') as
 select v.id as invoice_id,
    v.number,
    v.status,
    v.customer_id,
    v.currency,
    v.issue_date,
    v.due_date,
    ((v.doc ->> 'total'::text))::numeric as total,
    ((v.doc ->> 'amount_paid'::text))::numeric as amount_paid,
    ((v.doc ->> 'amount_due'::text))::numeric as amount_due
   from api.invoices v;

alter view reporting.invoices owner to svc_api;

grant select on table reporting.invoices to svc_reporting;

-- view reporting.members

create view reporting.members with (security_invoker='false', security_barrier='true') as
 select v.id as member_id,
    (v.doc ->> 'display_name'::text) as display_name,
    (v.doc ->> 'status'::text) as status,
    (v.doc ->> 'job_title'::text) as job_title
   from api.members v;

alter view reporting.members owner to svc_api;

grant select on table reporting.members to svc_reporting;

-- view reporting.payments

create view reporting.payments with (security_invoker='false', security_barrier='true') as
 select y.id as payment_id,
    y.invoice_id,
    y.amount,
    y.currency,
    y.received_date,
    y.method
   from app.payments y;

alter view reporting.payments owner to svc_api;

grant select on table reporting.payments to svc_reporting;

-- view reporting.projects

create view reporting.projects with (security_invoker='false', security_barrier='true') as
 select v.id as project_id,
    (v.doc ->> 'code'::text) as code,
    (v.doc ->> 'name'::text) as name,
    (v.doc ->> 'status'::text) as status,
    ((v.doc ->> 'start_date'::text))::date as start_date,
    ((v.doc ->> 'end_date'::text))::date as end_date,
    (v.doc ->> 'customer_id'::text) as customer_id,
    (v.doc ->> 'manager_member_id'::text) as manager_member_id,
    ((v.doc ->> 'created_at'::text))::timestamp with time zone as created_at,
    ((v.doc ->> 'updated_at'::text))::timestamp with time zone as updated_at
   from api.projects v;

alter view reporting.projects owner to svc_api;

grant select on table reporting.projects to svc_reporting;

-- view reporting.tasks

create view reporting.tasks with (security_invoker='false', security_barrier='true') as
 select v.id as task_id,
    v.project_id,
    (v.doc ->> 'name'::text) as name,
    (v.doc ->> 'status'::text) as status,
    (v.doc ->> 'priority'::text) as priority,
    ((v.doc ->> 'due_at'::text))::timestamp with time zone as due_at,
    ((v.doc ->> 'completed_at'::text))::timestamp with time zone as completed_at,
    ((v.doc ->> 'archived'::text))::boolean as archived,
    array( select jsonb_array_elements_text(coalesce((v.doc -> 'assignee_member_ids'::text), '[]'::jsonb)) as jsonb_array_elements_text) as assignee_member_ids,
    ((v.doc ->> 'created_at'::text))::timestamp with time zone as created_at
   from api.tasks v;

alter view reporting.tasks owner to svc_api;

grant select on table reporting.tasks to svc_reporting;

-- view reporting.tickets

create view reporting.tickets with (security_invoker='false', security_barrier='true') as
 select v.id as ticket_id,
    (v.doc ->> 'number'::text) as number,
    (v.doc ->> 'subject'::text) as subject,
    v.status,
    v.priority,
    v.assignee_member_id,
    v.project_id,
    v.created_at,
    ((v.doc ->> 'resolved_at'::text))::timestamp with time zone as resolved_at
   from api.tickets v;

alter view reporting.tickets owner to svc_api;

grant select on table reporting.tickets to svc_reporting;

-- view reporting.time_entries

create view reporting.time_entries with (security_invoker='false', security_barrier='true') as
 select v.id as time_entry_id,
    v.member_id,
    v.project_id,
    (v.doc ->> 'task_id'::text) as task_id,
    v.work_date,
    ((v.doc ->> 'minutes'::text))::integer as minutes,
    v.billable,
    v.status
   from api.time_entries v
  where (v.deleted_at is null);

alter view reporting.time_entries owner to svc_api;

grant select on table reporting.time_entries to svc_reporting;

-- function api.report_download_begin(text)

create function api.report_download_begin(p_token text) returns table(outcome text, run_id text, report_id text, format text, row_count integer, columns text[], numeric_columns text[])
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    set "svc.gate_organization" to ''
    as $$
declare
  l record;
  r app.report_runs;
begin
  perform app_private.refuse_on_coordinator('api.report_download_begin(text)');
  outcome := 'not_found';
  select * into l from app_private.download_link(p_token, 'rrun', 'report-download');
  if l.id is null or l.organization_id is null then
    return next;
    return;
  end if;
  if l.expires <= extract(epoch from now()) then
    outcome := 'expired';
  elsif not app_private.begin_delivery_context(l.organization_id, l.client_id) then
    outcome := 'client_inactive';
  else
    -- Only a run the client may read now (api.report_runs: its own, with the report's Roles).
    perform from api.report_runs(l.id) v where v.id = l.id;
    if found then
      select x.* into r from app.report_runs x where x.organization_id = l.organization_id and x.id = l.id;
    end if;
    if r.id is not null and r.status = 'succeeded' and not r.results_purged and r.expires_at > now() then
      outcome := 'ok';
      run_id := r.id;
      report_id := r.report_id;
      format := r.format;
      row_count := r.row_count;
      select d.columns, d.numeric_columns into columns, numeric_columns
        from app_private.report_definitions d where d.id = r.report_id;
    end if;
  end if;
  return next;
end
$$;

alter function api.report_download_begin(p_token text) owner to svc_gate;

comment on function api.report_download_begin(p_token text) is 'The GET of a report download link, before any request context exists: refused on a Citus coordinator (SV500 NOT_IN_ITS_WORKER); not_found unless the link''s signature holds (app_private.download_link), expired past its expiry, client_inactive unless its API Client may still make requests (app_private.begin_delivery_context, which then signs that client''s context); ok only for a succeeded, unexpired run the client may read now (api.report_runs), with its format, row count and columns. It runs as svc_gate, the credential path''s owner, because svc_runtime may not read report runs or the report catalogue; svc_gate''s policies show only the organization the link''s signature names (svc.gate_organization, its own setting, restored on return) and then the opened context''s report runs.';

revoke all on function api.report_download_begin(p_token text) from public;
grant execute on function api.report_download_begin(p_token text) to svc_runtime;
grant execute on function api.report_download_begin(p_token text) to svc_owner;

-- function api.report_download_create(text, text, integer)

create function api.report_download_create(p_report_id text, p_run_id text, p_lifetime_seconds integer) returns jsonb
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  v_expires bigint := extract(epoch from now())::bigint + p_lifetime_seconds;
  v_message text := p_run_id || '.' || v__organization_id || '.' || app.current_client_id() || '.' || v_expires;
begin
  perform api.report_results_ready(p_report_id, p_run_id);
  return jsonb_build_object('object', 'report_download', 'report_id', p_report_id, 'run_id', p_run_id,
    'format', (select r.format from app.report_runs r where r.organization_id = v__organization_id and r.id = p_run_id),
    'download_token', v_message || '.' || app_private.capability_mac('report-download', v_message),
    'expires_at', app_private.iso_timestamp(to_timestamp(v_expires)));
end
$$;

alter function api.report_download_create(p_report_id text, p_run_id text, p_lifetime_seconds integer) owner to svc_api;

comment on function api.report_download_create(p_report_id text, p_run_id text, p_lifetime_seconds integer) is 'createReportDownload: once the client''s run has results to read (api.report_results_ready), a short-lived link token naming the run, the request''s organization, the client and an expiry p_lifetime_seconds ahead, signed with app_private.capability_mac (purpose report-download). It runs as svc_api because svc_runtime may neither read report runs nor sign capabilities; the run is read under svc_api''s policies in the request''s signed organization, and the token names that organization and client.';

revoke all on function api.report_download_create(p_report_id text, p_run_id text, p_lifetime_seconds integer) from public;
grant execute on function api.report_download_create(p_report_id text, p_run_id text, p_lifetime_seconds integer) to svc_runtime;
grant execute on function api.report_download_create(p_report_id text, p_run_id text, p_lifetime_seconds integer) to svc_owner;
grant execute on function api.report_download_create(p_report_id text, p_run_id text, p_lifetime_seconds integer) to svc_worker;

-- function api.report_get(text)

create function api.report_get(p_id text) returns table(doc jsonb, version integer)
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  d app_private.report_definitions;
begin
  select * into d from app_private.report_definitions x where x.id = p_id;
  if not found or v__organization_id is null then
    perform app_private.raise('SVN04', 'REPORT_NOT_FOUND', format('no report %s', p_id));
  end if;
  if not (d.required_roles && app.current_roles()) then
    perform app_private.raise('SVR04', 'REPORT_ROLE_REQUIRED',
      format('%s needs one of the Roles %s', p_id, array_to_string(d.required_roles, ', ')));
  end if;
  return query select v.doc, v.version from api.reports(p_id) v where v.id = p_id;
end
$$;

alter function api.report_get(p_id text) owner to svc_api;

comment on function api.report_get(p_id text) is 'getReport: the report definition as the caller sees it (api.reports); SVN04 REPORT_NOT_FOUND when there is none or no request organization, SVR04 REPORT_ROLE_REQUIRED when the client holds none of its required_roles (one of them is enough). It runs as svc_api because the report catalogue in app_private is not granted to svc_runtime; the definitions are the same for every organization, and the Roles are the signed context''s.';

revoke all on function api.report_get(p_id text) from public;
grant execute on function api.report_get(p_id text) to svc_runtime;
grant execute on function api.report_get(p_id text) to svc_owner;
grant execute on function api.report_get(p_id text) to svc_worker;

-- function api.report_results(text)

create function api.report_results(p_id text default null::text) returns setof api.report_results
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.report_results v;
    else
      return query select * from api.report_results v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.report_results', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;

alter function api.report_results(p_id text) owner to svc_api;

comment on function api.report_results(p_id text) is 'The rows of view api.report_results for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

revoke all on function api.report_results(p_id text) from public;
grant execute on function api.report_results(p_id text) to svc_runtime;
grant execute on function api.report_results(p_id text) to svc_owner;
grant execute on function api.report_results(p_id text) to svc_worker;

-- function api.report_results_ready(text, text)

create function api.report_results_ready(p_report_id text, p_run_id text) returns boolean
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  r app.report_runs;
begin
  perform api.report_run_get(p_report_id, p_run_id);
  select * into r from app.report_runs x where x.organization_id = v__organization_id and x.id = p_run_id;
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

alter function api.report_results_ready(p_report_id text, p_run_id text) owner to svc_api;

comment on function api.report_results_ready(p_report_id text, p_run_id text) is 'True when the calling client''s run p_run_id of report p_report_id has results to read (getReportResults, createReportDownload): after api.report_run_get''s checks, SVC09 REPORT_FAILED for a failed run, SVC09 CONFLICT while it is queued or running, SVC09 REPORT_RUN_EXPIRED once its results were purged or passed expires_at. It runs as svc_api because svc_runtime may not read app.report_runs; the run is read in the request''s organization under "Clients see their own report runs".';

revoke all on function api.report_results_ready(p_report_id text, p_run_id text) from public;
grant execute on function api.report_results_ready(p_report_id text, p_run_id text) to svc_runtime;
grant execute on function api.report_results_ready(p_report_id text, p_run_id text) to svc_owner;
grant execute on function api.report_results_ready(p_report_id text, p_run_id text) to svc_worker;

-- function api.report_rows(text, integer, integer)

create function api.report_rows(p_run_id text, p_from integer, p_to integer) returns table(n integer, data jsonb)
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
begin
  return query select x.n, x.data from app.report_results x
   where x.organization_id = v__organization_id and x.run_id = p_run_id and x.n between p_from and p_to
   order by x.n;
end
$$;

alter function api.report_rows(p_run_id text, p_from integer, p_to integer) owner to svc_api;

comment on function api.report_rows(p_run_id text, p_from integer, p_to integer) is 'Rows p_from to p_to of run p_run_id''s results, in order, for the report download stream after api.report_download_begin has checked the link and opened its client''s context in the same statement. It runs as svc_api because svc_runtime may not read app.report_results; the read names the context''s organization and "Results are readable with their run" shows only the rows of that organization''s runs of the calling client, so without a valid context it returns nothing.';

revoke all on function api.report_rows(p_run_id text, p_from integer, p_to integer) from public;
grant execute on function api.report_rows(p_run_id text, p_from integer, p_to integer) to svc_runtime;
grant execute on function api.report_rows(p_run_id text, p_from integer, p_to integer) to svc_owner;
grant execute on function api.report_rows(p_run_id text, p_from integer, p_to integer) to svc_worker;

-- function api.report_run_create(text, jsonb, text)

create function api.report_run_create(p_report_id text, p_parameters jsonb, p_format text) returns jsonb
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  d app_private.report_definitions;
  v_id text;
  v_timezone text;
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
  -- Read first: Citus takes no subquery in the values of an INSERT.
  select o.timezone into v_timezone from app.organizations o where o.id = v__organization_id;
  insert into app.report_runs (organization_id, report_id, definition_version, client_id, parameters, format, timezone)
  values (v__organization_id, d.id, d.version, app.current_client_id(), p_parameters, p_format,
          v_timezone)
  returning id into v_id;
  perform app_private.queue_report_run(v_id);
  return (select v.doc from api.report_runs(v_id) v where v.id = v_id);
end
$$;

alter function api.report_run_create(p_report_id text, p_parameters jsonb, p_format text) owner to svc_api;

comment on function api.report_run_create(p_report_id text, p_parameters jsonb, p_format text) is 'createReportRun: the definition and the client''s Roles (api.report_get), a format the definition offers (SVV22 EXPORT_FORMAT_NOT_SUPPORTED), a from/to range with to on or after from and at most three years later, which bounds a run''s work (SVV22 INVALID_REPORT_PARAMETERS; the API validated the rest against parameters_schema); then a queued run with the definition''s version and the organization''s timezone, and its job. It runs as svc_api because svc_runtime may not read the catalogue or insert report runs; "Clients request report runs" admits only a row of the signed context''s organization and client, and tg_report_runs__lifecycle only a queued one.';

revoke all on function api.report_run_create(p_report_id text, p_parameters jsonb, p_format text) from public;
grant execute on function api.report_run_create(p_report_id text, p_parameters jsonb, p_format text) to svc_runtime;
grant execute on function api.report_run_create(p_report_id text, p_parameters jsonb, p_format text) to svc_owner;
grant execute on function api.report_run_create(p_report_id text, p_parameters jsonb, p_format text) to svc_worker;

-- function api.report_run_get(text, text)

create function api.report_run_get(p_report_id text, p_run_id text) returns table(doc jsonb, version integer)
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  perform api.report_get(p_report_id);
  if not exists (select from api.report_runs(p_run_id) v where v.id = p_run_id and v.report_id = p_report_id) then
    perform app_private.raise('SVN04', 'REPORT_RUN_NOT_FOUND', format('no run %s of %s by your client', p_run_id, p_report_id));
  end if;
  return query select v.doc, v.version from api.report_runs(p_run_id) v where v.id = p_run_id;
end
$$;

alter function api.report_run_get(p_report_id text, p_run_id text) owner to svc_api;

comment on function api.report_run_get(p_report_id text, p_run_id text) is 'getReportRun: after getReport''s checks (api.report_get), the calling client''s run p_run_id of report p_report_id as api.report_runs shows it; SVN04 REPORT_RUN_NOT_FOUND for another report''s run or any run the client did not request. It runs as svc_api because svc_runtime may not read the catalogue or report runs, and svc_api''s policy shows only the runs of the request''s signed organization and client.';

revoke all on function api.report_run_get(p_report_id text, p_run_id text) from public;
grant execute on function api.report_run_get(p_report_id text, p_run_id text) to svc_runtime;
grant execute on function api.report_run_get(p_report_id text, p_run_id text) to svc_owner;
grant execute on function api.report_run_get(p_report_id text, p_run_id text) to svc_worker;

-- function api.report_runs(text)

create function api.report_runs(p_id text default null::text) returns setof api.report_runs
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.report_runs v;
    else
      return query select * from api.report_runs v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.report_runs', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;

alter function api.report_runs(p_id text) owner to svc_api;

comment on function api.report_runs(p_id text) is 'The rows of view api.report_runs for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

revoke all on function api.report_runs(p_id text) from public;
grant execute on function api.report_runs(p_id text) to svc_runtime;
grant execute on function api.report_runs(p_id text) to svc_owner;
grant execute on function api.report_runs(p_id text) to svc_worker;
grant execute on function api.report_runs(p_id text) to svc_gate;

-- function api.reports(text)

create function api.reports(p_id text default null::text) returns setof api.reports
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.reports v;
    else
      return query select * from api.reports v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.reports', v_organization_id) || ') v where true and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;

alter function api.reports(p_id text) owner to svc_api;

comment on function api.reports(p_id text) is 'The rows of view api.reports for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

revoke all on function api.reports(p_id text) from public;
grant execute on function api.reports(p_id text) to svc_runtime;
grant execute on function api.reports(p_id text) to svc_owner;
grant execute on function api.reports(p_id text) to svc_worker;

-- function control.purge_expired_report_results()

create function control.purge_expired_report_results() returns integer
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function control.purge_expired_report_results() owner to svc_owner;

revoke all on function control.purge_expired_report_results() from public;
grant execute on function control.purge_expired_report_results() to svc_worker;

-- function control.reporting_grant(text, text[], text)

create function control.reporting_grant(p_org text, p_roles text[], p_password_verifier text) returns table(role_name text)
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  v_role text := 'svc_bi_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12);
begin
  perform app_private.require_found(exists (select from app.organizations o where o.id = p_org), 'ORGANIZATION_NOT_FOUND', p_org);
  -- PostgreSQL's own form (RFC 5803): SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>.
  if p_password_verifier is null
     or p_password_verifier !~ '^SCRAM-SHA-256\$[1-9][0-9]{3,6}:[A-Za-z0-9+/]+=*\$[A-Za-z0-9+/]{43}=:[A-Za-z0-9+/]{43}=$' then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'the BI login''s password is given as a SCRAM-SHA-256 verifier, never as text');
  end if;
  insert into app_private.bi_logins (organization_id, role_name, svc_roles) values (p_org, v_role, p_roles);
  execute format('create role %I login password %L inherit nosuperuser nobypassrls nocreatedb nocreaterole connection limit 5 in role svc_reporting',
                 v_role, p_password_verifier);
  execute format('alter role %I set default_transaction_read_only = on', v_role);
  execute format('alter role %I set statement_timeout = %L', v_role, '30s');
  execute format('alter role %I set search_path = reporting', v_role);
  role_name := v_role;
  return next;
end
$_$;

comment on function control.reporting_grant(p_org text, p_roles text[], p_password_verifier text) is 'A read-only login for a BI tool, bound to one organization and Roles; its password arrives as a SCRAM-SHA-256 verifier computed by svc-admin.';

revoke all on function control.reporting_grant(p_org text, p_roles text[], p_password_verifier text) from public;

-- function control.reporting_revoke(text)

create function control.reporting_revoke(p_role text) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  delete from app_private.bi_logins b where b.role_name = p_role;
  perform app_private.require_found(found, 'BI_LOGIN_NOT_FOUND', p_role);
  perform pg_terminate_backend(a.pid) from pg_stat_activity a where a.usename = p_role;
  execute format('drop role if exists %I', p_role);
end
$$;

revoke all on function control.reporting_revoke(p_role text) from public;

-- function reporting.invoice_aging(jsonb)

create function reporting.invoice_aging(p jsonb) returns setof jsonb
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  return query
  select jsonb_build_object('customer_id', o.customer_id, 'customer_name', c.name, 'currency', o.currency,
           'due_0_30', app_private.money_text(coalesce(sum(o.due) filter (where o.age <= 30), 0), max(o.scale)),
           'due_31_60', app_private.money_text(coalesce(sum(o.due) filter (where o.age between 31 and 60), 0), max(o.scale)),
           'due_61_90', app_private.money_text(coalesce(sum(o.due) filter (where o.age between 61 and 90), 0), max(o.scale)),
           'due_over_90', app_private.money_text(coalesce(sum(o.due) filter (where o.age > 90), 0), max(o.scale)),
           'total_due', app_private.money_text(sum(o.due), max(o.scale)), 'invoices', count(*))
    from (select i.customer_id, i.currency, i.scale, i.total - i.amount_paid as due,
                 coalesce((p ->> 'as_of')::date, current_date) - coalesce(i.due_date, i.issue_date, i.created_at::date) as age
            from app.invoices i
           where i.organization_id = v__organization_id and i.status = 'sent' and i.total > i.amount_paid) o
    join app.customers c on c.organization_id = v__organization_id and c.id = o.customer_id
   group by o.customer_id, c.name, o.currency
   order by c.name, o.customer_id, o.currency;
end
$$;

alter function reporting.invoice_aging(p jsonb) owner to svc_api;

comment on function reporting.invoice_aging(p jsonb) is 'The rpt_invoice_aging report: per customer and currency, the amounts due (total less amount paid) on sent invoices with an open balance, by days past the due date (else the issue or creation date) as of p.as_of (default today): 0 to 30 (including not yet due), 31 to 60, 61 to 90, over 90, with the total and the invoice count; amounts are decimal strings at the currency''s scale (app_private.money_text), never floats. The worker runs it under the requesting client''s signed context when the run executes; it runs as svc_api, not as the worker (whose operator session sees every organization), so that svc_api''s policies (invoices for managers and finance) judge the client''s Roles then, and every table read names that organization.';

revoke all on function reporting.invoice_aging(p jsonb) from public;
grant execute on function reporting.invoice_aging(p jsonb) to svc_worker;

-- function reporting.member_utilization(jsonb)

create function reporting.member_utilization(p jsonb) returns setof jsonb
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
  v_days integer;
begin
  select count(*)::integer into v_days from generate_series((p ->> 'from')::date, (p ->> 'to')::date, interval '1 day') d
   where extract(isodow from d) < 6;
  return query
  select jsonb_build_object('member_id', m.id, 'display_name', m.display_name,
           'worked_minutes', coalesce(w.minutes, 0), 'billable_minutes', coalesce(w.billable, 0),
           'capacity_minutes', v_days * coalesce((p ->> 'capacity_minutes_per_day')::integer, 480),
           'utilization', case when v_days = 0 then null
                               else round(coalesce(w.minutes, 0)::numeric / (v_days * coalesce((p ->> 'capacity_minutes_per_day')::integer, 480)), 4)::text end,
           'billable_utilization', case when v_days = 0 then null
                               else round(coalesce(w.billable, 0)::numeric / (v_days * coalesce((p ->> 'capacity_minutes_per_day')::integer, 480)), 4)::text end)
    from app.members m
    left join (select e.member_id, sum(e.minutes) as minutes, coalesce(sum(e.minutes) filter (where e.billable), 0) as billable
                 from app.time_entries e
                where e.organization_id = v__organization_id
                  and e.deleted_at is null and e.work_date between (p ->> 'from')::date and (p ->> 'to')::date
                group by e.member_id) w on w.member_id = m.id
   where m.organization_id = v__organization_id and m.status = 'active'
   order by m.id;
end
$$;

alter function reporting.member_utilization(p jsonb) owner to svc_api;

comment on function reporting.member_utilization(p jsonb) is 'The rpt_member_utilization report: per active member, the minutes worked and billable in p.from to p.to (time entries not deleted) against a capacity of working days (Monday to Friday) times p.capacity_minutes_per_day (default 480), with utilization and billable utilization as 4-decimal strings (null when the range has no working day). The worker runs it under the requesting client''s signed context when the run executes; it runs as svc_api, not as the worker (whose operator session sees every organization), so that svc_api''s policies on members and time entries judge the client''s Roles then, and every table read names that organization.';

revoke all on function reporting.member_utilization(p jsonb) from public;
grant execute on function reporting.member_utilization(p jsonb) to svc_worker;

-- function reporting.payments_received(jsonb)

create function reporting.payments_received(p jsonb) returns setof jsonb
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  return query
  select jsonb_build_object('period_start', date_trunc(coalesce(p ->> 'period', 'month'), y.received_date)::date, 'currency', y.currency,
           'payments', count(*), 'amount', app_private.money_text(sum(y.amount), max(i.scale)))
    from app.payments y
    join app.invoices i on i.organization_id = v__organization_id and i.id = y.invoice_id
   where y.organization_id = v__organization_id and y.received_date between (p ->> 'from')::date and (p ->> 'to')::date
   group by date_trunc(coalesce(p ->> 'period', 'month'), y.received_date), y.currency
   order by date_trunc(coalesce(p ->> 'period', 'month'), y.received_date), y.currency;
end
$$;

alter function reporting.payments_received(p jsonb) owner to svc_api;

comment on function reporting.payments_received(p jsonb) is 'The rpt_payments_received report: recorded payments per period (p.period day, week or month, default month) of their received date and per currency in p.from to p.to, with their count and total as a decimal string at the invoice currency''s scale (app_private.money_text), never a float. The worker runs it under the requesting client''s signed context when the run executes; it runs as svc_api, not as the worker (whose operator session sees every organization), so that svc_api''s policies (payments and invoices for managers and finance) judge the client''s Roles then, and every table read names that organization.';

revoke all on function reporting.payments_received(p jsonb) from public;
grant execute on function reporting.payments_received(p jsonb) to svc_worker;

-- function reporting.project_progress(jsonb)

create function reporting.project_progress(p jsonb) returns setof jsonb
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  return query
  select jsonb_build_object('project_id', pr.id, 'project_name', pr.name, 'project_status', pr.status,
           'tasks_total', count(t.id), 'tasks_open', count(t.id) filter (where s.category = 'open'),
           'tasks_done', count(t.id) filter (where s.category = 'done'),
           'tasks_cancelled', count(t.id) filter (where s.category = 'cancelled'),
           'tasks_overdue', count(t.id) filter (where s.category = 'open' and t.due_at < now()),
           'completed_in_range', count(t.id) filter (where t.completed_at::date between coalesce((p ->> 'from')::date, '-infinity')
                                                                                   and coalesce((p ->> 'to')::date, 'infinity')))
    from app.projects pr
    left join (select x.* from app.tasks x where x.organization_id = v__organization_id and x.archived_at is null) t
           on t.project_id = pr.id
    left join (select x.* from app.task_workflow_statuses x where x.organization_id = v__organization_id) s
           on s.workflow_id = t.workflow_id and s.status = t.status
   where pr.organization_id = v__organization_id
     and (coalesce((p ->> 'include_archived')::boolean, false) or pr.status = 'active')
   group by pr.id, pr.name, pr.status
   order by pr.name, pr.id;
end
$$;

alter function reporting.project_progress(p jsonb) owner to svc_api;

comment on function reporting.project_progress(p jsonb) is 'The rpt_project_progress report: per project (active ones unless p.include_archived), its tasks that are not archived by workflow status category (open, done, cancelled), its overdue open tasks, and the tasks completed in the optional range p.from to p.to. The worker runs it under the requesting client''s signed context when the run executes; it runs as svc_api, not as the worker (whose operator session sees every organization), so that svc_api''s policies on projects, tasks and workflows judge the client''s Roles then, and every table read names that organization.';

revoke all on function reporting.project_progress(p jsonb) from public;
grant execute on function reporting.project_progress(p jsonb) to svc_worker;

-- function reporting.ticket_volume(jsonb)

create function reporting.ticket_volume(p jsonb) returns setof jsonb
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  return query
  select jsonb_build_object('week_start', w.week::date, 'created', count(t.id),
           'solved', count(t.id) filter (where t.resolved_at is not null),
           'median_hours_to_resolution', round((percentile_cont(0.5) within group (order by extract(epoch from t.resolved_at - t.created_at) / 3600)
                                                filter (where t.resolved_at is not null))::numeric, 1)::text)
    from generate_series(date_trunc('week', (p ->> 'from')::date), (p ->> 'to')::date, interval '1 week') w (week)
    left join (select x.* from app.tickets x
                where x.organization_id = v__organization_id
                  and x.created_at::date between (p ->> 'from')::date and (p ->> 'to')::date) t
           on t.created_at >= w.week and t.created_at < w.week + interval '1 week'
   group by w.week
   order by w.week;
end
$$;

alter function reporting.ticket_volume(p jsonb) owner to svc_api;

comment on function reporting.ticket_volume(p jsonb) is 'The rpt_ticket_volume report: per week from the week of p.from to p.to, the tickets created in the range, how many of them are solved, and the median hours from creation to resolution (one decimal). The worker runs it under the requesting client''s signed context when the run executes; it runs as svc_api, not as the worker (whose operator session sees every organization), so that svc_api''s ticket policy (the ticket module and the organization''s read permissions for the client''s Roles) is judged then, and the read names that organization.';

revoke all on function reporting.ticket_volume(p jsonb) from public;
grant execute on function reporting.ticket_volume(p jsonb) to svc_worker;

-- function reporting.time_by_project(jsonb)

create function reporting.time_by_project(p jsonb) returns setof jsonb
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  return query
  select jsonb_build_object('project_id', e.project_id, 'project_name', pr.name, 'member_id', e.member_id,
           'billable_minutes', sum(e.minutes) filter (where e.billable), 'non_billable_minutes', coalesce(sum(e.minutes) filter (where not e.billable), 0),
           'total_minutes', sum(e.minutes))
    from app.time_entries e
    join app.projects pr on pr.organization_id = v__organization_id and pr.id = e.project_id
   where e.organization_id = v__organization_id
     and e.deleted_at is null and e.work_date between (p ->> 'from')::date and (p ->> 'to')::date
     and (p ->> 'project_id' is null or e.project_id = p ->> 'project_id')
   group by e.project_id, pr.name, e.member_id
   order by pr.name, e.project_id, e.member_id;
end
$$;

alter function reporting.time_by_project(p jsonb) owner to svc_api;

comment on function reporting.time_by_project(p jsonb) is 'The rpt_time_by_project report: billable, non-billable and total minutes per project and member in p.from to p.to (time entries not deleted, any status), optionally of one project (p.project_id). The worker runs it under the requesting client''s signed context when the run executes; it runs as svc_api, not as the worker (whose operator session sees every organization), so that svc_api''s policies on time entries and projects judge the client''s Roles then, and every table read names that organization.';

revoke all on function reporting.time_by_project(p jsonb) from public;
grant execute on function reporting.time_by_project(p jsonb) to svc_worker;

-- rows of app_private.report_definitions

insert into app_private.report_definitions (id, name, description, required_roles, parameters_schema, formats, version, function_name, columns, numeric_columns) values
	('rpt_time_by_project', 'Time by project and member', 'Billable and non-billable minutes per project and member over a date range (time entries that are not deleted, any status).', '{manager,finance}', '{"type": "object", "required": ["from", "to"], "properties": {"to": {"type": "string", "format": "date"}, "from": {"type": "string", "format": "date"}, "project_id": {"type": "string", "pattern": "^prj_[A-Za-z0-9]{1,64}$"}}, "additionalProperties": false}', '{json,csv}', 1, 'reporting.time_by_project', '{project_id,project_name,member_id,billable_minutes,non_billable_minutes,total_minutes}', '{}'),
	('rpt_project_progress', 'Project progress', 'Tasks per project by status category, overdue open tasks, and tasks completed in an optional date range.', '{member,manager}', '{"type": "object", "properties": {"to": {"type": "string", "format": "date"}, "from": {"type": "string", "format": "date"}, "include_archived": {"type": "boolean"}}, "additionalProperties": false}', '{json,csv}', 1, 'reporting.project_progress', '{project_id,project_name,project_status,tasks_total,tasks_open,tasks_done,tasks_cancelled,tasks_overdue,completed_in_range}', '{}'),
	('rpt_member_utilization', 'Member utilization', 'Worked and billable minutes per active member against a capacity of working days (Monday to Friday) times minutes per day (default 480); utilization as a decimal string.', '{manager}', '{"type": "object", "required": ["from", "to"], "properties": {"to": {"type": "string", "format": "date"}, "from": {"type": "string", "format": "date"}, "capacity_minutes_per_day": {"type": "integer", "maximum": 1440, "minimum": 1}}, "additionalProperties": false}', '{json,csv}', 1, 'reporting.member_utilization', '{member_id,display_name,worked_minutes,billable_minutes,capacity_minutes,utilization,billable_utilization}', '{utilization,billable_utilization}'),
	('rpt_invoice_aging', 'Invoice aging', 'Amounts due on issued invoices per customer and currency, by days past the due date: 0–30 (including not yet due), 31–60, 61–90, over 90.', '{finance}', '{"type": "object", "properties": {"as_of": {"type": "string", "format": "date"}}, "additionalProperties": false}', '{json,csv}', 1, 'reporting.invoice_aging', '{customer_id,customer_name,currency,due_0_30,due_31_60,due_61_90,due_over_90,total_due,invoices}', '{due_0_30,due_31_60,due_61_90,due_over_90,total_due}'),
	('rpt_payments_received', 'Payments received', 'Recorded payments per period (day, week or month) and currency over a date range of received dates.', '{finance}', '{"type": "object", "required": ["from", "to"], "properties": {"to": {"type": "string", "format": "date"}, "from": {"type": "string", "format": "date"}, "period": {"enum": ["day", "week", "month"]}}, "additionalProperties": false}', '{json,csv}', 1, 'reporting.payments_received', '{period_start,currency,payments,amount}', '{amount}'),
	('rpt_ticket_volume', 'Ticket volume and time to resolution', 'Tickets created per week over a date range, how many of them are solved, and the median hours from creation to resolution.', '{manager}', '{"type": "object", "required": ["from", "to"], "properties": {"to": {"type": "string", "format": "date"}, "from": {"type": "string", "format": "date"}}, "additionalProperties": false}', '{json,csv}', 1, 'reporting.ticket_volume', '{week_start,created,solved,median_hours_to_resolution}', '{median_hours_to_resolution}');

revoke create on schema api, app, app_private, control, reporting, skills from svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
