/**
 * User use cases: create, read, update (fields given replace, absent stay), soft delete, list.
 * Every change writes its `directory.user.*` event in the same transaction.
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS, type eventsV1 } from '@iam/contracts';
import { AppError, event, isUuid } from '@iam/platform';
import type { ListQuery, Page, User } from '../domain/model';
import type { PasswordHasher, Stores, UnitOfWork } from '../domain/ports';
import { type Actor, type Rights, assertMayAssignRoles, assertMayManageUser, isAdministratorRole, lastAdministrator, rightsOf } from '../domain/authorization';
import { Violations, checkEmail, checkId, checkName, checkPassword, checkPhone } from '../domain/rules';

export interface CreateUserInput {
  firstName: string;
  lastName: string;
  email: string;
  phone?: number;
  password: string;
  roles?: readonly string[];
}

export interface UpdateUserInput {
  firstName?: string;
  lastName?: string;
  email?: string;
  /** null clears it. */
  phone?: number | null;
  password?: string;
  roles?: readonly string[];
}

export interface UserUseCases {
  create(actor: Actor, input: CreateUserInput): Promise<User>;
  /** NOT_FOUND for an unknown id, and for a deleted user unless `includeDeleted`. */
  get(id: string, opts?: { includeDeleted?: boolean }): Promise<User>;
  update(actor: Actor, id: string, input: UpdateUserInput): Promise<User>;
  remove(actor: Actor, id: string): Promise<void>;
  list(query: ListQuery): Promise<Page<User>>;
}

type LiveRole = { id: string; name: string; permissions: string[] };

/** Role names → live roles (locked FOR SHARE); an unknown name is a VALIDATION error on `roles`. */
export async function resolveRoles(tx: Pick<Stores, 'roles'>, names: readonly string[]): Promise<LiveRole[]> {
  const wanted = [...new Set(names.map((n) => n.trim()))];
  const found = await tx.roles.findLiveByNames(wanted);
  const known = new Set(found.map((r) => r.name.toLowerCase()));
  const unknown = wanted.filter((n) => !known.has(n.toLowerCase()));
  if (unknown.length > 0) {
    throw AppError.validation('Unknown role.', [{ field: 'roles', message: `unknown role(s): ${unknown.map((n) => JSON.stringify(n.slice(0, 100))).join(', ')}` }]);
  }
  return found;
}

/** The actor's rights as stored now (an id that is not a UUID names nobody and holds nothing). */
export async function rightsIn(tx: Pick<Stores, 'principals'>, actor: Actor): Promise<Rights> {
  return rightsOf(isUuid(actor.userId) ? await tx.principals.findById(actor.userId.toLowerCase()) : null);
}

/** CONFLICT when removing `userId` from the Administrators would leave none (serialised on the role). */
export async function assertNotLastAdministrator(tx: Pick<Stores, 'users'>, userId: string): Promise<void> {
  const admins = await tx.users.lockAdministrators();
  if (!admins.some((id) => id !== userId)) throw lastAdministrator();
}

/** A user's non-secret fields as events carry them. */
function userState(u: User): eventsV1.UserState {
  return { email: u.email, firstName: u.firstName, lastName: u.lastName, roles: [...u.roles], phone: u.phone ?? undefined, emailVerified: u.emailVerified };
}

/** The payload of a `directory.user.*` event; `before` is the user as an update found it. */
export function userChanged(user: User, changedFields: string[] = [], before?: User): eventsV1.UserChanged {
  return { userId: user.id, ...userState(user), changedFields, before: before && userState(before) };
}

const lower = (names: readonly string[]) => new Set(names.map((n) => n.toLowerCase()));

/**
 * `uow` runs transactions (the users, the roles they are given, the actor's rights), `stores`
 * reads outside any (auto-commit).
 */
export interface UserDeps {
  readonly uow: UnitOfWork<Pick<Stores, 'users' | 'roles' | 'principals'>>;
  readonly stores: Pick<Stores, 'users'>;
  readonly hasher: PasswordHasher;
}

