// Idempotency-Key: the request's fingerprint, and what a claimed key answers when the request is
// not the key's first (a stored response to replay, a key in flight, a key reused).
import type { Request } from '@hapi/hapi';
import { hash } from 'node:crypto';
import { ApiError } from '../errors.ts';
import type { ClaimState } from './begin.ts';

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return '[' + v.map(canonicalJson).join(',') + ']';
  if (v && typeof v === 'object') {
    return '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + canonicalJson((v as any)[k])).join(',') + '}';
  }
  return JSON.stringify(v ?? null);
}

/** The same key with another path or body is a reuse, whatever order the body's keys came in. */
export const fingerprintOf = (request: Request) => hash('sha256', `${request.path}\n${canonicalJson(request.payload ?? null)}`, 'hex');

/** A stored response to replay, or the error for a key in flight or reused; undefined for a fresh claim. */
export function claimAnswer(claim: ClaimState, oneTimeSecret: boolean | undefined) {
  if (claim.state === 'in_flight') {
    throw new ApiError('IDEMPOTENCY_KEY_IN_USE', 'the first request with this key is still being processed',
      { headers: { 'Retry-After': '1' } });
  }
  if (claim.state === 'mismatch') {
    throw new ApiError('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used with a different request');
  }
  if (claim.state === 'replay' && oneTimeSecret) {
    const id = (JSON.parse(claim.response_body || '{}') as { id?: string }).id;
    throw new ApiError('WEBHOOK_SECRET_NOT_AVAILABLE',
      `the secret was shown once, in the first response to this request${id ? ` (${id})` : ''}; rotate the secret to get a new one`,
      { members: id ? { resource_id: id } : {} });
  }
  // A replay's claim carries the stored response, all three parts (app.idempotency_keys: not null).
  return claim.state === 'replay'
    ? { replay: true as const, status: claim.response_status!, headers: claim.response_headers!, body: claim.response_body! }
    : undefined;
}
