// The request path's queries are typed from the catalog (src/db/schema.ts for the api views,
// src/db/functions.ts for the api functions, both written by `make codegen`): in a copy of src/
// whose generated types say that a view column was renamed and that a function takes one more
// argument, the type check fails where the code uses them.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPOSITORY } from '../helpers/repository.ts';

function edit(file: string, from: RegExp, to: string): void {
  const text = readFileSync(file, 'utf8');
  if (!from.test(text)) throw new Error(`${file}: ${from} not found`);
  writeFileSync(file, text.replace(from, to));
}

t.test('make typecheck fails on a renamed view column and on a changed function signature', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-typed-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(join(REPOSITORY, 'src'), join(dir, 'src'), { recursive: true });
  symlinkSync(join(REPOSITORY, 'node_modules'), join(dir, 'node_modules'));
  cpSync(join(REPOSITORY, 'package.json'), join(dir, 'package.json'));
  const { compilerOptions } = JSON.parse(readFileSync(join(REPOSITORY, 'tsconfig.json'), 'utf8'));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['src'] }));

  // api.tasks.project_id renamed, as kysely-codegen would write it after such a migration.
  edit(join(dir, 'src/db/schema.ts'), /(export interface ApiTasks \{[^}]*?)\bproject_id:/, '$1project_ref:');
  // api.task_create given a third argument, as the generator would write it.
  edit(join(dir, 'src/db/functions.ts'), /(task_create: \{ args: \[)/, '$1p_new: Arg<string>, ');

  const tsc = spawnSync(process.execPath, [join(REPOSITORY, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', dir],
    { cwd: dir, encoding: 'utf8' });
  const errors = tsc.stdout.split('\n').filter((l) => /error TS/.test(l));
  t.not(tsc.status, 0, 'the type check fails');
  t.ok(errors.some((l) => l.startsWith('src/routes/tasks.ts') && /project_id/.test(l)),
    `the list's filter on the renamed column is an error:\n${errors.join('\n')}`);
  t.ok(errors.some((l) => l.startsWith('src/routes/tasks.ts') && /task_create|Expected \d+ arguments|not assignable/.test(l)),
    `the create's call with the old arguments is an error:\n${errors.join('\n')}`);
  t.ok(errors.every((l) => l.startsWith('src/routes/tasks.ts')), `and nothing else:\n${errors.join('\n')}`);
});
