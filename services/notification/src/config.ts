import { type EnvReader } from '@iam/platform';
import { STANDARD_SCHEDULE_S, parseSchedule } from './domain/delivery-policy';
import type { Resolver } from './infra/webhooks/guard';
import { deriveWebhookKey } from './infra/webhooks/secrets';

export interface NotificationConfig {
  readonly databaseUrl: string;
  readonly grpcPort: number;
  /**
   * Set only when SMTP_URL is and there is an action base URL (EMAIL_ACTION_BASE_URL, or the
   * process's default): mail goes out over SMTP.
   */
  readonly smtp?: { readonly url: string; readonly actionBaseUrl: string };
  /**
   * Where the links of email actions point (`{actionBaseUrl}/reset-password?token=…`):
   * EMAIL_ACTION_BASE_URL, else the process's default (the all-in-one: its gateway's origin,
   * whose hosted pages answer them); absent for a service on its own without the variable.
   */
  readonly actionBaseUrl?: string;
  readonly from: string;
  /** AES-256 key shared with identity: opens the sealed email-action tokens. */
  readonly sealKey: Buffer;
  /** Mails sent at once. */
  readonly concurrency: number;
  /** Deliveries of one event before it is dead-lettered. */
  readonly maxAttempts: number;
  /**
   * How long an attempt may stay in 'sending' before a redelivery takes it for dead and sends the
   * mail again (ms); above the SMTP sender's timeouts, so a live attempt is never doubled.
   */
  readonly sendingStaleMs: number;
  /** Where the directory answers (DIRECTORY_GRPC_TARGET): webhook managers are authorized there. */
  readonly directoryTarget: string;
  readonly webhooks: WebhookConfig;
}

/** Outgoing webhooks (README, "Webhooks"). */
export interface WebhookConfig {
  /** Seals endpoint secrets: HKDF of WEBHOOK_SECRET_KEY (infra/webhooks/secrets.ts). */
  readonly key: Buffer;
  /** WEBHOOK_RETRY_SCHEDULE: delays (s) before attempts 1..n. */
  readonly schedule: readonly number[];
  /** WEBHOOK_ALLOW_PRIVATE: private and loopback targets allowed (development only: unsafe). */
  readonly allowPrivate: boolean;
  /** The platform's own host names, never a target (WEBHOOK_DENY_HOSTS and PUBLIC_URL's host). */
  readonly platformHosts: readonly string[];
  /** One attempt's limit (ms): WEBHOOK_TIMEOUT_SECONDS. */
  readonly timeoutMs: number;
  /** Endpoints worked at once by one replica: WEBHOOK_CONCURRENCY. */
  readonly concurrency: number;
  /** How long a rotated-out secret still signs (ms): WEBHOOK_SECRET_GRACE_HOURS. */
  readonly graceMs: number;
  /** An endpoint failing this long is disabled (ms): WEBHOOK_DISABLE_AFTER_HOURS. */
  readonly disableAfterMs: number;
  /** Delivered and dead messages are kept this long (days): WEBHOOK_RETENTION_DAYS. */
  readonly retentionDays: number;
  /** A lane's lease (ms): a dispatcher that died gives its endpoints up after it. */
  readonly leaseMs: number;
  /** How often the dispatcher looks for due messages when nothing woke it (ms). */
  readonly pollMs: number;
  /** The resolver of the SSRF guard (tests: a stub; default the system's). */
  readonly resolve?: Resolver;
}

export interface NotificationDefaults {
  /** The gRPC port when <SERVICE>_GRPC_PORT is unset (the all-in-one derives it from PORT). */
  readonly grpcPort?: number;
  readonly databaseUrl?: string;
  readonly emailActionKey?: () => Buffer;
  /** EMAIL_ACTION_BASE_URL when unset (the all-in-one: the gateway's own origin and hosted pages). */
  readonly actionBaseUrl?: string;
  /** WEBHOOK_SECRET_KEY when unset (the all-in-one: a key kept in its data directory). */
  readonly webhookKey?: () => Buffer;
}

