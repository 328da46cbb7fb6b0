-- migrate:up

/** The workers' grants and copies of the api views after 20261207100000 changed four functions. */
call app_private.citus_copy_privileges();

-- migrate:down

call app_private.citus_copy_privileges();
