/**
 * Turns an identity event (email actions, a password changed, a sign-in method added) or a placed
 * order (its confirmation) into one mail per
 * event id (a placed order's event id is the order id), delivered AT LEAST ONCE: the record is
 * set to 'sending' before the SMTP transaction and to 'sent' after it. A redelivered event whose
 * record says 'sent' is acknowledged without a mail. One found in 'sending' is decided by age:
 * younger than `sendingStaleMs` (above the SMTP timeouts), the other attempt may still be running,
 * so the event comes back when that age is reached (RetryLaterError) without sending; older, that
 * attempt died (a crash after the server accepted the mail, or before) and the mail is sent again.
 * So a mail is repeated only when a process died between the server's acceptance and recording
 * 'sent'; a repeat has the same Message-ID (`<event id@iam.notification>`), which receivers can
 * deduplicate on. Failures are rethrown so the bus retries with backoff; the last try marks the
 * record dead-lettered.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { SUBJECTS, decodeEvent } from '@iam/contracts';
import { type IncomingEvent, type Logger, PermanentEventError, RetryLaterError, open } from '@iam/platform';
import { type MailKind, composeFactorAdded, composeMail, composeOrderConfirmation, composePasswordChanged } from '../domain/mails';
import { composeInvitation } from '../domain/invitation-mail';
import type { DeliveryStore, EmailSender, OutgoingMail } from '../domain/ports';
import type { NotificationMetrics } from '../infra/metrics';

const KINDS: Record<string, MailKind> = {
  [SUBJECTS.passwordResetRequested]: 'password_reset',
  [SUBJECTS.emailVerificationRequested]: 'email_verification',
  [SUBJECTS.passwordChanged]: 'password_changed',
  [SUBJECTS.factorAdded]: 'factor_added',
  [SUBJECTS.orderPlaced]: 'order_confirmation',
  [SUBJECTS.organizationInvitationSent]: 'organization_invitation',
};

/** identity's mail events: consumer `notification-mail` on the IDENTITY stream. */
export const MAIL_SUBJECTS: readonly string[] = [SUBJECTS.passwordResetRequested, SUBJECTS.emailVerificationRequested, SUBJECTS.passwordChanged];
/**
 * Sign-in methods added: consumer `notification-factor-mail` on the IDENTITY stream (a consumer of
 * its own: an existing durable consumer keeps the filter it was created with).
 */
export const FACTOR_MAIL_SUBJECTS: readonly string[] = [SUBJECTS.factorAdded];
/** Orders to confirm: consumer `notification-orders` on the COMMERCE stream. */
export const ORDER_MAIL_SUBJECTS: readonly string[] = [SUBJECTS.orderPlaced];
/** Organization invitations (the directory's, sealed under the same key): consumer `notification-invitations` on the DIRECTORY stream. */
export const INVITATION_MAIL_SUBJECTS: readonly string[] = [SUBJECTS.organizationInvitationSent];

export interface DeliverDeps {
  readonly deliveries: DeliveryStore;
  readonly sender: EmailSender;
  readonly sealKey: Buffer;
  readonly actionBaseUrl?: string;
  readonly maxAttempts: number;
  /** How long an attempt may stay in 'sending' before a redelivery takes it for dead (ms). */
  readonly sendingStaleMs: number;
  readonly metrics: NotificationMetrics;
  readonly logger: Logger;
}

interface Decoded {
  readonly kind: MailKind;
  readonly to: string;
  readonly compose: (eventId: string) => OutgoingMail;
}

