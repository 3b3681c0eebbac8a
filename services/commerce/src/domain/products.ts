/**
 * What a catalog change changed, as its `commerce.product.*` event says it: the product's fields
 * before and after, and which differ. The subject names the change: a status change archives or
 * reactivates, an on-hand change adjusts stock, anything else updates.
 */
import { type EventPayload, SUBJECTS, type eventsV1 } from '@iam/contracts';
import type { Product } from './model';

export type ProductSubject =
  | typeof SUBJECTS.productCreated
  | typeof SUBJECTS.productUpdated
  | typeof SUBJECTS.productArchived
  | typeof SUBJECTS.productReactivated
  | typeof SUBJECTS.productStockAdjusted;

const FIELDS = ['sku', 'name', 'description', 'priceMinor', 'currency', 'status', 'onHand'] as const;

export function productState(p: Product): eventsV1.ProductState {
  return { sku: p.sku, name: p.name, description: p.description, priceMinor: p.priceMinor, currency: p.currency, status: p.status, onHand: p.onHand };
}

/** The event of a change from `before` (null: a new product) to `after`; null when no field differs. */
export function productChange(before: Product | null, after: Product): { subject: ProductSubject; payload: EventPayload<ProductSubject> } | null {
  const a = productState(after);
  if (!before) return { subject: SUBJECTS.productCreated, payload: { productId: after.id, after: a, before: undefined, changedFields: [] } };
  const b = productState(before);
  const changed = FIELDS.filter((f) => a[f] !== b[f]);
  if (changed.length === 0) return null;
  const subject = changed.includes('status')
    ? after.status === 'ARCHIVED'
      ? SUBJECTS.productArchived
      : SUBJECTS.productReactivated
    : changed.includes('onHand')
      ? SUBJECTS.productStockAdjusted
      : SUBJECTS.productUpdated;
  return { subject, payload: { productId: after.id, after: a, before: b, changedFields: [...changed] } };
}
