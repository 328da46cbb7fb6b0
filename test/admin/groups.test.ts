// svc-admin's table of commands is assembled from one module per group (src/admin/): a group
// module left out of cli.ts would be left out of every test that walks COMMANDS, so this one
// walks the files. And the order help lists groups in is cli.ts's to keep.
import t from 'tap';
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { run, COMMANDS, GROUPS } from '../../src/admin/cli.ts';
import type { CommandGroup } from '../../src/admin/command.ts';

const ADMIN = fileURLToPath(new URL('../../src/admin/', import.meta.url));
// Its modules as this file is run: .ts under tsx, .js compiled (scripts/tap.ts).
const EXTENSION = import.meta.url.slice(import.meta.url.lastIndexOf('.'));

const isGroup = (v: unknown): v is CommandGroup =>
  typeof v === 'object' && v !== null && typeof (v as CommandGroup).name === 'string'
  && typeof (v as CommandGroup).summary === 'string' && typeof (v as CommandGroup).commands === 'object';

t.test('every group module in src/admin is dispatched, each command under its group\'s name', async (t) => {
  const found: CommandGroup[] = [];
  for (const file of readdirSync(ADMIN).filter((f) => f.endsWith(EXTENSION) && !f.endsWith('.d.ts')).sort()) {
    const exported = Object.values(await import(pathToFileURL(ADMIN + file).href) as Record<string, unknown>);
    found.push(...exported.filter(isGroup));
  }
  t.ok(found.length > 1, 'group modules found');
  t.same(found.map((g) => g.name).sort(), Object.keys(GROUPS).sort(), 'one group module per group, and no other groups');
  for (const group of found) {
    t.equal(GROUPS[group.name], group.summary, `${group.name}: its summary`);
    t.ok(Object.keys(group.commands).length > 0, `${group.name}: has commands`);
    for (const [command, spec] of Object.entries(group.commands)) {
      t.equal(COMMANDS[`${group.name} ${command}`], spec, `svc-admin ${group.name} ${command}`);
    }
  }
  t.equal(Object.keys(COMMANDS).length, found.reduce((n, g) => n + Object.keys(g.commands).length, 0), 'no command from elsewhere');
});

t.test('svc-admin --help lists every command once, the groups in their fixed order', async (t) => {
  const { code, text } = await run(['--help'], '');
  t.equal(code, 0);
  const lines = text!.split('\n');
  const listed = lines.slice(lines.indexOf('Commands:') + 1, lines.indexOf('', lines.indexOf('Commands:')))
    .map((l) => l.trim().split(/\s+/).slice(0, 2).join(' '));
  t.same(listed, Object.keys(COMMANDS), 'the commands, in the table\'s order');
  t.same([...new Set(listed.map((n) => n.split(' ')[0]))], ['org', 'reporting', 'agent', 'file', 'member', 'client', 'customer',
    'field', 'task-policy', 'approval', 'integration', 'invoice', 'notifications', 'keys'], 'the groups, as help has always listed them');
});
