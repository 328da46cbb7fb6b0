-- migrate:up

/** Issue 37: BI logins read their organization on a Citus cluster.
 *
 * A reporting view's rows come from api views whose correlated subqueries Citus cannot plan across
 * shards, and whose shard queries Citus would send to the workers as the BI login itself, which may
 * read no table. On a cluster each reporting view therefore reads a function of its name
 * (`reporting_private.tasks()`), which asks the organization's worker for the rows in one delegated
 * call, `reporting_private.tasks_of(organization, login)`; that call runs there as `svc_api` and
 * reads the api view's function (`api.tasks()`, the organization's own shards) under the BI login's
 * organization and Roles. One server keeps its views as they are; the functions exist there too.
 *
 * Who may call what, and why:
 * - A BI login may execute `reporting_private.tasks()` but cannot name it (no USAGE on the schema):
 *   its view calls it by oid. It can name nothing that is delegated, since Citus 13.2.2 crashes the
 *   coordinator when a delegated function is called with a NULL distribution argument, before any
 *   privilege is checked (docs/scaling.md, "No delegated call gets a null organization").
 * - `reporting_private.tasks()` is owned by `svc_reporting_relay`, so the delegated call reaches the
 *   worker as that role (Citus connects as the current role; `svc_api` cannot log in). The relay
 *   runs nothing but these calls; it is LOGIN on a cluster only, and a deployment lets it connect
 *   from the coordinator only (pg_dist_authinfo, pg_hba: docs/scaling.md).
 * - `reporting_private.tasks_of()` may be executed by the relay only. It records which login asked
 *   in the transaction (`svc.bi_login`), which `app_private.bi_context()` believes in a session of
 *   the relay and nowhere else; the login's organization and Roles are then read where the call runs.
 * - `app_private.bi_logins` becomes a reference table, so every node has the logins; a query on a
 *   worker that is itself a shard's query cannot read a Citus table, so `bi_context()` reads the
 *   node's own copy (its one shard) directly. */

do $$
begin
  if not exists (select from pg_roles where rolname = 'svc_reporting_relay') then
    create role svc_reporting_relay nologin nosuperuser nobypassrls nocreatedb nocreaterole noinherit;
  end if;
  if exists (select from pg_extension where extname = 'citus') then
    alter role svc_reporting_relay login;
    if not exists (select from pg_dist_partition where logicalrelid = 'app_private.bi_logins'::regclass) then
      perform create_reference_table('app_private.bi_logins');
      perform truncate_local_data_after_distributing_table('app_private.bi_logins');
    end if;
  end if;
end
$$;

/** The BI session's login: the session's own, or in a session of the relay, the one the delegated
 * call recorded. On Citus, read from this node's copy of the reference table. */
create or replace function app_private.bi_context(out organization_id text, out svc_roles text[])
language plpgsql stable security definer parallel restricted
set search_path = pg_catalog
as $$
declare
  v_table text := 'app_private.bi_logins';
  v_login text := session_user;
begin
  if v_login = 'svc_reporting_relay' then
    v_login := nullif(current_setting('svc.bi_login', true), '');
    if v_login is null then
      return;
    end if;
  end if;
  if to_regclass('pg_catalog.pg_dist_shard') is not null then
    select format('app_private.%I', 'bi_logins_' || s.shardid) into v_table
      from pg_catalog.pg_dist_shard s where s.logicalrelid = to_regclass('app_private.bi_logins');
  end if;
  -- A worker without the table (before this migration reached it) knows no BI login.
  if v_table is null or to_regclass(v_table) is null then
    return;
  end if;
  execute format('select b.organization_id, b.svc_roles from %s b where b.role_name = $1', v_table)
     into organization_id, svc_roles using v_login;
end
$$;
grant execute on function app_private.bi_context() to svc_reporting_relay;

create schema reporting_private;
grant usage on schema reporting_private to svc_api, svc_reporting_relay;
grant usage on schema app_private to svc_reporting_relay;

