// Agents that propose and confirm: task triage (requires_action, choices, tool calls checked as
// the client and written once per run) and invoice drafts from approved billable time.
import t from 'tap';
import { assertProblem } from '../helpers/app.ts';
import { executeRun } from '../../src/agents/engine.ts';
import { key, world, startRun, getRun, triageProject } from '../helpers/agents.ts';

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
  t.equal(await executeRun(a.admin, a.config, p.orgId, run.id), 'requires_action');
  t.equal((await getRun(a, manager, run.id)).required_action.proposals.length, 3, 'the three tasks needing attention');
  // A client with neither Role still gets ROLE_REQUIRED (finance only).
  const finance = await a.token(await a.createClient(p.orgId, { roles: 'finance', license: 'manager' }));
  assertProblem(t, await startRun(a, finance, 'agt_task_triage', { input: { project_id: tasks.project } }), 403, 'ROLE_REQUIRED');
});

t.test('a writing tool call happens once per run: a job retried after its worker died does not write again', async (t) => {
  const { a, p } = await world(t);
  const tasks = await triageProject(a, p.token);
  const run = (await startRun(a, p.token, 'agt_task_triage', { input: { project_id: tasks.project } })).json;
  t.equal(await executeRun(a.admin, a.config, p.orgId, run.id), 'requires_action');
  t.equal((await a.request({ method: 'POST', url: `/v1/runs/${run.id}/actions`, token: p.token, headers: key(),
    payload: { action_id: 'confirm_triage', response: { choice: 'apply', proposal_ids: ['p3'] } } })).statusCode, 202);
  // As a worker would, twice: the same transition, as a retried job replays its steps.
  await a.admin`select app_private.run_start(${p.orgId}, ${run.id})`;
  const args = JSON.stringify({ task_id: tasks.stuck, transition: 'unblock' });
  const first = (await a.admin`select app_private.run_tool(${p.orgId}, ${run.id}, 'tasks.transition', ${args}::text::jsonb) as r`)[0]!.r;
  const again = (await a.admin`select app_private.run_tool(${p.orgId}, ${run.id}, 'tasks.transition', ${args}::text::jsonb) as r`)[0]!.r;
  t.match(first, { ok: true, result: { resources: [{ type: 'task', id: tasks.stuck }] } });
  t.notOk(first.replayed);
  t.same(again, { ...first, replayed: true }, 'the second call answers the first result');
  const calls = await a.admin`select status from app.run_tool_calls where run_id = ${run.id} and skill = 'tasks.transition'`;
  t.same(calls.map((c) => c.status), ['completed'], 'one call recorded');
  const moves = await a.admin`select count(*)::int as n from app.task_activity where task_id = ${tasks.stuck} and kind = 'transition'`;
  t.equal(moves[0]!.n, 2, 'block (setup) and one unblock');
  // Reads are not remembered: each find_attention call reads again.
  const find = JSON.stringify({ project_id: tasks.project });
  const read = (await a.admin`select app_private.run_tool(${p.orgId}, ${run.id}, 'tasks.find_attention', ${find}::text::jsonb) as r`)[0]!.r;
  t.notOk(read.replayed);
});

t.test('task triage: an assignment proposed from what was read is refused if the task changed before confirmation', async (t) => {
  const { a, p } = await world(t);
  const tasks = await triageProject(a, p.token);
  const run = (await startRun(a, p.token, 'agt_task_triage', { input: { project_id: tasks.project } })).json;
  t.equal(await executeRun(a.admin, a.config, p.orgId, run.id), 'requires_action');
  const proposal = (await getRun(a, p.token, run.id)).required_action.proposals.find((x: any) => x.kind === 'assign');
  t.match(proposal, { id: 'p1', task_id: tasks.overdue, assignee_member_ids: ['mia@x.example'], expected_version: Number });
  // Someone assigns the task meanwhile.
  const read = await a.request({ url: `/v1/tasks/${tasks.overdue}`, token: p.token });
  const patched = await a.request({ method: 'PATCH', url: `/v1/tasks/${tasks.overdue}`, token: p.token,
    headers: { 'if-match': read.headers.etag }, payload: { assignee_member_ids: ['ned@x.example'] } });
  t.equal(patched.statusCode, 200);
  t.equal((await a.request({ method: 'POST', url: `/v1/runs/${run.id}/actions`, token: p.token, headers: key(),
    payload: { action_id: 'confirm_triage', response: { choice: 'apply', proposal_ids: ['p1'] } } })).statusCode, 202);
  t.equal(await executeRun(a.admin, a.config, p.orgId, run.id), 'succeeded');
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
  t.equal(await executeRun(a.admin, a.config, p.orgId, run.id), 'requires_action');
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
  t.equal(await executeRun(a.admin, a.config, p.orgId, run.id), 'succeeded');
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
  await executeRun(a.admin, a.config, p.orgId, second.id);
  t.equal((await a.request({ method: 'POST', url: `/v1/runs/${second.id}/actions`, token, headers: key(),
    payload: { action_id: 'confirm_triage', response: { choice: 'apply' } } })).statusCode, 202);
  t.equal(await executeRun(a.admin, a.config, p.orgId, second.id), 'succeeded');
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
  await executeRun(a.admin, a.config, p.orgId, third.id);
  const c = await a.request({ method: 'POST', url: `/v1/runs/${third.id}/cancel`, token, headers: key() });
  t.match(c.json, { status: 'cancelled', tool_operations: [{ skill: 'tasks.find_attention', status: 'completed' }] });

  // A cancel that meets a run applying a tool operation (its row held) is not available now.
  const fourth = (await startRun(a, token, 'agt_echo', {})).json;
  let release!: () => void;
  const held = new Promise<void>((r) => { release = r; });
  const locking = a.admin.begin(async (tx) => {
    await tx`select 1 from app.runs where organization_id = ${p.orgId} and id = ${fourth.id} for update`;
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
  t.equal(await executeRun(a.admin, a.config, p.orgId, fifth.id), 'failed');
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
  t.equal(await executeRun(a.admin, a.config, p.orgId, run.id), 'requires_action');
  const waiting = await getRun(a, p.token, run.id);
  t.same(waiting.required_action.lines, [
    { description: 'mia@x.example: approved billable time 2026-11-01 to 2026-11-30', quantity: '1.50', unit_price: '120.00' },
    { description: 'ned@x.example: approved billable time 2026-11-01 to 2026-11-30', quantity: '0.83', unit_price: '120.00' },
  ]);
  await a.request({ method: 'POST', url: `/v1/runs/${run.id}/actions`, token: p.token, headers: key(),
    payload: { action_id: 'confirm_invoice', response: { choice: 'create' } } });
  t.equal(await executeRun(a.admin, a.config, p.orgId, run.id), 'succeeded');
  const done = await getRun(a, p.token, run.id);
  t.match(done.output, { invoice_id: /^inv_/, total: '279.60', currency: 'EUR' });
  const invoice = (await a.request({ url: `/v1/invoices/${done.output.invoice_id}`, token: p.token })).json;
  t.match(invoice, { status: 'draft', customer_id: customer, total: '279.60' });
});

