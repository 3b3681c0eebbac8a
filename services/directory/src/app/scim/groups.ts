/**
 * SCIM Groups: organization groups (services/directory README, "SCIM"), each carrying
 * organization roles its members hold in the organization beside their own. Members are the
 * organization's members (an id of anyone else is a 404, as every other organization's id).
 * Escalation (DESIGN §3): a connection puts on a group, or gives through one, only roles its
 * organization's administrators could grant — every permission of the role held by one of its
 * org.admin holders there — and never org.admin itself: a SCIM client makes no administrator.
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { event, isUuid } from '@iam/platform';
import { ORG_ADMIN_ROLE, type OrganizationRole } from '../../domain/organizations';
import type { ScimGroupRow } from '../../domain/scim';
import { ScimError } from '../../domain/scim-error';
import { GROUP_ATTRIBUTES } from '../../infra/scim-attributes';
import { membershipEvent, rolesNamed } from '../organizations';
import { applyPatch } from './patch';
import { type ListParams, listQuery, listResponse, project } from './query';
import { type GroupInput, type Json, readGroup, toScimGroup } from './resources';
import { type ScimDeps, type ScimResourceType, type ScimResult, type ScimScope, type ScimTx, checkIfMatch } from './scope';

const groupNotFound = () => ScimError.notFound('The group does not exist in this organization.');

/** The Groups resource type: the operations every SCIM resource type has (`ScimResourceType`). */
export type ScimGroups = ScimResourceType;

/** The roles named, each within what the organization's administrators may grant (403 otherwise). */
async function grantableRoles(tx: ScimTx, organizationId: string, names: readonly string[]): Promise<OrganizationRole[]> {
  if (names.length === 0) return [];
  let roles: OrganizationRole[];
  try {
    roles = await rolesNamed(tx, 'roles', names);
  } catch {
    throw ScimError.badRequest('invalidValue', 'A group names an unknown organization role.');
  }
  if (roles.some((r) => r.name === ORG_ADMIN_ROLE)) throw new ScimError(403, `A SCIM connection cannot grant ${ORG_ADMIN_ROLE}.`);
  const held = new Set<string>();
  for (const adminId of await tx.members.lockAdmins(organizationId)) for (const p of (await tx.members.grant(organizationId, adminId))?.permissions ?? []) held.add(p);
  for (const r of roles) {
    const missing = r.permissions.filter((p) => !held.has(p));
    if (missing.length > 0) throw new ScimError(403, `The organization's administrators cannot grant ${r.name} (missing: ${missing.join(', ')}).`);
  }
  return roles;
}

/** The member ids, each a member of this organization (404 for any other id, as another organization's). */
async function checkedMembers(tx: ScimTx, organizationId: string, ids: readonly string[]): Promise<string[]> {
  const wanted = [...new Set(ids.map((i) => i.toLowerCase()))];
  if (wanted.some((i) => !isUuid(i))) throw ScimError.notFound('A member does not exist in this organization.');
  const found = new Set(await tx.scimGroups.membersAmong(organizationId, wanted));
  if (wanted.some((i) => !found.has(i))) throw ScimError.notFound('A member does not exist in this organization.');
  return wanted;
}

/** Writes the group's new state; one group event, and a membership event for each member whose roles there changed. */
async function write(tx: ScimTx, scope: ScimScope, before: ScimGroupRow | null, input: GroupInput): Promise<ScimGroupRow> {
  const orgId = scope.organization.id;
  const id = before?.id ?? randomUUID();
  const roles = input.roles !== undefined ? await grantableRoles(tx, orgId, input.roles) : null;
  const roleIds = roles ? roles.map((r) => r.id) : before ? await currentRoleIds(tx, before) : [];
  const membersBefore = before?.members.map((m) => m.userId) ?? [];
  const members = input.members !== undefined ? await checkedMembers(tx, orgId, input.members) : membersBefore;
  const added = members.filter((m) => !membersBefore.includes(m));
  const removed = membersBefore.filter((m) => !members.includes(m));
  // Roles given through membership are checked when a member joins, too: the administrators' reach may have shrunk.
  if (added.length > 0 && roleIds.length > 0 && !roles) await grantableRoles(tx, orgId, before!.roles);
  const affected = roleIds.length > 0 || (before?.roles.length ?? 0) > 0 ? [...added, ...removed] : [];
  const grantsBefore = new Map(await Promise.all(affected.map(async (u) => [u, await tx.members.find(orgId, u)] as const)));
  const grantBefore = new Map(await Promise.all(affected.map(async (u) => [u, (await tx.members.grant(orgId, u))?.roles ?? []] as const)));
  if (before) await tx.scimGroups.update(orgId, id, { displayName: input.displayName, externalId: input.externalId, roleIds });
  else await tx.scimGroups.insert({ id, organizationId: orgId, displayName: input.displayName, externalId: input.externalId, connectionId: scope.connection.id, roleIds });
  if (input.members !== undefined && (added.length > 0 || removed.length > 0 || !before)) await tx.scimGroups.setMembers(orgId, id, members);
  const after = (await tx.scimGroups.find(orgId, id))!;
  const changedFields = before ? (['displayName', 'externalId', 'roles'] as const).filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k])) : [];
  const events = [];
  if (!before || changedFields.length > 0 || added.length > 0 || removed.length > 0) {
    const subject = before ? SUBJECTS.organizationGroupUpdated : SUBJECTS.organizationGroupCreated;
    events.push(event(subject, { groupId: id, organizationId: orgId, displayName: after.displayName, roles: [...after.roles], membersAdded: added, membersRemoved: removed, changedFields: [...changedFields] }));
  }
  for (const u of affected) {
    const rolesAfter = (await tx.members.grant(orgId, u))?.roles ?? [];
    const m = grantsBefore.get(u);
    if (m && JSON.stringify(rolesAfter) !== JSON.stringify(grantBefore.get(u))) events.push(membershipEvent(scope.organization, u, { ...m, roles: grantBefore.get(u)! }, { ...m, roles: rolesAfter }, 'scim-group'));
  }
  await tx.publish(events);
  return after;
}

