-- migrate:up

/** The baseline, 3 of 16. The control plane: API clients and their secrets, access tokens and signing keys, rate limits, idempotency keys, service status, custom-field schemas.
 * Laid out by table: each table, then its keys and indexes, row security and policies, triggers
 * and their functions, and grants; then the area's views and commands. db/README.md, "The
 * baseline", says how it was made and proved equal to the migrations it replaced. */
set local check_function_bodies = false;
set local client_min_messages = warning;
set local search_path = '';

-- While this file runs, the owners of its functions and views may create in the schemas (`alter … owner to`
-- a role needs it when the migrating role is not a superuser); taken back at its end.
grant create on schema api, app, app_private, control, reporting, skills to svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- function app.current_client_id()

create function app.current_client_id() returns text
    language plpgsql stable parallel restricted
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  return case when app_private.context_ok() then nullif(current_setting('svc.client_id', true), '') end;
end
$$;

alter function app.current_client_id() owner to svc_owner;

revoke all on function app.current_client_id() from public;
grant execute on function app.current_client_id() to svc_runtime;
grant execute on function app.current_client_id() to svc_api;
grant execute on function app.current_client_id() to svc_reporting;
grant execute on function app.current_client_id() to svc_worker;
grant execute on function app.current_client_id() to svc_admin;
grant execute on function app.current_client_id() to svc_gate;

-- function app_private.client_may_read(text, text, text, text, text)

create function app_private.client_may_read(p_organization_id text, p_client text, p_type text, p_resource_type text, p_resource_id text) returns boolean
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function app_private.client_may_read(p_organization_id text, p_client text, p_type text, p_resource_type text, p_resource_id text) owner to svc_owner;

revoke all on function app_private.client_may_read(p_organization_id text, p_client text, p_type text, p_resource_type text, p_resource_id text) from public;
grant execute on function app_private.client_may_read(p_organization_id text, p_client text, p_type text, p_resource_type text, p_resource_id text) to svc_worker;
grant execute on function app_private.client_may_read(p_organization_id text, p_client text, p_type text, p_resource_type text, p_resource_id text) to svc_admin;

-- function app_private.random_secret(text)

create function app_private.random_secret(prefix text) returns text
    language sql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
  -- Two v4 UUIDs from the server's strong random source: 244 random bits.
  select prefix || translate(rtrim(encode(decode(
           replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''), 'hex'),
           'base64'), '='), '+/', '-_')
$$;

alter function app_private.random_secret(prefix text) owner to svc_owner;

revoke all on function app_private.random_secret(prefix text) from public;
grant execute on function app_private.random_secret(prefix text) to svc_worker;
grant execute on function app_private.random_secret(prefix text) to svc_admin;

-- table app.api_clients

create table app.api_clients (
    id text default app_private.new_id('apic'::text) not null,
    organization_id text not null,
    name text not null,
    description text,
    license_level text not null,
    license_source text not null,
    license_status text default 'active'::text not null,
    status text default 'active'::text not null,
    svc_roles text[] not null,
    authorization_version integer default 1 not null,
    created_at timestamp with time zone default now() not null,
    updated_at timestamp with time zone default now() not null,
    deleted_at timestamp with time zone,
    constraint api_clients_deleted_at_iff_deleted check (((status = 'deleted'::text) = (deleted_at is not null))),
    constraint api_clients_included_license_is_manager check (((license_source <> 'included'::text) or (license_level = 'manager'::text))),
    constraint api_clients_license_level_valid check ((license_level = any (array['regular'::text, 'manager'::text]))),
    constraint api_clients_license_source_valid check ((license_source = any (array['included'::text, 'purchased'::text]))),
    constraint api_clients_license_status_valid check ((license_status = any (array['active'::text, 'released'::text]))),
    constraint api_clients_name_length check (((length(name) >= 1) and (length(name) <= 200))),
    constraint api_clients_roles_allowed_by_license check (((cardinality(svc_roles) >= 1) and
case license_level
    when 'regular'::text then (svc_roles <@ array['member'::text])
    else (svc_roles <@ array['member'::text, 'manager'::text, 'finance'::text, 'hr'::text])
end)),
    constraint api_clients_status_valid check ((status = any (array['active'::text, 'disabled'::text, 'deleted'::text])))
);

alter table only app.api_clients force row level security;

alter table only app.api_clients
    add constraint api_clients_pkey primary key (organization_id, id);

create index api_clients_id on app.api_clients using btree (id);

create unique index api_clients_name_unique on app.api_clients using btree (organization_id, lower(name)) where (status <> 'deleted'::text);

create unique index api_clients_one_included_license on app.api_clients using btree (organization_id) where ((license_source = 'included'::text) and (license_status = 'active'::text) and (status <> 'deleted'::text));

alter table only app.api_clients
    add constraint api_clients_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete restrict;

alter table app.api_clients enable row level security;

