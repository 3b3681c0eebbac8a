/**
 * A password reset makes the user review the account's sign-in methods (issue #34 item 2). Someone
 * who held a token of the account for a while could have added a passkey (which signs in alone)
 * or an authenticator app; a reset that left them would leave the intruder in. So the reset, in
 * the identity transaction that completes it (email-actions.ts `completePasswordReset`), removes
 * the second factors and passkeys added within AUTH_RESET_REMOVES_FACTORS_HOURS (24) before it,
 * and recovery codes made then; recovery codes with no factor left go too. Each removal is audited
 * (identity.mfa.removed, reason "password reset"), and `identity.password.changed` carries what was
 * removed and what remains, for the mail (with a link to the account page). 0 hours keeps all.
 */
import { SUBJECTS, type eventsV1 } from '@iam/contracts';
import { type InTransaction, type NewEvent, event } from '@iam/platform';
import type { IdentityStores } from '../domain/ports';
import { signInMethod } from './factor-notice';
import { credentialTag } from './passkeys';

type SignInMethod = eventsV1.SignInMethod;

export interface FactorReview {
  readonly removed: SignInMethod[];
  readonly kept: SignInMethod[];
  readonly windowHours: number;
  /** The audit records of the removals, for the caller's transaction. */
  readonly events: NewEvent[];
}

export type ReviewStores = Pick<IdentityStores, 'totp' | 'passkeys' | 'recoveryCodes'>;

export const RESET_REASON = 'password reset';

/** Removes, in `tx`, the factors of `userId` added after `at` minus `windowHours`; what it removed and what remains. */
export async function reviewFactorsIn(tx: InTransaction<ReviewStores>, userId: string, at: Date, windowHours: number): Promise<FactorReview> {
  const since = new Date(at.getTime() - windowHours * 3_600_000);
  const recent = (d: Date) => windowHours > 0 && d.getTime() > since.getTime();
  const removed: SignInMethod[] = [];
  const kept: SignInMethod[] = [];
  const events: NewEvent[] = [];
  const audit = (factor: string, credential = '', name = '') =>
    events.push(event(SUBJECTS.mfaRemoved, { userId, factor, failures: 0, reason: RESET_REASON, recoveryCodesLeft: 0, credential, name }));

  const totp = await tx.totp.get(userId);
  if (totp?.activatedAt && recent(totp.activatedAt)) {
    await tx.totp.remove(userId);
    removed.push(signInMethod('totp', '', totp.activatedAt));
    audit('totp');
  } else if (totp?.activatedAt) {
    kept.push(signInMethod('totp', '', totp.activatedAt));
  } else if (totp && windowHours > 0) {
    // A secret never activated is no factor; whoever started it must start again.
    await tx.totp.remove(userId);
  }

  for (const p of await tx.passkeys.listOf(userId)) {
    if (recent(p.createdAt)) {
      await tx.passkeys.remove(p.id, userId);
      removed.push(signInMethod('passkey', p.name, p.createdAt));
      audit('webauthn', credentialTag(p.credentialId), p.name);
    } else {
      kept.push(signInMethod('passkey', p.name, p.createdAt));
    }
  }

  const codes = await tx.recoveryCodes.unused(userId);
  if (codes) {
    // Recovery codes back a factor up: made recently, or left with no factor by this review, they go.
    if (recent(codes.madeAt) || (kept.length === 0 && removed.length > 0)) {
      await tx.recoveryCodes.removeAll(userId);
      removed.push(signInMethod('recovery_codes', '', codes.madeAt));
      audit('recovery_codes');
    } else {
      kept.push(signInMethod('recovery_codes', '', codes.madeAt));
    }
  }
  return { removed, kept, windowHours, events };
}
