/**
 * The user search: one trigram-indexed expression over first name, last name and email, and the
 * plan of a search page chosen from the planner's estimate of the matches (not left to the
 * planner). All SQL is parameterised; the search text is LIKE-escaped.
 */
import { escapeLike } from '@iam/platform';
import type { EntityManager } from 'typeorm';
import type { ListPosition, ListQuery } from '../domain/model';
import { EXACT_COUNT_BOUND, KeysetOrder, NOT_COUNTED, type Paged, count, estimatedRows, pageOf, pageParams, withAfter } from './paging';
import { USER_COLUMNS, type UserRowSql } from './user-rows';

/**
 * The characters that split a name or an email into pg_trgm words, and the upper-case letter
 * each becomes in the search expression (migration 1764400000100, spelled identically): a term
 * across a '.' or an '@' is then one word with selective trigrams. lower() leaves no upper-case
 * letter, so the replacement is one-to-one and LIKE on the replaced text is LIKE on the original.
 */
const SEARCH_WORD_CHARS = ".@-_+'' "; // SQL-quoted: the apostrophe doubled
const SEARCH_WORD_LETTERS = 'DAHUPQS';

/**
 * The expression of `ix_users_search_words` (migration 1764400000100), spelled identically so
 * the planner matches it: first name, last name and email lower-cased, joined by U+001F, word
 * separators replaced.
 */
export const USER_SEARCH = `translate(lower(u.first_name || E'\\x1f' || u.last_name || E'\\x1f' || u.email), '${SEARCH_WORD_CHARS}', '${SEARCH_WORD_LETTERS}')`;
/** The LIKE pattern in parameter `$n`, put through the same lower-casing and replacement. */
export const userSearchPattern = (n: number): string => `translate(lower($${n}::text), '${SEARCH_WORD_CHARS}', '${SEARCH_WORD_LETTERS}')`;
const SEARCH_SEPARATOR = '\u001f';

/**
 * The users' filter: one trigram-indexed condition, `USER_SEARCH LIKE pattern` (both lower-cased
 * and replaced alike), which is what `first_name ILIKE p OR last_name ILIKE p OR email ILIKE p`
 * computes (PostgreSQL's ILIKE lower-cases both sides) as long as the term cannot span two
 * fields: a term containing the separator also gets the three ILIKEs as a filter (the index
 * still narrows the rows).
 */
export function userFilters(query: ListQuery): Paged {
  const params: unknown[] = [];
  const parts: string[] = [];
  if (!query.includeDeleted) parts.push('u.deleted_at IS NULL');
  if (query.q) {
    params.push(`%${escapeLike(query.q)}%`);
    const n = params.length;
    parts.push(`${USER_SEARCH} LIKE ${userSearchPattern(n)} ESCAPE '\\'`);
    if (query.q.includes(SEARCH_SEPARATOR)) {
      parts.push(`(${['u.first_name', 'u.last_name', 'u.email'].map((c) => `${c} ILIKE $${n} ESCAPE '\\'`).join(' OR ')})`);
    }
  }
  return { where: parts.length ? `WHERE ${parts.join(' AND ')}` : '', params };
}

/**
 * A search walks the created_at order when it should meet the page within SEARCH_WALK_ROWS
 * rows, or within SEARCH_WALK_PER_MATCH rows per match of the term: a row read in index order
 * costs a fifth to a seventh of a match fetched through the trigram index (measured over a
 * million users: neighbours share a heap page), less a margin for the estimate's error. It
 * gives up after SEARCH_WALK_SLACK times the rows it should need.
 */
export const SEARCH_WALK_ROWS = 20_000;
const SEARCH_WALK_PER_MATCH = 3;
/**
 * Estimated matches above which a term is taken to have more than EXACT_COUNT_BOUND: the
 * trigram estimate runs up to 2-3 times the matches (`092@`: 999 matches, 2,002 estimated).
 * Below it a first page tries the bounded matches first (they are the page and the count when
 * there are few), and a keyset page plans with the exact count its cursor carries (a cursor is
 * not signed: a forged count cannot send a term the planner finds common to the all-matches plan,
 * nor lengthen a walk).
 */
const SEARCH_COMMON = 4 * EXACT_COUNT_BOUND;
/**
 * Estimated matches from which a first page is not counted: its total is the estimate, as the
 * bounded count would conclude (more than EXACT_COUNT_BOUND), without reading the 1,001 matches
 * it takes to know (34-113 ms over a million users, a seq scan for terms in 5 % of rows). Over
 * 176 terms cut from the bench's rows, none estimated this high had 1,001 matches or fewer (the
 * fewest: 10,000); a term the planner overestimates tenfold would show an estimate instead of
 * its exact count.
 */
const SEARCH_UNCOUNTED = 10 * EXACT_COUNT_BOUND;
const SEARCH_WALK_SLACK = 3;

