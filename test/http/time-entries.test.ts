// Time entries over HTTP: listTimeEntries, createTimeEntry, getTimeEntry, updateTimeEntry,
// submitTimeEntry and deleteTimeEntry. Every time-entry error code of the decided behaviours
// (each asserted with assertProblem and followed by a check, as owner, that nothing changed), the
// Role table (member-only, manager, finance, hr with and without the organization policy), the
// approval lifecycle (draft -> submitted -> approved; draft -> submitted -> rejected -> edited ->
// resubmitted -> approved) with editability after every step, delete semantics and the audit row,
// and listTimeEntries filters, ordering, keyset pagination and the per-client external_id.
// Dates are relative to today in the organization's timezone (Europe/Berlin), read from Postgres.
import t from 'tap';
import type { Test } from 'tap';
import { startApp, assertProblem, type TestApp } from '../helpers/app.ts';

type Res = Awaited<ReturnType<TestApp['request']>>;

// Every top-level test has its own database: run them side by side.
t.jobs = 4;

let keySeq = 0;
const key = () => ({ 'idempotency-key': `time-test-${process.pid}-${++keySeq}` });

const WORKER = 'worker@x.example';
const WORKER2 = 'worker2@x.example';
const BOSS = 'boss@x.example';

/** YYYY-MM-DD plus n days (n may be negative). */
function addDays(date: string, n: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

/** Everything the database holds about an organization's time, read as owner. */
async function state(a: TestApp, org: string) {
  const entries = await a.admin`select to_jsonb(e) as r from app.time_entries e where organization_id = ${org} order by id`;
  const approvals = await a.admin`select to_jsonb(x) as r from app.approvals x where organization_id = ${org} order by id`;
  const audit = await a.admin`select to_jsonb(x) as r from app.time_entry_audit x where organization_id = ${org} order by id`;
  return { entries: entries.map((r) => r.r), approvals: approvals.map((r) => r.r), audit: audit.map((r) => r.r) };
}
type State = Awaited<ReturnType<typeof state>>;

async function unchanged(t: Test, a: TestApp, org: string, before: State, what: string) {
  t.same(await state(a, org), before, `nothing changed: ${what}`);
}

async function client(a: TestApp, org: string, roles: string) {
  const c = await a.createClient(org, { roles });
  return { ...c, token: await a.token(c) };
}

interface Ctx {
  a: TestApp;
  org: string;
  token: string;
  clientId: string;
  today: string;
  /** Reads today again: a check against the server's today (future, a year ago) refreshes it first,
   * because a run that crosses midnight in Berlin (23:00 UTC) moved the server's day under it. */
  refresh: () => Promise<void>;
  /** n days before today (Europe/Berlin). */
  ago: (n: number) => string;
  project: string;
  create: (payload?: Record<string, unknown>, token?: string) => Promise<Res>;
  entry: (payload?: Record<string, unknown>, token?: string) => Promise<Record<string, any>>;
  get: (id: string, token?: string) => Promise<Res>;
  patch: (id: string, payload: unknown, ifMatch?: string, token?: string) => Promise<Res>;
  submit: (id: string, token?: string) => Promise<Res>;
  del: (id: string, token?: string, headers?: Record<string, string>) => Promise<Res>;
  list: (query: string, token?: string) => Promise<Res>;
  projectReq: (payload: Record<string, unknown>) => Promise<string>;
}

async function setup(t: Test): Promise<Ctx> {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  await a.addMember(p.orgId, WORKER, { roles: 'member' });
  await a.addMember(p.orgId, WORKER2, { roles: 'member' });
  await a.addMember(p.orgId, BOSS, { roles: 'member,manager' });
  const readToday = async () => ((await a.admin`select (now() at time zone 'Europe/Berlin')::date::text as today`)[0] as any).today as string;
  const today = await readToday();
  const projectReq = async (payload: Record<string, unknown>) => {
    const r = await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: key(), payload: { name: 'P', ...payload } });
    if (r.statusCode !== 201) throw new Error(`createProject: ${r.statusCode} ${r.body}`);
    return r.json.id as string;
  };
  const project = await projectReq({ code: 'MAIN' });
  const ago = (n: number) => addDays(ctx.today, -n);
  const create: Ctx['create'] = (payload = {}, token = p.token) => a.request({ method: 'POST', url: '/v1/time-entries', token, headers: key(),
    payload: { subject: { member_id: WORKER }, project_id: project, work_date: ago(3), minutes: 60, ...payload } });
  const entry: Ctx['entry'] = async (payload = {}, token = p.token) => {
    const r = await create(payload, token);
    if (r.statusCode !== 201) throw new Error(`createTimeEntry: ${r.statusCode} ${r.body}`);
    return r.json;
  };
  const ctx: Ctx = {
    a, org: p.orgId, token: p.token, clientId: p.id, today, ago, project, create, entry, projectReq,
    refresh: async () => { ctx.today = await readToday(); },
    get: (id, token = p.token) => a.request({ url: `/v1/time-entries/${id}`, token }),
    patch: (id, payload, ifMatch, token = p.token) => a.request({ method: 'PATCH', url: `/v1/time-entries/${id}`, token,
      headers: ifMatch === undefined ? {} : { 'if-match': ifMatch }, payload }),
    submit: (id, token = p.token) => a.request({ method: 'POST', url: `/v1/time-entries/${id}/submit`, token, headers: key() }),
    del: (id, token = p.token, headers = key()) => a.request({ method: 'DELETE', url: `/v1/time-entries/${id}`, token, headers }),
    list: (query, token = p.token) => a.request({ url: `/v1/time-entries?${query}`, token }),
  };
  return ctx;
}

/** The first errors[] entry with this pointer. */
const errorAt = (res: Res, pointer: string) => (res.json?.errors ?? []).find((e: any) => e.pointer === pointer);

