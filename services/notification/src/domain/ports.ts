/** Ports of the notification service. */

export interface OutgoingMail {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  /** Stable per event, so a mail system can recognise a redelivery. */
  readonly messageId: string;
}

/** The spec's IEmailSender: delivers a composed mail, or records that it was requested. */
export interface EmailSender {
  /** `smtp` delivers; `log` only records that an action was requested (no token, no link). */
  readonly kind: 'smtp' | 'log';
  /** Rejects on a failure worth retrying (connection refused, 4xx); the caller retries with backoff. */
  send(mail: OutgoingMail): Promise<void>;
  close(): Promise<void>;
}

export type DeliveryStatus = 'pending' | 'sent' | 'retrying' | 'dead_lettered' | 'recorded';

export interface Delivery {
  readonly eventId: string;
  readonly subject: string;
  readonly kind: string;
  readonly recipient: string;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly lastError: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface DeliveryStore {
  /**
   * Starts an attempt for an event: counts it and returns true, or false when the event was
   * already delivered (or recorded) — a redelivered event never sends a second mail.
   */
  begin(d: { eventId: string; subject: string; kind: string; recipient: string }): Promise<boolean>;
  finish(eventId: string, status: 'sent' | 'recorded'): Promise<void>;
  fail(eventId: string, error: string, final: boolean): Promise<void>;
  get(eventId: string): Promise<Delivery | null>;
  list(q: { page: number; pageSize: number; status?: DeliveryStatus; recipient?: string }): Promise<{ items: Delivery[]; totalCount: number }>;
}
