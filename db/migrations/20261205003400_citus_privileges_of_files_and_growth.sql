-- migrate:up

/** Issue 37: on Citus, the functions of 20261205003300 to 20261205003390 (app_private.file_link,
 * the new file_for, the checks for shard groups moved by hand, the generation's definer, the BI
 * relay's) get their privileges on every worker, the relay its grants there, and the workers'
 * copies of api.files are made again (db/README.md: a migration that creates functions or changes
 * views is followed by a call of citus_copy_privileges, here within citus_prepare_workers).
 * Without Citus it does nothing. */
call app_private.citus_prepare_workers();

-- migrate:down
