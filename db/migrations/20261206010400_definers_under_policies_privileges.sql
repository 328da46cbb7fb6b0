-- migrate:up

/** On Citus, the two previous migrations' owners and grants on every worker (outside their
 * transactions, as app_private.citus_copy_privileges needs), and the shard views made again with
 * them. On one server it does nothing. */
call app_private.citus_copy_privileges();

-- migrate:down
