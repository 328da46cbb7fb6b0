// A BI tool's login (svc-admin reporting grant): in SQL it sees only its organization and the
// columns its Roles allow, through the reporting views only; it writes nothing; it has a statement
// timeout; revoked, it is gone.
import t from 'tap';
import postgres from 'postgres';
import { startApp, CITUS_WORKERS } from '../helpers/app.ts';
import { failure } from '../helpers/sql.ts';
import { editDatabaseUrl } from '../../src/db/url.ts';
import { startWorker } from '../../src/worker/index.ts';

t.test('BI logins: one organization, its Roles\' columns, read-only, a timeout, revocable', async (t) => {
  const a = await startApp(t);
  const world = async (name: string) => {
    const p = await a.principal('member,manager,finance');
    const key = (() => { let n = 0; return () => ({ 'idempotency-key': `${name}-${++n}` }); })();
    const project = (await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: key(), payload: { code: name, name } })).json.id;
    await a.request({ method: 'POST', url: '/v1/tasks', token: p.token, headers: key(), payload: { project_id: project, name: `${name} task`, priority: 'high' } });
    await a.addMember(p.orgId, `${name.toLowerCase()}@x.example`);
    await a.request({ method: 'POST', url: '/v1/time-entries', token: p.token, headers: key(),
      payload: { subject: { member_id: `${name.toLowerCase()}@x.example` }, project_id: project, work_date: '2026-11-02', minutes: 30 } });
    return p;
  };
  const mine = await world('Mine');
  await world('Theirs');
  const grant = async (roles: string) => {
    const g = await a.cli('reporting', 'grant', '--org', mine.orgId, '--roles', roles);
    t.teardown(() => a.cli('reporting', 'revoke', '--role', g.role).catch(() => undefined));
    const sql = postgres(g.connection_string, { max: 1, onnotice: () => {} });
    t.teardown(() => sql.end({ timeout: 1 }));
    return { g, sql };
  };
  const { g, sql } = await grant('manager');
  t.match(g, { role: /^svc_bi_[a-z0-9]{12}$/, password: /^[0-9a-f]{64}$/, connection_string: /^postgres:\/\/svc_bi_/ });
  t.same((await sql`select name from projects`).map((r) => r.name), ['Mine'], 'its organization only');
  t.same((await sql`select name, priority from tasks`).map((r) => ({ ...r })), [{ name: 'Mine task', priority: 'high' }]);
  t.equal((await sql`select count(*)::int as n from time_entries`)[0]!.n, 1);
  t.equal((await sql`show statement_timeout`)[0]!.statement_timeout, '30s');
  t.match(await failure(sql`select count(*) from app.projects`), /^42501/, 'no base table');
  t.match(await failure(sql`select * from api.projects`), /^42501/, 'no api view');
  // On Citus the reporting views are views over a function: not updatable.
  t.match(await failure(sql`delete from reporting.projects`), /^(42501|25006|55000)/, 'no write');
  t.equal((await sql`show default_transaction_read_only`)[0]!.default_transaction_read_only, 'on', 'read-only sessions');
  t.match(await failure(sql.begin('read write', (tx) => tx`delete from reporting.projects`)), /^(42501|55000|0A000)/, 'and no write privilege anyway');
  t.match(await failure(sql`select set_config('svc.organization_id', 'org_x', false)`), /^(ok|25006)/);
  t.same((await sql`select name from projects`).map((r) => r.name), ['Mine'], 'settings change nothing');

  // Finance: tasks without the member/manager fields; no time entries' notes; invoices and payments.
  const fin = await grant('finance');
  t.same((await fin.sql`select name, priority from tasks`).map((r) => ({ ...r })), [{ name: 'Mine task', priority: null }], 'a Role-hidden column is null');
  t.equal((await fin.sql`select count(*)::int as n from invoices`)[0]!.n, 0);
  // Member: no time entries at all (the spec: member only through documented reporting views).
  const mem = await grant('member');
  t.equal((await mem.sql`select count(*)::int as n from time_entries`)[0]!.n, 0, 'member reads no time entries');
  t.equal((await mem.sql`select count(*)::int as n from invoices`)[0]!.n, 0, 'nor invoices');

  await a.cli('reporting', 'revoke', '--role', g.role);
  await sql.end({ timeout: 1 });
  const again = postgres(g.connection_string, { max: 1, onnotice: () => {} });
  t.match(await failure(again`select 1`), /^28/, 'a revoked login cannot connect');
  await again.end({ timeout: 1 });
});

