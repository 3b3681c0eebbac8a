/**
 * The SCIM protocol beyond Entra's examples, on the real PostgreSQL: Okta's SCIM 2.0 test steps,
 * isolation between organizations (404 for every other organization's id, in paths, filters,
 * group members and Bulk), tokens (401, revoked), ETags (412), Bulk (bulkId references,
 * failOnErrors, 413 beyond its limits), filters (400 invalidFilter, bounded), paging, sorting,
 * attribute projection, and the escalation rule on groups' roles.
 */
import { SUBJECTS } from '@iam/contracts';
import { PASSWORD, directoryFixture, refusal as refusalOf, unique } from '../../testing/app-fixture';
import { ERROR_SCHEMA, PATCH_OP, type ScimClient, scimClient } from '../../testing/scim-client';

const fx = directoryFixture('directory_scim_protocol');
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const BULK = 'urn:ietf:params:scim:api:messages:2.0:BulkRequest';
const ROLES_EXT = 'urn:iam:params:scim:schemas:extension:organization:2.0:Group';

let a: ScimClient;
let b: ScimClient;
beforeAll(async () => {
  a = await scimClient(fx);
  b = await scimClient(fx);
});

const user = (tag = unique(), extra: Record<string, unknown> = {}) => ({ schemas: [USER], userName: `user.${tag}@okta.example`, name: { givenName: 'Ok', familyName: 'Ta' }, externalId: `x-${tag}`, ...extra });
const make = async (c: ScimClient, body: Record<string, unknown> = user()) => {
  const r = await c.call('POST', '/Users', { body });
  expect(r.status).toBe(201);
  return r.body as { id: string; userName: string; meta: { version: string } };
};
const errorOf = (r: { status: number; body: { schemas: string[]; status: string; scimType?: string } }) => ({ status: r.status, schema: r.body.schemas[0], bodyStatus: r.body.status, scimType: r.body.scimType });

describe('Okta SCIM 2.0 test steps', () => {
  it('lists with count=1&startIndex=1', async () => {
    await make(a);
    await make(a);
    const r = await a.call('GET', '/Users', { query: { count: '1', startIndex: '1' } });
    expect(r.status).toBe(200);
    expect(r.body.itemsPerPage).toBe(1);
    expect(r.body.startIndex).toBe(1);
    expect(r.body.totalResults).toBeGreaterThanOrEqual(2);
  });

  it('a filter on an unknown userName gives totalResults 0; userName filters are case-insensitive', async () => {
    expect((await a.call('GET', '/Users', { query: { filter: `userName eq "nobody-${unique()}@okta.example"` } })).body.totalResults).toBe(0);
    const u = await make(a);
    const r = await a.call('GET', '/Users', { query: { filter: `userName eq "${u.userName.toUpperCase()}"` } });
    expect(r.body.totalResults).toBe(1);
    expect(r.body.Resources[0].id).toBe(u.id);
  });

  it('an unknown id is a 404 and a missing or wrong token a 401, each with the SCIM error schema', async () => {
    expect(errorOf(await a.call('GET', '/Users/00000000-0000-4000-8000-000000000000'))).toEqual({ status: 404, schema: ERROR_SCHEMA, bodyStatus: '404', scimType: undefined });
    expect(errorOf(await a.call('GET', '/Users/not-a-uuid'))).toMatchObject({ status: 404 });
    expect(errorOf(await a.call('GET', '/Users', { token: '' }))).toMatchObject({ status: 401, schema: ERROR_SCHEMA, bodyStatus: '401' });
    expect(errorOf(await a.call('GET', '/Users', { token: 'iamscim_wrong' }))).toMatchObject({ status: 401 });
  });

  it('a duplicate create is a 409 uniqueness (the same userName in any case, or the same externalId)', async () => {
    const tag = unique();
    await make(a, user(tag));
    expect(errorOf(await a.call('POST', '/Users', { body: user(tag) }))).toMatchObject({ status: 409, scimType: 'uniqueness' });
    expect(errorOf(await a.call('POST', '/Users', { body: { ...user(unique()), userName: `USER.${tag}@OKTA.EXAMPLE` } }))).toMatchObject({ status: 409, scimType: 'uniqueness' });
    expect(errorOf(await a.call('POST', '/Users', { body: { ...user(unique()), externalId: `x-${tag}` } }))).toMatchObject({ status: 409, scimType: 'uniqueness' });
  });
});

