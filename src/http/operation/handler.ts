// A handler of a few lines in the request's transaction: begin_request (with the Idempotency-Key's
// claim), validation, If-Match and the key's problems, a stored response replayed or the handler
// run, its response stored under the key and the wake-up read, both sent with COMMIT.
import type { Request } from '@hapi/hapi';
import { sql } from 'kysely';
import { api } from '../../db/api.ts';
import { pipelined } from '../../db/database.ts';
import type { HandlerOperation } from '../operation.ts';
import type { Caller, Endpoint, Runner } from './endpoint.ts';
import { begin, connectionsOf, inTransaction, readInContext } from './begin.ts';
import { idempotencyKeyOf, ifMatchOf } from './input.ts';
import { claimAnswer, fingerprintOf } from './idempotency.ts';
import { etagOf, sendAnswer } from './answer.ts';
import { wakeAfter, wakeUp } from './wake.ts';

/** If-Match and Idempotency-Key as the operation requires them (If-Match's problem first). */
function headersOf(op: HandlerOperation, request: Request): { ifMatch: number[]; key: string | undefined } {
  const ifMatch = op.ifMatch ? ifMatchOf(request) : [];
  const key = op.idempotencyKey ? idempotencyKeyOf(request) : undefined;
  return { ifMatch, key };
}

export function handlerRunner(op: HandlerOperation, endpoint: Endpoint): Runner {
  const { app, route } = endpoint;
  return async (request, h, caller, rateHeaders, requestId) => {
    const preflight = op.preflight ? await runPreflight(op, op.preflight, endpoint, caller, request) : undefined;
    const release = op.concurrency ? await op.concurrency(app).acquire() : undefined;
    const result = await inTransaction(app, caller, async (tx) => {
      // The headers are read first (the key is claimed with begin_request), but their errors
      // are answered after who is asking and what was asked.
      let checkedHeaders: ReturnType<typeof headersOf> | undefined;
      let headerError: unknown;
      try { checkedHeaders = headersOf(op, request); } catch (e) { headerError = e; }
      const idempotency = checkedHeaders?.key === undefined ? undefined
        : { key: checkedHeaders.key, fingerprint: fingerprintOf(request) };
      const { principal, params, query, body, claim } = await begin(endpoint, tx, caller, request, idempotency);
      if (headerError !== undefined || !checkedHeaders) throw headerError;
      const { ifMatch, key } = checkedHeaders;

      if (key !== undefined) {
        if (!claim) throw new Error('the Idempotency-Key was not claimed');
        const replay = claimAnswer(claim, op.oneTimeSecret);
        if (replay) {
          const body = op.replayed ? await op.replayed({ tx, app, request }, replay.body) : replay.body;
          return { ...replay, body };
        }
      }

      const out = await op.handler({ tx, principal, params, query, body, ifMatch, requestId, app, request, preflight, route });
      const status = out.status ?? op.response.status;
      const headers: Record<string, string> = { ...(out.headers ?? {}) };
      if (out.version != null) headers.ETag = etagOf(out.version);
      const payload = out.body === undefined ? '' : JSON.stringify(out.body);
      if (idempotency !== undefined) {
        const stored = op.oneTimeSecret && out.body && typeof out.body === 'object'
          ? JSON.stringify({ ...(out.body as Record<string, unknown>), secret: undefined })
          : op.storedBody && out.body && typeof out.body === 'object'
            ? JSON.stringify(op.storedBody(out.body as Record<string, unknown>))
            : payload;
        // Sent with COMMIT in one round trip; a failure here fails the commit with this error.
        await pipelined(api.value('idempotency_complete', op.method, op.path, idempotency.key,
          idempotency.fingerprint, status, headers, stored)).execute(tx);
      }
      // Also with COMMIT (a read writes no event).
      const wake = op.method === 'GET' ? undefined : (await wakeAfter(tx)).later;
      return { replay: false as const, status, headers, body: payload, wake };
    }).finally(() => release?.());
    // Committed, so the wake-up read has answered.
    wakeUp(app, !result.replay && result.wake ? (await result.wake)[0] : undefined);
    return sendAnswer(h, result, rateHeaders);
  };
}

/** Every check that needs no network comes first, in a transaction of its own; a request whose
 * key already has a stored response goes straight to the replay, with nothing sent anywhere. */
async function runPreflight(op: HandlerOperation, preflight: NonNullable<HandlerOperation['preflight']>, endpoint: Endpoint,
  caller: Caller, request: Request): Promise<unknown> {
  const { app } = endpoint;
  const checked = await connectionsOf(app, caller).db.transaction().execute(async (tx) => {
    const c = await begin(endpoint, tx, caller, request);
    const h = headersOf(op, request);
    const stored = h.key !== undefined && (await api.value('idempotency_stored', op.method, op.path, h.key).execute(tx)).rows[0]?.value === true;
    return { ...c, ifMatch: h.ifMatch, stored };
  });
  return checked.stored ? undefined : preflight({ ...checked, app, request, read: readInContext(endpoint, caller, request) });
}
