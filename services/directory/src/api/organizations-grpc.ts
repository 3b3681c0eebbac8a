/** The OrganizationService's gRPC handlers: proto messages in, use cases, proto messages out. */
import { organizationsV1 } from '@iam/contracts';
import { type HandlerDeps, type ServiceBinding, bindService, isUuid } from '@iam/platform';
import type { DirectoryUseCases } from '../app/use-cases';
import type { Invitation, Member, Organization, OrganizationDomain, OrganizationRole } from '../domain/organizations';
import type { ScimConnection } from '../domain/scim';
import { actor, listed } from './grpc';

const toOrganization = (o: Organization): organizationsV1.Organization => ({
  id: o.id,
  name: o.name,
  slug: o.slug,
  jitEnabled: o.jitEnabled,
  jitRoles: [...o.jitRoles],
  createdAt: o.createdAt,
  updatedAt: o.updatedAt,
  deletedAt: o.deletedAt ?? undefined,
});

const toMember = (m: Member): organizationsV1.Member => ({ ...m, roles: [...m.roles] });

const toRole = (r: OrganizationRole): organizationsV1.OrganizationRole => ({
  id: r.id,
  name: r.name,
  description: r.description,
  permissions: [...r.permissions],
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
  deletedAt: r.deletedAt ?? undefined,
});

const toInvitation = (i: Invitation): organizationsV1.Invitation => ({ ...i, roles: [...i.roles] });
const toDomain = (d: OrganizationDomain): organizationsV1.Domain => ({ ...d, checkedAt: d.checkedAt ?? undefined, verifiedAt: d.verifiedAt ?? undefined });

const toConnection = (c: ScimConnection): organizationsV1.ScimConnection => ({ ...c, revokedAt: c.revokedAt ?? undefined, lastUsedAt: c.lastUsedAt ?? undefined });

const EMPTY_QUERY = { page: 1, pageSize: 25, q: '', includeDeleted: false, cursor: '', sort: '' };

export function organizationsGrpc(uc: Pick<DirectoryUseCases, 'organizations' | 'organizationRoles' | 'invitations' | 'domains' | 'scimConnections'>, deps: HandlerDeps): ServiceBinding[] {
  const o = uc.organizations;
  const r = uc.organizationRoles;
  return [
    bindService(
      organizationsV1.OrganizationServiceService,
      {
        createOrganization: async (req, ctx) => toOrganization(await o.create(actor(ctx), req)),
        getOrganization: async (req, ctx) => toOrganization(await o.get(actor(ctx), req.id)),
        updateOrganization: async (req, ctx) =>
          toOrganization(await o.update(actor(ctx), req.id, { name: req.name, slug: req.slug, jitEnabled: req.jitEnabled, jitRoles: req.jitRoles?.names })),
        deleteOrganization: async (req, ctx) => (await o.remove(actor(ctx), req.id), {}),
        listOrganizations: (q, ctx) => listed('organizations', q, (query) => o.list(actor(ctx), query), toOrganization),
        listMembers: (req, ctx) => {
          const q = req.query ?? EMPTY_QUERY;
          // A cursor is bound to its organization: one of A's is a 400 in B's list.
          return listed('organization-members', q, (query) => o.listMembers(actor(ctx), req.organizationId, query), toMember, { organizationId: req.organizationId });
        },
        getMember: async (req, ctx) => toMember(await o.getMember(actor(ctx), req.organizationId, req.userId)),
        addMember: async (req, ctx) => toMember(await o.addMember(actor(ctx), req.organizationId, { userId: req.userId, roles: req.roles })),
        removeMember: async (req, ctx) => (await o.removeMember(actor(ctx), req.organizationId, req.userId), {}),
        setMemberRoles: async (req, ctx) => toMember(await o.setMemberRoles(actor(ctx), req.organizationId, req.userId, req.roles)),
        createOrganizationRole: async (req, ctx) => toRole(await r.create(actor(ctx), req)),
        getOrganizationRole: async (req) => toRole(await r.get(req.id)),
        updateOrganizationRole: async (req, ctx) => toRole(await r.update(actor(ctx), req.id, { name: req.name, description: req.description, permissions: req.permissions?.names })),
        deleteOrganizationRole: async (req, ctx) => (await r.remove(actor(ctx), req.id), {}),
        listOrganizationRoles: (q) => listed('organization-roles', q, (query) => r.list(query), toRole),
        invite: async (req, ctx) => toInvitation(await uc.invitations.invite(actor(ctx), req.organizationId, { email: req.email, roles: req.roles })),
        listInvitations: (req, ctx) =>
          listed('organization-invitations', req.query ?? EMPTY_QUERY, (query) => uc.invitations.list(actor(ctx), req.organizationId, query), toInvitation, { organizationId: req.organizationId }),
        getInvitation: async (req, ctx) => toInvitation(await uc.invitations.get(actor(ctx), req.organizationId, req.id)),
        revokeInvitation: async (req, ctx) => (await uc.invitations.revoke(actor(ctx), req.organizationId, req.id), {}),
        acceptInvitation: async (req, ctx) => {
          const a = await uc.invitations.accept(actor(ctx), req.token);
          return { organizationId: a.organizationId, roles: [...a.roles] };
        },
        claimDomain: async (req, ctx) => toDomain(await uc.domains.claim(actor(ctx), req.organizationId, req.domain)),
        listDomains: (req, ctx) =>
          listed('organization-domains', req.query ?? EMPTY_QUERY, (query) => uc.domains.list(actor(ctx), req.organizationId, query), toDomain, { organizationId: req.organizationId }),
        getDomain: async (req, ctx) => toDomain(await uc.domains.get(actor(ctx), req.organizationId, req.id)),
        verifyDomain: async (req, ctx) => toDomain(await uc.domains.verify(actor(ctx), req.organizationId, req.id)),
        deleteDomain: async (req, ctx) => (await uc.domains.remove(actor(ctx), req.organizationId, req.id), {}),
        createScimConnection: async (req, ctx) => {
          const made = await uc.scimConnections.create(actor(ctx), req.organizationId, { name: req.name });
          return { connection: toConnection(made.connection), token: made.token };
        },
        listScimConnections: async (req, ctx) => {
          const q = req.query ?? EMPTY_QUERY;
          const page = await uc.scimConnections.list(actor(ctx), req.organizationId, { page: q.page || 1, pageSize: q.pageSize || 25 });
          return { items: page.items.map(toConnection), totalCount: page.totalCount };
        },
        revokeScimConnection: async (req, ctx) => (await uc.scimConnections.revoke(actor(ctx), req.organizationId, req.id), {}),
      },
      deps,
      ['gateway'],
    ),
    bindService(
      organizationsV1.OrganizationAccessServiceService,
      {
        getOrganizationGrant: async (req) => {
          const which = req.organizationId ? { id: req.organizationId } : { slug: req.organizationSlug };
          const g = await o.grantForToken(req.userId, which, (userId) => uc.domains.joinByDomain(userId));
          return g
            ? { member: true, organizationId: g.organization.id, organizationSlug: g.organization.slug, roles: [...g.roles], permissions: [...g.permissions] }
            : { member: false, organizationId: '', organizationSlug: '', roles: [], permissions: [] };
        },
        listUserOrganizations: async (req) => {
          const all = isUuid(req.userId) ? await o.grantsOf(req.userId) : [];
          return { grants: all.map((g) => ({ member: true, organizationId: g.organization.id, organizationSlug: g.organization.slug, roles: [...g.roles], permissions: [...g.permissions] })) };
        },
      },
      deps,
      // Organization tokens: identity alone.
      ['identity'],
    ),
  ];
}
