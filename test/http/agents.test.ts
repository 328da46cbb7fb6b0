// Agents and runs over HTTP: discovery and readiness by Role, licence and principal type; runs
// executed as the client with every tool call checked and audited; requires_action and its
// choices; cancellation; retention; the event stream with a real SSE client (reconnect included);
// a model-backed agent against a scripted provider on loopback; every Agents and Runs code.
import t, { type Test } from 'tap';
import http from 'node:http';
import { EventSource } from 'eventsource';
import { startApp, assertProblem, type TestApp } from '../helpers/app.ts';
import { createServer } from '../../src/http/server.ts';
import { executeRun } from '../../src/agents/engine.ts';
import { startWorker } from '../../src/worker/index.ts';
import { beginRequest } from '../helpers/sql.ts';

let n = 0;
const key = () => ({ 'idempotency-key': `a-${++n}-${Math.random()}` });

async function world(t: Test, env: Record<string, string> = {}) {
  const a = await startApp(t, { SVC_WORKER: 'off', ...env });
  const p = await a.principal('member,manager,finance');
  await a.addMember(p.orgId, 'mia@x.example', { roles: 'manager' });
  await a.addMember(p.orgId, 'ned@x.example');
  return { a, p };
}

/** The app on a real port (event streams need a socket, not inject), stopped with the test. */
async function liveServer(t: Test, a: TestApp): Promise<string> {
  const live = await createServer({ ...a.app, config: { ...a.app.config, port: 0, host: '127.0.0.1' } });
  await live.start();
  t.teardown(() => live.stop({ timeout: 1000 }));
  return live.info.uri;
}

const startRun = (a: TestApp, token: string, agent: string, body: unknown) =>
  a.request({ method: 'POST', url: `/v1/agents/${agent}/runs`, token, headers: key(), payload: body });
const getRun = async (a: TestApp, token: string, id: string) => (await a.request({ url: `/v1/runs/${id}`, token })).json;

/** A project managed by mia with tasks needing attention: overdue and unassigned, waiting on an
 * open predecessor, and blocked with nothing to wait for. */