create policy "The gate reads clients of the organization it was asked about" on app.api_clients for select to svc_gate using (organization_id = current_setting('svc.gate_organization'::text, true));

comment on policy "The gate reads clients of the organization it was asked about" on app.api_clients is 'svc_gate (the credential path: api.begin_request, api.authenticate_client) reads API clients only of the organization named in svc.gate_organization, which each gate function sets to the organization its caller named for the length of its read and then clears. The credential check runs before any request context exists, so this setting, not the function''s WHERE, keeps every other organization''s clients out of reach.';

create policy "Commands act in the request's organization" on app.api_clients to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.api_clients is 'For svc_owner, svc_worker and svc_admin, every command: the clients of the signed request''s organization (app.current_organization_id()), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations), in USING and WITH CHECK. The triggers and definers svc_owner owns thus reach only the request''s organization''s clients, while the control plane, which creates, licenses and disables clients for any organization, reaches them all.';

create policy "Clients see only themselves" on app.api_clients for select to svc_api using ((id = (select app.current_client_id())) and (organization_id = (select app.current_organization_id())));

comment on policy "Clients see only themselves" on app.api_clients is 'svc_api (the api views and commands) reads only the calling client''s own row of app.api_clients, in the request''s organization, and only under a signed request context (app.current_client_id(), app.current_organization_id()). A client reads its own principal but never sees the other clients of its organization, which only administrators manage (spec).';

create function app_private.tg_api_clients__plan_allows_clients() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.tg_api_clients__plan_allows_clients() owner to svc_owner;

comment on function app_private.tg_api_clients__plan_allows_clients() is 'BEFORE INSERT on app.api_clients: refuses a client with an active licence that is not deleted in an organization on the Trial or Team plan, raising SVL01 PLAN_DOES_NOT_SUPPORT_API_CLIENTS, because those plans do not support API Clients (spec, Authentication). It runs as svc_owner to read the organization''s plan, within the row''s organization under svc_owner''s policy.';

create function app_private.tg_api_clients__touch() returns trigger
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
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

alter function app_private.tg_api_clients__touch() owner to svc_owner;

comment on function app_private.tg_api_clients__touch() is 'BEFORE UPDATE on app.api_clients: sets updated_at, and increments authorization_version whenever the client''s Roles, status, licence status or licence level change (the count of changes to its authorization that the spec''s per-request checks name). Deletion is final: moving a deleted client to any other status raises SVC13 CLIENT_DELETED.';

create trigger _100_plan_allows_clients before insert on app.api_clients for each row execute function app_private.tg_api_clients__plan_allows_clients();

create trigger _100_touch before update on app.api_clients for each row execute function app_private.tg_api_clients__touch();

revoke all on function app_private.tg_api_clients__plan_allows_clients() from public;
grant execute on function app_private.tg_api_clients__plan_allows_clients() to svc_worker;
grant execute on function app_private.tg_api_clients__plan_allows_clients() to svc_admin;

revoke all on function app_private.tg_api_clients__touch() from public;
grant execute on function app_private.tg_api_clients__touch() to svc_worker;
grant execute on function app_private.tg_api_clients__touch() to svc_admin;

grant select on table app.api_clients to svc_api;
grant select on table app.api_clients to svc_gate;
grant select,insert,delete,update on table app.api_clients to svc_owner;
grant select,insert,delete,update on table app.api_clients to svc_worker;
grant select,insert,delete,update on table app.api_clients to svc_admin;

-- table app.client_secrets

create table app.client_secrets (
    id text default app_private.new_id('csec'::text) not null,
    organization_id text not null,
    client_id text not null,
    slot smallint not null,
    secret_sha256 bytea not null,
    created_at timestamp with time zone default now() not null,
    revoked_at timestamp with time zone,
    constraint client_secrets_digest_length check ((length(secret_sha256) = 32)),
    constraint client_secrets_slot_valid check ((slot = any (array[1, 2])))
);

alter table only app.client_secrets force row level security;

alter table only app.client_secrets
    add constraint client_secrets_pkey primary key (organization_id, id);

create index client_secrets_client on app.client_secrets using btree (client_id);

create index client_secrets_id on app.client_secrets using btree (id);

create unique index client_secrets_two_active on app.client_secrets using btree (organization_id, client_id, slot) where (revoked_at is null);

alter table only app.client_secrets
    add constraint client_secrets_client_fkey foreign key (organization_id, client_id) references app.api_clients(organization_id, id) on delete restrict;

alter table only app.client_secrets
    add constraint client_secrets_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete restrict;

alter table app.client_secrets enable row level security;

create policy "The gate reads secrets of the organization it was asked about" on app.client_secrets for select to svc_gate using (organization_id = current_setting('svc.gate_organization'::text, true));

comment on policy "The gate reads secrets of the organization it was asked about" on app.client_secrets is 'svc_gate reads client secrets (their digests) only of the organization named in svc.gate_organization, which api.authenticate_client and api.begin_request set to the organization their caller named for the length of their read. The credential check runs before any request context exists, so this setting, not the function''s WHERE, keeps every other organization''s secrets out of reach.';

