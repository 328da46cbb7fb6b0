// Projects over HTTP: createProject, getProject, updateProject, archiveProject, restoreProject and
// listProjects. Every project error code of the decided behaviours (each followed by a check that
// nothing changed), the Role rules and projections as data tables, PATCH semantics with ETags,
// archive blocked by open tasks, restore re-validating references, list filters, and keyset
// pagination for every sort in both orders compared with the database's own ordering.
import t, { type Test } from 'tap';
import { startApp, assertProblem, type TestApp } from '../helpers/app.ts';

type Res = Awaited<ReturnType<TestApp['request']>>;

const BASE = ['object', 'id', 'code', 'name', 'status', 'start_date', 'end_date', 'created_at', 'updated_at', 'custom_fields'];
const FULL = [...BASE, 'description', 'customer_id', 'manager_member_id', 'currency'];
const FINANCE = [...BASE, 'customer_id', 'currency'];
const HR = [...BASE, 'manager_member_id'];
const FINANCE_HR = [...BASE, 'customer_id', 'currency', 'manager_member_id'];
const sorted = (a: string[]) => [...a].sort();

let keySeq = 0;
const newKey = () => `key-${process.pid}-${++keySeq}`;

const createProject = (a: TestApp, token: string, payload: unknown, key: string = newKey()) =>
  a.request({ method: 'POST', url: '/v1/projects', token, payload, headers: { 'idempotency-key': key } });
const getProject = (a: TestApp, token: string, id: string) => a.request({ url: `/v1/projects/${id}`, token });
const patchProject = (a: TestApp, token: string, id: string, ifMatch: string | undefined, payload: unknown) =>
  a.request({ method: 'PATCH', url: `/v1/projects/${id}`, token, payload, headers: ifMatch === undefined ? {} : { 'if-match': ifMatch } });
const archiveProject = (a: TestApp, token: string, id: string, key: string = newKey()) =>
  a.request({ method: 'POST', url: `/v1/projects/${id}/archive`, token, headers: { 'idempotency-key': key } });
const restoreProject = (a: TestApp, token: string, id: string) =>
  a.request({ method: 'POST', url: `/v1/projects/${id}/restore`, token });

async function mustCreate(t: Test, a: TestApp, token: string, payload: Record<string, unknown>) {
  const res = await createProject(a, token, payload);
  t.equal(res.statusCode, 201, `create ${JSON.stringify(payload)}: ${res.body}`);
  return res.json as Record<string, any>;
}

async function createTask(a: TestApp, token: string, projectId: string, name = 'Task') {
  const res = await a.request({ method: 'POST', url: '/v1/tasks', token, headers: { 'idempotency-key': newKey() },
    payload: { project_id: projectId, name } });
  if (res.statusCode !== 201) throw new Error(`createTask: ${res.statusCode} ${res.body}`);
  return res.json as Record<string, any>;
}
async function transition(a: TestApp, token: string, taskId: string, name: string) {
  const res = await a.request({ method: 'POST', url: `/v1/tasks/${taskId}/transitions`, token, headers: { 'idempotency-key': newKey() },
    payload: { transition: name } });
  if (res.statusCode !== 200) throw new Error(`transition ${name}: ${res.statusCode} ${res.body}`);
  return res.json as Record<string, any>;
}

/** Every project row (all organizations) as the owner sees it: the "nothing changed" witness. */
const snapshot = async (a: TestApp) =>
  (await a.admin`select to_jsonb(p) as row from app.projects p order by id`).map((r) => r.row);

async function unchanged(t: Test, a: TestApp, before: unknown[], what: string) {
  t.same(await snapshot(a), before, `${what}: no project changed`);
}

const pointers = (res: Res) => ((res.json?.errors ?? []) as { pointer: string }[]).map((e) => e.pointer);

/** Walks every page; returns the ids in order received, the page sizes and the last page. */
async function walk(a: TestApp, token: string, base: string) {
  const ids: string[] = [];
  const sizes: number[] = [];
  let after: string | null = null;
  let last: any;
  for (let page = 0; page < 30; page++) { // 60 rows at limit 7 need 9 pages; stop a runaway walk
    const sep = base.includes('?') ? '&' : '?';
    const res = await a.request({ url: after ? `${base}${sep}after=${encodeURIComponent(after)}` : base, token });
    if (res.statusCode !== 200) throw new Error(`${base} page ${page}: ${res.statusCode} ${res.body}`);
    last = res.json;
    sizes.push(res.json.data.length);
    for (const p of res.json.data) ids.push(p.id);
    if (!res.json.has_more) break;
    if (!res.json.next_cursor) throw new Error('has_more without next_cursor');
    after = res.json.next_cursor;
  }
  return { ids, sizes, last };
}

