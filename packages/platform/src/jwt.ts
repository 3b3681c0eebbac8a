/**
 * Access-token verification shared by the identity service and the gateway, so both accept
 * exactly the same tokens: only the configured asymmetric algorithm, a known `kid`, the right
 * issuer and audience, exp/nbf with bounded skew, and the claims DESIGN §2 names.
 */
import { type CryptoKey, type JWK, type JWTHeaderParameters, errors as joseErrors, importJWK, jwtVerify } from 'jose';
import { AppError } from './errors';

export const JWT_ALGS = ['EdDSA', 'ES256', 'RS256'] as const;
export type JwtAlg = (typeof JWT_ALGS)[number];

export interface AccessClaims {
  readonly sub: string;
  readonly jti: string;
  readonly iss: string;
  readonly aud: string[];
  readonly iat: number;
  readonly nbf: number;
  readonly exp: number;
  readonly email: string;
  readonly roles: string[];
  readonly permissions: string[];
  /** The sign-in (session) the token comes from; absent on tokens of no session. */
  readonly sid?: string;
  /** RFC 9068: the OAuth client the token was issued to; absent on REST login tokens. */
  readonly clientId?: string;
  /** How the user authenticated (RFC 8176: pwd, otp, mfa, ...). */
  readonly amr?: string[];
  /** When the user last authenticated (seconds since the epoch). */
  readonly authTime?: number;
  /** RFC 9449: the JWK SHA-256 thumbprint the token is bound to (`cnf.jkt`); a DPoP proof of that key must come with it. */
  readonly cnfJkt?: string;
  /** RFC 9068: the OAuth scope the provider granted (its tokens only; REST login tokens have none). */
  readonly scope?: string;
  /**
   * An organization token (issue #41): the organization it was issued for. Its `permissions` are
   * the member's there, so they count on that organization's routes only: hasPermission and
   * isAdministrator, the platform's policies, are false for it.
   */
  readonly org?: { readonly id: string; readonly slug: string };
}

export interface VerifyOptions {
  readonly alg: JwtAlg;
  readonly issuer: string;
  readonly audience: string;
  /** Allowed clock skew in seconds (≤ 30 by DESIGN §2). */
  readonly skewSeconds?: number;
}

/** Finds the public key for a kid; undefined when unknown (the token is refused). */
export type KeyLookup = (kid: string) => Promise<CryptoKey | undefined>;

const MAX_TOKEN_LENGTH = 8_192;

