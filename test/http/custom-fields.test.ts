// Custom fields over HTTP: the object-schema endpoints (versions, visibility per Role, ETag),
// custom_fields on project and task records (only readable fields), and every custom-field
// error on createProject / updateProject / createTask / updateTask, with atomicity, PATCH
// semantics and the Svc-Schema-Version header.
import t from 'tap';
import type { Test } from 'tap';
import { startApp, assertProblem, type TestApp } from '../helpers/app.ts';

type Res = Awaited<ReturnType<TestApp['request']>>;
type Principal = Awaited<ReturnType<TestApp['principal']>>;

let keys = 0;
const idem = () => ({ 'idempotency-key': `cf-${process.pid}-${++keys}` });
let codes = 0;
const nextCode = () => `CF-${++codes}`;

const OBJECTS = ['project', 'task'] as const;
type ObjectType = typeof OBJECTS[number];

/** Runs the thunks with at most `n` in flight (each svc-admin call opens its own connection). */
async function pool(n: number, jobs: (() => Promise<unknown>)[]) {
  const queue = [...jobs];
  await Promise.all(Array.from({ length: n }, async () => {
    for (let job = queue.shift(); job; job = queue.shift()) await job();
  }));
}

/** Defines the same field set on an object type: one field per type, plus the Role-restricted ones. */
async function defineFields(a: TestApp, org: string, object: ObjectType) {
  const def = (...args: string[]) => () => a.cli('field', 'define', '--org', org, '--object', object, ...args);
  await pool(4, [
    def('--api-name', 'notes', '--label', 'Notes', '--type', 'text'),
    def('--api-name', 'budget', '--label', 'Budget', '--type', 'number'),
    def('--api-name', 'billable', '--label', 'Billable', '--type', 'boolean'),
    def('--api-name', 'kickoff', '--label', 'Kickoff', '--type', 'date'),
    def('--api-name', 'tier', '--label', 'Tier', '--type', 'select', '--options', 'gold:Gold,silver:Silver'),
    def('--api-name', 'tags', '--label', 'Tags', '--type', 'multi_select', '--options', 'a:A,b:B,c:C'),
    def('--api-name', 'owner', '--label', 'Owner', '--type', 'member'),
    // Readable (and writable) only with hr: hidden from a manager-only client.
    def('--api-name', 'secret', '--label', 'Secret', '--type', 'text', '--readable-roles', 'hr', '--writable-roles', 'hr'),
    // Readable by manager, writable only by finance: CUSTOM_FIELD_FORBIDDEN for a manager-only client.
    def('--api-name', 'fin', '--label', 'Fin', '--type', 'text', '--readable-roles', 'manager,finance', '--writable-roles', 'finance'),
    // Read-only: no writable Role at all (impossible through the CLI, set by SQL as the owner below).
    def('--api-name', 'locked', '--label', 'Locked', '--type', 'text'),
  ]);
  await a.admin`update app.custom_field_definitions set writable_roles = '{}'
                 where organization_id = ${org} and object_type = ${object} and api_name = 'locked'`;
}

interface Fixture {
  a: TestApp;
  org: string;
  mgr: Principal; // manager only
  project: any; // a project to attach tasks to and to update
  task: any;
}

async function fixture(t: Test): Promise<Fixture> {
  const a = await startApp(t);
  const org = await a.createOrg();
  await a.addMember(org, 'alice@x.example', { roles: 'member' });
  await a.addMember(org, 'gone@x.example', { roles: 'member', status: 'inactive' });
  const [mgr] = await Promise.all([a.principal('manager', { org }), ...OBJECTS.map((o) => defineFields(a, org, o))]) as [Principal];
  const p = await a.request({ method: 'POST', url: '/v1/projects', token: mgr.token, headers: idem(), payload: { code: nextCode(), name: 'Base' } });
  if (p.statusCode !== 201) throw new Error(`createProject: ${p.body}`);
  const tk = await a.request({ method: 'POST', url: '/v1/tasks', token: mgr.token, headers: idem(), payload: { project_id: p.json.id, name: 'Base task' } });
  if (tk.statusCode !== 201) throw new Error(`createTask: ${tk.body}`);
  return { a, org, mgr, project: p.json, task: tk.json };
}

/** One fixture shared by the tests that only need the standard field set (its database lives until the file ends). */
let sharedFixture: Promise<Fixture> | undefined;
const shared = () => (sharedFixture ??= fixture(t));

/** The four writes that accept custom_fields, each taking a custom_fields value (and optional extra body/headers). */
interface Target {
  name: string;
  object: ObjectType;
  write: (cf: unknown, opts?: { body?: Record<string, unknown>; headers?: Record<string, string>; token?: string; etag?: string }) => Promise<Res>;
  /** The record the update targets (for atomicity checks); undefined for creates. */
  url?: string;
}

