/** gRPC handlers: proto messages in, use cases, proto messages out. No rules live here. */
import { directoryV1 } from '@iam/contracts';
import { AppError, type CallContext, type HandlerDeps, type ServiceBinding, actorOf, bindService } from '@iam/platform';
import type { Actor } from '../domain/authorization';
import type { DirectoryUseCases } from '../app/use-cases';
import { closeListing, openListing } from '../app/listing';
import type { Collection, ListQuery, Page, Permission, Principal, Role, RolePermission, User } from '../domain/model';
import { checkListQuery } from '../domain/rules';

/** The directory's management services answer the gateway, which acts for the user its request verified. */
const GATEWAY = ['gateway'];

const toUser = (u: User): directoryV1.User => ({
  id: u.id,
  firstName: u.firstName,
  lastName: u.lastName,
  email: u.email,
  phone: u.phone ?? undefined,
  emailVerified: u.emailVerified,
  roles: [...u.roles],
  createdAt: u.createdAt,
  updatedAt: u.updatedAt,
  deletedAt: u.deletedAt ?? undefined,
});

const toRole = (r: Role): directoryV1.Role => ({
  id: r.id,
  name: r.name,
  description: r.description,
  permissions: [...r.permissions],
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
  deletedAt: r.deletedAt ?? undefined,
});

const toPermission = (p: Permission): directoryV1.Permission => ({
  id: p.id,
  name: p.name,
  description: p.description,
  createdAt: p.createdAt,
  updatedAt: p.updatedAt,
  deletedAt: p.deletedAt ?? undefined,
});

const toLink = (l: RolePermission): directoryV1.RolePermission => ({ ...l });

const toPrincipal = (p: Principal): directoryV1.Principal => ({ ...p, roles: [...p.roles], permissions: [...p.permissions] });

/** The end user a write acts for; a write that names none is refused (never treated as privileged). */
export function actor(ctx: CallContext): Actor {
  const userId = actorOf(ctx);
  if (!userId) throw AppError.forbidden('The call does not name the user it acts for.');
  return { userId };
}

/** A list call (also the organizations' lists, organizations-grpc.ts): its paging, search, sort and cursor checked (400s name the field), the page listed, the next cursor made. */
export async function listed<T, J>(
  collection: Collection,
  q: directoryV1.ListQuery,
  list: (query: ListQuery) => Promise<Page<T>>,
  toJson: (item: T) => J,
  filters?: Record<string, string | undefined>,
) {
  const l = openListing(collection, { query: checkListQuery(q), sort: q.sort, cursor: q.cursor, filters });
  const a = closeListing(l, await list(l.query));
  return { items: a.items.map(toJson), totalCount: a.totalCount, totalCountEstimated: !a.totalCountExact, nextCursor: a.nextCursor, page: a.page };
}

