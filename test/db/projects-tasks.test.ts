// Projects, tasks and custom fields inside the database, without HTTP: the rules live in
// triggers, row-level security and column grants, so they hold for a direct statement by the
// svc_runtime role (with or without a request context) and, where stated, for the owner too.
import t from 'tap';
import type { Test } from 'tap';
import postgres from 'postgres';
import { startApp, oneServer, type TestApp, type Client } from '../helpers/app.ts';
import { beginRequest, inRequest, refusedOutsideItsOrganization, touchedRows, visibleRows } from '../helpers/sql.ts';

const opts = { max: 1, onnotice: () => {} } as const;

/** Runs a query and returns its SQLSTATE, or undefined when it succeeded. */
async function sqlstate(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (e: any) {
    return e?.code ?? String(e);
  }
}

/** Runs a query and returns `${SQLSTATE} ${message}` (the message is the problem code), or 'ok'. */
async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e: any) {
    return `${e?.code} ${e?.message}`;
  }
}

interface World {
  a: TestApp;
  rt: postgres.Sql;
  orgA: string;
  orgB: string;
  mgrA: Client; // manager only
  memberA: Client; // member only
  mgrB: Client;
  projectA: string;
  projectB: string;
  workflowA: string;
  /** Runs fn in a transaction whose request context is the client's (api.begin_request). */
  as: <T>(c: Client, fn: (tx: postgres.TransactionSql) => Promise<T>) => Promise<T>;
  /** Creates a task through api.task_create in the client's context; returns its id. */
  task: (c: Client, projectId: string, name?: string) => Promise<string>;
}

async function world(t: Test): Promise<World> {
  const a = await startApp(t);
  const orgA = await a.createOrg({ name: 'Org A' });
  const orgB = await a.createOrg({ name: 'Org B' });
  await a.addMember(orgA, 'boss@a.test', { roles: 'member,manager' });
  const mgrA = await a.createClient(orgA, { roles: 'manager' });
  const memberA = await a.createClient(orgA, { roles: 'member' });
  const mgrB = await a.createClient(orgB, { roles: 'manager' });
  await a.cli('field', 'define', '--org', orgA, '--object', 'task', '--api-name', 'tier', '--label', 'Tier', '--type', 'select', '--options', 'gold:Gold,silver:Silver');
  await a.cli('field', 'define', '--org', orgA, '--object', 'task', '--api-name', 'fin', '--label', 'Fin', '--type', 'text',
    '--readable-roles', 'manager,finance', '--writable-roles', 'finance');
  await a.cli('field', 'define', '--org', orgA, '--object', 'task', '--api-name', 'secret', '--label', 'Secret', '--type', 'text',
    '--readable-roles', 'hr', '--writable-roles', 'hr');
  await a.cli('field', 'define', '--org', orgA, '--object', 'project', '--api-name', 'fin', '--label', 'Fin', '--type', 'text',
    '--readable-roles', 'manager,finance', '--writable-roles', 'finance');
  await a.cli('customer', 'create', '--org', orgA, '--kind', 'company', '--name', 'ACME');
  const rt = postgres(a.runtimeUrl, opts);
  t.teardown(() => rt.end());
  const as = <T>(c: Client, fn: (tx: postgres.TransactionSql) => Promise<T>) => a.admin.begin(async (tx) => {
    const b = await beginRequest(tx, c);
    if (b!.outcome !== 'ok') throw new Error(`begin_request: ${b!.outcome}`);
    // As the surface's owner role: the runtime role itself reaches no table (tenancy.test.ts); on a
    // cluster in the organization's worker, where begin_request signed the context.
    return fn(await inRequest(t, a.runtimeUrl, tx as never, c.orgId, { role: 'svc_api' }) as never);
  }) as Promise<T>;
  const project = (c: Client, code: string) => as(c, async (tx) => {
    const [r] = await tx`select doc ->> 'id' as id from api.project_create(${tx.json({ code, name: code })}, null)`;
    return r!.id as string;
  });
  const projectA = await project(mgrA, 'PA');
  const projectB = await project(mgrB, 'PB');
  const [wf] = await a.admin`select id from app.task_workflows where organization_id = ${orgA} and is_default`;
  const task = (c: Client, projectId: string, name = 'T') => as(c, async (tx) => {
    const [r] = await tx`select doc ->> 'id' as id from api.task_create(${tx.json({ project_id: projectId, name })}, null)`;
    return r!.id as string;
  });
  return { a, rt, orgA, orgB, mgrA, memberA, mgrB, projectA, projectB, workflowA: wf!.id, as, task };
}