async function triageProject(a: TestApp, token: string) {
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

t.test('discovery: published agents for API Clients whose Roles the client holds', async (t) => {
  const { a, p } = await world(t);
  const ids = async (token: string) => (await a.request({ url: '/v1/agents', token })).json.data.map((d: any) => d.id);
  t.same(await ids(p.token), ['agt_assistant', 'agt_echo', 'agt_invoice_draft', 'agt_missing_time', 'agt_task_triage']);
  const member = await a.token(await a.createClient(p.orgId, { roles: 'member', license: 'regular' }));
  t.same(await ids(member), ['agt_assistant', 'agt_echo']);
  t.match((await a.request({ url: '/v1/agents/agt_task_triage', token: p.token })).json, {
    object: 'agent', id: 'agt_task_triage', status: 'published', accepted_principal_types: ['api_client', 'member'],
    required_roles: ['manager'], supports_subject: false, input_schema: { required: ['project_id'] }, output_schema: { type: 'object' },
    version: '1.0.0', skills: ['tasks.find_attention', 'tasks.transition', 'tasks.assign'],
  });
  assertProblem(t, await a.request({ url: '/v1/agents/agt_nope', token: p.token }), 404, 'AGENT_NOT_FOUND');
  assertProblem(t, await a.request({ url: '/v1/agents/agt_timesheet_coach', token: p.token }), 403, 'API_PRINCIPAL_NOT_SUPPORTED');
  assertProblem(t, await a.request({ url: '/v1/agents/agt_task_triage', token: member }), 403, 'ROLE_REQUIRED');
  await a.cli('agent', 'unpublish', '--org', p.orgId, '--agent', 'agt_echo');
  assertProblem(t, await a.request({ url: '/v1/agents/agt_echo', token: p.token }), 404, 'AGENT_NOT_PUBLISHED');
  assertProblem(t, await startRun(a, p.token, 'agt_echo', {}), 404, 'AGENT_NOT_PUBLISHED');
  t.notOk((await ids(p.token)).includes('agt_echo'));
  await a.cli('agent', 'publish', '--org', p.orgId, '--agent', 'agt_echo');
  t.ok((await ids(p.token)).includes('agt_echo'));
  // Another organization's publications are its own.
  const other = await a.principal('member,manager');
  t.ok((await ids(other.token)).includes('agt_echo'));
});

t.test('readiness lists every blocker and performs nothing', async (t) => {
  const { a, p } = await world(t);
  const ready = (token: string, agent: string, payload: unknown) =>
    a.request({ method: 'POST', url: `/v1/agents/${agent}/readiness`, token, payload });
  t.match((await ready(p.token, 'agt_echo', { input: { message: 'hi' } })).json,
    { object: 'agent_readiness', agent_id: 'agt_echo', ready: true, blockers: [] });
  const member = await a.token(await a.createClient(p.orgId, { roles: 'member', license: 'regular' }));
  const r = (await ready(member, 'agt_task_triage', { input: { project_id: 7 } })).json;
  t.equal(r.ready, false);
  t.same(r.blockers.map((b: any) => [b.code, b.skill ?? b.pointer ?? null]), [
    ['LICENSE_LEVEL_REQUIRED', 'tasks.transition'], ['LICENSE_LEVEL_REQUIRED', 'tasks.assign'], ['ROLE_REQUIRED', null],
    ['AGENT_INPUT_INVALID', '/input/project_id']]);
  t.match(r.skills, [{ name: 'tasks.find_attention', required: true, available: true }, { name: 'tasks.transition', available: false }, {}]);
  t.same((await ready(p.token, 'agt_assistant', { input: { prompt: 'hi' } })).json.blockers.map((b: any) => b.code), ['AGENT_UNAVAILABLE']);
  t.same((await ready(p.token, 'agt_invoice_draft', {})).json.blockers.map((b: any) => [b.code, b.skill ?? b.pointer]), [
    ['INTEGRATION_CONNECTION_NOT_READY', 'invoices.create_draft'], ['AGENT_INPUT_INVALID', '/input/customer_id'],
    ['AGENT_INPUT_INVALID', '/input/project_id'], ['AGENT_INPUT_INVALID', '/input/from'], ['AGENT_INPUT_INVALID', '/input/to'],
    ['AGENT_INPUT_INVALID', '/input/hourly_rate']]);
  t.same((await ready(p.token, 'agt_echo', { subject: { member_id: 'ned@x.example' } })).json.blockers.map((b: any) => b.code), ['SUBJECT_NOT_SUPPORTED']);
  t.same((await ready(p.token, 'agt_missing_time', { input: { from: '2026-11-02', to: '2026-11-06' }, subject: { member_id: 'nobody@x.example' } }))
    .json.blockers.map((b: any) => b.code), ['INVALID_SUBJECT_MEMBER']);
  assertProblem(t, await ready(p.token, 'agt_nope', {}), 404, 'AGENT_NOT_FOUND');
  t.equal((await a.admin`select count(*)::int as n from app.runs`)[0]!.n, 0, 'nothing started');
});

t.test('createAgentRun: every Agents error code', async (t) => {
  const { a, p } = await world(t);
  const member = await a.token(await a.createClient(p.orgId, { roles: 'member', license: 'regular' }));
  const managerLicenceMemberRole = await a.token(await a.createClient(p.orgId, { roles: 'member', license: 'manager' }));
  assertProblem(t, await startRun(a, p.token, 'agt_nope', {}), 404, 'AGENT_NOT_FOUND');
  assertProblem(t, await startRun(a, p.token, 'agt_timesheet_coach', {}), 403, 'API_PRINCIPAL_NOT_SUPPORTED');
  assertProblem(t, await startRun(a, member, 'agt_task_triage', { input: { project_id: 'prj_x' } }), 403, 'LICENSE_LEVEL_REQUIRED');
  assertProblem(t, await startRun(a, managerLicenceMemberRole, 'agt_task_triage', { input: { project_id: 'prj_x' } }), 403, 'ROLE_REQUIRED');
  const subj = await startRun(a, p.token, 'agt_echo', { input: {}, subject: { member_id: 'ned@x.example' } });
  assertProblem(t, subj, 422, 'SUBJECT_NOT_SUPPORTED');
  t.equal(subj.json.errors[0].pointer, '/subject');
  const bad = await startRun(a, p.token, 'agt_missing_time', { input: { from: 'monday', extra: true } });
  assertProblem(t, bad, 422, 'AGENT_INPUT_INVALID');
  t.same(bad.json.errors.map((e: any) => e.pointer).sort(), ['/input/extra', '/input/from', '/input/to']);
  assertProblem(t, await startRun(a, p.token, 'agt_missing_time', { input: { from: '2026-11-02', to: '2026-11-06' }, subject: { member_id: 'nobody@x.example' } }),
    422, 'INVALID_SUBJECT_MEMBER');
  assertProblem(t, await startRun(a, p.token, 'agt_invoice_draft',
    { input: { customer_id: 'cus_x', project_id: 'prj_x', from: '2026-11-01', to: '2026-11-30', hourly_rate: '100.00' } }), 409, 'INTEGRATION_CONNECTION_NOT_READY');
  assertProblem(t, await startRun(a, p.token, 'agt_assistant', { input: { prompt: 'hello' } }), 409, 'AGENT_UNAVAILABLE');
  t.equal((await a.admin`select count(*)::int as n from app.runs`)[0]!.n, 0, 'no refused run was created');

  // Accepted: 202, queued, the Location, idempotent replay.
  const headers = key();
  const ok = await a.request({ method: 'POST', url: '/v1/agents/agt_missing_time/runs', token: p.token, headers,
    payload: { input: { from: '2026-11-02', to: '2026-11-06' }, subject: { member_id: 'ned@x.example' }, metadata: { ticket: 'T-1' } } });
  t.equal(ok.statusCode, 202);
  t.match(ok.json, { object: 'run', id: /^run_/, kind: 'agent', status: 'queued', agent_id: 'agt_missing_time', agent_version: '1.0.0',
    actor: { type: 'api_client', id: p.id }, subject: { member_id: 'ned@x.example' }, metadata: { ticket: 'T-1' }, output: null,
    required_action: null, error: null, tool_operations: [], started_at: null, completed_at: null });
  t.equal(ok.headers.location, `/v1/runs/${ok.json.id}`);
  const again = await a.request({ method: 'POST', url: '/v1/agents/agt_missing_time/runs', token: p.token, headers,
    payload: { input: { from: '2026-11-02', to: '2026-11-06' }, subject: { member_id: 'ned@x.example' }, metadata: { ticket: 'T-1' } } });
  t.equal(again.json.id, ok.json.id);
  t.equal(again.headers['idempotent-replayed'], 'true');

  // Executed as the client, for the subject only: ned recorded nothing that week.
  t.equal(await executeRun(a.admin, a.config, ok.json.id), 'succeeded');
  const done = await getRun(a, p.token, ok.json.id);
  t.match(done, { status: 'succeeded', output: { from: '2026-11-02', to: '2026-11-06',
    members: [{ member_id: 'ned@x.example', missing_dates: ['2026-11-02', '2026-11-03', '2026-11-04', '2026-11-05', '2026-11-06'] }] },
  tool_operations: [{ skill: 'time.missing_days', status: 'completed', resources: [{ type: 'member', id: 'ned@x.example' }], error_code: null }],
  started_at: /Z$/, completed_at: /Z$/ });
  t.equal(done.output.members.length, 1);
});

t.test('runs: only the creating client sees them; filters; cancel; retention', async (t) => {
  const { a, p } = await world(t);
  const echo = (await startRun(a, p.token, 'agt_echo', { input: { message: 'one' } })).json;
  const other = await a.token(await a.createClient(p.orgId, { roles: 'member,manager,finance' }));
  for (const res of [
    await a.request({ url: `/v1/runs/${echo.id}`, token: other }),
    await a.request({ url: `/v1/runs/${echo.id}/events`, token: other }),
    await a.request({ method: 'POST', url: `/v1/runs/${echo.id}/cancel`, token: other, headers: key() }),
    await a.request({ method: 'POST', url: `/v1/runs/${echo.id}/actions`, token: other, headers: key(), payload: { action_id: 'x', response: {} } }),
  ]) assertProblem(t, res, 404, 'RUN_NOT_FOUND');
  t.same((await a.request({ url: '/v1/runs', token: other })).json.data, []);

  // Cancel a queued run: cancelled, terminal, and a second cancel is RUN_ALREADY_TERMINAL.
  const queued = (await startRun(a, p.token, 'agt_echo', { input: { message: 'two' } })).json;
  const cancelled = await a.request({ method: 'POST', url: `/v1/runs/${queued.id}/cancel`, token: p.token, headers: key() });
  t.equal(cancelled.statusCode, 200);
  t.match(cancelled.json, { status: 'cancelled', completed_at: /Z$/, tool_operations: [] });
  assertProblem(t, await a.request({ method: 'POST', url: `/v1/runs/${queued.id}/cancel`, token: p.token, headers: key() }), 409, 'RUN_ALREADY_TERMINAL');
  t.equal(await executeRun(a.admin, a.config, queued.id), 'skipped', 'a cancelled run never starts');

  t.equal(await executeRun(a.admin, a.config, echo.id), 'succeeded');
  t.match(await getRun(a, p.token, echo.id), { status: 'succeeded', output: { echo: { message: 'one' } } });
  assertProblem(t, await a.request({ method: 'POST', url: `/v1/runs/${echo.id}/cancel`, token: p.token, headers: key() }), 409, 'RUN_ALREADY_TERMINAL');
  assertProblem(t, await a.request({ method: 'POST', url: `/v1/runs/${echo.id}/actions`, token: p.token, headers: key(),
    payload: { action_id: 'x', response: { choice: 'apply' } } }), 409, 'RUN_NOT_ACTIONABLE');

  const list = async (q: string) => (await a.request({ url: `/v1/runs${q}`, token: p.token })).json.data.map((r: any) => r.id);
  t.same(await list(''), [queued.id, echo.id], 'newest first');
  t.same(await list('?status=succeeded'), [echo.id]);
  t.same(await list('?agent_id=agt_echo&kind=agent'), [queued.id, echo.id]);
  t.same(await list(`?created_after=${encodeURIComponent('2100-01-01T00:00:00Z')}`), []);
  t.same(await list(`?created_before=${encodeURIComponent('2100-01-01T00:00:00Z')}&limit=1`), [queued.id]);
  assertProblem(t, await a.request({ url: '/v1/runs?status=done', token: p.token }), 400, 'INVALID_REQUEST');

  // Webhook events through the outbox for the terminal states.
  t.same((await a.admin`select type from app.events where resource_id in (${echo.id}, ${queued.id}) order by type`).map((r) => r.type),
    ['run.cancelled', 'run.completed']);

  // Retention: the output and events go; the run stays; the stream answers RUN_OUTPUT_EXPIRED.
  t.equal((await a.admin`select control.purge_expired_runs(interval '0 seconds') as n`)[0]!.n, 2);
  t.match(await getRun(a, p.token, echo.id), { status: 'succeeded', output: null, output_expired: true });
  assertProblem(t, await a.request({ url: `/v1/runs/${echo.id}/events`, token: p.token }), 410, 'RUN_OUTPUT_EXPIRED');
});

t.test('the state machine and terminal immutability hold in SQL for every writer', async (t) => {
  const { a, p } = await world(t);
  const run = (await startRun(a, p.token, 'agt_echo', {})).json;
  const sqlstate = async (q: Promise<unknown>) => { try { await q; return 'ok'; } catch (e) { return (e as { message: string }).message; } };
  t.equal(await sqlstate(a.admin`update app.runs set status = 'succeeded', output = '{}', completed_at = now() where id = ${run.id}`), 'CONFLICT',
    'queued cannot jump to succeeded');
  t.equal(await sqlstate(a.admin`update app.runs set input = '{"x":1}' where id = ${run.id}`), 'CONFLICT', 'the request never changes');
  t.equal(await sqlstate(a.admin`insert into app.runs (organization_id, kind, agent_id, client_id, input, status) values (${p.orgId}, 'agent', 'agt_echo', ${p.id}, '{}', 'running')`),
    'CONFLICT', 'a run starts queued');
  await executeRun(a.admin, a.config, run.id);
  t.equal(await sqlstate(a.admin`update app.runs set status = 'cancelled', output = null where id = ${run.id}`), 'RUN_ALREADY_TERMINAL');
  t.equal(await sqlstate(a.admin`update app.runs set output = '{"echo":{"forged":true}}' where id = ${run.id}`), 'RUN_ALREADY_TERMINAL');
  t.equal(await sqlstate(a.admin`update app.runs set status = 'failed', error = '{}', output = null where id = ${run.id}`), 'RUN_ALREADY_TERMINAL');
  // Events are ordered per run: started, progress, completed.
  t.same((await a.admin`select seq, type from app.run_events where run_id = ${run.id} order by seq`).map((r) => `${r.seq} ${r.type}`),
    ['1 run.started', '2 run.progress', '3 run.completed']);
  // As svc_runtime without a request context: no run, no event, no tool call, no publication.
  const rt = (await import('postgres')).default(a.runtimeUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => rt.end());
  for (const table of ['api.runs', 'api.agents']) {
    t.equal((await rt.unsafe(`select count(*)::int as n from ${table}`))[0]!.n, 0, `${table}: nothing without a context`);
  }
  for (const table of ['app.runs', 'app.run_events', 'app.run_tool_calls', 'app.agent_publications']) {
    t.not(await sqlstate(rt.unsafe(`select count(*) from ${table}`)), 'ok', `${table}: not readable by svc_runtime`);
  }
  t.not(await sqlstate(rt`select app_private.run_tool(${run.id}, 'tasks.transition', '{}')`), 'ok', 'the worker\'s tool path is not callable');
  // Another client of the same organization, with a real request context: still none of these runs.
  const other = await a.createClient(p.orgId, { roles: 'member,manager,finance' });
  const seen = await rt.begin(async (tx) => {
    await beginRequest(tx, other);
    return [(await tx`select count(*)::int as n from api.runs`)[0]!.n, (await tx`select count(*)::int as n from api.run_get(${run.id})`)[0]!.n];
  });
  t.same(seen, [0, 0], 'runs are the creating client\'s only');
  const own = await rt.begin(async (tx) => {
    await beginRequest(tx, p);
    return (await tx`select count(*)::int as n from api.runs`)[0]!.n;
  });
  t.equal(own, 1);
  // A client cannot move its own run through the api surface outside the state machine either.
  t.equal(await sqlstate(rt.begin(async (tx) => {
    await beginRequest(tx, p);
    await tx`select api.run_cancel(${run.id})`;
  })), 'RUN_ALREADY_TERMINAL');
});

t.test('task triage for a Manager-only client: a skill needs one of its Roles (tasks are read by member or manager)', async (t) => {
  const { a, p } = await world(t);
  const tasks = await triageProject(a, p.token);
  const manager = await a.token(await a.createClient(p.orgId, { roles: 'manager', license: 'manager' }));
  const ready = await a.request({ method: 'POST', url: '/v1/agents/agt_task_triage/readiness', token: manager,
    payload: { input: { project_id: tasks.project } } });
  t.equal(ready.statusCode, 200);
  t.match(ready.json, { ready: true, blockers: [] });
  t.ok(ready.json.skills.every((s: any) => s.available), 'every skill is available');
  const run = (await startRun(a, manager, 'agt_task_triage', { input: { project_id: tasks.project } })).json;
  t.equal(await executeRun(a.admin, a.config, run.id), 'requires_action');
  t.equal((await getRun(a, manager, run.id)).required_action.proposals.length, 3, 'the three tasks needing attention');
  // A client with neither Role still gets ROLE_REQUIRED (finance only).
  const finance = await a.token(await a.createClient(p.orgId, { roles: 'finance', license: 'manager' }));
  assertProblem(t, await startRun(a, finance, 'agt_task_triage', { input: { project_id: tasks.project } }), 403, 'ROLE_REQUIRED');
});

t.test('a writing tool call happens once per run: a job retried after its worker died does not write again', async (t) => {
  const { a, p } = await world(t);
  const tasks = await triageProject(a, p.token);
  const run = (await startRun(a, p.token, 'agt_task_triage', { input: { project_id: tasks.project } })).json;
  t.equal(await executeRun(a.admin, a.config, run.id), 'requires_action');
  t.equal((await a.request({ method: 'POST', url: `/v1/runs/${run.id}/actions`, token: p.token, headers: key(),
    payload: { action_id: 'confirm_triage', response: { choice: 'apply', proposal_ids: ['p3'] } } })).statusCode, 202);
  // As a worker would, twice: the same transition, as a retried job replays its steps.
  await a.admin`select app_private.run_start(${run.id})`;
  const args = JSON.stringify({ task_id: tasks.stuck, transition: 'unblock' });
  const first = (await a.admin`select app_private.run_tool(${run.id}, 'tasks.transition', ${args}::text::jsonb) as r`)[0]!.r;
  const again = (await a.admin`select app_private.run_tool(${run.id}, 'tasks.transition', ${args}::text::jsonb) as r`)[0]!.r;
  t.match(first, { ok: true, result: { resources: [{ type: 'task', id: tasks.stuck }] } });
  t.notOk(first.replayed);
  t.same(again, { ...first, replayed: true }, 'the second call answers the first result');
  const calls = await a.admin`select status from app.run_tool_calls where run_id = ${run.id} and skill = 'tasks.transition'`;
  t.same(calls.map((c) => c.status), ['completed'], 'one call recorded');
  const moves = await a.admin`select count(*)::int as n from app.task_activity where task_id = ${tasks.stuck} and kind = 'transition'`;
  t.equal(moves[0]!.n, 2, 'block (setup) and one unblock');
  // Reads are not remembered: each find_attention call reads again.
  const find = JSON.stringify({ project_id: tasks.project });
  const read = (await a.admin`select app_private.run_tool(${run.id}, 'tasks.find_attention', ${find}::text::jsonb) as r`)[0]!.r;
  t.notOk(read.replayed);
});

t.test('task triage: an assignment proposed from what was read is refused if the task changed before confirmation', async (t) => {
  const { a, p } = await world(t);
  const tasks = await triageProject(a, p.token);
  const run = (await startRun(a, p.token, 'agt_task_triage', { input: { project_id: tasks.project } })).json;
  t.equal(await executeRun(a.admin, a.config, run.id), 'requires_action');
  const proposal = (await getRun(a, p.token, run.id)).required_action.proposals.find((x: any) => x.kind === 'assign');
  t.match(proposal, { id: 'p1', task_id: tasks.overdue, assignee_member_ids: ['mia@x.example'], expected_version: Number });
  // Someone assigns the task meanwhile.
  const read = await a.request({ url: `/v1/tasks/${tasks.overdue}`, token: p.token });
  const patched = await a.request({ method: 'PATCH', url: `/v1/tasks/${tasks.overdue}`, token: p.token,
    headers: { 'if-match': read.headers.etag }, payload: { assignee_member_ids: ['ned@x.example'] } });
  t.equal(patched.statusCode, 200);
  t.equal((await a.request({ method: 'POST', url: `/v1/runs/${run.id}/actions`, token: p.token, headers: key(),
    payload: { action_id: 'confirm_triage', response: { choice: 'apply', proposal_ids: ['p1'] } } })).statusCode, 202);
  t.equal(await executeRun(a.admin, a.config, run.id), 'succeeded');
  const out = (await getRun(a, p.token, run.id)).output;
  t.same(out.applied, []);
  t.same(out.failed.map((f: any) => [f.id, f.error.code]), [['p1', 'STALE_RESOURCE']]);
  t.same((await a.request({ url: `/v1/tasks/${tasks.overdue}`, token: p.token })).json.assignee_member_ids, ['ned@x.example'], 'not overwritten');
});

t.test('task triage: proposals, requires_action, choices, tool-call checks as the client, cancel', async (t) => {
  const { a, p } = await world(t);
  const tasks = await triageProject(a, p.token);
  const run = (await startRun(a, p.token, 'agt_task_triage', { input: { project_id: tasks.project } })).json;
  assertProblem(t, await a.request({ method: 'POST', url: `/v1/runs/${run.id}/actions`, token: p.token, headers: key(),
    payload: { action_id: 'confirm_triage', response: { choice: 'apply' } } }), 409, 'RUN_NOT_ACTIONABLE');
  t.equal(await executeRun(a.admin, a.config, run.id), 'requires_action');
  const waiting = await getRun(a, p.token, run.id);
  t.match(waiting, { status: 'requires_action', required_action: { id: 'confirm_triage', type: 'confirmation',
    schema: { properties: { choice: { enum: ['apply', 'dismiss'] } } } } });
  const proposals = waiting.required_action.proposals;
  t.same(proposals.map((x: any) => [x.kind, x.task_id, x.transition ?? x.assignee_member_ids]), [
    ['assign', tasks.overdue, ['mia@x.example']],
    ['transition', tasks.waiting, 'block'],
    ['transition', tasks.stuck, 'unblock'],
  ]);
  const act = (payload: unknown) => a.request({ method: 'POST', url: `/v1/runs/${run.id}/actions`, token: p.token, headers: key(), payload });
  const wrongId = await act({ action_id: 'other', response: { choice: 'apply' } });
  assertProblem(t, wrongId, 422, 'RUN_ACTION_INVALID');
  t.equal(wrongId.json.errors[0].pointer, '/action_id');
  const wrongChoice = await act({ action_id: 'confirm_triage', response: { choice: 'approve' } });
  assertProblem(t, wrongChoice, 422, 'RUN_ACTION_INVALID');
  t.equal(wrongChoice.json.errors[0].pointer, '/response/choice');
  assertProblem(t, await act({ action_id: 'confirm_triage', response: { choice: 'apply', proposal_ids: ['p9'] } }), 422, 'RUN_ACTION_INVALID');

  // The client loses manager before the run applies: every write is refused as the client would be.
  await a.cli('client', 'set-roles', '--client', p.id, '--roles', 'member');
  const accepted = await act({ action_id: 'confirm_triage', response: { choice: 'apply', proposal_ids: ['p2', 'p3'] } });
  t.equal(accepted.statusCode, 202);
  t.match(accepted.json, { status: 'queued', required_action: null });
  t.equal(await executeRun(a.admin, a.config, run.id), 'succeeded');
  const refused = (await a.admin`select output from app.runs where id = ${run.id}`)[0]!.output;
  t.same(refused.applied, []);
  t.same(refused.failed.map((f: any) => f.error.code), ['ROLE_REQUIRED', 'ROLE_REQUIRED']);
  const calls = await a.admin`select skill, status, error_code, run_id from app.run_tool_calls where run_id = ${run.id} order by n`;
  t.same(calls.map((c) => [c.skill, c.status, c.error_code]), [
    ['tasks.find_attention', 'completed', null], ['tasks.transition', 'failed', 'ROLE_REQUIRED'], ['tasks.transition', 'failed', 'ROLE_REQUIRED']]);
  t.equal((await a.admin`select status from app.tasks where id = ${tasks.stuck}`)[0]!.status, 'blocked', 'nothing changed');

  // With the Role back, a new run applies what is confirmed.
  await a.cli('client', 'set-roles', '--client', p.id, '--roles', 'member,manager,finance');
  const token = await a.token(p);
  const second = (await startRun(a, token, 'agt_task_triage', { input: { project_id: tasks.project } })).json;
  await executeRun(a.admin, a.config, second.id);
  t.equal((await a.request({ method: 'POST', url: `/v1/runs/${second.id}/actions`, token, headers: key(),
    payload: { action_id: 'confirm_triage', response: { choice: 'apply' } } })).statusCode, 202);
  t.equal(await executeRun(a.admin, a.config, second.id), 'succeeded');
  const out = (await getRun(a, token, second.id));
  t.equal(out.output.applied.length, 3);
  t.same(out.output.failed, []);
  t.same(out.tool_operations.map((o: any) => `${o.skill} ${o.status}`),
    ['tasks.find_attention completed', 'tasks.assign completed', 'tasks.transition completed', 'tasks.transition completed']);
  const task = async (id: string) => (await a.request({ url: `/v1/tasks/${id}`, token })).json;
  t.equal((await task(tasks.stuck)).status, 'in_progress');
  t.equal((await task(tasks.waiting)).status, 'blocked');
  t.same((await task(tasks.overdue)).assignee_member_ids, ['mia@x.example']);
  const activity = await a.admin`select actor_client_id from app.task_activity where task_id = ${tasks.stuck} and kind = 'transition' order by created_at desc limit 1`;
  t.equal(activity[0]!.actor_client_id, p.id, 'the client is the actor');

  // Cancel while requires_action: cancelled, listing the completed tool operation; its effect stays.
  const fresh = await triageProject(a, token);
  const third = (await startRun(a, token, 'agt_task_triage', { input: { project_id: fresh.project } })).json;
  await executeRun(a.admin, a.config, third.id);
  const c = await a.request({ method: 'POST', url: `/v1/runs/${third.id}/cancel`, token, headers: key() });
  t.match(c.json, { status: 'cancelled', tool_operations: [{ skill: 'tasks.find_attention', status: 'completed' }] });

  // A cancel that meets a run applying a tool operation (its row held) is not available now.
  const fourth = (await startRun(a, token, 'agt_echo', {})).json;
  let release!: () => void;
  const held = new Promise<void>((r) => { release = r; });
  const locking = a.admin.begin(async (tx) => {
    await tx`select 1 from app.runs where id = ${fourth.id} for update`;
    await held;
  });
  await new Promise((r) => setTimeout(r, 100));
  assertProblem(t, await a.request({ method: 'POST', url: `/v1/runs/${fourth.id}/cancel`, token, headers: key() }), 409, 'RUN_CANCEL_NOT_AVAILABLE');
  release();
  await locking;
  t.equal((await a.request({ method: 'POST', url: `/v1/runs/${fourth.id}/cancel`, token, headers: key() })).statusCode, 200);

  // An agent unpublished while a run waits: its tool calls are refused (AGENT_NOT_PUBLISHED), and the run fails.
  const fifth = (await startRun(a, token, 'agt_missing_time', { input: { from: '2026-11-02', to: '2026-11-06' } })).json;
  await a.cli('agent', 'unpublish', '--org', p.orgId, '--agent', 'agt_missing_time');
  t.equal(await executeRun(a.admin, a.config, fifth.id), 'failed');
  t.match((await a.admin`select error from app.runs where id = ${fifth.id}`)[0]!.error, { code: 'AGENT_NOT_PUBLISHED' });
});

t.test('invoice draft: lines from approved billable time, confirmed, created as the client', async (t) => {
  const { a, p } = await world(t);
  await a.cli('integration', 'add', '--org', p.orgId, '--provider', 'xero', '--category', 'accounting', '--capabilities', 'invoice.export,payment.read');
  const customer = (await a.cli('customer', 'create', '--org', p.orgId, '--name', 'Acme', '--kind', 'billing', '--currency', 'EUR',
    '--email', 'ap@acme.example')).customer_id;
  const project = (await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: key(), payload: { code: 'INV', name: 'Billable' } })).json.id;
  const entries = (await a.request({ method: 'POST', url: '/v1/time-entries/batches', token: p.token, headers: key(), payload: { entries: [
    { subject: { member_id: 'mia@x.example' }, project_id: project, work_date: '2026-11-02', minutes: 90, billable: true },
    { subject: { member_id: 'ned@x.example' }, project_id: project, work_date: '2026-11-03', minutes: 50, billable: true },
    { subject: { member_id: 'ned@x.example' }, project_id: project, work_date: '2026-11-04', minutes: 30, billable: false },
  ] } })).json;
  // Approved by a named user (the control plane): API Clients never approve.
  await a.addMember(p.orgId, 'boss@x.example', { roles: 'member,manager' });
  for (const r of entries.results) {
    const s = await a.request({ method: 'POST', url: `/v1/time-entries/${r.time_entry.id}/submit`, token: p.token, headers: key() });
    if (s.statusCode !== 200) throw new Error(s.body);
    const [row] = await a.admin`select id from app.approvals where resource_id = ${r.time_entry.id}`;
    await a.cli('approval', 'decide', '--approval', row!.id, '--decision', 'approved', '--by', 'boss@x.example');
  }
  const run = (await startRun(a, p.token, 'agt_invoice_draft', { input: { customer_id: customer, project_id: project,
    from: '2026-11-01', to: '2026-11-30', hourly_rate: '120.00' } })).json;
  t.equal(await executeRun(a.admin, a.config, run.id), 'requires_action');
  const waiting = await getRun(a, p.token, run.id);
  t.same(waiting.required_action.lines, [
    { description: 'mia@x.example: approved billable time 2026-11-01 to 2026-11-30', quantity: '1.50', unit_price: '120.00' },
    { description: 'ned@x.example: approved billable time 2026-11-01 to 2026-11-30', quantity: '0.83', unit_price: '120.00' },
  ]);
  await a.request({ method: 'POST', url: `/v1/runs/${run.id}/actions`, token: p.token, headers: key(),
    payload: { action_id: 'confirm_invoice', response: { choice: 'create' } } });
  t.equal(await executeRun(a.admin, a.config, run.id), 'succeeded');
  const done = await getRun(a, p.token, run.id);
  t.match(done.output, { invoice_id: /^inv_/, total: '279.60', currency: 'EUR' });
  const invoice = (await a.request({ url: `/v1/invoices/${done.output.invoice_id}`, token: p.token })).json;
  t.match(invoice, { status: 'draft', customer_id: customer, total: '279.60' });
});

