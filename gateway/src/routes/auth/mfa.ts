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
import {
  AccountSecurity,
  CodeBody,
  MfaBody,
  MfaStatus,
  MfaTokenBody,
  Passkey,
  PasskeyList,
  PasskeyRegistrationBody,
  PasskeyRenameBody,
  PasskeySignInBody,
  RecoveryCodes,
  ResetFactorsBody,
  SessionList,
  SessionParams,
  TotpEnrolment,
  UserSessionParams,
  WebauthnOptions,
} from '../../schemas/mfa';
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

const passkeyJson = (p: identityV1.Passkey) => ({
  id: p.id,
  name: p.name,
  deviceType: p.deviceType,
  backedUp: p.backedUp,
  transports: p.transports,
  createdAt: (p.createdAt ?? new Date(0)).toISOString(),
  lastUsedAt: p.lastUsedAt ? p.lastUsedAt.toISOString() : null,
});

/** WebAuthn options from identity (JSON it made). */
const optionsJson = (r: identityV1.WebauthnJson): Record<string, unknown> => JSON.parse(r.json) as Record<string, unknown>;

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
      const { mfaToken, code, recoveryCode, webauthn, passkey } = req.body;
      return loginBody(
        await deps.upstreams.identity.completeMfa({
          mfaToken,
          code: code ?? '',
          recoveryCode: recoveryCode ?? '',
          webauthnJson: webauthn ? JSON.stringify(webauthn) : '',
          newPasskeyJson: passkey ? JSON.stringify(passkey.response) : '',
          newPasskeyName: passkey?.name ?? '',
        }),
      );
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

  app.post(
    '/api/v1/me/passkeys/options',
    {
      schema: {
        tags,
        summary: 'Creation options for registering a passkey (WebAuthn L3 JSON; user verification required)',
        response: { 200: WebauthnOptions },
      },
    },
    async (req) => optionsJson(await id.passkeyRegistrationOptions(me(req.bearerToken))),
  );
  app.post(
    '/api/v1/me/passkeys',
    {
      schema: {
        tags,
        summary: 'Register a passkey: its name and the credential the browser made for the options',
        body: PasskeyRegistrationBody,
        response: { 201: Passkey, ...problems(400, 409, 413, 415) },
      },
    },
    async (req, reply) => {
      const p = await id.registerPasskey({ accessToken: req.bearerToken ?? '', name: req.body.name, responseJson: JSON.stringify(req.body.response) });
      return reply.code(201).header('location', `/api/v1/me/passkeys/${p.id}`).send(passkeyJson(p));
    },
  );
  app.get(
    '/api/v1/me/passkeys',
    {
      schema: {
        tags,
        summary: 'Your passkeys',
        response: { 200: PasskeyList },
      },
    },
    async (req) => ({ items: (await id.listPasskeys(me(req.bearerToken))).passkeys.map(passkeyJson) }),
  );
  app.patch(
    '/api/v1/me/passkeys/:id',
    {
      schema: {
        tags,
        summary: 'Rename one of your passkeys',
        params: IdParams,
        body: PasskeyRenameBody,
        response: { 200: Passkey, ...problems(400, 404, 413, 415) },
      },
    },
    async (req) => passkeyJson(await id.renamePasskey({ accessToken: req.bearerToken ?? '', passkeyId: req.params.id, name: req.body.name })),
  );
  app.delete(
    '/api/v1/me/passkeys/:id',
    {
      schema: {
        tags,
        summary: `Remove one of your passkeys (the last factor takes the recovery codes with it). ${reauth}`,
        params: IdParams,
        response: { 204: { type: 'null' }, ...problems(400, 403, 404) },
      },
    },
    async (req, reply) => {
      await id.removePasskey({ accessToken: req.bearerToken ?? '', passkeyId: req.params.id });
      return reply.code(204).send();
    },
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
  app.delete(
    '/api/v1/users/:id/sessions/:sid',
    {
      schema: {
        tags: stags,
        summary: 'End one session of a user (and its tokens)',
        params: UserSessionParams,
        response: { 204: { type: 'null' }, ...problems(400, 403, 404) },
      },
    },
    async (req, reply) => {
      await id.endUserSession({ userId: req.params.id, sessionId: req.params.sid });
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
