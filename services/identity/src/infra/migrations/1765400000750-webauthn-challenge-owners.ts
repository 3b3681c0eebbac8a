import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A user's outstanding WebAuthn challenges of a purpose, newest first: storing one drops those
 * beyond the newest few (issue #34 item 5: each options call stores a row).
 */
export class WebauthnChallengeOwners1765400000750 implements MigrationInterface {
  name = 'WebauthnChallengeOwners1765400000750';

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE INDEX "ix_webauthn_challenges_owner" ON "webauthn_challenges" ("user_id", "purpose", "created_at")');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX "ix_webauthn_challenges_owner"');
  }
}
