-- migrate:up

/** On Citus, the previous migration's functions on every worker with their privileges (outside that
 * migration's transaction, as app_private.citus_copy_privileges needs). */
call app_private.citus_copy_privileges();

-- migrate:down
