// Every setting comes from the environment; README "Configuration" lists them all.
import { createHash } from 'node:crypto';
import { editDatabaseUrl } from './db/url.ts';
import type { LevelWithSilent } from 'pino';
import { LOG_LEVELS } from './observability/logger.ts';

export interface Config {
  /** Owner connection: migrations, the control plane (svc-admin), the embedded default, and on
   * Citus the one job that makes views and grants on shards moved by hand. */
  databaseUrl: string;
  /** The server's connection, as the svc_runtime role (no BYPASSRLS). */
  runtimeDatabaseUrl: string;
  /** The worker's connection, as the svc_worker role (no BYPASSRLS, owner of nothing). */
  workerDatabaseUrl: string;
  port: number;
  host: string;
  /** How long an idle keep-alive connection stays open after a response: longer than the clients'
   * and proxies' own idle timeouts, so that they, not the server, close it (README "Configuration"). */
  httpKeepAliveTimeoutMs: number;
  /** Token issuer and audience (RFC 9068 `iss` / `aud`). */
  issuer: string;
  audience: string;
  tokenTtlSeconds: number;
  /** How often each instance re-reads the shared signing keys (rotations and retirements reach it within this). */
  signingKeyRefreshMs: number;
  /** 32-byte key material for sealing signing keys and signing cursors. */
  secretKey: Buffer;
  rateLimit: { limit: number; windowSeconds: number };
  dbPoolSize: number;
  /** Connections for one-statement reads (pipelined once all are busy). */
  dbReadPoolSize: number;
  /** Point reads in flight on the one pipelined point connection before the next go to the read pool (0: none). */
  dbPointPipeline: number;
  /** Named prepared statements on the server's connections (off behind PgBouncer < 1.21 in transaction mode). */
  dbPrepare: boolean;
  /** On a Citus cluster: a request's statements go to the worker that holds its organization on
   * connections of their own to it (off: every statement through the coordinator). */
  clusterDirect: boolean;
  /** Deadlines towards the database: a new connection, a statement, a free pooled connection. */
  dbTimeouts: { connectMs: number; statementMs: number; acquireMs: number };
  /** SIGTERM: how long in-flight requests and jobs may take to finish before the process exits anyway. */
  shutdownTimeoutMs: number;
  logLevel: LevelWithSilent;
  /** When set, GET /metrics requires `Authorization: Bearer <this>`. */
  metricsToken?: string;
  webhooks: WebhookConfig;
  mail: MailConfig;
  worker: { enabled: boolean; concurrency: number; recoverIntervalMs: number; staleSeconds: number };
  files: FilesConfig;
  /** How long a report run's results are kept after it succeeded. */
  reportRetentionSeconds: number;
  agents: AgentsConfig;
}

export interface AgentsConfig {
  /** An OpenAI-compatible chat-completions endpoint (base URL, e.g. http://127.0.0.1:11434/v1); unset, model-backed agents are unavailable. */
  modelUrl?: string;
  /** Sent as `Authorization: Bearer`; never logged, never in a run. */
  modelApiKey?: string;
  model: string;
  /** Deadline for one model call. */
  modelTimeoutMs: number;
  /** Model calls per run (each may ask for tools); past this the run fails. */
  maxModelSteps: number;
  /** How long a finished run's output and events are kept. */
  runRetentionSeconds: number;
  /** Comment lines on idle event streams, so proxies keep them open. */
  streamHeartbeatMs: number;
  /** Event streams one client may hold open at once in this process (each holds a socket and reads at every heartbeat). */
  streamsPerClient: number;
}

export interface FilesConfig {
  /** Base of the capability URLs (e.g. https://api.example.com); default: the request's own scheme and host. */
  publicUrl?: string;
  /** How long an upload (its URL and its completion) and a download URL live. */
  uploadSeconds: number;
  downloadSeconds: number;
  /** Uploads and downloads streaming at once in this process (each upload holds a database connection). */
  transferConcurrency: number;
  /** clamd: a Unix socket path or host:port; unset, files are not scanned. */
  clamd?: string;
  /** No file becomes ready without a clean scan (on in production, whatever the organization's policy). */
  requireScan: boolean;
  /** Deadline for one scan. */
  scanTimeoutMs: number;
}

export interface WebhookConfig {
  /** Host names that may resolve to loopback (local testing only); nothing private otherwise. */
  allowedHosts: string[];
  /** PEM file of an extra CA trusted for webhook TLS (local testing with a private CA). */
  caFile?: string;
  /** Response deadline per delivery attempt and per verification challenge. */
  timeoutMs: number;
  /** Multiplies the retry schedule (1 in production; tests shrink it). */
  retryScale: number;
  /** An endpoint is disabled after this many consecutive failed attempts ... */
  disableAfterFailures: number;
  /** ... once the failure streak has lasted this long. */
  disableAfterSeconds: number;
}

