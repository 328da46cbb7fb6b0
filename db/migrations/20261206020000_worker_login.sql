-- migrate:up

/** The worker's own login, svc_worker, in place of the owner connection.
 *
 * The jobs (webhook fan-out and deliveries, accounting syncs, file scans, reports, agent runs,
 * ticket emails, and the purges) run as svc_worker: not a superuser, no BYPASSRLS, no CREATEROLE,
 * no CREATEDB, owner of nothing. What it may do:
 * - act for every organization: a member of svc_operator, so its sessions are operator sessions,
 *   and the one policy per tenant table that svc_owner has ("Commands act in the request's
 *   organization") names svc_worker too, with svc_owner's privileges on those tables;
 * - see a request the way the API does: a member of svc_runtime, so that a webhook's recipients
 *   and an agent's tool calls are judged by SET ROLE svc_runtime under the client's signed context;
 * - execute the job helpers (the functions of app, app_private, reporting and skills without the
 *   schema's maintenance, the api functions svc_owner may execute) and the control schema's purges,
 *   but none of the control plane's commands, which are not jobs;
 * - of the credential tables, only the expiry of token records that have run out, to delete them;
 *   no secret, no token digest, no signing key, no BI login, no client directory;
 * - run graphile-worker's queue (app_private.job_queue_privileges, on every migrate).
 * The Citus job that prepares shard groups moved by hand makes views and grants on the shards:
 * that is DDL, and it stays with the owner connection (src/worker/index.ts). */
set local lock_timeout = '3s';
set local statement_timeout = '60s';
-- On Citus, each table's grants run shard by shard over one connection per worker: a grant that
-- ran over several would refuse a later one on a reference table in the same transaction (as
-- when the role already exists on the cluster: a second database migrated there).
select set_config('citus.multi_shard_modify_mode', 'sequential', true) where exists (select from pg_extension where extname = 'citus');

do $$
declare
  r record;
begin
  if not exists (select from pg_roles where rolname = 'svc_worker') then
    -- Its password is set by the migrate step (scripts/db.ts), as svc_runtime's is.
    create role svc_worker login nosuperuser nobypassrls nocreatedb nocreaterole inherit;
  end if;
  grant svc_operator to svc_worker;
  grant svc_runtime to svc_worker;
  execute format('grant connect on database %I to svc_worker', current_database());
  grant usage on schema api, app, app_private, control, reporting, skills to svc_worker;

  -- svc_owner's privileges on the tenant tables, and its policy.
  for r in
    select c.oid::regclass as tbl, string_agg(distinct a.privilege_type, ', ') as privileges
      from pg_class c
      join pg_namespace n on n.oid = c.relnamespace
      cross join lateral aclexplode(c.relacl) a
     where n.nspname in ('app', 'app_private', 'control') and c.relkind in ('r', 'p', 'v')
       and a.grantee = 'svc_owner'::regrole
     group by c.oid
  loop
    execute format('grant %s on table %s to svc_worker', r.privileges, r.tbl);
  end loop;
  for r in
    select p.polrelid::regclass as tbl, p.polname
      from pg_policy p
     where p.polname = 'Commands act in the request''s organization'
  loop
    execute format('alter policy %I on %s to svc_owner, svc_worker', r.polname, r.tbl);
  end loop;
  for r in
    select c.oid::regclass as seq
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname in ('app', 'app_private') and c.relkind = 'S' and c.relname <> 'shard_views_generation'
       -- CASE: the privilege check errs on anything but a sequence, and a WHERE has no order.
       and case when c.relkind = 'S' then has_sequence_privilege('svc_owner', c.oid, 'usage') end
  loop
    execute format('grant usage on sequence %s to svc_worker', r.seq);
  end loop;

  -- The job helpers: the functions of app, app_private, reporting and skills (a report runs its
  -- reporting function, an agent its skills) and those of api that svc_owner may execute, but not
  -- the maintenance of the schema itself.
  for r in
    select p.oid::regprocedure as fn, p.prokind
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where (n.nspname in ('app', 'app_private', 'reporting', 'skills')
            or n.nspname = 'api' and has_function_privilege('svc_owner', p.oid, 'execute'))
       and pg_get_userbyid(p.proowner) in ('svc_owner', 'svc_api', 'svc_gate')
       and p.proname !~ '^(citus_|shard_views_|shard_groups_|tg_shard_views_)'
       and p.proname not in ('policy_expression', 'job_queue_privileges')
  loop
    execute format('grant execute on %s %s to svc_worker', case r.prokind when 'p' then 'procedure' else 'function' end, r.fn);
  end loop;
