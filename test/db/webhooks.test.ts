// Events and webhooks inside the database, without HTTP: the outbox is written by triggers, and
// the runtime role can neither forge nor read events, nor touch another client's endpoints.
import t from 'tap';
import postgres from 'postgres';
import { failure, oneConnection, beginRequest, inRequest, refusedOutsideItsOrganization, visibleRows, ON_CITUS } from '../helpers/sql.ts';
import { startApp, oneServer, type Client, type TestApp } from '../helpers/app.ts';
import { readFileSync } from 'node:fs';
import { EVENT_TYPES } from '../../src/events/catalog.ts';
import { buildOpenApi } from '../../src/http/openapi.ts';
import { operations } from '../../src/http/server.ts';

const opts = oneConnection;

/** On a cluster, jobs reach graphile-worker's queue from the organizations' outboxes, which the
 * worker drains about every second: drained now, as the worker would (nothing on one server). */
async function outboxDrained(a: TestApp): Promise<void> {
  await a.admin`select app_private.job_outbox_drain()`;
}
/** On a cluster a trigger's NOTIFY is sent in the organization's worker, not where the fan-out listens. */
const notifies = oneServer('a write\'s NOTIFY is sent in the organization\'s worker, not on the coordinator where the fan-out listens');

t.test('the catalogue in SQL equals the published one', async (t) => {
  const a = await startApp(t);
  const rows = await a.admin`select name, resource_type, emitted_by, description, subscribable from app_private.event_types order by name`;
  t.same(rows.map((r) => ({ name: r.name, resourceType: r.resource_type, emittedBy: r.emitted_by, description: r.description,
    subscribable: r.subscribable })), [...EVENT_TYPES].sort((x, y) => x.name.localeCompare(y.name)));
  // Published twice: the OpenAPI document's `webhooks` and the integrators' guide.
  t.same(Object.keys(buildOpenApi(operations).webhooks).sort(), EVENT_TYPES.map((e) => e.name).sort());
  const guide = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
  for (const e of EVENT_TYPES) t.match(guide, `| \`${e.name}\` | ${e.resourceType} |`, `docs/webhooks.md lists ${e.name}`);
});

