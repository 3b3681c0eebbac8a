/**
 * Issue #12: the gateway read cache, end to end through two gateway replicas (real PostgreSQL and
 * NATS when reachable). After a write through replica 0, replica 0 never answers the old record
 * (read-your-writes) and replica 1 stops answering it within a second (directory.* events),
 * including role renames and deletes shown inside user records, link changes shown inside role
 * records, and user deletions. The cache stays behind the permission policy.
 */
import { ADMIN, type HttpResult, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail } from './harness';

jest.setTimeout(90_000);

describe('gateway read cache (two replicas)', () => {
  let sys: TestSystem;
  let admin: string;
  let seq = 0;
  const uniq = (tag: string) => `${tag}-${Date.now().toString(36)}-${++seq}`;
  const call = (replica: number, method: string, path: string, body?: unknown, token = admin) => http(sys.url(replica), method, path, { token, body });
  const get = (replica: number, path: string, token = admin) => call(replica, 'GET', path, undefined, token);

  /** Reads `path` on both replicas twice (the second read is a cache hit). */
  async function warm(path: string): Promise<void> {
    for (const replica of [0, 1]) for (let i = 0; i < 2; i++) expect((await get(replica, path)).status).toBe(200);
  }

  /** Polls replica 1 until `fresh` holds; returns how long it took after the write (ms). */
  async function convergence(path: string, fresh: (r: HttpResult) => boolean, since: number): Promise<number> {
    for (;;) {
      const r = await get(1, path);
      if (fresh(r)) return Date.now() - since;
      if (Date.now() - since > 5_000) throw new Error(`replica 1 still answers a stale ${path} after 5 s: ${r.status} ${r.text}`);
      await new Promise((res) => setTimeout(res, 20));
    }
  }

  const newUser = async (roles: string[] = []) => {
    const r = await call(0, 'POST', '/api/v1/users', { firstName: 'Cache', lastName: 'Reader', email: uniqueEmail('cache'), password: strongPassword(), roles });
    expect(r.status).toBe(201);
    return r.json as { id: string; email: string; roles: string[] };
  };
  const newRole = async () => {
    const r = await call(0, 'POST', '/api/v1/roles', { name: uniq('cache-role'), description: 'read cache' });
    expect(r.status).toBe(201);
    return r.json as { id: string; name: string };
  };

  beforeAll(async () => {
    sys = await startTestSystem({ gateways: 2 });
    admin = (await http(sys.url(0), 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
  });

  afterAll(async () => {
    await sys?.stop();
  });

  it('serves repeated reads from the cache (hits counted in /metrics)', async () => {
    const u = await newUser();
    await warm(`/api/v1/users?id=${u.id}`);
    const metrics = await (await fetch(`${sys.url(0)}/metrics`)).text();
    expect(metrics).toMatch(/gateway_read_cache_requests_total\{kind="user",outcome="hit"\} [1-9]/);
    expect(metrics).toMatch(/gateway_read_cache_requests_total\{kind="user",outcome="miss"\} [1-9]/);
  });

  it('a user update: the writing replica answers the new record at once, the other within 1 s', async () => {
    const u = await newUser();
    const path = `/api/v1/users?id=${u.id}`;
    await warm(path);
    const put = await call(0, 'PUT', `/api/v1/users/${u.id}`, { firstName: 'Renamed' });
    expect(put.status).toBe(200);
    const at = Date.now();
    expect((await get(0, path)).json.firstName).toBe('Renamed');
    // The Compact profile shares the cache.
    expect((await get(0, `/api/v1/user/${u.id}`)).json.firstName).toBe('Renamed');
    expect(await convergence(path, (r) => r.json.firstName === 'Renamed', at)).toBeLessThanOrEqual(1_000);
  });

  it('a role rename shows in every cached user holding it: at once on the writer, within 1 s elsewhere', async () => {
    const role = await newRole();
    const u = await newUser([role.name]);
    const path = `/api/v1/users?id=${u.id}`;
    await warm(path);
    await warm(`/api/v1/roles?id=${role.id}`);
    const renamed = uniq('renamed-role');
    expect((await call(0, 'PUT', `/api/v1/roles/${role.id}`, { name: renamed })).status).toBe(200);
    const at = Date.now();
    expect((await get(0, path)).json.roles).toEqual([renamed]);
    expect((await get(0, `/api/v1/roles?id=${role.id}`)).json.name).toBe(renamed);
    expect(await convergence(path, (r) => r.json.roles?.[0] === renamed, at)).toBeLessThanOrEqual(1_000);
    expect((await get(1, `/api/v1/roles?id=${role.id}`)).json.name).toBe(renamed);
  });

  it('a role delete leaves every cached user holding it: at once on the writer, within 1 s elsewhere', async () => {
    const role = await newRole();
    const u = await newUser([role.name]);
    const path = `/api/v1/users?id=${u.id}`;
    await warm(path);
    expect((await call(0, 'DELETE', `/api/v1/roles/${role.id}`)).status).toBe(204);
    const at = Date.now();
    expect((await get(0, path)).json.roles).toEqual([]);
    expect((await get(0, `/api/v1/roles?id=${role.id}`)).status).toBe(404);
    expect(await convergence(path, (r) => Array.isArray(r.json.roles) && r.json.roles.length === 0, at)).toBeLessThanOrEqual(1_000);
    expect((await get(1, `/api/v1/roles?id=${role.id}`)).status).toBe(404);
  });

  it('a permission linked to a role shows in the cached role: at once on the writer, within 1 s elsewhere', async () => {
    const role = await newRole();
    const perm = await call(0, 'POST', '/api/v1/permissions', { name: uniq('cache.perm'), description: 'read cache' });
    expect(perm.status).toBe(201);
    const path = `/api/v1/roles?id=${role.id}`;
    await warm(path);
    expect((await call(0, 'POST', '/api/v1/role-permissions', { roleId: role.id, permissionId: perm.json.id })).status).toBe(201);
    const at = Date.now();
    expect((await get(0, path)).json.permissions).toEqual([perm.json.name]);
    expect(await convergence(path, (r) => r.json.permissions?.[0] === perm.json.name, at)).toBeLessThanOrEqual(1_000);
  });

  it('a deleted user is never served again: 404 at once on the writer, within 1 s elsewhere', async () => {
    const u = await newUser();
    const path = `/api/v1/users?id=${u.id}`;
    await warm(path);
    await warm(`/api/v1/user/${u.id}`);
    expect((await call(0, 'DELETE', `/api/v1/users/${u.id}`)).status).toBe(204);
    const at = Date.now();
    expect((await get(0, path)).status).toBe(404);
    expect((await get(0, `/api/v1/user/${u.id}`)).status).toBe(404);
    expect(await convergence(path, (r) => r.status === 404, at)).toBeLessThanOrEqual(1_000);
  });

  it('a write on the other replica reaches this one within 1 s', async () => {
    const u = await newUser();
    const path = `/api/v1/users?id=${u.id}`;
    await warm(path);
    expect((await call(1, 'PUT', `/api/v1/users/${u.id}`, { lastName: 'FromOne' })).status).toBe(200);
    expect((await get(1, path)).json.lastName).toBe('FromOne');
    const at = Date.now();
    for (;;) {
      const r = await get(0, path);
      if (r.json.lastName === 'FromOne') break;
      expect(Date.now() - at).toBeLessThanOrEqual(1_000);
      await new Promise((res) => setTimeout(res, 20));
    }
  });

  it('stays behind the permission policy: a cached user is 401 without a token and 403 without users.manage', async () => {
    const u = await newUser();
    const path = `/api/v1/users?id=${u.id}`;
    await warm(path);
    // Made with a password of its own: a password set afterwards revokes the user's tokens from
    // that second on, and a login in the same second would be refused (iat has a second's grain).
    const password = strongPassword();
    const made = await call(0, 'POST', '/api/v1/users', { firstName: 'Cache', lastName: 'Plain', email: uniqueEmail('cache'), password });
    expect(made.status).toBe(201);
    const plain = made.json as { id: string; email: string };
    const token = (await http(sys.url(0), 'POST', '/api/v1/auth/generate-jwt', { body: { email: plain.email, password } })).json.token as string;
    expect((await http(sys.url(0), 'GET', path)).status).toBe(401);
    for (const replica of [0, 1]) {
      const r = await get(replica, path, token);
      expect(r.status).toBe(403);
      expect(r.text).not.toContain(u.email);
    }
  });
});
