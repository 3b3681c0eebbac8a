/**
 * /api/v1/auth/* and the JWKS. Login and refresh are anonymous and rate-limited per client;
 * revoke needs the bearer token it revokes.
 */
import type { identityV1 } from '@iam/contracts';
import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '../../auth/authenticator';
import type { Denylist } from '../../auth/denylist';
import { authenticate } from '../../plugins/app/auth';
import type { onRequestAsyncHookHandler } from 'fastify';
import { problems } from '../../schemas/common';
import { Accepted, ConfirmResetBody, EmailBody, Jwks, LoginBody, LoginResponse, RefreshBody, TokenBody, TokenResponse } from '../../schemas/auth';
import type { Upstreams } from '../../upstreams';

export interface AuthRouteDeps {
  readonly upstreams: Upstreams;
  readonly authenticator: Authenticator;
  readonly denylist: Denylist;
  /** Per-client rate limits, shared by every profile that mounts the same kind of route. */
  readonly limits: { readonly login: onRequestAsyncHookHandler; readonly refresh: onRequestAsyncHookHandler; readonly emailActions: onRequestAsyncHookHandler };
}

const ACCEPTED = { status: 'accepted' as const, message: 'If the account exists, an email is on its way.' };

export const tokenJson = (t: identityV1.TokenPair) => ({
  token: t.accessToken,
  refreshToken: t.refreshToken,
  tokenType: 'Bearer' as const,
  expiresIn: t.expiresIn,
  refreshExpiresIn: t.refreshExpiresIn,
});

/** The login route body → response, shared by the Full and Compact profiles. */
export async function login(upstreams: Upstreams, body: { email: string; password: string }) {
  const r = await upstreams.identity.login(body);
  return { ...tokenJson(r.tokens!), user: r.user! };
}

export async function fullAuthRoutes(app: FastifyInstance, deps: AuthRouteDeps): Promise<void> {
  const { upstreams } = deps;

  app.post(
    '/api/v1/auth/generate-jwt',
    {
      onRequest: deps.limits.login,
      schema: { tags: ['auth'], summary: 'Exchange email and password for tokens', body: LoginBody, response: { 200: LoginResponse, ...problems(400, 401, 413, 415, 429) } },
    },
    async (req) => login(upstreams, req.body as { email: string; password: string }),
  );

  app.post(
    '/api/v1/auth/refresh',
    {
      onRequest: deps.limits.refresh,
      schema: { tags: ['auth'], summary: 'Rotate a refresh token', body: RefreshBody, response: { 200: TokenResponse, ...problems(400, 401, 413, 415, 429) } },
    },
    async (req) => tokenJson(await upstreams.identity.refresh(req.body as { refreshToken: string })),
  );

  app.post(
    '/api/v1/auth/revoke',
    {
      onRequest: authenticate(deps.authenticator),
      schema: { tags: ['auth'], summary: 'Revoke the presented access token and every refresh token of the account', security: [{ bearer: [] }], response: { 204: { type: 'null' }, ...problems(401) } },
    },
    async (req, reply) => {
      await upstreams.identity.revoke({ accessToken: req.bearerToken! });
      // This replica refuses the token at once; the others learn it from the event.
      deps.denylist.add(req.principal!.jti, new Date(req.principal!.exp * 1000));
      return reply.code(204).send();
    },
  );

  const emailLimit = deps.limits.emailActions;

  app.post(
    '/api/v1/auth/password-reset/request',
    {
      onRequest: emailLimit,
      schema: { tags: ['auth'], summary: 'Ask for a password-reset email (202 whether or not the account exists)', body: EmailBody, response: { 202: Accepted, ...problems(400, 413, 415, 429) } },
    },
    async (req, reply) => {
      await upstreams.identity.requestPasswordReset(req.body as { email: string });
      return reply.code(202).send(ACCEPTED);
    },
  );

  app.post(
    '/api/v1/auth/password-reset/confirm',
    {
      onRequest: emailLimit,
      schema: { tags: ['auth'], summary: 'Set a new password with the emailed token', body: ConfirmResetBody, response: { 204: { type: 'null' }, ...problems(400, 413, 415, 429) } },
    },
    async (req, reply) => {
      await upstreams.identity.confirmPasswordReset(req.body as { token: string; newPassword: string });
      return reply.code(204).send();
    },
  );

  app.post(
    '/api/v1/auth/email-verification/request',
    {
      onRequest: [authenticate(deps.authenticator), emailLimit],
      schema: { tags: ['auth'], summary: 'Ask for an email-verification email', security: [{ bearer: [] }], response: { 202: Accepted, ...problems(401, 429) } },
    },
    async (req, reply) => {
      await upstreams.identity.requestEmailVerification({ userId: req.principal!.sub });
      return reply.code(202).send(ACCEPTED);
    },
  );

  app.post(
    '/api/v1/auth/email-verification/confirm',
    {
      onRequest: emailLimit,
      schema: { tags: ['auth'], summary: 'Confirm the email address with the emailed token', body: TokenBody, response: { 204: { type: 'null' }, ...problems(400, 413, 415, 429) } },
    },
    async (req, reply) => {
      await upstreams.identity.confirmEmailVerification(req.body as { token: string });
      return reply.code(204).send();
    },
  );

  app.get(
    '/.well-known/jwks.json',
    { schema: { tags: ['auth'], summary: 'Public keys that verify access tokens', response: { 200: Jwks } } },
    async (_req, reply) => {
      const { keys } = await upstreams.identity.getJwks({});
      const clean = keys.map((k) => Object.fromEntries(Object.entries(k).filter(([, v]) => v !== '')));
      return reply.header('cache-control', 'public, max-age=300').send({ keys: clean });
    },
  );
}