create policy "The control plane manages client secrets" on app.client_secrets to svc_admin using (true) with check (true);

comment on policy "The control plane manages client secrets" on app.client_secrets is 'svc_admin (svc-admin''s control plane) may add and revoke client secrets in every organization, as it creates clients and rotates or revokes their secrets for any organization. Its column grants, not this policy, keep the secret digests out of its reach: it reads every column but secret_sha256 and updates only revoked_at.';

create function app_private.tg_client_secrets__bump_client_version() returns trigger
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  update app.api_clients set authorization_version = authorization_version + 1
   where organization_id = new.organization_id and id = new.client_id;
  return null;
end
$$;

alter function app_private.tg_client_secrets__bump_client_version() owner to svc_owner;

comment on function app_private.tg_client_secrets__bump_client_version() is 'AFTER INSERT OR UPDATE on app.client_secrets: increments the owning client''s authorization_version, since a secret added or revoked changes what authenticates as that client. It runs as svc_owner and updates the client by the secret''s organization and client id, so it touches that one client, under svc_owner''s policy (the request''s organization, or any in the control plane''s operator session).';

create trigger _900_bump_client_version after insert or update on app.client_secrets for each row execute function app_private.tg_client_secrets__bump_client_version();

revoke all on function app_private.tg_client_secrets__bump_client_version() from public;
grant execute on function app_private.tg_client_secrets__bump_client_version() to svc_worker;
grant execute on function app_private.tg_client_secrets__bump_client_version() to svc_admin;

grant select on table app.client_secrets to svc_gate;
grant insert on table app.client_secrets to svc_admin;

grant select(id) on table app.client_secrets to svc_admin;

grant select(organization_id) on table app.client_secrets to svc_admin;

grant select(client_id) on table app.client_secrets to svc_admin;

grant select(slot) on table app.client_secrets to svc_admin;

grant select(created_at) on table app.client_secrets to svc_admin;

grant select(revoked_at),update(revoked_at) on table app.client_secrets to svc_admin;

-- table app.idempotency_keys

create table app.idempotency_keys (
    organization_id text not null,
    client_id text not null,
    method text not null,
    route text not null,
    key text not null,
    fingerprint text not null,
    response_status integer,
    response_headers jsonb,
    response_body text,
    created_at timestamp with time zone default now() not null,
    expires_at timestamp with time zone default (now() + '24:00:00'::interval) not null,
    constraint idempotency_keys_key_format check ((key ~ '^[\x20-\x7e]{1,255}$'::text))
);

alter table only app.idempotency_keys force row level security;

alter table only app.idempotency_keys
    add constraint idempotency_keys_pkey primary key (organization_id, client_id, method, route, key);

create index idempotency_keys_expiry on app.idempotency_keys using btree (expires_at);

alter table only app.idempotency_keys
    add constraint idempotency_keys_client_fkey foreign key (organization_id, client_id) references app.api_clients(organization_id, id) on delete cascade;

alter table only app.idempotency_keys
    add constraint idempotency_keys_organization_id_fkey foreign key (organization_id) references app.organizations(id) on delete cascade;

alter table app.idempotency_keys enable row level security;

create policy "Clients use only their own idempotency keys" on app.idempotency_keys to svc_api using (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id())))) with check (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));

comment on policy "Clients use only their own idempotency keys" on app.idempotency_keys is 'svc_api reads and writes (every command) only the Idempotency-Keys whose organization and client are those of the signed request context, in USING and WITH CHECK. Keys are scoped per client, so no client can replay, detect or overwrite another client''s stored response, even within its own organization.';

create policy "Commands act in the request's organization" on app.idempotency_keys to svc_owner, svc_worker, svc_admin using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id())))) with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

comment on policy "Commands act in the request's organization" on app.idempotency_keys is 'For svc_owner, svc_worker and svc_admin, every command: the Idempotency-Keys of the signed request''s organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations), in USING and WITH CHECK. The worker''s purge of expired keys (control.purge_expired_idempotency_keys) spans organizations, while a definer run inside a request stays in its own.';

grant select,insert,delete,update on table app.idempotency_keys to svc_api;
grant select,insert,delete,update on table app.idempotency_keys to svc_owner;
grant select,insert,delete,update on table app.idempotency_keys to svc_worker;
grant select,insert,delete,update on table app.idempotency_keys to svc_admin;

-- table app_private.access_tokens

create table app_private.access_tokens (
    organization_id text not null,
    token_sha256 bytea not null,
    client_id text not null,
    secret_id text not null,
    expires_at timestamp with time zone not null,
    created_at timestamp with time zone default now() not null,
    constraint access_tokens_digest_length check ((length(token_sha256) = 32))
);

alter table only app_private.access_tokens force row level security;

alter table only app_private.access_tokens
    add constraint access_tokens_pkey primary key (organization_id, token_sha256);

