/** Role-permission links: grant (create), change, revoke (delete), read, list. */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { AppError, event } from '@iam/platform';
import type { ListQuery, Page, RolePermission } from '../domain/model';
import type { Stores, UnitOfWork } from '../domain/ports';
import { Violations, checkId, isUuid } from '../domain/rules';
import { linkRevokedEvent } from './roles';

export interface LinkUseCases {
  create(input: { roleId: string; permissionId: string }): Promise<RolePermission>;
  get(id: string): Promise<RolePermission>;
  update(id: string, input: { roleId?: string; permissionId?: string }): Promise<RolePermission>;
  remove(id: string): Promise<void>;
  list(query: ListQuery): Promise<Page<RolePermission>>;
}

function checkRefs(input: { roleId?: string; permissionId?: string }): void {
  const v = new Violations();
  if (input.roleId !== undefined && !isUuid(input.roleId)) v.add('roleId', 'must be a UUID');
  if (input.permissionId !== undefined && !isUuid(input.permissionId)) v.add('permissionId', 'must be a UUID');
  v.throwIfAny();
}

/** A link may only point at live records: an unknown role or permission is 400, not 404. */
async function checkTargets(tx: Stores, input: { roleId?: string; permissionId?: string }): Promise<void> {
  const v = new Violations();
  if (input.roleId !== undefined && !(await tx.roles.findById(input.roleId))) v.add('roleId', 'no such role');
  if (input.permissionId !== undefined && !(await tx.permissions.findById(input.permissionId))) v.add('permissionId', 'no such permission');
  v.throwIfAny('The link refers to a role or permission that does not exist.');
}

function linkEvent(subject: typeof SUBJECTS.rolePermissionCreated | typeof SUBJECTS.rolePermissionUpdated, l: RolePermission) {
  return event(subject, { linkId: l.id, roleId: l.roleId, permissionId: l.permissionId, roleName: l.roleName, permissionName: l.permissionName });
}

export function createLinkUseCases(deps: { uow: UnitOfWork; read: Stores }): LinkUseCases {
  const notFound = () => AppError.notFound('The role-permission link does not exist.');
  return {
    async create(input) {
      checkRefs(input);
      return deps.uow.run(async (tx) => {
        await checkTargets(tx, input);
        const id = randomUUID();
        await tx.links.insert({ id, roleId: input.roleId.toLowerCase(), permissionId: input.permissionId.toLowerCase() });
        const link = (await tx.links.findById(id))!;
        await tx.publish([linkEvent(SUBJECTS.rolePermissionCreated, link)]);
        return link;
      });
    },

    async get(id) {
      const link = await deps.read.links.findById(checkId(id));
      if (!link) throw notFound();
      return link;
    },

    async update(id, input) {
      checkId(id);
      checkRefs(input);
      return deps.uow.run(async (tx) => {
        if (!(await tx.links.findById(id, { forUpdate: true }))) throw notFound();
        await checkTargets(tx, input);
        await tx.links.update(id, { roleId: input.roleId?.toLowerCase(), permissionId: input.permissionId?.toLowerCase() });
        const link = (await tx.links.findById(id))!;
        await tx.publish([linkEvent(SUBJECTS.rolePermissionUpdated, link)]);
        return link;
      });
    },

    async remove(id) {
      checkId(id);
      await deps.uow.run(async (tx) => {
        const link = await tx.links.findById(id, { forUpdate: true });
        if (!link || !(await tx.links.revoke(id))) throw notFound();
        await tx.publish([linkRevokedEvent(link)]);
      });
    },

    list: (query) => deps.read.links.list(query),
  };
}
