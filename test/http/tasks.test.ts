// Tasks over HTTP: the nine task operations, every task error code of the decided behaviours
// (each leaving the task unchanged), the default workflow, subjects, the notes policy,
// dependencies, archive/restore, Role projections, listTasks filters and keyset pagination for
// every sort in both orders, tenancy, and idempotent replay.
import t from 'tap';
import type { Test } from 'tap';
import { startApp, assertProblem, type TestApp } from '../helpers/app.ts';

type Res = Awaited<ReturnType<TestApp['request']>>;

// Every top-level test has its own database: run them side by side.
t.jobs = 4;

let keySeq = 0;
const key = () => ({ 'idempotency-key': `tasks-test-${process.pid}-${++keySeq}` });

async function createProject(a: TestApp, token: string, code: string, extra: Record<string, unknown> = {}) {
  const r = await a.request({ method: 'POST', url: '/v1/projects', token, headers: key(), payload: { code, name: `Project ${code}`, ...extra } });
  if (r.statusCode !== 201) throw new Error(`createProject ${code}: ${r.statusCode} ${r.body}`);
  return r.json as { id: string };
}

function createTaskRes(a: TestApp, token: string, payload: Record<string, unknown>, headers: Record<string, string> = key()) {
  return a.request({ method: 'POST', url: '/v1/tasks', token, headers, payload });
}

async function createTask(a: TestApp, token: string, payload: Record<string, unknown>) {
  const r = await createTaskRes(a, token, payload);
  if (r.statusCode !== 201) throw new Error(`createTask: ${r.statusCode} ${r.body}`);
  return r.json as Record<string, any>;
}

const transition = (a: TestApp, token: string, id: string, payload: Record<string, unknown>, headers: Record<string, string> = key()) =>
  a.request({ method: 'POST', url: `/v1/tasks/${id}/transitions`, token, headers, payload });

const getTask = (a: TestApp, token: string, id: string) => a.request({ url: `/v1/tasks/${id}`, token });

const putDeps = (a: TestApp, token: string, id: string, ids: string[], ifMatch?: string) =>
  a.request({ method: 'PUT', url: `/v1/tasks/${id}/dependencies`, token,
    headers: ifMatch === undefined ? {} : { 'if-match': ifMatch }, payload: { predecessor_task_ids: ids } });

const patchTask = (a: TestApp, token: string, id: string, payload: unknown, ifMatch?: string) =>
  a.request({ method: 'PATCH', url: `/v1/tasks/${id}`, token, headers: ifMatch === undefined ? {} : { 'if-match': ifMatch }, payload });

const archive = (a: TestApp, token: string, id: string) => a.request({ method: 'POST', url: `/v1/tasks/${id}/archive`, token, headers: key() });
const restore = (a: TestApp, token: string, id: string) => a.request({ method: 'POST', url: `/v1/tasks/${id}/restore`, token, headers: key() });
const addNote = (a: TestApp, token: string, id: string, payload: Record<string, unknown>) =>
  a.request({ method: 'POST', url: `/v1/tasks/${id}/notes`, token, headers: key(), payload });

/** Everything the database holds about a task, read as owner. */
async function snapshot(a: TestApp, id: string) {
  const [row] = await a.admin`
    select to_jsonb(t) as task,
           (select coalesce(jsonb_agg(d.predecessor_task_id order by d.predecessor_task_id), '[]'::jsonb)
              from app.task_dependencies d where d.organization_id = t.organization_id and d.task_id = t.id) as deps,
           (select count(*) from app.task_activity x where x.organization_id = t.organization_id and x.task_id = t.id)::int as activity,
           (select count(*) from app.task_notes n where n.organization_id = t.organization_id and n.task_id = t.id)::int as notes
      from app.tasks t where t.id = ${id}`;
  return row ?? null;
}

async function taskCount(a: TestApp, org: string) {
  const [{ n }] = await a.admin`select count(*)::int as n from app.tasks where organization_id = ${org}` as any;
  return n as number;
}

async function defaultWorkflow(a: TestApp, org: string): Promise<string> {
  const [row] = await a.admin`select id from app.task_workflows where organization_id = ${org} and is_default`;
  return row!.id;
}

async function client(a: TestApp, org: string, roles: string) {
  const c = await a.createClient(org, { roles });
  return { ...c, token: await a.token(c) };
}

/** Sets a task's predecessors through the API and asserts success. If the API fails (a bug
 * reported by this file), the dependencies are set as owner so that the behaviours that rest on
 * them (archive blocking, cycles) are still exercised. */
async function linkDeps(t: Test, a: TestApp, token: string, id: string, preds: string[]) {
  const etag = (await getTask(a, token, id)).headers.etag as string;
  const r = await putDeps(a, token, id, preds, etag);
  t.equal(r.statusCode, 200, `replaceTaskDependencies succeeds: ${r.body}`);
  if (r.statusCode !== 200) await ownerDeps(a, id, preds);
  return r;
}

async function ownerDeps(a: TestApp, id: string, preds: string[]) {
  await a.admin`delete from app.task_dependencies where task_id = ${id}`;
  for (const pred of preds) {
    await a.admin`insert into app.task_dependencies (organization_id, task_id, predecessor_task_id)
                  select organization_id, id, ${pred} from app.tasks where id = ${id}`;
  }
}

/** Follows next_cursor through listTasks; checks page sizes and has_more; returns the ids in order. */
async function walk(t: Test, a: TestApp, token: string, qs: string, limit = 7) {
  const ids: string[] = [];
  let after: string | null = null;
  let pages = 0;
  const problems: string[] = [];
  do {
    const url = `/v1/tasks?${qs}${qs ? '&' : ''}limit=${limit}${after ? `&after=${encodeURIComponent(after)}` : ''}`;
    const r: Res = await a.request({ url, token });
    if (r.statusCode !== 200) { problems.push(`page ${pages + 1}: ${r.statusCode} ${r.body}`); break; }
    const data = r.json.data as any[];
    if (data.length > limit) problems.push(`page of ${data.length}`);
    if (r.json.has_more !== (r.json.next_cursor !== null)) problems.push('has_more disagrees with next_cursor');
    if (r.json.has_more && data.length !== limit) problems.push(`short page ${data.length} with has_more`);
    ids.push(...data.map((d) => d.id));
    after = r.json.next_cursor;
    if (++pages > 15) { problems.push('more than 15 pages: the cursor does not advance'); break; }
  } while (after);
  t.same(problems, [], `pages well-formed (${qs || 'defaults'})`);
  return ids;
}
const FULL_KEYS = ['archived', 'assignee_member_ids', 'code', 'completed_at', 'created_at', 'custom_fields', 'description', 'due_at',
  'id', 'name', 'object', 'predecessor_task_ids', 'priority', 'project_id', 'start_at', 'status', 'transitions', 'updated_at'];
