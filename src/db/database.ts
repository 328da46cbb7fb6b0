// A Database: the API's connections to PostgreSQL. Three pools (transactions, one-statement reads,
// point reads), one breaker that makes requests fail fast while the database is unreachable, the
// deadlines of a wait for a connection, the watchdog that rebuilds a wedged pool, and on a Citus
// coordinator a Database of each worker that requests of its organizations go to. Each idea is a
// module of its own: driver.ts (transactions), reads.ts, faults.ts (the breaker), deadline.ts,
// retries.ts, watchdog.ts, cluster.ts (the routing).
import postgres from 'postgres';
import { Kysely, sql, type Transaction } from 'kysely';
import { PostgresJSDialect } from 'kysely-postgres-js';
import type { DB } from './schema.ts';
import type { Config } from '../config.ts';
import { Breaker, reconnectBackoff } from './faults.ts';
import { driverState, watchPools, type DriverPoolState, type PoolRebuilt } from './watchdog.ts';
import { Progress } from './progress.ts';
import type { ClusterRouting } from './cluster.ts';
import { editDatabaseUrl } from './url.ts';
import { postgresFor } from './hosts.ts';
import { preparingDriver, type Reserved } from './driver.ts';
import { pooledQuery } from './reads.ts';
import { runAgainIfLostAtBegin } from './retries.ts';
import { PIPELINED_READ } from './pipelining.ts';
import type { Generation, OnLate, PoolName, Routing, Statement } from './pool.ts';

export type { PoolRebuilt } from './watchdog.ts';
export type { Reserved } from './driver.ts';
export type { PoolName, Statement } from './pool.ts';
export { runAgainIfLostAtBegin } from './retries.ts';
export { PIPELINED, PIPELINED_READ, pipelined, pipelinedRead } from './pipelining.ts';

export type Db = Kysely<DB>;
export type Tx = Transaction<DB>;

/** What a request's statements go through: on a Citus coordinator, those of one organization go to
 * the worker that holds its shard group (src/db/cluster.ts); on one server, anywhere. */
export interface Connections {
  /** Transactions (`db.transaction()`) and single statements, through the transactions' pool. */
  db: Db;
  /** One autocommit statement on the pool, without reserving a connection (the one-statement
   * reads): same breaker, deadline for a free connection and prepared statements as `db`. */
  query: <R = Record<string, any>>(compiled: Statement, opts?: { point?: boolean }) => Promise<R[]>;
  /** A transaction whose statements are all known before the first is sent (a command under an
   * Idempotency-Key): BEGIN, the statements and COMMIT go out in one write on a connection of the
   * transactions' pool, as `db.transaction()` would send them, without Kysely's layers in between
   * (about a tenth of a create's server CPU, docs/benchmarks.md). Each statement's rows, in order,
   * once committed; the first failed statement's error is the transaction's, and it rolls back. */
  batch: (statements: Statement[]) => Promise<Record<string, any>[][]>;
}

/** The API's connections to PostgreSQL. Its own `db`, `query` and `batch` name no organization:
 * on a Citus coordinator they run there, as they are (the token check, the rate limit, the
 * operator's routes); a request's statements go through `of(organization)`. */
export interface Database extends Connections {
  /** The connections of `organizationId`'s requests: on a Citus coordinator, a connection to the
   * worker that holds its shard group once the placement is known, else through the coordinator,
   * each statement routed for the organization (src/db/cluster.ts); on one server, the database's own.
   * Kept for the organization's next requests unless `keep` is false (an organization named by a
   * token not yet checked: a capability link's). */
  of: (organizationId: string, opts?: { keep?: boolean }) => Connections;
  /** The transactions' pool, for a plain statement outside a transaction. Read it at each use: the
   * watchdog may replace a wedged pool with a new one. */
  readonly sql: postgres.Sql;
  /** LISTEN on a connection of its own (postgres.js re-listens after it reconnects); never rebuilt. */
  listen: (channel: string, onNotify: (payload: string) => void, onListen?: () => void) => Promise<unknown>;
  /** One statement through each pool (transactions, reads, point reads), for /ready: it fails or
   * does not settle while a pool cannot hand out a connection. */
  ping: () => Promise<void>;
  /** On a Citus coordinator, one statement through each pool of every worker node this process
   * holds connections to: how many; it fails when there is none, or a pool cannot hand out a
   * connection. */
  pingNodes: () => Promise<number>;
  /** `listener` hears each pool the watchdog rebuilt (src/db/watchdog.ts), with what it found. */
  onPoolRebuilt: (listener: (event: PoolRebuilt) => void) => void;
  /** Connections held by transactions, and callers waiting for one (for /metrics). */
  stats: () => { size: number; inUse: number; waiting: number; unreachable: boolean };
  /** Transactions, waits for a connection and one-statement reads under way. */
  busy: () => boolean;
  /** True while the database is known to be unreachable (requests fail fast). */
  unreachable: () => boolean;
  /** `listener` hears each time requests start failing fast, with the connection failure that caused it. */
  onUnreachable: (listener: (cause: unknown) => void) => void;
  /** `listener` hears each wait for a connection that passed its deadline (a request answered 503),
   * with the pool's state at that moment: connections held by transactions against its size, or
   * the one-statement reads in flight. */
  onAcquireTimeout: (listener: (state: AcquireTimeout) => void) => void;
  /** A connection of the transactions' pool, reserved: what `db.transaction()` runs on; its
   * statements routed for `organization` on a Citus coordinator. */
  reserve: (organization?: string) => Promise<Reserved>;
  /** On a Citus coordinator: each statement of a request goes to its organization's worker
   * (src/db/cluster.ts), on a connection to that worker when the routing names it (`node`), else
   * through the coordinator. Set once at start-up, before requests. */
  routeTo: (routing: ClusterRouting) => void;
  /** True once routeTo was called: the database is a Citus coordinator. */
  readonly routed: boolean;
  close: () => Promise<void>;
}

