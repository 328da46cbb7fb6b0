// What a request brings to an operation: path and query parameters, a body and headers, each
// validated against what the operation declares. Nothing here touches the database.
import type { Request } from '@hapi/hapi';
import type Joi from 'joi';
import { ApiError, PROBLEMS, type FieldError, type ProblemCode } from '../errors.ts';
import { header } from '../headers.ts';

/** An operation's schemas, read once when its route is built. */
export interface InputSchemas {
  params?: Joi.ObjectSchema;
  query?: Joi.ObjectSchema;
  body?: Joi.ObjectSchema | Joi.AnySchema;
  bodyOptional?: boolean;
  fieldCodes?: Record<string, ProblemCode>;
}

export function fieldErrors(error: Joi.ValidationError, prefix = ''): FieldError[] {
  return error.details.map((d) => ({
    pointer: prefix + '/' + d.path.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/'),
    detail: d.message.replace(/"/g, "'"),
    code: d.type,
  }));
}

/** The spec's own code for problems at (or inside) a field: each such problem carries it, and the
 * first one names the response (as in SQL's raise_errors: the top-level code is the first one's). */
export function withFieldCodes(errors: FieldError[], codes: Record<string, ProblemCode> | undefined, base = ''): { code: ProblemCode; errors: FieldError[] } {
  const mapped = errors.map((e) => {
    // A missing field is a missing field, whatever rule it would have broken; a problem that
    // already names the spec's code (freeJson's overBytes) keeps it.
    if (e.code === 'any.required' || e.code in PROBLEMS) return e;
    // '/events/*' names the items of a list only (an empty or missing list is a plain validation problem).
    const field = Object.keys(codes ?? {}).filter((f) => (f.endsWith('/*')
      ? e.pointer.startsWith(base + f.slice(0, -1))
      : e.pointer === base + f || e.pointer.startsWith(base + f + '/'))).sort((x, y) => y.length - x.length)[0];
    return field ? { ...e, code: codes![field]! } : e;
  });
  const specific = mapped.find((e) => e.code in PROBLEMS);
  return { code: (specific?.code as ProblemCode | undefined) ?? 'VALIDATION_FAILED', errors: mapped };
}

const PREFERENCES = {
  params: { abortEarly: false, convert: true, errors: { wrap: { label: "'" } } },
  query: { abortEarly: false, convert: true, errors: { wrap: { label: "'" } } },
  body: { abortEarly: false, convert: false, errors: { wrap: { label: "'" } } },
} satisfies Record<string, Joi.ValidationOptions>;
const PREPARED = { params: new WeakMap<Joi.Schema, Joi.Schema>(), query: new WeakMap<Joi.Schema, Joi.Schema>(), body: new WeakMap<Joi.Schema, Joi.Schema>() };

/** The schema with the preferences of its place set once: Joi merges preferences passed to each
 * validate() call into its defaults every time (about 10 of a create's 60 µs of validation),
 * and caches those set on the schema. */
function withPreferences(schema: Joi.Schema, where: 'params' | 'query' | 'body'): Joi.Schema {
  let prepared = PREPARED[where].get(schema);
  if (!prepared) PREPARED[where].set(schema, prepared = schema.prefs(PREFERENCES[where]));
  return prepared;
}

export function validate<T>(schema: Joi.ObjectSchema | Joi.AnySchema | undefined, value: unknown, where: 'params' | 'query' | 'body',
  fieldCodes?: Record<string, ProblemCode>): T {
  if (!schema) {
    // An empty JSON object is tolerated where an operation takes no body.
    if (where === 'body' && value !== null && value !== undefined
        && !(typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0)) {
      throw new ApiError('VALIDATION_FAILED', 'this operation takes no request body');
    }
    return (value ?? {}) as T;
  }
  if (where === 'body' && value === null && schema.type === 'object') {
    throw new ApiError('VALIDATION_FAILED', 'the request body must be a JSON object',
      { errors: [{ pointer: '', detail: 'the request body must be a JSON object, not null', code: 'object.base' }] });
  }
  const { error, value: out } = withPreferences(schema, where).validate(value ?? (where === 'body' ? undefined : {}));
  if (error) {
    if (where === 'body') {
      const { code, errors } = withFieldCodes(fieldErrors(error), fieldCodes);
      throw new ApiError(code, errors.length === 1 ? errors[0]!.detail : 'the request body is invalid; see errors', { errors });
    }
    throw new ApiError('INVALID_REQUEST', `invalid ${where === 'query' ? 'query parameter' : 'path parameter'}; see errors`,
      { errors: fieldErrors(error) });
  }
  return out as T;
}

/** Params, query and body, validated in that order (the first problem answers). */
export function validateInput(input: InputSchemas, request: Request) {
  return {
    params: validate(input.params, request.params, 'params'),
    query: validate(input.query, request.query, 'query'),
    body: validate(input.body, input.bodyOptional && request.payload === null ? {} : request.payload, 'body', input.fieldCodes),
  };
}

/** If-Match as row versions, for an operation that requires it. Weak tags never match (RFC 9110
 * strong comparison); `*` names no version, so it is refused as a missing header is. */
export function ifMatchOf(request: Request): number[] {
  const raw = header(request, 'if-match');
  if (raw === undefined || raw.trim() === '' || raw.trim() === '*') {
    throw new ApiError('PRECONDITION_REQUIRED', 'send If-Match with the ETag from your last read of this resource');
  }
  const versions: number[] = [];
  for (const tag of raw.split(',')) {
    const m = /^\s*"(\d{1,9})"\s*$/.exec(tag);
    versions.push(m ? Number(m[1]) : -1);
  }
  return versions;
}

const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;

/** The Idempotency-Key of an operation that requires one. */
export function idempotencyKeyOf(request: Request): string {
  const key = header(request, 'idempotency-key');
  if (key === undefined) throw new ApiError('IDEMPOTENCY_KEY_REQUIRED', 'send a unique Idempotency-Key header with this request');
  if (!IDEMPOTENCY_KEY.test(key)) throw new ApiError('IDEMPOTENCY_KEY_INVALID', 'Idempotency-Key must be 1 to 255 printable ASCII characters');
  return key;
}
