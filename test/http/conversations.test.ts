// Conversations over HTTP with a scripted model provider on loopback: subjects resolved in SQL,
// ownership, content blocks, chat runs acting as the client (a forbidden tool call fails safely),
// replies appended by the database, the bounded working context (compaction, clear, expiry),
// archive, and every Conversations code; the ownership and archive rules also from inside.
import t, { type Test } from 'tap';
import postgres from 'postgres';
import { startApp, assertProblem, type TestApp } from '../helpers/app.ts';
import { executeRun } from '../../src/agents/engine.ts';
import { beginRequest, inRequest, visibleRows } from '../helpers/sql.ts';
import { provider, say } from '../helpers/model.ts';

let n = 0;
const key = () => ({ 'idempotency-key': `c-${++n}-${Math.random()}` });

async function world(t: Test, env: Record<string, string> = {}) {
  const a = await startApp(t, { SVC_WORKER: 'off', ...env });
  const p = await a.principal('member,manager');
  await a.addMember(p.orgId, 'ann@x.example', { name: 'Ann Lee' });
  await a.addMember(p.orgId, 'ann2@x.example', { name: 'Sam Poe' });
  await a.addMember(p.orgId, 'sam@x.example', { name: 'sam poe' });
  return { a, p };
}

const create = (a: TestApp, token: string, payload: unknown) =>
  a.request({ method: 'POST', url: '/v1/conversations', token, headers: key(), payload });
const send = (a: TestApp, token: string, id: string, content: unknown) =>
  a.request({ method: 'POST', url: `/v1/conversations/${id}/messages`, token, headers: key(), payload: { content } });
const messages = async (a: TestApp, token: string, id: string) =>
  (await a.request({ url: `/v1/conversations/${id}/messages?limit=200`, token })).json.data;