export interface MailConfig {
  /** SMTP server as a URL (smtp://user:pass@host:587, smtps://… for implicit TLS); never logged. */
  smtpUrl?: string;
  /** Sender address of invoice emails. */
  from: string;
  /** Deadline for one whole email handover (and for each step of it). */
  timeoutMs: number;
  /** Without an SMTP URL outside production, emails are written here as .eml files (none in production). */
  devMailDir?: string;
  /** Invoice sends in flight per process: each holds a database connection while the SMTP server answers. */
  sendConcurrency: number;
}

const DEV_SECRET = 'dev-only-secret-key-change-me-in-production';

function num(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number`);
  return n;
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 1): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(min === 1 ? `${name} must be a positive integer` : `${name} must be an integer ≥ ${min}`);
  return n;
}

function logLevel(raw: string | undefined): LevelWithSilent {
  if (raw === undefined || raw === '') return 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(raw)) throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  return raw as LevelWithSilent;
}

/** The runtime URL defaults to DATABASE_URL with the user swapped for svc_runtime. */
export function runtimeUrlFrom(databaseUrl: string, password: string): string {
  return editDatabaseUrl(databaseUrl, { username: 'svc_runtime', password });
}

/** svc-admin's URL: ADMIN_DATABASE_URL, or DATABASE_URL with the user swapped for svc_admin. */
export function adminUrlFrom(databaseUrl: string, env: NodeJS.ProcessEnv = process.env): string {
  if (env.ADMIN_DATABASE_URL) return env.ADMIN_DATABASE_URL;
  if (env.NODE_ENV === 'production' && !env.SVC_ADMIN_DB_PASSWORD) {
    throw new Error('SVC_ADMIN_DB_PASSWORD (or ADMIN_DATABASE_URL) is required when NODE_ENV=production');
  }
  return editDatabaseUrl(databaseUrl, { username: 'svc_admin', password: env.SVC_ADMIN_DB_PASSWORD ?? 'svc_admin' });
}

/** The worker's URL defaults to DATABASE_URL with the user swapped for svc_worker. */
export function workerUrlFrom(databaseUrl: string, password: string): string {
  return editDatabaseUrl(databaseUrl, { username: 'svc_worker', password });
}

/** The master key (SVC_SECRET_KEY; a fixed development key outside production). */
export function masterKey(env: NodeJS.ProcessEnv = process.env): Buffer {
  const secret = env.SVC_SECRET_KEY ?? (env.NODE_ENV === 'production' ? undefined : DEV_SECRET);
  if (!secret) throw new Error('SVC_SECRET_KEY is required when NODE_ENV=production');
  return createHash('sha256').update(secret).digest();
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const databaseUrl = env.DATABASE_URL;
  if (!databaseUrl) throw new Error('DATABASE_URL is not set');
  // The development default is a password anyone can read here: production names its own.
  if (env.NODE_ENV === 'production' && !env.RUNTIME_DATABASE_URL && !env.SVC_RUNTIME_DB_PASSWORD) {
    throw new Error('SVC_RUNTIME_DB_PASSWORD (or RUNTIME_DATABASE_URL) is required when NODE_ENV=production');
  }
  const workerEnabled = env.SVC_WORKER !== 'off';
  if (env.NODE_ENV === 'production' && workerEnabled && !env.WORKER_DATABASE_URL && !env.SVC_WORKER_DB_PASSWORD) {
    throw new Error('SVC_WORKER_DB_PASSWORD (or WORKER_DATABASE_URL) is required when NODE_ENV=production and the worker runs in this process');
  }
  const runtimePassword = env.SVC_RUNTIME_DB_PASSWORD ?? 'svc_runtime';
  return {
    databaseUrl,
    runtimeDatabaseUrl: env.RUNTIME_DATABASE_URL ?? runtimeUrlFrom(databaseUrl, runtimePassword),
    workerDatabaseUrl: env.WORKER_DATABASE_URL ?? workerUrlFrom(databaseUrl, env.SVC_WORKER_DB_PASSWORD ?? 'svc_worker'),
    port: int(env, 'PORT', 3000),
    host: env.HOST ?? '127.0.0.1',
    httpKeepAliveTimeoutMs: int(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 65_000),
    issuer: env.SVC_ISSUER ?? 'https://svc.example',
    audience: env.SVC_AUDIENCE ?? 'https://svc.example/v1',
    tokenTtlSeconds: 3600,
    signingKeyRefreshMs: int(env, 'SVC_SIGNING_KEY_REFRESH_MS', 60_000),
    secretKey: masterKey(env),
    rateLimit: { limit: int(env, 'RATE_LIMIT_REQUESTS', 1200), windowSeconds: int(env, 'RATE_LIMIT_WINDOW_SECONDS', 60) },
    dbPoolSize: int(env, 'DB_POOL_SIZE', 10),
    dbReadPoolSize: int(env, 'DB_READ_POOL_SIZE', 4),
    dbPointPipeline: int(env, 'DB_POINT_PIPELINE', 16, 0),
    dbPrepare: env.SVC_DB_PREPARE !== 'off',
    clusterDirect: env.SVC_CLUSTER_DIRECT !== 'off',
    dbTimeouts: {
      connectMs: int(env, 'SVC_DB_CONNECT_TIMEOUT_MS', 5000),
      statementMs: num(env, 'SVC_DB_STATEMENT_TIMEOUT_MS', 15_000),
      acquireMs: int(env, 'SVC_DB_ACQUIRE_TIMEOUT_MS', 5000),
    },
    shutdownTimeoutMs: int(env, 'SVC_SHUTDOWN_TIMEOUT_MS', 20_000),
    logLevel: logLevel(env.LOG_LEVEL),
    metricsToken: env.SVC_METRICS_TOKEN || undefined,
    webhooks: {
      allowedHosts: (env.SVC_WEBHOOK_ALLOWED_HOSTS ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean),
      caFile: env.SVC_WEBHOOK_CA_FILE || undefined,
      timeoutMs: int(env, 'SVC_WEBHOOK_TIMEOUT_MS', 10_000),
      retryScale: num(env, 'SVC_WEBHOOK_RETRY_SCALE', 1),
      disableAfterFailures: int(env, 'SVC_WEBHOOK_DISABLE_AFTER_FAILURES', 50),
      disableAfterSeconds: num(env, 'SVC_WEBHOOK_DISABLE_AFTER_SECONDS', 86_400),
    },
    mail: {
      smtpUrl: env.SVC_SMTP_URL || undefined,
      from: env.SVC_MAIL_FROM ?? 'invoices@svc.example',
      timeoutMs: int(env, 'SVC_SMTP_TIMEOUT_MS', 15_000),
      devMailDir: env.NODE_ENV === 'production' ? undefined : env.SVC_DEV_MAIL_DIR ?? '.data/mail',
      sendConcurrency: int(env, 'SVC_INVOICE_SEND_CONCURRENCY', 2),
    },
    worker: {
      enabled: workerEnabled,
      concurrency: int(env, 'SVC_WORKER_CONCURRENCY', 16),
      recoverIntervalMs: int(env, 'SVC_WORKER_RECOVER_INTERVAL_MS', 15_000),
      staleSeconds: num(env, 'SVC_WORKER_STALE_SECONDS', 30),
    },
    reportRetentionSeconds: int(env, 'SVC_REPORT_RETENTION_SECONDS', 7 * 86_400),
    agents: {
      modelUrl: env.SVC_MODEL_URL?.replace(/\/+$/, '') || undefined,
      modelApiKey: env.SVC_MODEL_API_KEY || undefined,
      model: env.SVC_MODEL_NAME || 'default',
      modelTimeoutMs: int(env, 'SVC_MODEL_TIMEOUT_MS', 60_000),
      maxModelSteps: int(env, 'SVC_MODEL_MAX_STEPS', 8),
      runRetentionSeconds: int(env, 'SVC_RUN_RETENTION_SECONDS', 30 * 86_400),
      streamHeartbeatMs: int(env, 'SVC_STREAM_HEARTBEAT_MS', 15_000),
      streamsPerClient: int(env, 'SVC_STREAMS_PER_CLIENT', 25),
    },
    files: {
      publicUrl: env.SVC_PUBLIC_URL?.replace(/\/+$/, '') || undefined,
      uploadSeconds: int(env, 'SVC_FILE_UPLOAD_SECONDS', 3600),
      downloadSeconds: int(env, 'SVC_FILE_DOWNLOAD_SECONDS', 300),
      transferConcurrency: int(env, 'SVC_FILE_TRANSFER_CONCURRENCY', 16),
      clamd: env.SVC_CLAMD || undefined,
      requireScan: (env.SVC_FILE_REQUIRE_SCAN ?? (env.NODE_ENV === 'production' ? 'on' : 'off')) === 'on',
      scanTimeoutMs: int(env, 'SVC_CLAMD_TIMEOUT_MS', 60_000),
    },
  };
}
