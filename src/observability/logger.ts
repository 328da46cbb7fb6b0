// Structured logs (pino): one JSON object per line on stdout. Request logs carry the route
// template, never the path or query string (capability URLs and search terms are secrets or
// personal data); anything that does get logged by accident is redacted by path.
import pino, { type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

export const LOG_LEVELS: readonly LevelWithSilent[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Paths censored wherever they appear in a logged object (pino's fast-redact). */
export const REDACTED_PATHS = [
  'authorization', '*.authorization', 'headers.authorization', '*.headers.authorization',
  'cookie', '*.cookie', 'headers.cookie', '*.headers.cookie',
  '*.headers["set-cookie"]', '*.headers["proxy-authorization"]', '*.headers["idempotency-key"]',
  'url', '*.url', 'path', '*.path', 'query', '*.query', 'payload', '*.payload',
  'client_secret', '*.client_secret', 'secret', '*.secret', 'access_token', '*.access_token', 'password', '*.password',
];

/** The longest string a log line keeps of one value: a client's value (an error message quoting
 * it, a header) must not turn one line into megabytes. Line breaks need nothing: JSON escapes them. */
export const LOG_VALUE_MAX = 2000;

const cut = (v: string) => (v.length > LOG_VALUE_MAX ? `${v.slice(0, LOG_VALUE_MAX)}…[${v.length - LOG_VALUE_MAX} more characters]` : v);

/** Plain objects and arrays are walked (8 levels, 100 items); errors keep their name, message, code
 * and stack; anything else that is not plain data (a Buffer, a Date, a Map, a URL) is logged as its
 * string form, cut like any string. */
function capped(v: unknown, depth = 0): unknown {
  if (typeof v === 'string') return cut(v);
  if (v === null || typeof v !== 'object') return v;
  if (Buffer.isBuffer(v)) return `<${v.length} bytes>`;
  if (v instanceof Error) return { type: v.name, message: cut(v.message), code: (v as { code?: unknown }).code, stack: cut(v.stack ?? '') };
  const plain = Array.isArray(v) || Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null;
  if (!plain) return cut(v instanceof Date ? v.toISOString() : String(v));
  if (depth >= 8) return '[nested too deep]';
  if (Array.isArray(v)) return v.slice(0, 100).map((x) => capped(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = capped(x, depth + 1);
  return out;
}

export function createLogger(level: LevelWithSilent, destination?: DestinationStream): Logger {
  return pino({
    level,
    base: { service: 'svc' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }), log: (o) => capped(o) as Record<string, unknown> },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  }, destination);
}
