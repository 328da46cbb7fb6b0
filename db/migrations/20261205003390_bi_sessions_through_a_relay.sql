-- migrate:up

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
 *   (`app_private.set_context`, as a request does) and reads the original reporting view over the
 *   worker's copies of the api views for that shard group (`api_shard_<n>`, 20261205003100): the
 *   same policies and Role projections as one server.
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

  -- On the worker: the rows of one reporting view for one organization, as its copies read them.
  create function reporting_private.bi_rows_of(p_view text, p_organization_id text, p_roles text[]) returns setof jsonb
  language plpgsql volatile security definer
  set search_path = pg_catalog, pg_temp
  as $f$
  declare
    v_shard bigint;
    v_schema text;
    v_views text;
    v_source text;
  begin
    if session_user <> 'svc_reporting_relay' or p_organization_id is null or p_roles is null
       or to_regclass('reporting_private.' || quote_ident(p_view)) is null then
      perform app_private.raise('SV500', 'REPORTING_RELAY_ONLY', 'reporting_private.bi_rows_of is for the reporting relay''s own sessions');
    end if;
    v_shard := get_shard_id_for_distribution_column('app.organizations', p_organization_id);
    v_schema := 'api_shard_' || v_shard;
    v_views := app_private.current_shard_views(v_shard);
    if v_views is null then
      -- Made again within a minute (the worker process's citus_prepare task).
      perform app_private.raise('SV500', 'REPORTING_UNAVAILABLE', 'this organization''s reporting rows are being moved: try again in a minute');
    end if;
    perform app_private.set_context(p_organization_id, null, p_roles);
    v_source := regexp_replace(pg_get_viewdef(('reporting_private.' || quote_ident(p_view))::regclass),
                               '(^|[^\w."])api\.(' || v_views || ')\M', '\1' || v_schema || '.\2', 'g');
    return query execute format('select to_jsonb(r) from (%s) r', rtrim(v_source, '; '));
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
     where p.shardid = get_shard_id_for_distribution_column('app.organizations', b.organization_id) and nd.isactive
     limit 1;
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
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'restore a backup taken before 20261205003390'); end $$;