describe('isolation', () => {
  it("a token of organization A gets 404 for every organization-B id: path, filter, group members, Bulk; and for B's own URL", async () => {
    const other = await make(b);
    for (const [m, body] of [['GET', undefined], ['PUT', user()], ['PATCH', { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'active', value: false }] }], ['DELETE', undefined]] as const) {
      expect((await a.call(m, `/Users/${other.id}`, { body })).status).toBe(404);
    }
    expect((await a.call('GET', '/Users', { query: { filter: `id eq "${other.id}" or userName eq "${other.userName}"` } })).body.totalResults).toBe(0);
    const g = await a.call('POST', '/Groups', { body: { displayName: `g-${unique()}`, members: [{ value: other.id }] } });
    expect(g.status).toBe(404);
    const bulk = await a.call('POST', '/Bulk', { body: { schemas: [BULK], Operations: [{ method: 'PATCH', path: `/Users/${other.id}`, data: { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'active', value: false }] } }] } });
    expect(bulk.body.Operations[0].status).toBe('404');
    expect((await a.call('GET', '/Users', { organizationId: b.organizationId })).status).toBe(404);
    expect((await b.call('GET', `/Users/${other.id}`)).body.active).toBe(true);
  });

  it('a revoked connection is refused (401)', async () => {
    const c = await scimClient(fx);
    await fx.uc.scimConnections.revoke(fx.admin, c.organizationId, c.connectionId);
    expect((await c.call('GET', '/Users')).status).toBe(401);
    const events = await fx.newEvents();
    expect(events.map((e) => e.subject)).toContain(SUBJECTS.scimConnectionRevoked);
  });
});

describe('ETags', () => {
  it('If-Match with a stale version is a 412; the current one passes', async () => {
    const u = await make(a);
    const stale = u.meta.version;
    const ok = await a.call('PATCH', `/Users/${u.id}`, { ifMatch: stale, body: { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'displayName', value: 'One' }] } });
    expect(ok.status).toBe(200);
    expect(ok.etag).not.toBe(stale);
    expect(errorOf(await a.call('PUT', `/Users/${u.id}`, { ifMatch: stale, body: user() }))).toMatchObject({ status: 412, bodyStatus: '412' });
    expect((await a.call('DELETE', `/Users/${u.id}`, { ifMatch: stale })).status).toBe(412);
    expect((await a.call('DELETE', `/Users/${u.id}`, { ifMatch: ok.etag })).status).toBe(204);
  });
});

describe('Bulk', () => {
  it('creates a user and a group naming it by bulkId; failOnErrors stops the run', async () => {
    const r = await a.call('POST', '/Bulk', {
      body: {
        schemas: [BULK],
        failOnErrors: 1,
        Operations: [
          { method: 'POST', path: '/Users', bulkId: 'u1', data: user() },
          { method: 'POST', path: '/Groups', bulkId: 'g1', data: { displayName: `bulk-${unique()}`, members: [{ value: 'bulkId:u1' }] } },
          { method: 'POST', path: '/Users', bulkId: 'bad', data: { schemas: [USER] } },
          { method: 'POST', path: '/Users', bulkId: 'never', data: user() },
        ],
      },
    });
    expect(r.status).toBe(200);
    expect(r.body.Operations.map((o: { status: string }) => o.status)).toEqual(['201', '201', '400']);
    const group = await a.call('GET', r.body.Operations[1].location.replace(/^.*\/scim\/v2\/[^/]+/, ''));
    expect(group.body.members[0].value).toBe(r.body.Operations[0].location.split('/').pop());
  });

  it('more operations than maxOperations, or a body over maxPayloadSize, is a 413 with the SCIM error schema', async () => {
    const ops = Array.from({ length: 101 }, (_, i) => ({ method: 'DELETE', path: `/Users/00000000-0000-4000-8000-${String(i).padStart(12, '0')}` }));
    expect(errorOf(await a.call('POST', '/Bulk', { body: { schemas: [BULK], Operations: ops } }))).toMatchObject({ status: 413, schema: ERROR_SCHEMA, bodyStatus: '413' });
    expect(errorOf(await a.call('POST', '/Bulk', { raw: JSON.stringify({ schemas: [BULK], Operations: [], pad: 'x'.repeat(1_048_577) }) }))).toMatchObject({ status: 413 });
  });
});

