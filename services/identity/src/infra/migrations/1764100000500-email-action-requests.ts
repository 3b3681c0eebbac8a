import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Accepted email-action requests not yet processed: a password-reset or verification request is
 * written here before it is answered (202), and the request worker turns it into a token and its
 * event, so an accepted request survives a crash.
 */
export class EmailActionRequests1764100000500 implements MigrationInterface {
  name = 'EmailActionRequests1764100000500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "email_action_requests" (
        "id" uuid PRIMARY KEY,
        "purpose" text NOT NULL,
        "email_hash" bytea NOT NULL,
        "sealed_email" bytea,
        "user_id" uuid,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "attempts" integer NOT NULL DEFAULT 0,
        "next_attempt_at" timestamptz NOT NULL DEFAULT now(),
        "last_error" text
      )`);
    await q.query(`CREATE INDEX "ix_email_action_requests_due" ON "email_action_requests" ("next_attempt_at")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE "email_action_requests"');
  }
}
