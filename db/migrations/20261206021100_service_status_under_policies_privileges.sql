-- migrate:up

/** On Citus, the owner, grants and policies of the previous migration on every worker (outside its
 * transaction, as app_private.citus_copy_privileges needs). On one server it does nothing. */
call app_private.citus_copy_privileges();

-- migrate:down
