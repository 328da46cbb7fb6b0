// Everything that touches a webhook receiver: URL safety, signatures, the HTTPS POST.
// Shared by the API (URL checks and the verification challenge) and the worker (deliveries).
import https from 'node:https';
import tls from 'node:tls';
import dns from 'node:dns/promises';
import { lookup as lookupCallback, type LookupAddress, type LookupOptions } from 'node:dns';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import { createHmac, randomBytes } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import { RequestFilteringHttpsAgent } from 'request-filtering-agent';
import type { WebhookConfig } from '../config.ts';
import { deriveKey } from '../auth/sealing.ts';
import { ApiError } from '../http/errors.ts';

export const webhookSecretKey = (master: Buffer) => deriveKey(master, 'webhook-secrets');

/** 32 random bytes; the whole string (prefix included) is the HMAC key. */
export const newWebhookSecret = () => 'whsec_' + randomBytes(32).toString('base64url');

/** `v1=<hex>` of HMAC-SHA256(secret, "<timestamp>.<raw body>"), one per active secret. */
export function signatureHeader(secrets: string[], timestamp: number, body: string): string {
  return secrets.map((s) => 'v1=' + createHmac('sha256', s).update(`${timestamp}.${body}`).digest('hex')).join(',');
}


/** Only ordinary public unicast: no private, loopback, link-local (cloud metadata), multicast,
 * carrier-grade NAT, reserved or unspecified addresses; IPv4-mapped IPv6 is unwrapped first. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  // IPv4-compatible IPv6 (::a.b.c.d, deprecated) is "unicast" to ipaddr.js but embeds an IPv4 address.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts.slice(0, 6).every((p) => p === 0)) return false;
  return parsed.range() === 'unicast';
}

/** Our rule at connect time, applied to every address a delivery's DNS lookup returns, before
 * request-filtering-agent applies its own (non-unicast refused). Checking by family here, rather
 * than handing the agent mixed IPv4/IPv6 lists, keeps it from matching an IPv6 range against an
 * IPv4 address (it logs a stack trace for each such pair). Allowed hosts (local testing) may
 * resolve to loopback too; nothing else private, ever. */
function addressAllowed(address: string, loopbackAllowed: boolean): boolean {
  if (isPublicAddress(address)) return true;
  return loopbackAllowed && ipaddr.isValid(address) && ipaddr.process(address).range() === 'loopback';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup, then addressAllowed for every address (the form net.connect's `lookup` option takes). */
function checkedLookup(loopbackAllowed: boolean) {
  return (hostname: string, options: LookupOptions, cb: LookupCallback) => {
    lookupCallback(hostname, options, (err, result, family) => {
      if (err) { cb(err, '', 0); return; }
      const all = Array.isArray(result) ? result : [{ address: result, family: family ?? 0 }];
      const refused = all.find((a) => !addressAllowed(a.address, loopbackAllowed));
      if (refused) {
        cb(Object.assign(new Error(`DNS lookup ${refused.address} (host: ${hostname}) is not allowed`), { code: 'EADDRNOTALLOWED' }), '', 0);
        return;
      }
      cb(null, result, family);
    });
  };
}

function unsafe(detail: string): ApiError {
  return new ApiError('WEBHOOK_URL_UNSAFE', detail, { errors: [{ pointer: '/url', detail, code: 'WEBHOOK_URL_UNSAFE' }] });
}

/** Registration-time check. The same rule is applied again at connect time for every delivery
 * (the filtering agent checks the resolved address), so DNS rebinding cannot get around it. */
export async function assertSafeUrl(raw: string, config: WebhookConfig): Promise<URL> {
  let url: URL;
  try { url = new URL(raw); } catch { throw unsafe('url is not an absolute URL'); }
  if (url.protocol !== 'https:') throw unsafe('only https URLs are accepted');
  if (url.username || url.password) throw unsafe('credentials in the URL are not accepted');
  if (url.hash) throw unsafe('a fragment is not accepted');
  // A trailing dot names the same host (an absolute DNS name): compare without it.
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.$/, '');
  if (config.allowedHosts.includes(host)) return url;
  if (net.isIP(host)) {
    if (!isPublicAddress(host)) throw unsafe('the URL names a private, loopback, link-local or otherwise non-public address');
    return url;
  }
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal') || host.endsWith('.local')) {
    throw unsafe('the host name is reserved for local networks');
  }
  let addresses: { address: string }[] = [];
  try {
    addresses = await dns.lookup(host, { all: true, verbatim: true });
  } catch {
    // Unresolvable now: the verification challenge will fail and say so; nothing private is reached.
    return url;
  }
  if (addresses.some((a) => !isPublicAddress(a.address))) {
    throw unsafe('the host name resolves to a private, loopback, link-local or otherwise non-public address');
  }
  return url;
}

