/**
 * Identity and the Full profile's authentication end to end: login and lockout, refresh rotation
 * and reuse detection, revocation at every gateway replica, and the tokens that must be refused.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { open } from '@iam/platform';
import { eventually } from '@iam/platform/testing';
import { type JWK, SignJWT, generateKeyPair, importJWK } from 'jose';
import { ADMIN, type HttpResult, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail } from './harness';

jest.setTimeout(60_000);

describe('authentication (end to end)', () => {
  let sys: TestSystem;
  let admin: string;
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}, replica = 0) => http(sys.url(replica), method, path, opts);
  const login = (email: string, password: string) => call('POST', '/api/v1/auth/generate-jwt', { body: { email, password } });
  const refresh = (refreshToken: unknown) => call('POST', '/api/v1/auth/refresh', { body: { refreshToken } });
  const users = (token: string, replica = 0) => call('GET', '/api/v1/users', { token }, replica);
  const strip = (r: HttpResult) => {
    const { traceId: _traceId, instance: _instance, ...rest } = r.json as Record<string, unknown>;
    return rest;
  };

  async function newUser(extra: Record<string, unknown> = {}) {
    const email = uniqueEmail();
    const password = strongPassword();
    const res = await call('POST', '/api/v1/users', { token: admin, body: { firstName: 'Ada', lastName: 'Lovelace', email, password, ...extra } });
    expect(res.status).toBe(201);
    return { id: res.json.id as string, email, password };
  }

  beforeAll(async () => {
    sys = await startTestSystem({ gateways: 2, env: { AUTH_MAX_FAILED_ATTEMPTS: '5' } });
    const res = await login(ADMIN.email, ADMIN.password);
    expect(res.status).toBe(200);
    admin = res.json.token;
  });

  afterAll(async () => {
    await sys?.stop();
  });

  it('login returns the documented token pair and user, and the token works', async () => {
    const u = await newUser({ roles: ['Administrator'] });
    const res = await login(u.email.toUpperCase(), u.password);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ tokenType: 'Bearer', expiresIn: 300, user: { id: u.id, email: u.email, roles: ['Administrator'] } });
    expect(res.json.refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(res.json.refreshExpiresIn).toBeGreaterThan(604_000);
    expect(res.text).not.toContain(u.password);
    expect((await users(res.json.token)).status).toBe(200);
  });

  it('wrong password, unknown email, deleted user and locked account answer the same 401', async () => {
    const u = await newUser();
    const wrong = await login(u.email, strongPassword());
    const unknown = await login(uniqueEmail('nobody'), strongPassword());
    const victim = await newUser();
    expect((await call('DELETE', `/api/v1/users/${victim.id}`, { token: admin })).status).toBe(204);
    const deleted = await login(victim.email, victim.password);
    for (const r of [wrong, unknown, deleted]) {
      expect(r.status).toBe(401);
      expect(r.headers.get('content-type')).toBe(wrong.headers.get('content-type'));
      expect(strip(r)).toEqual(strip(wrong));
    }
    for (let i = 0; i < 4; i++) expect((await login(u.email, strongPassword())).status).toBe(401);
    const locked = await login(u.email, u.password);
    expect(locked.status).toBe(401);
    expect(strip(locked)).toEqual(strip(wrong));
  });

  it('counts concurrent failures exactly', async () => {
    const u = await newUser();
    await Promise.all(Array.from({ length: 4 }, () => login(u.email, strongPassword())));
    expect((await login(u.email, u.password)).status).toBe(200); // 4 < 5: not locked, and the success resets
    await Promise.all(Array.from({ length: 5 }, () => login(u.email, strongPassword())));
    expect((await login(u.email, u.password)).status).toBe(401); // exactly 5: locked
    const [row] = await sys.identity.dataSource.query<Array<{ failed_count: number; locked: boolean }>>(
      `SELECT failed_count, locked_until > now() AS locked FROM login_failures WHERE email_hash = sha256($1::bytea)`,
      [Buffer.from(u.email)],
    );
    expect(row).toEqual({ failed_count: 5, locked: true });
  });

  it('refresh rotates; reuse of a token whose successor was used → 401 and the family is revoked', async () => {
    const u = await newUser();
    const s = (await login(u.email, u.password)).json;
    const r1 = await refresh(s.refreshToken);
    expect(r1.status).toBe(200);
    expect(r1.json.refreshToken).not.toBe(s.refreshToken);
    expect(r1.json.refreshExpiresIn).toBeLessThanOrEqual(s.refreshExpiresIn);
    const r2 = await refresh(r1.json.refreshToken);
    expect(r2.status).toBe(200);
    expect((await refresh(s.refreshToken)).status).toBe(401);
    expect((await refresh(r2.json.refreshToken)).status).toBe(401);
  });

  it('by default (no grace, the spec) a rotated token presented again, even at once, → 401 and the family is revoked', async () => {
    const u = await newUser();
    const s = (await login(u.email, u.password)).json;
    const r1 = await refresh(s.refreshToken);
    expect(r1.status).toBe(200);
    expect((await refresh(s.refreshToken)).status).toBe(401);
    expect((await refresh(r1.json.refreshToken)).status).toBe(401);
  });

  it('refresh re-derives claims from the current roles', async () => {
    const u = await newUser();
    const s = (await login(u.email, u.password)).json;
    expect((await users(s.token)).status).toBe(403);
    expect((await call('PUT', `/api/v1/users/${u.id}`, { token: admin, body: { roles: ['Administrator'] } })).status).toBe(200);
    expect((await users(s.token)).status).toBe(403);
    const r = await refresh(s.refreshToken);
    expect(r.status).toBe(200);
    expect((await users(r.json.token)).status).toBe(200);
  });

  it('a principal identity keeps from an earlier refresh follows a role change within 1 s (the directory event drops it)', async () => {
    const u = await newUser();
    let s = (await login(u.email, u.password)).json;
    s = (await refresh(s.refreshToken)).json; // the principal is now in identity's cache
    expect((await users(s.token)).status).toBe(403);
    expect((await call('PUT', `/api/v1/users/${u.id}`, { token: admin, body: { roles: ['Administrator'] } })).status).toBe(200);
    const changed = Date.now();
    await eventually(async () => {
      const r = await refresh(s.refreshToken);
      expect(r.status).toBe(200);
      s = r.json;
      return (await users(s.token)).status === 200;
    }, 1_000);
    expect(Date.now() - changed).toBeLessThan(1_500);
  });

  it('a deleted user cannot refresh; identity ends the sessions on the directory.user.deleted event', async () => {
    const u = await newUser();
    const s = (await login(u.email, u.password)).json;
    await login(u.email, u.password);
    expect((await call('DELETE', `/api/v1/users/${u.id}`, { token: admin })).status).toBe(204);
    await eventually(async () => {
      const rows = await sys.identity.dataSource.query<Array<{ revoked_at: Date | null }>>('SELECT revoked_at FROM refresh_tokens WHERE user_id = $1', [u.id]);
      return rows.length === 2 && rows.every((r) => r.revoked_at !== null);
    }, 5_000);
    expect((await refresh(s.refreshToken)).status).toBe(401);
  });

  it('a password change by an administrator ends the user\'s sessions', async () => {
    const u = await newUser();
    const s = (await login(u.email, u.password)).json;
    expect((await call('PUT', `/api/v1/users/${u.id}`, { token: admin, body: { password: strongPassword() } })).status).toBe(200);
    await eventually(async () => {
      const rows = await sys.identity.dataSource.query<Array<{ revoked_at: Date | null }>>('SELECT revoked_at FROM refresh_tokens WHERE user_id = $1', [u.id]);
      return rows.length === 1 && rows[0]!.revoked_at !== null;
    }, 5_000);
    expect((await refresh(s.refreshToken)).status).toBe(401);
  });

  it('revoke: the token is refused at every gateway replica within 1 s, and every refresh token of the account dies', async () => {
    const u = await newUser({ roles: ['Administrator'] });
    const s1 = (await login(u.email, u.password)).json;
    const s2 = (await login(u.email, u.password)).json;
    expect((await users(s1.token, 1)).status).toBe(200);
    const rv = await call('POST', '/api/v1/auth/revoke', { token: s1.token });
    expect(rv.status).toBe(204);
    expect((await users(s1.token, 0)).status).toBe(401);
    const started = Date.now();
    await eventually(async () => (await users(s1.token, 1)).status === 401, 1_000, 20);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect((await refresh(s1.refreshToken)).status).toBe(401);
    expect((await refresh(s2.refreshToken)).status).toBe(401);
    expect((await users(s2.token)).status).toBe(200); // another session's access token lives until it expires
  });

  describe('tokens that must be refused with 401 and WWW-Authenticate: Bearer', () => {
    let signingJwk: JWK;
    let kid: string;
    let claims: Record<string, unknown>;

    beforeAll(async () => {
      const [row] = await sys.identity.dataSource.query<Array<{
        kid: string;
        private_key: Buffer;
      }>>("SELECT kid, private_key FROM signing_keys WHERE alg = 'EdDSA' ORDER BY activates_at LIMIT 1");
      kid = row!.kid;
      signingJwk = JSON.parse(open(sys.kek, row!.private_key, kid).toString('utf8')) as JWK;
      const u = await newUser({ roles: ['Administrator'] });
      const token = (await login(u.email, u.password)).json.token as string;
      claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
    });

    const sign = async (payload: Record<string, unknown>, header: Record<string, unknown> = {}, jwk: JWK = signingJwk) => {
      const key = await importJWK(jwk, 'EdDSA');
      return new SignJWT(payload).setProtectedHeader({ alg: 'EdDSA', kid, ...header }).sign(key);
    };
    const expect401 = async (token: string) => {
      const r = await users(token);
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    };

    it('a token signed right (control) is accepted', async () => {
      expect((await users(await sign({ ...claims, jti: randomUUID() }))).status).toBe(200);
    });

    it('expired', async () => {
      const now = Math.floor(Date.now() / 1000);
      await expect401(await sign({ ...claims, iat: now - 600, nbf: now - 600, exp: now - 60 }));
    });

    it('not yet valid (beyond the 30 s skew)', async () => {
      const now = Math.floor(Date.now() / 1000);
      await expect401(await sign({ ...claims, nbf: now + 120 }));
    });

    it('wrong issuer, wrong audience', async () => {
      await expect401(await sign({ ...claims, iss: 'someone-else' }));
      await expect401(await sign({ ...claims, aud: 'another-api' }));
    });

    it('unknown kid, or a key identity never issued', async () => {
      await expect401(await sign(claims, { kid: 'no-such-kid' }));
      const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
      const foreign = await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', kid }).sign(privateKey);
      await expect401(foreign);
    });

    it('alg none, tampered payload, HS256 with the public key as secret', async () => {
      const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
      await expect401(`${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`);
      const good = await sign(claims);
      const [h, , sig] = good.split('.');
      await expect401(`${h}.${b64({ ...claims, roles: ['Administrator'], sub: randomUUID() })}.${sig}`);
      const jwks = (await call('GET', '/.well-known/jwks.json')).json;
      const hs = `${b64({ alg: 'HS256', kid, typ: 'JWT' })}.${b64(claims)}`;
      const mac = createHmac('sha256', JSON.stringify(jwks.keys[0])).update(hs).digest('base64url');
      await expect401(`${hs}.${mac}`);
    });

    it('missing claims (no jti), garbage, and a non-Bearer scheme', async () => {
      const { jti, ...noJti } = claims;
      void jti;
      await expect401(await sign(noJti));
      await expect401('not-a-jwt');
      const r = await call('GET', '/api/v1/users', { headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } });
      expect(r.status).toBe(401);
    });
  });

  it('refresh: garbage → 401, oversized → 400, wrong type → 400, huge body → 413', async () => {
    expect((await refresh('garbage')).status).toBe(401);
    expect((await refresh('A'.repeat(43))).status).toBe(401);
    expect((await refresh('x'.repeat(201))).status).toBe(400);
    expect((await refresh(12345)).status).toBe(400);
    expect((await refresh('x'.repeat(70_000))).status).toBe(413);
  });

  it('login: a megabyte password is refused before any hashing; a 1000-character one costs no argon2 either', async () => {
    const big = await login(ADMIN.email, 'x'.repeat(1024 * 1024));
    expect(big.status).toBe(413);
    const started = Date.now();
    const long = await login(uniqueEmail(), 'Aa1!'.repeat(250));
    expect(long.status).toBe(401);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('internal services: the identity client validates, introspects and lists keys', async () => {
    const { createIdentityClient, IdentityClientError } = await import('@iam/identity-client');
    const client = createIdentityClient({ target: `127.0.0.1:${sys.identity.grpcPort}` });
    const u = await newUser({ roles: ['Administrator'] });
    const s = (await login(u.email, u.password)).json;
    await expect(client.validateToken(s.token)).resolves.toMatchObject({ sub: u.id, email: u.email, roles: ['Administrator'] });
    await expect(client.introspect('garbage')).resolves.toEqual({ active: false });
    expect((await client.getJwks()).map((k) => k.kid)).toContain(JSON.parse(Buffer.from(s.token.split('.')[0], 'base64url').toString()).kid);
    expect((await call('POST', '/api/v1/auth/revoke', { token: s.token })).status).toBe(204);
    const err = await client.validateToken(s.token).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IdentityClientError);
    expect((err as InstanceType<typeof IdentityClientError>).code).toBe('UNAUTHENTICATED');
    await expect(client.introspect(s.token)).resolves.toEqual({ active: false });
    client.close();
  });

  it('JWKS: public keys only, with kid, alg and use: one of each algorithm (EdDSA signs access tokens, RS256 ID tokens by default)', async () => {
    const r = await call('GET', '/.well-known/jwks.json');
    expect(r.status).toBe(200);
    expect(r.json.keys.map((k: { alg: string }) => k.alg).sort()).toEqual(['ES256', 'EdDSA', 'RS256']);
    const kty = { EdDSA: 'OKP', ES256: 'EC', RS256: 'RSA' } as Record<string, string>;
    for (const k of r.json.keys) {
      expect(k).toMatchObject({ kid: expect.any(String), kty: kty[k.alg as string], alg: expect.any(String), use: 'sig' });
      expect(k.d).toBeUndefined();
    }
    // The access token's kid names the EdDSA key.
    const { kid } = JSON.parse(Buffer.from((await login(ADMIN.email, ADMIN.password)).json.token.split('.')[0], 'base64url').toString('utf8')) as { kid: string };
    expect(r.json.keys.find((k: { kid: string }) => k.kid === kid)).toMatchObject({ alg: 'EdDSA', crv: 'Ed25519' });
  });
});

describe('refresh grace period, opted in (AUTH_REFRESH_REUSE_GRACE_SECONDS=10, end to end)', () => {
  let grace: TestSystem;
  const refresh = (refreshToken: string) => http(grace.url(), 'POST', '/api/v1/auth/refresh', { body: { refreshToken } });
  const login = (email: string, password: string) => http(grace.url(), 'POST', '/api/v1/auth/generate-jwt', { body: { email, password } });
  async function newUser() {
    const admin = (await login(ADMIN.email, ADMIN.password)).json.token as string;
    const u = { email: uniqueEmail(), password: strongPassword() };
    expect((await http(grace.url(), 'POST', '/api/v1/users', { token: admin, body: { firstName: 'Ada', lastName: 'Lovelace', ...u } })).status).toBe(201);
    return u;
  }

  beforeAll(async () => {
    grace = await startTestSystem({ env: { AUTH_REFRESH_REUSE_GRACE_SECONDS: '10' } });
  });

  afterAll(async () => {
    await grace?.stop();
  });

  it('a retry of a refresh whose answer was lost (within the opt-in AUTH_REFRESH_REUSE_GRACE_SECONDS): a fresh successor, the family stays valid', async () => {
    const u = await newUser();
    const s = (await login(u.email, u.password)).json;
    const lost = await refresh(s.refreshToken);
    expect(lost.status).toBe(200);
    const retried = await refresh(s.refreshToken);
    expect(retried.status).toBe(200);
    expect(retried.json.refreshToken).not.toBe(lost.json.refreshToken);
    // The answer the client never saw is spent; the retry's token goes on.
    expect((await refresh(retried.json.refreshToken)).status).toBe(200);
  });

  it('concurrent refreshes of one token within the grace period: every one answers, the family stays valid', async () => {
    const u = await newUser();
    const s = (await login(u.email, u.password)).json;
    const results = await Promise.all(Array.from({ length: 8 }, () => refresh(s.refreshToken)));
    expect(results.map((r) => r.status)).toEqual(Array.from({ length: 8 }, () => 200));
    const [row] = await grace.identity.dataSource.query<Array<{ live: number; revoked: number }>>(
      `SELECT count(*) FILTER (WHERE rotated_at IS NULL AND revoked_at IS NULL)::int AS live, count(*) FILTER (WHERE revoked_at IS NOT NULL)::int AS revoked
         FROM refresh_tokens WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = sha256($1::bytea))`,
      [Buffer.from(s.refreshToken)],
    );
    expect(row).toEqual({ live: 1, revoked: 0 });
  });

});

describe('rate limits (end to end)', () => {
  let sys: TestSystem;

  beforeAll(async () => {
    sys = await startTestSystem({ env: { RATE_LIMIT_LOGIN_PER_MINUTE: '60', RATE_LIMIT_LOGIN_BURST: '3' } });
  });

  afterAll(async () => {
    await sys?.stop();
  });

  it('login beyond the burst → 429 problem+json with Retry-After, without touching credentials', async () => {
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await http(sys.url(), 'POST', '/api/v1/auth/generate-jwt', { body: { email: uniqueEmail(), password: 'x' } }));
    expect(results.slice(0, 3).map((r) => r.status)).toEqual([401, 401, 401]);
    const limited = results[4]!;
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });
});
