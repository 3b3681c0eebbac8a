/**
 * Microsoft Entra ID's published SCIM request/response examples ("Tutorial: Develop and plan
 * provisioning for a SCIM endpoint", use-scim-to-provision-users-and-groups), each as a test,
 * against the directory's SCIM server on the real PostgreSQL: capitalised `op`, the
 * `emails[type eq "work"].value` path, group PATCH → 204, a disabled user still answered with
 * `active: false`. Ids are the server's (Entra's sample ids are replaced by those answered).
 */
import { SUBJECTS } from '@iam/contracts';
import { PgPrincipalStore } from '../../infra/principal-store';
import { directoryFixture, unique } from '../../testing/app-fixture';
import { PATCH_OP, type ScimClient, scimClient } from '../../testing/scim-client';

const fx = directoryFixture('directory_scim_entra');
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';

let scim: ScimClient;
beforeAll(async () => {
  scim = await scimClient(fx);
});

/** Entra's "Create User" request body, with fresh names. */
function entraUser(tag = unique()) {
  return {
    schemas: [USER, ENTERPRISE],
    externalId: `ext-${tag}`,
    userName: `Test_User_${tag}`,
    active: true,
    emails: [{ primary: true, type: 'work', value: `Test_User_${tag}@testuser.com` }],
    meta: { resourceType: 'User' },
    name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
    roles: [],
  };
}

async function created(): Promise<{ id: string; userName: string }> {
  const r = await scim.call('POST', '/Users', { body: entraUser() });
  expect(r.status).toBe(201);
  return { id: r.body.id, userName: r.body.userName };
}

