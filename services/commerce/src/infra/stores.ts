/**
 * PostgreSQL implementations of the commerce stores, bound to an EntityManager (a transaction or
 * the data source). All SQL is parameterised; search text is LIKE-escaped; pages are keyset
 * pages on (created_at, id), the cursor's created_at in microseconds (exact, unlike a JS Date).
 */
import { AppError, UNIQUE_VIOLATION, escapeLike, lookalikeKey, pgConstraint, pgErrorCode } from '@iam/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { Cursor, Line, Order, OrderLine, OrderQuery, OrderStatus, Page, Product, ProductQuery, ProductStatus } from '../domain/model';
import type { CartStore, Claim, IdempotencyStore, NewOrder, NewProduct, OrderStore, ProductPatch, ProductStore, StockChange, StockStore, Stores } from '../domain/ports';

/** Rows updated by an UPDATE through EntityManager.query (which answers [rows, count]). */
const affected = (result: unknown): number => (result as [unknown, number])[1];

/** A taken sku, or an active product's name that looks like another one's (its lookalike key, migration 1764600000200): CONFLICT. */
async function mapProductConflict<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (pgErrorCode(err) === UNIQUE_VIOLATION && pgConstraint(err) === 'uq_products_sku') {
      throw AppError.conflict('A product with this sku already exists.', [{ field: 'sku', message: 'is already taken' }]);
    }
    if (pgErrorCode(err) === UNIQUE_VIOLATION && pgConstraint(err) === 'uq_products_name_skeleton_active') {
      throw AppError.conflict('An active product with this name, or one that looks the same, already exists.', [{ field: 'name', message: 'looks like a name already taken' }]);
    }
    throw err;
  }
}

/** `created_at` of a row as microseconds since the epoch (a string: beyond 2^53 one day). */
const CREATED_US = (alias: string) => `(extract(epoch from ${alias}.created_at) * 1000000)::bigint::text AS created_us`;
/** `(created_at, id) <op> cursor`, the cursor's two values pushed onto params. */
function afterCursor(alias: string, op: '>' | '<', c: Cursor, params: unknown[]): string {
  params.push(c.createdUs, c.id);
  return `(${alias}.created_at, ${alias}.id) ${op} (timestamptz 'epoch' + $${params.length - 1}::bigint * interval '1 microsecond', $${params.length}::uuid)`;
}

function page<R extends { created_us: string; id: string }, T>(rows: R[], pageSize: number, map: (r: R) => T): Page<T> {
  const more = rows.length > pageSize;
  const kept = more ? rows.slice(0, pageSize) : rows;
  const last = kept[kept.length - 1];
  return { items: kept.map(map), next: more && last ? { createdUs: last.created_us, id: last.id } : null };
}

// ---------------------------------------------------------------------------

interface ProductRowSql {
  id: string;
  sku: string;
  name: string;
  description: string;
  price_minor: string;
  currency: string;
  status: ProductStatus;
  on_hand: number;
  reserved: number;
  created_at: Date;
  updated_at: Date;
  created_us: string;
}

const PRODUCT_SELECT = `
  SELECT p.id, p.sku, p.name, p.description, p.price_minor, p.currency, p.status, s.on_hand, s.reserved,
         p.created_at, p.updated_at, ${CREATED_US('p')}
    FROM products p JOIN stock s ON s.product_id = p.id`;

