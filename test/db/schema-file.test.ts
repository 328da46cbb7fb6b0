// db/schema.sql is the schema the migrations make: a reviewer reads it first, so it must not be stale.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { CITUS_WORKERS, oneServer } from '../helpers/database.ts';
import { SCHEMA_FILE, comparable, freshSchema, schemaDumpUnavailable } from '../../scripts/schema-file.ts';

const SERVER = process.env.SVC_TEST_SERVER_URL!;
const why = CITUS_WORKERS.length ? false : await schemaDumpUnavailable(SERVER);

t.test('db/schema.sql is what migrating a new database dumps', { ...oneServer('db/schema.sql is one server\'s schema'),
  ...(why ? { skip: why } : {}) }, async (t) => {
  const fresh = comparable(await freshSchema(SERVER, `svc_t_${process.env.SVC_TEST_RUN}_schema_file`));
  const committed = comparable(readFileSync(SCHEMA_FILE, 'utf8'));
  if (fresh === committed) return t.pass('equal');
  // The first lines that differ, so the failure says where; `make schema` rewrites the file.
  const a = committed.split('\n'), b = fresh.split('\n');
  const at = a.findIndex((line, i) => line !== b[i]);
  t.fail(`db/schema.sql is stale from line ${at + 1} (run DATABASE_URL=<PostgreSQL 15> make schema)`, {
    committed: a.slice(at, at + 8).join('\n'), migrated: b.slice(at, at + 8).join('\n'),
  });
});