describe('Entra ID: users', () => {
  it('Create User: 201 with the user, its id, meta and location; the events of the REST API', async () => {
    const body = entraUser();
    const r = await scim.call('POST', '/Users', { body });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ schemas: [USER], userName: body.userName, externalId: body.externalId, active: true, name: { familyName: 'familyName', givenName: 'givenName', formatted: 'givenName familyName' } });
    expect(r.body.emails).toEqual(body.emails);
    expect(r.body.meta).toMatchObject({ resourceType: 'User', location: `https://iam.example/scim/v2/${scim.organizationId}/Users/${r.body.id}` });
    expect(r.etag).toBe(r.body.meta.version);
    expect(r.location).toBe(r.body.meta.location);
    const events = await fx.newEvents();
    expect(events.map((e) => e.subject).sort()).toEqual([SUBJECTS.organizationMembershipUpdated, SUBJECTS.userCreated]);
    expect(events.find((e) => e.subject === SUBJECTS.userCreated)!.payload).toMatchObject({ userId: r.body.id, email: body.emails[0]!.value.toLowerCase() });
  });

  it('Get User: 200 with the user', async () => {
    const u = await created();
    const r = await scim.call('GET', `/Users/${u.id}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: u.id, userName: u.userName, active: true });
  });

  it('Get User by query: the userName filter finds the one user', async () => {
    const u = await created();
    const r = await scim.call('GET', '/Users', { query: { filter: `userName eq "${u.userName}"` } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'], totalResults: 1, startIndex: 1, itemsPerPage: 1 });
    expect(r.body.Resources[0]).toMatchObject({ id: u.id, userName: u.userName });
  });

  it('Get User by query, zero results: totalResults 0', async () => {
    const r = await scim.call('GET', '/Users', { query: { filter: 'userName eq "non-existent user"' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ totalResults: 0, Resources: [], startIndex: 1, itemsPerPage: 0 });
  });

  it('Update User [multi-valued properties]: Replace emails[type eq "work"].value and name.familyName', async () => {
    const u = await created();
    const email = `updated-${unique()}@microsoft.com`;
    const r = await scim.call('PATCH', `/Users/${u.id}`, {
      body: { schemas: [PATCH_OP], Operations: [{ op: 'Replace', path: 'emails[type eq "work"].value', value: email }, { op: 'Replace', path: 'name.familyName', value: 'updatedFamilyName' }] },
    });
    expect(r.status).toBe(200);
    expect(r.body.emails).toEqual([{ primary: true, type: 'work', value: email }]);
    expect(r.body.name.familyName).toBe('updatedFamilyName');
    const events = await fx.newEvents();
    expect(events.find((e) => e.subject === SUBJECTS.userUpdated)!.payload).toMatchObject({ email, lastName: 'updatedFamilyName', changedFields: ['email', 'lastName'] });
  });

  it('Update User [single-valued properties]: Replace userName', async () => {
    const u = await created();
    const userName = `${unique()}@testuser.com`;
    const r = await scim.call('PATCH', `/Users/${u.id}`, { body: { schemas: [PATCH_OP], Operations: [{ op: 'Replace', path: 'userName', value: userName }] } });
    expect(r.status).toBe(200);
    expect(r.body.userName).toBe(userName);
  });

  it('Disable User: Replace active false; GET still answers it with active false; the account cannot act', async () => {
    const u = await created();
    const r = await scim.call('PATCH', `/Users/${u.id}`, { body: { schemas: [PATCH_OP], Operations: [{ op: 'Replace', path: 'active', value: false }] } });
    expect(r.status).toBe(200);
    expect(r.body.active).toBe(false);
    const events = await fx.newEvents();
    expect(events.find((e) => e.subject === SUBJECTS.userUpdated)!.payload).toMatchObject({ userId: u.id, changedFields: ['active'] });
    expect((await scim.call('GET', `/Users/${u.id}`)).body.active).toBe(false);
    // No principal: no refresh, no authorization check passes, no organization grant.
    expect(await new PgPrincipalStore(fx.ds.manager).findById(u.id)).toBeNull();
    expect(await fx.uc.organizations.grant(u.id, { id: scim.organizationId })).toBeNull();
  });

  it('Delete User: 204, then 404 with the SCIM error schema', async () => {
    const u = await created();
    expect((await scim.call('DELETE', `/Users/${u.id}`)).status).toBe(204);
    const r = await scim.call('GET', `/Users/${u.id}`);
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '404' });
  });
});

describe('Entra ID: groups', () => {
  const createGroup = async () => {
    const r = await scim.call('POST', '/Groups', {
      body: { schemas: [GROUP, 'http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group'], externalId: `g-${unique()}`, displayName: `displayName-${unique()}`, meta: { resourceType: 'Group' } },
    });
    expect(r.status).toBe(201);
    return r.body as { id: string; displayName: string; members: unknown[] };
  };

  it('Create Group: 201 with no members', async () => {
    const g = await createGroup();
    expect(g.members).toEqual([]);
    expect((await fx.newEvents()).map((e) => e.subject)).toEqual([SUBJECTS.organizationGroupCreated]);
  });

  it('Get Group with excludedAttributes=members, and by displayName', async () => {
    const g = await createGroup();
    const one = await scim.call('GET', `/Groups/${g.id}`, { query: { excludedAttributes: 'members' } });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: g.id, displayName: g.displayName });
    expect(one.body.members).toBeUndefined();
    const list = await scim.call('GET', '/Groups', { query: { excludedAttributes: 'members', filter: `displayName eq "${g.displayName}"` } });
    expect(list.body.totalResults).toBe(1);
    expect(list.body.Resources[0].members).toBeUndefined();
  });

  it('Update Group [non-member attributes]: Replace displayName → 204', async () => {
    const g = await createGroup();
    const r = await scim.call('PATCH', `/Groups/${g.id}`, { body: { schemas: [PATCH_OP], Operations: [{ op: 'Replace', path: 'displayName', value: `${g.displayName}updatedDisplayName` }] } });
    expect(r.status).toBe(204);
    expect((await scim.call('GET', `/Groups/${g.id}`)).body.displayName).toBe(`${g.displayName}updatedDisplayName`);
  });

  it('Update Group [add members] and [remove members] → 204', async () => {
    const g = await createGroup();
    const u = await created();
    const add = await scim.call('PATCH', `/Groups/${g.id}`, { body: { schemas: [PATCH_OP], Operations: [{ op: 'Add', path: 'members', value: [{ $ref: null, value: u.id }] }] } });
    expect(add.status).toBe(204);
    expect((await scim.call('GET', `/Groups/${g.id}`)).body.members.map((m: { value: string }) => m.value)).toEqual([u.id]);
    const filtered = await scim.call('GET', '/Groups', { query: { filter: `members[value eq "${u.id}"]`, excludedAttributes: 'members' } });
    expect(filtered.body.totalResults).toBe(1);
    const remove = await scim.call('PATCH', `/Groups/${g.id}`, { body: { schemas: [PATCH_OP], Operations: [{ op: 'Remove', path: 'members', value: [{ $ref: null, value: u.id }] }] } });
    expect(remove.status).toBe(204);
    expect((await scim.call('GET', `/Groups/${g.id}`)).body.members).toEqual([]);
  });

  it('Delete Group: 204, then 404', async () => {
    const g = await createGroup();
    expect((await scim.call('DELETE', `/Groups/${g.id}`)).status).toBe(204);
    expect((await scim.call('GET', `/Groups/${g.id}`)).status).toBe(404);
  });
});
