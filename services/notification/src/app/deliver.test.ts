/**
 * Mail delivery against a real SMTP server in-process and the real PostgreSQL: the mails and
 * their links; one mail per event id, at least once: a redelivery of a sent mail sends nothing, one
 * that finds another attempt 'sending' waits for it, one that finds a dead attempt sends again
 * with the same Message-ID; retries, dead letters, and the log-only sender. The notices: a sign-in
 * method added, a password changed by a reset (what it removed and what remains).
 */
import { SUBJECTS, encodeEvent } from '@iam/contracts';
import { type IncomingEvent, PermanentEventError, RetryLaterError, createDataSource, migrate, seal } from '@iam/platform';
import { type SmtpSink, type TestDatabase, actionToken, createTestDatabase, eventually, startSmtpSink, testLogger, testMetrics } from '@iam/platform/testing';
import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { pgDeliveries } from '../infra/deliveries';
import { type NotificationMetrics, notificationMetrics } from '../infra/metrics';
import { entities, migrations } from '../infra/schema';
import { MailboxSender, MemoryMailbox } from '../infra/mailbox';
import { LogOnlySender, SmtpSender } from '../infra/senders';
import { formatMoney } from '../domain/mails';
import type { EmailSender, OutgoingMail } from '../domain/ports';
import { createDeliver } from './deliver';

