// JSON Schema checks of client input against schemas held in the database (report parameters,
// agent input, run action responses, tool arguments): ajv, every error at once, each with a JSON
// pointer under `base`. Compiled schemas are cached by a caller-chosen key (a definition and its version).
import Ajv, { type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { FieldError } from './errors.ts';

const ajv = new (Ajv as unknown as typeof Ajv.default)({ allErrors: true, strict: false });
(ajvFormats as unknown as (a: unknown) => void)(ajv);
const cache = new Map<string, ValidateFunction>();

/** The problems of `value` against `schema` (empty when valid), pointers prefixed with `base`. */
export function schemaErrors(key: string, schema: object, value: unknown, base: string, code: string): FieldError[] {
  let validate = cache.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    if (cache.size > 1000) cache.clear();
    cache.set(key, validate);
  }
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => {
    const missing = e.keyword === 'required' ? `/${(e.params as { missingProperty: string }).missingProperty}` : '';
    const extra = e.keyword === 'additionalProperties' ? `/${(e.params as { additionalProperty: string }).additionalProperty}` : '';
    const pointer = `${base}${e.instancePath}${missing}${extra}`;
    return { pointer, detail: `${pointer.slice(1) || 'the value'} ${e.message ?? 'is invalid'}`, code };
  });
}
