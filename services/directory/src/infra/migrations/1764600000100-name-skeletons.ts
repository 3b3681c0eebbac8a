import { addLookalikeKeyColumn } from '@iam/platform';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Role and permission names that look alike cannot both be live (SECURITY.md "Lookalike names"):
 * `name_skeleton` holds each name's lookalikeKey (UTS #39 skeletons, case aside), unique among
 * live rows, so two concurrent creates of lookalikes end in one row and one 409. Existing rows
 * are filled in; a live row whose key an older live row holds keeps NULL (addLookalikeKeyColumn).
 * A later migration that inserts a role or permission must fill the column too.
 */
export class NameSkeletons1764600000100 implements MigrationInterface {
  name = 'NameSkeletons1764600000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query('SET LOCAL statement_timeout = 0');
    for (const table of ['roles', 'permissions']) {
      await addLookalikeKeyColumn(q, { table, source: 'name', column: 'name_skeleton', index: `uq_${table}_name_skeleton_live`, live: '"deleted_at" IS NULL' });
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['roles', 'permissions']) await q.query(`ALTER TABLE "${table}" DROP COLUMN "name_skeleton"`);
  }
}
