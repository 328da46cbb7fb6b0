-- migrate:up

/** Issue 37: on Citus, jobs are queued through an outbox colocated with the organization's rows.
 *
 * graphile-worker's queue lives on the coordinator; a trigger or a command that runs on a worker
 * (every statement of a request does, in its delegated call) cannot call graphile_worker.add_job
 * there. Every job is queued by app_private.queue_job: on one server it calls add_job, as before;
 * on Citus it writes a row of app_private.job_outbox, in the organization's shard and the same
 * transaction as the write that caused it, and the worker moves the rows into the queue on the
 * coordinator (app_private.job_outbox_drain, about every second): a job is queued once its write
 * commits, never without it. */

-- On Citus: create the table's shards one at a time, so that the functions below may follow in
-- the same transaction (Citus refuses DDL after a parallel operation on a distributed table).
select set_config('citus.multi_shard_modify_mode', 'sequential', true);

create table app_private.job_outbox (
  organization_id text not null references app.organizations (id) on delete cascade,
  id text not null default app_private.new_id('job'),
  task text not null,
  payload json not null,
  job_key text,
  max_attempts integer not null,
  run_at timestamptz,
  created_at timestamptz not null default now(),
  primary key (organization_id, id)
);
comment on table app_private.job_outbox is
  'On Citus: jobs queued on a worker, moved into graphile-worker''s queue on the coordinator by app_private.job_outbox_drain. Empty on one server.';
alter table app_private.job_outbox enable row level security;
alter table app_private.job_outbox force row level security;

do $$
begin
  if exists (select from pg_extension where extname = 'citus') then
    perform create_distributed_table('app_private.job_outbox', 'organization_id', colocate_with => 'app.organizations');
  end if;
end
$$;

/** Queues a job: graphile-worker's add_job on one server; on Citus the organization's outbox. */
create function app_private.queue_job(p_organization_id text, p_task text, p_payload json, p_job_key text,
  p_max_attempts integer, p_run_at timestamptz default null) returns void
language plpgsql security definer
set search_path = pg_catalog
as $$
begin
  if not exists (select from pg_extension where extname = 'citus') then
    perform graphile_worker.add_job(p_task, p_payload, run_at => p_run_at, job_key => p_job_key, max_attempts => p_max_attempts);
  elsif p_organization_id is null then
    perform app_private.raise('SV500', 'JOB_WITHOUT_ORGANIZATION', format('a %s job names no organization', p_task));
  else
    insert into app_private.job_outbox (organization_id, task, payload, job_key, max_attempts, run_at)
    values (p_organization_id, p_task, p_payload, p_job_key, p_max_attempts, p_run_at);
  end if;
end
$$;
revoke execute on function app_private.queue_job(text, text, json, text, integer, timestamptz) from public;

/** On the coordinator: moves the outbox's rows into graphile-worker's queue, in one transaction
 * (a row leaves the outbox only with its job queued). Returns how many. */
create function app_private.job_outbox_drain() returns integer
language plpgsql
set search_path = pg_catalog
as $$
declare
  j record;
  v_count integer := 0;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return 0;
  end if;
  for j in delete from app_private.job_outbox returning * loop
    perform graphile_worker.add_job(j.task, j.payload, run_at => j.run_at, job_key => j.job_key, max_attempts => j.max_attempts);
    v_count := v_count + 1;
  end loop;
  return v_count;
end
$$;
revoke execute on function app_private.job_outbox_drain() from public;

-- The callers, with the organization of what they queue (a request's, or the row's own).
create or replace function app_private.webhook_enqueue(p_delivery text, p_run_at timestamp with time zone default null::timestamp with time zone)
 returns void
 language plpgsql
 security definer
 set search_path to 'pg_catalog'
as $function$
declare
  v_org text := app.current_organization_id();
begin
  if v_org is null and exists (select from pg_extension where extname = 'citus') then
    -- The worker (on the coordinator), outside a request: the delivery's organization.
    select d.organization_id into v_org from app.webhook_deliveries d where d.id = p_delivery;
  end if;
  perform app_private.queue_job(v_org, 'webhook_deliver', json_build_object('delivery_id', p_delivery), 'deliver:' || p_delivery, 25, p_run_at);
end
$function$;

create or replace function app_private.tg_invoices__queue_sync()
 returns trigger
 language plpgsql
 security definer
 set search_path to 'pg_catalog'
as $function$
begin
  if new.sync_status = 'pending' and old.sync_status is distinct from 'pending' then
    perform app_private.queue_job(new.organization_id, 'accounting_sync',
      json_build_object('invoice_id', new.id, 'action', case when new.status = 'void' then 'void' else 'export' end),
      'accounting_sync:' || new.id, 8);
  end if;
  return null;
end
$function$;

create or replace function app_private.queue_file_scan(p_file_id text)
 returns void
 language plpgsql
 security definer
 set search_path to 'pg_catalog'
as $function$
declare
  v_org text := app.current_organization_id();
begin
  if v_org is null and exists (select from pg_extension where extname = 'citus') then
    select f.organization_id into v_org from app.files f where f.id = p_file_id;
  end if;
  perform app_private.queue_job(v_org, 'file_scan', json_build_object('file_id', p_file_id), 'file_scan:' || p_file_id, 10);
end
$function$;

create or replace function app_private.tg_ticket_messages__emit()
 returns trigger
 language plpgsql
 security definer
 set search_path to 'pg_catalog'
as $function$
begin
  perform app_private.emit_event(new.organization_id, 'ticket.message.created', 'ticket_message', new.id, 1);
  if new.type = 'reply' then
    perform app_private.queue_job(new.organization_id, 'ticket_reply_email', json_build_object('message_id', new.id),
                                  'ticket_reply:' || new.id, 10);
  end if;
  return null;
end
$function$;

create or replace function app_private.queue_report_run(p_run_id text)
 returns void
 language plpgsql
 security definer
 set search_path to 'pg_catalog'
as $function$
declare
  v_org text := app.current_organization_id();
begin
  if v_org is null and exists (select from pg_extension where extname = 'citus') then
    select r.organization_id into v_org from app.report_runs r where r.id = p_run_id;
  end if;
  perform app_private.queue_job(v_org, 'report_run', json_build_object('run_id', p_run_id), 'report_run:' || p_run_id, 3);
end
$function$;

create or replace function app_private.queue_agent_run(p_run_id text)
 returns void
 language plpgsql
 security definer
 set search_path to 'pg_catalog'
as $function$
declare
  v_org text := app.current_organization_id();
begin
  if v_org is null and exists (select from pg_extension where extname = 'citus') then
    select r.organization_id into v_org from app.runs r where r.id = p_run_id;
  end if;
  perform app_private.queue_job(v_org, 'agent_run', json_build_object('run_id', p_run_id), null, 3);
end
$function$;

-- migrate:down
