-- migrate:up

/** On Citus, the BI relay's connection is opened by the cluster bootstrap's svc_bootstrap.relay_connect
 * (db/citus/bootstrap.sql), with a connection string it makes itself, instead of by the relay with
 * dblink_connect_u and what it read of pg_dist_authinfo and citus.node_conninfo: a connection without
 * a password logs in as any role the server's own credentials let it, pg_dist_authinfo may hold any
 * role's password, and svc_relay's members include the schema's owner. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

-- After the bootstrap that makes that function and takes the relay's own grants back.
do $$
begin
  if to_regprocedure('svc_bootstrap.relay_connect(integer)') is null
     or has_function_privilege('svc_relay', 'svc_dblink.dblink_connect_u(text, text)', 'execute')
     or has_table_privilege('svc_relay', 'pg_catalog.pg_dist_authinfo', 'select') then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', 'run db/citus/bootstrap.sql as a superuser on the coordinator''s database first: it opens the BI relay''s connection now');
  end if;
end
$$;

create or replace function reporting_private.bi_rows(p_view text) returns setof jsonb
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
  declare
    b record := app_private.bi_context();
    n record;
    v_connection text := 'svc_bi_relay_' || pg_backend_pid();
    v_pid integer;
    v_started bigint;
    v_statement text;
  begin
    if b.organization_id is null then
      return;
    end if;
    -- A coordinator's pg_dump restored as one database (db/README.md "Backup and restore") keeps
    -- these views and no shards: the rows are here, under the same policies.
    if not exists (select from pg_dist_partition where logicalrelid = 'app.organizations'::regclass) then
      return query execute format('select to_jsonb(r) from reporting_private.%I r', p_view);
      return;
    end if;
    select nd.nodeid, nd.nodename, nd.nodeport into n
      from pg_dist_placement p join pg_dist_node nd using (groupid)
     where p.shardid = get_shard_id_for_distribution_column('app.organizations', b.organization_id)
       and nd.isactive and nd.noderole = 'primary'
     limit 1;
    if n.nodename is null then
      perform app_private.raise('SV500', 'REPORTING_UNAVAILABLE', 'no active worker holds this organization''s rows');
    end if;
    -- The relay's connection, opened by the cluster bootstrap's one function that may
    -- (db/citus/bootstrap.sql): its settings and password are read where Citus keeps them, with a
    -- connection string it makes itself.
    v_connection := svc_bootstrap.relay_connect(n.nodeid);
    begin
      select x.pid, x.started into v_pid, v_started
        from svc_dblink.dblink(v_connection, 'select pg_backend_pid(), (select (extract(epoch from a.backend_start) * 1000000)::bigint
                                                 from pg_stat_activity a where a.pid = pg_backend_pid())') as x(pid integer, started bigint);
      v_statement := format('select j::text from reporting_private.bi_rows_of(%L, %L, %L, %L) j', p_view, b.organization_id, b.svc_roles,
                            app_private.bi_relay_proof(v_pid, v_started, p_view, b.organization_id, b.svc_roles));
      return query select r.j::jsonb from svc_dblink.dblink(v_connection, v_statement) as r(j text);
    exception when others then
      perform svc_dblink.dblink_disconnect(v_connection);
      raise;
    end;
    perform svc_dblink.dblink_disconnect(v_connection);
  end
  $$;

comment on function reporting_private.bi_rows(p_view text) is 'A BI login''s read of a reporting view on a cluster: for the login''s organization and Roles (app_private.bi_context), it connects over dblink as svc_reporting_relay to the worker that holds that organization and calls reporting_private.bi_rows_of there with a proof bound to that worker''s backend (app_private.bi_relay_proof), so that the relay''s password alone reads nothing. It runs as svc_relay, whose connection the cluster bootstrap''s svc_bootstrap.relay_connect opens; a BI login may do neither.';

-- The relay quoted its connection string's values with this; the bootstrap's function does now.
drop function app_private.conninfo_value(text);

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the relay''s own read of pg_dist_authinfo is not put back (the cluster''s bootstrap revoked it): restore a backup'); end $$;