t.test('on a cluster: a BI session reaches its worker through the relay only, and nothing it sends goes along', {
  skip: CITUS_WORKERS.length === 0 && 'runs on a Citus cluster: make test-citus' }, async (t) => {
  const a = await startApp(t);
  const orgs = [];
  for (const name of ['Mine', 'Theirs']) {
    const p = await a.principal('member,manager');
    await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: { 'idempotency-key': name }, payload: { code: name, name } });
    orgs.push(p);
  }
  const [mine, theirs] = orgs as [typeof orgs[0], typeof orgs[0]];
  const g = await a.cli('reporting', 'grant', '--org', mine.orgId, '--roles', 'manager');
  t.teardown(() => a.cli('reporting', 'revoke', '--role', g.role).catch(() => undefined));
  const sql = postgres(g.connection_string, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end({ timeout: 1 }));

  // Citus replays a transaction's SET LOCAL strings on each of its connections: none of them is
  // the relay's, and the context settings they carry are not believed.
  const seen = await sql.begin(async (tx) => {
    await tx`set local citus.propagate_set_commands = 'local'`;
    await tx.unsafe(`set local application_name = 'citus_internal gpid=10000000001'`);
    await tx`select set_config('svc.organization_id', ${theirs.orgId}, true), set_config('svc.roles', 'member,manager,finance,hr', true)`;
    await tx.unsafe(`set local svc.context_mac = 'x'`);
    return (await tx`select name from projects`).map((r) => r.name);
  });
  t.same(seen, ['Mine'], 'its own organization, whatever it sets');
  t.match(await failure(sql`select * from reporting_private.bi_rows_of('projects', ${theirs.orgId}, '{manager}', 'x')`), /^42501/,
    'it cannot name the worker\'s function');
  t.match(await failure(sql`select * from reporting_private.bi_rows('projects')`), /^42501/, 'nor the coordinator\'s, except through its views');
  t.match(await failure(sql`select svc_dblink.dblink('dbname=x', 'select 1')`), /^42501/, 'nor dblink');
  t.match(await failure(sql`set role svc_reporting_relay`), /^42501/, 'nor become the relay');
  // Citus crashes the coordinator when a function it delegates by organization gets a NULL one,
  // before any privilege is checked: a BI login may name none (docs/scaling.md).
  const named = await a.admin`
    select format('%I.%I', n.nspname, p.proname) as fn from pg_dist_object o
      join pg_proc p on p.oid = o.objid join pg_namespace n on n.oid = p.pronamespace
     where o.classid = 'pg_proc'::regclass and o.distribution_argument_index is not null
       and has_schema_privilege(${g.role}, n.oid, 'USAGE')`;
  t.same(named, [], 'no function Citus delegates is in a schema the BI login may use');
  t.ok((await a.admin`select count(*)::int as n from pg_dist_object where classid = 'pg_proc'::regclass and distribution_argument_index is not null`)[0]!.n > 20,
    'and there are such functions');

  // On the worker, the function answers the relay's own sessions only (here a superuser's).
  const worker = postgres(editDatabaseUrl(CITUS_WORKERS[0]!, { database: new URL(a.adminUrl).pathname.slice(1) }), { max: 1, onnotice: () => {} });
  t.teardown(() => worker.end());
  t.match(await failure(worker`select * from reporting_private.bi_rows_of('projects', ${theirs.orgId}, '{manager}', 'x')`), /^SV500 REPORTING_RELAY_ONLY/,
    'bi_rows_of refuses any session but the relay\'s');

  // The relay's own session (this cluster trusts it on 127.0.0.1): bi_rows_of reads in its node
  // alone, so the SET LOCAL strings of its transaction, which Citus would replay on any connection
  // it opened, as that connection's role, reach no other node. The string takes an advisory lock
  // wherever it runs (shared: Citus opens several connections to a node); only the relay's own
  // session may hold it.
  const database = new URL(a.adminUrl).pathname.slice(1);
  const [home] = await a.admin`select n.nodeport from pg_dist_placement p join pg_dist_node n using (groupid)
    where p.shardid = get_shard_id_for_distribution_column('app.organizations', ${mine.orgId}::text)`;
  const homeUrl = CITUS_WORKERS.find((w) => new URL(w).port === String(home!.nodeport))!;
  const others = [a.adminUrl, ...CITUS_WORKERS.filter((w) => w !== homeUrl).map((w) => editDatabaseUrl(w, { database }))]
    .map((u) => postgres(u, { max: 1, onnotice: () => {} }));
  t.teardown(() => Promise.all(others.map((o) => o.end())));
  const relay = postgres(editDatabaseUrl(homeUrl, { database, username: 'svc_reporting_relay', password: '' }), { max: 1, onnotice: () => {} });
  t.teardown(() => relay.end());
  const relayAgain = postgres(editDatabaseUrl(homeUrl, { database, username: 'svc_reporting_relay', password: '' }), { max: 1, onnotice: () => {} });
  t.teardown(() => relayAgain.end());
  // The coordinator's proof for one backend of the relay, one view, organization and Roles.
  const backendOf = async (s: postgres.Sql) => (await s<{ pid: number; started: string }[]>`select pg_backend_pid() as pid,
    (select (extract(epoch from backend_start) * 1000000)::bigint::text from pg_stat_activity where pid = pg_backend_pid()) as started`)[0]!;
  const proof = async (b: { pid: number; started: string }, view: string, org: string, roles: string) =>
    (await a.admin`select app_private.bi_relay_proof(${b.pid}::int, ${b.started}::bigint, ${view}, ${org}, ${roles}::text[]) as p`)[0]!.p as string;
  const all = '{member,manager,finance,hr}';
  const mineBackend = await backendOf(relay);
  const good = await proof(mineBackend, 'projects', mine.orgId, all);
  t.ok((await relay`select count(*)::int as n from reporting_private.bi_rows_of('projects', ${mine.orgId}, ${all}, ${good})`)[0]!.n >= 1,
    'the relay\'s backend that a proof names reads what it names');
  // What pg_stat_activity shows every session of the relay, replayed: it opens nothing.
  t.match(await failure(relayAgain`select * from reporting_private.bi_rows_of('projects', ${mine.orgId}, ${all}, ${good})`),
    /^SV500 REPORTING_RELAY_ONLY/, 'the same proof in another session of the relay is refused');
  for (const [what, args] of [
    ['without a proof', ['projects', theirs.orgId, all, '']],
    ['for another organization', ['projects', theirs.orgId, all, good]],
    ['with more Roles', ['projects', mine.orgId, '{member,manager,finance,hr,admin}', good]],
    ['for another view', ['invoices', mine.orgId, all, good]],
  ] as const) {
    t.match(await failure(relay`select * from reporting_private.bi_rows_of(${args[0]}, ${args[1]}, ${args[2]}::text[], ${args[3]})`),
      /^SV500 REPORTING_RELAY_ONLY/, `the relay's password alone reads nothing: ${what}`);
  }
  const views = ['members', 'projects', 'tasks', 'time_entries', 'approvals', 'invoices', 'payments', 'tickets'];
  const proofs = await Promise.all(views.map((view) => proof(mineBackend, view, mine.orgId, all)));
  const elsewhere = await relay.begin(async (tx) => {
    await tx`set local citus.propagate_set_commands = 'local'`;
    await tx.unsafe(`set local work_mem = '7MB'; select pg_advisory_xact_lock_shared(4242)`).simple();
    for (const [i, view] of views.entries()) {
      await tx`select count(*) from reporting_private.bi_rows_of(${view}, ${mine.orgId}, ${all}, ${proofs[i]!})`;
    }
    return Promise.all(others.map(async (o) => (await o`select count(*)::int as n from pg_locks
      where locktype = 'advisory' and objid = 4242 and database = (select oid from pg_database where datname = current_database())`)[0]!.n));
  });
  t.same(elsewhere, others.map(() => 0), 'no other node ran the relay\'s SET LOCAL string');
  // The probe sees a replay: a superuser's statement on that worker that reads every shard.
  const admin = postgres(editDatabaseUrl(homeUrl, { database }), { max: 1, onnotice: () => {} });
  t.teardown(() => admin.end());
  const replayed = await admin.begin(async (tx) => {
    await tx`set local citus.propagate_set_commands = 'local'`;
    await tx.unsafe(`set local work_mem = '7MB'; select pg_advisory_xact_lock_shared(4242)`).simple();
    await tx`select count(*) from app.organizations`;
    return Promise.all(others.slice(1).map(async (o) => (await o`select count(*)::int as n from pg_locks
      where locktype = 'advisory' and objid = 4242 and database = (select oid from pg_database where datname = current_database())`)[0]!.n));
  });
  t.ok(replayed.every((n) => n > 0), 'the probe: a statement that reaches the other worker runs the string there');
});

