/**
 * The notification service: durable consumers of identity's mail events and of placed orders
 * (their confirmation), the email sender, the delivery records and their gRPC surface.
 */
import { STREAMS } from '@iam/contracts';
import type { Logger, ServiceRuntime, ServiceSpec } from '@iam/platform';
import { notificationGrpc } from './api/grpc';
import { FACTOR_MAIL_SUBJECTS, MAIL_SUBJECTS, ORDER_MAIL_SUBJECTS, createDeliver } from './app/deliver';
import type { NotificationConfig } from './config';
import type { EmailSender } from './domain/ports';
import { pgDeliveries } from './infra/deliveries';
import { notificationMetrics } from './infra/metrics';
import { entities, migrations } from './infra/schema';
import { MailboxSender, type MemoryMailbox } from './infra/mailbox';
import { LogOnlySender, SmtpSender } from './infra/senders';

export interface NotificationOptions {
  /**
   * The development mailbox to deliver into when there is no SMTP_URL (the all-in-one only: its
   * composition root makes it and hands it to its gateway; a service's own process never has one).
   */
  readonly mailbox?: MemoryMailbox;
}

/** SMTP when configured; else the development mailbox when given one; else the log-only sender. */
function chooseSender(config: NotificationConfig, opts: NotificationOptions, logger: Logger): EmailSender {
  if (config.smtp) {
    logger.info({ sender: 'smtp' }, 'mail goes out over SMTP');
    return new SmtpSender(config.smtp.url, config.from, { maxConnections: config.concurrency });
  }
  if (opts.mailbox && config.actionBaseUrl) {
    logger.info({ sender: 'mailbox', capacity: opts.mailbox.capacity, actionBaseUrl: config.actionBaseUrl }, 'no SMTP_URL: mail is kept in the development mailbox (the console shows it)');
    return new MailboxSender(opts.mailbox);
  }
  logger.info({ sender: 'log' }, 'no SMTP_URL and EMAIL_ACTION_BASE_URL: email actions are recorded, not sent');
  return new LogOnlySender(logger);
}

export function notificationService(config: NotificationConfig, rt: ServiceRuntime, opts: NotificationOptions = {}): ServiceSpec {
  return {
    name: 'notification',
    databaseUrl: config.databaseUrl,
    grpcPort: config.grpcPort,
    entities,
    migrations,
    streams: [STREAMS.identity, STREAMS.commerce, STREAMS.deadLetter],
    build: ({ dataSource, logger }) => {
      const sender = chooseSender(config, opts, logger);
      const deliveries = pgDeliveries(dataSource);
      const deliver = createDeliver({
        deliveries,
        sender,
        sealKey: config.sealKey,
        actionBaseUrl: config.smtp?.actionBaseUrl ?? config.actionBaseUrl,
        maxAttempts: config.maxAttempts,
        sendingStaleMs: config.sendingStaleMs,
        metrics: notificationMetrics(rt.metrics),
        logger,
      });
      return {
        grpc: notificationGrpc(deliveries, { logger: rt.logger, metrics: rt.metrics, service: 'notification', callKey: rt.callKey, peerNames: rt.grpcPeerNames }),
        consumers: [
          {
            name: 'notification-mail',
            stream: STREAMS.identity,
            subjects: MAIL_SUBJECTS,
            handler: deliver,
            maxDeliver: config.maxAttempts,
            backoffMs: [1_000, 5_000, 30_000, 120_000, 600_000],
            concurrency: config.concurrency,
          },
          {
            name: 'notification-factor-mail',
            stream: STREAMS.identity,
            subjects: FACTOR_MAIL_SUBJECTS,
            handler: deliver,
            maxDeliver: config.maxAttempts,
            backoffMs: [1_000, 5_000, 30_000, 120_000, 600_000],
            concurrency: config.concurrency,
          },
          {
            name: 'notification-orders',
            stream: STREAMS.commerce,
            subjects: ORDER_MAIL_SUBJECTS,
            handler: deliver,
            maxDeliver: config.maxAttempts,
            backoffMs: [1_000, 5_000, 30_000, 120_000, 600_000],
            concurrency: config.concurrency,
          },
        ],
        stop: () => sender.close(),
      };
    },
  };
}
