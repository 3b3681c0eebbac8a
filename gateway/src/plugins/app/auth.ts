/**
 * Bearer authentication and permission policies, as onRequest hooks: a request without valid
 * credentials is refused (401) before its body is read, one without the permission (403) too.
 * Nothing a cache could keep leaves with credentials in it: every authenticated response (its
 * 401 and 403 included) and every token response is `Cache-Control: no-store` (RFC 6749 §5.1,
 * RFC 9700).
 */
import { type AccessClaims, AppError, hasPermission, isAdministrator, requestContext } from '@iam/platform/core';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions, onRequestAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { type Authenticator, type PresentedCredentials, verifyRequest } from '../../auth/authenticator';
import { answersTokens } from '../../schemas/auth';

declare module 'fastify' {
  interface FastifyRequest {
    principal: AccessClaims | null;
    bearerToken: string | null;
  }
}

const CREDENTIALS_RE = /^(Bearer|DPoP)[ ]+[A-Za-z0-9._~+/-]+=*\s*$/i;

function noStore(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store');
}

/** onRequest hook put first on every token route: its answer, success or error, is never stored. */
const tokenResponseHeaders: onRequestAsyncHookHandler = async (_req, reply) => {
  noStore(reply);
  reply.header('pragma', 'no-cache');
};

/** onRoute hook: a route whose success response carries tokens (schemas/auth.ts) gets tokenResponseHeaders, in every profile. */
function markTokenRoute(route: RouteOptions): void {
  if (!answersTokens(route.schema?.response)) return;
  const existing = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
  route.onRequest = [tokenResponseHeaders, ...existing] as RouteOptions['onRequest'];
}

/** Registered before any route: decorates requests and marks the token routes registered after it. */
export const authPlugin = fp(
  async (app: FastifyInstance) => {
    app.decorateRequest('principal', null);
    app.decorateRequest('bearerToken', null);
    app.addHook('onRoute', markTokenRoute);
  },
  { name: 'iam-auth' },
);

/** onRequest hook: 401 unless the request carries a valid bearer token. Its response, whatever it is, is no-store. */
export function authenticate(auth: Authenticator): onRequestAsyncHookHandler {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    noStore(reply);
    if (!req.headers.authorization) throw AppError.unauthenticated('A bearer token is required.');
    await verifyBearer(auth, req);
  };
}

/**
 * onRequest hook for routes whose fields decide (GraphQL): without an Authorization header the
 * request goes on anonymous (`principal` null); with one, it must be a valid bearer token (401
 * otherwise) and the response is no-store.
 */
export function authenticateIfPresent(auth: Authenticator): onRequestAsyncHookHandler {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    if (req.headers.authorization === undefined) return;
    noStore(reply);
    await verifyBearer(auth, req);
  };
}

/**
 * onRequest hook for an anonymous route a signed-in caller may also use (a password reset an
 * administrator sends from the console): a valid bearer token names its `sub` as the caller in
 * the request's records (the audit trail's actor). It decides nothing: a missing, malformed,
 * expired or revoked token leaves the request anonymous and the route answers exactly as it does
 * for anyone.
 */
export function attributeIfPresent(auth: Authenticator): onRequestAsyncHookHandler {
  return async (req: FastifyRequest) => {
    if (!CREDENTIALS_RE.test(req.headers.authorization ?? '')) return;
    let sub: string;
    try {
      sub = (await verifyRequest(auth, presented(req))).claims.sub;
    } catch (err) {
      // Not an error of this request: it goes on anonymous, as without a token.
      req.log.debug({ reason: err instanceof AppError ? err.detail : 'invalid token' }, 'bearer token not valid; the request stays anonymous');
      return;
    }
    const rc = requestContext();
    if (rc) rc.actor = sub;
  };
}

/** What the request presents to the authenticator (RFC 9449: `htu` is the request's URI without its query). */
function presented(req: FastifyRequest): PresentedCredentials {
  const path = (req.url ?? '/').split('?')[0]!.split('#')[0]!;
  return { authorization: req.headers.authorization, dpop: req.headers.dpop, method: req.method, requestUrl: `${req.protocol}://${req.host}${path}`, path };
}

/** Bearer, or DPoP with its proof (a token bound to a key needs the proof: authenticator.ts). */
async function verifyBearer(auth: Authenticator, req: FastifyRequest): Promise<void> {
  const { token, claims } = await verifyRequest(auth, presented(req));
  req.bearerToken = token;
  req.principal = claims;
  // The request's records name its caller from here on (request-context.ts).
  const rc = requestContext();
  if (rc) rc.actor = req.principal.sub;
}

/** onRequest hook (after authenticate): 403 unless the token carries the Administrator role. */
export function requireAdministrator(): onRequestAsyncHookHandler {
  return async (req: FastifyRequest) => {
    if (!req.principal) throw AppError.unauthenticated();
    if (!isAdministrator(req.principal)) throw AppError.forbidden('This requires the Administrator role.');
  };
}

/** onRequest hook (after authenticate): 403 unless the token grants the permission (or Administrator). */
export function requirePermission(permission: string): onRequestAsyncHookHandler {
  return async (req: FastifyRequest) => {
    if (!req.principal) throw AppError.unauthenticated();
    if (!hasPermission(req.principal, permission)) throw AppError.forbidden(`This requires the ${permission} permission.`);
  };
}
