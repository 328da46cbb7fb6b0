// Sink: webhook deliveries. A delivery carries an envelope of ids, types, versions and
// times (the spec's object reference), never a client's text, and only the service's own headers:
// a resource named with hostile text, or an endpoint described with it, changes neither the body
// nor a header of what the receiver gets.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startApp } from '../helpers/app.ts';
import { startReceiver, verifySignature, WEBHOOK_TEST_ENV } from '../helpers/receiver.ts';
import { startWorker } from '../../src/worker/index.ts';

const HOSTILE = 'x\r\nSvc-Webhook-Signature: v1=0000\r\n\r\n{"forged":true}\u2028</script><script>alert(1)</script>';

t.test('hostile names and descriptions do not reach a delivery', async (t) => {
  const a = await startApp(t, WEBHOOK_TEST_ENV);
  const worker = await startWorker(a.config, { pollInterval: 50 });
  t.teardown(() => worker.stop());
  const p = await a.principal('member,manager');
  const rx = await startReceiver(t);
  const post = (url: string, payload: unknown) => a.request({ method: 'POST', url, token: p.token, headers: { 'idempotency-key': randomUUID() }, payload });
  const ep = await post('/v1/webhook-endpoints', { url: rx.url, events: ['project.created'], description: HOSTILE });
  t.equal(ep.statusCode, 201);
  const project = await post('/v1/projects', { code: 'HW', name: HOSTILE });
  t.equal(project.statusCode, 201);
  const [delivery] = await rx.waitFor((e) => e.some((x) => x.body?.type === 'project.created')).then((e) => e.filter((x) => x.body?.type === 'project.created'));
  t.ok(verifySignature(ep.json.secret, delivery!.headers, delivery!.raw), 'signed');
  t.notMatch(delivery!.raw, /forged|script|Svc-Webhook-Signature: v1=0000/, 'no client text in the body');
  t.same(Object.keys(delivery!.body).sort(), ['api_version', 'created_at', 'data', 'id', 'organization_id', 'type']);
  t.same(delivery!.body.data, { object: { type: 'project', id: project.json.id, version: 1 } }, 'the object reference only');
  const theirs = Object.keys(delivery!.headers).filter((h) => h.startsWith('svc-'));
  t.same(theirs.sort(), ['svc-webhook-id', 'svc-webhook-signature', 'svc-webhook-timestamp'], 'only the service\'s own headers');
  t.match(delivery!.headers['svc-webhook-signature'], /^v1=[0-9a-f]{64}$/);
});
