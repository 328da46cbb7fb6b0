// A write done by one statement. With an Idempotency-Key and valid input the whole transaction
// is one round trip and one socket write: BEGIN, begin_request with the key's claim, the command,
// the wake-up read and COMMIT go out together. Otherwise (no key, a key or input that is not
// valid) it runs as a handler would, so its problems keep their order: who is asking, then what
// was asked.
import { sql } from 'kysely';
import { api, type Declared } from '../../db/api.ts';
import type { Command, CommandOperation, OperationContext, OperationResult } from '../operation.ts';
import type { Caller, Endpoint, Runner } from './endpoint.ts';
import { beginStatement, claimOf, connectionsOf, outcomeError, type Begun, type Claim, type Idempotency } from './begin.ts';
import { idempotencyKeyOf, validateInput } from './input.ts';
import { claimAnswer, fingerprintOf } from './idempotency.ts';
import { sendAnswer } from './answer.ts';
import { handlerRunner } from './handler.ts';
import { WAKE_READ, wakeUp, type Woken } from './wake.ts';

export function commandRunner(op: CommandOperation, endpoint: Endpoint): Runner {
  const { kind: _kind, command, ...contract } = op;
  const asHandler = handlerRunner({ ...contract, kind: 'handler', handler: (ctx) => runCommand(op, ctx) }, endpoint);
  if (!op.idempotencyKey) return asHandler;
  const { app } = endpoint;
  return async (request, h, caller, rateHeaders, requestId) => {
    let key: string;
    try { key = idempotencyKeyOf(request); } catch { return asHandler(request, h, caller, rateHeaders, requestId); }
    const idempotency = { key, fingerprint: fingerprintOf(request) };
    let planned: Command;
    try {
      planned = command({ ...validateInput(endpoint.input, request), request });
    } catch {
      return asHandler(request, h, caller, rateHeaders, requestId);
    }
    // Committed: every statement answered, and an error of any of them was thrown by COMMIT.
    const [[begun], [row], [woken]] = await connectionsOf(app, caller).batch(statementsOf(endpoint, caller, idempotency, planned)
      .map((s) => s.compile(app.database.db))) as [[(Begun & Claim)?], [Answer?], [Woken?]];
    if (!begun || begun.outcome !== 'ok') throw outcomeError(op, begun?.outcome);
    const claim = claimOf(begun);
    if (!claim) throw new Error('the Idempotency-Key was not claimed');
    const replay = claimAnswer(claim, false);
    if (replay) return sendAnswer(h, replay, rateHeaders);
    if (!row) throw new Error(`${op.operationId}: the command gave no row`);
    wakeUp(app, woken);
    return sendAnswer(h, { replay: false, status: op.response.status, headers: row.headers, body: row.body }, rateHeaders);
  };
}

/** The columns of the command's answer; `stored` is the completion's (void). */
export const ANSWER_COLUMNS = { body: 'text', headers: 'jsonb', stored: 'void' } as const;
type Answer = Omit<Declared<typeof ANSWER_COLUMNS>, 'body' | 'headers'> & { body: string; headers: Record<string, string> };

/** The claim, the command with its response stored under the key, and the wake-up read, sent
 * behind BEGIN without waiting (Database.batch): they answer with COMMIT, in one round trip. The command
 * runs only under a fresh claim (a one-time filter on the mark idempotency_claim sets), so a
 * replay, a reuse, a key in flight or a refused caller runs nothing; PostgreSQL builds the
 * response (body text, Location, ETag), stores it with the key and returns it. */
export function statementsOf(endpoint: Endpoint, caller: Caller, idempotency: Idempotency, command: Command) {
  const { op } = endpoint;
  return [beginStatement(endpoint, caller, idempotency), sql<Answer>`
          with c as materialized (
                 select c.doc, c.version from (${command.statement}) c where current_setting('svc.claimed', true) = 'yes'),
               r as materialized (
                 select app_private.wire_json(c.doc) as body,
                        jsonb_strip_nulls(jsonb_build_object('Location', ${command.location ?? null}::text || (c.doc ->> 'id'),
                          'ETag', '"' || c.version || '"')) as headers
                   from c),
               -- Under a fresh claim exactly one row is stored and sent: any other count fails the
               -- transaction (a 500, our bug), so the key is not left claimed with no response.
               not_one as materialized (
                 select ${api.call('command_answered', sql<number>`count(*)`)} from r
                 having count(*) <> 1 and current_setting('svc.claimed', true) = 'yes')
          select r.body, r.headers,
                 ${api.call('idempotency_complete', op.method, op.path, idempotency.key,
                   idempotency.fingerprint, op.response.status, sql`r.headers`, sql<string>`r.body`)} as stored
            from r
           where not exists (select from not_one)`, WAKE_READ];
}

/** The command in the request's transaction, as a handler: its row is the response. */
async function runCommand(op: CommandOperation, ctx: OperationContext): Promise<OperationResult> {
  const command = op.command({ params: ctx.params, query: ctx.query, body: ctx.body, request: ctx.request });
  const { rows: [row] } = await command.statement.execute(ctx.tx);
  if (!row) throw new Error(`${op.operationId}: the command gave no row`);
  const id = (row.doc as { id?: string }).id;
  return { body: row.doc, version: row.version ?? undefined,
    headers: command.location !== undefined && id !== undefined ? { Location: command.location + id } : undefined };
}
