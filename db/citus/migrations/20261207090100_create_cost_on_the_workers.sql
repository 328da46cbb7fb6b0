-- migrate:up

/** The workers' grants and copies of the api views after 20261207090000 changed the context
 * accessors and the Idempotency-Key functions. */
call app_private.citus_copy_privileges();

-- migrate:down

call app_private.citus_copy_privileges();
