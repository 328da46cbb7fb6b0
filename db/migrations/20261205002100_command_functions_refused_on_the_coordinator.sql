-- migrate:up

/** Issue 37: functions that run as the migrations' role (security definer) and read tenant rows
 * run only where those rows are, inside a call delegated to the organization's worker.
 *
 * In a request they always do (src/db/cluster.ts sends every statement in api.in_organization). The
 * runtime role could still call them on a Citus coordinator directly, where they would read the
 * distributed tables through Citus as that role: each now refuses to run there (SV500
 * NOT_IN_ITS_WORKER: no request reaches it, so a direct call is the only way to see it). On one server and on a worker the check is one catalog lookup. */

create function app_private.refuse_on_coordinator(p_function text) returns void
language plpgsql stable
set search_path = pg_catalog
as $$
begin
  if to_regproc('pg_catalog.citus_is_coordinator') is null then
    return;
  end if;
  -- A statement of its own: citus_is_coordinator exists only where Citus is installed.
  if citus_is_coordinator() then
    perform app_private.raise('SV500', 'NOT_IN_ITS_WORKER',
      format('%s runs only in its organization''s worker, in a call delegated to it', p_function));
  end if;
end
$$;
revoke execute on function app_private.refuse_on_coordinator(text) from public;

do $$
declare
  f regprocedure;
  v_def text;
begin
  foreach f in array array[
    'api.approval_exists(text)', 'api.file_download_begin(text)', 'api.file_upload_begin(text)',
    'api.integration_connection_hidden_reason(text)', 'api.integration_readiness(text)', 'api.invoice_attach_pdf(text,text,bytea)',
    'api.invoice_send(text,boolean)', 'api.invoice_void(text)', 'api.report_download_begin(text)', 'api.ticket_search_ids(text)',
    'api.webhook_delivery_replay(text,text)', 'api.webhook_endpoint_test(text)']::regprocedure[] loop
    v_def := pg_get_functiondef(f);
    if v_def !~ '\nbegin\n' then
      perform app_private.raise('SV500', 'FUNCTION_NOT_REWRITTEN', format('no body to guard in %s', f));
    end if;
    execute regexp_replace(v_def, '\nbegin\n', format(E'\nbegin\n  perform app_private.refuse_on_coordinator(%L);\n', f::text));
  end loop;
  if exists (select from pg_extension where extname = 'citus') then
    perform create_distributed_function('app_private.refuse_on_coordinator(text)'::regprocedure);
  end if;
end
$$;

-- migrate:down