function targets(f: Fixture): Target[] {
  const { a, mgr } = f;
  const patch = (url: string) => async (cf: unknown, opts: { body?: Record<string, unknown>; headers?: Record<string, string>; token?: string; etag?: string } = {}) => {
    const etag = opts.etag ?? (await a.request({ url, token: opts.token ?? mgr.token })).headers.etag;
    return a.request({ method: 'PATCH', url, token: opts.token ?? mgr.token,
      headers: { 'if-match': etag, ...(opts.headers ?? {}) },
      payload: { ...(opts.body ?? {}), ...(cf === undefined ? {} : { custom_fields: cf }) } });
  };
  return [
    { name: 'createProject', object: 'project',
      write: (cf, opts = {}) => a.request({ method: 'POST', url: '/v1/projects', token: opts.token ?? mgr.token,
        headers: { ...idem(), ...(opts.headers ?? {}) },
        payload: { code: nextCode(), name: 'P', ...(opts.body ?? {}), ...(cf === undefined ? {} : { custom_fields: cf }) } }) },
    { name: 'updateProject', object: 'project', url: `/v1/projects/${f.project.id}`, write: patch(`/v1/projects/${f.project.id}`) },
    { name: 'createTask', object: 'task',
      write: (cf, opts = {}) => a.request({ method: 'POST', url: '/v1/tasks', token: opts.token ?? mgr.token,
        headers: { ...idem(), ...(opts.headers ?? {}) },
        payload: { project_id: f.project.id, name: 'T', ...(opts.body ?? {}), ...(cf === undefined ? {} : { custom_fields: cf }) } }) },
    { name: 'updateTask', object: 'task', url: `/v1/tasks/${f.task.id}`, write: patch(`/v1/tasks/${f.task.id}`) },
  ];
}

const pointers = (res: Res) => (res.json?.errors ?? []).map((e: any) => `${e.pointer} ${e.code}`).sort();