const BASE_KEYS = ['archived', 'code', 'created_at', 'custom_fields', 'id', 'name', 'object', 'project_id', 'status', 'updated_at'];

// ---------------------------------------------------------------------------------------------

t.test('error codes: each leaves the task unchanged', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  const org = p.orgId;
  await a.addMember(org, 'worker@x.example', { roles: 'member' });
  await a.addMember(org, 'gone@x.example', { roles: 'member', status: 'inactive' });
  const p1 = await createProject(a, p.token, 'P1');
  const p2 = await createProject(a, p.token, 'P2');
  const empty = await createProject(a, p.token, 'EMPTY');
  const arch = await a.request({ method: 'POST', url: `/v1/projects/${empty.id}/archive`, token: p.token, headers: key() });
  t.equal(arch.statusCode, 200, arch.body);

  const T = await createTask(a, p.token, { project_id: p1.id, name: 'Main', code: 'T-1', assignee_member_ids: ['worker@x.example'],
    description: 'd', priority: 'high', due_at: '2026-05-01T00:00:00Z' });
  const T2 = await createTask(a, p.token, { project_id: p1.id, name: 'Second', code: 'T-2' });

  const other = await a.principal('member,manager');
  const op = await createProject(a, other.token, 'OX');
  const foreignTask = await createTask(a, other.token, { project_id: op.id, name: 'Foreign' });

  t.test('TASK_NOT_FOUND', async (t) => {
    const before = await snapshot(a, T.id);
    const foreignBefore = await snapshot(a, foreignTask.id);
    assertProblem(t, await getTask(a, p.token, 'tsk_doesnotexist0000'), 404, 'TASK_NOT_FOUND');
    const foreign = await getTask(a, p.token, foreignTask.id);
    assertProblem(t, foreign, 404, 'TASK_NOT_FOUND');
    t.notMatch(foreign.body, /Foreign"/, 'nothing of the other organization\'s task leaks');
    assertProblem(t, await transition(a, p.token, foreignTask.id, { transition: 'start' }), 404, 'TASK_NOT_FOUND');
    assertProblem(t, await patchTask(a, p.token, foreignTask.id, { name: 'x' }, '"1"'), 404, 'TASK_NOT_FOUND');
    assertProblem(t, await putDeps(a, p.token, foreignTask.id, [], '"1"'), 404, 'TASK_NOT_FOUND');
    assertProblem(t, await archive(a, p.token, foreignTask.id), 404, 'TASK_NOT_FOUND');
    assertProblem(t, await restore(a, p.token, foreignTask.id), 404, 'TASK_NOT_FOUND');
    assertProblem(t, await addNote(a, p.token, foreignTask.id, { text: 'hi' }), 404, 'TASK_NOT_FOUND');
    const unknownPred = await putDeps(a, p.token, T.id, ['tsk_doesnotexist0000'], '"1"');
    assertProblem(t, unknownPred, 404, 'TASK_NOT_FOUND');
    const foreignPred = await putDeps(a, p.token, T.id, [foreignTask.id], '"1"');
    assertProblem(t, foreignPred, 404, 'TASK_NOT_FOUND');
    t.same(await snapshot(a, T.id), before, 'task unchanged');
    t.same(await snapshot(a, foreignTask.id), foreignBefore, 'other organization\'s task unchanged');
  });

  t.test('PROJECT_NOT_FOUND', async (t) => {
    const n = await taskCount(a, org);
    assertProblem(t, await createTaskRes(a, p.token, { project_id: 'prj_doesnotexist0000', name: 'x' }), 404, 'PROJECT_NOT_FOUND');
    assertProblem(t, await createTaskRes(a, p.token, { project_id: op.id, name: 'x' }), 404, 'PROJECT_NOT_FOUND');
    assertProblem(t, await createTaskRes(a, p.token, { project_id: empty.id, name: 'x' }), 404, 'PROJECT_NOT_FOUND');
    t.equal(await taskCount(a, org), n, 'no task created');
  });

  t.test('INVALID_ASSIGNEE', async (t) => {
    const n = await taskCount(a, org);
    for (const ids of [['nobody@x.example'], ['gone@x.example'], ['worker@x.example', 'WORKER@x.example'], ['worker@x.example', 'worker@x.example']]) {
      const r = await createTaskRes(a, p.token, { project_id: p1.id, name: 'x', assignee_member_ids: ids });
      assertProblem(t, r, 422, 'INVALID_ASSIGNEE');
      t.ok(r.json?.errors?.some((e: any) => e.pointer === '/assignee_member_ids' && e.code === 'INVALID_ASSIGNEE'), `pointer for ${ids}`);
    }
    t.equal(await taskCount(a, org), n, 'no task created');
    const before = await snapshot(a, T.id);
    const r = await patchTask(a, p.token, T.id, { name: 'Renamed', assignee_member_ids: ['gone@x.example'] }, '"1"');
    assertProblem(t, r, 422, 'INVALID_ASSIGNEE');
    t.same(await snapshot(a, T.id), before, 'task unchanged');
    const ok = await createTaskRes(a, p.token, { project_id: p1.id, name: 'ok', assignee_member_ids: ['Worker@X.example'] });
    t.equal(ok.statusCode, 201, 'assignees matched case-insensitively: ' + ok.body);
    t.same(ok.json?.assignee_member_ids, ['worker@x.example'], 'stored normalized');
  });

  t.test('INVALID_TRANSITION', async (t) => {
    const before = await snapshot(a, T.id);
    for (const name of ['unblock', 'reopen', 'fly']) {
      assertProblem(t, await transition(a, p.token, T.id, { transition: name }), 409, 'INVALID_TRANSITION');
    }
    t.same(await snapshot(a, T.id), before, 'task unchanged');
  });

  t.test('DEPENDENCY_CYCLE (self)', async (t) => {
    const before = await snapshot(a, T.id);
    assertProblem(t, await putDeps(a, p.token, T.id, [T.id], '"1"'), 422, 'DEPENDENCY_CYCLE');
    assertProblem(t, await putDeps(a, p.token, T.id, [T2.id, T.id], '"1"'), 422, 'DEPENDENCY_CYCLE');
    t.same(await snapshot(a, T.id), before, 'task unchanged');
  });

  t.test('STALE_RESOURCE and PRECONDITION_REQUIRED', async (t) => {
    const before = await snapshot(a, T.id);
    const stale = await patchTask(a, p.token, T.id, { name: 'x' }, '"7"');
    assertProblem(t, stale, 412, 'STALE_RESOURCE');
    t.equal(stale.headers.etag, '"1"', 'current ETag header');
    t.equal(stale.json?.current_etag, '"1"', 'current_etag member');
    assertProblem(t, await patchTask(a, p.token, T.id, { name: 'x' }, 'W/"1"'), 412, 'STALE_RESOURCE');
    const staleDeps = await putDeps(a, p.token, T.id, [T2.id], '"9"');
    assertProblem(t, staleDeps, 412, 'STALE_RESOURCE');
    t.equal(staleDeps.headers.etag, '"1"');
    assertProblem(t, await patchTask(a, p.token, T.id, { name: 'x' }), 428, 'PRECONDITION_REQUIRED');
    assertProblem(t, await putDeps(a, p.token, T.id, [T2.id]), 428, 'PRECONDITION_REQUIRED');
    t.same(await snapshot(a, T.id), before, 'task unchanged');
  });

  t.test('IMMUTABLE_FIELD', async (t) => {
    const before = await snapshot(a, T.id);
    const immutable = { id: T.id, object: 'task', organization_id: org, project_id: p2.id, status: 'done', created_at: T.created_at,
      updated_at: T.updated_at, version: 5, predecessor_task_ids: [], transitions: [], completed_at: '2026-01-01T00:00:00Z', archived: true };
    const r = await patchTask(a, p.token, T.id, { name: 'Renamed', ...immutable }, '"1"');
    assertProblem(t, r, 422, 'IMMUTABLE_FIELD');
    t.same((r.json?.errors ?? []).map((e: any) => e.pointer).sort(), Object.keys(immutable).map((k) => '/' + k).sort(), 'one error per key');
    t.ok((r.json?.errors ?? []).every((e: any) => e.code === 'IMMUTABLE_FIELD'));
    for (const k of ['status', 'project_id', 'archived']) {
      assertProblem(t, await patchTask(a, p.token, T.id, { [k]: (immutable as any)[k] }, '"1"'), 422, 'IMMUTABLE_FIELD');
    }
    t.same(await snapshot(a, T.id), before, 'task unchanged');
  });

  t.test('INVALID_SUBJECT_MEMBER', async (t) => {
    const before = await snapshot(a, T.id);
    for (const member_id of ['nobody@x.example', 'gone@x.example', 'WORKER@x.example', ' worker@x.example']) {
      const r = await transition(a, p.token, T.id, { transition: 'start', subject: { member_id } });
      assertProblem(t, r, 422, 'INVALID_SUBJECT_MEMBER');
      t.equal(r.json?.errors?.[0]?.pointer, '/subject/member_id', `pointer (${member_id})`);
      assertProblem(t, await addNote(a, p.token, T.id, { text: 'n', subject: { member_id } }), 422, 'INVALID_SUBJECT_MEMBER');
    }
    t.same(await snapshot(a, T.id), before, 'task unchanged (status, activity and notes)');
  });

  t.test('ROLE_REQUIRED', async (t) => {
    const before = await snapshot(a, T.id);
    const n = await taskCount(a, org);
    for (const roles of ['member', 'finance', 'hr', 'finance,hr']) {
      const c = await client(a, org, roles);
      assertProblem(t, await createTaskRes(a, c.token, { project_id: p1.id, name: 'x' }), 403, 'ROLE_REQUIRED');
      assertProblem(t, await transition(a, c.token, T.id, { transition: 'start' }), 403, 'ROLE_REQUIRED');
      assertProblem(t, await patchTask(a, c.token, T.id, { name: 'x' }, '"1"'), 403, 'ROLE_REQUIRED');
      assertProblem(t, await putDeps(a, c.token, T.id, [T2.id], '"1"'), 403, 'ROLE_REQUIRED');
      assertProblem(t, await archive(a, c.token, T.id), 403, 'ROLE_REQUIRED');
      assertProblem(t, await restore(a, c.token, T.id), 403, 'ROLE_REQUIRED');
      assertProblem(t, await addNote(a, c.token, T.id, { text: 'n' }), 403, 'ROLE_REQUIRED');
      const read = await getTask(a, c.token, T.id);
      t.equal(read.statusCode, 200, `${roles} may read the task`);
    }
    t.equal(await taskCount(a, org), n, 'no task created');
    t.same(await snapshot(a, T.id), before, 'task unchanged');
  });

  t.test('CONFLICT: duplicate code in the project', async (t) => {
    const n = await taskCount(a, org);
    const dup = await createTaskRes(a, p.token, { project_id: p1.id, name: 'dup', code: 't-1' });
    assertProblem(t, dup, 409, 'CONFLICT');
    t.equal(await taskCount(a, org), n, 'no task created');
    const before = await snapshot(a, T2.id);
    assertProblem(t, await patchTask(a, p.token, T2.id, { code: 'T-1', name: 'Renamed' }, '"1"'), 409, 'CONFLICT');
    t.same(await snapshot(a, T2.id), before, 'task unchanged');
    const elsewhere = await createTaskRes(a, p.token, { project_id: p2.id, name: 'same code, other project', code: 'T-1' });
    t.equal(elsewhere.statusCode, 201, 'codes are unique per project: ' + elsewhere.body);
  });

  t.test('VALIDATION_FAILED: completed_at misuse', async (t) => {
    const before = await snapshot(a, T.id);
    for (const name of ['start', 'block', 'cancel']) {
      const r = await transition(a, p.token, T.id, { transition: name, completed_at: '2026-01-01T00:00:00Z' });
      assertProblem(t, r, 422, 'VALIDATION_FAILED');
      t.equal(r.json?.errors?.[0]?.pointer, '/completed_at', `pointer (${name})`);
    }
    const future = new Date(Date.now() + 3600_000).toISOString();
    const r = await transition(a, p.token, T.id, { transition: 'complete', completed_at: future });
    assertProblem(t, r, 422, 'VALIDATION_FAILED');
    t.equal(r.json?.errors?.[0]?.pointer, '/completed_at');
    t.same(await snapshot(a, T.id), before, 'task unchanged');
  });

  t.test('TASK_ARCHIVE_BLOCKED', async (t) => {
    await linkDeps(t, a, p.token, T2.id, [T.id]);
    const before = await snapshot(a, T.id);
    const r = await archive(a, p.token, T.id);
    assertProblem(t, r, 409, 'TASK_ARCHIVE_BLOCKED');
    t.match(r.json?.detail, T2.id, 'names the open dependent');
    t.same(await snapshot(a, T.id), before, 'task unchanged');
  });
});

