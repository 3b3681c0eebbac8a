/**
 * The provider's opaque access tokens as the API sees them (README "A token from a standard code
 * exchange"): a code exchange without `resource` answers one (the library keeps a token without
 * an audience for userinfo, which refuses any with one), and relying parties such as
 * mod_auth_openidc or Authlib pass it on to the app. The gateway asks identity about it
 * (ValidateToken); here it is read from the provider's records, with its grant, as the library's
 * introspection does, and answered with the claims the token was issued with: those an API JWT of
 * the same grant carries (token-claims.ts puts them in the token's `extra`).
 *
 * Its jti, under which it is recorded with its session and denylisted, is the SHA-256 of its
 * value: the bearer value itself never goes into an event, the denylist or a log.
 */
import { createHash } from 'node:crypto';
import type { AccessClaims } from '@iam/platform';
import type { OpaqueAccessTokens } from '../../app/access-tokens';
import type { Provider } from './provider';

/** The library's opaque tokens: 256 random bits, base64url (formats.bitsOfOpaqueRandomness). */
const OPAQUE_TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

/** The jti an opaque access token is recorded and denylisted under: base64url(SHA-256(value)). */
export function opaqueTokenJti(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

const strings = (v: unknown): string[] | undefined => (Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : undefined);

export function opaqueAccessTokens(provider: () => Promise<Provider>, issuer: string): OpaqueAccessTokens {
  return {
    looksOpaque: (token) => OPAQUE_TOKEN_RE.test(token),

    async resolve(value) {
      if (!OPAQUE_TOKEN_RE.test(value)) return null;
      const p = await provider();
      const at = await p.AccessToken.find(value);
      if (!at?.isValid || !at.accountId || !at.clientId || typeof at.iat !== 'number' || typeof at.exp !== 'number') return null;
      // Its grant still there and its own (a revoked grant, a deleted client or user ends it).
      if (at.grantId) {
        const grant = await p.Grant.find(at.grantId, { ignoreExpiration: true });
        if (!grant || grant.isExpired || grant.clientId !== at.clientId || grant.accountId !== at.accountId) return null;
      }
      const extra = (at.extra ?? {}) as Record<string, unknown>;
      const roles = strings(extra.roles);
      const permissions = strings(extra.permissions);
      // Made before its claims were recorded with it (or for a subject gone meanwhile): not an API token.
      if (typeof extra.email !== 'string' || !roles || !permissions) return null;
      const amr = strings(extra.amr);
      const claims: AccessClaims = {
        sub: at.accountId,
        jti: opaqueTokenJti(value),
        iss: issuer,
        // No audience: the token of a code exchange that named no resource (README says why).
        aud: [],
        iat: at.iat,
        nbf: typeof extra.nbf === 'number' ? extra.nbf : at.iat,
        exp: at.exp,
        email: extra.email,
        roles,
        permissions,
        clientId: at.clientId,
        ...(typeof extra.sid === 'string' ? { sid: extra.sid } : {}),
        ...(amr ? { amr } : {}),
        ...(typeof extra.auth_time === 'number' ? { authTime: extra.auth_time } : {}),
        ...(at.jkt ? { cnfJkt: at.jkt } : {}),
        ...(at.scope ? { scope: at.scope } : {}),
      };
      return claims;
    },
  };
}
