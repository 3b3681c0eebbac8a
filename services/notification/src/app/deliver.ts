/**
 * Turns an identity event into one mail, exactly once per event id: the delivery record is
 * checked and counted first (a redelivered event that was already sent is acknowledged without a
 * second mail), the mail is sent, then the record is closed. Failures are rethrown so the bus
 * retries with backoff; the last try marks the record dead-lettered.
 */
import { SUBJECTS, decodeEvent } from '@iam/contracts';
import { type IncomingEvent, type Logger, PermanentEventError, open } from '@iam/platform';
import { type MailKind, composeMail } from '../domain/mails';
import type { DeliveryStore, EmailSender } from '../domain/ports';
import type { NotificationMetrics } from '../infra/metrics';

const KINDS: Record<string, MailKind> = {
  [SUBJECTS.passwordResetRequested]: 'password_reset',
  [SUBJECTS.emailVerificationRequested]: 'email_verification',
  [SUBJECTS.passwordChanged]: 'password_changed',
};

export const MAIL_SUBJECTS = Object.keys(KINDS);

export interface DeliverDeps {
  readonly deliveries: DeliveryStore;
  readonly sender: EmailSender;
  readonly sealKey: Buffer;
  readonly actionBaseUrl?: string;
  readonly maxAttempts: number;
  readonly metrics: NotificationMetrics;
  readonly logger: Logger;
}

function decode(e: IncomingEvent, sealKey: Buffer, needToken: boolean): { kind: MailKind; to: string; firstName: string; token?: string } {
  const kind = KINDS[e.subject];
  if (!kind) throw new PermanentEventError(`no mail for ${e.subject}`);
  try {
    if (kind === 'password_changed') {
      const p = decodeEvent(SUBJECTS.passwordChanged, e.data);
      return { kind, to: p.email, firstName: p.firstName };
    }
    const p = decodeEvent(SUBJECTS.passwordResetRequested, e.data);
    const token = needToken ? open(sealKey, Buffer.from(p.sealedToken, 'base64url'), e.id).toString('utf8') : undefined;
    return { kind, to: p.email, firstName: p.firstName, token };
  } catch (err) {
    throw new PermanentEventError('the event cannot be decoded or its token cannot be opened', { cause: err });
  }
}

export function createDeliver(deps: DeliverDeps): (e: IncomingEvent) => Promise<void> {
  const needToken = deps.sender.kind === 'smtp';
  return async (e) => {
    let mail;
    try {
      mail = decode(e, deps.sealKey, needToken);
    } catch (err) {
      deps.metrics.deadLettered.inc({ kind: KINDS[e.subject] ?? 'unknown' });
      throw err;
    }
    if (!(await deps.deliveries.begin({ eventId: e.id, subject: e.subject, kind: mail.kind, recipient: mail.to.toLowerCase() }))) {
      deps.logger.info({ eventId: e.id }, 'mail already delivered; redelivery acknowledged');
      return;
    }
    try {
      await deps.sender.send(composeMail(mail.kind, { to: mail.to, firstName: mail.firstName, eventId: e.id, actionBaseUrl: deps.actionBaseUrl, token: mail.token }));
    } catch (err) {
      const final = e.deliveryCount >= deps.maxAttempts;
      await deps.deliveries.fail(e.id, err instanceof Error ? err.message : String(err), final);
      (final ? deps.metrics.deadLettered : deps.metrics.retried).inc({ kind: mail.kind });
      deps.metrics.failed.inc({ kind: mail.kind });
      throw err;
    }
    await deps.deliveries.finish(e.id, deps.sender.kind === 'smtp' ? 'sent' : 'recorded');
    deps.metrics.sent.inc({ kind: mail.kind, sender: deps.sender.kind });
    deps.metrics.latency.observe({ kind: mail.kind }, (Date.now() - e.occurredAt.getTime()) / 1000);
  };
}
