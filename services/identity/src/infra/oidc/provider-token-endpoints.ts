/**
 * Introspection (RFC 7662) and revocation (RFC 7009) for every token the provider issues. The
 * library answers both for its opaque tokens (refresh tokens, userinfo tokens) and refuses
 * structured ones (`unsupported_token_type`), which our API access tokens are (RFC 9068 JWTs).
 * This middleware lets the library authenticate the client as it does for every request (its
 * methods, the registry's secret check), and takes over only when the library refused a JWT:
 *
 * - introspection: the token verified with the key ring (JWT_ALG, issuer, audience, expiry) and
 *   checked against identity's denylist and subject revocations (AccessTokenUseCases); a live one
 *   answers `active: true` with what it carries, to its own client or to a resource server
 *   (`resourceServer`) only; anything else, `active: false`, never an error;
 * - revocation: a JWT of the requesting client has its jti denylisted (`identity.token.revoked`:
 *   every gateway refuses it within a second); 200 whatever the token was.
 *
 * On the library's own path it adds what identity knows: an opaque access token whose session
 * ended (denylisted) is `active: false`, and one the library revoked is denylisted too, so a
 * gateway that holds it for its few seconds of cache refuses it at once.
 */
import type { AccessClaims } from '@iam/platform';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { AccessTokenUseCases } from '../../app/access-tokens';
import type { Provider } from './provider';

/** What the endpoints ask of identity's token checks. */
export type ProviderTokenChecks = Pick<AccessTokenUseCases, 'introspect' | 'revokeJwtOf' | 'revokedOpaque'>;

type Middleware = (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>;

/** RFC 7662 §2.2: what a live JWT access token carries, for its client or a resource server. */
export function introspectionOf(c: AccessClaims): Record<string, unknown> {
  return {
    active: true,
    iss: c.iss,
    sub: c.sub,
    aud: c.aud.length === 1 ? c.aud[0] : c.aud,
    ...(c.clientId !== undefined ? { client_id: c.clientId } : {}),
    ...(c.scope !== undefined ? { scope: c.scope } : {}),
    exp: c.exp,
    iat: c.iat,
    nbf: c.nbf,
    jti: c.jti,
    token_type: c.cnfJkt ? 'DPoP' : 'Bearer',
    ...(c.cnfJkt ? { cnf: { jkt: c.cnfJkt } } : {}),
    ...(c.sid !== undefined ? { sid: c.sid } : {}),
    ...(c.authTime !== undefined ? { auth_time: c.authTime } : {}),
    ...(c.amr !== undefined ? { amr: c.amr } : {}),
    ...(c.email ? { email: c.email } : {}),
    roles: c.roles,
    permissions: c.permissions,
  };
}

/**
 * The middleware (provider.use) and the listeners that tell it the library refused a structured
 * token. `resourceServer` names the client metadata property of a resource server.
 */
export function providerTokenEndpoints(provider: Provider, opts: { prefix: string; checks: ProviderTokenChecks; resourceServer: string }): Middleware {
  const introspectionPath = `${opts.prefix}/token/introspection`;
  const revocationPath = `${opts.prefix}/token/revocation`;
  // The requests whose JWT the library refused (after it authenticated the client).
  const structured = new WeakSet<object>();
  const mark = (ctx: KoaContextWithOIDC, err: Error) => {
    if ((err as { error?: string }).error === 'unsupported_token_type') structured.add(ctx);
  };
  provider.on('introspection.error', mark);
  provider.on('revocation.error', mark);

  const answer = (ctx: KoaContextWithOIDC, body: Record<string, unknown> | '') => {
    ctx.status = 200;
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Pragma', 'no-cache');
    ctx.remove('WWW-Authenticate');
    ctx.body = body;
    if (body !== '') ctx.type = 'application/json; charset=utf-8';
  };

  return async (ctx, next) => {
    await next();
    if (ctx.method !== 'POST' || (ctx.path !== introspectionPath && ctx.path !== revocationPath)) return;
    const client = ctx.oidc.client;
    const token = ctx.oidc.params?.token;
    if (!client || typeof token !== 'string') return;
    const introspection = ctx.path === introspectionPath;
    if (structured.has(ctx)) {
      if (!introspection) {
        await opts.checks.revokeJwtOf(token, client.clientId);
        return answer(ctx, '');
      }
      // A public client learns nothing (it cannot prove who asks); a confidential one of its own tokens, a resource server of any.
      const claims = client.clientAuthMethod === 'none' ? null : await opts.checks.introspect(token);
      const mayKnow = claims !== null && (claims.clientId === client.clientId || client[opts.resourceServer] === true);
      return answer(ctx, mayKnow ? introspectionOf(claims) : { active: false });
    }
    // The library's own answers about an opaque access token.
    const at = ctx.oidc.entities.AccessToken;
    if (!at || ctx.status !== 200) return;
    if (introspection) {
      const body = ctx.body as { active?: unknown } | undefined;
      if (body?.active === true && (await opts.checks.introspect(token)) === null) answer(ctx, { active: false });
    } else if (at.clientId === client.clientId && at.accountId && typeof at.exp === 'number') {
      await opts.checks.revokedOpaque({ value: token, sub: at.accountId, exp: at.exp });
    }
  };
}
