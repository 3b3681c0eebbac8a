import { lookalikeKey } from '@iam/platform';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The built-in permission `identity-providers.manage` (upstream identity providers, issue #40: who decides which other
 * providers may vouch for users here), linked to the Administrator role; a live permission of
 * that name made earlier becomes the built-in one. The steps of 1764200000100 (audit.read), with the name's lookalike key
 * (1764600000100) set as every write of a name sets it.
 */
export class IdentityProvidersManagePermission1766300000100 implements MigrationInterface {
  name = 'IdentityProvidersManagePermission1766300000100';

  async up(q: QueryRunner): Promise<void> {
    const name = 'identity-providers.manage';
    await q.query(
      `INSERT INTO "permissions" ("id", "name", "name_skeleton", "description")
       SELECT gen_random_uuid(), $1, $2, $3
        WHERE NOT EXISTS (SELECT 1 FROM "permissions" WHERE (lower("name") = $1 OR "name_skeleton" = $2) AND "deleted_at" IS NULL)`,
      [name, lookalikeKey(name), 'Configure the upstream identity providers users may sign in with (their client secrets included)'],
    );
    await q.query(
      `INSERT INTO "role_permissions" ("id", "role_id", "permission_id")
       SELECT gen_random_uuid(), r.id, p.id
         FROM "roles" r CROSS JOIN "permissions" p
        WHERE r.name = 'Administrator' AND r.deleted_at IS NULL
          AND lower(p.name) = $1 AND p.deleted_at IS NULL
          AND NOT EXISTS (SELECT 1 FROM "role_permissions" rp WHERE rp.role_id = r.id AND rp.permission_id = p.id AND rp.revoked_at IS NULL)`,
      [name],
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM "role_permissions" WHERE "permission_id" IN (SELECT "id" FROM "permissions" WHERE "name" = 'identity-providers.manage')`);
    await q.query(`DELETE FROM "permissions" WHERE "name" = 'identity-providers.manage'`);
  }
}
