// Files inside the database: the runtime role without a credential sees no file and reaches no
// table; states, immutability and retention hold for a direct UPDATE/DELETE by the owner; upload
// capabilities cannot be forged.
import t, { type Test } from 'tap';
import postgres from 'postgres';
import { createHash } from 'node:crypto';
import { CITUS_WORKERS, startApp } from '../helpers/app.ts';
import { beginRequest, failure, inRequest, oneConnection, refusedOnTheCoordinator, visibleRows } from '../helpers/sql.ts';

/** A read refused outright sees nothing (visibleRows); on a cluster that refusal ends the transaction. */
const refused = (e: any): number => { if (refusedOnTheCoordinator(e)) return 0; throw e; };

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** An organization with a project and two files through the API: one ready, one still processing. */
async function world(t: Test) {
  const a = await startApp(t);
  const p = await a.principal('member,manager,finance,hr');
  let n = 0;
  const key = () => ({ 'idempotency-key': `k${++n}` });
  const project = (await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: key(), payload: { code: 'F', name: 'F' } })).json.id;
  const file = async (text: string) => {
    const bytes = Buffer.from(text);
    const u = (await a.request({ method: 'POST', url: '/v1/files/uploads', token: p.token, headers: key(),
      payload: { name: 'a.txt', content_type: 'text/plain', size_bytes: bytes.length, sha256: sha(bytes), linked_resource: { type: 'project', id: project } } })).json;
    await a.request({ method: 'PUT', url: new URL(u.upload_url).pathname, payload: bytes, headers: { 'content-type': 'text/plain' } });
    const f = (await a.request({ method: 'POST', url: `/v1/files/uploads/${u.id}/complete`, token: p.token, headers: key() })).json;
    return { id: f.id as string, upload: u.id as string, token: new URL(u.upload_url).pathname.split('/').pop()! };
  };
  const ready = await file('ready one\n');
  await a.admin`select app_private.file_scan_record(${p.orgId}, ${ready.id}, 'clean', null, false)`;
  const processing = await file('still checking\n');
  const rt = postgres(a.runtimeUrl, oneConnection);
  t.teardown(() => rt.end());
  return { a, p, ready, processing, rt, project };
}