// ---------------------------------------------------------------------------------------------

t.test('default workflow end to end, subject, completed_at, idempotent transition replay', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  await a.addMember(p.orgId, 'worker@x.example', { roles: 'member' });
  const proj = await createProject(a, p.token, 'WF');
  const task = await createTask(a, p.token, { project_id: proj.id, name: 'Flow' });
  t.equal(task.status, 'todo', 'starts in todo');
  t.equal(task.completed_at, null);
  t.equal(task.archived, false);
  t.same(task.predecessor_task_ids, []);

  const offered: Record<string, { name: string; to_status: string }[]> = {
    todo: [{ name: 'block', to_status: 'blocked' }, { name: 'cancel', to_status: 'cancelled' },
      { name: 'complete', to_status: 'done' }, { name: 'start', to_status: 'in_progress' }],
    in_progress: [{ name: 'block', to_status: 'blocked' }, { name: 'cancel', to_status: 'cancelled' }, { name: 'complete', to_status: 'done' }],
    blocked: [{ name: 'cancel', to_status: 'cancelled' }, { name: 'unblock', to_status: 'in_progress' }],
    done: [{ name: 'reopen', to_status: 'todo' }],
    cancelled: [{ name: 'reopen', to_status: 'todo' }],
  };
  const sortT = (x: { name: string }[] = []) => [...x].sort((l, r) => l.name.localeCompare(r.name));
  t.same(sortT(task.transitions), offered.todo, 'transitions offered in todo');

  let version = 1;
  const step = async (name: string, to: string, extra: Record<string, unknown> = {}) => {
    const r = await transition(a, p.token, task.id, { transition: name, ...extra });
    t.equal(r.statusCode, 200, `${name}: ${r.body}`);
    t.equal(r.json?.status, to, `${name} -> ${to}`);
    t.same(sortT(r.json?.transitions), offered[to], `transitions offered in ${to}`);
    version++;
    t.equal(r.headers.etag, `"${version}"`, `${name}: ETag bumped`);
    const g = await getTask(a, p.token, task.id);
    t.equal(g.json?.status, to);
    t.same(sortT(g.json?.transitions), offered[to], `getTask offers the same in ${to}`);
    t.equal(g.headers.etag, `"${version}"`);
    return r.json;
  };

  await step('start', 'in_progress', { subject: { member_id: 'worker@x.example' } });
  await step('block', 'blocked');
  await step('unblock', 'in_progress');
  const t0 = Date.now();
  const done1 = await step('complete', 'done');
  t.ok(done1.completed_at, 'complete sets completed_at');
  t.ok(Math.abs(Date.parse(done1.completed_at) - t0) < 60_000, 'completed_at defaults to now');
  const reopened = await step('reopen', 'todo');
  t.equal(reopened.completed_at, null, 'reopen clears completed_at');
  const given = '2026-01-05T10:30:00Z';
  const done2 = await step('complete', 'done', { completed_at: given });
  t.equal(Date.parse(done2.completed_at), Date.parse(given), 'complete keeps the given completed_at');
  const back = await step('reopen', 'todo');
  t.equal(back.completed_at, null, 'cleared again');
  const cancelled = await step('cancel', 'cancelled');
  t.equal(cancelled.completed_at, null);
  await step('reopen', 'todo');
  await step('block', 'blocked');
  await step('cancel', 'cancelled');
  await step('reopen', 'todo');
  await step('start', 'in_progress');
  await step('cancel', 'cancelled');
  await step('reopen', 'todo');

  // Subject recorded: the client stays the actor.
  const acts = await a.admin`select transition, from_status, to_status, actor_client_id, subject_member_id, kind
                               from app.task_activity where task_id = ${task.id} order by created_at, id`;
  t.equal(acts.length, 15, 'one activity row per transition');
  t.same({ ...acts[0] }, { transition: 'start', from_status: 'todo', to_status: 'in_progress', actor_client_id: p.id,
    subject_member_id: 'worker@x.example', kind: 'transition' }, 'subject recorded; actor is the client');
  t.ok(acts.every((x) => x.actor_client_id === p.id), 'actor is always the client');
  t.equal(acts[1]!.subject_member_id, null, 'no subject when none given');

  // Idempotent replay of transitionTask.
  const k = key();
  const first = await transition(a, p.token, task.id, { transition: 'start', subject: { member_id: 'worker@x.example' } }, k);
  t.equal(first.statusCode, 200, first.body);
  t.equal(first.json?.status, 'in_progress');
  const before = await snapshot(a, task.id);
  const replay = await transition(a, p.token, task.id, { transition: 'start', subject: { member_id: 'worker@x.example' } }, k);
  t.equal(replay.statusCode, 200, 'replayed status');
  t.equal(replay.headers['idempotent-replayed'], 'true', 'Idempotent-Replayed: true');
  t.same(replay.json, first.json, 'same body');
  t.equal(replay.headers.etag, first.headers.etag, 'same ETag');
  t.same(await snapshot(a, task.id), before, 'not applied twice');
  const reused = await transition(a, p.token, task.id, { transition: 'complete' }, k);
  assertProblem(t, reused, 422, 'IDEMPOTENCY_KEY_REUSED');
  t.same(await snapshot(a, task.id), before, 'task unchanged');
  assertProblem(t, await a.request({ method: 'POST', url: `/v1/tasks/${task.id}/transitions`, token: p.token, payload: { transition: 'complete' } }),
    400, 'IDEMPOTENCY_KEY_REQUIRED');
});

