/**
 * Access tokens over the key ring's port (SigningKeys), without a database: the service signs with
 * the key the ring says signs now and verifies with the key a token's kid names, so key keeping
 * and rotation (key-ring.ts, tested in identity.test.ts) stay out of it.
 */
import { type JwtAlg, firstAcceptedIat } from '@iam/platform';
import { type CryptoKey, type JWK, importJWK, jwtVerify } from 'jose';
import { createPrivateKey } from 'node:crypto';
import type { Principal } from '../domain/model';
import { generateSigningKey } from './key-ring';
import { JwtTokenService, type SigningKey, type SigningKeys, signJws } from './token-service';

const principal: Principal = { userId: '7c2b5d1e-0000-4000-8000-000000000003', firstName: 'A', lastName: 'B', email: 'a@b.cd', roles: ['r'], permissions: ['p'], emailVerified: true };
const settings = { tokenLifetimeSeconds: 300, issuer: 'iam', audience: 'iam-api' };

/** A ring of one or more keys held in memory; the first signs. */
async function ringOf(alg: JwtAlg, n = 1): Promise<SigningKeys & { signed: number }> {
  const made = await Promise.all(Array.from({ length: n }, () => generateSigningKey(alg)));
  const keys = await Promise.all(
    made.map(async (k) => ({
      kid: k.kid,
      alg,
      privateKey: createPrivateKey({ key: k.privateJwk, format: 'jwk' }),
      header: Buffer.from(JSON.stringify({ alg, kid: k.kid, typ: 'JWT' })).toString('base64url'),
      publicKey: (await importJWK(k.publicJwk as JWK, alg)) as CryptoKey,
    })),
  );
  const ring = {
    alg,
    signed: 0,
    signingKey: (): Promise<SigningKey> => {
      ring.signed++;
      return Promise.resolve(keys[0]!);
    },
    publicKey: (kid: string) => Promise.resolve(keys.find((k) => k.kid === kid)?.publicKey),
  };
  return ring;
}

describe('JwtTokenService over the key ring', () => {
  it('signs with the key that signs now and verifies through the kid', async () => {
    const ring = await ringOf('EdDSA');
    const tokens = new JwtTokenService(ring, settings);
    const { token, jti, expiresAt } = await tokens.issue(principal);
    expect(ring.signed).toBe(1);
    const claims = await tokens.verify(token);
    expect(claims).toMatchObject({ sub: principal.userId, jti, iss: 'iam', aud: ['iam-api'], roles: ['r'], permissions: ['p'], email: 'a@b.cd' });
    expect(claims.exp - claims.iat).toBe(300);
    expect(expiresAt.getTime()).toBe(claims.exp * 1000);
  });

  it("refuses a token whose kid the ring does not know, and one of another algorithm than the ring's", async () => {
    const issuer = new JwtTokenService(await ringOf('EdDSA'), settings);
    const { token } = await issuer.issue(principal);
    await expect(new JwtTokenService(await ringOf('EdDSA'), settings).verify(token)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    await expect(new JwtTokenService(await ringOf('ES256'), settings).verify(token)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it("a token issued in the second of its subject's revocation is not older than it", async () => {
    const tokens = new JwtTokenService(await ringOf('EdDSA'), settings);
    const notBefore = new Date();
    const { token } = await tokens.issue(principal, { notBefore });
    const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { iat: number; nbf: number; exp: number };
    expect(payload.iat).toBe(firstAcceptedIat(notBefore));
    expect(payload).toMatchObject({ nbf: payload.iat, exp: payload.iat + 300 });
  });

  it('signJws: EdDSA, ES256 and RS256 tokens verify with jose against the public JWK', async () => {
    for (const alg of ['EdDSA', 'ES256', 'RS256'] as const) {
      const { publicJwk, privateJwk } = await generateSigningKey(alg);
      const header = Buffer.from(JSON.stringify({ alg, kid: publicJwk.kid, typ: 'JWT' })).toString('base64url');
      const token = signJws(alg, createPrivateKey({ key: privateJwk, format: 'jwk' }), header, { sub: 'u', roles: ['r'] });
      const { payload, protectedHeader } = await jwtVerify(token, await importJWK(publicJwk as JWK, alg), { algorithms: [alg] });
      expect(protectedHeader).toEqual({ alg, kid: publicJwk.kid, typ: 'JWT' });
      expect(payload).toEqual({ sub: 'u', roles: ['r'] });
    }
  });
});
