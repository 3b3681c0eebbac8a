/**
 * Credential use cases, for the identity service only: one answer for every failed check, with
 * the same cost (an unknown or deleted email still pays one argon2 verification).
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { AppError, event } from '@iam/platform';
import type { Principal, User } from '../domain/model';
import { ADMINISTRATOR_ROLE } from '../domain/model';
import type { PasswordHasher, Stores, UnitOfWork } from '../domain/ports';
import { PASSWORD_MAX_LENGTH, Violations, checkEmail, checkId, checkName, checkPassword, normalizeEmail } from '../domain/rules';
import { resolveRoles, userChanged } from './users';

export interface CredentialUseCases {
  /** The principal for valid credentials, else null (unknown, deleted, or wrong password alike). */
  verify(email: string, password: string): Promise<Principal | null>;
  principal(userId: string): Promise<Principal>;
  findAccount(email: string): Promise<Principal | null>;
  setPassword(userId: string, password: string): Promise<void>;
  markEmailVerified(userId: string): Promise<void>;
  ensureAdministrator(input: { email: string; password: string; firstName?: string; lastName?: string }): Promise<{ user: User; created: boolean }>;
}

export function createCredentialUseCases(deps: { uow: UnitOfWork; read: Stores; hasher: PasswordHasher }): CredentialUseCases {
  const { read, hasher } = deps;
  return {
    async verify(email, password) {
      // Longer than any valid password: refused without hashing (nothing about the account leaks).
      if ([...password].length > PASSWORD_MAX_LENGTH) return null;
      const account = await read.credentials.credentialsByEmail(normalizeEmail(email));
      if (!account) {
        await hasher.verifyDummy(password);
        return null;
      }
      if (!(await hasher.verify(account.passwordHash, password))) return null;
      if (hasher.needsRehash(account.passwordHash)) {
        const rehashed = await hasher.hash(password);
        await read.credentials.setPasswordHash(account.principal.userId, rehashed);
      }
      return account.principal;
    },

    async principal(userId) {
      const p = await read.credentials.principal(checkId(userId, 'userId'));
      if (!p) throw AppError.notFound('The user does not exist.');
      return p;
    },

    async findAccount(email) {
      const account = await read.credentials.findByEmail(normalizeEmail(email));
      return account ? read.credentials.principal(account.id) : null;
    },

    async setPassword(userId, password) {
      checkId(userId, 'userId');
      const v = new Violations();
      checkPassword(v, 'newPassword', password);
      v.throwIfAny('The new password does not meet the password policy.');
      const hash = await hasher.hash(password);
      await deps.uow.run(async (tx) => {
        if (!(await tx.credentials.setPasswordHash(userId, hash))) throw AppError.notFound('The user does not exist.');
        const user = (await tx.users.findById(userId))!;
        await tx.publish([event(SUBJECTS.userUpdated, userChanged(user, ['password']))]);
      });
    },

    async markEmailVerified(userId) {
      checkId(userId, 'userId');
      await deps.uow.run(async (tx) => {
        if (!(await tx.credentials.markEmailVerified(userId))) throw AppError.notFound('The user does not exist.');
        const user = (await tx.users.findById(userId))!;
        await tx.publish([event(SUBJECTS.userUpdated, userChanged(user, ['emailVerified']))]);
      });
    },

    async ensureAdministrator(input) {
      const v = new Violations();
      const email = checkEmail(v, 'email', input.email);
      checkPassword(v, 'password', input.password);
      const firstName = checkName(v, 'firstName', input.firstName ?? 'Admin');
      const lastName = checkName(v, 'lastName', input.lastName ?? 'User');
      v.throwIfAny('The administrator account is not valid.');
      const existing = await read.credentials.findByEmail(email);
      // Keep the stored hash when the password did not change: running twice is a no-op.
      const passwordHash = existing && (await hasher.verify(existing.passwordHash, input.password)) ? existing.passwordHash : await hasher.hash(input.password);
      return deps.uow.run(async (tx) => {
        const [adminRoleId] = await resolveRoles(tx, [ADMINISTRATOR_ROLE]);
        const found = await tx.credentials.findByEmail(email);
        const id = found?.id ?? randomUUID();
        if (found) {
          await tx.users.update(id, { passwordHash, ...(input.firstName ? { firstName } : {}), ...(input.lastName ? { lastName } : {}) });
        } else {
          await tx.users.insert({ id, firstName, lastName, email, phone: null, passwordHash });
        }
        const before = await tx.users.findById(id);
        const roleIds = (await resolveRoles(tx, before!.roles)).filter((r) => r !== adminRoleId);
        await tx.users.setRoles(id, [...roleIds, adminRoleId!]);
        const user = (await tx.users.findById(id))!;
        await tx.publish([event(found ? SUBJECTS.userUpdated : SUBJECTS.userCreated, userChanged(user, found ? ['roles', 'password'] : []))]);
        return { user, created: !found };
      });
    },
  };
}
