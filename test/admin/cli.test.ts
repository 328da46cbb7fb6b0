// svc-admin as a command-line tool: help at every level, refusals of malformed command lines
// (before the database is reached), unchanged JSON output, and the real binary's streams and exit codes.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { run, COMMANDS, GROUPS } from '../../src/admin/cli.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { REPOSITORY } from '../helpers/repository.ts';

const ROOT = REPOSITORY;
// Nothing listens here: a command that got past validation would fail to connect, not with USAGE.
const NOWHERE = 'postgres://nobody@127.0.0.1:1/none';
const commandNames = Object.keys(COMMANDS);
const groupNames = [...new Set(commandNames.map((n) => n.split(' ')[0]!))];

/** Runs a command line that must be refused as USAGE (exit code 2, JSON error, no output). */
async function usageError(t: Test, argv: string[], detail: RegExp | string) {
  const r = await run(argv, NOWHERE);
  t.equal(r.code, 2, `${argv.join(' ')}: exit code 2`);
  t.equal(r.out, undefined);
  t.equal(r.text, undefined);
  t.match(r.err, { error: 'USAGE' });
  const got = (r.err as { detail: string }).detail;
  if (typeof detail === 'string') t.equal(got, detail);
  else t.match(got, detail, argv.join(' '));
  return got;
}

t.test('svc-admin --help, -h and no arguments list every command with its summary', async (t) => {
  for (const argv of [['--help'], ['-h'], []]) {
    const r = await run(argv, ''); // help needs no database
    t.equal(r.code, 0, `${argv.join(' ') || '(none)'}: exit code 0`);
    t.equal(r.out, undefined);
    t.equal(r.err, undefined);
    t.type(r.text, 'string');
    t.match(r.text, /^svc-admin: /, 'plain text, not JSON');
    for (const name of commandNames) {
      t.ok(r.text!.includes(`${name} `), `lists ${name}`);
      t.ok(r.text!.includes(COMMANDS[name]!.summary), `summary of ${name}`);
    }
    t.match(r.text, /DATABASE_URL/);
  }
});

t.test('svc-admin <group> --help (and a bare group) lists the group\'s commands', async (t) => {
  t.same(groupNames.filter((g) => !GROUPS[g]), [], 'every group has a summary');
  for (const group of groupNames) {
    for (const argv of [[group, '--help'], [group, '-h'], [group]]) {
      const r = await run(argv, '');
      t.equal(r.code, 0, argv.join(' '));
      t.equal(r.err, undefined);
      t.ok(r.text!.startsWith(`svc-admin ${group}: ${GROUPS[group]}`), 'names the group');
      for (const name of commandNames) {
        const [g, command] = name.split(' ');
        if (g === group) {
          t.match(r.text, new RegExp(`^  ${command} +${escape(COMMANDS[name]!.summary)}$`, 'm'), `lists ${name} with its summary`);
        } else {
          t.notOk(r.text!.includes(COMMANDS[name]!.summary), `leaves out ${name}`);
        }
      }
    }
  }
});

t.test('svc-admin <group> <command> --help shows every flag, which are required, and allowed values', async (t) => {
  for (const name of commandNames) {
    const spec = COMMANDS[name]!;
    const r = await run([...name.split(' '), '--help'], '');
    t.equal(r.code, 0, name);
    t.equal(r.err, undefined);
    const text = r.text!;
    t.ok(text.startsWith(`svc-admin ${name}: ${spec.summary}`), `${name}: title and summary`);
    t.ok(text.includes(`Prints: ${spec.prints}`), `${name}: output`);
    for (const flag of spec.flags) {
      const line = text.split('\n').find((l) => l.startsWith(`  --${flag.name} `));
      t.ok(line, `${name}: --${flag.name}`);
      t.equal(line!.endsWith('(required)'), !!flag.required, `${name}: --${flag.name} ${flag.required ? 'is' : 'is not'} marked required`);
      if (flag.values) t.ok(line!.includes(flag.values.join('|')), `${name}: --${flag.name} allowed values`);
      if (flag.kind === 'boolean') t.ok(line!.includes('true|false'), `${name}: --${flag.name} is true|false`);
      t.ok(text.includes(`      ${flag.description}\n`), `${name}: --${flag.name} description`);
    }
    t.match(text, /-h, --help/);
  }
  t.match(await run(['org', 'create', '-h'], ''), { code: 0, text: /^svc-admin org create: / }, '-h');
  t.match(await run(['org', 'create', '--name', 'x', '--bogus', '--help'], ''), { code: 0, text: /^svc-admin org create: / },
    '--help wins over the rest of the line');
  // The declared flags are the ones in the README's command list.
  t.match((await run(['client', 'create', '--help'], '')).text,
    /Usage: svc-admin client create --org ID --name NAME --license regular\|manager --roles ROLES \[flags\]/);
});

