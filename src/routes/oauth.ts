// POST /oauth/token: OAuth 2.0 client credentials (RFC 6749 §4.4), client authentication by
// HTTP Basic (§2.3.1), errors in the OAuth format (§5.2) with the spec's codes in `code`.
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import { createHash } from 'node:crypto';
import type { AppContext } from '../http/context.ts';
import { header } from '../http/headers.ts';
import { isDatabaseUnavailable } from '../http/errors.ts';
import { api } from '../db/api.ts';

type TokenError = 'INVALID_REQUEST' | 'INVALID_CLIENT' | 'CLIENT_DISABLED' | 'LICENSE_INACTIVE'
  | 'ORG_SUBSCRIPTION_INACTIVE' | 'UNSUPPORTED_GRANT_TYPE' | 'INVALID_SCOPE' | 'RATE_LIMITED' | 'SERVICE_UNAVAILABLE';

export const TOKEN_ERRORS: Record<TokenError, { status: number; error: string; description: string }> = {
  INVALID_REQUEST: { status: 400, error: 'invalid_request', description: 'the request is malformed' },
  INVALID_CLIENT: { status: 401, error: 'invalid_client', description: 'client id or secret invalid' },
  CLIENT_DISABLED: { status: 401, error: 'invalid_client', description: 'the client is disabled' },
  LICENSE_INACTIVE: { status: 400, error: 'unauthorized_client', description: 'no active eligible license is assigned to the client' },
  ORG_SUBSCRIPTION_INACTIVE: { status: 400, error: 'unauthorized_client', description: "the organization's access is suspended or expired" },
  UNSUPPORTED_GRANT_TYPE: { status: 400, error: 'unsupported_grant_type', description: 'grant_type must be client_credentials' },
  INVALID_SCOPE: { status: 400, error: 'invalid_scope', description: 'scope must be exactly svc.api' },
  RATE_LIMITED: { status: 429, error: 'rate_limited', description: 'too many token requests' },
  // RFC 6749 §4.1.2.1's temporarily_unavailable, with 503 and Retry-After (RFC 9110 §15.6.4).
  SERVICE_UNAVAILABLE: { status: 503, error: 'temporarily_unavailable', description: 'the service cannot issue tokens right now; retry shortly' },
};

const OUTCOMES: Record<string, TokenError> = {
  invalid_client: 'INVALID_CLIENT',
  client_disabled: 'CLIENT_DISABLED',
  license_inactive: 'LICENSE_INACTIVE',
  org_subscription_inactive: 'ORG_SUBSCRIPTION_INACTIVE',
};

const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

function tokenError(h: ResponseToolkit, code: TokenError, headers: Record<string, string> = {}, detail?: string) {
  const e = TOKEN_ERRORS[code];
  const res = h.response({ error: e.error, error_description: detail ?? e.description, code }).code(e.status).type('application/json');
  for (const [k, v] of Object.entries({ ...NO_STORE, ...headers })) res.header(k, v);
  if (code === 'INVALID_CLIENT' || code === 'CLIENT_DISABLED') res.header('WWW-Authenticate', 'Basic realm="svc"');
  return res;
}

/** RFC 6749 §2.3.1: id and secret are form-urlencoded before Basic encoding. */
function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  const m = header && /^Basic ([A-Za-z0-9+/]+=*)$/i.exec(header.trim());
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) return undefined;
  try {
    const formDecode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    return undefined;
  }
}

/** Client ids whose organization this process has looked up (a client never changes organization). */
const CLIENT_ORGANIZATIONS_CACHED = 10_000;

export function tokenRoute(app: AppContext): ServerRoute {
  const organizationOf = new Map<string, string>();
  /** The client's organization: the token endpoint's every other question is asked within it, so
   * that on Citus each runs on the one worker that holds the organization's rows. */
  async function clientOrganization(clientId: string): Promise<string | undefined> {
    const cached = organizationOf.get(clientId);
    if (cached) return cached;
    const { rows: [r] } = await api.value('client_organization', clientId).execute(app.database.db);
    if (!r?.value) return undefined;
    if (organizationOf.size >= CLIENT_ORGANIZATIONS_CACHED) organizationOf.delete(organizationOf.keys().next().value!);
    organizationOf.set(clientId, r.value);
    return r.value;
  }

  return {
    method: 'POST',
    path: '/oauth/token',
    options: {
      id: 'createAccessToken',
      payload: { parse: true, output: 'data', maxBytes: 16 * 1024, failAction: 'error' },
      handler: async (request: Request, h: ResponseToolkit) => {
        try {
          return await issueToken(request, h);
        } catch (e) {
          if (!isDatabaseUnavailable(e)) throw e;
          return tokenError(h, 'SERVICE_UNAVAILABLE', { 'Retry-After': '5' });
        }
      },
    },
  };

  async function issueToken(request: Request, h: ResponseToolkit) {
    if (request.mime !== 'application/x-www-form-urlencoded') {
      return tokenError(h, 'INVALID_REQUEST', {}, 'send the form body as application/x-www-form-urlencoded');
    }
    const creds = basicCredentials(header(request, 'authorization'));
    if (!creds) return tokenError(h, 'INVALID_CLIENT', {}, 'send the client id and secret as HTTP Basic credentials');
    // No client id or secret holds U+0000 (PostgreSQL text cannot): such credentials match no client.
    if (creds.id.includes('\u0000') || creds.secret.includes('\u0000')) return tokenError(h, 'INVALID_CLIENT');
    const form = (request.payload ?? {}) as Record<string, unknown>;
    if (Array.isArray(form.grant_type) || Array.isArray(form.scope)) {
      return tokenError(h, 'INVALID_REQUEST', {}, 'each parameter may appear only once');
    }
    if (form.grant_type !== 'client_credentials') return tokenError(h, 'UNSUPPORTED_GRANT_TYPE');
    if (form.scope !== 'svc.api') return tokenError(h, 'INVALID_SCOPE');

    const rl = await app.rateLimit(`token:${creds.id}`);
    if (!rl.allowed) return tokenError(h, 'RATE_LIMITED', { ...rl.headers, 'Retry-After': String(rl.resetSeconds) });

    const org = await clientOrganization(creds.id);
    if (!org) return tokenError(h, 'INVALID_CLIENT', rl.headers);
    // On the organization's connections: on Citus its worker, so that a client whose organization
    // this process knows gets tokens while the coordinator is away.
    const db = app.database.of(org).db;
    const { rows: [r] } = await api.rows('authenticate_client', org, creds.id, creds.secret).execute(db);
    if (r!.outcome !== 'ok') return tokenError(h, OUTCOMES[r!.outcome!] ?? 'INVALID_CLIENT', rl.headers);

    const accessToken = await app.tokens.issue(creds.id, r!.secret_id!, r!.organization_id!);
    // The token works only once the database has recorded it, and it records it only for a live
    // secret: the unforgeable request context needs this credential, not just ids.
    const expiresAt = new Date(Date.now() + app.config.tokenTtlSeconds * 1000);
    const { rows: [recorded] } = await api.value('access_token_record', org, creds.id, creds.secret,
      createHash('sha256').update(accessToken).digest(), expiresAt).execute(db);
    if (!recorded?.value) return tokenError(h, 'INVALID_CLIENT', rl.headers);
    const res = h.response({ access_token: accessToken, token_type: 'Bearer', expires_in: app.config.tokenTtlSeconds, scope: 'svc.api' })
      .code(200).type('application/json');
    for (const [k, v] of Object.entries({ ...NO_STORE, ...rl.headers })) res.header(k, v);
    return res;
  }
}