t.test('createProject: 201, Location, ETag, service-assigned fields; idempotent replay', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  await a.addMember(p.orgId, 'boss@x.example', { roles: 'member,manager' });
  const { customer_id } = await a.cli('customer', 'create', '--org', p.orgId, '--kind', 'company', '--name', 'ACME');
  const body = { code: 'Apollo-1', name: 'Apollo', description: 'Moon', start_date: '2026-01-01', end_date: '2026-01-01',
    manager_member_id: 'BOSS@X.example', customer_id };
  const key = newKey();
  const res = await createProject(a, p.token, body, key);
  t.equal(res.statusCode, 201, res.body);
  const proj = res.json;
  t.match(proj.id, /^prj_[A-Za-z0-9]+$/);
  t.equal(res.headers.location, `/v1/projects/${proj.id}`, 'Location');
  t.equal(res.headers.etag, '"1"', 'ETag "1"');
  t.same(sorted(Object.keys(proj)), sorted(FULL), 'member+manager: every field');
  t.match(proj, { object: 'project', code: 'Apollo-1', name: 'Apollo', description: 'Moon', status: 'active',
    start_date: '2026-01-01', end_date: '2026-01-01', manager_member_id: 'boss@x.example', customer_id, currency: 'EUR',
    custom_fields: {} });
  t.match(proj.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
  t.equal(proj.created_at, proj.updated_at);

  const got = await getProject(a, p.token, proj.id);
  t.equal(got.statusCode, 200, got.body);
  t.same(got.json, proj, 'getProject returns the created document');
  t.equal(got.headers.etag, '"1"');

  const replay = await createProject(a, p.token, body, key);
  t.equal(replay.statusCode, 201, replay.body);
  t.equal(replay.headers['idempotent-replayed'], 'true', 'Idempotent-Replayed: true');
  t.same(replay.json, proj, 'the same project replayed');
  t.equal(replay.headers.location, res.headers.location);
  t.equal(replay.headers.etag, '"1"');
  const [{ n }] = await a.admin`select count(*)::int as n from app.projects where organization_id = ${p.orgId}` as any;
  t.equal(n, 1, 'one project only');

  const before = await snapshot(a);
  const reused = await createProject(a, p.token, { ...body, name: 'Other' }, key);
  assertProblem(t, reused, 422, 'IDEMPOTENCY_KEY_REUSED');
  await unchanged(t, a, before, 'key reused');

  const minimal = await mustCreate(t, a, p.token, { code: 'min', name: 'Minimal' });
  t.match(minimal, { description: null, start_date: null, end_date: null, customer_id: null, manager_member_id: null,
    status: 'active', currency: 'EUR' });

  const noKey = await a.request({ method: 'POST', url: '/v1/projects', token: p.token, payload: { code: 'nokey', name: 'x' } });
  assertProblem(t, noKey, 400, 'IDEMPOTENCY_KEY_REQUIRED');
});

t.test('createProject errors leave nothing behind', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  const other = await a.principal('member,manager');
  await a.addMember(p.orgId, 'boss@x.example', { roles: 'member,manager' });
  await a.addMember(p.orgId, 'worker@x.example', { roles: 'member' });
  await a.addMember(p.orgId, 'gone@x.example', { roles: 'member,manager', status: 'inactive' });
  await a.addMember(other.orgId, 'foreign@x.example', { roles: 'member,manager' });
  const { customer_id: company } = await a.cli('customer', 'create', '--org', p.orgId, '--kind', 'company', '--name', 'ACME');
  const { customer_id: billing } = await a.cli('customer', 'create', '--org', p.orgId, '--kind', 'billing', '--name', 'Bill');
  const { customer_id: deleted } = await a.cli('customer', 'create', '--org', p.orgId, '--kind', 'company', '--name', 'Old');
  await a.cli('customer', 'delete', '--org', p.orgId, '--customer', deleted);
  const { customer_id: foreignCompany } = await a.cli('customer', 'create', '--org', other.orgId, '--kind', 'company', '--name', 'F');
  await mustCreate(t, a, p.token, { code: 'Taken', name: 'Existing' });
  await mustCreate(t, a, other.token, { code: 'FOREIGN', name: 'Other org' });

  const cases: { name: string; body: unknown; status: number; code: string; pointer?: string }[] = [
    { name: 'code taken (same case)', body: { code: 'Taken', name: 'x' }, status: 409, code: 'PROJECT_CODE_CONFLICT' },
    { name: 'code taken (other case)', body: { code: 'tAKEN', name: 'x' }, status: 409, code: 'PROJECT_CODE_CONFLICT' },
    { name: 'code missing', body: { name: 'x' }, status: 422, code: 'VALIDATION_FAILED', pointer: '/code' },
    { name: 'name missing', body: { code: 'n1' }, status: 422, code: 'VALIDATION_FAILED', pointer: '/name' },
    { name: 'code format', body: { code: '-bad', name: 'x' }, status: 422, code: 'VALIDATION_FAILED', pointer: '/code' },
    { name: 'code too long', body: { code: 'a'.repeat(33), name: 'x' }, status: 422, code: 'VALIDATION_FAILED', pointer: '/code' },
    { name: 'end before start', body: { code: 'd1', name: 'x', start_date: '2026-03-02', end_date: '2026-03-01' },
      status: 422, code: 'VALIDATION_FAILED', pointer: '/end_date' },
    { name: 'start_date not a date', body: { code: 'd2', name: 'x', start_date: '01.02.2026' },
      status: 422, code: 'VALIDATION_FAILED', pointer: '/start_date' },
    { name: 'start_date month 13', body: { code: 'd3', name: 'x', start_date: '2026-13-01' },
      status: 422, code: 'VALIDATION_FAILED', pointer: '/start_date' },
    { name: 'end_date impossible day (Feb 30)', body: { code: 'd4', name: 'x', end_date: '2026-02-30' },
      status: 422, code: 'VALIDATION_FAILED', pointer: '/end_date' },
    { name: 'customer is a billing customer (cus_)', body: { code: 'c1', name: 'x', customer_id: billing },
      status: 422, code: 'VALIDATION_FAILED', pointer: '/customer_id' },
    { name: 'customer unknown', body: { code: 'c2', name: 'x', customer_id: 'com_doesnotexist' },
      status: 422, code: 'VALIDATION_FAILED', pointer: '/customer_id' },
    { name: 'customer deleted', body: { code: 'c3', name: 'x', customer_id: deleted },
      status: 422, code: 'VALIDATION_FAILED', pointer: '/customer_id' },
    { name: 'customer of another org', body: { code: 'c4', name: 'x', customer_id: foreignCompany },
      status: 422, code: 'VALIDATION_FAILED', pointer: '/customer_id' },
    { name: 'customer malformed', body: { code: 'c5', name: 'x', customer_id: 'ACME' },
      status: 422, code: 'VALIDATION_FAILED', pointer: '/customer_id' },
    { name: 'manager unknown', body: { code: 'm1', name: 'x', manager_member_id: 'nobody@x.example' },
      status: 422, code: 'INVALID_MANAGER', pointer: '/manager_member_id' },
    { name: 'manager without manager Role', body: { code: 'm2', name: 'x', manager_member_id: 'worker@x.example' },
      status: 422, code: 'INVALID_MANAGER', pointer: '/manager_member_id' },
    { name: 'manager inactive', body: { code: 'm3', name: 'x', manager_member_id: 'gone@x.example' },
      status: 422, code: 'INVALID_MANAGER', pointer: '/manager_member_id' },
    { name: 'manager of another org', body: { code: 'm4', name: 'x', manager_member_id: 'foreign@x.example' },
      status: 422, code: 'INVALID_MANAGER', pointer: '/manager_member_id' },
    { name: 'unknown body member', body: { code: 'u1', name: 'x', status: 'archived' },
      status: 422, code: 'VALIDATION_FAILED' },
  ];
  for (const c of cases) {
    t.test(c.name, async (t) => {
      const before = await snapshot(a);
      const key = newKey();
      const res = await createProject(a, p.token, c.body, key);
      assertProblem(t, res, c.status, c.code);
      if (c.pointer) t.ok(pointers(res).includes(c.pointer), `errors[] has pointer ${c.pointer}: ${res.body}`);
      await unchanged(t, a, before, c.name);
      // A failed request stores nothing: the same key now works for a valid body.
      const retry = await createProject(a, p.token, { code: `ok-${keySeq}`, name: 'fine' }, key);
      t.equal(retry.statusCode, 201, `the key is free after the failure: ${retry.body}`);
    });
  }

  t.test('every body problem is listed', async (t) => {
    const before = await snapshot(a);
    const res = await createProject(a, p.token, { code: '', name: '', start_date: 'x', customer_id: 'nope' });
    assertProblem(t, res, 422, 'VALIDATION_FAILED');
    t.same(sorted([...new Set(pointers(res))]), sorted(['/code', '/name', '/start_date', '/customer_id']), res.body);
    await unchanged(t, a, before, 'many problems');
  });

  t.test('the other org may reuse a code', async (t) => {
    const res = await createProject(a, other.token, { code: 'taken', name: 'fine' });
    t.equal(res.statusCode, 201, res.body);
  });

  t.test('manager matched case-insensitively', async (t) => {
    const proj = await mustCreate(t, a, p.token, { code: 'mgr-ci', name: 'x', manager_member_id: 'Boss@X.Example' });
    t.equal(proj.manager_member_id, 'boss@x.example');
    const c = await mustCreate(t, a, p.token, { code: 'cust-ok', name: 'x', customer_id: company });
    t.equal(c.customer_id, company);
  });
});

