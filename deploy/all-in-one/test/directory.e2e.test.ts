/**
 * Users, roles, permissions and links through the gateway: search semantics (wildcards literal,
 * case-insensitive), paging, soft delete, conflicts, validation, no secrets in responses, and
 * the directory events that come out of the outbox.
 */
import { SUBJECTS, decodeEvent } from '@iam/contracts';
import type { IncomingEvent } from '@iam/platform';
import { eventually } from '@iam/platform/testing';
import { randomBytes } from 'node:crypto';
import { ADMIN, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail } from './harness';

jest.setTimeout(60_000);

describe('directory collections (end to end)', () => {
  let sys: TestSystem;
  let admin: string;
  const events: IncomingEvent[] = [];
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(sys.url(), method, path, { token: admin, ...opts });
  const tok = () => `zq${randomBytes(5).toString('hex')}`;

  beforeAll(async () => {
    sys = await startTestSystem();
    admin = (await http(sys.url(), 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
    sys.bus.subscribe(['directory.>'], async (e) => void events.push(e));
    await new Promise((r) => setTimeout(r, 200));
  });

  afterAll(async () => {
    await sys?.stop();
  });

  const createUser = async (firstName: string, extra: Record<string, unknown> = {}) => {
    const r = await call('POST', '/api/v1/users', { body: { firstName, lastName: 'Test', email: uniqueEmail(), password: strongPassword(), ...extra } });
    expect(r.status).toBe(201);
    return r.json;
  };

  it('q matches %, _ and \\ literally, case-insensitively, across first name, last name and email', async () => {
    const t = tok();
    const pct = await createUser(`${t}%Pct`);
    const und = await createUser(`${t}_Und`);
    const bsl = await createUser(`${t}\\Bsl`);
    const plain = await createUser(`${t}xPlain`);
    const search = async (q: string) => (await http(sys.url(), 'GET', `/api/v1/users?q=${encodeURIComponent(q)}`, { token: admin })).json;
    expect((await search(`${t}%`)).items.map((u: { id: string }) => u.id)).toEqual([pct.id]);
    expect((await search(`${t}_`)).items.map((u: { id: string }) => u.id)).toEqual([und.id]);
    expect((await search(`${t}\\`)).items.map((u: { id: string }) => u.id)).toEqual([bsl.id]);
    expect((await search(t.toUpperCase())).totalCount).toBe(4);
    expect((await search('%')).items.some((u: { id: string }) => u.id === plain.id)).toBe(false);
    expect((await search(plain.email.toUpperCase())).items.map((u: { id: string }) => u.id)).toEqual([plain.id]);
  });

  it('q with a NUL character, and bad paging → 400 problem+json; never a 5xx', async () => {
    for (const qs of ['q=%00', 'q=a%00b', 'page=0', 'page=-1', 'page=1.5', 'pageSize=0', 'pageSize=101', 'pageSize=x', 'includeDeleted=maybe', 'id=not-a-uuid', `q=${'x'.repeat(201)}`]) {
      const r = await http(sys.url(), 'GET', `/api/v1/users?${qs}`, { token: admin });
      expect([qs, r.status]).toEqual([qs, 400]);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
  });

  it('body validation: unknown fields, wrong types, weak passwords, bad emails → 400 with field errors; nothing written', async () => {
    const t = tok();
    const base = { firstName: t, lastName: 'X', email: uniqueEmail(), password: strongPassword() };
    const cases: Array<[string, Record<string, unknown>]> = [
      ['phone as string', { ...base, phone: '5551234' }],
      ['phone fractional', { ...base, phone: 1.5 }],
      ['unknown field', { ...base, isAdmin: true }],
      ['mass assignment', { ...base, passwordHash: 'x' }],
      ['emailVerified', { ...base, emailVerified: true }],
      ['weak password', { ...base, password: 'short' }],
      ['bad email', { ...base, email: 'not an email' }],
      ['unknown role', { ...base, roles: ['no-such-role'] }],
      ['empty first name', { ...base, firstName: '   ' }],
      ['control characters', { ...base, lastName: 'a\u0007b' }],
    ];
    for (const [what, body] of cases) {
      const r = await call('POST', '/api/v1/users', { body });
      expect([what, r.status]).toEqual([what, 400]);
      expect(r.json.errors?.length).toBeGreaterThan(0);
    }
    expect((await http(sys.url(), 'GET', `/api/v1/users?q=${t}&includeDeleted=true`, { token: admin })).json.totalCount).toBe(0);
  });

  it('no password or hash in any response; emails trimmed and lower-cased; 409 on a case-variant duplicate', async () => {
    const password = strongPassword();
    const email = uniqueEmail();
    const r = await call('POST', '/api/v1/users', { body: { firstName: 'A', lastName: 'B', email: `  ${email.toUpperCase()} `, password, phone: 15551234567 } });
    expect(r.status).toBe(201);
    expect(r.json.email).toBe(email);
    expect(r.json.phone).toBe(15551234567);
    expect(r.text).not.toMatch(/password|hash|argon/i);
    expect(r.headers.get('location')).toBe(`/api/v1/users?id=${r.json.id}`);
    const dup = await call('POST', '/api/v1/users', { body: { firstName: 'A', lastName: 'B', email: email.toUpperCase(), password } });
    expect(dup.status).toBe(409);
    expect(dup.json.errors).toEqual([{ field: 'body.email', message: expect.any(String) }]);
  });

  it('PUT: fields given replace, absent stay, null clears an optional field (phone) in both profiles', async () => {
    const email = uniqueEmail('phone');
    const created = await call('POST', '/api/v1/users', { body: { firstName: 'Pho', lastName: 'Ne', email, password: strongPassword(), phone: 4915112345678 } });
    expect(created.json.phone).toBe(4915112345678);
    const kept = await call('PUT', `/api/v1/users/${created.json.id}`, { body: { firstName: 'Kept' } });
    expect(kept.json).toMatchObject({ firstName: 'Kept', phone: 4915112345678 });
    const cleared = await call('PUT', `/api/v1/users/${created.json.id}`, { body: { phone: null } });
    expect(cleared.json).toMatchObject({ firstName: 'Kept', phone: null });
    expect((await call('PUT', `/api/v1/user/${created.json.id}`, { body: { phone: 123 } })).json.phone).toBe(123);
    expect((await call('PUT', `/api/v1/user/${created.json.id}`, { body: { phone: null } })).json.phone).toBeNull();
    // Required fields cannot be nulled.
    expect((await call('PUT', `/api/v1/users/${created.json.id}`, { body: { firstName: null } })).status).toBe(400);
  });

  it('soft delete: hidden by default, listed and read by id with includeDeleted, email free again', async () => {
    const u = await createUser(tok());
    // Read once before the delete (a cached live record must not answer for the deleted one).
    expect((await http(sys.url(), 'GET', `/api/v1/users?id=${u.id}&includeDeleted=true`, { token: admin })).json.deletedAt).toBeNull();
    expect((await call('DELETE', `/api/v1/users/${u.id}`)).status).toBe(204);
    expect((await call('DELETE', `/api/v1/users/${u.id}`)).status).toBe(404);
    expect((await http(sys.url(), 'GET', `/api/v1/users?id=${u.id}`, { token: admin })).status).toBe(404);
    const one = await http(sys.url(), 'GET', `/api/v1/users?id=${u.id}&includeDeleted=true`, { token: admin });
    expect({ status: one.status, body: one.json }).toMatchObject({ status: 200, body: { id: u.id, email: u.email, deletedAt: expect.any(String) } });
    const listed = (await http(sys.url(), 'GET', `/api/v1/users?q=${encodeURIComponent(u.email)}&includeDeleted=true`, { token: admin })).json;
    expect(listed.items[0]).toMatchObject({ id: u.id, deletedAt: expect.any(String) });
    const again = await call('POST', '/api/v1/users', { body: { firstName: 'X', lastName: 'Y', email: u.email, password: strongPassword() } });
    expect(again.status).toBe(201);
  });

  it('links: unknown role/permission → 400, duplicate grant → 409, deleting a permission revokes its links', async () => {
    const role = (await call('POST', '/api/v1/roles', { body: { name: `r-${tok()}` } })).json;
    const perm = (await call('POST', '/api/v1/permissions', { body: { name: `p.${tok()}`, description: 'd' } })).json;
    expect((await call('POST', '/api/v1/role-permissions', { body: { roleId: perm.id, permissionId: perm.id } })).status).toBe(400);
    const link = await call('POST', '/api/v1/role-permissions', { body: { roleId: role.id, permissionId: perm.id } });
    expect(link.status).toBe(201);
    expect((await call('POST', '/api/v1/role-permissions', { body: { roleId: role.id, permissionId: perm.id } })).status).toBe(409);
    expect((await http(sys.url(), 'GET', `/api/v1/roles?id=${role.id}`, { token: admin })).json.permissions).toEqual([perm.name]);
    expect((await call('DELETE', `/api/v1/permissions/${perm.id}`)).status).toBe(204);
    expect((await http(sys.url(), 'GET', `/api/v1/role-permissions?id=${link.json.id}`, { token: admin })).status).toBe(404);
    expect((await http(sys.url(), 'GET', `/api/v1/roles?id=${role.id}`, { token: admin })).json.permissions).toEqual([]);
  });

  it('links list by roleId and by permissionId (exact, paged), a bad id → 400', async () => {
    const [r1, r2] = [(await call('POST', '/api/v1/roles', { body: { name: `r-${tok()}` } })).json, (await call('POST', '/api/v1/roles', { body: { name: `r-${tok()}` } })).json];
    const perms = [];
    for (let i = 0; i < 3; i++) perms.push((await call('POST', '/api/v1/permissions', { body: { name: `p.${tok()}` } })).json);
    for (const p of perms) expect((await call('POST', '/api/v1/role-permissions', { body: { roleId: r1.id, permissionId: p.id } })).status).toBe(201);
    expect((await call('POST', '/api/v1/role-permissions', { body: { roleId: r2.id, permissionId: perms[0].id } })).status).toBe(201);
    const ofR1 = (await call('GET', `/api/v1/role-permissions?roleId=${r1.id}&pageSize=2`)).json;
    expect(ofR1.totalCount).toBe(3);
    expect(ofR1.items).toHaveLength(2);
    expect(ofR1.items.every((l: { roleId: string }) => l.roleId === r1.id)).toBe(true);
    const toP0 = (await call('GET', `/api/v1/role-permissions?permissionId=${perms[0].id}`)).json;
    expect(toP0.items.map((l: { roleId: string }) => l.roleId).sort()).toEqual([r1.id, r2.id].sort());
    const both = (await call('GET', `/api/v1/role-permissions?roleId=${r2.id}&permissionId=${perms[1].id}`)).json;
    expect(both.totalCount).toBe(0);
    const bad = await call('GET', '/api/v1/role-permissions?roleId=not-a-uuid');
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toMatch(/application\/problem\+json/);
  });

  it('the Administrator role can be neither deleted nor renamed', async () => {
    const adminRole = (await http(sys.url(), 'GET', '/api/v1/roles?q=Administrator', { token: admin })).json.items.find((r: { name: string }) => r.name === 'Administrator');
    expect((await call('DELETE', `/api/v1/roles/${adminRole.id}`)).status).toBe(409);
    expect((await call('PUT', `/api/v1/roles/${adminRole.id}`, { body: { name: 'Root' } })).status).toBe(409);
  });

  it('every change publishes its directory event through the outbox', async () => {
    const u = await createUser(tok());
    await call('PUT', `/api/v1/users/${u.id}`, { body: { lastName: 'Changed' } });
    await call('DELETE', `/api/v1/users/${u.id}`);
    const mine = await eventually(() => {
      const found = events.filter((e) => decodeEvent(e.subject as typeof SUBJECTS.userCreated, e.data).userId === u.id);
      return found.length >= 3 ? found : null;
    }, 5_000);
    expect(mine.map((e) => e.subject)).toEqual([SUBJECTS.userCreated, SUBJECTS.userUpdated, SUBJECTS.userDeleted]);
    expect(decodeEvent(SUBJECTS.userUpdated, mine[1]!.data).changedFields).toEqual(['lastName']);
    expect(mine.every((e) => e.id && e.traceparent)).toBe(true);
  });
});