async function currentRoleIds(tx: ScimTx, g: ScimGroupRow): Promise<string[]> {
  return g.roles.length === 0 ? [] : (await tx.organizationRoles.findLiveByNames(g.roles)).map((r) => r.id);
}

export function createScimGroups(deps: ScimDeps): ScimGroups {
  const find = async (tx: Pick<ScimTx, 'scimGroups'>, scope: ScimScope, id: string, opts: { forUpdate?: boolean; withoutMembers?: boolean } = {}) => {
    if (!isUuid(id)) throw groupNotFound();
    const g = await tx.scimGroups.find(scope.organization.id, id.toLowerCase(), opts);
    if (!g) throw groupNotFound();
    return g;
  };
  const answer = (g: ScimGroupRow, scope: ScimScope, status = 200, withMembers = true): ScimResult => {
    const body = toScimGroup(g, scope.base, withMembers);
    return { status, body, etag: (body.meta as Json).version as string, location: `${scope.base}/Groups/${g.id}` };
  };
  const excludesMembers = (p: ListParams) => {
    const ex = typeof p.excludedAttributes === 'string' ? p.excludedAttributes.split(',') : (p.excludedAttributes ?? []);
    const inc = typeof p.attributes === 'string' ? p.attributes.split(',') : (p.attributes ?? []);
    return ex.some((a) => a.trim().toLowerCase() === 'members') || (inc.length > 0 && !inc.some((a) => a.trim().toLowerCase().startsWith('members')));
  };

  return {
    async create(scope, body) {
      const input = readGroup(body);
      const g = await deps.uow.run(async (tx) => {
        if (!(await tx.organizations.findById(scope.organization.id, { forShare: true }))) throw groupNotFound();
        return write(tx, scope, null, { ...input, members: input.members ?? [] });
      });
      return answer(g, scope, 201);
    },

    async get(scope, id, params) {
      const without = excludesMembers(params);
      const r = answer(await find(deps.stores, scope, id, { withoutMembers: without }), scope, 200, !without);
      return { ...r, body: project(r.body!, params) };
    },

    async replace(scope, id, body, ifMatch) {
      const input = readGroup(body);
      const g = await deps.uow.run(async (tx) => {
        const before = await find(tx, scope, id, { forUpdate: true });
        checkIfMatch(ifMatch, before.version);
        return write(tx, scope, before, { ...input, members: input.members ?? [] });
      });
      return answer(g, scope);
    },

    async patch(scope, id, body, ifMatch) {
      await deps.uow.run(async (tx) => {
        const before = await find(tx, scope, id, { forUpdate: true });
        checkIfMatch(ifMatch, before.version);
        const patched = applyPatch(toScimGroup(before, scope.base), body);
        const input = readGroup(patched);
        await write(tx, scope, before, { ...input, members: input.members ?? [] });
      });
      return { status: 204 };
    },

    async remove(scope, id, ifMatch) {
      await deps.uow.run(async (tx) => {
        const before = await find(tx, scope, id, { forUpdate: true });
        checkIfMatch(ifMatch, before.version);
        await write(tx, scope, before, { displayName: before.displayName, externalId: before.externalId, members: [], roles: undefined });
        await tx.scimGroups.remove(scope.organization.id, before.id);
        await tx.publish([
          event(SUBJECTS.organizationGroupDeleted, { groupId: before.id, organizationId: before.organizationId, displayName: before.displayName, roles: [...before.roles], membersAdded: [], membersRemoved: [], changedFields: [] }),
        ]);
      });
      return { status: 204 };
    },

    async list(scope, params) {
      const { query, startIndex } = listQuery(params, GROUP_ATTRIBUTES);
      const without = excludesMembers(params);
      const page = await deps.stores.scimGroups.list(scope.organization.id, { ...query, withoutMembers: without });
      return { status: 200, body: listResponse(page.items.map((g) => project(toScimGroup(g, scope.base, !without), params)), page.totalResults, startIndex) };
    },
  };
}
