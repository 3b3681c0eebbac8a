import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SCIM 2.0 provisioning per organization (issue #42; services/directory README, "SCIM"):
 * - `scim_connections`: an organization's SCIM clients; only the bearer token's SHA-256 is kept.
 * - `scim_users`: the members a connection provisioned (`userName`, unique per organization
 *   case-insensitively; its `externalId`, unique per connection,
 *   the SCIM attributes the platform has no column for, and the row version the ETag is made
 *   of); the composite foreign key to the membership removes it with the membership.
 * - `organization_groups` + `organization_group_members`: SCIM Groups, per organization, each
 *   carrying organization roles (`role_ids`) its members hold there beside their own.
 * - `users.disabled_at`: `active: false` (no sign-in, no refresh, no organization grant).
 */
export class Scim1767100000100 implements MigrationInterface {
  name = 'Scim1767100000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "users" ADD COLUMN "disabled_at" timestamptz NULL`);
    await q.query(`CREATE TABLE "scim_connections" (
      "id" uuid PRIMARY KEY, "organization_id" uuid NOT NULL, "name" text NOT NULL, "token_hash" bytea NOT NULL,
      "created_by" text NOT NULL, "created_at" timestamptz NOT NULL DEFAULT now(), "revoked_at" timestamptz, "last_used_at" timestamptz,
      CONSTRAINT "fk_scim_connections_organization" FOREIGN KEY ("organization_id") REFERENCES "organizations" ("id") ON DELETE CASCADE)`);
    await q.query(`CREATE UNIQUE INDEX "uq_scim_connections_token" ON "scim_connections" ("token_hash")`);
    await q.query(`CREATE INDEX "ix_scim_connections_list" ON "scim_connections" ("organization_id", "created_at", "id")`);

    await q.query(`CREATE TABLE "scim_users" (
      "organization_id" uuid NOT NULL, "user_id" uuid NOT NULL, "connection_id" uuid NOT NULL, "external_id" text,
      "user_name" text NOT NULL, "user_name_key" text NOT NULL,
      "attributes" jsonb NOT NULL DEFAULT '{}', "version" int8 NOT NULL DEFAULT 1,
      "created_at" timestamptz NOT NULL DEFAULT now(), "updated_at" timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT "pk_scim_users" PRIMARY KEY ("organization_id", "user_id"),
      CONSTRAINT "fk_scim_users_member" FOREIGN KEY ("organization_id", "user_id") REFERENCES "organization_members" ("organization_id", "user_id") ON DELETE CASCADE,
      CONSTRAINT "fk_scim_users_connection" FOREIGN KEY ("connection_id") REFERENCES "scim_connections" ("id") ON DELETE CASCADE)`);
    await q.query(`CREATE UNIQUE INDEX "uq_scim_users_external_id" ON "scim_users" ("connection_id", "external_id") WHERE "external_id" IS NOT NULL`);
    await q.query(`CREATE UNIQUE INDEX "uq_scim_users_user_name" ON "scim_users" ("organization_id", "user_name_key")`);
    await q.query(`CREATE INDEX "ix_scim_users_list" ON "scim_users" ("organization_id", "created_at", "user_id")`);

    await q.query(`CREATE TABLE "organization_groups" (
      "id" uuid PRIMARY KEY, "organization_id" uuid NOT NULL, "display_name" text NOT NULL, "display_key" text NOT NULL,
      "external_id" text, "connection_id" uuid, "role_ids" uuid[] NOT NULL DEFAULT '{}', "version" int8 NOT NULL DEFAULT 1,
      "created_at" timestamptz NOT NULL DEFAULT now(), "updated_at" timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT "fk_organization_groups_organization" FOREIGN KEY ("organization_id") REFERENCES "organizations" ("id") ON DELETE CASCADE,
      CONSTRAINT "fk_organization_groups_connection" FOREIGN KEY ("connection_id") REFERENCES "scim_connections" ("id") ON DELETE SET NULL)`);
    await q.query(`CREATE UNIQUE INDEX "uq_organization_groups_display" ON "organization_groups" ("organization_id", "display_key")`);
    await q.query(`CREATE UNIQUE INDEX "uq_organization_groups_external_id" ON "organization_groups" ("connection_id", "external_id") WHERE "external_id" IS NOT NULL`);
    await q.query(`CREATE INDEX "ix_organization_groups_list" ON "organization_groups" ("organization_id", "created_at", "id")`);
    await q.query(`CREATE TABLE "organization_group_members" (
      "organization_id" uuid NOT NULL, "group_id" uuid NOT NULL, "user_id" uuid NOT NULL,
      CONSTRAINT "pk_organization_group_members" PRIMARY KEY ("group_id", "user_id"),
      CONSTRAINT "fk_organization_group_members_group" FOREIGN KEY ("group_id") REFERENCES "organization_groups" ("id") ON DELETE CASCADE,
      CONSTRAINT "fk_organization_group_members_member" FOREIGN KEY ("organization_id", "user_id") REFERENCES "organization_members" ("organization_id", "user_id") ON DELETE CASCADE)`);
    await q.query(`CREATE INDEX "ix_organization_group_members_member" ON "organization_group_members" ("organization_id", "user_id")`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['organization_group_members', 'organization_groups', 'scim_users', 'scim_connections']) await q.query(`DROP TABLE "${t}"`);
    await q.query(`ALTER TABLE "users" DROP COLUMN "disabled_at"`);
  }
}
