// What every route needs from the process: configuration, the database, the token service.
import type { Request } from '@hapi/hapi';
import type { Config } from '../config.ts';
import type { AcquireTimeout, Database } from '../db/database.ts';
import { clusterRoutingFor } from '../db/cluster.ts';
import { sql } from 'kysely';
import { api } from '../db/api.ts';
import { TokenService, type VerifiedToken } from '../auth/tokens.ts';
import { deriveKey } from '../auth/sealing.ts';
import { RateLimiter } from './rate-limit.ts';
import { ApiError } from './errors.ts';
import { header as readHeader } from './headers.ts';
import { createTransport, type Transport } from '../webhooks/transport.ts';
import { createMailer, type Mailer } from '../invoices/mailer.ts';
import { Semaphore } from './semaphore.ts';
import { createPdfRenderer, type PdfRenderer } from '../invoices/renderer.ts';
import type { DestinationStream, Logger } from 'pino';
import { createLogger } from '../observability/logger.ts';
import { createMetrics, type Metrics } from '../observability/metrics.ts';
import { RunEventHub } from '../agents/hub.ts';

const authorizationHeader = (request: Request) => readHeader(request, 'authorization');

export interface RateLimitDecision { allowed: boolean; resetSeconds: number; headers: Record<string, string> }

export interface AppContext {
  config: Config;
  database: Database;
  tokens: TokenService;
  cursorKey: Buffer;
  /** Outbound HTTPS to webhook receivers (verification challenges). */
  webhooks: Transport;
  /** Invoice emails (SMTP), and how many may be in flight at once in this process. */
  mailer: Mailer;
  invoiceSends: Semaphore;
  /** File uploads and downloads streaming at once in this process. */
  fileTransfers: Semaphore;
  pdf: PdfRenderer;
  logger: Logger;
  metrics: Metrics;
  /** Wakes open run event streams (one LISTEN connection per process, opened by the first stream). */
  runEvents: RunEventHub;
  /** Called after a write request's commit: its events did not notify (svc.fanout_wake, set by
   * begin_request), so this wakes the webhook fan-out. The worker in this process, if it runs here
   * (serve() sets it), else a NOTIFY of its own (wakeFanoutByNotify). */
  wakeFanout: () => void;
  /** A request answered 503 because of the database: its cause, logged (at most once a second). */
  reportUnavailable: (cause: unknown, route: string) => void;
  /** The token's claims, and its SHA-256 (hex): the database compares that, and only that reaches it
   * (a statement's text is what pg_stat_activity shows; on Citus a delegated call's arguments are in it). */
  authenticate(request: Request): Promise<VerifiedToken>;
  rateLimit(key: string): Promise<RateLimitDecision>;
  close(): void;
}

const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/;

export function invalidToken(detail: string): ApiError {
  return new ApiError('INVALID_TOKEN', detail,
    { headers: { 'WWW-Authenticate': 'Bearer realm="svc", error="invalid_token"' } });
}

/** One NOTIFY at a time, and one more after it for wake-ups that came meanwhile: a write's commit
 * no longer takes NOTIFY's database-wide lock (held through its fsync, it serialized every write that
 * emitted an event); a transaction that only notifies writes no WAL and holds that lock for
 * microseconds. A failed wake-up costs the fan-out one poll. */
export function wakeFanoutByNotify(database: Pick<Database, 'db'>, logger: Logger): () => void {
  let sending = false;
  let again = false;
  const wake = () => {
    if (sending) { again = true; return; }
    sending = true;
    sql`select pg_notify('svc_webhook_fanout', '')`.execute(database.db).then(() => undefined,
      (err) => logger.debug({ err: (err as Error).message }, 'the fan-out wake-up failed; its next poll finds the events'))
      .finally(() => {
        sending = false;
        if (again) { again = false; wake(); }
      });
  };
  return wake;
}

/** Calls `log` at most once a second, with how many calls came since its last line (this one included). */
function atMostOnceASecond<A extends unknown[]>(log: (count: number, ...args: A) => void): (...args: A) => void {
  let logged = 0;
  let since = 0;
  return (...args: A) => {
    since++;
    if (Date.now() - logged < 1000) return;
    log(since, ...args);
    logged = Date.now();
    since = 0;
  };
}

