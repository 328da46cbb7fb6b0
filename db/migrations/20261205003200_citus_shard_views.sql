-- migrate:up

/** Issue 37: the shard views of 20261205003100 made on every worker (a migration after the one
 * that creates their functions: run_command_on_placements reaches the workers over connections of
 * their own, which see only what is committed), with the new functions' privileges copied. Without
 * Citus it does nothing. */
call app_private.citus_copy_privileges();

-- migrate:down