/** A scripted OpenAI-compatible provider: each request gets the next reply; requests are kept. */
async function scriptedProvider(t: Test, replies: unknown[]) {
  const requests: any[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      requests.push({ path: req.url, authorization: req.headers.authorization, body: JSON.parse(body) });
      const reply = replies.shift();
      res.writeHead(reply ? 200 : 500, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply ? { id: 'x', object: 'chat.completion', choices: [{ index: 0, message: reply, finish_reason: 'stop' }] } : { error: 'no more replies' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`, requests };
}

t.test('a model-backed agent: tools are the client\'s skills, a forbidden tool call fails safely, nothing secret is kept', async (t) => {
  const provider = await scriptedProvider(t, []);
  const { a, p } = await world(t, { SVC_MODEL_URL: provider.url, SVC_MODEL_API_KEY: 'sk-test-secret-123', SVC_MODEL_NAME: 'scripted' });
  const tasks = await triageProject(a, p.token);
  const memberOnly = await a.createClient(p.orgId, { roles: 'member', license: 'manager' });
  const token = await a.token(memberOnly);
  t.same((await a.request({ method: 'POST', url: '/v1/agents/agt_assistant/readiness', token, payload: { input: { prompt: 'x' } } })).json.blockers, []);
  const tool = (id: string, name: string, args: unknown) => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } });
  const replies = [
    { role: 'assistant', content: null, tool_calls: [tool('c1', 'tasks__find_attention', { project_id: tasks.project })] },
    { role: 'assistant', content: null, tool_calls: [tool('c2', 'tasks__transition', { task_id: tasks.stuck, transition: 'unblock' }),
      tool('c3', 'tasks__transition', { task_id: 'not-an-id' })] },
    { role: 'assistant', content: 'Three tasks need attention; I may not change them.' },
  ];
  provider.requests.length = 0;
  const scripted = await scriptedProvider(t, replies);
  a.config.agents.modelUrl = scripted.url;
  const run = (await startRun(a, token, 'agt_assistant', { input: { prompt: 'Triage the project and unblock what you can.' } })).json;
  t.equal(await executeRun(a.admin, a.config, run.id), 'succeeded');
  const done = await getRun(a, token, run.id);
  t.same(done.output, { text: 'Three tasks need attention; I may not change them.' });
  t.same(done.tool_operations.map((o: any) => [o.skill, o.status, o.error_code]), [
    ['tasks.find_attention', 'completed', null], ['tasks.transition', 'failed', 'ROLE_REQUIRED'], ['tasks.transition', 'failed', 'TOOL_ARGUMENTS_INVALID']]);
  t.equal((await a.admin`select status from app.tasks where id = ${tasks.stuck}`)[0]!.status, 'blocked', 'the forbidden call changed nothing');
  const [first, second, third] = scripted.requests;
  t.equal(first.path, '/v1/chat/completions');
  t.equal(first.authorization, 'Bearer sk-test-secret-123');
  t.equal(first.body.model, 'scripted');
  t.same(first.body.tools.map((x: any) => x.function.name), ['tasks__find_attention'], 'only the skills this client can use are offered');
  t.match(second.body.messages.at(-1), { role: 'tool', tool_call_id: 'c1' });
  t.match(JSON.parse(third.body.messages.at(-2).content), { error: { code: 'ROLE_REQUIRED' } });
  // Nothing of the prompt machinery or the key is stored with the run or its events.
  const stored = JSON.stringify(await a.admin`select r.*, (select json_agg(e) from app.run_events e where e.run_id = r.id) as events,
    (select json_agg(c) from app.run_tool_calls c where c.run_id = r.id) as calls from app.runs r where r.id = ${run.id}`);
  t.notOk(stored.includes('sk-test-secret-123'));
  t.notOk(stored.includes('You are the work-management assistant'));
  t.match(stored, /run\.output\.delta/);

  // A provider that fails: the run fails with a run-safe error, no provider body.
  const broken = (await startRun(a, token, 'agt_assistant', { input: { prompt: 'again' } })).json;
  t.equal(await executeRun(a.admin, a.config, broken.id), 'failed');
  t.match((await getRun(a, token, broken.id)).error, { code: 'MODEL_PROVIDER_UNAVAILABLE', detail: 'the model provider answered HTTP 500' });
});

t.test('the event stream: a real SSE client, replay, Last-Event-ID, heartbeats, reconnect, the end', async (t) => {
  const { a, p } = await world(t, { SVC_STREAM_HEARTBEAT_MS: '200' });
  const base = await liveServer(t, a);
  const worker = await startWorker(a.config, { pollInterval: 50 });
  t.teardown(() => worker.stop());
  const tasks = await triageProject(a, p.token);

  const open = (runId: string) => {
    const events: { id: string; type: string; data: any }[] = [];
    const es = new EventSource(`${base}/v1/runs/${runId}/events`, {
      fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${p.token}` } }),
    });
    const waitFor = (type: string) => new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${type} within 15 s; got ${events.map((e) => e.type).join(', ')}`)), 15_000);
      const check = () => { if (events.some((e) => e.type === type)) { clearTimeout(timer); resolve(); } else setTimeout(check, 20); };
      check();
    });
    for (const type of ['run.started', 'run.progress', 'run.tool.started', 'run.tool.completed', 'run.requires_action', 'run.completed', 'run.failed', 'run.cancelled']) {
      es.addEventListener(type, (m) => events.push({ id: m.lastEventId, type, data: JSON.parse(m.data) }));
    }
    return { es, events, waitFor };
  };

  const run = (await startRun(a, p.token, 'agt_task_triage', { input: { project_id: tasks.project } })).json;
  const s = open(run.id);
  await s.waitFor('run.requires_action');
  t.same(s.events.map((e) => e.type), ['run.started', 'run.tool.started', 'run.tool.completed', 'run.progress', 'run.requires_action']);
  t.match(s.events[2]!.data, { id: '3', type: 'run.tool.completed', created_at: /Z$/,
    data: { skill: 'tasks.find_attention', status: 'completed', resources: [{ type: 'task' }] } });
  // The server ends the stream (as a restart would): the client reconnects with Last-Event-ID and misses nothing.
  a.app.runEvents.close();
  await new Promise((r) => setTimeout(r, 200));
  t.equal((await a.request({ method: 'POST', url: `/v1/runs/${run.id}/actions`, token: p.token, headers: key(),
    payload: { action_id: 'confirm_triage', response: { choice: 'dismiss' } } })).statusCode, 202);
  await s.waitFor('run.completed');
  s.es.close();
  const ids = s.events.map((e) => Number(e.id));
  t.same(ids, ids.map((_, i) => i + 1), 'every event once, in order, across the reconnect');
  t.same(s.events.slice(5).map((e) => e.type), ['run.started', 'run.completed']);
  t.match(s.events.at(-1)!.data.data, { status: 'succeeded', output: { dismissed: true } });

  // A finished run replays after Last-Event-ID and ends; heartbeats on an idle stream.
  const res = await fetch(`${base}/v1/runs/${run.id}/events`, { headers: { authorization: `Bearer ${p.token}`, 'last-event-id': '5' } });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/event-stream/);
  const text = await res.text();
  t.match(text, /^retry: 2000\n\nid: 6\nevent: run\.started\ndata: \{.*\}\n\nid: 7\nevent: run\.completed\n/);
  t.notMatch(text, /id: 5\n/);
  // Resumed after the last event of a finished run: 204, so an EventSource stops reconnecting.
  const over = await fetch(`${base}/v1/runs/${run.id}/events`, { headers: { authorization: `Bearer ${p.token}`, 'last-event-id': '7' } });
  t.equal(over.status, 204, 'nothing after the terminal event: 204');
  t.equal(await over.text(), '');
  const es = new EventSource(`${base}/v1/runs/${run.id}/events`, {
    fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${p.token}`, 'last-event-id': '7' } }),
  });
  await new Promise<void>((resolve) => { es.onerror = () => resolve(); });
  t.equal(es.readyState, EventSource.CLOSED, 'an EventSource given 204 closes for good');
  es.close();
  const bad = await fetch(`${base}/v1/runs/${run.id}/events`, { headers: { authorization: `Bearer ${p.token}`, 'last-event-id': 'abc' } });
  t.equal(bad.status, 400);

  // An idle stream: heartbeats, and no database connection held while idle.
  const idle = (await startRun(a, p.token, 'agt_task_triage', { input: { project_id: tasks.project } })).json;
  await a.request({ method: 'POST', url: `/v1/runs/${idle.id}/cancel`, token: p.token, headers: key() });
  const waitingRun = (await startRun(a, p.token, 'agt_task_triage', { input: { project_id: tasks.project } })).json;
  await new Promise((r) => setTimeout(r, 500));
  const ctrl = new AbortController();
  const stream = await fetch(`${base}/v1/runs/${waitingRun.id}/events`, { headers: { authorization: `Bearer ${p.token}` }, signal: ctrl.signal });
  const reader = stream.body!.getReader();
  let got = '';
  const until = Date.now() + 5000;
  while (!got.includes(': ping') && Date.now() < until) got += new TextDecoder().decode((await reader.read()).value);
  t.match(got, /: ping\n\n/);
  // The client is disabled: the idle stream ends at its next heartbeat.
  await a.cli('client', 'disable', '--client', p.id);
  let ended = false;
  const deadline = Date.now() + 5000;
  while (!ended && Date.now() < deadline) ended = (await reader.read()).done;
  t.ok(ended, 'the stream of a disabled client ends');
  ctrl.abort();
  t.ok(a.app.runEvents.streams <= 1);
});

