// A real SMTP server on loopback (smtp-server), for the invoice email tests: it can refuse
// recipients or messages the way a provider does, and keeps what it accepted, parsed (mailparser).
import type { Test } from 'tap';
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';

export interface SmtpSink {
  url: string;
  received: ParsedMail[];
  /** What the server answers to RCPT TO for an address: null accepts. */
  refuseRecipient: ((address: string) => { code: number; message: string } | null) | null;
  /** What it answers after DATA: null accepts. */
  refuseMessage: { code: number; message: string } | null;
  /** Delay before answering DATA (a slow provider). */
  delayMs: number;
  /** Delay before answering MAIL FROM and RCPT TO (a provider slow at every step). */
  stepDelayMs: number;
}

export async function startSmtp(t: Test): Promise<SmtpSink> {
  const sink: SmtpSink = { url: '', received: [], refuseRecipient: null, refuseMessage: null, delayMs: 0, stepDelayMs: 0 };
  const refusal = (r: { code: number; message: string }) => Object.assign(new Error(r.message), { responseCode: r.code });
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onMailFrom(_address, _session, cb) {
      setTimeout(() => cb(), sink.stepDelayMs);
    },
    onRcptTo(address, _session, cb) {
      const r = sink.refuseRecipient?.(address.address) ?? null;
      setTimeout(() => cb(r ? refusal(r) : undefined), sink.stepDelayMs);
    },
    onData(stream, _session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        setTimeout(() => {
          if (sink.refuseMessage) return cb(refusal(sink.refuseMessage));
          simpleParser(Buffer.concat(chunks)).then((mail) => { sink.received.push(mail); cb(); }, cb);
        }, sink.delayMs);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as { port: number };
  sink.url = `smtp://127.0.0.1:${port}`;
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return sink;
}
