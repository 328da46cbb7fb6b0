import t from 'tap';
import { startApp } from '../helpers/app.ts';

t.test('project and task happy path', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  await a.addMember(p.orgId, 'boss@x.example', { roles: 'member,manager' });
  const { customer_id } = await a.cli('customer', 'create', '--org', p.orgId, '--kind', 'company', '--name', 'ACME');
  await a.cli('field', 'define', '--org', p.orgId, '--object', 'project', '--api-name', 'tier', '--label', 'Tier', '--type', 'select', '--options', 'gold:Gold,silver:Silver');
  const create = await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: { 'idempotency-key': 'k1' },
    payload: { code: 'P-1', name: 'Apollo', manager_member_id: 'BOSS@x.example', customer_id, start_date: '2026-01-01', custom_fields: { tier: 'gold' } } });
  t.equal(create.statusCode, 201, create.body);
  const proj = create.json;
  const task = await a.request({ method: 'POST', url: '/v1/tasks', token: p.token, headers: { 'idempotency-key': 'k2' },
    payload: { project_id: proj.id, name: 'Design', priority: 'high', due_at: '2026-02-01T00:00:00Z', assignee_member_ids: ['boss@x.example'] } });
  t.equal(task.statusCode, 201, task.body);
  const tr = await a.request({ method: 'POST', url: `/v1/tasks/${task.json.id}/transitions`, token: p.token, headers: { 'idempotency-key': 'k3' },
    payload: { transition: 'start' } });
  t.equal(tr.statusCode, 200, tr.body);
  t.equal(tr.json.status, 'in_progress');
  const arch = await a.request({ method: 'POST', url: `/v1/projects/${proj.id}/archive`, token: p.token, headers: { 'idempotency-key': 'k4' } });
  t.equal(arch.statusCode, 409, arch.body);
  const list = await a.request({ url: '/v1/tasks?limit=1', token: p.token });
  t.equal(list.statusCode, 200, list.body);
  const schemas = await a.request({ url: '/v1/schemas/project', token: p.token });
  t.equal(schemas.statusCode, 200, schemas.body);
  t.equal(schemas.json.fields[0].api_name, 'tier');
});
