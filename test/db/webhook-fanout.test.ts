// The batched fan-out: app_private.webhook_fanout_batch (one organization's) and
// webhook_fanout_any (any organization's, one server) claim pending events with
// `skip locked`, so workers never share one; an event nobody may receive is claimed all the same;
// and the worker's loop (startFanout) is woken by the commit, sends every first attempt once, and
// goes on past an event that cannot be fanned out, with two claims at once within one room.
import t from 'tap';
import postgres from 'postgres';
import pino from 'pino';
import { Writable } from 'node:stream';
import { startApp, CITUS_WORKERS, oneServer, type TestApp } from '../helpers/app.ts';
import { failure } from '../helpers/sql.ts';
import { seal } from '../../src/auth/sealing.ts';
import { webhookSecretKey, type Transport } from '../../src/webhooks/transport.ts';
import { startFanout } from '../../src/worker/fanout-loop.ts';

const opts = { max: 2, onnotice: () => {} };
/** On a cluster the loop claims organization by organization, as the worker does there. */
const byOrganization = () => CITUS_WORKERS.length > 0;

async function world(a: TestApp) {
  const org = await a.createOrg();
  const c = await a.createClient(org, { roles: 'manager' });
  const sealed = seal(webhookSecretKey(a.config.secretKey), 'whsec_test');
  const [ep] = await a.admin`insert into app.webhook_endpoints (organization_id, client_id, url, events, secret_sealed)
    values (${org}, ${c.id}, 'https://hooks.example/1', '{project.created}', ${sealed}) returning id`;
  // Rows written out (on a cluster an INSERT … SELECT is committed in two phases, which the events'
  // NOTIFY refuses; a DBA's bulk insert there is one statement per organization, as here).
  const projects = (n: number, prefix: string) => a.admin`insert into app.projects ${a.admin(
    Array.from({ length: n }, (_v, i) => ({ organization_id: org, code: `${prefix}${i + 1}`, name: 'fan-out', currency: 'EUR' })))}`;
  return { org, client: c, endpoint: ep!.id as string, projects };
}

const pending = async (a: TestApp, org: string) =>
  (await a.admin`select count(*)::int as n from app.events where organization_id = ${org} and fanout_pending`)[0]!.n as number;

t.test('claims in batches: skip locked between workers, one row per event without a delivery', async (t) => {
  const a = await startApp(t);
  const w = await world(a);
  await w.projects(5, 'B');
  t.equal(await pending(a, w.org), 5, 'five events pending');

  // Two workers at once: the second skips what the first holds.
  const one = postgres(a.adminUrl, opts);
  const two = postgres(a.adminUrl, opts);
  t.teardown(() => Promise.all([one.end(), two.end()]));
  let release!: () => void;
  const held = new Promise<void>((r) => { release = r; });
  let first: any[] = [];
  const tx1 = one.begin(async (tx) => {
    first = await tx`select * from app_private.webhook_fanout_batch(${w.org}, 2, 15)`;
    await held;
  });
  while (first.length === 0) await new Promise((r) => setTimeout(r, 10));
  const second = await two`select * from app_private.webhook_fanout_batch(${w.org}, 10, 15)`;
  release();
  await tx1;
  t.equal(first.length, 2, 'the first claim took two events');
  t.equal(second.length, 3, 'the second took the other three, not waiting for the first');
  t.same(new Set([...first, ...second].map((r) => r.event_id)).size, 5, 'no event twice');
  for (const r of [...first, ...second]) {
    t.ok(r.delivery_id && r.attempt === 1 && r.url === 'https://hooks.example/1', 'a first attempt, claimed');
  }
  t.equal(await pending(a, w.org), 0, 'nothing pending');
  const [{ n: leased }] = await a.admin`select count(*)::int as n from app.webhook_deliveries
    where organization_id = ${w.org} and attempt_count = 1 and lease_until > now()` as any;
  t.equal(leased, 5, 'five deliveries, each leased to its sender');
  t.same(await a.admin`select * from app_private.webhook_fanout_batch(${w.org}, 10, 15)`, [], 'an empty queue claims nothing');

  // An event whose resource the client cannot read (it does not exist): claimed, no delivery.
  const [ev] = await a.admin`insert into app.events (organization_id, type, resource_type, resource_id, resource_version, fanout_pending)
    values (${w.org}, 'project.created', 'project', 'prj_gone', 1, true) returning id`;
  // Any organization's, as one server claims them; a cluster claims one organization's at a time
  // (Citus locks no rows of several shards in one statement, so webhook_fanout_any is refused there).
  if (CITUS_WORKERS.length) {
    t.match(await failure(a.admin`select * from app_private.webhook_fanout_any(10, 15)`), /FOR UPDATE/, 'any organization\'s: refused on a cluster');
  }
  const rows = CITUS_WORKERS.length ? await a.admin`select * from app_private.webhook_fanout_batch(${w.org}, 10, 15)`
    : await a.admin`select * from app_private.webhook_fanout_any(10, 15)`;
  t.same(rows.map((r) => [r.event_id, r.delivery_id]), [[ev!.id, null]], 'one row naming the event, without a delivery');
  t.equal(await pending(a, w.org), 0, 'and it is no longer pending');
});