export function createUserUseCases(deps: UserDeps): UserUseCases {
  return {
    async create(actor, input) {
      const v = new Violations();
      const firstName = checkName(v, 'firstName', input.firstName);
      const lastName = checkName(v, 'lastName', input.lastName);
      const email = checkEmail(v, 'email', input.email);
      const phone = input.phone === undefined ? null : checkPhone(v, 'phone', input.phone);
      checkPassword(v, 'password', input.password);
      v.throwIfAny();
      const passwordHash = await deps.hasher.hash(input.password);
      return deps.uow.run(async (tx) => {
        const roles = await resolveRoles(tx, input.roles ?? []);
        assertMayAssignRoles(await rightsIn(tx, actor), roles, []);
        const id = randomUUID();
        await tx.users.insert({ id, firstName, lastName, email, phone, passwordHash });
        await tx.users.setRoles(id, roles.map((r) => r.id));
        const user = (await tx.users.findById(id))!;
        await tx.publish([event(SUBJECTS.userCreated, userChanged(user))]);
        return user;
      });
    },

    async get(id, opts = {}) {
      const user = await deps.stores.users.findById(checkId(id), { includeDeleted: opts.includeDeleted === true });
      if (!user) throw AppError.notFound('The user does not exist.');
      return user;
    },

    async update(actor, rawId, input) {
      const id = checkId(rawId);
      const v = new Violations();
      const patch: Parameters<Stores['users']['update']>[1] = {};
      if (input.firstName !== undefined) patch.firstName = checkName(v, 'firstName', input.firstName);
      if (input.lastName !== undefined) patch.lastName = checkName(v, 'lastName', input.lastName);
      if (input.email !== undefined) patch.email = checkEmail(v, 'email', input.email);
      if (input.phone !== undefined) patch.phone = input.phone === null ? null : checkPhone(v, 'phone', input.phone);
      if (input.password !== undefined) checkPassword(v, 'password', input.password);
      v.throwIfAny();
      if (input.password !== undefined) patch.passwordHash = await deps.hasher.hash(input.password);
      return deps.uow.run(async (tx) => {
        const before = await tx.users.findById(id, { forUpdate: true });
        if (!before) throw AppError.notFound('The user does not exist.');
        const rights = await rightsIn(tx, actor);
        assertMayManageUser(rights, (await tx.principals.findById(id))!);
        const changed: string[] = (['firstName', 'lastName', 'email', 'phone'] as const).filter((k) => patch[k] !== undefined && patch[k] !== before[k]);
        if (patch.passwordHash !== undefined) changed.push('password');
        // A new address is unverified until its owner proves it (DESIGN §3).
        if (changed.includes('email')) {
          patch.emailVerified = false;
          if (before.emailVerified) changed.push('emailVerified');
        }
        await tx.users.update(id, patch);
        if (input.roles !== undefined) {
          const next = await resolveRoles(tx, input.roles);
          const had = lower(before.roles);
          const keeps = lower(next.map((r) => r.name));
          const added = next.filter((r) => !had.has(r.name.toLowerCase()));
          const removed = before.roles.filter((n) => !keeps.has(n.toLowerCase())).map((name) => ({ name }));
          assertMayAssignRoles(rights, added, removed);
          if (removed.some((r) => isAdministratorRole(r.name))) await assertNotLastAdministrator(tx, id);
          await tx.users.setRoles(id, next.map((r) => r.id));
          if (added.length > 0 || removed.length > 0) changed.push('roles');
        }
        const user = (await tx.users.findById(id))!;
        if (changed.length > 0) await tx.publish([event(SUBJECTS.userUpdated, userChanged(user, changed, before))]);
        return user;
      });
    },

    async remove(actor, rawId) {
      const id = checkId(rawId);
      await deps.uow.run(async (tx) => {
        const user = await tx.users.findById(id, { forUpdate: true });
        if (!user) throw AppError.notFound('The user does not exist.');
        assertMayManageUser(await rightsIn(tx, actor), (await tx.principals.findById(id))!);
        if (user.roles.some(isAdministratorRole)) await assertNotLastAdministrator(tx, id);
        if (!(await tx.users.softDelete(id))) throw AppError.notFound('The user does not exist.');
        await tx.publish([event(SUBJECTS.userDeleted, userChanged(user))]);
      });
    },

    list: (query) => deps.stores.users.list(query),
  };
}
