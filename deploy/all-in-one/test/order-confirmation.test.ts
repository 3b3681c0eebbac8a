/**
 * A placed order's confirmation across processes' boundaries: commerce's checkout writes
 * commerce.order.placed to its outbox, the relay publishes it to the bus (JetStream when one is
 * reachable), notification's notification-orders consumer mails the buyer once. A replayed
 * checkout and a redelivered event send nothing more.
 */
import { commerceService, createCommerceUseCases, readCommerceConfig } from '@iam/commerce';
import { notificationService, readNotificationConfig } from '@iam/notification';
import { JetStreamEventBus, Lifecycle, type RunningService, type ServiceRuntime, readConfig, startService } from '@iam/platform';
import {
  type SmtpSink,
  TestAccess,
  type TestDatabase,
  createTestDatabase,
  deleteNamespaceStreams,
  eventually,
  startSmtpSink,
  testBus,
  testLogger,
  testMetrics,
  testNatsUrl,
} from '@iam/platform/testing';
import { randomBytes, randomUUID } from 'node:crypto';

describe('order confirmation: checkout → outbox → bus → notification → SMTP', () => {
  const logger = testLogger();
  const metrics = testMetrics();
  const bus = testBus({ logger, metrics });
  const lifecycle = new Lifecycle(logger, 5_000);
  const dbs: TestDatabase[] = [];
  let smtp: SmtpSink;
  let commerce: RunningService;
  let uc: ReturnType<typeof createCommerceUseCases>;
  /** Stocks the catalog (a products.manage holder, as the directory would answer). */
  const MANAGER = randomUUID();

  beforeAll(async () => {
    smtp = await startSmtpSink();
    for (const n of ['commerce', 'notification']) dbs.push(await createTestDatabase(`order_mail_${n}`));
    lifecycle.onShutdown('bus', () => bus.close());
    const env = {
      COMMERCE_GRPC_PORT: '0',
      NOTIFICATION_GRPC_PORT: '0',
      SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
      EMAIL_ACTION_BASE_URL: 'https://shop.example',
      EMAIL_ACTION_KEY: randomBytes(32).toString('base64'),
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
    };
    const config = readConfig(env, (e) => ({
      commerce: readCommerceConfig(e, { databaseUrl: dbs[0]!.url }),
      notification: readNotificationConfig(e, { databaseUrl: dbs[1]!.url }),
    }));
    const rt: ServiceRuntime = { logger, metrics, bus, lifecycle, bindHost: '127.0.0.1', callKey: randomBytes(32) };
    await startService(notificationService(config.notification, rt), rt);
    commerce = await startService(commerceService(config.commerce, rt), rt);
    uc = createCommerceUseCases(commerce.dataSource, new TestAccess().grant(MANAGER, 'products.manage'));
  });

  afterAll(async () => {
    await lifecycle.shutdown('test done');
    await smtp?.close();
    const url = testNatsUrl();
    if (url && bus instanceof JetStreamEventBus) await deleteNamespaceStreams(url, bus.namespace);
    for (const db of dbs) await db.drop();
  });

  it('one confirmation mail per order, with its id, lines and total', async () => {
    const p = await uc.catalog.create(MANAGER, { sku: `MAIL-${randomUUID().slice(0, 8)}`, name: 'Desk lamp', priceMinor: 5_900, currency: 'EUR', onHand: 5 });
    const email = `buyer-${randomUUID()}@example.com`;
    const customerId = randomUUID();
    const checkout = () => uc.orders.checkout({ customerId, idempotencyKey: 'once', lines: [{ productId: p.id, quantity: 2 }], customerEmail: email });
    const { order } = await checkout();
    const mail = await smtp.waitFor((m) => m.to.includes(email), 15_000);
    expect(mail.subject).toBe(`Your order ${order.id.slice(0, 8)} is confirmed`);
    expect(mail.messageId).toBe(`<${order.id}@iam.notification>`);
    expect(mail.text).toContain(order.id);
    expect(mail.text).toContain(p.sku);
    expect(mail.text).toContain('118.00');

    await expect(checkout()).resolves.toMatchObject({ replayed: true });
    // The relay publishing the same event again (a crash before it marked the row) is deduplicated.
    const [row] = await commerce.dataSource.query<Array<{ payload: Buffer; occurred_at: Date }>>('SELECT payload, occurred_at FROM outbox_events WHERE id = $1', [order.id]);
    await bus.publish({ id: order.id, subject: 'commerce.order.placed', data: row!.payload, occurredAt: row!.occurred_at });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(smtp.mails.filter((m) => m.to.includes(email))).toHaveLength(1);
  });

  it('an order without a buyer email sends no mail and does not block the next one', async () => {
    const p = await uc.catalog.create(MANAGER, { sku: `MAIL-${randomUUID().slice(0, 8)}`, name: 'Poster', priceMinor: 4_500, currency: 'EUR', onHand: 5 });
    const before = smtp.mails.length;
    await uc.orders.checkout({ customerId: randomUUID(), idempotencyKey: 'anon', lines: [{ productId: p.id, quantity: 1 }] });
    const email = `next-${randomUUID()}@example.com`;
    await uc.orders.checkout({ customerId: randomUUID(), idempotencyKey: 'next', lines: [{ productId: p.id, quantity: 1 }], customerEmail: email });
    await smtp.waitFor((m) => m.to.includes(email), 15_000);
    expect(smtp.mails.length).toBe(before + 1);
    await eventually(async () => {
      const [{ n }] = await commerce.dataSource.query<[{ n: number }]>('SELECT count(*)::int AS n FROM outbox_events WHERE published_at IS NULL');
      return n === 0;
    });
  });
});