// ---------------------------------------------------------------------------------------------
t.test('object schemas: summaries, schema_version, visibility per Role, writable, ETag, 404', async (t) => {
  const a = await startApp(t);
  const org = await a.createOrg();
  const mgr = await a.principal('manager', { org });
  const hr = await a.principal('hr', { org });
  const fin = await a.principal('finance', { org });

  const list0 = await a.request({ url: '/v1/schemas', token: mgr.token });
  t.equal(list0.statusCode, 200, list0.body);
  t.equal(list0.json.object, 'list');
  t.same(list0.json.data, [
    { object: 'object_schema_summary', object_type: 'project', label: 'Project', schema_version: 1, custom_field_count: 0 },
    { object: 'object_schema_summary', object_type: 'task', label: 'Task', schema_version: 1, custom_field_count: 0 },
  ], 'a new organization: both object types at version 1 with no fields');

  // Every define and delete bumps the object type's schema_version, and only that type's.
  const def = (...args: string[]) => a.cli('field', 'define', '--org', org, '--object', 'project', ...args);
  let r = await def('--api-name', 'tier', '--label', 'Tier', '--type', 'select', '--options', 'gold:Gold,silver:Silver');
  t.equal(r.schema_version, 2, 'define tier -> 2');
  r = await def('--api-name', 'secret', '--label', 'Secret', '--type', 'text', '--readable-roles', 'hr', '--writable-roles', 'hr');
  t.equal(r.schema_version, 3, 'define secret (hr only) -> 3');
  r = await def('--api-name', 'budget', '--label', 'Budget', '--type', 'number');
  t.equal(r.schema_version, 4, 'define budget -> 4');
  r = await a.cli('field', 'delete', '--org', org, '--object', 'project', '--api-name', 'budget');
  t.equal(r.schema_version, 5, 'delete budget -> 5');
  r = await def('--api-name', 'tier', '--label', 'Service tier', '--type', 'select', '--options', 'gold:Gold,silver:Silver,bronze:Bronze');
  t.equal(r.schema_version, 6, 'redefining tier -> 6');
  r = await def('--api-name', 'fin', '--label', 'Fin', '--type', 'text', '--readable-roles', 'manager,finance', '--writable-roles', 'finance');
  t.equal(r.schema_version, 7, 'define fin -> 7');
  r = await def('--api-name', 'kickoff', '--label', 'Kickoff', '--type', 'date', '--required', 'true', '--filterable', 'true', '--sortable', 'true');
  t.equal(r.schema_version, 8);
  r = await def('--api-name', 'owner', '--label', 'Owner', '--type', 'member');
  t.equal(r.schema_version, 9);
  r = await def('--api-name', 'notes', '--label', 'Notes', '--type', 'text');
  t.equal(r.schema_version, 10);
  r = await a.cli('field', 'define', '--org', org, '--object', 'task', '--api-name', 'effort', '--label', 'Effort', '--type', 'number');
  t.equal(r.schema_version, 2, 'the task schema has its own version');
  await t.rejects(a.cli('field', 'delete', '--org', org, '--object', 'project', '--api-name', 'budget'), 'deleting an absent field fails');

  // Another organization's schema is untouched.
  const other = await a.principal('manager');
  const otherList = await a.request({ url: '/v1/schemas', token: other.token });
  t.same(otherList.json.data.map((s: any) => [s.object_type, s.schema_version, s.custom_field_count]), [['project', 1, 0], ['task', 1, 0]],
    'other organizations keep their own versions');

  // custom_field_count counts only fields the caller may read.
  // project fields now: tier (all), secret (hr), fin (manager, finance), kickoff (all), owner (all), notes (all)
  const counts = async (p: Principal) => {
    const res = await a.request({ url: '/v1/schemas', token: p.token });
    t.equal(res.statusCode, 200, res.body);
    return Object.fromEntries(res.json.data.map((s: any) => [s.object_type, [s.schema_version, s.custom_field_count]]));
  };
  t.same(await counts(mgr), { project: [10, 5], task: [2, 1] }, 'manager-only: 5 readable project fields (not secret)');
  t.same(await counts(hr), { project: [10, 5], task: [2, 1] }, 'hr-only: 5 readable project fields (secret, not fin)');
  t.same(await counts(fin), { project: [10, 5], task: [2, 1] }, 'finance-only: 5 readable project fields (fin, not secret)');
  const all = await a.principal('member,manager,finance,hr', { org });
  t.same(await counts(all), { project: [10, 6], task: [2, 1] }, 'all Roles: all 6');

  // getObjectSchema: fields readable by the caller, writable per the caller.
  const mgrSchema = await a.request({ url: '/v1/schemas/project', token: mgr.token });
  t.equal(mgrSchema.statusCode, 200, mgrSchema.body);
  t.equal(mgrSchema.headers.etag, '"10"', 'ETag is the schema_version');
  t.equal(mgrSchema.json.object, 'object_schema');
  t.equal(mgrSchema.json.object_type, 'project');
  t.equal(mgrSchema.json.label, 'Project');
  t.equal(mgrSchema.json.schema_version, 10);
  const byName = (res: Res) => Object.fromEntries(res.json.fields.map((f: any) => [f.api_name, f]));
  const mf = byName(mgrSchema);
  t.same(Object.keys(mf).sort(), ['fin', 'kickoff', 'notes', 'owner', 'tier'], 'manager-only: secret (hr) is absent');
  t.strictSame(mf.tier, {
    api_name: 'tier', label: 'Service tier', field_type: 'select', custom_field: true, required: false, readable: true,
    writable: true, filterable: false, sortable: false, groupable: true,
    options: [{ value: 'gold', label: 'Gold' }, { value: 'silver', label: 'Silver' }, { value: 'bronze', label: 'Bronze' }],
    validation: {}, relationship_target: null,
  }, 'select field: every member, redefinition applied');
  t.equal(mf.fin.writable, false, 'fin: readable but not writable for a manager-only client');
  t.equal(mf.fin.readable, true);
  t.match(mf.kickoff, { field_type: 'date', required: true, filterable: true, sortable: true, groupable: false,
    validation: { format: 'date' }, writable: true, options: [] });
  t.match(mf.owner, { field_type: 'member', relationship_target: 'member', groupable: true });
  t.match(mf.notes, { field_type: 'text', validation: { max_length: 10000 }, relationship_target: null, groupable: false });

  const hrSchema = await a.request({ url: '/v1/schemas/project', token: hr.token });
  t.equal(hrSchema.statusCode, 200);
  const hf = byName(hrSchema);
  t.same(Object.keys(hf).sort(), ['kickoff', 'notes', 'owner', 'secret', 'tier'], 'hr: secret present, fin absent');
  t.equal(hf.secret.writable, true, 'secret writable with hr');
  t.equal(hf.tier.writable, false, 'tier (writable by manager) is not writable with hr');

  const finSchema = await a.request({ url: '/v1/schemas/project', token: fin.token });
  const ff = byName(finSchema);
  t.same(Object.keys(ff).sort(), ['fin', 'kickoff', 'notes', 'owner', 'tier']);
  t.equal(ff.fin.writable, true, 'fin writable with finance');

  const taskSchema = await a.request({ url: '/v1/schemas/task', token: mgr.token });
  t.equal(taskSchema.statusCode, 200);
  t.equal(taskSchema.headers.etag, '"2"');
  t.same(taskSchema.json.fields.map((f: any) => f.api_name), ['effort']);

  // A read-only field (writable_roles '{}') shows writable false for every caller; the change bumps the version.
  await a.admin`update app.custom_field_definitions set writable_roles = '{}' where organization_id = ${org} and api_name = 'notes'`;
  const ro = await a.request({ url: '/v1/schemas/project', token: all.token });
  t.equal(ro.headers.etag, '"11"', 'a definition change by SQL also bumps schema_version');
  t.equal(byName(ro).notes.writable, false, 'read-only field: writable false');

  for (const bad of ['invoice', 'nope']) {
    const res = await a.request({ url: `/v1/schemas/${bad}`, token: mgr.token });
    assertProblem(t, res, 404, 'OBJECT_SCHEMA_NOT_FOUND');
  }
  const noToken = await a.request({ url: '/v1/schemas' });
  assertProblem(t, noToken, 401, 'INVALID_TOKEN');
});

