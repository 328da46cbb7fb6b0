// Per-client rate limits that hold across instances, exactly, without a database round trip per
// request: an instance leases a few admissions of a key's window at a time from the shared bucket
// (api.rate_limit_lease) and spends them locally. The database never grants beyond the limit, so
// the instances together admit at most the limit; grants shrink to one as the window fills, and
// leases left unspent for IDLE_MS go back, so a client that moves to another instance loses little.
// While the buckets cannot be reached (on Citus they are the coordinator's, and a request's own
// statements run on its organization's worker), each instance counts a key's admissions alone
// against the same limit, from the shared count it last saw: a request is not refused for a store
// that is away, and the instances together admit at most the limit once each meanwhile. Once the
// buckets answer, the next lease adds what was admitted alone to the shared count.
import { api, type SetRow } from '../db/api.ts';
import type { Db } from '../db/database.ts';
import { isDatabaseUnavailable } from './errors.ts';

const IDLE_MS = 1000;
/** After a refusal, how long the instance answers 429 for the key without asking again. */
const RECHECK_MS = 100;
/** After the buckets could not be reached, how long the instance counts alone before asking again. */
export const STORE_RECHECK_MS = 1000;

interface Bucket {
  window: number;
  /** Admissions leased and not yet spent. */
  leased: number;
  /** The shared count (leases of every instance) as of this instance's last lease. */
  hits: number;
  lastUsed: number;
  /** The size of the last grant. */
  granted: number;
  refusedUntil: number;
  /** Admissions counted by this instance alone, while the buckets could not be reached. */
  alone: number;
  waiting: number;
  leasing?: Promise<void>;
}

export interface RateDecision { allowed: boolean; remaining: number; resetSeconds: number }

export class RateLimiter {
  private buckets = new Map<string, Bucket>();
  private timer: NodeJS.Timeout | undefined;
  /** Until then the buckets are not asked: the last lease found them unreachable. */
  private storeAwayUntil = 0;

  constructor(private readonly db: Db, private readonly limit: number, private readonly windowSeconds: number) {}

  start(): void {
    this.timer ??= setInterval(() => void this.releaseIdle().catch(() => {}), IDLE_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private bucket(key: string, window: number): Bucket {
    let b = this.buckets.get(key);
    if (!b || b.window !== window) {
      b = { window, leased: 0, hits: 0, lastUsed: 0, granted: 0, refusedUntil: 0, alone: 0, waiting: 0 };
      this.buckets.set(key, b);
    }
    return b;
  }

  async take(key: string): Promise<RateDecision> {
    const now = Date.now();
    const window = Math.floor(now / 1000 / this.windowSeconds) * this.windowSeconds;
    const resetSeconds = Math.max(1, Math.ceil(window + this.windowSeconds - now / 1000));
    const b = this.bucket(key, window);
    for (;;) {
      if (b.leased > 0) {
        b.leased--;
        b.lastUsed = now;
        // The next lease is asked for while a quarter of the last one is left, so a busy key's
        // requests do not all wait for it; near the limit the grants are too small for this.
        if (b.leased > 0 && b.leased <= b.granted / 4 && !b.leasing) void this.lease(key, b).catch(() => undefined);
        return { allowed: true, remaining: Math.max(0, this.limit - b.hits + b.leased), resetSeconds };
      }
      if (Date.now() < b.refusedUntil) return { allowed: false, remaining: 0, resetSeconds };
      if (Date.now() < this.storeAwayUntil) return this.alone(b, now, resetSeconds);
      b.waiting++;
      try {
        await this.lease(key, b);
      } catch (e) {
        if (!isDatabaseUnavailable(e)) throw e;
        this.storeAwayUntil = Date.now() + STORE_RECHECK_MS;
        return this.alone(b, now, resetSeconds);
      } finally {
        b.waiting--;
      }
    }
  }

  /** This instance's own decision while the buckets are away: the limit, less the shared count it
   * last saw and what it admitted alone since. */
  private alone(b: Bucket, now: number, resetSeconds: number): RateDecision {
    const remaining = this.limit - b.hits - b.alone;
    if (remaining <= 0) return { allowed: false, remaining: 0, resetSeconds };
    b.alone++;
    b.lastUsed = now;
    return { allowed: true, remaining: remaining - 1, resetSeconds };
  }

  /** One lease request per key at a time; concurrent takers wait for it and share what it grants. */
  private lease(key: string, b: Bucket): Promise<void> {
    // On the database's own connections, which name no organization: on Citus the bucket is the
    // coordinator's.
    b.leasing ??= (async () => {
      try {
        // What was admitted alone while the buckets were away is leased too, and spent at once: the
        // shared count holds it, so the window's limit holds across the outage.
        const alone = b.alone;
        const { rows: [r] } = await api.rows('rate_limit_lease', key, b.window, Math.max(1, b.waiting) + alone, this.limit)
          .$castTo<SetRow<'rate_limit_lease'>>().execute(this.db);
        const repaid = Math.min(alone, r!.granted);
        b.alone -= repaid;
        b.hits = r!.hits;
        b.leased += r!.granted - repaid;
        b.granted = r!.granted - repaid;
        if (b.granted === 0) b.refusedUntil = Date.now() + RECHECK_MS;
      } finally {
        b.leasing = undefined;
      }
    })();
    return b.leasing;
  }

  /** Gives back what idle keys hold, and forgets past windows. */
  async releaseIdle(olderThanMs = IDLE_MS): Promise<void> {
    const now = Date.now();
    const current = Math.floor(now / 1000 / this.windowSeconds) * this.windowSeconds;
    const batch: { key: string; b: Bucket; n: number }[] = [];
    for (const [key, b] of this.buckets) {
      if (b.window < current) { this.buckets.delete(key); continue; }
      if (b.leased > 0 && !b.leasing && now - b.lastUsed >= olderThanMs) batch.push({ key, b, n: b.leased });
    }
    if (batch.length === 0) return;
    for (const x of batch) x.b.leased -= x.n;
    try {
      await api.value('rate_limit_release', batch.map((x) => x.key), batch.map((x) => x.b.window), batch.map((x) => x.n))
        .execute(this.db);
    } catch (e) {
      for (const x of batch) x.b.leased += x.n;
      throw e;
    }
  }
}
