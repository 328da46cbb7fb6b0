// One-statement reads, sent through a pool without reserving a connection: bounded by the acquire
// deadline while they wait, sent once more when their session was lost or, on Citus, their shard
// group moved away under them.
import type postgres from 'postgres';
import { Breaker, isSessionLost, isUnreachable, unavailable } from './faults.ts';
import type { Routed } from './cluster.ts';
import { poolTimeout } from './deadline.ts';
import { unrouted } from './driver.ts';
import { MOVED_AWAY_PAUSES_MS, movedAway, pause, suspectOn } from './retries.ts';
import type { Deadlines, Generation, OnLate, Routing, Statement } from './pool.ts';

/** A statement sent through the pool (no reservation, which costs a postgres.js Sql object per
 * call): while it waits for a connection it is bounded by the acquire deadline, as a reservation is;
 * once sent (postgres.js sets `state`), only statement_timeout bounds it. */
export interface ReadPoolOptions {
  /** The pool as it is now (the watchdog may replace it). */
  current: () => Generation;
  pool: 'reads' | 'points';
  prepare: boolean;
  deadlines: Deadlines;
  breaker: Breaker;
  /** Statements in flight: shared with the choice of pool and the watchdog's report. */
  counts: { inFlight: number };
  onLate: OnLate;
  routing: Routing;
}

export function pooledQuery({ current, pool, prepare, deadlines, breaker, counts, onLate, routing }: ReadPoolOptions) {
  const query = async <R>(compiled: Statement, organization?: string, retried = false, moves = 0): Promise<R[]> => {
    // Routed (a Citus coordinator) before the breaker admits it: a routing that fails leaves no
    // probe taken and never released.
    const routing_ = routing.current?.route(compiled.sql, compiled.parameters as unknown[], organization, true);
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
      onLate(pool, ms, sql);
      void q.cancel();
    }, ms);
    counts.inFlight++;
    const sent = progress.start();
    try {
      const rows = unrouted(routed, await q);
      breaker.succeeded();
      return rows as unknown as R[];
    } catch (e) {
      if (timedOut) throw poolTimeout(ms);
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
      return query<R>(compiled, organization, retried, moves + 1);
    }
    // After postgres.js has read what the dead socket still held (its FATAL), so that the
    // statement goes to a new session rather than behind that message.
    await new Promise((resolve) => setImmediate(resolve));
    return query<R>(compiled, organization, true, moves);
  };
  return <R>(compiled: Statement, organization?: string): Promise<R[]> => query<R>(compiled, organization);
}
