/**
 * Every access token identity answers for, in both formats: the JWTs (REST logins, the provider's
 * API tokens: verified with the key ring) and the provider's opaque access tokens (a standard
 * code exchange without `resource`: looked up in the provider's records). Either way a token is
 * refused when its jti is on the denylist (the opaque token's jti is the SHA-256 of its value),
 * its subject was revoked after it was issued, or the OAuth client it was issued to was deleted
 * since (clientTokensSubject): the rules `AuthUseCases.validate` and every gateway apply.
 *
 * Used by the gRPC token checks (ValidateToken, Introspect, and the "me" calls, so a token the
 * gateway accepted works on every route) and by the provider's introspection and revocation of
 * JWT access tokens, which the library refuses (provider-token-endpoints.ts).
 */
import { type AccessClaims, AppError, clientTokensSubject } from '@iam/platform';
import type { IdentityStores, TokenService, UnitOfWork } from '../domain/ports';
import type { AuthUseCases } from './auth';
import { revokedBySubject } from './auth';
import { denylistIn } from './session-end';

/** The provider's opaque access tokens, read from its records. */
export interface OpaqueAccessTokens {
  /** Whether a presented token has the shape of one (so nothing else is looked up). */
  looksOpaque(token: string): boolean;
  /** The claims a live one carries at the API (null for an unknown, expired or revoked one, or one whose grant ended). */
  resolve(token: string): Promise<AccessClaims | null>;
}

export interface AccessTokenUseCases {
  /** The claims of a live access token of either format; UNAUTHENTICATED otherwise. */
  validate(token: string): Promise<AccessClaims>;
  /** Like validate, but null instead of an error (RFC 7662 `active: false`). */
  introspect(token: string): Promise<AccessClaims | null>;
  /**
   * RFC 7009 for a JWT access token: when it verifies (signature, issuer, audience, not expired)
   * and was issued to `clientId`, its jti goes on the denylist (`identity.token.revoked`: every
   * gateway refuses it within a second). False when nothing was done (another client's, an
   * expired or foreign token: the endpoint answers 200 all the same).
   */
  revokeJwtOf(token: string, clientId: string): Promise<boolean>;
  /** Denylists an opaque access token the provider just revoked, so gateways that hold it stop within a second. */
  revokedOpaque(token: { value: string; sub: string; exp: number }): Promise<void>;
}

export function createAccessTokenUseCases(deps: {
  auth: Pick<AuthUseCases, 'validate'>;
  tokens: Pick<TokenService, 'verify'>;
  stores: Pick<IdentityStores, 'denylist' | 'subjects'>;
  uow: UnitOfWork<Pick<IdentityStores, 'denylist'>>;
  /** Absent: JWTs only (no provider in this process). */
  opaque?: OpaqueAccessTokens;
  /** The jti an opaque token is denylisted under. */
  opaqueJti: (value: string) => string;
}): AccessTokenUseCases {
  const { stores } = deps;
  const revoked = () => AppError.unauthenticated('The access token has been revoked.');

  /** The denylist and the subject revocations (its sub's, and its client's users'), in one round. */
  async function refused(claims: AccessClaims): Promise<boolean> {
    const subjects = claims.clientId === undefined ? [claims.sub] : [claims.sub, clientTokensSubject(claims.clientId)];
    const [denied, notBefore] = await Promise.all([stores.denylist.has(claims.jti), stores.subjects.notBefore(...subjects)]);
    return denied || revokedBySubject(claims.iat, notBefore);
  }

  const uc: AccessTokenUseCases = {
    async validate(token) {
      const opaque = deps.opaque;
      if (!opaque?.looksOpaque(token)) return deps.auth.validate(token);
      const claims = await opaque.resolve(token);
      if (!claims) throw AppError.unauthenticated('The access token is invalid or expired.');
      if (await refused(claims)) throw revoked();
      return claims;
    },

    async introspect(token) {
      try {
        return await uc.validate(token);
      } catch (err) {
        if (err instanceof AppError && err.code === 'UNAUTHENTICATED') return null;
        throw err;
      }
    },

    async revokeJwtOf(token, clientId) {
      let claims: AccessClaims;
      try {
        claims = await deps.tokens.verify(token);
      } catch (err) {
        if (err instanceof AppError && err.code === 'UNAUTHENTICATED') return false;
        throw err;
      }
      if (claims.clientId !== clientId) return false;
      await deps.uow.run(async (tx) => tx.publish(await denylistIn(tx, claims.sub, [{ jti: claims.jti, expiresAt: new Date(claims.exp * 1000) }])));
      return true;
    },

    async revokedOpaque(t) {
      await deps.uow.run(async (tx) => tx.publish(await denylistIn(tx, t.sub, [{ jti: deps.opaqueJti(t.value), expiresAt: new Date(t.exp * 1000) }])));
    },
  };
  return uc;
}
