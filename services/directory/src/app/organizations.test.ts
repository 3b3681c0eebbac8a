/**
 * Organization use cases through the composition root on the real PostgreSQL: the platform's
 * rights, delegated administration by org.admin holders (their organization only, the escalation
 * rules of DESIGN §3 within it, the last org.admin kept), isolation (another organization's
 * members are NOT_FOUND, as an unknown organization), bad slugs, and an event for every change.
 */
import { SUBJECTS } from '@iam/contracts';
import { PASSWORD, directoryFixture, refusal, unique } from '../testing/app-fixture';

const fx = directoryFixture('directory_organizations');

async function newUser(): Promise<{ userId: string; email: string }> {
  const email = `m-${unique()}@example.com`;
  const u = await fx.uc.users.create(fx.admin, { firstName: 'Mem', lastName: 'Ber', email, password: PASSWORD });
  return { userId: u.id, email };
}

async function newOrg() {
  return fx.uc.organizations.create(fx.admin, { name: 'Acme', slug: `acme-${unique()}` });
}

describe('organizations', () => {
  it('the platform creates one; a bad slug is a 400 naming it (lookalike scripts, NUL, control characters, shape)', async () => {
    const o = await newOrg();
    expect(o.slug).toMatch(/^acme-/);
    const events = await fx.newEvents();
    expect(events.map((e) => e.subject)).toEqual([SUBJECTS.organizationCreated]);
    expect(events[0]!.payload).toMatchObject({ organizationId: o.id, slug: o.slug, name: 'Acme' });
    for (const slug of ['p\u0430ypal', 'a\u0000b', 'a\u0007b', 'Acme', 'a--b', '-ab', 'a', 'a b', 'ab\u200b']) {
      expect(await refusal(fx.uc.organizations.create(fx.admin, { name: 'X', slug }))).toEqual({ code: 'VALIDATION', fields: ['slug'] });
    }
    expect(await refusal(fx.uc.organizations.create(fx.admin, { name: 'a\u0000', slug: `ok-${unique()}` }))).toEqual({ code: 'VALIDATION', fields: ['name'] });
    expect(await refusal(fx.uc.organizations.create(fx.admin, { name: 'Dup', slug: o.slug }))).toEqual({ code: 'CONFLICT', fields: ['slug'] });
  });

  it('a user without organizations.manage cannot create one; organizations.manage suffices', async () => {
    const nobody = await fx.actorHolding('users.manage');
    expect((await refusal(fx.uc.organizations.create(nobody, { name: 'N', slug: `n-${unique()}` }))).code).toBe('FORBIDDEN');
    const manager = await fx.actorHolding('organizations.manage');
    await fx.uc.organizations.create(manager, { name: 'M', slug: `m-${unique()}` });
  });

  it('an org.admin manages its organization\'s members and their roles, and nothing of another organization (404 there, as an unknown one)', async () => {
    const [a, b] = [await newOrg(), await newOrg()];
    const orgAdmin = await newUser();
    const member = await newUser();
    const memberOfB = await newUser();
    await fx.uc.organizations.addMember(fx.admin, a.id, { userId: orgAdmin.userId, roles: ['org.admin'] });
    await fx.uc.organizations.addMember(fx.admin, a.id, { userId: member.userId, roles: [] });
    await fx.uc.organizations.addMember(fx.admin, b.id, { userId: memberOfB.userId, roles: [] });
    await fx.newEvents();

    const members = await fx.uc.organizations.listMembers(orgAdmin, a.id, { pageSize: 10 });
    expect(members.items.map((m) => m.userId).sort()).toEqual([orgAdmin.userId, member.userId].sort());
    await fx.uc.organizations.setMemberRoles(orgAdmin, a.id, member.userId, ['org.admin']);
    const [changed] = await fx.newEvents();
    expect(changed).toMatchObject({ subject: SUBJECTS.organizationMembershipUpdated, payload: { organizationId: a.id, userId: member.userId, rolesBefore: [], roles: ['org.admin'], memberBefore: true, memberAfter: true } });

    // Organization B: every route answers NOT_FOUND, as for an organization that does not exist.
    const unknownOrg = '00000000-0000-4000-8000-000000000000';
    for (const org of [b.id, unknownOrg]) {
      expect((await refusal(fx.uc.organizations.get(orgAdmin, org))).code).toBe('NOT_FOUND');
      expect((await refusal(fx.uc.organizations.listMembers(orgAdmin, org, { pageSize: 10 }))).code).toBe('NOT_FOUND');
      expect((await refusal(fx.uc.organizations.getMember(orgAdmin, org, memberOfB.userId))).code).toBe('NOT_FOUND');
      expect((await refusal(fx.uc.organizations.setMemberRoles(orgAdmin, org, memberOfB.userId, ['org.admin']))).code).toBe('NOT_FOUND');
      expect((await refusal(fx.uc.organizations.removeMember(orgAdmin, org, memberOfB.userId))).code).toBe('NOT_FOUND');
    }
    // B's member named under A's id: not a member there.
    expect((await refusal(fx.uc.organizations.getMember(orgAdmin, a.id, memberOfB.userId))).code).toBe('NOT_FOUND');
    // The platform's parts: the organization itself, adding by user id.
    expect((await refusal(fx.uc.organizations.update(orgAdmin, a.id, { name: 'Renamed' }))).code).toBe('FORBIDDEN');
    expect((await refusal(fx.uc.organizations.remove(orgAdmin, a.id))).code).toBe('FORBIDDEN');
    expect((await refusal(fx.uc.organizations.addMember(orgAdmin, a.id, { userId: memberOfB.userId, roles: [] }))).code).toBe('FORBIDDEN');
    // A member without org.admin manages nothing.
    expect((await refusal(fx.uc.organizations.listMembers(memberOfB, b.id, { pageSize: 10 }))).code).toBe('FORBIDDEN');
    // An org admin sees only its organizations.
    expect((await fx.uc.organizations.list(orgAdmin, { page: 1, pageSize: 100, includeDeleted: false })).items.map((o) => o.id)).toEqual([a.id]);
    expect(await fx.newEvents()).toEqual([]);
  });

  it('escalation within the organization: an org.admin assigns only roles whose permissions it holds there, and changes only members it covers', async () => {
    const o = await newOrg();
    const powerful = await fx.uc.organizationRoles.create(fx.admin, { name: `billing-${unique()}`, permissions: ['users.manage'] });
    const orgAdmin = await newUser();
    const target = await newUser();
    const strong = await newUser();
    await fx.uc.organizations.addMember(fx.admin, o.id, { userId: orgAdmin.userId, roles: ['org.admin'] });
    await fx.uc.organizations.addMember(fx.admin, o.id, { userId: target.userId, roles: [] });
    await fx.uc.organizations.addMember(fx.admin, o.id, { userId: strong.userId, roles: [powerful.name] });
    expect((await refusal(fx.uc.organizations.setMemberRoles(orgAdmin, o.id, target.userId, [powerful.name]))).code).toBe('FORBIDDEN');
    expect((await refusal(fx.uc.organizations.removeMember(orgAdmin, o.id, strong.userId))).code).toBe('FORBIDDEN');
    // The last org.admin stays.
    expect((await refusal(fx.uc.organizations.removeMember(orgAdmin, o.id, orgAdmin.userId))).code).toBe('CONFLICT');
    expect((await refusal(fx.uc.organizations.setMemberRoles(fx.admin, o.id, orgAdmin.userId, []))).code).toBe('CONFLICT');
    // The platform may.
    await fx.uc.organizations.setMemberRoles(fx.admin, o.id, target.userId, [powerful.name]);
    expect((await fx.uc.organizations.grant(target.userId, { slug: o.slug }))?.permissions).toEqual(['users.manage']);
  });

  it('removing a member ends what it holds there; a non-member and an unknown organization look the same', async () => {
    const o = await newOrg();
    const u = await newUser();
    await fx.uc.organizations.addMember(fx.admin, o.id, { userId: u.userId, roles: ['org.admin'] });
    const other = await newUser();
    await fx.uc.organizations.addMember(fx.admin, o.id, { userId: other.userId, roles: ['org.admin'] });
    expect((await fx.uc.organizations.grant(u.userId, { id: o.id }))?.roles).toEqual(['org.admin']);
    await fx.uc.organizations.removeMember(fx.admin, o.id, u.userId);
    expect(await fx.uc.organizations.grant(u.userId, { id: o.id })).toBeNull();
    expect(await fx.uc.organizations.grant(u.userId, { slug: 'no-such-org' })).toBeNull();
    expect((await refusal(fx.uc.organizations.addMember(fx.admin, o.id, { userId: other.userId, roles: [] }))).code).toBe('CONFLICT');
    expect(await refusal(fx.uc.organizations.addMember(fx.admin, o.id, { userId: u.userId, roles: ['nope'] }))).toEqual({ code: 'VALIDATION', fields: ['roles'] });
  });

  it('the org role template: built from existing permissions, org.admin built in, only permissions the changer holds', async () => {
    const manager = await fx.actorHolding('organizations.manage');
    expect((await refusal(fx.uc.organizationRoles.create(manager, { name: `r-${unique()}`, permissions: ['users.manage'] }))).code).toBe('FORBIDDEN');
    const r = await fx.uc.organizationRoles.create(manager, { name: `r-${unique()}`, permissions: ['organizations.manage'] });
    expect(r.permissions).toEqual(['organizations.manage']);
    expect(await refusal(fx.uc.organizationRoles.create(fx.admin, { name: `r-${unique()}`, permissions: ['no.such'] }))).toEqual({ code: 'VALIDATION', fields: ['permissions'] });
    const [admin] = (await fx.uc.organizationRoles.list({ page: 1, pageSize: 5, q: 'org.admin', includeDeleted: false })).items;
    expect((await refusal(fx.uc.organizationRoles.remove(fx.admin, admin!.id))).code).toBe('CONFLICT');
    expect(await refusal(fx.uc.organizationRoles.create(fx.admin, { name: 'org.adm\u0456n' }))).toEqual({ code: 'VALIDATION', fields: ['name'] });
  });
});
