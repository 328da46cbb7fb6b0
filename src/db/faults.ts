// What a lost or unreachable database looks like from here, and a circuit breaker so that
// requests fail fast (503) while it is gone instead of each waiting out a deadline.

/** Errors of the connection, not of the statement: postgres.js and Node socket codes, server
 * shutdown or start-up (57P01-57P03), too many connections (53300), connection exceptions (08xxx). */
const CONNECTION_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', 'TARGET_SESSION_ATTRS',
  'DB_UNAVAILABLE', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN',
  'ENOTFOUND', '57P01', '57P02', '57P03', '53300']);

/** node-postgres (graphile-worker's driver) reports a lost or unusable connection with no code,
 * only these messages (pg/lib/client.js, pg-pool). */
const NODE_POSTGRES_CONNECTION_MESSAGES = /^(Connection terminated( unexpectedly| due to connection timeout)?|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)$/;

export function isConnectionFailure(e: unknown): boolean {
  const code = (e as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') return CONNECTION_CODES.has(code) || code.startsWith('08');
  const message = (e as { message?: unknown } | undefined)?.message;
  return code === undefined && typeof message === 'string' && NODE_POSTGRES_CONNECTION_MESSAGES.test(message);
}

/** On a Citus node, a statement that needed another node which could not be reached or refused
 * the connection (08xxx, "connection to the remote node …"): the session that reports it is
 * alive, in a failed transaction. */
export function isRemoteNodeFailure(e: unknown): boolean {
  const err = e as { code?: unknown; message?: unknown } | undefined;
  return typeof err?.code === 'string' && err.code.startsWith('08') && typeof err.message === 'string'
    && err.message.startsWith('connection to the remote node');
}

/** This session is gone (its socket, its backend, or the server): not a statement's failure,
 * nor another node's that this session reports. */
export function isSessionLost(e: unknown): boolean {
  return isConnectionFailure(e) && !isRemoteNodeFailure(e);
}

/** Failures to reach the database at all (a new connection refused, timed out, not resolved,
 * turned away at start-up or for want of slots, or no host of a multi-host URL taking writes:
 * src/db/hosts.ts), as opposed to an established session lost, which
 * one terminated backend or a pooler's reload causes while every other session is fine. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'CONNECT_TIMEOUT', 'TARGET_SESSION_ATTRS', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN',
  'ENOTFOUND', 'DB_UNAVAILABLE', '57P03', '53300', '08001', '08004']);

export function isUnreachable(e: unknown): boolean {
  const code = (e as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && UNREACHABLE_CODES.has(code);
}

/** A write refused because the session is read-only (25006): it reached a standby, or a primary
 * since demoted (a switchover). The database cannot take writes there now; the client retries. */
export function isReadOnlySession(e: unknown): boolean {
  return (e as { code?: unknown } | undefined)?.code === '25006';
}

/** The database answered too late: a statement or idle-transaction timeout, or no free connection. */
export function isTimeout(e: unknown): boolean {
  const code = (e as { code?: unknown } | undefined)?.code;
  return code === '57014' || code === '25P03' || code === 'DB_POOL_TIMEOUT';
}

/**
 * Closed: requests get connections as usual. Failing to reach the database opens it for `cooldownMs`:
 * requests fail at once with DB_UNAVAILABLE. Then one request at a time probes (with the
 * connect deadline); a success closes it, a failure opens it again. postgres.js would otherwise
 * queue every request behind connections that keep retrying to connect. A lost session does not
 * open it: that request fails (503) and the next one connects anew; when the server is really
 * gone, that new connection fails to connect and opens it.
 */
export class Breaker {
  private openUntil = 0;
  private tripped = false;
  private probing = false;
  private readonly tripListeners: ((cause: unknown) => void)[] = [];

  constructor(private readonly cooldownMs = 1000) {}

  /** Called each time the breaker opens from closed, with the failure that opened it. */
  onTrip(listener: (cause: unknown) => void): void { this.tripListeners.push(listener); }

  /** 'ok' to go ahead, 'probe' to go ahead as the one probe, 'reject' to fail now. */
  admit(): 'ok' | 'probe' | 'reject' {
    if (!this.tripped) return 'ok';
    if (Date.now() < this.openUntil || this.probing) return 'reject';
    this.probing = true;
    return 'probe';
  }

  succeeded(): void {
    this.tripped = false;
    this.probing = false;
  }

  failed(cause?: unknown): void {
    if (!this.tripped) for (const listener of this.tripListeners) listener(cause);
    this.tripped = true;
    this.probing = false;
    this.openUntil = Date.now() + this.cooldownMs;
  }

  /** The probe ended without telling either way (e.g. the caller gave up). */
  released(): void {
    this.probing = false;
  }

  get open(): boolean { return this.tripped; }
}

export const unavailable = () =>
  Object.assign(new Error('the database is unreachable; failing fast until it answers again'), { code: 'DB_UNAVAILABLE' });

/**
 * A last line: a rejected promise nobody awaits, carrying a connection failure, is logged rather
 * than ending the process (libraries' internal promises can reject that way while the database is
 * away; the two known ones are patched, see patches/). Any other unhandled rejection still ends
 * the process, as Node does by default: that is a bug to see.
 */
export function survivePoolRejections(log: (e: unknown) => void): void {
  process.on('unhandledRejection', (reason) => {
    if (isConnectionFailure(reason)) {
      log(reason);
      return;
    }
    throw reason;
  });
}

/** Seconds before a closed connection of the pool connects again. postgres.js's default grows as
 * 3^n / 100 s up to 20 s, with n counting the pool's failed sessions since one last started, and a
 * connection keeps the delay it got when it closed: when every session ends at once (a restart, a
 * failover, sessions terminated), the n-th to close waits up to (3^n / 100) s, so a request handed
 * that connection waited out its 5 s acquire deadline with the database back. An unreachable
 * database is the breaker's job (requests fail fast, one probe at a time), so the pool only needs
 * to avoid a tight reconnect loop: the same curve, at most 0.5 s. */
export const reconnectBackoff = (retries: number) => (0.5 + Math.random() / 2) * Math.min(3 ** retries / 100, 0.5);
