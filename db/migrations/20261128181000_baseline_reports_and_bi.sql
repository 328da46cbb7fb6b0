-- migrate:up

/** Baseline (issue 38), area 10 of 15. Reports and BI access: report definitions, runs and results, the reporting views and BI logins.
 * The current definitions that migrations 20261122000100 to 20261205003400 built (git history before
 * the baseline), as pg_dump writes them; db/README.md says how they were made and compared. */
SET LOCAL check_function_bodies = false;
SET LOCAL client_min_messages = warning;
SELECT pg_catalog.set_config('search_path', '', true);

-- function api.report_download_begin(text)

CREATE FUNCTION api.report_download_begin(p_token text) RETURNS TABLE(outcome text, run_id text, report_id text, format text, row_count integer, columns text[], numeric_columns text[])
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  l record;
  r app.report_runs;
begin
  perform app_private.refuse_on_coordinator('api.report_download_begin(text)');
  outcome := 'not_found';
  select * into l from app_private.download_link(p_token, 'rrun', 'report-download');
  if l.id is null or l.organization_id is null then
    return next;
    return;
  end if;
  if l.expires <= extract(epoch from now()) then
    outcome := 'expired';
  elsif not app_private.begin_delivery_context(l.organization_id, l.client_id) then
    outcome := 'client_inactive';
  else
    -- Only a run the client may read now (api.report_runs: its own, with the report's Roles).
    perform from api.report_runs v where v.id = l.id;
    if found then
      select x.* into r from app.report_runs x where x.organization_id = l.organization_id and x.id = l.id;
    end if;
    if r.id is not null and r.status = 'succeeded' and not r.results_purged and r.expires_at > now() then
      outcome := 'ok';
      run_id := r.id;
      report_id := r.report_id;
      format := r.format;
      row_count := r.row_count;
      select d.columns, d.numeric_columns into columns, numeric_columns
        from app_private.report_definitions d where d.id = r.report_id;
    end if;
  end if;
  return next;
end
$$;

-- function api.report_download_create(text, text, integer)

CREATE FUNCTION api.report_download_create(p_report_id text, p_run_id text, p_lifetime_seconds integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  v_expires bigint := extract(epoch from now())::bigint + p_lifetime_seconds;
  v_message text := p_run_id || '.' || v__organization_id || '.' || app.current_client_id() || '.' || v_expires;
begin
  perform api.report_results_ready(p_report_id, p_run_id);
  return jsonb_build_object('object', 'report_download', 'report_id', p_report_id, 'run_id', p_run_id,
    'format', (select r.format from app.report_runs r where r.organization_id = v__organization_id and r.id = p_run_id),
    'download_token', v_message || '.' || app_private.capability_mac('report-download', v_message),
    'expires_at', app_private.iso_timestamp(to_timestamp(v_expires)));
end
$$;

ALTER FUNCTION api.report_download_create(p_report_id text, p_run_id text, p_lifetime_seconds integer) OWNER TO svc_api;

-- function api.report_get(text)

CREATE FUNCTION api.report_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  d app_private.report_definitions;
begin
  select * into d from app_private.report_definitions x where x.id = p_id;
  if not found or v__organization_id is null then
    perform app_private.raise('SVN04', 'REPORT_NOT_FOUND', format('no report %s', p_id));
  end if;
  if not (d.required_roles && app.current_roles()) then
    perform app_private.raise('SVR04', 'REPORT_ROLE_REQUIRED',
      format('%s needs one of the Roles %s', p_id, array_to_string(d.required_roles, ', ')));
  end if;
  return query select v.doc, v.version from api.reports v where v.id = p_id;
end
$$;

ALTER FUNCTION api.report_get(p_id text) OWNER TO svc_api;

SET LOCAL default_tablespace = '';

SET LOCAL default_table_access_method = heap;

-- table app.report_results

CREATE TABLE app.report_results (
    organization_id text NOT NULL,
    run_id text NOT NULL,
    n integer NOT NULL,
    data jsonb NOT NULL,
    client_id text NOT NULL
);

ALTER TABLE ONLY app.report_results FORCE ROW LEVEL SECURITY;

-- view api.report_results

CREATE VIEW api.report_results AS
 SELECT x.organization_id,
    x.run_id,
    x.n,
    (x.n)::text AS id,
    x.data AS doc
   FROM app.report_results x;

ALTER TABLE api.report_results OWNER TO svc_api;

-- function api.report_results(text)

CREATE FUNCTION api.report_results(p_id text DEFAULT NULL::text) RETURNS SETOF api.report_results
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.report_results where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.report_results', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

ALTER FUNCTION api.report_results(p_id text) OWNER TO svc_api;

-- comment api.FUNCTION report_results(p_id text)

COMMENT ON FUNCTION api.report_results(p_id text) IS 'The rows of view api.report_results for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

-- function api.report_results_ready(text, text)

CREATE FUNCTION api.report_results_ready(p_report_id text, p_run_id text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  r app.report_runs;
begin
  perform api.report_run_get(p_report_id, p_run_id);
  select * into r from app.report_runs x where x.organization_id = v__organization_id and x.id = p_run_id;
  if r.status = 'failed' then
    perform app_private.raise('SVC09', 'REPORT_FAILED', coalesce(r.error ->> 'detail', 'the run failed'));
  elsif r.status <> 'succeeded' then
    perform app_private.raise('SVC09', 'CONFLICT', format('the run is %s; read its results once it succeeded (report_run.succeeded)', r.status));
  elsif r.results_purged or r.expires_at <= now() then
    perform app_private.raise('SVC09', 'REPORT_RUN_EXPIRED', format('the results expired at %s; run the report again', app_private.iso_timestamp(r.expires_at)));
  end if;
  return true;
end
$$;

ALTER FUNCTION api.report_results_ready(p_report_id text, p_run_id text) OWNER TO svc_api;

-- function api.report_rows(text, integer, integer)

CREATE FUNCTION api.report_rows(p_run_id text, p_from integer, p_to integer) RETURNS TABLE(n integer, data jsonb)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
begin
  return query select x.n, x.data from app.report_results x
   where x.organization_id = v__organization_id and x.run_id = p_run_id and x.n between p_from and p_to
   order by x.n;
end
$$;

ALTER FUNCTION api.report_rows(p_run_id text, p_from integer, p_to integer) OWNER TO svc_api;

-- function api.report_run_create(text, jsonb, text)

CREATE FUNCTION api.report_run_create(p_report_id text, p_parameters jsonb, p_format text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  d app_private.report_definitions;
  v_id text;
  v_timezone text;
begin
  perform api.report_get(p_report_id);
  select * into d from app_private.report_definitions x where x.id = p_report_id;
  if not p_format = any (d.formats) then
    perform app_private.raise('SVV22', 'EXPORT_FORMAT_NOT_SUPPORTED',
      format('%s offers %s', p_report_id, array_to_string(d.formats, ', ')), '/format');
  end if;
  if p_parameters ? 'from' and p_parameters ? 'to'
     and ((p_parameters ->> 'to')::date < (p_parameters ->> 'from')::date or (p_parameters ->> 'to')::date > (p_parameters ->> 'from')::date + 1096) then
    perform app_private.raise('SVV22', 'INVALID_REPORT_PARAMETERS', 'to must be on or after from, and at most three years later', '/parameters/to');
  end if;
  -- Read first: Citus takes no subquery in the values of an INSERT.
  select o.timezone into v_timezone from app.organizations o where o.id = v__organization_id;
  insert into app.report_runs (organization_id, report_id, definition_version, client_id, parameters, format, timezone)
  values (v__organization_id, d.id, d.version, app.current_client_id(), p_parameters, p_format,
          v_timezone)
  returning id into v_id;
  perform app_private.queue_report_run(v_id);
  return (select v.doc from api.report_runs v where v.id = v_id);
end
$$;

ALTER FUNCTION api.report_run_create(p_report_id text, p_parameters jsonb, p_format text) OWNER TO svc_api;

-- function api.report_run_get(text, text)

CREATE FUNCTION api.report_run_get(p_report_id text, p_run_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform api.report_get(p_report_id);
  if not exists (select from api.report_runs v where v.id = p_run_id and v.report_id = p_report_id) then
    perform app_private.raise('SVN04', 'REPORT_RUN_NOT_FOUND', format('no run %s of %s by your client', p_run_id, p_report_id));
  end if;
  return query select v.doc, v.version from api.report_runs v where v.id = p_run_id;
end
$$;

ALTER FUNCTION api.report_run_get(p_report_id text, p_run_id text) OWNER TO svc_api;

-- table app.report_runs

CREATE TABLE app.report_runs (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('rrun'::text) NOT NULL,
    report_id text NOT NULL,
    definition_version integer NOT NULL,
    client_id text NOT NULL,
    parameters jsonb NOT NULL,
    format text NOT NULL,
    status text DEFAULT 'queued'::text NOT NULL,
    timezone text NOT NULL,
    data_as_of timestamp with time zone,
    row_count integer,
    error jsonb,
    results_purged boolean DEFAULT false NOT NULL,
    expires_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    CONSTRAINT report_runs_failed_has_error CHECK (((status = 'failed'::text) = (error IS NOT NULL))),
    CONSTRAINT report_runs_format_valid CHECK ((format = ANY (ARRAY['json'::text, 'csv'::text]))),
    CONSTRAINT report_runs_status_valid CHECK ((status = ANY (ARRAY['queued'::text, 'running'::text, 'succeeded'::text, 'failed'::text])))
);

ALTER TABLE ONLY app.report_runs FORCE ROW LEVEL SECURITY;

-- view api.report_runs

CREATE VIEW api.report_runs AS
 SELECT r.organization_id,
    r.id,
    r.report_id,
    r.status,
    r.created_at,
    r.expires_at,
    r.results_purged,
    r.error,
    jsonb_build_object('object', 'report_run', 'id', r.id, 'report_id', r.report_id, 'definition_version', r.definition_version, 'status', r.status, 'parameters', r.parameters, 'format', r.format, 'timezone', r.timezone, 'data_as_of', app_private.iso_timestamp(r.data_as_of), 'row_count', r.row_count, 'error', r.error, 'expires_at', app_private.iso_timestamp(r.expires_at), 'created_at', app_private.iso_timestamp(r.created_at), 'started_at', app_private.iso_timestamp(r.started_at), 'finished_at', app_private.iso_timestamp(r.finished_at)) AS doc,
    NULL::integer AS version
   FROM app.report_runs r;

ALTER TABLE api.report_runs OWNER TO svc_api;

-- function api.report_runs(text)

CREATE FUNCTION api.report_runs(p_id text DEFAULT NULL::text) RETURNS SETOF api.report_runs
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.report_runs where organization_id = $1 and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.report_runs', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

ALTER FUNCTION api.report_runs(p_id text) OWNER TO svc_api;

-- comment api.FUNCTION report_runs(p_id text)

COMMENT ON FUNCTION api.report_runs(p_id text) IS 'The rows of view api.report_runs for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

-- table app_private.report_definitions

CREATE TABLE app_private.report_definitions (
    id text NOT NULL,
    name text NOT NULL,
    description text NOT NULL,
    required_roles text[] NOT NULL,
    parameters_schema jsonb NOT NULL,
    formats text[] NOT NULL,
    version integer NOT NULL,
    function_name text NOT NULL,
    columns text[] NOT NULL,
    numeric_columns text[] DEFAULT '{}'::text[] NOT NULL,
    CONSTRAINT report_definitions_id_format CHECK ((id ~ '^rpt_[a-z_]+$'::text)),
    CONSTRAINT report_definitions_numeric_columns_are_columns CHECK ((numeric_columns <@ columns))
);

-- view api.reports

CREATE VIEW api.reports WITH (security_barrier='true') AS
 SELECT d.id,
    d.required_roles,
    jsonb_build_object('object', 'report_definition', 'id', d.id, 'name', d.name, 'description', d.description, 'required_roles', to_jsonb(d.required_roles), 'parameters_schema', d.parameters_schema, 'formats', to_jsonb(d.formats), 'columns', to_jsonb(d.columns), 'version', d.version) AS doc,
    d.version,
    d.id AS sort_id
   FROM app_private.report_definitions d
  WHERE (d.required_roles && ( SELECT app.current_roles() AS current_roles));

ALTER TABLE api.reports OWNER TO svc_api;

-- function api.reports(text)

CREATE FUNCTION api.reports(p_id text DEFAULT NULL::text) RETURNS SETOF api.reports
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.reports where true and ($2 is null or id = $2)' using v_organization_id, p_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.reports', v_organization_id) || ') v where true and ($2 is null or id = $2)'
            using v_organization_id, p_id;
        end if;
      end
      $_$;

ALTER FUNCTION api.reports(p_id text) OWNER TO svc_api;

-- comment api.FUNCTION reports(p_id text)

COMMENT ON FUNCTION api.reports(p_id text) IS 'The rows of view api.reports for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';

-- function app_private.bi_context()

CREATE FUNCTION app_private.bi_context(OUT organization_id text, OUT svc_roles text[]) RETURNS record
    LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL RESTRICTED
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if to_regclass('app_private.bi_logins') is null then
    return;
  end if;
  select b.organization_id, b.svc_roles into organization_id, svc_roles
    from app_private.bi_logins b where b.role_name = session_user;
end
$$;

-- function app_private.queue_report_run(text)

CREATE FUNCTION app_private.queue_report_run(p_run_id text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  perform app_private.queue_job(v__organization_id, 'report_run', json_build_object('run_id', p_run_id),
                                'report_run:' || p_run_id, 3);
end
$$;

-- function app_private.report_run_execute(text, text, interval)

CREATE FUNCTION app_private.report_run_execute(p_organization_id text, p_run_id text, p_retention interval) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  r app.report_runs;
  d app_private.report_definitions;
  v_count integer;
  v_finished timestamptz;
begin
  select * into r from app.report_runs x where x.organization_id = p_organization_id and x.id = p_run_id for update;
  if not found or r.status <> 'running' then
    return coalesce(r.status, 'missing');
  end if;
  select * into d from app_private.report_definitions x where x.id = r.report_id;
  if not app_private.begin_delivery_context(p_organization_id, r.client_id) then
    update app.report_runs x set status = 'failed', finished_at = now(),
           error = jsonb_build_object('code', 'REPORT_FAILED', 'detail', 'the API Client can no longer make requests')
     where x.organization_id = p_organization_id and x.id = p_run_id;
    return 'failed';
  end if;
  if not (d.required_roles && app.current_roles()) then
    perform app_private.set_context(null, null, null);
    update app.report_runs x set status = 'failed', finished_at = now(),
           error = jsonb_build_object('code', 'REPORT_FAILED', 'detail',
             format('the API Client no longer holds one of the Roles %s', array_to_string(d.required_roles, ', ')))
     where x.organization_id = p_organization_id and x.id = p_run_id;
    return 'failed';
  end if;
  begin
    execute format('insert into app.report_results (organization_id, run_id, n, data)
                    select $1, $2, (row_number() over ())::integer, x from %s($3) x', d.function_name)
      using p_organization_id, r.id, r.parameters;
    get diagnostics v_count = row_count;
  exception when others then
    perform app_private.set_context(null, null, null);
    update app.report_runs x set status = 'failed', finished_at = now(),
           error = jsonb_build_object('code', 'REPORT_FAILED', 'detail', 'the report could not be computed')
     where x.organization_id = p_organization_id and x.id = p_run_id;
    return 'failed';
  end;
  perform app_private.set_context(null, null, null);
  -- Values, not clock_timestamp(): Citus takes no volatile function in a write.
  v_finished := clock_timestamp();
  update app.report_runs x set status = 'succeeded', data_as_of = now(), finished_at = v_finished, row_count = v_count,
         expires_at = v_finished + p_retention
   where x.organization_id = p_organization_id and x.id = p_run_id;
  return 'succeeded';
end
$_$;

-- function app_private.report_run_start(text, text)

CREATE FUNCTION app_private.report_run_start(p_organization_id text, p_run_id text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  update app.report_runs r set status = 'running', started_at = now()
   where r.organization_id = p_organization_id and r.id = p_run_id and r.status = 'queued';
  return found;
end
$$;

-- function app_private.tg_report_runs__emit()

CREATE FUNCTION app_private.tg_report_runs__emit() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if new.status <> old.status and new.status in ('succeeded', 'failed') then
    perform app_private.emit_event(new.organization_id, 'report_run.' || new.status, 'report_run', new.id, 1);
  end if;
  return null;
end
$$;

-- function app_private.tg_report_runs__lifecycle()

CREATE FUNCTION app_private.tg_report_runs__lifecycle() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if tg_op = 'INSERT' then
    if new.status <> 'queued' then
      perform app_private.raise('SVC09', 'CONFLICT', 'a report run starts queued');
    end if;
    return new;
  end if;
  if (new.organization_id, new.id, new.report_id, new.definition_version, new.client_id, new.parameters, new.format, new.created_at)
     is distinct from (old.organization_id, old.id, old.report_id, old.definition_version, old.client_id, old.parameters, old.format, old.created_at) then
    perform app_private.raise('SVC09', 'CONFLICT', 'a report run''s request never changes');
  end if;
  if new.status <> old.status and not ((old.status, new.status) in (('queued', 'running'), ('running', 'succeeded'), ('running', 'failed'), ('queued', 'failed'))) then
    perform app_private.raise('SVC09', 'CONFLICT', format('a report run moves queued → running → succeeded or failed, not %s → %s', old.status, new.status));
  end if;
  if old.results_purged and not new.results_purged then
    perform app_private.raise('SVC09', 'CONFLICT', 'purged results do not come back');
  end if;
  return new;
end
$$;

-- function control.purge_expired_report_results()

CREATE FUNCTION control.purge_expired_report_results() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_runs text[];
begin
  with gone as (update app.report_runs r set results_purged = true
                 where not r.results_purged and r.expires_at < now() returning r.organization_id, r.id)
  select array_agg(id) into v_runs from gone;
  delete from app.report_results x where x.run_id = any (coalesce(v_runs, '{}'));
  return coalesce(cardinality(v_runs), 0);
end
$$;

-- function control.reporting_grant(text, text[])

CREATE FUNCTION control.reporting_grant(p_org text, p_roles text[]) RETURNS TABLE(role_name text, password text)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_role text := 'svc_bi_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12);
  v_password text := encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex');
begin
  perform app_private.require_found(exists (select from app.organizations o where o.id = p_org), 'ORGANIZATION_NOT_FOUND', p_org);
  insert into app_private.bi_logins (organization_id, role_name, svc_roles) values (p_org, v_role, p_roles);
  execute format('create role %I login password %L inherit nosuperuser nobypassrls nocreatedb nocreaterole connection limit 5 in role svc_reporting',
                 v_role, v_password);
  execute format('alter role %I set default_transaction_read_only = on', v_role);
  execute format('alter role %I set statement_timeout = %L', v_role, '30s');
  execute format('alter role %I set search_path = reporting', v_role);
  role_name := v_role;
  password := v_password;
  return next;
end
$$;

-- function control.reporting_revoke(text)

CREATE FUNCTION control.reporting_revoke(p_role text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  delete from app_private.bi_logins b where b.role_name = p_role;
  perform app_private.require_found(found, 'BI_LOGIN_NOT_FOUND', p_role);
  perform pg_terminate_backend(a.pid) from pg_stat_activity a where a.usename = p_role;
  execute format('drop role if exists %I', p_role);
end
$$;

-- function reporting.invoice_aging(jsonb)

CREATE FUNCTION reporting.invoice_aging(p jsonb) RETURNS SETOF jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  return query
  select jsonb_build_object('customer_id', o.customer_id, 'customer_name', c.name, 'currency', o.currency,
           'due_0_30', app_private.money_text(coalesce(sum(o.due) filter (where o.age <= 30), 0), max(o.scale)),
           'due_31_60', app_private.money_text(coalesce(sum(o.due) filter (where o.age between 31 and 60), 0), max(o.scale)),
           'due_61_90', app_private.money_text(coalesce(sum(o.due) filter (where o.age between 61 and 90), 0), max(o.scale)),
           'due_over_90', app_private.money_text(coalesce(sum(o.due) filter (where o.age > 90), 0), max(o.scale)),
           'total_due', app_private.money_text(sum(o.due), max(o.scale)), 'invoices', count(*))
    from (select i.customer_id, i.currency, i.scale, i.total - i.amount_paid as due,
                 coalesce((p ->> 'as_of')::date, current_date) - coalesce(i.due_date, i.issue_date, i.created_at::date) as age
            from app.invoices i
           where i.organization_id = v__organization_id and i.status = 'sent' and i.total > i.amount_paid) o
    join app.customers c on c.organization_id = v__organization_id and c.id = o.customer_id
   group by o.customer_id, c.name, o.currency
   order by c.name, o.customer_id, o.currency;
end
$$;

ALTER FUNCTION reporting.invoice_aging(p jsonb) OWNER TO svc_api;

-- function reporting.member_utilization(jsonb)

CREATE FUNCTION reporting.member_utilization(p jsonb) RETURNS SETOF jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  v_days integer;
begin
  select count(*)::integer into v_days from generate_series((p ->> 'from')::date, (p ->> 'to')::date, interval '1 day') d
   where extract(isodow from d) < 6;
  return query
  select jsonb_build_object('member_id', m.id, 'display_name', m.display_name,
           'worked_minutes', coalesce(w.minutes, 0), 'billable_minutes', coalesce(w.billable, 0),
           'capacity_minutes', v_days * coalesce((p ->> 'capacity_minutes_per_day')::integer, 480),
           'utilization', case when v_days = 0 then null
                               else round(coalesce(w.minutes, 0)::numeric / (v_days * coalesce((p ->> 'capacity_minutes_per_day')::integer, 480)), 4)::text end,
           'billable_utilization', case when v_days = 0 then null
                               else round(coalesce(w.billable, 0)::numeric / (v_days * coalesce((p ->> 'capacity_minutes_per_day')::integer, 480)), 4)::text end)
    from app.members m
    left join (select e.member_id, sum(e.minutes) as minutes, coalesce(sum(e.minutes) filter (where e.billable), 0) as billable
                 from app.time_entries e
                where e.organization_id = v__organization_id
                  and e.deleted_at is null and e.work_date between (p ->> 'from')::date and (p ->> 'to')::date
                group by e.member_id) w on w.member_id = m.id
   where m.organization_id = v__organization_id and m.status = 'active'
   order by m.id;
end
$$;

ALTER FUNCTION reporting.member_utilization(p jsonb) OWNER TO svc_api;

-- function reporting.payments_received(jsonb)

CREATE FUNCTION reporting.payments_received(p jsonb) RETURNS SETOF jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  return query
  select jsonb_build_object('period_start', date_trunc(coalesce(p ->> 'period', 'month'), y.received_date)::date, 'currency', y.currency,
           'payments', count(*), 'amount', app_private.money_text(sum(y.amount), max(i.scale)))
    from app.payments y
    join app.invoices i on i.organization_id = v__organization_id and i.id = y.invoice_id
   where y.organization_id = v__organization_id and y.received_date between (p ->> 'from')::date and (p ->> 'to')::date
   group by date_trunc(coalesce(p ->> 'period', 'month'), y.received_date), y.currency
   order by date_trunc(coalesce(p ->> 'period', 'month'), y.received_date), y.currency;
end
$$;

ALTER FUNCTION reporting.payments_received(p jsonb) OWNER TO svc_api;

-- function reporting.project_progress(jsonb)

CREATE FUNCTION reporting.project_progress(p jsonb) RETURNS SETOF jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  return query
  select jsonb_build_object('project_id', pr.id, 'project_name', pr.name, 'project_status', pr.status,
           'tasks_total', count(t.id), 'tasks_open', count(t.id) filter (where s.category = 'open'),
           'tasks_done', count(t.id) filter (where s.category = 'done'),
           'tasks_cancelled', count(t.id) filter (where s.category = 'cancelled'),
           'tasks_overdue', count(t.id) filter (where s.category = 'open' and t.due_at < now()),
           'completed_in_range', count(t.id) filter (where t.completed_at::date between coalesce((p ->> 'from')::date, '-infinity')
                                                                                   and coalesce((p ->> 'to')::date, 'infinity')))
    from app.projects pr
    left join (select x.* from app.tasks x where x.organization_id = v__organization_id and x.archived_at is null) t
           on t.project_id = pr.id
    left join (select x.* from app.task_workflow_statuses x where x.organization_id = v__organization_id) s
           on s.workflow_id = t.workflow_id and s.status = t.status
   where pr.organization_id = v__organization_id
     and (coalesce((p ->> 'include_archived')::boolean, false) or pr.status = 'active')
   group by pr.id, pr.name, pr.status
   order by pr.name, pr.id;
end
$$;

ALTER FUNCTION reporting.project_progress(p jsonb) OWNER TO svc_api;

-- function reporting.ticket_volume(jsonb)

CREATE FUNCTION reporting.ticket_volume(p jsonb) RETURNS SETOF jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  return query
  select jsonb_build_object('week_start', w.week::date, 'created', count(t.id),
           'solved', count(t.id) filter (where t.resolved_at is not null),
           'median_hours_to_resolution', round((percentile_cont(0.5) within group (order by extract(epoch from t.resolved_at - t.created_at) / 3600)
                                                filter (where t.resolved_at is not null))::numeric, 1)::text)
    from generate_series(date_trunc('week', (p ->> 'from')::date), (p ->> 'to')::date, interval '1 week') w (week)
    left join (select x.* from app.tickets x
                where x.organization_id = v__organization_id
                  and x.created_at::date between (p ->> 'from')::date and (p ->> 'to')::date) t
           on t.created_at >= w.week and t.created_at < w.week + interval '1 week'
   group by w.week
   order by w.week;
end
$$;

ALTER FUNCTION reporting.ticket_volume(p jsonb) OWNER TO svc_api;

-- function reporting.time_by_project(jsonb)

CREATE FUNCTION reporting.time_by_project(p jsonb) RETURNS SETOF jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  return query
  select jsonb_build_object('project_id', e.project_id, 'project_name', pr.name, 'member_id', e.member_id,
           'billable_minutes', sum(e.minutes) filter (where e.billable), 'non_billable_minutes', coalesce(sum(e.minutes) filter (where not e.billable), 0),
           'total_minutes', sum(e.minutes))
    from app.time_entries e
    join app.projects pr on pr.organization_id = v__organization_id and pr.id = e.project_id
   where e.organization_id = v__organization_id
     and e.deleted_at is null and e.work_date between (p ->> 'from')::date and (p ->> 'to')::date
     and (p ->> 'project_id' is null or e.project_id = p ->> 'project_id')
   group by e.project_id, pr.name, e.member_id
   order by pr.name, e.project_id, e.member_id;
end
$$;

ALTER FUNCTION reporting.time_by_project(p jsonb) OWNER TO svc_api;

-- table app_private.bi_logins

CREATE TABLE app_private.bi_logins (
    organization_id text NOT NULL,
    role_name text NOT NULL,
    svc_roles text[] NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT bi_logins_role_name_format CHECK ((role_name ~ '^svc_bi_[a-z0-9]{12}$'::text)),
    CONSTRAINT bi_logins_roles_valid CHECK (((svc_roles <@ '{member,manager,finance,hr}'::text[]) AND (cardinality(svc_roles) > 0)))
);

ALTER TABLE ONLY app_private.bi_logins FORCE ROW LEVEL SECURITY;

-- view reporting.approvals

CREATE VIEW reporting.approvals WITH (security_invoker='false') AS
 SELECT v.id AS approval_id,
    (v.doc ->> 'type'::text) AS type,
    (v.doc ->> 'status'::text) AS status,
    (v.doc #>> '{resource,type}'::text[]) AS resource_type,
    (v.doc #>> '{resource,id}'::text[]) AS resource_id,
    ((v.doc ->> 'requested_at'::text))::timestamp with time zone AS requested_at,
    ((v.doc ->> 'decided_at'::text))::timestamp with time zone AS decided_at,
    (v.doc ->> 'decision'::text) AS decision
   FROM api.approvals v;

ALTER TABLE reporting.approvals OWNER TO svc_api;

-- view reporting.invoices

CREATE VIEW reporting.invoices WITH (security_invoker='false') AS
 SELECT v.id AS invoice_id,
    v.number,
    v.status,
    v.customer_id,
    v.currency,
    v.issue_date,
    v.due_date,
    ((v.doc ->> 'total'::text))::numeric AS total,
    ((v.doc ->> 'amount_paid'::text))::numeric AS amount_paid,
    ((v.doc ->> 'amount_due'::text))::numeric AS amount_due
   FROM api.invoices v;

ALTER TABLE reporting.invoices OWNER TO svc_api;

-- view reporting.members

CREATE VIEW reporting.members WITH (security_invoker='false') AS
 SELECT v.id AS member_id,
    (v.doc ->> 'display_name'::text) AS display_name,
    (v.doc ->> 'status'::text) AS status,
    (v.doc ->> 'job_title'::text) AS job_title
   FROM api.members v;

ALTER TABLE reporting.members OWNER TO svc_api;

-- view reporting.payments

CREATE VIEW reporting.payments WITH (security_invoker='false') AS
 SELECT y.id AS payment_id,
    y.invoice_id,
    y.amount,
    y.currency,
    y.received_date,
    y.method
   FROM app.payments y;

ALTER TABLE reporting.payments OWNER TO svc_api;

-- view reporting.projects

CREATE VIEW reporting.projects WITH (security_invoker='false') AS
 SELECT v.id AS project_id,
    (v.doc ->> 'code'::text) AS code,
    (v.doc ->> 'name'::text) AS name,
    (v.doc ->> 'status'::text) AS status,
    ((v.doc ->> 'start_date'::text))::date AS start_date,
    ((v.doc ->> 'end_date'::text))::date AS end_date,
    (v.doc ->> 'customer_id'::text) AS customer_id,
    (v.doc ->> 'manager_member_id'::text) AS manager_member_id,
    ((v.doc ->> 'created_at'::text))::timestamp with time zone AS created_at,
    ((v.doc ->> 'updated_at'::text))::timestamp with time zone AS updated_at
   FROM api.projects v;

ALTER TABLE reporting.projects OWNER TO svc_api;

-- view reporting.tasks

CREATE VIEW reporting.tasks WITH (security_invoker='false') AS
 SELECT v.id AS task_id,
    v.project_id,
    (v.doc ->> 'name'::text) AS name,
    (v.doc ->> 'status'::text) AS status,
    (v.doc ->> 'priority'::text) AS priority,
    ((v.doc ->> 'due_at'::text))::timestamp with time zone AS due_at,
    ((v.doc ->> 'completed_at'::text))::timestamp with time zone AS completed_at,
    ((v.doc ->> 'archived'::text))::boolean AS archived,
    ARRAY( SELECT jsonb_array_elements_text(COALESCE((v.doc -> 'assignee_member_ids'::text), '[]'::jsonb)) AS jsonb_array_elements_text) AS assignee_member_ids,
    ((v.doc ->> 'created_at'::text))::timestamp with time zone AS created_at
   FROM api.tasks v;

ALTER TABLE reporting.tasks OWNER TO svc_api;

-- view reporting.tickets

CREATE VIEW reporting.tickets WITH (security_invoker='false') AS
 SELECT v.id AS ticket_id,
    (v.doc ->> 'number'::text) AS number,
    (v.doc ->> 'subject'::text) AS subject,
    v.status,
    v.priority,
    v.assignee_member_id,
    v.project_id,
    v.created_at,
    ((v.doc ->> 'resolved_at'::text))::timestamp with time zone AS resolved_at
   FROM api.tickets v;

ALTER TABLE reporting.tickets OWNER TO svc_api;

-- view reporting.time_entries

CREATE VIEW reporting.time_entries WITH (security_invoker='false') AS
 SELECT v.id AS time_entry_id,
    v.member_id,
    v.project_id,
    (v.doc ->> 'task_id'::text) AS task_id,
    v.work_date,
    ((v.doc ->> 'minutes'::text))::integer AS minutes,
    v.billable,
    v.status
   FROM api.time_entries v
  WHERE (v.deleted_at IS NULL);

ALTER TABLE reporting.time_entries OWNER TO svc_api;

-- constraint app.report_results report_results_pkey

ALTER TABLE ONLY app.report_results
    ADD CONSTRAINT report_results_pkey PRIMARY KEY (organization_id, run_id, n);

-- constraint app.report_runs report_runs_pkey

ALTER TABLE ONLY app.report_runs
    ADD CONSTRAINT report_runs_pkey PRIMARY KEY (organization_id, id);

-- constraint app_private.bi_logins bi_logins_pkey

ALTER TABLE ONLY app_private.bi_logins
    ADD CONSTRAINT bi_logins_pkey PRIMARY KEY (organization_id, role_name);

-- constraint app_private.report_definitions report_definitions_pkey

ALTER TABLE ONLY app_private.report_definitions
    ADD CONSTRAINT report_definitions_pkey PRIMARY KEY (id);

-- index app.report_runs_expiry

CREATE INDEX report_runs_expiry ON app.report_runs USING btree (expires_at) WHERE (NOT results_purged);

-- index app.report_runs_id

CREATE INDEX report_runs_id ON app.report_runs USING btree (id);

-- index app_private.bi_logins_role

CREATE INDEX bi_logins_role ON app_private.bi_logins USING btree (role_name);

-- trigger app.report_results _010_client_of_parent

CREATE TRIGGER _010_client_of_parent BEFORE INSERT OR UPDATE OF client_id ON app.report_results FOR EACH ROW EXECUTE FUNCTION app_private.tg__client_of_parent();

-- trigger app.report_runs _100_lifecycle

CREATE TRIGGER _100_lifecycle BEFORE INSERT OR UPDATE ON app.report_runs FOR EACH ROW EXECUTE FUNCTION app_private.tg_report_runs__lifecycle();

-- trigger app.report_runs _950_emit_event

CREATE TRIGGER _950_emit_event AFTER UPDATE ON app.report_runs FOR EACH ROW EXECUTE FUNCTION app_private.tg_report_runs__emit();

-- fk constraint app.report_results report_results_organization_id_run_id_fkey

ALTER TABLE ONLY app.report_results
    ADD CONSTRAINT report_results_organization_id_run_id_fkey FOREIGN KEY (organization_id, run_id) REFERENCES app.report_runs(organization_id, id) ON DELETE CASCADE;

-- fk constraint app.report_runs report_runs_organization_id_client_id_fkey

ALTER TABLE ONLY app.report_runs
    ADD CONSTRAINT report_runs_organization_id_client_id_fkey FOREIGN KEY (organization_id, client_id) REFERENCES app.api_clients(organization_id, id);

-- fk constraint app.report_runs report_runs_organization_id_fkey

ALTER TABLE ONLY app.report_runs
    ADD CONSTRAINT report_runs_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- fk constraint app.report_runs report_runs_report_id_fkey

ALTER TABLE ONLY app.report_runs
    ADD CONSTRAINT report_runs_report_id_fkey FOREIGN KEY (report_id) REFERENCES app_private.report_definitions(id);

-- fk constraint app_private.bi_logins bi_logins_organization_id_fkey

ALTER TABLE ONLY app_private.bi_logins
    ADD CONSTRAINT bi_logins_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;

-- policy app.report_runs Clients request report runs

CREATE POLICY "Clients request report runs" ON app.report_runs FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- policy app.report_runs Clients see their own report runs

CREATE POLICY "Clients see their own report runs" ON app.report_runs FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- policy app.report_results Results are readable with their run

CREATE POLICY "Results are readable with their run" ON app.report_results FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));

-- row security app.report_results

ALTER TABLE app.report_results ENABLE ROW LEVEL SECURITY;

-- row security app.report_runs

ALTER TABLE app.report_runs ENABLE ROW LEVEL SECURITY;

-- row security app_private.bi_logins

ALTER TABLE app_private.bi_logins ENABLE ROW LEVEL SECURITY;

-- acl api.FUNCTION report_download_begin(p_token text)

REVOKE ALL ON FUNCTION api.report_download_begin(p_token text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.report_download_begin(p_token text) TO svc_runtime;

-- acl api.FUNCTION report_download_create(p_report_id text, p_run_id text, p_lifetime_seconds integer)

REVOKE ALL ON FUNCTION api.report_download_create(p_report_id text, p_run_id text, p_lifetime_seconds integer) FROM PUBLIC;
GRANT ALL ON FUNCTION api.report_download_create(p_report_id text, p_run_id text, p_lifetime_seconds integer) TO svc_runtime;

-- acl api.FUNCTION report_get(p_id text)

REVOKE ALL ON FUNCTION api.report_get(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.report_get(p_id text) TO svc_runtime;

-- acl app.TABLE report_results

GRANT SELECT ON TABLE app.report_results TO svc_api;

-- acl api.TABLE report_results

GRANT SELECT ON TABLE api.report_results TO svc_runtime;

-- acl api.FUNCTION report_results(p_id text)

REVOKE ALL ON FUNCTION api.report_results(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.report_results(p_id text) TO svc_runtime;

-- acl api.FUNCTION report_results_ready(p_report_id text, p_run_id text)

REVOKE ALL ON FUNCTION api.report_results_ready(p_report_id text, p_run_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.report_results_ready(p_report_id text, p_run_id text) TO svc_runtime;

-- acl api.FUNCTION report_rows(p_run_id text, p_from integer, p_to integer)

REVOKE ALL ON FUNCTION api.report_rows(p_run_id text, p_from integer, p_to integer) FROM PUBLIC;
GRANT ALL ON FUNCTION api.report_rows(p_run_id text, p_from integer, p_to integer) TO svc_runtime;

-- acl api.FUNCTION report_run_create(p_report_id text, p_parameters jsonb, p_format text)

REVOKE ALL ON FUNCTION api.report_run_create(p_report_id text, p_parameters jsonb, p_format text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.report_run_create(p_report_id text, p_parameters jsonb, p_format text) TO svc_runtime;

-- acl api.FUNCTION report_run_get(p_report_id text, p_run_id text)

REVOKE ALL ON FUNCTION api.report_run_get(p_report_id text, p_run_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.report_run_get(p_report_id text, p_run_id text) TO svc_runtime;

-- acl app.TABLE report_runs

GRANT SELECT,INSERT ON TABLE app.report_runs TO svc_api;

-- acl api.TABLE report_runs

GRANT SELECT ON TABLE api.report_runs TO svc_runtime;

-- acl api.FUNCTION report_runs(p_id text)

REVOKE ALL ON FUNCTION api.report_runs(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.report_runs(p_id text) TO svc_runtime;

-- acl app_private.TABLE report_definitions

GRANT SELECT ON TABLE app_private.report_definitions TO svc_api;

-- acl api.TABLE reports

GRANT SELECT ON TABLE api.reports TO svc_runtime;

-- acl api.FUNCTION reports(p_id text)

REVOKE ALL ON FUNCTION api.reports(p_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.reports(p_id text) TO svc_runtime;

-- acl app_private.FUNCTION bi_context(OUT organization_id text, OUT svc_roles text[])

REVOKE ALL ON FUNCTION app_private.bi_context(OUT organization_id text, OUT svc_roles text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.bi_context(OUT organization_id text, OUT svc_roles text[]) TO svc_reporting;
GRANT ALL ON FUNCTION app_private.bi_context(OUT organization_id text, OUT svc_roles text[]) TO svc_runtime;
GRANT ALL ON FUNCTION app_private.bi_context(OUT organization_id text, OUT svc_roles text[]) TO svc_api;

-- acl app_private.FUNCTION queue_report_run(p_run_id text)

REVOKE ALL ON FUNCTION app_private.queue_report_run(p_run_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION app_private.queue_report_run(p_run_id text) TO svc_api;

-- acl app_private.FUNCTION report_run_execute(p_organization_id text, p_run_id text, p_retention interval)

REVOKE ALL ON FUNCTION app_private.report_run_execute(p_organization_id text, p_run_id text, p_retention interval) FROM PUBLIC;

-- acl app_private.FUNCTION report_run_start(p_organization_id text, p_run_id text)

REVOKE ALL ON FUNCTION app_private.report_run_start(p_organization_id text, p_run_id text) FROM PUBLIC;

-- acl app_private.FUNCTION tg_report_runs__emit()

REVOKE ALL ON FUNCTION app_private.tg_report_runs__emit() FROM PUBLIC;

-- acl app_private.FUNCTION tg_report_runs__lifecycle()

REVOKE ALL ON FUNCTION app_private.tg_report_runs__lifecycle() FROM PUBLIC;

-- acl control.FUNCTION purge_expired_report_results()

REVOKE ALL ON FUNCTION control.purge_expired_report_results() FROM PUBLIC;

-- acl control.FUNCTION reporting_grant(p_org text, p_roles text[])

REVOKE ALL ON FUNCTION control.reporting_grant(p_org text, p_roles text[]) FROM PUBLIC;

-- acl control.FUNCTION reporting_revoke(p_role text)

REVOKE ALL ON FUNCTION control.reporting_revoke(p_role text) FROM PUBLIC;

-- acl reporting.FUNCTION invoice_aging(p jsonb)

REVOKE ALL ON FUNCTION reporting.invoice_aging(p jsonb) FROM PUBLIC;

-- acl reporting.FUNCTION member_utilization(p jsonb)

REVOKE ALL ON FUNCTION reporting.member_utilization(p jsonb) FROM PUBLIC;

-- acl reporting.FUNCTION payments_received(p jsonb)

REVOKE ALL ON FUNCTION reporting.payments_received(p jsonb) FROM PUBLIC;

-- acl reporting.FUNCTION project_progress(p jsonb)

REVOKE ALL ON FUNCTION reporting.project_progress(p jsonb) FROM PUBLIC;

-- acl reporting.FUNCTION ticket_volume(p jsonb)

REVOKE ALL ON FUNCTION reporting.ticket_volume(p jsonb) FROM PUBLIC;

-- acl reporting.FUNCTION time_by_project(p jsonb)

REVOKE ALL ON FUNCTION reporting.time_by_project(p jsonb) FROM PUBLIC;

-- acl reporting.TABLE approvals

GRANT SELECT ON TABLE reporting.approvals TO svc_reporting;

-- acl reporting.TABLE invoices

GRANT SELECT ON TABLE reporting.invoices TO svc_reporting;

-- acl reporting.TABLE members

GRANT SELECT ON TABLE reporting.members TO svc_reporting;

-- acl reporting.TABLE payments

GRANT SELECT ON TABLE reporting.payments TO svc_reporting;

-- acl reporting.TABLE projects

GRANT SELECT ON TABLE reporting.projects TO svc_reporting;

-- acl reporting.TABLE tasks

GRANT SELECT ON TABLE reporting.tasks TO svc_reporting;

-- acl reporting.TABLE tickets

GRANT SELECT ON TABLE reporting.tickets TO svc_reporting;

-- acl reporting.TABLE time_entries

GRANT SELECT ON TABLE reporting.time_entries TO svc_reporting;

INSERT INTO app_private.report_definitions (id, name, description, required_roles, parameters_schema, formats, version, function_name, columns, numeric_columns) VALUES
	('rpt_time_by_project', 'Time by project and member', 'Billable and non-billable minutes per project and member over a date range (time entries that are not deleted, any status).', '{manager,finance}', '{"type": "object", "required": ["from", "to"], "properties": {"to": {"type": "string", "format": "date"}, "from": {"type": "string", "format": "date"}, "project_id": {"type": "string", "pattern": "^prj_[A-Za-z0-9]{1,64}$"}}, "additionalProperties": false}', '{json,csv}', 1, 'reporting.time_by_project', '{project_id,project_name,member_id,billable_minutes,non_billable_minutes,total_minutes}', '{}'),
	('rpt_project_progress', 'Project progress', 'Tasks per project by status category, overdue open tasks, and tasks completed in an optional date range.', '{member,manager}', '{"type": "object", "properties": {"to": {"type": "string", "format": "date"}, "from": {"type": "string", "format": "date"}, "include_archived": {"type": "boolean"}}, "additionalProperties": false}', '{json,csv}', 1, 'reporting.project_progress', '{project_id,project_name,project_status,tasks_total,tasks_open,tasks_done,tasks_cancelled,tasks_overdue,completed_in_range}', '{}'),
	('rpt_member_utilization', 'Member utilization', 'Worked and billable minutes per active member against a capacity of working days (Monday to Friday) times minutes per day (default 480); utilization as a decimal string.', '{manager}', '{"type": "object", "required": ["from", "to"], "properties": {"to": {"type": "string", "format": "date"}, "from": {"type": "string", "format": "date"}, "capacity_minutes_per_day": {"type": "integer", "maximum": 1440, "minimum": 1}}, "additionalProperties": false}', '{json,csv}', 1, 'reporting.member_utilization', '{member_id,display_name,worked_minutes,billable_minutes,capacity_minutes,utilization,billable_utilization}', '{utilization,billable_utilization}'),
	('rpt_invoice_aging', 'Invoice aging', 'Amounts due on issued invoices per customer and currency, by days past the due date: 0–30 (including not yet due), 31–60, 61–90, over 90.', '{finance}', '{"type": "object", "properties": {"as_of": {"type": "string", "format": "date"}}, "additionalProperties": false}', '{json,csv}', 1, 'reporting.invoice_aging', '{customer_id,customer_name,currency,due_0_30,due_31_60,due_61_90,due_over_90,total_due,invoices}', '{due_0_30,due_31_60,due_61_90,due_over_90,total_due}'),
	('rpt_payments_received', 'Payments received', 'Recorded payments per period (day, week or month) and currency over a date range of received dates.', '{finance}', '{"type": "object", "required": ["from", "to"], "properties": {"to": {"type": "string", "format": "date"}, "from": {"type": "string", "format": "date"}, "period": {"enum": ["day", "week", "month"]}}, "additionalProperties": false}', '{json,csv}', 1, 'reporting.payments_received', '{period_start,currency,payments,amount}', '{amount}'),
	('rpt_ticket_volume', 'Ticket volume and time to resolution', 'Tickets created per week over a date range, how many of them are solved, and the median hours from creation to resolution.', '{manager}', '{"type": "object", "required": ["from", "to"], "properties": {"to": {"type": "string", "format": "date"}, "from": {"type": "string", "format": "date"}}, "additionalProperties": false}', '{json,csv}', 1, 'reporting.ticket_volume', '{week_start,created,solved,median_hours_to_resolution}', '{median_hours_to_resolution}');

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
