// Authentication: the OAuth token endpoint (POST /oauth/token), the per-request checks every
// /v1 request goes through (token, client, licence, subscription, Roles), and the licence
// rules the control plane enforces in SQL.
import t from 'tap';
import { createHash } from 'node:crypto';
import type { Test } from 'tap';
import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT, UnsecuredJWT } from 'jose';
import { randomUUID } from 'node:crypto';
import { startApp, assertProblem, type TestApp, type Client } from '../helpers/app.ts';
import { TokenService } from '../../src/auth/tokens.ts';
import { constraintNamed } from '../../src/http/errors.ts';

type Res = Awaited<ReturnType<TestApp['request']>>;

const FORM = 'application/x-www-form-urlencoded';
const GOOD_BODY = 'grant_type=client_credentials&scope=svc.api';

const basic = (id: string, secret: string) =>
  'Basic ' + Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64');
const b64 = (s: string) => Buffer.from(s).toString('base64');
/** Percent-encodes every character: still a valid form-urlencoded value. */
const pctAll = (s: string) => [...Buffer.from(s)].map((b) => '%' + b.toString(16).toUpperCase().padStart(2, '0')).join('');

async function tokenRequest(a: TestApp, opts: { authorization?: string | null; body?: string; contentType?: string; client?: Pick<Client, 'id' | 'secret'> } = {}): Promise<Res> {
  const headers: Record<string, string> = { 'content-type': opts.contentType ?? FORM };
  if (opts.authorization !== undefined && opts.authorization !== null) headers.authorization = opts.authorization;
  else if (opts.authorization === undefined && opts.client) headers.authorization = basic(opts.client.id, opts.client.secret);
  return a.request({ method: 'POST', url: '/oauth/token', payload: opts.body ?? GOOD_BODY, headers });
}

/** An OAuth (RFC 6749 §5.2) error: JSON, not problem+json, never cached. */
function assertTokenError(t: Test, res: Res, status: number, error: string, code: string, wwwBasic = false) {
  t.equal(res.statusCode, status, `status ${status} (${code})`);
  t.match(String(res.headers['content-type']), /^application\/json/, 'application/json');
  t.notMatch(String(res.headers['content-type']), /problem/, 'not problem+json');
  t.equal(res.json?.error, error, `error ${error}`);
  t.equal(res.json?.code, code, `code ${code}`);
  t.type(res.json?.error_description, 'string', 'error_description');
  t.equal(res.headers['cache-control'], 'no-store', 'Cache-Control: no-store');
  t.notOk(res.json?.access_token, 'no access token');
  if (wwwBasic) t.match(String(res.headers['www-authenticate'] ?? ''), /^Basic\b/, 'WWW-Authenticate: Basic');
}

/** A 401 from a resource: problem+json INVALID_TOKEN (or the given code) with a Bearer challenge. */
function assert401(t: Test, res: Res, what = '', code = 'INVALID_TOKEN') {
  t.equal(res.statusCode, 401, `${what}: 401 ${code}`.replace(/^: /, ''));
  t.equal(res.json?.code, code, `${what}: code ${code}`.replace(/^: /, ''));
  assertProblem(t, res, 401, code);
  t.match(String(res.headers['www-authenticate'] ?? ''), /^Bearer\b/, 'WWW-Authenticate starts with Bearer');
}

const me = (a: TestApp, token?: string, headers?: Record<string, string>) => a.request({ url: '/v1/me', token, headers });

async function cliError(t: Test, p: Promise<unknown>): Promise<Record<string, any>> {
  try {
    await p;
  } catch (e: any) {
    return e.result?.err ?? { error: 'NO_RESULT', message: String(e) };
  }
  t.fail('the svc-admin command should have failed');
  return {};
}

function tokenService(a: TestApp, over: Partial<{ issuer: string; audience: string; ttlSeconds: number }> = {}) {
  return new TokenService(a.database.db, {
    issuer: a.config.issuer, audience: a.config.audience, ttlSeconds: 3600, masterKey: a.config.secretKey, refreshMs: 60_000, ...over,
  });
}

/** What the token endpoint does after signing: record the token's SHA-256 with the client secret. */
async function record(a: TestApp, c: { id: string; secret: string; orgId: string }, token: string, expiresAt: Date) {
  const [r] = await a.admin`select api.access_token_record(${c.orgId}, ${c.id}, ${c.secret}, ${createHash('sha256').update(token).digest()},
    ${expiresAt}::timestamptz) as ok`;
  if (!r!.ok) throw new Error('token not recorded');
}

/** The server's current signing key (private in TokenService, reachable at runtime). */
const serverKey = (a: TestApp) => (a.app.tokens as any).current as { kid: string; privateKey: CryptoKey };

