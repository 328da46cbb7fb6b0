// `make test`: one template database migrated per run (plus test-only fixtures); every test file
// clones its own database from it, so files run in parallel without sharing state.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import postgres from 'postgres';
import { serverUrl, migrate, withDatabase, embeddedPort } from './db.ts';

const { url: server, embedded } = await serverUrl('pg-test', embeddedPort('test'));
const template = `svc_tpl_${process.pid}`;
const admin = postgres(server, { max: 1, onnotice: () => {} });
let code = 1;
try {
  await admin.unsafe(`drop database if exists ${template} with (force)`);
  await migrate(withDatabase(server, template));
  const tpl = postgres(withDatabase(server, template), { max: 1, onnotice: () => {} });
  for (const f of readdirSync('test/fixtures').filter((n) => n.endsWith('.sql')).sort()) {
    await tpl.unsafe(readFileSync(`test/fixtures/${f}`, 'utf8'));
  }
  await tpl.end();
  const args = ['tap', ...process.argv.slice(2)];
  let summary = '';
  let out = '';
  code = await new Promise<number>((done) => {
    const child = spawn('npx', args, {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, SVC_TEST_SERVER_URL: server, SVC_TEST_TEMPLATE: template, SVC_TEST_RUN: String(process.pid), LOG_LEVEL: 'silent' },
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      out += chunk.toString();
      const m = /# \{ total: (\d+), pass: (\d+)(?:, fail: (\d+))?/.exec(chunk.toString());
      if (m) summary = `tests: ${m[2]} passed, ${m[3] ?? 0} failed`;
    });
    child.on('exit', (c) => done(c ?? 1));
  });
  // CI keeps only the tail of the output: repeat each failure (with its diagnostic block) there.
  const failures = failureReport(out);
  if (failures) console.log(`\n# failures, repeated:\n${failures}`);
  // A plain closing line that any CI can read.
  if (summary) console.log(summary);
} finally {
  const leftovers = await admin`select datname from pg_database where datname like ${`svc_t_${process.pid}_%`} or datname = ${template}`;
  for (const { datname } of leftovers) await admin.unsafe(`drop database if exists ${datname} with (force)`);
  await admin.end();
  await embedded?.stop();
}
process.exit(code);

function failureReport(tap: string): string {
  const lines = tap.split('\n');
  const picked: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!/^\s*not ok /.test(line)) continue;
    picked.push(line);
    // The YAML block that follows a failure ends with an indented '...'; a file's own block
    // (unindented) only repeats the command line.
    if (/^\s+not ok /.test(line) && /^\s*---\s*$/.test(lines[i + 1] ?? '')) {
      for (let j = i + 1; j < lines.length && j < i + 40; j++) {
        picked.push(lines[j]!);
        if (/^\s*\.\.\.\s*$/.test(lines[j]!)) break;
      }
    }
  }
  return picked.join('\n');
}
