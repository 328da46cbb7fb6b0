-- migrate:up

/** Issue 37: on Citus, the functions of 20261205003300 to 20261205003380 (app_private.file_link,
 * the new file_for, the checks for shard groups moved by hand, the generation's definer) get their
 * privileges on every worker, and the workers' copies of api.files are made again (db/README.md: a
 * migration that creates functions or changes views is followed by this call).
 * Without Citus it does nothing. */
call app_private.citus_copy_privileges();

-- migrate:down
