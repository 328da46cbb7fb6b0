// Files over HTTP: upload through the capability URL, verification, downloads with ranges,
// archive and retention, and every Files error code (status, media type, code).
import t, { type Test } from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { startApp, assertProblem, type TestApp } from '../helpers/app.ts';
import { startWorker } from '../../src/worker/index.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
// A GIF's magic number: file-type knows it as image/gif.
const GIF = Buffer.concat([Buffer.from('GIF89a'), randomBytes(200)]);

interface World { a: TestApp; token: string; org: string; project: string; key: () => string }

async function world(t: Test, env: Record<string, string> = {}, roles = 'member,manager,finance,hr'): Promise<World> {
  const a = await startApp(t, { LOG_LEVEL: 'error', ...env });
  const p = await a.principal(roles);
  let n = 0;
  const key = () => `k-${++n}-${randomBytes(4).toString('hex')}`;
  const res = await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: { 'idempotency-key': key() },
    payload: { code: 'P1', name: 'Files' } });
  if (res.statusCode !== 201) throw new Error(res.body);
  return { a, token: p.token, org: p.orgId, project: res.json.id, key };
}

async function startUpload(w: World, bytes: Buffer, over: Record<string, unknown> = {}, token = w.token) {
  return w.a.request({ method: 'POST', url: '/v1/files/uploads', token, headers: { 'idempotency-key': w.key() },
    payload: { name: 'report.txt', content_type: 'text/plain', size_bytes: bytes.length, sha256: sha(bytes),
      linked_resource: { type: 'project', id: w.project }, ...over } });
}

/** The capability URL's path (the tests inject into the server). */
const pathOf = (url: string) => new URL(url).pathname;

async function put(w: World, upload: any, bytes: Buffer, headers: Record<string, string> = {}) {
  return w.a.request({ method: 'PUT', url: pathOf(upload.upload_url), payload: bytes,
    headers: { 'content-type': upload.content_type, ...headers } });
}

const complete = (w: World, id: string) => w.a.request({ method: 'POST', url: `/v1/files/uploads/${id}/complete`, token: w.token,
  headers: { 'idempotency-key': w.key() } });

async function uploaded(w: World, bytes: Buffer, over: Record<string, unknown> = {}) {
  const u = await startUpload(w, bytes, over);
  if (u.statusCode !== 201) throw new Error(u.body);
  const p = await put(w, u.json, bytes);
  if (p.statusCode !== 200) throw new Error(p.body);
  const c = await complete(w, u.json.id);
  if (c.statusCode !== 200) throw new Error(c.body);
  return c.json;
}

