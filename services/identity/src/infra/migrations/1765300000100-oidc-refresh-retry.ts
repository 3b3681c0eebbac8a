import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The provider's refresh retry window (issue #35): a rotated refresh token keeps, for
 * OIDC_REFRESH_RETRY_SECONDS, the answer its rotation gave (sealed: it holds the successor and
 * the access token) and the successor's id, written by the rotation's own statement. A client
 * that lost that answer and presents the token again within the window, while the successor is
 * unused, gets the same answer: no second chain, no reuse. Housekeeping clears the answer once
 * the window has passed.
 */
export class OidcRefreshRetry1765300000100 implements MigrationInterface {
  name = 'OidcRefreshRetry1765300000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "oidc_payloads" ADD COLUMN "retry_answer" bytea, ADD COLUMN "successor_id" varchar(200)');
    // Housekeeping finds the answers to drop without reading the table.
    await q.query(`CREATE INDEX "ix_oidc_payloads_retry" ON "oidc_payloads" ("consumed_at") WHERE "retry_answer" IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX "ix_oidc_payloads_retry"');
    await q.query('ALTER TABLE "oidc_payloads" DROP COLUMN "retry_answer", DROP COLUMN "successor_id"');
  }
}
