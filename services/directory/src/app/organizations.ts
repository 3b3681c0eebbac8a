/**
 * Organization use cases: the organizations themselves (the platform's), and their members and
 * members' organization roles (the platform's, or the organization's own org.admin holders':
 * organization-access.ts). Every change is one transaction with its event in the outbox
 * (`directory.organization.*`; the audit trail and the webhooks are made from them).
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { AppError, event, isUuid, type NewEvent } from '@iam/platform';
import type { Actor } from '../domain/authorization';
import type { ListPosition, ListQuery, Page } from '../domain/model';
import { type Member, type MemberQuery, type MembershipGrant, ORG_ADMIN_ROLE, type Organization, type OrganizationRole, type OrgUseCaseStores } from '../domain/organizations';
import { type OrganizationInput, checkOrganization, checkRoleNames } from '../domain/organization-rules';
import type { UnitOfWork } from '../domain/ports';
import { Violations, checkId } from '../domain/rules';
import { type OrgAccess, accessTo, assertMayAssignOrgRoles, assertMayManageMember, isPlatformAdmin, organizationNotFound } from './organization-access';

export interface OrganizationDeps {
  readonly uow: UnitOfWork<OrgUseCaseStores>;
  readonly stores: OrgUseCaseStores;
}

export interface MemberPage {
  readonly items: readonly Member[];
  readonly totalCount: number;
  readonly totalCountExact: boolean;
  readonly next?: ListPosition;
}

export interface OrganizationUseCases {
  create(actor: Actor, input: { name: string; slug: string }): Promise<Organization>;
  get(actor: Actor, id: string): Promise<Organization>;
  update(actor: Actor, id: string, input: OrganizationInput): Promise<Organization>;
  remove(actor: Actor, id: string): Promise<void>;
  /** The platform sees every organization; anyone else those it is a member of. */
  list(actor: Actor, query: ListQuery): Promise<Page<Organization>>;
  listMembers(actor: Actor, organizationId: string, query: MemberQuery): Promise<MemberPage>;
  getMember(actor: Actor, organizationId: string, userId: string): Promise<Member>;
  /** The platform adds a user by id (organization administrators invite instead). */
  addMember(actor: Actor, organizationId: string, input: { userId: string; roles: readonly string[] }): Promise<Member>;
  removeMember(actor: Actor, organizationId: string, userId: string): Promise<void>;
  setMemberRoles(actor: Actor, organizationId: string, userId: string, roles: readonly string[]): Promise<Member>;
  /** What the user holds in the organization, by id or slug; null for a non-member and an unknown organization alike. */
  grant(userId: string, organization: { id?: string; slug?: string }): Promise<MembershipGrant | null>;
  /** `grant` for an organization token: a user not yet a member joins first when just-in-time membership lets it (`join`). */
  grantForToken(userId: string, organization: { id?: string; slug?: string }, join: (userId: string) => Promise<string[]>): Promise<MembershipGrant | null>;
  grantsOf(userId: string): Promise<MembershipGrant[]>;
}

const stateOf = (o: Organization) => ({ name: o.name, slug: o.slug, jitEnabled: o.jitEnabled, jitRoles: [...o.jitRoles] });

function organizationEvent(verb: 'created' | 'updated' | 'deleted', o: Organization, changedFields: string[] = [], before?: Organization): NewEvent {
  const subject = { created: SUBJECTS.organizationCreated, updated: SUBJECTS.organizationUpdated, deleted: SUBJECTS.organizationDeleted }[verb];
  return event(subject, { organizationId: o.id, ...stateOf(o), changedFields, before: before && stateOf(before) });
}

export function membershipEvent(o: Organization, userId: string, before: Member | null, after: Member | null, via = ''): NewEvent {
  return event(SUBJECTS.organizationMembershipUpdated, {
    organizationId: o.id,
    organizationSlug: o.slug,
    userId,
    memberBefore: before !== null,
    memberAfter: after !== null,
    rolesBefore: [...(before?.roles ?? [])],
    roles: [...(after?.roles ?? [])],
    via,
  });
}