async function until(w: World, id: string, status: string) {
  for (let i = 0; i < 200; i++) {
    const r = await w.a.request({ url: `/v1/files/${id}`, token: w.token });
    if (r.json?.status === status) return r.json;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${id} never became ${status}`);
}

t.test('upload, verify, ready, list, download with ranges, archive', async (t) => {
  const w = await world(t);
  const worker = await startWorker(w.a.config, { pollInterval: 50 });
  t.teardown(() => worker.stop());
  const bytes = Buffer.from('hello, files\n'.repeat(30000)); // 390,000 bytes: two chunks of 256 KiB
  const u = await startUpload(w, bytes);
  t.equal(u.statusCode, 201);
  t.match(u.json, { object: 'file_upload', id: /^upl_/, status: 'pending', method: 'PUT', name: 'report.txt',
    headers: { 'Content-Type': 'text/plain', 'Content-Length': String(bytes.length) },
    limits: { max_size_bytes: 104857600, allowed_content_types: Array }, file_id: null });
  // The link names its organization (on Citus, where its statements go), under the signature.
  t.match(u.json.upload_url, new RegExp(`^http://[^/]+/files/upload/upl_[A-Za-z0-9]+\\.${w.org}\\.[0-9a-f]{64}$`));
  t.notOk('upload_token' in u.json);

  const p = await put(w, u.json, bytes);
  t.equal(p.statusCode, 200);
  t.same(p.json, { object: 'file_upload', id: u.json.id, status: 'uploaded', received_size_bytes: bytes.length, received_sha256: sha(bytes) });
  const again = await put(w, u.json, bytes);
  assertProblem(t, again, 409, 'CONFLICT');
  t.match(again.json.detail, /already used/);

  const c = await complete(w, u.json.id);
  t.equal(c.statusCode, 200);
  t.match(c.json, { object: 'file', id: /^fil_/, status: 'processing', size_bytes: bytes.length, sha256: sha(bytes),
    linked_resource: { type: 'project', id: w.project }, scan: { status: 'pending' }, rejection: null });
  const file = await until(w, c.json.id, 'ready');
  t.match(file, { scan: { status: 'not_scanned', signature: null }, retention: { financial_record: false, legal_hold: false } });
  const repeat = await complete(w, u.json.id);
  t.match(repeat.json, { id: file.id, status: 'ready' }, 'completing a completed upload answers its file');

  const list = await w.a.request({ url: `/v1/files?linked_resource_type=project&linked_resource_id=${w.project}`, token: w.token });
  t.same(list.json.data.map((f: any) => f.id), [file.id]);

  const d = await w.a.request({ method: 'POST', url: `/v1/files/${file.id}/download`, token: w.token });
  t.equal(d.statusCode, 201);
  t.match(d.json, { object: 'file_download', file_id: file.id, download_url: /\/files\/download\/fil_/, expires_at: /Z$/ });
  const url = pathOf(d.json.download_url);
  const whole = await w.a.server.inject({ url });
  t.equal(whole.statusCode, 200, whole.payload.slice(0, 300));
  t.ok(whole.rawPayload.equals(bytes), 'the same bytes come back');
  t.equal(whole.headers['content-type'], 'text/plain');
  t.equal(whole.headers['content-disposition'], `attachment; filename="report.txt"; filename*=UTF-8''report.txt`);
  t.equal(whole.headers['x-content-type-options'], 'nosniff');
  t.equal(whole.headers['accept-ranges'], 'bytes');
  t.equal(whole.headers['content-length'], String(bytes.length));
  t.equal(whole.headers['cache-control'], 'private, no-store');
  const gz = await w.a.server.inject({ url, headers: { 'accept-encoding': 'gzip' } });
  t.notOk(gz.headers['content-encoding'], 'sent as stored, never compressed');
  t.ok(gz.rawPayload.equals(bytes));

  // Resumable: a range across the chunk boundary, an open-ended one, a suffix, one out of bounds.
  const mid = await w.a.server.inject({ url, headers: { range: 'bytes=262000-262999' } });
  t.equal(mid.statusCode, 206);
  t.equal(mid.headers['content-range'], `bytes 262000-262999/${bytes.length}`);
  t.ok(mid.rawPayload.equals(bytes.subarray(262000, 263000)), 'a range across chunks');
  const tail = await w.a.server.inject({ url, headers: { range: 'bytes=389990-' } });
  t.ok(tail.rawPayload.equals(bytes.subarray(389990)));
  const suffix = await w.a.server.inject({ url, headers: { range: 'bytes=-5' } });
  t.ok(suffix.rawPayload.equals(bytes.subarray(bytes.length - 5)));
  const past = await w.a.request({ url, headers: { range: `bytes=${bytes.length}-` } });
  assertProblem(t, past, 416, 'RANGE_NOT_SATISFIABLE');
  t.equal(past.headers['content-range'], `bytes */${bytes.length}`);
  const stale = await w.a.server.inject({ url, headers: { range: 'bytes=0-9', 'if-range': '"other"' } });
  t.equal(stale.statusCode, 200, 'If-Range with another ETag: the whole file');

  const tampered = await w.a.request({ url: url.replace(/.$/, (c) => (c === '0' ? '1' : '0')) });
  assertProblem(t, tampered, 404, 'RESOURCE_NOT_FOUND');
  // Another organization named in the link: the signature no longer holds.
  const other = await w.a.createOrg();
  assertProblem(t, await w.a.request({ url: url.replace(`.${w.org}.`, `.${other}.`) }), 404, 'RESOURCE_NOT_FOUND');
  // A link of the shape made before links named their organization, its signature good: not found.
  {
    const [id, , client, expires] = url.split('/').pop()!.split('.');
    const message = `${id}.${client}.${expires}`;
    const [{ mac }] = await w.a.admin`select app_private.capability_mac('download', ${message}) as mac` as any;
    assertProblem(t, await w.a.request({ url: `/files/download/${message}.${mac}` }), 404, 'RESOURCE_NOT_FOUND');
  }

  const arch = await w.a.request({ method: 'POST', url: `/v1/files/${file.id}/archive`, token: w.token, headers: { 'idempotency-key': w.key() } });
  t.match(arch.json, { status: 'archived', archived_at: /Z$/ });
  // A file has no row version (api.files.version is null): no ETag, rather than "null".
  t.equal(arch.headers.etag, undefined, 'archiveFile sends no ETag');
  t.equal((await w.a.request({ url: `/v1/files/${file.id}`, token: w.token })).headers.etag, undefined, 'getFile sends no ETag');
  const twice = await w.a.request({ method: 'POST', url: `/v1/files/${file.id}/archive`, token: w.token, headers: { 'idempotency-key': w.key() } });
  t.equal(twice.statusCode, 200, 'archiving an archived file answers it');
  t.same((await w.a.request({ url: '/v1/files', token: w.token })).json.data, [], 'archived files are left out by default');
  t.equal((await w.a.request({ url: '/v1/files?status=archived', token: w.token })).json.data.length, 1);
  const gone = await w.a.server.inject({ url });
  t.equal(gone.statusCode, 404, 'an archived file is no longer downloadable');
  assertProblem(t, await w.a.request({ method: 'POST', url: `/v1/files/${file.id}/download`, token: w.token }), 409, 'CONFLICT');
});

