// How an operation's result goes out: a body of JSON text (or none), its headers, the rate-limit
// headers, and Idempotent-Replayed on a stored response.
import type { ResponseObject, ResponseToolkit } from '@hapi/hapi';

/** A response body that is already JSON text (built by PostgreSQL); sent untouched. */
export class RawJson {
  constructor(readonly text: string) {}
}

export const etagOf = (version: number) => `"${version}"`;

export type Answer = { replay: boolean; status: number; headers: Record<string, string>; body: string };

/** A response whose body is JSON text (or empty), with its headers and the rate-limit headers. */
export function sendAnswer(h: ResponseToolkit, result: Answer, rateHeaders: Record<string, string>): ResponseObject {
  const res = h.response(result.body).code(result.status);
  if (result.body !== '') res.type('application/json');
  for (const k in result.headers) res.header(k, result.headers[k]!);
  for (const k in rateHeaders) res.header(k, rateHeaders[k]!);
  if (result.replay) res.header('Idempotent-Replayed', 'true');
  return res;
}