export function directoryGrpc(uc: DirectoryUseCases, deps: HandlerDeps): ServiceBinding[] {
  return [
    bindService(
      directoryV1.UserServiceService,
      {
        createUser: async (r, ctx) => toUser(await uc.users.create(actor(ctx), { ...r, phone: r.phone })),
        getUser: async (r) => toUser(await uc.users.get(r.id, { includeDeleted: r.includeDeleted === true })),
        updateUser: async (r, ctx) =>
          toUser(
            await uc.users.update(actor(ctx), r.id, {
              firstName: r.firstName,
              lastName: r.lastName,
              email: r.email,
              phone: r.clearFields.includes('phone') ? null : r.phone,
              password: r.password,
              roles: r.roles?.names,
            }),
          ),
        deleteUser: async (r, ctx) => (await uc.users.remove(actor(ctx), r.id), {}),
        listUsers: (q) => listed('users', q, (query) => uc.users.list(query), toUser),
        importUsers: async (r, ctx) => {
          const records = r.records.map((x) => (x.error ? { line: x.line, error: x.error } : { line: x.line, text: x.text }));
          const results = await uc.imports.importBatch(actor(ctx), r.jobId, records);
          return {
            results: results.map((x) => ({
              line: x.line,
              status: x.status,
              userId: 'userId' in x ? (x.userId ?? '') : '',
              reason: 'reason' in x ? x.reason : '',
              hashFamily: 'hashFamily' in x ? (x.hashFamily ?? '') : '',
              totp: 'totp' in x ? (x.totp ?? '') : '',
            })),
          };
        },
        finishUserImport: async (r, ctx) => {
          actor(ctx);
          await uc.imports.finish(r.jobId, { created: r.created, skipped: r.skipped, refused: r.refused }, r.source === 'cli' ? 'cli' : 'api');
          return {};
        },
      },
      deps,
      GATEWAY,
    ),
    bindService(
      directoryV1.RoleServiceService,
      {
        createRole: async (r) => toRole(await uc.roles.create(r)),
        getRole: async (r) => toRole(await uc.roles.get(r.id)),
        updateRole: async (r) => toRole(await uc.roles.update(r.id, { name: r.name, description: r.description })),
        deleteRole: async (r) => (await uc.roles.remove(r.id), {}),
        listRoles: (q) => listed('roles', q, (query) => uc.roles.list(query), toRole),
      },
      deps,
      GATEWAY,
    ),
    bindService(
      directoryV1.PermissionServiceService,
      {
        createPermission: async (r) => toPermission(await uc.permissions.create(r)),
        getPermission: async (r) => toPermission(await uc.permissions.get(r.id)),
        updatePermission: async (r) => toPermission(await uc.permissions.update(r.id, { name: r.name, description: r.description })),
        deletePermission: async (r) => (await uc.permissions.remove(r.id), {}),
        listPermissions: (q) => listed('permissions', q, (query) => uc.permissions.list(query), toPermission),
      },
      deps,
      GATEWAY,
    ),
    bindService(
      directoryV1.RolePermissionServiceService,
      {
        createRolePermission: async (r, ctx) => toLink(await uc.links.create(actor(ctx), r)),
        getRolePermission: async (r) => toLink(await uc.links.get(r.id)),
        updateRolePermission: async (r, ctx) => toLink(await uc.links.update(actor(ctx), r.id, { roleId: r.roleId, permissionId: r.permissionId })),
        deleteRolePermission: async (r, ctx) => (await uc.links.remove(actor(ctx), r.id), {}),
        listRolePermissions: (q) => {
          const ends = { roleId: q.roleId, permissionId: q.permissionId };
          return listed('role-permissions', q, (query) => uc.links.list(query, ends), toLink, ends);
        },
      },
      deps,
      GATEWAY,
    ),
    bindService(directoryV1.AccessServiceService, { checkAccess: async (r) => ({ allowed: await uc.access.holds(r.userId, r.permission) }) }, deps, ['commerce', 'audit', 'notification']),
    bindService(
      directoryV1.CredentialServiceService,
      {
        verifyCredentials: async (r) => {
          const { principal: p, accountExists, accountId = '', passwordChangeRequired = false } = await uc.credentials.verify(r.email, r.password, { skipEvaluation: r.skipEvaluation });
          return p
            ? { valid: true, principal: toPrincipal(p), accountExists, accountId, passwordChangeRequired }
            : { valid: false, principal: undefined, accountExists, accountId, passwordChangeRequired: false };
        },
        getPrincipal: async (r) => toPrincipal(await uc.credentials.principal(r.userId)),
        findAccount: async (r) => {
          const p = await uc.credentials.findAccount(r.email);
          return p ? { found: true, principal: toPrincipal(p) } : { found: false, principal: undefined };
        },
        resetPassword: async (r) => uc.credentials.resetPassword({ ...r, emailSha256: Buffer.from(r.emailSha256) }),
        markEmailVerified: async (r) => (await uc.credentials.markEmailVerified(r.userId, Buffer.from(r.emailSha256)), {}),
        changeRequiredPassword: async (r) => (await uc.credentials.changeRequiredPassword(r.userId, r.password), {}),
        resolveRoles: async (r) => ({ roles: await uc.credentials.resolveRoles(r.names) }),
        resolvePermissions: async (r) => ({ permissions: await uc.credentials.resolvePermissions(r.names) }),
        ensureAdministrator: async (r) => {
          const { user, created } = await uc.credentials.ensureAdministrator({
            email: r.email,
            password: r.password,
            firstName: r.firstName || undefined,
            lastName: r.lastName || undefined,
          });
          return { user: toUser(user), created };
        },
        provisionUser: async (r) => toPrincipal(await uc.provisioning.provisionUser(r)),
        hasPassword: async (r) => ({ hasPassword: await uc.provisioning.hasPassword(r.userId) }),
      },
      deps,
      // Password checks and resets: identity alone.
      ['identity'],
    ),
  ];
}