t.test('an idempotent replay shows the same upload URL; the stored response holds none', async (t) => {
  const w = await world(t);
  const bytes = Buffer.from('replay me');
  const headers = { 'idempotency-key': 'same-key' };
  const payload = { name: 'r.txt', content_type: 'text/plain', size_bytes: bytes.length, sha256: sha(bytes), linked_resource: { type: 'project', id: w.project } };
  const first = await w.a.request({ method: 'POST', url: '/v1/files/uploads', token: w.token, headers, payload });
  const second = await w.a.request({ method: 'POST', url: '/v1/files/uploads', token: w.token, headers, payload });
  t.equal(second.headers['idempotent-replayed'], 'true');
  t.same(second.json, first.json);
  const token = first.json.upload_url.split('/').pop();
  const stored = await w.a.admin`select response_body from app.idempotency_keys where key = 'same-key'`;
  t.notOk(stored[0]!.response_body.includes(token.split('.').pop()), 'no capability at rest');
});

t.test('Files error codes', async (t) => {
  const w = await world(t);
  const bytes = Buffer.from('some text\n');

  // LINKED_RESOURCE_NOT_FOUND: unknown, foreign, or a type that takes no files.
  assertProblem(t, await startUpload(w, bytes, { linked_resource: { type: 'project', id: 'prj_nope' } }), 404, 'LINKED_RESOURCE_NOT_FOUND');
  const other = await world(t);
  assertProblem(t, await startUpload(w, bytes, { linked_resource: { type: 'project', id: other.project } }), 404, 'LINKED_RESOURCE_NOT_FOUND');
  assertProblem(t, await startUpload(w, bytes, { linked_resource: { type: 'member', id: 'x' } }), 404, 'LINKED_RESOURCE_NOT_FOUND');

  // FILE_ACCESS_DENIED: a member reads projects but does not write them.
  const member = await w.a.createClient(w.org, { roles: 'member' });
  const memberToken = await w.a.token(member);
  assertProblem(t, await startUpload(w, bytes, {}, memberToken), 403, 'FILE_ACCESS_DENIED');

  // CONTENT_TYPE_NOT_ALLOWED: not permitted; the PUT's Content-Type differs; the bytes are another type.
  assertProblem(t, await startUpload(w, bytes, { content_type: 'application/x-msdownload' }), 422, 'CONTENT_TYPE_NOT_ALLOWED');
  const u1 = (await startUpload(w, bytes)).json;
  assertProblem(t, await put(w, u1, bytes, { 'content-type': 'application/pdf' }), 422, 'CONTENT_TYPE_NOT_ALLOWED');
  const pdfDeclared = (await startUpload(w, GIF, { name: 'x.pdf', content_type: 'application/pdf' })).json;
  t.equal((await put(w, pdfDeclared, GIF)).statusCode, 200);
  const lie = await complete(w, pdfDeclared.id);
  assertProblem(t, lie, 422, 'CONTENT_TYPE_NOT_ALLOWED');
  t.match(lie.json.detail, /image\/gif/);
  const binary = Buffer.from([0, 1, 2, 3, 4, 5]);
  const textDeclared = (await startUpload(w, binary)).json;
  await put(w, textDeclared, binary);
  assertProblem(t, await complete(w, textDeclared.id), 422, 'CONTENT_TYPE_NOT_ALLOWED');

  // CHECKSUM_MISMATCH: the declared checksum is not the bytes'; fewer bytes than declared.
  const wrongSum = (await startUpload(w, bytes, { sha256: 'a'.repeat(64) })).json;
  await put(w, wrongSum, bytes);
  assertProblem(t, await complete(w, wrongSum.id), 422, 'CHECKSUM_MISMATCH');
  const short = (await startUpload(w, Buffer.from('0123456789abcdef'))).json;
  t.equal((await w.a.request({ method: 'PUT', url: pathOf(short.upload_url), payload: Buffer.from('0123'),
    headers: { 'content-type': 'text/plain' } })).statusCode, 200);
  assertProblem(t, await complete(w, short.id), 422, 'CHECKSUM_MISMATCH');
  t.same(await w.a.admin`select id from app.files where upload_id in (${wrongSum.id}, ${short.id}, ${pdfDeclared.id})`, [], 'no file from a failed upload');

  // FILE_TOO_LARGE: over the organization's limit, or more bytes than declared (the PUT stops reading).
  await w.a.cli('org', 'set-file-policy', '--org', w.org, '--max-size-bytes', '1000');
  const big = await startUpload(w, Buffer.alloc(1001, 'a'));
  assertProblem(t, big, 413, 'FILE_TOO_LARGE');
  t.equal(big.json.errors[0].pointer, '/size_bytes');
  const small = (await startUpload(w, bytes)).json;
  t.same(small.limits, { max_size_bytes: 1000, allowed_content_types: small.limits.allowed_content_types });
  assertProblem(t, await put(w, small, Buffer.concat([bytes, bytes])), 413, 'FILE_TOO_LARGE');
  t.equal((await w.a.admin`select count(*)::int as n from app.file_chunks where upload_id = ${small.id}`)[0]!.n, 0, 'nothing kept of it');
  t.equal((await put(w, small, bytes)).statusCode, 200, 'the URL still takes the right bytes');

  // Nothing uploaded yet: 409; an unknown upload: FILE_NOT_FOUND; another client's upload: FILE_NOT_FOUND.
  const empty = (await startUpload(w, bytes)).json;
  assertProblem(t, await complete(w, empty.id), 409, 'CONFLICT');
  assertProblem(t, await complete(w, 'upl_unknown'), 404, 'FILE_NOT_FOUND');
  const otherClient = await w.a.createClient(w.org, { roles: 'manager' });
  assertProblem(t, await w.a.request({ method: 'POST', url: `/v1/files/uploads/${empty.id}/complete`, token: await w.a.token(otherClient),
    headers: { 'idempotency-key': w.key() } }), 404, 'FILE_NOT_FOUND');

  // FILE_NOT_FOUND for unknown files and files of other organizations.
  assertProblem(t, await w.a.request({ url: '/v1/files/fil_unknown', token: w.token }), 404, 'FILE_NOT_FOUND');
  assertProblem(t, await w.a.request({ method: 'POST', url: '/v1/files/fil_unknown/download', token: w.token }), 404, 'FILE_NOT_FOUND');
  assertProblem(t, await w.a.request({ method: 'POST', url: '/v1/files/fil_unknown/archive', token: w.token, headers: { 'idempotency-key': w.key() } }), 404, 'FILE_NOT_FOUND');
});