/**
 * A table this small is searched without the planner's estimate: every plan is fast there, and
 * the estimate (an EXPLAIN, planned like the search itself) would be a third of the work
 * (`make soak`: 500 clients on a small directory timed out searches once it ran on every one).
 */
export const SEARCH_SMALL_TABLE = 20_000;

const TABLE_ROWS_TTL_MS = 30_000;

export interface UserSearchOptions {
  /** Tables up to this many rows are searched without the planner's estimate (tests set 0 to reach the other path). */
  readonly smallTable?: number;
}

/**
 * The user search of one database. The composition root makes one per data source and every
 * store over it (transactions included) shares it: it keeps the rows of users as the planner
 * counts them (live and deleted: the created_at walk reads both), read again after
 * TABLE_ROWS_TTL_MS, since every search needs it and it moves only with ANALYZE and autovacuum.
 */
export class UserSearch {
  private readonly smallTable: number;
  private tableRowsSeen: { n: Promise<number>; at: number } | undefined;

  constructor(opts: UserSearchOptions = {}) {
    this.smallTable = opts.smallTable ?? SEARCH_SMALL_TABLE;
  }

  /**
   * A search page. Where the page lies within the exact count's bound and the term is not
   * common, the first EXACT_COUNT_BOUND + 1 matches (trigram index, any order) give the count
   * and, when there are no more, the page itself, in one statement. Otherwise the page's plan is
   * chosen here from the planner's estimate of the matches, not left to the planner, which
   * assumes matches are spread evenly over `created_at`: a term whose matches are all recent
   * (`son8` in emails numbered in creation order) made it walk 800,000 rows of the created_at
   * index for 25 matches. The walk is tried only when it should meet the page in few rows, and
   * bounded; when it does not fill the page, or the term is rare or the page deep, all the
   * matches come from the trigram index and are sorted (one heap visit per match). A term
   * estimated at SEARCH_UNCOUNTED matches or more is not counted (its total is the estimate), and
   * a keyset page plans with the exact count its cursor carries when the term is not common.
   */
  async page(m: EntityManager, query: ListQuery): Promise<{ rows: UserRowSql[]; totalCount: number; totalCountExact: boolean; next?: ListPosition }> {
    const order = new KeysetOrder(query.order);
    const f = userFilters(query);
    const offset = query.after ? 0 : (query.page - 1) * query.pageSize;
    const fromWhere = `FROM users u ${f.where}`;
    const rows = await this.tableRows(m);
    // A small table is searched without the estimate (undefined), as if every term were rare.
    const est = rows <= this.smallTable ? undefined : { matches: await estimatedRows(m, fromWhere, f.params), rows };
    // A keyset page costs what a first page costs, whatever its depth: the walk from the
    // position when it should meet the page soon, else the matches after the position. Not counted.
    if (query.after) {
      // The first page's exact count, where the planner too finds the term rare: its estimate
      // can be twice the matches, enough to choose a walk that fails (`092@`: 999 matches spread
      // evenly, 2,002 estimated: a 13,000-row walk that gives up, then the matches). Only ever
      // lower than the estimate: a forged count can then only choose the matches, at most
      // SEARCH_COMMON of them, never a longer walk.
      const planned = est && query.countedMatches !== undefined && est.matches < SEARCH_COMMON ? { ...est, matches: Math.min(est.matches, query.countedMatches) } : est;
      const page = planned ? await searchPage(m, f, query, order, planned) : await searchMatches(m, f, query, order);
      return { ...pageOf(page, query, order), ...NOT_COUNTED };
    }
    const withinBound = offset + query.pageSize <= EXACT_COUNT_BOUND;
    // A term not known to be common: one statement gives the count and the page, unless there
    // are more matches than the bound.
    if (withinBound && (!est || est.matches < SEARCH_COMMON)) {
      const few = await searchFew(m, f, query, order);
      if (few) return { ...pageOf(few.rows, query, order), totalCount: few.count, totalCountExact: true };
    }
    // A common term: the bounded count and the page at once; a very common one is not counted (below).
    if (withinBound && est && est.matches < SEARCH_UNCOUNTED) {
      const [page, counted] = await Promise.all([searchPage(m, f, query, order, est), count(m, fromWhere, f.params, est.matches)]);
      return { ...pageOf(page, query, order), ...counted };
    }
    // The page holds one row more than asked when another follows (pageParams).
    const page = est ? await searchPage(m, f, query, order, est) : await searchMatches(m, f, query, order);
    // The page itself ends the matches, or shows there are more than the bound.
    if (page.length > 0 && page.length <= query.pageSize) return { rows: page, totalCount: offset + page.length, totalCountExact: true };
    if (page.length > 0 && est) {
      return { ...pageOf(page, query, order), totalCount: Math.max(est.matches, offset + page.length, EXACT_COUNT_BOUND + 1), totalCountExact: false };
    }
    return { ...pageOf(page, query, order), ...(await count(m, fromWhere, f.params, est?.matches)) };
  }

