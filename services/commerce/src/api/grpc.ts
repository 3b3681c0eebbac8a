/** gRPC handlers: proto messages in, use cases, proto messages out. No rules live here. */
import { commerceV1 } from '@iam/contracts';
import { AppError, type CallContext, type HandlerDeps, type ServiceBinding, actorOf, bindService } from '@iam/platform';
import type { CommerceUseCases } from '../app/use-cases';
import type { Cart, Order, OrderStatus, Product, ProductStatus } from '../domain/model';

const { ProductStatus: PS, OrderStatus: OS } = commerceV1;

const PRODUCT_STATUS: Record<ProductStatus, commerceV1.ProductStatus> = { ACTIVE: PS.PRODUCT_STATUS_ACTIVE, ARCHIVED: PS.PRODUCT_STATUS_ARCHIVED };
const ORDER_STATUS: Record<OrderStatus, commerceV1.OrderStatus> = {
  PENDING: OS.ORDER_STATUS_PENDING,
  CONFIRMED: OS.ORDER_STATUS_CONFIRMED,
  CANCELLED: OS.ORDER_STATUS_CANCELLED,
};

/** A proto enum value back to the domain's name; UNSPECIFIED → undefined; unknown numbers → VALIDATION. */
function fromEnum<T extends string>(table: Record<T, number>, value: number, field: string): T | undefined {
  if (value === 0) return undefined;
  const found = (Object.entries(table) as Array<[T, number]>).find(([, n]) => n === value);
  if (!found) throw AppError.validation(`Unknown ${field}.`, [{ field, message: `must be one of ${Object.keys(table).join(', ')}` }]);
  return found[0];
}

const toProduct = (p: Product): commerceV1.Product => ({ ...p, status: PRODUCT_STATUS[p.status] });

const toCart = (c: Cart): commerceV1.Cart => ({
  customerId: c.customerId,
  lines: c.lines.map((l) => ({ productId: l.productId, quantity: l.quantity })),
  subtotalMinor: c.subtotalMinor,
  currency: c.currency,
  updatedAt: c.updatedAt ?? undefined,
});

const toOrder = (o: Order): commerceV1.Order => ({
  id: o.id,
  customerId: o.customerId,
  status: ORDER_STATUS[o.status],
  lines: o.lines.map((l) => ({ productId: l.productId, quantity: l.quantity, unitPriceMinor: l.unitPriceMinor, sku: l.sku, name: l.name })),
  totalMinor: o.totalMinor,
  currency: o.currency,
  createdAt: o.createdAt,
  updatedAt: o.updatedAt,
});

/**
 * The customer a cart or order call acts for. The gateway sets `customer_id` from the verified
 * token; when its call assertion also names the caller, the two must agree.
 */
function customer(ctx: CallContext, customerId: string): string {
  const actor = actorOf(ctx);
  if (actor !== undefined && actor.toLowerCase() !== customerId.toLowerCase()) {
    throw AppError.forbidden('A customer acts only on its own cart and orders.');
  }
  return customerId;
}

export function commerceGrpc(uc: CommerceUseCases, deps: HandlerDeps): ServiceBinding[] {
  return [
    bindService(
      commerceV1.CatalogServiceService,
      {
        listProducts: async (r) => {
          const page = await uc.catalog.list({ pageSize: r.pageSize, pageToken: r.pageToken, status: fromEnum(PRODUCT_STATUS, r.status, 'status'), q: r.q });
          return { products: page.products.map(toProduct), nextPageToken: page.nextPageToken ?? '' };
        },
        getProduct: async (r) => toProduct(await uc.catalog.get(r.id)),
        batchGetProducts: async (r) => ({ products: (await uc.catalog.batchGet(r.ids)).map(toProduct) }),
        createProduct: async (r, ctx) => toProduct(await uc.catalog.create(actorOf(ctx), r)),
        updateProduct: async (r, ctx) =>
          toProduct(
            await uc.catalog.update(actorOf(ctx), r.id, {
              sku: r.sku,
              name: r.name,
              description: r.description,
              priceMinor: r.priceMinor,
              currency: r.currency,
              status: r.status === undefined ? undefined : (fromEnum(PRODUCT_STATUS, r.status, 'status') ?? ('UNSPECIFIED' as ProductStatus)),
            }),
          ),
        archiveProduct: async (r, ctx) => toProduct(await uc.catalog.archive(actorOf(ctx), r.id)),
        adjustStock: async (r, ctx) => toProduct(await uc.catalog.adjustStock(actorOf(ctx), r.id, { delta: r.delta, setOnHand: r.setOnHand })),
      },
      deps,
      ['gateway'],
    ),
    bindService(
      commerceV1.CartServiceService,
      {
        getCart: async (r, ctx) => toCart(await uc.carts.get(customer(ctx, r.customerId))),
        replaceCart: async (r, ctx) => toCart(await uc.carts.replace(customer(ctx, r.customerId), r.lines)),
        clearCart: async (r, ctx) => toCart(await uc.carts.clear(customer(ctx, r.customerId))),
      },
      deps,
      ['gateway'],
    ),
    bindService(
      commerceV1.OrderServiceService,
      {
        checkout: async (r, ctx) => {
          const { order, replayed } = await uc.orders.checkout({
            customerId: customer(ctx, r.customerId),
            idempotencyKey: r.idempotencyKey,
            lines: r.lines,
            customerEmail: r.customerEmail,
          });
          return { order: toOrder(order), replayed };
        },
        getOrder: async (r, ctx) => toOrder(await uc.orders.get(customer(ctx, r.customerId), r.id)),
        listOrders: async (r, ctx) => {
          const page = await uc.orders.list(customer(ctx, r.customerId), {
            pageSize: r.pageSize,
            pageToken: r.pageToken,
            status: fromEnum(ORDER_STATUS, r.status, 'status'),
          });
          return { orders: page.orders.map(toOrder), nextPageToken: page.nextPageToken ?? '' };
        },
        cancelOrder: async (r, ctx) => toOrder(await uc.orders.cancel(customer(ctx, r.customerId), r.id)),
      },
      deps,
      ['gateway'],
    ),
  ];
}
