// The spec's own codes win over the generic one: a field whose rule the spec names
// (a bad duration is INVALID_DURATION, …) answers that code even when the request schema is what
// catches it, with the pointer to the field; a missing field stays VALIDATION_FAILED.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startApp, assertProblem } from '../helpers/app.ts';

t.test('field rules with a code of their own, in every area', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager,finance');
  await a.addMember(p.orgId, 'w@x.example');
  const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
    a.request({ method: 'POST', url, token: p.token, payload, headers: { 'idempotency-key': randomUUID(), ...headers } });
  const expect = (res: Awaited<ReturnType<typeof post>>, status: number, code: string, pointer: string, label: string) => {
    assertProblem(t, res, status, code);
    t.ok((res.json?.errors ?? []).some((e: any) => e.pointer.startsWith(pointer) && e.code === code), `${label}: ${code} at ${pointer}`);
  };
  const project = (await post('/v1/projects', { code: 'SC', name: 'Spec codes' })).json;
  const task = (await post('/v1/tasks', { project_id: project.id, name: 'T' })).json;
  const day = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
  const entry = { subject: { member_id: 'w@x.example' }, project_id: project.id, work_date: day, minutes: 30 };

  // Time entries
  for (const minutes of [0, -30, 1441, 2.5, '30']) {
    expect(await post('/v1/time-entries', { ...entry, minutes }), 422, 'INVALID_DURATION', '/minutes', `minutes ${JSON.stringify(minutes)}`);
  }
  for (const work_date of ['2026-02-30', '26-1-1', 5]) {
    expect(await post('/v1/time-entries', { ...entry, work_date }), 422, 'INVALID_WORK_DATE', '/work_date', `work_date ${JSON.stringify(work_date)}`);
  }
  expect(await post('/v1/time-entries', { ...entry, subject: { member_id: 42 } }), 422, 'INVALID_SUBJECT_MEMBER', '/subject', 'subject');
  const missing = await post('/v1/time-entries', { subject: entry.subject, project_id: project.id, work_date: day });
  assertProblem(t, missing, 422, 'VALIDATION_FAILED');
  const batch = await post('/v1/time-entries/batches', { entries: [entry, { ...entry, minutes: 1441 }] });
  expect(batch, 422, 'INVALID_DURATION', '/entries/1/minutes', 'batch item');
  const created = await post('/v1/time-entries', entry);
  t.equal(created.statusCode, 201);
  const patched = await a.request({ method: 'PATCH', url: `/v1/time-entries/${created.json.id}`, token: p.token,
    headers: { 'if-match': created.headers.etag }, payload: { minutes: 1441 } });
  expect(patched, 422, 'INVALID_DURATION', '/minutes', 'updateTimeEntry');

  // Tasks
  expect(await post('/v1/tasks', { project_id: project.id, name: 'X', assignee_member_ids: ['not an email'] }), 422, 'INVALID_ASSIGNEE',
    '/assignee_member_ids/0', 'createTask assignee');
  expect(await post('/v1/tasks', { project_id: project.id, name: 'X', custom_fields: 'x' }), 422, 'INVALID_CUSTOM_FIELD',
    '/custom_fields', 'createTask custom_fields');
  expect(await post(`/v1/tasks/${task.id}/transitions`, { transition: 'Not A Name!' }), 409, 'INVALID_TRANSITION', '/transition',
    'transitionTask');
  expect(await post(`/v1/tasks/${task.id}/transitions`, { transition: 'start', subject: { member_id: 7 } }), 422,
    'INVALID_SUBJECT_MEMBER', '/subject', 'transitionTask subject');
  expect(await post(`/v1/tasks/${task.id}/notes`, { text: 'n', subject: { member_id: [] } }), 422, 'INVALID_SUBJECT_MEMBER', '/subject',
    'addTaskNote subject');

  // Projects
  expect(await post('/v1/projects', { code: 'SC2', name: 'X', manager_member_id: 'nope' }), 422, 'INVALID_MANAGER', '/manager_member_id',
    'createProject manager');
  expect(await post('/v1/projects', { code: 'SC3', name: 'X', custom_fields: [] }), 422, 'INVALID_CUSTOM_FIELD', '/custom_fields',
    'createProject custom_fields');

  // Invoices
  const customer = (await a.cli('customer', 'create', '--org', p.orgId, '--kind', 'billing', '--name', 'C', '--currency', 'EUR')).customer_id;
  expect(await post('/v1/invoices', { customer_id: customer, lines: [{ description: 'x', quantity: 1, unit_price: '1.00' }] }), 422,
    'INVALID_INVOICE_LINE', '/lines/0/quantity', 'createInvoice line');
  assertProblem(t, await post('/v1/invoices', { customer_id: customer, lines: 'none' }), 422, 'VALIDATION_FAILED');

  // Webhook endpoints
  expect(await post('/v1/webhook-endpoints', { url: 'not a url', events: ['project.created'] }), 422, 'WEBHOOK_URL_UNSAFE', '/url',
    'createWebhookEndpoint url');
  expect(await post('/v1/webhook-endpoints', { url: 'https://hooks.example/x', events: [42] }), 422, 'WEBHOOK_EVENT_NOT_SUPPORTED',
    '/events/0', 'createWebhookEndpoint events');
  assertProblem(t, await post('/v1/webhook-endpoints', { url: 'https://hooks.example/x', events: [] }), 422, 'VALIDATION_FAILED');
});
