-- migrate:up

/** Shrinking a Citus cluster without a superuser's running code of ours: a superuser marks the node
 * to hold no shard group (call svc_bootstrap.remove_node(host, port), db/citus/bootstrap.sql), the
 * deploy login moves its groups off with this procedure (the cluster bootstrap's rebalance, which
 * runs as svc_mover and moves groups off a node marked so), and the superuser calls remove_node
 * again. On one server it refuses. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

create procedure app_private.citus_drain_worker(in p_host text, in p_port integer)
    language plpgsql
    as $$
begin
  if not exists (select from pg_catalog.pg_extension where extname = 'citus') then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', 'this database has no citus extension: there is no cluster to shrink');
  end if;
  -- Citus changes a node's properties only for a superuser: the cluster's bootstrap does it.
  if not exists (select from pg_catalog.pg_dist_node where nodename = p_host and nodeport = p_port and groupid <> 0 and not shouldhaveshards) then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', format('%s:%s is not a worker marked to hold no shard group: a superuser marks it first (call svc_bootstrap.remove_node(%L, %s))', p_host, p_port, p_host, p_port));
  end if;
  -- A rebalance still running (this call run again after its wait was cut short) is waited for,
  -- not started twice (Citus refuses that).
  if not exists (select from pg_catalog.pg_dist_background_job where state in ('scheduled', 'running', 'cancelling', 'failing')) then
    -- The rebalancer moves every group off a node marked to hold none, copying rows as svc_mover.
    perform svc_bootstrap.rebalance_start('block_writes');
  end if;
  commit;
  perform pg_catalog.citus_rebalance_wait();
  commit;
  -- The moved shard groups: copies on the nodes that now hold them.
  call app_private.citus_prepare_workers();
  commit;
  -- The rebalance waited for may have been another's, started before the node was marked.
  if exists (select from pg_catalog.pg_dist_placement p join pg_catalog.pg_dist_node n on n.groupid = p.groupid
               join pg_catalog.pg_dist_shard s on s.shardid = p.shardid
              where n.nodename = p_host and n.nodeport = p_port and s.logicalrelid = 'app.organizations'::regclass) then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', format('%s:%s still holds shard groups: call this again', p_host, p_port));
  end if;
end
$$;

revoke all on procedure app_private.citus_drain_worker(in p_host text, in p_port integer) from public;

comment on procedure app_private.citus_drain_worker(in p_host text, in p_port integer) is 'On Citus: moves every shard group off a worker a superuser marked to hold none (call svc_bootstrap.remove_node(host, port), db/citus/bootstrap.sql), by a rebalance that blocks a moving group''s writes while it is copied, and prepares the nodes that now hold them; the superuser then removes the node with the same call. The deploy login calls it: a superuser runs no code that a role of the service may change.';

-- migrate:down

drop procedure app_private.citus_drain_worker(in p_host text, in p_port integer);
