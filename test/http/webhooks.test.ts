// Webhook endpoints over HTTP, with a real HTTPS receiver on loopback and the real worker.
import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { assertProblem, startApp, CITUS_WORKERS, type TestApp } from '../helpers/app.ts';
import { startReceiver, verifySignature, sleep, WEBHOOK_TEST_ENV, type Receiver } from '../helpers/receiver.ts';
import { startWorker } from '../../src/worker/index.ts';

const idem = () => ({ 'idempotency-key': randomUUID() });

async function setup(tt: Test, env: Record<string, string> = {}) {
  const a = await startApp(tt, { ...WEBHOOK_TEST_ENV, ...env });
  const worker = await startWorker(a.config, { pollInterval: 50 });
  tt.teardown(() => worker.stop());
  const p = await a.principal('member,manager,finance,hr');
  return { a, p, worker };
}

async function createEndpoint(a: TestApp, token: string, url: string, events: string[], headers: Record<string, string> = idem()) {
  return a.request({ method: 'POST', url: '/v1/webhook-endpoints', token, headers, payload: { url, events, description: 'test' } });
}

async function createProject(a: TestApp, token: string, code = 'P' + Math.floor(Math.random() * 1e9)) {
  const res = await a.request({ method: 'POST', url: '/v1/projects', token, headers: idem(), payload: { code, name: 'Project ' + code } });
  if (res.statusCode !== 201) throw new Error(`createProject ${res.statusCode} ${res.body}`);
  return res.json;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

t.test('create: secret once, verification challenge, signed deliveries with the exact envelope', async (t) => {
  const { a, p } = await setup(t);
  const rx = await startReceiver(t);
  const key = idem();
  const res = await createEndpoint(a, p.token, rx.url, ['project.created', 'project.updated'], key);
  t.equal(res.statusCode, 201, 'endpoint created');
  t.match(res.json, { object: 'webhook_endpoint', url: rx.url, events: ['project.created', 'project.updated'], status: 'enabled',
    disabled_reason: null, description: 'test', version: 1 });
  t.match(res.json.id, /^whe_/);
  t.match(res.json.secret, /^whsec_[A-Za-z0-9_-]{43}$/);
  t.equal(res.headers.location, `/v1/webhook-endpoints/${res.json.id}`);
  const secret = res.json.secret as string;

  // The challenge arrived first, signed with the new secret.
  const challenge = rx.received.find((r) => r.body?.type === 'webhook_endpoint.verification');
  t.ok(challenge, 'verification challenge received');
  t.ok(verifySignature(secret, challenge!.headers, challenge!.raw), 'challenge signed with the new secret');
  t.match(challenge!.body.data, { object: { type: 'webhook_endpoint', id: res.json.id }, challenge: /^[A-Za-z0-9_-]{32}$/ });

  // The secret is never shown again: not by GET, not by list, not by an idempotent replay.
  const get = await a.request({ url: `/v1/webhook-endpoints/${res.json.id}`, token: p.token });
  t.equal(get.statusCode, 200);
  t.notOk('secret' in get.json, 'GET has no secret');
  t.equal(get.headers.etag, '"1"');
  const list = await a.request({ url: '/v1/webhook-endpoints', token: p.token });
  t.equal(list.json.data.length, 1);
  t.notOk('secret' in list.json.data[0]);
  const replay = await createEndpoint(a, p.token, rx.url, ['project.created', 'project.updated'], key);
  assertProblem(t, replay, 409, 'WEBHOOK_SECRET_NOT_AVAILABLE');
  t.notMatch(replay.body, /whsec_/, 'no secret in the problem');
  t.equal(replay.json.resource_id, res.json.id);
  const [stored] = await a.admin`select response_body from app.idempotency_keys where key = ${key['idempotency-key']}`;
  t.notMatch(String(stored?.response_body), /whsec_/, 'the stored idempotent response holds no secret');
  const [sealed] = await a.admin`select secret_sealed from app.webhook_endpoints where id = ${res.json.id}`;
  t.notMatch(sealed!.secret_sealed, new RegExp(secret.slice(6, 20)), 'the secret is stored sealed');

  // A committed change is delivered, signed, with exactly the spec's envelope.
  const project = await createProject(a, p.token);
  const [ev] = await rx.waitFor((e) => e.length >= 1);
  t.ok(verifySignature(secret, ev!.headers, ev!.raw), 'delivery signature verifies independently');
  t.match(ev!.headers['svc-webhook-signature'], /^v1=[0-9a-f]{64}$/);
  t.equal(ev!.headers['svc-webhook-id'], ev!.body.id);
  t.ok(Math.abs(Number(ev!.headers['svc-webhook-timestamp']) - Date.now() / 1000) < 10, 'timestamp in Unix seconds');
  t.same(Object.keys(ev!.body), ['id', 'type', 'api_version', 'created_at', 'organization_id', 'data']);
  t.match(ev!.body, { type: 'project.created', api_version: 'v1', organization_id: p.orgId,
    data: { object: { type: 'project', id: project.id, version: 1 } } });
  t.match(ev!.body.id, /^evt_/);
  t.match(ev!.body.created_at, ISO);
  t.same(Object.keys(ev!.body.data), ['object'], 'identifiers only: no resource fields');
  t.same(Object.keys(ev!.body.data.object), ['type', 'id', 'version']);
  t.notOk(verifySignature('whsec_wrong', ev!.headers, ev!.raw), 'a wrong secret does not verify');
  t.notOk(verifySignature(secret, ev!.headers, ev!.raw + ' '), 'a changed body does not verify');

  // Not subscribed: nothing. Subscribed update: delivered with the new version.
  const up = await a.request({ method: 'PATCH', url: `/v1/projects/${project.id}`, token: p.token,
    headers: { 'if-match': '"1"' }, payload: { name: 'Renamed' } });
  t.equal(up.statusCode, 200, up.body);
  await a.request({ method: 'POST', url: `/v1/projects/${project.id}/archive`, token: p.token, headers: idem() });
  const evs = await rx.waitFor((e) => e.length >= 2);
  await sleep(300);
  t.same(rx.events().map((e) => e.body.type), ['project.created', 'project.updated'], 'archive not subscribed: not delivered');
  t.equal(evs[1]!.body.data.object.version, 2);

  // Delivery records.
  const deliveries = await a.request({ url: `/v1/webhook-endpoints/${res.json.id}/deliveries`, token: p.token });
  t.equal(deliveries.statusCode, 200);
  t.equal(deliveries.json.data.length, 2);
  const d = deliveries.json.data.find((x: any) => x.event.type === 'project.created');
  t.match(d, { object: 'webhook_delivery', endpoint_id: res.json.id, status: 'succeeded', attempt_count: 1,
    event: { id: ev!.body.id, type: 'project.created', data: { object: { type: 'project', id: project.id, version: 1 } } },
    last_attempt: { attempt: 1, response_status: 204, error: null } });
  const one = await a.request({ url: `/v1/webhook-endpoints/${res.json.id}/deliveries/${d.id}`, token: p.token });
  t.equal(one.statusCode, 200);
  t.equal(one.json.attempts.length, 1);
  t.match(one.json.attempts[0], { attempt: 1, response_status: 204, duration_ms: Number });
  const filtered = await a.request({ url: `/v1/webhook-endpoints/${res.json.id}/deliveries?event_type=project.updated`, token: p.token });
  t.same(filtered.json.data.map((x: any) => x.event.type), ['project.updated']);
});

t.test('creation refuses unsafe URLs and unknown events; verification failures create nothing', async (t) => {
  const { a, p } = await setup(t);
  const rx = await startReceiver(t);
  for (const url of [
    `http://localhost:${rx.port}/hooks`,
    `https://127.0.0.1:${rx.port}/hooks`,
    'https://10.1.2.3/hooks',
    'https://192.168.0.10/hooks',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/hooks',
    'https://[::ffff:127.0.0.1]/hooks',
    'https://[fe80::1]/hooks',
    'https://100.64.0.1/hooks',
    'https://224.0.0.1/hooks',
    'https://0.0.0.0/hooks',
    'https://user:pass@example.com/hooks',
    'https://printer.local/hooks',
    'https://metadata.google.internal/computeMetadata/v1',
    'https://foo.localhost/hooks',
    'not a url',
  ]) {
    const res = await createEndpoint(a, p.token, url, ['project.created']);
    assertProblem(t, res, 422, 'WEBHOOK_URL_UNSAFE');
    t.equal(res.json.errors?.[0]?.pointer, '/url', url);
  }
  const bad = await createEndpoint(a, p.token, rx.url, ['project.created', 'project.exploded', 'webhook_endpoint.test']);
  assertProblem(t, bad, 422, 'WEBHOOK_EVENT_NOT_SUPPORTED');
  t.same(bad.json.errors.map((e: any) => e.pointer), ['/events/1', '/events/2']);
  const empty = await createEndpoint(a, p.token, rx.url, []);
  assertProblem(t, empty, 422, 'VALIDATION_FAILED');

  // The receiver does not echo the challenge, answers 500, or hangs past the deadline.
  const silent = await startReceiver(t, { answerChallenges: false });
  silent.behave(() => ({ status: 200, body: '{}' }));
  assertProblem(t, await createEndpoint(a, p.token, silent.url, ['project.created']), 422, 'WEBHOOK_VERIFICATION_FAILED');
  silent.behave(() => ({ status: 500 }));
  assertProblem(t, await createEndpoint(a, p.token, silent.url, ['project.created']), 422, 'WEBHOOK_VERIFICATION_FAILED');
  silent.behave(() => ({ hang: true }));
  const hung = await createEndpoint(a, p.token, silent.url, ['project.created']);
  assertProblem(t, hung, 422, 'WEBHOOK_VERIFICATION_FAILED');
  t.match(hung.json.detail, /timeout/);
  const closed = await createEndpoint(a, p.token, `https://localhost:1/hooks`, ['project.created']);
  assertProblem(t, closed, 422, 'WEBHOOK_VERIFICATION_FAILED');
  const list = await a.request({ url: '/v1/webhook-endpoints', token: p.token });
  t.equal(list.json.data.length, 0, 'no endpoint was left behind');
  const missingKey = await a.request({ method: 'POST', url: '/v1/webhook-endpoints', token: p.token,
    payload: { url: rx.url, events: ['project.created'] } });
  assertProblem(t, missingKey, 400, 'IDEMPOTENCY_KEY_REQUIRED');
});

t.test('only the client\'s own endpoints; PATCH needs If-Match; disable, enable, rotate', async (t) => {
  const { a, p } = await setup(t);
  const rx = await startReceiver(t);
  const other = await a.createClient(p.orgId, { roles: 'manager' });
  const otherToken = await a.token(other);
  const ep = (await createEndpoint(a, p.token, rx.url, ['project.created'])).json;

  for (const [method, url] of [['GET', ''], ['PATCH', ''], ['POST', '/disable'], ['POST', '/enable'], ['POST', '/rotate-secret'],
    ['POST', '/test'], ['GET', '/deliveries']] as const) {
    const res = await a.request({ method, url: `/v1/webhook-endpoints/${ep.id}${url}`, token: otherToken,
      headers: { ...idem(), 'if-match': '"1"' }, payload: method === 'PATCH' ? { description: 'x' } : undefined });
    assertProblem(t, res, 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
  }
  t.equal((await a.request({ url: '/v1/webhook-endpoints', token: otherToken })).json.data.length, 0, 'another client lists nothing');
  assertProblem(t, await a.request({ url: '/v1/webhook-endpoints/whe_doesnotexist', token: p.token }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');

  // PATCH
  assertProblem(t, await a.request({ method: 'PATCH', url: `/v1/webhook-endpoints/${ep.id}`, token: p.token,
    payload: { description: 'x' } }), 428, 'PRECONDITION_REQUIRED');
  assertProblem(t, await a.request({ method: 'PATCH', url: `/v1/webhook-endpoints/${ep.id}`, token: p.token,
    headers: { 'if-match': '"7"' }, payload: { description: 'x' } }), 412, 'STALE_RESOURCE');
  assertProblem(t, await a.request({ method: 'PATCH', url: `/v1/webhook-endpoints/${ep.id}`, token: p.token,
    headers: { 'if-match': '"1"' }, payload: { events: ['nope.nope'] } }), 422, 'WEBHOOK_EVENT_NOT_SUPPORTED');
  assertProblem(t, await a.request({ method: 'PATCH', url: `/v1/webhook-endpoints/${ep.id}`, token: p.token,
    headers: { 'if-match': '"1"' }, payload: { url: 'https://10.0.0.1/x' } }), 422, 'WEBHOOK_URL_UNSAFE');
  const silent = await startReceiver(t, { answerChallenges: false });
  assertProblem(t, await a.request({ method: 'PATCH', url: `/v1/webhook-endpoints/${ep.id}`, token: p.token,
    headers: { 'if-match': '"1"' }, payload: { url: silent.url } }), 422, 'WEBHOOK_VERIFICATION_FAILED');
  const rx2 = await startReceiver(t);
  const moved = await a.request({ method: 'PATCH', url: `/v1/webhook-endpoints/${ep.id}`, token: p.token,
    headers: { 'if-match': '"1"' }, payload: { url: rx2.url, events: ['task.created', 'project.created'], description: null } });
  t.equal(moved.statusCode, 200, moved.body);
  t.match(moved.json, { url: rx2.url, events: ['project.created', 'task.created'], description: null, version: 2 });
  t.equal(moved.headers.etag, '"2"');
  t.ok(rx2.received.some((r) => r.body?.type === 'webhook_endpoint.verification'), 'the new URL was challenged');

  // Disable: no deliveries; enable: challenged again.
  const dis = await a.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/disable`, token: p.token, headers: idem() });
  t.match(dis.json, { status: 'disabled', disabled_reason: 'client' });
  await createProject(a, p.token);
  await sleep(500);
  t.equal(rx2.events().length, 0, 'a disabled endpoint receives nothing');
  const challengesBefore = rx2.received.length;
  const en = await a.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/enable`, token: p.token, headers: idem() });
  t.match(en.json, { status: 'enabled', disabled_reason: null });
  t.equal(rx2.received.length, challengesBefore + 1, 'enable re-verifies the endpoint');
  const enabledList = await a.request({ url: '/v1/webhook-endpoints?status=disabled', token: p.token });
  t.equal(enabledList.json.data.length, 0);

  // Rotate: the new secret once; both secrets sign while the old one is still valid.
  const oldSecret = await a.admin`select 1`; void oldSecret;
  const first = await a.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/test`, token: p.token, headers: idem() });
  t.equal(first.statusCode, 202, first.body);
  t.match(first.json, { object: 'webhook_delivery', status: 'pending', event: { type: 'webhook_endpoint.test' } });
  const rotKey = idem();
  const rot = await a.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/rotate-secret`, token: p.token, headers: rotKey });
  t.equal(rot.statusCode, 200, 'rotated');
  t.match(rot.json.secret, /^whsec_/);
  t.match(rot.json.previous_secret_expires_at, ISO);
  assertProblem(t, await a.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/rotate-secret`, token: p.token, headers: rotKey }),
    409, 'WEBHOOK_SECRET_NOT_AVAILABLE');
  await a.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/test`, token: p.token, headers: idem() });
  const got = await rx2.waitFor((e) => e.length >= 2);
  const afterRotation = got[1]!;
  t.equal(String(afterRotation.headers['svc-webhook-signature']).split(',').length, 2, 'two signatures during the rotation window');
  t.ok(verifySignature(rot.json.secret, afterRotation.headers, afterRotation.raw), 'the new secret verifies');
  t.equal(afterRotation.body.type, 'webhook_endpoint.test');
  const immediate = await a.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/rotate-secret`, token: p.token,
    headers: idem(), payload: { previous_secret_expires_in: 0 } });
  t.equal(immediate.json.previous_secret_expires_at, null);
  await a.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/test`, token: p.token, headers: idem() });
  const third = (await rx2.waitFor((e) => e.length >= 3))[2]!;
  t.equal(String(third.headers['svc-webhook-signature']).split(',').length, 1, 'the old secret expired at once');
  t.ok(verifySignature(immediate.json.secret, third.headers, third.raw));
  t.notOk(verifySignature(rot.json.secret, third.headers, third.raw), 'the rotated-out secret no longer verifies');
});

