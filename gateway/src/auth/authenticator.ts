import { type AccessClaims, AppError, type JwtAlg, verifyAccessToken } from '@iam/platform';
import type { Denylist } from './denylist';
import type { JwksCache } from './jwks';

export interface Authenticator {
  /** Verifies a bearer token locally (signature, alg, kid, iss, aud, exp/nbf, denylist). */
  verify(token: string): Promise<AccessClaims>;
}

export function createAuthenticator(opts: { jwks: JwksCache; denylist: Denylist; alg: JwtAlg; issuer: string; audience: string }): Authenticator {
  return {
    async verify(token) {
      const claims = await verifyAccessToken(token, (kid) => opts.jwks.key(kid), {
        alg: opts.alg,
        issuer: opts.issuer,
        audience: opts.audience,
        skewSeconds: 30,
      });
      if (opts.denylist.has(claims.jti)) throw AppError.unauthenticated('The access token has been revoked.');
      return claims;
    },
  };
}
