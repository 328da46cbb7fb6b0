// A streamed response (the run event stream): no transaction is held while it is open; each of
// its reads sets the request context again from the token.
import type { StreamOperation } from '../operation.ts';
import type { Endpoint, Runner } from './endpoint.ts';
import { readInContext } from './begin.ts';
import { validate } from './input.ts';

export function streamRunner(op: StreamOperation, endpoint: Endpoint): Runner {
  const { app } = endpoint;
  return async (request, h, caller, rateHeaders) => {
    const read = readInContext(endpoint, caller, request);
    const { params, query } = await read(async () => ({
      params: validate(op.params, request.params, 'params'), query: validate(op.query, request.query, 'query'),
    }));
    return await op.stream({ clientId: caller.clientId, params, query, app, request, h, headers: rateHeaders, read });
  };
}
