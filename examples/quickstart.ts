// Quickstart: authenticate, create a project and a task in it, list both.
//   SVC_BASE_URL=http://127.0.0.1:3000 SVC_CLIENT_ID=… SVC_CLIENT_SECRET=… npx tsx examples/quickstart.ts
// Exits 0 on success; on an error response prints the problem's code and detail and exits 1.
import { randomUUID } from 'node:crypto';
import { createSvcClient, SvcTokenError } from '../client/index.ts';

const { SVC_BASE_URL, SVC_CLIENT_ID, SVC_CLIENT_SECRET } = process.env;
if (!SVC_BASE_URL || !SVC_CLIENT_ID || !SVC_CLIENT_SECRET) {
  console.error('set SVC_BASE_URL, SVC_CLIENT_ID and SVC_CLIENT_SECRET (see examples/README.md)');
  process.exit(1);
}

class ApiProblem extends Error {
  constructor(readonly status: number, readonly code: string, readonly detail: string) { super(`${code}: ${detail}`); }
}

/** The data of a successful response; an error response (problem+json) becomes an ApiProblem. */
function ok<T>(r: { data?: T; error?: { code: string; detail?: string }; response: Response }): T {
  if (r.data !== undefined) return r.data;
  throw new ApiProblem(r.response.status, r.error?.code ?? 'UNKNOWN', r.error?.detail ?? r.response.statusText);
}

const svc = createSvcClient({ baseUrl: SVC_BASE_URL, clientId: SVC_CLIENT_ID, clientSecret: SVC_CLIENT_SECRET });

try {
  const me = ok(await svc.GET('/v1/me'));
  console.log(`authenticated as ${me.name} (${me.id}), Roles: ${me.svc_roles.join(', ')}`);

  // Writes take an Idempotency-Key: a retry with the same key returns the first response.
  const suffix = Date.now().toString(36).toUpperCase();
  const project = ok(await svc.POST('/v1/projects', {
    params: { header: { 'Idempotency-Key': randomUUID() } },
    body: { code: `QS-${suffix}`, name: `Quickstart ${suffix}` },
  }));
  console.log(`created project ${project.id} ${project.code} "${project.name}"`);

  const task = ok(await svc.POST('/v1/tasks', {
    params: { header: { 'Idempotency-Key': randomUUID() } },
    body: { project_id: project.id, name: 'Write the first task' },
  }));
  console.log(`created task ${task.id} "${task.name}" (status ${task.status})`);

  const tasks = ok(await svc.GET('/v1/tasks', { params: { query: { project_id: project.id } } }));
  console.log(`tasks in ${project.code}: ${tasks.data.map((t) => `${t.id} "${t.name}"`).join(', ')}`);

  const projects = ok(await svc.GET('/v1/projects', { params: { query: { limit: 5 } } }));
  console.log(`latest projects: ${projects.data.map((p) => p.code).join(', ')}${projects.has_more ? ', …' : ''}`);
} catch (e) {
  if (e instanceof ApiProblem || e instanceof SvcTokenError) {
    console.error(`error ${e.status} ${e.code}: ${e.detail}`);
    process.exit(1);
  }
  throw e;
}
