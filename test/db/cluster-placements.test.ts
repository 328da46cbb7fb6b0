// Where an organization's shard group is, as an API process knows it (src/db/cluster.ts,
// `placements`): answered from memory only, an unknown organization looked up off the request's
// path, each shard's node read again on a timer. The cluster itself: test/citus/direct.test.ts.
import t from 'tap';
import { placements } from '../../src/db/cluster.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Until `done` holds (a lookup runs on a later turn, and a loaded machine delays it), at most 5 s. */
const until = async (done: () => boolean) => {
  for (let i = 0; i < 1000 && !done(); i++) await sleep(5);
};

t.test('an organization is looked up once, in a batch, and answered from memory after', async (t) => {
  const asked: string[][] = [];
  let nodes = new Map<string, string | null>([['s1', '10.0.0.1:5432'], ['s2', null]]);
  const where = placements({
    shards: async (orgs) => { asked.push(orgs); return new Map(orgs.map((o) => [o, o === 'org_b' ? 's2' : 's1'])); },
    nodes: async () => nodes,
  }, 20);
  t.teardown(where.stop);
  await where.ready();
  t.equal(where.node('org_a'), undefined, 'unknown: through the coordinator meanwhile');
  t.equal(where.node('org_b'), undefined);
  await until(() => where.node('org_a') !== undefined);
  t.same(asked, [['org_a', 'org_b']], 'both looked up in one batch');
  t.equal(where.node('org_a'), '10.0.0.1:5432', 'then its node');
  t.equal(where.node('org_b'), undefined, 'a group on the coordinator: through the coordinator');
  t.equal(asked.length, 1, 'and not looked up again');

  nodes = new Map([['s1', '10.0.0.2:5432'], ['s2', null]]);
  await until(() => where.node('org_a') === '10.0.0.2:5432');
  t.equal(where.node('org_a'), '10.0.0.2:5432', 'a moved group: its new node once the placements are read again');
});

t.test('a failed lookup or read leaves the organization to the coordinator, and is tried again', async (t) => {
  let fail = true;
  let nodesFail = false;
  let failures = 0;
  let lookups = 0;
  let nodeReads = 0;
  const where = placements({
    shards: async (orgs) => { if (fail) { failures++; throw new Error('down'); } lookups++; return new Map(orgs.map((o) => [o, 's1'])); },
    nodes: async () => { nodeReads++; if (nodesFail) throw new Error('down'); return new Map([['s1', 'n1:1']]); },
  }, 20);
  t.teardown(where.stop);
  await where.ready();
  t.equal(where.node('org_a'), undefined);
  await until(() => failures > 0);
  t.equal(where.node('org_a'), undefined, 'the lookup failed: still the coordinator');
  fail = false;
  t.equal(where.node('org_a'), undefined, 'its next request asks again');
  await until(() => lookups > 0);
  t.equal(where.node('org_a'), 'n1:1', 'and the one after goes to its node');
  nodesFail = true;
  const reads = nodeReads;
  await until(() => nodeReads > reads + 1);
  t.equal(where.node('org_a'), 'n1:1', 'a failed read keeps the placements it had');
});

t.test('an organization whose shard is gone (a split) is looked up again', async (t) => {
  let shard = 's1';
  let nodes = new Map<string, string | null>([['s1', 'n1:1']]);
  let nodeReads = 0;
  const where = placements({
    shards: async (orgs) => new Map(orgs.map((o) => [o, shard])),
    nodes: async () => { nodeReads++; return nodes; },
  }, 20);
  t.teardown(where.stop);
  await where.ready();
  where.node('org_a');
  await until(() => where.node('org_a') !== undefined);
  t.equal(where.node('org_a'), 'n1:1');
  shard = 's9';
  nodes = new Map([['s9', 'n2:1']]);
  const reads = nodeReads;
  await until(() => nodeReads > reads + 1);
  t.equal(where.node('org_a'), undefined, 'its old shard is in no placement: through the coordinator, and looked up again');
  await until(() => where.node('org_a') !== undefined);
  t.equal(where.node('org_a'), 'n2:1', 'then its new shard\'s node');
});
