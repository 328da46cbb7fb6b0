// Fences: filters and sorts on fields a Role cannot read, approval changes by any
// method, work on archived projects and tasks, and a few input edge cases.
import t from 'tap';
import postgres from 'postgres';
import { startApp, assertProblem } from '../helpers/app.ts';
import { beginRequest, inRequest } from '../helpers/sql.ts';

t.test('filters and sorts on unreadable fields are refused', async (t) => {
  const a = await startApp(t);
  const org = await a.createOrg();
  const finance = await a.principal('finance', { org });
  const hr = await a.principal('hr', { org });
  const manager = await a.principal('member,manager', { org });
  const cases: [string, string, string][] = [
    [finance.token, '/v1/projects?manager_member_id=a@b.example', 'finance cannot filter projects by manager'],
    [hr.token, '/v1/projects?customer_id=com_x1', 'hr cannot filter projects by customer'],
    [finance.token, '/v1/tasks?assignee_member_id=a@b.example', 'finance cannot filter tasks by assignee'],
    [finance.token, '/v1/tasks?priority=high', 'finance cannot filter tasks by priority'],
    [hr.token, '/v1/tasks?sort=priority', 'hr cannot sort tasks by priority'],
    [finance.token, '/v1/tasks?due_before=2030-01-01T00:00:00Z', 'finance cannot filter tasks by due date'],
    [finance.token, '/v1/tasks?sort=due_at', 'finance cannot sort tasks by due date'],
  ];
  for (const [token, url, name] of cases) {
    const res = await a.request({ url, token });
    assertProblem(t, res, 403, 'ROLE_REQUIRED');
    t.pass(name);
  }
  for (const url of ['/v1/projects?manager_member_id=a@b.example', '/v1/tasks?sort=priority&priority=high', '/v1/tasks?sort=due_at']) {
    t.equal((await a.request({ url, token: manager.token })).statusCode, 200, `a manager may: ${url}`);
  }
  t.equal((await a.request({ url: '/v1/projects?customer_id=com_x1', token: finance.token })).statusCode, 200, 'finance may filter by customer');
  t.equal((await a.request({ url: '/v1/tasks?assignee_member_id=a@b.example&sort=due_at', token: hr.token })).statusCode, 200, 'hr may filter by assignee and sort by due date');
});

t.test('approvals cannot be changed by any method', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  for (const [method, url] of [['PATCH', '/v1/approvals/apr_x1'], ['PUT', '/v1/approvals/apr_x1'], ['DELETE', '/v1/approvals/apr_x1'],
    ['PUT', '/v1/approvals/apr_x1/approve'], ['PATCH', '/v1/approvals/apr_x1/reject'], ['POST', '/v1/approvals/apr_x1/delegate']]) {
    const res = await a.request({ method: method!, url: url!, token: p.token, payload: method === 'DELETE' ? undefined : { status: 'approved' } });
    assertProblem(t, res, 403, 'API_PRINCIPAL_NOT_ALLOWED');
  }
  const anon = await a.request({ method: 'PATCH', url: '/v1/approvals/apr_x1', payload: {} });
  assertProblem(t, anon, 401, 'INVALID_TOKEN');
});

t.test('tasks of an archived project, and archived tasks, do not change', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  const key = (() => { let n = 0; return () => ({ 'idempotency-key': `k${++n}` }); })();
  const proj = (await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: key(), payload: { code: 'A', name: 'A' } })).json;
  const task = (await a.request({ method: 'POST', url: '/v1/tasks', token: p.token, headers: key(), payload: { project_id: proj.id, name: 'T' } })).json;
  await a.request({ method: 'POST', url: `/v1/tasks/${task.id}/transitions`, token: p.token, headers: key(), payload: { transition: 'complete' } });
  const archived = await a.request({ method: 'POST', url: `/v1/projects/${proj.id}/archive`, token: p.token, headers: key(), payload: {} });
  t.equal(archived.statusCode, 200, 'an empty JSON body is tolerated where no body is taken');
  const reopen = await a.request({ method: 'POST', url: `/v1/tasks/${task.id}/transitions`, token: p.token, headers: key(), payload: { transition: 'reopen' } });
  assertProblem(t, reopen, 409, 'TASK_ARCHIVE_BLOCKED');
  const got = await a.request({ url: `/v1/tasks/${task.id}`, token: p.token });
  t.equal(got.json.status, 'done', 'still done');
  const patch = await a.request({ method: 'PATCH', url: `/v1/tasks/${task.id}`, token: p.token, headers: { 'if-match': got.headers.etag }, payload: { name: 'X' } });
  assertProblem(t, patch, 409, 'TASK_ARCHIVE_BLOCKED');
  // Archiving a finished task of an archived project is allowed; changing it afterwards is not.
  const arch = await a.request({ method: 'POST', url: `/v1/tasks/${task.id}/archive`, token: p.token, headers: key() });
  t.equal(arch.statusCode, 200, arch.body);

  // The same rules hold in SQL for any writer (as svc_api, the role every command runs as).
  await t.rejects(a.admin.begin(async (tx) => {
    await beginRequest(tx, p);
    const q = await inRequest(t, a.adminUrl, tx, p.orgId, { role: 'svc_api' });
    await q`update app.tasks set name = 'Y' where organization_id = ${p.orgId} and id = ${task.id}`;
  }), { code: 'SVC16' } as any, 'direct update of an archived task fails');
});

