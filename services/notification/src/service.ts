/**
 * The notification service: durable consumers of identity's mail events and of placed orders
 * (their confirmation), the email sender, the delivery records and their gRPC surface.
 */
import { STREAMS } from '@iam/contracts';
import type { ServiceRuntime, ServiceSpec } from '@iam/platform';
import { notificationGrpc } from './api/grpc';
import { MAIL_SUBJECTS, ORDER_MAIL_SUBJECTS, createDeliver } from './app/deliver';
import type { NotificationConfig } from './config';
import type { EmailSender } from './domain/ports';
import { pgDeliveries } from './infra/deliveries';
import { notificationMetrics } from './infra/metrics';
import { entities, migrations } from './infra/schema';
import { LogOnlySender, SmtpSender } from './infra/senders';

export function notificationService(config: NotificationConfig, rt: ServiceRuntime): ServiceSpec {
  return {
    name: 'notification',
    databaseUrl: config.databaseUrl,
    grpcPort: config.grpcPort,
    entities,
    migrations,
    streams: [STREAMS.identity, STREAMS.commerce, STREAMS.deadLetter],
    build: ({ dataSource, logger }) => {
      const sender: EmailSender = config.smtp ? new SmtpSender(config.smtp.url, config.from, { maxConnections: config.concurrency }) : new LogOnlySender(logger);
      logger.info({ sender: sender.kind }, config.smtp ? 'mail goes out over SMTP' : 'no SMTP_URL and EMAIL_ACTION_BASE_URL: email actions are recorded, not sent');
      const deliveries = pgDeliveries(dataSource);
      const deliver = createDeliver({
        deliveries,
        sender,
        sealKey: config.sealKey,
        actionBaseUrl: config.smtp?.actionBaseUrl,
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
