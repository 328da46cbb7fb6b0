// Access tokens: RFC 9068 JWTs signed with Ed25519 keys that live (sealed) in the database,
// so every instance shares them and they survive restarts.
import { SignJWT, jwtVerify, generateKeyPair, exportJWK, importJWK, decodeProtectedHeader, errors as joseErrors } from 'jose';
import { hash, randomUUID } from 'node:crypto';
import { api, type SetRow } from '../db/api.ts';
import type { Db } from '../db/database.ts';
import { seal, unseal, deriveKey } from './sealing.ts';

const ALG = 'EdDSA';
/** Verified tokens are remembered (until their expiry) so a token reused for an hour is
 * verified once, not on every request: signature checks are the largest CPU cost per call. */
const VERIFIED_CACHE_SIZE = 10_000;

export interface TokenClaims { clientId: string; secretId: string; organizationId: string; jti: string }
/** Verified claims, with the token's SHA-256 (hex), which is what the database knows the token by:
 * hashed once per token, not once per request. */
export type VerifiedToken = TokenClaims & { tokenSha256: string };

type Key = Awaited<ReturnType<typeof importJWK>>;
interface LoadedKey { kid: string; publicKey: Key; privateKey: Key }

export async function newSigningKey(master: Buffer) {
  const { publicKey, privateKey } = await generateKeyPair(ALG, { crv: 'Ed25519', extractable: true });
  const kid = `key_${new Date().toISOString().slice(0, 10).replace(/-/g, '')}_${randomUUID().slice(0, 8)}`;
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: 'sig' };
  const privateJwk = await exportJWK(privateKey);
  return { kid, alg: ALG, publicJwk, sealed: seal(deriveKey(master, 'signing-keys'), JSON.stringify(privateJwk)) };
}

export class TokenService {
  private keys = new Map<string, LoadedKey>();
  private current: LoadedKey | undefined;
  private loadedAt = 0;
  private loading: Promise<void> | undefined;
  private verified = new Map<string, VerifiedToken & { exp: number; kid: string }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly opts: { issuer: string; audience: string; ttlSeconds: number; masterKey: Buffer;
      /** How often every instance re-reads the shared keys: rotations and retirements reach it within this. */
      refreshMs: number },
  ) {}

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Loads the shared keys, creating the first one if the database has none. */
  async init(): Promise<void> {
    await this.reload();
    if (!this.current) {
      const k = await newSigningKey(this.opts.masterKey);
      await api.value('signing_key_bootstrap', k.kid, k.alg, k.publicJwk, k.sealed).execute(this.db);
      await this.reload();
    }
    if (!this.current) throw new Error('no signing key available');
    // In the background, so no request waits for it; a failed read keeps the keys it has.
    this.timer ??= setInterval(() => { this.reload().catch(() => {}); }, this.opts.refreshMs);
    this.timer.unref();
  }

  private async reload(): Promise<void> {
    this.loading ??= (async () => {
      const { rows } = await api.rows('signing_keys_current').$castTo<SetRow<'signing_keys_current'>>().execute(this.db);
      const keys = new Map<string, LoadedKey>();
      const sealKey = deriveKey(this.opts.masterKey, 'signing-keys');
      for (const r of rows) {
        const existing = this.keys.get(r.kid);
        if (existing) { keys.set(r.kid, existing); continue; }
        const privateJwk = JSON.parse(unseal(sealKey, r.private_jwk_sealed));
        keys.set(r.kid, {
          kid: r.kid,
          publicKey: await importJWK({ ...(r.public_jwk as Record<string, unknown>), alg: ALG }, ALG),
          privateKey: await importJWK({ ...privateJwk, alg: ALG }, ALG),
        });
      }
      this.keys = keys;
      // A retired key's tokens must stop working: forget what they verified.
      for (const [token, c] of this.verified) if (!keys.has(c.kid)) this.verified.delete(token);
      this.current = rows[0] ? keys.get(rows[0].kid) : undefined;
      this.loadedAt = Date.now();
    })().finally(() => { this.loading = undefined; });
    return this.loading;
  }

  /** A signed access token. It works only once its SHA-256 is recorded (api.access_token_record). */
  async issue(clientId: string, secretId: string, organizationId: string): Promise<string> {
    const key = this.current!;
    return new SignJWT({ client_id: clientId, scope: 'svc.api', sid: secretId, org: organizationId })
      .setProtectedHeader({ alg: ALG, typ: 'at+jwt', kid: key.kid })
      .setIssuer(this.opts.issuer)
      .setAudience(this.opts.audience)
      .setSubject(clientId)
      .setIssuedAt()
      .setExpirationTime(`${this.opts.ttlSeconds}s`)
      .setJti(randomUUID())
      .sign(key.privateKey);
  }

  /** Signature, issuer, audience, expiry and client id; returns undefined for any failure. */
  async verify(token: string): Promise<VerifiedToken | undefined> {
    const cached = this.verified.get(token);
    if (cached) {
      if (cached.exp > Date.now() / 1000) {
        return { clientId: cached.clientId, secretId: cached.secretId, organizationId: cached.organizationId, jti: cached.jti, tokenSha256: cached.tokenSha256 };
      }
      this.verified.delete(token);
      return undefined;
    }
    const claims = await this.verifySignature(token);
    if (claims) {
      if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(token, claims);
      return { clientId: claims.clientId, secretId: claims.secretId, organizationId: claims.organizationId, jti: claims.jti, tokenSha256: claims.tokenSha256 };
    }
    return undefined;
  }

  private async verifySignature(token: string): Promise<(VerifiedToken & { exp: number; kid: string }) | undefined> {
    let kid: string | undefined;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      return undefined;
    }
    if (!kid) return undefined;
    let key = this.keys.get(kid);
    if (!key && Date.now() - this.loadedAt > 1000) {
      // A key rotated in by another instance: reload at most once a second.
      await this.reload();
      key = this.keys.get(kid);
    }
    if (!key) return undefined;
    try {
      const { payload } = await jwtVerify(token, key.publicKey, {
        issuer: this.opts.issuer,
        audience: this.opts.audience,
        algorithms: [ALG],
        typ: 'at+jwt',
        requiredClaims: ['exp', 'iat', 'jti', 'sub', 'client_id'],
      });
      const clientId = payload.client_id;
      if (typeof clientId !== 'string' || clientId !== payload.sub || typeof payload.sid !== 'string') return undefined;
      if (typeof payload.org !== 'string' || payload.scope !== 'svc.api') return undefined;
      return { clientId, secretId: payload.sid, organizationId: payload.org, jti: payload.jti!, exp: payload.exp!, kid,
        tokenSha256: hash('sha256', token, 'hex') };
    } catch (e) {
      if (e instanceof joseErrors.JOSEError) return undefined;
      throw e;
    }
  }
}