t.test('receiver failures follow the rules: retry, permanent failure, no redirects, deadline, resets', async (t) => {
  const { a, p } = await setup(t);
  const cases: { name: string; behaviour: Parameters<Receiver['behave']>[0]; expect: Record<string, unknown>; attempts: number }[] = [
    { name: '500 then 200', behaviour: (_r, n) => ({ status: n === 1 ? 500 : 200 }), expect: { status: 'succeeded' }, attempts: 2 },
    { name: '429 then 200', behaviour: (_r, n) => (n === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 }),
      expect: { status: 'succeeded' }, attempts: 2 },
    { name: '400 is permanent', behaviour: () => ({ status: 400 }), expect: { status: 'failed', status_reason: 'permanent_failure' }, attempts: 1 },
    { name: '410 is permanent', behaviour: () => ({ status: 410 }), expect: { status: 'failed', status_reason: 'permanent_failure' }, attempts: 1 },
    { name: 'redirect is not followed', behaviour: (_r, n) => (n === 1 ? { status: 302, headers: { location: 'https://localhost:1/elsewhere' } } : { status: 200 }),
      expect: { status: 'succeeded' }, attempts: 2 },
    { name: 'timeout then 200', behaviour: (_r, n) => (n === 1 ? { hang: true } : { status: 200 }), expect: { status: 'succeeded' }, attempts: 2 },
    { name: 'connection closed then 200', behaviour: (_r, n) => (n === 1 ? { destroy: true } : { status: 200 }), expect: { status: 'succeeded' }, attempts: 2 },
  ];
  for (const c of cases) {
    const rx = await startReceiver(t);
    const ep = (await createEndpoint(a, p.token, rx.url, ['webhook_endpoint.test'].slice(0, 0).concat(['project.created']))).json;
    rx.behave(c.behaviour);
    const res = await a.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/test`, token: p.token, headers: idem() });
    const id = res.json.id;
    let d: any;
    const until = Date.now() + 30_000;
    do {
      await sleep(100);
      d = (await a.request({ url: `/v1/webhook-endpoints/${ep.id}/deliveries/${id}`, token: p.token })).json;
    } while (d.status === 'pending' && Date.now() < until);
    t.match(d, c.expect, c.name);
    t.equal(d.attempt_count, c.attempts, `${c.name}: attempts`);
    t.equal(rx.events().length, c.attempts, `${c.name}: requests received`);
    if (c.name.startsWith('redirect')) t.equal(d.attempts[0].error, 'redirect_not_followed');
    if (c.name.startsWith('timeout')) t.equal(d.attempts[0].error, 'timeout');
    if (c.name.startsWith('connection')) t.match(d.attempts[0].error, /connection_reset|network_error/);
    if (c.name.startsWith('429')) {
      const gap = rx.events()[1]!.at - rx.events()[0]!.at;
      t.ok(gap >= 0, `Retry-After honoured (scaled): ${gap} ms`);
    }
    // The same event id on every attempt: consumers deduplicate on it.
    t.equal(new Set(rx.events().map((e) => e.body.id)).size, 1, `${c.name}: one event id`);
  }
});

t.test('the retry schedule is exponential with jitter and ends at 72 hours', async (t) => {
  const { a } = await setup(t);
  const rows = await a.admin<{ n: number; s: number }[]>`
    select n, extract(epoch from app_private.webhook_retry_delay(n))::float8 as s from generate_series(1, 12) n`;
  const base = [5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400, 86400, 86400, 86400];
  for (const r of rows) {
    const b = base[r.n - 1]!;
    t.ok(r.s >= b * 0.8 - 0.001 && r.s <= b * 1.2 + 0.001, `attempt ${r.n}: ${r.s.toFixed(1)} s within 20 % of ${b}`);
  }
  const total = base.slice(0, 8).reduce((x, y) => x + y, 0);
  t.ok(total < 72 * 3600, 'the first nine attempts fit in 72 hours; later ones come daily until retry_until');
});

t.test('replay, test events, retention and its purge', async (t) => {
  const { a, p } = await setup(t);
  const rx = await startReceiver(t);
  const ep = (await createEndpoint(a, p.token, rx.url, ['project.created'])).json;
  await createProject(a, p.token);
  const [first] = await rx.waitFor((e) => e.length >= 1);
  // The worker records the attempt once the receiver has answered: the receipt comes first, and
  // the delivery shows as succeeded a moment later.
  let d: { id: string } | undefined;
  for (const until = Date.now() + 5000; !d && Date.now() < until; await sleep(20)) {
    d = (await a.request({ url: `/v1/webhook-endpoints/${ep.id}/deliveries?status=succeeded`, token: p.token })).json.data[0];
  }
  if (!d) throw new Error('the delivery was received but never recorded as succeeded');
  await sleep(100);
  const replay = await a.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/deliveries/${d.id}/replay`, token: p.token, headers: idem() });
  t.equal(replay.statusCode, 202, replay.body);
  t.match(replay.json, { replay_of: d.id, status: 'pending', event: { id: first!.body.id } });
  t.not(replay.json.id, d.id, 'a new delivery');
  const both = await rx.waitFor((e) => e.length >= 2);
  t.equal(both[1]!.body.id, first!.body.id, 'the same event id again');
  t.equal(both[1]!.raw, first!.raw, 'the same envelope');

  assertProblem(t, await a.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/deliveries/whd_nope/replay`, token: p.token,
    headers: idem() }), 404, 'WEBHOOK_DELIVERY_NOT_FOUND');
  assertProblem(t, await a.request({ url: `/v1/webhook-endpoints/${ep.id}/deliveries/whd_nope`, token: p.token }), 404, 'WEBHOOK_DELIVERY_NOT_FOUND');
  // A delivery of another endpoint of the same client is not found under this one.
  const rx2 = await startReceiver(t);
  const ep2 = (await createEndpoint(a, p.token, rx2.url, ['project.created'])).json;
  assertProblem(t, await a.request({ url: `/v1/webhook-endpoints/${ep2.id}/deliveries/${d.id}`, token: p.token }), 404, 'WEBHOOK_DELIVERY_NOT_FOUND');

  // Outside the 30-day window: expired, then purged.
  await a.admin`update app.events set created_at = now() - interval '31 days' where id = ${first!.body.id}`;
  assertProblem(t, await a.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/deliveries/${d.id}/replay`, token: p.token,
    headers: idem() }), 409, 'WEBHOOK_REPLAY_EXPIRED');
  const [purged] = await a.admin<{ n: string }[]>`select app_private.purge_webhook_history() as n`;
  t.equal(Number(purged!.n), 1, 'one event purged');
  assertProblem(t, await a.request({ url: `/v1/webhook-endpoints/${ep.id}/deliveries/${d.id}`, token: p.token }), 404, 'WEBHOOK_DELIVERY_NOT_FOUND');
  const [left] = await a.admin`select count(*)::int as n from app.webhook_deliveries where event_id = ${first!.body.id}`;
  t.equal(left!.n, 0, 'deliveries and attempts went with the event');
});

