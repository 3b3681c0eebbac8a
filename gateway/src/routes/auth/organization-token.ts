/**
 * `POST /api/v1/auth/organization-token {refreshToken, organizationId, scope?}` (issue #41): a live
 * refresh token exchanged for an access token of one organization (identity's
 * OrganizationTokenService; the refresh token is not rotated). Anonymous like refresh, with
 * refresh's rate limit. A non-member and an unknown organization get the same 403.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { GatewayConfig } from '../../config';
import { limitOf } from '../../plugins/external/rate-limit';
import { Uuid, problems } from '../../schemas/common';
import type { Upstreams } from '../../upstreams';

const Body = Type.Object(
  {
    refreshToken: Type.String({ minLength: 1, maxLength: 200 }),
    organizationId: Uuid,
    scope: Type.Optional(Type.String({ maxLength: 2000, pattern: '^[A-Za-z0-9._:-]*( [A-Za-z0-9._:-]+)*$', description: 'Space-separated permissions asked for; absent = every permission the member holds there' })),
  },
  { additionalProperties: false },
);

const Answer = Type.Object(
  {
    token: Type.String(),
    tokenType: Type.Literal('Bearer'),
    expiresIn: Type.Integer(),
    organization: Type.Object({ id: Uuid, slug: Type.String() }, { additionalProperties: false }),
    permissions: Type.Array(Type.String(), { description: "The member's permissions there, narrowed to the scope asked for" }),
  },
  { additionalProperties: false },
);

export const organizationTokenRoute: FastifyPluginAsyncTypebox<{ upstreams: Pick<Upstreams, 'organizationTokens'>; rateLimits: GatewayConfig['rateLimits'] }> = async (app, deps) => {
  app.post(
    '/api/v1/auth/organization-token',
    {
      config: { rateLimit: limitOf('refresh', deps.rateLimits.refresh) },
      schema: {
        tags: ['auth'],
        summary: 'Exchange a refresh token for an access token of one organization (the refresh token stays valid)',
        body: Body,
        response: { 200: Answer, ...problems(400, 401, 403, 413, 415, 429) },
      },
    },
    async (req) => {
      const r = await deps.upstreams.organizationTokens.exchangeOrganizationToken({ refreshToken: req.body.refreshToken, organizationId: req.body.organizationId, scope: req.body.scope ?? '' });
      return { token: r.accessToken, tokenType: 'Bearer' as const, expiresIn: r.expiresIn, organization: { id: r.organizationId, slug: r.organizationSlug }, permissions: r.permissions };
    },
  );
};