// ---------------------------------------------------------------------------------------------
t.test('records show only the custom fields the caller may read (project and task)', async (t) => {
  const a = await startApp(t);
  const org = await a.createOrg();
  // Clients are created one after another: license assignment is not meant to race.
  const writer = await a.principal('manager,hr,finance', { org });
  const mgr = await a.principal('manager', { org });
  const hr = await a.principal('hr', { org });
  const fin = await a.principal('finance', { org });
  await pool(4, OBJECTS.flatMap((o) => {
    const def = (...args: string[]) => () => a.cli('field', 'define', '--org', org, '--object', o, ...args);
    return [
      def('--api-name', 'tier', '--label', 'Tier', '--type', 'select', '--options', 'gold:Gold,silver:Silver'),
      def('--api-name', 'secret', '--label', 'Secret', '--type', 'text', '--readable-roles', 'hr', '--writable-roles', 'hr'),
      def('--api-name', 'fin', '--label', 'Fin', '--type', 'number', '--readable-roles', 'manager,finance', '--writable-roles', 'finance'),
      def('--api-name', 'gone', '--label', 'Gone', '--type', 'text'),
    ];
  }));
  const cf = { tier: 'gold', secret: 's3', fin: 42, gone: 'bye' };
  const p = await a.request({ method: 'POST', url: '/v1/projects', token: writer.token, headers: idem(),
    payload: { code: 'VIS', name: 'Visible', custom_fields: cf } });
  t.equal(p.statusCode, 201, p.body);
  t.same(p.json.custom_fields, cf, 'a client holding every needed Role sees every field');
  const tk = await a.request({ method: 'POST', url: '/v1/tasks', token: writer.token, headers: idem(),
    payload: { project_id: p.json.id, name: 'Visible task', custom_fields: cf } });
  t.equal(tk.statusCode, 201, tk.body);
  t.same(tk.json.custom_fields, cf);

  const expect: [string, Principal, Record<string, unknown>][] = [
    ['manager-only', mgr, { tier: 'gold', fin: 42, gone: 'bye' }],
    ['hr-only', hr, { tier: 'gold', secret: 's3', gone: 'bye' }],
    ['finance-only', fin, { tier: 'gold', fin: 42, gone: 'bye' }],
  ];
  for (const [label, who, want] of expect) {
    const gp = await a.request({ url: `/v1/projects/${p.json.id}`, token: who.token });
    t.equal(gp.statusCode, 200, gp.body);
    t.strictSame(gp.json.custom_fields, want, `${label}: getProject custom_fields`);
    const gt = await a.request({ url: `/v1/tasks/${tk.json.id}`, token: who.token });
    t.equal(gt.statusCode, 200, gt.body);
    t.strictSame(gt.json.custom_fields, want, `${label}: getTask custom_fields`);
    const lp = await a.request({ url: '/v1/projects', token: who.token });
    t.strictSame(lp.json.data.find((x: any) => x.id === p.json.id)?.custom_fields, want, `${label}: listProjects custom_fields`);
    const lt = await a.request({ url: '/v1/tasks', token: who.token });
    t.strictSame(lt.json.data.find((x: any) => x.id === tk.json.id)?.custom_fields, want, `${label}: listTasks custom_fields`);
  }

  // A manager-only client's PATCH keeps the value of a field it cannot see.
  const before = await a.request({ url: `/v1/projects/${p.json.id}`, token: mgr.token });
  const upd = await a.request({ method: 'PATCH', url: `/v1/projects/${p.json.id}`, token: mgr.token,
    headers: { 'if-match': before.headers.etag }, payload: { custom_fields: { tier: 'silver' } } });
  t.equal(upd.statusCode, 200, upd.body);
  t.strictSame(upd.json.custom_fields, { tier: 'silver', fin: 42, gone: 'bye' });
  const hrView = await a.request({ url: `/v1/projects/${p.json.id}`, token: hr.token });
  t.equal(hrView.json.custom_fields.secret, 's3', 'the hidden value survives a PATCH by a client that cannot read it');

  // A deleted definition's stored value is no longer shown.
  await a.cli('field', 'delete', '--org', org, '--object', 'project', '--api-name', 'gone');
  await a.cli('field', 'delete', '--org', org, '--object', 'task', '--api-name', 'gone');
  const gp = await a.request({ url: `/v1/projects/${p.json.id}`, token: writer.token });
  t.strictSame(gp.json.custom_fields, { tier: 'silver', secret: 's3', fin: 42 }, 'deleted field not shown on the project');
  const gt = await a.request({ url: `/v1/tasks/${tk.json.id}`, token: writer.token });
  t.strictSame(gt.json.custom_fields, { tier: 'gold', secret: 's3', fin: 42 }, 'deleted field not shown on the task');
});

