// One test per change of patches/postgres+3.4.9.patch that no other test shows (the patch header
// names the test of each change): each fails with that change taken out of node_modules/postgres
// and passes with it. Nothing here measures time: a bounded wait only tells a query that is
// answered or refused from one that waits for good.
import t, { type Test } from 'tap';
import net from 'node:net';
import postgres from 'postgres';
import { createTestDatabase } from '../helpers/database.ts';
import { proxy } from '../helpers/proxy.ts';
// The driver's own module, not part of its public API: change 5 is about its internals.
// @ts-expect-error no declaration file for the driver's internal module
import Queue from '../../node_modules/postgres/src/queue.js';

const onnotice = () => {};
type Code = { code?: string };

/** What `p` settles to, or `late` if it has not after `ms` (the timer keeps the test alive meanwhile). */
function within<T, L>(p: Promise<T>, late: L, ms = 5000): Promise<T | L> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<L>((r) => { timer = setTimeout(() => r(late), ms); })]).finally(() => clearTimeout(timer));
}

/** 'answered', the error's code, or 'still waiting after …' when the query neither answers nor fails. */
const settle = (p: Promise<unknown>, ms = 5000) =>
  within(p.then(() => 'answered', (e: Code) => e.code ?? String(e)), `still waiting after ${ms} ms`, ms);

/** Every callback scheduled by what has already run (microtasks, setImmediate) has run. */
const drain = async () => {
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 50));
};

/** Uncaught exceptions while the test runs: change 1's TypeError ends the process otherwise. */
function catchUncaught(t: Test) {
  const seen: Error[] = [];
  const h = (e: Error) => { seen.push(e); };
  process.on('uncaughtException', h);
  t.teardown(() => { process.off('uncaughtException', h); });
  return seen;
}

/** A pool on sockets the test holds (postgres.js's documented, untyped `socket` option). */
function onOwnSockets(url: string, options: postgres.Options<{}> = {}) {
  const target = new URL(url);
  const sockets: net.Socket[] = [];
  const sql = postgres(url, {
    max: 1, onnotice, ...options,
    ...{ socket: () => new Promise<net.Socket>((resolve, reject) => {
      const s = net.connect(Number(target.port || 5432), target.hostname, () => resolve(s)).once('error', reject);
      sockets.push(s);
    }) },
  });
  return { sql, sockets };
}

const pidOf = async (s: postgres.Sql | postgres.TransactionSql) => (await s<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid;

t.test('change 1: a statement sent on a connection whose socket is gone is not written to it', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const admin = postgres(adminUrl, { max: 1, onnotice });
  const sql = postgres(adminUrl, { max: 1, onnotice });
  t.teardown(async () => { await sql.end({ timeout: 1 }); await admin.end(); });
  const uncaught = catchUncaught(t);
  // sql.begin() keeps its connection (not a reserve(): change 3 covers those). Its session ends;
  // the failed statement makes begin() roll back, on the connection whose socket closed() dropped.
  const outcome = await sql.begin(async (tx) => {
    const pid = await pidOf(tx);
    await admin`select pg_terminate_backend(${pid}::int)`;
    await tx`select 1`;
  }).then(() => 'committed', (e: Code) => e.code);
  t.match(outcome, /CONNECTION_CLOSED|57P01|ECONNRESET/, `the transaction fails (${outcome})`);
  await drain();
  t.same(uncaught.map(String), [], 'no uncaught exception (TypeError: Cannot read properties of null (reading \'write\') in nextWrite)');
  t.equal(await settle(sql`select 1`), 'answered', 'the pool answers on a new session');
});

t.test('change 2: a statement written between a socket\'s error and its close is refused', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const { sql, sockets } = onOwnSockets(adminUrl);
  t.teardown(() => sql.end({ timeout: 1 }));
  t.equal(await settle(sql`select 1`), 'answered');
  // Registered after postgres.js's own listeners: runs after its error(), before its closed(true).
  let late: Promise<string> | undefined;
  sockets[0]!.once('error', () => { late = settle(sql`select 2`, 3000); });
  sockets[0]!.destroy(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
  await new Promise((r) => sockets[0]!.once('close', r));
  t.ok(late, 'the statement was sent from the error listener');
  t.equal(await late, 'CONNECTION_CLOSED', 'it fails with the close, instead of waiting for good');
  t.equal(await settle(sql`select 3`), 'answered', 'the next one is answered on a new session');
});

