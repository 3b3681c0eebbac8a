/**
 * Sessions (DESIGN §5): a user lists and ends their own sign-ins; an administrator (users.manage,
 * checked by the gateway) lists and ends a user's, unlocks an account locked by failed attempts and
 * resets its second factors. Ending a session revokes its refresh family and denylists the
 * access tokens it issued (identity.token.revoked: every gateway refuses them within a second).
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { type AccessClaims, AppError, type InTransaction, event, isAdministrator, isUuid, requestContext } from '@iam/platform';
import { deviceOf } from '../domain/device';
import type { Principal } from '../domain/model';
import type { Directory, IdentityStores, OpTokenRecords, SessionRecord, UnitOfWork } from '../domain/ports';
import { emailKey } from './auth';
import type { SessionStores } from './auth';
import type { MfaStatus, SecondFactorUseCases } from './second-factor';
import { denylistIn, endSessionIn } from './session-end';

export interface SessionView extends SessionRecord {
  readonly device: string;
  readonly current: boolean;
}

export interface AccountSecurity {
  readonly locked: boolean;
  readonly lockedUntil: Date | null;
  readonly failedAttempts: number;
  readonly mfa: MfaStatus;
}

export interface SessionUseCases {
  list(userId: string, currentSid?: string): Promise<SessionView[]>;
  /** NOT_FOUND when the user has no such live session. */
  end(userId: string, sessionId: string): Promise<void>;
  /**
   * The user signed out of the OpenID provider's session `opSessionUid` (RP-initiated logout): its
   * session ends as `end` ends one (its access tokens denylisted); false when none was live.
   */
  endOp(opSessionUid: string, userId: string): Promise<boolean>;
  /**
   * The user signed one client out at the provider and stayed signed in ("Stay signed in"): the
   * access tokens that session issued to that client are denylisted; how many.
   */
  endOpClient(opSessionUid: string, userId: string, clientId: string): Promise<number>;
  /** Every live session of the user but `currentSid`; how many ended. */
  endOthers(userId: string, currentSid: string | undefined): Promise<number>;
  /**
   * "Sign out everywhere": every session of the user, the caller's included, and every access
   * token issued until now (a subject revocation, which also ends the OpenID provider's sessions
   * and grants of the account); how many recorded sessions ended.
   */
  endAllMine(userId: string): Promise<number>;
  /**
   * `POST /auth/revoke` with the token `claims` (spec: the presented token and every refresh token
   * of the account): every session of the account ends as `endAllMine` ends them, and the presented
   * token is denylisted by its id as well. A service account's token (no sessions, no refresh
   * tokens) is denylisted alone: its other tokens stand.
   */
  revoke(claims: AccessClaims): Promise<void>;
  /** An administrator: the user's sessions (NOT_FOUND for an unknown user; FORBIDDEN for an Administrator's, unless the caller is one). */
  listOf(userId: string): Promise<SessionView[]>;
  /** An administrator: one session of the user ended (Administrator rule of §3); NOT_FOUND when there is no such live session. */
  endOneOf(userId: string, sessionId: string): Promise<void>;
  /** An administrator: every session and access token of the user ended (Administrator rule of §3). */
  endAllOf(userId: string): Promise<number>;
  /** An administrator: the user's lock and factors (Administrator rule of §3, as listOf). */
  security(userId: string): Promise<AccountSecurity>;
  /** The Administrator rule of §3 for another part of the account (its linked identities): 403 unless the caller may. */
  assertAdministers(userId: string): Promise<void>;
  unlock(userId: string): Promise<void>;
  resetFactors(userId: string, reason: string): Promise<void>;
  /**
   * A browser sign-in the flow completed (app/signin/flow.ts): the failed-login count of the
   * account's email cleared and the success recorded, in one transaction, before the provider
   * gets the result.
   */
  signedInAtProvider(userId: string, emailHash: Buffer): Promise<void>;
  /**
   * The provider's session of that sign-in, in the sessions list (device, IP, amr, auth_time),
   * written by the authorization that ends the sign-in before its redirect (and the code in it)
   * leaves (infra/oidc/session-events.ts); its id.
   */
  startOp(s: { opSessionUid: string; userId: string; amr: readonly string[]; authTime: Date; userAgent: string; ip: string; expiresAt: Date }): Promise<string>;
  /** An authorization of a provider session already signed in: the session marked used; its id, or null when none is live. */
  touchOp(opSessionUid: string): Promise<string | null>;
  /** An authorization or token of a provider session: the session marked used, and the access token recorded under it (with the token request's writes). */
  opTokenIssued(opSessionUid: string, token?: { jti: string; expiresAt: Date; clientId: string }): Promise<void>;
}

type Stores = Pick<IdentityStores, 'refreshTokens' | 'denylist' | 'sessions' | 'subjects' | 'lockouts'>;