t.test('runtime role: no context sees nothing; a client sees only its own; events cannot be forged', async (t) => {
  const a = await startApp(t);
  const orgA = await a.createOrg();
  const orgB = await a.createOrg();
  const c1 = await a.createClient(orgA, { roles: 'manager' });
  const c2 = await a.createClient(orgA, { roles: 'manager' });
  const cB = await a.createClient(orgB, { roles: 'manager' });
  const rt = postgres(a.runtimeUrl, opts);
  t.teardown(() => rt.end());
  const notified: string[] = [];
  // Each test has a database of its own, and NOTIFY stays within one database.
  const listener = await a.admin.listen('svc_webhook_fanout', (payload) => notified.push(payload));
  t.teardown(() => listener.unlisten());
  const as = <T>(c: Client, fn: (tx: postgres.TransactionSql) => Promise<T>) => a.admin.begin(async (tx) => {
    await beginRequest(tx, c);
    // As the surface's owner role: the runtime role itself reaches no table (tenancy.test.ts); on a
    // cluster in the organization's worker, where begin_request signed the context.
    return fn(await inRequest(t, a.runtimeUrl, tx as never, c.orgId, { role: 'svc_api' }) as never);
  }) as Promise<T>;

  // Endpoints made by the owner for c1 and cB (the API would also run the challenge).
  const [e1] = await a.admin`insert into app.webhook_endpoints (organization_id, client_id, url, events, secret_sealed)
    values (${orgA}, ${c1.id}, 'https://hooks.example/1', '{project.created}', 'sealed') returning id`;
  await a.admin`insert into app.webhook_endpoints (organization_id, client_id, url, events, secret_sealed)
    values (${orgB}, ${cB.id}, 'https://hooks.example/b', '{project.created}', 'sealed')`;
  await as(c1, (tx) => tx`select * from api.project_create(${tx.json({ code: 'P1', name: 'P1' })}, null)`);
  const [ev] = await a.admin`select id from app.events where organization_id = ${orgA} and type = 'project.created'`;
  t.ok(ev, 'the project write emitted its event in the same transaction');
  const [{ pending }] = await a.admin`select fanout_pending as pending from app.events where id = ${ev!.id}` as any;
  t.equal(pending, true, 'a subscribed endpoint exists: fan-out queued');
  // An API request's transaction (begin_request) does not notify: NOTIFY's database-wide lock,
  // held through the commit's flush, would serialize every write; the API wakes the fan-out after
  // the commit instead (test/http/webhook-wake.test.ts). The same write by anyone else notifies.
  await a.admin`select pg_sleep(0.1)`;
  t.same(notified, [], 'a request\'s commit does not notify (the API wakes the fan-out itself)', notifies);
  await a.admin`insert into app.projects (organization_id, code, name, currency) values (${orgA}, 'P0', 'P0', 'EUR')`;
  for (let i = 0; i < 100 && notified.length === 0 && !notifies.skip; i++) await new Promise((r) => setTimeout(r, 20));
  t.same(notified, [''], 'another writer\'s commit notified the fan-out, once, with no payload (any role may LISTEN)', notifies);
  await outboxDrained(a);
  const [job] = await a.admin`select count(*)::int as n from graphile_worker.jobs`;
  t.equal(job!.n, 0, 'no job per event: the worker claims pending events in batches');
  // The fan-out of the event (as the worker runs it): a delivery to c1's endpoint, and c1 among the
  // clients who may read the event.
  const fanned = await a.admin`select delivery_id from app_private.webhook_fanout(${orgA}, ${ev!.id}, 30)`;
  t.equal(fanned.length, 1, 'one delivery, to c1\'s endpoint');
  const [readers] = await a.admin`select client_ids from app.events where organization_id = ${orgA} and id = ${ev!.id}`;
  t.same(readers!.client_ids, [c1.id], 'the fan-out names c1 among the event\'s readers');

  // Without a request context: nothing at all.
  for (const table of ['app.webhook_endpoints', 'app.webhook_deliveries', 'app.webhook_delivery_attempts', 'app.events',
    'api.webhook_endpoints', 'api.webhook_deliveries']) {
    t.equal(await visibleRows(rt, table), 0, `${table}: nothing without a request context`);
  }
  // c1 sees its endpoint, its delivery and (through it) the event; c2 and cB see none of them.
  t.equal((await as(c1, (tx) => tx`select id from api.webhook_endpoints`)).length, 1);
  t.equal((await as(c1, (tx) => tx`select id from api.webhook_deliveries`)).length, 1);
  // A request's statements name its organization (on a cluster, one shard's rows).
  t.equal((await as(c1, (tx) => tx`select id from app.events where organization_id = ${orgA}`)).length, 1, 'only events of its own deliveries');
  t.equal((await as(c2, (tx) => tx`select id from api.webhook_endpoints`)).length, 0, 'another client of the same organization');
  t.equal((await as(c2, (tx) => tx`select id from app.events where organization_id = ${orgA}`)).length, 0);
  t.equal((await as(cB, (tx) => tx`select id from api.webhook_endpoints`)).length, 1, 'cB sees only its own');
  t.equal((await as(cB, (tx) => tx`select id from app.events where organization_id = ${orgB}`)).length, 0);
  // On a cluster, a statement of B's request that names A is refused whole.
  const bSeesA = await as(cB, (tx) => tx`select id from app.events where organization_id = ${orgA}`)
    .then((r) => r.length, (e) => { if (refusedOutsideItsOrganization(e)) return 0; throw e; });
  t.equal(bSeesA, 0, 'cB sees none of the other organization\'s events');

  // c2 cannot change, take over or remove c1's endpoint, nor create one for c1.
  t.equal((await as(c2, (tx) => tx`update app.webhook_endpoints set url = 'https://evil.example/' where id = ${e1!.id} and organization_id = ${orgA} returning id`)).length, 0);
  t.match(await failure(as(c2, (tx) => tx`update app.webhook_endpoints set client_id = ${c2.id} where id = ${e1!.id} and organization_id = ${orgA}`)), /^42501/);
  t.match(await failure(as(c1, (tx) => tx`delete from app.webhook_endpoints where id = ${e1!.id} and organization_id = ${orgA}`)), /^42501/, 'no delete grant');
  t.match(await failure(as(c2, (tx) => tx`insert into app.webhook_endpoints (organization_id, client_id, url, events, secret_sealed)
    values (${orgA}, ${c1.id}, 'https://x.example/', '{project.created}', 's')`)), /^42501/, 'RLS: only for itself');
  t.equal(await failure(as(c2, (tx) => tx`select * from api.webhook_endpoint_set_status(${e1!.id}, 'disabled')`)),
    'SVN04 WEBHOOK_ENDPOINT_NOT_FOUND');
  t.equal(await failure(as(c2, (tx) => tx`select * from api.webhook_endpoint_test(${e1!.id})`)), 'SVN04 WEBHOOK_ENDPOINT_NOT_FOUND');

  // Events, deliveries and attempts are written by triggers and the worker only.
  t.match(await failure(as(c1, (tx) => tx`insert into app.events (organization_id, type, resource_type, resource_id, resource_version)
    values (${orgA}, 'project.created', 'project', 'prj_x', 1)`)), /^42501/, 'no event forging');
  t.match(await failure(as(c1, (tx) => tx`delete from app.events where organization_id = ${orgA}`)), /^42501/, 'no event erasing');
  t.match(await failure(as(c1, (tx) => tx`update app.webhook_deliveries set status = 'succeeded' where organization_id = ${orgA}`)), /^42501/);
  t.match(await failure(as(c1, (tx) => tx`insert into app.webhook_delivery_attempts values (${orgA}, 'whd_x', 1, now(), 1, 200, null)`)), /^42501/);
  for (const fn of [
    `app_private.emit_event('${orgA}', 'project.created', 'project', 'prj_x', 1, null)`,
    `app_private.begin_delivery_context('${orgA}', '${c1.id}')`,
    `app_private.client_may_read('${orgA}', '${c1.id}', 'project.created', 'project', 'prj_x')`,
    `app_private.webhook_fanout('${orgA}', 'evt_x', 10)`,
    `app_private.webhook_fanout_any(10, 10)`,
    `app_private.webhook_fanout_batch('${orgA}', 10, 10)`,
    `app_private.webhook_fanout_organizations(10)`,
    `app_private.webhook_fanout_event(null::app.events, 10)`,
    `app_private.webhook_claim('${orgA}', 'whd_x', 10)`,
    `app_private.webhook_record_attempt('${orgA}', 'whd_x', 1, now(), 1, 200, null, false, null, 1, 50, 86400)`,
    `app_private.webhook_enqueue('${orgA}', 'whd_x', null)`,
    `app_private.webhook_recover(interval '1 second')`,
    `app_private.purge_webhook_history(interval '1 day')`,
    `app_private.webhook_cancel('${orgA}', 'whd_x', 'x')`,
    `graphile_worker.add_job('webhook_deliver', '{}'::json)`,
  ]) {
    // As one text, through the request's routing (a template of one part).
    const text = Object.assign([`select ${fn}`], { raw: [`select ${fn}`] }) as unknown as TemplateStringsArray;
    // On a cluster the statement runs in the organization's worker, where graphile-worker's schema
    // does not exist (3F000): the check on the coordinator follows.
    const refused = ON_CITUS && fn.startsWith('graphile_worker.') ? /^(42501|3F000)/ : /^42501/;
    t.match(await failure(as(c1, (tx) => tx(text))), refused, `${fn.split('(')[0]} is not for the runtime role`);
  }
  // The job queue is on the coordinator: there too, the runtime role may not add a job.
  t.match(await failure(rt`select graphile_worker.add_job('webhook_deliver', '{}'::json)`), /^42501/,
    'graphile_worker.add_job is not for the runtime role where the queue is');

  // Any writer: subscriptions name catalogue events, URLs are https.
  t.equal(await failure(a.admin`update app.webhook_endpoints set events = '{nope.nope}' where id = ${e1!.id}`),
    'SVV22 WEBHOOK_EVENT_NOT_SUPPORTED');
  t.match(await failure(a.admin`update app.webhook_endpoints set url = 'http://hooks.example/' where id = ${e1!.id}`), /^23514/);
  t.match(await failure(a.admin`insert into app.webhook_endpoints (organization_id, client_id, url, events, secret_sealed)
    values (${orgB}, ${c1.id}, 'https://x.example/', '{project.created}', 's')`), /^23503/, 'an endpoint belongs to its client\'s organization');
});

