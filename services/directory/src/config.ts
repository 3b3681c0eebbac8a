import { availableParallelism } from 'node:os';
import type { EnvReader } from '@iam/platform';

/**
 * Hashes at once by default: one per core (more only adds latency: with two per core logins/s
 * stayed 0.51 of raw argon2id at the same concurrency, bench/README.md), at most libuv's thread
 * pool, where they run.
 */
export function defaultHashConcurrency(): number {
  const pool = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  return Math.max(1, Math.min(pool, availableParallelism()));
}

export interface DirectoryConfig {
  readonly databaseUrl: string;
  readonly grpcPort: number;
  /** argon2id parameters for new hashes (OWASP: m = 19 MiB, t = 2, p = 1). */
  readonly argon2: { readonly memoryKiB: number; readonly iterations: number; readonly parallelism: number };
  /** Hashing/verification jobs run at once (ARGON2_CONCURRENCY). */
  readonly hashConcurrency: number;
  /** Hashing/verification jobs allowed to wait; beyond it the caller gets RATE_LIMITED at once. */
  readonly hashQueueLimit: number;
  /**
   * EMAIL_ACTION_KEY (shared with identity and notification only): seals an organization
   * invitation's token in its event, for notification to mail it. Absent: invitations are made but
   * no mail can carry their token.
   */
  readonly invitationSealKey?: Buffer;
  /** Days an organization invitation stays valid (ORG_INVITATION_DAYS, default 7). */
  readonly invitationDays: number;
  /**
   * The legacy system's endpoint that checks the password of a user imported with
   * `passwordMigration: "hook"` at its first sign-in (PASSWORD_MIGRATION_HOOK_URL, https; http
   * only on loopback), and the shared secret sent with it (PASSWORD_MIGRATION_HOOK_SECRET, at
   * least 32 characters). Absent: such users cannot sign in until they reset their password.
   */
  readonly migrationHook?: { readonly url: string; readonly secret: string };
  /** Where identity answers (IDENTITY_GRPC_TARGET): the bulk import enrols imported TOTP factors there. */
  readonly identityTarget: string;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

function readMigrationHook(e: EnvReader): DirectoryConfig['migrationHook'] {
  const url = e.optionalUrl('PASSWORD_MIGRATION_HOOK_URL', ['https', 'http']);
  const secret = e.optionalString('PASSWORD_MIGRATION_HOOK_SECRET');
  if (url === undefined) {
    if (secret !== undefined) e.problem('PASSWORD_MIGRATION_HOOK_URL', 'is required when PASSWORD_MIGRATION_HOOK_SECRET is set');
    return undefined;
  }
  const u = new URL(url);
  if (u.protocol === 'http:' && !LOOPBACK.has(u.hostname)) e.problem('PASSWORD_MIGRATION_HOOK_URL', 'must use https (http only on loopback)');
  if (secret === undefined || secret.length < 32) e.problem('PASSWORD_MIGRATION_HOOK_SECRET', 'is required with PASSWORD_MIGRATION_HOOK_URL, at least 32 characters');
  return { url, secret: secret ?? '' };
}

/** `defaults.databaseUrl` is the embedded database of the all-in-one mode; standalone has none. */
export function readDirectoryConfig(e: EnvReader, defaults: { databaseUrl?: string; grpcPort?: number; emailActionKey?: () => Buffer } = {}): DirectoryConfig {
  return {
    databaseUrl: e.url('DIRECTORY_DATABASE_URL', ['postgres', 'postgresql'], { default: defaults.databaseUrl }),
    grpcPort: e.port('DIRECTORY_GRPC_PORT', { default: defaults.grpcPort ?? 50052, allowZero: true }),
    argon2: {
      memoryKiB: e.int('ARGON2_MEMORY_KIB', { default: 19_456, min: 8_192, max: 1_048_576 }),
      iterations: e.int('ARGON2_ITERATIONS', { default: 2, min: 1, max: 20 }),
      parallelism: e.int('ARGON2_PARALLELISM', { default: 1, min: 1, max: 16 }),
    },
    hashConcurrency: e.int('ARGON2_CONCURRENCY', { default: defaultHashConcurrency(), min: 1, max: 64 }),
    hashQueueLimit: e.int('ARGON2_QUEUE_LIMIT', { default: 64, min: 1, max: 10_000 }),
    invitationSealKey: e.key('EMAIL_ACTION_KEY', { fallback: defaults.emailActionKey, required: false }),
    invitationDays: e.int('ORG_INVITATION_DAYS', { default: 7, min: 1, max: 90 }),
    migrationHook: readMigrationHook(e),
    identityTarget: e.string('IDENTITY_GRPC_TARGET', { default: '127.0.0.1:50051' }),
  };
}
