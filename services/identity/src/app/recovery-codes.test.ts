/**
 * Recovery codes against the real PostgreSQL (issue #34 item 6): new codes carry at least 112
 * bits and are stored as HMAC-SHA-256 under identity's key (not the SHA-256 of "<user id>:<code>"
 * a database copy could test offline); codes stored before (50-bit, plain SHA-256) get the scheme
 * 'sha256' from the migration, are re-keyed once at start (HMAC of the old digest, 'hmac-legacy';
 * again is a no-op) and still sign in, once; a used code is refused.
 */
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { type AccessClaims, createDataSource, migrate } from '@iam/platform';
import { type TestDatabase, createTestDatabase, testLogger } from '@iam/platform/testing';
import type { DataSource } from 'typeorm';
import type { Principal } from '../domain/model';
import type { Directory } from '../domain/ports';
import { entities, migrations } from '../infra/schema';
import { RecoveryCodeSchemes1765400000300 } from '../infra/migrations/1765400000300-recovery-code-schemes';
import { pgIdentityStores, pgUnitOfWork } from '../infra/stores';
import { createAccountAccess } from './account-access';
import { createMyFactorUseCases } from './my-factors';
import { RECOVERY_ALPHABET, rekeyLegacyRecoveryCodes } from './recovery-codes';
import { createSecondFactorUseCases } from './second-factor';
import { newFlowState } from './signin/state';
import { password, testSignIn } from '../testing/sign-in';
import { SealingKeys } from '../domain/sealing';
import { createTotpSecrets } from './totp-secrets';

const sha256hex = (s: string) => createHash('sha256').update(s).digest('hex');

