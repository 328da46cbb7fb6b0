// Per-client rate limits that hold across instances without a database round trip per request:
// each instance counts locally and adds its counts to the shared buckets in one batched
// statement every SYNC_MS, reading back the total of all instances. Close to the limit it
// synchronises before every decision, so small quotas are exact and large ones overshoot by
// at most what other instances admit within one sync interval.
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

const SYNC_MS = 100;

interface Bucket { window: number; shared: number; local: number; inflight: number }

export interface RateDecision { allowed: boolean; remaining: number; resetSeconds: number }

export class RateLimiter {
  private buckets = new Map<string, Bucket>();
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly margin: number;

  constructor(private readonly db: Db, private readonly limit: number, private readonly windowSeconds: number) {
    this.margin = Math.max(1, Math.ceil(limit * 0.1));
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush().catch(() => {}), SYNC_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private bucket(key: string, window: number): Bucket {
    let b = this.buckets.get(key);
    if (!b || b.window !== window) {
      b = { window, shared: 0, local: 0, inflight: 0 };
      this.buckets.set(key, b);
    }
    return b;
  }

  async take(key: string): Promise<RateDecision> {
    const now = Date.now() / 1000;
    const window = Math.floor(now / this.windowSeconds) * this.windowSeconds;
    const resetSeconds = Math.max(1, Math.ceil(window + this.windowSeconds - now));
    let b = this.bucket(key, window);
    if (b.shared + b.local + b.inflight + this.margin >= this.limit) {
      await this.flush([key]);
      b = this.bucket(key, window);
    }
    const used = b.shared + b.local + b.inflight;
    if (used >= this.limit) return { allowed: false, remaining: 0, resetSeconds };
    b.local++;
    return { allowed: true, remaining: this.limit - used - 1, resetSeconds };
  }

  /** Sends local counts (and reads back totals for `refresh` keys); concurrent calls share one round trip. */
  async flush(refresh: string[] = []): Promise<void> {
    if (this.flushing) {
      await this.flushing;
      if (refresh.every((k) => (this.buckets.get(k)?.local ?? 0) === 0)) return;
    }
    this.flushing = this.send(new Set(refresh)).finally(() => { this.flushing = undefined; });
    return this.flushing;
  }

  private async send(refresh: Set<string>): Promise<void> {
    const current = Math.floor(Date.now() / 1000 / this.windowSeconds) * this.windowSeconds;
    const batch: { key: string; b: Bucket; sent: number }[] = [];
    for (const [key, b] of this.buckets) {
      if (b.window < current) { this.buckets.delete(key); continue; }
      if (b.local > 0 || refresh.has(key)) {
        batch.push({ key, b, sent: b.local });
        b.inflight += b.local;
        b.local = 0;
      }
    }
    if (batch.length === 0) return;
    try {
      const { rows } = await sql<{ key: string; window_start: string; hits: number }>`
        select * from api.rate_limit_add(${batch.map((x) => x.key)}::text[], ${batch.map((x) => x.b.window)}::bigint[],
          ${batch.map((x) => x.sent)}::integer[])`.execute(this.db);
      const totals = new Map(rows.map((r) => [r.key, r]));
      for (const { key, b, sent } of batch) {
        b.inflight -= sent;
        const t = totals.get(key);
        if (t && Number(t.window_start) === b.window) b.shared = t.hits;
      }
    } catch (e) {
      for (const { b, sent } of batch) { b.inflight -= sent; b.local += sent; }
      throw e;
    }
  }
}