create index access_tokens_expiry on app_private.access_tokens using btree (expires_at);

alter table only app_private.access_tokens
    add constraint access_tokens_organization_id_client_id_fkey foreign key (organization_id, client_id) references app.api_clients(organization_id, id) on delete cascade;

alter table only app_private.access_tokens
    add constraint access_tokens_organization_id_secret_id_fkey foreign key (organization_id, secret_id) references app.client_secrets(organization_id, id) on delete cascade;

alter table app_private.access_tokens enable row level security;

create policy "The gate reads tokens of the organization it was asked about" on app_private.access_tokens for select to svc_gate using (organization_id = current_setting('svc.gate_organization'::text, true));

comment on policy "The gate reads tokens of the organization it was asked about" on app_private.access_tokens is 'svc_gate reads access-token records only of the organization named in svc.gate_organization, which api.begin_request sets to the organization the request names (from the verified token) for the length of its lookup. A presented token is therefore checked only against its own organization''s records, and a wrong WHERE reads no other organization''s tokens.';

create policy "The gate records tokens of the organization it was asked about" on app_private.access_tokens for insert to svc_gate with check (organization_id = current_setting('svc.gate_organization'::text, true));

comment on policy "The gate records tokens of the organization it was asked about" on app_private.access_tokens is 'svc_gate inserts access-token records only for the organization named in svc.gate_organization, which api.access_token_record sets to the organization in which api.authenticate_client has just verified the client secret. A token can therefore be recorded, and later accepted by api.begin_request, only in the organization whose live secret was presented.';

create policy "The worker sees token records that have run out" on app_private.access_tokens for select to svc_worker using (expires_at < (now() - '00:01:00'::interval));

comment on policy "The worker sees token records that have run out" on app_private.access_tokens is 'svc_worker sees only access-token records that expired more than a minute ago, and of them only the organization_id and expires_at columns it is granted: exactly what its purge deletes. It never sees a live token''s record or any token digest.';

create policy "The worker purges token records that have run out" on app_private.access_tokens for delete to svc_worker using (expires_at < (now() - '00:01:00'::interval));

comment on policy "The worker purges token records that have run out" on app_private.access_tokens is 'svc_worker may delete only access-token records that expired more than a minute ago, in any organization (control.purge_expired_access_tokens, an hourly job). The worker can never delete the record of a live token, and its column grants let it read no token digest.';

grant select,insert on table app_private.access_tokens to svc_gate;
grant delete on table app_private.access_tokens to svc_worker;

grant select(organization_id) on table app_private.access_tokens to svc_worker;

grant select(expires_at) on table app_private.access_tokens to svc_worker;

-- table app_private.client_directory

create table app_private.client_directory (
    client_id text not null,
    organization_id text not null
);

alter table only app_private.client_directory force row level security;

alter table only app_private.client_directory
    add constraint client_directory_pkey primary key (client_id);

alter table app_private.client_directory enable row level security;

create policy "The lookup sees the one client it was asked for" on app_private.client_directory for select to svc_directory using (client_id = current_setting('svc.directory_client'::text, true));

comment on policy "The lookup sees the one client it was asked for" on app_private.client_directory is 'svc_directory, owner of api.client_organization, reads only the directory row of the client named in svc.directory_client, which the lookup sets to its argument for the length of its read. The directory spans every tenant and is read before any request context exists (by the token endpoint), so this policy, not the function''s WHERE, keeps the lookup to one client''s row.';

create policy "The control plane keeps the client directory" on app_private.client_directory to svc_admin using (true) with check (true);

comment on policy "The control plane keeps the client directory" on app_private.client_directory is 'svc_admin (svc-admin''s control plane) reads and writes every row of the client directory (client id to organization, for every tenant): it adds each client it creates and looks up the organization of the client a command names, for any organization. No other role writes the directory; the token endpoint''s lookup reads it as svc_directory, under a policy of its own.';

grant select on table app_private.client_directory to svc_directory;
grant select,insert,delete,update on table app_private.client_directory to svc_admin;

-- table app_private.rate_limit_buckets

create unlogged table app_private.rate_limit_buckets (
    key text not null,
    window_start bigint not null,
    hits integer not null
);

alter table only app_private.rate_limit_buckets
    add constraint rate_limit_buckets_pkey primary key (key);

grant select,insert,update on table app_private.rate_limit_buckets to svc_gate;

-- table app_private.signing_keys

create table app_private.signing_keys (
    kid text not null,
    alg text not null,
    public_jwk jsonb not null,
    private_jwk_sealed text not null,
    created_at timestamp with time zone default now() not null,
    retired_at timestamp with time zone
);

alter table only app_private.signing_keys
    add constraint signing_keys_pkey primary key (kid);

grant select,insert on table app_private.signing_keys to svc_gate;
grant select,insert,update on table app_private.signing_keys to svc_admin;

-- function api.access_token_record(text, text, text, bytea, timestamp with time zone)

