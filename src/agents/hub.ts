// One LISTEN connection per process for every open run event stream: the database notifies
// `svc_run_events` with a run id whenever it appends to that run's log (app_private.run_event);
// the hub wakes the streams of that run, which then read what is new. Idle streams hold no
// database connection.
import type postgres from 'postgres';
import type { Logger } from 'pino';

export interface RunSubscriber {
  /** New events may be there (or the listener reconnected and some may have been missed). */
  wake(): void;
  /** The process is stopping: end the stream. */
  close(): void;
}

export class RunEventHub {
  private readonly subscribers = new Map<string, Set<RunSubscriber>>();
  private readonly perClient = new Map<string, number>();
  private listening?: Promise<unknown>;
  private closed = false;

  constructor(private readonly sql: postgres.Sql, private readonly log: Logger) {}

  /** Subscribes before the caller's first read, so nothing appended in between is missed. */
  async subscribe(runId: string, s: RunSubscriber): Promise<() => void> {
    let set = this.subscribers.get(runId);
    if (!set) this.subscribers.set(runId, set = new Set());
    set.add(s);
    const unsubscribe = () => {
      set!.delete(s);
      if (set!.size === 0 && this.subscribers.get(runId) === set) this.subscribers.delete(runId);
    };
    try {
      await (this.listening ??= this.listen());
    } catch (e) {
      unsubscribe();
      throw e;
    }
    return unsubscribe;
  }

  /** Counts an open stream of a client against `limit` (in this process): the release function, or
   * undefined when the client already has `limit` streams open. */
  admit(clientId: string, limit: number): (() => void) | undefined {
    const n = this.perClient.get(clientId) ?? 0;
    if (n >= limit) return undefined;
    this.perClient.set(clientId, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.perClient.get(clientId) ?? 1) - 1;
      if (left > 0) this.perClient.set(clientId, left); else this.perClient.delete(clientId);
    };
  }

  get streams(): number {
    let n = 0;
    for (const set of this.subscribers.values()) n += set.size;
    return n;
  }

  private listen() {
    return this.sql.listen('svc_run_events', (runId) => {
      for (const s of this.subscribers.get(runId) ?? []) s.wake();
    }, () => {
      // (Re)connected: notifications sent while the connection was down are lost, so every stream looks again.
      for (const set of this.subscribers.values()) for (const s of set) s.wake();
    }).catch((e) => {
      this.listening = undefined;
      this.log.warn({ err: (e as Error).message }, 'the run event listener could not start');
      throw e;
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const set of this.subscribers.values()) for (const s of set) s.close();
    this.subscribers.clear();
  }
}
