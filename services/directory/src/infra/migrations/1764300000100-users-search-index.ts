import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One trigram index for user search (issue #12), over one lower-cased expression joining first
 * name, last name and email with U+001F (a character a search term without it cannot span), in
 * place of the three per-column trigram indexes: a match is one index condition and one recheck
 * per row instead of three `ILIKE`s. `USER_SEARCH` in stores.ts is the same expression, spelled
 * identically (the planner matches it structurally); a test checks the plan uses this index.
 *
 * An expression index, not a stored generated column: adding the column would rewrite the whole
 * table under an ACCESS EXCLUSIVE lock (reads blocked for the length of the rewrite on a large
 * table); building the index takes a SHARE lock (writes to users wait, reads go on) for about
 * 30 s per million users on a loaded 2-core machine, and the analyze a few seconds.
 */
export class UsersSearchIndex1764300000100 implements MigrationInterface {
  name = 'UsersSearchIndex1764300000100';

  async up(q: QueryRunner): Promise<void> {
    // The pool's 15 s statement_timeout is for requests; the build scans the whole table. LOCAL:
    // this migration's own transaction only.
    await q.query('SET LOCAL statement_timeout = 0');
    await q.query(
      `CREATE INDEX "ix_users_search_trgm" ON "users"
        USING gin ((lower("first_name" || E'\\x1f' || "last_name" || E'\\x1f' || "email")) gin_trgm_ops)`,
    );
    for (const col of ['first_name', 'last_name', 'email']) await q.query(`DROP INDEX IF EXISTS "ix_users_${col}_trgm"`);
    // Statistics of the expression, which the planner reads to estimate a term's matches (page
    // plan, and the totalCount beyond the exact bound): 1,000 histogram entries instead of 100,
    // so a term matching 1 % of users is not taken for one matching none; gathered now, not at
    // autovacuum's next analyze.
    await q.query('ALTER INDEX "ix_users_search_trgm" ALTER COLUMN 1 SET STATISTICS 1000');
    await q.query('ANALYZE "users"');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('SET LOCAL statement_timeout = 0');
    for (const col of ['first_name', 'last_name', 'email']) {
      await q.query(`CREATE INDEX IF NOT EXISTS "ix_users_${col}_trgm" ON "users" USING gin ("${col}" gin_trgm_ops)`);
    }
    await q.query('DROP INDEX IF EXISTS "ix_users_search_trgm"');
  }
}