export function createSessionUseCases(deps: {
  uow: UnitOfWork<Stores>;
  stores: Stores;
  directory: Directory;
  secondFactor: Pick<SecondFactorUseCases, 'status' | 'reset'>;
  endSessionsIn: (tx: InTransaction<SessionStores>, userId: string, at: Date) => Promise<number>;
  /** Where the provider's token records go (absent: no provider, as in unit tests). */
  opTokens?: OpTokenRecords;
  /** Test builds only (src/testing): before a provider session is written. */
  beforeOpSessionWrite?: () => Promise<void>;
}): SessionUseCases {
  const { uow, stores, directory } = deps;
  const view =
    (currentSid?: string) =>
    (r: SessionRecord): SessionView => ({
      ...r,
      device: deviceOf(r.userAgent),
      current: r.id === currentSid,
    });

  async function target(userId: string): Promise<Principal> {
    const p = await directory.principal(userId);
    if (!p) throw AppError.notFound('No such user.');
    return p;
  }

  /**
   * The Administrator rule of §3: only an Administrator acts on an Administrator's account, and
   * only an Administrator reads its sessions (IPs, devices, session ids) and security state (lock,
   * factors): a users.manage holder is refused both alike (issue #34 item 7).
   */
  async function administered(userId: string): Promise<Principal> {
    const p = await target(userId);
    if (isAdministrator(p)) {
      const actor = requestContext()?.actor;
      const a = actor ? await directory.principal(actor) : null;
      if (!a || !isAdministrator(a)) throw AppError.forbidden('Only an Administrator may do this to an Administrator.');
    }
    return p;
  }

  /** Denylists the tokens, with the events of those not denylisted before. */
  async function denyIn(tx: InTransaction<Stores>, userId: string, tokens: ReadonlyArray<{ jti: string; expiresAt: Date }>): Promise<void> {
    const revoked = await denylistIn(tx, userId, tokens);
    if (revoked.length > 0) await tx.publish(revoked);
  }

  /**
   * Every session of the user ends (each as from the list: its provider session and grants, its
   * refresh family, the access tokens recorded under it denylisted), then anything else the user
   * holds (tokens of no recorded session: a subject revocation, which also ends the provider's
   * remaining sessions and grants of the account); `also` are denylisted too. How many recorded
   * sessions ended.
   */
  async function endAll(userId: string, also: ReadonlyArray<{ jti: string; expiresAt: Date }> = []): Promise<number> {
    const live = await stores.sessions.listLive(userId);
    return uow.run(async (tx) => {
      for (const s of live) await endSessionIn(tx, userId, s.id);
      await denyIn(tx, userId, also);
      await deps.endSessionsIn(tx, userId, new Date());
      return live.length;
    });
  }

  return {
    list: async (userId, currentSid) => (await stores.sessions.listLive(userId)).map(view(currentSid)),

    async end(userId, sessionId) {
      if (!isUuid(sessionId)) throw AppError.notFound('No such session.');
      const ended = await uow.run((tx) => endSessionIn(tx, userId, sessionId));
      if (!ended) throw AppError.notFound('No such session.');
    },

    async endOp(opSessionUid, userId) {
      const id = await stores.sessions.opSessionId(opSessionUid);
      return id !== null && (await uow.run((tx) => endSessionIn(tx, userId, id)));
    },

    async endOpClient(opSessionUid, userId, clientId) {
      const id = await stores.sessions.opSessionId(opSessionUid);
      if (id === null) return 0;
      return uow.run(async (tx) => {
        const revoked = await denylistIn(tx, userId, await tx.sessions.clientTokens(id, userId, clientId));
        if (revoked.length > 0) await tx.publish(revoked);
        return revoked.length;
      });
    },

    async endOthers(userId, currentSid) {
      const live = await stores.sessions.listLive(userId);
      return uow.run(async (tx) => {
        let n = 0;
        for (const s of live) if (s.id !== currentSid && (await endSessionIn(tx, userId, s.id))) n++;
        return n;
      });
    },

    endAllMine: (userId) => endAll(userId),

    async revoke(claims) {
      const presented = [{ jti: claims.jti, expiresAt: new Date(claims.exp * 1000) }];
      if (claims.clientId !== undefined && claims.clientId === claims.sub) {
        await uow.run((tx) => denyIn(tx, claims.sub, presented));
        return;
      }
      await endAll(claims.sub, presented);
    },

    async listOf(userId) {
      await administered(userId);
      return (await stores.sessions.listLive(userId)).map(view());
    },

    async endOneOf(userId, sessionId) {
      await administered(userId);
      if (!isUuid(sessionId)) throw AppError.notFound('No such session.');
      const ended = await uow.run((tx) => endSessionIn(tx, userId, sessionId));
      if (!ended) throw AppError.notFound('No such session.');
    },

    async endAllOf(userId) {
      await administered(userId);
      return endAll(userId);
    },

    async assertAdministers(userId) {
      await administered(userId);
    },
    async security(userId) {
      const p = await administered(userId);
      const [lock, mfa] = await Promise.all([stores.lockouts.state(emailKey(p.email)), deps.secondFactor.status(userId)]);
      return {
        locked: lock?.lockedUntil != null,
        lockedUntil: lock?.lockedUntil ?? null,
        failedAttempts: lock?.failedCount ?? 0,
        mfa,
      };
    },

    async unlock(userId) {
      const p = await administered(userId);
      await uow.run(async (tx) => {
        await tx.lockouts.clear(emailKey(p.email));
        await tx.publish([event(SUBJECTS.accountUnlocked, { userId })]);
      });
    },

    async resetFactors(userId, reason) {
      const r = reason.trim();
      if (r.length === 0 || r.length > 500)
        throw AppError.validation('A reason (1 to 500 characters) is required.', [{ field: 'reason', message: 'is required (1 to 500 characters)' }]);
      await administered(userId);
      await deps.secondFactor.reset(userId, r);
    },

    async signedInAtProvider(userId, emailHash) {
      await uow.run(async (tx) => {
        await tx.lockouts.clear(emailHash);
        await tx.publish([event(SUBJECTS.loginSucceeded, { userId, failures: 0, reason: '' })]);
      });
    },

    async startOp(s) {
      await deps.beforeOpSessionWrite?.();
      return stores.sessions.startOp({ id: randomUUID(), ...s });
    },

    touchOp: (opSessionUid) => stores.sessions.touchOp(opSessionUid),

    async opTokenIssued(opSessionUid, token) {
      if (!deps.opTokens) throw new Error('no provider token records wired');
      await deps.opTokens.record(opSessionUid, token);
    },
  };
}
