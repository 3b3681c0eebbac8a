/**
 * users.manage: a user's sessions, lock and second factors (DESIGN §5). The Administrator rule of
 * DESIGN §3 is identity's: only an Administrator reads or changes an Administrator's (403 to
 * anyone else, the reads included).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdParams, problems } from '../../schemas/common';
import { AccountSecurity, ResetFactorsBody, SessionList, UserSessionParams } from '../../schemas/mfa';
import type { MfaDeps } from './mfa';
import { sessionJson } from './security-json';

/** users.manage (the Administrator rule of DESIGN §3 is identity's): a user's sessions, lock and factors. */
export const adminSecurityRoutes: FastifyPluginAsyncTypebox<MfaDeps> = async (app, deps) => {
  const id = deps.upstreams.identity;
  const stags = ['users'];
  app.get(
    '/api/v1/users/:id/sessions',
    {
      schema: {
        tags: stags,
        summary: "A user's sessions (an Administrator's only to an Administrator: 403 otherwise)",
        params: IdParams,
        response: { 200: SessionList, ...problems(400, 403, 404) },
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
        response: { 204: { type: 'null' }, ...problems(400, 403, 404) },
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
        summary: "A user's lock state (failed sign-ins) and second factors (an Administrator's only to an Administrator: 403 otherwise)",
        params: IdParams,
        response: { 200: AccountSecurity, ...problems(400, 403, 404) },
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
        response: { 204: { type: 'null' }, ...problems(400, 403, 404) },
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
        response: { 204: { type: 'null' }, ...problems(400, 403, 404, 413, 415) },
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
