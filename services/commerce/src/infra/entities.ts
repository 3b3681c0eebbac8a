/**
 * TypeORM mappings of the commerce schema. The schema itself is created by migrations (the
 * stores use parameterised SQL); these mappings let the schema check prove the migrated database
 * is exactly what is declared. Trigram indexes are declared with `synchronize: false`.
 */
import { Check, Column, Entity, Index, JoinColumn, ManyToOne, OneToOne, PrimaryColumn } from 'typeorm';

@Entity({ name: 'products' })
@Index('uq_products_sku', ['sku'], { unique: true })
@Index('uq_products_name_skeleton_active', ['nameSkeleton'], { unique: true, where: `"status" = 'ACTIVE'` })
@Index('ix_products_created', ['createdAt', 'id'])
@Index('ix_products_status_created', ['status', 'createdAt', 'id'])
@Index('ix_products_sku_trgm', { synchronize: false })
@Index('ix_products_name_trgm', { synchronize: false })
@Index('ix_products_description_trgm', { synchronize: false })
@Check('ck_products_status', `"status" IN ('ACTIVE', 'ARCHIVED')`)
@Check('ck_products_price', `"price_minor" >= 0`)
@Check('ck_products_currency', `"currency" ~ '^[A-Z]{3}$'`)
export class ProductRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('text')
  sku!: string;

  @Column('text')
  name!: string;

  /**
   * lookalikeKey(name) (@iam/platform, UTS #39 skeletons), written with the name by the store and
   * unique among active products; NULL only for an active lookalike that existed before the rule
   * (migration 1764600000200).
   */
  @Column('text', { name: 'name_skeleton', nullable: true })
  nameSkeleton!: string | null;

  @Column('text', { default: '' })
  description!: string;

  @Column('bigint', { name: 'price_minor' })
  priceMinor!: string;

  @Column('text')
  currency!: string;

  @Column('text', { default: 'ACTIVE' })
  status!: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;
}

/** One row per product: checkouts update only this row (0 ≤ reserved ≤ on_hand). */
@Entity({ name: 'stock' })
@Check('ck_stock_reserved', `"reserved" >= 0`)
@Check('ck_stock_on_hand', `"on_hand" >= "reserved"`)
export class StockRow {
  @PrimaryColumn('uuid', { name: 'product_id' })
  productId!: string;

  @OneToOne(() => ProductRow, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'product_id', foreignKeyConstraintName: 'fk_stock_product' })
  product?: ProductRow;

  @Column('integer', { name: 'on_hand', default: 0 })
  onHand!: number;

  @Column('integer', { default: 0 })
  reserved!: number;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;
}

@Entity({ name: 'carts' })
export class CartRow {
  @PrimaryColumn('uuid', { name: 'customer_id' })
  customerId!: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;
}

@Entity({ name: 'cart_lines' })
@Index('ix_cart_lines_product', ['productId'])
@Check('ck_cart_lines_quantity', `"quantity" > 0`)
export class CartLineRow {
  @PrimaryColumn('uuid', { name: 'customer_id' })
  customerId!: string;

  @PrimaryColumn('uuid', { name: 'product_id' })
  productId!: string;

  @ManyToOne(() => CartRow, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'customer_id', foreignKeyConstraintName: 'fk_cart_lines_cart' })
  cart?: CartRow;

  @ManyToOne(() => ProductRow, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'product_id', foreignKeyConstraintName: 'fk_cart_lines_product' })
  product?: ProductRow;

  @Column('integer')
  quantity!: number;

  /** Order of the lines as the customer gave them. */
  @Column('integer')
  position!: number;
}

@Entity({ name: 'orders' })
@Index('ix_orders_customer_created', ['customerId', 'createdAt', 'id'])
@Check('ck_orders_status', `"status" IN ('PENDING', 'CONFIRMED', 'CANCELLED')`)
export class OrderRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'customer_id' })
  customerId!: string;

  @Column('text')
  status!: string;

  @Column('bigint', { name: 'total_minor' })
  totalMinor!: string;

  @Column('text')
  currency!: string;

  @Column('text', { name: 'customer_email', default: '' })
  customerEmail!: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;

  @Column('timestamptz', { name: 'cancelled_at', nullable: true })
  cancelledAt!: Date | null;
}

/** What was bought: the product's sku, name and price when the order was placed. */
@Entity({ name: 'order_lines' })
@Index('ix_order_lines_product', ['productId'])
@Check('ck_order_lines_quantity', `"quantity" > 0`)
export class OrderLineRow {
  @PrimaryColumn('uuid', { name: 'order_id' })
  orderId!: string;

  @PrimaryColumn('uuid', { name: 'product_id' })
  productId!: string;

  @ManyToOne(() => OrderRow, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'order_id', foreignKeyConstraintName: 'fk_order_lines_order' })
  order?: OrderRow;

  @ManyToOne(() => ProductRow, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'product_id', foreignKeyConstraintName: 'fk_order_lines_product' })
  product?: ProductRow;

  @Column('text')
  sku!: string;

  @Column('text')
  name!: string;

  @Column('integer')
  quantity!: number;

  @Column('bigint', { name: 'unit_price_minor' })
  unitPriceMinor!: string;
}

/** A checkout's idempotency key: the request's fingerprint and the order it placed. */
@Entity({ name: 'idempotency_records' })
@Index('ix_idempotency_records_order', ['orderId'])
@Index('ix_idempotency_records_created', ['createdAt'])
export class IdempotencyRecordRow {
  @PrimaryColumn('uuid', { name: 'customer_id' })
  customerId!: string;

  @PrimaryColumn('text')
  key!: string;

  /** SHA-256 of the canonical request (its lines, or "the cart"). */
  @Column('bytea', { name: 'request_sha256' })
  requestSha256!: Buffer;

  @Column('uuid', { name: 'order_id' })
  orderId!: string;

  @ManyToOne(() => OrderRow, { onDelete: 'CASCADE', deferrable: 'INITIALLY DEFERRED' })
  @JoinColumn({ name: 'order_id', foreignKeyConstraintName: 'fk_idempotency_records_order' })
  order?: OrderRow;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}
