// svc-admin: the control plane for administrators. Each command wraps one function of the
// `control` schema and prints exactly one JSON object on stdout; errors print one JSON object
// on stderr and exit non-zero (2: usage, 1: refused or failed). Every command runs as svc_admin
// (ADMIN_DATABASE_URL, or DATABASE_URL with that user and SVC_ADMIN_DB_PASSWORD); a BI login is
// made and dropped through two functions of the bootstrap's that may (db/bootstrap-database.sql).
// Commands and their flags are data (command.ts), one module per group; command-line.ts reads a
// command line against them, this module runs the command.
import postgres from 'postgres';
import { adminUrlFrom } from '../config.ts';
import { constraintNamed } from '../http/errors.ts';
import { UsageError, type CommandGroup, type CommandSpec, type Sql } from './command.ts';
import { resolve } from './command-line.ts';
import { organizationCommands } from './organizations.ts';
import { reportingCommands } from './reporting.ts';
import { agentCommands } from './agents.ts';
import { fileCommands } from './files.ts';
import { memberCommands } from './members.ts';
import { clientCommands } from './clients.ts';
import { customerCommands } from './customers.ts';
import { customFieldCommands } from './custom-fields.ts';
import { taskPolicyCommands } from './task-policy.ts';
import { approvalCommands } from './approvals.ts';
import { integrationCommands } from './integrations.ts';
import { invoiceCommands } from './invoices.ts';
import { notificationCommands } from './notifications.ts';
import { signingKeyCommands } from './signing-keys.ts';
import { isMain } from '../is-main.ts';

export type { CommandSpec, FlagSpec } from './command.ts';

/** In the order `svc-admin --help` has always listed them. */
const GROUP_MODULES: readonly CommandGroup[] = [
  organizationCommands, reportingCommands, agentCommands, fileCommands, memberCommands, clientCommands, customerCommands,
  customFieldCommands, taskPolicyCommands, approvalCommands, integrationCommands, invoiceCommands, notificationCommands,
  signingKeyCommands,
];

/** Each group's summary, by the group's name. */
export const GROUPS: Record<string, string> = Object.fromEntries(GROUP_MODULES.map((g) => [g.name, g.summary]));

/** Every command by its full name (`org create`). */
export const COMMANDS: Record<string, CommandSpec> = Object.fromEntries(
  GROUP_MODULES.flatMap((g) => Object.entries(g.commands).map(([command, spec]) => [`${g.name} ${command}`, spec])));

// --- Running --------------------------------------------------------------------------------

interface PgError { code?: string; message?: string; detail?: string; constraint_name?: string }

function describeError(e: unknown): Record<string, unknown> {
  if (e instanceof UsageError) return { error: 'USAGE', detail: e.message };
  const pg = e as PgError;
  if (pg && typeof pg.code === 'string') {
    if (pg.code.startsWith('SV')) return { error: pg.message, detail: pg.detail || undefined };
    if (pg.code === '23505') return { error: 'ALREADY_EXISTS', detail: pg.detail, constraint: constraintNamed(pg) };
    if (pg.code === '23514' || pg.code === '23502' || pg.code === '22P02' || pg.code === '22007' || pg.code === '22008') {
      return { error: 'INVALID_VALUE', detail: pg.message, constraint: constraintNamed(pg) };
    }
    if (pg.code === '23503') return { error: 'REFERENCE_NOT_FOUND', detail: pg.detail, constraint: constraintNamed(pg) };
    return { error: 'DATABASE_ERROR', sqlstate: pg.code, detail: pg.message };
  }
  return { error: 'FAILED', detail: e instanceof Error ? e.message : String(e) };
}

/** `out`: the command's JSON (stdout); `err`: the error's JSON (stderr); `text`: help (stdout, plain). */
export interface RunResult { code: number; out?: object; err?: object; text?: string }

export async function run(argv: string[], databaseUrl = process.env.DATABASE_URL): Promise<RunResult> {
  try {
    const resolved = resolve(argv, COMMANDS, GROUPS);
    if ('help' in resolved) return { code: 0, text: resolved.help };
    if (!databaseUrl) throw new UsageError('DATABASE_URL is not set; svc-admin needs the database\'s URL, e.g. postgres://postgres@127.0.0.1:5432/svc (it logs in as svc_admin)');
    const sql = postgres(adminUrlFrom(databaseUrl), { max: 1, onnotice: () => {} });
    try {
      return { code: 0, out: await sql.begin((tx) => resolved.spec.run(tx as unknown as Sql, resolved.flags, databaseUrl)) };
    } finally {
      await sql.end();
    }
  } catch (e) {
    return { code: e instanceof UsageError ? 2 : 1, err: describeError(e) };
  }
}

if (isMain(import.meta.url) || process.env.SVC_ADMIN_MAIN === '1') {
  // run() turns every failure into a JSON error; the catch only keeps a stack trace off the terminal.
  const result: RunResult = await run(process.argv.slice(2)).catch((e: unknown) => ({ code: 1, err: describeError(e) }));
  if (result.text !== undefined) process.stdout.write(result.text);
  if (result.out) process.stdout.write(JSON.stringify(result.out) + '\n');
  if (result.err) process.stderr.write(JSON.stringify(result.err) + '\n');
  process.exitCode = result.code;
}