describe('mail delivery', () => {
  const logger = testLogger();
  const key = randomBytes(32);
  let db: TestDatabase;
  let ds: DataSource;
  let smtp: SmtpSink;
  let sender: SmtpSender;

  beforeAll(async () => {
    db = await createTestDatabase('notification');
    ds = createDataSource({ url: db.url, name: 'notification', entities, migrations, logger });
    await ds.initialize();
    await migrate(ds, 'notification', logger);
    smtp = await startSmtpSink();
    sender = new SmtpSender(`smtp://127.0.0.1:${smtp.port}`, 'IAM <no-reply@iam.test>');
  });

  afterAll(async () => {
    await sender?.close();
    await smtp?.close();
    await ds?.destroy();
    await db?.drop();
  });

  const deliver = (s: EmailSender = sender, maxAttempts = 3, o: { sendingStaleMs?: number; metrics?: NotificationMetrics } = {}) =>
    createDeliver({
      deliveries: pgDeliveries(ds),
      sender: s,
      sealKey: key,
      actionBaseUrl: 'http://app.test',
      maxAttempts,
      sendingStaleMs: o.sendingStaleMs ?? 60_000,
      metrics: o.metrics ?? notificationMetrics(testMetrics()),
      logger,
    });
  const mailsTo = (email: string) => smtp.mails.filter((m) => m.to.includes(email));
  /** The record an attempt leaves when its process dies in the middle of the SMTP transaction. */
  const diedWhileSending = (e: IncomingEvent, email: string) =>
    pgDeliveries(ds).begin({ eventId: e.id, subject: e.subject, kind: 'password_reset', recipient: email }, 60_000);

  const resetEvent = (email: string, token: string, deliveryCount = 1, id = randomUUID()): IncomingEvent => ({
    id,
    subject: SUBJECTS.passwordResetRequested,
    data: encodeEvent(SUBJECTS.passwordResetRequested, {
      userId: randomUUID(),
      email,
      firstName: 'Ada <script>',
      sealedToken: seal(key, token, id).toString('base64url'),
      expiresAt: new Date(Date.now() + 3_600_000),
    }),
    occurredAt: new Date(),
    deliveryCount,
  });

  it('the entity mappings match the migrated schema', async () => {
    expect((await ds.driver.createSchemaBuilder().log()).upQueries).toEqual([]);
  });

  it('sends a reset mail with a plain-text and an HTML part and the link to the frontend', async () => {
    const email = `ada-${randomUUID()}@example.com`;
    const token = randomBytes(32).toString('base64url');
    const e = resetEvent(email, token);
    await deliver()(e);
    const mail = await smtp.waitFor((m) => m.to.includes(email));
    expect(mail.subject).toBe('Reset your password');
    expect(mail.raw).toMatch(/multipart\/alternative/);
    expect(mail.raw).toMatch(/text\/plain/);
    expect(mail.raw).toMatch(/text\/html/);
    expect(mail.text).toContain('<p>Hello Ada &#60;script&#62;,</p>'); // escaped in the HTML part
    expect(actionToken(mail, 'reset-password')).toBe(token);
    expect(mail.messageId).toBe(`<${e.id}@iam.notification>`);
    expect(await pgDeliveries(ds).get(e.id)).toMatchObject({ status: 'sent', attempts: 1, recipient: email });
  });

  it("a redelivery of a 'sent' mail is acknowledged without sending", async () => {
    const email = `twice-${randomUUID()}@example.com`;
    const e = resetEvent(email, randomBytes(32).toString('base64url'));
    await deliver()(e);
    expect(await pgDeliveries(ds).get(e.id)).toMatchObject({ status: 'sent', attempts: 1 });
    await deliver()({ ...e, deliveryCount: 2 });
    await Promise.all([deliver()({ ...e, deliveryCount: 3 }), deliver()({ ...e, deliveryCount: 3 })]);
    await new Promise((r) => setTimeout(r, 200));
    expect(mailsTo(email)).toHaveLength(1);
    expect(await pgDeliveries(ds).get(e.id)).toMatchObject({ status: 'sent', attempts: 1 });
  });

  it("a redelivery while another attempt is 'sending' sends nothing: it comes back when that attempt would be stale", async () => {
    const email = `inflight-${randomUUID()}@example.com`;
    const e = resetEvent(email, randomBytes(32).toString('base64url'));
    // The first attempt's SMTP transaction hangs until released (a slow server).
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const slow: EmailSender = { kind: 'smtp', send: async (m: OutgoingMail) => released.then(() => sender.send(m)), close: async () => undefined };
    const metrics = notificationMetrics(testMetrics());
    const first = deliver(slow)(e);
    await eventually(async () => (await pgDeliveries(ds).get(e.id))?.status === 'sending');
    const again = deliver(sender, 3, { sendingStaleMs: 30_000, metrics })({ ...e, deliveryCount: 2 });
    await expect(again).rejects.toBeInstanceOf(RetryLaterError);
    const later = (await again.catch((err: unknown) => err)) as RetryLaterError;
    expect(later.delayMs).toBeGreaterThan(25_000);
    expect(later.delayMs).toBeLessThanOrEqual(30_000);
    expect((await metrics.deferred.get()).values[0]?.value).toBe(1);
    expect(mailsTo(email)).toHaveLength(0);
    release();
    await first;
    expect(await pgDeliveries(ds).get(e.id)).toMatchObject({ status: 'sent', attempts: 1 });
    await deliver()({ ...e, deliveryCount: 3 });
    await new Promise((r) => setTimeout(r, 200));
    expect(mailsTo(email)).toHaveLength(1);
  });

  it("a redelivery finding a stale 'sending' record (its attempt died) sends again, with the same Message-ID", async () => {
    const email = `died-${randomUUID()}@example.com`;
    const e = resetEvent(email, randomBytes(32).toString('base64url'));
    expect(await diedWhileSending(e, email)).toMatchObject({ outcome: 'send', attempt: 1, resent: false });
    await expect(deliver(sender, 3, { sendingStaleMs: 60_000 })({ ...e, deliveryCount: 2 })).rejects.toBeInstanceOf(RetryLaterError);
    expect(mailsTo(email)).toHaveLength(0);
    await new Promise((r) => setTimeout(r, 300));
    const metrics = notificationMetrics(testMetrics());
    await deliver(sender, 3, { sendingStaleMs: 250, metrics })({ ...e, deliveryCount: 3 });
    const mail = await smtp.waitFor((m) => m.to.includes(email));
    expect(mail.messageId).toBe(`<${e.id}@iam.notification>`);
    expect(await pgDeliveries(ds).get(e.id)).toMatchObject({ status: 'sent', attempts: 2 });
    expect((await metrics.resent.get()).values[0]?.value).toBe(1);
  });

  it("on the last delivery a fresh 'sending' record is waited out in place (no redelivery follows), then the mail is sent", async () => {
    const email = `last-${randomUUID()}@example.com`;
    const e = resetEvent(email, randomBytes(32).toString('base64url'), 3);
    await diedWhileSending(e, email);
    const started = Date.now();
    await deliver(sender, 3, { sendingStaleMs: 400 })(e);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    await smtp.waitFor((m) => m.to.includes(email));
    expect(await pgDeliveries(ds).get(e.id)).toMatchObject({ status: 'sent', attempts: 2 });
  });

  it('a failure of an attempt that was taken over leaves the record to the attempt that took it', async () => {
    const email = `late-${randomUUID()}@example.com`;
    const e = resetEvent(email, 'x'.repeat(43));
    const store = pgDeliveries(ds);
    await diedWhileSending(e, email);
    await new Promise((r) => setTimeout(r, 50));
    expect(await store.begin({ eventId: e.id, subject: e.subject, kind: 'password_reset', recipient: email }, 10)).toMatchObject({ outcome: 'send', attempt: 2, resent: true });
    await store.fail(e.id, 1, 'the first attempt failed after all', false);
    expect(await store.get(e.id)).toMatchObject({ status: 'sending', attempts: 2, lastError: '' });
  });

  it('a failing server: the error is rethrown for a retry, the record says retrying, then dead_lettered', async () => {
    const email = `flaky-${randomUUID()}@example.com`;
    const e = resetEvent(email, randomBytes(32).toString('base64url'));
    smtp.behave({ failNext: 1 });
    await expect(deliver()(e)).rejects.toThrow();
    expect(await pgDeliveries(ds).get(e.id)).toMatchObject({ status: 'retrying', attempts: 1, lastError: expect.stringMatching(/451|Temporary/) });
    await deliver()({ ...e, deliveryCount: 2 });
    expect(await pgDeliveries(ds).get(e.id)).toMatchObject({ status: 'sent', attempts: 2 });

    const dead = resetEvent(`dead-${randomUUID()}@example.com`, 'x'.repeat(43), 3);
    smtp.behave({ failNext: 1 });
    await expect(deliver()(dead)).rejects.toThrow();
    expect(await pgDeliveries(ds).get(dead.id)).toMatchObject({ status: 'dead_lettered' });
  });

  it('an event whose token cannot be opened is a permanent failure (dead-lettered at once)', async () => {
    const e = resetEvent(`bad-${randomUUID()}@example.com`, 'token');
    const tampered = { ...e, id: randomUUID() }; // the AAD no longer matches
    await expect(deliver()(tampered)).rejects.toBeInstanceOf(PermanentEventError);
  });

  const orderEvent = (email: string, id = randomUUID()): IncomingEvent => ({
    id,
    subject: SUBJECTS.orderPlaced,
    data: encodeEvent(SUBJECTS.orderPlaced, {
      orderId: id,
      customerId: randomUUID(),
      customerEmail: email,
      lines: [
        { productId: randomUUID(), sku: 'MUG-001', name: 'Enamel <b>mug</b>', quantity: 2, unitPriceMinor: 1_490 },
        { productId: randomUUID(), sku: 'TEE-001', name: 'T-shirt', quantity: 1, unitPriceMinor: 2_900 },
      ],
      totalMinor: 5_880,
      currency: 'EUR',
      placedAt: new Date(),
    }),
    occurredAt: new Date(),
    deliveryCount: 1,
  });

  it('an order placed event produces one confirmation mail, however often it comes: the order id, its lines and the total', async () => {
    const email = `buyer-${randomUUID()}@example.com`;
    const e = orderEvent(email);
    await deliver()(e);
    await deliver()({ ...e, deliveryCount: 2 });
    await Promise.all([deliver()({ ...e, deliveryCount: 3 }), deliver()({ ...e, deliveryCount: 3 })]);
    const mail = await smtp.waitFor((m) => m.to.includes(email));
    await new Promise((r) => setTimeout(r, 200));
    expect(smtp.mails.filter((m) => m.to.includes(email))).toHaveLength(1);
    expect(mail.subject).toBe(`Your order ${e.id.slice(0, 8)} is confirmed`);
    expect(mail.messageId).toBe(`<${e.id}@iam.notification>`);
    // The sink's text reads quoted-printable bytes as Latin-1; these lines have UTF-8 (×, €).
    const text = Buffer.from(mail.raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8');
    expect(text).toContain(e.id);
    expect(text).toContain('2 × Enamel <b>mug</b> (MUG-001) at €14.90: €29.80');
    expect(text).toContain('<p>2 × Enamel &#60;b&#62;mug&#60;/b&#62; (MUG-001)'); // escaped in the HTML part
    expect(text).toContain('1 × T-shirt (TEE-001) at €29.00: €29.00');
    expect(text).toContain('Total: €58.80');
    expect(await pgDeliveries(ds).get(e.id)).toMatchObject({ status: 'sent', kind: 'order_confirmation', recipient: email });
  });

  it('an order placed without a buyer email is acknowledged without a mail or a record', async () => {
    const e = orderEvent('');
    const before = smtp.mails.length;
    await deliver()(e);
    expect(smtp.mails).toHaveLength(before);
    expect(await pgDeliveries(ds).get(e.id)).toBeNull();
  });

  it('a sign-in method added: one mail, however often the event comes, naming it, with the account page to review', async () => {
    const email = `factor-${randomUUID()}@example.com`;
    const id = randomUUID();
    const data = encodeEvent(SUBJECTS.factorAdded, { userId: randomUUID(), email, firstName: 'Ada', method: { kind: 'passkey', name: 'Laptop <b>', addedAt: new Date('2030-01-02T03:04:05Z') } });
    const e: IncomingEvent = { id, subject: SUBJECTS.factorAdded, data, occurredAt: new Date(), deliveryCount: 1 };
    await deliver()(e);
    await deliver()({ ...e, deliveryCount: 2 });
    const mail = await smtp.waitFor((m) => m.to.includes(email));
    await new Promise((r) => setTimeout(r, 200));
    expect(mailsTo(email)).toHaveLength(1);
    expect(mail.subject).toBe('A sign-in method was added to your account');
    expect(mail.messageId).toBe(`<${id}@iam.notification>`);
    expect(mail.text).toContain('A passkey "Laptop <b>" (added 2030-01-02 03:04 UTC) was added to your account.');
    expect(mail.text).toContain('<p>A passkey &#34;Laptop &#60;b&#62;&#34;'); // escaped in the HTML part
    expect(mail.text).toContain('If it was not you, reset your password and review your sign-in methods at http://app.test/account.');
    expect(mail.text).toContain('href="http://app.test/account"');
    expect(await pgDeliveries(ds).get(id)).toMatchObject({ status: 'sent', attempts: 1, kind: 'factor_added', recipient: email });
  });

  it('a password changed by a reset: the mail lists the sign-in methods it removed and those that remain, with the account page', async () => {
    const email = `changed-${randomUUID()}@example.com`;
    const id = randomUUID();
    const at = new Date('2030-01-02T03:04:05Z');
    const data = encodeEvent(SUBJECTS.passwordChanged, {
      userId: randomUUID(),
      email,
      firstName: 'Ada',
      removed: [{ kind: 'passkey', name: 'Strange', addedAt: at }],
      kept: [{ kind: 'totp', name: '', addedAt: at }, { kind: 'recovery_codes', name: '', addedAt: at }],
      reviewWindowHours: 24,
    });
    await deliver()({ id, subject: SUBJECTS.passwordChanged, data, occurredAt: new Date(), deliveryCount: 1 });
    const mail = await smtp.waitFor((m) => m.to.includes(email));
    expect(mail.subject).toBe('Your password was changed');
    expect(mail.text).toContain('the reset removed the sign-in methods added in the 24 hours before it: a passkey "Strange" (added 2030-01-02 03:04 UTC). If they were yours, add them again.');
    expect(mail.text).toContain('Your account still has: an authenticator app (added 2030-01-02 03:04 UTC); recovery codes (added 2030-01-02 03:04 UTC).');
    expect(mail.text).toContain('href="http://app.test/account"');
    expect(await pgDeliveries(ds).get(id)).toMatchObject({ status: 'sent', kind: 'password_changed' });
  });

  it('amounts use their currency decimals', () => {
    expect(formatMoney(1_234, 'EUR')).toBe('€12.34');
    expect(formatMoney(1_234, 'JPY')).toBe('¥1,234');
    expect(formatMoney(1_234, 'KWD')).toMatch(/^KWD\s1\.234$/);
  });

  it('without SMTP the log-only sender records the request and logs neither token nor link', async () => {
    const lines: string[] = [];
    const pino = (await import('pino')).default;
    const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
    const token = randomBytes(32).toString('base64url');
    const e = resetEvent(`quiet-${randomUUID()}@example.com`, token);
    await deliver(new LogOnlySender(log))(e);
    expect(await pgDeliveries(ds).get(e.id)).toMatchObject({ status: 'recorded' });
    expect(lines.join('')).toContain('email action requested');
    expect(lines.join('')).not.toContain(token);
    expect(lines.join('')).not.toContain('reset-password');
  });

  it('into the development mailbox: the mail with its link and token, recorded as sent, and nothing of it in the log', async () => {
    const lines: string[] = [];
    const pino = (await import('pino')).default;
    const log = pino({ level: 'debug' }, { write: (l: string) => void lines.push(l) });
    const box = new MemoryMailbox();
    const token = randomBytes(32).toString('base64url');
    const email = `box-${randomUUID()}@example.com`;
    const e = resetEvent(email, token);
    await createDeliver({
      deliveries: pgDeliveries(ds),
      sender: new MailboxSender(box),
      sealKey: key,
      actionBaseUrl: 'http://localhost:8080',
      maxAttempts: 3,
      sendingStaleMs: 60_000,
      metrics: notificationMetrics(testMetrics()),
      logger: log,
    })(e);
    const [mail] = box.list();
    expect(mail).toMatchObject({ to: email, subject: 'Reset your password', messageId: `<${e.id}@iam.notification>` });
    expect(mail!.text).toContain(`http://localhost:8080/reset-password?token=${token}`);
    expect(mail!.html).toContain(`href="http://localhost:8080/reset-password?token=${token}"`);
    expect(await pgDeliveries(ds).get(e.id)).toMatchObject({ status: 'sent' });
    expect(lines.join('')).not.toContain(token);
  });
});