t.test('getProject / updateProject / archiveProject / restoreProject: not found and bad ids', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  const other = await a.principal('member,manager');
  const mine = await mustCreate(t, a, p.token, { code: 'MINE', name: 'Mine' });
  const theirs = await mustCreate(t, a, other.token, { code: 'THEIRS', name: 'Theirs' });
  const ops: { name: string; call: (id: string) => Promise<Res> }[] = [
    { name: 'getProject', call: (id) => getProject(a, p.token, id) },
    { name: 'updateProject', call: (id) => patchProject(a, p.token, id, '"1"', { name: 'hacked' }) },
    { name: 'archiveProject', call: (id) => archiveProject(a, p.token, id) },
    { name: 'restoreProject', call: (id) => restoreProject(a, p.token, id) },
  ];
  for (const op of ops) {
    t.test(op.name, async (t) => {
      for (const [label, id, status, code] of [
        ['other org', theirs.id, 404, 'PROJECT_NOT_FOUND'],
        ['unknown', 'prj_doesnotexist1', 404, 'PROJECT_NOT_FOUND'],
        ['malformed (wrong prefix)', 'tsk_abc', 400, 'INVALID_REQUEST'],
        ['malformed (bad characters)', 'prj_a-b', 400, 'INVALID_REQUEST'],
        ['malformed (no prefix)', mine.id.slice(4), 400, 'INVALID_REQUEST'],
      ] as const) {
        const before = await snapshot(a);
        const res = await op.call(id);
        assertProblem(t, res, status, code);
        t.comment(label);
        await unchanged(t, a, before, `${op.name} ${label}`);
      }
    });
  }
  const still = await getProject(a, other.token, theirs.id);
  t.same(still.json, theirs, 'the other org\'s project is untouched');
});

t.test('Role rules: who may call which project operation', async (t) => {
  const a = await startApp(t);
  const org = await a.createOrg();
  const mgr = await a.principal('manager', { org });
  const read = await mustCreate(t, a, mgr.token, { code: 'READ', name: 'Readable' });
  // status per operation for a client holding the Role set
  const table: { roles: string; write: number; read: number }[] = [
    { roles: 'member', write: 403, read: 200 },
    { roles: 'finance', write: 403, read: 200 },
    { roles: 'hr', write: 403, read: 200 },
    { roles: 'member,finance,hr', write: 403, read: 200 },
    { roles: 'manager', write: 0, read: 200 },
    { roles: 'member,manager', write: 0, read: 200 },
  ];
  let n = 0;
  for (const row of table) {
    t.test(row.roles, async (t) => {
      const c = await a.createClient(org, { roles: row.roles });
      const token = await a.token(c);
      const target = await mustCreate(t, a, mgr.token, { code: `T${++n}`, name: `target ${n}` });
      const ops: { op: string; call: () => Promise<Res>; ok: number }[] = [
        { op: 'createProject', call: () => createProject(a, token, { code: `NEW${n}`, name: 'new' }), ok: 201 },
        { op: 'updateProject', call: () => patchProject(a, token, target.id, '"1"', { name: 'renamed' }), ok: 200 },
        { op: 'archiveProject', call: () => archiveProject(a, token, target.id), ok: 200 },
        { op: 'restoreProject', call: () => restoreProject(a, token, target.id), ok: 200 },
        { op: 'listProjects', call: () => a.request({ url: '/v1/projects', token }), ok: 200 },
        { op: 'getProject', call: () => getProject(a, token, read.id), ok: 200 },
      ];
      for (const o of ops) {
        const expected = ['listProjects', 'getProject'].includes(o.op) ? row.read : row.write || o.ok;
        const before = await snapshot(a);
        const res = await o.call();
        if (expected === 403) {
          assertProblem(t, res, 403, 'ROLE_REQUIRED');
          await unchanged(t, a, before, `${row.roles} ${o.op}`);
        } else {
          t.equal(res.statusCode, expected, `${row.roles} ${o.op}: ${res.body}`);
        }
      }
    });
  }
});

