/**
 * Catalog use cases: reading products (public), and their administration. Every administrative
 * write is authorized on the caller's current rights (products.manage or Administrator, as the
 * directory stores them now, not as the token says: a demoted caller is refused), then made in one
 * transaction with its `commerce.product.*` event (before and after of every changed field; the
 * caller's request context as headers) in the outbox. A write that changes nothing publishes
 * nothing. Stock changes never take on_hand below what placed orders hold.
 */
import { randomUUID } from 'node:crypto';
import { type AccessCheck, AppError, type InTransaction, event, isUuid, requireCurrentPermission } from '@iam/platform';
import { insufficientStock } from '../domain/errors';
import type { Product, ProductStatus } from '../domain/model';
import type { ProductPatch, StockChange, Stores, UnitOfWork } from '../domain/ports';
import { productChange } from '../domain/products';
import {
  BATCH_IDS_MAX,
  DESCRIPTION_MAX_LENGTH,
  NAME_MAX_LENGTH,
  ON_HAND_MAX,
  Violations,
  checkCurrency,
  checkDelta,
  checkId,
  checkOnHand,
  checkPageSize,
  checkPrice,
  checkSearch,
  checkSku,
  checkText,
  decodePageToken,
  encodePageToken,
} from '../domain/rules';

export interface ProductInput {
  sku: string;
  name: string;
  description?: string;
  priceMinor: number;
  currency: string;
  onHand?: number;
}

export type ProductUpdate = Partial<{ sku: string; name: string; description: string; priceMinor: number; currency: string; status: ProductStatus }>;

export interface ProductPage {
  readonly products: readonly Product[];
  /** null on the last page. */
  readonly nextPageToken: string | null;
}

export interface CatalogUseCases {
  list(query: { pageSize: number; pageToken: string; status?: ProductStatus; q: string }): Promise<ProductPage>;
  get(id: string): Promise<Product>;
  /** The products among `ids` that exist (unknown ids are left out). */
  batchGet(ids: readonly string[]): Promise<Product[]>;
  /*
   * Administration. `actor` is the end user the call names (its token's `sub`; undefined: nobody,
   * who holds nothing): FORBIDDEN unless they hold products.manage now, UNAVAILABLE when the
   * directory cannot say (nothing is written then); both before the input is looked at.
   */
  create(actor: string | undefined, input: ProductInput): Promise<Product>;
  update(actor: string | undefined, id: string, input: ProductUpdate): Promise<Product>;
  /** Idempotent. */
  archive(actor: string | undefined, id: string): Promise<Product>;
  /** Exactly one of `delta` and `setOnHand`. CONFLICT (INSUFFICIENT_STOCK) below what is reserved. */
  adjustStock(actor: string | undefined, id: string, change: { delta?: number; setOnHand?: number }): Promise<Product>;
}

/** The permission catalog administration needs (a built-in of the directory; Administrator passes). */
export const PRODUCTS_MANAGE = 'products.manage';

const notFound = (): AppError => AppError.notFound('The product does not exist.');

function checkPatch(input: ProductUpdate): ProductPatch {
  const v = new Violations();
  const patch: { -readonly [K in keyof ProductPatch]: ProductPatch[K] } = {};
  if (input.sku !== undefined) patch.sku = checkSku(v, 'sku', input.sku);
  if (input.name !== undefined) patch.name = checkText(v, 'name', input.name, { max: NAME_MAX_LENGTH, required: true });
  if (input.description !== undefined) patch.description = checkText(v, 'description', input.description, { max: DESCRIPTION_MAX_LENGTH, required: false, multiline: true });
  if (input.priceMinor !== undefined) patch.priceMinor = checkPrice(v, 'priceMinor', input.priceMinor);
  if (input.currency !== undefined) patch.currency = checkCurrency(v, 'currency', input.currency);
  if (input.status !== undefined) {
    if (input.status !== 'ACTIVE' && input.status !== 'ARCHIVED') v.add('status', 'must be ACTIVE or ARCHIVED');
    patch.status = input.status;
  }
  v.throwIfAny();
  return patch;
}

/** The change's event into the transaction's outbox (none when nothing changed). */
async function publishChange(tx: InTransaction<Stores>, before: Product | null, after: Product): Promise<void> {
  const change = productChange(before, after);
  if (change) await tx.publish([event(change.subject, change.payload)]);
}

