import type { JobHelpers } from 'graphile-worker';

/** Which attempt of its job this is: a job that fails before its last attempt is retried by
 * graphile-worker; at the last, it records a failure instead. */
export interface Attempt { attempts: number; maxAttempts: number }

export const attemptOf = (helpers: JobHelpers): Attempt => ({ attempts: helpers.job.attempts, maxAttempts: helpers.job.max_attempts });
