/**
 * The development mailbox: outgoing mail kept in this process's memory instead of being sent,
 * for the all-in-one (`make run`) with no SMTP_URL, so every mail flow can be tried locally and
 * read in the console. Only the all-in-one's composition root makes one (deploy/all-in-one/src);
 * no configuration variable of a service's own process can, so a production deployment never
 * holds mail with live tokens in memory. Bounded: the oldest mail goes when a new one would pass
 * the capacity.
 */
import { randomUUID } from 'node:crypto';
import type { EmailSender, MailboxMail, MailboxReader, OutgoingMail } from '../domain/ports';

export const MAILBOX_CAPACITY = 200;

export class MemoryMailbox implements MailboxReader {
  /** Oldest first; `list()` reverses. */
  private readonly mails: MailboxMail[] = [];
  private readonly byId = new Map<string, MailboxMail>();

  constructor(
    readonly capacity = MAILBOX_CAPACITY,
    private readonly now: () => Date = () => new Date(),
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('the mailbox capacity must be a positive integer');
  }

  put(mail: OutgoingMail): MailboxMail {
    const stored: MailboxMail = Object.freeze({ ...mail, id: randomUUID(), receivedAt: this.now() });
    this.mails.push(stored);
    this.byId.set(stored.id, stored);
    while (this.mails.length > this.capacity) this.byId.delete(this.mails.shift()!.id);
    return stored;
  }

  list(): readonly MailboxMail[] {
    return [...this.mails].reverse();
  }

  get(id: string): MailboxMail | undefined {
    return this.byId.get(id);
  }
}

/** The EmailSender that delivers into a MemoryMailbox (never fails: nothing to retry). */
export class MailboxSender implements EmailSender {
  readonly kind = 'mailbox' as const;

  constructor(private readonly box: MemoryMailbox) {}

  async send(mail: OutgoingMail): Promise<void> {
    this.box.put(mail);
  }

  async close(): Promise<void> {}
}