export function createCatalogUseCases(deps: { uow: UnitOfWork; read: Stores; access: AccessCheck }): CatalogUseCases {
  const authorize = (actor: string | undefined) => requireCurrentPermission(deps.access, actor, PRODUCTS_MANAGE);

  const apply = (id: string, patch: ProductPatch): Promise<Product> =>
    deps.uow.run(async (tx) => {
      const before = await tx.products.findById(id, { forUpdate: true });
      if (!before) throw notFound();
      const changed = Object.entries(patch).filter(([k, value]) => before[k as keyof Product] !== value);
      if (changed.length === 0) return before;
      await tx.products.update(id, Object.fromEntries(changed));
      const after = (await tx.products.findById(id))!;
      await publishChange(tx, before, after);
      return after;
    });

  return {
    async list(query) {
      const v = new Violations();
      const pageSize = checkPageSize(v, query.pageSize);
      const after = decodePageToken(v, query.pageToken);
      const q = checkSearch(v, query.q);
      v.throwIfAny('The paging or search parameters are not valid.');
      const page = await deps.read.products.list({ pageSize, after, status: query.status, q });
      return { products: page.items, nextPageToken: page.next ? encodePageToken(page.next) : null };
    },

    async get(id) {
      const p = await deps.read.products.findById(checkId(id));
      if (!p) throw notFound();
      return p;
    },

    async batchGet(ids) {
      if (ids.length > BATCH_IDS_MAX) throw AppError.validation(`At most ${BATCH_IDS_MAX} ids per call.`, [{ field: 'ids', message: `must have at most ${BATCH_IDS_MAX} ids` }]);
      const v = new Violations();
      ids.forEach((id, i) => isUuid(id) || v.add(`ids[${i}]`, 'must be a UUID'));
      v.throwIfAny('The ids are not valid.');
      return deps.read.products.findByIds(ids.map((id) => id.toLowerCase()));
    },

    async create(actor, input) {
      await authorize(actor);
      const v = new Violations();
      const product = {
        id: randomUUID(),
        sku: checkSku(v, 'sku', input.sku),
        name: checkText(v, 'name', input.name, { max: NAME_MAX_LENGTH, required: true }),
        description: checkText(v, 'description', input.description ?? '', { max: DESCRIPTION_MAX_LENGTH, required: false, multiline: true }),
        priceMinor: checkPrice(v, 'priceMinor', input.priceMinor),
        currency: checkCurrency(v, 'currency', input.currency),
        onHand: checkOnHand(v, 'onHand', input.onHand ?? 0),
      };
      v.throwIfAny();
      return deps.uow.run(async (tx) => {
        await tx.products.insert(product);
        const created = (await tx.products.findById(product.id))!;
        await publishChange(tx, null, created);
        return created;
      });
    },

    async update(actor, id, input) {
      await authorize(actor);
      const pid = checkId(id);
      return apply(pid, checkPatch(input));
    },

    async archive(actor, id) {
      await authorize(actor);
      return apply(checkId(id), { status: 'ARCHIVED' });
    },

    async adjustStock(actor, id, change) {
      await authorize(actor);
      const pid = checkId(id);
      const v = new Violations();
      let c: StockChange = { delta: 0 };
      if ((change.delta === undefined) === (change.setOnHand === undefined)) v.add('change', 'must be exactly one of delta and setOnHand');
      else if (change.delta !== undefined) c = { delta: checkDelta(v, 'delta', change.delta) };
      else c = { setOnHand: checkOnHand(v, 'setOnHand', change.setOnHand ?? 0) };
      v.throwIfAny();
      const field = 'delta' in c ? 'delta' : 'setOnHand';
      return deps.uow.run(async (tx) => {
        // Locked: adjustments of one product apply one after the other, each from the on hand the
        // previous one left (the event's before).
        const before = await tx.products.findById(pid, { forUpdate: true });
        if (!before) throw notFound();
        if (await tx.stock.adjust(pid, c, ON_HAND_MAX)) {
          const after = (await tx.products.findById(pid))!;
          await publishChange(tx, before, after);
          return after;
        }
        const p = (await tx.products.findById(pid))!;
        const next = 'delta' in c ? p.onHand + c.delta : c.setOnHand;
        if (next > ON_HAND_MAX) throw AppError.validation(`On hand cannot exceed ${ON_HAND_MAX}.`, [{ field, message: `would leave on hand ${next}, above ${ON_HAND_MAX}` }]);
        throw insufficientStock(`On hand cannot fall below the ${p.reserved} units reserved by placed orders.`, [
          { field, message: `would leave on hand ${next}, below the ${p.reserved} reserved` },
        ]);
      });
    },
  };
}
