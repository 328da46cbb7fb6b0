-- migrate:up

/** On Citus, the BI relay's password alone reads nothing: each read carries a proof, made on the
 * coordinator for the one worker backend that runs it.
 *
 * A BI read on a cluster reaches the organization's worker through the relay
 * (reporting_private.bi_rows on the coordinator opens a dblink connection as svc_reporting_relay and
 * calls reporting_private.bi_rows_of there, migration 20261128181400). bi_rows_of trusted any
 * session of the relay, and took the organization and Roles as arguments: whoever held the relay's
 * password read every organization with any Roles. Now:
 * - every node holds the same relay key (app_private.relay_keys, a reference table no role but a
 *   superuser reads: Citus copies it to every node, a node added later included);
 * - bi_rows asks the worker backend of its dblink connection for its pid and start time, then calls
 *   bi_rows_of there with a proof: a keyed SHA-256 over that backend, the view, the organization and
 *   the Roles, which the BI login's own binding chose (app_private.bi_context);
 * - bi_rows_of answers only in the backend the proof names, and only for what it names. The proof
 *   stands in that statement's text, which pg_stat_activity shows to every session of the relay:
 *   replayed from any other session, it names another backend and opens nothing.
 * On one server nothing here is made: BI logins read the reporting views where they are. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

do $do$
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;

  create table app_private.relay_keys (
    id integer primary key default 1 check (id = 1),
    inner_key bytea not null check (length(inner_key) = 32),
    outer_key bytea not null check (length(outer_key) = 32)
  );
  comment on table app_private.relay_keys is
    'On Citus: the key of the BI relay''s proofs, the same on every node (a reference table); read by superusers only.';
  revoke all on table app_private.relay_keys from public;
  perform create_reference_table('app_private.relay_keys');
  -- Two v4 UUIDs each, from the server's strong random source: 244 random bits per key.
  insert into app_private.relay_keys (inner_key, outer_key)
  values (decode(replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''), 'hex'),
          decode(replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''), 'hex'));

  -- The proof: a keyed SHA-256 (the construction of app_private.context_mac) over one backend of
  -- one node (its pid and its start, in microseconds) and what is read there. The key is read from
  -- this node's own placement of the table (every worker has one): inside the relay's calls no query
  -- may go through Citus ("a distributed query from a query on a shard").
  create function app_private.bi_relay_proof(p_pid integer, p_started bigint, p_view text, p_organization_id text, p_roles text[])
  returns text
  language plpgsql stable
  set search_path = pg_catalog, pg_temp
  as $f$
  declare
    v_shard bigint := (select s.shardid from pg_dist_shard s where s.logicalrelid = 'app_private.relay_keys'::regclass);
    k record;
  begin
    if exists (select from pg_dist_placement p where p.shardid = v_shard and p.groupid = (select groupid from pg_dist_local_group)) then
      execute format('select inner_key, outer_key from app_private.%I', 'relay_keys_' || v_shard) into k;
    else
      select x.inner_key, x.outer_key into k from app_private.relay_keys x;
    end if;
    return encode(sha256(k.outer_key || sha256(k.inner_key || convert_to(concat_ws(chr(31), p_pid::text, p_started::text,
             p_view, p_organization_id, array_to_string(p_roles, ',')), 'UTF8'))), 'hex');
  end
  $f$;
  revoke all on function app_private.bi_relay_proof(integer, bigint, text, text, text[]) from public;

  -- This backend's start, in microseconds: what a proof names beside the pid.
  create function app_private.backend_started() returns bigint
  language sql stable
  set search_path = pg_catalog, pg_temp
  as $f$
    select (extract(epoch from a.backend_start) * 1000000)::bigint from pg_stat_activity a where a.pid = pg_backend_pid()
  $f$;
  revoke all on function app_private.backend_started() from public;

  drop function reporting_private.bi_rows_of(text, text, text[]);
  -- On the worker: the rows of one reporting view for one organization, read in this node alone,
  -- for the relay's backend that the proof names.
  create function reporting_private.bi_rows_of(p_view text, p_organization_id text, p_roles text[], p_proof text) returns setof jsonb
  language plpgsql volatile security definer
  set search_path = pg_catalog, pg_temp
  as $f$
  declare
    v_view regclass;
    v_shard bigint;
    v_views text[];
    v_flags text;
    v_source text;
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
    execute format('select app_private.read_flags($1, o.ticket_module_enabled, o.finance_may_read_tickets, o.hr_may_read_tickets,
                      o.hr_may_read_time_entries) from app.%I o where o.id = $2', 'organizations_' || v_shard)
      into v_flags using p_roles, p_organization_id;
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
  revoke all on function reporting_private.bi_rows_of(text, text, text[], text) from public;
  grant execute on function reporting_private.bi_rows_of(text, text, text[], text) to svc_reporting_relay;

  -- On the coordinator: the BI session's rows of one reporting view, from its organization's
  -- worker, over a dblink connection whose backend the proof names.
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
    perform svc_dblink.dblink_connect(v_connection,
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
end
$do$;

-- The relay's privileges on every worker, for the function's new signature.
CREATE OR REPLACE FUNCTION app_private.citus_relay_privileges() RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_failed text;
begin
  if to_regnamespace('reporting_private') is null then
    return;
  end if;
  select string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') into v_failed
    from run_command_on_workers($w$do $r$ begin set local citus.enable_ddl_propagation = off;
      revoke execute on all functions in schema svc_dblink from public;
      revoke all on schema svc_dblink, reporting_private from public;
      grant usage on schema reporting_private to svc_reporting_relay;
      revoke all on function reporting_private.bi_rows_of(text, text, text[], text) from public;
      grant execute on function reporting_private.bi_rows_of(text, text, text[], text) to svc_reporting_relay;
      end $r$$w$)
   where not success;
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_PRIVILEGES_NOT_COPIED', format('the relay''s privileges on the workers: %s', v_failed));
  end if;
end
$_$;

-- migrate:down
do $do$
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the relay''s proof is not undone: restore a backup, or drop the database');
end
$do$;
CREATE OR REPLACE FUNCTION app_private.citus_relay_privileges() RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_failed text;
begin
  if to_regnamespace('reporting_private') is null then
    return;
  end if;
  select string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') into v_failed
    from run_command_on_workers($w$do $r$ begin set local citus.enable_ddl_propagation = off;
      revoke execute on all functions in schema svc_dblink from public;
      revoke all on schema svc_dblink, reporting_private from public;
      grant usage on schema reporting_private to svc_reporting_relay;
      revoke all on function reporting_private.bi_rows_of(text, text, text[]) from public;
      grant execute on function reporting_private.bi_rows_of(text, text, text[]) to svc_reporting_relay;
      end $r$$w$)
   where not success;
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_PRIVILEGES_NOT_COPIED', format('the relay''s privileges on the workers: %s', v_failed));
  end if;
end
$_$;

