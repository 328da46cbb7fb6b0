// Hands invoice emails to the configured SMTP server (nodemailer). The caller holds the issuing
// transaction open until the server has accepted the message, so a refusal leaves the invoice a
// draft. Outside production, without an SMTP server, messages are written to a folder instead.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import type { MailConfig } from '../config.ts';
import { ApiError } from '../http/errors.ts';
import { downloadName } from '../http/content-disposition.ts';

export interface OutgoingEmail {
  to: string;
  fromName: string;
  subject: string;
  text: string;
  attachments: { filename: string; content: Buffer; contentType: string }[];
}

export interface Mailer { send(mail: OutgoingEmail): Promise<{ messageId: string }> }

interface SmtpError { code?: string; responseCode?: number; command?: string }

/** A permanent refusal (5xx to the envelope or the message) is the request's problem; anything
 * else (unreachable, timeout, 4xx, authentication) is ours, and worth retrying later. */
export function deliveryError(e: unknown): ApiError {
  const err = (e ?? {}) as SmtpError;
  const reply = err.responseCode ? ` (SMTP ${err.responseCode}${err.command ? ` to ${err.command}` : ''})`
    : err.code === 'EABORT' ? ' (no answer within the deadline)' : '';
  if (err.responseCode && err.responseCode >= 500 && (err.code === 'EENVELOPE' || err.code === 'EMESSAGE')) {
    return new ApiError('EMAIL_DELIVERY_REFUSED',
      `the mail provider refused the invoice email${reply}; the invoice stays a draft and no number was used`);
  }
  return new ApiError('EMAIL_DELIVERY_UNAVAILABLE',
    `the mail provider could not take the invoice email now${reply || (err.code ? ` (${err.code})` : '')}; the invoice stays a draft; retry later`,
    { headers: { 'Retry-After': '60' } });
}

export function createMailer(config: MailConfig): Mailer {
  if (config.smtpUrl) {
    // The deadlines go in the transport options (with the URL), where the SMTP connection reads them.
    const transport = nodemailer.createTransport({
      url: config.smtpUrl,
      connectionTimeout: config.timeoutMs, greetingTimeout: config.timeoutMs, socketTimeout: config.timeoutMs,
      logger: false, debug: false,
    });
    return {
      async send(mail) {
        try {
          // One deadline for the whole handover (the per-step ones alone add up command by command);
          // the abort closes the connection, so a late reply cannot deliver a rolled-back invoice.
          const info = await transport.sendMail({ ...message(config, mail), signal: AbortSignal.timeout(config.timeoutMs) });
          return { messageId: info.messageId };
        } catch (e) {
          throw e instanceof ApiError ? e : deliveryError(e);
        }
      },
    };
  }
  const dir = config.devMailDir;
  if (!dir) {
    return {
      async send() {
        throw new ApiError('EMAIL_DELIVERY_UNAVAILABLE', 'email delivery is not configured on this service (SVC_SMTP_URL); the invoice stays a draft',
          { headers: { 'Retry-After': '3600' } });
      },
    };
  }
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    async send(mail) {
      const info = await transport.sendMail(message(config, mail));
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, `${Date.now()}-${(mail.attachments[0]?.filename ?? mail.subject).replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80)}.eml`), info.message as Buffer);
      return { messageId: info.messageId };
    },
  };
}

/** Header text on one line: a client's line break (a ticket subject may hold one) becomes a space
 * rather than a header of its own. nodemailer folds and encodes what remains. */
const oneLine = (s: string) => s.replace(/[\r\n\u0085\u2028\u2029]+/g, ' ');
/** One plain address: nodemailer parses a `to` string as an address list, where a line break or
 * a comma makes a second recipient (or a group), and the envelope follows it. */
const ONE_ADDRESS = /^[^\s@,;:<>()[\]"\\]+@[^\s@,;:<>()[\]"\\]+$/;

export function message(config: MailConfig, mail: OutgoingEmail) {
  if (!ONE_ADDRESS.test(mail.to)) {
    throw new ApiError('EMAIL_DELIVERY_REFUSED', 'the recipient is not one plain email address; nothing was sent');
  }
  return {
    from: { name: oneLine(mail.fromName), address: config.from },
    to: { name: '', address: mail.to },
    subject: oneLine(mail.subject),
    text: mail.text,
    attachments: mail.attachments.map((a) => ({ ...a, filename: downloadName(a.filename, 'attachment') })),
  };
}
