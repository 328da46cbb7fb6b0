-- migrate:up

/** Issue 37: on Citus, app_private.file_link and the new app_private.file_for (20261205003300)
 * get their privileges on every worker, and the workers' copies of api.files are made again
 * (db/README.md: a migration that creates functions or changes views is followed by this call).
 * Without Citus it does nothing. */
call app_private.citus_copy_privileges();

-- migrate:down
