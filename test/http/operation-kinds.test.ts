// An operation declares how it runs by its `kind`, and carries only that kind's fields: the type
// refuses a mix (checked by `make typecheck`, through the @ts-expect-error lines), and toRoute
// refuses a kind it does not know (an operation built outside TypeScript).
import t from 'tap';
import { sql } from 'kysely';
import type { Operation } from '../../src/http/operation.ts';
import { toRoute } from '../../src/http/operation/route.ts';
import type { AppContext } from '../../src/http/context.ts';

const contract = { operationId: 'testKinds', path: '/v1/_test/kinds', summary: 'test only', tag: 'Test', response: { status: 200, description: 'ok' } };
const refuse = () => { throw new Error('not run'); };

export const refused: Operation[] = [
  // @ts-expect-error a read statement with a handler
  { kind: 'statement', ...contract, method: 'GET', statement: refuse, handler: refuse },
  // @ts-expect-error a command with a handler
  { kind: 'command', ...contract, method: 'POST', command: () => ({ statement: sql`select 1` }), handler: refuse },
  // @ts-expect-error a handler with a command
  { kind: 'handler', ...contract, method: 'POST', handler: refuse, command: () => ({ statement: sql`select 1` }) },
  // @ts-expect-error the principal with a stream
  { kind: 'principal', ...contract, method: 'GET', stream: refuse },
  // @ts-expect-error a read takes no Idempotency-Key
  { kind: 'statement', ...contract, method: 'GET', idempotencyKey: true, statement: refuse },
  // @ts-expect-error a read is a GET
  { kind: 'statement', ...contract, method: 'POST', statement: refuse },
  // @ts-expect-error a command has no If-Match (its statement could not read the versions)
  { kind: 'command', ...contract, method: 'POST', ifMatch: true, command: () => ({ statement: sql`select 1` }) },
  // @ts-expect-error no kind
  { ...contract, method: 'POST', handler: refuse },
];

t.test('toRoute refuses an operation of no known kind when the route is built', async (t) => {
  const op = { ...contract, method: 'GET', handler: refuse } as unknown as Operation;
  t.throws(() => toRoute(op, {} as AppContext), /testKinds: no kind of operation named undefined/);
});
