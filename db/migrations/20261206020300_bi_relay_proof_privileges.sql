-- migrate:up

/** On Citus, the relay's functions of the previous migration with their privileges on every worker
 * (outside its transaction, as app_private.citus_copy_privileges needs). On one server it does nothing. */
call app_private.citus_copy_privileges();

-- migrate:down