end
$$;

-- The control schema's purges are jobs: they belong to svc_owner, like every job helper.
alter function control.purge_expired_access_tokens() owner to svc_owner;
alter function control.purge_expired_idempotency_keys() owner to svc_owner;
alter function control.purge_expired_uploads() owner to svc_owner;
alter function control.purge_expired_report_results() owner to svc_owner;
alter function control.purge_expired_runs(interval) owner to svc_owner;
alter function control.expire_conversation_contexts(interval) owner to svc_owner;
grant usage on schema control to svc_owner;
grant execute on function control.purge_expired_access_tokens(), control.purge_expired_idempotency_keys(),
  control.purge_expired_uploads(), control.purge_expired_report_results(), control.purge_expired_runs(interval),
  control.expire_conversation_contexts(interval) to svc_worker;

-- Token records: the worker sees the expiry of those that have run out, and deletes them.
grant select (organization_id, expires_at), delete on table app_private.access_tokens to svc_worker;
create policy "The worker sees token records that have run out" on app_private.access_tokens
  for select to svc_worker
  using (expires_at < now() - interval '1 minute');
create policy "The worker purges token records that have run out" on app_private.access_tokens
  for delete to svc_worker
  using (expires_at < now() - interval '1 minute');

/** graphile-worker's queue: svc_owner queues jobs (a command's jobs name its organization), and
 * svc_worker runs every job. graphile-worker keeps row security on its tables, with no policy;
 * scripts/db.ts calls this after graphile-worker's own migrations, on every migrate. */
create or replace function app_private.job_queue_privileges() returns void
  language plpgsql
  set search_path = pg_catalog, pg_temp
as $$
declare
  t regclass;
begin
  if to_regnamespace('graphile_worker') is null then
    return;
  end if;
  grant usage on schema graphile_worker to svc_owner, svc_worker;
  grant select, insert, update on graphile_worker._private_jobs, graphile_worker._private_tasks, graphile_worker._private_job_queues to svc_owner;
  grant usage on all sequences in schema graphile_worker to svc_owner, svc_worker;
  grant execute on function graphile_worker.add_job(text, json, text, timestamptz, integer, text, integer, text[], text),
    graphile_worker.add_jobs(graphile_worker.job_spec[], boolean) to svc_owner;
  grant select, insert, update, delete on all tables in schema graphile_worker to svc_worker;
  grant execute on all functions in schema graphile_worker to svc_worker;
  for t in select c.oid::regclass from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where n.nspname = 'graphile_worker' and c.relkind in ('r', 'p') and c.relrowsecurity loop
    if t::text in ('graphile_worker._private_jobs', 'graphile_worker._private_tasks', 'graphile_worker._private_job_queues')
       and not exists (select from pg_policy where polrelid = t and polname = 'Commands queue jobs') then
      execute format('create policy "Commands queue jobs" on %s for all to svc_owner using (%s) with check (%2$s)', t,
        case t::text when 'graphile_worker._private_jobs'
          then $e$app_private.operator_session() or (payload ->> 'organization_id') = app.current_organization_id()$e$
          else 'true' end);
    end if;
    if not exists (select from pg_policy where polrelid = t and polname = 'The worker runs every job') then
      execute format('create policy "The worker runs every job" on %s for all to svc_worker using (true) with check (true)', t);
    end if;
  end loop;
end
$$;
comment on function app_private.job_queue_privileges() is
  'What svc_owner needs of graphile-worker''s schema to queue jobs, and svc_worker to run them; scripts/db.ts calls it after graphile-worker''s migrations.';
