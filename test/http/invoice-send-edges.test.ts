// sendInvoice at the edges: no SMTP server (development mailbox, production 503), slow servers and
// the one deadline, deleted customers; invoice.voided.
import t from 'tap';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { assertProblem } from '../helpers/app.ts';
import { sleep } from '../helpers/receiver.ts';
import { idem, world } from '../helpers/invoices.ts';

t.test('without an SMTP server: a development mailbox folder; in production, 503 and nothing changes', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-mail-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const dev = await world(t, { SVC_SMTP_URL: '', SVC_DEV_MAIL_DIR: dir });
  const inv = await dev.draft();
  const res = await dev.send(inv.id, { message: 'Local test' });
  t.equal(res.statusCode, 200, res.body);
  const files = readdirSync(dir);
  t.equal(files.length, 1, 'one .eml written');
  const mail = await simpleParser(readFileSync(join(dir, files[0]!)));
  t.match(mail.subject, /INV-000001/);
  t.equal(mail.attachments[0]?.filename, 'INV-000001.pdf');

  const prod = await world(t, { SVC_SMTP_URL: '', NODE_ENV: 'production', SVC_SECRET_KEY: 'a-production-secret-for-this-test-only',
    SVC_RUNTIME_DB_PASSWORD: 'svc_runtime', SVC_WORKER_DB_PASSWORD: 'svc_worker' });
  const draft = await prod.draft();
  const refused = await prod.send(draft.id);
  assertProblem(t, refused, 503, 'EMAIL_DELIVERY_UNAVAILABLE');
  t.match(refused.json.detail, /not configured/);
  t.match(await prod.get(draft.id), { status: 'draft', number: null });
  t.equal((await prod.send(draft.id, { delivery: { email: false } })).statusCode, 200, 'issuing without email still works');
});

t.test('a slow mail server: the SMTP deadline ends the wait with 503, nothing changes', async (t) => {
  const { smtp, draft, send, get } = await world(t, { SVC_SMTP_TIMEOUT_MS: '500' });
  smtp.delayMs = 1500;
  const inv = await draft();
  // The server would accept after 1.5 s: a 503 (not a 200) shows the deadline ended the wait.
  const res = await send(inv.id);
  assertProblem(t, res, 503, 'EMAIL_DELIVERY_UNAVAILABLE');
  t.match(await get(inv.id), { status: 'draft', number: null });
});

t.test('a server slow at every step: one deadline for the whole handover', async (t) => {
  const { smtp, draft, send, get } = await world(t, { SVC_SMTP_TIMEOUT_MS: '800' });
  smtp.stepDelayMs = 500; // each step within the deadline, the whole not
  const inv = await draft();
  const res = await send(inv.id);
  assertProblem(t, res, 503, 'EMAIL_DELIVERY_UNAVAILABLE');
  t.match(res.json.detail, /no answer within the deadline|ETIMEDOUT/);
  t.match(await get(inv.id), { status: 'draft', number: null });
  await sleep(1000);
  t.equal(smtp.received.length, 0, 'the aborted connection delivered nothing later');
});

t.test('a deleted customer blocks sending; voiding announces invoice.voided', async (t) => {
  const { a, p, customer, draft, send, events } = await world(t);
  const gone = await customer('gone@example.com', 'Gone Ltd');
  const inv = await draft({ customer_id: gone });
  await a.cli('customer', 'delete', '--org', p.orgId, '--customer', gone);
  const res = await send(inv.id);
  assertProblem(t, res, 409, 'WORKFLOW_BLOCKED');
  t.match(res.json.detail, /was deleted/);
  const ok = await draft();
  await send(ok.id, { delivery: { email: false } });
  const v = await a.request({ method: 'POST', url: `/v1/invoices/${ok.id}/void`, token: p.token, headers: idem() });
  t.equal(v.statusCode, 200, v.body);
  t.same(await events(ok.id), ['invoice.created', 'invoice.sent', 'invoice.voided']);
});
