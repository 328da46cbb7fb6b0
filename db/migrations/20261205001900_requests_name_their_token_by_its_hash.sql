-- migrate:up

/** Issue 37: a request names its access token by the token's SHA-256 (hex), which is what the
 * database compares, never by the token itself. A statement's text, with its arguments written out,
 * is what pg_stat_activity shows while it runs, and on Citus a delegated call reaches its worker as
 * such a text: the hash there is no credential (the API takes the token, not its hash), where the
 * token was one for its hour. */

drop function api.begin_request(text, text, text[], boolean);
create function api.begin_request(p_organization_id text, p_token_sha256 text, p_required_roles text[] DEFAULT NULL::text[], p_context boolean DEFAULT true)
 RETURNS TABLE(outcome text, organization_id text, svc_roles text[], principal jsonb)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
declare
  c record;
begin
  if p_token_sha256 is null or p_token_sha256 !~ '^[0-9a-f]{64}$' then
    outcome := 'invalid_token';
    return next;
    return;
  end if;
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

revoke execute on function api.begin_request(text, text, text[], boolean) from public;
grant execute on function api.begin_request(text, text, text[], boolean) to svc_runtime;
comment on function api.begin_request(text, text, text[], boolean) is
  'A request''s first statement: the client of the access token whose SHA-256 (hex) is p_token_sha256, in organization p_organization_id; on ok, the signed request context (unless p_context is false).';

do $$
begin
  if exists (select from pg_extension where extname = 'citus') then
    perform create_distributed_function('api.begin_request(text, text, text[], boolean)'::regprocedure, '$1',
      colocate_with => 'app.organizations', force_delegation => true);
  end if;
end
$$;

-- migrate:down
