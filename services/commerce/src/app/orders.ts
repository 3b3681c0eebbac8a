/**
 * Order use cases. Checkout is all or nothing in one transaction: the idempotency key is claimed
 * first (a concurrent duplicate waits for this transaction, then replays its order), the
 * customer's cart is locked, the products are locked FOR SHARE (price and status hold still); a
 * line asking more than the last committed stock is refused there; the order, the emptied cart
 * and commerce.order.placed are written; then, last (the stock rows are locked from their UPDATE
 * to the commit, and a product's other checkouts wait on its row), each line's stock is reserved
 * in product-id order (no deadlocks between checkouts) by one conditional UPDATE, and a line that
 * cannot be reserved rolls everything back. Prices come only from the catalog.
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { AppError, event } from '@iam/platform';
import { idempotencyConflict, insufficientStock } from '../domain/errors';
import type { Order, OrderStatus } from '../domain/model';
import { orderChanged, priceLines, requestFingerprint, totalOf } from '../domain/orders';
import type { Stores, UnitOfWork } from '../domain/ports';
import { Violations, checkId, checkIdempotencyKey, checkLines, checkOptionalEmail, checkPageSize, decodePageToken, encodePageToken } from '../domain/rules';
import { assertSellable } from './carts';

export interface CheckoutInput {
  customerId: string;
  idempotencyKey: string;
  /** Empty: the customer's cart. Only productId and quantity are read. */
  lines: ReadonlyArray<{ productId: string; quantity: number }>;
  /** The buyer's email for the confirmation mail ('' when unknown). */
  customerEmail?: string;
}

export interface OrderPage {
  readonly orders: readonly Order[];
  readonly nextPageToken: string | null;
}

export interface OrderUseCases {
  /** `replayed`: the key was used before with the same request; this is the order it placed. */
  checkout(input: CheckoutInput): Promise<{ order: Order; replayed: boolean }>;
  get(customerId: string, id: string): Promise<Order>;
  list(customerId: string, query: { pageSize: number; pageToken: string; status?: OrderStatus }): Promise<OrderPage>;
  /** Releases the stock of a CONFIRMED order once; a cancelled order is returned unchanged. */
  cancel(customerId: string, id: string): Promise<Order>;
}

const notFound = (): AppError => AppError.notFound('The order does not exist.');

export function createOrderUseCases(deps: { uow: UnitOfWork; read: Stores }): OrderUseCases {
  return {
    async checkout(input) {
      const customerId = checkId(input.customerId, 'customerId');
      const v = new Violations();
      const key = checkIdempotencyKey(v, input.idempotencyKey);
      const given = checkLines(v, input.lines);
      const email = checkOptionalEmail(v, 'customerEmail', input.customerEmail ?? '');
      v.throwIfAny('The checkout request is not valid.');
      const fromCart = given.length === 0;
      const fingerprint = requestFingerprint(fromCart ? null : given);

      return deps.uow.run(async (tx) => {
        const orderId = randomUUID();
        const claim = await tx.idempotency.claim({ customerId, key, fingerprint, orderId });
        if (!claim.claimed) {
          if (!claim.fingerprint.equals(fingerprint)) throw idempotencyConflict();
          const first = await tx.orders.findById(customerId, claim.orderId);
          if (!first) throw new Error(`idempotency record of ${claim.orderId} without its order`);
          return { order: first, replayed: true };
        }

        const cart = await tx.carts.get(customerId, { forUpdate: true });
        const lines = fromCart ? (cart?.lines ?? []) : given;
        if (lines.length === 0) {
          throw AppError.validation('There is nothing to order: the cart is empty.', [{ field: 'lines', message: 'must not be empty when the cart is empty' }]);
        }
        const products = new Map((await tx.products.findByIds(lines.map((l) => l.productId), { forShare: true })).map((p) => [p.id, p]));
        const prefix = fromCart ? 'cart.lines' : 'lines';
        assertSellable(lines, products, prefix);

        const priced = priceLines(lines, products);
        const refuse = (line: (typeof priced)[number], available: number) => {
          const i = lines.findIndex((l) => l.productId === line.productId);
          return insufficientStock(`Not enough stock of ${line.sku}: ${available} available, ${line.quantity} asked.`, [
            { field: `${prefix}[${i}].quantity`, message: `exceeds the ${available} available` },
          ]);
        };
        // Sold out as last committed: refused before waiting on the stock's row lock (behind every
        // checkout of the product still in flight) or writing anything.
        for (const line of priced) {
          const available = products.get(line.productId)!.available;
          if (available < line.quantity) throw refuse(line, available);
        }

        const order = await tx.orders.insert({
          id: orderId,
          customerId,
          status: 'CONFIRMED',
          lines: priced,
          totalMinor: totalOf(priced),
          currency: products.get(priced[0]!.productId)!.currency,
          customerEmail: email,
        });
        await tx.carts.clear(customerId);
        // The event id is the order id: one placed event (and one confirmation mail) per order.
        await tx.publish([event(SUBJECTS.orderPlaced, orderChanged(order), order.id)]);
        // The reservations last: a stock row is locked from its UPDATE to the commit, and every
        // other checkout of that product waits for it; a line that cannot be reserved rolls all back.
        for (const line of priced) {
          if (await tx.stock.reserve(line.productId, line.quantity)) continue;
          throw refuse(line, (await tx.products.findById(line.productId))?.available ?? 0);
        }
        return { order, replayed: false };
      });
    },

    async get(customerId, id) {
      const order = await deps.read.orders.findById(checkId(customerId, 'customerId'), checkId(id));
      if (!order) throw notFound();
      return order;
    },

    async list(customerId, query) {
      const cid = checkId(customerId, 'customerId');
      const v = new Violations();
      const pageSize = checkPageSize(v, query.pageSize);
      const after = decodePageToken(v, query.pageToken);
      v.throwIfAny('The paging parameters are not valid.');
      const page = await deps.read.orders.list(cid, { pageSize, after, status: query.status });
      return { orders: page.items, nextPageToken: page.next ? encodePageToken(page.next) : null };
    },

    async cancel(customerId, id) {
      const cid = checkId(customerId, 'customerId');
      const oid = checkId(id);
      return deps.uow.run(async (tx) => {
        // Locked: a concurrent cancel waits here and then sees CANCELLED, so stock is released once.
        const order = await tx.orders.findById(cid, oid, { forUpdate: true });
        if (!order) throw notFound();
        if (order.status === 'CANCELLED') return order;
        await tx.orders.setStatus(oid, 'CANCELLED');
        // Only a CONFIRMED order holds stock (a PENDING one has reserved nothing yet).
        if (order.status === 'CONFIRMED') for (const l of order.lines) await tx.stock.release(l.productId, l.quantity);
        const cancelled = (await tx.orders.findById(cid, oid))!;
        await tx.publish([event(SUBJECTS.orderCancelled, orderChanged(cancelled))]);
        return cancelled;
      });
    },
  };
}
