/**
 * Directory events identity reacts to. A deleted user, or one whose password or email changed,
 * loses every session and every access token issued before the change (subject revocation); a
 * changed email also invalidates pending email-action tokens (they were mailed to the old address).
 */
import { STREAMS, SUBJECTS, decodeEvent } from '@iam/contracts';
import { type DurableConsumerSpec, type Logger, PermanentEventError } from '@iam/platform';
import type { AuthUseCases } from '../app/auth';
import type { EmailActionUseCases } from '../app/email-actions';

export function identityConsumers(deps: { auth: AuthUseCases; emailActions: EmailActionUseCases }, logger: Logger): DurableConsumerSpec[] {
  return [
    {
      name: 'identity-user-sessions',
      stream: STREAMS.directory,
      subjects: [SUBJECTS.userDeleted, SUBJECTS.userUpdated],
      handler: async (e) => {
        let payload;
        try {
          payload = decodeEvent(e.subject as typeof SUBJECTS.userDeleted, e.data);
        } catch (err) {
          throw new PermanentEventError('undecodable user event', { cause: err });
        }
        const changed = new Set(payload.changedFields);
        if (changed.has('email')) {
          const n = await deps.emailActions.invalidatePending(payload.userId);
          if (n > 0) logger.info({ userId: payload.userId, invalidated: n }, 'pending email actions invalidated (email changed)');
        }
        const ends = e.subject === SUBJECTS.userDeleted || changed.has('password') || changed.has('email');
        if (!ends) return;
        if (payload.passwordResetId && !changed.has('email')) {
          // A password reset: its token, sessions and notice go together, once (maybe done already
          // by the confirm call itself).
          const done = await deps.emailActions.completePasswordReset({ resetId: payload.passwordResetId, userId: payload.userId, email: payload.email, firstName: payload.firstName, at: e.occurredAt });
          if (done) logger.info({ userId: payload.userId }, 'password reset completed from the directory event');
          return;
        }
        // The change's own time: tokens issued before it are refused, later ones are not.
        const n = await deps.auth.endSessions(payload.userId, e.occurredAt);
        logger.info({ userId: payload.userId, revoked: n, reason: e.subject }, 'sessions ended');
      },
    },
  ];
}
