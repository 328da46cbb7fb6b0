// On a Citus coordinator, jobs queued on the workers wait in their organizations' outboxes
// (app_private.job_outbox): moved into graphile-worker's queue here, about every second.
import type postgres from 'postgres';
import type { Logger as Pino } from 'pino';

/** Drains the job outbox every `intervalMs` while `onCitus()` may be true (it asks the database
 * once, when not yet known); one drain at a time. Returns the stop. */
export function startJobOutboxDrain(sql: postgres.Sql, onCitus: () => Promise<boolean>, log: Pino, intervalMs = 1000): () => void {
  let draining = false;
  let off = false;
  const timer = setInterval(() => {
    if (draining || off) return;
    draining = true;
    onCitus().then((on) => {
      if (!on) off = true;
      return on ? sql`select app_private.job_outbox_drain()` : undefined;
    }).then(() => undefined, (err) => log.warn({ err: (err as Error).message }, 'moving the job outbox into the queue failed; trying again'))
      .finally(() => { draining = false; });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
