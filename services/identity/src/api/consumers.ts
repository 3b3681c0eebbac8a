/**
 * Directory events identity reacts to. A deleted user, or one whose password or email changed,
 * loses every session and every access token issued before the change (subject revocation); a
 * changed email also invalidates pending email-action tokens (they were mailed to the old address).
 * Identity's own subject revocations end the user's OpenID provider records too.
 */
import { STREAMS, SUBJECTS, decodeEvent } from '@iam/contracts';
import { type DurableConsumerSpec, type Logger, PermanentEventError } from '@iam/platform';
import type { AuthUseCases } from '../app/auth';
import type { EmailActionUseCases } from '../app/email-actions';

export function identityConsumers(
  deps: {
    auth: Pick<AuthUseCases, 'endSessions'>;
    emailActions: Pick<EmailActionUseCases, 'invalidatePending' | 'completePasswordReset'>;
    /** Ends a user's OpenID provider sessions, grants and tokens. */
    endOidcSubject: (userId: string) => Promise<number>;
  },
  logger: Logger,
): DurableConsumerSpec[] {
  return [
    {
      // Every subject revocation (deleted user, password reset or change, email change, sign out
      // everywhere) also ends the user's sessions, grants and tokens at the OpenID provider.
      name: 'identity-oidc-subjects',
      stream: STREAMS.identity,
      subjects: [SUBJECTS.subjectRevoked],
      handler: async (e) => {
        let payload;
        try {
          payload = decodeEvent(SUBJECTS.subjectRevoked, e.data);
        } catch (err) {
          throw new PermanentEventError('undecodable subject revocation', { cause: err });
        }
        const n = await deps.endOidcSubject(payload.userId);
        if (n > 0) logger.info({ userId: payload.userId, removed: n }, 'OpenID provider sessions and grants ended');
      },
    },
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
          const n = await deps.emailActions.invalidatePending(payload.userId, payload.email);
          if (n > 0) logger.info({ userId: payload.userId, invalidated: n }, 'pending email actions invalidated (email changed)');
        }
        // A new password chosen as a step of a sign-in (the account had to: passwordChangeRequired)
        // ends nothing: the account could not sign in before it, and the sign-in it completes goes on.
        // `active`: a SCIM client disabled (or enabled) the account; its sessions end either way.
        const atSignIn = e.subject === SUBJECTS.userUpdated && payload.passwordChangedAtSignIn === true && !changed.has('email');
        const ends = !atSignIn && (e.subject === SUBJECTS.userDeleted || changed.has('password') || changed.has('email') || changed.has('active'));
        if (!ends) return;
        if (payload.passwordResetId && !changed.has('email')) {
          // A password reset: its token, sessions and notice go together, once (maybe done already
          // by the confirm call itself).
          const done = await deps.emailActions.completePasswordReset({ resetId: payload.passwordResetId, userId: payload.userId, email: payload.email, firstName: payload.firstName, at: e.occurredAt });
          if (done) logger.info({ userId: payload.userId }, 'password reset completed from the directory event');
          return;
        }
        // The change's own time: tokens issued before it are refused, later ones are not. A
        // SCIM (de)provisioning (`active`) refuses the change's whole next second too: a token
        // minted after an earlier revocation of the same second gets that second's iat, which a
        // revocation at the change's own time could not reach; a disabled account is issued
        // nothing after it anyway.
        const at = changed.has('active') ? new Date(e.occurredAt.getTime() + 1_000) : e.occurredAt;
        const n = await deps.auth.endSessions(payload.userId, at);
        logger.info({ userId: payload.userId, revoked: n, reason: e.subject }, 'sessions ended');
      },
    },
  ];
}
