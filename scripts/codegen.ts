// Regenerates the types of the `api` surface from a freshly migrated scratch database: its views
// (src/db/schema.ts, by kysely-codegen) and its functions (src/db/functions.ts). `--verify` fails
// when a committed file is stale.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import postgres from 'postgres';
import { FUNCTIONS_FILE, functionsFile } from './codegen-functions.ts';
import { serverUrl, migrate, withDatabase, embeddedPort } from './db.ts';
import { isMain } from '../src/is-main.ts';

export const CODEGEN_ARGS = ['--dialect', 'postgres', '--include-pattern', 'api.*', '--out-file', 'src/db/schema.ts'];

export async function runCodegen(url: string, verify: boolean): Promise<{ ok: boolean; output: string }> {
  const out = spawnSync('npx', ['kysely-codegen', ...CODEGEN_ARGS, '--url', url, ...(verify ? ['--verify'] : [])],
    { encoding: 'utf8' });
  const functions = await functionsFile(url);
  let fresh = true;
  if (verify) fresh = readFileSync(FUNCTIONS_FILE, 'utf8') === functions;
  else writeFileSync(FUNCTIONS_FILE, functions);
  return {
    ok: out.status === 0 && fresh,
    output: `${out.stdout}${out.stderr}${fresh ? '' : `${FUNCTIONS_FILE} is stale\n`}`,
  };
}

if (isMain(import.meta.url)) {
  const { url: server, embedded } = await serverUrl('pg-dev', embeddedPort('dev'));
  const name = `svc_codegen_${process.pid}`;
  const root = postgres(server, { max: 1, onnotice: () => {} });
  try {
    await migrate(withDatabase(server, name));
    const r = await runCodegen(withDatabase(server, name), process.argv.includes('--verify'));
    process.stdout.write(r.output);
    process.exitCode = r.ok ? 0 : 1;
  } finally {
    await root.unsafe(`drop database if exists ${name} with (force)`);
    await root.end();
    await embedded?.stop();
  }
}