// ---------------------------------------------------------------------------------------------
t.test('custom-field errors on every write', async (t) => {
  const f = await shared();
  const { a } = f;
  const cases: [string, Record<string, unknown>, number, string][] = [
    ['unknown field', { nope: 1 }, 422, 'CUSTOM_FIELD_NOT_FOUND'],
    ['hidden field (readable only with hr)', { secret: 'x' }, 422, 'CUSTOM_FIELD_NOT_FOUND'],
    ['read-only field', { locked: 'x' }, 422, 'CUSTOM_FIELD_READ_ONLY'],
    ['field writable only by finance', { fin: 'x' }, 403, 'CUSTOM_FIELD_FORBIDDEN'],
    ['text longer than 10000', { notes: 'x'.repeat(10001) }, 422, 'CUSTOM_FIELD_VALUE_INVALID'],
    ['text as a number', { notes: 5 }, 422, 'CUSTOM_FIELD_VALUE_INVALID'],
    ['number as a string', { budget: '5' }, 422, 'CUSTOM_FIELD_VALUE_INVALID'],
    ['number as a boolean', { budget: true }, 422, 'CUSTOM_FIELD_VALUE_INVALID'],
    ['boolean as a string', { billable: 'true' }, 422, 'CUSTOM_FIELD_VALUE_INVALID'],
    ['boolean as a number', { billable: 1 }, 422, 'CUSTOM_FIELD_VALUE_INVALID'],
    ['date 2026-02-30', { kickoff: '2026-02-30' }, 422, 'CUSTOM_FIELD_VALUE_INVALID'],
    ['date x', { kickoff: 'x' }, 422, 'CUSTOM_FIELD_VALUE_INVALID'],
    ['date with a time', { kickoff: '2026-02-01T00:00:00Z' }, 422, 'CUSTOM_FIELD_VALUE_INVALID'],
    ['select unknown option', { tier: 'bronze' }, 422, 'CUSTOM_FIELD_VALUE_INVALID'],
    ['select label instead of value', { tier: 'Gold' }, 422, 'CUSTOM_FIELD_VALUE_INVALID'],
    ['select as an array', { tier: ['gold'] }, 422, 'CUSTOM_FIELD_VALUE_INVALID'],
    ['multi_select unknown value', { tags: ['a', 'zzz'] }, 422, 'CUSTOM_FIELD_VALUE_INVALID'],
    ['multi_select duplicate values', { tags: ['a', 'a'] }, 422, 'CUSTOM_FIELD_VALUE_INVALID'],
    ['multi_select not an array', { tags: 'a' }, 422, 'CUSTOM_FIELD_VALUE_INVALID'],
    ['member unknown email', { owner: 'ghost@x.example' }, 422, 'CUSTOM_FIELD_VALUE_INVALID'],
    ['member inactive', { owner: 'gone@x.example' }, 422, 'CUSTOM_FIELD_VALUE_INVALID'],
    ['member as a number', { owner: 7 }, 422, 'CUSTOM_FIELD_VALUE_INVALID'],
  ];
  let created = 0; // creates that unexpectedly succeeded
  for (const target of targets(f)) {
    await t.test(target.name, async (t) => {
      const before = target.url ? await a.request({ url: target.url, token: f.mgr.token }) : undefined;
      for (const [label, cf, status, code] of cases) {
        const res = await target.write(cf, { etag: before?.headers.etag });
        assertProblem(t, res, status, code);
        const key = Object.keys(cf)[0]!;
        t.same(res.json?.errors, [{ pointer: `/custom_fields/${key}`, code, detail: res.json?.errors?.[0]?.detail }], `${label}: one error, pointer /custom_fields/${key}`);
        t.type(res.json?.errors?.[0]?.detail, 'string', `${label}: detail`);
      }
      // custom_fields not an object
      for (const bad of [[], ['gold'], 'tier', 5]) {
        const res = await target.write(bad, { etag: before?.headers.etag });
        t.equal(res.statusCode, 422, `custom_fields ${JSON.stringify(bad)} -> 422 ${res.body}`);
        t.ok(['INVALID_CUSTOM_FIELD', 'VALIDATION_FAILED'].includes(res.json?.code), `code ${res.json?.code}`);
        t.ok((res.json?.errors ?? []).some((e: any) => e.pointer === '/custom_fields'), 'pointer /custom_fields');
      }
      // Several problems at once: every one listed; the top-level code is the first error's.
      const many = await target.write({ tier: 'bronze', nope: 1, budget: 'x', locked: 'y', owner: 'ghost@x.example' }, { etag: before?.headers.etag });
      assertProblem(t, many, 422, 'CUSTOM_FIELD_VALUE_INVALID');
      t.same(pointers(many), [
        '/custom_fields/budget CUSTOM_FIELD_VALUE_INVALID',
        '/custom_fields/locked CUSTOM_FIELD_READ_ONLY',
        '/custom_fields/nope CUSTOM_FIELD_NOT_FOUND',
        '/custom_fields/owner CUSTOM_FIELD_VALUE_INVALID',
        '/custom_fields/tier CUSTOM_FIELD_VALUE_INVALID',
      ], 'all five problems listed');
      t.equal(many.json.code, many.json.errors[0].code, 'top-level code = first error code');
      // A forbidden field first: the whole response is 403 CUSTOM_FIELD_FORBIDDEN, the rest still listed.
      const forb = await target.write({ fin: 'x', tier: 'bronze' }, { etag: before?.headers.etag });
      assertProblem(t, forb, 403, 'CUSTOM_FIELD_FORBIDDEN');
      t.same(pointers(forb), ['/custom_fields/fin CUSTOM_FIELD_FORBIDDEN', '/custom_fields/tier CUSTOM_FIELD_VALUE_INVALID']);
      // A pointer escapes / and ~ (RFC 6901).
      const esc = await target.write({ 'a/b~c': 1 }, { etag: before?.headers.etag });
      assertProblem(t, esc, 422, 'CUSTOM_FIELD_NOT_FOUND');
      t.equal(esc.json?.errors?.[0]?.pointer, '/custom_fields/a~1b~0c', 'JSON-pointer escaping');
      if (before) {
        const after = await a.request({ url: target.url!, token: f.mgr.token });
        t.equal(after.headers.etag, before.headers.etag, 'no failed write changed the record (ETag unchanged)');
        t.same(after.json, before.json, 'record unchanged');
      }
      // Unknown and hidden fields sent with null must fail too ("never silently dropped").
      for (const [label, cf] of [['unknown field set to null', { nope: null }], ['hidden field set to null', { secret: null }]] as const) {
        const res = await target.write(cf);
        if (res.statusCode === 201) created++;
        const key = Object.keys(cf)[0];
        t.same([res.statusCode, res.json?.code, res.json?.errors?.[0]?.pointer], [422, 'CUSTOM_FIELD_NOT_FOUND', `/custom_fields/${key}`],
          `${label}: 422 CUSTOM_FIELD_NOT_FOUND (got ${res.statusCode} ${res.body.slice(0, 200)})`);
      }
    });
  }
  // No failed create left a record behind.
  const projects = await a.admin`select count(*)::int as n from app.projects where organization_id = ${f.org}`;
  const tasks = await a.admin`select count(*)::int as n from app.tasks where organization_id = ${f.org}`;
  t.equal(projects[0]!.n + tasks[0]!.n, 2 + created, 'failed creates inserted nothing');
});

