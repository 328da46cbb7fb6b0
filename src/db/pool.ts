// What the pools of a Database share: the shape of a pool as opened (a generation the watchdog may
// replace whole), the statement a one-statement read sends, and the options every pool's code takes.
import type postgres from 'postgres';
import type { CompiledQuery } from 'kysely';
import type { Progress } from './progress.ts';
import type { ClusterRouting } from './cluster.ts';

export type PoolName = 'transactions' | 'reads' | 'points';

/** What a one-statement read sends: its text and parameters (a compiled Kysely query is one). */
export type Statement = Pick<CompiledQuery, 'sql' | 'parameters'>;

/** A pool as opened, with the progress of its own waits and statements: the watchdog replaces it
 * whole, and what the old one still has outstanding is not counted against the new one. */
export interface Generation { sql: postgres.Sql; waits: Progress; statements: Progress; idleOnce?: boolean }

/** How long a caller waits for a free connection (`acquireMs`), and for a new one while the breaker
 * lets a probe through (`connectMs`). */
export interface Deadlines { acquireMs: number; connectMs: number }

/** Told when a wait for a connection passed its deadline, with the pool the wait was on. */
export type OnLate = (pool: PoolName, ms: number, sql: postgres.Sql) => void;

/** On a Citus coordinator, the routing of each statement to its organization's worker
 * (src/db/cluster.ts); unset on one server. Set once at start-up, read at each statement. */
export interface Routing { current?: ClusterRouting }
