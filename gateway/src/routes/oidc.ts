/**
 * The OpenID provider (identity's HTTP listener, IDENTITY_OP_URL) behind the gateway, the only
 * public listener: discovery at /.well-known/openid-configuration (and, RFC 8414, at
 * /.well-known/oauth-authorization-server for OAuth-only clients) and every provider endpoint and
 * hosted page under /oidc/. The JWKS stays /.well-known/jwks.json (the same keys). The client's
 * address, scheme and host are passed as X-Forwarded-* (replacing whatever the client sent), so
 * the provider (proxy mode) sees the public URL and the real client. The hosted sign-in and the
 * token endpoint share the REST login's and refresh's per-client rate limits.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { GatewayConfig } from '../config';
import { limitOf } from '../plugins/external/rate-limit';

export interface OidcRouteOptions {
  /** Base URL of identity's provider listener. */
  readonly upstream: string;
  readonly rateLimits: GatewayConfig['rateLimits'];
}

export const OIDC_PREFIX = '/oidc';
export const OIDC_DISCOVERY = '/.well-known/openid-configuration';
/** RFC 8414: the same metadata for OAuth-only clients (the provider serves both). */
export const OAUTH_DISCOVERY = '/.well-known/oauth-authorization-server';

export async function oidcRoutes(app: FastifyInstance, opts: OidcRouteOptions): Promise<void> {
  const { default: httpProxy } = await import('@fastify/http-proxy');
  const forwarded = (req: Pick<FastifyRequest, 'ip' | 'protocol' | 'host'>, headers: IncomingHttpHeaders): IncomingHttpHeaders => {
    const out: IncomingHttpHeaders = {};
    for (const [k, v] of Object.entries(headers)) if (!k.startsWith('x-forwarded-') && k !== 'forwarded') out[k] = v;
    return { ...out, 'x-forwarded-for': req.ip, 'x-forwarded-proto': req.protocol, 'x-forwarded-host': req.host };
  };
  const replyOptions = { rewriteRequestHeaders: forwarded };
  const proxy = (prefix: string, rewritePrefix: string, config?: Record<string, unknown>) =>
    app.register(httpProxy, { upstream: opts.upstream, prefix, rewritePrefix, replyOptions, config, undici: { connections: 64 } });
  // Sign-in pages: the login budget; the token endpoint: the refresh budget; the rest unlimited here.
  await proxy(`${OIDC_PREFIX}/interaction`, `${OIDC_PREFIX}/interaction`, { rateLimit: limitOf('login', opts.rateLimits.login) });
  await proxy(`${OIDC_PREFIX}/token`, `${OIDC_PREFIX}/token`, { rateLimit: limitOf('refresh', opts.rateLimits.refresh) });
  await proxy(OIDC_PREFIX, OIDC_PREFIX);
  await proxy(OIDC_DISCOVERY, OIDC_DISCOVERY);
  await proxy(OAUTH_DISCOVERY, OAUTH_DISCOVERY);
}