t.test('the worker loop: woken by the commit, every event sent once, past an event that fails',
  oneServer('one event is made to fail by a trigger of the test\'s own, which Citus refuses on a distributed table'), async (t) => {
  const a = await startApp(t);
  const w = await world(a);
  const posted: string[] = [];
  let open = 0;
  let mostOpen = 0;
  const transport: Transport = {
    post: async (_url, _headers, body) => {
      mostOpen = Math.max(mostOpen, ++open);
      await new Promise((r) => setTimeout(r, 5));
      posted.push(JSON.parse(body).id);
      open--;
      return { status: 204, durationMs: 5 };
    },
  };
  const lines: string[] = [];
  const log = pino({ level: 'info' }, new Writable({ write(c, _e, done) { lines.push(String(c)); done(); } }));
  const sql = postgres(a.adminUrl, { max: 4, onnotice: () => {} });
  // A batch of 2 and 3 attempts open at most: several claims, and a full room, are needed; two
  // claims may run at once (the default), sharing the room.
  const loop = startFanout(sql, a.config, transport, { log, pollInterval: 60_000, batch: 2, maxInFlight: 3, byOrganization });
  t.teardown(async () => { await loop.stop(); await sql.end(); });
  await new Promise((r) => setTimeout(r, 500)); // the listener is up

  // An event the fan-out cannot handle (a fault this database, the test's own, is given for it)
  // is the oldest, so first in every claim. Its project exists, so its client may read it.
  const [prj] = await a.admin`insert into app.projects (organization_id, code, name, currency)
    values (${w.org}, 'POISON', 'poison', 'EUR') returning id`;
  // The event and its fault commit together: the loop's first claim may come at any moment.
  const bad = await a.admin.begin(async (tx) => {
    const [event] = await tx`insert into app.events (organization_id, type, resource_type, resource_id, resource_version, fanout_pending, created_at)
      values (${w.org}, 'project.created', 'project', ${prj!.id}, 1, true, now() - interval '1 minute') returning id`;
    await tx.unsafe(`create function public.poison() returns trigger language plpgsql as $$
      begin if new.event_id = '${event!.id}' then raise exception 'poisoned'; end if; return new; end $$`);
    await tx.unsafe('create trigger poison before insert on app.webhook_deliveries for each row execute function public.poison()');
    return event!;
  });
  const started = Date.now();
  await w.projects(7, 'L');
  const until = Date.now() + 15_000;
  while (posted.length < 8 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  t.equal(posted.length, 8, 'eight events (POISON\'s own and seven) sent, without waiting for the poll (60 s)');
  t.ok(Date.now() - started < 15_000, `in ${Date.now() - started} ms`);
  t.equal(new Set(posted).size, 8, 'each once');
  t.ok(mostOpen <= 3, `at most maxInFlight (3) attempts open at once, with two claims in parallel (${mostOpen})`);
  await new Promise((r) => setTimeout(r, 300));
  const [{ n: ok }] = await a.admin`select count(*)::int as n from app.webhook_deliveries
    where organization_id = ${w.org} and status = 'succeeded' and lease_until is null` as any;
  t.equal(ok, 8, 'eight deliveries succeeded and recorded');
  const [left] = await a.admin`select fanout_pending from app.events where id = ${bad!.id}`;
  t.equal(left!.fanout_pending, true, 'the failing event stays pending (and is logged), the others went on');
  t.ok(lines.some((l) => l.includes('an event could not be fanned out') && l.includes(bad!.id)), 'the failing event is named in the log');
  t.notOk(lines.some((l) => l.includes('whsec_')), 'no secret in the log');
});

t.test('a delivery check reuses the context it set in this transaction, for the same client only',
  oneServer('the check\'s mark is read beside the call, which on a cluster runs in the organization\'s worker'), async (t) => {
  const a = await startApp(t);
  const w = await world(a);
  const otherOrg = await a.createOrg();
  const stranger = await a.createClient(otherOrg, { roles: 'manager' });
  const [prj] = await a.admin`insert into app.projects (organization_id, code, name, currency)
    values (${w.org}, 'CTX', 'context', 'EUR') returning id`;
  const may = (tx: any, client: string) =>
    tx`select app_private.client_may_read(${w.org}, ${client}, 'project.created', 'project', ${prj!.id}) as ok,
              current_setting('svc.delivery_client', true) as marked`.then((r: any[]) => r[0]);
  await a.admin.begin(async (tx) => {
    t.match(await may(tx, w.client.id), { ok: true, marked: w.client.id }, 'the client may read its project; the context is marked');
    t.match(await may(tx, w.client.id), { ok: true, marked: w.client.id }, 'and again, on the same context');
    t.match(await may(tx, stranger.id), { ok: false }, 'a client of another organization may not: its own context was set');
    t.match(await may(tx, w.client.id), { ok: true, marked: w.client.id }, 'back to the first client: its context is set again');
  });
  // A signed context for the client that this function did not set (as begin_request sets one for a
  // request) is not reused: the client's standing is read again.
  await a.admin.begin(async (tx) => {
    await tx`select app_private.begin_delivery_context(${w.org}, ${w.client.id})`;
    await tx`update app.api_clients set license_status = 'released' where id = ${w.client.id}`;
    t.match(await may(tx, w.client.id), { ok: false, marked: '' }, 'a context not marked by the check is checked anew');
    await tx`update app.api_clients set license_status = 'active' where id = ${w.client.id}`;
  });
  // Nothing carries over to the next transaction: a client whose licence was released meanwhile is refused.
  await a.admin`update app.api_clients set license_status = 'released' where id = ${w.client.id}`;
  await a.admin.begin(async (tx) => {
    t.match(await may(tx, w.client.id), { ok: false }, 'the next transaction checks the client anew');
  });
});

t.test('a wake-up with the room promised to a claim in flight is not lost when that claim ends',
  oneServer('woken by the events\' NOTIFY, which a cluster sends in the organization\'s worker, not where the worker listens'), async (t) => {
  // The claim in flight took its snapshot before the second event committed; the second wake-up
  // found no room (all of it promised to that claim) and stopped. When the claim came back with
  // room to spare, nothing claimed again: the second event waited for the poll (CI, webhook-wake).
  const a = await startApp(t);
  const w = await world(a);
  const posted: string[] = [];
  const transport: Transport = { post: async (_url, _headers, body) => { posted.push(JSON.parse(body).id); return { status: 204, durationMs: 1 }; } };
  const sql = postgres(a.adminUrl, { max: 4, onnotice: () => {} });
  // The same database and statements; only the answer of a held claim is kept back.
  let hold = true;
  let held = 0;
  let release!: () => void;
  const released = new Promise<void>((r) => { release = r; });
  const gated = new Proxy(sql, {
    apply(target, self, args: [TemplateStringsArray, ...unknown[]]) {
      const q = Reflect.apply(target, self, args) as Promise<unknown>;
      if (!hold || !/webhook_fanout_(batch|any)\(/.test(args[0].join(''))) return q;
      return (async () => { const rows = await q; held++; await released; return rows; })();
    },
  });
  const loop = startFanout(gated, a.config, transport, { log: pino({ level: 'silent' }), pollInterval: 60_000, batch: 4, maxInFlight: 4, byOrganization });
  t.teardown(async () => { release(); await loop.stop(); await sql.end(); });
  await new Promise((r) => setTimeout(r, 500)); // the listener is up

  await w.projects(1, 'FIRST');
  for (let i = 0; i < 250 && held === 0; i++) await new Promise((r) => setTimeout(r, 20));
  t.equal(held, 1, 'the first event\'s claim has run and its answer is held (all the room promised to it)');
  await w.projects(1, 'SECOND');
  await new Promise((r) => setTimeout(r, 300)); // its wake-up has come, and found no room
  hold = false;
  release();
  const until = Date.now() + 10_000;
  while (posted.length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  t.equal(posted.length, 2, 'both events sent, without waiting for the poll (60 s)');
  t.equal(await pending(a, w.org), 0, 'nothing pending');
});
