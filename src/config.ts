// Every setting comes from the environment; README "Configuration" lists them all.
import { createHash } from 'node:crypto';

export interface Config {
  /** Owner connection: migrations, the control plane (svc-admin), the embedded default. */
  databaseUrl: string;
  /** The server's connection, as the svc_runtime role (no BYPASSRLS). */
  runtimeDatabaseUrl: string;
  port: number;
  host: string;
  /** Token issuer and audience (RFC 9068 `iss` / `aud`). */
  issuer: string;
  audience: string;
  tokenTtlSeconds: number;
  /** 32-byte key material for sealing signing keys and signing cursors. */
  secretKey: Buffer;
  rateLimit: { limit: number; windowSeconds: number };
  dbPoolSize: number;
  logLevel: 'info' | 'silent';
}

const DEV_SECRET = 'dev-only-secret-key-change-me-in-production';

function int(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer`);
  return n;
}

/** The runtime URL defaults to DATABASE_URL with the user swapped for svc_runtime. */
export function runtimeUrlFrom(databaseUrl: string, password: string): string {
  const url = new URL(databaseUrl);
  url.username = 'svc_runtime';
  url.password = password;
  return url.toString();
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
  const runtimePassword = env.SVC_RUNTIME_DB_PASSWORD ?? 'svc_runtime';
  return {
    databaseUrl,
    runtimeDatabaseUrl: env.RUNTIME_DATABASE_URL ?? runtimeUrlFrom(databaseUrl, runtimePassword),
    port: int(env, 'PORT', 3000),
    host: env.HOST ?? '127.0.0.1',
    issuer: env.SVC_ISSUER ?? 'https://svc.example',
    audience: env.SVC_AUDIENCE ?? 'https://svc.example/v1',
    tokenTtlSeconds: 3600,
    secretKey: masterKey(env),
    rateLimit: { limit: int(env, 'RATE_LIMIT_REQUESTS', 1200), windowSeconds: int(env, 'RATE_LIMIT_WINDOW_SECONDS', 60) },
    dbPoolSize: int(env, 'DB_POOL_SIZE', 10),
    logLevel: env.LOG_LEVEL === 'silent' ? 'silent' : 'info',
  };
}
