import { lookalikeKey } from '@iam/platform';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Organizations (issue #41), in the directory beside the users they hold (services/directory
 * README, "Organizations"): the organizations (slug unique case-insensitively and by its
 * lookalike key among live ones), the platform-wide template of organization roles built from the
 * permissions (the built-in `org.admin` seeded), members (a user in any number of organizations),
 * the organization roles each member holds there, claimed domains and invitations. Every
 * member, domain and invitation row carries its organization's id, and every index that a
 * store's query walks starts with it. The built-in permission `organizations.manage` is seeded
 * and linked to Administrator as 1766000000200 does for webhooks.manage.
 */
export class Organizations1767000000100 implements MigrationInterface {
  name = 'Organizations1767000000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "organizations" (
      "id" uuid PRIMARY KEY, "name" text NOT NULL, "slug" text NOT NULL, "slug_skeleton" text NOT NULL,
      "jit_enabled" boolean NOT NULL DEFAULT false, "jit_role_ids" uuid[] NOT NULL DEFAULT '{}',
      "created_at" timestamptz NOT NULL DEFAULT now(), "updated_at" timestamptz NOT NULL DEFAULT now(), "deleted_at" timestamptz)`);
    await q.query(`CREATE UNIQUE INDEX "uq_organizations_slug_live" ON "organizations" ("slug") WHERE "deleted_at" IS NULL`);
    await q.query(`CREATE UNIQUE INDEX "uq_organizations_slug_skeleton_live" ON "organizations" ("slug_skeleton") WHERE "deleted_at" IS NULL`);
    await q.query(`CREATE INDEX "ix_organizations_created" ON "organizations" ("created_at", "id")`);

    await q.query(`CREATE TABLE "organization_roles" (
      "id" uuid PRIMARY KEY, "name" text NOT NULL, "name_skeleton" text NOT NULL, "description" text NOT NULL DEFAULT '',
      "created_at" timestamptz NOT NULL DEFAULT now(), "updated_at" timestamptz NOT NULL DEFAULT now(), "deleted_at" timestamptz)`);
    await q.query(`CREATE UNIQUE INDEX "uq_organization_roles_name_skeleton_live" ON "organization_roles" ("name_skeleton") WHERE "deleted_at" IS NULL`);
    await q.query(`CREATE INDEX "ix_organization_roles_created" ON "organization_roles" ("created_at", "id")`);
    await q.query(`CREATE TABLE "organization_role_permissions" (
      "organization_role_id" uuid NOT NULL, "permission_id" uuid NOT NULL, "created_at" timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT "pk_organization_role_permissions" PRIMARY KEY ("organization_role_id", "permission_id"),
      CONSTRAINT "fk_org_role_permissions_role" FOREIGN KEY ("organization_role_id") REFERENCES "organization_roles" ("id") ON DELETE CASCADE,
      CONSTRAINT "fk_org_role_permissions_permission" FOREIGN KEY ("permission_id") REFERENCES "permissions" ("id") ON DELETE CASCADE)`);
    await q.query(`CREATE INDEX "ix_organization_role_permissions_permission" ON "organization_role_permissions" ("permission_id")`);

    await q.query(`CREATE TABLE "organization_members" (
      "organization_id" uuid NOT NULL, "user_id" uuid NOT NULL, "created_at" timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT "pk_organization_members" PRIMARY KEY ("organization_id", "user_id"),
      CONSTRAINT "fk_organization_members_organization" FOREIGN KEY ("organization_id") REFERENCES "organizations" ("id") ON DELETE CASCADE,
      CONSTRAINT "fk_organization_members_user" FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE)`);
    await q.query(`CREATE INDEX "ix_organization_members_list" ON "organization_members" ("organization_id", "created_at", "user_id")`);
    await q.query(`CREATE INDEX "ix_organization_members_user" ON "organization_members" ("user_id")`);
    await q.query(`CREATE TABLE "organization_member_roles" (
      "organization_id" uuid NOT NULL, "user_id" uuid NOT NULL, "organization_role_id" uuid NOT NULL,
      CONSTRAINT "pk_organization_member_roles" PRIMARY KEY ("organization_id", "user_id", "organization_role_id"),
      CONSTRAINT "fk_organization_member_roles_member" FOREIGN KEY ("organization_id", "user_id") REFERENCES "organization_members" ("organization_id", "user_id") ON DELETE CASCADE,
      CONSTRAINT "fk_organization_member_roles_role" FOREIGN KEY ("organization_role_id") REFERENCES "organization_roles" ("id") ON DELETE CASCADE)`);
    await q.query(`CREATE INDEX "ix_organization_member_roles_role" ON "organization_member_roles" ("organization_role_id")`);

    await q.query(`CREATE TABLE "organization_domains" (
      "id" uuid PRIMARY KEY, "organization_id" uuid NOT NULL, "domain" text NOT NULL, "status" text NOT NULL DEFAULT 'pending',
      "challenge" text NOT NULL, "checked_at" timestamptz, "verified_at" timestamptz, "created_at" timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT "ck_organization_domains_status" CHECK ("status" IN ('pending', 'verified', 'failed')),
      CONSTRAINT "fk_organization_domains_organization" FOREIGN KEY ("organization_id") REFERENCES "organizations" ("id") ON DELETE CASCADE)`);
    await q.query(`CREATE UNIQUE INDEX "uq_organization_domains_org_domain" ON "organization_domains" ("organization_id", "domain")`);
    await q.query(`CREATE UNIQUE INDEX "uq_organization_domains_verified" ON "organization_domains" ("domain") WHERE "status" = 'verified'`);
    await q.query(`CREATE INDEX "ix_organization_domains_list" ON "organization_domains" ("organization_id", "created_at", "id")`);

    await q.query(`CREATE TABLE "organization_invitations" (
      "id" uuid PRIMARY KEY, "organization_id" uuid NOT NULL, "email" text NOT NULL, "role_ids" uuid[] NOT NULL DEFAULT '{}',
      "token_hash" bytea NOT NULL, "status" text NOT NULL DEFAULT 'pending', "invited_by" uuid, "expires_at" timestamptz NOT NULL,
      "accepted_by" uuid, "created_at" timestamptz NOT NULL DEFAULT now(), "updated_at" timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT "ck_organization_invitations_status" CHECK ("status" IN ('pending', 'accepted', 'revoked')),
      CONSTRAINT "fk_organization_invitations_organization" FOREIGN KEY ("organization_id") REFERENCES "organizations" ("id") ON DELETE CASCADE)`);
    await q.query(`CREATE UNIQUE INDEX "uq_organization_invitations_pending" ON "organization_invitations" ("organization_id", "email") WHERE "status" = 'pending'`);
    await q.query(`CREATE UNIQUE INDEX "uq_organization_invitations_token" ON "organization_invitations" ("token_hash")`);
    await q.query(`CREATE INDEX "ix_organization_invitations_list" ON "organization_invitations" ("organization_id", "created_at", "id")`);

    await q.query(`INSERT INTO "organization_roles" ("id", "name", "name_skeleton", "description") VALUES (gen_random_uuid(), 'org.admin', $1, $2)`, [
      lookalikeKey('org.admin'),
      "Manages the organization's members, invitations and their organization roles",
    ]);
    const name = 'organizations.manage';
    await q.query(
      `INSERT INTO "permissions" ("id", "name", "name_skeleton", "description")
       SELECT gen_random_uuid(), $1, $2, $3
        WHERE NOT EXISTS (SELECT 1 FROM "permissions" WHERE (lower("name") = $1 OR "name_skeleton" = $2) AND "deleted_at" IS NULL)`,
      [name, lookalikeKey(name), 'Create, change and delete organizations, their members, roles, invitations and domains, and the organization role template'],
    );
    await q.query(
      `INSERT INTO "role_permissions" ("id", "role_id", "permission_id")
       SELECT gen_random_uuid(), r.id, p.id
         FROM "roles" r CROSS JOIN "permissions" p
        WHERE r.name = 'Administrator' AND r.deleted_at IS NULL
          AND lower(p.name) = $1 AND p.deleted_at IS NULL
          AND NOT EXISTS (SELECT 1 FROM "role_permissions" rp WHERE rp.role_id = r.id AND rp.permission_id = p.id AND rp.revoked_at IS NULL)`,
      [name],
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM "role_permissions" WHERE "permission_id" IN (SELECT "id" FROM "permissions" WHERE "name" = 'organizations.manage')`);
    await q.query(`DELETE FROM "permissions" WHERE "name" = 'organizations.manage'`);
    for (const t of ['organization_invitations', 'organization_domains', 'organization_member_roles', 'organization_members', 'organization_role_permissions', 'organization_roles', 'organizations']) {
      await q.query(`DROP TABLE "${t}"`);
    }
  }
}
