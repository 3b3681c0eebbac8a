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
  /**
   * `smtp` delivers over SMTP; `mailbox` delivers into the development mailbox (the all-in-one
   * with no SMTP_URL); `log` only records that an action was requested (no token, no link).
   */
  readonly kind: 'smtp' | 'mailbox' | 'log';
  /** Rejects on a failure worth retrying (connection refused, 4xx); the caller retries with backoff. */
  send(mail: OutgoingMail): Promise<void>;
  close(): Promise<void>;
}

/**
 * `sending`: an attempt is handing the mail to the sender (or died doing so); `sent` / `recorded`:
 * done; `retrying`: the last attempt failed and the event will come again; `dead_lettered`: given up.
 */
export type DeliveryStatus = 'sending' | 'sent' | 'retrying' | 'dead_lettered' | 'recorded';

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

/** What a delivery of an event may do, decided on its record. */
export type DeliveryClaim =
  /**
   * Send: the record is now `sending` for this attempt (its number). `resent`: an earlier attempt
   * was found in `sending` for longer than the limit, taken for dead; its mail may have reached the
   * server, so this one may be a duplicate (with the same Message-ID).
   */
  | { readonly outcome: 'send'; readonly attempt: number; readonly resent: boolean }
  /** Already sent (or recorded): nothing to do. */
  | { readonly outcome: 'done' }
  /** Another attempt began less than the limit ago and may still be sending: decide again in `retryInMs`. */
  | { readonly outcome: 'in_flight'; readonly retryInMs: number };

export interface DeliveryStore {
  /**
   * Starts an attempt for an event, atomically (one statement; concurrent attempts get one `send`):
   * a new event, or one whose last attempt failed, is claimed; one in `sending` for at least
   * `staleAfterMs` (by the database's clock) is claimed again; one in `sending` for less is
   * `in_flight`; one sent or recorded is `done`, so a redelivery never sends a second mail unless
   * the attempt before it died in the middle.
   */
  begin(d: { eventId: string; subject: string; kind: string; recipient: string }, staleAfterMs: number): Promise<DeliveryClaim>;
  finish(eventId: string, status: 'sent' | 'recorded'): Promise<void>;
  /** Records a failed attempt, unless a later attempt has taken the record over meanwhile. */
  fail(eventId: string, attempt: number, error: string, final: boolean): Promise<void>;
  get(eventId: string): Promise<Delivery | null>;
  list(q: { page: number; pageSize: number; status?: DeliveryStatus; recipient?: string }): Promise<{ items: Delivery[]; totalCount: number }>;
}

/** A mail kept by the development mailbox. */
export interface MailboxMail extends OutgoingMail {
  /** The mailbox's own id of this copy (a resent mail is a second copy with the same messageId). */
  readonly id: string;
  readonly receivedAt: Date;
}

/**
 * The development mailbox as its readers see it (the all-in-one's gateway, through the
 * composition root): the newest mails first, a bounded number of them, in memory only.
 */
export interface MailboxReader {
  list(): readonly MailboxMail[];
  get(id: string): MailboxMail | undefined;
}