t.test('a rolled-back change emits nothing; a failed request emits nothing', async (t) => {
  const { a, p } = await setup(t);
  const rx = await startReceiver(t);
  await createEndpoint(a, p.token, rx.url, ['project.created']);
  await createProject(a, p.token, 'DUP');
  const dup = await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: idem(), payload: { code: 'DUP', name: 'again' } });
  assertProblem(t, dup, 409, 'PROJECT_CODE_CONFLICT');
  await a.admin.begin(async (tx) => {
    await tx`insert into app.projects (organization_id, code, name, currency) values (${p.orgId}, 'ROLLED', 'never', 'EUR')`;
    const [n] = await tx`select count(*)::int as n from app.events where organization_id = ${p.orgId} and type = 'project.created'`;
    t.equal(n!.n, 2, 'the event exists inside the transaction');
    await tx`select 1/0`;
  }).catch(() => undefined);
  const [n] = await a.admin`select count(*)::int as n from app.events where organization_id = ${p.orgId} and type = 'project.created'`;
  t.equal(n!.n, 1, 'only the committed project has an event');
  await rx.waitFor((e) => e.length >= 1);
  await sleep(500);
  t.equal(rx.events().length, 1, 'one delivery');
});

t.test('deliveries follow the client\'s current Roles and standing', async (t) => {
  const { a, p } = await setup(t);
  const rx = await startReceiver(t);
  // The subscriber (manager) watches time entries another client records.
  const sub = await a.createClient(p.orgId, { roles: 'manager' });
  const subToken = await a.token(sub);
  const member = await a.addMember(p.orgId, 'worker@example.com', { roles: 'member' });
  const ep = (await createEndpoint(a, subToken, rx.url, ['time_entry.created'])).json;
  const project = await createProject(a, p.token);
  const entry = (n: number) => a.request({ method: 'POST', url: '/v1/time-entries', token: p.token, headers: idem(),
    payload: { subject: { member_id: member }, project_id: project.id, work_date: '2026-01-0' + n, minutes: 30 } });
  t.equal((await entry(1)).statusCode, 201);
  await rx.waitFor((e) => e.length >= 1);

  // Receiver fails and asks for a retry in 2000 s (2 s at the test's retry scale)...
  rx.behave(() => ({ status: 503, headers: { 'retry-after': '2000' } }));
  t.equal((await entry(2)).statusCode, 201);
  await rx.waitFor((e) => e.length >= 2);
  // ...and the Role that could read time entries is removed before the retry.
  await a.cli('client', 'set-roles', '--client', sub.id, '--roles', 'member');
  rx.behave(() => ({ status: 200 }));
  t.equal((await entry(3)).statusCode, 201, 'a new entry after the Role change');
  await sleep(3000);
  t.equal(rx.events().length, 2, 'nothing after the Role was removed: neither the retry nor the new event');
  const ds = await a.admin`select status, status_reason, attempt_count from app.webhook_deliveries where endpoint_id = ${ep.id} order by created_at`;
  t.same(ds.map((d) => d.status), ['succeeded', 'cancelled'], 'the pending retry was cancelled; the new event made no delivery');
  t.equal(ds[1]!.status_reason, 'not_authorized');
  t.equal(ds[1]!.attempt_count, 1);

  // Restored Role: deliveries resume for new events.
  await a.cli('client', 'set-roles', '--client', sub.id, '--roles', 'manager');
  t.equal((await entry(4)).statusCode, 201);
  await rx.waitFor((e) => e.length >= 3);
  // A disabled client receives nothing.
  await a.cli('client', 'disable', '--client', sub.id);
  t.equal((await entry(5)).statusCode, 201);
  await sleep(800);
  t.equal(rx.events().length, 3, 'a disabled client receives nothing');
});

