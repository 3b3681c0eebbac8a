/**
 * The flow's `password_change` step (issue #39: users imported with passwordChangeRequired) against
 * the real PostgreSQL: after the factors and before `done`, its own single-use token, which takes
 * a new password only and cannot be skipped or answered twice; a password the directory refuses
 * leaves the token usable.
 */
import { AppError } from '@iam/platform';
import { type MigratedDatabase, migratedTestDatabase, testLogger } from '@iam/platform/testing';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Principal } from '../../domain/model';
import type { Directory } from '../../domain/ports';
import { SealingKeys } from '../../domain/sealing';
import { hotp, totpStep } from '../../domain/totp';
import { base32Decode } from '../../testing/base32';
import { entities, migrations } from '../../infra/schema';
import { pgIdentityStores, pgUnitOfWork } from '../../infra/stores';
import { createTotpSecrets } from '../totp-secrets';
import { type SignInFlow, createSignInFlow } from './flow';
import { newFlowState } from './state';
import { createStrategyRegistry } from './strategy';
import { passwordStrategy } from './strategies/password';
import { totpStrategy } from './strategies/totp';

describe('the sign-in flow: a new password the account must choose', () => {
  let db: MigratedDatabase;
  let flow: SignInFlow;
  const users = new Map<string, Principal>();
  /** Accounts marked passwordChangeRequired, and the passwords they were given. */
  const marked = new Set<string>();
  const changed: Array<{ userId: string; password: string }> = [];
  const totpKeys = new SealingKeys(randomBytes(32));
  const directory: Directory = {
    verifyCredentials: async (email, password) => {
      const p = [...users.values()].find((u) => u.email === email);
      const ok = p !== undefined && password === 'right';
      return { principal: ok ? p : null, accountExists: p !== undefined, accountId: p?.userId, passwordChangeRequired: ok && marked.has(p.userId) };
    },
    principal: async (userId) => users.get(userId) ?? null,
    changeRequiredPassword: async (userId, password) => {
      // As the directory: the policy (here: 12 characters), then the mark, then the change.
      if (password.length < 12) throw AppError.validation('The new password does not meet the password policy.', [{ field: 'newPassword', message: 'too short' }]);
      if (!marked.delete(userId)) throw new AppError('CONFLICT', 'The password was changed already.');
      changed.push({ userId, password });
    },
    findAccount: () => Promise.reject(new Error('not used')),
    resetPassword: () => Promise.reject(new Error('not used')),
    markEmailVerified: () => Promise.reject(new Error('not used')),
    resolveRoles: () => Promise.reject(new Error('not used')),
    resolvePermissions: () => Promise.reject(new Error('not used')),
  };
  const importedUser = (): Principal => {
    const p = { userId: randomUUID(), firstName: 'F', lastName: 'L', email: `imported-${randomUUID()}@example.com`, roles: ['Reader'], permissions: [], emailVerified: true };
    users.set(p.userId, p);
    marked.add(p.userId);
    return p;
  };
  const pwd = (email: string) => ({ method: 'password', email, password: 'right' });

  beforeAll(async () => {
    db = await migratedTestDatabase('signin_password_change', { entities, migrations });
    const stores = pgIdentityStores(db.ds.manager);
    const strategies = createStrategyRegistry([passwordStrategy({ directory }), totpStrategy({ totp: createTotpSecrets({ totpKeys, issuer: 'IAM', stores, directory }), stores, directory })]);
    flow = createSignInFlow({ settings: { maxFailedAttempts: 5, lockoutMinutes: 15, requiredRoles: [] }, uow: pgUnitOfWork(db.ds), stores, strategies, principals: directory, passwords: directory, logger: testLogger() });
  });

  afterAll(async () => {
    await db?.close();
  });

  it('a password alone: the new-password step, not done; a weak password keeps the token; the new one completes once', async () => {
    const u = importedUser();
    const r = await flow.firstFactor(newFlowState(), pwd(u.email));
    expect(r.state).toMatchObject({ step: 'password_change', passwordChangeRequired: true, challenge: { methods: [] } });
    expect(r.challenge).toMatchObject({ methods: [], enrolmentRequired: false, passwordChangeRequired: true });
    const token = r.challenge!.mfaToken;
    // A factor cannot answer it (nothing to skip the step with), nor its options be asked.
    await expect(flow.secondFactor(token, { method: 'totp', code: '123456' })).rejects.toMatchObject({ code: 'CONFLICT', reason: 'identity.method_unavailable' });
    await expect(flow.options('webauthn', { mfaToken: token, stage: 'second' })).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(flow.changePassword(token, 'short')).rejects.toMatchObject({ code: 'VALIDATION' });
    expect(changed.filter((c) => c.userId === u.userId)).toEqual([]);

    const done = await flow.changePassword(token, 'a-new-long-password');
    expect(done).toMatchObject({ state: { step: 'done', userId: u.userId }, principal: { userId: u.userId }, amr: ['pwd'] });
    expect(done.state.passwordChangeRequired).toBeUndefined();
    expect(changed).toContainEqual({ userId: u.userId, password: 'a-new-long-password' });
    // Used up: the same token again is refused by its reason, and changes nothing.
    await expect(flow.changePassword(token, 'another-long-password')).rejects.toMatchObject({ code: 'UNAUTHENTICATED', reason: 'identity.mfa_token_invalid' });
    expect(changed.filter((c) => c.userId === u.userId)).toHaveLength(1);
    // The next sign-in (the mark cleared) is done at once.
    await expect(flow.firstFactor(newFlowState(), pwd(u.email))).resolves.toMatchObject({ state: { step: 'done' } });
  });

  it('an account with an app: the second factor first, then the new password (a new token); the factor token takes no password', async () => {
    const u = importedUser();
    const totp = createTotpSecrets({ totpKeys, issuer: 'IAM', stores: pgIdentityStores(db.ds.manager), directory });
    const secret = base32Decode((await totp.pending(u.userId)).secret);
    await db.ds.query('UPDATE mfa_totp SET activated_at = now() WHERE user_id = $1', [u.userId]);

    const first = await flow.firstFactor(newFlowState({ clientId: 'console' }), pwd(u.email));
    expect(first.state).toMatchObject({ step: 'second_factor', passwordChangeRequired: true });
    await expect(flow.changePassword(first.challenge!.mfaToken, 'a-new-long-password')).rejects.toMatchObject({ code: 'CONFLICT', reason: 'identity.method_unavailable' });

    const second = await flow.secondFactor(first.challenge!.mfaToken, { method: 'totp', code: hotp(secret, totpStep(Date.now())) });
    expect(second.state).toMatchObject({ step: 'password_change', clientId: 'console' });
    expect(second.challenge?.mfaToken).not.toBe(first.challenge!.mfaToken);
    const done = await flow.changePassword(second.challenge!.mfaToken, 'a-new-long-password');
    expect(done).toMatchObject({ state: { step: 'done', clientId: 'console' }, amr: ['pwd', 'otp', 'mfa'] });
  });

  it('a password changed meanwhile (the directory says the mark is gone): the token is spent, nothing changes', async () => {
    const u = importedUser();
    const r = await flow.firstFactor(newFlowState(), pwd(u.email));
    marked.delete(u.userId);
    await expect(flow.changePassword(r.challenge!.mfaToken, 'a-new-long-password')).rejects.toMatchObject({ reason: 'identity.mfa_token_invalid' });
  });
});
