/**
 * Login, refresh rotation with reuse detection, subject revocation, and token validation for
 * internal callers (`POST /auth/revoke` ends sessions: SessionUseCases.revoke). Every failed
 * login answers the same way (wrong password, unknown or deleted email, locked account) and costs
 * the same (one argon2 verification in the directory).
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { type AccessClaims, AppError, type InTransaction, type Logger, clientTokensSubject, event, firstAcceptedIat, randomToken, requestContext, sha256 } from '@iam/platform';
import type { Principal, RefreshRecord, TokenPair } from '../domain/model';
import type { Directory, IdentityStores, TokenService, UnitOfWork } from '../domain/ports';
import type { PasskeyUseCases } from './passkeys';
import { type Factor, MFA_TOKEN_INVALID, type MfaChallenge, type SecondFactorUseCases } from './second-factor';
import { endSessionIn } from './session-end';


export interface AuthSettings {
  readonly maxFailedAttempts: number;
  readonly lockoutMinutes: number;
  readonly refreshExpirySeconds: number;
  readonly refreshReuseGraceSeconds: number;
  readonly accessExpirySeconds: number;
}

/** Tokens, or (a right password of an account with a second factor) the challenge to answer. */
export type LoginResult = { tokens: TokenPair; principal: Principal; mfa?: undefined } | { mfa: MfaChallenge; tokens?: undefined; principal?: undefined };

export interface AuthUseCases {
  login(email: string, password: string): Promise<LoginResult>;
  /** The second step of a login with a second factor (UNAUTHENTICATED as SecondFactorUseCases.redeem). */
  completeMfa(mfaToken: string, factor: Factor): Promise<{ tokens: TokenPair; principal: Principal }>;
  /**
   * The OpenID provider's sign-in: the same password check as login (lockout, constant-shape
   * failure, the same audit events) without a token family; the provider's session follows.
   * Throws UNAUTHENTICATED with INVALID_CREDENTIALS. An account with a second factor (or one its
   * roles require) gets its mfa challenge instead (nothing signed in yet): the hosted page asks
   * for the factor (or the enrolment) and finishes with `completeSignIn`. With `forceFactor`
   * (acr_values asking for mfa) every account is asked for one, and one without any must enrol.
   */
  signIn(email: string, password: string, opts?: { forceFactor?: boolean }): Promise<{ principal: Principal; mfa?: MfaChallenge }>;
  /** The provider's factor step (UNAUTHENTICATED as SecondFactorUseCases.redeem): who signed in and how. */
  completeSignIn(mfaToken: string, factor: Factor): Promise<{ principal: Principal; amr: string[] }>;
  /** Passwordless REST login with a passkey (UNAUTHENTICATED for anything wrong, one answer). */
  passkeyLogin(response: unknown): Promise<{ tokens: TokenPair; principal: Principal }>;
  /** The provider's passwordless sign-in with a passkey: who signed in and how. */
  passkeySignIn(response: unknown): Promise<{ principal: Principal; amr: string[] }>;
  /**
   * The signed-in user's own password, asked again before a change to the account: the login's
   * check (lockout, constant cost, the same failure event). VALIDATION on field currentPassword
   * for a wrong password or a locked account (the caller is already authenticated: no 401);
   * UNAUTHENTICATED when the user is gone.
   */
  verifyPassword(userId: string, password: string): Promise<void>;
  refresh(refreshToken: string): Promise<TokenPair>;
  /** Signature, expiry and the denylist. Throws UNAUTHENTICATED. */
  validate(accessToken: string): Promise<AccessClaims>;
  /** Like validate, but null instead of an error (RFC 7662 "active": false). */
  introspect(token: string): Promise<AccessClaims | null>;
  revokedTokens(): Promise<{ tokens: Array<{ jti: string; expiresAt: Date }>; subjects: Array<{ userId: string; notBefore: Date; expiresAt: Date }> }>;
  /**
   * Ends every session of a user (deleted, password or email changed): its refresh tokens, and
   * its access tokens issued before `at` (subject-level revocation, published to every gateway).
   */
  endSessions(userId: string, at?: Date): Promise<number>;
  /** The same inside the caller's transaction (with what else must commit with it). */
  endSessionsIn(tx: InTransaction<SessionStores>, userId: string, at: Date): Promise<number>;
  /** Clears the failed-login count of an email (after a password reset). */
  clearLockout(email: string): Promise<void>;
}

