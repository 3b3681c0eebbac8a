import { type EnvReader } from '@iam/platform';

export interface AuditConfig {
  readonly databaseUrl: string;
  readonly grpcPort: number;
  readonly retention: { readonly days: number; readonly batch: number; readonly intervalMs: number };
  /** Where the directory answers (DIRECTORY_GRPC_TARGET): readers are authorized there. */
  readonly directoryTarget: string;
  readonly checkpoints: {
    /** Ed25519 private key (32-byte seed) signing the chain's head; never in the audit database. */
    readonly signingKey: Buffer;
    /** Sign after this many appended entries. */
    readonly every: number;
    /** Sign this often when the head moved (ms). */
    readonly intervalMs: number;
  };
}

export interface AuditDefaults {
  /** The gRPC port when <SERVICE>_GRPC_PORT is unset (the all-in-one derives it from PORT). */
  readonly grpcPort?: number;
  /** The embedded database (all-in-one mode). */
  readonly databaseUrl?: string;
  /** A key kept in the data directory (all-in-one mode); standalone processes must be given one. */
  readonly checkpointSigningKey?: () => Buffer;
}

export function readAuditConfig(e: EnvReader, defaults: AuditDefaults = {}): AuditConfig {
  return {
    databaseUrl: e.url('AUDIT_DATABASE_URL', ['postgres', 'postgresql'], { default: defaults.databaseUrl }),
    grpcPort: e.port('AUDIT_GRPC_PORT', { default: defaults.grpcPort ?? 50055, allowZero: true }),
    retention: {
      days: e.int('AUDIT_RETENTION_DAYS', { default: 365, min: 1, max: 36_500 }),
      batch: e.int('AUDIT_RETENTION_BATCH', { default: 5_000, min: 1, max: 100_000 }),
      intervalMs: e.int('AUDIT_RETENTION_INTERVAL_MS', { default: 3_600_000, min: 1_000, max: 86_400_000 }),
    },
    directoryTarget: e.string('DIRECTORY_GRPC_TARGET', { default: '127.0.0.1:50052' }),
    checkpoints: {
      signingKey: e.key('AUDIT_CHECKPOINT_SIGNING_KEY', { fallback: defaults.checkpointSigningKey, required: true }) ?? Buffer.alloc(32),
      every: e.int('AUDIT_CHECKPOINT_EVERY', { default: 1_000, min: 1, max: 1_000_000 }),
      intervalMs: e.int('AUDIT_CHECKPOINT_INTERVAL_MS', { default: 60_000, min: 100, max: 86_400_000 }),
    },
  };
}
