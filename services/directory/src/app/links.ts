/** Role-permission links: grant (create), change, revoke (delete), read, list. */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { AppError, event, isUuid } from '@iam/platform';
import { type Actor, assertMayGrant, assertMayRevoke } from '../domain/authorization';
import type { LinkQuery, ListQuery, Page, RolePermission } from '../domain/model';
import type { Stores, UnitOfWork } from '../domain/ports';
import { Violations, checkId } from '../domain/rules';
import { linkRevokedEvent } from './roles';
import { rightsIn } from './users';

export interface LinkUseCases {
  create(actor: Actor, input: { roleId: string; permissionId: string }): Promise<RolePermission>;
  get(id: string): Promise<RolePermission>;
  update(actor: Actor, id: string, input: { roleId?: string; permissionId?: string }): Promise<RolePermission>;
  remove(actor: Actor, id: string): Promise<void>;
  /** `roleId` / `permissionId` narrow the list to one end of the links (400 when not UUIDs). */
  list(query: ListQuery, ends?: { roleId?: string; permissionId?: string }): Promise<Page<RolePermission>>;
}

function checkRefs(input: { roleId?: string; permissionId?: string }): void {
  const v = new Violations();
  if (input.roleId !== undefined && !isUuid(input.roleId)) v.add('roleId', 'must be a UUID');
  if (input.permissionId !== undefined && !isUuid(input.permissionId)) v.add('permissionId', 'must be a UUID');
  v.throwIfAny();
}

/**
 * A link may only point at live records: an unknown role or permission is 400, not 404. Both ends
 * are locked FOR SHARE until the transaction ends, so a concurrent delete of either waits and then
 * revokes this link too (or this check sees the end gone): no live link to a deleted record.
 */
async function lockTargets(tx: Pick<Stores, 'roles' | 'permissions'>, ids: { roleId: string; permissionId: string }): Promise<{ roleName: string; permissionName: string }> {
  const v = new Violations();
  const role = await tx.roles.findById(ids.roleId, { forShare: true });
  const permission = await tx.permissions.findById(ids.permissionId, { forShare: true });
  if (!role) v.add('roleId', 'no such role');
  if (!permission) v.add('permissionId', 'no such permission');
  v.throwIfAny('The link refers to a role or permission that does not exist.');
  return { roleName: role!.name, permissionName: permission!.name };
}

const ends = (l: RolePermission) => ({ roleId: l.roleId, permissionId: l.permissionId, roleName: l.roleName, permissionName: l.permissionName });

/** `before` is the link as an update found it. */
function linkEvent(subject: typeof SUBJECTS.rolePermissionCreated | typeof SUBJECTS.rolePermissionUpdated, l: RolePermission, before?: RolePermission) {
  return event(subject, { linkId: l.id, ...ends(l), before: before && ends(before) });
}

/** `uow` runs transactions (the links, their ends, the actor's rights), `stores` reads outside any. */
export interface LinkDeps {
  readonly uow: UnitOfWork<Pick<Stores, 'links' | 'roles' | 'permissions' | 'principals'>>;
  readonly stores: Pick<Stores, 'links'>;
}

export function createLinkUseCases(deps: LinkDeps): LinkUseCases {
  const notFound = () => AppError.notFound('The role-permission link does not exist.');
  return {
    async create(actor, input) {
      checkRefs(input);
      const ids = { roleId: input.roleId.toLowerCase(), permissionId: input.permissionId.toLowerCase() };
      return deps.uow.run(async (tx) => {
        assertMayGrant(await rightsIn(tx, actor), await lockTargets(tx, ids));
        const id = randomUUID();
        await tx.links.insert({ id, ...ids });
        const link = (await tx.links.findById(id))!;
        await tx.publish([linkEvent(SUBJECTS.rolePermissionCreated, link)]);
        return link;
      });
    },

    async get(id) {
      const link = await deps.stores.links.findById(checkId(id));
      if (!link) throw notFound();
      return link;
    },

    async update(actor, id, input) {
      checkId(id);
      checkRefs(input);
      return deps.uow.run(async (tx) => {
        const before = await tx.links.findById(id, { forUpdate: true });
        if (!before) throw notFound();
        // Moving a link revokes the old grant and makes a new one: both must be allowed.
        const rights = await rightsIn(tx, actor);
        const ids = { roleId: input.roleId?.toLowerCase() ?? before.roleId, permissionId: input.permissionId?.toLowerCase() ?? before.permissionId };
        const target = await lockTargets(tx, ids);
        if (ids.roleId !== before.roleId || ids.permissionId !== before.permissionId) {
          assertMayRevoke(rights, before);
          assertMayGrant(rights, target);
        }
        await tx.links.update(id, ids);
        const link = (await tx.links.findById(id))!;
        await tx.publish([linkEvent(SUBJECTS.rolePermissionUpdated, link, before)]);
        return link;
      });
    },

    async remove(actor, id) {
      checkId(id);
      await deps.uow.run(async (tx) => {
        const link = await tx.links.findById(id, { forUpdate: true });
        if (!link) throw notFound();
        assertMayRevoke(await rightsIn(tx, actor), link);
        if (!(await tx.links.revoke(id))) throw notFound();
        await tx.publish([linkRevokedEvent(link)]);
      });
    },

    list: async (query, ends = {}) => {
      checkRefs(ends);
      const q: LinkQuery = { ...query, roleId: ends.roleId, permissionId: ends.permissionId };
      return await deps.stores.links.list(q);
    },
  };
}
