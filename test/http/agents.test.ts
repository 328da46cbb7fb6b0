// Agents and runs over HTTP: discovery and readiness by Role, licence and principal type; runs
// executed as the client; cancellation; retention; the state machine in SQL; a model-backed agent
// against a scripted provider on loopback; every Agents and Runs code. Triage and invoice drafts
// are in agents-triage.test.ts, the event stream in agents-stream.test.ts.
import t, { type Test } from 'tap';
import http from 'node:http';
import { assertProblem } from '../helpers/app.ts';
import { executeRun } from '../../src/agents/engine.ts';
import { beginRequest, inRequest, visibleRows } from '../helpers/sql.ts';
import { key, world, startRun, getRun, triageProject } from '../helpers/agents.ts';

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
  t.equal(await executeRun(a.admin, a.config, p.orgId, ok.json.id), 'succeeded');
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
  t.equal(await executeRun(a.admin, a.config, p.orgId, queued.id), 'skipped', 'a cancelled run never starts');

  t.equal(await executeRun(a.admin, a.config, p.orgId, echo.id), 'succeeded');
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
  await executeRun(a.admin, a.config, p.orgId, run.id);
  t.equal(await sqlstate(a.admin`update app.runs set status = 'cancelled', output = null where id = ${run.id}`), 'RUN_ALREADY_TERMINAL');
  t.equal(await sqlstate(a.admin`update app.runs set output = '{"echo":{"forged":true}}' where id = ${run.id}`), 'RUN_ALREADY_TERMINAL');
  t.equal(await sqlstate(a.admin`update app.runs set status = 'failed', error = '{}', output = null where id = ${run.id}`), 'RUN_ALREADY_TERMINAL');
  // Events are ordered per run: started, progress, completed.
  t.same((await a.admin`select seq, type from app.run_events where run_id = ${run.id} order by seq`).map((r) => `${r.seq} ${r.type}`),
    ['1 run.started', '2 run.progress', '3 run.completed']);
  // As svc_runtime without a request context: no run, no event, no tool call, no publication.
  const rt = (await import('postgres')).default(a.runtimeUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => rt.end());
  // (On Citus a view read outside a delegated call is refused on the shards: it sees nothing either.)
  for (const table of ['api.runs', 'api.agents']) t.equal(await visibleRows(rt, table), 0, `${table}: nothing without a context`);
  for (const table of ['app.runs', 'app.run_events', 'app.run_tool_calls', 'app.agent_publications']) {
    t.not(await sqlstate(rt.unsafe(`select count(*) from ${table}`)), 'ok', `${table}: not readable by svc_runtime`);
  }
  t.not(await sqlstate(rt`select app_private.run_tool(${p.orgId}, ${run.id}, 'tasks.transition', '{}')`), 'ok', 'the worker\'s tool path is not callable');
  // Another client of the same organization, with a real request context: still none of these runs.
  const other = await a.createClient(p.orgId, { roles: 'member,manager,finance' });
  const seen = await rt.begin(async (tx) => {
    await beginRequest(tx, other);
    const q = await inRequest(t, a.runtimeUrl, tx, p.orgId);
    return [(await q`select count(*)::int as n from api.runs`)[0]!.n, (await q`select count(*)::int as n from api.run_get(${run.id})`)[0]!.n];
  });
  t.same(seen, [0, 0], 'runs are the creating client\'s only');
  const own = await rt.begin(async (tx) => {
    await beginRequest(tx, p);
    return (await (await inRequest(t, a.runtimeUrl, tx, p.orgId))`select count(*)::int as n from api.runs`)[0]!.n;
  });
  t.equal(own, 1);
  // A client cannot move its own run through the api surface outside the state machine either.
  t.equal(await sqlstate(rt.begin(async (tx) => {
    await beginRequest(tx, p);
    await (await inRequest(t, a.runtimeUrl, tx, p.orgId))`select api.run_cancel(${run.id})`;
  })), 'RUN_ALREADY_TERMINAL');
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
  t.equal(await executeRun(a.admin, a.config, p.orgId, run.id), 'succeeded');
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
  const stored = JSON.stringify(await a.admin`select r.*, (select json_agg(e) from app.run_events e where e.organization_id = r.organization_id and e.run_id = r.id) as events,
    (select json_agg(c) from app.run_tool_calls c where c.organization_id = r.organization_id and c.run_id = r.id) as calls from app.runs r where r.id = ${run.id}`);
  t.notOk(stored.includes('sk-test-secret-123'));
  t.notOk(stored.includes('You are the work-management assistant'));
  t.match(stored, /run\.output\.delta/);

  // A provider that fails: the run fails with a run-safe error, no provider body.
  const broken = (await startRun(a, token, 'agt_assistant', { input: { prompt: 'again' } })).json;
  t.equal(await executeRun(a.admin, a.config, p.orgId, broken.id), 'failed');
  t.match((await getRun(a, token, broken.id)).error, { code: 'MODEL_PROVIDER_UNAVAILABLE', detail: 'the model provider answered HTTP 500' });
});

