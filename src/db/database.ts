import postgres from 'postgres';
import { Kysely, sql, type CompiledQuery, type RawBuilder, type Transaction } from 'kysely';
import { PostgresJSDialect } from 'kysely-postgres-js';
import type { DB } from './schema.ts';
import type { Config } from '../config.ts';
import { Breaker, isReadOnlySession, isRemoteNodeFailure, isSessionLost, isUnreachable, reconnectBackoff, unavailable } from './faults.ts';
import { Progress, driverState, verify, type DriverPoolState } from './watchdog.ts';
import type { ClusterRouting, Routed } from './cluster.ts';
import { editDatabaseUrl } from './url.ts';

export type Db = Kysely<DB>;
export type Tx = Transaction<DB>;
/** What a one-statement read sends: its text and parameters (a compiled Kysely query is one). */
export type Statement = Pick<CompiledQuery, 'sql' | 'parameters'>;

export interface Database {
  db: Db;
  /** The transactions' pool, for a plain statement outside a transaction. Read it at each use: the
   * watchdog may replace a wedged pool with a new one. */
  readonly sql: postgres.Sql;
  /** LISTEN on a connection of its own (postgres.js re-listens after it reconnects); never rebuilt. */
  listen: (channel: string, onNotify: (payload: string) => void, onListen?: () => void) => Promise<unknown>;
  /** One statement through each pool (transactions, reads, point reads), for /ready: it fails or
   * does not settle while a pool cannot hand out a connection. */
  ping: () => Promise<void>;
  /** `listener` hears each pool the watchdog rebuilt (src/db/watchdog.ts), with what it found. */
  onPoolRebuilt: (listener: (event: PoolRebuilt) => void) => void;
  /** Connections held by transactions, and callers waiting for one (for /metrics). */
  stats: () => { size: number; inUse: number; waiting: number; unreachable: boolean };
  /** True while the database is known to be unreachable (requests fail fast). */
  unreachable: () => boolean;
  /** `listener` hears each time requests start failing fast, with the connection failure that caused it. */
  onUnreachable: (listener: (cause: unknown) => void) => void;
  /** `listener` hears each wait for a connection that passed its deadline (a request answered 503),
   * with the pool's state at that moment: connections held by transactions against its size, or
   * the one-statement reads in flight. */
  onAcquireTimeout: (listener: (state: AcquireTimeout) => void) => void;
  /** One autocommit statement on the pool, without reserving a connection (the one-statement
   * reads): same breaker, deadline for a free connection and prepared statements as `db`. */
  query: <R = Record<string, any>>(compiled: Statement, opts?: { point?: boolean }) => Promise<R[]>;
  /** A transaction whose statements are all known before the first is sent (a command under an
   * Idempotency-Key): BEGIN, the statements and COMMIT go out in one write on a connection of the
   * transactions' pool, as `db.transaction()` would send them, without Kysely's layers in between
   * (about a tenth of a create's server CPU, docs/benchmarks.md). Each statement's rows, in order,
   * once committed; the first failed statement's error is the transaction's, and it rolls back. */
  batch: (statements: Statement[]) => Promise<Record<string, any>[][]>;
  /** A connection of the transactions' pool, reserved: what `db.transaction()` runs on. */
  reserve: () => Promise<Reserved>;
  /** On a Citus coordinator: each statement of a request goes to its organization's worker
   * (src/db/cluster.ts), on a connection to that worker when the routing names it (`node`), else
   * through the coordinator. Set once at start-up, before requests. */
  routeTo: (routing: ClusterRouting) => void;
  /** True once routeTo was called: the database is a Citus coordinator. */
  readonly routed: boolean;
  close: () => Promise<void>;
}

/** A reserved connection of the transactions' pool (preparingDriver). */
export type Reserved = Awaited<ReturnType<ReturnType<typeof preparingDriver>['reserve']>>;

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

export type PoolName = 'transactions' | 'reads' | 'points';

/** A pool as opened, with the progress of its own waits and statements: the watchdog replaces it
 * whole, and what the old one still has outstanding is not counted against the new one. */
interface Generation { sql: postgres.Sql; waits: Progress; statements: Progress; idleOnce?: boolean }

export interface PoolRebuilt {
  pool: PoolName;
  /** What made the watchdog look: no progress at all, a wait past its deadline, or a statement
   * past it whose session turned out not to be working on it. */
  reason: 'stalled' | 'timed-out' | 'slow';
  /** How long the longest of its waits or statements had waited (Progress.stalledMs): at least
   * the acquire deadline, whatever the reason. */
  stalled_ms: number;
  /** The wedged pool's driver state, as it was replaced. */
  driver: DriverPoolState;
}

