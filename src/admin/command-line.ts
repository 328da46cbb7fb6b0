// Reads an svc-admin command line against the table of commands: help at three levels (all
// commands, a group's, a command's flags) and the flags, checked before the database is reached.
import { parseArgs } from 'node:util';
import { BOOLEANS, UsageError, type CommandSpec, type FlagSpec, type Flags } from './command.ts';

/** Every command by its full name (`org create`), in the order help lists them. */
export type Commands = Record<string, CommandSpec>;
/** Each group's one-line summary, by the group's name. */
export type GroupSummaries = Record<string, string>;

// --- Help -----------------------------------------------------------------------------------

const groupOf = (name: string) => name.split(' ')[0]!;
const commandsOf = (commands: Commands, group: string) => Object.keys(commands).filter((n) => groupOf(n) === group);
/** Groups in the order of their first command. */
const groups = (commands: Commands) => [...new Set(Object.keys(commands).map(groupOf))];
const pad = (s: string, width: number) => s + ' '.repeat(Math.max(0, width - s.length));

const placeholder = (flag: FlagSpec) =>
  flag.values ? flag.values.join('|') : flag.kind === 'boolean' ? 'true|false' : flag.value ?? 'VALUE';

const FOOTER = [
  'Runs as svc_admin: ADMIN_DATABASE_URL, or DATABASE_URL with that user and SVC_ADMIN_DB_PASSWORD.',
  'On success prints one JSON object on stdout;',
  'on failure one JSON object on stderr ({"error", "detail", ...}) and exit code 2 (usage) or 1 (refused).',
];

function usage(commands: Commands): string {
  const names = Object.keys(commands);
  const width = Math.max(...names.map((n) => n.length)) + 2;
  const lines = [
    'svc-admin: the control plane of the Work-Management Service.',
    '',
    'Usage:',
    '  svc-admin <group> <command> [--flag value ...]',
    "  svc-admin <group> --help              the group's commands",
    "  svc-admin <group> <command> --help    the command's flags",
    '',
    'Commands:',
  ];
  for (const group of groups(commands)) {
    for (const name of commandsOf(commands, group)) lines.push(`  ${pad(name, width)}${commands[name]!.summary}`);
  }
  lines.push('', ...FOOTER);
  return lines.join('\n') + '\n';
}

function groupUsage(commands: Commands, summaries: GroupSummaries, group: string): string {
  const names = commandsOf(commands, group);
  const width = Math.max(...names.map((n) => n.length - group.length - 1)) + 2;
  const lines = [`svc-admin ${group}: ${summaries[group] ?? ''}`.trimEnd(), '', `Usage: svc-admin ${group} <command> [--flag value ...]`, '', 'Commands:'];
  for (const name of names) lines.push(`  ${pad(name.slice(group.length + 1), width)}${commands[name]!.summary}`);
  lines.push('', `See svc-admin ${group} <command> --help for a command's flags.`);
  return lines.join('\n') + '\n';
}

function commandUsage(name: string, spec: CommandSpec): string {
  const required = spec.flags.filter((f) => f.required).map((f) => `--${f.name} ${placeholder(f)}`);
  const optional = spec.flags.some((f) => !f.required) ? ['[flags]'] : [];
  const lines = [
    `svc-admin ${name}: ${spec.summary}.`,
    '',
    `Usage: ${['svc-admin', name, ...required, ...optional].join(' ')}`,
    `Prints: ${spec.prints}`,
    '',
    'Flags:',
  ];
  for (const flag of spec.flags) {
    lines.push(`  --${flag.name} ${placeholder(flag)}${flag.required ? '  (required)' : ''}`);
    lines.push(`      ${flag.description}`);
  }
  lines.push('  -h, --help', '      Show this help');
  return lines.join('\n') + '\n';
}

// --- Parsing --------------------------------------------------------------------------------

export type Resolved = { help: string } | { name: string; spec: CommandSpec; flags: Flags };

const isHelp = (a: string) => a === '-h' || a === '--help' || a.startsWith('--help=');

