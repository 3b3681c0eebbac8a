/**
 * Checkout, carts and cancellation against the real PostgreSQL: no oversell under concurrency,
 * idempotency (one order, one reservation, one event per key), stock released exactly once,
 * customers scoped to their own orders, prices only from the catalog.
 */
import { SUBJECTS, decodeEvent } from '@iam/contracts';
import { AppError, createDataSource, migrate } from '@iam/platform';
import { TestAccess, type TestDatabase, createTestDatabase, testLogger } from '@iam/platform/testing';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { REASONS, reasonOf } from '../domain/errors';
import type { Product } from '../domain/model';
import { entities, migrations } from '../infra/schema';
import { purgeExpired } from '../infra/stores';
import { createCommerceUseCases } from '../service';

describe('orders', () => {
  const logger = testLogger();
  /** A products.manage holder (as the directory answers now). */
  const MANAGER = randomUUID();
  const access = new TestAccess().grant(MANAGER, 'products.manage');
  let db: TestDatabase;
  let ds: DataSource;
  let uc: ReturnType<typeof createCommerceUseCases>;

  beforeAll(async () => {
    db = await createTestDatabase('commerce_orders');
    ds = createDataSource({ url: db.url, name: 'commerce', entities, migrations, logger, poolSize: 10 });
    await ds.initialize();
    await migrate(ds, 'commerce', logger);
    uc = createCommerceUseCases(ds, access);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  const product = (over: Partial<{ priceMinor: number; currency: string; onHand: number; name: string }> = {}): Promise<Product> =>
    uc.catalog.create(MANAGER, { sku: `SKU-${randomUUID().slice(0, 8)}`, name: over.name ?? `Thing ${randomUUID().slice(0, 8)}`, priceMinor: over.priceMinor ?? 1_250, currency: over.currency ?? 'EUR', onHand: over.onHand ?? 10 });

  const placedEvents = async (orderIds?: readonly string[]): Promise<Array<{ id: string; orderId: string; customerId: string; totalMinor: number }>> => {
    const rows = await ds.query<Array<{ id: string; payload: Buffer }>>(`SELECT id, payload FROM outbox_events WHERE subject = $1`, [SUBJECTS.orderPlaced]);
    return rows
      .map((r) => ({ id: r.id, ...decodeEvent(SUBJECTS.orderPlaced, r.payload) }))
      .filter((e) => !orderIds || orderIds.includes(e.orderId));
  };

  const outcome = async <T>(p: Promise<T>): Promise<{ ok: T } | { err: unknown }> => p.then((ok) => ({ ok }), (err: unknown) => ({ err }));

  it('100 concurrent checkouts of one product with stock 25 by 10 customers: exactly 25 orders, available 0, only INSUFFICIENT_STOCK refusals', async () => {
    const p = await product({ onHand: 25 });
    const customers = Array.from({ length: 10 }, () => randomUUID());
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        outcome(uc.orders.checkout({ customerId: customers[i % 10]!, idempotencyKey: `k-${i}`, lines: [{ productId: p.id, quantity: 1 }] })),
      ),
    );
    const placed = results.flatMap((r) => ('ok' in r ? [r.ok.order] : []));
    const refused = results.flatMap((r) => ('err' in r ? [r.err] : []));
    expect(placed).toHaveLength(25);
    expect(refused).toHaveLength(75);
    for (const err of refused) {
      expect(err).toBeInstanceOf(AppError);
      expect(reasonOf(err)).toBe(REASONS.insufficientStock);
    }
    expect(await uc.catalog.get(p.id)).toMatchObject({ onHand: 25, reserved: 25, available: 0 });
    const [{ n }] = await ds.query<[{ n: number }]>('SELECT count(*)::int AS n FROM order_lines WHERE product_id = $1', [p.id]);
    expect(n).toBe(25);
    expect(await placedEvents(placed.map((o) => o.id))).toHaveLength(25);
  });

  it('20 concurrent identical checkouts with one key: one order, one reservation, one event; all get that order', async () => {
    const p = await product({ onHand: 100 });
    const customerId = randomUUID();
    const key = randomUUID();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => uc.orders.checkout({ customerId, idempotencyKey: key, lines: [{ productId: p.id, quantity: 3 }] })),
    );
    const ids = new Set(results.map((r) => r.order.id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    expect((await uc.catalog.get(p.id)).reserved).toBe(3);
    expect((await uc.orders.list(customerId, { pageSize: 100, pageToken: '' })).orders).toHaveLength(1);
    expect(await placedEvents([...ids])).toHaveLength(1);
    // A later replay (even with the lines in another order or a new email) is still that order.
    const again = await uc.orders.checkout({ customerId, idempotencyKey: key, lines: [{ productId: p.id.toUpperCase(), quantity: 3 }], customerEmail: 'x@example.com' });
    expect(again).toMatchObject({ replayed: true, order: { id: [...ids][0] } });
  });

  it('the same key with another payload is IDEMPOTENCY_CONFLICT; another customer may use the same key', async () => {
    const [a, b] = [await product(), await product()];
    const customerId = randomUUID();
    await uc.orders.checkout({ customerId, idempotencyKey: 'same', lines: [{ productId: a.id, quantity: 1 }] });
    for (const lines of [[{ productId: a.id, quantity: 2 }], [{ productId: b.id, quantity: 1 }], [{ productId: a.id, quantity: 1 }, { productId: b.id, quantity: 1 }], []]) {
      const err = await uc.orders.checkout({ customerId, idempotencyKey: 'same', lines }).catch((e: unknown) => e);
      expect(reasonOf(err)).toBe(REASONS.idempotencyConflict);
    }
    expect((await uc.catalog.get(a.id)).reserved).toBe(1);
    expect((await uc.catalog.get(b.id)).reserved).toBe(0);
    await expect(uc.orders.checkout({ customerId: randomUUID(), idempotencyKey: 'same', lines: [{ productId: a.id, quantity: 2 }] })).resolves.toMatchObject({ replayed: false });
  });

  it('housekeeping drops idempotency keys older than their hours, keeps the newer ones and every order', async () => {
    const p = await product({ onHand: 10 });
    const customerId = randomUUID();
    const [old, fresh] = [await uc.orders.checkout({ customerId, idempotencyKey: 'old', lines: [{ productId: p.id, quantity: 1 }] }), await uc.orders.checkout({ customerId, idempotencyKey: 'fresh', lines: [{ productId: p.id, quantity: 1 }] })];
    await ds.query(`UPDATE idempotency_records SET created_at = now() - interval '25 hours' WHERE customer_id = $1 AND key = 'old'`, [customerId]);
    await purgeExpired(ds, 24);
    const keys = await ds.query<Array<{ key: string }>>('SELECT key FROM idempotency_records WHERE customer_id = $1', [customerId]);
    expect(keys.map((k) => k.key)).toEqual(['fresh']);
    expect((await uc.orders.get(customerId, old.order.id)).id).toBe(old.order.id);
    // The fresh key still replays; the purged one is a new checkout.
    await expect(uc.orders.checkout({ customerId, idempotencyKey: 'fresh', lines: [{ productId: p.id, quantity: 1 }] })).resolves.toMatchObject({ replayed: true, order: { id: fresh.order.id } });
    await expect(uc.orders.checkout({ customerId, idempotencyKey: 'old', lines: [{ productId: p.id, quantity: 1 }] })).resolves.toMatchObject({ replayed: false });
  });

  it('a failed checkout takes nothing and leaves its key unused', async () => {
    const [a, b] = [await product({ onHand: 5 }), await product({ onHand: 1 })];
    const customerId = randomUUID();
    const lines = [
      { productId: a.id, quantity: 5 },
      { productId: b.id, quantity: 2 },
    ];
    const err = await uc.orders.checkout({ customerId, idempotencyKey: 'k', lines }).catch((e: unknown) => e);
    expect(reasonOf(err)).toBe(REASONS.insufficientStock);
    expect((err as AppError).errors).toContainEqual({ field: 'lines[1].quantity', message: 'exceeds the 1 available' });
    expect((await uc.catalog.get(a.id)).reserved).toBe(0);
    expect((await uc.catalog.get(b.id)).reserved).toBe(0);
    await uc.catalog.adjustStock(MANAGER, b.id, { delta: 1 });
    await expect(uc.orders.checkout({ customerId, idempotencyKey: 'k', lines })).resolves.toMatchObject({ replayed: false, order: { totalMinor: 7 * 1_250 } });
    expect(await uc.catalog.get(a.id)).toMatchObject({ reserved: 5, available: 0 });
  });

  it('prices come from the catalog: a price sent by the client is ignored; lines are priced at checkout time', async () => {
    const p = await product({ priceMinor: 4_990 });
    const customerId = randomUUID();
    const tampered: Array<{ productId: string; quantity: number }> = [{ productId: p.id, quantity: 2, ...{ unitPriceMinor: 1, priceMinor: 1, totalMinor: 2 } }];
    const { order } = await uc.orders.checkout({ customerId, idempotencyKey: 'p', lines: tampered });
    expect(order.lines).toEqual([{ productId: p.id, quantity: 2, unitPriceMinor: 4_990, sku: p.sku, name: p.name }]);
    expect(order).toMatchObject({ totalMinor: 9_980, currency: 'EUR', status: 'CONFIRMED' });
    await uc.catalog.update(MANAGER, p.id, { priceMinor: 5_990 });
    expect((await uc.orders.get(customerId, order.id)).lines[0]!.unitPriceMinor).toBe(4_990);
  });

  it('an archived or unknown product is PRODUCT_UNAVAILABLE; mixed currencies, bad quantities and duplicates are VALIDATION', async () => {
    const [p, usd] = [await product(), await product({ currency: 'USD' })];
    await uc.catalog.archive(MANAGER, p.id);
    const customerId = randomUUID();
    const archived = await uc.orders.checkout({ customerId, idempotencyKey: 'a', lines: [{ productId: p.id, quantity: 1 }] }).catch((e: unknown) => e);
    expect(reasonOf(archived)).toBe(REASONS.productUnavailable);
    expect((archived as AppError).errors).toContainEqual({ field: 'lines[0].productId', message: 'is archived' });
    const unknown = await uc.orders.checkout({ customerId, idempotencyKey: 'b', lines: [{ productId: randomUUID(), quantity: 1 }] }).catch((e: unknown) => e);
    expect(reasonOf(unknown)).toBe(REASONS.productUnavailable);
    expect((await uc.catalog.get(p.id)).reserved).toBe(0);

    const eur = await product();
    await expect(uc.orders.checkout({ customerId, idempotencyKey: 'c', lines: [{ productId: eur.id, quantity: 1 }, { productId: usd.id, quantity: 1 }] })).rejects.toMatchObject({ code: 'VALIDATION' });
    for (const quantity of [0, -1, 1.5, 1_001]) {
      await expect(uc.orders.checkout({ customerId, idempotencyKey: 'd', lines: [{ productId: eur.id, quantity }] })).rejects.toMatchObject({ code: 'VALIDATION', errors: [{ field: 'lines[0].quantity' }] });
    }
    await expect(
      uc.orders.checkout({ customerId, idempotencyKey: 'e', lines: [{ productId: eur.id, quantity: 1 }, { productId: eur.id.toUpperCase(), quantity: 1 }] }),
    ).rejects.toMatchObject({ code: 'VALIDATION', errors: [{ field: 'lines[1].productId' }] });
    await expect(uc.orders.checkout({ customerId, idempotencyKey: '', lines: [{ productId: eur.id, quantity: 1 }] })).rejects.toMatchObject({ code: 'VALIDATION' });
    await expect(uc.orders.checkout({ customerId: 'nope', idempotencyKey: 'f', lines: [{ productId: eur.id, quantity: 1 }] })).rejects.toMatchObject({ code: 'VALIDATION' });
  });

  it('checkout from the cart: the cart lines are ordered, the cart is emptied in the same transaction; an empty cart is VALIDATION', async () => {
    const [a, b] = [await product({ priceMinor: 100 }), await product({ priceMinor: 250 })];
    const customerId = randomUUID();
    await expect(uc.orders.checkout({ customerId, idempotencyKey: 'empty', lines: [] })).rejects.toMatchObject({ code: 'VALIDATION' });
    const cart = await uc.carts.replace(customerId, [
      { productId: b.id, quantity: 2 },
      { productId: a.id, quantity: 3 },
    ]);
    expect(cart).toMatchObject({ subtotalMinor: 800, currency: 'EUR', lines: [{ productId: b.id, quantity: 2 }, { productId: a.id, quantity: 3 }] });
    const { order } = await uc.orders.checkout({ customerId, idempotencyKey: 'cart', lines: [], customerEmail: ' Buyer@Example.com ' });
    expect(order).toMatchObject({ totalMinor: 800, customerEmail: 'buyer@example.com' });
    expect(order.lines.map((l) => l.productId)).toEqual([a.id, b.id].sort());
    expect(await uc.carts.get(customerId)).toMatchObject({ lines: [], subtotalMinor: 0, currency: '' });
    // The replay of a cart checkout is the same request, although the cart is now empty.
    await expect(uc.orders.checkout({ customerId, idempotencyKey: 'cart', lines: [] })).resolves.toMatchObject({ replayed: true, order: { id: order.id } });
    const [e] = await placedEvents([order.id]);
    expect(e).toMatchObject({ id: order.id, customerId, totalMinor: 800 });
  });

  it('a failed cart checkout leaves the cart as it was', async () => {
    const p = await product({ onHand: 1 });
    const customerId = randomUUID();
    await uc.carts.replace(customerId, [{ productId: p.id, quantity: 2 }]);
    const err = await uc.orders.checkout({ customerId, idempotencyKey: 'x', lines: [] }).catch((e: unknown) => e);
    expect(reasonOf(err)).toBe(REASONS.insufficientStock);
    expect((err as AppError).errors).toContainEqual({ field: 'cart.lines[0].quantity', message: 'exceeds the 1 available' });
    expect((await uc.carts.get(customerId)).lines).toEqual([{ productId: p.id, quantity: 2 }]);
  });

  it('cart rules: unknown or archived products and mixed currencies are refused; clear empties it', async () => {
    const [p, q, usd] = [await product(), await product(), await product({ currency: 'USD' })];
    const customerId = randomUUID();
    expect(await uc.carts.get(customerId)).toEqual({ customerId, lines: [], subtotalMinor: 0, currency: '', updatedAt: null });
    await uc.catalog.archive(MANAGER, q.id);
    expect(reasonOf(await uc.carts.replace(customerId, [{ productId: q.id, quantity: 1 }]).catch((e: unknown) => e))).toBe(REASONS.productUnavailable);
    expect(reasonOf(await uc.carts.replace(customerId, [{ productId: randomUUID(), quantity: 1 }]).catch((e: unknown) => e))).toBe(REASONS.productUnavailable);
    await expect(uc.carts.replace(customerId, [{ productId: p.id, quantity: 1 }, { productId: usd.id, quantity: 1 }])).rejects.toMatchObject({ code: 'VALIDATION' });
    await uc.carts.replace(customerId, [{ productId: p.id, quantity: 4 }]);
    await uc.carts.replace(customerId, [{ productId: p.id, quantity: 1 }]);
    expect((await uc.carts.get(customerId)).lines).toEqual([{ productId: p.id, quantity: 1 }]);
    const cleared = await uc.carts.clear(customerId);
    expect(cleared).toMatchObject({ lines: [], subtotalMinor: 0 });
    expect(cleared.updatedAt).toBeInstanceOf(Date);
  });

  it('cancel releases the stock once, also under concurrent cancels; a second cancel is a no-op with no event', async () => {
    const p = await product({ onHand: 10 });
    const customerId = randomUUID();
    const { order } = await uc.orders.checkout({ customerId, idempotencyKey: 'c', lines: [{ productId: p.id, quantity: 4 }] });
    expect((await uc.catalog.get(p.id)).available).toBe(6);
    const results = await Promise.all(Array.from({ length: 10 }, () => uc.orders.cancel(customerId, order.id)));
    expect(results.every((o) => o.status === 'CANCELLED')).toBe(true);
    expect(await uc.catalog.get(p.id)).toMatchObject({ reserved: 0, available: 10 });
    await uc.orders.cancel(customerId, order.id);
    expect((await uc.catalog.get(p.id)).reserved).toBe(0);
    const cancelled = await ds.query<Array<{ payload: Buffer }>>(`SELECT payload FROM outbox_events WHERE subject = $1`, [SUBJECTS.orderCancelled]);
    expect(cancelled.map((r) => decodeEvent(SUBJECTS.orderCancelled, r.payload)).filter((e) => e.orderId === order.id)).toHaveLength(1);
    // The replay of a cancelled order's checkout shows it cancelled, and reserves nothing again.
    await expect(uc.orders.checkout({ customerId, idempotencyKey: 'c', lines: [{ productId: p.id, quantity: 4 }] })).resolves.toMatchObject({
      replayed: true,
      order: { status: 'CANCELLED' },
    });
    expect((await uc.catalog.get(p.id)).reserved).toBe(0);
  });

  it('cancels racing checkouts of the same product keep the stock exact', async () => {
    const p = await product({ onHand: 20 });
    const customerId = randomUUID();
    const first = await Promise.all(Array.from({ length: 10 }, (_, i) => uc.orders.checkout({ customerId, idempotencyKey: `a${i}`, lines: [{ productId: p.id, quantity: 2 }] })));
    const mixed = await Promise.all([
      ...first.map((r) => outcome(uc.orders.cancel(customerId, r.order.id))),
      ...Array.from({ length: 10 }, (_, i) => outcome(uc.orders.checkout({ customerId: randomUUID(), idempotencyKey: `b${i}`, lines: [{ productId: p.id, quantity: 2 }] }))),
    ]);
    for (const r of mixed) if ('err' in r) expect(reasonOf(r.err)).toBe(REASONS.insufficientStock);
    const [{ held }] = await ds.query<[{ held: number }]>(
      `SELECT coalesce(sum(l.quantity), 0)::int AS held FROM order_lines l JOIN orders o ON o.id = l.order_id WHERE l.product_id = $1 AND o.status = 'CONFIRMED'`,
      [p.id],
    );
    expect((await uc.catalog.get(p.id)).reserved).toBe(held);
  });

  it('a customer only sees and cancels its own orders (another customer gets NOT_FOUND)', async () => {
    const p = await product();
    const [alice, bob] = [randomUUID(), randomUUID()];
    const { order } = await uc.orders.checkout({ customerId: alice, idempotencyKey: 'o', lines: [{ productId: p.id, quantity: 1 }] });
    await expect(uc.orders.get(bob, order.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(uc.orders.cancel(bob, order.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await uc.orders.list(bob, { pageSize: 10, pageToken: '' })).orders).toEqual([]);
    expect((await uc.orders.get(alice, order.id)).status).toBe('CONFIRMED');
    // Bob replaying Alice's key places Bob's own order, never returns Alice's.
    const bobs = await uc.orders.checkout({ customerId: bob, idempotencyKey: 'o', lines: [{ productId: p.id, quantity: 1 }] });
    expect(bobs.order.id).not.toBe(order.id);
    expect(bobs.replayed).toBe(false);
  });

  it('orders page newest first with opaque tokens and a status filter', async () => {
    const p = await product({ onHand: 100 });
    const customerId = randomUUID();
    const placed: string[] = [];
    for (let i = 0; i < 7; i++) placed.push((await uc.orders.checkout({ customerId, idempotencyKey: `o${i}`, lines: [{ productId: p.id, quantity: 1 }] })).order.id);
    await uc.orders.cancel(customerId, placed[2]!);
    const seen: string[] = [];
    let token = '';
    do {
      const page = await uc.orders.list(customerId, { pageSize: 3, pageToken: token });
      expect(page.orders.length).toBeLessThanOrEqual(3);
      seen.push(...page.orders.map((o) => o.id));
      token = page.nextPageToken ?? '';
    } while (token);
    expect(seen).toEqual([...placed].reverse());
    const cancelled = await uc.orders.list(customerId, { pageSize: 10, pageToken: '', status: 'CANCELLED' });
    expect(cancelled.orders.map((o) => o.id)).toEqual([placed[2]]);
    await expect(uc.orders.list(customerId, { pageSize: 3, pageToken: 'garbage!' })).rejects.toMatchObject({ code: 'VALIDATION', errors: [{ field: 'pageToken' }] });
  });
});