export interface Transport { post: (url: string, headers: Record<string, string>, body: string) => Promise<PostResult> }

export interface PostResult {
  status?: number;
  /** A short category, never the receiver's words or a secret. */
  error?: string;
  retryAfterSeconds?: number;
  body?: string;
  durationMs: number;
}

function retryAfterOf(value: string | string[] | undefined): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  // Honoured up to a day: a receiver cannot push its retries past the schedule's reach.
  if (/^\d+$/.test(v.trim())) return Math.min(86_400, Number(v.trim()));
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.min(86_400, Math.max(0, Math.ceil((at - Date.now()) / 1000)));
}

function errorCategory(e: NodeJS.ErrnoException): string {
  if (e.message === 'deadline') return 'timeout';
  if (e.code === 'EADDRNOTALLOWED' || /is not allowed/.test(e.message)) return 'destination_not_allowed';
  switch (e.code) {
    case 'ECONNREFUSED': return 'connection_refused';
    case 'ECONNRESET': case 'EPIPE': return 'connection_reset';
    case 'ENOTFOUND': case 'EAI_AGAIN': return 'dns_error';
    case 'ETIMEDOUT': return 'timeout';
    default:
      // OpenSSL's verification codes (UNABLE_TO_VERIFY_LEAF_SIGNATURE for an unknown issuer, *CERT* for the rest).
      if (e.code?.startsWith('ERR_TLS') || e.code?.startsWith('ERR_SSL') || e.code?.startsWith('UNABLE_TO_')
        || e.code?.includes('CERT') || e.code === 'EPROTO') return 'tls_error';
      return 'network_error';
  }
}

const MAX_RESPONSE_BYTES = 64 * 1024;

/** HTTPS POST with a hard deadline, no redirects, and the address filter at connect time. */
export function createTransport(config: WebhookConfig): Transport {
  // One TLS context for every connection: given `ca` instead, each new connection parsed the whole
  // root store again (~140 certificates, 10-20 ms of the event loop each), so a few dozen new
  // connections at once stalled every request of the process for up to a second.
  const secureContext = config.caFile
    ? tls.createSecureContext({ ca: [...tls.rootCertificates, readFileSync(config.caFile, 'utf8')] })
    : undefined;
  const strict = new RequestFilteringHttpsAgent({ keepAlive: true, secureContext });
  // Loopback passes the agent here; checkedLookup(true) still refuses every other private address.
  const loopbackAllowed = new RequestFilteringHttpsAgent({ keepAlive: true, secureContext, allowPrivateIPAddress: true });
  return {
    post(rawUrl, headers, body) {
      const started = Date.now();
      return new Promise<PostResult>((resolve) => {
        let done = false;
        let timer: NodeJS.Timeout | undefined;
        const finish = (r: Omit<PostResult, 'durationMs'>) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          resolve({ ...r, durationMs: Date.now() - started });
        };
        let url: URL;
        try { url = new URL(rawUrl); } catch { finish({ error: 'invalid_url' }); return; }
        const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.$/, '');
        const allowed = config.allowedHosts.includes(host);
        if (url.protocol !== 'https:') { finish({ error: 'destination_not_allowed' }); return; }
        // An IP literal has no lookup: it must pass the same rule here (the strict agent checks it too).
        if (net.isIP(host) && !addressAllowed(host, false)) { finish({ error: 'destination_not_allowed' }); return; }
        const req = https.request(url, {
          method: 'POST', agent: allowed ? loopbackAllowed : strict, lookup: checkedLookup(allowed) as never,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'svc-webhooks/1', ...headers },
        }, (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size <= MAX_RESPONSE_BYTES) chunks.push(c);
          });
          res.on('end', () => finish({
            status: res.statusCode,
            retryAfterSeconds: retryAfterOf(res.headers['retry-after']),
            body: Buffer.concat(chunks).toString('utf8'),
          }));
          res.on('error', (e) => finish({ status: res.statusCode, error: errorCategory(e) }));
        });
        timer = setTimeout(() => req.destroy(new Error('deadline')), config.timeoutMs);
        req.on('error', (e) => finish({ error: errorCategory(e) }));
        req.end(body);
      });
    },
  };
}

