// How an API write wakes the webhook fan-out. Its transaction does not NOTIFY (NOTIFY's
// database-wide lock is held through the commit's flush and serialized every such write); the API
// wakes the fan-out after the commit: by a NOTIFY of its own that a worker elsewhere hears, or
// directly when the worker runs in the same process. The workers here poll once a minute, so a
// delivery within seconds was woken.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { assertProblem, startApp } from '../helpers/app.ts';
import { startReceiver, sleep, WEBHOOK_TEST_ENV } from '../helpers/receiver.ts';
import { startWorker } from '../../src/worker/index.ts';

const idem = () => ({ 'idempotency-key': randomUUID() });

/** On a timeout, where each created project's event stands (fanned out? attempted? how?). */
async function waitOrExplain<T>(a: { admin: import('postgres').Sql }, wait: Promise<T>): Promise<T> {
  try {
    return await wait;
  } catch (e) {
    const state = await a.admin`
      select e.resource_id, e.fanout_pending, d.status, d.attempt_count, d.lease_until is not null as leased,
             (select json_agg(json_build_object('n', x.attempt, 'status', x.response_status, 'error', x.error))
                from app.webhook_delivery_attempts x
               where x.organization_id = d.organization_id and x.delivery_id = d.id) as attempts
        from app.events e
        left join app.webhook_deliveries d on d.organization_id = e.organization_id and d.event_id = e.id
       where e.type = 'project.created' order by e.created_at`;
    throw new Error(`${(e as Error).message}; events: ${JSON.stringify(state)}`);
  }
}
const RARE_POLL = 60_000;
/** Under the full suite's load a first attempt can outlast the usual 4 s test deadline, and its
 * retry then waits for the rare poll: this file tests wake-ups, not retries. Still well under a poll. */
const ENV = { ...WEBHOOK_TEST_ENV, SVC_WEBHOOK_TIMEOUT_MS: '10000' };
const WITHIN = 30_000;

t.test('a worker elsewhere: the API notifies after the commit, once per write, never for a read or a refused write', async (t) => {
  const a = await startApp(t, ENV);
  const worker = await startWorker(a.config, { pollInterval: RARE_POLL });
  t.teardown(() => worker.stop());
  const p = await a.principal('manager');
  const rx = await startReceiver(t);
  const ep = await a.request({ method: 'POST', url: '/v1/webhook-endpoints', token: p.token, headers: idem(),
    payload: { url: rx.url, events: ['project.created'] } });
  t.equal(ep.statusCode, 201);
  const notified: string[] = [];
  const listener = await a.admin.listen('svc_webhook_fanout', (payload) => notified.push(payload));
  t.teardown(() => listener.unlisten());

  const key = idem();
  const created = await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: key, payload: { code: 'W1', name: 'W1' } });
  t.equal(created.statusCode, 201);
  const got = await waitOrExplain(a, rx.waitFor((e) => e.some((r) => r.body?.data?.object?.id === created.json.id), WITHIN));
  t.ok(got.length, 'delivered without waiting for the worker\'s poll');
  for (let i = 0; i < 50 && notified.length === 0; i++) await sleep(20);
  t.same(notified, [''], 'one wake-up, with no payload');

  notified.length = 0;
  t.equal((await a.request({ url: '/v1/projects', token: p.token })).statusCode, 200);
  const refused = await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: idem(), payload: { code: '' } });
  assertProblem(t, refused, 422, 'VALIDATION_FAILED');
  const replay = await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: key, payload: { code: 'W1', name: 'W1' } });
  t.equal(replay.headers['idempotent-replayed'], 'true');
  // A committed write whose events no endpoint subscribes to (project.updated) needs no wake-up either.
  const patched = await a.request({ method: 'PATCH', url: `/v1/projects/${created.json.id}`, token: p.token,
    headers: { 'if-match': created.headers.etag }, payload: { name: 'renamed' } });
  t.equal(patched.statusCode, 200);
  await a.admin`select pg_sleep(0.2)`;
  t.same(notified, [], 'a read, a refused write, a replay and a write without a subscribed event wake nothing');
});

t.test('the worker in the same process: woken directly, no NOTIFY at all', async (t) => {
  const a = await startApp(t, ENV);
  const worker = await startWorker(a.config, { pollInterval: RARE_POLL });
  t.teardown(() => worker.stop());
  // What serve() does once its worker has started.
  a.app.wakeFanout = worker.wakeFanout;
  const p = await a.principal('manager');
  const rx = await startReceiver(t);
  t.equal((await a.request({ method: 'POST', url: '/v1/webhook-endpoints', token: p.token, headers: idem(),
    payload: { url: rx.url, events: ['project.created'] } })).statusCode, 201);
  const notified: string[] = [];
  const listener = await a.admin.listen('svc_webhook_fanout', (payload) => notified.push(payload));
  t.teardown(() => listener.unlisten());
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: idem(), payload: { code: `IP${i}`, name: 'in process' } });
    t.equal(r.statusCode, 201);
    ids.push(r.json.id);
  }
  await waitOrExplain(a, rx.waitFor((e) => ids.every((id) => e.some((r) => r.body?.data?.object?.id === id)), WITHIN));
  t.pass('all five delivered without a poll');
  t.same(notified, [], 'and no notification was sent');
});

t.test('a job\'s event wakes the fan-out too: a report run\'s outcome is delivered without a poll', async (t) => {
  // On one server the job's commit notifies; on Citus that NOTIFY stays in the organization's
  // worker, and the worker process wakes its fan-out after the job itself.
  const a = await startApp(t, ENV);
  const worker = await startWorker(a.config, { pollInterval: RARE_POLL });
  t.teardown(() => worker.stop());
  a.app.wakeFanout = worker.wakeFanout;
  const p = await a.principal('manager');
  const rx = await startReceiver(t);
  t.equal((await a.request({ method: 'POST', url: '/v1/webhook-endpoints', token: p.token, headers: idem(),
    payload: { url: rx.url, events: ['report_run.succeeded'] } })).statusCode, 201);
  const created = await a.request({ method: 'POST', url: '/v1/reports/rpt_project_progress/runs', token: p.token, headers: idem(),
    payload: { parameters: {}, format: 'json' } });
  t.equal(created.statusCode, 202, created.body);
  const got = await rx.waitFor((e) => e.some((r) => r.body?.type === 'report_run.succeeded' && r.body?.data?.object?.id === created.json.id), WITHIN);
  t.ok(got.length, 'report_run.succeeded delivered within seconds, with the worker polling once a minute');
});
