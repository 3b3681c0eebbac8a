/**
 * Passkeys against the real PostgreSQL with a software authenticator: registration (user
 * verification required, flags stored, audited without the credential id), the passwordless
 * sign-in (options the same for everyone, a replayed or cloned assertion refused, failures counted
 * toward the lockout), a passkey as the second factor of an mfa token, and removal's
 * reauthentication window.
 */
import { SUBJECTS } from '@iam/contracts';
import { type AccessClaims, AppError } from '@iam/platform';
import { type MigratedDatabase, migratedTestDatabase, testLogger } from '@iam/platform/testing';
import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Principal } from '../domain/model';
import type { Directory } from '../domain/ports';
import { KeyRing } from '../infra/key-ring';
import { entities, migrations } from '../infra/schema';
import { pgIdentityStores, pgUnitOfWork } from '../infra/stores';
import { JwtTokenService } from '../infra/token-service';
import { SealingKeys } from '../domain/sealing';
import { SoftAuthenticator } from '../testing/soft-authenticator';
import { type AuthUseCases, createAuthUseCases, emailKey } from './auth';
import { type PasskeyUseCases, credentialTag, createPasskeyUseCases } from './passkeys';
import { createAccountAccess } from './account-access';
import { type MyFactorUseCases, createMyFactorUseCases } from './my-factors';
import { type SecondFactorUseCases, createSecondFactorUseCases } from './second-factor';
import type { SignInFlow } from './signin/flow';
import type { RestSignIn } from './signin/rest';
import { password, testSignIn } from '../testing/sign-in';
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { createTotpSecrets } from './totp-secrets';

const ORIGIN = 'http://localhost:27399';

