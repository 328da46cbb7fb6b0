-- migrate:up

/** The service's outbox status under the policies: api.service_outbox_status belongs to svc_status.
 *
 * The status (the age of the oldest event waiting for its fan-out, the deliveries waiting, how long
 * the most overdue has been due) is a metric over every organization, read at each scrape of
 * /metrics as svc_runtime. It belonged to the migrating role, a superuser. It now belongs to
 * svc_status, which owns nothing else and may read, of every organization, only what the metric
 * counts: the events waiting for their fan-out (their creation time) and the deliveries waiting
 * (their status and when they are due), each under a policy that shows those rows alone. On Citus
 * the coordinator reads them across shards over Citus's connections, which log in as the function's
 * owner: svc_status is a login for that alone, with no password, authenticated to the workers as
 * Citus authenticates svc_runtime (pg_dist_authinfo, a certificate, or the nodes' own rules). */
set local lock_timeout = '3s';
set local statement_timeout = '60s';
-- On Citus, each table's grants run shard by shard over one connection per worker: a grant that
-- ran over several would refuse a later command in the same transaction (as when the role
-- already exists on the cluster: a second database migrated there).
select set_config('citus.multi_shard_modify_mode', 'sequential', true) where exists (select from pg_extension where extname = 'citus');

do $$
begin
  if not exists (select from pg_roles where rolname = 'svc_status') then
    create role svc_status login nosuperuser nobypassrls nocreatedb nocreaterole noinherit;
  end if;
  execute format('grant connect on database %I to svc_status', current_database());
end
$$;
-- USAGE on the schema of the function it owns too: a Citus node being added refuses the function otherwise.
grant usage on schema api, app to svc_status;
grant select (fanout_pending, created_at) on table app.events to svc_status;
grant select (status, next_attempt_at) on table app.webhook_deliveries to svc_status;
create policy "The service status sees events waiting for their fan-out" on app.events
  for select to svc_status using (fanout_pending);
create policy "The service status sees deliveries waiting" on app.webhook_deliveries
  for select to svc_status using (status = 'pending');
alter function api.service_outbox_status() owner to svc_status;

-- migrate:down
set local lock_timeout = '3s';
set local statement_timeout = '60s';
alter function api.service_outbox_status() owner to current_user;
-- Its grants here and the two policies that name it alone.
-- DROP OWNED also revokes what the role holds on the server's other databases (CONNECT): kept.
do $do$
declare
  v_kept text[];
  v_grant text;
begin
  select array_agg(format('grant %s on database %I to svc_status', a.privilege_type, d.datname)) into v_kept
    from pg_database d, aclexplode(d.datacl) a
   where a.grantee = 'svc_status'::regrole and d.datname <> current_database();
  drop owned by svc_status;
  foreach v_grant in array coalesce(v_kept, '{}') loop
    execute v_grant;
  end loop;
end
$do$;
-- The role stays (roles belong to the cluster, not to one database): drop it by hand once no database names it.