t.test('change 3: a reservation whose session ended refuses its later statements and is not pooled twice', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const admin = postgres(adminUrl, { max: 1, onnotice });
  const pool = postgres(adminUrl, { max: 1, onnotice });
  t.teardown(async () => { await pool.end({ timeout: 1 }); await admin.end(); });
  const uncaught = catchUncaught(t);

  const reserved = await pool.reserve();
  const first = await pidOf(reserved);
  // A statement waiting for the pool's only connection: once the reserved session ends, the pool
  // starts a new session on that connection for it.
  const waiting = pidOf(pool);
  await admin`select pg_terminate_backend(${first}::int)`;
  const lostOne = await settle(reserved`select 1`);
  t.match(lostOne, /CONNECTION_CLOSED|57P01|ECONNRESET/, `the statement on the ended session fails (${lostOne})`);
  const second = await waiting;
  t.not(second, first, 'the waiting statement got a new session');
  // Before: this statement went to the new session, the one the pool gave someone else.
  const later = await within(pidOf(reserved).then((pid) => `answered by ${pid === second ? 'the other caller\'s session' : pid}`,
    (e: Code) => e.code), 'still waiting after 5000 ms');
  t.equal(later, 'CONNECTION_CLOSED', 'a later statement of the reservation is refused');
  reserved.release();
  // Before: release() put the connection into `open` a second time.
  const state = (pool as unknown as { poolState?: () => { connections: { queue: string }[] } }).poolState?.();
  if (state) t.same(state.connections.map((c) => c.queue), ['open'], 'the pool holds its one connection once');
  const again = await within(pool.reserve(), null);
  t.ok(again, 'the pool\'s connection can be reserved again');
  if (again) {
    t.equal(await settle(again`select 1`), 'answered');
    again.release();
  }
  await drain();
  t.same(uncaught.map(String), [], 'no uncaught exception');
});

t.test('change 3: the reproduction of porsager/postgres#1208', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const killer = postgres(adminUrl, { max: 1, onnotice });
  const sql = postgres(adminUrl, { max: 2, onnotice });
  t.teardown(async () => { await sql.end({ timeout: 1 }); await killer.end(); });
  const uncaught = catchUncaught(t);
  const reserved = await sql.reserve();
  const pid = await pidOf(reserved);
  await killer`select pg_terminate_backend(${pid}::int)`;
  t.match(await settle(reserved`select 1`), /CONNECTION_CLOSED|57P01|ECONNRESET/, 'the statement on the ended session fails');
  t.equal(await settle(reserved`select 1`), 'CONNECTION_CLOSED', 'so does the next one, without crashing or waiting');
  reserved.release();
  await drain();
  t.same(uncaught.map(String), [], 'no uncaught exception');
  t.equal(await settle(sql`select 1`), 'answered', 'the pool answers');
});

t.test('change 4: the FATAL of a terminated session does not fail the next session\'s first statement', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const admin = postgres(adminUrl, { max: 1, onnotice });
  const pool = postgres(adminUrl, { max: 1, onnotice, connection: { application_name: 'patch-4' } });
  t.teardown(async () => { await pool.end({ timeout: 1 }); await admin.end(); });
  const sleeping = settle(pool`select pg_sleep(30)`, 10_000);
  // The statement is running (its ErrorResponse 57P01 comes while it is the active query).
  let pid: number | undefined;
  for (let i = 0; i < 500 && !pid; i++) {
    pid = (await admin<{ pid: number }[]>`select pid from pg_stat_activity
      where application_name = 'patch-4' and query like 'select pg_sleep%' and state = 'active'`)[0]?.pid;
    if (!pid) await new Promise((r) => setTimeout(r, 10));
  }
  t.ok(pid, 'the statement runs');
  await admin`select pg_terminate_backend(${pid!}::int)`;
  t.match(await sleeping, /CONNECTION_CLOSED|57P01/, 'it fails with its session');
  const next = await pool`select 1 as one`.then((r) => r, (e: Code) => e.code);
  t.same(next, [{ one: 1 }], 'the next statement, on a new session, is answered (before: 57P01)');
});