/** Verifies an access token; any failure is UNAUTHENTICATED with a generic detail. */
export async function verifyAccessToken(token: string, lookup: KeyLookup, opts: VerifyOptions): Promise<AccessClaims> {
  const invalid = (detail = 'The access token is invalid or expired.') => AppError.unauthenticated(detail);
  if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH || token.split('.').length !== 3) throw invalid();
  try {
    const { payload } = await jwtVerify(
      token,
      async (header: JWTHeaderParameters) => {
        if (header.alg !== opts.alg || typeof header.kid !== 'string') throw new joseErrors.JOSEAlgNotAllowed('algorithm or kid not accepted');
        const key = await lookup(header.kid);
        if (!key) throw new joseErrors.JWKSNoMatchingKey();
        return key;
      },
      {
        algorithms: [opts.alg],
        issuer: opts.issuer,
        audience: opts.audience,
        clockTolerance: Math.min(opts.skewSeconds ?? 30, 30),
        requiredClaims: ['sub', 'jti', 'iat', 'nbf', 'exp'],
      },
    );
    const strings = (v: unknown): string[] | null => (Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : null);
    const roles = strings(payload.roles);
    const permissions = strings(payload.permissions);
    if (typeof payload.sub !== 'string' || typeof payload.jti !== 'string' || typeof payload.email !== 'string' || !roles || !permissions) throw invalid();
    const amr = payload.amr === undefined ? undefined : strings(payload.amr);
    const authTime = payload.auth_time;
    const clientId = payload.client_id;
    if (
      amr === null ||
      (authTime !== undefined && typeof authTime !== 'number') ||
      (payload.sid !== undefined && typeof payload.sid !== 'string') ||
      (clientId !== undefined && typeof clientId !== 'string') ||
      (payload.scope !== undefined && typeof payload.scope !== 'string')
    )
      throw invalid();
    const org = payload.org === undefined ? undefined : orgClaim(payload.org);
    // An organization token names its organization twice: the claim and an audience of it.
    if (org === null || (org && !(Array.isArray(payload.aud) && payload.aud.includes(organizationAudience(org.id))))) throw invalid();
    const cnf = payload.cnf;
    let cnfJkt: string | undefined;
    if (cnf !== undefined) {
      // A confirmation this verifier cannot check (not a DPoP key thumbprint) is refused, never ignored.
      const jkt = typeof cnf === 'object' && cnf !== null && !Array.isArray(cnf) && Object.keys(cnf).length === 1 && 'jkt' in cnf ? cnf.jkt : undefined;
      if (typeof jkt !== 'string' || jkt.length === 0) throw invalid();
      cnfJkt = jkt;
    }
    return {
      sub: payload.sub,
      jti: payload.jti,
      iss: payload.iss!,
      aud: typeof payload.aud === 'string' ? [payload.aud] : (payload.aud ?? []),
      iat: payload.iat!,
      nbf: payload.nbf!,
      exp: payload.exp!,
      email: payload.email,
      roles,
      permissions,
      ...(typeof payload.sid === 'string' ? { sid: payload.sid } : {}),
      ...(typeof clientId === 'string' ? { clientId } : {}),
      ...(amr ? { amr } : {}),
      ...(typeof authTime === 'number' ? { authTime } : {}),
      ...(cnfJkt ? { cnfJkt } : {}),
      ...(typeof payload.scope === 'string' ? { scope: payload.scope } : {}),
      ...(org ? { org } : {}),
    };
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw invalid();
  }
}

const ORG_ID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The `org` claim `{id, slug}`, or null when it is anything else (the token is then refused). */
function orgClaim(v: unknown): { id: string; slug: string } | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  if (Object.keys(o).length !== 2 || typeof o.id !== 'string' || !ORG_ID_RE.test(o.id) || typeof o.slug !== 'string' || o.slug.length === 0 || o.slug.length > 63) return null;
  return { id: o.id, slug: o.slug };
}

/** Imports a public JWK for the configured algorithm (a key of another type is refused). */
export async function importPublicJwk(jwk: JWK, alg: JwtAlg): Promise<CryptoKey> {
  const key = await importJWK({ ...jwk, alg }, alg);
  if (key instanceof Uint8Array) throw new Error('symmetric keys are not accepted');
  return key;
}

/**
 * Subject-level revocation: after a user's tokens are revoked at `notBefore`, the first `iat`
 * (whole seconds) still accepted. Identity issues no token older than it; identity and every
 * gateway refuse any older one. A token of the same second as the revocation counts as older.
 */
export function firstAcceptedIat(notBefore: Date): number {
  return Math.ceil(notBefore.getTime() / 1000);
}

/** The built-in role that passes every policy (DESIGN §3). */
export const ADMINISTRATOR_ROLE = 'Administrator';

/** Whether the principal holds the Administrator role. */
export function isAdministrator(claims: { readonly roles: readonly string[]; readonly org?: unknown }): boolean {
  return claims.org === undefined && claims.roles.includes(ADMINISTRATOR_ROLE);
}

/** Whether the principal passes a policy: the permission itself, or the Administrator role. */
export function hasPermission(claims: Pick<AccessClaims, 'roles' | 'permissions' | 'org'>, permission: string): boolean {
  // An organization token's permissions are the member's in that organization, never the platform's.
  if (claims.org !== undefined) return false;
  return isAdministrator(claims) || claims.permissions.includes(permission);
}

/** The audience an organization token carries beside the API's (issue #41): `urn:iam:organization:<id>`. */
export function organizationAudience(organizationId: string): string {
  return `urn:iam:organization:${organizationId}`;
}