t.test('the runtime role: nothing without a credential; forged settings and capabilities show nothing', async (t) => {
  const { a, p, ready, rt } = await world(t);
  t.equal(await visibleRows(rt, 'api.files'), 0, 'no context: api.files is empty');
  for (const table of ['app.files', 'app.file_uploads', 'app.file_chunks', 'app.file_policies', 'app.file_contents']) {
    t.equal(await visibleRows(rt, table), 0, `${table}: no privilege at all`);
  }
  // On a cluster a read without a signed context may be refused (visibleRows), which ends the
  // transaction: one each.
  const forged = <T>(fn: (tx: postgres.TransactionSql) => Promise<T>) => rt.begin(async (tx) => {
    await tx`select set_config('svc.organization_id', ${p.orgId}, true), set_config('svc.client_id', ${p.id}, true),
      set_config('svc.roles', 'member,manager,finance,hr', true)`;
    return fn(tx);
  });
  t.same([await forged((tx) => visibleRows(tx, 'api.files')).catch(refused), await forged((tx) => failure(tx`select * from api.file_chunks(${ready.id}, 0, 10)`))],
    [0, 'ok'], 'forged settings: no file, and no chunk');
  // On a cluster in the organization's worker, where begin_request signed the context.
  const inRequestOf = <T>(c: { id: string; secret: string; orgId: string }, fn: (q: postgres.TransactionSql) => Promise<T>) => rt.begin(async (tx) => {
    await beginRequest(tx, c);
    return fn(await inRequest(t, a.runtimeUrl, tx as never, c.orgId) as never);
  }) as Promise<T>;
  const legit = await inRequestOf(p, async (tx) =>
    [(await tx`select count(*)::int as n from api.files`)[0]!.n, (await tx`select count(*)::int as n from api.file_chunks(${ready.id}, 0, 10)`)[0]!.n]);
  t.same(legit, [2, 1], 'with a token: both files, and the ready one\'s bytes');
  t.match(await failure(rt`select app_private.capability_mac('upload', 'upl_x')`), /^42501/, 'the runtime role cannot mint capabilities');
  // Chunks as bytes: the runtime role writes none without a context, and none to an
  // upload that is no longer taking bytes, even with a token.
  const chunks = async () => (await a.admin`select count(*)::int as n from app.file_chunks where organization_id = ${p.orgId}`)[0]!.n;
  const before = await chunks();
  t.not(await failure(rt`select api.file_upload_chunks(${ready.upload}, 5::integer, ${Buffer.from('x')}::bytea)`), 'ok',
    'no context: api.file_upload_chunks(bytea) writes nothing');
  t.not(await failure(inRequestOf(p, (tx) => tx`select api.file_upload_chunks(${ready.upload}, 5::integer, ${Buffer.from('x')}::bytea)`)), 'ok',
    'with a token: a completed upload takes no more chunks');
  t.equal(await chunks(), before, 'no chunk was written');
  // A link is taken where the API takes it: on a cluster in the worker of the organization it names
  // (linkConnections), without an access token.
  const link = (fn: (q: postgres.TransactionSql) => Promise<any[]>) => rt.begin(async (tx) =>
    fn(await inRequest(t, a.runtimeUrl, tx as never, p.orgId) as never)) as Promise<any[]>;
  const [bad] = await link((q) => q`select outcome from api.file_upload_begin(${ready.id.replace('fil', 'upl') + '.' + '0'.repeat(64)})`);
  t.equal(bad!.outcome, 'not_found', 'a made-up upload token');
  const [badNamed] = await link((q) => q`select outcome from api.file_upload_begin(${`${ready.upload}.${p.orgId}.${'0'.repeat(64)}`})`);
  t.equal(badNamed!.outcome, 'not_found', 'a made-up upload token that names the organization');
  const [badDownload] = await link((q) => q`select outcome from api.file_download_begin(${`${ready.id}.${p.id}.9999999999.${'a'.repeat(64)}`})`);
  t.equal(badDownload!.outcome, 'not_found', 'a made-up download token');
  // A finance client sees the project, not its files.
  const fin = await a.createClient(p.orgId, { roles: 'finance' });
  const seen = await inRequestOf(fin, async (tx) => (await tx`select count(*)::int as n from api.files`)[0]!.n);
  t.equal(seen, 0, 'finance: no project files');
  // The rule is the policy's, not only api.files': svc_api's own
  // statements in a finance or hr request see no project file (nor its bytes); a member's see both.
  const hr = await a.createClient(p.orgId, { roles: 'hr' });
  const member = await a.createClient(p.orgId, { roles: 'member' });
  const asApi = async (c: typeof fin) => a.admin.begin(async (tx) => {
    await beginRequest(tx, c);
    const q = await inRequest(t, a.adminUrl, tx, c.orgId, { role: 'svc_api' }) as unknown as postgres.TransactionSql;
    return [(await q`select count(*)::int as n from app.files where organization_id = ${c.orgId}`)[0]!.n,
      (await q`select count(*)::int as n from app.file_chunks where organization_id = ${c.orgId}`)[0]!.n];
  });
  t.same([await asApi(fin), await asApi(hr), await asApi(member)], [[0, 0], [0, 0], [2, 2]],
    'app.files and their chunks as svc_api: nothing for finance or hr, both for a member');
});

