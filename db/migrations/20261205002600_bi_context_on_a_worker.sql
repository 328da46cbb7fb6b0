-- migrate:up

/** Issue 37: on a Citus worker there are no BI logins (app_private.bi_logins stays on the
 * coordinator), so a session there without a request context is no BI session either: the context
 * accessors answer no organization and no Roles, and the views show nothing, as on one server,
 * instead of failing on the missing table (test/db/context.test.ts and tenancy.test.ts read the
 * views with forged settings in the organization's worker). BI sessions on a cluster still read
 * nothing (docs/scaling.md). */
create or replace function app_private.bi_context(out organization_id text, out svc_roles text[])
language plpgsql stable security definer parallel restricted
set search_path = pg_catalog
as $$
begin
  if to_regclass('app_private.bi_logins') is null then
    return;
  end if;
  select b.organization_id, b.svc_roles into organization_id, svc_roles
    from app_private.bi_logins b where b.role_name = session_user;
end
$$;

/** The two policy helpers' way without a signed context (a BI session, or none): the organization
 * is read once into a value, which Citus routes to its shard, and nothing is read without one. In
 * the organization's worker a call of app.current_organization_id() inside the lookup could not be
 * planned there ("cannot execute a distributed query from a query on a shard"), so a forged
 * context failed with that error instead of seeing nothing. */
create or replace function app_private.may_read_tickets() returns boolean
language plpgsql stable security definer
set search_path = pg_catalog
as $$
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
  return coalesce((select o.ticket_module_enabled
                      and (app.has_any_role('{member,manager}')
                           or (app.has_role('finance') and o.finance_may_read_tickets)
                           or (app.has_role('hr') and o.hr_may_read_tickets))
                     from app.organizations o where o.id = v_org), false);
end
$$;

create or replace function app_private.may_read_time_entries() returns boolean
language plpgsql stable security definer
set search_path = pg_catalog
as $$
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
  return coalesce((select o.hr_may_read_time_entries from app.organizations o where o.id = v_org), false);
end
$$;

-- migrate:down