t.test('access follows the linked resource: 404 where it is invisible, 403 where its files are not yours', async (t) => {
  const w = await world(t);
  const worker = await startWorker(w.a.config, { pollInterval: 50 });
  t.teardown(() => worker.stop());
  const file = await until(w, (await uploaded(w, Buffer.from('project notes\n'))).id, 'ready');
  const as = async (roles: string) => w.a.token(await w.a.createClient(w.org, { roles }));
  const finance = await as('finance');
  const memberClient = await w.a.createClient(w.org, { roles: 'member' });
  const member = await w.a.token(memberClient);
  const hr = await as('hr');
  const read = await w.a.request({ url: `/v1/files/${file.id}`, token: finance });
  assertProblem(t, read, 403, 'FILE_ACCESS_DENIED');
  t.equal(read.json.detail, 'the files of this project are for the Roles member, manager', 'a read names the readers');
  assertProblem(t, await w.a.request({ method: 'POST', url: `/v1/files/${file.id}/download`, token: hr }), 403, 'FILE_ACCESS_DENIED');
  // The row is hidden from finance by the files policy; a write still names the writers.
  const archive = await w.a.request({ method: 'POST', url: `/v1/files/${file.id}/archive`, token: finance, headers: { 'idempotency-key': w.key() } });
  assertProblem(t, archive, 403, 'FILE_ACCESS_DENIED');
  t.equal(archive.json.detail, 'the files of this project are for the Roles manager', 'an archive names the writers');
  t.same((await w.a.request({ url: '/v1/files', token: finance })).json.data, [], 'finance lists no project files');
  t.equal((await w.a.request({ url: `/v1/files/${file.id}`, token: member })).statusCode, 200, 'a member reads them');
  t.equal((await w.a.request({ method: 'POST', url: `/v1/files/${file.id}/download`, token: member })).statusCode, 201);
  assertProblem(t, await w.a.request({ method: 'POST', url: `/v1/files/${file.id}/archive`, token: member, headers: { 'idempotency-key': w.key() } }),
    403, 'FILE_ACCESS_DENIED');

  // A download URL follows its client: a Role taken away stops it.
  const d = await w.a.request({ method: 'POST', url: `/v1/files/${file.id}/download`, token: member });
  const r = await w.a.server.inject({ url: pathOf(d.json.download_url) });
  t.equal(r.statusCode, 200);
  await w.a.cli('client', 'disable', '--client', memberClient.id);
  assertProblem(t, await w.a.request({ url: pathOf(d.json.download_url) }), 403, 'FORBIDDEN');

  // Invoice files are for manager and finance: to a member the invoice, and so the file, is invisible.
  const cus = (await w.a.cli('customer', 'create', '--org', w.org, '--kind', 'billing', '--name', 'C', '--currency', 'EUR')).customer_id;
  const inv = await w.a.request({ method: 'POST', url: '/v1/invoices', token: w.token, headers: { 'idempotency-key': w.key() },
    payload: { customer_id: cus, currency: 'EUR', lines: [{ description: 'x', quantity: '1', unit_price: '10.00' }] } });
  const invFile = await uploaded(w, Buffer.from('purchase order 42\n'), { name: 'po.txt', linked_resource: { type: 'invoice', id: inv.json.id } });
  assertProblem(t, await w.a.request({ url: `/v1/files/${invFile.id}`, token: await as('member') }), 404, 'FILE_NOT_FOUND');
  t.equal((await w.a.request({ url: `/v1/files/${invFile.id}`, token: finance })).statusCode, 200);
});