const memberNotFound = () => AppError.notFound('The user is not a member of this organization.');

/** The live organization roles named, or 400 naming the unknown ones. */
export async function rolesNamed(s: OrgUseCaseStores, field: string, names: readonly string[]): Promise<OrganizationRole[]> {
  const v = new Violations();
  const checked = checkRoleNames(v, field, names);
  v.throwIfAny();
  const found = await s.organizationRoles.findLiveByNames(checked);
  const unknown = checked.filter((n) => !found.some((r) => r.name.toLowerCase() === n.toLowerCase()));
  if (unknown.length > 0) throw AppError.validation('Unknown organization roles.', [{ field, message: `unknown organization roles: ${unknown.join(', ')}` }]);
  return found;
}

/** Removing the last org.admin of an organization (by removal or a role change) is a CONFLICT. */
async function assertKeepsAnAdmin(s: OrgUseCaseStores, organizationId: string, userId: string, rolesAfter: readonly string[] | null): Promise<void> {
  if (rolesAfter?.includes(ORG_ADMIN_ROLE)) return;
  const admins = await s.members.lockAdmins(organizationId);
  if (admins.length === 1 && admins[0] === userId) throw AppError.conflict(`The last ${ORG_ADMIN_ROLE} of an organization cannot be removed or lose the role.`);
}

