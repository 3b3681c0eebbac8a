import { type JwtAlg, createDataSource, migrate, open } from '@iam/platform';
import { createTestDatabase, testLogger, type TestDatabase } from '@iam/platform/testing';
import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { KeyRing } from './key-ring';
import { entities, migrations } from './schema';
import { pgIdentityStores } from './stores';
import { JwtTokenService } from './token-service';

describe('identity persistence', () => {
  let db: TestDatabase;
  let ds: DataSource;
  const logger = testLogger();
  const kek = randomBytes(32);

  beforeAll(async () => {
    db = await createTestDatabase('identity');
    ds = createDataSource({ url: db.url, name: 'identity', entities, migrations, logger });
    await ds.initialize();
    await migrate(ds, 'identity', logger);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  /** A key ring, and the tokens made over it. */
  const keys = (rotationHours = 720, alg: JwtAlg = 'EdDSA', keyEncryptionKey = kek) => {
    const ring = new KeyRing({ dataSource: ds, alg, keyEncryptionKey, rotationHours, tokenLifetimeSeconds: 300, logger });
    return { ring, tokens: new JwtTokenService(ring, { tokenLifetimeSeconds: 300, issuer: 'iam', audience: 'iam-api' }) };
  };

  it('a migrated empty database matches the entities', async () => {
    const log = await ds.driver.createSchemaBuilder().log();
    expect(log.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('signing keys: created once per algorithm, private half sealed at rest, tokens verify, JWKS public only', async () => {
    const a = keys();
    const b = keys();
    await Promise.all([a.ring.rotateIfDue(), b.ring.rotateIfDue()]);
    const rows = await ds.query<Array<{ kid: string; alg: string; private_key: Buffer; public_jwk: Record<string, unknown> }>>('SELECT kid, alg, private_key, public_jwk FROM signing_keys');
    expect(rows.map((r) => r.alg).sort()).toEqual(['ES256', 'EdDSA', 'RS256']);
    for (const row of rows) {
      expect(row.private_key.toString('latin1')).not.toContain('"d"');
      expect(JSON.parse(open(kek, row.private_key, row.kid).toString()).d).toEqual(expect.any(String));
      expect(row.public_jwk.d).toBeUndefined();
    }
    const { token } = await a.tokens.issue({ userId: '7c2b5d1e-0000-4000-8000-000000000001', firstName: 'A', lastName: 'B', email: 'a@b.cd', roles: ['r'], permissions: ['p'], emailVerified: false });
    await expect(b.tokens.verify(token)).resolves.toMatchObject({ sub: '7c2b5d1e-0000-4000-8000-000000000001', roles: ['r'], permissions: ['p'], aud: ['iam-api'] });
    expect((await b.ring.jwks()).every((k) => !('d' in k))).toBe(true);
  });

  it('rotation: the successor is published an hour before it signs; the old key stays until its tokens expire', async () => {
    await ds.query('DELETE FROM signing_keys');
    const { ring: m } = keys(2);
    await m.rotateIfDue();
    const [first] = await ds.query<Array<{ kid: string; retires_at: Date; expires_at: Date }>>("SELECT kid, retires_at, expires_at FROM signing_keys WHERE alg = 'EdDSA'");
    const later = new Date(first!.retires_at.getTime() - 30 * 60_000);
    await m.rotateIfDue(later);
    const all = await ds.query<Array<{
      kid: string;
      activates_at: Date;
      retires_at: Date;
      expires_at: Date;
    }>>("SELECT kid, activates_at, retires_at, expires_at FROM signing_keys WHERE alg = 'EdDSA' ORDER BY activates_at");
    expect(all).toHaveLength(2);
    expect(all[1]!.activates_at.getTime()).toBe(first!.retires_at.getTime());
    expect(first!.expires_at.getTime()).toBeGreaterThan(first!.retires_at.getTime() + 300_000);
    expect((await m.jwks()).filter((k) => k.alg === 'EdDSA').map((k) => k.kid).sort()).toEqual(all.map((k) => k.kid).sort());
  });

  it('a key sealed with another key-encryption key is kept for verification only and a new one is made', async () => {
    await ds.query('DELETE FROM signing_keys');
    await keys().ring.rotateIfDue();
    await keys(720, 'EdDSA', randomBytes(32)).ring.rotateIfDue();
    expect(await ds.query<unknown[]>('SELECT kid FROM signing_keys')).toHaveLength(6);
  });

  it.each(['ES256', 'RS256'] as const)('JWT_ALG=%s: keys of that type, tokens signed and verified with it', async (alg) => {
    await ds.query('DELETE FROM signing_keys');
    const m = keys(720, alg);
    await m.ring.rotateIfDue();
    const { token } = await m.tokens.issue({ userId: '7c2b5d1e-0000-4000-8000-000000000002', firstName: 'A', lastName: 'B', email: 'a@b.cd', roles: [], permissions: [], emailVerified: true });
    expect(JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).alg).toBe(alg);
    await expect(m.tokens.verify(token)).resolves.toMatchObject({ sub: '7c2b5d1e-0000-4000-8000-000000000002' });
    const { kid } = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { kid: string };
    expect((await m.ring.jwks()).find((k) => k.kid === kid)).toMatchObject({ alg, kty: alg === 'ES256' ? 'EC' : 'RSA', use: 'sig' });
    const other = keys(720, alg === 'ES256' ? 'RS256' : 'ES256');
    await expect(other.tokens.verify(token)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('lockout reservations are exact under concurrency: at most max allowed, then locked', async () => {
    const stores = pgIdentityStores(ds.manager);
    const key = randomBytes(32);
    const results = await Promise.all(Array.from({ length: 25 }, () => stores.lockouts.reserve(key, 10, 15)));
    expect(results.filter((r) => r.allowed).map((r) => r.count).sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    expect(results.filter((r) => !r.allowed)).toHaveLength(15);
    await expect(stores.lockouts.reserve(key, 10, 15)).resolves.toEqual({ allowed: false, count: 10 });
    // An expired lock starts the count again.
    await ds.query(`UPDATE login_failures SET locked_until = now() - interval '1 second' WHERE email_hash = $1`, [key]);
    await expect(stores.lockouts.reserve(key, 10, 15)).resolves.toEqual({ allowed: true, count: 1 });
    // Released reservations (no account) do not count, and undo a lock they caused.
    const other = randomBytes(32);
    const held = await Promise.all(Array.from({ length: 3 }, () => stores.lockouts.reserve(other, 3, 15)));
    expect(held.every((r) => r.allowed)).toBe(true);
    expect((await stores.lockouts.reserve(other, 3, 15)).allowed).toBe(false);
    for (let i = 0; i < 3; i++) await stores.lockouts.release(other, 3);
    await expect(stores.lockouts.reserve(other, 3, 15)).resolves.toEqual({ allowed: true, count: 1 });
  });

  it('refresh rotation: of concurrent claims of one token exactly one wins; the successor is in the family with its expiry', async () => {
    const stores = pgIdentityStores(ds.manager);
    const user = '7c2b5d1e-0000-4000-8000-0000000000bb';
    const first = randomBytes(32);
    const expiresAt = new Date(Date.now() + 3_600_000);
    const familyId = randomUUID();
    await stores.refreshTokens.startFamily({ id: randomUUID(), familyId, userId: user, tokenHash: first, expiresAt }, randomBytes(32));
    await stores.subjects.revoke(user, new Date(Date.now() - 1_000), expiresAt);
    // Several rounds: the named statement runs on several pool connections, planned once on each.
    const pool = (ds.driver as unknown as { master: { query: (...args: unknown[]) => unknown } }).master;
    const names: unknown[] = [];
    const query = pool.query;
    pool.query = function (this: unknown, ...args: unknown[]) {
      names.push((args[0] as { name?: string }).name);
      return query.apply(this, args);
    };
    let current = first;
    for (let round = 0; round < 8; round++) {
      const nexts = Array.from({ length: 6 }, () => ({ id: randomUUID(), tokenHash: randomBytes(32) }));
      const results = await Promise.all(nexts.map((n) => stores.refreshTokens.rotate(current, n, 0)));
      const winners = results.map((r, i) => (r ? i : -1)).filter((i) => i >= 0);
      expect(winners).toHaveLength(1);
      const won = results[winners[0]!]!;
      expect(won).toMatchObject({ familyId, userId: user, subjectNotBefore: expect.any(Date) });
      expect(won.expiresAt.getTime()).toBe(expiresAt.getTime());
      await expect(stores.refreshTokens.rotate(current, { id: randomUUID(), tokenHash: randomBytes(32) }, 0)).resolves.toBeNull();
      await expect(stores.refreshTokens.findByHash(current)).resolves.toMatchObject({ rotatedAt: expect.any(Date), revokedAt: null });
      current = nexts[winners[0]!]!.tokenHash;
    }
    pool.query = query;
    expect(names.filter((n) => n !== 'identity.refresh.find')).toEqual(Array.from({ length: 8 * 7 }, () => 'identity.refresh.rotate'));
    const [count] = await ds.query<Array<{ n: number }>>('SELECT count(*)::int AS n FROM refresh_tokens WHERE family_id = $1', [familyId]);
    expect(count?.n).toBe(9);
    // A revoked family's live token, and an expired one, are not claimed (in a transaction too).
    await stores.refreshTokens.revokeFamily(familyId);
    await expect(stores.refreshTokens.rotate(current, { id: randomUUID(), tokenHash: randomBytes(32) }, 0)).resolves.toBeNull();
    const old = randomBytes(32);
    await stores.refreshTokens.startFamily({ id: randomUUID(), familyId: randomUUID(), userId: user, tokenHash: old, expiresAt: new Date(Date.now() - 1_000) }, randomBytes(32));
    await expect(ds.transaction((m) => pgIdentityStores(m).refreshTokens.rotate(old, { id: randomUUID(), tokenHash: randomBytes(32) }, 0))).resolves.toBeNull();
    const live = randomBytes(32);
    await stores.refreshTokens.startFamily({ id: randomUUID(), familyId: randomUUID(), userId: user, tokenHash: live, expiresAt }, randomBytes(32));
    await expect(ds.transaction((m) => pgIdentityStores(m).refreshTokens.rotate(live, { id: randomUUID(), tokenHash: randomBytes(32) }, 0))).resolves.toMatchObject({ userId: user });
  });


  it('subject revocations keep the later time', async () => {
    const stores = pgIdentityStores(ds.manager);
    const user = '7c2b5d1e-0000-4000-8000-0000000000aa';
    const t1 = new Date(Date.now() - 5_000);
    const t2 = new Date();
    await stores.subjects.revoke(user, t2, new Date(t2.getTime() + 60_000));
    const r = await stores.subjects.revoke(user, t1, new Date(t1.getTime() + 60_000));
    expect(r.notBefore.getTime()).toBe(t2.getTime());
    await expect(stores.subjects.notBefore(user)).resolves.toEqual(t2);
    expect((await stores.subjects.active()).some((s) => s.userId === user)).toBe(true);
  });

  it('an email change invalidates the tokens mailed to other addresses, not those mailed to the new one (asked right after the change)', async () => {
    const stores = pgIdentityStores(ds.manager);
    const user = randomUUID();
    const [oldAddress, newAddress] = [randomBytes(32), randomBytes(32)];
    const hour = new Date(Date.now() + 3_600_000);
    const reset = randomBytes(32);
    const verify = randomBytes(32);
    await stores.emailActions.issue({ id: randomUUID(), userId: user, purpose: 'password_reset', tokenHash: reset, emailHash: oldAddress, expiresAt: hour });
    await stores.emailActions.issue({ id: randomUUID(), userId: user, purpose: 'email_verification', tokenHash: verify, emailHash: newAddress, expiresAt: hour });
    await expect(stores.emailActions.invalidateAllOf(user, newAddress)).resolves.toBe(1);
    await expect(stores.emailActions.pending(reset, 'password_reset')).resolves.toBeNull();
    await expect(stores.emailActions.pending(verify, 'email_verification')).resolves.toMatchObject({ userId: user });
    // With no address to keep: every pending token.
    await expect(stores.emailActions.invalidateAllOf(user)).resolves.toBe(1);
    await expect(stores.emailActions.pending(verify, 'email_verification')).resolves.toBeNull();
  });
});
