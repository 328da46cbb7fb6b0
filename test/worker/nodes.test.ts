// Where a job's statements go (src/worker/nodes.ts): on one server, with SVC_CLUSTER_DIRECT=off or
// before a placement is known, the coordinator's pool; on a cluster, a pool of its own on the
// organization's node; a node that could not be reached is left out for a second, its organization's
// statements through the coordinator meanwhile.
import t from 'tap';
import net from 'node:net';
import postgres from 'postgres';
import { jobConnections } from '../../src/worker/nodes.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A port that refuses connections: one a listener had, closed again. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

t.test('an organization\'s statements on its node, the coordinator while the node is away', async (t) => {
  const coordinator = postgres('postgres://svc_worker:x@127.0.0.1:1/none', { max: 1 });
  t.teardown(() => coordinator.end({ timeout: 0 }));
  const port = await closedPort();
  const node = `127.0.0.1:${port}`;
  let onCitus: boolean | undefined;
  let direct = true;
  const where = { node: (org: string) => (org === 'org_a' ? node : undefined), nodes: () => new Set([node]),
    ready: async () => {}, stop: () => {} };
  const make = () => jobConnections(coordinator, { url: 'postgres://svc_worker:x@db:5432/svc', max: 2, connectTimeoutMs: 1000,
    direct, onCitus: () => onCitus, placements: () => where });
  const c = make();
  t.teardown(() => c.close());

  t.equal(c.of('org_a'), coordinator, 'before the database has answered: the coordinator');
  onCitus = false;
  t.equal(c.of('org_a'), coordinator, 'on one server: the coordinator');
  onCitus = true;
  t.equal(c.of('org_b'), coordinator, 'an organization not yet placed: the coordinator');
  const s = c.of('org_a');
  t.not(s, coordinator, 'a placed organization: a pool of its own');
  t.same(c.nodes(), [node], 'on its node');
  t.equal(c.of('org_a'), s, 'the same pool for its next job');

  const error = await s`select 1`.then(() => undefined, (e: unknown) => e);
  t.ok(error, 'the node refuses the connection');
  c.failed(s, error);
  t.equal(c.of('org_a'), coordinator, 'after a failed connection: through the coordinator');
  c.failed(s, Object.assign(new Error('division by zero'), { code: '22012' }));
  await sleep(1100);
  t.equal(c.of('org_a'), s, 'a second later: its node again');
  c.failed(s, Object.assign(new Error('division by zero'), { code: '22012' }));
  t.equal(c.of('org_a'), s, 'a statement\'s own failure leaves the node in');

  direct = false;
  const off = make();
  t.teardown(() => off.close());
  t.equal(off.of('org_a'), coordinator, 'SVC_CLUSTER_DIRECT=off: the coordinator');
  await c.close();
  t.equal(c.of('org_a'), coordinator, 'once closed: the coordinator');
});