t.test('Role projections: exact key sets in getProject and listProjects', async (t) => {
  const a = await startApp(t);
  const org = await a.createOrg();
  const mgr = await a.principal('manager', { org });
  await a.addMember(org, 'boss@x.example', { roles: 'manager' });
  const { customer_id } = await a.cli('customer', 'create', '--org', org, '--kind', 'company', '--name', 'ACME');
  const proj = await mustCreate(t, a, mgr.token, { code: 'P', name: 'Projected', description: 'secret', customer_id,
    manager_member_id: 'boss@x.example', start_date: '2026-01-01' });
  const table: { roles: string; keys: string[] }[] = [
    { roles: 'member', keys: FULL },
    { roles: 'manager', keys: FULL },
    { roles: 'finance', keys: FINANCE },
    { roles: 'hr', keys: HR },
    { roles: 'finance,hr', keys: FINANCE_HR },
    { roles: 'member,finance', keys: FULL },
    { roles: 'manager,hr', keys: FULL },
  ];
  for (const row of table) {
    const c = await a.createClient(org, { roles: row.roles });
    const token = await a.token(c);
    const one = await getProject(a, token, proj.id);
    t.equal(one.statusCode, 200, `${row.roles}: ${one.body}`);
    t.same(sorted(Object.keys(one.json)), sorted(row.keys), `${row.roles}: getProject keys`);
    for (const k of row.keys) t.same(one.json[k], proj[k], `${row.roles}: ${k} value`);
    const list = await a.request({ url: '/v1/projects', token });
    t.equal(list.statusCode, 200, list.body);
    const item = list.json.data.find((x: any) => x.id === proj.id);
    t.same(sorted(Object.keys(item ?? {})), sorted(row.keys), `${row.roles}: list item keys`);
    t.same(item, one.json, `${row.roles}: list item equals getProject`);
  }
});

