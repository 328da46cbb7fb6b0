-- migrate:up

/** Operator surfaces: what /ready and /metrics ask the database. Numbers only, no tenant data,
 * so the runtime role may call them without a request context. */
create function api.service_schema_version() returns text
language sql stable security definer
set search_path = pg_catalog
as $$ select max(version)::text from public.schema_migrations $$;
grant execute on function api.service_schema_version() to svc_runtime;

/** The outbox's backlog: events not yet fanned out, and deliveries whose attempt is due but not
 * made (a retry scheduled for later is not lag). Both use partial indexes. */
create function api.service_outbox_status(
  out oldest_pending_event_seconds double precision,
  out deliveries_pending bigint,
  out oldest_due_delivery_seconds double precision)
language sql stable security definer
set search_path = pg_catalog
as $$
  select coalesce(extract(epoch from now() - (select min(e.created_at) from app.events e where e.fanout_pending)), 0)::float8,
         (select count(*) from app.webhook_deliveries d where d.status = 'pending'),
         coalesce(extract(epoch from now() - (select min(d.next_attempt_at) from app.webhook_deliveries d
                                              where d.status = 'pending' and d.next_attempt_at <= now())), 0)::float8
$$;
grant execute on function api.service_outbox_status() to svc_runtime;

create index webhook_deliveries_pending_due on app.webhook_deliveries (next_attempt_at) where status = 'pending';

-- migrate:down
drop index app.webhook_deliveries_pending_due;
drop function api.service_outbox_status();
drop function api.service_schema_version();
