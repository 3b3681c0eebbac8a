import { type AccessClaims, AppError, type JwtAlg, verifyAccessToken } from '@iam/platform/core';
import type { Denylist } from './denylist';
import { DPOP_ALGS, DpopError, type DpopVerifier, MemoryReplayStore, ReplayStoreUnavailable, createDpopVerifier } from './dpop';
import type { JwksCache } from './jwks';
import { type OpaqueTokenCache, looksOpaque } from './opaque-tokens';

/** What a request presents: its Authorization and DPoP headers, method and URIs (for `htu`). */
export interface PresentedCredentials {
  readonly authorization: string | undefined;
  readonly dpop: string | string[] | undefined;
  readonly method: string;
  /** The request's URI as it reached the gateway (scheme, host, path; no query). */
  readonly requestUrl: string;
  /** The request's path (no query): the public URL's origin + path is accepted as `htu` too. */
  readonly path: string;
}

export interface Authenticator {
  /**
   * Verifies a bearer token: a JWT locally (signature, alg, kid, iss, aud, exp/nbf), one of the
   * provider's opaque access tokens by asking identity (cached a few seconds); both against the denylist.
   */
  verify(token: string): Promise<AccessClaims>;
  /** Checks the DPoP proofs of bound tokens; without it a bound token is refused. */
  readonly dpop?: { readonly verifier: DpopVerifier; /** PUBLIC_URL: a proof may name it as its `htu` origin. */ readonly publicUrl?: string };
}

const CACHE_LIMIT = 10_000;
const SCHEME_RE = /^(Bearer|DPoP)[ ]+([A-Za-z0-9._~+/-]+=*)\s*$/i;

/** UNAUTHENTICATED for a DPoP refusal: the errors plugin answers `WWW-Authenticate: DPoP error="…"` from its reason. */
export function dpopRefusal(code: DpopError['code'], detail: string): AppError {
  return new AppError('UNAUTHENTICATED', detail, { reason: code === 'invalid_dpop_proof' ? 'dpop.invalid_dpop_proof' : 'dpop.invalid_token' });
}

/** The WWW-Authenticate challenge of a DPoP refusal (RFC 9449 §7.1), by its reason; undefined for any other error. */
export function dpopChallenge(reason: string | undefined): string | undefined {
  if (reason !== 'dpop.invalid_dpop_proof' && reason !== 'dpop.invalid_token') return undefined;
  return `DPoP error="${reason.slice('dpop.'.length)}", algs="${DPOP_ALGS.join(' ')}"`;
}

/**
 * A token whose signature and claims were verified once is remembered (by its exact text) until
 * it expires, so a client's repeated calls skip the signature check; expiry, the denylist and a
 * bound token's DPoP proof are checked on every call. The provider's opaque access tokens go to
 * identity through `opaque` (absent: refused).
 */
export function createAuthenticator(opts: {
  jwks: JwksCache;
  denylist: Denylist;
  alg: JwtAlg;
  issuer: string;
  audience: string;
  dpop?: DpopVerifier;
  /** PUBLIC_URL: a proof may name it as its `htu` origin. */
  publicUrl?: string;
  /** The provider's opaque access tokens, asked of identity. */
  opaque?: OpaqueTokenCache;
}): Authenticator {
  const verified = new Map<string, AccessClaims>();
  const verify = async (token: string): Promise<AccessClaims> => {
    if (opts.opaque && looksOpaque(token)) {
      const claims = await opts.opaque.claims(token);
      if (opts.denylist.refuses(claims)) throw AppError.unauthenticated('The access token has been revoked.');
      return claims;
    }
    let claims = verified.get(token);
    if (!claims || claims.exp * 1000 <= Date.now() - 30_000) {
      verified.delete(token);
      claims = await verifyAccessToken(token, (kid) => opts.jwks.key(kid), {
        alg: opts.alg,
        issuer: opts.issuer,
        audience: opts.audience,
        skewSeconds: 30,
      });
      if (verified.size >= CACHE_LIMIT) verified.delete(verified.keys().next().value!);
      verified.set(token, claims);
    }
    if (opts.denylist.refuses(claims)) throw AppError.unauthenticated('The access token has been revoked.');
    return claims;
  };
  return { verify, dpop: { verifier: opts.dpop ?? createDpopVerifier({ replay: new MemoryReplayStore() }), publicUrl: opts.publicUrl } };
}

/**
 * Verifies a request's credentials: `Bearer <token>`, or `DPoP <token>` with its proof. A token
 * bound to a key (`cnf.jkt`) is accepted only as DPoP with a valid, unused proof of that key
 * (RFC 9449 §7.1, §7.2); any failure is UNAUTHENTICATED (a DPoP one with reason `dpop.<error code>`),
 * except a proof whose id the replay store cannot record: UNAVAILABLE (503, Retry-After), refused.
 */
export async function verifyRequest(auth: Authenticator, c: PresentedCredentials): Promise<{ token: string; claims: AccessClaims }> {
  const m = SCHEME_RE.exec(c.authorization ?? '');
  if (!m) throw AppError.unauthenticated('The Authorization header must be "Bearer <token>" or "DPoP <token>".');
  const asDpop = m[1]!.toLowerCase() === 'dpop';
  const token = m[2]!;
  const claims = await auth.verify(token);
  if (!claims.cnfJkt) {
    if (asDpop) throw dpopRefusal('invalid_token', 'The access token is not bound to a key: send it as "Bearer <token>".');
    return { token, claims };
  }
  if (!asDpop) throw dpopRefusal('invalid_token', 'The access token is bound to a key: send it as "DPoP <token>" with a DPoP proof.');
  if (!auth.dpop) throw dpopRefusal('invalid_token', 'DPoP-bound tokens are not accepted here.');
  const publicUrl = auth.dpop.publicUrl;
  try {
    await auth.dpop.verifier.verify({ proof: c.dpop, method: c.method, urls: publicUrl ? [c.requestUrl, `${publicUrl}${c.path}`] : [c.requestUrl], accessToken: token, jkt: claims.cnfJkt });
  } catch (err) {
    if (err instanceof DpopError) throw dpopRefusal(err.code, err.detail);
    // Fail closed: the proof is not taken, and the client may retry with a new one.
    if (err instanceof ReplayStoreUnavailable) {
      throw new AppError('UNAVAILABLE', 'The DPoP proof cannot be checked for replay right now; try again with a new proof.', { retryAfter: 1, cause: err.cause });
    }
    throw err;
  }
  return { token, claims };
}
