import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A refresh token rotated by a retry of its predecessor within the grace period (its holder lost
 * the answer that carried it) is marked `superseded`: a later retry of that predecessor follows it
 * to the family's live token, where a token rotated by its own use ends the chain (reuse).
 */
export class RefreshSuperseded1764600000100 implements MigrationInterface {
  name = 'RefreshSuperseded1764600000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "refresh_tokens" ADD COLUMN "superseded" boolean NOT NULL DEFAULT false');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "refresh_tokens" DROP COLUMN "superseded"');
  }
}
