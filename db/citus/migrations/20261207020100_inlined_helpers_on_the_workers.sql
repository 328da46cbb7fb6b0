-- migrate:up

/** The workers' grants and copies of the api views after 20261207020000 changed two functions they call. */
call app_private.citus_copy_privileges();

-- migrate:down

call app_private.citus_copy_privileges();
