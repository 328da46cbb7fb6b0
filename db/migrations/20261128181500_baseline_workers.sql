-- migrate:up

/** Baseline (issue 38), area 15 of 15. On Citus, every worker given what is its own, over
 * connections of their own that see what the migrations before committed: a context key, the
 * column grants of the shards, the privileges of our functions and views, the relay's grants, and
 * the copies of the api views. On one server it does nothing.
 * The current definitions that migrations 20261122000100 to 20261205003400 built (git history before
 * the baseline); db/README.md says how they were made and compared. */
call app_private.citus_prepare_workers();

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