t.test('updateProject: PATCH semantics, ETags, If-Match and errors', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  await a.addMember(p.orgId, 'boss@x.example', { roles: 'manager' });
  await a.addMember(p.orgId, 'boss2@x.example', { roles: 'member,manager' });
  await a.addMember(p.orgId, 'worker@x.example', { roles: 'member' });
  const { customer_id } = await a.cli('customer', 'create', '--org', p.orgId, '--kind', 'company', '--name', 'ACME');
  const { customer_id: deleted } = await a.cli('customer', 'create', '--org', p.orgId, '--kind', 'company', '--name', 'Old');
  await a.cli('customer', 'delete', '--org', p.orgId, '--customer', deleted);
  await mustCreate(t, a, p.token, { code: 'OTHER', name: 'Other' });
  const v1 = await mustCreate(t, a, p.token, { code: 'P1', name: 'Original', description: 'desc', start_date: '2026-01-01',
    end_date: '2026-12-31', customer_id, manager_member_id: 'boss@x.example' });

  // Only supplied keys change.
  const r2 = await patchProject(a, p.token, v1.id, '"1"', { name: 'Renamed' });
  t.equal(r2.statusCode, 200, r2.body);
  t.equal(r2.headers.etag, '"2"', 'ETag incremented to "2"');
  const { name: _n, updated_at: _u, ...restV1 } = v1;
  const { name: n2, updated_at: u2, ...rest2 } = r2.json;
  t.equal(n2, 'Renamed');
  t.same(rest2, restV1, 'every other field unchanged');
  t.ok(Date.parse(u2) >= Date.parse(v1.updated_at), 'updated_at moved forward');
  const g2 = await getProject(a, p.token, v1.id);
  t.same(g2.json, r2.json, 'GET shows the PATCH result');
  t.equal(g2.headers.etag, '"2"');

  // Several keys at once, case-insensitive manager.
  const r3 = await patchProject(a, p.token, v1.id, '"2"', { code: 'p1-new', manager_member_id: 'BOSS2@x.example', end_date: '2027-01-31' });
  t.equal(r3.statusCode, 200, r3.body);
  t.equal(r3.headers.etag, '"3"');
  t.match(r3.json, { code: 'p1-new', manager_member_id: 'boss2@x.example', end_date: '2027-01-31', start_date: '2026-01-01',
    description: 'desc', customer_id, name: 'Renamed' });

  // null clears description, dates, customer and manager.
  const r4 = await patchProject(a, p.token, v1.id, '"3"',
    { description: null, start_date: null, end_date: null, customer_id: null, manager_member_id: null });
  t.equal(r4.statusCode, 200, r4.body);
  t.equal(r4.headers.etag, '"4"');
  t.match(r4.json, { description: null, start_date: null, end_date: null, customer_id: null, manager_member_id: null,
    code: 'p1-new', name: 'Renamed', status: 'active', currency: 'EUR' });
  const [row4] = await a.admin`select description, start_date, end_date, customer_id, manager_member_id, version
    from app.projects where id = ${v1.id}`;
  t.same({ ...row4 }, { description: null, start_date: null, end_date: null, customer_id: null, manager_member_id: null, version: 4 },
    'cleared in the table');

  // If-Match listing several tags: any current one matches.
  const r5 = await patchProject(a, p.token, v1.id, '"1", "4"', { start_date: '2026-02-01', description: 'back' });
  t.equal(r5.statusCode, 200, r5.body);
  t.equal(r5.headers.etag, '"5"');

  const errorCases: { name: string; ifMatch: string | undefined; body: unknown; status: number; code: string;
    pointers?: string[]; check?: (t: Test, res: Res) => void }[] = [
    { name: 'missing If-Match', ifMatch: undefined, body: { name: 'x' }, status: 428, code: 'PRECONDITION_REQUIRED' },
    { name: 'stale If-Match', ifMatch: '"1"', body: { name: 'stale' }, status: 412, code: 'STALE_RESOURCE',
      check: (t, res) => {
        t.equal(res.headers.etag, '"5"', 'current ETag in the header');
        t.equal(res.json.current_etag, '"5"', 'current_etag member');
      } },
    { name: 'weak If-Match', ifMatch: 'W/"5"', body: { name: 'weak' }, status: 412, code: 'STALE_RESOURCE' },
    { name: 'code conflict', ifMatch: '"5"', body: { code: 'other' }, status: 409, code: 'PROJECT_CODE_CONFLICT' },
    { name: 'end before start', ifMatch: '"5"', body: { end_date: '2026-01-31' }, status: 422, code: 'VALIDATION_FAILED',
      pointers: ['/end_date'] },
    { name: 'start after end (both sent)', ifMatch: '"5"', body: { start_date: '2026-05-02', end_date: '2026-05-01' },
      status: 422, code: 'VALIDATION_FAILED', pointers: ['/end_date'] },
    { name: 'bad date', ifMatch: '"5"', body: { start_date: '2026-02-30' }, status: 422, code: 'VALIDATION_FAILED',
      pointers: ['/start_date'] },
    { name: 'deleted customer', ifMatch: '"5"', body: { customer_id: deleted }, status: 422, code: 'VALIDATION_FAILED',
      pointers: ['/customer_id'] },
    { name: 'billing customer', ifMatch: '"5"', body: { customer_id: 'cus_abc' }, status: 422, code: 'VALIDATION_FAILED',
      pointers: ['/customer_id'] },
    { name: 'manager without Role', ifMatch: '"5"', body: { manager_member_id: 'worker@x.example' }, status: 422,
      code: 'INVALID_MANAGER', pointers: ['/manager_member_id'] },
    { name: 'manager unknown', ifMatch: '"5"', body: { manager_member_id: 'nobody@x.example' }, status: 422,
      code: 'INVALID_MANAGER', pointers: ['/manager_member_id'] },
    { name: 'name null', ifMatch: '"5"', body: { name: null }, status: 422, code: 'VALIDATION_FAILED', pointers: ['/name'] },
    { name: 'code null', ifMatch: '"5"', body: { code: null }, status: 422, code: 'VALIDATION_FAILED', pointers: ['/code'] },
    { name: 'status (immutable)', ifMatch: '"5"', body: { status: 'archived' }, status: 422, code: 'IMMUTABLE_FIELD',
      pointers: ['/status'] },
    { name: 'every immutable key', ifMatch: '"5"',
      body: { id: v1.id, object: 'project', organization_id: p.orgId, status: 'active', currency: 'USD',
        created_at: v1.created_at, updated_at: v1.updated_at, version: 5, name: 'with immutables' },
      status: 422, code: 'IMMUTABLE_FIELD',
      pointers: ['/id', '/object', '/organization_id', '/status', '/currency', '/created_at', '/updated_at', '/version'] },
  ];
  for (const c of errorCases) {
    t.test(c.name, async (t) => {
      const before = await snapshot(a);
      const res = await patchProject(a, p.token, v1.id, c.ifMatch, c.body);
      assertProblem(t, res, c.status, c.code);
      if (c.pointers) {
        t.same(sorted(pointers(res)), sorted(c.pointers), `errors[] pointers: ${res.body}`);
        if (c.code === 'IMMUTABLE_FIELD') {
          t.ok((res.json.errors as any[]).every((e) => e.code === 'IMMUTABLE_FIELD'), 'one IMMUTABLE_FIELD entry per key');
        }
      }
      c.check?.(t, res);
      await unchanged(t, a, before, c.name);
      const g = await getProject(a, p.token, v1.id);
      t.equal(g.headers.etag, '"5"', 'ETag still "5"');
    });
  }
});

