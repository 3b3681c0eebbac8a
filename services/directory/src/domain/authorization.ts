/**
 * Who may grant what (DESIGN §3, SECURITY.md). The gateway's policies decide who reaches a
 * collection; these rules decide what a caller may do there without ending up with more than it
 * holds. They are checked inside the transaction that makes the change, against the caller's
 * rights as stored now (a demoted caller's older token grants nothing here). The Administrator
 * passes every rule except the ones protecting built-ins, which bind everyone.
 */
import { AppError } from '@iam/platform';
import { ADMINISTRATOR_ROLE, type Principal } from './model';

/** Seeded by migrations; cannot be deleted or renamed, nor unlinked from Administrator. */
export const BUILTIN_PERMISSIONS: readonly string[] = ['users.manage', 'roles.manage', 'permissions.manage', 'role-permissions.manage', 'products.manage', 'audit.read', 'clients.manage', 'webhooks.manage', 'organizations.manage', 'identity-providers.manage'];

/** The end user a change is made for (the verified token's `sub`). */
export interface Actor {
  readonly userId: string;
}

export interface Rights {
  readonly administrator: boolean;
  readonly permissions: ReadonlySet<string>;
}

/** An unknown or deleted actor holds nothing. */
export function rightsOf(principal: Principal | null): Rights {
  return principal
    ? { administrator: principal.roles.includes(ADMINISTRATOR_ROLE), permissions: new Set(principal.permissions) }
    : { administrator: false, permissions: new Set() };
}

export const isAdministratorRole = (name: string): boolean => name === ADMINISTRATOR_ROLE;
export const isBuiltinPermission = (name: string): boolean => BUILTIN_PERMISSIONS.includes(name);

const lacking = (rights: Rights, permissions: Iterable<string>): string[] => [...permissions].filter((p) => !rights.permissions.has(p));

/**
 * Acting on a user (create, change any field, delete) is acting with that user's powers: a
 * non-Administrator may do it only to users whose every permission it holds, and never to an
 * Administrator. FORBIDDEN otherwise.
 */
export function assertMayManageUser(rights: Rights, target: { roles: readonly string[]; permissions: readonly string[] }): void {
  if (rights.administrator) return;
  if (target.roles.includes(ADMINISTRATOR_ROLE)) throw AppError.forbidden('Only an Administrator may change or delete an Administrator.');
  const missing = lacking(rights, target.permissions);
  if (missing.length > 0) throw AppError.forbidden(`Only a caller holding every permission of this user may change it (missing: ${missing.join(', ')}).`);
}

/**
 * Assigning roles (escalation prevention, as Kubernetes RBAC): a non-Administrator may add a role
 * only if it holds every permission of that role, and may neither add nor remove Administrator.
 */
export function assertMayAssignRoles(
  rights: Rights,
  added: ReadonlyArray<{ name: string; permissions: readonly string[] }>,
  removed: ReadonlyArray<{ name: string }>,
): void {
  if (rights.administrator) return;
  if ([...added, ...removed].some((r) => isAdministratorRole(r.name))) {
    throw AppError.forbidden('Only an Administrator may assign or remove the Administrator role.');
  }
  for (const role of added) {
    const missing = lacking(rights, role.permissions);
    if (missing.length > 0) throw AppError.forbidden(`You may assign the role ${role.name} only if you hold all its permissions (missing: ${missing.join(', ')}).`);
  }
}

/** Granting: a non-Administrator links only permissions it holds, and never to Administrator. */
export function assertMayGrant(rights: Rights, link: { roleName: string; permissionName: string }): void {
  if (rights.administrator) return;
  if (isAdministratorRole(link.roleName)) throw AppError.forbidden('Only an Administrator may change the permissions of the Administrator role.');
  if (!rights.permissions.has(link.permissionName)) throw AppError.forbidden(`You may grant ${link.permissionName} only if you hold it.`);
}

/** Revoking: only an Administrator touches Administrator's links, and nobody its built-in ones. */
export function assertMayRevoke(rights: Rights, link: { roleName: string; permissionName: string }): void {
  if (isAdministratorRole(link.roleName) && isBuiltinPermission(link.permissionName)) {
    throw AppError.conflict(`The built-in permission ${link.permissionName} cannot be revoked from the Administrator role.`);
  }
  if (!rights.administrator && isAdministratorRole(link.roleName)) {
    throw AppError.forbidden('Only an Administrator may change the permissions of the Administrator role.');
  }
}

/** The Administrator role and the built-in permissions cannot be renamed or deleted (CONFLICT). */
export function assertNotBuiltin(kind: 'role' | 'permission', name: string, change: 'renamed' | 'deleted'): void {
  if (kind === 'role' ? isAdministratorRole(name) : isBuiltinPermission(name)) {
    throw AppError.conflict(`The built-in ${kind} ${name} cannot be ${change}.`);
  }
}

export function lastAdministrator(): AppError {
  return AppError.conflict('The last active Administrator cannot be deleted or lose the Administrator role.');
}
