// Lints migrations with squawk (the PostgreSQL migration linter) for what hurts a live database:
// locks taken without lock_timeout/statement_timeout, indexes built without CONCURRENTLY,
// constraints validated under the lock that adds them, table rewrites, columns dropped or renamed.
// The rule set and how to satisfy it: db/README.md "Migrations on a live database".
// `npx tsx scripts/lint-migrations.ts [file…]`: the files given, else every linted migration.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMain } from '../src/is-main.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const MIGRATIONS = join(ROOT, 'db/migrations');
const SQUAWK = join(ROOT, 'node_modules/.bin/squawk');

/** Migrations that shipped: `sha256sum` lines of db/migrations files (and db/citus/migrations',
 * as ../citus/migrations/<file>), which must never change again (a database that ran one will not
 * run it again): the baseline, then each that shipped after it. */
export const FROZEN = join(ROOT, 'db/frozen-migrations.sha256');

export function frozenMigrations(file = FROZEN): Map<string, string> {
  return new Map(readFileSync(file, 'utf8').split('\n').filter((l) => l.trim())
    .map((l) => { const [hash, name] = l.trim().split(/\s+\*?/); return [name!, hash!]; }));
}

/** The migrations the rules apply to: every one not yet frozen, whatever its date (dbmate runs an
 * older-dated file it has not seen too), and never a baseline file (it creates empty tables, which
 * no lock can hurt). */
export function lintedMigrations(dir = MIGRATIONS): string[] {
  const frozen = frozenMigrations();
  // db/citus/migrations' files are named in the list from db/migrations: ../citus/migrations/<file>.
  return [['', dir], ['../citus/migrations/', join(dir, '../citus/migrations')]].flatMap(([prefix, d]) =>
    (existsSync(d!) ? readdirSync(d!) : []).filter((f) => /^\d+_.*\.sql$/.test(f))
      .filter((f) => !/^\d+_baseline_/.test(f) && !frozen.has(prefix + f))
      .sort().map((f) => join(d!, f)));
}

/** squawk's defaults, less these (db/README.md says why). */
export const EXCLUDED = ['prefer-bigint-over-int', 'prefer-bigint-over-smallint'];

export interface Finding { file: string; line: number; rule: string; message: string }

/** dbmate's up section and whether dbmate wraps it in a transaction (`transaction:false` opts out). */
export function upSection(text: string): { sql: string; inTransaction: boolean } {
  const up = /^-- migrate:up(.*)$/m.exec(text);
  if (!up) return { sql: text, inTransaction: true };
  const start = up.index + up[0].length;
  const down = text.indexOf('\n-- migrate:down', start);
  // Blank lines in place of what precedes keep squawk's line numbers those of the file.
  const before = text.slice(0, start).replace(/[^\n]/g, '');
  return { sql: before + text.slice(start, down < 0 ? undefined : down), inTransaction: !/transaction:false/.test(up[1]!) };
}

export function lintSql(sql: string, name: string, inTransaction = true): Finding[] {
  const out = spawnSync(SQUAWK, ['--reporter=json', '--pg-version=15', `--exclude=${EXCLUDED.join(',')}`, '--stdin-filepath', name,
    inTransaction ? '--assume-in-transaction' : '--no-assume-in-transaction'], { input: sql, encoding: 'utf8' });
  if (out.error) throw out.error;
  const start = out.stdout.indexOf('[');
  if (start < 0) throw new Error(`squawk: ${out.stderr || out.stdout}`);
  return (JSON.parse(out.stdout.slice(start)) as Array<{ file: string; line: number; rule_name: string; message: string }>)
    .map((f) => ({ file: f.file, line: f.line + 1, rule: f.rule_name, message: f.message }));
}

/** What rewrites a table under an ACCESS EXCLUSIVE lock and squawk 2.66 does not report. */
const REWRITES = /\balter\s+table\b[^;]*?\bset\s+(?:un)?logged\b|\balter\s+table\b[^;]*?\bset\s+tablespace\b|(?:^|;)\s*vacuum\s*(?:\([^)]*\bfull\b[^)]*\)|full\b)|(?:^|;)\s*cluster\b/gim;

export function tableRewrites(sql: string, name: string): Finding[] {
  // Comments and quoted bodies (functions, DO blocks) are blanked, their line breaks kept.
  const code = sql.replace(/--[^\n]*/g, '').replace(/\$([A-Za-z_]*)\$[\s\S]*?\$\1\$/g, (m) => m.replace(/[^\n]/g, ' '));
  return [...code.matchAll(REWRITES)].map((m) => ({
    file: name, line: code.slice(0, m.index! + m[0].search(/[a-z]/i)).split('\n').length,
    rule: 'table-rewrite', message: 'rewrites the table under an ACCESS EXCLUSIVE lock: never in a migration',
  }));
}

export function lintMigration(file: string): Finding[] {
  const { sql, inTransaction } = upSection(readFileSync(file, 'utf8'));
  return [...lintSql(sql, basename(file), inTransaction), ...tableRewrites(sql, basename(file))];
}

if (isMain(import.meta.url)) {
  const files = process.argv.length > 2 ? process.argv.slice(2) : lintedMigrations();
  const findings = files.flatMap(lintMigration);
  for (const f of findings) console.log(`${f.file}:${f.line}: ${f.rule}: ${f.message}`);
  console.log(`${files.length} migration(s), ${findings.length} finding(s)`);
  process.exit(findings.length ? 1 : 0);
}
