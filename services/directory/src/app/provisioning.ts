/**
 * Accounts made by a sign-in through another identity provider (issue #40 item 5), for the
 * identity service only. Such an account has no password: its hash is a marker no password
 * verifies (a password reset gives it one), so it signs in only through the providers linked to it
 * (or a passkey added later). Its email counts as verified only when identity says the provider is
 * trusted for it; its roles are the provider's default roles (identity checked who set them).
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { AppError, event } from '@iam/platform';
import type { Principal } from '../domain/model';
import type { PrivilegedStores, UnitOfWork } from '../domain/ports';
import { Violations, checkEmail, checkId, checkName } from '../domain/rules';
import { resolveRoles, userChanged } from './users';

/** The password hash of an account without a password: not an argon2 hash, so nothing verifies against it. */
export const NO_PASSWORD = '!no-password';

export interface ProvisioningUseCases {
  /** CONFLICT (field email) when the address is taken; VALIDATION for bad names or unknown roles. */
  provisionUser(input: { email: string; firstName: string; lastName: string; emailVerified: boolean; roles: readonly string[] }): Promise<Principal>;
  /** NOT_FOUND for an unknown or deleted user. */
  hasPassword(userId: string): Promise<boolean>;
}

export function createProvisioningUseCases(deps: {
  uow: UnitOfWork<Pick<PrivilegedStores, 'credentials' | 'users' | 'roles'>>;
  stores: Pick<PrivilegedStores, 'credentials' | 'principals' | 'users'>;
}): ProvisioningUseCases {
  return {
    async provisionUser(input) {
      const v = new Violations();
      const email = checkEmail(v, 'email', input.email);
      const firstName = checkName(v, 'firstName', input.firstName.trim() || 'New');
      const lastName = checkName(v, 'lastName', input.lastName.trim() || 'User');
      v.throwIfAny('The account is not valid.');
      const id = randomUUID();
      await deps.uow.run(async (tx) => {
        const roles = await resolveRoles(tx, input.roles);
        await tx.users.insert({ id, firstName, lastName, email, phone: null, passwordHash: NO_PASSWORD });
        if (input.emailVerified) await tx.credentials.markEmailVerified(id);
        if (roles.length > 0) await tx.users.setRoles(id, roles.map((r) => r.id));
        const user = (await tx.users.findById(id))!;
        await tx.publish([event(SUBJECTS.userCreated, userChanged(user))]);
      });
      const p = await deps.stores.principals.findById(id);
      if (!p) throw AppError.notFound('The user does not exist.');
      return p;
    },

    async hasPassword(userId) {
      const user = await deps.stores.users.findById(checkId(userId, 'userId'));
      if (!user) throw AppError.notFound('The user does not exist.');
      const account = await deps.stores.credentials.findByEmail(user.email);
      return account !== null && account.passwordHash !== NO_PASSWORD;
    },
  };
}
