-- migrate:up

/** The cluster's baseline, 1 of 3: where each table's rows live, and which functions run where. This folder's migrations run on a Citus
 * coordinator only, in one chain with db/migrations in version order (scripts/db.ts), after the
 * cluster's bootstrap (db/citus/bootstrap.sql) and as the deploy login; they replaced the cluster's
 * first baseline (20261206061400 to 20261206070100), which a superuser ran, and a database that ran
 * that one has their versions recorded instead (scripts/db.ts). */
set local check_function_bodies = false;
set local client_min_messages = warning;
set local search_path = '';

-- While this file runs, the owners of our functions and views may create in the schemas: Citus makes
-- each function on the workers and then gives it to its owner, which PostgreSQL allows a role that
-- is not a superuser only when the new owner may create in the function's schema. Taken back at its end.
grant create on schema api, app, app_private, control, reporting, skills to svc_api, svc_owner, svc_gate, svc_directory, svc_status;

/** The cluster's layout: every tenant table distributed by its organization (app.organizations by
 * its id), colocated so that an organization's rows of every table sit on one node; the global
 * tables as reference tables (a copy on every node); app_private.rate_limit_buckets, signing_keys,
 * bi_logins and client_directory kept on the coordinator (bi_logins without its key to organizations,
 * which Citus cannot check there). Every foreign key is taken off while the tables are placed and
 * put back, checked again shard by shard. Then every function of ours is made on every node, and the
 * ones a request or a job calls first are delegated to the node that holds their organization
 * (argument $1). docs/scaling.md says what runs where; test/citus/placement.test.ts checks it. */
do $citus$
declare
  v_keys text[] := '{}';
  v_key text;
  r record;
begin
  if not (select count(*) > 0 from pg_dist_node where noderole = 'primary' and groupid <> 0) then
    perform app_private.raise('SV500', 'CITUS_WITHOUT_WORKERS', 'the citus extension is installed but no worker is added: add the workers (citus_add_node) before migrating');
  end if;
  -- Triggers on distributed tables (ours write only their own organization's colocated rows).
  perform set_config('citus.enable_unsafe_triggers', 'on', true);
  -- Each table's shards over one connection per worker: a transaction that wrote through several
  -- connections could not then create shards that reference those rows.
  perform set_config('citus.multi_shard_modify_mode', 'sequential', true);

  -- Tables: the keys off, the tables placed, the keys back (checked again, shard by shard).
  for r in select k.conrelid::regclass::text as tbl, k.conname, pg_get_constraintdef(k.oid) as def
             from pg_constraint k join pg_class c on c.oid = k.conrelid join pg_namespace n on n.oid = c.relnamespace
            where k.contype = 'f' and n.nspname in ('app', 'app_private')
            order by 1, 2 loop
    if r.tbl <> 'app_private.bi_logins' then
      v_keys := v_keys || format('alter table %s add constraint %I %s', r.tbl, r.conname, r.def);
    end if;
    execute format('alter table %s drop constraint %I', r.tbl, r.conname);
  end loop;
  perform create_reference_table('app_private.currencies');
  perform create_reference_table('app_private.event_types');
  perform create_reference_table('app_private.report_definitions');
  perform create_reference_table('app_private.agent_skills');
  perform create_reference_table('app_private.agent_definitions');
  perform create_reference_table('app_private.run_wake_key');
  perform create_distributed_table('app.organizations', 'id');
  perform create_distributed_table('app.agent_publications', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.api_clients', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.approvals', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.client_secrets', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.conversation_messages', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.conversations', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.custom_field_definitions', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.customers', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.events', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.file_chunks', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.file_contents', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.file_policies', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.file_uploads', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.files', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.idempotency_keys', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.integration_connections', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.invoice_lines', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.invoices', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.members', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.object_schemas', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.payments', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.projects', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.report_results', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.report_runs', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.run_events', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.run_tool_calls', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.runs', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.task_activity', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.task_dependencies', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.task_notes', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.task_workflow_statuses', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.task_workflow_transitions', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.task_workflows', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.tasks', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.ticket_messages', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.ticket_search', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.ticket_statuses', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.ticket_transitions', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.tickets', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.time_entries', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.time_entry_audit', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.webhook_deliveries', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.webhook_delivery_attempts', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app.webhook_endpoints', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app_private.access_tokens', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app_private.admin_notifications', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app_private.invoice_number_counters', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app_private.job_outbox', 'organization_id', colocate_with => 'app.organizations');
  perform create_distributed_table('app_private.ticket_number_counters', 'organization_id', colocate_with => 'app.organizations');
  foreach v_key in array v_keys loop
    execute v_key;
  end loop;
  -- Functions on every node, and the ones delegated to the organization's worker.
  for r in select p.oid::regprocedure::text as fn
             from pg_proc p join pg_namespace n on n.oid = p.pronamespace
            where n.nspname in ('app', 'app_private', 'api', 'control', 'skills', 'reporting') and p.prokind in ('f', 'p')
              and not exists (select from pg_dist_object o where o.classid = 'pg_proc'::regclass and o.objid = p.oid) loop
    perform create_distributed_function(r.fn::regprocedure);
  end loop;
  perform create_distributed_function('api.access_token_record(text,text,text,bytea,timestamp with time zone)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('api.authenticate_client(text,text,text)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('api.begin_request(text,text,text[],boolean)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('api.in_organization(text,text,text[])'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('api.in_organization_count(text,text,text[])'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.accounting_sync_load(text,text)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.accounting_sync_record(text,text,boolean,text,text,boolean)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.chat_context(text,text)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.client_may_read(text,text,text,text,text)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.file_scan_load(text,text)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.file_scan_record(text,text,text,text,boolean)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.report_run_execute(text,text,interval)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.report_run_start(text,text)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.run_available_skills(text,text)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.run_note(text,text,text,jsonb)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.run_settle(text,text,text,jsonb,jsonb)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.run_start(text,text)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.run_tool(text,text,text,jsonb,jsonb)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.ticket_reply_load(text,text)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.ticket_reply_record(text,text,boolean,text)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.webhook_claim(text,text,integer)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.webhook_fanout(text,text,integer)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.webhook_fanout_batch(text,integer,integer)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
  perform create_distributed_function('app_private.webhook_record_attempt(text,text,integer,timestamp with time zone,integer,integer,text,boolean,integer,double precision,integer,integer)'::regprocedure, '$1', colocate_with => 'app.organizations', force_delegation => true);
end
$citus$;

revoke create on schema api, app, app_private, control, reporting, skills from svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