/** `svc-admin <group> <command> --flags`: the words come first, so the command decides how its flags parse. */
export function resolve(argv: string[], commands: Commands, summaries: GroupSummaries): Resolved {
  const terminator = argv.indexOf('--');
  const wantsHelp = (terminator < 0 ? argv : argv.slice(0, terminator)).some(isHelp);
  const words: string[] = [];
  let i = 0;
  while (i < argv.length && words.length < 2 && !argv[i]!.startsWith('-')) words.push(argv[i++]!);
  const rest = argv.slice(i);
  if (words.length === 0) {
    if (rest.length === 0 || wantsHelp) return { help: usage(commands) };
    throw new UsageError(`expected a command before ${rest[0]}; see svc-admin --help`);
  }
  const group = words[0]!;
  if (!groups(commands).includes(group)) throw new UsageError(`unknown command "${words.join(' ')}"; see svc-admin --help`);
  const inGroup = () => commandsOf(commands, group).map((n) => n.slice(group.length + 1)).join(', ');
  if (words.length === 1) {
    if (rest.length === 0 || wantsHelp) return { help: groupUsage(commands, summaries, group) };
    throw new UsageError(`expected a command after "${group}" (${inGroup()}); see svc-admin ${group} --help`);
  }
  const name = words.join(' ');
  const spec = commands[name];
  if (!spec) throw new UsageError(`unknown command "${name}"; "${group}" has ${inGroup()}; see svc-admin ${group} --help`);
  if (wantsHelp) return { help: commandUsage(name, spec) };
  return { name, spec, flags: readFlags(name, spec, rest) };
}

function readFlags(name: string, spec: CommandSpec, args: string[]): Flags {
  const see = `see svc-admin ${name} --help`;
  const declared = new Map(spec.flags.map((f) => [f.name, f]));
  // Not strict: the tokens are checked below, so every refusal names the command and its --help.
  const { tokens } = parseArgs({
    args, strict: false, allowPositionals: true, tokens: true,
    options: Object.fromEntries(spec.flags.map((f) => [f.name, { type: 'string' as const }])),
  });
  const flags: Flags = {};
  for (const token of tokens) {
    if (token.kind === 'option-terminator') continue;
    if (token.kind === 'positional') throw new UsageError(`unexpected argument "${token.value}" for "${name}"; ${see}`);
    const flag = token.rawName.startsWith('--') ? declared.get(token.name) : undefined;
    if (!flag) throw new UsageError(`unknown flag ${token.rawName} for "${name}"; ${see}`);
    const v = token.value;
    // A value that looks like the next flag means this one has none (`--name --plan x`), as before.
    if (v === undefined || (!token.inlineValue && v.startsWith('--'))) {
      throw new UsageError(`--${flag.name} needs a value (${placeholder(flag)}); ${see}`);
    }
    if (Object.hasOwn(flags, flag.name)) throw new UsageError(`--${flag.name} is given more than once; ${see}`);
    if (flag.values && !flag.values.includes(v)) {
      throw new UsageError(`--${flag.name} must be one of ${flag.values.join(', ')}, not ${JSON.stringify(v)}; ${see}`);
    }
    if (flag.kind === 'boolean' && !BOOLEANS.includes(v)) {
      throw new UsageError(`--${flag.name} must be true or false, not ${JSON.stringify(v)}; ${see}`);
    }
    if (flag.kind === 'integer' && !/^-?\d+$/.test(v)) {
      throw new UsageError(`--${flag.name} must be a whole number, not ${JSON.stringify(v)}; ${see}`);
    }
    flags[flag.name] = v;
  }
  const missing = spec.flags.filter((f) => f.required && flags[f.name] === undefined).map((f) => `--${f.name}`);
  if (missing.length) {
    throw new UsageError(`missing required flag${missing.length > 1 ? 's' : ''} ${missing.join(', ')} for "${name}"; ${see}`);
  }
  const empty = spec.flags.find((f) => f.required && flags[f.name] === '');
  if (empty) throw new UsageError(`--${empty.name} may not be empty; ${see}`);
  return flags;
}
