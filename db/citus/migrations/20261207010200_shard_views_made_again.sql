-- migrate:up

/** The workers' copies of the api views made again, behind the gate that names their shard
 * (20261207010100 dropped them). */
call app_private.citus_copy_privileges();

-- migrate:down

select app_private.citus_drop_shard_views();
