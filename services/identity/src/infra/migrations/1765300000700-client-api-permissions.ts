import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The API permissions a third-party client's users may delegate to it (each asked as a scope of
 * the same name): the ceiling of its users' API tokens. Clients registered before have none, so
 * their users' tokens carry no permission until an administrator sets it (issue #34 item 3).
 */
export class ClientApiPermissions1765300000700 implements MigrationInterface {
  name = 'ClientApiPermissions1765300000700';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "oauth_clients" ADD COLUMN "api_permissions" text[] NOT NULL DEFAULT '{}'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "oauth_clients" DROP COLUMN "api_permissions"');
  }
}