// ---------------------------------------------------------------------------------------------
t.test('token endpoint', async (t) => {
  const a = await startApp(t);

  t.test('success: response shape, headers and the JWT', async (t) => {
    const c = await a.createClient(await a.createOrg(), { roles: 'member,manager' });
    const before = Math.floor(Date.now() / 1000);
    const res = await tokenRequest(a, { client: c });
    t.equal(res.statusCode, 200, res.body);
    t.match(String(res.headers['content-type']), /^application\/json/);
    t.equal(res.headers['cache-control'], 'no-store');
    t.equal(res.headers.pragma, 'no-cache');
    t.same(Object.keys(res.json).sort(), ['access_token', 'expires_in', 'scope', 'token_type'], 'exactly the documented members');
    t.equal(res.json.token_type, 'Bearer');
    t.equal(res.json.expires_in, 3600);
    t.equal(res.json.scope, 'svc.api');
    t.notOk('refresh_token' in res.json, 'no refresh token');
    t.type(res.json.access_token, 'string');

    const header = decodeProtectedHeader(res.json.access_token);
    t.equal(header.typ, 'at+jwt');
    t.equal(header.alg, 'EdDSA');
    t.type(header.kid, 'string');
    const claims = decodeJwt(res.json.access_token);
    t.equal(claims.iss, a.config.issuer, 'iss');
    t.equal(claims.aud, a.config.audience, 'aud');
    t.equal(claims.sub, c.id, 'sub = client id');
    t.equal(claims.client_id, c.id, 'client_id');
    t.equal(claims.scope, 'svc.api', 'scope');
    t.type(claims.jti, 'string', 'jti');
    t.ok((claims.jti as string).length >= 16, 'jti is not trivially short');
    t.type(claims.iat, 'number');
    t.type(claims.exp, 'number');
    t.equal(claims.exp! - claims.iat!, 3600, 'exp - iat = 3600');
    t.ok(claims.iat! >= before - 1 && claims.iat! <= Math.floor(Date.now() / 1000) + 1, 'iat is now');

    const again = await tokenRequest(a, { client: c });
    t.equal(again.statusCode, 200);
    t.not(decodeJwt(again.json.access_token).jti, claims.jti, 'every token has its own jti');

    const ok = await me(a, res.json.access_token);
    t.equal(ok.statusCode, 200, ok.body);
    t.equal(ok.json.id, c.id);
  });

  t.test('Basic credentials are form-urlencoded before base64', async (t) => {
    const c = await a.createClient(await a.createOrg(), { roles: 'member' });
    const encoded = await tokenRequest(a, {
      authorization: 'Basic ' + b64(`${pctAll(c.id)}:${pctAll(c.secret)}`),
    });
    t.equal(encoded.statusCode, 200, 'every character percent-encoded: ' + encoded.body);
    const plain = await tokenRequest(a, { authorization: 'Basic ' + b64(`${c.id}:${c.secret}`) });
    t.equal(plain.statusCode, 200, 'unreserved characters need no encoding: ' + plain.body);
    const lower = await tokenRequest(a, { authorization: 'basic ' + b64(`${c.id}:${c.secret}`) });
    t.equal(lower.statusCode, 200, 'the scheme name is case-insensitive: ' + lower.body);
  });

  t.test('INVALID_CLIENT: no Authorization header', async (t) => {
    assertTokenError(t, await tokenRequest(a, { authorization: null }), 401, 'invalid_client', 'INVALID_CLIENT', true);
  });

  t.test('INVALID_CLIENT: malformed Basic credentials', async (t) => {
    const c = await a.createClient(await a.createOrg(), { roles: 'member' });
    const cases: Record<string, string> = {
      'Bearer scheme': `Bearer ${b64(`${c.id}:${c.secret}`)}`,
      'empty Basic': 'Basic ',
      'not base64': 'Basic !!!not-base64!!!',
      'no colon': 'Basic ' + b64(`${c.id}${c.secret}`),
      'empty client id': 'Basic ' + b64(`:${c.secret}`),
      'bad percent-encoding': 'Basic ' + b64(`${c.id}%zz:${c.secret}`),
      'extra words': `Basic ${b64(`${c.id}:${c.secret}`)} extra`,
    };
    for (const [name, authorization] of Object.entries(cases)) {
      t.test(name, async (t) => {
        assertTokenError(t, await tokenRequest(a, { authorization }), 401, 'invalid_client', 'INVALID_CLIENT', true);
      });
    }
  });

  t.test('INVALID_CLIENT: unknown client id, wrong secret, empty secret', async (t) => {
    const c = await a.createClient(await a.createOrg(), { roles: 'member' });
    const other = await a.createClient(await a.createOrg(), { roles: 'member' });
    assertTokenError(t, await tokenRequest(a, { client: { id: 'apic_doesnotexist', secret: c.secret } }),
      401, 'invalid_client', 'INVALID_CLIENT', true);
    assertTokenError(t, await tokenRequest(a, { client: { id: c.id, secret: c.secret + 'x' } }),
      401, 'invalid_client', 'INVALID_CLIENT', true);
    assertTokenError(t, await tokenRequest(a, { client: { id: c.id, secret: other.secret } }),
      401, 'invalid_client', 'INVALID_CLIENT', true);
    assertTokenError(t, await tokenRequest(a, { client: { id: c.id, secret: '' } }),
      401, 'invalid_client', 'INVALID_CLIENT', true);
    // Same description for unknown id and wrong secret: no client enumeration.
    const unknown = await tokenRequest(a, { client: { id: 'apic_doesnotexist', secret: 'x' } });
    const wrong = await tokenRequest(a, { client: { id: c.id, secret: 'x' } });
    t.equal(unknown.json.error_description, wrong.json.error_description, 'unknown id and wrong secret are indistinguishable');
  });

  t.test('INVALID_CLIENT: revoked secret', async (t) => {
    const c = await a.createClient(await a.createOrg(), { roles: 'member' });
    const rotated = await a.cli('client', 'rotate-secret', '--client', c.id);
    await a.cli('client', 'revoke-secret', '--client', c.id, '--secret-id', c.secretId);
    assertTokenError(t, await tokenRequest(a, { client: c }), 401, 'invalid_client', 'INVALID_CLIENT', true);
    const fresh = await tokenRequest(a, { client: { id: c.id, secret: rotated.client_secret } });
    t.equal(fresh.statusCode, 200, 'the replacement secret still works: ' + fresh.body);
  });

  t.test('INVALID_CLIENT: deleted client', async (t) => {
    const c = await a.createClient(await a.createOrg(), { roles: 'member' });
    await a.cli('client', 'delete', '--client', c.id);
    assertTokenError(t, await tokenRequest(a, { client: c }), 401, 'invalid_client', 'INVALID_CLIENT', true);
  });

  t.test('CLIENT_DISABLED (401 invalid_client), and enable restores it', async (t) => {
    const c = await a.createClient(await a.createOrg(), { roles: 'member' });
    await a.cli('client', 'disable', '--client', c.id);
    const res = await tokenRequest(a, { client: c });
    assertTokenError(t, res, 401, 'invalid_client', 'CLIENT_DISABLED');
    t.ok(res.headers['www-authenticate'], 'a 401 carries WWW-Authenticate');
    await a.cli('client', 'enable', '--client', c.id);
    t.equal((await tokenRequest(a, { client: c })).statusCode, 200, 'enabled again');
  });

  t.test('LICENSE_INACTIVE (400 unauthorized_client): licence released', async (t) => {
    const c = await a.createClient(await a.createOrg(), { roles: 'member' });
    await a.cli('client', 'release-license', '--client', c.id);
    assertTokenError(t, await tokenRequest(a, { client: c }), 400, 'unauthorized_client', 'LICENSE_INACTIVE');
  });

  t.test('LICENSE_INACTIVE (400 unauthorized_client): org plan changed to team or trial', async (t) => {
    const org = await a.createOrg();
    const c = await a.createClient(org, { roles: 'member' });
    await a.cli('org', 'set-plan', '--org', org, '--plan', 'team');
    assertTokenError(t, await tokenRequest(a, { client: c }), 400, 'unauthorized_client', 'LICENSE_INACTIVE');
    await a.cli('org', 'set-plan', '--org', org, '--plan', 'trial');
    assertTokenError(t, await tokenRequest(a, { client: c }), 400, 'unauthorized_client', 'LICENSE_INACTIVE');
    await a.cli('org', 'set-plan', '--org', org, '--plan', 'enterprise');
    t.equal((await tokenRequest(a, { client: c })).statusCode, 200, 'an upgrade back restores the licence');
  });

  t.test('ORG_SUBSCRIPTION_INACTIVE (400 unauthorized_client): org suspended', async (t) => {
    const org = await a.createOrg();
    const c = await a.createClient(org, { roles: 'member' });
    await a.cli('org', 'set-status', '--org', org, '--status', 'suspended');
    assertTokenError(t, await tokenRequest(a, { client: c }), 400, 'unauthorized_client', 'ORG_SUBSCRIPTION_INACTIVE');
    await a.cli('org', 'set-status', '--org', org, '--status', 'active');
    t.equal((await tokenRequest(a, { client: c })).statusCode, 200, 'reactivated');
  });

  t.test('a restricted (not suspended) org still gets tokens', async (t) => {
    const org = await a.createOrg();
    const c = await a.createClient(org, { roles: 'member' });
    await a.cli('org', 'set-status', '--org', org, '--status', 'restricted');
    const res = await tokenRequest(a, { client: c });
    t.equal(res.statusCode, 200, res.body);
  });

  t.test('UNSUPPORTED_GRANT_TYPE: missing or wrong grant_type', async (t) => {
    const c = await a.createClient(await a.createOrg(), { roles: 'member' });
    for (const body of ['scope=svc.api', 'grant_type=&scope=svc.api', 'grant_type=password&scope=svc.api',
      'grant_type=authorization_code&scope=svc.api', 'grant_type=CLIENT_CREDENTIALS&scope=svc.api']) {
      t.test(body, async (t) => {
        assertTokenError(t, await tokenRequest(a, { client: c, body }), 400, 'unsupported_grant_type', 'UNSUPPORTED_GRANT_TYPE');
      });
    }
  });

  t.test('INVALID_SCOPE: missing, wrong, or more than svc.api', async (t) => {
    const c = await a.createClient(await a.createOrg(), { roles: 'member' });
    for (const body of ['grant_type=client_credentials', 'grant_type=client_credentials&scope=',
      'grant_type=client_credentials&scope=admin', 'grant_type=client_credentials&scope=svc.api+extra',
      'grant_type=client_credentials&scope=svc.api%20extra', 'grant_type=client_credentials&scope=SVC.API']) {
      t.test(body, async (t) => {
        assertTokenError(t, await tokenRequest(a, { client: c, body }), 400, 'invalid_scope', 'INVALID_SCOPE');
      });
    }
  });

  t.test('INVALID_REQUEST: JSON content type, repeated parameters', async (t) => {
    const c = await a.createClient(await a.createOrg(), { roles: 'member' });
    assertTokenError(t, await tokenRequest(a, {
      client: c, contentType: 'application/json', body: JSON.stringify({ grant_type: 'client_credentials', scope: 'svc.api' }),
    }), 400, 'invalid_request', 'INVALID_REQUEST');
    assertTokenError(t, await tokenRequest(a, { client: c, contentType: 'text/plain', body: GOOD_BODY }),
      400, 'invalid_request', 'INVALID_REQUEST');
    assertTokenError(t, await tokenRequest(a, { client: c, body: GOOD_BODY + '&grant_type=client_credentials' }),
      400, 'invalid_request', 'INVALID_REQUEST');
    assertTokenError(t, await tokenRequest(a, { client: c, body: GOOD_BODY + '&scope=svc.api' }),
      400, 'invalid_request', 'INVALID_REQUEST');
  });

  t.test('INVALID_REQUEST when hapi cannot parse the body: still OAuth JSON and no-store', async (t) => {
    const c = await a.createClient(await a.createOrg(), { roles: 'member' });
    const cases: Record<string, { contentType?: string; body: string }> = {
      'malformed JSON body': { contentType: 'application/json', body: '{not json' },
      'multipart form': {
        contentType: 'multipart/form-data; boundary=x',
        body: '--x\r\nContent-Disposition: form-data; name="grant_type"\r\n\r\nclient_credentials\r\n--x--\r\n',
      },
      'oversized form body': { body: 'grant_type=client_credentials&scope=svc.api&pad=' + 'a'.repeat(20_000) },
    };
    for (const [name, c2] of Object.entries(cases)) {
      t.test(name, async (t) => {
        assertTokenError(t, await tokenRequest(a, { client: c, ...c2 }), 400, 'invalid_request', 'INVALID_REQUEST');
      });
    }
  });

  t.test('GET /oauth/token -> 405 with Allow: POST', async (t) => {
    const res = await a.request({ method: 'GET', url: '/oauth/token' });
    t.equal(res.statusCode, 405);
    t.match(String(res.headers['content-type']), /^application\/json/);
    t.match(String(res.headers.allow ?? ''), /\bPOST\b/, 'Allow names POST (RFC 9110 §15.5.6)');
  });

  t.test('rotation: both secrets work, at most two active, revoke frees a slot', async (t) => {
    const c = await a.createClient(await a.createOrg(), { roles: 'member' });
    const second = await a.cli('client', 'rotate-secret', '--client', c.id);
    t.type(second.client_secret, 'string');
    t.not(second.client_secret, c.secret);
    t.not(second.secret_id, c.secretId);

    const t1 = await tokenRequest(a, { client: c });
    const t2 = await tokenRequest(a, { client: { id: c.id, secret: second.client_secret } });
    t.equal(t1.statusCode, 200, 'old secret works during rotation');
    t.equal(t2.statusCode, 200, 'new secret works during rotation');
    t.equal((await me(a, t1.json.access_token)).statusCode, 200);
    t.equal((await me(a, t2.json.access_token)).statusCode, 200);

    const err = await cliError(t, a.cli('client', 'rotate-secret', '--client', c.id));
    t.equal(err.error, 'TOO_MANY_ACTIVE_SECRETS', 'a third active secret is refused');

    await a.cli('client', 'revoke-secret', '--client', c.id, '--secret-id', c.secretId);
    assertTokenError(t, await tokenRequest(a, { client: c }), 401, 'invalid_client', 'INVALID_CLIENT', true);
    t.equal((await tokenRequest(a, { client: { id: c.id, secret: second.client_secret } })).statusCode, 200);
    assert401(t, await me(a, t1.json.access_token));
    t.equal((await me(a, t2.json.access_token)).statusCode, 200, 'tokens of the other secret keep working');

    const third = await a.cli('client', 'rotate-secret', '--client', c.id);
    t.equal((await tokenRequest(a, { client: { id: c.id, secret: third.client_secret } })).statusCode, 200,
      'after a revocation a new rotation succeeds');
    const revokeAgain = await cliError(t, a.cli('client', 'revoke-secret', '--client', c.id, '--secret-id', c.secretId));
    t.equal(revokeAgain.error, 'SECRET_NOT_FOUND', 'an already revoked secret cannot be revoked again');
  });
});