t.test('RETENTION_BLOCKED: invoice PDFs, legal holds, files of posted invoices', async (t) => {
  const w = await world(t);
  const worker = await startWorker(w.a.config, { pollInterval: 50 });
  t.teardown(() => worker.stop());
  const archive = (id: string) => w.a.request({ method: 'POST', url: `/v1/files/${id}/archive`, token: w.token, headers: { 'idempotency-key': w.key() } });

  const held = await until(w, (await uploaded(w, Buffer.from('evidence\n'))).id, 'ready');
  await w.a.cli('file', 'hold', '--file', held.id);
  t.match((await w.a.request({ url: `/v1/files/${held.id}`, token: w.token })).json.retention, { legal_hold: true });
  assertProblem(t, await archive(held.id), 409, 'RETENTION_BLOCKED');
  await w.a.cli('file', 'release', '--file', held.id);
  t.equal((await archive(held.id)).statusCode, 200, 'released: it archives');

  const cus = (await w.a.cli('customer', 'create', '--org', w.org, '--kind', 'billing', '--name', 'C', '--currency', 'EUR',
    '--email', 'ap@customer.example')).customer_id;
  const inv = await w.a.request({ method: 'POST', url: '/v1/invoices', token: w.token, headers: { 'idempotency-key': w.key() },
    payload: { customer_id: cus, currency: 'EUR', lines: [{ description: 'x', quantity: '1', unit_price: '10.00' }] } });
  const attached = await until(w, (await uploaded(w, Buffer.from('timesheet\n'), { linked_resource: { type: 'invoice', id: inv.json.id } })).id, 'ready');
  const sent = await w.a.request({ method: 'POST', url: `/v1/invoices/${inv.json.id}/send`, token: w.token,
    headers: { 'idempotency-key': w.key() }, payload: { delivery: { email: false } } });
  t.equal(sent.statusCode, 200, sent.body);
  const pdf = await w.a.request({ url: `/v1/files/${sent.json.pdf_file_id}`, token: w.token });
  t.match(pdf.json, { status: 'ready', content_type: 'application/pdf', linked_resource: { type: 'invoice', id: inv.json.id },
    retention: { financial_record: true }, scan: { status: 'not_scanned' } });
  assertProblem(t, await archive(sent.json.pdf_file_id), 409, 'RETENTION_BLOCKED');
  assertProblem(t, await archive(attached.id), 409, 'RETENTION_BLOCKED');
  const d = await w.a.request({ method: 'POST', url: `/v1/files/${sent.json.pdf_file_id}/download`, token: w.token });
  const body = await w.a.server.inject({ url: pathOf(d.json.download_url) });
  t.equal(body.statusCode, 200);
  t.equal(body.rawPayload.subarray(0, 5).toString(), '%PDF-', 'the invoice PDF downloads');
  t.equal(sha(body.rawPayload), pdf.json.sha256);
});