t.test('change 5: a queue that never empties stays bounded, and a removal scans only its live part', async (t) => {
  const q = Queue();
  const conns = [{ i: 1 }, { i: 2 }, { i: 3 }, { i: 4 }];
  for (const c of conns) q.push(c);
  // The busy queue under pipelined load: shift a connection, remove it (not there), push it back.
  // Each removal's indexOf shows the array's size and where the search starts.
  const indexOf = Array.prototype.indexOf;
  let longest = 0;
  let widest = 0;
  Array.prototype.indexOf = function (this: unknown[], x: unknown, from?: number) {
    longest = Math.max(longest, this.length);
    widest = Math.max(widest, this.length - (from ?? 0));
    return indexOf.call(this, x, from);
  };
  try {
    for (let n = 0; n < 100_000; n++) {
      const c = q.shift();
      q.remove(c);
      q.push(c);
    }
  } finally {
    Array.prototype.indexOf = indexOf;
  }
  t.equal(q.length, 4);
  t.same([q.shift(), q.shift(), q.shift(), q.shift()], conns, 'the four connections, in order');
  t.ok(longest <= 4096, `the queue's array stays bounded after 100,000 moves (${longest} slots; before: 100,004)`);
  t.ok(widest <= 4, `a removal searches the live part only (${widest} slots; before: the shifted-out slots too)`);
});

// Change 8: one socket write for a create's transaction (about 1.5 KB), not two.
t.test('change 8: the statements of one turn, up to 16 KB, go out in one socket write', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const { sql, sockets } = onOwnSockets(adminUrl);
  t.teardown(() => sql.end({ timeout: 1 }));
  await sql`select 1`;
  const writes: number[] = [];
  const socket = sockets[0]!;
  const write = socket.write;
  socket.write = function (this: net.Socket, chunk: Buffer, ...rest: unknown[]) {
    writes.push(chunk.length);
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof socket.write;
  // Five statements without parameters (no describe round trip), 2-3 KB together, in one turn.
  const texts = ['begin', ...['a', 'b', 'c'].map((c) => `select '${c.repeat(600)}' as x`), 'commit'];
  const rows = await Promise.all(texts.map((s) => sql.unsafe(s)));
  t.equal(rows.length, 5);
  t.ok(writes.reduce((a, b) => a + b, 0) > 1024, `more than 1 KB written (${writes.join(' + ')} bytes)`);
  t.equal(writes.length, 1, 'in one write (before: one at each 1 KB)');
});

t.test('change 10: a Result keeps its fields on its prototype, not as properties of its own', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const sql = postgres(adminUrl, { max: 1, onnotice });
  t.teardown(() => sql.end({ timeout: 1 }));
  const r = await sql`select 1 as one`;
  t.same(Object.getOwnPropertyNames(r).sort(), ['0', 'length'], 'only the rows and length are its own');
  t.same(Object.keys(r), ['0'], 'the fields are not enumerable');
  t.equal(r.count, 1);
  t.equal(r.command, 'SELECT');
  t.same(r.columns.map((c) => c.name), ['one']);
  t.type(r.statement, 'object');
  (r as { count: number }).count = 7;
  t.equal(r.count, 7, 'still writable');
  t.same(r, [{ one: 1 }], 'invisible to deep equality');
});

t.test('change 12: poolState() tells where each connection is', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const sql = postgres(adminUrl, { max: 2, onnotice });
  t.teardown(() => sql.end({ timeout: 1 }));
  const state = () => (sql as unknown as { poolState: () => { waiting: number; connections: Record<string, unknown>[] } }).poolState();
  t.type((sql as unknown as { poolState: unknown }).poolState, 'function');
  t.same(state(), { waiting: 0, connections: [{ queue: 'closed', pid: undefined, socket: null, starting: false, starting_ms: null, active: false, pipelined: 0 },
    { queue: 'closed', pid: undefined, socket: null, starting: false, starting_ms: null, active: false, pipelined: 0 }] }, 'a new pool: two closed');
  const r = await sql.reserve();
  const pid = await pidOf(r);
  const running = r`select pg_sleep(1)`.execute();
  await new Promise((done) => setImmediate(done)); // execute() sends it a microtask later
  const s = state();
  t.equal(s.waiting, 0);
  t.same(s.connections.map((c) => c.queue).sort(), ['closed', 'reserved']);
  t.match(s.connections.find((c) => c.queue === 'reserved'), { pid, socket: 'open', starting: false, starting_ms: null, active: true, pipelined: 0 });
  await running;
  r.release();
  t.same(state().connections.map((c) => c.queue).sort(), ['closed', 'open']);
});