create function api.access_token_record(p_organization_id text, p_client_id text, p_secret text, p_token_sha256 bytea, p_expires_at timestamp with time zone) returns boolean
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function api.access_token_record(p_organization_id text, p_client_id text, p_secret text, p_token_sha256 bytea, p_expires_at timestamp with time zone) owner to svc_gate;

comment on function api.access_token_record(p_organization_id text, p_client_id text, p_secret text, p_token_sha256 bytea, p_expires_at timestamp with time zone) is 'The token endpoint''s record of an access token it signed: it checks the client id and secret again through api.authenticate_client and, only when the outcome is ok and the expiry is at most a day away, stores the token''s SHA-256 with its client, secret and expiry in app_private.access_tokens, so only the holder of a live secret can make a token that api.begin_request accepts. It runs as svc_gate because svc_runtime may neither read client secrets nor write token records; the insert passes svc_gate''s policy only for the organization the secret check returned (svc.gate_organization, set for the insert alone).';

revoke all on function api.access_token_record(p_organization_id text, p_client_id text, p_secret text, p_token_sha256 bytea, p_expires_at timestamp with time zone) from public;
grant execute on function api.access_token_record(p_organization_id text, p_client_id text, p_secret text, p_token_sha256 bytea, p_expires_at timestamp with time zone) to svc_runtime;
grant execute on function api.access_token_record(p_organization_id text, p_client_id text, p_secret text, p_token_sha256 bytea, p_expires_at timestamp with time zone) to svc_owner;
grant execute on function api.access_token_record(p_organization_id text, p_client_id text, p_secret text, p_token_sha256 bytea, p_expires_at timestamp with time zone) to svc_worker;

-- function api.authenticate_client(text, text, text)

create function api.authenticate_client(p_organization_id text, p_client_id text, p_secret text) returns table(outcome text, secret_id text, organization_id text)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function api.authenticate_client(p_organization_id text, p_client_id text, p_secret text) owner to svc_gate;

comment on function api.authenticate_client(p_organization_id text, p_client_id text, p_secret text) is 'The token endpoint''s client check: it matches the SHA-256 of the presented secret against the unrevoked secrets of that client in the named organization and answers, in the spec''s order, invalid_client (no match, or a deleted client), client_disabled, org_subscription_inactive, license_inactive (licence not active, or a Trial or Team plan) or ok with the secret and organization. It runs as svc_gate because svc_runtime may not read client secrets and learns only the outcome; svc.gate_organization is set to the named organization for the length of the read, so svc_gate''s policies show no other organization''s clients, secrets or standing, even to a wrong WHERE.';

revoke all on function api.authenticate_client(p_organization_id text, p_client_id text, p_secret text) from public;
grant execute on function api.authenticate_client(p_organization_id text, p_client_id text, p_secret text) to svc_runtime;
grant execute on function api.authenticate_client(p_organization_id text, p_client_id text, p_secret text) to svc_owner;
grant execute on function api.authenticate_client(p_organization_id text, p_client_id text, p_secret text) to svc_worker;

-- function api.client_organization(text)

create function api.client_organization(p_client_id text) returns text
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function api.client_organization(p_client_id text) owner to svc_directory;

comment on function api.client_organization(p_client_id text) is 'The organization of an API client, before any request context exists (the token endpoint); the only reader of app_private.client_directory.';

revoke all on function api.client_organization(p_client_id text) from public;
grant execute on function api.client_organization(p_client_id text) to svc_runtime;
grant execute on function api.client_organization(p_client_id text) to svc_owner;

-- function api.idempotency_claim(text, text, text, text)

create function api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text) returns table(state text, response_status integer, response_headers jsonb, response_body text)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  k record;
  -- Read once: each call verifies the context's HMAC again (13 µs), and this ran eight of them.
  v_org text := app.current_organization_id();
  v_client text := app.current_client_id();
  v_now timestamptz := now();
  v_expires_at timestamptz := now() + interval '24 hours';
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
  insert into app.idempotency_keys as i (organization_id, client_id, method, route, key, fingerprint)
  values (v_org, v_client, p_method, p_route, p_key, p_fingerprint)
  on conflict (organization_id, client_id, method, route, key) do update
    set fingerprint = excluded.fingerprint, response_status = null, response_headers = null,
        response_body = null, created_at = v_now, expires_at = v_expires_at;
  state := 'claimed';
  -- The command sent in the same round trip as this claim runs only under this mark (its
  -- statement's one-time filter): a replay, a mismatch or a key in flight runs nothing.
  perform set_config('svc.claimed', 'yes', true);
  return next;
end
$$;

alter function api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text) owner to svc_api;