const statusOf = async (a: TestApp, id: string) => (await a.admin`select status from app.tasks where id = ${id}`)[0]!.status;

// ---------------------------------------------------------------------------------------------
t.test('task status changes only along workflow transitions (runtime with a manager context)', async (t) => {
  const w = await world(t);
  const { a, as, mgrA } = w;
  const id = await w.task(mgrA, w.projectA);
  const set = (status: string) => as(mgrA, (tx) => tx`update app.tasks set status = ${status} where id = ${id} and organization_id = ${w.orgA} returning status`);

  t.equal(await failure(set('todo')), 'ok', 'todo -> todo (no change) is allowed');
  t.equal(await failure(set('in_progress')), 'ok', 'todo -> in_progress (start) is legal');
  t.equal(await failure(set('todo')), 'SVV23 INVALID_TRANSITION', 'in_progress -> todo is not a transition');
  t.equal(await statusOf(a, id), 'in_progress', 'status unchanged after the refusal');
  t.equal(await failure(set('done')), 'ok', 'in_progress -> done (complete) is legal');
  t.equal(await failure(set('in_progress')), 'SVV23 INVALID_TRANSITION', 'done -> in_progress is not a transition');
  t.equal(await failure(set('blocked')), 'SVV23 INVALID_TRANSITION', 'done -> blocked is not a transition');
  t.equal(await failure(set('cancelled')), 'SVV23 INVALID_TRANSITION', 'done -> cancelled is not a transition');
  t.equal(await statusOf(a, id), 'done');
  t.equal(await failure(set('todo')), 'ok', 'done -> todo (reopen) is legal');
  t.equal(await failure(set('blocked')), 'ok', 'todo -> blocked (block) is legal');
  t.equal(await failure(set('done')), 'SVV23 INVALID_TRANSITION', 'blocked -> done is not a transition');
  t.equal(await failure(set('todo')), 'SVV23 INVALID_TRANSITION', 'blocked -> todo is not a transition');
  t.equal(await failure(set('cancelled')), 'ok', 'blocked -> cancelled (cancel) is legal');
  t.equal(await failure(set('in_progress')), 'SVV23 INVALID_TRANSITION', 'cancelled -> in_progress is not a transition');
  t.equal(await statusOf(a, id), 'cancelled');

  // A new task starts in the workflow's initial status, whoever inserts it.
  const insert = (status: string) => as(mgrA, (tx) => tx`insert into app.tasks (organization_id, project_id, workflow_id, name, status)
    values (${w.orgA}, ${w.projectA}, ${w.workflowA}, 'Direct', ${status}) returning id`);
  for (const s of ['done', 'in_progress', 'blocked', 'cancelled']) {
    t.equal(await failure(insert(s)), 'SVV23 INVALID_TRANSITION', `insert with status ${s} fails`);
  }
  t.equal(await failure(insert('todo')), 'ok', 'insert with the initial status todo succeeds');

  // The owner (no Roles enforced, RLS bypassed) is held to the same rule.
  t.equal(await failure(a.admin`update app.tasks set status = 'in_progress' where id = ${id}`), 'SVV23 INVALID_TRANSITION',
    'owner: cancelled -> in_progress fails');
  t.equal(await failure(a.admin`insert into app.tasks (organization_id, project_id, workflow_id, name, status)
    values (${w.orgA}, ${w.projectA}, ${w.workflowA}, 'Owner', 'done')`), 'SVV23 INVALID_TRANSITION', 'owner: insert as done fails');
  t.equal(await failure(a.admin`update app.tasks set status = 'todo' where id = ${id}`), 'ok', 'owner: cancelled -> todo (reopen) is legal');
  // Nor can a task change workflow.
  const [other] = await a.admin`select id from app.task_workflows where organization_id = ${w.orgB} and is_default`;
  t.equal(await failure(a.admin`update app.tasks set workflow_id = ${other!.id} where id = ${id}`).then((r) => r.split(' ')[0]),
    'SVV23', 'owner: changing workflow_id fails');
});

