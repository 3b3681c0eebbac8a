import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The state of the sign-in an mfa token belongs to (app/signin/state.ts: the factors verified, the
 * client and the acr it asked for), kept in the token's row (issue #37 item 1). Rows made before
 * have none: a sign-in whose first factor was the password (the only one that led to a token).
 */
export class MfaChallengeFlow1765500000100 implements MigrationInterface {
  name = 'MfaChallengeFlow1765500000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "mfa_challenges" ADD COLUMN "flow" jsonb');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "mfa_challenges" DROP COLUMN "flow"');
  }
}