export async function createAppContext(config: Config, database: Database,
  opts: { logDestination?: DestinationStream; metrics?: Metrics } = {}): Promise<AppContext> {
  const tokens = new TokenService(database.db, {
    issuer: config.issuer, audience: config.audience, ttlSeconds: config.tokenTtlSeconds, masterKey: config.secretKey,
    refreshMs: config.signingKeyRefreshMs,
  });
  await tokens.init();
  // A Citus coordinator: each request's statements go to its organization's worker (src/db/cluster.ts).
  const routing = await clusterRoutingFor(config.runtimeDatabaseUrl,
    { statementTimeoutMs: config.dbTimeouts.statementMs, connectTimeoutMs: config.dbTimeouts.connectMs, direct: config.clusterDirect, prepare: config.dbPrepare });
  if (routing) database.routeTo(routing);
  const { limit, windowSeconds } = config.rateLimit;
  const policy = `"default";q=${limit};w=${windowSeconds}`;
  const limiter = new RateLimiter(database.db, limit, windowSeconds);
  const pdf = createPdfRenderer(config.mail.sendConcurrency);
  limiter.start();
  const metrics = opts.metrics ?? createMetrics();
  metrics.watchPool(database.stats);
  metrics.watchOutbox(async () => {
    const { rows: [o] } = await api.rows('service_outbox_status').execute(database.db);
    return { oldestPendingEventSeconds: o?.oldest_pending_event_seconds ?? 0, deliveriesPending: Number(o?.deliveries_pending ?? 0),
      oldestDueDeliverySeconds: o?.oldest_due_delivery_seconds ?? 0 };
  });
  const logger = createLogger(config.logLevel, opts.logDestination);
  const runEvents = new RunEventHub(database, logger);
  // Once per outage, not per request: requests then fail fast with 503 until a probe succeeds.
  database.onUnreachable((e) => logger.warn({ code: (e as { code?: string })?.code, err: (e as Error)?.message },
    'a database connection failed; failing fast until a probe succeeds'));
  // At most one line a second (an overload times out many waits at once), with the pool's state:
  // a full pool means slow or leaked transactions, a free one a connection that never came.
  database.onAcquireTimeout(atMostOnceASecond((count, state: AcquireTimeout) =>
    logger.warn({ ...state, timeouts: count }, 'a query waited out the deadline for a database connection (a request it served is answered 503)')));
  // Rare and serious (a defect in the driver or in this code): every one is logged, with the
  // driver's state of the pool that was replaced.
  database.onPoolRebuilt((e) => {
    metrics.dbPoolRebuilds.inc({ pool: e.pool });
    logger.error(e, 'a database pool handed out no connection, or had no statement answered, while the database answered a fresh one: rebuilt');
  });
  // A 503 says only "retry"; the operator needs the cause (a lost session, a connect or statement
  // timeout, a pool wait), at most once a second, with how many came since the last line.
  const reportUnavailable = atMostOnceASecond((count, cause: unknown, route: string) => {
    const c = cause as { code?: unknown; message?: unknown } | undefined;
    logger.warn({ route, cause_code: c?.code, cause: typeof c?.message === 'string' ? c.message.slice(0, 200) : undefined,
      answered_503: count }, 'a request was answered 503: the database failed it');
  });
  return {
    config,
    database,
    reportUnavailable,
    tokens,
    cursorKey: deriveKey(config.secretKey, 'cursors'),
    webhooks: createTransport(config.webhooks),
    mailer: createMailer(config.mail),
    invoiceSends: new Semaphore(config.mail.sendConcurrency),
    fileTransfers: new Semaphore(config.files.transferConcurrency),
    pdf,
    logger,
    metrics,
    runEvents,
    wakeFanout: wakeFanoutByNotify(database, logger),
    async authenticate(request) {
      const header = authorizationHeader(request);
      if (!header) {
        throw new ApiError('INVALID_TOKEN', 'send Authorization: Bearer <access token>',
          { headers: { 'WWW-Authenticate': 'Bearer realm="svc"' } });
      }
      const m = BEARER.exec(header);
      if (!m) throw invalidToken('the Authorization header is not a Bearer token');
      const claims = await tokens.verify(m[1]!);
      if (!claims) throw invalidToken('the access token is invalid or expired');
      return claims;
    },
    async rateLimit(key) {
      const r = await limiter.take(key);
      return {
        allowed: r.allowed,
        resetSeconds: r.resetSeconds,
        headers: { 'RateLimit-Policy': policy, RateLimit: `"default";r=${r.remaining};t=${r.resetSeconds}` },
      };
    },
    close() {
      runEvents.close();
      limiter.stop();
      tokens.stop();
      void pdf.close();
    },
  };
}
