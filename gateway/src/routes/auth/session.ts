/** Routes of a signed-in caller (registered in an `authenticated` context): revoke, verification request. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Denylist } from '../../auth/denylist';
import type { GatewayConfig } from '../../config';
import { limitOf } from '../../plugins/external/rate-limit';
import { Accepted } from '../../schemas/auth';
import { problems } from '../../schemas/common';
import type { Upstreams } from '../../upstreams';
import { ACCEPTED } from './anonymous';

export interface SessionDeps {
  readonly upstreams: Upstreams;
  readonly denylist: Denylist;
  readonly rateLimits: GatewayConfig['rateLimits'];
}

export const sessionRoutes: FastifyPluginAsyncTypebox<SessionDeps> = async (app, deps) => {
  app.post(
    '/api/v1/auth/revoke',
    { schema: { tags: ['auth'], summary: 'Revoke the presented access token and every refresh token of the account', response: { 204: { type: 'null' } } } },
    async (req, reply) => {
      await deps.upstreams.identity.revoke({ accessToken: req.bearerToken! });
      // This replica refuses the token at once; the others learn it from the event.
      deps.denylist.add(req.principal!.jti, new Date(req.principal!.exp * 1000));
      return reply.code(204).send();
    },
  );

  app.post(
    '/api/v1/auth/email-verification/request',
    {
      config: { rateLimit: limitOf('email-actions', deps.rateLimits.emailActions) },
      schema: { tags: ['auth'], summary: 'Ask for an email-verification email', response: { 202: Accepted, ...problems(429) } },
    },
    async (req, reply) => {
      await deps.upstreams.identity.requestEmailVerification({ userId: req.principal!.sub });
      return reply.code(202).send(ACCEPTED);
    },
  );
};
