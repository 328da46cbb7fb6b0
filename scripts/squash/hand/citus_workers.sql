/** Every worker given what is its own, over connections of their own that see what the migrations
 * before committed: a context key, the column grants of the shards, the privileges of our functions
 * and views, the relay's grants, the settings of the service's logins there, and the copies of the
 * api views for each shard group. app_private.citus_add_worker runs the same for a node added later
 * (twice, around the rebalance). */
call app_private.citus_prepare_workers();
-- The nodes' own grants again: the sequence of the api views' copies (its generation) exists on
-- each worker only now, and the relay reads it.
select app_private.citus_node_grants();