t.test('createTimeEntry: shape, defaults, and every create error code', async (t) => {
  const c = await setup(t);
  const { a, org } = c;

  await t.test('201: the documented shape, ETag "1", Location', async (t) => {
    const r = await c.create({ notes: 'n', external_id: 'ext-shape' });
    t.equal(r.statusCode, 201, r.body);
    t.equal(r.headers.etag, '"1"');
    t.equal(r.headers.location, `/v1/time-entries/${r.json.id}`);
    t.match(r.json, {
      object: 'time_entry', id: /^tim_/, member_id: WORKER, project_id: c.project, task_id: null, work_date: c.ago(3),
      minutes: 60, billable: true, notes: 'n', status: 'draft', external_id: 'ext-shape', approval_id: null,
      created_at: String, updated_at: String,
    });
    const g = await c.get(r.json.id);
    t.equal(g.statusCode, 200);
    t.equal(g.headers.etag, '"1"');
    t.same(g.json, r.json, 'GET returns what create returned');
    const nb = await c.create({ billable: false, minutes: 1 });
    t.equal(nb.statusCode, 201, nb.body);
    t.equal(nb.json.billable, false);
    t.equal(nb.json.notes, null);
  });

  await t.test('INVALID_SUBJECT_MEMBER: upper-case variant, unknown, inactive, other org', async (t) => {
    await a.addMember(org, 'gone@x.example', { roles: 'member', status: 'inactive' });
    const otherOrg = await a.createOrg();
    await a.addMember(otherOrg, 'alien@x.example', { roles: 'member' });
    await a.addMember(org, 'leaver@x.example', { roles: 'member' });
    await a.cli('member', 'set-status', '--org', org, '--email', 'leaver@x.example', '--status', 'inactive');
    for (const member of ['Worker@X.example', 'nobody@x.example', 'gone@x.example', 'alien@x.example', 'leaver@x.example', ' worker@x.example']) {
      const before = await state(a, org);
      const r = await c.create({ subject: { member_id: member } });
      assertProblem(t, r, 422, 'INVALID_SUBJECT_MEMBER');
      t.ok(errorAt(r, '/subject/member_id'), `pointer /subject/member_id for ${member}`);
      t.equal(errorAt(r, '/subject/member_id')?.code, 'INVALID_SUBJECT_MEMBER');
      await unchanged(t, a, org, before, member);
    }
    const before = await state(a, org);
    const missing = await c.create({ subject: undefined });
    assertProblem(t, missing, 422, 'VALIDATION_FAILED');
    await unchanged(t, a, org, before, 'no subject');
  });

  await t.test('INVALID_WORK_DATE: project archived, unknown, other org -> /project_id', async (t) => {
    const archived = await c.projectReq({ code: 'ARCH' });
    const ar = await a.request({ method: 'POST', url: `/v1/projects/${archived}/archive`, token: c.token, headers: key() });
    t.equal(ar.statusCode, 200, ar.body);
    const other = await a.principal('member,manager');
    const op = await a.request({ method: 'POST', url: '/v1/projects', token: other.token, headers: key(), payload: { code: 'O', name: 'O' } });
    t.equal(op.statusCode, 201);
    for (const [label, projectId] of [['archived', archived], ['unknown', 'prj_doesnotexist'], ['other org', op.json.id]] as const) {
      const before = await state(a, org);
      const r = await c.create({ project_id: projectId });
      assertProblem(t, r, 422, 'INVALID_WORK_DATE');
      t.equal(errorAt(r, '/project_id')?.code, 'INVALID_WORK_DATE', `pointer /project_id (${label})`);
      await unchanged(t, a, org, before, label);
    }
  });

  await t.test('INVALID_WORK_DATE: task archived, of another project, unknown -> /task_id', async (t) => {
    const mk = async (project: string, name: string) => {
      const r = await a.request({ method: 'POST', url: '/v1/tasks', token: c.token, headers: key(), payload: { project_id: project, name } });
      t.equal(r.statusCode, 201, r.body);
      return r.json.id as string;
    };
    const ok = await mk(c.project, 'fine');
    const archivedTask = await mk(c.project, 'old');
    const ar = await a.request({ method: 'POST', url: `/v1/tasks/${archivedTask}/archive`, token: c.token, headers: key() });
    t.equal(ar.statusCode, 200, ar.body);
    const otherProject = await c.projectReq({ code: 'OTHER' });
    const foreign = await mk(otherProject, 'elsewhere');
    for (const [label, taskId] of [['archived', archivedTask], ['other project', foreign], ['unknown', 'tsk_doesnotexist']] as const) {
      const before = await state(a, org);
      const r = await c.create({ task_id: taskId });
      assertProblem(t, r, 422, 'INVALID_WORK_DATE');
      t.equal(errorAt(r, '/task_id')?.code, 'INVALID_WORK_DATE', `pointer /task_id (${label})`);
      await unchanged(t, a, org, before, label);
    }
    const good = await c.create({ task_id: ok });
    t.equal(good.statusCode, 201, good.body);
    t.equal(good.json.task_id, ok);
  });

  await t.test('INVALID_WORK_DATE: outside the project dates, future, more than 366 days ago -> /work_date', async (t) => {
    await c.refresh();
    // The project's dates stay where they were made; what is checked against the server's today
    // is written after a fresh read of it.
    const d0 = c.today;
    const dated = await c.projectReq({ code: 'DATED', start_date: addDays(d0, -10), end_date: addDays(d0, -5) });
    const cases: [string, Record<string, unknown>][] = [
      ['before the project start', { project_id: dated, work_date: addDays(d0, -11) }],
      ['after the project end', { project_id: dated, work_date: addDays(d0, -4) }],
      ['tomorrow (Europe/Berlin)', { work_date: addDays(c.today, 1) }],
      ['367 days ago', { work_date: c.ago(367) }],
    ];
    for (const [label, payload] of cases) {
      const before = await state(a, org);
      const r = await c.create(payload);
      assertProblem(t, r, 422, 'INVALID_WORK_DATE');
      t.equal(errorAt(r, '/work_date')?.code, 'INVALID_WORK_DATE', `pointer /work_date (${label})`);
      await unchanged(t, a, org, before, label);
    }
    await c.refresh();
    for (const [label, payload] of [
      ['project start', { project_id: dated, work_date: addDays(d0, -10) }],
      ['project end', { project_id: dated, work_date: addDays(d0, -5) }],
      ['today', { work_date: c.today }],
      ['366 days ago', { work_date: c.ago(366) }],
    ] as const) {
      const r = await c.create(payload);
      t.equal(r.statusCode, 201, `${label} is allowed: ${r.body}`);
    }
    // --time-entry-future-days widens "today".
    await a.cli('org', 'set-policy', '--org', org, '--time-entry-future-days', '2');
    await c.refresh();
    t.equal((await c.create({ work_date: addDays(c.today, 2) })).statusCode, 201, 'today + 2 allowed with future-days 2');
    const before = await state(a, org);
    const r = await c.create({ work_date: addDays(c.today, 3) });
    assertProblem(t, r, 422, 'INVALID_WORK_DATE');
    t.equal(errorAt(r, '/work_date')?.code, 'INVALID_WORK_DATE');
    await unchanged(t, a, org, before, 'today + 3');
    await a.cli('org', 'set-policy', '--org', org, '--time-entry-future-days', '0');
    // A date that does not exist, or is not YYYY-MM-DD: the spec's code for the field wins.
    for (const bad of ['2025-02-30', '2025-2-3', 'yesterday', '0000-01-01']) {
      const b2 = await state(a, org);
      assertProblem(t, await c.create({ work_date: bad }), 422, 'INVALID_WORK_DATE');
      await unchanged(t, a, org, b2, bad);
    }
  });

  await t.test('minutes: schema (1..1440 integers) and INVALID_DURATION for the daily total', async (t) => {
    for (const minutes of [0, -30, 1441, 1.5, '60', -5, null]) {
      const before = await state(a, org);
      const r = await c.create({ minutes });
      assertProblem(t, r, 422, 'INVALID_DURATION');
      t.equal(errorAt(r, '/minutes')?.code, 'INVALID_DURATION');
      t.ok(errorAt(r, '/minutes'), `pointer /minutes for ${JSON.stringify(minutes)}`);
      await unchanged(t, a, org, before, `minutes ${JSON.stringify(minutes)}`);
    }
    const day = c.ago(20);
    t.equal((await c.create({ work_date: day, minutes: 1000 })).statusCode, 201);
    const before = await state(a, org);
    const over = await c.create({ work_date: day, minutes: 441 });
    assertProblem(t, over, 422, 'INVALID_DURATION');
    t.equal(errorAt(over, '/minutes')?.code, 'INVALID_DURATION');
    await unchanged(t, a, org, before, 'daily total 1441');
    const exact = await c.create({ work_date: day, minutes: 440 });
    t.equal(exact.statusCode, 201, 'exactly 1440 minutes in a day is allowed');
    // Another member, or another day, has its own total.
    t.equal((await c.create({ work_date: day, minutes: 1440, subject: { member_id: WORKER2 } })).statusCode, 201);
    t.equal((await c.create({ work_date: c.ago(21), minutes: 1440 })).statusCode, 201);
    const b2 = await state(a, org);
    assertProblem(t, await c.create({ work_date: day, minutes: 1 }), 422, 'INVALID_DURATION');
    await unchanged(t, a, org, b2, 'one more minute on a full day');
  });

  await t.test('EXTERNAL_ID_CONFLICT per client', async (t) => {
    t.equal((await c.create({ external_id: 'dup-1' })).statusCode, 201);
    const before = await state(a, org);
    const r = await c.create({ external_id: 'dup-1', work_date: c.ago(4) });
    assertProblem(t, r, 409, 'EXTERNAL_ID_CONFLICT');
    t.equal(errorAt(r, '/external_id')?.code, 'EXTERNAL_ID_CONFLICT');
    await unchanged(t, a, org, before, 'duplicate external_id');
  });

  await t.test('several problems at once are all listed', async (t) => {
    const before = await state(a, org);
    const r = await c.create({ subject: { member_id: 'nobody@x.example' }, project_id: 'prj_unknown', work_date: addDays(c.today, 5) });
    assertProblem(t, r, 422, 'INVALID_SUBJECT_MEMBER');
    t.same(new Set((r.json.errors ?? []).map((e: any) => `${e.pointer} ${e.code}`)), new Set([
      '/subject/member_id INVALID_SUBJECT_MEMBER', '/project_id INVALID_WORK_DATE', '/work_date INVALID_WORK_DATE',
    ]));
    await unchanged(t, a, org, before, 'three problems');
    const schema = await c.create({ minutes: 0, billable: 'yes', unknown_key: 1 });
    assertProblem(t, schema, 422, 'INVALID_DURATION');
    t.ok(schema.json.errors.length >= 3, 'every schema problem listed');
    await unchanged(t, a, org, before, 'schema problems');
  });
});

