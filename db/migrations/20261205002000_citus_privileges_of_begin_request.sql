-- migrate:up

/** Issue 37: on Citus, api.begin_request as redefined by 20261205001900 gets on every worker the
 * privileges it has on the coordinator (a migration of its own: see 20261205001200). */
call app_private.citus_copy_privileges();

-- migrate:down
