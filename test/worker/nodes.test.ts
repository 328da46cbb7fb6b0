// Where a job's statements go (src/worker/nodes.ts): on one server, with SVC_CLUSTER_DIRECT=off or
// before a placement is known, the coordinator's pool; on a cluster, a pool of its own on the
// organization's node. A node whose connection cannot start is left out (its statement sent to the
// coordinator instead), then tried by one statement; a pool in use is not ended.
import t from 'tap';
import net from 'node:net';
import postgres from 'postgres';
import { jobConnections } from '../../src/worker/nodes.ts';
import { editDatabaseUrl } from '../../src/db/url.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// The test server (a superuser's URL): a node that answers.
const DATABASE_URL = process.env.SVC_TEST_SERVER_URL!;

/** A port that refuses connections: one a listener had, closed again. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

t.test('an organization\'s statements on its node; the coordinator while the node cannot be reached', async (t) => {
  // Never connected: a statement given it answers 'coordinator' without sending anything.
  const coordinator = postgres('postgres://nobody@127.0.0.1:1/none', { max: 1 });
  t.teardown(() => coordinator.end({ timeout: 0 }));
  const up = new URL(DATABASE_URL).host;
  const down = `127.0.0.1:${await closedPort()}`;
  const holding = new Set([up, down]);
  const where = { node: (org: string) => ({ org_up: up, org_down: down } as Record<string, string>)[org], nodes: () => holding,
    ready: async () => {}, stop: () => {} };
  let onCitus: boolean | undefined;
  const logged: string[] = [];
  const make = (o: { url?: string; direct?: boolean; unusedMs?: number } = {}) => {
    const c = jobConnections(coordinator, { url: o.url ?? DATABASE_URL, max: 2, connectTimeoutMs: 1000, direct: o.direct ?? true,
      onCitus: () => onCitus, placements: () => where, unusedMs: o.unusedMs, log: (m, node) => logged.push(`${node}: ${m}`) });
    t.teardown(() => c.close());
    return c;
  };
  /** Where each try of a statement went: 'coordinator', or the node's answer. */
  const where_ = async (c: ReturnType<typeof make>, org: string, body?: () => Promise<void>) => {
    const seen: string[] = [];
    const result = await c.run(org, async (sql) => {
      if (sql === coordinator) { seen.push('coordinator'); return seen; }
      await body?.();
      seen.push('tried the node');
      seen.push((await sql`select 'node' as n`)[0]!.n as string);
      return seen;
    });
    return result;
  };

  const c = make();
  t.same(await where_(c, 'org_up'), ['coordinator'], 'before the database has answered: the coordinator');
  onCitus = false;
  t.same(await where_(c, 'org_up'), ['coordinator'], 'on one server: the coordinator');
  onCitus = true;
  t.same(await where_(c, 'org_other'), ['coordinator'], 'an organization not yet placed: the coordinator');
  t.same(await where_(c, 'org_up'), ['tried the node', 'node'], 'a placed organization: its node');
  await t.rejects(c.run('org_up', async (sql) => {
    if (sql === coordinator) throw new Error('not here');
    await sql`select 1 / 0`;
  }), { code: '22012' }, 'a statement\'s own failure is the caller\'s');
  t.same(await where_(c, 'org_up'), ['tried the node', 'node'], 'and leaves the node in');

  t.same(await where_(c, 'org_down'), ['tried the node', 'coordinator'], 'a node that refuses the connection: the statement sent to the coordinator instead');
  t.same(await where_(c, 'org_down'), ['coordinator'], 'and left out at once');
  await sleep(1100);
  const tries = await Promise.all([where_(c, 'org_down'), where_(c, 'org_down')]);
  t.same(tries, [['tried the node', 'coordinator'], ['coordinator']], 'a second later one statement tries it (refused again), the other goes to the coordinator');
  t.same(c.nodes().sort(), [down, up].sort(), 'a pool for each node');

  const off = make({ direct: false });
  t.same(await where_(off, 'org_up'), ['coordinator'], 'SVC_CLUSTER_DIRECT=off: the coordinator');

  const refused = make({ url: editDatabaseUrl(DATABASE_URL, { username: 'svc_no_such_role' }) });
  t.same(await where_(refused, 'org_up'), ['tried the node', 'coordinator'], 'a node that refuses the login: the coordinator');
  t.same(logged, [`${up}: a worker node refused svc_worker's login: its organizations' jobs go through the coordinator`], 'said once');

  const moving = make({ unusedMs: 50 });
  const slow = where_(moving, 'org_up', async () => { await sleep(400); });
  await sleep(50);
  holding.clear();
  await sleep(200);
  t.same(moving.nodes(), [up], 'a node that holds no group any more: its pool kept while a statement runs on it');
  t.same(await slow, ['tried the node', 'node'], 'which completes there');
  await sleep(200);
  t.same(moving.nodes(), [], 'then ended');

  await c.close();
  t.same(await where_(c, 'org_up'), ['coordinator'], 'once closed: the coordinator');
});
