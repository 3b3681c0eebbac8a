/**
 * PostgreSQL implementations of the directory's stores, bound to an EntityManager (a transaction
 * or the data source). All SQL is parameterised; search text is LIKE-escaped.
 */
import { AppError, UNIQUE_VIOLATION, escapeLike, lookalikeKey, pgConstraint, pgErrorCode, queryNamed } from '@iam/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { LinkQuery, ListQuery, Page, Permission, Principal, Role, RolePermission, User } from '../domain/model';
import { ADMINISTRATOR_ROLE } from '../domain/model';
import type { CredentialStore, PermissionStore, RolePermissionStore, RoleStore, RowLock, Stores, UserStore } from '../domain/ports';

/** Unique indexes → the conflict the caller sees. */
const CONFLICTS: Record<string, { field: string; detail: string; message?: string }> = {
  uq_users_email_live: { field: 'email', detail: 'A user with this email already exists.' },
  uq_roles_name_live: { field: 'name', detail: 'A role with this name already exists.' },
  uq_permissions_name_live: { field: 'name', detail: 'A permission with this name already exists.' },
  uq_roles_name_skeleton_live: { field: 'name', detail: 'A role whose name looks the same already exists.', message: 'looks like a name already taken' },
  uq_permissions_name_skeleton_live: { field: 'name', detail: 'A permission whose name looks the same already exists.', message: 'looks like a name already taken' },
  uq_role_permissions_live: { field: 'permissionId', detail: 'The role already holds this permission.' },
};

/** Runs a write, turning a unique violation into CONFLICT. */
export async function mapConflicts<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (pgErrorCode(err) === UNIQUE_VIOLATION) {
      const c = CONFLICTS[pgConstraint(err) ?? ''];
      if (c) throw AppError.conflict(c.detail, [{ field: c.field, message: c.message ?? 'is already taken' }]);
    }
    throw err;
  }
}

interface Paged {
  where: string;
  params: unknown[];
}

