import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Identity's own random secrets that must outlive a rotation of the key-encryption key (the key
 * of the recovery codes' digests): made once, stored sealed under JWT_KEY_ENCRYPTION_KEY (AAD =
 * the name), sealed again by `reseal`. A key derived from the key-encryption key would change with
 * it, and every recovery code digested under the old one would stop working.
 */
export class SealedSecrets1765400000500 implements MigrationInterface {
  name = 'SealedSecrets1765400000500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "sealed_secrets" (
        "name" varchar(100) PRIMARY KEY,
        "sealed" bytea NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE "sealed_secrets"');
  }
}
