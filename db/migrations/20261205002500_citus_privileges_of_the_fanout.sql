-- migrate:up

/** Issue 37: on Citus, the function of 20261205002400 gets on every worker the privileges it has on
 * the coordinator (a migration of its own: see 20261205001200). */
call app_private.citus_copy_privileges();

-- migrate:down
