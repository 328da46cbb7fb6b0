// Tickets inside the database: nothing without a credential; the workflow, numbers and messages
// hold for a direct UPDATE/DELETE by the owner; policies per Role and organization policy.
import t from 'tap';
import postgres from 'postgres';
import { startApp } from '../helpers/app.ts';
import { beginRequest, failure, inRequest, oneConnection, refusedOnTheCoordinator, visibleRows } from '../helpers/sql.ts';

t.test('tickets in SQL', async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager');
  const c = (await a.request({ method: 'POST', url: '/v1/tickets', token: p.token, headers: { 'idempotency-key': 'c' },
    payload: { subject: 'S', requester: { email: 'r@x.example' } } })).json;
  await a.request({ method: 'POST', url: `/v1/tickets/${c.id}/messages`, token: p.token, headers: { 'idempotency-key': 'n' },
    payload: { type: 'internal_note', body: 'secret note' } });
  const rt = postgres(a.runtimeUrl, oneConnection);
  t.teardown(() => rt.end());

  for (const rel of ['api.tickets', 'api.ticket_messages']) t.equal(await visibleRows(rt, rel), 0, `${rel}: nothing without a context`);
  for (const rel of ['app.tickets', 'app.ticket_messages', 'app.ticket_search', 'app.ticket_statuses', 'app.ticket_transitions', 'app_private.ticket_number_counters']) {
    t.equal(await visibleRows(rt, rel), 0, `${rel}: no privilege`);
  }
  // On a cluster a read without a signed context may be refused (visibleRows), which ends the
  // transaction: one each.
  const forged = (rel: string) => rt.begin(async (tx) => {
    await tx`select set_config('svc.organization_id', ${p.orgId}, true), set_config('svc.client_id', ${p.id}, true), set_config('svc.roles', 'member,manager', true)`;
    return visibleRows(tx, rel);
  }).catch((e) => { if (refusedOnTheCoordinator(e)) return 0; throw e; });
  t.same({ t: await forged('api.tickets'), m: await forged('api.ticket_messages') }, { t: 0, m: 0 }, 'forged settings: nothing');
  const seen = async (roles: string) => {
    const cl = await a.createClient(p.orgId, { roles });
    return rt.begin(async (tx) => {
      await beginRequest(tx, cl);
      // On a cluster in the organization's worker, where begin_request signed the context.
      const q = await inRequest(t, a.runtimeUrl, tx as never, cl.orgId);
      return (await q`select (select count(*) from api.tickets)::int as t, (select count(*) from api.ticket_messages)::int as m`)[0];
    });
  };
  t.same(await seen('member'), { t: 1, m: 1 }, 'member: the ticket and the note');
  t.same(await seen('finance'), { t: 0, m: 0 }, 'finance without the policy: nothing');
  await a.cli('org', 'set-ticket-policy', '--org', p.orgId, '--finance-may-read', 'true');
  t.same(await seen('finance'), { t: 1, m: 0 }, 'finance with the policy: the ticket, not the note');

  // For the owner too: only offered transitions, resolutions with resolving, numbers and messages fixed.
  t.equal(await failure(a.admin`update app.tickets set status = 'closed' where id = ${c.id}`), 'SVV23 INVALID_TRANSITION', 'new → closed is no transition');
  t.equal(await failure(a.admin`update app.tickets set status = 'solved' where id = ${c.id}`), 'SVV22 VALIDATION_FAILED', 'solving needs a resolution');
  t.equal(await failure(a.admin`update app.tickets set resolution = 'x' where id = ${c.id}`), 'SVV23 INVALID_TRANSITION', 'a resolution comes with a transition');
  t.equal(await failure(a.admin`update app.tickets set number = 'TKT-999999' where id = ${c.id}`), 'SVC09 CONFLICT', 'numbers never change');
  t.equal(await failure(a.admin`update app.tickets set status = 'solved', resolution = 'done' where id = ${c.id}`), 'ok', 'a legal transition');
  t.equal(await failure(a.admin`update app.ticket_messages set body = 'changed' where ticket_id = ${c.id}`), 'SVC09 CONFLICT', 'messages never change');
  t.equal(await failure(a.admin`delete from app.ticket_messages where ticket_id = ${c.id}`), 'SVC09 CONFLICT', 'messages are kept');
  t.equal(await failure(a.admin`insert into app.tickets (organization_id, subject, status, requester_email, created_by_client_id)
    values (${p.orgId}, 'x', 'open', 'r@x.example', ${p.id})`), 'SVV23 INVALID_TRANSITION', 'a ticket starts new');
  t.match(await failure(a.admin`insert into app.ticket_messages (organization_id, ticket_id, type, body, attachment_file_ids, author_client_id)
    values (${p.orgId}, ${c.id}, 'reply', 'x', '{fil_nope}', ${p.id})`), /^SVV22 ATTACHMENT_NOT_AVAILABLE/, 'attachments are files of the ticket');
});
