// What an svc-admin command is, and what the group modules share to describe theirs: a command's
// flags are data, so parsing, validation and --help (command-line.ts) come from one description.
import type postgres from 'postgres';

export type Flags = Record<string, string>;
export type Sql = postgres.Sql;

/** A malformed command line: exit code 2, before the database is reached. */
export class UsageError extends Error {}

/** How a value is checked. Every value stays a string: scripts pass booleans as `--required true`. */
type FlagKind = 'text' | 'list' | 'boolean' | 'integer';

export interface FlagSpec {
  name: string;
  description: string;
  kind?: FlagKind;
  required?: boolean;
  /** A fixed set of allowed values, checked before the database is reached. */
  values?: readonly string[];
  /** Placeholder of the value in help (NAME, ID, …); enums and booleans show their values. */
  value?: string;
}

export interface CommandSpec {
  summary: string;
  /** The keys of the JSON object printed on success, for help. */
  prints: string;
  flags: readonly FlagSpec[];
  /** `url`: DATABASE_URL, whose server and database a printed connection string names; the command
   * runs as svc_admin. */
  run: (sql: Sql, f: Flags, url: string) => Promise<Record<string, unknown>>;
}

/** `svc-admin <name> <command>`: one module per group. */
export interface CommandGroup {
  name: string;
  /** The first line of `svc-admin <name> --help`. */
  summary: string;
  /** By the word after the group's name, in the order help lists them. */
  commands: Record<string, CommandSpec>;
}

// Accepted spellings of a boolean (as before); help shows true|false.
const TRUE = ['true', 'yes', '1'];
export const BOOLEANS = [...TRUE, 'false', 'no', '0'];

export const need = (f: Flags, name: string) => {
  // Declared required flags are checked before a command runs; this keeps the command bodies total.
  const v = f[name];
  if (v === undefined || v === '') throw new UsageError(`--${name} is required`);
  return v;
};
export const list = (v: string | undefined) => (v === undefined ? null : v.split(',').map((s) => s.trim()).filter(Boolean));
export const opt = (f: Flags, name: string) => f[name] ?? null;
export const bool = (f: Flags, name: string) => (f[name] === undefined ? null : TRUE.includes(f[name]!));

// Flags shared by several groups. The fixed sets of values each group declares are spelled as the
// database accepts them; the control plane is the only way in, so the sets live next to the
// constraints they mirror (db/migrations) and a refusal here saves a round trip.
export const ORG: FlagSpec = { name: 'org', value: 'ID', required: true, description: 'Organization id (org_…)' };
export const ROLES_HINT = 'comma-separated Roles among member, manager, finance, hr';
export const TIMEZONE_HINT = 'IANA time-zone identifier, e.g. Europe/Berlin';