t.test('Role table: who may call each operation', async (t) => {
  const c = await setup(t);
  const { a, org } = c;
  const member = await client(a, org, 'member');
  const finance = await client(a, org, 'finance');
  const hr = await client(a, org, 'hr');
  const manager2 = await client(a, org, 'manager');
  const target = await c.entry({ work_date: c.ago(2) });
  const range = `work_date_gte=${c.ago(30)}&work_date_lte=${c.today}`;

  type Op = (token: string) => Promise<Res>;
  const ops: Record<string, Op> = {
    listTimeEntries: (tok) => c.list(range, tok),
    listTimeEntriesScoped: (tok) => c.list(`member_id=${WORKER}`, tok),
    getTimeEntry: (tok) => c.get(target.id, tok),
    createTimeEntry: (tok) => c.create({ work_date: c.ago(2) }, tok),
    updateTimeEntry: (tok) => c.patch(target.id, { minutes: 61 }, '"1"', tok),
    submitTimeEntry: (tok) => c.submit(target.id, tok),
    deleteTimeEntry: (tok) => c.del(target.id, tok),
  };
  const reads = new Set(['listTimeEntries', 'listTimeEntriesScoped', 'getTimeEntry']);

  const refused = async (t: Test, who: string, token: string, allowedReads: boolean) => {
    for (const [name, op] of Object.entries(ops)) {
      const before = await state(a, org);
      const r = await op(token);
      if (allowedReads && reads.has(name)) {
        t.equal(r.statusCode, 200, `${who} may ${name}: ${r.body}`);
        if (name === 'getTimeEntry') t.equal(r.json.id, target.id);
        else t.same(r.json.data.map((e: any) => e.id), [target.id]);
      } else {
        assertProblem(t, r, 403, 'ROLE_REQUIRED');
      }
      await unchanged(t, a, org, before, `${who} ${name}`);
    }
  };

  await t.test('member-only: everything 403 ROLE_REQUIRED', (t) => refused(t, 'member', member.token, false));
  await t.test('finance: reads only', (t) => refused(t, 'finance', finance.token, true));
  await t.test('hr without the policy: nothing', (t) => refused(t, 'hr', hr.token, false));
  await t.test('hr with --hr-may-read-time-entries true: reads only (same token)', async (t) => {
    await a.cli('org', 'set-policy', '--org', org, '--hr-may-read-time-entries', 'true');
    await refused(t, 'hr+policy', hr.token, true);
    await a.cli('org', 'set-policy', '--org', org, '--hr-may-read-time-entries', 'false');
    assertProblem(t, await c.get(target.id, hr.token), 403, 'ROLE_REQUIRED');
    assertProblem(t, await c.list(range, hr.token), 403, 'ROLE_REQUIRED');
  });
  await t.test('finance+hr+member without manager still cannot write', async (t) => {
    const mix = await client(a, org, 'member,finance,hr');
    for (const name of ['createTimeEntry', 'updateTimeEntry', 'submitTimeEntry', 'deleteTimeEntry']) {
      const before = await state(a, org);
      assertProblem(t, await ops[name]!(mix.token), 403, 'ROLE_REQUIRED');
      await unchanged(t, a, org, before, `member,finance,hr ${name}`);
    }
  });
  await t.test('manager-only client: everything', async (t) => {
    const l = await ops.listTimeEntries!(manager2.token);
    t.equal(l.statusCode, 200, l.body);
    t.equal((await ops.getTimeEntry!(manager2.token)).statusCode, 200);
    const cr = await ops.createTimeEntry!(manager2.token);
    t.equal(cr.statusCode, 201, cr.body);
    const up = await ops.updateTimeEntry!(manager2.token);
    t.equal(up.statusCode, 200, up.body);
    t.equal(up.json.minutes, 61);
    const sub = await ops.submitTimeEntry!(manager2.token);
    t.equal(sub.statusCode, 200, sub.body);
    t.equal(sub.json.status, 'submitted');
    const d = await c.del(cr.json.id, manager2.token);
    t.equal(d.statusCode, 204, d.body);
  });
});