// ---------------------------------------------------------------------------------------------

t.test('notes policy', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  const org = p.orgId;
  await a.addMember(org, 'worker@x.example', { roles: 'member' });
  const proj = await createProject(a, p.token, 'N');
  const task = await createTask(a, p.token, { project_id: proj.id, name: 'Notes' });
  const manager = await client(a, org, 'manager');
  const member = await client(a, org, 'member');
  const finance = await client(a, org, 'finance');
  const hr = await client(a, org, 'hr');
  const notes = async () => (await snapshot(a, task.id))!.notes as number;

  const r = await addNote(a, manager.token, task.id, { text: 'Manager note', subject: { member_id: 'worker@x.example' } });
  t.equal(r.statusCode, 201, r.body);
  t.same(Object.keys(r.json ?? {}).sort(), ['author', 'created_at', 'id', 'object', 'subject', 'task_id', 'text']);
  t.equal(r.json?.object, 'task_note');
  t.match(r.json?.id, /^tnote_/);
  t.equal(r.json?.task_id, task.id);
  t.equal(r.json?.text, 'Manager note');
  t.same(r.json?.subject, { member_id: 'worker@x.example' });
  t.same(r.json?.author, { type: 'api_client', id: manager.id }, 'the client is the author');
  t.equal(await notes(), 1);

  const before = await snapshot(a, task.id);
  assertProblem(t, await addNote(a, member.token, task.id, { text: 'member note' }), 403, 'ROLE_REQUIRED');
  assertProblem(t, await addNote(a, finance.token, task.id, { text: 'finance note' }), 403, 'ROLE_REQUIRED');
  assertProblem(t, await addNote(a, hr.token, task.id, { text: 'hr note' }), 403, 'ROLE_REQUIRED');
  t.same(await snapshot(a, task.id), before, 'task and notes unchanged');

  await a.cli('task-policy', 'set', '--org', org, '--members-may-add-notes', 'true');
  const m = await addNote(a, member.token, task.id, { text: 'member note' });
  t.equal(m.statusCode, 201, 'member may add notes once the policy permits: ' + m.body);
  t.same(m.json?.author, { type: 'api_client', id: member.id });
  t.equal(m.json?.subject ?? null, null, 'no subject');
  const before2 = await snapshot(a, task.id);
  assertProblem(t, await addNote(a, finance.token, task.id, { text: 'finance note' }), 403, 'ROLE_REQUIRED');
  assertProblem(t, await addNote(a, hr.token, task.id, { text: 'hr note' }), 403, 'ROLE_REQUIRED');
  t.same(await snapshot(a, task.id), before2, 'finance and hr still cannot');
  t.equal(await notes(), 2);

  await a.cli('task-policy', 'set', '--org', org, '--members-may-add-notes', 'false');
  assertProblem(t, await addNote(a, member.token, task.id, { text: 'again' }), 403, 'ROLE_REQUIRED');
  t.equal(await notes(), 2);
});

