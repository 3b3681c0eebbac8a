/**
 * Login, lockout, subject revocation and refresh against the real PostgreSQL (issue #21 item 5: the use
 * cases tested beside them, not only end to end). Refresh (issue #26, defect 1): nothing is committed unless
 * the answer can be made, a retry of a refresh whose answer was lost (a crash after the commit)
 * succeeds within the grace period without revoking anything, and real reuse still revokes.
 */
import { SUBJECTS } from '@iam/contracts';
import { AppError, clientTokensSubject, sha256 } from '@iam/platform';
import { type MigratedDatabase, migratedTestDatabase, testLogger } from '@iam/platform/testing';
import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Principal } from '../domain/model';
import type { Directory } from '../domain/ports';
import { KeyRing } from '../infra/key-ring';
import { entities, migrations } from '../infra/schema';
import { pgIdentityStores, pgUnitOfWork } from '../infra/stores';
import { JwtTokenService, signJws } from '../infra/token-service';
import { password, testSignIn } from '../testing/sign-in';
import { type AuthFaults, type AuthUseCases, INVALID_CREDENTIALS, createAuthUseCases, emailKey } from './auth';

describe('auth use cases: login, lockout, revocation, refresh rotation', () => {
  let db: MigratedDatabase;
  let ds: DataSource;
  let keys: KeyRing;
  const logger = testLogger();
  const users = new Map<string, Principal>();
  let directoryDown = false;
  let directoryCalls = 0;

  const directory: Directory = {
    verifyCredentials: async (email, password) => {
      const p = [...users.values()].find((u) => u.email === email);
      return { principal: p && password === 'right' ? p : null, accountExists: p !== undefined, accountId: p?.userId };
    },
    principal: async (userId) => {
      directoryCalls++;
      if (directoryDown) throw AppError.unavailable('directory unreachable');
      return users.get(userId) ?? null;
    },
    findAccount: () => Promise.reject(new Error('not used')),
    resetPassword: () => Promise.reject(new Error('not used')),
    markEmailVerified: () => Promise.reject(new Error('not used')),
    changeRequiredPassword: () => Promise.reject(new Error('not used')),
    resolveRoles: () => Promise.reject(new Error('not used')),
    resolvePermissions: () => Promise.reject(new Error('not used')),
  };

  const auth = (graceSeconds: number, faults?: AuthFaults) =>
    createAuthUseCases({
      settings: { maxFailedAttempts: 5, lockoutMinutes: 15, refreshExpirySeconds: 3_600, refreshReuseGraceSeconds: graceSeconds, accessExpirySeconds: 300 },
      uow: pgUnitOfWork(ds),
      stores: pgIdentityStores(ds.manager),
      directory,
      tokens: new JwtTokenService(keys, { tokenLifetimeSeconds: 300, issuer: 'iam', audience: 'iam-api' }),
      logger,
      faults,
    });

  /** A REST login through the sign-in flow, its session started by `a`. */
  const login = (a: AuthUseCases, email: string, pw: string, dir: Directory = directory) =>
    testSignIn({ uow: pgUnitOfWork(ds), stores: pgIdentityStores(ds.manager), directory: dir, logger, auth: a }).rest.start(password(email, pw));

  /** A login of a user with no second factor: its token pair. */
  const signIn = async (a: AuthUseCases, email: string) => {
    const r = await login(a, email, 'right');
    if (!r.tokens) throw new Error('a second factor was asked for');
    return r;
  };
  const user = (): Principal => {
    const p = { userId: randomUUID(), firstName: 'R', lastName: 'T', email: `rt-${randomUUID()}@example.com`, roles: ['Reader'], permissions: ['users.manage'], emailVerified: true };
    users.set(p.userId, p);
    return p;
  };
  const count = async (sql: string, params: unknown[] = []) => Number((await ds.query<Array<{ n: string }>>(sql, params))[0]!.n);
  const reuseEvents = () => count('SELECT count(*) AS n FROM outbox_events WHERE subject = $1', [SUBJECTS.refreshReuseDetected]);
  const revokedIn = (familyOf: string) =>
    count('SELECT count(*) AS n FROM refresh_tokens WHERE revoked_at IS NOT NULL AND family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1)', [sha256(familyOf)]);
  const rotated = async (token: string) => (await ds.query<Array<{ rotated_at: Date | null }>>('SELECT rotated_at FROM refresh_tokens WHERE token_hash = $1', [sha256(token)]))[0]!.rotated_at !== null;
  const unauthenticated = expect.objectContaining({ code: 'UNAUTHENTICATED' });

  beforeAll(async () => {
    db = await migratedTestDatabase('identity_auth', { entities, migrations });
    ds = db.ds;
    keys = new KeyRing({ dataSource: ds, alg: 'EdDSA', keyEncryptionKey: randomBytes(32), rotationHours: 720, tokenLifetimeSeconds: 300, logger });
    await keys.start();
  });

  afterAll(async () => {
    keys?.stop();
    await db?.close();
  });

  beforeEach(() => {
    directoryDown = false;
  });

  const failedLogins = () => count('SELECT count(*) AS n FROM outbox_events WHERE subject = $1', [SUBJECTS.loginFailed]);
  const locks = () => count('SELECT count(*) AS n FROM outbox_events WHERE subject = $1', [SUBJECTS.accountLocked]);

  it('login: the right password gets a token pair whose access token carries the principal; the success is recorded', async () => {
    const u = user();
    const before = await count('SELECT count(*) AS n FROM outbox_events WHERE subject = $1', [SUBJECTS.loginSucceeded]);
    const { tokens, principal } = await signIn(auth(0), u.email);
    expect(principal.userId).toBe(u.userId);
    expect(tokens).toMatchObject({ tokenType: 'Bearer', accessToken: expect.any(String), refreshToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(await auth(0).validate(tokens.accessToken)).toMatchObject({ sub: u.userId, email: u.email, roles: ['Reader'], permissions: ['users.manage'] });
    expect(await count('SELECT count(*) AS n FROM outbox_events WHERE subject = $1', [SUBJECTS.loginSucceeded])).toBe(before + 1);
  });

  it('login: a wrong password and an unknown email answer the same; only the failure against an account counts toward its lockout', async () => {
    const u = user();
    const a = auth(0);
    const wrong = await login(a, u.email, 'wrong').catch((e: unknown) => e);
    const nobody = `nobody-${randomUUID()}@example.com`;
    const unknown = await login(a, nobody, 'wrong').catch((e: unknown) => e);
    expect(wrong).toEqual(unknown);
    expect(wrong).toMatchObject({ code: 'UNAUTHENTICATED', message: INVALID_CREDENTIALS });
    const counted = await ds.query<Array<{ failed_count: number }>>('SELECT failed_count FROM login_failures WHERE email_hash = $1', [emailKey(u.email)]);
    expect(counted.map((r) => Number(r.failed_count))).toEqual([1]);
    const none = await ds.query<Array<{ failed_count: number }>>('SELECT failed_count FROM login_failures WHERE email_hash = $1', [emailKey(nobody)]);
    expect(none.map((r) => Number(r.failed_count)).filter((n) => n > 0)).toEqual([]);
  });

  it('lockout: the fifth failure locks the account (recorded once); then even the right password gets the same refusal, until the lockout is cleared', async () => {
    const u = user();
    const a = auth(0);
    const [failedBefore, locksBefore] = [await failedLogins(), await locks()];
    for (let i = 0; i < 5; i++) await expect(login(a, u.email, 'wrong')).rejects.toMatchObject({ message: INVALID_CREDENTIALS });
    expect(await locks()).toBe(locksBefore + 1);
    await expect(login(a, u.email, 'right')).rejects.toMatchObject({ code: 'UNAUTHENTICATED', message: INVALID_CREDENTIALS });
    expect(await failedLogins()).toBe(failedBefore + 6);
    await a.clearLockout(u.email);
    await expect(login(a, u.email, 'right')).resolves.toMatchObject({ principal: { userId: u.userId } });
  });

  it('lockout: concurrent guesses are evaluated at most up to the limit', async () => {
    const u = user();
    let evaluated = 0;
    const counting: Directory = {
      ...directory,
      verifyCredentials: async (email, password, opts) => {
        if (!opts?.skipEvaluation) evaluated++;
        return directory.verifyCredentials(email, password, opts);
      },
    };
    const a = createAuthUseCases({
      settings: { maxFailedAttempts: 5, lockoutMinutes: 15, refreshExpirySeconds: 3_600, refreshReuseGraceSeconds: 0, accessExpirySeconds: 300 },
      uow: pgUnitOfWork(ds),
      stores: pgIdentityStores(ds.manager),
      directory: counting,
      tokens: new JwtTokenService(keys, { tokenLifetimeSeconds: 300, issuer: 'iam', audience: 'iam-api' }),
      logger,
    });
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => login(a, u.email, 'wrong', counting)));
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    expect(evaluated).toBeLessThanOrEqual(5);
  });

  it('endSessions: every session of the user ends (refresh refused, earlier access tokens revoked by subject); a later login works', async () => {
    const u = user();
    const a = auth(0);
    const first = await signIn(a, u.email);
    const second = await signIn(a, u.email);
    expect(await a.endSessions(u.userId)).toBe(2);
    for (const s of [first, second]) {
      await expect(a.refresh(s.tokens.refreshToken)).rejects.toEqual(unauthenticated);
      await expect(a.validate(s.tokens.accessToken)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    }
    expect((await a.revokedTokens()).subjects.map((x) => x.userId)).toContain(u.userId);
    // Tokens issued within the same second as the revocation are refused too; one issued later is not.
    await new Promise((r) => setTimeout(r, 1_100));
    const after = await signIn(a, u.email);
    await expect(a.validate(after.tokens.accessToken)).resolves.toMatchObject({ sub: u.userId });
  });

  it("a client's revocation (a deleted client) refuses the users' tokens issued to it before, not those of another client", async () => {
    const u = user();
    const a = auth(0);
    const [gone, kept] = [randomUUID(), randomUUID()];
    // Access tokens as the provider signs them for a user through a client (RFC 9068 client_id).
    const tokenOf = async (clientId: string) => {
      const key = await keys.signingKey(new Date());
      const iat = Math.floor(Date.now() / 1000);
      const claims = { email: u.email, roles: u.roles, permissions: u.permissions, iss: 'iam', aud: 'iam-api', sub: u.userId, client_id: clientId, jti: randomUUID(), iat, nbf: iat, exp: iat + 300 };
      return signJws(key.alg, key.privateKey, key.header, claims);
    };
    const [ofGone, ofKept] = [await tokenOf(gone), await tokenOf(kept)];
    await expect(a.validate(ofGone)).resolves.toMatchObject({ sub: u.userId, clientId: gone });
    // The client's own id revoked (its powers shrank): its users' tokens stand.
    await a.endSessions(gone);
    await expect(a.validate(ofGone)).resolves.toMatchObject({ sub: u.userId, clientId: gone });
    // Deleted: its users' tokens are revoked under clientTokensSubject.
    await a.endSessions(clientTokensSubject(gone));
    await expect(a.validate(ofGone)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    await expect(a.validate(ofKept)).resolves.toMatchObject({ sub: u.userId, clientId: kept });
    // A built-in client's id is no UUID (the console's): nothing to look up, the token stands.
    await expect(a.validate(await tokenOf('iam-console'))).resolves.toMatchObject({ sub: u.userId, clientId: 'iam-console' });
  });

  it('the directory unreachable during a refresh: 503 and nothing committed; the same token works once it is back', async () => {
    const u = user();
    const a = auth(0);
    const { tokens } = await signIn(a, u.email);
    directoryDown = true;
    await expect(a.refresh(tokens.refreshToken)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(await rotated(tokens.refreshToken)).toBe(false);
    directoryDown = false;
    const next = await a.refresh(tokens.refreshToken);
    expect(next.refreshToken).not.toBe(tokens.refreshToken);
    await expect(a.refresh(next.refreshToken)).resolves.toMatchObject({ tokenType: 'Bearer' });
    expect(await revokedIn(tokens.refreshToken)).toBe(0);
  });

  it('a crash between the commit and the answer: the retry within the grace period gets a fresh successor; nothing revoked, no reuse recorded', async () => {
    const u = user();
    const crash = new Error('process died after the commit');
    let crashes = 1;
    const a = auth(5, {
      afterRefreshCommit: () => {
        if (crashes-- > 0) throw crash;
      },
    });
    const { tokens } = await signIn(a, u.email);
    const reusesBefore = await reuseEvents();
    await expect(a.refresh(tokens.refreshToken)).rejects.toBe(crash);
    // The rotation committed: the client holds only the token it presented.
    expect(await rotated(tokens.refreshToken)).toBe(true);
    const retried = await a.refresh(tokens.refreshToken);
    expect(await a.validate(retried.accessToken)).toMatchObject({ sub: u.userId, roles: ['Reader'], permissions: ['users.manage'] });
    // The family goes on from the retry's token.
    const after = await a.refresh(retried.refreshToken);
    await expect(a.refresh(after.refreshToken)).resolves.toMatchObject({ tokenType: 'Bearer' });
    expect(await revokedIn(tokens.refreshToken)).toBe(0);
    expect(await reuseEvents()).toBe(reusesBefore);
  });

  it('a retry also works twice in a row (two answers lost), as long as each successor is unused', async () => {
    const u = user();
    const a = auth(5);
    const { tokens } = await signIn(a, u.email);
    const lost1 = await a.refresh(tokens.refreshToken);
    const lost2 = await a.refresh(tokens.refreshToken);
    expect(lost2.refreshToken).not.toBe(lost1.refreshToken);
    // The successor the first retry replaced is spent; the newest one is live.
    await expect(a.refresh(lost2.refreshToken)).resolves.toMatchObject({ tokenType: 'Bearer' });
  });

  it('concurrent refreshes of one token within the grace period all answer; none revokes the family', async () => {
    const u = user();
    const a = auth(5);
    const { tokens } = await signIn(a, u.email);
    const results = await Promise.allSettled([1, 2, 3, 4, 5].map(() => a.refresh(tokens.refreshToken)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(await revokedIn(tokens.refreshToken)).toBe(0);
    // One live token remains: the newest; every other answer's token was superseded by a later retry.
    expect(await count('SELECT count(*) AS n FROM refresh_tokens WHERE rotated_at IS NULL AND family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1)', [sha256(tokens.refreshToken)])).toBe(1);
  });

  it('reuse after the grace period revokes the whole family and is recorded', async () => {
    const u = user();
    const a = auth(1);
    const { tokens } = await signIn(a, u.email);
    const next = await a.refresh(tokens.refreshToken);
    const reusesBefore = await reuseEvents();
    await new Promise((r) => setTimeout(r, 1_300));
    await expect(a.refresh(tokens.refreshToken)).rejects.toEqual(unauthenticated);
    await expect(a.refresh(next.refreshToken)).rejects.toEqual(unauthenticated);
    expect(await revokedIn(tokens.refreshToken)).toBe(2);
    expect(await reuseEvents()).toBe(reusesBefore + 1);
  });

  it('reuse of an older token (its successor already used) revokes the family even within the grace period', async () => {
    const u = user();
    const a = auth(60);
    const { tokens } = await signIn(a, u.email);
    const t1 = await a.refresh(tokens.refreshToken);
    const t2 = await a.refresh(t1.refreshToken);
    await expect(a.refresh(tokens.refreshToken)).rejects.toEqual(unauthenticated);
    await expect(a.refresh(t2.refreshToken)).rejects.toEqual(unauthenticated);
  });

  it('with no grace period (AUTH_REFRESH_REUSE_GRACE_SECONDS=0) any reuse revokes the family at once (the spec table)', async () => {
    const u = user();
    const a = auth(0);
    const { tokens } = await signIn(a, u.email);
    const next = await a.refresh(tokens.refreshToken);
    await expect(a.refresh(tokens.refreshToken)).rejects.toEqual(unauthenticated);
    await expect(a.refresh(next.refreshToken)).rejects.toEqual(unauthenticated);
  });

  it('a deleted user: the family is revoked, 401; a malformed or unknown token asks nothing of the directory', async () => {
    const u = user();
    const a = auth(5);
    const { tokens } = await signIn(a, u.email);
    users.delete(u.userId);
    await expect(a.refresh(tokens.refreshToken)).rejects.toEqual(unauthenticated);
    expect(await revokedIn(tokens.refreshToken)).toBe(1);
    const calls = directoryCalls;
    await expect(a.refresh('not a token')).rejects.toEqual(unauthenticated);
    await expect(a.refresh(randomBytes(32).toString('base64url'))).rejects.toEqual(unauthenticated);
    expect(directoryCalls).toBe(calls);
  });
});
