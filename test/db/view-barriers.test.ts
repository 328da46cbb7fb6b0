// A reader's own condition sees only the rows an api view lets through: a function of the
// runtime role's, cheaper than any condition of the view, given a finance context, raises on any
// row finance may not see. One server only: on a cluster the
// statements run in a delegated call, where the runtime role cannot make a function; the copies
// of the views there keep each view's options (test/citus/shard-views.test.ts).
import t from 'tap';
import postgres from 'postgres';
import { startApp, CITUS_WORKERS } from '../helpers/app.ts';
import { beginRequest, failure, oneConnection } from '../helpers/sql.ts';

t.test('a reader\'s function is shown no row its Roles may not read', { skip: CITUS_WORKERS.length > 0
  && 'on a cluster a request\'s statements run in a delegated call, where the runtime role makes no function' }, async (t) => {
  const a = await startApp(t);
  const p = await a.principal('member,manager,finance');
  let n = 0;
  const key = () => ({ 'idempotency-key': `k${++n}` });
  const project = (await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: key(), payload: { code: 'B', name: 'B' } })).json.id;
  const bytes = Buffer.from('project notes\n');
  const { createHash } = await import('node:crypto');
  const u = (await a.request({ method: 'POST', url: '/v1/files/uploads', token: p.token, headers: key(), payload: { name: 'notes.txt',
    content_type: 'text/plain', size_bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'),
    linked_resource: { type: 'project', id: project } } })).json;
  await a.request({ method: 'PUT', url: new URL(u.upload_url).pathname, payload: bytes, headers: { 'content-type': 'text/plain' } });
  t.equal((await a.request({ method: 'POST', url: `/v1/files/uploads/${u.id}/complete`, token: p.token, headers: key() })).statusCode, 200);
  const fin = await a.createClient(p.orgId, { roles: 'finance' });
  const rt = postgres(a.runtimeUrl, oneConnection);
  t.teardown(() => rt.end());
  const probes = await rt.begin(async (tx) => {
    await beginRequest(tx, fin);
    await tx`create function pg_temp.shown(p text, seen text[]) returns boolean language plpgsql cost 0.0001
      as $$ begin if not p = any(seen) then raise exception 'shown %', p; end if; return true; end $$`;
    const out: Record<string, string> = {};
    for (const view of ['api.files', 'api.reports', 'api.agents']) {
      const seen = (await tx.unsafe(`select id from ${view}`)).map((r) => r.id as string);
      out[view] = await failure(tx.savepoint((sp) => sp.unsafe(`select count(*) from ${view} where pg_temp.shown(id, $1::text[])`, [seen])));
    }
    return out;
  });
  t.same(probes, { 'api.files': 'ok', 'api.reports': 'ok', 'api.agents': 'ok' }, 'files, reports and agents: no row beyond the view\'s own');
});
