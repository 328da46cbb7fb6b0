// A JSON body is measured before anything recursive touches it (parsing, the idempotency
// fingerprint, validation, jsonb): one pass over its bytes, with no recursion and memory bounded by
// the depth limit, refuses a body nested too deeply, an object or array too wide, or too many
// values in all, with the JSON pointer of the container that broke the limit (an array nested
// 5,000 deep would otherwise overflow the fingerprint's stack and answer 500).
import Bourne from '@hapi/bourne';
import { isUtf8 } from 'node:buffer';
import { ApiError, type ProblemCode } from './errors.ts';

export const BODY_LIMITS = {
  /** Containers inside containers: the deepest legitimate body (a report's parameters, an agent's
   * input, content blocks) is a handful of levels. */
  depth: 32,
  /** Members of one object (custom fields, metadata and parameters are far smaller). */
  members: 1000,
  /** Items of one array (a time-entry batch is at most 100; the rest far fewer). */
  items: 10_000,
  /** Values in the whole body, containers included. */
  values: 100_000,
} as const;

const QUOTE = 0x22, BACKSLASH = 0x5c, COMMA = 0x2c, OPEN_OBJECT = 0x7b, CLOSE_OBJECT = 0x7d, OPEN_ARRAY = 0x5b, CLOSE_ARRAY = 0x5d;
const U = 0x75;
const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/** Parses a JSON body (null when empty) once it is within BODY_LIMITS; __proto__ keys are refused
 * as hapi does (Bourne). Malformed JSON: INVALID_JSON. */
export function parseJsonBody(raw: Buffer | null | undefined, limits: typeof BODY_LIMITS = BODY_LIMITS): unknown {
  if (!raw || raw.length === 0) return null;
  // RFC 8259 §8.1: JSON text is UTF-8; decoding other bytes would replace them silently.
  if (!isUtf8(raw)) throw new ApiError('INVALID_JSON', 'the request body is not UTF-8');
  measure(raw, limits);
  try {
    return Bourne.parse(raw.toString('utf8'), { protoAction: 'error' });
  } catch {
    throw new ApiError('INVALID_JSON', 'the request body is not valid JSON');
  }
}

function measure(raw: Buffer, limits: typeof BODY_LIMITS): void {
  // Per open container: array or object, elements seen, and (objects) where its current key is.
  const isArray: boolean[] = [];
  const count: number[] = [];
  const keyAt: number[] = [];
  let depth = 0;
  let values = 0;
  let inString = false;
  let stringStart = 0;
  // The first element of a container is counted at its first byte that is not space or the close.
  let awaitingFirst = false;
  // Where the low half of a surrogate pair whose high half was just read must start.
  let lowAt = -1;
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i]!;
    if (inString) {
      if (b === BACKSLASH) {
        if (raw[i + 1] === U) {
          const why = unstorable(raw, i, lowAt);
          if (why === 'pair') lowAt = i + 6;
          else if (why) {
            const pointer = pointerTo(raw, isArray, count, keyAt, Math.min(depth, BODY_LIMITS.depth));
            throw new ApiError('VALIDATION_FAILED', why, { errors: [{ pointer, detail: why, code: 'string.unstorable' }] });
          }
        }
        i++;
      } else if (b === QUOTE) inString = false;
      continue;
    }
    if (awaitingFirst && !isSpace(b)) {
      awaitingFirst = false;
      if (b !== CLOSE_ARRAY && b !== CLOSE_OBJECT) {
        count[depth - 1] = 1;
        if (++values > limits.values) fail('BODY_TOO_MANY_VALUES', `at most ${limits.values} values in a body`, raw, isArray, count, keyAt, depth);
      }
    }
    if (b === QUOTE) {
      inString = true;
      stringStart = i;
      // A string right after `{` or `,` in an object is its member's name.
      if (depth > 0 && !isArray[depth - 1] && expectsKey(raw, i)) keyAt[depth - 1] = stringStart;
    } else if (b === OPEN_ARRAY || b === OPEN_OBJECT) {
      if (depth === 0) values++;
      if (depth >= limits.depth) fail('BODY_TOO_DEEP', `at most ${limits.depth} nested arrays and objects`, raw, isArray, count, keyAt, depth);
      isArray[depth] = b === OPEN_ARRAY;
      count[depth] = 0;
      keyAt[depth] = -1;
      depth++;
      awaitingFirst = true;
    } else if (b === CLOSE_ARRAY || b === CLOSE_OBJECT) {
      if (depth > 0) depth--;
    } else if (b === COMMA && depth > 0) {
      const n = ++count[depth - 1]!;
      if (isArray[depth - 1] ? n > limits.items : n > limits.members) {
        fail(isArray[depth - 1] ? 'BODY_ARRAY_TOO_LONG' : 'BODY_OBJECT_TOO_LARGE',
          isArray[depth - 1] ? `at most ${limits.items} items in an array` : `at most ${limits.members} members in an object`,
          raw, isArray, count, keyAt, depth - 1);
      }
      if (++values > limits.values) fail('BODY_TOO_MANY_VALUES', `at most ${limits.values} values in a body`, raw, isArray, count, keyAt, depth);
    }
  }
}

