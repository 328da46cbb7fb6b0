// Statements of a transaction sent without waiting for their answer: they share a round trip with
// the statement after them (src/db/driver.ts reads these markers).
import { sql, type RawBuilder } from 'kysely';

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