comment on function api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text) is 'Claims an Idempotency-Key for the calling client (organization, client, method, route template, key) in the transaction of the write it guards, so the effect and the stored response commit or roll back together: a key held by a concurrent request answers in_flight (a transaction-scoped advisory lock), a live key with another request fingerprint mismatch, one with the same fingerprint replay with its stored response, and otherwise the key is claimed for 24 hours and svc.claimed is set, the one mark under which the command sent in the same round trip runs. Without a signed request context it raises SV500 CONTEXT_MISSING. It runs as svc_api because svc_runtime holds no privilege on app.idempotency_keys, and the policy "Clients use only their own idempotency keys" keeps every read and write to the request''s organization and client.';

revoke all on function api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text) from public;
grant execute on function api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text) to svc_runtime;
grant execute on function api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text) to svc_owner;
grant execute on function api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text) to svc_worker;

-- function api.idempotency_complete(text, text, text, integer, jsonb, text)

create function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) returns void
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  update app.idempotency_keys
     set response_status = p_status, response_headers = p_headers, response_body = p_body
   where organization_id = v__organization_id and client_id = app.current_client_id()
     and method = p_method and route = p_route and key = p_key;
end
$$;

alter function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) owner to svc_api;

comment on function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) is 'Stores the response (status, headers, body) on the Idempotency-Key the calling client claimed, in the same transaction as the command, so a retry with that key replays exactly what was sent. It runs as svc_api because svc_runtime holds no privilege on app.idempotency_keys; the update names the signed context''s organization and client, and the policy "Clients use only their own idempotency keys" admits no other key.';

revoke all on function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) from public;
grant execute on function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) to svc_runtime;
grant execute on function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) to svc_owner;
grant execute on function api.idempotency_complete(p_method text, p_route text, p_key text, p_status integer, p_headers jsonb, p_body text) to svc_worker;

-- function api.idempotency_stored(text, text, text)

create function api.idempotency_stored(p_method text, p_route text, p_key text) returns boolean
    language plpgsql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v__organization_id text := app.current_organization_id();
begin
  return exists (select from app.idempotency_keys i
                  where i.organization_id = v__organization_id and i.client_id = app.current_client_id()
                    and i.method = p_method and i.route = p_route and i.key = p_key and i.expires_at > now());
end
$$;

alter function api.idempotency_stored(p_method text, p_route text, p_key text) owner to svc_api;

comment on function api.idempotency_stored(p_method text, p_route text, p_key text) is 'The preflight of slow writes: whether the calling client already holds a live (unexpired) Idempotency-Key for this method, route and key, in which case the request goes straight to its replay and nothing is sent anywhere (a claim commits only together with its stored response). It runs as svc_api because svc_runtime holds no privilege on app.idempotency_keys; it reads only the signed context''s organization and client, under the policy "Clients use only their own idempotency keys".';

revoke all on function api.idempotency_stored(p_method text, p_route text, p_key text) from public;
grant execute on function api.idempotency_stored(p_method text, p_route text, p_key text) to svc_runtime;
grant execute on function api.idempotency_stored(p_method text, p_route text, p_key text) to svc_owner;
grant execute on function api.idempotency_stored(p_method text, p_route text, p_key text) to svc_worker;

-- function api.rate_limit_lease(text, bigint, integer, integer)

create function api.rate_limit_lease(p_key text, p_window bigint, p_want integer, p_limit integer) returns table(granted integer, hits integer, window_start bigint)
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

alter function api.rate_limit_lease(p_key text, p_window bigint, p_want integer, p_limit integer) owner to svc_gate;

comment on function api.rate_limit_lease(p_key text, p_window bigint, p_want integer, p_limit integer) is 'Leases admissions from a rate-limit key''s fixed window, shared by every API instance in app_private.rate_limit_buckets: under the bucket''s row lock it grants what the caller''s waiting requests need or an eighth of what is left (at most 100), never more than the limit leaves, so the shared count never exceeds the limit; a newer window starts again from zero. It runs as svc_gate, the only role granted the buckets (svc_runtime may not touch them directly), which hold counters under the server''s keys and no tenant rows, hence no row security.';

revoke all on function api.rate_limit_lease(p_key text, p_window bigint, p_want integer, p_limit integer) from public;
grant execute on function api.rate_limit_lease(p_key text, p_window bigint, p_want integer, p_limit integer) to svc_runtime;
grant execute on function api.rate_limit_lease(p_key text, p_window bigint, p_want integer, p_limit integer) to svc_owner;
grant execute on function api.rate_limit_lease(p_key text, p_window bigint, p_want integer, p_limit integer) to svc_worker;

-- function api.rate_limit_release(text[], bigint[], integer[])

create function api.rate_limit_release(p_keys text[], p_windows bigint[], p_unused integer[]) returns void
    language sql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
  update app_private.rate_limit_buckets b
     set hits = greatest(0, b.hits - u.n)
    from unnest(p_keys, p_windows, p_unused) as u(k, w, n)
   where b.key = u.k and b.window_start = u.w
$$;

alter function api.rate_limit_release(p_keys text[], p_windows bigint[], p_unused integer[]) owner to svc_gate;