t.test('no subscriber, no notification; a rolled-back write leaves no event and notifies nothing', async (t) => {
  const a = await startApp(t);
  const org = await a.createOrg();
  const c = await a.createClient(org, { roles: 'manager' });
  const rt = postgres(a.runtimeUrl, opts);
  t.teardown(() => rt.end());
  const notified: string[] = [];
  const listener = await a.admin.listen('svc_webhook_fanout', (payload) => notified.push(payload));
  t.teardown(() => listener.unlisten());
  await rt.begin(async (tx) => {
    await beginRequest(tx, c);
    const q = await inRequest(t, a.runtimeUrl, tx as never, c.orgId) as unknown as postgres.TransactionSql;
    await q`select * from api.project_create(${q.json({ code: 'Q1', name: 'Q1' })}, null)`;
  });
  const [ev] = await a.admin`select fanout_pending from app.events where organization_id = ${org}`;
  t.equal(ev!.fanout_pending, false, 'recorded, nothing to fan out');
  const jobs = async () => { await outboxDrained(a); return (await a.admin`select count(*)::int as n from graphile_worker.jobs`)[0]!.n; };
  t.equal(await jobs(), 0, 'no job without a subscriber');
  // A notification that was sent would have arrived by the time a later statement on another connection returns.
  await a.admin`select pg_sleep(0.1)`;
  t.same(notified, [], 'and no notification', notifies);
  await a.admin`insert into app.webhook_endpoints (organization_id, client_id, url, events, secret_sealed)
    values (${org}, ${c.id}, 'https://hooks.example/1', '{project.created}', 'sealed')`;
  await failure(rt.begin(async (tx) => {
    await beginRequest(tx, c);
    const q = await inRequest(t, a.runtimeUrl, tx as never, c.orgId) as unknown as postgres.TransactionSql;
    await q`select * from api.project_create(${q.json({ code: 'Q2', name: 'Q2' })}, null)`;
    throw new Error('roll back');
  }));
  const [n] = await a.admin`select count(*)::int as n from app.events where organization_id = ${org}`;
  t.equal(n!.n, 1, 'the rolled-back project emitted no event');
  await a.admin`select pg_sleep(0.1)`;
  t.same(notified, [], 'and notified nothing', notifies);
  // The same write committed by a request: no notification (the API wakes the fan-out after its
  // commit); by another writer: one notification, even after a request set svc.fanout_wake in its own transaction.
  await rt.begin(async (tx) => {
    await beginRequest(tx, c);
    const q = await inRequest(t, a.runtimeUrl, tx as never, c.orgId) as unknown as postgres.TransactionSql;
    await q`select * from api.project_create(${q.json({ code: 'Q3', name: 'Q3' })}, null)`;
  });
  await a.admin`select pg_sleep(0.1)`;
  t.same(notified, [], 'a request\'s committed write does not notify', notifies);
  await a.admin`insert into app.projects (organization_id, code, name, currency) values (${org}, 'Q4', 'Q4', 'EUR')`;
  for (let i = 0; i < 100 && notified.length === 0 && !notifies.skip; i++) await new Promise((r) => setTimeout(r, 20));
  t.same(notified, [''], 'a committed write by another writer with a subscriber notifies', notifies);
});

