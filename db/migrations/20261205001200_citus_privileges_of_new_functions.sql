-- migrate:up

/** Issue 37: on Citus, the functions created by 20261205000700 to 20261205001100 get on every
 * worker the privileges they have on the coordinator (app_private.citus_copy_privileges, from
 * 20261205000600). It runs in a migration of its own: it reaches the workers outside the
 * migration's transaction, where objects created in that transaction do not exist yet. A
 * migration that creates functions is followed by one that calls it (db/README.md);
 * test/citus/placement.test.ts compares the privileges of every function and view on every node. */
call app_private.citus_copy_privileges();

-- migrate:down
