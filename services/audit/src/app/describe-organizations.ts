/** What the directory's organization events (issue #41) say in the trail: the organization, the membership, the role template. */
import { type EventSubject, SUBJECTS, decodeEvent } from '@iam/contracts';
import { type Described, changesOf, created } from './describe';

const ORG_FIELDS = ['name', 'slug', 'jitEnabled', 'jitRoles'] as const;
const ROLE_FIELDS = ['name', 'description', 'permissions'] as const;

/** The entry of an organization event; null for any other subject. */
export function describeOrganization(subject: EventSubject, data: Uint8Array): Described | null {
  switch (subject) {
    case SUBJECTS.organizationCreated:
    case SUBJECTS.organizationUpdated:
    case SUBJECTS.organizationDeleted: {
      const e = decodeEvent(subject, data);
      const target = { type: 'organization', id: e.organizationId };
      const after = { name: e.name, slug: e.slug, jitEnabled: e.jitEnabled, jitRoles: [...e.jitRoles] };
      if (subject === SUBJECTS.organizationCreated) return { action: 'organization.created', target, changes: created(ORG_FIELDS, after) };
      if (subject === SUBJECTS.organizationDeleted) return { action: 'organization.deleted', target, changes: changesOf(['slug'], after, undefined) };
      return { action: 'organization.updated', target, changes: changesOf(e.changedFields, e.before && { ...e.before, jitRoles: [...e.before.jitRoles] }, after) };
    }
    case SUBJECTS.organizationMembershipUpdated: {
      // Target: the organization; the member and what they hold there before and after.
      const e = decodeEvent(subject, data);
      const before = { member: e.memberBefore, roles: [...e.rolesBefore] };
      const after = { member: e.memberAfter, roles: [...e.roles] };
      const via = e.via ? [{ field: 'via', after: e.via }] : [];
      return { action: 'organization.membership.updated', target: { type: 'organization', id: e.organizationId }, changes: [{ field: 'user', after: e.userId }, ...changesOf(['member', 'roles'], before, after), ...via] };
    }
    case SUBJECTS.organizationRoleCreated:
    case SUBJECTS.organizationRoleUpdated:
    case SUBJECTS.organizationRoleDeleted: {
      const e = decodeEvent(subject, data);
      const target = { type: 'organization_role', id: e.organizationRoleId };
      const after = { name: e.name, description: e.description, permissions: [...e.permissions] };
      if (subject === SUBJECTS.organizationRoleCreated) return { action: 'organization_role.created', target, changes: created(ROLE_FIELDS, after) };
      if (subject === SUBJECTS.organizationRoleDeleted) return { action: 'organization_role.deleted', target, changes: changesOf(['name'], after, undefined) };
      return { action: 'organization_role.updated', target, changes: changesOf(e.changedFields, e.before && { ...e.before, permissions: [...e.before.permissions] }, after) };
    }
    case SUBJECTS.organizationInvitationSent:
    case SUBJECTS.organizationInvitationRevoked: {
      // Never the sealed token: who was invited, with which roles, until when.
      const e = decodeEvent(subject, data);
      const action = subject === SUBJECTS.organizationInvitationRevoked ? 'organization.invitation.revoked' : e.resent ? 'organization.invitation.resent' : 'organization.invitation.sent';
      const view = { invitation: e.invitationId, email: e.email, roles: [...e.roles], expiresAt: e.expiresAt?.toISOString() };
      return { action, target: { type: 'organization', id: e.organizationId }, changes: created(['invitation', 'email', 'roles', 'expiresAt'], view) };
    }
    case SUBJECTS.organizationDomainAdded:
    case SUBJECTS.organizationDomainUpdated:
    case SUBJECTS.organizationDomainRemoved: {
      const e = decodeEvent(subject, data);
      const action = { [SUBJECTS.organizationDomainAdded]: 'organization.domain.added', [SUBJECTS.organizationDomainUpdated]: 'organization.domain.updated', [SUBJECTS.organizationDomainRemoved]: 'organization.domain.removed' }[subject];
      return { action, target: { type: 'organization', id: e.organizationId }, changes: [{ field: 'domain', after: e.domain }, ...changesOf(['status'], e.statusBefore ? { status: e.statusBefore } : undefined, subject === SUBJECTS.organizationDomainRemoved ? undefined : { status: e.status })] };
    }
    case SUBJECTS.scimConnectionCreated:
    case SUBJECTS.scimConnectionRevoked: {
      // Never the token: which connection of which organization.
      const e = decodeEvent(subject, data);
      const action = subject === SUBJECTS.scimConnectionCreated ? 'organization.scim_connection.created' : 'organization.scim_connection.revoked';
      return { action, target: { type: 'organization', id: e.organizationId }, changes: [{ field: 'connection', after: e.connectionId }, { field: 'name', after: e.name }] };
    }
    case SUBJECTS.organizationGroupCreated:
    case SUBJECTS.organizationGroupUpdated:
    case SUBJECTS.organizationGroupDeleted: {
      const e = decodeEvent(subject, data);
      const action = { [SUBJECTS.organizationGroupCreated]: 'organization.group.created', [SUBJECTS.organizationGroupUpdated]: 'organization.group.updated', [SUBJECTS.organizationGroupDeleted]: 'organization.group.deleted' }[subject];
      const lists = (['membersAdded', 'membersRemoved'] as const).filter((k) => e[k].length > 0).map((k) => ({ field: k, after: e[k].join(', ') }));
      return { action, target: { type: 'organization', id: e.organizationId }, changes: [{ field: 'group', after: e.groupId }, { field: 'displayName', after: e.displayName }, { field: 'roles', after: e.roles.join(', ') }, ...lists] };
    }
    default:
      return null;
  }
}