// ---------------------------------------------------------------------------------------------
t.test('dependency cycles are refused (runtime and owner)', async (t) => {
  const w = await world(t);
  const { a, as, mgrA } = w;
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) ids.push(await w.task(mgrA, w.projectA, `T${i}`));
  const dep = (task: string, pred: string) => as(mgrA, (tx) => tx`insert into app.task_dependencies (organization_id, task_id, predecessor_task_id)
    values (${w.orgA}, ${task}, ${pred})`);

  // Direct: A depends on B, then B on A.
  t.equal(await failure(dep(ids[0]!, ids[1]!)), 'ok', 'A <- B');
  t.equal(await failure(dep(ids[1]!, ids[0]!)), 'SVV24 DEPENDENCY_CYCLE', 'B <- A closes a direct cycle');
  // A 10-chain: c1 <- c2 <- ... <- c10 (each depends on the previous), then c1 depends on c10.
  const chain = ids.slice(2, 12);
  for (let i = 1; i < chain.length; i++) {
    t.equal(await failure(dep(chain[i]!, chain[i - 1]!)), 'ok', `chain link ${i}`);
  }
  t.equal(await failure(dep(chain[0]!, chain[9]!)), 'SVV24 DEPENDENCY_CYCLE', 'closing a 10-chain fails');
  t.equal(await failure(dep(chain[4]!, chain[8]!)), 'SVV24 DEPENDENCY_CYCLE', 'a shortcut backwards inside the chain fails');
  t.equal(await failure(dep(chain[9]!, chain[0]!)), 'ok', 'a forward shortcut (no cycle) is fine');
  t.equal(await sqlstate(dep(ids[0]!, ids[0]!)), '23514', 'self-dependency: check constraint task_dependencies_not_self');

  // The owner is held to the same rule.
  t.equal(await failure(a.admin`insert into app.task_dependencies (organization_id, task_id, predecessor_task_id)
    values (${w.orgA}, ${ids[1]!}, ${ids[0]!})`), 'SVV24 DEPENDENCY_CYCLE', 'owner: direct cycle fails');
  t.equal(await failure(a.admin`insert into app.task_dependencies (organization_id, task_id, predecessor_task_id)
    values (${w.orgA}, ${chain[0]!}, ${chain[9]!})`), 'SVV24 DEPENDENCY_CYCLE', 'owner: closing the chain fails');
  // An update that re-points a row into a cycle is checked too.
  t.equal(await failure(a.admin`update app.task_dependencies set predecessor_task_id = ${chain[9]!}
    where task_id = ${chain[1]!} and predecessor_task_id = ${chain[0]!}`), 'SVV24 DEPENDENCY_CYCLE',
    'owner: re-pointing a dependency into a cycle (UPDATE) fails');
  // Cross-project dependencies are refused unless the task policy allows them.
  const other = await as(mgrA, async (tx) => (await tx`select doc ->> 'id' as id from api.project_create(${tx.json({ code: 'P2', name: 'P2' })}, null)`)[0]!.id);
  const far = await w.task(mgrA, other, 'Far');
  t.equal(await failure(dep(ids[0]!, far)), 'SVV24 DEPENDENCY_CYCLE', 'cross-project dependency refused by default');
  await a.cli('task-policy', 'set', '--org', w.orgA, '--allow-cross-project-dependencies', 'true');
  t.equal(await failure(dep(ids[0]!, far)), 'ok', 'allowed once the task policy permits it');
  // Another organization's task cannot be a predecessor.
  const bTask = await w.task(w.mgrB, w.projectB, 'B');
  t.equal(await failure(dep(ids[2]!, bTask)), 'SVN04 TASK_NOT_FOUND', 'a task of another organization is not found');
});

