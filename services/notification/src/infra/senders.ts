/**
 * The two EmailSender implementations: SMTP (nodemailer, pooled connections), used when
 * SMTP_URL and EMAIL_ACTION_BASE_URL are set; otherwise one that only records that an action was
 * requested and logs neither the token nor the link.
 */
import type { Logger } from '@iam/platform';
import nodemailer, { type Transporter } from 'nodemailer';
import type { EmailSender, OutgoingMail } from '../domain/ports';

export class SmtpSender implements EmailSender {
  readonly kind = 'smtp' as const;
  private readonly transport: Transporter;

  constructor(url: string, private readonly from: string, opts: { maxConnections?: number } = {}) {
    const u = new URL(url);
    this.transport = nodemailer.createTransport({
      host: u.hostname,
      port: Number(u.port || (u.protocol === 'smtps:' ? 465 : 25)),
      secure: u.protocol === 'smtps:',
      auth: u.username ? { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } : undefined,
      pool: true,
      maxConnections: opts.maxConnections ?? 5,
      // NOTIFICATION_SENDING_STALE_MS (60 s) stays above these: an attempt still 'sending' after it
      // is taken for dead, never for one that is still talking to the server.
      connectionTimeout: 5_000,
      greetingTimeout: 5_000,
      socketTimeout: 15_000,
      // Plain SMTP may upgrade with STARTTLS when the server offers it; local relays often have no certificate.
      tls: { rejectUnauthorized: u.searchParams.get('tls_reject_unauthorized') !== 'false' },
      ignoreTLS: u.searchParams.get('starttls') === 'false',
    });
  }

  async send(mail: OutgoingMail): Promise<void> {
    await this.transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html, messageId: mail.messageId });
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}

export class LogOnlySender implements EmailSender {
  readonly kind = 'log' as const;

  constructor(private readonly logger: Logger) {}

  async send(mail: OutgoingMail): Promise<void> {
    // Only that an action was requested: no recipient address, no token, no link.
    this.logger.info({ subject: mail.subject, messageId: mail.messageId }, 'email action requested (no sender configured: nothing sent)');
  }

  async close(): Promise<void> {}
}
