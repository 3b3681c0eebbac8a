import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Recovery codes get a digest scheme (issue #34 item 6): the codes stored until now are plain
 * SHA-256 of "<user id>:<code>" ('sha256'), which anyone with a copy of the database could search
 * offline (the user id is every token's `sub`). Identity re-keys them at start to 'hmac-legacy'
 * (an HMAC of that digest under a key outside the database); new codes are 'hmac'. No default:
 * every insert names its scheme.
 */
export class RecoveryCodeSchemes1765400000300 implements MigrationInterface {
  name = 'RecoveryCodeSchemes1765400000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "mfa_recovery_codes" ADD COLUMN "scheme" text NOT NULL DEFAULT 'sha256'`);
    await q.query(`ALTER TABLE "mfa_recovery_codes" ALTER COLUMN "scheme" DROP DEFAULT`);
    await q.query(`ALTER TABLE "mfa_recovery_codes" ADD CONSTRAINT "ck_mfa_recovery_codes_scheme" CHECK ("scheme" IN ('sha256', 'hmac-legacy', 'hmac'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "mfa_recovery_codes" DROP CONSTRAINT "ck_mfa_recovery_codes_scheme"`);
    await q.query(`ALTER TABLE "mfa_recovery_codes" DROP COLUMN "scheme"`);
  }
}
