/**
 * DPoP proofs across gateway replicas (RFC 9449 §11.1): two gateways sharing Redis (REDIS_URL)
 * accept a proof once between them. A proof names the public URL (`htu` under PUBLIC_URL), so the
 * same proof is valid at either replica: only the shared record of its `jti` stops the replay.
 * Skipped when no Redis answers at 127.0.0.1:6379.
 */
import { createHash, randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { type CryptoKey, type JWK, SignJWT, exportJWK, generateKeyPair } from 'jose';
import { ADMIN, type TestSystem, http, startTestSystem } from './harness';

jest.setTimeout(120_000);

const PUBLIC_URL = 'http://iam.test';

function redisReachable(): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port: 6379, timeout: 500 }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
    s.on('timeout', () => {
      s.destroy();
      resolve(false);
    });
  });
}

describe('DPoP across gateway replicas (proof ids shared through Redis)', () => {
  let sys: TestSystem | undefined;
  let key: { privateKey: CryptoKey; jwk: JWK };
  let token: string;

  const proof = (htm: string, htu: string, at?: string) =>
    new SignJWT({ jti: randomUUID(), htm, htu, iat: Math.floor(Date.now() / 1000), ...(at ? { ath: createHash('sha256').update(at).digest('base64url') } : {}) })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk })
      .sign(key.privateKey);

  beforeAll(async () => {
    if (!(await redisReachable())) {
      console.warn('no Redis at 127.0.0.1:6379: the DPoP replica test is skipped');
      return;
    }
    sys = await startTestSystem({ gateways: 2, env: { PUBLIC_URL, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: `e2e-${randomUUID()}:` } });
    const admin = (await http(sys.url(0), 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token as string;
    const created = await http(sys.url(0), 'POST', '/api/v1/clients', {
      token: admin,
      body: { name: 'Bound job', type: 'confidential', redirectUris: [], postLogoutRedirectUris: [], grantTypes: ['client_credentials'], roles: ['Administrator'], dpopBound: true },
    });
    expect(created.status).toBe(201);
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    key = { privateKey, jwk: await exportJWK(publicKey) };
    // The provider checks the token request's proof against its token endpoint under PUBLIC_URL
    // (the address it names itself by, whatever address the request reached the gateway at).
    const r = await fetch(`${sys.url(0)}/oidc/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${created.json.clientId}:${created.json.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        dpop: await proof('POST', `${PUBLIC_URL}/oidc/token`),
      },
      body: 'grant_type=client_credentials',
    });
    const body = (await r.json()) as { access_token: string; token_type: string };
    expect({ status: r.status, type: body.token_type }).toEqual({ status: 200, type: 'DPoP' });
    token = body.access_token;
  });

  afterAll(async () => {
    await sys?.stop();
  });

  it('a proof taken by one replica is refused by the other; a fresh one passes there', async () => {
    if (!sys) return;
    const call = (i: number, p: string) => fetch(`${sys!.url(i)}/api/v1/users?pageSize=1`, { headers: { authorization: `DPoP ${token}`, dpop: p } });
    const once = await proof('GET', `${PUBLIC_URL}/api/v1/users`, token);
    expect((await call(0, once)).status).toBe(200);
    const replayed = await call(1, once);
    expect(replayed.status).toBe(401);
    expect(replayed.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_dpop_proof"/);
    expect(((await replayed.json()) as { detail: string }).detail).toContain('already used');
    expect((await call(1, await proof('GET', `${PUBLIC_URL}/api/v1/users`, token))).status).toBe(200);
  });
});
