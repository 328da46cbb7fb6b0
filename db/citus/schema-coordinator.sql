--
-- PostgreSQL database dump
--

\restrict K9tv2G3dBbX77aIWHdVlLf6tohSD0yBDHWuxopMc1o44i4nfvgtMmjQafZyj0jb

-- Dumped from database version 15.20 (Debian 15.20-0+deb12u1)
-- Dumped by pg_dump version 15.20 (Debian 15.20-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: api; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA api;


--
-- Name: app; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA app;


--
-- Name: app_private; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA app_private;


--
-- Name: citus; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS citus WITH SCHEMA pg_catalog;


--
-- Name: EXTENSION citus; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON EXTENSION citus IS 'Citus distributed database';


--
-- Name: control; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA control;


--
-- Name: graphile_worker; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA graphile_worker;


--
-- Name: reporting; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA reporting;


--
-- Name: reporting_private; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA reporting_private;


--
-- Name: skills; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA skills;


--
-- Name: svc_bootstrap; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA svc_bootstrap;


--
-- Name: svc_dblink; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA svc_dblink;


--
-- Name: dblink; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS dblink WITH SCHEMA svc_dblink;


--
-- Name: EXTENSION dblink; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON EXTENSION dblink IS 'connect to other PostgreSQL databases from within a database';


--
-- Name: job_spec; Type: TYPE; Schema: graphile_worker; Owner: -
--

CREATE TYPE graphile_worker.job_spec AS (
	identifier text,
	payload json,
	queue_name text,
	run_at timestamp with time zone,
	max_attempts smallint,
	job_key text,
	priority smallint,
	flags text[]
);


--
-- Name: access_token_record(text, text, text, bytea, timestamp with time zone); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.access_token_record(p_organization_id text, p_client_id text, p_secret text, p_token_sha256 bytea, p_expires_at timestamp with time zone) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  a record;
  v_scope text;
begin
  select * into a from api.authenticate_client(p_organization_id, p_client_id, p_secret);
  if a.outcome <> 'ok' or p_expires_at > now() + interval '1 day' then
    return false;
  end if;
  v_scope := set_config('svc.gate_organization', a.organization_id, true);
  insert into app_private.access_tokens (organization_id, token_sha256, client_id, secret_id, expires_at)
  values (a.organization_id, p_token_sha256, p_client_id, a.secret_id, p_expires_at);
  v_scope := set_config('svc.gate_organization', '', true);
  return true;
end
$$;


--
-- Name: FUNCTION access_token_record(p_organization_id text, p_client_id text, p_secret text, p_token_sha256 bytea, p_expires_at timestamp with time zone); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.access_token_record(p_organization_id text, p_client_id text, p_secret text, p_token_sha256 bytea, p_expires_at timestamp with time zone) IS 'The token endpoint''s record of an access token it signed: it checks the client id and secret again through api.authenticate_client and, only when the outcome is ok and the expiry is at most a day away, stores the token''s SHA-256 with its client, secret and expiry in app_private.access_tokens, so only the holder of a live secret can make a token that api.begin_request accepts. It runs as svc_gate because svc_runtime may neither read client secrets nor write token records; the insert passes svc_gate''s policy only for the organization the secret check returned (svc.gate_organization, set for the insert alone).';


--
-- Name: agent_blockers(text, text, boolean); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.agent_blockers(p_id text, p_subject_member_id text, p_model_available boolean) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  d app_private.agent_definitions;
  v_blockers jsonb := '[]';
  v_skill text;
  v_b jsonb;
begin
  d := app_private.agent_lookup(p_id);
  if not 'api_client' = any (d.accepted_principal_types) then
    v_blockers := v_blockers || jsonb_build_object('code', 'API_PRINCIPAL_NOT_SUPPORTED',
      'message', format('%s accepts %s, not API Clients', p_id, array_to_string(d.accepted_principal_types, ', ')));
  end if;
  if not d.required_roles <@ app.current_roles() then
    v_blockers := v_blockers || jsonb_build_object('code', 'ROLE_REQUIRED',
      'message', format('%s needs the Roles %s', p_id, array_to_string(d.required_roles, ', ')));
  end if;
  if p_subject_member_id is not null and not d.supports_subject then
    v_blockers := v_blockers || jsonb_build_object('code', 'SUBJECT_NOT_SUPPORTED', 'message', format('%s does not act for a subject', p_id));
  end if;
  foreach v_skill in array d.skills loop
    v_b := app_private.skill_blocker(v_skill, p_subject_member_id);
    if v_b is not null then
      v_blockers := v_blockers || v_b;
    end if;
  end loop;
  if d.engine = 'model' and not p_model_available then
    v_blockers := v_blockers || jsonb_build_object('code', 'AGENT_UNAVAILABLE',
      'message', format('%s needs a model provider, and none is configured for this service', p_id));
  end if;
  -- In the order of the spec's checks: principal type, licence level, Roles, subject, connection.
  return coalesce((select jsonb_agg(x.b order by array_position(array['API_PRINCIPAL_NOT_SUPPORTED', 'LICENSE_LEVEL_REQUIRED', 'ROLE_REQUIRED',
                                      'SUBJECT_NOT_SUPPORTED', 'INTEGRATION_CONNECTION_NOT_READY', 'AGENT_UNAVAILABLE'], x.b ->> 'code'), x.ord)
                     from jsonb_array_elements(v_blockers) with ordinality x (b, ord)), '[]');
end
$$;


--
-- Name: FUNCTION agent_blockers(p_id text, p_subject_member_id text, p_model_available boolean); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.agent_blockers(p_id text, p_subject_member_id text, p_model_available boolean) IS 'Every blocker to the calling API Client starting agent p_id now, sorted in the spec''s order of checks: the agent''s principal type and Roles (all of them), the subject, each required skill''s blockers (app_private.skill_blocker: licence level, Roles, subject, integration connection), and AGENT_UNAVAILABLE for a model agent when no model provider is configured (p_model_available false); an agent the request''s organization does not publish raises SVN04 AGENT_NOT_FOUND or AGENT_NOT_PUBLISHED (app_private.agent_lookup). It writes nothing: checkAgentReadiness lists the blockers and createAgentRun refuses with the first. It runs as svc_api because svc_runtime may not read the agent and skill catalogue, the publications or the client''s licence level, and svc_api''s policies confine those reads to the request''s signed organization and client.';


--
-- Name: agent_get(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.agent_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  d app_private.agent_definitions := app_private.agent_lookup(p_id);
begin
  if not 'api_client' = any (d.accepted_principal_types) then
    perform app_private.raise('SVR04', 'API_PRINCIPAL_NOT_SUPPORTED',
      format('%s accepts %s, not API Clients', p_id, array_to_string(d.accepted_principal_types, ', ')));
  end if;
  if not d.required_roles <@ app.current_roles() then
    perform app_private.raise('SVR03', 'ROLE_REQUIRED', format('%s needs the Roles %s', p_id, array_to_string(d.required_roles, ', ')));
  end if;
  return query select v.doc, v.version from api.agents(p_id) v where v.id = p_id;
end
$$;


--
-- Name: FUNCTION agent_get(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.agent_get(p_id text) IS 'getAgent: the agent as the calling client sees it (api.agents), once app_private.agent_lookup found it published in the request''s organization (SVN04 AGENT_NOT_FOUND, AGENT_NOT_PUBLISHED); SVR04 API_PRINCIPAL_NOT_SUPPORTED when the agent does not accept API Clients, SVR03 ROLE_REQUIRED when the client lacks any of the agent''s required_roles (all are needed). It runs as svc_api because svc_runtime may not read the catalogue or the publications, and svc_api reads them under its policies for the request''s signed organization.';


--
-- Name: agent_input_schema(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.agent_input_schema(p_id text) RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select (app_private.agent_lookup(p_id)).input_schema $$;


--
-- Name: FUNCTION agent_input_schema(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.agent_input_schema(p_id text) IS 'The input JSON Schema of agent p_id, which the API validates a run''s input against before checkAgentReadiness and createAgentRun; only for an agent the request''s organization publishes (app_private.agent_lookup: SVN04 AGENT_NOT_FOUND or AGENT_NOT_PUBLISHED), the principal and Role checks following in those commands. It runs as svc_api because the agent catalogue in app_private is not granted to svc_runtime; the publication is read under svc_api''s policy for the request''s signed organization.';


--
-- Name: agent_readiness(text, jsonb, jsonb, boolean); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.agent_readiness(p_id text, p_subject jsonb, p_input_blockers jsonb, p_model_available boolean) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  v_subject text := p_subject ->> 'member_id';
  v_blockers jsonb;
  d app_private.agent_definitions;
begin
  v_blockers := api.agent_blockers(p_id, null, p_model_available);
  select * into d from app_private.agent_definitions x where x.id = p_id;
  if v_subject is not null then
    if not d.supports_subject or exists (select from app_private.agent_skills k where k.name = any (d.skills) and k.subject_dependent and not k.supports_subject) then
      v_blockers := v_blockers || jsonb_build_object('code', 'SUBJECT_NOT_SUPPORTED', 'message', format('%s does not act for a subject', p_id));
    elsif not exists (select from app.members m where m.organization_id = v__organization_id and m.id = v_subject and m.status = 'active') then
      v_blockers := v_blockers || jsonb_build_object('code', 'INVALID_SUBJECT_MEMBER', 'pointer', '/subject/member_id',
        'message', 'subject.member_id must be the exact normalized email of an active member of your organization');
    end if;
  end if;
  v_blockers := v_blockers || coalesce(p_input_blockers, '[]');
  return jsonb_build_object('object', 'agent_readiness', 'agent_id', p_id, 'agent_version', d.version,
    'ready', jsonb_array_length(v_blockers) = 0, 'blockers', v_blockers,
    'skills', coalesce((select jsonb_agg(jsonb_build_object('name', s.name, 'required', s.name = any (d.skills),
                 'available', app_private.skill_blocker(s.name, null) is null) order by s.ord)
              from unnest(d.skills || d.optional_skills) with ordinality s (name, ord)), '[]'));
end
$$;


--
-- Name: FUNCTION agent_readiness(p_id text, p_subject jsonb, p_input_blockers jsonb, p_model_available boolean); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.agent_readiness(p_id text, p_subject jsonb, p_input_blockers jsonb, p_model_available boolean) IS 'checkAgentReadiness, advisory and writing nothing: whether the calling client could start agent p_id, with the blockers of api.agent_blockers, SUBJECT_NOT_SUPPORTED when a subject is named and the agent or one of its subject-dependent skills does not act for one, INVALID_SUBJECT_MEMBER unless the subject is an active member of the request''s organization, the input problems the API found (p_input_blockers), and each skill''s availability. It runs as svc_api because svc_runtime may not read the agent and skill catalogue or the members table; every read names the request''s signed organization and svc_api''s policies confine it there.';


--
-- Name: agent_run_create(text, jsonb, jsonb, jsonb, boolean); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.agent_run_create(p_id text, p_input jsonb, p_subject jsonb, p_metadata jsonb, p_model_available boolean) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  d app_private.agent_definitions;
  v_subject text := p_subject ->> 'member_id';
  v_blockers jsonb;
  v_first jsonb;
  v_id text;
begin
  select * into d from app_private.agent_definitions x where x.id = p_id;
  v_blockers := api.agent_blockers(p_id, v_subject, p_model_available);
  v_first := v_blockers -> 0;
  if v_first is not null then
    perform app_private.raise(case v_first ->> 'code' when 'SUBJECT_NOT_SUPPORTED' then 'SVV22' when 'LICENSE_LEVEL_REQUIRED' then 'SVR04'
                                                      when 'ROLE_REQUIRED' then 'SVR03' else 'SVC09' end,
                              v_first ->> 'code', v_first ->> 'message', case when v_first ->> 'code' = 'SUBJECT_NOT_SUPPORTED' then '/subject' end);
  end if;
  perform app_private.check_subject(v_subject);
  insert into app.runs (organization_id, kind, agent_id, agent_version, client_id, subject, input, metadata)
  values (v__organization_id, 'agent', d.id, d.version, app.current_client_id(), p_subject, p_input, coalesce(p_metadata, '{}'))
  returning id into v_id;
  perform app_private.queue_agent_run(v_id);
  return (select v.doc from api.runs(v_id) v where v.id = v_id);
end
$$;


--
-- Name: FUNCTION agent_run_create(p_id text, p_input jsonb, p_subject jsonb, p_metadata jsonb, p_model_available boolean); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.agent_run_create(p_id text, p_input jsonb, p_subject jsonb, p_metadata jsonb, p_model_available boolean) IS 'createAgentRun: refuses with the first blocker of api.agent_blockers (SVV22 SUBJECT_NOT_SUPPORTED, SVR04 LICENSE_LEVEL_REQUIRED, SVR03 ROLE_REQUIRED, otherwise SVC09 with the blocker''s code) or a subject that is not an active member (INVALID_SUBJECT_MEMBER), then inserts a queued run of the agent''s current version for the request''s organization and client and queues its agent_run job. It runs as svc_api because svc_runtime may neither read the catalogue nor insert runs; the policy "Clients start runs" admits only a row of the signed context''s organization and client, and tg_runs__lifecycle only a queued one.';


--
-- Name: current_organization_id(); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.current_organization_id() RETURNS text
    LANGUAGE sql STABLE PARALLEL RESTRICTED
    AS $$
  select case when app_private.context_ok()
              then case when pg_catalog.current_setting('svc.organization_id', true) operator(pg_catalog.=) '' then null
                        else pg_catalog.current_setting('svc.organization_id', true) end
              else (app_private.bi_context()).organization_id end
$$;


--
-- Name: current_roles(); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.current_roles() RETURNS text[]
    LANGUAGE sql STABLE PARALLEL RESTRICTED
    AS $$
  select case when app_private.context_ok()
              then coalesce(pg_catalog.string_to_array(case when pg_catalog.current_setting('svc.roles', true) operator(pg_catalog.=) '' then null
                                                            else pg_catalog.current_setting('svc.roles', true) end, ','), '{}'::pg_catalog.text[])
              else coalesce((app_private.bi_context()).svc_roles, '{}'::pg_catalog.text[]) end
$$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: agent_publications; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.agent_publications (
    organization_id text NOT NULL,
    agent_id text NOT NULL,
    status text NOT NULL,
    changed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT agent_publications_status_valid CHECK ((status = ANY (ARRAY['published'::text, 'unpublished'::text])))
);

ALTER TABLE ONLY app.agent_publications FORCE ROW LEVEL SECURITY;


--
-- Name: agent_definitions; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.agent_definitions (
    id text NOT NULL,
    name text NOT NULL,
    description text NOT NULL,
    accepted_principal_types text[] NOT NULL,
    required_roles text[] NOT NULL,
    supports_subject boolean NOT NULL,
    input_schema jsonb NOT NULL,
    output_schema jsonb NOT NULL,
    version text NOT NULL,
    engine text NOT NULL,
    skills text[] NOT NULL,
    optional_skills text[] DEFAULT '{}'::text[] NOT NULL,
    CONSTRAINT agent_definitions_engine_valid CHECK ((engine = ANY (ARRAY['builtin'::text, 'model'::text]))),
    CONSTRAINT agent_definitions_id_format CHECK ((id ~ '^agt_[a-z0-9_]+$'::text))
);


--
-- Name: agents; Type: VIEW; Schema: api; Owner: -
--

CREATE VIEW api.agents WITH (security_barrier='true') AS
 SELECT d.id,
    d.required_roles,
    d.accepted_principal_types,
    p.status AS publication,
    jsonb_build_object('object', 'agent', 'id', d.id, 'name', d.name, 'description', d.description, 'status', 'published', 'accepted_principal_types', to_jsonb(d.accepted_principal_types), 'required_roles', to_jsonb(d.required_roles), 'supports_subject', d.supports_subject, 'input_schema', d.input_schema, 'output_schema', d.output_schema, 'version', d.version, 'skills', to_jsonb((d.skills || d.optional_skills))) AS doc,
    NULL::integer AS version,
    d.id AS sort_id
   FROM (app_private.agent_definitions d
     JOIN app.agent_publications p ON (((p.organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (p.agent_id = d.id))))
  WHERE ((p.status = 'published'::text) AND ('api_client'::text = ANY (d.accepted_principal_types)) AND (d.required_roles <@ ( SELECT app.current_roles() AS current_roles)));


--
-- Name: agents(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.agents(p_id text DEFAULT NULL::text) RETURNS SETOF api.agents
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.agents v;
    else
      return query select * from api.agents v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.agents', v_organization_id) || ') v where true and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;


--
-- Name: FUNCTION agents(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.agents(p_id text) IS 'The rows of view api.agents for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';


--
-- Name: approval_exists(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.approval_exists(p_id text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
begin
  perform app_private.refuse_on_coordinator('api.approval_exists(text)');
  return (select exists (select from app.approvals a where a.id = p_id and a.organization_id = v__organization_id));
end
$$;


--
-- Name: FUNCTION approval_exists(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.approval_exists(p_id text) IS 'Whether an approval with this id exists in the signed request''s organization, whatever its category: getApproval asks it when api.approvals shows nothing, to answer APPROVAL_ACCESS_DENIED (the caller''s Roles do not cover its resource) rather than APPROVAL_NOT_FOUND. It runs as svc_owner because svc_api''s policy shows only the approvals whose category the client''s Roles cover; it reads only the request''s organization (its WHERE and svc_owner''s policy) and answers a boolean, and on a Citus coordinator it refuses with SV500 NOT_IN_ITS_WORKER.';


--
-- Name: iso_timestamp(timestamp with time zone); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.iso_timestamp(ts timestamp with time zone) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ select pg_catalog.to_char(ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;


--
-- Name: new_id(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.new_id(prefix text) RETURNS text
    LANGUAGE sql PARALLEL SAFE
    AS $$
  select prefix operator(pg_catalog.||) '_'
         operator(pg_catalog.||) pg_catalog.lpad(pg_catalog.to_hex((extract(epoch from pg_catalog.clock_timestamp()) operator(pg_catalog.*) 1000)::pg_catalog.int8), 12, '0')
         operator(pg_catalog.||) pg_catalog.substr(pg_catalog.replace(pg_catalog.gen_random_uuid()::pg_catalog.text, '-', ''), 1, 16)
$$;


--
-- Name: approvals; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.approvals (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('apr'::text) NOT NULL,
    type text NOT NULL,
    category text NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    resource_type text NOT NULL,
    resource_id text NOT NULL,
    requested_by_client_id text NOT NULL,
    approver_member_id text,
    decision text,
    requested_at timestamp with time zone DEFAULT now() NOT NULL,
    decided_at timestamp with time zone,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    CONSTRAINT approvals_category_valid CHECK ((category = ANY (ARRAY['project'::text, 'financial'::text, 'hr'::text]))),
    CONSTRAINT approvals_decided_consistently CHECK ((((status = 'pending'::text) = (decision IS NULL)) AND ((decision IS NULL) = (decided_at IS NULL)))),
    CONSTRAINT approvals_decision_valid CHECK ((decision = ANY (ARRAY['approved'::text, 'rejected'::text]))),
    CONSTRAINT approvals_status_valid CHECK ((status = ANY (ARRAY['pending'::text, 'approved'::text, 'rejected'::text]))),
    CONSTRAINT approvals_type_valid CHECK ((type = 'time_entry'::text))
);

ALTER TABLE ONLY app.approvals FORCE ROW LEVEL SECURITY;


--
-- Name: organizations; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.organizations (
    id text DEFAULT app_private.new_id('org'::text) NOT NULL,
    name text NOT NULL,
    status text DEFAULT 'active'::text NOT NULL,
    plan text NOT NULL,
    timezone text NOT NULL,
    currency text NOT NULL,
    locale text NOT NULL,
    web_url text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    show_approver_identities boolean DEFAULT false NOT NULL,
    hr_may_read_time_entries boolean DEFAULT false NOT NULL,
    time_entry_future_days integer DEFAULT 0 NOT NULL,
    invoices_require_accounting_connection boolean DEFAULT false NOT NULL,
    invoice_number_prefix text DEFAULT 'INV-'::text NOT NULL,
    invoice_payment_terms_days integer DEFAULT 30 NOT NULL,
    ticket_module_enabled boolean DEFAULT true NOT NULL,
    finance_may_read_tickets boolean DEFAULT false NOT NULL,
    hr_may_read_tickets boolean DEFAULT false NOT NULL,
    CONSTRAINT organizations_currency_iso4217 CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT organizations_invoice_number_prefix_format CHECK ((invoice_number_prefix ~ '^[A-Za-z0-9/_-]{0,12}$'::text)),
    CONSTRAINT organizations_invoice_payment_terms_range CHECK (((invoice_payment_terms_days >= 0) AND (invoice_payment_terms_days <= 365))),
    CONSTRAINT organizations_locale_bcp47 CHECK ((locale ~ '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$'::text)),
    CONSTRAINT organizations_name_length CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT organizations_plan_valid CHECK ((plan = ANY (ARRAY['trial'::text, 'team'::text, 'business'::text, 'enterprise'::text]))),
    CONSTRAINT organizations_status_valid CHECK ((status = ANY (ARRAY['active'::text, 'restricted'::text, 'suspended'::text]))),
    CONSTRAINT organizations_time_entry_future_days_range CHECK (((time_entry_future_days >= 0) AND (time_entry_future_days <= 31)))
);

ALTER TABLE ONLY app.organizations FORCE ROW LEVEL SECURITY;


--
-- Name: COLUMN organizations.plan; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON COLUMN app.organizations.plan IS 'Trial and Team plans do not support API Clients.';


--
-- Name: approvals; Type: VIEW; Schema: api; Owner: -
--

CREATE VIEW api.approvals WITH (security_invoker='false') AS
 SELECT a.organization_id,
    a.id,
    a.type,
    a.status,
    a.resource_type,
    a.resource_id,
    a.requested_at,
    a.updated_at,
    a.version,
    (jsonb_build_object('object', 'approval', 'id', a.id, 'type', a.type, 'status', a.status, 'resource', jsonb_build_object('type', a.resource_type, 'id', a.resource_id), 'requested_at', app_private.iso_timestamp(a.requested_at), 'decided_at', app_private.iso_timestamp(a.decided_at), 'decision', a.decision, 'version', a.version, 'updated_at', app_private.iso_timestamp(a.updated_at)) ||
        CASE
            WHEN ( SELECT o.show_approver_identities
               FROM app.organizations o
              WHERE (o.id = a.organization_id)) THEN jsonb_build_object('approver',
            CASE
                WHEN (a.approver_member_id IS NOT NULL) THEN jsonb_build_object('member_id', a.approver_member_id)
                ELSE NULL::jsonb
            END)
            ELSE '{}'::jsonb
        END) AS doc
   FROM app.approvals a;


--
-- Name: approvals(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.approvals(p_id text DEFAULT NULL::text) RETURNS SETOF api.approvals
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.approvals v;
    else
      return query select * from api.approvals v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.approvals', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;


--
-- Name: FUNCTION approvals(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.approvals(p_id text) IS 'The rows of view api.approvals for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';


--
-- Name: authenticate_client(text, text, text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.authenticate_client(p_organization_id text, p_client_id text, p_secret text) RETURNS TABLE(outcome text, secret_id text, organization_id text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  c record;
  v_found boolean;
  -- An assignment, not PERFORM: PL/pgSQL evaluates it without running a query.
  v_scope text;
begin
  -- svc_gate's policies show this organization's clients and secrets, for this read.
  v_scope := set_config('svc.gate_organization', coalesce(p_organization_id, ''), true);
  select cl.id, cl.organization_id, cl.status, cl.license_status, o.status as org_status, o.plan as org_plan, s.id as secret_id
    into c
    from app.client_secrets s
    join app.api_clients cl on cl.organization_id = s.organization_id and cl.id = s.client_id
    join app.organizations o on o.id = cl.organization_id
   where s.organization_id = p_organization_id
     and s.secret_sha256 = sha256(convert_to(p_secret, 'UTF8'))
     and s.client_id = p_client_id
     and s.revoked_at is null;
  v_found := found;
  v_scope := set_config('svc.gate_organization', '', true);
  if not v_found or c.status = 'deleted' then
    outcome := 'invalid_client';
  elsif c.status = 'disabled' then
    outcome := 'client_disabled';
  elsif c.org_status = 'suspended' then
    outcome := 'org_subscription_inactive';
  elsif c.license_status <> 'active' or c.org_plan in ('trial', 'team') then
    outcome := 'license_inactive';
  else
    outcome := 'ok';
    secret_id := c.secret_id;
    organization_id := c.organization_id;
  end if;
  return next;
end
$$;


--
-- Name: FUNCTION authenticate_client(p_organization_id text, p_client_id text, p_secret text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.authenticate_client(p_organization_id text, p_client_id text, p_secret text) IS 'The token endpoint''s client check: it matches the SHA-256 of the presented secret against the unrevoked secrets of that client in the named organization and answers, in the spec''s order, invalid_client (no match, or a deleted client), client_disabled, org_subscription_inactive, license_inactive (licence not active, or a Trial or Team plan) or ok with the secret and organization. It runs as svc_gate because svc_runtime may not read client secrets and learns only the outcome; svc.gate_organization is set to the named organization for the length of the read, so svc_gate''s policies show no other organization''s clients, secrets or standing, even to a wrong WHERE.';


--
-- Name: begin_request(text, text, text[], boolean); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.begin_request(p_organization_id text, p_token_sha256 text, p_required_roles text[] DEFAULT NULL::text[], p_context boolean DEFAULT true) RETURNS TABLE(outcome text, organization_id text, svc_roles text[], principal jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  c record;
  v_found boolean;
  -- An assignment, not PERFORM: PL/pgSQL evaluates it without running a query.
  v_scope text;
begin
  if p_token_sha256 is null or p_token_sha256 !~ '^[0-9a-f]{64}$' then
    outcome := 'invalid_token';
    return next;
    return;
  end if;
  -- svc_gate's policies show this organization's tokens, clients and secrets, for this read.
  v_scope := set_config('svc.gate_organization', coalesce(p_organization_id, ''), true);
  -- Joins only (no correlated subquery): Citus plans it for the one shard the organization names.
  select cl.id, cl.organization_id, cl.name, cl.license_level, cl.license_source, cl.license_status,
         cl.status, cl.svc_roles, o.status as org_status, o.plan as org_plan, s.id is not null as secret_active,
         app_private.read_flags(cl.svc_roles, o.ticket_module_enabled, o.finance_may_read_tickets, o.hr_may_read_tickets,
                                o.hr_may_read_time_entries) as read_flags
    into c
    from app_private.access_tokens t
    join app.api_clients cl on cl.organization_id = t.organization_id and cl.id = t.client_id
    join app.organizations o on o.id = cl.organization_id
    left join app.client_secrets s on s.organization_id = t.organization_id and s.id = t.secret_id and s.revoked_at is null
   where t.organization_id = p_organization_id and t.token_sha256 = decode(p_token_sha256, 'hex')
     and t.expires_at > now();
  v_found := found;
  v_scope := set_config('svc.gate_organization', '', true);
  if not v_found or c.status = 'deleted' or not c.secret_active then
    outcome := 'invalid_token';
  elsif c.status = 'disabled' then
    outcome := 'client_disabled';
  elsif c.org_status = 'suspended' then
    outcome := 'org_subscription_inactive';
  elsif c.license_status <> 'active' or c.org_plan in ('trial', 'team') then
    outcome := 'license_inactive';
  elsif p_required_roles is not null and not (p_required_roles && c.svc_roles) then
    outcome := 'role_required';
    svc_roles := c.svc_roles;
  else
    if p_context then
      perform app_private.set_context(c.organization_id, c.id, c.svc_roles, c.read_flags);
      -- The API wakes the fan-out itself once this transaction has committed, if an event of it
      -- needs one (emit_event then sets 'due').
      perform set_config('svc.fanout_wake', 'after_commit', true);
    end if;
    outcome := 'ok';
    organization_id := c.organization_id;
    svc_roles := c.svc_roles;
    principal := jsonb_build_object(
      'object', 'api_client_principal',
      'id', c.id,
      'name', c.name,
      'organization_id', c.organization_id,
      'license', jsonb_build_object('level', c.license_level, 'source', c.license_source, 'status', 'active'),
      'svc_roles', to_jsonb(c.svc_roles),
      'record_access', 'organization_wide_by_role',
      'scope', 'svc.api');
  end if;
  return next;
end
$_$;


--
-- Name: FUNCTION begin_request(p_organization_id text, p_token_sha256 text, p_required_roles text[], p_context boolean); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.begin_request(p_organization_id text, p_token_sha256 text, p_required_roles text[], p_context boolean) IS 'A request''s first statement: the client of the access token whose SHA-256 (hex) is p_token_sha256, in organization p_organization_id; on ok, the signed request context (unless p_context is false).';


--
-- Name: client_organization(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.client_organization(p_client_id text) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_organization_id text;
  v_scope text;
begin
  -- The policy shows the row of this client alone, for as long as the lookup runs.
  v_scope := set_config('svc.directory_client', coalesce(p_client_id, ''), true);
  select d.organization_id into v_organization_id from app_private.client_directory d where d.client_id = p_client_id;
  v_scope := set_config('svc.directory_client', '', true);
  return v_organization_id;
end
$$;


--
-- Name: FUNCTION client_organization(p_client_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.client_organization(p_client_id text) IS 'The organization of an API client, before any request context exists (the token endpoint); the only reader of app_private.client_directory.';


--
-- Name: command_answered(bigint); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.command_answered(p_rows bigint) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if p_rows is distinct from 1 then
    perform app_private.raise('SV500', 'COMMAND_ROW_COUNT', format('the command answered %s rows instead of one', p_rows));
  end if;
end
$$;


--
-- Name: FUNCTION command_answered(p_rows bigint); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.command_answered(p_rows bigint) IS 'Raises SV500 COMMAND_ROW_COUNT (a 500: our bug) unless a command run under a fresh Idempotency-Key claim answered exactly one row, checked in the statement that stores that row as the key''s response; otherwise the transaction would commit the key claimed with no response, or with one other than the response sent. It reads and writes nothing; it is an svc_api definer like every api command, through which svc_runtime reaches app_private.raise, which it may not execute.';


--
-- Name: conversation_archive(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.conversation_archive(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  perform api.conversation_get(p_id);
  update app.conversations x set status = 'archived', archived_at = now()
   where x.organization_id = v__organization_id and x.id = p_id and x.status = 'active';
  return query select * from api.conversation_get(p_id);
end
$$;


--
-- Name: FUNCTION conversation_archive(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.conversation_archive(p_id text) IS 'archiveConversation: sets the calling client''s active conversation to archived (archived_at now); a conversation already archived is returned unchanged, and its messages are kept as audit records. It runs as svc_api because svc_runtime holds no table privilege: the lookup (api.conversation_get, SVN04 CONVERSATION_NOT_FOUND) and the update pass svc_api''s policies, which show only conversations of the request''s organization created by the calling client, and tg_conversations__lifecycle keeps the conversation archived for good.';


--
-- Name: conversation_clear_context(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.conversation_clear_context(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  perform api.conversation_get(p_id);
  update app.conversations x set context_from_seq = x.message_count, context_summary = null, context_cleared_at = now()
   where x.organization_id = v__organization_id and x.id = p_id;
  return query select * from api.conversation_get(p_id);
end
$$;


--
-- Name: FUNCTION conversation_clear_context(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.conversation_clear_context(p_id text) IS 'clearConversationContext: starts the working context afresh in any status (context_from_seq moves to the last message, the compacted summary is dropped, context_cleared_at is set); the history and the status stay. It runs as svc_api so that the lookup (SVN04 CONVERSATION_NOT_FOUND) and the update pass svc_api''s policies, which admit only a conversation of the request''s organization created by the calling client; the update touches only the working-context columns.';


--
-- Name: conversation_create(text, jsonb, jsonb); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.conversation_create(p_title text, p_subject jsonb, p_metadata jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  v_id text;
begin
  insert into app.conversations (organization_id, client_id, title, subject_member_id, metadata)
  values (v__organization_id, app.current_client_id(), nullif(p_title, ''), app_private.conversation_subject(p_subject),
          coalesce(p_metadata, '{}'))
  returning id into v_id;
  return (select v.doc from api.conversations(v_id) v where v.id = v_id);
end
$$;


--
-- Name: FUNCTION conversation_create(p_title text, p_subject jsonb, p_metadata jsonb); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.conversation_create(p_title text, p_subject jsonb, p_metadata jsonb) IS 'createConversation: inserts an active conversation for the request''s organization and the calling client, with its title (an empty title means none), metadata and a subject resolved to one active member by app_private.conversation_subject, fixed for the conversation''s life. It runs as svc_api because svc_runtime holds no table privilege; svc_api''s "Clients start conversations" policy admits only the request''s organization and client, so no caller starts a conversation in another client''s name.';


--
-- Name: conversation_get(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.conversation_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if not exists (select from api.conversations(p_id) v where v.id = p_id) then
    perform app_private.raise('SVN04', 'CONVERSATION_NOT_FOUND', format('no conversation %s of your client', p_id));
  end if;
  return query select v.doc, v.version from api.conversations(p_id) v where v.id = p_id;
end
$$;


--
-- Name: FUNCTION conversation_get(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.conversation_get(p_id text) IS 'The calling client''s conversation p_id as its wire document (version null: conversations carry no ETag), or SVN04 CONVERSATION_NOT_FOUND when api.conversations does not show it. It runs as svc_api, whose policies show only conversations of the request''s organization created by the calling client, so another client''s conversation answers as missing.';


--
-- Name: conversation_message_create(text, jsonb); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.conversation_message_create(p_id text, p_content jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  c app.conversations;
  v_msg text;
  v_run text;
  v_bad integer;
begin
  select * into c from app.conversations x where x.organization_id = v__organization_id and x.id = p_id for update;
  if not found then
    perform app_private.raise('SVN04', 'CONVERSATION_NOT_FOUND', format('no conversation %s of your client', p_id));
  end if;
  if c.status = 'archived' then
    perform app_private.raise('SVC09', 'CONVERSATION_ARCHIVED', 'the conversation is archived; start a new one');
  end if;
  if length(p_content::text) > app_private.message_budget() then
    perform app_private.raise('SVV22', 'CONTEXT_LIMIT_EXCEEDED',
      format('one message holds at most %s characters of content (this one: %s); send it in parts or as a file reference',
             app_private.message_budget(), length(p_content::text)), '/content');
  end if;
  select min(b.i) - 1 into v_bad from jsonb_array_elements(p_content) with ordinality b (block, i)
   where b.block ->> 'type' = 'file_reference' and not exists (select from api.files(b.block ->> 'file_id') f where f.id = b.block ->> 'file_id' and f.status = 'ready');
  if v_bad is not null then
    perform app_private.raise('SVV22', 'MESSAGE_CONTENT_INVALID',
      'file_id must name a ready file you may read', format('/content/%s/file_id', v_bad));
  end if;
  insert into app.conversation_messages (organization_id, conversation_id, seq, role, content)
  values (c.organization_id, c.id, c.message_count + 1, 'user', p_content)
  returning id into v_msg;
  perform app_private.conversation_compact(c.organization_id, c.id);
  insert into app.runs (organization_id, kind, agent_id, conversation_id, client_id, subject, input)
  values (c.organization_id, 'agent', null, c.id, c.client_id,
          case when c.subject_member_id is null then null else jsonb_build_object('member_id', c.subject_member_id) end,
          jsonb_build_object('message_id', v_msg))
  returning id into v_run;
  perform app_private.queue_agent_run(v_run);
  return jsonb_build_object('object', 'conversation_message_accepted',
    'message', (select v.doc from api.conversation_messages(v_msg) v where v.id = v_msg),
    'run', (select v.doc from api.runs(v_run) v where v.id = v_run));
end
$$;


--
-- Name: FUNCTION conversation_message_create(p_id text, p_content jsonb); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.conversation_message_create(p_id text, p_content jsonb) IS 'createConversationMessage: locks the calling client''s conversation (SVN04 CONVERSATION_NOT_FOUND) and refuses an archived one (SVC09 CONVERSATION_ARCHIVED), content longer than app_private.message_budget() characters (SVV22 CONTEXT_LIMIT_EXCEEDED) and a file_reference block naming no ready file the client may read (SVV22 MESSAGE_CONTENT_INVALID); it then appends the user message, compacts the working context and queues a chat run (kind agent, no agent, the conversation''s client and subject) whose answer becomes the next message. It runs as svc_api so every read and write is under svc_api''s policies: the request''s organization, the client''s own conversation and run, and messages of role user only.';


--
-- Name: conversation_messages; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.conversation_messages (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('msg'::text) NOT NULL,
    conversation_id text NOT NULL,
    seq integer NOT NULL,
    role text NOT NULL,
    content jsonb NOT NULL,
    run_id text,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    client_id text NOT NULL,
    CONSTRAINT conversation_messages_content_blocks CHECK (((jsonb_typeof(content) = 'array'::text) AND ((jsonb_array_length(content) >= 1) AND (jsonb_array_length(content) <= 50)) AND (jsonb_path_query_first(content, '$[*]?(!((((@."type" == "text" || @."type" == "data") || @."type" == "file_reference") || @."type" == "citation") || @."type" == "error"))'::jsonpath) IS NULL))),
    CONSTRAINT conversation_messages_role_valid CHECK ((role = ANY (ARRAY['user'::text, 'assistant'::text])))
);

ALTER TABLE ONLY app.conversation_messages FORCE ROW LEVEL SECURITY;


--
-- Name: conversation_messages; Type: VIEW; Schema: api; Owner: -
--

CREATE VIEW api.conversation_messages AS
 SELECT m.organization_id,
    m.id,
    m.conversation_id,
    m.seq,
    jsonb_build_object('object', 'conversation_message', 'id', m.id, 'conversation_id', m.conversation_id, 'role', m.role, 'content', m.content, 'run_id', m.run_id, 'created_at', app_private.iso_timestamp(m.created_at)) AS doc
   FROM app.conversation_messages m;


--
-- Name: conversation_messages(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.conversation_messages(p_id text DEFAULT NULL::text) RETURNS SETOF api.conversation_messages
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.conversation_messages v;
    else
      return query select * from api.conversation_messages v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.conversation_messages', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;


--
-- Name: FUNCTION conversation_messages(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.conversation_messages(p_id text) IS 'The rows of view api.conversation_messages for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';


--
-- Name: conversations; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.conversations (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('cnv'::text) NOT NULL,
    client_id text NOT NULL,
    title text,
    subject_member_id text,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    status text DEFAULT 'active'::text NOT NULL,
    message_count integer DEFAULT 0 NOT NULL,
    context_from_seq integer DEFAULT 0 NOT NULL,
    context_summary text,
    context_cleared_at timestamp with time zone,
    context_expired_at timestamp with time zone,
    last_activity_at timestamp with time zone DEFAULT now() NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    archived_at timestamp with time zone,
    CONSTRAINT conversations_archived_at_iff_archived CHECK (((status = 'archived'::text) = (archived_at IS NOT NULL))),
    CONSTRAINT conversations_status_valid CHECK ((status = ANY (ARRAY['active'::text, 'archived'::text]))),
    CONSTRAINT conversations_summary_bounded CHECK ((length(context_summary) <= 4000)),
    CONSTRAINT conversations_title_length CHECK (((title IS NULL) OR ((length(title) >= 1) AND (length(title) <= 200))))
);

ALTER TABLE ONLY app.conversations FORCE ROW LEVEL SECURITY;


--
-- Name: conversations; Type: VIEW; Schema: api; Owner: -
--

CREATE VIEW api.conversations AS
 SELECT c.organization_id,
    c.id,
    c.status,
    c.subject_member_id,
    c.updated_at,
    c.created_at,
    jsonb_build_object('object', 'conversation', 'id', c.id, 'title', c.title, 'status', c.status, 'subject',
        CASE
            WHEN (c.subject_member_id IS NULL) THEN NULL::jsonb
            ELSE jsonb_build_object('member_id', c.subject_member_id)
        END, 'metadata', c.metadata, 'message_count', c.message_count, 'working_context', jsonb_build_object('from_message', (c.context_from_seq + 1), 'messages', (c.message_count - c.context_from_seq), 'compacted', (c.context_summary IS NOT NULL), 'cleared_at', app_private.iso_timestamp(c.context_cleared_at), 'expired_at', app_private.iso_timestamp(c.context_expired_at), 'expires_at', app_private.iso_timestamp((c.last_activity_at + '30 days'::interval))), 'last_activity_at', app_private.iso_timestamp(c.last_activity_at), 'created_at', app_private.iso_timestamp(c.created_at), 'updated_at', app_private.iso_timestamp(c.updated_at), 'archived_at', app_private.iso_timestamp(c.archived_at)) AS doc,
    NULL::integer AS version
   FROM app.conversations c;


--
-- Name: conversations(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.conversations(p_id text DEFAULT NULL::text) RETURNS SETOF api.conversations
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.conversations v;
    else
      return query select * from api.conversations v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.conversations', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;


--
-- Name: FUNCTION conversations(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.conversations(p_id text) IS 'The rows of view api.conversations for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';


--
-- Name: file_archive(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.file_archive(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  f app.files := app_private.file_for(p_id, true);
begin
  if f.status = 'processing' or f.status = 'rejected' then
    perform app_private.raise('SVC09', 'CONFLICT', format('%s is %s: only a ready file is archived', f.id, f.status));
  end if;
  if f.status = 'ready' then
    update app.files x set status = 'archived' where x.organization_id = f.organization_id and x.id = f.id;
  end if;
  return query select v.doc, v.version from api.files(p_id) v where v.id = p_id;
end
$$;


--
-- Name: FUNCTION file_archive(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.file_archive(p_id text) IS 'archiveFile: archives a ready file for a writer of its linked resource (invoice: manager or finance; project, task, ticket: manager), through app_private.file_for (SVN04 FILE_NOT_FOUND, SVR04 FILE_ACCESS_DENIED); a processing or rejected file is refused (SVC09 CONFLICT), an archived one is answered as it is, and retention, legal holds and posted invoices are the triggers'' to refuse (RETENTION_BLOCKED). It runs as svc_api because svc_runtime holds no privilege on app.files; its update names the request''s organization and passes svc_api''s policy "Writers of the linked resource change files".';


--
-- Name: file_chunks(text, integer, integer); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.file_chunks(p_file_id text, p_from integer, p_to integer) RETURNS TABLE(seq integer, data bytea)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
begin
  perform from api.files(p_file_id) v where v.id = p_file_id and v.status = 'ready';
  if not found then
    return;
  end if;
  return query select c.seq, c.data
    from app.files f
    join app.file_chunks c on c.organization_id = v__organization_id and c.upload_id = f.upload_id
   where f.organization_id = v__organization_id and f.id = p_file_id and c.seq between p_from and p_to
  union all
  select 0, fc.content
    from app.file_contents fc
   where fc.organization_id = v__organization_id and fc.file_id = p_file_id and p_from = 0
  order by 1;
end
$$;


--
-- Name: FUNCTION file_chunks(p_file_id text, p_from integer, p_to integer); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.file_chunks(p_file_id text, p_from integer, p_to integer) IS 'The bytes of a download: chunks p_from..p_to of a file, only when api.files shows it ready to the caller (its Roles for the linked resource); an uploaded file''s chunks come from its upload, a file the service made (an invoice PDF) is one chunk 0, its stored content. It runs as svc_api because svc_runtime may not read app.file_chunks or app.file_contents; every statement names the context''s organization (a download link''s client context, opened by api.file_download_begin), and the chunk and content policies apply inside it.';


--
-- Name: file_download_begin(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.file_download_begin(p_token text) RETURNS TABLE(outcome text, file_id text, name text, content_type text, size_bytes bigint, sha256 text, upload_id text, chunk_size integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET "svc.gate_organization" TO ''
    AS $$
declare
  l record;
  f app.files;
begin
  perform app_private.refuse_on_coordinator('api.file_download_begin(text)');
  outcome := 'not_found';
  select * into l from app_private.download_link(p_token, 'fil', 'download');
  if l.id is null or l.organization_id is null then
    return next;
    return;
  end if;
  if l.expires <= extract(epoch from now()) then
    outcome := 'expired';
  elsif not app_private.begin_delivery_context(l.organization_id, l.client_id) then
    outcome := 'client_inactive';
  else
    -- Only a file the client may read now (api.files: its Roles, the resource it is linked to).
    perform from api.files(l.id) v where v.id = l.id;
    if found then
      select x.* into f from app.files x where x.organization_id = l.organization_id and x.id = l.id;
    end if;
    if f.id is null or f.status <> 'ready' then
      outcome := 'not_found';
    else
      outcome := 'ok';
      file_id := f.id;
      name := f.name;
      content_type := f.content_type;
      size_bytes := f.size_bytes;
      sha256 := f.sha256;
      upload_id := f.upload_id;
      chunk_size := coalesce((select u.chunk_size from app.file_uploads u where u.organization_id = l.organization_id and u.id = f.upload_id),
                             greatest(f.size_bytes, 1)::integer);
    end if;
  end if;
  return next;
end
$$;


--
-- Name: FUNCTION file_download_begin(p_token text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.file_download_begin(p_token text) IS 'The start of a GET of a download link, which is its own credential: it checks the link''s signature (app_private.download_link, which takes the signature''s SHA-256, never the signature), its expiry and its client''s standing (app_private.begin_delivery_context, which then sets that client''s signed context), and answers the file''s metadata only if that client may still read it (api.files) and it is ready; otherwise not_found, expired or client_inactive. It runs as svc_gate because no request context exists yet: the gate''s policies show only the organization the verified link names (svc.gate_organization, this function''s own setting, restored on return) and then the files of the context the link opened, so a wrong WHERE reads nothing of another organization; it is refused on a Citus coordinator (SV500 NOT_IN_ITS_WORKER).';


--
-- Name: file_download_create(text, integer); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.file_download_create(p_id text, p_lifetime_seconds integer) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  f app.files := app_private.file_for(p_id, false);
  v_expires bigint := extract(epoch from now())::bigint + p_lifetime_seconds;
  v_message text := f.id || '.' || f.organization_id || '.' || app.current_client_id() || '.' || v_expires;
begin
  if f.status = 'rejected' then
    perform app_private.raise('SVC09', 'FILE_SCAN_FAILED', format('%s was rejected: %s', f.id, f.rejection_detail));
  elsif f.status = 'processing' then
    perform app_private.raise('SVC09', 'CONFLICT', format('%s is still being checked; download it once it is ready', f.id));
  elsif f.status = 'archived' then
    perform app_private.raise('SVC09', 'CONFLICT', format('%s is archived', f.id));
  end if;
  return jsonb_build_object('object', 'file_download', 'file_id', f.id,
    'download_token', v_message || '.' || app_private.capability_mac('download', v_message),
    'expires_at', app_private.iso_timestamp(to_timestamp(v_expires)));
end
$$;


--
-- Name: FUNCTION file_download_create(p_id text, p_lifetime_seconds integer); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.file_download_create(p_id text, p_lifetime_seconds integer) IS 'createFileDownload: for a file the caller may read (app_private.file_for), a short-lived bearer token binding the file, its organization, the calling client and the expiry under an HMAC (app_private.capability_mac, purpose download), stored nowhere; a rejected file is refused with SVC09 FILE_SCAN_FAILED, a processing or archived one with SVC09 CONFLICT. It runs as svc_api, whose policies confine the read to the request''s organization and the Roles that read the linked resource; svc_runtime can neither read app.files nor the key the token is signed with.';


--
-- Name: file_get(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.file_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.file_for(p_id, false);
  return query select v.doc, v.version from api.files(p_id) v where v.id = p_id;
end
$$;


--
-- Name: FUNCTION file_get(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.file_get(p_id text) IS 'getFile: the file''s document from api.files, after app_private.file_for has answered SVN04 FILE_NOT_FOUND when neither the file nor its linked resource is visible to the caller, and SVR04 FILE_ACCESS_DENIED when the resource is visible but its files are not for the caller''s Roles (the spec: files inherit access from the linked resource). It runs as svc_api because svc_runtime holds no privilege on app.files; svc_api''s policies show only the request''s organization.';


--
-- Name: file_upload_begin(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.file_upload_begin(p_token text) RETURNS TABLE(outcome text, upload_id text, size_bytes bigint, content_type text, chunk_size integer, expires_at timestamp with time zone)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET "svc.gate_organization" TO ''
    AS $_$
declare
  v_parts text[] := string_to_array(p_token, '.');
  v_id text := v_parts[1];
  v_org text := v_parts[2];
  v_scope text;
  u app.file_uploads;
begin
  perform app_private.refuse_on_coordinator('api.file_upload_begin(text)');
  outcome := 'not_found';
  if p_token !~ '^upl_[A-Za-z0-9]{1,64}\.org_[A-Za-z0-9]{1,64}\.[0-9a-f]{64}$'
     or v_parts[3] <> encode(sha256(convert_to(app_private.capability_mac('upload', v_id || '.' || v_org), 'UTF8')), 'hex') then
    return next;
    return;
  end if;
  -- The signature holds: the gate may read the organization it names (restored on return).
  v_scope := set_config('svc.gate_organization', v_org, true);
  select * into u from app.file_uploads x where x.organization_id = v_org and x.id = v_id for update nowait;
  if not found then
    outcome := 'not_found';
  elsif u.status <> 'pending' then
    outcome := 'used';
  elsif u.expires_at <= now() then
    outcome := 'expired';
  elsif not app_private.begin_delivery_context(v_org, u.created_by_client_id) then
    outcome := 'client_inactive';
  else
    outcome := 'ok';
    upload_id := u.id;
    size_bytes := u.size_bytes;
    content_type := u.content_type;
    chunk_size := u.chunk_size;
    expires_at := u.expires_at;
  end if;
  return next;
end
$_$;


--
-- Name: FUNCTION file_upload_begin(p_token text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.file_upload_begin(p_token text) IS 'The start of the PUT to an upload link, which is its own credential: the token must carry the upload id and organization with a valid HMAC (compared by the signature''s SHA-256, so the statement never carries the credential); the upload is locked FOR UPDATE NOWAIT (a concurrent PUT gets 55P03, 409 CONFLICT) and answers used unless pending, expired once past expires_at, client_inactive unless its creating client is in good standing, and otherwise sets that client''s signed context for the chunks that follow. It runs as svc_gate because no request context exists yet: only after the signature holds does it set svc.gate_organization (its own setting, restored on return), and the gate''s policies show and lock only that organization''s uploads; it is refused on a Citus coordinator (SV500 NOT_IN_ITS_WORKER).';


--
-- Name: file_upload_chunks(text, integer, bytea[]); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.file_upload_chunks(p_upload_id text, p_first_seq integer, VARIADIC p_data bytea[]) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
begin
  insert into app.file_chunks (organization_id, upload_id, seq, data)
  select v__organization_id, p_upload_id, p_first_seq + (d.n - 1)::integer, d.data
    from unnest(p_data) with ordinality d (data, n);
end
$$;


--
-- Name: FUNCTION file_upload_chunks(p_upload_id text, p_first_seq integer, VARIADIC p_data bytea[]); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.file_upload_chunks(p_upload_id text, p_first_seq integer, VARIADIC p_data bytea[]) IS 'Stores chunks p_first_seq, p_first_seq + 1, … of an upload, several per call and as binary parameters (bytea), in the transaction that api.file_upload_begin opened for the upload''s client. It runs as svc_api because svc_runtime may not write app.file_chunks; the rows take the context''s organization, the policy "Clients write the bytes of their own pending uploads" admits only the uploading client''s rows, and the chunk guard trigger accepts bytes only while the upload is pending and no larger than its chunk size (SVC09 CONFLICT).';


--
-- Name: file_upload_chunks(text, integer, text[]); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.file_upload_chunks(p_upload_id text, p_first_seq integer, VARIADIC p_base64 text[]) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
begin
  insert into app.file_chunks (organization_id, upload_id, seq, data)
  select v__organization_id, p_upload_id, p_first_seq + (d.n - 1)::integer, decode(d.data, 'base64')
    from unnest(p_base64) with ordinality d (data, n);
end
$$;


--
-- Name: FUNCTION file_upload_chunks(p_upload_id text, p_first_seq integer, VARIADIC p_base64 text[]); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.file_upload_chunks(p_upload_id text, p_first_seq integer, VARIADIC p_base64 text[]) IS 'The base64 form of api.file_upload_chunks(text,integer,bytea[]), with the same rules (the context''s organization, the uploading client''s pending upload, its chunk size), kept only for the servers of the previous release during a rolling deploy: base64 text costs a third more memory in the server than the bytes, and a later release drops it. It runs as svc_api because svc_runtime may not write app.file_chunks.';


--
-- Name: file_upload_complete(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.file_upload_complete(p_upload_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  u app.file_uploads;
  v_file text;
begin
  select * into u from app.file_uploads x
   where x.organization_id = v__organization_id and x.id = p_upload_id for update;
  if not found then
    perform app_private.raise('SVN04', 'FILE_NOT_FOUND', format('no upload %s of your client', p_upload_id));
  end if;
  if u.status = 'completed' then
    return query select v.doc, v.version from api.files(u.file_id) v where v.id = u.file_id;
    return;
  end if;
  if u.expires_at <= now() then
    perform app_private.raise('SVC09', 'UPLOAD_EXPIRED', format('upload %s expired at %s; start a new upload', u.id, app_private.iso_timestamp(u.expires_at)));
  end if;
  if u.status = 'pending' then
    perform app_private.raise('SVC09', 'CONFLICT', 'nothing has been uploaded yet: PUT the bytes to the upload URL first');
  end if;
  if u.received_size_bytes <> u.size_bytes or u.received_sha256 <> u.sha256 then
    perform app_private.raise('SVV22', 'CHECKSUM_MISMATCH',
      format('the stored bytes (%s bytes, SHA-256 %s) are not the declared ones (%s bytes, SHA-256 %s); start a new upload',
             u.received_size_bytes, u.received_sha256, u.size_bytes, u.sha256));
  end if;
  if not u.content_type_verified then
    perform app_private.raise('SVV22', 'CONTENT_TYPE_NOT_ALLOWED',
      format('the bytes are %s, not the declared %s; start a new upload', coalesce(u.detected_content_type, 'of an unknown type'), u.content_type));
  end if;
  insert into app.files (organization_id, name, content_type, size_bytes, sha256, status, linked_resource_type, linked_resource_id,
                         upload_id, scan_status, created_by_client_id)
  values (u.organization_id, u.name, u.content_type, u.size_bytes, u.sha256, 'processing', u.linked_resource_type, u.linked_resource_id,
          u.id, 'pending', app.current_client_id())
  returning id into v_file;
  update app.file_uploads x set status = 'completed', file_id = v_file where x.organization_id = u.organization_id and x.id = u.id;
  perform app_private.queue_file_scan(v_file);
  return query select v.doc, v.version from api.files(v_file) v where v.id = v_file;
end
$$;


--
-- Name: FUNCTION file_upload_complete(p_upload_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.file_upload_complete(p_upload_id text) IS 'completeFileUpload: the calling client''s upload (SVN04 FILE_NOT_FOUND otherwise) becomes a file only if its bytes arrived before expiry (SVC09 UPLOAD_EXPIRED, 410), were uploaded at all (SVC09 CONFLICT), match the declared size and SHA-256 (SVV22 CHECKSUM_MISMATCH) and sniff as the declared content type (SVV22 CONTENT_TYPE_NOT_ALLOWED); the file starts processing with its scan queued (app_private.queue_file_scan), and completing a completed upload answers its file again. It runs as svc_api because svc_runtime may not touch uploads or files; it locks the upload by the request''s organization and svc_api''s policies show only the calling client''s uploads and let only writers of the linked resource add the file.';


--
-- Name: file_upload_create(jsonb, integer); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.file_upload_create(p_body jsonb, p_lifetime_seconds integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := app.current_organization_id();
  v_type text := p_body #>> '{linked_resource,type}';
  v_rid text := p_body #>> '{linked_resource,id}';
  v_policy record;
  u app.file_uploads;
begin
  if v_org is null or not app_private.linked_resource_visible(v_org, v_type, v_rid) then
    perform app_private.raise('SVN04', 'LINKED_RESOURCE_NOT_FOUND', format('no %s %s in your organization', coalesce(v_type, 'resource'), v_rid), '/linked_resource/id');
  end if;
  if not app.has_any_role(app_private.file_write_roles(v_type)) then
    perform app_private.raise('SVR04', 'FILE_ACCESS_DENIED',
      format('uploading to a %s needs one of the Roles %s', v_type, array_to_string(app_private.file_write_roles(v_type), ', ')));
  end if;
  select * into v_policy from app_private.file_policy(v_org);
  if not (p_body ->> 'content_type') = any (v_policy.allowed_content_types) then
    perform app_private.raise('SVV22', 'CONTENT_TYPE_NOT_ALLOWED',
      format('%s is not permitted here; permitted: %s', p_body ->> 'content_type', array_to_string(v_policy.allowed_content_types, ', ')), '/content_type');
  end if;
  if (p_body ->> 'size_bytes')::bigint > v_policy.max_size_bytes then
    perform app_private.raise('SVV22', 'FILE_TOO_LARGE',
      format('%s bytes is over the limit of %s bytes', p_body ->> 'size_bytes', v_policy.max_size_bytes), '/size_bytes');
  end if;
  insert into app.file_uploads (organization_id, name, content_type, size_bytes, sha256, linked_resource_type, linked_resource_id,
                                created_by_client_id, expires_at)
  values (v_org, p_body ->> 'name', p_body ->> 'content_type', (p_body ->> 'size_bytes')::bigint, lower(p_body ->> 'sha256'),
          v_type, v_rid, app.current_client_id(), now() + make_interval(secs => p_lifetime_seconds))
  returning * into u;
  return app_private.file_upload_doc(u);
end
$$;


--
-- Name: FUNCTION file_upload_create(p_body jsonb, p_lifetime_seconds integer); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.file_upload_create(p_body jsonb, p_lifetime_seconds integer) IS 'createFileUpload: the linked resource must exist in the request''s organization (SVN04 LINKED_RESOURCE_NOT_FOUND), the caller must hold its write Roles (SVR04 FILE_ACCESS_DENIED), and the declared content type and size must fit the organization''s file policy (SVV22 CONTENT_TYPE_NOT_ALLOWED, FILE_TOO_LARGE answering 413); it records a pending upload of the calling client with its expiry and answers it with a capability token (an HMAC over the upload id and organization; nothing secret is stored). It runs as svc_api because svc_runtime may not write app.file_uploads; the row takes the context''s organization and client, which the policy "Writers of the linked resource start uploads" checks again.';


--
-- Name: file_upload_finish(text, bigint, text, text, boolean); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.file_upload_finish(p_upload_id text, p_size bigint, p_sha256 text, p_detected text, p_verified boolean) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  update app.file_uploads u
     set status = 'uploaded', received_size_bytes = p_size, received_sha256 = p_sha256,
         detected_content_type = p_detected, content_type_verified = p_verified
   where u.organization_id = v__organization_id and u.id = p_upload_id and u.status = 'pending';
  if not found then
    perform app_private.raise('SVC09', 'CONFLICT', 'the upload is no longer pending');
  end if;
end
$$;


--
-- Name: FUNCTION file_upload_finish(p_upload_id text, p_size bigint, p_sha256 text, p_detected text, p_verified boolean); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.file_upload_finish(p_upload_id text, p_size bigint, p_sha256 text, p_detected text, p_verified boolean) IS 'The end of the PUT to an upload link: records what arrived (size, SHA-256, the content type sniffed from the bytes and whether it fits the declared one) and moves the upload from pending to uploaded, or refuses with SVC09 CONFLICT when it is no longer pending; the lifecycle trigger checks the recorded size against the stored chunks. It runs as svc_api because svc_runtime may not update uploads; the update names the context''s organization and the policy "Clients move their own uploads on" limits it to the link''s client.';


--
-- Name: file_upload_get(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.file_upload_get(p_id text) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  u app.file_uploads;
begin
  -- The row into a variable first: on Citus a row passed whole inside the query is the shard's type.
  select * into u from app.file_uploads x where x.organization_id = v__organization_id and x.id = p_id;
  if not found then
    return null;
  end if;
  return app_private.file_upload_doc(u);
end
$$;


--
-- Name: FUNCTION file_upload_get(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.file_upload_get(p_id text) IS 'The calling client''s upload as createFileUpload answered it, its capability token derived again (an idempotent replay shows the same URL, which the stored response leaves out); null when there is no such upload of that client. It runs as svc_api because svc_runtime may not read app.file_uploads; the read names the request''s organization and the policy "Clients see their own uploads" shows only that client''s rows.';


--
-- Name: files; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.files (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('fil'::text) NOT NULL,
    name text NOT NULL,
    content_type text NOT NULL,
    size_bytes bigint NOT NULL,
    sha256 text NOT NULL,
    status text DEFAULT 'ready'::text NOT NULL,
    linked_resource_type text NOT NULL,
    linked_resource_id text NOT NULL,
    retention text,
    created_by_client_id text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    upload_id text,
    scan_status text DEFAULT 'not_scanned'::text NOT NULL,
    scan_detail text,
    rejection_code text,
    rejection_detail text,
    legal_hold boolean DEFAULT false NOT NULL,
    archived_at timestamp with time zone,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT files_content_type_format CHECK ((content_type ~ '^[a-z]+/[a-z0-9.+-]+$'::text)),
    CONSTRAINT files_linked_resource_type_valid CHECK ((linked_resource_type = ANY (ARRAY['project'::text, 'task'::text, 'invoice'::text, 'ticket'::text]))),
    CONSTRAINT files_name_length CHECK (((length(name) >= 1) AND (length(name) <= 255))),
    CONSTRAINT files_rejected_has_code CHECK (((status = 'rejected'::text) = (rejection_code IS NOT NULL))),
    CONSTRAINT files_rejection_code_valid CHECK ((rejection_code = 'FILE_SCAN_FAILED'::text)),
    CONSTRAINT files_retention_valid CHECK ((retention = 'financial_record'::text)),
    CONSTRAINT files_scan_status_valid CHECK ((scan_status = ANY (ARRAY['pending'::text, 'clean'::text, 'infected'::text, 'failed'::text, 'not_scanned'::text]))),
    CONSTRAINT files_sha256_format CHECK ((sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT files_size_positive CHECK ((size_bytes > 0)),
    CONSTRAINT files_status_valid CHECK ((status = ANY (ARRAY['processing'::text, 'ready'::text, 'rejected'::text, 'archived'::text])))
);

ALTER TABLE ONLY app.files FORCE ROW LEVEL SECURITY;


--
-- Name: files; Type: VIEW; Schema: api; Owner: -
--

CREATE VIEW api.files AS
 SELECT f.organization_id,
    f.id,
    f.status,
    f.linked_resource_type,
    f.linked_resource_id,
    f.content_type,
    f.created_at,
    jsonb_build_object('object', 'file', 'id', f.id, 'name', f.name, 'content_type', f.content_type, 'size_bytes', f.size_bytes, 'sha256', f.sha256, 'status', f.status, 'linked_resource', jsonb_build_object('type', f.linked_resource_type, 'id', f.linked_resource_id), 'scan', jsonb_build_object('status', f.scan_status, 'signature',
        CASE
            WHEN (f.scan_status = 'infected'::text) THEN f.scan_detail
            ELSE NULL::text
        END), 'rejection',
        CASE
            WHEN (f.status = 'rejected'::text) THEN jsonb_build_object('code', f.rejection_code, 'detail', f.rejection_detail)
            ELSE NULL::jsonb
        END, 'retention', jsonb_build_object('financial_record', (f.retention IS NOT NULL), 'legal_hold', f.legal_hold), 'archived_at', app_private.iso_timestamp(f.archived_at), 'created_at', app_private.iso_timestamp(f.created_at), 'updated_at', app_private.iso_timestamp(f.updated_at)) AS doc,
    NULL::integer AS version
   FROM app.files f;


--
-- Name: files(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.files(p_id text DEFAULT NULL::text) RETURNS SETOF api.files
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.files v;
    else
      return query select * from api.files v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.files', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;


--
-- Name: FUNCTION files(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.files(p_id text) IS 'The rows of view api.files for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';


--
-- Name: idempotency_claim(text, text, text, text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text) RETURNS TABLE(state text, response_status integer, response_headers jsonb, response_body text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  k record;
  -- Read once: each call verifies the context's HMAC again.
  v_org text := app.current_organization_id();
  v_client text := app.current_client_id();
begin
  if v_client is null or v_org is null then
    perform app_private.raise('SV500', 'CONTEXT_MISSING', 'no request context');
  end if;
  if not pg_try_advisory_xact_lock(hashtextextended(
       concat_ws(chr(31), v_client, p_method, p_route, p_key), 0)) then
    state := 'in_flight';
    return next;
    return;
  end if;
  select * into k from app.idempotency_keys i
   where i.organization_id = v_org and i.client_id = v_client
     and i.method = p_method and i.route = p_route and i.key = p_key;
  if found and k.expires_at > now() then
    if k.fingerprint <> p_fingerprint then
      state := 'mismatch';
    else
      state := 'replay';
      response_status := k.response_status;
      response_headers := k.response_headers;
      response_body := k.response_body;
    end if;
    return next;
    return;
  end if;
  state := 'claimed';
  -- The command sent in the same round trip as this claim runs only under this mark (its
  -- statement's one-time filter): a replay, a mismatch or a key in flight runs nothing.
  perform set_config('svc.claimed', 'yes', true);
  return next;
end
$$;


--
-- Name: FUNCTION idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text) IS 'Claims an Idempotency-Key for the calling client (organization, client, method, route template, key) in the transaction of the write it guards: a key held by a concurrent request answers in_flight (a transaction-scoped advisory lock, held until that transaction ends), a live key with another request fingerprint mismatch, one with the same fingerprint replay with its stored response, and otherwise the key is claimed and svc.claimed is set, the one mark under which the command sent in the same round trip runs. It writes nothing: api.idempotency_complete writes the key with its response, in the same transaction, so the effect and the stored response commit or roll back together. Without a signed request context it raises SV500 CONTEXT_MISSING. It runs as svc_api because svc_runtime holds no privilege on app.idempotency_keys, and the policy "Clients use only their own idempotency keys" keeps every read to the request''s organization and client.';


--
-- Name: idempotency_complete(text, text, text, text, integer, jsonb, text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.idempotency_complete(p_method text, p_route text, p_key text, p_fingerprint text, p_status integer, p_headers jsonb, p_body text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := app.current_organization_id();
  v_client text := app.current_client_id();
  -- Values, not now() (nor timestamptz + interval, which is stable): Citus runs an upsert's DO
  -- UPDATE only with immutable expressions.
  v_now timestamptz := now();
  v_expires_at timestamptz := now() + interval '24 hours';
  v_rows bigint;
begin
  -- A live row of the key cannot exist (the claim found none, and holds the key's lock until
  -- this transaction ends); an expired one is replaced.
  insert into app.idempotency_keys as i (organization_id, client_id, method, route, key, fingerprint,
                                         response_status, response_headers, response_body)
  values (v_org, v_client, p_method, p_route, p_key, p_fingerprint,
          p_status, p_headers, p_body)
  on conflict (organization_id, client_id, method, route, key) do update
    set fingerprint = excluded.fingerprint, response_status = excluded.response_status,
        response_headers = excluded.response_headers, response_body = excluded.response_body,
        created_at = v_now, expires_at = v_expires_at
    where i.organization_id = v_org and i.expires_at <= v_now;
  get diagnostics v_rows = row_count;
  if v_rows <> 1 then
    -- Only a request that holds the key on another node can have written it since the claim (the
    -- claim's lock is a node's own: a shard group's move runs the two on two nodes); the client
    -- retries and gets the stored response.
    perform app_private.raise('SVC09', 'IDEMPOTENCY_KEY_IN_USE', 'another request with this key completed first');
  end if;
end
$$;


--
-- Name: FUNCTION idempotency_complete(p_method text, p_route text, p_key text, p_fingerprint text, p_status integer, p_headers jsonb, p_body text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.idempotency_complete(p_method text, p_route text, p_key text, p_fingerprint text, p_status integer, p_headers jsonb, p_body text) IS 'Writes the Idempotency-Key the calling client claimed in this transaction, with the request''s fingerprint and the response (status, headers, body), in the same transaction as the command, so a retry with that key replays exactly what was sent; it lives 24 hours. An expired row of the key is replaced; a live one, which only a request holding the key on another node during a shard move can have written, raises SVC09 IDEMPOTENCY_KEY_IN_USE (409). It runs as svc_api because svc_runtime holds no privilege on app.idempotency_keys; the row names the signed context''s organization and client, and the policy "Clients use only their own idempotency keys" admits no other.';


--
-- Name: idempotency_stored(text, text, text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.idempotency_stored(p_method text, p_route text, p_key text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  return exists (select from app.idempotency_keys i
                  where i.organization_id = v__organization_id and i.client_id = app.current_client_id()
                    and i.method = p_method and i.route = p_route and i.key = p_key and i.expires_at > now());
end
$$;


--
-- Name: FUNCTION idempotency_stored(p_method text, p_route text, p_key text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.idempotency_stored(p_method text, p_route text, p_key text) IS 'The preflight of slow writes: whether the calling client already holds a live (unexpired) Idempotency-Key for this method, route and key, in which case the request goes straight to its replay and nothing is sent anywhere (a claim commits only together with its stored response). It runs as svc_api because svc_runtime holds no privilege on app.idempotency_keys; it reads only the signed context''s organization and client, under the policy "Clients use only their own idempotency keys".';


--
-- Name: in_organization(text, text, text[]); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.in_organization(p_organization_id text, p_statement text, p_arguments text[]) RETURNS SETOF record
    LANGUAGE plpgsql
    AS $$
declare
  v_statement text := app_private.statement_on_shards(p_organization_id, p_statement);
begin
  if v_statement = p_statement then
    return query execute p_statement using p_arguments;
    return;
  end if;
  begin
    return query execute v_statement using p_arguments;
  exception
    when undefined_table then
      return query execute p_statement using p_arguments;
    when sqlstate 'SV500' then
      if sqlerrm <> 'SHARD_VIEWS_STALE' then
        raise;
      end if;
      return query execute p_statement using p_arguments;
  end;
end
$$;


--
-- Name: FUNCTION in_organization(p_organization_id text, p_statement text, p_arguments text[]); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.in_organization(p_organization_id text, p_statement text, p_arguments text[]) IS 'Runs one statement of a request (its parameters are $1[n]) where its organization''s rows are: on Citus, delegated to that worker. Returns the statement''s rows.';


--
-- Name: in_organization_count(text, text, text[]); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.in_organization_count(p_organization_id text, p_statement text, p_arguments text[]) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
declare
  v_statement text := app_private.statement_on_shards(p_organization_id, p_statement);
  v_count bigint;
begin
  if v_statement = p_statement then
    execute p_statement using p_arguments;
    get diagnostics v_count = row_count;
    return v_count;
  end if;
  begin
    execute v_statement using p_arguments;
    get diagnostics v_count = row_count;
  exception
    when undefined_table then
      execute p_statement using p_arguments;
      get diagnostics v_count = row_count;
    when sqlstate 'SV500' then
      if sqlerrm <> 'SHARD_VIEWS_STALE' then
        raise;
      end if;
      execute p_statement using p_arguments;
      get diagnostics v_count = row_count;
  end;
  return v_count;
end
$$;


--
-- Name: FUNCTION in_organization_count(p_organization_id text, p_statement text, p_arguments text[]); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.in_organization_count(p_organization_id text, p_statement text, p_arguments text[]) IS 'Runs one statement of a request that returns no rows (its parameters are $1[n]), where its organization''s rows are; returns its row count.';


--
-- Name: integration_connection_hidden_reason(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.integration_connection_hidden_reason(p_id text) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
begin
  perform app_private.refuse_on_coordinator('api.integration_connection_hidden_reason(text)');
  return (select case when c.ownership = 'personal' then 'personal'
              when c.category = 'accounting' then 'finance' else 'manager' end
    from app.integration_connections c
   where c.id = p_id and c.organization_id = v__organization_id);
end
$$;


--
-- Name: FUNCTION integration_connection_hidden_reason(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.integration_connection_hidden_reason(p_id text) IS 'Why getIntegrationConnection, having found no row p_id in api.integration_connections, may not show it: ''personal'' (a named user''s connection, which API Clients never use: PERSONAL_CONNECTION_NOT_ALLOWED), or the Role it is relevant to (''finance'' for accounting, ''manager'' for any other category: ROLE_REQUIRED); null when the request''s organization has no such connection (INTEGRATION_CONNECTION_NOT_FOUND). It runs as svc_owner because svc_api''s policy hides exactly those rows, and it returns the reason word alone, never the row; its WHERE and svc_owner''s policy keep it to the request''s organization.';


--
-- Name: integration_connections; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.integration_connections (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('icn'::text) NOT NULL,
    provider text NOT NULL,
    category text NOT NULL,
    ownership text NOT NULL,
    owner_member_id text,
    status text NOT NULL,
    capabilities text[] DEFAULT '{}'::text[] NOT NULL,
    action_required text,
    last_success_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    CONSTRAINT integration_connections_action_required_length CHECK ((length(action_required) <= 500)),
    CONSTRAINT integration_connections_category_format CHECK ((category ~ '^[a-z_]{1,40}$'::text)),
    CONSTRAINT integration_connections_ownership_valid CHECK ((ownership = ANY (ARRAY['organization'::text, 'personal'::text]))),
    CONSTRAINT integration_connections_personal_has_owner CHECK (((ownership = 'personal'::text) = (owner_member_id IS NOT NULL))),
    CONSTRAINT integration_connections_provider_format CHECK ((provider ~ '^[a-z0-9_.-]{1,50}$'::text)),
    CONSTRAINT integration_connections_status_valid CHECK ((status = ANY (ARRAY['connected'::text, 'action_required'::text, 'error'::text, 'disconnected'::text])))
);

ALTER TABLE ONLY app.integration_connections FORCE ROW LEVEL SECURITY;


--
-- Name: integration_connections; Type: VIEW; Schema: api; Owner: -
--

CREATE VIEW api.integration_connections WITH (security_invoker='false') AS
 SELECT c.organization_id,
    c.id,
    c.category,
    c.status,
    c.created_at,
    c.version,
    jsonb_build_object('object', 'integration_connection', 'id', c.id, 'provider', c.provider, 'category', c.category, 'ownership', c.ownership, 'status', c.status, 'capabilities', to_jsonb(c.capabilities), 'last_success_at', app_private.iso_timestamp(c.last_success_at), 'action_required', c.action_required, 'version', c.version, 'created_at', app_private.iso_timestamp(c.created_at), 'updated_at', app_private.iso_timestamp(c.updated_at)) AS doc
   FROM app.integration_connections c;


--
-- Name: integration_connections(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.integration_connections(p_id text DEFAULT NULL::text) RETURNS SETOF api.integration_connections
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.integration_connections v;
    else
      return query select * from api.integration_connections v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.integration_connections', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;


--
-- Name: FUNCTION integration_connections(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.integration_connections(p_id text) IS 'The rows of view api.integration_connections for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';


--
-- Name: integration_readiness(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.integration_readiness(p_capability text) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := app.current_organization_id();
  c app.integration_connections;
  v_blockers jsonb := '[]';
begin
  perform app_private.refuse_on_coordinator('api.integration_readiness(text)');
  if v_org is null then
    perform app_private.raise('SV500', 'CONTEXT_MISSING', 'no request context');
  end if;
  -- The best eligible candidate: visible organization connections first, connected ones first.
  select * into c from app.integration_connections x
   where x.organization_id = v_org and x.ownership = 'organization' and p_capability = any (x.capabilities)
     and app_private.integration_visible(x.category)
   order by (x.status = 'connected' and x.action_required is null) desc, x.last_success_at desc nulls last, x.id
   limit 1;
  if found then
    if c.status <> 'connected' or c.action_required is not null then
      v_blockers := jsonb_build_array(jsonb_build_object('code', 'INTEGRATION_CONNECTION_NOT_READY',
        'message', coalesce(c.action_required, format('the %s connection is %s; an administrator must reconnect it in the web settings',
                                                      c.provider, c.status))));
    end if;
    return jsonb_build_object('object', 'integration_readiness', 'capability', p_capability,
      'ready', jsonb_array_length(v_blockers) = 0, 'connection_id', c.id, 'blockers', v_blockers);
  end if;
  if exists (select from app.integration_connections x where x.organization_id = v_org and x.ownership = 'organization'
              and p_capability = any (x.capabilities)) then
    v_blockers := jsonb_build_array(jsonb_build_object('code', 'ROLE_REQUIRED', 'message',
      'a connection offers this capability, but it is not relevant to your Roles (accounting needs finance, others manager)'));
  elsif exists (select from app.integration_connections x where x.organization_id = v_org and x.ownership = 'personal'
                 and p_capability = any (x.capabilities)) then
    v_blockers := jsonb_build_array(jsonb_build_object('code', 'PERSONAL_CONNECTION_NOT_ALLOWED', 'message',
      'only a personal connection of a named user offers this capability; an administrator must connect it for the organization'));
  else
    v_blockers := jsonb_build_array(jsonb_build_object('code', 'CAPABILITY_NOT_AVAILABLE', 'message',
      'no connection of your organization offers this capability; an administrator can connect a provider in the web settings'));
  end if;
  return jsonb_build_object('object', 'integration_readiness', 'capability', p_capability, 'ready', false,
    'connection_id', null, 'blockers', v_blockers);
end
$$;


--
-- Name: FUNCTION integration_readiness(p_capability text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.integration_readiness(p_capability text) IS 'checkIntegrationConnectionReadiness, performing nothing: whether an organization-owned connection relevant to the caller''s Roles (accounting to finance, every other category to manager) offers p_capability and is connected with no action required, with machine-readable blockers and safe remediation text (INTEGRATION_CONNECTION_NOT_READY, ROLE_REQUIRED, PERSONAL_CONNECTION_NOT_ALLOWED, CAPABILITY_NOT_AVAILABLE). It runs as svc_owner so that it can see the personal and Role-hidden connections svc_api''s policy hides, only to name the blocker (it returns the id of a visible connection alone); it reads the request''s organization only, and raises SV500 CONTEXT_MISSING without a request context.';


--
-- Name: invoice_attach_pdf(text, text, bytea); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.invoice_attach_pdf(p_id text, p_name text, p_content bytea) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v__organization_id text := app.current_organization_id();
  i app.invoices;
  v_file text;
begin
  perform app_private.refuse_on_coordinator('api.invoice_attach_pdf(text,text,bytea)');
  select * into i from app.invoices x
   where x.id = p_id and x.organization_id = v__organization_id and app.has_any_role('{manager,finance}')
   for update;
  if not found then
    perform app_private.invoice_not_found(p_id);
  end if;
  if i.status = 'draft' or i.pdf_file_id is not null then
    perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', 'the PDF is made once, when the invoice is issued');
  end if;
  if substring(p_content from 1 for 5) <> '\x255044462d'::bytea
     or position('\x2525454f46'::bytea in substring(p_content from greatest(1, length(p_content) - 1023))) = 0
     or p_name !~ '^[A-Za-z0-9._-]{1,120}\.pdf$' then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'an invoice PDF: a %PDF- document ending in %%EOF, with a plain .pdf name');
  end if;
  insert into app.files (organization_id, name, content_type, size_bytes, sha256, linked_resource_type, linked_resource_id,
                         retention, created_by_client_id)
  values (i.organization_id, p_name, 'application/pdf', length(p_content), encode(sha256(p_content), 'hex'), 'invoice', i.id,
          'financial_record', app.current_client_id())
  returning id into v_file;
  insert into app.file_contents (organization_id, file_id, content) values (i.organization_id, v_file, p_content);
  update app.invoices x set pdf_file_id = v_file where x.organization_id = i.organization_id and x.id = i.id;
  return v_file;
end
$_$;


--
-- Name: FUNCTION invoice_attach_pdf(p_id text, p_name text, p_content bytea); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.invoice_attach_pdf(p_id text, p_name text, p_content bytea) IS 'sendInvoice''s second step, in the transaction of api.invoice_send: stores the issued invoice''s PDF as a retained financial-record file linked to the invoice (size and SHA-256 computed here from the bytes) and sets its pdf_file_id, once per invoice; a draft or an invoice that already has its PDF is refused (SVC09 INVOICE_NOT_EDITABLE), and so is anything but a %PDF- document ending in %%EOF with a plain .pdf name (SVV22 VALIDATION_FAILED). It runs as svc_owner because svc_api may write neither file contents nor pdf_file_id; it takes the invoice only in the request''s organization and only when the caller holds manager or finance, which it checks itself since svc_owner''s policy does not (INVOICE_NOT_FOUND otherwise).';


--
-- Name: invoice_create(jsonb); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.invoice_create(p_body jsonb) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  c app.customers;
  i app.invoices;
  v_currency text;
begin
  select * into c from app.customers x where x.organization_id = v__organization_id and x.id = p_body ->> 'customer_id' and x.kind = 'billing' and x.deleted_at is null;
  if not found then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'customer_id must name a billing customer (cus_) of your organization', '/customer_id');
  end if;
  v_currency := coalesce(p_body ->> 'currency', c.currency,
                         (select o.currency from app.organizations o where o.id = v__organization_id));
  if not exists (select from app_private.currencies x where x.code = v_currency) then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', format('%s is not an ISO 4217 currency code', v_currency), '/currency');
  end if;
  insert into app.invoices (organization_id, customer_id, currency, issue_date, due_date, memo, created_by_client_id)
  values (v__organization_id, c.id, v_currency, (p_body ->> 'issue_date')::date, (p_body ->> 'due_date')::date,
          p_body ->> 'memo', app.current_client_id())
  returning * into i;
  perform app_private.invoice_set_lines(i, coalesce(p_body -> 'lines', '[]'));
  return query select v.doc, v.version from api.invoices(i.id) v where v.id = i.id;
end
$$;


--
-- Name: FUNCTION invoice_create(p_body jsonb); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.invoice_create(p_body jsonb) IS 'createInvoice: a draft in the request''s organization for a billing customer (cus_) of that organization that is not deleted (else SVV22 VALIDATION_FAILED), in the body''s currency, else the customer''s, else the organization''s, which must be an ISO 4217 code; its lines are validated and written by app_private.invoice_set_lines, and the triggers compute every amount and total (a client never supplies totals). It runs as svc_api, so svc_runtime, which holds no table privilege, writes only under svc_api''s column grants and policies: the request''s organization and the manager or finance Role ("Managers and finance write invoices").';


--
-- Name: invoice_replace_lines(text, integer[], jsonb); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.invoice_replace_lines(p_id text, p_if_match integer[], p_lines jsonb) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  i app.invoices := app_private.invoice_lock(p_id, p_if_match);
begin
  perform app_private.invoice_set_lines(i, p_lines);
  -- The lines are part of the invoice: replacing them is a new version even when the totals stay.
  update app.invoices x set memo = x.memo where x.organization_id = i.organization_id and x.id = i.id;
  return query select v.doc, v.version from api.invoices(i.id) v where v.id = i.id;
end
$$;


--
-- Name: FUNCTION invoice_replace_lines(p_id text, p_if_match integer[], p_lines jsonb); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.invoice_replace_lines(p_id text, p_if_match integer[], p_lines jsonb) IS 'replaceInvoiceLines: replaces every line of a draft at once, the new set validated as a whole so that it is accepted entirely or nothing changes, after app_private.invoice_lock has checked If-Match (SVS12 STALE_RESOURCE) and that the invoice is a draft (SVC09 INVOICE_NOT_EDITABLE, since only a draft is editable). It always writes the invoice row, so new lines are a new version even when the totals stay. It runs as svc_api: only the request''s organization and the manager or finance Role, through svc_api''s policies on invoices and lines (INVOICE_NOT_FOUND otherwise).';


--
-- Name: invoice_send(text, boolean); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.invoice_send(p_id text, p_email boolean) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET lock_timeout TO '5s'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  i app.invoices;
  c app.customers;
  o app.organizations;
begin
  perform app_private.refuse_on_coordinator('api.invoice_send(text,boolean)');
  select * into i from app.invoices x
   where x.id = p_id and x.organization_id = v__organization_id and app.has_any_role('{manager,finance}')
   for update;
  if not found then
    perform app_private.invoice_not_found(p_id);
  end if;
  if i.status <> 'draft' then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', format('the invoice is already %s (%s); only a draft is sent', i.status, i.number));
  end if;
  select * into c from app.customers x where x.organization_id = i.organization_id and x.id = i.customer_id;
  if p_email and c.deleted_at is null and c.delivery_email is null then
    perform app_private.raise('SVV22', 'CUSTOMER_DELIVERY_DETAILS_MISSING',
      format('the customer %s has no delivery email; an administrator adds one, or send with delivery.email false and deliver the PDF yourself', c.id),
      '/delivery/email');
  end if;
  update app.invoices x set status = 'sent' where x.organization_id = i.organization_id and x.id = i.id returning * into i;
  select * into o from app.organizations x where x.id = i.organization_id;
  return jsonb_build_object(
    'invoice', (select v.doc from api.invoices(i.id) v where v.id = i.id),
    'organization', jsonb_build_object('name', o.name, 'locale', o.locale),
    'customer', jsonb_build_object('id', c.id, 'name', c.name, 'email', c.delivery_email));
end
$$;


--
-- Name: FUNCTION invoice_send(p_id text, p_email boolean); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.invoice_send(p_id text, p_email boolean) IS 'sendInvoice, the database half: issues a draft of the request''s organization (status sent: the lifecycle trigger numbers it, fixes its dates and starts the accounting sync) and returns what the PDF and the email need; a non-draft is refused (SVC09 WORKFLOW_BLOCKED), and so is an email to a customer without a delivery email (SVV22 CUSTOMER_DELIVERY_DETAILS_MISSING). The server then attaches the PDF (api.invoice_attach_pdf) and hands the email over before committing, so a refused email rolls back the number, the PDF and the status together, and lock_timeout 5s bounds the wait for the organization''s number counter (55P03, answered 409 with Retry-After). It runs as svc_owner because svc_api may not write statuses or numbers; it takes the invoice only in the request''s organization and checks the manager or finance Role itself (INVOICE_NOT_FOUND otherwise).';


--
-- Name: invoice_update(text, integer[], jsonb); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.invoice_update(p_id text, p_if_match integer[], p_patch jsonb) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  i app.invoices := app_private.invoice_lock(p_id, p_if_match);
  v_issue_date date;
  v_due_date date;
begin
  if p_patch ? 'customer_id' and not exists (select from app.customers x where x.organization_id = v__organization_id and x.id = p_patch ->> 'customer_id'
                                               and x.kind = 'billing' and x.deleted_at is null) then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'customer_id must name a billing customer (cus_) of your organization', '/customer_id');
  end if;
  if p_patch ? 'currency' and not exists (select from app_private.currencies x where x.code = p_patch ->> 'currency') then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', format('%s is not an ISO 4217 currency code', p_patch ->> 'currency'), '/currency');
  end if;
  -- Cast before the update: Citus takes no cast that is not immutable inside its CASE.
  v_issue_date := (p_patch ->> 'issue_date')::date;
  v_due_date := (p_patch ->> 'due_date')::date;
  update app.invoices x
     set customer_id = case when p_patch ? 'customer_id' then p_patch ->> 'customer_id' else x.customer_id end,
         currency = case when p_patch ? 'currency' then p_patch ->> 'currency' else x.currency end,
         issue_date = case when p_patch ? 'issue_date' then v_issue_date else x.issue_date end,
         due_date = case when p_patch ? 'due_date' then v_due_date else x.due_date end,
         memo = case when p_patch ? 'memo' then p_patch ->> 'memo' else x.memo end
   where x.organization_id = i.organization_id and x.id = i.id;
  if p_patch ? 'lines' then
    select * into i from app.invoices x where x.organization_id = v__organization_id and x.id = p_id;
    perform app_private.invoice_set_lines(i, p_patch -> 'lines');
  end if;
  return query select v.doc, v.version from api.invoices(i.id) v where v.id = i.id;
end
$$;


--
-- Name: FUNCTION invoice_update(p_id text, p_if_match integer[], p_patch jsonb); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.invoice_update(p_id text, p_if_match integer[], p_patch jsonb) IS 'updateInvoice: changes the keys present in p_patch (customer_id, currency, issue_date, due_date, memo, lines) of a draft, after app_private.invoice_lock has checked If-Match (SVS12 STALE_RESOURCE) and the draft status (SVC09 INVOICE_NOT_EDITABLE); a new customer must be a billing customer of the organization that is not deleted, and a new currency an ISO 4217 code (SVV22 VALIDATION_FAILED). It runs as svc_api, so it writes only the draft fields svc_api''s column grants allow, in the request''s organization and with the manager or finance Role ("Managers and finance change invoices").';


--
-- Name: invoice_void(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.invoice_void(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  i app.invoices;
  c app.integration_connections;
begin
  perform app_private.refuse_on_coordinator('api.invoice_void(text)');
  select * into i from app.invoices x
   where x.id = p_id and x.organization_id = v__organization_id and app.has_any_role('{manager,finance}')
   for update;
  if not found then
    perform app_private.invoice_not_found(p_id);
  end if;
  if i.status = 'draft' then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', 'only an issued invoice is voided; a draft is simply never sent');
  elsif i.status <> 'void' and i.amount_paid > 0 then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED',
      format('payments of %s %s are recorded against this invoice; it cannot be voided', app_private.money_text(i.amount_paid, i.scale), i.currency));
  elsif i.status = 'sent' then
    if i.sync_status = 'pending' then
      perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED',
        'the invoice is being synchronized to the accounting provider; void it once the sync has finished');
    end if;
    if i.sync_status = 'failed' and not coalesce(i.sync_failure_definitive, false) then
      perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED',
        'the last accounting sync ended without a definite answer, so the provider may hold this invoice; an administrator synchronizes it again first');
    end if;
    if i.sync_status = 'synced' then
      select * into c from app.integration_connections x where x.organization_id = i.organization_id and x.id = i.sync_connection_id;
      if not app_private.accounting_ready(c) then
        perform app_private.accounting_not_ready(c, 'void a synchronized invoice');
      end if;
      if not 'invoice.void' = any (c.capabilities) then
        perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED',
          format('the %s connection cannot void invoices (no invoice.void capability); an administrator enables voiding on the connection', c.provider));
      end if;
      update app.invoices x set status = 'void', sync_status = 'pending', sync_error = null where x.organization_id = i.organization_id and x.id = i.id;
    else
      update app.invoices x set status = 'void' where x.organization_id = i.organization_id and x.id = i.id;
    end if;
  end if;
  return query select v.doc, v.version from api.invoices(i.id) v where v.id = i.id;
end
$$;


--
-- Name: FUNCTION invoice_void(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.invoice_void(p_id text) IS 'voidInvoice: an issued invoice without recorded payments becomes void and stays (issued invoices are never deleted; a void one is returned unchanged); a draft, an invoice with payments, one whose accounting sync is in flight, or one whose last sync failed without a definite answer (the provider may hold it) is refused with SVC09 WORKFLOW_BLOCKED. A synchronized invoice is voided only through a ready accounting connection (else ACCOUNTING_CONNECTION_NOT_READY) that offers invoice.void, and the void is queued for synchronization too. It runs as svc_owner because svc_api may not write statuses or sync fields; it takes the invoice only in the request''s organization and checks the manager or finance Role itself (INVOICE_NOT_FOUND otherwise).';


--
-- Name: money_text(numeric, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.money_text(p_amount numeric, p_scale integer) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ select pg_catalog.round(p_amount, p_scale)::text $$;


--
-- Name: invoice_lines; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.invoice_lines (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('invl'::text) NOT NULL,
    invoice_id text NOT NULL,
    "position" integer NOT NULL,
    description text NOT NULL,
    quantity numeric NOT NULL,
    unit_price numeric NOT NULL,
    tax_rate numeric DEFAULT 0 NOT NULL,
    amount numeric NOT NULL,
    tax_amount numeric NOT NULL,
    CONSTRAINT invoice_lines_description_length CHECK (((length(description) >= 1) AND (length(description) <= 1000))),
    CONSTRAINT invoice_lines_quantity_range CHECK (((quantity > (0)::numeric) AND (quantity < (1000000000)::numeric) AND (scale(quantity) <= 4))),
    CONSTRAINT invoice_lines_tax_rate_range CHECK (((tax_rate >= (0)::numeric) AND (tax_rate <= (100)::numeric) AND (scale(tax_rate) <= 4))),
    CONSTRAINT invoice_lines_unit_price_range CHECK ((abs(unit_price) < ('1000000000000'::bigint)::numeric))
);

ALTER TABLE ONLY app.invoice_lines FORCE ROW LEVEL SECURITY;


--
-- Name: invoices; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.invoices (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('inv'::text) NOT NULL,
    number text,
    status text DEFAULT 'draft'::text NOT NULL,
    customer_id text NOT NULL,
    currency text NOT NULL,
    scale smallint NOT NULL,
    issue_date date,
    due_date date,
    memo text,
    subtotal numeric DEFAULT 0 NOT NULL,
    tax_total numeric DEFAULT 0 NOT NULL,
    total numeric DEFAULT 0 NOT NULL,
    amount_paid numeric DEFAULT 0 NOT NULL,
    created_by_client_id text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    sent_at timestamp with time zone,
    pdf_file_id text,
    sync_connection_id text,
    sync_status text,
    sync_external_reference text,
    sync_error text,
    synced_at timestamp with time zone,
    sync_failure_definitive boolean,
    CONSTRAINT invoices_dates_ordered CHECK (((due_date IS NULL) OR (issue_date IS NULL) OR (due_date >= issue_date))),
    CONSTRAINT invoices_issued_has_number CHECK (((status = 'draft'::text) = (number IS NULL))),
    CONSTRAINT invoices_memo_length CHECK ((length(memo) <= 5000)),
    CONSTRAINT invoices_paid_means_settled CHECK (((status <> 'paid'::text) OR (amount_paid = total))),
    CONSTRAINT invoices_paid_within_total CHECK (((amount_paid >= (0)::numeric) AND (amount_paid <= GREATEST(total, (0)::numeric)))),
    CONSTRAINT invoices_status_valid CHECK ((status = ANY (ARRAY['draft'::text, 'sent'::text, 'paid'::text, 'void'::text]))),
    CONSTRAINT invoices_sync_error_length CHECK ((length(sync_error) <= 500)),
    CONSTRAINT invoices_sync_external_reference_length CHECK ((length(sync_external_reference) <= 255)),
    CONSTRAINT invoices_sync_has_connection CHECK (((sync_status IS NULL) = (sync_connection_id IS NULL))),
    CONSTRAINT invoices_sync_status_valid CHECK ((sync_status = ANY (ARRAY['pending'::text, 'synced'::text, 'failed'::text]))),
    CONSTRAINT invoices_total_not_negative CHECK ((total >= (0)::numeric))
);

ALTER TABLE ONLY app.invoices FORCE ROW LEVEL SECURITY;


--
-- Name: invoices; Type: VIEW; Schema: api; Owner: -
--

CREATE VIEW api.invoices WITH (security_invoker='false') AS
 SELECT i.organization_id,
    i.id,
    i.status,
    i.customer_id,
    i.currency,
    i.issue_date,
    i.due_date,
    i.created_at,
    i.version,
    i.number,
    jsonb_build_object('object', 'invoice', 'id', i.id, 'number', i.number, 'status', i.status, 'customer_id', i.customer_id, 'issue_date', i.issue_date, 'due_date', i.due_date, 'currency', i.currency, 'memo', i.memo, 'lines', COALESCE(( SELECT jsonb_agg(jsonb_build_object('id', l.id, 'description', l.description, 'quantity', (l.quantity)::text, 'unit_price', app_private.money_text(l.unit_price, (i.scale)::integer), 'tax_rate', (l.tax_rate)::text, 'amount', app_private.money_text(l.amount, (i.scale)::integer), 'tax_amount', app_private.money_text(l.tax_amount, (i.scale)::integer)) ORDER BY l."position") AS jsonb_agg
           FROM app.invoice_lines l
          WHERE (l.invoice_id = i.id)), '[]'::jsonb), 'subtotal', app_private.money_text(i.subtotal, (i.scale)::integer), 'tax_total', app_private.money_text(i.tax_total, (i.scale)::integer), 'total', app_private.money_text(i.total, (i.scale)::integer), 'amount_paid', app_private.money_text(i.amount_paid, (i.scale)::integer), 'amount_due', app_private.money_text(
        CASE
            WHEN (i.status = 'void'::text) THEN (0)::numeric
            ELSE (i.total - i.amount_paid)
        END, (i.scale)::integer), 'sent_at', app_private.iso_timestamp(i.sent_at), 'pdf_file_id', i.pdf_file_id, 'accounting_sync',
        CASE
            WHEN (i.sync_status IS NOT NULL) THEN jsonb_build_object('status', i.sync_status, 'connection_id', i.sync_connection_id, 'external_reference', i.sync_external_reference, 'synced_at', app_private.iso_timestamp(i.synced_at), 'error', i.sync_error)
            ELSE NULL::jsonb
        END, 'version', i.version, 'created_at', app_private.iso_timestamp(i.created_at), 'updated_at', app_private.iso_timestamp(i.updated_at)) AS doc
   FROM app.invoices i;


--
-- Name: invoices(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.invoices(p_id text DEFAULT NULL::text) RETURNS SETOF api.invoices
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.invoices v;
    else
      return query select * from api.invoices v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.invoices', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;


--
-- Name: FUNCTION invoices(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.invoices(p_id text) IS 'The rows of view api.invoices for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';


--
-- Name: has_any_role(text[]); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.has_any_role(roles text[]) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL RESTRICTED
    AS $$ select roles operator(pg_catalog.&&) app.current_roles() $$;


--
-- Name: has_role(text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.has_role(role text) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL RESTRICTED
    AS $$ select role operator(pg_catalog.=) any (app.current_roles()) $$;


--
-- Name: member_hr_profile(text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.member_hr_profile(p_org text, p_member_id text) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text;
begin
  v_org := app.current_organization_id();
  if v_org is null or p_org is distinct from v_org or not coalesce(app.has_role('hr'), false) then
    return null;
  end if;
  -- Per row of an hr reader's members: a catalog lookup (and on Citus one call), not another check
  -- of the context's signature.
  perform app_private.refuse_on_coordinator('app_private.member_hr_profile(text,text)');
  return (select jsonb_build_object('employee_number', m.employee_number, 'hire_date', m.hire_date, 'employment_type', m.employment_type)
            from app.members m
           where m.organization_id = p_org and m.id = p_member_id);
end
$$;


--
-- Name: FUNCTION member_hr_profile(p_org text, p_member_id text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.member_hr_profile(p_org text, p_member_id text) IS 'The HR-restricted fields of a member (employee number, hire date, employment type) for api.members: only when the caller holds the hr Role and the member is of the context''s organization, null otherwise (spec: HR-restricted fields only for hr). It runs as svc_owner because svc_api is not granted these columns; its own checks come first, then it reads the one member of that organization, and it is refused on a Citus coordinator (SV500 NOT_IN_ITS_WORKER).';


--
-- Name: normalize_email(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.normalize_email(email text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return lower(btrim(email));
end
$$;


--
-- Name: members; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.members (
    organization_id text NOT NULL,
    id text NOT NULL,
    display_name text NOT NULL,
    status text DEFAULT 'active'::text NOT NULL,
    svc_roles text[] DEFAULT '{member}'::text[] NOT NULL,
    job_title text,
    timezone text,
    employee_number text,
    hire_date date,
    employment_type text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    CONSTRAINT members_display_name_length CHECK (((length(display_name) >= 1) AND (length(display_name) <= 200))),
    CONSTRAINT members_employment_type_valid CHECK ((employment_type = ANY (ARRAY['employee'::text, 'contractor'::text, 'intern'::text]))),
    CONSTRAINT members_id_is_normalized_email CHECK (((id = app_private.normalize_email(id)) AND (id ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'::text))),
    CONSTRAINT members_roles_valid CHECK ((svc_roles <@ ARRAY['member'::text, 'manager'::text, 'finance'::text, 'hr'::text])),
    CONSTRAINT members_status_valid CHECK ((status = ANY (ARRAY['active'::text, 'inactive'::text])))
);

ALTER TABLE ONLY app.members FORCE ROW LEVEL SECURITY;


--
-- Name: members; Type: VIEW; Schema: api; Owner: -
--

CREATE VIEW api.members WITH (security_invoker='false') AS
 SELECT m.organization_id,
    m.id,
    m.display_name,
    m.status,
    m.svc_roles,
    m.version,
    ((jsonb_build_object('object', 'member', 'id', m.id, 'display_name', m.display_name, 'email', m.id, 'status', m.status) ||
        CASE
            WHEN ( SELECT app.has_any_role('{member,manager,hr}'::text[]) AS has_any_role) THEN jsonb_build_object('svc_roles', to_jsonb(m.svc_roles), 'job_title', m.job_title, 'timezone', m.timezone)
            ELSE '{}'::jsonb
        END) ||
        CASE
            WHEN ( SELECT app.has_role('hr'::text) AS has_role) THEN app_private.member_hr_profile(m.organization_id, m.id)
            ELSE '{}'::jsonb
        END) AS doc
   FROM app.members m;


--
-- Name: members(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.members(p_id text DEFAULT NULL::text) RETURNS SETOF api.members
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.members v;
    else
      return query select * from api.members v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.members', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;


--
-- Name: FUNCTION members(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.members(p_id text) IS 'The rows of view api.members for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';


--
-- Name: custom_field_definitions; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.custom_field_definitions (
    organization_id text NOT NULL,
    object_type text NOT NULL,
    api_name text NOT NULL,
    label text NOT NULL,
    field_type text NOT NULL,
    required boolean DEFAULT false NOT NULL,
    options jsonb DEFAULT '[]'::jsonb NOT NULL,
    readable_roles text[] DEFAULT '{member,manager,finance,hr}'::text[] NOT NULL,
    writable_roles text[] DEFAULT '{manager}'::text[] NOT NULL,
    filterable boolean DEFAULT false NOT NULL,
    sortable boolean DEFAULT false NOT NULL,
    "position" integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT custom_field_definitions_api_name_format CHECK ((api_name ~ '^[a-z][a-z0-9_]{0,62}$'::text)),
    CONSTRAINT custom_field_definitions_label_length CHECK (((length(label) >= 1) AND (length(label) <= 200))),
    CONSTRAINT custom_field_definitions_options_array CHECK ((jsonb_typeof(options) = 'array'::text)),
    CONSTRAINT custom_field_definitions_readable_roles_valid CHECK ((readable_roles <@ ARRAY['member'::text, 'manager'::text, 'finance'::text, 'hr'::text])),
    CONSTRAINT custom_field_definitions_select_has_options CHECK (((field_type <> ALL (ARRAY['select'::text, 'multi_select'::text])) OR (jsonb_array_length(options) > 0))),
    CONSTRAINT custom_field_definitions_type_valid CHECK ((field_type = ANY (ARRAY['text'::text, 'number'::text, 'date'::text, 'boolean'::text, 'select'::text, 'multi_select'::text, 'member'::text]))),
    CONSTRAINT custom_field_definitions_writable_roles_valid CHECK ((writable_roles <@ readable_roles))
);

ALTER TABLE ONLY app.custom_field_definitions FORCE ROW LEVEL SECURITY;


--
-- Name: object_schemas; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.object_schemas (
    organization_id text NOT NULL,
    object_type text NOT NULL,
    label text NOT NULL,
    schema_version integer DEFAULT 1 NOT NULL,
    CONSTRAINT object_schemas_type_valid CHECK ((object_type = ANY (ARRAY['project'::text, 'task'::text])))
);

ALTER TABLE ONLY app.object_schemas FORCE ROW LEVEL SECURITY;


--
-- Name: object_schemas; Type: VIEW; Schema: api; Owner: -
--

CREATE VIEW api.object_schemas WITH (security_invoker='false') AS
 SELECT s.organization_id,
    s.object_type,
    s.schema_version,
    jsonb_build_object('object', 'object_schema_summary', 'object_type', s.object_type, 'label', s.label, 'schema_version', s.schema_version, 'custom_field_count', ( SELECT count(*) AS count
           FROM app.custom_field_definitions d
          WHERE ((d.organization_id = s.organization_id) AND (d.object_type = s.object_type)))) AS summary,
    jsonb_build_object('object', 'object_schema', 'object_type', s.object_type, 'label', s.label, 'schema_version', s.schema_version, 'fields', COALESCE(( SELECT jsonb_agg(jsonb_build_object('api_name', d.api_name, 'label', d.label, 'field_type', d.field_type, 'custom_field', true, 'required', d.required, 'readable', true, 'writable', (d.writable_roles && ( SELECT app.current_roles() AS current_roles)), 'filterable', d.filterable, 'sortable', d.sortable, 'groupable', (d.field_type = ANY (ARRAY['select'::text, 'boolean'::text, 'member'::text])), 'options', d.options, 'validation',
                CASE d.field_type
                    WHEN 'text'::text THEN jsonb_build_object('max_length', 10000)
                    WHEN 'date'::text THEN jsonb_build_object('format', 'date')
                    ELSE '{}'::jsonb
                END, 'relationship_target',
                CASE
                    WHEN (d.field_type = 'member'::text) THEN 'member'::text
                    ELSE NULL::text
                END) ORDER BY d."position", d.api_name) AS jsonb_agg
           FROM app.custom_field_definitions d
          WHERE ((d.organization_id = s.organization_id) AND (d.object_type = s.object_type))), '[]'::jsonb)) AS doc
   FROM app.object_schemas s;


--
-- Name: object_schemas(); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.object_schemas() RETURNS SETOF api.object_schemas
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.object_schemas where organization_id = $1' using v_organization_id;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.object_schemas', v_organization_id) || ') v where organization_id = $1'
            using v_organization_id;
        end if;
      end
      $_$;


--
-- Name: FUNCTION object_schemas(); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.object_schemas() IS 'The rows of view api.object_schemas for the request''s organization (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';


--
-- Name: organization; Type: VIEW; Schema: api; Owner: -
--

CREATE VIEW api.organization WITH (security_invoker='false') AS
 SELECT o.id,
    o.version,
    jsonb_build_object('object', 'organization', 'id', o.id, 'name', o.name, 'status', o.status, 'timezone', o.timezone, 'currency', o.currency, 'locale', o.locale, 'created_at', app_private.iso_timestamp(o.created_at), 'links', jsonb_build_object('web', o.web_url)) AS doc
   FROM app.organizations o;


--
-- Name: organization(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.organization(p_id text DEFAULT NULL::text) RETURNS SETOF api.organization
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.organization v;
    else
      return query select * from api.organization v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.organization', v_organization_id) || ') v where id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;


--
-- Name: FUNCTION organization(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.organization(p_id text) IS 'The rows of view api.organization for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';


--
-- Name: payment_create(jsonb); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.payment_create(p_body jsonb) RETURNS TABLE(doc jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  p app.payments;
begin
  if not exists (select from app.invoices x where x.organization_id = v__organization_id and x.id = p_body ->> 'invoice_id') then
    perform app_private.invoice_not_found(p_body ->> 'invoice_id');
  end if;
  insert into app.payments (organization_id, invoice_id, amount, currency, received_date, method, external_reference, created_by_client_id)
  values (v__organization_id, p_body ->> 'invoice_id', (p_body ->> 'amount')::numeric, p_body ->> 'currency',
          (p_body ->> 'received_date')::date, p_body ->> 'method', p_body ->> 'external_reference', app.current_client_id())
  returning * into p;
  return query select jsonb_build_object('object', 'payment', 'id', p.id, 'invoice_id', p.invoice_id,
    'amount', app_private.money_text(p.amount, i.scale), 'currency', p.currency, 'received_date', p.received_date,
    'method', p.method, 'external_reference', p.external_reference, 'created_at', app_private.iso_timestamp(p.created_at),
    'invoice', v.doc)
    from app.invoices i cross join lateral api.invoices(i.id) v
   where i.organization_id = p.organization_id and i.id = p.invoice_id;
end
$$;


--
-- Name: FUNCTION payment_create(p_body jsonb); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.payment_create(p_body jsonb) IS 'createPayment: records an externally received payment (it charges nothing) of an invoice of the request''s organization and returns it with the updated invoice; the _100_apply trigger checks it against the invoice (issued, same currency, no more decimals than the currency has, not above the amount due) and adds it to amount_paid. It runs as svc_api, so the invoice must be readable with the manager or finance Role (else INVOICE_NOT_FOUND) and the insert passes "Managers and finance record payments"; the invoice''s amount_paid and status, which svc_api may not write, are written by that trigger as svc_owner.';


--
-- Name: project_create(jsonb, integer); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.project_create(p_body jsonb, p_schema_version integer) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  v_id text;
  v_currency text;
begin
  perform api.require_any_role('{manager}', 'createProject');
  perform app_private.check_schema_version('project', p_schema_version);
  -- Read first: Citus takes no subquery in the values of an INSERT.
  select o.currency into v_currency from app.organizations o where o.id = v__organization_id;
  insert into app.projects (organization_id, code, name, description, start_date, end_date, customer_id, manager_member_id,
                            currency, custom_fields, created_by_client_id)
  values (v__organization_id, p_body ->> 'code', p_body ->> 'name', p_body ->> 'description',
          (p_body ->> 'start_date')::date, (p_body ->> 'end_date')::date, p_body ->> 'customer_id',
          app_private.normalize_email(p_body ->> 'manager_member_id'),
          v_currency,
          coalesce(p_body -> 'custom_fields', '{}'), app.current_client_id())
  returning id into v_id;
  return query select * from api.project_get(v_id);
end
$$;


--
-- Name: FUNCTION project_create(p_body jsonb, p_schema_version integer); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.project_create(p_body jsonb, p_schema_version integer) IS 'createProject (manager, else SVR03 ROLE_REQUIRED): checks the client''s schema version (SVC14 OBJECT_SCHEMA_CHANGED), then inserts the project into the request''s organization with the organization''s currency, a normalized manager email and the calling client as creator; the service assigns id, status (active) and audit fields, and the project triggers check references and custom fields. It runs as svc_api because svc_runtime holds no table privilege: "Managers create projects" and svc_api''s column grants admit only the request''s organization and the columns a client may set.';


--
-- Name: project_get(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.project_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
begin
  return query select p.doc, p.version from api.projects(p_id) p where p.id = p_id;
end
$$;


--
-- Name: FUNCTION project_get(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.project_get(p_id text) IS 'The project p_id as its wire document and version (its ETag), from api.projects, or no row when it is not visible there. It runs as svc_api because svc_runtime reads no table itself: svc_api''s policies show projects of the request''s organization to a client holding any Role, and the view projects the fields per Role (finance financial, hr staffing fields).';


--
-- Name: project_set_status(text, text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.project_set_status(p_id text, p_status text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  v_status text;
begin
  perform api.require_any_role('{manager}', case p_status when 'archived' then 'archiveProject' else 'restoreProject' end);
  select status into v_status from app.projects where organization_id = v__organization_id and id = p_id for update;
  if not found then
    perform app_private.project_not_found(p_id);
  end if;
  -- Archiving an archived project (or restoring an active one) changes nothing and succeeds.
  if v_status <> p_status then
    update app.projects set status = p_status where organization_id = v__organization_id and id = p_id;
  end if;
  return query select * from api.project_get(p_id);
end
$$;


--
-- Name: FUNCTION project_set_status(p_id text, p_status text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.project_set_status(p_id text, p_status text) IS 'archiveProject and restoreProject (manager, else SVR03 ROLE_REQUIRED): locks the project of the request''s organization (SVN04 PROJECT_NOT_FOUND), changes nothing when it already has p_status, and otherwise sets the status, which tg_projects__status_change refuses while work is still active (SVC15 PROJECT_ARCHIVE_BLOCKED) and tg_projects__check_references rechecks on restore. It runs as svc_api under "Managers update projects", so only a manager''s request in its own organization changes a status, and only here (updateProject refuses status).';


--
-- Name: project_update(text, integer[], jsonb, integer); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.project_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  p app.projects;
  v_start_date date;
  v_end_date date;
  v_errors jsonb := '[]';
  k text;
begin
  perform api.require_any_role('{manager}', 'updateProject');
  select * into p from app.projects where organization_id = v__organization_id and id = p_id for update;
  if not found then
    perform app_private.project_not_found(p_id);
  end if;
  perform app_private.check_if_match(p.version, p_if_match);
  for k in select jsonb_object_keys(p_patch) order by 1 loop
    if k in ('id', 'object', 'organization_id', 'status', 'currency', 'created_at', 'updated_at', 'version') then
      v_errors := v_errors || app_private.error('/' || k, 'IMMUTABLE_FIELD',
        format('%s cannot be changed%s', k, case k when 'status' then ' here: use archive and restore' else '' end));
    end if;
  end loop;
  perform app_private.raise_errors(v_errors);
  perform app_private.check_schema_version('project', p_schema_version);
  perform app_private.raise_errors(app_private.custom_field_patch_errors('project', p.custom_fields, p_patch -> 'custom_fields'));
  -- Cast before the update: Citus takes no cast that is not immutable inside its CASE.
  v_start_date := (p_patch ->> 'start_date')::date;
  v_end_date := (p_patch ->> 'end_date')::date;
  update app.projects set
    code = case when p_patch ? 'code' then p_patch ->> 'code' else p.code end,
    name = case when p_patch ? 'name' then p_patch ->> 'name' else p.name end,
    description = case when p_patch ? 'description' then p_patch ->> 'description' else p.description end,
    start_date = case when p_patch ? 'start_date' then v_start_date else p.start_date end,
    end_date = case when p_patch ? 'end_date' then v_end_date else p.end_date end,
    customer_id = case when p_patch ? 'customer_id' then p_patch ->> 'customer_id' else p.customer_id end,
    manager_member_id = case when p_patch ? 'manager_member_id'
                             then app_private.normalize_email(p_patch ->> 'manager_member_id') else p.manager_member_id end,
    custom_fields = case when p_patch ? 'custom_fields'
                         then app_private.merge_custom_fields(p.custom_fields, p_patch -> 'custom_fields') else p.custom_fields end
  where organization_id = p.organization_id and id = p_id;
  return query select * from api.project_get(p_id);
end
$$;


--
-- Name: FUNCTION project_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.project_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) IS 'updateProject (manager, else SVR03 ROLE_REQUIRED): locks the project of the request''s organization (SVN04 PROJECT_NOT_FOUND), requires its current version in If-Match (SVS12 STALE_RESOURCE), refuses id, organization, status, currency, audit fields and version (SVV22 IMMUTABLE_FIELD), checks the schema version and every custom-field key against the caller''s Roles, then sets only the fields sent (custom fields merged, a null clears). It runs as svc_api under "Managers update projects" and column grants that keep id, organization, currency and audit fields out of a client''s reach.';


--
-- Name: readable_custom_fields(text, text, jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.readable_custom_fields(p_org text, p_object_type text, p_values jsonb) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return (select coalesce(jsonb_object_agg(d.api_name, p_values -> d.api_name), '{}'::jsonb)
            from app.custom_field_definitions d
           where d.organization_id = p_org and d.object_type = p_object_type and p_values ? d.api_name);
end
$$;


--
-- Name: FUNCTION readable_custom_fields(p_org text, p_object_type text, p_values jsonb); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.readable_custom_fields(p_org text, p_object_type text, p_values jsonb) IS 'The custom-field values a reader may see: of p_values, only the keys that are fields of p_object_type whose definitions svc_api''s "Clients see the custom fields their Roles may read" shows (the request''s organization, a readable Role held); api.projects and api.tasks call it for each row. It is svc_api''s definer so that whoever calls it (the views, svc_runtime) reads the definitions under that policy: a field hidden from the caller''s Roles never reaches the wire, and without a valid context nothing does.';


--
-- Name: projects; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.projects (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('prj'::text) NOT NULL,
    code text NOT NULL,
    name text NOT NULL,
    description text,
    status text DEFAULT 'active'::text NOT NULL,
    start_date date,
    end_date date,
    customer_id text,
    manager_member_id text,
    currency text NOT NULL,
    custom_fields jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_by_client_id text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    archived_at timestamp with time zone,
    version integer DEFAULT 1 NOT NULL,
    CONSTRAINT projects_archived_at_iff_archived CHECK (((status = 'archived'::text) = (archived_at IS NOT NULL))),
    CONSTRAINT projects_code_format CHECK ((code ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$'::text)),
    CONSTRAINT projects_currency_iso4217 CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT projects_dates_ordered CHECK (((start_date IS NULL) OR (end_date IS NULL) OR (end_date >= start_date))),
    CONSTRAINT projects_description_length CHECK ((length(description) <= 10000)),
    CONSTRAINT projects_name_length CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT projects_status_valid CHECK ((status = ANY (ARRAY['active'::text, 'archived'::text])))
);

ALTER TABLE ONLY app.projects FORCE ROW LEVEL SECURITY;


--
-- Name: projects; Type: VIEW; Schema: api; Owner: -
--

CREATE VIEW api.projects WITH (security_invoker='false') AS
 SELECT p.organization_id,
    p.id,
    p.code,
    p.name,
    p.status,
    p.customer_id,
    p.manager_member_id,
    p.start_date,
    p.end_date,
    p.created_at,
    p.updated_at,
    p.version,
    (((jsonb_build_object('object', 'project', 'id', p.id, 'code', p.code, 'name', p.name, 'status', p.status, 'start_date', p.start_date, 'end_date', p.end_date, 'created_at', app_private.iso_timestamp(p.created_at), 'updated_at', app_private.iso_timestamp(p.updated_at), 'custom_fields',
        CASE
            WHEN (p.custom_fields = '{}'::jsonb) THEN '{}'::jsonb
            ELSE app_private.readable_custom_fields(p.organization_id, 'project'::text, p.custom_fields)
        END) ||
        CASE
            WHEN ( SELECT app.has_any_role('{member,manager}'::text[]) AS has_any_role) THEN jsonb_build_object('description', p.description, 'customer_id', p.customer_id, 'manager_member_id', p.manager_member_id, 'currency', p.currency)
            ELSE '{}'::jsonb
        END) ||
        CASE
            WHEN ( SELECT app.has_role('finance'::text) AS has_role) THEN jsonb_build_object('customer_id', p.customer_id, 'currency', p.currency)
            ELSE '{}'::jsonb
        END) ||
        CASE
            WHEN ( SELECT app.has_role('hr'::text) AS has_role) THEN jsonb_build_object('manager_member_id', p.manager_member_id)
            ELSE '{}'::jsonb
        END) AS doc
   FROM app.projects p;


--
-- Name: projects(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.projects(p_id text DEFAULT NULL::text) RETURNS SETOF api.projects
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.projects v;
    else
      return query select * from api.projects v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.projects', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;


--
-- Name: FUNCTION projects(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.projects(p_id text) IS 'The rows of view api.projects for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';


--
-- Name: rate_limit_lease(text, bigint, integer, integer); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.rate_limit_lease(p_key text, p_window bigint, p_want integer, p_limit integer) RETURNS TABLE(granted integer, hits integer, window_start bigint)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  b record;
begin
  loop
    select r.window_start, r.hits into b from app_private.rate_limit_buckets r where r.key = p_key for update;
    if found then
      exit;
    end if;
    insert into app_private.rate_limit_buckets as r (key, window_start, hits) values (p_key, p_window, 0)
    on conflict (key) do nothing;
  end loop;
  window_start := greatest(b.window_start, p_window);
  hits := case when b.window_start = window_start then b.hits else 0 end;
  -- What the callers wait for, or an eighth of what is left (at most 100), whichever is more.
  granted := greatest(0, least(greatest(p_want, least(100, (p_limit - hits) / 8)), p_limit - hits));
  hits := hits + granted;
  update app_private.rate_limit_buckets r set window_start = rate_limit_lease.window_start, hits = rate_limit_lease.hits
   where r.key = p_key;
  return next;
end
$$;


--
-- Name: FUNCTION rate_limit_lease(p_key text, p_window bigint, p_want integer, p_limit integer); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.rate_limit_lease(p_key text, p_window bigint, p_want integer, p_limit integer) IS 'Leases admissions from a rate-limit key''s fixed window, shared by every API instance in app_private.rate_limit_buckets: under the bucket''s row lock it grants what the caller''s waiting requests need or an eighth of what is left (at most 100), never more than the limit leaves, so the shared count never exceeds the limit; a newer window starts again from zero. It runs as svc_gate, the only role granted the buckets (svc_runtime may not touch them directly), which hold counters under the server''s keys and no tenant rows, hence no row security.';


--
-- Name: rate_limit_release(text[], bigint[], integer[]); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.rate_limit_release(p_keys text[], p_windows bigint[], p_unused integer[]) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  update app_private.rate_limit_buckets b
     set hits = greatest(0, b.hits - u.n)
    from unnest(p_keys, p_windows, p_unused) as u(k, w, n)
   where b.key = u.k and b.window_start = u.w
$$;


--
-- Name: FUNCTION rate_limit_release(p_keys text[], p_windows bigint[], p_unused integer[]); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.rate_limit_release(p_keys text[], p_windows bigint[], p_unused integer[]) IS 'Gives back admissions an instance leased with api.rate_limit_lease and did not spend, only while the bucket is still in the same window and never below zero, so an idle instance does not keep capacity the others need. It runs as svc_gate, the only role granted app_private.rate_limit_buckets (svc_runtime may not touch them directly), which hold counters and no tenant rows.';


--
-- Name: report_download_begin(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.report_download_begin(p_token text) RETURNS TABLE(outcome text, run_id text, report_id text, format text, row_count integer, columns text[], numeric_columns text[])
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET "svc.gate_organization" TO ''
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
    perform from api.report_runs(l.id) v where v.id = l.id;
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


--
-- Name: FUNCTION report_download_begin(p_token text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.report_download_begin(p_token text) IS 'The GET of a report download link, before any request context exists: refused on a Citus coordinator (SV500 NOT_IN_ITS_WORKER); not_found unless the link''s signature holds (app_private.download_link), expired past its expiry, client_inactive unless its API Client may still make requests (app_private.begin_delivery_context, which then signs that client''s context); ok only for a succeeded, unexpired run the client may read now (api.report_runs), with its format, row count and columns. It runs as svc_gate, the credential path''s owner, because svc_runtime may not read report runs or the report catalogue; svc_gate''s policies show only the organization the link''s signature names (svc.gate_organization, its own setting, restored on return) and then the opened context''s report runs.';


--
-- Name: report_download_create(text, text, integer); Type: FUNCTION; Schema: api; Owner: -
--

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


--
-- Name: FUNCTION report_download_create(p_report_id text, p_run_id text, p_lifetime_seconds integer); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.report_download_create(p_report_id text, p_run_id text, p_lifetime_seconds integer) IS 'createReportDownload: once the client''s run has results to read (api.report_results_ready), a short-lived link token naming the run, the request''s organization, the client and an expiry p_lifetime_seconds ahead, signed with app_private.capability_mac (purpose report-download). It runs as svc_api because svc_runtime may neither read report runs nor sign capabilities; the run is read under svc_api''s policies in the request''s signed organization, and the token names that organization and client.';


--
-- Name: report_get(text); Type: FUNCTION; Schema: api; Owner: -
--

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
  return query select v.doc, v.version from api.reports(p_id) v where v.id = p_id;
end
$$;


--
-- Name: FUNCTION report_get(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.report_get(p_id text) IS 'getReport: the report definition as the caller sees it (api.reports); SVN04 REPORT_NOT_FOUND when there is none or no request organization, SVR04 REPORT_ROLE_REQUIRED when the client holds none of its required_roles (one of them is enough). It runs as svc_api because the report catalogue in app_private is not granted to svc_runtime; the definitions are the same for every organization, and the Roles are the signed context''s.';


--
-- Name: report_results; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.report_results (
    organization_id text NOT NULL,
    run_id text NOT NULL,
    n integer NOT NULL,
    data jsonb NOT NULL,
    client_id text NOT NULL
);

ALTER TABLE ONLY app.report_results FORCE ROW LEVEL SECURITY;


--
-- Name: report_results; Type: VIEW; Schema: api; Owner: -
--

CREATE VIEW api.report_results AS
 SELECT x.organization_id,
    x.run_id,
    x.n,
    (x.n)::text AS id,
    x.data AS doc
   FROM app.report_results x;


--
-- Name: report_results(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.report_results(p_id text DEFAULT NULL::text) RETURNS SETOF api.report_results
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.report_results v;
    else
      return query select * from api.report_results v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.report_results', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;


--
-- Name: FUNCTION report_results(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.report_results(p_id text) IS 'The rows of view api.report_results for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';


--
-- Name: report_results_ready(text, text); Type: FUNCTION; Schema: api; Owner: -
--

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


--
-- Name: FUNCTION report_results_ready(p_report_id text, p_run_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.report_results_ready(p_report_id text, p_run_id text) IS 'True when the calling client''s run p_run_id of report p_report_id has results to read (getReportResults, createReportDownload): after api.report_run_get''s checks, SVC09 REPORT_FAILED for a failed run, SVC09 CONFLICT while it is queued or running, SVC09 REPORT_RUN_EXPIRED once its results were purged or passed expires_at. It runs as svc_api because svc_runtime may not read app.report_runs; the run is read in the request''s organization under "Clients see their own report runs".';


--
-- Name: report_rows(text, integer, integer); Type: FUNCTION; Schema: api; Owner: -
--

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


--
-- Name: FUNCTION report_rows(p_run_id text, p_from integer, p_to integer); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.report_rows(p_run_id text, p_from integer, p_to integer) IS 'Rows p_from to p_to of run p_run_id''s results, in order, for the report download stream after api.report_download_begin has checked the link and opened its client''s context in the same statement. It runs as svc_api because svc_runtime may not read app.report_results; the read names the context''s organization and "Results are readable with their run" shows only the rows of that organization''s runs of the calling client, so without a valid context it returns nothing.';


--
-- Name: report_run_create(text, jsonb, text); Type: FUNCTION; Schema: api; Owner: -
--

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
  return (select v.doc from api.report_runs(v_id) v where v.id = v_id);
end
$$;


--
-- Name: FUNCTION report_run_create(p_report_id text, p_parameters jsonb, p_format text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.report_run_create(p_report_id text, p_parameters jsonb, p_format text) IS 'createReportRun: the definition and the client''s Roles (api.report_get), a format the definition offers (SVV22 EXPORT_FORMAT_NOT_SUPPORTED), a from/to range with to on or after from and at most three years later, which bounds a run''s work (SVV22 INVALID_REPORT_PARAMETERS; the API validated the rest against parameters_schema); then a queued run with the definition''s version and the organization''s timezone, and its job. It runs as svc_api because svc_runtime may not read the catalogue or insert report runs; "Clients request report runs" admits only a row of the signed context''s organization and client, and tg_report_runs__lifecycle only a queued one.';


--
-- Name: report_run_get(text, text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.report_run_get(p_report_id text, p_run_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform api.report_get(p_report_id);
  if not exists (select from api.report_runs(p_run_id) v where v.id = p_run_id and v.report_id = p_report_id) then
    perform app_private.raise('SVN04', 'REPORT_RUN_NOT_FOUND', format('no run %s of %s by your client', p_run_id, p_report_id));
  end if;
  return query select v.doc, v.version from api.report_runs(p_run_id) v where v.id = p_run_id;
end
$$;


--
-- Name: FUNCTION report_run_get(p_report_id text, p_run_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.report_run_get(p_report_id text, p_run_id text) IS 'getReportRun: after getReport''s checks (api.report_get), the calling client''s run p_run_id of report p_report_id as api.report_runs shows it; SVN04 REPORT_RUN_NOT_FOUND for another report''s run or any run the client did not request. It runs as svc_api because svc_runtime may not read the catalogue or report runs, and svc_api''s policy shows only the runs of the request''s signed organization and client.';


--
-- Name: report_runs; Type: TABLE; Schema: app; Owner: -
--

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


--
-- Name: report_runs; Type: VIEW; Schema: api; Owner: -
--

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


--
-- Name: report_runs(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.report_runs(p_id text DEFAULT NULL::text) RETURNS SETOF api.report_runs
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.report_runs v;
    else
      return query select * from api.report_runs v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.report_runs', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;


--
-- Name: FUNCTION report_runs(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.report_runs(p_id text) IS 'The rows of view api.report_runs for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';


--
-- Name: report_definitions; Type: TABLE; Schema: app_private; Owner: -
--

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


--
-- Name: reports; Type: VIEW; Schema: api; Owner: -
--

CREATE VIEW api.reports WITH (security_barrier='true') AS
 SELECT d.id,
    d.required_roles,
    jsonb_build_object('object', 'report_definition', 'id', d.id, 'name', d.name, 'description', d.description, 'required_roles', to_jsonb(d.required_roles), 'parameters_schema', d.parameters_schema, 'formats', to_jsonb(d.formats), 'columns', to_jsonb(d.columns), 'version', d.version) AS doc,
    d.version,
    d.id AS sort_id
   FROM app_private.report_definitions d
  WHERE (d.required_roles && ( SELECT app.current_roles() AS current_roles));


--
-- Name: reports(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.reports(p_id text DEFAULT NULL::text) RETURNS SETOF api.reports
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.reports v;
    else
      return query select * from api.reports v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.reports', v_organization_id) || ') v where true and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;


--
-- Name: FUNCTION reports(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.reports(p_id text) IS 'The rows of view api.reports for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';


--
-- Name: require_any_role(text[], text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.require_any_role(p_roles text[], p_what text) RETURNS void
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if not app.has_any_role(p_roles) then
    perform app_private.raise('SVR03', 'ROLE_REQUIRED',
      format('%s requires one of the Roles: %s', p_what, array_to_string(p_roles, ', ')));
  end if;
end
$$;


--
-- Name: FUNCTION require_any_role(p_roles text[], p_what text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.require_any_role(p_roles text[], p_what text) IS 'Raises SVR03 ROLE_REQUIRED (403), naming the operation and the Roles it needs, unless the signed request context''s Roles include one of p_roles: commands call it first to enforce the spec''s Role matrix before they read or write anything. It reads no tenant row and judges only the context, which app.has_any_role checks through app_private.context_ok(), so a forged or copied context holds no Role; it runs as svc_api, like every api command, and raises through app_private.raise, which svc_runtime may not execute.';


--
-- Name: require_tickets(boolean); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.require_tickets(p_write boolean) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  if not coalesce((select o.ticket_module_enabled from app.organizations o where o.id = v__organization_id), false) then
    perform app_private.raise('SVR04', 'TICKET_MODULE_DISABLED', 'the ticket module is not enabled for your organization');
  end if;
  if p_write then
    perform api.require_any_role('{manager}', 'writing tickets');
  elsif not app_private.may_read_tickets() then
    perform app_private.raise('SVR03', 'ROLE_REQUIRED',
      'reading tickets needs the member or manager Role (finance and hr only where the organization grants them ticket access)');
  end if;
  return true;
end
$$;


--
-- Name: FUNCTION require_tickets(p_write boolean); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.require_tickets(p_write boolean) IS 'The reason a ticket request is refused before anything is read: the organization''s ticket module is off (SVR04 TICKET_MODULE_DISABLED); a write without the manager Role (SVR03 ROLE_REQUIRED); a read without the right to read tickets (member or manager, finance or hr only where the organization grants them tickets; SVR03 ROLE_REQUIRED), as the spec''s Role matrix sets. It runs as svc_api because svc_runtime may not read app.organizations; it reads only the request''s organization.';


--
-- Name: require_time_entry_read(); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.require_time_entry_read() RETURNS void
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if not app_private.may_read_time_entries() then
    perform app_private.raise('SVR03', 'ROLE_REQUIRED',
      'time entries are readable with manager or finance (hr where the organization permits); members use reporting views');
  end if;
end
$$;


--
-- Name: FUNCTION require_time_entry_read(); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.require_time_entry_read() IS 'Raises SVR03 ROLE_REQUIRED unless the caller may read time entries (app_private.may_read_time_entries(): manager, finance, or hr where the organization permits); a member-only client reads time only through the reporting views, as the spec''s Role matrix says. It reads no table; it runs as svc_api like every api command and raises through app_private.raise, which svc_runtime may not execute.';


--
-- Name: run_cancel(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.run_cancel(p_id text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  r app.runs;
  v_lock_timeout text := current_setting('lock_timeout');
begin
  if not exists (select from api.runs(p_id) v where v.id = p_id) then
    perform app_private.raise('SVN04', 'RUN_NOT_FOUND', format('no run %s of your client', p_id));
  end if;
  perform set_config('lock_timeout', '1s', true);
  begin
    r := app_private.run_lock(p_id);
  exception when lock_not_available then
    perform app_private.raise('SVC09', 'RUN_CANCEL_NOT_AVAILABLE', 'the run is applying a tool operation; retry the cancel in a moment');
  end;
  perform set_config('lock_timeout', v_lock_timeout, true);
  if r.status in ('succeeded', 'failed', 'cancelled') then
    perform app_private.raise('SVC09', 'RUN_ALREADY_TERMINAL', format('the run is already %s', r.status));
  end if;
  update app.runs x set status = 'cancelled', required_action = null, completed_at = now()
   where x.organization_id = r.organization_id and x.id = p_id;
  return (select v.doc from api.runs(p_id) v where v.id = p_id);
end
$$;


--
-- Name: FUNCTION run_cancel(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.run_cancel(p_id text) IS 'cancelRun, best effort: SVN04 RUN_NOT_FOUND unless the run is the calling client''s; it waits at most 1 s for the run''s row lock, which the worker holds while it applies a tool operation, and answers SVC09 RUN_CANCEL_NOT_AVAILABLE (retry) rather than interrupt an operation half-way, then restores the transaction''s lock_timeout; a finished run answers SVC09 RUN_ALREADY_TERMINAL, any other becomes cancelled, and completed tool operations are not rolled back. It runs as svc_api because svc_runtime may not update runs; the policy "Clients answer and cancel their own runs" and svc_api''s column grants (status, required_action, state, completed_at) confine the update to the client''s own run in the request''s organization.';


--
-- Name: run_events_after(text, integer, integer); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.run_events_after(p_id text, p_after integer, p_limit integer) RETURNS TABLE(seq integer, type text, data jsonb, created_at text, terminal boolean)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  r app.runs;
begin
  select x.* into r from app.runs x where x.organization_id = v__organization_id and x.id = p_id;
  if not found then
    perform app_private.raise('SVN04', 'RUN_NOT_FOUND', format('no run %s of your client', p_id));
  end if;
  if r.output_purged then
    perform app_private.raise('SVC09', 'RUN_OUTPUT_EXPIRED', 'the run''s events and output are past their retention; the run itself remains');
  end if;
  return query
    select e.seq, e.type, e.data, app_private.iso_timestamp(e.created_at), e.type in ('run.completed', 'run.failed', 'run.cancelled')
      from app.run_events e
     where e.organization_id = r.organization_id and e.run_id = p_id and e.seq > p_after
     order by e.seq limit p_limit;
end
$$;


--
-- Name: FUNCTION run_events_after(p_id text, p_after integer, p_limit integer); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.run_events_after(p_id text, p_after integer, p_limit integer) IS 'For streamRunEvents: a run''s events after sequence number p_after, at most p_limit, in order, each flagged when it ends the run (run.completed, run.failed, run.cancelled); SVN04 RUN_NOT_FOUND unless the run is the calling client''s, SVC09 RUN_OUTPUT_EXPIRED once its events are past retention (the run itself remains). It runs as svc_api because svc_runtime may not read app.runs or app.run_events; every read names the request''s organization, and svc_api''s policies show only that organization''s runs and events of the calling client.';


--
-- Name: run_get(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.run_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
begin
  return query select v.doc, v.version from api.runs(p_id) v where v.id = p_id;
end
$$;


--
-- Name: FUNCTION run_get(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.run_get(p_id text) IS 'getRun: the run p_id as its client sees it (api.runs), no row for a run of another client or organization. It runs as svc_api, which reads runs and their tool calls under the policies "Clients see their own runs" and "Tool calls are readable with their run", so only the request''s signed organization and client are shown.';


--
-- Name: run_submit_action(text, text, jsonb); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.run_submit_action(p_id text, p_action_id text, p_response jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  r app.runs;
begin
  r := app_private.run_lock(p_id);
  if r.status <> 'requires_action' then
    perform app_private.raise('SVC09', 'RUN_NOT_ACTIONABLE', format('the run is %s; actions are accepted only while it requires_action', r.status));
  end if;
  if p_action_id is distinct from r.required_action ->> 'id' then
    perform app_private.raise('SVV22', 'RUN_ACTION_INVALID', format('the run waits for action %s', r.required_action ->> 'id'), '/action_id');
  end if;
  if not coalesce(r.required_action -> 'schema' -> 'properties' -> 'choice' -> 'enum' ? (p_response ->> 'choice'), false) then
    perform app_private.raise('SVV22', 'RUN_ACTION_INVALID', 'response.choice must be one of the choices the action offers', '/response/choice');
  end if;
  update app.runs x set status = 'queued', required_action = null,
         state = x.state || jsonb_build_object('action', jsonb_build_object('id', p_action_id, 'response', p_response))
   where x.organization_id = r.organization_id and x.id = p_id;
  perform app_private.queue_agent_run(p_id);
  return (select v.doc from api.runs(p_id) v where v.id = p_id);
end
$$;


--
-- Name: FUNCTION run_submit_action(p_id text, p_action_id text, p_response jsonb); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.run_submit_action(p_id text, p_action_id text, p_response jsonb) IS 'submitRunAction: locks the calling client''s run (app_private.run_lock, SVN04 RUN_NOT_FOUND), accepts only while it is requires_action (SVC09 RUN_NOT_ACTIONABLE) and only the offered action id with one of the choices its required_action.schema offers (SVV22 RUN_ACTION_INVALID; the API checked the rest of the response), then records the response in the run''s state and queues the run and its job again. As the spec requires, nothing else changes: a response is never a formal approval, an identity assertion or a permission elevation. It runs as svc_api because svc_runtime may not update runs; "Clients answer and cancel their own runs" and svc_api''s column grants confine the update to the client''s own run in the request''s organization.';


--
-- Name: run_wake_key(); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.run_wake_key() RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select encode(k.key, 'hex') from app_private.run_wake_key k $$;


--
-- Name: FUNCTION run_wake_key(); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.run_wake_key() IS 'The key (hex) of the svc_run_events notification payloads, read once by each API process''s listener (src/agents/hub.ts) to compute the opaque wake name of the runs it streams: LISTEN needs no privilege, so a payload is the first 128 bits of SHA-256(key || run id), never the run''s id, and no other role of the database learns which runs are active and when. It runs as svc_gate, one of the few roles that may read app_private.run_wake_key (svc_runtime may not); the key is one for the service and names no organization.';


--
-- Name: run_tool_calls; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.run_tool_calls (
    organization_id text NOT NULL,
    run_id text NOT NULL,
    n integer NOT NULL,
    skill text NOT NULL,
    arguments jsonb NOT NULL,
    status text NOT NULL,
    summary text,
    resources jsonb DEFAULT '[]'::jsonb NOT NULL,
    error_code text,
    conversation_id text,
    started_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    completed_at timestamp with time zone,
    result jsonb,
    client_id text NOT NULL,
    CONSTRAINT run_tool_calls_status_valid CHECK ((status = ANY (ARRAY['started'::text, 'completed'::text, 'failed'::text])))
);

ALTER TABLE ONLY app.run_tool_calls FORCE ROW LEVEL SECURITY;


--
-- Name: COLUMN run_tool_calls.result; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON COLUMN app.run_tool_calls.result IS 'what a writing skill returned (a repeated call in the run answers it)';


--
-- Name: runs; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.runs (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('run'::text) NOT NULL,
    kind text NOT NULL,
    agent_id text,
    agent_version text,
    conversation_id text,
    client_id text NOT NULL,
    subject jsonb,
    input jsonb NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    status text DEFAULT 'queued'::text NOT NULL,
    output jsonb,
    required_action jsonb,
    error jsonb,
    state jsonb DEFAULT '{}'::jsonb NOT NULL,
    output_purged boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    completed_at timestamp with time zone,
    CONSTRAINT runs_action_iff_requires_action CHECK (((status = 'requires_action'::text) = (required_action IS NOT NULL))),
    CONSTRAINT runs_agent_or_conversation CHECK (((agent_id IS NULL) <> (conversation_id IS NULL))),
    CONSTRAINT runs_completed_iff_terminal CHECK (((status = ANY (ARRAY['succeeded'::text, 'failed'::text, 'cancelled'::text])) = (completed_at IS NOT NULL))),
    CONSTRAINT runs_error_iff_failed CHECK (((status = 'failed'::text) = (error IS NOT NULL))),
    CONSTRAINT runs_kind_valid CHECK ((kind = 'agent'::text)),
    CONSTRAINT runs_output_only_when_succeeded CHECK (((output IS NULL) OR (status = 'succeeded'::text))),
    CONSTRAINT runs_status_valid CHECK ((status = ANY (ARRAY['queued'::text, 'running'::text, 'requires_action'::text, 'succeeded'::text, 'failed'::text, 'cancelled'::text])))
);

ALTER TABLE ONLY app.runs FORCE ROW LEVEL SECURITY;


--
-- Name: runs; Type: VIEW; Schema: api; Owner: -
--

CREATE VIEW api.runs AS
 SELECT r.organization_id,
    r.id,
    r.kind,
    r.status,
    r.agent_id,
    r.conversation_id,
    r.created_at,
    r.output_purged,
    jsonb_build_object('object', 'run', 'id', r.id, 'kind', r.kind, 'status', r.status, 'agent_id', r.agent_id, 'agent_version', r.agent_version, 'conversation_id', r.conversation_id, 'actor', jsonb_build_object('type', 'api_client', 'id', r.client_id), 'subject', r.subject, 'input', r.input, 'metadata', r.metadata, 'output', r.output, 'output_expired', r.output_purged, 'required_action', r.required_action, 'error', r.error, 'tool_operations', COALESCE(( SELECT jsonb_agg(jsonb_build_object('skill', c.skill, 'status', c.status, 'summary', c.summary, 'resources', c.resources, 'error_code', c.error_code, 'started_at', app_private.iso_timestamp(c.started_at), 'completed_at', app_private.iso_timestamp(c.completed_at)) ORDER BY c.n) AS jsonb_agg
           FROM app.run_tool_calls c
          WHERE ((c.organization_id = r.organization_id) AND (c.run_id = r.id))), '[]'::jsonb), 'created_at', app_private.iso_timestamp(r.created_at), 'started_at', app_private.iso_timestamp(r.started_at), 'completed_at', app_private.iso_timestamp(r.completed_at)) AS doc,
    NULL::integer AS version
   FROM app.runs r;


--
-- Name: runs(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.runs(p_id text DEFAULT NULL::text) RETURNS SETOF api.runs
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.runs v;
    else
      return query select * from api.runs v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.runs', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;


--
-- Name: FUNCTION runs(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.runs(p_id text) IS 'The rows of view api.runs for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';


--
-- Name: service_outbox_status(); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.service_outbox_status(OUT oldest_pending_event_seconds double precision, OUT deliveries_pending bigint, OUT oldest_due_delivery_seconds double precision) RETURNS record
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  select coalesce(extract(epoch from now() - (select min(e.created_at) from app.events e where e.fanout_pending)), 0)::float8,
         (select count(*) from app.webhook_deliveries d where d.status = 'pending'),
         coalesce(extract(epoch from now() - (select min(d.next_attempt_at) from app.webhook_deliveries d
                                              where d.status = 'pending' and d.next_attempt_at <= now())), 0)::float8
$$;


--
-- Name: FUNCTION service_outbox_status(OUT oldest_pending_event_seconds double precision, OUT deliveries_pending bigint, OUT oldest_due_delivery_seconds double precision); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.service_outbox_status(OUT oldest_pending_event_seconds double precision, OUT deliveries_pending bigint, OUT oldest_due_delivery_seconds double precision) IS 'The outbox gauges of /metrics over every organization: the age in seconds of the oldest event waiting for its fan-out, the number of deliveries waiting, and how long the most overdue due delivery has waited (a retry scheduled for later is not lag). It runs as svc_status, which owns nothing else and by its two policies and column grants sees, of every organization, only the waiting events'' creation times and the waiting deliveries'' status and due time; svc_runtime calls it without a request context and gets these three numbers alone.';


--
-- Name: service_schema_version(); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.service_schema_version() RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select max(version)::text from public.schema_migrations $$;


--
-- Name: FUNCTION service_schema_version(); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.service_schema_version() IS 'The newest applied migration version (the greatest in public.schema_migrations), which /ready compares with the code''s: the service answers 503 while they differ. It runs as svc_gate because svc_runtime has no privilege on public.schema_migrations; it answers a version and no tenant data, so it needs no request context.';


--
-- Name: signing_key_bootstrap(text, text, jsonb, text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.signing_key_bootstrap(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform pg_advisory_xact_lock(hashtext('svc.signing_key_bootstrap'));
  if not exists (select from app_private.signing_keys where retired_at is null) then
    insert into app_private.signing_keys (kid, alg, public_jwk, private_jwk_sealed)
    values (p_kid, p_alg, p_public_jwk, p_private_jwk_sealed);
  end if;
end
$$;


--
-- Name: FUNCTION signing_key_bootstrap(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.signing_key_bootstrap(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text) IS 'First boot: under a transaction-scoped advisory lock it stores the caller''s token signing key (the private JWK sealed by the server with SVC_SECRET_KEY, which the database never sees) only if no unretired key exists, so the first instance to arrive stores its key and every other reads it. It runs as svc_gate because svc_runtime has no privilege on app_private.signing_keys; the keys are the service''s, not an organization''s.';


--
-- Name: signing_keys_current(); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.signing_keys_current() RETURNS TABLE(kid text, alg text, public_jwk jsonb, private_jwk_sealed text, created_at timestamp with time zone)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  select k.kid, k.alg, k.public_jwk, k.private_jwk_sealed, k.created_at
    from app_private.signing_keys k
   where k.retired_at is null
   order by k.created_at desc, k.kid desc
$$;


--
-- Name: FUNCTION signing_keys_current(); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.signing_keys_current() IS 'The unretired token signing keys, newest first, with their public JWKs and sealed private JWKs: shared by every API instance and kept across restarts. It runs as svc_gate because svc_runtime has no privilege on app_private.signing_keys; a private key leaves only sealed (SVC_SECRET_KEY, outside the database), and the keys are the service''s, not an organization''s.';


--
-- Name: task_add_note(text, text, text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.task_add_note(p_id text, p_text text, p_subject_member_id text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  t app.tasks;
  n app.task_notes;
begin
  select * into t from app.tasks where organization_id = v__organization_id and id = p_id;
  if not found then
    perform app_private.task_not_found(p_id);
  end if;
  if not app.has_role('manager') and not (app.has_role('member')
       and (select w.members_may_add_notes from app.task_workflows w where w.organization_id = t.organization_id and w.id = t.workflow_id)) then
    perform app_private.raise('SVR03', 'ROLE_REQUIRED',
      'adding a note requires the manager Role, or member where the organization''s task policy permits');
  end if;
  insert into app.task_notes (organization_id, task_id, text, subject_member_id, author_client_id)
  values (t.organization_id, p_id, p_text, app_private.check_subject(p_subject_member_id), app.current_client_id())
  returning * into n;
  return jsonb_build_object('object', 'task_note', 'id', n.id, 'task_id', n.task_id, 'text', n.text,
    'subject', case when n.subject_member_id is not null then jsonb_build_object('member_id', n.subject_member_id) end,
    'author', jsonb_build_object('type', 'api_client', 'id', n.author_client_id),
    'created_at', app_private.iso_timestamp(n.created_at));
end
$$;


--
-- Name: FUNCTION task_add_note(p_id text, p_text text, p_subject_member_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.task_add_note(p_id text, p_text text, p_subject_member_id text) IS 'addTaskNote: a manager, or a member where the task''s workflow lets members add notes (members_may_add_notes; else SVR03 ROLE_REQUIRED), adds a note to a task of the request''s organization (SVN04 TASK_NOT_FOUND), with an optional subject that must be an active member (INVALID_SUBJECT_MEMBER) and the calling client as author; notes are append-only. It runs as svc_api under "Managers, or members where the task policy permits, add notes", and tg_task_notes__members_may_add holds the insert to the same rule.';


--
-- Name: task_create(jsonb, integer); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.task_create(p_body jsonb, p_schema_version integer) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  v_id text;
  v_workflow text;
  v_initial text;
begin
  perform api.require_any_role('{manager}', 'createTask');
  perform app_private.check_schema_version('task', p_schema_version);
  select w.id, s.status into v_workflow, v_initial
    from app.task_workflows w join app.task_workflow_statuses s on s.organization_id = w.organization_id and s.workflow_id = w.id and s.is_initial
   where w.organization_id = v__organization_id and w.is_default;
  insert into app.tasks (organization_id, project_id, workflow_id, code, name, description, status, priority, start_at, due_at,
                         assignee_member_ids, custom_fields, created_by_client_id)
  values (v__organization_id, p_body ->> 'project_id', v_workflow, p_body ->> 'code', p_body ->> 'name',
          p_body ->> 'description', v_initial, coalesce(p_body ->> 'priority', 'medium'),
          (p_body ->> 'start_at')::timestamptz, (p_body ->> 'due_at')::timestamptz,
          app_private.normalize_emails(coalesce(p_body -> 'assignee_member_ids', '[]')),
          coalesce(p_body -> 'custom_fields', '{}'), app.current_client_id())
  returning id into v_id;
  return query select t.doc, t.version from api.tasks(v_id) t where t.id = v_id;
end
$$;


--
-- Name: FUNCTION task_create(p_body jsonb, p_schema_version integer); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.task_create(p_body jsonb, p_schema_version integer) IS 'createTask (manager, else SVR03 ROLE_REQUIRED): checks the schema version (SVC14 OBJECT_SCHEMA_CHANGED), then inserts the task into the request''s organization in its default workflow''s initial status, priority medium unless given, with normalized assignee emails and the calling client as creator; the task triggers require an active project of the organization, distinct active assignees, the initial status and valid custom fields. It runs as svc_api under "Managers create tasks" and svc_api''s column grants, since svc_runtime holds no table privilege.';


--
-- Name: task_get(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.task_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
begin
  return query select t.doc, t.version from api.tasks(p_id) t where t.id = p_id;
end
$$;


--
-- Name: FUNCTION task_get(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.task_get(p_id text) IS 'The task p_id as its wire document and version (its ETag), from api.tasks, or no row when it is not visible there. It runs as svc_api because svc_runtime reads no table itself: svc_api''s policies show tasks of the request''s organization to a client holding any Role, and the view projects the fields per Role (finance project-financial, hr staffing context).';


--
-- Name: task_replace_dependencies(text, integer[], text[]); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.task_replace_dependencies(p_id text, p_if_match integer[], p_predecessors text[]) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  t app.tasks;
  v_missing text[];
begin
  perform api.require_any_role('{manager}', 'replaceTaskDependencies');
  t := app_private.lock_task(p_id);
  perform app_private.check_if_match(t.version, p_if_match);
  select array_agg(x order by x) into v_missing from unnest(p_predecessors) x
   where not exists (select from app.tasks o where o.organization_id = t.organization_id and o.id = x);
  if v_missing is not null then
    perform app_private.raise_errors(app_private.error('/predecessor_task_ids', 'TASK_NOT_FOUND',
      'no such tasks in your organization: ' || array_to_string(v_missing, ', ')));
  end if;
  delete from app.task_dependencies where organization_id = t.organization_id and task_id = p_id and predecessor_task_id <> all (p_predecessors);
  insert into app.task_dependencies (organization_id, task_id, predecessor_task_id)
  select t.organization_id, p_id, x from unnest(p_predecessors) x
  on conflict do nothing;
  -- The dependency set is part of the task: its ETag changes.
  update app.tasks set updated_at = now() where organization_id = t.organization_id and id = p_id;
  return query select * from api.task_get(p_id);
end
$$;


--
-- Name: FUNCTION task_replace_dependencies(p_id text, p_if_match integer[], p_predecessors text[]); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.task_replace_dependencies(p_id text, p_if_match integer[], p_predecessors text[]) IS 'replaceTaskDependencies (manager, else SVR03 ROLE_REQUIRED): locks the task of the request''s organization (SVN04 TASK_NOT_FOUND), requires its current version in If-Match (SVS12 STALE_RESOURCE), refuses predecessors that are not tasks of the organization (SVV22 TASK_NOT_FOUND), and replaces the whole predecessor set, which tg_task_dependencies__no_cycle checks for cycles and cross-project links (SVV24 DEPENDENCY_CYCLE); the task''s updated_at moves so that its ETag changes. It runs as svc_api under "Managers change dependencies" and "Managers update tasks".';


--
-- Name: task_set_archived(text, boolean); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.task_set_archived(p_id text, p_archived boolean) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  t app.tasks;
begin
  perform api.require_any_role('{manager}', case when p_archived then 'archiveTask' else 'restoreTask' end);
  t := app_private.lock_task(p_id);
  -- The rules (blocking dependents, archived project) live in tg_tasks__archive_rules.
  if p_archived and t.archived_at is null then
    update app.tasks set archived_at = now() where organization_id = t.organization_id and id = p_id;
  elsif not p_archived and t.archived_at is not null then
    update app.tasks set archived_at = null where organization_id = t.organization_id and id = p_id;
  end if;
  return query select * from api.task_get(p_id);
end
$$;


--
-- Name: FUNCTION task_set_archived(p_id text, p_archived boolean); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.task_set_archived(p_id text, p_archived boolean) IS 'archiveTask and restoreTask (manager, else SVR03 ROLE_REQUIRED): locks the task of the request''s organization (SVN04 TASK_NOT_FOUND) and sets or clears archived_at, changing nothing when the task is already so; tg_tasks__archive_rules refuses archiving while open tasks depend on it and restoring while its project is archived (SVC16 TASK_ARCHIVE_BLOCKED). It runs as svc_api under "Managers update tasks", so only a manager''s request in its own organization archives or restores.';


--
-- Name: task_transition(text, text, timestamp with time zone, text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.task_transition(p_id text, p_transition text, p_completed_at timestamp with time zone, p_subject_member_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  t app.tasks;
  v_to text;
  v_category text;
  v_subject text;
  v_now timestamptz := now();  -- Citus takes no function call that is not immutable inside an update's CASE
begin
  perform api.require_any_role('{manager}', 'transitionTask');
  t := app_private.lock_task(p_id);
  v_subject := app_private.check_subject(p_subject_member_id);
  select tr.to_status, s.category into v_to, v_category
    from app.task_workflow_transitions tr
    join app.task_workflow_statuses s on s.organization_id = tr.organization_id and s.workflow_id = tr.workflow_id and s.status = tr.to_status
   where tr.organization_id = t.organization_id and tr.workflow_id = t.workflow_id and tr.name = p_transition and tr.from_status = t.status;
  if v_to is null or t.archived_at is not null then
    perform app_private.raise('SVV23', 'INVALID_TRANSITION',
      format('%s is not offered from status %s%s; see the task''s transitions', p_transition, t.status,
             case when t.archived_at is not null then ' (the task is archived)' else '' end));
  end if;
  if p_completed_at is not null and v_category <> 'done' then
    perform app_private.raise_errors(app_private.error('/completed_at', 'VALIDATION_FAILED',
      'completed_at is accepted only by a transition that completes the task'));
  end if;
  if p_completed_at > now() + interval '5 minutes' then
    perform app_private.raise_errors(app_private.error('/completed_at', 'VALIDATION_FAILED', 'completed_at cannot be in the future'));
  end if;
  update app.tasks set status = v_to,
         completed_at = case when v_category = 'done' then coalesce(p_completed_at, v_now) end
   where organization_id = t.organization_id and id = p_id;
  insert into app.task_activity (organization_id, task_id, kind, transition, from_status, to_status, actor_client_id, subject_member_id)
  values (t.organization_id, p_id, 'transition', p_transition, t.status, v_to, app.current_client_id(), v_subject);
  return query select * from api.task_get(p_id);
end
$$;


--
-- Name: FUNCTION task_transition(p_id text, p_transition text, p_completed_at timestamp with time zone, p_subject_member_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.task_transition(p_id text, p_transition text, p_completed_at timestamp with time zone, p_subject_member_id text) IS 'transitionTask (manager, else SVR03 ROLE_REQUIRED): locks the task of the request''s organization, checks the subject (an active member, INVALID_SUBJECT_MEMBER), and moves the task along the named transition only if its workflow offers it from the current status and the task is not archived (SVV23 INVALID_TRANSITION); completed_at is accepted only into a done status and not in the future (SVV22 VALIDATION_FAILED). It records the transition in app.task_activity with the calling client as actor and the subject as whom the work concerns, running as svc_api under "Managers update tasks" and "Managers record task activity".';


--
-- Name: task_update(text, integer[], jsonb, integer); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.task_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  t app.tasks;
  v_start_at timestamptz;
  v_due_at timestamptz;
  v_errors jsonb := '[]';
  k text;
begin
  perform api.require_any_role('{manager}', 'updateTask');
  t := app_private.lock_task(p_id);
  perform app_private.check_if_match(t.version, p_if_match);
  for k in select jsonb_object_keys(p_patch) order by 1 loop
    if k in ('id', 'object', 'organization_id', 'project_id', 'status', 'created_at', 'updated_at', 'version',
             'predecessor_task_ids', 'transitions', 'completed_at', 'archived') then
      v_errors := v_errors || app_private.error('/' || k, 'IMMUTABLE_FIELD',
        format('%s cannot be changed here%s', k, case k
          when 'status' then ': use POST /v1/tasks/{task_id}/transitions'
          when 'predecessor_task_ids' then ': use PUT /v1/tasks/{task_id}/dependencies'
          when 'archived' then ': use archive and restore' else '' end));
    end if;
  end loop;
  perform app_private.raise_errors(v_errors);
  perform app_private.check_schema_version('task', p_schema_version);
  perform app_private.raise_errors(app_private.custom_field_patch_errors('task', t.custom_fields, p_patch -> 'custom_fields'));
  -- Cast before the update: Citus takes no cast that is not immutable inside its CASE.
  v_start_at := (p_patch ->> 'start_at')::timestamptz;
  v_due_at := (p_patch ->> 'due_at')::timestamptz;
  update app.tasks set
    code = case when p_patch ? 'code' then p_patch ->> 'code' else t.code end,
    name = case when p_patch ? 'name' then p_patch ->> 'name' else t.name end,
    description = case when p_patch ? 'description' then p_patch ->> 'description' else t.description end,
    priority = case when p_patch ? 'priority' then p_patch ->> 'priority' else t.priority end,
    start_at = case when p_patch ? 'start_at' then v_start_at else t.start_at end,
    due_at = case when p_patch ? 'due_at' then v_due_at else t.due_at end,
    assignee_member_ids = case when p_patch ? 'assignee_member_ids'
                               then app_private.normalize_emails(p_patch -> 'assignee_member_ids') else t.assignee_member_ids end,
    custom_fields = case when p_patch ? 'custom_fields'
                         then app_private.merge_custom_fields(t.custom_fields, p_patch -> 'custom_fields') else t.custom_fields end
  where organization_id = t.organization_id and id = p_id;
  return query select * from api.task_get(p_id);
end
$$;


--
-- Name: FUNCTION task_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.task_update(p_id text, p_if_match integer[], p_patch jsonb, p_schema_version integer) IS 'updateTask (manager, else SVR03 ROLE_REQUIRED): locks the task of the request''s organization (SVN04 TASK_NOT_FOUND), requires its current version in If-Match (SVS12 STALE_RESOURCE), refuses what changes only elsewhere or never (project, status, completed_at, dependencies, transitions, archived, identity and audit fields: SVV22 IMMUTABLE_FIELD, naming the endpoint to use), checks the schema version and each custom-field key against the caller''s Roles, then sets only the fields sent. It runs as svc_api under "Managers update tasks" and svc_api''s column grants, with the task triggers holding references, archive rules and custom fields.';


--
-- Name: task_dependencies; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.task_dependencies (
    organization_id text NOT NULL,
    task_id text NOT NULL,
    predecessor_task_id text NOT NULL,
    CONSTRAINT task_dependencies_not_self CHECK ((task_id <> predecessor_task_id))
);

ALTER TABLE ONLY app.task_dependencies FORCE ROW LEVEL SECURITY;


--
-- Name: task_workflow_transitions; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.task_workflow_transitions (
    organization_id text NOT NULL,
    workflow_id text NOT NULL,
    name text NOT NULL,
    from_status text NOT NULL,
    to_status text NOT NULL,
    CONSTRAINT task_workflow_transitions_format CHECK ((name ~ '^[a-z][a-z0-9_]{0,40}$'::text))
);

ALTER TABLE ONLY app.task_workflow_transitions FORCE ROW LEVEL SECURITY;


--
-- Name: tasks; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.tasks (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('tsk'::text) NOT NULL,
    project_id text NOT NULL,
    workflow_id text NOT NULL,
    code text,
    name text NOT NULL,
    description text,
    status text NOT NULL,
    priority text DEFAULT 'medium'::text NOT NULL,
    start_at timestamp with time zone,
    due_at timestamp with time zone,
    completed_at timestamp with time zone,
    assignee_member_ids text[] DEFAULT '{}'::text[] NOT NULL,
    custom_fields jsonb DEFAULT '{}'::jsonb NOT NULL,
    archived_at timestamp with time zone,
    created_by_client_id text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    CONSTRAINT tasks_assignees_bounded CHECK ((cardinality(assignee_member_ids) <= 50)),
    CONSTRAINT tasks_code_format CHECK ((code ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$'::text)),
    CONSTRAINT tasks_dates_ordered CHECK (((start_at IS NULL) OR (due_at IS NULL) OR (due_at >= start_at))),
    CONSTRAINT tasks_description_length CHECK ((length(description) <= 20000)),
    CONSTRAINT tasks_name_length CHECK (((length(name) >= 1) AND (length(name) <= 500))),
    CONSTRAINT tasks_priority_valid CHECK ((priority = ANY (ARRAY['low'::text, 'medium'::text, 'high'::text, 'urgent'::text])))
);

ALTER TABLE ONLY app.tasks FORCE ROW LEVEL SECURITY;


--
-- Name: tasks; Type: VIEW; Schema: api; Owner: -
--

CREATE VIEW api.tasks WITH (security_invoker='false') AS
 SELECT t.organization_id,
    t.id,
    t.project_id,
    t.status,
    t.priority,
    t.due_at,
    t.created_at,
    t.updated_at,
    t.name,
    t.code,
    t.assignee_member_ids,
    t.archived_at,
    t.version,
    (jsonb_build_object('object', 'task', 'id', t.id, 'project_id', t.project_id, 'code', t.code, 'name', t.name, 'status', t.status, 'archived', (t.archived_at IS NOT NULL), 'created_at', app_private.iso_timestamp(t.created_at), 'updated_at', app_private.iso_timestamp(t.updated_at), 'custom_fields',
        CASE
            WHEN (t.custom_fields = '{}'::jsonb) THEN '{}'::jsonb
            ELSE app_private.readable_custom_fields(t.organization_id, 'task'::text, t.custom_fields)
        END, 'description', t.description, 'priority', t.priority, 'start_at', app_private.iso_timestamp(t.start_at), 'due_at', app_private.iso_timestamp(t.due_at), 'completed_at', app_private.iso_timestamp(t.completed_at), 'assignee_member_ids', to_jsonb(t.assignee_member_ids), 'predecessor_task_ids',
        CASE
            WHEN ( SELECT app.has_any_role('{member,manager}'::text[]) AS has_any_role) THEN COALESCE(( SELECT jsonb_agg(d.predecessor_task_id ORDER BY d.predecessor_task_id) AS jsonb_agg
               FROM app.task_dependencies d
              WHERE ((d.organization_id = t.organization_id) AND (d.task_id = t.id))), '[]'::jsonb)
            ELSE NULL::jsonb
        END, 'transitions',
        CASE
            WHEN (t.archived_at IS NULL) THEN COALESCE(w.transitions, '[]'::jsonb)
            ELSE '[]'::jsonb
        END) - ( SELECT
                CASE
                    WHEN app.has_any_role('{member,manager}'::text[]) THEN '{}'::text[]
                    ELSE (('{description,priority,predecessor_task_ids,transitions}'::text[] ||
                    CASE
                        WHEN app.has_role('finance'::text) THEN '{}'::text[]
                        ELSE '{completed_at}'::text[]
                    END) ||
                    CASE
                        WHEN app.has_role('hr'::text) THEN '{}'::text[]
                        ELSE '{assignee_member_ids,start_at,due_at}'::text[]
                    END)
                END AS "case")) AS doc
   FROM (app.tasks t
     LEFT JOIN LATERAL ( SELECT jsonb_agg(jsonb_build_object('name', tr.name, 'to_status', tr.to_status) ORDER BY tr.name) AS transitions
           FROM app.task_workflow_transitions tr
          WHERE ((tr.organization_id = t.organization_id) AND (tr.workflow_id = t.workflow_id) AND (tr.from_status = t.status))) w ON (true));


--
-- Name: tasks(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.tasks(p_id text DEFAULT NULL::text) RETURNS SETOF api.tasks
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.tasks v;
    else
      return query select * from api.tasks v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.tasks', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;


--
-- Name: FUNCTION tasks(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.tasks(p_id text) IS 'The rows of view api.tasks for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';


--
-- Name: ticket_create(jsonb); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.ticket_create(p_body jsonb) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  v_id text;
  v_status text;
  v_tags text[];
begin
  perform api.require_tickets(true);
  -- Read first: Citus takes no subquery in the values of an INSERT.
  select s.status into v_status from app.ticket_statuses s where s.organization_id = v__organization_id and s.is_initial;
  v_tags := coalesce((select array_agg(distinct lower(btrim(x))) from jsonb_array_elements_text(coalesce(p_body -> 'tags', '[]')) x), '{}');
  insert into app.tickets (organization_id, subject, description, status, priority, requester_name, requester_email, tags,
                           external_id, created_by_client_id)
  values (v__organization_id, p_body ->> 'subject', p_body ->> 'description',
          v_status,
          coalesce(p_body ->> 'priority', 'normal'), p_body #>> '{requester,name}', lower(btrim(p_body #>> '{requester,email}')),
          v_tags,
          p_body ->> 'external_id', app.current_client_id())
  returning id into v_id;
  return query select v.doc, v.version from api.tickets(v_id) v where v.id = v_id;
end
$$;


--
-- Name: FUNCTION ticket_create(p_body jsonb); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.ticket_create(p_body jsonb) IS 'createTicket (manager, checked by api.require_tickets): a ticket of the request''s organization in its workflow''s initial status, priority normal unless given, the requester''s email and the tags trimmed and lower-cased (tags once each), recorded as the calling client''s; its number and the workflow are the rules trigger''s. It runs as svc_api because svc_runtime may not write app.tickets; the row takes the context''s organization and client, which the policy "Managers create tickets" checks again.';


--
-- Name: ticket_get(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.ticket_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform api.require_tickets(false);
  return query select v.doc, v.version from api.tickets(p_id) v where v.id = p_id;
end
$$;


--
-- Name: FUNCTION ticket_get(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.ticket_get(p_id text) IS 'getTicket: the ticket''s document and version (its ETag) from api.tickets, after api.require_tickets(false) has refused a disabled module or a caller who may not read tickets; no row when the ticket is not visible. It runs as svc_api because svc_runtime may not read the ticket tables; svc_api''s policies show only the request''s organization''s tickets, and only to ticket readers.';


--
-- Name: ticket_message_create(text, jsonb); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.ticket_message_create(p_ticket_id text, p_body jsonb) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  t app.tickets;
  v_id text;
  v_files text[] := coalesce((select array_agg(x) from jsonb_array_elements_text(coalesce(p_body -> 'attachments', '[]')) x), '{}');
  v_bad text[];
begin
  perform api.require_tickets(true);
  t := app_private.lock_ticket(p_ticket_id);
  select array_agg(a order by a) into v_bad from unnest(v_files) a
   where not exists (select from api.files(a) f where f.id = a and f.status = 'ready'
                                             and f.linked_resource_type = 'ticket' and f.linked_resource_id = t.id);
  if v_bad is not null then
    perform app_private.raise_errors(app_private.error('/attachments', 'ATTACHMENT_NOT_AVAILABLE',
      format('not ready files of ticket %s that you may read: %s; upload attachments with linked_resource {type: ticket, id: %s}',
             t.id, array_to_string(v_bad, ', '), t.id)));
  end if;
  insert into app.ticket_messages (organization_id, ticket_id, type, body, attachment_file_ids, author_client_id)
  values (t.organization_id, t.id, p_body ->> 'type', p_body ->> 'body', v_files, app.current_client_id())
  returning id into v_id;
  return (select v.doc from api.ticket_messages(v_id) v where v.id = v_id);
end
$$;


--
-- Name: FUNCTION ticket_message_create(p_ticket_id text, p_body jsonb); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.ticket_message_create(p_ticket_id text, p_body jsonb) IS 'createTicketMessage (manager): locks the ticket (SVN04 TICKET_NOT_FOUND), requires every attachment to be a ready file linked to this ticket that the caller may read (SVV22 ATTACHMENT_NOT_AVAILABLE), and records the reply or internal note with the calling client as its author, as the spec asks; a reply is then emailed to the requester by the worker. It runs as svc_api because svc_runtime may not write app.ticket_messages; the message takes the locked ticket''s organization and passes the policy "Managers add messages".';


--
-- Name: ticket_messages; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.ticket_messages (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('tmsg'::text) NOT NULL,
    ticket_id text NOT NULL,
    type text NOT NULL,
    body text NOT NULL,
    attachment_file_ids text[] DEFAULT '{}'::text[] NOT NULL,
    author_client_id text NOT NULL,
    delivery_status text,
    delivery_detail text,
    delivered_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT ticket_messages_attachments_bounded CHECK ((cardinality(attachment_file_ids) <= 20)),
    CONSTRAINT ticket_messages_body_length CHECK ((((length(body) >= 1) AND (length(body) <= 50000)) AND (body ~ '\S'::text))),
    CONSTRAINT ticket_messages_delivery_for_replies CHECK (((type = 'reply'::text) = (delivery_status IS NOT NULL))),
    CONSTRAINT ticket_messages_delivery_valid CHECK ((delivery_status = ANY (ARRAY['queued'::text, 'sent'::text, 'failed'::text]))),
    CONSTRAINT ticket_messages_type_valid CHECK ((type = ANY (ARRAY['reply'::text, 'internal_note'::text])))
);

ALTER TABLE ONLY app.ticket_messages FORCE ROW LEVEL SECURITY;


--
-- Name: ticket_messages; Type: VIEW; Schema: api; Owner: -
--

CREATE VIEW api.ticket_messages AS
 SELECT m.organization_id,
    m.id,
    m.ticket_id,
    m.type,
    m.created_at,
    jsonb_build_object('object', 'ticket_message', 'id', m.id, 'ticket_id', m.ticket_id, 'type', m.type, 'body', m.body, 'attachments', to_jsonb(m.attachment_file_ids), 'author', jsonb_build_object('type', 'api_client', 'id', m.author_client_id), 'delivery',
        CASE
            WHEN (m.type = 'reply'::text) THEN jsonb_build_object('status', m.delivery_status, 'detail', m.delivery_detail, 'delivered_at', app_private.iso_timestamp(m.delivered_at))
            ELSE NULL::jsonb
        END, 'created_at', app_private.iso_timestamp(m.created_at)) AS doc
   FROM app.ticket_messages m;


--
-- Name: ticket_messages(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.ticket_messages(p_id text DEFAULT NULL::text) RETURNS SETOF api.ticket_messages
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.ticket_messages v;
    else
      return query select * from api.ticket_messages v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.ticket_messages', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;


--
-- Name: FUNCTION ticket_messages(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.ticket_messages(p_id text) IS 'The rows of view api.ticket_messages for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';


--
-- Name: ticket_require(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.ticket_require(p_id text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  if not exists (select from app.tickets t where t.organization_id = v__organization_id and t.id = p_id) then
    perform app_private.ticket_not_found(p_id);
  end if;
  return true;
end
$$;


--
-- Name: FUNCTION ticket_require(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.ticket_require(p_id text) IS 'Answers SVN04 TICKET_NOT_FOUND unless the ticket exists in the request''s organization and the caller may see it, so that listTicketMessages tells a missing ticket from one without messages. It runs as svc_api because svc_runtime may not read app.tickets; the read names the request''s organization and the ticket readers'' policy applies.';


--
-- Name: ticket_search_ids(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.ticket_search_ids(p_query text) RETURNS SETOF text
    LANGUAGE plpgsql STABLE SECURITY DEFINER ROWS 100
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
begin
  perform app_private.refuse_on_coordinator('api.ticket_search_ids(text)');
  return query select s.ticket_id from app.ticket_search s
   where (select app_private.may_read_tickets())
     and s.organization_id = v__organization_id and s.public_doc @@ websearch_to_tsquery('simple', p_query)
  union
  select s.ticket_id from app.ticket_search s
   where (select app_private.may_read_internal_notes())
     and s.organization_id = v__organization_id and s.internal_doc @@ websearch_to_tsquery('simple', p_query);
end
$$;


--
-- Name: FUNCTION ticket_search_ids(p_query text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.ticket_search_ids(p_query text) IS 'The ids of the request''s organization''s tickets that match a web-search query, for listTickets'' search: the public document (subject, description, replies) for whoever may read tickets, the internal-note document only for those who may read internal notes (member, manager), so a reader who may not see notes cannot find a ticket by them. It runs as svc_owner, whose policy on app.ticket_search shows only the request''s organization; it names that organization and applies the reader checks itself, and returns only ids, which api.tickets filters again by its policies (refused on a Citus coordinator, SV500 NOT_IN_ITS_WORKER).';


--
-- Name: ticket_transition(text, text, text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.ticket_transition(p_id text, p_transition text, p_resolution text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  t app.tickets;
  tr app.ticket_transitions;
begin
  perform api.require_tickets(true);
  t := app_private.lock_ticket(p_id);
  select * into tr from app.ticket_transitions x
   where x.organization_id = t.organization_id and x.name = p_transition and x.from_status = t.status;
  if not found then
    perform app_private.raise('SVV23', 'INVALID_TRANSITION',
      format('%s is not offered from status %s; see the ticket''s transitions', p_transition, t.status), '/transition');
  end if;
  if tr.requires_resolution and (p_resolution is null or p_resolution !~ '\S') then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', format('%s needs a resolution', p_transition), '/resolution');
  end if;
  if not tr.requires_resolution and p_resolution is not null then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', format('%s takes no resolution', p_transition), '/resolution');
  end if;
  update app.tickets x set status = tr.to_status, resolution = coalesce(p_resolution, case when tr.to_status = 'closed' then t.resolution end)
   where x.organization_id = t.organization_id and x.id = p_id;
  return query select v.doc, v.version from api.tickets(p_id) v where v.id = p_id;
end
$$;


--
-- Name: FUNCTION ticket_transition(p_id text, p_transition text, p_resolution text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.ticket_transition(p_id text, p_transition text, p_resolution text) IS 'transitionTicket (manager): locks the ticket and applies the named transition only where the organization''s workflow offers it from the current status (SVV23 INVALID_TRANSITION); a transition that requires a resolution needs a non-blank one and the others take none (SVV22 VALIDATION_FAILED); closing keeps the resolution, other transitions without one clear it. It runs as svc_api because svc_runtime may not write app.tickets; the update names the ticket''s organization, passes "Managers change tickets", and the rules trigger checks the move again.';


--
-- Name: ticket_update(text, integer[], jsonb); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.ticket_update(p_id text, p_if_match integer[], p_patch jsonb) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  t app.tickets;
  v_errors jsonb := '[]';
  k text;
begin
  perform api.require_tickets(true);
  t := app_private.lock_ticket(p_id);
  -- The spec's tie: a status sent here is an attempt at a transition that is not offered this way.
  if p_patch ? 'status' then
    perform app_private.raise('SVV23', 'INVALID_TRANSITION', 'status changes only through POST /v1/tickets/{ticket_id}/transitions', '/status');
  end if;
  perform app_private.check_if_match(t.version, p_if_match);
  for k in select jsonb_object_keys(p_patch) order by 1 loop
    if k not in ('subject', 'description', 'priority', 'tags', 'assignee_member_id', 'project_id') then
      v_errors := v_errors || app_private.error('/' || k, 'IMMUTABLE_FIELD', format('%s cannot be changed here', k));
    end if;
  end loop;
  perform app_private.raise_errors(v_errors);
  update app.tickets x set
    subject = case when p_patch ? 'subject' then p_patch ->> 'subject' else t.subject end,
    description = case when p_patch ? 'description' then p_patch ->> 'description' else t.description end,
    priority = case when p_patch ? 'priority' then p_patch ->> 'priority' else t.priority end,
    tags = case when p_patch ? 'tags'
                then coalesce((select array_agg(distinct lower(btrim(e))) from jsonb_array_elements_text(p_patch -> 'tags') e), '{}')
                else t.tags end,
    assignee_member_id = case when p_patch ? 'assignee_member_id' then app_private.normalize_email(p_patch ->> 'assignee_member_id')
                              else t.assignee_member_id end,
    project_id = case when p_patch ? 'project_id' then p_patch ->> 'project_id' else t.project_id end
   where x.organization_id = t.organization_id and x.id = p_id;
  return query select v.doc, v.version from api.tickets(p_id) v where v.id = p_id;
end
$$;


--
-- Name: FUNCTION ticket_update(p_id text, p_if_match integer[], p_patch jsonb); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.ticket_update(p_id text, p_if_match integer[], p_patch jsonb) IS 'updateTicket (manager): a status in the patch is refused (SVV23 INVALID_TRANSITION: status changes only through transitions), If-Match must name the current version (SVS12 STALE_RESOURCE), and only subject, description, priority, tags, assignee and project change (SVV22 IMMUTABLE_FIELD); the assignee and project are checked by the rules trigger. It runs as svc_api because svc_runtime may not write app.tickets; the locked ticket and the update name the request''s organization and pass "Managers change tickets".';


--
-- Name: ticket_transitions; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.ticket_transitions (
    organization_id text NOT NULL,
    name text NOT NULL,
    from_status text NOT NULL,
    to_status text NOT NULL,
    requires_resolution boolean DEFAULT false NOT NULL,
    CONSTRAINT ticket_transitions_format CHECK ((name ~ '^[a-z][a-z0-9_]{0,40}$'::text))
);

ALTER TABLE ONLY app.ticket_transitions FORCE ROW LEVEL SECURITY;


--
-- Name: tickets; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.tickets (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('tkt'::text) NOT NULL,
    number text NOT NULL,
    subject text NOT NULL,
    description text,
    status text NOT NULL,
    priority text DEFAULT 'normal'::text NOT NULL,
    requester_name text,
    requester_email text NOT NULL,
    assignee_member_id text,
    project_id text,
    tags text[] DEFAULT '{}'::text[] NOT NULL,
    external_id text,
    resolution text,
    resolved_at timestamp with time zone,
    created_by_client_id text NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT tickets_description_length CHECK ((length(description) <= 50000)),
    CONSTRAINT tickets_external_id_length CHECK (((length(external_id) >= 1) AND (length(external_id) <= 255))),
    CONSTRAINT tickets_priority_valid CHECK ((priority = ANY (ARRAY['low'::text, 'normal'::text, 'high'::text, 'urgent'::text]))),
    CONSTRAINT tickets_requester_email_format CHECK (((requester_email ~ '^[^@\s]+@[^@\s]+$'::text) AND (length(requester_email) <= 320))),
    CONSTRAINT tickets_requester_name_length CHECK ((length(requester_name) <= 200)),
    CONSTRAINT tickets_resolution_length CHECK ((length(resolution) <= 10000)),
    CONSTRAINT tickets_subject_length CHECK ((((length(subject) >= 1) AND (length(subject) <= 500)) AND (subject ~ '\S'::text))),
    CONSTRAINT tickets_tags_bounded CHECK ((cardinality(tags) <= 50))
);

ALTER TABLE ONLY app.tickets FORCE ROW LEVEL SECURITY;


--
-- Name: tickets; Type: VIEW; Schema: api; Owner: -
--

CREATE VIEW api.tickets AS
 SELECT t.organization_id,
    t.id,
    t.status,
    t.priority,
    t.assignee_member_id,
    t.project_id,
    t.requester_email,
    t.tags,
    t.created_at,
    t.updated_at,
    t.version,
    jsonb_build_object('object', 'ticket', 'id', t.id, 'number', t.number, 'subject', t.subject, 'description', t.description, 'status', t.status, 'priority', t.priority, 'requester', jsonb_build_object('name', t.requester_name, 'email',
        CASE
            WHEN ( SELECT app.has_any_role('{member,manager}'::text[]) AS has_any_role) THEN t.requester_email
            ELSE NULL::text
        END), 'assignee_member_id', t.assignee_member_id, 'project_id', t.project_id, 'tags', to_jsonb(t.tags), 'external_id', t.external_id, 'resolution', t.resolution, 'resolved_at', app_private.iso_timestamp(t.resolved_at), 'transitions', COALESCE(( SELECT jsonb_agg(jsonb_build_object('name', tr.name, 'to_status', tr.to_status, 'requires_resolution', tr.requires_resolution) ORDER BY tr.name) AS jsonb_agg
           FROM app.ticket_transitions tr
          WHERE ((tr.organization_id = t.organization_id) AND (tr.from_status = t.status))), '[]'::jsonb), 'version', t.version, 'created_at', app_private.iso_timestamp(t.created_at), 'updated_at', app_private.iso_timestamp(t.updated_at)) AS doc
   FROM app.tickets t;


--
-- Name: tickets(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.tickets(p_id text DEFAULT NULL::text) RETURNS SETOF api.tickets
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.tickets v;
    else
      return query select * from api.tickets v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.tickets', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;


--
-- Name: FUNCTION tickets(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.tickets(p_id text) IS 'The rows of view api.tickets for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';


--
-- Name: current_client_id(); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.current_client_id() RETURNS text
    LANGUAGE sql STABLE PARALLEL RESTRICTED
    AS $$
  select case when app_private.context_ok()
              then case when pg_catalog.current_setting('svc.client_id', true) operator(pg_catalog.=) '' then null
                        else pg_catalog.current_setting('svc.client_id', true) end end
$$;


--
-- Name: time_entries; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.time_entries (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('tim'::text) NOT NULL,
    member_id text NOT NULL,
    project_id text NOT NULL,
    task_id text,
    work_date date NOT NULL,
    minutes integer NOT NULL,
    billable boolean DEFAULT true NOT NULL,
    notes text,
    status text DEFAULT 'draft'::text NOT NULL,
    external_id text,
    created_by_client_id text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    deleted_at timestamp with time zone,
    version integer DEFAULT 1 NOT NULL,
    CONSTRAINT time_entries_external_id_length CHECK (((length(external_id) >= 1) AND (length(external_id) <= 255))),
    CONSTRAINT time_entries_minutes_range CHECK (((minutes >= 1) AND (minutes <= 1440))),
    CONSTRAINT time_entries_notes_length CHECK ((length(notes) <= 5000)),
    CONSTRAINT time_entries_status_valid CHECK ((status = ANY (ARRAY['draft'::text, 'submitted'::text, 'approved'::text, 'rejected'::text])))
);

ALTER TABLE ONLY app.time_entries FORCE ROW LEVEL SECURITY;


--
-- Name: time_entries; Type: VIEW; Schema: api; Owner: -
--

CREATE VIEW api.time_entries WITH (security_invoker='false') AS
 SELECT e.organization_id,
    e.id,
    e.member_id,
    e.project_id,
    e.task_id,
    e.work_date,
    e.status,
    e.billable,
    e.external_id,
    e.created_by_client_id,
    e.deleted_at,
    e.version,
    jsonb_build_object('object', 'time_entry', 'id', e.id, 'member_id', e.member_id, 'project_id', e.project_id, 'task_id', e.task_id, 'work_date', e.work_date, 'minutes', e.minutes, 'billable', e.billable, 'notes', e.notes, 'status', e.status, 'external_id',
        CASE
            WHEN (e.created_by_client_id = ( SELECT app.current_client_id() AS current_client_id)) THEN e.external_id
            ELSE NULL::text
        END, 'approval_id', ( SELECT a.id
           FROM app.approvals a
          WHERE ((a.resource_type = 'time_entry'::text) AND (a.resource_id = e.id))), 'created_at', app_private.iso_timestamp(e.created_at), 'updated_at', app_private.iso_timestamp(e.updated_at)) AS doc
   FROM app.time_entries e;


--
-- Name: time_entries(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.time_entries(p_id text DEFAULT NULL::text) RETURNS SETOF api.time_entries
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.time_entries v;
    else
      return query select * from api.time_entries v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.time_entries', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;


--
-- Name: FUNCTION time_entries(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.time_entries(p_id text) IS 'The rows of view api.time_entries for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';


--
-- Name: time_entry_batch(jsonb, boolean); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.time_entry_batch(p_entries jsonb, p_atomic boolean) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_item jsonb;
  v_index integer := 0;
  v_results jsonb := '[]';
  v_errors jsonb := '[]';
  v_id text;
  v_state text;
  v_message text;
  v_detail text;
  v_hint text;
  v_item_errors jsonb;
begin
  perform api.require_any_role('{manager}', 'createTimeEntryBatch');
  for v_item in select e from jsonb_array_elements(p_entries) e loop
    begin
      v_id := app_private.time_entry_insert(v_item);
      v_results := v_results || jsonb_build_array(jsonb_build_object('index', v_index, 'status', 'created',
        'time_entry', (select t.doc from api.time_entries(v_id) t where t.id = v_id)));
    exception when others then
      get stacked diagnostics v_state = returned_sqlstate, v_message = message_text, v_detail = pg_exception_detail,
                              v_hint = pg_exception_hint;
      if v_state not like 'SV%' and v_state not in ('23505', '22007', '22008', '22P02', '22003', '23514') then
        raise;
      end if;
      if v_state = '23505' then
        v_message := 'EXTERNAL_ID_CONFLICT';
        v_item_errors := app_private.error('/external_id', 'EXTERNAL_ID_CONFLICT', 'this external_id is already used by your client');
      elsif v_state like '22%' or v_state = '23514' then
        v_message := 'VALIDATION_FAILED';
        v_item_errors := app_private.error('', 'VALIDATION_FAILED', 'a value is out of range or malformed');
      elsif v_hint = 'errors' then
        v_item_errors := v_detail::jsonb;
      else
        v_item_errors := app_private.error('', v_message, v_detail);
      end if;
      v_results := v_results || jsonb_build_array(jsonb_build_object('index', v_index, 'status', 'failed',
        'error', jsonb_build_object('code', v_message, 'errors', v_item_errors)));
      v_errors := v_errors || (select jsonb_agg(jsonb_set(e, '{pointer}', to_jsonb('/entries/' || v_index || coalesce(e ->> 'pointer', ''))))
                                 from jsonb_array_elements(v_item_errors) e);
    end;
    v_index := v_index + 1;
  end loop;
  if p_atomic and jsonb_array_length(v_errors) > 0 then
    perform app_private.raise_errors(v_errors);
  end if;
  return jsonb_build_object('object', 'time_entry_batch', 'atomic', p_atomic,
    'created', (select count(*) from jsonb_array_elements(v_results) r where r ->> 'status' = 'created'),
    'failed', (select count(*) from jsonb_array_elements(v_results) r where r ->> 'status' = 'failed'),
    'results', v_results);
end
$$;


--
-- Name: FUNCTION time_entry_batch(p_entries jsonb, p_atomic boolean); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.time_entry_batch(p_entries jsonb, p_atomic boolean) IS 'createTimeEntryBatch, manager only (else SVR03 ROLE_REQUIRED): inserts each entry as createTimeEntry does, each in its own subtransaction, and reports each item as created (with its document) or failed (its codes, with pointers under /entries/<index>; a unique violation becomes EXTERNAL_ID_CONFLICT, a malformed or out-of-range value VALIDATION_FAILED). In atomic mode any failure raises every item''s problems together and keeps nothing; otherwise the valid entries stay. It runs as svc_api because svc_runtime has no privilege on app.time_entries: each insert takes the organization and creator from the signed context, and the policy "Managers record time" and the table''s triggers hold for every item.';


--
-- Name: time_entry_create(jsonb); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.time_entry_create(p_body jsonb) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_id text;
begin
  perform api.require_any_role('{manager}', 'createTimeEntry');
  v_id := app_private.time_entry_insert(p_body);
  return query select * from api.time_entry_get(v_id);
end
$$;


--
-- Name: FUNCTION time_entry_create(p_body jsonb); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.time_entry_create(p_body jsonb) IS 'createTimeEntry, manager only (else SVR03 ROLE_REQUIRED): inserts a draft entry from the body with the signed context''s organization and the calling client as its creator, and answers it as getTimeEntry does. It runs as svc_api because svc_runtime has no privilege on app.time_entries; the policy "Managers record time" refuses any other organization or creator, and the table''s triggers validate the subject, project, task, work date and the member''s daily total.';


--
-- Name: time_entry_delete(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.time_entry_delete(p_id text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  e app.time_entries;
begin
  perform api.require_any_role('{manager}', 'deleteTimeEntry');
  select * into e from app.time_entries where organization_id = v__organization_id and id = p_id for update;
  if not found then
    perform app_private.time_entry_not_found(p_id);
  end if;
  if e.deleted_at is not null then
    return;
  end if;
  update app.time_entries set deleted_at = now() where organization_id = e.organization_id and id = p_id;
  insert into app.time_entry_audit (organization_id, time_entry_id, action, actor_client_id)
  values (e.organization_id, p_id, 'deleted', app.current_client_id());
end
$$;


--
-- Name: FUNCTION time_entry_delete(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.time_entry_delete(p_id text) IS 'deleteTimeEntry, manager only (else SVR03 ROLE_REQUIRED): marks the entry deleted (deleted_at) and writes a deleted row naming the calling client to app.time_entry_audit; an entry already deleted answers with no change (idempotent), an unknown one SVN04 TIME_ENTRY_NOT_FOUND, and one that is not draft or rejected is refused by tg_time_entries__lock (SVC17 TIME_ENTRY_LOCKED). It runs as svc_api because svc_runtime has no privilege on these tables; it reads and marks the entry by the signed context''s organization, under svc_api''s policies for managers.';


--
-- Name: time_entry_get(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.time_entry_get(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform api.require_time_entry_read();
  return query select t.doc, t.version from api.time_entries(p_id) t where t.id = p_id and t.deleted_at is null;
end
$$;


--
-- Name: FUNCTION time_entry_get(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.time_entry_get(p_id text) IS 'getTimeEntry: the entry''s document and version (its ETag) from api.time_entries, deleted entries excluded, after api.require_time_entry_read() (SVR03 ROLE_REQUIRED for a caller who may not read time entries). It runs as svc_api, under its policy "Managers, finance, and hr where permitted read time entries", which shows only the signed request''s organization.';


--
-- Name: time_entry_submit(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.time_entry_submit(p_id text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  e app.time_entries;
begin
  perform api.require_any_role('{manager}', 'submitTimeEntry');
  e := app_private.lock_time_entry(p_id);
  if e.status in ('draft', 'rejected') then
    perform app_private.request_time_entry_approval(p_id);
  elsif e.status = 'approved' then
    perform app_private.raise('SVC17', 'TIME_ENTRY_LOCKED', 'the time entry is already approved');
  end if;
  -- Submitting a submitted entry changes nothing: the pending request stands.
  return query select * from api.time_entry_get(p_id);
end
$$;


--
-- Name: FUNCTION time_entry_submit(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.time_entry_submit(p_id text) IS 'submitTimeEntry, manager only (else SVR03 ROLE_REQUIRED): a draft or rejected entry gets a pending named-user approval request and becomes submitted (app_private.request_time_entry_approval); a submitted one stays as it is (its request stands), an approved one raises SVC17 TIME_ENTRY_LOCKED, a missing or deleted one SVN04 TIME_ENTRY_NOT_FOUND. Submitting never approves: only a named user decides, through the control plane. It runs as svc_api and locks the entry by the signed context''s organization; the approval request is written by the svc_owner helper, because svc_api may not write approvals.';


--
-- Name: time_entry_update(text, integer[], jsonb); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.time_entry_update(p_id text, p_if_match integer[], p_patch jsonb) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  e app.time_entries;
  v_work_date date;
  v_errors jsonb := '[]';
  k text;
begin
  perform api.require_any_role('{manager}', 'updateTimeEntry');
  e := app_private.lock_time_entry(p_id);
  perform app_private.check_if_match(e.version, p_if_match);
  for k in select jsonb_object_keys(p_patch) order by 1 loop
    if k = 'status' then
      v_errors := v_errors || app_private.error('/status', case when p_patch ->> 'status' in ('approved', 'rejected')
        then 'APPROVAL_REQUIRED' else 'IMMUTABLE_FIELD' end,
        'status changes through submit; only a named user approves or rejects');
    elsif k in ('id', 'object', 'member_id', 'subject', 'external_id', 'approval_id', 'created_at', 'updated_at') then
      v_errors := v_errors || app_private.error('/' || k, 'IMMUTABLE_FIELD', format('%s cannot be changed', k));
    end if;
  end loop;
  perform app_private.raise_errors(v_errors);
  -- Cast before the update: Citus takes no cast that is not immutable inside its CASE.
  v_work_date := (p_patch ->> 'work_date')::date;
  update app.time_entries set
    project_id = case when p_patch ? 'project_id' then p_patch ->> 'project_id' else e.project_id end,
    task_id = case when p_patch ? 'task_id' then p_patch ->> 'task_id' else e.task_id end,
    work_date = case when p_patch ? 'work_date' then v_work_date else e.work_date end,
    minutes = case when p_patch ? 'minutes' then (p_patch ->> 'minutes')::integer else e.minutes end,
    billable = case when p_patch ? 'billable' then (p_patch ->> 'billable')::boolean else e.billable end,
    notes = case when p_patch ? 'notes' then p_patch ->> 'notes' else e.notes end
  where organization_id = e.organization_id and id = p_id;
  return query select * from api.time_entry_get(p_id);
end
$$;


--
-- Name: FUNCTION time_entry_update(p_id text, p_if_match integer[], p_patch jsonb); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.time_entry_update(p_id text, p_if_match integer[], p_patch jsonb) IS 'updateTimeEntry, manager only (else SVR03 ROLE_REQUIRED): with a matching If-Match (else 412 STALE_RESOURCE) it changes only project_id, task_id, work_date, minutes, billable and notes, refusing status (APPROVAL_REQUIRED when asked to approve or reject, else IMMUTABLE_FIELD) and the fixed fields (id, object, member_id, subject, external_id, approval_id, created_at, updated_at: IMMUTABLE_FIELD) all together; tg_time_entries__lock refuses any change unless the entry is draft or rejected (SVC17 TIME_ENTRY_LOCKED), and the validation trigger checks the result. It runs as svc_api because svc_runtime has no privilege on app.time_entries; the row is locked and updated by the signed context''s organization, under the policy "Managers change time".';


--
-- Name: events; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.events (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('evt'::text) NOT NULL,
    type text NOT NULL,
    resource_type text NOT NULL,
    resource_id text NOT NULL,
    resource_version integer NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    fanout_pending boolean DEFAULT false NOT NULL,
    target_endpoint_id text,
    client_ids text[] DEFAULT '{}'::text[] NOT NULL
);

ALTER TABLE ONLY app.events FORCE ROW LEVEL SECURITY;


--
-- Name: webhook_deliveries; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.webhook_deliveries (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('whd'::text) NOT NULL,
    client_id text NOT NULL,
    endpoint_id text NOT NULL,
    event_id text NOT NULL,
    replay_of text,
    status text DEFAULT 'pending'::text NOT NULL,
    status_reason text,
    attempt_count integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone DEFAULT now(),
    lease_until timestamp with time zone,
    retry_until timestamp with time zone DEFAULT (now() + '72:00:00'::interval) NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    completed_at timestamp with time zone,
    CONSTRAINT webhook_deliveries_pending_consistent CHECK (((status = 'pending'::text) = (completed_at IS NULL))),
    CONSTRAINT webhook_deliveries_status_valid CHECK ((status = ANY (ARRAY['pending'::text, 'succeeded'::text, 'failed'::text, 'cancelled'::text])))
);

ALTER TABLE ONLY app.webhook_deliveries FORCE ROW LEVEL SECURITY;


--
-- Name: webhook_delivery_attempts; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.webhook_delivery_attempts (
    organization_id text NOT NULL,
    delivery_id text NOT NULL,
    attempt integer NOT NULL,
    started_at timestamp with time zone NOT NULL,
    duration_ms integer NOT NULL,
    response_status integer,
    error text,
    client_id text NOT NULL
);

ALTER TABLE ONLY app.webhook_delivery_attempts FORCE ROW LEVEL SECURITY;


--
-- Name: webhook_deliveries; Type: VIEW; Schema: api; Owner: -
--

CREATE VIEW api.webhook_deliveries WITH (security_invoker='false') AS
 SELECT d.organization_id,
    d.id,
    d.endpoint_id,
    d.event_id,
    d.status,
    d.created_at,
    e.type AS event_type,
    e.created_at AS event_created_at,
    jsonb_build_object('object', 'webhook_delivery', 'id', d.id, 'endpoint_id', d.endpoint_id, 'event', jsonb_build_object('id', e.id, 'type', e.type, 'created_at', app_private.iso_timestamp(e.created_at), 'data', jsonb_build_object('object', jsonb_build_object('type', e.resource_type, 'id', e.resource_id, 'version', e.resource_version))), 'status', d.status, 'status_reason', d.status_reason, 'attempt_count', d.attempt_count, 'next_attempt_at',
        CASE
            WHEN (d.status = 'pending'::text) THEN app_private.iso_timestamp(d.next_attempt_at)
            ELSE NULL::text
        END, 'replay_of', d.replay_of, 'last_attempt', ( SELECT jsonb_build_object('attempt', a.attempt, 'started_at', app_private.iso_timestamp(a.started_at), 'duration_ms', a.duration_ms, 'response_status', a.response_status, 'error', a.error) AS jsonb_build_object
           FROM app.webhook_delivery_attempts a
          WHERE (a.delivery_id = d.id)
          ORDER BY a.attempt DESC
         LIMIT 1), 'created_at', app_private.iso_timestamp(d.created_at), 'completed_at', app_private.iso_timestamp(d.completed_at)) AS doc
   FROM (app.webhook_deliveries d
     JOIN app.events e ON ((e.id = d.event_id)));


--
-- Name: webhook_deliveries(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.webhook_deliveries(p_id text DEFAULT NULL::text) RETURNS SETOF api.webhook_deliveries
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.webhook_deliveries v;
    else
      return query select * from api.webhook_deliveries v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.webhook_deliveries', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;


--
-- Name: FUNCTION webhook_deliveries(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.webhook_deliveries(p_id text) IS 'The rows of view api.webhook_deliveries for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';


--
-- Name: webhook_delivery_get(text, text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.webhook_delivery_get(p_endpoint text, p_delivery text) RETURNS TABLE(doc jsonb)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
  v_doc jsonb;
begin
  select v.doc into v_doc from api.webhook_deliveries(p_delivery) v where v.id = p_delivery and v.endpoint_id = p_endpoint;
  if v_doc is null then
    return;
  end if;
  return query select v_doc || jsonb_build_object('attempts', coalesce((
           select jsonb_agg(jsonb_build_object('attempt', a.attempt, 'started_at', app_private.iso_timestamp(a.started_at),
                                               'duration_ms', a.duration_ms, 'response_status', a.response_status,
                                               'error', a.error) order by a.attempt)
             from app.webhook_delivery_attempts a where a.organization_id = v__organization_id and a.delivery_id = p_delivery), '[]'::jsonb));
end
$$;


--
-- Name: FUNCTION webhook_delivery_get(p_endpoint text, p_delivery text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.webhook_delivery_get(p_endpoint text, p_delivery text) IS 'getWebhookDelivery: one delivery of endpoint p_endpoint with all its attempts, read through api.webhook_deliveries and app.webhook_delivery_attempts under svc_api''s policies, which show only the request''s client''s own deliveries and attempts in its organization; no row when the delivery is not the caller''s or not that endpoint''s (the server answers WEBHOOK_DELIVERY_NOT_FOUND). It runs as svc_api because svc_runtime holds no privilege on the tables.';


--
-- Name: webhook_delivery_replay(text, text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.webhook_delivery_replay(p_endpoint text, p_delivery text) RETURNS TABLE(doc jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  w app.webhook_endpoints;
  d app.webhook_deliveries;
  e app.events;
  v_id text := app_private.new_id('whd');
begin
  perform app_private.refuse_on_coordinator('api.webhook_delivery_replay(text,text)');
  -- Runs as definer (it writes a delivery): ownership is checked against the request context.
  select * into w from app.webhook_endpoints
   where id = p_endpoint and organization_id = v__organization_id and client_id = app.current_client_id();
  if not found then
    perform app_private.webhook_endpoint_not_found(p_endpoint);
  end if;
  select * into d from app.webhook_deliveries where organization_id = w.organization_id and id = p_delivery and endpoint_id = w.id;
  if not found then
    perform app_private.raise('SVN04', 'WEBHOOK_DELIVERY_NOT_FOUND', format('no delivery %s of endpoint %s', p_delivery, p_endpoint));
  end if;
  select * into e from app.events where organization_id = d.organization_id and id = d.event_id;
  if e.created_at < now() - interval '30 days' then
    perform app_private.raise('SVC09', 'WEBHOOK_REPLAY_EXPIRED',
      format('event %s is older than the 30-day retention window; fetch the resource instead', e.id));
  end if;
  if w.status <> 'enabled' then
    perform app_private.raise('SVC09', 'CONFLICT', 'the endpoint is disabled; enable it before replaying');
  end if;
  insert into app.webhook_deliveries (organization_id, id, client_id, endpoint_id, event_id, replay_of)
  values (w.organization_id, v_id, w.client_id, w.id, e.id, d.id);
  perform app_private.webhook_enqueue(v__organization_id, v_id);
  return query select v.doc from api.webhook_deliveries(v_id) v where v.id = v_id;
end
$$;


--
-- Name: FUNCTION webhook_delivery_replay(p_endpoint text, p_delivery text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.webhook_delivery_replay(p_endpoint text, p_delivery text) IS 'replayWebhookDelivery: a new delivery of the same event to the same endpoint (replay_of names the original), its webhook_deliver job queued, for the caller''s own endpoint (else WEBHOOK_ENDPOINT_NOT_FOUND) and a delivery of it (else WEBHOOK_DELIVERY_NOT_FOUND), only inside the 30-day event retention (SVC09 WEBHOOK_REPLAY_EXPIRED) and while the endpoint is enabled (SVC09 CONFLICT). It runs as svc_owner because svc_api may not write deliveries or queue jobs, so it checks the endpoint''s organization and client against the request context itself, and svc_owner''s policy keeps it in the request''s organization.';


--
-- Name: webhook_endpoint_create(text, text, text[], text, text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.webhook_endpoint_create(p_id text, p_url text, p_events text[], p_description text, p_secret_sealed text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  insert into app.webhook_endpoints (organization_id, id, client_id, url, events, description, secret_sealed)
  values (v__organization_id, p_id, app.current_client_id(), p_url, p_events, p_description, p_secret_sealed);
  return query select w.doc, w.version from api.webhook_endpoints(p_id) w where w.id = p_id;
end
$$;


--
-- Name: FUNCTION webhook_endpoint_create(p_id text, p_url text, p_events text[], p_description text, p_secret_sealed text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.webhook_endpoint_create(p_id text, p_url text, p_events text[], p_description text, p_secret_sealed text) IS 'createWebhookEndpoint: inserts the endpoint for the request''s client with the id the server chose before the verification challenge (which names it), a secret the server sealed and a URL it checked as safe; the table''s triggers check the event names (WEBHOOK_EVENT_NOT_SUPPORTED) and the limit of 20 endpoints per client. It runs as svc_api under "Clients create their own endpoints": the organization and client come from the request context, never from the caller.';


--
-- Name: webhook_endpoint_rotate(text, text, integer); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.webhook_endpoint_rotate(p_id text, p_secret_sealed text, p_previous_expires_in_seconds integer) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  w app.webhook_endpoints := app_private.webhook_endpoint_lock(p_id);
  v_previous_expires_at timestamptz := case when p_previous_expires_in_seconds > 0
                                            then now() + make_interval(secs => p_previous_expires_in_seconds) end;
begin
  update app.webhook_endpoints e
     set previous_secret_sealed = case when p_previous_expires_in_seconds > 0 then e.secret_sealed end,
         previous_secret_expires_at = v_previous_expires_at,
         secret_sealed = p_secret_sealed
   where e.organization_id = w.organization_id and e.id = w.id;
  return query select v.doc, v.version from api.webhook_endpoints(w.id) v where v.id = w.id;
end
$$;


--
-- Name: FUNCTION webhook_endpoint_rotate(p_id text, p_secret_sealed text, p_previous_expires_in_seconds integer); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.webhook_endpoint_rotate(p_id text, p_secret_sealed text, p_previous_expires_in_seconds integer) IS 'rotateWebhookEndpointSecret: stores the new sealed secret; with p_previous_expires_in_seconds > 0 the previous secret keeps signing deliveries until then, so receivers can switch without a gap, otherwise it is dropped at once. It runs as svc_api: app_private.webhook_endpoint_lock finds only the request''s client''s own endpoints (else WEBHOOK_ENDPOINT_NOT_FOUND), and the update passes "Clients change their own endpoints".';


--
-- Name: webhook_endpoint_set_status(text, text, boolean); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.webhook_endpoint_set_status(p_id text, p_status text, p_verified boolean DEFAULT false) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  w app.webhook_endpoints := app_private.webhook_endpoint_lock(p_id);
begin
  if p_status = 'enabled' and w.status <> 'enabled' and not p_verified then
    perform app_private.raise('SVC09', 'CONFLICT', 'the endpoint was disabled while the request was under way; retry the request');
  end if;
  if w.status <> p_status then
    update app.webhook_endpoints e
       set status = p_status,
           disabled_reason = case when p_status = 'disabled' then 'client' end,
           consecutive_failures = 0, failing_since = null
     where e.organization_id = w.organization_id and e.id = w.id;
  end if;
  return query select v.doc, v.version from api.webhook_endpoints(w.id) v where v.id = w.id;
end
$$;


--
-- Name: FUNCTION webhook_endpoint_set_status(p_id text, p_status text, p_verified boolean); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.webhook_endpoint_set_status(p_id text, p_status text, p_verified boolean) IS 'disableWebhookEndpoint and enableWebhookEndpoint: sets the status, clears the failure streak and records a client''s disabling (disabled_reason client); an unchanged status writes nothing (no new version). Enabling a disabled endpoint needs p_verified (the server ran the verification challenge before this transaction), and one disabled meanwhile is refused as a retryable SVC09 CONFLICT. It runs as svc_api, on the request''s client''s own endpoint only (webhook_endpoint_lock and "Clients change their own endpoints"; WEBHOOK_ENDPOINT_NOT_FOUND otherwise).';


--
-- Name: webhook_endpoint_test(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.webhook_endpoint_test(p_endpoint text) RETURNS TABLE(doc jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  w app.webhook_endpoints;
  v_event text;
  v_id text := app_private.new_id('whd');
begin
  perform app_private.refuse_on_coordinator('api.webhook_endpoint_test(text)');
  select * into w from app.webhook_endpoints
   where id = p_endpoint and organization_id = v__organization_id and client_id = app.current_client_id();
  if not found then
    perform app_private.webhook_endpoint_not_found(p_endpoint);
  end if;
  insert into app.events (organization_id, type, resource_type, resource_id, resource_version, target_endpoint_id, client_ids)
  values (w.organization_id, 'webhook_endpoint.test', 'webhook_endpoint', w.id, w.version, w.id, array[w.client_id])
  returning id into v_event;
  insert into app.webhook_deliveries (organization_id, id, client_id, endpoint_id, event_id)
  values (w.organization_id, v_id, w.client_id, w.id, v_event);
  perform app_private.webhook_enqueue(v__organization_id, v_id);
  return query select v.doc from api.webhook_deliveries(v_id) v where v.id = v_id;
end
$$;


--
-- Name: FUNCTION webhook_endpoint_test(p_endpoint text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.webhook_endpoint_test(p_endpoint text) IS 'testWebhookEndpoint: a webhook_endpoint.test event aimed at this endpoint alone (its client in client_ids, so that the client may read it) and a delivery of it, its job queued; it goes to a disabled endpoint too, since testing is how a client checks a fix. It runs as svc_owner because svc_api may write neither events nor deliveries, and takes only the request''s client''s own endpoint in the request''s organization (else WEBHOOK_ENDPOINT_NOT_FOUND).';


--
-- Name: webhook_endpoint_update(text, integer[], jsonb, text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.webhook_endpoint_update(p_id text, p_if_match integer[], p_patch jsonb, p_verified_url text DEFAULT NULL::text) RETURNS TABLE(doc jsonb, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  w app.webhook_endpoints := app_private.webhook_endpoint_lock(p_id, p_if_match);
begin
  if p_patch ? 'url' and p_patch ->> 'url' is distinct from w.url and p_patch ->> 'url' is distinct from p_verified_url then
    perform app_private.raise('SVC09', 'CONFLICT', 'the endpoint changed while the new URL was being verified; retry the request');
  end if;
  update app.webhook_endpoints e
     set url = case when p_patch ? 'url' then p_patch ->> 'url' else e.url end,
         events = case when p_patch ? 'events' then array(select jsonb_array_elements_text(p_patch -> 'events')) else e.events end,
         description = case when p_patch ? 'description' then p_patch ->> 'description' else e.description end
   where e.organization_id = w.organization_id and e.id = w.id;
  return query select v.doc, v.version from api.webhook_endpoints(w.id) v where v.id = w.id;
end
$$;


--
-- Name: FUNCTION webhook_endpoint_update(p_id text, p_if_match integer[], p_patch jsonb, p_verified_url text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.webhook_endpoint_update(p_id text, p_if_match integer[], p_patch jsonb, p_verified_url text) IS 'updateWebhookEndpoint: changes url, events and description as p_patch gives them, after If-Match (SVS12 STALE_RESOURCE); p_verified_url is the URL whose verification challenge the server ran before this transaction, and a new URL other than it (the endpoint changed meanwhile) is refused as a retryable SVC09 CONFLICT. It runs as svc_api, on the request''s client''s own endpoint only (webhook_endpoint_lock and "Clients change their own endpoints"; WEBHOOK_ENDPOINT_NOT_FOUND otherwise); the event names are checked by tg_webhook_endpoints__check_events.';


--
-- Name: webhook_endpoints; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.webhook_endpoints (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('whe'::text) NOT NULL,
    client_id text NOT NULL,
    url text NOT NULL,
    events text[] NOT NULL,
    description text,
    status text DEFAULT 'enabled'::text NOT NULL,
    disabled_reason text,
    secret_sealed text NOT NULL,
    previous_secret_sealed text,
    previous_secret_expires_at timestamp with time zone,
    consecutive_failures integer DEFAULT 0 NOT NULL,
    failing_since timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    CONSTRAINT webhook_endpoints_description_length CHECK ((length(description) <= 1000)),
    CONSTRAINT webhook_endpoints_disabled_has_reason CHECK (((status = 'disabled'::text) = (disabled_reason IS NOT NULL))),
    CONSTRAINT webhook_endpoints_disabled_reason_valid CHECK ((disabled_reason = ANY (ARRAY['client'::text, 'delivery_failures'::text]))),
    CONSTRAINT webhook_endpoints_events_bounded CHECK (((cardinality(events) >= 1) AND (cardinality(events) <= 100))),
    CONSTRAINT webhook_endpoints_id_format CHECK ((id ~ '^whe_[0-9a-f]{28}$'::text)),
    CONSTRAINT webhook_endpoints_status_valid CHECK ((status = ANY (ARRAY['enabled'::text, 'disabled'::text]))),
    CONSTRAINT webhook_endpoints_url_https CHECK (((url ~ '^https://[^/?#@\s]+'::text) AND (length(url) <= 2048)))
);

ALTER TABLE ONLY app.webhook_endpoints FORCE ROW LEVEL SECURITY;


--
-- Name: webhook_endpoints; Type: VIEW; Schema: api; Owner: -
--

CREATE VIEW api.webhook_endpoints WITH (security_invoker='false') AS
 SELECT w.organization_id,
    w.id,
    w.client_id,
    w.status,
    w.created_at,
    w.version,
    w.secret_sealed,
    w.previous_secret_sealed,
    w.previous_secret_expires_at,
    jsonb_build_object('object', 'webhook_endpoint', 'id', w.id, 'url', w.url, 'events', to_jsonb(w.events), 'description', w.description, 'status', w.status, 'disabled_reason', w.disabled_reason, 'previous_secret_expires_at',
        CASE
            WHEN (w.previous_secret_expires_at > now()) THEN app_private.iso_timestamp(w.previous_secret_expires_at)
            ELSE NULL::text
        END, 'created_at', app_private.iso_timestamp(w.created_at), 'updated_at', app_private.iso_timestamp(w.updated_at), 'version', w.version) AS doc
   FROM app.webhook_endpoints w;


--
-- Name: webhook_endpoints(text); Type: FUNCTION; Schema: api; Owner: -
--

CREATE FUNCTION api.webhook_endpoints(p_id text DEFAULT NULL::text) RETURNS SETOF api.webhook_endpoints
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_organization_id text;
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    -- One server: the view, under its tables' policies (a plan kept for the session).
    if p_id is null then
      return query select * from api.webhook_endpoints v;
    else
      return query select * from api.webhook_endpoints v where v.id = p_id;
    end if;
    return;
  end if;
  v_organization_id := app.current_organization_id();
  if v_organization_id is not null then
    return query execute 'select * from (' || app_private.view_on_shards('api.webhook_endpoints', v_organization_id) || ') v where organization_id = $1 and ($2 is null or id = $2)'
      using v_organization_id, p_id;
  end if;
end
$_$;


--
-- Name: FUNCTION webhook_endpoints(p_id text); Type: COMMENT; Schema: api; Owner: -
--

COMMENT ON FUNCTION api.webhook_endpoints(p_id text) IS 'The rows of view api.webhook_endpoints for the request''s organization, or its row p_id (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';


--
-- Name: accounting_connection(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.accounting_connection(p_org text) RETURNS app.integration_connections
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  c app.integration_connections;
begin
  select x.* into c from app.integration_connections x
   where x.organization_id = p_org and x.ownership = 'organization' and x.category = 'accounting'
     and 'invoice.export' = any (x.capabilities)
   order by (x.status = 'connected' and x.action_required is null) desc, x.last_success_at desc nulls last, x.id
   limit 1;
  return c;
end
$$;


--
-- Name: accounting_not_ready(app.integration_connections, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.accounting_not_ready(c app.integration_connections, p_doing text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.raise('SVC09', 'ACCOUNTING_CONNECTION_NOT_READY',
    case when c.id is null
      then format('your organization requires an accounting connection to %s, and none offers invoice.export; an administrator connects one in the web settings', p_doing)
      else format('the %s accounting connection %s is %s: %s', c.provider, c.id, c.status,
                  coalesce(c.action_required, 'an administrator must reconnect it in the web settings')) end);
end
$$;


--
-- Name: accounting_ready(app.integration_connections); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.accounting_ready(c app.integration_connections) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select c.id is not null and c.status = 'connected' and c.action_required is null $$;


--
-- Name: accounting_sync_load(text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.accounting_sync_load(p_organization_id text, p_invoice text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_doc jsonb;
  v_out jsonb;
begin
  -- The invoice as finance reads it through the API.
  perform app_private.set_context(p_organization_id, null, '{finance}');
  select v.doc into v_doc from api.invoices(p_invoice) v where v.id = p_invoice;
  perform app_private.set_context(null, null, null);
  if v_doc is null then
    return null;
  end if;
  select jsonb_build_object('invoice', v_doc, 'provider', c.provider, 'connection_id', c.id, 'connection_status', c.status,
                            'sync_status', i.sync_status, 'external_reference', i.sync_external_reference,
                            'customer', jsonb_build_object('id', cu.id, 'name', cu.name, 'email', cu.delivery_email))
    into v_out
    from app.invoices i
    join app.integration_connections c on c.organization_id = i.organization_id and c.id = i.sync_connection_id
    join app.customers cu on cu.organization_id = i.organization_id and cu.id = i.customer_id
   where i.organization_id = p_organization_id and i.id = p_invoice;
  return v_out;
end
$$;


--
-- Name: accounting_sync_record(text, text, boolean, text, text, boolean); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.accounting_sync_record(p_organization_id text, p_invoice text, p_ok boolean, p_external_reference text, p_error text, p_definitive boolean DEFAULT false) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_connection text;
  v_now timestamptz := now();
begin
  update app.invoices x
     set sync_status = case when p_ok then 'synced' else 'failed' end,
         sync_external_reference = coalesce(p_external_reference, x.sync_external_reference),
         sync_error = case when p_ok then null else left(p_error, 500) end,
         sync_failure_definitive = case when p_ok then null else p_definitive end,
         synced_at = case when p_ok then v_now else x.synced_at end
   where x.organization_id = p_organization_id and x.id = p_invoice and x.sync_status = 'pending'
  returning x.sync_connection_id into v_connection;
  if found and p_ok then
    update app.integration_connections c set last_success_at = now()
     where c.organization_id = p_organization_id and c.id = v_connection;
  end if;
end
$$;


--
-- Name: agent_lookup(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.agent_lookup(p_id text) RETURNS app_private.agent_definitions
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  d app_private.agent_definitions;
  v_status text;
begin
  select x.* into d from app_private.agent_definitions x where x.id = p_id;
  select p.status into v_status from app.agent_publications p where p.organization_id = v__organization_id and p.agent_id = p_id;
  if d.id is null or v_status is null then
    perform app_private.raise('SVN04', 'AGENT_NOT_FOUND', format('no agent %s', p_id));
  end if;
  if v_status <> 'published' then
    perform app_private.raise('SVN04', 'AGENT_NOT_PUBLISHED', format('%s is not published in your organization', p_id));
  end if;
  return d;
end
$$;


--
-- Name: FUNCTION agent_lookup(p_id text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.agent_lookup(p_id text) IS 'The catalogue definition of agent p_id as the request''s organization has it: SVN04 AGENT_NOT_FOUND when there is no such agent or publication row, AGENT_NOT_PUBLISHED when the organization unpublished it, so a client holding the id learns why it went. It runs as svc_api, which may read the catalogue (svc_runtime may not), and reads the publication under "Clients see their organization''s publications": only the request''s signed organization''s, never another''s.';


--
-- Name: assert_timezone(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.assert_timezone(p_timezone text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if p_timezone is not null and not exists (select from pg_timezone_names where name = p_timezone) then
    perform app_private.raise('SVV01', 'INVALID_TIMEZONE', format('%s is not an IANA time-zone identifier', p_timezone));
  end if;
end
$$;


--
-- Name: backend_started(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.backend_started() RETURNS bigint
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    select (extract(epoch from a.backend_start) * 1000000)::bigint from pg_stat_activity a where a.pid = pg_backend_pid()
  $$;


--
-- Name: begin_delivery_context(text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.begin_delivery_context(p_organization_id text, p_client_id text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  c record;
begin
  select cl.status, cl.license_status, cl.svc_roles, o.status as org_status, o.plan as org_plan
    into c
    from app.api_clients cl join app.organizations o on o.id = cl.organization_id
   where cl.organization_id = p_organization_id and cl.id = p_client_id and o.id = p_organization_id;
  perform app_private.set_context(null, null, null);
  if not found or c.status <> 'active' or c.org_status = 'suspended' or c.license_status <> 'active'
     or c.org_plan in ('trial', 'team') then
    return false;
  end if;
  perform app_private.set_context(p_organization_id, p_client_id, c.svc_roles);
  return true;
end
$$;


--
-- Name: bi_context(); Type: FUNCTION; Schema: app_private; Owner: -
--

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


--
-- Name: FUNCTION bi_context(OUT organization_id text, OUT svc_roles text[]); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.bi_context(OUT organization_id text, OUT svc_roles text[]) IS 'The organization and Roles bound to the session''s BI login (app_private.bi_logins, by session_user); nothing for any other login, and nothing on a Citus worker, which has no BI logins. The context accessors (app.current_organization_id, app.current_roles) fall back to it when a session has no signed request context, so a BI login reads the reporting views of its one organization with its Roles. It runs as svc_gate because the bindings are a credential table granted to svc_gate alone, whose policy shows only the session''s own binding; a BI login cannot change its session_user, so it cannot borrow another binding.';


--
-- Name: bi_relay_proof(integer, bigint, text, text, text[]); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.bi_relay_proof(p_pid integer, p_started bigint, p_view text, p_organization_id text, p_roles text[]) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
  $$;


--
-- Name: capability_mac(text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.capability_mac(p_purpose text, p_message text) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL RESTRICTED
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  k record;
begin
  select inner_key, outer_key into k from app_private.context_keys;
  return encode(sha256(k.outer_key || sha256(k.inner_key || convert_to('capability' || chr(31) || p_purpose || chr(31) || p_message, 'UTF8'))), 'hex');
end
$$;


--
-- Name: FUNCTION capability_mac(p_purpose text, p_message text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.capability_mac(p_purpose text, p_message text) IS 'The HMAC-SHA256 (RFC 2104) of a capability link''s message (upload, file download, report download), keyed with app_private.context_keys and kept apart from context signatures by the label ''capability'' and a purpose label: a link''s token is this signature, so nothing secret is stored and a link cannot be forged or reused for another purpose or organization (its message names the organization). It runs as svc_gate, the only role that may read the key: the commands that mint and check links get the signature, never the key, and svc_runtime may not execute it.';


--
-- Name: chat_context(text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.chat_context(p_organization_id text, p_run_id text) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  r app.runs;
  c app.conversations;
  v_seq integer;
begin
  select * into r from app.runs x where x.organization_id = p_organization_id and x.id = p_run_id;
  select * into c from app.conversations x where x.organization_id = p_organization_id and x.id = r.conversation_id;
  select m.seq into v_seq from app.conversation_messages m where m.organization_id = p_organization_id and m.id = r.input ->> 'message_id';
  return jsonb_build_object('summary', c.context_summary,
    'messages', coalesce((select jsonb_agg(jsonb_build_object('role', m.role, 'content', m.content) order by m.seq)
                            from app.conversation_messages m
                           where m.organization_id = p_organization_id and m.conversation_id = c.id
                             and m.seq > c.context_from_seq and m.seq <= v_seq), '[]'));
end
$$;


--
-- Name: chat_skills(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.chat_skills() RETURNS text[]
    LANGUAGE sql IMMUTABLE
    AS $$ select '{tasks.find_attention,tasks.transition,time.missing_days}'::text[] $$;


--
-- Name: check_if_match(integer, integer[]); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.check_if_match(p_current_version integer, p_if_match integer[]) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if p_if_match is null or not (p_current_version = any (p_if_match)) then
    perform app_private.raise('SVS12', 'STALE_RESOURCE', format('"%s"', p_current_version));
  end if;
end
$$;


--
-- Name: check_schema_version(text, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.check_schema_version(p_object_type text, p_schema_version integer) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text;
  v_current integer;
begin
  if p_schema_version is null then
    return;
  end if;
  -- Read only when a version is given: each read verifies the context's signature.
  v__organization_id := app.current_organization_id();
  select schema_version into v_current from app.object_schemas
   where organization_id = v__organization_id and object_type = p_object_type;
  if v_current is distinct from p_schema_version then
    perform app_private.raise('SVC14', 'OBJECT_SCHEMA_CHANGED',
      format('the %s schema is at version %s; fetch GET /v1/schemas/%s and retry', p_object_type, v_current, p_object_type));
  end if;
end
$$;


--
-- Name: check_subject(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.check_subject(p_subject_member_id text) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  if p_subject_member_id is null then
    return null;
  end if;
  if not exists (select from app.members m where m.organization_id = v__organization_id
                  and m.id = p_subject_member_id and m.status = 'active') then
    perform app_private.raise_errors(app_private.error('/subject/member_id', 'INVALID_SUBJECT_MEMBER',
      'subject.member_id must be the exact normalized email of an active member of your organization'));
  end if;
  return p_subject_member_id;
end
$$;


--
-- Name: FUNCTION check_subject(p_subject_member_id text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.check_subject(p_subject_member_id text) IS 'Checks a request''s subject.member_id: null passes as null; otherwise it must be the exact normalized email of an active member of the signed request''s organization, else SVV22 INVALID_SUBJECT_MEMBER at /subject/member_id, because possession of an email is not authorization and a subject adds no Roles (spec). It runs as svc_owner so it reads members the same way for every caller (api commands, the worker''s runs), and only those of app.current_organization_id() (none without a signed context), under svc_owner''s policy.';


--
-- Name: citus_add_worker(text, integer, text); Type: PROCEDURE; Schema: app_private; Owner: -
--

CREATE PROCEDURE app_private.citus_add_worker(IN p_host text, IN p_port integer, IN p_shard_transfer_mode text DEFAULT 'block_writes'::text)
    LANGUAGE plpgsql
    AS $$
begin
  if not exists (select from pg_catalog.pg_extension where extname = 'citus') then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', 'this database has no citus extension: there is no cluster to grow');
  end if;
  if p_shard_transfer_mode is distinct from 'block_writes' then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', format('shard transfer mode %s: the tables force row security, so a shard group moves only by block_writes (a logical move''s subscription may not write into them)', coalesce(p_shard_transfer_mode, 'null')));
  end if;
  -- Citus adds a node only for a superuser, who runs no code of ours: the cluster's bootstrap does it.
  if not exists (select from pg_catalog.pg_dist_node where nodename = p_host and nodeport = p_port and isactive) then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', format('%s:%s is not an active node of the cluster: a superuser adds it first (call svc_bootstrap.add_node(%L, %s))', p_host, p_port, p_host, p_port));
  end if;
  call app_private.citus_prepare_workers();
  commit;
  -- A rebalance still running (this call run again after its wait was cut short) is waited for,
  -- not started twice (Citus refuses that).
  if not exists (select from pg_catalog.pg_dist_background_job where state in ('scheduled', 'running', 'cancelling', 'failing')) then
    -- The rebalancer copies rows as the role that starts it: svc_mover, in the cluster bootstrap's
    -- function (under forced row security the deploy login would copy none).
    perform svc_bootstrap.rebalance_start(p_shard_transfer_mode);
  end if;
  commit;
  perform pg_catalog.citus_rebalance_wait();
  commit;
  -- The moved shard groups: copies on the nodes that now hold them, none where they left.
  call app_private.citus_prepare_workers();
end
$$;


--
-- Name: PROCEDURE citus_add_worker(IN p_host text, IN p_port integer, IN p_shard_transfer_mode text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON PROCEDURE app_private.citus_add_worker(IN p_host text, IN p_port integer, IN p_shard_transfer_mode text) IS 'On Citus: prepares a worker a superuser added (call svc_bootstrap.add_node(host, port), db/citus/bootstrap.sql), rebalances the shard groups onto it (block_writes: a moved group''s writes wait while it is copied) and prepares the nodes that now hold them. The deploy login calls it: a superuser runs no code that a role of the service may change.';


--
-- Name: citus_context_keys(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.citus_context_keys() RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_failed text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  select string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') into v_failed
    from run_command_on_workers($w$
      do $k$
      declare
        k bytea := sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8'))
                || sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8'));
        i bytea := k;
        o bytea := k;
      begin
        set local citus.enable_ddl_propagation = off;
        create table if not exists app_private.context_keys (
          id boolean primary key default true constraint context_keys_one_row check (id),
          inner_key bytea not null,
          outer_key bytea not null);
        revoke all on app_private.context_keys from public;
        for n in 0..63 loop
          i := set_byte(i, n, get_byte(k, n) # 54);
          o := set_byte(o, n, get_byte(k, n) # 92);
        end loop;
        insert into app_private.context_keys (inner_key, outer_key) values (i, o) on conflict do nothing;
      end
      $k$ $w$)
   where not success;
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', format('making the workers'' context keys failed: %s', v_failed));
  end if;
end
$_$;


--
-- Name: FUNCTION citus_context_keys(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.citus_context_keys() IS 'On Citus: each worker''s own key for the request context (app_private.context_keys), made where it has none. A definer of the schema''s owner, so that the table belongs to svc_schema whoever calls it; it takes no argument and reads no organization''s rows.';


--
-- Name: citus_copy_privileges(); Type: PROCEDURE; Schema: app_private; Owner: -
--

CREATE PROCEDURE app_private.citus_copy_privileges()
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  o record;
  v_commands text[] := '{}';
  v_failed text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  -- Objects whose ACL is still the default (null) are created alike on every node: nothing to copy.
  for o in
    select 'function' as kind, p.oid::regprocedure::text as name, p.proowner as owner, p.proacl as acl
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname in ('api', 'app', 'app_private', 'control', 'skills', 'reporting') and p.proacl is not null and p.prokind = 'f'
       and not exists (select from pg_depend d where d.objid = p.oid and d.deptype = 'e')
    union all
    select 'table', c.oid::regclass::text, c.relowner, c.relacl
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname in ('api', 'reporting') and c.relkind = 'v' and c.relacl is not null
  loop
    -- The owner keeps its own privileges: revoked from everyone else, then granted as here.
    v_commands := v_commands || format('revoke all on %s %s from %s', o.kind, o.name,
      (select string_agg(r, ', ') from unnest(array['public', 'svc_api', 'svc_runtime', 'svc_reporting']) r
        where r <> pg_get_userbyid(o.owner)));
    v_commands := v_commands || array(
      select format('grant %s on %s %s to %s', string_agg(e.privilege_type, ', '), o.kind, o.name,
               case e.grantee when 0 then 'public' else quote_ident(pg_get_userbyid(e.grantee)) end)
        from aclexplode(o.acl) e where e.grantee <> o.owner group by e.grantee);
  end loop;
  if cardinality(v_commands) > 0 then
    -- A worker refuses DDL on a distributed object unless its propagation is off (it is the
    -- coordinator's to propagate); run_command_on_workers reports a failure instead of raising it.
    select string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') into v_failed
      from run_command_on_workers(format('do %s begin set local citus.enable_ddl_propagation = off; %s end %s', '$copy$',
             (select string_agg(format('execute %L;', c), ' ') from unnest(v_commands) c), '$copy$'))
     where not success;
    if v_failed is not null then
      perform app_private.raise('SV500', 'CITUS_PRIVILEGES_NOT_COPIED', format('copying privileges to the workers failed: %s', v_failed));
    end if;
  end if;
  perform app_private.citus_refresh_shard_views();
end
$_$;


--
-- Name: citus_drain_worker(text, integer); Type: PROCEDURE; Schema: app_private; Owner: -
--

CREATE PROCEDURE app_private.citus_drain_worker(IN p_host text, IN p_port integer)
    LANGUAGE plpgsql
    AS $$
begin
  if not exists (select from pg_catalog.pg_extension where extname = 'citus') then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', 'this database has no citus extension: there is no cluster to shrink');
  end if;
  -- Citus changes a node's properties only for a superuser: the cluster's bootstrap does it.
  if not exists (select from pg_catalog.pg_dist_node where nodename = p_host and nodeport = p_port and groupid <> 0 and not shouldhaveshards) then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', format('%s:%s is not a worker marked to hold no shard group: a superuser marks it first (call svc_bootstrap.remove_node(%L, %s))', p_host, p_port, p_host, p_port));
  end if;
  -- A rebalance still running (this call run again after its wait was cut short) is waited for,
  -- not started twice (Citus refuses that).
  if not exists (select from pg_catalog.pg_dist_background_job where state in ('scheduled', 'running', 'cancelling', 'failing')) then
    -- The rebalancer moves every group off a node marked to hold none, copying rows as svc_mover.
    perform svc_bootstrap.rebalance_start('block_writes');
  end if;
  commit;
  perform pg_catalog.citus_rebalance_wait();
  commit;
  -- The moved shard groups: copies on the nodes that now hold them.
  call app_private.citus_prepare_workers();
  commit;
  -- The rebalance waited for may have been another's, started before the node was marked.
  if exists (select from pg_catalog.pg_dist_placement p join pg_catalog.pg_dist_node n on n.groupid = p.groupid
               join pg_catalog.pg_dist_shard s on s.shardid = p.shardid
              where n.nodename = p_host and n.nodeport = p_port and s.logicalrelid = 'app.organizations'::regclass) then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', format('%s:%s still holds shard groups: call this again', p_host, p_port));
  end if;
end
$$;


--
-- Name: PROCEDURE citus_drain_worker(IN p_host text, IN p_port integer); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON PROCEDURE app_private.citus_drain_worker(IN p_host text, IN p_port integer) IS 'On Citus: moves every shard group off a worker a superuser marked to hold none (call svc_bootstrap.remove_node(host, port), db/citus/bootstrap.sql), by a rebalance that blocks a moving group''s writes while it is copied, and prepares the nodes that now hold them; the superuser then removes the node with the same call. The deploy login calls it: a superuser runs no code that a role of the service may change.';


--
-- Name: citus_drop_shard_views(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.citus_drop_shard_views() RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_failed text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  select string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') into v_failed
    from run_command_on_workers('select app_private.shard_views_drop()') where not success;
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_SHARD_VIEWS_NOT_MADE', format('dropping the shard views failed: %s', v_failed));
  end if;
end
$$;


--
-- Name: FUNCTION citus_drop_shard_views(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.citus_drop_shard_views() IS 'On Citus: drops each worker''s copies of the api views (before a migration that drops or retypes a column a view reads). A definer of the schema''s owner, which owns the copies; it takes no argument.';


--
-- Name: citus_node_grants(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.citus_node_grants() RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
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
        -- The event triggers advance the generation as the role that changes the api views: a
        -- member of svc_api, their owner (db/citus/bootstrap.sql).
        if to_regclass('app_private.shard_views_generation') is not null then
          grant usage on sequence app_private.shard_views_generation to svc_api;
        end if;
      end
      $g$ $w$)
   where not success;
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_PRIVILEGES_NOT_COPIED', format('granting the workers'' own objects failed: %s', v_failed));
  end if;
end
$_$;


--
-- Name: FUNCTION citus_node_grants(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.citus_node_grants() IS 'On Citus: each worker''s own objects (which Citus does not propagate): svc_gate''s read of its context key, its sequences for svc_owner, svc_worker and svc_admin, and the api views'' copies'' generation for svc_relay to read and for svc_api to advance. The service logins'' settings there are the cluster bootstrap''s (db/citus/bootstrap.sql).';


--
-- Name: citus_prepare_if_needed(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.citus_prepare_if_needed() RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_failed text;
  v_unprepared integer;
begin
  -- Separate tests: an expression that names pg_dist_partition cannot be planned without Citus.
  if not exists (select from pg_extension where extname = 'citus') then
    return 0;
  end if;
  if not exists (select from pg_dist_partition where logicalrelid = 'app.organizations'::regclass) then
    return 0;
  end if;
  -- After a preparation under way (citus_add_worker's, before its rebalance): then the rebalance
  -- it started is seen below.
  perform pg_advisory_xact_lock(hashtextextended('svc.citus_prepare_workers', 0));
  if exists (select from pg_dist_background_job where state in ('scheduled', 'running', 'cancelling', 'failing')) then
    return -1;
  end if;
  select string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') filter (where not success),
         coalesce(sum(result::integer) filter (where success), 0)
    into v_failed, v_unprepared
    from run_command_on_workers('select app_private.shard_groups_unprepared()');
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', format('checking the workers failed: %s', v_failed));
  end if;
  if v_unprepared > 0 then
    call app_private.citus_prepare_workers();
  end if;
  return v_unprepared;
end
$$;


--
-- Name: FUNCTION citus_prepare_if_needed(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.citus_prepare_if_needed() IS 'On Citus: prepares the shard groups a worker holds without their copies of the api views or their shards'' grants (moved by hand), for the job citus_prepare (svc_worker); answers how many, or -1 while a rebalance runs. A definer of the schema''s owner, because it makes objects on the workers as that owner; it takes no argument and reads no organization''s rows.';


--
-- Name: citus_prepare_workers(); Type: PROCEDURE; Schema: app_private; Owner: -
--

CREATE PROCEDURE app_private.citus_prepare_workers()
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform pg_advisory_xact_lock(hashtextextended('svc.citus_prepare_workers', 0));
  perform app_private.citus_context_keys();
  perform app_private.citus_node_grants();
  -- The column grants a shard needs beyond its table's (the defaults' columns, for svc_api's inserts),
  -- which a shard made anew lacks.
  call app_private.citus_shard_privileges();
  -- Before the copies are made: a grant on a worker advances its generation (the bootstrap's event
  -- triggers).
  perform app_private.citus_relay_privileges();
  call app_private.citus_copy_privileges();
end
$$;


--
-- Name: citus_refresh_shard_views(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.citus_refresh_shard_views() RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_failed text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  -- run_command_on_* report a failure instead of raising it.
  select string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') into v_failed
    from run_command_on_workers($c$
      do $d$
      begin
        set local citus.enable_ddl_propagation = off;
        perform app_private.shard_views_drop();
        if to_regclass('app_private.shard_views_generation') is null then
          create sequence app_private.shard_views_generation;
          perform nextval('app_private.shard_views_generation');
          grant select on sequence app_private.shard_views_generation to svc_api;
        end if;
        -- The event triggers that mark the copies stale are the cluster bootstrap's (a superuser's).
        if (select count(*) from pg_event_trigger t join pg_proc p on p.oid = t.evtfoid
             where t.evtname in ('shard_views_stale', 'shard_views_dropped')
               and p.pronamespace = to_regnamespace('svc_bootstrap') and p.proname = 'shard_views_stale') <> 2 then
          perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', 'this worker has not been prepared by db/citus/bootstrap.sql (run it as a superuser on the coordinator''s database)');
        end if;
      end
      $d$ $c$)
   where not success;
  if v_failed is null then
    select string_agg(format('%s:%s %s: %s', nodename, nodeport, shardid, result), '; ') into v_failed
      from run_command_on_placements('app.organizations', 'select app_private.shard_views_create(''%s'')')
     where not success;
  end if;
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_SHARD_VIEWS_NOT_MADE', format('making the shard views failed: %s', v_failed));
  end if;
end
$_$;


--
-- Name: FUNCTION citus_refresh_shard_views(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.citus_refresh_shard_views() IS 'On Citus: makes each worker''s copies of the api views over each shard group it holds again (app_private.shard_views_create on every placement of app.organizations), at the node''s current generation. A definer of the schema''s owner, so that the copies belong to svc_schema and svc_api whoever calls it; it takes no argument and reads no organization''s rows.';


--
-- Name: citus_relay_privileges(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.citus_relay_privileges() RETURNS void
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


--
-- Name: citus_shard_privileges(); Type: PROCEDURE; Schema: app_private; Owner: -
--

CREATE PROCEDURE app_private.citus_shard_privileges()
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  t record;
  v_failed text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  for t in
    select p.logicalrelid as rel,
           string_agg(quote_ident(a.attname), ', ' order by a.attnum) as columns
      from pg_dist_partition p
      join pg_attribute a on a.attrelid = p.logicalrelid and a.attnum > 0 and not a.attisdropped
                         and (a.atthasdef or a.attidentity <> '')
     where p.partmethod = 'h'
       and has_table_privilege('svc_api', p.logicalrelid, 'insert') is false
       and exists (select from pg_attribute x where x.attrelid = p.logicalrelid and has_column_privilege('svc_api', p.logicalrelid, x.attnum, 'insert'))
       and not has_column_privilege('svc_api', p.logicalrelid, a.attnum, 'insert')
     group by p.logicalrelid
  loop
    select string_agg(format('%s: %s', shardid, result), '; ') into v_failed
      from run_command_on_shards(t.rel, format('grant insert (%s) on %%s to svc_api', t.columns))
     where not success;
    if v_failed is not null then
      perform app_private.raise('SV500', 'CITUS_PRIVILEGES_NOT_COPIED', format('granting the defaults of %s on its shards failed: %s', t.rel, v_failed));
    end if;
  end loop;
end
$$;


--
-- Name: client_may_read(text, text, text, text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.client_may_read(p_organization_id text, p_client text, p_type text, p_resource_type text, p_resource_id text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_visible boolean;
begin
  if current_setting('svc.delivery_client', true) is distinct from p_client
     or current_setting('svc.client_id', true) is distinct from p_client
     or current_setting('svc.organization_id', true) is distinct from p_organization_id
     or not app_private.context_ok() then
    perform set_config('svc.delivery_client', '', true);
    if not app_private.begin_delivery_context(p_organization_id, p_client) then
      return false;
    end if;
    perform set_config('svc.delivery_client', p_client, true);
  end if;
  perform set_config('role', 'svc_runtime', true);
  v_visible := app_private.event_resource_visible(p_type, p_resource_type, p_resource_id);
  perform set_config('role', 'none', true);
  return v_visible;
end
$$;


--
-- Name: context_budget(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.context_budget() RETURNS integer
    LANGUAGE sql IMMUTABLE
    AS $$ select 32000 $$;


--
-- Name: context_mac(text, text, text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.context_mac(p_org text, p_client text, p_roles text, p_flags text) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL RESTRICTED
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  k record;
begin
  select inner_key, outer_key into k from app_private.context_keys;
  return encode(sha256(k.outer_key || sha256(k.inner_key || convert_to(concat_ws(chr(31), p_org, p_client, p_roles, p_flags,
    pg_backend_pid()::text, (extract(epoch from now()) * 1000000)::bigint::text), 'UTF8'))), 'hex');
end
$$;


--
-- Name: FUNCTION context_mac(p_org text, p_client text, p_roles text, p_flags text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.context_mac(p_org text, p_client text, p_roles text, p_flags text) IS 'The signature of a request context: HMAC-SHA256 keyed with app_private.context_keys over the organization, client, Roles and read flags, the backend pid and the transaction''s start time, so it matches only in this backend and this transaction. It runs as svc_gate, the only role that may read the key; app_private.set_context calls it, and svc_runtime may not execute it, so no runtime session can sign settings of its own choosing.';


--
-- Name: context_ok(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.context_ok() RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL RESTRICTED
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_mac text := current_setting('svc.context_mac', true);
  k record;
begin
  if v_mac is null or v_mac = '' then
    return false;
  end if;
  -- context_mac's formula, inline: this runs once per policy or view check of every statement.
  select inner_key, outer_key into k from app_private.context_keys;
  return v_mac = encode(sha256(k.outer_key || sha256(k.inner_key || convert_to(concat_ws(chr(31),
    current_setting('svc.organization_id', true), current_setting('svc.client_id', true), current_setting('svc.roles', true),
    current_setting('svc.read_flags', true), pg_backend_pid()::text, (extract(epoch from now()) * 1000000)::bigint::text), 'UTF8'))), 'hex');
end
$$;


--
-- Name: FUNCTION context_ok(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.context_ok() IS 'Whether the transaction''s svc.* settings (organization, client, Roles, read flags) carry the signature app_private.set_context made for them, in this backend and this transaction; false when there is none. Every context accessor, and so every row policy and api view, reads through it, so settings written with set_config, or copied into another session or a later transaction, show nothing. It runs as svc_gate, the only role that may read app_private.context_keys, and computes context_mac''s formula inline because it runs at every policy check of every statement.';


--
-- Name: conversation_compact(text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.conversation_compact(p_org text, p_id text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  c app.conversations;
  m app.conversation_messages;
  v_total integer;
  v_line text;
begin
  select * into c from app.conversations x where x.organization_id = p_org and x.id = p_id for update;
  loop
    select coalesce(sum(length(x.content::text)), 0) into v_total from app.conversation_messages x
     where x.organization_id = p_org and x.conversation_id = p_id and x.seq > c.context_from_seq;
    exit when v_total <= app_private.context_budget();
    select * into m from app.conversation_messages x
     where x.organization_id = p_org and x.conversation_id = p_id and x.seq > c.context_from_seq order by x.seq limit 1;
    v_line := m.role || ': ' || left(regexp_replace(coalesce((select string_agg(coalesce(b ->> 'text', b ->> 'message', b ->> 'type'), ' ')
                                                              from jsonb_array_elements(m.content) b), ''), '\s+', ' ', 'g'), 200);
    c.context_summary := right(coalesce(c.context_summary || E'\n', '') || v_line, 4000);
    c.context_from_seq := m.seq;
  end loop;
  update app.conversations x set context_from_seq = c.context_from_seq, context_summary = c.context_summary
   where x.organization_id = p_org and x.id = p_id;
end
$$;


--
-- Name: FUNCTION conversation_compact(p_org text, p_id text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.conversation_compact(p_org text, p_id text) IS 'Keeps a conversation''s working context within app_private.context_budget() characters: while the messages after context_from_seq exceed it, the oldest one moves into context_summary (its role and the start of its text; the summary keeps its newest 4,000 characters) and context_from_seq moves past it, while the history stays. It belongs to svc_owner because it runs both in the client''s request (after a user message) and in the worker''s session when a chat run''s reply is appended (tg_runs__conversation_reply), where svc_api''s policies show nothing; its statements name p_org, and svc_owner''s policy keeps a request to its own organization.';


--
-- Name: conversation_subject(jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.conversation_subject(p_subject jsonb) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_keys text[];
  v_ids text[];
begin
  if p_subject is null or p_subject = 'null'::jsonb then
    return null;
  end if;
  select array_agg(k order by k) into v_keys from jsonb_object_keys(p_subject) k;
  if coalesce(p_subject ->> 'type', 'member') <> 'member' or not (v_keys <@ '{display_name,member_id,type}' and cardinality(array_remove(v_keys, 'type')) = 1) then
    perform app_private.raise('SVV22', 'SUBJECT_NOT_SUPPORTED',
      'a conversation''s subject is one member: {"member_id": "<email>"} or {"display_name": "<name>"}', '/subject');
  end if;
  if p_subject ? 'member_id' then
    select array_agg(m.id) into v_ids from api.members(lower(trim(p_subject ->> 'member_id'))) m where m.id = lower(trim(p_subject ->> 'member_id')) and m.status = 'active';
  else
    select array_agg(m.id order by m.id) into v_ids from api.members() m
     where lower(m.display_name) = lower(trim(p_subject ->> 'display_name')) and m.status = 'active';
  end if;
  if v_ids is null then
    perform app_private.raise('SVV22', 'SUBJECT_NOT_FOUND', 'no active member of your organization matches the subject', '/subject');
  end if;
  if cardinality(v_ids) > 1 then
    perform app_private.raise('SVV22', 'SUBJECT_AMBIGUOUS',
      format('%s active members have that display name; name the member by member_id', cardinality(v_ids)), '/subject');
  end if;
  return v_ids[1];
end
$$;


--
-- Name: FUNCTION conversation_subject(p_subject jsonb); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.conversation_subject(p_subject jsonb) IS 'Resolves a conversation''s subject to one active member id: {"member_id": email} exactly, or {"display_name": name} case-insensitively, read through api.members; any other shape is SVV22 SUBJECT_NOT_SUPPORTED, no match SUBJECT_NOT_FOUND, several active members with that name SUBJECT_AMBIGUOUS. It is svc_api''s so that whoever calls it reads members under svc_api''s policies: only members of the request''s organization that the client may see.';


--
-- Name: current_shard_views(bigint); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.current_shard_views(p_shard bigint) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_generation regclass := to_regclass('app_private.shard_views_generation');
  v_marker text;
begin
  if v_generation is null then
    return null;
  end if;
  select d.description into v_marker
    from pg_class c
    join pg_description d on d.objoid = c.oid and d.classoid = 'pg_class'::regclass and d.objsubid = 0
   where c.relname = '?views' and c.relnamespace = to_regnamespace('api_shard_' || p_shard);
  if v_marker is null or split_part(v_marker, ':', 1)::bigint is distinct from pg_sequence_last_value(v_generation) then
    return null;
  end if;
  return split_part(v_marker, ':', 2);
end
$$;


--
-- Name: custom_field_errors(text, text, jsonb, jsonb, text[], boolean); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.custom_field_errors(p_org text, p_object_type text, p_old jsonb, p_new jsonb, p_roles text[], p_is_insert boolean) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_errors jsonb := '[]';
  v_key text;
  v_value jsonb;
  d app.custom_field_definitions;
  v_pointer text;
  v_ok boolean;
  v_item jsonb;
begin
  if jsonb_typeof(p_new) is distinct from 'object' then
    return app_private.error('/custom_fields', 'INVALID_CUSTOM_FIELD', 'custom_fields must be an object');
  end if;
  -- The keys written or removed; none when the document is unchanged (a new row without custom fields).
  if p_new is distinct from coalesce(p_old, '{}'::jsonb) then
    for v_key in
      select k from jsonb_object_keys(p_new) k where p_old is null or not (p_old ? k) or p_old -> k <> p_new -> k
      union
      select k from jsonb_object_keys(coalesce(p_old, '{}')) k where not (p_new ? k)
      order by 1
    loop
      v_pointer := '/custom_fields/' || replace(replace(v_key, '~', '~0'), '/', '~1');
      v_value := p_new -> v_key;
      select * into d from app.custom_field_definitions
       where organization_id = p_org and object_type = p_object_type and api_name = v_key;
      if not found or (p_roles is not null and not (d.readable_roles && p_roles)) then
        v_errors := v_errors || app_private.error(v_pointer, 'CUSTOM_FIELD_NOT_FOUND',
          format('no custom field %s on %s; see GET /v1/schemas/%s', v_key, p_object_type, p_object_type));
        continue;
      end if;
      if p_roles is not null and cardinality(d.writable_roles) = 0 then
        v_errors := v_errors || app_private.error(v_pointer, 'CUSTOM_FIELD_READ_ONLY', format('%s is read-only', v_key));
        continue;
      end if;
      if p_roles is not null and not (d.writable_roles && p_roles) then
        v_errors := v_errors || app_private.error(v_pointer, 'CUSTOM_FIELD_FORBIDDEN',
          format('writing %s requires one of the Roles: %s', v_key, array_to_string(d.writable_roles, ', ')));
        continue;
      end if;
      if v_value is null or jsonb_typeof(v_value) = 'null' then
        if d.required then
          v_errors := v_errors || app_private.error(v_pointer, 'CUSTOM_FIELD_REQUIRED', format('%s is required', v_key));
        end if;
        continue;
      end if;
      v_ok := case d.field_type
        when 'text' then jsonb_typeof(v_value) = 'string' and length(v_value #>> '{}') <= 10000
        when 'number' then jsonb_typeof(v_value) = 'number'
        when 'boolean' then jsonb_typeof(v_value) = 'boolean'
        when 'date' then jsonb_typeof(v_value) = 'string' and (v_value #>> '{}') ~ '^\d{4}-\d{2}-\d{2}$'
                         and app_private.is_valid_date(v_value #>> '{}')
        when 'select' then jsonb_typeof(v_value) = 'string'
                         and exists (select from jsonb_array_elements(d.options) o where o -> 'value' = v_value)
        when 'multi_select' then jsonb_typeof(v_value) = 'array'
                         and not exists (select from jsonb_array_elements(v_value) e
                                          where not exists (select from jsonb_array_elements(d.options) o where o -> 'value' = e))
                         and (select count(*) = count(distinct e) from jsonb_array_elements(v_value) e)
        when 'member' then jsonb_typeof(v_value) = 'string'
                         and exists (select from app.members m where m.organization_id = p_org and m.id = v_value #>> '{}'
                                      and m.status = 'active')
        else false end;
      if not v_ok then
        v_errors := v_errors || app_private.error(v_pointer, 'CUSTOM_FIELD_VALUE_INVALID',
          format('%s must be a valid %s%s', v_key, replace(d.field_type, '_', ' '),
                 case when d.field_type in ('select', 'multi_select')
                      then ' (' || (select string_agg(o ->> 'value', ', ') from jsonb_array_elements(d.options) o) || ')'
                      when d.field_type = 'member' then ' (the email of an active member)' else '' end));
      end if;
    end loop;
  end if;
  if p_is_insert then
    for d in select * from app.custom_field_definitions
              where organization_id = p_org and object_type = p_object_type and required and not (p_new ? api_name)
                and (p_roles is null or writable_roles && p_roles)
              order by api_name
    loop
      v_errors := v_errors || app_private.error('/custom_fields/' || d.api_name, 'CUSTOM_FIELD_REQUIRED',
        format('%s is required', d.api_name));
    end loop;
  end if;
  return v_errors;
end
$_$;


--
-- Name: FUNCTION custom_field_errors(p_org text, p_object_type text, p_old jsonb, p_new jsonb, p_roles text[], p_is_insert boolean); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.custom_field_errors(p_org text, p_object_type text, p_old jsonb, p_new jsonb, p_roles text[], p_is_insert boolean) IS 'Lists every problem of a custom-field change from p_old to p_new on p_org''s p_object_type: unknown fields, or with p_roles fields those Roles may not read (CUSTOM_FIELD_NOT_FOUND), read-only or Role-forbidden fields (CUSTOM_FIELD_READ_ONLY, CUSTOM_FIELD_FORBIDDEN), values of the wrong type or option (CUSTOM_FIELD_VALUE_INVALID), required fields missing or cleared (CUSTOM_FIELD_REQUIRED); with p_roles null (the control plane) only types and requirements apply. It is svc_owner''s definer because it must read every definition, those svc_api''s policy hides from the caller''s Roles included; it trusts p_org, so neither svc_api nor svc_runtime may execute it, and svc_owner''s policy keeps a request to its own organization.';


--
-- Name: custom_field_patch_errors(text, jsonb, jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.custom_field_patch_errors(p_object_type text, p_current jsonb, p_patch jsonb) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  v_errors jsonb := '[]';
  v_key text;
  d app.custom_field_definitions;
  v_pointer text;
  v_roles text[] := app.current_roles();
begin
  if p_patch is null or jsonb_typeof(p_patch) <> 'object' then
    return v_errors;
  end if;
  for v_key in select k from jsonb_object_keys(p_patch) k order by 1 loop
    v_pointer := '/custom_fields/' || replace(replace(v_key, '~', '~0'), '/', '~1');
    select * into d from app.custom_field_definitions
     where organization_id = v__organization_id and object_type = p_object_type and api_name = v_key;
    if not found or not (d.readable_roles && v_roles) then
      v_errors := v_errors || app_private.error(v_pointer, 'CUSTOM_FIELD_NOT_FOUND',
        format('no custom field %s on %s; see GET /v1/schemas/%s', v_key, p_object_type, p_object_type));
    elsif cardinality(d.writable_roles) = 0 then
      v_errors := v_errors || app_private.error(v_pointer, 'CUSTOM_FIELD_READ_ONLY', format('%s is read-only', v_key));
    elsif not (d.writable_roles && v_roles) then
      v_errors := v_errors || app_private.error(v_pointer, 'CUSTOM_FIELD_FORBIDDEN',
        format('writing %s requires one of the Roles: %s', v_key, array_to_string(d.writable_roles, ', ')));
    end if;
  end loop;
  -- Value problems too, in the same list (every problem at once), except for keys already refused.
  return coalesce((
    select jsonb_agg(e order by e ->> 'pointer')
      from (select e from jsonb_array_elements(v_errors) e
            union all
            select e from jsonb_array_elements(app_private.custom_field_errors(v__organization_id, p_object_type,
                                                 p_current, coalesce(p_current, '{}') || p_patch, null, false)) e
             where not exists (select from jsonb_array_elements(v_errors) r where r ->> 'pointer' = e ->> 'pointer')) x), '[]');
end
$$;


--
-- Name: FUNCTION custom_field_patch_errors(p_object_type text, p_current jsonb, p_patch jsonb); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.custom_field_patch_errors(p_object_type text, p_current jsonb, p_patch jsonb) IS 'Checks the custom_fields of an updateProject or updateTask patch key by key, changed or not: each key must be a field the request''s Roles may read (else CUSTOM_FIELD_NOT_FOUND, so a hidden value cannot be probed by sending guesses) and write (CUSTOM_FIELD_READ_ONLY, CUSTOM_FIELD_FORBIDDEN), then adds the value problems custom_field_errors finds for the other keys, every problem at once. A definer as svc_owner so it sees the definitions the caller''s Roles hide and may call custom_field_errors; it takes the organization and Roles from the request''s signed context.';


--
-- Name: default_file_content_types(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.default_file_content_types() RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  select '{application/pdf,image/png,image/jpeg,image/gif,image/webp,text/plain,text/csv,application/json,application/zip,application/vnd.openxmlformats-officedocument.wordprocessingml.document,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet,application/vnd.openxmlformats-officedocument.presentationml.presentation}'::text[]
$$;


--
-- Name: download_link(text, text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.download_link(p_token text, p_prefix text, p_purpose text, OUT id text, OUT organization_id text, OUT client_id text, OUT expires bigint) RETURNS record
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_parts text[] := string_to_array(p_token, '.');
  v_scope text;
begin
  if p_token ~ ('^' || p_prefix || '_[A-Za-z0-9]{1,64}\.org_[A-Za-z0-9]{1,64}\.apic_[A-Za-z0-9]{1,64}\.[0-9]{1,12}\.[0-9a-f]{64}$')
     and v_parts[5] = encode(sha256(convert_to(app_private.capability_mac(p_purpose, array_to_string(v_parts[1:4], '.')), 'UTF8')), 'hex') then
    id := v_parts[1];
    organization_id := v_parts[2];
    client_id := v_parts[3];
    expires := v_parts[4]::bigint;
    -- Its caller, a beginning owned by svc_gate, has this setting as its own: restored when it returns.
    v_scope := set_config('svc.gate_organization', organization_id, true);
  end if;
end
$_$;


--
-- Name: FUNCTION download_link(p_token text, p_prefix text, p_purpose text, OUT id text, OUT organization_id text, OUT client_id text, OUT expires bigint); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.download_link(p_token text, p_prefix text, p_purpose text, OUT id text, OUT organization_id text, OUT client_id text, OUT expires bigint) IS 'A download link''s parts once its signature holds (nulls otherwise); sets svc.gate_organization to the organization it names, for the beginning that called it.';


--
-- Name: emit_event(text, text, text, text, integer, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.emit_event(p_org text, p_type text, p_resource_type text, p_resource_id text, p_version integer, p_target_endpoint text DEFAULT NULL::text) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_id text := app_private.new_id('evt');
  v_subscribed boolean;
begin
  v_subscribed := case when p_target_endpoint is not null then true
    else exists (select from app.webhook_endpoints e
                  where e.organization_id = p_org and e.status = 'enabled' and p_type = any (e.events)) end;
  insert into app.events (organization_id, id, type, resource_type, resource_id, resource_version, fanout_pending, target_endpoint_id)
  values (p_org, v_id, p_type, p_resource_type, p_resource_id, p_version, v_subscribed, p_target_endpoint);
  -- Delivered at commit, never for a rolled-back write; identical notifications of one
  -- transaction are folded into one. No payload: LISTEN needs no privilege, so any role of the
  -- database could read it (an organization id would tell who is active, and when). Not from an
  -- API request's transaction: the API wakes the fan-out after its commit (see above).
  if v_subscribed then
    if current_setting('svc.fanout_wake', true) in ('after_commit', 'due') then
      -- Read by the API before its COMMIT (in the same round trip): it wakes the fan-out only then.
      perform set_config('svc.fanout_wake', 'due', true);
    else
      perform pg_notify('svc_webhook_fanout', '');
    end if;
  end if;
  return v_id;
end
$$;


--
-- Name: FUNCTION emit_event(p_org text, p_type text, p_resource_type text, p_resource_id text, p_version integer, p_target_endpoint text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.emit_event(p_org text, p_type text, p_resource_type text, p_resource_id text, p_version integer, p_target_endpoint text) IS 'Writes one event into the outbox (app.events) in the writer''s transaction, so a rolled-back change emits nothing and a committed one is never lost; marks it fanout_pending when an enabled endpoint of the organization subscribes to it (or it targets one endpoint) and then wakes the fan-out: pg_notify on svc_webhook_fanout with no payload, delivered at commit and folded per transaction (LISTEN needs no privilege, so a payload would tell any role who is active), or, inside an API request (svc.fanout_wake), by setting it to due for the API to wake the fan-out after its commit. It is svc_owner''s definer because the triggers of svc_api''s writes call it and neither svc_api nor svc_runtime may write events; the organization is the changed row''s, and svc_owner''s policy refuses any other inside a request.';


--
-- Name: error(text, text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.error(p_pointer text, p_code text, p_detail text) RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select jsonb_build_array(jsonb_build_object('pointer', p_pointer, 'detail', p_detail, 'code', p_code)) $$;


--
-- Name: event_resource_visible(text, text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  case p_resource_type
    when 'project' then return exists (select from api.projects(p_resource_id) v where v.id = p_resource_id);
    when 'task' then return exists (select from api.tasks(p_resource_id) v where v.id = p_resource_id);
    when 'time_entry' then
      if p_type = 'time_entry.deleted' then
        return app_private.may_read_time_entries();
      end if;
      return exists (select from api.time_entries(p_resource_id) v where v.id = p_resource_id and v.deleted_at is null);
    when 'approval' then return exists (select from api.approvals(p_resource_id) v where v.id = p_resource_id);
    when 'webhook_endpoint' then return exists (select from api.webhook_endpoints(p_resource_id) v where v.id = p_resource_id);
    when 'integration_connection' then return exists (select from api.integration_connections(p_resource_id) v where v.id = p_resource_id);
    when 'invoice' then return exists (select from api.invoices(p_resource_id) v where v.id = p_resource_id);
    when 'payment' then return exists (select from app.payments p where p.organization_id = v__organization_id and p.id = p_resource_id);
    when 'file' then return exists (select from api.files(p_resource_id) v where v.id = p_resource_id);
    when 'ticket' then return exists (select from api.tickets(p_resource_id) v where v.id = p_resource_id);
    when 'ticket_message' then
      return exists (select from app.ticket_messages m where m.organization_id = v__organization_id and m.id = p_resource_id);
    when 'report_run' then return exists (select from api.report_runs(p_resource_id) v where v.id = p_resource_id);
    when 'run' then return exists (select from api.runs(p_resource_id) v where v.id = p_resource_id);
    when 'conversation_message' then return exists (select from api.conversation_messages(p_resource_id) v where v.id = p_resource_id);
    else return false;
  end case;
end
$$;


--
-- Name: FUNCTION event_resource_visible(p_type text, p_resource_type text, p_resource_id text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.event_resource_visible(p_type text, p_resource_type text, p_resource_id text) IS 'Whether the request context''s client may read an event''s resource now, read through the API''s own view functions (payments and ticket messages by their policies) under svc_api''s policies, so that a delivery never tells a client more than a GET would (spec: events are filtered through the same rules as reads); a time_entry.deleted event goes to whoever may read time entries, and an unknown resource type is never visible. The worker calls it through app_private.client_may_read, after setting that client''s signed delivery context and switching to svc_runtime; it runs as svc_api, the owner of the views, and sees only the organization the context names.';


--
-- Name: file_for(text, boolean); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.file_for(p_id text, p_write boolean) RETURNS app.files
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  f app.files;
  l record;
begin
  select * into f from app.files x where x.organization_id = v__organization_id and x.id = p_id;
  if not found then
    l := app_private.file_link(p_id);
    if l.linked_resource_type is null
       or not app_private.linked_resource_visible(v__organization_id, l.linked_resource_type, l.linked_resource_id) then
      perform app_private.raise('SVN04', 'FILE_NOT_FOUND', format('no file %s in your organization', p_id));
    end if;
    perform app_private.raise('SVR04', 'FILE_ACCESS_DENIED',
      format('the files of this %s are for the Roles %s', l.linked_resource_type,
             array_to_string(case when p_write then app_private.file_write_roles(l.linked_resource_type)
                                  else app_private.file_read_roles(l.linked_resource_type) end, ', ')));
  end if;
  if p_write and not app.has_any_role(app_private.file_write_roles(f.linked_resource_type)) then
    perform app_private.raise('SVR04', 'FILE_ACCESS_DENIED',
      format('the files of this %s are for the Roles %s', f.linked_resource_type,
             array_to_string(app_private.file_write_roles(f.linked_resource_type), ', ')));
  end if;
  return f;
end
$$;


--
-- Name: file_link(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.file_link(p_id text, OUT linked_resource_type text, OUT linked_resource_id text) RETURNS record
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := app.current_organization_id();
begin
  select f.linked_resource_type, f.linked_resource_id into linked_resource_type, linked_resource_id
    from app.files f where f.organization_id = v_org and f.id = p_id;
end
$$;


--
-- Name: FUNCTION file_link(p_id text, OUT linked_resource_type text, OUT linked_resource_id text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.file_link(p_id text, OUT linked_resource_type text, OUT linked_resource_id text) IS 'The resource (type and id) that a file of the request''s organization is linked to, whatever the caller''s Roles: svc_api''s policy hides a file whose linked resource''s files the caller may not read, and app_private.file_for uses this link to answer SVR04 FILE_ACCESS_DENIED (the caller sees the resource but not its files) instead of SVN04 FILE_NOT_FOUND. It runs as svc_owner, whose policy shows the request''s organization without the Role filter; it reads only that organization and returns only the link, never the file.';


--
-- Name: file_policy(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.file_policy(p_org text, OUT max_size_bytes bigint, OUT allowed_content_types text[], OUT require_scan boolean) RETURNS record
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  select coalesce(p.max_size_bytes, 104857600), coalesce(p.allowed_content_types, app_private.default_file_content_types()),
         coalesce(p.require_scan, false)
    into max_size_bytes, allowed_content_types, require_scan
    from (select 1) one left join app.file_policies p on p.organization_id = p_org;
end
$$;


--
-- Name: FUNCTION file_policy(p_org text, OUT max_size_bytes bigint, OUT allowed_content_types text[], OUT require_scan boolean); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.file_policy(p_org text, OUT max_size_bytes bigint, OUT allowed_content_types text[], OUT require_scan boolean) IS 'An organization''s file policy in force: its row of app.file_policies, or the defaults (100 MiB, the default content types, no scan required). It runs as svc_owner, the owner of the policy helpers, so that createFileUpload, the file lifecycle trigger and the worker''s scan job read the settings under one policy: the request''s organization (every organization only in an operator session), so within a request another organization''s settings are never read.';


--
-- Name: file_read_roles(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.file_read_roles(p_type text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select case p_type when 'invoice' then '{manager,finance}'::text[] when 'ticket' then '{member,manager,finance,hr}'::text[]
                         else '{member,manager}'::text[] end $$;


--
-- Name: file_scan_load(text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.file_scan_load(p_organization_id text, p_file_id text) RETURNS TABLE(status text, organization_id text, upload_id text, size_bytes bigint, require_scan boolean)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return query
    select f.status, f.organization_id, f.upload_id, f.size_bytes, (app_private.file_policy(f.organization_id)).require_scan
      from app.files f where f.organization_id = p_organization_id and f.id = p_file_id;
end
$$;


--
-- Name: file_scan_record(text, text, text, text, boolean); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.file_scan_record(p_organization_id text, p_file_id text, p_outcome text, p_detail text, p_required boolean) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  f app.files;
  v_reason text;
begin
  select * into f from app.files x where x.organization_id = p_organization_id and x.id = p_file_id for update;
  if not found or f.status <> 'processing' then
    return coalesce(f.status, 'missing');
  end if;
  if p_outcome = 'clean' or (p_outcome = 'not_scanned' and not p_required and not (app_private.file_policy(p_organization_id)).require_scan) then
    update app.files x set status = 'ready', scan_status = p_outcome, scan_detail = null
     where x.organization_id = p_organization_id and x.id = f.id;
    return 'ready';
  end if;
  -- The reason as a value: Citus takes no function but an immutable one inside CASE in a write.
  v_reason := case p_outcome
    when 'infected' then format('the virus scanner found %s', left(p_detail, 200))
    when 'failed' then 'the file could not be scanned'
    else 'a virus scan is required and no scanner is available' end;
  update app.files x
     set status = 'rejected', scan_status = case when p_outcome = 'not_scanned' then 'not_scanned' else p_outcome end,
         scan_detail = left(p_detail, 200), rejection_code = 'FILE_SCAN_FAILED', rejection_detail = v_reason
   where x.organization_id = p_organization_id and x.id = f.id;
  -- Infected or unscannable content is not kept.
  delete from app.file_chunks c where c.organization_id = p_organization_id and c.upload_id = f.upload_id;
  return 'rejected';
end
$$;


--
-- Name: file_uploads; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.file_uploads (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('upl'::text) NOT NULL,
    name text NOT NULL,
    content_type text NOT NULL,
    size_bytes bigint NOT NULL,
    sha256 text NOT NULL,
    linked_resource_type text NOT NULL,
    linked_resource_id text NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    chunk_size integer DEFAULT 32768 NOT NULL,
    received_size_bytes bigint,
    received_sha256 text,
    detected_content_type text,
    content_type_verified boolean,
    file_id text,
    created_by_client_id text NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    uploaded_at timestamp with time zone,
    CONSTRAINT file_uploads_chunk_size_range CHECK (((chunk_size >= 1024) AND (chunk_size <= 8388608))),
    CONSTRAINT file_uploads_content_type_format CHECK ((content_type ~ '^[a-z]+/[a-z0-9.+-]+$'::text)),
    CONSTRAINT file_uploads_linked_resource_type_valid CHECK ((linked_resource_type = ANY (ARRAY['project'::text, 'task'::text, 'invoice'::text, 'ticket'::text]))),
    CONSTRAINT file_uploads_name_valid CHECK ((((length(name) >= 1) AND (length(name) <= 255)) AND (name !~ '[[:cntrl:]]'::text))),
    CONSTRAINT file_uploads_received CHECK (((status = 'pending'::text) = (received_size_bytes IS NULL))),
    CONSTRAINT file_uploads_sha256_format CHECK ((sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT file_uploads_size_positive CHECK ((size_bytes > 0)),
    CONSTRAINT file_uploads_status_valid CHECK ((status = ANY (ARRAY['pending'::text, 'uploaded'::text, 'completed'::text])))
);

ALTER TABLE ONLY app.file_uploads FORCE ROW LEVEL SECURITY;


--
-- Name: file_upload_doc(app.file_uploads); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.file_upload_doc(u app.file_uploads) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  select jsonb_build_object('object', 'file_upload', 'id', u.id, 'status', u.status,
    'upload_token', u.id || '.' || u.organization_id || '.' || app_private.capability_mac('upload', u.id || '.' || u.organization_id),
    'expires_at', app_private.iso_timestamp(u.expires_at),
    'name', u.name, 'content_type', u.content_type, 'size_bytes', u.size_bytes, 'sha256', u.sha256,
    'linked_resource', jsonb_build_object('type', u.linked_resource_type, 'id', u.linked_resource_id),
    'limits', (select jsonb_build_object('max_size_bytes', p.max_size_bytes, 'allowed_content_types', to_jsonb(p.allowed_content_types))
                 from app_private.file_policy(u.organization_id) p),
    'file_id', u.file_id)
$$;


--
-- Name: file_write_roles(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.file_write_roles(p_type text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select case p_type when 'invoice' then '{manager,finance}'::text[] else '{manager}'::text[] end $$;


--
-- Name: integration_visible(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.integration_visible(p_category text) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select case when p_category = 'accounting' then app.has_role('finance') else app.has_role('manager') end $$;


--
-- Name: invoice_lines_errors(jsonb, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.invoice_lines_errors(p_lines jsonb, p_scale integer) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_errors jsonb := '[]';
  l jsonb;
  i integer := 0;
  k text;
begin
  if jsonb_typeof(p_lines) <> 'array' or jsonb_array_length(p_lines) > 200 then
    return app_private.error('/lines', 'INVALID_INVOICE_LINE', 'lines: an array of at most 200 lines');
  end if;
  for l in select * from jsonb_array_elements(p_lines) loop
    for k in select jsonb_object_keys(l) loop
      if k not in ('description', 'quantity', 'unit_price', 'tax_rate') then
        v_errors := v_errors || app_private.error(format('/lines/%s/%s', i, k), 'INVALID_INVOICE_LINE',
          case when k in ('amount', 'tax_amount', 'subtotal', 'tax_total', 'total', 'amount_due', 'id')
               then format('%s is calculated by the service and cannot be supplied', k)
               else format('unknown line field %s', k) end);
      end if;
    end loop;
    if coalesce(jsonb_typeof(l -> 'description'), '') <> 'string' or length(l ->> 'description') not between 1 and 1000 then
      v_errors := v_errors || app_private.error(format('/lines/%s/description', i), 'INVALID_INVOICE_LINE', 'description: 1 to 1000 characters');
    end if;
    if coalesce(jsonb_typeof(l -> 'quantity'), '') <> 'string' or (l ->> 'quantity') !~ '^\d{1,9}(\.\d{1,4})?$' or (l ->> 'quantity')::numeric = 0 then
      v_errors := v_errors || app_private.error(format('/lines/%s/quantity', i), 'INVALID_INVOICE_LINE',
        'quantity: a positive decimal string with at most 4 decimals');
    end if;
    if coalesce(jsonb_typeof(l -> 'unit_price'), '') <> 'string' or (l ->> 'unit_price') !~ '^-?\d{1,12}(\.\d+)?$'
       or scale((l ->> 'unit_price')::numeric) > p_scale then
      v_errors := v_errors || app_private.error(format('/lines/%s/unit_price', i), 'INVALID_INVOICE_LINE',
        format('unit_price: a decimal string with at most %s decimals (the currency''s minor units)', p_scale));
    end if;
    if l ? 'tax_rate' and (coalesce(jsonb_typeof(l -> 'tax_rate'), '') <> 'string' or (l ->> 'tax_rate') !~ '^\d{1,3}(\.\d{1,4})?$'
                           or (l ->> 'tax_rate')::numeric > 100) then
      v_errors := v_errors || app_private.error(format('/lines/%s/tax_rate', i), 'INVALID_INVOICE_LINE',
        'tax_rate: a percentage from "0" to "100" with at most 4 decimals');
    end if;
    i := i + 1;
  end loop;
  return v_errors;
end
$_$;


--
-- Name: invoice_lock(text, integer[]); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.invoice_lock(p_id text, p_if_match integer[]) RETURNS app.invoices
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  i app.invoices;
begin
  select * into i from app.invoices where organization_id = v__organization_id and id = p_id for update;
  if not found then
    perform app_private.invoice_not_found(p_id);
  end if;
  perform app_private.check_if_match(i.version, p_if_match);
  if i.status <> 'draft' then
    perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', format('a %s invoice cannot be changed', i.status));
  end if;
  return i;
end
$$;


--
-- Name: invoice_not_found(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.invoice_not_found(p_id text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select app_private.raise('SVN04', 'INVOICE_NOT_FOUND', format('no invoice %s in your organization', p_id)) $$;


--
-- Name: invoice_recompute_totals(text[], text[]); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.invoice_recompute_totals(p_orgs text[], p_invoices text[]) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  -- One invoice at a time (a statement usually touches one): each is two index lookups, where a
  -- set-based join over unnest() is planned for 100 ids and scans every line.
  for n in 1 .. coalesce(cardinality(p_invoices), 0) loop
    update app.invoices i
       set subtotal = t.subtotal, tax_total = t.tax_total, total = t.subtotal + t.tax_total
      from (select coalesce(sum(l.amount), 0) as subtotal, coalesce(sum(l.tax_amount), 0) as tax_total
              from app.invoice_lines l where l.organization_id = p_orgs[n] and l.invoice_id = p_invoices[n]) t
     where i.organization_id = p_orgs[n] and i.id = p_invoices[n]
       and (i.subtotal, i.tax_total, i.total) is distinct from (t.subtotal, t.tax_total, t.subtotal + t.tax_total);
  end loop;
end
$$;


--
-- Name: FUNCTION invoice_recompute_totals(p_orgs text[], p_invoices text[]); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.invoice_recompute_totals(p_orgs text[], p_invoices text[]) IS 'Sets each named invoice''s subtotal, tax_total and total to the sums of its lines'' rounded amounts and taxes (p_orgs[n] and p_invoices[n] name one invoice and its organization), writing only the invoices whose totals changed; called once per statement by the line triggers (tg_invoice_lines__totals_changed). It is a security definer of svc_owner because the writer of the lines (svc_api) may not write totals, which only the service calculates; every update names its organization, and svc_owner''s policy refuses any but the request''s outside an operator session.';


--
-- Name: invoice_set_lines(app.invoices, jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.invoice_set_lines(p_invoice app.invoices, p_lines jsonb) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.raise_errors(app_private.invoice_lines_errors(p_lines, p_invoice.scale));
  delete from app.invoice_lines where organization_id = p_invoice.organization_id and invoice_id = p_invoice.id;
  insert into app.invoice_lines (organization_id, invoice_id, position, description, quantity, unit_price, tax_rate)
  select p_invoice.organization_id, p_invoice.id, (o - 1)::integer, l ->> 'description', (l ->> 'quantity')::numeric,
         (l ->> 'unit_price')::numeric, coalesce((l ->> 'tax_rate')::numeric, 0)
    from jsonb_array_elements(p_lines) with ordinality as x(l, o);
end
$$;


--
-- Name: is_valid_date(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.is_valid_date(p text) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform p::date;
  return true;
exception when others then
  return false;
end
$$;


--
-- Name: job_outbox_drain(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.job_outbox_drain() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  j record;
  v_count integer := 0;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return 0;
  end if;
  for j in delete from app_private.job_outbox returning * loop
    perform graphile_worker.add_job(j.task, (j.payload::jsonb || jsonb_build_object('organization_id', j.organization_id))::json,
                                    run_at => j.run_at, job_key => j.job_key, max_attempts => j.max_attempts);
    v_count := v_count + 1;
  end loop;
  return v_count;
end
$$;


--
-- Name: job_queue_privileges(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.job_queue_privileges() RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  t regclass;
begin
  if to_regnamespace('graphile_worker') is null then
    return;
  end if;
  grant usage on schema graphile_worker to svc_owner, svc_worker;
  grant select, insert, update on graphile_worker._private_jobs, graphile_worker._private_tasks, graphile_worker._private_job_queues to svc_owner;
  grant usage on all sequences in schema graphile_worker to svc_owner, svc_worker;
  grant execute on function graphile_worker.add_job(text, json, text, timestamptz, integer, text, integer, text[], text),
    graphile_worker.add_jobs(graphile_worker.job_spec[], boolean) to svc_owner;
  grant select, insert, update, delete on all tables in schema graphile_worker to svc_worker;
  grant execute on all functions in schema graphile_worker to svc_worker;
  for t in select c.oid::regclass from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where n.nspname = 'graphile_worker' and c.relkind in ('r', 'p') and c.relrowsecurity loop
    if t::text in ('graphile_worker._private_jobs', 'graphile_worker._private_tasks', 'graphile_worker._private_job_queues')
       and not exists (select from pg_policy where polrelid = t and polname = 'Commands queue jobs') then
      execute format('create policy "Commands queue jobs" on %s for all to svc_owner using (%s) with check (%2$s)', t,
        case t::text when 'graphile_worker._private_jobs'
          then $e$app_private.operator_session() or (payload ->> 'organization_id') = app.current_organization_id()$e$
          else 'true' end);
    end if;
    if t::text in ('graphile_worker._private_jobs', 'graphile_worker._private_tasks', 'graphile_worker._private_job_queues') then
      execute format('comment on policy "Commands queue jobs" on %s is %L', t, case t::text when 'graphile_worker._private_jobs'
        then 'svc_owner may read and write only the jobs whose payload names the signed request''s organization (app_private.queue_job adds organization_id to every payload), or any job in an operator session (the worker, svc-admin, migrations): on one server a command queues and sees only its own organization''s jobs (on Citus jobs go through app_private.job_outbox).'
        else 'svc_owner may read, add and update graphile-worker''s task and queue names, which add_job upserts for every job it queues: they carry no tenant data, so every row is allowed; which jobs a command reaches is fenced by the policy on graphile_worker._private_jobs.' end);
    end if;
    if not exists (select from pg_policy where polrelid = t and polname = 'The worker runs every job') then
      execute format('create policy "The worker runs every job" on %s for all to svc_worker using (true) with check (true)', t);
    end if;
    execute format('comment on policy "The worker runs every job" on %s is %L', t,
      'svc_worker reads and writes every row of graphile-worker''s tables, of every organization, because it runs the queue for all of them (an operator). graphile-worker keeps row security on its tables with no policy of its own, so without this one the worker''s login would see no job.');
  end loop;
end
$_$;


--
-- Name: FUNCTION job_queue_privileges(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.job_queue_privileges() IS 'What svc_owner needs of graphile-worker''s schema to queue jobs, and svc_worker to run them; scripts/db.ts calls it after graphile-worker''s migrations.';


--
-- Name: linked_resource_visible(text, text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.linked_resource_visible(p_org text, p_type text, p_id text) RETURNS boolean
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  -- PL/pgSQL: Citus cannot plan the parameters of a SQL function.
  return case p_type
    when 'project' then exists (select from app.projects p where p.organization_id = p_org and p.id = p_id)
    when 'task' then exists (select from app.tasks t where t.organization_id = p_org and t.id = p_id)
    when 'invoice' then exists (select from app.invoices i where i.organization_id = p_org and i.id = p_id)
    when 'ticket' then exists (select from app.tickets k where k.organization_id = p_org and k.id = p_id)
    else false end;
end
$$;


--
-- Name: lock_task(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.lock_task(p_id text) RETURNS app.tasks
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  t app.tasks;
begin
  select * into t from app.tasks where organization_id = v__organization_id and id = p_id for update;
  if not found then
    perform app_private.task_not_found(p_id);
  end if;
  return t;
end
$$;


--
-- Name: lock_ticket(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.lock_ticket(p_id text) RETURNS app.tickets
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  t app.tickets;
begin
  select * into t from app.tickets x where x.organization_id = v__organization_id and x.id = p_id for update;
  if not found then
    perform app_private.ticket_not_found(p_id);
  end if;
  return t;
end
$$;


--
-- Name: lock_time_entry(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.lock_time_entry(p_id text) RETURNS app.time_entries
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  e app.time_entries;
begin
  select * into e from app.time_entries where organization_id = v__organization_id and id = p_id for update;
  if not found or e.deleted_at is not null then
    perform app_private.time_entry_not_found(p_id);
  end if;
  return e;
end
$$;


--
-- Name: may_read_internal_notes(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.may_read_internal_notes() RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select app_private.may_read_tickets() and app.has_any_role('{member,manager}') $$;


--
-- Name: FUNCTION may_read_internal_notes(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.may_read_internal_notes() IS 'Whether the caller may read tickets'' internal notes: it may read tickets (app_private.may_read_tickets()) and holds member or manager, so finance and hr never see internal notes, even where their organization lets them read tickets. It reads no table itself; it is an svc_owner definer like the other policy helpers that policies and views call, may_read_tickets reading the organization''s ticket settings where no signed context carries them.';


--
-- Name: may_read_tickets(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.may_read_tickets() RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text;
begin
  if app_private.context_ok() then
    return 'tickets' = any (string_to_array(current_setting('svc.read_flags', true), ','));
  end if;
  v_org := app.current_organization_id();
  if v_org is null then
    return false;
  end if;
  perform app_private.refuse_on_coordinator('app_private.may_read_tickets()');
  return coalesce((select o.ticket_module_enabled
                      and (app.has_any_role('{member,manager}')
                           or (app.has_role('finance') and o.finance_may_read_tickets)
                           or (app.has_role('hr') and o.hr_may_read_tickets))
                     from app.organizations o where o.id = v_org), false);
end
$$;


--
-- Name: FUNCTION may_read_tickets(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.may_read_tickets() IS 'Whether the caller may read tickets: the ticket module on, and the member or manager Role, or finance or hr where the organization grants them tickets (the spec''s Role matrix). In a request it is the tickets read flag signed into the context by begin_request; without one (a BI session) it reads the organization''s ticket settings (refused on a Citus coordinator, SV500 NOT_IN_ITS_WORKER), and without an organization it is false. It runs as svc_owner, the owner of the policy helpers, whose policy shows only the context''s organization, and it reads no other.';


--
-- Name: may_read_time_entries(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.may_read_time_entries() RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text;
begin
  if app_private.context_ok() then
    return 'time_entries' = any (string_to_array(current_setting('svc.read_flags', true), ','));
  end if;
  if app.has_any_role('{manager,finance}') then
    return true;
  end if;
  v_org := app.current_organization_id();
  if v_org is null or not app.has_role('hr') then
    return false;
  end if;
  perform app_private.refuse_on_coordinator('app_private.may_read_time_entries()');
  return coalesce((select o.hr_may_read_time_entries from app.organizations o where o.id = v_org), false);
end
$$;


--
-- Name: FUNCTION may_read_time_entries(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.may_read_time_entries() IS 'Whether the caller may read time entries: manager or finance, or hr where the organization permits it (hr_may_read_time_entries). In a request the answer is the signed context''s time_entries read flag, computed by api.begin_request from the client''s Roles and that setting; without a signed context (a BI session) it reads the setting from the organization, and refuses on a Citus coordinator (SV500 NOT_IN_ITS_WORKER). It runs as svc_owner so this read of app.organizations works for callers that may not read it (svc_runtime, BI logins), and only for the caller''s own organization (app.current_organization_id()).';


--
-- Name: merge_custom_fields(jsonb, jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.merge_custom_fields(p_current jsonb, p_patch jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  -- Nulls stay in the merged value so the check trigger sees (and validates) every key sent;
  -- the trigger strips them once the change is accepted.
  select case when p_patch is null or jsonb_typeof(p_patch) <> 'object' then coalesce(p_patch, p_current)
              else coalesce(p_current, '{}') || p_patch end
$$;


--
-- Name: message_budget(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.message_budget() RETURNS integer
    LANGUAGE sql IMMUTABLE
    AS $$ select 16000 $$;


--
-- Name: normalize_emails(jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.normalize_emails(p jsonb) RETURNS text[]
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return (select coalesce(array_agg(app_private.normalize_email(e)), '{}') from jsonb_array_elements_text(p) e);
end
$$;


--
-- Name: operator_session(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.operator_session() RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ select pg_catalog.pg_has_role(session_user, 'svc_operator', 'USAGE') $$;


--
-- Name: FUNCTION operator_session(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.operator_session() IS 'Whether the session''s login acts for every organization (a member of svc_operator, or a superuser): the worker, svc-admin, migrations. Never svc_runtime or a BI login.';


--
-- Name: project_archive_blockers(text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.project_archive_blockers(p_org text, p_project_id text) RETURNS text[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_open integer;
  v_pending integer;
  v_blockers text[] := array[]::text[];
begin
  select count(*) into v_open
    from app.tasks t
    join app.task_workflow_statuses s on s.organization_id = t.organization_id and s.workflow_id = t.workflow_id and s.status = t.status
   where t.organization_id = p_org and t.project_id = p_project_id and t.archived_at is null and s.category = 'open';
  if v_open > 0 then
    v_blockers := v_blockers || format('%s open task(s): complete, cancel or archive them first', v_open);
  end if;
  select count(*) into v_pending from app.time_entries e
   where e.organization_id = p_org and e.project_id = p_project_id and e.status = 'submitted' and e.deleted_at is null;
  if v_pending > 0 then
    v_blockers := v_blockers || format('%s time entr(ies) awaiting approval', v_pending);
  end if;
  return v_blockers;
end
$$;


--
-- Name: FUNCTION project_archive_blockers(p_org text, p_project_id text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.project_archive_blockers(p_org text, p_project_id text) IS 'Why project p_project_id of p_org cannot be archived yet: its unarchived tasks in an open status, and its undeleted time entries submitted and awaiting approval; an empty array when there are none. A definer as svc_owner because tg_projects__status_change runs as the writer (svc_api in a request) and must count all such work, whatever the caller''s Roles let it read; each statement names p_org, and svc_owner''s policy keeps a request to its own organization.';


--
-- Name: project_not_found(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.project_not_found(p_id text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select app_private.raise('SVN04', 'PROJECT_NOT_FOUND', format('no project %s in your organization', p_id)) $$;


--
-- Name: purge_webhook_history(interval); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.purge_webhook_history(p_older_than interval DEFAULT '30 days'::interval) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_count bigint;
begin
  delete from app.events e where e.created_at < now() - p_older_than;
  get diagnostics v_count = row_count;
  return v_count;
end
$$;


--
-- Name: queue_agent_run(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.queue_agent_run(p_run_id text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  perform app_private.queue_job(v__organization_id, 'agent_run', json_build_object('run_id', p_run_id), null, 3);
end
$$;


--
-- Name: FUNCTION queue_agent_run(p_run_id text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.queue_agent_run(p_run_id text) IS 'Queues the agent_run job (at most 3 attempts) of run p_run_id for the request''s organization through app_private.queue_job: graphile-worker on one server, the organization''s job outbox on Citus, in the same transaction as the run''s write. It runs as svc_owner because the queue and app_private.queue_job are not svc_api''s to use; the organization is the signed context''s, and queue_job refuses a job without one (SV500 JOB_WITHOUT_ORGANIZATION).';


--
-- Name: queue_file_scan(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.queue_file_scan(p_file_id text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
begin
  perform app_private.queue_job(v__organization_id, 'file_scan', json_build_object('file_id', p_file_id),
                                'file_scan:' || p_file_id, 10);
end
$$;


--
-- Name: FUNCTION queue_file_scan(p_file_id text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.queue_file_scan(p_file_id text) IS 'Queues the file_scan job of a newly completed upload (job key file_scan:<file id>, 10 attempts), through app_private.queue_job, in the writer''s transaction, so the scan is queued only if the file commits. It runs as svc_owner because svc_api may not write graphile-worker''s queue (on Citus the organization''s job outbox); the job names the request''s organization, which the queue''s policy requires (SV500 JOB_WITHOUT_ORGANIZATION without one).';


--
-- Name: queue_job(text, text, json, text, integer, timestamp with time zone); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.queue_job(p_organization_id text, p_task text, p_payload json, p_job_key text, p_max_attempts integer, p_run_at timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_payload json;
begin
  if p_organization_id is null then
    perform app_private.raise('SV500', 'JOB_WITHOUT_ORGANIZATION', format('a %s job names no organization', p_task));
  end if;
  v_payload := (p_payload::jsonb || jsonb_build_object('organization_id', p_organization_id))::json;
  if not exists (select from pg_extension where extname = 'citus') then
    perform graphile_worker.add_job(p_task, v_payload, run_at => p_run_at, job_key => p_job_key, max_attempts => p_max_attempts);
  else
    insert into app_private.job_outbox (organization_id, task, payload, job_key, max_attempts, run_at)
    values (p_organization_id, p_task, v_payload, p_job_key, p_max_attempts, p_run_at);
  end if;
end
$$;


--
-- Name: queue_report_run(text); Type: FUNCTION; Schema: app_private; Owner: -
--

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


--
-- Name: FUNCTION queue_report_run(p_run_id text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.queue_report_run(p_run_id text) IS 'Queues the report_run job of run p_run_id (at most 3 attempts, job key report_run:<id>, so one job per run) for the request''s organization through app_private.queue_job: graphile-worker on one server, the organization''s job outbox on Citus, in the same transaction as the run''s insert. It runs as svc_owner because the queue and app_private.queue_job are not svc_api''s to use; the organization is the signed context''s, and queue_job refuses a job without one (SV500 JOB_WITHOUT_ORGANIZATION).';


--
-- Name: raise(text, text, text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.raise(sqlstate text, code text, detail text DEFAULT NULL::text, pointer text DEFAULT NULL::text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  raise exception using errcode = sqlstate, message = code, detail = coalesce(detail, ''), hint = coalesce(pointer, '');
end
$$;


--
-- Name: raise_errors(jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.raise_errors(p_errors jsonb) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_code text := p_errors -> 0 ->> 'code';
begin
  if p_errors is null or jsonb_array_length(p_errors) = 0 then
    return;
  end if;
  raise exception using
    errcode = case when v_code like '%FORBIDDEN' then 'SVR04' else 'SVV22' end,
    message = v_code, detail = p_errors::text, hint = 'errors';
end
$$;


--
-- Name: random_secret(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.random_secret(prefix text) RETURNS text
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  -- Two v4 UUIDs from the server's strong random source: 244 random bits.
  select prefix || translate(rtrim(encode(decode(
           replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''), 'hex'),
           'base64'), '='), '+/', '-_')
$$;


--
-- Name: read_flags(text[], boolean, boolean, boolean, boolean); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.read_flags(p_roles text[], p_ticket_module boolean, p_finance_tickets boolean, p_hr_tickets boolean, p_hr_time_entries boolean) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select pg_catalog.ltrim(
           case when coalesce(p_ticket_module and (p_roles && '{member,manager}'::text[]
                                                   or ('finance' = any (p_roles) and p_finance_tickets)
                                                   or ('hr' = any (p_roles) and p_hr_tickets)), false)
                then ',tickets' else '' end
        || case when coalesce(p_ticket_module and (p_roles && '{member,manager}'::text[]
                                                   or ('finance' = any (p_roles) and p_finance_tickets)
                                                   or ('hr' = any (p_roles) and p_hr_tickets)), false)
                     and p_roles && '{member,manager}'::text[]
                then ',internal_notes' else '' end
        || case when p_roles && '{manager,finance}'::text[] or ('hr' = any (p_roles) and p_hr_time_entries)
                then ',time_entries' else '' end, ',')
$$;


--
-- Name: refuse_on_coordinator(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.refuse_on_coordinator(p_function text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if to_regproc('pg_catalog.citus_is_coordinator') is null then
    return;
  end if;
  -- A statement of its own: citus_is_coordinator exists only where Citus is installed.
  if citus_is_coordinator() then
    perform app_private.raise('SV500', 'NOT_IN_ITS_WORKER',
      format('%s runs only in its organization''s worker, in a call delegated to it', p_function));
  end if;
end
$$;


--
-- Name: report_run_execute(text, text, interval); Type: FUNCTION; Schema: app_private; Owner: -
--

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


--
-- Name: report_run_start(text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

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


--
-- Name: reporting_rows_read(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.reporting_rows_read(p_statement text) RETURNS SETOF jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  begin
    return query execute format('select to_jsonb(r) from (%s) r', p_statement);
  end
  $$;


--
-- Name: FUNCTION reporting_rows_read(p_statement text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.reporting_rows_read(p_statement text) IS 'The relay''s read of one reporting view''s query as svc_api, the owner the api views read as, under the request context reporting_private.bi_rows_of signed: the same rows a BI login reads on one server.';


--
-- Name: request_time_entry_approval(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.request_time_entry_approval(p_entry_id text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  e app.time_entries;
  v_org text := app.current_organization_id();
  v_now timestamptz := now();
begin
  select * into e from app.time_entries
   where organization_id = v_org and id = p_entry_id and deleted_at is null;
  if not found or not app.has_role('manager') or e.status not in ('draft', 'rejected') then
    perform app_private.raise('SVR05', 'APPROVAL_REQUIRED', 'an approval is requested only by submitting a draft or rejected entry');
  end if;
  insert into app.approvals (organization_id, type, category, resource_type, resource_id, requested_by_client_id)
  values (e.organization_id, 'time_entry', 'project', 'time_entry', p_entry_id, app.current_client_id())
  on conflict (organization_id, resource_type, resource_id) do update
    set status = 'pending', decision = null, decided_at = null, approver_member_id = null,
        requested_at = v_now, requested_by_client_id = excluded.requested_by_client_id;
  -- Requesting approval and submitting are one step: a pending request always has a submitted entry.
  update app.time_entries set status = 'submitted' where organization_id = v_org and id = p_entry_id;
end
$$;


--
-- Name: FUNCTION request_time_entry_approval(p_entry_id text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.request_time_entry_approval(p_entry_id text) IS 'Opens, or reopens after a rejection, the pending named-user approval request (category project) for a draft or rejected, not deleted entry of the signed request''s organization, and marks the entry submitted in the same step, so a pending request always has a submitted entry; without a manager''s context, or for any other entry, it raises SVR05 APPROVAL_REQUIRED. It runs as svc_owner because svc_api may not write app.approvals (API clients neither write nor decide approvals); it reads and writes only by the request''s organization, under svc_owner''s policy.';


--
-- Name: require_found(boolean, text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.require_found(p_found boolean, p_code text, p_detail text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if not p_found then
    perform app_private.raise('SVN01', p_code, p_detail);
  end if;
end
$$;


--
-- Name: run_available_skills(text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.run_available_skills(p_organization_id text, p_run_id text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  r app.runs;
  v jsonb;
begin
  select x.* into r from app.runs x where x.organization_id = p_organization_id and x.id = p_run_id;
  if not app_private.begin_delivery_context(p_organization_id, r.client_id) then
    return '[]';
  end if;
  select coalesce(jsonb_agg(jsonb_build_object('name', k.name, 'description', k.description, 'parameters', k.parameters_schema) order by k.name), '[]')
    into v
    from app_private.agent_skills k
   where k.name = any (case when r.conversation_id is not null then app_private.chat_skills()
                            else (select d.skills || d.optional_skills from app_private.agent_definitions d where d.id = r.agent_id) end)
     and app_private.skill_blocker(k.name, r.subject ->> 'member_id') is null;
  perform app_private.set_context(null, null, null);
  return v;
end
$$;


--
-- Name: run_event(text, text, text, jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.run_event(p_org text, p_run_id text, p_type text, p_data jsonb) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_seq integer;
  v_name text;
  v_pending text;
begin
  -- Callers hold the run's row lock, so this max is not raced.
  v_seq := coalesce((select max(e.seq) from app.run_events e where e.organization_id = p_org and e.run_id = p_run_id), 0) + 1;
  insert into app.run_events (organization_id, run_id, seq, type, data) values (p_org, p_run_id, v_seq, p_type, p_data);
  v_name := app_private.run_wake_name(p_run_id);
  if current_setting('svc.fanout_wake', true) in ('after_commit', 'due') then
    v_pending := nullif(current_setting('svc.run_wake', true), '');
    if v_pending is null then
      perform set_config('svc.run_wake', v_name, true);
    elsif position(v_name in v_pending) = 0 then
      perform set_config('svc.run_wake', v_pending || ',' || v_name, true);
    end if;
  else
    perform pg_notify('svc_run_events', v_name);
  end if;
  return v_seq;
end
$$;


--
-- Name: FUNCTION run_event(p_org text, p_run_id text, p_type text, p_data jsonb); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.run_event(p_org text, p_run_id text, p_type text, p_data jsonb) IS 'Appends one event to run p_run_id''s log with the next sequence number (its callers hold the run''s row lock, so the log is totally ordered) and wakes that run''s streams by its opaque name: NOTIFY svc_run_events at commit, or, inside an API request''s transaction (svc.fanout_wake), in svc.run_wake for the API to notify after its commit, since NOTIFY serializes committing transactions. It runs as svc_owner because svc_api may only read app.run_events and may not read the wake key; its insert passes svc_owner''s policy only in the request''s organization or in the worker''s operator session, and the event takes the run''s client (tg__client_of_parent).';


--
-- Name: run_lock(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.run_lock(p_id text) RETURNS app.runs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  r app.runs;
begin
  select x.* into r from app.runs x where x.organization_id = v__organization_id and x.id = p_id for update;
  if not found then
    perform app_private.raise('SVN04', 'RUN_NOT_FOUND', format('no run %s of your client', p_id));
  end if;
  return r;
end
$$;


--
-- Name: FUNCTION run_lock(p_id text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.run_lock(p_id text) IS 'Locks (FOR UPDATE) and returns the calling client''s run p_id in the request''s organization, SVN04 RUN_NOT_FOUND otherwise; cancelRun and submitRunAction take it, so they wait for a tool operation the worker is applying under the same lock. It runs as svc_api, whose policies show only the runs of the request''s signed organization and client, so no other client''s run can be locked or read.';


--
-- Name: run_note(text, text, text, jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.run_note(p_organization_id text, p_run_id text, p_type text, p_data jsonb) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  r app.runs;
begin
  select x.* into r from app.runs x where x.organization_id = p_organization_id and x.id = p_run_id for update;
  if not found or r.status <> 'running' or p_type not in ('run.progress', 'run.output.delta') then
    return false;
  end if;
  perform app_private.run_event(p_organization_id, r.id, p_type, p_data);
  return true;
end
$$;


--
-- Name: run_settle(text, text, text, jsonb, jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.run_settle(p_organization_id text, p_run_id text, p_outcome text, p_payload jsonb, p_state jsonb) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  r app.runs;
begin
  select x.* into r from app.runs x where x.organization_id = p_organization_id and x.id = p_run_id for update;
  if not found or r.status <> 'running' then
    return coalesce(r.status, 'missing');
  end if;
  if p_outcome = 'requires_action' then
    update app.runs x set status = 'requires_action', required_action = p_payload, state = coalesce(p_state, x.state)
     where x.organization_id = p_organization_id and x.id = r.id;
  elsif p_outcome = 'succeeded' then
    update app.runs x set status = 'succeeded', output = p_payload, completed_at = now()
     where x.organization_id = p_organization_id and x.id = r.id;
  else
    update app.runs x set status = 'failed', error = p_payload, completed_at = now()
     where x.organization_id = p_organization_id and x.id = r.id;
  end if;
  return p_outcome;
end
$$;


--
-- Name: run_start(text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.run_start(p_organization_id text, p_run_id text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  r app.runs;
  d app_private.agent_definitions;
  -- A value: Citus takes no volatile function inside COALESCE in a write.
  v_now timestamptz := now();
begin
  select x.* into r from app.runs x where x.organization_id = p_organization_id and x.id = p_run_id for update;
  if not found or r.status not in ('queued', 'running') then
    return null;
  end if;
  if r.status = 'queued' then
    update app.runs x set status = 'running', started_at = coalesce(x.started_at, v_now) where x.organization_id = p_organization_id and x.id = r.id;
  end if;
  select * into d from app_private.agent_definitions x where x.id = r.agent_id;
  return jsonb_build_object('id', r.id, 'organization_id', r.organization_id, 'client_id', r.client_id, 'kind', r.kind,
    'agent_id', r.agent_id, 'engine', case when r.conversation_id is not null then 'chat' else d.engine end,
    'input', r.input, 'subject', r.subject, 'state', r.state,
    'output_schema', coalesce(d.output_schema, '{"type":"object","additionalProperties":false,"required":["text"],"properties":{"text":{"type":"string"}}}'),
    'conversation_id', r.conversation_id,
    'tools', coalesce((select jsonb_agg(jsonb_build_object('name', k.name, 'description', k.description, 'parameters', k.parameters_schema) order by k.name)
                         from app_private.agent_skills k
                        where k.name = any (case when r.conversation_id is not null then app_private.chat_skills() else d.skills || d.optional_skills end)), '[]'));
end
$$;


--
-- Name: run_tool(text, text, text, jsonb, jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.run_tool(p_organization_id text, p_run_id text, p_skill text, p_args jsonb, p_rejection jsonb DEFAULT NULL::jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  r app.runs;
  d app_private.agent_definitions;
  k app_private.agent_skills;
  v_n integer;
  v_result jsonb;
  v_blocker jsonb;
  v_code text;
  v_detail text;
  v_pub text;
  v_done jsonb;
  v_completed timestamptz;
begin
  select x.* into r from app.runs x where x.organization_id = p_organization_id and x.id = p_run_id for update;
  if not found or r.status <> 'running' then
    return jsonb_build_object('stopped', coalesce(r.status, 'missing'));
  end if;
  select * into d from app_private.agent_definitions x where x.id = r.agent_id;
  select * into k from app_private.agent_skills x where x.name = p_skill;
  p_skill := left(p_skill, 100);
  -- A write already applied in this run with the same arguments is not applied again (a job
  -- retried after its worker died between the tool call's commit and the run's end).
  if k.writes then
    select c.result into v_done from app.run_tool_calls c
     where c.organization_id = p_organization_id and c.run_id = r.id and c.skill = p_skill and c.arguments = p_args
       and c.status = 'completed' and c.result is not null
     order by c.n limit 1;
    if v_done is not null then
      return jsonb_build_object('ok', true, 'result', v_done, 'replayed', true);
    end if;
  end if;
  v_n := coalesce((select max(c.n) from app.run_tool_calls c where c.organization_id = p_organization_id and c.run_id = r.id), 0) + 1;
  insert into app.run_tool_calls (organization_id, run_id, n, skill, arguments, status, conversation_id)
  values (p_organization_id, r.id, v_n, p_skill, p_args, 'started', r.conversation_id);
  perform app_private.run_event(p_organization_id, r.id, 'run.tool.started', jsonb_build_object('tool_call', v_n, 'skill', p_skill));
  select p.status into v_pub from app.agent_publications p where p.organization_id = p_organization_id and p.agent_id = r.agent_id;
  if p_rejection is not null then
    v_blocker := p_rejection;
  elsif k.name is null or not (p_skill = any (case when r.agent_id is null then app_private.chat_skills() else d.skills || d.optional_skills end)) then
    v_blocker := jsonb_build_object('code', 'SKILL_NOT_AVAILABLE', 'message', format('%s is not a skill of this run', p_skill));
  elsif r.agent_id is null then
    -- A chat run has no agent: its checks start with the client's standing.
    if not app_private.begin_delivery_context(p_organization_id, r.client_id) then
      v_blocker := jsonb_build_object('code', 'CLIENT_DISABLED', 'message', 'the API Client can no longer make requests');
    else
      v_blocker := app_private.skill_blocker(p_skill, r.subject ->> 'member_id');
    end if;
  elsif v_pub is distinct from 'published' then
    v_blocker := jsonb_build_object('code', 'AGENT_NOT_PUBLISHED', 'message', format('%s is no longer published in the organization', r.agent_id));
  elsif not 'api_client' = any (d.accepted_principal_types) then
    v_blocker := jsonb_build_object('code', 'API_PRINCIPAL_NOT_SUPPORTED', 'message', format('%s does not accept API Clients', r.agent_id));
  elsif not app_private.begin_delivery_context(p_organization_id, r.client_id) then
    v_blocker := jsonb_build_object('code', 'CLIENT_DISABLED', 'message', 'the API Client can no longer make requests');
  else
    v_blocker := app_private.skill_blocker(p_skill, r.subject ->> 'member_id');
  end if;
  if v_blocker is null then
    begin
      execute 'set local role svc_runtime';
      execute format('select %s($1, $2)', k.function_name) into v_result using p_args, r.subject ->> 'member_id';
      execute 'reset role';
    exception when others then
      get stacked diagnostics v_code = message_text, v_detail = pg_exception_detail;
      -- Our own errors carry a problem code as their message; anything else is summarized, never echoed.
      if v_code !~ '^[A-Z][A-Z_]+$' then
        v_code := 'TOOL_OPERATION_FAILED';
        v_detail := 'the operation could not be completed';
      end if;
      v_blocker := jsonb_build_object('code', v_code, 'message', coalesce(nullif(v_detail, ''), v_code));
    end;
  end if;
  perform app_private.set_context(null, null, null);
  -- A value: Citus takes no volatile function in a write.
  v_completed := clock_timestamp();
  if v_blocker is not null then
    update app.run_tool_calls c set status = 'failed', error_code = v_blocker ->> 'code', summary = v_blocker ->> 'message', completed_at = v_completed
     where c.organization_id = p_organization_id and c.run_id = r.id and c.n = v_n;
    perform app_private.run_event(p_organization_id, r.id, 'run.tool.completed',
      jsonb_build_object('tool_call', v_n, 'skill', p_skill, 'status', 'failed', 'error', jsonb_build_object('code', v_blocker ->> 'code', 'detail', v_blocker ->> 'message')));
    return jsonb_build_object('ok', false, 'error', jsonb_build_object('code', v_blocker ->> 'code', 'detail', v_blocker ->> 'message'));
  end if;
  update app.run_tool_calls c set status = 'completed', summary = v_result ->> 'summary', resources = coalesce(v_result -> 'resources', '[]'),
         result = case when k.writes then v_result end, completed_at = v_completed
   where c.organization_id = p_organization_id and c.run_id = r.id and c.n = v_n;
  perform app_private.run_event(p_organization_id, r.id, 'run.tool.completed',
    jsonb_build_object('tool_call', v_n, 'skill', p_skill, 'status', 'completed', 'summary', v_result ->> 'summary',
                       'resources', coalesce(v_result -> 'resources', '[]')));
  return jsonb_build_object('ok', true, 'result', v_result);
end
$_$;


--
-- Name: run_wake_name(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.run_wake_name(p_run_id text) RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  select left(encode(sha256(k.key || convert_to(p_run_id, 'UTF8')), 'hex'), 32) from app_private.run_wake_key k
$$;


--
-- Name: seed_default_task_workflow(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.seed_default_task_workflow(p_org text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_wf text := app_private.new_id('twf');
begin
  insert into app.task_workflows (organization_id, id, name, is_default) values (p_org, v_wf, 'Default', true);
  insert into app.task_workflow_statuses (organization_id, workflow_id, status, category, is_initial)
  values (p_org, v_wf, 'todo', 'open', true), (p_org, v_wf, 'in_progress', 'open', false),
         (p_org, v_wf, 'blocked', 'open', false), (p_org, v_wf, 'done', 'done', false),
         (p_org, v_wf, 'cancelled', 'cancelled', false);
  insert into app.task_workflow_transitions (organization_id, workflow_id, name, from_status, to_status)
  values (p_org, v_wf, 'start', 'todo', 'in_progress'),
         (p_org, v_wf, 'block', 'todo', 'blocked'), (p_org, v_wf, 'block', 'in_progress', 'blocked'),
         (p_org, v_wf, 'unblock', 'blocked', 'in_progress'),
         (p_org, v_wf, 'complete', 'todo', 'done'), (p_org, v_wf, 'complete', 'in_progress', 'done'),
         (p_org, v_wf, 'cancel', 'todo', 'cancelled'), (p_org, v_wf, 'cancel', 'in_progress', 'cancelled'),
         (p_org, v_wf, 'cancel', 'blocked', 'cancelled'),
         (p_org, v_wf, 'reopen', 'done', 'todo'), (p_org, v_wf, 'reopen', 'cancelled', 'todo');
end
$$;


--
-- Name: seed_ticket_workflow(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.seed_ticket_workflow(p_org text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  insert into app.ticket_statuses (organization_id, status, category, is_initial) values
    (p_org, 'new', 'open', true), (p_org, 'open', 'open', false), (p_org, 'pending', 'pending', false),
    (p_org, 'on_hold', 'pending', false), (p_org, 'solved', 'solved', false), (p_org, 'closed', 'closed', false);
  insert into app.ticket_transitions (organization_id, name, from_status, to_status, requires_resolution)
  select p_org, t.name, t.from_status, t.to_status, t.name = 'resolve'
    from (values ('open', 'new', 'open'), ('open', 'pending', 'open'), ('open', 'on_hold', 'open'),
                 ('pend', 'new', 'pending'), ('pend', 'open', 'pending'), ('pend', 'on_hold', 'pending'),
                 ('hold', 'new', 'on_hold'), ('hold', 'open', 'on_hold'), ('hold', 'pending', 'on_hold'),
                 ('resolve', 'new', 'solved'), ('resolve', 'open', 'solved'), ('resolve', 'pending', 'solved'), ('resolve', 'on_hold', 'solved'),
                 ('reopen', 'solved', 'open'), ('close', 'solved', 'closed')) t (name, from_status, to_status);
end
$$;


--
-- Name: set_context(text, text, text[], text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.set_context(p_org text, p_client text, p_roles text[], p_flags text DEFAULT NULL::text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER PARALLEL RESTRICTED
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_client text := coalesce(p_client, '');
  v_roles text := coalesce(array_to_string(p_roles, ','), '');
  v_flags text := p_flags;
  v_scope text;
begin
  if p_org is not null and v_flags is null then
    v_scope := set_config('svc.gate_organization', p_org, true);
    select app_private.read_flags(p_roles, o.ticket_module_enabled, o.finance_may_read_tickets, o.hr_may_read_tickets,
                                  o.hr_may_read_time_entries)
      into v_flags from app.organizations o where o.id = p_org;
    v_scope := set_config('svc.gate_organization', '', true);
  end if;
  v_flags := coalesce(v_flags, '');
  perform set_config('svc.organization_id', coalesce(p_org, ''), true),
          set_config('svc.client_id', v_client, true),
          set_config('svc.roles', v_roles, true),
          set_config('svc.read_flags', v_flags, true),
          -- The signature covers exactly the strings stored, as context_ok() reads them back.
          set_config('svc.context_mac', case when p_org is null then '' else app_private.context_mac(p_org, v_client, v_roles, v_flags) end, true);
end
$$;


--
-- Name: FUNCTION set_context(p_org text, p_client text, p_roles text[], p_flags text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.set_context(p_org text, p_client text, p_roles text[], p_flags text) IS 'Sets the transaction-local request context (svc.organization_id, svc.client_id, svc.roles, svc.read_flags) with its signature svc.context_mac, or clears it when the organization is null; without read flags given, it computes them from that organization''s ticket and time-entry settings for those Roles. Its callers run their standing checks first: api.begin_request, the worker''s delivery and job contexts, the beginnings of capability links. It runs as svc_gate because only svc_gate reads the signing key and, scoped by svc.gate_organization to the organization being set, its settings; svc_runtime may not execute it, so a runtime session gets a context only through api.begin_request.';


--
-- Name: shard_groups_unprepared(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.shard_groups_unprepared() RETURNS integer
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    return 0;
  end if;
  if not exists (select from pg_dist_partition where logicalrelid = 'app.organizations'::regclass) then
    return 0;
  end if;
  return (select count(*)::integer
            from pg_dist_shard s join pg_dist_placement p using (shardid)
           where s.logicalrelid = 'app.organizations'::regclass
             and p.groupid = (select groupid from pg_dist_local_group)
             and app_private.current_shard_views(s.shardid) is null);
end
$$;


--
-- Name: shard_views_create(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.shard_views_create(p_organizations_shard text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_shard bigint := substring(p_organizations_shard from '_(\d+)$')::bigint;
  v_schema text := 'api_shard_' || v_shard;
  v_generation bigint;
  v record;
  g record;
  v_names text[] := '{}';
begin
  -- Local objects of this node: Citus is not to send them anywhere.
  perform set_config('citus.enable_ddl_propagation', 'off', true);
  perform set_config('svc.making_shard_views', 'on', true);
  -- After every change in flight (each holds the lock shared until it ends; a change committed
  -- meanwhile leaves these copies behind its generation), and not forever: a refresh in the same
  -- migration as a change would wait for itself.
  perform set_config('lock_timeout', '10s', true);
  perform pg_advisory_xact_lock(2026, 37);
  v_generation := pg_sequence_last_value('app_private.shard_views_generation'::regclass);
  execute format('drop schema if exists %I cascade', v_schema);
  execute format('create schema %I', v_schema);
  execute format('grant usage on schema %I to svc_api', v_schema);
  -- Each copy is given to svc_api, the api views' owner, which PostgreSQL allows a role that is not a
  -- superuser only when the new owner may create in the schema: while the copies are made.
  execute format('grant create on schema %I to svc_api', v_schema);
  for v in
    select c.oid, c.relname, c.reloptions, c.relacl, c.relowner
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = 'api' and c.relkind = 'v'
     order by c.relname
  loop
    execute format('create view %I.%I%s as select * from (%s) v where app_private.shard_views_current(%s, %s)', v_schema, v.relname,
      case when v.reloptions is null then '' else format(' with (%s)', array_to_string(v.reloptions, ', ')) end,
      app_private.view_on_shard_group(v.oid, v_shard), v_generation, v_shard);
    execute format('alter view %I.%I owner to svc_api', v_schema, v.relname);
    -- The api view's grants, and the schema to whoever has one.
    execute format('revoke all on %I.%I from public', v_schema, v.relname);
    for g in
      select case e.grantee when 0 then 'public' else quote_ident(pg_get_userbyid(e.grantee)) end as grantee,
             string_agg(e.privilege_type, ', ') as privileges
        from aclexplode(v.relacl) e where e.grantee <> v.relowner group by e.grantee
    loop
      execute format('grant %s on %I.%I to %s', g.privileges, v_schema, v.relname, g.grantee);
      execute format('grant usage on schema %I to %s', v_schema, g.grantee);
    end loop;
    v_names := v_names || v.relname::text;
  end loop;
  execute format('create view %I.%I as select from %s where false', v_schema, '?views',
    (select string_agg(format('%I.%I', v_schema, x), ', ') from unnest(v_names) x));
  execute format('comment on view %I.%I is %L', v_schema, '?views', v_generation || ':' || array_to_string(v_names, '|'));
  execute format('revoke create on schema %I from svc_api', v_schema);
  perform set_config('svc.making_shard_views', 'off', true);
end
$_$;


--
-- Name: shard_views_current(bigint, bigint); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.shard_views_current(p_generation bigint, p_shard bigint) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if pg_sequence_last_value('app_private.shard_views_generation'::regclass) is distinct from p_generation then
    perform app_private.raise('SV500', 'SHARD_VIEWS_STALE', 'this copy of an api view is older than the view');
  end if;
  if not exists (select from pg_dist_placement p join pg_dist_local_group l on l.groupid = p.groupid where p.shardid = p_shard) then
    perform app_private.raise('SV500', 'SHARD_VIEWS_ELSEWHERE', 'this copy of an api view reads a shard group that this node does not hold');
  end if;
  return true;
end
$$;


--
-- Name: FUNCTION shard_views_current(p_generation bigint, p_shard bigint); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.shard_views_current(p_generation bigint, p_shard bigint) IS 'The gate in every copy of an api view on a Citus worker (schema api_shard_<shard>), evaluated once per statement: it raises SV500 SHARD_VIEWS_STALE unless the node''s shard-view generation is still the one the copy was made at, and SV500 SHARD_VIEWS_ELSEWHERE unless the node holds the copy''s shard group, so a copy older than its view, or one left on a node its group moved from, is never read, whoever names it; the API then sends its statement through api.in_organization, which reads the view function where the group is. It runs as svc_api, which is granted the generation sequence and svc_runtime is not; it reads no tenant row.';


--
-- Name: shard_views_drop(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.shard_views_drop() RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  s record;
begin
  perform set_config('citus.enable_ddl_propagation', 'off', true);
  for s in select nspname from pg_namespace where nspname like 'api\_shard\_%' loop
    execute format('drop schema %I cascade', s.nspname);
  end loop;
end
$$;


--
-- Name: skill_blocker(text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.skill_blocker(p_skill text, p_subject_member_id text) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  k app_private.agent_skills;
  v_level text;
  v_ready jsonb;
begin
  select * into k from app_private.agent_skills x where x.name = p_skill;
  select c.license_level into v_level from app.api_clients c where c.organization_id = v__organization_id and c.id = app.current_client_id();
  if k.license_level = 'manager' and v_level is distinct from 'manager' then
    return jsonb_build_object('code', 'LICENSE_LEVEL_REQUIRED', 'skill', p_skill,
      'message', format('the skill %s needs a Manager-level license', p_skill));
  end if;
  if not (k.required_roles && app.current_roles()) then
    return jsonb_build_object('code', 'ROLE_REQUIRED', 'skill', p_skill,
      'message', format('the skill %s needs one of the Roles %s', p_skill, array_to_string(k.required_roles, ', ')));
  end if;
  if p_subject_member_id is not null and k.subject_dependent and not k.supports_subject then
    return jsonb_build_object('code', 'SUBJECT_NOT_SUPPORTED', 'skill', p_skill,
      'message', format('the skill %s does not act for a subject', p_skill));
  end if;
  if k.capability is not null then
    v_ready := api.integration_readiness(k.capability);
    if not (v_ready ->> 'ready')::boolean then
      return jsonb_build_object('code', 'INTEGRATION_CONNECTION_NOT_READY', 'skill', p_skill,
        'message', format('the skill %s needs a ready organization connection offering %s: %s', p_skill, k.capability,
                          v_ready -> 'blockers' -> 0 ->> 'message'));
    end if;
  end if;
  return null;
end
$$;


--
-- Name: FUNCTION skill_blocker(p_skill text, p_subject_member_id text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.skill_blocker(p_skill text, p_subject_member_id text) IS 'Whether the calling client may use skill p_skill now: null, or the first blocker of LICENSE_LEVEL_REQUIRED (a manager-level skill needs a Manager-level licence), ROLE_REQUIRED (any one of the skill''s Roles, as for an operation), SUBJECT_NOT_SUPPORTED and INTEGRATION_CONNECTION_NOT_READY (api.integration_readiness for the skill''s capability). It runs as svc_api, for the api commands and for the worker''s tool calls made under the run''s client''s signed context, because svc_runtime may not read the skill catalogue or the client''s licence level; the client row is read in the request''s organization under svc_api''s policies.';


--
-- Name: statement_on_shards(text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.statement_on_shards(p_organization_id text, p_statement text) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_schema text;
  v_marker text;
  v_generation regclass;
begin
  -- Separate tests: an expression that names pg_dist_partition cannot be planned without Citus.
  if strpos(p_statement, '()') = 0 or to_regclass('pg_catalog.pg_dist_partition') is null then
    return p_statement;
  end if;
  v_generation := to_regclass('app_private.shard_views_generation');
  if v_generation is null
     or not exists (select from pg_dist_partition where logicalrelid = 'app.organizations'::regclass) then
    return p_statement;
  end if;
  v_schema := 'api_shard_' || get_shard_id_for_distribution_column('app.organizations', p_organization_id);
  select d.description into v_marker
    from pg_class c
    join pg_description d on d.objoid = c.oid and d.classoid = 'pg_class'::regclass and d.objsubid = 0
   where c.relname = '?views' and c.relnamespace = to_regnamespace(v_schema);
  if v_marker is null or split_part(v_marker, ':', 1)::bigint is distinct from pg_sequence_last_value(v_generation) then
    return p_statement;
  end if;
  return regexp_replace(p_statement, '(^|[^\w."])api\.(' || split_part(v_marker, ':', 2) || ')\(\)', '\1' || v_schema || '.\2', 'g');
end
$$;


--
-- Name: FUNCTION statement_on_shards(p_organization_id text, p_statement text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.statement_on_shards(p_organization_id text, p_statement text) IS 'On a Citus worker, rewrites a request''s statement so that each api.<view>() it reads becomes the organization''s shard group''s copy api_shard_<shard>.<view> when this node''s copies are at its current generation, so a list''s filters, order and limit reach the shard''s indexes; otherwise, and always without Citus, it returns the statement unchanged. It is text only: both forms read the same rows under the same policies, as the caller. It runs as svc_api only because Citus tells which shard holds an organization only to a role that may read app.organizations.';


--
-- Name: task_archive_blockers(text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.task_archive_blockers(p_org text, p_task_id text) RETURNS text[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return (select coalesce(array_agg(t.id order by t.id), array[]::text[])
            from app.task_dependencies d
            join app.tasks t on t.organization_id = d.organization_id and t.id = d.task_id
            join app.task_workflow_statuses s on s.organization_id = t.organization_id and s.workflow_id = t.workflow_id and s.status = t.status
           where d.organization_id = p_org and d.predecessor_task_id = p_task_id and t.archived_at is null and s.category = 'open');
end
$$;


--
-- Name: FUNCTION task_archive_blockers(p_org text, p_task_id text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.task_archive_blockers(p_org text, p_task_id text) IS 'The ids of unarchived tasks in an open status that have task p_task_id of p_org as a predecessor: open work still waiting on it, which blocks archiving it. A definer as svc_owner so that tg_tasks__archive_rules sees every dependent task of the organization whoever writes; each statement names p_org, and svc_owner''s policy keeps a request to its own organization.';


--
-- Name: task_not_found(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.task_not_found(p_id text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select app_private.raise('SVN04', 'TASK_NOT_FOUND', format('no task %s in your organization', p_id)) $$;


--
-- Name: tg__check_custom_fields(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg__check_custom_fields() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_old jsonb := case when tg_op = 'UPDATE' then old.custom_fields end;
  -- Roles are enforced for API requests (a request context) and for any session of the runtime role.
  v_enforce boolean := session_user = 'svc_runtime' or app.current_client_id() is not null;
begin
  if tg_op = 'UPDATE' and new.custom_fields is not distinct from old.custom_fields then
    return new;
  end if;
  perform app_private.raise_errors(app_private.custom_field_errors(
    new.organization_id, tg_argv[0], v_old, new.custom_fields,
    case when v_enforce then app.current_roles() end, tg_op = 'INSERT'));
  -- null clears: nothing stores a null value.
  new.custom_fields := jsonb_strip_nulls(new.custom_fields);
  return new;
end
$$;


--
-- Name: FUNCTION tg__check_custom_fields(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg__check_custom_fields() IS 'BEFORE INSERT or UPDATE row trigger on app.projects and app.tasks (_300_check_custom_fields, its argument the object type): when custom_fields change, validates them with custom_field_errors and raises every problem at once (SVV22, or SVR04 when the first is CUSTOM_FIELD_FORBIDDEN), then strips nulls (a null clears a value). Roles apply to a request (a client in the signed context) and to any svc_runtime session, while other writers (svc-admin, migrations) are held to types and requirements; a definer as svc_owner because custom_field_errors reads the definitions the caller''s Roles hide.';


--
-- Name: tg__client_of_parent(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg__client_of_parent() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
begin
  -- On Citus the trigger fires on a shard, whose name ends in its shard id.
  case regexp_replace(tg_table_name, '_[0-9]+$', '')
    when 'run_events', 'run_tool_calls' then
      select p.client_id into new.client_id from app.runs p where p.organization_id = new.organization_id and p.id = new.run_id;
    when 'report_results' then
      select p.client_id into new.client_id from app.report_runs p where p.organization_id = new.organization_id and p.id = new.run_id;
    when 'webhook_delivery_attempts' then
      select p.client_id into new.client_id from app.webhook_deliveries p where p.organization_id = new.organization_id and p.id = new.delivery_id;
    when 'conversation_messages' then
      select p.client_id into new.client_id from app.conversations p where p.organization_id = new.organization_id and p.id = new.conversation_id;
  end case;
  return new;
end
$_$;


--
-- Name: FUNCTION tg__client_of_parent(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg__client_of_parent() IS 'BEFORE INSERT OR UPDATE OF client_id on app.run_events and app.run_tool_calls (parent app.runs), app.report_results (app.report_runs), app.webhook_delivery_attempts (app.webhook_deliveries) and app.conversation_messages (app.conversations): sets the row''s client_id to its parent''s, whatever the writer said. The policies that show these rows "with their parent" can then judge the row alone (client_id is the request''s client), as Citus requires (it refuses a policy that reads another table), and since rows never change parent the copy stays true. It runs as svc_owner to read the parent past the writer''s policies, looked up by the new row''s own organization_id under svc_owner''s policy for the request''s organization.';


--
-- Name: tg__emit_event(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg__emit_event() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_resource text := tg_argv[0];
  v_type text := v_resource || '.created';
begin
  -- Each IF branch is parsed only when it runs: the record fields differ per table.
  if tg_op = 'UPDATE' then
    if new.version = old.version then
      return null;
    end if;
    v_type := v_resource || '.updated';
    if v_resource = 'project' then
      if new.status is distinct from old.status and new.status = 'archived' then
        v_type := 'project.archived';
      elsif new.status is distinct from old.status and old.status = 'archived' then
        v_type := 'project.restored';
      end if;
    elsif v_resource = 'task' then
      if new.archived_at is not null and old.archived_at is null then
        v_type := 'task.archived';
      elsif new.archived_at is null and old.archived_at is not null then
        v_type := 'task.restored';
      elsif new.status is distinct from old.status then
        v_type := 'task.transitioned';
      end if;
    elsif v_resource = 'time_entry' then
      if new.deleted_at is not null and old.deleted_at is null then
        v_type := 'time_entry.deleted';
      elsif new.status is distinct from old.status and new.status in ('submitted', 'approved', 'rejected') then
        v_type := 'time_entry.' || new.status;
      end if;
    end if;
  end if;
  perform app_private.emit_event(new.organization_id, v_type, v_resource, new.id, new.version);
  return null;
end
$$;


--
-- Name: FUNCTION tg__emit_event(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg__emit_event() IS 'After insert or update on app.projects, app.tasks, app.time_entries and app.approvals (_950_emit_event, the argument naming the resource): emits <resource>.created or, when the version moved, <resource>.updated, or the more precise project.archived/restored, task.archived/restored/transitioned and time_entry.deleted/submitted/approved/rejected, through app_private.emit_event in the writer''s transaction. svc_owner''s definer because the writers may not write events; raises nothing.';


--
-- Name: tg__touch_version(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg__touch_version() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  new.updated_at := now();
  new.version := old.version + 1;
  return new;
end
$$;


--
-- Name: FUNCTION tg__touch_version(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg__touch_version() IS 'BEFORE UPDATE on app.organizations, members, projects, tasks, time_entries, approvals, integration_connections, webhook_endpoints and tickets: sets updated_at to now() and version to the old version plus one, whatever the update said. The version is the resource''s ETag, so every change, by any writer, makes an If-Match on the old version fail with 412 STALE_RESOURCE, and no writer can keep or choose a version.';


--
-- Name: tg_agent_definitions__skills_exist(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_agent_definitions__skills_exist() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if exists (select from unnest(new.skills || new.optional_skills) s where s not in (select k.name from app_private.agent_skills k)) then
    perform app_private.raise('SVC09', 'CONFLICT', 'an agent names only skills of the catalogue');
  end if;
  return new;
end
$$;


--
-- Name: FUNCTION tg_agent_definitions__skills_exist(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_agent_definitions__skills_exist() IS 'BEFORE INSERT OR UPDATE trigger on app_private.agent_definitions: every skill an agent names, required or optional, must be in the skill catalogue (app_private.agent_skills), which no foreign key can check on an array; otherwise SVC09 CONFLICT. So every skill a run may be offered has a function to execute and the Roles, licence level and capability that app_private.skill_blocker checks.';


--
-- Name: tg_api_clients__plan_allows_clients(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_api_clients__plan_allows_clients() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_plan text;
begin
  select plan into v_plan from app.organizations where id = new.organization_id;
  if v_plan in ('trial', 'team') and new.status <> 'deleted' and new.license_status = 'active' then
    perform app_private.raise('SVL01', 'PLAN_DOES_NOT_SUPPORT_API_CLIENTS',
      format('%s plans do not support API Clients', initcap(v_plan)));
  end if;
  return new;
end
$$;


--
-- Name: FUNCTION tg_api_clients__plan_allows_clients(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_api_clients__plan_allows_clients() IS 'BEFORE INSERT on app.api_clients: refuses a client with an active licence that is not deleted in an organization on the Trial or Team plan, raising SVL01 PLAN_DOES_NOT_SUPPORT_API_CLIENTS, because those plans do not support API Clients (spec, Authentication). It runs as svc_owner to read the organization''s plan, within the row''s organization under svc_owner''s policy.';


--
-- Name: tg_api_clients__touch(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_api_clients__touch() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  new.updated_at := now();
  if (new.svc_roles, new.status, new.license_status, new.license_level)
     is distinct from (old.svc_roles, old.status, old.license_status, old.license_level) then
    new.authorization_version := old.authorization_version + 1;
  end if;
  if old.status = 'deleted' and new.status <> 'deleted' then
    perform app_private.raise('SVC13', 'CLIENT_DELETED', 'a deleted client cannot be changed');
  end if;
  return new;
end
$$;


--
-- Name: FUNCTION tg_api_clients__touch(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_api_clients__touch() IS 'BEFORE UPDATE on app.api_clients: sets updated_at, and increments authorization_version whenever the client''s Roles, status, licence status or licence level change (the count of changes to its authorization that the spec''s per-request checks name). Deletion is final: moving a deleted client to any other status raises SVC13 CLIENT_DELETED.';


--
-- Name: tg_client_secrets__bump_client_version(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_client_secrets__bump_client_version() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  update app.api_clients set authorization_version = authorization_version + 1
   where organization_id = new.organization_id and id = new.client_id;
  return null;
end
$$;


--
-- Name: FUNCTION tg_client_secrets__bump_client_version(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_client_secrets__bump_client_version() IS 'AFTER INSERT OR UPDATE on app.client_secrets: increments the owning client''s authorization_version, since a secret added or revoked changes what authenticates as that client. It runs as svc_owner and updates the client by the secret''s organization and client id, so it touches that one client, under svc_owner''s policy (the request''s organization, or any in the control plane''s operator session).';


--
-- Name: tg_conversation_messages__append(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_conversation_messages__append() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  c app.conversations;
begin
  if tg_op <> 'INSERT' then
    perform app_private.raise('SVC09', 'CONFLICT', 'conversation messages are kept as written, for audit');
  end if;
  select * into c from app.conversations x where x.organization_id = new.organization_id and x.id = new.conversation_id for update;
  if new.role = 'user' and c.status = 'archived' then
    perform app_private.raise('SVC09', 'CONVERSATION_ARCHIVED', 'the conversation is archived; start a new one');
  end if;
  if new.seq <> c.message_count + 1 then
    perform app_private.raise('SVC09', 'CONFLICT', 'messages are appended in order');
  end if;
  update app.conversations x set message_count = new.seq, last_activity_at = now()
   where x.organization_id = new.organization_id and x.id = new.conversation_id;
  return new;
end
$$;


--
-- Name: FUNCTION tg_conversation_messages__append(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_conversation_messages__append() IS 'BEFORE INSERT, UPDATE or DELETE row trigger on app.conversation_messages (_100_append): messages are kept as written, for audit (an update or delete is SVC09 CONFLICT); an insert locks its conversation, is refused as a user message to an archived conversation (SVC09 CONVERSATION_ARCHIVED; a run''s reply still lands), must take seq message_count + 1 (SVC09 CONFLICT: messages are appended in order), and advances the conversation''s message_count and last_activity_at. It runs as the writer (svc_api in a request, svc_owner for a reply), so every writer is held to it.';


--
-- Name: tg_conversation_messages__emit(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_conversation_messages__emit() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.emit_event(new.organization_id, 'conversation.message.created', 'conversation_message', new.id, new.seq);
  return null;
end
$$;


--
-- Name: FUNCTION tg_conversation_messages__emit(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_conversation_messages__emit() IS 'AFTER INSERT row trigger on app.conversation_messages (_950_emit_event): records a conversation.message.created event for every message, the client''s and the assistant''s, in the writer''s transaction (the outbox the webhooks are fanned out from). A definer as svc_owner because svc_api may neither execute app_private.emit_event nor write app.events; the event names the message''s own organization.';


--
-- Name: tg_conversations__lifecycle(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_conversations__lifecycle() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if tg_op = 'INSERT' then
    if new.status <> 'active' then
      perform app_private.raise('SVC09', 'CONFLICT', 'a conversation starts active');
    end if;
    return new;
  end if;
  if (new.organization_id, new.id, new.client_id, new.subject_member_id, new.created_at)
     is distinct from (old.organization_id, old.id, old.client_id, old.subject_member_id, old.created_at) then
    perform app_private.raise('SVC09', 'CONFLICT', 'a conversation''s client and subject are fixed for its life');
  end if;
  if old.status = 'archived' and new.status <> 'archived' then
    perform app_private.raise('SVC09', 'CONVERSATION_ARCHIVED', 'an archived conversation stays archived');
  end if;
  if new.message_count < old.message_count or new.context_from_seq < old.context_from_seq or new.context_from_seq > new.message_count then
    perform app_private.raise('SVC09', 'CONFLICT', 'history only grows, and the working context only moves forward');
  end if;
  new.updated_at := now();
  return new;
end
$$;


--
-- Name: FUNCTION tg_conversations__lifecycle(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_conversations__lifecycle() IS 'BEFORE INSERT or UPDATE row trigger on app.conversations (_100_lifecycle): a conversation starts active; its organization, id, client, subject and created_at never change (the spec fixes the subject for the conversation); history only grows and the working context only moves forward, never past the last message (each SVC09 CONFLICT); an archived conversation stays archived (SVC09 CONVERSATION_ARCHIVED). It also stamps updated_at, for every writer.';


--
-- Name: tg_custom_field_definitions__bump_schema_version(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_custom_field_definitions__bump_schema_version() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  r record := coalesce(new, old);
begin
  update app.object_schemas set schema_version = schema_version + 1
   where organization_id = r.organization_id and object_type = r.object_type;
  return null;
end
$$;


--
-- Name: FUNCTION tg_custom_field_definitions__bump_schema_version(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_custom_field_definitions__bump_schema_version() IS 'AFTER INSERT, UPDATE or DELETE row trigger on app.custom_field_definitions (_900_bump_schema_version): every change of a field definition increments its object type''s schema_version in app.object_schemas, so a client that sends an older Svc-Schema-Version learns that its schema copy is stale (SVC14 OBJECT_SCHEMA_CHANGED, from app_private.check_schema_version). It runs as the writer, svc-admin''s field commands.';


--
-- Name: tg_file_bytes__of_parent(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_file_bytes__of_parent() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
begin
  -- On Citus the trigger fires on a shard, whose name ends in its shard id.
  if regexp_replace(tg_table_name, '_[0-9]+$', '') = 'file_contents' then
    select f.linked_resource_type into new.linked_resource_type
      from app.files f where f.organization_id = new.organization_id and f.id = new.file_id;
  else
    select u.linked_resource_type, u.created_by_client_id into new.linked_resource_type, new.client_id
      from app.file_uploads u where u.organization_id = new.organization_id and u.id = new.upload_id;
  end if;
  return new;
end
$_$;


--
-- Name: FUNCTION tg_file_bytes__of_parent(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_file_bytes__of_parent() IS 'BEFORE INSERT trigger on app.file_chunks and app.file_contents: copies from the parent row, whatever the insert said, the linked resource type (of the chunk''s upload, or of the content''s file) and, for a chunk, the upload''s creating client. The row policies on the bytes then judge the row alone (on Citus a policy may not read another table), and the copy stays true because bytes never change parent; it runs as svc_owner to read the parent past the caller''s policies, by the row''s own organization.';


--
-- Name: tg_file_chunks__guard(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_file_chunks__guard() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_status text;
  v_chunk_size integer;
  v_file_status text;
begin
  if tg_op = 'UPDATE' then
    perform app_private.raise('SVC09', 'CONFLICT', 'stored file content never changes');
  end if;
  if tg_op = 'INSERT' then
    select u.status, u.chunk_size into v_status, v_chunk_size from app.file_uploads u where u.organization_id = new.organization_id and u.id = new.upload_id;
    if v_status is distinct from 'pending' then
      perform app_private.raise('SVC09', 'CONFLICT', 'bytes are accepted only while the upload is pending');
    end if;
    if length(new.data) > v_chunk_size then
      perform app_private.raise('SVC09', 'CONFLICT', 'a chunk is at most the upload''s chunk size');
    end if;
    return new;
  end if;
  select f.status into v_file_status from app.files f where f.organization_id = old.organization_id and f.upload_id = old.upload_id;
  if v_file_status is not null and v_file_status <> 'rejected' then
    perform app_private.raise('SVC09', 'CONFLICT', 'the bytes of a file are kept as long as the file');
  end if;
  return old;
end
$$;


--
-- Name: FUNCTION tg_file_chunks__guard(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_file_chunks__guard() IS 'BEFORE INSERT, UPDATE or DELETE trigger on app.file_chunks: bytes are accepted only while their upload is pending and each chunk is at most the upload''s chunk size, never change, and are deleted only with an upload that made no file or from a rejected file (the purge of infected content); each refusal is SVC09 CONFLICT. It holds for every writer, so a file''s bytes are exactly those that were verified.';


--
-- Name: tg_file_contents__check(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_file_contents__check() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  f app.files;
begin
  if tg_op <> 'INSERT' then
    perform app_private.raise('SVC09', 'CONFLICT', 'stored file content never changes');
  end if;
  select * into f from app.files x where x.organization_id = new.organization_id and x.id = new.file_id;
  if f.size_bytes <> length(new.content) or f.sha256 <> encode(sha256(new.content), 'hex') then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'the content does not match the file''s size and checksum');
  end if;
  return new;
end
$$;


--
-- Name: FUNCTION tg_file_contents__check(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_file_contents__check() IS 'BEFORE INSERT, UPDATE or DELETE trigger on app.file_contents: stored content is only inserted, never changed or deleted (SVC09 CONFLICT), and must match its file''s recorded size and SHA-256 (SVV22 VALIDATION_FAILED), so a file''s record always describes its content. It runs as svc_owner to read the file row by the content''s own organization.';


--
-- Name: tg_file_uploads__lifecycle(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_file_uploads__lifecycle() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if tg_op = 'INSERT' then
    if new.status <> 'pending' then
      perform app_private.raise('SVC09', 'CONFLICT', 'an upload starts pending');
    end if;
    return new;
  end if;
  if tg_op = 'DELETE' then
    if old.status = 'completed' then
      perform app_private.raise('SVC09', 'CONFLICT', format('upload %s made a file; it is kept', old.id));
    end if;
    return old;
  end if;
  if (new.organization_id, new.id, new.name, new.content_type, new.size_bytes, new.sha256, new.linked_resource_type,
      new.linked_resource_id, new.chunk_size, new.created_by_client_id, new.expires_at, new.created_at)
     is distinct from
     (old.organization_id, old.id, old.name, old.content_type, old.size_bytes, old.sha256, old.linked_resource_type,
      old.linked_resource_id, old.chunk_size, old.created_by_client_id, old.expires_at, old.created_at) then
    perform app_private.raise('SVC09', 'CONFLICT', 'an upload''s declaration never changes');
  end if;
  if new.status = old.status and new.status <> 'pending' and (new.received_size_bytes, new.received_sha256, new.file_id)
     is distinct from (old.received_size_bytes, old.received_sha256, old.file_id) then
    perform app_private.raise('SVC09', 'CONFLICT', 'what was received is recorded once');
  end if;
  if new.status <> old.status and not ((old.status, new.status) in (('pending', 'uploaded'), ('uploaded', 'completed'))) then
    perform app_private.raise('SVC09', 'CONFLICT', format('an upload moves pending → uploaded → completed, not %s → %s', old.status, new.status));
  end if;
  if new.status = 'uploaded' and old.status = 'pending' then
    if new.received_size_bytes is distinct from
       (select coalesce(sum(length(c.data)), 0) from app.file_chunks c where c.organization_id = new.organization_id and c.upload_id = new.id) then
      perform app_private.raise('SVC09', 'CONFLICT', 'the received size must be what the chunks hold');
    end if;
    new.uploaded_at := now();
  end if;
  if new.status = 'completed' and (new.file_id is null or new.received_size_bytes <> new.size_bytes
       or new.received_sha256 <> new.sha256 or not new.content_type_verified) then
    perform app_private.raise('SVC09', 'CONFLICT', 'only verified bytes complete an upload');
  end if;
  return new;
end
$$;


--
-- Name: FUNCTION tg_file_uploads__lifecycle(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_file_uploads__lifecycle() IS 'BEFORE INSERT, UPDATE or DELETE trigger on app.file_uploads: an upload starts pending and moves only pending, uploaded, completed; its declaration (name, type, size, checksum, linked resource, chunk size, client, expiry) never changes, what was received is recorded once and must equal the bytes its chunks hold, it completes only with a file and verified bytes matching the declaration, and once it made a file it is never deleted. Every refusal is SVC09 CONFLICT, for every writer.';


--
-- Name: tg_files__emit(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_files__emit() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if new.status is distinct from old.status and new.status in ('ready', 'rejected', 'archived') then
    perform app_private.emit_event(new.organization_id, 'file.' || new.status, 'file', new.id, 1);
  end if;
  return null;
end
$$;


--
-- Name: FUNCTION tg_files__emit(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_files__emit() IS 'AFTER UPDATE trigger on app.files: when a file''s status changes to ready, rejected or archived it writes the file.ready, file.rejected or file.archived event to the outbox (app_private.emit_event) in the writer''s transaction, so subscribers hear of it only if the change commits. It runs as svc_owner because svc_api, which archives files within a request, may only read app.events.';


--
-- Name: tg_files__lifecycle(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_files__lifecycle() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_policy record;
begin
  if tg_op = 'DELETE' then
    if old.status <> 'rejected' then
      perform app_private.raise('SVC09', 'CONFLICT', format('%s: files are archived, not deleted', old.id));
    end if;
    return old;
  end if;
  if tg_op = 'INSERT' then
    -- Uploaded files start in processing (checks run); the service's own files (invoice PDFs) are ready.
    if (new.upload_id is not null and new.status <> 'processing') or (new.upload_id is null and new.status <> 'ready') then
      perform app_private.raise('SVC09', 'CONFLICT', 'an uploaded file starts processing; a file the service made starts ready');
    end if;
    if new.upload_id is not null and not exists (
         select from app.file_uploads u
          where u.organization_id = new.organization_id and u.id = new.upload_id and u.status = 'uploaded'
            and u.content_type_verified and u.received_size_bytes = new.size_bytes and u.received_sha256 = new.sha256
            and (u.name, u.content_type, u.size_bytes, u.sha256, u.linked_resource_type, u.linked_resource_id)
                = (new.name, new.content_type, new.size_bytes, new.sha256, new.linked_resource_type, new.linked_resource_id)) then
      perform app_private.raise('SVC09', 'CONFLICT', 'a file is made from an upload whose bytes were verified against its declaration');
    end if;
    new.updated_at := now();
    return new;
  end if;
  if (new.organization_id, new.id, new.name, new.content_type, new.size_bytes, new.sha256, new.linked_resource_type,
      new.linked_resource_id, new.upload_id, new.retention, new.created_by_client_id, new.created_at)
     is distinct from
     (old.organization_id, old.id, old.name, old.content_type, old.size_bytes, old.sha256, old.linked_resource_type,
      old.linked_resource_id, old.upload_id, old.retention, old.created_by_client_id, old.created_at) then
    perform app_private.raise('SVC09', 'CONFLICT', format('%s: a file''s content and identity never change', old.id));
  end if;
  if new.status is distinct from old.status then
    if old.status = 'processing' and new.status = 'ready' then
      select * into v_policy from app_private.file_policy(new.organization_id);
      if new.scan_status = 'clean' or (new.scan_status = 'not_scanned' and not v_policy.require_scan) then
        null;
      else
        perform app_private.raise('SVC09', 'CONFLICT', format('%s: a file is ready only when scanned clean (or, where no scan is required, not scanned)', old.id));
      end if;
    elsif old.status = 'processing' and new.status = 'rejected' then
      null;  -- files_rejected_has_code: a rejection says why
    elsif old.status = 'ready' and new.status = 'archived' then
      if old.retention is not null then
        perform app_private.raise('SVC09', 'RETENTION_BLOCKED', format('%s is a posted financial record: it is kept', old.id));
      elsif old.legal_hold then
        perform app_private.raise('SVC09', 'RETENTION_BLOCKED', format('%s is under a legal hold', old.id));
      elsif old.linked_resource_type = 'invoice' and exists (
              select from app.invoices i where i.organization_id = old.organization_id and i.id = old.linked_resource_id and i.status <> 'draft') then
        perform app_private.raise('SVC09', 'RETENTION_BLOCKED', format('%s is attached to a posted invoice', old.id));
      end if;
      new.archived_at := now();
    else
      perform app_private.raise('SVC09', 'CONFLICT',
        format('a file moves processing → ready or rejected, and ready → archived; not %s → %s', old.status, new.status));
    end if;
  elsif (new.scan_status, new.scan_detail, new.rejection_code, new.rejection_detail, new.archived_at)
        is distinct from (old.scan_status, old.scan_detail, old.rejection_code, old.rejection_detail, old.archived_at)
        and old.status <> 'processing' then
    perform app_private.raise('SVC09', 'CONFLICT', format('%s: the checks of a file are recorded once', old.id));
  end if;
  new.updated_at := now();
  return new;
end
$$;


--
-- Name: FUNCTION tg_files__lifecycle(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_files__lifecycle() IS 'BEFORE INSERT, UPDATE or DELETE trigger on app.files: an uploaded file starts processing and only from an uploaded upload whose verified bytes match its declaration, a file the service made starts ready; a file moves processing to ready (scanned clean, or not scanned where the organization''s file policy requires no scan) or rejected, and ready to archived; files are archived, not deleted (only rejected ones go), their content and identity never change and their checks are recorded once (SVC09 CONFLICT). Archiving is refused for a posted financial record, a file under legal hold or one attached to a posted invoice (SVC09 RETENTION_BLOCKED).';


--
-- Name: tg_files__retention(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_files__retention() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if old.retention is not null then
    if tg_op = 'UPDATE' and new.status = 'archived' and old.status <> 'archived' then
      perform app_private.raise('SVC09', 'RETENTION_BLOCKED', format('%s is a posted financial record: it is kept', old.id));
    end if;
    if tg_op = 'DELETE' or (to_jsonb(new) - '{legal_hold,updated_at}'::text[]) <> (to_jsonb(old) - '{legal_hold,updated_at}'::text[]) then
      perform app_private.raise('SVC09', 'CONFLICT', format('%s is a posted financial record: it is kept unchanged', old.id));
    end if;
  end if;
  return case when tg_op = 'DELETE' then old else new end;
end
$$;


--
-- Name: FUNCTION tg_files__retention(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_files__retention() IS 'BEFORE UPDATE or DELETE trigger on app.files, first of its triggers: a file under retention (a posted financial record, such as an issued invoice''s PDF) is never archived (SVC09 RETENTION_BLOCKED), deleted, or changed in anything but its legal hold (SVC09 CONFLICT). It reads only the row, so it runs as the writer.';


--
-- Name: tg_integration_connections__emit(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_integration_connections__emit() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if new.version <> old.version and new.ownership = 'organization' then
    perform app_private.emit_event(new.organization_id, 'integration_connection.updated', 'integration_connection', new.id, new.version);
  end if;
  return null;
end
$$;


--
-- Name: FUNCTION tg_integration_connections__emit(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_integration_connections__emit() IS 'After update on app.integration_connections (_950_emit_event): emits integration_connection.updated into the outbox, in the writer''s transaction, when the version moved and the connection is organization-owned; a personal connection is never visible to API Clients, so its changes emit nothing. Raises nothing.';


--
-- Name: tg_invoice_lines__compute(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_invoice_lines__compute() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  i app.invoices;
begin
  if tg_op = 'UPDATE' and (new.invoice_id, new.organization_id) is distinct from (old.invoice_id, old.organization_id) then
    perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', 'a line stays on its invoice');
  end if;
  select * into i from app.invoices
   where id = coalesce(new.invoice_id, old.invoice_id) and organization_id = coalesce(new.organization_id, old.organization_id);
  if not found then
    perform app_private.invoice_not_found(coalesce(new.invoice_id, old.invoice_id));
  end if;
  if i.status <> 'draft' then
    perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', format('a %s invoice''s lines cannot change', i.status));
  end if;
  if tg_op = 'DELETE' then
    return old;
  end if;
  if scale(new.unit_price) > i.scale then
    perform app_private.raise('SVV22', 'INVALID_INVOICE_LINE',
      format('unit_price has more decimals than %s has minor units (%s)', i.currency, i.scale),
      format('/lines/%s/unit_price', new.position));
  end if;
  new.amount := round(new.quantity * new.unit_price, i.scale);
  new.tax_amount := round(new.amount * new.tax_rate / 100, i.scale);
  return new;
end
$$;


--
-- Name: FUNCTION tg_invoice_lines__compute(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_invoice_lines__compute() IS 'Before insert, update or delete on app.invoice_lines (_100_compute): a line''s amount is round(quantity * unit_price) and its tax_amount round(amount * tax_rate / 100), both at the currency''s minor units, computed by the database and never taken from the writer, and a unit_price with more decimals than the currency has is refused (SVV22 INVALID_INVOICE_LINE). Lines change only on a draft and never move to another invoice (SVC09 INVOICE_NOT_EDITABLE), the invoice being looked up within the line''s organization (SVN04 INVOICE_NOT_FOUND).';


--
-- Name: tg_invoice_lines__totals_changed(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_invoice_lines__totals_changed() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_orgs text[];
  v_invoices text[];
begin
  -- Each branch names its own trigger's transition tables (a branch is planned only when it runs).
  if tg_op = 'INSERT' then
    select array_agg(x.organization_id), array_agg(x.invoice_id) into v_orgs, v_invoices
      from (select distinct n.organization_id, n.invoice_id from inserted_lines n) x;
  elsif tg_op = 'DELETE' then
    select array_agg(x.organization_id), array_agg(x.invoice_id) into v_orgs, v_invoices
      from (select distinct o.organization_id, o.invoice_id from deleted_lines o) x;
  else
    select array_agg(x.organization_id), array_agg(x.invoice_id) into v_orgs, v_invoices
      from (select o.organization_id, o.invoice_id from old_lines o union select n.organization_id, n.invoice_id from new_lines n) x;
  end if;
  perform app_private.invoice_recompute_totals(v_orgs, v_invoices);
  return null;
end
$$;


--
-- Name: FUNCTION tg_invoice_lines__totals_changed(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_invoice_lines__totals_changed() IS 'After each insert, update or delete statement on app.invoice_lines (_900_totals_inserted, _900_totals_updated, _900_totals_deleted): collects the (organization, invoice) pairs of the changed lines from the transition tables and has app_private.invoice_recompute_totals set their totals, once per statement rather than once per line. Raises nothing itself.';


--
-- Name: tg_invoices__emit(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_invoices__emit() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if tg_op = 'INSERT' then
    perform app_private.emit_event(new.organization_id, 'invoice.created', 'invoice', new.id, new.version);
  elsif new.version <> old.version or new.status <> old.status then
    perform app_private.emit_event(new.organization_id,
      case when new.status = old.status then 'invoice.updated'
           when new.status = 'sent' then 'invoice.sent'
           when new.status = 'paid' then 'invoice.paid'
           when new.status = 'void' then 'invoice.voided'
           else 'invoice.updated' end,
      'invoice', new.id, new.version);
  end if;
  return null;
end
$$;


--
-- Name: FUNCTION tg_invoices__emit(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_invoices__emit() IS 'After insert or update on app.invoices (_950_emit_event): emits into the outbox, in the writer''s transaction, invoice.created for a new invoice and, when the version or status moved, invoice.sent, invoice.paid or invoice.voided for those status changes, else invoice.updated. Raises nothing.';


--
-- Name: tg_invoices__guard(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_invoices__guard() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if tg_op = 'DELETE' then
    if old.status <> 'draft' then
      perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', 'issued invoices are never deleted');
    end if;
    return old;
  end if;
  new.scale := (select c.minor_units from app_private.currencies c where c.code = new.currency);
  if tg_op = 'INSERT' then
    -- Every invoice starts as a draft with nothing on it, whoever writes it; the API Client that
    -- creates it is the one in the request context, never a value it supplies.
    if new.status <> 'draft' or new.number is not null then
      perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'invoices are created as drafts', '/status');
    end if;
    new.subtotal := 0;
    new.tax_total := 0;
    new.total := 0;
    new.amount_paid := 0;
    new.sent_at := null;
    new.pdf_file_id := null;
    new.sync_connection_id := null;
    new.sync_status := null;
    new.sync_external_reference := null;
    new.sync_error := null;
    new.synced_at := null;
    new.created_by_client_id := coalesce(app.current_client_id(), new.created_by_client_id);
  end if;
  if (tg_op = 'INSERT' or new.customer_id is distinct from old.customer_id)
     and not exists (select from app.customers c where c.organization_id = new.organization_id and c.id = new.customer_id and c.kind = 'billing') then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'customer_id must name a billing customer (cus_) of your organization', '/customer_id');
  end if;
  if tg_op = 'UPDATE' and old.status <> 'draft'
     and (new.customer_id, new.currency, new.issue_date, new.due_date, new.memo, new.subtotal, new.tax_total, new.total)
         is distinct from (old.customer_id, old.currency, old.issue_date, old.due_date, old.memo, old.subtotal, old.tax_total, old.total) then
    perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', format('a %s invoice cannot be changed', old.status));
  end if;
  if tg_op = 'UPDATE' and new.currency <> old.currency and exists (select from app.invoice_lines l where l.organization_id = new.organization_id and l.invoice_id = new.id) then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'the currency of an invoice with lines cannot change', '/currency');
  end if;
  return new;
end
$$;


--
-- Name: FUNCTION tg_invoices__guard(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_invoices__guard() IS 'Before insert, update or delete on app.invoices (_050_guard), for every writer: only a draft is deleted and an issued invoice''s customer, currency, dates, memo and totals never change (SVC09 INVOICE_NOT_EDITABLE); a new invoice is an empty draft without a number (SVV22 VALIDATION_FAILED otherwise) whose totals, payments, sending, PDF and sync fields are reset and whose creating client is the request''s when there is one. It also sets the scale from the currency''s minor units, requires a billing customer of the invoice''s organization, and refuses a currency change once the invoice has lines (SVV22 VALIDATION_FAILED), since their amounts are rounded to the old currency.';


--
-- Name: tg_invoices__lifecycle(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_invoices__lifecycle() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  o app.organizations;
  c app.integration_connections;
  v_number bigint;
begin
  -- What issuing fixes stays fixed, whatever else the statement changes (a void or a payment too).
  if old.status <> 'draft' then
    if new.number is distinct from old.number or new.sent_at is distinct from old.sent_at then
      perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', 'an issued invoice keeps its number and date');
    end if;
    if old.pdf_file_id is not null and new.pdf_file_id is distinct from old.pdf_file_id then
      perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', 'an issued invoice keeps its PDF');
    end if;
  elsif new.status = 'draft' and (new.number, new.sent_at, new.pdf_file_id, new.sync_status) is distinct from (null, null, null, null) then
    perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', 'a draft has no number, PDF or sync; sending it makes them');
  end if;
  if new.status = old.status then
    return new;
  end if;
  if (old.status, new.status) not in (('draft', 'sent'), ('sent', 'paid'), ('sent', 'void')) then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', format('an invoice does not go from %s to %s', old.status, new.status));
  end if;
  if new.status = 'void' and new.amount_paid > 0 then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', 'an invoice with recorded payments cannot be voided');
  end if;
  if new.status = 'void' and old.sync_status = 'pending' then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED',
      'the invoice is being synchronized to the accounting provider; void it once the sync has finished');
  end if;
  if new.status <> 'sent' then
    return new;
  end if;

  -- Issuing.
  if exists (select from app.customers x where x.organization_id = new.organization_id and x.id = new.customer_id and x.deleted_at is not null) then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', format('the customer %s was deleted; choose another customer', new.customer_id));
  end if;
  if not exists (select from app.invoice_lines l where l.organization_id = new.organization_id and l.invoice_id = new.id) then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', 'an invoice without lines has nothing to bill; add lines first');
  end if;
  if new.total <= 0 then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', 'an invoice whose total is zero has nothing to bill');
  end if;
  select * into o from app.organizations x where x.id = new.organization_id;
  c := app_private.accounting_connection(new.organization_id);
  if o.invoices_require_accounting_connection and not app_private.accounting_ready(c) then
    perform app_private.accounting_not_ready(c, 'send invoices');
  end if;
  new.issue_date := coalesce(new.issue_date, (now() at time zone o.timezone)::date);
  new.due_date := coalesce(new.due_date, new.issue_date + o.invoice_payment_terms_days);
  if new.due_date < new.issue_date then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED',
      format('the due date %s is before the issue date %s; update the draft first', new.due_date, new.issue_date));
  end if;
  insert into app_private.invoice_number_counters as n (organization_id, last_number) values (new.organization_id, 1)
  on conflict (organization_id) do update set last_number = n.last_number + 1
  returning n.last_number into v_number;
  new.number := o.invoice_number_prefix || lpad(v_number::text, greatest(6, length(v_number::text)), '0');
  new.sent_at := now();
  if app_private.accounting_ready(c) then
    new.sync_connection_id := c.id;
    new.sync_status := 'pending';
  end if;
  return new;
end
$$;


--
-- Name: FUNCTION tg_invoices__lifecycle(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_invoices__lifecycle() IS 'Before update on app.invoices (_060_lifecycle), for every writer: the only status moves are draft to sent, sent to paid and sent to void (never back to draft); a void has no payments and no sync in flight, and issuing needs a customer that is not deleted, lines, a positive total and a due date not before the issue date (SVC09 WORKFLOW_BLOCKED), and a ready accounting connection when the organization requires one (SVC09 ACCOUNTING_CONNECTION_NOT_READY). Issuing takes the organization''s next gapless number from app_private.invoice_number_counters, sets sent_at, the issue date (today in the organization''s time zone) and due date (payment terms) when missing, and marks the accounting sync pending when a connection is ready; what issuing fixed (number, sent_at, PDF) never changes, and a draft has no number, PDF or sync (SVC09 INVOICE_NOT_EDITABLE).';


--
-- Name: tg_invoices__pdf_required(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_invoices__pdf_required() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if exists (select from app.invoices x where x.organization_id = new.organization_id and x.id = new.id and x.status <> 'draft' and x.pdf_file_id is null) then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', format('%s cannot be issued without its PDF; sendInvoice makes it', new.id));
  end if;
  return null;
end
$$;


--
-- Name: FUNCTION tg_invoices__pdf_required(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_invoices__pdf_required() IS 'Deferred constraint trigger after update on app.invoices (_990_pdf_required), when an invoice leaves draft: at commit the invoice must have its PDF (pdf_file_id), else SVC09 WORKFLOW_BLOCKED. "PDF generated" is part of issuing in the spec, and checking at commit lets the PDF be made after the number is known, in the same transaction.';


--
-- Name: tg_invoices__queue_sync(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_invoices__queue_sync() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if new.sync_status = 'pending' and old.sync_status is distinct from 'pending' then
    perform app_private.queue_job(new.organization_id, 'accounting_sync',
      json_build_object('invoice_id', new.id, 'action', case when new.status = 'void' then 'void' else 'export' end),
      'accounting_sync:' || new.id, 8);
  end if;
  return null;
end
$$;


--
-- Name: FUNCTION tg_invoices__queue_sync(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_invoices__queue_sync() IS 'After update on app.invoices (_900_queue_sync): when sync_status becomes pending (issuing with a ready accounting connection, or voiding a synchronized invoice), queues the accounting_sync job (export, or void for a void invoice; one job key per invoice) through app_private.queue_job in the same transaction, so the job exists exactly when the write commits. Raises nothing itself.';


--
-- Name: tg_invoices__touch(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_invoices__touch() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  new.updated_at := now();
  new.version := case when old.xmin = pg_current_xact_id()::xid then old.version else old.version + 1 end;
  return new;
end
$$;


--
-- Name: FUNCTION tg_invoices__touch(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_invoices__touch() IS 'Before update on app.invoices (_100_touch_version): sets updated_at and moves the version once per transaction, so whatever one command writes (fields, lines, totals, a payment, a status) is one new version (ETag), and a second write of the row in the same transaction keeps it. Raises nothing; runs as the writer (it touches only the row).';


--
-- Name: tg_organizations__publish_agents(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_organizations__publish_agents() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  insert into app.agent_publications (organization_id, agent_id, status)
  select new.id, d.id, 'published' from app_private.agent_definitions d
  on conflict do nothing;
  return null;
end
$$;


--
-- Name: FUNCTION tg_organizations__publish_agents(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_organizations__publish_agents() IS 'AFTER INSERT trigger on app.organizations: a new organization starts with every agent of the catalogue published (app.agent_publications; rows already there are kept). It runs as svc_owner, the owner of every trigger, under its policy: organizations are created in an operator session (svc-admin, migrations), where that policy admits the new organization''s rows.';


--
-- Name: tg_organizations__seed_schemas(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_organizations__seed_schemas() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  insert into app.object_schemas (organization_id, object_type, label)
  values (new.id, 'project', 'Project'), (new.id, 'task', 'Task');
  return null;
end
$$;


--
-- Name: FUNCTION tg_organizations__seed_schemas(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_organizations__seed_schemas() IS 'AFTER INSERT on app.organizations: creates the new organization''s object schemas for project and task in app.object_schemas, which its custom-field definitions belong to and the schema endpoints list. It runs as the inserting role (the control plane), under the policy "Commands act in the request''s organization" on app.object_schemas.';


--
-- Name: tg_organizations__seed_task_workflow(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_organizations__seed_task_workflow() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.seed_default_task_workflow(new.id);
  return null;
end
$$;


--
-- Name: FUNCTION tg_organizations__seed_task_workflow(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_organizations__seed_task_workflow() IS 'AFTER INSERT row trigger on app.organizations (_810_seed_task_workflow): gives every new organization its default task workflow (app_private.seed_default_task_workflow): todo (initial), in_progress, blocked, done and cancelled, with the transitions start, block, unblock, complete, cancel and reopen, so createTask always finds a default workflow and its initial status. It runs as the writer, the control plane creating the organization.';


--
-- Name: tg_organizations__seed_ticket_workflow(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_organizations__seed_ticket_workflow() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.seed_ticket_workflow(new.id);
  return null;
end
$$;


--
-- Name: FUNCTION tg_organizations__seed_ticket_workflow(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_organizations__seed_ticket_workflow() IS 'AFTER INSERT trigger on app.organizations: seeds the new organization''s default ticket workflow (statuses new, open, pending, on_hold, solved, closed, new the initial one; the transitions between them, resolve requiring a resolution), so that every organization can create tickets from the start. It runs as svc_owner, which writes the workflow tables of the organization being created.';


--
-- Name: tg_payments__apply(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_payments__apply() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  i app.invoices;
begin
  new.created_by_client_id := coalesce(app.current_client_id(), new.created_by_client_id);
  -- By id and organization: another organization's invoice is simply not there (no amount, currency
  -- or status leaks through the errors below).
  select * into i from app.invoices where id = new.invoice_id and organization_id = new.organization_id for update;
  if not found then
    perform app_private.invoice_not_found(new.invoice_id);
  end if;
  if i.status not in ('sent', 'paid') then
    perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', format('a %s invoice takes no payments', i.status));
  end if;
  if new.currency <> i.currency then
    perform app_private.raise('SVV22', 'CURRENCY_MISMATCH', format('the invoice is in %s', i.currency), '/currency');
  end if;
  if scale(new.amount) > i.scale then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', format('amount has more decimals than %s has minor units (%s)', i.currency, i.scale), '/amount');
  end if;
  if new.amount > i.total - i.amount_paid then
    perform app_private.raise('SVV22', 'PAYMENT_EXCEEDS_AMOUNT_DUE',
      format('the amount due is %s %s', app_private.money_text(i.total - i.amount_paid, i.scale), i.currency), '/amount');
  end if;
  update app.invoices
     set amount_paid = amount_paid + new.amount,
         status = case when amount_paid + new.amount = total then 'paid' else status end
   where organization_id = i.organization_id and id = i.id;
  return new;
end
$$;


--
-- Name: FUNCTION tg_payments__apply(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_payments__apply() IS 'Before insert on app.payments (_100_apply): locks the invoice by id and the payment''s organization (another organization''s invoice is simply SVN04 INVOICE_NOT_FOUND, leaking nothing), requires it to be issued and unvoided (SVC09 INVOICE_NOT_EDITABLE), in the same currency (SVV22 CURRENCY_MISMATCH), with no more decimals than the currency has (SVV22 VALIDATION_FAILED) and not above the amount due (SVV22 PAYMENT_EXCEEDS_AMOUNT_DUE), then adds it to amount_paid and marks the invoice paid when nothing is due. The row lock means concurrent payments can never take the amount due below zero; it is svc_owner''s definer because the payment''s writer (svc_api) may not write amount_paid or status, and it records the request''s client as the payment''s creator.';


--
-- Name: tg_payments__emit(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_payments__emit() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.emit_event(new.organization_id, 'payment.created', 'payment', new.id, 1);
  return null;
end
$$;


--
-- Name: FUNCTION tg_payments__emit(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_payments__emit() IS 'After insert on app.payments (_950_emit_event): emits payment.created into the outbox in the writer''s transaction, with version 1, since a payment never changes. Raises nothing.';


--
-- Name: tg_payments__immutable(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_payments__immutable() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.raise('SVC09', 'CONFLICT', 'payments are records: they are never changed or deleted');
end
$$;


--
-- Name: FUNCTION tg_payments__immutable(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_payments__immutable() IS 'Before update or delete on app.payments (_050_immutable): always refuses with SVC09 CONFLICT, whoever writes: payments are financial records of money received and are never changed or deleted.';


--
-- Name: tg_projects__check_references(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_projects__check_references() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_errors jsonb := '[]';
  v_restoring boolean := tg_op = 'UPDATE' and old.status = 'archived' and new.status = 'active';
begin
  if new.customer_id is not null
     and (tg_op = 'INSERT' or v_restoring or new.customer_id is distinct from old.customer_id)
     and not exists (select from app.customers c where c.id = new.customer_id and c.organization_id = new.organization_id
                      and c.kind = 'company' and c.deleted_at is null) then
    v_errors := v_errors || app_private.error('/customer_id', 'VALIDATION_FAILED',
      'customer_id must be a company (com_) of your organization that is not deleted');
  end if;
  if new.manager_member_id is not null
     and (tg_op = 'INSERT' or v_restoring or new.manager_member_id is distinct from old.manager_member_id)
     and not exists (select from app.members m where m.organization_id = new.organization_id and m.id = new.manager_member_id
                      and m.status = 'active' and 'manager' = any (m.svc_roles)) then
    v_errors := v_errors || app_private.error('/manager_member_id', 'INVALID_MANAGER',
      'manager_member_id must be the email of an active member who holds the manager Role');
  end if;
  perform app_private.raise_errors(v_errors);
  return new;
end
$$;


--
-- Name: FUNCTION tg_projects__check_references(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_projects__check_references() IS 'BEFORE INSERT or UPDATE row trigger on app.projects (_200_check_references): on insert, on a change of the field, and on restore (archived to active), customer_id must be an undeleted company (com_) of the project''s organization (VALIDATION_FAILED) and manager_member_id an active member of it holding the manager Role (INVALID_MANAGER), raised together as SVV22. A definer as svc_owner so that every writer is held to the spec''s rule that references belong to the same organization and are not deleted, although svc_api cannot read customers.';


--
-- Name: tg_projects__status_change(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_projects__status_change() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_blockers text[];
begin
  if new.status = old.status then
    return new;
  end if;
  if new.status = 'archived' then
    v_blockers := app_private.project_archive_blockers(new.organization_id, new.id);
    if cardinality(v_blockers) > 0 then
      perform app_private.raise('SVC15', 'PROJECT_ARCHIVE_BLOCKED',
        'the project has active work: ' || array_to_string(v_blockers, '; '));
    end if;
    new.archived_at := now();
  else
    new.archived_at := null;
  end if;
  return new;
end
$$;


--
-- Name: FUNCTION tg_projects__status_change(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_projects__status_change() IS 'BEFORE UPDATE OF status row trigger on app.projects (_150_status_change): archiving is refused while app_private.project_archive_blockers reports open tasks or time awaiting approval (SVC15 PROJECT_ARCHIVE_BLOCKED), the spec''s "no active workflow blocks it"; it sets archived_at on archiving and clears it on restore. It runs as the writer, and the blockers helper counts past the caller''s Roles.';


--
-- Name: tg_report_runs__emit(); Type: FUNCTION; Schema: app_private; Owner: -
--

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


--
-- Name: FUNCTION tg_report_runs__emit(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_report_runs__emit() IS 'AFTER UPDATE trigger on app.report_runs: when a run''s status becomes succeeded or failed, it writes the webhook event report_run.succeeded or report_run.failed (app_private.emit_event), delivered only to the client that requested the run, the only one that can see it. It runs as svc_owner, which owns the outbox writer, and the event names the run''s own organization, within svc_owner''s policy.';


--
-- Name: tg_report_runs__lifecycle(); Type: FUNCTION; Schema: app_private; Owner: -
--

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


--
-- Name: FUNCTION tg_report_runs__lifecycle(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_report_runs__lifecycle() IS 'BEFORE INSERT OR UPDATE trigger on app.report_runs, for every writer: a run starts queued; its request (organization, id, report, definition version, client, parameters, format, created_at) never changes; its status moves only queued to running, running to succeeded or failed, or queued to failed; purged results never come back. Any violation raises SVC09 CONFLICT.';


--
-- Name: tg_runs__conversation_reply(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_runs__conversation_reply() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_seq integer;
  v_id text;
  v_content jsonb;
begin
  if new.conversation_id is null or new.status = old.status or new.status not in ('succeeded', 'failed', 'cancelled') then
    return null;
  end if;
  select c.message_count + 1 into v_seq from app.conversations c where c.organization_id = new.organization_id and c.id = new.conversation_id for update;
  v_content := case new.status
    when 'succeeded' then jsonb_build_array(jsonb_build_object('type', 'text', 'text', coalesce(new.output ->> 'text', '')))
    when 'failed' then jsonb_build_array(jsonb_build_object('type', 'error', 'code', new.error ->> 'code', 'message', new.error ->> 'detail'))
    else jsonb_build_array(jsonb_build_object('type', 'error', 'code', 'RUN_CANCELLED', 'message', 'the run was cancelled before it answered')) end;
  insert into app.conversation_messages (organization_id, conversation_id, seq, role, content, run_id)
  values (new.organization_id, new.conversation_id, v_seq, 'assistant', v_content, new.id)
  returning id into v_id;
  perform app_private.conversation_compact(new.organization_id, new.conversation_id);
  return null;
end
$$;


--
-- Name: FUNCTION tg_runs__conversation_reply(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_runs__conversation_reply() IS 'AFTER UPDATE OF status row trigger on app.runs (_910_conversation_reply): when a conversation''s run reaches succeeded, failed or cancelled, it appends the assistant''s message at the conversation''s next seq (the run''s output text, or an error block with the run''s error code or RUN_CANCELLED, with run_id) and compacts the working context, as the spec turns a chat run''s answer into a conversation message. A definer as svc_owner because the run usually ends in the worker''s session, where svc_api''s policies show nothing, and svc_api may write only user messages; it names the run''s own organization.';


--
-- Name: tg_runs__events(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_runs__events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_type text;
  v_data jsonb := jsonb_build_object('status', new.status);
  v_seq integer;
begin
  if new.status = old.status then
    return null;
  end if;
  v_type := case new.status when 'running' then 'run.started' when 'succeeded' then 'run.completed' when 'failed' then 'run.failed'
                            when 'requires_action' then 'run.requires_action' when 'cancelled' then 'run.cancelled' end;
  if v_type is null then
    return null;
  end if;
  if new.status = 'requires_action' then
    v_data := v_data || jsonb_build_object('required_action', new.required_action);
  elsif new.status = 'failed' then
    v_data := v_data || jsonb_build_object('error', new.error);
  elsif new.status = 'succeeded' then
    v_data := v_data || jsonb_build_object('output', new.output);
  end if;
  v_seq := app_private.run_event(new.organization_id, new.id, v_type, v_data);
  if v_type in ('run.completed', 'run.failed', 'run.requires_action', 'run.cancelled') then
    perform app_private.emit_event(new.organization_id, v_type, 'run', new.id, v_seq);
  end if;
  return null;
end
$$;


--
-- Name: FUNCTION tg_runs__events(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_runs__events() IS 'AFTER UPDATE OF status trigger on app.runs: each change to running, requires_action, succeeded, failed or cancelled appends the matching stream event (run.started, run.requires_action with the action, run.completed with the output, run.failed with the error, run.cancelled) through app_private.run_event, and all but run.started also become webhook events (app_private.emit_event, the event''s sequence number as version). It runs as svc_owner because a status change made by svc_api (cancelRun) may not itself write the run log or the outbox; the rows it writes are in the run''s own organization, within svc_owner''s policy.';


--
-- Name: tg_runs__lifecycle(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_runs__lifecycle() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if tg_op = 'INSERT' then
    if new.status <> 'queued' then
      perform app_private.raise('SVC09', 'CONFLICT', 'a run starts queued');
    end if;
    return new;
  end if;
  if (new.organization_id, new.id, new.kind, new.agent_id, new.agent_version, new.conversation_id, new.client_id, new.subject, new.input,
      new.metadata, new.created_at)
     is distinct from (old.organization_id, old.id, old.kind, old.agent_id, old.agent_version, old.conversation_id, old.client_id, old.subject,
      old.input, old.metadata, old.created_at) then
    perform app_private.raise('SVC09', 'CONFLICT', 'a run''s request never changes');
  end if;
  if old.status in ('succeeded', 'failed', 'cancelled') then
    if new.status = old.status and new.output_purged and not old.output_purged and new.output is null
       and (new.required_action, new.error, new.state, new.started_at, new.completed_at)
           is not distinct from (old.required_action, old.error, old.state, old.started_at, old.completed_at) then
      return new;
    end if;
    if (new.*) is not distinct from (old.*) then
      return new;
    end if;
    perform app_private.raise('SVC09', 'RUN_ALREADY_TERMINAL', format('the run is %s; a finished run never changes', old.status));
  end if;
  if new.status <> old.status and not ((old.status, new.status) in (
       ('queued', 'running'), ('running', 'succeeded'), ('running', 'failed'), ('running', 'requires_action'),
       ('requires_action', 'queued'), ('queued', 'cancelled'), ('running', 'cancelled'), ('requires_action', 'cancelled'))) then
    perform app_private.raise('SVC09', 'CONFLICT', format('a run does not move from %s to %s', old.status, new.status));
  end if;
  if new.output_purged then
    perform app_private.raise('SVC09', 'CONFLICT', 'only a finished run''s output expires');
  end if;
  return new;
end
$$;


--
-- Name: FUNCTION tg_runs__lifecycle(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_runs__lifecycle() IS 'BEFORE INSERT OR UPDATE trigger on app.runs, for every writer: a run starts queued; its request (organization, id, kind, agent and version, conversation, client, subject, input, metadata, created_at) never changes; its status moves only as the spec''s table allows (queued to running or cancelled, running to succeeded, failed, requires_action or cancelled, requires_action to queued or cancelled). Terminal runs never change (SVC09 RUN_ALREADY_TERMINAL) except the retention purge clearing their output, and only a finished run''s output expires; other violations raise SVC09 CONFLICT.';


--
-- Name: tg_task_dependencies__no_cycle(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_task_dependencies__no_cycle() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_task app.tasks;
  v_pred app.tasks;
begin
  -- Serialize dependency changes per organization: two concurrent inserts could otherwise
  -- each pass the check and close a cycle together.
  perform pg_advisory_xact_lock(hashtextextended('svc.task_dependencies:' || new.organization_id, 0));
  -- The check below must see dependencies committed while we waited for the lock: only a
  -- statement snapshot (read committed) does.
  if current_setting('transaction_isolation') <> 'read committed' then
    perform app_private.raise('SVC09', 'CONFLICT', 'dependencies change only in read committed transactions');
  end if;
  select * into v_task from app.tasks where organization_id = new.organization_id and id = new.task_id;
  select * into v_pred from app.tasks where organization_id = new.organization_id and id = new.predecessor_task_id;
  if v_pred.id is null or v_pred.organization_id <> new.organization_id or v_task.organization_id <> new.organization_id then
    perform app_private.raise('SVN04', 'TASK_NOT_FOUND', format('no task %s in your organization', new.predecessor_task_id));
  end if;
  if v_pred.project_id <> v_task.project_id and not (select allow_cross_project_dependencies from app.task_workflows w
                                                       where w.organization_id = new.organization_id and w.id = v_task.workflow_id) then
    perform app_private.raise('SVV24', 'DEPENDENCY_CYCLE',
      format('%s is in another project and the workflow does not allow cross-project dependencies', v_pred.id));
  end if;
  if exists (
    with recursive upstream(id) as (
      select d.predecessor_task_id from app.task_dependencies d
       where d.organization_id = new.organization_id and d.task_id = new.predecessor_task_id
      union
      select d.predecessor_task_id from app.task_dependencies d join upstream u on d.task_id = u.id
       where d.organization_id = new.organization_id
    )
    select from upstream where id = new.task_id
  ) then
    perform app_private.raise('SVV24', 'DEPENDENCY_CYCLE',
      format('%s already depends, directly or indirectly, on %s', new.predecessor_task_id, new.task_id));
  end if;
  return new;
end
$$;


--
-- Name: FUNCTION tg_task_dependencies__no_cycle(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_task_dependencies__no_cycle() IS 'BEFORE INSERT or UPDATE row trigger on app.task_dependencies (_100_no_cycle): serializes dependency changes per organization with an advisory transaction lock and requires read committed (else SVC09 CONFLICT), so two concurrent inserts cannot each pass the check and close a cycle together; both tasks must be of the row''s organization (SVN04 TASK_NOT_FOUND), a predecessor in another project needs the workflow''s allow_cross_project_dependencies, and a predecessor that already depends on the task, directly or not, is refused (both SVV24 DEPENDENCY_CYCLE). A definer as svc_owner so it walks the organization''s whole dependency graph for every writer.';


--
-- Name: tg_task_notes__members_may_add(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_task_notes__members_may_add() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  -- Only requests answer to Roles; the owner (migrations, admin) is not a request.
  if app.current_organization_id() is not null and not app.has_role('manager') and not coalesce((
       select w.members_may_add_notes from app.tasks t join app.task_workflows w
           on w.organization_id = t.organization_id and w.id = t.workflow_id
        where t.organization_id = new.organization_id and t.id = new.task_id), false) then
    perform app_private.raise('SVR03', 'ROLE_REQUIRED',
      'adding a note requires the manager Role, or member where the organization''s task policy permits');
  end if;
  return new;
end
$$;


--
-- Name: FUNCTION tg_task_notes__members_may_add(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_task_notes__members_may_add() IS 'BEFORE INSERT row trigger on app.task_notes (_010_members_may_add): in a request (a signed context naming an organization), a client without manager may add a note only when the task''s workflow has members_may_add_notes, else SVR03 ROLE_REQUIRED, the spec''s "member where the task policy permits"; writers outside a request (svc-admin, migrations) answer to no Role. A definer as svc_owner to read the task and its workflow; the rule lives here because a row policy that reads another table is refused on Citus.';


--
-- Name: tg_tasks__archive_rules(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_tasks__archive_rules() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_blockers text[];
  v_project_active boolean;
begin
  select p.status = 'active' into v_project_active from app.projects p where p.organization_id = new.organization_id and p.id = new.project_id;
  if new.archived_at is not null and old.archived_at is null then
    new.archived_at := now();
    v_blockers := app_private.task_archive_blockers(new.organization_id, new.id);
    if cardinality(v_blockers) > 0 then
      perform app_private.raise('SVC16', 'TASK_ARCHIVE_BLOCKED', 'open tasks depend on this task: ' || array_to_string(v_blockers, ', '));
    end if;
    return new;
  end if;
  if not v_project_active then
    perform app_private.raise('SVC16', 'TASK_ARCHIVE_BLOCKED',
      case when new.archived_at is null and old.archived_at is not null
           then 'the task''s project is archived: restore the project first'
           else 'the task''s project is archived: restore the project before changing its tasks' end);
  end if;
  if old.archived_at is not null and new.archived_at is not null then
    perform app_private.raise('SVC16', 'TASK_ARCHIVE_BLOCKED', 'the task is archived: restore it before changing it');
  end if;
  return new;
end
$$;


--
-- Name: FUNCTION tg_tasks__archive_rules(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_tasks__archive_rules() IS 'BEFORE UPDATE row trigger on app.tasks (_120_archive_rules): archiving stamps archived_at with now and is refused while unarchived open tasks depend on the task; any other change to a task of an archived project, restoring included, is refused (restore the project first), and an archived task changes only by being restored; each refusal is SVC16 TASK_ARCHIVE_BLOCKED. A definer as svc_owner so the project and every dependent task are seen whoever writes.';


--
-- Name: tg_tasks__check_references(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_tasks__check_references() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_errors jsonb := '[]';
  v_bad text[];
begin
  if (tg_op = 'INSERT' or new.project_id <> old.project_id)
     and not exists (select from app.projects p where p.id = new.project_id and p.organization_id = new.organization_id
                      and p.status = 'active') then
    perform app_private.raise('SVN04', 'PROJECT_NOT_FOUND', format('no active project %s in your organization', new.project_id));
  end if;
  if tg_op = 'INSERT' or new.assignee_member_ids is distinct from old.assignee_member_ids then
    select array_agg(a order by a) into v_bad from unnest(new.assignee_member_ids) a
     where not exists (select from app.members m where m.organization_id = new.organization_id and m.id = a and m.status = 'active');
    if v_bad is not null then
      v_errors := v_errors || app_private.error('/assignee_member_ids', 'INVALID_ASSIGNEE',
        'not active members of your organization: ' || array_to_string(v_bad, ', '));
    end if;
    if cardinality(new.assignee_member_ids) <> (select count(distinct a) from unnest(new.assignee_member_ids) a) then
      v_errors := v_errors || app_private.error('/assignee_member_ids', 'INVALID_ASSIGNEE', 'assignees must be distinct');
    end if;
  end if;
  perform app_private.raise_errors(v_errors);
  return new;
end
$$;


--
-- Name: FUNCTION tg_tasks__check_references(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_tasks__check_references() IS 'BEFORE INSERT or UPDATE row trigger on app.tasks (_200_check_references): on insert or a change of project, the project must be an active project of the task''s organization (SVN04 PROJECT_NOT_FOUND); on insert or a change of assignees, they must be distinct active members of the organization (SVV22 INVALID_ASSIGNEE). A definer as svc_owner so every writer is held to references within its own organization, whatever the caller''s Roles let it read.';


--
-- Name: tg_tasks__legal_transition(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_tasks__legal_transition() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_category text;
begin
  if tg_op = 'INSERT' then
    if not exists (select from app.task_workflow_statuses s
                    where s.organization_id = new.organization_id and s.workflow_id = new.workflow_id and s.status = new.status
                    and s.is_initial) then
      perform app_private.raise('SVV23', 'INVALID_TRANSITION', format('a new task starts in its workflow''s initial status, not %s', new.status));
    end if;
    new.completed_at := null;
  elsif new.status <> old.status then
    if not exists (select from app.task_workflow_transitions t
                    where t.organization_id = new.organization_id and t.workflow_id = new.workflow_id
                      and t.from_status = old.status and t.to_status = new.status) then
      perform app_private.raise('SVV23', 'INVALID_TRANSITION', format('no transition leads from %s to %s', old.status, new.status));
    end if;
    -- completed_at belongs to done statuses: set on completion (now unless given), cleared otherwise.
    select s.category into v_category from app.task_workflow_statuses s
     where s.organization_id = new.organization_id and s.workflow_id = new.workflow_id and s.status = new.status;
    new.completed_at := case when v_category = 'done' then coalesce(new.completed_at, now()) end;
  elsif new.completed_at is distinct from old.completed_at then
    perform app_private.raise('SVV23', 'INVALID_TRANSITION', 'completed_at changes only with a transition into a done status');
  end if;
  if tg_op = 'UPDATE' and new.workflow_id <> old.workflow_id then
    perform app_private.raise('SVV23', 'INVALID_TRANSITION', 'a task cannot change workflow');
  end if;
  return new;
end
$$;


--
-- Name: FUNCTION tg_tasks__legal_transition(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_tasks__legal_transition() IS 'BEFORE INSERT or UPDATE row trigger on app.tasks (_150_legal_transition): a new task starts in its workflow''s initial status, a status changes only along a transition of the task''s workflow, completed_at is set on entering a done status (now unless given), cleared on leaving it and never changed otherwise, and a task never changes workflow; each refusal is SVV23 INVALID_TRANSITION. A definer as svc_owner so that every writer, not only transitionTask, follows the organization''s workflow as the spec''s state machine requires.';


--
-- Name: tg_ticket_messages__emit(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_ticket_messages__emit() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.emit_event(new.organization_id, 'ticket.message.created', 'ticket_message', new.id, 1);
  if new.type = 'reply' then
    perform app_private.queue_job(new.organization_id, 'ticket_reply_email', json_build_object('message_id', new.id),
                                  'ticket_reply:' || new.id, 10);
  end if;
  return null;
end
$$;


--
-- Name: FUNCTION tg_ticket_messages__emit(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_ticket_messages__emit() IS 'AFTER INSERT trigger on app.ticket_messages: writes the ticket.message.created event to the outbox and, for a reply, queues the ticket_reply_email job (job key ticket_reply:<message id>, 10 attempts) in the writer''s transaction, so a reply is emailed only if it commits; internal notes never leave. It runs as svc_owner because svc_api may not write app.events or the job queue; both name the message''s organization.';


--
-- Name: tg_ticket_messages__index(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_ticket_messages__index() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if new.type = 'reply' then
    update app.ticket_search s set public_doc = s.public_doc || to_tsvector('simple', new.body)
     where s.organization_id = new.organization_id and s.ticket_id = new.ticket_id;
  else
    update app.ticket_search s set internal_doc = s.internal_doc || to_tsvector('simple', new.body)
     where s.organization_id = new.organization_id and s.ticket_id = new.ticket_id;
  end if;
  return null;
end
$$;


--
-- Name: FUNCTION tg_ticket_messages__index(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_ticket_messages__index() IS 'AFTER INSERT trigger on app.ticket_messages: adds the message''s text to its ticket''s search document, a reply to the public document and an internal note to the internal-note document, kept apart so that a reader who may not see notes cannot find tickets by them. It runs as svc_owner because svc_api may only read app.ticket_search.';


--
-- Name: tg_ticket_messages__rules(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_ticket_messages__rules() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_bad text[];
begin
  if tg_op = 'DELETE' then
    perform app_private.raise('SVC09', 'CONFLICT', 'ticket messages are kept');
  end if;
  if tg_op = 'UPDATE' then
    if (to_jsonb(new) - '{delivery_status,delivery_detail,delivered_at}'::text[]) <> (to_jsonb(old) - '{delivery_status,delivery_detail,delivered_at}'::text[])
       or old.delivery_status <> 'queued' then
      perform app_private.raise('SVC09', 'CONFLICT', 'a message never changes; a reply''s delivery is recorded once');
    end if;
    return new;
  end if;
  select array_agg(a order by a) into v_bad from unnest(new.attachment_file_ids) a
   where not exists (select from app.files f where f.organization_id = new.organization_id and f.id = a and f.status = 'ready'
                                             and f.linked_resource_type = 'ticket' and f.linked_resource_id = new.ticket_id);
  if v_bad is not null then
    perform app_private.raise_errors(app_private.error('/attachments', 'ATTACHMENT_NOT_AVAILABLE',
      'not ready files of this ticket: ' || array_to_string(v_bad, ', ')));
  end if;
  new.delivery_status := case when new.type = 'reply' then 'queued' end;
  new.delivery_detail := null;
  new.delivered_at := null;
  return new;
end
$$;


--
-- Name: FUNCTION tg_ticket_messages__rules(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_ticket_messages__rules() IS 'BEFORE INSERT, UPDATE or DELETE trigger on app.ticket_messages: a message is never deleted and never changes, except that a queued reply''s delivery is recorded once (SVC09 CONFLICT); its attachments must be ready files linked to its ticket (SVV22 ATTACHMENT_NOT_AVAILABLE), and a new reply starts with its delivery queued, a note with none. It holds for every writer; it runs as svc_owner so that the attachment check reads the ticket''s files past the writer''s Role policies, in the message''s own organization.';


--
-- Name: tg_tickets__emit(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_tickets__emit() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if tg_op = 'INSERT' then
    perform app_private.emit_event(new.organization_id, 'ticket.created', 'ticket', new.id, new.version);
  elsif new.version <> old.version then
    perform app_private.emit_event(new.organization_id,
      case when new.status <> old.status then 'ticket.transitioned' else 'ticket.updated' end, 'ticket', new.id, new.version);
  end if;
  return null;
end
$$;


--
-- Name: FUNCTION tg_tickets__emit(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_tickets__emit() IS 'AFTER INSERT or UPDATE trigger on app.tickets: writes ticket.created, or on an update that advanced the version ticket.transitioned when the status changed and ticket.updated otherwise, to the outbox in the writer''s transaction, so subscribers hear of a change only if it commits. It runs as svc_owner because svc_api may not write app.events.';


--
-- Name: tg_tickets__index(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_tickets__index() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if tg_op = 'INSERT' then
    insert into app.ticket_search (organization_id, ticket_id, public_doc)
    values (new.organization_id, new.id, setweight(to_tsvector('simple', new.subject), 'A') || to_tsvector('simple', coalesce(new.description, '')));
  elsif (new.subject, new.description) is distinct from (old.subject, old.description) then
    update app.ticket_search s
       set public_doc = setweight(to_tsvector('simple', new.subject), 'A') || to_tsvector('simple', coalesce(new.description, ''))
                        || coalesce((select to_tsvector('simple', string_agg(m.body, ' ')) from app.ticket_messages m
                                      where m.organization_id = new.organization_id and m.ticket_id = new.id and m.type = 'reply'), ''::tsvector)
     where s.organization_id = new.organization_id and s.ticket_id = new.id;
  end if;
  return null;
end
$$;


--
-- Name: FUNCTION tg_tickets__index(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_tickets__index() IS 'AFTER INSERT or UPDATE trigger on app.tickets: creates the ticket''s search row (subject weighted above description), and when the subject or description changes rebuilds its public document from them and the ticket''s replies, leaving internal notes in their own document. It runs as svc_owner because svc_api may only read app.ticket_search.';


--
-- Name: tg_tickets__rules(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_tickets__rules() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_next bigint;
  v_category text;
begin
  if tg_op = 'INSERT' then
    insert into app_private.ticket_number_counters (organization_id, last_number) values (new.organization_id, 1)
    on conflict (organization_id) do update set last_number = ticket_number_counters.last_number + 1
    returning last_number into v_next;
    new.number := 'TKT-' || lpad(v_next::text, 6, '0');
    if not exists (select from app.ticket_statuses s where s.organization_id = new.organization_id and s.status = new.status and s.is_initial) then
      perform app_private.raise('SVV23', 'INVALID_TRANSITION', format('a new ticket starts in the workflow''s initial status, not %s', new.status));
    end if;
    new.resolution := null;
    new.resolved_at := null;
  else
    if (new.number, new.organization_id, new.id, new.created_by_client_id, new.created_at, new.external_id)
       is distinct from (old.number, old.organization_id, old.id, old.created_by_client_id, old.created_at, old.external_id) then
      perform app_private.raise('SVC09', 'CONFLICT', 'a ticket''s number, origin and external_id never change');
    end if;
    if new.status <> old.status then
      if not exists (select from app.ticket_transitions t
                      where t.organization_id = new.organization_id and t.from_status = old.status and t.to_status = new.status) then
        perform app_private.raise('SVV23', 'INVALID_TRANSITION', format('no transition leads from %s to %s', old.status, new.status));
      end if;
      select s.category into v_category from app.ticket_statuses s where s.organization_id = new.organization_id and s.status = new.status;
      if v_category = 'solved' then
        if new.resolution is null or new.resolution !~ '\S' then
          perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'resolving a ticket takes a resolution', '/resolution');
        end if;
        new.resolved_at := now();
      elsif v_category <> 'closed' then
        new.resolution := null;
        new.resolved_at := null;
      end if;
    elsif (new.resolution, new.resolved_at) is distinct from (old.resolution, old.resolved_at) then
      perform app_private.raise('SVV23', 'INVALID_TRANSITION', 'the resolution changes only with a transition');
    end if;
  end if;
  if new.assignee_member_id is not null and (tg_op = 'INSERT' or new.assignee_member_id is distinct from old.assignee_member_id)
     and not exists (select from app.members m where m.organization_id = new.organization_id and m.id = new.assignee_member_id
                                                and m.status = 'active') then
    perform app_private.raise_errors(app_private.error('/assignee_member_id', 'INVALID_ASSIGNEE',
      format('%s is not an active member of your organization', new.assignee_member_id)));
  end if;
  if new.project_id is not null and (tg_op = 'INSERT' or new.project_id is distinct from old.project_id)
     and not exists (select from app.projects p where p.organization_id = new.organization_id and p.id = new.project_id) then
    perform app_private.raise('SVN04', 'PROJECT_NOT_FOUND', format('no project %s in your organization', new.project_id), '/project_id');
  end if;
  return new;
end
$$;


--
-- Name: FUNCTION tg_tickets__rules(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_tickets__rules() IS 'BEFORE INSERT or UPDATE trigger on app.tickets: a new ticket takes its organization''s next number (TKT-000001…, from app_private.ticket_number_counters, which svc_api may not touch) and must start in the workflow''s initial status (SVV23 INVALID_TRANSITION); number, origin and external_id never change (SVC09 CONFLICT), a status changes only along a transition of the workflow and the resolution only with one (SVV23), and a move to a solved status needs a resolution (SVV22 VALIDATION_FAILED) and stamps resolved_at. An assignee must be an active member (SVV22 INVALID_ASSIGNEE) and a project must exist in the organization (SVN04 PROJECT_NOT_FOUND), checked by the row''s own organization.';


--
-- Name: tg_time_entries__lock(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_time_entries__lock() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if old.deleted_at is not null then
    perform app_private.raise('SVN04', 'TIME_ENTRY_NOT_FOUND', 'the time entry was deleted');
  end if;
  if old.status in ('draft', 'rejected') then
    if new.status not in (old.status, 'submitted') and new.status <> old.status then
      perform app_private.raise('SVR05', 'APPROVAL_REQUIRED', 'only a named user can approve or reject time');
    end if;
    return new;
  end if;
  -- submitted: only the approval decision moves it; approved: final.
  if old.status = 'submitted' and new.status in ('approved', 'rejected')
     and (new.member_id, new.project_id, new.task_id, new.work_date, new.minutes, new.billable, new.notes,
          new.external_id, new.deleted_at)
         is not distinct from (old.member_id, old.project_id, old.task_id, old.work_date, old.minutes, old.billable,
                               old.notes, old.external_id, old.deleted_at)
     and current_user not in ('svc_runtime', 'svc_api') then
    return new;
  end if;
  perform app_private.raise('SVC17', 'TIME_ENTRY_LOCKED',
    format('a %s time entry cannot be changed or deleted', old.status));
end
$$;


--
-- Name: FUNCTION tg_time_entries__lock(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_time_entries__lock() IS 'BEFORE UPDATE on app.time_entries, the spec''s time-entry state machine: a deleted entry cannot change (SVN04 TIME_ENTRY_NOT_FOUND); a draft or rejected entry may change, and its status may move only to submitted (any other move raises SVR05 APPROVAL_REQUIRED: only a named user approves or rejects); a submitted entry moves only to approved or rejected with no other field changed, and never by svc_runtime or svc_api, since the decision comes from the control plane; every other change, to an approved entry included, raises SVC17 TIME_ENTRY_LOCKED. It runs as the updating role, because it judges current_user.';


--
-- Name: tg_time_entries__no_delete(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_time_entries__no_delete() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.raise('SVC17', 'TIME_ENTRY_LOCKED', 'time entries are deleted by marking them, never removed');
end
$$;


--
-- Name: FUNCTION tg_time_entries__no_delete(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_time_entries__no_delete() IS 'BEFORE DELETE on app.time_entries: refuses every delete, by any role, with SVC17 TIME_ENTRY_LOCKED. Time entries are deleted by marking them (deleted_at, through deleteTimeEntry, audited) and are never removed, so their history and audit stay whole.';


--
-- Name: tg_time_entries__submitted_has_approval(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_time_entries__submitted_has_approval() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if new.status = 'submitted' and not exists (
       select from app.approvals a where a.organization_id = new.organization_id and a.resource_type = 'time_entry'
                                      and a.resource_id = new.id and a.status = 'pending') then
    perform app_private.raise('SVR05', 'APPROVAL_REQUIRED', 'submit the time entry through submitTimeEntry, which requests approval');
  end if;
  return null;
end
$$;


--
-- Name: FUNCTION tg_time_entries__submitted_has_approval(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_time_entries__submitted_has_approval() IS 'AFTER INSERT OR UPDATE OF status on app.time_entries: a submitted entry must have a pending approval request for it in its organization, else SVR05 APPROVAL_REQUIRED, because submitting is asking a named user: the only way to submitted is submitTimeEntry (app_private.request_time_entry_approval), which writes both. It runs as svc_owner so the check sees the approval whatever the writer''s own approval policy shows, within the row''s organization.';


--
-- Name: tg_time_entries__validate(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_time_entries__validate() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_errors jsonb := '[]';
  p app.projects;
  t app.tasks;
  o app.organizations;
  v_today date;
  v_total integer;
begin
  if new.deleted_at is not null or (tg_op = 'UPDATE' and new.status <> old.status and old.status not in ('draft', 'rejected')) then
    return new;
  end if;
  select * into o from app.organizations where id = new.organization_id;
  v_today := (now() at time zone o.timezone)::date;
  if not exists (select from app.members m where m.organization_id = new.organization_id and m.id = new.member_id
                  and m.status = 'active') then
    v_errors := v_errors || app_private.error('/subject/member_id', 'INVALID_SUBJECT_MEMBER',
      'subject.member_id must be the exact normalized email of an active member of your organization');
  end if;
  select * into p from app.projects where id = new.project_id and organization_id = new.organization_id;
  if not found or p.status <> 'active' then
    v_errors := v_errors || app_private.error('/project_id', 'INVALID_WORK_DATE',
      'project_id must be an active project of your organization');
  elsif (p.start_date is not null and new.work_date < p.start_date) or (p.end_date is not null and new.work_date > p.end_date) then
    v_errors := v_errors || app_private.error('/work_date', 'INVALID_WORK_DATE',
      format('work_date must be within the project''s dates (%s to %s)', coalesce(p.start_date::text, '…'), coalesce(p.end_date::text, '…')));
  end if;
  if new.task_id is not null then
    select * into t from app.tasks where id = new.task_id and organization_id = new.organization_id;
    if not found or t.project_id <> new.project_id or t.archived_at is not null then
      v_errors := v_errors || app_private.error('/task_id', 'INVALID_WORK_DATE',
        'task_id must be a non-archived task of the project');
    end if;
  end if;
  if new.work_date > v_today + o.time_entry_future_days then
    v_errors := v_errors || app_private.error('/work_date', 'INVALID_WORK_DATE',
      format('work_date is in the future (today is %s in %s)', v_today, o.timezone));
  elsif new.work_date < v_today - 366 then
    v_errors := v_errors || app_private.error('/work_date', 'INVALID_WORK_DATE', 'work_date is more than a year ago');
  end if;
  -- Serialize a member's day: two concurrent entries cannot both squeeze under the daily limit.
  perform pg_advisory_xact_lock(hashtextextended('svc.time:' || new.organization_id || ':' || new.member_id || ':' || new.work_date, 0));
  select coalesce(sum(minutes), 0) into v_total from app.time_entries e
   where e.organization_id = new.organization_id and e.member_id = new.member_id and e.work_date = new.work_date
     and e.deleted_at is null and e.id <> new.id;
  if v_total + new.minutes > 1440 then
    v_errors := v_errors || app_private.error('/minutes', 'INVALID_DURATION',
      format('the member would have %s minutes on %s; a day has 1440', v_total + new.minutes, new.work_date));
  end if;
  perform app_private.raise_errors(v_errors);
  return new;
end
$$;


--
-- Name: FUNCTION tg_time_entries__validate(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_time_entries__validate() IS 'BEFORE INSERT OR UPDATE on app.time_entries (not for deleted rows, nor for a status move out of submitted or approved): the subject must be an active member of the organization (INVALID_SUBJECT_MEMBER), the project active with the work date within its dates and the task a non-archived task of that project (INVALID_WORK_DATE), the work date no later than the organization''s today (in its timezone) plus time_entry_future_days and no more than 366 days ago (INVALID_WORK_DATE), and the member''s day at most 1440 minutes in all (INVALID_DURATION), serialized per member and day by an advisory lock so that two concurrent entries cannot both fit. Every problem is raised together (app_private.raise_errors, SVV22). It runs as svc_owner so it reads the members, projects, tasks, organization and the member''s other entries whatever the writer may read, within the row''s organization under svc_owner''s policy.';


--
-- Name: tg_webhook_deliveries__replay_of(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_webhook_deliveries__replay_of() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if tg_op = 'DELETE' then
    update app.webhook_deliveries d set replay_of = null
     where d.organization_id = old.organization_id and d.replay_of = old.id;
    return null;
  end if;
  if new.replay_of is not null and not exists (
       select from app.webhook_deliveries d where d.organization_id = new.organization_id and d.id = new.replay_of) then
    perform app_private.raise('SVN04', 'WEBHOOK_DELIVERY_NOT_FOUND', format('no delivery %s to replay', new.replay_of));
  end if;
  return new;
end
$$;


--
-- Name: FUNCTION tg_webhook_deliveries__replay_of(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_webhook_deliveries__replay_of() IS 'On app.webhook_deliveries, in place of a self-referencing foreign key Citus cannot keep: before an insert or an update of replay_of that names one (_010_replay_of), the replayed delivery must exist in the same organization (SVN04 WEBHOOK_DELIVERY_NOT_FOUND); after a delete (_990_replay_of), the purged delivery''s replays forget it (replay_of set to null).';


--
-- Name: tg_webhook_endpoints__check_events(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_webhook_endpoints__check_events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_errors jsonb := '[]';
  i integer;
begin
  for i in 1 .. coalesce(cardinality(new.events), 0) loop
    if not exists (select from app_private.event_types t where t.name = new.events[i] and t.subscribable) then
      v_errors := v_errors || app_private.error(format('/events/%s', i - 1), 'WEBHOOK_EVENT_NOT_SUPPORTED',
        format('%s is not an event name of the catalogue (see the OpenAPI document''s webhooks)', left(new.events[i], 100)));
    end if;
  end loop;
  perform app_private.raise_errors(v_errors);
  new.events := array(select distinct e from unnest(new.events) e order by e);
  return new;
end
$$;


--
-- Name: FUNCTION tg_webhook_endpoints__check_events(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_webhook_endpoints__check_events() IS 'Before insert or an update of events on app.webhook_endpoints (_200_check_events), for every writer: each subscribed name must be a subscribable event of the catalogue (app_private.event_types), else SVV22 WEBHOOK_EVENT_NOT_SUPPORTED with a pointer to each bad entry (the spec rejects unknown event names); the list is then stored sorted without duplicates.';


--
-- Name: tg_webhook_endpoints__limit(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.tg_webhook_endpoints__limit() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  -- Serialize creations per client so two concurrent ones cannot both pass the count.
  perform pg_advisory_xact_lock(hashtextextended('webhook_endpoints:' || new.client_id, 0));
  if (select count(*) from app.webhook_endpoints w where w.organization_id = new.organization_id and w.client_id = new.client_id) >= 20 then
    perform app_private.raise('SVC09', 'CONFLICT', 'a client can have at most 20 webhook endpoints; disable and reuse one');
  end if;
  return new;
end
$$;


--
-- Name: FUNCTION tg_webhook_endpoints__limit(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.tg_webhook_endpoints__limit() IS 'Before insert on app.webhook_endpoints (_300_limit): a client has at most 20 endpoints, disabled ones included, so the fan-out cost of an event stays bounded; a 21st is refused with SVC09 CONFLICT. Creations are serialized per client by a transaction-scoped advisory lock, so two concurrent ones cannot both pass the count.';


--
-- Name: ticket_not_found(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.ticket_not_found(p_id text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select app_private.raise('SVN04', 'TICKET_NOT_FOUND', format('no ticket %s in your organization', p_id)) $$;


--
-- Name: ticket_reply_load(text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.ticket_reply_load(p_organization_id text, p_message_id text) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_out jsonb;
begin
  select jsonb_build_object('status', m.delivery_status, 'body', m.body, 'organization_id', m.organization_id, 'ticket_id', t.id,
           'number', t.number, 'subject', t.subject, 'to', t.requester_email, 'to_name', t.requester_name, 'organization', o.name,
           'attachments', coalesce((select jsonb_agg(jsonb_build_object('file_id', f.id, 'name', f.name, 'content_type', f.content_type,
                                                                        'upload_id', f.upload_id, 'status', f.status) order by a.n)
                                      from unnest(m.attachment_file_ids) with ordinality a (id, n)
                                      join app.files f on f.organization_id = p_organization_id and f.id = a.id), '[]'::jsonb))
    into v_out
    from app.ticket_messages m
    join app.tickets t on t.organization_id = p_organization_id and t.id = m.ticket_id
    join app.organizations o on o.id = p_organization_id
   where m.organization_id = p_organization_id and m.id = p_message_id and m.type = 'reply';
  return v_out;
end
$$;


--
-- Name: ticket_reply_record(text, text, boolean, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.ticket_reply_record(p_organization_id text, p_message_id text, p_sent boolean, p_detail text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_now timestamptz := now();
begin
  update app.ticket_messages m
     set delivery_status = case when p_sent then 'sent' else 'failed' end, delivery_detail = left(p_detail, 500),
         delivered_at = case when p_sent then v_now end
   where m.organization_id = p_organization_id and m.id = p_message_id and m.delivery_status = 'queued';
end
$$;


--
-- Name: time_entry_insert(jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.time_entry_insert(p_body jsonb) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  v_id text;
begin
  insert into app.time_entries (organization_id, member_id, project_id, task_id, work_date, minutes, billable, notes,
                                external_id, created_by_client_id)
  values (v__organization_id, p_body #>> '{subject,member_id}', p_body ->> 'project_id', p_body ->> 'task_id',
          (p_body ->> 'work_date')::date, (p_body ->> 'minutes')::integer, coalesce((p_body ->> 'billable')::boolean, true),
          p_body ->> 'notes', p_body ->> 'external_id', app.current_client_id())
  returning id into v_id;
  return v_id;
end
$$;


--
-- Name: time_entry_not_found(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.time_entry_not_found(p_id text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select app_private.raise('SVN04', 'TIME_ENTRY_NOT_FOUND', format('no time entry %s in your organization', p_id)) $$;


--
-- Name: view_on_shard_group(regclass, bigint); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.view_on_shard_group(p_view regclass, p_shard bigint) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_sql text := rtrim(pg_get_viewdef(p_view), '; ');
  r record;
begin
  for r in
    execute $q$
      select distinct c.oid::regclass::text as name, shard_name(c.oid, s.shardid) as shard
        from pg_depend d
        join pg_rewrite rw on rw.oid = d.objid
        join pg_class c on c.oid = d.refobjid
        join pg_dist_partition p on p.logicalrelid = c.oid
        join pg_dist_shard s on s.logicalrelid = c.oid
       where d.classid = 'pg_rewrite'::regclass and d.refclassid = 'pg_class'::regclass and rw.ev_class = $2
         and ((p.partmethod = 'n' and p.repmodel = 't')
              or (p.colocationid = (select o.colocationid from pg_dist_partition o where o.logicalrelid = 'app.organizations'::regclass)
                  and s.shardminvalue = (select g.shardminvalue from pg_dist_shard g where g.shardid = $1)))$q$
    using p_shard, p_view
  loop
    v_sql := regexp_replace(v_sql, '(^|[^\w."])' || replace(r.name, '.', '\.') || '(?![\w"])', '\1' || r.shard, 'g');
  end loop;
  return v_sql;
end
$_$;


--
-- Name: view_on_shards(regclass, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.view_on_shards(p_view regclass, p_organization_id text) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if not exists (select from pg_dist_partition where logicalrelid = 'app.organizations'::regclass) then
    return rtrim(pg_get_viewdef(p_view), '; ');
  end if;
  return app_private.view_on_shard_group(p_view,
    get_shard_id_for_distribution_column('app.organizations', p_organization_id));
end
$$;


--
-- Name: webhook_cancel(text, text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.webhook_cancel(p_organization_id text, p_delivery text, p_reason text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  update app.webhook_deliveries x
     set status = 'cancelled', status_reason = p_reason, completed_at = now(), lease_until = null, next_attempt_at = null
   where x.organization_id = p_organization_id and x.id = p_delivery and x.status = 'pending';
end
$$;


--
-- Name: webhook_claim(text, text, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.webhook_claim(p_organization_id text, p_delivery text, p_lease_seconds integer) RETURNS TABLE(attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text, organization_id text, type text, resource_type text, resource_id text, resource_version integer, created_at timestamp with time zone)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  d app.webhook_deliveries;
  w app.webhook_endpoints;
  e app.events;
  v_reason text;
begin
  select * into d from app.webhook_deliveries x
   where x.organization_id = p_organization_id and x.id = p_delivery for update skip locked;
  if not found or d.status <> 'pending' or d.lease_until > now() or d.next_attempt_at > now() + interval '1 second' then
    return;
  end if;
  select * into w from app.webhook_endpoints x where x.organization_id = p_organization_id and x.id = d.endpoint_id;
  select * into e from app.events x where x.organization_id = p_organization_id and x.id = d.event_id;
  v_reason := case
    -- A test event goes to a disabled endpoint too: testing is how a client checks a fix.
    when w.status <> 'enabled' and e.type <> 'webhook_endpoint.test' then 'endpoint_disabled'
    when e.created_at < now() - interval '30 days' then 'retention_expired'
    -- The last retry is scheduled at retry_until; a job that runs much later (workers down) is not sent.
    when now() > d.retry_until + interval '15 minutes' then 'retry_period_exhausted'
    when not app_private.client_may_read(p_organization_id, d.client_id, e.type, e.resource_type, e.resource_id) then 'not_authorized'
  end;
  if v_reason is not null then
    perform app_private.webhook_cancel(p_organization_id, d.id, v_reason);
    return;
  end if;
  update app.webhook_deliveries x
     set attempt_count = x.attempt_count + 1, lease_until = now() + make_interval(secs => p_lease_seconds)
   where x.organization_id = p_organization_id and x.id = d.id
  returning x.attempt_count into attempt;
  url := w.url;
  secret_sealed := w.secret_sealed;
  previous_secret_sealed := case when w.previous_secret_expires_at > now() then w.previous_secret_sealed end;
  event_id := e.id;
  organization_id := e.organization_id;
  type := e.type;
  resource_type := e.resource_type;
  resource_id := e.resource_id;
  resource_version := e.resource_version;
  created_at := e.created_at;
  return next;
end
$$;


--
-- Name: webhook_endpoint_lock(text, integer[]); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.webhook_endpoint_lock(p_id text, p_if_match integer[] DEFAULT NULL::integer[]) RETURNS app.webhook_endpoints
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  w app.webhook_endpoints;
begin
  select * into w from app.webhook_endpoints where organization_id = v__organization_id and id = p_id for update;
  if not found then
    perform app_private.webhook_endpoint_not_found(p_id);
  end if;
  if p_if_match is not null then
    perform app_private.check_if_match(w.version, p_if_match);
  end if;
  return w;
end
$$;


--
-- Name: webhook_endpoint_not_found(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.webhook_endpoint_not_found(p_id text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select app_private.raise('SVN04', 'WEBHOOK_ENDPOINT_NOT_FOUND', format('no webhook endpoint %s of your client', p_id)) $$;


--
-- Name: webhook_enqueue(text, text, timestamp with time zone); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.webhook_enqueue(p_organization_id text, p_delivery text, p_run_at timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.queue_job(p_organization_id, 'webhook_deliver', json_build_object('delivery_id', p_delivery),
                                'deliver:' || p_delivery, 25, p_run_at);
end
$$;


--
-- Name: webhook_fanout(text, text, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.webhook_fanout(p_organization_id text, p_event text, p_lease_seconds integer) RETURNS TABLE(delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text, organization_id text, type text, resource_type text, resource_id text, resource_version integer, created_at timestamp with time zone)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  e app.events;
begin
  select * into e from app.events x
   where x.organization_id = p_organization_id and x.id = p_event and x.fanout_pending for update skip locked;
  if found then
    return query select * from app_private.webhook_fanout_event(e, p_lease_seconds);
  end if;
end
$$;


--
-- Name: webhook_fanout_any(integer, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.webhook_fanout_any(p_limit integer, p_lease_seconds integer) RETURNS TABLE(delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text, organization_id text, type text, resource_type text, resource_id text, resource_version integer, created_at timestamp with time zone)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
  e app.events;
begin
  for e in select * from app.events x where x.fanout_pending order by x.created_at
            limit greatest(1, least(p_limit, 500)) for update skip locked loop
    return query select * from app_private.webhook_fanout_event(e, p_lease_seconds);
    if not found then
      delivery_id := null; attempt := null; url := null; secret_sealed := null; previous_secret_sealed := null;
      event_id := e.id; organization_id := e.organization_id; type := e.type; resource_type := e.resource_type;
      resource_id := e.resource_id; resource_version := e.resource_version; created_at := e.created_at;
      return next;
    end if;
  end loop;
end
$$;


--
-- Name: webhook_fanout_batch(text, integer, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.webhook_fanout_batch(p_organization_id text, p_limit integer, p_lease_seconds integer) RETURNS TABLE(delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text, organization_id text, type text, resource_type text, resource_id text, resource_version integer, created_at timestamp with time zone)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
  e app.events;
  v_events refcursor;
begin
  if p_organization_id is null then
    -- Every organization's: one server only (Citus locks rows of one shard at a time).
    open v_events for select * from app.events x where x.fanout_pending order by x.created_at
                       limit greatest(1, least(p_limit, 500)) for update skip locked;
  else
    open v_events for select * from app.events x where x.organization_id = p_organization_id and x.fanout_pending
                       order by x.created_at limit greatest(1, least(p_limit, 500)) for update skip locked;
  end if;
  loop
    fetch v_events into e;
    exit when not found;
    return query select * from app_private.webhook_fanout_event(e, p_lease_seconds);
    if not found then
      delivery_id := null; attempt := null; url := null; secret_sealed := null; previous_secret_sealed := null;
      event_id := e.id; organization_id := e.organization_id; type := e.type; resource_type := e.resource_type;
      resource_id := e.resource_id; resource_version := e.resource_version; created_at := e.created_at;
      return next;
    end if;
  end loop;
  close v_events;
end
$$;


--
-- Name: webhook_fanout_event(app.events, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.webhook_fanout_event(e app.events, p_lease_seconds integer) RETURNS TABLE(delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text, organization_id text, type text, resource_type text, resource_id text, resource_version integer, created_at timestamp with time zone)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
  w record;
  v_client text;
  v_allowed boolean;
  v_delivered text[] := '{}';
begin
  for w in select ep.id, ep.client_id, ep.url, ep.secret_sealed,
                  case when ep.previous_secret_expires_at > now() then ep.previous_secret_sealed end as previous_secret_sealed
             from app.webhook_endpoints ep
            where ep.organization_id = e.organization_id and ep.status = 'enabled' and e.type = any (ep.events)
              and (e.target_endpoint_id is null or ep.id = e.target_endpoint_id)
            order by ep.client_id, ep.id loop
    if v_client is distinct from w.client_id then
      v_client := w.client_id;
      v_allowed := app_private.client_may_read(e.organization_id, w.client_id, e.type, e.resource_type, e.resource_id);
    end if;
    continue when not v_allowed;
    delivery_id := null;
    insert into app.webhook_deliveries as d (organization_id, client_id, endpoint_id, event_id, attempt_count, lease_until)
    values (e.organization_id, w.client_id, w.id, e.id, 1, now() + make_interval(secs => p_lease_seconds))
    on conflict (organization_id, event_id, endpoint_id) where replay_of is null do nothing
    returning d.id into delivery_id;
    continue when delivery_id is null;
    if not (w.client_id = any (v_delivered)) then
      v_delivered := v_delivered || w.client_id;
    end if;
    attempt := 1;
    url := w.url;
    secret_sealed := w.secret_sealed;
    previous_secret_sealed := w.previous_secret_sealed;
    event_id := e.id;
    organization_id := e.organization_id;
    type := e.type;
    resource_type := e.resource_type;
    resource_id := e.resource_id;
    resource_version := e.resource_version;
    created_at := e.created_at;
    return next;
  end loop;
  -- The clients it was delivered to may read the event (its policy), set in the update the fan-out
  -- makes anyway. (An event is fanned out once, its deliveries made here: the clients are new to it.)
  update app.events x set fanout_pending = false, client_ids = x.client_ids || v_delivered
   where x.organization_id = e.organization_id and x.id = e.id;
end
$$;


--
-- Name: webhook_fanout_organizations(integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.webhook_fanout_organizations(p_limit integer) RETURNS SETOF text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return query select x.organization_id from app.events x where x.fanout_pending
                group by x.organization_id order by min(x.created_at) limit greatest(1, p_limit);
end
$$;


--
-- Name: webhook_record_attempt(text, text, integer, timestamp with time zone, integer, integer, text, boolean, integer, double precision, integer, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.webhook_record_attempt(p_organization_id text, p_delivery text, p_attempt integer, p_started_at timestamp with time zone, p_duration_ms integer, p_response_status integer, p_error text, p_retryable boolean, p_retry_after_seconds integer, p_scale double precision, p_disable_after integer, p_disable_after_seconds integer) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  d app.webhook_deliveries;
  w app.webhook_endpoints;
  v_ok boolean := p_response_status between 200 and 299 and p_error is null;
  v_next timestamptz;
  v_outcome text;
  -- A value, not now(): Citus takes no volatile function inside CASE or COALESCE of a write.
  v_now timestamptz := now();
begin
  select * into d from app.webhook_deliveries x where x.organization_id = p_organization_id and x.id = p_delivery for update;
  if not found or d.status <> 'pending' or d.attempt_count <> p_attempt then
    return 'stale';
  end if;
  insert into app.webhook_delivery_attempts (organization_id, delivery_id, attempt, started_at, duration_ms, response_status, error)
  values (p_organization_id, d.id, p_attempt, p_started_at, p_duration_ms, p_response_status, left(p_error, 500));
  if v_ok then
    update app.webhook_deliveries x set status = 'succeeded', status_reason = null, completed_at = now(), lease_until = null,
                                        next_attempt_at = null
     where x.organization_id = p_organization_id and x.id = d.id;
    update app.webhook_endpoints x set consecutive_failures = 0, failing_since = null
     where x.organization_id = p_organization_id and x.id = d.endpoint_id
       and (x.consecutive_failures <> 0 or x.failing_since is not null);
    return 'succeeded';
  end if;
  if p_retryable then
    v_next := now() + greatest(app_private.webhook_retry_delay(p_attempt, p_scale),
                               make_interval(secs => least(coalesce(p_retry_after_seconds, 0), 86400) * p_scale));
  end if;
  -- The schedule's next step may overshoot the 72 hours: the last attempt is then at retry_until.
  if p_retryable and now() < d.retry_until then
    v_next := least(v_next, d.retry_until);
    update app.webhook_deliveries x set next_attempt_at = v_next, lease_until = null, status_reason = null
     where x.organization_id = p_organization_id and x.id = d.id;
    perform app_private.webhook_enqueue(p_organization_id, d.id, v_next);
    v_outcome := 'retrying';
  else
    update app.webhook_deliveries x
       set status = 'failed', completed_at = now(), lease_until = null, next_attempt_at = null,
           status_reason = case when p_retryable then 'retry_period_exhausted' else 'permanent_failure' end
     where x.organization_id = p_organization_id and x.id = d.id;
    v_outcome := 'failed';
  end if;
  update app.webhook_endpoints x
     set consecutive_failures = x.consecutive_failures + 1, failing_since = coalesce(x.failing_since, v_now)
   where x.organization_id = p_organization_id and x.id = d.endpoint_id
  returning * into w;
  -- The clock, not now(): a transaction that began before the one that started the streak waited
  -- for the endpoint's row, and its now() is earlier than that failing_since.
  if w.status = 'enabled' and w.consecutive_failures >= p_disable_after
     and w.failing_since <= clock_timestamp() - make_interval(secs => p_disable_after_seconds) then
    update app.webhook_endpoints x set status = 'disabled', disabled_reason = 'delivery_failures'
     where x.organization_id = p_organization_id and x.id = w.id;
    insert into app_private.admin_notifications (organization_id, kind, subject_id, detail)
    values (p_organization_id, 'webhook_endpoint_disabled', w.id,
            format('webhook endpoint %s of client %s was disabled after %s consecutive failed deliveries since %s',
                   w.id, w.client_id, w.consecutive_failures, w.failing_since));
    v_outcome := v_outcome || ',endpoint_disabled';
  end if;
  return v_outcome;
end
$$;


--
-- Name: webhook_recover(interval); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.webhook_recover(p_stale interval DEFAULT '00:00:30'::interval) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_count integer := 0;
  r record;
begin
  -- graphile-worker 0.17 keeps jobs in _private_jobs (unique key): a job that is available, or locked
  -- recently, is alive; a missing job, one out of attempts, or one locked longer than p_stale by a
  -- silent worker is replaced (a backlog of queued jobs is left alone).
  for r in
    select c.organization_id, c.id
      from jsonb_to_recordset((select coalesce(jsonb_agg(jsonb_build_object('organization_id', d.organization_id, 'id', d.id,
                                                                             'leased', d.lease_until is not null)), '[]')
                                 from app.webhook_deliveries d
                                where d.status = 'pending'
                                  and (d.lease_until < now() or (d.lease_until is null and d.next_attempt_at < now() - p_stale))))
             as c (organization_id text, id text, leased boolean)
     -- A lease that ran out is queued again whatever its job; a delivery without one only when its job is gone.
     where c.leased
        or not exists (select from graphile_worker._private_jobs j
                        where j.key = 'deliver:' || c.id and (j.is_available or j.locked_at > now() - p_stale))
  loop
    -- A delivery being claimed or recorded right now is left to that worker.
    perform from app.webhook_deliveries x
     where x.organization_id = r.organization_id and x.id = r.id and x.status = 'pending'
       and (x.lease_until < now() or (x.lease_until is null and x.next_attempt_at < now() - p_stale))
       for update skip locked;
    continue when not found;
    update app.webhook_deliveries x set lease_until = null, next_attempt_at = now()
     where x.organization_id = r.organization_id and x.id = r.id;
    perform app_private.webhook_enqueue(r.organization_id, r.id);
    v_count := v_count + 1;
  end loop;
  return v_count;
end
$$;


--
-- Name: webhook_retry_delay(integer, double precision); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.webhook_retry_delay(p_attempt integer, p_scale double precision DEFAULT 1) RETURNS interval
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  select make_interval(secs => coalesce((array[5, 300, 1800, 7200, 18000, 36000, 50400, 72000]::integer[])[p_attempt], 86400)
                               * (0.8 + random() * 0.4) * p_scale)
$$;


--
-- Name: wire_json(jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.wire_json(d jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ select d::pg_catalog.text $$;


--
-- Name: FUNCTION wire_json(d jsonb); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.wire_json(d jsonb) IS 'A document as the API sends it: jsonb''s own text, keys in jsonb''s order (by length, then bytes, so `id` first). A SQL expression, inlined into the statement that renders the document.';


--
-- Name: agent_set_published(text, text, boolean); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.agent_set_published(p_org text, p_agent text, p_published boolean) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_now timestamptz := now();  -- Citus takes no function call in ON CONFLICT DO UPDATE
begin
  if not exists (select from app.organizations o where o.id = p_org) then
    perform app_private.raise('SVN01', 'ORGANIZATION_NOT_FOUND', format('no organization %s', p_org));
  end if;
  if not exists (select from app_private.agent_definitions d where d.id = p_agent) then
    perform app_private.raise('SVN01', 'AGENT_NOT_FOUND', format('no agent %s in the catalogue', p_agent));
  end if;
  insert into app.agent_publications (organization_id, agent_id, status)
  values (p_org, p_agent, case when p_published then 'published' else 'unpublished' end)
  on conflict (organization_id, agent_id) do update set status = excluded.status, changed_at = v_now;
  return case when p_published then 'published' else 'unpublished' end;
end
$$;


--
-- Name: approval_decide(text, text, text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.approval_decide(p_approval text, p_decision text, p_by text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := (select x.organization_id from app.approvals x where x.id = p_approval);
  a app.approvals;
  v_by text := app_private.normalize_email(p_by);
begin
  select * into a from app.approvals where organization_id = v_org and id = p_approval for update;
  perform app_private.require_found(found, 'APPROVAL_NOT_FOUND', p_approval);
  if a.status <> 'pending' then
    perform app_private.raise('SVC18', 'APPROVAL_ALREADY_DECIDED', format('the approval is already %s', a.status));
  end if;
  if not exists (select from app.members m where m.organization_id = a.organization_id and m.id = v_by and m.status = 'active'
                  and (case a.category when 'project' then 'manager' when 'financial' then 'finance' else 'hr' end) = any (m.svc_roles)) then
    perform app_private.raise('SVC18', 'APPROVER_NOT_ELIGIBLE', format('%s is not an active member who may decide this approval', v_by));
  end if;
  update app.approvals set status = p_decision, decision = p_decision, decided_at = now(), approver_member_id = v_by
   where organization_id = a.organization_id and id = p_approval;
  if a.resource_type = 'time_entry' then
    update app.time_entries set status = p_decision where organization_id = a.organization_id and id = a.resource_id;
  end if;
end
$$;


--
-- Name: client_create(text, text, text, text[], text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.client_create(p_org text, p_name text, p_license_level text, p_roles text[], p_description text DEFAULT NULL::text) RETURNS TABLE(client_id text, client_secret text, secret_id text)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_source text := 'purchased';
begin
  -- Lock the organization: two concurrent creations must not both take the included licence.
  perform app_private.require_found(exists (select from app.organizations where id = p_org for update), 'ORGANIZATION_NOT_FOUND', p_org);
  -- The organization's included Manager-level licence goes to the first Manager client.
  if p_license_level = 'manager' and not exists (
       select from app.api_clients
        where organization_id = p_org and license_source = 'included'
          and license_status = 'active' and status <> 'deleted') then
    v_source := 'included';
  end if;
  insert into app.api_clients (organization_id, name, description, license_level, license_source, svc_roles)
  values (p_org, p_name, p_description, p_license_level, v_source, p_roles)
  returning id into client_id;
  insert into app_private.client_directory (client_id, organization_id) values (client_id, p_org);
  client_secret := app_private.random_secret('svcsk_');
  insert into app.client_secrets (organization_id, client_id, slot, secret_sha256)
  values (p_org, client_id, 1, sha256(convert_to(client_secret, 'UTF8')))
  returning id into secret_id;
  return next;
end
$$;


--
-- Name: client_delete(text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.client_delete(p_client text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := (select d.organization_id from app_private.client_directory d where d.client_id = p_client);
  v_now timestamptz := now();
begin
  perform control.client_set_status(p_client, '{active,disabled}', 'deleted');
  update app.api_clients set license_status = 'released' where organization_id = v_org and id = p_client;
  update app.client_secrets set revoked_at = v_now where organization_id = v_org and client_id = p_client and revoked_at is null;
end
$$;


--
-- Name: client_disable(text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.client_disable(p_client text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select control.client_set_status(p_client, '{active}', 'disabled') $$;


--
-- Name: client_enable(text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.client_enable(p_client text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select control.client_set_status(p_client, '{disabled}', 'active') $$;


--
-- Name: client_release_license(text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.client_release_license(p_client text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := (select d.organization_id from app_private.client_directory d where d.client_id = p_client);
begin
  update app.api_clients set license_status = 'released' where organization_id = v_org and id = p_client and status <> 'deleted';
  perform app_private.require_found(found, 'CLIENT_NOT_FOUND', p_client);
end
$$;


--
-- Name: client_revoke_secret(text, text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.client_revoke_secret(p_client text, p_secret_id text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := (select d.organization_id from app_private.client_directory d where d.client_id = p_client);
begin
  update app.client_secrets set revoked_at = now()
   where organization_id = v_org and id = p_secret_id and client_id = p_client and revoked_at is null;
  perform app_private.require_found(found, 'SECRET_NOT_FOUND', p_secret_id);
end
$$;


--
-- Name: client_rotate_secret(text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.client_rotate_secret(p_client text) RETURNS TABLE(client_secret text, secret_id text)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := (select d.organization_id from app_private.client_directory d where d.client_id = p_client);
  c record;
  v_slot smallint;
begin
  select id, organization_id into c from app.api_clients where organization_id = v_org and id = p_client and status <> 'deleted' for update;
  perform app_private.require_found(found, 'CLIENT_NOT_FOUND', p_client);
  select s into v_slot from unnest(array[1, 2]::smallint[]) s
   where not exists (select from app.client_secrets cs where cs.organization_id = v_org and cs.client_id = p_client and cs.slot = s and cs.revoked_at is null)
   order by s limit 1;
  if v_slot is null then
    perform app_private.raise('SVC10', 'TOO_MANY_ACTIVE_SECRETS',
      'a client has at most two active secrets: revoke one before rotating');
  end if;
  client_secret := app_private.random_secret('svcsk_');
  insert into app.client_secrets (organization_id, client_id, slot, secret_sha256)
  values (c.organization_id, p_client, v_slot, sha256(convert_to(client_secret, 'UTF8')))
  returning id into secret_id;
  return next;
end
$$;


--
-- Name: client_set_roles(text, text[]); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.client_set_roles(p_client text, p_roles text[]) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := (select d.organization_id from app_private.client_directory d where d.client_id = p_client);
begin
  update app.api_clients set svc_roles = p_roles where organization_id = v_org and id = p_client and status <> 'deleted';
  perform app_private.require_found(found, 'CLIENT_NOT_FOUND', p_client);
end
$$;


--
-- Name: client_set_status(text, text[], text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.client_set_status(p_client text, p_from text[], p_to text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := (select d.organization_id from app_private.client_directory d where d.client_id = p_client);
  v_now timestamptz := now();
begin
  update app.api_clients
     set status = p_to, deleted_at = case when p_to = 'deleted' then v_now end
   where organization_id = v_org and id = p_client and status = any (p_from);
  if not found then
    perform app_private.require_found(exists (select from app.api_clients where organization_id = v_org and id = p_client and status <> 'deleted'),
                                      'CLIENT_NOT_FOUND', p_client);
    perform app_private.raise('SVC11', 'CLIENT_STATE_CONFLICT', format('the client cannot become %s from its current state', p_to));
  end if;
end
$$;


--
-- Name: customer_create(text, text, text, text, text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.customer_create(p_org text, p_kind text, p_name text, p_delivery_email text DEFAULT NULL::text, p_currency text DEFAULT NULL::text) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_id text := app_private.new_id(case p_kind when 'company' then 'com' else 'cus' end);
begin
  insert into app.customers (organization_id, id, kind, name, delivery_email, currency)
  values (p_org, v_id, p_kind, p_name, p_delivery_email, upper(p_currency));
  return v_id;
end
$$;


--
-- Name: customer_delete(text, text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.customer_delete(p_org text, p_id text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  update app.customers set deleted_at = now() where organization_id = p_org and id = p_id and deleted_at is null;
  perform app_private.require_found(found, 'CUSTOMER_NOT_FOUND', p_id);
end
$$;


--
-- Name: expire_conversation_contexts(interval); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.expire_conversation_contexts(p_idle interval) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_n integer;
begin
  update app.conversations x set context_from_seq = x.message_count, context_summary = null, context_expired_at = now()
   where x.last_activity_at < now() - p_idle and x.context_from_seq < x.message_count;
  get diagnostics v_n = row_count;
  return v_n;
end
$$;


--
-- Name: field_define(text, text, text, text, text, boolean, jsonb, text[], text[], boolean, boolean, integer); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.field_define(p_org text, p_object_type text, p_api_name text, p_label text, p_field_type text, p_required boolean DEFAULT false, p_options jsonb DEFAULT '[]'::jsonb, p_readable_roles text[] DEFAULT '{member,manager,finance,hr}'::text[], p_writable_roles text[] DEFAULT '{manager}'::text[], p_filterable boolean DEFAULT false, p_sortable boolean DEFAULT false, p_position integer DEFAULT 0) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_now timestamptz := now();  -- Citus takes no function call in ON CONFLICT DO UPDATE
begin
  insert into app.custom_field_definitions as d (organization_id, object_type, api_name, label, field_type, required, options,
                                           readable_roles, writable_roles, filterable, sortable, position)
  values (p_org, p_object_type, p_api_name, p_label, p_field_type, coalesce(p_required, false), coalesce(p_options, '[]'),
          coalesce(p_readable_roles, '{member,manager,finance,hr}'), coalesce(p_writable_roles, '{manager}'),
          coalesce(p_filterable, false), coalesce(p_sortable, false), coalesce(p_position, 0))
  on conflict (organization_id, object_type, api_name) do update
    set label = excluded.label, field_type = excluded.field_type, required = excluded.required, options = excluded.options,
        readable_roles = excluded.readable_roles, writable_roles = excluded.writable_roles,
        filterable = excluded.filterable, sortable = excluded.sortable, position = excluded.position, updated_at = v_now;
  return (select schema_version from app.object_schemas where organization_id = p_org and object_type = p_object_type);
end
$$;


--
-- Name: field_delete(text, text, text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.field_delete(p_org text, p_object_type text, p_api_name text) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  delete from app.custom_field_definitions where organization_id = p_org and object_type = p_object_type and api_name = p_api_name;
  perform app_private.require_found(found, 'CUSTOM_FIELD_NOT_FOUND', p_api_name);
  return (select schema_version from app.object_schemas where organization_id = p_org and object_type = p_object_type);
end
$$;


--
-- Name: file_policy_set(text, bigint, text[], boolean); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.file_policy_set(p_org text, p_max_size_bytes bigint, p_content_types text[], p_require_scan boolean) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform app_private.require_found(exists (select from app.organizations o where o.id = p_org), 'ORGANIZATION_NOT_FOUND', p_org);
  insert into app.file_policies (organization_id, max_size_bytes, allowed_content_types, require_scan)
  values (p_org, coalesce(p_max_size_bytes, 104857600), coalesce(p_content_types, app_private.default_file_content_types()),
          coalesce(p_require_scan, false))
  on conflict (organization_id) do update
    set max_size_bytes = coalesce(p_max_size_bytes, file_policies.max_size_bytes),
        allowed_content_types = coalesce(p_content_types, file_policies.allowed_content_types),
        require_scan = coalesce(p_require_scan, file_policies.require_scan);
end
$$;


--
-- Name: file_set_legal_hold(text, boolean); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.file_set_legal_hold(p_file_id text, p_hold boolean) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := (select x.organization_id from app.files x where x.id = p_file_id);
begin
  update app.files f set legal_hold = p_hold where f.organization_id = v_org and f.id = p_file_id;
  perform app_private.require_found(found, 'FILE_NOT_FOUND', p_file_id);
end
$$;


--
-- Name: integration_add(text, text, text, text, text, text[], text, text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.integration_add(p_org text, p_provider text, p_category text, p_ownership text, p_status text, p_capabilities text[], p_action_required text DEFAULT NULL::text, p_owner_member text DEFAULT NULL::text) RETURNS text
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  insert into app.integration_connections (organization_id, provider, category, ownership, owner_member_id, status, capabilities,
                                           action_required, last_success_at)
  values (p_org, p_provider, p_category, p_ownership, app_private.normalize_email(p_owner_member), p_status,
          coalesce(p_capabilities, '{}'), p_action_required, case when p_status = 'connected' then now() end)
  returning id
$$;


--
-- Name: integration_update(text, text, text[], text, boolean); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.integration_update(p_id text, p_status text DEFAULT NULL::text, p_capabilities text[] DEFAULT NULL::text[], p_action_required text DEFAULT NULL::text, p_clear_action_required boolean DEFAULT false) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := (select x.organization_id from app.integration_connections x where x.id = p_id);
  v_now timestamptz := now();
begin
  update app.integration_connections
     set status = coalesce(p_status, status),
         capabilities = coalesce(p_capabilities, capabilities),
         action_required = case when p_clear_action_required then null else coalesce(p_action_required, action_required) end,
         last_success_at = case when coalesce(p_status, status) = 'connected' then v_now else last_success_at end
   where organization_id = v_org and id = p_id;
  perform app_private.require_found(found, 'INTEGRATION_CONNECTION_NOT_FOUND', p_id);
end
$$;


--
-- Name: invoice_sync_retry(text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.invoice_sync_retry(p_invoice text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_org text := (select x.organization_id from app.invoices x where x.id = p_invoice);
  i app.invoices;
  c app.integration_connections;
begin
  select * into i from app.invoices where organization_id = v_org and id = p_invoice for update;
  if i.sync_status = 'failed' then
    update app.invoices set sync_status = 'pending', sync_error = null, sync_failure_definitive = null where organization_id = i.organization_id and id = p_invoice;
    return;
  end if;
  -- Issued while no accounting connection was ready: export it now that one is.
  if i.sync_status is null and i.status in ('sent', 'paid') then
    c := app_private.accounting_connection(i.organization_id);
    if app_private.accounting_ready(c) then
      update app.invoices set sync_connection_id = c.id, sync_status = 'pending' where organization_id = i.organization_id and id = p_invoice;
      return;
    end if;
  end if;
  perform app_private.raise('SVC18', 'INVOICE_SYNC_NOT_FAILED',
    format('%s has no failed accounting sync (and is not an issued invoice waiting for a ready accounting connection)', p_invoice));
end
$$;


--
-- Name: member_add(text, text, text, text[], text, text, text, text, date, text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.member_add(p_org text, p_email text, p_display_name text, p_roles text[] DEFAULT '{member}'::text[], p_job_title text DEFAULT NULL::text, p_timezone text DEFAULT NULL::text, p_status text DEFAULT 'active'::text, p_employee_number text DEFAULT NULL::text, p_hire_date date DEFAULT NULL::date, p_employment_type text DEFAULT NULL::text) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_id text := app_private.normalize_email(p_email);
begin
  perform app_private.assert_timezone(p_timezone);
  insert into app.members (organization_id, id, display_name, svc_roles, job_title, timezone, status,
                           employee_number, hire_date, employment_type)
  values (p_org, v_id, p_display_name, coalesce(p_roles, '{member}'), p_job_title, p_timezone, coalesce(p_status, 'active'),
          p_employee_number, p_hire_date, p_employment_type);
  return v_id;
end
$$;


--
-- Name: member_set_status(text, text, text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.member_set_status(p_org text, p_email text, p_status text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  update app.members set status = p_status where organization_id = p_org and id = app_private.normalize_email(p_email);
  perform app_private.require_found(found, 'MEMBER_NOT_FOUND', p_email);
end
$$;


--
-- Name: admin_notifications; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.admin_notifications (
    id bigint NOT NULL,
    organization_id text NOT NULL,
    kind text NOT NULL,
    subject_id text NOT NULL,
    detail text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE ONLY app_private.admin_notifications FORCE ROW LEVEL SECURITY;


--
-- Name: notifications_list(text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.notifications_list(p_org text) RETURNS SETOF app_private.admin_notifications
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select * from app_private.admin_notifications where organization_id = p_org order by id $$;


--
-- Name: org_create(text, text, text, text, text, text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.org_create(p_name text, p_plan text, p_timezone text, p_currency text, p_locale text, p_web_base_url text DEFAULT 'https://app.svc.example'::text) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_id text := app_private.new_id('org');
begin
  perform app_private.assert_timezone(p_timezone);
  insert into app.organizations (id, name, plan, timezone, currency, locale, web_url)
  values (v_id, p_name, p_plan, p_timezone, upper(p_currency), p_locale, rtrim(p_web_base_url, '/') || '/o/' || v_id);
  return v_id;
end
$$;


--
-- Name: org_set_invoice_policy(text, boolean, text, integer); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.org_set_invoice_policy(p_org text, p_require_accounting_connection boolean DEFAULT NULL::boolean, p_number_prefix text DEFAULT NULL::text, p_payment_terms_days integer DEFAULT NULL::integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  update app.organizations
     set invoices_require_accounting_connection = coalesce(p_require_accounting_connection, invoices_require_accounting_connection),
         invoice_number_prefix = coalesce(p_number_prefix, invoice_number_prefix),
         invoice_payment_terms_days = coalesce(p_payment_terms_days, invoice_payment_terms_days)
   where id = p_org;
  perform app_private.require_found(found, 'ORGANIZATION_NOT_FOUND', p_org);
end
$$;


--
-- Name: org_set_plan(text, text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.org_set_plan(p_org text, p_plan text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  update app.organizations set plan = p_plan where id = p_org;
  perform app_private.require_found(found, 'ORGANIZATION_NOT_FOUND', p_org);
end
$$;


--
-- Name: org_set_policy(text, boolean, boolean, integer); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.org_set_policy(p_org text, p_show_approver_identities boolean DEFAULT NULL::boolean, p_hr_may_read_time_entries boolean DEFAULT NULL::boolean, p_time_entry_future_days integer DEFAULT NULL::integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  update app.organizations
     set show_approver_identities = coalesce(p_show_approver_identities, show_approver_identities),
         hr_may_read_time_entries = coalesce(p_hr_may_read_time_entries, hr_may_read_time_entries),
         time_entry_future_days = coalesce(p_time_entry_future_days, time_entry_future_days)
   where id = p_org;
  perform app_private.require_found(found, 'ORGANIZATION_NOT_FOUND', p_org);
end
$$;


--
-- Name: org_set_status(text, text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.org_set_status(p_org text, p_status text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  update app.organizations set status = p_status where id = p_org;
  perform app_private.require_found(found, 'ORGANIZATION_NOT_FOUND', p_org);
end
$$;


--
-- Name: org_set_ticket_policy(text, boolean, boolean, boolean); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.org_set_ticket_policy(p_org text, p_module_enabled boolean, p_finance_may_read boolean, p_hr_may_read boolean) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  update app.organizations
     set ticket_module_enabled = coalesce(p_module_enabled, ticket_module_enabled),
         finance_may_read_tickets = coalesce(p_finance_may_read, finance_may_read_tickets),
         hr_may_read_tickets = coalesce(p_hr_may_read, hr_may_read_tickets)
   where id = p_org;
  perform app_private.require_found(found, 'ORGANIZATION_NOT_FOUND', p_org);
end
$$;


--
-- Name: purge_expired_access_tokens(); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.purge_expired_access_tokens() RETURNS integer
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  with gone as (delete from app_private.access_tokens where expires_at < now() - interval '1 minute' returning 1)
  select count(*)::integer from gone
$$;


--
-- Name: purge_expired_idempotency_keys(); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.purge_expired_idempotency_keys() RETURNS integer
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  with gone as (delete from app.idempotency_keys where expires_at < now() returning 1)
  select count(*)::integer from gone
$$;


--
-- Name: purge_expired_report_results(); Type: FUNCTION; Schema: control; Owner: -
--

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


--
-- Name: purge_expired_runs(interval); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.purge_expired_runs(p_retention interval) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_runs text[];
begin
  with gone as (update app.runs r set output = null, output_purged = true
                 where not r.output_purged and r.completed_at < now() - p_retention returning r.organization_id, r.id)
  select array_agg(id) into v_runs from gone;
  delete from app.run_events e where e.run_id = any (coalesce(v_runs, '{}'));
  return coalesce(cardinality(v_runs), 0);
end
$$;


--
-- Name: purge_expired_uploads(); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.purge_expired_uploads() RETURNS integer
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  with gone as (delete from app.file_uploads u where u.status <> 'completed' and u.expires_at < now() - interval '1 minute' returning 1)
  select count(*)::integer from gone
$$;


--
-- Name: reporting_grant(text, text[], text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.reporting_grant(p_org text, p_roles text[], p_password_verifier text) RETURNS TABLE(role_name text)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_role text := 'svc_bi_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12);
begin
  perform app_private.require_found(exists (select from app.organizations o where o.id = p_org), 'ORGANIZATION_NOT_FOUND', p_org);
  -- PostgreSQL's own form (RFC 5803): SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>.
  if p_password_verifier is null
     or p_password_verifier !~ '^SCRAM-SHA-256\$[1-9][0-9]{3,6}:[A-Za-z0-9+/]+=*\$[A-Za-z0-9+/]{43}=:[A-Za-z0-9+/]{43}=$' then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'the BI login''s password is given as a SCRAM-SHA-256 verifier, never as text');
  end if;
  insert into app_private.bi_logins (organization_id, role_name, svc_roles) values (p_org, v_role, p_roles);
  -- The login itself: CREATE ROLE, which only the bootstrap's function may (db/bootstrap-database.sql).
  perform svc_bootstrap.bi_login_create(v_role, p_password_verifier);
  role_name := v_role;
  return next;
end
$_$;


--
-- Name: FUNCTION reporting_grant(p_org text, p_roles text[], p_password_verifier text); Type: COMMENT; Schema: control; Owner: -
--

COMMENT ON FUNCTION control.reporting_grant(p_org text, p_roles text[], p_password_verifier text) IS 'A read-only login for a BI tool, bound to one organization and Roles; its password arrives as a SCRAM-SHA-256 verifier computed by svc-admin.';


--
-- Name: reporting_revoke(text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.reporting_revoke(p_role text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  delete from app_private.bi_logins b where b.role_name = p_role;
  perform app_private.require_found(found, 'BI_LOGIN_NOT_FOUND', p_role);
  -- Its sessions ended and the login dropped, by the bootstrap's function (db/bootstrap-database.sql).
  perform svc_bootstrap.bi_login_drop(p_role);
end
$$;


--
-- Name: FUNCTION reporting_revoke(p_role text); Type: COMMENT; Schema: control; Owner: -
--

COMMENT ON FUNCTION control.reporting_revoke(p_role text) IS 'Drops a BI login: its binding, its open sessions and the login itself (svc-admin reporting revoke).';


--
-- Name: signing_key_add(text, text, jsonb, text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.signing_key_add(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  insert into app_private.signing_keys (kid, alg, public_jwk, private_jwk_sealed)
  values (p_kid, p_alg, p_public_jwk, p_private_jwk_sealed)
$$;


--
-- Name: signing_key_retire(text); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.signing_key_retire(p_kid text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if (select count(*) from app_private.signing_keys where retired_at is null and kid <> p_kid) = 0 then
    perform app_private.raise('SVC12', 'LAST_SIGNING_KEY', 'add a new signing key before retiring the last one');
  end if;
  update app_private.signing_keys set retired_at = now() where kid = p_kid and retired_at is null;
  perform app_private.require_found(found, 'SIGNING_KEY_NOT_FOUND', p_kid);
end
$$;


--
-- Name: task_policy_set(text, boolean, boolean); Type: FUNCTION; Schema: control; Owner: -
--

CREATE FUNCTION control.task_policy_set(p_org text, p_members_may_add_notes boolean DEFAULT NULL::boolean, p_allow_cross_project_dependencies boolean DEFAULT NULL::boolean) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  update app.task_workflows
     set members_may_add_notes = coalesce(p_members_may_add_notes, members_may_add_notes),
         allow_cross_project_dependencies = coalesce(p_allow_cross_project_dependencies, allow_cross_project_dependencies)
   where organization_id = p_org and is_default;
  perform app_private.require_found(found, 'ORGANIZATION_NOT_FOUND', p_org);
end
$$;


--
-- Name: _private_jobs; Type: TABLE; Schema: graphile_worker; Owner: -
--

CREATE TABLE graphile_worker._private_jobs (
    id bigint NOT NULL,
    job_queue_id integer,
    task_id integer NOT NULL,
    payload json DEFAULT '{}'::json NOT NULL,
    priority smallint DEFAULT 0 NOT NULL,
    run_at timestamp with time zone DEFAULT now() NOT NULL,
    attempts smallint DEFAULT 0 NOT NULL,
    max_attempts smallint DEFAULT 25 NOT NULL,
    last_error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    key text,
    locked_at timestamp with time zone,
    locked_by text,
    revision integer DEFAULT 0 NOT NULL,
    flags jsonb,
    is_available boolean GENERATED ALWAYS AS (((locked_at IS NULL) AND (attempts < max_attempts))) STORED NOT NULL,
    CONSTRAINT jobs_key_check CHECK (((length(key) > 0) AND (length(key) <= 512))),
    CONSTRAINT jobs_max_attempts_check CHECK ((max_attempts >= 1))
);


--
-- Name: add_job(text, json, text, timestamp with time zone, integer, text, integer, text[], text); Type: FUNCTION; Schema: graphile_worker; Owner: -
--

CREATE FUNCTION graphile_worker.add_job(identifier text, payload json DEFAULT NULL::json, queue_name text DEFAULT NULL::text, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, max_attempts integer DEFAULT NULL::integer, job_key text DEFAULT NULL::text, priority integer DEFAULT NULL::integer, flags text[] DEFAULT NULL::text[], job_key_mode text DEFAULT 'replace'::text) RETURNS graphile_worker._private_jobs
    LANGUAGE plpgsql
    AS $$
declare
  v_job "graphile_worker"._private_jobs;
begin
  if (job_key is null or job_key_mode is null or job_key_mode in ('replace', 'preserve_run_at')) then
    select * into v_job
    from "graphile_worker".add_jobs(
      ARRAY[(
        identifier,
        payload,
        queue_name,
        run_at,
        max_attempts::smallint,
        job_key,
        priority::smallint,
        flags
      )::"graphile_worker".job_spec],
      (job_key_mode = 'preserve_run_at')
    )
    limit 1;
    return v_job;
  elsif job_key_mode = 'unsafe_dedupe' then
    -- Ensure all the tasks exist
    insert into "graphile_worker"._private_tasks as tasks (identifier)
    values (add_job.identifier)
    on conflict do nothing;
    -- Ensure all the queues exist
    if add_job.queue_name is not null then
      insert into "graphile_worker"._private_job_queues as job_queues (queue_name)
      values (add_job.queue_name)
      on conflict do nothing;
    end if;
    -- Insert job, but if one already exists then do nothing, even if the
    -- existing job has already started (and thus represents an out-of-date
    -- world state). This is dangerous because it means that whatever state
    -- change triggered this add_job may not be acted upon (since it happened
    -- after the existing job started executing, but no further job is being
    -- scheduled), but it is useful in very rare circumstances for
    -- de-duplication. If in doubt, DO NOT USE THIS.
    insert into "graphile_worker"._private_jobs as jobs (
      job_queue_id,
      task_id,
      payload,
      run_at,
      max_attempts,
      key,
      priority,
      flags
    )
      select
        job_queues.id,
        tasks.id,
        coalesce(add_job.payload, '{}'::json),
        coalesce(add_job.run_at, now()),
        coalesce(add_job.max_attempts::smallint, 25::smallint),
        add_job.job_key,
        coalesce(add_job.priority::smallint, 0::smallint),
        (
          select jsonb_object_agg(flag, true)
          from unnest(add_job.flags) as item(flag)
        )
      from "graphile_worker"._private_tasks as tasks
      left join "graphile_worker"._private_job_queues as job_queues
      on job_queues.queue_name = add_job.queue_name
      where tasks.identifier = add_job.identifier
    on conflict (key)
      -- Bump the updated_at so that there's something to return
      do update set
        revision = jobs.revision + 1,
        updated_at = now()
      returning *
      into v_job;
    if v_job.revision = 0 then
      perform pg_notify('jobs:insert', '{"r":' || random()::text || ',"count":1}');
    end if;
    return v_job;
  else
    raise exception 'Invalid job_key_mode value, expected ''replace'', ''preserve_run_at'' or ''unsafe_dedupe''.' using errcode = 'GWBKM';
  end if;
end;
$$;


--
-- Name: add_jobs(graphile_worker.job_spec[], boolean); Type: FUNCTION; Schema: graphile_worker; Owner: -
--

CREATE FUNCTION graphile_worker.add_jobs(specs graphile_worker.job_spec[], job_key_preserve_run_at boolean DEFAULT false) RETURNS SETOF graphile_worker._private_jobs
    LANGUAGE plpgsql
    AS $$
begin
  -- Ensure all the tasks exist
  insert into "graphile_worker"._private_tasks as tasks (identifier)
  select distinct spec.identifier
  from unnest(specs) spec
  on conflict do nothing;
  -- Ensure all the queues exist
  insert into "graphile_worker"._private_job_queues as job_queues (queue_name)
  select distinct spec.queue_name
  from unnest(specs) spec
  where spec.queue_name is not null
  on conflict do nothing;
  -- Ensure any locked jobs have their key cleared - in the case of locked
  -- existing job create a new job instead as it must have already started
  -- executing (i.e. it's world state is out of date, and the fact add_job
  -- has been called again implies there's new information that needs to be
  -- acted upon).
  update "graphile_worker"._private_jobs as jobs
  set
    key = null,
    attempts = jobs.max_attempts,
    updated_at = now()
  from unnest(specs) spec
  where spec.job_key is not null
  and jobs.key = spec.job_key
  and is_available is not true;

  -- WARNING: this count is not 100% accurate; 'on conflict' clause will cause it to be an overestimate
  perform pg_notify('jobs:insert', '{"r":' || random()::text || ',"count":' || array_length(specs, 1)::text || '}');

  -- TODO: is there a risk that a conflict could occur depending on the
  -- isolation level?
  return query insert into "graphile_worker"._private_jobs as jobs (
    job_queue_id,
    task_id,
    payload,
    run_at,
    max_attempts,
    key,
    priority,
    flags
  )
    select
      job_queues.id,
      tasks.id,
      coalesce(spec.payload, '{}'::json),
      coalesce(spec.run_at, now()),
      coalesce(spec.max_attempts, 25),
      spec.job_key,
      coalesce(spec.priority, 0),
      (
        select jsonb_object_agg(flag, true)
        from unnest(spec.flags) as item(flag)
      )
    from unnest(specs) spec
    inner join "graphile_worker"._private_tasks as tasks
    on tasks.identifier = spec.identifier
    left join "graphile_worker"._private_job_queues as job_queues
    on job_queues.queue_name = spec.queue_name
  on conflict (key) do update set
    job_queue_id = excluded.job_queue_id,
    task_id = excluded.task_id,
    payload =
      case
      when json_typeof(jobs.payload) = 'array' and json_typeof(excluded.payload) = 'array' then
        (jobs.payload::jsonb || excluded.payload::jsonb)::json
      else
        excluded.payload
      end,
    max_attempts = excluded.max_attempts,
    run_at = (case
      when job_key_preserve_run_at is true and jobs.attempts = 0 then jobs.run_at
      else excluded.run_at
    end),
    priority = excluded.priority,
    revision = jobs.revision + 1,
    flags = excluded.flags,
    -- always reset error/retry state
    attempts = 0,
    last_error = null,
    updated_at = now()
  where jobs.locked_at is null
  returning *;
end;
$$;


--
-- Name: complete_jobs(bigint[]); Type: FUNCTION; Schema: graphile_worker; Owner: -
--

CREATE FUNCTION graphile_worker.complete_jobs(job_ids bigint[]) RETURNS SETOF graphile_worker._private_jobs
    LANGUAGE sql
    AS $$
  delete from "graphile_worker"._private_jobs as jobs
    where id = any(job_ids)
    and (
      locked_at is null
    or
      locked_at < now() - interval '4 hours'
    )
    returning *;
$$;


--
-- Name: force_unlock_workers(text[]); Type: FUNCTION; Schema: graphile_worker; Owner: -
--

CREATE FUNCTION graphile_worker.force_unlock_workers(worker_ids text[]) RETURNS void
    LANGUAGE sql
    AS $$
update "graphile_worker"._private_jobs as jobs
set locked_at = null, locked_by = null
where locked_by = any(worker_ids);
update "graphile_worker"._private_job_queues as job_queues
set locked_at = null, locked_by = null
where locked_by = any(worker_ids);
$$;


--
-- Name: permanently_fail_jobs(bigint[], text); Type: FUNCTION; Schema: graphile_worker; Owner: -
--

CREATE FUNCTION graphile_worker.permanently_fail_jobs(job_ids bigint[], error_message text DEFAULT NULL::text) RETURNS SETOF graphile_worker._private_jobs
    LANGUAGE sql
    AS $$
  update "graphile_worker"._private_jobs as jobs
    set
      last_error = coalesce(error_message, 'Manually marked as failed'),
      attempts = max_attempts,
      updated_at = now()
    where id = any(job_ids)
    and (
      locked_at is null
    or
      locked_at < NOW() - interval '4 hours'
    )
    returning *;
$$;


--
-- Name: remove_job(text); Type: FUNCTION; Schema: graphile_worker; Owner: -
--

CREATE FUNCTION graphile_worker.remove_job(job_key text) RETURNS graphile_worker._private_jobs
    LANGUAGE plpgsql STRICT
    AS $$
declare
  v_job "graphile_worker"._private_jobs;
begin
  -- Delete job if not locked
  delete from "graphile_worker"._private_jobs as jobs
    where key = job_key
    and (
      locked_at is null
    or
      locked_at < NOW() - interval '4 hours'
    )
  returning * into v_job;
  if not (v_job is null) then
    perform pg_notify('jobs:insert', '{"r":' || random()::text || ',"count":-1}');
    return v_job;
  end if;
  -- Otherwise prevent job from retrying, and clear the key
  update "graphile_worker"._private_jobs as jobs
  set
    key = null,
    attempts = jobs.max_attempts,
    updated_at = now()
  where key = job_key
  returning * into v_job;
  return v_job;
end;
$$;


--
-- Name: reschedule_jobs(bigint[], timestamp with time zone, integer, integer, integer); Type: FUNCTION; Schema: graphile_worker; Owner: -
--

CREATE FUNCTION graphile_worker.reschedule_jobs(job_ids bigint[], run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, priority integer DEFAULT NULL::integer, attempts integer DEFAULT NULL::integer, max_attempts integer DEFAULT NULL::integer) RETURNS SETOF graphile_worker._private_jobs
    LANGUAGE sql
    AS $$
  update "graphile_worker"._private_jobs as jobs
    set
      run_at = coalesce(reschedule_jobs.run_at, jobs.run_at),
      priority = coalesce(reschedule_jobs.priority::smallint, jobs.priority),
      attempts = coalesce(reschedule_jobs.attempts::smallint, jobs.attempts),
      max_attempts = coalesce(reschedule_jobs.max_attempts::smallint, jobs.max_attempts),
      updated_at = now()
    where id = any(job_ids)
    and (
      locked_at is null
    or
      locked_at < NOW() - interval '4 hours'
    )
    returning *;
$$;


--
-- Name: invoice_aging(jsonb); Type: FUNCTION; Schema: reporting; Owner: -
--

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


--
-- Name: FUNCTION invoice_aging(p jsonb); Type: COMMENT; Schema: reporting; Owner: -
--

COMMENT ON FUNCTION reporting.invoice_aging(p jsonb) IS 'The rpt_invoice_aging report: per customer and currency, the amounts due (total less amount paid) on sent invoices with an open balance, by days past the due date (else the issue or creation date) as of p.as_of (default today): 0 to 30 (including not yet due), 31 to 60, 61 to 90, over 90, with the total and the invoice count; amounts are decimal strings at the currency''s scale (app_private.money_text), never floats. The worker runs it under the requesting client''s signed context when the run executes; it runs as svc_api, not as the worker (whose operator session sees every organization), so that svc_api''s policies (invoices for managers and finance) judge the client''s Roles then, and every table read names that organization.';


--
-- Name: member_utilization(jsonb); Type: FUNCTION; Schema: reporting; Owner: -
--

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


--
-- Name: FUNCTION member_utilization(p jsonb); Type: COMMENT; Schema: reporting; Owner: -
--

COMMENT ON FUNCTION reporting.member_utilization(p jsonb) IS 'The rpt_member_utilization report: per active member, the minutes worked and billable in p.from to p.to (time entries not deleted) against a capacity of working days (Monday to Friday) times p.capacity_minutes_per_day (default 480), with utilization and billable utilization as 4-decimal strings (null when the range has no working day). The worker runs it under the requesting client''s signed context when the run executes; it runs as svc_api, not as the worker (whose operator session sees every organization), so that svc_api''s policies on members and time entries judge the client''s Roles then, and every table read names that organization.';


--
-- Name: payments_received(jsonb); Type: FUNCTION; Schema: reporting; Owner: -
--

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


--
-- Name: FUNCTION payments_received(p jsonb); Type: COMMENT; Schema: reporting; Owner: -
--

COMMENT ON FUNCTION reporting.payments_received(p jsonb) IS 'The rpt_payments_received report: recorded payments per period (p.period day, week or month, default month) of their received date and per currency in p.from to p.to, with their count and total as a decimal string at the invoice currency''s scale (app_private.money_text), never a float. The worker runs it under the requesting client''s signed context when the run executes; it runs as svc_api, not as the worker (whose operator session sees every organization), so that svc_api''s policies (payments and invoices for managers and finance) judge the client''s Roles then, and every table read names that organization.';


--
-- Name: project_progress(jsonb); Type: FUNCTION; Schema: reporting; Owner: -
--

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


--
-- Name: FUNCTION project_progress(p jsonb); Type: COMMENT; Schema: reporting; Owner: -
--

COMMENT ON FUNCTION reporting.project_progress(p jsonb) IS 'The rpt_project_progress report: per project (active ones unless p.include_archived), its tasks that are not archived by workflow status category (open, done, cancelled), its overdue open tasks, and the tasks completed in the optional range p.from to p.to. The worker runs it under the requesting client''s signed context when the run executes; it runs as svc_api, not as the worker (whose operator session sees every organization), so that svc_api''s policies on projects, tasks and workflows judge the client''s Roles then, and every table read names that organization.';


--
-- Name: ticket_volume(jsonb); Type: FUNCTION; Schema: reporting; Owner: -
--

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


--
-- Name: FUNCTION ticket_volume(p jsonb); Type: COMMENT; Schema: reporting; Owner: -
--

COMMENT ON FUNCTION reporting.ticket_volume(p jsonb) IS 'The rpt_ticket_volume report: per week from the week of p.from to p.to, the tickets created in the range, how many of them are solved, and the median hours from creation to resolution (one decimal). The worker runs it under the requesting client''s signed context when the run executes; it runs as svc_api, not as the worker (whose operator session sees every organization), so that svc_api''s ticket policy (the ticket module and the organization''s read permissions for the client''s Roles) is judged then, and the read names that organization.';


--
-- Name: time_by_project(jsonb); Type: FUNCTION; Schema: reporting; Owner: -
--

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


--
-- Name: FUNCTION time_by_project(p jsonb); Type: COMMENT; Schema: reporting; Owner: -
--

COMMENT ON FUNCTION reporting.time_by_project(p jsonb) IS 'The rpt_time_by_project report: billable, non-billable and total minutes per project and member in p.from to p.to (time entries not deleted, any status), optionally of one project (p.project_id). The worker runs it under the requesting client''s signed context when the run executes; it runs as svc_api, not as the worker (whose operator session sees every organization), so that svc_api''s policies on time entries and projects judge the client''s Roles then, and every table read names that organization.';


--
-- Name: bi_rows(text); Type: FUNCTION; Schema: reporting_private; Owner: -
--

CREATE FUNCTION reporting_private.bi_rows(p_view text) RETURNS SETOF jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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


--
-- Name: FUNCTION bi_rows(p_view text); Type: COMMENT; Schema: reporting_private; Owner: -
--

COMMENT ON FUNCTION reporting_private.bi_rows(p_view text) IS 'A BI login''s read of a reporting view on a cluster: for the login''s organization and Roles (app_private.bi_context), it connects over dblink as svc_reporting_relay to the worker that holds that organization and calls reporting_private.bi_rows_of there with a proof bound to that worker''s backend (app_private.bi_relay_proof), so that the relay''s password alone reads nothing. It runs as svc_relay, whose connection the cluster bootstrap''s svc_bootstrap.relay_connect opens; a BI login may do neither.';


--
-- Name: bi_rows_of(text, text, text[], text); Type: FUNCTION; Schema: reporting_private; Owner: -
--

CREATE FUNCTION reporting_private.bi_rows_of(p_view text, p_organization_id text, p_roles text[], p_proof text) RETURNS SETOF jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
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
  $_$;


--
-- Name: FUNCTION bi_rows_of(p_view text, p_organization_id text, p_roles text[], p_proof text); Type: COMMENT; Schema: reporting_private; Owner: -
--

COMMENT ON FUNCTION reporting_private.bi_rows_of(p_view text, p_organization_id text, p_roles text[], p_proof text) IS 'On the worker that holds the organization: the rows of reporting view p_view for p_organization_id and Roles p_roles, only in a session of svc_reporting_relay that carries the coordinator''s proof for this backend (REPORTING_RELAY_ONLY otherwise). It signs that organization''s request context and reads the view over this node''s copies of the api views and its shards, so the policies of that context decide the rows; it runs as svc_relay, which reads nothing without that context.';


--
-- Name: invoices_billable_time(jsonb, text); Type: FUNCTION; Schema: skills; Owner: -
--

CREATE FUNCTION skills.invoices_billable_time(p_args jsonb, p_subject text) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_lines jsonb;
  v_entries jsonb;
begin
  if not exists (select from api.projects(p_args ->> 'project_id') p where p.id = p_args ->> 'project_id') then
    perform app_private.raise('SVN04', 'PROJECT_NOT_FOUND', format('no project %s in your organization', p_args ->> 'project_id'));
  end if;
  -- The project's approved billable entries: on one server through the view, which the planner
  -- filters by project and dates; on a cluster through the view's function (the organization's rows
  -- on its shards), as a coordinator cannot plan the view.
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    select coalesce(jsonb_agg(jsonb_build_object('member_id', g.member_id, 'minutes', g.minutes) order by g.member_id), '[]'),
           coalesce(jsonb_agg(to_jsonb(g.ids)), '[]')
      into v_lines, v_entries
      from (select e.member_id, sum((e.doc ->> 'minutes')::integer)::integer as minutes, array_agg(e.id order by e.id) as ids
              from api.time_entries e
             where e.project_id = p_args ->> 'project_id' and e.work_date between (p_args ->> 'from')::date and (p_args ->> 'to')::date
               and e.deleted_at is null and e.billable and e.status = 'approved'
             group by e.member_id) g;
  else
    select coalesce(jsonb_agg(jsonb_build_object('member_id', g.member_id, 'minutes', g.minutes) order by g.member_id), '[]'),
           coalesce(jsonb_agg(to_jsonb(g.ids)), '[]')
      into v_lines, v_entries
      from (select e.member_id, sum((e.doc ->> 'minutes')::integer)::integer as minutes, array_agg(e.id order by e.id) as ids
              from api.time_entries() e
             where e.project_id = p_args ->> 'project_id' and e.work_date between (p_args ->> 'from')::date and (p_args ->> 'to')::date
               and e.deleted_at is null and e.billable and e.status = 'approved'
             group by e.member_id) g;
  end if;
  return jsonb_build_object('summary', format('%s member(s) with approved billable time', jsonb_array_length(v_lines)),
    'resources', jsonb_build_array(jsonb_build_object('type', 'project', 'id', p_args ->> 'project_id')),
    'data', jsonb_build_object('members', v_lines));
end
$$;


--
-- Name: invoices_create_draft(jsonb, text); Type: FUNCTION; Schema: skills; Owner: -
--

CREATE FUNCTION skills.invoices_create_draft(p_args jsonb, p_subject text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_doc jsonb;
begin
  select i.doc into v_doc from api.invoice_create(p_args) i;
  return jsonb_build_object('summary', format('draft invoice %s, total %s %s', v_doc ->> 'id', v_doc ->> 'total', v_doc ->> 'currency'),
    'resources', jsonb_build_array(jsonb_build_object('type', 'invoice', 'id', v_doc ->> 'id')),
    'data', jsonb_build_object('invoice_id', v_doc ->> 'id', 'total', v_doc -> 'total', 'currency', v_doc -> 'currency'));
end
$$;


--
-- Name: tasks_assign(jsonb, text); Type: FUNCTION; Schema: skills; Owner: -
--

CREATE FUNCTION skills.tasks_assign(p_args jsonb, p_subject text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_doc jsonb;
begin
  -- expected_version is the If-Match of a confirmed proposal: a task changed since it was read is
  -- refused as updateTask refuses a stale ETag. Without it the assignment replaces what is there now.
  select t.doc into v_doc from api.task_update(p_args ->> 'task_id',
    array[coalesce((p_args ->> 'expected_version')::integer, (select x.version from api.tasks(p_args ->> 'task_id') x where x.id = p_args ->> 'task_id'))],
    jsonb_build_object('assignee_member_ids', p_args -> 'assignee_member_ids'), null) t;
  return jsonb_build_object('summary', format('%s assigned to %s', p_args ->> 'task_id',
      (select string_agg(a, ', ') from jsonb_array_elements_text(v_doc -> 'assignee_member_ids') a)),
    'resources', jsonb_build_array(jsonb_build_object('type', 'task', 'id', p_args ->> 'task_id')),
    'data', jsonb_build_object('task_id', p_args ->> 'task_id', 'assignee_member_ids', v_doc -> 'assignee_member_ids'));
end
$$;


--
-- Name: tasks_find_attention(jsonb, text); Type: FUNCTION; Schema: skills; Owner: -
--

CREATE FUNCTION skills.tasks_find_attention(p_args jsonb, p_subject text) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v__organization_id text := app.current_organization_id();
  v_project text := p_args ->> 'project_id';
  v_docs jsonb;
  v_tasks jsonb;
begin
  if not exists (select from api.projects(v_project) p where p.id = v_project) then
    perform app_private.raise('SVN04', 'PROJECT_NOT_FOUND', format('no project %s in your organization', v_project));
  end if;
  -- The project's tasks: on one server through the view, which the planner filters by project; on
  -- a cluster through the view's function (the organization's rows on its shards).
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    select coalesce(jsonb_object_agg(t.id, t.doc), '{}') into v_docs from api.tasks t where t.project_id = v_project and t.archived_at is null;
  else
    select coalesce(jsonb_object_agg(t.id, t.doc), '{}') into v_docs from api.tasks() t where t.project_id = v_project and t.archived_at is null;
  end if;
  with open_tasks as (
    select x.id, v_docs -> x.id as doc, x.status, x.due_at, x.version,
           (select count(*) from app.task_dependencies d
              join app.tasks p on p.organization_id = v__organization_id and p.id = d.predecessor_task_id
              join app.task_workflow_statuses s on s.organization_id = v__organization_id and s.workflow_id = p.workflow_id and s.status = p.status
             where d.organization_id = v__organization_id and d.task_id = x.id and s.category = 'open') as open_predecessors
      from app.tasks x
      join app.task_workflow_statuses s on s.organization_id = v__organization_id and s.workflow_id = x.workflow_id and s.status = x.status
     where x.organization_id = v__organization_id and x.project_id = v_project and v_docs ? x.id and s.category = 'open')
  select coalesce(jsonb_agg(jsonb_build_object('id', o.id, 'name', o.doc ->> 'name', 'status', o.status,
           'due_at', o.doc -> 'due_at', 'assignee_member_ids', coalesce(o.doc -> 'assignee_member_ids', '[]'),
           'transitions', coalesce((select jsonb_agg(tr ->> 'name') from jsonb_array_elements(o.doc -> 'transitions') tr), '[]'),
           'overdue', o.due_at < now(), 'open_predecessors', o.open_predecessors, 'version', o.version) order by o.due_at nulls last, o.id), '[]')
    into v_tasks
    from open_tasks o
   where o.due_at < now() or o.open_predecessors > 0 or o.status = 'blocked';
  return jsonb_build_object('summary', format('%s task(s) of %s need attention', jsonb_array_length(v_tasks), v_project),
    'resources', coalesce((select jsonb_agg(jsonb_build_object('type', 'task', 'id', x ->> 'id')) from jsonb_array_elements(v_tasks) x), '[]'),
    'data', jsonb_build_object('project_id', v_project,
      'manager_member_id', (select p.manager_member_id from api.projects(v_project) p where p.id = v_project), 'tasks', v_tasks));
end
$$;


--
-- Name: FUNCTION tasks_find_attention(p_args jsonb, p_subject text); Type: COMMENT; Schema: skills; Owner: -
--

COMMENT ON FUNCTION skills.tasks_find_attention(p_args jsonb, p_subject text) IS 'The tasks.find_attention skill: the open tasks of project p_args.project_id that need attention (overdue, blocked, or waiting on an open predecessor) among the tasks the client may read (api.tasks), with their transitions and versions; SVN04 PROJECT_NOT_FOUND for a project the client cannot see. It runs as svc_api because it reads workflow categories and task dependencies, which no api view shows and svc_runtime may not read; the worker calls it as svc_runtime under the run''s client''s signed context, and every read names that organization under svc_api''s policies.';


--
-- Name: tasks_transition(jsonb, text); Type: FUNCTION; Schema: skills; Owner: -
--

CREATE FUNCTION skills.tasks_transition(p_args jsonb, p_subject text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_doc jsonb;
begin
  select t.doc into v_doc from api.task_transition(p_args ->> 'task_id', p_args ->> 'transition', null, p_subject) t;
  return jsonb_build_object('summary', format('%s: %s → %s', p_args ->> 'task_id', p_args ->> 'transition', v_doc ->> 'status'),
    'resources', jsonb_build_array(jsonb_build_object('type', 'task', 'id', p_args ->> 'task_id')),
    'data', jsonb_build_object('task_id', p_args ->> 'task_id', 'status', v_doc ->> 'status'));
end
$$;


--
-- Name: time_missing_days(jsonb, text); Type: FUNCTION; Schema: skills; Owner: -
--

CREATE FUNCTION skills.time_missing_days(p_args jsonb, p_subject text) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_from date := (p_args ->> 'from')::date;
  v_to date := (p_args ->> 'to')::date;
  v_members jsonb;
begin
  if v_to < v_from or v_to > v_from + 92 then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'to must be on or after from, and at most 92 days later', '/to');
  end if;
  -- Who worked which day: on one server through the view, which the planner filters by dates; on
  -- a cluster through the view's function (the organization's rows on its shards).
  if to_regclass('pg_catalog.pg_dist_partition') is null then
    with days as (
      select d::date as day from generate_series(v_from, v_to, interval '1 day') d where extract(isodow from d) < 6),
    members as (
      select m.id, m.display_name from api.members m
       where m.status = 'active' and (p_subject is null or m.id = p_subject)),
    worked as (
      select distinct e.member_id, e.work_date from api.time_entries e
       where e.work_date between v_from and v_to and e.deleted_at is null)
    select coalesce(jsonb_agg(jsonb_build_object('member_id', x.id, 'display_name', x.display_name, 'missing_dates', x.missing)
                              order by x.id), '[]')
      into v_members
      from (select m.id, m.display_name, jsonb_agg(to_char(d.day, 'YYYY-MM-DD') order by d.day) as missing
              from members m cross join days d
             where not exists (select from worked w where w.member_id = m.id and w.work_date = d.day)
             group by m.id, m.display_name) x;
  else
    with days as (
      select d::date as day from generate_series(v_from, v_to, interval '1 day') d where extract(isodow from d) < 6),
    members as (
      select m.id, m.display_name from api.members() m
       where m.status = 'active' and (p_subject is null or m.id = p_subject)),
    worked as (
      select distinct e.member_id, e.work_date from api.time_entries() e
       where e.work_date between v_from and v_to and e.deleted_at is null)
    select coalesce(jsonb_agg(jsonb_build_object('member_id', x.id, 'display_name', x.display_name, 'missing_dates', x.missing)
                              order by x.id), '[]')
      into v_members
      from (select m.id, m.display_name, jsonb_agg(to_char(d.day, 'YYYY-MM-DD') order by d.day) as missing
              from members m cross join days d
             where not exists (select from worked w where w.member_id = m.id and w.work_date = d.day)
             group by m.id, m.display_name) x;
  end if;
  return jsonb_build_object('summary', format('%s member(s) with missing time from %s to %s', jsonb_array_length(v_members), v_from, v_to),
    'resources', coalesce((select jsonb_agg(jsonb_build_object('type', 'member', 'id', x ->> 'member_id')) from jsonb_array_elements(v_members) x), '[]'),
    'data', jsonb_build_object('from', v_from, 'to', v_to, 'members', v_members));
end
$$;


--
-- Name: add_node(text, integer); Type: PROCEDURE; Schema: svc_bootstrap; Owner: -
--

CREATE PROCEDURE svc_bootstrap.add_node(IN p_host text, IN p_port integer)
    LANGUAGE plpgsql
    AS $$
declare
  v_table regclass;
  v_failed text;
begin
  -- (A procedure that commits takes no SET clause: the search_path is set for each transaction.)
  perform pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
  -- Refused before the node is added, and checked again below under the lock.
  perform svc_bootstrap.reference_tables_trusted();
  if not exists (select from pg_dist_node where nodename = p_host and nodeport = p_port) then
    perform citus_add_node(p_host, p_port);
  elsif not exists (select from pg_dist_node where nodename = p_host and nodeport = p_port and isactive) then
    perform citus_activate_node(p_host, p_port);
  end if;
  commit;
  perform pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
  perform svc_bootstrap.prepare_workers();
  commit;
  perform pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
  -- Its reference tables now, checked and locked against DDL (above), before anything else asks
  -- Citus to copy them. If that fails, the node goes again: a node without them would have them
  -- copied by the next call of Citus's that wants them, as a superuser.
  begin
    for v_table in select p.logicalrelid::regclass from pg_dist_partition p where p.partmethod = 'n' and p.repmodel = 't' order by 1 loop
      execute format('lock table %s in share mode', v_table);
    end loop;
    perform svc_bootstrap.reference_tables_trusted();
    perform replicate_reference_tables('block_writes');
  exception when others then
    v_failed := sqlerrm;
  end;
  if v_failed is not null then
    perform citus_remove_node(p_host, p_port);
    commit;
    raise exception '%:% was not added: its reference tables were not copied: %', p_host, p_port, v_failed using errcode = '55000';
  end if;
end
$$;


--
-- Name: bi_login_create(text, text); Type: FUNCTION; Schema: svc_bootstrap; Owner: -
--

CREATE FUNCTION svc_bootstrap.bi_login_create(p_role text, p_password_verifier text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET "citus.enable_ddl_propagation" TO 'off'
    SET "citus.enable_create_role_propagation" TO 'off'
    AS $_$
begin
  if p_role is null or p_role !~ '^svc_bi_[0-9a-f]{12}$' then
    raise exception 'not a BI login''s name: %', p_role using errcode = '22023';
  end if;
  -- PostgreSQL's own form (RFC 5803): SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>.
  if p_password_verifier is null
     or p_password_verifier !~ '^SCRAM-SHA-256\$[1-9][0-9]{3,6}:[A-Za-z0-9+/]+=*\$[A-Za-z0-9+/]{43}=:[A-Za-z0-9+/]{43}=$' then
    raise exception 'a BI login''s password is a SCRAM-SHA-256 verifier' using errcode = '22023';
  end if;
  execute format('create role %I login password %L inherit nosuperuser nobypassrls nocreatedb nocreaterole connection limit 5 in role svc_reporting',
                 p_role, p_password_verifier);
  execute format('alter role %I set default_transaction_read_only = on', p_role);
  execute format('alter role %I set statement_timeout = %L', p_role, '30s');
  execute format('alter role %I set search_path = reporting', p_role);
end
$_$;


--
-- Name: bi_login_drop(text); Type: FUNCTION; Schema: svc_bootstrap; Owner: -
--

CREATE FUNCTION svc_bootstrap.bi_login_drop(p_role text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET "citus.enable_ddl_propagation" TO 'off'
    SET "citus.enable_create_role_propagation" TO 'off'
    AS $_$
begin
  if p_role is null or p_role !~ '^svc_bi_[0-9a-f]{12}$' then
    raise exception 'not a BI login''s name: %', p_role using errcode = '22023';
  end if;
  if not exists (select from pg_roles where rolname = p_role) then
    return;
  end if;
  if not pg_has_role(p_role, 'svc_reporting', 'member') then
    raise exception 'not a BI login: %', p_role using errcode = '22023';
  end if;
  perform pg_terminate_backend(a.pid) from pg_stat_activity a where a.usename = p_role;
  execute format('drop role %I', p_role);
end
$_$;


--
-- Name: prepare_workers(); Type: FUNCTION; Schema: svc_bootstrap; Owner: -
--

CREATE FUNCTION svc_bootstrap.prepare_workers() RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  v_failed text;
begin
  select string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') into v_failed
    from run_command_on_workers($w$
      do $b$
      begin
        set local search_path = pg_catalog, pg_temp;
        set local citus.enable_ddl_propagation = off;
        -- Roles and a parameter's grants are the server's, shared by its databases: each changed
        -- only when it differs, so that two databases prepared at once do not collide on them
        -- ("tuple concurrently updated").
        -- As db/bootstrap.sql on every node: a node Citus added carries the roles, not this grant.
        if not has_parameter_privilege('svc_schema', 'svc.gate_organization', 'set') then
          grant set on parameter "svc.gate_organization" to svc_schema;
        end if;
        -- Citus's connections to this node log in as svc_schema for a migration's statements, and
        -- as svc_mover for a rebalance's (the coordinator's change of a role made outside its
        -- database does not reach the workers).
        if exists (select from pg_authid where rolname = 'svc_schema' and (not rolcanlogin or rolpassword is not null)) then
          alter role svc_schema login password null;
        end if;
        if exists (select from pg_authid where rolname = 'svc_mover' and (not rolcanlogin or rolpassword is not null)) then
          alter role svc_mover login password null;
        end if;
        -- A worker's sessions of these roles are Citus's, for the coordinator's sessions, and their
        -- statements are text with every argument written out: a client's secret, a token's
        -- digest, every organization's data. Untracked, pg_stat_activity shows no session of
        -- another its statement; only a superuser may turn it on again (PGC_SUSET).
        if not exists (select from pg_db_role_setting s where s.setrole = 'svc_runtime'::regrole and s.setdatabase = 0 and 'track_activities=off' = any (s.setconfig)) then
          alter role svc_runtime set track_activities = off;
        end if;
        if not exists (select from pg_db_role_setting s where s.setrole = 'svc_worker'::regrole and s.setdatabase = 0 and 'track_activities=off' = any (s.setconfig)) then
          alter role svc_worker set track_activities = off;
        end if;
        if not exists (select from pg_db_role_setting s where s.setrole = 'svc_admin'::regrole and s.setdatabase = 0 and 'track_activities=off' = any (s.setconfig)) then
          alter role svc_admin set track_activities = off;
        end if;
        if to_regnamespace('svc_dblink') is not null then
          if not (select r.rolsuper from pg_namespace n join pg_roles r on r.oid = n.nspowner where n.nspname = 'svc_dblink') then
            execute format('alter schema svc_dblink owner to %I', current_user);
          end if;
          revoke all on schema svc_dblink from public;
          grant usage on schema svc_dblink to svc_relay;
          revoke execute on all functions in schema svc_dblink from public;
        end if;
        -- After DDL on the api schema, or a GRANT or REVOKE, by a superuser or a member of svc_api
        -- (the schema's owner), every copy of an api view on this node refuses to be read until it
        -- is made again (app_private.current_shard_views): the generation advances, holding the
        -- shard views' advisory lock shared until the change ends, so that a refresh
        -- (app_private.shard_views_create) waits for it. The copies' own DDL changes nothing. An
        -- event trigger runs its function as whoever makes the change, a superuser included: the
        -- function is this bootstrap's, which no role of the service may change, and it runs no
        -- function of theirs.
        create schema if not exists svc_bootstrap;
        revoke all on schema svc_bootstrap from public;
        if not (select r.rolsuper from pg_namespace n join pg_roles r on r.oid = n.nspowner where n.nspname = 'svc_bootstrap') then
          raise exception 'schema svc_bootstrap belongs to a role that is not a superuser: drop it, then run the bootstrap again';
        end if;
        create or replace function svc_bootstrap.shard_views_stale() returns event_trigger
            language plpgsql
            set search_path to 'pg_catalog', 'pg_temp'
            as $f$
        begin
          if not (exists (select from pg_roles where rolname = current_user and rolsuper)
                  or pg_has_role(current_user, 'svc_api', 'MEMBER'))
             or current_setting('svc.making_shard_views', true) = 'on' then
            return;
          end if;
          if tg_event = 'sql_drop' then
            if not exists (select from pg_event_trigger_dropped_objects() o where o.schema_name = 'api') then
              return;
            end if;
          elsif tg_tag not in ('GRANT', 'REVOKE')
                and not exists (select from pg_event_trigger_ddl_commands() c where c.schema_name = 'api') then
            return;
          end if;
          if to_regclass('app_private.shard_views_generation') is not null then
            perform pg_advisory_xact_lock_shared(2026, 37);
            perform nextval('app_private.shard_views_generation');
          end if;
        end
        $f$;
        revoke all on function svc_bootstrap.shard_views_stale() from public;
        drop event trigger if exists shard_views_stale;
        drop event trigger if exists shard_views_dropped;
        create event trigger shard_views_stale on ddl_command_end execute function svc_bootstrap.shard_views_stale();
        create event trigger shard_views_dropped on sql_drop execute function svc_bootstrap.shard_views_stale();
        -- A shard made on this node (a move's, a copy's) gets at once what its table's grants do not
        -- carry: the statements Citus sends a shard name the columns that have defaults, so svc_api
        -- inserts into those on the shard (app_private.citus_shard_privileges grants the same on
        -- every shard). Without it a moved organization's creates were refused ("permission denied
        -- for table projects_102195") until the workers were prepared again.
        create or replace function svc_bootstrap.shard_privileges() returns event_trigger
            language plpgsql
            set search_path to 'pg_catalog', 'pg_temp'
            as $f$
        declare
          c record;
          v_columns text;
          v_making text := current_setting('svc.making_shard_views', true);
        begin
          for c in
            select d.objid::regclass as shard, s.logicalrelid as rel
              from pg_event_trigger_ddl_commands() d
              join pg_dist_shard s on s.shardid = (regexp_match(d.object_identity, '_(\d{1,18})$'))[1]::bigint
              join pg_dist_partition p on p.logicalrelid = s.logicalrelid and p.partmethod = 'h'
             where d.command_tag = 'CREATE TABLE' and d.object_type = 'table'
               and d.object_identity = shard_name(s.logicalrelid, s.shardid)
          loop
            select string_agg(quote_ident(a.attname), ', ' order by a.attnum) into v_columns
              from pg_attribute a
             where a.attrelid = c.rel and a.attnum > 0 and not a.attisdropped and (a.atthasdef or a.attidentity <> '')
               and has_table_privilege('svc_api', c.rel, 'insert') is false
               and exists (select from pg_attribute x where x.attrelid = c.rel and has_column_privilege('svc_api', c.rel, x.attnum, 'insert'))
               and not has_column_privilege('svc_api', c.rel, a.attnum, 'insert');
            if v_columns is not null then
              -- A shard's own grant leaves the api views' copies current (svc_bootstrap.shard_views_stale).
              perform set_config('svc.making_shard_views', 'on', true);
              execute format('grant insert (%s) on %s to svc_api', v_columns, c.shard);
              perform set_config('svc.making_shard_views', coalesce(v_making, ''), true);
            end if;
          end loop;
        end
        $f$;
        revoke all on function svc_bootstrap.shard_privileges() from public;
        drop event trigger if exists shard_privileges;
        create event trigger shard_privileges on ddl_command_end when tag in ('CREATE TABLE') execute function svc_bootstrap.shard_privileges();
      end
      $b$ $w$)
   where not success;
  if v_failed is not null then
    raise exception 'preparing the workers failed: %', v_failed;
  end if;
end
$_$;


--
-- Name: rebalance_start(text); Type: FUNCTION; Schema: svc_bootstrap; Owner: -
--

CREATE FUNCTION svc_bootstrap.rebalance_start(p_shard_transfer_mode text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  -- Started by another role, the moved groups would arrive empty (row security): refuse instead.
  if current_user <> 'svc_mover' then
    raise exception 'svc_bootstrap.rebalance_start runs as svc_mover, not %', current_user using errcode = '42501';
  end if;
  -- The one transfer that works under forced row security (app_private.citus_add_worker says why).
  if p_shard_transfer_mode is distinct from 'block_writes' then
    raise exception 'shard transfer mode %: only block_writes moves tables that force row security', p_shard_transfer_mode using errcode = '22023';
  end if;
  -- The reference tables are on every node already (svc_bootstrap.add_node copies them): a
  -- rebalance would copy them as a superuser.
  if exists (select from pg_dist_node n where n.isactive and n.noderole = 'primary'
               and exists (select from pg_dist_partition d join pg_dist_shard s on s.logicalrelid = d.logicalrelid
                            where d.partmethod = 'n' and d.repmodel = 't'
                              and not exists (select from pg_dist_placement p where p.shardid = s.shardid and p.groupid = n.groupid))) then
    raise exception 'a node lacks the reference tables: a superuser copies them (call svc_bootstrap.add_node(host, port) again)' using errcode = '55000';
  end if;
  execute format('select citus_rebalance_start(shard_transfer_mode => %L)', p_shard_transfer_mode);
end
$$;


--
-- Name: reference_tables_trusted(); Type: FUNCTION; Schema: svc_bootstrap; Owner: -
--

CREATE FUNCTION svc_bootstrap.reference_tables_trusted() RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_untrusted text;
begin
  -- Everything a copied row is checked by, followed to the end: the tables' checks and generated
  -- columns, their columns' types, and from each check and type what it names (a type a check
  -- casts to, a domain's base type and its own checks, an array's element, a composite's
  -- attributes, a range's subtype), until nothing new is found.
  with recursive ref as (
    select p.logicalrelid as rel from pg_dist_partition p where p.partmethod = 'n' and p.repmodel = 't'
  ), reach(classid, objid, what) as (
    select 'pg_constraint'::regclass, c.oid, format('%s, check %s', r.rel::regclass, c.conname)
      from ref r join pg_constraint c on c.conrelid = r.rel where c.contype = 'c'
    union
    select 'pg_attrdef'::regclass, d.oid, format('%s, generated column %s', r.rel::regclass, a.attname)
      from ref r join pg_attrdef d on d.adrelid = r.rel
      join pg_attribute a on a.attrelid = r.rel and a.attnum = d.adnum where a.attgenerated <> ''
    union
    select 'pg_type'::regclass, a.atttypid, format('%s.%s', r.rel::regclass, a.attname)
      from ref r join pg_attribute a on a.attrelid = r.rel and a.attnum > 0 and not a.attisdropped
    union
    select x.classid, x.objid, x.what from reach h
      cross join lateral (
        -- what a check or a generated column names
        select 'pg_type'::regclass, d.refobjid, h.what from pg_depend d
         where h.classid <> 'pg_type'::regclass and d.classid = h.classid and d.objid = h.objid and d.refclassid = 'pg_type'::regclass
        -- what a type is made of
        union all
        select 'pg_constraint'::regclass, c.oid, format('domain %s, check %s', c.contypid::regtype, c.conname)
          from pg_constraint c where h.classid = 'pg_type'::regclass and c.contypid = h.objid
        union all
        select 'pg_type'::regclass, t.typbasetype, h.what from pg_type t where h.classid = 'pg_type'::regclass and t.oid = h.objid and t.typbasetype <> 0
        union all
        select 'pg_type'::regclass, t.typelem, h.what from pg_type t where h.classid = 'pg_type'::regclass and t.oid = h.objid and t.typelem <> 0
        union all
        select 'pg_type'::regclass, a.atttypid, h.what from pg_type t join pg_attribute a on a.attrelid = t.typrelid and a.attnum > 0
         where h.classid = 'pg_type'::regclass and t.oid = h.objid and t.typrelid <> 0
        union all
        select 'pg_type'::regclass, g.rngsubtype, h.what from pg_range g where h.classid = 'pg_type'::regclass and g.rngtypid = h.objid
      ) x(classid, objid, what)
  ), called as (
    select h.what, d.refobjid as fn from reach h
      join pg_depend d on d.classid = h.classid and d.objid = h.objid and d.refclassid = 'pg_proc'::regclass
     where h.classid <> 'pg_type'::regclass
    union all
    select h.what, o.oprcode::oid from reach h
      join pg_depend d on d.classid = h.classid and d.objid = h.objid and d.refclassid = 'pg_operator'::regclass
      join pg_operator o on o.oid = d.refobjid
     where h.classid <> 'pg_type'::regclass
    union all
    -- a range's canonical function runs on each value
    select h.what, g.rngcanonical::oid from reach h join pg_range g on g.rngtypid = h.objid
     where h.classid = 'pg_type'::regclass and g.rngcanonical <> 0
  )
  select string_agg(distinct format('%s calls %s', c.what, c.fn::regprocedure), '; ') into v_untrusted
    from called c join pg_proc p on p.oid = c.fn
   where not (p.pronamespace = 'pg_catalog'::regnamespace and p.prolang = (select l.oid from pg_language l where l.lanname = 'internal')
              and p.provolatile = 'i'
              and not exists (select from pg_depend x where x.classid = 'pg_proc'::regclass and x.objid = p.oid and x.deptype = 'e'));
  if v_untrusted is not null then
    raise exception 'a reference table runs a function not built into PostgreSQL, or not immutable, when Citus copies it as a superuser: %', v_untrusted
      using errcode = '42501', hint = 'a reference table''s checks, generated columns and domains call only immutable functions built into PostgreSQL';
  end if;
end
$$;


--
-- Name: relay_connect(integer); Type: FUNCTION; Schema: svc_bootstrap; Owner: -
--

CREATE FUNCTION svc_bootstrap.relay_connect(p_nodeid integer) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  n record;
  v_name text := 'svc_bi_relay_' || pg_backend_pid();
begin
  select d.nodename, d.nodeport into n from pg_dist_node d where d.nodeid = p_nodeid and d.isactive and d.noderole = 'primary';
  if n.nodename is null then
    raise exception 'no active primary node %', p_nodeid using errcode = '22023';
  end if;
  if v_name = any (coalesce(svc_dblink.dblink_get_connections(), '{}')) then
    perform svc_dblink.dblink_disconnect(v_name);
  end if;
  -- Values quoted as libpq reads them: in single quotes, a backslash and a quote escaped.
  perform svc_dblink.dblink_connect_u(v_name, concat_ws(' ',
    format('host=%s port=%s dbname=%s user=svc_reporting_relay',
           '''' || replace(replace(n.nodename, '\', '\\'), '''', '\''') || '''', n.nodeport,
           '''' || replace(replace(current_database(), '\', '\\'), '''', '\''') || ''''),
    nullif(current_setting('citus.node_conninfo', true), ''),
    (select a.authinfo from pg_dist_authinfo a
      where a.rolename = 'svc_reporting_relay' and a.nodeid in (p_nodeid, 0) order by a.nodeid desc limit 1)));
  return v_name;
end
$$;


--
-- Name: remove_node(text, integer); Type: PROCEDURE; Schema: svc_bootstrap; Owner: -
--

CREATE PROCEDURE svc_bootstrap.remove_node(IN p_host text, IN p_port integer)
    LANGUAGE plpgsql
    AS $$
declare
  v_groups integer;
begin
  perform pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
  if not exists (select from pg_dist_node where nodename = p_host and nodeport = p_port and groupid <> 0) then
    raise exception '%:% is not a worker of this cluster', p_host, p_port using errcode = '22023';
  end if;
  select count(distinct s.shardid) into v_groups
    from pg_dist_node n join pg_dist_placement pl on pl.groupid = n.groupid
    join pg_dist_shard s on s.shardid = pl.shardid join pg_dist_partition d on d.logicalrelid = s.logicalrelid
   where n.nodename = p_host and n.nodeport = p_port and d.partmethod = 'h'
     and s.logicalrelid = 'app.organizations'::regclass;
  if v_groups > 0 then
    if (select shouldhaveshards from pg_dist_node where nodename = p_host and nodeport = p_port) then
      perform citus_set_node_property(p_host, p_port, 'shouldhaveshards', false);
    end if;
    commit;
    raise exception '%:% holds % shard group(s), and gets no new one: the deploy login moves them off (call app_private.citus_drain_worker(%L, %s)), then call this again',
      p_host, p_port, v_groups, p_host, p_port using errcode = '55000';
  end if;
  -- The shards the moves left behind (Citus drops them later), then the node.
  call citus_cleanup_orphaned_resources();
  commit;
  perform pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
  perform citus_remove_node(p_host, p_port);
end
$$;


--
-- Name: api_clients; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.api_clients (
    id text DEFAULT app_private.new_id('apic'::text) NOT NULL,
    organization_id text NOT NULL,
    name text NOT NULL,
    description text,
    license_level text NOT NULL,
    license_source text NOT NULL,
    license_status text DEFAULT 'active'::text NOT NULL,
    status text DEFAULT 'active'::text NOT NULL,
    svc_roles text[] NOT NULL,
    authorization_version integer DEFAULT 1 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    deleted_at timestamp with time zone,
    CONSTRAINT api_clients_deleted_at_iff_deleted CHECK (((status = 'deleted'::text) = (deleted_at IS NOT NULL))),
    CONSTRAINT api_clients_included_license_is_manager CHECK (((license_source <> 'included'::text) OR (license_level = 'manager'::text))),
    CONSTRAINT api_clients_license_level_valid CHECK ((license_level = ANY (ARRAY['regular'::text, 'manager'::text]))),
    CONSTRAINT api_clients_license_source_valid CHECK ((license_source = ANY (ARRAY['included'::text, 'purchased'::text]))),
    CONSTRAINT api_clients_license_status_valid CHECK ((license_status = ANY (ARRAY['active'::text, 'released'::text]))),
    CONSTRAINT api_clients_name_length CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT api_clients_roles_allowed_by_license CHECK (((cardinality(svc_roles) >= 1) AND
CASE license_level
    WHEN 'regular'::text THEN (svc_roles <@ ARRAY['member'::text])
    ELSE (svc_roles <@ ARRAY['member'::text, 'manager'::text, 'finance'::text, 'hr'::text])
END)),
    CONSTRAINT api_clients_status_valid CHECK ((status = ANY (ARRAY['active'::text, 'disabled'::text, 'deleted'::text])))
);

ALTER TABLE ONLY app.api_clients FORCE ROW LEVEL SECURITY;


--
-- Name: client_secrets; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.client_secrets (
    id text DEFAULT app_private.new_id('csec'::text) NOT NULL,
    organization_id text NOT NULL,
    client_id text NOT NULL,
    slot smallint NOT NULL,
    secret_sha256 bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    revoked_at timestamp with time zone,
    CONSTRAINT client_secrets_digest_length CHECK ((length(secret_sha256) = 32)),
    CONSTRAINT client_secrets_slot_valid CHECK ((slot = ANY (ARRAY[1, 2])))
);

ALTER TABLE ONLY app.client_secrets FORCE ROW LEVEL SECURITY;


--
-- Name: customers; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.customers (
    organization_id text NOT NULL,
    id text NOT NULL,
    kind text NOT NULL,
    name text NOT NULL,
    delivery_email text,
    currency text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    deleted_at timestamp with time zone,
    CONSTRAINT customers_currency_iso4217 CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT customers_delivery_email_format CHECK ((delivery_email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'::text)),
    CONSTRAINT customers_id_prefix_matches_kind CHECK ((id ~~
CASE kind
    WHEN 'company'::text THEN 'com\_%'::text
    ELSE 'cus\_%'::text
END)),
    CONSTRAINT customers_kind_valid CHECK ((kind = ANY (ARRAY['company'::text, 'billing'::text]))),
    CONSTRAINT customers_name_length CHECK (((length(name) >= 1) AND (length(name) <= 200)))
);

ALTER TABLE ONLY app.customers FORCE ROW LEVEL SECURITY;


--
-- Name: file_chunks; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.file_chunks (
    organization_id text NOT NULL,
    upload_id text NOT NULL,
    seq integer NOT NULL,
    data bytea NOT NULL,
    linked_resource_type text NOT NULL,
    client_id text NOT NULL,
    CONSTRAINT file_chunks_seq_not_negative CHECK ((seq >= 0))
);

ALTER TABLE ONLY app.file_chunks FORCE ROW LEVEL SECURITY;


--
-- Name: file_contents; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.file_contents (
    organization_id text NOT NULL,
    file_id text NOT NULL,
    content bytea NOT NULL,
    linked_resource_type text NOT NULL
);

ALTER TABLE ONLY app.file_contents FORCE ROW LEVEL SECURITY;


--
-- Name: file_policies; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.file_policies (
    organization_id text NOT NULL,
    max_size_bytes bigint NOT NULL,
    allowed_content_types text[] NOT NULL,
    require_scan boolean DEFAULT false NOT NULL,
    CONSTRAINT file_policies_max_size_range CHECK (((max_size_bytes >= 1) AND (max_size_bytes <= '5368709120'::bigint))),
    CONSTRAINT file_policies_types_bounded CHECK (((cardinality(allowed_content_types) >= 1) AND (cardinality(allowed_content_types) <= 100)))
);

ALTER TABLE ONLY app.file_policies FORCE ROW LEVEL SECURITY;


--
-- Name: idempotency_keys; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.idempotency_keys (
    organization_id text NOT NULL,
    client_id text NOT NULL,
    method text NOT NULL,
    route text NOT NULL,
    key text NOT NULL,
    fingerprint text NOT NULL,
    response_status integer,
    response_headers jsonb,
    response_body text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone DEFAULT (now() + '24:00:00'::interval) NOT NULL,
    CONSTRAINT idempotency_keys_key_format CHECK ((key ~ '^[\x20-\x7e]{1,255}$'::text))
);

ALTER TABLE ONLY app.idempotency_keys FORCE ROW LEVEL SECURITY;


--
-- Name: payments; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.payments (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('pay'::text) NOT NULL,
    invoice_id text NOT NULL,
    amount numeric NOT NULL,
    currency text NOT NULL,
    received_date date NOT NULL,
    method text NOT NULL,
    external_reference text,
    created_by_client_id text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT payments_amount_positive CHECK ((amount > (0)::numeric)),
    CONSTRAINT payments_external_reference_length CHECK ((length(external_reference) <= 255)),
    CONSTRAINT payments_method_length CHECK (((length(method) >= 1) AND (length(method) <= 50)))
);

ALTER TABLE ONLY app.payments FORCE ROW LEVEL SECURITY;


--
-- Name: run_events; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.run_events (
    organization_id text NOT NULL,
    run_id text NOT NULL,
    seq integer NOT NULL,
    type text NOT NULL,
    data jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    client_id text NOT NULL,
    CONSTRAINT run_events_type_valid CHECK ((type = ANY (ARRAY['run.started'::text, 'run.progress'::text, 'run.tool.started'::text, 'run.tool.completed'::text, 'run.output.delta'::text, 'run.requires_action'::text, 'run.completed'::text, 'run.failed'::text, 'run.cancelled'::text])))
);

ALTER TABLE ONLY app.run_events FORCE ROW LEVEL SECURITY;


--
-- Name: task_activity; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.task_activity (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('tact'::text) NOT NULL,
    task_id text NOT NULL,
    kind text NOT NULL,
    transition text,
    from_status text,
    to_status text,
    actor_client_id text NOT NULL,
    subject_member_id text,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE ONLY app.task_activity FORCE ROW LEVEL SECURITY;


--
-- Name: task_notes; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.task_notes (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('tnote'::text) NOT NULL,
    task_id text NOT NULL,
    text text NOT NULL,
    subject_member_id text,
    author_client_id text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT task_notes_text_length CHECK (((length(text) >= 1) AND (length(text) <= 20000)))
);

ALTER TABLE ONLY app.task_notes FORCE ROW LEVEL SECURITY;


--
-- Name: task_workflow_statuses; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.task_workflow_statuses (
    organization_id text NOT NULL,
    workflow_id text NOT NULL,
    status text NOT NULL,
    category text NOT NULL,
    is_initial boolean DEFAULT false NOT NULL,
    CONSTRAINT task_workflow_statuses_category_valid CHECK ((category = ANY (ARRAY['open'::text, 'done'::text, 'cancelled'::text]))),
    CONSTRAINT task_workflow_statuses_format CHECK ((status ~ '^[a-z][a-z0-9_]{0,40}$'::text))
);

ALTER TABLE ONLY app.task_workflow_statuses FORCE ROW LEVEL SECURITY;


--
-- Name: task_workflows; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.task_workflows (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('twf'::text) NOT NULL,
    name text NOT NULL,
    is_default boolean DEFAULT false NOT NULL,
    allow_cross_project_dependencies boolean DEFAULT false NOT NULL,
    members_may_add_notes boolean DEFAULT false NOT NULL
);

ALTER TABLE ONLY app.task_workflows FORCE ROW LEVEL SECURITY;


--
-- Name: ticket_search; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.ticket_search (
    organization_id text NOT NULL,
    ticket_id text NOT NULL,
    public_doc tsvector NOT NULL,
    internal_doc tsvector DEFAULT ''::tsvector NOT NULL
);

ALTER TABLE ONLY app.ticket_search FORCE ROW LEVEL SECURITY;


--
-- Name: ticket_statuses; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.ticket_statuses (
    organization_id text NOT NULL,
    status text NOT NULL,
    category text NOT NULL,
    is_initial boolean DEFAULT false NOT NULL,
    CONSTRAINT ticket_statuses_category_valid CHECK ((category = ANY (ARRAY['open'::text, 'pending'::text, 'solved'::text, 'closed'::text]))),
    CONSTRAINT ticket_statuses_format CHECK ((status ~ '^[a-z][a-z0-9_]{0,40}$'::text))
);

ALTER TABLE ONLY app.ticket_statuses FORCE ROW LEVEL SECURITY;


--
-- Name: time_entry_audit; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.time_entry_audit (
    organization_id text NOT NULL,
    id bigint NOT NULL,
    time_entry_id text NOT NULL,
    action text NOT NULL,
    actor_client_id text NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE ONLY app.time_entry_audit FORCE ROW LEVEL SECURITY;


--
-- Name: time_entry_audit_id_seq; Type: SEQUENCE; Schema: app; Owner: -
--

ALTER TABLE app.time_entry_audit ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.time_entry_audit_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: access_tokens; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.access_tokens (
    organization_id text NOT NULL,
    token_sha256 bytea NOT NULL,
    client_id text NOT NULL,
    secret_id text NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT access_tokens_digest_length CHECK ((length(token_sha256) = 32))
);

ALTER TABLE ONLY app_private.access_tokens FORCE ROW LEVEL SECURITY;


--
-- Name: admin_notifications_id_seq; Type: SEQUENCE; Schema: app_private; Owner: -
--

ALTER TABLE app_private.admin_notifications ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_private.admin_notifications_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: agent_skills; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.agent_skills (
    name text NOT NULL,
    description text NOT NULL,
    required_roles text[] NOT NULL,
    license_level text NOT NULL,
    capability text,
    subject_dependent boolean NOT NULL,
    supports_subject boolean NOT NULL,
    writes boolean NOT NULL,
    parameters_schema jsonb NOT NULL,
    function_name text NOT NULL,
    CONSTRAINT agent_skills_license_level_valid CHECK ((license_level = ANY (ARRAY['regular'::text, 'manager'::text]))),
    CONSTRAINT agent_skills_name_format CHECK ((name ~ '^[a-z]+\.[a-z_]+$'::text))
);


--
-- Name: COLUMN agent_skills.required_roles; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON COLUMN app_private.agent_skills.required_roles IS 'one of these Roles is needed (as for an operation)';


--
-- Name: bi_logins; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.bi_logins (
    organization_id text NOT NULL,
    role_name text NOT NULL,
    svc_roles text[] NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT bi_logins_role_name_format CHECK ((role_name ~ '^svc_bi_[a-z0-9]{12}$'::text)),
    CONSTRAINT bi_logins_roles_valid CHECK (((svc_roles <@ '{member,manager,finance,hr}'::text[]) AND (cardinality(svc_roles) > 0)))
);

ALTER TABLE ONLY app_private.bi_logins FORCE ROW LEVEL SECURITY;


--
-- Name: client_directory; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.client_directory (
    client_id text NOT NULL,
    organization_id text NOT NULL
);

ALTER TABLE ONLY app_private.client_directory FORCE ROW LEVEL SECURITY;


--
-- Name: context_keys; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.context_keys (
    id boolean DEFAULT true NOT NULL,
    inner_key bytea NOT NULL,
    outer_key bytea NOT NULL,
    CONSTRAINT context_keys_one_row CHECK (id)
);


--
-- Name: currencies; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.currencies (
    code text NOT NULL,
    minor_units smallint NOT NULL,
    CONSTRAINT currencies_code_format CHECK ((code ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT currencies_minor_units_range CHECK (((minor_units >= 0) AND (minor_units <= 4)))
);


--
-- Name: event_types; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.event_types (
    name text NOT NULL,
    resource_type text NOT NULL,
    emitted_by text[] NOT NULL,
    description text NOT NULL,
    subscribable boolean DEFAULT true NOT NULL,
    CONSTRAINT event_types_name_format CHECK ((name ~ '^[a-z_]+(\.[a-z_]+)+$'::text))
);


--
-- Name: invoice_number_counters; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.invoice_number_counters (
    organization_id text NOT NULL,
    last_number bigint NOT NULL,
    CONSTRAINT invoice_number_counters_positive CHECK ((last_number > 0))
);

ALTER TABLE ONLY app_private.invoice_number_counters FORCE ROW LEVEL SECURITY;


--
-- Name: job_outbox; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.job_outbox (
    organization_id text NOT NULL,
    id text DEFAULT app_private.new_id('job'::text) NOT NULL,
    task text NOT NULL,
    payload json NOT NULL,
    job_key text,
    max_attempts integer NOT NULL,
    run_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE ONLY app_private.job_outbox FORCE ROW LEVEL SECURITY;


--
-- Name: TABLE job_outbox; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.job_outbox IS 'On Citus: jobs queued on a worker, moved into graphile-worker''s queue on the coordinator by app_private.job_outbox_drain. Empty on one server.';


--
-- Name: rate_limit_buckets; Type: TABLE; Schema: app_private; Owner: -
--

CREATE UNLOGGED TABLE app_private.rate_limit_buckets (
    key text NOT NULL,
    window_start bigint NOT NULL,
    hits integer NOT NULL
);


--
-- Name: relay_keys; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.relay_keys (
    id integer DEFAULT 1 NOT NULL,
    inner_key bytea NOT NULL,
    outer_key bytea NOT NULL,
    CONSTRAINT relay_keys_id_check CHECK ((id = 1)),
    CONSTRAINT relay_keys_inner_key_check CHECK ((length(inner_key) = 32)),
    CONSTRAINT relay_keys_outer_key_check CHECK ((length(outer_key) = 32))
);


--
-- Name: TABLE relay_keys; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.relay_keys IS 'On Citus: the key of the BI relay''s proofs, the same on every node (a reference table); read by superusers only.';


--
-- Name: run_wake_key; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.run_wake_key (
    singleton boolean DEFAULT true NOT NULL,
    key bytea DEFAULT decode(replace(((gen_random_uuid())::text || (gen_random_uuid())::text), '-'::text, ''::text), 'hex'::text) NOT NULL,
    CONSTRAINT run_wake_key_singleton_check CHECK (singleton)
);


--
-- Name: TABLE run_wake_key; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.run_wake_key IS 'The key of svc_run_events payloads (244 random bits); one row.';


--
-- Name: signing_keys; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.signing_keys (
    kid text NOT NULL,
    alg text NOT NULL,
    public_jwk jsonb NOT NULL,
    private_jwk_sealed text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    retired_at timestamp with time zone
);


--
-- Name: ticket_number_counters; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.ticket_number_counters (
    organization_id text NOT NULL,
    last_number bigint DEFAULT 0 NOT NULL
);

ALTER TABLE ONLY app_private.ticket_number_counters FORCE ROW LEVEL SECURITY;


--
-- Name: _private_job_queues; Type: TABLE; Schema: graphile_worker; Owner: -
--

CREATE TABLE graphile_worker._private_job_queues (
    id integer NOT NULL,
    queue_name text NOT NULL,
    locked_at timestamp with time zone,
    locked_by text,
    is_available boolean GENERATED ALWAYS AS ((locked_at IS NULL)) STORED NOT NULL,
    CONSTRAINT job_queues_queue_name_check CHECK ((length(queue_name) <= 128))
);


--
-- Name: _private_known_crontabs; Type: TABLE; Schema: graphile_worker; Owner: -
--

CREATE TABLE graphile_worker._private_known_crontabs (
    identifier text NOT NULL,
    known_since timestamp with time zone NOT NULL,
    last_execution timestamp with time zone
);


--
-- Name: _private_tasks; Type: TABLE; Schema: graphile_worker; Owner: -
--

CREATE TABLE graphile_worker._private_tasks (
    id integer NOT NULL,
    identifier text NOT NULL,
    CONSTRAINT tasks_identifier_check CHECK ((length(identifier) <= 128))
);


--
-- Name: job_queues_id_seq; Type: SEQUENCE; Schema: graphile_worker; Owner: -
--

ALTER TABLE graphile_worker._private_job_queues ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME graphile_worker.job_queues_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: jobs; Type: VIEW; Schema: graphile_worker; Owner: -
--

CREATE VIEW graphile_worker.jobs AS
 SELECT jobs.id,
    job_queues.queue_name,
    tasks.identifier AS task_identifier,
    jobs.priority,
    jobs.run_at,
    jobs.attempts,
    jobs.max_attempts,
    jobs.last_error,
    jobs.created_at,
    jobs.updated_at,
    jobs.key,
    jobs.locked_at,
    jobs.locked_by,
    jobs.revision,
    jobs.flags
   FROM ((graphile_worker._private_jobs jobs
     JOIN graphile_worker._private_tasks tasks ON ((tasks.id = jobs.task_id)))
     LEFT JOIN graphile_worker._private_job_queues job_queues ON ((job_queues.id = jobs.job_queue_id)));


--
-- Name: jobs_id_seq1; Type: SEQUENCE; Schema: graphile_worker; Owner: -
--

ALTER TABLE graphile_worker._private_jobs ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME graphile_worker.jobs_id_seq1
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: migrations; Type: TABLE; Schema: graphile_worker; Owner: -
--

CREATE TABLE graphile_worker.migrations (
    id integer NOT NULL,
    ts timestamp with time zone DEFAULT now() NOT NULL,
    breaking boolean DEFAULT false NOT NULL
);


--
-- Name: tasks_id_seq; Type: SEQUENCE; Schema: graphile_worker; Owner: -
--

ALTER TABLE graphile_worker._private_tasks ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME graphile_worker.tasks_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_migrations (
    version character varying NOT NULL
);


--
-- Name: approvals; Type: VIEW; Schema: reporting; Owner: -
--

CREATE VIEW reporting.approvals WITH (security_barrier='true') AS
 SELECT r.approval_id,
    r.type,
    r.status,
    r.resource_type,
    r.resource_id,
    r.requested_at,
    r.decided_at,
    r.decision
   FROM reporting_private.bi_rows('approvals'::text) j(j),
    LATERAL jsonb_to_record(j.j) r(approval_id text, type text, status text, resource_type text, resource_id text, requested_at timestamp with time zone, decided_at timestamp with time zone, decision text);


--
-- Name: invoices; Type: VIEW; Schema: reporting; Owner: -
--

CREATE VIEW reporting.invoices WITH (security_barrier='true') AS
 SELECT r.invoice_id,
    r.number,
    r.status,
    r.customer_id,
    r.currency,
    r.issue_date,
    r.due_date,
    r.total,
    r.amount_paid,
    r.amount_due
   FROM reporting_private.bi_rows('invoices'::text) j(j),
    LATERAL jsonb_to_record(j.j) r(invoice_id text, number text, status text, customer_id text, currency text, issue_date date, due_date date, total numeric, amount_paid numeric, amount_due numeric);


--
-- Name: members; Type: VIEW; Schema: reporting; Owner: -
--

CREATE VIEW reporting.members WITH (security_barrier='true') AS
 SELECT r.member_id,
    r.display_name,
    r.status,
    r.job_title
   FROM reporting_private.bi_rows('members'::text) j(j),
    LATERAL jsonb_to_record(j.j) r(member_id text, display_name text, status text, job_title text);


--
-- Name: payments; Type: VIEW; Schema: reporting; Owner: -
--

CREATE VIEW reporting.payments WITH (security_barrier='true') AS
 SELECT r.payment_id,
    r.invoice_id,
    r.amount,
    r.currency,
    r.received_date,
    r.method
   FROM reporting_private.bi_rows('payments'::text) j(j),
    LATERAL jsonb_to_record(j.j) r(payment_id text, invoice_id text, amount numeric, currency text, received_date date, method text);


--
-- Name: projects; Type: VIEW; Schema: reporting; Owner: -
--

CREATE VIEW reporting.projects WITH (security_barrier='true') AS
 SELECT r.project_id,
    r.code,
    r.name,
    r.status,
    r.start_date,
    r.end_date,
    r.customer_id,
    r.manager_member_id,
    r.created_at,
    r.updated_at
   FROM reporting_private.bi_rows('projects'::text) j(j),
    LATERAL jsonb_to_record(j.j) r(project_id text, code text, name text, status text, start_date date, end_date date, customer_id text, manager_member_id text, created_at timestamp with time zone, updated_at timestamp with time zone);


--
-- Name: tasks; Type: VIEW; Schema: reporting; Owner: -
--

CREATE VIEW reporting.tasks WITH (security_barrier='true') AS
 SELECT r.task_id,
    r.project_id,
    r.name,
    r.status,
    r.priority,
    r.due_at,
    r.completed_at,
    r.archived,
    r.assignee_member_ids,
    r.created_at
   FROM reporting_private.bi_rows('tasks'::text) j(j),
    LATERAL jsonb_to_record(j.j) r(task_id text, project_id text, name text, status text, priority text, due_at timestamp with time zone, completed_at timestamp with time zone, archived boolean, assignee_member_ids text[], created_at timestamp with time zone);


--
-- Name: tickets; Type: VIEW; Schema: reporting; Owner: -
--

CREATE VIEW reporting.tickets WITH (security_barrier='true') AS
 SELECT r.ticket_id,
    r.number,
    r.subject,
    r.status,
    r.priority,
    r.assignee_member_id,
    r.project_id,
    r.created_at,
    r.resolved_at
   FROM reporting_private.bi_rows('tickets'::text) j(j),
    LATERAL jsonb_to_record(j.j) r(ticket_id text, number text, subject text, status text, priority text, assignee_member_id text, project_id text, created_at timestamp with time zone, resolved_at timestamp with time zone);


--
-- Name: time_entries; Type: VIEW; Schema: reporting; Owner: -
--

CREATE VIEW reporting.time_entries WITH (security_barrier='true') AS
 SELECT r.time_entry_id,
    r.member_id,
    r.project_id,
    r.task_id,
    r.work_date,
    r.minutes,
    r.billable,
    r.status
   FROM reporting_private.bi_rows('time_entries'::text) j(j),
    LATERAL jsonb_to_record(j.j) r(time_entry_id text, member_id text, project_id text, task_id text, work_date date, minutes integer, billable boolean, status text);


--
-- Name: approvals; Type: VIEW; Schema: reporting_private; Owner: -
--

CREATE VIEW reporting_private.approvals WITH (security_invoker='false', security_barrier='true') AS
 SELECT v.id AS approval_id,
    (v.doc ->> 'type'::text) AS type,
    (v.doc ->> 'status'::text) AS status,
    (v.doc #>> '{resource,type}'::text[]) AS resource_type,
    (v.doc #>> '{resource,id}'::text[]) AS resource_id,
    ((v.doc ->> 'requested_at'::text))::timestamp with time zone AS requested_at,
    ((v.doc ->> 'decided_at'::text))::timestamp with time zone AS decided_at,
    (v.doc ->> 'decision'::text) AS decision
   FROM api.approvals v;


--
-- Name: invoices; Type: VIEW; Schema: reporting_private; Owner: -
--

CREATE VIEW reporting_private.invoices WITH (security_invoker='false', security_barrier='true') AS
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


--
-- Name: members; Type: VIEW; Schema: reporting_private; Owner: -
--

CREATE VIEW reporting_private.members WITH (security_invoker='false', security_barrier='true') AS
 SELECT v.id AS member_id,
    (v.doc ->> 'display_name'::text) AS display_name,
    (v.doc ->> 'status'::text) AS status,
    (v.doc ->> 'job_title'::text) AS job_title
   FROM api.members v;


--
-- Name: payments; Type: VIEW; Schema: reporting_private; Owner: -
--

CREATE VIEW reporting_private.payments WITH (security_invoker='false', security_barrier='true') AS
 SELECT y.id AS payment_id,
    y.invoice_id,
    y.amount,
    y.currency,
    y.received_date,
    y.method
   FROM app.payments y;


--
-- Name: projects; Type: VIEW; Schema: reporting_private; Owner: -
--

CREATE VIEW reporting_private.projects WITH (security_invoker='false', security_barrier='true') AS
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


--
-- Name: tasks; Type: VIEW; Schema: reporting_private; Owner: -
--

CREATE VIEW reporting_private.tasks WITH (security_invoker='false', security_barrier='true') AS
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


--
-- Name: tickets; Type: VIEW; Schema: reporting_private; Owner: -
--

CREATE VIEW reporting_private.tickets WITH (security_invoker='false', security_barrier='true') AS
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


--
-- Name: time_entries; Type: VIEW; Schema: reporting_private; Owner: -
--

CREATE VIEW reporting_private.time_entries WITH (security_invoker='false', security_barrier='true') AS
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


--
-- Name: agent_publications agent_publications_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.agent_publications
    ADD CONSTRAINT agent_publications_pkey PRIMARY KEY (organization_id, agent_id);


--
-- Name: api_clients api_clients_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.api_clients
    ADD CONSTRAINT api_clients_pkey PRIMARY KEY (organization_id, id);


--
-- Name: approvals approvals_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.approvals
    ADD CONSTRAINT approvals_pkey PRIMARY KEY (organization_id, id);


--
-- Name: client_secrets client_secrets_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.client_secrets
    ADD CONSTRAINT client_secrets_pkey PRIMARY KEY (organization_id, id);


--
-- Name: conversation_messages conversation_messages_organization_id_conversation_id_seq_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.conversation_messages
    ADD CONSTRAINT conversation_messages_organization_id_conversation_id_seq_key UNIQUE (organization_id, conversation_id, seq);


--
-- Name: conversation_messages conversation_messages_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.conversation_messages
    ADD CONSTRAINT conversation_messages_pkey PRIMARY KEY (organization_id, id);


--
-- Name: conversations conversations_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.conversations
    ADD CONSTRAINT conversations_pkey PRIMARY KEY (organization_id, id);


--
-- Name: custom_field_definitions custom_field_definitions_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.custom_field_definitions
    ADD CONSTRAINT custom_field_definitions_pkey PRIMARY KEY (organization_id, object_type, api_name);


--
-- Name: customers customers_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.customers
    ADD CONSTRAINT customers_pkey PRIMARY KEY (organization_id, id);


--
-- Name: events events_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.events
    ADD CONSTRAINT events_pkey PRIMARY KEY (organization_id, id);


--
-- Name: file_chunks file_chunks_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.file_chunks
    ADD CONSTRAINT file_chunks_pkey PRIMARY KEY (organization_id, upload_id, seq);


--
-- Name: file_contents file_contents_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.file_contents
    ADD CONSTRAINT file_contents_pkey PRIMARY KEY (organization_id, file_id);


--
-- Name: file_policies file_policies_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.file_policies
    ADD CONSTRAINT file_policies_pkey PRIMARY KEY (organization_id);


--
-- Name: file_uploads file_uploads_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.file_uploads
    ADD CONSTRAINT file_uploads_pkey PRIMARY KEY (organization_id, id);


--
-- Name: files files_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.files
    ADD CONSTRAINT files_pkey PRIMARY KEY (organization_id, id);


--
-- Name: files files_upload_unique; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.files
    ADD CONSTRAINT files_upload_unique UNIQUE (organization_id, upload_id);


--
-- Name: idempotency_keys idempotency_keys_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (organization_id, client_id, method, route, key);


--
-- Name: integration_connections integration_connections_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.integration_connections
    ADD CONSTRAINT integration_connections_pkey PRIMARY KEY (organization_id, id);


--
-- Name: invoice_lines invoice_lines_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.invoice_lines
    ADD CONSTRAINT invoice_lines_pkey PRIMARY KEY (organization_id, id);


--
-- Name: invoice_lines invoice_lines_position_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.invoice_lines
    ADD CONSTRAINT invoice_lines_position_key UNIQUE (organization_id, invoice_id, "position");


--
-- Name: invoices invoices_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.invoices
    ADD CONSTRAINT invoices_pkey PRIMARY KEY (organization_id, id);


--
-- Name: members members_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.members
    ADD CONSTRAINT members_pkey PRIMARY KEY (organization_id, id);


--
-- Name: object_schemas object_schemas_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.object_schemas
    ADD CONSTRAINT object_schemas_pkey PRIMARY KEY (organization_id, object_type);


--
-- Name: organizations organizations_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.organizations
    ADD CONSTRAINT organizations_pkey PRIMARY KEY (id);


--
-- Name: payments payments_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.payments
    ADD CONSTRAINT payments_pkey PRIMARY KEY (organization_id, id);


--
-- Name: projects projects_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.projects
    ADD CONSTRAINT projects_pkey PRIMARY KEY (organization_id, id);


--
-- Name: report_results report_results_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.report_results
    ADD CONSTRAINT report_results_pkey PRIMARY KEY (organization_id, run_id, n);


--
-- Name: report_runs report_runs_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.report_runs
    ADD CONSTRAINT report_runs_pkey PRIMARY KEY (organization_id, id);


--
-- Name: run_events run_events_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.run_events
    ADD CONSTRAINT run_events_pkey PRIMARY KEY (organization_id, run_id, seq);


--
-- Name: run_tool_calls run_tool_calls_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.run_tool_calls
    ADD CONSTRAINT run_tool_calls_pkey PRIMARY KEY (organization_id, run_id, n);


--
-- Name: runs runs_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.runs
    ADD CONSTRAINT runs_pkey PRIMARY KEY (organization_id, id);


--
-- Name: task_activity task_activity_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.task_activity
    ADD CONSTRAINT task_activity_pkey PRIMARY KEY (organization_id, id);


--
-- Name: task_dependencies task_dependencies_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.task_dependencies
    ADD CONSTRAINT task_dependencies_pkey PRIMARY KEY (organization_id, task_id, predecessor_task_id);


--
-- Name: task_notes task_notes_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.task_notes
    ADD CONSTRAINT task_notes_pkey PRIMARY KEY (organization_id, id);


--
-- Name: task_workflow_statuses task_workflow_statuses_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.task_workflow_statuses
    ADD CONSTRAINT task_workflow_statuses_pkey PRIMARY KEY (organization_id, workflow_id, status);


--
-- Name: task_workflow_transitions task_workflow_transitions_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.task_workflow_transitions
    ADD CONSTRAINT task_workflow_transitions_pkey PRIMARY KEY (organization_id, workflow_id, name, from_status);


--
-- Name: task_workflows task_workflows_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.task_workflows
    ADD CONSTRAINT task_workflows_pkey PRIMARY KEY (organization_id, id);


--
-- Name: tasks tasks_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.tasks
    ADD CONSTRAINT tasks_pkey PRIMARY KEY (organization_id, id);


--
-- Name: ticket_messages ticket_messages_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.ticket_messages
    ADD CONSTRAINT ticket_messages_pkey PRIMARY KEY (organization_id, id);


--
-- Name: ticket_search ticket_search_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.ticket_search
    ADD CONSTRAINT ticket_search_pkey PRIMARY KEY (organization_id, ticket_id);


--
-- Name: ticket_statuses ticket_statuses_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.ticket_statuses
    ADD CONSTRAINT ticket_statuses_pkey PRIMARY KEY (organization_id, status);


--
-- Name: ticket_transitions ticket_transitions_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.ticket_transitions
    ADD CONSTRAINT ticket_transitions_pkey PRIMARY KEY (organization_id, name, from_status);


--
-- Name: tickets tickets_external_id_unique; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.tickets
    ADD CONSTRAINT tickets_external_id_unique UNIQUE (organization_id, created_by_client_id, external_id);


--
-- Name: tickets tickets_number_unique; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.tickets
    ADD CONSTRAINT tickets_number_unique UNIQUE (organization_id, number);


--
-- Name: tickets tickets_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.tickets
    ADD CONSTRAINT tickets_pkey PRIMARY KEY (organization_id, id);


--
-- Name: time_entries time_entries_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.time_entries
    ADD CONSTRAINT time_entries_pkey PRIMARY KEY (organization_id, id);


--
-- Name: time_entry_audit time_entry_audit_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.time_entry_audit
    ADD CONSTRAINT time_entry_audit_pkey PRIMARY KEY (organization_id, id);


--
-- Name: webhook_deliveries webhook_deliveries_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (organization_id, id);


--
-- Name: webhook_delivery_attempts webhook_delivery_attempts_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.webhook_delivery_attempts
    ADD CONSTRAINT webhook_delivery_attempts_pkey PRIMARY KEY (organization_id, delivery_id, attempt);


--
-- Name: webhook_endpoints webhook_endpoints_client_id_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_client_id_key UNIQUE (organization_id, client_id, id);


--
-- Name: webhook_endpoints webhook_endpoints_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_pkey PRIMARY KEY (organization_id, id);


--
-- Name: access_tokens access_tokens_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.access_tokens
    ADD CONSTRAINT access_tokens_pkey PRIMARY KEY (organization_id, token_sha256);


--
-- Name: admin_notifications admin_notifications_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.admin_notifications
    ADD CONSTRAINT admin_notifications_pkey PRIMARY KEY (organization_id, id);


--
-- Name: agent_definitions agent_definitions_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.agent_definitions
    ADD CONSTRAINT agent_definitions_pkey PRIMARY KEY (id);


--
-- Name: agent_skills agent_skills_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.agent_skills
    ADD CONSTRAINT agent_skills_pkey PRIMARY KEY (name);


--
-- Name: bi_logins bi_logins_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.bi_logins
    ADD CONSTRAINT bi_logins_pkey PRIMARY KEY (organization_id, role_name);


--
-- Name: client_directory client_directory_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.client_directory
    ADD CONSTRAINT client_directory_pkey PRIMARY KEY (client_id);


--
-- Name: context_keys context_keys_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.context_keys
    ADD CONSTRAINT context_keys_pkey PRIMARY KEY (id);


--
-- Name: currencies currencies_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.currencies
    ADD CONSTRAINT currencies_pkey PRIMARY KEY (code);


--
-- Name: event_types event_types_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.event_types
    ADD CONSTRAINT event_types_pkey PRIMARY KEY (name);


--
-- Name: invoice_number_counters invoice_number_counters_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.invoice_number_counters
    ADD CONSTRAINT invoice_number_counters_pkey PRIMARY KEY (organization_id);


--
-- Name: job_outbox job_outbox_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.job_outbox
    ADD CONSTRAINT job_outbox_pkey PRIMARY KEY (organization_id, id);


--
-- Name: rate_limit_buckets rate_limit_buckets_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.rate_limit_buckets
    ADD CONSTRAINT rate_limit_buckets_pkey PRIMARY KEY (key);


--
-- Name: relay_keys relay_keys_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.relay_keys
    ADD CONSTRAINT relay_keys_pkey PRIMARY KEY (id);


--
-- Name: report_definitions report_definitions_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.report_definitions
    ADD CONSTRAINT report_definitions_pkey PRIMARY KEY (id);


--
-- Name: run_wake_key run_wake_key_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.run_wake_key
    ADD CONSTRAINT run_wake_key_pkey PRIMARY KEY (singleton);


--
-- Name: signing_keys signing_keys_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.signing_keys
    ADD CONSTRAINT signing_keys_pkey PRIMARY KEY (kid);


--
-- Name: ticket_number_counters ticket_number_counters_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.ticket_number_counters
    ADD CONSTRAINT ticket_number_counters_pkey PRIMARY KEY (organization_id);


--
-- Name: _private_job_queues job_queues_pkey1; Type: CONSTRAINT; Schema: graphile_worker; Owner: -
--

ALTER TABLE ONLY graphile_worker._private_job_queues
    ADD CONSTRAINT job_queues_pkey1 PRIMARY KEY (id);


--
-- Name: _private_job_queues job_queues_queue_name_key; Type: CONSTRAINT; Schema: graphile_worker; Owner: -
--

ALTER TABLE ONLY graphile_worker._private_job_queues
    ADD CONSTRAINT job_queues_queue_name_key UNIQUE (queue_name);


--
-- Name: _private_jobs jobs_key_key1; Type: CONSTRAINT; Schema: graphile_worker; Owner: -
--

ALTER TABLE ONLY graphile_worker._private_jobs
    ADD CONSTRAINT jobs_key_key1 UNIQUE (key);


--
-- Name: _private_jobs jobs_pkey1; Type: CONSTRAINT; Schema: graphile_worker; Owner: -
--

ALTER TABLE ONLY graphile_worker._private_jobs
    ADD CONSTRAINT jobs_pkey1 PRIMARY KEY (id);


--
-- Name: _private_known_crontabs known_crontabs_pkey; Type: CONSTRAINT; Schema: graphile_worker; Owner: -
--

ALTER TABLE ONLY graphile_worker._private_known_crontabs
    ADD CONSTRAINT known_crontabs_pkey PRIMARY KEY (identifier);


--
-- Name: migrations migrations_pkey; Type: CONSTRAINT; Schema: graphile_worker; Owner: -
--

ALTER TABLE ONLY graphile_worker.migrations
    ADD CONSTRAINT migrations_pkey PRIMARY KEY (id);


--
-- Name: _private_tasks tasks_identifier_key; Type: CONSTRAINT; Schema: graphile_worker; Owner: -
--

ALTER TABLE ONLY graphile_worker._private_tasks
    ADD CONSTRAINT tasks_identifier_key UNIQUE (identifier);


--
-- Name: _private_tasks tasks_pkey; Type: CONSTRAINT; Schema: graphile_worker; Owner: -
--

ALTER TABLE ONLY graphile_worker._private_tasks
    ADD CONSTRAINT tasks_pkey PRIMARY KEY (id);


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);


--
-- Name: api_clients_id; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX api_clients_id ON app.api_clients USING btree (id);


--
-- Name: api_clients_name_unique; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX api_clients_name_unique ON app.api_clients USING btree (organization_id, lower(name)) WHERE (status <> 'deleted'::text);


--
-- Name: api_clients_one_included_license; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX api_clients_one_included_license ON app.api_clients USING btree (organization_id) WHERE ((license_source = 'included'::text) AND (license_status = 'active'::text) AND (status <> 'deleted'::text));


--
-- Name: approvals_id; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX approvals_id ON app.approvals USING btree (id);


--
-- Name: approvals_one_per_resource; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX approvals_one_per_resource ON app.approvals USING btree (organization_id, resource_type, resource_id);


--
-- Name: approvals_org_requested; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX approvals_org_requested ON app.approvals USING btree (organization_id, requested_at, id);


--
-- Name: client_secrets_client; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX client_secrets_client ON app.client_secrets USING btree (client_id);


--
-- Name: client_secrets_id; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX client_secrets_id ON app.client_secrets USING btree (id);


--
-- Name: client_secrets_two_active; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX client_secrets_two_active ON app.client_secrets USING btree (organization_id, client_id, slot) WHERE (revoked_at IS NULL);


--
-- Name: conversation_messages_id; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX conversation_messages_id ON app.conversation_messages USING btree (id);


--
-- Name: conversations_client_updated; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX conversations_client_updated ON app.conversations USING btree (organization_id, client_id, updated_at DESC, id DESC);


--
-- Name: conversations_id; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX conversations_id ON app.conversations USING btree (id);


--
-- Name: conversations_idle; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX conversations_idle ON app.conversations USING btree (last_activity_at) WHERE (context_from_seq < message_count);


--
-- Name: customers_id; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX customers_id ON app.customers USING btree (id);


--
-- Name: events_created; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX events_created ON app.events USING btree (created_at);


--
-- Name: events_fanout_pending; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX events_fanout_pending ON app.events USING btree (created_at) WHERE fanout_pending;


--
-- Name: events_id; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX events_id ON app.events USING btree (id);


--
-- Name: file_uploads_expiry; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX file_uploads_expiry ON app.file_uploads USING btree (expires_at) WHERE (status <> 'completed'::text);


--
-- Name: file_uploads_id; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX file_uploads_id ON app.file_uploads USING btree (id);


--
-- Name: files_id; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX files_id ON app.files USING btree (id);


--
-- Name: files_linked; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX files_linked ON app.files USING btree (organization_id, linked_resource_type, linked_resource_id);


--
-- Name: files_list; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX files_list ON app.files USING btree (organization_id, created_at DESC, id DESC);


--
-- Name: idempotency_keys_expiry; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX idempotency_keys_expiry ON app.idempotency_keys USING btree (expires_at);


--
-- Name: integration_connections_id; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX integration_connections_id ON app.integration_connections USING btree (id);


--
-- Name: integration_connections_org; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX integration_connections_org ON app.integration_connections USING btree (organization_id, created_at, id);


--
-- Name: invoices_id; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX invoices_id ON app.invoices USING btree (id);


--
-- Name: invoices_number_unique; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX invoices_number_unique ON app.invoices USING btree (organization_id, number) WHERE (number IS NOT NULL);


--
-- Name: invoices_org_created; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX invoices_org_created ON app.invoices USING btree (organization_id, created_at, id);


--
-- Name: members_display_name_search; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX members_display_name_search ON app.members USING btree (organization_id, lower(display_name) text_pattern_ops);


--
-- Name: payments_invoice; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX payments_invoice ON app.payments USING btree (invoice_id);


--
-- Name: projects_code_unique; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX projects_code_unique ON app.projects USING btree (organization_id, lower(code));


--
-- Name: projects_id; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX projects_id ON app.projects USING btree (id);


--
-- Name: projects_org_created; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX projects_org_created ON app.projects USING btree (organization_id, created_at, id);


--
-- Name: projects_org_name; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX projects_org_name ON app.projects USING btree (organization_id, lower(name), id);


--
-- Name: report_runs_expiry; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX report_runs_expiry ON app.report_runs USING btree (expires_at) WHERE (NOT results_purged);


--
-- Name: report_runs_id; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX report_runs_id ON app.report_runs USING btree (id);


--
-- Name: runs_client_created; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX runs_client_created ON app.runs USING btree (organization_id, client_id, created_at DESC, id DESC);


--
-- Name: runs_conversation; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX runs_conversation ON app.runs USING btree (organization_id, conversation_id) WHERE (conversation_id IS NOT NULL);


--
-- Name: runs_id; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX runs_id ON app.runs USING btree (id);


--
-- Name: runs_retention; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX runs_retention ON app.runs USING btree (completed_at) WHERE (NOT output_purged);


--
-- Name: task_dependencies_predecessor; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX task_dependencies_predecessor ON app.task_dependencies USING btree (predecessor_task_id);


--
-- Name: task_notes_task; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX task_notes_task ON app.task_notes USING btree (task_id, created_at);


--
-- Name: task_workflow_statuses_one_initial; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX task_workflow_statuses_one_initial ON app.task_workflow_statuses USING btree (organization_id, workflow_id) WHERE is_initial;


--
-- Name: task_workflow_transitions_pair; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX task_workflow_transitions_pair ON app.task_workflow_transitions USING btree (workflow_id, from_status, to_status);


--
-- Name: task_workflows_id; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX task_workflows_id ON app.task_workflows USING btree (id);


--
-- Name: task_workflows_one_default; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX task_workflows_one_default ON app.task_workflows USING btree (organization_id) WHERE is_default;


--
-- Name: tasks_assignees; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX tasks_assignees ON app.tasks USING gin (assignee_member_ids);


--
-- Name: tasks_code_unique; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX tasks_code_unique ON app.tasks USING btree (organization_id, project_id, lower(code)) WHERE (code IS NOT NULL);


--
-- Name: tasks_id; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX tasks_id ON app.tasks USING btree (id);


--
-- Name: tasks_org_created; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX tasks_org_created ON app.tasks USING btree (organization_id, created_at, id);


--
-- Name: tasks_org_due; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX tasks_org_due ON app.tasks USING btree (organization_id, due_at, id);


--
-- Name: tasks_org_project; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX tasks_org_project ON app.tasks USING btree (organization_id, project_id, created_at, id);


--
-- Name: ticket_messages_id; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX ticket_messages_id ON app.ticket_messages USING btree (id);


--
-- Name: ticket_messages_ticket; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX ticket_messages_ticket ON app.ticket_messages USING btree (organization_id, ticket_id, created_at, id);


--
-- Name: ticket_search_internal; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX ticket_search_internal ON app.ticket_search USING gin (internal_doc);


--
-- Name: ticket_search_public; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX ticket_search_public ON app.ticket_search USING gin (public_doc);


--
-- Name: ticket_statuses_one_initial; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX ticket_statuses_one_initial ON app.ticket_statuses USING btree (organization_id) WHERE is_initial;


--
-- Name: ticket_transitions_pair; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX ticket_transitions_pair ON app.ticket_transitions USING btree (organization_id, from_status, to_status);


--
-- Name: tickets_id; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX tickets_id ON app.tickets USING btree (id);


--
-- Name: tickets_org_created; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX tickets_org_created ON app.tickets USING btree (organization_id, created_at DESC, id DESC);


--
-- Name: tickets_org_updated; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX tickets_org_updated ON app.tickets USING btree (organization_id, updated_at DESC, id DESC);


--
-- Name: tickets_tags; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX tickets_tags ON app.tickets USING gin (tags);


--
-- Name: time_entries_external_id_unique; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX time_entries_external_id_unique ON app.time_entries USING btree (organization_id, created_by_client_id, external_id) WHERE ((external_id IS NOT NULL) AND (deleted_at IS NULL));


--
-- Name: time_entries_id; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX time_entries_id ON app.time_entries USING btree (id);


--
-- Name: time_entries_member_date; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX time_entries_member_date ON app.time_entries USING btree (organization_id, member_id, work_date) WHERE (deleted_at IS NULL);


--
-- Name: time_entries_org_date; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX time_entries_org_date ON app.time_entries USING btree (organization_id, work_date, id) WHERE (deleted_at IS NULL);


--
-- Name: time_entries_project; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX time_entries_project ON app.time_entries USING btree (project_id, work_date) WHERE (deleted_at IS NULL);


--
-- Name: webhook_deliveries_endpoint; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX webhook_deliveries_endpoint ON app.webhook_deliveries USING btree (endpoint_id, created_at, id);


--
-- Name: webhook_deliveries_id; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX webhook_deliveries_id ON app.webhook_deliveries USING btree (id);


--
-- Name: webhook_deliveries_lease; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX webhook_deliveries_lease ON app.webhook_deliveries USING btree (lease_until) WHERE ((status = 'pending'::text) AND (lease_until IS NOT NULL));


--
-- Name: webhook_deliveries_once; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX webhook_deliveries_once ON app.webhook_deliveries USING btree (organization_id, event_id, endpoint_id) WHERE (replay_of IS NULL);


--
-- Name: webhook_deliveries_pending_due; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX webhook_deliveries_pending_due ON app.webhook_deliveries USING btree (next_attempt_at) WHERE (status = 'pending'::text);


--
-- Name: webhook_deliveries_replay_of; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX webhook_deliveries_replay_of ON app.webhook_deliveries USING btree (organization_id, replay_of) WHERE (replay_of IS NOT NULL);


--
-- Name: webhook_endpoints_client; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX webhook_endpoints_client ON app.webhook_endpoints USING btree (client_id, created_at, id);


--
-- Name: webhook_endpoints_id; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX webhook_endpoints_id ON app.webhook_endpoints USING btree (id);


--
-- Name: webhook_endpoints_org_enabled; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX webhook_endpoints_org_enabled ON app.webhook_endpoints USING btree (organization_id) WHERE (status = 'enabled'::text);


--
-- Name: access_tokens_expiry; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX access_tokens_expiry ON app_private.access_tokens USING btree (expires_at);


--
-- Name: bi_logins_role; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX bi_logins_role ON app_private.bi_logins USING btree (role_name);


--
-- Name: jobs_main_index; Type: INDEX; Schema: graphile_worker; Owner: -
--

CREATE INDEX jobs_main_index ON graphile_worker._private_jobs USING btree (priority, run_at) INCLUDE (id, task_id, job_queue_id) WHERE (is_available = true);


--
-- Name: jobs_no_queue_index; Type: INDEX; Schema: graphile_worker; Owner: -
--

CREATE INDEX jobs_no_queue_index ON graphile_worker._private_jobs USING btree (priority, run_at) INCLUDE (id, task_id) WHERE ((is_available = true) AND (job_queue_id IS NULL));


--
-- Name: conversation_messages _010_client_of_parent; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _010_client_of_parent BEFORE INSERT OR UPDATE OF client_id ON app.conversation_messages FOR EACH ROW EXECUTE FUNCTION app_private.tg__client_of_parent();


--
-- Name: report_results _010_client_of_parent; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _010_client_of_parent BEFORE INSERT OR UPDATE OF client_id ON app.report_results FOR EACH ROW EXECUTE FUNCTION app_private.tg__client_of_parent();


--
-- Name: run_events _010_client_of_parent; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _010_client_of_parent BEFORE INSERT OR UPDATE OF client_id ON app.run_events FOR EACH ROW EXECUTE FUNCTION app_private.tg__client_of_parent();


--
-- Name: run_tool_calls _010_client_of_parent; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _010_client_of_parent BEFORE INSERT OR UPDATE OF client_id ON app.run_tool_calls FOR EACH ROW EXECUTE FUNCTION app_private.tg__client_of_parent();


--
-- Name: webhook_delivery_attempts _010_client_of_parent; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _010_client_of_parent BEFORE INSERT OR UPDATE OF client_id ON app.webhook_delivery_attempts FOR EACH ROW EXECUTE FUNCTION app_private.tg__client_of_parent();


--
-- Name: task_notes _010_members_may_add; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _010_members_may_add BEFORE INSERT ON app.task_notes FOR EACH ROW EXECUTE FUNCTION app_private.tg_task_notes__members_may_add();


--
-- Name: file_chunks _010_of_parent; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _010_of_parent BEFORE INSERT ON app.file_chunks FOR EACH ROW EXECUTE FUNCTION app_private.tg_file_bytes__of_parent();


--
-- Name: file_contents _010_of_parent; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _010_of_parent BEFORE INSERT ON app.file_contents FOR EACH ROW EXECUTE FUNCTION app_private.tg_file_bytes__of_parent();


--
-- Name: webhook_deliveries _010_replay_of; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _010_replay_of BEFORE INSERT OR UPDATE OF replay_of ON app.webhook_deliveries FOR EACH ROW WHEN ((new.replay_of IS NOT NULL)) EXECUTE FUNCTION app_private.tg_webhook_deliveries__replay_of();


--
-- Name: files _040_retention; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _040_retention BEFORE DELETE OR UPDATE ON app.files FOR EACH ROW EXECUTE FUNCTION app_private.tg_files__retention();


--
-- Name: file_contents _050_check; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _050_check BEFORE INSERT OR DELETE OR UPDATE ON app.file_contents FOR EACH ROW EXECUTE FUNCTION app_private.tg_file_contents__check();


--
-- Name: file_chunks _050_guard; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _050_guard BEFORE INSERT OR DELETE OR UPDATE ON app.file_chunks FOR EACH ROW EXECUTE FUNCTION app_private.tg_file_chunks__guard();


--
-- Name: invoices _050_guard; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _050_guard BEFORE INSERT OR DELETE OR UPDATE ON app.invoices FOR EACH ROW EXECUTE FUNCTION app_private.tg_invoices__guard();


--
-- Name: payments _050_immutable; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _050_immutable BEFORE DELETE OR UPDATE ON app.payments FOR EACH ROW EXECUTE FUNCTION app_private.tg_payments__immutable();


--
-- Name: time_entries _050_lock; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _050_lock BEFORE UPDATE ON app.time_entries FOR EACH ROW EXECUTE FUNCTION app_private.tg_time_entries__lock();


--
-- Name: time_entries _050_no_delete; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _050_no_delete BEFORE DELETE ON app.time_entries FOR EACH ROW EXECUTE FUNCTION app_private.tg_time_entries__no_delete();


--
-- Name: invoices _060_lifecycle; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _060_lifecycle BEFORE UPDATE ON app.invoices FOR EACH ROW EXECUTE FUNCTION app_private.tg_invoices__lifecycle();


--
-- Name: conversation_messages _100_append; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _100_append BEFORE INSERT OR DELETE OR UPDATE ON app.conversation_messages FOR EACH ROW EXECUTE FUNCTION app_private.tg_conversation_messages__append();


--
-- Name: payments _100_apply; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _100_apply BEFORE INSERT ON app.payments FOR EACH ROW EXECUTE FUNCTION app_private.tg_payments__apply();


--
-- Name: invoice_lines _100_compute; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _100_compute BEFORE INSERT OR DELETE OR UPDATE ON app.invoice_lines FOR EACH ROW EXECUTE FUNCTION app_private.tg_invoice_lines__compute();


--
-- Name: conversations _100_lifecycle; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _100_lifecycle BEFORE INSERT OR UPDATE ON app.conversations FOR EACH ROW EXECUTE FUNCTION app_private.tg_conversations__lifecycle();


--
-- Name: file_uploads _100_lifecycle; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _100_lifecycle BEFORE INSERT OR DELETE OR UPDATE ON app.file_uploads FOR EACH ROW EXECUTE FUNCTION app_private.tg_file_uploads__lifecycle();


--
-- Name: files _100_lifecycle; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _100_lifecycle BEFORE INSERT OR DELETE OR UPDATE ON app.files FOR EACH ROW EXECUTE FUNCTION app_private.tg_files__lifecycle();


--
-- Name: report_runs _100_lifecycle; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _100_lifecycle BEFORE INSERT OR UPDATE ON app.report_runs FOR EACH ROW EXECUTE FUNCTION app_private.tg_report_runs__lifecycle();


--
-- Name: runs _100_lifecycle; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _100_lifecycle BEFORE INSERT OR UPDATE ON app.runs FOR EACH ROW EXECUTE FUNCTION app_private.tg_runs__lifecycle();


--
-- Name: task_dependencies _100_no_cycle; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _100_no_cycle BEFORE INSERT OR UPDATE ON app.task_dependencies FOR EACH ROW EXECUTE FUNCTION app_private.tg_task_dependencies__no_cycle();


--
-- Name: api_clients _100_plan_allows_clients; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _100_plan_allows_clients BEFORE INSERT ON app.api_clients FOR EACH ROW EXECUTE FUNCTION app_private.tg_api_clients__plan_allows_clients();


--
-- Name: api_clients _100_touch; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _100_touch BEFORE UPDATE ON app.api_clients FOR EACH ROW EXECUTE FUNCTION app_private.tg_api_clients__touch();


--
-- Name: approvals _100_touch_version; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _100_touch_version BEFORE UPDATE ON app.approvals FOR EACH ROW EXECUTE FUNCTION app_private.tg__touch_version();


--
-- Name: integration_connections _100_touch_version; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _100_touch_version BEFORE UPDATE ON app.integration_connections FOR EACH ROW EXECUTE FUNCTION app_private.tg__touch_version();


--
-- Name: invoices _100_touch_version; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _100_touch_version BEFORE UPDATE ON app.invoices FOR EACH ROW EXECUTE FUNCTION app_private.tg_invoices__touch();


--
-- Name: members _100_touch_version; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _100_touch_version BEFORE UPDATE ON app.members FOR EACH ROW EXECUTE FUNCTION app_private.tg__touch_version();


--
-- Name: organizations _100_touch_version; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _100_touch_version BEFORE UPDATE ON app.organizations FOR EACH ROW EXECUTE FUNCTION app_private.tg__touch_version();


--
-- Name: projects _100_touch_version; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _100_touch_version BEFORE UPDATE ON app.projects FOR EACH ROW EXECUTE FUNCTION app_private.tg__touch_version();


--
-- Name: tasks _100_touch_version; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _100_touch_version BEFORE UPDATE ON app.tasks FOR EACH ROW EXECUTE FUNCTION app_private.tg__touch_version();


--
-- Name: tickets _100_touch_version; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _100_touch_version BEFORE UPDATE ON app.tickets FOR EACH ROW EXECUTE FUNCTION app_private.tg__touch_version();


--
-- Name: time_entries _100_touch_version; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _100_touch_version BEFORE UPDATE ON app.time_entries FOR EACH ROW EXECUTE FUNCTION app_private.tg__touch_version();


--
-- Name: webhook_endpoints _100_touch_version; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _100_touch_version BEFORE UPDATE ON app.webhook_endpoints FOR EACH ROW EXECUTE FUNCTION app_private.tg__touch_version();


--
-- Name: tasks _120_archive_rules; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _120_archive_rules BEFORE UPDATE ON app.tasks FOR EACH ROW EXECUTE FUNCTION app_private.tg_tasks__archive_rules();


--
-- Name: tasks _150_legal_transition; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _150_legal_transition BEFORE INSERT OR UPDATE ON app.tasks FOR EACH ROW EXECUTE FUNCTION app_private.tg_tasks__legal_transition();


--
-- Name: ticket_messages _150_rules; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _150_rules BEFORE INSERT OR DELETE OR UPDATE ON app.ticket_messages FOR EACH ROW EXECUTE FUNCTION app_private.tg_ticket_messages__rules();


--
-- Name: tickets _150_rules; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _150_rules BEFORE INSERT OR UPDATE ON app.tickets FOR EACH ROW EXECUTE FUNCTION app_private.tg_tickets__rules();


--
-- Name: projects _150_status_change; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _150_status_change BEFORE UPDATE OF status ON app.projects FOR EACH ROW EXECUTE FUNCTION app_private.tg_projects__status_change();


--
-- Name: webhook_endpoints _200_check_events; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _200_check_events BEFORE INSERT OR UPDATE OF events ON app.webhook_endpoints FOR EACH ROW EXECUTE FUNCTION app_private.tg_webhook_endpoints__check_events();


--
-- Name: projects _200_check_references; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _200_check_references BEFORE INSERT OR UPDATE ON app.projects FOR EACH ROW EXECUTE FUNCTION app_private.tg_projects__check_references();


--
-- Name: tasks _200_check_references; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _200_check_references BEFORE INSERT OR UPDATE ON app.tasks FOR EACH ROW EXECUTE FUNCTION app_private.tg_tasks__check_references();


--
-- Name: time_entries _200_validate; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _200_validate BEFORE INSERT OR UPDATE ON app.time_entries FOR EACH ROW EXECUTE FUNCTION app_private.tg_time_entries__validate();


--
-- Name: projects _300_check_custom_fields; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _300_check_custom_fields BEFORE INSERT OR UPDATE ON app.projects FOR EACH ROW EXECUTE FUNCTION app_private.tg__check_custom_fields('project');


--
-- Name: tasks _300_check_custom_fields; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _300_check_custom_fields BEFORE INSERT OR UPDATE ON app.tasks FOR EACH ROW EXECUTE FUNCTION app_private.tg__check_custom_fields('task');


--
-- Name: webhook_endpoints _300_limit; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _300_limit BEFORE INSERT ON app.webhook_endpoints FOR EACH ROW EXECUTE FUNCTION app_private.tg_webhook_endpoints__limit();


--
-- Name: organizations _500_publish_agents; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _500_publish_agents AFTER INSERT ON app.organizations FOR EACH ROW EXECUTE FUNCTION app_private.tg_organizations__publish_agents();


--
-- Name: organizations _800_seed_schemas; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _800_seed_schemas AFTER INSERT ON app.organizations FOR EACH ROW EXECUTE FUNCTION app_private.tg_organizations__seed_schemas();


--
-- Name: organizations _810_seed_task_workflow; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _810_seed_task_workflow AFTER INSERT ON app.organizations FOR EACH ROW EXECUTE FUNCTION app_private.tg_organizations__seed_task_workflow();


--
-- Name: organizations _820_seed_ticket_workflow; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _820_seed_ticket_workflow AFTER INSERT ON app.organizations FOR EACH ROW EXECUTE FUNCTION app_private.tg_organizations__seed_ticket_workflow();


--
-- Name: client_secrets _900_bump_client_version; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _900_bump_client_version AFTER INSERT OR UPDATE ON app.client_secrets FOR EACH ROW EXECUTE FUNCTION app_private.tg_client_secrets__bump_client_version();


--
-- Name: custom_field_definitions _900_bump_schema_version; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _900_bump_schema_version AFTER INSERT OR DELETE OR UPDATE ON app.custom_field_definitions FOR EACH ROW EXECUTE FUNCTION app_private.tg_custom_field_definitions__bump_schema_version();


--
-- Name: runs _900_events; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _900_events AFTER UPDATE OF status ON app.runs FOR EACH ROW EXECUTE FUNCTION app_private.tg_runs__events();


--
-- Name: ticket_messages _900_index; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _900_index AFTER INSERT ON app.ticket_messages FOR EACH ROW EXECUTE FUNCTION app_private.tg_ticket_messages__index();


--
-- Name: tickets _900_index; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _900_index AFTER INSERT OR UPDATE ON app.tickets FOR EACH ROW EXECUTE FUNCTION app_private.tg_tickets__index();


--
-- Name: invoices _900_queue_sync; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _900_queue_sync AFTER UPDATE ON app.invoices FOR EACH ROW EXECUTE FUNCTION app_private.tg_invoices__queue_sync();


--
-- Name: time_entries _900_submitted_has_approval; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _900_submitted_has_approval AFTER INSERT OR UPDATE OF status ON app.time_entries FOR EACH ROW EXECUTE FUNCTION app_private.tg_time_entries__submitted_has_approval();


--
-- Name: invoice_lines _900_totals_deleted; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _900_totals_deleted AFTER DELETE ON app.invoice_lines REFERENCING OLD TABLE AS deleted_lines FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg_invoice_lines__totals_changed();


--
-- Name: invoice_lines _900_totals_inserted; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _900_totals_inserted AFTER INSERT ON app.invoice_lines REFERENCING NEW TABLE AS inserted_lines FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg_invoice_lines__totals_changed();


--
-- Name: invoice_lines _900_totals_updated; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _900_totals_updated AFTER UPDATE ON app.invoice_lines REFERENCING OLD TABLE AS old_lines NEW TABLE AS new_lines FOR EACH STATEMENT EXECUTE FUNCTION app_private.tg_invoice_lines__totals_changed();


--
-- Name: runs _910_conversation_reply; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _910_conversation_reply AFTER UPDATE OF status ON app.runs FOR EACH ROW EXECUTE FUNCTION app_private.tg_runs__conversation_reply();


--
-- Name: approvals _950_emit_event; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _950_emit_event AFTER INSERT OR UPDATE ON app.approvals FOR EACH ROW EXECUTE FUNCTION app_private.tg__emit_event('approval');


--
-- Name: conversation_messages _950_emit_event; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _950_emit_event AFTER INSERT ON app.conversation_messages FOR EACH ROW EXECUTE FUNCTION app_private.tg_conversation_messages__emit();


--
-- Name: files _950_emit_event; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _950_emit_event AFTER UPDATE ON app.files FOR EACH ROW EXECUTE FUNCTION app_private.tg_files__emit();


--
-- Name: integration_connections _950_emit_event; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _950_emit_event AFTER UPDATE ON app.integration_connections FOR EACH ROW EXECUTE FUNCTION app_private.tg_integration_connections__emit();


--
-- Name: invoices _950_emit_event; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _950_emit_event AFTER INSERT OR UPDATE ON app.invoices FOR EACH ROW EXECUTE FUNCTION app_private.tg_invoices__emit();


--
-- Name: payments _950_emit_event; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _950_emit_event AFTER INSERT ON app.payments FOR EACH ROW EXECUTE FUNCTION app_private.tg_payments__emit();


--
-- Name: projects _950_emit_event; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _950_emit_event AFTER INSERT OR UPDATE ON app.projects FOR EACH ROW EXECUTE FUNCTION app_private.tg__emit_event('project');


--
-- Name: report_runs _950_emit_event; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _950_emit_event AFTER UPDATE ON app.report_runs FOR EACH ROW EXECUTE FUNCTION app_private.tg_report_runs__emit();


--
-- Name: tasks _950_emit_event; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _950_emit_event AFTER INSERT OR UPDATE ON app.tasks FOR EACH ROW EXECUTE FUNCTION app_private.tg__emit_event('task');


--
-- Name: ticket_messages _950_emit_event; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _950_emit_event AFTER INSERT ON app.ticket_messages FOR EACH ROW EXECUTE FUNCTION app_private.tg_ticket_messages__emit();


--
-- Name: tickets _950_emit_event; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _950_emit_event AFTER INSERT OR UPDATE ON app.tickets FOR EACH ROW EXECUTE FUNCTION app_private.tg_tickets__emit();


--
-- Name: time_entries _950_emit_event; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _950_emit_event AFTER INSERT OR UPDATE ON app.time_entries FOR EACH ROW EXECUTE FUNCTION app_private.tg__emit_event('time_entry');


--
-- Name: invoices _990_pdf_required; Type: TRIGGER; Schema: app; Owner: -
--

CREATE CONSTRAINT TRIGGER _990_pdf_required AFTER UPDATE ON app.invoices DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (((old.status = 'draft'::text) AND (new.status <> 'draft'::text))) EXECUTE FUNCTION app_private.tg_invoices__pdf_required();


--
-- Name: webhook_deliveries _990_replay_of; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER _990_replay_of AFTER DELETE ON app.webhook_deliveries FOR EACH ROW EXECUTE FUNCTION app_private.tg_webhook_deliveries__replay_of();


--
-- Name: agent_definitions _100_skills_exist; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE TRIGGER _100_skills_exist BEFORE INSERT OR UPDATE ON app_private.agent_definitions FOR EACH ROW EXECUTE FUNCTION app_private.tg_agent_definitions__skills_exist();


--
-- Name: agent_publications agent_publications_agent_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.agent_publications
    ADD CONSTRAINT agent_publications_agent_id_fkey FOREIGN KEY (agent_id) REFERENCES app_private.agent_definitions(id);


--
-- Name: agent_publications agent_publications_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.agent_publications
    ADD CONSTRAINT agent_publications_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: api_clients api_clients_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.api_clients
    ADD CONSTRAINT api_clients_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE RESTRICT;


--
-- Name: approvals approvals_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.approvals
    ADD CONSTRAINT approvals_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: client_secrets client_secrets_client_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.client_secrets
    ADD CONSTRAINT client_secrets_client_fkey FOREIGN KEY (organization_id, client_id) REFERENCES app.api_clients(organization_id, id) ON DELETE RESTRICT;


--
-- Name: client_secrets client_secrets_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.client_secrets
    ADD CONSTRAINT client_secrets_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE RESTRICT;


--
-- Name: conversation_messages conversation_messages_organization_id_conversation_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.conversation_messages
    ADD CONSTRAINT conversation_messages_organization_id_conversation_id_fkey FOREIGN KEY (organization_id, conversation_id) REFERENCES app.conversations(organization_id, id) ON DELETE CASCADE;


--
-- Name: conversations conversations_organization_id_client_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.conversations
    ADD CONSTRAINT conversations_organization_id_client_id_fkey FOREIGN KEY (organization_id, client_id) REFERENCES app.api_clients(organization_id, id);


--
-- Name: conversations conversations_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.conversations
    ADD CONSTRAINT conversations_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: conversations conversations_organization_id_subject_member_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.conversations
    ADD CONSTRAINT conversations_organization_id_subject_member_id_fkey FOREIGN KEY (organization_id, subject_member_id) REFERENCES app.members(organization_id, id);


--
-- Name: custom_field_definitions custom_field_definitions_organization_id_object_type_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.custom_field_definitions
    ADD CONSTRAINT custom_field_definitions_organization_id_object_type_fkey FOREIGN KEY (organization_id, object_type) REFERENCES app.object_schemas(organization_id, object_type) ON DELETE CASCADE;


--
-- Name: customers customers_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.customers
    ADD CONSTRAINT customers_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: events events_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.events
    ADD CONSTRAINT events_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: events events_type_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.events
    ADD CONSTRAINT events_type_fkey FOREIGN KEY (type) REFERENCES app_private.event_types(name);


--
-- Name: file_chunks file_chunks_organization_id_upload_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.file_chunks
    ADD CONSTRAINT file_chunks_organization_id_upload_id_fkey FOREIGN KEY (organization_id, upload_id) REFERENCES app.file_uploads(organization_id, id) ON DELETE CASCADE;


--
-- Name: file_contents file_contents_file_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.file_contents
    ADD CONSTRAINT file_contents_file_fkey FOREIGN KEY (organization_id, file_id) REFERENCES app.files(organization_id, id) ON DELETE CASCADE;


--
-- Name: file_policies file_policies_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.file_policies
    ADD CONSTRAINT file_policies_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: file_uploads file_uploads_organization_id_created_by_client_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.file_uploads
    ADD CONSTRAINT file_uploads_organization_id_created_by_client_id_fkey FOREIGN KEY (organization_id, created_by_client_id) REFERENCES app.api_clients(organization_id, id);


--
-- Name: file_uploads file_uploads_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.file_uploads
    ADD CONSTRAINT file_uploads_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: files files_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.files
    ADD CONSTRAINT files_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: files files_organization_id_upload_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.files
    ADD CONSTRAINT files_organization_id_upload_id_fkey FOREIGN KEY (organization_id, upload_id) REFERENCES app.file_uploads(organization_id, id);


--
-- Name: idempotency_keys idempotency_keys_client_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.idempotency_keys
    ADD CONSTRAINT idempotency_keys_client_fkey FOREIGN KEY (organization_id, client_id) REFERENCES app.api_clients(organization_id, id) ON DELETE CASCADE;


--
-- Name: idempotency_keys idempotency_keys_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.idempotency_keys
    ADD CONSTRAINT idempotency_keys_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: integration_connections integration_connections_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.integration_connections
    ADD CONSTRAINT integration_connections_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: integration_connections integration_connections_organization_id_owner_member_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.integration_connections
    ADD CONSTRAINT integration_connections_organization_id_owner_member_id_fkey FOREIGN KEY (organization_id, owner_member_id) REFERENCES app.members(organization_id, id) ON DELETE CASCADE;


--
-- Name: invoice_lines invoice_lines_invoice_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.invoice_lines
    ADD CONSTRAINT invoice_lines_invoice_fkey FOREIGN KEY (organization_id, invoice_id) REFERENCES app.invoices(organization_id, id) ON DELETE CASCADE;


--
-- Name: invoices invoices_currency_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.invoices
    ADD CONSTRAINT invoices_currency_fkey FOREIGN KEY (currency) REFERENCES app_private.currencies(code);


--
-- Name: invoices invoices_customer_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.invoices
    ADD CONSTRAINT invoices_customer_fkey FOREIGN KEY (organization_id, customer_id) REFERENCES app.customers(organization_id, id) ON DELETE RESTRICT;


--
-- Name: invoices invoices_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.invoices
    ADD CONSTRAINT invoices_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: invoices invoices_pdf_file_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.invoices
    ADD CONSTRAINT invoices_pdf_file_fkey FOREIGN KEY (organization_id, pdf_file_id) REFERENCES app.files(organization_id, id) ON DELETE RESTRICT;


--
-- Name: invoices invoices_sync_connection_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.invoices
    ADD CONSTRAINT invoices_sync_connection_fkey FOREIGN KEY (organization_id, sync_connection_id) REFERENCES app.integration_connections(organization_id, id) ON DELETE RESTRICT;


--
-- Name: members members_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.members
    ADD CONSTRAINT members_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: object_schemas object_schemas_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.object_schemas
    ADD CONSTRAINT object_schemas_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: payments payments_invoice_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.payments
    ADD CONSTRAINT payments_invoice_fkey FOREIGN KEY (organization_id, invoice_id) REFERENCES app.invoices(organization_id, id) ON DELETE RESTRICT;


--
-- Name: projects projects_created_by_client_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.projects
    ADD CONSTRAINT projects_created_by_client_fkey FOREIGN KEY (organization_id, created_by_client_id) REFERENCES app.api_clients(organization_id, id) ON DELETE RESTRICT;


--
-- Name: projects projects_customer_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.projects
    ADD CONSTRAINT projects_customer_fkey FOREIGN KEY (organization_id, customer_id) REFERENCES app.customers(organization_id, id) ON DELETE RESTRICT;


--
-- Name: projects projects_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.projects
    ADD CONSTRAINT projects_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: projects projects_organization_id_manager_member_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.projects
    ADD CONSTRAINT projects_organization_id_manager_member_id_fkey FOREIGN KEY (organization_id, manager_member_id) REFERENCES app.members(organization_id, id) ON DELETE RESTRICT;


--
-- Name: report_results report_results_organization_id_run_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.report_results
    ADD CONSTRAINT report_results_organization_id_run_id_fkey FOREIGN KEY (organization_id, run_id) REFERENCES app.report_runs(organization_id, id) ON DELETE CASCADE;


--
-- Name: report_runs report_runs_organization_id_client_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.report_runs
    ADD CONSTRAINT report_runs_organization_id_client_id_fkey FOREIGN KEY (organization_id, client_id) REFERENCES app.api_clients(organization_id, id);


--
-- Name: report_runs report_runs_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.report_runs
    ADD CONSTRAINT report_runs_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: report_runs report_runs_report_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.report_runs
    ADD CONSTRAINT report_runs_report_id_fkey FOREIGN KEY (report_id) REFERENCES app_private.report_definitions(id);


--
-- Name: run_events run_events_organization_id_run_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.run_events
    ADD CONSTRAINT run_events_organization_id_run_id_fkey FOREIGN KEY (organization_id, run_id) REFERENCES app.runs(organization_id, id) ON DELETE CASCADE;


--
-- Name: run_tool_calls run_tool_calls_organization_id_run_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.run_tool_calls
    ADD CONSTRAINT run_tool_calls_organization_id_run_id_fkey FOREIGN KEY (organization_id, run_id) REFERENCES app.runs(organization_id, id) ON DELETE CASCADE;


--
-- Name: runs runs_agent_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.runs
    ADD CONSTRAINT runs_agent_id_fkey FOREIGN KEY (agent_id) REFERENCES app_private.agent_definitions(id);


--
-- Name: runs runs_conversation_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.runs
    ADD CONSTRAINT runs_conversation_fkey FOREIGN KEY (organization_id, conversation_id) REFERENCES app.conversations(organization_id, id);


--
-- Name: runs runs_organization_id_client_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.runs
    ADD CONSTRAINT runs_organization_id_client_id_fkey FOREIGN KEY (organization_id, client_id) REFERENCES app.api_clients(organization_id, id);


--
-- Name: runs runs_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.runs
    ADD CONSTRAINT runs_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: task_activity task_activity_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.task_activity
    ADD CONSTRAINT task_activity_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: task_activity task_activity_task_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.task_activity
    ADD CONSTRAINT task_activity_task_fkey FOREIGN KEY (organization_id, task_id) REFERENCES app.tasks(organization_id, id) ON DELETE CASCADE;


--
-- Name: task_dependencies task_dependencies_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.task_dependencies
    ADD CONSTRAINT task_dependencies_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: task_dependencies task_dependencies_predecessor_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.task_dependencies
    ADD CONSTRAINT task_dependencies_predecessor_fkey FOREIGN KEY (organization_id, predecessor_task_id) REFERENCES app.tasks(organization_id, id) ON DELETE CASCADE;


--
-- Name: task_dependencies task_dependencies_task_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.task_dependencies
    ADD CONSTRAINT task_dependencies_task_fkey FOREIGN KEY (organization_id, task_id) REFERENCES app.tasks(organization_id, id) ON DELETE CASCADE;


--
-- Name: task_notes task_notes_author_client_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.task_notes
    ADD CONSTRAINT task_notes_author_client_fkey FOREIGN KEY (organization_id, author_client_id) REFERENCES app.api_clients(organization_id, id) ON DELETE RESTRICT;


--
-- Name: task_notes task_notes_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.task_notes
    ADD CONSTRAINT task_notes_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: task_notes task_notes_organization_id_subject_member_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.task_notes
    ADD CONSTRAINT task_notes_organization_id_subject_member_id_fkey FOREIGN KEY (organization_id, subject_member_id) REFERENCES app.members(organization_id, id) ON DELETE RESTRICT;


--
-- Name: task_notes task_notes_task_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.task_notes
    ADD CONSTRAINT task_notes_task_fkey FOREIGN KEY (organization_id, task_id) REFERENCES app.tasks(organization_id, id) ON DELETE CASCADE;


--
-- Name: task_workflow_statuses task_workflow_statuses_workflow_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.task_workflow_statuses
    ADD CONSTRAINT task_workflow_statuses_workflow_fkey FOREIGN KEY (organization_id, workflow_id) REFERENCES app.task_workflows(organization_id, id) ON DELETE CASCADE;


--
-- Name: task_workflow_transitions task_workflow_transitions_from_status_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.task_workflow_transitions
    ADD CONSTRAINT task_workflow_transitions_from_status_fkey FOREIGN KEY (organization_id, workflow_id, from_status) REFERENCES app.task_workflow_statuses(organization_id, workflow_id, status) ON DELETE CASCADE;


--
-- Name: task_workflow_transitions task_workflow_transitions_to_status_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.task_workflow_transitions
    ADD CONSTRAINT task_workflow_transitions_to_status_fkey FOREIGN KEY (organization_id, workflow_id, to_status) REFERENCES app.task_workflow_statuses(organization_id, workflow_id, status) ON DELETE CASCADE;


--
-- Name: task_workflows task_workflows_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.task_workflows
    ADD CONSTRAINT task_workflows_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: tasks tasks_created_by_client_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.tasks
    ADD CONSTRAINT tasks_created_by_client_fkey FOREIGN KEY (organization_id, created_by_client_id) REFERENCES app.api_clients(organization_id, id) ON DELETE RESTRICT;


--
-- Name: tasks tasks_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.tasks
    ADD CONSTRAINT tasks_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: tasks tasks_project_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.tasks
    ADD CONSTRAINT tasks_project_fkey FOREIGN KEY (organization_id, project_id) REFERENCES app.projects(organization_id, id) ON DELETE RESTRICT;


--
-- Name: tasks tasks_status_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.tasks
    ADD CONSTRAINT tasks_status_fkey FOREIGN KEY (organization_id, workflow_id, status) REFERENCES app.task_workflow_statuses(organization_id, workflow_id, status) ON DELETE RESTRICT;


--
-- Name: tasks tasks_workflow_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.tasks
    ADD CONSTRAINT tasks_workflow_fkey FOREIGN KEY (organization_id, workflow_id) REFERENCES app.task_workflows(organization_id, id) ON DELETE RESTRICT;


--
-- Name: ticket_messages ticket_messages_organization_id_author_client_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.ticket_messages
    ADD CONSTRAINT ticket_messages_organization_id_author_client_id_fkey FOREIGN KEY (organization_id, author_client_id) REFERENCES app.api_clients(organization_id, id);


--
-- Name: ticket_messages ticket_messages_organization_id_ticket_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.ticket_messages
    ADD CONSTRAINT ticket_messages_organization_id_ticket_id_fkey FOREIGN KEY (organization_id, ticket_id) REFERENCES app.tickets(organization_id, id);


--
-- Name: ticket_search ticket_search_organization_id_ticket_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.ticket_search
    ADD CONSTRAINT ticket_search_organization_id_ticket_id_fkey FOREIGN KEY (organization_id, ticket_id) REFERENCES app.tickets(organization_id, id) ON DELETE CASCADE;


--
-- Name: ticket_statuses ticket_statuses_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.ticket_statuses
    ADD CONSTRAINT ticket_statuses_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: ticket_transitions ticket_transitions_organization_id_from_status_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.ticket_transitions
    ADD CONSTRAINT ticket_transitions_organization_id_from_status_fkey FOREIGN KEY (organization_id, from_status) REFERENCES app.ticket_statuses(organization_id, status) ON DELETE CASCADE;


--
-- Name: ticket_transitions ticket_transitions_organization_id_to_status_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.ticket_transitions
    ADD CONSTRAINT ticket_transitions_organization_id_to_status_fkey FOREIGN KEY (organization_id, to_status) REFERENCES app.ticket_statuses(organization_id, status) ON DELETE CASCADE;


--
-- Name: tickets tickets_organization_id_created_by_client_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.tickets
    ADD CONSTRAINT tickets_organization_id_created_by_client_id_fkey FOREIGN KEY (organization_id, created_by_client_id) REFERENCES app.api_clients(organization_id, id);


--
-- Name: tickets tickets_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.tickets
    ADD CONSTRAINT tickets_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: tickets tickets_organization_id_project_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.tickets
    ADD CONSTRAINT tickets_organization_id_project_id_fkey FOREIGN KEY (organization_id, project_id) REFERENCES app.projects(organization_id, id);


--
-- Name: tickets tickets_organization_id_status_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.tickets
    ADD CONSTRAINT tickets_organization_id_status_fkey FOREIGN KEY (organization_id, status) REFERENCES app.ticket_statuses(organization_id, status);


--
-- Name: time_entries time_entries_created_by_client_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.time_entries
    ADD CONSTRAINT time_entries_created_by_client_fkey FOREIGN KEY (organization_id, created_by_client_id) REFERENCES app.api_clients(organization_id, id) ON DELETE RESTRICT;


--
-- Name: time_entries time_entries_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.time_entries
    ADD CONSTRAINT time_entries_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: time_entries time_entries_organization_id_member_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.time_entries
    ADD CONSTRAINT time_entries_organization_id_member_id_fkey FOREIGN KEY (organization_id, member_id) REFERENCES app.members(organization_id, id) ON DELETE RESTRICT;


--
-- Name: time_entries time_entries_project_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.time_entries
    ADD CONSTRAINT time_entries_project_fkey FOREIGN KEY (organization_id, project_id) REFERENCES app.projects(organization_id, id) ON DELETE RESTRICT;


--
-- Name: time_entries time_entries_task_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.time_entries
    ADD CONSTRAINT time_entries_task_fkey FOREIGN KEY (organization_id, task_id) REFERENCES app.tasks(organization_id, id) ON DELETE RESTRICT;


--
-- Name: time_entry_audit time_entry_audit_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.time_entry_audit
    ADD CONSTRAINT time_entry_audit_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: time_entry_audit time_entry_audit_time_entry_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.time_entry_audit
    ADD CONSTRAINT time_entry_audit_time_entry_fkey FOREIGN KEY (organization_id, time_entry_id) REFERENCES app.time_entries(organization_id, id) ON DELETE RESTRICT;


--
-- Name: webhook_deliveries webhook_deliveries_endpoint_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_endpoint_fkey FOREIGN KEY (organization_id, client_id, endpoint_id) REFERENCES app.webhook_endpoints(organization_id, client_id, id) ON DELETE CASCADE;


--
-- Name: webhook_deliveries webhook_deliveries_event_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_event_fkey FOREIGN KEY (organization_id, event_id) REFERENCES app.events(organization_id, id) ON DELETE CASCADE;


--
-- Name: webhook_deliveries webhook_deliveries_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: webhook_delivery_attempts webhook_delivery_attempts_delivery_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.webhook_delivery_attempts
    ADD CONSTRAINT webhook_delivery_attempts_delivery_fkey FOREIGN KEY (organization_id, delivery_id) REFERENCES app.webhook_deliveries(organization_id, id) ON DELETE CASCADE;


--
-- Name: webhook_endpoints webhook_endpoints_client_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_client_fkey FOREIGN KEY (organization_id, client_id) REFERENCES app.api_clients(organization_id, id) ON DELETE CASCADE;


--
-- Name: webhook_endpoints webhook_endpoints_organization_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: access_tokens access_tokens_organization_id_client_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.access_tokens
    ADD CONSTRAINT access_tokens_organization_id_client_id_fkey FOREIGN KEY (organization_id, client_id) REFERENCES app.api_clients(organization_id, id) ON DELETE CASCADE;


--
-- Name: access_tokens access_tokens_organization_id_secret_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.access_tokens
    ADD CONSTRAINT access_tokens_organization_id_secret_id_fkey FOREIGN KEY (organization_id, secret_id) REFERENCES app.client_secrets(organization_id, id) ON DELETE CASCADE;


--
-- Name: admin_notifications admin_notifications_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.admin_notifications
    ADD CONSTRAINT admin_notifications_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: invoice_number_counters invoice_number_counters_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.invoice_number_counters
    ADD CONSTRAINT invoice_number_counters_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: job_outbox job_outbox_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.job_outbox
    ADD CONSTRAINT job_outbox_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: ticket_number_counters ticket_number_counters_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.ticket_number_counters
    ADD CONSTRAINT ticket_number_counters_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES app.organizations(id) ON DELETE CASCADE;


--
-- Name: file_chunks Chunks are readable where their file is; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Chunks are readable where their file is" ON app.file_chunks FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND
CASE linked_resource_type
    WHEN 'invoice'::text THEN ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role)
    WHEN 'ticket'::text THEN ( SELECT app_private.may_read_tickets() AS may_read_tickets)
    ELSE ( SELECT app.has_any_role('{member,manager}'::text[]) AS has_any_role)
END));


--
-- Name: POLICY "Chunks are readable where their file is" ON file_chunks; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Chunks are readable where their file is" ON app.file_chunks IS 'svc_api may SELECT upload chunks of the request''s organization whose linked resource type the context''s Roles read: invoice files manager or finance, ticket files whoever may read tickets, project and task files member or manager (the spec: files inherit access from the linked resource). The chunk carries its upload''s linked_resource_type (copied by a trigger), so the policy judges the row alone; downloads read chunks only of a ready file that api.files shows.';


--
-- Name: runs Clients answer and cancel their own runs; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients answer and cancel their own runs" ON app.runs FOR UPDATE TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id)))) WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Clients answer and cancel their own runs" ON runs; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients answer and cancel their own runs" ON app.runs IS 'svc_api may update only runs of the request''s signed organization that its API Client started, before and after the update, and only the status, required_action, state and completed_at columns granted to it: what submitRunAction and cancelRun change. tg_runs__lifecycle still holds every update to the spec''s run states.';


--
-- Name: conversations Clients change their own conversations; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients change their own conversations" ON app.conversations FOR UPDATE TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id)))) WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Clients change their own conversations" ON conversations; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients change their own conversations" ON app.conversations IS 'svc_api may update only conversations of the request''s organization created by the calling client (client_id = app.current_client_id()), checked before and after the change, so no command touches or hands over another client''s conversation: the spec gives a conversation to the client that created it alone. Column grants limit svc_api to the status, archiving, message-count and working-context columns, and tg_conversations__lifecycle keeps client, subject and history fixed.';


--
-- Name: webhook_endpoints Clients change their own endpoints; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients change their own endpoints" ON app.webhook_endpoints FOR UPDATE TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id)))) WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Clients change their own endpoints" ON webhook_endpoints; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients change their own endpoints" ON app.webhook_endpoints IS 'svc_api updates only endpoints of the request''s organization whose client is the request''s client, and cannot hand one to another client or organization (the same check on the new row): a client manages only its own endpoints (spec). Its column grants leave out id, client and organization, and there is no delete policy: endpoints are disabled, never removed, since their deliveries are history.';


--
-- Name: webhook_endpoints Clients create their own endpoints; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients create their own endpoints" ON app.webhook_endpoints FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Clients create their own endpoints" ON webhook_endpoints; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients create their own endpoints" ON app.webhook_endpoints IS 'svc_api inserts an endpoint only in the request''s organization and for the request''s client: a client creates endpoints for itself alone (spec), whatever client_id an insert names. The table''s triggers check the event names and the limit of 20 endpoints per client.';


--
-- Name: file_uploads Clients move their own uploads on; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients move their own uploads on" ON app.file_uploads FOR UPDATE TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (created_by_client_id = ( SELECT app.current_client_id() AS current_client_id)))) WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (created_by_client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Clients move their own uploads on" ON file_uploads; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients move their own uploads on" ON app.file_uploads IS 'svc_api may UPDATE only uploads of the request''s organization that the request''s client created, and cannot hand one to another client or organization: an upload is its client''s own until it becomes a file. Which moves are legal (pending to uploaded to completed, the declaration fixed) is the lifecycle trigger''s to decide.';


--
-- Name: file_policies Clients read their organization's file policy; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients read their organization's file policy" ON app.file_policies FOR SELECT TO svc_api USING ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));


--
-- Name: POLICY "Clients read their organization's file policy" ON file_policies; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients read their organization's file policy" ON app.file_policies IS 'svc_api may SELECT only the file policy of the request''s organization (size limit, permitted content types, whether a scan is required), which createFileUpload applies and returns with each upload. Any Role may read it; only the control plane writes it.';


--
-- Name: report_runs Clients request report runs; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients request report runs" ON app.report_runs FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Clients request report runs" ON report_runs; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients request report runs" ON app.report_runs IS 'svc_api may insert a report run only for the request''s signed organization and with the calling API Client as its requester (client_id): a client cannot run a report in another organization or for another client. tg_report_runs__lifecycle requires the new run to be queued.';


--
-- Name: approvals Clients see approvals of resources their Roles cover; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see approvals of resources their Roles cover" ON app.approvals FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND
CASE category
    WHEN 'project'::text THEN ( SELECT app.has_role('manager'::text) AS has_role)
    WHEN 'financial'::text THEN ( SELECT app.has_role('finance'::text) AS has_role)
    ELSE ( SELECT app.has_role('hr'::text) AS has_role)
END));


--
-- Name: POLICY "Clients see approvals of resources their Roles cover" ON approvals; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see approvals of resources their Roles cover" ON app.approvals IS 'svc_api reads approvals only of the signed request''s organization, and of those only the ones whose resource the client''s Roles cover: category project needs manager, financial needs finance, any other (hr) needs hr (the spec''s Role matrix). svc_api has no policy to write approvals: they are requested by app_private.request_time_entry_approval and decided only by named users, through the control plane.';


--
-- Name: webhook_delivery_attempts Clients see attempts of their own deliveries; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see attempts of their own deliveries" ON app.webhook_delivery_attempts FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Clients see attempts of their own deliveries" ON webhook_delivery_attempts; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see attempts of their own deliveries" ON app.webhook_delivery_attempts IS 'svc_api reads delivery attempts of the request''s organization made for the request''s client: each attempt carries its delivery''s client, copied by the _010_client_of_parent trigger, so the policy judges the row alone (Citus refuses a policy that reads another table). Only the worker writes attempts.';


--
-- Name: customers Clients see customers of their organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see customers of their organization" ON app.customers FOR SELECT TO svc_api USING ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));


--
-- Name: POLICY "Clients see customers of their organization" ON customers; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see customers of their organization" ON app.customers IS 'svc_api reads, whatever the caller''s Roles, the customers of the request''s organization (from the signed context; nothing without one): the API has no customer endpoint, but its invoice commands check that a customer_id names a billing customer (cus_) of the caller''s organization that is not deleted. Customers are managed through the control plane only, so svc_api has no write policy.';


--
-- Name: webhook_deliveries Clients see deliveries to their own endpoints; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see deliveries to their own endpoints" ON app.webhook_deliveries FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Clients see deliveries to their own endpoints" ON webhook_deliveries; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see deliveries to their own endpoints" ON app.webhook_deliveries IS 'svc_api reads deliveries of the request''s organization whose client is the request''s client: each delivery carries its endpoint''s client (set by the fan-out, a replay and a test), so a client sees only deliveries to its own endpoints. svc_api never writes deliveries: svc_owner''s commands and the worker do.';


--
-- Name: task_dependencies Clients see dependencies in their organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see dependencies in their organization" ON app.task_dependencies FOR SELECT TO svc_api USING ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));


--
-- Name: POLICY "Clients see dependencies in their organization" ON task_dependencies; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see dependencies in their organization" ON app.task_dependencies IS 'svc_api reads every task dependency of the request''s organization, with no Role condition: the API shows a dependency as a task''s predecessor_task_ids, which api.tasks projects for member and manager only. Another organization''s dependencies, and all of them without a valid signed context, are invisible.';


--
-- Name: task_notes Clients see notes in their organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see notes in their organization" ON app.task_notes FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{member,manager}'::text[]) AS has_any_role)));


--
-- Name: POLICY "Clients see notes in their organization" ON task_notes; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see notes in their organization" ON app.task_notes IS 'svc_api reads task notes of the request''s organization only for a client holding member or manager: notes belong to a task''s work context, which finance and hr (limited to the project-financial and staffing context) do not see.';


--
-- Name: api_clients Clients see only themselves; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see only themselves" ON app.api_clients FOR SELECT TO svc_api USING (((id = ( SELECT app.current_client_id() AS current_client_id)) AND (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Clients see only themselves" ON api_clients; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see only themselves" ON app.api_clients IS 'svc_api (the api views and commands) reads only the calling client''s own row of app.api_clients, in the request''s organization, and only under a signed request context (app.current_client_id(), app.current_organization_id()). A client reads its own principal but never sees the other clients of its organization, which only administrators manage (spec).';


--
-- Name: integration_connections Clients see organization connections relevant to their Roles; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see organization connections relevant to their Roles" ON app.integration_connections FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (ownership = 'organization'::text) AND app_private.integration_visible(category)));


--
-- Name: POLICY "Clients see organization connections relevant to their Roles" ON integration_connections; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see organization connections relevant to their Roles" ON app.integration_connections IS 'svc_api reads the integration connections of the request''s organization that are organization-owned and relevant to a held Role: accounting connections with finance, every other category with manager (app_private.integration_visible), as the spec''s Role matrix says. Personal connections belong to a named user and are never shown to an API Client (only named as a blocker by api.integration_readiness and api.integration_connection_hidden_reason); the API only reads connections, which the control plane manages.';


--
-- Name: task_activity Clients see task activity of their organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see task activity of their organization" ON app.task_activity FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{member,manager}'::text[]) AS has_any_role)));


--
-- Name: POLICY "Clients see task activity of their organization" ON task_activity; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see task activity of their organization" ON app.task_activity IS 'svc_api reads task activity (transitions with their actor and subject) of the request''s organization only for a client holding member or manager, the Roles that see a task''s whole work context; finance and hr do not.';


--
-- Name: custom_field_definitions Clients see the custom fields their Roles may read; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see the custom fields their Roles may read" ON app.custom_field_definitions FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (readable_roles && ( SELECT app.current_roles() AS current_roles))));


--
-- Name: POLICY "Clients see the custom fields their Roles may read" ON custom_field_definitions; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see the custom fields their Roles may read" ON app.custom_field_definitions IS 'svc_api reads a custom-field definition only in the request''s organization and when its readable_roles share a Role with the request''s Roles (app.current_roles()). A field the caller may not read is thus absent from its schemas and its values are dropped by readable_custom_fields, indistinguishable from a field that does not exist.';


--
-- Name: object_schemas Clients see their organization's object schemas; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see their organization's object schemas" ON app.object_schemas FOR SELECT TO svc_api USING ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));


--
-- Name: POLICY "Clients see their organization's object schemas" ON object_schemas; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see their organization's object schemas" ON app.object_schemas IS 'svc_api reads the object schemas (project, task) and their schema_version of the request''s organization only; which fields a schema lists is decided by the custom-field definitions'' own policy.';


--
-- Name: agent_publications Clients see their organization's publications; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see their organization's publications" ON app.agent_publications FOR SELECT TO svc_api USING ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));


--
-- Name: POLICY "Clients see their organization's publications" ON agent_publications; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see their organization's publications" ON app.agent_publications IS 'svc_api may read the publication status of each agent for the request''s signed organization only, so a client sees and starts only the agents its organization publishes (api.agents, app_private.agent_lookup) and learns AGENT_NOT_PUBLISHED for one it unpublished. Publishing is the control plane''s (svc-admin): svc_api has no write on the table.';


--
-- Name: ticket_transitions Clients see their organization's ticket transitions; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see their organization's ticket transitions" ON app.ticket_transitions FOR SELECT TO svc_api USING ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));


--
-- Name: POLICY "Clients see their organization's ticket transitions" ON ticket_transitions; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see their organization's ticket transitions" ON app.ticket_transitions IS 'svc_api may SELECT only the ticket workflow transitions of the request''s organization, which each ticket lists as the transitions offered from its status and transitionTicket applies. Each organization has its own workflow; no client writes it.';


--
-- Name: ticket_statuses Clients see their organization's ticket workflow; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see their organization's ticket workflow" ON app.ticket_statuses FOR SELECT TO svc_api USING ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));


--
-- Name: POLICY "Clients see their organization's ticket workflow" ON ticket_statuses; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see their organization's ticket workflow" ON app.ticket_statuses IS 'svc_api may SELECT only the ticket statuses of the request''s organization (its workflow: categories and the initial status), which createTicket and the ticket documents use. Each organization has its own workflow; no client writes it.';


--
-- Name: task_workflow_statuses Clients see their organization's workflows; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see their organization's workflows" ON app.task_workflow_statuses FOR SELECT TO svc_api USING ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));


--
-- Name: POLICY "Clients see their organization's workflows" ON task_workflow_statuses; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see their organization's workflows" ON app.task_workflow_statuses IS 'svc_api reads the task workflow statuses (each with its category open, done or cancelled, and the initial one) of the request''s organization only, as the task commands and api.tasks need; svc_api may not write them: they are seeded with the organization.';


--
-- Name: task_workflow_transitions Clients see their organization's workflows; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see their organization's workflows" ON app.task_workflow_transitions FOR SELECT TO svc_api USING ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));


--
-- Name: POLICY "Clients see their organization's workflows" ON task_workflow_transitions; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see their organization's workflows" ON app.task_workflow_transitions IS 'svc_api reads the named task workflow transitions of the request''s organization only: what transitionTask accepts and what api.tasks offers on each task. svc_api may not write them: they are seeded with the organization.';


--
-- Name: task_workflows Clients see their organization's workflows; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see their organization's workflows" ON app.task_workflows FOR SELECT TO svc_api USING ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));


--
-- Name: POLICY "Clients see their organization's workflows" ON task_workflows; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see their organization's workflows" ON app.task_workflows IS 'svc_api reads the task workflows of the request''s organization only, with the organization''s task policy (members_may_add_notes, allow_cross_project_dependencies). svc_api may not write them: the workflow is seeded with the organization and its policy set by svc-admin.';


--
-- Name: conversations Clients see their own conversations; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see their own conversations" ON app.conversations FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Clients see their own conversations" ON conversations; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see their own conversations" ON app.conversations IS 'svc_api reads only conversations of the request''s organization whose client_id is the calling client: a conversation is visible to the client that created it, not to the rest of its organization (spec Role matrix: runs, conversations). Without a valid signed context nothing is visible.';


--
-- Name: webhook_endpoints Clients see their own endpoints; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see their own endpoints" ON app.webhook_endpoints FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Clients see their own endpoints" ON webhook_endpoints; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see their own endpoints" ON app.webhook_endpoints IS 'svc_api reads only the endpoints of the request''s organization that belong to the request''s client (spec: a client sees and manages only its own endpoints); another client''s endpoint is WEBHOOK_ENDPOINT_NOT_FOUND.';


--
-- Name: organizations Clients see their own organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see their own organization" ON app.organizations FOR SELECT TO svc_api USING ((id = ( SELECT app.current_organization_id() AS current_organization_id)));


--
-- Name: POLICY "Clients see their own organization" ON organizations; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see their own organization" ON app.organizations IS 'svc_api reads only the row of the signed request context''s organization in app.organizations. A client reads its own organization and never another; with no context, or a forged or copied one, it reads none.';


--
-- Name: report_runs Clients see their own report runs; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see their own report runs" ON app.report_runs FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Clients see their own report runs" ON report_runs; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see their own report runs" ON app.report_runs IS 'svc_api may read only the report runs of the request''s signed organization that its API Client requested: a run and its results belong to the client that asked (REPORT_RUN_NOT_FOUND for any other). With no valid context it sees nothing.';


--
-- Name: runs Clients see their own runs; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see their own runs" ON app.runs FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Clients see their own runs" ON runs; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see their own runs" ON app.runs IS 'svc_api may read only the runs of the request''s signed organization that its API Client started: a run belongs to the client that created it, so another client of the same organization gets RUN_NOT_FOUND. With no valid context it sees nothing.';


--
-- Name: file_uploads Clients see their own uploads; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients see their own uploads" ON app.file_uploads FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (created_by_client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Clients see their own uploads" ON file_uploads; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients see their own uploads" ON app.file_uploads IS 'svc_api may SELECT only uploads of the request''s organization that the request''s client created: an upload, its capability token and its progress are private to the client that started it until it completes into a file, which then follows its linked resource''s access.';


--
-- Name: conversations Clients start conversations; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients start conversations" ON app.conversations FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Clients start conversations" ON conversations; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients start conversations" ON app.conversations IS 'svc_api may insert a conversation only into the request''s organization and with client_id the calling client, so a client cannot start a conversation in another client''s name or organization.';


--
-- Name: runs Clients start runs; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients start runs" ON app.runs FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Clients start runs" ON runs; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients start runs" ON app.runs IS 'svc_api may insert a run only for the request''s signed organization and with the calling API Client as its actor (client_id): a client cannot start a run in another organization or on another client''s behalf. tg_runs__lifecycle requires the new run to be queued.';


--
-- Name: idempotency_keys Clients use only their own idempotency keys; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients use only their own idempotency keys" ON app.idempotency_keys TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id)))) WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Clients use only their own idempotency keys" ON idempotency_keys; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients use only their own idempotency keys" ON app.idempotency_keys IS 'svc_api reads and writes (every command) only the Idempotency-Keys whose organization and client are those of the signed request context, in USING and WITH CHECK. Keys are scoped per client, so no client can replay, detect or overwrite another client''s stored response, even within its own organization.';


--
-- Name: members Clients with any Role see members of their organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients with any Role see members of their organization" ON app.members FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{member,manager,finance,hr}'::text[]) AS has_any_role)));


--
-- Name: POLICY "Clients with any Role see members of their organization" ON members; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients with any Role see members of their organization" ON app.members IS 'svc_api reads members only of the signed request''s organization, and only when the client holds one of member, manager, finance or hr (the spec''s Role matrix for members). Column grants keep the HR-restricted fields out of this read; only app_private.member_hr_profile shows them, to hr.';


--
-- Name: projects Clients with any Role see projects of their organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients with any Role see projects of their organization" ON app.projects FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{member,manager,finance,hr}'::text[]) AS has_any_role)));


--
-- Name: POLICY "Clients with any Role see projects of their organization" ON projects; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients with any Role see projects of their organization" ON app.projects IS 'svc_api reads projects of the request''s organization for a client holding any of member, manager, finance or hr, as the spec''s Role matrix lets every Role read projects. Which fields each Role sees is the api.projects view''s projection (finance financial fields, hr staffing fields).';


--
-- Name: tasks Clients with any Role see tasks of their organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients with any Role see tasks of their organization" ON app.tasks FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{member,manager,finance,hr}'::text[]) AS has_any_role)));


--
-- Name: POLICY "Clients with any Role see tasks of their organization" ON tasks; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients with any Role see tasks of their organization" ON app.tasks IS 'svc_api reads tasks of the request''s organization for a client holding any of member, manager, finance or hr, as the spec''s Role matrix lets every Role read tasks. Which fields each Role sees is the api.tasks view''s projection (finance project-financial context, hr staffing context).';


--
-- Name: file_chunks Clients write the bytes of their own pending uploads; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients write the bytes of their own pending uploads" ON app.file_chunks FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Clients write the bytes of their own pending uploads" ON file_chunks; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients write the bytes of their own pending uploads" ON app.file_chunks IS 'svc_api may INSERT chunks only in the request''s organization and only for the request''s client, the upload''s creator that a trigger copies into the row whatever the insert says: a client writes bytes into its own uploads alone. That the upload is still pending and the chunk within its chunk size is the chunk guard trigger''s check.';


--
-- Name: conversation_messages Clients write to their own conversations; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Clients write to their own conversations" ON app.conversation_messages FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (role = 'user'::text) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Clients write to their own conversations" ON conversation_messages; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Clients write to their own conversations" ON app.conversation_messages IS 'svc_api may insert only messages of role user, in the request''s organization, whose client_id is the calling client; tg__client_of_parent copies client_id from the conversation before the check, so this admits a message only to one of the client''s own conversations. The assistant''s replies are appended by tg_runs__conversation_reply as svc_owner, never by a request.';


--
-- Name: agent_publications Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.agent_publications TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON agent_publications; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.agent_publications IS 'svc_owner, svc_worker and svc_admin, every command: the publications of the request''s signed organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). So tg_organizations__publish_agents publishes the catalogue for a new organization and svc-admin publishes or unpublishes an agent, while a definer running in a request cannot reach another organization''s publications even with a wrong WHERE.';


--
-- Name: api_clients Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.api_clients TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON api_clients; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.api_clients IS 'For svc_owner, svc_worker and svc_admin, every command: the clients of the signed request''s organization (app.current_organization_id()), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations), in USING and WITH CHECK. The triggers and definers svc_owner owns thus reach only the request''s organization''s clients, while the control plane, which creates, licenses and disables clients for any organization, reaches them all.';


--
-- Name: approvals Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.approvals TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON approvals; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.approvals IS 'For svc_owner, svc_worker and svc_admin, every command: the approvals of the signed request''s organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations), in USING and WITH CHECK. The svc_owner helpers that request and check approvals (request_time_entry_approval, approval_exists, tg_time_entries__submitted_has_approval) stay in the request''s organization, while the control plane''s decisions (control.approval_decide) reach any organization.';


--
-- Name: conversation_messages Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.conversation_messages TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON conversation_messages; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.conversation_messages IS 'svc_owner, svc_worker and svc_admin read and write messages of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The assistant''s replies (tg_runs__conversation_reply), compaction and the worker''s chat context run under it, so a definer''s wrong WHERE still reaches no other organization in a request, while jobs that span organizations reach them all.';


--
-- Name: conversations Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.conversations TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON conversations; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.conversations IS 'svc_owner, svc_worker and svc_admin read and write conversations of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). Compaction, the chat reply trigger, tg__client_of_parent and the worker''s context expiry run under it, so a definer''s wrong WHERE still reaches no other organization in a request, while jobs that span organizations reach them all.';


--
-- Name: custom_field_definitions Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.custom_field_definitions TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON custom_field_definitions; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.custom_field_definitions IS 'svc_owner, svc_worker and svc_admin read and write custom-field definitions of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). custom_field_errors and custom_field_patch_errors read every definition here, those the caller''s Roles hide included, yet never another organization''s in a request; svc-admin defines and deletes fields for any organization.';


--
-- Name: customers Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.customers TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON customers; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.customers IS 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only customers of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So the invoicing commands and triggers that read customers as svc_owner (issuing, the billing and company customer checks) stay in the caller''s organization even with a wrong WHERE, while svc-admin manages every organization''s customers.';


--
-- Name: events Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.events TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON events; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.events IS 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only events of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So emit_event and the test event, which write the outbox as svc_owner inside a request, stay in the caller''s organization, while the worker''s fan-out, claims, recovery and purge span organizations.';


--
-- Name: file_chunks Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.file_chunks TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON file_chunks; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.file_chunks IS 'svc_owner, svc_worker and svc_admin may read and write upload chunks of the request''s organization, or of every organization in an operator session (the worker, svc-admin, migrations): the triggers that guard chunks and check an upload''s received size, and the scan job that reads them and deletes a rejected file''s bytes. A command with a wrong WHERE inside a request still reaches no other organization''s bytes.';


--
-- Name: file_contents Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.file_contents TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON file_contents; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.file_contents IS 'svc_owner, svc_worker and svc_admin may read and write stored file content of the request''s organization, or of every organization in an operator session (the worker, svc-admin, migrations): the invoice PDF that api.invoice_attach_pdf stores, and the worker''s reply email, which attaches a stored file. A command with a wrong WHERE inside a request still reaches no other organization''s content.';


--
-- Name: file_policies Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.file_policies TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON file_policies; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.file_policies IS 'svc_owner, svc_worker and svc_admin may read and write file policies of the request''s organization, or of every organization in an operator session: svc-admin sets an organization''s policy (control.file_policy_set), the scan job reads whether a scan is required, and app_private.file_policy reads it inside a request. A command with a wrong WHERE inside a request still reaches no other organization''s row.';


--
-- Name: file_uploads Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.file_uploads TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON file_uploads; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.file_uploads IS 'svc_owner, svc_worker and svc_admin may read and write uploads of the request''s organization, or of every organization in an operator session (the worker, svc-admin, migrations): the triggers that check uploads against their files and chunks, and the purge of expired uploads. A command with a wrong WHERE inside a request still reaches no other organization''s uploads.';


--
-- Name: files Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.files TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON files; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.files IS 'svc_owner, svc_worker and svc_admin may read and write files of the request''s organization, or of every organization in an operator session (the worker, svc-admin, migrations): the service''s own files (invoice PDFs), the scan job''s ready or rejected outcome, legal holds set by svc-admin, and the triggers and helpers that read files. A command with a wrong WHERE inside a request still reaches no other organization''s files.';


--
-- Name: idempotency_keys Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.idempotency_keys TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON idempotency_keys; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.idempotency_keys IS 'For svc_owner, svc_worker and svc_admin, every command: the Idempotency-Keys of the signed request''s organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations), in USING and WITH CHECK. The worker''s purge of expired keys (control.purge_expired_idempotency_keys) spans organizations, while a definer run inside a request stays in its own.';


--
-- Name: integration_connections Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.integration_connections TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON integration_connections; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.integration_connections IS 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only integration connections of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So the readiness check, the hidden-reason lookup, issuing and voiding, which read connections as svc_owner (the ones svc_api''s policy hides too), stay in the caller''s organization, while the control plane and the worker''s accounting sync write them.';


--
-- Name: invoice_lines Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.invoice_lines TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON invoice_lines; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.invoice_lines IS 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only invoice lines of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So svc_owner''s reads of lines inside a request (issuing''s check that lines exist, the totals'' sums, the currency guard) stay in the caller''s organization even with a wrong WHERE.';


--
-- Name: invoices Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.invoices TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON invoices; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.invoices IS 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only invoices of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So issuing, voiding, the PDF, the totals and the payments'' updates, written as svc_owner because svc_api may not write statuses, numbers, totals or amount_paid, stay in the caller''s organization even with a wrong WHERE, while the worker''s accounting sync and svc-admin''s sync retry span organizations.';


--
-- Name: members Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.members TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON members; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.members IS 'For svc_owner, svc_worker and svc_admin, every command: the members of the signed request''s organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations), in USING and WITH CHECK. Definers and triggers run inside a request (such as check_subject and the time-entry validation) thus read only that organization''s members, while the control plane manages the members of any organization.';


--
-- Name: object_schemas Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.object_schemas TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON object_schemas; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.object_schemas IS 'svc_owner, svc_worker and svc_admin read and write object schemas of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). Under it svc-admin''s sessions seed a new organization''s schemas and bump schema_version when a field changes, while a request reaches its own organization''s alone.';


--
-- Name: organizations Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.organizations TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON organizations; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.organizations IS 'For svc_owner, svc_worker and svc_admin, every command: the signed request''s organization (id = app.current_organization_id()), or every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations), in USING and WITH CHECK. A definer or trigger run in a request reads only its own organization''s settings (plan, timezone, policies), while the control plane creates and configures any organization and the worker''s jobs span them.';


--
-- Name: payments Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.payments TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON payments; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.payments IS 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only payments of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So whatever svc_owner reads of payments inside a request stays in the caller''s organization even with a wrong WHERE; a payment itself is never changed or deleted (tg_payments__immutable).';


--
-- Name: projects Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.projects TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON projects; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.projects IS 'svc_owner, svc_worker and svc_admin read and write projects of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The triggers of tasks, time entries and tickets read a row''s project under it, so a definer''s wrong WHERE still reaches no other organization in a request, while jobs and the control plane reach them all.';


--
-- Name: report_results Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.report_results TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON report_results; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.report_results IS 'svc_owner, svc_worker and svc_admin, every command: the report results of the request''s signed organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The worker writes a run''s rows (app_private.report_run_execute) and the retention purge deletes expired ones, across organizations; a definer running in a request cannot reach another organization''s results even with a wrong WHERE.';


--
-- Name: report_runs Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.report_runs TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON report_runs; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.report_runs IS 'svc_owner, svc_worker and svc_admin, every command: the report runs of the request''s signed organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The worker starts, completes or fails runs and the retention purge marks results purged, across organizations; a definer running in a request cannot reach another organization''s runs even with a wrong WHERE.';


--
-- Name: run_events Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.run_events TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON run_events; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.run_events IS 'svc_owner, svc_worker and svc_admin, every command: the run events of the request''s signed organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). So app_private.run_event appends to a run''s log from a request (a status change by cancelRun) only in its organization, while the worker''s engine and the retention purge, whose jobs span organizations, reach every run''s log.';


--
-- Name: run_tool_calls Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.run_tool_calls TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON run_tool_calls; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.run_tool_calls IS 'svc_owner, svc_worker and svc_admin, every command: the tool calls of the request''s signed organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The worker''s app_private.run_tool records each call for audit in the run''s organization; a definer running in a request cannot reach another organization''s calls even with a wrong WHERE.';


--
-- Name: runs Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.runs TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON runs; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.runs IS 'svc_owner, svc_worker and svc_admin, every command: the runs of the request''s signed organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The worker''s engine (starting, settling and tool calls) and the output retention purge span organizations; svc_owner''s triggers and helpers inside a request stay in its organization even with a wrong WHERE.';


--
-- Name: task_activity Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.task_activity TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON task_activity; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.task_activity IS 'svc_owner, svc_worker and svc_admin read and write task activity of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). It is every tenant table''s policy for the owner, worker and admin roles; requests themselves write task history only through svc_api''s "Managers record task activity".';


--
-- Name: task_dependencies Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.task_dependencies TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON task_dependencies; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.task_dependencies IS 'svc_owner, svc_worker and svc_admin read and write task dependencies of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). tg_task_dependencies__no_cycle and task_archive_blockers walk the organization''s dependency graph under it, past svc_api''s Role checks but never into another organization in a request.';


--
-- Name: task_notes Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.task_notes TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON task_notes; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.task_notes IS 'svc_owner, svc_worker and svc_admin read and write task notes of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). It is every tenant table''s policy for the owner, worker and admin roles; requests themselves add notes only through svc_api''s "Managers, or members where the task policy permits, add notes".';


--
-- Name: task_workflow_statuses Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.task_workflow_statuses TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON task_workflow_statuses; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.task_workflow_statuses IS 'svc_owner, svc_worker and svc_admin read and write task workflow statuses of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The task triggers and archive blockers read statuses under it in a request, and svc-admin''s session seeds a new organization''s default workflow.';


--
-- Name: task_workflow_transitions Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.task_workflow_transitions TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON task_workflow_transitions; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.task_workflow_transitions IS 'svc_owner, svc_worker and svc_admin read and write task workflow transitions of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). tg_tasks__legal_transition reads transitions under it in a request, and svc-admin''s session seeds a new organization''s default workflow.';


--
-- Name: task_workflows Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.task_workflows TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON task_workflows; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.task_workflows IS 'svc_owner, svc_worker and svc_admin read and write task workflows of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The dependency and note triggers read the task policy under it in a request, and svc-admin seeds the default workflow and sets the task policy for any organization.';


--
-- Name: tasks Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.tasks TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON tasks; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.tasks IS 'svc_owner, svc_worker and svc_admin read and write tasks of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The dependency, note and time-entry triggers and the archive blockers read tasks under it whatever the caller''s Roles, so a definer''s wrong WHERE still reaches no other organization in a request.';


--
-- Name: ticket_messages Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.ticket_messages TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON ticket_messages; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.ticket_messages IS 'svc_owner, svc_worker and svc_admin may read and write ticket messages of the request''s organization, or of every organization in an operator session (the worker, svc-admin, migrations): the triggers that index and emit messages and the worker''s reply email, which records a reply''s delivery. A command with a wrong WHERE inside a request still reaches no other organization''s messages.';


--
-- Name: ticket_search Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.ticket_search TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON ticket_search; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.ticket_search IS 'svc_owner, svc_worker and svc_admin may read and write ticket search documents of the request''s organization, or of every organization in an operator session: the triggers that keep the public and internal-note documents and api.ticket_search_ids, which searches them. A command with a wrong WHERE inside a request still reaches no other organization''s documents.';


--
-- Name: ticket_statuses Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.ticket_statuses TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON ticket_statuses; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.ticket_statuses IS 'svc_owner, svc_worker and svc_admin may read and write ticket statuses of the request''s organization, or of every organization in an operator session: the default workflow seeded when svc-admin creates an organization, and the rules trigger that checks a ticket''s status. A command with a wrong WHERE inside a request still reaches no other organization''s workflow.';


--
-- Name: ticket_transitions Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.ticket_transitions TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON ticket_transitions; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.ticket_transitions IS 'svc_owner, svc_worker and svc_admin may read and write ticket transitions of the request''s organization, or of every organization in an operator session: the default workflow seeded when svc-admin creates an organization, and the rules trigger that checks a status change. A command with a wrong WHERE inside a request still reaches no other organization''s workflow.';


--
-- Name: tickets Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.tickets TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON tickets; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.tickets IS 'svc_owner, svc_worker and svc_admin may read and write tickets of the request''s organization, or of every organization in an operator session (the worker, svc-admin, migrations): the triggers and helpers that check, index and emit tickets, and the worker''s reply email, which reads the ticket it answers. A command with a wrong WHERE inside a request still reaches no other organization''s tickets.';


--
-- Name: time_entries Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.time_entries TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON time_entries; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.time_entries IS 'For svc_owner, svc_worker and svc_admin, every command: the time entries of the signed request''s organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations), in USING and WITH CHECK. The svc_owner triggers and helpers (the validation, the approval request) stay in the request''s organization, while the control plane''s approval decision moves an entry of any organization to approved or rejected.';


--
-- Name: time_entry_audit Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.time_entry_audit TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON time_entry_audit; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.time_entry_audit IS 'For svc_owner, svc_worker and svc_admin, every command: the time audit rows of the signed request''s organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations), in USING and WITH CHECK. A definer run in a request reaches only its own organization''s audit, while jobs and the control plane, whose work spans organizations, reach all of it.';


--
-- Name: webhook_deliveries Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.webhook_deliveries TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON webhook_deliveries; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.webhook_deliveries IS 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only webhook deliveries of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So a replay or a test delivery, written as svc_owner inside a request, stays in the caller''s organization, while the worker''s fan-out, claims, retries, recovery and purge span organizations.';


--
-- Name: webhook_delivery_attempts Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.webhook_delivery_attempts TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON webhook_delivery_attempts; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.webhook_delivery_attempts IS 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only webhook delivery attempts of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. The worker records the attempts of every organization''s deliveries; svc_owner inside a request sees only its own organization''s.';


--
-- Name: webhook_endpoints Commands act in the request's organization; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app.webhook_endpoints TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON webhook_endpoints; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app.webhook_endpoints IS 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only webhook endpoints of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So svc_owner''s reads of endpoints inside a request (replay, test, the limit''s count, emit_event''s subscription check) stay in the caller''s organization, while the worker''s fan-out and automatic disabling span organizations.';


--
-- Name: run_events Events are readable with their run; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Events are readable with their run" ON app.run_events FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Events are readable with their run" ON run_events; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Events are readable with their run" ON app.run_events IS 'svc_api may read a run event only in the request''s signed organization and only when its client_id is the calling API Client''s: the events of the client''s own runs, as "Clients see their own runs" shows the runs. client_id is copied from the run by tg__client_of_parent when the event is inserted and never changes, so the policy judges the row alone, without reading app.runs.';


--
-- Name: events Events are visible through the client's deliveries; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Events are visible through the client's deliveries" ON app.events FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (( SELECT app.current_client_id() AS current_client_id) = ANY (client_ids))));


--
-- Name: POLICY "Events are visible through the client's deliveries" ON events; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Events are visible through the client's deliveries" ON app.events IS 'svc_api reads an event of the request''s organization only when the request''s client is in its client_ids, the clients it was delivered to (set by the fan-out''s closing update and by a test event), so a delivery shows its event while a client cannot read the organization''s outbox. Events are written only by svc_owner''s triggers and commands and by the worker.';


--
-- Name: file_contents File content is readable where the file is; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "File content is readable where the file is" ON app.file_contents FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND
CASE linked_resource_type
    WHEN 'invoice'::text THEN ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role)
    WHEN 'ticket'::text THEN ( SELECT app_private.may_read_tickets() AS may_read_tickets)
    ELSE ( SELECT app.has_any_role('{member,manager}'::text[]) AS has_any_role)
END));


--
-- Name: POLICY "File content is readable where the file is" ON file_contents; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "File content is readable where the file is" ON app.file_contents IS 'svc_api may SELECT stored content (files the service made, such as invoice PDFs) of the request''s organization only where the context''s Roles read the file''s linked resource type: invoice files manager or finance, ticket files whoever may read tickets, project and task files member or manager. The content row carries its file''s linked_resource_type (copied by a trigger), so the policy judges the row alone.';


--
-- Name: files Files are visible where the linked resource is; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Files are visible where the linked resource is" ON app.files FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND
CASE linked_resource_type
    WHEN 'invoice'::text THEN ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role)
    WHEN 'ticket'::text THEN ( SELECT app_private.may_read_tickets() AS may_read_tickets)
    ELSE ( SELECT app.has_any_role('{member,manager}'::text[]) AS has_any_role)
END));


--
-- Name: POLICY "Files are visible where the linked resource is" ON files; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Files are visible where the linked resource is" ON app.files IS 'svc_api may SELECT files of the request''s organization only where the context''s Roles read the linked resource''s files (the spec: files inherit access from the linked resource): invoice files manager or finance, ticket files whoever may read tickets (app_private.may_read_tickets), project and task files member or manager. A file hidden here answers 404 or 403 through app_private.file_link, by whether the caller sees the resource itself.';


--
-- Name: ticket_messages Managers add messages; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Managers add messages" ON app.ticket_messages FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (author_client_id = ( SELECT app.current_client_id() AS current_client_id)) AND ( SELECT app.has_role('manager'::text) AS has_role) AND ( SELECT app_private.may_read_tickets() AS may_read_tickets)));


--
-- Name: POLICY "Managers add messages" ON ticket_messages; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Managers add messages" ON app.ticket_messages IS 'svc_api may INSERT a ticket message only in the request''s organization, authored by the request''s client, when the context holds the manager Role and may read tickets (the module on): the spec gives replies and notes to managers and records the client as author.';


--
-- Name: invoices Managers and finance change invoices; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Managers and finance change invoices" ON app.invoices FOR UPDATE TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role))) WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role)));


--
-- Name: POLICY "Managers and finance change invoices" ON invoices; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Managers and finance change invoices" ON app.invoices IS 'svc_api updates an invoice only in the request''s organization and only when the caller holds manager or finance (the spec''s Role matrix for invoices), and cannot move it to another organization (the same check on the new row). Its column grants allow only the draft fields customer_id, currency, issue_date, due_date and memo; tg_invoices__guard refuses any change of an issued invoice (INVOICE_NOT_EDITABLE), and statuses, numbers and totals are written by svc_owner''s commands and triggers.';


--
-- Name: invoice_lines Managers and finance delete draft lines; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Managers and finance delete draft lines" ON app.invoice_lines FOR DELETE TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role)));


--
-- Name: POLICY "Managers and finance delete draft lines" ON invoice_lines; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Managers and finance delete draft lines" ON app.invoice_lines IS 'svc_api deletes invoice lines only in the request''s organization and only when the caller holds manager or finance: this is how app_private.invoice_set_lines replaces a draft''s lines, since svc_api may not update a line. The draft condition of the name is enforced by the _100_compute trigger (tg_invoice_lines__compute), which refuses a line change on an issued invoice with INVOICE_NOT_EDITABLE.';


--
-- Name: invoices Managers and finance read invoices; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Managers and finance read invoices" ON app.invoices FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role)));


--
-- Name: POLICY "Managers and finance read invoices" ON invoices; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Managers and finance read invoices" ON app.invoices IS 'svc_api reads invoices, and api.invoices shows them, only in the request''s organization and only when the caller holds manager or finance: member and hr have no access to invoices (spec Role matrix), and the policy keeps that fence in the database whatever a command forgets to check.';


--
-- Name: invoice_lines Managers and finance read lines; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Managers and finance read lines" ON app.invoice_lines FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role)));


--
-- Name: POLICY "Managers and finance read lines" ON invoice_lines; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Managers and finance read lines" ON app.invoice_lines IS 'svc_api reads invoice lines, shown with their invoice in api.invoices, only in the request''s organization and only when the caller holds manager or finance, the Roles that may read invoices (spec Role matrix).';


--
-- Name: payments Managers and finance read payments; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Managers and finance read payments" ON app.payments FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role)));


--
-- Name: POLICY "Managers and finance read payments" ON payments; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Managers and finance read payments" ON app.payments IS 'svc_api reads payments only in the request''s organization and only when the caller holds manager or finance: payments share the invoices'' Role fence (spec Role matrix; member and hr have no access).';


--
-- Name: payments Managers and finance record payments; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Managers and finance record payments" ON app.payments FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role)));


--
-- Name: POLICY "Managers and finance record payments" ON payments; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Managers and finance record payments" ON app.payments IS 'svc_api inserts a payment only in the request''s organization and only when the caller holds manager or finance (api.payment_create). Payments are records: there is no update or delete policy, tg_payments__immutable refuses both, and the _100_apply trigger checks each payment against its invoice.';


--
-- Name: invoices Managers and finance write invoices; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Managers and finance write invoices" ON app.invoices FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role)));


--
-- Name: POLICY "Managers and finance write invoices" ON invoices; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Managers and finance write invoices" ON app.invoices IS 'svc_api creates invoices only in the request''s organization and only when the caller holds manager or finance (api.invoice_create). Its column grants take only the customer, currency, dates, memo and creating client, and tg_invoices__guard makes every new invoice an empty draft without a number, whatever the insert says: totals and numbers are the service''s.';


--
-- Name: invoice_lines Managers and finance write lines; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Managers and finance write lines" ON app.invoice_lines FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{manager,finance}'::text[]) AS has_any_role)));


--
-- Name: POLICY "Managers and finance write lines" ON invoice_lines; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Managers and finance write lines" ON app.invoice_lines IS 'svc_api inserts invoice lines only in the request''s organization and only when the caller holds manager or finance (app_private.invoice_set_lines). Its column grants leave out amount and tax_amount, which tg_invoice_lines__compute calculates, and that trigger accepts lines on drafts only (INVOICE_NOT_EDITABLE).';


--
-- Name: task_dependencies Managers change dependencies; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Managers change dependencies" ON app.task_dependencies TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role))) WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role)));


--
-- Name: POLICY "Managers change dependencies" ON task_dependencies; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Managers change dependencies" ON app.task_dependencies IS 'svc_api may insert and delete (and read) task dependencies only in the request''s organization and only for a client holding manager, checked before and after the change: replaceTaskDependencies is a manager''s operation. Cycles and cross-project links are tg_task_dependencies__no_cycle''s to refuse.';


--
-- Name: tickets Managers change tickets; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Managers change tickets" ON app.tickets FOR UPDATE TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role) AND ( SELECT app_private.may_read_tickets() AS may_read_tickets))) WITH CHECK ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));


--
-- Name: POLICY "Managers change tickets" ON tickets; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Managers change tickets" ON app.tickets IS 'svc_api may UPDATE tickets of the request''s organization only when the context holds the manager Role and may read tickets (the module on), and a ticket cannot leave the organization: the spec gives updates, assignment and transitions to managers. Which changes are legal is the rules trigger''s to decide.';


--
-- Name: time_entries Managers change time; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Managers change time" ON app.time_entries FOR UPDATE TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role))) WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role)));


--
-- Name: POLICY "Managers change time" ON time_entries; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Managers change time" ON app.time_entries IS 'svc_api may update time entries only of the signed request''s organization and only when the client holds manager, before and after the change (USING and WITH CHECK), since only managers write time (spec). Which columns may change is for its column grants, and whether the entry may change at all for the triggers (tg_time_entries__lock: draft or rejected only).';


--
-- Name: projects Managers create projects; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Managers create projects" ON app.projects FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role)));


--
-- Name: POLICY "Managers create projects" ON projects; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Managers create projects" ON app.projects IS 'svc_api may insert a project only into the request''s organization and only for a client holding manager, since createProject is a manager''s operation; column grants leave id, status, version and audit fields to the service.';


--
-- Name: tasks Managers create tasks; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Managers create tasks" ON app.tasks FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role)));


--
-- Name: POLICY "Managers create tasks" ON tasks; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Managers create tasks" ON app.tasks IS 'svc_api may insert a task only into the request''s organization and only for a client holding manager, since createTask is a manager''s operation; column grants leave id, version, completion, archiving and audit fields to the service.';


--
-- Name: tickets Managers create tickets; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Managers create tickets" ON app.tickets FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (created_by_client_id = ( SELECT app.current_client_id() AS current_client_id)) AND ( SELECT app.has_role('manager'::text) AS has_role) AND ( SELECT app_private.may_read_tickets() AS may_read_tickets)));


--
-- Name: POLICY "Managers create tickets" ON tickets; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Managers create tickets" ON app.tickets IS 'svc_api may INSERT a ticket only in the request''s organization, recorded as the request''s client''s, when the context holds the manager Role and may read tickets (the module on): the spec gives createTicket to managers.';


--
-- Name: task_activity Managers record task activity; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Managers record task activity" ON app.task_activity FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (actor_client_id = ( SELECT app.current_client_id() AS current_client_id)) AND ( SELECT app.has_role('manager'::text) AS has_role)));


--
-- Name: POLICY "Managers record task activity" ON task_activity; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Managers record task activity" ON app.task_activity IS 'svc_api may insert task activity only in the request''s organization, for a client holding manager, and with actor_client_id the calling client: transitions are a manager''s, and the client is always the recorded actor (a subject only says whom the work concerns). svc_api may neither update nor delete it: task history is append-only.';


--
-- Name: time_entries Managers record time; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Managers record time" ON app.time_entries FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role) AND (created_by_client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Managers record time" ON time_entries; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Managers record time" ON app.time_entries IS 'svc_api may insert a time entry only into the signed request''s organization, only when the client holds manager, and only with created_by_client_id set to the calling client, so the creator, which scopes external_id, cannot be forged. The table''s triggers then validate the entry.';


--
-- Name: projects Managers update projects; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Managers update projects" ON app.projects FOR UPDATE TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role))) WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role)));


--
-- Name: POLICY "Managers update projects" ON projects; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Managers update projects" ON app.projects IS 'svc_api may update only projects of the request''s organization, for a client holding manager, checked before and after the change so no project moves to another organization: updateProject, archiveProject and restoreProject are manager operations. Column grants keep id, organization, currency and audit fields fixed.';


--
-- Name: tasks Managers update tasks; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Managers update tasks" ON app.tasks FOR UPDATE TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role))) WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_role('manager'::text) AS has_role)));


--
-- Name: POLICY "Managers update tasks" ON tasks; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Managers update tasks" ON app.tasks IS 'svc_api may update only tasks of the request''s organization, for a client holding manager, checked before and after the change so no task moves to another organization: updating, transitioning, archiving a task and replacing its dependencies are manager operations. Column grants keep id, organization, project and workflow fixed.';


--
-- Name: time_entry_audit Managers write the time audit; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Managers write the time audit" ON app.time_entry_audit FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (actor_client_id = ( SELECT app.current_client_id() AS current_client_id)) AND ( SELECT app.has_role('manager'::text) AS has_role)));


--
-- Name: POLICY "Managers write the time audit" ON time_entry_audit; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Managers write the time audit" ON app.time_entry_audit IS 'svc_api may insert into app.time_entry_audit only rows of the signed request''s organization whose actor_client_id is the calling client, and only when it holds manager (the Role that deletes time entries), so the audit names the real actor. svc_api has no policy to read, change or remove audit rows.';


--
-- Name: time_entries Managers, finance, and hr where permitted read time entries; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Managers, finance, and hr where permitted read time entries" ON app.time_entries FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app_private.may_read_time_entries() AS may_read_time_entries)));


--
-- Name: POLICY "Managers, finance, and hr where permitted read time entries" ON time_entries; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Managers, finance, and hr where permitted read time entries" ON app.time_entries IS 'svc_api reads time entries only of the signed request''s organization, and only when app_private.may_read_time_entries() allows it: manager or finance, or hr where the organization permits (the spec''s Role matrix). A member-only client reads time only through the reporting views.';


--
-- Name: task_notes Managers, or members where the task policy permits, add notes; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Managers, or members where the task policy permits, add notes" ON app.task_notes FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app.has_any_role('{manager,member}'::text[]) AS has_any_role) AND (author_client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Managers, or members where the task policy permits, add notes" ON task_notes; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Managers, or members where the task policy permits, add notes" ON app.task_notes IS 'svc_api may insert a note only in the request''s organization, with author_client_id the calling client, for a client holding manager or member; whether a member-only client may (the workflow''s members_may_add_notes) is checked by tg_task_notes__members_may_add, because a policy that reads another table is refused on Citus. Notes are append-only: svc_api may neither update nor delete them.';


--
-- Name: conversation_messages Messages are readable with their conversation; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Messages are readable with their conversation" ON app.conversation_messages FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Messages are readable with their conversation" ON conversation_messages; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Messages are readable with their conversation" ON app.conversation_messages IS 'svc_api reads a message only in the request''s organization and when its client_id is the calling client. client_id is copied from the conversation when the message is inserted (tg__client_of_parent) and a message never changes conversation, so a message is visible exactly when its conversation is, without the policy reading another table (Citus refuses such a policy).';


--
-- Name: report_results Results are readable with their run; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Results are readable with their run" ON app.report_results FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Results are readable with their run" ON report_results; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Results are readable with their run" ON app.report_results IS 'svc_api may read result rows only in the request''s signed organization and only when their client_id is the calling API Client''s: the results of the client''s own report runs, as "Clients see their own report runs" shows the runs. client_id is copied from the run by tg__client_of_parent when a row is inserted, so the policy judges the row alone, without reading app.report_runs.';


--
-- Name: ticket_search Search follows the tickets; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Search follows the tickets" ON app.ticket_search FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app_private.may_read_tickets() AS may_read_tickets)));


--
-- Name: POLICY "Search follows the tickets" ON ticket_search; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Search follows the tickets" ON app.ticket_search IS 'svc_api may SELECT search documents of the request''s organization only when the context may read tickets, as for the tickets themselves: the search documents hold ticket text, and no one who cannot read tickets may query it.';


--
-- Name: client_secrets The control plane manages client secrets; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "The control plane manages client secrets" ON app.client_secrets TO svc_admin USING (true) WITH CHECK (true);


--
-- Name: POLICY "The control plane manages client secrets" ON client_secrets; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "The control plane manages client secrets" ON app.client_secrets IS 'svc_admin (svc-admin''s control plane) may add and revoke client secrets in every organization, as it creates clients and rotates or revokes their secrets for any organization. Its column grants, not this policy, keep the secret digests out of its reach: it reads every column but secret_sha256 and updates only revoked_at.';


--
-- Name: file_uploads The gate locks uploads a link names; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "The gate locks uploads a link names" ON app.file_uploads FOR UPDATE TO svc_gate USING ((organization_id = current_setting('svc.gate_organization'::text, true)));


--
-- Name: POLICY "The gate locks uploads a link names" ON file_uploads; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "The gate locks uploads a link names" ON app.file_uploads IS 'svc_gate may lock (UPDATE, which FOR UPDATE requires) only uploads of the organization that a verified upload link names, set in svc.gate_organization by api.file_upload_begin once the link''s signature holds: so the gate serializes PUTs to one upload without a request context and with nothing of another organization in reach. The gate is granted UPDATE of status alone and changes nothing.';


--
-- Name: api_clients The gate reads clients of the organization it was asked about; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "The gate reads clients of the organization it was asked about" ON app.api_clients FOR SELECT TO svc_gate USING ((organization_id = current_setting('svc.gate_organization'::text, true)));


--
-- Name: POLICY "The gate reads clients of the organization it was asked about" ON api_clients; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "The gate reads clients of the organization it was asked about" ON app.api_clients IS 'svc_gate (the credential path: api.begin_request, api.authenticate_client) reads API clients only of the organization named in svc.gate_organization, which each gate function sets to the organization its caller named for the length of its read and then clears. The credential check runs before any request context exists, so this setting, not the function''s WHERE, keeps every other organization''s clients out of reach.';


--
-- Name: files The gate reads files a link opened; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "The gate reads files a link opened" ON app.files FOR SELECT TO svc_gate USING ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));


--
-- Name: POLICY "The gate reads files a link opened" ON files; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "The gate reads files a link opened" ON app.files IS 'svc_gate may SELECT files only of the organization of the signed client context that a download link opened (api.file_download_begin, after the link''s signature, expiry and client standing are checked): the gate reads a download''s file without a request context of its own and nothing of another organization.';


--
-- Name: report_runs The gate reads report runs a link opened; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "The gate reads report runs a link opened" ON app.report_runs FOR SELECT TO svc_gate USING ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));


--
-- Name: POLICY "The gate reads report runs a link opened" ON report_runs; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "The gate reads report runs a link opened" ON app.report_runs IS 'svc_gate may read report runs only of the organization of the signed request context: in api.report_download_begin, once the link''s signature held and app_private.begin_delivery_context opened its client''s context. Before that, or with a forged or copied context, the gate sees no report run.';


--
-- Name: client_secrets The gate reads secrets of the organization it was asked about; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "The gate reads secrets of the organization it was asked about" ON app.client_secrets FOR SELECT TO svc_gate USING ((organization_id = current_setting('svc.gate_organization'::text, true)));


--
-- Name: POLICY "The gate reads secrets of the organization it was asked about" ON client_secrets; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "The gate reads secrets of the organization it was asked about" ON app.client_secrets IS 'svc_gate reads client secrets (their digests) only of the organization named in svc.gate_organization, which api.authenticate_client and api.begin_request set to the organization their caller named for the length of their read. The credential check runs before any request context exists, so this setting, not the function''s WHERE, keeps every other organization''s secrets out of reach.';


--
-- Name: organizations The gate reads the organization it was asked about; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "The gate reads the organization it was asked about" ON app.organizations FOR SELECT TO svc_gate USING ((id = current_setting('svc.gate_organization'::text, true)));


--
-- Name: POLICY "The gate reads the organization it was asked about" ON organizations; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "The gate reads the organization it was asked about" ON app.organizations IS 'svc_gate reads only the organization named in svc.gate_organization, which each gate function (api.begin_request, api.authenticate_client, app_private.set_context) sets to the organization its caller named for the length of its read and then clears. The credential path reads an organization''s status, plan and read settings before any request context exists, and this keeps a wrong WHERE from reading any other.';


--
-- Name: file_uploads The gate reads uploads a link names; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "The gate reads uploads a link names" ON app.file_uploads FOR SELECT TO svc_gate USING (((organization_id = current_setting('svc.gate_organization'::text, true)) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "The gate reads uploads a link names" ON file_uploads; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "The gate reads uploads a link names" ON app.file_uploads IS 'svc_gate may SELECT uploads only of the organization that a verified link names (svc.gate_organization, set once the link''s signature holds) or of the signed client context the link opened: api.file_upload_begin finds the upload and its client before any request context exists, and api.file_download_begin the chunk size of a file''s upload. Nothing of another organization is in reach.';


--
-- Name: organizations The relay reads the organization a proof named; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "The relay reads the organization a proof named" ON app.organizations FOR SELECT TO svc_relay USING ((id = current_setting('svc.relay_organization'::text, true)));


--
-- Name: POLICY "The relay reads the organization a proof named" ON organizations; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "The relay reads the organization a proof named" ON app.organizations IS 'svc_relay reads the one organization whose id reporting_private.bi_rows_of sets in svc.relay_organization around its read of the flags, after checking the coordinator''s proof: the organization the proof named, nothing else.';


--
-- Name: webhook_deliveries The service status sees deliveries waiting; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "The service status sees deliveries waiting" ON app.webhook_deliveries FOR SELECT TO svc_status USING (((status = 'pending'::text) AND (CURRENT_USER = 'svc_status'::name)));


--
-- Name: POLICY "The service status sees deliveries waiting" ON webhook_deliveries; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "The service status sees deliveries waiting" ON app.webhook_deliveries IS 'svc_status, the owner of api.service_outbox_status, reads of every organization only the deliveries whose status is pending, and of them only status and next_attempt_at (its column grants): what the /metrics gauges count, with no request context.';


--
-- Name: events The service status sees events waiting for their fan-out; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "The service status sees events waiting for their fan-out" ON app.events FOR SELECT TO svc_status USING ((fanout_pending AND (CURRENT_USER = 'svc_status'::name)));


--
-- Name: POLICY "The service status sees events waiting for their fan-out" ON events; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "The service status sees events waiting for their fan-out" ON app.events IS 'svc_status, the owner of api.service_outbox_status, reads of every organization only the events still waiting for their fan-out (fanout_pending), and of them only fanout_pending and created_at (its column grants): the age of the outbox''s backlog for /metrics, with no request context.';


--
-- Name: ticket_messages Ticket readers see replies, staff also internal notes; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Ticket readers see replies, staff also internal notes" ON app.ticket_messages FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app_private.may_read_tickets() AS may_read_tickets) AND ((type = 'reply'::text) OR ( SELECT app_private.may_read_internal_notes() AS may_read_internal_notes))));


--
-- Name: POLICY "Ticket readers see replies, staff also internal notes" ON ticket_messages; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Ticket readers see replies, staff also internal notes" ON app.ticket_messages IS 'svc_api may SELECT messages of the request''s organization only when the context may read tickets, and internal notes only when it also holds the member or manager Role (app_private.may_read_internal_notes): finance and hr, where the organization lets them read tickets, see replies alone.';


--
-- Name: tickets Ticket readers see their organization's tickets; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Ticket readers see their organization's tickets" ON app.tickets FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND ( SELECT app_private.may_read_tickets() AS may_read_tickets)));


--
-- Name: POLICY "Ticket readers see their organization's tickets" ON tickets; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Ticket readers see their organization's tickets" ON app.tickets IS 'svc_api may SELECT tickets of the request''s organization only when the context may read tickets (app_private.may_read_tickets): the module on, and member or manager, or finance or hr where the organization grants them tickets, as the spec''s Role matrix sets.';


--
-- Name: run_tool_calls Tool calls are readable with their run; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Tool calls are readable with their run" ON app.run_tool_calls FOR SELECT TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (client_id = ( SELECT app.current_client_id() AS current_client_id))));


--
-- Name: POLICY "Tool calls are readable with their run" ON run_tool_calls; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Tool calls are readable with their run" ON app.run_tool_calls IS 'svc_api may read a tool call (the audit of a run''s tool operations) only in the request''s signed organization and only when its client_id is the calling API Client''s: the calls of the client''s own runs, as "Clients see their own runs" shows the runs. client_id is copied from the run by tg__client_of_parent when the call is inserted, so the policy judges the row alone, without reading app.runs.';


--
-- Name: files Writers of the linked resource add uploaded files; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Writers of the linked resource add uploaded files" ON app.files FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (upload_id IS NOT NULL) AND app.has_any_role(app_private.file_write_roles(linked_resource_type))));


--
-- Name: POLICY "Writers of the linked resource add uploaded files" ON files; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Writers of the linked resource add uploaded files" ON app.files IS 'svc_api may INSERT a file only in the request''s organization, only from an upload (upload_id set), and only when the context holds the write Roles of the linked resource type (invoice: manager or finance; project, task, ticket: manager), as the spec gives files the linked resource''s write permission. Files the service makes itself (invoice PDFs) come from svc_owner, and the lifecycle trigger checks that the upload''s bytes were verified against its declaration.';


--
-- Name: files Writers of the linked resource change files; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Writers of the linked resource change files" ON app.files FOR UPDATE TO svc_api USING (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND app.has_any_role(app_private.file_write_roles(linked_resource_type)))) WITH CHECK ((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)));


--
-- Name: POLICY "Writers of the linked resource change files" ON files; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Writers of the linked resource change files" ON app.files IS 'svc_api may UPDATE files of the request''s organization only when the context holds the write Roles of the file''s linked resource type (invoice: manager or finance; project, task, ticket: manager), and a file cannot leave the organization. Which changes are legal (ready to archived only; content and identity never change; retained files kept) is decided by the lifecycle and retention triggers.';


--
-- Name: file_uploads Writers of the linked resource start uploads; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY "Writers of the linked resource start uploads" ON app.file_uploads FOR INSERT TO svc_api WITH CHECK (((organization_id = ( SELECT app.current_organization_id() AS current_organization_id)) AND (created_by_client_id = ( SELECT app.current_client_id() AS current_client_id)) AND app.has_any_role(app_private.file_write_roles(linked_resource_type))));


--
-- Name: POLICY "Writers of the linked resource start uploads" ON file_uploads; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON POLICY "Writers of the linked resource start uploads" ON app.file_uploads IS 'svc_api may INSERT an upload only in the request''s organization, recorded as the request''s client''s, and only when the context holds the write Roles of the linked resource type (invoice: manager or finance; project, task, ticket: manager): the spec lets only writers of the linked resource upload to it.';


--
-- Name: agent_publications; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.agent_publications ENABLE ROW LEVEL SECURITY;

--
-- Name: api_clients; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.api_clients ENABLE ROW LEVEL SECURITY;

--
-- Name: approvals; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.approvals ENABLE ROW LEVEL SECURITY;

--
-- Name: client_secrets; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.client_secrets ENABLE ROW LEVEL SECURITY;

--
-- Name: conversation_messages; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.conversation_messages ENABLE ROW LEVEL SECURITY;

--
-- Name: conversations; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.conversations ENABLE ROW LEVEL SECURITY;

--
-- Name: custom_field_definitions; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.custom_field_definitions ENABLE ROW LEVEL SECURITY;

--
-- Name: customers; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.customers ENABLE ROW LEVEL SECURITY;

--
-- Name: events; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.events ENABLE ROW LEVEL SECURITY;

--
-- Name: file_chunks; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.file_chunks ENABLE ROW LEVEL SECURITY;

--
-- Name: file_contents; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.file_contents ENABLE ROW LEVEL SECURITY;

--
-- Name: file_policies; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.file_policies ENABLE ROW LEVEL SECURITY;

--
-- Name: file_uploads; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.file_uploads ENABLE ROW LEVEL SECURITY;

--
-- Name: files; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.files ENABLE ROW LEVEL SECURITY;

--
-- Name: idempotency_keys; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.idempotency_keys ENABLE ROW LEVEL SECURITY;

--
-- Name: integration_connections; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.integration_connections ENABLE ROW LEVEL SECURITY;

--
-- Name: invoice_lines; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.invoice_lines ENABLE ROW LEVEL SECURITY;

--
-- Name: invoices; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.invoices ENABLE ROW LEVEL SECURITY;

--
-- Name: members; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.members ENABLE ROW LEVEL SECURITY;

--
-- Name: object_schemas; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.object_schemas ENABLE ROW LEVEL SECURITY;

--
-- Name: organizations; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.organizations ENABLE ROW LEVEL SECURITY;

--
-- Name: payments; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.payments ENABLE ROW LEVEL SECURITY;

--
-- Name: projects; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.projects ENABLE ROW LEVEL SECURITY;

--
-- Name: report_results; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.report_results ENABLE ROW LEVEL SECURITY;

--
-- Name: report_runs; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.report_runs ENABLE ROW LEVEL SECURITY;

--
-- Name: run_events; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.run_events ENABLE ROW LEVEL SECURITY;

--
-- Name: run_tool_calls; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.run_tool_calls ENABLE ROW LEVEL SECURITY;

--
-- Name: runs; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.runs ENABLE ROW LEVEL SECURITY;

--
-- Name: task_activity; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.task_activity ENABLE ROW LEVEL SECURITY;

--
-- Name: task_dependencies; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.task_dependencies ENABLE ROW LEVEL SECURITY;

--
-- Name: task_notes; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.task_notes ENABLE ROW LEVEL SECURITY;

--
-- Name: task_workflow_statuses; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.task_workflow_statuses ENABLE ROW LEVEL SECURITY;

--
-- Name: task_workflow_transitions; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.task_workflow_transitions ENABLE ROW LEVEL SECURITY;

--
-- Name: task_workflows; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.task_workflows ENABLE ROW LEVEL SECURITY;

--
-- Name: tasks; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.tasks ENABLE ROW LEVEL SECURITY;

--
-- Name: ticket_messages; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.ticket_messages ENABLE ROW LEVEL SECURITY;

--
-- Name: ticket_search; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.ticket_search ENABLE ROW LEVEL SECURITY;

--
-- Name: ticket_statuses; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.ticket_statuses ENABLE ROW LEVEL SECURITY;

--
-- Name: ticket_transitions; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.ticket_transitions ENABLE ROW LEVEL SECURITY;

--
-- Name: tickets; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.tickets ENABLE ROW LEVEL SECURITY;

--
-- Name: time_entries; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.time_entries ENABLE ROW LEVEL SECURITY;

--
-- Name: time_entry_audit; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.time_entry_audit ENABLE ROW LEVEL SECURITY;

--
-- Name: webhook_deliveries; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.webhook_deliveries ENABLE ROW LEVEL SECURITY;

--
-- Name: webhook_delivery_attempts; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.webhook_delivery_attempts ENABLE ROW LEVEL SECURITY;

--
-- Name: webhook_endpoints; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.webhook_endpoints ENABLE ROW LEVEL SECURITY;

--
-- Name: bi_logins A BI session reads its own binding; Type: POLICY; Schema: app_private; Owner: -
--

CREATE POLICY "A BI session reads its own binding" ON app_private.bi_logins FOR SELECT TO svc_gate USING ((role_name = SESSION_USER));


--
-- Name: POLICY "A BI session reads its own binding" ON bi_logins; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON POLICY "A BI session reads its own binding" ON app_private.bi_logins IS 'svc_gate may read only the binding whose role_name is the session''s login (session_user): app_private.bi_context learns a BI session''s organization and Roles and nothing of any other login''s. A BI login cannot change its session_user, so the binding cannot be forged, and a session of any other login finds no row.';


--
-- Name: admin_notifications Commands act in the request's organization; Type: POLICY; Schema: app_private; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app_private.admin_notifications TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON admin_notifications; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app_private.admin_notifications IS 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only administrators'' notifications of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. The worker writes one when it disables an endpoint after repeated failed deliveries (webhook_record_attempt) and svc-admin lists them (control.notifications_list), both operator sessions; svc_owner inside a request sees only its own organization''s.';


--
-- Name: invoice_number_counters Commands act in the request's organization; Type: POLICY; Schema: app_private; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app_private.invoice_number_counters TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON invoice_number_counters; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app_private.invoice_number_counters IS 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only invoice number counters of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. tg_invoices__lifecycle advances the counter as svc_owner when an invoice is issued, so a request locks and advances only its own organization''s counter; the row lock serializes issuing per organization and a rollback returns the number, so invoice numbers stay unique and gapless.';


--
-- Name: job_outbox Commands act in the request's organization; Type: POLICY; Schema: app_private; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app_private.job_outbox TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON job_outbox; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app_private.job_outbox IS 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only queued jobs of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. On Citus app_private.queue_job writes a job into its organization''s outbox in the transaction of the write that caused it, and the worker''s app_private.job_outbox_drain moves every organization''s into graphile-worker''s queue; empty on one server.';


--
-- Name: ticket_number_counters Commands act in the request's organization; Type: POLICY; Schema: app_private; Owner: -
--

CREATE POLICY "Commands act in the request's organization" ON app_private.ticket_number_counters TO svc_admin, svc_owner, svc_worker USING ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id)))) WITH CHECK ((( SELECT app_private.operator_session() AS operator_session) OR (organization_id = ( SELECT app.current_organization_id() AS current_organization_id))));


--
-- Name: POLICY "Commands act in the request's organization" ON ticket_number_counters; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON POLICY "Commands act in the request's organization" ON app_private.ticket_number_counters IS 'svc_owner, svc_worker and svc_admin may read and advance the ticket number counter of the request''s organization, or of every organization in an operator session: the rules trigger takes each new ticket''s number from its organization''s row, which also serializes numbering per organization. A trigger with a wrong WHERE inside a request still advances no other organization''s counter.';


--
-- Name: client_directory The control plane keeps the client directory; Type: POLICY; Schema: app_private; Owner: -
--

CREATE POLICY "The control plane keeps the client directory" ON app_private.client_directory TO svc_admin USING (true) WITH CHECK (true);


--
-- Name: POLICY "The control plane keeps the client directory" ON client_directory; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON POLICY "The control plane keeps the client directory" ON app_private.client_directory IS 'svc_admin (svc-admin''s control plane) reads and writes every row of the client directory (client id to organization, for every tenant): it adds each client it creates and looks up the organization of the client a command names, for any organization. No other role writes the directory; the token endpoint''s lookup reads it as svc_directory, under a policy of its own.';


--
-- Name: access_tokens The gate reads tokens of the organization it was asked about; Type: POLICY; Schema: app_private; Owner: -
--

CREATE POLICY "The gate reads tokens of the organization it was asked about" ON app_private.access_tokens FOR SELECT TO svc_gate USING ((organization_id = current_setting('svc.gate_organization'::text, true)));


--
-- Name: POLICY "The gate reads tokens of the organization it was asked about" ON access_tokens; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON POLICY "The gate reads tokens of the organization it was asked about" ON app_private.access_tokens IS 'svc_gate reads access-token records only of the organization named in svc.gate_organization, which api.begin_request sets to the organization the request names (from the verified token) for the length of its lookup. A presented token is therefore checked only against its own organization''s records, and a wrong WHERE reads no other organization''s tokens.';


--
-- Name: access_tokens The gate records tokens of the organization it was asked about; Type: POLICY; Schema: app_private; Owner: -
--

CREATE POLICY "The gate records tokens of the organization it was asked about" ON app_private.access_tokens FOR INSERT TO svc_gate WITH CHECK ((organization_id = current_setting('svc.gate_organization'::text, true)));


--
-- Name: POLICY "The gate records tokens of the organization it was asked about" ON access_tokens; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON POLICY "The gate records tokens of the organization it was asked about" ON app_private.access_tokens IS 'svc_gate inserts access-token records only for the organization named in svc.gate_organization, which api.access_token_record sets to the organization in which api.authenticate_client has just verified the client secret. A token can therefore be recorded, and later accepted by api.begin_request, only in the organization whose live secret was presented.';


--
-- Name: client_directory The lookup sees the one client it was asked for; Type: POLICY; Schema: app_private; Owner: -
--

CREATE POLICY "The lookup sees the one client it was asked for" ON app_private.client_directory FOR SELECT TO svc_directory USING ((client_id = current_setting('svc.directory_client'::text, true)));


--
-- Name: POLICY "The lookup sees the one client it was asked for" ON client_directory; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON POLICY "The lookup sees the one client it was asked for" ON app_private.client_directory IS 'svc_directory, owner of api.client_organization, reads only the directory row of the client named in svc.directory_client, which the lookup sets to its argument for the length of its read. The directory spans every tenant and is read before any request context exists (by the token endpoint), so this policy, not the function''s WHERE, keeps the lookup to one client''s row.';


--
-- Name: access_tokens The worker purges token records that have run out; Type: POLICY; Schema: app_private; Owner: -
--

CREATE POLICY "The worker purges token records that have run out" ON app_private.access_tokens FOR DELETE TO svc_worker USING ((expires_at < (now() - '00:01:00'::interval)));


--
-- Name: POLICY "The worker purges token records that have run out" ON access_tokens; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON POLICY "The worker purges token records that have run out" ON app_private.access_tokens IS 'svc_worker may delete only access-token records that expired more than a minute ago, in any organization (control.purge_expired_access_tokens, an hourly job). The worker can never delete the record of a live token, and its column grants let it read no token digest.';


--
-- Name: access_tokens The worker sees token records that have run out; Type: POLICY; Schema: app_private; Owner: -
--

CREATE POLICY "The worker sees token records that have run out" ON app_private.access_tokens FOR SELECT TO svc_worker USING ((expires_at < (now() - '00:01:00'::interval)));


--
-- Name: POLICY "The worker sees token records that have run out" ON access_tokens; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON POLICY "The worker sees token records that have run out" ON app_private.access_tokens IS 'svc_worker sees only access-token records that expired more than a minute ago, and of them only the organization_id and expires_at columns it is granted: exactly what its purge deletes. It never sees a live token''s record or any token digest.';


--
-- Name: access_tokens; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.access_tokens ENABLE ROW LEVEL SECURITY;

--
-- Name: admin_notifications; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.admin_notifications ENABLE ROW LEVEL SECURITY;

--
-- Name: bi_logins; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.bi_logins ENABLE ROW LEVEL SECURITY;

--
-- Name: client_directory; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.client_directory ENABLE ROW LEVEL SECURITY;

--
-- Name: invoice_number_counters; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.invoice_number_counters ENABLE ROW LEVEL SECURITY;

--
-- Name: job_outbox; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.job_outbox ENABLE ROW LEVEL SECURITY;

--
-- Name: bi_logins svc-admin finds a BI login's binding; Type: POLICY; Schema: app_private; Owner: -
--

CREATE POLICY "svc-admin finds a BI login's binding" ON app_private.bi_logins FOR SELECT TO svc_admin USING (true);


--
-- Name: POLICY "svc-admin finds a BI login's binding" ON bi_logins; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON POLICY "svc-admin finds a BI login's binding" ON app_private.bi_logins IS 'svc_admin finds the binding it removes by the login''s name (svc-admin reporting revoke); it is granted that column alone, not the organization or the Roles.';


--
-- Name: bi_logins svc-admin records a BI login's binding; Type: POLICY; Schema: app_private; Owner: -
--

CREATE POLICY "svc-admin records a BI login's binding" ON app_private.bi_logins FOR INSERT TO svc_admin WITH CHECK (true);


--
-- Name: POLICY "svc-admin records a BI login's binding" ON bi_logins; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON POLICY "svc-admin records a BI login's binding" ON app_private.bi_logins IS 'svc_admin (svc-admin reporting grant, through control.reporting_grant) binds a new BI login to an organization and Roles; an operator acts for every organization, and the table''s checks bound the login''s name and the Roles.';


--
-- Name: bi_logins svc-admin removes a BI login's binding; Type: POLICY; Schema: app_private; Owner: -
--

CREATE POLICY "svc-admin removes a BI login's binding" ON app_private.bi_logins FOR DELETE TO svc_admin USING (true);


--
-- Name: POLICY "svc-admin removes a BI login's binding" ON bi_logins; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON POLICY "svc-admin removes a BI login's binding" ON app_private.bi_logins IS 'svc_admin removes a BI login''s binding (svc-admin reporting revoke, through control.reporting_revoke) before the login itself is dropped.';


--
-- Name: ticket_number_counters; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.ticket_number_counters ENABLE ROW LEVEL SECURITY;

--
-- Name: _private_job_queues Commands queue jobs; Type: POLICY; Schema: graphile_worker; Owner: -
--

CREATE POLICY "Commands queue jobs" ON graphile_worker._private_job_queues TO svc_owner USING (true) WITH CHECK (true);


--
-- Name: POLICY "Commands queue jobs" ON _private_job_queues; Type: COMMENT; Schema: graphile_worker; Owner: -
--

COMMENT ON POLICY "Commands queue jobs" ON graphile_worker._private_job_queues IS 'svc_owner may read, add and update graphile-worker''s task and queue names, which add_job upserts for every job it queues: they carry no tenant data, so every row is allowed; which jobs a command reaches is fenced by the policy on graphile_worker._private_jobs.';


--
-- Name: _private_jobs Commands queue jobs; Type: POLICY; Schema: graphile_worker; Owner: -
--

CREATE POLICY "Commands queue jobs" ON graphile_worker._private_jobs TO svc_owner USING ((app_private.operator_session() OR ((payload ->> 'organization_id'::text) = app.current_organization_id()))) WITH CHECK ((app_private.operator_session() OR ((payload ->> 'organization_id'::text) = app.current_organization_id())));


--
-- Name: POLICY "Commands queue jobs" ON _private_jobs; Type: COMMENT; Schema: graphile_worker; Owner: -
--

COMMENT ON POLICY "Commands queue jobs" ON graphile_worker._private_jobs IS 'svc_owner may read and write only the jobs whose payload names the signed request''s organization (app_private.queue_job adds organization_id to every payload), or any job in an operator session (the worker, svc-admin, migrations): on one server a command queues and sees only its own organization''s jobs (on Citus jobs go through app_private.job_outbox).';


--
-- Name: _private_tasks Commands queue jobs; Type: POLICY; Schema: graphile_worker; Owner: -
--

CREATE POLICY "Commands queue jobs" ON graphile_worker._private_tasks TO svc_owner USING (true) WITH CHECK (true);


--
-- Name: POLICY "Commands queue jobs" ON _private_tasks; Type: COMMENT; Schema: graphile_worker; Owner: -
--

COMMENT ON POLICY "Commands queue jobs" ON graphile_worker._private_tasks IS 'svc_owner may read, add and update graphile-worker''s task and queue names, which add_job upserts for every job it queues: they carry no tenant data, so every row is allowed; which jobs a command reaches is fenced by the policy on graphile_worker._private_jobs.';


--
-- Name: _private_job_queues The worker runs every job; Type: POLICY; Schema: graphile_worker; Owner: -
--

CREATE POLICY "The worker runs every job" ON graphile_worker._private_job_queues TO svc_worker USING (true) WITH CHECK (true);


--
-- Name: POLICY "The worker runs every job" ON _private_job_queues; Type: COMMENT; Schema: graphile_worker; Owner: -
--

COMMENT ON POLICY "The worker runs every job" ON graphile_worker._private_job_queues IS 'svc_worker reads and writes every row of graphile-worker''s tables, of every organization, because it runs the queue for all of them (an operator). graphile-worker keeps row security on its tables with no policy of its own, so without this one the worker''s login would see no job.';


--
-- Name: _private_jobs The worker runs every job; Type: POLICY; Schema: graphile_worker; Owner: -
--

CREATE POLICY "The worker runs every job" ON graphile_worker._private_jobs TO svc_worker USING (true) WITH CHECK (true);


--
-- Name: POLICY "The worker runs every job" ON _private_jobs; Type: COMMENT; Schema: graphile_worker; Owner: -
--

COMMENT ON POLICY "The worker runs every job" ON graphile_worker._private_jobs IS 'svc_worker reads and writes every row of graphile-worker''s tables, of every organization, because it runs the queue for all of them (an operator). graphile-worker keeps row security on its tables with no policy of its own, so without this one the worker''s login would see no job.';


--
-- Name: _private_known_crontabs The worker runs every job; Type: POLICY; Schema: graphile_worker; Owner: -
--

CREATE POLICY "The worker runs every job" ON graphile_worker._private_known_crontabs TO svc_worker USING (true) WITH CHECK (true);


--
-- Name: POLICY "The worker runs every job" ON _private_known_crontabs; Type: COMMENT; Schema: graphile_worker; Owner: -
--

COMMENT ON POLICY "The worker runs every job" ON graphile_worker._private_known_crontabs IS 'svc_worker reads and writes every row of graphile-worker''s tables, of every organization, because it runs the queue for all of them (an operator). graphile-worker keeps row security on its tables with no policy of its own, so without this one the worker''s login would see no job.';


--
-- Name: _private_tasks The worker runs every job; Type: POLICY; Schema: graphile_worker; Owner: -
--

CREATE POLICY "The worker runs every job" ON graphile_worker._private_tasks TO svc_worker USING (true) WITH CHECK (true);


--
-- Name: POLICY "The worker runs every job" ON _private_tasks; Type: COMMENT; Schema: graphile_worker; Owner: -
--

COMMENT ON POLICY "The worker runs every job" ON graphile_worker._private_tasks IS 'svc_worker reads and writes every row of graphile-worker''s tables, of every organization, because it runs the queue for all of them (an operator). graphile-worker keeps row security on its tables with no policy of its own, so without this one the worker''s login would see no job.';


--
-- Name: _private_job_queues; Type: ROW SECURITY; Schema: graphile_worker; Owner: -
--

ALTER TABLE graphile_worker._private_job_queues ENABLE ROW LEVEL SECURITY;

--
-- Name: _private_jobs; Type: ROW SECURITY; Schema: graphile_worker; Owner: -
--

ALTER TABLE graphile_worker._private_jobs ENABLE ROW LEVEL SECURITY;

--
-- Name: _private_known_crontabs; Type: ROW SECURITY; Schema: graphile_worker; Owner: -
--

ALTER TABLE graphile_worker._private_known_crontabs ENABLE ROW LEVEL SECURITY;

--
-- Name: _private_tasks; Type: ROW SECURITY; Schema: graphile_worker; Owner: -
--

ALTER TABLE graphile_worker._private_tasks ENABLE ROW LEVEL SECURITY;

--
-- PostgreSQL database dump complete
--

\unrestrict K9tv2G3dBbX77aIWHdVlLf6tohSD0yBDHWuxopMc1o44i4nfvgtMmjQafZyj0jb