/** `(a ILIKE $n OR b ILIKE $n …)` for the search text, plus the soft-delete filter. */
function filters(query: ListQuery, columns: readonly string[], deletedColumn: string | null, params: unknown[] = []): Paged {
  const parts: string[] = [];
  if (deletedColumn && !query.includeDeleted) parts.push(`${deletedColumn} IS NULL`);
  if (query.q) {
    params.push(`%${escapeLike(query.q)}%`);
    const n = params.length;
    parts.push(`(${columns.map((c) => `${c} ILIKE $${n} ESCAPE '\\'`).join(' OR ')})`);
  }
  return { where: parts.length ? `WHERE ${parts.join(' AND ')}` : '', params };
}

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
function userFilters(query: ListQuery): Paged {
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

function pageParams(query: ListQuery, params: unknown[]): { limit: string; offset: string } {
  params.push(query.pageSize, (query.page - 1) * query.pageSize);
  return { limit: `$${params.length - 1}`, offset: `$${params.length}` };
}

/**
 * Counts exactly up to this many matching rows; beyond, the planner's estimate stands in (an
 * exact count of a term matching a large part of a million users visits every matching row).
 * Counting the first 1,001 matches of a common trigram over a million users visits about 1,000
 * heap rows (10–50 ms on a loaded 2-core machine); the first 10,001 cost ten times that.
 */
export const EXACT_COUNT_BOUND = 1_000;

/**
 * A search walks the created_at order when it should meet the page within SEARCH_WALK_ROWS
 * rows, or within SEARCH_WALK_PER_MATCH rows per match of the term: a row read in index order
 * costs a fifth to a seventh of a match fetched through the trigram index (measured over a
 * million users: neighbours share a heap page), less a margin for the estimate's error. It
 * gives up after SEARCH_WALK_SLACK times the rows it should need.
 */
export const SEARCH_WALK_ROWS = 20_000;
const SEARCH_WALK_PER_MATCH = 3;
/** Estimated matches above which a term is taken to have more than EXACT_COUNT_BOUND. */
const SEARCH_COMMON = 2 * EXACT_COUNT_BOUND;
const SEARCH_WALK_SLACK = 3;

/** The planner's row estimate for `SELECT 1 ${fromWhere}` (no execution). */
async function estimatedRows(m: EntityManager, fromWhere: string, params: unknown[]): Promise<number> {
  const [plan] = await m.query<[{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }]>(`EXPLAIN (FORMAT JSON) SELECT 1 ${fromWhere}`, params);
  return Math.round(plan['QUERY PLAN'][0]?.Plan['Plan Rows'] ?? 0);
}

/**
 * The rows of users as the planner counts them (live and deleted: the created_at walk reads
 * both), per database, read again after TABLE_ROWS_TTL_MS: every search needs it, and it moves
 * only with ANALYZE and autovacuum.
 */
const tableRowsSeen = new WeakMap<object, { n: Promise<number>; at: number }>();
const TABLE_ROWS_TTL_MS = 30_000;

function tableRows(m: EntityManager): Promise<number> {
  const seen = tableRowsSeen.get(m.connection);
  if (seen && Date.now() - seen.at < TABLE_ROWS_TTL_MS) return seen.n;
  // One read for a burst of searches; a failed read is not kept.
  const n = m
    .query<[{ n: number }]>(`SELECT greatest(reltuples, 0)::float8 AS n FROM pg_class WHERE oid = 'users'::regclass`)
    .then(([row]) => Math.round(row?.n ?? 0));
  tableRowsSeen.set(m.connection, { n, at: Date.now() });
  n.catch(() => {
    if (tableRowsSeen.get(m.connection)?.n === n) tableRowsSeen.delete(m.connection);
  });
  return n;
}

/**
 * A table this small is searched without the planner's estimate: every plan is fast there, and
 * the estimate (an EXPLAIN, planned like the search itself) would be a third of the work
 * (`make soak`: 500 clients on a small directory timed out searches once it ran on every one).
 */
export const SEARCH_SMALL_TABLE = 20_000;

export interface StoreOptions {
  /** Tables up to this many rows are searched without the planner's estimate (tests set 0 to reach the other path). */
  readonly searchSmallTable?: number;
}

/**
 * `totalCount` of a list: `SELECT count(*)` over at most EXACT_COUNT_BOUND + 1 matching rows;
 * when there are more, the planner's row estimate of the whole query (at least the bound + 1),
 * flagged not exact. `fromWhere` is the query's FROM … WHERE … (parameterised by `params`);
 * `estimate`, when the caller has it already, saves planning the query again.
 */
async function count(m: EntityManager, fromWhere: string, params: unknown[], estimate?: number): Promise<{ totalCount: number; totalCountExact: boolean }> {
  const [row] = await m.query<[{ n: string }]>(`SELECT count(*) AS n FROM (SELECT 1 ${fromWhere} LIMIT ${EXACT_COUNT_BOUND + 1}) bounded`, params);
  const n = Number(row.n);
  if (n <= EXACT_COUNT_BOUND) return { totalCount: n, totalCountExact: true };
  return { totalCount: Math.max(estimate ?? (await estimatedRows(m, fromWhere, params)), EXACT_COUNT_BOUND + 1), totalCountExact: false };
}

// ---------------------------------------------------------------------------

interface UserRowSql {
  id: string;
  first_name: string;
  last_name: string;
  email: string;
  phone: string | null;
  email_verified: boolean;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

const USER_COLUMNS = 'u.id, u.first_name, u.last_name, u.email, u.phone, u.email_verified, u.created_at, u.updated_at, u.deleted_at';

class PgUserStore implements UserStore {
  constructor(
    private readonly m: EntityManager,
    private readonly searchSmallTable = SEARCH_SMALL_TABLE,
  ) {}

  async insert(u: { id: string; firstName: string; lastName: string; email: string; phone: number | null; passwordHash: string }): Promise<void> {
    await mapConflicts(() =>
      this.m.query(
        `INSERT INTO users (id, first_name, last_name, email, phone, password_hash) VALUES ($1, $2, $3, $4, $5, $6)`,
        [u.id, u.firstName, u.lastName, u.email, u.phone, u.passwordHash],
      ),
    );
  }

  async update(id: string, patch: Partial<{ firstName: string; lastName: string; email: string; phone: number | null; passwordHash: string; emailVerified: boolean }>): Promise<void> {
    const columns: Record<string, string> = {
      firstName: 'first_name',
      lastName: 'last_name',
      email: 'email',
      phone: 'phone',
      passwordHash: 'password_hash',
      emailVerified: 'email_verified',
    };
    const sets: string[] = [];
    const params: unknown[] = [id];
    for (const [k, col] of Object.entries(columns)) {
      const v = (patch as Record<string, unknown>)[k];
      if (v === undefined) continue;
      params.push(v);
      sets.push(`${col} = $${params.length}`);
    }
    if (sets.length === 0) return;
    await mapConflicts(() => this.m.query(`UPDATE users SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`, params));
  }

  async setRoles(userId: string, roleIds: readonly string[]): Promise<void> {
    await this.m.query('DELETE FROM user_roles WHERE user_id = $1 AND NOT (role_id = ANY($2::uuid[]))', [userId, roleIds]);
    if (roleIds.length > 0) {
      await this.m.query(
        `INSERT INTO user_roles (user_id, role_id) SELECT $1, unnest($2::uuid[]) ON CONFLICT DO NOTHING`,
        [userId, roleIds],
      );
    }
    await this.m.query('UPDATE users SET updated_at = now() WHERE id = $1', [userId]);
  }

  async softDelete(id: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>('UPDATE users SET deleted_at = now(), updated_at = now() WHERE id = $1 AND deleted_at IS NULL', [id]);
    return n > 0;
  }

  async findById(id: string, opts: { includeDeleted?: boolean; forUpdate?: boolean } = {}): Promise<User | null> {
    // One round trip: the row and its live role names (FOR UPDATE locks only the user row).
    const sql = `SELECT ${USER_COLUMNS},
              ARRAY(SELECT r.name FROM user_roles ur JOIN roles r ON r.id = ur.role_id
                     WHERE ur.user_id = u.id AND r.deleted_at IS NULL ORDER BY r.name) AS role_names
         FROM users u WHERE u.id = $1 ${opts.includeDeleted ? '' : 'AND u.deleted_at IS NULL'} ${opts.forUpdate ? 'FOR UPDATE OF u' : ''}`;
    // The read path (GET by id, outside a transaction): a named statement (queryNamed); the
    // locking read has its own text and runs in a transaction, unnamed.
    type Row = UserRowSql & { role_names: string[] };
    const [r] = opts.forUpdate
      ? await this.m.query<Row[]>(sql, [id])
      : await queryNamed<Row>(this.m, opts.includeDeleted ? 'directory.users.byIdAny' : 'directory.users.byId', sql, [id]);
    return r ? toUser(r, r.role_names) : null;
  }

  async list(query: ListQuery): Promise<Page<User>> {
    if (query.q) return this.search(query);
    const f = userFilters(query);
    const params = [...f.params];
    const p = pageParams(query, params);
    // The count and the page on two pool connections at once (one after the other inside a
    // transaction): the latency is the slower of the two, not their sum.
    const [counted, rows] = await Promise.all([
      count(this.m, `FROM users u ${f.where}`, f.params),
      this.m.query<UserRowSql[]>(`SELECT ${USER_COLUMNS} FROM users u ${f.where} ORDER BY u.created_at, u.id LIMIT ${p.limit} OFFSET ${p.offset}`, params),
    ]);
    return { items: await this.withRoles(rows), ...counted };
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
   * matches come from the trigram index and are sorted (one heap visit per match).
   */
  private async search(query: ListQuery): Promise<Page<User>> {
    const f = userFilters(query);
    const offset = (query.page - 1) * query.pageSize;
    const fromWhere = `FROM users u ${f.where}`;
    const rows = await tableRows(this.m);
    // A small table is searched without the estimate (undefined), as if every term were rare.
    const est = rows <= this.searchSmallTable ? undefined : { matches: await estimatedRows(this.m, fromWhere, f.params), rows };
    const withinBound = offset + query.pageSize <= EXACT_COUNT_BOUND;
    // A term not known to be common: one statement gives the count and the page, unless there
    // are more matches than the bound.
    if (withinBound && (!est || est.matches < SEARCH_COMMON)) {
      const few = await this.searchFew(f, query);
      if (few) return { items: await this.withRoles(few.rows), totalCount: few.count, totalCountExact: true };
    }
    // A common term: the bounded count and the page at once.
    if (withinBound && est) {
      const [page, counted] = await Promise.all([this.searchPage(f, query, est), count(this.m, fromWhere, f.params, est.matches)]);
      return { items: await this.withRoles(page), ...counted };
    }
    const page = est ? await this.searchPage(f, query, est) : await this.searchMatches(f, query);
    const items = await this.withRoles(page);
    // The page itself ends the matches, or shows there are more than the bound.
    if (page.length > 0 && page.length < query.pageSize) return { items, totalCount: offset + page.length, totalCountExact: true };
    if (page.length > 0 && est) return { items, totalCount: Math.max(est.matches, offset + page.length, EXACT_COUNT_BOUND + 1), totalCountExact: false };
    return { items, ...(await count(this.m, fromWhere, f.params, est?.matches)) };
  }

  /**
   * The count and the page when the term has at most EXACT_COUNT_BOUND matches, from those
   * matches alone (fetched in any order, sorted here); null when it has more.
   */
  private async searchFew(f: Paged, query: ListQuery): Promise<{ rows: UserRowSql[]; count: number } | null> {
    const params = [...f.params];
    const p = pageParams(query, params);
    const rows = await this.m.query<Array<UserRowSql & { n: string }>>(
      `WITH matches AS MATERIALIZED (SELECT u.id, u.created_at FROM users u ${f.where} LIMIT ${EXACT_COUNT_BOUND + 1}),
            total AS (SELECT count(*) AS n FROM matches)
       SELECT total.n, page.* FROM total LEFT JOIN (
         SELECT ${USER_COLUMNS} FROM (SELECT id, created_at FROM matches WHERE (SELECT n FROM total) <= ${EXACT_COUNT_BOUND}
                                       ORDER BY created_at, id LIMIT ${p.limit} OFFSET ${p.offset}) m
           JOIN users u ON u.id = m.id) page ON true
       ORDER BY page.created_at, page.id`,
      params,
    );
    const n = Number(rows[0]?.n ?? 0);
    if (n > EXACT_COUNT_BOUND) return null;
    return { rows: rows.filter((r) => r.id !== null), count: n };
  }

  /** The page by the ordered walk when it should be short, else (or when it falls short) from all the matches. */
  private async searchPage(f: Paged, query: ListQuery, est: { matches: number; rows: number }): Promise<UserRowSql[]> {
    const wanted = query.page * query.pageSize;
    // Rows of the created_at order the walk should read before `wanted` matches.
    const walk = est.matches > 0 ? Math.ceil((wanted * Math.max(est.rows, est.matches)) / est.matches) : Infinity;
    const useWalk = est.matches >= wanted && walk <= Math.max(SEARCH_WALK_ROWS, SEARCH_WALK_PER_MATCH * est.matches);
    return (useWalk ? await this.searchWalk(f, query, Math.ceil(walk * SEARCH_WALK_SLACK) + query.pageSize) : null) ?? (await this.searchMatches(f, query));
  }

  /** The page from the first `cap` rows in created_at order, or null when they do not fill it. */
  private async searchWalk(f: Paged, query: ListQuery, cap: number): Promise<UserRowSql[] | null> {
    const params = [...f.params, cap];
    const capParam = `$${params.length}`;
    const p = pageParams(query, params);
    const rows = await this.m.query<UserRowSql[]>(
      `SELECT ${USER_COLUMNS} FROM (SELECT * FROM users u ORDER BY u.created_at, u.id LIMIT ${capParam}) u ${f.where}
        ORDER BY u.created_at, u.id LIMIT ${p.limit} OFFSET ${p.offset}`,
      params,
    );
    return rows.length === query.pageSize ? rows : null;
  }

  /** The page from all the matches (trigram index, or a scan for a term most rows hold), sorted. */
  private async searchMatches(f: Paged, query: ListQuery): Promise<UserRowSql[]> {
    const params = [...f.params];
    const p = pageParams(query, params);
    return this.m.query<UserRowSql[]>(
      `WITH matches AS MATERIALIZED (SELECT u.id, u.created_at FROM users u ${f.where})
       SELECT ${USER_COLUMNS} FROM (SELECT id, created_at FROM matches ORDER BY created_at, id LIMIT ${p.limit} OFFSET ${p.offset}) page
         JOIN users u ON u.id = page.id ORDER BY page.created_at, page.id`,
      params,
    );
  }

  async lockAdministrators(): Promise<string[]> {
    const [role] = await this.m.query<Array<{ id: string }>>('SELECT id FROM roles WHERE name = $1 AND deleted_at IS NULL FOR UPDATE', [ADMINISTRATOR_ROLE]);
    if (!role) return [];
    const rows = await this.m.query<Array<{ user_id: string }>>(
      'SELECT ur.user_id FROM user_roles ur JOIN users u ON u.id = ur.user_id AND u.deleted_at IS NULL WHERE ur.role_id = $1',
      [role.id],
    );
    return rows.map((r) => r.user_id);
  }

  private async withRoles(rows: UserRowSql[]): Promise<User[]> {
    if (rows.length === 0) return [];
    const roles = await this.m.query<Array<{ user_id: string; name: string }>>(
      `SELECT ur.user_id, r.name FROM user_roles ur JOIN roles r ON r.id = ur.role_id
        WHERE ur.user_id = ANY($1::uuid[]) AND r.deleted_at IS NULL ORDER BY r.name`,
      [rows.map((r) => r.id)],
    );
    return rows.map((r) => toUser(r, roles.filter((x) => x.user_id === r.id).map((x) => x.name)));
  }
}

function toUser(r: UserRowSql, roles: string[]): User {
  return {
    id: r.id,
    firstName: r.first_name,
    lastName: r.last_name,
    email: r.email,
    phone: r.phone === null ? null : Number(r.phone),
    emailVerified: r.email_verified,
    roles,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    deletedAt: r.deleted_at,
  };
}

class PgCredentialStore implements CredentialStore {
  constructor(private readonly m: EntityManager) {}

  async findByEmail(email: string): Promise<{ id: string; passwordHash: string } | null> {
    const [row] = await this.m.query<Array<{
      id: string;
      password_hash: string;
    }>>('SELECT id, password_hash FROM users WHERE email = $1 AND deleted_at IS NULL', [email]);
    return row ? { id: row.id, passwordHash: row.password_hash } : null;
  }

  async setPasswordHash(userId: string, hash: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>('UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1 AND deleted_at IS NULL', [userId, hash]);
    return n > 0;
  }

  async recordPasswordReset(r: { resetId: string; userId: string; attemptId: string }): Promise<{ first: boolean; userId: string; attemptId: string; changedAt: Date }> {
    const [inserted] = await this.m.query<Array<{ changed_at: Date }>>(
      'INSERT INTO password_resets (reset_id, user_id, attempt_id) VALUES ($1, $2, $3) ON CONFLICT (reset_id) DO NOTHING RETURNING changed_at',
      [r.resetId, r.userId, r.attemptId],
    );
    if (inserted) return { first: true, userId: r.userId, attemptId: r.attemptId, changedAt: inserted.changed_at };
    const [prior] = await this.m.query<Array<{ user_id: string; attempt_id: string; changed_at: Date }>>(
      'SELECT user_id, attempt_id, changed_at FROM password_resets WHERE reset_id = $1',
      [r.resetId],
    );
    return { first: false, userId: prior!.user_id, attemptId: prior!.attempt_id, changedAt: prior!.changed_at };
  }

  async markEmailVerified(userId: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>(
      'UPDATE users SET email_verified = true, updated_at = now() WHERE id = $1 AND deleted_at IS NULL',
      [userId],
    );
    return n > 0;
  }

  // Every refresh and login asks for a principal: outside a transaction a named statement
  // (planning the two sub-selects was about 1.3 ms of the 1.7 ms each call spent in PostgreSQL,
  // bench/README.md "Refresh rotations").
  async principal(userId: string): Promise<Principal | null> {
    const [row] = await queryNamed<PrincipalRowSql>(this.m, 'directory.principal.byId', `${PRINCIPAL_SELECT} WHERE u.id = $1 AND u.deleted_at IS NULL`, [userId]);
    return row ? toPrincipal(row) : null;
  }

  async credentialsByEmail(email: string): Promise<{ passwordHash: string; principal: Principal } | null> {
    const [row] = await queryNamed<PrincipalRowSql>(this.m, 'directory.principal.byEmail', `${PRINCIPAL_SELECT} WHERE u.email = $1 AND u.deleted_at IS NULL`, [email]);
    return row ? { passwordHash: row.password_hash, principal: toPrincipal(row) } : null;
  }
}

interface PrincipalRowSql {
  id: string;
  first_name: string;
  last_name: string;
  email: string;
  email_verified: boolean;
  password_hash: string;
  roles: string[];
  permissions: string[];
}

/** A user with live roles and the live permissions they grant, in one round trip. */
const PRINCIPAL_SELECT = `
  SELECT u.id, u.first_name, u.last_name, u.email, u.email_verified, u.password_hash,
         ARRAY(SELECT r.name FROM user_roles ur JOIN roles r ON r.id = ur.role_id
                WHERE ur.user_id = u.id AND r.deleted_at IS NULL ORDER BY r.name) AS roles,
         ARRAY(SELECT DISTINCT p.name FROM user_roles ur
                 JOIN roles r ON r.id = ur.role_id AND r.deleted_at IS NULL
                 JOIN role_permissions rp ON rp.role_id = r.id AND rp.revoked_at IS NULL
                 JOIN permissions p ON p.id = rp.permission_id AND p.deleted_at IS NULL
                WHERE ur.user_id = u.id ORDER BY p.name) AS permissions
    FROM users u`;

function toPrincipal(r: PrincipalRowSql): Principal {
  return { userId: r.id, firstName: r.first_name, lastName: r.last_name, email: r.email, roles: r.roles, permissions: r.permissions, emailVerified: r.email_verified };
}

// ---------------------------------------------------------------------------
// Roles and permissions share their shape: one implementation over two tables.

interface NamedRowSql {
  id: string;
  name: string;
  description: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

class PgNamedStore {
  constructor(
    protected readonly m: EntityManager,
    private readonly table: 'roles' | 'permissions',
  ) {}

  // name_skeleton is the name's lookalikeKey, unique among live rows (migration 1764600000100).
  async insert(r: { id: string; name: string; description: string }): Promise<void> {
    await mapConflicts(() =>
      this.m.query(`INSERT INTO ${this.table} (id, name, name_skeleton, description) VALUES ($1, $2, $3, $4)`, [r.id, r.name, lookalikeKey(r.name), r.description]),
    );
  }

  async update(id: string, patch: Partial<{ name: string; description: string }>): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [id];
    const columns = { name: patch.name, name_skeleton: patch.name === undefined ? undefined : lookalikeKey(patch.name), description: patch.description };
    for (const [column, value] of Object.entries(columns)) {
      if (value === undefined) continue;
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    }
    if (sets.length === 0) return;
    await mapConflicts(() => this.m.query(`UPDATE ${this.table} SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`, params));
  }

  async softDelete(id: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>(`UPDATE ${this.table} SET deleted_at = now(), updated_at = now() WHERE id = $1 AND deleted_at IS NULL`, [id]);
    return n > 0;
  }

  protected async findRows(id: string, opts: RowLock): Promise<NamedRowSql[]> {
    const lock = opts.forUpdate ? 'FOR UPDATE' : opts.forShare ? 'FOR SHARE' : '';
    return await this.m.query<NamedRowSql[]>(
      `SELECT id, name, description, created_at, updated_at, deleted_at FROM ${this.table}
        WHERE id = $1 ${opts.includeDeleted ? '' : 'AND deleted_at IS NULL'} ${lock}`,
      [id],
    );
  }

  protected async listRows(query: ListQuery): Promise<{ rows: NamedRowSql[]; totalCount: number; totalCountExact: boolean }> {
    const f = filters(query, ['name', 'description'], 'deleted_at');
    const counted = await count(this.m, `FROM ${this.table} ${f.where}`, f.params);
    const params = [...f.params];
    const p = pageParams(query, params);
    const rows = await this.m.query<NamedRowSql[]>(
      `SELECT id, name, description, created_at, updated_at, deleted_at FROM ${this.table} ${f.where}
        ORDER BY created_at, id LIMIT ${p.limit} OFFSET ${p.offset}`,
      params,
    );
    return { rows, ...counted };
  }
}

function toPermission(r: NamedRowSql): Permission {
  return { id: r.id, name: r.name, description: r.description, createdAt: r.created_at, updatedAt: r.updated_at, deletedAt: r.deleted_at };
}

class PgPermissionStore extends PgNamedStore implements PermissionStore {
  constructor(m: EntityManager) {
    super(m, 'permissions');
  }

  async findById(id: string, opts: RowLock = {}): Promise<Permission | null> {
    const [r] = await this.findRows(id, opts);
    return r ? toPermission(r) : null;
  }

  async list(query: ListQuery): Promise<Page<Permission>> {
    const { rows, ...counted } = await this.listRows(query);
    return { items: rows.map(toPermission), ...counted };
  }
}

class PgRoleStore extends PgNamedStore implements RoleStore {
  constructor(m: EntityManager) {
    super(m, 'roles');
  }

  async findById(id: string, opts: RowLock = {}): Promise<Role | null> {
    return (await this.withPermissions(await this.findRows(id, opts)))[0] ?? null;
  }

  async list(query: ListQuery): Promise<Page<Role>> {
    const { rows, ...counted } = await this.listRows(query);
    return { items: await this.withPermissions(rows), ...counted };
  }

  async findLiveByNames(names: readonly string[]): Promise<Array<{ id: string; name: string; permissions: string[] }>> {
    if (names.length === 0) return [];
    const rows = await this.m.query<NamedRowSql[]>(
      'SELECT id, name, description, created_at, updated_at, deleted_at FROM roles WHERE deleted_at IS NULL AND lower(name) = ANY($1::text[]) ORDER BY id FOR SHARE',
      [
        names.map((n) => n.toLowerCase()),
      ],
    );
    return (await this.withPermissions(rows)).map((r) => ({ id: r.id, name: r.name, permissions: [...r.permissions] }));
  }

  private async withPermissions(rows: NamedRowSql[]): Promise<Role[]> {
    if (rows.length === 0) return [];
    const perms = await this.m.query<Array<{ role_id: string; name: string }>>(
      `SELECT rp.role_id, p.name FROM role_permissions rp JOIN permissions p ON p.id = rp.permission_id
        WHERE rp.role_id = ANY($1::uuid[]) AND rp.revoked_at IS NULL AND p.deleted_at IS NULL ORDER BY p.name`,
      [rows.map((r) => r.id)],
    );
    return rows.map((r) => ({ ...toPermission(r), permissions: perms.filter((p) => p.role_id === r.id).map((p) => p.name) }));
  }
}

// ---------------------------------------------------------------------------

interface LinkRowSql {
  id: string;
  role_id: string;
  permission_id: string;
  role_name: string;
  permission_name: string;
  created_at: Date;
  updated_at: Date;
}

const LINK_SELECT = `SELECT rp.id, rp.role_id, rp.permission_id, r.name AS role_name, p.name AS permission_name, rp.created_at, rp.updated_at
  FROM role_permissions rp JOIN roles r ON r.id = rp.role_id JOIN permissions p ON p.id = rp.permission_id`;

function toLink(r: LinkRowSql): RolePermission {
  return {
    id: r.id,
    roleId: r.role_id,
    permissionId: r.permission_id,
    roleName: r.role_name,
    permissionName: r.permission_name,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

class PgRolePermissionStore implements RolePermissionStore {
  constructor(private readonly m: EntityManager) {}

  async insert(l: { id: string; roleId: string; permissionId: string }): Promise<void> {
    await mapConflicts(() => this.m.query('INSERT INTO role_permissions (id, role_id, permission_id) VALUES ($1, $2, $3)', [l.id, l.roleId, l.permissionId]));
  }

  async update(id: string, patch: Partial<{ roleId: string; permissionId: string }>): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [id];
    if (patch.roleId !== undefined) {
      params.push(patch.roleId);
      sets.push(`role_id = $${params.length}`);
    }
    if (patch.permissionId !== undefined) {
      params.push(patch.permissionId);
      sets.push(`permission_id = $${params.length}`);
    }
    if (sets.length === 0) return;
    await mapConflicts(() => this.m.query(`UPDATE role_permissions SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`, params));
  }

  async revoke(id: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>(
      'UPDATE role_permissions SET revoked_at = now(), updated_at = now() WHERE id = $1 AND revoked_at IS NULL',
      [id],
    );
    return n > 0;
  }

  async revokeAllOf(by: { roleId?: string; permissionId?: string }): Promise<RolePermission[]> {
    const [col, value] = by.roleId ? ['role_id', by.roleId] : ['permission_id', by.permissionId];
    const rows = await this.m.query<LinkRowSql[]>(
      `WITH revoked AS (
         UPDATE role_permissions SET revoked_at = now(), updated_at = now() WHERE ${col} = $1 AND revoked_at IS NULL
         RETURNING id, role_id, permission_id, created_at, updated_at)
       SELECT v.id, v.role_id, v.permission_id, r.name AS role_name, p.name AS permission_name, v.created_at, v.updated_at
         FROM revoked v JOIN roles r ON r.id = v.role_id JOIN permissions p ON p.id = v.permission_id`,
      [value],
    );
    return rows.map(toLink);
  }

  async findById(id: string, opts: { forUpdate?: boolean } = {}): Promise<RolePermission | null> {
    const [r] = await this.m.query<LinkRowSql[]>(`${LINK_SELECT} WHERE rp.id = $1 AND rp.revoked_at IS NULL ${opts.forUpdate ? 'FOR UPDATE OF rp' : ''}`, [
      id,
    ]);
    return r ? toLink(r) : null;
  }

  async list(query: LinkQuery): Promise<Page<RolePermission>> {
    const f = filters({ ...query, includeDeleted: false }, ['r.name', 'p.name'], null);
    const parts = [f.where ? f.where.slice('WHERE '.length) : '', 'rp.revoked_at IS NULL'].filter(Boolean);
    for (const [column, value] of [['rp.role_id', query.roleId], ['rp.permission_id', query.permissionId]] as const) {
      if (value === undefined) continue;
      f.params.push(value);
      parts.push(`${column} = $${f.params.length}`);
    }
    const where = `WHERE ${parts.join(' AND ')}`;
    const from = 'FROM role_permissions rp JOIN roles r ON r.id = rp.role_id JOIN permissions p ON p.id = rp.permission_id';
    const counted = await count(this.m, `${from} ${where}`, f.params);
    const params = [...f.params];
    const p = pageParams(query, params);
    const rows = await this.m.query<LinkRowSql[]>(`${LINK_SELECT} ${where} ORDER BY rp.created_at, rp.id LIMIT ${p.limit} OFFSET ${p.offset}`, params);
    return { items: rows.map(toLink), ...counted };
  }
}

export function pgStores(m: EntityManager, options: StoreOptions = {}): Stores {
  return {
    users: new PgUserStore(m, options.searchSmallTable ?? SEARCH_SMALL_TABLE),
    credentials: new PgCredentialStore(m),
    roles: new PgRoleStore(m),
    permissions: new PgPermissionStore(m),
    links: new PgRolePermissionStore(m),
  };
}

export { ADMINISTRATOR_ROLE };

/**
 * Removes what can no longer matter: the records of password resets applied more than 30 days ago.
 * The reset's email-action token expired long before (identity refuses it before asking here), so
 * no retry of that reset can arrive any more.
 */
export async function purgeExpired(ds: DataSource): Promise<void> {
  await ds.query(`DELETE FROM password_resets WHERE changed_at < now() - interval '30 days'`);
}