t.test('conversations: subjects, ownership, filters, archive and every Conversations code', async (t) => {
  const { a, p } = await world(t);
  const c = await create(a, p.token, { title: 'Weekly', subject: { member_id: 'Ann@x.example' }, metadata: { team: 'ops' } });
  t.equal(c.statusCode, 201);
  t.match(c.json, { object: 'conversation', id: /^cnv_/, title: 'Weekly', status: 'active', subject: { member_id: 'ann@x.example' },
    metadata: { team: 'ops' }, message_count: 0, working_context: { from_message: 1, messages: 0, compacted: false, cleared_at: null },
    archived_at: null });
  t.equal(c.headers.location, `/v1/conversations/${c.json.id}`);
  t.match((await create(a, p.token, { subject: { display_name: 'ann lee' } })).json, { subject: { member_id: 'ann@x.example' } });
  t.match((await create(a, p.token, {})).json, { subject: null, title: null });
  assertProblem(t, await create(a, p.token, { subject: { member_id: 'nobody@x.example' } }), 422, 'SUBJECT_NOT_FOUND');
  assertProblem(t, await create(a, p.token, { subject: { display_name: 'Nobody' } }), 422, 'SUBJECT_NOT_FOUND');
  const ambiguous = await create(a, p.token, { subject: { display_name: 'Sam Poe' } });
  assertProblem(t, ambiguous, 422, 'SUBJECT_AMBIGUOUS');
  t.equal(ambiguous.json.errors[0].pointer, '/subject');
  assertProblem(t, await create(a, p.token, { subject: { project_id: 'prj_x' } }), 422, 'SUBJECT_NOT_SUPPORTED');
  assertProblem(t, await create(a, p.token, { subject: { type: 'team', member_id: 'ann@x.example' } }), 422, 'SUBJECT_NOT_SUPPORTED');
  assertProblem(t, await create(a, p.token, { subject: { member_id: 'ann@x.example', display_name: 'Ann Lee' } }), 422, 'SUBJECT_NOT_SUPPORTED');

  const id = c.json.id;
  const other = await a.token(await a.createClient(p.orgId, { roles: 'member,manager' }));
  for (const res of [
    await a.request({ url: `/v1/conversations/${id}`, token: other }),
    await a.request({ url: `/v1/conversations/${id}/messages`, token: other }),
    await send(a, other, id, [{ type: 'text', text: 'hi' }]),
    await a.request({ method: 'POST', url: `/v1/conversations/${id}/archive`, token: other, headers: key() }),
    await a.request({ method: 'POST', url: `/v1/conversations/${id}/clear-context`, token: other, headers: key() }),
  ]) assertProblem(t, res, 404, 'CONVERSATION_NOT_FOUND');
  t.same((await a.request({ url: '/v1/conversations', token: other })).json.data, []);

  // Content blocks: each shape checked, with pointers; error blocks are the service's.
  const bad = await send(a, p.token, id, [{ type: 'text' }, { type: 'error', code: 'X', message: 'y' }, { type: 'data', data: 3 },
    { type: 'file_reference' }, { type: 'citation', text: 'q', source: { type: 'task' } }, { type: 'video' }]);
  assertProblem(t, bad, 422, 'MESSAGE_CONTENT_INVALID');
  t.same(bad.json.errors.map((e: any) => e.pointer), ['/content/0/text', '/content/1/type', '/content/2/data', '/content/3/file_id',
    '/content/4/source/id', '/content/5/type']);
  assertProblem(t, await send(a, p.token, id, 'hello'), 422, 'MESSAGE_CONTENT_INVALID');
  assertProblem(t, await send(a, p.token, id, []), 422, 'MESSAGE_CONTENT_INVALID');
  const missingFile = await send(a, p.token, id, [{ type: 'text', text: 'see' }, { type: 'file_reference', file_id: 'fil_nope' }]);
  assertProblem(t, missingFile, 422, 'MESSAGE_CONTENT_INVALID');
  t.equal(missingFile.json.errors[0].pointer, '/content/1/file_id');
  assertProblem(t, await send(a, p.token, id, [{ type: 'text', text: 'x'.repeat(16_001) }]), 422, 'CONTEXT_LIMIT_EXCEEDED');
  // Over the budget whatever its size under the body limit (past the byte bound of content, which
  // the HTTP layer checks before the database sees it, and which lies above the budget).
  const [{ budget }] = await a.admin`select app_private.message_budget() as budget` as [{ budget: number }];
  t.ok(budget < 262_144, 'the budget lies under the byte bound of content');
  const huge = await send(a, p.token, id, [{ type: 'text', text: 'x'.repeat(900_000) }]);
  assertProblem(t, huge, 422, 'CONTEXT_LIMIT_EXCEEDED');
  t.match(huge.json.errors, [{ pointer: '/content', code: 'CONTEXT_LIMIT_EXCEEDED' }]);
  t.equal((await a.request({ url: `/v1/conversations/${id}`, token: p.token })).json.message_count, 0, 'nothing refused was kept');

  // Filters.
  const ids = async (q: string) => (await a.request({ url: `/v1/conversations${q}`, token: p.token })).json.data.map((x: any) => x.id);
  t.equal((await ids('')).length, 3);
  t.equal((await ids('?subject_member_id=ann@x.example')).length, 2);
  t.same(await ids(`?updated_after=${encodeURIComponent('2100-01-01T00:00:00Z')}`), []);

  // Archive: kept, refuses new messages, stays archived; archiving again changes nothing.
  const archived = await a.request({ method: 'POST', url: `/v1/conversations/${id}/archive`, token: p.token, headers: key() });
  t.match(archived.json, { status: 'archived', archived_at: /Z$/ });
  assertProblem(t, await send(a, p.token, id, [{ type: 'text', text: 'hi' }]), 409, 'CONVERSATION_ARCHIVED');
  t.equal((await a.request({ method: 'POST', url: `/v1/conversations/${id}/archive`, token: p.token, headers: key() })).json.archived_at,
    archived.json.archived_at);
  t.same(await ids('?status=archived'), [id]);

  // Inside: the same rules for every writer, and nothing without a context.
  const failure = async (q: Promise<unknown>) => { try { await q; return 'ok'; } catch (e) { return (e as Error).message; } };
  t.equal(await failure(a.admin`update app.conversations set status = 'active', archived_at = null where id = ${id}`), 'CONVERSATION_ARCHIVED');
  t.equal(await failure(a.admin`insert into app.conversation_messages (organization_id, conversation_id, seq, role, content)
    values (${p.orgId}, ${id}, 1, 'user', '[{"type":"text","text":"late"}]')`), 'CONVERSATION_ARCHIVED');
  t.equal(await failure(a.admin`update app.conversations set subject_member_id = 'sam@x.example' where id = ${id}`), 'CONFLICT');
  const rt = postgres(a.runtimeUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => rt.end());
  // (On Citus a view read outside a delegated call is refused on the shards: it sees nothing either.)
  t.equal(await visibleRows(rt, 'api.conversations'), 0);
  t.equal(await visibleRows(rt, 'api.conversation_messages'), 0);
  t.not(await failure(rt`select count(*) from app.conversations`), 'ok');
  const otherClient = await a.createClient(p.orgId, { roles: 'member,manager' });
  t.equal(await rt.begin(async (tx) => {
    await beginRequest(tx, otherClient);
    return (await (await inRequest(t, a.runtimeUrl, tx, p.orgId))`select count(*)::int as n from api.conversations`)[0]!.n;
  }), 0, 'another client of the organization sees none');
});

