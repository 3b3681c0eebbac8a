import { type AccessClaims, AppError, type JwtAlg, verifyAccessToken } from '@iam/platform/core';
import type { Denylist } from './denylist';
import type { JwksCache } from './jwks';

export interface Authenticator {
  /** Verifies a bearer token locally (signature, alg, kid, iss, aud, exp/nbf, denylist). */
  verify(token: string): Promise<AccessClaims>;
}

const CACHE_LIMIT = 10_000;

/**
 * A token whose signature and claims were verified once is remembered (by its exact text) until
 * it expires, so a client's repeated calls skip the signature check; expiry and the denylist are
 * checked on every call.
 */
export function createAuthenticator(opts: { jwks: JwksCache; denylist: Denylist; alg: JwtAlg; issuer: string; audience: string }): Authenticator {
  const verified = new Map<string, AccessClaims>();
  return {
    async verify(token) {
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
    },
  };
}
