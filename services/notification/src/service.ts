/**
 * The notification service: durable consumers of identity's mail events and of placed orders
 * (their confirmation), the email sender, the delivery records and their gRPC surface.
 */
import { STREAMS, WEBHOOK_SOURCE_SUBJECTS } from '@iam/contracts';
import { type Logger, type ServiceRuntime, type ServiceSpec, grpcAccessCheck, outboxUnitOfWork } from '@iam/platform';
import { notificationGrpc } from './api/grpc';
import { webhooksGrpc } from './api/webhooks-grpc';
import { createDispatcher } from './app/webhooks/dispatcher';
import { type WebhookStores, endpointUseCases } from './app/webhooks/endpoints';
import { FAN_OUT_BATCH_MAX, createFanOut } from './app/webhooks/fan-out';
import { FACTOR_MAIL_SUBJECTS, INVITATION_MAIL_SUBJECTS, MAIL_SUBJECTS, ORDER_MAIL_SUBJECTS, createDeliver } from './app/deliver';
import type { NotificationConfig } from './config';
import type { EmailSender } from './domain/ports';
import { pgDeliveries } from './infra/deliveries';
import { notificationMetrics } from './infra/metrics';
import { entities, migrations } from './infra/schema';
import { MailboxSender, type MemoryMailbox } from './infra/mailbox';
import { LogOnlySender, SmtpSender } from './infra/senders';
import { pgDispatch } from './infra/webhooks/dispatch-store';
import { pgEndpoints } from './infra/webhooks/endpoints-store';
import { createWebhookHttp } from './infra/webhooks/http';
import { pgMessages } from './infra/webhooks/messages-store';
import { webhookMetrics } from './infra/webhooks/metrics';

/**
 * The durable consumers that queue webhook messages: one per stream the catalog publishes from,
 * reading the whole stream (the fan-out skips what the catalog does not publish). Not a filter of
 * the catalog's subjects: an existing consumer keeps the filter it was created with, so a type
 * added to the catalog later would never reach it.
 */
const WEBHOOK_STREAMS = [STREAMS.directory, STREAMS.identity, STREAMS.commerce].filter((st) => WEBHOOK_SOURCE_SUBJECTS.some((s) => s.startsWith(st.subjects[0].slice(0, -1))));

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
    streams: [STREAMS.directory, STREAMS.identity, STREAMS.commerce, STREAMS.notification, STREAMS.deadLetter],
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
      // Outgoing webhooks (README, "Webhooks"): the fan-out consumers queue, the dispatcher sends.
      const wh = config.webhooks;
      const whMetrics = webhookMetrics(rt.metrics);
      const http = createWebhookHttp({ allowPrivate: wh.allowPrivate, platformHosts: wh.platformHosts, resolve: wh.resolve, timeoutMs: wh.timeoutMs });
      const dispatcher = createDispatcher({
        store: pgDispatch(dataSource),
        http,
        key: wh.key,
        schedule: wh.schedule,
        concurrency: wh.concurrency,
        leaseMs: wh.leaseMs,
        pollMs: wh.pollMs,
        disableAfterMs: wh.disableAfterMs,
        metrics: whMetrics,
        logger,
      });
      dispatcher.start();
      const read: WebhookStores = { endpoints: pgEndpoints(dataSource), messages: pgMessages(dataSource) };
      const endpoints = endpointUseCases({
        uow: outboxUnitOfWork(dataSource, (m) => ({ endpoints: pgEndpoints(m), messages: pgMessages(m) })),
        read,
        key: wh.key,
        guard: { allowPrivate: wh.allowPrivate, platformHosts: wh.platformHosts, resolve: wh.resolve },
        graceMs: wh.graceMs,
        queued: () => dispatcher.nudge(),
      });
      const fanOut = createFanOut({
        write: (events) => read.messages.fanOut(events),
        queued: (n) => {
          whMetrics.queued.inc(n);
          dispatcher.nudge();
        },
      });
      const access = grpcAccessCheck({ target: config.directoryTarget, metrics: rt.metrics, signer: { key: rt.callKey, from: 'notification' }, credentials: rt.grpcClientCredentials });
      const handlerDeps = { logger: rt.logger, metrics: rt.metrics, service: 'notification', callKey: rt.callKey, peerNames: rt.grpcPeerNames };
      if (wh.allowPrivate) logger.warn('WEBHOOK_ALLOW_PRIVATE=true: webhooks may reach private and loopback addresses (development only)');
      return {
        grpc: [...notificationGrpc(deliveries, handlerDeps), webhooksGrpc(endpoints, access, handlerDeps)],
        housekeeping: async () => {
          const before = new Date(Date.now() - wh.retentionDays * 86_400_000);
          while ((await read.messages.purge(before, 5_000)) === 5_000);
        },
        consumers: [
          ...WEBHOOK_STREAMS.map((stream) => ({
            name: `notification-webhooks-${stream.name.toLowerCase()}`,
            stream,
            subjects: stream.subjects,
            handler: fanOut,
            // Nothing may be lost: many deliveries, a long backoff (as the audit trail's consumers).
            maxDeliver: 50,
            backoffMs: [1_000, 5_000, 30_000, 120_000, 600_000],
            concurrency: FAN_OUT_BATCH_MAX,
            maxAckPending: FAN_OUT_BATCH_MAX,
          })),
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
            name: 'notification-invitations',
            stream: STREAMS.directory,
            subjects: INVITATION_MAIL_SUBJECTS,
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
        stop: async () => {
          await dispatcher.stop();
          await http.close();
          access.close();
          await sender.close();
        },
      };
    },
  };
}
