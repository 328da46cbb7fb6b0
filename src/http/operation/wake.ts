// What a write's transaction reads with its COMMIT, and the wake-ups that follow it: whether an
// event of the transaction waits for the webhook fan-out (emit_event sets it instead of a NOTIFY,
// whose lock would serialize the commits), and the wake names of runs whose logs it appended to
// (app_private.run_event), for the same reason.
import { sql } from 'kysely';
import type { Declared } from '../../db/api.ts';
import { pipelinedRead, type Tx } from '../../db/database.ts';
import type { AppContext } from '../context.ts';

export const WOKEN_COLUMNS = { due: 'bool', runs: 'text' } as const;
export type Woken = Declared<typeof WOKEN_COLUMNS>;

/** The read itself, last before COMMIT. */
export const WAKE_READ = sql<Woken>`
        select current_setting('svc.fanout_wake', true) = 'due' as due,
               nullif(current_setting('svc.run_wake', true), '') as runs`;

/** Sent ahead, answered with COMMIT. (An object holding the promise, not the promise itself:
 * awaiting the read before COMMIT would cost a round trip.) */
export const wakeAfter = async (tx: Tx) => (await pipelinedRead(WAKE_READ).execute(tx)).rows[0]!;

/** After COMMIT: the transaction's events wait for this wake-up, not for a NOTIFY. */
export function wakeUp(app: AppContext, woken: Woken | undefined) {
  if (woken?.due) app.wakeFanout();
  if (woken?.runs) app.runEvents.wakeAfterCommit(woken.runs.split(','));
}
