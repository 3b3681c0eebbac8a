import type { Metrics } from '@iam/platform';
import { Counter, Histogram } from 'prom-client';

export interface NotificationMetrics {
  readonly sent: Counter<'kind' | 'sender'>;
  readonly failed: Counter<'kind'>;
  readonly retried: Counter<'kind'>;
  readonly deadLettered: Counter<'kind'>;
  /** Redeliveries put off because another attempt may still be sending the mail. */
  readonly deferred: Counter<'kind'>;
  /** Mails sent again after an attempt died in 'sending' (possible duplicates, same Message-ID). */
  readonly resent: Counter<'kind'>;
  /** From the event's occurrence (the request) to the mail accepted by the SMTP server. */
  readonly latency: Histogram<'kind'>;
}

export function notificationMetrics(m: Metrics): NotificationMetrics {
  const registers = [m.registry];
  const get = <T>(name: string, make: () => T): T => (m.registry.getSingleMetric(name) as T | undefined) ?? make();
  return {
    sent: get('notification_mails_sent_total', () => new Counter({ name: 'notification_mails_sent_total', help: 'Mails handed to the sender (smtp) or recorded (log).', labelNames: ['kind', 'sender'], registers })),
    failed: get('notification_mails_failed_total', () => new Counter({ name: 'notification_mails_failed_total', help: 'Failed send attempts.', labelNames: ['kind'], registers })),
    retried: get('notification_mails_retried_total', () => new Counter({ name: 'notification_mails_retried_total', help: 'Failed attempts that will be retried.', labelNames: ['kind'], registers })),
    deadLettered: get(
      'notification_mails_dead_lettered_total',
      () => new Counter({ name: 'notification_mails_dead_lettered_total', help: 'Mails given up on (sent to the dead-letter subject).', labelNames: ['kind'], registers }),
    ),
    deferred: get(
      'notification_mails_deferred_total',
      () => new Counter({ name: 'notification_mails_deferred_total', help: 'Redeliveries put off: another attempt may still be sending the mail.', labelNames: ['kind'], registers }),
    ),
    resent: get(
      'notification_mails_resent_total',
      () =>
        new Counter({
          name: 'notification_mails_resent_total',
          help: "Mails sent again after an attempt died in 'sending': possible duplicates, with the same Message-ID.",
          labelNames: ['kind'],
          registers,
        }),
    ),
    latency: get(
      'notification_mail_delivery_seconds',
      () =>
        new Histogram({
          name: 'notification_mail_delivery_seconds',
          help: 'From the request to the mail accepted by the mail server.',
          labelNames: ['kind'],
          buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
          registers,
        }),
    ),
  };
}