// ---------------------------------------------------------------------------------------------

t.test('dependencies', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  const org = p.orgId;
  const p1 = await createProject(a, p.token, 'D1');
  const p2 = await createProject(a, p.token, 'D2');
  const A = await createTask(a, p.token, { project_id: p1.id, name: 'A' });
  const B = await createTask(a, p.token, { project_id: p1.id, name: 'B' });
  const C = await createTask(a, p.token, { project_id: p1.id, name: 'C' });
  const X = await createTask(a, p.token, { project_id: p2.id, name: 'X' });
  const etag = async (id: string) => (await getTask(a, p.token, id)).headers.etag as string;
  const bumped = (e: string) => `"${Number(JSON.parse(e)) + 1}"`;

  /** A successful replace: 200, the new set, the ETag bumped by one (response and getTask). */
  const replace = async (t: Test, id: string, preds: string[], what: string) => {
    const before = await etag(id);
    const r = await putDeps(a, p.token, id, preds, before);
    t.equal(r.statusCode, 200, `${what}: ${r.body}`);
    t.same(r.json?.predecessor_task_ids, [...preds].sort(), `${what}: predecessor_task_ids`);
    t.equal(r.headers.etag, bumped(before), `${what}: ETag bumped`);
    const g = await getTask(a, p.token, id);
    t.same(g.json?.predecessor_task_ids, [...preds].sort(), `${what}: getTask shows the set`);
    t.equal(g.headers.etag, bumped(before), `${what}: getTask ETag bumped`);
    t.same((await snapshot(a, id))!.deps, [...preds].sort(), `${what}: stored`);
    if (r.statusCode !== 200) await ownerDeps(a, id, preds);
  };

  await replace(t, A.id, [C.id, B.id], 'set two');
  await replace(t, A.id, [C.id], 'replace with one');
  await replace(t, A.id, [], 'clear with []');

  // Stale If-Match: an ETag that was current before an update.
  const old = await etag(A.id);
  const patched = await patchTask(a, p.token, A.id, { name: 'A2' }, old);
  t.equal(patched.statusCode, 200, patched.body);
  let before = await snapshot(a, A.id);
  const stale = await putDeps(a, p.token, A.id, [B.id], old);
  assertProblem(t, stale, 412, 'STALE_RESOURCE');
  t.equal(stale.headers.etag, patched.headers.etag, 'current ETag in the ETag header');
  t.equal(stale.json?.current_etag, patched.headers.etag, 'current_etag member');
  assertProblem(t, await putDeps(a, p.token, A.id, [B.id]), 428, 'PRECONDITION_REQUIRED');
  t.same(await snapshot(a, A.id), before, 'A unchanged after 412/428');

  // Direct 2-cycle: A depends on B, then B on A.
  await replace(t, A.id, [B.id], 'A <- B');
  before = await snapshot(a, B.id);
  assertProblem(t, await putDeps(a, p.token, B.id, [A.id], await etag(B.id)), 422, 'DEPENDENCY_CYCLE');
  assertProblem(t, await putDeps(a, p.token, B.id, [C.id, A.id], await etag(B.id)), 422, 'DEPENDENCY_CYCLE');
  t.same(await snapshot(a, B.id), before, 'B unchanged');
  // Self.
  before = await snapshot(a, C.id);
  assertProblem(t, await putDeps(a, p.token, C.id, [C.id], await etag(C.id)), 422, 'DEPENDENCY_CYCLE');
  t.same(await snapshot(a, C.id), before, 'self-dependency rejected, C unchanged');

  // A chain of 30 tasks closed back.
  const wf = await defaultWorkflow(a, org);
  const chain = (await a.admin`
    insert into app.tasks (organization_id, project_id, workflow_id, name, status)
    select ${org}, ${p1.id}, ${wf}, 'chain-' || lpad(i::text, 2, '0'), 'todo' from generate_series(0, 29) i
    returning id, name`).map((r) => ({ id: r.id as string, name: r.name as string }))
    .sort((l, r) => l.name.localeCompare(r.name)).map((r) => r.id);
  const failed: string[] = [];
  for (let i = 1; i < chain.length; i++) {
    const r = await putDeps(a, p.token, chain[i]!, [chain[i - 1]!], '"1"');
    if (r.statusCode !== 200) { failed.push(`${i}: ${r.statusCode} ${r.json?.code}`); await ownerDeps(a, chain[i]!, [chain[i - 1]!]); }
  }
  t.same(failed, [], 'chain of 30 built through the API');
  before = await snapshot(a, chain[0]!);
  assertProblem(t, await putDeps(a, p.token, chain[0]!, [chain[29]!], '"1"'), 422, 'DEPENDENCY_CYCLE');
  assertProblem(t, await putDeps(a, p.token, chain[0]!, [chain[15]!], '"1"'), 422, 'DEPENDENCY_CYCLE');
  t.same(await snapshot(a, chain[0]!), before, 'chain head unchanged');
  const [{ n }] = await a.admin`select count(*)::int as n from app.task_dependencies where task_id = any(${a.admin.array(chain)})` as any;
  t.equal(n, 29, 'no dependency added');

  // Cross-project dependencies: rejected until the policy allows them.
  before = await snapshot(a, C.id);
  assertProblem(t, await putDeps(a, p.token, C.id, [X.id], await etag(C.id)), 422, 'DEPENDENCY_CYCLE');
  t.same(await snapshot(a, C.id), before, 'C unchanged');
  await a.cli('task-policy', 'set', '--org', org, '--allow-cross-project-dependencies', 'true');
  await replace(t, C.id, [X.id], 'cross-project allowed by the policy');
  before = await snapshot(a, X.id);
  assertProblem(t, await putDeps(a, p.token, X.id, [C.id], await etag(X.id)), 422, 'DEPENDENCY_CYCLE');
  t.same(await snapshot(a, X.id), before, 'still no cycle across projects');
});

// ---------------------------------------------------------------------------------------------

