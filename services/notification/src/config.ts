import { type EnvReader } from '@iam/platform';

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
}

export interface NotificationDefaults {
  /** The gRPC port when <SERVICE>_GRPC_PORT is unset (the all-in-one derives it from PORT). */
  readonly grpcPort?: number;
  readonly databaseUrl?: string;
  readonly emailActionKey?: () => Buffer;
  /** EMAIL_ACTION_BASE_URL when unset (the all-in-one: the gateway's own origin and hosted pages). */
  readonly actionBaseUrl?: string;
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
  };
}
