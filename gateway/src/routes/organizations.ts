/**
 * The organizations API (issue #41; registered inside `authenticated`, because an organization's
 * own administrators, holding its `org.admin` role and no platform permission, manage its
 * members): `/api/v1/organizations` with the collection rules of DESIGN §2, its `/members`
 * sub-resource and `/members/{userId}/roles`, and the organization role template at
 * `/api/v1/organization-roles`. The directory decides who may (organizations.manage, or
 * org.admin of that organization) and answers 404 for an organization the caller may not see.
 * Routes under `/api/v1/organizations/{id}/` accept an organization token only for its own
 * organization (`orgTokenGuard`).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { organizationsV1 } from '@iam/contracts';
import { Envelope, problems } from '../schemas/common';
import {
  AddMemberBody,
  CreateOrganizationBody,
  CreateOrganizationRoleBody,
  Member,
  MemberParams,
  MemberQuery,
  MemberRoles,
  MemberRolesBody,
  OrgIdParams,
  Organization,
  OrganizationQuery,
  OrganizationRole,
  OrganizationRoleQuery,
  UpdateOrganizationBody,
  UpdateOrganizationRoleBody,
} from '../schemas/organizations';
import type { Upstreams } from '../upstreams';
import { requirePermission } from '../plugins/app/auth';
import { orgTokenGuard } from './organization-guard';
import { organizationSubRoutes } from './organization-invitations';
import { organizationScimRoutes } from './organization-scim';
import { listQuery, paged } from './organization-paging';

const PATH = '/api/v1/organizations';
const ROLES_PATH = '/api/v1/organization-roles';
/** Creating an organization and changing the role template are the platform's: refused before the body is read. */
const platformOnly = requirePermission('organizations.manage');

const orgJson = (o: organizationsV1.Organization) => ({ ...o, createdAt: o.createdAt!, updatedAt: o.updatedAt!, deletedAt: o.deletedAt ?? null });
const memberJson = (m: organizationsV1.Member) => ({ ...m, joinedAt: m.joinedAt! });
const roleJson = (r: organizationsV1.OrganizationRole) => ({ ...r, createdAt: r.createdAt!, updatedAt: r.updatedAt!, deletedAt: r.deletedAt ?? null });

export interface OrganizationRoutesOptions {
  readonly upstreams: Pick<Upstreams, 'organizations'>;
  /** PUBLIC_URL: the SCIM base URL a new connection's answer names. */
  readonly publicUrl?: string;
}