t.test('archive and restore', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  const proj = await createProject(a, p.token, 'AR');
  const A = await createTask(a, p.token, { project_id: proj.id, name: 'Predecessor' });
  const B = await createTask(a, p.token, { project_id: proj.id, name: 'Dependent' });
  await linkDeps(t, a, p.token, B.id, [A.id]);

  let before = await snapshot(a, A.id);
  assertProblem(t, await archive(a, p.token, A.id), 409, 'TASK_ARCHIVE_BLOCKED');
  t.equal((await transition(a, p.token, B.id, { transition: 'start' })).statusCode, 200);
  assertProblem(t, await archive(a, p.token, A.id), 409, 'TASK_ARCHIVE_BLOCKED');
  t.equal((await transition(a, p.token, B.id, { transition: 'block' })).statusCode, 200);
  assertProblem(t, await archive(a, p.token, A.id), 409, 'TASK_ARCHIVE_BLOCKED');
  t.same(await snapshot(a, A.id), before, 'A unchanged while blocked');
  t.equal((await transition(a, p.token, B.id, { transition: 'unblock' })).statusCode, 200);
  t.equal((await transition(a, p.token, B.id, { transition: 'complete' })).statusCode, 200);

  const arch = await archive(a, p.token, A.id);
  t.equal(arch.statusCode, 200, 'allowed once the dependent is done: ' + arch.body);
  t.equal(arch.json?.archived, true);
  t.same(arch.json?.transitions, [], 'no transitions offered while archived');
  t.equal(arch.json?.status, 'todo', 'status kept');
  const g = await getTask(a, p.token, A.id);
  t.equal(g.json?.archived, true);
  t.same(g.json?.transitions, []);
  t.equal(g.headers.etag, arch.headers.etag);
  before = await snapshot(a, A.id);
  for (const name of ['start', 'complete', 'cancel']) {
    assertProblem(t, await transition(a, p.token, A.id, { transition: name }), 409, 'INVALID_TRANSITION');
  }
  t.same(await snapshot(a, A.id), before, 'archived task unchanged');
  const again = await archive(a, p.token, A.id);
  t.equal(again.statusCode, 200, 'archiving an archived task is a no-op');
  t.same(await snapshot(a, A.id), before);

  const list = await a.request({ url: '/v1/tasks', token: p.token });
  t.same(list.json?.data?.map((x: any) => x.id), [B.id], 'archived tasks are not listed by default');
  const listArch = await a.request({ url: '/v1/tasks?archived=true', token: p.token });
  t.same(listArch.json?.data?.map((x: any) => x.id), [A.id], 'archived=true lists them');

  const res = await restore(a, p.token, A.id);
  t.equal(res.statusCode, 200, res.body);
  t.equal(res.json?.archived, false);
  t.same(res.json?.transitions?.map((x: any) => x.name).sort(), ['block', 'cancel', 'complete', 'start'], 'transitions offered again');

  // Restore is blocked while the project is archived.
  t.equal((await archive(a, p.token, A.id)).statusCode, 200);
  const pa = await a.request({ method: 'POST', url: `/v1/projects/${proj.id}/archive`, token: p.token, headers: key() });
  t.equal(pa.statusCode, 200, 'project archived: ' + pa.body);
  before = await snapshot(a, A.id);
  const blocked = await restore(a, p.token, A.id);
  assertProblem(t, blocked, 409, 'TASK_ARCHIVE_BLOCKED');
  t.same(await snapshot(a, A.id), before, 'task still archived and unchanged');
  const pr = await a.request({ method: 'POST', url: `/v1/projects/${proj.id}/restore`, token: p.token, headers: key() });
  t.equal(pr.statusCode, 200, pr.body);
  const res2 = await restore(a, p.token, A.id);
  t.equal(res2.statusCode, 200, 'restorable once the project is active: ' + res2.body);
  t.equal(res2.json?.archived, false);
  assertProblem(t, await a.request({ method: 'POST', url: `/v1/tasks/${A.id}/archive`, token: p.token }), 400, 'IDEMPOTENCY_KEY_REQUIRED');
  assertProblem(t, await a.request({ method: 'POST', url: `/v1/tasks/${A.id}/restore`, token: p.token }), 400, 'IDEMPOTENCY_KEY_REQUIRED');
});

// ---------------------------------------------------------------------------------------------

t.test('Role projections', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  const org = p.orgId;
  await a.addMember(org, 'worker@x.example', { roles: 'member' });
  const proj = await createProject(a, p.token, 'RP');
  const task = await createTask(a, p.token, { project_id: proj.id, name: 'Projected', code: 'RP-1', description: 'secret plan',
    priority: 'urgent', start_at: '2026-04-01T08:00:00Z', due_at: '2026-04-02T08:00:00Z', assignee_member_ids: ['worker@x.example'] });
  t.equal((await transition(a, p.token, task.id, { transition: 'complete', completed_at: '2026-04-01T12:00:00Z' })).statusCode, 200);
  const full = (await getTask(a, p.token, task.id)).json;

  const cases: [string, string[]][] = [
    ['member', FULL_KEYS],
    ['manager', FULL_KEYS],
    ['finance', [...BASE_KEYS, 'completed_at'].sort()],
    ['hr', [...BASE_KEYS, 'assignee_member_ids', 'due_at', 'start_at'].sort()],
  ];
  for (const [roles, keys] of cases) {
    const c = await client(a, org, roles);
    const one = await getTask(a, c.token, task.id);
    t.equal(one.statusCode, 200, `${roles}: ${one.body}`);
    t.same(Object.keys(one.json ?? {}).sort(), keys, `${roles}: getTask keys`);
    for (const k of keys) t.same(one.json?.[k], full[k], `${roles}: ${k} has the full value`);
    const list = await a.request({ url: '/v1/tasks', token: c.token });
    t.equal(list.statusCode, 200, list.body);
    t.same(Object.keys(list.json?.data?.[0] ?? {}).sort(), keys, `${roles}: listTasks item keys`);
    t.same(list.json?.data?.[0], one.json, `${roles}: list item equals getTask`);
  }
  t.same(full.custom_fields, {});
  t.equal(full.code, 'RP-1');
  t.equal(full.description, 'secret plan');
  t.equal(full.priority, 'urgent');
});

// ---------------------------------------------------------------------------------------------

