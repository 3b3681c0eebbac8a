import type { EnvReader } from '@iam/platform';

export interface NotificationConfig {
  readonly databaseUrl: string;
  readonly grpcPort: number;
}

export function readNotificationConfig(e: EnvReader, defaults: { databaseUrl?: string } = {}): NotificationConfig {
  return {
    databaseUrl: e.url('NOTIFICATION_DATABASE_URL', ['postgres', 'postgresql'], { default: defaults.databaseUrl }),
    grpcPort: e.port('NOTIFICATION_GRPC_PORT', { default: 50053, allowZero: true }),
  };
}