t.test('lifecycle: draft -> submitted -> approved (CLI), editability after each step', async (t) => {
  const c = await setup(t);
  const { a, org } = c;
  const e = await c.entry({ work_date: c.ago(3), minutes: 60 });
  t.equal(e.status, 'draft');
  t.equal(e.approval_id, null);

  // draft: editable
  const up = await c.patch(e.id, { minutes: 90, notes: 'draft edit' }, '"1"');
  t.equal(up.statusCode, 200, up.body);
  t.equal(up.headers.etag, '"2"');
  t.match(up.json, { minutes: 90, notes: 'draft edit', status: 'draft' });

  // submit
  const sub = await c.submit(e.id);
  t.equal(sub.statusCode, 200, sub.body);
  t.equal(sub.json.status, 'submitted');
  t.match(sub.json.approval_id, /^apr_/);
  const approvalId = sub.json.approval_id as string;
  const g1 = await c.get(e.id);
  t.equal(g1.json.status, 'submitted');
  t.equal(sub.headers.etag, g1.headers.etag, 'submit returns the current ETag');
  const apr = await a.request({ url: `/v1/approvals/${approvalId}`, token: c.token });
  t.equal(apr.statusCode, 200, apr.body);
  t.match(apr.json, { status: 'pending', decision: null, decided_at: null, resource: { type: 'time_entry', id: e.id } });

  // submitted: submit again is a 200 no-op; no edits, no delete
  const before = await state(a, org);
  const again = await c.submit(e.id);
  t.equal(again.statusCode, 200, again.body);
  t.equal(again.json.status, 'submitted');
  t.equal(again.json.approval_id, approvalId);
  t.equal(again.headers.etag, g1.headers.etag, 'no-op: ETag unchanged');
  await unchanged(t, a, org, before, 'resubmitting a submitted entry');
  const lockedPatch = await c.patch(e.id, { minutes: 30 }, g1.headers.etag);
  assertProblem(t, lockedPatch, 409, 'TIME_ENTRY_LOCKED');
  await unchanged(t, a, org, before, 'PATCH on submitted');
  assertProblem(t, await c.del(e.id), 409, 'TIME_ENTRY_LOCKED');
  await unchanged(t, a, org, before, 'DELETE on submitted');

  // The control plane decides: only an active member holding manager.
  await t.rejects(a.cli('approval', 'decide', '--approval', approvalId, '--decision', 'approved', '--by', WORKER),
    { result: { err: { error: 'APPROVER_NOT_ELIGIBLE' } } } as any, 'a member without manager may not decide');
  await unchanged(t, a, org, before, 'ineligible approver');
  await a.cli('approval', 'decide', '--approval', approvalId, '--decision', 'approved', '--by', BOSS);
  const g2 = await c.get(e.id);
  t.equal(g2.json.status, 'approved');
  t.equal(g2.json.approval_id, approvalId);
  const apr2 = await a.request({ url: `/v1/approvals/${approvalId}`, token: c.token });
  t.match(apr2.json, { status: 'approved', decision: 'approved', decided_at: String });

  // approved: final
  const b2 = await state(a, org);
  assertProblem(t, await c.patch(e.id, { minutes: 30 }, g2.headers.etag), 409, 'TIME_ENTRY_LOCKED');
  await unchanged(t, a, org, b2, 'PATCH on approved');
  assertProblem(t, await c.patch(e.id, { notes: 'x' }, g2.headers.etag), 409, 'TIME_ENTRY_LOCKED');
  await unchanged(t, a, org, b2, 'PATCH notes on approved');
  assertProblem(t, await c.submit(e.id), 409, 'TIME_ENTRY_LOCKED');
  await unchanged(t, a, org, b2, 'submit on approved');
  assertProblem(t, await c.del(e.id), 409, 'TIME_ENTRY_LOCKED');
  await unchanged(t, a, org, b2, 'DELETE on approved');
  await t.rejects(a.cli('approval', 'decide', '--approval', approvalId, '--decision', 'rejected', '--by', BOSS),
    { result: { err: { error: 'APPROVAL_ALREADY_DECIDED' } } } as any);
  await unchanged(t, a, org, b2, 'deciding twice');
  t.same((await c.get(e.id)).json, g2.json, 'the approved entry reads as before');
});

