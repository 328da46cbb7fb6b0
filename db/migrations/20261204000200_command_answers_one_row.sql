-- migrate:up

/** Issue 21: a create sent in one round trip stores its response under the Idempotency-Key in the
 * same statement as its command (src/http/operation.ts, sendTogether). A command that answered no
 * row, or more than one, would leave the key claimed with no response (or a response other than
 * the one sent) once the transaction commits; this fails the transaction instead (a 500: our bug). */
create function api.command_answered(p_rows bigint) returns void
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  if p_rows is distinct from 1 then
    perform app_private.raise('SV500', 'COMMAND_ROW_COUNT', format('the command answered %s rows instead of one', p_rows));
  end if;
end
$$;
alter function api.command_answered(bigint) owner to svc_api;
revoke all on function api.command_answered(bigint) from public;
grant execute on function api.command_answered(bigint) to svc_runtime;


-- migrate:down

drop function api.command_answered(bigint);
