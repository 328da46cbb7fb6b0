// A BI tool's login (svc-admin reporting grant): in SQL it sees only its organization and the
// columns its Roles allow, through the reporting views only; it writes nothing; it has a statement
// timeout; revoked, it is gone.
import t from 'tap';
import postgres from 'postgres';
import { startApp } from '../helpers/app.ts';
import { failure } from '../helpers/sql.ts';

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
  t.match(await failure(sql`delete from reporting.projects`), /^(42501|25006)/, 'no write');
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