/** How an attempt's outcome is classified (docs/decisions.md, webhooks). */
export function classify(r: PostResult): { ok: boolean; retryable: boolean; error?: string } {
  if (r.error) return { ok: false, retryable: true, error: r.error };
  const s = r.status ?? 0;
  if (s >= 200 && s < 300) return { ok: true, retryable: false };
  if (s >= 300 && s < 400) return { ok: false, retryable: true, error: 'redirect_not_followed' };
  if (s === 408 || s === 429 || s >= 500) return { ok: false, retryable: true, error: `http_${s}` };
  return { ok: false, retryable: false, error: `http_${s}` };
}

export interface EventEnvelope {
  id: string;
  type: string;
  api_version: 'v1';
  created_at: string;
  organization_id: string;
  data: { object: { type: string; id: string; version: number }; [k: string]: unknown };
}

/** The three headers and the body of one signed POST. */
export function signedRequest(envelope: EventEnvelope, secrets: string[], now = Date.now()) {
  const body = JSON.stringify(envelope);
  const timestamp = Math.floor(now / 1000);
  return {
    body,
    headers: {
      'svc-webhook-id': envelope.id,
      'svc-webhook-timestamp': String(timestamp),
      'svc-webhook-signature': signatureHeader(secrets, timestamp, body),
    },
  };
}

/** The activation challenge: a signed `webhook_endpoint.verification` event carrying a random
 * `data.challenge`; the receiver proves it wants our events by answering 2xx within the deadline
 * with the JSON body {"challenge": "<the same value>"}. */
export async function verifyEndpoint(transport: Transport, args: {
  url: string; secret: string; endpointId: string; organizationId: string; version: number; eventId: string;
}): Promise<void> {
  const challenge = randomBytes(24).toString('base64url');
  const { body, headers } = signedRequest({
    id: args.eventId, type: 'webhook_endpoint.verification', api_version: 'v1', created_at: new Date().toISOString(),
    organization_id: args.organizationId,
    data: { object: { type: 'webhook_endpoint', id: args.endpointId, version: args.version }, challenge },
  }, [args.secret]);
  const r = await transport.post(args.url, headers, body);
  const fail = (detail: string) => new ApiError('WEBHOOK_VERIFICATION_FAILED', detail,
    { errors: [{ pointer: '/url', detail, code: 'WEBHOOK_VERIFICATION_FAILED' }] });
  if (r.error === 'destination_not_allowed') {
    throw new ApiError('WEBHOOK_URL_UNSAFE', 'the host resolved to a non-public address at connect time',
      { errors: [{ pointer: '/url', detail: 'the host resolved to a non-public address', code: 'WEBHOOK_URL_UNSAFE' }] });
  }
  if (r.error) throw fail(`the verification challenge could not be delivered (${r.error})`);
  if (r.status === undefined || r.status < 200 || r.status >= 300) {
    throw fail(`the endpoint answered the verification challenge with HTTP ${r.status}; answer 2xx with {"challenge": data.challenge}`);
  }
  let echoed: unknown;
  try { echoed = (JSON.parse(r.body ?? '') as { challenge?: unknown }).challenge; } catch { echoed = undefined; }
  if (echoed !== challenge) {
    throw fail('the endpoint did not echo the challenge; answer with the JSON body {"challenge": data.challenge}');
  }
}