// ---------------------------------------------------------------------------------------------
t.test('required custom fields', async (t) => {
  const a = await startApp(t);
  const org = await a.createOrg();
  const mgr = await a.principal('manager', { org });
  const base = await a.request({ method: 'POST', url: '/v1/projects', token: mgr.token, headers: idem(), payload: { code: 'REQ', name: 'Req' } });
  t.equal(base.statusCode, 201, base.body);
  const baseTask = await a.request({ method: 'POST', url: '/v1/tasks', token: mgr.token, headers: idem(), payload: { project_id: base.json.id, name: 'Before' } });
  t.equal(baseTask.statusCode, 201, baseTask.body);
  await pool(4, OBJECTS.flatMap((o) => [
    () => a.cli('field', 'define', '--org', org, '--object', o, '--api-name', 'must', '--label', 'Must', '--type', 'text', '--required', 'true'),
    () => a.cli('field', 'define', '--org', org, '--object', o, '--api-name', 'also', '--label', 'Also', '--type', 'number', '--required', 'true'),
    () => a.cli('field', 'define', '--org', org, '--object', o, '--api-name', 'opt', '--label', 'Opt', '--type', 'text'),
  ]));
  const creates: [string, (cf: unknown) => Promise<Res>, string][] = [
    ['createProject', (cf) => a.request({ method: 'POST', url: '/v1/projects', token: mgr.token, headers: idem(),
      payload: { code: nextCode(), name: 'P', ...(cf === undefined ? {} : { custom_fields: cf }) } }), '/v1/projects'],
    ['createTask', (cf) => a.request({ method: 'POST', url: '/v1/tasks', token: mgr.token, headers: idem(),
      payload: { project_id: base.json.id, name: 'T', ...(cf === undefined ? {} : { custom_fields: cf }) } }), '/v1/tasks'],
  ];
  for (const [name, create, path] of creates) {
    await t.test(name, async (t) => {
      let res = await create(undefined);
      assertProblem(t, res, 422, 'CUSTOM_FIELD_REQUIRED');
      t.same(pointers(res), ['/custom_fields/also CUSTOM_FIELD_REQUIRED', '/custom_fields/must CUSTOM_FIELD_REQUIRED'],
        'custom_fields omitted: both required fields listed');
      res = await create({ must: 'x' });
      assertProblem(t, res, 422, 'CUSTOM_FIELD_REQUIRED');
      t.same(pointers(res), ['/custom_fields/also CUSTOM_FIELD_REQUIRED']);
      res = await create({ must: null, also: 1 });
      assertProblem(t, res, 422, 'CUSTOM_FIELD_REQUIRED');
      t.same(pointers(res), ['/custom_fields/must CUSTOM_FIELD_REQUIRED'], 'null for a required field on create');
      res = await create({ must: 'x', also: 'y' });
      assertProblem(t, res, 422, 'CUSTOM_FIELD_VALUE_INVALID');
      t.same(pointers(res), ['/custom_fields/also CUSTOM_FIELD_VALUE_INVALID']);
      const ok = await create({ must: 'x', also: 1 });
      t.equal(ok.statusCode, 201, ok.body);
      t.strictSame(ok.json.custom_fields, { must: 'x', also: 1 });
      const url = `${path}/${ok.json.id}`;
      const patch = async (payload: unknown) => {
        const cur = await a.request({ url, token: mgr.token });
        return a.request({ method: 'PATCH', url, token: mgr.token, headers: { 'if-match': cur.headers.etag }, payload });
      };
      res = await patch({ custom_fields: { must: null } });
      assertProblem(t, res, 422, 'CUSTOM_FIELD_REQUIRED');
      t.same(pointers(res), ['/custom_fields/must CUSTOM_FIELD_REQUIRED'], 'clearing a required field on update');
      res = await patch({ custom_fields: { must: null, also: null, opt: 'o' } });
      assertProblem(t, res, 422, 'CUSTOM_FIELD_REQUIRED');
      t.same(pointers(res), ['/custom_fields/also CUSTOM_FIELD_REQUIRED', '/custom_fields/must CUSTOM_FIELD_REQUIRED']);
      res = await patch({ custom_fields: { opt: 'o' } });
      t.equal(res.statusCode, 200, `omitted required fields stay: ${res.body}`);
      t.strictSame(res.json.custom_fields, { must: 'x', also: 1, opt: 'o' });
      res = await patch({ name: 'Renamed' });
      t.equal(res.statusCode, 200, res.body);
      t.strictSame(res.json.custom_fields, { must: 'x', also: 1, opt: 'o' });
      res = await patch({ custom_fields: { opt: null } });
      t.equal(res.statusCode, 200, res.body);
      t.strictSame(res.json.custom_fields, { must: 'x', also: 1 }, 'null clears a non-required field');
    });
  }
  // Records created before the field became required can still be updated without supplying it.
  for (const url of [`/v1/projects/${base.json.id}`, `/v1/tasks/${baseTask.json.id}`]) {
    const cur = await a.request({ url, token: mgr.token });
    const res = await a.request({ method: 'PATCH', url, token: mgr.token, headers: { 'if-match': cur.headers.etag }, payload: { name: 'Older' } });
    t.equal(res.statusCode, 200, `${url}: update not touching custom_fields: ${res.body}`);
  }
});

