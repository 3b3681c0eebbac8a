/**
 * The commerce messages as the edge shows them: enums by name, empty strings as null, only the
 * fields of the edge's shapes (DESIGN §2 "Edge BFF"). One place for REST and GraphQL.
 */
import { commerceV1 } from '@iam/contracts';

const { ProductStatus, OrderStatus } = commerceV1;

export type ProductStatusName = 'ACTIVE' | 'ARCHIVED';
export type OrderStatusName = 'PENDING' | 'CONFIRMED' | 'CANCELLED';

const PRODUCT_STATUS: Record<ProductStatusName, commerceV1.ProductStatus> = {
  ACTIVE: ProductStatus.PRODUCT_STATUS_ACTIVE,
  ARCHIVED: ProductStatus.PRODUCT_STATUS_ARCHIVED,
};
const ORDER_STATUS: Record<OrderStatusName, commerceV1.OrderStatus> = {
  PENDING: OrderStatus.ORDER_STATUS_PENDING,
  CONFIRMED: OrderStatus.ORDER_STATUS_CONFIRMED,
  CANCELLED: OrderStatus.ORDER_STATUS_CANCELLED,
};

const nameOf = <N extends string, V>(table: Record<N, V>, value: V): N => {
  const hit = (Object.entries(table) as Array<[N, V]>).find(([, v]) => v === value);
  // A status this build does not know (a newer commerce) is an internal error, not a guess.
  if (!hit) throw new Error(`unknown commerce status ${String(value)}`);
  return hit[0];
};

/** A status filter (absent: every status). */
export const productStatusFilter = (s: ProductStatusName | undefined | null): commerceV1.ProductStatus =>
  s ? PRODUCT_STATUS[s] : ProductStatus.PRODUCT_STATUS_UNSPECIFIED;
export const orderStatusFilter = (s: OrderStatusName | undefined | null): commerceV1.OrderStatus => (s ? ORDER_STATUS[s] : OrderStatus.ORDER_STATUS_UNSPECIFIED);
export const productStatusValue = (s: ProductStatusName): commerceV1.ProductStatus => PRODUCT_STATUS[s];

/** A product as the REST routes and GraphQL show it. */
export function productJson(p: commerceV1.Product) {
  return {
    id: p.id,
    sku: p.sku,
    name: p.name,
    description: p.description,
    priceMinor: p.priceMinor,
    currency: p.currency,
    status: nameOf(PRODUCT_STATUS, p.status),
    available: p.available,
  };
}

/** GraphQL's Product: the public fields, and the stock detail its `stock` resolver guards. */
export function productNode(p: commerceV1.Product) {
  return { ...productJson(p), stock: { onHand: p.onHand, reserved: p.reserved, available: p.available } };
}
export type ProductNode = ReturnType<typeof productNode>;

/** An empty next-page token means the last page. */
export const nextToken = (t: string): string | null => (t === '' ? null : t);

export function cartNode(c: commerceV1.Cart) {
  return {
    customerId: c.customerId,
    lines: c.lines.map((l) => ({ productId: l.productId, quantity: l.quantity })),
    subtotalMinor: c.subtotalMinor,
    currency: c.currency === '' ? null : c.currency,
  };
}

export function orderNode(o: commerceV1.Order) {
  return {
    id: o.id,
    customerId: o.customerId,
    status: nameOf(ORDER_STATUS, o.status),
    lines: o.lines.map((l) => ({ productId: l.productId, quantity: l.quantity, unitPriceMinor: l.unitPriceMinor, sku: l.sku, name: l.name })),
    totalMinor: o.totalMinor,
    currency: o.currency,
    createdAt: o.createdAt,
    updatedAt: o.updatedAt,
  };
}
