-- migrate:up

/** Issue 37: on Citus, the run functions of 20261205001700 get on every worker the privileges they
 * have on the coordinator (a migration of its own: see 20261205001200). */
call app_private.citus_copy_privileges();

-- migrate:down