comment on function api.rate_limit_release(p_keys text[], p_windows bigint[], p_unused integer[]) is 'Gives back admissions an instance leased with api.rate_limit_lease and did not spend, only while the bucket is still in the same window and never below zero, so an idle instance does not keep capacity the others need. It runs as svc_gate, the only role granted app_private.rate_limit_buckets (svc_runtime may not touch them directly), which hold counters and no tenant rows.';

revoke all on function api.rate_limit_release(p_keys text[], p_windows bigint[], p_unused integer[]) from public;
grant execute on function api.rate_limit_release(p_keys text[], p_windows bigint[], p_unused integer[]) to svc_runtime;
grant execute on function api.rate_limit_release(p_keys text[], p_windows bigint[], p_unused integer[]) to svc_owner;
grant execute on function api.rate_limit_release(p_keys text[], p_windows bigint[], p_unused integer[]) to svc_worker;

-- function api.signing_key_bootstrap(text, text, jsonb, text)

create function api.signing_key_bootstrap(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text) returns void
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  perform pg_advisory_xact_lock(hashtext('svc.signing_key_bootstrap'));
  if not exists (select from app_private.signing_keys where retired_at is null) then
    insert into app_private.signing_keys (kid, alg, public_jwk, private_jwk_sealed)
    values (p_kid, p_alg, p_public_jwk, p_private_jwk_sealed);
  end if;
end
$$;

alter function api.signing_key_bootstrap(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text) owner to svc_gate;

comment on function api.signing_key_bootstrap(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text) is 'First boot: under a transaction-scoped advisory lock it stores the caller''s token signing key (the private JWK sealed by the server with SVC_SECRET_KEY, which the database never sees) only if no unretired key exists, so the first instance to arrive stores its key and every other reads it. It runs as svc_gate because svc_runtime has no privilege on app_private.signing_keys; the keys are the service''s, not an organization''s.';

revoke all on function api.signing_key_bootstrap(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text) from public;
grant execute on function api.signing_key_bootstrap(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text) to svc_runtime;
grant execute on function api.signing_key_bootstrap(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text) to svc_api;
grant execute on function api.signing_key_bootstrap(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text) to svc_owner;
grant execute on function api.signing_key_bootstrap(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text) to svc_worker;

-- function api.signing_keys_current()

create function api.signing_keys_current() returns table(kid text, alg text, public_jwk jsonb, private_jwk_sealed text, created_at timestamp with time zone)
    language sql stable security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
  select k.kid, k.alg, k.public_jwk, k.private_jwk_sealed, k.created_at
    from app_private.signing_keys k
   where k.retired_at is null
   order by k.created_at desc, k.kid desc
$$;

alter function api.signing_keys_current() owner to svc_gate;

comment on function api.signing_keys_current() is 'The unretired token signing keys, newest first, with their public JWKs and sealed private JWKs: shared by every API instance and kept across restarts. It runs as svc_gate because svc_runtime has no privilege on app_private.signing_keys; a private key leaves only sealed (SVC_SECRET_KEY, outside the database), and the keys are the service''s, not an organization''s.';

revoke all on function api.signing_keys_current() from public;
grant execute on function api.signing_keys_current() to svc_runtime;
grant execute on function api.signing_keys_current() to svc_api;
grant execute on function api.signing_keys_current() to svc_owner;
grant execute on function api.signing_keys_current() to svc_worker;

-- function control.client_create(text, text, text, text[], text)

create function control.client_create(p_org text, p_name text, p_license_level text, p_roles text[], p_description text default null::text) returns table(client_id text, client_secret text, secret_id text)
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
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
  insert into app_private.client_directory (client_id, organization_id) values (client_id, p_org);
  client_secret := app_private.random_secret('svcsk_');
  insert into app.client_secrets (organization_id, client_id, slot, secret_sha256)
  values (p_org, client_id, 1, sha256(convert_to(client_secret, 'UTF8')))
  returning id into secret_id;
  return next;
end
$$;

revoke all on function control.client_create(p_org text, p_name text, p_license_level text, p_roles text[], p_description text) from public;
grant execute on function control.client_create(p_org text, p_name text, p_license_level text, p_roles text[], p_description text) to svc_admin;

-- function control.client_delete(text)

create function control.client_delete(p_client text) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_org text := (select d.organization_id from app_private.client_directory d where d.client_id = p_client);
  v_now timestamptz := now();
begin
  perform control.client_set_status(p_client, '{active,disabled}', 'deleted');
  update app.api_clients set license_status = 'released' where organization_id = v_org and id = p_client;
  update app.client_secrets set revoked_at = v_now where organization_id = v_org and client_id = p_client and revoked_at is null;
end
$$;

revoke all on function control.client_delete(p_client text) from public;
grant execute on function control.client_delete(p_client text) to svc_admin;

-- function control.client_disable(text)

create function control.client_disable(p_client text) returns void
    language sql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$ select control.client_set_status(p_client, '{active}', 'disabled') $$;

revoke all on function control.client_disable(p_client text) from public;
grant execute on function control.client_disable(p_client text) to svc_admin;

