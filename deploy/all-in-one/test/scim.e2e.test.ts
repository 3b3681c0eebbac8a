/**
 * SCIM provisioning end to end (issue #42), through the gateway of the whole system: an
 * organization's admin makes a SCIM connection with the API (token shown once), then a scripted
 * Entra-style run — create, update, group membership, disable, delete — leaves the platform in
 * the expected state: the account and its membership, the group's roles in the organization, a
 * disabled account's token refused within the revocation bound and its sign-in refused, the
 * deleted account gone; every change in the audit trail with the connection as the actor.
 */
import { randomUUID } from 'node:crypto';
import { eventually } from '@iam/platform/testing';
import { ADMIN, type TestSystem, http, signedIn, startTestSystem, strongPassword, uniqueEmail } from './harness';

jest.setTimeout(180_000);

const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

describe('SCIM provisioning (end to end)', () => {
  let sys: TestSystem;
  let admin: string;
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(sys.url(), method, path, opts);

  /** A SCIM request as Entra sends it (application/scim+json, a bearer token); SCIM is not in the OpenAPI documents. */
  async function scim(token: string, org: string, method: string, path: string, body?: unknown, type = 'application/scim+json'): Promise<{ status: number; type: string | null; json: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any -- SCIM documents, checked field by field
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body !== undefined) headers['content-type'] = type;
    const res = await fetch(`${sys.url()}/scim/v2/${org}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, type: res.headers.get('content-type'), json: text ? JSON.parse(text) : null };
  }

  beforeAll(async () => {
    sys = await startTestSystem();
    admin = (await http(sys.url(), 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
  });

  afterAll(async () => {
    await sys?.stop();
  });

  it('an org admin connects Entra ID; create, update, group membership, disable and delete leave the platform as expected', async () => {
    const org = (await call('POST', '/api/v1/organizations', { token: admin, body: { name: 'Contoso', slug: `contoso-${randomUUID().slice(0, 8)}` } })).json.id as string;
    const orgAdmin = { email: uniqueEmail('orgadmin'), password: strongPassword() };
    const adminUser = await call('POST', '/api/v1/users', { token: admin, body: { firstName: 'Org', lastName: 'Admin', ...orgAdmin } });
    expect((await call('POST', `/api/v1/organizations/${org}/members`, { token: admin, body: { userId: adminUser.json.id, roles: ['org.admin'] } })).status).toBe(201);
    const orgAdminToken = (await signedIn(sys.url(), orgAdmin.email, orgAdmin.password)).token;

    // The org admin makes the connection: the token once, the base URL to paste into Entra.
    const made = await call('POST', `/api/v1/organizations/${org}/scim-connections`, { token: orgAdminToken, body: { name: 'Entra ID' } });
    expect(made.status).toBe(201);
    // PUBLIC_URL + /scim/v2/{organizationId}.
    expect(made.json.baseUrl).toMatch(new RegExp(`^https?://[^/]+/scim/v2/${org}$`));
    const token = made.json.token as string;
    const listed = await call('GET', `/api/v1/organizations/${org}/scim-connections`, { token: orgAdminToken });
    expect(listed.json.items.map((c: { id: string }) => c.id)).toEqual([made.json.connection.id]);
    expect(listed.text).not.toContain(token);

    // Entra's first calls: the configuration, and a userName lookup that finds nobody.
    const spc = await scim(token, org, 'GET', '/ServiceProviderConfig');
    expect([spc.status, spc.type]).toEqual([200, 'application/scim+json; charset=utf-8']);
    const email = uniqueEmail('entra');
    const userName = `alex.${randomUUID().slice(0, 8)}@contoso.example`;
    expect((await scim(token, org, 'GET', `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`)).json.totalResults).toBe(0);

    // Create (application/json accepted too).
    const created = await scim(
      token,
      org,
      'POST',
      '/Users',
      { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], externalId: randomUUID(), userName, active: true, emails: [{ primary: true, type: 'work', value: email }], name: { givenName: 'Alex', familyName: 'Wilber' } },
      'application/json',
    );
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    expect((await call('GET', `/api/v1/organizations/${org}/members/${id}`, { token: orgAdminToken })).json).toMatchObject({ email: email.toLowerCase(), firstName: 'Alex', lastName: 'Wilber' });

    // Update: Entra's capitalised op and value path.
    const updated = await scim(token, org, 'PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'name.familyName', value: 'Wilber-Smith' }] });
    expect(updated.json.name.familyName).toBe('Wilber-Smith');
    const read = await call('GET', `/api/v1/users?id=${id}`, { token: admin });
    expect([read.status, read.json?.lastName ?? read.text]).toEqual([200, 'Wilber-Smith']);

    // Group membership: a group carrying an organization role the organization's admins may grant.
    const role = await call('POST', '/api/v1/organization-roles', { token: admin, body: { name: `viewer-${randomUUID().slice(0, 8)}`, permissions: [] } });
    const group = await scim(token, org, 'POST', '/Groups', { displayName: 'Sales', 'urn:iam:params:scim:schemas:extension:organization:2.0:Group': { roles: [role.json.name] } });
    expect(group.status).toBe(201);
    expect((await scim(token, org, 'PATCH', `/Groups/${group.json.id}`, { schemas: [PATCH], Operations: [{ op: 'Add', path: 'members', value: [{ $ref: null, value: id }] }] })).status).toBe(204);
    expect((await scim(token, org, 'GET', `/Groups/${group.json.id}`)).json.members.map((m: { value: string }) => m.value)).toEqual([id]);

    // The user signs in (a password set by the platform's admin here; SSO in real life).
    const password = strongPassword();
    expect((await call('PUT', `/api/v1/users/${id}`, { token: admin, body: { password } })).status).toBe(200);
    const session = await signedIn(sys.url(), email, password);
    expect((await call('GET', '/api/v1/me', { token: session.token })).status).toBe(200);

    // Disable: still answered with active false; the token refused within the revocation bound; no sign-in.
    const disabled = await scim(token, org, 'PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: false }] });
    expect(disabled.json.active).toBe(false);
    // The same path as a password change's (account.e2e.test.ts): the directory's event, identity ends the sessions, every gateway's denylist.
    await eventually(async () => (await call('GET', '/api/v1/me', { token: session.token })).status === 401, 5_000, 100);
    expect((await call('POST', '/api/v1/auth/generate-jwt', { body: { email, password } })).status).toBe(401);
    expect((await scim(token, org, 'GET', `/Users/${id}`)).json.active).toBe(false);

    // Delete: out of the organization; in no other, so the account is deleted.
    expect((await scim(token, org, 'DELETE', `/Users/${id}`)).status).toBe(204);
    expect((await call('GET', `/api/v1/organizations/${org}/members/${id}`, { token: orgAdminToken })).status).toBe(404);
    expect((await call('GET', `/api/v1/users?id=${id}`, { token: admin })).status).toBe(404);
    expect((await scim(token, org, 'GET', `/Groups/${group.json.id}`)).json.members).toEqual([]);

    // Audited with the connection as the actor.
    await eventually(async () => {
      const r = await call('GET', `/api/v1/audit-events?actorId=${encodeURIComponent(`scim:${made.json.connection.id}`)}&pageSize=100`, { token: admin });
      const actions = ((r.json?.items ?? []) as Array<{ action: string }>).map((e) => e.action);
      return ['user.created', 'user.updated', 'organization.group.created', 'organization.group.updated', 'user.deleted'].every((a) => actions.includes(a));
    }, 30_000);

    // Revoked: the token is refused at once.
    expect((await call('DELETE', `/api/v1/organizations/${org}/scim-connections/${made.json.connection.id}`, { token: orgAdminToken })).status).toBe(204);
    const refused = await scim(token, org, 'GET', '/Users');
    expect([refused.status, refused.json.status, refused.type]).toEqual([401, '401', 'application/scim+json; charset=utf-8']);
  });
});