/** The mail an event asks for; null when there is nobody to write to (an order placed without an email). */
function decode(e: IncomingEvent, sealKey: Buffer, needToken: boolean, actionBaseUrl: string | undefined): Decoded | null {
  const kind = KINDS[e.subject];
  if (!kind) throw new PermanentEventError(`no mail for ${e.subject}`);
  try {
    if (kind === 'order_confirmation') {
      const p = decodeEvent(SUBJECTS.orderPlaced, e.data);
      if (!p.customerEmail) return null;
      return { kind, to: p.customerEmail, compose: (eventId) => composeOrderConfirmation({ to: p.customerEmail, eventId, order: p }) };
    }
    if (kind === 'password_changed') {
      const p = decodeEvent(SUBJECTS.passwordChanged, e.data);
      return {
        kind,
        to: p.email,
        compose: (eventId) => composePasswordChanged({ to: p.email, firstName: p.firstName, eventId, actionBaseUrl, removed: p.removed, kept: p.kept, reviewWindowHours: p.reviewWindowHours }),
      };
    }
    if (kind === 'factor_added') {
      const p = decodeEvent(SUBJECTS.factorAdded, e.data);
      if (!p.method) throw new Error('no method');
      const method = p.method;
      return { kind, to: p.email, compose: (eventId) => composeFactorAdded({ to: p.email, firstName: p.firstName, eventId, actionBaseUrl, method }) };
    }
    if (kind === 'organization_invitation') {
      const p = decodeEvent(SUBJECTS.organizationInvitationSent, e.data);
      const token = needToken ? open(sealKey, Buffer.from(p.sealedToken, 'base64url'), e.id).toString('utf8') : undefined;
      return { kind, to: p.email, compose: (eventId) => composeInvitation({ to: p.email, organizationName: p.organizationName, eventId, actionBaseUrl, token, expiresAt: p.expiresAt }) };
    }
    const p = decodeEvent(SUBJECTS.passwordResetRequested, e.data);
    const token = needToken ? open(sealKey, Buffer.from(p.sealedToken, 'base64url'), e.id).toString('utf8') : undefined;
    return { kind, to: p.email, compose: (eventId) => composeMail(kind, { to: p.email, firstName: p.firstName, eventId, actionBaseUrl, token }) };
  } catch (err) {
    throw new PermanentEventError('the event cannot be decoded or its token cannot be opened', { cause: err });
  }
}

export function createDeliver(deps: DeliverDeps): (e: IncomingEvent) => Promise<void> {
  // Only a sender that delivers the mail (SMTP, the development mailbox) gets the token and link.
  const delivers = deps.sender.kind !== 'log';
  const needToken = delivers;
  return async (e) => {
    let mail;
    try {
      mail = decode(e, deps.sealKey, needToken, deps.actionBaseUrl);
    } catch (err) {
      deps.metrics.deadLettered.inc({ kind: KINDS[e.subject] ?? 'unknown' });
      throw err;
    }
    if (!mail) {
      deps.logger.info({ eventId: e.id, subject: e.subject }, 'no recipient address in the event: nothing to send');
      return;
    }
    const record = { eventId: e.id, subject: e.subject, kind: mail.kind, recipient: mail.to.toLowerCase() };
    let claim = await deps.deliveries.begin(record, deps.sendingStaleMs);
    if (claim.outcome === 'in_flight' && e.deliveryCount >= deps.maxAttempts) {
      // No redelivery follows the last one: wait here until the other attempt ends or goes stale.
      await sleep(claim.retryInMs);
      claim = await deps.deliveries.begin(record, deps.sendingStaleMs);
    }
    if (claim.outcome === 'done') {
      deps.logger.info({ eventId: e.id }, 'mail already delivered; redelivery acknowledged');
      return;
    }
    if (claim.outcome === 'in_flight') {
      deps.metrics.deferred.inc({ kind: mail.kind });
      throw new RetryLaterError('another attempt at this mail is sending it', claim.retryInMs);
    }
    if (claim.resent) {
      deps.metrics.resent.inc({ kind: mail.kind });
      deps.logger.warn({ eventId: e.id, attempt: claim.attempt }, "an earlier attempt died in 'sending': sending again, possibly a duplicate with the same Message-ID");
    }
    try {
      await deps.sender.send(mail.compose(e.id));
    } catch (err) {
      const final = e.deliveryCount >= deps.maxAttempts;
      await deps.deliveries.fail(e.id, claim.attempt, err instanceof Error ? err.message : String(err), final);
      (final ? deps.metrics.deadLettered : deps.metrics.retried).inc({ kind: mail.kind });
      deps.metrics.failed.inc({ kind: mail.kind });
      throw err;
    }
    await deps.deliveries.finish(e.id, delivers ? 'sent' : 'recorded');
    deps.metrics.sent.inc({ kind: mail.kind, sender: deps.sender.kind });
    deps.metrics.latency.observe({ kind: mail.kind }, (Date.now() - e.occurredAt.getTime()) / 1000);
  };
}
