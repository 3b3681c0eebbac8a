/**
 * The caller's own second factors, passkeys and sessions (DESIGN §5; registered in an
 * authenticated context). Identity verifies the bearer token of every call again and decides:
 * the account's security is managed with first-party tokens only (a REST login's, or the
 * console's and the account page's, \`iam-console\`), and adding or removing a factor and new
 * recovery codes need a sign-in within 5 minutes (services/identity/README.md, "Who may change
 * an account's security").
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Denylist } from '../../auth/denylist';
import { IdParams, problems } from '../../schemas/common';
import { CodeBody, MfaStatus, Passkey, PasskeyList, PasskeyRegistrationBody, PasskeyRenameBody, RecoveryCodes, SessionList, SessionParams, TotpEnrolment, WebauthnOptions } from '../../schemas/mfa';
import type { MfaDeps } from './mfa';
import { optionsJson, passkeyJson, sessionJson } from './security-json';

const tags = ['mfa'];

/** The caller's own second factors and sessions (in an authenticated context). */
export const meRoutes: FastifyPluginAsyncTypebox<MfaDeps & { denylist: Denylist }> = async (app, deps) => {
  const id = deps.upstreams.identity;
  const me = (token: string | null) => ({ accessToken: token ?? '' });
  const reauth = 'Needs a sign-in within 5 minutes (else 403 urn:iam:problem:reauthentication-required)';
  const mailed = 'The user is mailed about it';

  app.get(
    '/api/v1/me/mfa',
    {
      schema: {
        tags,
        summary: 'Your second factors',
        response: { 200: MfaStatus, ...problems(403) },
      },
    },
    async (req) => id.getMfaStatus(me(req.bearerToken)),
  );
  app.post(
    '/api/v1/me/mfa/totp',
    {
      schema: {
        tags,
        summary: `Start enrolling an authenticator app: a pending secret, active after a right code. ${reauth}`,
        response: { 200: TotpEnrolment, ...problems(403, 409) },
      },
    },
    async (req) => id.startTotp(me(req.bearerToken)),
  );
  app.post(
    '/api/v1/me/mfa/totp/activate',
    {
      schema: {
        tags,
        summary: `Activate the pending authenticator app with a code from it. ${reauth}. ${mailed}`,
        body: CodeBody,
        response: { 204: { type: 'null' }, ...problems(400, 403, 409, 413, 415) },
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
        summary: `Creation options for registering a passkey (WebAuthn L3 JSON; user verification required). ${reauth}`,
        response: { 200: WebauthnOptions, ...problems(403) },
      },
    },
    async (req) => optionsJson(await id.passkeyRegistrationOptions(me(req.bearerToken))),
  );
  app.post(
    '/api/v1/me/passkeys',
    {
      schema: {
        tags,
        summary: `Register a passkey: its name and the credential the browser made for the options. ${reauth}. ${mailed}`,
        body: PasskeyRegistrationBody,
        response: { 201: Passkey, ...problems(400, 403, 409, 413, 415) },
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
        response: { 200: PasskeyList, ...problems(403) },
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
        response: { 200: Passkey, ...problems(400, 403, 404, 413, 415) },
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
        response: { 200: SessionList, ...problems(403) },
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
        response: { 204: { type: 'null' }, ...problems(400, 403, 404) },
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
        response: { 204: { type: 'null' }, ...problems(403) },
      },
    },
    async (req, reply) => {
      await id.endMyOtherSessions(me(req.bearerToken));
      return reply.code(204).send();
    },
  );
};
