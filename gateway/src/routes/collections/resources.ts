/**
 * The four collections: what each is (permission, schemas) and how it calls the directory. The
 * same specs serve the Full and the Compact profile (./collection.ts dialects).
 */
import type { directoryV1 } from '@iam/contracts';
import { Type } from '@sinclair/typebox';
import { Uuid } from '../../schemas/common';
import * as S from '../../schemas/resources';
import type { Upstreams } from '../../upstreams';
import type { CollectionSpec, ListArgs } from './collection';

const userJson = (u: directoryV1.User) => ({ ...u, phone: u.phone ?? null, deletedAt: u.deletedAt ?? null });
const roleJson = (r: directoryV1.Role) => ({ ...r, deletedAt: r.deletedAt ?? null });
const permissionJson = (p: directoryV1.Permission) => ({ ...p, deletedAt: p.deletedAt ?? null });

function mapPage<T, R>(page: { items: T[]; totalCount: number; totalCountEstimated: boolean; nextCursor: string; page: number }, toJson: (item: T) => R) {
  return {
    items: page.items.map(toJson),
    totalCount: page.totalCount,
    totalCountExact: !page.totalCountEstimated,
    nextCursor: page.nextCursor === '' ? null : page.nextCursor,
    // 0 from a directory that predates cursors: the query's page stands.
    page: page.page > 0 ? page.page : undefined,
  };
}

export function users(u: Upstreams): CollectionSpec<ReturnType<typeof userJson>, typeof S.CreateUserBody, typeof S.UpdateUserBody> {
  return {
    tag: 'users',
    permission: 'users.manage',
    resource: S.User,
    createBody: S.CreateUserBody,
    updateBody: S.UpdateUserBody,
    sorts: ['createdAt', 'email', 'lastName'],
    get: async (id, o) => userJson(await u.users.getUser({ id, includeDeleted: o?.includeDeleted === true })),
    list: async (a: ListArgs) => mapPage(await u.users.listUsers(a), userJson),
    create: async (b) =>
      userJson(await u.users.createUser({ firstName: b.firstName, lastName: b.lastName, email: b.email, phone: b.phone, password: b.password, roles: b.roles ?? [] })),
    update: async (id, b) =>
      userJson(
        await u.users.updateUser(
          { id, ...b, phone: b.phone ?? undefined, clearFields: b.phone === null ? ['phone'] : [], roles: b.roles === undefined ? undefined : { names: b.roles } },
        ),
      ),
    remove: async (id) => void (await u.users.deleteUser({ id })),
  };
}

export function roles(u: Upstreams): CollectionSpec<ReturnType<typeof roleJson>, typeof S.CreateNamedBody, typeof S.UpdateNamedBody> {
  return {
    tag: 'roles',
    permission: 'roles.manage',
    resource: S.Role,
    createBody: S.CreateNamedBody,
    updateBody: S.UpdateNamedBody,
    sorts: ['createdAt', 'name'],
    get: async (id) => roleJson(await u.roles.getRole({ id })),
    list: async (a) => mapPage(await u.roles.listRoles(a), roleJson),
    create: async (b) => roleJson(await u.roles.createRole({ name: b.name, description: b.description ?? '' })),
    update: async (id, b) => roleJson(await u.roles.updateRole({ id, ...b })),
    remove: async (id) => void (await u.roles.deleteRole({ id })),
  };
}

export function permissions(u: Upstreams): CollectionSpec<ReturnType<typeof permissionJson>, typeof S.CreateNamedBody, typeof S.UpdateNamedBody> {
  return {
    tag: 'permissions',
    permission: 'permissions.manage',
    resource: S.Permission,
    createBody: S.CreateNamedBody,
    updateBody: S.UpdateNamedBody,
    sorts: ['createdAt', 'name'],
    get: async (id) => permissionJson(await u.permissions.getPermission({ id })),
    list: async (a) => mapPage(await u.permissions.listPermissions(a), permissionJson),
    create: async (b) => permissionJson(await u.permissions.createPermission({ name: b.name, description: b.description ?? '' })),
    update: async (id, b) => permissionJson(await u.permissions.updatePermission({ id, ...b })),
    remove: async (id) => void (await u.permissions.deletePermission({ id })),
  };
}

export function rolePermissions(u: Upstreams): CollectionSpec<directoryV1.RolePermission, typeof S.CreateLinkBody, typeof S.UpdateLinkBody> {
  return {
    tag: 'role-permissions',
    permission: 'role-permissions.manage',
    resource: S.RolePermission,
    createBody: S.CreateLinkBody,
    updateBody: S.UpdateLinkBody,
    listFilters: {
      roleId: Type.Optional({ ...Uuid, description: 'Only the links of this role' }),
      permissionId: Type.Optional({ ...Uuid, description: 'Only the links to this permission' }),
    },
    get: (id) => u.links.getRolePermission({ id }),
    list: async (a) => mapPage(await u.links.listRolePermissions({ ...a, roleId: a.filters.roleId, permissionId: a.filters.permissionId }), (l) => l),
    create: (b) => u.links.createRolePermission({ roleId: b.roleId, permissionId: b.permissionId }),
    update: (id, b) => u.links.updateRolePermission({ id, ...b }),
    remove: async (id) => void (await u.links.deleteRolePermission({ id })),
  };
}
