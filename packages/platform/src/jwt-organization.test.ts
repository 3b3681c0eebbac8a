/**
 * Organization tokens at verification (issue #41): the `org` claim must be `{id, slug}` and come
 * with the organization's audience, or the token is refused; an organization token passes no
 * platform policy (hasPermission, isAdministrator), whatever its permissions and roles say.
 */
import { randomUUID } from 'node:crypto';
import { type CryptoKey, SignJWT, generateKeyPair } from 'jose';
import { hasPermission, isAdministrator, organizationAudience, verifyAccessToken } from './jwt';

describe('organization tokens at verification', () => {
  const ISS = 'https://iam.example';
  const AUD = 'iam-api';
  const org = { id: randomUUID(), slug: 'acme' };
  let sign: (claims: Record<string, unknown>) => Promise<string>;
  let lookup: (kid: string) => Promise<CryptoKey | undefined>;

  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    lookup = async (kid) => (kid === 'k1' ? publicKey : undefined);
    sign = (claims) =>
      new SignJWT({ email: 'a@example.com', roles: [], permissions: ['users.manage'], ...claims })
        .setProtectedHeader({ alg: 'EdDSA', kid: 'k1' })
        .setIssuer(ISS)
        .setSubject(randomUUID())
        .setJti(randomUUID())
        .setIssuedAt()
        .setNotBefore('0s')
        .setExpirationTime('5m')
        .sign(privateKey);
  });

  const verify = async (claims: Record<string, unknown>) => verifyAccessToken(await sign(claims), lookup, { alg: 'EdDSA', issuer: ISS, audience: AUD });

  it('carries org with its audience, and passes no platform policy', async () => {
    const claims = await verify({ aud: [AUD, organizationAudience(org.id)], org, roles: ['Administrator'] });
    expect(claims.org).toEqual(org);
    expect(hasPermission(claims, 'users.manage')).toBe(false);
    expect(isAdministrator(claims)).toBe(false);
    // The same token without org: an ordinary one.
    const plain = await verify({ aud: AUD });
    expect(hasPermission(plain, 'users.manage')).toBe(true);
  });

  it.each([
    ['without the organization audience', { aud: AUD, org }],
    ['with another organization\'s audience', { aud: [AUD, organizationAudience(randomUUID())], org }],
    ['with a malformed org', { aud: [AUD, organizationAudience(org.id)], org: { id: org.id } }],
    ['with an org that is not an object', { aud: [AUD, organizationAudience(org.id)], org: 'acme' }],
    ['with extra org fields', { aud: [AUD, organizationAudience(org.id)], org: { ...org, admin: true } }],
  ])('is refused %s', async (_, claims) => {
    await expect(verify(claims)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });
});
