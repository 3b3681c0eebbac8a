import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * WebAuthn passkeys (DESIGN §5): a user's credentials (public key, signature counter, backup
 * flags, a name of the user's choosing), and the single-use challenges of registration and
 * sign-in ceremonies (looked up by the challenge the authenticator signed, kept five minutes).
 */
export class Passkeys1765000000100 implements MigrationInterface {
  name = 'Passkeys1765000000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "passkeys" (
        "id" uuid PRIMARY KEY,
        "user_id" uuid NOT NULL,
        "credential_id" bytea NOT NULL,
        "public_key" bytea NOT NULL,
        "counter" bigint NOT NULL DEFAULT 0,
        "transports" text[] NOT NULL DEFAULT '{}',
        "device_type" text NOT NULL,
        "backed_up" boolean NOT NULL,
        "aaguid" text NOT NULL DEFAULT '',
        "name" text NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "last_used_at" timestamptz
      )`);
    await q.query(`CREATE UNIQUE INDEX "uq_passkeys_credential" ON "passkeys" ("credential_id")`);
    await q.query(`CREATE INDEX "ix_passkeys_user" ON "passkeys" ("user_id")`);
    await q.query(`
      CREATE TABLE "webauthn_challenges" (
        "challenge_hash" bytea PRIMARY KEY,
        "purpose" text NOT NULL,
        "user_id" uuid,
        "mfa_challenge_id" uuid,
        "expires_at" timestamptz NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX "ix_webauthn_challenges_expires" ON "webauthn_challenges" ("expires_at")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE "webauthn_challenges"');
    await q.query('DROP TABLE "passkeys"');
  }
}
