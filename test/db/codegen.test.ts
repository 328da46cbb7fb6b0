// Guard: src/db/schema.ts and src/db/functions.ts (the api views' and functions' types) match the migrated database (`make codegen` fixes it).
import t from 'tap';
import { createTestDatabase } from '../helpers/database.ts';
import { runCodegen } from '../../scripts/codegen.ts';

t.test('generated Kysely types are fresh', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const r = await runCodegen(adminUrl, true);
  t.ok(r.ok, r.ok ? 'src/db/schema.ts and src/db/functions.ts are up to date' : `stale: run make codegen\n${r.output}`);
});
