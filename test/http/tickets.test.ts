// Tickets over HTTP: create, read, update with If-Match, the workflow, typed messages with
// attachments, replies emailed by the worker to a real SMTP server on loopback, search and filters,
// access per Role and policy, and every Tickets error code.
import t, { type Test } from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { startApp, assertProblem, type TestApp } from '../helpers/app.ts';
import { startSmtp } from '../helpers/smtp.ts';
import { startWorker } from '../../src/worker/index.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

interface World { a: TestApp; token: string; org: string; key: () => Record<string, string> }

async function world(t: Test, env: Record<string, string> = {}): Promise<World> {
  const a = await startApp(t, env);
  const p = await a.principal('member,manager');
  let n = 0;
  return { a, token: p.token, org: p.orgId, key: () => ({ 'idempotency-key': `t-${++n}-${randomBytes(3).toString('hex')}` }) };
}

const create = (w: World, body: Record<string, unknown> = {}, token = w.token) => w.a.request({ method: 'POST', url: '/v1/tickets', token,
  headers: w.key(), payload: { subject: 'Printer on fire', description: 'It is on fire.', requester: { name: 'Ann', email: 'Ann@Customer.example' }, ...body } });

async function ticketFile(w: World, ticket: string, text: string) {
  const bytes = Buffer.from(text);
  const u = (await w.a.request({ method: 'POST', url: '/v1/files/uploads', token: w.token, headers: w.key(),
    payload: { name: 'log.txt', content_type: 'text/plain', size_bytes: bytes.length, sha256: sha(bytes), linked_resource: { type: 'ticket', id: ticket } } })).json;
  await w.a.request({ method: 'PUT', url: new URL(u.upload_url).pathname, payload: bytes, headers: { 'content-type': 'text/plain' } });
  const f = (await w.a.request({ method: 'POST', url: `/v1/files/uploads/${u.id}/complete`, token: w.token, headers: w.key() })).json;
  for (let i = 0; i < 100; i++) {
    const g = (await w.a.request({ url: `/v1/files/${f.id}`, token: w.token })).json;
    if (g.status === 'ready') return f.id as string;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('file not ready');
}

t.test('create, number, get with ETag, update with If-Match, the workflow', async (t) => {
  const w = await world(t);
  const c = await create(w, { priority: 'high', tags: ['Hardware', 'fire'], external_id: 'zd-1' });
  t.equal(c.statusCode, 201);
  t.match(c.json, { object: 'ticket', id: /^tkt_/, number: 'TKT-000001', status: 'new', priority: 'high',
    requester: { name: 'Ann', email: 'ann@customer.example' }, tags: ['fire', 'hardware'], external_id: 'zd-1', version: 1,
    resolution: null, assignee_member_id: null });
  t.same(c.json.transitions.map((x: any) => x.name), ['hold', 'open', 'pend', 'resolve']);
  t.equal(c.headers.location, `/v1/tickets/${c.json.id}`);
  t.equal((await create(w)).json.number, 'TKT-000002', 'numbers increase per organization');

  const g = await w.a.request({ url: `/v1/tickets/${c.json.id}`, token: w.token });
  t.equal(g.headers.etag, '"1"');
  await w.a.addMember(w.org, 'agent@org.example');
  const u = await w.a.request({ method: 'PATCH', url: `/v1/tickets/${c.json.id}`, token: w.token, headers: { 'if-match': '"1"' },
    payload: { assignee_member_id: 'Agent@Org.example', subject: 'Printer still on fire' } });
  t.equal(u.statusCode, 200, u.body);
  t.match(u.json, { assignee_member_id: 'agent@org.example', subject: 'Printer still on fire', version: 2 });
  assertProblem(t, await w.a.request({ method: 'PATCH', url: `/v1/tickets/${c.json.id}`, token: w.token, headers: { 'if-match': '"1"' },
    payload: { priority: 'low' } }), 412, 'STALE_RESOURCE');
  assertProblem(t, await w.a.request({ method: 'PATCH', url: `/v1/tickets/${c.json.id}`, token: w.token, payload: { priority: 'low' } }),
    428, 'PRECONDITION_REQUIRED');

  const tr = (transition: string, extra: Record<string, unknown> = {}) => w.a.request({ method: 'POST', url: `/v1/tickets/${c.json.id}/transitions`,
    token: w.token, payload: { transition, ...extra } });
  t.match((await tr('open')).json, { status: 'open' });
  const noResolution = await tr('resolve');
  assertProblem(t, noResolution, 422, 'VALIDATION_FAILED');
  t.equal(noResolution.json.errors[0].pointer, '/resolution');
  const solved = await tr('resolve', { resolution: 'Replaced the fuser.' });
  t.match(solved.json, { status: 'solved', resolution: 'Replaced the fuser.', resolved_at: /Z$/ });
  t.same(solved.json.transitions.map((x: any) => x.name), ['close', 'reopen']);
  assertProblem(t, await tr('pend'), 409, 'INVALID_TRANSITION');
  t.match((await tr('close')).json, { status: 'closed', resolution: 'Replaced the fuser.', transitions: [] });
  assertProblem(t, await tr('reopen'), 409, 'INVALID_TRANSITION');
});

t.test('Tickets error codes', async (t) => {
  const w = await world(t);
  const worker = await startWorker(w.a.config, { pollInterval: 50 });
  t.teardown(() => worker.stop());
  const c = (await create(w, { external_id: 'ext-1' })).json;
  // EXTERNAL_ID_CONFLICT: per API Client; another client may use the same external_id.
  assertProblem(t, await create(w, { external_id: 'ext-1' }), 409, 'EXTERNAL_ID_CONFLICT');
  const other = await w.a.token(await w.a.createClient(w.org, { roles: 'manager' }));
  t.equal((await create(w, { external_id: 'ext-1' }, other)).statusCode, 201, 'another client may use it');
  // TICKET_NOT_FOUND: unknown and foreign.
  assertProblem(t, await w.a.request({ url: '/v1/tickets/tkt_nope', token: w.token }), 404, 'TICKET_NOT_FOUND');
  const foreign = await world(t);
  const theirs = (await create(foreign)).json.id;
  assertProblem(t, await w.a.request({ url: `/v1/tickets/${theirs}`, token: w.token }), 404, 'TICKET_NOT_FOUND');
  assertProblem(t, await w.a.request({ url: `/v1/tickets/${theirs}/messages`, token: w.token }), 404, 'TICKET_NOT_FOUND');
  assertProblem(t, await w.a.request({ method: 'POST', url: `/v1/tickets/${theirs}/messages`, token: w.token, headers: w.key(),
    payload: { type: 'internal_note', body: 'x' } }), 404, 'TICKET_NOT_FOUND');
  assertProblem(t, await w.a.request({ method: 'POST', url: `/v1/tickets/${theirs}/transitions`, token: w.token,
    payload: { transition: 'open' } }), 404, 'TICKET_NOT_FOUND');
  // INVALID_ASSIGNEE: not a member, or not active.
  await w.a.addMember(w.org, 'gone@org.example', { status: 'inactive' });
  for (const who of ['nobody@org.example', 'gone@org.example']) {
    const r = await w.a.request({ method: 'PATCH', url: `/v1/tickets/${c.id}`, token: w.token, headers: { 'if-match': `"${c.version}"` },
      payload: { assignee_member_id: who } });
    assertProblem(t, r, 422, 'INVALID_ASSIGNEE');
  }
  // INVALID_TRANSITION: status sent to updateTicket (the spec's tie), and a transition not offered.
  const st = await w.a.request({ method: 'PATCH', url: `/v1/tickets/${c.id}`, token: w.token, headers: { 'if-match': `"${c.version}"` },
    payload: { status: 'solved' } });
  assertProblem(t, st, 409, 'INVALID_TRANSITION');
  assertProblem(t, await w.a.request({ method: 'POST', url: `/v1/tickets/${c.id}/transitions`, token: w.token,
    payload: { transition: 'close' } }), 409, 'INVALID_TRANSITION');
  assertProblem(t, await w.a.request({ method: 'POST', url: `/v1/tickets/${c.id}/transitions`, token: w.token,
    payload: { transition: 'Not A Name' } }), 409, 'INVALID_TRANSITION');
  assertProblem(t, await w.a.request({ method: 'PATCH', url: `/v1/tickets/${c.id}`, token: w.token, headers: { 'if-match': `"${c.version}"` },
    payload: { number: 'TKT-9' } }), 422, 'IMMUTABLE_FIELD');
  assertProblem(t, await w.a.request({ method: 'PATCH', url: `/v1/tickets/${c.id}`, token: w.token, headers: { 'if-match': `"${c.version}"` },
    payload: { project_id: 'prj_nope' } }), 404, 'PROJECT_NOT_FOUND');
  // STALE_RESOURCE
  assertProblem(t, await w.a.request({ method: 'PATCH', url: `/v1/tickets/${c.id}`, token: w.token, headers: { 'if-match': '"99"' },
    payload: { priority: 'low' } }), 412, 'STALE_RESOURCE');
  // ATTACHMENT_NOT_AVAILABLE: unknown, another ticket's, a project's file; nothing is written.
  const second = (await create(w)).json.id;
  const onSecond = await ticketFile(w, second, 'other ticket\n');
  const notes = async () => (await w.a.request({ url: `/v1/tickets/${c.id}/messages`, token: w.token })).json.data.length;
  for (const bad of [['fil_nope'], [onSecond]]) {
    const r = await w.a.request({ method: 'POST', url: `/v1/tickets/${c.id}/messages`, token: w.token, headers: w.key(),
      payload: { type: 'reply', body: 'see attached', attachments: bad } });
    assertProblem(t, r, 422, 'ATTACHMENT_NOT_AVAILABLE');
  }
  t.equal(await notes(), 0, 'no message written');
});

t.test('messages: replies emailed by the worker, notes never leave; delivery on the message', async (t) => {
  const smtp = await startSmtp(t);
  const w = await world(t, { SVC_SMTP_URL: smtp.url });
  const worker = await startWorker(w.a.config, { pollInterval: 50 });
  t.teardown(() => worker.stop());
  const c = (await create(w)).json;
  const attachment = await ticketFile(w, c.id, 'diagnostic log\n');
  const secretFile = await ticketFile(w, c.id, 'internal only\n');
  const note = await w.a.request({ method: 'POST', url: `/v1/tickets/${c.id}/messages`, token: w.token, headers: w.key(),
    payload: { type: 'internal_note', body: 'Customer is a VIP; codeword BANANA.', attachments: [secretFile] } });
  t.equal(note.statusCode, 201);
  t.match(note.json, { object: 'ticket_message', type: 'internal_note', delivery: null, author: { type: 'api_client' } });
  const reply = await w.a.request({ method: 'POST', url: `/v1/tickets/${c.id}/messages`, token: w.token, headers: w.key(),
    payload: { type: 'reply', body: 'We are on it. Log attached.', attachments: [attachment] } });
  t.equal(reply.statusCode, 201);
  t.match(reply.json, { type: 'reply', delivery: { status: 'queued' }, attachments: [attachment] });
  let delivered: any;
  for (let i = 0; i < 200 && delivered?.delivery?.status !== 'sent'; i++) {
    await new Promise((r) => setTimeout(r, 50));
    delivered = (await w.a.request({ url: `/v1/tickets/${c.id}/messages`, token: w.token })).json.data.find((m: any) => m.id === reply.json.id);
  }
  t.match(delivered.delivery, { status: 'sent', delivered_at: /Z$/ });
  t.equal(smtp.received.length, 1, 'one email: the reply, not the note');
  const mail = smtp.received[0]!;
  t.equal(mail.to && !Array.isArray(mail.to) ? mail.to.value[0]!.address : '', 'ann@customer.example');
  t.match(mail.subject, /^\[TKT-000001\] Printer on fire$/);
  t.match(mail.text, /We are on it/);
  t.notMatch(mail.text ?? '', /BANANA/, 'no internal note in the email');
  t.same(mail.attachments.map((a) => a.content.toString()), ['diagnostic log\n'], 'only the reply\'s attachment');

  const list = (await w.a.request({ url: `/v1/tickets/${c.id}/messages`, token: w.token })).json;
  t.same(list.data.map((m: any) => m.type), ['internal_note', 'reply'], 'chronological');
  const page1 = (await w.a.request({ url: `/v1/tickets/${c.id}/messages?limit=1`, token: w.token })).json;
  t.equal(page1.has_more, true);
  const page2 = (await w.a.request({ url: `/v1/tickets/${c.id}/messages?limit=1&after=${encodeURIComponent(page1.next_cursor)}`, token: w.token })).json;
  t.same(page2.data.map((m: any) => m.id), [reply.json.id]);

  // A provider that refuses: the reply shows it failed.
  smtp.refuseRecipient = () => ({ code: 550, message: 'no such user' });
  const refused = (await w.a.request({ method: 'POST', url: `/v1/tickets/${c.id}/messages`, token: w.token, headers: w.key(),
    payload: { type: 'reply', body: 'Anyone there?' } })).json;
  let failed: any;
  for (let i = 0; i < 200 && failed?.delivery?.status !== 'failed'; i++) {
    await new Promise((r) => setTimeout(r, 50));
    failed = (await w.a.request({ url: `/v1/tickets/${c.id}/messages`, token: w.token })).json.data.find((m: any) => m.id === refused.id);
  }
  t.match(failed.delivery, { status: 'failed', detail: /refused.*550/ });

  // Events: created, and one per message; a subscriber that may not read notes gets no note event (checked in SQL below).
  const events = await w.a.admin`select type from app.events where resource_id = ${c.id} or resource_id in (${note.json.id}, ${reply.json.id}) order by created_at, type`;
  t.same(events.map((e) => e.type), ['ticket.created', 'ticket.message.created', 'ticket.message.created']);
  const [visible] = await w.a.admin`select count(*)::int as n from app.ticket_messages where id = ${note.json.id}`;
  t.equal(visible!.n, 1);
});

t.test('access: module, member and manager, finance and hr by policy; notes and requester email for staff only', async (t) => {
  const w = await world(t);
  const c = (await create(w)).json;
  await w.a.request({ method: 'POST', url: `/v1/tickets/${c.id}/messages`, token: w.token, headers: w.key(),
    payload: { type: 'internal_note', body: 'internal' } });
  await w.a.request({ method: 'POST', url: `/v1/tickets/${c.id}/messages`, token: w.token, headers: w.key(),
    payload: { type: 'reply', body: 'public' } });
  const as = async (roles: string) => w.a.token(await w.a.createClient(w.org, { roles }));
  const member = await as('member');
  const finance = await as('finance');
  const hr = await as('hr');
  t.equal((await w.a.request({ url: '/v1/tickets', token: member })).json.data.length, 1, 'member reads tickets');
  assertProblem(t, await create(w, {}, member), 403, 'ROLE_REQUIRED');
  assertProblem(t, await w.a.request({ method: 'POST', url: `/v1/tickets/${c.id}/transitions`, token: member, payload: { transition: 'open' } }),
    403, 'ROLE_REQUIRED');
  assertProblem(t, await w.a.request({ url: '/v1/tickets', token: finance }), 403, 'ROLE_REQUIRED');
  assertProblem(t, await w.a.request({ url: `/v1/tickets/${c.id}`, token: hr }), 403, 'ROLE_REQUIRED');
  await w.a.cli('org', 'set-ticket-policy', '--org', w.org, '--finance-may-read', 'true', '--hr-may-read', 'true');
  const fin = await w.a.request({ url: `/v1/tickets/${c.id}`, token: finance });
  t.equal(fin.statusCode, 200);
  t.same(fin.json.requester, { name: 'Ann', email: null }, 'finance sees the requester\'s name only');
  t.same((await w.a.request({ url: `/v1/tickets/${c.id}/messages`, token: hr })).json.data.map((m: any) => m.type), ['reply'],
    'hr reads replies, not internal notes');
  t.same((await w.a.request({ url: `/v1/tickets/${c.id}/messages`, token: member })).json.data.map((m: any) => m.type), ['internal_note', 'reply']);
  t.same((await w.a.request({ url: '/v1/tickets?search=internal', token: finance })).json.data, [], 'notes do not make tickets findable for finance');
  t.equal((await w.a.request({ url: '/v1/tickets?search=internal', token: member })).json.data.length, 1, 'they do for staff');

  await w.a.cli('org', 'set-ticket-policy', '--org', w.org, '--module-enabled', 'false');
  assertProblem(t, await w.a.request({ url: '/v1/tickets', token: member }), 403, 'TICKET_MODULE_DISABLED');
  assertProblem(t, await w.a.request({ url: `/v1/tickets/${c.id}`, token: w.token }), 403, 'TICKET_MODULE_DISABLED');
  assertProblem(t, await create(w), 403, 'TICKET_MODULE_DISABLED');
});

t.test('filters and full-text search', async (t) => {
  const w = await world(t);
  await w.a.addMember(w.org, 'agent@org.example');
  const project = (await w.a.request({ method: 'POST', url: '/v1/projects', token: w.token, headers: w.key(), payload: { code: 'S', name: 'Support' } })).json.id;
  const a = (await create(w, { subject: 'Invoice email bounced', priority: 'urgent', tags: ['billing'], requester: { email: 'bob@x.example' } })).json;
  const b = (await create(w, { subject: 'Login fails', description: 'Password reset loops forever' })).json;
  await w.a.request({ method: 'PATCH', url: `/v1/tickets/${b.id}`, token: w.token, headers: { 'if-match': '"1"' },
    payload: { assignee_member_id: 'agent@org.example', project_id: project } });
  await w.a.request({ method: 'POST', url: `/v1/tickets/${a.id}/messages`, token: w.token, headers: w.key(),
    payload: { type: 'reply', body: 'The mailbox quota was exceeded.' } });
  const ids = async (q: string) => (await w.a.request({ url: `/v1/tickets?${q}`, token: w.token })).json.data.map((x: any) => x.id);
  t.same(await ids('priority=urgent'), [a.id]);
  t.same(await ids('tag=Billing'), [a.id]);
  t.same(await ids('requester_email=BOB@x.example'), [a.id]);
  t.same(await ids('assignee_member_id=agent@org.example'), [b.id]);
  t.same(await ids(`project_id=${project}`), [b.id]);
  t.same(await ids('status=new'), [b.id, a.id]);
  t.same(await ids('search=password reset'), [b.id], 'description');
  t.same(await ids('search=quota'), [a.id], 'a reply\'s body');
  t.same(await ids('search=invoice -login'), [a.id], 'web search syntax');
  t.same(await ids(`updated_since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`), []);
});

t.test('a ticket\'s file is there only for those who may read tickets', async (t) => {
  const w = await world(t);
  const c = (await create(w)).json;
  // Uploaded and completed (no worker: it stays in its scan, which does not matter here).
  const bytes = Buffer.from('diagnostic log\n');
  const u = (await w.a.request({ method: 'POST', url: '/v1/files/uploads', token: w.token, headers: w.key(),
    payload: { name: 'log.txt', content_type: 'text/plain', size_bytes: bytes.length, sha256: sha(bytes), linked_resource: { type: 'ticket', id: c.id } } })).json;
  await w.a.request({ method: 'PUT', url: new URL(u.upload_url).pathname, payload: bytes, headers: { 'content-type': 'text/plain' } });
  const file = (await w.a.request({ method: 'POST', url: `/v1/files/uploads/${u.id}/complete`, token: w.token, headers: w.key() })).json.id;
  t.equal((await w.a.request({ url: `/v1/files/${file}`, token: w.token })).statusCode, 200, 'the manager finds it');
  const finance = await w.a.token(await w.a.createClient(w.org, { roles: 'finance' }));
  // The file's row policy follows the ticket's ("Files are visible where the linked resource is"): not found, not forbidden.
  assertProblem(t, await w.a.request({ url: `/v1/files/${file}`, token: finance }), 404, 'FILE_NOT_FOUND');
  await w.a.cli('org', 'set-ticket-policy', '--org', w.org, '--finance-may-read', 'true');
  t.equal((await w.a.request({ url: `/v1/files/${file}`, token: finance })).statusCode, 200, 'once finance may read tickets');
});
