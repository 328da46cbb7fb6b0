// A pool that stops handing out connections, or whose statements stop being answered, while the
// database itself answers a fresh connection, is wedged: nothing inside the process would ever
// notice (a driver defect can leave connections that never connect again, and requests then
// wait out their deadline for good). The watchdog notices by the pool's lack of progress, makes
// sure the database is not simply busy on the pool's behalf, and lets the caller rebuild the pool.
import postgres from 'postgres';

/** Waits or statements outstanding on a pool: when the pool last made progress (served a wait,
 * answered a statement), the oldest still outstanding, and whether a wait passed its deadline.
 * Costs a Date.now() and a Set entry per statement. */
export class Progress {
  /** In insertion order: the first is the oldest. */
  private readonly outstanding = new Set<{ at: number }>();
  private since = 0;
  private last = 0;
  private timedOut = false;
  /** How long the longest wait that passed its deadline had waited (since the last restart). */
  private timedOutMs = 0;

  start(): { at: number } {
    const token = { at: Date.now() };
    if (this.outstanding.size === 0) this.since = token.at;
    this.outstanding.add(token);
    return token;
  }

  /** `progressed`: false when the wait ended only because its own deadline passed; `suspicious`:
   * that wait says something is wrong (not when every connection was held by a caller). */
  finish(token: { at: number }, progressed = true, suspicious = !progressed): void {
    this.outstanding.delete(token);
    if (progressed) this.last = Date.now();
    if (suspicious) {
      this.timedOut = true;
      this.timedOutMs = Math.max(this.timedOutMs, Date.now() - token.at);
    }
  }

  /** The watchdog looked: the clocks start over (a pool found busy rather than wedged). */
  restart(): void {
    this.last = Date.now();
    this.timedOut = false;
    this.timedOutMs = 0;
    for (const token of this.outstanding) token.at = this.last;
  }

  /** Why this pool may be wedged, if it may: no progress at all past `deadlineMs` with work
   * outstanding ('stalled'), a wait that passed its deadline ('timed-out'), or one statement
   * outstanding past it ('slow', the database may just be working on it). */
  suspect(deadlineMs: number, now = Date.now()): 'stalled' | 'timed-out' | 'slow' | undefined {
    const oldest = this.outstanding.values().next().value;
    if (oldest && now - Math.max(this.since, this.last) > deadlineMs) return 'stalled';
    if (this.timedOut) return 'timed-out';
    if (oldest && now - oldest.at > deadlineMs) return 'slow';
    return undefined;
  }

  /** How long the longest of its waits or statements has waited: the oldest still outstanding,
   * or one that passed its deadline (0 when there is neither). Whatever made the pool suspect,
   * this is at least the deadline; the time since the last progress is not (another connection
   * of the pool may have answered since the oldest statement was sent). */
  stalledMs(now = Date.now()): number {
    const oldest = this.outstanding.values().next().value;
    return Math.max(oldest ? now - oldest.at : 0, this.timedOutMs);
  }
}

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
  const probe = postgres(url, {
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
