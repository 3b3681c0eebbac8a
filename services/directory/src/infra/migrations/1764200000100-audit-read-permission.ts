import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The sixth built-in permission, `audit.read` (the audit trail), linked to the Administrator
 * role; a live permission of that name made earlier becomes the built-in one. The same steps as
 * 1764000000100 (products.manage), which stays as it landed.
 */
export class AuditReadPermission1764200000100 implements MigrationInterface {
  name = 'AuditReadPermission1764200000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `INSERT INTO "permissions" ("id", "name", "description")
       SELECT gen_random_uuid(), $1, $2
        WHERE NOT EXISTS (SELECT 1 FROM "permissions" WHERE lower("name") = $1 AND "deleted_at" IS NULL)`,
      ['audit.read', 'Read the audit trail and verify its hash chain'],
    );
    await q.query(
      `INSERT INTO "role_permissions" ("id", "role_id", "permission_id")
       SELECT gen_random_uuid(), r.id, p.id
         FROM "roles" r CROSS JOIN "permissions" p
        WHERE r.name = 'Administrator' AND r.deleted_at IS NULL
          AND lower(p.name) = $1 AND p.deleted_at IS NULL
          AND NOT EXISTS (SELECT 1 FROM "role_permissions" rp WHERE rp.role_id = r.id AND rp.permission_id = p.id AND rp.revoked_at IS NULL)`,
      ['audit.read'],
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM "role_permissions" WHERE "permission_id" IN (SELECT "id" FROM "permissions" WHERE "name" = 'audit.read')`);
    await q.query(`DELETE FROM "permissions" WHERE "name" = 'audit.read'`);
  }
}
