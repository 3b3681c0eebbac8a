/**
 * identity's security counters (issue #44 item 8) over the real PostgreSQL: sign-in outcomes,
 * lockouts and refresh-token reuse counted from the events the login and refresh use cases commit,
 * nothing for a transaction that rolled back, and no label naming a user, an email or an address.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { event } from '@iam/platform';
import { type MigratedDatabase, migratedTestDatabase, testLogger } from '@iam/platform/testing';
import { Registry } from 'prom-client';
import { password, testSignIn } from '../testing/sign-in';
import { type AuthUseCases, createAuthUseCases } from '../app/auth';
import type { Principal } from '../domain/model';
import type { Directory } from '../domain/ports';
import { KeyRing } from './key-ring';
import { entities, migrations } from './schema';
import { type SecurityMetrics, createSecurityMetrics, grantLabel, meteredUnitOfWork } from './security-metrics';
import { pgIdentityStores, pgUnitOfWork } from './stores';
import { JwtTokenService } from './token-service';

describe('security metrics', () => {
  let db: MigratedDatabase;
  let keys: KeyRing;
  let registry: Registry;
  let metrics: SecurityMetrics;
  let auth: AuthUseCases;
  const logger = testLogger();
  const user: Principal = { userId: randomUUID(), firstName: 'M', lastName: 'T', email: `metrics-${randomUUID()}@example.com`, roles: [], permissions: [], emailVerified: true };
  const directory: Directory = {
    verifyCredentials: async (email, password) => ({ principal: email === user.email && password === 'right' ? user : null, accountExists: email === user.email, accountId: email === user.email ? user.userId : undefined }),
    principal: async (id) => (id === user.userId ? user : null),
    findAccount: () => Promise.reject(new Error('not used')),
    resetPassword: () => Promise.reject(new Error('not used')),
    markEmailVerified: () => Promise.reject(new Error('not used')),
    changeRequiredPassword: () => Promise.reject(new Error('not used')),
    resolveRoles: () => Promise.reject(new Error('not used')),
    resolvePermissions: () => Promise.reject(new Error('not used')),
  };
  /** A REST login through the sign-in flow (its transactions metered). */
  const login = (email: string, pw: string) =>
    testSignIn({ uow: meteredUnitOfWork(pgUnitOfWork(db.ds), metrics), stores: pgIdentityStores(db.ds.manager), directory, logger, auth, maxFailedAttempts: 3 }).rest.start(password(email, pw));
  const value = async (name: string, labels: Record<string, string> = {}) =>
    (await registry.getSingleMetric(name)!.get()).values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value ?? 0;

  beforeAll(async () => {
    db = await migratedTestDatabase('identity_security_metrics', { entities, migrations });
    keys = new KeyRing({ dataSource: db.ds, alg: 'EdDSA', keyEncryptionKey: randomBytes(32), rotationHours: 720, tokenLifetimeSeconds: 300, logger });
    await keys.start();
    registry = new Registry();
    metrics = createSecurityMetrics(registry);
    auth = createAuthUseCases({
      settings: { maxFailedAttempts: 3, lockoutMinutes: 15, refreshExpirySeconds: 3_600, refreshReuseGraceSeconds: 0, accessExpirySeconds: 300 },
      uow: meteredUnitOfWork(pgUnitOfWork(db.ds), metrics),
      stores: pgIdentityStores(db.ds.manager),
      directory,
      tokens: new JwtTokenService(keys, { tokenLifetimeSeconds: 300, issuer: 'iam', audience: 'iam-api' }),
      logger,
    });
  });

  afterAll(async () => {
    keys?.stop();
    await db?.close();
  });

  it('counts sign-ins by outcome, the lockout, refusals of a locked account and refresh reuse, from what committed', async () => {
    const first = await login(user.email, 'right');
    expect(await value('identity_sign_ins_total', { outcome: 'succeeded' })).toBe(1);
    for (let i = 0; i < 3; i++) await login(user.email, 'wrong').catch(() => undefined);
    expect(await value('identity_sign_ins_total', { outcome: 'failed' })).toBe(3);
    expect(await value('identity_account_lockouts_total')).toBe(1);
    await login(user.email, 'right').catch(() => undefined);
    expect(await value('identity_sign_ins_total', { outcome: 'refused_locked' })).toBe(1);
    // An unknown email fails the same way, and is counted as one failure (no account named).
    await login(`nobody-${randomUUID()}@example.com`, 'x').catch(() => undefined);
    expect(await value('identity_sign_ins_total', { outcome: 'failed' })).toBe(4);
    // Reuse of a rotated refresh token (no grace): the family is revoked, and counted once.
    const rotated = first.tokens!.refreshToken;
    await auth.refresh(rotated);
    await auth.refresh(rotated).catch(() => undefined);
    expect(await value('identity_refresh_token_reuse_total', { source: 'rest' })).toBe(1);
  });

  it('a transaction that rolled back counts nothing', async () => {
    const uow = meteredUnitOfWork(pgUnitOfWork(db.ds), metrics);
    const before = await value('identity_sign_ins_total', { outcome: 'succeeded' });
    await expect(
      uow.run(async (tx) => {
        await tx.publish([event(SUBJECTS.loginSucceeded, { userId: user.userId, failures: 0, reason: '' })]);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await value('identity_sign_ins_total', { outcome: 'succeeded' })).toBe(before);
    await uow.run((tx) => tx.publish([event(SUBJECTS.mfaFailed, { userId: user.userId, factor: 'totp', failures: 1, reason: '', recoveryCodesLeft: 0, credential: '', name: '' })]));
    expect(await value('identity_second_factor_checks_total', { factor: 'totp', outcome: 'failed' })).toBe(1);
  });

  it('no series names a user, an email or an address; grant types are a bounded set', async () => {
    metrics.tokenGrants.inc({ grant_type: grantLabel('authorization_code') });
    metrics.tokenGrants.inc({ grant_type: grantLabel('urn:example:made-up') });
    const text = await registry.metrics();
    expect(text).not.toContain(user.userId);
    expect(text).not.toContain(user.email);
    expect(text).not.toMatch(/\d+\.\d+\.\d+\.\d+/);
    expect(text).toContain('identity_token_grants_total{grant_type="authorization_code"} 1');
    expect(text).toContain('identity_token_grants_total{grant_type="other"} 1');
    // Built again on the same registry (a restart in the same process): the same counters.
    expect(createSecurityMetrics(registry).signIns).toBe(metrics.signIns);
  });
});
