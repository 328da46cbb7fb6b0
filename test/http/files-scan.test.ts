// Virus scanning with a real clamd (Debian's clamav-daemon) and the EICAR test file: an infected
// upload ends rejected with FILE_SCAN_FAILED on the file, a clean one ends ready.
import t from 'tap';
import postgres from 'postgres';
import { createHash, randomBytes } from 'node:crypto';
import { startApp, assertProblem } from '../helpers/app.ts';
import { startClamd, EICAR, CLAMD_MISSING } from '../helpers/clamd.ts';
import { startWorker } from '../../src/worker/index.ts';
import { scanFile } from '../../src/worker/jobs/file-scan.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

t.test('clamd: EICAR is rejected, a clean file is ready; a scanner that never answers rejects after the last attempt',
  { skip: CLAMD_MISSING }, async (t) => {
  const socket = await startClamd(t);
  const a = await startApp(t, { SVC_CLAMD: socket });
  const worker = await startWorker(a.config, { pollInterval: 50 });
  t.teardown(() => worker.stop());
  const p = await a.principal('manager');
  const project = (await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: { 'idempotency-key': 'p' },
    payload: { code: 'SCAN', name: 'Scan' } })).json.id;
  const upload = async (bytes: Buffer, name: string) => {
    const u = await a.request({ method: 'POST', url: '/v1/files/uploads', token: p.token, headers: { 'idempotency-key': randomBytes(8).toString('hex') },
      payload: { name, content_type: 'text/plain', size_bytes: bytes.length, sha256: sha(bytes), linked_resource: { type: 'project', id: project } } });
    await a.request({ method: 'PUT', url: new URL(u.json.upload_url).pathname, payload: bytes, headers: { 'content-type': 'text/plain' } });
    return (await a.request({ method: 'POST', url: `/v1/files/uploads/${u.json.id}/complete`, token: p.token,
      headers: { 'idempotency-key': randomBytes(8).toString('hex') } })).json.id as string;
  };
  const settled = async (id: string) => {
    for (let i = 0; i < 200; i++) {
      const f = (await a.request({ url: `/v1/files/${id}`, token: p.token })).json;
      if (f.status !== 'processing') return f;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`${id} still processing`);
  };
  const infected = await settled(await upload(EICAR, 'eicar.txt'));
  t.match(infected, { status: 'rejected', scan: { status: 'infected', signature: /Eicar-Test-Signature/ },
    rejection: { code: 'FILE_SCAN_FAILED', detail: /Eicar-Test-Signature/ } });
  assertProblem(t, await a.request({ method: 'POST', url: `/v1/files/${infected.id}/download`, token: p.token }), 409, 'FILE_SCAN_FAILED');
  // Large enough to take several chunks through INSTREAM.
  const clean = await settled(await upload(Buffer.from('nothing to see here\n'.repeat(40000)), 'clean.txt'));
  t.match(clean, { status: 'ready', scan: { status: 'clean', signature: null }, rejection: null });
  const events = await a.admin`select type from app.events where resource_id in (${infected.id}, ${clean.id}) order by type`;
  t.same(events.map((e) => e.type), ['file.ready', 'file.rejected'], 'one event each');

  // A scanner that is not there: the job is retried; its last attempt rejects the file.
  const gone = await startApp(t, { SVC_CLAMD: `${socket}.missing`, SVC_WORKER: 'off' });
  const q = await gone.principal('manager');
  const prj = (await gone.request({ method: 'POST', url: '/v1/projects', token: q.token, headers: { 'idempotency-key': 'p' },
    payload: { code: 'X', name: 'X' } })).json.id;
  const bytes = Buffer.from('scan me later\n');
  const u = await gone.request({ method: 'POST', url: '/v1/files/uploads', token: q.token, headers: { 'idempotency-key': 'u' },
    payload: { name: 'x.txt', content_type: 'text/plain', size_bytes: bytes.length, sha256: sha(bytes), linked_resource: { type: 'project', id: prj } } });
  await gone.request({ method: 'PUT', url: new URL(u.json.upload_url).pathname, payload: bytes, headers: { 'content-type': 'text/plain' } });
  const file = (await gone.request({ method: 'POST', url: `/v1/files/uploads/${u.json.id}/complete`, token: q.token, headers: { 'idempotency-key': 'c' } })).json;
  const sql = postgres(gone.adminUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end());
  await t.rejects(scanFile(sql, gone.config, q.orgId, file.id, { attempts: 1, maxAttempts: 10 }), /clamd/, 'an early attempt fails and is retried');
  t.equal(await scanFile(sql, gone.config, q.orgId, file.id, { attempts: 10, maxAttempts: 10 }), 'rejected');
  t.match((await gone.request({ url: `/v1/files/${file.id}`, token: q.token })).json,
    { status: 'rejected', scan: { status: 'failed' }, rejection: { code: 'FILE_SCAN_FAILED', detail: 'the file could not be scanned' } });
});
