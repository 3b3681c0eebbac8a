import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Second factors (TOTP secrets sealed with a key outside the database, hashed recovery codes),
 * the single-use mfa tokens between a right password and a second factor, and sessions: one per
 * REST login (its refresh family), with device, IP and times, and the access tokens it issued (so
 * ending it denylists them).
 */
export class SecondFactorsSessions1764800000300 implements MigrationInterface {
  name = 'SecondFactorsSessions1764800000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "mfa_totp" (
        "user_id" uuid PRIMARY KEY,
        "sealed_secret" bytea NOT NULL,
        "activated_at" timestamptz,
        "last_step" bigint NOT NULL DEFAULT 0,
        "created_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE "mfa_recovery_codes" (
        "id" uuid PRIMARY KEY,
        "user_id" uuid NOT NULL,
        "code_hash" bytea NOT NULL,
        "used_at" timestamptz,
        "created_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX "uq_mfa_recovery_codes_user_hash" ON "mfa_recovery_codes" ("user_id", "code_hash")`);
    await q.query(`
      CREATE TABLE "mfa_challenges" (
        "id" uuid PRIMARY KEY,
        "user_id" uuid NOT NULL,
        "email_hash" bytea NOT NULL,
        "token_hash" bytea NOT NULL,
        "purpose" text NOT NULL,
        "expires_at" timestamptz NOT NULL,
        "used_at" timestamptz,
        "created_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX "uq_mfa_challenges_token" ON "mfa_challenges" ("token_hash")`);
    await q.query(`CREATE INDEX "ix_mfa_challenges_expires" ON "mfa_challenges" ("expires_at")`);
    await q.query(`
      CREATE TABLE "sessions" (
        "id" uuid PRIMARY KEY,
        "user_id" uuid NOT NULL,
        "user_agent" text NOT NULL DEFAULT '',
        "ip" text NOT NULL DEFAULT '',
        "amr" text[] NOT NULL,
        "auth_time" timestamptz NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "last_used_at" timestamptz NOT NULL DEFAULT now(),
        "expires_at" timestamptz NOT NULL,
        "ended_at" timestamptz
      )`);
    await q.query(`CREATE INDEX "ix_sessions_user_live" ON "sessions" ("user_id") WHERE "ended_at" IS NULL`);
    await q.query(`CREATE INDEX "ix_sessions_expires" ON "sessions" ("expires_at")`);
    await q.query(`
      CREATE TABLE "session_access_tokens" (
        "jti" text PRIMARY KEY,
        "session_id" uuid NOT NULL,
        "expires_at" timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX "ix_session_access_tokens_session" ON "session_access_tokens" ("session_id")`);
    await q.query(`CREATE INDEX "ix_session_access_tokens_expires" ON "session_access_tokens" ("expires_at")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE "session_access_tokens"');
    await q.query('DROP TABLE "sessions"');
    await q.query('DROP TABLE "mfa_challenges"');
    await q.query('DROP TABLE "mfa_recovery_codes"');
    await q.query('DROP TABLE "mfa_totp"');
  }
}