t.test('the address filter applies at connect time for every delivery (no DNS rebinding)', async (t) => {
  const { a, p } = await setup(t);
  const rx = await startReceiver(t);
  const ep = (await createEndpoint(a, p.token, rx.url, ['project.created'])).json;
  // As if the registered name now resolved to a private address: point the row at a literal loopback
  // address (not allow-listed) behind the API's back.
  await a.admin`update app.webhook_endpoints set url = ${`https://127.0.0.1:${rx.port}/hooks`} where id = ${ep.id}`;
  await createProject(a, p.token);
  let d: any;
  const until = Date.now() + 5000;
  do {
    await sleep(100);
    [d] = await a.admin`select d.id, a.error from app.webhook_deliveries d join app.webhook_delivery_attempts a on a.organization_id = d.organization_id and a.delivery_id = d.id
                         where d.endpoint_id = ${ep.id}`;
  } while (!d && Date.now() < until);
  t.equal(d?.error, 'destination_not_allowed');
  t.equal(rx.events().length, 0, 'the receiver was never reached');
});

t.test('repeated failures disable the endpoint and notify an administrator', async (t) => {
  const { a, p } = await setup(t, { SVC_WEBHOOK_DISABLE_AFTER_FAILURES: '3', SVC_WEBHOOK_DISABLE_AFTER_SECONDS: '0' });
  const rx = await startReceiver(t);
  const ep = (await createEndpoint(a, p.token, rx.url, ['project.created'])).json;
  rx.behave(() => ({ status: 404 }));
  for (let i = 0; i < 3; i++) await createProject(a, p.token);
  let got: any;
  const until = Date.now() + 8000;
  do {
    await sleep(100);
    got = (await a.request({ url: `/v1/webhook-endpoints/${ep.id}`, token: p.token })).json;
  } while (got.status === 'enabled' && Date.now() < until);
  t.match(got, { status: 'disabled', disabled_reason: 'delivery_failures' });
  const notes = await a.cli('notifications', 'list', '--org', p.orgId);
  t.match(notes, { notifications: [{ kind: 'webhook_endpoint_disabled', subject_id: ep.id }] });
  // A success resets the streak.
  rx.behave(() => ({ status: 200 }));
  const en = await a.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/enable`, token: p.token, headers: idem() });
  t.equal(en.json.status, 'enabled');
  await createProject(a, p.token);
  await rx.waitFor((e) => e.filter((x) => x.body.type === 'project.created').length >= 4);
  await sleep(200);
  const [row] = await a.admin`select consecutive_failures from app.webhook_endpoints where id = ${ep.id}`;
  t.equal(row!.consecutive_failures, 0);
});

t.test('review cases: URL forms, Retry-After bounds, test events to disabled endpoints, limits, one challenge at a time', async (t) => {
  const { a, p } = await setup(t);
  const rx = await startReceiver(t);
  // Normalized forms are stored normalized; odd spellings never reach the database as 500s.
  const upper = await createEndpoint(a, p.token, rx.url.replace('https://', 'HTTPS://'), ['project.created']);
  t.equal(upper.statusCode, 201, 'HTTPS:// accepted');
  t.equal(upper.json.url, rx.url, 'stored normalized');
  const dotted = await createEndpoint(a, p.token, `${rx.url}/second`, ['project.created']);
  t.equal(dotted.statusCode, 201);
  for (const url of ['https://[::127.0.0.1]/hooks', 'https://foo.internal./hooks', 'https://a.local./x', 'https://2130706433/',
    'https://0x7f.1/', 'https://127.1/', 'https://localhost./hooks'.replace('localhost.', '127.0.0.1.')]) {
    const res = await createEndpoint(a, p.token, url, ['project.created']);
    assertProblem(t, res, 422, 'WEBHOOK_URL_UNSAFE');
  }
  for (const url of ['https:8.8.8.8/hooks', 'https:///8.8.8.8/hooks', 'https://@8.8.8.8/hooks', ' https://8.8.8.8/hooks']) {
    const res = await createEndpoint(a, p.token, url, ['project.created']);
    t.not(res.statusCode, 500, `${url}: not a 500`);
    t.match(String(res.headers['content-type']), /problem\+json/);
  }

  // A huge Retry-After is bounded (a day, scaled): the attempt is recorded and a retry scheduled.
  const ep = upper.json;
  rx.behave(() => ({ status: 503, headers: { 'retry-after': '99999999999' } }));
  const test = await a.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/test`, token: p.token, headers: idem() });
  let d: any;
  const until = Date.now() + 5000;
  do {
    await sleep(100);
    d = (await a.request({ url: `/v1/webhook-endpoints/${ep.id}/deliveries/${test.json.id}`, token: p.token })).json;
  } while (d.attempts.length === 0 && Date.now() < until);
  t.match(d, { status: 'pending', attempt_count: 1, attempts: [{ response_status: 503, error: 'http_503' }] });
  const wait = Date.parse(d.next_attempt_at) - Date.parse(d.attempts[0].started_at);
  t.ok(wait > 60_000 && wait < 200_000, `next attempt after about a day at the test scale (${wait} ms)`);

  // A test event reaches a disabled endpoint (that is how a client checks a fix).
  rx.behave(() => ({ status: 200 }));
  await a.request({ method: 'POST', url: `/v1/webhook-endpoints/${dotted.json.id}/disable`, token: p.token, headers: idem() });
  const before = rx.events().length;
  const t2 = await a.request({ method: 'POST', url: `/v1/webhook-endpoints/${dotted.json.id}/test`, token: p.token, headers: idem() });
  t.equal(t2.statusCode, 202);
  await rx.waitFor((e) => e.length > before);
  t.equal(rx.events().at(-1)!.body.type, 'webhook_endpoint.test');

  // At most 20 endpoints per client.
  for (let i = 2; i < 20; i++) {
    const r = await createEndpoint(a, p.token, `${rx.url}/${i}`, ['project.created']);
    t.equal(r.statusCode, 201, `endpoint ${i + 1}`);
  }
  assertProblem(t, await createEndpoint(a, p.token, `${rx.url}/21`, ['project.created']), 409, 'CONFLICT');

  // One verification challenge at a time per client; no database connection is held meanwhile.
  const other = await a.principal('manager');
  const slow = await startReceiver(t, { answerChallenges: false });
  slow.behave(() => ({ hang: true }));
  const pendingCreate = createEndpoint(a, other.token, slow.url, ['project.created']);
  await slow.waitFor(() => slow.received.length >= 1);
  assertProblem(t, await createEndpoint(a, other.token, rx.url, ['project.created']), 429, 'RATE_LIMITED');
  const meanwhile = await a.request({ url: '/v1/webhook-endpoints', token: p.token });
  t.equal(meanwhile.statusCode, 200, 'other clients are served while a challenge waits');
  assertProblem(t, await pendingCreate, 422, 'WEBHOOK_VERIFICATION_FAILED');
});

