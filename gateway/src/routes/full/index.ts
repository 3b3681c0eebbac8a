/**
 * The Full profile: /api/v1/auth/*, the JWKS, and the users, roles, permissions and
 * role-permissions collections. Rules live in the services; here are routes and schemas only.
 */
import type { directoryV1 } from '@iam/contracts';
import type { FastifyInstance } from 'fastify';
import * as S from '../../schemas/resources';
import type { Upstreams } from '../../upstreams';
import { type AuthRouteDeps, fullAuthRoutes } from './auth';
import { registerCollection } from './collections';

export const userJson = (u: directoryV1.User) => ({ ...u, phone: u.phone ?? null, deletedAt: u.deletedAt ?? null });
export const roleJson = (r: directoryV1.Role) => ({ ...r, deletedAt: r.deletedAt ?? null });
const permissionJson = (p: directoryV1.Permission) => ({ ...p, deletedAt: p.deletedAt ?? null });

function mapPage<T, R>(page: { items: T[]; totalCount: number }, toJson: (item: T) => R) {
  return { items: page.items.map(toJson), totalCount: page.totalCount };
}

type UserBody = { firstName?: string; lastName?: string; email?: string; phone?: number; password?: string; roles?: string[] };

/** Create/update bodies of users → directory requests (shared with the Compact profile). */
export function userCalls(u: Upstreams) {
  return {
    get: async (id: string) => userJson(await u.users.getUser({ id })),
    list: async (a: { page: number; pageSize: number; q: string; includeDeleted: boolean }) => mapPage(await u.users.listUsers(a), userJson),
    create: async (b: UserBody, actor: string) =>
      userJson(
        await u.users.createUser({ firstName: b.firstName!, lastName: b.lastName!, email: b.email!, phone: b.phone, password: b.password!, roles: b.roles ?? [] }, { actor }),
      ),
    update: async (id: string, b: UserBody, actor: string) =>
      userJson(await u.users.updateUser({ id, ...b, roles: b.roles === undefined ? undefined : { names: b.roles } }, { actor })),
    remove: async (id: string, actor: string) => void (await u.users.deleteUser({ id }, { actor })),
  };
}

export function roleCalls(u: Upstreams) {
  return {
    get: async (id: string) => roleJson(await u.roles.getRole({ id })),
    list: async (a: { page: number; pageSize: number; q: string; includeDeleted: boolean }) => mapPage(await u.roles.listRoles(a), roleJson),
    create: async (b: { name: string; description?: string }, actor: string) => roleJson(await u.roles.createRole({ name: b.name, description: b.description ?? '' }, { actor })),
    update: async (id: string, b: { name?: string; description?: string }, actor: string) => roleJson(await u.roles.updateRole({ id, ...b }, { actor })),
    remove: async (id: string, actor: string) => void (await u.roles.deleteRole({ id }, { actor })),
  };
}

function permissionCalls(u: Upstreams) {
  return {
    get: async (id: string) => permissionJson(await u.permissions.getPermission({ id })),
    list: async (a: { page: number; pageSize: number; q: string; includeDeleted: boolean }) => mapPage(await u.permissions.listPermissions(a), permissionJson),
    create: async (b: { name: string; description?: string }, actor: string) =>
      permissionJson(await u.permissions.createPermission({ name: b.name, description: b.description ?? '' }, { actor })),
    update: async (id: string, b: { name?: string; description?: string }, actor: string) => permissionJson(await u.permissions.updatePermission({ id, ...b }, { actor })),
    remove: async (id: string, actor: string) => void (await u.permissions.deletePermission({ id }, { actor })),
  };
}

export async function fullProfile(app: FastifyInstance, deps: AuthRouteDeps): Promise<void> {
  const u = deps.upstreams;
  await app.register(fullAuthRoutes, deps);

  registerCollection(app, deps.authenticator, {
    path: '/api/v1/users',
    tag: 'users',
    permission: 'users.manage',
    resource: S.User,
    createBody: S.CreateUserBody,
    updateBody: S.UpdateUserBody,
    ...userCalls(u),
  });

  registerCollection(app, deps.authenticator, {
    path: '/api/v1/roles',
    tag: 'roles',
    permission: 'roles.manage',
    resource: S.Role,
    createBody: S.CreateNamedBody,
    updateBody: S.UpdateNamedBody,
    ...roleCalls(u),
  });

  registerCollection(app, deps.authenticator, {
    path: '/api/v1/permissions',
    tag: 'permissions',
    permission: 'permissions.manage',
    resource: S.Permission,
    createBody: S.CreateNamedBody,
    updateBody: S.UpdateNamedBody,
    ...permissionCalls(u),
  });

  registerCollection(app, deps.authenticator, {
    path: '/api/v1/role-permissions',
    tag: 'role-permissions',
    permission: 'role-permissions.manage',
    resource: S.RolePermission,
    createBody: S.CreateLinkBody,
    updateBody: S.UpdateLinkBody,
    get: (id) => u.links.getRolePermission({ id }),
    list: (a) => u.links.listRolePermissions(a),
    create: (b: { roleId: string; permissionId: string }, actor) => u.links.createRolePermission(b, { actor }),
    update: (id, b: { roleId?: string; permissionId?: string }, actor) => u.links.updateRolePermission({ id, ...b }, { actor }),
    remove: async (id, actor) => void (await u.links.deleteRolePermission({ id }, { actor })),
  });
}
