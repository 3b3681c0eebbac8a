/**
 * Email actions: password reset and email verification. A request creates a single-use token
 * (256-bit, only its SHA-256 kept, one hour, earlier unused ones invalidated) and writes its event
 * to the outbox in the same transaction; the raw token travels only sealed (AES-256-GCM, the event
 * id as AAD) to the notification service. A password-reset request answers the same way, as
 * fast, whether or not the account exists: its work happens after the answer.
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { AppError, type Logger, event, randomToken, seal, sha256 } from '@iam/platform';
import type { Directory, EmailPurpose, IdentityStores, UnitOfWork } from '../domain/ports';
import { emailKey } from './auth';

export interface EmailActionSettings {
  /** AES-256 key shared with the notification service. */
  readonly sealKey: Buffer;
  readonly tokenLifetimeSeconds: number;
  /** Requests per email and purpose per window. */
  readonly perEmailLimit: number;
  readonly perEmailWindowSeconds: number;
}

export interface EmailActionUseCases {
  /** Resolves at once; RATE_LIMITED when this email asked too often (whether or not it has an account). */
  requestPasswordReset(email: string): Promise<void>;
  confirmPasswordReset(token: string, newPassword: string): Promise<void>;
  requestEmailVerification(userId: string): Promise<void>;
  confirmEmailVerification(token: string): Promise<void>;
  /** Invalidates the user's pending tokens: they were mailed to an address the account no longer has. */
  invalidatePending(userId: string): Promise<number>;
  /** Resolves when the background work started so far is done (tests, shutdown). */
  idle(): Promise<void>;
}

const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;
const INVALID_TOKEN = () =>
  AppError.validation('The token is invalid, already used or expired.', [{ field: 'token', message: 'is invalid, already used or expired' }]);

export function createEmailActionUseCases(deps: {
  settings: EmailActionSettings;
  uow: UnitOfWork;
  read: IdentityStores;
  directory: Directory;
  logger: Logger;
  /** Ends every session of a user (after a password reset). */
  endSessions: (userId: string) => Promise<number>;
}): EmailActionUseCases {
  const { settings: s, uow, read, directory, logger } = deps;
  const background = new Set<Promise<void>>();

  async function throttle(email: string, purpose: EmailPurpose): Promise<void> {
    const wait = await read.throttle.hit(emailKey(email), purpose, s.perEmailLimit, s.perEmailWindowSeconds);
    if (wait > 0) throw AppError.rateLimited(wait, 'Too many requests for this address; try again later.');
  }

  async function issue(purpose: EmailPurpose, account: { userId: string; email: string; firstName: string }): Promise<void> {
    const token = randomToken(32);
    const eventId = randomUUID();
    const expiresAt = new Date(Date.now() + s.tokenLifetimeSeconds * 1000);
    const subject = purpose === 'password_reset' ? SUBJECTS.passwordResetRequested : SUBJECTS.emailVerificationRequested;
    await uow.run(async (tx) => {
      await tx.emailActions.issue({ id: randomUUID(), userId: account.userId, purpose, tokenHash: sha256(token), emailHash: emailKey(account.email), expiresAt });
      await tx.publish([
        event(
          subject,
          { userId: account.userId, email: account.email, firstName: account.firstName, sealedToken: seal(s.sealKey, token, eventId).toString('base64url'), expiresAt },
          eventId,
        ),
      ]);
    });
  }

  function inBackground(what: string, work: () => Promise<void>): void {
    const p = work()
      .catch((err: unknown) => logger.error({ err, what }, 'email action failed'))
      .finally(() => background.delete(p));
    background.add(p);
  }

  async function claim(token: string, purpose: EmailPurpose) {
    if (!TOKEN_RE.test(token)) throw INVALID_TOKEN();
    const claimed = await read.emailActions.claim(sha256(token), purpose);
    if (!claimed) throw INVALID_TOKEN();
    return claimed;
  }

  return {
    async requestPasswordReset(email) {
      await throttle(email, 'password_reset');
      inBackground('password reset request', async () => {
        const account = await directory.findAccount(email);
        if (account) await issue('password_reset', account);
      });
    },

    async confirmPasswordReset(token, newPassword) {
      const claimed = await claim(token, 'password_reset');
      try {
        // Only while the account still has the address the token was mailed to.
        await directory.setPassword(claimed.userId, newPassword, claimed.emailHash);
      } catch (err) {
        // A weak password (or a deleted account) leaves the token usable for another try.
        await read.emailActions.release(claimed.id);
        if (err instanceof AppError && err.code === 'NOT_FOUND') throw INVALID_TOKEN();
        throw err;
      }
      await deps.endSessions(claimed.userId);
      await read.lockouts.clear(claimed.emailHash);
      const account = await directory.principal(claimed.userId);
      if (account) {
        await uow.run((tx) =>
          tx.publish([event(SUBJECTS.passwordChanged, { userId: account.userId, email: account.email, firstName: account.firstName })]),
        );
      }
    },

    async requestEmailVerification(userId) {
      const account = await directory.principal(userId);
      if (!account) throw AppError.unauthenticated('The account no longer exists.');
      await throttle(account.email, 'email_verification');
      if (!account.emailVerified) await issue('email_verification', account);
    },

    async confirmEmailVerification(token) {
      const claimed = await claim(token, 'email_verification');
      try {
        await directory.markEmailVerified(claimed.userId, claimed.emailHash);
      } catch (err) {
        await read.emailActions.release(claimed.id);
        if (err instanceof AppError && err.code === 'NOT_FOUND') throw INVALID_TOKEN();
        throw err;
      }
    },

    invalidatePending: (userId) => read.emailActions.invalidateAllOf(userId),

    idle: async () => {
      await Promise.allSettled([...background]);
    },
  };
}
