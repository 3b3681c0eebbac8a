/**
 * The sign-in flow against the real PostgreSQL: the steps a first factor leads to (the one
 * policy), the state kept in the mfa-token row and read back through its schema, the lockout and
 * audit every factor shares, refusals told apart by reason, and a new strategy plugged in with no
 * change to the flow.
 */
import { SUBJECTS } from '@iam/contracts';
import { AppError, sha256 } from '@iam/platform';
import { type MigratedDatabase, migratedTestDatabase, testLogger } from '@iam/platform/testing';
import { Type } from '@sinclair/typebox';
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
import { emailKey } from './lockout';
import { ACR_MFA } from './policy';
import { newFlowState, readFlowState } from './state';
import { createStrategyRegistry, defineStrategy } from './strategy';
import { passwordStrategy } from './strategies/password';
import { recoveryCodeStrategy } from './strategies/recovery-code';
import { totpStrategy } from './strategies/totp';

describe('the sign-in flow', () => {
  let db: MigratedDatabase;
  let flow: SignInFlow;
  const logger = testLogger();
  const users = new Map<string, Principal>();
  /** Memberships (`userId slug`): the directory's OrganizationAccessService as the gate asks it. */
  const members = new Set<string>();
  const organizations = {
    grant: async (userId: string, o: { id?: string; slug?: string }) =>
      o.slug && members.has(`${userId} ${o.slug}`) ? { organizationId: randomUUID(), organizationSlug: o.slug, roles: [], permissions: [] } : null,
  };
  const totpKeys = new SealingKeys(randomBytes(32));
  const directory: Directory = {
    verifyCredentials: async (email, password) => {
      const p = [...users.values()].find((u) => u.email === email);
      return { principal: p && password === 'right' ? p : null, accountExists: p !== undefined, accountId: p?.userId };
    },
    principal: async (userId) => users.get(userId) ?? null,
    findAccount: () => Promise.reject(new Error('not used')),
    resetPassword: () => Promise.reject(new Error('not used')),
    markEmailVerified: () => Promise.reject(new Error('not used')),
    changeRequiredPassword: () => Promise.reject(new Error('not used')),
    resolveRoles: () => Promise.reject(new Error('not used')),
    resolvePermissions: () => Promise.reject(new Error('not used')),
  };
  const user = (roles: string[] = ['Reader']): Principal => {
    const p = { userId: randomUUID(), firstName: 'F', lastName: 'L', email: `flow-${randomUUID()}@example.com`, roles, permissions: [], emailVerified: true };
    users.set(p.userId, p);
    return p;
  };
  const pwd = (email: string, password = 'right') => ({ method: 'password', email, password });
  const count = async (subject: string) => Number((await db.ds.query<Array<{ n: string }>>('SELECT count(*) AS n FROM outbox_events WHERE subject = $1', [subject]))[0]!.n);
  const failures = async (email: string) =>
    Number((await db.ds.query<Array<{ failed_count: number }>>('SELECT failed_count FROM login_failures WHERE email_hash = $1', [emailKey(email)]))[0]?.failed_count ?? 0);

  /** A further first factor, as an upstream identity provider will be: one module, registered, and the flow unchanged. */
  const upstream = defineStrategy({
    method: 'upstream',
    input: Type.Object({ method: Type.Literal('upstream'), subject: Type.String() }),
    audit: 'upstream',
    first: {
      refusal: { message: 'The sign-in with that provider failed.', reason: 'identity.upstream_refused' },
      subject: async (input) => {
        const p = users.get(input.subject) ?? null;
        return { key: p ? emailKey(p.email) : null, principal: p };
      },
      verify: async (ctx) => (ctx.principal && ctx.key && ctx.evaluate ? { principal: ctx.principal, amr: ['fed'], key: ctx.key } : { principal: null, accountExists: ctx.principal !== null }),
    },
  });

  /** An account with an active authenticator app; its secret. */
  const withApp = async (p: Principal): Promise<Buffer> => {
    const totp = createTotpSecrets({ totpKeys, issuer: 'IAM', stores: pgIdentityStores(db.ds.manager), directory });
    const secret = base32Decode((await totp.pending(p.userId)).secret);
    await db.ds.query('UPDATE mfa_totp SET activated_at = now() WHERE user_id = $1', [p.userId]);
    return secret;
  };
  const code = (secret: Buffer, ahead = 0) => hotp(secret, totpStep(Date.now()) + ahead);

  beforeAll(async () => {
    db = await migratedTestDatabase('signin_flow', { entities, migrations });
    const uow = pgUnitOfWork(db.ds);
    const stores = pgIdentityStores(db.ds.manager);
    const strategies = createStrategyRegistry([
      passwordStrategy({ directory }),
      totpStrategy({ totp: createTotpSecrets({ totpKeys, issuer: 'IAM', stores, directory }), stores, directory }),
      recoveryCodeStrategy({ recoveryKey: randomBytes(32), stores }),
      upstream,
    ]);
    flow = createSignInFlow({ settings: { maxFailedAttempts: 5, lockoutMinutes: 15, requiredRoles: ['Operator'] }, uow, stores, strategies, principals: directory, passwords: directory, organizations, logger });
  });

  afterAll(async () => {
    await db?.close();
  });

  it('a password alone: done, amr pwd, no mfa token; a wrong password and an unknown email are one refusal with one reason', async () => {
    const u = user();
    const r = await flow.firstFactor(newFlowState(), pwd(u.email));
    expect(r).toMatchObject({ state: { step: 'done', userId: u.userId, factors: [{ method: 'password', amr: ['pwd'] }] }, amr: ['pwd'] });
    expect(r.challenge).toBeUndefined();
    const wrong = await flow.firstFactor(newFlowState(), pwd(u.email, 'wrong')).catch((e: unknown) => e);
    const unknown = await flow.firstFactor(newFlowState(), pwd(`nobody-${randomUUID()}@example.com`)).catch((e: unknown) => e);
    expect(wrong).toEqual(unknown);
    expect(wrong).toMatchObject({ code: 'UNAUTHENTICATED', reason: 'identity.invalid_credentials' });
    // The right password's attempt stays counted until the caller completes the sign-in (a REST
    // session, or the provider's), which clears the count; the unknown email counted nothing.
    expect(await failures(u.email)).toBe(2);
    // A method nobody registered, or an input of another shape: the same kind of refusal, never a 500.
    await expect(flow.firstFactor(newFlowState(), { method: 'carrier-pigeon' })).rejects.toMatchObject({ code: 'UNAUTHENTICATED', reason: 'identity.invalid_credentials' });
    await expect(flow.firstFactor(newFlowState(), { method: 'password', email: u.email })).rejects.toMatchObject({ code: 'UNAUTHENTICATED', reason: 'identity.invalid_credentials' });
  });

  it('an account with an app: the second-factor step, its state kept in the mfa-token row (schema-checked); the right code completes with pwd+otp+mfa, once', async () => {
    const u = user();
    const secret = await withApp(u);
    const start = newFlowState({ clientId: 'console' });
    const r = await flow.firstFactor(start, pwd(u.email));
    expect(r.state).toMatchObject({ step: 'second_factor', clientId: 'console', challenge: { methods: ['totp'] } });
    expect(r.challenge).toMatchObject({ methods: ['totp'], enrolmentRequired: false, expiresIn: 300 });
    const [row] = await db.ds.query<Array<{ flow: unknown }>>('SELECT flow FROM mfa_challenges WHERE token_hash = $1', [sha256(r.challenge!.mfaToken)]);
    expect(readFlowState(row!.flow)).toMatchObject({ step: 'second_factor', userId: u.userId, clientId: 'console', factors: [{ method: 'password', amr: ['pwd'] }] });
    expect(readFlowState(row!.flow)?.challenge).toBeUndefined();

    const before = await count(SUBJECTS.mfaVerified);
    const done = await flow.secondFactor(r.challenge!.mfaToken, { method: 'totp', code: code(secret) });
    expect(done).toMatchObject({ state: { step: 'done', clientId: 'console' }, principal: { userId: u.userId }, amr: ['pwd', 'otp', 'mfa'] });
    expect(await count(SUBJECTS.mfaVerified)).toBe(before + 1);
    // A row whose state the schema refuses (tampered) completes nothing; one of before (none) was a password's.
    const tampered = await flow.firstFactor(newFlowState(), pwd(u.email));
    await db.ds.query(`UPDATE mfa_challenges SET flow = jsonb_set(flow, '{step}', '"done"') || '{"admin": true}' WHERE token_hash = $1`, [sha256(tampered.challenge!.mfaToken)]);
    await expect(flow.secondFactor(tampered.challenge!.mfaToken, { method: 'totp', code: code(secret, 1) })).rejects.toMatchObject({ reason: 'identity.mfa_token_invalid' });
    const legacy = await flow.firstFactor(newFlowState(), pwd(u.email));
    await db.ds.query('UPDATE mfa_challenges SET flow = NULL WHERE token_hash = $1', [sha256(legacy.challenge!.mfaToken)]);
    await expect(flow.secondFactor(legacy.challenge!.mfaToken, { method: 'totp', code: code(secret, 1) })).resolves.toMatchObject({ amr: ['pwd', 'otp', 'mfa'] });
    // Used up: told apart by its reason, not its text.
    await expect(flow.secondFactor(r.challenge!.mfaToken, { method: 'totp', code: code(secret, 2) })).rejects.toMatchObject({ code: 'UNAUTHENTICATED', reason: 'identity.mfa_token_invalid' });
  });

  it('a wrong or replayed factor, or one of another kind, is one refusal counted toward the lockout; the fifth locks, then even the right code is refused', async () => {
    const u = user();
    const secret = await withApp(u);
    const { challenge } = await flow.firstFactor(newFlowState(), pwd(u.email));
    const token = challenge!.mfaToken;
    const failed = await count(SUBJECTS.mfaFailed);
    await expect(flow.secondFactor(token, { method: 'totp', code: '000000' === code(secret) ? '111111' : '000000' })).rejects.toMatchObject({ reason: 'identity.invalid_factor' });
    // A recovery code the account does not have, and a strategy with no second stage.
    await expect(flow.secondFactor(token, { method: 'recovery_code', code: 'AAAA-BBBB' })).rejects.toMatchObject({ reason: 'identity.invalid_factor' });
    await expect(flow.secondFactor(token, { method: 'upstream', subject: u.userId })).rejects.toMatchObject({ reason: 'identity.invalid_factor' });
    await expect(flow.secondFactor(token, { method: 'totp', code: 42 })).rejects.toMatchObject({ reason: 'identity.invalid_factor' });
    expect(await count(SUBJECTS.mfaFailed)).toBe(failed + 4);
    expect(await failures(u.email)).toBe(4);
    await expect(flow.secondFactor(token, { method: 'totp', code: 'nope' })).rejects.toBeInstanceOf(AppError);
    await expect(flow.secondFactor(token, { method: 'totp', code: code(secret) })).rejects.toMatchObject({ reason: 'identity.invalid_factor' });
    await expect(flow.firstFactor(newFlowState(), pwd(u.email))).rejects.toMatchObject({ reason: 'identity.invalid_credentials' });
  });

  it('acr_values asking for mfa, or a role in MFA_REQUIRED_ROLES, of an account with no factor: the enrolment step; its code activates the app (mailed) and completes', async () => {
    for (const [roles, acrValues] of [[['Reader'], ACR_MFA], [['Operator'], undefined]] as const) {
      const u = user([...roles]);
      const r = await flow.firstFactor(newFlowState(acrValues ? { acrValues } : {}), pwd(u.email));
      expect(r.state.step).toBe('enrol');
      expect(r.challenge).toMatchObject({ methods: ['totp'], enrolmentRequired: true });
      // Options of the other stage are refused with their reason.
      await expect(flow.options('totp', { mfaToken: r.challenge!.mfaToken, stage: 'second' })).rejects.toMatchObject({ code: 'CONFLICT', reason: 'identity.method_unavailable' });
      const options = await flow.options('totp', { mfaToken: r.challenge!.mfaToken, stage: 'enrol' });
      // Asked again (the page shown again): the same pending secret.
      expect(await flow.options('totp', { mfaToken: r.challenge!.mfaToken, stage: 'enrol' })).toEqual(options);
      const added = await count(SUBJECTS.factorAdded);
      const secret = base32Decode((options as { secret: string }).secret);
      const done = await flow.secondFactor(r.challenge!.mfaToken, { method: 'totp', code: code(secret) });
      expect(done.amr).toEqual(['pwd', 'otp', 'mfa']);
      expect(await count(SUBJECTS.factorAdded)).toBe(added + 1);
    }
  });

  it('a strategy registered by the composition root signs in with no change to the flow (its amr, its refusal and reason, the shared lockout)', async () => {
    const u = user();
    await expect(flow.firstFactor(newFlowState(), { method: 'upstream', subject: u.userId })).resolves.toMatchObject({ state: { step: 'done' }, amr: ['fed'] });
    await expect(flow.firstFactor(newFlowState(), { method: 'upstream', subject: randomUUID() })).rejects.toMatchObject({ code: 'UNAUTHENTICATED', reason: 'identity.upstream_refused' });
    // Its sign-in of a Operator asks the same policy for the second factor.
    const op = user(['Operator']);
    await expect(flow.firstFactor(newFlowState(), { method: 'upstream', subject: op.userId })).resolves.toMatchObject({ state: { step: 'enrol', factors: [{ method: 'upstream', amr: ['fed'] }] } });
  });

  it('reauthenticate: the password checked with the lockout and given back, not a sign-in', async () => {
    const u = user();
    await expect(flow.reauthenticate(pwd(u.email))).resolves.toMatchObject({ userId: u.userId });
    await expect(flow.reauthenticate(pwd(u.email, 'wrong'))).rejects.toMatchObject({ reason: 'identity.invalid_credentials' });
    expect(await failures(u.email)).toBe(1);
  });

  it('a sign-in whose request names an organization: a member goes on; a non-member and an unknown organization get one refusal, the right password given back, before any second factor', async () => {
    const u = user();
    members.add(`${u.userId} acme`);
    await expect(flow.firstFactor(newFlowState({ organization: { slug: 'acme' } }), pwd(u.email))).resolves.toMatchObject({ state: { step: 'done', organization: { slug: 'acme' } } });
    const v = user();
    const secret = await withApp(v);
    const other = await flow.firstFactor(newFlowState({ organization: { slug: 'acme' } }), pwd(v.email)).catch((e: unknown) => e);
    const unknown = await flow.firstFactor(newFlowState({ organization: { slug: `nope-${randomUUID().slice(0, 6)}` } }), pwd(v.email)).catch((e: unknown) => e);
    expect(other).toEqual(unknown);
    expect(other).toMatchObject({ code: 'FORBIDDEN', reason: 'identity.organization_refused' });
    expect(await failures(v.email)).toBe(0);
    // A member at the first factor, removed before the second: refused at the second.
    members.add(`${v.userId} acme`);
    const r = await flow.firstFactor(newFlowState({ organization: { slug: 'acme' } }), pwd(v.email));
    expect(r.state).toMatchObject({ step: 'second_factor', organization: { slug: 'acme' } });
    members.delete(`${v.userId} acme`);
    await expect(flow.secondFactor(r.challenge!.mfaToken, { method: 'totp', code: code(secret) })).rejects.toMatchObject({ code: 'FORBIDDEN', reason: 'identity.organization_refused' });
  });
});
