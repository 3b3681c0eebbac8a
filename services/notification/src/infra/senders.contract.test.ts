/**
 * The EmailSender contract, one suite for the adapters that deliver: SMTP against a real SMTP
 * server in this process, and the development mailbox. A mail sent is received whole (recipient,
 * subject, plain-text and HTML parts with the action link, Message-ID), mails arrive one per send
 * (a resend is a second copy with the same Message-ID), and close() is safe. The mailbox's own
 * rules follow (bounded, newest first, lookup by id).
 */
import { type SmtpSink, startSmtpSink } from '@iam/platform/testing';
import { randomUUID } from 'node:crypto';
import type { EmailSender, OutgoingMail } from '../domain/ports';
import { MAILBOX_CAPACITY, MailboxSender, MemoryMailbox } from './mailbox';
import { SmtpSender } from './senders';

/** What a receiver of the mails can read back, whatever the adapter. */
interface Received {
  readonly to: string;
  readonly subject: string;
  readonly messageId: string;
  /** The plain-text and HTML parts, as the receiver got them. */
  readonly body: string;
}

interface SenderWorld {
  readonly sender: EmailSender;
  /** The mails received so far for `to`, oldest first, waiting up to a few seconds for `count`. */
  received(to: string, count: number): Promise<Received[]>;
  close(): Promise<void>;
}

function describeSenderContract(name: string, make: () => Promise<SenderWorld>): void {
  describe(`EmailSender contract: ${name}`, () => {
    let world: SenderWorld;
    beforeAll(async () => {
      world = await make();
    });
    afterAll(async () => world?.close());

    const mail = (to: string, over: Partial<OutgoingMail> = {}): OutgoingMail => ({
      to,
      subject: 'Reset your password',
      text: 'Hello Ada,\n\nChoose a new password: http://app.test/reset-password?token=tok_123',
      html: '<p>Hello Ada,</p><p><a href="http://app.test/reset-password?token=tok_123">Choose a new password</a></p>',
      messageId: `<${randomUUID()}@iam.notification>`,
      ...over,
    });

    it('delivers a mail whole: recipient, subject, both parts with the link, Message-ID', async () => {
      const to = `ada-${randomUUID()}@example.com`;
      const m = mail(to);
      await world.sender.send(m);
      const [got] = await world.received(to, 1);
      expect(got).toMatchObject({ to, subject: m.subject, messageId: m.messageId });
      expect(got!.body).toContain('Hello Ada,');
      expect(got!.body).toContain('http://app.test/reset-password?token=tok_123');
      expect(got!.body).toContain('<a href="http://app.test/reset-password?token=tok_123">');
    });

    it('delivers one copy per send: a resend is a second copy with the same Message-ID', async () => {
      const to = `bob-${randomUUID()}@example.com`;
      const m = mail(to, { subject: 'Confirm your email address' });
      await world.sender.send(m);
      await world.sender.send(m);
      const got = await world.received(to, 2);
      expect(got.map((r) => r.messageId)).toEqual([m.messageId, m.messageId]);
    });

    it('keeps mails of different recipients apart and in order', async () => {
      const a = `a-${randomUUID()}@example.com`;
      const b = `b-${randomUUID()}@example.com`;
      await world.sender.send(mail(a, { subject: 'first' }));
      await world.sender.send(mail(b, { subject: 'other' }));
      await world.sender.send(mail(a, { subject: 'second' }));
      expect((await world.received(a, 2)).map((r) => r.subject)).toEqual(['first', 'second']);
      expect((await world.received(b, 1)).map((r) => r.subject)).toEqual(['other']);
    });

    it('says it delivers (so the token and link are composed) and closes', async () => {
      expect(world.sender.kind).not.toBe('log');
      await expect(world.sender.close()).resolves.toBeUndefined();
    });
  });
}

const waitUntil = async <T>(read: () => T[], count: number): Promise<T[]> => {
  const deadline = Date.now() + 5_000;
  while (read().length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return read();
};

describeSenderContract('SMTP (a real SMTP server in process)', async () => {
  const sink: SmtpSink = await startSmtpSink();
  const sender = new SmtpSender(`smtp://127.0.0.1:${sink.port}`, 'IAM <no-reply@iam.test>');
  return {
    sender,
    received: (to, count) =>
      waitUntil(
        () =>
          sink.mails
            .filter((m) => m.to.includes(to))
            .map((m) => ({ to: m.to[0]!, subject: m.subject ?? '', messageId: m.messageId ?? '', body: m.text })),
        count,
      ),
    close: async () => {
      await sender.close();
      await sink.close();
    },
  };
});

describeSenderContract('the development mailbox', async () => {
  const box = new MemoryMailbox();
  return {
    sender: new MailboxSender(box),
    received: (to, count) =>
      waitUntil(
        () =>
          box
            .list()
            .filter((m) => m.to === to)
            .reverse()
            .map((m) => ({ to: m.to, subject: m.subject, messageId: m.messageId, body: `${m.text}\n${m.html}` })),
        count,
      ),
    close: async () => undefined,
  };
});

describe('the development mailbox', () => {
  const mail = (i: number): OutgoingMail => ({ to: `u${i}@example.com`, subject: `mail ${i}`, text: 't', html: '<p>h</p>', messageId: `<${i}@iam.notification>` });

  it(`keeps the newest ${MAILBOX_CAPACITY} mails by default, newest first, each found by its id`, () => {
    const box = new MemoryMailbox();
    const stored = Array.from({ length: MAILBOX_CAPACITY + 5 }, (_, i) => box.put(mail(i)));
    const list = box.list();
    expect(list).toHaveLength(MAILBOX_CAPACITY);
    expect(list[0]!.subject).toBe(`mail ${MAILBOX_CAPACITY + 4}`);
    expect(list.at(-1)!.subject).toBe('mail 5');
    expect(box.get(stored[0]!.id)).toBeUndefined();
    expect(box.get(stored.at(-1)!.id)).toBe(stored.at(-1));
    expect(box.get('not-an-id')).toBeUndefined();
  });

  it('stamps each copy with its own id and time, and hands out frozen copies', () => {
    const at = new Date('2026-11-26T12:00:00Z');
    const box = new MemoryMailbox(2, () => at);
    const a = box.put(mail(1));
    const b = box.put(mail(1));
    expect(a.id).not.toBe(b.id);
    expect(a.receivedAt).toBe(at);
    expect(Object.isFrozen(a)).toBe(true);
    box.put(mail(2));
    expect(box.list().map((m) => m.id)).toEqual([box.list()[0]!.id, b.id]);
    expect(box.get(a.id)).toBeUndefined();
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new MemoryMailbox(0)).toThrow(RangeError);
    expect(() => new MemoryMailbox(1.5)).toThrow(RangeError);
  });
});