t.test('archiveProject and restoreProject', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  await a.addMember(p.orgId, 'boss@x.example', { roles: 'member,manager' });

  t.test('blocked by an open task in each open status; allowed once the task is done, cancelled or archived', async (t) => {
    for (const [how, finish] of [
      ['complete', async (id: string) => { await transition(a, p.token, id, 'complete'); }],
      ['cancel', async (id: string) => { await transition(a, p.token, id, 'cancel'); }],
      ['archive task', async (id: string) => {
        const r = await a.request({ method: 'POST', url: `/v1/tasks/${id}/archive`, token: p.token, headers: { 'idempotency-key': newKey() } });
        if (r.statusCode !== 200) throw new Error(`archiveTask ${r.statusCode} ${r.body}`);
      }],
    ] as const) {
      const proj = await mustCreate(t, a, p.token, { code: `A-${keySeq}`, name: `archive via ${how}` });
      const task = await createTask(a, p.token, proj.id);
      t.equal(task.status, 'todo');
      for (const step of [null, 'start', 'block']) {
        if (step) t.equal((await transition(a, p.token, task.id, step)).status, step === 'start' ? 'in_progress' : 'blocked');
        const before = await snapshot(a);
        const key = newKey();
        const res = await archiveProject(a, p.token, proj.id, key);
        assertProblem(t, res, 409, 'PROJECT_ARCHIVE_BLOCKED');
        await unchanged(t, a, before, `archive blocked (${step ?? 'todo'})`);
        const g = await getProject(a, p.token, proj.id);
        t.equal(g.json.status, 'active');
        t.equal(g.headers.etag, '"1"');
      }
      if (how !== 'archive task') await transition(a, p.token, task.id, 'unblock'); // back to in_progress
      await finish(task.id);
      const res = await archiveProject(a, p.token, proj.id);
      t.equal(res.statusCode, 200, `archive after ${how}: ${res.body}`);
      t.equal(res.json.status, 'archived');
      t.equal(res.headers.etag, '"2"');
    }
  });

  t.test('archive is idempotent; a second archive is a no-op; restore brings it back', async (t) => {
    const proj = await mustCreate(t, a, p.token, { code: 'IDEM', name: 'Idem', manager_member_id: 'boss@x.example' });
    const key = newKey();
    const first = await archiveProject(a, p.token, proj.id, key);
    t.equal(first.statusCode, 200, first.body);
    t.equal(first.json.status, 'archived');
    t.equal(first.headers.etag, '"2"');
    const replay = await archiveProject(a, p.token, proj.id, key);
    t.equal(replay.statusCode, 200);
    t.equal(replay.headers['idempotent-replayed'], 'true');
    t.same(replay.json, first.json);
    const before = await snapshot(a);
    const again = await archiveProject(a, p.token, proj.id);
    t.equal(again.statusCode, 200, `archiving an archived project: ${again.body}`);
    t.notOk(again.headers['idempotent-replayed'], 'not a replay');
    t.same(again.json, first.json, 'same document (no change)');
    t.equal(again.headers.etag, '"2"', 'version unchanged');
    await unchanged(t, a, before, 'archive no-op');

    const [row] = await a.admin`select archived_at from app.projects where id = ${proj.id}`;
    t.ok(row!.archived_at, 'archived_at set');
    const restored = await restoreProject(a, p.token, proj.id);
    t.equal(restored.statusCode, 200, restored.body);
    t.equal(restored.json.status, 'active');
    t.equal(restored.json.manager_member_id, 'boss@x.example');
    t.equal(restored.headers.etag, '"3"');
    const [row2] = await a.admin`select archived_at, status from app.projects where id = ${proj.id}`;
    t.same({ ...row2 }, { archived_at: null, status: 'active' });
    const noKey = await a.request({ method: 'POST', url: `/v1/projects/${proj.id}/archive`, token: p.token });
    assertProblem(t, noKey, 400, 'IDEMPOTENCY_KEY_REQUIRED');
  });

  t.test('restore blocked after the customer was deleted', async (t) => {
    const { customer_id } = await a.cli('customer', 'create', '--org', p.orgId, '--kind', 'company', '--name', 'Doomed');
    const proj = await mustCreate(t, a, p.token, { code: 'CUST', name: 'Cust', customer_id });
    t.equal((await archiveProject(a, p.token, proj.id)).statusCode, 200);
    await a.cli('customer', 'delete', '--org', p.orgId, '--customer', customer_id);
    const before = await snapshot(a);
    const res = await restoreProject(a, p.token, proj.id);
    assertProblem(t, res, 422, 'VALIDATION_FAILED');
    t.ok(pointers(res).includes('/customer_id'), res.body);
    await unchanged(t, a, before, 'restore with deleted customer');
    t.equal((await getProject(a, p.token, proj.id)).json.status, 'archived');
  });

  t.test('restore blocked after the manager became inactive', async (t) => {
    await a.addMember(p.orgId, 'leaving@x.example', { roles: 'manager' });
    const proj = await mustCreate(t, a, p.token, { code: 'MGR', name: 'Mgr', manager_member_id: 'leaving@x.example' });
    t.equal((await archiveProject(a, p.token, proj.id)).statusCode, 200);
    await a.cli('member', 'set-status', '--org', p.orgId, '--email', 'leaving@x.example', '--status', 'inactive');
    const before = await snapshot(a);
    const res = await restoreProject(a, p.token, proj.id);
    assertProblem(t, res, 422, 'INVALID_MANAGER');
    t.ok(pointers(res).includes('/manager_member_id'), res.body);
    await unchanged(t, a, before, 'restore with inactive manager');
    await a.cli('member', 'set-status', '--org', p.orgId, '--email', 'leaving@x.example', '--status', 'active');
    t.equal((await restoreProject(a, p.token, proj.id)).statusCode, 200, 'restore once the manager is active again');
  });

  t.test('restore blocked after the manager lost the manager Role', async (t) => {
    await a.addMember(p.orgId, 'demoted@x.example', { roles: 'member,manager' });
    const proj = await mustCreate(t, a, p.token, { code: 'DEM', name: 'Dem', manager_member_id: 'demoted@x.example' });
    t.equal((await archiveProject(a, p.token, proj.id)).statusCode, 200);
    await a.admin`update app.members set svc_roles = '{member}' where organization_id = ${p.orgId} and id = 'demoted@x.example'`;
    const before = await snapshot(a);
    const res = await restoreProject(a, p.token, proj.id);
    assertProblem(t, res, 422, 'INVALID_MANAGER');
    await unchanged(t, a, before, 'restore with demoted manager');
  });

  t.test('archived projects reject new tasks', async (t) => {
    const proj = await mustCreate(t, a, p.token, { code: 'NOTASK', name: 'x' });
    t.equal((await archiveProject(a, p.token, proj.id)).statusCode, 200);
    const res = await a.request({ method: 'POST', url: '/v1/tasks', token: p.token, headers: { 'idempotency-key': newKey() },
      payload: { project_id: proj.id, name: 'late' } });
    assertProblem(t, res, 404, 'PROJECT_NOT_FOUND');
  });
});

