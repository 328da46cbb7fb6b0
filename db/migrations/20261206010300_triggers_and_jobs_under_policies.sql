-- migrate:up

/** The triggers and helpers that requests, jobs and the control plane reach, under row policies.
 *
 * The previous migration moved the functions a request calls by name; 64 of the 65 security-definer
 * functions left to the migrating role (a superuser) ran beneath them: the triggers that keep
 * workflows, totals, numbers and events, and the helpers that queue jobs and check references.
 * They now belong to svc_owner, under its one policy per tenant table: in a request they see the
 * request's organization alone, in the worker's and the control plane's sessions (operators) every
 * organization, as their jobs need. Left to the migrating role: app_private.shard_views_advance, which
 * only DDL reaches (a Citus event trigger), and reads no table. On one server, queuing a job writes graphile-worker's queue:
 * scripts/db.ts grants svc_owner what add_job needs once graphile-worker's schema is there. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

-- A run's events name their stream by the wake key (app_private.run_wake_name, an invoker).
grant select on table app_private.run_wake_key to svc_owner;

/** On one server app_private.queue_job calls graphile_worker.add_job. graphile-worker's schema is
 * made after the migrations of a new database (scripts/db.ts), so what svc_owner needs of it is
 * granted by a function that scripts/db.ts calls after graphile-worker's own migrations, and here
 * for a database that has them: its three tables (graphile-worker keeps row security on, with no
 * policy), their sequences and add_job. A job names its organization (queue_job), so a command
 * reaches its request's jobs alone. */
create function app_private.job_queue_privileges() returns void
  language plpgsql
  set search_path = pg_catalog, pg_temp
as $$
declare
  t text;
begin
  if to_regnamespace('graphile_worker') is null then
    return;
  end if;
  grant usage on schema graphile_worker to svc_owner;
  grant select, insert, update on graphile_worker._private_jobs, graphile_worker._private_tasks, graphile_worker._private_job_queues to svc_owner;
  grant usage on all sequences in schema graphile_worker to svc_owner;
  grant execute on function graphile_worker.add_job(text, json, text, timestamptz, integer, text, integer, text[], text),
    graphile_worker.add_jobs(graphile_worker.job_spec[], boolean) to svc_owner;
  foreach t in array array['_private_jobs', '_private_tasks', '_private_job_queues'] loop
    if not exists (select from pg_policy where polrelid = format('graphile_worker.%I', t)::regclass and polname = 'Commands queue jobs') then
      execute format('create policy "Commands queue jobs" on graphile_worker.%I for all to svc_owner using (%s) with check (%2$s)', t,
        case t when '_private_jobs' then $e$app_private.operator_session() or (payload ->> 'organization_id') = app.current_organization_id()$e$
               else 'true' end);
    end if;
  end loop;
end
$$;
comment on function app_private.job_queue_privileges() is
  'What svc_owner needs of graphile-worker''s schema to queue jobs; scripts/db.ts calls it after graphile-worker''s migrations.';
revoke all on function app_private.job_queue_privileges() from public;
select app_private.job_queue_privileges();

do $$
declare
  f regprocedure;
