// A typed client for the Work-Management Service API: openapi-fetch over the types that
// openapi-typescript generated from the server's own OpenAPI document (`make client`).
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema.d.ts';

export type { components, paths };
export type Problem = components['schemas']['Problem'];
export type SvcClient = Client<paths>;

export interface SvcClientOptions {
  /** Where the API is served, e.g. http://127.0.0.1:3000 (no trailing /v1). */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
}

/** The token endpoint refused the credentials (OAuth error format, RFC 6749 §5.2, with the spec's `code`). */
export class SvcTokenError extends Error {
  constructor(readonly status: number, readonly code: string, readonly detail: string) {
    super(`token request failed: ${status} ${code}: ${detail}`);
    this.name = 'SvcTokenError';
  }
}

// Fetch a new token this long before the old one expires, so a request never leaves with a token
// that lapses in flight (at most half the lifetime, for short-lived tokens).
const REFRESH_MARGIN_SECONDS = 60;

// RFC 6749 §2.3.1: id and secret are form-urlencoded before they are joined for HTTP Basic.
const formEncode = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');

export function createSvcClient({ baseUrl, clientId, clientSecret }: SvcClientOptions): SvcClient {
  // A separate client without the bearer middleware: the token call authenticates with Basic.
  const auth = createClient<paths>({ baseUrl });
  const basic = 'Basic ' + Buffer.from(`${formEncode(clientId)}:${formEncode(clientSecret)}`).toString('base64');
  let cached: { token: string; refreshAt: number } | undefined;
  let pending: Promise<string> | undefined;

  async function requestToken(): Promise<string> {
    const sentAt = Date.now();
    const { data, error, response } = await auth.POST('/oauth/token', {
      body: { grant_type: 'client_credentials', scope: 'svc.api' },
      headers: { Authorization: basic, 'Content-Type': 'application/x-www-form-urlencoded' },
      bodySerializer: (body) => new URLSearchParams(body).toString(),
    });
    if (!data) {
      throw new SvcTokenError(response.status, error?.code ?? 'UNKNOWN', error?.error_description ?? error?.error ?? response.statusText);
    }
    const margin = Math.min(REFRESH_MARGIN_SECONDS, data.expires_in / 2);
    cached = { token: data.access_token, refreshAt: sentAt + (data.expires_in - margin) * 1000 };
    return data.access_token;
  }

  async function token(): Promise<string> {
    if (cached && Date.now() < cached.refreshAt) return cached.token;
    // Concurrent requests share one token call.
    pending ??= requestToken().finally(() => { pending = undefined; });
    return pending;
  }

  const bearer: Middleware = {
    async onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${await token()}`);
      return request;
    },
    onResponse({ response }) {
      // A revoked or rotated key: the next request fetches a fresh token.
      if (response.status === 401) cached = undefined;
      return undefined;
    },
  };

  const client = createClient<paths>({ baseUrl });
  client.use(bearer);
  return client;
}
