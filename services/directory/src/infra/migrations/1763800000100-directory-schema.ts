import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Users, roles, permissions, role-permission links and user-role assignments, with soft delete;
 * uniqueness among live rows (emails are stored lower-cased, names compared lower-cased);
 * trigram indexes for case-insensitive substring search. Seeds the four management permissions
 * and the Administrator role holding them.
 */
export class DirectorySchema1763800000100 implements MigrationInterface {
  name = 'DirectorySchema1763800000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    await q.query(`
      CREATE TABLE "users" (
        "id" uuid PRIMARY KEY,
        "first_name" text NOT NULL,
        "last_name" text NOT NULL,
        "email" text NOT NULL,
        "phone" bigint,
        "password_hash" text NOT NULL,
        "email_verified" boolean NOT NULL DEFAULT false,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        "deleted_at" timestamptz
      )`);
    await q.query(`CREATE UNIQUE INDEX "uq_users_email_live" ON "users" ("email") WHERE "deleted_at" IS NULL`);
    await q.query(`CREATE INDEX "ix_users_created" ON "users" ("created_at", "id")`);
    for (const col of ['first_name', 'last_name', 'email']) {
      await q.query(`CREATE INDEX "ix_users_${col}_trgm" ON "users" USING gin ("${col}" gin_trgm_ops)`);
    }

    for (const table of ['roles', 'permissions']) {
      await q.query(`
        CREATE TABLE "${table}" (
          "id" uuid PRIMARY KEY,
          "name" text NOT NULL,
          "description" text NOT NULL DEFAULT '',
          "created_at" timestamptz NOT NULL DEFAULT now(),
          "updated_at" timestamptz NOT NULL DEFAULT now(),
          "deleted_at" timestamptz
        )`);
      await q.query(`CREATE UNIQUE INDEX "uq_${table}_name_live" ON "${table}" (lower("name")) WHERE "deleted_at" IS NULL`);
      await q.query(`CREATE INDEX "ix_${table}_created" ON "${table}" ("created_at", "id")`);
      await q.query(`CREATE INDEX "ix_${table}_name_trgm" ON "${table}" USING gin ("name" gin_trgm_ops)`);
      await q.query(`CREATE INDEX "ix_${table}_description_trgm" ON "${table}" USING gin ("description" gin_trgm_ops)`);
    }

    await q.query(`
      CREATE TABLE "role_permissions" (
        "id" uuid PRIMARY KEY,
        "role_id" uuid NOT NULL,
        "permission_id" uuid NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        "revoked_at" timestamptz,
        CONSTRAINT "fk_role_permissions_role" FOREIGN KEY ("role_id") REFERENCES "roles" ("id") ON DELETE CASCADE,
        CONSTRAINT "fk_role_permissions_permission" FOREIGN KEY ("permission_id") REFERENCES "permissions" ("id") ON DELETE CASCADE
      )`);
    await q.query(`CREATE UNIQUE INDEX "uq_role_permissions_live" ON "role_permissions" ("role_id", "permission_id") WHERE "revoked_at" IS NULL`);
    await q.query(`CREATE INDEX "ix_role_permissions_created" ON "role_permissions" ("created_at", "id")`);
    await q.query(`CREATE INDEX "ix_role_permissions_permission" ON "role_permissions" ("permission_id")`);

    await q.query(`
      CREATE TABLE "user_roles" (
        "user_id" uuid NOT NULL,
        "role_id" uuid NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY ("user_id", "role_id"),
        CONSTRAINT "fk_user_roles_user" FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE,
        CONSTRAINT "fk_user_roles_role" FOREIGN KEY ("role_id") REFERENCES "roles" ("id") ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX "ix_user_roles_role" ON "user_roles" ("role_id")`);

    // Seed: the management permissions and the Administrator role that holds them.
    const permissions: Array<[string, string]> = [
      ['users.manage', 'Create, read, update and delete users'],
      ['roles.manage', 'Create, read, update and delete roles'],
      ['permissions.manage', 'Create, read, update and delete permissions'],
      ['role-permissions.manage', 'Grant and revoke permissions of roles'],
    ];
    for (const [name, description] of permissions) {
      await q.query(`INSERT INTO "permissions" ("id", "name", "description") VALUES (gen_random_uuid(), $1, $2)`, [name, description]);
    }
    await q.query(`INSERT INTO "roles" ("id", "name", "description") VALUES (gen_random_uuid(), 'Administrator', 'Superuser for every management policy')`);
    await q.query(`
      INSERT INTO "role_permissions" ("id", "role_id", "permission_id")
      SELECT gen_random_uuid(), r.id, p.id FROM "roles" r CROSS JOIN "permissions" p WHERE r.name = 'Administrator'`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['user_roles', 'role_permissions', 'permissions', 'roles', 'users']) await q.query(`DROP TABLE "${t}"`);
  }
}