-- function control.client_enable(text)

create function control.client_enable(p_client text) returns void
    language sql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$ select control.client_set_status(p_client, '{disabled}', 'active') $$;

revoke all on function control.client_enable(p_client text) from public;
grant execute on function control.client_enable(p_client text) to svc_admin;

-- function control.client_release_license(text)

create function control.client_release_license(p_client text) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_org text := (select d.organization_id from app_private.client_directory d where d.client_id = p_client);
begin
  update app.api_clients set license_status = 'released' where organization_id = v_org and id = p_client and status <> 'deleted';
  perform app_private.require_found(found, 'CLIENT_NOT_FOUND', p_client);
end
$$;

revoke all on function control.client_release_license(p_client text) from public;
grant execute on function control.client_release_license(p_client text) to svc_admin;

-- function control.client_revoke_secret(text, text)

create function control.client_revoke_secret(p_client text, p_secret_id text) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_org text := (select d.organization_id from app_private.client_directory d where d.client_id = p_client);
begin
  update app.client_secrets set revoked_at = now()
   where organization_id = v_org and id = p_secret_id and client_id = p_client and revoked_at is null;
  perform app_private.require_found(found, 'SECRET_NOT_FOUND', p_secret_id);
end
$$;

revoke all on function control.client_revoke_secret(p_client text, p_secret_id text) from public;
grant execute on function control.client_revoke_secret(p_client text, p_secret_id text) to svc_admin;

-- function control.client_rotate_secret(text)

create function control.client_rotate_secret(p_client text) returns table(client_secret text, secret_id text)
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

revoke all on function control.client_rotate_secret(p_client text) from public;
grant execute on function control.client_rotate_secret(p_client text) to svc_admin;

-- function control.client_set_roles(text, text[])

create function control.client_set_roles(p_client text, p_roles text[]) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
declare
  v_org text := (select d.organization_id from app_private.client_directory d where d.client_id = p_client);
begin
  update app.api_clients set svc_roles = p_roles where organization_id = v_org and id = p_client and status <> 'deleted';
  perform app_private.require_found(found, 'CLIENT_NOT_FOUND', p_client);
end
$$;

revoke all on function control.client_set_roles(p_client text, p_roles text[]) from public;
grant execute on function control.client_set_roles(p_client text, p_roles text[]) to svc_admin;

-- function control.client_set_status(text, text[], text)

create function control.client_set_status(p_client text, p_from text[], p_to text) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
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

revoke all on function control.client_set_status(p_client text, p_from text[], p_to text) from public;
grant execute on function control.client_set_status(p_client text, p_from text[], p_to text) to svc_admin;

-- function control.purge_expired_access_tokens()

create function control.purge_expired_access_tokens() returns integer
    language sql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
  with gone as (delete from app_private.access_tokens where expires_at < now() - interval '1 minute' returning 1)
  select count(*)::integer from gone
$$;

alter function control.purge_expired_access_tokens() owner to svc_owner;

revoke all on function control.purge_expired_access_tokens() from public;
grant execute on function control.purge_expired_access_tokens() to svc_worker;

-- function control.purge_expired_idempotency_keys()

create function control.purge_expired_idempotency_keys() returns integer
    language sql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
  with gone as (delete from app.idempotency_keys where expires_at < now() returning 1)
  select count(*)::integer from gone
$$;

alter function control.purge_expired_idempotency_keys() owner to svc_owner;

revoke all on function control.purge_expired_idempotency_keys() from public;
grant execute on function control.purge_expired_idempotency_keys() to svc_worker;

-- function control.signing_key_add(text, text, jsonb, text)

create function control.signing_key_add(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text) returns void
    language sql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
  insert into app_private.signing_keys (kid, alg, public_jwk, private_jwk_sealed)
  values (p_kid, p_alg, p_public_jwk, p_private_jwk_sealed)
$$;

revoke all on function control.signing_key_add(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text) from public;
grant execute on function control.signing_key_add(p_kid text, p_alg text, p_public_jwk jsonb, p_private_jwk_sealed text) to svc_admin;

-- function control.signing_key_retire(text)

create function control.signing_key_retire(p_kid text) returns void
    language plpgsql
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
begin
  if (select count(*) from app_private.signing_keys where retired_at is null and kid <> p_kid) = 0 then
    perform app_private.raise('SVC12', 'LAST_SIGNING_KEY', 'add a new signing key before retiring the last one');
  end if;
  update app_private.signing_keys set retired_at = now() where kid = p_kid and retired_at is null;
  perform app_private.require_found(found, 'SIGNING_KEY_NOT_FOUND', p_kid);
end
$$;

revoke all on function control.signing_key_retire(p_kid text) from public;
grant execute on function control.signing_key_retire(p_kid text) to svc_admin;

revoke create on schema api, app, app_private, control, reporting, skills from svc_api, svc_owner, svc_gate, svc_directory, svc_status;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
