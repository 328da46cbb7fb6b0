-- migrate:up

/** svc-admin's own login, svc_admin, in place of the owner connection.
 *
 * The control plane's commands (control.*: organizations, members, clients and their secrets,
 * signing keys, policies, integrations, customers, approvals, agents' publication, legal holds,
 * notifications) run as svc_admin: not a superuser, no BYPASSRLS, no CREATEROLE, no CREATEDB,
 * owner of nothing. What it may do:
 * - act for every organization: a member of svc_operator, named in the one policy per tenant table
 *   that svc_owner has, with svc_owner's privileges on those tables;
 * - execute the control plane's commands and the helpers they call;
 * - of the credential tables, write client secrets (their digests; it reads every column but the
 *   digest), the client directory, and the signing keys (sealed with SVC_SECRET_KEY, which the
 *   database never sees).
 * BI logins are database roles: `svc-admin reporting grant` and `revoke` make and drop them, which
 * takes CREATEROLE (on PostgreSQL 15 as good as a superuser's: it grants any role that is not one).
 * Those two commands alone run on the owner connection (src/admin/reporting.ts). */
set local lock_timeout = '3s';
set local statement_timeout = '60s';
-- On Citus, each table's grants run shard by shard over one connection per worker: a grant that
-- ran over several would refuse a later one on a reference table in the same transaction (as
-- when the role already exists on the cluster: a second database migrated there).
select set_config('citus.multi_shard_modify_mode', 'sequential', true) where exists (select from pg_extension where extname = 'citus');

do $$
declare
  r record;
begin
  if not exists (select from pg_roles where rolname = 'svc_admin') then
    -- Its password is set by the migrate step (scripts/db.ts), as svc_runtime's is.
    create role svc_admin login nosuperuser nobypassrls nocreatedb nocreaterole inherit;
  end if;
  grant svc_operator to svc_admin;
  execute format('grant connect on database %I to svc_admin', current_database());
  grant usage on schema api, app, app_private, control to svc_admin;

  -- svc_owner's privileges on the tenant tables, and its policy.
  for r in
    select c.oid::regclass as tbl, string_agg(distinct a.privilege_type, ', ') as privileges
      from pg_class c
      join pg_namespace n on n.oid = c.relnamespace
      cross join lateral aclexplode(c.relacl) a
     where n.nspname in ('app', 'app_private', 'control') and c.relkind in ('r', 'p', 'v')
       and a.grantee = 'svc_owner'::regrole
     group by c.oid
  loop
    execute format('grant %s on table %s to svc_admin', r.privileges, r.tbl);
  end loop;
  for r in
    select p.polrelid::regclass as tbl, p.polname
      from pg_policy p
     where p.polname = 'Commands act in the request''s organization'
  loop
    execute format('alter policy %I on %s to svc_owner, svc_worker, svc_admin', r.polname, r.tbl);
  end loop;
  for r in
    select c.oid::regclass as seq
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname in ('app', 'app_private') and c.relkind = 'S' and c.relname <> 'shard_views_generation'
       -- CASE: the privilege check errs on anything but a sequence, and a WHERE has no order.
       and case when c.relkind = 'S' then has_sequence_privilege('svc_owner', c.oid, 'usage') end
  loop
    execute format('grant usage on sequence %s to svc_admin', r.seq);
  end loop;

  -- The commands and the helpers they call (app and app_private, without the schema's
  -- maintenance); not the purges, which are the worker's, nor the BI logins' two.
  for r in
    select p.oid::regprocedure as fn, p.prokind
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where (n.nspname in ('app', 'app_private') and pg_get_userbyid(p.proowner) in ('svc_owner', 'svc_api', 'svc_gate')
            and p.proname !~ '^(citus_|shard_views_|shard_groups_|tg_shard_views_)'
            and p.proname not in ('policy_expression', 'job_queue_privileges'))
        or (n.nspname = 'control' and p.proname !~ '^(purge_|expire_|reporting_)')
  loop
    execute format('grant execute on %s %s to svc_admin', case r.prokind when 'p' then 'procedure' else 'function' end, r.fn);
  end loop;
end
$$;

-- Client secrets: every column but the digest read, digests written, revocations.
grant select (id, organization_id, client_id, slot, created_at, revoked_at), insert, update (revoked_at)
  on table app.client_secrets to svc_admin;
create policy "The control plane manages client secrets" on app.client_secrets
  for all to svc_admin using (true) with check (true);
-- The client directory: the control plane writes it (the lookup reads it, as svc_directory).
grant select, insert, update, delete on table app_private.client_directory to svc_admin;
create policy "The control plane keeps the client directory" on app_private.client_directory
  for all to svc_admin using (true) with check (true);
-- Signing keys (no row security: no organization's): added sealed, and retired.
grant select, insert, update on table app_private.signing_keys to svc_admin;

/** On Citus, each worker's own sequences, for svc_owner's triggers, svc_worker's jobs and svc_admin's commands there. */
create or replace function app_private.citus_node_grants() returns void
  language plpgsql
  set search_path = pg_catalog, pg_temp
as $$
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
      end
      $g$ $w$)
   where not success;
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_PRIVILEGES_NOT_COPIED', format('granting the workers'' own objects failed: %s', v_failed));
  end if;
end
$$;
comment on function app_private.citus_node_grants() is
  'On Citus: svc_gate''s read of each worker''s context key, and the use of each worker''s sequences by svc_owner, svc_worker and svc_admin (objects of each node''s own, which Citus does not propagate).';
revoke all on function app_private.citus_node_grants() from public;

-- migrate:down
set local lock_timeout = '3s';
set local statement_timeout = '60s';

-- svc_admin's grants here, and its place in every policy (the policies that name it alone go with it).
-- DROP OWNED also revokes what the role holds on the server's other databases (CONNECT): kept.
do $do$
declare
  v_kept text[];
  v_grant text;
begin
  select array_agg(format('grant %s on database %I to svc_admin', a.privilege_type, d.datname)) into v_kept
    from pg_database d, aclexplode(d.datacl) a
   where a.grantee = 'svc_admin'::regrole and d.datname <> current_database();
  drop owned by svc_admin;
  foreach v_grant in array coalesce(v_kept, '{}') loop
    execute v_grant;
  end loop;
end
$do$;
create or replace function app_private.citus_node_grants() returns void
  language plpgsql
  set search_path = pg_catalog, pg_temp
as $$
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
          execute format('grant usage on sequence %s to svc_owner, svc_worker', s);
        end loop;
      end
      $g$ $w$)
   where not success;
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_PRIVILEGES_NOT_COPIED', format('granting the workers'' own objects failed: %s', v_failed));
  end if;
end
$$;
comment on function app_private.citus_node_grants() is
  'On Citus: svc_gate''s read of each worker''s context key, and svc_owner''s and svc_worker''s use of each worker''s sequences (objects of each node''s own, which Citus does not propagate).';
revoke all on function app_private.citus_node_grants() from public;

-- The role stays (roles belong to the cluster, not to one database): drop it by hand once no database names it.