/** Fault injection points of the fault suite (src/testing/fault-main.ts); production wires none. */
export interface AuthFaults {
  /** After a refresh rotation committed, before its answer is made. */
  afterRefreshCommit?(): void | Promise<void>;
  /** After the provider's refresh rotation committed, before its answer leaves. */
  afterOpRefreshCommit?(): void;
  /** Before identity's session of a provider sign-in is written (a test delays it). */
  beforeOpSessionWrite?(): Promise<void>;
}

/** Whether a subject revocation at `notBefore` refuses a token issued at `iat` (seconds). */
export function revokedBySubject(iat: number, notBefore: Date | null | undefined): boolean {
  return notBefore != null && iat < firstAcceptedIat(notBefore);
}

/** Base64url of 32 random bytes. */
const REFRESH_TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

/** How many times a refresh tries to claim its target when concurrent refreshes of the same token win first. */
const REFRESH_CLAIM_ROUNDS = 10;

export const INVALID_CREDENTIALS = 'The email or password is incorrect.';
const INVALID_REFRESH = 'The refresh token is invalid, expired or revoked.';
const MFA_NOW_REQUIRED = 'This account now needs a second factor: sign in again.';
export const INVALID_PASSKEY = 'The passkey could not be verified.';

export function emailKey(email: string): Buffer {
  return sha256(email.trim().toLowerCase());
}

/** The stores the auth use cases use. */
type AuthStores = Pick<IdentityStores, 'refreshTokens' | 'lockouts' | 'denylist' | 'subjects' | 'sessions'>;
/** What ending a user's sessions writes, in the caller's transaction. */
export type SessionStores = Pick<IdentityStores, 'refreshTokens' | 'subjects' | 'sessions'>;

