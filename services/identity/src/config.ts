import type { EnvReader } from '@iam/platform';

export interface IdentityConfig {
  readonly databaseUrl: string;
  readonly grpcPort: number;
  /** host:port of the directory service. */
  readonly directoryTarget: string;
}

export function readIdentityConfig(e: EnvReader, defaults: { databaseUrl?: string } = {}): IdentityConfig {
  return {
    databaseUrl: e.url('IDENTITY_DATABASE_URL', ['postgres', 'postgresql'], { default: defaults.databaseUrl }),
    grpcPort: e.port('IDENTITY_GRPC_PORT', { default: 50051, allowZero: true }),
    directoryTarget: e.string('DIRECTORY_GRPC_TARGET', { default: '127.0.0.1:50052' }),
  };
}