t.test('chat: a run as the client, the reply appended, a forbidden tool call fails safely', async (t) => {
  const scripted = await provider(t, []);
  const { a, p } = await world(t, { SVC_MODEL_URL: scripted.url });
  const project = (await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: key(), payload: { code: 'CH', name: 'Chat' } })).json.id;
  const task = (await a.request({ method: 'POST', url: '/v1/tasks', token: p.token, headers: key(), payload: { project_id: project, name: 'T' } })).json.id;
  const member = await a.createClient(p.orgId, { roles: 'member', license: 'manager' });
  const token = await a.token(member);
  const cnv = (await create(a, token, { title: 'Help', subject: { member_id: 'ann@x.example' } })).json;
  const call = (id: string, name: string, args: unknown) => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } });
  scripted.replies.push(
    () => ({ role: 'assistant', content: null, tool_calls: [call('c1', 'tasks__transition', { task_id: task, transition: 'start' })] }),
    say('I cannot start it: your client lacks the manager Role.'));
  const sent = await send(a, token, cnv.id, [{ type: 'text', text: 'Start task T please.' }, { type: 'data', label: 'ctx', data: { urgent: true } }]);
  t.equal(sent.statusCode, 202);
  t.match(sent.json, { object: 'conversation_message_accepted',
    message: { object: 'conversation_message', id: /^msg_/, conversation_id: cnv.id, role: 'user', run_id: null },
    run: { object: 'run', kind: 'agent', agent_id: null, conversation_id: cnv.id, status: 'queued', subject: { member_id: 'ann@x.example' },
      input: { message_id: sent.json.message.id } } });
  const runId = sent.json.run.id;
  t.equal(await executeRun(a.admin, a.config, p.orgId, runId), 'succeeded');
  const history = await messages(a, token, cnv.id);
  t.same(history.map((m: any) => [m.role, m.content]), [
    ['user', [{ type: 'text', text: 'Start task T please.' }, { type: 'data', label: 'ctx', data: { urgent: true } }]],
    ['assistant', [{ type: 'text', text: 'I cannot start it: your client lacks the manager Role.' }]],
  ]);
  t.equal(history[1].run_id, runId);
  t.equal((await a.admin`select status from app.tasks where id = ${task}`)[0]!.status, 'todo', 'the forbidden call changed nothing');
  const calls = await a.admin`select skill, status, error_code, conversation_id from app.run_tool_calls where run_id = ${runId}`;
  t.same(calls.map((c) => [c.skill, c.status, c.error_code, c.conversation_id]), [['tasks.transition', 'failed', 'ROLE_REQUIRED', cnv.id]],
    'audited with the conversation and the run');
  t.same(scripted.requests[0].tools.map((x: any) => x.function.name), ['tasks__find_attention'], 'only usable skills are offered');
  t.match(scripted.requests[0].messages.at(-1), { role: 'user', content: 'Start task T please.\n[data ctx] {"urgent":true}' });
  t.same((await a.admin`select type from app.events where resource_type = 'conversation_message' order by created_at, resource_version`)
    .map((e) => e.type), ['conversation.message.created', 'conversation.message.created']);
  t.same((await a.request({ url: `/v1/runs?conversation_id=${cnv.id}`, token })).json.data.map((r: any) => r.id), [runId]);

  // The provider fails: the run fails and leaves an error block.
  const again = await send(a, token, cnv.id, [{ type: 'text', text: 'And now?' }]);
  t.equal(await executeRun(a.admin, a.config, p.orgId, again.json.run.id), 'failed');
  t.same((await messages(a, token, cnv.id)).at(-1).content,
    [{ type: 'error', code: 'MODEL_PROVIDER_UNAVAILABLE', message: 'the model provider answered HTTP 503' }]);
});

