import t from 'tap';
import { startApp } from '../helpers/app.ts';

t.test('time entry happy path', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  await a.addMember(p.orgId, 'worker@x.example', { roles: 'member' });
  await a.addMember(p.orgId, 'boss@x.example', { roles: 'member,manager' });
  const proj = await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: { 'idempotency-key': 'p' },
    payload: { code: 'P1', name: 'P' } });
  const today = new Date().toISOString().slice(0, 10);
  const te = await a.request({ method: 'POST', url: '/v1/time-entries', token: p.token, headers: { 'idempotency-key': 't1' },
    payload: { subject: { member_id: 'worker@x.example' }, project_id: proj.json.id, work_date: '2026-11-20', minutes: 60, external_id: 'x1' } });
  t.equal(te.statusCode, 201, te.body);
  const sub = await a.request({ method: 'POST', url: `/v1/time-entries/${te.json.id}/submit`, token: p.token, headers: { 'idempotency-key': 't2' } });
  t.equal(sub.statusCode, 200, sub.body);
  t.equal(sub.json.status, 'submitted');
  const apr = await a.request({ url: `/v1/approvals?resource_id=${te.json.id}`, token: p.token });
  t.equal(apr.statusCode, 200, apr.body);
  t.equal(apr.json.data.length, 1);
  const refuse = await a.request({ method: 'POST', url: `/v1/approvals/${apr.json.data[0].id}/approve`, token: p.token, payload: {} });
  t.equal(refuse.statusCode, 403, refuse.body);
  t.equal(refuse.json.code, 'API_PRINCIPAL_NOT_ALLOWED');
  await a.cli('approval', 'decide', '--approval', apr.json.data[0].id, '--decision', 'approved', '--by', 'boss@x.example');
  const got = await a.request({ url: `/v1/time-entries/${te.json.id}`, token: p.token });
  t.equal(got.json.status, 'approved', got.body);
  const batch = await a.request({ method: 'POST', url: '/v1/time-entries/batches', token: p.token, headers: { 'idempotency-key': 'b' },
    payload: { atomic: false, entries: [
      { subject: { member_id: 'worker@x.example' }, project_id: proj.json.id, work_date: '2026-11-19', minutes: 30 },
      { subject: { member_id: 'nobody@x.example' }, project_id: proj.json.id, work_date: '2026-11-19', minutes: 30 },
      { subject: { member_id: 'worker@x.example' }, project_id: proj.json.id, work_date: '2026-11-19', minutes: 'x' },
    ] } });
  t.equal(batch.statusCode, 200, batch.body);
  t.same(batch.json.results.map((r: any) => r.status), ['created', 'failed', 'failed']);
  const list = await a.request({ url: `/v1/time-entries?work_date_gte=2026-11-01&work_date_lte=${today}`, token: p.token });
  t.equal(list.statusCode, 200, list.body);
  t.equal(list.json.data.length, 2);
});
