-- migrate:up

/** The workers' grants and copies of the api views after 20261207110000 dropped a function and changed the claim. */
call app_private.citus_copy_privileges();

-- migrate:down

call app_private.citus_copy_privileges();