t.test('without a model provider the chat run fails with AGENT_UNAVAILABLE, and readiness says why', async (t) => {
  const { a, p } = await world(t);
  const cnv = (await create(a, p.token, {})).json;
  const sent = await send(a, p.token, cnv.id, [{ type: 'text', text: 'hello' }]);
  t.equal(sent.statusCode, 202);
  t.equal(await executeRun(a.admin, a.config, p.orgId, sent.json.run.id), 'failed');
  t.same((await messages(a, p.token, cnv.id)).at(-1).content,
    [{ type: 'error', code: 'AGENT_UNAVAILABLE', message: 'no model provider is configured for this service' }]);
  t.same((await a.request({ method: 'POST', url: '/v1/agents/agt_assistant/readiness', token: p.token, payload: { input: { prompt: 'x' } } }))
    .json.blockers.map((b: any) => b.code), ['AGENT_UNAVAILABLE']);
});

t.test('the working context: bounded, compacted, cleared, expired; the history stays', async (t) => {
  const scripted = await provider(t, []);
  const { a, p } = await world(t, { SVC_MODEL_URL: scripted.url });
  const cnv = (await create(a, p.token, { title: 'Long' })).json;
  const big = (i: number) => [{ type: 'text', text: `turn ${i} ` + 'words '.repeat(1_900) }];
  for (let i = 1; i <= 3; i++) {
    scripted.replies.push(say(`answer ${i}`));
    const s = await send(a, p.token, cnv.id, big(i));
    t.equal(await executeRun(a.admin, a.config, p.orgId, s.json.run.id), 'succeeded');
  }
  const conv = (await a.request({ url: `/v1/conversations/${cnv.id}`, token: p.token })).json;
  t.equal(conv.message_count, 6);
  t.match(conv.working_context, { compacted: true });
  t.ok(conv.working_context.from_message > 1, 'older turns left the working context');
  const last = scripted.requests.at(-1);
  t.match(last.messages[1], { role: 'system', content: /Earlier turns of this conversation, compacted:\nuser: turn 1 words/ });
  t.ok(JSON.stringify(last.messages).length < 40_000, 'what the model sees is bounded');
  t.equal((await messages(a, p.token, cnv.id)).length, 6, 'the history stays whole');

  const cleared = await a.request({ method: 'POST', url: `/v1/conversations/${cnv.id}/clear-context`, token: p.token, headers: key() });
  t.match(cleared.json, { status: 'active', working_context: { from_message: 7, messages: 0, compacted: false, cleared_at: /Z$/ } });
  scripted.replies.push(say('fresh'));
  const s = await send(a, p.token, cnv.id, [{ type: 'text', text: 'new topic' }]);
  await executeRun(a.admin, a.config, p.orgId, s.json.run.id);
  t.same(scripted.requests.at(-1).messages.slice(1), [{ role: 'user', content: 'new topic' }], 'earlier messages are no longer used');
  t.equal((await messages(a, p.token, cnv.id)).length, 8);

  // 30 days without activity (here: any idle time): the working context expires, the history stays.
  t.equal((await a.admin`select control.expire_conversation_contexts(interval '0 seconds') as n`)[0]!.n, 1);
  t.match((await a.request({ url: `/v1/conversations/${cnv.id}`, token: p.token })).json,
    { status: 'active', message_count: 8, working_context: { messages: 0, expired_at: /Z$/ } });
});
