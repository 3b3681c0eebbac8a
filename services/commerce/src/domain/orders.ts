/** What an order is made of, computed from catalog data only (never from client prices). */
import { createHash } from 'node:crypto';
import type { EventPayload, SUBJECTS } from '@iam/contracts';
import type { Line, Order, OrderLine, Product } from './model';

export const byProductId = <T extends { productId: string }>(a: T, b: T): number => (a.productId < b.productId ? -1 : a.productId > b.productId ? 1 : 0);

/**
 * SHA-256 of a checkout request as it was made: its lines in product order, or "the cart" when
 * it named none (a replay after the cart was emptied is still the same request).
 */
export function requestFingerprint(lines: readonly Line[] | null): Buffer {
  const canonical = lines ? { lines: [...lines].sort(byProductId).map((l) => [l.productId, l.quantity]) } : { cart: true };
  return createHash('sha256').update(JSON.stringify(canonical)).digest();
}

/** Lines priced from the catalog, in product order (the order reservations are taken in). */
export function priceLines(lines: readonly Line[], products: ReadonlyMap<string, Product>): OrderLine[] {
  return [...lines].sort(byProductId).map((l) => {
    const p = products.get(l.productId);
    if (!p) throw new Error(`priceLines: product ${l.productId} was not loaded`);
    return { productId: l.productId, quantity: l.quantity, unitPriceMinor: p.priceMinor, sku: p.sku, name: p.name };
  });
}

export const totalOf = (lines: readonly OrderLine[]): number => lines.reduce((sum, l) => sum + l.quantity * l.unitPriceMinor, 0);

export function orderChanged(o: Order): EventPayload<typeof SUBJECTS.orderPlaced> {
  return {
    orderId: o.id,
    customerId: o.customerId,
    customerEmail: o.customerEmail,
    lines: o.lines.map((l) => ({ productId: l.productId, sku: l.sku, name: l.name, quantity: l.quantity, unitPriceMinor: l.unitPriceMinor })),
    totalMinor: o.totalMinor,
    currency: o.currency,
    placedAt: o.createdAt,
  };
}
