/**
 * Cart use cases: one cart per customer, replaced whole. Lines must name products for sale in one
 * currency; stock is not checked here (checkout reserves it).
 */
import { AppError, type FieldError } from '@iam/platform';
import { productUnavailable } from '../domain/errors';
import type { Cart, Line, Product } from '../domain/model';
import type { Stores, UnitOfWork } from '../domain/ports';
import { Violations, checkId, checkLines } from '../domain/rules';

export interface CartUseCases {
  get(customerId: string): Promise<Cart>;
  replace(customerId: string, lines: ReadonlyArray<{ productId: string; quantity: number }>): Promise<Cart>;
  clear(customerId: string): Promise<Cart>;
}

/** The cart as shown: the subtotal at current catalog prices, when the lines share a currency. */
export function cartView(customerId: string, lines: readonly Line[], updatedAt: Date | null, products: readonly Product[]): Cart {
  const byId = new Map(products.map((p) => [p.id, p]));
  const priced = lines.map((l) => ({ line: l, product: byId.get(l.productId) }));
  const currencies = new Set(priced.map((x) => x.product?.currency));
  const single = currencies.size === 1 && !currencies.has(undefined);
  return {
    customerId,
    lines,
    subtotalMinor: single ? priced.reduce((sum, x) => sum + x.line.quantity * x.product!.priceMinor, 0) : 0,
    currency: single ? [...currencies][0]! : '',
    updatedAt,
  };
}

/**
 * Every line names an ACTIVE product (else PRODUCT_UNAVAILABLE) and they share one currency
 * (else VALIDATION). `prefix` names the lines in field errors (`lines`, `cart.lines`).
 */
export function assertSellable(lines: readonly Line[], products: ReadonlyMap<string, Product>, prefix = 'lines'): void {
  const unavailable: FieldError[] = [];
  lines.forEach((l, i) => {
    const p = products.get(l.productId);
    if (!p) unavailable.push({ field: `${prefix}[${i}].productId`, message: 'does not exist' });
    else if (p.status !== 'ACTIVE') unavailable.push({ field: `${prefix}[${i}].productId`, message: 'is archived' });
  });
  if (unavailable.length > 0) throw productUnavailable(unavailable);
  const currencies = [...new Set(lines.map((l) => products.get(l.productId)!.currency))].sort();
  if (currencies.length > 1) {
    throw AppError.validation(`One order has one currency; these products are priced in ${currencies.join(', ')}.`, [
      { field: prefix, message: `mix currencies (${currencies.join(', ')})` },
    ]);
  }
}

export function createCartUseCases(deps: { uow: UnitOfWork; read: Stores }): CartUseCases {
  const show = async (s: Stores, customerId: string): Promise<Cart> => {
    const cart = await s.carts.get(customerId);
    if (!cart) return { customerId, lines: [], subtotalMinor: 0, currency: '', updatedAt: null };
    return cartView(customerId, cart.lines, cart.updatedAt, await s.products.findByIds(cart.lines.map((l) => l.productId)));
  };

  return {
    get: (customerId) => show(deps.read, checkId(customerId, 'customerId')),

    async replace(customerId, input) {
      const id = checkId(customerId, 'customerId');
      const v = new Violations();
      const lines = checkLines(v, input);
      v.throwIfAny('The cart lines are not valid.');
      return deps.uow.run(async (tx) => {
        const products = await tx.products.findByIds(lines.map((l) => l.productId));
        assertSellable(lines, new Map(products.map((p) => [p.id, p])));
        await tx.carts.replace(id, lines);
        return show(tx, id);
      });
    },

    async clear(customerId) {
      const id = checkId(customerId, 'customerId');
      return deps.uow.run(async (tx) => {
        await tx.carts.clear(id);
        return show(tx, id);
      });
    },
  };
}
