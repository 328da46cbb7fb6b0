-- migrate:up

/** Issue 37: on Citus, a request's statements run in the worker that holds its organization.
 *
 * The API sends each statement of a request as it does on one server, but on a cluster wrapped in
 * one call of api.in_organization(organization, statement, arguments), delegated by the
 * organization (force_delegation): Citus sends the call whole to that organization's worker, and
 * every call of the same transaction to the same backend, so begin_request's signed context and
 * every later statement meet in one worker backend, reading and writing local shards. The call is
 * SECURITY INVOKER: the statement runs as the runtime role, with the privileges it has anywhere
 * (nothing more), and Citus refuses any statement in it that touches another organization.
 *
 * The one thing the runtime role cannot do on a worker is read a view: Citus runs a view's shard
 * query as the reader, and the runtime role has no privilege on the tables (citusdata/citus#1683).
 * So each api view has a function of the same name that returns the view's rows for the request's
 * organization, owned by svc_api like the view (the same rows, columns and policies), and on a
 * cluster the API reads `api.tasks()` where one server reads `api.tasks`. */

create function api.in_organization(p_organization_id text, p_statement text, p_arguments text[])
returns setof record
language plpgsql security invoker
as $$
begin
  return query execute p_statement using p_arguments;
end
$$;
comment on function api.in_organization(text, text, text[]) is
  'Runs one statement of a request (its parameters are $1[n]) where its organization''s rows are: on Citus, delegated to that worker. Returns the statement''s rows.';

/** The same for a statement that returns no rows (a write without RETURNING): its row count. */
create function api.in_organization_count(p_organization_id text, p_statement text, p_arguments text[])
returns bigint
language plpgsql security invoker
as $$
declare
  v_count bigint;
begin
  execute p_statement using p_arguments;
  get diagnostics v_count = row_count;
  return v_count;
end
$$;
comment on function api.in_organization_count(text, text, text[]) is
  'Runs one statement of a request that returns no rows (its parameters are $1[n]), where its organization''s rows are; returns its row count.';


-- Granted once distributed, so that Citus sends the grants to the workers too.
do $$
begin
  if exists (select from pg_extension where extname = 'citus') then
    perform create_distributed_function('api.in_organization(text, text, text[])'::regprocedure, '$1',
      colocate_with => 'app.organizations', force_delegation => true);
    perform create_distributed_function('api.in_organization_count(text, text, text[])'::regprocedure, '$1',
      colocate_with => 'app.organizations', force_delegation => true);
  end if;
end
$$;

revoke execute on function api.in_organization(text, text, text[]) from public;
revoke execute on function api.in_organization_count(text, text, text[]) from public;
grant execute on function api.in_organization(text, text, text[]) to svc_runtime;
grant execute on function api.in_organization_count(text, text, text[]) to svc_runtime;

/** A view's query on the shards that hold one organization's rows, for a worker inside a delegated
 * call: each distributed table the view reads becomes the organization's shard, each reference
 * table its local copy, and the query runs as plain PostgreSQL on this node (the same policies,
 * which Citus puts on every shard). Read through Citus, a view's correlated subqueries would be
 * planned for every shard (they name the organization by a column, not a value Citus can prune
 * with), which a delegated call may not reach. */
create function app_private.view_on_shards(p_view regclass, p_organization_id text) returns text
language plpgsql stable
set search_path = pg_catalog
as $$
declare
  v_sql text := rtrim(pg_get_viewdef(p_view), '; ');
  r record;
