/**
 * The organization stores on the real PostgreSQL: slugs unique by lookalike key, members in
 * several organizations, every read naming its organization (another organization's id finds
 * nothing), member lists paged by cursor, and what a member holds in each organization.
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '@iam/platform';
import { type MigratedDatabase, migratedTestDatabase } from '@iam/platform/testing';
import { entities, migrations } from './schema';
import { pgOrganizationStores } from './organization-stores';

describe('organization stores', () => {
  let db: MigratedDatabase;
  const s = () => pgOrganizationStores(db.ds.manager);

  beforeAll(async () => {
    db = await migratedTestDatabase('directory_orgs', { entities, migrations });
  });
  afterAll(async () => {
    await db?.close();
  });

  async function user(email = `u-${randomUUID().slice(0, 8)}@example.com`): Promise<string> {
    const id = randomUUID();
    await s().users.insert({ id, firstName: 'A', lastName: 'B', email, phone: null, passwordHash: 'x' });
    return id;
  }
  async function org(slug = `org-${randomUUID().slice(0, 8)}`): Promise<string> {
    const id = randomUUID();
    await s().organizations.insert({ id, name: slug, slug });
    return id;
  }
  async function conflict(p: Promise<unknown>): Promise<string[]> {
    try {
      await p;
    } catch (err) {
      if (err instanceof AppError && err.code === 'CONFLICT') return (err.errors ?? []).map((e) => e.field);
      throw err;
    }
    throw new Error('no conflict');
  }

  it('the built-in org.admin role and organizations.manage are seeded', async () => {
    const [role] = await s().organizationRoles.findLiveByNames(['org.admin']);
    expect(role?.name).toBe('org.admin');
    expect(await s().permissions.findLiveByNames(['organizations.manage'])).toHaveLength(1);
  });

  it('a slug is unique among live organizations, and so is its lookalike (UTS #39 skeleton); a deleted one is free again', async () => {
    const t = randomUUID().slice(0, 6);
    const first = await org(`paypal-${t}`);
    expect(await conflict(org(`paypal-${t}`))).toEqual(['slug']);
    // Cyrillic а in place of the Latin a: the same skeleton.
    expect(await conflict(org(`p\u0430ypal-${t}`))).toEqual(['slug']);
    expect(await s().organizations.softDelete(first)).toBe(true);
    await org(`paypal-${t}`);
    expect((await s().organizations.findBySlug(`PAYPAL-${t}`))?.slug).toBe(`paypal-${t}`);
  });

  it('a user is a member of several organizations, each with its own roles; another organization\'s id finds nothing', async () => {
    const [a, b] = [await org(), await org()];
    const u = await user();
    const outsider = await user();
    expect(await s().members.add(a, u)).toBe(true);
    expect(await s().members.add(a, u)).toBe(false);
    expect(await s().members.add(b, u)).toBe(true);
    await s().members.add(b, outsider);
    const [admin] = await s().organizationRoles.findLiveByNames(['org.admin']);
    const reader = randomUUID();
    await s().organizationRoles.insert({ id: reader, name: `reader-${randomUUID().slice(0, 6)}`, description: '' });
    const [perm] = await s().permissions.findLiveByNames(['users.manage']);
    await s().organizationRoles.setPermissions(reader, [perm!.id]);
    await s().members.setRoles(a, u, [admin!.id]);
    await s().members.setRoles(b, u, [reader]);

    expect((await s().members.find(a, u))?.roles).toEqual(['org.admin']);
    expect(await s().members.find(a, outsider)).toBeNull();
    expect((await s().members.grant(b, u))?.permissions).toEqual(['users.manage']);
    expect((await s().members.grant(a, u))?.permissions).toEqual([]);
    expect((await s().members.grantsOf(u)).map((g) => g.organization.id).sort()).toEqual([a, b].sort());
    expect(await s().members.lockAdmins(a)).toEqual([u]);
    expect(await s().members.lockAdmins(b)).toEqual([]);
    expect((await s().organizations.list({ page: 1, pageSize: 10, includeDeleted: false }, { memberId: outsider })).items.map((o) => o.id)).toEqual([b]);

    // Removing the member from b leaves a untouched; a deleted organization holds no one.
    expect(await s().members.remove(b, u)).toBe(true);
    expect(await s().members.grant(b, u)).toBeNull();
    expect(await s().members.remove(b, u)).toBe(false);
    await s().organizations.softDelete(a);
    expect(await s().members.find(a, u)).toBeNull();
    expect(await s().members.grantsOf(u)).toEqual([]);
  });

  it('a member list is paged by cursor, in join order, every member once', async () => {
    const o = await org();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const u = await user();
      ids.push(u);
      await s().members.add(o, u);
    }
    const seen: string[] = [];
    let page = await s().members.list(o, { pageSize: 3 });
    expect(page.totalCount).toBe(7);
    seen.push(...page.items.map((m) => m.userId));
    while (page.next) {
      page = await s().members.list(o, { pageSize: 3, after: page.next });
      seen.push(...page.items.map((m) => m.userId));
    }
    expect(seen).toEqual(ids);
    // The same cursor against another organization: that organization's members only (none).
    const other = await org();
    const first = await s().members.list(o, { pageSize: 3 });
    expect((await s().members.list(other, { pageSize: 3, after: first.next })).items).toEqual([]);
  });
});
