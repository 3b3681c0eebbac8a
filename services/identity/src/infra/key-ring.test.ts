/**
 * The key ring with one key per algorithm (RS256 for ID tokens, JWT_ALG for access tokens, ES256
 * and EdDSA for clients that ask), against the real PostgreSQL, with the time given to the ring
 * (no sleeps): every algorithm rotates by the same rules, the provider's key store puts each
 * algorithm's signing key first, and a ring of before (one algorithm) carries over.
 */
import { createDataSource, migrate, seal } from '@iam/platform';
import { type TestDatabase, createTestDatabase, testLogger } from '@iam/platform/testing';
import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { KeyRing, generateSigningKey, offeredAlgorithms } from './key-ring';
import { entities, migrations } from './schema';
import { JwtTokenService } from './token-service';

const HOUR = 3_600_000;
const principal = { userId: '7c2b5d1e-0000-4000-8000-0000000000c1', firstName: 'A', lastName: 'B', email: 'a@b.cd', roles: [], permissions: [], emailVerified: true };

describe('key ring: a signing key per algorithm', () => {
  let db: TestDatabase;
  let ds: DataSource;
  const logger = testLogger();
  const kek = randomBytes(32);
  const ring = (rotationHours = 2, alg: 'EdDSA' | 'ES256' | 'RS256' = 'EdDSA') =>
    new KeyRing({ dataSource: ds, alg, keyEncryptionKey: kek, rotationHours, tokenLifetimeSeconds: 3_600, logger });
  type Row = { kid: string; alg: string; activates_at: Date; retires_at: Date; expires_at: Date };
  const rows = () => ds.query<Row[]>('SELECT kid, alg, activates_at, retires_at, expires_at FROM signing_keys ORDER BY alg, activates_at');

  beforeAll(async () => {
    db = await createTestDatabase('identity_key_ring');
    ds = createDataSource({ url: db.url, name: 'identity', entities, migrations, logger });
    await ds.initialize();
    await migrate(ds, 'identity', logger);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  beforeEach(async () => {
    await ds.query('DELETE FROM signing_keys');
  });

  it('offers RS256 first (the ID tokens’ default), then JWT_ALG, then the rest', () => {
    expect(offeredAlgorithms('EdDSA')).toEqual(['RS256', 'EdDSA', 'ES256']);
    expect(offeredAlgorithms('RS256')).toEqual(['RS256', 'EdDSA', 'ES256']);
    expect(offeredAlgorithms('ES256')).toEqual(['RS256', 'ES256', 'EdDSA']);
  });

  it('every algorithm gets a key; the JWKS lists each with its alg and use; the provider gets each signing key first', async () => {
    const m = ring();
    await m.start();
    m.stop();
    await expect(m.check()).resolves.toBeUndefined();
    const jwks = await m.jwks();
    expect(jwks.map((k) => k.alg).sort()).toEqual(['ES256', 'EdDSA', 'RS256']);
    for (const k of jwks) expect(k).toMatchObject({ kid: expect.any(String), use: 'sig', kty: k.alg === 'RS256' ? 'RSA' : k.alg === 'ES256' ? 'EC' : 'OKP' });
    const { keys } = await m.privateJwks();
    expect(keys.map((k) => k.alg).sort()).toEqual(['ES256', 'EdDSA', 'RS256']);
    expect(keys.every((k) => typeof k.d === 'string' && k.use === 'sig')).toBe(true);
    // Access tokens: JWT_ALG's key only.
    const { token } = await new JwtTokenService(m, { tokenLifetimeSeconds: 300, issuer: 'iam', audience: 'iam-api' }).issue(principal);
    expect(JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString())).toMatchObject({ alg: 'EdDSA', kid: jwks.find((k) => k.alg === 'EdDSA')!.kid });
    // A key of another algorithm (the RS256 that signs ID tokens) is never an access token's key.
    await expect(m.publicKey(jwks.find((k) => k.alg === 'RS256')!.kid)).resolves.toBeUndefined();
    await expect(m.publicKey(jwks.find((k) => k.alg === 'EdDSA')!.kid)).resolves.toBeDefined();
  });

  it('rotation covers every algorithm: each successor published an hour before it signs, each predecessor kept until its tokens expire', async () => {
    const m = ring(2);
    const t0 = new Date();
    await m.rotateIfDue(t0);
    const first = await rows();
    expect(first.map((r) => r.alg)).toEqual(['ES256', 'EdDSA', 'RS256']);
    const firstKids = first.map((r) => r.kid);
    // Nothing is due an hour and a half before they retire.
    const retires = Math.min(...first.map((r) => r.retires_at.getTime()));
    await m.rotateIfDue(new Date(retires - 90 * 60_000));
    expect(await rows()).toHaveLength(3);
    // Within the hour before: a successor for each, starting when its predecessor retires.
    const before = new Date(retires - 30 * 60_000);
    await m.rotateIfDue(before);
    const all = await rows();
    expect(all).toHaveLength(6);
    for (const alg of ['ES256', 'EdDSA', 'RS256']) {
      const [old, next] = all.filter((r) => r.alg === alg);
      expect(next!.activates_at.getTime()).toBe(old!.retires_at.getTime());
      expect(next!.retires_at.getTime() - next!.activates_at.getTime()).toBe(2 * HOUR);
      // Kept published until the last token it signed (an hour here) has expired, plus skew.
      expect(old!.expires_at.getTime()).toBe(old!.retires_at.getTime() + HOUR + 60_000);
    }
    // Published at once (the JWKS), while the predecessors still sign (the provider's first keys).
    expect((await m.jwks()).map((k) => k.kid).sort()).toEqual(all.map((r) => r.kid).sort());
    const signingBefore = (await m.privateJwks(before)).keys.slice(0, 3).map((k) => k.kid);
    expect(signingBefore.sort()).toEqual([...firstKids].sort());
    expect(m.signingKeyAges(before).map((a) => a.alg).sort()).toEqual(['ES256', 'EdDSA', 'RS256']);
    // Once they retire, every successor signs (age about 0), the predecessors only verify.
    const after = new Date(Math.max(...first.map((r) => r.retires_at.getTime())) + 1_000);
    const store = await m.privateJwks(after);
    const successors = all.filter((r) => !firstKids.includes(r.kid)).map((r) => r.kid);
    expect(store.keys.slice(0, 3).map((k) => k.kid).sort()).toEqual([...successors].sort());
    expect(store.keys.slice(3).map((k) => k.kid).sort()).toEqual([...firstKids].sort());
    for (const age of m.signingKeyAges(after)) expect(age.seconds).toBeLessThan(2 + (after.getTime() - retires) / 1000);
    expect((await m.signingKey(after)).kid).toBe(all.find((r) => r.alg === 'EdDSA' && successors.includes(r.kid))!.kid);
    // Another replica sees the same set: nothing more is made.
    await ring(2).rotateIfDue(before);
    expect(await rows()).toHaveLength(6);
  });

  it('a ring of before (one algorithm, JWT_ALG) carries over: its key signs on, the other algorithms get theirs', async () => {
    // As the single-algorithm ring stored it: an EdDSA key signing for a while yet.
    const old = await generateSigningKey('EdDSA');
    const now = Date.now();
    await ds.query(
      `INSERT INTO signing_keys (kid, alg, public_jwk, private_key, activates_at, retires_at, expires_at) VALUES ($1, 'EdDSA', $2, $3, $4, $5, $6)`,
      [old.kid, JSON.stringify(old.publicJwk), seal(kek, JSON.stringify(old.privateJwk), old.kid), new Date(now - 24 * HOUR), new Date(now + 24 * HOUR), new Date(now + 25 * HOUR)],
    );
    const tokens = (m: KeyRing) => new JwtTokenService(m, { tokenLifetimeSeconds: 300, issuer: 'iam', audience: 'iam-api' });
    const m = ring(720);
    await m.rotateIfDue();
    const all = await rows();
    expect(all.map((r) => r.alg)).toEqual(['ES256', 'EdDSA', 'RS256']);
    expect(all.find((r) => r.alg === 'EdDSA')!.kid).toBe(old.kid);
    const { token } = await tokens(m).issue(principal);
    expect(JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).kid).toBe(old.kid);
    await expect(tokens(ring(720)).verify(token)).resolves.toMatchObject({ sub: principal.userId });
    expect((await m.jwks()).find((k) => k.kid === old.kid)).toMatchObject({ alg: 'EdDSA', use: 'sig' });
  });
});