t.test('listProjects: filters, search, archived, bad parameters', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  const other = await a.principal('member,manager');
  await a.addMember(p.orgId, 'boss@x.example', { roles: 'manager' });
  await a.addMember(p.orgId, 'boss2@x.example', { roles: 'manager' });
  await a.addMember(other.orgId, 'boss@x.example', { roles: 'manager' });
  const { customer_id: c1 } = await a.cli('customer', 'create', '--org', p.orgId, '--kind', 'company', '--name', 'C1');
  const { customer_id: c2 } = await a.cli('customer', 'create', '--org', p.orgId, '--kind', 'company', '--name', 'C2');
  const { customer_id: oc } = await a.cli('customer', 'create', '--org', other.orgId, '--kind', 'company', '--name', 'OC');
  const mk = (code: string, name: string, extra: Record<string, unknown> = {}) => mustCreate(t, a, p.token, { code, name, ...extra });
  const alpha = await mk('ALPHA', 'Alpha Launch', { customer_id: c1, manager_member_id: 'boss@x.example', start_date: '2026-01-10', end_date: '2026-03-01' });
  const beta = await mk('BETA-2', 'beta rollout', { customer_id: c2, manager_member_id: 'boss2@x.example', start_date: '2026-02-01', end_date: '2026-06-30' });
  const gamma = await mk('G_3', '100% Gamma', { customer_id: c1, start_date: '2025-12-31' });
  const delta = await mk('DELTA', 'Delta', { manager_member_id: 'boss@x.example', end_date: '2026-02-15' });
  const archived = await mk('ARCH', 'Alpha archived', { customer_id: c1, manager_member_id: 'boss@x.example', start_date: '2026-01-10' });
  t.equal((await archiveProject(a, p.token, archived.id)).statusCode, 200);
  // The other org: same names, same manager email, matching dates; never listed.
  for (const [code, name] of [['ALPHA', 'Alpha Launch'], ['X', 'beta rollout'], ['Y', '100% Gamma']]) {
    t.equal((await createProject(a, other.token, { code, name, customer_id: oc, manager_member_id: 'boss@x.example',
      start_date: '2026-01-10', end_date: '2026-03-01' })).statusCode, 201);
  }

  const ids = async (query: string) => {
    const res = await a.request({ url: `/v1/projects${query}`, token: p.token });
    t.equal(res.statusCode, 200, `${query}: ${res.body}`);
    return ((res.json?.data ?? []) as any[]).map((x) => x.id).sort();
  };
  const set = (...ps: any[]) => ps.map((x) => x.id).sort();
  const cases: [string, string, any[]][] = [
    ['default: active only', '', [alpha, beta, gamma, delta]],
    ['status=active', '?status=active', [alpha, beta, gamma, delta]],
    ['status=archived', '?status=archived', [archived]],
    ['customer_id', `?customer_id=${c1}`, [alpha, gamma]],
    ['customer_id + archived', `?customer_id=${c1}&status=archived`, [archived]],
    ['customer_id of another org', `?customer_id=${oc}`, []],
    ['manager_member_id', '?manager_member_id=boss%40x.example', [alpha, delta]],
    ['manager_member_id (other case)', '?manager_member_id=BOSS%40X.example', [alpha, delta]],
    ['start_date_gte', '?start_date_gte=2026-01-10', [alpha, beta]],
    ['start_date_gte (exclusive of nulls)', '?start_date_gte=2000-01-01', [alpha, beta, gamma]],
    ['end_date_lte', '?end_date_lte=2026-03-01', [alpha, delta]],
    ['end_date_lte early', '?end_date_lte=2026-02-14', []],
    ['date range', '?start_date_gte=2026-01-01&end_date_lte=2026-12-31', [alpha, beta]],
    ['search name substring, case-insensitive', '?search=ALPHA', [alpha]],
    ['search code substring', '?search=eta-', [beta]],
    ['search matches name or code', '?search=lt', [delta]],
    ['search % is literal', '?search=%25', [gamma]],
    ['search _ is literal', '?search=_', [gamma]],
    ['search archived', '?search=alpha&status=archived', [archived]],
    ['search no match', '?search=zzz', []],
    ['filters combined', `?customer_id=${c1}&manager_member_id=boss%40x.example&search=launch`, [alpha]],
  ];
  for (const [name, q, expected] of cases) {
    t.same(await ids(q), set(...expected), name);
  }

  const page = await a.request({ url: '/v1/projects?limit=2', token: p.token });
  t.equal(page.json.object, 'list');
  t.equal(page.json.data.length, 2);
  t.equal(page.json.has_more, true);
  t.type(page.json.next_cursor, 'string');
  const all = await a.request({ url: '/v1/projects', token: p.token });
  t.same(all.json.data.map((x: any) => x.id), [delta, gamma, beta, alpha].map((x) => x.id), 'default sort created_at desc');
  t.equal(all.json.has_more, false);
  t.equal(all.json.next_cursor, null);

  const bad = ['?sort=priority', '?sort=', '?order=up', '?status=deleted', '?status=all', '?customer_id=cus_abc',
    '?customer_id=xyz', '?manager_member_id=not-an-email', '?start_date_gte=2026-13-01', '?end_date_lte=yesterday',
    '?limit=0', '?limit=201', '?limit=abc', '?search=', '?unknown=1', '?after=garbage'];
  for (const q of bad) {
    const res = await a.request({ url: `/v1/projects${q}`, token: p.token });
    assertProblem(t, res, 400, q === '?after=garbage' ? 'INVALID_CURSOR' : 'INVALID_REQUEST');
  }
});

