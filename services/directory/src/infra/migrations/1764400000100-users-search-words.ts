import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * User search, second index (issue #12 item 6): the trigram index of 1764300000100 over the
 * same lower-cased name‖U+001F‖name‖U+001F‖email, with the characters that split an email or a
 * name into words ('.', '@', '-', '_', '+', apostrophe, space) each replaced by its own
 * upper-case letter (`SEARCH_WORD_CHARS` → `SEARCH_WORD_LETTERS` in stores.ts, spelled
 * identically). pg_trgm keeps only letters and digits as word characters, so a term across a
 * '.' or an '@' (`ri.k`, `ohn.ma`, `2@e`) used to give two word pieces whose trigrams ("ri ",
 * "  k") nearly every row holds: the index kept most rows and the recheck dropped them (100–300
 * ms). Replaced, the term is one word with selective trigrams ("riD" → "rid", "idk").
 *
 * The replacement is exact, not an approximation: lower() leaves no upper-case letter, so each
 * replaced character maps to a letter nothing else maps to and `translated LIKE translated
 * pattern` holds exactly when the original LIKE does (the index itself folds case, so its
 * trigrams only narrow; the recheck is the exact comparison). U+001F stays a separator: no term
 * without it spans two fields.
 *
 * Replaces ix_users_search_trgm (nothing queries the old expression any more). Building takes a
 * SHARE lock on users (writes wait, reads go on) for about a minute per million users here.
 */
export class UsersSearchWords1764400000100 implements MigrationInterface {
  name = 'UsersSearchWords1764400000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query('SET LOCAL statement_timeout = 0');
    await q.query(
      `CREATE INDEX "ix_users_search_words" ON "users"
        USING gin ((translate(lower("first_name" || E'\\x1f' || "last_name" || E'\\x1f' || "email"), '.@-_+'' ', 'DAHUPQS')) gin_trgm_ops)`,
    );
    await q.query('DROP INDEX IF EXISTS "ix_users_search_trgm"');
    // As for the index it replaces: 1,000 histogram entries for the planner's match estimates.
    // ANALYZE in the transaction that created the index ignores the index's own target (it
    // gathered 100 entries after 1764300000100, whose plans then took `ith` for a rare term), so
    // the session default says it too, for this transaction only.
    await q.query('ALTER INDEX "ix_users_search_words" ALTER COLUMN 1 SET STATISTICS 1000');
    await q.query('SET LOCAL default_statistics_target = 1000');
    await q.query('ANALYZE "users"');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('SET LOCAL statement_timeout = 0');
    await q.query(
      `CREATE INDEX IF NOT EXISTS "ix_users_search_trgm" ON "users"
        USING gin ((lower("first_name" || E'\\x1f' || "last_name" || E'\\x1f' || "email")) gin_trgm_ops)`,
    );
    await q.query('ALTER INDEX "ix_users_search_trgm" ALTER COLUMN 1 SET STATISTICS 1000');
    await q.query('DROP INDEX IF EXISTS "ix_users_search_words"');
    await q.query('SET LOCAL default_statistics_target = 1000');
    await q.query('ANALYZE "users"');
  }
}
