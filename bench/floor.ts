// The floor of the design for one request: a bare hapi route that sends the request's captured
// statements through postgres.js and answers the JSON text they return, and nothing else (no token,
// no rate limit, no validation, no metrics, no logging). Part `ratio` loads it with wrk in the same
// rounds as the API and the replay: API ÷ floor says how much of the gap to the replay is the
// service's own work, and floor ÷ replay what any Node HTTP server in the loop costs on this machine.
//
// Run as a child process of the bench: FLOOR_STATEMENTS_FILE (a JSON array: one statement, or a
// transaction from `begin` to `commit` whose `:k` is a fresh key per request, as in the replay),
// FLOOR_CONNECTIONS (the pool's size; postgres.js pipelines once all are busy), FLOOR_DATABASE_URL
// (as svc_runtime). It prints "listening <port>" once it serves.
import Hapi from '@hapi/hapi';
import postgres from 'postgres';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';

const KEY = "('ratio-' || :k)";
/** Each statement, and whether it takes the fresh key (as $1): only those that held the replay's `:k`,
 * so that a literal such as '$1.00' in another is left alone. */
const statements = (JSON.parse(readFileSync(process.env.FLOOR_STATEMENTS_FILE!, 'utf8')) as string[])
  .map((s) => ({ text: s.trim().replace(/;$/, '').replaceAll(KEY, "('ratio-' || $1)"), keyed: s.includes(KEY) }));
const sql = postgres(process.env.FLOOR_DATABASE_URL!, { max: Number(process.env.FLOOR_CONNECTIONS ?? 1), prepare: true, onnotice: () => {} });

/** A row as the API sends it: a resource's JSON text, or a list page around the page's JSON text
 * (as src/routes/common.ts does, without its cursor). */
function body(row: Record<string, unknown> | undefined): string | undefined {
  if (!row) return undefined;
  if (typeof row.data === 'string') return `{"object":"list","data":[${row.data}],"has_more":${row.has_more === true}}`;
  const doc = row.doc ?? row.body;
  return doc === undefined ? undefined : typeof doc === 'string' ? doc : JSON.stringify(doc);
}

const send = (s: { text: string; keyed: boolean }, on: postgres.Sql | postgres.ReservedSql = sql) =>
  on.unsafe(s.text, s.keyed ? [randomUUID()] : [], { prepare: true });

async function run(): Promise<string> {
  if (statements.length === 1) return body((await send(statements[0]!))[0]) ?? '{}';
  // A transaction: its statements written at once on one connection (the API pipelines its
  // transactions' statements the same way), answered in order.
  const connection = await sql.reserve();
  try {
    const results = await Promise.all(statements.map((s) => send(s, connection)));
    return results.map((rows) => body(rows[0])).filter((x) => x !== undefined).pop() ?? '{}';
  } catch (e) {
    await connection.unsafe('rollback').catch(() => undefined);
    throw e;
  } finally {
    connection.release();
  }
}

const server = Hapi.server({ port: 0, host: '127.0.0.1' });
server.route({
  method: '*', path: '/{any*}',
  handler: async (request, h) => h.response(await run()).type('application/json').code(request.method === 'post' ? 201 : 200),
});
await server.start();
process.once('SIGTERM', () => void server.stop({ timeout: 1000 }).then(() => sql.end({ timeout: 1 })).then(() => process.exit(0)));
console.log(`listening ${server.info.port}`);
