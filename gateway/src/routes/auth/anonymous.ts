/**
 * Anonymous auth routes (spec §5 point 2): login, refresh, password reset, email-verification
 * confirm, and the JWKS (a reset request also names a signed-in caller in the audit trail). The token routes are rate-limited per client, with one budget per kind
 * of route across profiles; their answers are never stored (plugins/app/auth.ts).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { identityV1 } from '@iam/contracts';
import { AppError } from '@iam/platform/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticator } from '../../auth/authenticator';
import type { GatewayConfig } from '../../config';
import { attributeIfPresent } from '../../plugins/app/auth';
import { sendProblem } from '../../plugins/app/errors';
import { limitOf } from '../../plugins/external/rate-limit';
import { AccessOnlyLoginResponse, Accepted, ConfirmResetBody, EmailBody, Jwks, LoginBody, LoginResponse, RefreshBody, TokenBody, TokenResponse } from '../../schemas/auth';
import { problems } from '../../schemas/common';
import { LoginProblem, MFA_ENROLMENT_REQUIRED_TYPE, MFA_REQUIRED_TYPE, PASSWORD_CHANGE_REQUIRED_TYPE } from '../../schemas/mfa';
import type { Upstreams } from '../../upstreams';

export interface AnonymousAuthDeps {
  readonly upstreams: Upstreams;
  readonly rateLimits: GatewayConfig['rateLimits'];
  /** Names a signed-in caller of an anonymous route in the records (never decides the answer). */
  readonly authenticator: Authenticator;
}

export interface LoginRouteOptions extends AnonymousAuthDeps {
  /** Full: /api/v1/auth/generate-jwt, Compact: /api/v1/generate-jwt. */
  readonly path: string;
  /**
   * Whether the answer carries the refresh token (Full). Compact has no refresh route (spec §1:
   * the Full profile issues one), so its login answers the access token alone.
   */
  readonly refreshToken: boolean;
}

export const ACCEPTED = { status: 'accepted' as const, message: 'If the account exists, an email is on its way.' };

const tokenJson = (t: identityV1.TokenPair) => ({
  token: t.accessToken,
  refreshToken: t.refreshToken,
  tokenType: 'Bearer' as const,
  expiresIn: t.expiresIn,
  refreshExpiresIn: t.refreshExpiresIn,
});

/** proto3 sends an absent member as '': an OKP or EC key has no n and e, an RSA key no crv, x and y. */
const present = (v: string): string | undefined => (v === '' ? undefined : v);
const jwkJson = (k: identityV1.Jwk) => ({ kid: k.kid, kty: k.kty, alg: k.alg, use: k.use, crv: present(k.crv), x: present(k.x), y: present(k.y), n: present(k.n), e: present(k.e) });

/**
 * A sign-in's next step: 401 mfa-required (or mfa-enrolment-required) with the single-use
 * mfaToken and the methods (DESIGN §5), or password-change-required (its factors done, the account
 * must choose a new password) with the mfaToken that takes it.
 */
export function mfaRequired(req: FastifyRequest, reply: FastifyReply, mfa: identityV1.MfaChallenge): FastifyReply {
  const enrol = mfa.enrolmentRequired;
  const [type, detail] = mfa.passwordChangeRequired
    ? [PASSWORD_CHANGE_REQUIRED_TYPE, 'This account must choose a new password: send mfaToken with newPassword to POST /api/v1/auth/mfa.']
    : enrol
      ? [MFA_ENROLMENT_REQUIRED_TYPE, 'Your role requires a second factor: enrol one with POST /api/v1/auth/mfa/enrol, then send its code to POST /api/v1/auth/mfa.']
      : [MFA_REQUIRED_TYPE, 'A second factor is required: send mfaToken with a code or a recovery code to POST /api/v1/auth/mfa.'];
  return sendProblem(req, reply, AppError.unauthenticated(detail), {
    type,
    members: { mfaToken: mfa.mfaToken, methods: mfa.methods, expiresIn: mfa.expiresIn },
  });
}