t.test('listProjects: keyset pagination for every sort and order', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  const other = await a.principal('member,manager');
  const seed = (org: string, from: number, to: number, status: string) => a.admin`
    insert into app.projects (organization_id, code, name, currency, start_date, end_date, created_at, updated_at, status, archived_at)
    select ${org},
           case when g % 2 = 0 then 'a-' else 'B-' end || lpad(g::text, 3, '0'),
           (array['Alpha', 'alpha', 'Beta', 'Gamma', 'beta', 'Delta', 'Älpha', 'omega'])[g % 8 + 1],
           'EUR',
           case when g % 5 = 0 then null else date '2026-01-01' + (g % 7) end,
           case when g % 4 = 0 then null else date '2026-06-01' + (g % 9) end,
           timestamptz '2026-01-01 00:00:00.123456+00' + (g % 10) * interval '1 hour' + (g % 3) * interval '1 microsecond',
           timestamptz '2026-02-01 00:00:00+00' + (g % 6) * interval '1 minute' + (g % 4) * interval '1 microsecond',
           ${status},
           case when ${status} = 'archived' then now() end
      from generate_series(${from}::int, ${to}::int) g`;
  await seed(p.orgId, 1, 60, 'active');
  await seed(p.orgId, 61, 66, 'archived');
  await seed(other.orgId, 1, 30, 'active');
  const foreign = new Set((await a.admin`select id from app.projects where organization_id = ${other.orgId}`).map((r) => r.id));

  const EXPR: Record<string, string> = {
    created_at: 'created_at',
    updated_at: 'updated_at',
    name: 'lower(name)',
    code: 'lower(code)',
    start_date: "coalesce(start_date, 'infinity'::date)",
    end_date: "coalesce(end_date, 'infinity'::date)",
  };
  for (const sort of Object.keys(EXPR)) {
    for (const order of ['asc', 'desc']) {
      t.test(`sort=${sort} order=${order}`, async (t) => {
        const expected = (await a.admin.unsafe(
          `select id from app.projects where organization_id = $1 and status = 'active'
            order by ${EXPR[sort]} ${order}, id ${order}`, [p.orgId])).map((r: any) => r.id);
        t.equal(expected.length, 60);
        const { ids, sizes, last } = await walk(a, p.token, `/v1/projects?sort=${sort}&order=${order}&limit=7`);
        t.equal(ids.length, 60, 'every project once');
        t.equal(new Set(ids).size, ids.length, 'no duplicates');
        t.equal(new Set(ids).size, 60, 'no project skipped');
        t.same(ids, expected, 'the database order');
        t.same(sizes, [7, 7, 7, 7, 7, 7, 7, 7, 4], 'pages of 7');
        t.equal(last.has_more, false);
        t.equal(last.next_cursor, null);
        t.notOk(ids.some((id) => foreign.has(id)), 'no other org\'s project');
      });
    }
  }

  // The same date sorts over rows that all have the date (no 'infinity' sort key in any cursor).
  for (const [sort, filter] of [['start_date', 'start_date_gte=2000-01-01'], ['end_date', 'end_date_lte=2100-01-01']] as const) {
    for (const order of ['asc', 'desc']) {
      t.test(`sort=${sort} order=${order} over dated rows only`, async (t) => {
        const col = sort;
        const expected = (await a.admin.unsafe(
          `select id from app.projects where organization_id = $1 and status = 'active' and ${col} is not null
            order by ${EXPR[sort]} ${order}, id ${order}`, [p.orgId])).map((r: any) => r.id);
        const { ids } = await walk(a, p.token, `/v1/projects?sort=${sort}&order=${order}&limit=7&${filter}`);
        t.same(ids, expected, 'the database order');
      });
    }
  }

  t.test('default sort is created_at desc', async (t) => {
    const expected = (await a.admin`select id from app.projects where organization_id = ${p.orgId} and status = 'active'
      order by created_at desc, id desc`).map((r) => r.id);
    t.same((await walk(a, p.token, '/v1/projects?limit=7')).ids, expected);
  });

  t.test('null dates sort as +infinity', async (t) => {
    const res = await a.request({ url: '/v1/projects?sort=start_date&order=asc&limit=200', token: p.token });
    const dates = res.json.data.map((x: any) => x.start_date);
    const firstNull = dates.indexOf(null);
    t.ok(firstNull > 0, 'some dated first');
    t.ok(dates.slice(firstNull).every((d: any) => d === null), 'nulls last ascending');
    const desc = await a.request({ url: '/v1/projects?sort=end_date&order=desc&limit=200', token: p.token });
    const ends = desc.json.data.map((x: any) => x.end_date);
    const firstDated = ends.findIndex((d: any) => d !== null);
    t.ok(firstDated > 0 && ends.slice(0, firstDated).every((d: any) => d === null), 'nulls first descending');
  });

  t.test('archived pagination', async (t) => {
    const { ids } = await walk(a, p.token, '/v1/projects?status=archived&sort=name&order=asc&limit=4');
    const expected = (await a.admin`select id from app.projects where organization_id = ${p.orgId} and status = 'archived'
      order by lower(name), id`).map((r) => r.id);
    t.same(ids, expected);
  });

  t.test('a cursor is bound to its sort, order and filters', async (t) => {
    const first = await a.request({ url: '/v1/projects?sort=name&order=asc&limit=7', token: p.token });
    const cursor = encodeURIComponent(first.json.next_cursor);
    for (const q of ['sort=name&order=desc', 'sort=code&order=asc', 'sort=created_at&order=asc', 'order=asc',
      'sort=name&order=asc&search=alpha', 'sort=name&order=asc&status=archived']) {
      const res = await a.request({ url: `/v1/projects?${q}&limit=7&after=${cursor}`, token: p.token });
      assertProblem(t, res, 400, 'INVALID_CURSOR');
    }
    const sameWithOtherLimit = await a.request({ url: `/v1/projects?sort=name&order=asc&limit=3&after=${cursor}`, token: p.token });
    t.equal(sameWithOtherLimit.statusCode, 200, 'the limit may change between pages');
    const c = first.json.next_cursor as string;
    const tampered = c.slice(0, -2) + (c.endsWith('AA') ? 'BB' : 'AA');
    assertProblem(t, await a.request({ url: `/v1/projects?sort=name&order=asc&after=${encodeURIComponent(tampered)}`, token: p.token }),
      400, 'INVALID_CURSOR');
    // Another org's client cannot use the cursor to see anything of this org.
    const theirs = await a.request({ url: `/v1/projects?sort=name&order=asc&limit=7&after=${cursor}`, token: other.token });
    if (theirs.statusCode === 200) {
      t.notOk(theirs.json.data.some((x: any) => !foreign.has(x.id)), 'only their own projects');
    } else {
      assertProblem(t, theirs, 400, 'INVALID_CURSOR');
    }
  });
});