t.test('every writer emits: the control plane\'s approval decision too; the purge job is scheduled', async (t) => {
  const { a, p } = await setup(t);
  const member = await a.addMember(p.orgId, 'w@example.com', { roles: 'member' });
  await a.addMember(p.orgId, 'boss@example.com', { roles: 'member,manager' });
  const project = await createProject(a, p.token);
  const entry = await a.request({ method: 'POST', url: '/v1/time-entries', token: p.token, headers: idem(),
    payload: { subject: { member_id: member }, project_id: project.id, work_date: '2026-01-05', minutes: 60 } });
  t.equal(entry.statusCode, 201);
  const submitted = await a.request({ method: 'POST', url: `/v1/time-entries/${entry.json.id}/submit`, token: p.token, headers: idem() });
  t.equal(submitted.statusCode, 200, 'submitted');
  const [ap] = await a.admin`select id from app.approvals where resource_id = ${entry.json.id}`;
  await a.cli('approval', 'decide', '--approval', ap!.id, '--decision', 'approved', '--by', 'boss@example.com');
  const events = await a.admin`select type, resource_version from app.events
    where resource_id in (${entry.json.id}, ${ap!.id}) order by created_at, id`;
  t.same(events.map((e) => e.type).sort(), ['approval.created', 'approval.updated', 'time_entry.approved', 'time_entry.created',
    'time_entry.submitted'].sort());
  const crons = await a.admin`select identifier from graphile_worker._private_known_crontabs`;
  t.ok(crons.some((c) => c.identifier === 'webhook_purge'), 'the daily purge is registered with graphile-worker');
  t.ok(crons.some((c) => c.identifier === 'token_purge'), 'the hourly purge of expired access-token records too');
  t.equal(crons.some((c) => c.identifier === 'citus_prepare'), CITUS_WORKERS.length > 0,
    'the check for shard groups moved by hand: on a Citus coordinator only');
});

