/**
 * Revoked access tokens known to this gateway replica, until they expire: single tokens (by jti),
 * and every token of a subject issued before a time (a deleted user, a changed password or
 * email; a deleted OAuth client: its own tokens by `sub`, its users' by `client_id`). Fed by
 * `identity.token.revoked` and `identity.subject.revoked` events (every replica receives every
 * event), and loaded from identity (syncDenylist), so a replica that misses events while NATS is
 * away still refuses what was revoked meanwhile.
 */
import { SUBJECTS, decodeEvent } from '@iam/contracts';
import type { EventBus, Subscription } from '@iam/platform/bus';
import { type Logger, clientTokensSubject, firstAcceptedIat } from '@iam/platform/core';

export class Denylist {
  private readonly entries = new Map<string, number>();
  /** sub → the first iat (seconds) still accepted, and until when that matters (ms). */
  private readonly subjects = new Map<string, { minIat: number; until: number }>();

  /**
   * Whether the token is refused: its jti is denylisted, or its subject was revoked after it was
   * issued, or the OAuth client it was issued to was deleted since (its users' tokens are revoked
   * under clientTokensSubject of its id, by their `client_id`).
   */
  refuses(claims: { jti: string; sub: string; iat: number; clientId?: string }): boolean {
    const now = Date.now();
    const exp = this.entries.get(claims.jti);
    if (exp !== undefined && exp > now) return true;
    if (this.revokedBefore(claims.sub, claims.iat, now)) return true;
    // The derived subject (one SHA-256 of the id) only while some subject is revoked at all.
    return claims.clientId !== undefined && this.subjects.size > 0 && this.revokedBefore(clientTokensSubject(claims.clientId), claims.iat, now);
  }

  private revokedBefore(subject: string, iat: number, now: number): boolean {
    const s = this.subjects.get(subject);
    return s !== undefined && s.until > now && iat < s.minIat;
  }

  add(jti: string, expiresAt: Date): void {
    if (expiresAt.getTime() > Date.now()) this.entries.set(jti, expiresAt.getTime());
  }

  /** Refuses the subject's tokens issued before `notBefore` (the later of two revocations wins). */
  revokeSubject(sub: string, notBefore: Date, expiresAt: Date): void {
    if (expiresAt.getTime() <= Date.now()) return;
    const minIat = firstAcceptedIat(notBefore);
    const prev = this.subjects.get(sub);
    this.subjects.set(sub, { minIat: Math.max(minIat, prev?.minIat ?? 0), until: Math.max(expiresAt.getTime(), prev?.until ?? 0) });
  }

  purge(): void {
    const now = Date.now();
    for (const [jti, exp] of this.entries) if (exp <= now) this.entries.delete(jti);
    for (const [sub, s] of this.subjects) if (s.until <= now) this.subjects.delete(sub);
  }

  get size(): number {
    return this.entries.size;
  }
}

export interface DenylistSync {
  stop(): Promise<void>;
}

/**
 * Keeps the denylist in step with identity. Revocation events arrive as broadcasts (every replica
 * gets each one at once); whatever is published while this replica's subscription is down is lost,
 * so the denylist is also loaded from identity (which commits every revocation before publishing
 * it): at start, every `reloadMs`, every `outagePollMs` (1 s) for as long as the subscription is
 * not live (NATS away, or not reached yet: identity answers without NATS), and once more as soon
 * as it is live again (the events of the gap). So a revoked token stops within about a second at
 * every replica, during an outage of NATS and after it (issue #35 item 5), where it used to wait
 * for the next 30 s reload.
 */
export function syncDenylist(opts: {
  denylist: Denylist;
  bus: EventBus;
  load: () => Promise<{ tokens: Array<{ jti: string; expiresAt?: Date }>; subjects: Array<{ userId: string; notBefore?: Date; expiresAt?: Date }> }>;
  logger: Logger;
  reloadMs?: number;
  outagePollMs?: number;
}): DenylistSync {
  let loaded = false;
  let running: Promise<void> | undefined;
  let again = false;
  const loadOnce = async (): Promise<void> => {
    try {
      const { tokens, subjects } = await opts.load();
      for (const t of tokens) if (t.expiresAt) opts.denylist.add(t.jti, t.expiresAt);
      for (const s of subjects) if (s.notBefore && s.expiresAt) opts.denylist.revokeSubject(s.userId, s.notBefore, s.expiresAt);
      opts.denylist.purge();
      if (!loaded) opts.logger.info({ entries: opts.denylist.size }, 'token denylist loaded');
      loaded = true;
    } catch (err) {
      opts.logger.warn({ err: (err as Error).message }, 'loading the token denylist failed; will retry');
      // Until a first load succeeds, it is tried again every 2 s.
      if (!loaded) setTimeout(() => void reload(), 2_000).unref();
    }
  };
  // One load at a time; a reload asked for during one runs once it ends (it may hold newer revocations).
  const reload = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = loadOnce().finally(() => {
      running = undefined;
      if (again) {
        again = false;
        void reload();
      }
    });
    return running;
  };
  let poll: NodeJS.Timeout | undefined;
  const setLive = (live: boolean): void => {
    if (live) {
      if (!poll) return;
      clearInterval(poll);
      poll = undefined;
      // The events published while the subscription was down are in identity's database.
      void reload();
    } else if (!poll) {
      poll = setInterval(() => void reload(), opts.outagePollMs ?? 1_000);
      poll.unref();
    }
  };
  // Until the subscription says it is live, nothing is known to arrive: poll.
  setLive(false);
  const sub: Subscription = opts.bus.subscribe(
    [SUBJECTS.tokenRevoked, SUBJECTS.subjectRevoked],
    async (e) => {
      if (e.subject === SUBJECTS.subjectRevoked) {
        const p = decodeEvent(SUBJECTS.subjectRevoked, e.data);
        if (p.notBefore && p.expiresAt) opts.denylist.revokeSubject(p.userId, p.notBefore, p.expiresAt);
        return;
      }
      const p = decodeEvent(SUBJECTS.tokenRevoked, e.data);
      if (p.expiresAt) opts.denylist.add(p.jti, p.expiresAt);
    },
    { onLive: setLive },
  );
  void reload();
  const slow = setInterval(() => void reload(), opts.reloadMs ?? 30_000);
  slow.unref();
  return {
    stop: async () => {
      if (poll) clearInterval(poll);
      clearInterval(slow);
      await sub.stop();
      await running;
    },
  };
}
