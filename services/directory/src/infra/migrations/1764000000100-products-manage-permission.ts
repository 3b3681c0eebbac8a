import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The fifth built-in permission, `products.manage` (product administration at the edge), linked
 * to the Administrator role. Where an operator already made a live permission of that name, it
 * becomes the built-in one (no duplicate; its existing links stay).
 */
export class ProductsManagePermission1764000000100 implements MigrationInterface {
  name = 'ProductsManagePermission1764000000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      INSERT INTO "permissions" ("id", "name", "description")
      SELECT gen_random_uuid(), 'products.manage', 'Create, update and archive products and adjust their stock'
       WHERE NOT EXISTS (SELECT 1 FROM "permissions" WHERE lower("name") = 'products.manage' AND "deleted_at" IS NULL)`);
    await q.query(`
      INSERT INTO "role_permissions" ("id", "role_id", "permission_id")
      SELECT gen_random_uuid(), r.id, p.id
        FROM "roles" r CROSS JOIN "permissions" p
       WHERE r.name = 'Administrator' AND r.deleted_at IS NULL
         AND lower(p.name) = 'products.manage' AND p.deleted_at IS NULL
         AND NOT EXISTS (SELECT 1 FROM "role_permissions" rp WHERE rp.role_id = r.id AND rp.permission_id = p.id AND rp.revoked_at IS NULL)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DELETE FROM "role_permissions" WHERE "permission_id" IN (SELECT "id" FROM "permissions" WHERE "name" = 'products.manage')`);
    await q.query(`DELETE FROM "permissions" WHERE "name" = 'products.manage'`);
  }
}