t.test('lifecycle: draft -> submitted -> rejected -> edited -> resubmitted (same approval) -> approved', async (t) => {
  const c = await setup(t);
  const { a, org } = c;
  const e = await c.entry({ work_date: c.ago(4), minutes: 45 });
  const sub = await c.submit(e.id);
  t.equal(sub.statusCode, 200, sub.body);
  const approvalId = sub.json.approval_id as string;
  await a.cli('approval', 'decide', '--approval', approvalId, '--decision', 'rejected', '--by', BOSS);

  const g1 = await c.get(e.id);
  t.equal(g1.json.status, 'rejected');
  t.equal(g1.json.approval_id, approvalId);
  const apr1 = await a.request({ url: `/v1/approvals/${approvalId}`, token: c.token });
  t.match(apr1.json, { status: 'rejected', decision: 'rejected', decided_at: String });

  // rejected: editable (stays rejected), If-Match still enforced
  const stale = await state(a, org);
  assertProblem(t, await c.patch(e.id, { minutes: 50 }, '"1"'), 412, 'STALE_RESOURCE');
  await unchanged(t, a, org, stale, 'stale PATCH on rejected');
  const ed = await c.patch(e.id, { minutes: 50, notes: 'fixed', billable: false }, g1.headers.etag);
  t.equal(ed.statusCode, 200, ed.body);
  t.match(ed.json, { status: 'rejected', minutes: 50, notes: 'fixed', billable: false, approval_id: approvalId });
  t.not(ed.headers.etag, g1.headers.etag, 'the edit bumps the ETag');

  // resubmit: same approval, pending again
  const re = await c.submit(e.id);
  t.equal(re.statusCode, 200, re.body);
  t.equal(re.json.status, 'submitted');
  t.equal(re.json.approval_id, approvalId, 'the same approval is reused');
  const apr2 = await a.request({ url: `/v1/approvals/${approvalId}`, token: c.token });
  t.match(apr2.json, { status: 'pending', decision: null, decided_at: null });
  const [{ n }] = await a.admin`select count(*)::int as n from app.approvals where resource_id = ${e.id}` as any;
  t.equal(n, 1, 'one approval row for the entry');

  const g2 = await c.get(e.id);
  const b2 = await state(a, org);
  assertProblem(t, await c.patch(e.id, { minutes: 55 }, g2.headers.etag), 409, 'TIME_ENTRY_LOCKED');
  await unchanged(t, a, org, b2, 'PATCH after resubmission');
  assertProblem(t, await c.del(e.id), 409, 'TIME_ENTRY_LOCKED');
  await unchanged(t, a, org, b2, 'DELETE after resubmission');

  await a.cli('approval', 'decide', '--approval', approvalId, '--decision', 'approved', '--by', BOSS);
  const g3 = await c.get(e.id);
  t.match(g3.json, { status: 'approved', minutes: 50, approval_id: approvalId });
  const b3 = await state(a, org);
  assertProblem(t, await c.patch(e.id, { minutes: 55 }, g3.headers.etag), 409, 'TIME_ENTRY_LOCKED');
  assertProblem(t, await c.submit(e.id), 409, 'TIME_ENTRY_LOCKED');
  assertProblem(t, await c.del(e.id), 409, 'TIME_ENTRY_LOCKED');
  await unchanged(t, a, org, b3, 'approved after resubmission');

  // A rejected entry can also be deleted.
  const r2 = await c.entry({ work_date: c.ago(5) });
  const s2 = await c.submit(r2.id);
  await a.cli('approval', 'decide', '--approval', s2.json.approval_id, '--decision', 'rejected', '--by', BOSS);
  const d = await c.del(r2.id);
  t.equal(d.statusCode, 204, d.body);
  assertProblem(t, await c.get(r2.id), 404, 'TIME_ENTRY_NOT_FOUND');
});

