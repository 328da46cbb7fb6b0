// db/citus/schema-coordinator.sql and schema-worker.sql are what the migrations make on a Citus
// cluster (the policies' and functions' texts there, the cluster's own objects): a reviewer reads
// them beside db/schema.sql, so they must not be stale. Runs under `make test-citus`; elsewhere it
// skips. `make schema-citus` rewrites them.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { CITUS_WORKERS } from '../helpers/database.ts';
import { CITUS_SCHEMA_FILES, firstDifference, freshCitusSchemas } from '../../scripts/schema-file.ts';

if (CITUS_WORKERS.length === 0) {
  t.plan(0, 'runs on a Citus cluster: make test-citus');
} else {
  t.test('the cluster\'s dumps are what migrating a new database there makes', async (t) => {
    const fresh = await freshCitusSchemas({ coordinator: process.env.SVC_TEST_SERVER_URL!, workers: CITUS_WORKERS },
      `svc_t_${process.env.SVC_TEST_RUN}_citus_schema`);
    for (const node of ['coordinator', 'worker'] as const) {
      const diff = firstDifference(readFileSync(CITUS_SCHEMA_FILES[node], 'utf8'), fresh[node]);
      if (diff) t.fail(`${CITUS_SCHEMA_FILES[node]} is stale from line ${diff.line} (run make schema-citus)`, diff);
      else t.pass(`the ${node}'s dump is current`);
    }
  });
}
