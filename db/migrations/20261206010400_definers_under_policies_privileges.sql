-- migrate:up

/** On Citus, the owners and grants of migrations 20261206010200 to 010350 on every worker (outside their
 * transactions, as app_private.citus_copy_privileges needs: it reaches the workers over
 * connections that see only what is committed), the workers' own objects granted, and the shard
 * views made again with them. On one server it does nothing. */
select app_private.citus_node_grants();
call app_private.citus_copy_privileges();

-- migrate:down
