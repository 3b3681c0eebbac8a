/** The organization claims of an API token (organization-grant.ts): from the scope naming it, narrowed, refused for a non-member; and its audience. */
import { randomUUID } from 'node:crypto';
import { organizationAudienceCustomizer, organizationClaimsOf } from './organization-grant';

describe('organization claims of an access token', () => {
  const id = randomUUID();
  const asked: unknown[] = [];
  const grants = {
    grant: async (userId: string, o: { id?: string; slug?: string }) => {
      asked.push(o);
      return userId === 'member' && (o.slug === 'acme' || o.id === id) ? { organizationId: id, organizationSlug: 'acme', roles: ['billing'], permissions: ['audit.read', 'roles.manage', 'users.manage'] } : null;
    },
  };

  it('a token naming no organization: none, and the directory is not asked', async () => {
    await expect(organizationClaimsOf({ grants }, { scope: 'openid users.manage', accountId: 'member' }, null)).resolves.toBeNull();
    expect(asked).toEqual([]);
  });

  it('the first party: everything held there; a third party: its ceiling within the token’s scopes', async () => {
    await expect(organizationClaimsOf({ grants }, { scope: 'organization:acme', accountId: 'member' }, null)).resolves.toEqual({
      org: { id, slug: 'acme' },
      roles: [],
      permissions: ['audit.read', 'roles.manage', 'users.manage'],
    });
    const third = await organizationClaimsOf({ grants }, { scope: `organization:${id} users.manage roles.manage`, accountId: 'member' }, ['users.manage', 'audit.read']);
    expect(third?.permissions).toEqual(['users.manage']);
  });

  it('a non-member and an unknown organization: the same invalid_grant', async () => {
    const a = await organizationClaimsOf({ grants }, { scope: 'organization:acme', accountId: 'other' }, null).catch((e: unknown) => e);
    const b = await organizationClaimsOf({ grants }, { scope: 'organization:nope', accountId: 'member' }, null).catch((e: unknown) => e);
    expect(a).toMatchObject({ error: 'invalid_grant' });
    expect((a as Error).message).toBe((b as Error).message);
    expect((a as { error_description?: string }).error_description).toBe((b as { error_description?: string }).error_description);
  });

  it('the audience: the organization’s beside the API’s, once; a token without org keeps its own', () => {
    const jwt = { payload: { aud: 'iam-api', org: { id, slug: 'acme' } } as Record<string, unknown> };
    organizationAudienceCustomizer(undefined, undefined, jwt);
    organizationAudienceCustomizer(undefined, undefined, jwt);
    expect(jwt.payload.aud).toEqual(['iam-api', `urn:iam:organization:${id}`]);
    const plain = { payload: { aud: 'iam-api' } as Record<string, unknown> };
    organizationAudienceCustomizer(undefined, undefined, plain);
    expect(plain.payload.aud).toBe('iam-api');
  });
});
