/**
 * SCIM connections on the real PostgreSQL: the platform and the organization's org.admin make,
 * list and revoke them; anyone else gets NOT_FOUND (an outsider) or FORBIDDEN (a member without
 * org.admin); the token is returned once and only its SHA-256 is stored; each change is an event.
 */
import { createHash } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { PASSWORD, directoryFixture, refusal, unique } from '../testing/app-fixture';

const fx = directoryFixture('directory_scim_connections');

async function member(orgId: string, roles: string[]): Promise<{ userId: string }> {
  const u = await fx.uc.users.create(fx.admin, { firstName: 'M', lastName: 'B', email: `m-${unique()}@example.com`, password: PASSWORD });
  await fx.uc.organizations.addMember(fx.admin, orgId, { userId: u.id, roles });
  return { userId: u.id };
}

describe('SCIM connections', () => {
  it("an org admin makes one (token once, hashed at rest), lists and revokes it; events name no token", async () => {
    const org = await fx.uc.organizations.create(fx.admin, { name: 'Acme', slug: `acme-${unique()}` });
    const admin = await member(org.id, ['org.admin']);
    await fx.newEvents();
    const made = await fx.uc.scimConnections.create(admin, org.id, { name: 'Okta' });
    expect(made.token).toMatch(/^iamscim_[A-Za-z0-9_-]{43}$/);
    expect(made.connection).toMatchObject({ organizationId: org.id, name: 'Okta', createdBy: admin.userId, revokedAt: null });
    const [row] = await fx.ds.query<Array<{ token_hash: Buffer }>>('SELECT token_hash FROM scim_connections WHERE id = $1', [made.connection.id]);
    expect(row!.token_hash.equals(createHash('sha256').update(made.token).digest())).toBe(true);
    const listed = await fx.uc.scimConnections.list(admin, org.id, { page: 1, pageSize: 10 });
    expect(listed.items.map((c) => c.id)).toEqual([made.connection.id]);
    expect(JSON.stringify(listed)).not.toContain(made.token);
    expect((await fx.uc.scimConnections.authenticate(made.token))?.id).toBe(made.connection.id);
    await fx.uc.scimConnections.revoke(admin, org.id, made.connection.id);
    expect(await fx.uc.scimConnections.authenticate(made.token)).toBeNull();
    expect((await refusal(fx.uc.scimConnections.revoke(admin, org.id, made.connection.id))).code).toBe('NOT_FOUND');
    const events = await fx.newEvents();
    expect(events.map((e) => e.subject)).toEqual([SUBJECTS.scimConnectionCreated, SUBJECTS.scimConnectionRevoked]);
    expect(JSON.stringify(events)).not.toContain(made.token);
  });

  it('a member without org.admin is FORBIDDEN, an outsider and another organization NOT_FOUND', async () => {
    const org = await fx.uc.organizations.create(fx.admin, { name: 'Acme', slug: `acme-${unique()}` });
    const other = await fx.uc.organizations.create(fx.admin, { name: 'Other', slug: `other-${unique()}` });
    const plain = await member(org.id, []);
    const outsider = await member(other.id, ['org.admin']);
    expect((await refusal(fx.uc.scimConnections.create(plain, org.id, { name: 'x' }))).code).toBe('FORBIDDEN');
    expect((await refusal(fx.uc.scimConnections.create(outsider, org.id, { name: 'x' }))).code).toBe('NOT_FOUND');
    const made = await fx.uc.scimConnections.create(fx.admin, org.id, { name: 'Entra' });
    expect((await refusal(fx.uc.scimConnections.revoke(outsider, other.id, made.connection.id))).code).toBe('NOT_FOUND');
    expect((await refusal(fx.uc.scimConnections.create(fx.admin, org.id, { name: '\u0000' }))).fields).toEqual(['name']);
    expect(await fx.uc.scimConnections.authenticate('not-a-scim-token')).toBeNull();
  });
});