t.test('UPLOAD_EXPIRED and DOWNLOAD_URL_EXPIRED', async (t) => {
  // An upload lives 4 s: the one completed here takes three requests, which a loaded 2-core
  // machine's cluster did not finish within 1 s (its UPLOAD_EXPIRED failed the test).
  const w = await world(t, { SVC_FILE_UPLOAD_SECONDS: '4', SVC_FILE_DOWNLOAD_SECONDS: '1' });
  const worker = await startWorker(w.a.config, { pollInterval: 50 });
  t.teardown(() => worker.stop());
  const bytes = Buffer.from('short-lived\n');
  const late = (await startUpload(w, bytes)).json;
  const done = await uploaded(w, bytes);
  const file = await until(w, done.id, 'ready');
  const d = (await w.a.request({ method: 'POST', url: `/v1/files/${file.id}/download`, token: w.token })).json;
  // Past both expiries, by the server's own clock (this process's).
  const past = Math.max(Date.parse(late.expires_at), Date.parse(d.expires_at)) + 100;
  await new Promise((r) => setTimeout(r, Math.max(0, past - Date.now())));
  assertProblem(t, await put(w, late, bytes), 410, 'UPLOAD_EXPIRED');
  assertProblem(t, await complete(w, late.id), 410, 'UPLOAD_EXPIRED');
  assertProblem(t, await w.a.request({ url: pathOf(d.download_url) }), 410, 'DOWNLOAD_URL_EXPIRED');
  // The purge takes uploads a minute past their expiry, with their bytes; completed ones stay.
  t.equal((await w.a.admin`select control.purge_expired_uploads() as n`)[0]!.n, 0, 'a PUT may still be finishing');
  // Past its expiry, as its trigger would not let it be made (triggers off for this transaction,
  // on Citus on the workers too).
  await w.a.admin.begin(async (tx) => {
    await tx`set local citus.propagate_set_commands = 'local'`;
    await tx`set local session_replication_role = replica`;
    await tx`update app.file_uploads set expires_at = now() - interval '2 minutes'`;
  });
  t.equal((await w.a.admin`select control.purge_expired_uploads() as n`)[0]!.n, 1, 'the abandoned upload goes');
  t.same((await w.a.admin`select id from app.file_uploads`).map((r) => r.id), [done.id ? (await w.a.admin`select upload_id from app.files where id = ${done.id}`)[0]!.upload_id : ''],
    'the completed one stays');
});