describe('passkeys (WebAuthn) with a software authenticator', () => {
  let db: MigratedDatabase;
  let ds: DataSource;
  let keys: KeyRing;
  let passkeys: PasskeyUseCases;
  let secondFactor: SecondFactorUseCases;
  let myFactors: MyFactorUseCases;
  let auth: AuthUseCases;
  let flow: SignInFlow;
  let rest: RestSignIn;
  /** A passwordless REST sign-in with the assertion `response`. */
  const passwordless = async (response: object) => {
    const r = await rest.start({ method: 'webauthn', response });
    if (!r.tokens) throw new Error('a passkey alone asked for a factor');
    return r;
  };
  const webauthnOptions = async (f: SignInFlow, mfaToken: string) => (await f.options('webauthn', { mfaToken, stage: 'second' })) as PublicKeyCredentialRequestOptionsJSON;
  const enrolmentOptions = async (f: SignInFlow, mfaToken: string) => (await f.options('webauthn', { mfaToken, stage: 'enrol' })) as PublicKeyCredentialCreationOptionsJSON;
  const logger = testLogger();
  const users = new Map<string, Principal>();

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

  const user = (): Principal => {
    const p = { userId: randomUUID(), firstName: 'P', lastName: 'K', email: `pk-${randomUUID()}@example.com`, roles: ['Reader'], permissions: [], emailVerified: true };
    users.set(p.userId, p);
    return p;
  };
  const claims = (sub: string, authTime = Math.floor(Date.now() / 1000)): AccessClaims =>
    ({ sub, authTime, jti: randomUUID(), iss: 'iam', aud: ['iam-api'], iat: authTime, nbf: authTime, exp: authTime + 300, email: '', roles: [], permissions: [] });

  /** A user with one registered passkey of `a`. */
  const registered = async (a: SoftAuthenticator, u = user()) => {
    const options = await passkeys.registrationOptions(u.userId);
    const view = await passkeys.register(u.userId, 'Laptop', a.create(options));
    return { u, view };
  };

  beforeAll(async () => {
    db = await migratedTestDatabase('mfa_passkeys', { entities, migrations });
    ds = db.ds;
    keys = new KeyRing({ dataSource: ds, alg: 'EdDSA', keyEncryptionKey: randomBytes(32), rotationHours: 720, tokenLifetimeSeconds: 300, logger });
    await keys.start();
    const uow = pgUnitOfWork(ds);
    const stores = pgIdentityStores(ds.manager);
    passkeys = createPasskeyUseCases({ settings: { rpId: 'localhost', origins: [ORIGIN], rpName: 'IAM', challengeKey: randomBytes(32) }, uow, stores, directory, logger });
    secondFactor = createSecondFactorUseCases({ uow, stores });
    myFactors = createMyFactorUseCases({
      access: createAccountAccess({ clients: { find: async () => null } }),
      totp: createTotpSecrets({ totpKeys: new SealingKeys(randomBytes(32)), issuer: 'IAM', stores, directory }),
      recoveryKey: randomBytes(32),
      passkeys,
      uow,
      stores,
      directory,
    });
    auth = createAuthUseCases({
      settings: { maxFailedAttempts: 5, lockoutMinutes: 15, refreshExpirySeconds: 3_600, refreshReuseGraceSeconds: 0, accessExpirySeconds: 300 },
      uow,
      stores,
      directory,
      tokens: new JwtTokenService(keys, { tokenLifetimeSeconds: 300, issuer: 'iam', audience: 'iam-api' }),
      logger,
    });
    ({ flow, rest } = testSignIn({ uow, stores, directory, logger, auth, passkeys }));
  });

  afterAll(async () => {
    keys?.stop();
    await db?.close();
  });

  it('registration: creation options require user verification and a discoverable credential for PUBLIC_URL\'s RP ID; the passkey is stored with its flags and audited by a hash of its id', async () => {
    const u = user();
    const options = await passkeys.registrationOptions(u.userId);
    expect(options).toMatchObject({ rp: { id: 'localhost', name: 'IAM' }, user: { name: u.email }, attestation: 'none', authenticatorSelection: { residentKey: 'required', userVerification: 'required' } });
    const a = new SoftAuthenticator(ORIGIN, { backedUp: true });
    const response = a.create(options);
    const view = await passkeys.register(u.userId, '  Phone  ', response);
    expect(view).toMatchObject({ name: 'Phone', deviceType: 'multiDevice', backedUp: true, transports: ['internal'], lastUsedAt: null });
    expect(await passkeys.list(u.userId)).toEqual([view]);
    expect(await secondFactor.status(u.userId)).toMatchObject({ passkeys: 1 });
    // The same response again: its challenge is used up.
    await expect(passkeys.register(u.userId, 'Again', response)).rejects.toMatchObject({ code: 'VALIDATION' });
    // The event names a hash of the credential id, never the id.
    const rows = await ds.query<Array<{ payload: Buffer | string }>>('SELECT payload FROM outbox_events WHERE subject = $1', [SUBJECTS.mfaEnrolled]);
    const all = rows.map((r) => Buffer.from(r.payload as Buffer).toString('latin1')).join('\n');
    const id = a.credentials[0]!.id;
    expect(all).toContain(credentialTag(id));
    expect(all).not.toContain(id.toString('base64url'));
    expect(all).not.toContain(id.toString('latin1'));
  });

  it('registration refuses a response without user verification, for another origin, or to another user\'s options', async () => {
    const u = user();
    await expect(passkeys.register(u.userId, 'No UV', new SoftAuthenticator(ORIGIN, { uv: false }).create(await passkeys.registrationOptions(u.userId)))).rejects.toMatchObject({ code: 'VALIDATION' });
    await expect(passkeys.register(u.userId, 'Elsewhere', new SoftAuthenticator('https://evil.example').create(await passkeys.registrationOptions(u.userId)))).rejects.toMatchObject({ code: 'VALIDATION' });
    const other = user();
    await expect(passkeys.register(other.userId, 'Not mine', new SoftAuthenticator(ORIGIN).create(await passkeys.registrationOptions(u.userId)))).rejects.toMatchObject({ code: 'VALIDATION' });
    expect(await passkeys.list(u.userId)).toEqual([]);
    expect(await passkeys.list(other.userId)).toEqual([]);
  });

  it('WEBAUTHN_ORIGINS: a ceremony from an extra origin on the RP ID verifies; from any other origin it does not', async () => {
    const extra = 'http://localhost:27400';
    const wide = createPasskeyUseCases({ settings: { rpId: 'localhost', origins: [ORIGIN, extra], rpName: 'IAM', challengeKey: randomBytes(32) }, uow: pgUnitOfWork(ds), stores: pgIdentityStores(ds.manager), directory, logger });
    const u = user();
    await expect(wide.register(u.userId, 'Other host', new SoftAuthenticator(extra).create(await wide.registrationOptions(u.userId)))).resolves.toMatchObject({ name: 'Other host' });
    await expect(wide.register(u.userId, 'Elsewhere', new SoftAuthenticator('http://localhost:27401').create(await wide.registrationOptions(u.userId)))).rejects.toMatchObject({ code: 'VALIDATION' });
    // The default settings (PUBLIC_URL's origin only) refuse the extra origin.
    await expect(passkeys.register(u.userId, 'Not listed', new SoftAuthenticator(extra).create(await passkeys.registrationOptions(u.userId)))).rejects.toMatchObject({ code: 'VALIDATION' });
  });

  it('passwordless sign-in: the options name no credential and have one shape for everyone; the assertion signs in with amr hwk+mfa; a replay and a cloned counter are refused', async () => {
    const a = new SoftAuthenticator(ORIGIN);
    const { u } = await registered(a);
    const o1 = await passkeys.signInOptions();
    const o2 = await passkeys.signInOptions();
    expect(o1.allowCredentials).toEqual([]);
    expect(Object.keys(o1).sort()).toEqual(Object.keys(o2).sort());
    expect(o1).toMatchObject({ rpId: 'localhost', userVerification: 'required' });
    expect(o1.challenge).not.toBe(o2.challenge);

    const assertion = a.get(o1);
    const r = await passwordless(assertion);
    expect(r.principal.userId).toBe(u.userId);
    expect(await auth.validate(r.tokens.accessToken)).toMatchObject({ sub: u.userId, amr: ['hwk', 'mfa'], authTime: expect.any(Number) });
    // Replayed: its challenge is gone.
    await expect(passwordless(assertion)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    // A clone: a counter not above the stored one.
    a.credentials[0]!.counter = 0;
    await expect(passwordless(a.get(await passkeys.signInOptions()))).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    // Without user verification.
    const noUv = new SoftAuthenticator(ORIGIN, { uv: false });
    noUv.credentials.push(a.credentials[0]!);
    a.credentials[0]!.counter = 100;
    await expect(passwordless(noUv.get(await passkeys.signInOptions()))).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect((await passkeys.list(u.userId))[0]!.lastUsedAt).toBeInstanceOf(Date);
  });

  it('passwordless sign-in: an unknown credential gets the same answer; failed assertions count toward the owner\'s lockout', async () => {
    const stranger = new SoftAuthenticator(ORIGIN);
    stranger.create({ challenge: 'x', rp: { id: 'localhost' }, user: { id: 'eA' } });
    const unknown = await passwordless(stranger.get(await passkeys.signInOptions())).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(AppError);

    const a = new SoftAuthenticator(ORIGIN);
    const { u } = await registered(a);
    const elsewhere = new SoftAuthenticator('https://evil.example');
    elsewhere.credentials.push(a.credentials[0]!);
    const wrong = await passwordless(elsewhere.get(await passkeys.signInOptions())).catch((e: unknown) => e);
    expect(wrong).toEqual(unknown);
    // A challenge of another key (another deployment's, or made up) is refused like the rest.
    const foreign = createPasskeyUseCases({ settings: { rpId: 'localhost', origins: [ORIGIN], rpName: 'IAM', challengeKey: randomBytes(32) }, uow: pgUnitOfWork(ds), stores: pgIdentityStores(ds.manager), directory: { principal: async () => null }, logger });
    expect(await passwordless(a.get(await foreign.signInOptions())).catch((e: unknown) => e)).toEqual(unknown);
    const [row] = await ds.query<Array<{ failed_count: number }>>('SELECT failed_count FROM login_failures WHERE email_hash = $1', [emailKey(u.email)]);
    expect(Number(row!.failed_count)).toBe(2);
  });

  it('second factor: the right password of an account with a passkey asks for it (methods webauthn); its assertion completes the login with amr pwd+hwk+mfa; another user\'s passkey does not', async () => {
    const a = new SoftAuthenticator(ORIGIN);
    const { u } = await registered(a);
    const login = await rest.start(password(u.email, 'right'));
    expect(login.mfa).toMatchObject({ methods: ['webauthn'], enrolmentRequired: false });
    const options = await webauthnOptions(flow, login.mfa!.mfaToken);
    expect(options.allowCredentials).toEqual([expect.objectContaining({ id: a.credentials[0]!.id.toString('base64url') })]);

    // Another account's passkey answering these options: refused, counted.
    const b = new SoftAuthenticator(ORIGIN);
    await registered(b);
    await expect(rest.answer(login.mfa!.mfaToken, { method: 'webauthn', response: b.get(options) })).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });

    const again = await webauthnOptions(flow, login.mfa!.mfaToken);
    const done = await rest.answer(login.mfa!.mfaToken, { method: 'webauthn', response: a.get(again) });
    expect(await auth.validate(done.tokens!.accessToken)).toMatchObject({ sub: u.userId, amr: ['pwd', 'hwk', 'mfa'] });
    // The mfa token is used up.
    await expect(webauthnOptions(flow, login.mfa!.mfaToken)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('passwordless sign-in options are asked for anonymously and write nothing; only an assertion that verifies spends its challenge', async () => {
    // A synced passkey's counter stays 0: only the spent challenge stops a replay.
    const a = new SoftAuthenticator(ORIGIN, { counter: false });
    await registered(a);
    const rows = async () => Number((await ds.query<Array<{ n: number }>>('SELECT count(*)::int AS n FROM webauthn_challenges'))[0]!.n);
    const before = await rows();
    const options = await Promise.all(Array.from({ length: 20 }, () => passkeys.signInOptions()));
    expect(await rows()).toBe(before);
    // Refused assertions (another origin) write nothing either.
    const elsewhere = new SoftAuthenticator('https://evil.example', { counter: false });
    elsewhere.credentials.push(a.credentials[0]!);
    await expect(passwordless(elsewhere.get(options[0]!))).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(await rows()).toBe(before);
    // The same assertion sent twice at once signs in once.
    const assertion = a.get(options[1]!);
    const both = await Promise.allSettled([passwordless(assertion), passwordless(assertion)]);
    expect(both.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(await rows()).toBe(before + 1);
    // One after the other: the second finds its challenge spent.
    const once = a.get(options[2]!);
    await expect(passwordless(once)).resolves.toBeDefined();
    await expect(passwordless(once)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(await rows()).toBe(before + 2);
  });

  it('an assertion made for the passwordless options does not answer an mfa token (purposes are apart)', async () => {
    const a = new SoftAuthenticator(ORIGIN);
    const { u } = await registered(a);
    const login = await rest.start(password(u.email, 'right'));
    await expect(rest.answer(login.mfa!.mfaToken, { method: 'webauthn', response: a.get(await passkeys.signInOptions()) })).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('MFA_REQUIRED_ROLES: an enrolment-only mfa token enrols a passkey (creation options, then its registration as the factor), and the login completes with amr pwd+hwk+mfa', async () => {
    const uow = pgUnitOfWork(ds);
    const stores = pgIdentityStores(ds.manager);
    const strict = testSignIn({ uow, stores, directory, logger, auth, passkeys, requiredRoles: ['Operator'] });
    const u = { ...user(), roles: ['Operator'] };
    users.set(u.userId, u);
    const login = await strict.rest.start(password(u.email, 'right'));
    expect(login.mfa).toMatchObject({ enrolmentRequired: true });
    const a = new SoftAuthenticator(ORIGIN);
    const options = await enrolmentOptions(strict.flow, login.mfa!.mfaToken);
    // Without user verification the registration is no factor (counted, the token still usable).
    await expect(strict.rest.answer(login.mfa!.mfaToken, { method: 'webauthn', name: 'Weak', registration: new SoftAuthenticator(ORIGIN, { uv: false }).create(options) })).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
    });
    const done = await strict.rest.answer(login.mfa!.mfaToken, { method: 'webauthn', name: 'Key', registration: a.create(await enrolmentOptions(strict.flow, login.mfa!.mfaToken)) });
    expect(await auth.validate(done.tokens!.accessToken)).toMatchObject({ sub: u.userId, amr: ['pwd', 'hwk', 'mfa'] });
    expect((await passkeys.list(u.userId)).map((p) => p.name)).toEqual(['Key']);
    // A verify token (the account has a factor now) cannot enrol one.
    const next = await strict.rest.start(password(u.email, 'right'));
    await expect(enrolmentOptions(strict.flow, next.mfa!.mfaToken)).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('rename and removal: only the owner; removal needs a sign-in within 5 minutes; the last factor takes the recovery codes', async () => {
    const a = new SoftAuthenticator(ORIGIN);
    const { u, view } = await registered(a);
    await expect(passkeys.rename(user().userId, view.id, 'Theirs')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await passkeys.rename(u.userId, view.id, 'Desk key')).toMatchObject({ id: view.id, name: 'Desk key' });
    await expect(passkeys.rename(u.userId, view.id, ' ')).rejects.toMatchObject({ code: 'VALIDATION' });
    expect(await myFactors.newRecoveryCodes(claims(u.userId))).toHaveLength(10);
    await expect(myFactors.removePasskey(claims(u.userId, Math.floor(Date.now() / 1000) - 600), view.id)).rejects.toMatchObject({
      code: 'FORBIDDEN',
      reason: 'identity.reauthentication_required',
    });
    await expect(myFactors.removePasskey(claims(user().userId), view.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await myFactors.removePasskey(claims(u.userId), view.id);
    expect(await secondFactor.status(u.userId)).toEqual({ totp: false, passkeys: 0, recoveryCodesLeft: 0 });
    expect(await rest.start(password(u.email, 'right'))).toMatchObject({ tokens: expect.anything() });
  });
});
