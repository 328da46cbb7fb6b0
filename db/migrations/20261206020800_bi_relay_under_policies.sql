-- migrate:up

/** On Citus, the BI relay's functions belong to svc_relay, a role that is neither a superuser nor
 * bypasses row security, and logs in nowhere: no BI login can execute a function a superuser owns.
 *
 * svc_relay (NOLOGIN NOBYPASSRLS) owns reporting_private.bi_rows (the coordinator's side, which a
 * BI login's reporting views call), reporting_private.bi_rows_of (the worker's side, which only the
 * relay's own sessions may call, with the coordinator's proof) and the proof's two helpers. What it
 * holds, and why:
 * - the relay's connection: dblink_connect_u, dblink and dblink_disconnect (svc_dblink), and the
 *   relay's password where Citus keeps it (SELECT on pg_dist_authinfo, on the coordinator), and
 *   the nodes' connection settings, citus.node_conninfo, which only pg_read_all_settings may read;
 * - the relay key (app_private.relay_keys), to make and check proofs;
 * - membership in svc_reporting_relay, so that it sees the start of the relay's own backend, which
 *   a proof names (pg_stat_activity shows it to the backend's role and its members);
 * - SELECT on the tables a reporting view reads itself, so that Citus names their shards (no policy
 *   shows it a row of them);
 * - on the worker, the organization's row on its own shard, under a policy that shows the
 *   organization the proof named alone (svc.relay_organization, set around the read), and each
 *   node's generation of the api views' copies (a node's own sequence, granted on every worker);
 * - EXECUTE on what the two call: the BI session's binding (bi_context), the context's signature
 *   (set_context), the reading of the view as svc_api (reporting_rows_read), the organization's
 *   flags, and what the reporting views call (read in place in a coordinator's dump restored as
 *   one database). On one server nothing here is made. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';
-- On Citus, each table's grants run shard by shard over one connection per worker: a grant that
-- ran over several would refuse the function commands after it in the same transaction (as when
-- the role already exists on the cluster: a second database migrated there).
select set_config('citus.multi_shard_modify_mode', 'sequential', true) where exists (select from pg_extension where extname = 'citus');

do $do$
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  if not exists (select from pg_roles where rolname = 'svc_relay') then
    create role svc_relay nologin nosuperuser nobypassrls nocreatedb nocreaterole inherit;
  end if;
  grant svc_reporting_relay to svc_relay;
  grant usage on schema svc_dblink, reporting_private, app_private, app to svc_relay;
  grant execute on function svc_dblink.dblink_connect_u(text, text), svc_dblink.dblink(text, text),
    svc_dblink.dblink_disconnect(text), svc_dblink.dblink_get_connections() to svc_relay;
  grant select on table pg_catalog.pg_dist_authinfo to svc_relay;
  -- citus.node_conninfo (the nodes' TLS and other connection settings) is a superuser's setting to read.
  grant pg_read_all_settings to svc_relay;
  grant select on table app_private.relay_keys to svc_relay;
  grant execute on function app_private.bi_context(), app_private.conninfo_value(text), app_private.current_shard_views(bigint),
    app_private.read_flags(text[], boolean, boolean, boolean, boolean), app_private.set_context(text, text, text[], text),
    app_private.reporting_rows_read(text), app_private.raise(text, text, text, text) to svc_relay;
  grant select on table app.organizations to svc_relay;
  create policy "The relay reads the organization a proof named" on app.organizations
    for select to svc_relay using (id = current_setting('svc.relay_organization', true));
  execute (select string_agg(format('grant select on reporting_private.%I to svc_relay;', c.relname), ' ')
             from pg_class c where c.relnamespace = 'reporting_private'::regnamespace and c.relkind = 'v');
  -- A view's functions run with the privileges of the one reading it: in a coordinator's dump
  -- restored as one database, bi_rows reads the original views, which call what a BI login may.
  execute (select string_agg(format('grant execute on function %s to svc_relay;', p.oid::regprocedure), ' ')
             from pg_proc p join pg_namespace n on n.oid = p.pronamespace
            where n.nspname in ('app', 'app_private') and has_function_privilege('svc_reporting', p.oid, 'execute'));
  -- The tables a reporting view reads itself (app.payments): Citus names their shards only to a role
  -- that may select from them (get_shard_id_for_distribution_column). No policy shows svc_relay a row.
  execute (select string_agg(distinct format('grant select on %s to svc_relay;', c.oid::regclass), ' ')
             from pg_class v
             join pg_rewrite w on w.ev_class = v.oid
             join pg_depend d on d.classid = 'pg_rewrite'::regclass and d.objid = w.oid and d.refclassid = 'pg_class'::regclass
             join pg_class c on c.oid = d.refobjid
            where v.relnamespace = 'reporting_private'::regnamespace and v.relkind = 'v'
              and c.relnamespace = 'app'::regnamespace and c.relkind in ('r', 'p'));

  create or replace function reporting_private.bi_rows_of(p_view text, p_organization_id text, p_roles text[], p_proof text) returns setof jsonb
  language plpgsql volatile security definer
  set search_path = pg_catalog, pg_temp
  as $f$
  declare
    v_view regclass;
    v_shard bigint;
    v_views text[];
    v_flags text;
    v_source text;
    v_scope text;
    r record;
  begin
    v_view := to_regclass('reporting_private.' || quote_ident(p_view));
    if session_user <> 'svc_reporting_relay' or p_organization_id is null or p_roles is null or v_view is null
       or p_proof is distinct from app_private.bi_relay_proof(pg_backend_pid(), app_private.backend_started(), p_view, p_organization_id, p_roles) then
      perform app_private.raise('SV500', 'REPORTING_RELAY_ONLY', 'reporting_private.bi_rows_of is for the reporting relay''s own sessions, with the coordinator''s proof');
    end if;
    v_shard := get_shard_id_for_distribution_column('app.organizations', p_organization_id);
    v_views := string_to_array(app_private.current_shard_views(v_shard), '|');
    if v_views is null or not exists (select from pg_dist_placement p where p.shardid = v_shard
                                         and p.groupid = (select groupid from pg_dist_local_group)) then
      -- Made again within a minute (the worker process's citus_prepare task).
      perform app_private.raise('SV500', 'REPORTING_UNAVAILABLE', 'this organization''s reporting rows are being moved: try again in a minute');
    end if;
    -- Nothing here may reach another node: Citus would replay this transaction's SET LOCAL strings
    -- on that connection, as its role. The organization's flags come from its own shard (not
    -- through set_context, which would read app.organizations through Citus), and the view is read
    -- over this node's copies of the api views and shards of the tables (below).
    -- The organization's policy for the relay shows the row of the organization the proof named alone.
    v_scope := set_config('svc.relay_organization', p_organization_id, true);
    execute format('select app_private.read_flags($1, o.ticket_module_enabled, o.finance_may_read_tickets, o.hr_may_read_tickets,
                      o.hr_may_read_time_entries) from app.%I o where o.id = $2', 'organizations_' || v_shard)
      into v_flags using p_roles, p_organization_id;
    v_scope := set_config('svc.relay_organization', '', true);
    if v_flags is null then
      return;
    end if;
    perform app_private.set_context(p_organization_id, null, p_roles, v_flags);
    v_source := rtrim(pg_get_viewdef(v_view), '; ');
    -- Every relation the view reads: an api view (this group's copy) or a table distributed by
    -- organization (its shard for this organization, which is here); anything else is refused.
    for r in select distinct n.nspname::text as schema, c.relname::text as name, c.oid as rel
               from pg_rewrite w
               join pg_depend d on d.classid = 'pg_rewrite'::regclass and d.objid = w.oid and d.refclassid = 'pg_class'::regclass
               join pg_class c on c.oid = d.refobjid join pg_namespace n on n.oid = c.relnamespace
              where w.ev_class = v_view and d.refobjid <> v_view loop
      if r.schema = 'api' and r.name = any (v_views) then
        v_source := regexp_replace(v_source, '(^|[^\w."])api\.' || r.name || '\M', '\1' || format('api_shard_%s.%I', v_shard, r.name), 'g');
      elsif exists (select from pg_dist_partition p where p.logicalrelid = r.rel and p.partmethod = 'h'
                      and p.colocationid = (select colocationid from pg_dist_partition where logicalrelid = 'app.organizations'::regclass)) then
        v_source := regexp_replace(v_source, '(^|[^\w."])' || r.schema || '\.' || r.name || '\M',
                                   '\1' || format('%I.%I', r.schema, r.name || '_' || get_shard_id_for_distribution_column(r.rel, p_organization_id)), 'g');
      else
        perform app_private.raise('SV500', 'REPORTING_UNAVAILABLE', format('reporting view %s reads %s.%s, which this node cannot read alone', p_view, r.schema, r.name));
      end if;
    end loop;
    return query select * from app_private.reporting_rows_read(v_source);
  end
  $f$;

  create or replace function reporting_private.bi_rows(p_view text) returns setof jsonb
  language plpgsql volatile security definer
  set search_path = pg_catalog, pg_temp
  as $f$
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
    select a.authinfo into v_auth from pg_dist_authinfo a
     where a.rolename = 'svc_reporting_relay' and a.nodeid in (n.nodeid, 0)
     order by a.nodeid desc limit 1;
    if v_connection = any (coalesce(svc_dblink.dblink_get_connections(), '{}')) then
      perform svc_dblink.dblink_disconnect(v_connection);
    end if;
    -- dblink_connect_u: the relay's password comes from pg_dist_authinfo, or the node's own
    -- authentication (a certificate, .pgpass); the connection string is fixed here.
    perform svc_dblink.dblink_connect_u(v_connection,
      concat_ws(' ', format('host=%s port=%s dbname=%s user=svc_reporting_relay',
                            app_private.conninfo_value(n.nodename), n.nodeport, app_private.conninfo_value(current_database())),
                nullif(current_setting('citus.node_conninfo', true), ''), v_auth));
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
  $f$;

  alter function reporting_private.bi_rows(text) owner to svc_relay;
  alter function reporting_private.bi_rows_of(text, text, text[], text) owner to svc_relay;
  alter function app_private.bi_relay_proof(integer, bigint, text, text, text[]) owner to svc_relay;
  alter function app_private.backend_started() owner to svc_relay;
end
$do$;

/** On Citus, each worker's own objects: svc_gate's read of its context key, its sequences for
 * svc_owner, svc_worker and svc_admin, and the generation of its api views' copies for svc_relay. */
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
          execute format('grant usage on sequence %s to svc_owner, svc_worker, svc_admin', s);
        end loop;
        if to_regclass('app_private.shard_views_generation') is not null and to_regrole('svc_relay') is not null then
          grant select on sequence app_private.shard_views_generation to svc_relay;
        end if;
      end
      $g$ $w$)
   where not success;
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_PRIVILEGES_NOT_COPIED', format('granting the workers'' own objects failed: %s', v_failed));
  end if;
end
$$;
comment on function app_private.citus_node_grants() is
  'On Citus: each worker''s own objects (which Citus does not propagate): svc_gate''s read of its context key, its sequences for svc_owner, svc_worker and svc_admin, the api views'' copies'' generation for svc_relay.';
revoke all on function app_private.citus_node_grants() from public;

-- migrate:down
do $do$
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the relay''s owner is not undone: restore a backup, or drop the database');
end
$do$;
