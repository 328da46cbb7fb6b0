/** The BI relay (docs/scaling.md, "BI on a cluster"). A BI login connects to the coordinator, where
 * its organization is known (app_private.bi_logins); a reporting view reads api views whose
 * correlated subqueries Citus cannot plan across shards, and a shard query would reach a worker as
 * the BI login, where its organization is not known. So each reporting view on the coordinator reads
 * reporting_private.bi_rows('<view>'), which asks the worker that holds the organization for the rows
 * over a dblink connection of its own, as svc_reporting_relay, with a proof made for that worker
 * backend (app_private.bi_relay_proof); there reporting_private.bi_rows_of checks the proof, signs a
 * context for the organization and the login's Roles, and reads the original view (moved to
 * reporting_private) over the node's own shards, under the same policies as one server. The relay's
 * password alone reads nothing. The relay's functions belong to svc_relay, which is neither a
 * superuser nor bypasses row security. */
do $$
begin
  -- The relay's login on the workers: it reads, and only as long as a BI statement may run.
  if not exists (select from pg_roles where rolname = 'svc_reporting_relay') then
    create role svc_reporting_relay login nosuperuser nobypassrls nocreatedb nocreaterole noinherit;
  end if;
  -- The owner of the relay's functions.
  if not exists (select from pg_roles where rolname = 'svc_relay') then
    create role svc_relay nologin nosuperuser nobypassrls nocreatedb nocreaterole inherit;
  end if;
end
$$;
alter role svc_reporting_relay set default_transaction_read_only = on;
alter role svc_reporting_relay set statement_timeout = '30s';
grant svc_reporting_relay to svc_relay;
-- citus.node_conninfo (the nodes' TLS and other connection settings) is a superuser's setting to read.
grant pg_read_all_settings to svc_relay;
grant select on table pg_catalog.pg_dist_authinfo to svc_relay;
do $$
begin
  execute format('grant connect on database %I to svc_reporting_relay', current_database());
end
$$;