describe('recovery codes: 112-bit codes, keyed digests, legacy rows re-keyed', () => {
  const logger = testLogger();
  const key = randomBytes(32);
  let db: TestDatabase;
  let ds: DataSource;
  const users = new Map<string, Principal>();
  const directory: Directory = {
    verifyCredentials: async (email, pw) => {
      const p = [...users.values()].find((u) => u.email === email);
      return { principal: p && pw === 'right' ? p : null, accountExists: p !== undefined, accountId: p?.userId };
    },
    principal: async (userId) => users.get(userId) ?? null,
    findAccount: () => Promise.reject(new Error('not used')),
    resetPassword: () => Promise.reject(new Error('not used')),
    markEmailVerified: () => Promise.reject(new Error('not used')),
    changeRequiredPassword: () => Promise.reject(new Error('not used')),
    resolveRoles: () => Promise.reject(new Error('not used')),
    resolvePermissions: () => Promise.reject(new Error('not used')),
  };
  /** Users with an active authenticator app (recovery codes back a factor up), made before the migration too. */
  const legacyUser = { userId: randomUUID(), firstName: 'L', lastName: 'G', email: `legacy-${randomUUID()}@example.com`, roles: [], permissions: [], emailVerified: true };
  const legacyCodes = ['ABCDE-FGHJK', 'MNPQR-STUVW', 'XYZ23-45678'];
  const withApp = async (p: Principal) => {
    users.set(p.userId, p);
    await ds.query('INSERT INTO mfa_totp (user_id, sealed_secret, activated_at) VALUES ($1, $2, now()) ON CONFLICT DO NOTHING', [p.userId, randomBytes(40)]);
  };

  beforeAll(async () => {
    db = await createTestDatabase('recovery_codes');
    // The schema as it was before the scheme column, holding codes stored the old way.
    const before = createDataSource({ url: db.url, name: 'identity', entities, migrations: migrations.slice(0, migrations.indexOf(RecoveryCodeSchemes1765400000300)), logger });
    await before.initialize();
    await migrate(before, 'identity', logger);
    for (const c of legacyCodes) {
      await before.query('INSERT INTO mfa_recovery_codes (id, user_id, code_hash) VALUES ($1, $2, $3)', [randomUUID(), legacyUser.userId, createHash('sha256').update(`${legacyUser.userId}:${c.replace('-', '')}`).digest()]);
    }
    await before.destroy();
    ds = createDataSource({ url: db.url, name: 'identity', entities, migrations, logger });
    await ds.initialize();
    await migrate(ds, 'identity', logger);
    await withApp(legacyUser);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  const useCases = (recoveryKey = key) => {
    const uow = pgUnitOfWork(ds);
    const stores = pgIdentityStores(ds.manager);
    const secondFactor = createSecondFactorUseCases({ uow, stores });
    const { flow } = testSignIn({ uow, stores, directory, logger, auth: { startSession: () => Promise.reject(new Error('not used')) }, recoveryKey, maxFailedAttempts: 50 });
    const myFactors = createMyFactorUseCases({
      access: createAccountAccess({ clients: { find: async () => null } }),
      totp: createTotpSecrets({ totpKeys: new SealingKeys(randomBytes(32)), issuer: 'IAM', stores, directory }),
      recoveryKey,
      passkeys: { registrationOptions: () => Promise.reject(new Error('not used')), register: () => Promise.reject(new Error('not used')), list: async () => [], rename: () => Promise.reject(new Error('not used')), remove: () => Promise.reject(new Error('not used')) },
      uow,
      stores,
      directory,
    });
    return { uow, secondFactor, myFactors, flow };
  };

  /** Answers a fresh mfa token of `p` with `code`: whether it signed in. */
  const signsIn = async (p: Principal, code: string, recoveryKey = key): Promise<boolean> => {
    const { flow } = useCases(recoveryKey);
    const c = await flow.firstFactor(newFlowState(), password(p.email, 'right'));
    return flow.secondFactor(c.challenge!.mfaToken, { method: 'recovery_code', code }).then(
      () => true,
      () => false,
    );
  };

  it('the migration marks the codes stored before as sha256; at start they are re-keyed once (HMAC of the old digest) and still sign in, once', async () => {
    const rows = async () => ds.query<Array<{ code_hash: Buffer; scheme: string }>>('SELECT code_hash, scheme FROM mfa_recovery_codes WHERE user_id = $1 ORDER BY created_at, id', [legacyUser.userId]);
    const old = await rows();
    expect(old.map((r) => r.scheme)).toEqual(['sha256', 'sha256', 'sha256']);
    const oldDigests = new Set(old.map((r) => r.code_hash.toString('hex')));

    const { uow } = useCases();
    expect(await rekeyLegacyRecoveryCodes(uow, key, 2)).toBe(3);
    expect(await rekeyLegacyRecoveryCodes(uow, key)).toBe(0);
    const now = await rows();
    expect(now.map((r) => r.scheme)).toEqual(['hmac-legacy', 'hmac-legacy', 'hmac-legacy']);
    // No unkeyed digest is left; each row is the HMAC of what it was.
    expect(now.filter((r) => oldDigests.has(r.code_hash.toString('hex')))).toEqual([]);
    const expected = new Set([...oldDigests].map((h) => createHmac('sha256', key).update(Buffer.from(h, 'hex')).digest('hex')));
    expect(new Set(now.map((r) => r.code_hash.toString('hex')))).toEqual(expected);

    // A legacy code still signs in (any case, spaces for the dash), once.
    expect(await signsIn(legacyUser, 'abcde fghjk')).toBe(true);
    expect(await signsIn(legacyUser, 'ABCDE-FGHJK')).toBe(false);
    expect(await signsIn(legacyUser, 'MNPQRSTUVW')).toBe(true);
    // Under another key (a database copy moved elsewhere) a right code verifies nothing.
    expect(await signsIn(legacyUser, 'XYZ23-45678', randomBytes(32))).toBe(false);
    expect(await signsIn(legacyUser, 'XYZ23-45678')).toBe(true);
  });

  it('new codes: 24 characters of the 32-letter alphabet (120 bits), stored as HMAC under the key, never as SHA-256 of "<user id>:<code>"; single use', async () => {
    const p = { userId: randomUUID(), firstName: 'N', lastName: 'W', email: `new-${randomUUID()}@example.com`, roles: [], permissions: [], emailVerified: true };
    await withApp(p);
    const now = Math.floor(Date.now() / 1000);
    const claims: AccessClaims = { sub: p.userId, authTime: now, jti: randomUUID(), iss: 'iam', aud: ['iam-api'], iat: now, nbf: now, exp: now + 300, email: p.email, roles: [], permissions: [] };
    const codes = await useCases().myFactors.newRecoveryCodes(claims);
    expect(codes).toHaveLength(10);
    for (const c of codes) {
      const plain = c.replace(/-/g, '');
      expect([...plain].every((ch) => RECOVERY_ALPHABET.includes(ch))).toBe(true);
      expect(plain.length * Math.log2(RECOVERY_ALPHABET.length)).toBeGreaterThanOrEqual(112);
    }
    const rows = await ds.query<Array<{ code_hash: Buffer; scheme: string }>>('SELECT code_hash, scheme FROM mfa_recovery_codes WHERE user_id = $1', [p.userId]);
    const stored = new Set(rows.map((r) => r.code_hash.toString('hex')));
    expect(rows.map((r) => r.scheme)).toEqual(Array(10).fill('hmac'));
    for (const c of codes) {
      const plain = c.replace(/-/g, '');
      expect(stored.has(sha256hex(`${p.userId}:${plain}`))).toBe(false);
      expect(stored.has(createHmac('sha256', key).update(`${p.userId}:${plain}`).digest('hex'))).toBe(true);
    }
    expect(await signsIn(p, codes[0]!.toLowerCase())).toBe(true);
    expect(await signsIn(p, codes[0]!)).toBe(false);
    // Another user's code is not this user's.
    expect(await signsIn(legacyUser, codes[1]!)).toBe(false);
  });
});