/** Marks a statement whose rows nobody reads (`pipelined()`): it is sent without waiting for its
 * answer, so it shares a round trip with the transaction's next statement (COMMIT), which then
 * fails with its error, if it had one. */
export const PIPELINED = '/* svc:pipelined */ ';

export function pipelined(statement: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`${sql.raw(PIPELINED)}${statement}`;
}

/** Like PIPELINED, but its rows are wanted later: it answers at once with one row, `{ later }`, a
 * promise of its rows that has settled by the time the transaction's next statement (COMMIT) answers. */
export const PIPELINED_READ = '/* svc:pipelined-read */ ';

export function pipelinedRead<R>(statement: RawBuilder<R>): RawBuilder<{ later: Promise<R[]> }> {
  return sql<{ later: Promise<R[]> }>`${sql.raw(PIPELINED_READ)}${statement}`;
}

/** Kysely's postgres.js adapter runs every query through `unsafe()`, which does not prepare by
 * default: each parameterized query would cost an extra round trip to describe its parameters.
 * Reserved connections here prepare (and cache per connection) every statement, pipeline
 * `begin` with the transaction's first statement instead of waiting a round trip for it, and
 * a PIPELINED statement with the one after it. */
/** A routed statement's rows as the driver would have given the statement itself: a statement
 * without rows answers its row count through the call, read back as its own command's count. */
function unrouted(routed: Routed | undefined, rows: postgres.RowList<postgres.Row[]>): postgres.RowList<postgres.Row[]> {
  if (!routed?.count) return rows;
  return Object.assign([], { command: routed.count.command, count: Number(rows[0]?.count ?? 0) }) as never;
}