export interface AcquireTimeout {
  pool: 'transactions' | 'reads' | 'points';
  deadline_ms: number;
  /** Transactions: connections reserved and callers waiting. Reads: statements in flight. */
  in_use: number;
  waiting: number;
  size: number;
  breaker_open: boolean;
  /** Where the driver's connections are: a free pool whose connections never come shows here. */
  driver: DriverPoolState;
}

export interface ConnectOptions {
  /** false sends unnamed statements only, for a pooler in transaction mode that cannot keep named
   * prepared statements (PgBouncer before 1.21; docs/scaling.md). */
  prepare?: boolean;
  /** Deadline of a new connection (TCP and start-up). */
  connectTimeoutMs?: number;
  /** statement_timeout of the server's sessions (0: the server's own setting). */
  statementTimeoutMs?: number;
  /** Deadline for a free pooled connection. */
  acquireTimeoutMs?: number;
  /** Connections of the pool for one-statement reads (`query`); default min(4, max). */
  readPoolSize?: number;
  /** Point reads in flight on the one point connection before the next go to the read pool (0: none). */
  pointPipeline?: number;
  /** A worker of a cluster, reached from its coordinator's Database: it takes no request further. */
  node?: boolean;
}

/** A worker that holds no shard group is closed once no request was handed its connections for this long. */
const REMOVED_NODE_GRACE_MS = 10_000;
const REMOVED_NODE_CHECK_MS = 5_000;

/** Organizations whose connections a Database keeps made (Database.of). */
const ORGANIZATIONS_KEPT = 10_000;

