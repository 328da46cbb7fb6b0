// The wait for a pooled connection is bounded: the error a caller gets when its deadline passes
// (answered 503 by the HTTP layer) and the bounded reservation.
import type postgres from 'postgres';

export const poolTimeout = (ms: number): Error =>
  Object.assign(new Error(`no database connection became free within ${ms} ms`), { code: 'DB_POOL_TIMEOUT' });

/** Waiting for a pooled connection is bounded: past the deadline the request fails (503) rather
 * than queueing without end behind connections that a slow or unreachable database holds. A
 * connection that arrives after the deadline goes straight back to the pool. */
export function withDeadline(reserving: Promise<postgres.ReservedSql>, ms: number, onLate: () => void): Promise<postgres.ReservedSql> {
  return new Promise((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      onLate();
      reject(poolTimeout(ms));
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
