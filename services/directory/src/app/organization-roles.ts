/**
 * The organization role template (as Logto's): roles defined once for the platform from its
 * existing permissions, which every organization's members then hold per organization. Only the
 * platform (Administrator or organizations.manage) changes it, and a non-Administrator puts in a
 * role only permissions it holds itself (DESIGN §3). The built-in `org.admin` cannot be renamed
 * or deleted.
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { AppError, event, type NewEvent } from '@iam/platform';
import { type Actor, rightsOf } from '../domain/authorization';
import type { ListQuery, Page } from '../domain/model';
import { ORG_ADMIN_ROLE, type OrganizationRole, type OrgUseCaseStores } from '../domain/organizations';
import type { UnitOfWork } from '../domain/ports';
import { Violations, checkDescription, checkId, checkIdentifierName } from '../domain/rules';
import { ORGANIZATIONS_MANAGE } from './organization-access';

export interface OrganizationRoleInput {
  name?: string;
  description?: string;
  /** Permission names; replaces the set when given. */
  permissions?: readonly string[];
}

export interface OrganizationRoleUseCases {
  create(actor: Actor, input: OrganizationRoleInput & { name: string }): Promise<OrganizationRole>;
  get(id: string): Promise<OrganizationRole>;
  update(actor: Actor, id: string, input: OrganizationRoleInput): Promise<OrganizationRole>;
  remove(actor: Actor, id: string): Promise<void>;
  list(query: ListQuery): Promise<Page<OrganizationRole>>;
}

const stateOf = (r: OrganizationRole) => ({ name: r.name, description: r.description, permissions: [...r.permissions] });

function roleEvent(verb: 'created' | 'updated' | 'deleted', r: OrganizationRole, changedFields: string[] = [], before?: OrganizationRole): NewEvent {
  const subject = { created: SUBJECTS.organizationRoleCreated, updated: SUBJECTS.organizationRoleUpdated, deleted: SUBJECTS.organizationRoleDeleted }[verb];
  return event(subject, { organizationRoleId: r.id, ...stateOf(r), changedFields, before: before && stateOf(before) });
}

const notFound = () => AppError.notFound('The organization role does not exist.');

function validate(input: OrganizationRoleInput, create: boolean): OrganizationRoleInput {
  const v = new Violations();
  const out: OrganizationRoleInput = {};
  if (input.name !== undefined || create) out.name = checkIdentifierName(v, 'name', input.name ?? '', { kind: 'organization role', names: [ORG_ADMIN_ROLE] });
  if (input.description !== undefined) out.description = checkDescription(v, 'description', input.description);
  if (input.permissions !== undefined) {
    if (input.permissions.length > 100) v.add('permissions', 'must hold at most 100 permissions');
    else out.permissions = input.permissions.map((p, i) => checkIdentifierName(v, `permissions[${i}]`, p));
  }
  v.throwIfAny();
  return out;
}

export function createOrganizationRoleUseCases(deps: { uow: UnitOfWork<OrgUseCaseStores>; stores: OrgUseCaseStores }): OrganizationRoleUseCases {
  /** The permissions named (400 for unknown ones), after checking the actor may put them in a role. */
  async function permissionIds(tx: OrgUseCaseStores, actor: Actor, names: readonly string[]): Promise<string[]> {
    const rights = rightsOf(await tx.principals.findById(actor.userId));
    if (!rights.administrator && !rights.permissions.has(ORGANIZATIONS_MANAGE)) throw AppError.forbidden(`Changing the organization role template needs ${ORGANIZATIONS_MANAGE}.`);
    const found = await tx.permissions.findLiveByNames(names);
    const unknown = names.filter((n) => !found.some((p) => p.name.toLowerCase() === n.toLowerCase()));
    if (unknown.length > 0) throw AppError.validation('Unknown permissions.', [{ field: 'permissions', message: `unknown permissions: ${unknown.join(', ')}` }]);
    const missing = rights.administrator ? [] : found.filter((p) => !rights.permissions.has(p.name)).map((p) => p.name);
    if (missing.length > 0) throw AppError.forbidden(`You may put a permission in an organization role only if you hold it (missing: ${missing.join(', ')}).`);
    return found.map((p) => p.id);
  }

  return {
    async create(actor, input) {
      const checked = validate(input, true);
      return deps.uow.run(async (tx) => {
        const ids = await permissionIds(tx, actor, checked.permissions ?? []);
        const id = randomUUID();
        await tx.organizationRoles.insert({ id, name: checked.name!, description: checked.description ?? '' });
        await tx.organizationRoles.setPermissions(id, ids);
        const created = (await tx.organizationRoles.findById(id))!;
        await tx.publish([roleEvent('created', created)]);
        return created;
      });
    },

    async get(id) {
      const r = await deps.stores.organizationRoles.findById(checkId(id));
      if (!r) throw notFound();
      return r;
    },

    async update(actor, id, input) {
      checkId(id);
      const checked = validate(input, false);
      return deps.uow.run(async (tx) => {
        const ids = await permissionIds(tx, actor, checked.permissions ?? []);
        const before = await tx.organizationRoles.findById(id, { forUpdate: true });
        if (!before) throw notFound();
        if (checked.name !== undefined && checked.name !== before.name && before.name === ORG_ADMIN_ROLE) throw AppError.conflict(`The built-in organization role ${ORG_ADMIN_ROLE} cannot be renamed.`);
        await tx.organizationRoles.update(id, { name: checked.name, description: checked.description });
        if (checked.permissions !== undefined) await tx.organizationRoles.setPermissions(id, ids);
        const after = (await tx.organizationRoles.findById(id))!;
        const fields = (['name', 'description', 'permissions'] as const).filter((f) => JSON.stringify(before[f]) !== JSON.stringify(after[f]));
        if (fields.length > 0) await tx.publish([roleEvent('updated', after, [...fields], before)]);
        return after;
      });
    },

    async remove(actor, id) {
      checkId(id);
      await deps.uow.run(async (tx) => {
        await permissionIds(tx, actor, []);
        const found = await tx.organizationRoles.findById(id, { forUpdate: true });
        if (!found) throw notFound();
        if (found.name === ORG_ADMIN_ROLE) throw AppError.conflict(`The built-in organization role ${ORG_ADMIN_ROLE} cannot be deleted.`);
        await tx.organizationRoles.softDelete(id);
        await tx.publish([roleEvent('deleted', found)]);
      });
    },

    list: (query) => deps.stores.organizationRoles.list(query),
  };
}
