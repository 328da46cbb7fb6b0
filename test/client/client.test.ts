// The generated client: its committed files are fresh, and examples/quickstart.ts runs against a
// real listening server (a child process needs a socket, not server.inject).
import t from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createTestDatabase } from '../helpers/app.ts';
import { loadConfig } from '../../src/config.ts';
import { connect } from '../../src/db/database.ts';
import { createAppContext } from '../../src/http/context.ts';
import { createServer } from '../../src/http/server.ts';
import { run as admin } from '../../src/admin/cli.ts';
import { renderClient, CLIENT_FILES } from '../../scripts/client.ts';
import { createSvcClient } from '../../client/index.ts';

t.test('client/openapi.json and client/schema.d.ts are fresh', async (t) => {
  const fresh = await renderClient();
  const committed = (f: string) => { try { return readFileSync(f, 'utf8'); } catch { return undefined; } };
  // t.ok rather than t.equal: a diff of two 500 kB files helps nobody; the fix is one command.
  for (const [file, text] of [[CLIENT_FILES.openapi, fresh.openapi], [CLIENT_FILES.schema, fresh.schema],
    [CLIENT_FILES.lintIgnore, fresh.lintIgnore]] as const) {
    const same = committed(file) === text;
    t.ok(same, same ? `${file} is up to date` : `${file} is stale: run make client`);
  }
});

/** Runs the quickstart as a user would; async, because the server answering it lives in this process. */
function quickstart(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['tsx', 'examples/quickstart.ts'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c; });
    child.stderr.on('data', (c: Buffer) => { stderr += c; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

t.test('examples/quickstart.ts against a live server', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const base = loadConfig({ ...process.env, RATE_LIMIT_REQUESTS: '100000', LOG_LEVEL: 'silent', DATABASE_URL: adminUrl });
  // PORT must be positive in the environment; port 0 (any free port) is set on the object.
  const config = { ...base, port: 0, host: '127.0.0.1' };
  const database = connect(config.runtimeDatabaseUrl, 5);
  const server = await createServer(await createAppContext(config, database));
  await server.start();
  t.teardown(async () => {
    await server.stop();
    await database.close();
  });
  const baseUrl = server.info.uri;

  const cli = async (...argv: string[]) => {
    const r = await admin(argv, adminUrl);
    if (r.code !== 0) throw new Error(`svc-admin ${argv.join(' ')}: ${JSON.stringify(r.err)}`);
    return r.out as Record<string, string>;
  };
  const { organization_id: org } = await cli('org', 'create', '--name', 'Quickstart Org', '--plan', 'business',
    '--timezone', 'Europe/Berlin', '--currency', 'EUR', '--locale', 'en-GB');
  const client = await cli('client', 'create', '--org', org!, '--name', 'quickstart', '--license', 'manager', '--roles', 'member,manager');
  const env = { SVC_BASE_URL: baseUrl, SVC_CLIENT_ID: client.client_id!, SVC_CLIENT_SECRET: client.client_secret! };

  const run = await quickstart(env);
  t.equal(run.code, 0, run.code === 0 ? 'exits 0' : `exits 0\n${run.stdout}${run.stderr}`);
  const projectId = /created project (prj_\w+)/.exec(run.stdout)?.[1];
  const taskId = /created task (tsk_\w+)/.exec(run.stdout)?.[1];
  t.ok(projectId && taskId, projectId && taskId ? 'printed the project and task ids' : `printed the ids\n${run.stdout}`);
  if (!projectId || !taskId) return;
  t.match(run.stdout, new RegExp(`tasks in \\S+: ${taskId} `), 'listed the new task in its project');

  // Both exist, read back over HTTP with the same typed client.
  const svc = createSvcClient({ baseUrl, clientId: env.SVC_CLIENT_ID, clientSecret: env.SVC_CLIENT_SECRET });
  const project = await svc.GET('/v1/projects/{project_id}', { params: { path: { project_id: projectId } } });
  t.equal(project.data?.id, projectId, 'the project exists');
  const task = await svc.GET('/v1/tasks/{task_id}', { params: { path: { task_id: taskId } } });
  t.equal(task.data?.project_id, projectId, 'the task exists in that project');

  const refused = await quickstart({ ...env, SVC_CLIENT_SECRET: 'wrong' });
  t.equal(refused.code, 1, 'a refused token request exits 1');
  t.match(refused.stderr, /INVALID_CLIENT: \S/, 'and prints the code and detail');
});
