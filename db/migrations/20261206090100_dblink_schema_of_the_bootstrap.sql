-- migrate:up

/** The relay's dblink schema is the cluster bootstrap's, a superuser's (db/citus/bootstrap.sql): its
 * owner could rename it and put a function of its own in its place, which the relay's connection
 * function would run with the privileges that read every role's password. Its privileges are the
 * bootstrap's too, so the relay's helper no longer revokes them on the workers. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

create or replace function app_private.citus_relay_privileges() returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  v_failed text;
begin
  if to_regnamespace('reporting_private') is null then
    return;
  end if;
  select string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') into v_failed
    from run_command_on_workers($w$do $r$ begin set local citus.enable_ddl_propagation = off;
      revoke all on schema reporting_private from public;
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

create or replace function app_private.citus_relay_privileges() returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
declare
  v_failed text;
begin
  if to_regnamespace('reporting_private') is null then
    return;
  end if;
  select string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') into v_failed
    from run_command_on_workers($w$do $r$ begin set local citus.enable_ddl_propagation = off;
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
