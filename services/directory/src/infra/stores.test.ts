/**
 * Counting a list (issue #12): exact up to EXACT_COUNT_BOUND matches, the planner's estimate
 * beyond (flagged), and pages beyond the bound still correct. User search over the one indexed
 * expression (migration 1764300000100): in step with creates, updates and soft deletes, the
 * same matches as the three per-field ILIKEs, and planned on the index. Real PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { type MigratedDatabase, migratedTestDatabase } from '@iam/platform/testing';
import type { EntityManager } from 'typeorm';
import { entities, migrations } from './schema';
import { purgeExpired } from './credential-store';
import { EXACT_COUNT_BOUND } from './paging';
import { pgPrivilegedStores, pgStores } from './stores';
import { SEARCH_SMALL_TABLE, USER_SEARCH, UserSearch, userSearchPattern } from './user-search';

/** Records the statement names of the queries made on the pool (outside transactions) until restored. */
function namedStatementsSeen(db: MigratedDatabase): { names: unknown[]; restore: () => void } {
  const pool = (db.ds.driver as unknown as { master: { query: (...args: unknown[]) => unknown } }).master;
  const names: unknown[] = [];
  const query = pool.query;
  pool.query = function (this: unknown, ...args: unknown[]) {
    names.push((args[0] as { name?: string }).name);
    return query.apply(this, args);
  };
  return { names, restore: () => (pool.query = query) };
}

// Both search paths: with the planner's estimate (a large table) and without (a small one).
describe.each([
  ['with the estimate', 0],
  ['a small table', SEARCH_SMALL_TABLE],
])('directory stores: bounded counts (%s)', (_, smallTable) => {
  let db: MigratedDatabase;
  const search = new UserSearch({ smallTable });
  const users = () => pgStores(db.ds.manager, { search }).users;
  const N = EXACT_COUNT_BOUND + 500;

  beforeAll(async () => {
    db = await migratedTestDatabase('directory_count', { entities, migrations });
    await db.ds.query(
      `INSERT INTO users (id, first_name, last_name, email, password_hash, created_at, updated_at)
       SELECT gen_random_uuid(), 'Count', CASE WHEN i % 100 = 0 THEN 'Rare' ELSE 'Common' END, 'count' || i || '@example.com', 'x',
              now() - make_interval(secs => $1 - i), now() - make_interval(secs => $1 - i)
         FROM generate_series(1, $1::int) AS i`,
      [N],
    );
    await db.ds.query('ANALYZE users');
  }, 60_000);

  afterAll(async () => {
    await db?.close();
  });

  it('is exact up to the bound', async () => {
    const page = await users().list({ page: 1, pageSize: 5, q: 'rare', includeDeleted: false });
    expect(page).toMatchObject({ totalCount: Math.floor(N / 100), totalCountExact: true });
    expect(page.items).toHaveLength(5);
  });

  it('beyond the bound: an estimate above it, flagged, and pages past the bound stay correct', async () => {
    const page = await users().list({ page: 1, pageSize: 5, q: 'common', includeDeleted: false });
    expect(page.totalCountExact).toBe(false);
    expect(page.totalCount).toBeGreaterThan(EXACT_COUNT_BOUND);
    const deep = await users().list({ page: EXACT_COUNT_BOUND / 100 + 2, pageSize: 100, q: 'common', includeDeleted: false });
    // Rows bound + 101 .. bound + 200 of the common ones, in (createdAt, id) order.
    expect(deep.items).toHaveLength(100);
    const [expected] = await db.ds.query<Array<{ email: string }>>(`SELECT email FROM users WHERE last_name = 'Common' ORDER BY created_at, id OFFSET $1 LIMIT 1`, [EXACT_COUNT_BOUND + 100]);
    expect(deep.items[0]!.email).toBe(expected!.email);
  });

  it('a short page past the bound ends the matches: its count is exact', async () => {
    const commons = N - Math.floor(N / 100);
    const last = await users().list({ page: Math.floor(commons / 100) + 1, pageSize: 100, q: 'common', includeDeleted: false });
    expect(last.items).toHaveLength(commons % 100);
    expect(last).toMatchObject({ totalCount: commons, totalCountExact: true });
    const past = await users().list({ page: Math.floor(commons / 100) + 3, pageSize: 100, q: 'common', includeDeleted: false });
    expect(past.items).toHaveLength(0);
    expect(past.totalCount).toBeGreaterThan(EXACT_COUNT_BOUND);
  });

  it('a keyset page plans with the count its cursor carries, and a forged count changes nothing it holds', async () => {
    const first = await users().list({ page: 1, pageSize: 4, q: 'rare', includeDeleted: false });
    expect(first.totalCountExact).toBe(true);
    const after = first.next!;
    const plain = await users().list({ page: 2, pageSize: 4, q: 'rare', includeDeleted: false, after });
    for (const countedMatches of [first.totalCount, 1, 0, 1_000_000]) {
      const hinted = await users().list({ page: 2, pageSize: 4, q: 'rare', includeDeleted: false, after, countedMatches });
      expect(hinted.items.map((u) => u.id)).toEqual(plain.items.map((u) => u.id));
    }
  });

  it('matches all at the end of the created_at order (the bounded walk gives up): the same pages', async () => {
    const late = EXACT_COUNT_BOUND + 100;
    await db.ds.query(
      `INSERT INTO users (id, first_name, last_name, email, password_hash, created_at, updated_at)
       SELECT gen_random_uuid(), 'Late', 'Comer', 'latecomer' || i || '@example.com', 'x', now() + make_interval(secs => i), now()
         FROM generate_series(1, $1::int) AS i`,
      [late],
    );
    await db.ds.query('ANALYZE users');
    for (const [page, pageSize] of [[1, 25], [3, 25], [2, 100], [late / 100, 100], [late / 100 + 1, 100]] as const) {
      const got = await users().list({ page, pageSize, q: 'tecom', includeDeleted: false });
      const expected = await db.ds.query<Array<{ email: string }>>(
        `SELECT email FROM users WHERE last_name = 'Comer' ORDER BY created_at, id OFFSET $1 LIMIT $2`,
        [(page - 1) * pageSize, pageSize],
      );
      expect(got.items.map((u) => u.email)).toEqual(expected.map((r) => r.email));
      if (page === late / 100) {
        // The last full page: the row after it (fetched to say whether a next page exists) is
        // missing, so the page ends the matches and its count is exact.
        expect(got).toMatchObject({ totalCount: late, totalCountExact: true });
        expect(got.next).toBeUndefined();
      } else {
        expect(got.totalCountExact).toBe(false);
        expect(got.totalCount).toBeGreaterThan(EXACT_COUNT_BOUND);
      }
    }
  });
});