revoke all on function app_private.job_queue_privileges() from public;
select app_private.job_queue_privileges();

/** On Citus, each worker's own sequences, for svc_owner's triggers and svc_worker's jobs there. */
create or replace function app_private.citus_node_grants() returns void
  language plpgsql
  set search_path = pg_catalog, pg_temp
as $$
declare
  v_failed text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  select string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') into v_failed
    from run_command_on_workers($w$
      do $g$
      declare
        s regclass;
      begin
        set local citus.enable_ddl_propagation = off;
        if to_regclass('app_private.context_keys') is not null then
          grant select on app_private.context_keys to svc_gate;
        end if;
        for s in select c.oid::regclass from pg_class c join pg_namespace n on n.oid = c.relnamespace
                  where n.nspname in ('app', 'app_private') and c.relkind = 'S' and c.relname <> 'shard_views_generation' loop
          execute format('grant usage on sequence %s to svc_owner, svc_worker', s);
        end loop;
      end
      $g$ $w$)
   where not success;
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_PRIVILEGES_NOT_COPIED', format('granting the workers'' own objects failed: %s', v_failed));
  end if;
end
$$;
comment on function app_private.citus_node_grants() is
  'On Citus: svc_gate''s read of each worker''s context key, and svc_owner''s and svc_worker''s use of each worker''s sequences (objects of each node''s own, which Citus does not propagate).';
revoke all on function app_private.citus_node_grants() from public;

-- migrate:down
set local lock_timeout = '3s';
set local statement_timeout = '60s';

-- svc_worker's grants here, and its place in every policy (the policies that name it alone go with it).
-- DROP OWNED also revokes what the role holds on the server's other databases (CONNECT): kept.
do $do$
declare
  v_kept text[];
  v_grant text;
begin
  select array_agg(format('grant %s on database %I to svc_worker', a.privilege_type, d.datname)) into v_kept
    from pg_database d, aclexplode(d.datacl) a
   where a.grantee = 'svc_worker'::regrole and d.datname <> current_database();
  drop owned by svc_worker;
  foreach v_grant in array coalesce(v_kept, '{}') loop
    execute v_grant;
  end loop;
end
$do$;
alter function control.purge_expired_access_tokens() owner to current_user;
alter function control.purge_expired_idempotency_keys() owner to current_user;
alter function control.purge_expired_uploads() owner to current_user;
alter function control.purge_expired_report_results() owner to current_user;
alter function control.purge_expired_runs(interval) owner to current_user;
alter function control.expire_conversation_contexts(interval) owner to current_user;
revoke usage on schema control from svc_owner;
create or replace function app_private.job_queue_privileges() returns void
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
create or replace function app_private.citus_node_grants() returns void
  language plpgsql
  set search_path = pg_catalog, pg_temp
as $$
declare
  v_failed text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  select string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') into v_failed
    from run_command_on_workers($w$
      do $g$
      declare
        s regclass;
      begin
        set local citus.enable_ddl_propagation = off;
        if to_regclass('app_private.context_keys') is not null then
          grant select on app_private.context_keys to svc_gate;
        end if;
        for s in select c.oid::regclass from pg_class c join pg_namespace n on n.oid = c.relnamespace
                  where n.nspname in ('app', 'app_private') and c.relkind = 'S' and c.relname <> 'shard_views_generation' loop
          execute format('grant usage on sequence %s to svc_owner', s);
        end loop;
      end
      $g$ $w$)
   where not success;
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_PRIVILEGES_NOT_COPIED', format('granting the workers'' own objects failed: %s', v_failed));
  end if;
end
$$;
comment on function app_private.job_queue_privileges() is
  'What svc_owner needs of graphile-worker''s schema to queue jobs; scripts/db.ts calls it after graphile-worker''s migrations.';
comment on function app_private.citus_node_grants() is
  'On Citus: svc_gate''s read of each worker''s context key, and svc_owner''s use of each worker''s sequences (objects of each node''s own, which Citus does not propagate).';
-- The role stays (roles belong to the cluster, not to one database): drop it by hand once no database names it.
