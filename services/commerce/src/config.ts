import type { EnvReader } from '@iam/platform';

export interface CommerceConfig {
  readonly databaseUrl: string;
  readonly grpcPort: number;
  /** Seed the demo catalog at start when the catalog is empty (make run turns it on). */
  readonly seedDemo: boolean;
  /** How long a checkout's idempotency key is kept (CHECKOUT_IDEMPOTENCY_HOURS, default 24). */
  readonly idempotencyHours: number;
  /** Where the directory answers (DIRECTORY_GRPC_TARGET): catalog writes are authorized there. */
  readonly directoryTarget: string;
}

/** `defaults` are the all-in-one mode's (its embedded database, the demo catalog); standalone has none. */
export function readCommerceConfig(e: EnvReader, defaults: { databaseUrl?: string; seedDemo?: boolean; grpcPort?: number } = {}): CommerceConfig {
  return {
    databaseUrl: e.url('COMMERCE_DATABASE_URL', ['postgres', 'postgresql'], { default: defaults.databaseUrl }),
    grpcPort: e.port('COMMERCE_GRPC_PORT', { default: defaults.grpcPort ?? 50054, allowZero: true }),
    seedDemo: e.bool('COMMERCE_SEED_DEMO', { default: defaults.seedDemo ?? false }),
    idempotencyHours: e.int('CHECKOUT_IDEMPOTENCY_HOURS', { default: 24, min: 1 }),
    directoryTarget: e.string('DIRECTORY_GRPC_TARGET', { default: '127.0.0.1:50052' }),
  };
}
