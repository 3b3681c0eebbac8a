import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Signing in with another identity provider (issue #40): the upstream providers an administrator
 * configures (the client secret only sealed under the key-encryption key, AAD `idp-secret:<id>`;
 * soft delete; `version` guards concurrent updates; a name is unique among live ones and is
 * lower-case by validation), the identities linked to users (keyed on provider, issuer and
 * subject, never on email), and the upstream sign-ins under way (single use: looked up by the
 * SHA-256 of their `state`, deleted when taken).
 */
export class IdentityProviders1765500000300 implements MigrationInterface {
  name = 'IdentityProviders1765500000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "identity_providers" (
        "id" uuid PRIMARY KEY,
        "kind" text NOT NULL,
        "name" text NOT NULL,
        "display_name" text NOT NULL,
        "discovery_url" text,
        "client_id" text NOT NULL,
        "sealed_client_secret" bytea,
        "scopes" text[] NOT NULL DEFAULT '{}',
        "claim_mapping" jsonb NOT NULL,
        "trust_email_verified" boolean NOT NULL DEFAULT false,
        "trust_upstream_mfa" boolean NOT NULL DEFAULT false,
        "allow_sign_up" boolean NOT NULL DEFAULT false,
        "linking" text NOT NULL,
        "default_roles" text[] NOT NULL DEFAULT '{}',
        "icon_url" text NOT NULL DEFAULT '',
        "enabled" boolean NOT NULL DEFAULT true,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        "deleted_at" timestamptz,
        "version" integer NOT NULL DEFAULT 1,
        CONSTRAINT "ck_identity_providers_kind" CHECK ("kind" IN ('oidc', 'github', 'google')),
        CONSTRAINT "ck_identity_providers_linking" CHECK ("linking" IN ('verified-email', 're-authenticate', 'never'))
      )`);
    await q.query(`CREATE INDEX "ix_identity_providers_order" ON "identity_providers" ("created_at", "id")`);
    await q.query(`CREATE UNIQUE INDEX "uq_identity_providers_live_name" ON "identity_providers" ("name") WHERE "deleted_at" IS NULL`);
    await q.query(`
      CREATE TABLE "federated_identities" (
        "id" uuid PRIMARY KEY,
        "user_id" uuid NOT NULL,
        "provider_id" uuid NOT NULL,
        "issuer" text NOT NULL,
        "subject" text NOT NULL,
        "email" text NOT NULL DEFAULT '',
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "last_used_at" timestamptz
      )`);
    await q.query(`CREATE UNIQUE INDEX "uq_federated_identities_key" ON "federated_identities" ("provider_id", "issuer", "subject")`);
    await q.query(`CREATE INDEX "ix_federated_identities_user" ON "federated_identities" ("user_id")`);
    await q.query(`
      CREATE TABLE "upstream_sign_ins" (
        "state_hash" bytea PRIMARY KEY,
        "provider_id" uuid NOT NULL,
        "nonce" text NOT NULL,
        "code_verifier" text NOT NULL,
        "purpose" text NOT NULL,
        "binding" text NOT NULL,
        "user_id" uuid,
        "expires_at" timestamptz NOT NULL,
        CONSTRAINT "ck_upstream_sign_ins_purpose" CHECK ("purpose" IN ('sign-in', 'link'))
      )`);
    await q.query(`CREATE INDEX "ix_upstream_sign_ins_expires" ON "upstream_sign_ins" ("expires_at")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE "upstream_sign_ins"');
    await q.query('DROP TABLE "federated_identities"');
    await q.query('DROP TABLE "identity_providers"');
  }
}
