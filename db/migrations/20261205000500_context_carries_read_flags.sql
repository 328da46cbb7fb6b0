-- migrate:up

/** Issue 37: the organization's read permissions travel in the signed request context.
 *
 * Three policy helpers (may_read_tickets, may_read_internal_notes, may_read_time_entries) read the
 * organization's settings from app.organizations at every statement that checks them; a policy
 * evaluated on a Citus shard may not read another table. begin_request already joins the
 * organization: it now computes which of these the client's Roles allow (its read flags) and the
 * context carries them, covered by the same signature as the organization, client and Roles. A
 * request sees the settings as they were when it began (they change only through the control
 * plane). A BI session has no signed context: its helpers still read the organization. */

/** Which settings-dependent reads the Roles allow: tickets, internal notes, time entries. */
create function app_private.read_flags(p_roles text[], p_ticket_module boolean, p_finance_tickets boolean,
  p_hr_tickets boolean, p_hr_time_entries boolean) returns text
language sql immutable parallel safe
as $$
  select concat_ws(',',
    case when v_tickets then 'tickets' end,
    case when v_tickets and p_roles && '{member,manager}'::text[] then 'internal_notes' end,
    case when p_roles && '{manager,finance}'::text[] or ('hr' = any (p_roles) and p_hr_time_entries) then 'time_entries' end)
    from (select coalesce(p_ticket_module and (p_roles && '{member,manager}'::text[]
                                              or ('finance' = any (p_roles) and p_finance_tickets)
                                              or ('hr' = any (p_roles) and p_hr_tickets)), false) as v_tickets) x
$$;
revoke execute on function app_private.read_flags(text[], boolean, boolean, boolean, boolean) from public;

/** The signature now covers the read flags too (the order of the fields is context_ok's). */
drop function app_private.context_mac(text, text, text);
create function app_private.context_mac(p_org text, p_client text, p_roles text, p_flags text) returns text
language plpgsql stable security definer parallel restricted
set search_path = pg_catalog
as $$
declare
  k record;
begin
  select inner_key, outer_key into k from app_private.context_keys;
  return encode(sha256(k.outer_key || sha256(k.inner_key || convert_to(concat_ws(chr(31), p_org, p_client, p_roles, p_flags,
    pg_backend_pid()::text, (extract(epoch from now()) * 1000000)::bigint::text), 'UTF8'))), 'hex');
end
$$;
revoke execute on function app_private.context_mac(text, text, text, text) from public;

/** p_flags: the read flags when the caller has the organization's row at hand (begin_request);
 * otherwise they are read here. */
drop function app_private.set_context(text, text, text[]);
create function app_private.set_context(p_org text, p_client text, p_roles text[], p_flags text default null) returns void
language plpgsql volatile security definer parallel restricted
set search_path = pg_catalog
as $$
declare
  v_client text := coalesce(p_client, '');
  v_roles text := coalesce(array_to_string(p_roles, ','), '');
  v_flags text := p_flags;
begin
  if p_org is not null and v_flags is null then
    select app_private.read_flags(p_roles, o.ticket_module_enabled, o.finance_may_read_tickets, o.hr_may_read_tickets,
                                  o.hr_may_read_time_entries)
      into v_flags from app.organizations o where o.id = p_org;
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
revoke execute on function app_private.set_context(text, text, text[], text) from public;

create or replace function app_private.context_ok() returns boolean
language plpgsql stable security definer parallel restricted
set search_path = pg_catalog
as $$
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

/** The helpers: from the signed context; a BI session (no signed context) reads the organization. */
create or replace function app_private.may_read_tickets() returns boolean
language plpgsql stable security definer
set search_path = pg_catalog
as $$
begin
  if app_private.context_ok() then
    return 'tickets' = any (string_to_array(current_setting('svc.read_flags', true), ','));
  end if;
  return coalesce((select o.ticket_module_enabled
                      and (app.has_any_role('{member,manager}')
                           or (app.has_role('finance') and o.finance_may_read_tickets)
                           or (app.has_role('hr') and o.hr_may_read_tickets))
                     from app.organizations o where o.id = app.current_organization_id()), false);
end
$$;

create or replace function app_private.may_read_time_entries() returns boolean
language plpgsql stable security definer
set search_path = pg_catalog
as $$
begin
  if app_private.context_ok() then
    return 'time_entries' = any (string_to_array(current_setting('svc.read_flags', true), ','));
  end if;
  return app.has_any_role('{manager,finance}')
      or (app.has_role('hr') and coalesce((select o.hr_may_read_time_entries from app.organizations o
                                             where o.id = app.current_organization_id()), false));
end
$$;

/** begin_request signs the read flags it computes from the organization it already joins; the
 * secret's standing is a join, not a correlated subquery (Citus plans one for every shard, which a
 * delegated call may not reach). */
create or replace function api.begin_request(p_organization_id text, p_token text, p_required_roles text[] DEFAULT NULL::text[], p_context boolean DEFAULT true)
 RETURNS TABLE(outcome text, organization_id text, svc_roles text[], principal jsonb)
language plpgsql volatile security definer
set search_path = pg_catalog
as $function$
declare
  c record;
begin
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
   where t.organization_id = p_organization_id and t.token_sha256 = sha256(convert_to(p_token, 'UTF8'))
     and t.expires_at > now();
  if not found or c.status = 'deleted' or not c.secret_active then
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
$function$;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'restore a backup taken before 20261205000500'); end $$;