export function createAuthUseCases(deps: {
  settings: AuthSettings;
  /** Transactions (with the outbox). */
  uow: UnitOfWork<AuthStores>;
  /** Single statements outside any transaction, each committed on its own (a lockout reservation, a rotation). */
  stores: AuthStores;
  directory: Directory;
  /**
   * Where the principals that tokens carry come from (a refresh, a completed factor, a passkey
   * sign-in): the principal cache in production, so they follow a change within the directory
   * event's way; `directory` itself by default.
   */
  principals?: Pick<Directory, 'principal'>;
  tokens: TokenService;
  logger: Logger;
  /** Test builds only (src/testing): a hook between a refresh's commit and its answer. */
  faults?: AuthFaults;
  /** Asked after a right password (absent: passwords alone, as in unit tests of this file). */
  secondFactor?: Pick<SecondFactorUseCases, 'challenge' | 'required' | 'redeem' | 'policyRequires'>;
  /** Passkeys as a first factor (absent: no passwordless sign-in). */
  passkeys?: Pick<PasskeyUseCases, 'verify' | 'ownerOf'>;
}): AuthUseCases {
  const { settings: s, uow, stores, directory, tokens } = deps;
  const principals = deps.principals ?? directory;

  function pair(access: { token: string }, refreshToken: string, familyExpiresAt: Date): TokenPair {
    return {
      accessToken: access.token,
      refreshToken,
      tokenType: 'Bearer',
      expiresIn: s.accessExpirySeconds,
      refreshExpiresIn: Math.max(1, Math.floor((familyExpiresAt.getTime() - Date.now()) / 1000)),
    };
  }

  /**
   * RFC 9700 reuse detection: a rotated token came back after the grace period, or an older token
   * than the last one rotated. The whole family is revoked, and the detection recorded with it.
   */
  async function revokeReusedFamily(t: RefreshRecord): Promise<void> {
    const n = await uow.run(async (tx) => {
      const revoked = await tx.refreshTokens.revokeFamily(t.familyId);
      if (revoked > 0) await tx.publish([event(SUBJECTS.refreshReuseDetected, { userId: t.userId, familyId: t.familyId, revoked, clientId: '' })]);
      return revoked;
    });
    if (n > 0) deps.logger.warn({ userId: t.userId, revoked: n }, 'refresh token reuse detected; token family revoked');
  }

  /**
   * A new session: its refresh family's first token, the failed-login count cleared, the session
   * (device, IP, how and when the user authenticated) and its first access token recorded, and the
   * success published, in one transaction.
   */
  async function startSession(principal: Principal, emailHash: Buffer, amr: string[]): Promise<TokenPair> {
    const refreshToken = randomToken(32);
    const expiresAt = new Date(Date.now() + s.refreshExpirySeconds * 1000);
    const familyId = randomUUID();
    const ctx = requestContext();
    // The access token's jti is chosen first, so one statement starts the family, its session and
    // the token's record (an upper bound of its expiry: its iat may move up after a revocation).
    const jti = randomUUID();
    const authTime = new Date();
    const session = { userAgent: ctx?.userAgent ?? '', ip: ctx?.clientIp ?? '', amr, authTime, access: { jti, expiresAt: new Date(Date.now() + (s.accessExpirySeconds + 2) * 1000) } };
    const subjectNotBefore = await uow.run(async (tx) => {
      const started = await tx.refreshTokens.startFamily({ id: randomUUID(), familyId, userId: principal.userId, tokenHash: sha256(refreshToken), expiresAt }, emailHash, session);
      await tx.publish([event(SUBJECTS.loginSucceeded, { userId: principal.userId, failures: 0, reason: '' })]);
      return started.subjectNotBefore;
    });
    const access = await tokens.issue(principal, { jti, notBefore: subjectNotBefore, session: { sid: familyId, amr, authTime } });
    return pair(access, refreshToken, expiresAt);
  }

  /** Records a refused login (one insert, the same for every kind of failure). */
  async function recordFailure(userId: string, failures: number, reason: 'invalid_credentials' | 'locked', lockedNow: boolean): Promise<void> {
    const attempt = { userId, failures, reason };
    await uow.run((tx) =>
      tx.publish([event(SUBJECTS.loginFailed, attempt), ...(lockedNow ? [event(SUBJECTS.accountLocked, { userId, failures, reason: '' })] : [])]),
    );
  }

  /** The password step shared by login and the provider's sign-in: a principal, or the one failure. */
  async function passwordVerified(email: string, password: string): Promise<{ principal: Principal; key: Buffer }> {
    const key = emailKey(email);
    // Reserve the evaluation first: of any number of concurrent guesses, at most the limit are
    // checked. A locked email still pays one (dummy) verification, so it answers as slowly.
    const slot = await stores.lockouts.reserve(key, s.maxFailedAttempts, s.lockoutMinutes);
    let result;
    try {
      result = await directory.verifyCredentials(email, password, { skipEvaluation: !slot.allowed });
    } catch (err) {
      if (slot.allowed) await stores.lockouts.release(key, s.maxFailedAttempts);
      throw err;
    }
    const principal = result.principal;
    if (!principal || !slot.allowed) {
      // Failures against no account are not counted: a later account with this email starts active.
      const counted = result.accountExists || !slot.allowed;
      if (slot.allowed && !result.accountExists) await stores.lockouts.release(key, s.maxFailedAttempts);
      const lockedNow = slot.allowed && result.accountExists && slot.count >= s.maxFailedAttempts;
      if (lockedNow) deps.logger.warn({ failures: slot.count }, 'account locked after repeated failed logins');
      await recordFailure(result.accountId ?? '', counted ? slot.count : 0, slot.allowed ? 'invalid_credentials' : 'locked', lockedNow);
      throw AppError.unauthenticated(INVALID_CREDENTIALS);
    }
    return { principal, key };
  }

  /** A sign-in that needs nothing more: the failed count cleared and the success recorded. */
  async function signedIn(principal: Principal, key: Buffer): Promise<void> {
    await uow.run(async (tx) => {
      await tx.lockouts.clear(key);
      await tx.publish([event(SUBJECTS.loginSucceeded, { userId: principal.userId, failures: 0, reason: '' })]);
    });
  }

  /**
   * A passkey as the only factor (user verification makes it multi-factor). The credential's owner
   * is found first, for the lockout: an assertion counts as a login attempt of that account. An
   * unknown credential is the same failure (and, like any assertion that does not verify, spends
   * no challenge and writes nothing).
   */
  async function passkeyVerified(response: unknown): Promise<{ principal: Principal; key: Buffer; amr: string[] }> {
    const pk = deps.passkeys;
    if (!pk) throw AppError.unauthenticated(INVALID_PASSKEY);
    const owner = await pk.ownerOf(response);
    const principal = owner ? await principals.principal(owner) : null;
    if (!principal) {
      await pk.verify(response, 'signin');
      await recordFailure('', 0, 'invalid_credentials', false);
      throw AppError.unauthenticated(INVALID_PASSKEY);
    }
    const key = emailKey(principal.email);
    const slot = await stores.lockouts.reserve(key, s.maxFailedAttempts, s.lockoutMinutes);
    let a = null;
    if (slot.allowed) {
      try {
        a = await pk.verify(response, 'signin');
      } catch (err) {
        await stores.lockouts.release(key, s.maxFailedAttempts);
        throw err;
      }
    }
    if (!a || !slot.allowed || a.userId !== principal.userId) {
      const lockedNow = slot.allowed && slot.count >= s.maxFailedAttempts;
      if (lockedNow) deps.logger.warn({ failures: slot.count }, 'account locked after repeated failed passkey sign-ins');
      await recordFailure(principal.userId, slot.count, slot.allowed ? 'invalid_credentials' : 'locked', lockedNow);
      throw AppError.unauthenticated(INVALID_PASSKEY);
    }
    return { principal, key, amr: [a.amr, 'mfa'] };
  }

  return {
    async login(email, password) {
      const { principal, key } = await passwordVerified(email, password);
      const challenge = await deps.secondFactor?.challenge(principal, key);
      if (challenge) {
        // The password was right: its reservation is given back, but the count is not cleared
        // (that is for a complete sign-in), so wrong second factors add up to the lock.
        await stores.lockouts.release(key, s.maxFailedAttempts);
        return { mfa: challenge };
      }
      return { tokens: await startSession(principal, key, ['pwd']), principal };
    },

    async completeMfa(mfaToken, factor) {
      if (!deps.secondFactor) throw AppError.unauthenticated(MFA_TOKEN_INVALID);
      const r = await deps.secondFactor.redeem(mfaToken, factor);
      const principal = await principals.principal(r.userId);
      if (!principal) throw AppError.unauthenticated(MFA_TOKEN_INVALID);
      return { tokens: await startSession(principal, r.emailHash, r.amr), principal };
    },

    async signIn(email, password, opts) {
      const { principal, key } = await passwordVerified(email, password);
      const challenge = await deps.secondFactor?.challenge(principal, key, { force: opts?.forceFactor === true });
      if (challenge) {
        // As login: the reservation is given back, the count kept until the factor is right.
        await stores.lockouts.release(key, s.maxFailedAttempts);
        return { principal, mfa: challenge };
      }
      await signedIn(principal, key);
      return { principal };
    },

    async completeSignIn(mfaToken, factor) {
      if (!deps.secondFactor) throw AppError.unauthenticated(MFA_TOKEN_INVALID);
      const r = await deps.secondFactor.redeem(mfaToken, factor);
      const principal = await principals.principal(r.userId);
      if (!principal) throw AppError.unauthenticated(MFA_TOKEN_INVALID);
      await signedIn(principal, r.emailHash);
      return { principal, amr: r.amr };
    },

    async passkeyLogin(response) {
      const { principal, key, amr } = await passkeyVerified(response);
      return { tokens: await startSession(principal, key, amr), principal };
    },

    async passkeySignIn(response) {
      const { principal, key, amr } = await passkeyVerified(response);
      await signedIn(principal, key);
      return { principal, amr };
    },

    async verifyPassword(userId, password) {
      const account = await directory.principal(userId);
      if (!account) throw AppError.unauthenticated('The account no longer exists.');
      let verified;
      try {
        verified = await passwordVerified(account.email, password);
      } catch (err) {
        if (err instanceof AppError && err.code === 'UNAUTHENTICATED') {
          throw AppError.validation('The current password is not correct.', [{ field: 'currentPassword', message: 'is not correct' }]);
        }
        throw err;
      }
      // The right password: its reservation is given back (a change to the account is not a sign-in).
      await stores.lockouts.release(verified.key, s.maxFailedAttempts);
      if (verified.principal.userId !== userId) throw AppError.unauthenticated('The account no longer exists.');
    },

    /**
     * Nothing is committed unless the answer can be made: the token is read, the user's current
     * principal asked of the directory, and only then the rotation committed (one statement) and
     * the access token signed. A directory failure leaves the token as it was. A crash or a lost
     * answer after the commit leaves the client with the rotated token, whose retry within the
     * grace period rotates the successor it never got (the family stays valid).
     */
    async refresh(refreshToken) {
      if (!REFRESH_TOKEN_RE.test(refreshToken)) throw AppError.unauthenticated(INVALID_REFRESH);
      const hash = sha256(refreshToken);
      // A concurrent refresh of the same token may win the claim between the read and the
      // commit: read again, and the token is then a retry within the grace period (or a reuse).
      // Each round one of the concurrent claims wins, so N at once need up to N rounds.
      for (let attempt = 0; attempt < REFRESH_CLAIM_ROUNDS; attempt++) {
        const token = await stores.refreshTokens.findByHash(hash, s.refreshReuseGraceSeconds);
        if (!token || token.revokedAt || token.expiresAt.getTime() <= Date.now()) throw AppError.unauthenticated(INVALID_REFRESH);
        if (token.rotatedAt && !token.retryable) {
          await revokeReusedFamily(token);
          throw AppError.unauthenticated(INVALID_REFRESH);
        }
        const principal = await principals.principal(token.userId);
        if (!principal) {
          // A deleted user's family ends.
          await stores.refreshTokens.revokeFamily(token.familyId);
          throw AppError.unauthenticated(INVALID_REFRESH);
        }
        const next = randomToken(32);
        // The access token's jti is chosen first, so the rotation's one statement also marks the
        // family's session used and records the token against it (an upper bound of its expiry:
        // its iat may move up to the next second after a subject revocation).
        const jti = randomUUID();
        const accessExpiresAt = new Date(Date.now() + (s.accessExpirySeconds + 2) * 1000);
        const claimed = await stores.refreshTokens.rotate(hash, { id: randomUUID(), tokenHash: sha256(next), access: { jti, expiresAt: accessExpiresAt } }, s.refreshReuseGraceSeconds);
        if (!claimed) continue;
        // MFA_REQUIRED_ROLES holds for sessions already open: a role that requires a second factor,
        // given after a sign-in without one, ends that sign-in's refreshes (the user signs in again).
        if (deps.secondFactor?.policyRequires(principal) && !claimed.session?.amr.includes('mfa')) {
          // Its session ends as from the sessions list (a family older than sessions: the family alone).
          await uow.run(async (tx) => {
            if (!(await endSessionIn(tx, claimed.userId, claimed.familyId))) await tx.refreshTokens.revokeFamily(claimed.familyId);
          });
          throw AppError.unauthenticated(MFA_NOW_REQUIRED);
        }
        await deps.faults?.afterRefreshCommit?.();
        const access = await tokens.issue(principal, { jti, notBefore: claimed.subjectNotBefore, ...(claimed.session ? { session: claimed.session } : {}) });
        return pair(access, next, claimed.expiresAt);
      }
      throw AppError.unauthenticated(INVALID_REFRESH);
    },

    async validate(accessToken) {
      const claims = await tokens.verify(accessToken);
      // Its subject's revocation, and the deletion of the client it was issued to (clientTokensSubject), in one read.
      const subjects = claims.clientId === undefined ? [claims.sub] : [claims.sub, clientTokensSubject(claims.clientId)];
      const [denied, notBefore] = await Promise.all([stores.denylist.has(claims.jti), stores.subjects.notBefore(...subjects)]);
      if (denied || revokedBySubject(claims.iat, notBefore)) throw AppError.unauthenticated('The access token has been revoked.');
      return claims;
    },

    async introspect(token) {
      try {
        return await this.validate(token);
      } catch (err) {
        if (err instanceof AppError && err.code === 'UNAUTHENTICATED') return null;
        throw err;
      }
    },

    revokedTokens: async () => {
      const [tokens, subjects] = await Promise.all([stores.denylist.active(), stores.subjects.active()]);
      return { tokens, subjects };
    },

    endSessions(userId, at = new Date()) {
      return uow.run((tx) => this.endSessionsIn(tx, userId, at));
    },

    async endSessionsIn(tx, userId, at) {
      const n = await tx.refreshTokens.revokeAllOfUser(userId);
      await tx.sessions.endAllOf(userId);
      // Tokens issued before `at` stay refused until the last of them has expired (plus skew).
      const r = await tx.subjects.revoke(userId, at, new Date(at.getTime() + (s.accessExpirySeconds + 60) * 1000));
      await tx.publish([event(SUBJECTS.subjectRevoked, { userId, notBefore: r.notBefore, expiresAt: r.expiresAt })]);
      return n;
    },

    clearLockout: (email) => stores.lockouts.clear(emailKey(email)),
  };
}