t.test('event streams: one client holds at most SVC_STREAMS_PER_CLIENT open at once (429 RATE_LIMITED)', async (t) => {
  const { a, p } = await world(t, { SVC_STREAMS_PER_CLIENT: '1' });
  const base = await liveServer(t, a);
  const run = (await startRun(a, p.token, 'agt_echo', { input: { message: 'one' } })).json;
  const ctrl = new AbortController();
  const first = await fetch(`${base}/v1/runs/${run.id}/events`, { headers: { authorization: `Bearer ${p.token}` }, signal: ctrl.signal });
  t.equal(first.status, 200);
  const second = await fetch(`${base}/v1/runs/${run.id}/events`, { headers: { authorization: `Bearer ${p.token}` } });
  t.equal(second.status, 429);
  t.match(second.headers.get('content-type'), /^application\/problem\+json/);
  t.equal(second.headers.get('retry-after'), '5');
  t.equal((await second.json() as any).code, 'RATE_LIMITED');
  // Another client is not affected.
  const other = await a.principal('member,manager', { org: p.orgId });
  const mine = (await startRun(a, other.token, 'agt_echo', { input: { message: 'two' } })).json;
  const theirs = await fetch(`${base}/v1/runs/${mine.id}/events`, { headers: { authorization: `Bearer ${other.token}` }, signal: ctrl.signal });
  t.equal(theirs.status, 200);
  ctrl.abort();
  // Closed streams free their place.
  let again = 0;
  for (const until = Date.now() + 5000; Date.now() < until;) {
    const c2 = new AbortController();
    const r = await fetch(`${base}/v1/runs/${run.id}/events`, { headers: { authorization: `Bearer ${p.token}` }, signal: c2.signal });
    again = r.status;
    c2.abort();
    if (again === 200) break;
    await new Promise((res) => setTimeout(res, 100));
  }
  t.equal(again, 200, 'a new stream once the first is closed');
});

