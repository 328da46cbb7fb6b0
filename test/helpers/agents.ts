// Shared by the agents test files: an organization with a client holding every Role, its app on
// a real port when a test needs a socket, and a project whose tasks need triage.
import type { Test } from 'tap';
import { startApp, type TestApp } from './app.ts';
import { createServer } from '../../src/http/server.ts';

let n = 0;
export const key = () => ({ 'idempotency-key': `a-${++n}-${Math.random()}` });

export async function world(t: Test, env: Record<string, string> = {}) {
  const a = await startApp(t, { SVC_WORKER: 'off', ...env });
  const p = await a.principal('member,manager,finance');
  await a.addMember(p.orgId, 'mia@x.example', { roles: 'manager' });
  await a.addMember(p.orgId, 'ned@x.example');
  return { a, p };
}

/** The app on a real port (event streams need a socket, not inject), stopped with the test. */
export async function liveServer(t: Test, a: TestApp): Promise<string> {
  const live = await createServer({ ...a.app, config: { ...a.app.config, port: 0, host: '127.0.0.1' } });
  await live.start();
  t.teardown(() => live.stop({ timeout: 1000 }));
  return live.info.uri;
}

export const startRun = (a: TestApp, token: string, agent: string, body: unknown) =>
  a.request({ method: 'POST', url: `/v1/agents/${agent}/runs`, token, headers: key(), payload: body });
export const getRun = async (a: TestApp, token: string, id: string) => (await a.request({ url: `/v1/runs/${id}`, token })).json;

/** A project managed by mia with tasks needing attention: overdue and unassigned, waiting on an
 * open predecessor, and blocked with nothing to wait for. */
export async function triageProject(a: TestApp, token: string) {
  const post = async (url: string, payload: unknown) => {
    const r = await a.request({ method: 'POST', url, token, headers: key(), payload });
    if (r.statusCode >= 300) throw new Error(r.body);
    return r.json;
  };
  const project = (await post('/v1/projects', { code: `T${++n}`, name: 'Triage', manager_member_id: 'mia@x.example' })).id;
  const overdue = (await post('/v1/tasks', { project_id: project, name: 'Overdue', due_at: '2026-01-05T09:00:00Z' })).id;
  const first = (await post('/v1/tasks', { project_id: project, name: 'First' })).id;
  const waiting = await a.request({ method: 'POST', url: '/v1/tasks', token, headers: key(), payload: { project_id: project, name: 'Waiting' } });
  const dep = await a.request({ method: 'PUT', url: `/v1/tasks/${waiting.json.id}/dependencies`, token,
    headers: { 'if-match': waiting.headers.etag }, payload: { predecessor_task_ids: [first] } });
  if (dep.statusCode !== 200) throw new Error(dep.body);
  const stuck = (await post('/v1/tasks', { project_id: project, name: 'Stuck' })).id;
  await post(`/v1/tasks/${stuck}/transitions`, { transition: 'block' });
  return { project, overdue, first, waiting: waiting.json.id, stuck };
}
