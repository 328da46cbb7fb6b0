-- migrate:up

/** The status page's two policies hold for svc_status itself, not for the roles that are members of
 * it. svc_schema is one (it hands svc_status its function), and a shard move validates the moved
 * tables' foreign keys as svc_schema, the tables' owner, under their forced row security: it saw the
 * events waiting for their fan-out and not their organizations, and refused the move while the API
 * wrote ("Key is not present in table organizations_102019"). A policy written for a role applies
 * to its members too; these two read no organization, so they name the role. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

alter policy "The service status sees deliveries waiting" on app.webhook_deliveries
  using (status = 'pending' and current_user = 'svc_status');
alter policy "The service status sees events waiting for their fan-out" on app.events
  using (fanout_pending and current_user = 'svc_status');

-- migrate:down

alter policy "The service status sees deliveries waiting" on app.webhook_deliveries
  using (status = 'pending');
alter policy "The service status sees events waiting for their fan-out" on app.events
  using (fanout_pending);