function preparingDriver(pool: () => Generation, counts: { inUse: number; waiting: number; size: number }, prepare: boolean,
  deadlines: { acquireMs: number; connectMs: number }, breaker: Breaker, late: (pool: 'transactions', ms: number, sql: postgres.Sql) => void,
  routing: { current?: ClusterRouting }) {
  /** A connection failure anywhere opens the breaker; the error goes on to the caller. */
  const watch = <T>(p: Promise<T>): Promise<T> => p.catch((e) => {
    if (isUnreachable(e)) breaker.failed(e);
    throw e;
  });
  return {
    async reserve() {
      const admitted = breaker.admit();
      if (admitted === 'reject') throw unavailable();
      const progress = pool();
      counts.waiting++;
      const waited = progress.waits.start();
      let connection: postgres.ReservedSql;
      let served = false;
      try {
        const ms = admitted === 'probe' ? deadlines.connectMs : deadlines.acquireMs;
        connection = await watch(withDeadline(progress.sql.reserve(), ms, () => late('transactions', ms, progress.sql)))
          .catch((e) => { served = (e as { code?: string }).code !== 'DB_POOL_TIMEOUT'; throw e; });
        served = true;
        breaker.succeeded();
      } finally {
        counts.waiting--;
        progress.waits.finish(waited, served, !served && counts.inUse < counts.size);
        if (admitted === 'probe') breaker.released();
      }
      counts.inUse++;
      let released = false;
      let lost = false;
      let readOnly = false;
      // Statements sent without waiting for their answer (`begin`, PIPELINED ones): the next
      // statement goes out behind them, and the first of their errors is what it reports.
      let ahead: Promise<unknown>[] = [];
      // Every statement counts for the watchdog: answered (or failed) is progress.
      const seen = <T>(p: Promise<T>): Promise<T> => {
        const sent = progress.statements.start();
        return p.then((rows) => {
          progress.statements.finish(sent);
          return rows;
        }, (e) => {
          progress.statements.finish(sent);
          if (isSessionLost(e)) lost = true;
          if (isReadOnlySession(e)) readOnly = true;
          throw e;
        });
      };
      const sendAhead = (p: Promise<unknown>) => {
        p.catch(() => {});
        ahead.push(p);
      };
      return {
        async unsafe(query: string, parameters: unknown[]) {
          // The server ended the session and its transaction with it: nothing is left to roll back,
          // and the failure that ended it stays the one the caller sees.
          if (query === 'rollback' && lost) return Object.assign([], { command: 'ROLLBACK', count: 0 });
          if (query === 'begin' && parameters.length === 0) {
            // postgres.js writes queries to the connection in call order; errors surface below.
            sendAhead(seen(watch(connection.unsafe('begin'))).catch((e) => {
              // A session found dead at `begin`: no statement of this transaction ran, so the
              // caller may run it again on a new connection (runAgainIfLostAtBegin).
              if (isSessionLost(e) && !isUnreachable(e)) Object.assign(e, { lostAtBegin: true });
              throw e;
            }));
            return Object.assign([], { command: 'BEGIN', count: 0 });
          }
          // One server has no routing: no await, so no statement waits a turn for it.
          const routing_ = routing.current?.route(query, parameters);
          const routed = routing_ ? await routing_ : undefined;
          const result = routed
            ? seen(watch(connection.unsafe(routed.sql, routed.parameters as postgres.ParameterOrJSON<never>[], { prepare })))
              .then((rows) => unrouted(routed, rows))
            : seen(watch(connection.unsafe(query, parameters as postgres.ParameterOrJSON<never>[], { prepare })));
          if (query.startsWith(PIPELINED)) {
            sendAhead(result);
            return Object.assign([], { command: 'SELECT', count: 0 });
          }
          if (query.startsWith(PIPELINED_READ)) {
            sendAhead(result);
            const later = result.then((rows) => [...rows]);
            later.catch(() => {}); // its failure is the next statement's, reported there
            return Object.assign([{ later }], { command: 'SELECT', count: 1 });
          }
          if (ahead.length > 0) {
            const sent = ahead;
            ahead = [];
            result.catch(() => {});
            // A rollback follows the caller's own error, which must stay the one reported.
            if (query === 'rollback') await Promise.allSettled(sent);
            else for (const p of sent) await p;
          }
          // A COMMIT that failed may have committed (its answer lost on the way): never run again.
          const rows = query === 'commit' ? await result.catch((e) => { throw Object.assign(e, { atCommit: true }); }) : await result;
          // PostgreSQL answers COMMIT in a failed transaction with ROLLBACK, not an error: a
          // statement whose failure was caught and not rethrown must not pass for a write.
          if (query === 'commit' && rows.command !== 'COMMIT') {
            throw Object.assign(new Error('the transaction was rolled back at commit: one of its statements had failed'), { code: 'TRANSACTION_ROLLED_BACK' });
          }
          return rows;
        },
        release: () => {
          if (!released) { released = true; counts.inUse--; }
          // A session that refused a write is on a standby (a primary demoted under it): it ends
          // itself, and the pool connects anew, to the host that takes writes (target_session_attrs).
          if (readOnly && !lost) {
            lost = true;
            void connection.unsafe('select pg_terminate_backend(pg_backend_pid())').catch(() => undefined).finally(() => connection.release());
            return;
          }
          connection.release();
        },
      };
    },
    end: () => pool().sql.end({ timeout: 5 }),
  };
}

/** A statement sent as it is to its shard group's worker failed as one whose group or copies of the
 * api views are not there: the shard's next statements go through api.in_organization. */
function suspectOn(routing: { current?: ClusterRouting }, routed: Routed, e: unknown) {
  if (routed.shard !== undefined && movedAway(e)) routing.current?.suspect?.(routed.shard);
}

/** On Citus, a call run on the worker that held its organization's shard group, which a rebalance
 * moved away while the call waited for the move's lock: the worker refuses to reach the group's
 * new node from inside a delegated call, and from inside a call the API sent it directly cannot,
 * as the owner of the function that reads (a role that may not log in); either way its
 * transaction rolls back whole. Sent again, it reaches the group's new node (the call is
 * delegated there). */
const movedAway = (e: unknown): boolean => {
  const err = e as { code?: string; message?: string } | undefined;
  return (err?.code === 'XX000' && err.message === 'cannot execute a distributed query from a query on a shard') || isRemoteNodeFailure(e)
    || shardViewsUnusable(e);
};

/** On Citus, a statement sent as it is to a worker read a copy of an api view that is stale, or
 * that the node keeps for a shard group it no longer holds (app_private.shard_views_current), or
 * that is gone: nothing of it ran, and sent again it goes through api.in_organization. */
const shardViewsUnusable = (e: unknown): boolean => {
  const err = e as { code?: string; message?: string } | undefined;
  return (err?.code === 'SV500' && (err.message === 'SHARD_VIEWS_STALE' || err.message === 'SHARD_VIEWS_ELSEWHERE'))
    || ((err?.code === '42P01' || err?.code === '3F000') && /\bapi_shard_\d+/.test(err.message ?? ''));
};

