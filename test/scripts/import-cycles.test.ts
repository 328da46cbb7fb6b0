// No module of src/ imports, through any chain, a module that imports it (scripts/import-cycles.ts):
// in a circle, the order modules happen to load in decides whether an imported value exists yet,
// and no module of it can be read apart from the others.
import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeCycle, importCycles, importGraph } from '../../scripts/import-cycles.ts';
import { REPOSITORY } from '../helpers/repository.ts';

const ROOT = REPOSITORY;

t.test('src/ has no import circle', async (t) => {
  const graph = importGraph(join(ROOT, 'src'));
  // The check reads what it should: every module, and the imports between them.
  t.ok(graph.size > 50, `${graph.size} modules`);
  t.ok(graph.get(join(ROOT, 'src/agents/engine.ts'))?.includes(join(ROOT, 'src/agents/agent.ts')), 'an import is an edge');
  const cycles = importCycles(graph).map((c) => describeCycle(c, ROOT));
  t.same(cycles, [], cycles.length ? `import circles:\n${cycles.join('\n')}` : 'none');
});

t.test('every kind of import closes a circle', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-import-cycles-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const files: Record<string, string> = {
    // a value one way, a type the other: erased at runtime, still a circle
    'a.ts': "import { b } from './b.ts';\nexport const a = b + 1;\n",
    'b.ts': "import type { A } from './nested/types.ts';\nexport const b = 1 as A;\n",
    'nested/types.ts': "import type { a } from '../a.ts';\nexport type A = typeof a;\n",
    // re-export one way, a dynamic import the other, through a .js specifier
    'c.ts': "export * from './d.ts';\n",
    'd.ts': "export const d = () => import('./c.js');\n",
    'self.ts': "export { x as y } from './self.ts';\nexport const x = 1;\n",
    // imports the circles without being part of one
    'outside.ts': "import './a.ts';\nimport './c.ts';\nimport 'node:fs';\n",
  };
  mkdirSync(join(dir, 'nested'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const cycles = importCycles(importGraph(dir)).map((c) => describeCycle(c, dir)).sort();
  t.same(cycles, ['a.ts → b.ts → nested/types.ts → a.ts', 'c.ts → d.ts → c.ts', 'self.ts → self.ts']);
});
