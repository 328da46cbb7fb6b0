-- migrate:up

/** Baseline (issue 38), area 14 of 15. The BI relay on Citus, after the tables are placed (a
 * transaction of its own: its functions reach the workers over other connections).
 * The current definitions that migrations 20261122000100 to 20261205003400 built (git history before
 * the baseline); db/README.md says how they were made and compared. */

/** Issue 37: BI logins read their organization on a Citus cluster.
 *
 * A reporting view reads api views, whose correlated subqueries Citus cannot plan across shards,
 * and a shard query would reach a worker as the BI login, where its organization is not known. On a
 * Citus coordinator each reporting view therefore becomes a view of the same name and columns over
 * `reporting_private.bi_rows('<view>')`, and the original moves to `reporting_private`:
 *
 * - `bi_rows` (on the coordinator, a definer) reads the session's login and organization
 *   (`app_private.bi_context()`: `app_private.bi_logins` is the coordinator's) and asks the worker
 *   that holds the organization's shard group for the rows over a connection of its own (dblink),
 *   as the relay role `svc_reporting_relay`, with one fixed statement:
 *   `select … from reporting_private.bi_rows_of(view, organization, roles)`.
 * - `bi_rows_of` (on that worker, a definer that only the relay may run, and only in a session of
 *   its own) signs a context for that organization and the login's Roles in its backend
 *   (`app_private.set_context`, as a request does) and reads the original reporting view, as
 *   svc_api, over the worker's copies of the api views for that shard group (`api_shard_<n>`,
 *   20261205003100) and the organization's shards of the tables it reads itself: the same policies
 *   and Role projections as one server, in that node alone (a connection to another node would
 *   carry the relay's own SET LOCAL strings, as that connection's role).
 *
 * Why not through Citus: a BI session's `SET LOCAL` strings (with `citus.propagate_set_commands`)
 * are replayed by Citus on every connection of its transaction, whatever role that connection is
 * (docs/scaling.md); a delegated call made for the BI session as a privileged role would run them as
 * that role (the review of 2026-11-28 showed another organization's rows read that way). The dblink
 * connection is not Citus's: nothing of the BI session reaches it but the three values above, each
 * written in as a literal. The BI login can name neither function (no USAGE on the schema), nor
 * dblink (its own schema, no grants), nor any function Citus delegates (no USAGE on app or
 * app_private on a cluster: a NULL organization there crashes the coordinator).
 *
 * The relay authenticates to the workers as any Citus role does: a password in pg_dist_authinfo (or
 * a certificate, or .pgpass), and each worker's pg_hba.conf lets it in from the coordinators only
 * (docs/scaling.md). On one server nothing here is made: the reporting views stay as they are. */
do $do$
declare
  v record;
  v_columns text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  if not exists (select from pg_roles where rolname = 'svc_reporting_relay') then
    create role svc_reporting_relay login nosuperuser nobypassrls nocreatedb nocreaterole noinherit;
  end if;
  -- The relay's sessions read, and only as long as a BI statement may run.
  alter role svc_reporting_relay set default_transaction_read_only = on;
  alter role svc_reporting_relay set statement_timeout = '30s';

  -- A BI session on the coordinator reads its views and nothing else: the views' functions run as
  -- their owner, so it needs no schema of ours but reporting. Without USAGE on app_private it can
  -- name none of the functions Citus delegates by organization there, which crash the coordinator
  -- when called with a NULL organization before any privilege is checked (docs/scaling.md).
  revoke usage on schema app, app_private from svc_reporting;

  create schema if not exists svc_dblink;
  revoke all on schema svc_dblink from public;
  create extension if not exists dblink schema svc_dblink;
  revoke execute on all functions in schema svc_dblink from public;

  create schema if not exists reporting_private;
  revoke all on schema reporting_private from public;
  grant usage on schema reporting_private to svc_reporting_relay;

  -- On the worker, as svc_api (row policies apply to it; to a superuser they would not): one
  -- statement's rows as jsonb. Only bi_rows_of below, a superuser's function, calls it. (In
  -- app_private, where svc_api's functions are made on a worker added later; in reporting_private
  -- the new node refused it.)
  create function app_private.reporting_rows_read(p_statement text) returns setof jsonb
  language plpgsql volatile security definer
  set search_path = pg_catalog, pg_temp
  as $f$
  begin
    return query execute format('select to_jsonb(r) from (%s) r', p_statement);
  end
  $f$;
  alter function app_private.reporting_rows_read(text) owner to svc_api;
  revoke all on function app_private.reporting_rows_read(text) from public;

  -- On the worker: the rows of one reporting view for one organization, read in this node alone.
  create function reporting_private.bi_rows_of(p_view text, p_organization_id text, p_roles text[]) returns setof jsonb
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
    if session_user <> 'svc_reporting_relay' or p_organization_id is null or p_roles is null or v_view is null then
      perform app_private.raise('SV500', 'REPORTING_RELAY_ONLY', 'reporting_private.bi_rows_of is for the reporting relay''s own sessions');
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
  revoke all on function reporting_private.bi_rows_of(text, text, text[]) from public;
  grant execute on function reporting_private.bi_rows_of(text, text, text[]) to svc_reporting_relay;

  -- A value for a libpq connection string: quoted, its backslashes and quotes escaped.
  create function app_private.conninfo_value(p text) returns text
  language sql immutable
  set search_path = pg_catalog, pg_temp
  as $f$ select '''' || replace(replace(p, '\', '\\'), '''', '\''') || '''' $f$;
  revoke all on function app_private.conninfo_value(text) from public;

  -- On the coordinator: the BI session's rows of one reporting view, from its organization's worker.
  create function reporting_private.bi_rows(p_view text) returns setof jsonb
  language plpgsql volatile security definer
  set search_path = pg_catalog, pg_temp
  as $f$
  declare
    b record := app_private.bi_context();
    n record;
    v_auth text;
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
    return query
      select r.j::jsonb
        from svc_dblink.dblink(
               concat_ws(' ', format('host=%s port=%s dbname=%s user=svc_reporting_relay',
                                     app_private.conninfo_value(n.nodename), n.nodeport, app_private.conninfo_value(current_database())),
                         nullif(current_setting('citus.node_conninfo', true), ''), v_auth),
               format('select j::text from reporting_private.bi_rows_of(%L, %L, %L) j', p_view, b.organization_id, b.svc_roles))
             as r(j text);
  end
  $f$;
  revoke all on function reporting_private.bi_rows(text) from public;
  grant execute on function reporting_private.bi_rows(text) to svc_reporting;

  -- Each reporting view: the original moved aside, a view of its name and columns over bi_rows.
  for v in select c.relname::text as name from pg_class c
            where c.relnamespace = 'reporting'::regnamespace and c.relkind = 'v' order by 1 loop
    select string_agg(format('%I %s', a.attname, format_type(a.atttypid, a.atttypmod)), ', ' order by a.attnum) into v_columns
      from pg_attribute a where a.attrelid = format('reporting.%I', v.name)::regclass and a.attnum > 0 and not a.attisdropped;
    execute format('alter view reporting.%I set schema reporting_private', v.name);
    execute format('revoke all on reporting_private.%I from svc_reporting', v.name);
    execute format('create view reporting.%I as select r.* from reporting_private.bi_rows(%L) j, jsonb_to_record(j) as r(%s)',
                   v.name, v.name, v_columns);
    execute format('alter view reporting.%I owner to svc_api', v.name);
    execute format('grant select on reporting.%I to svc_reporting', v.name);
  end loop;
end
$do$;


-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
