// A real HTTPS webhook receiver on loopback (certificate from the test CA), with an
// independent signature check written from the spec's text, not from src/.
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Test } from 'tap';

const TLS_DIR = new URL('../fixtures/tls/', import.meta.url);
export const TEST_CA_FILE = new URL('ca.pem', TLS_DIR).pathname;

/** Settings every webhook test uses: loopback by name only, the test CA, short deadlines. */
export const WEBHOOK_TEST_ENV: Record<string, string> = {
  SVC_WEBHOOK_ALLOWED_HOSTS: 'localhost',
  SVC_WEBHOOK_CA_FILE: TEST_CA_FILE,
  // Room for a verification challenge on a loaded CI machine (1.5 s is too short with the
  // cluster suite running 4-5 times slower than usual); the hanging receivers wait it out.
  SVC_WEBHOOK_TIMEOUT_MS: '4000',
  SVC_WEBHOOK_RETRY_SCALE: '0.001',
  SVC_WORKER_RECOVER_INTERVAL_MS: '300',
  SVC_WORKER_STALE_SECONDS: '2',
  SVC_WORKER_CONCURRENCY: '8',
};

export interface Received {
  headers: Record<string, string | string[] | undefined>;
  raw: string;
  body: any;
  at: number;
}

export type Behaviour = (r: Received, n: number) =>
  | { status: number; headers?: Record<string, string>; body?: string; delayMs?: number }
  | { destroy: true }
  | { hang: true };

/** Verifies `Svc-Webhook-Signature` as a consumer would: HMAC-SHA256 keyed with the secret over
 * "<timestamp>.<raw body>", lowercase hex, any one `v1=` value matching in constant time. */
export function verifySignature(secret: string, headers: Received['headers'], raw: string, toleranceSeconds = 300): boolean {
  const ts = String(headers['svc-webhook-timestamp'] ?? '');
  const sig = String(headers['svc-webhook-signature'] ?? '');
  if (!/^\d+$/.test(ts) || Math.abs(Date.now() / 1000 - Number(ts)) > toleranceSeconds) return false;
  const expected = Buffer.from(createHmac('sha256', Buffer.from(secret, 'utf8')).update(ts + '.' + raw, 'utf8').digest('hex'));
  return sig.split(',').some((part) => {
    const [version, value] = part.trim().split('=');
    if (version !== 'v1' || !value || !/^[0-9a-f]{64}$/.test(value)) return false;
    const given = Buffer.from(value);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Requests other than verification challenges. */
  events: () => Received[];
  behave: (b: Behaviour) => void;
  waitFor: (pred: (events: Received[]) => boolean, timeoutMs?: number) => Promise<Received[]>;
  close: () => Promise<void>;
}

export async function startReceiver(t: Test, opts: { path?: string; answerChallenges?: boolean; challengeDelayMs?: number } = {}): Promise<Receiver> {
  const received: Received[] = [];
  let behaviour: Behaviour = () => ({ status: 204 });
  let n = 0;
  const server = https.createServer({
    key: readFileSync(new URL('localhost.key', TLS_DIR)),
    cert: readFileSync(new URL('localhost.pem', TLS_DIR)),
  }, (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: any;
      try { body = JSON.parse(raw); } catch { body = undefined; }
      const r: Received = { headers: req.headers, raw, body, at: Date.now() };
      received.push(r);
      if (body?.type === 'webhook_endpoint.verification' && opts.answerChallenges !== false) {
        const answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ challenge: body.data.challenge }));
        if (opts.challengeDelayMs) setTimeout(answer, opts.challengeDelayMs); else answer();
        return;
      }
      const b = behaviour(r, ++n);
      if ('destroy' in b) { req.socket.destroy(); return; }
      if ('hang' in b) return;
      const send = () => { if (!res.destroyed) res.writeHead(b.status, b.headers ?? {}).end(b.body ?? ''); };
      if (b.delayMs) setTimeout(send, b.delayMs); else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const close = () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); });
  t.teardown(close);
  const events = () => received.filter((r) => r.body?.type !== 'webhook_endpoint.verification');
  return {
    url: `https://localhost:${port}${opts.path ?? '/hooks'}`,
    port,
    received,
    events,
    behave: (b) => { behaviour = b; n = 0; },
    // A deadline costs nothing when the condition comes: generous, for a loaded CI machine.
    async waitFor(pred, timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      while (Date.now() < until) {
        if (pred(events())) return events();
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`receiver: condition not met within ${timeoutMs} ms (${events().length} events received)`);
    },
    close,
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
