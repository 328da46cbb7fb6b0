-- migrate:up

/** Issue 37: on Citus, every node grants what the coordinator grants.
 *
 * Citus creates our functions and views on the workers when it distributes them, but without the
 * grants and revokes made before: a worker's copy of a function could be executed by PUBLIC and
 * its views read by no one but their owner (measured on 13.2.2: 277 objects differed), so a
 * statement run on a worker under the runtime role was refused a view and allowed every function.
 * This procedure copies each function's and view's privileges from the coordinator to every
 * worker; a migration that creates or grants one calls it at its end (db/README.md), and
 * test/citus/placement.test.ts compares the privileges of every object on every node. Without
 * Citus it does nothing. */
create procedure app_private.citus_copy_privileges()
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
     where n.nspname in ('api', 'app', 'app_private', 'control', 'skills', 'reporting') and p.proacl is not null and p.prokind = 'f'
       and not exists (select from pg_depend d where d.objid = p.oid and d.deptype = 'e')
    union all
    select 'table', c.oid::regclass::text, c.relowner, c.relacl
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname in ('api', 'reporting') and c.relkind = 'v' and c.relacl is not null
  loop
    -- The owner keeps its own privileges: revoked from everyone else, then granted as here.
    v_commands := v_commands || format('revoke all on %s %s from %s', o.kind, o.name,
      (select string_agg(r, ', ') from unnest(array['public', 'svc_api', 'svc_runtime', 'svc_reporting']) r
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
revoke execute on procedure app_private.citus_copy_privileges() from public;

call app_private.citus_copy_privileges();

/** Citus writes a row into a shard with every column named, the defaults it computed included, and
 * PostgreSQL then checks the column privileges of all of them on the shard: svc_api, which may
 * insert only some columns of a table (the others are the defaults and the triggers'), was refused
 * every insert. Each shard grants svc_api INSERT on the columns with a default (or an identity); the distributed
 * table does not, so a command that names such a column is still refused there, where Citus checks
 * the statement as written. Run again after shards are moved or split (docs/scaling.md). */
create procedure app_private.citus_shard_privileges()
language plpgsql
set search_path = pg_catalog
as $$
declare
  t record;
  v_failed text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  for t in
    select p.logicalrelid as rel,
           string_agg(quote_ident(a.attname), ', ' order by a.attnum) as columns
      from pg_dist_partition p
      join pg_attribute a on a.attrelid = p.logicalrelid and a.attnum > 0 and not a.attisdropped
                         and (a.atthasdef or a.attidentity <> '')
     where p.partmethod = 'h'
       and has_table_privilege('svc_api', p.logicalrelid, 'insert') is false
       and exists (select from pg_attribute x where x.attrelid = p.logicalrelid and has_column_privilege('svc_api', p.logicalrelid, x.attnum, 'insert'))
       and not has_column_privilege('svc_api', p.logicalrelid, a.attnum, 'insert')
     group by p.logicalrelid
  loop
    select string_agg(format('%s: %s', shardid, result), '; ') into v_failed
      from run_command_on_shards(t.rel, format('grant insert (%s) on %%s to svc_api', t.columns))
     where not success;
    if v_failed is not null then
      perform app_private.raise('SV500', 'CITUS_PRIVILEGES_NOT_COPIED', format('granting the defaults of %s on its shards failed: %s', t.rel, v_failed));
    end if;
  end loop;
end
$$;
revoke execute on procedure app_private.citus_shard_privileges() from public;

call app_private.citus_shard_privileges();

-- migrate:down
drop procedure app_private.citus_shard_privileges();
drop procedure app_private.citus_copy_privileges();
