/**
 * Second factors and sessions (DESIGN §5). Anonymous: the second step of a login
 * (`POST /api/v1/auth/mfa`) and the enrolment an MFA_REQUIRED_ROLES member makes with its
 * enrolment-only mfa token. Authenticated (the caller's own): /api/v1/me/mfa..., /api/v1/me/sessions.
 * users.manage: a user's sessions, lock and second factors (adminSecurityRoutes). Identity
 * verifies the bearer token of every "me" call again and reads its sid and auth_time.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { identityV1 } from '@iam/contracts';
import type { Denylist } from '../../auth/denylist';
import type { GatewayConfig } from '../../config';
import { limitOf } from '../../plugins/external/rate-limit';
import { LoginResponse } from '../../schemas/auth';
import { IdParams, problems } from '../../schemas/common';
import { AccountSecurity, CodeBody, MfaBody, MfaStatus, MfaTokenBody, RecoveryCodes, ResetFactorsBody, SessionList, SessionParams, TotpEnrolment } from '../../schemas/mfa';
import type { Upstreams } from '../../upstreams';

export interface MfaDeps {
  readonly upstreams: Upstreams;
  readonly rateLimits: GatewayConfig['rateLimits'];
}

const tags = ['mfa'];

export const loginBody = (r: identityV1.LoginResponse) => ({
  token: r.tokens!.accessToken,
  refreshToken: r.tokens!.refreshToken,
  tokenType: 'Bearer' as const,
  expiresIn: r.tokens!.expiresIn,
  refreshExpiresIn: r.tokens!.refreshExpiresIn,
  user: r.user!,
});

const sessionJson = (s: identityV1.Session) => ({
  id: s.id,
  device: s.device,
  userAgent: s.userAgent,
  ip: s.ip,
  createdAt: (s.createdAt ?? new Date(0)).toISOString(),
  lastUsedAt: (s.lastUsedAt ?? new Date(0)).toISOString(),
  current: s.current,
  amr: s.amr,
});

/** Anonymous: a login's second step, and enrolment with an enrolment-only mfa token. */
export const anonymousMfaRoutes: FastifyPluginAsyncTypebox<MfaDeps> = async (app, deps) => {
  // The factor step has its own budget of the login's size (one login, one factor step).
  const config = { rateLimit: limitOf('login-mfa', deps.rateLimits.login) };
  app.post(
    '/api/v1/auth/mfa',
    {
      config,
      schema: {
        tags: ['auth'],
        summary: 'Complete a login with its second factor (the mfaToken of the mfa-required problem and a code or a recovery code)',
        body: MfaBody,
        response: { 200: LoginResponse, ...problems(400, 401, 413, 415, 429) },
      },
    },
    async (req) => {
      const { mfaToken, code, recoveryCode } = req.body;
      return loginBody(
        await deps.upstreams.identity.completeMfa({
          mfaToken,
          code: code ?? '',
          recoveryCode: recoveryCode ?? '',
        }),
      );
    },
  );
  app.post(
    '/api/v1/auth/mfa/enrol',
    {
      config,
      schema: {
        tags: ['auth'],
        summary: 'Enrol an authenticator app with the mfaToken of an mfa-enrolment-required problem (then POST /api/v1/auth/mfa with its code)',
        body: MfaTokenBody,
        response: {
          200: TotpEnrolment,
          ...problems(400, 401, 409, 413, 415, 429),
        },
      },
    },
    async (req) => deps.upstreams.identity.enrolWithMfaToken(req.body),
  );
};

