// One LISTEN connection per process for every open run event stream: `svc_run_events` is notified
// whenever a run's log grows (app_private.run_event: at commit by the worker, after the commit by the
// API, see wakeAfterCommit), with an opaque name of the run (any role may LISTEN, so not its id); the
// hub wakes the streams of that run, which then read what is new. Idle streams hold no database connection.
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { sql } from 'kysely';
import { api } from '../db/api.ts';
import type { Database } from '../db/database.ts';

export interface RunSubscriber {
  /** New events may be there (or the listener reconnected and some may have been missed). */
  wake(): void;
  /** The process is stopping: end the stream. */
  close(): void;
}

export class RunEventHub {
  private readonly subscribers = new Map<string, Set<RunSubscriber>>();
  private readonly perClient = new Map<string, number>();
  /** Resolves to the key of the run names once this process listens. */
  private listening?: Promise<Buffer>;
  private closed = false;

  /** `database.db` reaches the current pools (the watchdog may rebuild them); the LISTEN
   * connection is the database's own, never rebuilt. */
  constructor(private readonly database: Pick<Database, 'db' | 'listen'>, private readonly log: Logger) {}

  /** Subscribes before the caller's first read, so nothing appended in between is missed. */
  async subscribe(runId: string, subscriber: RunSubscriber): Promise<() => void> {
    // The LISTEN connection and the wake-ups it delivers serve every organization's streams; the
    // reads a wake-up starts name their organization themselves (Database.of).
    const name = runWakeName(await (this.listening ??= this.listen()), runId);
    const s: RunSubscriber = { wake: () => subscriber.wake(), close: () => subscriber.close() };
    let set = this.subscribers.get(name);
    if (!set) this.subscribers.set(name, set = new Set());
    set.add(s);
    return () => {
      set!.delete(s);
      if (set!.size === 0 && this.subscribers.get(name) === set) this.subscribers.delete(name);
    };
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

  private async listen(): Promise<Buffer> {
    try {
      const { rows: [row] } = await api.value('run_wake_key').execute(this.database.db);
      await this.database.listen('svc_run_events', (name) => {
        for (const s of this.subscribers.get(name) ?? []) s.wake();
      }, () => {
        // (Re)connected: notifications sent while the connection was down are lost, so every stream looks again.
        for (const set of this.subscribers.values()) for (const s of set) s.wake();
      });
      return Buffer.from(row!.value!, 'hex');
    } catch (e) {
      this.listening = undefined;
      this.log.warn({ err: (e as Error).message }, 'the run event listener could not start');
      throw e;
    }
  }

  /** After the commit of an API request that appended to runs' logs: their wake names, which the
   * request's transaction collected (svc.run_wake) instead of notifying, since NOTIFY's lock would be
   * held through its commit's flush. Sent from an autocommit statement that writes no WAL; every
   * process's listener hears it, this one's included. A lost wake-up costs a stream one heartbeat. */
  wakeAfterCommit(names: string[]): void {
    sql`select pg_notify('svc_run_events', n) from unnest(${names}::text[]) n`.execute(this.database.db).then(() => undefined,
      (err) => this.log.debug({ err: (err as Error).message }, 'a run event wake-up failed; the streams look again at their next heartbeat'));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const set of this.subscribers.values()) for (const s of set) s.close();
    this.subscribers.clear();
  }
}

/** The payload app_private.run_wake_name gives a run: the first 128 bits of SHA-256(key || run id), in hex. */
export function runWakeName(key: Buffer, runId: string): string {
  return createHash('sha256').update(key).update(runId, 'utf8').digest('hex').slice(0, 32);
}
