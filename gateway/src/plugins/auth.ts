/**
 * Bearer authentication and permission policies, as onRequest hooks: a request without valid
 * credentials is refused (401) before its body is read, one without the permission (403) too.
 */
import { type AccessClaims, AppError, hasPermission } from '@iam/platform';
import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import type { Authenticator } from '../auth/authenticator';

declare module 'fastify' {
  interface FastifyRequest {
    principal: AccessClaims | null;
    bearerToken: string | null;
  }
}

const BEARER_RE = /^Bearer[ ]+([A-Za-z0-9._~+/-]+=*)\s*$/i;

export const authPlugin = fp(
  async (app: FastifyInstance) => {
    app.decorateRequest('principal', null);
    app.decorateRequest('bearerToken', null);
  },
  { name: 'iam-auth' },
);

/** onRequest hook: 401 unless the request carries a valid bearer token. */
export function authenticate(auth: Authenticator): onRequestAsyncHookHandler {
  return async (req: FastifyRequest) => {
    const header = req.headers.authorization;
    if (!header) throw AppError.unauthenticated('A bearer token is required.');
    const m = BEARER_RE.exec(header);
    if (!m) throw AppError.unauthenticated('The Authorization header must be "Bearer <token>".');
    req.bearerToken = m[1]!;
    req.principal = await auth.verify(m[1]!);
  };
}

/** onRequest hook (after authenticate): 403 unless the token grants the permission (or Administrator). */
export function requirePermission(permission: string): onRequestAsyncHookHandler {
  return async (req: FastifyRequest) => {
    if (!req.principal) throw AppError.unauthenticated();
    if (!hasPermission(req.principal, permission)) throw AppError.forbidden(`This requires the ${permission} permission.`);
  };
}