/** The code unit of the `\\u` escape at `at` (four hex digits), or NaN. */
function unitAt(raw: Buffer, at: number): number {
  if (raw[at] !== BACKSLASH || raw[at + 1] !== U) return NaN;
  const hex = raw.toString('latin1', at + 2, at + 6);
  return /^[0-9A-Fa-f]{4}$/.test(hex) ? parseInt(hex, 16) : NaN;
}

/** Why the `\\u` escape at `i` cannot be taken: U+0000 (PostgreSQL text cannot hold it), or a
 * surrogate not in a pair (not a character: RFC 8259 §8.2 leaves it undefined; stored, it became
 * U+FFFD). 'pair': a high surrogate whose low half follows at once. The scan reads forward only,
 * so an escaped backslash before `u` is never taken for an escape. Malformed escapes are left to
 * JSON.parse (INVALID_JSON). Raw control bytes and unescaped surrogates cannot occur: JSON.parse
 * and isUtf8 refuse them. */
function unstorable(raw: Buffer, i: number, lowAt: number): string | 'pair' | undefined {
  const c = unitAt(raw, i);
  if (Number.isNaN(c)) return undefined;
  if (c === 0) return 'a string holds U+0000, which cannot be stored';
  const lone = 'a string holds a lone UTF-16 surrogate, which is not a character';
  if (c >= 0xd800 && c <= 0xdbff) {
    const next = unitAt(raw, i + 6);
    return next >= 0xdc00 && next <= 0xdfff ? 'pair' : lone;
  }
  if (c >= 0xdc00 && c <= 0xdfff && i !== lowAt) return lone;
  return undefined;
}

/** Whether the quote at `i` opens a member name: the last byte before it, spaces aside, is `{` or `,`. */
function expectsKey(raw: Buffer, i: number): boolean {
  for (let j = i - 1; j >= 0; j--) {
    const b = raw[j]!;
    if (!isSpace(b)) return b === OPEN_OBJECT || b === COMMA;
  }
  return false;
}

/** The JSON pointer of the container at `level` (0: the root), from the names and indexes open above it. */
function pointerTo(raw: Buffer, isArray: boolean[], count: number[], keyAt: number[], level: number): string {
  let pointer = '';
  for (let d = 0; d < level; d++) {
    let token: string;
    if (isArray[d]) token = String(Math.max(0, count[d]! - 1));
    else {
      token = '';
      const at = keyAt[d]!;
      if (at >= 0) {
        let end = at + 1;
        while (end < raw.length && raw[end] !== QUOTE) end += raw[end] === BACKSLASH ? 2 : 1;
        try { token = JSON.parse(raw.subarray(at, end + 1).toString('utf8')) as string; } catch { /* left empty */ }
      }
    }
    pointer += '/' + token.replace(/~/g, '~0').replace(/\//g, '~1');
  }
  return pointer;
}

function fail(code: ProblemCode, rule: string, raw: Buffer, isArray: boolean[], count: number[], keyAt: number[], level: number): never {
  const pointer = pointerTo(raw, isArray, count, keyAt, Math.min(level, BODY_LIMITS.depth));
  throw new ApiError(code, `the request body is too large in shape: ${rule}`, { errors: [{ pointer, detail: rule, code }] });
}
