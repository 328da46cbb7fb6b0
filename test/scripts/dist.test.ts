// Shipped like a Node service: `npm run build` compiles src/ to dist/, and production runs
// `node dist/main.js` and `node dist/worker/main.js` without a TypeScript loader. This builds
// dist/ as `npm run build` does, then serves a request and runs a job from it.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { createTestDatabase } from '../helpers/app.ts';
import { freePort, orgWithClient, spawnApi, spawnWorker, tokenFrom } from '../helpers/processes.ts';
import { REPOSITORY } from '../helpers/repository.ts';

const ROOT = REPOSITORY;
const DIST = join(ROOT, 'dist');
// What NODE_ENV=production asks for; the test database's keys are sealed with the development key.
const PRODUCTION = { NODE_ENV: 'production', SVC_SECRET_KEY: 'dev-only-secret-key-change-me-in-production',
  SVC_RUNTIME_DB_PASSWORD: 'svc_runtime', SVC_WORKER_DB_PASSWORD: 'svc_worker' };

const jsFiles = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
  e.isDirectory() ? jsFiles(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : []);

t.test('npm run build compiles src/ to dist/', async (t) => {
  const build = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    { cwd: ROOT, encoding: 'utf8' });
  t.equal(build.status, 0, `tsc -p tsconfig.build.json: ${build.stdout}${build.stderr}`);
  const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts;
  t.equal(scripts.build, 'tsc -p tsconfig.build.json', 'npm run build is that command');
  t.equal(scripts.start, 'node dist/main.js');
  t.equal(scripts.worker, 'node dist/worker/main.js');
  // Node resolves what the compiled code names: a `.ts` specifier left behind fails only when reached.
  const left = jsFiles(DIST).flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/(?:from\s+|import\()\s*['"](\.[^'"]*\.ts)['"]/g)]
    .map((m) => `${f.slice(DIST.length + 1)}: ${m[1]}`));
  t.same(left, [], 'no relative import names a .ts file');
});

t.test('node dist/main.js serves, node dist/worker/main.js runs jobs', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const { client } = await orgWithClient(adminUrl, 'Dist Org');
  const api = await spawnApi(t, { ...PRODUCTION, DATABASE_URL: adminUrl }, 'dist/main.js');
  const token = await tokenFrom(api.url, client);
  const me = await fetch(`${api.url}/v1/me`, { headers: { authorization: `Bearer ${token}` } });
  t.equal(me.status, 200, 'GET /v1/me');
  t.equal(((await me.json()) as { id?: string }).id, client.id);

  const metricsPort = await freePort();
  const worker = spawnWorker(t, { ...PRODUCTION, DATABASE_URL: adminUrl, SVC_WORKER_METRICS_PORT: String(metricsPort) },
    'dist/worker/main.js');
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end());
  const [job] = await sql`select (graphile_worker.add_job('token_purge')).id`;
  let left = 1;
  for (const until = Date.now() + 30_000; left && Date.now() < until && worker.child.exitCode === null;
    await new Promise((r) => setTimeout(r, 200))) {
    [{ left }] = await sql`select count(*)::int as left from graphile_worker.jobs where id = ${job!.id}` as any;
  }
  if (worker.child.exitCode !== null) t.comment(worker.stderr().slice(0, 2000));
  t.equal(left, 0, 'the worker ran a job');
  t.equal((await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status, 200, 'and serves its metrics');
  t.equal(await worker.kill('SIGTERM'), 0, 'SIGTERM stops it cleanly');
  t.equal(await api.kill('SIGTERM'), 0, 'and the API');
});

t.test('the invoice PDF thread starts from dist/', async (t) => {
  // piscina loads the thread's module by file name: pdf-thread.js beside the compiled renderer.
  const { createPdfRenderer } = await import(join(DIST, 'invoices/renderer.js')) as typeof import('../../src/invoices/renderer.ts');
  const renderer = createPdfRenderer(1);
  await renderer.warm();
  await renderer.close();
  t.pass('warmed a thread');
});

t.test('production names its own runtime and worker passwords', async (t) => {
  const { loadConfig } = await import('../../src/config.ts');
  const env = { DATABASE_URL: 'postgres://owner@db/svc', NODE_ENV: 'production', SVC_SECRET_KEY: 'k', SVC_WORKER_DB_PASSWORD: 'w' };
  t.throws(() => loadConfig(env), /SVC_RUNTIME_DB_PASSWORD \(or RUNTIME_DATABASE_URL\) is required/,
    'not the development default anyone can read');
  t.match(loadConfig({ ...env, SVC_RUNTIME_DB_PASSWORD: 's3cret' }).runtimeDatabaseUrl, /svc_runtime:s3cret@/);
  t.equal(loadConfig({ ...env, RUNTIME_DATABASE_URL: 'postgres://svc_runtime:x@db/svc' }).runtimeDatabaseUrl, 'postgres://svc_runtime:x@db/svc');
  const api = { ...env, SVC_RUNTIME_DB_PASSWORD: 's3cret', SVC_WORKER_DB_PASSWORD: undefined };
  t.throws(() => loadConfig(api), /SVC_WORKER_DB_PASSWORD \(or WORKER_DATABASE_URL\) is required/, 'nor the worker\'s, where the worker runs');
  t.ok(loadConfig({ ...api, SVC_WORKER: 'off' }), 'an API without the worker needs none');
  t.match(loadConfig({ ...api, SVC_WORKER_DB_PASSWORD: 'w0rk' }).workerDatabaseUrl, /svc_worker:w0rk@/);
  t.equal(loadConfig({ ...api, WORKER_DATABASE_URL: 'postgres://svc_worker:y@db/svc' }).workerDatabaseUrl, 'postgres://svc_worker:y@db/svc');
});
