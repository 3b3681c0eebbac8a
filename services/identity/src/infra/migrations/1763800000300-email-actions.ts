import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Single-use email-action tokens (only a SHA-256 stored) and the per-email request throttle. */
export class EmailActions1763800000300 implements MigrationInterface {
  name = 'EmailActions1763800000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "email_action_tokens" (
        "id" uuid PRIMARY KEY,
        "user_id" uuid NOT NULL,
        "purpose" text NOT NULL,
        "token_hash" bytea NOT NULL,
        "email_hash" bytea NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "expires_at" timestamptz NOT NULL,
        "used_at" timestamptz,
        "invalidated_at" timestamptz
      )`);
    await q.query(`CREATE UNIQUE INDEX "uq_email_action_tokens_hash" ON "email_action_tokens" ("token_hash")`);
    await q.query(`CREATE INDEX "ix_email_action_tokens_pending" ON "email_action_tokens" ("user_id", "purpose") WHERE "used_at" IS NULL AND "invalidated_at" IS NULL`);
    await q.query(`CREATE INDEX "ix_email_action_tokens_expires" ON "email_action_tokens" ("expires_at")`);
    await q.query(`
      CREATE TABLE "email_action_throttle" (
        "key_hash" bytea NOT NULL,
        "purpose" text NOT NULL,
        "window_start" timestamptz NOT NULL,
        "count" integer NOT NULL,
        PRIMARY KEY ("key_hash", "purpose")
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE "email_action_throttle"');
    await q.query('DROP TABLE "email_action_tokens"');
  }
}
