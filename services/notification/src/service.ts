/**
 * The notification service: composition of its consumers, senders and gRPC handlers.
 */
import { STREAMS, notificationV1 } from '@iam/contracts';
import { bindService, type ServiceRuntime, type ServiceSpec } from '@iam/platform';
import type { NotificationConfig } from './config';
import { entities, migrations } from './infra/schema';

export function notificationService(config: NotificationConfig, rt: ServiceRuntime): ServiceSpec {
  return {
    name: 'notification',
    databaseUrl: config.databaseUrl,
    grpcPort: config.grpcPort,
    entities,
    migrations,
    streams: [STREAMS.identity, STREAMS.deadLetter],
    build: () => {
      const deps = { logger: rt.logger, metrics: rt.metrics, service: 'notification' };
      return { grpc: [bindService(notificationV1.NotificationServiceService, {}, deps)] };
    },
  };
}
