/**
 * User use cases: create, read, update (fields given replace, absent stay), soft delete, list.
 * Every change writes its `directory.user.*` event in the same transaction.
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { AppError, event } from '@iam/platform';
import type { ListQuery, Page, User } from '../domain/model';
import type { PasswordHasher, Stores, UnitOfWork } from '../domain/ports';
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
  phone?: number;
  password?: string;
  roles?: readonly string[];
}

export interface UserUseCases {
  create(input: CreateUserInput): Promise<User>;
  get(id: string): Promise<User>;
  update(id: string, input: UpdateUserInput): Promise<User>;
  remove(id: string): Promise<void>;
  list(query: ListQuery): Promise<Page<User>>;
}

/** Role names → ids of live roles; an unknown name is a VALIDATION error on `roles`. */
export async function resolveRoles(tx: Pick<Stores, 'roles'>, names: readonly string[]): Promise<string[]> {
  const wanted = [...new Set(names.map((n) => n.trim()))];
  const found = await tx.roles.findLiveByNames(wanted);
  const known = new Set(found.map((r) => r.name.toLowerCase()));
  const unknown = wanted.filter((n) => !known.has(n.toLowerCase()));
  if (unknown.length > 0) {
    throw AppError.validation('Unknown role.', [{ field: 'roles', message: `unknown role(s): ${unknown.map((n) => JSON.stringify(n.slice(0, 100))).join(', ')}` }]);
  }
  return found.map((r) => r.id);
}

/** The payload of a `directory.user.*` event. */
export function userChanged(user: User, changedFields: string[] = []) {
  return { userId: user.id, email: user.email, firstName: user.firstName, lastName: user.lastName, roles: [...user.roles], changedFields };
}

export function createUserUseCases(deps: { uow: UnitOfWork; read: Stores; hasher: PasswordHasher }): UserUseCases {
  return {
    async create(input) {
      const v = new Violations();
      const firstName = checkName(v, 'firstName', input.firstName);
      const lastName = checkName(v, 'lastName', input.lastName);
      const email = checkEmail(v, 'email', input.email);
      const phone = input.phone === undefined ? null : checkPhone(v, 'phone', input.phone);
      checkPassword(v, 'password', input.password);
      v.throwIfAny();
      const passwordHash = await deps.hasher.hash(input.password);
      return deps.uow.run(async (tx) => {
        const roleIds = await resolveRoles(tx, input.roles ?? []);
        const id = randomUUID();
        await tx.users.insert({ id, firstName, lastName, email, phone, passwordHash });
        await tx.users.setRoles(id, roleIds);
        const user = (await tx.users.findById(id))!;
        await tx.publish([event(SUBJECTS.userCreated, userChanged(user))]);
        return user;
      });
    },

    async get(id) {
      const user = await deps.read.users.findById(checkId(id));
      if (!user) throw AppError.notFound('The user does not exist.');
      return user;
    },

    async update(id, input) {
      checkId(id);
      const v = new Violations();
      const patch: Parameters<Stores['users']['update']>[1] = {};
      if (input.firstName !== undefined) patch.firstName = checkName(v, 'firstName', input.firstName);
      if (input.lastName !== undefined) patch.lastName = checkName(v, 'lastName', input.lastName);
      if (input.email !== undefined) patch.email = checkEmail(v, 'email', input.email);
      if (input.phone !== undefined) patch.phone = checkPhone(v, 'phone', input.phone);
      if (input.password !== undefined) checkPassword(v, 'password', input.password);
      v.throwIfAny();
      if (input.password !== undefined) patch.passwordHash = await deps.hasher.hash(input.password);
      return deps.uow.run(async (tx) => {
        if (!(await tx.users.findById(id, { forUpdate: true }))) throw AppError.notFound('The user does not exist.');
        await tx.users.update(id, patch);
        if (input.roles !== undefined) await tx.users.setRoles(id, await resolveRoles(tx, input.roles));
        const user = (await tx.users.findById(id))!;
        const fields = Object.keys(input).filter((k) => (input as Record<string, unknown>)[k] !== undefined);
        if (fields.length > 0) await tx.publish([event(SUBJECTS.userUpdated, userChanged(user, fields))]);
        return user;
      });
    },

    async remove(id) {
      checkId(id);
      await deps.uow.run(async (tx) => {
        const user = await tx.users.findById(id, { forUpdate: true });
        if (!user || !(await tx.users.softDelete(id))) throw AppError.notFound('The user does not exist.');
        await tx.publish([event(SUBJECTS.userDeleted, userChanged(user))]);
      });
    },

    list: (query) => deps.read.users.list(query),
  };
}