t.test('createTask and updateTask: defaults, Location, ETag, idempotent replay', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  const proj = await createProject(a, p.token, 'IC');
  const k = key();
  const body = { project_id: proj.id, name: 'Once' };
  const first = await createTaskRes(a, p.token, body, k);
  t.equal(first.statusCode, 201, first.body);
  t.equal(first.headers.location, `/v1/tasks/${first.json?.id}`);
  t.equal(first.headers.etag, '"1"');
  t.match(first.json?.id, /^tsk_/);
  t.equal(first.json?.priority, 'medium', 'default priority');
  t.equal(first.json?.status, 'todo');
  t.same(first.json?.assignee_member_ids, []);
  const replay = await createTaskRes(a, p.token, body, k);
  t.equal(replay.statusCode, 201, 'replayed 201');
  t.equal(replay.headers['idempotent-replayed'], 'true');
  t.same(replay.json, first.json, 'same body, same id');
  t.equal(replay.headers.location, first.headers.location);
  t.equal(await taskCount(a, p.orgId), 1, 'created once');
  assertProblem(t, await createTaskRes(a, p.token, { ...body, name: 'Other' }, k), 422, 'IDEMPOTENCY_KEY_REUSED');
  assertProblem(t, await createTaskRes(a, p.token, body, {}), 400, 'IDEMPOTENCY_KEY_REQUIRED');
  t.equal(await taskCount(a, p.orgId), 1);
  const bad = await createTaskRes(a, p.token, { project_id: proj.id, name: 'dates', start_at: '2026-02-02T00:00:00Z', due_at: '2026-02-01T00:00:00Z' });
  assertProblem(t, bad, 422, 'VALIDATION_FAILED');
  t.equal(await taskCount(a, p.orgId), 1);
  const other = await a.principal('member,manager');
  const op = await createProject(a, other.token, 'IC');
  const theirs = await createTaskRes(a, other.token, { project_id: op.id, name: 'Once' }, k);
  t.equal(theirs.statusCode, 201, 'keys are per client');
  t.not(theirs.json?.id, first.json?.id);

  // updateTask: only supplied keys change, null clears, ETag bumps.
  await a.addMember(p.orgId, 'worker@x.example', { roles: 'member' });
  const id = first.json.id as string;
  const set = await patchTask(a, p.token, id, { description: 'text', priority: 'high', due_at: '2026-06-01T00:00:00Z',
    assignee_member_ids: ['WORKER@x.example'], code: 'C-1' }, '"1"');
  t.equal(set.statusCode, 200, set.body);
  t.equal(set.headers.etag, '"2"');
  t.equal(set.json?.description, 'text');
  t.equal(set.json?.priority, 'high');
  t.equal(set.json?.code, 'C-1');
  t.same(set.json?.assignee_member_ids, ['worker@x.example'], 'assignees normalized');
  t.equal(Date.parse(set.json?.due_at), Date.parse('2026-06-01T00:00:00Z'));
  t.equal(set.json?.name, 'Once', 'name untouched');
  const cleared = await patchTask(a, p.token, id, { description: null, due_at: null }, '"2"');
  t.equal(cleared.statusCode, 200, cleared.body);
  t.equal(cleared.headers.etag, '"3"');
  t.equal(cleared.json?.description, null, 'null clears');
  t.equal(cleared.json?.due_at, null);
  t.equal(cleared.json?.priority, 'high', 'priority untouched');
  t.equal(cleared.json?.code, 'C-1', 'code untouched');
  const g = await getTask(a, p.token, id);
  t.equal(g.headers.etag, '"3"');
  t.same(g.json, cleared.json, 'getTask returns what updateTask returned');
});

// ---------------------------------------------------------------------------------------------

