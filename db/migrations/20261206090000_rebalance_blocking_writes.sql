-- migrate:up

/** Growing the cluster moves shard groups by copying them while their writes wait (block_writes),
 * the one transfer that works under forced row security: a logical move's subscription applies its
 * changes as a role Citus makes, a member of the tables' owner that does not bypass row security,
 * and PostgreSQL refuses to replicate into a table whose row security applies to it; the rebalance
 * retried it without end. Another mode is refused before anything starts. The rebalance is the
 * cluster bootstrap's svc_bootstrap.rebalance_start, which runs as svc_mover. On one server this
 * procedure refuses as before. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

create or replace procedure app_private.citus_add_worker(in p_host text, in p_port integer, in p_shard_transfer_mode text default 'block_writes'::text)
    language plpgsql
    as $$
begin
  if not exists (select from pg_catalog.pg_extension where extname = 'citus') then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', 'this database has no citus extension: there is no cluster to grow');
  end if;
  if p_shard_transfer_mode is distinct from 'block_writes' then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', format('shard transfer mode %s: the tables force row security, so a shard group moves only by block_writes (a logical move''s subscription may not write into them)', coalesce(p_shard_transfer_mode, 'null')));
  end if;
  -- Citus adds a node only for a superuser, who runs no code of ours: the cluster's bootstrap does it.
  if not exists (select from pg_catalog.pg_dist_node where nodename = p_host and nodeport = p_port and isactive) then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', format('%s:%s is not an active node of the cluster: a superuser adds it first (call svc_bootstrap.add_node(%L, %s))', p_host, p_port, p_host, p_port));
  end if;
  call app_private.citus_prepare_workers();
  commit;
  -- A rebalance still running (this call run again after its wait was cut short) is waited for,
  -- not started twice (Citus refuses that).
  if not exists (select from pg_catalog.pg_dist_background_job where state in ('scheduled', 'running', 'cancelling', 'failing')) then
    -- The rebalancer copies rows as the role that starts it: svc_mover, in the cluster bootstrap's
    -- function (under forced row security the deploy login would copy none).
    perform svc_bootstrap.rebalance_start(p_shard_transfer_mode);
  end if;
  commit;
  perform pg_catalog.citus_rebalance_wait();
  commit;
  -- The moved shard groups: copies on the nodes that now hold them, none where they left.
  call app_private.citus_prepare_workers();
end
$$;

comment on procedure app_private.citus_add_worker(in p_host text, in p_port integer, in p_shard_transfer_mode text) is 'On Citus: prepares a worker a superuser added (call svc_bootstrap.add_node(host, port), db/citus/bootstrap.sql), rebalances the shard groups onto it (block_writes: a moved group''s writes wait while it is copied) and prepares the nodes that now hold them. The deploy login calls it: a superuser runs no code that a role of the service may change.';

-- migrate:down

create or replace procedure app_private.citus_add_worker(in p_host text, in p_port integer, in p_shard_transfer_mode text default 'auto'::text)
    language plpgsql
    as $$
begin
  if not exists (select from pg_catalog.pg_extension where extname = 'citus') then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', 'this database has no citus extension: there is no cluster to grow');
  end if;
  -- Citus adds a node only for a superuser, who runs no code of ours: the cluster's bootstrap does it.
  if not exists (select from pg_catalog.pg_dist_node where nodename = p_host and nodeport = p_port and isactive) then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', format('%s:%s is not an active node of the cluster: a superuser adds it first (call svc_bootstrap.add_node(%L, %s))', p_host, p_port, p_host, p_port));
  end if;
  call app_private.citus_prepare_workers();
  commit;
  -- A rebalance still running (this call run again after its wait was cut short) is waited for,
  -- not started twice (Citus refuses that).
  if not exists (select from pg_catalog.pg_dist_background_job where state in ('scheduled', 'running', 'cancelling', 'failing')) then
    -- Started by the cluster bootstrap's function: the rebalancer moves rows as the role that starts
    -- it, and under forced row security the deploy login's would move none.
    perform svc_bootstrap.rebalance_start(p_shard_transfer_mode);
  end if;
  commit;
  perform pg_catalog.citus_rebalance_wait();
  commit;
  -- The moved shard groups: copies on the nodes that now hold them, none where they left.
  call app_private.citus_prepare_workers();
end
$$;

comment on procedure app_private.citus_add_worker(in p_host text, in p_port integer, in p_shard_transfer_mode text) is 'On Citus: prepares a worker a superuser added (call svc_bootstrap.add_node(host, port), db/citus/bootstrap.sql), rebalances the shard groups onto it and prepares the nodes that now hold them. The deploy login calls it: a superuser runs no code that a role of the service may change.';
