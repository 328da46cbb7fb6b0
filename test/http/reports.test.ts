// Reports over HTTP: discovery by Role, runs validated with ajv, executed by the worker as the
// client (a Role lost meanwhile fails the run), results paged, downloads as CSV and JSON, expiry,
// and every Reports error code.
import t, { type Test } from 'tap';
import { startApp, assertProblem, type TestApp } from '../helpers/app.ts';
import { startWorker } from '../../src/worker/index.ts';
import { runReport } from '../../src/worker/jobs/report-run.ts';

async function world(t: Test, env: Record<string, string> = {}) {
  const a = await startApp(t, env);
  const p = await a.principal('member,manager,finance');
  await a.addMember(p.orgId, 'ann@x.example');
  await a.addMember(p.orgId, 'bob@x.example');
  let n = 0;
  const key = () => ({ 'idempotency-key': `r-${++n}` });
  const project = (await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: key(), payload: { code: 'R', name: 'Roadmap' } })).json.id;
  const entries = [['ann@x.example', 60, true], ['ann@x.example', 30, false], ['bob@x.example', 45, true]] as const;
  const batch = await a.request({ method: 'POST', url: '/v1/time-entries/batches', token: p.token, headers: key(),
    payload: { entries: entries.map(([m, minutes, billable]) => ({ subject: { member_id: m }, project_id: project, work_date: '2026-11-02', minutes, billable })) } });
  if (batch.statusCode >= 300) throw new Error(batch.body);
  return { a, p, project, key };
}

const run = (a: TestApp, token: string, report: string, body: unknown, key = `k-${Math.random()}`) =>
  a.request({ method: 'POST', url: `/v1/reports/${report}/runs`, token, headers: { 'idempotency-key': key }, payload: body });

