/**
 * The Full collections' keyset pages and sort, and unknown query parameters on every collection
 * of every profile (DESIGN §4; issue #25 item 6), through the running system: every row once
 * across cursor pages while users are created and deleted between them; a cursor with another
 * q or sort, altered, malformed, or beside `page` → 400 naming `cursor`; `sort` both ways; an
 * unknown parameter → 400 naming it, with the profile's spelling when it is the other's.
 */
import { randomBytes } from 'node:crypto';
import { ADMIN, EDGE_ENV, type HttpResult, type TestSystem, http, startTestSystem, strongPassword } from './harness';

jest.setTimeout(180_000);

interface Envelope {
  items: Array<{ id: string; email?: string; lastName?: string; firstName?: string; name?: string; createdAt: string }>;
  page: number;
  pageSize: number;
  totalCount: number;
  totalPages: number;
  totalCountExact: boolean;
  nextCursor: string | null;
}

describe('keyset pages, sort and unknown parameters', () => {
  let sys: TestSystem;
  let token: string;
  const tag = `ks${randomBytes(3).toString('hex')}`;
  const get = (path: string): Promise<HttpResult> => http(sys.url(), 'GET', path, { token });

  async function createUser(i: number): Promise<string> {
    const names = ['Zed', 'Amy', 'Kim', 'Bea'];
    const res = await http(sys.url(), 'POST', '/api/v1/users', {
      token,
      body: { firstName: names[i % 4], lastName: `${tag}${String.fromCharCode(97 + (i % 5))}`, email: `${tag}-${i}@example.com`, password: strongPassword() },
    });
    expect(res.status).toBe(201);
    return res.json.id as string;
  }

  function expectCursorProblem(res: HttpResult, field = 'querystring.cursor'): void {
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.json.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(res.json.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: expect.stringMatching(new RegExp(`${field.split('.').pop()}$`)) })]));
  }

  beforeAll(async () => {
    sys = await startTestSystem({ env: { GATEWAY_PROFILES: 'full,compact,edge', ...EDGE_ENV } });
    token = (await http(sys.url(), 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token as string;
    for (let i = 0; i < 23; i++) await createUser(i);
  });

  afterAll(async () => {
    await sys?.stop();
  });

  it('cursor pages: every user once while users are created and deleted between pages; nextCursor null on the last page', async () => {
    const before = ((await get(`/api/v1/users?q=${tag}&pageSize=100`)).json as Envelope).items.map((u) => u.id);
    expect(before).toHaveLength(23);
    const deleted = new Set<string>();
    const seen: string[] = [];
    let res = await get(`/api/v1/users?q=${tag}&pageSize=4`);
    let n = 0;
    for (;;) {
      expect(res.status).toBe(200);
      const page = res.json as Envelope;
      expect(page.page).toBe(n + 1);
      expect(page.totalCount).toBe(23);
      seen.push(...page.items.map((u) => u.id));
      if (page.nextCursor === null) break;
      // Between pages: one new user (after the cursor: it is newer than every row) and one deleted (not yet seen).
      await createUser(100 + n);
      const victim = before.find((id) => !seen.includes(id) && !deleted.has(id));
      if (victim) {
        expect((await http(sys.url(), 'DELETE', `/api/v1/users/${victim}`, { token })).status).toBe(204);
        deleted.add(victim);
      }
      res = await get(`/api/v1/users?q=${tag}&pageSize=4&cursor=${encodeURIComponent(page.nextCursor)}`);
      n++;
    }
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of before) expect(seen.includes(id) || deleted.has(id)).toBe(true);
    for (const id of deleted) expect(seen).not.toContain(id);
  });

  it('a cursor with another q or sort, altered, malformed, or beside page → 400 problem naming cursor', async () => {
    const first = (await get(`/api/v1/users?q=${tag}&pageSize=2`)).json as Envelope;
    const c = encodeURIComponent(first.nextCursor!);
    expect((await get(`/api/v1/users?q=${tag}&pageSize=2&cursor=${c}`)).status).toBe(200);
    expectCursorProblem(await get(`/api/v1/users?q=${tag}x&pageSize=2&cursor=${c}`));
    expectCursorProblem(await get(`/api/v1/users?pageSize=2&cursor=${c}`));
    expectCursorProblem(await get(`/api/v1/users?q=${tag}&sort=-createdAt&pageSize=2&cursor=${c}`));
    expectCursorProblem(await get(`/api/v1/users?q=${tag}&includeDeleted=true&pageSize=2&cursor=${c}`));
    expectCursorProblem(await get(`/api/v1/roles?q=${tag}&pageSize=2&cursor=${c}`));
    expectCursorProblem(await get(`/api/v1/users?q=${tag}&pageSize=2&page=2&cursor=${c}`));
    const raw = first.nextCursor!;
    const altered = `${raw.slice(0, 8)}${raw[8] === 'A' ? 'B' : 'A'}${raw.slice(9)}`;
    expectCursorProblem(await get(`/api/v1/users?q=${tag}&pageSize=2&cursor=${encodeURIComponent(altered)}`));
    expectCursorProblem(await get(`/api/v1/users?q=${tag}&pageSize=2&cursor=garbage`));
    // A link filter is part of what a cursor was made for.
    const links = (await get('/api/v1/role-permissions?pageSize=1')).json as Envelope;
    if (links.nextCursor) {
      const other = '00000000-0000-4000-8000-000000000000';
      expectCursorProblem(await get(`/api/v1/role-permissions?pageSize=1&roleId=${other}&cursor=${encodeURIComponent(links.nextCursor)}`));
    }
  });

  it('sort: users by createdAt, email and lastName both ways, roles by name; a cursor keeps its sort', async () => {
    const all = async (sort: string) => {
      const out: Envelope['items'] = [];
      let path = `/api/v1/users?q=${tag}&pageSize=5&sort=${sort}`;
      for (;;) {
        const res = await get(path);
        expect(res.status).toBe(200);
        const page = res.json as Envelope;
        out.push(...page.items);
        if (!page.nextCursor) return out;
        path = `/api/v1/users?q=${tag}&pageSize=5&sort=${sort}&cursor=${encodeURIComponent(page.nextCursor)}`;
      }
    };
    const asc = await all('createdAt');
    const desc = await all('-createdAt');
    expect(desc.map((u) => u.id)).toEqual([...asc].reverse().map((u) => u.id));
    const emails = (await all('email')).map((u) => u.email!);
    expect(emails).toEqual([...emails].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect((await all('-email')).map((u) => u.email)).toEqual([...emails].reverse());
    const byName = await all('lastName');
    for (let i = 1; i < byName.length; i++) expect(byName[i - 1]!.lastName! <= byName[i]!.lastName!).toBe(true);
    const roles = (await get('/api/v1/roles?pageSize=100&sort=-name')).json as Envelope;
    const names = roles.items.map((r) => r.name!);
    expect(names.length).toBeGreaterThan(0);
    // A wrong key, and sort where the collection has none.
    const bad = await get('/api/v1/users?sort=password');
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0].field).toBe('querystring.sort');
    expect((await get('/api/v1/role-permissions?sort=createdAt')).status).toBe(400);
  });

  it('unknown query parameters → 400 naming them, with the profile spelling as a hint (every collection of every profile)', async () => {
    const cases: Array<[string, string, string | undefined]> = [
      ['/api/v1/users?page_size=5', 'page_size', 'pageSize'],
      ['/api/v1/roles?include_deleted=true', 'include_deleted', 'includeDeleted'],
      ['/api/v1/permissions?foo=1', 'foo', undefined],
      ['/api/v1/role-permissions?role_id=x', 'role_id', 'roleId'],
      ['/api/v1/user?pageSize=5', 'pageSize', 'page_size'],
      ['/api/v1/role?q=admin', 'q', undefined],
      ['/api/v1/audit-events?page_size=5', 'page_size', 'pageSize'],
      ['/api/v1/products?pageSize=5', 'pageSize', 'page_size'],
      ['/api/v1/products?pageToken=x', 'pageToken', 'page_token'],
    ];
    for (const [path, name, hint] of cases) {
      const res = await http(sys.url(), 'GET', path, { token });
      expect([path, res.status]).toEqual([path, 400]);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.json.errors).toEqual([{ field: `querystring.${name}`, message: hint ? `is not allowed: did you mean ${hint}?` : 'is not allowed' }]);
      expect(res.json.detail).toContain(name);
      if (hint) expect(res.json.detail).toContain(hint);
    }
    // The known ones still work.
    for (const path of ['/api/v1/users?pageSize=5&includeDeleted=true', '/api/v1/user?page_size=5', '/api/v1/products?page_size=5', '/api/v1/audit-events?pageSize=5']) {
      expect([path, (await http(sys.url(), 'GET', path, { token })).status]).toEqual([path, 200]);
    }
  });
});