t.test('nothing goes out for a request that fails on its headers; a replay sends no challenge', async (t) => {
  const { a, p } = await setup(t);
  const rx = await startReceiver(t);
  const noKey = await a.request({ method: 'POST', url: '/v1/webhook-endpoints', token: p.token,
    payload: { url: rx.url, events: ['project.created'] } });
  assertProblem(t, noKey, 400, 'IDEMPOTENCY_KEY_REQUIRED');
  t.equal(rx.received.length, 0, 'no challenge for a request without Idempotency-Key');
  const key = idem();
  const ep = (await createEndpoint(a, p.token, rx.url, ['project.created'], key)).json;
  t.equal(rx.received.length, 1);
  await rx.close();
  assertProblem(t, await createEndpoint(a, p.token, rx.url, ['project.created'], key), 409, 'WEBHOOK_SECRET_NOT_AVAILABLE');
  const rx2 = await startReceiver(t);
  const stale = await a.request({ method: 'PATCH', url: `/v1/webhook-endpoints/${ep.id}`, token: p.token,
    headers: { 'if-match': '"9"' }, payload: { url: rx2.url } });
  assertProblem(t, stale, 412, 'STALE_RESOURCE');
  const missing = await a.request({ method: 'PATCH', url: `/v1/webhook-endpoints/${ep.id}`, token: p.token, payload: { url: rx2.url } });
  assertProblem(t, missing, 428, 'PRECONDITION_REQUIRED');
  t.equal(rx2.received.length, 0, 'no challenge for a stale or missing If-Match');
});
