-- migrate:up

/** Files (issue 39): an upload's chunks arrive as bytea parameters in binary format (the server
 * sends the bytes as they are). The text[] form took base64 text: a string a third larger than the
 * chunk in the server's heap, held until the statement answered, so eight concurrent uploads
 * promoted ~90 MiB of garbage to the old generation before each full collection. The text[] form
 * stays for the servers of the previous release during a rolling deploy; a later release drops it. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

create function api.file_upload_chunks(p_upload_id text, p_first_seq integer, variadic p_data bytea[]) returns void
  language plpgsql security definer
  set search_path to 'pg_catalog', 'pg_temp'
  as $$
#variable_conflict use_column
declare
  v__organization_id text := app.current_organization_id();
begin
  insert into app.file_chunks (organization_id, upload_id, seq, data)
  select v__organization_id, p_upload_id, p_first_seq + (d.n - 1)::integer, d.data
    from unnest(p_data) with ordinality d (data, n);
end
$$;

alter function api.file_upload_chunks(text, integer, bytea[]) owner to svc_api;

-- On Citus, on every node like the functions before it (created before its grants: Citus sends the
-- grants of a function it knows).
do $$
begin
  if not exists (select from pg_catalog.pg_extension where extname = 'citus') then
    return;
  end if;
  -- Citus may have propagated it at its creation already.
  if not exists (select from pg_dist_object o where o.classid = 'pg_proc'::regclass
                  and o.objid = 'api.file_upload_chunks(text,integer,bytea[])'::regprocedure) then
    perform create_distributed_function('api.file_upload_chunks(text,integer,bytea[])'::regprocedure);
  end if;
end
$$;

revoke all on function api.file_upload_chunks(text, integer, bytea[]) from public;
grant execute on function api.file_upload_chunks(text, integer, bytea[]) to svc_runtime;

-- migrate:down
drop function api.file_upload_chunks(text, integer, bytea[]);