describe('filters', () => {
  it('malformed filters and unknown attributes are 400 invalidFilter', async () => {
    for (const filter of ['userName eq', 'userName eq "a" and', '(userName eq "a"', 'userName zz "a"', 'password eq "x"', 'emails[nope eq "x"]', 'active gt true', 'meta.created gt "not a date"']) {
      expect(errorOf(await a.call('GET', '/Users', { query: { filter } }))).toMatchObject({ status: 400, scimType: 'invalidFilter' });
    }
  });

  it('a deeply nested or huge filter is refused before parsing (400 invalidFilter)', async () => {
    const deep = `${'('.repeat(5000)}userName eq "a"${')'.repeat(5000)}`;
    const huge = Array.from({ length: 400 }, (_, i) => `userName eq "u${i}"`).join(' or ');
    const many = Array.from({ length: 41 }, (_, i) => `title eq "${i}"`).join(' or ');
    for (const filter of [deep, huge, many]) expect(errorOf(await a.call('GET', '/Users', { query: { filter } }))).toMatchObject({ status: 400, scimType: 'invalidFilter' });
  });

  it('the grammar: and/or/not, value paths, pr, co/sw/ew, dates, the Enterprise extension', async () => {
    const tag = unique();
    const u = await make(a, user(tag, { title: 'Engineer', emails: [{ value: `w.${tag}@okta.example`, type: 'work', primary: true }, { value: `h.${tag}@home.example`, type: 'home' }], 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'R&D', employeeNumber: tag } }));
    const found = async (filter: string) => (await a.call('GET', '/Users', { query: { filter } })).body.Resources?.map((r: { id: string }) => r.id) ?? [];
    expect(await found(`emails[type eq "home" and value ew "@home.example"] and title pr`)).toEqual([u.id]);
    expect(await found(`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber eq "${tag}"`)).toEqual([u.id]);
    expect(await found(`userName sw "user.${tag}" and not (title eq "Manager") and meta.created gt "2000-01-01T00:00:00Z"`)).toEqual([u.id]);
    expect(await found(`externalId eq "x-${tag}" and (title co "gine" or title eq "x")`)).toEqual([u.id]);
    expect(await found(`externalId eq "X-${tag}"`)).toEqual([]);
    expect(await found(`emails.value eq "H.${tag}@HOME.EXAMPLE"`)).toEqual([u.id]);
  });
});

