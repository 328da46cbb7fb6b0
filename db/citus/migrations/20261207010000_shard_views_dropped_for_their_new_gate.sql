-- migrate:up

/** The workers' copies of the api views go before their gate is replaced (20261207010100 drops the
 * function each copy calls); 20261207010200 makes them again. Meanwhile a list reads through the
 * view functions. */
select app_private.citus_drop_shard_views();

-- migrate:down

call app_private.citus_copy_privileges();