describe('directory stores: a term estimated at ten times the count bound', () => {
  let db: MigratedDatabase;
  const MANY = 10 * EXACT_COUNT_BOUND + 1_000;

  beforeAll(async () => {
    db = await migratedTestDatabase('directory_uncounted', { entities, migrations });
    await db.ds.query(
      `INSERT INTO users (id, first_name, last_name, email, password_hash, created_at, updated_at)
       SELECT gen_random_uuid(), 'Many', 'Holder', 'holder' || i || '@example.com', 'x', now() - make_interval(secs => $1 - i), now()
         FROM generate_series(1, $1::int) AS i`,
      [MANY],
    );
    await db.ds.query('ANALYZE users');
  }, 60_000);

  afterAll(async () => {
    await db?.close();
  });

  /** The statements a search makes, through a manager that records them. */
  const recorded = (m: EntityManager, seen: string[]): EntityManager =>
    new Proxy(m, {
      get: (target, key) => (key === 'query' ? (sql: string, params?: unknown[]) => (seen.push(sql), target.query(sql, params)) : Reflect.get(target, key)),
    });

  it('its first page is not counted: the total is the estimate, flagged; a rare term is still counted exactly', async () => {
    const search = new UserSearch({ smallTable: 0 });
    const seen: string[] = [];
    const page = await search.page(recorded(db.ds.manager, seen), { page: 1, pageSize: 5, q: 'holder', includeDeleted: false });
    expect(page.rows).toHaveLength(5);
    expect(page.next).toBeDefined();
    expect(page.totalCountExact).toBe(false);
    expect(page.totalCount).toBeGreaterThanOrEqual(10 * EXACT_COUNT_BOUND);
    expect(seen.filter((s) => s.includes(`LIMIT ${EXACT_COUNT_BOUND + 1}) bounded`))).toEqual([]);
    // A term with few matches: counted, exact.
    const rare = await search.page(db.ds.manager, { page: 1, pageSize: 5, q: 'holder1000@', includeDeleted: false });
    expect(rare).toMatchObject({ totalCount: 1, totalCountExact: true });
  });
});

