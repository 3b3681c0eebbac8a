/**
 * The anonymous steps of second factors (DESIGN §5): the second step of a login
 * (`POST /api/v1/auth/mfa`), the passkey sign-in, and the enrolment an MFA_REQUIRED_ROLES member
 * makes with its enrolment-only mfa token. The caller's own factors and sessions are
 * me-security.ts; an administrator's view of a user's, admin-security.ts.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { identityV1 } from '@iam/contracts';
import type { GatewayConfig } from '../../config';
import { limitOf } from '../../plugins/external/rate-limit';
import { LoginResponse } from '../../schemas/auth';
import { problems } from '../../schemas/common';
import { LoginProblem, MfaBody, MfaTokenBody, PasskeySignInBody, TotpEnrolment, WebauthnOptions } from '../../schemas/mfa';
import type { Upstreams } from '../../upstreams';
import { mfaRequired } from './anonymous';
import { optionsJson } from './security-json';

export interface MfaDeps {
  readonly upstreams: Upstreams;
  readonly rateLimits: GatewayConfig['rateLimits'];
}

export const loginBody = (r: identityV1.LoginResponse) => ({
  token: r.tokens!.accessToken,
  refreshToken: r.tokens!.refreshToken,
  tokenType: 'Bearer' as const,
  expiresIn: r.tokens!.expiresIn,
  refreshExpiresIn: r.tokens!.refreshExpiresIn,
  user: r.user!,
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
        summary: 'Complete a login: its second factor (the mfaToken of the mfa-required problem and a code, a recovery code or a passkey), or the new password of a password-change-required one',
        body: MfaBody,
        response: { 200: LoginResponse, ...problems(400, 413, 415, 429), 401: LoginProblem },
      },
    },
    async (req, reply) => {
      const { mfaToken, code, recoveryCode, webauthn, passkey, newPassword } = req.body;
      const r = await deps.upstreams.identity.completeMfa({
        mfaToken,
        code: code ?? '',
        recoveryCode: recoveryCode ?? '',
        webauthnJson: webauthn ? JSON.stringify(webauthn) : '',
        newPasskeyJson: passkey ? JSON.stringify(passkey.response) : '',
        newPasskeyName: passkey?.name ?? '',
        newPassword: newPassword ?? '',
      });
      // The factor done, a further step (a new password the account must choose): its challenge.
      if (r.mfa) return mfaRequired(req, reply, r.mfa);
      return loginBody(r);
    },
  );
  app.post(
    '/api/v1/auth/mfa/webauthn/options',
    {
      config,
      schema: {
        tags: ['auth'],
        summary: 'Request options for answering an mfa-required problem with a passkey (methods has webauthn); then POST /api/v1/auth/mfa with webauthn',
        body: MfaTokenBody,
        response: { 200: WebauthnOptions, ...problems(400, 401, 409, 413, 415, 429) },
      },
    },
    async (req) => optionsJson(await deps.upstreams.identity.mfaWebauthnOptions(req.body)),
  );
  app.post(
    '/api/v1/auth/mfa/passkey/options',
    {
      config,
      schema: {
        tags: ['auth'],
        summary: 'Creation options for enrolling a passkey with the mfaToken of an mfa-enrolment-required problem; then POST /api/v1/auth/mfa with passkey',
        body: MfaTokenBody,
        response: { 200: WebauthnOptions, ...problems(400, 401, 409, 413, 415, 429) },
      },
    },
    async (req) => optionsJson(await deps.upstreams.identity.mfaPasskeyEnrolmentOptions(req.body)),
  );
  // Passwordless: the options name no credential (the same answer for everyone), and every
  // failure of the sign-in is one 401.
  const passkeyConfig = { rateLimit: limitOf('login-passkey', deps.rateLimits.login) };
  app.post(
    '/api/v1/auth/passkey/options',
    {
      config: passkeyConfig,
      schema: {
        tags: ['auth'],
        summary: 'Request options for signing in with a passkey alone (discoverable credentials: no account named, the same for everyone)',
        response: { 200: WebauthnOptions, ...problems(429) },
      },
    },
    async () => optionsJson(await deps.upstreams.identity.passkeySignInOptions({})),
  );
  app.post(
    '/api/v1/auth/passkey',
    {
      config: passkeyConfig,
      schema: {
        tags: ['auth'],
        summary: 'Sign in with a passkey alone (user verification required): the login body; amr hwk or swk and mfa',
        body: PasskeySignInBody,
        response: { 200: LoginResponse, ...problems(400, 401, 413, 415, 429) },
      },
    },
    async (req) => loginBody(await deps.upstreams.identity.passkeySignIn({ responseJson: JSON.stringify(req.body.response) })),
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
