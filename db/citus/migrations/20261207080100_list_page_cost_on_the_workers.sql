-- migrate:up

/** The workers' grants and copies of the api views after 20261207080000 changed api.tasks. */
call app_private.citus_copy_privileges();

-- migrate:down

call app_private.citus_copy_privileges();