t.test('updateTimeEntry: fields, If-Match, IMMUTABLE_FIELD, APPROVAL_REQUIRED, reference checks', async (t) => {
  const c = await setup(t);
  const { a, org } = c;
  const e = await c.entry({ work_date: c.ago(6), minutes: 100, notes: 'orig', external_id: 'upd-1' });

  await t.test('PRECONDITION_REQUIRED and STALE_RESOURCE', async (t) => {
    const before = await state(a, org);
    assertProblem(t, await c.patch(e.id, { minutes: 5 }), 428, 'PRECONDITION_REQUIRED');
    await unchanged(t, a, org, before, 'no If-Match');
    for (const tag of ['"2"', '"99"', 'W/"1"', 'garbage']) {
      const r = await c.patch(e.id, { minutes: 5 }, tag);
      assertProblem(t, r, 412, 'STALE_RESOURCE');
      t.equal(r.headers.etag, '"1"', `current ETag header (${tag})`);
      t.equal(r.json.current_etag, '"1"', `current_etag member (${tag})`);
      await unchanged(t, a, org, before, `If-Match ${tag}`);
    }
  });

  await t.test('status approved/rejected -> 403 APPROVAL_REQUIRED; other status values -> IMMUTABLE_FIELD', async (t) => {
    for (const status of ['approved', 'rejected']) {
      const before = await state(a, org);
      const r = await c.patch(e.id, { status }, '"1"');
      assertProblem(t, r, 403, 'APPROVAL_REQUIRED');
      await unchanged(t, a, org, before, `status ${status}`);
    }
    for (const status of ['submitted', 'draft', 'bogus']) {
      const before = await state(a, org);
      const r = await c.patch(e.id, { status }, '"1"');
      assertProblem(t, r, 422, 'IMMUTABLE_FIELD');
      t.equal(errorAt(r, '/status')?.code, 'IMMUTABLE_FIELD');
      await unchanged(t, a, org, before, `status ${status}`);
    }
  });

  await t.test('IMMUTABLE_FIELD for each echoed key, one errors[] entry per key', async (t) => {
    const immut: Record<string, unknown> = {
      member_id: WORKER2, subject: { member_id: WORKER2 }, external_id: 'other', id: 'tim_x', object: 'time_entry',
      approval_id: 'apr_x', created_at: '2020-01-01T00:00:00Z', updated_at: '2020-01-01T00:00:00Z',
    };
    for (const [k, v] of Object.entries(immut)) {
      const before = await state(a, org);
      const r = await c.patch(e.id, { [k]: v, minutes: 7 }, '"1"');
      assertProblem(t, r, 422, 'IMMUTABLE_FIELD');
      t.equal(errorAt(r, `/${k}`)?.code, 'IMMUTABLE_FIELD', `pointer /${k}`);
      await unchanged(t, a, org, before, k);
    }
    const before = await state(a, org);
    const all = await c.patch(e.id, immut, '"1"');
    assertProblem(t, all, 422, 'IMMUTABLE_FIELD');
    t.same(new Set(all.json.errors.map((x: any) => x.pointer)), new Set(Object.keys(immut).map((k) => `/${k}`)));
    await unchanged(t, a, org, before, 'all immutable keys');
  });

  await t.test('reference and date checks on update', async (t) => {
    const archived = await c.projectReq({ code: 'ARCH2' });
    t.equal((await a.request({ method: 'POST', url: `/v1/projects/${archived}/archive`, token: c.token, headers: key() })).statusCode, 200);
    const otherProject = await c.projectReq({ code: 'OTH2' });
    const tk = await a.request({ method: 'POST', url: '/v1/tasks', token: c.token, headers: key(), payload: { project_id: otherProject, name: 'x' } });
    await c.refresh();
    const cases: [string, Record<string, unknown>, number, string, string][] = [
      ['future work_date', { work_date: addDays(c.today, 1) }, 422, 'INVALID_WORK_DATE', '/work_date'],
      ['too old work_date', { work_date: c.ago(400) }, 422, 'INVALID_WORK_DATE', '/work_date'],
      ['archived project', { project_id: archived }, 422, 'INVALID_WORK_DATE', '/project_id'],
      ['unknown project', { project_id: 'prj_nope' }, 422, 'INVALID_WORK_DATE', '/project_id'],
      ['task of another project', { task_id: tk.json.id }, 422, 'INVALID_WORK_DATE', '/task_id'],
      ['minutes 0', { minutes: 0 }, 422, 'INVALID_DURATION', '/minutes'],
      ['minutes 1441', { minutes: 1441 }, 422, 'INVALID_DURATION', '/minutes'],
      ['empty body', {}, 422, 'VALIDATION_FAILED', ''],
    ];
    // Fill the rest of the day: 100 + 1340 = 1440.
    t.equal((await c.create({ work_date: c.ago(6), minutes: 1340 })).statusCode, 201);
    cases.push(['daily total above 1440', { minutes: 101 }, 422, 'INVALID_DURATION', '/minutes']);
    for (const [label, patch, status, code, pointer] of cases) {
      const before = await state(a, org);
      const r = await c.patch(e.id, patch, '"1"');
      assertProblem(t, r, status, code);
      if (pointer && code === 'VALIDATION_FAILED') t.ok(errorAt(r, pointer), `${label}: pointer ${pointer}`);
      else if (pointer) t.equal(errorAt(r, pointer)?.code, code, `${label}: pointer ${pointer}`);
      await unchanged(t, a, org, before, label);
    }
    // The entry's own minutes do not count against it.
    const same = await c.patch(e.id, { minutes: 100, notes: null }, '"1"');
    t.equal(same.statusCode, 200, same.body);
    t.equal(same.json.notes, null, 'null clears notes');
    t.equal(same.headers.etag, '"2"');
  });

  await t.test('only supplied keys change; task_id null clears', async (t) => {
    const task = await a.request({ method: 'POST', url: '/v1/tasks', token: c.token, headers: key(), payload: { project_id: c.project, name: 'T' } });
    const g = await c.get(e.id);
    const r = await c.patch(e.id, { task_id: task.json.id, work_date: c.ago(7) }, g.headers.etag);
    t.equal(r.statusCode, 200, r.body);
    t.match(r.json, { task_id: task.json.id, work_date: c.ago(7), minutes: 100, external_id: 'upd-1', member_id: WORKER, status: 'draft' });
    const r2 = await c.patch(e.id, { task_id: null }, r.headers.etag);
    t.equal(r2.statusCode, 200, r2.body);
    t.equal(r2.json.task_id, null);
    t.equal(r2.json.created_at, e.created_at);
  });

  await t.test('TIME_ENTRY_NOT_FOUND: unknown, other organization; malformed id 400', async (t) => {
    const other = await a.principal('member,manager');
    await a.addMember(other.orgId, 'o@x.example', { roles: 'member' });
    const op = await a.request({ method: 'POST', url: '/v1/projects', token: other.token, headers: key(), payload: { code: 'O', name: 'O' } });
    const oe = await a.request({ method: 'POST', url: '/v1/time-entries', token: other.token, headers: key(),
      payload: { subject: { member_id: 'o@x.example' }, project_id: op.json.id, work_date: c.ago(2), minutes: 10 } });
    t.equal(oe.statusCode, 201, oe.body);
    const otherBefore = await state(a, other.orgId);
    for (const id of ['tim_doesnotexist', oe.json.id]) {
      const before = await state(a, org);
      assertProblem(t, await c.get(id), 404, 'TIME_ENTRY_NOT_FOUND');
      assertProblem(t, await c.patch(id, { minutes: 5 }, '"1"'), 404, 'TIME_ENTRY_NOT_FOUND');
      assertProblem(t, await c.submit(id), 404, 'TIME_ENTRY_NOT_FOUND');
      assertProblem(t, await c.del(id), 404, 'TIME_ENTRY_NOT_FOUND');
      await unchanged(t, a, org, before, id);
    }
    await unchanged(t, a, other.orgId, otherBefore, 'the other organization');
    assertProblem(t, await c.get('prj_abc'), 400, 'INVALID_REQUEST');
    assertProblem(t, await c.get('tim_a-b'), 400, 'INVALID_REQUEST');
  });
});