function toProduct(r: ProductRowSql): Product {
  return {
    id: r.id,
    sku: r.sku,
    name: r.name,
    description: r.description,
    priceMinor: Number(r.price_minor),
    currency: r.currency,
    status: r.status,
    onHand: r.on_hand,
    reserved: r.reserved,
    available: r.on_hand - r.reserved,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

const PRODUCT_COLUMNS: Record<keyof ProductPatch, string> = {
  sku: 'sku',
  name: 'name',
  description: 'description',
  priceMinor: 'price_minor',
  currency: 'currency',
  status: 'status',
};

class PgProductStore implements ProductStore {
  constructor(private readonly m: EntityManager) {}

  async insert(p: NewProduct): Promise<void> {
    await mapProductConflict(() =>
      this.m.query(
        `INSERT INTO products (id, sku, name, name_skeleton, description, price_minor, currency) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [p.id, p.sku, p.name, lookalikeKey(p.name), p.description, p.priceMinor, p.currency],
      ),
    );
    await this.m.query('INSERT INTO stock (product_id, on_hand) VALUES ($1, $2)', [p.id, p.onHand]);
  }

  async update(id: string, patch: ProductPatch): Promise<boolean> {
    const sets: string[] = [];
    const params: unknown[] = [id];
    for (const [k, col] of Object.entries(PRODUCT_COLUMNS)) {
      const v = patch[k as keyof ProductPatch];
      if (v === undefined) continue;
      params.push(v);
      sets.push(`${col} = $${params.length}`);
    }
    if (patch.name !== undefined) {
      params.push(lookalikeKey(patch.name));
      sets.push(`name_skeleton = $${params.length}`);
    }
    const n = affected(await mapProductConflict(() => this.m.query(`UPDATE products SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE id = $1`, params)));
    return n > 0;
  }

  async findById(id: string, opts: { forUpdate?: boolean } = {}): Promise<Product | null> {
    const [r] = await this.m.query<ProductRowSql[]>(`${PRODUCT_SELECT} WHERE p.id = $1 ${opts.forUpdate ? 'FOR UPDATE OF p' : ''}`, [id]);
    return r ? toProduct(r) : null;
  }

  async findByIds(ids: readonly string[], opts: { forShare?: boolean } = {}): Promise<Product[]> {
    if (ids.length === 0) return [];
    const rows = await this.m.query<ProductRowSql[]>(`${PRODUCT_SELECT} WHERE p.id = ANY($1::uuid[]) ORDER BY p.id ${opts.forShare ? 'FOR SHARE OF p' : ''}`, [
      [...new Set(ids)],
    ]);
    return rows.map(toProduct);
  }

  async list(query: ProductQuery): Promise<Page<Product>> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (query.status) {
      params.push(query.status);
      where.push(`p.status = $${params.length}`);
    }
    if (query.q) {
      params.push(`%${escapeLike(query.q)}%`);
      const n = params.length;
      where.push(`(p.sku ILIKE $${n} ESCAPE '\\' OR p.name ILIKE $${n} ESCAPE '\\' OR p.description ILIKE $${n} ESCAPE '\\')`);
    }
    if (query.after) where.push(afterCursor('p', '>', query.after, params));
    params.push(query.pageSize + 1);
    const rows = await this.m.query<ProductRowSql[]>(
      `${PRODUCT_SELECT} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY p.created_at, p.id LIMIT $${params.length}`,
      params,
    );
    return page(rows, query.pageSize, toProduct);
  }

  async count(): Promise<number> {
    const [{ n }] = await this.m.query<[{ n: number }]>('SELECT count(*)::int AS n FROM products');
    return n;
  }
}

// ---------------------------------------------------------------------------

class PgStockStore implements StockStore {
  constructor(private readonly m: EntityManager) {}

  async reserve(productId: string, quantity: number): Promise<boolean> {
    // One statement: the row lock and the re-check of the condition on the latest row version
    // (READ COMMITTED re-evaluates the WHERE after waiting) make the reservation atomic.
    const result: unknown = await this.m.query(
      `UPDATE stock s SET reserved = s.reserved + $2, updated_at = now()
         FROM products p
        WHERE s.product_id = $1 AND p.id = s.product_id AND p.status = 'ACTIVE' AND s.on_hand - s.reserved >= $2`,
      [productId, quantity],
    );
    return affected(result) === 1;
  }

  async release(productId: string, quantity: number): Promise<void> {
    await this.m.query('UPDATE stock SET reserved = reserved - $2, updated_at = now() WHERE product_id = $1', [productId, quantity]);
  }

  async adjust(productId: string, change: StockChange, max: number): Promise<boolean> {
    const next = 'delta' in change ? 'on_hand + $2::integer' : '$2::integer';
    const result: unknown = await this.m.query(
      `UPDATE stock SET on_hand = ${next}, updated_at = now()
        WHERE product_id = $1 AND ${next} >= reserved AND ${next} >= 0 AND ${next} <= $3`,
      [productId, 'delta' in change ? change.delta : change.setOnHand, max],
    );
    return affected(result) === 1;
  }
}

// ---------------------------------------------------------------------------

class PgCartStore implements CartStore {
  constructor(private readonly m: EntityManager) {}

  async get(customerId: string, opts: { forUpdate?: boolean } = {}): Promise<{ lines: Line[]; updatedAt: Date } | null> {
    // Locking needs a row: made first when missing (waiting for a concurrent first write of the
    // cart), so a cart created during this transaction cannot be emptied unseen by it.
    if (opts.forUpdate) await this.m.query('INSERT INTO carts (customer_id) VALUES ($1) ON CONFLICT (customer_id) DO NOTHING', [customerId]);
    const [cart] = await this.m.query<Array<{
      updated_at: Date;
    }>>(`SELECT updated_at FROM carts WHERE customer_id = $1 ${opts.forUpdate ? 'FOR UPDATE' : ''}`, [customerId]);
    if (!cart) return null;
    const lines = await this.m.query<Array<{
      product_id: string;
      quantity: number;
    }>>('SELECT product_id, quantity FROM cart_lines WHERE customer_id = $1 ORDER BY position', [customerId]);
    return { lines: lines.map((l) => ({ productId: l.product_id, quantity: l.quantity })), updatedAt: cart.updated_at };
  }

  async replace(customerId: string, lines: readonly Line[]): Promise<void> {
    await this.m.query(
      `INSERT INTO carts (customer_id) VALUES ($1) ON CONFLICT (customer_id) DO UPDATE SET updated_at = now()`,
      [customerId],
    );
    await this.m.query('DELETE FROM cart_lines WHERE customer_id = $1', [customerId]);
    if (lines.length === 0) return;
    await this.m.query(
      `INSERT INTO cart_lines (customer_id, product_id, quantity, position)
       SELECT $1, u.product_id, u.quantity, u.position FROM unnest($2::uuid[], $3::integer[]) WITH ORDINALITY AS u(product_id, quantity, position)`,
      [customerId, lines.map((l) => l.productId), lines.map((l) => l.quantity)],
    );
  }

  async clear(customerId: string): Promise<void> {
    const n = affected(await this.m.query('UPDATE carts SET updated_at = now() WHERE customer_id = $1', [customerId]));
    if (n > 0) await this.m.query('DELETE FROM cart_lines WHERE customer_id = $1', [customerId]);
  }
}

// ---------------------------------------------------------------------------

interface OrderRowSql {
  id: string;
  customer_id: string;
  status: OrderStatus;
  total_minor: string;
  currency: string;
  customer_email: string;
  created_at: Date;
  updated_at: Date;
  created_us: string;
}

interface OrderLineRowSql {
  order_id: string;
  product_id: string;
  sku: string;
  name: string;
  quantity: number;
  unit_price_minor: string;
}

const ORDER_SELECT = `SELECT o.id, o.customer_id, o.status, o.total_minor, o.currency, o.customer_email, o.created_at, o.updated_at, ${CREATED_US('o')} FROM orders o`;

class PgOrderStore implements OrderStore {
  constructor(private readonly m: EntityManager) {}

  async insert(o: NewOrder): Promise<Order> {
    const [t] = await this.m.query<[{ created_at: Date; updated_at: Date }]>(
      `INSERT INTO orders (id, customer_id, status, total_minor, currency, customer_email) VALUES ($1, $2, $3, $4, $5, $6)
       RETURNING created_at, updated_at`,
      [o.id, o.customerId, o.status, o.totalMinor, o.currency, o.customerEmail],
    );
    await this.m.query(
      `INSERT INTO order_lines (order_id, product_id, sku, name, quantity, unit_price_minor)
       SELECT $1, * FROM unnest($2::uuid[], $3::text[], $4::text[], $5::integer[], $6::bigint[])`,
      [
        o.id,
        o.lines.map((l) => l.productId),
        o.lines.map((l) => l.sku),
        o.lines.map((l) => l.name),
        o.lines.map((l) => l.quantity),
        o.lines.map((l) => l.unitPriceMinor),
      ],
    );
    return { ...o, createdAt: t.created_at, updatedAt: t.updated_at };
  }

  async findById(customerId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<Order | null> {
    const rows = await this.m.query<OrderRowSql[]>(`${ORDER_SELECT} WHERE o.id = $1 AND o.customer_id = $2 ${opts.forUpdate ? 'FOR UPDATE OF o' : ''}`, [
      id,
      customerId,
    ]);
    return (await this.withLines(rows))[0] ?? null;
  }

  async list(customerId: string, query: OrderQuery): Promise<Page<Order>> {
    const params: unknown[] = [customerId];
    const where = ['o.customer_id = $1'];
    if (query.status) {
      params.push(query.status);
      where.push(`o.status = $${params.length}`);
    }
    if (query.after) where.push(afterCursor('o', '<', query.after, params));
    params.push(query.pageSize + 1);
    const rows = await this.m.query<OrderRowSql[]>(`${ORDER_SELECT} WHERE ${where.join(' AND ')} ORDER BY o.created_at DESC, o.id DESC LIMIT $${params.length}`, params);
    const p = page(rows, query.pageSize, (r) => r);
    return { items: await this.withLines([...p.items]), next: p.next };
  }

  async setStatus(id: string, status: OrderStatus): Promise<void> {
    await this.m.query(
      `UPDATE orders SET status = $2, updated_at = now(), cancelled_at = CASE WHEN $2 = 'CANCELLED' THEN now() ELSE cancelled_at END WHERE id = $1`,
      [id, status],
    );
  }

  private async withLines(rows: OrderRowSql[]): Promise<Order[]> {
    if (rows.length === 0) return [];
    const lines = await this.m.query<OrderLineRowSql[]>(
      'SELECT order_id, product_id, sku, name, quantity, unit_price_minor FROM order_lines WHERE order_id = ANY($1::uuid[]) ORDER BY order_id, product_id',
      [rows.map((r) => r.id)],
    );
    const byOrder = new Map<string, OrderLine[]>();
    for (const l of lines) {
      const list = byOrder.get(l.order_id) ?? [];
      list.push({ productId: l.product_id, sku: l.sku, name: l.name, quantity: l.quantity, unitPriceMinor: Number(l.unit_price_minor) });
      byOrder.set(l.order_id, list);
    }
    return rows.map((r) => ({
      id: r.id,
      customerId: r.customer_id,
      status: r.status,
      lines: byOrder.get(r.id) ?? [],
      totalMinor: Number(r.total_minor),
      currency: r.currency,
      customerEmail: r.customer_email,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }));
  }
}

// ---------------------------------------------------------------------------

class PgIdempotencyStore implements IdempotencyStore {
  constructor(private readonly m: EntityManager) {}

  async claim(r: { customerId: string; key: string; fingerprint: Buffer; orderId: string }): Promise<Claim> {
    // A conflict without a visible row means the other transaction rolled back in between: the
    // next insert claims the key (records are never deleted).
    for (let attempt = 1; ; attempt++) {
      const inserted = await this.m.query<unknown[]>(
        `INSERT INTO idempotency_records (customer_id, key, request_sha256, order_id) VALUES ($1, $2, $3, $4)
         ON CONFLICT (customer_id, key) DO NOTHING RETURNING order_id`,
        [r.customerId, r.key, r.fingerprint, r.orderId],
      );
      if (inserted.length > 0) return { claimed: true };
      const [found] = await this.m.query<Array<{ request_sha256: Buffer; order_id: string }>>('SELECT request_sha256, order_id FROM idempotency_records WHERE customer_id = $1 AND key = $2', [
        r.customerId,
        r.key,
      ]);
      if (found) return { claimed: false, fingerprint: found.request_sha256, orderId: found.order_id };
      if (attempt >= 3) throw AppError.unavailable('The idempotency key is busy; try again.');
    }
  }
}

export function pgStores(m: EntityManager): Stores {
  return {
    products: new PgProductStore(m),
    stock: new PgStockStore(m),
    carts: new PgCartStore(m),
    orders: new PgOrderStore(m),
    idempotency: new PgIdempotencyStore(m),
  };
}

/**
 * Removes what can no longer matter: checkout idempotency keys older than `idempotencyHours`
 * (a retry after that places a new order; clients retry within minutes).
 */
export async function purgeExpired(ds: DataSource, idempotencyHours: number): Promise<void> {
  await ds.query('DELETE FROM idempotency_records WHERE created_at < now() - make_interval(hours => $1)', [idempotencyHours]);
}
