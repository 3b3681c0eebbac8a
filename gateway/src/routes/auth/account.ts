/**
 * The account page's routes (the caller's own record; registered in an `authenticated` context).
 * The directory applies a change with the caller as actor (its call assertion), audits it
 * (`directory.user.updated` with before and after) and holds the rules: a person may change
 * themselves, and the bodies here carry no role, flag or id. A password or email change first
 * asks identity for the current password (the login's check and lockout), and ends every session
 * of the account (DESIGN §3): the page signs in again. A new email is unverified; the
 * verification mail goes to it. The password, the email and signing out everywhere need a
 * first-party token (identity answers 403 urn:iam:problem:first-party-required to a token a
 * third-party OAuth client holds); the names (PUT /api/v1/me) do not.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, type Logger, isTransientFailure } from '@iam/platform/core';
import type { directoryV1 } from '@iam/contracts';
import type { GatewayConfig } from '../../config';
import { limitOf } from '../../plugins/external/rate-limit';
import { ChangeEmailBody, ChangePasswordBody, EmailChanged, Me, UpdateMeBody } from '../../schemas/account';
import { problems } from '../../schemas/common';
import type { Upstreams } from '../../upstreams';

export interface AccountDeps {
  readonly upstreams: Upstreams;
  readonly rateLimits: GatewayConfig['rateLimits'];
  readonly logger: Logger;
}

const tags = ['account'];
const meJson = (u: directoryV1.User) => ({ id: u.id, firstName: u.firstName, lastName: u.lastName, email: u.email, emailVerified: u.emailVerified, roles: u.roles });

/** The directory's field names are the users API's: here the new password is `newPassword`. */
function renamed(err: unknown, from: string, to: string): unknown {
  if (!(err instanceof AppError) || !err.errors?.length) return err;
  return err.withFieldErrors(err.errors.map((e) => (e.field === from || e.field === `body.${from}` ? { ...e, field: `body.${to}` } : e)));
}

export const accountRoutes: FastifyPluginAsyncTypebox<AccountDeps> = async (app, deps) => {
  const { users, identity } = deps.upstreams;
  // Asking for the current password is a login's check: it shares the login's budget.
  const guessing = { rateLimit: limitOf('account-password', deps.rateLimits.login) };

  app.get(
    '/api/v1/me',
    { schema: { tags, summary: 'Your own record (names, email and whether it is verified, roles)', response: { 200: Me } } },
    async (req) => meJson(await users.getUser({ id: req.principal!.sub, includeDeleted: false })),
  );

  app.put(
    '/api/v1/me',
    { schema: { tags, summary: 'Change your names', body: UpdateMeBody, response: { 200: Me, ...problems(400, 413, 415) } } },
    async (req) => meJson(await users.updateUser({ id: req.principal!.sub, firstName: req.body.firstName, lastName: req.body.lastName, clearFields: [] })),
  );

  app.post(
    '/api/v1/me/password',
    {
      config: guessing,
      schema: {
        tags,
        summary: 'Change your password (the current one is asked again; every session of the account ends, this one too)',
        body: ChangePasswordBody,
        response: { 204: { type: 'null' }, ...problems(400, 403, 413, 415, 429) },
      },
    },
    async (req, reply) => {
      await identity.verifyMyPassword({ accessToken: req.bearerToken!, password: req.body.currentPassword });
      try {
        await users.updateUser({ id: req.principal!.sub, password: req.body.newPassword, clearFields: [] });
      } catch (err) {
        throw renamed(err, 'password', 'newPassword');
      }
      return reply.code(204).send();
    },
  );

  app.post(
    '/api/v1/me/sign-out-everywhere',
    {
      schema: {
        tags: ['sessions'],
        summary:
          'Sign out everywhere: end every session of your account, this one included, and its sign-ins at the OpenID provider (every access token issued until now stops working at every gateway within a second)',
        response: { 204: { type: 'null' }, ...problems(403) },
      },
    },
    async (req, reply) => {
      await identity.endAllMySessions({ accessToken: req.bearerToken! });
      return reply.code(204).send();
    },
  );

  app.post(
    '/api/v1/me/email',
    {
      config: guessing,
      schema: {
        tags,
        summary:
          'Change your email (the current password is asked again): the new address is unverified and a verification mail goes to it; every session of the account ends, this one too',
        body: ChangeEmailBody,
        response: { 200: EmailChanged, ...problems(400, 403, 409, 413, 415, 429) },
      },
    },
    async (req) => {
      const userId = req.principal!.sub;
      await identity.verifyMyPassword({ accessToken: req.bearerToken!, password: req.body.currentPassword });
      const user = await users.updateUser({ id: userId, email: req.body.email, clearFields: [] });
      // The change is made: a verification mail that cannot be asked for now (identity throttled
      // or away) does not turn it into an error; the account page asks for another.
      try {
        await identity.requestEmailVerification({ userId });
      } catch (err) {
        // Expected: the address's hourly budget, identity away or slow. Anything else is a fault to look at.
        deps.logger[isTransientFailure(err) ? 'warn' : 'error']({ err }, 'email changed; its verification mail could not be requested');
        return { email: user.email, emailVerified: false as const, message: `Your email is now ${user.email}, but its verification email could not be sent just now. Ask for another from your account page, then sign in again.` };
      }
      return { email: user.email, emailVerified: false as const, message: `A verification email was sent to ${user.email}. Follow its link to verify the address, then sign in again.` };
    },
  );
};
