// Integration connections inside the database: Role relevance and ownership in row policies.
import t from 'tap';
import postgres from 'postgres';
import { failure, oneConnection, beginRequest, inRequest, refusedOutsideItsOrganization, visibleRows } from '../helpers/sql.ts';
import { startApp, type Client } from '../helpers/app.ts';

t.test('runtime role: organization connections by Role relevance; never personal ones; control plane only writes', async (t) => {
  const a = await startApp(t);
  const org = await a.createOrg();
  const other = await a.createOrg();
  const fin = await a.createClient(org, { roles: 'finance' });
  const mgr = await a.createClient(org, { roles: 'manager' });
  const mgrOther = await a.createClient(other, { roles: 'manager,finance' });
  await a.addMember(org, 'owner@example.com', { roles: 'member' });
  const acct = (await a.cli('integration', 'add', '--org', org, '--provider', 'xero', '--category', 'accounting', '--capabilities', 'invoice.export')).connection_id;
  const cal = (await a.cli('integration', 'add', '--org', org, '--provider', 'gcal', '--category', 'calendar', '--capabilities', 'task.sync')).connection_id;
  await a.cli('integration', 'add', '--org', org, '--provider', 'slack', '--category', 'messaging', '--ownership', 'personal',
    '--owner-member', 'owner@example.com', '--capabilities', 'task.notify');
  const rt = postgres(a.runtimeUrl, oneConnection);
  t.teardown(() => rt.end());
  const as = <T>(c: Client, fn: (tx: postgres.TransactionSql) => Promise<T>) => a.admin.begin(async (tx) => {
    await beginRequest(tx, c);
    // As the surface's owner role: the runtime role itself reaches no table (tenancy.test.ts); on a
    // cluster in the organization's worker, where begin_request signed the context.
    return fn(await inRequest(t, a.runtimeUrl, tx as never, c.orgId, { role: 'svc_api' }) as never);
  }) as Promise<T>;
  t.equal(await visibleRows(rt, 'app.integration_connections'), 0, 'nothing without context');
  // A request's statements name its organization (on a cluster, one shard's rows).
  t.same((await as(fin, (tx) => tx`select id from app.integration_connections where organization_id = ${org}`)).map((r) => r.id), [acct]);
  t.same((await as(mgr, (tx) => tx`select id from app.integration_connections where organization_id = ${org}`)).map((r) => r.id), [cal]);
  t.equal((await as(mgrOther, (tx) => tx`select id from app.integration_connections where organization_id = ${other}`)).length, 0,
    'another organization: none of its own');
  // On a cluster, a statement of another organization's request that names this one is refused whole.
  const otherSees = await as(mgrOther, (tx) => tx`select id from app.integration_connections where organization_id = ${org}`)
    .then((r) => r.length, (e) => { if (refusedOutsideItsOrganization(e)) return 0; throw e; });
  t.equal(otherSees, 0, 'another organization: none of this one');
  t.equal((await as(mgrOther, (tx) => tx`select api.integration_connection_hidden_reason(${acct}) as r`))[0]!.r, null,
    'another organization learns nothing about the id');
  t.match(await failure(as(fin, (tx) => tx`update app.integration_connections set status = 'connected' where organization_id = ${org}`)), /^42501/);
  t.match(await failure(as(fin, (tx) => tx`insert into app.integration_connections (organization_id, provider, category, ownership, status)
    values (${org}, 'x', 'accounting', 'organization', 'connected')`)), /^42501/);
  t.match(await failure(as(fin, (tx) => tx`select control.integration_update(${acct}, 'error')`)), /^42501/, 'control plane only');
});