t.test('payments, read from their table: the organization\'s own, for manager and finance only', async (t) => {
  const a = await startApp(t);
  const worker = await startWorker(a.config, { pollInterval: 50 });
  t.teardown(() => worker.stop());
  const paid = async (name: string, amount: string) => {
    const p = await a.principal('member,manager,finance');
    const key = (() => { let n = 0; return () => ({ 'idempotency-key': `${name}-${++n}` }); })();
    const cus = (await a.cli('customer', 'create', '--org', p.orgId, '--kind', 'billing', '--name', name, '--currency', 'EUR')).customer_id;
    const inv = (await a.request({ method: 'POST', url: '/v1/invoices', token: p.token, headers: key(), payload: { customer_id: cus, currency: 'EUR',
      due_date: '2026-12-01', issue_date: '2026-11-01', lines: [{ description: 'x', quantity: '1', unit_price: '100.00' }] } })).json;
    t.equal((await a.request({ method: 'POST', url: `/v1/invoices/${inv.id}/send`, token: p.token, headers: key(), payload: { delivery: { email: false } } })).statusCode, 200);
    t.equal((await a.request({ method: 'POST', url: '/v1/payments', token: p.token, headers: key(),
      payload: { invoice_id: inv.id, amount, currency: 'EUR', received_date: '2026-11-20', method: `${name}-method` } })).statusCode, 201);
    return p;
  };
  const mine = await paid('Mine', '11.00');
  await paid('Theirs', '77.00');
  const read = async (roles: string) => {
    const g = await a.cli('reporting', 'grant', '--org', mine.orgId, '--roles', roles);
    t.teardown(() => a.cli('reporting', 'revoke', '--role', g.role).catch(() => undefined));
    const sql = postgres(g.connection_string, { max: 1, onnotice: () => {} });
    try {
      return (await sql`select amount::text, currency, method from payments`).map((r) => ({ ...r }));
    } finally {
      await sql.end({ timeout: 1 });
    }
  };
  t.same(await read('finance'), [{ amount: '11.00', currency: 'EUR', method: 'Mine-method' }], 'finance: its own payment, every column');
  t.same(await read('manager'), [{ amount: '11.00', currency: 'EUR', method: 'Mine-method' }], 'manager too');
  t.same(await read('member'), [], 'a member: none');
  t.same(await read('hr'), [], 'hr: none');
});
