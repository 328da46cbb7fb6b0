// A pool that stops handing out connections, or whose statements stop being answered, while the
// database itself answers a fresh connection, is wedged: nothing inside the process would ever
// notice (a driver defect can leave connections that never connect again, and requests then
// wait out their deadline for good). The watchdog notices by the pool's lack of progress, makes
// sure the database is not simply busy on the pool's behalf, and lets the caller rebuild the pool.
import type postgres from 'postgres';
import { postgresFor } from './hosts.ts';
import type { Deadlines, Generation, PoolName } from './pool.ts';

/** The driver's view of one pool (postgres.js patch 12): each connection's queue and backend. */
export interface DriverPoolState {
  waiting: number;
  connections: {
    queue: string; pid: number | null; socket: string | null; starting: boolean;
    /** How long the connection's start-up (socket to ReadyForQuery) has lasted; null when none is under way. */
    starting_ms: number | null;
    active: boolean; pipelined: number;
  }[];
}

export const driverState = (sql: postgres.Sql): DriverPoolState =>
  (sql as unknown as { poolState: () => DriverPoolState }).poolState();

export type Verdict = 'wedged' | 'idle' | 'busy' | 'unanswered';

/**
 * Asks the database, on a connection of its own, about the sessions of the pool's connections.
 * - One with a statement outstanding whose session is gone, or has sat idle (or idle in a
 *   transaction) for longer than the deadline, waits for an answer that will not come: wedged.
 * - One whose start-up has lasted longer than the driver's connect deadline (plus one acquire
 *   deadline of grace) should have been given up by the driver: wedged. A start-up within it is
 *   the database working for the pool (a loaded server forks, authenticates and answers slowly, and
 *   this probe's own fresh connection may still be quicker): busy, however often a wait times out
 *   meanwhile (a 200 ms acquire deadline on a loaded cluster rebuilt a pool of slow start-ups,
 *   handing out a second pool's connections beside the first's).
 * - When the pool failed to serve (`failedToServe`: no progress at all past the deadline, or a wait
 *   that timed out while the pool was not full) and the database is working on none of its
 *   sessions while it answers a fresh connection: idle. Twice in a row, a deadline apart, the
 *   pool is the problem (connections lost to the pool); once may be a hand-over that is merely
 *   slow (the caller decides).
 * - Sessions working on our statements are the database being slow for us, which
 *   statement_timeout bounds: busy. So is a pool whose live connections' pids the database does
 *   not know (a transaction pooler in between hands out its own keys): nothing can be told apart,
 *   and nothing is rebuilt.
 * - No answer within the connect deadline: the database is what is slow or missing; the breaker
 *   sees that through the requests themselves, not through this probe.
 */
export async function verify(url: string, state: DriverPoolState, deadlineMs: number, connectMs: number,
  failedToServe: boolean): Promise<Verdict> {
  const pids = state.connections.map((c) => c.pid).filter((pid): pid is number => !!pid);
  const sessions = await sessionsOf(url, pids, deadlineMs, connectMs);
  if (!sessions) return 'unanswered';
  if (state.connections.some((c) => c.starting_ms !== null && c.starting_ms > connectMs + deadlineMs)) return 'wedged';
  const live = state.connections.filter((c) => c.socket === 'open' && !c.starting && c.queue !== 'connecting' && c.pid);
  if (live.length > 0 && !live.some((c) => sessions.has(c.pid!))) return 'busy';
  const waiting = state.connections.filter((c) => c.active || c.pipelined > 0);
  const stuck = waiting.filter((c) => {
    const session = c.pid ? sessions.get(c.pid) : undefined;
    return !session || (session.state !== 'active' && session.stale);
  });
  if (stuck.length > 0) return 'wedged';
  if (state.connections.some((c) => c.starting_ms !== null)) return 'busy';
  const working = state.connections.some((c) => c.pid && sessions.get(c.pid)?.state === 'active');
  return failedToServe && !working ? 'idle' : 'busy';
}

/** The sessions `pids` as pg_stat_activity has them, or undefined when the database does not answer in time. */
async function sessionsOf(url: string, pids: number[], deadlineMs: number, connectMs: number) {
  const probe = postgresFor(url, {
    max: 1, onnotice: () => {}, fetch_types: false, prepare: false,
    connect_timeout: Math.max(1, Math.ceil(connectMs / 1000)),
    connection: { application_name: 'svc-api-watchdog', statement_timeout: connectMs },
  });
  try {
    const rows = await Promise.race([
      // An array literal: this connection does not fetch the array types that would serialize a JS array.
      probe<{ pid: number; state: string | null; stale: boolean }[]>`
        select pid, state, coalesce(state_change < now() - make_interval(secs => ${deadlineMs / 1000}), false) as stale
        from pg_stat_activity where pid = any(${`{${pids.join(',')}}`}::int[])`,
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), connectMs).unref()),
    ]);
    return rows && new Map(rows.map((r) => [r.pid, r]));
  } catch {
    return undefined;
  } finally {
    void probe.end({ timeout: 0 }).catch(() => undefined);
  }
}

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

export interface PoolWatchOptions {
  /** The database the pools connect to (the probe connects there too). */
  url: string;
  /** The pools as they are now: a wedged one is replaced here by `open(pool)`. */
  pools: Record<PoolName, Generation>;
  open: (pool: PoolName) => Generation;
  /** Every connection of the transactions' pool is held by a caller: a wait then says nothing of a wedge. */
  transactionsFull: () => boolean;
  /** `connectMs`: the driver's connect deadline, in whole seconds, by which start-ups are judged. */
  deadlines: Deadlines;
  /** While the database is unreachable nothing is judged (the breaker answers for it). */
  breakerOpen: () => boolean;
  onRebuilt: (event: PoolRebuilt) => void;
}

/** Looks at the pools every second (or acquire deadline, if shorter) and rebuilds one found wedged. Returns the stop. */
export function watchPools({ url, pools, open, transactionsFull, deadlines, breakerOpen, onRebuilt }: PoolWatchOptions): () => void {
  // A pool whose work made no progress, or whose wait or statement passed the acquire deadline, is
  // checked against the database on a connection of its own, and rebuilt when one of its
  // connections waits for an answer that will not come. A full transactions pool (every connection
  // held by a caller) is the callers' doing, not a wedge.
  const suspect = (pool: PoolName, now: number) => {
    const { waits, statements } = pools[pool];
    const w = pool !== 'transactions' || !transactionsFull() ? waits.suspect(deadlines.acquireMs, now) : undefined;
    const s = statements.suspect(deadlines.acquireMs, now);
    return w === 'stalled' || s === 'stalled' ? 'stalled' : w === 'timed-out' || s === 'timed-out' ? 'timed-out' : w ?? s;
  };
  const restart = (pool: PoolName) => { pools[pool].waits.restart(); pools[pool].statements.restart(); };
  let checking = false;
  const watch = async () => {
    if (checking || breakerOpen()) return;
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
      const found = await verify(url, driver, deadlines.acquireMs, deadlines.connectMs, why !== 'slow');
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
      onRebuilt({ pool, reason: why!, stalled_ms: stalled, driver });
    } finally {
      checking = false;
    }
  };
  const timer = setInterval(() => void watch(), Math.min(1000, deadlines.acquireMs)).unref();
  return () => clearInterval(timer);
}
