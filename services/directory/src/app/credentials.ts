/**
 * Credential use cases, for the identity service only: one answer for every failed check, with
 * the same cost (an unknown or deleted email still pays one argon2 verification).
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { AppError, event, sha256 } from '@iam/platform';
import type { Principal, User } from '../domain/model';
import { ADMINISTRATOR_ROLE } from '../domain/model';
import type { LegacyPasswordHook, PasswordHasher, PrivilegedStores, StoredCredentials, Stores, UnitOfWork } from '../domain/ports';
import { PASSWORD_MAX_LENGTH, Violations, checkEmail, checkId, checkName, checkPassword, normalizeEmail } from '../domain/rules';
import { resolveRoles, userChanged } from './users';

export interface CredentialUseCases {
  /**
   * The principal for valid credentials, else null (unknown, deleted, or wrong password alike, at
   * one cost); `accountExists` is for the lockout only. With `skipEvaluation` the password is not
   * checked at all (a locked account), at the same cost.
   */
  verify(
    email: string,
    password: string,
    opts?: { skipEvaluation?: boolean },
  ): Promise<{ principal: Principal | null; accountExists: boolean; accountId?: string; /** Valid only: a new password before the sign-in completes. */ passwordChangeRequired?: boolean }>;
  principal(userId: string): Promise<Principal>;
  findAccount(email: string): Promise<Principal | null>;
  /**
   * A password reset in one transaction: the new hash, the record that `resetId` (the
   * email-action token) was used, and `directory.user.updated` carrying `passwordResetId`, from
   * which identity completes the reset (token consumed, sessions ended, notice sent) once. Only
   * while the account still has the address `emailSha256`. The same `attemptId` again answers as
   * the first call did (a retry); NOT_FOUND for a deleted user, another address, or a reset
   * another attempt used; VALIDATION (field newPassword) for a weak password, with nothing changed.
   */
  resetPassword(r: { userId: string; password: string; emailSha256: Buffer; resetId: string; attemptId: string }): Promise<{ changedAt: Date; email: string; firstName: string }>;
  markEmailVerified(userId: string, emailSha256?: Buffer): Promise<void>;
  /**
   * The new password of an account that must change it at sign-in (imported with
   * passwordChangeRequired), in one transaction: the hash, the mark cleared, and
   * `directory.user.updated` (password, `passwordChangedAtSignIn`). CONFLICT when the account has
   * no such mark (a second answer of one step); VALIDATION (field newPassword) for a password the
   * policy refuses or the current one, nothing changed; NOT_FOUND for an unknown or deleted user.
   */
  changeRequiredPassword(userId: string, password: string): Promise<void>;
  /**
   * Creates the account with the Administrator role, or brings an existing one (by email) to the
   * given password and names and adds the role; run again with the same input it changes nothing.
   * With `ifMissing` an existing account is left exactly as it is.
   */
  /** The live roles among `names` (case-insensitive), with their live permissions; unknown names are absent. */
  resolveRoles(names: readonly string[]): Promise<Array<{ id: string; name: string; permissions: string[] }>>;
  /** The live permissions among `names` (case-insensitive), with their descriptions; unknown names are absent. */
  resolvePermissions(names: readonly string[]): Promise<Array<{ id: string; name: string; description: string }>>;
  ensureAdministrator(
    input: { email: string; password: string; firstName?: string; lastName?: string },
    opts?: { ifMissing?: boolean },
  ): Promise<{ user: User; created: boolean }>;
}

/**
 * `uow` runs transactions, `stores` single statements outside any (auto-commit); both privileged
 * (the password hashes), which no other use case gets.
 */
export interface CredentialDeps {
  readonly uow: UnitOfWork<Pick<PrivilegedStores, 'credentials' | 'users' | 'roles' | 'permissions'>>;
  readonly stores: Pick<PrivilegedStores, 'credentials' | 'principals'>;
  readonly hasher: PasswordHasher;
  /** The legacy system's check for users imported with `passwordMigration: "hook"`; absent: they fail until a reset. */
  readonly migrationHook?: LegacyPasswordHook;
  /** Counts sign-ins that rehashed a legacy hash and hook calls, by outcome. */
  readonly observe?: (event: 'rehashed' | 'hook_valid' | 'hook_invalid' | 'hook_unavailable') => void;
}

