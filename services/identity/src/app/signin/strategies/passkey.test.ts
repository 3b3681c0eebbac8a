/**
 * The passkey strategy against the real PostgreSQL with a software authenticator: as a first
 * factor (the owner found for the lockout, amr hwk+mfa), as a second factor (only an assertion of
 * this mfa token's challenge), and as an enrolment (a registration with user verification).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { type MigratedDatabase, migratedTestDatabase, testLogger } from '@iam/platform/testing';
import { sha256 } from '@iam/platform';
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { Principal } from '../../../domain/model';
import type { Directory } from '../../../domain/ports';
import { entities, migrations } from '../../../infra/schema';
import { pgIdentityStores, pgUnitOfWork } from '../../../infra/stores';
import { SoftAuthenticator } from '../../../testing/soft-authenticator';
import { type PasskeyUseCases, createPasskeyUseCases } from '../../passkeys';
import { emailKey } from '../lockout';
import type { FactorStrategy } from '../strategy';
import { passkeyStrategy } from './passkey';

const ORIGIN = 'http://localhost:27398';

describe('passkey strategy', () => {
  let db: MigratedDatabase;
  let passkeys: PasskeyUseCases;
  let s: FactorStrategy;
  const users = new Map<string, Principal>();
  const directory: Directory = {
    verifyCredentials: () => Promise.reject(new Error('not used')),
    principal: async (id) => users.get(id) ?? null,
    findAccount: () => Promise.reject(new Error('not used')),
    resetPassword: () => Promise.reject(new Error('not used')),
    markEmailVerified: () => Promise.reject(new Error('not used')),
    changeRequiredPassword: () => Promise.reject(new Error('not used')),
    resolveRoles: () => Promise.reject(new Error('not used')),
    resolvePermissions: () => Promise.reject(new Error('not used')),
  };
  const user = () => {
    const p = { userId: randomUUID(), firstName: 'K', lastName: 'Y', email: `key-${randomUUID()}@example.com`, roles: [], permissions: [], emailVerified: true };
    users.set(p.userId, p);
    return p;
  };
  const registered = async (a: SoftAuthenticator) => {
    const u = user();
    await passkeys.register(u.userId, 'Laptop', a.create(await passkeys.registrationOptions(u.userId)));
    return u;
  };
  /** An mfa token's row of the user (what a second factor's options are bound to). */
  const challenge = async (userId: string) => {
    const id = randomUUID();
    await pgIdentityStores(db.ds.manager).mfaChallenges.create({ id, userId, emailHash: randomBytes(32), tokenHash: sha256(randomUUID()), purpose: 'verify', expiresAt: new Date(Date.now() + 60_000) });
    return { userId, challengeId: id };
  };

  beforeAll(async () => {
    db = await migratedTestDatabase('signin_passkey', { entities, migrations });
    const stores = pgIdentityStores(db.ds.manager);
    passkeys = createPasskeyUseCases({ settings: { rpId: 'localhost', origins: [ORIGIN], rpName: 'IAM', challengeKey: randomBytes(32) }, uow: pgUnitOfWork(db.ds), stores, directory, logger: testLogger() });
    s = passkeyStrategy({ passkeys, principals: directory });
  });
  afterAll(async () => {
    await db?.close();
  });

  it('first factor: the owner is whom it counts against; its assertion yields hwk+mfa; a locked owner is not evaluated; an unknown credential names nobody', async () => {
    const a = new SoftAuthenticator(ORIGIN);
    const u = await registered(a);
    const options = (await s.first!.anonymousOptions!()) as PublicKeyCredentialRequestOptionsJSON;
    const input = { method: 'webauthn', response: a.get(options) };
    const subject = await s.first!.subject(input);
    expect(subject).toEqual({ key: emailKey(u.email), principal: u });
    await expect(s.first!.verify({ ...subject!, evaluate: false }, input)).resolves.toEqual({ principal: null, accountExists: true, accountId: u.userId });
    await expect(s.first!.verify({ ...subject!, evaluate: true }, input)).resolves.toEqual({ principal: u, amr: ['hwk', 'mfa'], key: emailKey(u.email) });
    // Replayed: its challenge is spent.
    await expect(s.first!.verify({ ...subject!, evaluate: true }, input)).resolves.toMatchObject({ principal: null, accountExists: true });

    const stranger = new SoftAuthenticator(ORIGIN);
    stranger.create({ challenge: 'x', rp: { id: 'localhost' }, user: { id: 'eA' } });
    const unknown = { method: 'webauthn', response: stranger.get((await s.first!.anonymousOptions!()) as PublicKeyCredentialRequestOptionsJSON) };
    expect(await s.first!.subject(unknown)).toEqual({ key: null, principal: null });
    await expect(s.first!.verify({ key: null, principal: null, evaluate: true }, unknown)).resolves.toEqual({ principal: null, accountExists: false });
    expect(s.first!.refusal.reason).toBe('identity.invalid_passkey');
  });

  it('second factor: only an assertion of this mfa token\'s options, by the account\'s own passkey (amr hwk); offered with a passkey', async () => {
    const a = new SoftAuthenticator(ORIGIN);
    const u = await registered(a);
    const ctx = await challenge(u.userId);
    const other = await challenge(u.userId);
    // An assertion of the passwordless options, or of another token's, answers nothing.
    await expect(s.second!.verify(ctx, { method: 'webauthn', response: a.get((await s.first!.anonymousOptions!()) as PublicKeyCredentialRequestOptionsJSON) })).resolves.toBeNull();
    await expect(s.second!.verify(ctx, { method: 'webauthn', response: a.get((await s.second!.options!(other)) as PublicKeyCredentialRequestOptionsJSON) })).resolves.toBeNull();
    await expect(s.second!.verify(ctx, { method: 'webauthn', response: a.get((await s.second!.options!(ctx)) as PublicKeyCredentialRequestOptionsJSON) })).resolves.toEqual({ amr: ['hwk'] });
    // A registration is no assertion.
    await expect(s.second!.verify(ctx, { method: 'webauthn', registration: {}, name: 'x' })).resolves.toBeNull();
    expect(s.second!.offered({ totp: false, passkeys: 1, recoveryCodesLeft: 0 })).toBe(true);
    expect(s.second!.offered({ totp: true, passkeys: 0, recoveryCodesLeft: 10 })).toBe(false);
  });

  it('enrolment: a registration with user verification (its own event), not one without; not listed among the methods', async () => {
    const u = user();
    const ctx = { userId: u.userId, challengeId: randomUUID() };
    const weak = await s.enrol!.verify(ctx, { method: 'webauthn', name: 'Weak', registration: new SoftAuthenticator(ORIGIN, { uv: false }).create((await s.enrol!.options!(ctx)) as PublicKeyCredentialCreationOptionsJSON) });
    expect(weak).toBeNull();
    const done = await s.enrol!.verify(ctx, { method: 'webauthn', name: 'Key', registration: new SoftAuthenticator(ORIGIN).create((await s.enrol!.options!(ctx)) as PublicKeyCredentialCreationOptionsJSON) });
    expect(done).toEqual({ amr: ['hwk'], enrolmentPublished: true });
    expect((await passkeys.list(u.userId)).map((p) => p.name)).toEqual(['Key']);
    expect(s.enrol!.listed).toBe(false);
  });
});