t.test('malformed command lines are refused as USAGE before the database is reached', async (t) => {
  t.test('unknown flag', async (t) => {
    const r = await run(['org', 'create', '--name', 'X', '--foo', 'bar'], NOWHERE);
    t.same(r, { code: 2, err: { error: 'USAGE', detail: 'unknown flag --foo for "org create"; see svc-admin org create --help' } });
    await usageError(t, ['org', 'create', '--foo=bar'], /^unknown flag --foo for "org create"/);
    await usageError(t, ['org', 'create', '-x'], /^unknown flag -x for "org create"/);
    await usageError(t, ['keys', 'rotate', '--org', 'org_1'], 'unknown flag --org for "keys rotate"; see svc-admin keys rotate --help');
  });

  t.test('missing required flags', async (t) => {
    await usageError(t, ['org', 'create', '--name', 'X'],
      'missing required flags --plan, --timezone, --currency, --locale for "org create"; see svc-admin org create --help');
    await usageError(t, ['keys', 'retire'], 'missing required flag --kid for "keys retire"; see svc-admin keys retire --help');
    await usageError(t, ['client', 'set-roles', '--client', 'cli_1', '--roles', ''], /^--roles may not be empty; see svc-admin client set-roles --help/);
  });

  t.test('missing values', async (t) => {
    await usageError(t, ['org', 'set-status', '--org', 'org_1', '--status'], /^--status needs a value \(active\|restricted\|suspended\)/);
    await usageError(t, ['org', 'create', '--name', '--plan', 'trial'], /^--name needs a value/);
  });

  t.test('values outside a fixed set', async (t) => {
    await usageError(t, ['org', 'set-plan', '--org', 'org_1', '--plan', 'gold'],
      '--plan must be one of trial, team, business, enterprise, not "gold"; see svc-admin org set-plan --help');
    await usageError(t, ['client', 'create', '--org', 'o', '--name', 'n', '--license', 'admin', '--roles', 'member'],
      /^--license must be one of regular, manager, not "admin"/);
    await usageError(t, ['customer', 'create', '--org', 'o', '--kind', 'person', '--name', 'n'], /^--kind must be one of company, billing/);
    await usageError(t, ['field', 'define', '--org', 'o', '--object', 'invoice', '--api-name', 'a', '--label', 'A', '--type', 'text'],
      /^--object must be one of project, task/);
    await usageError(t, ['field', 'define', '--org', 'o', '--object', 'task', '--api-name', 'a', '--label', 'A', '--type', 'json'],
      /^--type must be one of text, number, date, boolean, select, multi_select, member/);
    await usageError(t, ['approval', 'decide', '--approval', 'apr_1', '--decision', 'maybe', '--by', 'a@b.example'],
      /^--decision must be one of approved, rejected/);
    await usageError(t, ['integration', 'add', '--org', 'o', '--provider', 'p', '--category', 'c', '--ownership', 'shared'],
      /^--ownership must be one of organization, personal/);
    await usageError(t, ['field', 'define', '--org', 'o', '--object', 'task', '--api-name', 'a', '--label', 'A', '--type', 'text',
      '--required', 'maybe'], /^--required must be true or false, not "maybe"/);
    await usageError(t, ['org', 'set-policy', '--org', 'o', '--time-entry-future-days', 'soon'], /^--time-entry-future-days must be a whole number/);
  });

  t.test('unknown commands', async (t) => {
    await usageError(t, ['frob'], 'unknown command "frob"; see svc-admin --help');
    await usageError(t, ['frob', 'create', '--help'], /^unknown command "frob create"; see svc-admin --help/);
    await usageError(t, ['org', 'frob'], /^unknown command "org frob"; "org" has create, set-status, set-plan, set-policy, set-file-policy, set-ticket-policy; see svc-admin org --help$/);
    await usageError(t, ['org', '--name', 'x'], /^expected a command after "org" .*; see svc-admin org --help$/);
    await usageError(t, ['--name', 'x'], /^expected a command before --name; see svc-admin --help$/);
  });

  t.test('stray positional arguments and repeated flags', async (t) => {
    await usageError(t, ['keys', 'rotate', 'now'], 'unexpected argument "now" for "keys rotate"; see svc-admin keys rotate --help');
    await usageError(t, ['org', 'set-status', '--org', 'org_1', 'suspended'], /^unexpected argument "suspended" for "org set-status"/);
    await usageError(t, ['org', 'set-status', '--org', 'org_1', '--status', 'active', '--', '--x'], /^unexpected argument "--x"/);
    await usageError(t, ['org', 'set-plan', '--org', 'a', '--org', 'b', '--plan', 'team'], /^--org is given more than once/);
  });

  t.test('DATABASE_URL missing', async (t) => {
    const r = await run(['keys', 'rotate'], '');
    t.equal(r.code, 2);
    t.match(r.err, { error: 'USAGE', detail: /^DATABASE_URL is not set/ });
  });
});

