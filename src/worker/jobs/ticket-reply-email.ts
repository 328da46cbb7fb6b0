// ticket_reply_email (one per reply): the reply and its attachments to the requester, by SMTP; the
// outcome on the message (sent, or failed when refused or out of attempts).
import type postgres from 'postgres';
import type { Mailer } from '../../invoices/mailer.ts';
import { ApiError } from '../../http/errors.ts';
import type { Attempt } from './attempt.ts';

/** Email attachments are read whole (SMTP carries them whole); past this, the reply fails instead. */
const MAX_EMAIL_ATTACHMENTS_BYTES = 25 * 1024 * 1024;

interface ReplyLoad {
  status: string; body: string; organization_id: string; number: string; subject: string; to: string; organization: string;
  attachments: { file_id: string; name: string; content_type: string; upload_id: string | null; status: string }[];
}

/** Emails a ticket reply to the requester: the reply's own body and attachments only, never an
 * internal note. A refusal (SMTP 5xx) is final; anything else is retried, and fails after the last attempt. */
export async function sendTicketReply(sql: postgres.Sql, mailer: Mailer, organizationId: string, messageId: string,
  attempt: Attempt): Promise<string> {
  const [row] = await sql<{ m: ReplyLoad | null }[]>`select app_private.ticket_reply_load(${organizationId}, ${messageId}) as m`;
  const m = row?.m;
  if (!m || m.status !== 'queued') return 'skipped';
  const record = async (sent: boolean, detail: string | null) => {
    await sql`select app_private.ticket_reply_record(${organizationId}, ${messageId}, ${sent}, ${detail})`;
    return sent ? 'sent' : 'failed';
  };
  const attachments: { filename: string; content: Buffer; contentType: string }[] = [];
  let total = 0;
  for (const a of m.attachments) {
    const parts = a.upload_id
      ? await sql<{ data: Buffer }[]>`select data from app.file_chunks where organization_id = ${m.organization_id} and upload_id = ${a.upload_id} order by seq`
      : await sql<{ data: Buffer }[]>`select content as data from app.file_contents where organization_id = ${m.organization_id} and file_id = ${a.file_id}`;
    const content = Buffer.concat(parts.map((p) => p.data));
    total += content.length;
    if (total > MAX_EMAIL_ATTACHMENTS_BYTES) return record(false, 'the attachments exceed 25 MiB, more than email carries');
    attachments.push({ filename: a.name, content, contentType: a.content_type });
  }
  try {
    await mailer.send({ to: m.to, fromName: m.organization, subject: `[${m.number}] ${m.subject}`, text: m.body, attachments });
  } catch (e) {
    const refused = e instanceof ApiError && e.code === 'EMAIL_DELIVERY_REFUSED';
    if (!refused && attempt.attempts < attempt.maxAttempts) throw e;
    const smtp = e instanceof ApiError ? /\(SMTP [^)]*\)/.exec(e.detail ?? '')?.[0] : undefined;
    return record(false, `${refused ? 'the mail provider refused the email' : 'the mail provider could not take the email'}${smtp ? ` ${smtp}` : ''}`);
  }
  return record(true, null);
}
