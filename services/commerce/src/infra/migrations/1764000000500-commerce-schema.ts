import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Products and their stock (separate rows: checkouts contend only on stock), carts and their
 * lines, orders and their lines, idempotency records of checkouts. The stock invariants are
 * constraints (0 ≤ reserved ≤ on_hand), so no code path can oversell; an idempotency record
 * references its order through a deferred foreign key (both are written in one transaction).
 */
export class CommerceSchema1764000000500 implements MigrationInterface {
  name = 'CommerceSchema1764000000500';

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    await q.query(`
      CREATE TABLE "products" (
        "id" uuid PRIMARY KEY,
        "sku" text NOT NULL,
        "name" text NOT NULL,
        "description" text NOT NULL DEFAULT '',
        "price_minor" bigint NOT NULL,
        "currency" text NOT NULL,
        "status" text NOT NULL DEFAULT 'ACTIVE',
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "ck_products_status" CHECK ("status" IN ('ACTIVE', 'ARCHIVED')),
        CONSTRAINT "ck_products_price" CHECK ("price_minor" >= 0),
        CONSTRAINT "ck_products_currency" CHECK ("currency" ~ '^[A-Z]{3}$')
      )`);
    await q.query(`CREATE UNIQUE INDEX "uq_products_sku" ON "products" ("sku")`);
    await q.query(`CREATE INDEX "ix_products_created" ON "products" ("created_at", "id")`);
    await q.query(`CREATE INDEX "ix_products_status_created" ON "products" ("status", "created_at", "id")`);
    for (const col of ['sku', 'name', 'description']) {
      await q.query(`CREATE INDEX "ix_products_${col}_trgm" ON "products" USING gin ("${col}" gin_trgm_ops)`);
    }

    await q.query(`
      CREATE TABLE "stock" (
        "product_id" uuid PRIMARY KEY,
        "on_hand" integer NOT NULL DEFAULT 0,
        "reserved" integer NOT NULL DEFAULT 0,
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "fk_stock_product" FOREIGN KEY ("product_id") REFERENCES "products" ("id") ON DELETE CASCADE,
        CONSTRAINT "ck_stock_reserved" CHECK ("reserved" >= 0),
        CONSTRAINT "ck_stock_on_hand" CHECK ("on_hand" >= "reserved")
      )`);

    await q.query(`
      CREATE TABLE "carts" (
        "customer_id" uuid PRIMARY KEY,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE "cart_lines" (
        "customer_id" uuid NOT NULL,
        "product_id" uuid NOT NULL,
        "quantity" integer NOT NULL,
        "position" integer NOT NULL,
        PRIMARY KEY ("customer_id", "product_id"),
        CONSTRAINT "fk_cart_lines_cart" FOREIGN KEY ("customer_id") REFERENCES "carts" ("customer_id") ON DELETE CASCADE,
        CONSTRAINT "fk_cart_lines_product" FOREIGN KEY ("product_id") REFERENCES "products" ("id") ON DELETE CASCADE,
        CONSTRAINT "ck_cart_lines_quantity" CHECK ("quantity" > 0)
      )`);
    await q.query(`CREATE INDEX "ix_cart_lines_product" ON "cart_lines" ("product_id")`);

    await q.query(`
      CREATE TABLE "orders" (
        "id" uuid PRIMARY KEY,
        "customer_id" uuid NOT NULL,
        "status" text NOT NULL,
        "total_minor" bigint NOT NULL,
        "currency" text NOT NULL,
        "customer_email" text NOT NULL DEFAULT '',
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        "cancelled_at" timestamptz,
        CONSTRAINT "ck_orders_status" CHECK ("status" IN ('PENDING', 'CONFIRMED', 'CANCELLED'))
      )`);
    await q.query(`CREATE INDEX "ix_orders_customer_created" ON "orders" ("customer_id", "created_at", "id")`);
    await q.query(`
      CREATE TABLE "order_lines" (
        "order_id" uuid NOT NULL,
        "product_id" uuid NOT NULL,
        "sku" text NOT NULL,
        "name" text NOT NULL,
        "quantity" integer NOT NULL,
        "unit_price_minor" bigint NOT NULL,
        PRIMARY KEY ("order_id", "product_id"),
        CONSTRAINT "fk_order_lines_order" FOREIGN KEY ("order_id") REFERENCES "orders" ("id") ON DELETE CASCADE,
        CONSTRAINT "fk_order_lines_product" FOREIGN KEY ("product_id") REFERENCES "products" ("id") ON DELETE RESTRICT,
        CONSTRAINT "ck_order_lines_quantity" CHECK ("quantity" > 0)
      )`);
    await q.query(`CREATE INDEX "ix_order_lines_product" ON "order_lines" ("product_id")`);

    await q.query(`
      CREATE TABLE "idempotency_records" (
        "customer_id" uuid NOT NULL,
        "key" text NOT NULL,
        "request_sha256" bytea NOT NULL,
        "order_id" uuid NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY ("customer_id", "key"),
        CONSTRAINT "fk_idempotency_records_order" FOREIGN KEY ("order_id") REFERENCES "orders" ("id") ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED
      )`);
    await q.query(`CREATE INDEX "ix_idempotency_records_order" ON "idempotency_records" ("order_id")`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['idempotency_records', 'order_lines', 'orders', 'cart_lines', 'carts', 'stock', 'products']) await q.query(`DROP TABLE "${t}"`);
  }
}