t.test('commands print the same JSON as before', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const cli = (...argv: string[]) => run(argv, adminUrl);

  const created = await cli('org', 'create', '--name', 'CLI Org', '--plan', 'business', '--timezone', 'Europe/Berlin',
    '--currency', 'EUR', '--locale', 'en-GB');
  t.equal(created.code, 0, JSON.stringify(created.err));
  t.same(Object.keys(created.out!), ['organization_id']);
  const org = (created.out as { organization_id: string }).organization_id;
  t.match(org, /^org_/);

  t.same(await cli('org', 'set-status', '--org', org, '--status', 'restricted'),
    { code: 0, out: { organization_id: org, status: 'restricted' } });
  t.same(await cli('org', 'set-plan', `--org=${org}`, '--plan=enterprise'), { code: 0, out: { organization_id: org, plan: 'enterprise' } },
    '--flag=value works');
  t.same(await cli('member', 'add', '--org', org, '--email', 'Ada@Example.com', '--name', 'Ada', '--roles', 'member,manager',
    '--status', 'active', '--hire-date', '2024-01-02', '--employment-type', 'employee'), { code: 0, out: { member_id: 'ada@example.com' } });
  t.same(await cli('member', 'set-status', '--org', org, '--email', 'ADA@example.com', '--status', 'inactive'),
    { code: 0, out: { member_id: 'ada@example.com', status: 'inactive' } });
  // Boolean-like flags take true|false values, as scripts pass them.
  t.same(await cli('task-policy', 'set', '--org', org, '--members-may-add-notes', 'true'),
    { code: 0, out: { organization_id: org, members_may_add_notes: true, allow_cross_project_dependencies: null } });
  t.same(await cli('task-policy', 'set', '--org', org, '--allow-cross-project-dependencies', 'false'),
    { code: 0, out: { organization_id: org, members_may_add_notes: null, allow_cross_project_dependencies: false } });
  const field = await cli('field', 'define', '--org', org, '--object', 'project', '--api-name', 'tier', '--label', 'Tier',
    '--type', 'select', '--options', 'gold:Gold,silver:Silver', '--required', 'true', '--filterable', 'false', '--position', '2');
  t.match(field, { code: 0, out: { object_type: 'project', api_name: 'tier', schema_version: Number } });
  t.same(await cli('org', 'set-policy', '--org', org, '--time-entry-future-days', '2', '--hr-may-read-time-entries', 'true'),
    { code: 0, out: { organization_id: org, updated: true } });
  const conn = await cli('integration', 'add', '--org', org, '--provider', 'sandbox', '--category', 'messaging',
    '--status', 'action_required', '--action-required', 'Reconnect', '--capabilities', 'message.send');
  t.match(conn, { code: 0, out: { connection_id: /^icn_/ } });
  const id = (conn.out as { connection_id: string }).connection_id;
  t.same(await cli('integration', 'update', '--id', id, '--status', 'connected', '--clear-action-required', 'true'),
    { code: 0, out: { connection_id: id, updated: true } });
  t.same(await cli('notifications', 'list', '--org', org), { code: 0, out: { notifications: [] } });

  // Refusals by the database keep exit code 1 and their JSON.
  t.match(await cli('org', 'set-status', '--org', 'org_missing', '--status', 'active'),
    { code: 1, err: { error: 'ORGANIZATION_NOT_FOUND' } });
  t.match(await cli('org', 'create', '--name', 'X', '--plan', 'team', '--timezone', 'Mars/Olympus', '--currency', 'EUR', '--locale', 'en-GB'),
    { code: 1, err: { error: 'INVALID_TIMEZONE' } });
});

