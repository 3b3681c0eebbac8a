/** Public webhook types made from commerce's events: orders and the catalog. */
import { type ProductState, SUBJECTS, decodeEvent, type EventSubject } from '../events';
import { changesOf, type View } from './changes';
import { CHANGES, arr, int, nullable, obj, str, time, uuid } from './schema';
import type { CatalogEntry } from './types';

const ORDER = {
  id: uuid('The order id'),
  customerId: uuid('The buyer (a user id)'),
  customerEmail: nullable(str('The buyer’s email when known')),
  lines: arr(obj({ productId: uuid(), sku: str(), name: str(), quantity: int(), unitPriceMinor: int('Catalog price when the order was placed, in minor units') })),
  totalMinor: int(),
  currency: str('ISO 4217'),
  placedAt: time(),
};
const exampleOrder = {
  id: '3e2d1c0b-9a8f-4e7d-8c6b-5a4f3e2d1c0b',
  customerId: '5b0e2c51-3c55-4c3e-9b5e-3f7f2f6a8c11',
  customerEmail: 'ann@example.com',
  lines: [{ productId: '7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d', sku: 'MUG-01', name: 'Mug', quantity: 2, unitPriceMinor: 1250 }],
  totalMinor: 2500,
  currency: 'EUR',
  placedAt: '2026-01-15T10:30:00.000Z',
};

function orderEntry(type: string, subject: typeof SUBJECTS.orderPlaced, description: string): CatalogEntry {
  return {
    type,
    version: 1,
    description,
    subject,
    schema: obj(ORDER),
    example: exampleOrder,
    toData: (p) => {
      const e = decodeEvent(subject, p);
      return {
        id: e.orderId,
        customerId: e.customerId,
        customerEmail: e.customerEmail || null,
        lines: e.lines.map((l) => ({ productId: l.productId, sku: l.sku, name: l.name, quantity: l.quantity, unitPriceMinor: l.unitPriceMinor })),
        totalMinor: e.totalMinor,
        currency: e.currency,
        placedAt: (e.placedAt ?? new Date(0)).toISOString(),
      };
    },
  };
}

const PRODUCT_FIELDS = ['sku', 'name', 'description', 'priceMinor', 'currency', 'status', 'onHand'] as const;
const PRODUCT = { id: uuid('The product id'), sku: str(), name: str(), description: str(), priceMinor: int(), currency: str(), status: { enum: ['ACTIVE', 'ARCHIVED'] }, onHand: int() };
const exampleProduct = { id: '7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d', sku: 'MUG-01', name: 'Mug', description: 'A mug', priceMinor: 1250, currency: 'EUR', status: 'ACTIVE', onHand: 40 };
const productView = (p: ProductState | undefined): View => (p ? { sku: p.sku, name: p.name, description: p.description, priceMinor: p.priceMinor, currency: p.currency, status: p.status, onHand: p.onHand } : {});

function productEntry(type: string, subject: EventSubject, description: string, created: boolean): CatalogEntry {
  return {
    type,
    version: 1,
    description,
    subject,
    schema: obj(created ? PRODUCT : { ...PRODUCT, changes: CHANGES }),
    example: created ? exampleProduct : { ...exampleProduct, onHand: 38, changes: [{ field: 'onHand', before: 40, after: 38 }] },
    toData: (p) => {
      const e = decodeEvent(subject as typeof SUBJECTS.productCreated, p);
      const after = productView(e.after);
      if (created) return { id: e.productId, ...after };
      return { id: e.productId, ...after, changes: changesOf(e.changedFields.length > 0 ? e.changedFields : [...PRODUCT_FIELDS], e.before ? productView(e.before) : undefined, after) };
    },
  };
}

export const COMMERCE_TYPES: readonly CatalogEntry[] = [
  orderEntry('order.placed', SUBJECTS.orderPlaced, 'An order was placed (checkout): its lines at catalog prices.'),
  orderEntry('order.cancelled', SUBJECTS.orderCancelled as typeof SUBJECTS.orderPlaced, 'An order was cancelled; its stock reservation was released.'),
  productEntry('product.created', SUBJECTS.productCreated, 'A product was added to the catalog.', true),
  productEntry('product.updated', SUBJECTS.productUpdated, "A product's sku, name, description, price or currency changed.", false),
  productEntry('product.archived', SUBJECTS.productArchived, 'A product was archived (no longer sold).', false),
  productEntry('product.reactivated', SUBJECTS.productReactivated, 'An archived product was put back on sale.', false),
  productEntry('product.stock_adjusted', SUBJECTS.productStockAdjusted, "A product's stock on hand changed.", false),
];
