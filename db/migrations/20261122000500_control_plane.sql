-- migrate:up

/** The control plane: what administrators do in the web settings area, as SQL functions.
 * svc-admin wraps each one; a DBA can call them at psql. Not granted to svc_runtime. */

create function app_private.random_secret(prefix text) returns text
language sql volatile
set search_path = pg_catalog
as $$
  -- Two v4 UUIDs from the server's strong random source: 244 random bits.
  select prefix || translate(rtrim(encode(decode(
           replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''), 'hex'),
           'base64'), '='), '+/', '-_')
$$;

create function app_private.require_found(p_found boolean, p_code text, p_detail text) returns void
language plpgsql immutable
set search_path = pg_catalog
as $$
begin
  if not p_found then
    perform app_private.raise('SVN01', p_code, p_detail);
  end if;
end
$$;

create function app_private.assert_timezone(p_timezone text) returns void
language plpgsql stable
set search_path = pg_catalog
as $$
begin
  if p_timezone is not null and not exists (select from pg_timezone_names where name = p_timezone) then
    perform app_private.raise('SVV01', 'INVALID_TIMEZONE', format('%s is not an IANA time-zone identifier', p_timezone));
  end if;
end
$$;

/** Organizations */
create function control.org_create(p_name text, p_plan text, p_timezone text, p_currency text, p_locale text,
                                   p_web_base_url text default 'https://app.svc.example')
returns text
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  v_id text := app_private.new_id('org');
begin
  perform app_private.assert_timezone(p_timezone);
  insert into app.organizations (id, name, plan, timezone, currency, locale, web_url)
  values (v_id, p_name, p_plan, p_timezone, upper(p_currency), p_locale, rtrim(p_web_base_url, '/') || '/o/' || v_id);
  return v_id;
end
$$;

create function control.org_set_status(p_org text, p_status text) returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  update app.organizations set status = p_status where id = p_org;
  perform app_private.require_found(found, 'ORGANIZATION_NOT_FOUND', p_org);
end
$$;

-- A downgrade to Trial or Team leaves clients in place but license-inactive (never deleted).
create function control.org_set_plan(p_org text, p_plan text) returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  update app.organizations set plan = p_plan where id = p_org;
  perform app_private.require_found(found, 'ORGANIZATION_NOT_FOUND', p_org);
end
$$;

/** Members */
create function control.member_add(p_org text, p_email text, p_display_name text,
                                   p_roles text[] default '{member}', p_job_title text default null,
                                   p_timezone text default null, p_status text default 'active',
                                   p_employee_number text default null, p_hire_date date default null,
                                   p_employment_type text default null)
returns text
language plpgsql volatile
set search_path = pg_catalog
as $$
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

create function control.member_set_status(p_org text, p_email text, p_status text) returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  update app.members set status = p_status where organization_id = p_org and id = app_private.normalize_email(p_email);
  perform app_private.require_found(found, 'MEMBER_NOT_FOUND', p_email);
end
$$;

/** API Clients */
create function control.client_create(p_org text, p_name text, p_license_level text, p_roles text[],
                                      p_description text default null)
returns table (client_id text, client_secret text, secret_id text)
language plpgsql volatile
set search_path = pg_catalog
as $$
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
  client_secret := app_private.random_secret('svcsk_');
  insert into app.client_secrets (organization_id, client_id, slot, secret_sha256)
  values (p_org, client_id, 1, sha256(convert_to(client_secret, 'UTF8')))
  returning id into secret_id;
  return next;
end
$$;

create function control.client_set_roles(p_client text, p_roles text[]) returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  update app.api_clients set svc_roles = p_roles where id = p_client and status <> 'deleted';
  perform app_private.require_found(found, 'CLIENT_NOT_FOUND', p_client);
end
$$;

create function control.client_rotate_secret(p_client text) returns table (client_secret text, secret_id text)
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  c record;
  v_slot smallint;
begin
  select id, organization_id into c from app.api_clients where id = p_client and status <> 'deleted' for update;
  perform app_private.require_found(found, 'CLIENT_NOT_FOUND', p_client);
  select s into v_slot from unnest(array[1, 2]::smallint[]) s
   where not exists (select from app.client_secrets cs where cs.client_id = p_client and cs.slot = s and cs.revoked_at is null)
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

create function control.client_revoke_secret(p_client text, p_secret_id text) returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  update app.client_secrets set revoked_at = now()
   where id = p_secret_id and client_id = p_client and revoked_at is null;
  perform app_private.require_found(found, 'SECRET_NOT_FOUND', p_secret_id);
end
$$;

create function control.client_set_status(p_client text, p_from text[], p_to text) returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  update app.api_clients
     set status = p_to, deleted_at = case when p_to = 'deleted' then now() end
   where id = p_client and status = any (p_from);
  if not found then
    perform app_private.require_found(exists (select from app.api_clients where id = p_client and status <> 'deleted'),
                                      'CLIENT_NOT_FOUND', p_client);
    perform app_private.raise('SVC11', 'CLIENT_STATE_CONFLICT', format('the client cannot become %s from its current state', p_to));
  end if;
end
$$;

create function control.client_disable(p_client text) returns void
language sql volatile set search_path = pg_catalog
as $$ select control.client_set_status(p_client, '{active}', 'disabled') $$;

create function control.client_enable(p_client text) returns void
language sql volatile set search_path = pg_catalog
as $$ select control.client_set_status(p_client, '{disabled}', 'active') $$;

-- Soft delete: kept for audit; its licence returns to inventory.
create function control.client_delete(p_client text) returns void
language sql volatile set search_path = pg_catalog
as $$
  select control.client_set_status(p_client, '{active,disabled}', 'deleted');
  update app.api_clients set license_status = 'released' where id = p_client;
  update app.client_secrets set revoked_at = now() where client_id = p_client and revoked_at is null;
$$;

create function control.client_release_license(p_client text) returns void
language plpgsql volatile
set search_path = pg_catalog
as $$
begin
  update app.api_clients set license_status = 'released' where id = p_client and status <> 'deleted';
  perform app_private.require_found(found, 'CLIENT_NOT_FOUND', p_client);
end
$$;

/** Token signing keys: rotation adds a key that signs from now on; older keys keep verifying
 * until retired (retire them once the longest token lifetime has passed). */
create function control.signing_key_add(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text) returns void
language sql volatile set search_path = pg_catalog
as $$
  insert into app_private.signing_keys (kid, alg, public_jwk, private_jwk_sealed)
  values (p_kid, p_alg, p_public_jwk, p_private_jwk_sealed)
$$;

create function control.signing_key_retire(p_kid text) returns void
language plpgsql volatile set search_path = pg_catalog
as $$
begin
  if (select count(*) from app_private.signing_keys where retired_at is null and kid <> p_kid) = 0 then
    perform app_private.raise('SVC12', 'LAST_SIGNING_KEY', 'add a new signing key before retiring the last one');
  end if;
  update app_private.signing_keys set retired_at = now() where kid = p_kid and retired_at is null;
  perform app_private.require_found(found, 'SIGNING_KEY_NOT_FOUND', p_kid);
end
$$;

-- migrate:down
drop schema control cascade;
create schema control;
drop function app_private.random_secret(text);
drop function app_private.require_found(boolean, text, text);
drop function app_private.assert_timezone(text);