t.test('a direct archive with open dependents fails in SQL', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  const key = (() => { let n = 0; return () => ({ 'idempotency-key': `k${++n}` }); })();
  const proj = (await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: key(), payload: { code: 'A', name: 'A' } })).json;
  const t1 = (await a.request({ method: 'POST', url: '/v1/tasks', token: p.token, headers: key(), payload: { project_id: proj.id, name: 'T1' } })).json;
  const t2 = (await a.request({ method: 'POST', url: '/v1/tasks', token: p.token, headers: key(), payload: { project_id: proj.id, name: 'T2' } })).json;
  const dep = await a.request({ method: 'PUT', url: `/v1/tasks/${t2.id}/dependencies`, token: p.token, headers: { 'if-match': '"1"' }, payload: { predecessor_task_ids: [t1.id] } });
  t.equal(dep.statusCode, 200, dep.body);
  await t.rejects(a.admin.begin(async (tx) => {
    await beginRequest(tx, p);
    const q = await inRequest(t, a.adminUrl, tx, p.orgId, { role: 'svc_api' });
    await q`update app.tasks set archived_at = now() where organization_id = ${p.orgId} and id = ${t1.id}`;
  }), { code: 'SVC16' } as any);
});

t.test('malformed requests', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  const res = await a.request({ url: '/v1/members/%E0%A4%A', token: p.token });
  assertProblem(t, res, 400, 'INVALID_REQUEST');
  const hr = postgres(a.runtimeUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => hr.end());
  await t.rejects(hr`select employee_number from app.members limit 1`, { code: '42501' } as any, 'HR-restricted columns are not selectable');
});

t.test('second review: inputs that must not become 500s, and direct writes that must not bypass rules', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  const fin = await a.principal('finance', { org: p.orgId });
  const key = (() => { let n = 0; return () => ({ 'idempotency-key': `r${++n}` }); })();
  const nul = await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: { ...key(), 'content-type': 'application/json' }, payload: 'null' });
  assertProblem(t, nul, 422, 'VALIDATION_FAILED');
  const zero = await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: key(), payload: { code: 'Z', name: 'a\u0000b' } });
  assertProblem(t, zero, 422, 'VALIDATION_FAILED');
  const proj = (await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: key(), payload: { code: 'P', name: 'P' } })).json;
  const t1 = (await a.request({ method: 'POST', url: '/v1/tasks', token: p.token, headers: key(), payload: { project_id: proj.id, name: 'T1' } })).json;
  const t2 = (await a.request({ method: 'POST', url: '/v1/tasks', token: p.token, headers: key(), payload: { project_id: proj.id, name: 'T2' } })).json;

  const sql = postgres(a.runtimeUrl, { max: 2, onnotice: () => {} });
  t.teardown(() => sql.end());
  // Writes straight to the tables, as the role that owns the surface (svc_runtime reaches no table):
  // the triggers and policies hold for every writer.
  const as = (c: { id: string; secret: string; orgId: string }, fn: (tx: postgres.TransactionSql) => Promise<unknown>, mode = '') =>
    a.admin.begin(mode, async (tx) => {
      await beginRequest(tx, c);
      return fn(await inRequest(t, a.adminUrl, tx, c.orgId, { role: 'svc_api' }) as unknown as postgres.TransactionSql);
    });
  await t.rejects(as(p, (tx) => tx`update app.tasks set completed_at = now() where organization_id = ${p.orgId} and id = ${t1.id}`), { code: 'SVV23' } as any,
    'completed_at only with a transition into done');
  await as(p, (tx) => tx`update app.tasks set archived_at = '9999-12-31' where organization_id = ${p.orgId} and id = ${t1.id}`);
  const [row] = await a.admin`select archived_at < now() + interval '1 minute' as now_ish from app.tasks where id = ${t1.id}`;
  t.ok(row!.now_ish, 'archived_at is the time of archiving, whatever the writer sent');
  await t.rejects(as(fin, (tx) => tx`insert into app.task_activity (organization_id, task_id, kind, actor_client_id)
    values (${p.orgId}, ${t2.id}, 'transition', ${fin.id})`), { code: '42501' } as any, 'finance cannot write task history');
  await t.rejects(as(p, (tx) => tx`insert into app.task_dependencies (organization_id, task_id, predecessor_task_id)
    values (${p.orgId}, ${t2.id}, ${t1.id})`, 'isolation level repeatable read'), { code: 'SVC09' } as any,
    'dependencies change only under read committed');
});

t.test('requesting approval is submitting', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  await a.addMember(p.orgId, 'w@x.example');
  const key = (() => { let n = 0; return () => ({ 'idempotency-key': `s${++n}` }); })();
  const proj = (await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: key(), payload: { code: 'P', name: 'P' } })).json;
  const day = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10);
  const e = (await a.request({ method: 'POST', url: '/v1/time-entries', token: p.token, headers: key(),
    payload: { subject: { member_id: 'w@x.example' }, project_id: proj.id, work_date: day, minutes: 30 } })).json;
  // The helper as the commands reach it (svc_runtime cannot call it: the api surface only).
  await a.admin.begin(async (tx) => {
    await beginRequest(tx, p);
    const q = await inRequest(t, a.adminUrl, tx, p.orgId, { role: 'svc_api' });
    await q`select app_private.request_time_entry_approval(${e.id})`;
  });
  const [row] = await a.admin`select status from app.time_entries where id = ${e.id}`;
  t.equal(row!.status, 'submitted', 'a pending approval always has a submitted entry');
});
