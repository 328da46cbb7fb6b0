// Sink: outgoing email: ticket replies and invoice emails carry client text in the
// subject, the sender's name, the body and attachment names, and go to an address the API stored.
// A line break in a subject or name becomes a space (never a header of its own), the recipient is
// exactly one address (never a list, a group or a second envelope recipient), the body goes as
// text (SMTP dot-stuffing is the transport's), attachment names carry no path.
import t from 'tap';
import { createMailer, message } from '../../src/invoices/mailer.ts';
import { loadConfig } from '../../src/config.ts';
import { startSmtp } from '../helpers/smtp.ts';

const HOSTILE_SUBJECT = '[T-1] hello\r\nBcc: evil@attacker.example\r\n\r\nforged body';

t.test('headers and the envelope', async (t) => {
  const smtp = await startSmtp(t);
  const config = loadConfig({ ...process.env, DATABASE_URL: 'postgres://x@127.0.0.1/x', SVC_SMTP_URL: smtp.url }).mail;
  const mailer = createMailer(config);
  await mailer.send({ to: 'requester@customer.example', fromName: 'Org\r\nX-Evil: 1', subject: HOSTILE_SUBJECT,
    text: 'line one\r\n.\r\nQUIT\r\nline after', attachments: [{ filename: '..\\..\\invoice.pdf', content: Buffer.from('%PDF-1.4'), contentType: 'application/pdf' }] });
  const [mail] = smtp.received;
  t.equal(mail!.subject, '[T-1] hello Bcc: evil@attacker.example forged body', 'the subject is one line');
  t.same(mail!.to && 'value' in mail!.to ? mail!.to.value.map((a) => a.address) : [], ['requester@customer.example'], 'one recipient');
  t.notOk(mail!.headers.has('bcc'), 'no Bcc header');
  t.notOk(mail!.headers.has('x-evil'), 'no header from the sender name');
  t.equal(mail!.from?.value[0]?.name, 'Org X-Evil: 1');
  t.match(mail!.text?.replace(/\r\n/g, '\n'), /^line one\n\.\nQUIT\nline after\n?$/, 'the body arrives as written, a lone dot included');
  t.equal(mail!.attachments[0]?.filename, 'invoice.pdf', 'the attachment name has no path');

  for (const to of ['a@b.example\r\nBcc: x@attacker.example', 'a@b.example, x@attacker.example', 'Group: x@attacker.example;', '"a"@b.example', 'a@b.example ']) {
    await t.rejects(mailer.send({ to, fromName: 'Org', subject: 's', text: 't', attachments: [] }), { code: 'EMAIL_DELIVERY_REFUSED' },
      `refused before SMTP: ${JSON.stringify(to)}`);
  }
  t.equal(smtp.received.length, 1, 'none of those reached the server');
  t.throws(() => message(config, { to: 'x', fromName: '', subject: '', text: '', attachments: [] }), { code: 'EMAIL_DELIVERY_REFUSED' });
});
