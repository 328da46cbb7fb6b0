// Migrations after the baseline are safe on a live database: squawk finds nothing in them
// (db/README.md "Migrations on a live database"), every rule set aside says why, the rules catch
// what that section promises, and its recipes pass them.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { MIGRATIONS, frozenMigrations, lintMigration, lintSql, lintedMigrations, tableRewrites, upSection } from '../../scripts/lint-migrations.ts';
import { REPOSITORY } from '../helpers/repository.ts';

const ROOT = REPOSITORY;
const rulesOf = (sql: string, inTransaction = true) => [...new Set(lintSql(sql, 'sample.sql', inTransaction).map((f) => f.rule))].sort();

t.test('every migration after the baseline passes', async (t) => {
  const files = lintedMigrations();
  t.comment(`${files.length} migration(s) after the baseline`);
  for (const file of files) {
    const findings = lintMigration(file);
    t.same(findings.map((f) => `${f.line}: ${f.rule}`), [], basename(file));
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^.*squawk-ignore.*$/gm)) {
      t.match(m[0], /squawk-ignore\s+[\w-]+(?:\s*,\s*[\w-]+)*\s+--\s+\S/, `${basename(file)}: "${m[0].trim()}" says why`);
    }
  }
});

t.test('a migration that shipped never changes', async (t) => {
  // dbmate runs a version once: an edit reaches new databases only, and the two kinds drift apart.
  const frozen = frozenMigrations();
  t.ok(frozen.size >= 14, `${frozen.size} frozen migrations (db/frozen-migrations.sha256)`);
  for (const [name, hash] of frozen) {
    const file = join(MIGRATIONS, name);
    if (!existsSync(file)) { t.fail(`${name} is gone`); continue; }
    t.equal(createHash('sha256').update(readFileSync(file)).digest('hex'), hash, `${name} is as it shipped`);
  }
});

t.test('the rules catch what db/README.md promises', async (t) => {
  t.same(rulesOf(`
    alter table app.tasks add column estimate text;
    create index tasks_estimate on app.tasks (estimate);`),
  ['require-concurrent-index-creation', 'require-lock-timeout', 'require-statement-timeout'], 'no timeouts, an index under a lock');
  const timeouts = `set local lock_timeout = '3s';\nset local statement_timeout = '60s';\n`;
  t.same(rulesOf(`${timeouts}alter table app.tasks add constraint tasks_estimate_short check (length(estimate) < 10);`),
    ['constraint-missing-not-valid'], 'a check validated under the lock that adds it');
  t.same(rulesOf(`${timeouts}alter table app.tasks add constraint tasks_project foreign key (organization_id, project_id)
    references app.projects (organization_id, id);`), ['adding-foreign-key-constraint', 'constraint-missing-not-valid'], 'a foreign key likewise');
  t.same(rulesOf(`${timeouts}alter table app.tasks add constraint tasks_project foreign key (organization_id, project_id)
    references app.projects (organization_id, id) not valid;
    alter table app.tasks validate constraint tasks_project;`), ['constraint-missing-not-valid'], 'not valid and validate in one transaction');
  t.same(rulesOf(`${timeouts}alter table app.tasks alter column title type varchar(300);`),
    ['changing-column-type', 'prefer-text-field'], 'a rewrite under a lock');
  t.same(rulesOf(`${timeouts}alter table app.tasks drop column estimate;`), ['ban-drop-column'], 'a column dropped');
  t.same(rulesOf(`${timeouts}alter table app.tasks rename column title to name;`), ['renaming-column'], 'a column renamed');
  t.same(rulesOf(`${timeouts}create index concurrently if not exists tasks_estimate on app.tasks (estimate);`),
    ['ban-concurrent-index-creation-in-transaction'], 'concurrently inside dbmate\'s transaction');
  t.same(rulesOf(`-- squawk-ignore require-lock-timeout, require-statement-timeout -- alone in its file
    create index concurrently if not exists tasks_estimate on app.tasks (estimate);`, false), [],
  'concurrently, the only statement of a transaction:false migration');
  t.same(tableRewrites(`${timeouts}-- vacuum full, in a comment
    create function app_private.f() returns void language plpgsql as $$ begin perform 'cluster'; end $$;
    alter table app.tasks set unlogged;\nvacuum (full) app.tasks;\ncluster app.tasks using tasks_pkey;
    alter table app.tasks set tablespace fast;`, 'x.sql').map((f) => `${f.line}: ${f.rule}`),
  ['5: table-rewrite', '6: table-rewrite', '7: table-rewrite', '8: table-rewrite'], 'rewrites squawk does not see (ours)');
  t.same(rulesOf(`${timeouts}-- squawk-ignore ban-drop-column -- contract: release N stopped reading it
    alter table app.tasks drop column estimate;`), [], 'a rule set aside for one statement');
  t.same(upSection('-- migrate:up transaction:false\nselect 1;\n-- migrate:down\ndrop table x;\n'),
    { sql: '\nselect 1;', inTransaction: false }, 'the up section, as dbmate runs it');
});

t.test('the recipes in db/README.md pass the rules', async (t) => {
  const readme = readFileSync(join(ROOT, 'db/README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Migrations on a live database'));
  const blocks = [...section.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!);
  t.ok(blocks.length >= 5, `${blocks.length} recipe migrations`);
  for (const block of blocks) {
    const { sql, inTransaction } = upSection(block);
    t.same([...lintSql(sql, 'recipe.sql', inTransaction), ...tableRewrites(sql, 'recipe.sql')].map((f) => `${f.line}: ${f.rule}`), [],
      block.split('\n')[1]!);
  }
});
