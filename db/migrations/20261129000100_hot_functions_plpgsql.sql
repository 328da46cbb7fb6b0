-- migrate:up

/** Issue 21 (the SQL itself, faster). A `language sql` function that PostgreSQL cannot inline (SECURITY
 * DEFINER, a SET clause, or a body less immutable than its declaration) is planned again at every
 * call from a new statement: PostgreSQL 15 keeps a SQL function's plan only for the duration of the
 * calling query. task_get, which builds the task's document through the api.tasks view after every
 * write, spent 0.93 ms of a create's 3.1 ms planning that view (pg_stat_user_functions, track_functions
 * = all, POST /v1/tasks under load; alone, 2,001 calls/s against 4,544/s as PL/pgSQL). PL/pgSQL keeps
 * its plans for the session. The bodies, Roles, grants and owners are unchanged; these are the
 * functions a write or a document pays for on every request. */

create or replace function api.task_get(p_id text) returns table (doc jsonb, version integer)
language plpgsql stable security definer
set search_path = pg_catalog
as $$
#variable_conflict use_column
begin
  return query select t.doc, t.version from api.tasks t where t.id = p_id;
end
$$;

create or replace function api.project_get(p_id text) returns table (doc jsonb, version integer)
language plpgsql stable security definer
set search_path = pg_catalog
as $$
#variable_conflict use_column
begin
  return query select p.doc, p.version from api.projects p where p.id = p_id;
end
$$;

create or replace function api.run_get(p_id text) returns table (doc jsonb, version integer)
language plpgsql stable security definer
set search_path = pg_catalog
as $$
#variable_conflict use_column
begin
  return query select v.doc, v.version from api.runs v where v.id = p_id;
end
$$;

create or replace function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer,
                                                    p_headers jsonb, p_body text) returns void
language plpgsql security definer
set search_path = pg_catalog
as $$
begin
  update app.idempotency_keys
     set response_status = p_status, response_headers = p_headers, response_body = p_body
   where organization_id = app.current_organization_id() and client_id = app.current_client_id()
     and method = p_method and route = p_route and key = p_key;
end
$$;

create or replace function api.idempotency_stored(p_method text, p_route text, p_key text) returns boolean
language plpgsql stable security definer
set search_path = pg_catalog
as $$
begin
  return exists (select from app.idempotency_keys i
                  where i.organization_id = app.current_organization_id() and i.client_id = app.current_client_id()
                    and i.method = p_method and i.route = p_route and i.key = p_key and i.expires_at > now());
end
$$;

create or replace function app_private.new_id(prefix text) returns text
language plpgsql parallel safe
set search_path = pg_catalog
as $$
begin
  return prefix || '_' || lpad(to_hex((extract(epoch from clock_timestamp()) * 1000)::bigint), 12, '0')
         || substr(replace(gen_random_uuid()::text, '-', ''), 1, 16);
end
$$;

create or replace function app_private.normalize_email(email text) returns text
language plpgsql immutable parallel safe strict
set search_path = pg_catalog
as $$
begin
  return lower(btrim(email));
end
$$;

create or replace function app_private.normalize_emails(p jsonb) returns text[]
language plpgsql immutable
set search_path = pg_catalog
as $$
begin
  return (select coalesce(array_agg(app_private.normalize_email(e)), '{}') from jsonb_array_elements_text(p) e);
end
$$;

-- to_char is only STABLE, so this IMMUTABLE function was never inlined: a SQL function call per
-- timestamp of every document (five per task).
create or replace function app_private.iso_timestamp(ts timestamptz) returns text
language plpgsql immutable parallel safe
as $$
begin
  return pg_catalog.to_char(ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
end
$$;

create or replace function app_private.readable_custom_fields(p_org text, p_object_type text, p_values jsonb) returns jsonb
language plpgsql stable security definer
set search_path = pg_catalog
as $$
begin
  return (select coalesce(jsonb_object_agg(d.api_name, p_values -> d.api_name), '{}'::jsonb)
            from app.custom_field_definitions d
           where d.organization_id = p_org and d.object_type = p_object_type and p_values ? d.api_name);
end
$$;

-- migrate:down

create or replace function api.task_get(p_id text) returns table (doc jsonb, version integer)
language sql stable security definer
set search_path = pg_catalog
as $$ select doc, version from api.tasks where id = p_id $$;

create or replace function api.project_get(p_id text) returns table (doc jsonb, version integer)
language sql stable security definer
set search_path = pg_catalog
as $$ select doc, version from api.projects where id = p_id $$;

create or replace function api.run_get(p_id text) returns table (doc jsonb, version integer)
language sql stable security definer
set search_path = pg_catalog
as $$ select v.doc, v.version from api.runs v where v.id = p_id $$;

create or replace function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer,
                                                    p_headers jsonb, p_body text) returns void
language sql security definer
set search_path = pg_catalog
as $$
  update app.idempotency_keys
     set response_status = p_status, response_headers = p_headers, response_body = p_body
   where organization_id = app.current_organization_id() and client_id = app.current_client_id()
     and method = p_method and route = p_route and key = p_key
$$;

create or replace function api.idempotency_stored(p_method text, p_route text, p_key text) returns boolean
language sql stable security definer
set search_path = pg_catalog
as $$
  select exists (select from app.idempotency_keys i
                  where i.organization_id = app.current_organization_id() and i.client_id = app.current_client_id()
                    and i.method = p_method and i.route = p_route and i.key = p_key and i.expires_at > now())
$$;

create or replace function app_private.new_id(prefix text) returns text
language sql parallel safe
set search_path = pg_catalog
as $$
  select prefix || '_' || lpad(to_hex((extract(epoch from clock_timestamp()) * 1000)::bigint), 12, '0')
         || substr(replace(gen_random_uuid()::text, '-', ''), 1, 16)
$$;

create or replace function app_private.normalize_email(email text) returns text
language sql immutable parallel safe strict
set search_path = pg_catalog
as $$ select lower(btrim(email)) $$;

create or replace function app_private.normalize_emails(p jsonb) returns text[]
language sql immutable
set search_path = pg_catalog
as $$ select coalesce(array_agg(app_private.normalize_email(e)), '{}') from jsonb_array_elements_text(p) e $$;

create or replace function app_private.iso_timestamp(ts timestamptz) returns text
language sql immutable parallel safe
as $$ select pg_catalog.to_char(ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;

create or replace function app_private.readable_custom_fields(p_org text, p_object_type text, p_values jsonb) returns jsonb
language sql stable security definer
set search_path = pg_catalog
as $$
  select coalesce(jsonb_object_agg(d.api_name, p_values -> d.api_name), '{}'::jsonb)
    from app.custom_field_definitions d
   where d.organization_id = p_org and d.object_type = p_object_type and p_values ? d.api_name
$$;
