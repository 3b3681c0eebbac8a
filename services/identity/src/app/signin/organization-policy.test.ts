/** What an authorization request names as its organization (organization-policy.ts), and the gate. */
import { randomUUID } from 'node:crypto';
import { admit, organizationAsked, organizationOfScope, organizationRefOf, organizationScopes } from './organization-policy';

describe('the organization an authorization request names', () => {
  const id = randomUUID();

  it('by scope (slug or id), by organization_id (id or slug), the same one twice; none without either', () => {
    expect(organizationAsked({ scope: 'openid organization:acme-eu' })).toEqual({ slug: 'acme-eu' });
    expect(organizationAsked({ scope: `openid organization:${id}` })).toEqual({ id });
    expect(organizationAsked({ scope: 'openid organization', organization_id: id.toUpperCase() })).toEqual({ id });
    expect(organizationAsked({ scope: 'openid organization', organization_id: 'acme' })).toEqual({ slug: 'acme' });
    expect(organizationAsked({ scope: `openid organization:${id}`, organization_id: id })).toEqual({ id });
    expect(organizationAsked({ scope: 'openid organization organizations' })).toBeNull();
    expect(organizationAsked({})).toBeNull();
  });

  it('two organizations, or an organization_id that is no id or slug: VALIDATION, whoever asks', () => {
    expect(() => organizationAsked({ scope: 'organization:a1 organization:b2' })).toThrow(expect.objectContaining({ code: 'VALIDATION' }));
    expect(() => organizationAsked({ scope: 'organization:a1', organization_id: id })).toThrow(expect.objectContaining({ code: 'VALIDATION' }));
    for (const bad of ['Acme!', 'a\u0000b', 'pаypal', 'x'.repeat(64), '-acme']) {
      expect(() => organizationAsked({ organization_id: bad })).toThrow(expect.objectContaining({ code: 'VALIDATION' }));
      expect(organizationRefOf(bad)).toBeNull();
    }
  });

  it('scope values that are not organization scopes are not read as one', () => {
    expect(organizationScopes('openid organization:Acme organization: organization:a--b organization:ok')).toEqual(['organization:ok']);
    expect(organizationOfScope('organization:ok')).toEqual({ slug: 'ok' });
    expect(organizationOfScope('users.manage')).toBeNull();
  });

  it('the gate: a member passes, anyone else gets the one refusal; no organization asked, no lookup', async () => {
    const asked: unknown[] = [];
    const grants = { grant: async (userId: string, o: unknown) => (asked.push(o), userId === 'member' ? { organizationId: id, organizationSlug: 'acme', roles: [], permissions: [] } : null) };
    await expect(admit(grants, 'member', { slug: 'acme' })).resolves.toBeUndefined();
    await expect(admit(grants, 'other', { slug: 'acme' })).rejects.toMatchObject({ code: 'FORBIDDEN', reason: 'identity.organization_refused' });
    await expect(admit(grants, 'other', null)).resolves.toBeUndefined();
    expect(asked).toHaveLength(2);
  });
});