// ---------------------------------------------------------------------------------------------
t.test('custom fields: Role and definition rules on a direct update', async (t) => {
  const w = await world(t);
  const { a, as, mgrA } = w;
  const id = await w.task(mgrA, w.projectA);
  const setCf = (patch: Record<string, unknown>) => as(mgrA, (tx) =>
    tx`update app.tasks set custom_fields = custom_fields || ${tx.json(patch as any)} where id = ${id} and organization_id = ${w.orgA}`);
  t.equal(await failure(setCf({ tier: 'gold' })), 'ok', 'a readable, manager-writable field');
  t.equal(await failure(setCf({ fin: 'x' })), 'SVR04 CUSTOM_FIELD_FORBIDDEN', 'writable only by finance: SVR04');
  t.equal(await failure(setCf({ nope: 1 })), 'SVV22 CUSTOM_FIELD_NOT_FOUND', 'unknown key: SVV22');
  t.equal(await failure(setCf({ secret: 'x' })), 'SVV22 CUSTOM_FIELD_NOT_FOUND', 'a field hidden from the Roles: SVV22 (not found)');
  t.equal(await failure(setCf({ tier: 'bronze' })), 'SVV22 CUSTOM_FIELD_VALUE_INVALID', 'unknown option: SVV22');
  t.equal(await failure(as(mgrA, (tx) => tx`update app.tasks set custom_fields = '[]' where id = ${id} and organization_id = ${w.orgA}`)),
    'SVV22 INVALID_CUSTOM_FIELD', 'custom_fields not an object');
  // The error detail lists every problem as JSON, with pointers.
  const err = await as(mgrA, (tx) => tx`update app.tasks set custom_fields = ${tx.json({ tier: 'x', nope: 1 })} where id = ${id} and organization_id = ${w.orgA}`)
    .then(() => null, (e: any) => e);
  t.same(JSON.parse(err?.detail ?? '[]').map((e: any) => `${e.pointer} ${e.code}`),
    ['/custom_fields/nope CUSTOM_FIELD_NOT_FOUND', '/custom_fields/tier CUSTOM_FIELD_VALUE_INVALID'], 'all problems in the detail');
  // Projects too.
  t.equal(await failure(as(mgrA, (tx) => tx`update app.projects set custom_fields = '{"fin":"x"}' where id = ${w.projectA} and organization_id = ${w.orgA}`)),
    'SVR04 CUSTOM_FIELD_FORBIDDEN', 'project: writable only by finance');
  t.equal(await failure(as(mgrA, (tx) => tx`update app.projects set custom_fields = '{"nope":1}' where id = ${w.projectA} and organization_id = ${w.orgA}`)),
    'SVV22 CUSTOM_FIELD_NOT_FOUND', 'project: unknown key');
  // The owner is not held to Roles, but still to definitions and types.
  t.equal(await failure(a.admin`update app.tasks set custom_fields = custom_fields || '{"fin":"by owner","secret":"s"}' where id = ${id}`),
    'ok', 'owner: Role-restricted fields may be written');
  t.equal(await failure(a.admin`update app.tasks set custom_fields = custom_fields || '{"nope":1}' where id = ${id}`),
    'SVV22 CUSTOM_FIELD_NOT_FOUND', 'owner: unknown key still fails');
  t.equal(await failure(a.admin`update app.tasks set custom_fields = custom_fields || '{"tier":"bronze"}' where id = ${id}`),
    'SVV22 CUSTOM_FIELD_VALUE_INVALID', 'owner: invalid value still fails');
  const [row] = await a.admin`select custom_fields from app.tasks where id = ${id}`;
  t.same(row!.custom_fields, { tier: 'gold', fin: 'by owner', secret: 's' });
});