  private tableRows(m: EntityManager): Promise<number> {
    const seen = this.tableRowsSeen;
    if (seen && Date.now() - seen.at < TABLE_ROWS_TTL_MS) return seen.n;
    // One read for a burst of searches; a failed read is not kept.
    const n = m
      .query<[{ n: number }]>(`SELECT greatest(reltuples, 0)::float8 AS n FROM pg_class WHERE oid = 'users'::regclass`)
      .then(([row]) => Math.round(row?.n ?? 0));
    this.tableRowsSeen = { n, at: Date.now() };
    n.catch(() => {
      if (this.tableRowsSeen?.n === n) this.tableRowsSeen = undefined;
    });
    return n;
  }
}

/**
 * The count and the page when the term has at most EXACT_COUNT_BOUND matches, from those
 * matches alone (fetched in any order, sorted here); null when it has more.
 */
async function searchFew(m: EntityManager, f: Paged, query: ListQuery, order: KeysetOrder): Promise<{ rows: UserRowSql[]; count: number } | null> {
  const params = [...f.params];
  const p = pageParams(query, params);
  const rows = await m.query<Array<UserRowSql & { n: string }>>(
    `WITH matches AS MATERIALIZED (SELECT u.id, ${order.select('u')} FROM users u ${f.where} LIMIT ${EXACT_COUNT_BOUND + 1}),
          total AS (SELECT count(*) AS n FROM matches)
     SELECT total.n, page.* FROM total LEFT JOIN (
       SELECT ${USER_COLUMNS} FROM (SELECT * FROM matches mm WHERE (SELECT n FROM total) <= ${EXACT_COUNT_BOUND}
                                     ORDER BY ${order.by('mm')} LIMIT ${p.limit} OFFSET ${p.offset}) m
         JOIN users u ON u.id = m.id) page ON true
     ORDER BY ${order.by('page')}`,
    params,
  );
  const n = Number(rows[0]?.n ?? 0);
  if (n > EXACT_COUNT_BOUND) return null;
  return { rows: rows.filter((r) => r.id !== null), count: n };
}

/**
 * The page (and the row after it) by the ordered walk when it should be short, else (or when it
 * falls short) from all the matches. A keyset page is a first page from its position.
 */
async function searchPage(m: EntityManager, f: Paged, query: ListQuery, order: KeysetOrder, est: { matches: number; rows: number }): Promise<UserRowSql[]> {
  const wanted = (query.after ? 0 : (query.page - 1) * query.pageSize) + query.pageSize + 1;
  // Rows of the order the walk should read before `wanted` matches.
  const walk = est.matches > 0 ? Math.ceil((wanted * Math.max(est.rows, est.matches)) / est.matches) : Infinity;
  const useWalk = est.matches >= wanted && walk <= Math.max(SEARCH_WALK_ROWS, SEARCH_WALK_PER_MATCH * est.matches);
  return (useWalk ? await searchWalk(m, f, query, order, Math.ceil(walk * SEARCH_WALK_SLACK) + query.pageSize) : null) ?? (await searchMatches(m, f, query, order));
}

/** The page from the first `cap` rows in the order (after the position), or null when they do not fill it and the row after it. */
async function searchWalk(m: EntityManager, f: Paged, query: ListQuery, order: KeysetOrder, cap: number): Promise<UserRowSql[] | null> {
  const params = [...f.params];
  const from = withAfter('', order, 'u', query, params);
  params.push(cap);
  const capParam = `$${params.length}`;
  const p = pageParams(query, params);
  const rows = await m.query<UserRowSql[]>(
    `SELECT ${USER_COLUMNS} FROM (SELECT * FROM users u ${from} ORDER BY ${order.by('u')} LIMIT ${capParam}) u ${f.where}
      ORDER BY ${order.by('u')} LIMIT ${p.limit} OFFSET ${p.offset}`,
    params,
  );
  return rows.length > query.pageSize ? rows : null;
}

/** The page from all the matches (after the position; trigram index, or a scan for a term most rows hold), sorted. */
async function searchMatches(m: EntityManager, f: Paged, query: ListQuery, order: KeysetOrder): Promise<UserRowSql[]> {
  const params = [...f.params];
  const where = withAfter(f.where, order, 'u', query, params);
  const p = pageParams(query, params);
  return m.query<UserRowSql[]>(
    `WITH matches AS MATERIALIZED (SELECT u.id, ${order.select('u')} FROM users u ${where})
     SELECT ${USER_COLUMNS} FROM (SELECT * FROM matches mm ORDER BY ${order.by('mm')} LIMIT ${p.limit} OFFSET ${p.offset}) page
       JOIN users u ON u.id = page.id ORDER BY ${order.by('page')}`,
    params,
  );
}