/** An organization with a client and one endpoint of its; `delivery(attempt, retryUntil)` makes a
 * delivery of a new event to it, at that attempt, its retries ending `retryUntil` (an interval) from
 * now: what app_private.webhook_record_attempt is given. */
async function endpointWithDeliveries(a: TestApp) {
  const org = await a.createOrg();
  const c = await a.createClient(org, { roles: 'manager' });
  const [ep] = await a.admin`insert into app.webhook_endpoints (organization_id, client_id, url, events, secret_sealed)
    values (${org}, ${c.id}, 'https://hooks.example/1', '{project.created}', 'sealed') returning id`;
  const delivery = async (attempt: number, retryUntil: string) => {
    const [ev] = await a.admin`insert into app.events (organization_id, type, resource_type, resource_id, resource_version)
      values (${org}, 'project.created', 'project', 'prj_x', 1) returning id`;
    const [d] = await a.admin`insert into app.webhook_deliveries (organization_id, client_id, endpoint_id, event_id, attempt_count, retry_until)
      values (${org}, ${c.id}, ${ep!.id}, ${ev!.id}, ${attempt}, now() + ${retryUntil}::interval) returning id`;
    return d!.id as string;
  };
  return { org, endpoint: ep!.id as string, delivery };
}

t.test('the last retry is at the end of the 72 hours, then the delivery fails', async (t) => {
  const a = await startApp(t);
  const { org, delivery } = await endpointWithDeliveries(a);
  // Attempt 8 fails 10 minutes before retry_until: the schedule says 20 h, the window says 10 minutes.
  const d = { id: await delivery(8, '10 minutes') };
  const record = (attempt: number) => a.admin`select app_private.webhook_record_attempt(${org}, ${d!.id}, ${attempt}, now(), 5, 503, 'http_503',
    true, null, 1, 50, 86400) as outcome`;
  t.equal((await record(8))[0]!.outcome, 'retrying');
  const [after] = await a.admin`select next_attempt_at = retry_until as at_end from app.webhook_deliveries where id = ${d!.id}`;
  t.equal(after!.at_end, true, 'the final attempt is scheduled at retry_until');
  await a.admin`update app.webhook_deliveries set attempt_count = 9, retry_until = now() - interval '1 second' where id = ${d!.id}`;
  t.equal((await record(9))[0]!.outcome, 'failed', 'a failure at the end of the window is final');
  const [fin] = await a.admin`select status, status_reason from app.webhook_deliveries where id = ${d!.id}`;
  t.same({ ...fin }, { status: 'failed', status_reason: 'retry_period_exhausted' });
});

