/**
 * Sessions (DESIGN §5): a user lists and ends their own sign-ins; an administrator (users.manage,
 * checked by the gateway) lists and ends a user's, unlocks an account locked by failed attempts and
 * resets its second factors. Ending a session revokes its refresh family and denylists the
 * access tokens it issued (identity.token.revoked: every gateway refuses them within a second).
 */
import { SUBJECTS } from '@iam/contracts';
import { AppError, type InTransaction, event, isAdministrator, isUuid, requestContext } from '@iam/platform';
import { deviceOf } from '../domain/device';
import type { Principal } from '../domain/model';
import type { Directory, IdentityStores, SessionRecord, UnitOfWork } from '../domain/ports';
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
  /** An administrator: the user's sessions (NOT_FOUND for an unknown user; FORBIDDEN for an Administrator's, unless the caller is one). */
  listOf(userId: string): Promise<SessionView[]>;
  /** An administrator: one session of the user ended (Administrator rule of §3); NOT_FOUND when there is no such live session. */
  endOneOf(userId: string, sessionId: string): Promise<void>;
  /** An administrator: every session and access token of the user ended (Administrator rule of §3). */
  endAllOf(userId: string): Promise<number>;
  /** An administrator: the user's lock and factors (Administrator rule of §3, as listOf). */
  security(userId: string): Promise<AccountSecurity>;
  unlock(userId: string): Promise<void>;
  resetFactors(userId: string, reason: string): Promise<void>;
}

type Stores = Pick<IdentityStores, 'refreshTokens' | 'denylist' | 'sessions' | 'subjects' | 'lockouts'>;

export function createSessionUseCases(deps: {
  uow: UnitOfWork<Stores>;
  stores: Stores;
  directory: Directory;
  secondFactor: Pick<SecondFactorUseCases, 'status' | 'reset'>;
  endSessionsIn: (tx: InTransaction<SessionStores>, userId: string, at: Date) => Promise<number>;
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

    async endAllMine(userId) {
      const live = await stores.sessions.listLive(userId);
      return uow.run(async (tx) => {
        for (const s of live) await endSessionIn(tx, userId, s.id);
        await deps.endSessionsIn(tx, userId, new Date());
        return live.length;
      });
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
      const live = await stores.sessions.listLive(userId);
      return uow.run(async (tx) => {
        for (const s of live) await endSessionIn(tx, userId, s.id);
        // And anything else the user holds (tokens of no recorded session).
        await deps.endSessionsIn(tx, userId, new Date());
        return live.length;
      });
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
  };
}
