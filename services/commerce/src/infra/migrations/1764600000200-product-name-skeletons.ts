import { addLookalikeKeyColumn } from '@iam/platform';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Two active products cannot have names that look alike (SECURITY.md "Lookalike names"), nor the
 * same name: `name_skeleton` holds each name's lookalikeKey (UTS #39 skeletons, case aside),
 * unique among active products, so two concurrent creates end in one product and one conflict.
 * An archived product's name may be taken again; reactivating it then conflicts. Existing rows
 * are filled in; an active product whose key an older active one holds keeps NULL
 * (addLookalikeKeyColumn).
 */
export class ProductNameSkeletons1764600000200 implements MigrationInterface {
  name = 'ProductNameSkeletons1764600000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query('SET LOCAL statement_timeout = 0');
    await addLookalikeKeyColumn(q, { table: 'products', source: 'name', column: 'name_skeleton', index: 'uq_products_name_skeleton_active', live: `"status" = 'ACTIVE'` });
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "products" DROP COLUMN "name_skeleton"');
  }
}