// ---------------------------------------------------------------------------------------------
t.test('a member-only context cannot change projects or tasks', async (t) => {
  const w = await world(t);
  const { a, as, memberA, mgrA } = w;
  const id = await w.task(mgrA, w.projectA);
  const seen = await as(memberA, async (tx) => ({
    projects: (await tx`select id from app.projects where organization_id = ${w.orgA}`).length,
    tasks: (await tx`select id from app.tasks where organization_id = ${w.orgA}`).length,
  }));
  t.same(seen, { projects: 1, tasks: 1 }, 'a member reads projects and tasks of its organization');
  const upd = await as(memberA, async (tx) => ({
    projects: (await tx`update app.projects set name = 'Hijacked' where id = ${w.projectA} and organization_id = ${w.orgA} returning id`).length,
    tasks: (await tx`update app.tasks set name = 'Hijacked' where id = ${id} and organization_id = ${w.orgA} returning id`).length,
    status: (await tx`update app.tasks set status = 'in_progress' where id = ${id} and organization_id = ${w.orgA} returning id`).length,
  }));
  t.same(upd, { projects: 0, tasks: 0, status: 0 }, 'UPDATE by a member-only client affects 0 rows (the policy USING hides the rows; no error)');
  t.equal((await a.admin`select name from app.projects where id = ${w.projectA}`)[0]!.name, 'PA', 'project unchanged');
  t.equal((await a.admin`select name from app.tasks where id = ${id}`)[0]!.name, 'T', 'task unchanged');
  t.equal(await sqlstate(as(memberA, (tx) => tx`insert into app.projects (organization_id, code, name, currency)
    values (${w.orgA}, 'MEM', 'Member project', 'EUR')`)), '42501', 'INSERT into app.projects: 42501 (WITH CHECK)');
  t.equal(await sqlstate(as(memberA, (tx) => tx`insert into app.tasks (organization_id, project_id, workflow_id, name, status)
    values (${w.orgA}, ${w.projectA}, ${w.workflowA}, 'Member task', 'todo')`)), '42501', 'INSERT into app.tasks: 42501');
  const id2 = await w.task(mgrA, w.projectA, 'T2');
  t.equal(await sqlstate(as(memberA, (tx) => tx`insert into app.task_dependencies (organization_id, task_id, predecessor_task_id)
    values (${w.orgA}, ${id}, ${id2})`)), '42501', 'INSERT into app.task_dependencies: 42501');
  t.equal(await sqlstate(as(memberA, (tx) => tx`delete from app.tasks where id = ${id} and organization_id = ${w.orgA}`)), '42501', 'DELETE from app.tasks: 42501');
  t.equal(await sqlstate(as(memberA, (tx) => tx`select * from api.task_update(${id}, '{1}', '{"name":"x"}', null)`)), 'SVR03',
    'the command function raises ROLE_REQUIRED');
});

// ---------------------------------------------------------------------------------------------
t.test('api.tasks projects each Role\'s fields for a direct read by the runtime role', async (t) => {
  const w = await world(t);
  const { a, as, mgrA, memberA } = w;
  const id = await w.task(mgrA, w.projectA);
  const base = ['archived', 'code', 'created_at', 'custom_fields', 'id', 'name', 'object', 'project_id', 'status', 'updated_at'];
  const full = [...base, 'assignee_member_ids', 'completed_at', 'description', 'due_at', 'predecessor_task_ids', 'priority',
    'start_at', 'transitions'].sort();
  const keys = async (c: Client) => as(c, async (tx) =>
    Object.keys((await tx<{ doc: Record<string, unknown> }[]>`select doc from api.tasks where id = ${id}`)[0]?.doc ?? {}).sort());
  t.same(await keys(mgrA), full, 'manager: every field');
  t.same(await keys(memberA), full, 'member: every field');
  t.same(await keys(await a.createClient(w.orgA, { roles: 'finance' })), [...base, 'completed_at'].sort(), 'finance: completed_at besides');
  t.same(await keys(await a.createClient(w.orgA, { roles: 'hr' })), [...base, 'assignee_member_ids', 'due_at', 'start_at'].sort(),
    'hr: the staffing fields besides');
  t.same(await keys(await a.createClient(w.orgA, { roles: 'finance,hr' })),
    [...base, 'assignee_member_ids', 'completed_at', 'due_at', 'start_at'].sort(), 'finance and hr: both');
  const transitions = await as(mgrA, async (tx) => (await tx<{ n: number }[]>`
    select jsonb_array_length(doc -> 'transitions') as n from api.tasks where id = ${id}`)[0]!.n);
  t.ok(transitions > 0, 'a task in its initial status is offered its transitions');
});

