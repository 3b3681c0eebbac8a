/**
 * The commerce gRPC surface end to end in-process (server on port 0, the platform's client):
 * messages and enums cross the wire, refusals arrive with their code and reason, and a call whose
 * actor is not the customer it names is refused.
 */
import { commerceV1 } from '@iam/contracts';
import { type AppError, type GrpcServerHandle, GrpcHealth, createDataSource, createGrpcClient, migrate, startGrpcServer } from '@iam/platform';
import { TEST_CALL_KEY, TestAccess, type TestDatabase, actingAs, createTestDatabase, testLogger, testMetrics, testSigner } from '@iam/platform/testing';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { REASONS, reasonOf } from '../domain/errors';
import { entities, migrations } from '../infra/schema';
import { createCommerceUseCases } from '../service';
import { commerceGrpc } from './grpc';

describe('commerce gRPC', () => {
  const logger = testLogger();
  const metrics = testMetrics();
  let db: TestDatabase;
  let ds: DataSource;
  let server: GrpcServerHandle;
  let catalog: ReturnType<typeof createGrpcClient<typeof commerceV1.CatalogServiceService>>;
  let carts: ReturnType<typeof createGrpcClient<typeof commerceV1.CartServiceService>>;
  let orders: ReturnType<typeof createGrpcClient<typeof commerceV1.OrderServiceService>>;
  const { ProductStatus, OrderStatus } = commerceV1;
  const MANAGER = randomUUID();
  const access = new TestAccess().grant(MANAGER, 'products.manage');
  const asManager = <T>(fn: () => Promise<T>): Promise<T> => actingAs(MANAGER, fn);

  beforeAll(async () => {
    db = await createTestDatabase('commerce_grpc');
    ds = createDataSource({ url: db.url, name: 'commerce', entities, migrations, logger });
    await ds.initialize();
    await migrate(ds, 'commerce', logger);
    server = await startGrpcServer({
      host: '127.0.0.1',
      port: 0,
      logger,
      health: new GrpcHealth(),
      bindings: commerceGrpc(createCommerceUseCases(ds, access), { logger, metrics, service: 'commerce', callKey: TEST_CALL_KEY }),
    });
    const target = `127.0.0.1:${server.port}`;
    // Called as the gateway calls it: every call asserted, acting for the request's user.
    const assert = { signer: testSigner('gateway'), to: 'commerce' };
    catalog = createGrpcClient(commerceV1.CatalogServiceService, { target, metrics, assert });
    carts = createGrpcClient(commerceV1.CartServiceService, { target, metrics, assert });
    orders = createGrpcClient(commerceV1.OrderServiceService, { target, metrics, assert });
  });

  afterAll(async () => {
    for (const c of [catalog, carts, orders]) c?.close();
    await server?.shutdown(1_000);
    await ds?.destroy();
    await db?.drop();
  });

  // Active products' names are unique (their lookalike keys): one name per product.
  const create = (onHand = 5) =>
    asManager(() => catalog.call.createProduct({ sku: `G-${randomUUID().slice(0, 8)}`, name: `Widget ${randomUUID().slice(0, 8)}`, description: 'A widget', priceMinor: 1_999, currency: 'EUR', onHand }));

  it('catalog round trip: create, get, batch get, list with a token, status enum, archive, stock', async () => {
    const a = await create(7);
    expect(a).toMatchObject({ name: expect.stringMatching(/^Widget /), priceMinor: 1_999, currency: 'EUR', status: ProductStatus.PRODUCT_STATUS_ACTIVE, onHand: 7, reserved: 0, available: 7 });
    expect(a.createdAt).toBeInstanceOf(Date);
    const b = await create();
    await expect(catalog.call.getProduct({ id: a.id })).resolves.toMatchObject({ id: a.id, sku: a.sku });
    expect((await catalog.call.batchGetProducts({ ids: [a.id, b.id, randomUUID()] })).products.map((p) => p.id).sort()).toEqual([a.id, b.id].sort());
    const first = await catalog.call.listProducts({ pageSize: 1, pageToken: '', status: ProductStatus.PRODUCT_STATUS_UNSPECIFIED, q: '' });
    expect(first.products).toHaveLength(1);
    expect(first.nextPageToken).not.toBe('');
    const second = await catalog.call.listProducts({ pageSize: 1, pageToken: first.nextPageToken, status: ProductStatus.PRODUCT_STATUS_UNSPECIFIED, q: '' });
    expect(second.products[0]!.id).not.toBe(first.products[0]!.id);
    expect((await asManager(() => catalog.call.archiveProduct({ id: b.id }))).status).toBe(ProductStatus.PRODUCT_STATUS_ARCHIVED);
    const archived = await catalog.call.listProducts({ pageSize: 100, pageToken: '', status: ProductStatus.PRODUCT_STATUS_ARCHIVED, q: '' });
    expect(archived.products.map((p) => p.id)).toEqual([b.id]);
    expect(archived.nextPageToken).toBe('');
    expect(await asManager(() => catalog.call.updateProduct({ id: b.id, status: ProductStatus.PRODUCT_STATUS_ACTIVE, priceMinor: 2_500 }))).toMatchObject({ status: ProductStatus.PRODUCT_STATUS_ACTIVE, priceMinor: 2_500 });
    await expect(asManager(() => catalog.call.updateProduct({ id: b.id, status: ProductStatus.PRODUCT_STATUS_UNSPECIFIED }))).rejects.toMatchObject({ code: 'VALIDATION' });
    expect(await asManager(() => catalog.call.adjustStock({ id: a.id, delta: -2 }))).toMatchObject({ onHand: 5, available: 5 });
    expect(await asManager(() => catalog.call.adjustStock({ id: a.id, setOnHand: 9 }))).toMatchObject({ onHand: 9 });
    await expect(asManager(() => catalog.call.adjustStock({ id: a.id }))).rejects.toMatchObject({ code: 'VALIDATION' });
    await expect(catalog.call.listProducts({ pageSize: 101, pageToken: '', status: 0, q: '' })).rejects.toMatchObject({ code: 'VALIDATION', httpStatus: 400 });
    await expect(catalog.call.listProducts({ pageSize: 10, pageToken: 'nope', status: 0, q: '' })).rejects.toMatchObject({ code: 'VALIDATION', errors: [{ field: 'pageToken' }] });
    await expect(catalog.call.getProduct({ id: randomUUID() })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('cart and checkout round trip, replay flag, cancel; orders listed with a status filter', async () => {
    const p = await create(10);
    const customerId = randomUUID();
    const cart = await actingAs(customerId, () => carts.call.replaceCart({ customerId, lines: [{ productId: p.id, quantity: 2 }] }));
    expect(cart).toMatchObject({ customerId, lines: [{ productId: p.id, quantity: 2 }], subtotalMinor: 3_998, currency: 'EUR' });
    const placed = await actingAs(customerId, () => orders.call.checkout({ customerId, idempotencyKey: 'g-1', lines: [], customerEmail: 'buyer@example.com' }));
    expect(placed.replayed).toBe(false);
    expect(placed.order).toMatchObject({ customerId, status: OrderStatus.ORDER_STATUS_CONFIRMED, totalMinor: 3_998, currency: 'EUR', lines: [{ productId: p.id, quantity: 2, unitPriceMinor: 1_999, sku: p.sku, name: p.name }] });
    expect((await carts.call.getCart({ customerId })).lines).toEqual([]);
    const again = await orders.call.checkout({ customerId, idempotencyKey: 'g-1', lines: [], customerEmail: '' });
    expect(again).toMatchObject({ replayed: true, order: { id: placed.order!.id } });
    const cancelled = await orders.call.cancelOrder({ customerId, id: placed.order!.id });
    expect(cancelled.status).toBe(OrderStatus.ORDER_STATUS_CANCELLED);
    expect((await catalog.call.getProduct({ id: p.id })).available).toBe(10);
    const list = await orders.call.listOrders({ customerId, pageSize: 10, pageToken: '', status: OrderStatus.ORDER_STATUS_CANCELLED });
    expect(list.orders.map((o) => o.id)).toEqual([placed.order!.id]);
    expect((await orders.call.listOrders({ customerId, pageSize: 10, pageToken: '', status: OrderStatus.ORDER_STATUS_CONFIRMED })).orders).toEqual([]);
    expect(await carts.call.clearCart({ customerId })).toMatchObject({ lines: [], currency: '' });
  });

  it('refusals cross the wire with their code and reason', async () => {
    const p = await create(1);
    const customerId = randomUUID();
    const short = await orders.call.checkout({ customerId, idempotencyKey: 'r-1', lines: [{ productId: p.id, quantity: 2 }], customerEmail: '' }).catch((e: unknown) => e);
    expect(short).toMatchObject({ code: 'CONFLICT', httpStatus: 409, reason: 'commerce.insufficient_stock', errors: [{ field: 'lines[0].quantity' }] });
    // The reason is no field error of its own.
    expect((short as AppError).errors).toHaveLength(1);
    expect(reasonOf(short)).toBe(REASONS.insufficientStock);
    await orders.call.checkout({ customerId, idempotencyKey: 'r-2', lines: [{ productId: p.id, quantity: 1 }], customerEmail: '' });
    const reused = await orders.call.checkout({ customerId, idempotencyKey: 'r-2', lines: [{ productId: p.id, quantity: 1 }, { productId: randomUUID(), quantity: 1 }], customerEmail: '' }).catch((e: unknown) => e);
    expect(reasonOf(reused)).toBe(REASONS.idempotencyConflict);
    await asManager(() => catalog.call.archiveProduct({ id: p.id }));
    const gone = await carts.call.replaceCart({ customerId, lines: [{ productId: p.id, quantity: 1 }] }).catch((e: unknown) => e);
    expect(reasonOf(gone)).toBe(REASONS.productUnavailable);
    await expect(orders.call.getOrder({ customerId: randomUUID(), id: randomUUID() })).rejects.toMatchObject({ code: 'NOT_FOUND', httpStatus: 404 });
    await expect(orders.call.listOrders({ customerId, pageSize: 10, pageToken: '', status: 42 as commerceV1.OrderStatus })).rejects.toMatchObject({ code: 'VALIDATION' });
  });

  it('catalog writes need products.manage now (asked of the directory): no actor, a non-holder or a demoted one is FORBIDDEN; no directory, UNAVAILABLE', async () => {
    const p = await create(3);
    const demoted = randomUUID();
    access.grant(demoted, 'products.manage');
    await expect(actingAs(demoted, () => catalog.call.adjustStock({ id: p.id, delta: 1 }))).resolves.toMatchObject({ onHand: 4 });
    access.revoke(demoted, 'products.manage');
    for (const actor of [undefined, randomUUID(), demoted]) {
      await expect(actingAs(actor, () => catalog.call.adjustStock({ id: p.id, delta: 1 }))).rejects.toMatchObject({ code: 'FORBIDDEN', httpStatus: 403 });
      await expect(actingAs(actor, () => catalog.call.createProduct({ sku: `F-${randomUUID().slice(0, 8)}`, name: 'x', description: '', priceMinor: 1, currency: 'EUR', onHand: 0 }))).rejects.toMatchObject({ code: 'FORBIDDEN' });
    }
    access.down = true;
    try {
      await expect(asManager(() => catalog.call.archiveProduct({ id: p.id }))).rejects.toMatchObject({ code: 'UNAVAILABLE', httpStatus: 503 });
    } finally {
      access.down = false;
    }
    expect(await catalog.call.getProduct({ id: p.id })).toMatchObject({ onHand: 4, status: ProductStatus.PRODUCT_STATUS_ACTIVE });
  });

  it('a call naming another customer than its actor is FORBIDDEN', async () => {
    const [alice, mallory] = [randomUUID(), randomUUID()];
    await expect(actingAs(mallory, () => carts.call.getCart({ customerId: alice }))).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(actingAs(mallory, () => orders.call.listOrders({ customerId: alice, pageSize: 10, pageToken: '', status: 0 }))).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(actingAs(alice.toUpperCase(), () => carts.call.getCart({ customerId: alice }))).resolves.toMatchObject({ customerId: alice });
  });
});
