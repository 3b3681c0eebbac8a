import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The OAuth client each recorded access token of a session was issued to (NULL for REST login
 * tokens and tokens recorded before): when a user signs one client out at the provider and stays
 * signed in ("Stay signed in"), that client's tokens of the session are denylisted, the others'
 * are not. Looked up through the session's index (a session holds few live tokens).
 */
export class SessionTokenClients1765200000100 implements MigrationInterface {
  name = 'SessionTokenClients1765200000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "session_access_tokens" ADD COLUMN "client_id" text');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "session_access_tokens" DROP COLUMN "client_id"');
  }
}