// ---------------------------------------------------------------------------------------------
t.test('per-request checks', async (t) => {
  const a = await startApp(t);

  t.test('missing token -> 401 INVALID_TOKEN with a Bearer challenge', async (t) => {
    assert401(t, await me(a));
  });

  t.test('garbage tokens and wrong schemes -> 401 INVALID_TOKEN', async (t) => {
    const p = await a.principal('member');
    for (const [name, authorization] of Object.entries({
      garbage: 'Bearer garbage',
      'three garbage parts': 'Bearer abc.def.ghi',
      'not token68': 'Bearer not a token!!',
      'empty bearer': 'Bearer ',
      'Basic scheme': basic(p.id, p.secret),
      'token without scheme': p.token,
    })) {
      t.test(name, async (t) => assert401(t, await me(a, undefined, { authorization })));
    }
  });

  t.test('tampered tokens -> 401 INVALID_TOKEN', async (t) => {
    const p = await a.principal('member');
    const victim = await a.principal('member,manager,finance,hr');
    t.equal((await me(a, p.token)).statusCode, 200, 'the untampered token works');
    const [h, payload, sig] = p.token.split('.') as [string, string, string];

    const i = 10; // a character in the middle of the signature (the last one may only carry padding bits)
    const flipped = sig.slice(0, i) + (sig[i] === 'A' ? 'B' : 'A') + sig.slice(i + 1);
    assert401(t, await me(a, `${h}.${payload}.${flipped}`));

    const claims = decodeJwt(p.token);
    const forged = Buffer.from(JSON.stringify({ ...claims, sub: victim.id, client_id: victim.id })).toString('base64url');
    assert401(t, await me(a, `${h}.${forged}.${sig}`), 'payload swapped to another client');

    assert401(t, await me(a, `${h}.${payload}.`), 'signature removed');
    assert401(t, await me(a, `${h}.${payload}`), 'two parts');
  });

  t.test('token signed by another key -> 401 INVALID_TOKEN', async (t) => {
    const p = await a.principal('member');
    const { kid } = decodeProtectedHeader(p.token);
    const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const sign = (k: string | undefined) => new SignJWT({ client_id: p.id, scope: 'svc.api', sid: p.secretId })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', ...(k ? { kid: k } : {}) })
      .setIssuer(a.config.issuer).setAudience(a.config.audience).setSubject(p.id)
      .setIssuedAt().setExpirationTime('1h').setJti(randomUUID())
      .sign(privateKey);
    assert401(t, await me(a, await sign(kid)), 'claiming the server\'s kid');
    assert401(t, await me(a, await sign('key_unknown')), 'unknown kid');
    assert401(t, await me(a, await sign(undefined)), 'no kid');

    const unsecured = new UnsecuredJWT({ client_id: p.id, scope: 'svc.api', sid: p.secretId })
      .setIssuer(a.config.issuer).setAudience(a.config.audience).setSubject(p.id)
      .setIssuedAt().setExpirationTime('1h').setJti(randomUUID()).encode();
    assert401(t, await me(a, unsecured), 'alg none');

    const hsKey = new TextEncoder().encode('x'.repeat(32));
    const hs = await new SignJWT({ client_id: p.id, scope: 'svc.api', sid: p.secretId })
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid })
      .setIssuer(a.config.issuer).setAudience(a.config.audience).setSubject(p.id)
      .setIssuedAt().setExpirationTime('1h').setJti(randomUUID()).sign(hsKey);
    assert401(t, await me(a, hs), 'HS256 with the server\'s kid');
  });

  t.test('expired token -> 401 INVALID_TOKEN', async (t) => {
    const c = await a.createClient(await a.createOrg(), { roles: 'member' });
    const control = tokenService(a);
    await control.init();
    const fresh = await control.issue(c.id, c.secretId, c.orgId);
    await record(a, c, fresh, new Date(Date.now() + 3600_000));
    t.equal((await me(a, fresh)).statusCode, 200, 'a token minted and recorded the same way but unexpired works');
    const expired = tokenService(a, { ttlSeconds: -10 });
    await expired.init();
    const token = await expired.issue(c.id, c.secretId, c.orgId);
    const claims = decodeJwt(token);
    t.ok(claims.exp! < Date.now() / 1000, 'exp is in the past');
    await record(a, c, token, new Date(Date.now() + 3600_000));
    assert401(t, await me(a, token));
  });

  t.test('wrong issuer or audience -> 401 INVALID_TOKEN', async (t) => {
    const c = await a.createClient(await a.createOrg(), { roles: 'member' });
    const otherIssuer = tokenService(a, { issuer: 'https://other.example' });
    await otherIssuer.init();
    assert401(t, await me(a, await otherIssuer.issue(c.id, c.secretId, c.orgId)), 'other issuer');
    const otherAudience = tokenService(a, { audience: 'https://other.example/v1' });
    await otherAudience.init();
    assert401(t, await me(a, await otherAudience.issue(c.id, c.secretId, c.orgId)), 'other audience');
  });

  t.test('server-signed tokens with wrong claims -> 401 INVALID_TOKEN', async (t) => {
    const c = await a.createClient(await a.createOrg(), { roles: 'member' });
    const other = await a.createClient(await a.createOrg(), { roles: 'member' });
    const key = serverKey(a);
    const sign = (claims: Record<string, unknown>, opts: { typ?: string; sub?: string; skip?: string[] } = {}) => {
      let j = new SignJWT({ client_id: c.id, scope: 'svc.api', sid: c.secretId, org: c.orgId, ...claims })
        .setProtectedHeader({ alg: 'EdDSA', typ: opts.typ ?? 'at+jwt', kid: key.kid })
        .setIssuer(a.config.issuer).setAudience(a.config.audience).setSubject(opts.sub ?? c.id);
      if (!opts.skip?.includes('iat')) j = j.setIssuedAt();
      if (!opts.skip?.includes('exp')) j = j.setExpirationTime('1h');
      if (!opts.skip?.includes('jti')) j = j.setJti(randomUUID());
      return j.sign(key.privateKey);
    };
    const wellFormed = await sign({});
    assert401(t, await me(a, wellFormed), 'signed with the server\'s key but never recorded by the token endpoint: refused');
    await record(a, c, wellFormed, new Date(Date.now() + 3600_000));
    t.equal((await me(a, wellFormed)).statusCode, 200, 'once recorded with the client\'s secret it works (the key is the server\'s)');
    assert401(t, await me(a, await sign({}, { typ: 'JWT' })), 'typ JWT, not at+jwt');
    assert401(t, await me(a, await sign({}, { sub: other.id })), 'sub differs from client_id');
    assert401(t, await me(a, await sign({ client_id: other.id, sid: other.secretId }, { sub: c.id })), 'client_id differs from sub');
    assert401(t, await me(a, await sign({ scope: 'svc.admin' })), 'other scope');
    assert401(t, await me(a, await sign({ sid: undefined })), 'no secret id');
    assert401(t, await me(a, await sign({ sid: other.secretId })), 'another client\'s secret id');
    assert401(t, await me(a, await sign({}, { skip: ['exp'] })), 'no exp');
    assert401(t, await me(a, await sign({}, { skip: ['jti'] })), 'no jti');
    assert401(t, await me(a, await sign({}, { skip: ['iat'] })), 'no iat');
    assert401(t, await me(a, await sign({ client_id: 'apic_doesnotexist' }, { sub: 'apic_doesnotexist' })), 'unknown client');
  });

  t.test('disable -> 401 CLIENT_DISABLED, enable -> 200 again (same token)', async (t) => {
    const p = await a.principal('member');
    t.equal((await me(a, p.token)).statusCode, 200);
    await a.cli('client', 'disable', '--client', p.id);
    assert401(t, await me(a, p.token), 'disabled', 'CLIENT_DISABLED');
    const res = await me(a, p.token);
    t.equal(res.json.code, 'CLIENT_DISABLED');
    await a.cli('client', 'enable', '--client', p.id);
    const back = await me(a, p.token);
    t.equal(back.statusCode, 200, back.body);
  });

  t.test('revoking the secret a token was minted with -> 401 INVALID_TOKEN', async (t) => {
    const p = await a.principal('member');
    const second = await a.cli('client', 'rotate-secret', '--client', p.id);
    const t2 = await a.token({ id: p.id, secret: second.client_secret });
    await a.cli('client', 'revoke-secret', '--client', p.id, '--secret-id', p.secretId);
    assert401(t, await me(a, p.token));
    t.equal((await me(a, t2)).statusCode, 200, 'a token of the other secret still works');
  });

  t.test('licence released -> 403 LICENSE_INACTIVE', async (t) => {
    const p = await a.principal('member');
    await a.cli('client', 'release-license', '--client', p.id);
    assertProblem(t, await me(a, p.token), 403, 'LICENSE_INACTIVE');
  });

  t.test('plan changed to trial or team -> 403 LICENSE_INACTIVE; back to business -> 200', async (t) => {
    const p = await a.principal('member');
    await a.cli('org', 'set-plan', '--org', p.orgId, '--plan', 'trial');
    assertProblem(t, await me(a, p.token), 403, 'LICENSE_INACTIVE');
    await a.cli('org', 'set-plan', '--org', p.orgId, '--plan', 'team');
    assertProblem(t, await me(a, p.token), 403, 'LICENSE_INACTIVE');
    await a.cli('org', 'set-plan', '--org', p.orgId, '--plan', 'business');
    t.equal((await me(a, p.token)).statusCode, 200);
  });

  t.test('org suspended -> 403 ORG_SUBSCRIPTION_INACTIVE; active again -> 200', async (t) => {
    const p = await a.principal('member');
    await a.cli('org', 'set-status', '--org', p.orgId, '--status', 'suspended');
    assertProblem(t, await me(a, p.token), 403, 'ORG_SUBSCRIPTION_INACTIVE');
    assertProblem(t, await a.request({ url: '/v1/members', token: p.token }), 403, 'ORG_SUBSCRIPTION_INACTIVE');
    await a.cli('org', 'set-status', '--org', p.orgId, '--status', 'active');
    t.equal((await me(a, p.token)).statusCode, 200);
  });

  t.test('org restricted -> still 200 (restricted limits the org elsewhere, it does not deny API access)', async (t) => {
    const p = await a.principal('member');
    await a.cli('org', 'set-status', '--org', p.orgId, '--status', 'restricted');
    const res = await me(a, p.token);
    t.equal(res.statusCode, 200, res.body);
    const org = await a.request({ url: '/v1/organization', token: p.token });
    t.equal(org.statusCode, 200, org.body);
    t.equal(org.json.status, 'restricted');
  });

  t.test('deleted client -> 401 INVALID_TOKEN', async (t) => {
    const p = await a.principal('member');
    await a.cli('client', 'delete', '--client', p.id);
    assert401(t, await me(a, p.token));
  });

  t.test('role changes take effect on the very next request with the same token', async (t) => {
    const p = await a.principal('member,manager');
    const r1 = await me(a, p.token);
    t.same([...r1.json.svc_roles].sort(), ['manager', 'member']);
    await a.cli('client', 'set-roles', '--client', p.id, '--roles', 'finance,hr');
    const r2 = await me(a, p.token);
    t.equal(r2.statusCode, 200);
    t.same([...r2.json.svc_roles].sort(), ['finance', 'hr'], '/v1/me reflects set-roles immediately');
    await a.cli('client', 'set-roles', '--client', p.id, '--roles', 'member');
    t.same((await me(a, p.token)).json.svc_roles, ['member']);
  });

  t.test('member,manager -> finance: the finance-only projection on the next request', async (t) => {
    const p = await a.principal('member,manager');
    await a.addMember(p.orgId, 'ada@example.com', { name: 'Ada', roles: 'member,manager', jobTitle: 'Engineer' });
    const before = await a.request({ url: '/v1/members', token: p.token });
    t.equal(before.statusCode, 200, before.body);
    const ada1 = before.json.data.find((m: any) => m.id === 'ada@example.com');
    t.ok(ada1, 'member listed');
    t.equal(ada1.job_title, 'Engineer', 'work-profile fields with member/manager');
    t.ok('svc_roles' in ada1 && 'timezone' in ada1);
    t.notOk('employee_number' in ada1, 'no HR fields without hr');

    await a.cli('client', 'set-roles', '--client', p.id, '--roles', 'finance');
    const after = await a.request({ url: '/v1/members', token: p.token });
    t.equal(after.statusCode, 200, after.body);
    const ada2 = after.json.data.find((m: any) => m.id === 'ada@example.com');
    t.ok(ada2, 'member still listed');
    t.same(Object.keys(ada2).sort(), ['display_name', 'email', 'id', 'object', 'status'], 'only the basic fields');
    t.notOk('job_title' in ada2, 'no job_title for finance');

    const one = await a.request({ url: '/v1/members/ada%40example.com', token: p.token });
    t.equal(one.statusCode, 200, one.body);
    t.notOk('job_title' in one.json, 'getMember applies the same projection');

    assertProblem(t, await a.request({ url: '/v1/members?role=manager', token: p.token }), 403, 'ROLE_REQUIRED');
  });
});

