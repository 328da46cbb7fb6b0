-- migrate:up

/** The cluster's baseline, 3 of 3: each worker prepared. This folder's migrations run on a Citus
 * coordinator only, in one chain with db/migrations in version order (scripts/db.ts), after the
 * cluster's bootstrap (db/citus/bootstrap.sql) and as the deploy login; they replaced the cluster's
 * first baseline (20261206061400 to 20261206070100), which a superuser ran, and a database that ran
 * that one has their versions recorded instead (scripts/db.ts). */
set local check_function_bodies = false;
set local client_min_messages = warning;
set local search_path = '';

/** Every worker given what is its own, over connections of their own that see what the migrations
 * before committed: a context key, the column grants of the shards, the privileges of our functions
 * and views, the relay's grants, and the copies of the api views for each shard group.
 * app_private.citus_add_worker runs the same for a node added later (twice, around the rebalance). */
call app_private.citus_prepare_workers();
-- The nodes' own grants again: the sequence of the api views' copies (its generation) exists on
-- each worker only now, and the relay reads it.
select app_private.citus_node_grants();

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