export function createCredentialUseCases(deps: CredentialDeps): CredentialUseCases {
  const { stores, hasher } = deps;

  /**
   * The stored hash, of whatever family an import brought. After a success, a hash that is not
   * the platform's argon2id with the current parameters is replaced (only if it is still the one
   * verified: a password changed meanwhile wins); a failure never writes.
   */
  async function verifyStored(account: StoredCredentials, password: string): Promise<boolean> {
    if (!(await hasher.verify(account.passwordHash, password))) return false;
    if (hasher.needsRehash(account.passwordHash)) {
      const rehashed = await hasher.hash(password);
      if (await stores.credentials.replacePasswordHash(account.principal.userId, account.passwordHash, rehashed)) deps.observe?.('rehashed');
    }
    return true;
  }

  /**
   * A user imported with `passwordMigration: "hook"`: the legacy system says whether the password
   * is right (once: the hash stored on its yes clears the mark). No hook, a no, a timeout or a 5xx
   * are all the one failure, which identity counts toward the lockout.
   */
  async function migrateThroughHook(account: StoredCredentials, password: string): Promise<boolean> {
    if (!deps.migrationHook) {
      await hasher.verifyDummy(password);
      return false;
    }
    const answer = await deps.migrationHook.check({ email: account.principal.email, password, externalId: account.externalId });
    deps.observe?.(`hook_${answer}`);
    if (answer !== 'valid') return false;
    await stores.credentials.completeMigration(account.principal.userId, await hasher.hash(password));
    return true;
  }

  return {
    async resolveRoles(names) {
      const v = new Violations();
      if (names.length > 100) v.add('roles', 'must name at most 100 roles');
      v.throwIfAny('The role names are not valid.');
      return deps.uow.run((tx) => tx.roles.findLiveByNames(names));
    },

    async resolvePermissions(names) {
      const v = new Violations();
      if (names.length > 100) v.add('permissions', 'must name at most 100 permissions');
      v.throwIfAny('The permission names are not valid.');
      return deps.uow.run((tx) => tx.permissions.findLiveByNames(names));
    },

    async verify(email, password, opts = {}) {
      const account = await stores.credentials.credentialsByEmail(normalizeEmail(email));
      const accountExists = account !== null;
      const accountId = account?.principal.userId;
      const refused = { principal: null, accountExists, accountId };
      // Longer than any valid password: refused without hashing (nothing about the account leaks).
      if ([...password].length > PASSWORD_MAX_LENGTH) return refused;
      if (!account || opts.skipEvaluation) {
        await hasher.verifyDummy(password);
        return refused;
      }
      const ok = account.passwordMigration === 'hook' ? await migrateThroughHook(account, password) : await verifyStored(account, password);
      if (!ok) return refused;
      return { principal: account.principal, accountExists, accountId, ...(account.passwordChangeRequired ? { passwordChangeRequired: true } : {}) };
    },

    async principal(userId) {
      const p = await stores.principals.findById(checkId(userId, 'userId'));
      if (!p) throw AppError.notFound('The user does not exist.');
      return p;
    },

    async findAccount(email) {
      const account = await stores.credentials.findByEmail(normalizeEmail(email));
      return account ? stores.principals.findById(account.id) : null;
    },

    async resetPassword(r) {
      const id = checkId(r.userId, 'userId');
      const resetId = checkId(r.resetId, 'resetId');
      const attemptId = checkId(r.attemptId, 'attemptId');
      const v = new Violations();
      checkPassword(v, 'newPassword', r.password);
      v.throwIfAny('The new password does not meet the password policy.');
      const hash = await hasher.hash(r.password);
      return deps.uow.run(async (tx) => {
        // The user's row lock serialises attempts on one reset: the second sees the first's record.
        const before = await liveWithAddress(tx, id, r.emailSha256);
        const applied = await tx.credentials.recordPasswordReset({ resetId, userId: id, attemptId });
        const user = (await tx.users.findById(id))!;
        if (!applied.first) {
          if (applied.attemptId !== attemptId || applied.userId !== id) throw AppError.notFound('The reset was already used.');
          return { changedAt: applied.changedAt, email: user.email, firstName: user.firstName };
        }
        await tx.credentials.setPasswordHash(id, hash);
        await tx.publish([event(SUBJECTS.userUpdated, { ...userChanged(user, ['password'], before), passwordResetId: resetId })]);
        return { changedAt: applied.changedAt, email: user.email, firstName: user.firstName };
      });
    },

    async changeRequiredPassword(userId, password) {
      const id = checkId(userId, 'userId');
      const v = new Violations();
      checkPassword(v, 'newPassword', password);
      v.throwIfAny('The new password does not meet the password policy.');
      const hash = await hasher.hash(password);
      await deps.uow.run(async (tx) => {
        const before = await liveWithAddress(tx, id);
        const current = await tx.credentials.passwordChangeRequired(id);
        if (!current) throw new AppError('CONFLICT', 'The password was changed already.', { reason: 'directory.password_change_not_required' });
        const same = new Violations();
        if (current.passwordHash && (await hasher.verify(current.passwordHash, password))) same.add('newPassword', 'must differ from the current password');
        same.throwIfAny('The new password must differ from the current one.');
        await tx.credentials.setPasswordHash(id, hash);
        const user = (await tx.users.findById(id))!;
        await tx.publish([event(SUBJECTS.userUpdated, { ...userChanged(user, ['password'], before), passwordChangedAtSignIn: true })]);
      });
    },

    async markEmailVerified(userId, emailSha256) {
      const id = checkId(userId, 'userId');
      await deps.uow.run(async (tx) => {
        const before = await liveWithAddress(tx, id, emailSha256);
        await tx.credentials.markEmailVerified(id);
        const user = (await tx.users.findById(id))!;
        await tx.publish([event(SUBJECTS.userUpdated, userChanged(user, ['emailVerified'], before))]);
      });
    },

    async ensureAdministrator(input, opts = {}) {
      const v = new Violations();
      const email = checkEmail(v, 'email', input.email);
      checkPassword(v, 'password', input.password);
      const firstName = checkName(v, 'firstName', input.firstName ?? 'Admin');
      const lastName = checkName(v, 'lastName', input.lastName ?? 'User');
      v.throwIfAny('The administrator account is not valid.');
      // Run again with the same settings, nothing changes: no write, no event, no session ended.
      const existing = await stores.credentials.findByEmail(email);
      // ifMissing: an existing account is left as it is, so nothing to hash for it.
      const leftAsIs = Boolean(existing && opts.ifMissing);
      const keptHash = !leftAsIs && existing && (await hasher.verify(existing.passwordHash, input.password)) ? existing.passwordHash : undefined;
      const newHash = leftAsIs || keptHash ? undefined : await hasher.hash(input.password);
      return deps.uow.run(async (tx) => {
        const [adminRole] = await resolveRoles(tx, [ADMINISTRATOR_ROLE]);
        const found = await tx.credentials.findByEmail(email);
        if (!found) {
          const id = randomUUID();
          await tx.users.insert({ id, firstName, lastName, email, phone: null, passwordHash: newHash ?? keptHash ?? (await hasher.hash(input.password)) });
          await tx.users.setRoles(id, [adminRole!.id]);
          const user = (await tx.users.findById(id))!;
          await tx.publish([event(SUBJECTS.userCreated, userChanged(user))]);
          return { user, created: true };
        }
        const before = (await tx.users.findById(found.id, { forUpdate: true }))!;
        // ifMissing: left as it is (also when another run created it meanwhile).
        if (opts.ifMissing) return { user: before, created: false };
        const patch: Parameters<Stores['users']['update']>[1] = {};
        if (input.firstName && firstName !== before.firstName) patch.firstName = firstName;
        if (input.lastName && lastName !== before.lastName) patch.lastName = lastName;
        if (found.passwordHash !== keptHash) patch.passwordHash = newHash ?? (await hasher.hash(input.password));
        const changed: string[] = Object.keys(patch).map((k) => (k === 'passwordHash' ? 'password' : k));
        await tx.users.update(found.id, patch);
        if (!before.roles.includes(ADMINISTRATOR_ROLE)) {
          const current = await resolveRoles(tx, before.roles);
          await tx.users.setRoles(found.id, [...current.map((r) => r.id), adminRole!.id]);
          changed.push('roles');
        }
        const user = (await tx.users.findById(found.id))!;
        if (changed.length > 0) await tx.publish([event(SUBJECTS.userUpdated, userChanged(user, changed, before))]);
        return { user, created: false };
      });
    },
  };
}

/** The live user, locked; NOT_FOUND when deleted or (with `emailSha256`) no longer at that address. */
async function liveWithAddress(tx: Pick<Stores, 'users'>, id: string, emailSha256?: Buffer): Promise<User> {
  const user = await tx.users.findById(id, { forUpdate: true });
  if (!user || (emailSha256 && emailSha256.length > 0 && !sha256(user.email).equals(emailSha256))) throw AppError.notFound('The user does not exist.');
  return user;
}
