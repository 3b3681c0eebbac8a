import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Subject-level revocation: a user's access tokens issued before a time are refused. */
export class RevokedSubjects1763900000400 implements MigrationInterface {
  name = 'RevokedSubjects1763900000400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "revoked_subjects" (
        "user_id" uuid PRIMARY KEY,
        "not_before" timestamptz NOT NULL,
        "expires_at" timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX "ix_revoked_subjects_expires" ON "revoked_subjects" ("expires_at")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE "revoked_subjects"');
  }
}
