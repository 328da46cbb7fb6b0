// Time entries and approvals inside the database, without HTTP: the lifecycle locks live in
// triggers, row-level security and column grants, so they hold for a direct statement by the
// svc_runtime role (with a request context set by api.begin_request, or none) and, where stated,
// for the owner too.
import t from 'tap';
import type { Test } from 'tap';
import postgres from 'postgres';
import { startApp, type TestApp, type Client } from '../helpers/app.ts';
import { beginRequest, inRequest, refusedOnTheCoordinator, refusedOutsideItsOrganization, touchedRows, visibleRows } from '../helpers/sql.ts';

t.jobs = 3;

const opts = { max: 1, onnotice: () => {} } as const;

/** Runs a query and returns `${SQLSTATE} ${message}` (the message is the problem code), or 'ok'. */
async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e: any) {
    return `${e?.code} ${e?.message}`;
  }
}
const sqlstate = async (p: Promise<unknown>) => (await failure(p)).split(' ')[0];

function berlinDate(offsetDays = 0): string {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin', year: 'numeric', month: '2-digit', day: '2-digit' })
    .format(new Date());
  const d = new Date(`${today}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + offsetDays);
  return d.toISOString().slice(0, 10);
}

const WORKER = 'worker@a.test';
const BOSS = 'boss@a.test';

interface World {
  a: TestApp;
  rt: postgres.Sql;
  orgA: string;
  mgrA: Client;
  memberA: Client;
  financeA: Client;
  mgrB: Client;
  projectA: string;
  as: <T>(c: Client, fn: (tx: postgres.TransactionSql) => Promise<T>) => Promise<T>;
  /** A draft entry created through api.time_entry_create in mgrA's context. */
  entry: (minutes?: number, daysAgo?: number) => Promise<string>;
  submit: (id: string) => Promise<unknown>;
  decide: (id: string, decision: 'approved' | 'rejected') => Promise<unknown>;
  row: (id: string) => Promise<{ status: string; minutes: number; version: number; deleted_at: Date | null }>;
}

async function world(t: Test): Promise<World> {
  const a = await startApp(t);
  const orgA = await a.createOrg({ name: 'Org A' });
  const orgB = await a.createOrg({ name: 'Org B' });
  await a.addMember(orgA, WORKER, { roles: 'member' });
  await a.addMember(orgA, BOSS, { roles: 'member,manager' });
  const mgrA = await a.createClient(orgA, { roles: 'manager' });
  const memberA = await a.createClient(orgA, { roles: 'member' });
  const financeA = await a.createClient(orgA, { roles: 'finance' });
  const mgrB = await a.createClient(orgB, { roles: 'manager' });
  const rt = postgres(a.runtimeUrl, opts);
  t.teardown(() => rt.end());
  const as = <T>(c: Client, fn: (tx: postgres.TransactionSql) => Promise<T>) => a.admin.begin(async (tx) => {
    const b = await beginRequest(tx, c);
    if (b!.outcome !== 'ok') throw new Error(`begin_request: ${b!.outcome}`);
    // As the surface's owner role: the runtime role itself reaches no table (tenancy.test.ts); on a
    // cluster in the organization's worker, where begin_request signed the context.
    return fn(await inRequest(t, a.runtimeUrl, tx as never, c.orgId, { role: 'svc_api' }) as never);
  }) as Promise<T>;
  const projectA = await as(mgrA, async (tx) =>
    (await tx`select doc ->> 'id' as id from api.project_create(${tx.json({ code: 'PA', name: 'PA' })}, null)`)[0]!.id as string);
  let n = 0;
  const entry = (minutes = 30, daysAgo = 1 + (n++ % 20)) => as(mgrA, async (tx) =>
    (await tx`select doc ->> 'id' as id from api.time_entry_create(${tx.json({ subject: { member_id: WORKER }, project_id: projectA,
      work_date: berlinDate(-daysAgo), minutes })})`)[0]!.id as string);
  const submit = (id: string) => as(mgrA, (tx) => tx`select * from api.time_entry_submit(${id})`);
  const decide = async (id: string, decision: 'approved' | 'rejected') => {
    const [ap] = await a.admin`select id from app.approvals where resource_type = 'time_entry' and resource_id = ${id}`;
    return a.cli('approval', 'decide', '--approval', ap!.id, '--decision', decision, '--by', BOSS);
  };
  const row = async (id: string) => (await a.admin`select status, minutes, version, deleted_at from app.time_entries where id = ${id}`)[0] as any;
  return { a, rt, orgA, mgrA, memberA, financeA, mgrB, projectA, as, entry, submit, decide, row };
}

// ---------------------------------------------------------------------------------------------
t.test('runtime with a manager context: only draft and rejected entries change; status moves are guarded', async (t) => {
  const w = await world(t);
  const { as, mgrA } = w;
  const setMinutes = (id: string, m: number) => as(mgrA, (tx) => tx`update app.time_entries set minutes = ${m} where id = ${id} and organization_id = ${w.orgA} returning id`);
  const setStatus = (id: string, s: string) => as(mgrA, (tx) => tx`update app.time_entries set status = ${s} where id = ${id} and organization_id = ${w.orgA} returning id`);

  // Draft: editable; status cannot jump.
  const draft = await w.entry(30);
  t.equal(await failure(setMinutes(draft, 45)), 'ok', 'draft: minutes change');
  t.match(await w.row(draft), { minutes: 45, version: 2, status: 'draft' });
  t.equal(await failure(setStatus(draft, 'submitted')), 'SVR05 APPROVAL_REQUIRED', 'draft -> submitted without an approval request fails');
  t.equal(await failure(setStatus(draft, 'approved')), 'SVR05 APPROVAL_REQUIRED', 'draft -> approved fails');
  t.equal(await failure(setStatus(draft, 'rejected')), 'SVR05 APPROVAL_REQUIRED', 'draft -> rejected fails');
  t.match(await w.row(draft), { status: 'draft', version: 2 }, 'unchanged after the refusals');
  // Nor can the runtime forge a pending approval request and then mark the entry submitted.
  t.equal(await sqlstate(as(mgrA, (tx) => tx`insert into app.approvals (organization_id, type, category, resource_type, resource_id,
    requested_by_client_id) values (${w.orgA}, 'time_entry', 'project', 'time_entry', ${draft}, ${mgrA.id})`)), '42501',
    'svc_runtime cannot insert an approval request directly');
  t.equal((await w.a.admin`select count(*)::int as n from app.approvals where resource_id = ${draft}`)[0]!.n, 0, 'no approval appeared');

  // Submitted: locked, and the runtime role cannot decide.
  const sub = await w.entry(60);
  await w.submit(sub);
  t.match(await w.row(sub), { status: 'submitted' });
  t.equal(await failure(setMinutes(sub, 61)), 'SVC17 TIME_ENTRY_LOCKED', 'submitted: minutes locked');
  t.equal(await failure(as(mgrA, (tx) => tx`update app.time_entries set notes = 'x' where id = ${sub} and organization_id = ${w.orgA}`)), 'SVC17 TIME_ENTRY_LOCKED',
    'submitted: notes locked');
  t.equal(await failure(setStatus(sub, 'approved')), 'SVC17 TIME_ENTRY_LOCKED', 'submitted -> approved by svc_runtime fails');
  t.equal(await failure(setStatus(sub, 'rejected')), 'SVC17 TIME_ENTRY_LOCKED', 'submitted -> rejected by svc_runtime fails');
  t.equal(await failure(setStatus(sub, 'draft')), 'SVC17 TIME_ENTRY_LOCKED', 'submitted -> draft fails');
  t.equal(await failure(as(mgrA, (tx) => tx`update app.time_entries set deleted_at = now() where id = ${sub} and organization_id = ${w.orgA}`)), 'SVC17 TIME_ENTRY_LOCKED',
    'submitted: cannot be marked deleted');
  t.match(await w.row(sub), { status: 'submitted', minutes: 60, deleted_at: null });
  // Nor by touching the approval itself.
  t.equal(await sqlstate(as(mgrA, (tx) => tx`update app.approvals set status = 'approved', decision = 'approved', decided_at = now()
    where resource_id = ${sub} and organization_id = ${w.orgA}`)), '42501', 'svc_runtime cannot mark its approval approved (not granted / row-level security)');
  t.equal(await sqlstate(as(mgrA, (tx) => tx`select control.approval_decide(
    (select id from app.approvals where resource_id = ${sub} and organization_id = ${w.orgA}), 'approved', ${BOSS})`)), '42501', 'control.approval_decide is not granted');
  t.equal((await w.a.admin`select status from app.approvals where resource_id = ${sub}`)[0]!.status, 'pending');

  // Approved (by the owner-run control plane): final.
  await w.decide(sub, 'approved');
  t.match(await w.row(sub), { status: 'approved' }, 'the control plane decides');
  t.equal(await failure(setMinutes(sub, 10)), 'SVC17 TIME_ENTRY_LOCKED', 'approved: minutes locked');
  t.equal(await failure(setStatus(sub, 'draft')), 'SVC17 TIME_ENTRY_LOCKED', 'approved -> draft fails');
  t.equal(await failure(setStatus(sub, 'rejected')), 'SVC17 TIME_ENTRY_LOCKED', 'approved -> rejected fails');
  t.equal(await failure(setStatus(sub, 'submitted')), 'SVC17 TIME_ENTRY_LOCKED', 'approved -> submitted fails');
  t.match(await w.row(sub), { status: 'approved', minutes: 60 });

  // Rejected: editable again, and resubmission goes through the approval.
  const rej = await w.entry(20);
  await w.submit(rej);
  await w.decide(rej, 'rejected');
  t.equal(await failure(setMinutes(rej, 25)), 'ok', 'rejected: minutes change');
  t.equal(await failure(setStatus(rej, 'approved')), 'SVR05 APPROVAL_REQUIRED', 'rejected -> approved fails');
  t.equal(await failure(setStatus(rej, 'submitted')), 'SVR05 APPROVAL_REQUIRED',
    'rejected -> submitted directly fails (the approval is not pending)');
  t.equal(await failure(w.submit(rej)), 'ok', 'resubmitting through api.time_entry_submit works');
  t.match(await w.row(rej), { status: 'submitted', minutes: 25 });

  // DELETE is not granted to the runtime role, whatever the status.
  for (const id of [draft, sub, rej]) {
    t.equal(await sqlstate(as(mgrA, (tx) => tx`delete from app.time_entries where id = ${id} and organization_id = ${w.orgA}`)), '42501', 'DELETE: 42501');
  }
  // Columns outside the grants.
  t.equal(await sqlstate(as(mgrA, (tx) => tx`update app.time_entries set member_id = ${BOSS} where id = ${draft} and organization_id = ${w.orgA}`)), '42501',
    'member_id is not updatable');
  t.equal(await sqlstate(as(mgrA, (tx) => tx`update app.time_entries set external_id = 'x' where id = ${draft} and organization_id = ${w.orgA}`)), '42501',
    'external_id is not updatable');
  t.equal(await sqlstate(as(mgrA, (tx) => tx`insert into app.time_entries (organization_id, member_id, project_id, work_date, minutes,
    created_by_client_id, status) values (${w.orgA}, ${WORKER}, ${w.projectA}, ${berlinDate(-1)}, 5, ${mgrA.id}, 'approved')`)), '42501',
    'status is not insertable');
  t.equal((await w.a.admin`select count(*)::int as n from app.time_entries`)[0]!.n, 3, 'every row is still there');
});

// ---------------------------------------------------------------------------------------------
t.test('owner: DELETE fails SVC17, approved entries stay locked', async (t) => {
  const w = await world(t);
  const { a } = w;
  const draft = await w.entry(30);
  const approved = await w.entry(40);
  await w.submit(approved);
  await w.decide(approved, 'approved');
  const submitted = await w.entry(50);
  await w.submit(submitted);

  for (const id of [draft, approved, submitted]) {
    t.equal(await failure(a.admin`delete from app.time_entries where id = ${id}`), 'SVC17 TIME_ENTRY_LOCKED', 'owner DELETE fails');
  }
  t.equal(await failure(a.admin`delete from app.time_entries`), 'SVC17 TIME_ENTRY_LOCKED', 'owner DELETE of every row fails');
  t.equal((await a.admin`select count(*)::int as n from app.time_entries`)[0]!.n, 3);

  t.equal(await failure(a.admin`update app.time_entries set minutes = 41 where id = ${approved}`), 'SVC17 TIME_ENTRY_LOCKED',
    'owner: approved minutes locked');
  t.equal(await failure(a.admin`update app.time_entries set status = 'rejected' where id = ${approved}`), 'SVC17 TIME_ENTRY_LOCKED',
    'owner: approved -> rejected fails');
  t.equal(await failure(a.admin`update app.time_entries set status = 'draft' where id = ${approved}`), 'SVC17 TIME_ENTRY_LOCKED',
    'owner: approved -> draft fails');
  t.equal(await failure(a.admin`update app.time_entries set deleted_at = now() where id = ${approved}`), 'SVC17 TIME_ENTRY_LOCKED',
    'owner: approved cannot be marked deleted');
  t.equal(await failure(a.admin`update app.time_entries set minutes = 51 where id = ${submitted}`), 'SVC17 TIME_ENTRY_LOCKED',
    'owner: submitted minutes locked');
  t.equal(await failure(a.admin`update app.time_entries set status = 'approved', minutes = 1 where id = ${submitted}`),
    'SVC17 TIME_ENTRY_LOCKED', 'owner: a decision may not carry another change');
  t.equal(await failure(a.admin`update app.time_entries set status = 'approved' where id = ${draft}`), 'SVR05 APPROVAL_REQUIRED',
    'owner: draft -> approved fails');
  t.match(await w.row(approved), { status: 'approved', minutes: 40, deleted_at: null });
  t.match(await w.row(submitted), { status: 'submitted', minutes: 50 });
  t.match(await w.row(draft), { status: 'draft', minutes: 30 });

  // Deciding twice, or by someone not eligible, fails in the control plane.
  const again = await w.decide(approved, 'rejected').then(() => 'ok', (e: any) => JSON.stringify(e.result?.err));
  t.match(again, /APPROVAL_ALREADY_DECIDED/);
  const [ap] = await a.admin`select id from app.approvals where resource_id = ${submitted}`;
  const notEligible = await a.cli('approval', 'decide', '--approval', ap!.id, '--decision', 'approved', '--by', WORKER)
    .then(() => 'ok', (e: any) => JSON.stringify(e.result?.err));
  t.match(notEligible, /APPROVER_NOT_ELIGIBLE/);
  t.match(await w.row(submitted), { status: 'submitted' });
});

// ---------------------------------------------------------------------------------------------
t.test('visibility: no context sees nothing; member-only sees no time; finance no approvals', async (t) => {
  const w = await world(t);
  const { a, rt, as } = w;
  const e1 = await w.entry(10);
  const e2 = await w.entry(20);
  await w.submit(e2);
  t.equal((await a.admin`select count(*)::int as n from app.time_entries`)[0]!.n, 2, 'owner: 2 entries');
  t.equal((await a.admin`select count(*)::int as n from app.approvals`)[0]!.n, 1, 'owner: 1 approval');

  // A request's statements name its organization (on a cluster, one shard's rows).
  const counts = async (q: postgres.Sql | postgres.TransactionSql) => ({
    entries: (await q`select count(*)::int as n from app.time_entries where organization_id = ${w.orgA}`)[0]!.n,
    entriesView: (await q`select count(*)::int as n from api.time_entries`)[0]!.n,
    approvals: (await q`select count(*)::int as n from app.approvals where organization_id = ${w.orgA}`)[0]!.n,
    approvalsView: (await q`select count(*)::int as n from api.approvals`)[0]!.n,
  });
  const runtimeCounts = async () => ({
    entries: await visibleRows(rt, 'app.time_entries'), entriesView: await visibleRows(rt, 'api.time_entries'),
    approvals: await visibleRows(rt, 'app.approvals'), approvalsView: await visibleRows(rt, 'api.approvals'),
  });
  t.same(await runtimeCounts(), { entries: 0, entriesView: 0, approvals: 0, approvalsView: 0 }, 'svc_runtime without a context sees nothing');
  // A refusal ends the transaction on a cluster (refusedOnTheCoordinator): one each.
  const inTransaction = (rel: string) => rt.begin((tx) => visibleRows(tx, rel))
    .catch((e) => { if (refusedOnTheCoordinator(e)) return 0; throw e; });
  t.same({ entriesView: await inTransaction('api.time_entries'), approvalsView: await inTransaction('api.approvals') },
    { entriesView: 0, approvalsView: 0 }, 'nor inside a transaction');
  t.equal(await touchedRows(rt`update app.time_entries set minutes = 11 where id = ${e1} returning id`), 0, 'no context: an update touches no row');
  const noCtxApproval = await rt`update app.approvals set requested_at = now() returning id`.then((r) => r.length, (e: any) => e?.code);
  t.ok(noCtxApproval === 0 || noCtxApproval === '42501', `no context: no approval updated (${noCtxApproval})`);

  t.same(await as(w.mgrA, counts), { entries: 2, entriesView: 2, approvals: 1, approvalsView: 1 }, 'manager sees both');
  t.same(await as(w.memberA, counts), { entries: 0, entriesView: 0, approvals: 0, approvalsView: 0 }, 'member-only sees no time entries');
  t.equal(await failure(as(w.memberA, (tx) => tx`select * from api.time_entry_get(${e1})`)), 'SVR03 ROLE_REQUIRED',
    'member-only: api.time_entry_get refuses');
  t.equal((await as(w.memberA, (tx) => tx`update app.time_entries set minutes = 11 where id = ${e1} and organization_id = ${w.orgA} returning id`)).length, 0,
    'member-only: an update touches no row');
  t.same(await as(w.financeA, counts), { entries: 2, entriesView: 2, approvals: 0, approvalsView: 0 },
    'finance reads time but sees no project approvals');
  // On a cluster, a statement of B's request that names A is refused whole (refusedOutsideItsOrganization).
  const outside = (e: any): 'refused' => { if (refusedOutsideItsOrganization(e)) return 'refused'; throw e; };
  const bSees = await as(w.mgrB, counts).catch(outside);
  t.ok(typeof bSees === 'string' || (bSees.entries === 0 && bSees.approvals === 0), 'another organization sees none');
  const bInserts = await as(w.mgrB, (tx) => tx`insert into app.time_entries (organization_id, member_id, project_id, work_date, minutes,
    created_by_client_id) values (${w.orgA}, ${WORKER}, ${w.projectA}, ${berlinDate(-1)}, 5, ${w.mgrB.id})`)
    .then(() => 'ok', (e: any) => (refusedOutsideItsOrganization(e) ? '42501' : e?.code));
  t.equal(bInserts, '42501', 'another organization cannot insert into this one');
  t.equal(await sqlstate(as(w.memberA, (tx) => tx`insert into app.time_entries (organization_id, member_id, project_id, work_date, minutes,
    created_by_client_id) values (${w.orgA}, ${WORKER}, ${w.projectA}, ${berlinDate(-1)}, 5, ${w.memberA.id})`)), '42501',
    'member-only cannot insert');
  t.equal(await sqlstate(as(w.mgrA, (tx) => tx`insert into app.time_entries (organization_id, member_id, project_id, work_date, minutes,
    created_by_client_id) values (${w.orgA}, ${WORKER}, ${w.projectA}, ${berlinDate(-1)}, 5, ${w.financeA.id})`)), '42501',
    'a manager cannot insert in another client\'s name');
  t.equal((await a.admin`select count(*)::int as n from app.time_entries`)[0]!.n, 2);
});