export const organizationRoutes: FastifyPluginAsyncTypebox<OrganizationRoutesOptions> = async (app, { upstreams, publicUrl }) => {
  const u = upstreams.organizations;
  const tags = ['organizations'];
  app.addHook('onRequest', orgTokenGuard(PATH));
  await app.register(organizationSubRoutes, { upstreams });
  await app.register(organizationScimRoutes, { upstreams, publicUrl });

  app.get(
    PATH,
    {
      schema: {
        tags,
        summary: 'List organizations (organizations.manage: all; anyone else: those they are a member of), or fetch one with ?id=',
        querystring: OrganizationQuery,
        response: { 200: { anyOf: [Envelope(Organization, { exactFlag: true }), Organization] }, ...problems(400, 403, 404) },
      },
    },
    async (req, reply) => {
      const { id, ...rest } = req.query;
      if (id !== undefined) {
        const one = orgJson(await u.getOrganization({ id }));
        return reply.type('application/json; charset=utf-8').serializer(reply.compileSerializationSchema(Organization, '200')).send(one);
      }
      const q = listQuery(rest);
      return paged(await u.listOrganizations(q), q.pageSize, orgJson);
    },
  );

  app.post(
    PATH,
    { onRequest: platformOnly, schema: { tags, summary: 'Create an organization (organizations.manage)', body: CreateOrganizationBody, response: { 201: Organization, ...problems(400, 403, 409, 413, 415) } } },
    async (req, reply) => {
      const o = orgJson(await u.createOrganization(req.body));
      return reply.code(201).header('location', `${PATH}/${o.id}`).send(o);
    },
  );

  app.get(`${PATH}/:id`, { schema: { tags, summary: 'Get an organization', params: OrgIdParams, response: { 200: Organization, ...problems(400, 403, 404) } } }, async (req) =>
    orgJson(await u.getOrganization({ id: req.params.id })),
  );

  app.put(
    `${PATH}/:id`,
    {
      schema: {
        tags,
        summary: 'Update an organization (organizations.manage): fields given replace, fields absent stay',
        params: OrgIdParams,
        body: UpdateOrganizationBody,
        response: { 200: Organization, ...problems(400, 403, 404, 409, 413, 415) },
      },
    },
    async (req) => {
      const b = req.body;
      return orgJson(await u.updateOrganization({ id: req.params.id, name: b.name, slug: b.slug, jitEnabled: b.jitEnabled, jitRoles: b.jitRoles && { names: [...b.jitRoles] } }));
    },
  );

  app.delete(`${PATH}/:id`, { schema: { tags, summary: 'Delete an organization (soft; organizations.manage)', params: OrgIdParams, response: { 204: { type: 'null' }, ...problems(400, 403, 404) } } }, async (req, reply) => {
    await u.deleteOrganization({ id: req.params.id });
    return reply.code(204).send();
  });

  app.get(
    `${PATH}/:id/members`,
    { schema: { tags, summary: "List an organization's members (keyset cursor; organizations.manage or its org.admin)", params: OrgIdParams, querystring: MemberQuery, response: { 200: Envelope(Member, { exactFlag: true }), ...problems(400, 403, 404) } } },
    async (req) => {
      const q = listQuery(req.query);
      return paged(await u.listMembers({ organizationId: req.params.id, query: q }), q.pageSize, memberJson);
    },
  );

  app.post(
    `${PATH}/:id/members`,
    { schema: { tags, summary: 'Add a user as a member with organization roles (organizations.manage; org admins invite)', params: OrgIdParams, body: AddMemberBody, response: { 201: Member, ...problems(400, 403, 404, 409, 413, 415) } } },
    async (req, reply) => {
      const m = memberJson(await u.addMember({ organizationId: req.params.id, userId: req.body.userId, roles: [...(req.body.roles ?? [])] }));
      return reply.code(201).header('location', `${PATH}/${m.organizationId}/members/${m.userId}`).send(m);
    },
  );

  app.get(`${PATH}/:id/members/:userId`, { schema: { tags, summary: 'Get a member', params: MemberParams, response: { 200: Member, ...problems(400, 403, 404) } } }, async (req) =>
    memberJson(await u.getMember({ organizationId: req.params.id, userId: req.params.userId })),
  );

  app.delete(`${PATH}/:id/members/:userId`, { schema: { tags, summary: 'Remove a member (the last org.admin stays: 409)', params: MemberParams, response: { 204: { type: 'null' }, ...problems(400, 403, 404, 409) } } }, async (req, reply) => {
    await u.removeMember({ organizationId: req.params.id, userId: req.params.userId });
    return reply.code(204).send();
  });

  app.get(`${PATH}/:id/members/:userId/roles`, { schema: { tags, summary: "A member's organization roles", params: MemberParams, response: { 200: MemberRoles, ...problems(400, 403, 404) } } }, async (req) => ({
    roles: (await u.getMember({ organizationId: req.params.id, userId: req.params.userId })).roles,
  }));

  app.put(
    `${PATH}/:id/members/:userId/roles`,
    {
      schema: {
        tags,
        summary: "Replace a member's organization roles (an org admin assigns only roles whose permissions it holds there)",
        params: MemberParams,
        body: MemberRolesBody,
        response: { 200: MemberRoles, ...problems(400, 403, 404, 409, 413, 415) },
      },
    },
    async (req) => ({ roles: (await u.setMemberRoles({ organizationId: req.params.id, userId: req.params.userId, roles: [...req.body.roles] })).roles }),
  );

  // The organization role template (organizations.manage; the directory checks).
  app.get(
    ROLES_PATH,
    { schema: { tags, summary: 'List the organization role template, or fetch one with ?id=', querystring: OrganizationRoleQuery, response: { 200: { anyOf: [Envelope(OrganizationRole, { exactFlag: true }), OrganizationRole] }, ...problems(400, 403, 404) } } },
    async (req, reply) => {
      const { id, ...rest } = req.query;
      if (id !== undefined) {
        const one = roleJson(await u.getOrganizationRole({ id }));
        return reply.type('application/json; charset=utf-8').serializer(reply.compileSerializationSchema(OrganizationRole, '200')).send(one);
      }
      const q = listQuery(rest);
      return paged(await u.listOrganizationRoles(q), q.pageSize, roleJson);
    },
  );
  app.post(ROLES_PATH, { onRequest: platformOnly, schema: { tags, summary: 'Create an organization role from existing permissions', body: CreateOrganizationRoleBody, response: { 201: OrganizationRole, ...problems(400, 403, 409, 413, 415) } } }, async (req, reply) => {
    const r = roleJson(await u.createOrganizationRole({ name: req.body.name, description: req.body.description ?? '', permissions: [...(req.body.permissions ?? [])] }));
    return reply.code(201).header('location', `${ROLES_PATH}/${r.id}`).send(r);
  });
  app.get(`${ROLES_PATH}/:id`, { schema: { tags, summary: 'Get an organization role', params: OrgIdParams, response: { 200: OrganizationRole, ...problems(400, 403, 404) } } }, async (req) =>
    roleJson(await u.getOrganizationRole({ id: req.params.id })),
  );
  app.put(
    `${ROLES_PATH}/:id`,
    { onRequest: platformOnly, schema: { tags, summary: 'Update an organization role', params: OrgIdParams, body: UpdateOrganizationRoleBody, response: { 200: OrganizationRole, ...problems(400, 403, 404, 409, 413, 415) } } },
    async (req) => {
      const b = req.body;
      return roleJson(await u.updateOrganizationRole({ id: req.params.id, name: b.name, description: b.description, permissions: b.permissions && { names: [...b.permissions] } }));
    },
  );
  app.delete(`${ROLES_PATH}/:id`, { onRequest: platformOnly, schema: { tags, summary: 'Delete an organization role (org.admin is built in: 409)', params: OrgIdParams, response: { 204: { type: 'null' }, ...problems(400, 403, 404, 409) } } }, async (req, reply) => {
    await u.deleteOrganizationRole({ id: req.params.id });
    return reply.code(204).send();
  });
};