// ---------------------------------------------------------------------------------------------
t.test('without a request context the runtime role sees and writes nothing', async (t) => {
  const w = await world(t);
  const { a, rt, mgrA } = w;
  await w.task(mgrA, w.projectA);
  await w.task(w.mgrB, w.projectB);
  for (const rel of ['app.projects', 'app.tasks', 'app.customers', 'app.custom_field_definitions', 'app.task_workflows',
    'app.task_workflow_statuses', 'app.task_workflow_transitions', 'app.object_schemas', 'api.projects', 'api.tasks', 'api.object_schemas']) {
    if (rel.startsWith('app.')) {
      const [own] = await a.admin.unsafe(`select count(*)::int as n from ${rel}`);
      t.ok(own!.n > 0, `${rel} has data (owner sees ${own!.n})`);
    }
    t.equal(await visibleRows(rt, rel), 0, `${rel}: nothing without context`);
  }
  t.equal(await sqlstate(rt`insert into app.projects (organization_id, code, name, currency) values (${w.orgA}, 'NOCTX', 'No context', 'EUR')`),
    '42501', 'insert app.projects: 42501');
  t.equal(await sqlstate(rt`insert into app.tasks (organization_id, project_id, workflow_id, name, status)
    values (${w.orgA}, ${w.projectA}, ${w.workflowA}, 'No context', 'todo')`), '42501', 'insert app.tasks: 42501');
  t.equal(await sqlstate(rt`insert into app.customers (organization_id, id, kind, name) values (${w.orgA}, 'com_x', 'company', 'X')`),
    '42501', 'insert app.customers: 42501 (no grant)');
  t.equal(await sqlstate(rt`insert into app.custom_field_definitions (organization_id, object_type, api_name, label, field_type)
    values (${w.orgA}, 'task', 'x', 'X', 'text')`), '42501', 'insert app.custom_field_definitions: 42501 (no grant)');
  t.equal(await sqlstate(rt`insert into app.task_workflows (organization_id, name) values (${w.orgA}, 'X')`), '42501',
    'insert app.task_workflows: 42501 (no grant)');
  t.equal(await touchedRows(rt`update app.tasks set name = 'x' returning id`), 0, 'update app.tasks: no row');
  t.equal(await touchedRows(rt`update app.projects set name = 'x' returning id`), 0, 'update app.projects: no row');
  t.equal(await sqlstate(rt`select * from api.project_create('{"code":"X","name":"X"}', null)`), 'SVR03',
    'api.project_create without context: ROLE_REQUIRED');
});

// ---------------------------------------------------------------------------------------------
t.test('cross-organization: org A context cannot see or change org B tasks', async (t) => {
  const w = await world(t);
  const { a, as, mgrA } = w;
  const bTask = await w.task(w.mgrB, w.projectB, 'B task');
  // A's request names B's rows by their organization: on a cluster that statement is refused whole
  // (refusedOutsideItsOrganization), which reaches nothing either.
  const rowsOfB = (q: (tx: postgres.TransactionSql) => Promise<readonly unknown[]>) => as(mgrA, q)
    .then((r) => r.length, (e) => { if (refusedOutsideItsOrganization(e)) return 0; throw e; });
  const res = {
    seeTask: await rowsOfB((tx) => tx`select id from app.tasks where id = ${bTask} and organization_id = ${w.orgB}`),
    seeProject: await rowsOfB((tx) => tx`select id from app.projects where id = ${w.projectB} and organization_id = ${w.orgB}`),
    viewTask: await rowsOfB((tx) => tx`select id from api.tasks where id = ${bTask}`),
    updTask: await rowsOfB((tx) => tx`update app.tasks set name = 'Hijacked', status = 'in_progress' where id = ${bTask}
      and organization_id = ${w.orgB} returning id`),
    updProject: await rowsOfB((tx) => tx`update app.projects set name = 'Hijacked' where id = ${w.projectB} and organization_id = ${w.orgB} returning id`),
  };
  t.same(res, { seeTask: 0, seeProject: 0, viewTask: 0, updTask: 0, updProject: 0 }, 'nothing of org B is visible or updatable');
  const [b] = await a.admin`select name, status from app.tasks where id = ${bTask}`;
  t.same(b, { name: 'B task', status: 'todo' }, 'org B task unchanged');
  // Inserting into org B (or a task of org A in org B's project) is refused.
  const [wfB] = await a.admin`select id from app.task_workflows where organization_id = ${w.orgB} and is_default`;
  t.equal(await sqlstate(as(mgrA, (tx) => tx`insert into app.tasks (organization_id, project_id, workflow_id, name, status)
    values (${w.orgB}, ${w.projectB}, ${wfB!.id}, 'Intruder', 'todo')`).catch((e) => { throw refusedOutsideItsOrganization(e) ? { code: '42501' } : e; })),
    '42501', 'insert into org B: 42501 (WITH CHECK; on a cluster refused whole)');
  t.equal(await sqlstate(as(mgrA, (tx) => tx`insert into app.task_dependencies (organization_id, task_id, predecessor_task_id)
    values (${w.orgB}, ${bTask}, ${bTask})`)).then((s) => s !== undefined), true, 'a dependency in org B is refused');
  t.equal(await failure(as(mgrA, (tx) => tx`insert into app.tasks (organization_id, project_id, workflow_id, name, status)
    values (${w.orgA}, ${w.projectB}, ${w.workflowA}, 'Wrong project', 'todo')`)), 'SVN04 PROJECT_NOT_FOUND',
    'a task of org A in org B\'s project: PROJECT_NOT_FOUND');
  const got = await as(mgrA, (tx) => tx`select * from api.task_get(${bTask})`);
  t.equal(got.length, 0, 'api.task_get returns no row for org B\'s task');
});

