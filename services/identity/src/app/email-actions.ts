/**
 * Email actions: password reset and email verification. A request is first recorded (its own row,
 * the address sealed) and only then answered 202, so an accepted request survives a crash; the
 * recording costs the same whether or not an account exists. The request worker then resolves the
 * account and, in one transaction, completes the request, creates the single-use token (256-bit,
 * only its SHA-256 kept, one hour, earlier unused ones invalidated) and writes its event to the
 * outbox (event id = request id); the raw token travels only sealed (AES-256-GCM, the event id as
 * AAD) to the notification service.
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { AppError, type InTransaction, type Logger, type Metrics, event, isTransientFailure, open, randomToken, resumeOrigin, seal, sha256 } from '@iam/platform';
import type { Principal } from '../domain/model';
import type { Directory, EmailActionRequest, EmailPurpose, IdentityStores, UnitOfWork } from '../domain/ports';
import { type SessionStores, emailKey } from './auth';
import { type ReviewStores, reviewFactorsIn } from './reset-factor-review';

export interface EmailActionSettings {
  /** AES-256 key shared with the notification service. */
  readonly sealKey: Buffer;
  readonly tokenLifetimeSeconds: number;
  /** Requests per email and purpose per window. */
  readonly perEmailLimit: number;
  readonly perEmailWindowSeconds: number;
  /**
   * AUTH_RESET_REMOVES_FACTORS_HOURS: a completed reset removes the second factors and passkeys
   * added this many hours before it (reset-factor-review.ts); 0 keeps all.
   */
  readonly resetRemovesFactorsHours: number;
}

export interface EmailActionUseCases {
  /**
   * Records the request (the same work whether or not the address has an account) and resolves;
   * RATE_LIMITED when this email asked too often (whether or not it has an account).
   */
  requestPasswordReset(email: string): Promise<void>;
  /**
   * Sets the new password through the directory (the commit point: hash, token recorded as used
   * and the event, in one directory transaction), then completes identity's part at once.
   * VALIDATION for an unknown, used or expired token or a weak password (nothing changed then).
   */
  confirmPasswordReset(token: string, newPassword: string): Promise<void>;
  /**
   * Identity's part of a reset the directory applied, from its answer or from its
   * `directory.user.updated` event (whichever comes first; the other finds it done): in one
   * transaction the token is consumed, every session ended (one `identity.subject.revoked`), the
   * lockout cleared, the factors added shortly before removed (reset-factor-review.ts) and
   * `identity.password.changed` written (with what was removed and what remains). True when this
   * call did it.
   */
  completePasswordReset(r: { resetId: string; userId: string; email: string; firstName: string; at: Date }): Promise<boolean>;
  /** Records the request; UNAUTHENTICATED when the account is gone, RATE_LIMITED as above. */
  requestEmailVerification(userId: string): Promise<void>;
  confirmEmailVerification(token: string): Promise<void>;
  /**
   * Invalidates the user's pending tokens: they were mailed to an address the account no longer
   * has. Those mailed to `currentEmail` (the new address) stay.
   */
  invalidatePending(userId: string, currentEmail?: string): Promise<number>;
  /**
   * Processes up to `limit` due requests in one transaction: each is completed together with the
   * token and event it issues (none for an unknown account), kept for a later try when the
   * directory cannot answer now, or dead-lettered at once when its failure is permanent (a
   * refusal: it would fail every time). Returns how many were claimed.
   */
  processRequests(limit: number): Promise<number>;
}

const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;
const INVALID_TOKEN = () =>
  AppError.validation('The token is invalid, already used or expired.', [{ field: 'token', message: 'is invalid, already used or expired' }]);

/** The stores the email actions use. */
type EmailActionStores = Pick<IdentityStores, 'emailActions' | 'emailRequests' | 'throttle'>;

