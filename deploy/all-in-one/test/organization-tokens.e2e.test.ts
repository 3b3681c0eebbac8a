/**
 * Organization tokens over REST (issue #41): `POST /api/v1/auth/organization-token` exchanges a
 * refresh token for an access token of one organization: `org`, an audience of it, the member's
 * permissions there narrowed to the scope asked for; one token per organization for a member of
 * several; a removed member's next exchange fails; a non-member and an unknown organization get
 * the same answer; the gateway takes an organization token only under its own organization's
 * path, and never for a platform permission.
 */
import { randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import { ADMIN, type TestSystem, http, signedIn, startTestSystem, strongPassword, uniqueEmail } from './harness';

jest.setTimeout(180_000);

describe('organization tokens (end to end)', () => {
  let sys: TestSystem;
  let admin: string;
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(sys.url(), method, path, opts);
  const exchange = (refreshToken: string, organizationId: string, scope?: string) =>
    call('POST', '/api/v1/auth/organization-token', { body: { refreshToken, organizationId, ...(scope !== undefined ? { scope } : {}) } });

  async function user(): Promise<{ id: string; email: string; password: string }> {
    const email = uniqueEmail('ot');
    const password = strongPassword();
    const r = await call('POST', '/api/v1/users', { token: admin, body: { firstName: 'Org', lastName: 'Token', email, password } });
    expect(r.status).toBe(201);
    return { id: r.json.id, email, password };
  }
  async function org(): Promise<{ id: string; slug: string }> {
    const slug = `ot-${randomUUID().slice(0, 8)}`;
    const r = await call('POST', '/api/v1/organizations', { token: admin, body: { name: 'Org', slug } });
    expect(r.status).toBe(201);
    return { id: r.json.id, slug };
  }

  beforeAll(async () => {
    sys = await startTestSystem();
    admin = (await call('POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it('membership, the scope intersection, one token per organization, removal at the next exchange, the same error for non-member and unknown', async () => {
    const [a, b, c] = [await org(), await org(), await org()];
    const role = await call('POST', '/api/v1/organization-roles', { token: admin, body: { name: `billing-${randomUUID().slice(0, 6)}`, permissions: ['users.manage', 'audit.read'] } });
    expect(role.status).toBe(201);
    const u = await user();
    await call('POST', `/api/v1/organizations/${a.id}/members`, { token: admin, body: { userId: u.id, roles: [role.json.name, 'org.admin'] } });
    await call('POST', `/api/v1/organizations/${b.id}/members`, { token: admin, body: { userId: u.id, roles: [] } });
    // Someone else stays org.admin of a, so u may be removed from it later.
    const other = await user();
    await call('POST', `/api/v1/organizations/${a.id}/members`, { token: admin, body: { userId: other.id, roles: ['org.admin'] } });
    const login = await signedIn(sys.url(), u.email, u.password);

    const ta = await exchange(login.refreshToken, a.id);
    expect(ta.status).toBe(200);
    expect(ta.headers.get('cache-control')).toBe('no-store');
    expect(ta.json).toMatchObject({ tokenType: 'Bearer', organization: { id: a.id, slug: a.slug }, permissions: ['audit.read', 'users.manage'] });
    const claims = decodeJwt(ta.json.token);
    expect(claims).toMatchObject({ sub: u.id, org: { id: a.id, slug: a.slug }, roles: [], permissions: ['audit.read', 'users.manage'] });
    expect(claims.aud).toEqual(expect.arrayContaining([`urn:iam:organization:${a.id}`]));
    // The scope narrows, never widens.
    expect((await exchange(login.refreshToken, a.id, 'audit.read products.manage')).json.permissions).toEqual(['audit.read']);
    // b: a token of its own, without a's permissions.
    const tb = await exchange(login.refreshToken, b.id);
    expect(tb.json).toMatchObject({ organization: { id: b.id }, permissions: [] });
    // Non-member and unknown: the same answer.
    const notMember = await exchange(login.refreshToken, c.id);
    const unknown = await exchange(login.refreshToken, randomUUID());
    expect([notMember.status, unknown.status]).toEqual([403, 403]);
    expect(notMember.json.detail).toBe(unknown.json.detail);
    // A bad refresh token: 401, as the refresh route.
    expect((await exchange('x'.repeat(43), a.id)).status).toBe(401);

    // At the gateway: its own organization's routes; another's 404; the platform's 403, though it carries users.manage.
    expect((await call('GET', `/api/v1/organizations/${a.id}/members`, { token: ta.json.token })).status).toBe(200);
    expect((await call('GET', `/api/v1/organizations/${b.id}/members`, { token: ta.json.token })).status).toBe(404);
    expect((await call('GET', '/api/v1/users', { token: ta.json.token })).status).toBe(403);
    expect((await call('GET', '/api/v1/organizations', { token: ta.json.token })).status).toBe(403);

    // Removed from a: the next exchange fails; the refresh token itself still works.
    expect((await call('DELETE', `/api/v1/organizations/${a.id}/members/${u.id}`, { token: admin })).status).toBe(204);
    expect((await exchange(login.refreshToken, a.id)).status).toBe(403);
    expect((await exchange(login.refreshToken, b.id)).status).toBe(200);
    expect((await call('POST', '/api/v1/auth/refresh', { body: { refreshToken: login.refreshToken } })).status).toBe(200);
  });
});
