/**
 * An organization's SCIM connections (issue #42), registered inside organizationRoutes (so its
 * organization-token guard holds): `/api/v1/organizations/{id}/scim-connections`, for the
 * platform (organizations.manage) or the organization's org.admin. The token is in the
 * creation's answer only; revoking one stops it at once. The directory decides and audits.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { organizationsV1 } from '@iam/contracts';
import { Envelope, problems } from '../schemas/common';
import { OrgIdParams, SubListQuery } from '../schemas/organizations';
import { CreateScimConnectionBody, CreatedScimConnection, ScimConnection, ScimConnectionParams } from '../schemas/scim-connections';
import type { Upstreams } from '../upstreams';
import { listQuery, paged } from './organization-paging';
import { SCIM_PREFIX } from './scim';

const PATH = '/api/v1/organizations';

const connectionJson = (c: organizationsV1.ScimConnection) => ({ ...c, createdAt: c.createdAt!, revokedAt: c.revokedAt ?? null, lastUsedAt: c.lastUsedAt ?? null });

export const organizationScimRoutes: FastifyPluginAsyncTypebox<{ readonly upstreams: Pick<Upstreams, 'organizations'>; readonly publicUrl?: string }> = async (app, { upstreams, publicUrl }) => {
  const u = upstreams.organizations;
  const tags = ['organizations'];
  const origin = publicUrl ? new URL(publicUrl).origin : undefined;

  app.get(
    `${PATH}/:id/scim-connections`,
    { schema: { tags, summary: "An organization's SCIM connections (organizations.manage or its org.admin)", params: OrgIdParams, querystring: SubListQuery, response: { 200: Envelope(ScimConnection, { exactFlag: true }), ...problems(400, 403, 404) } } },
    async (req) => {
      const q = listQuery(req.query);
      const r = await u.listScimConnections({ organizationId: req.params.id, query: q });
      return paged({ items: r.items, totalCount: r.totalCount, totalCountEstimated: false, nextCursor: '', page: q.page }, q.pageSize, connectionJson);
    },
  );
  app.post(
    `${PATH}/:id/scim-connections`,
    {
      schema: {
        tags,
        summary: 'Create a SCIM connection: its bearer token is in this answer only (stored hashed)',
        params: OrgIdParams,
        body: CreateScimConnectionBody,
        response: { 201: CreatedScimConnection, ...problems(400, 403, 404, 413, 415) },
      },
    },
    async (req, reply) => {
      const made = await u.createScimConnection({ organizationId: req.params.id, name: req.body.name });
      const connection = connectionJson(made.connection!);
      const baseUrl = `${origin ?? `${req.protocol}://${req.host}`}${SCIM_PREFIX}/${connection.organizationId}`;
      return reply.code(201).header('cache-control', 'no-store').header('location', `${PATH}/${connection.organizationId}/scim-connections/${connection.id}`).send({ connection, token: made.token, baseUrl });
    },
  );
  app.delete(
    `${PATH}/:id/scim-connections/:connectionId`,
    { schema: { tags, summary: 'Revoke a SCIM connection (its token is refused from now on)', params: ScimConnectionParams, response: { 204: { type: 'null' }, ...problems(400, 403, 404) } } },
    async (req, reply) => {
      await u.revokeScimConnection({ organizationId: req.params.id, id: req.params.connectionId });
      return reply.code(204).send();
    },
  );
};
