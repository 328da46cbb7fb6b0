-- migrate:up

/** Issue 37: the statements inside the commands, in forms Citus runs on the organization's shard.
 *
 * Citus refuses a function call that is not immutable in the DO UPDATE SET of an INSERT on a
 * distributed table (it would be evaluated on the shard, once per row; `+` on a timestamptz is
 * one): the idempotency claim now computes its times first, as values. */
create or replace function api.idempotency_claim(p_method text, p_route text, p_key text, p_fingerprint text)
 RETURNS TABLE(state text, response_status integer, response_headers jsonb, response_body text)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
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
$function$;


/** The same for a time entry's approval request, whose statements also name the organization by
 * value: Citus routes a statement to one shard only by a value it can compare (a variable is one;
 * a call of app.current_organization_id() is not). */
create or replace function app_private.request_time_entry_approval(p_entry_id text)
 returns void
 language plpgsql
 security definer
 set search_path to 'pg_catalog'
as $function$
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
$function$;

/** The security-definer SQL functions with parameters that read our tables become PL/pgSQL.
 * Citus cannot plan a statement of a `language sql` function that uses its parameters on a
 * distributed table ("could not create distributed plan"); PL/pgSQL hands it the values. These
 * are never inlined (security definer), so one server plans them as before (and keeps the plan).
 * Each is one statement: a set is returned by RETURN QUERY, a value by RETURN (statement), none
 * by the statement alone; a
 * column and an output parameter of the same name mean the column, as they did. */
do $$
declare
  f record;
  v_statement text;
  v_def text;
begin
  for f in
    select p.oid, p.proretset, p.prorettype = 'void'::regtype as void, pg_get_functiondef(p.oid) as def, p.prosrc
      from pg_proc p
      join pg_namespace n on n.oid = p.pronamespace
      join pg_language l on l.oid = p.prolang
     where n.nspname in ('api', 'app_private', 'control') and l.lanname = 'sql' and p.prosecdef and p.pronargs > 0
       and p.prosrc ~* '\m(from|update|into|join)\s+app\.'
  loop
    v_statement := rtrim(btrim(f.prosrc, E' \n\t'), E'; \n\t');
    if v_statement ~ ';' then
      perform app_private.raise('SV500', 'FUNCTION_NOT_REWRITTEN', format('%s has more than one statement: convert it by hand', f.oid::regprocedure));
    end if;
    if not f.proretset and not f.void and v_statement !~* '^\s*(select|with)\M' then
      perform app_private.raise('SV500', 'FUNCTION_NOT_REWRITTEN', format('%s returns a value from a write: convert it by hand', f.oid::regprocedure));
    end if;
    v_def := regexp_replace(f.def, E'\n LANGUAGE sql\n', E'\n LANGUAGE plpgsql\n');
    v_def := left(v_def, position(E'AS $function$' in v_def) - 1)
      || E'AS $function$\n#variable_conflict use_column\nbegin\n  '
      || case when f.proretset then 'return query ' || v_statement || ';'
              when f.void then v_statement || ';'
              else 'return (' || v_statement || ');' end
      || E'\nend\n$function$';
    execute v_def;
  end loop;
end
$$;

/** Every PL/pgSQL command and helper names its organization by a value. Citus routes a statement
 * to one shard only by a value it can compare with the distribution column: a variable or a
 * parameter is one, a call of app.current_organization_id() is not, and a statement inside a
 * delegated call that Citus cannot route fails ("cannot execute a distributed query from a query
 * on a shard"). Each of these functions now reads the organization once, into
 * v__organization_id, as its first declaration, and its statements compare with that. The
 * context does not change inside them (begin_request, which sets it, is not one of them, nor
 * the context accessors and the policy helpers, which run for every statement). On one server
 * the same bodies verify the context's signature once per call instead of once per statement.
 * test/db/distribution-keys.test.ts checks that no body calls it anywhere else. */
do $$
declare
  f record;
  v_def text;
  v_body_at int;
  v_body text;
  v_options text;
begin
  for f in
    select p.oid, pg_get_functiondef(p.oid) as def
      from pg_proc p
      join pg_namespace n on n.oid = p.pronamespace
      join pg_language l on l.oid = p.prolang
     where n.nspname in ('api', 'app_private', 'control') and l.lanname = 'plpgsql'
       -- A call anywhere but in a declaration (`v_org text := app.current_organization_id();`).
       and p.prosrc ~ '(?<!:= )app\.current_organization_id\(\)'
       and p.prosrc !~ 'v__organization_id'
       and p.proname not in ('begin_request', 'may_read_tickets', 'may_read_internal_notes', 'may_read_time_entries')
       and p.prorettype <> 'trigger'::regtype
  loop
    -- The body starts after the line that opens its dollar quote; compiler options come first in it.
    v_body_at := position(E'AS $function$\n' in f.def);
    if v_body_at = 0 then
      perform app_private.raise('SV500', 'FUNCTION_NOT_REWRITTEN', format('no $function$ body in %s', f.oid::regprocedure));
    end if;
    v_body_at := v_body_at + length(E'AS $function$\n');
    v_body := substring(f.def from v_body_at);
    v_options := coalesce(substring(v_body from '^((?:\s*#variable_conflict\s+\w+\s*\n)*)'), '');
    v_body := substring(v_body from length(v_options) + 1);
    v_body := regexp_replace(v_body, '(\(\s*select\s+app\.current_organization_id\(\)\s*\)|(?<!:= )app\.current_organization_id\(\))',
                             'v__organization_id', 'g');
    v_body := case when v_body ~* '^\s*declare\M'
                   then regexp_replace(v_body, '^(\s*declare)', E'\\1\n  v__organization_id text := app.current_organization_id();', 'i')
                   else E'declare\n  v__organization_id text := app.current_organization_id();\n' || v_body end;
    execute left(f.def, v_body_at - 1) || v_options || v_body;
  end loop;
end
$$;

-- migrate:down
