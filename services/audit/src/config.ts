import { type EnvReader } from '@iam/platform';

export interface AuditConfig {
  readonly databaseUrl: string;
  readonly grpcPort: number;
  readonly retention: { readonly days: number; readonly batch: number; readonly intervalMs: number };
  /** Where the directory answers (DIRECTORY_GRPC_TARGET): readers are authorized there. */
  readonly directoryTarget: string;
}

export function readAuditConfig(e: EnvReader, defaults: { databaseUrl?: string } = {}): AuditConfig {
  return {
    databaseUrl: e.url('AUDIT_DATABASE_URL', ['postgres', 'postgresql'], { default: defaults.databaseUrl }),
    grpcPort: e.port('AUDIT_GRPC_PORT', { default: 50055, allowZero: true }),
    retention: {
      days: e.int('AUDIT_RETENTION_DAYS', { default: 365, min: 1, max: 36_500 }),
      batch: e.int('AUDIT_RETENTION_BATCH', { default: 5_000, min: 1, max: 100_000 }),
      intervalMs: e.int('AUDIT_RETENTION_INTERVAL_MS', { default: 3_600_000, min: 1_000, max: 86_400_000 }),
    },
    directoryTarget: e.string('DIRECTORY_GRPC_TARGET', { default: '127.0.0.1:50052' }),
  };
}
