// Cursor pagination: seek (keyset) queries with opaque, HMAC-signed cursors that carry the
// last row's sort key and a hash of the filters they were issued for.
import Joi from 'joi';
import { createHmac, hash } from 'node:crypto';
import { macEquals } from '../auth/sealing.ts';
import { ApiError } from './errors.ts';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

export const listQuery = {
  limit: Joi.number().integer().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT)
    .description(`page size, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT})`),
  after: Joi.string().max(2048).description('next_cursor from the previous page'),
};

export type SortKey = (string | number | null)[];

function filtersHash(route: string, query: Record<string, unknown>): string {
  const filters = Object.keys(query).filter((k) => k !== 'limit' && k !== 'after').sort()
    .map((k) => `${k}=${JSON.stringify(query[k])}`).join('&');
  return hash('sha256', `${route}?${filters}`, 'base64url').slice(0, 16);
}

export function encodeCursor(secret: Buffer, route: string, query: Record<string, unknown>, key: SortKey): string {
  const body = Buffer.from(JSON.stringify({ f: filtersHash(route, query), k: key })).toString('base64url');
  const mac = createHmac('sha256', secret).update(body).digest('base64url').slice(0, 22);
  return `${body}.${mac}`;
}

/** Returns the sort key after which the page starts, or undefined for the first page. */
export function decodeCursor(secret: Buffer, route: string, query: Record<string, unknown>): SortKey | undefined {
  const cursor = query.after;
  if (cursor === undefined) return undefined;
  const invalid = (detail: string) => new ApiError('INVALID_CURSOR', detail,
    { errors: [{ pointer: '/after', detail, code: 'cursor.invalid' }] });
  const [body, mac, extra] = String(cursor).split('.');
  if (!body || !mac || extra !== undefined) throw invalid('the cursor is malformed');
  const expected = createHmac('sha256', secret).update(body).digest('base64url').slice(0, 22);
  if (!macEquals(mac, expected)) throw invalid('the cursor was not issued by this service or was altered');
  let parsed: { f?: string; k?: SortKey };
  try {
    parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    throw invalid('the cursor is malformed');
  }
  if (parsed.f !== filtersHash(route, query)) {
    throw invalid('the cursor was issued for different filters; repeat the same filters or start again without after');
  }
  if (!Array.isArray(parsed.k)) throw invalid('the cursor is malformed');
  return parsed.k;
}

export type SortOrder = 'asc' | 'desc';

