import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The OAuth client registry (DESIGN §5 "Clients"). Only the SHA-256 of a confidential client's
 * secret is kept (the secret is 32 random bytes, so a plain hash suffices, as for refresh
 * tokens). Deleted clients are kept (soft delete) so their ids are never reused; `version` guards
 * concurrent updates. The built-in `iam-console` comes from configuration, never from this table.
 */
export class OAuthClients1764800000100 implements MigrationInterface {
  name = 'OAuthClients1764800000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "oauth_clients" (
        "client_id" text PRIMARY KEY,
        "name" text NOT NULL,
        "type" text NOT NULL,
        "secret_hash" bytea,
        "redirect_uris" text[] NOT NULL DEFAULT '{}',
        "post_logout_redirect_uris" text[] NOT NULL DEFAULT '{}',
        "grant_types" text[] NOT NULL DEFAULT '{}',
        "roles" text[] NOT NULL DEFAULT '{}',
        "require_par" boolean NOT NULL DEFAULT false,
        "dpop_bound" boolean NOT NULL DEFAULT false,
        "first_party" boolean NOT NULL DEFAULT false,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        "deleted_at" timestamptz,
        "version" integer NOT NULL DEFAULT 1,
        CONSTRAINT "ck_oauth_clients_type" CHECK ("type" IN ('public', 'confidential'))
      )`);
    await q.query(`CREATE INDEX "ix_oauth_clients_order" ON "oauth_clients" ("created_at", "client_id")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE "oauth_clients"');
  }
}
