// How a pool is doing: what the watchdog (watchdog.ts) judges a pool by.

/** Waits or statements outstanding on a pool: when the pool last made progress (served a wait,
 * answered a statement), the oldest still outstanding, and whether a wait passed its deadline.
 * Costs a Date.now() and a Set entry per statement. */
export class Progress {
  /** In insertion order: the first is the oldest. */
  private readonly outstanding = new Set<{ at: number }>();
  private since = 0;
  private last = 0;
  private timedOut = false;
  /** How long the longest wait that passed its deadline had waited (since the last restart). */
  private timedOutMs = 0;

  start(): { at: number } {
    const token = { at: Date.now() };
    if (this.outstanding.size === 0) this.since = token.at;
    this.outstanding.add(token);
    return token;
  }

  /** `progressed`: false when the wait ended only because its own deadline passed; `suspicious`:
   * that wait says something is wrong (not when every connection was held by a caller). */
  finish(token: { at: number }, progressed = true, suspicious = !progressed): void {
    this.outstanding.delete(token);
    if (progressed) this.last = Date.now();
    if (suspicious) {
      this.timedOut = true;
      this.timedOutMs = Math.max(this.timedOutMs, Date.now() - token.at);
    }
  }

  /** The watchdog looked: the clocks start over (a pool found busy rather than wedged). */
  restart(): void {
    this.last = Date.now();
    this.timedOut = false;
    this.timedOutMs = 0;
    for (const token of this.outstanding) token.at = this.last;
  }

  /** Why this pool may be wedged, if it may: no progress at all past `deadlineMs` with work
   * outstanding ('stalled'), a wait that passed its deadline ('timed-out'), or one statement
   * outstanding past it ('slow', the database may just be working on it). */
  suspect(deadlineMs: number, now = Date.now()): 'stalled' | 'timed-out' | 'slow' | undefined {
    const oldest = this.outstanding.values().next().value;
    if (oldest && now - Math.max(this.since, this.last) > deadlineMs) return 'stalled';
    if (this.timedOut) return 'timed-out';
    if (oldest && now - oldest.at > deadlineMs) return 'slow';
    return undefined;
  }

  /** How long the longest of its waits or statements has waited: the oldest still outstanding,
   * or one that passed its deadline (0 when there is neither). Whatever made the pool suspect,
   * this is at least the deadline; the time since the last progress is not (another connection
   * of the pool may have answered since the oldest statement was sent). */
  stalledMs(now = Date.now()): number {
    const oldest = this.outstanding.values().next().value;
    return Math.max(oldest ? now - oldest.at : 0, this.timedOutMs);
  }
}
