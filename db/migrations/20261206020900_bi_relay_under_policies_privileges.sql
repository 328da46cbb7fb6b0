-- migrate:up

/** On Citus, the relay's owner, grants and policy of the previous migration on every worker
 * (outside its transaction, as app_private.citus_copy_privileges needs), and each worker's own
 * objects granted. On one server it does nothing. */
select app_private.citus_node_grants();
call app_private.citus_copy_privileges();

-- migrate:down
