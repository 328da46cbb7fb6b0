-- migrate:up

/** Issue 37: the policy helpers that run as their owner (a login role) read distributed tables only
 * in the organization's worker. Called on a Citus coordinator they would read through Citus, over
 * worker connections opened as that owner. In a request they always run in the worker (the signed
 * context is there), and without any context they answer before reading; what is left is a BI
 * session on the coordinator, which is refused there (NOT_IN_ITS_WORKER), as the commands are
 * (20261205002100). In the two may_read_* helpers (once per statement) the check runs only on that
 * path; member_hr_profile (per row of an hr reader's members) checks after its own checks.
 * may_read_internal_notes() reads no table itself (only through may_read_tickets()). */
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
  perform app_private.refuse_on_coordinator('app_private.may_read_tickets()');
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
  perform app_private.refuse_on_coordinator('app_private.may_read_time_entries()');
  return coalesce((select o.hr_may_read_time_entries from app.organizations o where o.id = v_org), false);
end
$$;

/** The same semantics as before (no row, or not this organization's hr: null), the read after the checks. */
create or replace function app_private.member_hr_profile(p_org text, p_member_id text) returns jsonb
language plpgsql stable security definer
set search_path = pg_catalog
as $$
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

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'restore a backup taken before 20261205002700'); end $$;
