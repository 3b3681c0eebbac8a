/**
 * What every factor shares (issue #37 item 2), written once: the lockout accounting of the
 * account's email, the audit events of a failure, and the constant-shape refusal. An attempt is
 * reserved before its factor is checked, so of any number of concurrent guesses at most the limit
 * are checked per lockout window; a locked email still pays the check's cost (a dummy evaluation).
 */
import { SUBJECTS } from '@iam/contracts';
import { AppError, type ErrorReason, type Logger, event, sha256 } from '@iam/platform';
import type { IdentityStores, UnitOfWork } from '../../domain/ports';

export function emailKey(email: string): Buffer {
  return sha256(email.trim().toLowerCase());
}

export interface LockoutSettings {
  readonly maxFailedAttempts: number;
  readonly lockoutMinutes: number;
}

/** A reserved attempt: `allowed` false while the email is locked (then nothing is evaluated). */
export interface Slot {
  readonly allowed: boolean;
  readonly count: number;
}

export type LockoutStores = Pick<IdentityStores, 'lockouts'>;

export interface Attempts {
  /** Reserves an attempt against `key` (null: the attempt names no account, nothing reserved). */
  reserve(key: Buffer | null): Promise<Slot>;
  /** Gives the reservation back (the factor was right but the sign-in is not complete, or the check could not be made). */
  release(key: Buffer | null): Promise<void>;
  /**
   * A refused first factor: counted when the account exists (or the email is locked), its events
   * written, and the one refusal thrown.
   */
  refuseFirst(a: { key: Buffer | null; slot: Slot; accountExists: boolean; accountId: string; refusal: { message: string; reason: ErrorReason } }): Promise<never>;
  /** A refused second factor (or enrolment): its events written and the one refusal thrown. */
  refuseSecond(a: { userId: string; slot: Slot; audit: string }): Promise<never>;
}

export const INVALID_FACTOR = 'The second factor is incorrect.';

export function createAttempts(deps: { settings: LockoutSettings; stores: LockoutStores; uow: UnitOfWork<object>; logger: Logger }): Attempts {
  const { settings: s, stores, uow, logger } = deps;
  const lockedNowOf = (slot: Slot, counted: boolean) => slot.allowed && counted && slot.count >= s.maxFailedAttempts;
  return {
    reserve: async (key) => (key ? stores.lockouts.reserve(key, s.maxFailedAttempts, s.lockoutMinutes) : { allowed: true, count: 0 }),
    release: async (key) => {
      if (key) await stores.lockouts.release(key, s.maxFailedAttempts);
    },

    async refuseFirst({ key, slot, accountExists, accountId, refusal }) {
      // Failures against no account are not counted: a later account with this email starts active.
      const counted = key !== null && (accountExists || !slot.allowed);
      if (key && slot.allowed && !accountExists) await stores.lockouts.release(key, s.maxFailedAttempts);
      const lockedNow = key !== null && lockedNowOf(slot, accountExists);
      if (lockedNow) logger.warn({ failures: slot.count }, 'account locked after repeated failed sign-ins');
      const attempt = { userId: accountId, failures: counted ? slot.count : 0, reason: slot.allowed ? 'invalid_credentials' : 'locked' };
      await uow.run((tx) => tx.publish([event(SUBJECTS.loginFailed, attempt), ...(lockedNow ? [event(SUBJECTS.accountLocked, { userId: accountId, failures: slot.count, reason: '' })] : [])]));
      throw new AppError('UNAUTHENTICATED', refusal.message, { reason: refusal.reason });
    },

    async refuseSecond({ userId, slot, audit }) {
      const lockedNow = lockedNowOf(slot, true);
      if (lockedNow) logger.warn({ failures: slot.count }, 'account locked after repeated failed second factors');
      await uow.run((tx) =>
        tx.publish([
          event(SUBJECTS.mfaFailed, { userId, factor: audit, failures: slot.count, reason: slot.allowed ? 'invalid_factor' : 'locked', recoveryCodesLeft: 0, credential: '', name: '' }),
          ...(lockedNow ? [event(SUBJECTS.accountLocked, { userId, failures: slot.count, reason: '' })] : []),
        ]),
      );
      throw new AppError('UNAUTHENTICATED', INVALID_FACTOR, { reason: 'identity.invalid_factor' });
    },
  };
}
