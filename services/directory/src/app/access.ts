/**
 * Whether a user holds a permission now, for the services that authorize their own work on the
 * caller's current rights (commerce's catalog writes, the audit trail's reads): the same rights
 * the directory checks its own writes against (`rightsIn`), so a user demoted after their token
 * was issued holds in effect only what is stored now.
 */
import type { Stores } from '../domain/ports';
import { Violations } from '../domain/rules';
import { rightsIn } from './users';

const PERMISSION_MAX_LENGTH = 100;

export interface AccessUseCases {
  /**
   * True when `userId` names a live user holding `permission` (through a live role) or the
   * Administrator role; false for anyone else, an id that is not a UUID included. VALIDATION for
   * an empty or overlong permission name.
   */
  holds(userId: string, permission: string): Promise<boolean>;
}

/** `stores`: statements outside any transaction (auto-commit). */
export function createAccessUseCases(deps: { stores: Pick<Stores, 'principals'> }): AccessUseCases {
  return {
    async holds(userId, permission) {
      const v = new Violations();
      if (permission.length === 0 || permission.length > PERMISSION_MAX_LENGTH) v.add('permission', `must be 1..${PERMISSION_MAX_LENGTH} characters`);
      v.throwIfAny('The permission is not valid.');
      const rights = await rightsIn(deps.stores, { userId });
      return rights.administrator || rights.permissions.has(permission);
    },
  };
}