/** The caller's own second factors and sessions (in an authenticated context). */
export const meRoutes: FastifyPluginAsyncTypebox<MfaDeps & { denylist: Denylist }> = async (app, deps) => {
  const id = deps.upstreams.identity;
  const me = (token: string | null) => ({ accessToken: token ?? '' });
  const reauth = 'Needs a sign-in within 5 minutes (else 403 urn:iam:problem:reauthentication-required)';

  app.get(
    '/api/v1/me/mfa',
    {
      schema: {
        tags,
        summary: 'Your second factors',
        response: { 200: MfaStatus },
      },
    },
    async (req) => id.getMfaStatus(me(req.bearerToken)),
  );
  app.post(
    '/api/v1/me/mfa/totp',
    {
      schema: {
        tags,
        summary: 'Start enrolling an authenticator app: a pending secret, active after a right code',
        response: { 200: TotpEnrolment, ...problems(409) },
      },
    },
    async (req) => id.startTotp(me(req.bearerToken)),
  );
  app.post(
    '/api/v1/me/mfa/totp/activate',
    {
      schema: {
        tags,
        summary: 'Activate the pending authenticator app with a code from it',
        body: CodeBody,
        response: { 204: { type: 'null' }, ...problems(400, 409, 413, 415) },
      },
    },
    async (req, reply) => {
      await id.activateTotp({
        accessToken: req.bearerToken ?? '',
        code: req.body.code,
      });
      return reply.code(204).send();
    },
  );
  app.delete(
    '/api/v1/me/mfa/totp',
    {
      schema: {
        tags,
        summary: `Remove the authenticator app (and the recovery codes). ${reauth}`,
        response: { 204: { type: 'null' }, ...problems(403, 404) },
      },
    },
    async (req, reply) => {
      await id.removeTotp(me(req.bearerToken));
      return reply.code(204).send();
    },
  );
  app.post(
    '/api/v1/me/mfa/recovery-codes',
    {
      schema: {
        tags,
        summary: `Make ten new recovery codes (replacing the old set; shown once). ${reauth}`,
        response: { 200: RecoveryCodes, ...problems(403, 409) },
      },
    },
    async (req) => id.newRecoveryCodes(me(req.bearerToken)),
  );

  app.get(
    '/api/v1/me/sessions',
    {
      schema: {
        tags: ['sessions'],
        summary: 'Your sessions (sign-ins), the last used first',
        response: { 200: SessionList },
      },
    },
    async (req) => ({
      items: (await id.listMySessions(me(req.bearerToken))).sessions.map(sessionJson),
    }),
  );
  app.delete(
    '/api/v1/me/sessions/:id',
    {
      schema: {
        tags: ['sessions'],
        summary: 'End one of your sessions (its tokens stop working at every gateway within a second)',
        params: SessionParams,
        response: { 204: { type: 'null' }, ...problems(400, 404) },
      },
    },
    async (req, reply) => {
      await id.endMySession({
        accessToken: req.bearerToken ?? '',
        sessionId: req.params.id,
      });
      return reply.code(204).send();
    },
  );
  app.delete(
    '/api/v1/me/sessions',
    {
      schema: {
        tags: ['sessions'],
        summary: 'Sign out everywhere else: end every session but this one',
        response: { 204: { type: 'null' } },
      },
    },
    async (req, reply) => {
      await id.endMyOtherSessions(me(req.bearerToken));
      return reply.code(204).send();
    },
  );
};

/** users.manage (the Administrator rule of DESIGN §3 is identity's): a user's sessions, lock and factors. */
export const adminSecurityRoutes: FastifyPluginAsyncTypebox<MfaDeps> = async (app, deps) => {
  const id = deps.upstreams.identity;
  const stags = ['users'];
  app.get(
    '/api/v1/users/:id/sessions',
    {
      schema: {
        tags: stags,
        summary: "A user's sessions",
        params: IdParams,
        response: { 200: SessionList, ...problems(400, 404) },
      },
    },
    async (req) => ({
      items: (await id.listUserSessions({ userId: req.params.id })).sessions.map(sessionJson),
    }),
  );
  app.delete(
    '/api/v1/users/:id/sessions',
    {
      schema: {
        tags: stags,
        summary: 'End every session of a user (and their access tokens)',
        params: IdParams,
        response: { 204: { type: 'null' }, ...problems(400, 404) },
      },
    },
    async (req, reply) => {
      await id.endUserSessions({ userId: req.params.id });
      return reply.code(204).send();
    },
  );
  app.get(
    '/api/v1/users/:id/security',
    {
      schema: {
        tags: stags,
        summary: "A user's lock state (failed sign-ins) and second factors",
        params: IdParams,
        response: { 200: AccountSecurity, ...problems(400, 404) },
      },
    },
    async (req) => {
      const s = await id.getAccountSecurity({ userId: req.params.id });
      return {
        locked: s.locked,
        lockedUntil: s.lockedUntil ? s.lockedUntil.toISOString() : null,
        failedAttempts: s.failedAttempts,
        mfa: s.mfa ?? { totp: false, passkeys: 0, recoveryCodesLeft: 0 },
      };
    },
  );
  app.post(
    '/api/v1/users/:id/unlock',
    {
      schema: {
        tags: stags,
        summary: 'Unlock an account locked by failed sign-ins (audited)',
        params: IdParams,
        response: { 204: { type: 'null' }, ...problems(400, 404) },
      },
    },
    async (req, reply) => {
      await id.unlockAccount({ userId: req.params.id });
      return reply.code(204).send();
    },
  );
  app.post(
    '/api/v1/users/:id/mfa/reset',
    {
      schema: {
        tags: stags,
        summary: "Reset a user's second factors (audited with the reason); the user enrols again at next sign-in if policy requires it",
        params: IdParams,
        body: ResetFactorsBody,
        response: { 204: { type: 'null' }, ...problems(400, 404, 413, 415) },
      },
    },
    async (req, reply) => {
      await id.resetSecondFactors({
        userId: req.params.id,
        reason: req.body.reason,
      });
      return reply.code(204).send();
    },
  );
};