/** A move commits on its nodes one after another (two-phase commit): for a few milliseconds the
 * group's new node may still read the old placement and refuse the call as the old node did. A
 * call refused so is sent again after these pauses, then the refusal is the answer. */
const MOVED_AWAY_PAUSES_MS = [0, 20, 100, 400];
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A transaction whose session was found dead at BEGIN (nothing of it ran) runs again after these. */
const LOST_AT_BEGIN_PAUSES_MS = [0, 10, 50];

/** A statement sent through the pool (no reservation, which costs a postgres.js Sql object per
 * call): while it waits for a connection it is bounded by the acquire deadline, as a reservation is;
 * once sent (postgres.js sets `state`), only statement_timeout bounds it. */
function pooledQuery(current: () => Generation, pool: 'reads' | 'points', prepare: boolean,
  deadlines: { acquireMs: number; connectMs: number }, breaker: Breaker,
  counts: { inFlight: number }, late: (pool: 'reads' | 'points', ms: number, sql: postgres.Sql) => void,
  routing: { current?: ClusterRouting }) {
  const query = async <R>(compiled: Statement, retried = false, moves = 0): Promise<R[]> => {
    // Routed (a Citus coordinator) before the breaker admits it: a routing that fails leaves no
    // probe taken and never released.
    const routing_ = routing.current?.route(compiled.sql, compiled.parameters as unknown[], true);
    let routed: Routed | undefined;
    if (routing_) {
      // Counted in flight from the moment the pool was chosen (the choice reads the count), the
      // routing's wait included: otherwise every statement chosen meanwhile joins the same pool.
      counts.inFlight++;
      try {
        routed = await routing_;
      } finally {
        counts.inFlight--;
      }
    }
    const admitted = breaker.admit();
    if (admitted === 'reject') throw unavailable();
    const ms = admitted === 'probe' ? deadlines.connectMs : deadlines.acquireMs;
    const { sql, statements: progress } = current();
    const q = routed
      ? sql.unsafe(routed.sql, routed.parameters as postgres.ParameterOrJSON<never>[], { prepare })
      : sql.unsafe(compiled.sql, compiled.parameters as postgres.ParameterOrJSON<never>[], { prepare });
    let timedOut = false;
    let lost = false;
    let moved = false;
    const timer = setTimeout(() => {
      if ((q as unknown as { state?: unknown }).state) return;
      timedOut = true;
      late(pool, ms, sql);
      void q.cancel();
    }, ms);
    counts.inFlight++;
    const sent = progress.start();
    try {
      const rows = unrouted(routed, await q);
      breaker.succeeded();
      return rows as unknown as R[];
    } catch (e) {
      if (timedOut) throw Object.assign(new Error(`no database connection became free within ${ms} ms`), { code: 'DB_POOL_TIMEOUT' });
      if (routed) suspectOn(routing, routed, e);
      if (isUnreachable(e)) breaker.failed(e);
      // A lost session says nothing of whether the database can be reached now.
      else if (!isSessionLost(e)) breaker.succeeded();
      // These statements only read: one whose session was lost (a terminated backend, found
      // only when used) is sent once more, on a connection the pool opens anew; one whose
      // organization's shard group moved away during it (movedAway) is sent again after a pause.
      if (!retried && isSessionLost(e) && !isUnreachable(e)) lost = true;
      else if (movedAway(e) && moves < MOVED_AWAY_PAUSES_MS.length) moved = true;
      if (!lost && !moved) throw e;
    } finally {
      counts.inFlight--;
      progress.finish(sent, !timedOut);
      clearTimeout(timer);
      if (admitted === 'probe') breaker.released();
    }
    if (moved) {
      await pause(MOVED_AWAY_PAUSES_MS[moves]!);
      return query<R>(compiled, retried, moves + 1);
    }
    // After postgres.js has read what the dead socket still held (its FATAL), so that the
    // statement goes to a new session rather than behind that message.
    await new Promise((resolve) => setImmediate(resolve));
    return query<R>(compiled, true, moves);
  };
  return query;
}

/** Runs a transaction again when nothing of its try can have happened: its session turned out to
 * be dead at `begin` (a backend terminated while idle in the pool, noticed only when used: again
 * after each of LOST_AT_BEGIN_PAUSES_MS), or, on Citus, its organization's shard group moved away during a call (movedAway: rolled
 * back; again after each of MOVED_AWAY_PAUSES_MS). A session lost later is not retried: a write
 * may have happened. */
