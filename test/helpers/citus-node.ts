// A node for the test cluster, made as a DBA makes one (db/README.md, "Growing the cluster"): its own
// server with the roles (db/bootstrap.sql), the test database given to svc_schema, and the citus
// extension; then added by a superuser with the cluster bootstrap's svc_bootstrap.add_node.
import type { Test } from 'tap';
import postgres from 'postgres';
import { CITUS_WORKERS } from './database.ts';
import { oneConnection } from './sql.ts';
import { editDatabaseUrl } from '../../src/db/url.ts';
import { prepareNewNode, startCitusNode } from '../../scripts/citus.ts';

export interface ClusterNode { host: string; port: number; database: postgres.Sql }

/** A new worker for the cluster of `adminUrl` (a superuser's URL of its coordinator), on the port
 * `offset` above the highest worker's (each test file that adds one takes its own offset). Not yet
 * added: `add` runs svc_bootstrap.add_node as the superuser. Stopped at the test's end. */
export async function newClusterNode(t: Test, adminUrl: string, offset: number): Promise<ClusterNode & { add: () => Promise<void> }> {
  const database = new URL(adminUrl).pathname.slice(1);
  const port = Math.max(...CITUS_WORKERS.map((w) => Number(new URL(w).port))) + offset;
  const node = await startCitusNode(`citus-added-${process.pid}-${offset}`, port);
  t.teardown(() => node.stop());
  // Citus records the database as a distributed object by its oid, which a clone keeps: a test
  // database names the template it was cloned from, and the node's activation alters that
  // database by name. A deployment's database was not cloned from another.
  const admin = postgres(adminUrl, oneConnection);
  const named = await admin<{ name: string }[]>`select d.datname::text as name from pg_dist_object o join pg_database d on d.oid = o.objid
     where o.classid = 'pg_database'::regclass`.finally(() => admin.end());
  await prepareNewNode(node.url, [database, ...named.map((r) => r.name)]);
  const sql = postgres(editDatabaseUrl(node.url, { database }), oneConnection);
  t.teardown(() => sql.end());
  return {
    host: '127.0.0.1', port, database: sql,
    add: async () => {
      const coordinator = postgres(adminUrl, oneConnection);
      try {
        await coordinator.unsafe(`call svc_bootstrap.add_node('127.0.0.1', ${port})`);
      } finally {
        await coordinator.end();
      }
    },
  };
}

/** The deploy login's connection to the coordinator of `adminUrl`. */
export const deployLogin = (adminUrl: string): postgres.Sql =>
  postgres(editDatabaseUrl(adminUrl, { username: 'svc_deploy', password: process.env.SVC_DEPLOY_DB_PASSWORD ?? 'svc_deploy' }), oneConnection);