t.test('deleteTimeEntry: soft delete, audit row, idempotent, then 404 everywhere', async (t) => {
  const c = await setup(t);
  const { a, org } = c;
  const e = await c.entry({ work_date: c.ago(8), minutes: 1440, external_id: 'del-1' });
  const keep = await c.entry({ work_date: c.ago(9), minutes: 30 });

  const k = key();
  const d = await c.del(e.id, c.token, k);
  t.equal(d.statusCode, 204, d.body);
  t.equal(d.body, '', 'no body');

  const [row] = await a.admin`select deleted_at, status, minutes from app.time_entries where id = ${e.id}`;
  t.ok(row, 'the row is kept (soft delete)');
  t.ok(row!.deleted_at, 'deleted_at set');
  t.equal(row!.status, 'draft');
  const audit = await a.admin`select * from app.time_entry_audit where time_entry_id = ${e.id}`;
  t.equal(audit.length, 1, 'one audit row');
  t.match(audit[0], { organization_id: org, action: 'deleted', actor_client_id: c.clientId });
  t.ok(audit[0]!.at instanceof Date);

  // Replay with the same key, and a new key: 204 without another audit row.
  const before = await state(a, org);
  const replay = await c.del(e.id, c.token, k);
  t.equal(replay.statusCode, 204);
  t.equal(replay.headers['idempotent-replayed'], 'true');
  const again = await c.del(e.id);
  t.equal(again.statusCode, 204, again.body);
  await unchanged(t, a, org, before, 'deleting again');

  // Gone from every read and write.
  assertProblem(t, await c.get(e.id), 404, 'TIME_ENTRY_NOT_FOUND');
  assertProblem(t, await c.patch(e.id, { minutes: 5 }, '"1"'), 404, 'TIME_ENTRY_NOT_FOUND');
  assertProblem(t, await c.patch(e.id, { minutes: 5 }, '"2"'), 404, 'TIME_ENTRY_NOT_FOUND');
  assertProblem(t, await c.submit(e.id), 404, 'TIME_ENTRY_NOT_FOUND');
  await unchanged(t, a, org, before, 'operations on a deleted entry');
  const l = await c.list(`work_date_gte=${c.ago(30)}&work_date_lte=${c.today}`);
  t.same(l.json.data.map((x: any) => x.id), [keep.id], 'deleted entries never appear in lists');
  t.same((await c.list('external_id=del-1')).json.data, [], 'nor by external_id');
  t.same((await c.list(`member_id=${WORKER}&status=draft`)).json.data.map((x: any) => x.id), [keep.id]);

  // The deleted entry no longer counts: the day and the external_id are free again.
  const full = await c.create({ work_date: c.ago(8), minutes: 1440, external_id: 'del-1' });
  t.equal(full.statusCode, 201, full.body);

  // Unknown -> 404, nothing changed.
  const b2 = await state(a, org);
  assertProblem(t, await c.del('tim_unknown'), 404, 'TIME_ENTRY_NOT_FOUND');
  assertProblem(t, await a.request({ method: 'DELETE', url: `/v1/time-entries/${keep.id}`, token: c.token }), 400, 'IDEMPOTENCY_KEY_REQUIRED');
  await unchanged(t, a, org, b2, 'unknown id / no key');
});