/** The login route, at the profile's path. */
export const loginRoute: FastifyPluginAsyncTypebox<LoginRouteOptions> = async (app, deps) => {
  const config = { rateLimit: limitOf('login', deps.rateLimits.login) };
  const summary = 'Exchange email and password for tokens';
  if (deps.refreshToken) {
    app.post(deps.path, { config, schema: { tags: ['auth'], summary, body: LoginBody, response: { 200: LoginResponse, ...problems(400, 413, 415, 429), 401: LoginProblem } } }, async (req, reply) => {
      const r = await deps.upstreams.identity.login(req.body);
      if (r.mfa) return mfaRequired(req, reply, r.mfa);
      return { ...tokenJson(r.tokens!), user: r.user! };
    });
    return;
  }
  app.post(deps.path, { config, schema: { tags: ['auth'], summary, body: LoginBody, response: { 200: AccessOnlyLoginResponse, ...problems(400, 413, 415, 429), 401: LoginProblem } } }, async (req, reply) => {
    const r = await deps.upstreams.identity.login(req.body);
    if (r.mfa) return mfaRequired(req, reply, r.mfa);
    const { token, tokenType, expiresIn } = tokenJson(r.tokens!);
    return { token, tokenType, expiresIn, user: r.user! };
  });
};

/** Refresh, password reset, email-verification confirm and the JWKS (Full profile). */
export const anonymousAuthRoutes: FastifyPluginAsyncTypebox<AnonymousAuthDeps> = async (app, deps) => {
  const { upstreams } = deps;
  const emailActions = { rateLimit: limitOf('email-actions', deps.rateLimits.emailActions) };

  app.post(
    '/api/v1/auth/refresh',
    {
      config: { rateLimit: limitOf('refresh', deps.rateLimits.refresh) },
      schema: { tags: ['auth'], summary: 'Rotate a refresh token', body: RefreshBody, response: { 200: TokenResponse, ...problems(400, 401, 413, 415, 429) } },
    },
    async (req) => tokenJson(await upstreams.identity.refresh(req.body)),
  );

  // Anonymous, but an administrator sends it from the console with their token: the trail
  // names them as the actor. The answer is the same with any token or none (202, no enumeration).
  app.post(
    '/api/v1/auth/password-reset/request',
    {
      config: emailActions,
      onRequest: attributeIfPresent(deps.authenticator),
      schema: {
        tags: ['auth'],
        summary: 'Ask for a password-reset email (202 whether or not the account exists); a valid bearer token names the caller in the audit trail',
        security: [{}, { bearer: [] }],
        body: EmailBody,
        response: { 202: Accepted, ...problems(400, 413, 415, 429) },
      },
    },
    async (req, reply) => {
      await upstreams.identity.requestPasswordReset(req.body);
      return reply.code(202).send(ACCEPTED);
    },
  );

  app.post(
    '/api/v1/auth/password-reset/confirm',
    {
      config: emailActions,
      schema: { tags: ['auth'], summary: 'Set a new password with the emailed token', body: ConfirmResetBody, response: { 204: { type: 'null' }, ...problems(400, 413, 415, 429) } },
    },
    async (req, reply) => {
      await upstreams.identity.confirmPasswordReset(req.body);
      return reply.code(204).send();
    },
  );

  app.post(
    '/api/v1/auth/email-verification/confirm',
    {
      config: emailActions,
      schema: { tags: ['auth'], summary: 'Confirm the email address with the emailed token', body: TokenBody, response: { 204: { type: 'null' }, ...problems(400, 413, 415, 429) } },
    },
    async (req, reply) => {
      await upstreams.identity.confirmEmailVerification(req.body);
      return reply.code(204).send();
    },
  );

  app.get(
    '/.well-known/jwks.json',
    { schema: { tags: ['auth'], summary: 'Public keys that verify access tokens and ID tokens (each with its alg and use)', response: { 200: Jwks } } },
    async (_req, reply) => {
      const { keys } = await upstreams.identity.getJwks({});
      return reply.header('cache-control', 'public, max-age=300').send({ keys: keys.map(jwkJson) });
    },
  );
};
