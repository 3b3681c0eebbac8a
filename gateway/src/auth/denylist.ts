/**
 * Revoked access tokens (by jti) known to this gateway replica, until they expire. Fed by
 * `identity.token.revoked` events (every replica receives every event), loaded from identity at
 * start and reloaded periodically, so a replica that missed events while NATS was away catches up.
 */
import { SUBJECTS, decodeEvent } from '@iam/contracts';
import type { EventBus, Logger, Subscription } from '@iam/platform';

export class Denylist {
  private readonly entries = new Map<string, number>();

  has(jti: string): boolean {
    const exp = this.entries.get(jti);
    return exp !== undefined && exp > Date.now();
  }

  add(jti: string, expiresAt: Date): void {
    if (expiresAt.getTime() > Date.now()) this.entries.set(jti, expiresAt.getTime());
  }

  purge(): void {
    const now = Date.now();
    for (const [jti, exp] of this.entries) if (exp <= now) this.entries.delete(jti);
  }

  get size(): number {
    return this.entries.size;
  }
}

export interface DenylistSync {
  stop(): Promise<void>;
}

export function syncDenylist(opts: {
  denylist: Denylist;
  bus: EventBus;
  load: () => Promise<Array<{ jti: string; expiresAt?: Date }>>;
  logger: Logger;
  reloadMs?: number;
}): DenylistSync {
  const sub: Subscription = opts.bus.subscribe([SUBJECTS.tokenRevoked], async (e) => {
    const p = decodeEvent(SUBJECTS.tokenRevoked, e.data);
    if (p.expiresAt) opts.denylist.add(p.jti, p.expiresAt);
  });
  let loaded = false;
  const reload = async (): Promise<void> => {
    try {
      for (const t of await opts.load()) if (t.expiresAt) opts.denylist.add(t.jti, t.expiresAt);
      opts.denylist.purge();
      if (!loaded) opts.logger.info({ entries: opts.denylist.size }, 'token denylist loaded');
      loaded = true;
      clearInterval(fast);
    } catch (err) {
      opts.logger.warn({ err: (err as Error).message }, 'loading the token denylist failed; will retry');
    }
  };
  // Retried every 2 s until the first load succeeds, then reloaded every reloadMs.
  const fast = setInterval(() => void reload(), 2_000);
  void reload();
  const slow = setInterval(() => void reload(), opts.reloadMs ?? 30_000);
  fast.unref();
  slow.unref();
  return {
    stop: async () => {
      clearInterval(fast);
      clearInterval(slow);
      await sub.stop();
    },
  };
}
