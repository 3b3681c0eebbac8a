/**
 * Directory events identity reacts to: a deleted user's sessions end, and so do the sessions of
 * a user whose password changed.
 */
import { STREAMS, SUBJECTS, decodeEvent } from '@iam/contracts';
import { type DurableConsumerSpec, type Logger, PermanentEventError } from '@iam/platform';
import type { AuthUseCases } from '../app/auth';

export function identityConsumers(auth: AuthUseCases, logger: Logger): DurableConsumerSpec[] {
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
        const ends = e.subject === SUBJECTS.userDeleted || payload.changedFields.includes('password');
        if (!ends) return;
        const n = await auth.endSessions(payload.userId);
        if (n > 0) logger.info({ userId: payload.userId, revoked: n, reason: e.subject }, 'sessions ended');
      },
    },
  ];
}
