/**
 * An organization's invitations and domains (issue #41), registered inside organizationRoutes
 * (so its organization-token guard holds): `/api/v1/organizations/{id}/invitations` (the
 * platform or the organization's org.admin) and `/domains` (the platform), and
 * `POST /api/v1/invitations/accept` for the signed-in invitee. The directory decides.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { organizationsV1 } from '@iam/contracts';
import { Envelope, problems } from '../schemas/common';
import { AcceptInvitationBody, AcceptedInvitation, ClaimDomainBody, Domain, DomainParams, InvitationParams, Invitation, InviteBody, OrgIdParams, SubListQuery } from '../schemas/organizations';
import type { Upstreams } from '../upstreams';
import { listQuery, paged } from './organization-paging';

const PATH = '/api/v1/organizations';

function statusOf(s: string): 'pending' | 'accepted' | 'revoked' | 'expired' {
  if (s === 'pending' || s === 'accepted' || s === 'revoked' || s === 'expired') return s;
  throw new Error(`unknown invitation status "${s}"`);
}
function domainStatus(s: string): 'pending' | 'verified' | 'failed' {
  if (s === 'pending' || s === 'verified' || s === 'failed') return s;
  throw new Error(`unknown domain status "${s}"`);
}
const invitationJson = (i: organizationsV1.Invitation) => ({ ...i, status: statusOf(i.status), expiresAt: i.expiresAt!, createdAt: i.createdAt!, updatedAt: i.updatedAt! });
const domainJson = (d: organizationsV1.Domain) => ({ ...d, status: domainStatus(d.status), checkedAt: d.checkedAt ?? null, verifiedAt: d.verifiedAt ?? null, createdAt: d.createdAt! });

export const organizationSubRoutes: FastifyPluginAsyncTypebox<{ readonly upstreams: Pick<Upstreams, 'organizations'> }> = async (app, { upstreams }) => {
  const u = upstreams.organizations;
  const tags = ['organizations'];

  app.get(
    `${PATH}/:id/invitations`,
    { schema: { tags, summary: "An organization's invitations (organizations.manage or its org.admin)", params: OrgIdParams, querystring: SubListQuery, response: { 200: Envelope(Invitation, { exactFlag: true }), ...problems(400, 403, 404) } } },
    async (req) => {
      const q = listQuery(req.query);
      return paged(await u.listInvitations({ organizationId: req.params.id, query: q }), q.pageSize, invitationJson);
    },
  );
  app.post(
    `${PATH}/:id/invitations`,
    {
      schema: {
        tags,
        summary: 'Invite an address (mailed; single use, 7 days). A pending invitation of the address is sent again, not duplicated; a member is a 409',
        params: OrgIdParams,
        body: InviteBody,
        response: { 201: Invitation, ...problems(400, 403, 404, 409, 413, 415) },
      },
    },
    async (req, reply) => {
      const i = invitationJson(await u.invite({ organizationId: req.params.id, email: req.body.email, roles: [...(req.body.roles ?? [])] }));
      return reply.code(201).header('location', `${PATH}/${i.organizationId}/invitations/${i.id}`).send(i);
    },
  );
  app.get(`${PATH}/:id/invitations/:invitationId`, { schema: { tags, summary: 'Get an invitation', params: InvitationParams, response: { 200: Invitation, ...problems(400, 403, 404) } } }, async (req) =>
    invitationJson(await u.getInvitation({ organizationId: req.params.id, id: req.params.invitationId })),
  );
  app.delete(`${PATH}/:id/invitations/:invitationId`, { schema: { tags, summary: 'Revoke a pending invitation', params: InvitationParams, response: { 204: { type: 'null' }, ...problems(400, 403, 404) } } }, async (req, reply) => {
    await u.revokeInvitation({ organizationId: req.params.id, id: req.params.invitationId });
    return reply.code(204).send();
  });
  app.post(
    '/api/v1/invitations/accept',
    { schema: { tags, summary: "Accept an invitation as the signed-in user (its email must be the invited one); the token then works no more", body: AcceptInvitationBody, response: { 200: AcceptedInvitation, ...problems(400, 403, 413, 415) } } },
    async (req) => {
      const a = await u.acceptInvitation({ token: req.body.token });
      return { organizationId: a.organizationId, roles: a.roles };
    },
  );

  app.get(
    `${PATH}/:id/domains`,
    { schema: { tags, summary: "An organization's domains (organizations.manage)", params: OrgIdParams, querystring: SubListQuery, response: { 200: Envelope(Domain, { exactFlag: true }), ...problems(400, 403, 404) } } },
    async (req) => {
      const q = listQuery(req.query);
      return paged(await u.listDomains({ organizationId: req.params.id, query: q }), q.pageSize, domainJson);
    },
  );
  app.post(
    `${PATH}/:id/domains`,
    { schema: { tags, summary: 'Claim a domain (consumer mail domains refused); verify it with a TXT record at _iam-challenge.<domain>', params: OrgIdParams, body: ClaimDomainBody, response: { 201: Domain, ...problems(400, 403, 404, 409, 413, 415) } } },
    async (req, reply) => {
      const d = domainJson(await u.claimDomain({ organizationId: req.params.id, domain: req.body.domain }));
      return reply.code(201).header('location', `${PATH}/${d.organizationId}/domains/${d.id}`).send(d);
    },
  );
  app.get(`${PATH}/:id/domains/:domainId`, { schema: { tags, summary: 'Get a domain', params: DomainParams, response: { 200: Domain, ...problems(400, 403, 404) } } }, async (req) =>
    domainJson(await u.getDomain({ organizationId: req.params.id, id: req.params.domainId })),
  );
  app.post(`${PATH}/:id/domains/:domainId/verify`, { schema: { tags, summary: 'Check the TXT record now (pending → verified | failed)', params: DomainParams, response: { 200: Domain, ...problems(400, 403, 404, 409) } } }, async (req) =>
    domainJson(await u.verifyDomain({ organizationId: req.params.id, id: req.params.domainId })),
  );
  app.delete(`${PATH}/:id/domains/:domainId`, { schema: { tags, summary: 'Remove a domain', params: DomainParams, response: { 204: { type: 'null' }, ...problems(400, 403, 404) } } }, async (req, reply) => {
    await u.deleteDomain({ organizationId: req.params.id, id: req.params.domainId });
    return reply.code(204).send();
  });
};