// ---------------------------------------------------------------------------------------------
type Write = [string, (tx: postgres.TransactionSql) => Promise<unknown>];
/** Each write is refused (42501) in a manager's request and without a context. */
async function refusedWrites(t: Test, w: World, cases: Write[]) {
  for (const [label, q] of cases) {
    t.equal(await sqlstate(w.as(w.mgrA, q)), '42501', `${label}: 42501 (manager context)`);
    t.equal(await sqlstate(w.rt.begin((tx) => q(tx))), '42501', `${label}: 42501 (no context)`);
  }
}

t.test('column privileges: ids and audit columns are immutable; no deletes', async (t) => {
  const w = await world(t);
  const id = await w.task(w.mgrA, w.projectA);
  await refusedWrites(t, w, [
    ['update app.projects.id', (tx) => tx`update app.projects set id = 'prj_other' where id = ${w.projectA} and organization_id = ${w.orgA}`],
    ['update app.projects.created_at', (tx) => tx`update app.projects set created_at = now() where id = ${w.projectA} and organization_id = ${w.orgA}`],
    ['update app.projects.currency', (tx) => tx`update app.projects set currency = 'USD' where id = ${w.projectA} and organization_id = ${w.orgA}`],
    ['update app.projects.version', (tx) => tx`update app.projects set version = 99 where id = ${w.projectA} and organization_id = ${w.orgA}`],
    ['update app.projects.archived_at', (tx) => tx`update app.projects set archived_at = now() where id = ${w.projectA} and organization_id = ${w.orgA}`],
    ['update app.tasks.id', (tx) => tx`update app.tasks set id = 'tsk_other' where id = ${id} and organization_id = ${w.orgA}`],
    ['update app.tasks.project_id', (tx) => tx`update app.tasks set project_id = ${w.projectB} where id = ${id} and organization_id = ${w.orgA}`],
    ['update app.tasks.workflow_id', (tx) => tx`update app.tasks set workflow_id = ${w.workflowA} where id = ${id} and organization_id = ${w.orgA}`],
    ['update app.tasks.created_at', (tx) => tx`update app.tasks set created_at = now() where id = ${id} and organization_id = ${w.orgA}`],
    ['delete from app.projects', (tx) => tx`delete from app.projects where id = ${w.projectA} and organization_id = ${w.orgA}`],
    ['delete from app.tasks', (tx) => tx`delete from app.tasks where id = ${id} and organization_id = ${w.orgA}`],
    ['delete from app.customers', (tx) => tx`delete from app.customers where organization_id = ${w.orgA}`],
    ['update app.custom_field_definitions', (tx) => tx`update app.custom_field_definitions set writable_roles = '{manager}' where organization_id = ${w.orgA}`],
    ['update app.object_schemas', (tx) => tx`update app.object_schemas set schema_version = 1 where organization_id = ${w.orgA}`],
    ['update app.task_workflows', (tx) => tx`update app.task_workflows set allow_cross_project_dependencies = true where organization_id = ${w.orgA}`],
  ]);
});

t.test('column privileges: a row\'s organization is immutable',
  oneServer('Citus refuses any UPDATE of the distribution column (0A000) before privileges are checked'), async (t) => {
    const w = await world(t);
    const id = await w.task(w.mgrA, w.projectA);
    await refusedWrites(t, w, [
      ['update app.projects.organization_id', (tx) => tx`update app.projects set organization_id = ${w.orgB} where id = ${w.projectA} and organization_id = ${w.orgA}`],
      ['update app.tasks.organization_id', (tx) => tx`update app.tasks set organization_id = ${w.orgB} where id = ${id} and organization_id = ${w.orgA}`],
    ]);
  });

