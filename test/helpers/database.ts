// A database of a test's own, cloned from the template `make test` migrated, with nothing of the
// server loaded: the files that only need a database import this, not app.ts (whose server, routes
// and contract checker cost about 0.9 CPU-s to load in each test process).
import type { Test } from 'tap';
import postgres from 'postgres';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config.ts';
import { withDatabase } from '../../scripts/db.ts';
import { dropDatabase } from '../../scripts/citus.ts';

const SERVER = process.env.SVC_TEST_SERVER_URL;
const TEMPLATE = process.env.SVC_TEST_TEMPLATE;
const RUN = process.env.SVC_TEST_RUN ?? String(process.ppid);
/** Under `make test-citus`: the workers' servers. Each test database is cloned from the template
 * on every node (Citus reaches a database of the same name on each worker). */
export const CITUS_WORKERS: string[] = JSON.parse(process.env.SVC_TEST_CITUS_WORKERS ?? '[]');
/** Options of a subtest about one server: on a cluster it skips, saying why (docs/scaling.md lists them). */
export const oneServer = (why: string): { skip: string | false } =>
  ({ skip: CITUS_WORKERS.length > 0 && `one server only: ${why}` });

export async function createTestDatabase(t: Test): Promise<{ adminUrl: string; runtimeUrl: string; name: string }> {
  if (!SERVER || !TEMPLATE) throw new Error('run the tests with `make test` (it prepares the template database)');
  const name = `svc_t_${RUN}_${randomBytes(6).toString('hex')}`;
  const servers = [SERVER, ...CITUS_WORKERS];
  for (const server of servers) {
    const root = postgres(server, { max: 1, onnotice: () => {} });
    // Owned by svc_schema, as scripts/db.ts makes a service's database: its DDL (a cluster's copies of
    // the api views on the workers) needs to create schemas there.
    await root.unsafe(`create database ${name} template ${TEMPLATE} owner svc_schema`);
    await root.end();
  }
  t.teardown(async () => {
    for (const server of servers) await dropDatabase(server, name);
  });
  const adminUrl = withDatabase(SERVER, name);
  const config = loadConfig({ ...process.env, DATABASE_URL: adminUrl });
  return { adminUrl, runtimeUrl: config.runtimeDatabaseUrl, name };
}
