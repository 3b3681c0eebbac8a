/** The commerce context's records as use cases see them. Money is an integer of minor units. */

export type ProductStatus = 'ACTIVE' | 'ARCHIVED';

export interface Product {
  readonly id: string;
  /** Upper-case; unique. */
  readonly sku: string;
  readonly name: string;
  readonly description: string;
  readonly priceMinor: number;
  /** ISO 4217 (3 upper-case letters). */
  readonly currency: string;
  readonly status: ProductStatus;
  readonly onHand: number;
  /** Held by placed orders; never more than onHand. */
  readonly reserved: number;
  /** onHand − reserved. */
  readonly available: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface Line {
  readonly productId: string;
  readonly quantity: number;
}

export interface Cart {
  readonly customerId: string;
  /** In the order they were given. */
  readonly lines: readonly Line[];
  /** Sum of quantity × current catalog price (0 when the lines mix currencies). */
  readonly subtotalMinor: number;
  /** The lines' currency; '' for an empty cart or mixed currencies. */
  readonly currency: string;
  /** null for a cart never written. */
  readonly updatedAt: Date | null;
}

/**
 * PENDING exists for a future payment step and is not produced today: checkout reserves the
 * stock in the transaction that writes the order, so a placed order is CONFIRMED at once.
 */
export type OrderStatus = 'PENDING' | 'CONFIRMED' | 'CANCELLED';

export interface OrderLine extends Line {
  /** The catalog price when the order was placed. */
  readonly unitPriceMinor: number;
  readonly sku: string;
  readonly name: string;
}

export interface Order {
  readonly id: string;
  readonly customerId: string;
  readonly status: OrderStatus;
  /** Sorted by product id. */
  readonly lines: readonly OrderLine[];
  readonly totalMinor: number;
  readonly currency: string;
  /** The buyer's email given at checkout ('' when none). */
  readonly customerEmail: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A keyset position: the (created_at, id) of the last row of a page, created_at in microseconds. */
export interface Cursor {
  readonly createdUs: string;
  readonly id: string;
}

export interface PageQuery {
  readonly pageSize: number;
  readonly after?: Cursor;
}

export interface ProductQuery extends PageQuery {
  readonly status?: ProductStatus;
  /** Case-insensitive substring of sku, name or description; matched literally. */
  readonly q?: string;
}

export interface OrderQuery extends PageQuery {
  readonly status?: OrderStatus;
}

export interface Page<T> {
  readonly items: readonly T[];
  /** Position after the last item, or null on the last page. */
  readonly next: Cursor | null;
}
