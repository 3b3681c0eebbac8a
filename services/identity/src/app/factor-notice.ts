/**
 * "Every factor added is mailed to the user" (DESIGN §5): the `identity.factor.added` event a
 * factor's addition writes in its own transaction (so no factor is added unmailed, and no mail goes
 * out for one that was not), which the notification service turns into a mail, and the audit
 * trail records. Also what a password reset's notice lists (reset-factor-review.ts).
 */
import { SUBJECTS, type eventsV1 } from '@iam/contracts';
import { AppError, type NewEvent, event } from '@iam/platform';
import type { Principal } from '../domain/model';
import type { Directory } from '../domain/ports';

type SignInMethod = eventsV1.SignInMethod;

export type AddedKind = 'totp' | 'passkey';

export const signInMethod = (kind: string, name: string, addedAt: Date): SignInMethod => ({ kind, name, addedAt });

export function factorAddedEvent(account: Pick<Principal, 'userId' | 'email' | 'firstName'>, kind: AddedKind, name: string, addedAt = new Date()): NewEvent {
  return event(SUBJECTS.factorAdded, { userId: account.userId, email: account.email, firstName: account.firstName, method: signInMethod(kind, name, addedAt) });
}

/** The account a notice goes to, asked of the directory itself (its address now); NOT_FOUND when it is gone. */
export async function noticeAccount(directory: Pick<Directory, 'principal'>, userId: string): Promise<Principal> {
  const p = await directory.principal(userId);
  if (!p) throw AppError.notFound('No such user.');
  return p;
}
