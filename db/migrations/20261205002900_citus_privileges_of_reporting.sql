-- migrate:up

/** Issue 37: the privileges of the reporting functions (migration 20261205002800) on every node;
 * the copy now covers the reporting_private schema and the relay role. */
create or replace procedure app_private.citus_copy_privileges()
language plpgsql
set search_path = pg_catalog
as $$
declare
  o record;
  v_commands text[] := '{}';
  v_failed text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  -- Objects whose ACL is still the default (null) are created alike on every node: nothing to copy.
  for o in
    select 'function' as kind, p.oid::regprocedure::text as name, p.proowner as owner, p.proacl as acl
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname in ('api', 'app', 'app_private', 'control', 'skills', 'reporting', 'reporting_private') and p.proacl is not null and p.prokind = 'f'
       and not exists (select from pg_depend d where d.objid = p.oid and d.deptype = 'e')
    union all
    select 'table', c.oid::regclass::text, c.relowner, c.relacl
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname in ('api', 'reporting') and c.relkind = 'v' and c.relacl is not null
  loop
    -- The owner keeps its own privileges: revoked from everyone else, then granted as here.
    v_commands := v_commands || format('revoke all on %s %s from %s', o.kind, o.name,
      (select string_agg(r, ', ') from unnest(array['public', 'svc_api', 'svc_runtime', 'svc_reporting', 'svc_reporting_relay']) r
        where r <> pg_get_userbyid(o.owner)));
    v_commands := v_commands || array(
      select format('grant %s on %s %s to %s', string_agg(e.privilege_type, ', '), o.kind, o.name,
               case e.grantee when 0 then 'public' else quote_ident(pg_get_userbyid(e.grantee)) end)
        from aclexplode(o.acl) e where e.grantee <> o.owner group by e.grantee);
  end loop;
  if cardinality(v_commands) > 0 then
    -- A worker refuses DDL on a distributed object unless its propagation is off (it is the
    -- coordinator's to propagate); run_command_on_workers reports a failure instead of raising it.
    select string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') into v_failed
      from run_command_on_workers(format('do %s begin set local citus.enable_ddl_propagation = off; %s end %s', '$copy$',
             (select string_agg(format('execute %L;', c), ' ') from unnest(v_commands) c), '$copy$'))
     where not success;
    if v_failed is not null then
      perform app_private.raise('SV500', 'CITUS_PRIVILEGES_NOT_COPIED', format('copying privileges to the workers failed: %s', v_failed));
    end if;
  end if;
end
$$;

call app_private.citus_copy_privileges();

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'restore a backup taken before 20261205002900'); end $$;