function readWebhookConfig(e: EnvReader, defaults: NotificationDefaults): WebhookConfig {
  const setting = e.key('WEBHOOK_SECRET_KEY', { fallback: defaults.webhookKey, required: true });
  const scheduleText = e.optionalString('WEBHOOK_RETRY_SCHEDULE');
  let schedule: readonly number[] = STANDARD_SCHEDULE_S;
  if (scheduleText !== undefined) {
    const parsed = parseSchedule(scheduleText);
    if (typeof parsed === 'string') e.problem('WEBHOOK_RETRY_SCHEDULE', parsed);
    else schedule = parsed;
  }
  const publicUrl = e.optionalUrl('PUBLIC_URL', ['http', 'https']);
  const deny = (e.optionalString('WEBHOOK_DENY_HOSTS') ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  const timeoutS = e.int('WEBHOOK_TIMEOUT_SECONDS', { default: 15, min: 1, max: 60 });
  return {
    key: deriveWebhookKey(setting ?? Buffer.alloc(32)),
    schedule,
    allowPrivate: e.bool('WEBHOOK_ALLOW_PRIVATE', { default: false }),
    platformHosts: [...deny, ...(publicUrl ? [new URL(publicUrl).hostname.replace(/^\[|\]$/g, '').toLowerCase()] : [])],
    timeoutMs: timeoutS * 1000,
    concurrency: e.int('WEBHOOK_CONCURRENCY', { default: 16, min: 1, max: 256 }),
    graceMs: e.int('WEBHOOK_SECRET_GRACE_HOURS', { default: 24, min: 0, max: 24 * 30 }) * 3_600_000,
    disableAfterMs: e.int('WEBHOOK_DISABLE_AFTER_HOURS', { default: 120, min: 1, max: 24 * 365 }) * 3_600_000,
    retentionDays: e.int('WEBHOOK_RETENTION_DAYS', { default: 30, min: 1, max: 3_650 }),
    leaseMs: Math.max(15_000, 4 * timeoutS * 1000),
    pollMs: 1_000,
  };
}

export function readNotificationConfig(e: EnvReader, defaults: NotificationDefaults = {}): NotificationConfig {
  const smtpUrl = e.optionalUrl('SMTP_URL', ['smtp', 'smtps']);
  const actionBaseUrl = (e.optionalUrl('EMAIL_ACTION_BASE_URL', ['http', 'https']) ?? defaults.actionBaseUrl)?.replace(/\/+$/, '');
  // Needed only to open tokens for delivery: required when mail goes out over SMTP.
  const key = e.key('EMAIL_ACTION_KEY', { fallback: defaults.emailActionKey, required: Boolean(smtpUrl && actionBaseUrl) });
  return {
    databaseUrl: e.url('NOTIFICATION_DATABASE_URL', ['postgres', 'postgresql'], { default: defaults.databaseUrl }),
    grpcPort: e.port('NOTIFICATION_GRPC_PORT', { default: defaults.grpcPort ?? 50053, allowZero: true }),
    smtp: smtpUrl && actionBaseUrl ? { url: smtpUrl, actionBaseUrl } : undefined,
    actionBaseUrl,
    from: e.string('EMAIL_FROM', { default: 'IAM <no-reply@iam.local>' }),
    sealKey: key ?? Buffer.alloc(32),
    concurrency: e.int('NOTIFICATION_CONCURRENCY', { default: 8, min: 1, max: 256 }),
    maxAttempts: e.int('NOTIFICATION_MAX_ATTEMPTS', { default: 5, min: 1, max: 100 }),
    sendingStaleMs: e.int('NOTIFICATION_SENDING_STALE_MS', { default: 60_000, min: 1_000, max: 3_600_000 }),
    directoryTarget: e.string('DIRECTORY_GRPC_TARGET', { default: '127.0.0.1:50052' }),
    webhooks: readWebhookConfig(e, defaults),
  };
}