begin
  foreach f in array array[
    'app_private.check_subject(text)', 'app_private.conversation_compact(text,text)',
    'app_private.custom_field_errors(text,text,jsonb,jsonb,text[],boolean)', 'app_private.custom_field_patch_errors(text,jsonb,jsonb)',
    'app_private.emit_event(text,text,text,text,integer,text)', 'app_private.file_link(text)', 'app_private.file_policy(text)',
    'app_private.file_readable(text)', 'app_private.invoice_recompute_totals(text[],text[])', 'app_private.project_archive_blockers(text,text)',
    'app_private.queue_agent_run(text)', 'app_private.queue_file_scan(text)', 'app_private.queue_report_run(text)',
    'app_private.request_time_entry_approval(text)', 'app_private.run_event(text,text,text,jsonb)',
    'app_private.task_archive_blockers(text,text)', 'app_private.tg__check_custom_fields()', 'app_private.tg__client_of_parent()',
    'app_private.tg__emit_event()', 'app_private.tg_api_clients__plan_allows_clients()', 'app_private.tg_client_secrets__bump_client_version()',
    'app_private.tg_conversation_messages__emit()', 'app_private.tg_file_bytes__of_parent()', 'app_private.tg_file_chunks__guard()',
    'app_private.tg_file_contents__check()', 'app_private.tg_file_uploads__lifecycle()', 'app_private.tg_files__emit()',
    'app_private.tg_files__lifecycle()', 'app_private.tg_integration_connections__emit()', 'app_private.tg_invoice_lines__compute()',
    'app_private.tg_invoice_lines__totals()', 'app_private.tg_invoice_lines__totals_changed()', 'app_private.tg_invoices__emit()',
    'app_private.tg_invoices__guard()', 'app_private.tg_invoices__lifecycle()', 'app_private.tg_invoices__pdf_required()',
    'app_private.tg_invoices__queue_sync()', 'app_private.tg_organizations__publish_agents()',
    'app_private.tg_organizations__seed_ticket_workflow()', 'app_private.tg_payments__apply()', 'app_private.tg_payments__emit()',
    'app_private.tg_projects__check_references()', 'app_private.tg_report_runs__emit()', 'app_private.tg_runs__conversation_reply()',
    'app_private.tg_runs__events()', 'app_private.tg_task_dependencies__no_cycle()', 'app_private.tg_task_notes__members_may_add()',
    'app_private.tg_tasks__archive_rules()', 'app_private.tg_tasks__check_references()', 'app_private.tg_tasks__legal_transition()',
    'app_private.tg_ticket_messages__emit()', 'app_private.tg_ticket_messages__index()', 'app_private.tg_ticket_messages__rules()',
    'app_private.tg_tickets__emit()', 'app_private.tg_tickets__index()', 'app_private.tg_tickets__rules()',
    'app_private.tg_time_entries__submitted_has_approval()', 'app_private.tg_time_entries__validate()',
    'app_private.tg_webhook_deliveries__replay_of()', 'app_private.tg_webhook_endpoints__check_events()',
    'app_private.tg_webhook_endpoints__limit()']::regprocedure[] loop
    execute format('alter function %s owner to svc_owner', f);
  end loop;
  -- Three helpers need no rights of their own: they run as their caller (svc_owner's commands and
  -- triggers, or an operator's job). As definers, called by the worker on a Citus coordinator, they
  -- wrote an organization's shard over a connection as their owner, which cannot log in.
  foreach f in array array['app_private.accounting_connection(text)',
    'app_private.queue_job(text,text,json,text,integer,timestamp with time zone)',
    'app_private.webhook_enqueue(text,text,timestamp with time zone)']::regprocedure[] loop
    execute format('alter function %s owner to svc_owner', f);
    execute format('alter function %s security invoker', f);
  end loop;
end
$$;

-- migrate:down
-- Back to the role that runs this (the migrating role), as before: every function of svc_owner but
-- those the previous migration gave it.
set local lock_timeout = '3s';
set local statement_timeout = '60s';
revoke select on table app_private.run_wake_key from svc_owner;
alter function app_private.accounting_connection(text) security definer;
alter function app_private.queue_job(text,text,json,text,integer,timestamp with time zone) security definer;
alter function app_private.webhook_enqueue(text,text,timestamp with time zone) security definer;
do $$
declare
  t text;
begin
  if to_regnamespace('graphile_worker') is not null then
    foreach t in array array['_private_jobs', '_private_tasks', '_private_job_queues'] loop
      execute format('drop policy if exists "Commands queue jobs" on graphile_worker.%I', t);
    end loop;
    revoke all on all tables in schema graphile_worker from svc_owner;
    revoke all on all sequences in schema graphile_worker from svc_owner;
    revoke all on all functions in schema graphile_worker from svc_owner;
    revoke usage on schema graphile_worker from svc_owner;
  end if;
end
$$;
drop function app_private.job_queue_privileges();
do $$
declare
  f regprocedure;
begin
  for f in select p.oid::regprocedure from pg_proc p
            where p.proowner = 'svc_owner'::regrole and p.pronamespace = 'app_private'::regnamespace
              and p.oid not in ('app_private.may_read_internal_notes()'::regprocedure, 'app_private.may_read_time_entries()'::regprocedure,
                                'app_private.may_read_tickets()'::regprocedure, 'app_private.member_hr_profile(text,text)'::regprocedure) loop
    execute format('alter function %s owner to %I', f, current_user);
  end loop;
end
$$;
