/**
 * `POST /auth/revoke` (issue #34 item 4) against the real PostgreSQL: it ends every session of the
 * account as "sign out everywhere" does, so another device's access token stops too (denylisted
 * by its id, and by the subject revocation), not only the token presented; a service account's
 * token is denylisted alone.
 */
import { SUBJECTS } from '@iam/contracts';
import { type MigratedDatabase, migratedTestDatabase, testLogger } from '@iam/platform/testing';
import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Principal } from '../domain/model';
import type { Directory } from '../domain/ports';
import { KeyRing } from '../infra/key-ring';
import { entities, migrations } from '../infra/schema';
import { pgIdentityStores, pgUnitOfWork } from '../infra/stores';
import { JwtTokenService } from '../infra/token-service';
import { password, testSignIn } from '../testing/sign-in';
import { type AuthUseCases, createAuthUseCases } from './auth';
import { type SessionUseCases, createSessionUseCases } from './sessions';

describe('sessions: revoke ends every session of the account', () => {
  let db: MigratedDatabase;
  let ds: DataSource;
  let keys: KeyRing;
  let tokens: JwtTokenService;
  let auth: AuthUseCases;
  let sessions: SessionUseCases;
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
    const p = { userId: randomUUID(), firstName: 'R', lastName: 'V', email: `rv-${randomUUID()}@example.com`, roles: [], permissions: [], emailVerified: true };
    users.set(p.userId, p);
    return p;
  };
  const signIn = async (email: string) => {
    const r = await testSignIn({ uow: pgUnitOfWork(ds), stores: pgIdentityStores(ds.manager), directory, logger, auth }).rest.start(password(email, 'right'));
    if (!r.tokens) throw new Error('a second factor was asked for');
    return r.tokens;
  };
  const events = async (subject: string) => Number((await ds.query<Array<{ n: string }>>('SELECT count(*) AS n FROM outbox_events WHERE subject = $1', [subject]))[0]!.n);
  const unauthenticated = expect.objectContaining({ code: 'UNAUTHENTICATED' });

  beforeAll(async () => {
    db = await migratedTestDatabase('identity_sessions', { entities, migrations });
    ds = db.ds;
    keys = new KeyRing({ dataSource: ds, alg: 'EdDSA', keyEncryptionKey: randomBytes(32), rotationHours: 720, tokenLifetimeSeconds: 300, logger });
    await keys.start();
    tokens = new JwtTokenService(keys, { tokenLifetimeSeconds: 300, issuer: 'iam', audience: 'iam-api' });
    const uow = pgUnitOfWork(ds);
    const stores = pgIdentityStores(ds.manager);
    auth = createAuthUseCases({
      settings: { maxFailedAttempts: 5, lockoutMinutes: 15, refreshExpirySeconds: 3_600, refreshReuseGraceSeconds: 0, accessExpirySeconds: 300 },
      uow,
      stores,
      directory,
      tokens,
      logger,
    });
    const unused = () => Promise.reject(new Error('not used'));
    sessions = createSessionUseCases({ uow, stores, directory, secondFactor: { status: unused, reset: unused }, endSessionsIn: (tx, userId, at) => auth.endSessionsIn(tx, userId, at) });
  });

  afterAll(async () => {
    keys?.stop();
    await db?.close();
  });

  it("revoke with one device's token: every session ends, the other device's access and refresh tokens stop too, each token denylisted by its id", async () => {
    const u = user();
    const here = await signIn(u.email);
    const there = await signIn(u.email);
    expect(await sessions.list(u.userId)).toHaveLength(2);
    const [ended, subjects] = [await events(SUBJECTS.sessionEnded), await events(SUBJECTS.subjectRevoked)];
    await sessions.revoke(await auth.validate(here.accessToken));
    for (const t of [here, there]) {
      await expect(auth.validate(t.accessToken)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
      await expect(auth.refresh(t.refreshToken)).rejects.toEqual(unauthenticated);
    }
    expect(await sessions.list(u.userId)).toEqual([]);
    const denied = (await auth.revokedTokens()).tokens.map((t) => t.jti);
    for (const t of [here, there]) expect(denied).toContain((await tokens.verify(t.accessToken)).jti);
    expect((await auth.revokedTokens()).subjects.map((x) => x.userId)).toContain(u.userId);
    expect([await events(SUBJECTS.sessionEnded), await events(SUBJECTS.subjectRevoked)]).toEqual([ended + 2, subjects + 1]);
  });

  it("a service account's token (sub = client_id, a registry client's UUID): that token alone is denylisted, no subject revocation", async () => {
    const clientId = randomUUID();
    const jti = randomUUID();
    const now = Math.floor(Date.now() / 1000);
    const [revoked, subjects] = [await events(SUBJECTS.tokenRevoked), await events(SUBJECTS.subjectRevoked)];
    await sessions.revoke({ sub: clientId, clientId, jti, iss: 'iam', aud: ['iam-api'], iat: now, nbf: now, exp: now + 300, email: '', roles: [], permissions: [] });
    expect((await auth.revokedTokens()).tokens.map((t) => t.jti)).toContain(jti);
    expect((await auth.revokedTokens()).subjects.map((x) => x.userId)).not.toContain(clientId);
    expect([await events(SUBJECTS.tokenRevoked), await events(SUBJECTS.subjectRevoked)]).toEqual([revoked + 1, subjects]);
  });
});
