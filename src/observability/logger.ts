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

export function createLogger(level: LevelWithSilent, destination?: DestinationStream): Logger {
  return pino({
    level,
    base: { service: 'svc' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  }, destination);
}