// ---------------------------------------------------------------------------------------------
t.test('licence rules (control plane, enforced in SQL)', async (t) => {
  const a = await startApp(t);

  t.test('a regular licence may hold only member', async (t) => {
    const org = await a.createOrg();
    const err = await cliError(t, a.createClient(org, { license: 'regular', roles: 'member,manager' }));
    t.equal(err.error, 'INVALID_VALUE');
    t.equal(err.constraint, 'api_clients_roles_allowed_by_license');
    for (const roles of ['finance', 'hr', 'manager']) {
      const e = await cliError(t, a.createClient(org, { license: 'regular', roles }));
      t.equal(e.constraint, 'api_clients_roles_allowed_by_license', `regular + ${roles}`);
    }
    const ok = await a.createClient(org, { license: 'regular', roles: 'member' });
    const tok = await a.token(ok);
    const res = await me(a, tok);
    t.equal(res.statusCode, 200, res.body);
    t.equal(res.json.license.level, 'regular');
    t.equal(res.json.license.source, 'purchased');
    t.same(res.json.svc_roles, ['member']);

    const setRoles = await cliError(t, a.cli('client', 'set-roles', '--client', ok.id, '--roles', 'member,manager'));
    t.equal(setRoles.constraint, 'api_clients_roles_allowed_by_license', 'set-roles is held to the same rule');
  });

  t.test('roles outside member/manager/finance/hr cannot be held', async (t) => {
    const org = await a.createOrg();
    for (const roles of ['admin', 'owner', 'member,admin']) {
      const e = await cliError(t, a.createClient(org, { license: 'manager', roles }));
      t.equal(e.error, 'INVALID_VALUE', roles);
    }
  });

  t.test('trial and team organizations cannot create clients', async (t) => {
    for (const plan of ['trial', 'team']) {
      const org = await a.createOrg({ plan });
      const err = await cliError(t, a.createClient(org, { license: 'manager', roles: 'member' }));
      t.equal(err.error, 'PLAN_DOES_NOT_SUPPORT_API_CLIENTS', plan);
      const reg = await cliError(t, a.createClient(org, { license: 'regular', roles: 'member' }));
      t.equal(reg.error, 'PLAN_DOES_NOT_SUPPORT_API_CLIENTS', `${plan}, regular`);
    }
  });

  t.test('the first manager client is included, the second purchased', async (t) => {
    const org = await a.createOrg({ plan: 'enterprise' });
    const first = await a.createClient(org, { license: 'manager', roles: 'member,manager' });
    const second = await a.createClient(org, { license: 'manager', roles: 'member,manager' });
    const r1 = await me(a, await a.token(first));
    const r2 = await me(a, await a.token(second));
    t.equal(r1.statusCode, 200, r1.body);
    t.same(r1.json.license, { level: 'manager', source: 'included', status: 'active' });
    t.same(r2.json.license, { level: 'manager', source: 'purchased', status: 'active' });
  });

  t.test('owner SQL cannot give a regular client the manager Role (check violation 23514)', async (t) => {
    const org = await a.createOrg();
    await a.createClient(org, { license: 'regular', roles: 'member' });
    let code: string | undefined;
    let constraint: string | undefined;
    try {
      await a.admin`update app.api_clients set svc_roles='{manager}' where license_level='regular'`;
    } catch (e: any) {
      code = e.code;
      // (On Citus the shard's error names it in its message only.)
      constraint = constraintNamed(e);
    }
    t.equal(code, '23514', 'check_violation');
    t.equal(constraint, 'api_clients_roles_allowed_by_license');
    const [row] = await a.admin`select count(*)::int as n from app.api_clients where license_level = 'regular' and svc_roles <> '{member}'`;
    t.equal(row!.n, 0, 'nothing changed');
  });
});

// ---------------------------------------------------------------------------------------------
t.test('401 resource responses carry a Bearer challenge', async (t) => {
  const a = await startApp(t);
  for (const url of ['/v1/me', '/v1/organization', '/v1/members', '/v1/members/x%40example.com']) {
    const res = await a.request({ url });
    assert401(t, res);
    t.match(String(res.headers['www-authenticate']), /^Bearer realm=/, `${url}: Bearer realm=...`);
    const bad = await a.request({ url, token: 'bad.token.value' });
    assert401(t, bad);
    t.match(String(bad.headers['www-authenticate']), /error="invalid_token"/, `${url}: error="invalid_token" for a bad token`);
  }
});

t.test('token endpoint: credentials holding U+0000 are invalid, not a server error', async (t) => {
  const a = await startApp(t);
  for (const [id, secret] of [['apic_a%00b', 'x'], ['\u0000', 'x'], ['apic_x', 'x%00y']]) {
    const res = await a.request({ method: 'POST', url: '/oauth/token', payload: 'grant_type=client_credentials&scope=svc.api',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64') } });
    t.equal(res.statusCode, 401, `${JSON.stringify(id)}:${JSON.stringify(secret)}`);
    t.equal(res.json?.code, 'INVALID_CLIENT');
  }
});
