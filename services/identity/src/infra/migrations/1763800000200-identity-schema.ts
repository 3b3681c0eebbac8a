import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Signing keys, refresh tokens (hashed), login failures (lockout) and the access-token denylist. */
export class IdentitySchema1763800000200 implements MigrationInterface {
  name = 'IdentitySchema1763800000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "signing_keys" (
        "kid" text PRIMARY KEY,
        "alg" text NOT NULL,
        "public_jwk" jsonb NOT NULL,
        "private_key" bytea NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "activates_at" timestamptz NOT NULL,
        "retires_at" timestamptz NOT NULL,
        "expires_at" timestamptz NOT NULL
      )`);
    await q.query(`
      CREATE TABLE "refresh_tokens" (
        "id" uuid PRIMARY KEY,
        "family_id" uuid NOT NULL,
        "user_id" uuid NOT NULL,
        "token_hash" bytea NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "expires_at" timestamptz NOT NULL,
        "rotated_at" timestamptz,
        "revoked_at" timestamptz,
        "replaced_by" uuid
      )`);
    await q.query(`CREATE UNIQUE INDEX "uq_refresh_tokens_hash" ON "refresh_tokens" ("token_hash")`);
    await q.query(`CREATE INDEX "ix_refresh_tokens_user_live" ON "refresh_tokens" ("user_id") WHERE "revoked_at" IS NULL`);
    await q.query(`CREATE INDEX "ix_refresh_tokens_family" ON "refresh_tokens" ("family_id")`);
    await q.query(`CREATE INDEX "ix_refresh_tokens_expires" ON "refresh_tokens" ("expires_at")`);
    await q.query(`
      CREATE TABLE "login_failures" (
        "email_hash" bytea PRIMARY KEY,
        "failed_count" integer NOT NULL,
        "locked_until" timestamptz,
        "last_failed_at" timestamptz NOT NULL
      )`);
    await q.query(`
      CREATE TABLE "revoked_access_tokens" (
        "jti" text PRIMARY KEY,
        "user_id" uuid NOT NULL,
        "expires_at" timestamptz NOT NULL,
        "revoked_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX "ix_revoked_access_tokens_expires" ON "revoked_access_tokens" ("expires_at")`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['revoked_access_tokens', 'login_failures', 'refresh_tokens', 'signing_keys']) await q.query(`DROP TABLE "${t}"`);
  }
}
