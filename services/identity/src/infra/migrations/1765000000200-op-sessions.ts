import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * OpenID provider sessions in the sessions list (DESIGN §5): a session row per OP session too,
 * linked to the provider's session by its uid (never its cookie value), so it shows its device,
 * IP and times, records the access tokens issued under it, and ending it ends the OP session.
 */
export class OpSessions1765000000200 implements MigrationInterface {
  name = 'OpSessions1765000000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "sessions" ADD COLUMN "op_session_uid" text`);
    await q.query(`CREATE UNIQUE INDEX "uq_sessions_op_session_uid" ON "sessions" ("op_session_uid") WHERE "op_session_uid" IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX "uq_sessions_op_session_uid"');
    await q.query('ALTER TABLE "sessions" DROP COLUMN "op_session_uid"');
  }
}