t.test('the failure that reaches the threshold disables the endpoint, though its transaction began before the streak did', async (t) => {
  const a = await startApp(t);
  const { org, endpoint, delivery } = await endpointWithDeliveries(a);
  const [first, second] = [await delivery(1, '1 day'), await delivery(1, '1 day')];
  // Two deliveries' attempts recorded at once, as the worker does (each waits for the endpoint's
  // row): the one whose transaction began first is recorded second. A 404 is final; two failures
  // disable, with no window (SVC_WEBHOOK_DISABLE_AFTER_FAILURES=2, _SECONDS=0).
  const record = (sql: postgres.Sql | postgres.ReservedSql, id: string) => sql<{ outcome: string }[]>`
    select app_private.webhook_record_attempt(${org}, ${id}, 1, now(), 5, 404, 'http_404', false, null, 1, 2, 0) as outcome`;
  const early = await a.admin.reserve();
  try {
    await early`begin`;
    await early`select now()`; // its now() from here (on a cluster the worker's transaction begins at the call)
    await new Promise((r) => setTimeout(r, 50));
    t.equal((await record(a.admin, second))[0]!.outcome, 'failed', 'a later transaction starts the streak');
    t.equal((await record(early, first))[0]!.outcome, 'failed,endpoint_disabled', 'the earlier one reaches the threshold and disables');
    await early`commit`;
  } finally {
    early.release();
  }
  const [row] = await a.admin`select status, disabled_reason, consecutive_failures from app.webhook_endpoints where id = ${endpoint}`;
  t.same({ ...row }, { status: 'disabled', disabled_reason: 'delivery_failures', consecutive_failures: 2 });
  t.match(await a.cli('notifications', 'list', '--org', org), { notifications: [{ kind: 'webhook_endpoint_disabled', subject_id: endpoint }] });
});