t.test('states, content and retention hold for the owner too', async (t) => {
  const { a, ready, processing } = await world(t);
  const fail = (p: Promise<unknown>) => failure(p);
  t.equal(await fail(a.admin`update app.files set status = 'archived' where id = ${processing.id}`), 'SVC09 CONFLICT', 'processing → archived is no transition');
  t.equal(await fail(a.admin`update app.files set status = 'ready' where id = ${processing.id}`), 'SVC09 CONFLICT', 'not ready before a scan');
  // On a cluster the row is checked in its shard, which the message names (files_<shard id>).
  const rejected = await fail(a.admin`update app.files set status = 'rejected' where id = ${processing.id}`);
  if (CITUS_WORKERS.length) t.match(rejected, /^23514 new row for relation "files_\d+" violates check constraint "files_rejected_has_code"$/, 'a rejection says why');
  else t.equal(rejected, '23514 new row for relation "files" violates check constraint "files_rejected_has_code"', 'a rejection says why');
  t.equal(await fail(a.admin`update app.files set status = 'processing' where id = ${ready.id}`), 'SVC09 CONFLICT', 'no way back');
  t.equal(await fail(a.admin`update app.files set sha256 = ${'b'.repeat(64)} where id = ${ready.id}`), 'SVC09 CONFLICT', 'content identity never changes');
  t.equal(await fail(a.admin`update app.files set scan_status = 'infected' where id = ${ready.id}`), 'SVC09 CONFLICT', 'checks are recorded once');
  t.equal(await fail(a.admin`delete from app.files where id = ${ready.id}`), 'SVC09 CONFLICT', 'files are archived, not deleted');
  t.equal(await fail(a.admin`update app.file_chunks set data = 'x' where upload_id = ${ready.upload}`), 'SVC09 CONFLICT', 'bytes never change');
  t.equal(await fail(a.admin`delete from app.file_chunks where upload_id = ${ready.upload}`), 'SVC09 CONFLICT', 'bytes stay with their file');
  t.equal(await fail(a.admin`delete from app.file_uploads where id = ${ready.upload}`), 'SVC09 CONFLICT', 'a completed upload stays');
  t.equal(await fail(a.admin`update app.file_uploads set sha256 = ${'c'.repeat(64)} where id = ${ready.upload}`), 'SVC09 CONFLICT', 'a declaration never changes');
  t.equal(await fail(a.admin`insert into app.file_chunks (organization_id, upload_id, seq, data)
    select organization_id, id, 99, 'x' from app.file_uploads where id = ${ready.upload}`), 'SVC09 CONFLICT', 'no bytes after the upload');

  // A file only from an upload whose bytes were verified against its declaration.
  const [u] = await a.admin`select * from app.file_uploads where id = ${ready.upload}`;
  t.equal(await fail(a.admin`insert into app.files (organization_id, name, content_type, size_bytes, sha256, status, linked_resource_type,
      linked_resource_id, upload_id) values (${u!.organization_id}, 'b.txt', 'text/plain', 3, ${'d'.repeat(64)}, 'processing', 'project',
      ${u!.linked_resource_id}, ${u!.id})`), 'SVC09 CONFLICT', 'no file from bytes that were not verified');

  // Retention: a legal hold and a posted financial record block archiving.
  await a.admin`select control.file_set_legal_hold(${ready.id}, true)`;
  t.equal(await fail(a.admin`update app.files set status = 'archived' where id = ${ready.id}`), 'SVC09 RETENTION_BLOCKED', 'legal hold');
  await a.admin`select control.file_set_legal_hold(${ready.id}, false)`;
  await a.admin`update app.files set status = 'archived' where id = ${ready.id}`;
  t.equal((await a.admin`select status, archived_at is not null as stamped from app.files where id = ${ready.id}`)[0]!.stamped, true, 'archived, stamped');

  // The organization's policy: with a scan required, an unscanned file is not ready.
  await a.admin`select control.file_policy_set(${u!.organization_id}, null, null, true)`;
  t.equal(await fail(a.admin`update app.files set status = 'ready', scan_status = 'not_scanned' where id = ${processing.id}`), 'SVC09 CONFLICT',
    'require_scan: not without a clean scan');
  t.equal((await a.admin`select app_private.file_scan_record(${u!.organization_id}, ${processing.id}, 'not_scanned', null, false) as s`)[0]!.s, 'rejected');
});
