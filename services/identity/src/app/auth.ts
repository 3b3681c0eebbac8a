/**
 * REST sessions' tokens: the session a completed sign-in starts (the sign-in itself is
 * signin/flow.ts), refresh rotation with reuse detection, subject revocation, and token
 * validation for internal callers (`POST /auth/revoke` ends sessions: SessionUseCases.revoke).
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { type AccessClaims, AppError, type InTransaction, type Logger, clientTokensSubject, event, firstAcceptedIat, randomToken, requestContext, sha256 } from '@iam/platform';
import type { Principal, RefreshRecord, TokenPair } from '../domain/model';
import type { Directory, IdentityStores, TokenService, UnitOfWork } from '../domain/ports';
import { endSessionIn } from './session-end';
import type { SignInFlow } from './signin/flow';
import { emailKey } from './signin/lockout';
import { nextStep } from './signin/policy';
import { INVALID_CREDENTIALS } from './signin/strategies/password';

export { emailKey } from './signin/lockout';
export { INVALID_CREDENTIALS } from './signin/strategies/password';


export interface AuthSettings {
  readonly maxFailedAttempts: number;
  readonly lockoutMinutes: number;
  readonly refreshExpirySeconds: number;
  readonly refreshReuseGraceSeconds: number;
  readonly accessExpirySeconds: number;
  /** MFA_REQUIRED_ROLES (absent: none): a refresh of a session without a second factor asks the policy. */
  readonly requiredRoles?: readonly string[];
}

export interface AuthUseCases {
  /**
   * A REST sign-in the flow (signin/flow.ts) completed: a new session (its refresh family's first
   * token, the failed-login count cleared, the session row with device, IP, amr and auth_time, its
   * first access token recorded, the success published), in one transaction.
   */
  startSession(principal: Principal, emailHash: Buffer, amr: readonly string[]): Promise<TokenPair>;
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

const INVALID_REFRESH = 'The refresh token is invalid, expired or revoked.';
const MFA_NOW_REQUIRED = 'This account now needs a second factor: sign in again.';

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
  /** The password asked again before a change to the account (its lockout and events). */
  flow?: Pick<SignInFlow, 'reauthenticate'>;
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
  async function startSession(principal: Principal, emailHash: Buffer, factors: readonly string[]): Promise<TokenPair> {
    const amr = [...factors];
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

  return {
    startSession,

    async verifyPassword(userId, password) {
      const account = await directory.principal(userId);
      if (!account) throw AppError.unauthenticated('The account no longer exists.');
      if (!deps.flow) throw AppError.unauthenticated(INVALID_CREDENTIALS);
      let verified;
      try {
        // The flow's password check (lockout, constant cost, the failure event); the right
        // password's reservation is given back there (a change to the account is not a sign-in).
        verified = await deps.flow.reauthenticate({ method: 'password', email: account.email, password });
      } catch (err) {
        if (err instanceof AppError && err.code === 'UNAUTHENTICATED') {
          throw AppError.validation('The current password is not correct.', [{ field: 'currentPassword', message: 'is not correct' }]);
        }
        throw err;
      }
      if (verified.userId !== userId) throw AppError.unauthenticated('The account no longer exists.');
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
        if (nextStep({ roles: principal.roles, requiredRoles: s.requiredRoles ?? [], amr: claimed.session?.amr ?? [] }) !== 'done') {
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
