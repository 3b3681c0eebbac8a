/**
 * Access tokens over the key ring: issued with the key that signs now, verified with the key
 * their kid names. The ring (key-ring.ts) keeps, rotates and publishes the keys; this file only
 * makes and checks tokens.
 */
import { type AccessClaims, type JwtAlg, firstAcceptedIat, organizationAudience, verifyAccessToken } from '@iam/platform';
import type { CryptoKey } from 'jose';
import { type KeyObject, randomUUID, sign } from 'node:crypto';
import type { Principal } from '../domain/model';
import type { OrganizationClaim, TokenService, TokenSession } from '../domain/ports';

/** A key that signs now, with the JWS protected header `{alg, kid, typ}` it signs every token with (base64url). */
export interface SigningKey {
  readonly kid: string;
  readonly alg: JwtAlg;
  readonly privateKey: KeyObject;
  readonly header: string;
}

/** What tokens need of the key ring. */
export interface SigningKeys {
  /** The algorithm tokens are signed and accepted in. */
  readonly alg: JwtAlg;
  /** The key that signs now; throws when there is none. */
  signingKey(now: Date): Promise<SigningKey>;
  /** The public key named by a token's kid; undefined for an unknown one. */
  publicKey(kid: string): Promise<CryptoKey | undefined>;
}

export interface TokenSettings {
  /** Access-token lifetime (s). */
  readonly tokenLifetimeSeconds: number;
  readonly issuer: string;
  readonly audience: string;
}

/**
 * A compact JWS (RFC 7515) signed with node:crypto in the calling thread. jose signs through
 * WebCrypto, whose promise goes through the thread pool: on a refresh that was the largest cost
 * of identity's own code (a `--cpu-prof` under load, bench/README.md). Tokens are the same:
 * EdDSA (Ed25519), ES256 with the raw r‖s signature (`ieee-p1363`, RFC 7518 §3.4), RS256 PKCS#1 v1.5.
 */
export function signJws(alg: JwtAlg, key: KeyObject, header: string, payload: object): string {
  const input = `${header}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  const data = Buffer.from(input);
  const signature =
    alg === 'EdDSA' ? sign(null, data, key) : alg === 'ES256' ? sign('sha256', data, { key, dsaEncoding: 'ieee-p1363' }) : sign('sha256', data, key);
  return `${input}.${signature.toString('base64url')}`;
}

export class JwtTokenService implements TokenService {
  constructor(
    private readonly keys: SigningKeys,
    private readonly settings: TokenSettings,
  ) {}

  async issue(p: Principal, opts: { notBefore?: Date | null; session?: TokenSession; jti?: string; org?: OrganizationClaim } = {}): Promise<{ token: string; jti: string; expiresAt: Date }> {
    const now = new Date();
    const key = await this.keys.signingKey(now);
    const jti = opts.jti ?? randomUUID();
    // A token issued just after its subject was revoked (in the same second) must not look older
    // than the revocation: its iat is moved up to the next whole second (gateways allow 30 s skew).
    const iat = Math.max(Math.floor(now.getTime() / 1000), opts.notBefore ? firstAcceptedIat(opts.notBefore) : 0);
    const exp = iat + this.settings.tokenLifetimeSeconds;
    // sid, amr (RFC 8176) and auth_time: the sign-in the token comes from (its session).
    const session = opts.session ? { sid: opts.session.sid, amr: [...opts.session.amr], auth_time: Math.floor(opts.session.authTime.getTime() / 1000) } : {};
    // An organization token: its organization, an audience of it beside the API's, no platform roles.
    const org = opts.org ? { org: { id: opts.org.id, slug: opts.org.slug } } : {};
    const aud = opts.org ? [this.settings.audience, organizationAudience(opts.org.id)] : this.settings.audience;
    const roles = opts.org ? [] : [...p.roles];
    const payload = { email: p.email, roles, permissions: [...p.permissions], iss: this.settings.issuer, aud, sub: p.userId, jti, iat, nbf: iat, exp, ...session, ...org };
    const token = signJws(key.alg, key.privateKey, key.header, payload);
    return { token, jti, expiresAt: new Date(exp * 1000) };
  }

  verify(token: string): Promise<AccessClaims> {
    return verifyAccessToken(token, (kid) => this.keys.publicKey(kid), { alg: this.keys.alg, issuer: this.settings.issuer, audience: this.settings.audience });
  }
}