t.test('listTimeEntries: filters, ordering, pagination, bounded org-wide listing, external_id per client', async (t) => {
  const c = await setup(t);
  const { a, org } = c;
  const second = await client(a, org, 'manager');
  const projectB = await c.projectReq({ code: 'B' });
  const taskR = await a.request({ method: 'POST', url: '/v1/tasks', token: c.token, headers: key(), payload: { project_id: c.project, name: 'T' } });
  t.equal(taskR.statusCode, 201);
  const task = taskR.json.id as string;

  // 40 entries: 8 days x 5, two members, two projects, some with a task, some non-billable, two external ids.
  const created: Record<string, any>[] = [];
  for (let d = 1; d <= 8; d++) {
    for (let i = 0; i < 5; i++) {
      const n = created.length;
      created.push(await c.entry({
        work_date: c.ago(d * 3),
        subject: { member_id: i % 2 ? WORKER2 : WORKER },
        project_id: i === 4 ? projectB : c.project,
        ...(i === 3 ? { task_id: task } : {}),
        billable: n % 3 !== 0,
        minutes: 10 + n,
        ...(n === 5 ? { external_id: 'ext-A' } : n === 6 ? { external_id: 'ext-B' } : {}),
      }));
    }
  }
  t.equal(created.length, 40);
  // Some submitted, one deleted.
  for (const e of created.slice(10, 14)) t.equal((await c.submit(e.id)).statusCode, 200);
  const deleted = created[20]!;
  t.equal((await c.del(deleted.id)).statusCode, 204);

  const range = `work_date_gte=${c.ago(30)}&work_date_lte=${c.today}`;
  const expected = async (where: string, params: unknown[] = []) =>
    (await a.admin.unsafe(`select id from app.time_entries where organization_id = $1 and deleted_at is null ${where} order by work_date, id`,
      [org, ...params] as any[])).map((r: any) => r.id as string);
  const all = async (query: string, token = c.token) => {
    const ids: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const r: Res = await c.list(`${query}&limit=7${after ? `&after=${encodeURIComponent(after)}` : ''}`, token);
      t.equal(r.statusCode, 200, r.body);
      t.ok(r.json.data.length <= 7);
      ids.push(...r.json.data.map((x: any) => x.id));
      after = r.json.next_cursor;
      t.equal(r.json.has_more, after !== null);
      if (after) t.equal(r.json.data.length, 7, 'non-final pages are full');
      if (++pages > 20) throw new Error('runaway pagination');
    } while (after);
    return { ids, pages };
  };

  await t.test('ordering by (work_date, id) and pagination with limit 7', async (t) => {
    const full = await c.list(`${range}&limit=200`);
    t.equal(full.statusCode, 200, full.body);
    const want = await expected('');
    t.equal(want.length, 39);
    t.same(full.json.data.map((x: any) => x.id), want, 'sorted by work_date then id');
    t.equal(full.json.has_more, false);
    t.equal(full.json.next_cursor, null);
    const dates = full.json.data.map((x: any) => x.work_date);
    t.same(dates, [...dates].sort(), 'work dates ascend');
    t.notOk(full.json.data.some((x: any) => x.id === deleted.id), 'the deleted entry is absent');
    const { ids, pages } = await all(range);
    t.equal(pages, Math.ceil(39 / 7));
    t.equal(new Set(ids).size, ids.length, 'no duplicates');
    t.same(ids, want, 'no gaps, same order');
    // Default limit 50 holds them all.
    const def = await c.list(range);
    t.equal(def.json.data.length, 39);
  });

  await t.test('filters', async (t) => {
    const cases: [string, string, unknown[]][] = [
      [`member_id=${encodeURIComponent('WORKER2@X.Example')}`, 'and member_id = $2', [WORKER2]],
      [`project_id=${projectB}`, 'and project_id = $2', [projectB]],
      [`task_id=${task}`, 'and task_id = $2', [task]],
      [`work_date_gte=${c.ago(12)}&work_date_lte=${c.ago(6)}`, 'and work_date between $2::date and $3::date', [c.ago(12), c.ago(6)]],
      [`${range}&status=submitted`, "and status = 'submitted'", []],
      [`${range}&status=draft`, "and status = 'draft'", []],
      [`${range}&billable=false`, 'and not billable', []],
      [`${range}&billable=true`, 'and billable', []],
      [`member_id=${WORKER}&project_id=${c.project}&billable=true`, 'and member_id = $2 and project_id = $3 and billable', [WORKER, c.project]],
      [`project_id=${c.project}&work_date_gte=${c.ago(9)}`, 'and project_id = $2 and work_date >= $3::date', [c.project, c.ago(9)]],
      [`member_id=${WORKER}&work_date_lte=${c.ago(15)}&status=draft`, "and member_id = $2 and work_date <= $3::date and status = 'draft'", [WORKER, c.ago(15)]],
    ];
    for (const [q, where, params] of cases) {
      const want = await expected(where, params);
      t.ok(want.length > 0, `${q}: the fixture has matches`);
      const { ids } = await all(q);
      t.same(ids, want, q);
    }
    t.same((await c.list(`project_id=${projectB}&status=approved`)).json.data, [], 'no approved entries');
  });

  await t.test('external_id: filter and field visible only to the creating client', async (t) => {
    const mine = await c.list('external_id=ext-A');
    t.equal(mine.statusCode, 200, mine.body);
    t.same(mine.json.data.map((x: any) => x.id), [created[5]!.id]);
    t.equal(mine.json.data[0].external_id, 'ext-A');
    t.equal((await c.get(created[5]!.id)).json.external_id, 'ext-A');

    const theirs = await c.list('external_id=ext-A', second.token);
    t.equal(theirs.statusCode, 200, theirs.body);
    t.same(theirs.json.data, [], 'another client does not find it by external_id');
    const g = await c.get(created[5]!.id, second.token);
    t.equal(g.statusCode, 200);
    t.equal(g.json.external_id, null, 'another client sees external_id null');
    const l2 = await c.list(`${range}&limit=200`, second.token);
    t.equal(l2.json.data.length, 39, 'another client lists every entry');
    t.ok(l2.json.data.every((x: any) => x.external_id === null), 'with no external ids');
    const l1 = await c.list(`${range}&limit=200`);
    t.same(l1.json.data.filter((x: any) => x.external_id).map((x: any) => x.external_id).sort(), ['ext-A', 'ext-B']);

    // The other client may reuse the id; the creator may not.
    const reuse = await c.create({ external_id: 'ext-A', work_date: c.ago(1) }, second.token);
    t.equal(reuse.statusCode, 201, reuse.body);
    t.equal(reuse.json.external_id, 'ext-A');
    t.equal((await c.get(reuse.json.id)).json.external_id, null, 'the first client does not see the second\'s external_id');
    t.same((await c.list('external_id=ext-A')).json.data.map((x: any) => x.id), [created[5]!.id]);
    t.same((await c.list('external_id=ext-A', second.token)).json.data.map((x: any) => x.id), [reuse.json.id]);
    const before = await state(a, org);
    const dup = await c.create({ external_id: 'ext-A', work_date: c.ago(1) });
    assertProblem(t, dup, 409, 'EXTERNAL_ID_CONFLICT');
    await unchanged(t, a, org, before, 'EXTERNAL_ID_CONFLICT');
    const dup2 = await c.create({ external_id: 'ext-A', work_date: c.ago(2) }, second.token);
    assertProblem(t, dup2, 409, 'EXTERNAL_ID_CONFLICT');
    await unchanged(t, a, org, before, 'EXTERNAL_ID_CONFLICT (second client)');
    t.equal((await c.del(reuse.json.id, second.token)).statusCode, 204);
  });

  await t.test('INVALID_REQUEST: an organization-wide listing needs both dates at most 93 days apart', async (t) => {
    const before = await state(a, org);
    for (const q of ['', 'status=draft', 'billable=true', `work_date_gte=${c.ago(10)}`, `work_date_lte=${c.today}`,
      `work_date_gte=${c.ago(94)}&work_date_lte=${c.today}`, `work_date_gte=${c.ago(200)}&work_date_lte=${c.ago(10)}`,
      `work_date_gte=${c.today}&work_date_lte=${c.ago(1)}`]) {
      const r = await c.list(q);
      assertProblem(t, r, 400, 'INVALID_REQUEST');
      t.ok(r.json.errors?.length, `errors listed (${q || 'no filters'})`);
    }
    await unchanged(t, a, org, before, 'unbounded listings');
    const edge = await c.list(`work_date_gte=${c.ago(93)}&work_date_lte=${c.today}&limit=200`);
    t.equal(edge.statusCode, 200, `93 days apart is allowed: ${edge.body}`);
    t.equal(edge.json.data.length, 39);
    const sameDay = await c.list(`work_date_gte=${c.ago(3)}&work_date_lte=${c.ago(3)}`);
    t.equal(sameDay.statusCode, 200);
    t.equal(sameDay.json.data.length, 5);
    // Any bounded date pair within 93 days is an acceptable org-wide window, including early dates.
    const early = await c.list('work_date_gte=1970-01-01&work_date_lte=1970-02-01');
    t.equal(early.statusCode, 200, `a window starting 1970-01-01 is bounded: ${early.body}`);
    // Scoped listings need no dates.
    for (const q of [`member_id=${WORKER}`, `project_id=${c.project}`, `task_id=${task}`, 'external_id=ext-B']) {
      const r = await c.list(q);
      t.equal(r.statusCode, 200, `${q}: ${r.body}`);
      t.ok(r.json.data.length > 0);
    }
  });

  await t.test('list parameters: limit bounds, cursors, malformed filters', async (t) => {
    for (const q of [`${range}&limit=0`, `${range}&limit=201`, `${range}&status=deleted`, `${range}&work_date_gte=2025-13-01`,
      `work_date_gte=0000-01-01&work_date_lte=0000-01-02`, `member_id=a@b.example&work_date_gte=0000-01-01`,
      'member_id=not-an-email', 'project_id=tsk_x', `${range}&billable=maybe`]) {
      assertProblem(t, await c.list(q), 400, 'INVALID_REQUEST');
    }
    const p1 = await c.list(`${range}&limit=7`);
    const cursor = p1.json.next_cursor as string;
    t.ok(cursor);
    assertProblem(t, await c.list(`${range}&limit=7&after=${encodeURIComponent(cursor.slice(0, -2) + 'xx')}`), 400, 'INVALID_CURSOR');
    assertProblem(t, await c.list(`${range}&status=draft&limit=7&after=${encodeURIComponent(cursor)}`), 400, 'INVALID_CURSOR');
    const p2 = await c.list(`${range}&limit=10&after=${encodeURIComponent(cursor)}`);
    t.equal(p2.statusCode, 200, 'a cursor may be used with another limit');
    t.equal(p2.json.data[0].id, (await expected(''))[7]);
  });
});