/** Per reporting view: `<name>_of(organization, login)`, the rows in the organization's worker, and
 * `<name>()`, which a reporting view reads on a cluster. */
do $do$
declare
  v record;
  v_citus boolean := exists (select from pg_extension where extname = 'citus');
begin
  grant create on schema reporting_private to svc_reporting_relay;
  for v in select * from (values ('members', 'api.members', 'select * from api.members()'),
                                 ('projects', 'api.projects', 'select * from api.projects()'),
                                 ('tasks', 'api.tasks', 'select * from api.tasks()'),
                                 ('time_entries', 'api.time_entries', 'select * from api.time_entries()'),
                                 ('approvals', 'api.approvals', 'select * from api.approvals()'),
                                 ('invoices', 'api.invoices', 'select * from api.invoices()'),
                                 ('tickets', 'api.tickets', 'select * from api.tickets()'),
                                 ('payments', 'app.payments', 'select * from app.payments'))
                          as x(name, row_type, source) loop
    execute format($f$
      create function reporting_private.%1$I(p_organization_id text, p_login text) returns setof %2$s
      language plpgsql stable security definer
      set search_path = pg_catalog
      as $body$
      begin
        if session_user <> 'svc_reporting_relay' or p_login is null then
          return;
        end if;
        perform set_config('svc.bi_login', p_login, true);
        return query select * from (%3$s) r where r.organization_id = p_organization_id;
      end
      $body$$f$, v.name || '_of', v.row_type, v.source);
    execute format('alter function reporting_private.%I(text, text) owner to svc_api', v.name || '_of');
    execute format('revoke execute on function reporting_private.%I(text, text) from public', v.name || '_of');
    execute format('grant execute on function reporting_private.%I(text, text) to svc_reporting_relay', v.name || '_of');
    if v_citus then
      perform create_distributed_function(format('reporting_private.%I(text, text)', v.name || '_of')::regprocedure, '$1',
                                          colocate_with => 'app.organizations', force_delegation => true);
    end if;

    execute format($f$
      create function reporting_private.%1$I() returns setof %2$s
      language plpgsql stable security definer
      set search_path = pg_catalog
      as $body$
      declare
        v_organization_id text := (app_private.bi_context()).organization_id;
        -- A value, not the call: Citus would send `session_user` to be evaluated on the worker.
        v_login text := session_user;
      begin
        -- Never a NULL organization to a delegated call (it would crash the coordinator).
        if v_organization_id is null then
          return;
        end if;
        return query select * from reporting_private.%3$I(v_organization_id, v_login);
      end
      $body$$f$, v.name, v.row_type, v.name || '_of');
    execute format('alter function reporting_private.%I() owner to svc_reporting_relay', v.name);
    execute format('revoke execute on function reporting_private.%I() from public', v.name);
    execute format('grant execute on function reporting_private.%I() to svc_reporting', v.name);
    if v_citus then
      perform create_distributed_function(format('reporting_private.%I()', v.name)::regprocedure);
    end if;

    -- On a cluster the view reads the function in place of the api view (or table).
    if v_citus then
      declare
        v_before text := pg_get_viewdef(format('reporting.%I', v.name)::regclass);
        v_from text := format('FROM %s %s', v.row_type, case v.name when 'payments' then 'y' else 'v' end);
        v_after text := replace(v_before, v_from, format('FROM reporting_private.%I() %s', v.name, case v.name when 'payments' then 'y' else 'v' end));
      begin
        if v_after = v_before or v_after like '%' || v_from || '%' then
          perform app_private.raise('SV500', 'REPORTING_VIEW_NOT_REWRITTEN', format('reporting.%s does not read %s once', v.name, v.row_type));
        end if;
        execute format('create or replace view reporting.%I as %s', v.name, v_after);
      end;
    end if;
  end loop;
  revoke create on schema reporting_private from svc_reporting_relay;
end
$do$;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'restore a backup taken before 20261205002800'); end $$;
