// Reports inside the database: nothing without a credential; runs and results are the creating
// client's only; run states hold for the owner too; report functions apply the caller's policies.
import t from 'tap';
import postgres from 'postgres';
import { startApp } from '../helpers/app.ts';
import { runReport } from '../../src/worker/jobs/report-run.ts';
import { beginRequest, failure, inRequest, oneConnection, visibleRows } from '../helpers/sql.ts';

t.test('reports in SQL', async (t) => {
  const a = await startApp(t, { SVC_WORKER: 'off' });
  const p = await a.principal('member,manager,finance');
  await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: { 'idempotency-key': 'p' }, payload: { code: 'P', name: 'P' } });
  const r = (await a.request({ method: 'POST', url: '/v1/reports/rpt_project_progress/runs', token: p.token, headers: { 'idempotency-key': 'r' },
    payload: {} })).json;
  t.equal(await runReport(a.admin, a.config, p.orgId, r.id), 'succeeded');
  const rt = postgres(a.runtimeUrl, oneConnection);
  t.teardown(() => rt.end());
  for (const rel of ['api.reports', 'api.report_runs', 'api.report_results']) t.equal(await visibleRows(rt, rel), 0, `${rel}: nothing without a context`);
  for (const rel of ['app.report_runs', 'app.report_results', 'app_private.report_definitions']) t.equal(await visibleRows(rt, rel), 0, `${rel}: no privilege`);
  t.match(await failure(rt`select * from reporting.time_by_project('{"from":"2026-01-01","to":"2026-12-31"}')`), /^42501/, 'report functions are not the runtime role\'s');
  const seen = async (c: { id: string; secret: string; orgId: string }) => rt.begin(async (tx) => {
    await beginRequest(tx, c);
    // On a cluster in the organization's worker, where begin_request signed the context.
    const q = await inRequest(t, a.runtimeUrl, tx as never, c.orgId);
    return (await q`select (select count(*) from api.report_runs)::int as runs, (select count(*) from api.report_results)::int as rows`)[0];
  });
  t.same(await seen(p), { runs: 1, rows: 1 }, 'the creating client sees its run and rows');
  t.same(await seen(await a.createClient(p.orgId, { roles: 'manager' })), { runs: 0, rows: 0 }, 'another client of the organization does not');
  t.equal(await failure(a.admin`update app.report_runs set status = 'queued' where id = ${r.id}`), 'SVC09 CONFLICT', 'no way back');
  t.equal(await failure(a.admin`update app.report_runs set parameters = '{"x":1}' where id = ${r.id}`), 'SVC09 CONFLICT', 'the request never changes');
  t.equal(await failure(a.admin`update app.report_runs set status = 'failed' where id = ${r.id}`), 'SVC09 CONFLICT', 'succeeded is final');
});