export function connect(url: string, max = 10, opts: ConnectOptions = {}): Database {
  const prepare = opts.prepare ?? true;
  // The driver counts its connect deadline in whole seconds; the watchdog judges start-ups by it.
  const connectS = Math.max(1, Math.ceil((opts.connectTimeoutMs ?? 5000) / 1000));
  const options = (size: number, name: string): postgres.Options<Record<string, never>> => ({
    max: size,
    prepare,
    backoff: reconnectBackoff,
    onnotice: () => {},
    transform: { undefined: null },
    connect_timeout: connectS,
    connection: {
      application_name: name,
      // A start-up parameter, so every session of the pool has it from its first statement.
      ...(opts.statementTimeoutMs ? { statement_timeout: opts.statementTimeoutMs } : {}),
    },
  });
  // One-statement reads get a small pool of their own: once every connection has a statement in
  // flight, postgres.js pipelines the next ones onto them, so a few busy sessions answer many
  // requests per wake-up. On 2 cores this halved PostgreSQL's CPU per /v1/me against the same
  // reads spread over 20 mostly idle sessions (measured: the history of docs/benchmarks.md).
  const readPoolSize = opts.readPoolSize ?? Math.min(4, max);
  // Point reads (one row by key: /v1/me, a resource by id) cost PostgreSQL tens of microseconds,
  // less than a socket write and a backend's wake-up each: they go to one connection, pipelined,
  // so that those arriving together share one write and one wake-up. Past `pointPipeline` in
  // flight they overflow to the read pool, so that a burst is not queued behind one backend.
  const pointPipeline = opts.pointPipeline ?? 16;
  const sizes: Record<PoolName, number> = { transactions: max, reads: readPoolSize, points: 1 };
  const names: Record<PoolName, string> = { transactions: 'svc-api', reads: 'svc-api-read', points: 'svc-api-point' };
  const open = (pool: PoolName): Generation =>
    ({ sql: postgresFor(url, options(sizes[pool], names[pool])), waits: new Progress(), statements: new Progress() });
  // Replaced as a whole when the watchdog finds one wedged: every use reads the current one.
  const pools: Record<PoolName, Generation> = { transactions: open('transactions'), reads: open('reads'), points: open('points') };
  const listener = postgresFor(url, options(1, 'svc-api-listen'));
  const counts = { inUse: 0, waiting: 0, size: max };
  const reads = { inFlight: 0 };
  const points = { inFlight: 0 };
  const breaker = new Breaker();
  const lateListeners: ((state: AcquireTimeout) => void)[] = [];
  const rebuiltListeners: ((event: PoolRebuilt) => void)[] = [];
  // The state of the pool the wait was on (a rebuilt pool's successor may already be serving).
  const late: OnLate = (pool, ms, sql) => {
    const driver = driverState(sql);
    const state: AcquireTimeout = pool === 'transactions'
      ? { pool, deadline_ms: ms, in_use: counts.inUse, waiting: counts.waiting, size: max, breaker_open: breaker.open, driver }
      : pool === 'reads'
        ? { pool, deadline_ms: ms, in_use: reads.inFlight, waiting: 0, size: readPoolSize, breaker_open: breaker.open, driver }
        : { pool, deadline_ms: ms, in_use: points.inFlight, waiting: 0, size: 1, breaker_open: breaker.open, driver };
    for (const l of lateListeners) l(state);
  };
  const deadlines = { acquireMs: opts.acquireTimeoutMs ?? 5000, connectMs: opts.connectTimeoutMs ?? 5000 };
  const routing: Routing = {};
  // On a cluster, a request whose organization's worker is known takes its connections from pools
  // to that worker (a Database of the worker's own: its breaker, deadlines and watchdog), so that
  // its statements run where its rows are; everything else, here.
  const workers = new Map<string, Database>();
  const listeners = { unreachable: [] as ((cause: unknown) => void)[], late: lateListeners, rebuilt: rebuiltListeners };
  const worker = (organization: string | undefined): Database | undefined => {
    const node = opts.node || organization === undefined ? undefined : routing.current?.node?.(organization);
    if (node === undefined) return undefined;
    let d = workers.get(node);
    if (!d) {
      d = connect(editDatabaseUrl(url, { hosts: node }), max, { ...opts, node: true });
      d.routeTo(routing.current!.local ?? routing.current!);
      for (const l of listeners.unreachable) d.onUnreachable(l);
      for (const l of listeners.late) d.onAcquireTimeout(l);
      for (const l of listeners.rebuilt) d.onPoolRebuilt(l);
      workers.set(node, d);
    }
    used.set(node, Date.now());
    // A worker this process cannot reach (while the coordinator may): its organizations' requests
    // go through the coordinator, which reaches it its own way, but for one a second, the probe
    // its breaker lets through (src/db/faults.ts).
    if (!d.unreachable()) return d;
    const now = Date.now();
    if (now - (probed.get(node) ?? 0) < 1000) return undefined;
    probed.set(node, now);
    return d;
  };
  const probed = new Map<string, number>();
  const used = new Map<string, number>();
  // A node that holds no shard group any more (drained and removed, or its groups moved away) is
  // handed to no request: its pools close once nothing is under way on them and none was handed out
  // for REMOVED_NODE_GRACE_MS (a statement there about a group that left fails as moved away, and
  // runs again where the group is).
  const closing = new Set<Promise<void>>();
  const forgetRemovedNodes = () => {
    const held = routing.current?.nodes?.();
    if (!held) return;
    for (const [node, d] of workers) {
      if (held.has(node)) continue;
      if (d.busy()) used.set(node, Date.now());
      if (Date.now() - (used.get(node) ?? 0) < REMOVED_NODE_GRACE_MS) continue;
      workers.delete(node);
      used.delete(node);
      probed.delete(node);
      const done: Promise<void> = d.close().catch(() => undefined).finally(() => closing.delete(done));
      closing.add(done);
    }
  };
  const forgetting = opts.node ? undefined : setInterval(forgetRemovedNodes, REMOVED_NODE_CHECK_MS).unref();
  const own = preparingDriver({ pool: () => pools.transactions, counts, prepare, deadlines, breaker, onLate: late, routing });
  const reserve = (organization?: string): Promise<Reserved> => worker(organization)?.reserve(organization) ?? own.reserve(organization);
  const readQuery = pooledQuery({ current: () => pools.reads, pool: 'reads', prepare, deadlines, breaker, counts: reads, onLate: late, routing });
  const pointQuery = pooledQuery({ current: () => pools.points, pool: 'points', prepare, deadlines, breaker, counts: points, onLate: late, routing });
  /** The connections whose statements are routed for `organization` (none: as they are). */
  const connections = (organization?: string): Connections => {
    const db = new Kysely<DB>({ dialect: new PostgresJSDialect({
      // What the dialect asks of postgres.js: a reserved connection, and an end (the pools' own, at close).
      postgres: (async () => ({ reserve: () => reserve(organization), end: async () => {} })) as never,
    }) });
    const batch = (statements: Statement[]): Promise<Record<string, any>[][]> =>
      (organization === undefined ? undefined : worker(organization)?.of(organization).batch(statements)) ?? runAgainIfLostAtBegin(async () => {
        const connection = await own.reserve(organization);
        try {
          await connection.unsafe('begin', []);
          const later: Promise<Record<string, any>[]>[] = [];
          for (const s of statements) later.push((await connection.unsafe(PIPELINED_READ + s.sql, [...s.parameters]))[0]!.later);
          await connection.unsafe('commit', []);
          return await Promise.all(later);
        } catch (e) {
          await connection.unsafe('rollback', []).catch(() => undefined);
          throw e;
        } finally {
          connection.release();
        }
      });
    const query = <R>(compiled: Statement, o?: { point?: boolean }): Promise<R[]> =>
      (organization === undefined ? undefined : worker(organization)?.of(organization).query<R>(compiled, o))
        ?? (o?.point && points.inFlight < pointPipeline ? pointQuery<R>(compiled, organization) : readQuery<R>(compiled, organization));
    return { db, batch, query };
  };
  const root = connections();
  // One set per organization, made at its first request and kept (a Kysely instance and two
  // closures: a few hundred bytes); the oldest go past ORGANIZATIONS_KEPT.
  const byOrganization = new Map<string, Connections>();
  const of = (organizationId: string, o?: { keep?: boolean }): Connections => {
    if (!routing.current) return root;
    let c = byOrganization.get(organizationId);
    if (!c && o?.keep === false) return connections(organizationId);
    if (!c) {
      if (byOrganization.size >= ORGANIZATIONS_KEPT) byOrganization.delete(byOrganization.keys().next().value!);
      byOrganization.set(organizationId, c = connections(organizationId));
    }
    return c;
  };

  // The watchdog (src/db/watchdog.ts): a pool found wedged is replaced by a new one.
  const stopWatchdog = watchPools({
    url, pools, open, transactionsFull: () => counts.inUse >= max, breakerOpen: () => breaker.open,
    deadlines: { acquireMs: deadlines.acquireMs, connectMs: connectS * 1000 },
    onRebuilt: (event) => { for (const l of rebuiltListeners) l(event); },
  });

  return {
    ...root,
    of,
    get sql() { return pools.transactions.sql; },
    listen: (channel, onNotify, onListen) => listener.listen(channel, onNotify, onListen),
    ping: async () => {
      const one = { sql: 'select 1', parameters: [] };
      await Promise.all([root.db.transaction().execute((tx) => sql`select 1`.execute(tx)), readQuery(one), pointQuery(one)]);
    },
    pingNodes: async () => {
      const held = [...workers.values()];
      if (held.length === 0) throw new Error('no worker node is held');
      await Promise.all(held.map((d) => d.ping()));
      return held.length;
    },
    onPoolRebuilt: (l) => { rebuiltListeners.push(l); },
    reserve,
    routeTo: (r) => { routing.current = r; },
    get routed() { return routing.current !== undefined; },
    stats: () => ({ ...counts, unreachable: breaker.open }),
    busy: () => counts.inUse + counts.waiting + reads.inFlight + points.inFlight > 0,
    unreachable: () => breaker.open,
    onUnreachable: (l) => { listeners.unreachable.push(l); breaker.onTrip(l); },
    onAcquireTimeout: (l) => { lateListeners.push(l); },
    // postgres.js can wait forever for idle connections to end (porsager/postgres#925): bound it.
    close: async () => {
      stopWatchdog();
      clearInterval(forgetting);
      await Promise.all([...workers.values()].map((d) => d.close()));
      await Promise.all(closing);
      if (!opts.node) await routing.current?.close?.();
      await root.db.destroy();
      await Promise.all([...Object.values(pools).map((p) => p.sql), listener].map((p) => p.end({ timeout: 5 })));
    },
  };
}

/** The server's own pool (as svc_runtime), with the configured pooling and deadlines. */
export function connectRuntime(config: Config, max = config.dbPoolSize): Database {
  return connect(config.runtimeDatabaseUrl, max, {
    prepare: config.dbPrepare,
    connectTimeoutMs: config.dbTimeouts.connectMs,
    statementTimeoutMs: config.dbTimeouts.statementMs,
    acquireTimeoutMs: config.dbTimeouts.acquireMs,
    readPoolSize: config.dbReadPoolSize,
    pointPipeline: config.dbPointPipeline,
  });
}
