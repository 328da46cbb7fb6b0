// sendInvoice against a real SMTP server on loopback: gapless numbering, a PDF that parses, the
// refused-email path (nothing changes, no number used), delivery details and workflow.
// (Edges: invoice-send-edges.test.ts; the accounting connection and sync: invoice-accounting.test.ts.)
import t from 'tap';
import { createHash } from 'node:crypto';
import { PDFParse } from 'pdf-parse';
import { assertProblem } from '../helpers/app.ts';
import { idem, world } from '../helpers/invoices.ts';

async function pdfText(data: Buffer): Promise<{ text: string; pages: number }> {
  const parser = new PDFParse({ data: new Uint8Array(data) });
  try {
    const r = await parser.getText();
    return { text: r.text, pages: r.total };
  } finally {
    await parser.destroy();
  }
}

t.test('a successful send: numbered, dated, a stored PDF that parses, the email with it, invoice.sent', async (t) => {
  const { a, smtp, draft, send, events } = await world(t);
  const inv = await draft({ memo: 'Thank you for your business.' });
  const res = await send(inv.id, { delivery: { email: true }, message: 'Hello Acme, here is November.' });
  t.equal(res.statusCode, 200, res.body);
  t.match(res.json, { id: inv.id, status: 'sent', number: 'INV-000001', total: '247.15', amount_due: '247.15',
    pdf_file_id: /^fil_/, sent_at: /Z$/, accounting_sync: null, version: 2 });
  t.equal(res.headers.etag, '"2"');
  const [today] = await a.admin`select (now() at time zone 'Europe/Berlin')::date::text as d`;
  t.equal(res.json.issue_date, today!.d, 'issue date: today in the organization\'s time zone');
  const [due] = await a.admin`select ((now() at time zone 'Europe/Berlin')::date + 30)::text as d`;
  t.equal(res.json.due_date, due!.d, 'due date: the organization\'s payment terms (30 days)');

  t.equal(smtp.received.length, 1, 'one email handed over');
  const mail = smtp.received[0]!;
  t.equal(mail.to && !Array.isArray(mail.to) ? mail.to.text : '', 'billing@acme.example');
  t.match(mail.subject, /Invoice INV-000001 from /);
  t.match(mail.text, /Hello Acme, here is November\./);
  t.match(mail.text, /Amount due: 247\.15 EUR/);
  t.equal(mail.attachments.length, 1);
  const att = mail.attachments[0]!;
  t.equal(att.contentType, 'application/pdf');
  t.equal(att.filename, 'INV-000001.pdf');
  const { text, pages } = await pdfText(att.content);
  t.equal(pages, 1);
  for (const s of ['INV-000001', 'Acme GmbH', 'billing@acme.example', 'Consulting, November', '150.08', '28.52', '247.15 EUR', 'Thank you'])
    t.match(text, s, `the PDF shows ${s}`);

  const [file] = await a.admin`select f.*, c.content from app.files f join app.file_contents c on c.organization_id = f.organization_id and c.file_id = f.id where f.id = ${res.json.pdf_file_id}`;
  t.match(file, { linked_resource_type: 'invoice', linked_resource_id: inv.id, content_type: 'application/pdf', status: 'ready',
    retention: 'financial_record', name: 'INV-000001.pdf' });
  t.ok(Buffer.compare(file!.content, att.content) === 0, 'the stored file is the PDF that was emailed');
  t.equal(file!.sha256, createHash('sha256').update(att.content).digest('hex'));
  t.equal(Number(file!.size_bytes), att.content.length);

  t.same(await events(inv.id), ['invoice.created', 'invoice.sent'], 'one event per command, invoice.sent after the send');

  const second = await draft();
  t.equal((await send(second.id)).json.number, 'INV-000002', 'the next number');
});

t.test('a refused email changes nothing: still a draft, no number used, no PDF, no event; the same key can retry', async (t) => {
  const { a, smtp, draft, send, get, events } = await world(t);
  const inv = await draft();
  smtp.refuseRecipient = () => ({ code: 550, message: '5.1.1 mailbox unavailable' });
  const key = idem();
  const refused = await send(inv.id, { message: 'hi' }, key);
  assertProblem(t, refused, 422, 'EMAIL_DELIVERY_REFUSED');
  t.match(refused.json.detail, /SMTP 550/);
  t.match(refused.json.detail, /stays a draft/);
  t.match(await get(inv.id), { status: 'draft', number: null, pdf_file_id: null, version: 1 });
  t.same(await a.admin`select id from app.files`, [], 'no file kept');
  t.same(await events(inv.id), ['invoice.created']);

  smtp.refuseRecipient = null;
  smtp.refuseMessage = { code: 554, message: '5.7.1 message rejected as spam' };
  assertProblem(t, await send(inv.id, { message: 'hi' }, key), 422, 'EMAIL_DELIVERY_REFUSED');
  t.match(await get(inv.id), { status: 'draft', number: null });

  smtp.refuseMessage = { code: 451, message: '4.3.0 try again later' };
  const transient = await send(inv.id, { message: 'hi' }, key);
  assertProblem(t, transient, 503, 'EMAIL_DELIVERY_UNAVAILABLE');
  t.equal(transient.headers['retry-after'], '60');

  smtp.refuseMessage = null;
  const ok = await send(inv.id, { message: 'hi' }, key);
  t.equal(ok.statusCode, 200, 'the failed attempts did not use up the Idempotency-Key');
  t.equal(ok.json.number, 'INV-000001', 'refusals used no number');
  const replay = await send(inv.id, { message: 'hi' }, key);
  t.equal(replay.headers['idempotent-replayed'], 'true');
  t.equal(smtp.received.length, 1, 'a replay sends nothing');
});