// ---------------------------------------------------------------------------------------------
t.test('atomicity: a failing custom field leaves the record unchanged', async (t) => {
  const f = await shared();
  const { a, mgr } = f;
  for (const target of targets(f).filter((x) => x.url)) {
    const before = await a.request({ url: target.url!, token: mgr.token });
    const res = await target.write({ budget: 'not a number' }, { body: { name: 'Changed name', description: 'changed' } });
    assertProblem(t, res, 422, 'CUSTOM_FIELD_VALUE_INVALID');
    const after = await a.request({ url: target.url!, token: mgr.token });
    t.equal(after.json.name, before.json.name, `${target.name}: name unchanged`);
    t.equal(after.json.description, before.json.description, `${target.name}: description unchanged`);
    t.equal(after.headers.etag, before.headers.etag, `${target.name}: ETag unchanged`);
    // Valid custom fields alongside an invalid one are not half-applied.
    const mixed = await target.write({ tier: 'gold', budget: 'x' });
    assertProblem(t, mixed, 422, 'CUSTOM_FIELD_VALUE_INVALID');
    t.same(pointers(mixed), ['/custom_fields/budget CUSTOM_FIELD_VALUE_INVALID'], 'only the invalid field is reported');
    const again = await a.request({ url: target.url!, token: mgr.token });
    t.strictSame(again.json.custom_fields, before.json.custom_fields, `${target.name}: custom_fields unchanged`);
  }
  // A failing create with an Idempotency-Key stores nothing: the key can be used again with a fixed body.
  const headers = { 'idempotency-key': 'atomic-create' };
  const bad = await a.request({ method: 'POST', url: '/v1/projects', token: mgr.token, headers,
    payload: { code: 'ATOM', name: 'Atom', custom_fields: { budget: 'x' } } });
  assertProblem(t, bad, 422, 'CUSTOM_FIELD_VALUE_INVALID');
  const list = await a.request({ url: '/v1/projects?search=ATOM', token: mgr.token });
  t.equal(list.json.data.length, 0, 'no project was created');
  const good = await a.request({ method: 'POST', url: '/v1/projects', token: mgr.token, headers,
    payload: { code: 'ATOM', name: 'Atom', custom_fields: { budget: 1 } } });
  t.equal(good.statusCode, 201, good.body);
});

// ---------------------------------------------------------------------------------------------
t.test('PATCH semantics: supplied keys change, null clears, omitted keys stay', async (t) => {
  const f = await shared();
  const { a, mgr } = f;
  for (const target of targets(f).filter((x) => x.url)) {
    await t.test(target.name, async (t) => {
      let res = await target.write({ notes: 'first', budget: 1, tier: 'gold', tags: ['a', 'b'] });
      t.equal(res.statusCode, 200, res.body);
      t.strictSame(res.json.custom_fields, { notes: 'first', budget: 1, tier: 'gold', tags: ['a', 'b'] });
      res = await target.write({ budget: 2, notes: null });
      t.equal(res.statusCode, 200, res.body);
      t.strictSame(res.json.custom_fields, { budget: 2, tier: 'gold', tags: ['a', 'b'] }, 'budget changed, notes cleared, the rest unchanged');
      res = await target.write(undefined, { body: { name: 'No custom fields in this patch' } });
      t.equal(res.statusCode, 200, res.body);
      t.strictSame(res.json.custom_fields, { budget: 2, tier: 'gold', tags: ['a', 'b'] }, 'omitting custom_fields changes none');
      res = await target.write({});
      t.equal(res.statusCode, 200, res.body);
      t.strictSame(res.json.custom_fields, { budget: 2, tier: 'gold', tags: ['a', 'b'] }, 'an empty object changes none');
      res = await target.write({ tags: ['c'], tier: null, notes: null });
      t.equal(res.statusCode, 200, res.body);
      t.strictSame(res.json.custom_fields, { budget: 2, tags: ['c'] }, 'an array value is replaced, not merged; clearing an absent field is fine');
      const get = await a.request({ url: target.url!, token: mgr.token });
      t.strictSame(get.json.custom_fields, { budget: 2, tags: ['c'] }, 'GET agrees');
      t.equal(get.headers.etag, res.headers.etag);
      // Sending an unchanged value of a field one could not write is not a write of it.
      await a.admin`update app.custom_field_definitions set writable_roles = '{manager}'
                     where organization_id = ${f.org} and object_type = ${target.object} and api_name = 'locked'`;
      res = await target.write({ locked: 'keep' });
      t.equal(res.statusCode, 200, res.body);
      await a.admin`update app.custom_field_definitions set writable_roles = '{}'
                     where organization_id = ${f.org} and object_type = ${target.object} and api_name = 'locked'`;
      // Every key sent is a write, even with the stored value: a read-only field fails explicitly
      // (otherwise echoing guesses would reveal values the caller cannot read).
      res = await target.write({ locked: 'keep', budget: 3 });
      assertProblem(t, res, 422, 'CUSTOM_FIELD_READ_ONLY');
      res = await target.write({ locked: 'other' });
      assertProblem(t, res, 422, 'CUSTOM_FIELD_READ_ONLY');
      res = await target.write({ locked: null });
      assertProblem(t, res, 422, 'CUSTOM_FIELD_READ_ONLY');
      // Leave the shared record as we found it (the owner is not held to Roles).
      await a.admin.unsafe(`update app.${target.object}s set custom_fields = '{}' where id = $1`, [target.url!.split('/').pop()!]);
    });
  }
});

