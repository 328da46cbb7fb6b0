// When a statement or a transaction that failed may be sent again: nothing of it can have happened
// (a session found dead at BEGIN), or, on Citus, its organization's shard group moved away under it.
import { isRemoteNodeFailure } from './faults.ts';
import type { Routed } from './cluster.ts';
import type { Routing } from './pool.ts';

/** A statement sent as it is to its shard group's worker failed as one whose group or copies of the
 * api views are not there: the shard's next statements go through api.in_organization. */
export function suspectOn(routing: Routing, routed: Routed, e: unknown) {
  if (routed.shard !== undefined && movedAway(e)) routing.current?.suspect?.(routed.shard);
}

/** On Citus, a call run on the worker that held its organization's shard group, which a rebalance
 * moved away while the call waited for the move's lock: the worker refuses to reach the group's
 * new node from inside a delegated call, and from inside a call the API sent it directly cannot,
 * as the owner of the function that reads (a role that may not log in); either way its
 * transaction rolls back whole. Sent again, it reaches the group's new node (the call is
 * delegated there). */
export const movedAway = (e: unknown): boolean => {
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
export const MOVED_AWAY_PAUSES_MS = [0, 20, 100, 400];
export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A transaction whose session was found dead at BEGIN (nothing of it ran) runs again after these. */
export const LOST_AT_BEGIN_PAUSES_MS = [0, 10, 50];

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
