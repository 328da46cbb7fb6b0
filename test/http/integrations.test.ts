// Integration connections: read-only, visible by Role relevance, readiness reports blockers and does nothing.
import t from 'tap';
import { assertProblem, startApp } from '../helpers/app.ts';

t.test('visibility by Role, no personal connections, never credentials', async (t) => {
  const a = await startApp(t);
  const fin = await a.principal('finance');
  const org = fin.orgId;
  const mgr = await a.principal('manager', { org });
  const member = await a.principal('member,hr', { org });
  await a.addMember(org, 'owner@example.com', { roles: 'member' });
  const acct = (await a.cli('integration', 'add', '--org', org, '--provider', 'xero', '--category', 'accounting',
    '--capabilities', 'invoice.export,payment.read')).connection_id;
  const cal = (await a.cli('integration', 'add', '--org', org, '--provider', 'google_calendar', '--category', 'calendar',
    '--capabilities', 'task.sync')).connection_id;
  const personal = (await a.cli('integration', 'add', '--org', org, '--provider', 'slack', '--category', 'messaging',
    '--ownership', 'personal', '--owner-member', 'owner@example.com', '--capabilities', 'task.notify')).connection_id;

  const finList = await a.request({ url: '/v1/integration-connections', token: fin.token });
  t.same(finList.json.data.map((c: any) => c.id), [acct], 'finance sees accounting');
  t.match(finList.json.data[0], { object: 'integration_connection', provider: 'xero', category: 'accounting', ownership: 'organization',
    status: 'connected', capabilities: ['invoice.export', 'payment.read'], action_required: null, last_success_at: /Z$/ });
  t.notMatch(finList.body, /token|secret|credential/i, 'no credentials in the document');
  const mgrList = await a.request({ url: '/v1/integration-connections', token: mgr.token });
  t.same(mgrList.json.data.map((c: any) => c.id), [cal], 'manager sees operational integrations');
  assertProblem(t, await a.request({ url: '/v1/integration-connections', token: member.token }), 403, 'ROLE_REQUIRED');
  assertProblem(t, await a.request({ url: `/v1/integration-connections/${cal}`, token: member.token }), 403, 'ROLE_REQUIRED');
  assertProblem(t, await a.request({ method: 'POST', url: '/v1/integration-connections/readiness', token: member.token,
    payload: { capability: 'task.sync', resource: { type: 'project', id: 'prj_x' } } }), 403, 'ROLE_REQUIRED');

  const one = await a.request({ url: `/v1/integration-connections/${acct}`, token: fin.token });
  t.equal(one.statusCode, 200);
  t.equal(one.headers.etag, '"1"');
  assertProblem(t, await a.request({ url: `/v1/integration-connections/${acct}`, token: mgr.token }), 403, 'ROLE_REQUIRED');
  assertProblem(t, await a.request({ url: `/v1/integration-connections/${personal}`, token: mgr.token }), 403, 'PERSONAL_CONNECTION_NOT_ALLOWED');
  assertProblem(t, await a.request({ url: '/v1/integration-connections/icn_nope', token: mgr.token }), 404, 'INTEGRATION_CONNECTION_NOT_FOUND');
  const stranger = await a.principal('manager,finance');
  assertProblem(t, await a.request({ url: `/v1/integration-connections/${cal}`, token: stranger.token }), 404, 'INTEGRATION_CONNECTION_NOT_FOUND');
  for (const method of ['POST', 'PATCH', 'DELETE', 'PUT']) {
    const res = await a.request({ method, url: `/v1/integration-connections/${acct}`, token: fin.token, payload: method === 'DELETE' ? undefined : {} });
    t.equal(res.statusCode, 405, `${method}: read-only`);
  }
});

t.test('readiness: ready, not ready, role, personal, unavailable; performs nothing', async (t) => {
  const a = await startApp(t);
  const fin = await a.principal('finance,manager');
  const org = fin.orgId;
  const mgrOnly = await a.principal('manager', { org });
  await a.addMember(org, 'owner@example.com', { roles: 'member' });
  const cus = (await a.cli('customer', 'create', '--org', org, '--kind', 'billing', '--name', 'C', '--currency', 'EUR')).customer_id;
  const inv = (await a.request({ method: 'POST', url: '/v1/invoices', token: fin.token, headers: { 'idempotency-key': 'i1' },
    payload: { customer_id: cus, lines: [] } })).json;
  const acct = (await a.cli('integration', 'add', '--org', org, '--provider', 'xero', '--category', 'accounting',
    '--capabilities', 'invoice.export')).connection_id;
  await a.cli('integration', 'add', '--org', org, '--provider', 'slack', '--category', 'messaging', '--ownership', 'personal',
    '--owner-member', 'owner@example.com', '--capabilities', 'task.notify');
  const check = (capability: string, token = fin.token, resource = { type: 'invoice', id: inv.id }) =>
    a.request({ method: 'POST', url: '/v1/integration-connections/readiness', token, payload: { capability, resource } });

  const ready = await check('invoice.export');
  t.equal(ready.statusCode, 200, ready.body);
  t.same(ready.json, { object: 'integration_readiness', capability: 'invoice.export', ready: true, connection_id: acct, blockers: [],
    resource: { type: 'invoice', id: inv.id } });
  const before = await a.admin`select version from app.integration_connections where id = ${acct}`;

  await a.cli('integration', 'update', '--id', acct, '--status', 'action_required', '--action-required', 'Reauthorize Xero in Settings > Integrations');
  const notReady = await check('invoice.export');
  t.match(notReady.json, { ready: false, connection_id: acct,
    blockers: [{ code: 'INTEGRATION_CONNECTION_NOT_READY', message: 'Reauthorize Xero in Settings > Integrations' }] });
  t.match((await check('invoice.export', mgrOnly.token, { type: 'project', id: 'prj_x' })).json.code, 'RESOURCE_NOT_FOUND');
  const project = (await a.request({ method: 'POST', url: '/v1/projects', token: fin.token, headers: { 'idempotency-key': 'p1' },
    payload: { code: 'P1', name: 'P1' } })).json;
  const role = await check('invoice.export', mgrOnly.token, { type: 'project', id: project.id });
  t.match(role.json, { ready: false, connection_id: null, blockers: [{ code: 'ROLE_REQUIRED' }] });
  t.match((await check('task.notify')).json, { ready: false, blockers: [{ code: 'PERSONAL_CONNECTION_NOT_ALLOWED' }] });
  t.match((await check('payment.read')).json, { ready: false, blockers: [{ code: 'CAPABILITY_NOT_AVAILABLE' }] });
  const after = await a.admin`select version from app.integration_connections where id = ${acct}`;
  t.equal(after[0]!.version, before[0]!.version + 1, 'only the control plane changed it; the checks performed nothing');
  assertProblem(t, await a.request({ method: 'POST', url: '/v1/integration-connections/readiness', token: fin.token,
    payload: { capability: 'invoice.export' } }), 422, 'VALIDATION_FAILED');
  assertProblem(t, await a.request({ method: 'POST', url: '/v1/integration-connections/readiness', token: fin.token,
    payload: { capability: 'x', resource: { type: 'invoice', id: inv.id } } }), 422, 'VALIDATION_FAILED');
});
