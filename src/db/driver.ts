// The driver under Kysely's transactions: connections of the transactions' pool, reserved one per
// transaction, each statement prepared, BEGIN and pipelined statements sent ahead of the next.
import type postgres from 'postgres';
import { Breaker, isReadOnlySession, isSessionLost, isUnreachable, unavailable } from './faults.ts';
import type { Describer, Routed } from './cluster.ts';
import { withDeadline } from './deadline.ts';
import { PIPELINED, PIPELINED_READ } from './pipelining.ts';
import type { Deadlines, Generation, OnLate, Routing } from './pool.ts';

/** A routed statement's rows as the driver would have given the statement itself: a statement
 * without rows answers its row count through the call, read back as its own command's count. */
export function unrouted(routed: Routed | undefined, rows: postgres.RowList<postgres.Row[]>): postgres.RowList<postgres.Row[]> {
  if (!routed?.count) return rows;
  return Object.assign([], { command: routed.count.command, count: Number(rows[0]?.count ?? 0) }) as never;
}

export interface DriverOptions {
  /** The transactions' pool as it is now (the watchdog may replace it). */
  pool: () => Generation;
  /** Connections reserved, callers waiting, and the pool's size: shared with /metrics and the watchdog. */
  counts: { inUse: number; waiting: number; size: number };
  /** Named prepared statements (false for a pooler that cannot keep them). */
  prepare: boolean;
  deadlines: Deadlines;
  breaker: Breaker;
  onLate: OnLate;
  routing: Routing;
}

/** Kysely's postgres.js adapter runs every query through `unsafe()`, which does not prepare by
 * default: each parameterized query would cost an extra round trip to describe its parameters.
 * Reserved connections here prepare (and cache per connection) every statement, pipeline
 * `begin` with the transaction's first statement instead of waiting a round trip for it, and
 * a PIPELINED statement with the one after it. */
export function preparingDriver({ pool, counts, prepare, deadlines, breaker, onLate, routing }: DriverOptions) {
  /** A connection failure anywhere opens the breaker; the error goes on to the caller. */
  const watch = <T>(p: Promise<T>): Promise<T> => p.catch((e) => {
    if (isUnreachable(e)) breaker.failed(e);
    throw e;
  });
  return {
    /** A connection whose statements are routed for `organization` (on a Citus coordinator; none: as they are). */
    async reserve(organization?: string) {
      const admitted = breaker.admit();
      if (admitted === 'reject') throw unavailable();
      const progress = pool();
      counts.waiting++;
      const waited = progress.waits.start();
      let connection: postgres.ReservedSql;
      let served = false;
      try {
        const ms = admitted === 'probe' ? deadlines.connectMs : deadlines.acquireMs;
        connection = await watch(withDeadline(progress.sql.reserve(), ms, () => onLate('transactions', ms, progress.sql)))
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
      // On a Citus coordinator a statement not seen before is described here, in the transaction,
      // after what was sent ahead of it (whose failure stays the one reported).
      const describer: Describer = {
        describe: async (query, parameters) => {
          for (const p of ahead) await p;
          const d = await seen(watch(connection.unsafe(query, parameters as postgres.ParameterOrJSON<never>[], { prepare: false }).describe()));
          return { types: d.types, columns: d.columns.map((c) => ({ name: c.name, type: c.type })) };
        },
        rows: async <T>(query: string, parameters: unknown[]) =>
          [...await seen(watch(connection.unsafe(query, parameters as postgres.ParameterOrJSON<never>[], { prepare })))] as T[],
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
          const routing_ = routing.current?.route(query, parameters, organization, false, describer);
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
          // itself, and the pool connects anew, to the host that takes writes (src/db/hosts.ts).
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

/** A reserved connection of the transactions' pool: what `db.transaction()` runs on. */
export type Reserved = Awaited<ReturnType<ReturnType<typeof preparingDriver>['reserve']>>;