describe('directory stores: user search', () => {
  let db: MigratedDatabase;
  const userSearch = new UserSearch();
  const users = () => pgStores(db.ds.manager, { search: userSearch }).users;
  const search = async (q: string, includeDeleted = false) =>
    (await users().list({ page: 1, pageSize: 100, q, includeDeleted })).items.map((u) => u.email).sort();
  const add = async (firstName: string, lastName: string, email: string) => {
    const id = randomUUID();
    await users().insert({ id, firstName, lastName, email, phone: null, passwordHash: 'x' });
    return id;
  };

  beforeAll(async () => {
    db = await migratedTestDatabase('directory_search', { entities, migrations });
  }, 60_000);

  afterAll(async () => {
    await db?.close();
  });

  it('follows creates, updates and soft deletes', async () => {
    const id = await add('Ottoline', 'Quarrington', 'oq@search.example');
    expect(await search('TTOLI')).toEqual(['oq@search.example']);
    expect(await search('quarr')).toEqual(['oq@search.example']);
    expect(await search('oq@SEARCH')).toEqual(['oq@search.example']);

    await users().update(id, { lastName: 'Zeffirelli', email: 'oz@search.example' });
    expect(await search('quarr')).toEqual([]);
    expect(await search('oq@search')).toEqual([]);
    expect(await search('zeffir')).toEqual(['oz@search.example']);
    expect(await search('oz@search')).toEqual(['oz@search.example']);

    expect(await users().softDelete(id)).toBe(true);
    expect(await search('zeffir')).toEqual([]);
    expect(await search('zeffir', true)).toEqual(['oz@search.example']);
  });

  it('matches what the three per-field ILIKEs match: wildcards literal, never across two fields', async () => {
    await add('Per%cent', 'Under_score', 'wild@search.example');
    await add('Perxcent', 'Underxscore', 'tame@search.example');
    await add('Back\\slash', 'Sep\u001fArated', 'odd@search.example');
    await add('Anna', 'Bell', 'ab@search.example');
    expect(await search('r%c')).toEqual(['wild@search.example']);
    expect(await search('r_s')).toEqual(['wild@search.example']);
    expect(await search('k\\s')).toEqual(['odd@search.example']);
    // First name "Anna" and last name "Bell" are not one string: no term spans them.
    expect(await search('annabell')).toEqual([]);
    expect(await search('anna\u001fbell')).toEqual([]);
    expect(await search('bell\u001fab@')).toEqual([]);
    // The separator inside one field is matched like any character.
    expect(await search('p\u001fa')).toEqual(['odd@search.example']);

    // Word separators are replaced by upper-case letters in the index: never confused with them.
    await add("Mary-Jo", "O'Neil Smith", 'mary_jo+tag@a.example');
    await add('Marydjo', 'Oqneilssmith', 'maryujoptag@aaexample');
    expect(await search('y-j')).toEqual(['mary_jo+tag@a.example']);
    expect(await search("o'n")).toEqual(['mary_jo+tag@a.example']);
    expect(await search('l s')).toEqual(['mary_jo+tag@a.example']);
    expect(await search('o+t')).toEqual(['mary_jo+tag@a.example']);
    expect(await search('g@a.E')).toEqual(['mary_jo+tag@a.example']);
    expect(await search('ydj')).toEqual(['maryujoptag@aaexample']);

    for (const q of ['r%c', 'r_s', 'k\\s', 'anna', 'ell', '@search', 'p\u001fa', 'anna\u001fbell', 'cent', 'y-j', 'y_j', 'ydj', 'o+t', 'l s', "o'n", 'h.e', 'a.e', 'aae', 'g@a']) {
      const like = `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      const expected = await db.ds.query<Array<{ email: string }>>(
        `SELECT email FROM users WHERE deleted_at IS NULL
            AND (first_name ILIKE $1 ESCAPE '\\' OR last_name ILIKE $1 ESCAPE '\\' OR email ILIKE $1 ESCAPE '\\') ORDER BY email`,
        [like],
      );
      expect(await search(q)).toEqual(expected.map((r) => r.email));
    }
  });

  it("reads the table's size once per UserSearch, whatever store or transaction searches through it", async () => {
    await add('Sized', 'Once', 'sized@search.example');
    const sizeReads: string[] = [];
    const counting = (m: EntityManager) =>
      new Proxy(m, {
        get: (target, key, receiver) =>
          key === 'query'
            ? (sql: string, params?: unknown[]) => (sql.includes('pg_class') && sizeReads.push(sql), target.query(sql, params))
            : Reflect.get(target, key, receiver),
      });
    const shared = new UserSearch();
    const query = { page: 1, pageSize: 10, q: 'sized', includeDeleted: false };
    expect((await shared.page(counting(db.ds.manager), query)).totalCount).toBe(1);
    await db.ds.transaction((m) => shared.page(counting(m), query));
    expect(sizeReads).toHaveLength(1);
    // Another data source's search (another composition root) keeps its own reading.
    await new UserSearch().page(counting(db.ds.manager), query);
    expect(sizeReads).toHaveLength(2);
  });

  it('findById outside a transaction (a named statement on the pool) reads what a transaction reads', async () => {
    const id = await add('Named', 'Statement', 'named@search.example');
    const { names, restore } = namedStatementsSeen(db);
    const read = await users().findById(id).finally(restore);
    expect(names).toEqual(['directory.users.byId']);
    const inTx = await db.ds.transaction((m) => pgStores(m).users.findById(id));
    expect(read).toEqual(inTx);
    expect(read).toMatchObject({ id, firstName: 'Named', roles: [], deletedAt: null });
    await users().softDelete(id);
    expect(await users().findById(id)).toBeNull();
    expect((await users().findById(id, { includeDeleted: true }))?.deletedAt).toBeInstanceOf(Date);
    expect(await users().findById(randomUUID())).toBeNull();
  });

  it('principal and credentials outside a transaction (named statements) read what a transaction reads', async () => {
    const stores = () => pgPrivilegedStores(db.ds.manager);
    const id = await add('Named', 'Principal', 'principal@search.example');
    const { names, restore } = namedStatementsSeen(db);
    const [p, c] = await Promise.all([stores().principals.findById(id), stores().credentials.credentialsByEmail('principal@search.example')]).finally(restore);
    expect(names.sort()).toEqual(['directory.principal.byEmail', 'directory.principal.byId']);
    const inTx = await db.ds.transaction(async (m) => [await pgStores(m).principals.findById(id), await pgPrivilegedStores(m).credentials.credentialsByEmail('principal@search.example')] as const);
    expect([p, c]).toEqual(inTx);
    expect(p).toEqual({ userId: id, firstName: 'Named', lastName: 'Principal', email: 'principal@search.example', emailVerified: false, roles: [], permissions: [] });
    expect(c).toEqual({ passwordHash: 'x', passwordMigration: null, externalId: null, passwordChangeRequired: false, principal: p });
    await users().softDelete(id);
    expect(await stores().principals.findById(id)).toBeNull();
    expect(await stores().credentials.credentialsByEmail('principal@search.example')).toBeNull();
  });

  it('only the privileged stores reach the password hashes', () => {
    const stores = pgStores(db.ds.manager);
    // @ts-expect-error -- Stores has no credentials: a use case given them cannot read a hash.
    expect(stores.credentials).toBeUndefined();
    expect(Object.keys(stores).sort()).toEqual(['links', 'permissions', 'principals', 'roles', 'users']);
    expect(pgPrivilegedStores(db.ds.manager).credentials).toBeDefined();
  });


  it('is planned on the one trigram index', async () => {
    await db.ds.query(
      `INSERT INTO users (id, first_name, last_name, email, password_hash)
       SELECT gen_random_uuid(), 'Plan', 'Row' || i, 'plan' || i || '@search.example', 'x' FROM generate_series(1, 5000) AS i`,
    );
    await db.ds.query('ANALYZE users');
    const runner = db.ds.createQueryRunner();
    try {
      await runner.connect();
      // Seq scans off: the question is whether the query's expression is the index's at all.
      await runner.query('SET enable_seqscan = off');
      const plan = (await runner.query(`EXPLAIN SELECT 1 FROM users u WHERE ${USER_SEARCH} LIKE ${userSearchPattern(1)} ESCAPE '\\'`, ['%row123%'])) as Array<{
        'QUERY PLAN': string;
      }>;
      expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toContain('ix_users_search_words');
    } finally {
      await runner.release();
    }
    expect(await search('row4999')).toEqual(['plan4999@search.example']);
  });
});

describe('directory housekeeping', () => {
  let db: MigratedDatabase;

  beforeAll(async () => {
    db = await migratedTestDatabase('directory_housekeeping', { entities, migrations });
  });

  afterAll(async () => {
    await db?.close();
  });

  it('drops the records of password resets applied more than 30 days ago, keeps the newer ones', async () => {
    const [old, recent] = [randomUUID(), randomUUID()];
    await db.ds.query(
      `INSERT INTO password_resets (reset_id, user_id, attempt_id, changed_at) VALUES ($1, $3, $3, now() - interval '31 days'), ($2, $3, $3, now() - interval '29 days')`,
      [old, recent, randomUUID()],
    );
    await purgeExpired(db.ds);
    const left = await db.ds.query<Array<{ reset_id: string }>>('SELECT reset_id FROM password_resets');
    expect(left.map((r) => r.reset_id)).toEqual([recent]);
  });
});
