/** Ports the commerce use cases need: one store per table group, all bound to one EntityManager. */
import type { UnitOfWork as PlatformUnitOfWork } from '@iam/platform';
import type { Line, Order, OrderQuery, OrderStatus, Page, Product, ProductQuery, ProductStatus } from './model';

export interface NewProduct {
  readonly id: string;
  readonly sku: string;
  readonly name: string;
  readonly description: string;
  readonly priceMinor: number;
  readonly currency: string;
  readonly onHand: number;
}

export type ProductPatch = Partial<{ sku: string; name: string; description: string; priceMinor: number; currency: string; status: ProductStatus }>;

export interface ProductStore {
  /**
   * Inserts the product and its stock row; throws CONFLICT (field sku) on a taken sku, CONFLICT
   * (field name) when an active product has a name that looks the same (the same lookalikeKey of
   * @iam/platform, case aside: the same name too).
   */
  insert(p: NewProduct): Promise<void>;
  /** Applies the fields; false for an unknown id; throws CONFLICT as insert does (a reactivated product's name included). */
  update(id: string, patch: ProductPatch): Promise<boolean>;
  findById(id: string, opts?: { forUpdate?: boolean }): Promise<Product | null>;
  /**
   * The products with these ids, sorted by id. `forShare` locks them FOR SHARE in that order, so
   * their price and status cannot change until the transaction ends.
   */
  findByIds(ids: readonly string[], opts?: { forShare?: boolean }): Promise<Product[]>;
  list(query: ProductQuery): Promise<Page<Product>>;
  count(): Promise<number>;
}

export type StockChange = { readonly delta: number } | { readonly setOnHand: number };

export interface StockStore {
  /**
   * Atomically takes `quantity` of an ACTIVE product's available stock; false (nothing taken)
   * when fewer are available, or the product is unknown or archived.
   */
  reserve(productId: string, quantity: number): Promise<boolean>;
  /** Gives back what `reserve` took. */
  release(productId: string, quantity: number): Promise<void>;
  /** Changes on_hand unless it would fall below reserved (or 0, or above the maximum): false then. */
  adjust(productId: string, change: StockChange, max: number): Promise<boolean>;
}

export interface CartStore {
  /**
   * The customer's lines in order and when they were last written; null for no cart. `forUpdate`
   * locks the cart row, creating an empty one when there is none (checkout: a concurrent replace
   * waits, so no line is cleared unseen).
   */
  get(customerId: string, opts?: { forUpdate?: boolean }): Promise<{ lines: Line[]; updatedAt: Date } | null>;
  /** Replaces every line (locks the cart row, so concurrent replaces apply one after the other). */
  replace(customerId: string, lines: readonly Line[]): Promise<void>;
  clear(customerId: string): Promise<void>;
}

export type NewOrder = Omit<Order, 'createdAt' | 'updatedAt'>;

export interface OrderStore {
  /** Writes the order and its lines; created_at and updated_at are the transaction's time. */
  insert(order: NewOrder): Promise<Order>;
  /**
   * The customer's order; another customer's is null, as a missing one. `forUpdate` locks it: a
   * concurrent cancel waits, then reads the order as the first one left it.
   */
  findById(customerId: string, id: string, opts?: { forUpdate?: boolean }): Promise<Order | null>;
  list(customerId: string, query: OrderQuery): Promise<Page<Order>>;
  setStatus(id: string, status: OrderStatus): Promise<void>;
}

export type Claim = { readonly claimed: true } | { readonly claimed: false; readonly fingerprint: Buffer; readonly orderId: string };

export interface IdempotencyStore {
  /**
   * Claims (customer, key) for the order about to be written: inserted with ON CONFLICT DO
   * NOTHING, so a concurrent claim of the same key waits until the first transaction ends, then
   * sees its record (committed) or claims the key itself (the first rolled back).
   */
  claim(record: { customerId: string; key: string; fingerprint: Buffer; orderId: string }): Promise<Claim>;
}

export interface Stores {
  readonly products: ProductStore;
  readonly stock: StockStore;
  readonly carts: CartStore;
  readonly orders: OrderStore;
  readonly idempotency: IdempotencyStore;
}

/** Runs `fn` in one database transaction; events it publishes go to the outbox in that transaction. */
export type UnitOfWork = PlatformUnitOfWork<Stores>;

