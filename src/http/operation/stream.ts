// A streamed response (the run event stream): no transaction is held while it is open; each of
// its reads sets the request context again from the token, in the read's own statement.
import type { StreamOperation } from '../operation.ts';
import type { Endpoint, Runner } from './endpoint.ts';
import { outcomeError, readInContext } from './begin.ts';
import { rowsInContext } from './statement.ts';
import { validate } from './input.ts';

export function streamRunner(op: StreamOperation, endpoint: Endpoint): Runner {
  const { app } = endpoint;
  return async (request, h, caller, rateHeaders) => {
    const read = readInContext(endpoint, caller, request);
    const { params, query } = await read(async () => ({
      params: validate(op.params, request.params, 'params'), query: validate(op.query, request.query, 'query'),
    }));
    const rows = async (statement: Parameters<typeof rowsInContext>[2]) => {
      const { outcome, rows: found } = await rowsInContext(endpoint, caller, statement, undefined, true);
      if (outcome !== 'ok') throw outcomeError(op, outcome);
      return found;
    };
    return await op.stream({ clientId: caller.clientId, params, query, app, request, h, headers: rateHeaders, read, rows });
  };
}