describe('paging, sorting, attributes', () => {
  it('startIndex/count pages in the sortBy order; attributes and excludedAttributes project', async () => {
    const c = await scimClient(fx);
    for (const n of ['c', 'a', 'b']) await make(c, user(`${n}${unique()}`, { userName: `${n}-${unique()}@sort.example` }));
    const page = async (startIndex: number, sortOrder = 'ascending') =>
      (await c.call('GET', '/Users', { query: { sortBy: 'userName', sortOrder, startIndex: String(startIndex), count: '2', attributes: 'userName' } })).body;
    const first = await page(1);
    expect(first.totalResults).toBe(3);
    expect(first.Resources.map((r: { userName: string }) => r.userName[0])).toEqual(['a', 'b']);
    expect((await page(3)).Resources.map((r: { userName: string }) => r.userName[0])).toEqual(['c']);
    expect((await page(1, 'descending')).Resources.map((r: { userName: string }) => r.userName[0])).toEqual(['c', 'b']);
    expect(Object.keys(first.Resources[0]).sort()).toEqual(['id', 'schemas', 'userName']);
    const without = (await c.call('GET', '/Users', { query: { excludedAttributes: 'emails,name.givenName' } })).body.Resources[0];
    expect(without.emails).toBeUndefined();
    expect(without.name).toEqual({ familyName: 'Ta' });
    const search = await c.call('POST', '/Users/.search', { body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'], filter: 'userName sw "b-"', count: 10 } });
    expect(search.body.totalResults).toBe(1);
  });
});

describe('groups and roles', () => {
  it("a group gives its roles in the organization; a role beyond what the organization's administrators may grant, or org.admin, is a 403", async () => {
    const reader = await fx.uc.organizationRoles.create(fx.admin, { name: `reader-${unique()}`, description: '', permissions: [] });
    const secret = await fx.uc.organizationRoles.create(fx.admin, { name: `secret-${unique()}`, description: '', permissions: [] });
    const c = await scimClient(fx);
    const u = await make(c);
    // No administrator of the organization yet holds anything: a role with no permission is within reach.
    const ok = await c.call('POST', '/Groups', { body: { displayName: `readers-${unique()}`, members: [{ value: u.id }], [ROLES_EXT]: { roles: [reader.name] } } });
    expect(ok.status).toBe(201);
    expect((await fx.uc.organizations.grant(u.id, { id: c.organizationId }))!.roles).toContain(reader.name);
    expect((await c.call('POST', '/Groups', { body: { displayName: `admins-${unique()}`, [ROLES_EXT]: { roles: ['org.admin'] } } })).status).toBe(403);
    const name = `docs.write.${unique()}`;
    await fx.permissionId(name);
    await fx.uc.organizationRoles.update(fx.admin, secret.id, { permissions: [name] });
    expect(errorOf(await c.call('POST', '/Groups', { body: { displayName: `writers-${unique()}`, [ROLES_EXT]: { roles: [secret.name] } } }))).toMatchObject({ status: 403 });
    // Once an administrator of the organization holds that permission there, the connection may give it.
    const holder = await fx.uc.organizationRoles.create(fx.admin, { name: `holder-${unique()}`, description: '', permissions: [name] });
    const orgAdmin = await fx.uc.users.create(fx.admin, { firstName: 'Org', lastName: 'Admin', email: `oa-${unique()}@example.com`, password: PASSWORD });
    await fx.uc.organizations.addMember(fx.admin, c.organizationId, { userId: orgAdmin.id, roles: ['org.admin', holder.name] });
    const writers = await c.call('POST', '/Groups', { body: { displayName: `writers-${unique()}`, members: [{ value: u.id }], [ROLES_EXT]: { roles: [secret.name] } } });
    expect(writers.status).toBe(201);
    expect((await fx.uc.organizations.grant(u.id, { id: c.organizationId }))!.permissions).toContain(name);
    const events = await fx.newEvents();
    expect(events.filter((e) => e.subject === SUBJECTS.organizationMembershipUpdated).map((e) => e.payload)).toContainEqual(expect.objectContaining({ userId: u.id, via: 'scim-group' }));
    expect(errorOf(await c.call('POST', '/Groups', { body: { displayName: ok.body.displayName.toUpperCase() } }))).toMatchObject({ status: 409, scimType: 'uniqueness' });
  });
});

describe('deprovisioning', () => {
  it('active true enables a disabled account again', async () => {
    const u = await make(a);
    const patch = (value: boolean) => a.call('PATCH', `/Users/${u.id}`, { body: { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'active', value }] } });
    expect((await patch(false)).body.active).toBe(false);
    expect(await fx.uc.organizations.grant(u.id, { id: a.organizationId })).toBeNull();
    expect((await patch(true)).body.active).toBe(true);
    expect(await fx.uc.organizations.grant(u.id, { id: a.organizationId })).not.toBeNull();
  });

  it('DELETE deletes an account in no other organization; one still in another stays there, untouched', async () => {
    const only = await make(a);
    const shared = await make(a);
    await fx.uc.organizations.addMember(fx.admin, b.organizationId, { userId: shared.id, roles: [] });
    await fx.newEvents();
    expect((await a.call('DELETE', `/Users/${only.id}`)).status).toBe(204);
    expect((await a.call('DELETE', `/Users/${shared.id}`)).status).toBe(204);
    expect((await refusalOf(fx.uc.users.get(only.id))).code).toBe('NOT_FOUND');
    expect((await fx.uc.users.get(shared.id)).id).toBe(shared.id);
    expect(await fx.uc.organizations.grant(shared.id, { id: b.organizationId })).not.toBeNull();
    expect(await fx.uc.organizations.grant(shared.id, { id: a.organizationId })).toBeNull();
    const subjects = (await fx.newEvents()).map((e) => e.subject);
    expect(subjects.filter((s) => s === SUBJECTS.userDeleted)).toHaveLength(1);
    expect(subjects.filter((s) => s === SUBJECTS.organizationMembershipUpdated)).toHaveLength(2);
  });
});

describe('discovery', () => {
  it('ServiceProviderConfig tells what is supported; ResourceTypes and Schemas answer', async () => {
    const spc = (await a.call('GET', '/ServiceProviderConfig')).body;
    expect(spc).toMatchObject({ patch: { supported: true }, bulk: { supported: true, maxOperations: 100, maxPayloadSize: 1_048_576 }, filter: { supported: true, maxResults: 200 }, sort: { supported: true }, etag: { supported: true }, changePassword: { supported: false } });
    expect((await a.call('GET', '/ResourceTypes')).body.Resources.map((r: { id: string }) => r.id)).toEqual(['User', 'Group']);
    expect((await a.call('GET', `/Schemas/${USER}`)).body.attributes.map((x: { name: string }) => x.name)).toContain('userName');
    expect((await a.call('GET', '/Nope')).status).toBe(404);
    expect(errorOf(await a.call('POST', '/Users', { raw: '{not json' }))).toMatchObject({ status: 400, scimType: 'invalidSyntax' });
  });
});