export function createEmailActionUseCases(deps: {
  settings: EmailActionSettings;
  /** Transactions (with the outbox); a completed reset also ends sessions and clears the lockout in one. */
  uow: UnitOfWork<EmailActionStores & SessionStores & ReviewStores & Pick<IdentityStores, 'lockouts'>>;
  /** Single statements outside any transaction, each committed on its own (a request recorded, a token claimed). */
  stores: EmailActionStores;
  directory: Directory;
  logger: Logger;
  /** Ends every session of a user, in the caller's transaction (see AuthUseCases.endSessionsIn). */
  endSessionsIn: (tx: InTransaction<SessionStores>, userId: string, at: Date) => Promise<number>;
  /** Called after a request was recorded (wakes the request worker). */
  accepted?: () => void;
  /** Counts requests dead-lettered (work_dead_lettered_total). */
  metrics?: Pick<Metrics, 'workDeadLettered'>;
}): EmailActionUseCases {
  const { settings: s, uow, stores, directory, logger } = deps;

  async function throttle(email: string, purpose: EmailPurpose): Promise<void> {
    const wait = await stores.throttle.hit(emailKey(email), purpose, s.perEmailLimit, s.perEmailWindowSeconds);
    if (wait > 0) throw AppError.rateLimited(wait, 'Too many requests for this address; try again later.');
  }

  /** The token and its event, in the caller's transaction; the event id is the request's id. */
  async function issue(tx: InTransaction<Pick<IdentityStores, 'emailActions'>>, purpose: EmailPurpose, account: Principal, eventId: string): Promise<void> {
    const token = randomToken(32);
    const expiresAt = new Date(Date.now() + s.tokenLifetimeSeconds * 1000);
    const subject = purpose === 'password_reset' ? SUBJECTS.passwordResetRequested : SUBJECTS.emailVerificationRequested;
    await tx.emailActions.issue({ id: randomUUID(), userId: account.userId, purpose, tokenHash: sha256(token), emailHash: emailKey(account.email), expiresAt });
    await tx.publish([
      event(
        subject,
        { userId: account.userId, email: account.email, firstName: account.firstName, sealedToken: seal(s.sealKey, token, eventId).toString('base64url'), expiresAt },
        eventId,
      ),
    ]);
  }

  /** The account a request is for, null when there is none (or no longer one to mail); throws when the directory cannot tell. */
  async function accountOf(r: EmailActionRequest): Promise<Principal | null> {
    if (r.purpose === 'password_reset') {
      let email: string;
      try {
        email = open(s.sealKey, r.sealedEmail ?? Buffer.alloc(0), r.id).toString();
      } catch {
        logger.warn({ requestId: r.id }, 'email-action request cannot be opened (another EMAIL_ACTION_KEY?); dropped');
        return null;
      }
      return directory.findAccount(email);
    }
    const account = await directory.principal(r.userId ?? '');
    // Verified meanwhile, or the address changed since the request: nothing to send.
    return account && !account.emailVerified && emailKey(account.email).equals(r.emailHash) ? account : null;
  }

  const retryDelayMs = (attempts: number) => Math.min(60_000, 1_000 * 2 ** Math.min(attempts, 6));

  async function completePasswordReset(r: { resetId: string; userId: string; email: string; firstName: string; at: Date }): Promise<boolean> {
    return uow.run(async (tx) => {
      const token = await tx.emailActions.consume(r.resetId, r.userId);
      if (token.outcome === 'consumed') {
        await deps.endSessionsIn(tx, r.userId, r.at);
        await tx.lockouts.clear(token.emailHash);
        const review = await reviewFactorsIn(tx, r.userId, r.at, s.resetRemovesFactorsHours);
        await tx.publish([
          ...review.events,
          event(SUBJECTS.passwordChanged, { userId: r.userId, email: r.email, firstName: r.firstName, removed: review.removed, kept: review.kept, reviewWindowHours: review.windowHours }),
        ]);
        return true;
      }
      if (token.outcome === 'missing') {
        // Purged long ago: whether the rest was done is unknown; ending the sessions is the safe side.
        logger.warn({ userId: r.userId }, 'password reset completed for a token no longer on record');
        await deps.endSessionsIn(tx, r.userId, r.at);
        return true;
      }
      return false;
    });
  }

  async function claim(token: string, purpose: EmailPurpose) {
    if (!TOKEN_RE.test(token)) throw INVALID_TOKEN();
    const claimed = await stores.emailActions.claim(sha256(token), purpose);
    if (!claimed) throw INVALID_TOKEN();
    return claimed;
  }

  return {
    async requestPasswordReset(email) {
      await throttle(email, 'password_reset');
      const id = randomUUID();
      await stores.emailRequests.enqueue({ id, purpose: 'password_reset', emailHash: emailKey(email), sealedEmail: seal(s.sealKey, email, id) });
      deps.accepted?.();
    },

    async confirmPasswordReset(token, newPassword) {
      if (!TOKEN_RE.test(token)) throw INVALID_TOKEN();
      const pending = await stores.emailActions.pending(sha256(token), 'password_reset');
      if (!pending) throw INVALID_TOKEN();
      let changed;
      try {
        // The commit point: the directory sets the hash, records this token as used and
        // publishes the event identity completes from, in one transaction (only while the
        // account still has the address the token was mailed to).
        changed = await directory.resetPassword({ userId: pending.userId, password: newPassword, emailHash: pending.emailHash, resetId: pending.id, attemptId: randomUUID() });
      } catch (err) {
        // A weak password changed nothing: the token stays usable.
        if (err instanceof AppError && err.code === 'NOT_FOUND') throw INVALID_TOKEN();
        throw err;
      }
      try {
        await completePasswordReset({ resetId: pending.id, userId: pending.userId, email: changed.email, firstName: changed.firstName, at: changed.changedAt });
      } catch (err) {
        // The reset is committed; the directory's event completes identity's part when it can.
        logger.warn({ err: (err as Error).message, userId: pending.userId }, 'password reset applied; its sessions end when the directory event is processed');
      }
    },

    async requestEmailVerification(userId) {
      const account = await directory.principal(userId);
      if (!account) throw AppError.unauthenticated('The account no longer exists.');
      await throttle(account.email, 'email_verification');
      if (account.emailVerified) return;
      await stores.emailRequests.enqueue({ id: randomUUID(), purpose: 'email_verification', emailHash: emailKey(account.email), userId: account.userId });
      deps.accepted?.();
    },

    async confirmEmailVerification(token) {
      const claimed = await claim(token, 'email_verification');
      try {
        await directory.markEmailVerified(claimed.userId, claimed.emailHash);
      } catch (err) {
        await stores.emailActions.release(claimed.id);
        if (err instanceof AppError && err.code === 'NOT_FOUND') throw INVALID_TOKEN();
        throw err;
      }
    },

    completePasswordReset,

    invalidatePending: (userId, currentEmail) => stores.emailActions.invalidateAllOf(userId, currentEmail === undefined ? undefined : emailKey(currentEmail)),

    processRequests: (limit) =>
      uow.run(async (tx) => {
        const due = await tx.emailRequests.claimDue(limit);
        const accounts = await Promise.allSettled(due.map(accountOf));
        for (const [i, r] of due.entries()) {
          const found = accounts[i]!;
          if (found.status === 'fulfilled') {
            const account = found.value;
            // Issued in the request's trace and context: its event names the client, as if answered then.
            if (account) await resumeOrigin(r.origin, () => issue(tx, r.purpose, account, r.id));
            await tx.emailRequests.complete(r.id);
          } else if (!isTransientFailure(found.reason)) {
            // It would fail the same way every time: kept on the dead-letter stream for an
            // operator (no address, no token), not retried for an hour.
            const error = found.reason instanceof Error ? found.reason.message : String(found.reason);
            logger.error({ requestId: r.id, purpose: r.purpose, err: error }, 'email-action request dead-lettered: its failure is permanent');
            await tx.publish([event(SUBJECTS.emailActionRequestDeadLettered, { requestId: r.id, purpose: r.purpose, attempts: r.attempts + 1, error: error.slice(0, 500) }, r.id)]);
            await tx.emailRequests.complete(r.id);
            deps.metrics?.workDeadLettered.inc({ work: 'email_action_request' });
          } else if (Date.now() - r.createdAt.getTime() > s.tokenLifetimeSeconds * 1000) {
            // A token issued now would outlive what the requester waited for: give up, loudly.
            logger.error({ requestId: r.id, attempts: r.attempts }, 'email-action request dropped: the directory did not answer within the token lifetime');
            await tx.emailRequests.complete(r.id);
          } else {
            const reason = found.reason instanceof Error ? found.reason.message : String(found.reason);
            await tx.emailRequests.retryLater(r.id, retryDelayMs(r.attempts), reason);
          }
        }
        return due.length;
      }),
  };
}
