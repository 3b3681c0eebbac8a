/**
 * The organizations API's schemas (issue #41). Bodies reject unknown fields; the directory
 * checks the values (slugs: UTS #39, lookalikes; names: no control characters).
 */
import { Type } from '@sinclair/typebox';
import { CURSOR_MAX_LENGTH, NullableTimestamp, PAGE_MAX, PageSize, SortParam, Timestamp, Uuid } from './common';

const RoleNames = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50, description: 'Names of organization roles (the platform-wide template)' });
const PermissionNames = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100, description: 'Names of existing permissions' });
const Slug = Type.String({ minLength: 2, maxLength: 63, description: 'Lower-case letters and digits joined by single hyphens; unique, lookalikes included (UTS #39)' });
const Name = Type.String({ minLength: 1, maxLength: 100 });

export const OrgIdParams = Type.Object({ id: Uuid }, { additionalProperties: false });
export const MemberParams = Type.Object({ id: Uuid, userId: Uuid }, { additionalProperties: false });

export const Organization = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    slug: Type.String(),
    jitEnabled: Type.Boolean({ description: 'Users whose verified email is on a verified domain join on sign-in' }),
    jitRoles: Type.Array(Type.String(), { description: 'The organization roles a member joining just in time gets' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    deletedAt: NullableTimestamp,
  },
  { additionalProperties: false },
);

export const CreateOrganizationBody = Type.Object({ name: Name, slug: Slug }, { additionalProperties: false });
export const UpdateOrganizationBody = Type.Object(
  { name: Type.Optional(Name), slug: Type.Optional(Slug), jitEnabled: Type.Optional(Type.Boolean()), jitRoles: Type.Optional(RoleNames) },
  { additionalProperties: false },
);

export const Member = Type.Object(
  {
    organizationId: Uuid,
    userId: Uuid,
    email: Type.String(),
    firstName: Type.String(),
    lastName: Type.String(),
    emailVerified: Type.Boolean(),
    roles: Type.Array(Type.String()),
    joinedAt: Timestamp,
  },
  { additionalProperties: false },
);
export const AddMemberBody = Type.Object({ userId: Uuid, roles: Type.Optional(RoleNames) }, { additionalProperties: false });
export const MemberRolesBody = Type.Object({ roles: RoleNames }, { additionalProperties: false });
export const MemberRoles = Type.Object({ roles: Type.Array(Type.String()) }, { additionalProperties: false });

export const OrganizationRole = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    description: Type.String(),
    permissions: Type.Array(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    deletedAt: NullableTimestamp,
  },
  { additionalProperties: false },
);
export const CreateOrganizationRoleBody = Type.Object(
  { name: Name, description: Type.Optional(Type.String({ maxLength: 500 })), permissions: Type.Optional(PermissionNames) },
  { additionalProperties: false },
);
export const UpdateOrganizationRoleBody = Type.Object(
  { name: Type.Optional(Name), description: Type.Optional(Type.String({ maxLength: 500 })), permissions: Type.Optional(PermissionNames) },
  { additionalProperties: false },
);

const Cursor = Type.String({ minLength: 1, maxLength: CURSOR_MAX_LENGTH, description: 'nextCursor of an earlier page of the same list (opaque; malformed or another list\'s: 400)' });
const listFields = (sorts: readonly string[]) => ({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_MAX, description: '1-based page number (default 1); not with cursor' })),
  pageSize: Type.Optional(PageSize),
  q: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive substring search' })),
  cursor: Type.Optional(Cursor),
  sort: Type.Optional(SortParam(sorts)),
});
export const OrganizationQuery = Type.Object(
  { ...listFields(['createdAt', 'name']), includeDeleted: Type.Optional(Type.Boolean({ description: 'Include soft-deleted organizations (organizations.manage)' })), id: Type.Optional(Uuid) },
  { additionalProperties: false },
);
export const MemberQuery = Type.Object(listFields(['createdAt']), { additionalProperties: false });
export const OrganizationRoleQuery = Type.Object({ ...listFields(['createdAt', 'name']), id: Type.Optional(Uuid) }, { additionalProperties: false });

export const InvitationParams = Type.Object({ id: Uuid, invitationId: Uuid }, { additionalProperties: false });
export const DomainParams = Type.Object({ id: Uuid, domainId: Uuid }, { additionalProperties: false });

export const Invitation = Type.Object(
  {
    id: Uuid,
    organizationId: Uuid,
    email: Type.String(),
    roles: Type.Array(Type.String()),
    status: Type.Union([Type.Literal('pending'), Type.Literal('accepted'), Type.Literal('revoked'), Type.Literal('expired')]),
    expiresAt: Timestamp,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: false },
);
export const InviteBody = Type.Object(
  { email: Type.String({ minLength: 3, maxLength: 254 }), roles: Type.Optional(RoleNames) },
  { additionalProperties: false, description: 'A pending invitation of the same address is sent again (a new link), not duplicated' },
);
export const AcceptInvitationBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
export const AcceptedInvitation = Type.Object({ organizationId: Uuid, roles: Type.Array(Type.String()) }, { additionalProperties: false });

export const Domain = Type.Object(
  {
    id: Uuid,
    organizationId: Uuid,
    domain: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('verified'), Type.Literal('failed')]),
    challenge: Type.String({ description: 'The TXT value _iam-challenge.<domain> must hold' }),
    checkedAt: NullableTimestamp,
    verifiedAt: NullableTimestamp,
    createdAt: Timestamp,
  },
  { additionalProperties: false },
);
export const ClaimDomainBody = Type.Object({ domain: Type.String({ minLength: 1, maxLength: 253 }) }, { additionalProperties: false });
export const SubListQuery = MemberQuery;