async function settled(a: TestApp, token: string, report: string, id: string) {
  for (let i = 0; i < 200; i++) {
    const r = (await a.request({ url: `/v1/reports/${report}/runs/${id}`, token })).json;
    if (r.status === 'succeeded' || r.status === 'failed') return r;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error('run never finished');
}

t.test('discovery, a run, results, downloads', async (t) => {
  const { a, p } = await world(t);
  const worker = await startWorker(a.config, { pollInterval: 50 });
  t.teardown(() => worker.stop());
  const ids = async (token: string) => (await a.request({ url: '/v1/reports', token })).json.data.map((d: any) => d.id);
  t.same(await ids(p.token), ['rpt_invoice_aging', 'rpt_member_utilization', 'rpt_payments_received', 'rpt_project_progress',
    'rpt_ticket_volume', 'rpt_time_by_project']);
  const member = await a.token(await a.createClient(p.orgId, { roles: 'member' }));
  t.same(await ids(member), ['rpt_project_progress'], 'only usable definitions');
  assertProblem(t, await a.request({ url: '/v1/reports/rpt_invoice_aging', token: member }), 403, 'REPORT_ROLE_REQUIRED');
  assertProblem(t, await a.request({ url: '/v1/reports/rpt_nope', token: member }), 404, 'REPORT_NOT_FOUND');
  t.match((await a.request({ url: '/v1/reports/rpt_time_by_project', token: p.token })).json,
    { object: 'report_definition', required_roles: ['manager', 'finance'], formats: ['json', 'csv'], parameters_schema: { required: ['from', 'to'] } });

  const created = await run(a, p.token, 'rpt_time_by_project', { parameters: { from: '2026-11-01', to: '2026-11-30' }, format: 'csv' });
  t.equal(created.statusCode, 202);
  t.match(created.json, { object: 'report_run', id: /^rrun_/, status: 'queued', timezone: 'Europe/Berlin', definition_version: 1, format: 'csv' });
  t.equal(created.headers.location, `/v1/reports/rpt_time_by_project/runs/${created.json.id}`);
  const done = await settled(a, p.token, 'rpt_time_by_project', created.json.id);
  t.match(done, { status: 'succeeded', row_count: 2, data_as_of: /Z$/, expires_at: /Z$/, error: null });
  const results = (await a.request({ url: `/v1/reports/rpt_time_by_project/runs/${done.id}/results`, token: p.token })).json;
  t.same(results.data, [
    { project_id: results.data[0].project_id, project_name: 'Roadmap', member_id: 'ann@x.example', billable_minutes: 60, non_billable_minutes: 30, total_minutes: 90 },
    { project_id: results.data[0].project_id, project_name: 'Roadmap', member_id: 'bob@x.example', billable_minutes: 45, non_billable_minutes: 0, total_minutes: 45 },
  ]);
  const page1 = (await a.request({ url: `/v1/reports/rpt_time_by_project/runs/${done.id}/results?limit=1`, token: p.token })).json;
  const page2 = (await a.request({ url: `/v1/reports/rpt_time_by_project/runs/${done.id}/results?limit=1&after=${encodeURIComponent(page1.next_cursor)}`, token: p.token })).json;
  t.same([page1.data[0].member_id, page2.data[0].member_id, page2.has_more], ['ann@x.example', 'bob@x.example', false]);

  const d = await a.request({ method: 'POST', url: `/v1/reports/rpt_time_by_project/runs/${done.id}/download`, token: p.token });
  t.equal(d.statusCode, 201);
  const csv = await a.server.inject({ url: new URL(d.json.download_url).pathname });
  t.equal(csv.statusCode, 200);
  t.match(csv.headers['content-type'], /^text\/csv/);
  t.equal(csv.payload, 'project_id,project_name,member_id,billable_minutes,non_billable_minutes,total_minutes\r\n'
    + `${results.data[0].project_id},Roadmap,ann@x.example,60,30,90\r\n${results.data[0].project_id},Roadmap,bob@x.example,45,0,45\r\n`);
  const other = await a.token(await a.createClient(p.orgId, { roles: 'manager' }));
  assertProblem(t, await a.request({ url: `/v1/reports/rpt_time_by_project/runs/${done.id}`, token: other }), 404, 'REPORT_RUN_NOT_FOUND');

  const json = await run(a, p.token, 'rpt_project_progress', { format: 'json' });
  const jdone = await settled(a, p.token, 'rpt_project_progress', json.json.id);
  const jd = await a.request({ method: 'POST', url: `/v1/reports/rpt_project_progress/runs/${jdone.id}/download`, token: p.token });
  const body = await a.server.inject({ url: new URL(jd.json.download_url).pathname });
  t.match(JSON.parse(body.payload), [{ project_name: 'Roadmap', tasks_total: 0 }]);
});

t.test('Reports error codes', async (t) => {
  const { a, p, project } = await world(t, { SVC_WORKER: 'off', SVC_REPORT_RETENTION_SECONDS: '1' });
  const bad = await run(a, p.token, 'rpt_time_by_project', { parameters: { from: 'yesterday', extra: 1 } });
  assertProblem(t, bad, 422, 'INVALID_REPORT_PARAMETERS');
  t.same(bad.json.errors.map((e: any) => e.pointer).sort(), ['/parameters/extra', '/parameters/from', '/parameters/to']);
  assertProblem(t, await run(a, p.token, 'rpt_time_by_project', { parameters: { from: '2026-11-30', to: '2026-11-01' } }), 422, 'INVALID_REPORT_PARAMETERS');
  assertProblem(t, await run(a, p.token, 'rpt_time_by_project', { parameters: { from: '2026-11-01', to: '2026-11-30' }, format: 'xlsx' }),
    422, 'EXPORT_FORMAT_NOT_SUPPORTED');
  assertProblem(t, await run(a, p.token, 'rpt_nope', {}), 404, 'REPORT_NOT_FOUND');
  const member = await a.token(await a.createClient(p.orgId, { roles: 'member' }));
  assertProblem(t, await run(a, member, 'rpt_time_by_project', { parameters: { from: '2026-11-01', to: '2026-11-30' } }), 403, 'REPORT_ROLE_REQUIRED');

  // Queued: no results yet; unknown run: REPORT_RUN_NOT_FOUND.
  const queued = (await run(a, p.token, 'rpt_time_by_project', { parameters: { from: '2026-11-01', to: '2026-11-30', project_id: project } })).json;
  const results = (id: string) => a.request({ url: `/v1/reports/rpt_time_by_project/runs/${id}/results`, token: p.token });
  assertProblem(t, await results(queued.id), 409, 'CONFLICT');
  assertProblem(t, await results('rrun_nope'), 404, 'REPORT_RUN_NOT_FOUND');

  // A client that lost the Role before the run executes gets a failed run, not data: REPORT_FAILED.
  await a.cli('client', 'set-roles', '--client', p.id, '--roles', 'member');
  t.equal(await runReport(a.admin, a.config, p.orgId, queued.id), 'failed');
  await a.cli('client', 'set-roles', '--client', p.id, '--roles', 'member,manager,finance');
  const failed = (await a.request({ url: `/v1/reports/rpt_time_by_project/runs/${queued.id}`, token: p.token })).json;
  t.match(failed, { status: 'failed', error: { code: 'REPORT_FAILED', detail: /no longer holds/ }, row_count: null });
  assertProblem(t, await results(queued.id), 409, 'REPORT_FAILED');
  assertProblem(t, await a.request({ method: 'POST', url: `/v1/reports/rpt_time_by_project/runs/${queued.id}/download`, token: p.token }), 409, 'REPORT_FAILED');

  // Expired results (retention 1 s here): REPORT_RUN_EXPIRED, and the purge takes them.
  const ok = (await run(a, p.token, 'rpt_time_by_project', { parameters: { from: '2026-11-01', to: '2026-11-30' } })).json;
  t.equal(await runReport(a.admin, a.config, p.orgId, ok.id), 'succeeded');
  await new Promise((r) => setTimeout(r, 1100));
  assertProblem(t, await results(ok.id), 410, 'REPORT_RUN_EXPIRED');
  t.equal((await a.admin`select control.purge_expired_report_results() as n`)[0]!.n, 1);
  t.equal((await a.admin`select count(*)::int as n from app.report_results where run_id = ${ok.id}`)[0]!.n, 0, 'purged');
  assertProblem(t, await a.request({ method: 'POST', url: `/v1/reports/rpt_time_by_project/runs/${ok.id}/download`, token: p.token }), 410, 'REPORT_RUN_EXPIRED');
});

t.test('finance reports: invoice aging and payments received', async (t) => {
  const { a, p } = await world(t);
  const worker = await startWorker(a.config, { pollInterval: 50 });
  t.teardown(() => worker.stop());
  const cus = (await a.cli('customer', 'create', '--org', p.orgId, '--kind', 'billing', '--name', 'Acme', '--currency', 'EUR')).customer_id;
  const inv = (await a.request({ method: 'POST', url: '/v1/invoices', token: p.token, headers: { 'idempotency-key': 'i1' },
    payload: { customer_id: cus, currency: 'EUR', due_date: '2026-08-01', issue_date: '2026-07-01', lines: [{ description: 'x', quantity: '2', unit_price: '100.00' }] } })).json;
  const sent = await a.request({ method: 'POST', url: `/v1/invoices/${inv.id}/send`, token: p.token, headers: { 'idempotency-key': 's1' }, payload: { delivery: { email: false } } });
  t.equal(sent.statusCode, 200, sent.body);
  await a.request({ method: 'POST', url: '/v1/payments', token: p.token, headers: { 'idempotency-key': 'p1' },
    payload: { invoice_id: inv.id, amount: '50.00', currency: 'EUR', received_date: '2026-11-03', method: 'bank_transfer' } });
  const aging = await run(a, p.token, 'rpt_invoice_aging', { parameters: { as_of: '2026-11-24' } });
  const agingDone = await settled(a, p.token, 'rpt_invoice_aging', aging.json.id);
  t.equal(agingDone.status, 'succeeded');
  t.same((await a.request({ url: `/v1/reports/rpt_invoice_aging/runs/${agingDone.id}/results`, token: p.token })).json.data,
    [{ customer_id: cus, customer_name: 'Acme', currency: 'EUR', due_0_30: '0.00', due_31_60: '0.00', due_61_90: '0.00', due_over_90: '150.00', total_due: '150.00', invoices: 1 }]);
  const pays = await run(a, p.token, 'rpt_payments_received', { parameters: { from: '2026-11-01', to: '2026-11-30' } });
  const paysDone = await settled(a, p.token, 'rpt_payments_received', pays.json.id);
  t.same((await a.request({ url: `/v1/reports/rpt_payments_received/runs/${paysDone.id}/results`, token: p.token })).json.data,
    [{ period_start: '2026-11-01', currency: 'EUR', payments: 1, amount: '50.00' }]);
});

t.test('utilization and ticket volume', async (t) => {
  const { a, p } = await world(t);
  const worker = await startWorker(a.config, { pollInterval: 50 });
  t.teardown(() => worker.stop());
  const u = await run(a, p.token, 'rpt_member_utilization', { parameters: { from: '2026-11-02', to: '2026-11-06', capacity_minutes_per_day: 60 } });
  const ud = await settled(a, p.token, 'rpt_member_utilization', u.json.id);
  const rows = (await a.request({ url: `/v1/reports/rpt_member_utilization/runs/${ud.id}/results`, token: p.token })).json.data;
  t.match(rows.find((r: any) => r.member_id === 'ann@x.example'),
    { worked_minutes: 90, billable_minutes: 60, capacity_minutes: 300, utilization: '0.3000', billable_utilization: '0.2000' });
  const tk = await a.request({ method: 'POST', url: '/v1/tickets', token: p.token, headers: { 'idempotency-key': 'tk' },
    payload: { subject: 'S', requester: { email: 'r@x.example' } } });
  await a.request({ method: 'POST', url: `/v1/tickets/${tk.json.id}/transitions`, token: p.token, payload: { transition: 'resolve', resolution: 'done' } });
  const today = new Date().toISOString().slice(0, 10);
  const v = await run(a, p.token, 'rpt_ticket_volume', { parameters: { from: today, to: today } });
  const vd = await settled(a, p.token, 'rpt_ticket_volume', v.json.id);
  const week = (await a.request({ url: `/v1/reports/rpt_ticket_volume/runs/${vd.id}/results`, token: p.token })).json.data;
  t.match(week, [{ created: 1, solved: 1, median_hours_to_resolution: '0.0' }]);
});
