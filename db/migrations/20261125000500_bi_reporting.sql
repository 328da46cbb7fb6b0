-- migrate:up

/** Read-only reporting access for BI tools (issue 16, second part). The control plane issues a
 * database login bound to one organization and a set of Roles (svc-admin reporting grant); its
 * sessions read the `reporting` views, which are flat columns over the `api` views: the same row
 * policies and field projections as the API. The policies' accessors, which return nothing without
 * a signed request context, fall back to the session's login: a BI login's session user maps to
 * its organization and Roles (app_private.bi_logins). The session user cannot be changed by the
 * login (SET SESSION AUTHORIZATION is for superusers), so the mapping cannot be forged. */

do $$
begin
  if not exists (select from pg_roles where rolname = 'svc_reporting') then
    create role svc_reporting nologin nosuperuser nobypassrls nocreatedb nocreaterole;
  end if;
end
$$;

create table app_private.bi_logins (
  organization_id text not null references app.organizations on delete cascade,
  role_name text not null constraint bi_logins_role_name_format check (role_name ~ '^svc_bi_[a-z0-9]{12}$'),
  svc_roles text[] not null constraint bi_logins_roles_valid check (svc_roles <@ '{member,manager,finance,hr}' and cardinality(svc_roles) > 0),
  created_at timestamptz not null default now(),
  primary key (organization_id, role_name)
);
create index bi_logins_role on app_private.bi_logins (role_name);
alter table app_private.bi_logins enable row level security;
alter table app_private.bi_logins force row level security;

/** The organization and Roles of a BI login's session (nothing for any other login). */
create function app_private.bi_context(out organization_id text, out svc_roles text[])
language sql stable security definer parallel restricted
set search_path = pg_catalog
as $$ select b.organization_id, b.svc_roles from app_private.bi_logins b where b.role_name = session_user $$;

create or replace function app.current_organization_id() returns text
language plpgsql stable parallel restricted
set search_path = pg_catalog
as $$
begin
  if app_private.context_ok() then
    return nullif(current_setting('svc.organization_id', true), '');
  end if;
  return (app_private.bi_context()).organization_id;
end
$$;

create or replace function app.current_roles() returns text[]
language plpgsql stable parallel restricted
set search_path = pg_catalog
as $$
begin
  if app_private.context_ok() then
    return coalesce(string_to_array(nullif(current_setting('svc.roles', true), ''), ','), '{}'::text[]);
  end if;
  return coalesce((app_private.bi_context()).svc_roles, '{}'::text[]);
end
$$;

/** What a BI session may execute: the helpers the views call (the caller's EXECUTE privilege counts for them). */
grant usage on schema app, app_private to svc_reporting;
do $$
declare
  r record;
begin
  for r in select p.oid::regprocedure as fn
             from pg_proc p join pg_namespace n on n.oid = p.pronamespace, aclexplode(p.proacl) a
            where n.nspname in ('app', 'app_private') and a.grantee = 'svc_runtime'::regrole
              and p.proname not in ('new_id', 'normalize_email', 'event_resource_visible') loop
    execute format('grant execute on function %s to svc_reporting', r.fn);
  end loop;
end
$$;
grant execute on function app_private.bi_context() to svc_reporting, svc_runtime, svc_api;

/** The views: flat columns, the API's projections (a column the Roles may not read is null). */
grant usage on schema reporting to svc_reporting;

create view reporting.members as
select v.id as member_id, v.doc ->> 'display_name' as display_name, v.doc ->> 'status' as status, v.doc ->> 'job_title' as job_title
  from api.members v;

create view reporting.projects as
select v.id as project_id, v.doc ->> 'code' as code, v.doc ->> 'name' as name, v.doc ->> 'status' as status,
       (v.doc ->> 'start_date')::date as start_date, (v.doc ->> 'end_date')::date as end_date,
       v.doc ->> 'customer_id' as customer_id, v.doc ->> 'manager_member_id' as manager_member_id,
       (v.doc ->> 'created_at')::timestamptz as created_at, (v.doc ->> 'updated_at')::timestamptz as updated_at
  from api.projects v;

