/**
 * The OpenID provider (identity's HTTP listener, IDENTITY_OP_URL) behind the gateway, the only
 * public listener: discovery at /.well-known/openid-configuration (and, RFC 8414, at
 * /.well-known/oauth-authorization-server for OAuth-only clients) and every provider endpoint and
 * hosted page under /oidc/. The JWKS stays /.well-known/jwks.json (the same keys). The client's
 * address is passed as X-Forwarded-For, and PUBLIC_URL's host and scheme as X-Forwarded-Host and
 * -Proto (replacing whatever the client sent: the provider names its endpoints by PUBLIC_URL,
 * never by a request's Host; identity pins them too). The hosted sign-in and the token endpoint
 * share the REST login's and refresh's per-client rate limits; the anonymous requests that make
 * the provider store a record (an authorization request's interaction, a pushed request, a device
 * code, the device page's session) have budgets of their own. Each request has a deadline, and
 * the provider unreachable or late is a 503 or 504 with Retry-After (oidc-upstream.ts).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyHttpProxyOptions } from '@fastify/http-proxy';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayConfig } from '../config';
import { limitOf } from '../plugins/external/rate-limit';
import { TIMEOUT_HEADER, answerProxyFailure, proxyDeadline, proxyFailure } from './oidc-upstream';

export interface OidcRouteOptions {
  /** Base URL of identity's provider listener. */
  readonly upstream: string;
  readonly rateLimits: GatewayConfig['rateLimits'];
  /** PUBLIC_URL: the host and scheme the provider is told it is reached at. */
  readonly publicUrl?: string;
  /** Deadline of a proxied request (ms; IDENTITY_OP_TIMEOUT_MS). */
  readonly timeoutMs: number;
}

export const OIDC_PREFIX = '/oidc';
export const OIDC_DISCOVERY = '/.well-known/openid-configuration';
/** RFC 8414: the same metadata for OAuth-only clients (the provider serves both). */
export const OAUTH_DISCOVERY = '/.well-known/oauth-authorization-server';

export async function oidcRoutes(app: FastifyInstance, opts: OidcRouteOptions): Promise<void> {
  const { default: httpProxy } = await import('@fastify/http-proxy');
  const pinned = opts.publicUrl ? new URL(opts.publicUrl) : undefined;
  const forwarded = (req: Pick<FastifyRequest, 'ip' | 'protocol' | 'host'>, headers: IncomingHttpHeaders): IncomingHttpHeaders => {
    const out: IncomingHttpHeaders = {};
    for (const [k, v] of Object.entries(headers)) if (!k.startsWith('x-forwarded-') && k !== 'forwarded') out[k] = v;
    return { ...out, 'x-forwarded-for': req.ip, 'x-forwarded-proto': pinned?.protocol.slice(0, -1) ?? req.protocol, 'x-forwarded-host': pinned?.host ?? req.host };
  };
  const deadline = proxyDeadline(opts.timeoutMs, app.log);
  app.addHook('onRequest', deadline.onRequest);
  const replyOptions: NonNullable<FastifyHttpProxyOptions['replyOptions']> = {
    rewriteRequestHeaders: (req, headers) => ({ ...forwarded(req, headers), [TIMEOUT_HEADER]: deadline.left(req) }),
    // The gateway serves HTTP/1.1 only: its requests and replies are the default ones.
    onError: (reply, { error }) => answerProxyFailure(reply.request as FastifyRequest, reply as FastifyReply, proxyFailure(error), app.log),
    onResponse: deadline.onResponse,
  };
  const t = opts.timeoutMs;
  const proxy = (prefix: string, config?: Record<string, unknown>) =>
    app.register(httpProxy, { upstream: opts.upstream, prefix, rewritePrefix: prefix, replyOptions, config, undici: { connections: 64, headersTimeout: t, bodyTimeout: t, connect: { timeout: t } } });
  const limits = opts.rateLimits;
  // Sign-in pages: the login budget; the token endpoint (revocation, introspection): the refresh budget.
  await proxy(`${OIDC_PREFIX}/interaction`, { rateLimit: limitOf('login', limits.login) });
  // Sign-ins through another identity provider come back here (issue #40): the login budget too.
  await proxy(`${OIDC_PREFIX}/federation`, { rateLimit: limitOf('login', limits.login) });
  await proxy(`${OIDC_PREFIX}/token`, { rateLimit: limitOf('refresh', limits.refresh) });
  // Authorization requests (GET and POST, and their resumes): each stores an interaction.
  await proxy(`${OIDC_PREFIX}/auth`, { rateLimit: limitOf('oidc-authorize', limits.authorize) });
  // Pushed requests: a client's back end, for all of its users (sized as the token endpoint).
  await proxy(`${OIDC_PREFIX}/par`, { rateLimit: limitOf('oidc-par', limits.par) });
  // The device flow: /device/auth (a device asks for a code) and the user's pages (/device, /device/<uid>).
  await proxy(`${OIDC_PREFIX}/device`, { rateLimit: limitOf('oidc-device', limits.device) });
  // The rest (userinfo, logout, discovery) stores nothing for an anonymous caller.
  await proxy(OIDC_PREFIX);
  await proxy(OIDC_DISCOVERY);
  await proxy(OAUTH_DISCOVERY);
}