t.test('change 12: poolState() tells how long a start-up has lasted, from the socket to ReadyForQuery', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  // Each new connection's first bytes wait 2 s (a loaded server; long enough that a late timer still looks during it).
  const link = await proxy(t, new URL(adminUrl), 2000);
  const sql = postgres(link.url, { max: 1, onnotice });
  t.teardown(() => sql.end({ timeout: 1 }));
  const state = () => (sql as unknown as { poolState: () => { connections: { starting_ms: number | null }[] } }).poolState();
  const answered = sql`select 1 as n`.execute();
  await new Promise((r) => setTimeout(r, 300));
  const during = state().connections[0]!.starting_ms;
  t.ok(during !== null && during >= 250 && during < 2000, `under way: ${during} ms`);
  t.same(await answered, [{ n: 1 }]);
  t.equal(state().connections[0]!.starting_ms, null, 'none once the session is up');
});

t.test('change 16: a bytea parameter given as bytes is sent in binary format, byte for byte', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const { sql, sockets } = onOwnSockets(adminUrl);
  t.teardown(() => sql.end({ timeout: 1 }));
  await sql`select 1`;
  let written = 0;
  const socket = sockets[0]!;
  const write = socket.write;
  socket.write = function (this: net.Socket, chunk: Buffer, ...rest: unknown[]) {
    written += chunk.length;
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof socket.write;
  const every = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  const big = Buffer.alloc(1 << 20, every);
  // Text and binary parameters mixed, a null and an empty one among them, and a view of a larger buffer.
  const [r] = await sql<{ a: string; b: string; c: string; d: string | null; e: number; f: string }[]>`
    select md5(${big}::bytea) as a, ${'text'}::text as b, encode(${every}::bytea, 'hex') as c,
           ${null}::bytea as d, octet_length(${Buffer.alloc(0)}::bytea) as e,
           encode(${every.subarray(250, 254)}::bytea, 'hex') as f`;
  t.equal(r!.a, (await import('node:crypto')).createHash('md5').update(big).digest('hex'), '1 MiB arrives intact');
  t.equal(r!.b, 'text', 'a text parameter beside them still arrives as text');
  t.equal(r!.c, every.toString('hex'), 'every byte value arrives as itself');
  t.equal(r!.d, null);
  t.equal(r!.e, 0, 'an empty one is empty');
  t.equal(r!.f, 'fafbfcfd', 'a view of a larger buffer sends its own bytes only');
  t.ok(written < 1.1 * (1 << 20), `${written} bytes written for 1 MiB of bytea (before: over 2 MiB, as hex text)`);
});

t.test('change 17: a described statement\'s bytea columns are received in binary format, byte for byte', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const { sql, sockets } = onOwnSockets(adminUrl);
  t.teardown(() => sql.end({ timeout: 1 }));
  await sql`select 1`;
  let received = 0;
  sockets[0]!.on('data', (chunk: Buffer) => { received += chunk.length; });
  const every = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  const read = (n: number) => sql<{ big: Buffer; every: Buffer; none: Buffer | null; empty: Buffer; label: string; hashes: Buffer[] }[]>`
    select decode(repeat(encode(${every}::bytea, 'hex'), ${n}::integer), 'hex') as big, ${every}::bytea as every,
           null::bytea as none, ''::bytea as empty, 'text' as label, array['\\x01'::bytea, '\\xff'::bytea] as hashes`;
  const sizes: number[] = [];
  for (let i = 0; i < 3; i++) {
    const before = received;
    const [r] = await read(4096);
    sizes.push(received - before);
    t.ok(Buffer.isBuffer(r!.big) && r!.big.equals(Buffer.concat(Array(4096).fill(every))), `execution ${i + 1}: 1 MiB arrives intact`);
    t.ok(r!.every.equals(every), 'every byte value arrives as itself');
    t.equal(r!.none, null);
    t.ok(Buffer.isBuffer(r!.empty) && r!.empty.length === 0, 'an empty one is an empty Buffer');
    t.equal(r!.label, 'text', 'a text column beside them is still text');
    t.same(r!.hashes.map((h) => h.toString('hex')), ['01', 'ff'], 'a bytea[] column is still parsed from text');
  }
  t.ok(sizes[0]! > 2 * (1 << 20), `the first execution, before the statement is described: hex text (${sizes[0]} bytes)`);
  t.ok(sizes[1]! < 1.1 * (1 << 20) && sizes[2]! < 1.1 * (1 << 20),
    `later executions: ${sizes[1]} and ${sizes[2]} bytes for 1 MiB (before: over 2 MiB, as hex text)`);
  const [raw] = await sql`select ${every}::bytea as b`.raw();
  t.equal(Buffer.from(raw![0] as Uint8Array).toString(), '\\x' + every.toString('hex'), '.raw() still gets the text form');
});