t.test('recovery: an exhausted or missing job does not strand a delivery; enabling needs the challenge', async (t) => {
  const a = await startApp(t);
  const org = await a.createOrg();
  const c = await a.createClient(org, { roles: 'manager' });
  const [ep] = await a.admin`insert into app.webhook_endpoints (organization_id, client_id, url, events, secret_sealed)
    values (${org}, ${c.id}, 'https://hooks.example/1', '{project.created}', 'sealed') returning id`;
  const [ev] = await a.admin`insert into app.events (organization_id, type, resource_type, resource_id, resource_version)
    values (${org}, 'project.created', 'project', 'prj_x', 1) returning id`;
  const [d] = await a.admin`insert into app.webhook_deliveries (organization_id, client_id, endpoint_id, event_id, next_attempt_at)
    values (${org}, ${c.id}, ${ep!.id}, ${ev!.id}, now() - interval '1 hour') returning id`;
  await a.admin`select app_private.webhook_enqueue(${org}, ${d!.id})`;
  await outboxDrained(a);
  // What recovery queued is in the queue before the next look at it.
  const recover = async () => {
    const n = (await a.admin`select app_private.webhook_recover(interval '1 second') as n`)[0]!.n;
    await outboxDrained(a);
    return n;
  };
  t.equal(await recover(), 0, 'a queued job is alive: left alone');
  await a.admin`update graphile_worker._private_jobs set attempts = max_attempts where key = ${'deliver:' + d!.id}`;
  t.equal(await recover(), 1, 'a job out of attempts is dead: queued again');
  const [job] = await a.admin`select attempts from graphile_worker._private_jobs where key = ${'deliver:' + d!.id}`;
  t.equal(job!.attempts, 0, 'with fresh attempts');
  // A lease that ran out (its worker died mid-attempt) is queued again even while its job waits for
  // a later retry (graphile-worker's backoff after a failed run): the delivery need not wait for it.
  await a.admin`update graphile_worker._private_jobs set run_at = now() + interval '1 hour' where key = ${'deliver:' + d!.id}`;
  await a.admin`update app.webhook_deliveries set lease_until = now() - interval '1 second' where id = ${d!.id}`;
  t.equal(await recover(), 1, 'a lease that ran out: queued again, its job alive or not');
  const [after] = await a.admin`select lease_until, next_attempt_at <= now() as due from app.webhook_deliveries where id = ${d!.id}`;
  t.same({ ...after }, { lease_until: null, due: true }, 'the lease is cleared and the delivery is due');
  await a.admin`delete from graphile_worker._private_jobs`;
  await a.admin`update app.webhook_deliveries set next_attempt_at = now() - interval '1 hour' where id = ${d!.id}`;
  t.equal(await recover(), 1, 'a missing job: queued again');

  await a.admin`update app.webhook_endpoints set status = 'disabled', disabled_reason = 'delivery_failures' where id = ${ep!.id}`;
  const rt = postgres(a.runtimeUrl, opts);
  t.teardown(() => rt.end());
  const enable = (verified: boolean) => rt.begin(async (tx) => {
    await beginRequest(tx, c);
    const q = await inRequest(t, a.runtimeUrl, tx as never, c.orgId) as unknown as postgres.TransactionSql;
    return q`select * from api.webhook_endpoint_set_status(${ep!.id}, 'enabled', ${verified})`;
  });
  t.equal(await failure(enable(false)), 'SVC09 CONFLICT', 'not without a challenge');
  t.equal(await failure(enable(true)), 'ok');
});