export async function runAgainIfLostAtBegin<T>(transaction: () => Promise<T>): Promise<T> {
  let lost = 0;
  for (let moves = 0; ; ) {
    try {
      return await transaction();
    } catch (e) {
      if ((e as { atCommit?: boolean } | undefined)?.atCommit) throw e;
      if (movedAway(e) && moves < MOVED_AWAY_PAUSES_MS.length) {
        await pause(MOVED_AWAY_PAUSES_MS[moves++]!);
      } else if ((e as { lostAtBegin?: boolean } | undefined)?.lostAtBegin && lost < LOST_AT_BEGIN_PAUSES_MS.length) {
        // After postgres.js has read the dead socket's close, so that the pool opens a new session
        // rather than handing out the same connection before it knows: the FATAL and the close of
        // a session ended while idle are read a turn or more apart.
        await new Promise((resolve) => setImmediate(resolve));
        await pause(LOST_AT_BEGIN_PAUSES_MS[lost++]!);
      } else {
        throw e;
      }
    }
  }
}

/** Waiting for a pooled connection is bounded: past the deadline the request fails (503) rather
 * than queueing without end behind connections that a slow or unreachable database holds. A
 * connection that arrives after the deadline goes straight back to the pool. */
function withDeadline(reserving: Promise<postgres.ReservedSql>, ms: number, onLate: () => void): Promise<postgres.ReservedSql> {
  return new Promise((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      onLate();
      reject(Object.assign(new Error(`no database connection became free within ${ms} ms`), { code: 'DB_POOL_TIMEOUT' }));
    }, ms);
    reserving.then((c) => {
      clearTimeout(timer);
      if (late) c.release(); else resolve(c);
    }, (e) => {
      clearTimeout(timer);
      if (!late) reject(e);
    });
  });
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
    ({ sql: postgres(url, options(sizes[pool], names[pool])), waits: new Progress(), statements: new Progress() });
  // Replaced as a whole when the watchdog finds one wedged: every use reads the current one.
  const pools: Record<PoolName, Generation> = { transactions: open('transactions'), reads: open('reads'), points: open('points') };
  const listener = postgres(url, options(1, 'svc-api-listen'));
  const counts = { inUse: 0, waiting: 0, size: max };
  const reads = { inFlight: 0 };
  const points = { inFlight: 0 };
  const breaker = new Breaker();
  const lateListeners: ((state: AcquireTimeout) => void)[] = [];
  const rebuiltListeners: ((event: PoolRebuilt) => void)[] = [];
  // The state of the pool the wait was on (a rebuilt pool's successor may already be serving).
  const late = (pool: AcquireTimeout['pool'], ms: number, sql: postgres.Sql) => {
    const driver = driverState(sql);
    const state: AcquireTimeout = pool === 'transactions'
      ? { pool, deadline_ms: ms, in_use: counts.inUse, waiting: counts.waiting, size: max, breaker_open: breaker.open, driver }
      : pool === 'reads'
        ? { pool, deadline_ms: ms, in_use: reads.inFlight, waiting: 0, size: readPoolSize, breaker_open: breaker.open, driver }
        : { pool, deadline_ms: ms, in_use: points.inFlight, waiting: 0, size: 1, breaker_open: breaker.open, driver };
    for (const l of lateListeners) l(state);
  };
  const deadlines = { acquireMs: opts.acquireTimeoutMs ?? 5000, connectMs: opts.connectTimeoutMs ?? 5000 };
  const routing: { current?: ClusterRouting } = {};
  // On a cluster, a request whose organization's worker is known takes its connections from pools
  // to that worker (a Database of the worker's own: its breaker, deadlines and watchdog), so that
  // its statements run where its rows are; everything else, here.
  const workers = new Map<string, Database>();
  const listeners = { unreachable: [] as ((cause: unknown) => void)[], late: lateListeners, rebuilt: rebuiltListeners };
  const worker = (): Database | undefined => {
    const node = opts.node ? undefined : routing.current?.node?.();
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
  const own = preparingDriver(() => pools.transactions, counts, prepare, deadlines, breaker, late, routing);
  const transactions = { ...own, reserve: (): Promise<Reserved> => worker()?.reserve() ?? own.reserve() };
  const db = new Kysely<DB>({ dialect: new PostgresJSDialect({ postgres: (async () => transactions) as never }) });
  const batch = (statements: Statement[]): Promise<Record<string, any>[][]> => worker()?.batch(statements) ?? runAgainIfLostAtBegin(async () => {
    const connection = await own.reserve();
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
  const readQuery = pooledQuery(() => pools.reads, 'reads', prepare, deadlines, breaker, reads, late, routing);
  const pointQuery = pooledQuery(() => pools.points, 'points', prepare, deadlines, breaker, points, late, routing);

  // The watchdog (src/db/watchdog.ts): a pool whose work made no progress, or whose wait or
  // statement passed the acquire deadline, is checked against the database on a connection of its
  // own, and rebuilt when one of its connections waits for an answer that will not come. A full
  // transactions pool (every connection held by a caller) is the callers' doing, not a wedge.
  const suspect = (pool: PoolName, now: number) => {
    const { waits, statements } = pools[pool];
    const w = pool !== 'transactions' || counts.inUse < max ? waits.suspect(deadlines.acquireMs, now) : undefined;
    const s = statements.suspect(deadlines.acquireMs, now);
    return w === 'stalled' || s === 'stalled' ? 'stalled' : w === 'timed-out' || s === 'timed-out' ? 'timed-out' : w ?? s;
  };
  const restart = (pool: PoolName) => { pools[pool].waits.restart(); pools[pool].statements.restart(); };
  let checking = false;
  const watch = async () => {
    if (checking || breaker.open) return;
    const now = Date.now();
    const suspects = (['transactions', 'reads', 'points'] as const).filter((p) => suspect(p, now));
    // "Twice in a row": a pool found idle once and not suspect since starts over.
    for (const p of ['transactions', 'reads', 'points'] as const) if (!suspects.includes(p)) pools[p].idleOnce = false;
    const pool = suspects[0];
    if (!pool) return;
    checking = true;
    try {
      const why = suspect(pool, now);
      const generation = pools[pool];
      const stalled = Math.max(generation.waits.stalledMs(now), generation.statements.stalledMs(now));
      const driver = driverState(generation.sql);
      const found = await verify(url, driver, deadlines.acquireMs, connectS * 1000, why !== 'slow');
      // Failing to serve while the database is idle for it: a wedge only when the next look, a
      // deadline later, finds it so again (a slow hand-over has ended by then; a start-up is judged
      // by the driver's connect deadline, in verify).
      const verdict = found === 'idle' ? (generation.idleOnce ? 'wedged' : 'idle') : found;
      generation.idleOnce = found === 'idle';
      // Busy, idle once, or no answer: look again only after another deadline.
      if (verdict !== 'wedged' || pools[pool] !== generation) { restart(pool); return; }
      pools[pool] = open(pool);
      // Transactions in flight on the old pool get a few seconds to finish; its wedged waits and
      // statements then fail (503, or sent again: a read whose session was lost is retried once).
      void generation.sql.end({ timeout: pool === 'transactions' ? 5 : 0 }).catch(() => undefined);
      for (const l of rebuiltListeners) l({ pool, reason: why!, stalled_ms: stalled, driver });
    } finally {
      checking = false;
    }
  };
  const watchdog = setInterval(() => void watch(), Math.min(1000, deadlines.acquireMs)).unref();

  return {
    db,
    get sql() { return pools.transactions.sql; },
    listen: (channel, onNotify, onListen) => listener.listen(channel, onNotify, onListen),
    ping: async () => {
      const one = { sql: 'select 1', parameters: [] };
      await Promise.all([db.transaction().execute((tx) => sql`select 1`.execute(tx)), readQuery(one), pointQuery(one)]);
    },
    onPoolRebuilt: (l) => { rebuiltListeners.push(l); },
    batch,
    reserve: own.reserve,
    query: (compiled, o) => worker()?.query(compiled, o)
      ?? (o?.point && points.inFlight < pointPipeline ? pointQuery(compiled) : readQuery(compiled)),
    routeTo: (r) => { routing.current = r; },
    get routed() { return routing.current !== undefined; },
    stats: () => ({ ...counts, unreachable: breaker.open }),
    unreachable: () => breaker.open,
    onUnreachable: (l) => { listeners.unreachable.push(l); breaker.onTrip(l); },
    onAcquireTimeout: (l) => { lateListeners.push(l); },
    // postgres.js can wait forever for idle connections to end (porsager/postgres#925): bound it.
    close: async () => {
      clearInterval(watchdog);
      await Promise.all([...workers.values()].map((d) => d.close()));
      if (!opts.node) await routing.current?.close?.();
      await db.destroy();
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
