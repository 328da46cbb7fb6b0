// The floor of the design for one GET: a bare hapi route that sends the request's captured
// statement through postgres.js and answers its JSON text, and nothing else (no token, no rate
// limit, no validation, no metrics, no logging). Part `ratio` loads it with wrk in the same rounds
// as the API and the replay: API ÷ floor says how much of the gap to the replay is the service's
// own work, and floor ÷ replay what any Node HTTP server in the loop costs on this machine.
//
// Run as a child process of the bench: FLOOR_SQL_FILE (one statement, no parameters),
// FLOOR_CONNECTIONS (the pool's size; postgres.js pipelines once all are busy), FLOOR_DATABASE_URL
// (as svc_runtime). It prints "listening <port>" once it serves.
import Hapi from '@hapi/hapi';
import postgres from 'postgres';
import { readFileSync } from 'node:fs';

const statement = readFileSync(process.env.FLOOR_SQL_FILE!, 'utf8').trim().replace(/;$/, '');
const sql = postgres(process.env.FLOOR_DATABASE_URL!, { max: Number(process.env.FLOOR_CONNECTIONS ?? 1), prepare: true, onnotice: () => {} });

/** The statement's one row as the API sends it: a resource's JSON text, or a list page around the
 * page's JSON text (as src/routes/common.ts does, without its cursor). */
function body(row: Record<string, unknown>): string {
  if (typeof row.data === 'string') return `{"object":"list","data":[${row.data}],"has_more":${row.has_more === true}}`;
  const doc = row.doc ?? row.body;
  return typeof doc === 'string' ? doc : JSON.stringify(doc ?? null);
}

const server = Hapi.server({ port: 0, host: '127.0.0.1' });
server.route({
  method: 'GET', path: '/{any*}',
  handler: async (_request, h) => {
    const [row] = await sql.unsafe(statement, [], { prepare: true });
    return h.response(body(row ?? {})).type('application/json');
  },
});
await server.start();
process.once('SIGTERM', () => void server.stop({ timeout: 1000 }).then(() => sql.end({ timeout: 1 })).then(() => process.exit(0)));
console.log(`listening ${server.info.port}`);