t.test('listTasks: filters, keyset pagination for every sort, tenancy', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  const org = p.orgId;
  await a.addMember(org, 'ann@x.example', { roles: 'member' });
  await a.addMember(org, 'bob@x.example', { roles: 'member' });
  const p1 = await createProject(a, p.token, 'L1');
  const p2 = await createProject(a, p.token, 'L2');
  const wf = await defaultWorkflow(a, org);

  // Some tasks through the API.
  const api: Record<string, any>[] = [];
  api.push(await createTask(a, p.token, { project_id: p1.id, name: 'Alpha', priority: 'urgent', due_at: '2026-03-02T12:00:00Z', assignee_member_ids: ['ann@x.example'] }));
  api.push(await createTask(a, p.token, { project_id: p1.id, name: 'Report 100%', priority: 'low', assignee_member_ids: ['ann@x.example', 'bob@x.example'] }));
  api.push(await createTask(a, p.token, { project_id: p2.id, name: 'Beta', priority: 'high', due_at: '2026-03-04T12:00:00Z', assignee_member_ids: ['bob@x.example'] }));
  api.push(await createTask(a, p.token, { project_id: p2.id, name: 'gamma', due_at: '2026-03-01T12:00:00Z' }));
  api.push(await createTask(a, p.token, { project_id: p1.id, name: 'Delta', priority: 'high', due_at: '2026-03-03T12:00:00Z', assignee_member_ids: ['ann@x.example'] }));
  api.push(await createTask(a, p.token, { project_id: p1.id, name: 'ALPHA', priority: 'medium' }));
  const gone1 = await createTask(a, p.token, { project_id: p1.id, name: 'Alpha archived', assignee_member_ids: ['ann@x.example'] });
  const gone2 = await createTask(a, p.token, { project_id: p2.id, name: 'Beta archived', due_at: '2026-03-02T12:00:00Z' });
  t.equal((await archive(a, p.token, gone1.id)).statusCode, 200);
  t.equal((await archive(a, p.token, gone2.id)).statusCode, 200);
  t.equal((await transition(a, p.token, api[0]!.id, { transition: 'start' })).statusCode, 200);
  t.equal((await transition(a, p.token, api[2]!.id, { transition: 'complete' })).statusCode, 200);
  t.equal((await transition(a, p.token, api[4]!.id, { transition: 'block' })).statusCode, 200);

  // Most tasks seeded as owner, in three statements (three created_at values, many ties).
  for (const off of [0, 18, 36]) {
    await a.admin`
      insert into app.tasks (organization_id, project_id, workflow_id, name, status, priority, due_at)
      select ${org}, case when i % 3 = 0 then ${p2.id} else ${p1.id} end, ${wf},
             (array['Alpha', 'alpha', 'Beta', 'Delta', 'Delta', 'Epsilon', 'gamma', 'Zeta'])[1 + i % 8], 'todo',
             (array['low', 'medium', 'high', 'urgent'])[1 + (i * 7) % 4],
             case when i % 4 = 0 then null else timestamptz '2026-03-01T12:00:00Z' + (i % 5) * interval '1 day' end
        from generate_series(${off} + 1, ${off} + 18) i`;
  }
  // Another organization's tasks, which must never appear.
  const other = await a.principal('member,manager');
  await a.addMember(other.orgId, 'ann@x.example', { roles: 'member' });
  const op = await createProject(a, other.token, 'L1');
  const theirs = await createTask(a, other.token, { project_id: op.id, name: 'Alpha', priority: 'urgent', due_at: '2026-03-02T12:00:00Z', assignee_member_ids: ['ann@x.example'] });
  const owf = await defaultWorkflow(a, other.orgId);
  await a.admin`insert into app.tasks (organization_id, project_id, workflow_id, name, status, priority, due_at)
                select ${other.orgId}, ${op.id}, ${owf}, 'Alpha ' || i, 'todo', 'high', null from generate_series(1, 5) i`;
  const foreign = new Set((await a.admin`select id from app.tasks where organization_id = ${other.orgId}`).map((r) => r.id as string));
  t.equal(foreign.size, 6);
  t.ok(foreign.has(theirs.id));

  const visible = await a.admin`select id from app.tasks where organization_id = ${org} and archived_at is null`;
  t.equal(visible.length, 60, '60 listable tasks');

  const expected = async (where: string, orderBy = 'created_at desc, id desc', params: unknown[] = []) =>
    (await a.admin.unsafe(`select id from app.tasks where organization_id = $1 and ${where} order by ${orderBy}`, [org, ...params] as any[]))
      .map((r: any) => r.id as string);
  const asSet = (ids: string[]) => [...ids].sort();

  t.test('every sort, both orders, limit 7', async (t) => {
    const sorts: Record<string, string> = {
      created_at: 'created_at',
      updated_at: 'updated_at',
      due_at: "coalesce(due_at, 'infinity'::timestamptz)",
      name: 'lower(name)',
      priority: "array_position(array['low','medium','high','urgent'], priority)",
    };
    for (const [sort, expr] of Object.entries(sorts)) {
      for (const order of ['asc', 'desc']) {
        const got = await walk(t, a, p.token, `sort=${sort}&order=${order}`);
        const want = await expected('archived_at is null', `${expr} ${order}, id ${order}`);
        t.equal(got.length, 60, `${sort} ${order}: 60 rows`);
        t.equal(new Set(got).size, got.length, `${sort} ${order}: no duplicates`);
        t.same(got, want, `${sort} ${order}: the database's order`);
        t.notOk(got.some((id) => foreign.has(id)), `${sort} ${order}: no other organization's task`);
      }
    }
    const dflt = await walk(t, a, p.token, '');
    t.same(dflt, await expected('archived_at is null', 'created_at desc, id desc'), 'default: created_at desc');
    assertProblem(t, await a.request({ url: '/v1/tasks?sort=status', token: p.token }), 400, 'INVALID_REQUEST');
    assertProblem(t, await a.request({ url: '/v1/tasks?order=up', token: p.token }), 400, 'INVALID_REQUEST');
    // A cursor only continues the listing it was issued for.
    const first = await a.request({ url: '/v1/tasks?sort=name&limit=7', token: p.token });
    const cur = encodeURIComponent(first.json.next_cursor);
    assertProblem(t, await a.request({ url: `/v1/tasks?sort=priority&limit=7&after=${cur}`, token: p.token }), 400, 'INVALID_CURSOR');
    // The other organization sees only its own.
    const theirIds = await walk(t, a, other.token, 'sort=name&order=asc', 4);
    t.same(asSet(theirIds), asSet([...foreign]), 'the other organization lists exactly its own tasks');
  });

  t.test('filters', async (t) => {
    const check = async (qs: string, where: string, params: unknown[] = [], sortQs = 'sort=name&order=asc',
      orderBy = 'lower(name) asc, id asc') => {
      const got = await walk(t, a, p.token, `${qs}&${sortQs}`);
      const want = await expected(where, orderBy, params);
      t.ok(want.length > 0, `${qs}: the fixture has matches`);
      t.same(got, want, `${qs}: exactly the matching tasks, in order`);
      t.notOk(got.some((id) => foreign.has(id)), `${qs}: no other organization's task`);
      return got;
    };
    await check(`project_id=${p1.id}`, 'archived_at is null and project_id = $2', [p1.id]);
    await check(`project_id=${p2.id}`, 'archived_at is null and project_id = $2', [p2.id], 'sort=due_at&order=desc',
      "coalesce(due_at, 'infinity'::timestamptz) desc, id desc");
    for (const s of ['todo', 'in_progress', 'done', 'blocked']) {
      await check(`status=${s}`, 'archived_at is null and status = $2', [s]);
    }
    const ann = await check('assignee_member_id=ann@x.example', "archived_at is null and assignee_member_ids @> array['ann@x.example']");
    t.same(asSet(ann), asSet([api[0]!.id, api[1]!.id, api[4]!.id]));
    const annUpper = await walk(t, a, p.token, 'assignee_member_id=ANN%40X.Example&sort=name&order=asc');
    t.same(annUpper, ann, 'assignee_member_id is matched case-insensitively');
    await check('assignee_member_id=bob%40x.example', "archived_at is null and assignee_member_ids @> array['bob@x.example']");
    for (const pr of ['low', 'medium', 'high', 'urgent']) {
      await check(`priority=${pr}`, 'archived_at is null and priority = $2', [pr]);
    }
    await check('due_before=2026-03-03T00:00:00Z', "archived_at is null and due_at < '2026-03-03T00:00:00Z'");
    await check('due_after=2026-03-03T00:00:00Z', "archived_at is null and due_at > '2026-03-03T00:00:00Z'", [], 'sort=due_at&order=asc',
      'due_at asc, id asc');
    await check('due_after=2026-03-02T00:00:00Z&due_before=2026-03-04T00:00:00Z',
      "archived_at is null and due_at > '2026-03-02T00:00:00Z' and due_at < '2026-03-04T00:00:00Z'");
    const alp = await check('search=aLP', "archived_at is null and lower(name) like '%alp%'");
    t.ok(alp.includes(api[5]!.id) && alp.includes(api[0]!.id), 'search is case-insensitive');
    await check('search=delta', "archived_at is null and lower(name) like '%delta%'", [], 'sort=priority&order=desc',
      "array_position(array['low','medium','high','urgent'], priority) desc, id desc");
    const pct = await check('search=%25', "archived_at is null and strpos(name, '%') > 0");
    t.same(pct, [api[1]!.id], 'search treats % literally');
    t.same(await walk(t, a, p.token, 'search=_'), [], 'search treats _ literally');
    const archived = await check('archived=true', 'archived_at is not null');
    t.same(asSet(archived), asSet([gone1.id, gone2.id]), 'archived=true lists only archived tasks');
    t.same(await walk(t, a, p.token, 'archived=false&sort=name&order=asc'), await expected('archived_at is null', 'lower(name) asc, id asc'));
    await check(`archived=true&project_id=${p2.id}`, 'archived_at is not null and project_id = $2', [p2.id]);
    await check(`project_id=${p1.id}&status=todo&priority=high`, "archived_at is null and project_id = $2 and status = 'todo' and priority = 'high'", [p1.id]);
    const none = await a.request({ url: `/v1/tasks?project_id=${op.id}`, token: p.token });
    t.same(none.json?.data, [], 'filtering on another organization\'s project finds nothing');
    const theirAnn = await walk(t, a, other.token, 'assignee_member_id=ann@x.example');
    t.same(theirAnn, [theirs.id], 'the other organization\'s assignee filter sees only its own');
  });
});
