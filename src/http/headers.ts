// Reading request headers, below both the request pipeline (operation.ts) and the process's
// services (context.ts), so that neither imports the other to read one.
import type { Request } from '@hapi/hapi';

/** A request header as a string (hapi types headers loosely). */
export function header(request: Request, name: string): string | undefined {
  const v = (request.headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(v) ? v.join(', ') : v;
}
