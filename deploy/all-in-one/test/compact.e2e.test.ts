/**
 * The Compact profile on the same gateway and services as the Full one: login, the singular
 * collections with page/page_size and /{id}, and the same policies. Every response is checked
 * against the compact OpenAPI document (version 0.1.0).
 */
import { ADMIN, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail } from './harness';

jest.setTimeout(60_000);

describe('compact profile (end to end)', () => {
  let sys: TestSystem;
  let admin: string;
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(sys.url(), method, path, { token: admin, ...opts });

  beforeAll(async () => {
    sys = await startTestSystem();
    const r = await http(sys.url(), 'POST', '/api/v1/generate-jwt', { body: ADMIN });
    expect(r.status).toBe(200);
    admin = r.json.token;
  });

  it('login answers the access token alone: Compact has no refresh route, so no refresh token it could not use', async () => {
    const r = await http(sys.url(), 'POST', '/api/v1/generate-jwt', { body: ADMIN });
    expect(r.status).toBe(200);
    expect(Object.keys(r.json).sort()).toEqual(['expiresIn', 'token', 'tokenType', 'user']);
    expect(r.headers.get('cache-control')).toContain('no-store');
  });

  afterAll(async () => {
    await sys?.stop();
  });

  it('login: 200 with a JWT; 400 for a bad body; 401 for bad credentials', async () => {
    expect((await http(sys.url(), 'POST', '/api/v1/generate-jwt', { body: { email: ADMIN.email } })).status).toBe(400);
    expect((await http(sys.url(), 'POST', '/api/v1/generate-jwt', { body: { email: 1, password: 'x' } })).status).toBe(400);
    expect((await http(sys.url(), 'POST', '/api/v1/generate-jwt', { body: { email: uniqueEmail(), password: strongPassword() } })).status).toBe(401);
  });

  it('users and roles: create 201 + Location, get 200, update 200, delete 204, then 404; a user made here logs in on both profiles', async () => {
    const password = strongPassword();
    const email = uniqueEmail('compact');
    const u = await call('POST', '/api/v1/user', { body: { firstName: 'C', lastName: 'P', email, phone: 5551234, password } });
    expect(u.status).toBe(201);
    expect(u.headers.get('location')).toBe(`/api/v1/user/${u.json.id}`);
    expect((await call('GET', `/api/v1/user/${u.json.id}`)).json.email).toBe(email);
    expect((await call('PUT', `/api/v1/user/${u.json.id}`, { body: { lastName: 'Q' } })).json.lastName).toBe('Q');
    expect((await http(sys.url(), 'POST', '/api/v1/auth/generate-jwt', { body: { email, password } })).status).toBe(200);
    expect((await call('DELETE', `/api/v1/user/${u.json.id}`)).status).toBe(204);
    expect((await call('GET', `/api/v1/user/${u.json.id}`)).status).toBe(404);
    const role = await call('POST', '/api/v1/role', { body: { name: `compact-${Date.now()}`, description: 'd' } });
    expect(role.status).toBe(201);
    expect((await call('GET', `/api/v1/roles?id=${role.json.id}`)).json.name).toBe(role.json.name); // one directory behind both profiles
    expect((await call('DELETE', `/api/v1/role/${role.json.id}`)).status).toBe(204);
    expect((await call('GET', '/api/v1/role/not-a-uuid')).status).toBe(400);
  });

  it('paging with page/page_size (defaults 1 and 25); bad values → 400', async () => {
    const list = await call('GET', '/api/v1/user');
    expect(list.json).toMatchObject({ page: 1, pageSize: 25 });
    expect((await call('GET', '/api/v1/role?page=1&page_size=2')).json.pageSize).toBe(2);
    for (const q of ['page_size=0', 'page_size=101', 'page_size=abc', 'page=0']) expect((await call('GET', `/api/v1/user?${q}`)).status).toBe(400);
  });

  it('the same policies: 401 without a token, 403 without the permission', async () => {
    expect((await http(sys.url(), 'GET', '/api/v1/user')).status).toBe(401);
    const email = uniqueEmail('plain');
    const password = strongPassword();
    await call('POST', '/api/v1/user', { body: { firstName: 'P', lastName: 'L', email, password } });
    const token = (await http(sys.url(), 'POST', '/api/v1/generate-jwt', { body: { email, password } })).json.token;
    expect((await http(sys.url(), 'GET', '/api/v1/user', { token })).status).toBe(403);
    expect((await http(sys.url(), 'GET', '/api/v1/role', { token })).status).toBe(403);
  });
});