// ---------------------------------------------------------------------------------------------
t.test('a project with open tasks cannot be archived by a direct UPDATE', async (t) => {
  const w = await world(t);
  const { a, as, mgrA } = w;
  const t1 = await w.task(mgrA, w.projectA, 'open 1');
  const t2 = await w.task(mgrA, w.projectA, 'open 2');
  const archive = () => as(mgrA, (tx) => tx`update app.projects set status = 'archived' where id = ${w.projectA} and organization_id = ${w.orgA} returning archived_at`);
  t.equal(await failure(archive()), 'SVC15 PROJECT_ARCHIVE_BLOCKED', 'runtime: two todo tasks block');
  t.equal(await failure(a.admin`update app.projects set status = 'archived' where id = ${w.projectA}`), 'SVC15 PROJECT_ARCHIVE_BLOCKED',
    'owner: blocked too');
  await as(mgrA, (tx) => tx`update app.tasks set status = 'blocked' where id = ${t1} and organization_id = ${w.orgA}`);
  await as(mgrA, (tx) => tx`update app.tasks set status = 'done' where id = ${t2} and organization_id = ${w.orgA}`);
  t.equal(await failure(archive()), 'SVC15 PROJECT_ARCHIVE_BLOCKED', 'a blocked task (open category) still blocks');
  await as(mgrA, (tx) => tx`update app.tasks set status = 'cancelled' where id = ${t1} and organization_id = ${w.orgA}`);
  const rows = await archive();
  t.equal(rows.length, 1, 'archived once no task is open');
  t.ok(rows[0]!.archived_at, 'archived_at set by the trigger');
  const [p] = await a.admin`select status, archived_at from app.projects where id = ${w.projectA}`;
  t.equal(p!.status, 'archived');
  // A task cannot be added to an archived project.
  t.equal(await failure(w.task(mgrA, w.projectA, 'late')), 'SVN04 PROJECT_NOT_FOUND', 'no new task in an archived project');
  // An archived task in an open status does not block.
  const [r] = await as(mgrA, async (tx) => tx`update app.projects set status = 'active' where id = ${w.projectA} and organization_id = ${w.orgA} returning archived_at`);
  t.equal(r!.archived_at, null, 'restored: archived_at cleared');
  const t3 = await w.task(mgrA, w.projectA, 'open 3');
  await as(mgrA, (tx) => tx`update app.tasks set archived_at = now() where id = ${t3} and organization_id = ${w.orgA}`);
  t.equal(await failure(archive()), 'ok', 'an archived open task does not block');
});

t.test('references never cross organizations, even for the owner', async (t) => {
  const a = await startApp(t);
  const orgA = await a.createOrg();
  const orgB = await a.createOrg();
  const [wfB] = await a.admin`select id from app.task_workflows where organization_id = ${orgB} and is_default`;
  const [prjA] = await a.admin`insert into app.projects (organization_id, code, name, currency) values (${orgA}, 'A', 'A', 'EUR') returning id`;
  const [prjB] = await a.admin`insert into app.projects (organization_id, code, name, currency) values (${orgB}, 'B', 'B', 'EUR') returning id`;
  // Refused by the workflow trigger, which looks the workflow up within the task's organization (it
  // has no initial status there), before the composite foreign key would.
  t.equal(await failure(a.admin`insert into app.tasks (organization_id, project_id, workflow_id, name, status)
    values (${orgA}, ${prjA!.id}, ${wfB!.id}, 'x', 'todo')`), 'SVV23 INVALID_TRANSITION', "another organization's workflow");
  const [wfA] = await a.admin`select id from app.task_workflows where organization_id = ${orgA} and is_default`;
  const [taskB] = await a.admin`insert into app.tasks (organization_id, project_id, workflow_id, name, status)
    select ${orgB}, ${prjB!.id}, id, 'b', 'todo' from app.task_workflows where organization_id = ${orgB} and is_default returning id`;
  const [client] = await a.admin`select c.id from app.api_clients c limit 1`.catch(() => [undefined]);
  const clientA = client?.id ?? (await a.createClient(orgA)).id;
  await t.rejects(a.admin`insert into app.task_notes (organization_id, task_id, text, author_client_id)
    values (${orgA}, ${taskB!.id}, 'n', ${clientA})`, { code: '23503' } as any, "a note on another organization's task");
  t.ok(wfA, 'own workflow exists');
});
