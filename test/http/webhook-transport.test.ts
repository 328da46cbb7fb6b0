// The webhook transport checks every resolved address by its own family (issue 13): deliveries to
// an IPv4 receiver log nothing (request-filtering-agent used to print a stack trace for each IPv6
// range it tried against an IPv4 address), and the connect-time rule still refuses private ones.
import t from 'tap';
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
