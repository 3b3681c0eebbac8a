import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bulk import (issue #39): a user's id in the system it came from (`external_id`, unique among
 * live users, so a rerun skips it), the lazy-migration mark (`password_migration = 'hook'`: no
 * hash yet, the legacy system is asked at the first sign-in), `password_change_required` (the source system asked for a new password at the next sign-in), and a partial index over the live
 * users whose hash is not yet the platform's argon2id (the legacy-hash metric counts them).
 */
export class UserImport1766200000300 implements MigrationInterface {
  name = 'UserImport1766200000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "users" ADD COLUMN "external_id" text NULL`);
    await q.query(`ALTER TABLE "users" ADD COLUMN "password_migration" text NULL`);
    await q.query(`ALTER TABLE "users" ADD COLUMN "password_change_required" boolean NOT NULL DEFAULT false`);
    await q.query(`CREATE UNIQUE INDEX "uq_users_external_id_live" ON "users" ("external_id") WHERE "deleted_at" IS NULL AND "external_id" IS NOT NULL`);
    await q.query(`CREATE INDEX "ix_users_legacy_hash" ON "users" ("id") WHERE "deleted_at" IS NULL AND "password_hash" NOT LIKE '$argon2id$%'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_users_legacy_hash"`);
    await q.query(`DROP INDEX "uq_users_external_id_live"`);
    await q.query(`ALTER TABLE "users" DROP COLUMN "password_change_required"`);
    await q.query(`ALTER TABLE "users" DROP COLUMN "password_migration"`);
    await q.query(`ALTER TABLE "users" DROP COLUMN "external_id"`);
  }
}
