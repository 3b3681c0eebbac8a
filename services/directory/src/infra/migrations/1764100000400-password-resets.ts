import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Password resets applied, by the email-action token's id: written in the transaction that sets
 * the new hash, so a token changes a password at most once, and a retried call (same attempt)
 * answers as the first one did.
 */
export class PasswordResets1764100000400 implements MigrationInterface {
  name = 'PasswordResets1764100000400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "password_resets" (
        "reset_id" uuid PRIMARY KEY,
        "user_id" uuid NOT NULL,
        "attempt_id" uuid NOT NULL,
        "changed_at" timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE "password_resets"');
  }
}