t.test('an unreachable mail server: 503, nothing changes', async (t) => {
  const { draft, send, get } = await world(t, { SVC_SMTP_URL: 'smtp://127.0.0.1:9' });
  const inv = await draft();
  const res = await send(inv.id);
  assertProblem(t, res, 503, 'EMAIL_DELIVERY_UNAVAILABLE');
  t.notMatch(res.json.detail, /127\.0\.0\.1/, 'the provider\'s address is not disclosed');
  t.match(await get(inv.id), { status: 'draft', number: null });
});

t.test('delivery details: no email address is CUSTOMER_DELIVERY_DETAILS_MISSING unless delivery.email is false', async (t) => {
  const { smtp, customer, draft, send, get } = await world(t);
  const noEmail = await customer(null, 'Walk-in Ltd');
  const inv = await draft({ customer_id: noEmail });
  const res = await send(inv.id, { delivery: { email: true } });
  assertProblem(t, res, 422, 'CUSTOMER_DELIVERY_DETAILS_MISSING');
  t.match(res.json.detail, new RegExp(noEmail));
  t.match(await get(inv.id), { status: 'draft', number: null });
  const noSend = await send(inv.id, { delivery: { email: false } });
  t.equal(noSend.statusCode, 200, noSend.body);
  t.match(noSend.json, { status: 'sent', number: 'INV-000001', pdf_file_id: /^fil_/ });
  t.equal(smtp.received.length, 0, 'nothing emailed');
  assertProblem(t, await send(inv.id, { delivery: { email: 'yes' } }), 422, 'VALIDATION_FAILED');
  assertProblem(t, await send(inv.id, { message: 'x'.repeat(2001) }), 422, 'VALIDATION_FAILED');
});

t.test('workflow: only a draft with something to bill, dates in order', async (t) => {
  const { a, p, draft, send } = await world(t);
  const empty = await draft({ lines: [] });
  assertProblem(t, await send(empty.id), 409, 'WORKFLOW_BLOCKED');
  const zero = await draft({ lines: [{ description: 'a', quantity: '1', unit_price: '10.00' }, { description: 'b', quantity: '1', unit_price: '-10.00' }] });
  assertProblem(t, await send(zero.id), 409, 'WORKFLOW_BLOCKED');
  const late = await draft({ due_date: '2020-01-31' });
  const lateRes = await send(late.id);
  assertProblem(t, lateRes, 409, 'WORKFLOW_BLOCKED');
  t.match(lateRes.json.detail, /due date 2020-01-31 is before the issue date/);
  const inv = await draft({ issue_date: '2026-11-01' });
  const sent = await send(inv.id);
  t.match(sent.json, { number: 'INV-000001', issue_date: '2026-11-01', due_date: '2026-12-01' });
  const again = await send(inv.id);
  assertProblem(t, again, 409, 'WORKFLOW_BLOCKED');
  t.match(again.json.detail, /already sent \(INV-000001\)/);
  assertProblem(t, await send('inv_doesnotexist'), 404, 'INVOICE_NOT_FOUND');
  const other = await a.principal('manager,finance');
  assertProblem(t, await send(inv.id, undefined, idem(), other.token), 404, 'INVOICE_NOT_FOUND');
  for (const roles of ['member', 'hr', 'member,hr']) {
    const c = await a.principal(roles, { org: p.orgId });
    assertProblem(t, await send(inv.id, undefined, idem(), c.token), 403, 'ROLE_REQUIRED');
  }
  assertProblem(t, await a.request({ method: 'POST', url: `/v1/invoices/${inv.id}/send`, token: p.token }), 400, 'IDEMPOTENCY_KEY_REQUIRED');
  // Prefix and terms are the organization's.
  await a.cli('org', 'set-policy', '--org', p.orgId, '--invoice-number-prefix', '2026-', '--invoice-payment-terms-days', '14');
  const next = await send((await draft({ issue_date: '2026-11-10' })).id);
  t.match(next.json, { number: '2026-000002', due_date: '2026-11-24' }, 'the counter is per organization, whatever the prefix');
});

t.test('numbers stay gapless when sends race and some are refused', async (t) => {
  const { a, smtp, customer, draft, send } = await world(t);
  const bad = await customer('refuse@bounce.example', 'Bouncer');
  smtp.refuseRecipient = (address) => (address.startsWith('refuse@') ? { code: 550, message: 'no such user' } : null);
  smtp.delayMs = 20;
  const good = await Promise.all(Array.from({ length: 8 }, () => draft()));
  const refused = await Promise.all(Array.from({ length: 4 }, () => draft({ customer_id: bad })));
  const results = await Promise.all([...good, ...refused].map((i) => send(i.id)));
  // Under load a send may wait longer than 5 s for the counter and get 409 (retry later): it used no number either.
  t.ok(results.slice(8).every((r) => r.statusCode === 422 || r.statusCode === 409), 'refused recipients are never sent');
  t.ok(results.every((r) => [200, 409, 422].includes(r.statusCode)), 'no other outcome');
  const sent = results.filter((r) => r.statusCode === 200).length;
  t.ok(sent >= 1);
  const numbers = (await a.admin`select number from app.invoices where number is not null order by number`).map((r) => r.number);
  t.same(numbers, Array.from({ length: sent }, (_, i) => `INV-${String(i + 1).padStart(6, '0')}`), 'INV-000001 onwards, one per sent invoice, no gap');
  t.equal(smtp.received.length, sent);
});
