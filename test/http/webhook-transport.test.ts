// The webhook transport checks every resolved address by its own family: deliveries to
// an IPv4 receiver log nothing (request-filtering-agent used to print a stack trace for each IPv6
// range it tried against an IPv4 address), and the connect-time rule still refuses private ones.
import t from 'tap';
import tls from 'node:tls';
import { createTransport } from '../../src/webhooks/transport.ts';
import { startReceiver, TEST_CA_FILE } from '../helpers/receiver.ts';

const config = { allowedHosts: ['localhost'], caFile: TEST_CA_FILE, timeoutMs: 3000, retryScale: 1, disableAfterFailures: 50,
  disableAfterSeconds: 86_400 };

t.test('deliveries log no warning; private destinations are still refused at connect time', async (t) => {
  const rx = await startReceiver(t);
  const warnings: unknown[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => { warnings.push(args); };
  t.teardown(() => { console.warn = warn; });
  const transport = createTransport(config);

  const ok = await transport.post(`https://localhost:${rx.port}/hooks`, {}, '{"id":"evt_1"}');
  t.equal(ok.status, 204, 'delivered to the allowed loopback host (IPv4)');
  const viaIp = await transport.post(`https://127.0.0.1:${rx.port}/hooks`, {}, '{}');
  t.equal(viaIp.error, 'destination_not_allowed', 'a loopback IP literal is refused');
  const strict = createTransport({ ...config, allowedHosts: [] });
  const private_ = await strict.post(`https://localhost:${rx.port}/hooks`, {}, '{}');
  t.equal(private_.error, 'destination_not_allowed', 'a host resolving to loopback is refused unless allowed');
  const mapped = await strict.post(`https://[::ffff:127.0.0.1]:${rx.port}/hooks`, {}, '{}');
  t.equal(mapped.error, 'destination_not_allowed', 'an IPv4-mapped loopback address is refused');
  const compat = await strict.post(`https://[::7f00:1]:${rx.port}/hooks`, {}, '{}');
  t.equal(compat.error, 'destination_not_allowed', 'an IPv4-compatible address (::/96) is refused');
  t.same(warnings, [], 'no warning was logged');
});

t.test('new connections share one TLS context (the CA file is parsed once, not per connection)', async (t) => {
  const rx = await startReceiver(t);
  const created = tls.createSecureContext;
  let contexts = 0;
  (tls as { createSecureContext: typeof created }).createSecureContext = (...args) => { contexts++; return created(...args); };
  t.teardown(() => { (tls as { createSecureContext: typeof created }).createSecureContext = created; });
  const transport = createTransport(config);
  const before = contexts;
  // Twenty at once: the agent opens a connection for each.
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) =>
    transport.post(`https://localhost:${rx.port}/hooks`, {}, `{"id":"evt_${i}"}`)));
  t.same(results.map((r) => r.status), Array(20).fill(204), 'every delivery verified against the configured CA');
  t.equal(contexts - before, 0, 'no TLS context was built per connection');
  const wrongCa = createTransport({ ...config, caFile: undefined });
  t.equal((await wrongCa.post(`https://localhost:${rx.port}/hooks`, {}, '{}')).error, 'tls_error',
    'without the CA file the test certificate is refused: the shared context does carry the CA');
});
