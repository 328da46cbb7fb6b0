// Regenerates src/db/schema.ts (Kysely types for the `api` surface) from a freshly migrated
// scratch database. `--verify` fails when the committed file is stale.
import { spawnSync } from 'node:child_process';
import postgres from 'postgres';
import { serverUrl, migrate, withDatabase, embeddedPort } from './db.ts';
import { isMain } from '../src/is-main.ts';

export const CODEGEN_ARGS = ['--dialect', 'postgres', '--include-pattern', 'api.*', '--out-file', 'src/db/schema.ts'];

export function runCodegen(url: string, verify: boolean): { ok: boolean; output: string } {
  const out = spawnSync('npx', ['kysely-codegen', ...CODEGEN_ARGS, '--url', url, ...(verify ? ['--verify'] : [])],
    { encoding: 'utf8' });
  return { ok: out.status === 0, output: `${out.stdout}${out.stderr}` };
}

if (isMain(import.meta.url)) {
  const { url: server, embedded } = await serverUrl('pg-dev', embeddedPort('dev'));
  const name = `svc_codegen_${process.pid}`;
  const root = postgres(server, { max: 1, onnotice: () => {} });
  try {
    await migrate(withDatabase(server, name));
    const r = runCodegen(withDatabase(server, name), process.argv.includes('--verify'));
    process.stdout.write(r.output);
    process.exitCode = r.ok ? 0 : 1;
  } finally {
    await root.unsafe(`drop database if exists ${name} with (force)`);
    await root.end();
    await embedded?.stop();
  }
}