begin
  for r in
    execute $q$
      select distinct c.oid::regclass::text as name,
             shard_name(c.oid, case when p.partmethod = 'n' then get_shard_id_for_distribution_column(c.oid)
                                    else get_shard_id_for_distribution_column(c.oid, $1) end) as shard
        from pg_depend d
        join pg_rewrite rw on rw.oid = d.objid
        join pg_class c on c.oid = d.refobjid
        join pg_dist_partition p on p.logicalrelid = c.oid
       where d.classid = 'pg_rewrite'::regclass and d.refclassid = 'pg_class'::regclass and rw.ev_class = $2$q$
    using p_organization_id, p_view
  loop
    v_sql := regexp_replace(v_sql, '(^|[^\w."])' || replace(r.name, '.', '\.') || '(?![\w"])', '\1' || r.shard, 'g');
  end loop;
  return v_sql;
end
$$;
revoke execute on function app_private.view_on_shards(regclass, text) from public;
grant execute on function app_private.view_on_shards(regclass, text) to svc_api;

/** Each api view as a function of the same name: the view's rows of the request's organization,
 * or its one row with that id (`api.tasks(p_id)`), which a command reads on a cluster where one
 * server reads the view (migration 20261205000900). */
do $$
declare
  v record;
  v_filter text;
begin
  for v in
    select c.relname as name,
           exists (select from pg_attribute a where a.attrelid = c.oid and a.attname = 'organization_id' and not a.attisdropped) as has_org,
           exists (select from pg_attribute a where a.attrelid = c.oid and a.attname = 'id' and not a.attisdropped) as has_id
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = 'api' and c.relkind = 'v'
     order by c.relname
  loop
    -- The organization's own rows (its policies say so too); the views without the column read
    -- the organization row itself, or global definitions joined to the organization's rows.
    v_filter := case when v.has_org then 'where organization_id = $1'
                     when v.name = 'organization' then 'where id = $1'
                     else 'where true' end
             || case when v.has_id then ' and ($2 is null or id = $2)' else '' end;
    execute format($f$
      create function api.%1$I(%3$s) returns setof api.%1$I
      language plpgsql stable security definer
      set search_path = pg_catalog
      as $body$
      declare
        v_organization_id text := app.current_organization_id();
      begin
        if v_organization_id is null then
          return;
        elsif to_regclass('pg_catalog.pg_dist_partition') is null then
          return query execute 'select * from api.%1$I %2$s' using v_organization_id%4$s;
        else
          return query execute 'select * from (' || app_private.view_on_shards('api.%1$I', v_organization_id) || ') v %2$s'
            using v_organization_id%4$s;
        end if;
      end
      $body$;
      comment on function api.%1$I(%6$s) is 'The rows of view api.%1$I for the request''s organization%5$s (on a cluster, the view''s query on that organization''s shards: see app_private.view_on_shards).';
    $f$, v.name, v_filter,
      case when v.has_id then 'p_id text default null' else '' end,
      case when v.has_id then ', p_id' else '' end,
      case when v.has_id then ', or its row p_id' else '' end,
      case when v.has_id then 'text' else '' end);
    -- A function created inside a DO block is not sent to the workers by itself; its owner and
    -- grants, given once it is distributed, are.
    if exists (select from pg_extension where extname = 'citus') then
      perform create_distributed_function(format('api.%I(%s)', v.name, case when v.has_id then 'text' else '' end)::regprocedure);
    end if;
    execute format('alter function api.%1$I(%2$s) owner to svc_api; revoke execute on function api.%1$I(%2$s) from public;
      grant execute on function api.%1$I(%2$s) to svc_runtime', v.name, case when v.has_id then 'text' else '' end);
  end loop;
  if exists (select from pg_extension where extname = 'citus') then
    perform create_distributed_function('app_private.view_on_shards(regclass, text)'::regprocedure);
  end if;
end
$$;

-- migrate:down
do $$
declare
  v record;
begin
  for v in select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where n.nspname = 'api' and c.relkind = 'v' loop
    execute format('drop function if exists api.%I()', v.name);
    execute format('drop function if exists api.%I(text)', v.name);
  end loop;
end
$$;
drop function app_private.view_on_shards(regclass, text);
drop function api.in_organization_count(text, text, text[]);
drop function api.in_organization(text, text, text[]);
