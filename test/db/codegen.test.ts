// Guard: src/db/schema.ts (Kysely types) matches the migrated database (`make codegen` fixes it).
import t from 'tap';
import { createTestDatabase } from '../helpers/database.ts';
import { runCodegen } from '../../scripts/codegen.ts';

t.test('generated Kysely types are fresh', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const r = runCodegen(adminUrl, true);
  t.ok(r.ok, r.ok ? 'src/db/schema.ts is up to date' : `stale: run make codegen\n${r.output}`);
});
