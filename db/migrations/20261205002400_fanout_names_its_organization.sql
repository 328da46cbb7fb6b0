-- migrate:up

/** Issue 37: no delegated function is called with a null organization.
 *
 * Citus 13.2.2 crashes the coordinator (signal 11, every session reset) when a function delegated
 * by its argument gets NULL there and returns a set: it hashes the missing value to find the shard
 * (citusdata/citus#7242; `select * from api.begin_request(null, …)` as the runtime role does it).
 * No check in a function's body runs before that, so no caller of ours may pass one: the worker's
 * claim of any organization's events, which it made as webhook_fanout_batch(null, …) on one
 * server, is a function of its own. (webhook_fanout_batch keeps answering a null organization on
 * one server, as it did: a worker of the previous release still calls it so during a deploy.) */

/** Up to p_limit pending events of any organization, oldest first, that no other worker holds
 * (skip locked), fanned out in one transaction, as webhook_fanout_batch does for one organization.
 * One server only: on Citus rows of several shards cannot be locked in one statement (Citus refuses
 * it), and the worker asks webhook_fanout_organizations instead. */
create function app_private.webhook_fanout_any(p_limit integer, p_lease_seconds integer)
returns table(delivery_id text, attempt integer, url text, secret_sealed text, previous_secret_sealed text, event_id text,
              organization_id text, type text, resource_type text, resource_id text, resource_version integer, created_at timestamptz)
language plpgsql
set search_path = pg_catalog
as $$
#variable_conflict use_column
declare
  e app.events;
begin
  for e in select * from app.events x where x.fanout_pending order by x.created_at
            limit greatest(1, least(p_limit, 500)) for update skip locked loop
    return query select * from app_private.webhook_fanout_event(e, p_lease_seconds);
    if not found then
      delivery_id := null; attempt := null; url := null; secret_sealed := null; previous_secret_sealed := null;
      event_id := e.id; organization_id := e.organization_id; type := e.type; resource_type := e.resource_type;
      resource_id := e.resource_id; resource_version := e.resource_version; created_at := e.created_at;
      return next;
    end if;
  end loop;
end
$$;
revoke execute on function app_private.webhook_fanout_any(integer, integer) from public;

do $$
begin
  if exists (select from pg_extension where extname = 'citus') then
    perform create_distributed_function('app_private.webhook_fanout_any(integer, integer)'::regprocedure);
  end if;
end
$$;

-- migrate:down
drop function app_private.webhook_fanout_any(integer, integer);
