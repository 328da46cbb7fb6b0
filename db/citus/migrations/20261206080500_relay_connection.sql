-- migrate:up

/** On Citus, the BI relay reads its connection's settings and password through the cluster
 * bootstrap's svc_bootstrap.relay_connection (db/citus/bootstrap.sql), which answers the relay
 * login's alone, instead of reading pg_dist_authinfo and citus.node_conninfo itself: those may hold
 * any role's password, and svc_relay's members include the schema's owner. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

create or replace function reporting_private.bi_rows(p_view text) returns setof jsonb
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
  declare
    b record := app_private.bi_context();
    n record;
    v_auth text;
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
    -- The nodes' connection settings and the relay's password, where Citus keeps them, through the
    -- cluster bootstrap's one function that reads them (db/citus/bootstrap.sql).
    v_auth := svc_bootstrap.relay_connection(n.nodeid);
    if v_connection = any (coalesce(svc_dblink.dblink_get_connections(), '{}')) then
      perform svc_dblink.dblink_disconnect(v_connection);
    end if;
    -- dblink_connect_u: the relay's password comes from pg_dist_authinfo, or the node's own
    -- authentication (a certificate, .pgpass); the connection string is fixed here.
    perform svc_dblink.dblink_connect_u(v_connection,
      concat_ws(' ', format('host=%s port=%s dbname=%s user=svc_reporting_relay',
                            app_private.conninfo_value(n.nodename), n.nodeport, app_private.conninfo_value(current_database())),
                nullif(v_auth, '')));
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

comment on function reporting_private.bi_rows(p_view text) is 'A BI login''s read of a reporting view on a cluster: for the login''s organization and Roles (app_private.bi_context), it connects over dblink as svc_reporting_relay to the worker that holds that organization and calls reporting_private.bi_rows_of there with a proof bound to that worker''s backend (app_private.bi_relay_proof), so that the relay''s password alone reads nothing. It runs as svc_relay, which may open the relay''s connection and learn its settings and password from the cluster bootstrap''s svc_bootstrap.relay_connection; a BI login may not.';

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the relay''s own read of pg_dist_authinfo is not put back (the cluster''s bootstrap revoked it): restore a backup'); end $$;