export function createOrganizationUseCases(deps: OrganizationDeps): OrganizationUseCases {
  const platformOnly = async (s: OrgUseCaseStores, actor: Actor, id: string, lock = false): Promise<Organization> => {
    const access = await accessTo(s, actor, id, { delegated: false, lock });
    return access.organization;
  };
  const memberGrant = async (s: OrgUseCaseStores, access: OrgAccess, userId: string): Promise<MembershipGrant> => {
    const g = await s.members.grant(access.organization.id, userId);
    if (!g) throw memberNotFound();
    return g;
  };

  return {
    async create(actor, input) {
      const checked = checkOrganization(input, true);
      return deps.uow.run(async (tx) => {
        if (!(await isPlatformAdmin(tx, actor))) throw AppError.forbidden(`Creating an organization needs ${'organizations.manage'}.`);
        const id = randomUUID();
        await tx.organizations.insert({ id, name: checked.name!, slug: checked.slug! });
        const created = (await tx.organizations.findById(id))!;
        await tx.publish([organizationEvent('created', created)]);
        return created;
      });
    },

    async get(actor, id) {
      checkId(id);
      return (await accessTo(deps.stores, actor, id, { delegated: true })).organization;
    },

    async update(actor, id, input) {
      checkId(id);
      const checked = checkOrganization(input, false);
      return deps.uow.run(async (tx) => {
        const before = await platformOnly(tx, actor, id, true);
        const jitRoleIds = checked.jitRoles && (await rolesNamed(tx, 'jitRoles', checked.jitRoles)).map((r) => r.id);
        await tx.organizations.update(id, { name: checked.name, slug: checked.slug, jitEnabled: checked.jitEnabled, jitRoleIds });
        const after = (await tx.organizations.findById(id))!;
        const fields = (['name', 'slug', 'jitEnabled', 'jitRoles'] as const).filter((f) => JSON.stringify(before[f]) !== JSON.stringify(after[f]));
        if (fields.length > 0) await tx.publish([organizationEvent('updated', after, [...fields], before)]);
        return after;
      });
    },

    async remove(actor, id) {
      checkId(id);
      await deps.uow.run(async (tx) => {
        const found = await platformOnly(tx, actor, id, true);
        if (!(await tx.organizations.softDelete(id))) throw organizationNotFound();
        await tx.publish([organizationEvent('deleted', found)]);
      });
    },

    async list(actor, query) {
      const platform = await isPlatformAdmin(deps.stores, actor);
      return deps.stores.organizations.list({ ...query, includeDeleted: platform && query.includeDeleted }, platform ? {} : { memberId: actor.userId });
    },

    async listMembers(actor, organizationId, query) {
      checkId(organizationId, 'organizationId');
      await accessTo(deps.stores, actor, organizationId, { delegated: true });
      return deps.stores.members.list(organizationId, query);
    },

    async getMember(actor, organizationId, userId) {
      checkId(organizationId, 'organizationId');
      checkId(userId, 'userId');
      await accessTo(deps.stores, actor, organizationId, { delegated: true });
      const m = await deps.stores.members.find(organizationId, userId);
      if (!m) throw memberNotFound();
      return m;
    },

    async addMember(actor, organizationId, input) {
      checkId(organizationId, 'organizationId');
      checkId(input.userId, 'userId');
      return deps.uow.run(async (tx) => {
        const access = await accessTo(tx, actor, organizationId, { delegated: false, lock: true });
        const roles = await rolesNamed(tx, 'roles', input.roles);
        const user = await tx.users.findById(input.userId, { forUpdate: true });
        if (!user) throw AppError.validation('The user does not exist.', [{ field: 'userId', message: 'no such user' }]);
        if (!(await tx.members.add(organizationId, input.userId))) throw AppError.conflict('The user is a member already.', [{ field: 'userId', message: 'is a member already' }]);
        await tx.members.setRoles(organizationId, input.userId, roles.map((r) => r.id));
        const after = (await tx.members.find(organizationId, input.userId))!;
        await tx.publish([membershipEvent(access.organization, input.userId, null, after, 'added')]);
        return after;
      });
    },

    async removeMember(actor, organizationId, userId) {
      checkId(organizationId, 'organizationId');
      checkId(userId, 'userId');
      await deps.uow.run(async (tx) => {
        const access = await accessTo(tx, actor, organizationId, { delegated: true, lock: true });
        const before = await tx.members.find(organizationId, userId, { forUpdate: true });
        if (!before) throw memberNotFound();
        assertMayManageMember(access, await memberGrant(tx, access, userId));
        await assertKeepsAnAdmin(tx, organizationId, userId, null);
        await tx.members.remove(organizationId, userId);
        await tx.publish([membershipEvent(access.organization, userId, before, null)]);
      });
    },

    async setMemberRoles(actor, organizationId, userId, names) {
      checkId(organizationId, 'organizationId');
      checkId(userId, 'userId');
      return deps.uow.run(async (tx) => {
        const access = await accessTo(tx, actor, organizationId, { delegated: true, lock: true });
        const before = await tx.members.find(organizationId, userId, { forUpdate: true });
        if (!before) throw memberNotFound();
        assertMayManageMember(access, await memberGrant(tx, access, userId));
        const roles = await rolesNamed(tx, 'roles', names);
        assertMayAssignOrgRoles(access, roles.filter((r) => !before.roles.includes(r.name)));
        await assertKeepsAnAdmin(tx, organizationId, userId, roles.map((r) => r.name));
        await tx.members.setRoles(organizationId, userId, roles.map((r) => r.id));
        const after = (await tx.members.find(organizationId, userId))!;
        if (JSON.stringify(after.roles) !== JSON.stringify(before.roles)) await tx.publish([membershipEvent(access.organization, userId, before, after)]);
        return after;
      });
    },

    async grant(userId, organization) {
      const o = organization.id ? await deps.stores.organizations.findById(organization.id) : organization.slug ? await deps.stores.organizations.findBySlug(organization.slug) : null;
      return o ? deps.stores.members.grant(o.id, userId) : null;
    },

    async grantForToken(userId, organization, join) {
      if (!isUuid(userId) || (organization.id !== undefined && !isUuid(organization.id))) return null;
      const found = await this.grant(userId, organization);
      if (found) return found;
      return (await join(userId)).length > 0 ? this.grant(userId, organization) : null;
    },

    grantsOf: (userId) => deps.stores.members.grantsOf(userId),
  };
}