t.test('FILE_SCAN_FAILED when a scan is required and no scanner is configured', async (t) => {
  const w = await world(t, { SVC_FILE_REQUIRE_SCAN: 'on' });
  const worker = await startWorker(w.a.config, { pollInterval: 50 });
  t.teardown(() => worker.stop());
  const file = await until(w, (await uploaded(w, Buffer.from('unscanned\n'))).id, 'rejected');
  t.match(file, { rejection: { code: 'FILE_SCAN_FAILED', detail: /no scanner/ }, scan: { status: 'not_scanned' } });
  assertProblem(t, await w.a.request({ method: 'POST', url: `/v1/files/${file.id}/download`, token: w.token }), 409, 'FILE_SCAN_FAILED');
  assertProblem(t, await w.a.request({ method: 'POST', url: `/v1/files/${file.id}/archive`, token: w.token, headers: { 'idempotency-key': w.key() } }), 409, 'CONFLICT');
  t.equal((await w.a.admin`select count(*)::int as n from app.file_chunks c join app.files f on f.organization_id = c.organization_id and f.upload_id = c.upload_id where f.id = ${file.id}`)[0]!.n, 0,
    'the bytes of a rejected file are not kept');
});

t.test('capability URLs never reach a log line or an error body', async (t) => {
  const lines: string[] = [];
  const a = await startApp(t, { LOG_LEVEL: 'info' }, undefined, { logDestination: { write: (s: string) => { lines.push(s); } } });
  const worker = await startWorker(a.config, { pollInterval: 50 });
  t.teardown(() => worker.stop());
  const p = await a.principal('manager');
  const project = (await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: { 'idempotency-key': 'p' },
    payload: { code: 'LOG', name: 'Log' } })).json.id;
  const bytes = Buffer.from('log me not\n');
  const u = (await a.request({ method: 'POST', url: '/v1/files/uploads', token: p.token, headers: { 'idempotency-key': 'u' },
    payload: { name: 'l.txt', content_type: 'text/plain', size_bytes: bytes.length, sha256: sha(bytes), linked_resource: { type: 'project', id: project } } })).json;
  const up = new URL(u.upload_url).pathname;
  await a.request({ method: 'PUT', url: up, payload: bytes, headers: { 'content-type': 'text/plain' } });
  const again = await a.request({ method: 'PUT', url: up, payload: bytes, headers: { 'content-type': 'text/plain' } });
  const f = (await a.request({ method: 'POST', url: `/v1/files/uploads/${u.id}/complete`, token: p.token, headers: { 'idempotency-key': 'c' } })).json;
  for (let i = 0; i < 100 && (await a.request({ url: `/v1/files/${f.id}`, token: p.token })).json.status !== 'ready'; i++) await new Promise((r) => setTimeout(r, 50));
  const d = (await a.request({ method: 'POST', url: `/v1/files/${f.id}/download`, token: p.token })).json;
  const down = new URL(d.download_url).pathname;
  await a.request({ url: down, headers: { range: 'bytes=0-3' } });
  const wrongMethod = await a.request({ method: 'POST', url: down });
  const secrets = [up.split('/').pop()!.split('.').pop()!, down.split('/').pop()!.split('.').pop()!];
  const logged = lines.join('');
  t.ok(logged.includes('/files/upload/{token}') && logged.includes('/files/download/{token}'), 'the route templates are logged');
  for (const s of secrets) {
    t.notOk(logged.includes(s), 'no log line holds a capability');
    t.notOk(again.body.includes(s) || wrongMethod.body.includes(s), `no error body holds one: ${again.body} ${wrongMethod.body}`);
  }
  assertProblem(t, wrongMethod, 405, 'METHOD_NOT_ALLOWED');
});