create view reporting.tasks as
select v.id as task_id, v.project_id, v.doc ->> 'name' as name, v.doc ->> 'status' as status, v.doc ->> 'priority' as priority,
       (v.doc ->> 'due_at')::timestamptz as due_at, (v.doc ->> 'completed_at')::timestamptz as completed_at,
       (v.doc ->> 'archived')::boolean as archived,
       array(select jsonb_array_elements_text(coalesce(v.doc -> 'assignee_member_ids', '[]'))) as assignee_member_ids,
       (v.doc ->> 'created_at')::timestamptz as created_at
  from api.tasks v;

create view reporting.time_entries as
select v.id as time_entry_id, v.member_id, v.project_id, v.doc ->> 'task_id' as task_id, v.work_date,
       (v.doc ->> 'minutes')::integer as minutes, v.billable, v.status
  from api.time_entries v
 where v.deleted_at is null;

create view reporting.approvals as
select v.id as approval_id, v.doc ->> 'type' as type, v.doc ->> 'status' as status, v.doc #>> '{resource,type}' as resource_type,
       v.doc #>> '{resource,id}' as resource_id, (v.doc ->> 'requested_at')::timestamptz as requested_at,
       (v.doc ->> 'decided_at')::timestamptz as decided_at, v.doc ->> 'decision' as decision
  from api.approvals v;

create view reporting.invoices as
select v.id as invoice_id, v.number, v.status, v.customer_id, v.currency, v.issue_date, v.due_date,
       (v.doc ->> 'total')::numeric as total, (v.doc ->> 'amount_paid')::numeric as amount_paid, (v.doc ->> 'amount_due')::numeric as amount_due
  from api.invoices v;

create view reporting.payments as
select y.id as payment_id, y.invoice_id, y.amount, y.currency, y.received_date, y.method
  from app.payments y;

create view reporting.tickets as
select v.id as ticket_id, v.doc ->> 'number' as number, v.doc ->> 'subject' as subject, v.status, v.priority,
       v.assignee_member_id, v.project_id, v.created_at, (v.doc ->> 'resolved_at')::timestamptz as resolved_at
  from api.tickets v;

do $$
declare
  r record;
begin
  for r in select format('%I.%I', schemaname, viewname) as rel from pg_views where schemaname = 'reporting' loop
    execute format('alter view %s owner to svc_api', r.rel);
    execute format('alter view %s set (security_invoker = false)', r.rel);
    execute format('grant select on %s to svc_reporting', r.rel);
  end loop;
end
$$;
grant select on app.payments to svc_api;

/** The control plane: a login per BI tool, bound to one organization and Roles; read-only, a
 * statement timeout, a connection limit. Returns the login and its password (shown once). */
create function control.reporting_grant(p_org text, p_roles text[]) returns table (role_name text, password text)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  v_role text := 'svc_bi_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12);
  v_password text := encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex');
begin
  perform app_private.require_found(exists (select from app.organizations o where o.id = p_org), 'ORGANIZATION_NOT_FOUND', p_org);
  insert into app_private.bi_logins (organization_id, role_name, svc_roles) values (p_org, v_role, p_roles);
  execute format('create role %I login password %L inherit nosuperuser nobypassrls nocreatedb nocreaterole connection limit 5 in role svc_reporting',
                 v_role, v_password);
  execute format('alter role %I set default_transaction_read_only = on', v_role);
  execute format('alter role %I set statement_timeout = %L', v_role, '30s');
  execute format('alter role %I set search_path = reporting', v_role);
  role_name := v_role;
  password := v_password;
  return next;
end
$$;

create function control.reporting_revoke(p_role text) returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  delete from app_private.bi_logins b where b.role_name = p_role;
  perform app_private.require_found(found, 'BI_LOGIN_NOT_FOUND', p_role);
  perform pg_terminate_backend(a.pid) from pg_stat_activity a where a.usename = p_role;
  execute format('drop role if exists %I', p_role);
end
$$;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'restore a backup taken before 20261125000500'); end $$;