// ---------------------------------------------------------------------------------------------
t.test('Svc-Schema-Version', async (t) => {
  const f = await shared();
  const { a, mgr } = f;
  const version = async (o: ObjectType) => (await a.request({ url: `/v1/schemas/${o}`, token: mgr.token })).json.schema_version as number;
  for (const target of targets(f)) {
    await t.test(target.name, async (t) => {
      const current = await version(target.object);
      const stale = await target.write({ budget: 1 }, { headers: { 'svc-schema-version': String(current - 1) } });
      assertProblem(t, stale, 409, 'OBJECT_SCHEMA_CHANGED');
      const ahead = await target.write({ budget: 1 }, { headers: { 'svc-schema-version': String(current + 1) } });
      assertProblem(t, ahead, 409, 'OBJECT_SCHEMA_CHANGED');
      for (const bad of ['abc', '1.5', '-1', '']) {
        const res = await target.write({ budget: 1 }, { headers: { 'svc-schema-version': bad } });
        assertProblem(t, res, 400, 'INVALID_SCHEMA_VERSION');
      }
      const ok = await target.write({ budget: 5 }, { headers: { 'svc-schema-version': String(current) } });
      t.ok([200, 201].includes(ok.statusCode), `current version accepted: ${ok.body}`);
      t.equal(ok.json?.custom_fields?.budget, 5);
      const none = await target.write({ budget: 6 });
      t.ok([200, 201].includes(none.statusCode), `no header: no check: ${none.body}`);
      // The schema moves on: the version the client read is now stale.
      const r = await a.cli('field', 'define', '--org', f.org, '--object', target.object, '--api-name', `extra_${target.name.toLowerCase()}`,
        '--label', 'Extra', '--type', 'text');
      t.equal(r.schema_version, current + 1);
      const moved = await target.write({ budget: 7 }, { headers: { 'svc-schema-version': String(current) } });
      assertProblem(t, moved, 409, 'OBJECT_SCHEMA_CHANGED');
      const fresh = await target.write({ budget: 7 }, { headers: { 'svc-schema-version': String(current + 1) } });
      t.ok([200, 201].includes(fresh.statusCode), fresh.body);
    });
  }
  // The task and project versions are independent: the project's version sent to a task write.
  await a.cli('field', 'define', '--org', f.org, '--object', 'project', '--api-name', 'bump', '--label', 'Bump', '--type', 'text');
  const p = await version('project');
  const tt = await version('task');
  t.not(p, tt, 'project and task versions now differ');
  const taskWrite = targets(f).find((x) => x.name === 'createTask')!;
  assertProblem(t, await taskWrite.write({ budget: 1 }, { headers: { 'svc-schema-version': String(p) } }), 409, 'OBJECT_SCHEMA_CHANGED');
  const okTask = await taskWrite.write({ budget: 1 }, { headers: { 'svc-schema-version': String(tt) } });
  t.equal(okTask.statusCode, 201, okTask.body);
});

// ---------------------------------------------------------------------------------------------
t.test('valid values of every type round-trip', async (t) => {
  const f = await shared();
  const { a, mgr } = f;
  const values = [
    { notes: 'héllo — ✓ "quoted" \n line', budget: 12.5, billable: false, kickoff: '2026-02-28', tier: 'gold', tags: ['b', 'a'], owner: 'alice@x.example' },
    { notes: '', budget: -3, billable: true, kickoff: '2024-02-29', tier: 'silver', tags: [], owner: 'alice@x.example' },
    { notes: 'x'.repeat(10000), budget: 0, billable: true, kickoff: '1999-12-31', tier: 'gold', tags: ['a', 'b', 'c'] },
    { budget: 1e15, billable: false },
  ];
  for (const target of targets(f)) {
    await t.test(target.name, async (t) => {
      for (const v of values) {
        // For updates, clear what the previous round set so the record holds exactly v.
        const clear = target.url ? Object.fromEntries(['notes', 'budget', 'billable', 'kickoff', 'tier', 'tags', 'owner']
          .filter((k) => !(k in v)).map((k) => [k, null])) : {};
        const res = await target.write({ ...clear, ...v });
        t.ok([200, 201].includes(res.statusCode), res.body.slice(0, 300));
        t.strictSame(res.json.custom_fields, v, 'response custom_fields');
        const url = target.url ?? `/v1/${target.object}s/${res.json.id}`;
        const got = await a.request({ url, token: mgr.token });
        t.strictSame(got.json.custom_fields, v, 'GET custom_fields');
      }
    });
  }
});