/** The real binary, as an administrator runs it. */
function bin(args: string[], env: Record<string, string | undefined>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const childEnv = { ...process.env, ...env };
  for (const [k, v] of Object.entries(childEnv)) if (v === undefined) delete childEnv[k];
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['bin/svc-admin.js', ...args], { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c; });
    child.stderr.on('data', (c: Buffer) => { stderr += c; });
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

t.test('bin/svc-admin.js: help on stdout, errors as one JSON line on stderr, exit codes', async (t) => {
  const help = await bin(['org', '--help'], { DATABASE_URL: undefined });
  t.equal(help.code, 0, 'help exits 0 without DATABASE_URL');
  t.equal(help.stderr, '');
  t.match(help.stdout, /^svc-admin org: /);
  for (const name of commandNames.filter((n) => n.startsWith('org '))) t.match(help.stdout, new RegExp(`^  ${name.slice(4)} `, 'm'));

  const bad = await bin(['org', 'create', '--name', 'X', '--foo', 'bar'], { DATABASE_URL: NOWHERE });
  t.equal(bad.code, 2, 'usage errors exit 2');
  t.equal(bad.stdout, '');
  t.equal(bad.stderr, '{"error":"USAGE","detail":"unknown flag --foo for \\"org create\\"; see svc-admin org create --help"}\n');

  const noUrl = await bin(['keys', 'rotate'], { DATABASE_URL: undefined });
  t.equal(noUrl.code, 2);
  t.equal(noUrl.stdout, '');
  t.match(JSON.parse(noUrl.stderr), { error: 'USAGE', detail: /DATABASE_URL/ });
  t.equal(noUrl.stderr.trim().split('\n').length, 1, 'one line, no stack trace');

  const { adminUrl } = await createTestDatabase(t);
  const ok = await bin(['org', 'create', '--name', 'Bin Org', '--plan', 'team', '--timezone', 'UTC', '--currency', 'EUR',
    '--locale', 'en-GB'], { DATABASE_URL: adminUrl });
  t.equal(ok.code, 0, ok.stderr);
  t.equal(ok.stderr, '');
  t.match(JSON.parse(ok.stdout), { organization_id: /^org_/ });
  t.equal(ok.stdout.split('\n').length, 2, 'one JSON line');

  const refused = await bin(['org', 'set-plan', '--org', 'org_missing', '--plan', 'team'], { DATABASE_URL: adminUrl });
  t.equal(refused.code, 1, 'database refusals exit 1');
  t.equal(refused.stdout, '');
  t.match(JSON.parse(refused.stderr), { error: 'ORGANIZATION_NOT_FOUND' });
});

function escape(s: string) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
