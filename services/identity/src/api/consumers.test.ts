/**
 * Identity's reaction to the directory's user events: a password changed ends the user's sessions,
 * except a new password chosen as a step of a sign-in (passwordChangedAtSignIn): that would end
 * the very sign-in the change completes (issue #39).
 */
import { SUBJECTS, encodeEvent } from '@iam/contracts';
import { testLogger } from '@iam/platform/testing';
import { randomUUID } from 'node:crypto';
import type { AuthUseCases } from '../app/auth';
import type { EmailActionUseCases } from '../app/email-actions';
import { identityConsumers } from './consumers';

describe('identity consumers: user events', () => {
  const ended: string[] = [];
  const auth: Pick<AuthUseCases, 'endSessions'> = { endSessions: async (userId) => (ended.push(userId), 1) };
  const emailActions: Pick<EmailActionUseCases, 'invalidatePending' | 'completePasswordReset'> = { invalidatePending: async () => 0, completePasswordReset: async () => false };
  const spec = identityConsumers({ auth, emailActions, endOidcSubject: async () => 0 }, testLogger()).find((c) => c.name === 'identity-user-sessions')!;
  const updated = (userId: string, extra: { passwordChangedAtSignIn?: boolean; changedFields?: string[] } = {}) => ({
    id: randomUUID(),
    subject: SUBJECTS.userUpdated,
    occurredAt: new Date(),
    deliveryCount: 1,
    data: encodeEvent(SUBJECTS.userUpdated, {
      userId,
      email: 'a@example.com',
      firstName: 'A',
      lastName: 'B',
      roles: [],
      changedFields: extra.changedFields ?? ['password'],
      emailVerified: true,
      before: undefined,
      ...(extra.passwordChangedAtSignIn ? { passwordChangedAtSignIn: true } : {}),
    }),
  });

  it('a password change ends the sessions; one made at sign-in ends none; one with an email change still does', async () => {
    const [changed, atSignIn, withEmail] = [randomUUID(), randomUUID(), randomUUID()];
    await spec.handler(updated(changed));
    await spec.handler(updated(atSignIn, { passwordChangedAtSignIn: true }));
    await spec.handler(updated(withEmail, { passwordChangedAtSignIn: true, changedFields: ['password', 'email'] }));
    expect(ended).toEqual([changed, withEmail]);
  });
});
