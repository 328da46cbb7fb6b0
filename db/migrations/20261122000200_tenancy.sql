-- migrate:up

/** Organizations: the tenant. Managed only through the control plane. */
create table app.organizations (
  id text primary key default app_private.new_id('org'),
  name text not null constraint organizations_name_length check (length(name) between 1 and 200),
  status text not null default 'active'
    constraint organizations_status_valid check (status in ('active', 'restricted', 'suspended')),
  plan text not null
    constraint organizations_plan_valid check (plan in ('trial', 'team', 'business', 'enterprise')),
  timezone text not null,
  currency text not null constraint organizations_currency_iso4217 check (currency ~ '^[A-Z]{3}$'),
  locale text not null constraint organizations_locale_bcp47 check (locale ~ '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$'),
  web_url text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  version integer not null default 1
);
comment on column app.organizations.plan is 'Trial and Team plans do not support API Clients.';

create trigger _100_touch_version before update on app.organizations
  for each row execute function app_private.tg__touch_version();

alter table app.organizations enable row level security;
alter table app.organizations force row level security;
create policy "Clients see their own organization" on app.organizations for select to svc_runtime
  using (id = (select app.current_organization_id()));
grant select on app.organizations to svc_runtime;

/** Members: named users. The id is the normalized (trimmed, lower-cased) email. */
create function app_private.normalize_email(email text) returns text
language sql immutable parallel safe strict
set search_path = pg_catalog
as $$ select lower(btrim(email)) $$;
grant execute on function app_private.normalize_email(text) to svc_runtime;

create table app.members (
  organization_id text not null references app.organizations on delete cascade,
  id text not null
    constraint members_id_is_normalized_email check (id = app_private.normalize_email(id) and id ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'),
  display_name text not null constraint members_display_name_length check (length(display_name) between 1 and 200),
  status text not null default 'active' constraint members_status_valid check (status in ('active', 'inactive')),
  svc_roles text[] not null default '{member}'
    constraint members_roles_valid check (svc_roles <@ array['member', 'manager', 'finance', 'hr']),
  job_title text,
  timezone text,
  -- HR-restricted fields: readable only with the hr Role.
  employee_number text,
  hire_date date,
  employment_type text constraint members_employment_type_valid
    check (employment_type in ('employee', 'contractor', 'intern')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  version integer not null default 1,
  primary key (organization_id, id)
);
create index members_display_name_search on app.members (organization_id, lower(display_name) text_pattern_ops);

create trigger _100_touch_version before update on app.members
  for each row execute function app_private.tg__touch_version();

alter table app.members enable row level security;
alter table app.members force row level security;
create policy "Clients with any Role see members of their organization" on app.members for select to svc_runtime
  using (organization_id = (select app.current_organization_id())
         and (select app.has_any_role('{member,manager,finance,hr}')));
-- HR-restricted columns are not granted: only app_private.member_hr_profile (hr Role) reads them.
grant select (organization_id, id, display_name, status, svc_roles, job_title, timezone, created_at, updated_at, version)
  on app.members to svc_runtime;

/** API Clients: licensed non-human principals bound to one organization. */
create table app.api_clients (
  id text primary key default app_private.new_id('apic'),
  organization_id text not null references app.organizations on delete restrict,
  name text not null constraint api_clients_name_length check (length(name) between 1 and 200),
  description text,
  license_level text not null constraint api_clients_license_level_valid check (license_level in ('regular', 'manager')),
  license_source text not null constraint api_clients_license_source_valid check (license_source in ('included', 'purchased')),
  license_status text not null default 'active'
    constraint api_clients_license_status_valid check (license_status in ('active', 'released')),
  status text not null default 'active' constraint api_clients_status_valid check (status in ('active', 'disabled', 'deleted')),
  svc_roles text[] not null,
  -- Bumped on every change that affects authorization (Roles, status, licence, secrets).
  authorization_version integer not null default 1,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  deleted_at timestamptz,
  constraint api_clients_roles_allowed_by_license check (
    cardinality(svc_roles) >= 1
    and case license_level
          when 'regular' then svc_roles <@ array['member']
          else svc_roles <@ array['member', 'manager', 'finance', 'hr']
        end),
  constraint api_clients_deleted_at_iff_deleted check ((status = 'deleted') = (deleted_at is not null)),
  constraint api_clients_included_license_is_manager check (license_source <> 'included' or license_level = 'manager')
);
create unique index api_clients_name_unique on app.api_clients (organization_id, lower(name)) where status <> 'deleted';
-- Business and Enterprise organizations include exactly one Manager-level client.
create unique index api_clients_one_included_license on app.api_clients (organization_id)
  where license_source = 'included' and license_status = 'active' and status <> 'deleted';

create function app_private.tg_api_clients__plan_allows_clients() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
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
create trigger _100_plan_allows_clients before insert on app.api_clients
  for each row execute function app_private.tg_api_clients__plan_allows_clients();

create function app_private.tg_api_clients__touch() returns trigger
language plpgsql volatile
set search_path = pg_catalog
as $$
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
create trigger _100_touch before update on app.api_clients
  for each row execute function app_private.tg_api_clients__touch();

alter table app.api_clients enable row level security;
alter table app.api_clients force row level security;
create policy "Clients see only themselves" on app.api_clients for select to svc_runtime
  using (id = (select app.current_client_id()) and organization_id = (select app.current_organization_id()));
grant select on app.api_clients to svc_runtime;

/** Client secrets: only a SHA-256 digest of a 256-bit random secret is stored. Two slots make
 * "at most two active secrets" a constraint rather than a count. */
create table app.client_secrets (
  id text primary key default app_private.new_id('csec'),
  organization_id text not null references app.organizations on delete restrict,
  client_id text not null references app.api_clients on delete restrict,
  slot smallint not null constraint client_secrets_slot_valid check (slot in (1, 2)),
  secret_sha256 bytea not null constraint client_secrets_digest_length check (length(secret_sha256) = 32),
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
create unique index client_secrets_two_active on app.client_secrets (client_id, slot) where revoked_at is null;
create unique index client_secrets_digest_unique on app.client_secrets (secret_sha256);
alter table app.client_secrets enable row level security;
alter table app.client_secrets force row level security;
-- No policy for svc_runtime: secrets are checked only inside security definer functions.

create function app_private.tg_client_secrets__bump_client_version() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  update app.api_clients set authorization_version = authorization_version + 1 where id = new.client_id;
  return null;
end
$$;
create trigger _900_bump_client_version after insert or update on app.client_secrets
  for each row execute function app_private.tg_client_secrets__bump_client_version();

-- migrate:down
drop table app.client_secrets;
drop table app.api_clients;
drop table app.members;
drop table app.organizations;
drop function app_private.normalize_email(text);
drop function app_private.tg_api_clients__plan_allows_clients();
drop function app_private.tg_api_clients__touch();
drop function app_private.tg_client_secrets__bump_client_version();
