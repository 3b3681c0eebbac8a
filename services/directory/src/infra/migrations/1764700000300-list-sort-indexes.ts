import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The orders a users list can be sorted by (`sort=email|lastName`, ascending or descending), as
 * indexes in that order with the id that breaks ties: a page, and a keyset page after a cursor,
 * is then one index range however deep (without them a million users are sorted per page).
 * Roles and permissions are small tables and sort without one.
 */
export class ListSortIndexes1764700000300 implements MigrationInterface {
  name = 'ListSortIndexes1764700000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query('SET LOCAL statement_timeout = 0');
    await q.query(`CREATE INDEX "ix_users_email_order" ON "users" ("email", "id")`);
    await q.query(`CREATE INDEX "ix_users_name_order" ON "users" ("last_name", "first_name", "id")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX "ix_users_name_order"');
    await q.query('DROP INDEX "ix_users_email_order"');
  }
}
